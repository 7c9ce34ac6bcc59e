"""Controller gains from the vehicle: pole placement on the linearised loops about hover.

Both SE(3) controllers (:mod:`jaxrotor.control`) close, about a still hover and per axis, loops of
the same form: an inertia ``I`` (the mass ``m`` for a translation, normalised away by the
controller's ``m``; the principal inertia ``J_kk`` for a rotation), a first-order lag ``tau`` between
the commanded and the applied wrench (the motor's speed time constant plus half a control period
and the sensor delay of a discrete-rate flight computer), and, for the rotations, the spin-up
reaction of the propellers (``docs/theory.md``): the applied torque is ``tau_c - b d(tau_c)/dt`` with

    b_k = sum_i J_r,i s_i z_i,k P_ik / (2 omega_h,i)                                   [s]

(``s_i = -kappa_i`` the spin sign, ``P = G^+`` the input per unit commanded torque about body axis
``k``, ``omega_h`` the hover speeds). With the PID law ``-(K_p e + K_d e_dot + K_i int e)`` the
characteristic polynomial of one axis is

    tau I s^4 + (I - b K_d) s^3 + (K_d - b K_p) s^2 + (K_p - b K_i) s + K_i = 0.

:func:`place_axis` chooses ``(K_p, K_d, K_i)`` so that its roots are exactly a damped pair
``s^2 + 2 zeta omega s + omega^2``, an integral pole ``s = -a omega`` and a fourth real pole ``-p_4``,
which the lag fixes (``p_4 = 1/tau - (2 zeta + a) omega`` without rotor inertia): pole placement,
not LQR, because the poles are what the bandwidth/damping specification names and the result is in
closed form (differentiable in every vehicle quantity). Without lag (``tau = 0``) the loop is third
order and the three poles are placed exactly.

:func:`auto_gains` applies it to every loop of a controller (``docs/closed_loop.md``):

* attitude (roll, pitch): ``omega_a`` = :attr:`GainSpec.attitude_bandwidth`, by default the
  largest bandwidth whose lag pole is at least :attr:`GainSpec.lag_ratio` times faster
  (``p_4 >= 2 omega_a``), capped at :data:`MAX_ATTITUDE_BANDWIDTH` and at a tenth of the control
  rate in rad/s;
* yaw: ``omega_y = omega_a / 2`` by default (yaw authority is the weakest on most vehicles);
* position: ``omega_p = omega_a / 4`` by default (a cascade: the under-actuated controller turns
  the vehicle to make a lateral force), and at most the bandwidth at which a 1 m position error asks
  for half the acceleration the vehicle has: ``K_p (1 m) <= a_max / 2`` with ``a_max`` the smaller of
  the vertical margin ``g min(T/W - 1, 1)`` and :func:`lateral_acceleration_limit`. The lateral axes of
  the under-actuated controller take the attitude loop as their lag (``tau = 2 zeta / omega_a``: it
  turns the vehicle to make the force); the vertical axis and every axis of the fully actuated
  controller take the motor's. Integral poles: ``a = 0.2`` for the attitude and vertical loops,
  none for the horizontal position loops by default (:class:`GainSpec`: a position step would
  overshoot and creep).

Gains are returned as the controller's own ``(3,)`` diagonals (``K_p [1/s^2]``, ``K_v [1/s]``,
``K_pi [1/s^3]``, ``K_R [N m/rad]``, ``K_w [N m s/rad]``, ``K_Ri [N m/(rad s)]``).
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jaxtyping import Float

from .allocation import allocation_matrix, hover_inputs
from .design.platform import rotor_axes
from .control import GAIN_NAMES, AbstractController
from .design.platform import Platform
from .numerics import safe_sqrt

__all__ = ["MAX_ATTITUDE_BANDWIDTH", "AxisDesign", "GainSpec", "auto_gains", "lateral_acceleration_limit", "place_axis",
           "reaction_coefficients", "with_auto_gains"]

#: Upper bound of the default attitude bandwidth [rad/s] (an ideal motor has no lag to bound it).
MAX_ATTITUDE_BANDWIDTH = 20.0


class GainSpec(eqx.Module):
    """Bandwidth and damping of each loop for :func:`auto_gains` (``None``: the vehicle's default).

    Attributes:
        position_bandwidth: ``omega_p`` [rad/s] of the position loops (default ``omega_a / 4``, capped by the
            thrust margin).
        attitude_bandwidth: ``omega_a`` [rad/s] of roll and pitch (default from the motor lag, the control rate
            and :data:`MAX_ATTITUDE_BANDWIDTH`).
        yaw_bandwidth: ``omega_y`` [rad/s] (default ``omega_a / 2``).
        damping: ``zeta`` of each loop's dominant pair (dimensionless, default 0.8).
        integral: ``a``, the attitude loops' integral pole at ``-a omega`` relative to their bandwidth (default 0.2;
            0 turns ``K_Ri`` off).
        position_integral: ``a_p``, the same for the horizontal position loops (default 0). A position step fed
            back as an error excites the integral's zero ``K_i / K_p``: the response overshoots and creeps back
            with an amplitude of about ``2 zeta a_p / (1 + 2 zeta a_p)`` of the step (x500, 1 m step: 7 % at
            0.03, 23 % at 0.2, never inside the 2 % band within 7 s; 0.7 % and 3.3 s without), so the default
            leaves it off: a constant horizontal force then leaves an offset ``F / (m K_p)``. Give e.g. 0.05 to
            remove it (slowly) at the price of that tail.
        vertical_integral: ``a_z``, the same for the vertical loop (default 0.2): a mass or thrust-coefficient
            error would otherwise leave the vehicle ``Delta(m g) / (m K_p,z)`` low (25 cm for 10 % on an x500).
        lag_ratio: the default bandwidths keep each loop's lag pole at ``p_4 >= lag_ratio * omega`` (default 2).
    """

    position_bandwidth: float | None = eqx.field(static=True, default=None)
    attitude_bandwidth: float | None = eqx.field(static=True, default=None)
    yaw_bandwidth: float | None = eqx.field(static=True, default=None)
    damping: float = eqx.field(static=True, default=0.8)
    integral: float = eqx.field(static=True, default=0.2)
    position_integral: float = eqx.field(static=True, default=0.0)
    vertical_integral: float = eqx.field(static=True, default=0.2)
    lag_ratio: float = eqx.field(static=True, default=2.0)

    def __check_init__(self):
        for name in ("position_bandwidth", "attitude_bandwidth", "yaw_bandwidth"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v > 0):
                raise ValueError(f"GainSpec parameter `{name}` = {v!r} is invalid: a bandwidth is a finite rate > 0 "
                                 "rad/s. Fix: give e.g. 8.0, or leave it out for the vehicle's default.")
        if not (math.isfinite(self.damping) and 0.3 <= self.damping <= 2.0):
            raise ValueError(f"GainSpec parameter `damping` = {self.damping!r} is invalid: need 0.3 <= damping <= 2. "
                             "Fix: give e.g. 0.8.")
        for name, eg in (("integral", 0.2), ("position_integral", 0.05), ("vertical_integral", 0.2)):
            v = getattr(self, name)
            if not (math.isfinite(v) and 0 <= v < 1):
                raise ValueError(f"GainSpec parameter `{name}` = {v!r} is invalid: need 0 <= {name} < 1 (the integral "
                                 f"pole relative to the bandwidth). Fix: give e.g. {eg}, or 0 for none.")
        if not (math.isfinite(self.lag_ratio) and self.lag_ratio >= 1):
            raise ValueError(f"GainSpec parameter `lag_ratio` = {self.lag_ratio!r} is invalid: need >= 1. Fix: "
                             "give e.g. 2.0.")


class AxisDesign(eqx.Module):
    """One placed loop: gains and the poles they give (all scalars).

    Attributes:
        K_p: proportional gain [I / s^2]. K_d: derivative gain [I / s]. K_i: integral gain [I / s^3]
            (``I`` the axis inertia: 1 for a mass-normalised translation, ``J_kk`` [kg m^2] for a rotation).
        bandwidth: ``omega`` [rad/s] of the damped pair. lag_pole: ``p_4`` [rad/s] (``inf`` without lag).
    """

    K_p: Float[Array, ""]
    K_d: Float[Array, ""]
    K_i: Float[Array, ""]
    bandwidth: Float[Array, ""]
    lag_pole: Float[Array, ""]


def place_axis(inertia, tau, b, omega, zeta: float, a: float) -> AxisDesign:
    """Gains of one axis whose closed loop has the poles of ``(s^2 + 2 zeta omega s + omega^2)(s + a omega)(s + p_4)``.

    Plant ``I (tau s + 1) s^2 x = (1 - b s) u``, law ``u = -(K_p x + K_d x_dot + K_i int x)``; characteristic
    polynomial ``tau I s^4 + (I - b K_d) s^3 + (K_d - b K_p) s^2 + (K_p - b K_i) s + K_i``. With
    ``Q(s) = s^3 + q_2 s^2 + q_1 s + q_0`` the placed third-order factor, matching ``tau I (s + p_4) Q(s)``
    gives ``K_i = tau I q_0 p_4``, ``K_p = tau I (q_0 + q_1 p_4) + b K_i``, ``K_d = tau I (q_1 + q_2 p_4) + b K_p``
    and the ``s^3`` coefficient fixes ``p_4`` (linear in it). ``tau = 0`` (no lag): ``c Q(s)`` with
    ``c = I / (1 + b q_2 + b^2 q_1 + b^3 q_0)``, ``p_4 = inf``.

    Args:
        inertia: ``I`` (> 0). tau: lag [s] (>= 0; a Python 0 selects the third-order form).
        b: reaction coefficient [s] (0 without rotor inertia). omega: bandwidth [rad/s].
        zeta: damping of the pair. a: integral pole ratio (0: no integral, ``K_i = 0``).

    Returns:
        :class:`AxisDesign`. A non-positive ``lag_pole`` means the bandwidth is too high for the lag.
    """
    q2 = (2.0 * zeta + a) * omega
    q1 = (1.0 + 2.0 * zeta * a) * omega**2
    q0 = a * omega**3
    if isinstance(tau, (int, float)) and tau == 0:
        c = inertia / (1.0 + b * q2 + b**2 * q1 + b**3 * q0)
        K_i = c * q0
        K_p = c * q1 + b * K_i
        K_d = c * q2 + b * K_p
        return AxisDesign(K_p=K_p, K_d=K_d, K_i=K_i, bandwidth=jnp.asarray(omega) + 0 * c,
                          lag_pole=jnp.full_like(c, jnp.inf))
    tI = tau * inertia
    A_i = tI * q0
    P0, P1 = tI * q0, tI * q1 + b * A_i
    D0, D1 = tI * q1 + b * P0, tI * q2 + b * P1
    p4 = (inertia - b * D0 - tI * q2) / (tI + b * D1)
    K_i = A_i * p4
    K_p = P0 + P1 * p4
    K_d = D0 + D1 * p4
    return AxisDesign(K_p=K_p, K_d=K_d, K_i=K_i, bandwidth=jnp.asarray(omega) + 0 * p4, lag_pole=p4)


def _bandwidth_for_lag(inertia, tau, b, zeta: float, a: float, ratio: float, cap, candidates: int = 64):
    """Largest ``omega <= cap`` (on a log grid from ``cap / 1000``) up to which every grid bandwidth places the loop
    with non-negative gains and a lag pole ``p_4 >= ratio * omega``; the smallest grid value if none does.

    Without rotor inertia this is ``1 / (tau (2 zeta + a + ratio))`` to the grid's resolution; with a reaction
    coefficient ``b`` the lag pole is not monotonic in ``omega`` and the gains can change sign, hence the scan.
    The choice is piecewise constant in the vehicle (no gradient flows through it; the gains at the chosen
    bandwidth are differentiable).
    """
    grid = cap * jnp.logspace(-3.0, 0.0, candidates, dtype=jnp.result_type(cap, float))
    d = jax.vmap(lambda w: place_axis(inertia, tau, b, w, zeta, a))(grid)
    ok = (d.lag_pole >= ratio * grid) & (d.K_p >= 0) & (d.K_d >= 0) & (d.K_i >= 0)
    contiguous = jnp.cumprod(ok.astype(grid.dtype)) > 0
    return jax.lax.stop_gradient(jnp.max(jnp.where(contiguous, grid, grid[0])))


def reaction_coefficients(platform: Platform, *, underactuated: bool = False) -> Float[Array, "3"]:
    """``b_k = sum_i J_r,i s_i z_i,k P_ik / (2 omega_h,i)`` [s] for the body axes ``k = x, y, z`` (zeros without
    rotor inertia).

    ``P`` maps a commanded body torque to inputs: the torque columns of ``G^+`` (fully actuated) or of
    ``[F_z; M]^+`` (under-actuated: collective thrust and three torques); ``omega_h = sqrt(u_h)`` the hover
    speeds. A commanded torque rate ``d tau_k/dt`` changes the speeds at ``P_ik d tau_k / dt / (2 omega_h,i)`` and
    the spin-up reaction ``-J_r,i s_i omega_dot_i z_i`` returns ``-b_k d tau_k / dt`` about axis ``k``.
    """
    if platform.rotor_inertia is None:
        return jnp.zeros(3, dtype=platform.mass.dtype)
    G = allocation_matrix(platform)
    rows = G[2:] if underactuated else G
    P = jnp.linalg.pinv(rows)[:, -3:]  # (n, 3): input per unit torque about x, y, z
    w_h = safe_sqrt(jnp.maximum(hover_inputs(platform), 0.0))
    z = rotor_axes(platform)  # (n, 3)
    s = -platform.kappa
    return jnp.sum((platform.J_r * s / (2.0 * jnp.maximum(w_h, 1e-9)))[:, None] * z * P, axis=0)


def lateral_acceleration_limit(platform: Platform, *, underactuated: bool = False) -> Float[Array, ""]:
    """Largest horizontal acceleration [m/s^2] the vehicle makes from hover, in its weakest horizontal direction.

    Under-actuated (it tilts to accelerate): ``g sqrt((T/W)^2 - 1)`` with ``T/W = sum_i c_f,i u_max,i / (m g)``,
    at most 3 g (a position-controlled flight asks for no more). Fully actuated at level attitude (it makes the force with its rotors):
    the input change of a lateral acceleration ``a d`` is ``a m (G^+)_{:, :3} d`` and each rotor has the
    headroom ``h_i = min(u_max,i - u_h,i, u_h,i - u_min,i)`` about the hover input ``u_h``, so
    ``a_max(d) = min_i h_i / |m (G^+ d)_i|`` (exact for the pseudo-inverse allocators); the minimum over
    ``d`` in 8 horizontal directions.
    """
    g = platform.gravity
    if underactuated:
        tw = jnp.sum(platform.c_f * platform.rotor_speed_max**2) / (platform.mass * g)
        tw = jnp.where(jnp.isfinite(tw), tw, 10.0)
        return jnp.minimum(g * jnp.sqrt(jnp.maximum(tw**2 - 1.0, 1e-3)), 3.0 * g)
    G = allocation_matrix(platform)
    P = jnp.linalg.pinv(G)[:, :3] * platform.mass
    u_h = hover_inputs(platform)
    head = jnp.minimum(jnp.where(jnp.isfinite(platform.u_max), platform.u_max - u_h, jnp.inf), u_h - platform.u_min)
    ang = jnp.arange(8, dtype=u_h.dtype) * (jnp.pi / 4)
    D = jnp.stack([jnp.cos(ang), jnp.sin(ang), jnp.zeros_like(ang)], axis=1)  # (8, 3)
    per_unit = jnp.abs(D @ P.T)  # (8, n): input change per m/s^2
    a = jnp.min(jnp.where(per_unit > 1e-12, jnp.maximum(head, 0.0) / jnp.maximum(per_unit, 1e-12), jnp.inf), axis=1)
    return jnp.minimum(jnp.min(a), 3.0 * g)


def _lag(flight) -> tuple[object, float]:
    """``(motor lag [s] or 0, extra lag of the flight computer [s])``: half a control period plus the sensor delay."""
    tau = 0.0
    if flight is not None:
        tc = flight.actuators.motor.lag_time_constant()
        tau = 0.0 if tc is None else tc
    extra = 0.0
    if flight is not None and flight.control_rate is not None:
        h = 1.0 / float(flight.control_rate)
        delay = 0 if flight.sensors is None else int(getattr(flight.sensors, "delay", 0) or 0)
        extra = h * (0.5 + delay)
    return tau, extra


def auto_gains(platform: Platform, flight=None, *, underactuated: bool = False, spec: GainSpec = GainSpec()
               ) -> dict[str, Float[Array, "3"]]:
    """The six ``(3,)`` diagonal gains of an SE(3) controller for ``platform`` flown as ``flight``.

    Pole placement per axis (:func:`place_axis`, module docstring): mass-normalised position loops,
    attitude loops on the principal inertias ``J_xx, J_yy, J_zz``, each with the motor's speed lag
    (``flight.actuators.motor.lag_time_constant()``) plus, at a control rate ``f``, ``(1/2 + d)/f`` for the
    zero-order hold and a ``d``-tick sensor delay, and the rotor-inertia reaction coefficients
    :func:`reaction_coefficients`. Differentiable in the platform's leaves and the motor time constant.

    Args:
        platform: the vehicle (mass, inertia, allocation at its current angles, ``J_r``, speed bounds).
        flight: the :class:`~jaxrotor.flight.Flight` (motor, control rate, sensor delay), or ``None`` (no lag).
        underactuated: design for :class:`~jaxrotor.control.UnderactuatedSE3` (lateral position loops without
            the lag, reaction coefficients from ``[F_z; M]``).
        spec: bandwidths and damping (:class:`GainSpec`).

    Returns:
        ``{"K_p", "K_v", "K_pi", "K_R", "K_w", "K_Ri"}`` as ``(3,)`` arrays.
    """
    dtype = platform.mass.dtype
    motor_tau, extra = _lag(flight)
    tau = motor_tau + extra if (not isinstance(motor_tau, (int, float)) or motor_tau > 0 or extra > 0) else 0.0
    zeta, a, ratio = spec.damping, spec.integral, spec.lag_ratio
    J = jnp.diagonal(platform.inertia)
    b = reaction_coefficients(platform, underactuated=underactuated)
    cap = MAX_ATTITUDE_BANDWIDTH
    if flight is not None and flight.control_rate is not None:
        cap = min(cap, 2.0 * math.pi * float(flight.control_rate) / 10.0)
    cap = jnp.asarray(cap, dtype=dtype)
    lagged = not (isinstance(tau, (int, float)) and tau == 0)

    def default_bw(k, given, fallback):
        if given is not None:
            return jnp.asarray(given, dtype=dtype)
        if fallback is not None:
            return fallback
        return _bandwidth_for_lag(J[k], tau, b[k], zeta, a, ratio, cap) if lagged else cap

    w_roll = default_bw(0, spec.attitude_bandwidth, None)
    w_pitch = default_bw(1, spec.attitude_bandwidth, None)
    w_att = jnp.minimum(w_roll, w_pitch)
    w_yaw = default_bw(2, spec.yaw_bandwidth, None)
    if spec.yaw_bandwidth is None:
        w_yaw = jnp.minimum(w_yaw, 0.5 * w_att)
    tw = jnp.sum(platform.c_f * platform.rotor_speed_max**2) / (platform.mass * platform.gravity)
    vertical = platform.gravity * jnp.minimum(jnp.maximum(jnp.where(jnp.isfinite(tw), tw, 3.0) - 1.0, 0.05), 1.0)
    accel = jnp.minimum(vertical, lateral_acceleration_limit(platform, underactuated=underactuated))
    a_p, a_z = spec.position_integral, spec.vertical_integral
    margin_cap = jnp.sqrt(0.5 * accel / (1.0 + 2.0 * zeta * max(a_p, a_z)))  # K_p (1 m) <= half the acceleration
    w_pos = jnp.minimum(0.25 * w_att, margin_cap) if spec.position_bandwidth is None else jnp.asarray(
        spec.position_bandwidth, dtype=dtype)

    att = [place_axis(J[k], tau, b[k], w, zeta, a) for k, w in enumerate((w_att, w_att, w_yaw))]
    one = jnp.ones((), dtype=dtype)
    # the under-actuated vehicle makes a lateral force by turning: its attitude loop is the lateral loop's lag,
    # about the attitude pair's time constant 2 zeta / omega_a (the motor's lag is inside it)
    lateral_tau = 2.0 * zeta / w_att if underactuated else tau
    pos = [place_axis(one, lateral_tau, 0.0, w_pos, zeta, a_p), place_axis(one, lateral_tau, 0.0, w_pos, zeta, a_p),
           place_axis(one, tau, 0.0, w_pos, zeta, a_z)]
    stack = lambda axes, f: jnp.stack([jnp.asarray(getattr(d, f), dtype=dtype) for d in axes])
    return {"K_p": stack(pos, "K_p"), "K_v": stack(pos, "K_d"), "K_pi": stack(pos, "K_i"),
            "K_R": stack(att, "K_p"), "K_w": stack(att, "K_d"), "K_Ri": stack(att, "K_i")}


def with_auto_gains(controller: AbstractController, platform: Platform, flight=None, spec: GainSpec = GainSpec()
                    ) -> AbstractController:
    """``controller`` with its six gains replaced by :func:`auto_gains` (under-actuated when it needs rank 4).

    Works for any controller with the six gain leaves ``K_p, K_pi, K_v, K_R, K_Ri, K_w``
    (:class:`~jaxrotor.control.FullyActuatedSE3`, :class:`~jaxrotor.control.UnderactuatedSE3`, a subclass).
    """
    missing = [g for g in GAIN_NAMES if not hasattr(controller, g)]
    if missing:
        raise ValueError(f"with_auto_gains: controller {type(controller).__name__} has no gains {missing}. Fix: use "
                         "FullyActuatedSE3 or UnderactuatedSE3, or set its gains by hand.")
    gains = auto_gains(platform, flight, underactuated=controller.required_rank == 4, spec=spec)
    names = tuple(GAIN_NAMES)
    return eqx.tree_at(lambda c: tuple(getattr(c, g) for g in names), controller, tuple(gains[g] for g in names))

