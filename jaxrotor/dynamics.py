"""Vehicle dynamics: Newton-Euler rigid body (eqs. 1-2, 11-12) with actuator lag.

State (:class:`VehicleState`): position ``p`` and velocity ``v`` in the world
frame, attitude ``R`` (body to world, stored as a 3x3 matrix), body angular
velocity ``omega``, rotor speeds ``omega_i`` and the current tilt angles.

    p_dot     = v                                             (1)
    R_dot     = R [omega]_x                                   (2)
    m v_dot   = -m g e_3 + R f_c + f_ext                      (11)
    J omega_dot = -omega x J omega + tau_c                    (12)

with ``f_c = F u`` and ``tau_c = M u`` (eq. 10). Actuators:

* motors: :class:`IdealMotor` applies the commanded ``u`` at once (the paper's
  analytic setup); :class:`FirstOrderMotor` is the differentiable lag
  ``omega_i_dot = (omega_cmd,i - omega_i) / tau_m`` with
  ``omega_cmd,i = clip(sqrt(u_cmd,i), rotor_speed_min, rotor_speed_max)`` and ``u_i = omega_i^2``;
* tilt servos: :class:`IdealServo` or :class:`FirstOrderServo`
  (``angle_dot = clip((angle_cmd - angle)/tau_s, -rate, rate)``).
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import ArrayLike, Float

from . import small, so3
from .aero import Aerodynamics, body_wrench
from ._util import as_float
from .numerics import safe_sqrt
from .allocation import hover_inputs, wrench
from .electrical import ElectricOutputs, EnergyState, electric_drive, missing_electrical_parts, top_speed
from .design.platform import AngleArray, Platform, rotor_axes
from .registry import REQUIRED, Option, register

__all__ = [
    "VehicleState",
    "AbstractCommand",
    "RotorCommand",
    "WrenchCommand",
    "AbstractMotor",
    "IdealMotor",
    "FirstOrderMotor",
    "ElectricMotor",
    "AbstractServo",
    "IdealServo",
    "FirstOrderServo",
    "Actuators",
    "initial_state",
    "rigid_body_derivative",
    "vehicle_derivative",
    "VehicleOutputs",
    "FaultState",
]


class VehicleState(eqx.Module):
    """The integrated state of one vehicle.

    Attributes:
        p: ``(3,)`` position of the centre of mass in the world frame [m].
        v: ``(3,)`` velocity in the world frame [m/s].
        R: ``(3, 3)`` attitude, body to world.
        omega: ``(3,)`` angular velocity in the body frame [rad/s].
        rotor_speed: ``(n,)`` rotor speeds ``omega_i`` [rad/s] (integrated only with a lagged motor).
        alpha: current cant angle(s) [rad], shape of ``platform.alpha`` (integrated only with a lagged servo).
        beta: current dihedral angle(s) [rad], shape of ``platform.beta``.
        energy: the battery's :class:`~jaxrotor.electrical.EnergyState` (state of charge and energy
            account) when the motor draws current from it (:meth:`AbstractMotor.draws_current`), else ``None``.
    """

    p: Float[Array, "3"]
    v: Float[Array, "3"]
    R: Float[Array, "3 3"]
    omega: Float[Array, "3"]
    rotor_speed: Float[Array, " n"]
    alpha: AngleArray
    beta: AngleArray
    energy: EnergyState | None = None


class FaultState(eqx.Module):
    """The rotors' faults at one instant (:mod:`jaxrotor.faults`).

    Attributes:
        effectiveness: ``(n,)`` thrust and drag effectiveness ``eta_i`` (applied ``eta_i u_i``).
        stuck: ``(n,)`` factor on each rotor's speed rate (0: stuck), or ``None``.
        servo: ``(n,)`` factor on each rotor's tilt-servo rate (0: stuck), or ``None``.
    """

    effectiveness: Float[Array, " n"]
    stuck: Float[Array, " n"] | None = None
    servo: Float[Array, " n"] | None = None

    @classmethod
    def at(cls, faults, n: int, t) -> "FaultState | None":
        """The state of ``faults`` (a :class:`jaxrotor.faults.Faults` or ``None``) at time ``t``."""
        if faults is None:
            return None
        from . import faults as F

        return cls(effectiveness=F.effectiveness(faults, n, t), stuck=F.stuck(faults, n, t),
                   servo=F.servo_stuck(faults, n, t))


def _frozen_angle(rate, factor):
    """A tilt rate times the per-rotor stuck factor (an angle set of one angle per rotor; others unchanged)."""
    return rate * factor if jnp.shape(rate) == jnp.shape(factor) else rate


class AbstractCommand(eqx.Module):
    """An input to the vehicle: it says how it reaches the rigid body (:meth:`actuate`).

    ``spins_rotors`` (class attribute): the command drives the rotors, so their spin inertia
    acts on the body (:func:`rotor_inertia_torque`); ``False`` for a command that bypasses them.
    """

    spins_rotors: ClassVar[bool] = True

    @abc.abstractmethod
    def actuate(self, platform: "Platform", actuators: "Actuators", state: "VehicleState",
                fault: "FaultState | None" = None):
        """Return ``(force_b (3,) [N], torque_b (3,) [N m], outputs, rates, electric)`` where ``outputs`` is
        ``(u, rotor_speed, alpha, beta)`` applied now, ``rates`` is ``(rotor_speed_dot, alpha_dot, beta_dot)``
        of the actuator states and ``electric`` is ``(energy_dot, electrical)``: the rate of
        ``state.energy`` and the :class:`~jaxrotor.electrical.ElectricOutputs` (both ``None`` unless the
        motor draws current from the battery). ``fault``: the :class:`FaultState` now (``None``: no faults)."""

    @abc.abstractmethod
    def commanded_inputs(self, n_like: Float[Array, " n"]) -> Float[Array, " n"]:
        """The commanded rotor inputs ``u_cmd`` ``(n,)`` [rad^2/s^2] (zeros if the command bypasses the rotors)."""


class RotorCommand(AbstractCommand):
    """Actuator command: rotor inputs ``u = omega^2`` ``(n,)`` [rad^2/s^2] and, for a
    tilting platform, tilt angles (shapes of ``platform.alpha``/``beta``, or ``None``
    to keep the platform's). Goes through the motor and servo models and ``G(alpha, beta) u`` (eq. 10)."""

    u: Float[Array, " n"]
    alpha: AngleArray | None = None
    beta: AngleArray | None = None

    def actuate(self, platform, actuators, state, fault: FaultState | None = None):
        motor = actuators.motor
        if motor.draws_current():  # static: the battery's state and the electrical chain
            u, speed, speed_dot, energy_dot, electrical = motor.applied_electric(platform, state.rotor_speed,
                                                                                 state.energy, self.u)
        else:
            (u, speed, speed_dot), energy_dot, electrical = motor.applied(platform, state.rotor_speed, self.u), None, None
        alpha, alpha_dot = _tilt(platform, actuators, "alpha", state.alpha, self.alpha)
        beta, beta_dot = _tilt(platform, actuators, "beta", state.beta, self.beta)
        u_eff = u
        if fault is not None:  # static: a flight with faults
            u_eff = fault.effectiveness * u
            if fault.stuck is not None:
                speed_dot = fault.stuck * speed_dot
            if fault.servo is not None:
                alpha_dot = _frozen_angle(alpha_dot, fault.servo)
                beta_dot = _frozen_angle(beta_dot, fault.servo)
        force_b, torque_b = wrench(platform, u_eff, alpha, beta)
        return (force_b, torque_b, (u, speed, alpha, beta), (speed_dot, alpha_dot, beta_dot),
                (energy_dot, electrical))

    def commanded_inputs(self, n_like: Float[Array, " n"]) -> Float[Array, " n"]:
        return self.u


class WrenchCommand(AbstractCommand):
    """Direct body-wrench input ``(f_c, tau_c)``, each ``(3,)`` [N], [N m], body frame.

    Bypasses the rotors (the paper's block with wrench inputs)."""

    spins_rotors: ClassVar[bool] = False
    force: Float[Array, "3"]
    torque: Float[Array, "3"]

    def actuate(self, platform, actuators, state, fault: FaultState | None = None):
        zeros = jnp.zeros_like(state.rotor_speed)
        alpha, alpha_dot = _tilt(platform, actuators, "alpha", state.alpha, None)
        beta, beta_dot = _tilt(platform, actuators, "beta", state.beta, None)
        energy_dot = None if state.energy is None else jax.tree_util.tree_map(jnp.zeros_like, state.energy)
        return (self.force, self.torque, (zeros, state.rotor_speed, alpha, beta), (zeros, alpha_dot, beta_dot),
                (energy_dot, None))

    def commanded_inputs(self, n_like: Float[Array, " n"]) -> Float[Array, " n"]:
        return jnp.zeros_like(n_like)


def initial_state(
    platform: Platform,
    p: Float[ArrayLike, "3"] | None = None,
    R: Float[ArrayLike, "3 3"] | Float[ArrayLike, "4"] | None = None,
    v: Float[ArrayLike, "3"] | None = None,
    omega: Float[ArrayLike, "3"] | None = None,
    rotor_speed: Float[ArrayLike, " n"] | str | None = None,
) -> VehicleState:
    """Initial conditions; every omitted quantity is zero (identity attitude).

    Args:
        platform: the design (sets ``n`` and the initial tilt angles).
        p: ``(3,)`` world position [m].
        R: ``(3, 3)`` attitude (body to world) or ``(4,)`` quaternion ``(w, x, y, z)``.
        v: ``(3,)`` world velocity [m/s].
        omega: ``(3,)`` body rate [rad/s].
        rotor_speed: ``(n,)`` [rad/s] or ``"hover"`` for the minimum-norm hover speeds.
    """
    dtype = platform.mass.dtype
    z3 = jnp.zeros(3, dtype=dtype)
    R_arr = jnp.eye(3, dtype=dtype) if R is None else jnp.asarray(R, dtype=dtype)
    if R_arr.shape == (4,):
        R_arr = so3.quat_to_rot(R_arr)
    if isinstance(rotor_speed, str):
        if rotor_speed != "hover":
            raise ValueError(f"initial_state: `rotor_speed` = {rotor_speed!r} is invalid. Fix: pass an array or 'hover'.")
        rs = safe_sqrt(hover_inputs(platform))
    elif rotor_speed is None:
        rs = jnp.zeros(platform.n_rotors, dtype=dtype)
    else:
        rs = jnp.asarray(rotor_speed, dtype=dtype)
    return VehicleState(
        p=z3 if p is None else jnp.asarray(p, dtype=dtype),
        v=z3 if v is None else jnp.asarray(v, dtype=dtype),
        R=R_arr,
        omega=z3 if omega is None else jnp.asarray(omega, dtype=dtype),
        rotor_speed=rs,
        alpha=platform.alpha,
        beta=platform.beta,
    )


# --------------------------------------------------------------------------- actuators


def _check_positive(owner: str, name: str, value: Array, fix: str) -> None:
    """Raise a ValueError naming ``owner.name`` unless a concrete ``value`` is finite and > 0."""
    if isinstance(value, jax.core.Tracer):
        return
    v = np.asarray(value, dtype=float)
    if not (np.all(np.isfinite(v)) and np.all(v > 0)):
        raise ValueError(f"{owner} parameter `{name}` = {v.tolist()!r} is invalid: it must be finite and > 0. Fix: {fix}.")


def _as_param(owner: str, name: str, value) -> Array:
    """``value`` as a float array, or a ValueError naming ``owner.name`` if it is not numeric."""
    try:
        return as_float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{owner} parameter `{name}` = {value!r} is invalid: not a number. Fix: pass a number "
                         "in SI units.") from None


