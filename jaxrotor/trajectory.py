"""The result of a simulation: a :class:`Trajectory` Module of time series."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jax import Array

__all__ = ["Trajectory", "assemble_trajectory", "divergence_flag"]


class Trajectory(eqx.Module):
    """Time series of one flight, sampled at the save times (leading axis ``T``).

    Attributes:
        t: ``(T,)`` times [s].
        p, v: ``(T, 3)`` world position [m] and velocity [m/s].
        R: ``(T, 3, 3)`` attitude (body to world).
        omega: ``(T, 3)`` body angular velocity [rad/s].
        accel: ``(T, 3)`` world linear acceleration [m/s^2].
        angular_accel: ``(T, 3)`` body angular acceleration [rad/s^2].
        u: ``(T, n)`` applied rotor inputs ``omega_i^2`` [rad^2/s^2].
        u_cmd: ``(T, n)`` commanded rotor inputs [rad^2/s^2].
        rotor_speed: ``(T, n)`` rotor speeds [rad/s].
        alpha, beta: ``(T, ...)`` applied tilt angles [rad].
        wrench_requested: ``(T, 6)`` body wrench ``(f, tau)`` asked of the allocator [N, N m].
        wrench_achieved: ``(T, 6)`` body wrench the rotors deliver [N, N m].
        saturated: ``(T, n)`` whether each rotor command hit a bound.
        p_ref, v_ref, a_ref: ``(T, 3)`` reference position, velocity, acceleration (zeros open-loop).
        R_ref: ``(T, 3, 3)`` reference attitude (identity open-loop).
        R_cmd: ``(T, 3, 3)`` attitude the controller commands (body to world,
            :meth:`~jaxrotor.control.AbstractController.commanded_attitude`): ``R_ref`` for a
            controller that tracks the reference attitude, the desired attitude ``R_d`` from the
            desired thrust direction and the heading for an under-actuated one. ``None`` in a
            trajectory built without it (then :func:`jaxrotor.metrics.orientation_error` uses ``R_ref``).
        controller_state: controller internal state at each save time (``None`` open-loop).
        diverged: ``()`` bool: the state became non-finite or ran away
            (``|p|``, ``|v|`` or ``|omega|`` beyond the limits given to ``simulate``), or the
            solver failed (step budget exhausted). Never silently ``False`` on a NaN.
        solver_ok: ``()`` bool: the diffrax result was successful.
        num_steps: ``()`` number of accepted solver steps (plant steps on the physics layer).
        contact_force: ``(T, 3)`` force of the floor on the vehicle, world frame [N] (zeros on the
            analytic layer, which has no floor).
        motor_speed: ``(T, n)`` rotor speeds of the motor model [rad/s] (on the physics layer the
            propellers' own speeds are ``rotor_speed``; on the analytic layer the two are one).
        energy: the battery's :class:`~jaxrotor.electrical.EnergyState` at each sample (``soc`` ``(T,)``,
            ``work`` ``(T, 6)`` [J]) when the motor draws current from it, else ``None``.
        electrical: the :class:`~jaxrotor.electrical.ElectricOutputs` at each sample (``motor_current``
            ``(T, n)`` [A], ``battery_current`` ``(T,)`` [A], ``terminal_voltage`` ``(T,)`` [V], ...), else ``None``.
    """

    t: Array
    p: Array
    v: Array
    R: Array
    omega: Array
    accel: Array
    angular_accel: Array
    u: Array
    u_cmd: Array
    rotor_speed: Array
    alpha: Array
    beta: Array
    wrench_requested: Array
    wrench_achieved: Array
    saturated: Array
    p_ref: Array
    v_ref: Array
    a_ref: Array
    R_ref: Array
    controller_state: object
    diverged: Array
    solver_ok: Array
    num_steps: Array
    contact_force: Array | None = None
    motor_speed: Array | None = None
    R_cmd: Array | None = None
    energy: object = None
    electrical: object = None

    @property
    def wrench_error(self) -> Array:
        """``(T, 6)`` achieved minus requested wrench [N, N m] (non-zero under saturation)."""
        return self.wrench_achieved - self.wrench_requested

    @property
    def position_error(self) -> Array:
        """``(T, 3)`` ``e_p = p_r - p`` (eq. 14) [m]."""
        return self.p_ref - self.p


def divergence_flag(p, v, omega, solver_ok, limits) -> Array:
    """True if any sample is non-finite or beyond the runaway limits, or the solver failed.

    Args:
        p: ``(T, 3)`` world position [m].
        v: ``(T, 3)`` world velocity [m/s].
        omega: ``(T, 3)`` body rate [rad/s].
        solver_ok: ``()`` bool from the diffrax result.
        limits: a :class:`~jaxrotor.flight.DivergenceLimits`: a sample with ``|p| > max_position``,
            ``|v| > max_speed`` or ``|omega| > max_rate`` (Euclidean norms) counts as runaway.
    """
    def norm_max(x):
        finite = jnp.all(jnp.isfinite(x), axis=-1)
        return jnp.max(jnp.where(finite, jnp.sqrt(jnp.sum(jnp.where(finite[..., None], x, 0.0) ** 2, axis=-1)), 0.0))

    finite = jnp.all(jnp.isfinite(p)) & jnp.all(jnp.isfinite(v)) & jnp.all(jnp.isfinite(omega))
    bounded = ((norm_max(p) <= limits.max_position) & (norm_max(v) <= limits.max_speed)
               & (norm_max(omega) <= limits.max_rate))
    return ~(finite & bounded & solver_ok)


def assemble_trajectory(t, states, applied, limits, *, solver_ok, num_steps, u_cmd, wrench_requested,
                        wrench_achieved, saturated, p_ref, v_ref, a_ref, R_ref, controller_state,
                        contact_force=None, motor_speed=None, R_cmd=None) -> Trajectory:
    """The one place a :class:`Trajectory` is built from a flight's samples, with its divergence flag.

    Args:
        t: ``(T,)`` sample times [s].
        states: the true :class:`~jaxrotor.dynamics.VehicleState` at each sample (leading axis ``T``).
        applied: per sample, what the plant applied (``accel``, ``angular_accel``, ``u``, ``rotor_speed``,
            ``alpha``, ``beta``: a :class:`~jaxrotor.plant.PlantOutputs` or
            :class:`~jaxrotor.dynamics.VehicleOutputs` with a leading axis ``T``).
        limits: the :class:`~jaxrotor.flight.DivergenceLimits` of :func:`divergence_flag`.
        solver_ok: ``()`` bool, the plant's numerics succeeded.
        num_steps: ``()`` plant (solver) steps taken.
        u_cmd: ``(T, n)`` commanded rotor inputs [rad^2/s^2].
        wrench_requested: ``(T, 6)`` body wrench asked of the allocator [N, N m].
        wrench_achieved: ``(T, 6)`` body wrench the rotors deliver [N, N m].
        saturated: ``(T, n)`` bool, a rotor command hit a bound.
        p_ref: ``(T, 3)`` reference position [m].
        v_ref: ``(T, 3)`` reference velocity [m/s].
        a_ref: ``(T, 3)`` reference acceleration [m/s^2].
        R_ref: ``(T, 3, 3)`` reference attitude.
        controller_state: the controller's integral state at each sample (``None`` open-loop).
        contact_force: ``(T, 3)`` floor force on the vehicle [N] (default zeros).
        motor_speed: ``(T, n)`` motor-model rotor speeds [rad/s] (default ``applied.rotor_speed``).
        R_cmd: ``(T, 3, 3)`` attitude the controller commands (default ``R_ref``: open loop, or a
            controller tracking the reference attitude).
    """
    solver_ok = jnp.asarray(solver_ok)
    if motor_speed is None:
        motor_speed = applied.rotor_speed
    if contact_force is None:
        contact_force = jnp.zeros_like(states.p)
    if R_cmd is None:
        R_cmd = R_ref
    return Trajectory(
        t=t, p=states.p, v=states.v, R=states.R, omega=states.omega, accel=applied.accel,
        angular_accel=applied.angular_accel, u=applied.u, u_cmd=u_cmd, rotor_speed=applied.rotor_speed,
        alpha=applied.alpha, beta=applied.beta, wrench_requested=wrench_requested, wrench_achieved=wrench_achieved,
        saturated=saturated, p_ref=p_ref, v_ref=v_ref, a_ref=a_ref, R_ref=R_ref, controller_state=controller_state,
        diverged=divergence_flag(states.p, states.v, states.omega, solver_ok, limits), solver_ok=solver_ok,
        num_steps=jnp.asarray(num_steps), contact_force=contact_force, motor_speed=motor_speed,
        R_cmd=R_cmd, energy=getattr(states, "energy", None), electrical=getattr(applied, "electrical", None),
    )
