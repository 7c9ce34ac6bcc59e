"""Differentiable actuation measures for design optimisation (pure JAX, jit-able, vmappable).

Gradients flow to every array leaf of the platform (``alpha_0``, ``beta_0``, arm
length, masses, ...). Units are SI, forces and moments in the body frame (FLU)
at the centre of mass, inputs ``u_i = omega_i^2`` [rad^2/s^2]. The exact,
linear-programming counterparts of these numbers are in :mod:`jaxrotor.analysis.exact`.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import Float

from ..allocation import force_matrix, hover_inputs, scaled_allocation_matrix
from ..design.platform import AngleLike, Platform
from ._system import normalised
from .barrier import barrier_lp, barrier_schedule, null_projector

__all__ = [
    "singular_values",
    "condition_number",
    "hover_efficiency",
    "horizontal_directions",
    "smooth_lateral_force_capability",
    "rotor_loss_margin",
    "rotor_loss_axis_margin",
]


@jax.custom_jvp
def _eigvalsh(A: Array) -> Array:
    return jnp.linalg.eigvalsh(A)


@_eigvalsh.defjvp
def _eigvalsh_jvp(primals, tangents):
    # d lambda_k = v_k^T dA v_k. Unlike jnp.linalg.eigh's rule this never divides by
    # eigenvalue gaps, so symmetric designs (repeated singular values) get finite
    # derivatives; along symmetry-preserving perturbations they are exact.
    (A,), (dA,) = primals, tangents
    w, V = jnp.linalg.eigh(A)
    dw = jnp.einsum("ji,jk,ki->i", V, dA, V)
    return w, dw


def _gram_eigenvalues(platform: Platform, alpha, beta) -> Array:
    """Ascending eigenvalues ``lambda_k >= 0`` of ``G_s G_s^T`` (round-off below zero clamped to zero)."""
    Gs = scaled_allocation_matrix(platform, alpha, beta)
    return jnp.maximum(_eigvalsh(Gs @ Gs.T), 0.0)


def singular_values(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                   ) -> Float[Array, "6"]:
    """Singular values of the unit-consistent ``G_s`` (:func:`jaxrotor.allocation.scaled_allocation_matrix`), descending.

    ``sigma_k = sqrt(lambda_k)`` with ``lambda_k >= 0`` the eigenvalues of the
    ``6 x 6`` matrix ``G_s G_s^T`` (round-off below zero clamped to zero), with a
    gap-free derivative rule, so gradients stay finite when singular values repeat
    (symmetric layouts).

    Returns:
        ``(6,)`` dimensionless singular values (zeros beyond the rank, up to round-off).
    """
    return jnp.sqrt(_gram_eigenvalues(platform, alpha, beta)[::-1])


def condition_number(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                    ) -> Float[Array, ""]:
    """Condition number ``kappa = sigma_1 / sigma_6`` of the unit-consistent ``G_s`` (differentiable).

    ``kappa(G_s) = sqrt(lambda_max / lambda_min)`` with ``lambda >= 0`` the
    eigenvalues of ``G_s G_s^T`` (:func:`jaxrotor.allocation.scaled_allocation_matrix`
    for the scaling; round-off below zero is clamped to zero). Finite only for a
    fully actuated design (``rank G = 6``); for a rank-deficient ``G`` the value is
    ``inf`` (or huge, from round-off) and its gradient meaningless, never NaN.
    Pure JAX, jit-able; derivatives use ``d lambda = v^T d(G_s G_s^T) v``, finite
    also when eigenvalues repeat.

    Args:
        platform: the design.
        alpha: optional cant angle(s) [rad] (shape of ``platform.alpha``).
        beta: optional dihedral angle(s) [rad] (shape of ``platform.beta``).

    Returns:
        ``()`` dimensionless condition number ``>= 1``.
    """
    lam = _gram_eigenvalues(platform, alpha, beta)
    return jnp.sqrt(lam[-1] / lam[0])


def hover_efficiency(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                    ) -> Float[Array, ""]:
    """Hover efficiency ``|sum_i f_i| / sum_i |f_i|`` at the minimum-norm hover input (differentiable).

    With ``u_h = G^+ [0, 0, m g, 0, 0, 0]`` (level attitude, zero moment,
    :func:`jaxrotor.allocation.hover_inputs`), ``eta = |F u_h| / sum_i c_f,i |u_h,i|``:
    the fraction of the rotors' total thrust magnitude that holds the weight; 1 for a
    flat design, ``cos(alpha_0) cos(beta_0)`` for the symmetric tilted hexarotor.
    It equals the exact ``ActuationReport.hover_efficiency`` whenever ``u_h``
    respects the input bounds. Pure JAX, jit-able, smooth where ``u_h > 0``.

    Returns:
        ``()`` efficiency in ``(0, 1]``.
    """
    u = hover_inputs(platform, alpha, beta)
    return jnp.linalg.norm(force_matrix(platform, alpha, beta) @ u) / jnp.sum(platform.c_f * jnp.abs(u))


def horizontal_directions(n_directions: int, dtype=None) -> Float[np.ndarray, "k 2"]:
    """The set of horizontal unit directions used by the lateral-force capability.

    ``d_k = (cos theta_k, sin theta_k)``, ``theta_k = 2 pi k / K``, ``k = 0..K-1``,
    starting on ``x_B`` (body frame).

    Returns:
        ``(K, 2)`` NumPy array.
    """
    K = int(n_directions)
    if K < 1:
        raise ValueError(f"`n_directions` = {n_directions!r} is invalid: need at least one direction. Fix: pass K >= 1.")
    th = 2 * np.pi * np.arange(K) / K
    return np.stack([np.cos(th), np.sin(th)], axis=1).astype(dtype or float)


def _check_temperature(temperature) -> None:
    if isinstance(temperature, (int, float)) and temperature < 0:
        raise ValueError(f"`temperature` = {temperature!r} is invalid: it must be >= 0. Fix: pass 0 for a hard "
                         "minimum or a small positive value such as 1e-3.")


def _lateral_rho(A: Array, lo: Array, hi: Array, x0: Array, d: Array, t_schedule: Array) -> Array:
    """Barrier-smoothed ``rho(d)`` (units of ``m g``): ``max d . A_xy x`` with ``A x = (s d, 1, 0)``, bounds."""
    n = A.shape[1]
    d_perp = jnp.stack([-d[1], d[0]])
    C = jnp.concatenate([(d_perp @ A[:2])[None], A[2:]], axis=0)  # (5, n): no force across d, m g up, M = 0
    finite = jnp.isfinite(hi)
    eye = jnp.eye(n, dtype=A.dtype)
    g = jnp.concatenate([eye, -eye], axis=0)  # x - lo >= 0, hi - x >= 0
    h = jnp.concatenate([lo, -jnp.where(finite, hi, 0.0)])
    mask = jnp.concatenate([jnp.ones(n, dtype=bool), finite])
    return barrier_lp(d @ A[:2], g, h, mask, x0, null_projector(C), jnp.zeros(n, dtype=A.dtype), t_schedule)


def smooth_lateral_force_capability(
    platform: Platform,
    alpha: AngleLike | None = None,
    beta: AngleLike | None = None,
    *,
    n_directions: int = 36,
    temperature: float = 1e-3,
    barrier_t_max: float = 1e5,
    stages: int = 6,
    newton_steps: int = 12,
) -> Float[Array, ""]:
    """Smooth, differentiable lateral-force capability at hover [N] (pure JAX, jit-able).

    The exact capability (:func:`jaxrotor.analysis.lateral_force_capability`) is
    ``c = min_k rho(d_k)`` with ``rho(d) = max { s : F u = [s d; m g], M u = 0,
    u_min <= u <= u_max }`` over the directions of :func:`horizontal_directions`.
    Here each linear program is replaced by its log-barrier central point
    (:func:`jaxrotor.analysis.barrier.barrier_lp`),

        ``max_u  t (d . F_xy u) + sum_i log(u_i - u_min,i) + sum_i log(u_max,i - u_i)``

    subject to the equalities (damped Newton steps along the path
    ``t = barrier_t_max 10^-(stages-1) .. barrier_t_max`` in normalised units), a
    smooth function of the design that undershoots ``rho`` by at most ``2 n / t``
    times ``m g``; the minimum over directions is replaced by the soft minimum
    ``-tau log sum_k exp(-rho_k / tau)`` with ``tau = temperature * m g``, which
    undershoots by at most ``tau log K``. The value is therefore a slightly
    conservative version of the exact one (``temperature=0`` takes the plain
    minimum). Gradients are the implicit-function derivatives of the barrier
    optimum, exact for this smooth function.

    Requirements: the minimum-norm hover input must lie strictly inside the
    bounds (it is the barrier's starting point); otherwise the result is NaN.
    Where the constraint rank changes (e.g. at exactly zero tilt) the value is
    right but the gradient is not defined. In float32 use ``barrier_t_max <= 1e4``.

    Args:
        platform: the design (its ``u_min``/``u_max`` are the input bounds).
        alpha: optional cant angle(s) [rad] (shape of ``platform.alpha``).
        beta: optional dihedral angle(s) [rad] (shape of ``platform.beta``).
        n_directions: number ``K`` of equally spaced horizontal directions (static).
        temperature: soft-min temperature as a fraction of the weight ``m g``; 0 for a hard min.
        barrier_t_max: final barrier weight (normalised units).
        stages: number of barrier weights, each 10 times the previous (static).
        newton_steps: damped Newton steps per barrier weight (static).

    Returns:
        ``()`` capability [N].

    Raises:
        ValueError: ``temperature < 0``.
    """
    _check_temperature(temperature)
    return _smooth_lateral(platform, alpha, beta, jnp.asarray(temperature), jnp.asarray(barrier_t_max),
                           int(n_directions), int(stages), int(newton_steps))


@eqx.filter_jit
def _smooth_lateral(platform, alpha, beta, temperature, barrier_t_max, n_directions, stages, newton_steps):
    A, lo, hi, _, x0 = normalised(platform, alpha, beta)
    dirs = jnp.asarray(horizontal_directions(n_directions), dtype=A.dtype)
    t_schedule = barrier_schedule(barrier_t_max, stages, newton_steps, A.dtype)
    rho = jax.vmap(lambda d: _lateral_rho(A, lo, hi, x0, d, t_schedule))(dirs)
    tau = jnp.where(temperature > 0, temperature, 1.0).astype(A.dtype)
    soft = -tau * jax.nn.logsumexp(-rho / tau)
    value = jnp.where(temperature > 0, soft, jnp.min(rho))
    inside = jnp.all(x0 > lo) & jnp.all(x0 < hi)
    return jnp.where(inside, value, jnp.nan) * platform.mass * platform.gravity


def _max_min_ratio(Ms: Array, t_schedule: Array) -> Array:
    """Barrier-smoothed ``max s`` s.t. ``Ms x = 0``, ``mean(x) = 1``, ``x_i >= s`` (see :func:`rotor_loss_margin`)."""
    m = Ms.shape[1]
    dtype = Ms.dtype
    C = jnp.concatenate([
        jnp.concatenate([Ms, jnp.zeros((Ms.shape[0], 1), dtype)], axis=1),
        jnp.concatenate([jnp.full((1, m), 1.0 / m, dtype), jnp.zeros((1, 1), dtype)], axis=1),
    ], axis=0)  # (4, m + 1): moments zero, mean input one; the last variable is s
    b = jnp.zeros(C.shape[0], dtype).at[-1].set(1.0)
    z0 = jnp.linalg.pinv(C) @ b
    e_s = jnp.zeros(m + 1, dtype).at[m].set(1.0)
    g = jnp.concatenate([jnp.eye(m, dtype=dtype), -jnp.ones((m, 1), dtype)], axis=1)  # x_i - s >= 0
    y0 = (jnp.min(z0[:m]) - 1.0) * e_s  # strictly feasible: x_i - s >= 1
    return barrier_lp(e_s, g, jnp.zeros(m, dtype), jnp.ones(m, dtype=bool), z0, null_projector(C), y0, t_schedule)


def _soft_min(r: Array, temperature: float) -> Array:
    """``-tau log sum_j exp(-r_j / tau)`` (``tau = temperature`` > 0, static; at most ``tau log n`` below the hard
    minimum), or ``min_j r_j`` for ``temperature = 0``: the worst rotor loss of the margins ``r`` ``(n,)``."""
    if temperature > 0:
        return -temperature * jax.nn.logsumexp(-r / temperature)
    return jnp.min(r)


def rotor_loss_margin(
    platform: Platform,
    alpha: AngleLike | None = None,
    beta: AngleLike | None = None,
    *,
    temperature: float = 1e-3,
    barrier_t_max: float = 1e6,
    stages: int = 6,
    newton_steps: int = 10,
) -> Float[Array, ""]:
    """Differentiable static-hover margin after the worst single rotor loss (pure JAX).

    For each rotor ``j`` the column ``j`` of the moment matrix is removed and the
    linear program

        ``r_j = max s  s.t.  M_-j x = 0,  mean_i x_i = 1,  x_i >= s``

    is solved, i.e. the best ``min_i x_i / mean_i x_i`` over zero-moment inputs of
    the remaining rotors (the margin of :func:`jaxrotor.analysis.static_hoverability`
    and :class:`jaxrotor.analysis.RotorLoss`). ``r_j > 0`` means some input with every
    remaining rotor spinning gives zero moment (the platform can then hover in the
    attitude that points ``F x`` up, if that force is non-zero); unlike the exact
    report, ``r_j`` is negative (not clipped to 0) when it cannot, which tells an
    optimiser how far it is from fail-safe. Input bounds are not used. The margin is
    the soft minimum ``-tau log sum_j exp(-r_j / tau)`` over ``j`` (``tau = temperature``;
    at most ``tau log n`` below the hard minimum).

    Each LP is replaced by its log-barrier central point ``max t s + sum_i log(x_i - s)``
    on the affine set (:func:`jaxrotor.analysis.barrier.barrier_lp`), followed along
    ``t = barrier_t_max 10^-(stages-1) .. barrier_t_max`` by damped Newton steps
    (gap at most ``(n-1) / barrier_t_max``); the gradient is the implicit-function
    derivative of the barrier optimum, exact for this smooth function. The moment
    matrix is the unit-consistent one (:func:`jaxrotor.allocation.scaled_allocation_matrix`),
    which does not change the margin.

    Args:
        platform: the design.
        alpha: optional cant angle(s) [rad] (shape of ``platform.alpha``).
        beta: optional dihedral angle(s) [rad] (shape of ``platform.beta``).
        temperature: soft-min temperature (dimensionless, static); 0 for a hard minimum.
        barrier_t_max: final barrier weight (normalised units, static).
        stages: number of barrier weights, each 10 times the previous (static).
        newton_steps: damped Newton steps per barrier weight (static).

    Returns:
        ``()`` dimensionless margin (``<= 1``; ``1`` when equal inputs give zero moment).

    Raises:
        ValueError: ``temperature < 0``.
    """
    _check_temperature(temperature)
    Gs = scaled_allocation_matrix(platform, alpha, beta)
    n = Gs.shape[1]
    keep = np.array([[i for i in range(n) if i != j] for j in range(n)])
    Ms = Gs[3:]
    t_schedule = barrier_schedule(barrier_t_max, stages, newton_steps, Gs.dtype)
    r = jax.vmap(lambda idx: _max_min_ratio(Ms[:, idx], t_schedule))(jnp.asarray(keep))
    return _soft_min(r, temperature)


def rotor_loss_axis_margin(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None, *,
                           temperature: float = 1e-3) -> Float[Array, ""]:
    """Differentiable margin of the tilted full-pose hover after the worst single rotor loss (pure JAX).

    For each rotor ``j``, :func:`jaxrotor.tilted.axis_margin` of the normalised system with column ``j`` zeroed
    (``A``, bounds ``lo``, ``hi``, weight 1: the system :func:`jaxrotor.analysis.rotor_loss` passes to
    :func:`jaxrotor.tilted.hover_axis`): the best margin ``min_i min(x_i - lo_i, hi_i - x_i) / mean_i x_i`` of a
    zero-moment hover along a body axis tilted at most :data:`jaxrotor.tilted.MAX_AXIS_TILT`, lowered by the
    tilt beyond it. ``r_j >=`` :data:`jaxrotor.tilted.AXIS_MARGIN` exactly when the tilted hover after losing ``j``
    is feasible, i.e. when the exact analysis calls the loss of a rank-6 vehicle ``"full_pose"`` by its tilted
    hover and the flight computer flies it (:func:`jaxrotor.flight.fault_aware`). Unlike
    :func:`rotor_loss_margin` it counts the upper input bounds (the motors' top speeds) and the tilt the vehicle
    must hold. The worst loss is the soft minimum ``-tau log sum_j exp(-r_j / tau)`` (``tau = temperature``, at
    most ``tau log n`` below the hard minimum; 0 for the hard minimum).

    Args:
        platform: the design.
        alpha: optional cant angle(s) [rad] (shape of ``platform.alpha``).
        beta: optional dihedral angle(s) [rad] (shape of ``platform.beta``).
        temperature: soft-min temperature (dimensionless, static).

    Returns:
        ``()`` dimensionless margin (``<= 1``).

    Raises:
        ValueError: ``temperature < 0``.
    """
    from ..tilted import axis_margin

    _check_temperature(temperature)
    s = normalised(platform, alpha, beta)
    n = s.A.shape[1]
    eye = jnp.eye(n, dtype=bool)

    def one(j_mask):
        alive = ~j_mask
        A = jnp.where(alive[None, :], s.A, 0.0)
        return axis_margin(A, jnp.where(alive, s.lo, 0.0), jnp.where(alive, s.hi, jnp.inf), 1.0, alive=alive)

    r = jax.vmap(one)(eye)
    return _soft_min(r, temperature)


def hover_power(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                ) -> Float[Array, ""]:
    """Mechanical rotor power in level hover ``P_h = sum_i c_tau,i |u_h,i|^(3/2)`` [W] (differentiable).

    ``u_h = G^+ [m g e_3; 0]`` (:func:`jaxrotor.allocation.hover_inputs`): the shaft power
    ``Q_i omega_i = c_tau,i omega_i^3`` the rotors deliver holding the vehicle level and still.
    A platform built from parts carries its mass, its centre of mass (an offset payload makes
    ``u_h`` uneven) and its propeller's ``c_tau``, so ``P_h`` follows the arm length, the
    propeller diameter and every mass.

    Returns:
        ``()`` power [W].
    """
    u = hover_inputs(platform, alpha, beta)
    return jnp.sum(platform.c_tau * jnp.abs(u) ** 1.5)


def nominal_thrust_to_weight(platform: Platform) -> Float[Array, ""]:
    """``sum_i c_f,i rotor_speed_max,i^2 / (m g)``: every rotor at full speed over the weight (differentiable).

    With parts the top speed is the motor's on the battery's nominal voltage (or its current
    limit), so the ratio follows the motor, propeller and battery. ``inf`` for unbounded rotors.
    """
    return jnp.sum(platform.c_f * platform.rotor_speed_max**2) / (platform.mass * platform.gravity)


def angular_authority(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                      ) -> Float[Array, "3"]:
    """Largest angular acceleration about each body axis at hover before a rotor reaches a bound [rad/s^2].

    With the hover input ``u_h`` and the pseudo-inverse input direction of a pure angular
    acceleration about axis ``k``, ``d_k = G^+ [0; J e_k]`` (no force change), the authority is
    ``a_k = min_i h_i / |d_k,i|`` with the headroom ``h_i = min(u_max,i - u_h,i, u_h,i - u_min,i)``
    (symmetric in the sign of the acceleration). Torque authority grows with the arm length,
    the inertia ``J`` with its square: with parts the ratio has an optimum arm length.
    Differentiable almost everywhere (a minimum over rotors).

    Returns:
        ``(3,)`` ``(a_x, a_y, a_z)`` [rad/s^2] (``inf`` for unbounded rotors).
    """
    from ..allocation import allocation_matrix

    G = allocation_matrix(platform, alpha, beta)
    Gp = jnp.linalg.pinv(G)
    u = hover_inputs(platform, alpha, beta)
    d = Gp[:, 3:] @ platform.inertia  # (n, 3): input per unit angular acceleration about each axis
    head = jnp.minimum(platform.u_max - u, u - platform.u_min)
    ratio = head[:, None] / jnp.maximum(jnp.abs(d), 1e-300)
    return jnp.min(jnp.where(jnp.abs(d) > 1e-15 * jnp.max(jnp.abs(d)), ratio, jnp.inf), axis=0)