class AbstractMotor(eqx.Module):
    """Rotor-speed actuator model: maps a commanded ``u`` to the applied ``u``, the rotor speeds and their rate.

    A motor with a state integrates ``rotor_speed`` (returns a non-zero rate and
    reports the state as the speed); a motor without one reports the speed
    ``sqrt(u)`` of what it applies and a zero rate. Either way the loop asks the
    model, so a user-written motor works unchanged.

    The physics layer asks :meth:`speed_time_constant`: a motor that is a first-order speed
    controller (a time constant) is flown there as the spinning propeller itself (a velocity
    servo of gain ``I_spin / tau_m`` on the propeller hinge towards :meth:`commanded_speed`,
    torque-limited by :meth:`torque_limit`); any other motor is stepped as a model beside the engine.
    """

    @abc.abstractmethod
    def applied(self, platform: Platform, rotor_speed: Float[Array, " n"], u_cmd: Float[Array, " n"]
                ) -> tuple[Float[Array, " n"], Float[Array, " n"], Float[Array, " n"]]:
        """Return ``(u_applied (n,) [rad^2/s^2], rotor_speed (n,) [rad/s], rotor_speed_dot (n,) [rad/s^2])``."""

    def with_lag_scaled(self, factor) -> AbstractMotor:
        """This motor with its lag (time constant) times ``factor`` (a motor without lag returns itself)."""
        return self

    def integrates_speed(self) -> bool:
        """Whether the rotor speed is a state this motor integrates (its rate is the rotor
        acceleration the rotor-inertia reaction needs). Default ``True``."""
        return True

    def speed_time_constant(self) -> Float[Array, ""] | None:
        """``tau_m`` [s] when this motor is a first-order speed controller
        (``omega_dot = (commanded_speed - omega) / tau_m``, up to :meth:`torque_limit`), else ``None``
        (the default). The physics layer then lets the engine spin each propeller as that motor."""
        return None

    def lag_time_constant(self) -> Float[Array, ""] | None:
        """The motor's speed lag [s] the gain design accounts for (:func:`jaxrotor.gains.auto_gains`): by default
        :meth:`speed_time_constant` (``None``: no lag)."""
        return self.speed_time_constant()

    def commanded_speed(self, platform: Platform, u_cmd: Float[Array, " n"]) -> Float[Array, " n"]:
        """The speed the motor drives towards, ``clip(sqrt(max(u_cmd, 0)), rotor_speed_min, rotor_speed_max)``
        ``(n,)`` [rad/s]."""
        return jnp.clip(safe_sqrt(u_cmd), platform.rotor_speed_min, platform.rotor_speed_max)

    def torque_limit(self, platform: Platform) -> Float[Array, " n"] | None:
        """The largest motor torque ``tau_max`` ``(n,)`` [N m] when the motor is current-limited, else ``None``
        (the default). The torque accelerating the rotor is then at most ``tau_max - c_tau omega^2``."""
        return None

    def check_platform(self, platform: Platform) -> None:
        """Refuse, by name, a platform this motor cannot drive (default: every platform is fine)."""
        return None

    def draws_current(self) -> bool:
        """Whether this motor draws its power from the platform's battery, whose state the plant then
        integrates (``VehicleState.energy``) through :meth:`applied_electric` (default ``False``)."""
        return False

    def initial_energy(self, platform: Platform) -> EnergyState | None:
        """The battery's state at take-off for a motor that :meth:`draws_current` (default ``None``)."""
        return None

    def supply_limited(self, platform: Platform, state: VehicleState) -> Platform:
        """The platform as the allocator sees it now: a motor whose top speed follows the battery replaces
        ``rotor_speed_max`` by what the battery in ``state`` allows (default: ``platform`` unchanged)."""
        return platform

    def applied_electric(self, platform: Platform, rotor_speed: Float[Array, " n"], energy: EnergyState | None,
                         u_cmd: Float[Array, " n"]):
        """For a motor that :meth:`draws_current`: ``(u, rotor_speed, rotor_speed_dot, energy_dot, electrical)``,
        :meth:`applied` plus the rate of the battery's :class:`~jaxrotor.electrical.EnergyState` and the
        :class:`~jaxrotor.electrical.ElectricOutputs`."""
        raise NotImplementedError(f"{type(self).__name__} draws no current from a battery")


