"""The physics-layer flight on the MuJoCo C engine, driven by the same JAX flight computer.

:func:`fly_physics` flies a :class:`~jaxrotor.flight.Flight` on the multibody model
of :mod:`jaxrotor.physics.mjcf`. The loop, at a fixed control period
``control_period = k * timestep``::

    engine state (qpos, qvel) --> VehicleState --> flight_computer (reference, controller,
    allocator, tilt command; jaxrotor.flight) --> u_cmd (held for k physics steps)
    --> motor model (flight.actuators.motor, Euler at the physics step) --> per step:
        thrust inputs u_i (actuators on the thrust sites: c_f u_i z_i at p_i, kappa_i c_tau u_i z_i),
        propeller speed targets (velocity servos on the spin hinges),
        tilt targets from the servo model (position servos on the tilt hinges)
    --> mj_step x k

On a tilting platform the flight computer sees the engine's hinge angles as ``state.alpha`` /
``state.beta`` (an encoder reading; a tilt-deciding allocator allocates the speeds at them),
the servo model's own state sets the hinge targets, each target carries a load feed-forward
(:func:`_hinge_load`: the position servos do not sag under their motors' weight), and the
recorded ``trajectory.alpha`` / ``beta`` are the hinge angles.

A flight with ``sensors`` and ``wind`` is flown as :func:`jaxrotor.discrete.fly_discrete`
flies it: the per-tick sensor errors and gusts are drawn once from ``flight.key`` by
:func:`jaxrotor.discrete.flight_noise` (the same draws for the same key), the controller
sees :func:`jaxrotor.sensors.measure` of the engine state ``delay`` ticks old (a ring
buffer of engine readings), and the drag :meth:`jaxrotor.wind.Wind.force` against the
air velocity held over the tick is evaluated from the engine velocity before every
``mj_step`` (NumPy, no JAX call) and applied at the centre of mass (``xfrc_applied``).

One control evaluation (controller, integral update, motor and servo schedules
for the ``k`` steps) is a single jit-compiled function of one flat float64
vector, compiled once per flight structure, so the Python loop does one JAX
call per control period and ``k`` calls of ``mj_step``. The controller's
integral states are integrated by forward Euler at the control period
(zero-order hold); the analytic layer integrates them continuously.

Outputs a :class:`PhysicsResult`: the same :class:`~jaxrotor.trajectory.Trajectory`
as the analytic layer (so :func:`jaxrotor.metrics.flight_metrics`, the plots and
the objectives work unchanged), plus the contact force of the floor on the
vehicle and the motor model's rotor speeds; ``trajectory.rotor_speed`` is the
engine's own (the propeller hinge speeds).
"""

from __future__ import annotations

import dataclasses
import math
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from jax.flatten_util import ravel_pytree

from .. import so3
from ..control import AbstractController
from ..design.platform import TILT_ANGLES, Platform, per_rotor_angles
from ..discrete import flight_noise
from ..flight import Flight, flight_computer
from ..sensors import measure
from ..trajectory import Trajectory, divergence_flag
from ..wind import drag_force
from .mjcf import ModelOptions, PhysicsModel, build_model
from .parts import Parts

__all__ = ["FlatLayout", "PhysicsResult", "PhysicsSettings", "contact_force", "control_step", "fly_physics"]


