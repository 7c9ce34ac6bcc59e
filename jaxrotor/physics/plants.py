"""The physics layer's plants: the MuJoCo multibody model under MJX and under the MuJoCo C engine.

Both implement :class:`jaxrotor.plant.AbstractPlant` over the same generated model
(:func:`jaxrotor.physics.mjcf.build_model` from the vehicle's parts) and share every piece of
their step but the engine call:

* :func:`engine_controls` (pure JAX): over one control interval of ``k = h / timestep`` engine
  steps it turns the held :class:`~jaxrotor.dynamics.RotorCommand` into the engine controls of
  each step. With spinning propellers and a motor that is a first-order speed controller
  (:meth:`~jaxrotor.dynamics.AbstractMotor.speed_time_constant` is ``tau_m``) **the propeller is
  the motor**: its hinge's velocity servo has the gain ``k_v = I_spin / tau_m`` (the flight's,
  :func:`propeller_servo`) and the target ``s_i clip(sqrt(u_cmd,i), omega_min, omega_max)``, the
  engine integrates the motor with its own integrator, and the thrust inputs of each engine step
  are the propeller's speed at the step's start squared (``u_i = qvel_i^2``, set per engine step by
  the plants), with an optional current limit on the servo torque (``tau_max - c_tau omega_i^2``,
  the actuator's force range per engine step). Otherwise (an ideal or user motor, welded
  propellers) the flight's motor model (``flight.actuators.motor.applied``) is stepped by forward
  Euler at the engine step and gives the thrust inputs ``u_i`` and the signed speed targets
  ``s_i omega_i`` of the propeller servos (time constant ``ModelOptions.spin_time_constant``).
  With spinning propellers and a motor that draws current from the battery
  (:meth:`~jaxrotor.dynamics.AbstractMotor.draws_current`: the electric motor) **the propeller is
  turned by the motor's torque**: the hinge actuators are torque motors
  (:func:`spin_actuators`) and before every engine step :func:`electric_engine_step` gives, from
  the propeller's speed at the step's start and the battery's state, the motor currents (the
  motor's own law, :func:`jaxrotor.electrical.electric_drive`), the hinge torque (the motor's torque
  less the propeller's drag, which the thrust site applies to the mount), the thrust inputs and the
  battery's state of charge and energy account one engine step later (forward Euler at the engine
  step); the reading carries the battery's state (``VehicleState.energy``) and what the plant
  applied the first step's :class:`~jaxrotor.electrical.ElectricOutputs`.
  Either way the servo model, stepped by Euler, gives the per-rotor tilt targets;
* before every engine step: the tilt servos' load feed-forward (:func:`hinge_load`) and the
  external force of :func:`jaxrotor.tick.external_force` (held disturbance plus the wind drag at
  the engine's velocity) applied at the centre of mass (:func:`com_wrench`);
* with faults (``flight.faults``), the faults at each engine step's start (:func:`engine_faults`): the thrust
  inputs times the effectiveness ``eta_i`` (the thrust site's gear carries thrust and drag, so both scale), a
  stuck rotor's motor model rate times its stuck factor or its propeller hinge held at its speed at the fault
  (:func:`stuck_hinges`), a stuck tilt servo's model rate times its factor (:func:`engine_controls`);
* then ``mjx.step`` (:class:`MJXPlant`: jit, vmap, grad) or ``mujoco.mj_step``
  (:class:`MuJoCoPlant`: the C engine, stepped on the host; the numerical reference for MJX).

The reading (:class:`~jaxrotor.plant.PlantReading`) is the engine's free-joint state (the model's
frame origin is the vehicle's centre of mass), the rotor speeds (the propellers' own when they are
the motor, else the motor model's: what the flight computer knows) and the engine's hinge angles
(an encoder reading); what the plant applied at the start of each interval records the engine's
``qacc``, the propeller hinge speeds, the floor's contact force and the motor's speeds.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from mujoco import mjx

from .. import so3
from ..design.platform import TILT_ANGLES, Platform, per_rotor_angles
from ..aero import Aerodynamics, parasitic_drag, rotor_terms
from ..dynamics import Actuators, FaultState, VehicleState
from ..electrical import ElectricOutputs, EnergyState
from ..faults import Faults
from ..flight import Flight
from ..plant import AbstractHostPlant, AbstractPlant, PlantOutputs, PlantReading
from ..tick import PlantInput, external_force, whole_steps
from ..wind import Wind
from .mjcf import ModelOptions, PhysicsModel, build_model, warn_mismatch
from .parts import Parts, default_parts

__all__ = ["MJXPlant", "MJXPlantState", "MuJoCoPlant", "PropellerServo", "com_wrench", "electric_engine_step",
           "engine_controls", "engine_faults", "hinge_load", "propeller_force_range", "propeller_servo", "spin_actuators",
           "stuck_hinges"]


class _Static:
    """A non-array object held by a Module as a static field, hashed by identity (a compiled model)."""

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return id(self.value)

    def __eq__(self, other):
        return isinstance(other, _Static) and other.value is self.value


class PropellerServo(eqx.Module):
    """The propeller hinges as the flight's motor (:func:`propeller_servo`).

    Attributes:
        gain: ``(n,)`` velocity-servo gain ``k_v = I_spin / tau_m`` [N m s/rad].
        torque_max: ``(n,)`` the motor's torque limit ``tau_max`` [N m], or ``None`` (not current-limited).
        c_tau: ``(n,)`` drag coefficients [N m s^2/rad^2] (the limit on the accelerating torque is
            ``tau_max - c_tau omega^2``).
    """

    gain: jax.Array
    torque_max: jax.Array | None
    c_tau: jax.Array


def propeller_servo(pm: PhysicsModel, platform: Platform, actuators: Actuators, xp=jnp) -> PropellerServo | None:
    """The propeller servo that is the flight's motor, or ``None`` when the propellers follow a motor model.

    The propellers are the motor when they spin (``ModelOptions.spin``) and the flight's motor is a
    first-order speed controller (:meth:`~jaxrotor.dynamics.AbstractMotor.speed_time_constant` is not
    ``None``): the hinge's velocity servo of gain ``I_spin / tau_m`` gives ``I_spin omega_dot =
    k_v (omega_cmd - omega)``, the motor's ``omega_dot = (omega_cmd - omega) / tau_m`` with the engine's
    own spin inertia (``PhysicsModel.spin_inertia``, ``platform.J_r`` when the platform has one).
    ``xp``: ``jax.numpy`` (MJX, differentiable in ``tau_m``) or ``numpy`` (the C engine's host values).
    """
    tau = actuators.motor.speed_time_constant() if pm.options.spin else None
    if tau is None:
        return None
    dtype = platform.mass.dtype if xp is jnp else float
    inertia = xp.asarray(pm.spin_inertia, dtype=dtype)
    tau_max = actuators.motor.torque_limit(platform)
    as_x = lambda x: xp.broadcast_to(xp.asarray(x, dtype=dtype), inertia.shape)
    return PropellerServo(gain=inertia / xp.asarray(tau, dtype=dtype), torque_max=None if tau_max is None
                          else as_x(tau_max), c_tau=as_x(platform.c_tau))


def propeller_force_range(servo: PropellerServo, sign, speed, xp=jnp):
    """``(lower (n,), upper (n,))`` force range [N m] of the propeller servos for one engine step: the torque
    along the spin direction ``sign_i`` at most ``tau_max - c_tau omega_i^2`` (``speed``: ``omega_i`` at the
    step's start), braking unlimited."""
    lim = servo.torque_max - servo.c_tau * speed**2
    inf = xp.full_like(lim, xp.inf)
    return xp.where(sign > 0, -inf, -lim), xp.where(sign > 0, lim, inf)


def drives_by_current(pm: PhysicsModel, actuators: Actuators) -> bool:
    """Whether the flight's motor turns the spinning propellers by its current (the electric mode: spinning
    propellers, :meth:`~jaxrotor.dynamics.AbstractMotor.draws_current`)."""
    return bool(pm.options.spin) and actuators.motor.draws_current()


def spin_actuators(pm: PhysicsModel, platform: Platform, actuators: Actuators, xp=jnp):
    """``(gain (n,), bias (n,))`` of the propeller hinge actuators this flight needs (hinge torque
    ``gain ctrl + bias qvel``, an affine bias), or ``None`` to fly the model's own velocity servos.

    * a motor that draws current (:func:`drives_by_current`): ``(1, 0)``, torque motors (what ``<motor>``
      compiles to), the control the hinge torque of :func:`electric_engine_step`;
    * a first-order speed motor (:func:`propeller_servo`): its velocity servo ``(k_v, -k_v)``, ``k_v = I_spin / tau_m``;
    * any other motor on a model whose hinges are torque motors (``ModelOptions.spin_actuator = "motor"``): the
      velocity servo ``k_v = I_spin / spin_time_constant`` that :func:`~jaxrotor.physics.mjcf.build_model` writes
      for ``"velocity"``.

    ``None`` without spinning propellers. ``xp``: ``jax.numpy`` (MJX) or ``numpy`` (the C engine).
    """
    if not pm.options.spin:
        return None
    dtype = platform.mass.dtype if xp is jnp else float
    shape = np.shape(pm.spin_inertia)
    if drives_by_current(pm, actuators):
        return xp.ones(shape, dtype), xp.zeros(shape, dtype)
    servo = propeller_servo(pm, platform, actuators, xp=xp)
    if servo is not None:
        return servo.gain, -servo.gain
    if pm.options.spin_actuator == "motor":
        k = xp.asarray(np.asarray(pm.spin_inertia, dtype=float) / pm.options.spin_time_constant, dtype=dtype)
        return k, -k
    return None


def electric_engine_step(platform: Platform, motor, sign, qvel, u_cmd, energy: EnergyState, h):
    """One engine step of a motor that draws current from the battery (pure JAX).

    The motor's own electrical chain (:meth:`~jaxrotor.dynamics.AbstractMotor.applied_electric`; for
    :class:`~jaxrotor.dynamics.ElectricMotor` :func:`jaxrotor.electrical.electric_drive`: the speed controller
    of bandwidth ``lambda`` asking ``Q_cmd = c_tau omega^2 + J_r lambda (omega_cmd - omega)``, the current
    limit and the voltage limit at the battery's terminal voltage), at the propeller's speed
    ``omega_i = s_i qvel_i`` at the step's start, the held command ``u_cmd`` and the battery's state ``energy``,
    gives the motor currents, the rotor acceleration ``omega_dot_i = (k_t (I_i - I_0) - c_tau,i omega_i^2) / J_r,i``
    and the battery's rates. The hinge torque is ``s_i J_r,i omega_dot_i = s_i (k_t (I_i - I_0) - c_tau,i omega_i^2)``:
    the motor's torque less the propeller's drag, because the model applies the drag torque
    ``kappa_i c_tau,i u_i z_i`` to the mount through the thrust site (:mod:`~jaxrotor.physics.mjcf`). So the
    propeller turns by ``J_r omega_dot = k_t (I - I_0) - c_tau omega^2``, the drag acts once, and the mount
    feels the motor's reaction ``-s_i k_t (I_i - I_0) z_i`` in all, as on the analytic layer.

    Args:
        platform: the vehicle (its parts: motor, battery, ESC; ``J_r``). motor: the flight's motor.
        sign: ``(n,)`` spin signs ``s_i``. qvel: ``(n,)`` the propeller hinge speeds at the step's start [rad/s].
        u_cmd: ``(n,)`` the held rotor command [rad^2/s^2]. energy: the battery's
            :class:`~jaxrotor.electrical.EnergyState` at the step's start. h: the engine step [s].

    Returns:
        ``(hinge_torque (n,) [N m], u (n,) [rad^2/s^2], energy_next, electrical)``: the hinge actuators' controls,
        the thrust inputs ``omega_i^2``, the battery's state after the step (forward Euler, ``energy + h rates``)
        and the :class:`~jaxrotor.electrical.ElectricOutputs` at the step's start.
    """
    speed = sign * qvel
    u, _, w_dot, rates, out = motor.applied_electric(platform, speed, energy, u_cmd)
    energy_next = jax.tree_util.tree_map(lambda x, r: x + h * r, energy, rates)
    return sign * platform.J_r * w_dot, u, energy_next, out


def engine_faults(faults: Faults | None, n: int, t, k: int, h: float) -> FaultState | None:
    """The faults at the start of each of the ``k`` engine steps of one control interval (pure JAX).

    Args:
        faults: the flight's :class:`~jaxrotor.faults.Faults`, or ``None``.
        n: number of rotors (static). t: ``()`` the interval's start [s]. k: engine steps per interval
            (static). h: the engine step [s].

    Returns:
        A :class:`~jaxrotor.dynamics.FaultState` whose leaves are ``(k, n)``: row ``j`` is
        ``FaultState.at(faults, n, t + j h)`` (the effectiveness ``eta_i`` of :func:`jaxrotor.faults.effectiveness`,
        the stuck factors of :func:`jaxrotor.faults.stuck` and :func:`jaxrotor.faults.servo_stuck`, ``None`` without
        events of their kind); ``None`` without faults. The engine holds row ``j`` over step ``j``.
    """
    if faults is None:
        return None
    dtype = faults.time.dtype
    times = jnp.asarray(t, dtype) + h * jnp.arange(k, dtype=dtype)
    return jax.vmap(lambda tj: FaultState.at(faults, n, tj))(times)


def _frozen_rate(rate, factor):
    """A tilt rate times the per-rotor stuck factor (an angle set with one angle per rotor; others unchanged)."""
    return rate * factor if jnp.shape(rate) == jnp.shape(factor) else rate


def stuck_hinges(stuck, hold, qvel, spin_ctrl, electric: bool, k_hold):
    """``(n,)`` the propeller hinge controls of one engine step with stuck rotors (NumPy or JAX arrays).

    A stuck rotor's propeller keeps the hinge speed ``hold_i`` it had at the fault (signed, [rad/s]; the analytic
    layer freezes the rotor speed: its rate times ``f_i``). With ``f_i`` the stuck factor of the step
    (:func:`jaxrotor.faults.stuck`, 1 before the fault, 0 after a step onset):

    * the propellers as the motor (velocity servos, target ``spin_ctrl``): the target
      ``f_i spin_ctrl_i + (1 - f_i) hold_i``: the servo holds the speed at the fault;
    * a motor that draws current (torque motors, torque ``spin_ctrl`` from :func:`electric_engine_step`):
      ``f_i spin_ctrl_i + (1 - f_i) k_hold_i (hold_i - qvel_i)``, the motor's torque faded out and a speed hold of
      gain ``k_hold = I_spin / spin_time_constant`` [N m s/rad] faded in.

    ``qvel``: ``(n,)`` the hinge speeds at the step's start [rad/s]. The plants carry ``hold`` from step to step as
    ``f_i qvel_i + (1 - f_i) hold_i`` at the step's end, so it tracks the propeller until the fault and then stays.
    """
    if electric:
        return stuck * spin_ctrl + (1 - stuck) * k_hold * (hold - qvel)
    return stuck * spin_ctrl + (1 - stuck) * hold


def _holds_spin(pm: PhysicsModel, actuators: Actuators, faults: Faults | None) -> bool:
    """Whether a stuck rotor's propeller hinge needs a held speed (:func:`stuck_hinges`): a ``rotor_stuck`` event
    and spinning propellers turned by the motor itself (its velocity servo or its current)."""
    turns_itself = actuators.motor.speed_time_constant() is not None or drives_by_current(pm, actuators)
    return (faults is not None and faults.kinds_present(("rotor_stuck",)) and bool(pm.options.spin)
            and turns_itself)


def engine_controls(pm: PhysicsModel, platform: Platform, actuators: Actuators, motor_speed, angles, command,
                    k: int, h: float, fault: FaultState | None = None):
    """The engine controls of the ``k`` engine steps of one control interval (pure JAX).

    Args:
        pm: the generated model (control layout, spin signs, tilting hinges).
        platform: the vehicle (rotor speed bounds, angle signs).
        actuators: the flight's motor and servo models.
        motor_speed: ``(n,)`` the motor model's rotor speeds at the interval's start [rad/s].
        angles: ``{"alpha": ..., "beta": ...}`` the servo models' angles at the start [rad].
        command: the held :class:`~jaxrotor.dynamics.RotorCommand`.
        k: engine steps per interval (static). h: the engine step [s].
        fault: the faults of each engine step (:func:`engine_faults`, leaves ``(k, n)``), or ``None``. A stuck
            rotor's motor-model rate and a stuck servo's rate are multiplied by their factors (the motor and servo
            models keep their speed and angle, as ``vehicle_derivative`` does on the analytic layer); the thrust
            inputs of ``ctrl`` are not scaled by the effectiveness here: the plants scale each engine step's
            (:class:`MJXPlant`, :class:`MuJoCoPlant`).

    Returns:
        ``(ctrl (k, nu), motor_speed (n,), angles, u_first (n,), speed_first (n,))``: the controls of each
        step, the motor and servo states at the interval's end (Euler at ``h``), and the applied inputs
        and motor speeds of the first step. When the propellers are the motor (:func:`propeller_servo`)
        the thrust inputs of ``ctrl`` are placeholders the plants set per engine step from the propeller
        speeds, the spin targets are ``s_i clip(sqrt(u_cmd,i), omega_min, omega_max)``, and
        ``motor_speed``, ``u_first``, ``speed_first`` are the given speeds (the plants read the engine's).
        When the motor turns them by its current (:func:`drives_by_current`) the thrust inputs are placeholders
        too and the spin slots hold the command ``u_cmd`` the plants turn into the hinge torques per engine step
        (:func:`electric_engine_step`).
    """
    n = platform.n_rotors
    sign = jnp.asarray(pm.spin_sign, dtype=motor_speed.dtype)
    w = motor_speed
    rows = []
    u_first = w_first = None
    propeller_motor = pm.options.spin and actuators.motor.speed_time_constant() is not None
    electric = drives_by_current(pm, actuators)
    if propeller_motor:  # the engine spins the propellers as the motor: a constant target over the interval
        target = sign * actuators.motor.commanded_speed(platform, command.u)
    elif electric:  # the motor's torque, per engine step from the command (electric_engine_step)
        target = jnp.broadcast_to(command.u, w.shape).astype(w.dtype)
    for j in range(k):
        if propeller_motor or electric:
            u_j, w_j, w_dot = jnp.zeros_like(w), w, jnp.zeros_like(w)
            parts = [u_j, target]
        else:
            u_j, w_j, w_dot = actuators.motor.applied(platform, w, command.u)
            if fault is not None and fault.stuck is not None:  # a stuck rotor's motor keeps its speed
                w_dot = fault.stuck[j] * w_dot
            parts = [u_j]
            if pm.options.spin:
                parts.append(sign * w_j)
        u_first = u_j if u_first is None else u_first
        w_first = w_j if w_first is None else w_first
        new_angles = {}
        for key in TILT_ANGLES:
            current = angles[key]
            if key in pm.ctrl_tilt:
                a_j, a_dot = actuators.servo.applied(current, jnp.broadcast_to(getattr(command, key), current.shape))
                if fault is not None and fault.servo is not None:  # a stuck servo keeps its angle
                    a_dot = _frozen_rate(a_dot, fault.servo[j])
                per = per_rotor_angles(platform, **{key: a_j})[TILT_ANGLES.index(key)]
                parts.append(jnp.broadcast_to(per, (n,)))
                new_angles[key] = current + h * a_dot
            else:
                new_angles[key] = current
        rows.append(jnp.concatenate(parts))
        angles = new_angles
        w = w + h * w_dot
    return jnp.stack(rows), w, angles, u_first, w_first


def hinge_load(qfrc_bias, qfrc_actuator, actuator_force, ctrl: slice, dof):
    """``(n,)`` torque [N m] the tilt servos of one angle set must add to hold their hinges.

    The bias force (gravity, Coriolis and centrifugal terms) on the hinge dofs minus what the other
    actuators apply there, from the engine's last evaluation (``qfrc_bias``, ``qfrc_actuator`` less
    the servos' own ``actuator_force``). The plants add ``load / k_p`` to each servo target (a load
    feed-forward, as a servo's current loop does), so a position servo of finite stiffness ``k_p``
    does not sag under the weight of its motor and propeller. NumPy or JAX arrays.
    """
    return qfrc_bias[dof] - (qfrc_actuator[dof] - actuator_force[ctrl])


def com_wrench(xmat, offset_b, f, xp=np):
    """``(6,)`` ``xfrc_applied`` row for the world force ``f`` [N] acting at the point ``offset_b`` [m] from the
    body's own centre of mass (body frame, ``xmat`` its ``(9,)`` rotation): the force and the moment ``r x f``,
    ``r = R offset_b``. ``xp``: ``numpy`` or ``jax.numpy``."""
    r = xmat.reshape(3, 3) @ offset_b
    moment = [r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0]]
    if xp is np:  # the host plant, once per engine step: one small array, no stacking
        return np.array([f[0], f[1], f[2], *moment])
    return xp.concatenate([f, xp.stack(moment)])


class EngineAero(eqx.Module):
    """What :func:`engine_aero_rows` needs of the engine model besides its data (fixed for a flight).

    Attributes:
        aero: the flight's :class:`~jaxrotor.aero.Aerodynamics`.
        c_f: ``(n,)`` thrust coefficients [N s^2/rad^2] (the thrust inputs' gear).
        radius: ``()`` or ``(n,)`` rotor radius [m] for the ground effect (``aero.rotor_radius``, else the engine's
            propeller), or ``None`` without ground effect.
        sites, props: the thrust sites' ids ``(n,)`` (hub and axis ``z_i``) and the propeller bodies' ids ``(n,)``
            (static).
    """

    aero: Aerodynamics
    c_f: jax.Array
    radius: jax.Array | None
    sites: tuple = eqx.field(static=True)
    props: tuple = eqx.field(static=True)


def engine_aero(pm: PhysicsModel, platform: Platform, aero: Aerodynamics | None, xp=jnp) -> EngineAero | None:
    """The :class:`EngineAero` of a flight on ``pm`` (``None`` without aerodynamics).

    Raises:
        ValueError: the ground effect's ``aero.floor_height`` is not the engine's floor (``pm.floor_height``, where
            the landing gear stands at ``p = 0``): the two layers would see the floor at different heights.
    """
    if aero is None:
        return None
    aero.check(platform)
    radius = None
    if aero.ground_effect:
        radius = aero.rotor_radius if aero.rotor_radius is not None else 0.5 * pm.parts.propeller.diameter
        fh = aero.floor_height
        if (pm.options.floor and np.isfinite(pm.floor_height) and not isinstance(fh, jax.core.Tracer)
                and abs(float(fh) - pm.floor_height) > 1e-9):
            raise ValueError(f"Aerodynamics parameter `floor_height` = {float(fh):.6g} m is not the engine's floor "
                             f"({pm.floor_height:.6g} m: the landing gear's feet at p = 0), so the ground effect and "
                             f"the floor contact would be at different heights. Fix: pass "
                             f"Aerodynamics(..., floor_height={pm.floor_height:.6g}) (both layers then see one floor), "
                             "or fly the engine without a floor (ModelOptions(floor=False)).")
    name = lambda kind, s: mujoco.mj_name2id(pm.model, kind, s)
    n = platform.n_rotors
    return EngineAero(aero=aero, c_f=xp.asarray(platform.c_f), radius=None if radius is None else xp.asarray(radius),
                      sites=tuple(name(mujoco.mjtObj.mjOBJ_SITE, f"thrust{i}") for i in range(n)),
                      props=tuple(name(mujoco.mjtObj.mjOBJ_BODY, f"prop{i}") for i in range(n)))


def engine_aero_rows(ea: EngineAero, qvel, xpos, xmat, site_xpos, site_xmat, xipos, u, effectiveness, air,
                     offset_b, xp=jnp):
    """The aerodynamic ``xfrc_applied`` rows of one engine step: ``(frame_row (6,), prop_rows (n, 6))``.

    From the engine's own state: the vehicle frame's origin (the centre of mass) ``xpos`` and rotation ``xmat``,
    the free joint's world velocity ``qvel[0:3]`` and body rate ``qvel[3:6]``, each thrust site's hub ``site_xpos``
    and axis (``site_xmat``'s third column), each hub's velocity ``v + (R omega) x (hub - xpos)``, its height above
    ``aero.floor_height``, the rotor speed ``sqrt(u_i)`` of the step's thrust input ``u_i`` and the thrust
    ``c_f,i u_i``: :func:`jaxrotor.aero.rotor_terms` (times ``effectiveness``) applied at each propeller body (the
    force at the hub, moved to the body's centre of mass ``xipos``) and :func:`jaxrotor.aero.parasitic_drag` at
    the centre of mass (``offset_b`` from the frame body's own, as :func:`com_wrench`). NumPy or JAX arrays.
    """
    aero = ea.aero
    R = xmat.reshape(3, 3)
    n = site_xpos.shape[0]
    omega_w = R @ qvel[3:6]
    r = site_xpos - xpos
    rel = qvel[0:3] - air + xp.cross(omega_w, r)
    axes = site_xmat.reshape(n, 3, 3)[:, :, 2]
    speed = xp.sqrt(xp.maximum(u, 1e-30))
    height = None if not aero.ground_effect else site_xpos[:, 2] - aero.floor_height
    force, couple = rotor_terms(aero, rel, axes, speed, ea.c_f * u, height, ea.radius, xp=xp)
    if effectiveness is not None:
        force, couple = effectiveness[:, None] * force, effectiveness[:, None] * couple
    prop_rows = xp.concatenate([force, couple + xp.cross(site_xpos - xipos, force)], axis=-1)
    norm = np.linalg.norm if xp is np else None
    drag_w = R @ parasitic_drag(aero, R.T @ (qvel[0:3] - air), xp=xp, norm=norm)
    return com_wrench(xmat, offset_b, drag_w, xp=xp), prop_rows


def _hinge_angles(platform: Platform, pm: PhysicsModel, qpos, alpha, beta, xp=np):
    """The tilt angles the engine's hinges have, in the shape of ``platform.alpha`` / ``beta`` [rad].

    For each tilting angle set the hinge positions ``q_i`` are the per-rotor angles; an interdependent
    (scalar) angle is recovered as ``mean_i(sign_i q_i)`` (``sign_i`` the platform's ``alpha_sign`` /
    ``beta_sign``), the inverse of :func:`~jaxrotor.design.platform.per_rotor_angles`. Angle sets
    without hinges keep the given ``alpha``, ``beta``.
    """
    out = {"alpha": alpha, "beta": beta}
    for key, adr in pm.tilt_qpos.items():
        q = qpos[adr]
        if np.ndim(getattr(platform, key)) == 0:
            sign = getattr(platform, f"{key}_sign")
            sign = np.asarray(sign, dtype=float) if xp is np else xp.asarray(sign)
            q = xp.atleast_1d(xp.mean(sign * q))
        out[key] = q.reshape(np.shape(out[key]))
    return out["alpha"], out["beta"]


class _PhysicsPlant(AbstractPlant):
    """What the MJX and MuJoCo C plants share: the model, its options and the control timing."""

    parts: Parts | None = None
    spin_propellers: bool = eqx.field(static=True, default=True)
    timestep: float = eqx.field(static=True, default=1e-3)
    controller_knows_engine: bool = eqx.field(static=True, default=True)
    floor: bool = eqx.field(static=True, default=True)
    integrator: str = eqx.field(static=True, default="rk4")
    spin_time_constant: float = eqx.field(static=True, default=0.002)
    servo_bandwidth: float = eqx.field(static=True, default=40.0)
    spin_actuator: str = eqx.field(static=True, default="velocity")
    model: _Static | None = eqx.field(static=True, default=None)

    def __check_init__(self):
        if not (isinstance(self.timestep, (int, float)) and np.isfinite(self.timestep) and self.timestep > 0):
            raise ValueError(f"{type(self).__name__} parameter `timestep` = {self.timestep!r} is invalid: it must be "
                             "> 0 s. Fix: pass e.g. 1e-3.")

    @property
    def options(self) -> ModelOptions:
        """The engine options of the generated model (the inverse of :meth:`with_options`)."""
        return ModelOptions(timestep=self.timestep, spin=self.spin_propellers, floor=self.floor,
                            integrator=self.integrator, spin_time_constant=self.spin_time_constant,
                            servo_bandwidth=self.servo_bandwidth, spin_actuator=self.spin_actuator)

    def with_options(self, options: ModelOptions):
        """This plant building its model with the engine ``options`` (every field of
        :class:`~jaxrotor.physics.mjcf.ModelOptions`)."""
        return dataclasses.replace(self, spin_propellers=options.spin, timestep=options.timestep,
                                   floor=options.floor, integrator=options.integrator,
                                   spin_time_constant=options.spin_time_constant,
                                   servo_bandwidth=options.servo_bandwidth, spin_actuator=options.spin_actuator)

    def physics_model(self, platform: Platform) -> PhysicsModel:
        """The generated model: built from ``parts`` when given (they win), else from
        :func:`~jaxrotor.physics.parts.default_parts` of the platform (its own ``platform.parts``, the
        paper's parts for its presets, else :func:`~jaxrotor.physics.parts.fit_parts`)."""
        if self.model is not None:
            return self.model.value
        parts = self.parts if self.parts is not None else default_parts(platform)
        return build_model(platform, parts, self.options)

    def with_model(self, pm: PhysicsModel):
        """This plant flying the already built model ``pm`` (its options replace this plant's)."""
        return dataclasses.replace(self.with_options(pm.options), parts=pm.parts, model=_Static(pm))

    def prepare(self, platform: Platform):
        """This plant with its model built from the concrete ``platform`` (once, before compiling).

        Never silent about a second vehicle: when the engine's mass or inertia differ from the
        platform's by more than 0.5 % (parts plus an explicit mass or inertia, or parts given to the
        plant that are not the platform's) it warns with
        :class:`~jaxrotor.physics.mjcf.InertiaMismatchWarning` and both numbers; the paper's presets
        (``J^p`` against ``J^a``, the paper's design) are exempt."""
        if self.model is not None:
            return self
        pm = self.physics_model(platform)
        warn_mismatch(pm, stacklevel=3)  # past the method wrapper, to prepare's caller
        return self.with_model(pm)

    def control_rate(self, flight: Flight) -> float:
        """``flight.control_rate``, or one tick per engine step (``1 / timestep``) when it is ``None``."""
        return 1.0 / self.timestep if flight.control_rate is None else flight.control_rate

    def check(self, platform, controller, flight):
        self.steps(flight)  # the control period must be a whole number of engine steps
        flight.actuators.motor.check_platform(platform)  # e.g. a current limit without the motor's kv
        if flight.actuators.motor.draws_current() and not self.spin_propellers:
            raise ValueError(f"{type(self).__name__} parameter `spin_propellers` = False (ModelOptions.spin) welds the "
                             f"propellers to their mounts, but the flight's motor ({type(flight.actuators.motor).__name__}"
                             ") draws current from the battery and turns each propeller by its torque, which needs "
                             "the propeller's own speed: the physics layer flies it on spinning propellers only. Fix: "
                             "spin_propellers=True (ModelOptions(spin=True), the default), or fly the analytic layer.")
        flight.check_faults(platform)  # a rotor outside the vehicle, stuck kinds the actuators cannot carry

    def steps(self, flight: Flight) -> int:
        """Engine steps per control interval."""
        return whole_steps(1.0 / self.control_rate(flight), self.timestep, type(self).__name__, "timestep")

    def controller_platform(self, platform, plant_state):
        pm = self.model.value
        return pm.physics_platform() if self.controller_knows_engine else platform


# --------------------------------------------------------------------------- MJX


class MJXPlantState(eqx.Module):
    """The MJX plant's state (a pytree).

    Attributes:
        data: the ``mjx.Data``.
        motor_speed: ``(n,)`` the motor's rotor speeds [rad/s] (the propellers' own when they are the motor).
        alpha, beta: the servo models' angles [rad].
        applied: the :class:`~jaxrotor.plant.PlantOutputs` at the start of the last interval.
        platform, actuators, wind: the vehicle and the flight's actuator and wind models.
        steps: engine steps per control interval (static).
        energy: the battery's :class:`~jaxrotor.electrical.EnergyState` when the motor draws current from it,
            else ``None``.
        faults: the flight's :class:`~jaxrotor.faults.Faults`, or ``None``.
        spin_hold: ``(n,)`` the signed propeller hinge speeds a stuck rotor keeps [rad/s] (:func:`stuck_hinges`),
            or ``None`` (no ``rotor_stuck`` event, or propellers that follow a motor model).
        aero: the flight's aerodynamics on this engine (:class:`EngineAero`), or ``None``.
    """

    data: mjx.Data
    motor_speed: jax.Array
    alpha: jax.Array
    beta: jax.Array
    applied: PlantOutputs
    platform: Platform
    actuators: Actuators
    wind: Wind | None
    steps: int = eqx.field(static=True)
    energy: EnergyState | None = None
    faults: Faults | None = None
    spin_hold: jax.Array | None = None
    aero: EngineAero | None = None


def _mjx_contact_force(m: mjx.Model, d: mjx.Data, geom_bodyid: np.ndarray):
    """``(3,)`` total force of all contacts on the vehicle, world frame [N] (as :func:`contact_force` for C)."""
    from mujoco.mjx._src import support

    contact = d._impl.contact
    total = jnp.zeros(3, d.qpos.dtype)
    for i in range(contact.dist.shape[0]):
        f6 = support.contact_force(m, d, i)
        f_w = contact.frame[i].T @ f6[:3]
        on_floor = jnp.asarray(geom_bodyid)[contact.geom1[i]] == 0
        total = total + jnp.where(on_floor, f_w, -f_w)
    return total


class MJXPlant(_PhysicsPlant):
    """The multibody model of the vehicle's parts under MJX: jit, vmap and grad over every array leaf.

    Attributes:
        parts: the vehicle's :class:`~jaxrotor.design.parts.Parts`, winning over the platform's (``None``:
            :func:`~jaxrotor.physics.parts.default_parts`: ``platform.parts``, the paper's parts for its presets,
            else :func:`~jaxrotor.physics.parts.fit_parts`).
        spin_propellers: propellers spin on hinges (gyroscopic and spin-up torques) or are welded.
        timestep: the engine step [s]; the control period is a whole number of them.
        controller_knows_engine: the flight computer uses the engine's mass and inertia.
        floor: the model has a floor plane.
        integrator: the engine's integrator (``"rk4"``, ``"euler"``, ``"implicitfast"``, ...).
        spin_time_constant: time constant of the propeller velocity servos when they follow a motor model [s]
            (a first-order motor is the propellers themselves: its own ``tau_m``, :func:`propeller_servo`).
        servo_bandwidth: natural frequency of the tilt position servos [Hz].
        mjx_model: the ``mjx.Model`` to fly (``None``: put from the generated model); pass one to
            ``vmap`` or differentiate with respect to its leaves (``body_mass``, ``actuator_gear``, ...).

    Every :class:`~jaxrotor.flight.Flight` field acts as on the analytic plant (the plant contract,
    ``tests/integration/test_plants.py``) except ``flight.integrator``, the analytic plant's solver:
    an engine plant integrates with its own ``integrator`` at ``timestep``. ``flight.control_rate``
    ``None`` ticks once per engine step.
    """

    name: ClassVar[str] = "MJX"
    mjx_model: mjx.Model | None = None

    def prepare(self, platform: Platform) -> MJXPlant:
        """This plant with its model built (host side, concrete ``platform``) and put on the device."""
        plant = super().prepare(platform)
        m = self.mjx_model if self.mjx_model is not None else mjx.put_model(plant.model.value.model)
        return dataclasses.replace(plant, mjx_model=m)

    def init(self, platform, flight, key=None) -> MJXPlantState:
        pm, m = self.model.value, self.mjx_model
        state0 = flight.initial_state(platform)
        dtype = state0.p.dtype
        with jax.ensure_compile_time_eval():  # host NumPy of the concrete model, inside a trace
            qpos0 = pm.initial_qpos()
        qpos = jnp.asarray(qpos0, dtype).at[0:3].set(state0.p).at[3:7].set(so3.rot_to_quat(state0.R))
        angles = dict(zip(TILT_ANGLES, per_rotor_angles(platform, state0.alpha, state0.beta)))
        for name, adr in pm.tilt_qpos.items():
            qpos = qpos.at[adr].set(angles[name])
        qvel = jnp.zeros(m.nv, dtype).at[0:3].set(state0.v).at[3:6].set(state0.omega)
        if pm.options.spin:
            qvel = qvel.at[pm.spin_qvel].set(jnp.asarray(pm.spin_sign, dtype) * state0.rotor_speed)
        d = mjx.forward(m, mjx.make_data(m).replace(qpos=qpos, qvel=qvel))
        n = platform.n_rotors
        a, b = _hinge_angles(platform, pm, d.qpos, state0.alpha, state0.beta, xp=jnp)
        electrical = energy = None
        if drives_by_current(pm, flight.actuators):  # the battery's state, and the chain at the held hover command
            energy = state0.energy
            electrical = electric_engine_step(platform, flight.actuators.motor, jnp.asarray(pm.spin_sign, dtype),
                                              d.qvel[pm.spin_qvel], state0.rotor_speed**2, energy,
                                              pm.options.timestep)[3]
        applied = PlantOutputs(accel=d.qacc[0:3], angular_accel=d.qacc[3:6], u=state0.rotor_speed**2,
                               rotor_speed=self._spin_speed(d, n), alpha=a, beta=b,
                               contact_force=jnp.zeros(3, dtype), motor_speed=state0.rotor_speed,
                               electrical=electrical)
        return MJXPlantState(data=d, motor_speed=state0.rotor_speed, alpha=jnp.asarray(state0.alpha, dtype),
                             beta=jnp.asarray(state0.beta, dtype), applied=applied, platform=platform,
                             actuators=flight.actuators, wind=flight.wind, steps=self.steps(flight), energy=energy,
                             faults=flight.faults,
                             spin_hold=d.qvel[pm.spin_qvel] if _holds_spin(pm, flight.actuators, flight.faults) else None,
                             aero=engine_aero(pm, platform, flight.aero))

    def _spin_speed(self, d, n):
        pm = self.model.value
        return jnp.abs(d.qvel[pm.spin_qvel]) if pm.options.spin else jnp.zeros(n, d.qpos.dtype)

    def step(self, plant_state: MJXPlantState, plant_input: PlantInput, dt) -> MJXPlantState:
        ps, pm, m = plant_state, self.model.value, self.mjx_model
        platform = ps.platform
        fault = engine_faults(ps.faults, platform.n_rotors, plant_input.t, ps.steps, pm.options.timestep)
        ctrl, w, angles, u_first, w_first = engine_controls(
            pm, platform, ps.actuators, ps.motor_speed, {"alpha": ps.alpha, "beta": ps.beta}, plant_input.command,
            ps.steps, pm.options.timestep, fault)
        frame = mujoco.mj_name2id(pm.model, mujoco.mjtObj.mjOBJ_BODY, "frame")
        offset_b = -jnp.asarray(pm.model.body_ipos[frame], ps.data.qpos.dtype)
        servo_ff = [(pm.ctrl_tilt[key], pm.tilt_qvel[key], jnp.asarray(pm.model.actuator_gainprm[pm.ctrl_tilt[key], 0]))
                    for key in pm.ctrl_tilt]
        servo = propeller_servo(pm, platform, ps.actuators)
        electric = drives_by_current(pm, ps.actuators)
        spin_dof, spin_act = jnp.asarray(pm.spin_qvel), pm.ctrl_spin
        sign = jnp.asarray(pm.spin_sign, ps.data.qpos.dtype)
        drive = spin_actuators(pm, platform, ps.actuators)
        if drive is not None:  # the hinge actuators this flight's motor needs (servo gain, or torque motors)
            biastype = np.array(m.actuator_biastype)
            biastype[spin_act] = mujoco.mjtBias.mjBIAS_AFFINE
            m = m.replace(actuator_gainprm=m.actuator_gainprm.at[spin_act, 0].set(drive[0]),
                          actuator_biasprm=m.actuator_biasprm.at[spin_act, 2].set(drive[1]),
                          actuator_biastype=biastype)
        if servo is not None and servo.torque_max is not None:
            limited = np.array(m.actuator_forcelimited, dtype=bool)
            limited[spin_act] = True
            m = m.replace(actuator_forcelimited=limited)
        h = pm.options.timestep

        hold_spin = ps.spin_hold is not None  # static: stuck rotors whose propellers the motor turns
        k_hold = (jnp.asarray(pm.spin_inertia, ps.data.qpos.dtype) / pm.options.spin_time_constant) if hold_spin \
            else None

        ea = ps.aero
        sites, props = (np.asarray(ea.sites), np.asarray(ea.props)) if ea is not None else (None, None)

        def engine_step(d, energy, row, f_j, hold):
            for sl, dof, kp in servo_ff:
                row = row.at[sl].add(hinge_load(d.qfrc_bias, d.qfrc_actuator, d.actuator_force, sl, dof) / kp)
            m_j, electrical = m, None
            if electric:  # the motor's torque and the battery from the propeller's speed at the step's start
                torque, u, energy, electrical = electric_engine_step(platform, ps.actuators.motor, sign,
                                                                     d.qvel[spin_dof], row[spin_act], energy, h)
                if hold_spin:  # a stuck rotor's propeller keeps its speed
                    torque = stuck_hinges(f_j.stuck, hold, d.qvel[spin_dof], torque, True, k_hold)
                row = row.at[pm.ctrl_u].set(u).at[spin_act].set(torque)
            if servo is not None:  # thrust and drag from the propeller's speed at the step's start
                speed = d.qvel[spin_dof]
                row = row.at[pm.ctrl_u].set(speed**2)
                if hold_spin:  # a stuck rotor's propeller keeps its speed: the servo's target held
                    row = row.at[spin_act].set(stuck_hinges(f_j.stuck, hold, speed, row[spin_act], False, k_hold))
                if servo.torque_max is not None:  # the current limit on the servo torque, for this step
                    lo, hi = propeller_force_range(servo, sign, jnp.abs(speed))
                    m_j = m.replace(actuator_forcerange=m.actuator_forcerange.at[spin_act, 0].set(lo)
                                    .at[spin_act, 1].set(hi))
            u_row = row[pm.ctrl_u]
            if f_j is not None:  # thrust and drag torque of rotor i times eta_i at the step's start
                row = row.at[pm.ctrl_u].multiply(f_j.effectiveness)
            f = external_force(ps.wind, d.qvel[0:3], plant_input.air, plant_input.force)
            xfrc = jnp.zeros_like(d.xfrc_applied).at[frame].set(com_wrench(d.xmat[frame].reshape(9), offset_b, f,
                                                                           xp=jnp))
            if ea is not None:  # the aerodynamics from the engine's own hubs, axes and velocities
                frame_row, prop_rows = engine_aero_rows(
                    ea, d.qvel, d.xpos[frame], d.xmat[frame], d.site_xpos[sites], d.site_xmat[sites], d.xipos[props],
                    u_row, None if f_j is None else f_j.effectiveness, plant_input.air, offset_b)
                xfrc = xfrc.at[frame].add(frame_row).at[props].add(prop_rows)
            d = mjx.step(m_j, d.replace(ctrl=row, xfrc_applied=xfrc))
            if hold_spin:  # the speed a stuck rotor keeps: the propeller's until the fault
                hold = f_j.stuck * d.qvel[spin_dof] + (1 - f_j.stuck) * hold
            return d, energy, electrical, hold

        d0 = ps.data

        def one(carry, xs):
            d, energy, first, hold = carry
            row, i, f_j = xs
            d, energy, electrical, hold = engine_step(d, energy, row, f_j, hold)
            # the first step's: at its start (the electrical chain is evaluated before the step)
            seen = (d.qacc[0:6], _mjx_contact_force(m, d, pm.model.geom_bodyid), electrical)
            first = jax.tree_util.tree_map(lambda a, b: jnp.where(i == 0, b, a), first, seen)
            return (d, energy, first, hold), None

        zeros = (jnp.zeros(6, d0.qpos.dtype), jnp.zeros(3, d0.qpos.dtype), ps.applied.electrical)
        (d_end, energy, (acc, contact, electrical), hold), _ = jax.lax.scan(
            one, (d0, ps.energy, zeros, ps.spin_hold), (ctrl, jnp.arange(ctrl.shape[0]), fault))
        a, b = _hinge_angles(platform, pm, d0.qpos, ps.alpha, ps.beta, xp=jnp)
        if servo is not None or electric:  # the motor turns the propeller: its speeds are the engine's
            w_first = self._spin_speed(d0, platform.n_rotors)
            u_first, w = w_first**2, self._spin_speed(d_end, platform.n_rotors)
        applied = PlantOutputs(accel=acc[0:3], angular_accel=acc[3:6], u=u_first,
                               rotor_speed=self._spin_speed(d0, platform.n_rotors), alpha=a, beta=b,
                               contact_force=contact, motor_speed=w_first, electrical=electrical)
        moving = dt > 0  # dt = 0 (the last tick): record what is applied, advance nothing
        keep = lambda new, old: jax.tree_util.tree_map(lambda x, y: jnp.where(moving, x, y), new, old)
        return eqx.tree_at(lambda s: (s.data, s.motor_speed, s.alpha, s.beta, s.energy, s.applied, s.spin_hold), ps,
                           (keep(d_end, d0), keep(w, ps.motor_speed), keep(angles["alpha"], ps.alpha),
                            keep(angles["beta"], ps.beta), keep(energy, ps.energy), applied,
                            keep(hold, ps.spin_hold)), is_leaf=lambda x: x is None)

    def read(self, plant_state: MJXPlantState) -> PlantReading:
        ps, pm = plant_state, self.model.value
        d = ps.data
        a, b = _hinge_angles(ps.platform, pm, d.qpos, ps.alpha, ps.beta, xp=jnp)
        state = VehicleState(p=d.qpos[0:3], v=d.qvel[0:3], R=so3.quat_to_rot(d.qpos[3:7]), omega=d.qvel[3:6],
                             rotor_speed=ps.motor_speed, alpha=a.reshape(jnp.shape(ps.alpha)),
                             beta=b.reshape(jnp.shape(ps.beta)), energy=ps.energy)
        ok = jnp.all(jnp.isfinite(d.qpos)) & jnp.all(jnp.isfinite(d.qvel))
        return PlantReading(state=state, applied=ps.applied, ok=ok)

    def steps_per_tick(self, plant_state) -> int:
        return plant_state.steps


# --------------------------------------------------------------------------- MuJoCo C


class _HostState:
    """The MuJoCo C plant's state on the host: the engine data (mutated in place by each step), the motor and
    servo model states ``actuators = [motor speeds (n), alpha, beta]``, what was applied at the start of the
    last interval (``(accel, angular_accel, u, rotor_speed, alpha, beta, contact_force, motor_speed,
    electrical)``, NumPy), whether the engine stayed healthy and the battery's state ``energy``
    (``[soc, work (6)]``, NumPy; ``None`` unless the motor draws current) and the signed hinge speeds a stuck
    rotor's propeller keeps (``spin_hold``, :func:`stuck_hinges`; ``None`` unless needed)."""

    __slots__ = ("data", "actuators", "applied", "ok", "context", "energy", "spin_hold")

    def __init__(self, data, actuators, applied, ok, context, energy=None, spin_hold=None):
        self.data, self.actuators, self.applied, self.ok, self.context = data, actuators, applied, ok, context
        self.energy, self.spin_hold = energy, spin_hold


def contact_force(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """``(3,)`` total force of all contacts on the vehicle, world frame [N] (``mj_contactForce``, rotated by each
    contact frame; the floor is each contact's first geom, so the force acts on the second)."""
    total = np.zeros(3)
    if data.ncon == 0:
        return total
    f6 = np.zeros(6)
    for i in range(data.ncon):
        c = data.contact[i]
        mujoco.mj_contactForce(model, data, i, f6)
        f_w = np.asarray(c.frame).reshape(3, 3).T @ f6[:3]
        total += f_w if model.geom_bodyid[c.geom1] == 0 else -f_w
    return total


def _host_spin_speed(pm, d, n):
    """``(n,)`` the propeller hinge speeds ``|qvel|`` [rad/s] (zeros with welded propellers)."""
    return np.abs(d.qvel[pm.spin_qvel]) if pm.options.spin else np.zeros(n)


def _host_angles(ps: _HostState):
    """The hinge angles of the C engine's data (:func:`_hinge_angles`, NumPy)."""
    c = ps.context
    n, na, _ = c["sizes"]
    return _hinge_angles(c["platform"], c["pm"], ps.data.qpos, ps.actuators[n:n + na].reshape(c["a_shape"]),
                         ps.actuators[n + na:].reshape(c["b_shape"]))


class _HostPropeller:
    """The C engine's propellers as the motor, per engine step (:func:`propeller_servo`): views of the engine's
    arrays and buffers made once per flight, so an engine step allocates nothing.

    :meth:`step` sets the thrust inputs to the propeller speeds squared (``d.ctrl[ctrl_u] = qvel_spin^2``) and,
    when current-limited, the servos' force range to ``tau_max - c_tau qvel^2`` along each spin direction.
    """

    __slots__ = ("qvel_all", "dof", "qvel", "speed", "u", "lim", "lower", "upper", "tau_max", "c_tau", "pos", "neg")

    def __init__(self, pm, m, d, servo: PropellerServo):
        dof = np.asarray(pm.spin_qvel, dtype=int)
        contiguous = dof.size > 0 and np.all(np.diff(dof) == 1)
        self.qvel = d.qvel[dof[0]:dof[-1] + 1] if contiguous else None  # a view when the hinges are adjacent
        self.qvel_all, self.dof, self.speed = d.qvel, dof, np.zeros(dof.size)  # else gathered into a buffer
        self.u = d.ctrl[pm.ctrl_u]  # a view of the engine's controls
        self.tau_max = None if servo.torque_max is None else np.asarray(servo.torque_max, dtype=float)
        self.c_tau = np.asarray(servo.c_tau, dtype=float)
        self.lim = np.zeros(dof.size)
        sign = np.asarray(pm.spin_sign, dtype=float)
        self.pos, self.neg = sign > 0, sign <= 0
        fr = m.actuator_forcerange[pm.ctrl_spin]  # a view of this flight's model
        self.lower, self.upper = fr[:, 0], fr[:, 1]
        if self.tau_max is not None:
            self.lower[self.pos] = -np.inf
            self.upper[self.neg] = np.inf

    def step(self):
        speed = self.qvel if self.qvel is not None else np.take(self.qvel_all, self.dof, out=self.speed)
        np.square(speed, out=self.u)
        if self.tau_max is not None:
            np.multiply(self.c_tau, self.u, out=self.lim)
            np.subtract(self.tau_max, self.lim, out=self.lim)
            np.copyto(self.upper, self.lim, where=self.pos)
            np.negative(self.lim, out=self.lower, where=self.neg)


class _HostElectric:
    """The C engine's propellers turned by a motor that draws current, per engine step: :func:`electric_engine_step`
    compiled once per flight as a function of one flat vector (``[qvel_spin (n), u_cmd (n), soc, work (6)]`` ->
    ``[u (n), hinge torque (n), soc, work (6), electrical]``), called before each ``mj_step``; the engine's
    thrust inputs and hinge torques are set in place.
    """

    __slots__ = ("fn", "n", "dof", "ctrl_u", "ctrl_spin", "dtype")

    def __init__(self, pm, platform: Platform, motor, dtype):
        n = platform.n_rotors
        sign = jnp.asarray(pm.spin_sign, dtype)
        h = pm.options.timestep

        def one(x):
            energy = EnergyState(soc=x[2 * n], work=x[2 * n + 1:2 * n + 7])
            torque, u, e, out = electric_engine_step(platform, motor, sign, x[:n], x[n:2 * n], energy, h)
            return jnp.concatenate([u, torque, e.soc[None], e.work, out.motor_current, out.motor_voltage,
                                    jnp.stack([out.battery_current, out.terminal_voltage, out.ocv]),
                                    out.limited.astype(x.dtype)])

        self.fn = jax.jit(one).lower(jax.ShapeDtypeStruct((2 * n + 7,), dtype)).compile()
        self.n, self.dof, self.ctrl_u, self.ctrl_spin = n, np.asarray(pm.spin_qvel, dtype=int), pm.ctrl_u, pm.ctrl_spin
        self.dtype = np.dtype(dtype)

    def evaluate(self, qvel, u_cmd, energy):
        """``(u (n,), hinge torque (n,), energy_next (7,), electrical (flat))`` at these values."""
        n = self.n
        y = np.asarray(self.fn(np.concatenate([qvel, u_cmd, energy]).astype(self.dtype, copy=False)), dtype=float)
        return y[:n], y[n:2 * n], y[2 * n:2 * n + 7], y[2 * n + 7:]

    def step(self, d, energy):
        """Set the engine's thrust inputs and hinge torques (the spin controls hold ``u_cmd``) for the step from
        ``d`` and return ``(energy_next, electrical)``."""
        u, torque, e, out = self.evaluate(d.qvel[self.dof], d.ctrl[self.ctrl_spin], energy)
        d.ctrl[self.ctrl_u] = u
        d.ctrl[self.ctrl_spin] = torque
        return e, out

    def outputs(self, flat) -> ElectricOutputs:
        """The :class:`~jaxrotor.electrical.ElectricOutputs` of a flat ``electrical`` vector (NumPy)."""
        n = self.n
        return ElectricOutputs(motor_current=flat[:n], motor_voltage=flat[n:2 * n], battery_current=flat[2 * n],
                               terminal_voltage=flat[2 * n + 1], ocv=flat[2 * n + 2], limited=flat[2 * n + 3:] > 0.5)


def _energy_vector(energy: EnergyState) -> np.ndarray:
    return np.concatenate([np.atleast_1d(np.asarray(energy.soc, dtype=float)), np.asarray(energy.work, dtype=float)])


def _quat_to_rot(q: np.ndarray) -> np.ndarray:
    """:func:`jaxrotor.so3.quat_to_rot` in NumPy (the host plant's reading)."""
    q = q / np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


class MuJoCoPlant(_PhysicsPlant, AbstractHostPlant):
    """The multibody model of the vehicle's parts on the MuJoCo C engine, stepped on the host.

    The same model, controls, servo feed-forward and external force as :class:`MJXPlant` (module
    docstring); :func:`jaxrotor.fly` drives it from the host with the compiled tick fused with
    :func:`engine_controls` (one call per control period) and ``k`` calls of ``mujoco.mj_step``
    (:mod:`jaxrotor.host`). Not jittable; the numerical reference of :class:`MJXPlant`. Attributes
    as :class:`MJXPlant` (without ``mjx_model``), and

    Attributes:
        share_compilation: compile the tick once for flights that differ only in array values (the
            members of a randomized batch, another gain set): the flight computer's arrays are passed at
            each call instead of compiled in (about twice the per-tick cost, one compilation saved per
            flight). For many short flights.
    """

    name: ClassVar[str] = "MuJoCo C"
    share_compilation: bool = eqx.field(static=True, default=False)

    def compile_shared(self) -> bool:
        return self.share_compilation

    def init(self, platform, flight, key=None) -> _HostState:
        plant = self.prepare(platform)
        pm = plant.model.value
        m = pm.model
        servo = propeller_servo(pm, platform, flight.actuators, xp=np)
        drive = spin_actuators(pm, platform, flight.actuators, xp=np)
        if drive is not None:  # the hinge actuators this flight's motor needs, on its own copy of the model
            m = copy.copy(m)
            m.actuator_gainprm[pm.ctrl_spin, 0] = drive[0]
            m.actuator_biasprm[pm.ctrl_spin, 2] = drive[1]
            m.actuator_biastype[pm.ctrl_spin] = mujoco.mjtBias.mjBIAS_AFFINE
            if servo is not None and servo.torque_max is not None:
                m.actuator_forcelimited[pm.ctrl_spin] = 1
        d = mujoco.MjData(m)
        s0 = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=float), flight.initial_state(platform))
        qpos = pm.initial_qpos()
        qpos[0:3] = s0.p
        qpos[3:7] = np.asarray(so3.rot_to_quat(s0.R), dtype=float)
        d.qpos[:] = qpos
        d.qvel[0:3] = s0.v
        d.qvel[3:6] = s0.omega
        if pm.options.spin:
            d.qvel[pm.spin_qvel] = pm.spin_sign * s0.rotor_speed
        for name, adr in pm.tilt_qpos.items():
            ang = dict(zip(TILT_ANGLES, per_rotor_angles(platform, s0.alpha, s0.beta)))[name]
            d.qpos[adr] = np.asarray(ang, dtype=float)
        mujoco.mj_forward(m, d)
        n, k = platform.n_rotors, plant.steps(flight)
        frame = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "frame")
        a_shape, b_shape = np.shape(platform.alpha), np.shape(platform.beta)
        wind = None if flight.wind is None else jax.tree_util.tree_map(lambda x: np.asarray(x, dtype=float),
                                                                         flight.wind)
        sizes = (n, int(np.prod(a_shape)), int(np.prod(b_shape)))
        context = dict(pm=pm, k=k, nu=m.nu, n=n, frame=frame, offset_b=-np.asarray(m.body_ipos[frame], dtype=float),
                       sizes=sizes, wind=wind, platform=platform, actuators=flight.actuators, a_shape=a_shape,
                       b_shape=b_shape, servo_ff=[(pm.ctrl_tilt[key], pm.tilt_qvel[key],
                                                  np.array(m.actuator_gainprm[pm.ctrl_tilt[key], 0]))
                                                 for key in pm.ctrl_tilt], model=m,
                       propeller=None if servo is None else _HostPropeller(pm, m, d, servo),
                       electric=None, faults=flight.faults, stuck=flight.faults is not None
                       and flight.faults.kinds_present(("rotor_stuck",)),
                       k_hold=np.asarray(pm.spin_inertia, dtype=float) / pm.options.spin_time_constant
                       if _holds_spin(pm, flight.actuators, flight.faults) else None,
                       aero=jax.tree_util.tree_map(lambda x: np.asarray(x, dtype=float),
                                                   engine_aero(pm, platform, flight.aero, xp=np)))
        energy = electrical = None
        if drives_by_current(pm, flight.actuators):  # the battery's state, and the chain at the held hover command
            elec = context["electric"] = _HostElectric(pm, platform, flight.actuators.motor, platform.mass.dtype)
            energy = _energy_vector(s0.energy)
            electrical = elec.outputs(elec.evaluate(d.qvel[pm.spin_qvel], s0.rotor_speed**2, energy)[3])
        a, b = _hinge_angles(platform, pm, d.qpos, np.asarray(s0.alpha), np.asarray(s0.beta))
        applied = (d.qacc[0:3].copy(), d.qacc[3:6].copy(), s0.rotor_speed**2, _host_spin_speed(pm, d, n), a, b,
                   contact_force(m, d), s0.rotor_speed, electrical)
        actuators = np.concatenate([s0.rotor_speed, np.ravel(s0.alpha), np.ravel(s0.beta)])
        hold = d.qvel[pm.spin_qvel].copy() if context["k_hold"] is not None else None
        return _HostState(d, actuators, applied, True, context, energy, hold)

    def controller_platform(self, platform, plant_state):
        pm = plant_state.context["pm"]
        return pm.physics_platform() if self.controller_knows_engine else platform

    def steps_per_tick(self, plant_state) -> int:
        return plant_state.context["k"]

    def actuation(self, plant_state: _HostState):
        c = plant_state.context
        args = (c["platform"], c["actuators"], c["faults"])
        if "actuate" in c:  # one function per flight: a direct step() compiles it once
            return args, c["actuate"]
        pm, k, (n, na, _) = c["pm"], c["k"], c["sizes"]
        a_shape, b_shape, stuck = c["a_shape"], c["b_shape"], c["stuck"]

        def actuate(args, act_x, plant_input: PlantInput):
            platform, actuators, faults = args
            angles = {"alpha": act_x[n:n + na].reshape(a_shape), "beta": act_x[n + na:].reshape(b_shape)}
            fault = engine_faults(faults, n, plant_input.t, k, pm.options.timestep)
            ctrl, w, ang, u_first, w_first = engine_controls(pm, platform, actuators, act_x[:n], angles,
                                                             plant_input.command, k, pm.options.timestep, fault)
            # with faults: each engine step's effectiveness (k, n) and, with a stuck rotor, its stuck factors (k, n)
            per_step = [] if fault is None else [fault.effectiveness.ravel()] + ([fault.stuck.ravel()] if stuck else [])
            return jnp.concatenate([ctrl.ravel(), w, ang["alpha"].ravel(), ang["beta"].ravel(), u_first, w_first,
                                    plant_input.air, plant_input.force, *per_step])

        c["actuate"] = jax.jit(actuate)
        return args, c["actuate"]

    def actuator_vector(self, plant_state: _HostState):
        return plant_state.actuators

    def advance(self, plant_state: _HostState, drive, dt) -> _HostState:
        ps, c = plant_state, plant_state.context
        pm, d = c["pm"], plant_state.data
        m, prop, elec = c["model"], c["propeller"], c["electric"]
        energy, electrical = ps.energy, None
        k, nu, (n, na, nb) = c["k"], c["nu"], c["sizes"]
        ctrl = drive[:k * nu].reshape(k, nu)
        rest = drive[k * nu:]
        u_first, w_first = rest[n + na + nb:2 * n + na + nb], rest[2 * n + na + nb:3 * n + na + nb]
        air, force = rest[3 * n + na + nb:3 * n + na + nb + 3], rest[3 * n + na + nb + 3:3 * n + na + nb + 6]
        eta = stuck = None
        hold = ps.spin_hold
        if c["faults"] is not None:  # the effectiveness and stuck factors of each engine step (k, n)
            per_step = rest[3 * n + na + nb + 6:]
            eta = per_step[:k * n].reshape(k, n)
            stuck = per_step[k * n:].reshape(k, n) if c["stuck"] else None
        a_now, b_now = _host_angles(ps)
        speed_now = _host_spin_speed(pm, d, n)
        frame, offset_b, wind, ea = c["frame"], c["offset_b"], c["wind"], c["aero"]
        sites, props = (list(ea.sites), list(ea.props)) if ea is not None else (None, None)
        record = None
        if wind is None and ea is None:  # the external force is the held disturbance: set once for the interval
            d.xfrc_applied[frame] = com_wrench(d.xmat[frame], offset_b, force)
        for j, row in enumerate(ctrl if dt > 0 else ctrl[:1]):
            d.ctrl[:] = row
            if prop is not None:  # the propellers are the motor: u_i = qvel_i^2 at the step's start
                prop.step()
            if elec is not None:  # the motor's torque and the battery from the propeller's speed at the step's start
                energy_next, out = elec.step(d, energy)
                electrical = out if j == 0 else electrical
                energy = energy_next if dt > 0 else energy
            if hold is not None:  # a stuck rotor's propeller keeps its speed (servo target or hinge torque)
                d.ctrl[pm.ctrl_spin] = stuck_hinges(stuck[j], hold, d.qvel[pm.spin_qvel], d.ctrl[pm.ctrl_spin],
                                                    elec is not None, c["k_hold"])
            u_row = d.ctrl[pm.ctrl_u].copy()
            if eta is not None:  # thrust and drag torque of rotor i times eta_i at the step's start
                d.ctrl[pm.ctrl_u] = eta[j] * d.ctrl[pm.ctrl_u]
            for sl, dof, kp in c["servo_ff"]:
                d.ctrl[sl] = row[sl] + hinge_load(d.qfrc_bias, d.qfrc_actuator, d.actuator_force, sl, dof) / kp
            if wind is not None or ea is not None:  # the drag follows the engine's velocity at every step
                f = external_force(wind, d.qvel[0:3], air, force, norm=np.linalg.norm)
                d.xfrc_applied[frame] = com_wrench(d.xmat[frame], offset_b, f)
            if ea is not None:  # the aerodynamics from the engine's own hubs, axes and velocities
                frame_row, prop_rows = engine_aero_rows(
                    ea, d.qvel, d.xpos[frame], d.xmat[frame], d.site_xpos[sites], d.site_xmat[sites], d.xipos[props],
                    u_row, None if eta is None else eta[j], air, offset_b, xp=np)
                d.xfrc_applied[frame] += frame_row
                d.xfrc_applied[props] = prop_rows
            if dt > 0:
                mujoco.mj_step(m, d)
                if hold is not None:  # the speed a stuck rotor keeps: the propeller's until the fault
                    hold = stuck[j] * d.qvel[pm.spin_qvel] + (1 - stuck[j]) * hold
            else:  # the last tick: what the command applies now, nothing advances
                mujoco.mj_forward(m, d)
            if j == 0:
                record = (d.qacc[0:6].copy(), contact_force(m, d))
        act = rest[:n + na + nb] if dt > 0 else ps.actuators
        if prop is not None or elec is not None:  # the motor turns the propellers: its speeds are theirs
            u_first, w_first = speed_now**2, speed_now
            act = act.copy()
            act[:n] = _host_spin_speed(pm, d, n)
        applied = (record[0][0:3], record[0][3:6], u_first, speed_now, a_now, b_now, record[1], w_first,
                   None if elec is None else elec.outputs(electrical))
        ok = d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 0
        return _HostState(d, act, applied, ok, c, energy, hold)



    def state_vector(self, plant_state: _HostState):
        d = plant_state.data
        a, b = _host_angles(plant_state)
        energy = () if plant_state.energy is None else (plant_state.energy,)
        return np.concatenate([d.qpos[0:7], d.qvel[0:6], plant_state.actuators[:plant_state.context["n"]],
                               np.ravel(a), np.ravel(b), *energy])

    def state_from_vector(self, plant_state: _HostState, x):
        c = plant_state.context
        n, na, nb = c["sizes"]
        end = 13 + n + na + nb
        energy = None if plant_state.energy is None else EnergyState(soc=x[end], work=x[end + 1:end + 7])
        return VehicleState(p=x[0:3], v=x[7:10], R=so3.quat_to_rot(x[3:7]), omega=x[10:13], rotor_speed=x[13:13 + n],
                            alpha=x[13 + n:13 + n + na].reshape(c["a_shape"]),
                            beta=x[13 + n + na:end].reshape(c["b_shape"]), energy=energy)

    def read(self, plant_state: _HostState) -> PlantReading:
        ps = plant_state
        d = ps.data
        a, b = _host_angles(ps)
        n = ps.context["n"]
        energy = None if ps.energy is None else EnergyState(soc=ps.energy[0], work=ps.energy[1:].copy())
        state = VehicleState(p=d.qpos[0:3].copy(), v=d.qvel[0:3].copy(), R=_quat_to_rot(d.qpos[3:7].copy()),
                             omega=d.qvel[3:6].copy(), rotor_speed=ps.actuators[:n].copy(), alpha=np.asarray(a),
                             beta=np.asarray(b), energy=energy)
        names = ("accel", "angular_accel", "u", "rotor_speed", "alpha", "beta", "contact_force", "motor_speed",
                 "electrical")
        return PlantReading(state=state, applied=PlantOutputs(**dict(zip(names, ps.applied))), ok=np.asarray(ps.ok))