@register("motor", "ideal")
class IdealMotor(AbstractMotor):
    """No lag and no bounds: ``u = u_cmd`` instantly, even if negative (the paper's analytic setup).

    ``rotor_speed`` is not integrated (derivative zero); reported speeds are ``sqrt(max(u, 0))``.
    """

    def applied(self, platform: Platform, rotor_speed: Float[Array, " n"], u_cmd: Float[Array, " n"]
                ) -> tuple[Float[Array, " n"], Float[Array, " n"], Float[Array, " n"]]:
        return u_cmd, safe_sqrt(u_cmd), jnp.zeros_like(rotor_speed)

    def integrates_speed(self) -> bool:
        """``False``: the speed follows the command instantly (no rotor acceleration to react to)."""
        return False


@register("motor", "first_order", options={
    "time_constant": Option(float, default=REQUIRED, gt=0, unit="s", doc="motor time constant tau_m",
                            fix="the motor time constant in s, e.g. 0.03"),
    "current_limit": Option(bool, default=False, doc="limit the motor torque to k_t (I_max - I_0) (needs parts "
                            "with a motor kv and max_current)", fix="true or false")})
class FirstOrderMotor(AbstractMotor):
    """First-order rotor-speed lag with speed limits and an optional current limit.

    ``omega_cmd = clip(sqrt(max(u_cmd, 0)), rotor_speed_min, rotor_speed_max)``,
    ``omega_dot = (omega_cmd - omega) / time_constant``, applied ``u = omega^2``.

    With ``current_limit`` the motor torque is at most ``tau_max = k_t (I_max - I_0)``
    (``k_t = 1 / K_v`` in SI, N m/A, from the platform's parts: ``motor.kv``, ``max_current``,
    ``no_load_current``); the torque that accelerates the rotor is what the propeller's drag
    ``c_tau omega^2`` leaves of it, so ``omega_dot = min((omega_cmd - omega) / tau_m,
    (tau_max - c_tau omega^2) / J_r)`` (an exact minimum, as the engine's clamped servo torque;
    braking is not limited).

    Attributes:
        time_constant: ``tau_m`` [s], scalar leaf (differentiable).
        current_limit: limit the motor torque by the current (static).
    """

    time_constant: Array
    current_limit: bool = eqx.field(static=True)

    def __init__(self, time_constant: float | Array = 0.03, current_limit: bool = False):
        tc = _as_param("FirstOrderMotor", "time_constant", time_constant)
        if tc.ndim != 0:
            raise ValueError(f"FirstOrderMotor parameter `time_constant` must be a scalar, got shape {tc.shape}. "
                             "Fix: pass one time constant in seconds.")
        _check_positive("FirstOrderMotor", "time_constant", tc, "pass e.g. 0.03 (30 ms), or use IdealMotor() for no lag")
        if not isinstance(current_limit, (bool, np.bool_)):
            raise ValueError(f"FirstOrderMotor parameter `current_limit` = {current_limit!r} is invalid: it must be "
                             "True or False. Fix: pass current_limit=True to limit the motor torque by its current.")
        self.time_constant = tc
        self.current_limit = bool(current_limit)

    def with_lag_scaled(self, factor) -> FirstOrderMotor:
        """``tau_m -> factor tau_m``."""
        return eqx.tree_at(lambda m: m.time_constant, self, self.time_constant * factor)

    def speed_time_constant(self) -> Float[Array, ""]:
        """``tau_m`` [s]: this motor is a first-order speed controller."""
        return self.time_constant

    def check_platform(self, platform: Platform) -> None:
        """With ``current_limit``: refuse a platform without parts, a motor ``kv``, a finite ``max_current`` or a
        rotor inertia, by name."""
        if not self.current_limit:
            return
        parts = platform.parts
        motor = None if parts is None else parts.motor
        if parts is None or motor.kv is None:
            what = "has no parts" if parts is None else "has parts whose motor has no `kv`"
            raise ValueError(f"FirstOrderMotor parameter `current_limit` = True needs the motor's kv and max_current, "
                             f"but platform `{platform.name}` {what}. Fix: build the platform from parts with "
                             "[parts.motor] kv and max_current, or set current_limit = false.")
        from .design.validation import is_concrete

        if is_concrete(motor.max_current) and not np.isfinite(np.asarray(motor.max_current)):
            raise ValueError(f"FirstOrderMotor parameter `current_limit` = True needs a finite motor max_current, but "
                             f"platform `{platform.name}`'s motor has max_current = inf. Fix: give [parts.motor] "
                             "max_current (A), or set current_limit = false.")
        if platform.rotor_inertia is None:
            raise ValueError(f"FirstOrderMotor parameter `current_limit` = True limits the rotor's acceleration by its "
                             f"spin inertia, but platform `{platform.name}` has no rotor_inertia. Fix: give the "
                             "propeller a mass (the parts derive J_r) or rotor_inertia, or set current_limit = false.")

    def torque_limit(self, platform: Platform) -> Float[Array, " n"] | None:
        """``tau_max = (I_max - I_0) / K_v`` ``(n,)`` [N m] (``K_v`` in rad/s/V) with ``current_limit``, else ``None``."""
        if not self.current_limit:
            return None
        self.check_platform(platform)
        motor = platform.parts.motor
        tau = (motor.max_current - motor.no_load_current) / motor.kv_si
        return jnp.broadcast_to(tau, (platform.n_rotors,)).astype(platform.mass.dtype)

    def applied(self, platform: Platform, rotor_speed: Float[Array, " n"], u_cmd: Float[Array, " n"]
                ) -> tuple[Float[Array, " n"], Float[Array, " n"], Float[Array, " n"]]:
        w_cmd = self.commanded_speed(platform, u_cmd)
        w_dot = (w_cmd - rotor_speed) / self.time_constant
        tau_max = self.torque_limit(platform)
        if tau_max is not None:
            w_dot = jnp.minimum(w_dot, (tau_max - platform.c_tau * rotor_speed**2) / platform.J_r)
        return rotor_speed**2, rotor_speed, w_dot