@dataclasses.dataclass(frozen=True)
class PhysicsSettings:
    """How the physics layer flies: the parts, the engine options and the control period.

    Attributes:
        parts: the vehicle's parts (:class:`~jaxrotor.physics.parts.Parts`).
        options: engine options (:class:`~jaxrotor.physics.mjcf.ModelOptions`; ``timestep`` [s]).
        control_period: controller period [s], a whole multiple ``k`` of ``options.timestep``
            (the command is held for ``k`` physics steps).
        controller_knows_engine: the controller (and allocator) use the engine's mass and
            inertia (``True``, default) or the platform's as given (``False``).
    """

    parts: Parts = dataclasses.field(default_factory=Parts)
    options: ModelOptions = dataclasses.field(default_factory=ModelOptions)
    control_period: float = 0.001
    controller_knows_engine: bool = True

    def for_flight(self, flight: Flight) -> PhysicsSettings:
        """These settings with the control period of ``flight.control_rate`` [Hz] when the flight sets one."""
        rate = getattr(flight, "control_rate", None)
        return self if rate is None else dataclasses.replace(self, control_period=1.0 / float(rate))

    def __post_init__(self):
        cp = self.control_period
        if not (isinstance(cp, (int, float)) and math.isfinite(cp) and cp > 0):
            raise ValueError(f"PhysicsSettings parameter `control_period` = {cp!r} is invalid: it must be > 0 s. "
                             "Fix: pass e.g. 0.001 (1 kHz).")
        if abs(self.steps_per_control * self.options.timestep - cp) > 1e-9 * cp:
            raise ValueError(f"PhysicsSettings parameter `control_period` = {cp!r} s is not a whole multiple of the "
                             f"physics timestep {self.options.timestep!r} s. Fix: pass a multiple such as "
                             f"{max(1, round(cp / self.options.timestep)) * self.options.timestep!r}.")

    @property
    def steps_per_control(self) -> int:
        """``k``: physics steps per control period."""
        return max(1, round(self.control_period / self.options.timestep))


class PhysicsResult(eqx.Module):
    """A physics-layer flight.

    Attributes:
        trajectory: the :class:`~jaxrotor.trajectory.Trajectory` (``rotor_speed`` is the engine's
            propeller hinge speed ``|qvel|``, [rad/s]; ``u`` the applied thrust inputs).
        contact_force: ``(T, 3)`` total force of the floor on the vehicle, world frame [N].
        motor_speed: ``(T, n)`` rotor speeds of the motor model driving the propellers [rad/s].
        wall_time_s: wall-clock time of the loop [s] (excluding model building and compilation).
        compile_time_s: model building and compilation time [s].
        control_time_s: the part of ``wall_time_s`` spent in the compiled control step [s]
            (the rest is ``mj_step`` and the Python loop).
    """

    trajectory: Trajectory
    contact_force: jax.Array
    motor_speed: jax.Array
    wall_time_s: float = eqx.field(static=True)
    compile_time_s: float = eqx.field(static=True)
    control_time_s: float = eqx.field(static=True, default=float("nan"))


