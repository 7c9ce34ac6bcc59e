"""Tracking and effort metrics of a :class:`~jaxrotor.trajectory.Trajectory` (eqs. 14-15, Table IV).

* position error ``e_p = p_r - p`` (eq. 14), world frame [m];
* orientation error ``e_R = 1/2 (R_r^T R - R^T R_r)^vee`` [rad]. The paper prints
  ``e_R = 1/2 (R_r - R)^vee`` (eq. 15); ``R_r - R`` is not skew-symmetric, so its
  ``vee`` is undefined. jaxrotor reads it as the geometric attitude error the
  controller regulates (Lee et al.), which agrees with the skew part of
  ``1/2 (R_r - R)`` to first order in the error angle for ``R_r = I``.

Every metric is a pure, differentiable function of the trajectory's arrays and
works under ``vmap``. Means are over the (uniform) save grid, i.e. time averages.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array

from .control import attitude_error
from .trajectory import Trajectory

__all__ = [
    "position_error",
    "orientation_error",
    "mae",
    "rmse",
    "max_abs",
    "control_effort",
    "power_proxy",
    "TrackingMetrics",
    "tracking_metrics",
]


def position_error(traj: Trajectory) -> Array:
    """``(T, 3)`` ``e_p = p_r - p`` (eq. 14) [m], world frame."""
    return traj.p_ref - traj.p


def orientation_error(traj: Trajectory) -> Array:
    """``(T, 3)`` ``e_R = 1/2 (R_r^T R - R^T R_r)^vee`` (eq. 15 as read here) [rad], body frame."""
    return jax.vmap(attitude_error)(traj.R, traj.R_ref)


def mae(err: Array) -> Array:
    """Mean absolute error per component over time: ``(T, k) -> (k,)`` (Table IV)."""
    return jnp.mean(jnp.abs(err), axis=0)


def rmse(err: Array) -> Array:
    """Root-mean-square error per component: ``(T, k) -> (k,)``."""
    return jnp.sqrt(jnp.mean(err**2, axis=0))


def max_abs(err: Array) -> Array:
    """Largest absolute deviation per component (maximum transient): ``(T, k) -> (k,)``."""
    return jnp.max(jnp.abs(err), axis=0)


def _time_integral(t: Array, y: Array) -> Array:
    dt = jnp.diff(t)
    return jnp.sum(0.5 * (y[1:] + y[:-1]) * dt.reshape((-1,) + (1,) * (y.ndim - 1)), axis=0)


def control_effort(traj: Trajectory, c_f: Array) -> Array:
    """Total rotor thrust impulse ``int sum_i c_f,i u_i dt`` [N s] (trapezoidal rule)."""
    return _time_integral(traj.t, jnp.sum(traj.u * c_f, axis=-1))


def power_proxy(traj: Trajectory, c_tau: Array) -> Array:
    """Aerodynamic energy proxy ``int sum_i c_tau,i |omega_i|^3 dt`` [J] (shaft power ``tau omega``)."""
    return _time_integral(traj.t, jnp.sum(c_tau * jnp.abs(traj.rotor_speed) ** 3, axis=-1))


class TrackingMetrics(eqx.Module):
    """Summary of one flight.

    Attributes:
        mae_position: ``(3,)`` [m]. mae_orientation: ``(3,)`` [rad].
        rmse_position: ``(3,)`` [m]. rmse_orientation: ``(3,)`` [rad].
        max_abs_position_error: ``(3,)`` [m]. max_abs_orientation_error: ``(3,)`` [rad].
        effort: ``()`` thrust impulse [N s]. energy: ``()`` power proxy [J].
        saturation_fraction: ``()`` share of samples with any rotor at a bound.
        max_wrench_error: ``(6,)`` largest ``|achieved - requested|`` per wrench axis [N, N m].
        diverged: ``()`` bool.
    """

    mae_position: Array
    mae_orientation: Array
    rmse_position: Array
    rmse_orientation: Array
    max_abs_position_error: Array
    max_abs_orientation_error: Array
    effort: Array
    energy: Array
    saturation_fraction: Array
    max_wrench_error: Array
    diverged: Array


def tracking_metrics(traj: Trajectory, c_f: Array, c_tau: Array) -> TrackingMetrics:
    """All metrics of one flight (``c_f``, ``c_tau``: the platform's ``(n,)`` coefficients)."""
    e_p, e_R = position_error(traj), orientation_error(traj)
    return TrackingMetrics(
        mae_position=mae(e_p),
        mae_orientation=mae(e_R),
        rmse_position=rmse(e_p),
        rmse_orientation=rmse(e_R),
        max_abs_position_error=max_abs(e_p),
        max_abs_orientation_error=max_abs(e_R),
        effort=control_effort(traj, c_f),
        energy=power_proxy(traj, c_tau),
        saturation_fraction=jnp.mean(jnp.any(traj.saturated, axis=-1)),
        max_wrench_error=max_abs(traj.wrench_error),
        diverged=traj.diverged,
    )