@register("motor", "electric", options={
    "speed_bandwidth": Option(float, default=1 / 0.03, gt=0, unit="rad/s", doc="speed-controller bandwidth lambda "
                              "(the first-order motor's 1/tau_m)", fix="the bandwidth in rad/s, e.g. 200.0")})
class ElectricMotor(AbstractMotor):
    """A speed-controlled brushless motor on the platform's battery, with its ESC (:mod:`jaxrotor.electrical`).

    Per rotor, with ``K_v`` [rad/s/V], ``k_t = 1/K_v``, winding resistance ``R``, no-load current ``I_0``:
    the speed controller of bandwidth ``lambda`` asks for ``Q_cmd = c_tau omega^2 + J_r lambda (omega_cmd -
    omega)``, i.e. ``I_cmd = K_v Q_cmd + I_0``; the current is that, clipped to ``|I| <= max_current`` and to
    ``|V_m| <= V_t`` (the motor's voltage ``V_m = R I + omega/K_v`` at most the battery's terminal voltage
    ``V_t`` either way, driving or braking); the rotor turns as ``J_r omega_dot = k_t (I - I_0) - c_tau omega^2``. With no limit active this
    is :class:`FirstOrderMotor` with ``tau_m = 1/lambda``. ``omega_cmd = clip(sqrt(u_cmd), rotor_speed_min,
    rotor_speed_max)``. The battery (``VehicleState.energy``): ``dSoC/dt = -I_b/Q_cap``,
    ``V_t = cells ocv(SoC) - R_int I_b``, ``V_t I_b = sum_i V_m,i I_i / eta`` (:func:`jaxrotor.electrical.electric_drive`);
    the allocator's top speed follows the battery (:meth:`supply_limited`).

    Needs a platform from parts with a motor ``kv``, a battery and a rotor inertia ``J_r > 0``.

    Attributes:
        speed_bandwidth: ``()`` ``lambda`` [rad/s] (default ``1/0.03``).
    """

    speed_bandwidth: Array

    def __init__(self, speed_bandwidth: float | Array = 1 / 0.03):
        bw = _as_param("ElectricMotor", "speed_bandwidth", speed_bandwidth)
        if bw.ndim != 0:
            raise ValueError(f"ElectricMotor parameter `speed_bandwidth` must be a scalar, got shape {bw.shape}. "
                             "Fix: pass one bandwidth in rad/s.")
        _check_positive("ElectricMotor", "speed_bandwidth", bw, "pass e.g. 200.0 rad/s")
        self.speed_bandwidth = bw

    def with_lag_scaled(self, factor) -> ElectricMotor:
        """``lambda -> lambda / factor`` (the lag ``1/lambda`` times ``factor``)."""
        return eqx.tree_at(lambda m: m.speed_bandwidth, self, self.speed_bandwidth / factor)

    def draws_current(self) -> bool:
        """``True``."""
        return True

    def lag_time_constant(self) -> Float[Array, ""]:
        """``1/lambda`` [s]: below its limits the motor is the first-order lag of that time constant."""
        return 1 / self.speed_bandwidth

    def check_platform(self, platform: Platform) -> None:
        """Refuse a platform without a motor ``kv``, a battery or a rotor inertia, by name."""
        what = missing_electrical_parts(platform)
        if what is not None:
            raise ValueError(f"ElectricMotor (motor kind \"electric\") draws current from the platform's battery, but "
                             f"platform `{platform.name}` {what}. Fix: build the platform from parts with [parts.motor] "
                             "kv, resistance, no_load_current, max_current and a [parts.battery], or fly kind = "
                             "\"first_order\".")
        if platform.rotor_inertia is None:
            raise ValueError(f"ElectricMotor (motor kind \"electric\") turns the rotor by its torque, "
                             f"J_r omega_dot = k_t (I - I_0) - c_tau omega^2, but platform `{platform.name}` has no "
                             "rotor_inertia. Fix: give the propeller a mass (the parts derive J_r) or rotor_inertia.")
        from .design.validation import is_concrete

        if is_concrete(platform.rotor_inertia) and not np.all(np.asarray(platform.rotor_inertia) > 0):
            raise ValueError(f"ElectricMotor (motor kind \"electric\") needs a rotor inertia > 0, but platform "
                             f"`{platform.name}` has rotor_inertia = {np.asarray(platform.rotor_inertia).tolist()}. "
                             "Fix: give the propeller and the motor's bell a mass.")

    def initial_energy(self, platform: Platform) -> EnergyState:
        """``soc = battery.soc0``, no energy spent yet."""
        self.check_platform(platform)
        b = platform.parts.battery
        dt = platform.mass.dtype
        return EnergyState(soc=jnp.asarray(b.soc0, dt), work=jnp.zeros(6, dt))

    def supply_limited(self, platform: Platform, state: VehicleState) -> Platform:
        """``rotor_speed_max`` replaced by :func:`jaxrotor.electrical.top_speed` at the battery's state of charge
        (the state's, or ``soc0`` without one)."""
        soc = platform.parts.battery.soc0 if state.energy is None else state.energy.soc
        w = jnp.broadcast_to(top_speed(platform, soc), platform.rotor_speed_max.shape)
        return eqx.tree_at(lambda p: p.rotor_speed_max, platform, w.astype(platform.rotor_speed_max.dtype))

    def applied_electric(self, platform, rotor_speed, energy, u_cmd):
        """:func:`jaxrotor.electrical.electric_drive` at the state of charge of ``energy`` (``soc0`` when ``None``:
        the battery held at take-off, and ``energy_dot`` is ``None``)."""
        soc = platform.parts.battery.soc0 if energy is None else energy.soc
        w_dot, rates, out = electric_drive(platform, rotor_speed, self.commanded_speed(platform, u_cmd), soc,
                                           self.speed_bandwidth)
        return rotor_speed**2, rotor_speed, w_dot, (None if energy is None else rates), out

    def applied(self, platform: Platform, rotor_speed: Float[Array, " n"], u_cmd: Float[Array, " n"]
                ) -> tuple[Float[Array, " n"], Float[Array, " n"], Float[Array, " n"]]:
        """The motor on a battery held at ``soc0`` (:meth:`applied_electric` without a battery state)."""
        return self.applied_electric(platform, rotor_speed, None, u_cmd)[:3]