def contact_force(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """``(3,)`` total force of all contacts on the vehicle, world frame [N] (``mj_contactForce``, rotated by each
    contact frame; the floor is each contact's first geom, so the force acts on the second)."""
    total = np.zeros(3)
    f6 = np.zeros(6)
    for i in range(data.ncon):
        c = data.contact[i]
        mujoco.mj_contactForce(model, data, i, f6)
        f_w = np.asarray(c.frame).reshape(3, 3).T @ f6[:3]
        total += f_w if model.geom_bodyid[c.geom1] == 0 else -f_w
    return total


class FlatLayout:
    """Named slices of a flat vector: ``FlatLayout([("p", 3), ("quat", 4)])["quat"] == slice(3, 7)``.

    The compiled control step (:func:`control_step`) takes and returns one flat vector each, laid
    out this way, so one call per control period moves a single array in and one out.

    Attributes:
        slices: name -> ``slice``. size: total length.
    """

    def __init__(self, sizes: list[tuple[str, int]]):
        self.slices, start = {}, 0
        for name, size in sizes:
            self.slices[name] = slice(start, start + size)
            start += size
        self.size = start

    def __getitem__(self, name):
        return self.slices[name]


def _apply_at_com(data: mujoco.MjData, body: int, offset_b: np.ndarray, f: np.ndarray) -> None:
    """Set ``xfrc_applied`` of ``body`` to the world force ``f`` [N] acting at the point ``offset_b`` [m] from the
    body's own centre of mass (body frame): the force there plus the moment ``r x f``, ``r = R offset_b``."""
    r = data.xmat[body].reshape(3, 3) @ offset_b
    data.xfrc_applied[body, 0:3] = f
    data.xfrc_applied[body, 3] = r[1] * f[2] - r[2] * f[1]
    data.xfrc_applied[body, 4] = r[2] * f[0] - r[0] * f[2]
    data.xfrc_applied[body, 5] = r[0] * f[1] - r[1] * f[0]


def _hinge_angles(platform: Platform, pm: PhysicsModel, data: mujoco.MjData, alpha, beta):
    """The tilt angles the engine's hinges have now, in the shape of ``platform.alpha`` / ``beta`` [rad].

    For each tilting angle set the hinge positions ``q_i`` (``pm.tilt_qpos``) are the per-rotor
    angles; an interdependent (scalar) angle is recovered as ``mean_i(sign_i q_i)`` (``sign_i`` the
    platform's ``alpha_sign`` / ``beta_sign``, ``+-1``), the inverse of
    :func:`~jaxrotor.design.platform.per_rotor_angles`. Angle sets without hinges keep the given
    ``alpha``, ``beta`` (the platform's fixed values).
    """
    out = {"alpha": np.asarray(alpha, dtype=float), "beta": np.asarray(beta, dtype=float)}
    for key, adr in pm.tilt_qpos.items():
        q = np.asarray(data.qpos[adr], dtype=float)
        if np.ndim(getattr(platform, key)) == 0:
            sign = np.asarray(getattr(platform, f"{key}_sign"), dtype=float)
            q = np.atleast_1d(np.mean(sign * q))
        out[key] = q.reshape(out[key].shape)
    return out["alpha"], out["beta"]


def control_step(platform_ctrl, platform_geom, controller, flight, alloc_data, settings, pm: PhysicsModel,
                 in_layout, unravel_int, t, x):
    """One control period of the physics layer as a pure JAX function of ``(t, x)``.

    ``x`` (layout ``in_layout``: ``p`` [m], ``quat`` ``(w, x, y, z)``, ``v`` [m/s] world, ``omega``
    [rad/s] body, the motor model's ``motor`` speeds [rad/s], the servo model's states ``alpha``,
    ``beta`` [rad], the engine's hinge angles ``alpha_hinge``, ``beta_hinge`` [rad] (what the
    flight computer sees as ``state.alpha``, ``state.beta``: on a tilting platform the allocator
    allocates the speeds at the angles the hinges have; without these slices the servo model's
    states), the controller's flattened ``integral``, and with ``flight.sensors`` the ``(4, 3)``
    sensor ``error`` of this tick applied by :func:`jaxrotor.sensors.measure`) goes through
    :func:`jaxrotor.flight.flight_computer` with ``platform_ctrl``; the controller's integral
    is advanced by forward Euler over ``settings.control_period``; the motor model
    (``flight.actuators.motor.applied``) and, on a tilting platform, the servo model are
    stepped ``k = settings.steps_per_control`` times at the physics step. Returns one flat
    vector: the ``(k, nu)`` engine controls (thrust inputs ``u`` [rad^2/s^2], signed propeller
    speeds ``s_i omega_i`` [rad/s], per-rotor tilt targets [rad]), the new motor, servo and
    integral states, then the records of this tick (applied and commanded ``u``, requested
    and achieved wrench, saturation flags, reference ``p, v, a, R``, motor speed, the
    disturbance force [N]), in the order :func:`fly_physics` unpacks them.
    """
    n, k, h = platform_geom.n_rotors, settings.steps_per_control, settings.options.timestep
    dtype = platform_ctrl.mass.dtype
    x = x.astype(dtype)
    q = x[in_layout["quat"]]
    alpha = x[in_layout["alpha"]].reshape(platform_geom.alpha.shape)
    beta = x[in_layout["beta"]].reshape(platform_geom.beta.shape)
    from ..dynamics import VehicleState

    # the flight computer sees the angles the hinges have (an encoder reading); the servo model's own
    # state (alpha, beta) sets the hinge targets; a layout without hinge slices (the MJX loop) passes the latter
    seen = {key: x[in_layout[f"{key}_hinge"]].reshape(getattr(platform_geom, key).shape)
            if f"{key}_hinge" in in_layout.slices else val for key, val in (("alpha", alpha), ("beta", beta))}
    state = VehicleState(p=x[in_layout["p"]], v=x[in_layout["v"]], R=so3.quat_to_rot(q), omega=x[in_layout["omega"]],
                         rotor_speed=x[in_layout["motor"]], alpha=seen["alpha"], beta=seen["beta"])
    if flight.sensors is not None:  # the controller sees the measured state (kinematics already delayed)
        if "error" not in in_layout.slices:
            raise ValueError("control_step: the flight has `sensors` but the input layout has no `error` slice "
                             "(the sensor errors of the tick). Fix: fly it with fly_physics, or remove the sensors.")
        state = measure(state, x[in_layout["error"]].reshape(4, 3))
    integral = unravel_int(x[in_layout["integral"]])
    cmd, d_int, alloc, ref = flight_computer(platform_ctrl, controller, flight, t, state, integral, alloc_data)
    integral_new = jax.tree_util.tree_map(lambda a, b: a + settings.control_period * b, integral, d_int)
    motor, servo = flight.actuators.motor, flight.actuators.servo
    sign = jnp.asarray(pm.spin_sign, dtype=dtype)
    w = state.rotor_speed
    angles = {"alpha": alpha, "beta": beta}
    rows = []
    u_now = w_now = None
    for _ in range(k):
        u_j, w_j, w_dot = motor.applied(platform_geom, w, cmd.u)
        u_now = u_j if u_now is None else u_now
        w_now = w_j if w_now is None else w_now
        parts = [u_j]
        if settings.options.spin:
            parts.append(sign * w_j)
        new_angles = {}
        for key in TILT_ANGLES:
            target = getattr(cmd, key)
            current = angles[key]
            if key in pm.ctrl_tilt:
                a_j, a_dot = servo.applied(current, jnp.broadcast_to(target, current.shape))
                per = per_rotor_angles(platform_geom, **{key: a_j})[TILT_ANGLES.index(key)]
                parts.append(jnp.broadcast_to(per, (n,)))
                new_angles[key] = current + h * a_dot
            else:
                new_angles[key] = current
        rows.append(jnp.concatenate(parts))
        angles = new_angles
        w = w + h * w_dot
    flat_int, _ = ravel_pytree(integral_new)
    out = [jnp.stack(rows).ravel(), w, angles["alpha"].ravel(), angles["beta"].ravel(), flat_int,
           u_now, cmd.u, alloc.requested, alloc.achieved, alloc.saturated.astype(dtype), ref.p, ref.v, ref.a,
           ref.R.ravel(), w_now,
           jnp.zeros(3, dtype) if flight.disturbance is None else flight.disturbance(t)]
    return jnp.concatenate([jnp.ravel(o).astype(dtype) for o in out])


def _hinge_load(data: mujoco.MjData, ctrl: slice, dof: np.ndarray) -> np.ndarray:
    """``(n,)`` torque [N m] the tilt servos of one angle set must add to hold their hinges: the bias force
    (gravity, Coriolis and centrifugal terms) on the hinge dofs minus what the other actuators apply there,
    from the engine's last evaluation (``qfrc_bias``, ``qfrc_actuator`` less the servos' own
    ``actuator_force``). The loop adds ``load / k_p`` to each servo target (a load feed-forward, as a
    hobby or industrial servo's current loop does), so a position servo of finite stiffness ``k_p`` does
    not sag under the weight of its motor and propeller."""
    return data.qfrc_bias[dof] - (data.qfrc_actuator[dof] - data.actuator_force[ctrl])


_STEP_CACHE: dict = {}
_STEP_CACHE_SIZE = 8


def _compiled_control_step(args, settings: PhysicsSettings, pm: PhysicsModel, in_layout: FlatLayout, unravel_int,
                           x_dtype, share: bool = False):
    """The AOT-compiled :func:`control_step` of this flight as ``f(t, x)``.

    ``args = (platform_ctrl, platform, controller, flight, alloc_data)``. Without ``share`` they
    are compiled in as constants (XLA folds what depends on them only: the fastest call, one
    compilation per flight). With ``share`` their array leaves are flattened into one vector
    ``params`` passed at every call and the rest is compiled in; the executable is cached by
    that rest, the leaves' shapes and dtypes, the settings and the model's structure, so flights
    that differ only in array values (the members of a randomized batch, another gain set)
    reuse one compilation, at about twice the per-call cost (measured 90-125 us against
    25-45 us on the use case, loaded 2-core machine).
    """
    spec = jax.ShapeDtypeStruct((in_layout.size,), x_dtype)
    t_spec = jax.ShapeDtypeStruct((), x_dtype)
    if not share:
        def closed(t, x):
            return control_step(*args, settings, pm, in_layout, unravel_int, t, x)

        return jax.jit(closed).lower(t_spec, spec).compile()
    dyn, static = eqx.partition(args, eqx.is_array)
    flat, unravel_dyn = ravel_pytree(dyn)
    flat = flat.astype(x_dtype)
    leaves = jax.tree_util.tree_leaves(dyn)
    static_leaves, static_def = jax.tree_util.tree_flatten(static)
    try:
        key = (static_def, tuple(static_leaves), jax.tree_util.tree_structure(dyn),
               tuple((a.shape, str(a.dtype)) for a in leaves), repr(settings), pm.model.nu,
               np.asarray(pm.spin_sign).tobytes(), repr(pm.ctrl_tilt), tuple(in_layout.slices.items()),
               jax.tree_util.tree_structure(unravel_int(jnp.zeros(in_layout["integral"].stop
                                                                  - in_layout["integral"].start))),
               str(jnp.dtype(x_dtype)))
        hash(key)
    except TypeError:  # a static leaf that cannot be hashed: compile for this flight only
        key = None
    if key is not None and key in _STEP_CACHE:
        cached = _STEP_CACHE[key]
        return lambda t, x: cached(t, x, flat)

    def step(t, x, p):
        pc, pg, ctrl, fl, ad = eqx.combine(unravel_dyn(p), static)
        return control_step(pc, pg, ctrl, fl, ad, settings, pm, in_layout, unravel_int, t, x)

    compiled = jax.jit(step).lower(t_spec, spec, jax.ShapeDtypeStruct(flat.shape, x_dtype)).compile()
    if key is not None:
        if len(_STEP_CACHE) >= _STEP_CACHE_SIZE:
            _STEP_CACHE.pop(next(iter(_STEP_CACHE)))
        _STEP_CACHE[key] = compiled
    return lambda t, x: compiled(t, x, flat)


def fly_physics(platform: Platform, controller: AbstractController, flight: Flight,
                settings: PhysicsSettings = PhysicsSettings(), model: PhysicsModel | None = None, *,
                share_compilation: bool = False) -> PhysicsResult:
    """Fly ``flight`` on the MuJoCo multibody model of ``platform`` built from ``settings.parts``.

    The same :func:`~jaxrotor.flight.flight_computer` (reference, controller, tilt
    command, allocator) as :func:`jaxrotor.flight.fly` drives the engine every
    ``settings.control_period`` with zero-order hold; the motor and servo models of
    ``flight.actuators`` shape the propeller-speed and tilt targets between control
    ticks. The flight starts from ``flight.initial_state(platform)``; a state at
    ``p_z = 0`` rests on the floor. Samples are taken every ``flight.save_dt``
    (a whole multiple of the control period).

    Args:
        platform: concrete platform (geometry, rotor coefficients).
        controller: any :class:`~jaxrotor.control.AbstractController`.
        flight: the flight description (``integrator`` is not used: the engine steps at
            ``settings.options.timestep``).
        settings: parts, engine options, control period.
        model: a model already built by :func:`~jaxrotor.physics.mjcf.build_model` for this
            platform and settings (built here when ``None``).
        share_compilation: reuse one compiled control step across flights that differ only in
            array values (randomized vehicles, noise levels, gains): the platform, controller and
            flight arrays are passed at each call instead of compiled in, which costs about twice
            the per-tick time and saves a compilation per flight. For many short flights.

    Returns:
        A :class:`PhysicsResult`. A flight whose state becomes non-finite, runs beyond
        ``flight.limits`` or makes the engine reset (bad accelerations) stops there, holds its
        last sample and is reported with ``trajectory.diverged = True``.

    Raises:
        ValueError: a controller that needs a higher allocation rank (``Flight.check``), a
            save period that is not a multiple of the control period, or a flight with
            sensors or wind but no ``key``.

    ``flight.disturbance`` (world force [N]) is applied at the centre of mass, held over
    each control period; ``flight.control_rate`` [Hz], when set, replaces
    ``settings.control_period``. ``flight.sensors`` and ``flight.wind`` act as on the
    discrete-rate analytic loop (module docstring): the controller at tick ``k`` sees the
    engine state of tick ``k - delay`` with the sensor errors of tick ``k``, and the drag
    ``f = -c_1 v_rel - c_2 |v_rel| v_rel``, ``v_rel = v - w_mean - g_k``, is re-evaluated at
    every engine step from the engine's velocity.
    """
    t_build = time.perf_counter()
    flight.check(platform, controller)
    settings = settings.for_flight(flight)
    sensors, wind = flight.sensors, flight.wind
    pm = model if model is not None else build_model(platform, settings.parts, settings.options)
    platform_ctrl = pm.physics_platform() if settings.controller_knows_engine else platform
    n = platform.n_rotors
    k = settings.steps_per_control
    ratio = flight.save_dt / settings.control_period
    if abs(ratio - round(ratio)) > 1e-9 * ratio or round(ratio) < 1:
        raise ValueError(f"fly_physics: `flight.save_dt` = {flight.save_dt!r} s is not a whole multiple of the control "
                         f"period {settings.control_period!r} s. Fix: choose save_dt as a multiple of the control period.")
    save_every = round(ratio)
    dtype = platform.mass.dtype
    state0 = flight.initial_state(platform)
    int0 = controller.init_state(platform_ctrl)
    flat_int0, unravel_int = ravel_pytree(int0)
    a_size, b_size = int(np.size(platform.alpha)), int(np.size(platform.beta))
    in_layout = FlatLayout([("p", 3), ("quat", 4), ("v", 3), ("omega", 3), ("motor", n), ("alpha", a_size),
                            ("beta", b_size), ("alpha_hinge", a_size), ("beta_hinge", b_size),
                            ("integral", flat_int0.size), ("error", 12 if sensors is not None else 0)])
    nu = pm.model.nu
    out_layout = FlatLayout([("ctrl", k * nu), ("motor", n), ("alpha", a_size), ("beta", b_size),
                          ("integral", flat_int0.size), ("u", n), ("u_cmd", n), ("req", 6), ("ach", 6), ("sat", n),
                          ("p_ref", 3), ("v_ref", 3), ("a_ref", 3), ("R_ref", 9), ("motor_now", n), ("f_ext", 3)])
    alloc_data = flight.allocation_data(platform_ctrl)
    x_dtype = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
    # the key is used above (flight_noise), not in the control step
    flight_ctrl = dataclasses.replace(flight, key=None) if flight.key is not None else flight
    compiled = _compiled_control_step((platform_ctrl, platform, controller, flight_ctrl, alloc_data), settings, pm,
                                      in_layout, unravel_int, x_dtype, share=share_compilation)

    # engine initial state
    m = pm.model
    d = mujoco.MjData(m)
    frame_id = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "frame")
    qpos = pm.initial_qpos()
    s0 = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=float), state0)
    qpos[0:3] = s0.p
    qpos[3:7] = np.asarray(so3.rot_to_quat(s0.R), dtype=float)
    d.qpos[:] = qpos
    d.qvel[0:3] = s0.v
    d.qvel[3:6] = s0.omega
    if pm.options.spin:
        d.qvel[pm.spin_qvel] = pm.spin_sign * s0.rotor_speed
    for key, adr in pm.tilt_qpos.items():
        ang = dict(zip(TILT_ANGLES, per_rotor_angles(platform, s0.alpha, s0.beta)))[key]
        d.qpos[adr] = np.asarray(ang, dtype=float)
    mujoco.mj_forward(m, d)
    compile_time = time.perf_counter() - t_build

    times = np.asarray(flight.save_times, dtype=float)
    T = len(times)
    n_ticks = (T - 1) * save_every
    # sensor errors and gusts of ticks 0..n_ticks: the draws of the analytic discrete loop for this key
    errors, gusts = (np.asarray(a, dtype=float) for a in flight_noise(flight, n_ticks + 1, settings.control_period,
                                                                       dtype))
    delay = sensors.delay if sensors is not None else 0
    seen = [None] * (delay + 1)  # ring buffer of engine readings (p, quat, v, omega): the last delay + 1 ticks
    if wind is not None:
        air_mean = np.asarray(wind.mean, dtype=float)
        c_lin, c_quad = float(wind.drag_linear), float(wind.drag_quadratic)
    # xfrc_applied acts at the frame body's own centre of mass; the vehicle's is the frame origin
    com_offset_b = -np.asarray(m.body_ipos[frame_id], dtype=float)
    rec = {name: np.zeros((T, size)) for name, size in
           (("p", 3), ("v", 3), ("quat", 4), ("omega", 3), ("accel", 3), ("angular_accel", 3), ("u", n),
            ("u_cmd", n), ("rotor_speed", n), ("alpha", a_size), ("beta", b_size), ("req", 6), ("ach", 6),
            ("sat", n), ("p_ref", 3), ("v_ref", 3), ("a_ref", 3), ("R_ref", 9), ("integral", flat_int0.size),
            ("contact", 3), ("motor", n))}
    x = np.zeros(in_layout.size)
    x[in_layout["motor"]] = s0.rotor_speed
    x[in_layout["alpha"]] = np.ravel(s0.alpha)
    x[in_layout["beta"]] = np.ravel(s0.beta)
    x[in_layout["integral"]] = np.asarray(flat_int0, dtype=float)
    spin_adr = pm.spin_qvel
    # load feed-forward of the tilt servos (_hinge_load): per tilting angle set, the control slice, the hinge
    # dofs and the servo stiffness k_p [N m/rad]
    servo_ff = [(pm.ctrl_tilt[key], pm.tilt_qvel[key], np.array(m.actuator_gainprm[pm.ctrl_tilt[key], 0]))
                for key in pm.ctrl_tilt]
    lim = flight.limits
    diverged = False
    last = 0
    control_time = 0.0
    t_run = time.perf_counter()
    dt_ctrl = settings.control_period
    t0 = float(flight.t0)
    for tick in range(n_ticks + 1):
        t = t0 + tick * dt_ctrl
        if delay == 0:  # the current engine state
            x[0:7] = d.qpos[0:7]
            x[7:13] = d.qvel[0:6]
        else:  # the engine state of tick - delay (the initial state before the first delay ticks)
            reading = np.concatenate([d.qpos[0:7], d.qvel[0:6]])
            seen = [reading] * (delay + 1) if tick == 0 else seen[1:] + [reading]
            x[0:13] = seen[0]
        if sensors is not None:
            x[in_layout["error"]] = errors[tick].ravel()
        hinge_a, hinge_b = _hinge_angles(platform, pm, d, x[in_layout["alpha"]], x[in_layout["beta"]])
        x[in_layout["alpha_hinge"]], x[in_layout["beta_hinge"]] = hinge_a, hinge_b
        tc = time.perf_counter()
        y = np.asarray(compiled(t, x))
        control_time += time.perf_counter() - tc
        if tick == 0:  # the first command acts from t0 on: contact forces at t0 under it
            d.ctrl[:] = y[out_layout["ctrl"]][:nu]
            mujoco.mj_forward(m, d)
        if tick % save_every == 0:
            j = tick // save_every
            p, v, w_b = d.qpos[0:3], d.qvel[0:3], d.qvel[3:6]
            bad = (not (np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))) or
                   np.linalg.norm(p) > lim.max_position or np.linalg.norm(v) > lim.max_speed or
                   np.linalg.norm(w_b) > lim.max_rate or d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0 or
                   not np.all(np.isfinite(y)))
            if bad:
                diverged = True
                break
            rec["p"][j], rec["v"][j], rec["quat"][j], rec["omega"][j] = p, v, d.qpos[3:7], w_b
            rec["accel"][j], rec["angular_accel"][j] = d.qacc[0:3], d.qacc[3:6]
            rec["rotor_speed"][j] = np.abs(d.qvel[spin_adr]) if pm.options.spin else y[out_layout["motor_now"]]
            rec["alpha"][j], rec["beta"][j] = hinge_a, hinge_b
            rec["integral"][j] = x[in_layout["integral"]]
            rec["contact"][j] = contact_force(m, d)
            for name in ("u", "u_cmd", "req", "ach", "sat", "p_ref", "v_ref", "a_ref", "R_ref"):
                rec[name][j] = y[out_layout[name]]
            rec["motor"][j] = y[out_layout["motor_now"]]
            last = j
            if j == T - 1:
                break
        x[in_layout["motor"]] = y[out_layout["motor"]]
        x[in_layout["alpha"]] = y[out_layout["alpha"]]
        x[in_layout["beta"]] = y[out_layout["beta"]]
        x[in_layout["integral"]] = y[out_layout["integral"]]
        ctrl = y[out_layout["ctrl"]].reshape(k, nu)
        f_held = y[out_layout["f_ext"]]
        if wind is None:
            _apply_at_com(d, frame_id, com_offset_b, f_held)
            for row in ctrl:
                d.ctrl[:] = row
                for sl, dof, kp in servo_ff:
                    d.ctrl[sl] = row[sl] + _hinge_load(d, sl, dof) / kp
                mujoco.mj_step(m, d)
        else:
            air = air_mean + gusts[tick]
            for row in ctrl:
                d.ctrl[:] = row
                for sl, dof, kp in servo_ff:
                    d.ctrl[sl] = row[sl] + _hinge_load(d, sl, dof) / kp
                f = f_held + drag_force(d.qvel[0:3] - air, c_lin, c_quad, norm=np.linalg.norm)
                _apply_at_com(d, frame_id, com_offset_b, f)
                mujoco.mj_step(m, d)
    wall = time.perf_counter() - t_run
    if diverged:  # hold the last good sample
        for arr in rec.values():
            arr[last + 1:] = arr[last]

    def J(a, shape=None):
        a = jnp.asarray(a, dtype=dtype)
        return a if shape is None else a.reshape(shape)

    R = jax.vmap(so3.quat_to_rot)(J(rec["quat"]))
    integrals = jax.vmap(unravel_int)(J(rec["integral"]))
    flag_limits = divergence_flag(J(rec["p"]), J(rec["v"]), J(rec["omega"]), jnp.asarray(not diverged), lim)
    traj = Trajectory(
        t=J(times), p=J(rec["p"]), v=J(rec["v"]), R=R, omega=J(rec["omega"]), accel=J(rec["accel"]),
        angular_accel=J(rec["angular_accel"]), u=J(rec["u"]), u_cmd=J(rec["u_cmd"]), rotor_speed=J(rec["rotor_speed"]),
        alpha=J(rec["alpha"], (T,) + tuple(platform.alpha.shape)), beta=J(rec["beta"], (T,) + tuple(platform.beta.shape)),
        wrench_requested=J(rec["req"]), wrench_achieved=J(rec["ach"]), saturated=jnp.asarray(rec["sat"] > 0.5),
        p_ref=J(rec["p_ref"]), v_ref=J(rec["v_ref"]), a_ref=J(rec["a_ref"]), R_ref=J(rec["R_ref"], (T, 3, 3)),
        controller_state=integrals, diverged=jnp.asarray(bool(diverged) | bool(flag_limits)),
        solver_ok=jnp.asarray(not diverged), num_steps=jnp.asarray(min(n_ticks, (last) * save_every) * k),
    )
    return PhysicsResult(trajectory=traj, contact_force=J(rec["contact"]), motor_speed=J(rec["motor"]),
                         wall_time_s=wall, compile_time_s=compile_time, control_time_s=control_time)
