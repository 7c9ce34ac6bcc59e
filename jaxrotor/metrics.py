"""Every metric of a flight, from its :class:`~jaxrotor.trajectory.Trajectory` (eqs. 14-15, Table IV).

One place for each formula: the objectives of :mod:`jaxrotor.optimize.objectives`,
``metrics.json`` (``jaxrotor simulate``), ``result.json`` (``jaxrotor tune`` /
``optimize``) and the experiments all call the functions below, and
:func:`flight_metrics` gathers them into one :class:`FlightMetrics`.

* position error ``e_p = p_r - p`` (eq. 14), world frame [m];
* orientation error ``e_R = 1/2 (R_c^T R - R^T R_c)^vee`` [rad]
  (:func:`jaxrotor.so3.attitude_error`, eq. 15 as read by jaxrotor) against the attitude
  the controller commands, ``R_c = Trajectory.R_cmd``
  (:meth:`~jaxrotor.control.AbstractController.commanded_attitude`): the reference
  attitude ``R_r`` for a fully actuated controller (eq. 15 exactly), the desired attitude
  from the desired thrust direction and the heading for an under-actuated one (whose
  error against the level ``R_r`` is the tilt it needs to accelerate, not a tracking
  error). The error against ``R_r`` itself is :func:`reference_orientation_error`.

Naming: a key ending in ``_xyz`` is per component ``(3,)``; without it the same
statistic of the Euclidean norm ``|e|`` (a scalar). Time means are trapezoidal
over the save grid. Every function is pure, differentiable and NaN-safe at zero
error, and works under ``vmap``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import Float

from .design.platform import Platform
from .numerics import safe_norm, safe_sqrt, time_integral, time_mean
from .so3 import attitude_error
from .trajectory import Trajectory

__all__ = [
    "position_error",
    "ELECTRICAL_KEYS",
    "ElectricalMetrics",
    "electrical_metrics",
    "orientation_error",
    "reference_orientation_error",
    "mae",
    "rmse",
    "max_abs",
    "rms_norm",
    "mean_norm",
    "thrust_impulse",
    "effort_ratio",
    "rotor_power",
    "reference_power",
    "speed_margin",
    "saturation_margin",
    "tilt_summary",
    "servo_saturation_fraction",
    "FlightMetrics",
    "flight_metrics",
]


def position_error(traj: Trajectory) -> Float[Array, "T 3"]:
    """``(T, 3)`` ``e_p = p_r - p`` (eq. 14) [m], world frame."""
    return traj.p_ref - traj.p


def orientation_error(traj: Trajectory) -> Float[Array, "T 3"]:
    """``(T, 3)`` ``e_R = 1/2 (R_c^T R - R^T R_c)^vee`` [rad], body frame, against the commanded attitude.

    ``R_c = traj.R_cmd`` (the attitude the controller steers to, module docstring); a trajectory
    without ``R_cmd`` (``None``) is measured against ``traj.R_ref``. For a controller that tracks
    the reference attitude the two are the same: eq. (15) as read here.
    """
    R_c = traj.R_ref if traj.R_cmd is None else traj.R_cmd
    return jax.vmap(attitude_error)(traj.R, R_c)


def reference_orientation_error(traj: Trajectory) -> Float[Array, "T 3"]:
    """``(T, 3)`` ``e_R = 1/2 (R_r^T R - R^T R_r)^vee`` [rad], body frame, against the reference attitude ``traj.R_ref``.

    For an under-actuated vehicle this includes the tilt it needs to follow the path (``R_r`` is
    level with the heading), so it does not go to zero however well the vehicle flies.
    """
    return jax.vmap(attitude_error)(traj.R, traj.R_ref)


def mae(err: Float[Array, " T *k"]) -> Float[Array, "*k"]:
    """Mean absolute error per component over the samples: ``(T, k) -> (k,)`` (Table IV)."""
    return jnp.mean(jnp.abs(err), axis=0)


def rmse(err: Float[Array, " T *k"]) -> Float[Array, "*k"]:
    """Root-mean-square error per component: ``(T, k) -> (k,)``."""
    return safe_sqrt(jnp.mean(err**2, axis=0))


def max_abs(err: Float[Array, " T *k"]) -> Float[Array, "*k"]:
    """Largest absolute deviation per component (maximum transient): ``(T, k) -> (k,)``."""
    return jnp.max(jnp.abs(err), axis=0)


def rms_norm(err: Float[Array, "T k"]) -> Float[Array, ""]:
    """``sqrt(mean_t |e|^2)`` of a ``(T, k)`` error, a scalar (the RMSE of the error vector)."""
    return safe_sqrt(jnp.mean(jnp.sum(err**2, axis=-1)))


def mean_norm(err: Float[Array, "T k"]) -> Float[Array, ""]:
    """``mean_t |e|`` of a ``(T, k)`` error, a scalar."""
    return jnp.mean(safe_norm(err))


def thrust_impulse(traj: Trajectory, c_f: Float[Array, " n"]) -> Float[Array, ""]:
    """Total rotor thrust impulse ``int sum_i c_f,i |u_i| dt`` [N s] (trapezoidal rule)."""
    return time_integral(traj.t, jnp.sum(c_f * jnp.abs(traj.u), axis=-1))


def effort_ratio(traj: Trajectory, platform: Platform) -> Float[Array, ""]:
    """``mean_t sum_i c_f,i |u_i| / (m g)``: total rotor thrust over weight, time-averaged (dimensionless).

    1 for a flat design in hover, ``1 / eta`` for a tilted one (``eta`` the hover efficiency).
    """
    return time_mean(traj.t, jnp.sum(platform.c_f * jnp.abs(traj.u), axis=-1)) / platform.weight


def rotor_power(traj: Trajectory, c_tau: Float[Array, " n"]) -> Float[Array, " T"]:
    """``(T,)`` aerodynamic power proxy ``sum_i c_tau,i |omega_i|^3`` [W] (shaft power ``tau_i omega_i``)."""
    return jnp.sum(c_tau * jnp.abs(traj.rotor_speed) ** 3, axis=-1)


def reference_power(platform: Platform) -> Float[Array, ""]:
    """``P_ref = sum_i c_tau,i (m g / sum_j c_f,j)^(3/2)`` [W]: hover power of the same rotors on a flat design."""
    u_ref = platform.weight / jnp.sum(platform.c_f)
    return jnp.sum(platform.c_tau) * u_ref**1.5


def speed_margin(traj: Trajectory, platform: Platform) -> Float[Array, "T n"]:
    """``(T, n)`` headroom of each rotor speed to its nearer bound, as a fraction of ``rotor_speed_max - rotor_speed_min``.

    ``m_i(t) = min(omega_i - rotor_speed_min,i, rotor_speed_max,i - omega_i) / (rotor_speed_max,i - rotor_speed_min,i)``:
    0 at a bound, 0.5 mid-range; 1 for an unbounded rotor (``rotor_speed_max = inf``).
    """
    span = platform.rotor_speed_max - platform.rotor_speed_min
    bounded = jnp.isfinite(span)
    span_safe = jnp.where(bounded, span, 1.0)
    w_max = jnp.where(bounded, platform.rotor_speed_max, 0.0)
    w = traj.rotor_speed
    margin = jnp.minimum(w - platform.rotor_speed_min, w_max - w) / span_safe
    return jnp.where(bounded, margin, 1.0)


def saturation_margin(traj: Trajectory, platform: Platform) -> Float[Array, ""]:
    """``min_{t,i} m_i(t)`` of :func:`speed_margin`: headroom of the busiest rotor (0 at a bound, 1 unbounded)."""
    return jnp.min(speed_margin(traj, platform))


def tilt_summary(traj: Trajectory) -> dict[str, Float[Array, ""]]:
    """Range and fastest change of the applied tilt angles over the flight.

    For each angle set ``a`` in ``("alpha", "beta")``: ``a_min``, ``a_max`` [rad] over all samples
    and rotors, and ``a_rate_max = max_k |a(t_k+1) - a(t_k)| / (t_k+1 - t_k)`` [rad/s] (finite
    differences on the save grid; 0 for a fixed angle).
    """
    out = {}
    dt = jnp.diff(traj.t)
    for key in ("alpha", "beta"):
        a = getattr(traj, key).reshape(traj.t.shape[0], -1)
        rate = jnp.abs(jnp.diff(a, axis=0)) / dt[:, None]
        out[f"{key}_min"], out[f"{key}_max"] = jnp.min(a), jnp.max(a)
        out[f"{key}_rate_max"] = jnp.max(rate) if a.shape[0] > 1 else jnp.zeros((), dtype=a.dtype)
    return out


def servo_saturation_fraction(traj: Trajectory, platform: Platform, flight=None) -> Float[Array, ""]:
    """Share of save intervals in which any servo is saturated (dimensionless, in ``[0, 1]``).

    A servo of a tilting angle set is saturated when its angle is within 1e-6 rad of a limit of
    the allocator (``flight.allocator.angle_limits``) or its finite-difference rate reaches
    ``0.99`` of the servo's ``rate_limit`` (if it has one). 0 for a fixed-tilt platform; NaN for
    a tilting platform when ``flight`` is not given (the limits are unknown).
    """
    dtype = traj.t.dtype
    if not platform.is_tilting:
        return jnp.zeros((), dtype=dtype)
    if flight is None:
        return jnp.full((), jnp.nan, dtype=dtype)
    dt = jnp.diff(traj.t)
    rate_limit = flight.actuators.servo.max_rate()
    sat = jnp.zeros(dt.shape, dtype=bool)
    for key in platform.tilting:
        a = getattr(traj, key).reshape(traj.t.shape[0], -1)
        lo, hi = flight.allocator.angle_limits(key)
        at_limit = jnp.any((a <= lo + 1e-6) | (a >= hi - 1e-6), axis=-1)
        sat = sat | at_limit[1:]
        if rate_limit is not None:
            rate = jnp.abs(jnp.diff(a, axis=0)) / dt[:, None]
            sat = sat | jnp.any(rate >= 0.99 * rate_limit, axis=-1)
    return jnp.mean(sat.astype(dtype))


#: Keys of :class:`ElectricalMetrics` (``metrics.json`` and the printed table of a flight with an electric motor).
ELECTRICAL_KEYS = ("electrical_power_mean", "electrical_power_peak", "energy_wh", "soc_end", "motor_current_mean",
                   "motor_current_peak", "time_at_limit", "endurance_hover_s", "endurance_profile_s",
                   "mechanical_power_mean", "figure_of_merit")


class ElectricalMetrics(eqx.Module):
    """The electrical metrics of a flight whose motors draw current from the battery (:func:`electrical_metrics`).

    Attributes:
        electrical_power_mean: ``()`` mean battery terminal power ``int V_t I_b dt / T`` [W].
        electrical_power_peak: ``()`` largest sampled ``V_t I_b`` [W].
        energy_wh: ``()`` ``int V_t I_b dt`` at the battery terminals [Wh].
        soc_end: ``()`` state of charge at the end.
        motor_current_mean: ``()`` time mean of the rotors' mean current [A].
        motor_current_peak: ``()`` largest sampled motor current [A].
        time_at_limit: ``()`` time [s] with any motor held by its current limit or by the battery's voltage
            (sample and hold over the save times).
        endurance_hover_s: ``()`` hover at the flight's mass from ``soc0`` down to ``soc_floor`` [s]
            (:func:`jaxrotor.electrical.endurance_hover`).
        endurance_profile_s: ``()`` repeating the flown profile at its mean terminal power from ``soc0`` down to
            ``soc_floor`` [s] (:func:`jaxrotor.electrical.discharge_time`).
        mechanical_power_mean: ``()`` mean shaft power ``int sum_i omega_i k_t (I_i - I_0) dt / T`` [W].
        figure_of_merit: ``()`` time mean of the ideal induced power ``sum_i T_i^{3/2} / sqrt(2 rho A)``
            (``T_i = c_f omega_i^2``, ``A = pi D^2/4``) over ``mechanical_power_mean``.
    """

    electrical_power_mean: Array
    electrical_power_peak: Array
    energy_wh: Array
    soc_end: Array
    motor_current_mean: Array
    motor_current_peak: Array
    time_at_limit: Array
    endurance_hover_s: Array
    endurance_profile_s: Array
    mechanical_power_mean: Array
    figure_of_merit: Array


def electrical_metrics(traj: Trajectory, platform: Platform) -> ElectricalMetrics:
    """:class:`ElectricalMetrics` of a flight with the battery's state (``traj.energy``, ``traj.electrical``).

    Energies are differences of the integrated account (:class:`~jaxrotor.electrical.EnergyState`), so they are
    exact to the plant's integrator; peaks and the time at the limit are taken over the save times.
    """
    from . import electrical as E

    if traj.energy is None or traj.electrical is None:
        raise ValueError("electrical_metrics: the trajectory has no battery state (traj.energy is None). Fix: fly "
                         "an electric motor (ElectricMotor, [actuators.motor] kind = \"electric\").")
    t, e, el = traj.t, traj.energy, traj.electrical
    duration = t[-1] - t[0]
    work = e.work[-1] - e.work[0]
    p_mean = work[0] / duration
    parts = platform.parts
    b = parts.battery
    dt = t.dtype
    p_mech = work[1] / duration
    area = np.pi * parts.propeller.diameter.astype(dt) ** 2 / 4
    thrust = platform.c_f * traj.rotor_speed**2
    ideal = jnp.sum(safe_sqrt(thrust) ** 3, axis=-1) / jnp.sqrt(2 * parts.air_density.astype(dt) * area)
    limited = jnp.any(el.limited, axis=-1).astype(dt)
    return ElectricalMetrics(
        electrical_power_mean=p_mean,
        electrical_power_peak=jnp.max(el.terminal_voltage * el.battery_current),
        energy_wh=work[0] / 3600.0,
        soc_end=e.soc[-1],
        motor_current_mean=time_mean(t, jnp.mean(el.motor_current, axis=-1)),
        motor_current_peak=jnp.max(el.motor_current),
        time_at_limit=jnp.sum(limited[:-1] * jnp.diff(t)),
        endurance_hover_s=E.endurance_hover(platform),
        endurance_profile_s=E.discharge_time(p_mean, b),
        mechanical_power_mean=p_mech,
        figure_of_merit=time_mean(t, ideal) / p_mech,
    )


class FlightMetrics(eqx.Module):
    """Every metric of one flight (arrays; :meth:`to_dict` gives the JSON form used by every report).

    Attributes:
        mae_position: ``()`` ``mean_t |e_p|`` [m]. mae_position_xyz: ``(3,)`` per axis [m] (Table IV).
        rmse_position: ``()`` ``sqrt(mean_t |e_p|^2)`` [m]. rmse_position_xyz: ``(3,)`` [m].
        max_position_error: ``()`` ``max_t |e_p|`` [m]. max_position_error_xyz: ``(3,)`` [m].
        mae_orientation, rmse_orientation, max_orientation_error: ``()`` the same of ``e_R`` [rad]
            against the commanded attitude (:func:`orientation_error`); ``*_xyz``: ``(3,)`` per axis [rad].
        mae_orientation_reference, rmse_orientation_reference, max_orientation_reference_error: ``()``
            the same against the reference attitude (:func:`reference_orientation_error`) [rad];
            mae_orientation_reference_xyz: ``(3,)`` per axis [rad].
        thrust_impulse: ``()`` ``int sum_i c_f,i |u_i| dt`` [N s].
        effort_ratio: ``()`` mean total thrust over weight (dimensionless).
        energy: ``()`` ``int sum_i c_tau,i |omega_i|^3 dt`` [J].
        mean_power: ``()`` mean power proxy [W]. power_ratio: ``()`` ``mean_power / reference_power``.
        saturation_fraction: ``()`` share of samples with any rotor command at a bound.
        saturation_margin: ``()`` :func:`saturation_margin` (dimensionless).
        max_wrench_error: ``(6,)`` largest ``|achieved - requested|`` per wrench axis [N, N m].
        alpha_min, alpha_max, alpha_rate_max, beta_min, beta_max, beta_rate_max: the applied
            tilt history, :func:`tilt_summary` [rad, rad/s].
        servo_saturation_fraction: ``()`` :func:`servo_saturation_fraction` (NaN for a tilting
            platform measured without its ``flight``).
        diverged: ``()`` bool (the trajectory's flag).
        duration: ``()`` flown time [s]. num_steps: ``()`` accepted solver steps.
        electrical: the :class:`ElectricalMetrics` of a flight whose motors draw current from the battery
            (its keys, :data:`ELECTRICAL_KEYS`, join the JSON form), else ``None``.
    """

    mae_position: Array
    mae_position_xyz: Array
    rmse_position: Array
    rmse_position_xyz: Array
    max_position_error: Array
    max_position_error_xyz: Array
    mae_orientation: Array
    mae_orientation_xyz: Array
    rmse_orientation: Array
    rmse_orientation_xyz: Array
    max_orientation_error: Array
    max_orientation_error_xyz: Array
    mae_orientation_reference: Array
    mae_orientation_reference_xyz: Array
    rmse_orientation_reference: Array
    max_orientation_reference_error: Array
    thrust_impulse: Array
    effort_ratio: Array
    energy: Array
    mean_power: Array
    power_ratio: Array
    saturation_fraction: Array
    saturation_margin: Array
    max_wrench_error: Array
    alpha_min: Array
    alpha_max: Array
    alpha_rate_max: Array
    beta_min: Array
    beta_max: Array
    beta_rate_max: Array
    servo_saturation_fraction: Array
    diverged: Array
    duration: Array
    num_steps: Array
    electrical: ElectricalMetrics | None = None

    def to_dict(self) -> dict:
        """Plain Python (floats, lists, bools, ints): the JSON form shared by every report (with the
        :data:`ELECTRICAL_KEYS` of :attr:`electrical` when it is there)."""
        out = {}
        for name in self.__dataclass_fields__:
            if name == "electrical":
                if self.electrical is not None:
                    out.update({k: float(np.asarray(getattr(self.electrical, k))) for k in ELECTRICAL_KEYS})
                continue
            a = np.asarray(getattr(self, name))
            if name == "diverged":
                out[name] = bool(a)
            elif name == "num_steps":
                out[name] = int(a)
            else:
                out[name] = a.astype(float).tolist()
        return out


@eqx.filter_jit
def flight_metrics(traj: Trajectory, platform, flight=None) -> FlightMetrics:
    """All metrics of one flight of ``platform`` (see :class:`FlightMetrics` for the formulas and units).

    ``flight`` (the :class:`~jaxrotor.flight.Flight` flown) supplies the servo limits of a
    tilting platform for ``servo_saturation_fraction``. Compiled as one program (``eqx.filter_jit``:
    op by op the first evaluation in a process took seconds); ``vmap``-able and differentiable.
    """
    e_p, e_R, e_Rr = position_error(traj), orientation_error(traj), reference_orientation_error(traj)
    power = rotor_power(traj, platform.c_tau)
    mean_power = time_mean(traj.t, power)
    return FlightMetrics(
        mae_position=mean_norm(e_p),
        mae_position_xyz=mae(e_p),
        rmse_position=rms_norm(e_p),
        rmse_position_xyz=rmse(e_p),
        max_position_error=jnp.max(safe_norm(e_p)),
        max_position_error_xyz=max_abs(e_p),
        mae_orientation=mean_norm(e_R),
        mae_orientation_xyz=mae(e_R),
        rmse_orientation=rms_norm(e_R),
        rmse_orientation_xyz=rmse(e_R),
        max_orientation_error=jnp.max(safe_norm(e_R)),
        max_orientation_error_xyz=max_abs(e_R),
        mae_orientation_reference=mean_norm(e_Rr),
        mae_orientation_reference_xyz=mae(e_Rr),
        rmse_orientation_reference=rms_norm(e_Rr),
        max_orientation_reference_error=jnp.max(safe_norm(e_Rr)),
        thrust_impulse=thrust_impulse(traj, platform.c_f),
        effort_ratio=effort_ratio(traj, platform),
        energy=time_integral(traj.t, power),
        mean_power=mean_power,
        power_ratio=mean_power / reference_power(platform),
        saturation_fraction=jnp.mean(jnp.any(traj.saturated, axis=-1).astype(traj.t.dtype)),
        saturation_margin=saturation_margin(traj, platform),
        max_wrench_error=max_abs(traj.wrench_error),
        **tilt_summary(traj),
        servo_saturation_fraction=servo_saturation_fraction(traj, platform, flight),
        diverged=traj.diverged,
        duration=traj.t[-1] - traj.t[0],
        num_steps=traj.num_steps,
        electrical=None if traj.energy is None else electrical_metrics(traj, platform),
    )