class AbstractServo(eqx.Module):
    """Tilt-servo model for tilting platforms."""

    @abc.abstractmethod
    def applied(self, current: AngleArray, command: AngleArray) -> tuple[AngleArray, AngleArray]:
        """Return ``(angle_applied, angle_dot)`` [rad, rad/s] for one angle set.

        ``current`` is the integrated servo state, ``command`` the commanded angle; a
        servo without lag applies the command (zero rate), a lagged one applies its state.
        """

    def max_rate(self):
        """The largest angle rate the servo can move at [rad/s] (``None``: unbounded, the default)."""
        return None


@register("servo", "ideal")
class IdealServo(AbstractServo):
    """The tilt angles follow the command instantly."""

    def applied(self, current: AngleArray, command: AngleArray) -> tuple[AngleArray, AngleArray]:
        return command, jnp.zeros_like(current)


@register("servo", "first_order", options={
    "time_constant": Option(float, gt=0, unit="s", doc="servo time constant tau_s", fix="the servo time constant in s"),
    "rate_limit": Option(float, gt=0, unit="rad/s", doc="largest angle rate", fix="the servo rate limit in rad/s")})
class FirstOrderServo(AbstractServo):
    """First-order tilt servo with a rate limit:
    ``angle_dot = clip((command - angle) / time_constant, -rate_limit, rate_limit)``.

    Attributes:
        time_constant: ``tau_s`` [s].
        rate_limit: largest ``|angle_dot|`` [rad/s].
    """

    time_constant: Array
    rate_limit: Array

    def __init__(self, time_constant: float | Array = 0.05, rate_limit: float | Array = 6.0):
        self.time_constant = _as_param("FirstOrderServo", "time_constant", time_constant)
        self.rate_limit = _as_param("FirstOrderServo", "rate_limit", rate_limit)
        _check_positive("FirstOrderServo", "time_constant", self.time_constant, "pass e.g. 0.05 s")
        _check_positive("FirstOrderServo", "rate_limit", self.rate_limit, "pass e.g. 6.0 rad/s")

    def max_rate(self):
        """``rate_limit`` [rad/s]."""
        return self.rate_limit

    def applied(self, current: AngleArray, command: AngleArray) -> tuple[AngleArray, AngleArray]:
        rate = jnp.clip((command - current) / self.time_constant, -self.rate_limit, self.rate_limit)
        return current, rate


