"""Geometric SE(3) controllers. Each outputs a desired body wrench ``(f_b, tau_b)``.

Errors (world frame for translation, body frame for rotation):

    e_p = p_r - p,  e_v = v_r - v                          (position, velocity; eq. 14)
    e_R = 1/2 (R_r^T R - R^T R_r)^vee                      (attitude, Lee et al.)
    e_w = omega - R^T R_r omega_r                          (angular velocity)

The paper's eq. (15) prints ``(R_r - R)^vee``; ``R_r - R`` is not skew-symmetric,
so jaxrotor uses Lee's error above (the skew part of ``R_r^T R``), which is what a
geometric SE(3) controller regulates and equals the printed one to first order.

:class:`FullyActuatedSE3` (the paper's controller, Table III gains):

    f_w   = m (g e3 + a_r + K_p e_p + K_v e_v + K_pi int e_p),   f_b = R^T f_w
    tau_b = -K_R e_R - K_w e_w - K_Ri int e_R + omega x J omega
            - J ([omega]_x R^T R_r omega_r - R^T R_r omega_dot_r)

:class:`UnderactuatedSE3` (Lee, Leok, McClamroch 2010) for collinear platforms:
thrust ``T = f_w . R e3`` along body z, desired attitude ``R_d = [b2 x b3, b2, b3]``
with ``b3 = f_w/|f_w|`` and ``b2 = b3 x b1_r / |.|`` from the heading, and the same
attitude law about ``R_d`` (with ``omega_d``, ``omega_dot_d`` from the nominal
reference force by forward-mode differentiation in time).

Gains are array leaves (``(3,)`` diagonals) so they can be optimised.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jaxtyping import Float

from . import small, so3
from ._util import as_float
from .numerics import safe_normalize
from .dynamics import VehicleState
from .design.platform import Platform
from .reference import RefSample
from .registry import Option, register

__all__ = [
    "AbstractController",
    "FullyActuatedSE3",
    "UnderactuatedSE3",
    "IntegralState",
    "TABLE_III",
    "AXIS_INTEGRAL_BAND",
    "axis_wrench",
    "primary_axis_wrench",
    "rotor_momentum",
]

#: Table III gains (diagonals).
TABLE_III = {
    "K_p": (7.0, 7.0, 60.0),
    "K_pi": (3.0, 3.0, 5.0),
    "K_v": (14.0, 14.0, 20.0),
    "K_R": (90.0, 90.0, 90.0),
    "K_Ri": (25.0, 25.0, 10.0),
    "K_w": (25.0, 25.0, 5.0),
}

GAIN_NAMES = ("K_p", "K_pi", "K_v", "K_R", "K_Ri", "K_w")

#: TOML options of both controllers (``[controller]``): the six diagonal gains, a number or 3 values each.
_GAIN_OPTIONS = {
    name: Option(list, length=3, ge=0, unit=unit, doc=doc, why="gains must be >= 0",
                 fix="give 3 non-negative diagonal gains, e.g. [7.0, 7.0, 60.0]")
    for name, unit, doc in (("K_p", "1/s^2", "position gain"), ("K_pi", "1/s^3", "position-integral gain"),
                            ("K_v", "1/s", "velocity gain"), ("K_R", "N m/rad", "attitude gain"),
                            ("K_Ri", "N m/(rad s)", "attitude-integral gain"),
                            ("K_w", "N m s/rad", "angular-velocity gain"))
}


class IntegralState(eqx.Module):
    """Integrator states of the controller.

    Attributes:
        int_p: ``(3,)`` ``int e_p dt`` [m s] (world frame).
        int_R: ``(3,)`` ``int e_R dt`` [rad s] (body frame).
    """

    int_p: Float[Array, "3"]
    int_R: Float[Array, "3"]


def _gain(x, name: str) -> Array:
    g = as_float(x)
    if g.ndim == 0:
        g = jnp.full((3,), g)
    if g.shape != (3,):
        raise ValueError(f"Controller gain `{name}` has shape {g.shape}. Fix: pass a scalar or 3 diagonal entries.")
    if not isinstance(g, jax.core.Tracer) and bool(jnp.any(g < 0)):
        raise ValueError(f"Controller gain `{name}` = {g.tolist()} is invalid: gains must be >= 0. Fix: pass non-negative gains.")
    return g


class AbstractController(eqx.Module):
    """A controller ``(platform, t, state, integral, ref) -> (wrench (6,), integral_dot)``."""

    def init_state(self, platform: Platform) -> IntegralState:
        """Zero integrator states."""
        z = jnp.zeros(3, dtype=platform.mass.dtype)
        return IntegralState(int_p=z, int_R=z)

    @property
    def tracks_attitude(self) -> bool:
        """Whether it tracks the reference attitude ``R_r``, ``omega_r``, ``omega_dot_r`` (a full-pose reference);
        ``False`` for a controller that takes only the heading (checked before a flight)."""
        return False

    @property
    @abc.abstractmethod
    def required_rank(self) -> int | None:
        """Allocation rank this controller needs of a fixed-tilt platform (checked before a flight).

        ``6``: the whole unit-consistent ``G_s`` (it commands every wrench axis); ``4``:
        the thrust and torque rows ``[f_z; tau]`` (collective thrust plus three torques);
        ``None``: no requirement.
        """

    @abc.abstractmethod
    def __call__(self, platform: Platform, state: VehicleState, integral: IntegralState, ref: RefSample
                 ) -> tuple[Float[Array, "6"], IntegralState]:
        """Return ``(wrench_b (6,) [N, N m], d integral / dt)``."""

    def commanded_attitude(self, platform: Platform, state: VehicleState, integral, ref: RefSample
                           ) -> Float[Array, "3 3"]:
        """``(3, 3)`` the attitude (body to world) this controller steers ``state`` towards now.

        What the attitude error ``e_R`` of :func:`jaxrotor.metrics.orientation_error` is measured
        against (recorded as ``Trajectory.R_cmd``). The default is the reference attitude ``ref.R``:
        right for a controller that tracks it (:class:`FullyActuatedSE3`) and the fallback for a
        controller that does not say; one that computes its own desired attitude (an under-actuated
        vehicle tilting its thrust) overrides it. Same arguments as :meth:`__call__`.
        """
        return ref.R


def _set_gains(ctrl, **gains) -> None:
    """Validate and store the six ``(3,)`` diagonal gains (in ``__init__``)."""
    for name, value in gains.items():
        setattr(ctrl, name, _gain(value, name))


def _desired_force(ctrl, platform, state, integral, ref):
    """World-frame force ``m (g e3 + a_r + K_p e_p + K_v e_v + K_pi int e_p)`` and ``e_p``."""
    e_p = ref.p - state.p
    e_v = ref.v - state.v
    g_e3 = jnp.zeros(3, dtype=e_p.dtype).at[2].set(platform.gravity)
    f_w = platform.mass * (g_e3 + ref.a + ctrl.K_p * e_p + ctrl.K_v * e_v + ctrl.K_pi * integral.int_p)
    return f_w, e_p


def _attitude_torque(ctrl, platform, state, integral, R_r, omega_r, omega_dot_r):
    R, w = state.R, state.omega
    J = platform.inertia
    e_R = so3.attitude_error(R, R_r)
    RtRr = small.mtm(R, R_r)
    w_r = small.mv(RtRr, omega_r)
    e_w = w - w_r
    ff = -small.mv(J, jnp.cross(w, w_r) - small.mv(RtRr, omega_dot_r))
    tau = -ctrl.K_R * e_R - ctrl.K_w * e_w - ctrl.K_Ri * integral.int_R + jnp.cross(w, small.mv(J, w)) + ff
    return tau, e_R


@register("controller", "fully_actuated", options=_GAIN_OPTIONS)
class FullyActuatedSE3(AbstractController):
    """The paper's fully actuated geometric controller with integral action (Table III notation).

    Attributes (``(3,)`` diagonal gains):
        K_p [1/s^2], K_pi [1/s^3], K_v [1/s]: position, position-integral, velocity gains
            (accelerations, multiplied by ``m``).
        K_R [N m/rad], K_Ri [N m/(rad s)], K_w [N m s/rad]: attitude, attitude-integral and
            angular-velocity gains (torques).
    """

    K_p: Array
    K_pi: Array
    K_v: Array
    K_R: Array
    K_Ri: Array
    K_w: Array

    def __init__(self, K_p=TABLE_III["K_p"], K_pi=TABLE_III["K_pi"], K_v=TABLE_III["K_v"], K_R=TABLE_III["K_R"],
                 K_Ri=TABLE_III["K_Ri"], K_w=TABLE_III["K_w"]):
        _set_gains(self, K_p=K_p, K_pi=K_pi, K_v=K_v, K_R=K_R, K_Ri=K_Ri, K_w=K_w)

    @property
    def required_rank(self) -> int:
        """6: it commands a body force in every direction and three torques."""
        return 6

    @property
    def tracks_attitude(self) -> bool:
        """True: the attitude law tracks ``ref.R``, ``ref.omega`` and ``ref.omega_dot`` independently of the position."""
        return True

    def commanded_attitude(self, platform: Platform, state: VehicleState, integral: IntegralState, ref: RefSample
                           ) -> Float[Array, "3 3"]:
        """``(3, 3)`` the reference attitude ``ref.R``: the attitude law tracks it directly."""
        return ref.R

    def __call__(self, platform: Platform, state: VehicleState, integral: IntegralState, ref: RefSample
                 ) -> tuple[Float[Array, "6"], IntegralState]:
        f_w, e_p = _desired_force(self, platform, state, integral, ref)
        f_b = small.mtv(state.R, f_w)
        tau, e_R = _attitude_torque(self, platform, state, integral, ref.R, ref.omega, ref.omega_dot)
        return jnp.concatenate([f_b, tau]), IntegralState(int_p=e_p, int_R=e_R)


def _desired_attitude(f_w: Array, yaw: Array) -> Array:
    """``R_d = [b2 x b3, b2, b3]`` with ``b3 = f_w / |f_w|`` and ``b2 = b3 x b1_r / |.|``.

    NaN-safe: a zero commanded force keeps ``b3 = e3`` (level), and ``b3`` parallel to
    the heading ``b1_r`` takes ``b2`` from the body-frame ``y`` axis of the heading
    (finite values and derivatives everywhere).
    """
    e3 = jnp.zeros(3, dtype=f_w.dtype).at[2].set(1.0)
    b3 = safe_normalize(f_w, e3)
    b1r = jnp.stack([jnp.cos(yaw), jnp.sin(yaw), jnp.zeros_like(yaw)])
    b2_fallback = jnp.stack([-jnp.sin(yaw), jnp.cos(yaw), jnp.zeros_like(yaw)])
    b2 = safe_normalize(jnp.cross(b3, b1r), b2_fallback)
    return jnp.stack([jnp.cross(b2, b3), b2, b3], axis=1)


@register("controller", "underactuated", options=_GAIN_OPTIONS)
class UnderactuatedSE3(AbstractController):
    """Lee-Leok-McClamroch geometric controller for collinear (under-actuated) platforms.

    Thrust along body z only: ``f_b = (0, 0, f_w . R e3)``. The desired attitude
    follows the desired force direction and the reference heading ``ref.yaw``.
    ``omega_d`` and ``omega_dot_d`` come from the nominal force
    ``m (g e3 + a_r(t))`` differentiated in time with the reference jerk (snap
    taken as zero), i.e. the feed-forward part of Lee's controller.

    Gains as in :class:`FullyActuatedSE3` (``K_pi`` and ``K_Ri`` default to 0).
    """

    K_p: Array
    K_pi: Array
    K_v: Array
    K_R: Array
    K_Ri: Array
    K_w: Array

    def __init__(self, K_p=(6.0, 6.0, 8.0), K_pi=0.0, K_v=(4.5, 4.5, 5.0), K_R=(1.2, 1.2, 0.5), K_Ri=0.0,
                 K_w=(0.25, 0.25, 0.15)):
        _set_gains(self, K_p=K_p, K_pi=K_pi, K_v=K_v, K_R=K_R, K_Ri=K_Ri, K_w=K_w)

    @property
    def required_rank(self) -> int:
        """4: collective thrust along body z and three torques."""
        return 4

    def commanded_attitude(self, platform: Platform, state: VehicleState, integral: IntegralState, ref: RefSample
                           ) -> Float[Array, "3 3"]:
        """``(3, 3)`` ``R_d = [b2 x b3, b2, b3]``: body z along the desired force ``f_w``, heading ``ref.yaw``.

        The attitude the attitude law regulates ``state.R`` to (``e_R`` of :meth:`__call__` is taken
        about it), not the reference's ``ref.R`` (level with the heading): a vehicle that tilts its
        thrust to accelerate tracks ``R_d``, and its error against ``ref.R`` is the tilt it needs.
        """
        return _desired_attitude(_desired_force(self, platform, state, integral, ref)[0], ref.yaw)

    def __call__(self, platform: Platform, state: VehicleState, integral: IntegralState, ref: RefSample
                 ) -> tuple[Float[Array, "6"], IntegralState]:
        f_w, e_p = _desired_force(self, platform, state, integral, ref)
        g_e3 = jnp.zeros(3, dtype=e_p.dtype).at[2].set(platform.gravity)
        R_d = _desired_attitude(f_w, ref.yaw)

        # feed-forward rates from the nominal force m (g e3 + a_r), a_r' = j_r, a_r'' = 0
        def R_nom(s):
            return _desired_attitude(platform.mass * (g_e3 + ref.a + s * ref.j), ref.yaw)

        def omega_nom(s):
            Rn, dR = jax.jvp(R_nom, (s,), (jnp.ones_like(s),))
            return so3.vee(small.mtm(Rn, dR))

        zero = jnp.zeros((), dtype=e_p.dtype)
        omega_d, omega_dot_d = jax.jvp(omega_nom, (zero,), (jnp.ones_like(zero),))
        thrust = small.dot(f_w, state.R[:, 2])
        tau, e_R = _attitude_torque(self, platform, state, integral, R_d, omega_d, omega_dot_d)
        f_b = jnp.zeros(3, dtype=e_p.dtype).at[2].set(thrust)
        return jnp.concatenate([f_b, tau]), IntegralState(int_p=e_p, int_R=e_R)


def _tilt_to(axis: Float[Array, "3"]) -> Float[Array, "3 3"]:
    """``(3, 3)`` the smallest rotation ``Q`` with ``Q e3 = axis`` (unit, ``axis_z > -1``): Rodrigues with
    ``k = e3 x axis``, ``Q = I + [k]x + [k]x^2 / (1 + axis_z)``."""
    k = jnp.stack([-axis[1], axis[0], jnp.zeros_like(axis[0])])
    K = so3.hat(k)
    return jnp.eye(3, dtype=axis.dtype) + K + K @ K / (1.0 + axis[2])


#: Band [m] of the position error the tilted hover's position integrator takes (:func:`axis_wrench`): each axis
#: of ``e_p`` is clipped to ``+-AXIS_INTEGRAL_BAND`` before it is integrated. Measured on the co-designed tilted
#: hexarotor (``configs/design_fully_actuated_hex.toml``, auto gains, ``K_pi,z / K_p,z`` = 0.14 1/s): without the
#: clip the six losses settled 0.05-0.18 m off 6 s after the loss (the integrator wound up during a 0.25-0.97 m
#: drop), with it 0.03-0.05 m.
AXIS_INTEGRAL_BAND = 0.05


def axis_wrench(ctrl: AbstractController, platform: Platform, state: VehicleState, integral: IntegralState,
                ref: RefSample, axis: Float[Array, "3"]) -> tuple[Float[Array, "6"], IntegralState]:
    """Tilted full-pose hover: a fully actuated vehicle that lost wrench rank flies its thrust along a body axis.

    The vehicle keeps three torques and the force along the unit body-frame ``axis`` ``d`` (the zero-moment
    force direction of :func:`jaxrotor.tilted.hover_axis`); like a quadrotor with its thrust along body ``z``
    it turns that axis to the position loop's force and holds the reference heading:

        ``f_w = m (g e3 + a_r + K_p e_p + K_v e_v + K_pi int e_p)``  (the controller's own position loop)
        ``R_d = R_f(f_w, psi_r) Q(d)^T``  (``R_f``: body ``z`` along ``f_w`` with heading ``psi_r``;
        ``Q(d) e3 = d``, :func:`_tilt_to`), so ``R_d d = f_w / |f_w|``
        ``T = f_w . R d``,  ``tau`` = the attitude law towards ``R_d`` (``omega_d = 0``), ``w = (T d, tau)``
        ``d/dt int e_p = clip(e_p, -b, b)``  (``b`` = :data:`AXIS_INTEGRAL_BAND`)

    In hover ``R_d`` is constant (tilted by ``acos d_z``): position and attitude held. The position integrator
    takes the error clipped to ``+-b`` per axis: the loss drops the vehicle by up to a metre before the tilted
    hover catches it, and that excursion, integrated whole, winds the integrator up into an overshoot that the
    slow integral mode (time constant ``~K_p / K_pi``) takes many seconds to return; within ``b`` the law is the
    controller's own.

    Args:
        ctrl: the vehicle's controller (its position and attitude gains).
        platform: the vehicle (mass, inertia).
        state: the (measured) vehicle state.
        integral: the controller's integrator state.
        ref: the reference sample (its position, velocity, acceleration and heading ``yaw``).
        axis: ``(3,)`` unit body-frame thrust axis ``d``.

    Returns:
        ``(w, d_integral)``: the body wrench ``(6,)`` [N, N m] and the integrator state's derivative.
    """
    f_w, e_p = _desired_force(ctrl, platform, state, integral, ref)
    R_d = _desired_attitude(f_w, ref.yaw) @ _tilt_to(axis).T
    zero = jnp.zeros(3, dtype=f_w.dtype)
    tau, e_R = _attitude_torque(ctrl, platform, state, integral, R_d, zero, zero)
    thrust = jnp.dot(f_w, state.R @ axis)
    d_int_p = jnp.clip(e_p, -AXIS_INTEGRAL_BAND, AXIS_INTEGRAL_BAND)  # no windup from the loss' excursion
    return jnp.concatenate([thrust * axis, tau]), IntegralState(int_p=d_int_p, int_R=e_R)


#: Factors on ``K_p`` and ``K_v`` in :func:`primary_axis_wrench`: the relaxed hover's position loop, stiffer
#: than the full-pose one so that the drift of the spin-up is taken back within the settling time.
RELAXED_POSITION_GAIN = 1.5
RELAXED_VELOCITY_GAIN = 1.2
#: Factor on the roll/pitch rate gain ``K_w`` in :func:`primary_axis_wrench`: gentler than the full-pose loop,
#: so that thrust is not spent on torque the one-sided rotors cannot make.
RELAXED_RATE_GAIN = 0.5
#: Factor on ``K_R / K_w`` [1/s], the rate at which :func:`primary_axis_wrench` turns the axis to the force.
RELAXED_AXIS_GAIN = 0.5


def rotor_momentum(platform: Platform, rotor_speed: Float[Array, " n"]) -> Float[Array, "3"]:
    """``(3,)`` the rotors' angular momentum relative to the body, body frame [N m s]:
    ``h = sum_i J_r,i s_i omega_i z_i`` with ``s_i = -kappa_i`` (as in
    :func:`jaxrotor.dynamics.rotor_inertia_torque`), at the platform's design angles; ``rotor_speed`` ``(n,)``
    [rad/s]."""
    from .allocation import rotor_axes

    z = rotor_axes(platform, platform.alpha, platform.beta)
    return jnp.sum((platform.J_r * (-platform.kappa) * rotor_speed)[:, None] * z, axis=0)


def relaxed_force(ctrl: AbstractController, platform: Platform, state: VehicleState, integral: IntegralState,
                  ref: RefSample) -> Float[Array, "3"]:
    """``(3,)`` world force [N] the relaxed hover's position loop asks: ``m (g e3 + a_r + k_p K_p e_p + k_v K_v
    e_v)`` (:data:`RELAXED_POSITION_GAIN`, :data:`RELAXED_VELOCITY_GAIN`; no integral)."""
    gains = (RELAXED_POSITION_GAIN * ctrl.K_p, RELAXED_VELOCITY_GAIN * ctrl.K_v, jnp.zeros_like(ctrl.K_pi))
    relaxed = eqx.tree_at(lambda c: (c.K_p, c.K_v, c.K_pi), ctrl, gains)
    return _desired_force(relaxed, platform, state, integral, ref)[0]


def force_direction(R: Float[Array, "3 3"], f_w: Float[Array, "3"]) -> Float[Array, "3"]:
    """``(3,)`` ``d = R^T f_w / |f_w|``: the world force's direction in the body frame (``R^T e3`` for a zero
    force)."""
    return R.T @ safe_normalize(f_w, jnp.zeros(3, dtype=f_w.dtype).at[2].set(1.0))


def primary_axis_wrench(ctrl: AbstractController, platform: Platform, state: VehicleState, integral: IntegralState,
                        ref: RefSample, axis: Float[Array, "3"] | None = None, f_w: Float[Array, "3"] | None = None
                        ) -> tuple[Float[Array, "6"], IntegralState]:
    """Relaxed hover: the law of a collinear vehicle that gave up its yaw torque and spins.

    A quadrotor that lost a rotor keeps a one-sided torque about one axis (the rotor opposite the lost one
    cannot push below zero); spinning about its thrust axis, the gyroscopic coupling turns that torque into
    two-sided control of the axis' direction (Mueller and D'Andrea's relaxed hover). The body-fixed unit
    ``axis`` ``n`` (default body ``z``) is pointed along the desired force of the position loop:

        ``f_w = m (g e3 + a_r + k_p K_p e_p + k_v K_v e_v)``  (``K_p``, ``K_v`` of ``ctrl``, no integral)
        ``N = f_w / |f_w|`` (world),  ``d = R^T N`` (body),  ``T = |f_w| / max(d_z, 1/2)``
        ``omega_d = (omega . d) d + k_n (n x d)``,  ``k_n = k_a (K_R,x + K_R,y) / (K_w,x + K_w,y)`` [1/s]
        ``tau = -k_w K_w (omega - omega_d) + omega x (J omega + h)``

    ``d' = d x omega`` and ``d x (n x d) = n - (n . d) d``, so ``d`` turns towards ``n`` while the spin
    ``omega . d`` is left as it is (no yaw torque is commanded: the yaw-released allocation
    :func:`jaxrotor.flight.yaw_released_allocation` ignores the yaw entry). ``h`` is the rotors' momentum
    (:func:`rotor_momentum`); ``k_p``, ``k_v``, ``k_w``, ``k_a`` are :data:`RELAXED_POSITION_GAIN`,
    :data:`RELAXED_VELOCITY_GAIN`, :data:`RELAXED_RATE_GAIN` and :data:`RELAXED_AXIS_GAIN`. In the steady spin
    the body ``z`` axis runs on a cone about the vertical (the one-sided torque balances the gyroscopic one):
    the mean thrust, not the instantaneous, holds the vehicle (judged by :func:`jaxrotor.verdict.mean_tilt`).

    Args:
        ctrl: the vehicle's controller (its ``K_p``, ``K_v``, ``K_R``, ``K_w``).
        platform: the vehicle (its mass, inertia and rotor spin inertias).
        state: the (measured) vehicle state.
        integral: the controller's integrator states (read by the position loop, not advanced).
        ref: the reference sample (position, velocity, acceleration).
        axis: ``(3,)`` unit primary axis in the body frame (``None``: ``e3``).
        f_w: ``(3,)`` the position loop's force [N] when already computed (``None``: :func:`relaxed_force`).

    Returns:
        ``(wrench_b (6,) [N, N m], d integral / dt)`` (the integrators hold still).
    """
    if f_w is None:
        f_w = relaxed_force(ctrl, platform, state, integral, ref)
    e3 = jnp.zeros(3, dtype=f_w.dtype).at[2].set(1.0)
    d = force_direction(state.R, f_w)
    w = state.omega
    n = e3 if axis is None else axis
    k_n = RELAXED_AXIS_GAIN * (ctrl.K_R[0] + ctrl.K_R[1]) / jnp.maximum(ctrl.K_w[0] + ctrl.K_w[1], 1e-12)
    w_d = jnp.dot(w, d) * d + k_n * jnp.cross(n, d)
    h = rotor_momentum(platform, state.rotor_speed)
    tau = -RELAXED_RATE_GAIN * ctrl.K_w * (w - w_d) + jnp.cross(w, platform.inertia @ w + h)
    thrust = jnp.linalg.norm(f_w) / jnp.maximum(d[2], 0.5)
    f_b = jnp.zeros(3, dtype=f_w.dtype).at[2].set(thrust)
    zero = jnp.zeros_like(f_w)
    return jnp.concatenate([f_b, tau]), IntegralState(int_p=zero, int_R=zero)