class Actuators(eqx.Module):
    """Motor and tilt-servo models. Default: ideal (the paper's analytic setup)."""

    motor: AbstractMotor = IdealMotor()
    servo: AbstractServo = IdealServo()


class VehicleOutputs(eqx.Module):
    """Quantities beyond the state at one instant.

    Attributes:
        accel: ``(3,)`` linear acceleration ``p_ddot`` in the world frame [m/s^2].
        angular_accel: ``(3,)`` ``omega_dot`` in the body frame [rad/s^2].
        u: ``(n,)`` applied inputs [rad^2/s^2].
        rotor_speed: ``(n,)`` rotor speeds [rad/s].
        force: ``(3,)`` applied control force ``f_c`` (body frame) [N].
        torque: ``(3,)`` applied control moment ``tau_c`` (body frame) [N m].
        alpha: applied cant angle(s) [rad], shape of ``platform.alpha``.
        beta: applied dihedral angle(s) [rad], shape of ``platform.beta``.
        electrical: the :class:`~jaxrotor.electrical.ElectricOutputs` of an electric motor, else ``None``.
    """

    accel: Float[Array, "3"]
    angular_accel: Float[Array, "3"]
    u: Float[Array, " n"]
    rotor_speed: Float[Array, " n"]
    force: Float[Array, "3"]
    torque: Float[Array, "3"]
    alpha: AngleArray
    beta: AngleArray
    electrical: ElectricOutputs | None = None


# --------------------------------------------------------------------------- vector field


def rigid_body_derivative(
    platform: Platform,
    state: VehicleState,
    force_b: Float[Array, "3"],
    torque_b: Float[Array, "3"],
    force_ext_w: Float[Array, "3"] | None = None,
) -> tuple[Float[Array, "3"], Float[Array, "3"], Float[Array, "3 3"], Float[Array, "3"]]:
    """Newton-Euler equations (1), (2), (11), (12).

    Args:
        platform: supplies ``m``, ``J``, ``g``.
        state: current state (uses ``v``, ``R``, ``omega``).
        force_b: ``(3,)`` control force in the body frame [N].
        torque_b: ``(3,)`` control moment about the centre of mass, body frame [N m].
        force_ext_w: optional ``(3,)`` external force in the world frame [N] (disturbance, drag).

    Returns:
        ``(p_dot, v_dot, R_dot, omega_dot)``.
    """
    g_w = jnp.zeros(3, dtype=force_b.dtype).at[2].set(-platform.gravity)
    v_dot = g_w + small.mv(state.R, force_b) / platform.mass
    if force_ext_w is not None:
        v_dot = v_dot + force_ext_w / platform.mass
    R_dot = small.mm(state.R, so3.hat(state.omega))
    J = platform.inertia
    # inv(J) rather than solve(J, .): J is constant during a solve, so XLA hoists the inverse out of the loop
    omega_dot = small.mv(jnp.linalg.inv(J), torque_b - jnp.cross(state.omega, small.mv(J, state.omega)))
    return state.v, v_dot, R_dot, omega_dot


def rotor_inertia_torque(platform: Platform, omega: Float[Array, "3"], rotor_speed: Float[Array, " n"],
                         rotor_speed_dot: Float[Array, " n"], alpha: AngleArray, beta: AngleArray,
                         alpha_dot: AngleArray, beta_dot: AngleArray) -> Float[Array, "3"]:
    """Torque of the spinning rotors on the body [N m], body frame: gyroscopic plus reaction terms.

    With ``s_i = -kappa_i`` the spin sign (a counter-clockwise rotor, ``kappa_i = -1``, spins
    about ``+z_i``), ``J_r,i`` the rotor spin inertia (``platform.J_r``) and
    ``h = sum_i J_r,i s_i omega_i z_i`` the rotors' angular momentum relative to the body,
    the body's Euler equation ``J omega_dot = M u - omega x (J omega + h) - dh/dt|_B`` gives

        ``tau_r = -omega x h - sum_i J_r,i s_i (omega_dot_i z_i + omega_i z_dot_i)``,

    ``omega_dot_i`` the rotor acceleration (from the motor model) and ``z_dot_i`` the axis
    rate of a tilting rotor (``d z_i / d(alpha, beta)`` times the servo rates). The drag
    torque ``kappa_i c_tau,i omega_i^2 z_i`` is already in ``M u`` (eq. 6). Zero for
    ``J_r = 0``.

    Args:
        platform: ``J_r``, ``kappa`` and the geometry.
        omega: ``(3,)`` body rate [rad/s].
        rotor_speed: ``(n,)`` ``omega_i`` [rad/s]. rotor_speed_dot: ``(n,)`` [rad/s^2].
        alpha, beta: applied tilt angles [rad]. alpha_dot, beta_dot: their rates [rad/s].

    Returns:
        ``(3,)`` torque about the centre of mass [N m].
    """
    Jr_s = platform.J_r * (-platform.kappa)
    if platform.is_tilting:
        z, z_dot = jax.jvp(lambda a, b: rotor_axes(platform, a, b), (alpha, beta), (alpha_dot, beta_dot))
    else:
        z, z_dot = rotor_axes(platform, alpha, beta), None
    h = small.mtv(z, Jr_s * rotor_speed)
    dh = small.mtv(z, Jr_s * rotor_speed_dot)
    if z_dot is not None:
        dh = dh + small.mtv(z_dot, Jr_s * rotor_speed)
    return -jnp.cross(omega, h) - dh


def check_rotor_inertia(platform: Platform, actuators: Actuators) -> None:
    """Refuse rotor inertia under a motor that does not integrate the rotor speed.

    The reaction ``J_r,i omega_dot_i`` of :func:`rotor_inertia_torque` needs the rotor
    acceleration, which only a motor with a speed state gives (an ideal motor jumps).

    Raises:
        ValueError: ``platform.J_r > 0`` (concrete) and ``actuators.motor.integrates_speed()`` is False.
    """
    if platform.rotor_inertia is None or actuators.motor.integrates_speed():
        return
    from .design.validation import is_concrete

    if is_concrete(platform.rotor_inertia) and np.any(np.asarray(platform.rotor_inertia) > 0):
        raise ValueError(
            f"Platform parameter `rotor_inertia` = {np.asarray(platform.rotor_inertia).max():.4g} kg m^2 (from "
            f"{'the parts' if 'rotor_inertia' not in platform.overrides else 'the config'}) needs a motor with a "
            f"speed state, but the motor is {type(actuators.motor).__name__} (the rotor speed jumps with the command, "
            "so the spin-up reaction J_r omega_dot is undefined). Fix: fly a first-order motor ([actuators.motor] "
            "kind = \"first_order\", e.g. time_constant = 0.03), or set rotor_inertia = 0.")


def vehicle_derivative(
    platform: Platform,
    actuators: Actuators,
    state: VehicleState,
    command: AbstractCommand,
    force_ext_w: Float[Array, "3"] | None = None,
    fault: FaultState | None = None,
    aero: Aerodynamics | None = None,
    air: Float[Array, "3"] | None = None,
) -> tuple[VehicleState, VehicleOutputs]:
    """Time derivative of the vehicle state under an actuator command.

    The command says how it reaches the body (:meth:`AbstractCommand.actuate`): a
    :class:`RotorCommand` goes through the motor (and servo) models and
    ``G(alpha, beta) u``; a :class:`WrenchCommand` is applied directly. ``fault`` (a :class:`FaultState`)
    scales each rotor's thrust and drag by its effectiveness and freezes a stuck rotor or servo.
    ``aero`` (a :class:`~jaxrotor.aero.Aerodynamics`) adds the rotors' and the body's aerodynamic wrench
    (:func:`jaxrotor.aero.body_wrench`) at the rotor speeds and angles applied, in the air moving at ``air``
    ``(3,)`` [m/s] (world frame; still air when ``None``); ``VehicleOutputs.force`` / ``torque`` stay the
    rotors' eq. (10) wrench.

    Returns:
        ``(state_dot, outputs)``.
    """
    force_b, torque_b, (u, speed, alpha, beta), (speed_dot, alpha_dot, beta_dot), (energy_dot, electrical) = \
        command.actuate(platform, actuators, state, fault)
    torque_body = torque_b
    force_body = force_b
    if aero is not None and command.spins_rotors:  # static: no aerodynamics, today's model exactly
        air_w = jnp.zeros(3, state.p.dtype) if air is None else air
        f_a, tau_a = body_wrench(aero, platform, state.p, state.R, state.v, state.omega, speed, alpha, beta, air_w,
                                 thrust=platform.c_f * u, effectiveness=None if fault is None else fault.effectiveness)
        force_body, torque_body = force_b + f_a, torque_b + tau_a
    if command.spins_rotors and platform.rotor_inertia is not None:  # static: no J_r, today's model exactly
        torque_body = torque_body + rotor_inertia_torque(platform, state.omega, speed, speed_dot, alpha, beta,
                                                      alpha_dot, beta_dot)
    p_dot, v_dot, R_dot, omega_dot = rigid_body_derivative(platform, state, force_body, torque_body, force_ext_w)
    d = VehicleState(p=p_dot, v=v_dot, R=R_dot, omega=omega_dot, rotor_speed=speed_dot, alpha=alpha_dot, beta=beta_dot,
                     energy=energy_dot)
    out = VehicleOutputs(accel=v_dot, angular_accel=omega_dot, u=u, rotor_speed=speed, force=force_b, torque=torque_b,
                         alpha=alpha, beta=beta, electrical=electrical)
    return d, out


def _tilt(platform, actuators, key, current, command):
    """Applied angle and its derivative for one angle set (static choice by ``platform.tilting``).

    An angle set that is not servo-actuated (``key not in platform.tilting``) is a
    fixed design parameter: the platform's own value is applied (so gradients with
    respect to ``platform.alpha``/``beta`` flow, whatever the state carries). A
    tilting set with no command keeps its current (state) value.
    """
    if key not in platform.tilting:
        return getattr(platform, key), jnp.zeros_like(current)
    if command is None:
        return current, jnp.zeros_like(current)
    return actuators.servo.applied(current, jnp.broadcast_to(command, current.shape))
