"""Actuation analysis: what a design can do with its rotors (paper Sec. III-A, ref. [4]).

Two layers, one vocabulary (``docs/analysis.md`` has the theory and every definition):

* **Exact reports** (:func:`analyze` and the functions it calls) work on a
  concrete platform, in float64 NumPy, with linear programs solved by SciPy's
  HiGHS: ranks of ``F``, ``M``, ``G``; the force-moment decoupling class from
  ``D = F ker(M)`` (Michieletto, Ryll, Franchi, IEEE T-RO 2018); static
  hoverability and fail-safe robustness to the loss of one rotor; the hover
  input, thrust-to-weight ratio, hover efficiency, lateral-force capability and
  torque authority at hover under the input bounds ``u_min <= u <= u_max``; the
  unit-consistent singular values and condition number of ``G``; the
  mixer diagnostics of ``seeds/002`` (unreachable wrench axes, yaw authority,
  balanced torque rows).
* **Differentiable measures** (:func:`condition_number`, :func:`hover_efficiency`,
  :func:`smooth_lateral_force_capability`) are pure JAX, jit-able and vmappable,
  with gradients with respect to every array leaf of the platform (``alpha_0``,
  ``beta_0``, arm length, ...), for design optimisation.

Units are SI; every force and moment is in the body frame (FLU) at the centre of
mass; inputs are ``u_i = omega_i^2`` [rad^2/s^2].

**Normalisation.** Linear programs are solved in the dimensionless variables
``x = u / u_ref`` with ``u_ref = m g / sum_i c_f,i`` (the common input with
which vertical rotors would just lift the weight) on the matrix
``A = diag(1, 1, 1, 1/L, 1/L, 1/L) G / sum_i c_f,i``, where ``L`` is the mean hub
distance ``mean_i |p_i|`` (the arm length of a star layout). Then
``A x = (f_c / (m g), tau_c / (m g L))``. The reported unit-consistent allocation
matrix is ``G_s = diag(1, 1, 1, 1/L, 1/L, 1/L) G / mean_i c_f,i`` (``= n A``): its
force columns are the unit spin axes (times ``c_f,i / mean c_f``), its moment
columns ``p_i/L x z_i + kappa_i c_tau,i/(c_f,i L) z_i``, all dimensionless.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from ..allocation import force_matrix, moment_matrix
from .._util import to_jsonable
from ..design.platform import Platform, rotor_positions

__all__ = [
    "WRENCH_AXES",
    "DECOUPLING_CLASSES",
    "ActuationReport",
    "RotorLoss",
    "analyze",
    "ranks",
    "decoupling",
    "static_hoverability",
    "rotor_loss",
    "hover_solution",
    "thrust_to_weight",
    "lateral_force_profile",
    "lateral_force_capability",
    "lateral_force_set",
    "zero_moment_force_set",
    "max_torques_at_hover",
    "unreachable_axes",
    "yaw_authority",
    "torque_rows_balanced",
    "characteristic_length",
    "scaled_allocation_matrix",
    "singular_values",
    "condition_number",
    "hover_efficiency",
    "smooth_lateral_force_capability",
    "horizontal_directions",
]

#: Names of the six body-wrench axes, in the row order of ``G = [F; M]``. The
#: ``seeds/002`` vocabulary: ``thrust`` is the body ``z`` force, ``roll``/``pitch``/``yaw``
#: the moments about ``x_B``/``y_B``/``z_B``.
WRENCH_AXES = ("fx", "fy", "thrust", "roll", "pitch", "yaw")

#: Force-moment decoupling classes by ``dim D``, ``D = F ker(M)``: 0, 1-2, 3.
DECOUPLING_CLASSES = ("fully coupled", "partially coupled", "decoupled")

_MARGIN_TOL = 1e-7  # a hover margin below this counts as zero (LP tolerance is ~1e-9)


# =========================================================================== matrices


def characteristic_length(platform: Platform) -> Array:
    """Mean hub distance ``L = mean_i |p_i|`` [m] used to make moments comparable with forces.

    Equals ``platform.arm_length`` for layouts built from eq. (3).
    """
    return jnp.mean(jnp.linalg.norm(rotor_positions(platform), axis=1))


def scaled_allocation_matrix(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> Array:
    """Unit-consistent allocation matrix ``G_s = diag(1,1,1,1/L,1/L,1/L) G / mean_i c_f,i``.

    ``G = [F; M]`` of eq. (10) mixes newtons and newton-metres; dividing the moment
    rows by the characteristic length ``L`` (:func:`characteristic_length`) and the
    whole matrix by the mean thrust coefficient makes every entry dimensionless and
    of order one: force column ``i`` is ``(c_f,i / mean c_f) z_i``, moment column
    ``i`` is ``(c_f,i / mean c_f) (p_i / L x z_i) + (kappa_i c_tau,i / (mean c_f L)) z_i``.
    Its singular values and condition number do not depend on the choice of units.

    Args:
        platform: the design.
        alpha, beta: optional tilt angles (shape of ``platform.alpha`` / ``platform.beta``).

    Returns:
        ``(6, n)`` dimensionless matrix (differentiable in every platform leaf).
    """
    F = force_matrix(platform, alpha, beta)
    M = moment_matrix(platform, alpha, beta)
    L = characteristic_length(platform)
    cf = jnp.mean(platform.c_f)
    return jnp.concatenate([F, M / L], axis=0) / cf


# =========================================================================== differentiable measures


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


def singular_values(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> Array:
    """Singular values of the unit-consistent ``G_s`` (:func:`scaled_allocation_matrix`), descending.

    Computed as square roots of the eigenvalues of the ``6 x 6`` matrix
    ``G_s G_s^T`` with a gap-free derivative rule, so gradients stay finite when
    singular values repeat (symmetric layouts).

    Returns:
        ``(6,)`` dimensionless singular values (zeros beyond the rank, up to round-off).
    """
    Gs = scaled_allocation_matrix(platform, alpha, beta)
    lam = _eigvalsh(Gs @ Gs.T)[::-1]
    return jnp.sqrt(jnp.maximum(lam, 0.0))


def condition_number(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> Array:
    """Condition number ``sigma_1 / sigma_6`` of the unit-consistent ``G_s`` (differentiable).

    ``kappa(G_s) = sqrt(lambda_max / lambda_min)`` of ``G_s G_s^T`` (see
    :func:`scaled_allocation_matrix` for the scaling). Finite only for a fully
    actuated design (``rank G = 6``); for a rank-deficient ``G`` the value is huge
    or ``inf`` and its gradient meaningless. Pure JAX, jit-able; derivatives use
    ``d lambda = v^T d(G_s G_s^T) v``, finite also when eigenvalues repeat.

    Args:
        platform: the design.
        alpha, beta: optional tilt angles.

    Returns:
        ``()`` dimensionless condition number ``>= 1``.
    """
    Gs = scaled_allocation_matrix(platform, alpha, beta)
    lam = _eigvalsh(Gs @ Gs.T)
    return jnp.sqrt(lam[-1] / lam[0])


def _normalised(platform: Platform, alpha, beta):
    """JAX version of the LP normalisation: ``A`` (6, n), weights ``c_f / sum c_f``, bounds in ``x``."""
    F = force_matrix(platform, alpha, beta)
    M = moment_matrix(platform, alpha, beta)
    L = characteristic_length(platform)
    cf_sum = jnp.sum(platform.c_f)
    A = jnp.concatenate([F, M / L], axis=0) / cf_sum
    u_ref = platform.mass * platform.gravity / cf_sum
    return A, platform.c_f / cf_sum, platform.u_min / u_ref, platform.u_max / u_ref


def _pinv_hover(A: Array) -> Array:
    b = jnp.zeros(6, dtype=A.dtype).at[2].set(1.0)
    return jnp.linalg.pinv(A) @ b


def hover_efficiency(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> Array:
    """Hover efficiency ``|sum_i f_i| / sum_i |f_i|`` at the minimum-norm hover input (differentiable).

    With ``u_h = G^+ [0, 0, m g, 0, 0, 0]`` (level attitude, zero moment, the input of
    :func:`jaxrotor.allocation.hover_inputs`), ``eta = |F u_h| / sum_i c_f,i |u_h,i|``:
    the fraction of the rotors' total thrust magnitude that holds the weight; 1 for a
    flat design, ``cos(alpha_0) cos(beta_0)`` for the symmetric tilted hexarotor.
    It equals the exact :attr:`ActuationReport.hover_efficiency` whenever ``u_h``
    respects the input bounds. Pure JAX, jit-able, smooth where ``u_h > 0``.

    Returns:
        ``()`` efficiency in ``(0, 1]``.
    """
    A, w, _, _ = _normalised(platform, alpha, beta)
    x = _pinv_hover(A)
    return jnp.linalg.norm(A[:3] @ x) / jnp.sum(w * jnp.abs(x))


def horizontal_directions(n_directions: int, dtype=None) -> np.ndarray:
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


def _barrier_lateral(A, lo, hi, x0, d, t_schedule):
    """Barrier-smoothed max lateral force along ``d`` (units of ``m g``), see :func:`smooth_lateral_force_capability`."""
    n = A.shape[1]
    d_perp = jnp.stack([-d[1], d[0]])
    C = jnp.concatenate([(d_perp @ A[:2])[None], A[2:]], axis=0)  # (5, n): no lateral force across d, mg up, M = 0
    c = d @ A[:2]  # lateral force along d per unit x
    P = jnp.eye(n, dtype=A.dtype) - jnp.linalg.pinv(C) @ C  # projector onto ker C
    finite = jnp.isfinite(hi)
    hi_safe = jnp.where(finite, hi, 0.0)

    def newton_step(z, t, A_, c_, P_, x0_, lo_, hi_):
        x = x0_ + P_ @ z
        s_lo = x - lo_
        s_hi = jnp.where(finite, hi_ - x, 1.0)
        g_x = -t * c_ - 1.0 / s_lo + jnp.where(finite, 1.0 / s_hi, 0.0)
        h_x = 1.0 / s_lo**2 + jnp.where(finite, 1.0 / s_hi**2, 0.0)
        g = P_ @ g_x
        H = P_ @ (h_x[:, None] * P_) + (jnp.eye(n, dtype=A_.dtype) - P_)
        dz = -jnp.linalg.solve(H, g)
        lam = jnp.sqrt(jnp.maximum(-(g @ dz), 0.0))
        return dz, lam

    consts = jax.lax.stop_gradient((A, c, P, x0, lo, hi_safe))

    def body(z, t):
        dz, lam = newton_step(z, t, *consts)
        return z + dz / (1.0 + lam), None  # damped Newton: stays strictly feasible (self-concordance)

    z0 = jnp.zeros(n, dtype=A.dtype)
    z_star, _ = jax.lax.scan(body, z0, t_schedule)
    z_star = jax.lax.stop_gradient(z_star)
    # One full Newton step from the converged point with live parameters: its
    # derivative is the implicit-function derivative of the barrier optimum.
    dz, _ = newton_step(z_star, t_schedule[-1], A, c, P, x0, lo, hi_safe)
    x = x0 + P @ (z_star + dz)
    return c @ x


def smooth_lateral_force_capability(
    platform: Platform,
    alpha: Array | None = None,
    beta: Array | None = None,
    *,
    n_directions: int = 36,
    temperature: float = 1e-3,
    barrier_t_max: float = 1e5,
    stages: int = 6,
    newton_steps: int = 12,
) -> Array:
    """Smooth, differentiable lateral-force capability at hover [N] (pure JAX, jit-able).

    The exact capability (:func:`lateral_force_capability`) is
    ``c = min_k rho(d_k)`` with ``rho(d) = max { s : F u = [s d; m g], M u = 0,
    u_min <= u <= u_max }`` over the directions of :func:`horizontal_directions`.
    Here each linear program is replaced by its log-barrier central point,

        ``max_u  t (d . F_xy u) + sum_i log(u_i - u_min,i) + sum_i log(u_max,i - u_i)``

    subject to the equalities (solved by damped Newton steps along a path
    ``t = 10^(5-stages) .. barrier_t_max`` in normalised units), which is a smooth
    function of the design and undershoots ``rho`` by at most ``2 n / t`` times
    ``m g``; the minimum over directions is replaced by the soft minimum
    ``-tau log sum_k exp(-rho_k / tau)`` with ``tau = temperature * m g``, which
    undershoots by at most ``tau log K``. The value is therefore a slightly
    conservative version of the exact one (``temperature=0`` takes the plain
    minimum). Gradients use the implicit-function theorem at the barrier optimum
    (one Newton step with live parameters), so they are exact derivatives of this
    smooth function.

    Requirements: the minimum-norm hover input must lie strictly inside the
    bounds (it is the barrier's starting point); otherwise the result is NaN.
    Where the constraint rank changes (e.g. at exactly zero tilt) the value is
    right but the gradient is not defined. In float32 use ``barrier_t_max <= 1e4``.

    Args:
        platform: the design (its ``u_min``/``u_max`` are the input bounds).
        alpha, beta: optional tilt angles.
        n_directions: number ``K`` of equally spaced horizontal directions (static).
        temperature: soft-min temperature as a fraction of the weight ``m g``; 0 for a hard min.
        barrier_t_max: final barrier weight (normalised units).
        stages: number of barrier weights, each 10 times the previous (static).
        newton_steps: damped Newton steps per barrier weight (static).

    Returns:
        ``()`` capability [N].
    """
    if isinstance(temperature, (int, float)) and temperature < 0:
        raise ValueError(f"`temperature` = {temperature!r} is invalid: it must be >= 0. Fix: pass 0 for a hard minimum "
                         "or a small positive fraction of the weight such as 1e-3.")
    return _smooth_lateral(platform, alpha, beta, jnp.asarray(temperature), jnp.asarray(barrier_t_max),
                           int(n_directions), int(stages), int(newton_steps))


@eqx.filter_jit
def _smooth_lateral(platform, alpha, beta, temperature, barrier_t_max, n_directions, stages, newton_steps):
    A, _, lo, hi = _normalised(platform, alpha, beta)
    x0 = _pinv_hover(A)
    dirs = jnp.asarray(horizontal_directions(n_directions), dtype=A.dtype)
    ts = barrier_t_max.astype(A.dtype) * 10.0 ** jnp.arange(-(stages - 1), 1, dtype=A.dtype)
    t_schedule = jnp.repeat(ts, newton_steps)
    rho = jax.vmap(lambda d: _barrier_lateral(A, lo, hi, x0, d, t_schedule))(dirs)
    tau = jnp.where(temperature > 0, temperature, 1.0).astype(A.dtype)
    soft = -tau * jax.nn.logsumexp(-rho / tau)
    value = jnp.where(temperature > 0, soft, jnp.min(rho))
    inside = jnp.all(x0 > lo) & jnp.all(x0 < hi)
    return jnp.where(inside, value, jnp.nan) * platform.mass * platform.gravity


# =========================================================================== exact reports (NumPy/SciPy)


@dataclasses.dataclass(frozen=True)
class _System:
    """Concrete float64 matrices of a platform at given tilt angles, with the LP normalisation."""

    F: np.ndarray  # (3, n) raw [N / (rad^2/s^2)]
    M: np.ndarray  # (3, n) raw [N m / (rad^2/s^2)]
    c_f: np.ndarray  # (n,)
    A: np.ndarray  # (6, n) normalised: A x = (f / W, tau / (W L))
    lo: np.ndarray  # (n,) x bounds
    hi: np.ndarray  # (n,) x bounds (inf allowed)
    u_ref: float  # W / sum c_f
    weight: float  # m g [N]
    L: float  # characteristic length [m]
    rtol: float  # relative rank tolerance

    @property
    def n(self) -> int:
        return self.F.shape[1]

    @property
    def Gs(self) -> np.ndarray:
        return self.A * self.n  # = S G / mean(c_f)

    @property
    def tol(self) -> float:
        return self.rtol * max(1.0, float(np.linalg.norm(self.Gs, 2)))


def _system(platform: Platform, alpha=None, beta=None) -> _System:
    if any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(platform)):
        raise ValueError(
            "analysis: the exact reports need a concrete platform, got traced values (inside jit/vmap/grad). "
            "Fix: call analyze() outside jit, or use the differentiable measures condition_number, "
            "hover_efficiency, smooth_lateral_force_capability."
        )
    F_j = force_matrix(platform, alpha, beta)
    rtol = 1e-9 if F_j.dtype == np.float64 else 1e-5
    F = np.asarray(F_j, dtype=float)
    M = np.asarray(moment_matrix(platform, alpha, beta), dtype=float)
    c_f = np.asarray(platform.c_f, dtype=float)
    L = float(np.mean(np.linalg.norm(np.asarray(rotor_positions(platform), dtype=float), axis=1)))
    if not L > 0:
        raise ValueError(
            f"analysis: the mean hub distance L = {L} m is not positive (every rotor at the centre of mass). "
            "Fix: place the rotors away from the centre of mass."
        )
    weight = float(platform.mass) * float(platform.gravity)
    u_ref = weight / float(c_f.sum())
    A = np.concatenate([F, M / L], axis=0) / c_f.sum()
    lo = np.asarray(platform.u_min, dtype=float) / u_ref
    hi = np.asarray(platform.u_max, dtype=float) / u_ref
    return _System(F=F, M=M, c_f=c_f, A=A, lo=lo, hi=hi, u_ref=u_ref, weight=weight, L=L, rtol=rtol)


def _rank(X: np.ndarray, tol: float) -> int:
    if X.size == 0:
        return 0
    return int(np.sum(np.linalg.svd(X, compute_uv=False) > tol))


def _null_space(X: np.ndarray, tol: float) -> np.ndarray:
    """Orthonormal basis (n, k) of ker X."""
    n = X.shape[1]
    if X.shape[0] == 0:
        return np.eye(n)
    _, s, Vt = np.linalg.svd(X, full_matrices=True)
    r = int(np.sum(s > tol))
    return Vt[r:].T


def _bounds(lo, hi):
    return [(float(a), None if not np.isfinite(b) else float(b)) for a, b in zip(lo, hi)]


def _linprog(c, *, A_eq=None, b_eq=None, A_ub=None, b_ub=None, bounds=None):
    """``min c.x`` with HiGHS; returns (status, x, fun): status 'ok', 'infeasible', 'unbounded'."""
    try:
        from scipy.optimize import linprog
    except ImportError as err:  # pragma: no cover - scipy is a runtime dependency of the exact reports
        raise ImportError(
            "jaxrotor.analysis exact reports need SciPy (linear programs). Fix: pip install scipy."
        ) from err
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status == 0:
        return "ok", res.x, float(res.fun)
    if res.status == 2:
        return "infeasible", None, math.nan
    if res.status == 3:
        return "unbounded", None, -math.inf
    raise RuntimeError(f"analysis: the linear program failed ({res.message}). Fix: check the platform's values.")


# --------------------------------------------------------------------------- algebraic properties


def ranks(platform: Platform, alpha=None, beta=None) -> dict[str, int]:
    """Ranks of ``F``, ``M``, ``G = [F; M]`` and of the thrust/torque rows ``[F_z; M]``.

    Ranks are taken on the unit-consistent matrices (:func:`scaled_allocation_matrix`)
    with singular values above ``1e-9 |G_s|`` (``1e-5`` in float32) counted.
    ``rank_thrust_torque`` is the rank of the ``4 x n`` mixer of ``seeds/002``
    (``[T, tau_x, tau_y, tau_z]``); it is 4 for any working flat multirotor.

    Returns:
        ``{"rank_F", "rank_M", "rank_G", "rank_thrust_torque"}``.
    """
    s = _system(platform, alpha, beta)
    return _ranks(s)


def _ranks(s: _System) -> dict[str, int]:
    Gs, tol = s.Gs, s.tol
    return {
        "rank_F": _rank(Gs[:3], tol),
        "rank_M": _rank(Gs[3:], tol),
        "rank_G": _rank(Gs, tol),
        "rank_thrust_torque": _rank(Gs[2:], tol),
    }


def _dim_D(Fs: np.ndarray, Ms: np.ndarray, tol: float) -> int:
    N = _null_space(Ms, tol)
    if N.shape[1] == 0:
        return 0
    return _rank(Fs @ N, tol)


def _class_of(dim_D: int) -> str:
    return DECOUPLING_CLASSES[0] if dim_D == 0 else DECOUPLING_CLASSES[2] if dim_D == 3 else DECOUPLING_CLASSES[1]


def decoupling(platform: Platform, alpha=None, beta=None) -> tuple[int, str]:
    """Force-moment decoupling class from ``D = F ker(M)`` (Michieletto et al. 2018).

    ``D`` is the set of forces the rotors can produce while producing zero moment.
    The class is *fully coupled* if ``D = {0}`` (every force comes with a moment),
    *partially coupled* if ``dim D`` is 1 or 2 (e.g. every collinear multirotor,
    ``D = span{z_B}``), *decoupled* if ``dim D = 3`` (any force at zero moment).

    Returns:
        ``(dim D, class name)`` with the name one of :data:`DECOUPLING_CLASSES`.
    """
    s = _system(platform, alpha, beta)
    d = _dim_D(s.Gs[:3], s.Gs[3:], s.tol)
    return d, _class_of(d)


def _positive_margin(Ms: np.ndarray) -> float:
    """``max t`` s.t. ``M x = 0``, ``mean(x) = 1``, ``x_i >= t``, ``x >= 0``; 0 if infeasible."""
    n = Ms.shape[1]
    if n == 0:
        return 0.0
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_eq = np.zeros((Ms.shape[0] + 1, n + 1))
    A_eq[: Ms.shape[0], :n] = Ms
    A_eq[-1, :n] = 1.0 / n
    b_eq = np.zeros(Ms.shape[0] + 1)
    b_eq[-1] = 1.0
    A_ub = np.concatenate([-np.eye(n), np.ones((n, 1))], axis=1)  # t - x_i <= 0
    status, _, fun = _linprog(c, A_eq=A_eq, b_eq=b_eq, A_ub=A_ub, b_ub=np.zeros(n),
                              bounds=[(0.0, None)] * n + [(None, None)])
    if status != "ok":
        return 0.0
    return max(0.0, -fun)


def _hoverability(Fs: np.ndarray, Ms: np.ndarray, tol: float) -> dict[str, Any]:
    rank_M = _rank(Ms, tol)
    dim_D = _dim_D(Fs, Ms, tol)
    t = _positive_margin(Ms)
    realizable = t > _MARGIN_TOL
    hoverable = bool(rank_M == 3 and dim_D >= 1 and realizable)
    return {
        "rank_M": rank_M,
        "dim_D": dim_D,
        "realizable": bool(realizable),
        "hoverable": hoverable,
        "margin": float(t) if hoverable else 0.0,
    }


def static_hoverability(platform: Platform, alpha=None, beta=None) -> dict[str, Any]:
    """Static hoverability (Michieletto, Ryll, Franchi 2018), with a margin.

    A platform is *statically hoverable* when

    1. ``rank M = 3`` (every moment can be commanded, so the attitude can be held),
    2. some input ``u > 0`` (every rotor spinning) gives ``M u = 0`` (*realizable*), and
    3. such an input gives ``F u != 0`` (``dim D >= 1``), so with ``u`` scaled and the body
       turned to point ``F u`` up it balances gravity in some attitude.

    Input bounds are ignored here (they enter :func:`thrust_to_weight` and the rotor-loss
    thrust-to-weight). The *margin* is ``max min_i u_i / mean_i u_i`` over ``u >= 0``
    with ``M u = 0``: 1 when equal inputs hover, 0 when some rotor must stop; it is
    reported as 0 when conditions 1 or 3 fail.

    Returns:
        ``{"rank_M", "dim_D", "realizable", "hoverable", "margin"}``.
    """
    s = _system(platform, alpha, beta)
    return _hoverability(s.Gs[:3], s.Gs[3:], s.tol)


@dataclasses.dataclass(frozen=True)
class RotorLoss:
    """What the platform can still do after rotor ``rotor`` (0-based) stops.

    Attributes:
        rotor: index of the lost rotor (0-based, column of ``F``/``M``).
        hoverable: statically hoverable with the remaining rotors (:func:`static_hoverability`).
        margin: ``max min_i u_i / mean_i u_i`` over the remaining rotors' zero-moment inputs
            (0 when not hoverable).
        rank_M: rank of the remaining moment matrix.
        dim_D: dimension of the remaining zero-moment force space.
        thrust_to_weight: largest ``|F u| / (m g)`` at zero moment within the input
            bounds, in the best attitude (``inf`` for unbounded inputs, 0 if not hoverable).
    """

    rotor: int
    hoverable: bool
    margin: float
    rank_M: int
    dim_D: int
    thrust_to_weight: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (non-finite floats become ``None``)."""
        return {k: to_jsonable(v) for k, v in dataclasses.asdict(self).items()}


def _fibonacci_sphere(k: int) -> np.ndarray:
    i = np.arange(k) + 0.5
    phi = np.arccos(1 - 2 * i / k)
    th = np.pi * (1 + 5**0.5) * i
    return np.stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)], axis=1)


def _directions_in(basis: np.ndarray, k2: int = 24, k3: int = 60) -> np.ndarray:
    """Unit vectors (m, 3) spanning the subspace with orthonormal ``basis`` (3, d)."""
    d = basis.shape[1]
    if d == 0:
        return np.zeros((0, 3))
    if d == 1:
        return np.stack([basis[:, 0], -basis[:, 0]])
    if d == 2:
        th = 2 * np.pi * np.arange(k2) / k2
        return np.cos(th)[:, None] * basis[:, 0] + np.sin(th)[:, None] * basis[:, 1]
    return _fibonacci_sphere(k3)


def _support_zero_moment(A: np.ndarray, lo, hi, e: np.ndarray):
    """``max e . A_F x`` s.t. ``A_M x = 0``, ``lo <= x <= hi``; returns (value, x) in units of W."""
    status, x, fun = _linprog(-(e @ A[:3]), A_eq=A[3:], b_eq=np.zeros(3), bounds=_bounds(lo, hi))
    if status == "unbounded":
        return math.inf, None
    if status == "infeasible":
        return math.nan, None
    return -fun, x


def _max_zero_moment_force(A: np.ndarray, lo, hi, tol: float) -> float:
    """``max |A_F x|`` over ``A_M x = 0``, ``lo <= x <= hi`` (units of W); sampling + ascent.

    ``tol`` is the singular-value tolerance for the normalised ``A`` (``G_s`` tolerance / n).
    """
    N = _null_space(A[3:], tol)
    if N.shape[1] == 0:
        return 0.0
    U, s, _ = np.linalg.svd(A[:3] @ N)
    basis = U[:, : int(np.sum(s > tol))]
    best, best_x = 0.0, None
    for e in _directions_in(basis):
        val, x = _support_zero_moment(A, lo, hi, e)
        if not np.isfinite(val):
            if val == math.inf:
                return math.inf
            return 0.0  # infeasible: no zero-moment input within bounds
        if val > best:
            best, best_x = val, x
    for _ in range(50):  # ascent: e <- A_F x / |A_F x| never decreases |A_F x|
        if best_x is None:
            break
        f = A[:3] @ best_x
        nf = float(np.linalg.norm(f))
        if nf <= 0:
            break
        val, x = _support_zero_moment(A, lo, hi, f / nf)
        if not (val > best * (1 + 1e-12)):
            best = max(best, nf)
            break
        best, best_x = val, x
    return float(max(best, np.linalg.norm(A[:3] @ best_x)) if best_x is not None else best)


def rotor_loss(platform: Platform, alpha=None, beta=None) -> list[RotorLoss]:
    """Fail-safe analysis: static hoverability after losing each single rotor.

    For each rotor ``j`` the column ``j`` of ``F`` and ``M`` is removed and
    :func:`static_hoverability` is evaluated on the rest (positive inputs on every
    remaining rotor). ``thrust_to_weight`` adds the input bounds: the largest
    zero-moment force magnitude the remaining rotors can make within
    ``u_min <= u <= u_max`` (best attitude), divided by ``m g``; hover after the
    loss needs it ``>= 1``.

    Returns:
        one :class:`RotorLoss` per rotor.
    """
    return _rotor_loss(_system(platform, alpha, beta))


def _rotor_loss(s: _System) -> list[RotorLoss]:
    out = []
    for j in range(s.n):
        keep = np.arange(s.n) != j
        Gs = s.Gs[:, keep]
        h = _hoverability(Gs[:3], Gs[3:], s.tol)
        if h["hoverable"]:
            tw = _max_zero_moment_force(s.A[:, keep], s.lo[keep], s.hi[keep], s.tol / s.n)
        else:
            tw = 0.0
        out.append(RotorLoss(rotor=j, hoverable=h["hoverable"], margin=h["margin"], rank_M=h["rank_M"],
                             dim_D=h["dim_D"], thrust_to_weight=float(tw)))
    return out


# --------------------------------------------------------------------------- capability under input bounds

_HOVER_B = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])


def _hover_x(s: _System) -> np.ndarray | None:
    """Minimum-norm level hover input in normalised units, or None if infeasible within bounds."""
    A, lo, hi = s.A, s.lo, s.hi
    status, x_lp, _ = _linprog(np.zeros(s.n), A_eq=A, b_eq=_HOVER_B, bounds=_bounds(lo, hi))
    if status != "ok":
        return None
    x_p = np.linalg.pinv(A, rcond=s.rtol) @ _HOVER_B
    feas_tol = 1e-9
    if np.linalg.norm(A @ x_p - _HOVER_B) <= 1e-9 and np.all(x_p >= lo - feas_tol) and np.all(x_p <= hi + feas_tol):
        return np.clip(x_p, lo, hi)
    # Bounds active: min |x|^2 s.t. A x = b, lo <= x <= hi (strictly convex QP), from the LP point.
    # SLSQP needs independent equality rows: project onto the range of A (b is in it, the LP says).
    from scipy.optimize import minimize

    U, sv, _ = np.linalg.svd(A, full_matrices=False)
    Ur = U[:, : int(np.sum(sv > s.tol / s.n))]
    A_r, b_r = Ur.T @ A, Ur.T @ _HOVER_B
    res = minimize(
        lambda x: 0.5 * x @ x, x_lp, jac=lambda x: x, method="SLSQP",
        constraints=[{"type": "eq", "fun": lambda x: A_r @ x - b_r, "jac": lambda x: A_r}],
        bounds=_bounds(lo, hi), options={"ftol": 1e-14, "maxiter": 1000},
    )
    x = res.x
    if res.success and np.linalg.norm(A @ x - _HOVER_B) <= 1e-8 and np.all(x >= lo - 1e-8) and np.all(x <= hi + 1e-8):
        return np.clip(x, lo, hi)
    return x_lp  # pragma: no cover - SLSQP failure: a feasible (not minimum-norm) hover input


def hover_solution(platform: Platform, alpha=None, beta=None) -> dict[str, Any]:
    """Hover input at level attitude within the bounds, and its efficiency.

    ``u_h = argmin |u|^2`` subject to ``F u = [0, 0, m g]``, ``M u = 0``,
    ``u_min <= u <= u_max`` (the minimum-norm solution of
    :func:`jaxrotor.allocation.hover_inputs` when that respects the bounds,
    otherwise the bounded quadratic program solved by SciPy's SLSQP).

    Returns:
        ``{"feasible", "u" ((n,) [rad^2/s^2] or None), "efficiency"
        (|F u_h| / sum_i c_f,i u_h,i), "input_fraction" (max_i u_h,i / u_max,i)}``.
    """
    return _hover(_system(platform, alpha, beta))


def _hover(s: _System) -> dict[str, Any]:
    x = _hover_x(s)
    if x is None:
        return {"feasible": False, "u": None, "efficiency": math.nan, "input_fraction": math.nan}
    u = x * s.u_ref
    eff = float(np.linalg.norm(s.F @ u) / np.sum(s.c_f * np.abs(u)))
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = float(np.max(np.where(np.isfinite(s.hi), x / s.hi, 0.0)))
    return {"feasible": True, "u": u, "efficiency": eff, "input_fraction": frac}


def thrust_to_weight(platform: Platform, alpha=None, beta=None) -> dict[str, float]:
    """Thrust-to-weight ratios.

    * ``thrust_to_weight``: ``max f_z / (m g)`` over ``F u = [0, 0, f_z]``, ``M u = 0``,
      ``u_min <= u <= u_max`` -- the vertical force available at level attitude with
      no moment and no lateral force (``inf`` with unbounded inputs, 0 if none).
    * ``nominal_thrust_to_weight``: ``sum_i c_f,i u_max,i / (m g)``, every rotor at full
      speed whatever its direction (the figure a preset is specified by, ``seeds/002``).
    """
    s = _system(platform, alpha, beta)
    return {"thrust_to_weight": _tw_level(s), "nominal_thrust_to_weight": _tw_nominal(s)}


def _tw_nominal(s: _System) -> float:
    return float(np.sum(s.c_f * s.hi * s.u_ref) / s.weight)


def _tw_level(s: _System) -> float:
    n = s.n
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_eq = np.zeros((6, n + 1))
    A_eq[:, :n] = s.A
    A_eq[2, -1] = -1.0
    status, _, fun = _linprog(c, A_eq=A_eq, b_eq=np.zeros(6), bounds=_bounds(s.lo, s.hi) + [(0.0, None)])
    if status == "unbounded":
        return math.inf
    if status != "ok":
        return 0.0
    return float(-fun)


def _lateral_rho(s: _System, d: np.ndarray) -> float:
    """``max s`` (units of W): ``A_xy x = s d``, ``A_z x = 1``, ``A_M x = 0``, bounds."""
    n = s.n
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_eq = np.zeros((6, n + 1))
    A_eq[:, :n] = s.A
    A_eq[0, -1] = -d[0]
    A_eq[1, -1] = -d[1]
    status, _, fun = _linprog(c, A_eq=A_eq, b_eq=_HOVER_B, bounds=_bounds(s.lo, s.hi) + [(None, None)])
    if status == "unbounded":
        return math.inf
    if status == "infeasible":
        return math.nan
    return float(-fun) + 0.0  # no negative zero in reports


def lateral_force_profile(platform: Platform, alpha=None, beta=None, *, n_directions: int = 36) -> tuple[np.ndarray, np.ndarray]:
    """Largest lateral force in each horizontal direction while hovering level [N].

    ``rho(d) = max { s : F u = [s d_x, s d_y, m g], M u = 0, u_min <= u <= u_max }``
    for the directions ``d_k`` of :func:`horizontal_directions` (body frame, level
    attitude, weight held, no moment). ``rho = 0`` for a flat design, NaN where level
    hover itself is infeasible, ``inf`` if unbounded.

    Returns:
        ``(directions (K, 2), rho (K,) [N])``.
    """
    s = _system(platform, alpha, beta)
    dirs = horizontal_directions(n_directions)
    return dirs, np.array([_lateral_rho(s, d) for d in dirs]) * s.weight


def lateral_force_capability(platform: Platform, alpha=None, beta=None, *, n_directions: int = 36) -> float:
    """Lateral-force capability at hover [N]: ``min_k rho(d_k)`` (:func:`lateral_force_profile`).

    The largest force the platform can push with in *every* one of the ``K``
    horizontal directions while holding its weight at level attitude with zero
    moment and inputs within bounds. As ``K`` grows it tends to the radius of the
    largest disc centred at zero inside the set of achievable lateral forces.
    NaN if level hover is infeasible.
    """
    _, rho = lateral_force_profile(platform, alpha, beta, n_directions=n_directions)
    return float(np.min(rho)) if not np.any(np.isnan(rho)) else math.nan


def _support_lateral(s: _System, e: np.ndarray):
    """``max e . A_xy x`` s.t. ``A_z x = 1``, ``A_M x = 0``, bounds -> (value, lateral point) in W."""
    status, x, fun = _linprog(-(e @ s.A[:2]), A_eq=s.A[2:], b_eq=_HOVER_B[2:], bounds=_bounds(s.lo, s.hi))
    if status != "ok":
        return (math.inf if status == "unbounded" else math.nan), None
    return -fun, s.A[:2] @ x


def lateral_force_set(platform: Platform, alpha=None, beta=None, *, n_directions: int = 72) -> np.ndarray:
    """Vertices of the set of lateral forces available at level hover [N] (for plots).

    The set is ``{F_xy u : F_z u = m g, M u = 0, u_min <= u <= u_max}``, a convex
    polygon; returned as its support points in ``n_directions`` directions
    (ordered by angle; an inner approximation that touches the true boundary).
    Empty ``(0, 2)`` if level hover is infeasible or the set is unbounded.
    """
    s = _system(platform, alpha, beta)
    pts = []
    for e in horizontal_directions(n_directions):
        val, p = _support_lateral(s, e)
        if p is None:
            return np.zeros((0, 2))
        pts.append(p * s.weight)
    return np.array(pts)


def zero_moment_force_set(platform: Platform, alpha=None, beta=None, *, n_directions: int = 150) -> np.ndarray:
    """Support points of the zero-moment force set ``{F u : M u = 0, u_min <= u <= u_max}`` [N].

    Sampled in ``n_directions`` directions of ``D = F ker(M)`` (Fibonacci sphere if
    ``dim D = 3``, a circle if 2, the two ends if 1). Empty if unbounded.

    Returns:
        ``(m, 3)`` body-frame force points.
    """
    s = _system(platform, alpha, beta)
    tol = s.tol
    N = _null_space(s.Gs[3:], tol)
    if N.shape[1] == 0:
        return np.zeros((1, 3))
    U, sv, _ = np.linalg.svd(s.Gs[:3] @ N)
    basis = U[:, : int(np.sum(sv > tol))]
    pts = []
    for e in _directions_in(basis, k2=n_directions, k3=n_directions):
        val, x = _support_zero_moment(s.A, s.lo, s.hi, e)
        if x is None:
            return np.zeros((0, 3))
        pts.append(s.A[:3] @ x * s.weight)
    return np.array(pts) if pts else np.zeros((1, 3))


def _torque_at_hover(s: _System) -> dict[str, float]:
    n = s.n
    out = {}
    for j, name in enumerate(("roll", "pitch", "yaw")):
        best = math.inf
        for sign in (1.0, -1.0):
            c = np.zeros(n + 1)
            c[-1] = -sign
            A_eq = np.zeros((6, n + 1))
            A_eq[:, :n] = s.A
            A_eq[3 + j, -1] = -1.0
            status, _, fun = _linprog(c, A_eq=A_eq, b_eq=_HOVER_B, bounds=_bounds(s.lo, s.hi) + [(None, None)])
            if status == "infeasible":
                best = math.nan
                break
            val = math.inf if status == "unbounded" else -fun
            best = min(best, max(val, 0.0))
        out[name] = float(best * s.weight * s.L) + 0.0
    return out


def max_torques_at_hover(platform: Platform, alpha=None, beta=None) -> dict[str, float]:
    """Largest moment about each body axis while hovering level [N m].

    For axis ``j`` and sign ``+-``: ``max +-tau_j`` subject to ``F u = [0, 0, m g]``,
    ``M u = tau_j e_j``, ``u_min <= u <= u_max``; the reported value is the smaller of
    the two signs (the authority available both ways). NaN if level hover is
    infeasible, ``inf`` with unbounded inputs.

    Returns:
        ``{"roll", "pitch", "yaw"}`` [N m].
    """
    return _torque_at_hover(_system(platform, alpha, beta))


def _unreachable(s: _System) -> tuple[str, ...]:
    U, sv, _ = np.linalg.svd(s.Gs, full_matrices=False)
    Ur = U[:, : int(np.sum(sv > s.tol))]
    res = np.linalg.norm(np.eye(6) - Ur @ Ur.T, axis=0)
    return tuple(name for name, r in zip(WRENCH_AXES, res) if r > 1e-6)


def unreachable_axes(platform: Platform, alpha=None, beta=None) -> tuple[str, ...]:
    """Wrench axes that cannot be commanded on their own (``e_j`` not in the range of ``G``).

    An axis of :data:`WRENCH_AXES` is unreachable when no input change produces a
    wrench along that axis alone. A flat multirotor always reports ``fx`` and ``fy``;
    rotors all spinning the same way add ``thrust`` and ``yaw`` (the yaw row is a
    multiple of the thrust row); a coaxial pair on one lateral axis adds ``pitch``.
    """
    return _unreachable(_system(platform, alpha, beta))


def _yaw_authority(s: _System) -> float:
    if "yaw" in _unreachable(s):
        return 0.0
    # y = c_f delta_u: thrust change per rotor [N]; rows of G diag(1/c_f), moments / L.
    E = np.concatenate([s.F, s.M], axis=0) / s.c_f[None, :]
    E[3:5] /= s.L
    n = s.n
    obj = E[5]
    cons = E[:5]
    c = np.concatenate([-obj, obj])
    A_eq = np.concatenate([cons, -cons], axis=1)
    A_ub = np.ones((1, 2 * n))
    status, _, fun = _linprog(c, A_eq=A_eq, b_eq=np.zeros(5), A_ub=A_ub, b_ub=np.ones(1), bounds=[(0.0, None)] * (2 * n))
    return float(max(-fun, 0.0)) if status == "ok" else 0.0


def yaw_authority(platform: Platform, alpha=None, beta=None) -> float:
    """Yaw moment per newton of thrust redistributed [N m / N = m] (``seeds/002``).

    ``max tau_z`` over input changes ``du`` that leave the other five wrench
    components unchanged, with ``sum_i |c_f,i du_i| <= 1 N``. For a flat layout this
    is the propeller's torque-to-thrust ratio ``c_tau / c_f`` (yaw has no lever arm);
    tilted rotors add the moment of the tilted thrust. 0 when yaw is unreachable.
    """
    return _yaw_authority(_system(platform, alpha, beta))


def _balanced(s: _System) -> bool:
    return bool(np.linalg.norm(s.Gs[3:] @ np.ones(s.n)) <= max(s.tol, s.rtol) * s.n)


def torque_rows_balanced(platform: Platform, alpha=None, beta=None) -> bool:
    """Whether each moment row of ``G`` sums to zero: ``M 1 = 0``.

    Then adding the same input to every rotor changes no moment, which is what the
    ``prioritise_torque`` / air-mode saturation strategy of ``seeds/002`` relies on.
    """
    return _balanced(_system(platform, alpha, beta))


# --------------------------------------------------------------------------- the full report


@dataclasses.dataclass(frozen=True)
class ActuationReport:
    """Every actuation property of a platform at given tilt angles (see ``docs/analysis.md``).

    Attributes:
        name: the platform's name.
        label: Table I class label.
        n_rotors: rotor count ``n``.
        mass_kg, weight_N: ``m`` [kg] and ``m g`` [N].
        F, M: ``(3, n)`` allocation matrices of eq. (10) [N/(rad^2/s^2)], [N m/(rad^2/s^2)].
        rank_F, rank_M, rank_G: ranks (unit-consistent, :func:`ranks`).
        rank_thrust_torque: rank of the 4-row mixer ``[F_z; M]`` of ``seeds/002``.
        fully_actuated: ``rank G = 6``.
        dim_D: ``dim F ker(M)``.
        decoupling: one of :data:`DECOUPLING_CLASSES`.
        realizable: some ``u > 0`` gives ``M u = 0``.
        statically_hoverable: :func:`static_hoverability`.
        hover_margin: ``max min u / mean u`` over zero-moment inputs (0 if not hoverable).
        fail_safe: statically hoverable after the loss of any single rotor.
        fail_safe_within_bounds: and with a rotor-loss thrust-to-weight ``>= 1``.
        rotor_loss: one :class:`RotorLoss` per rotor.
        level_hover_feasible: hover at level attitude is possible within the input bounds.
        hover_u: ``(n,)`` minimum-norm level hover input [rad^2/s^2], or None.
        hover_input_fraction: ``max_i u_h,i / u_max,i``.
        hover_efficiency: ``|F u_h| / sum_i c_f,i u_h,i``.
        thrust_to_weight: vertical force at level attitude, zero moment and no lateral
            force, within bounds, over ``m g``.
        nominal_thrust_to_weight: ``sum_i c_f,i u_max,i / (m g)``.
        lateral_force_capability_N: :func:`lateral_force_capability` [N].
        lateral_directions: the number ``K`` of horizontal directions used.
        max_torque_at_hover_Nm: :func:`max_torques_at_hover` [N m].
        singular_values: of ``G_s`` (:func:`scaled_allocation_matrix`), descending, ``min(6, n)`` values.
        condition_number: ``sigma_1 / sigma_6`` of ``G_s`` (``inf`` unless fully actuated).
        condition_number_range: ``sigma_1 / sigma_r`` with ``r = rank G`` (conditioning of
            the reachable wrench subspace).
        unreachable_axes: :func:`unreachable_axes`.
        yaw_authority: :func:`yaw_authority` [m].
        torque_rows_balanced: :func:`torque_rows_balanced`.
    """

    name: str
    label: str
    n_rotors: int
    mass_kg: float
    weight_N: float
    F: np.ndarray
    M: np.ndarray
    rank_F: int
    rank_M: int
    rank_G: int
    rank_thrust_torque: int
    fully_actuated: bool
    dim_D: int
    decoupling: str
    realizable: bool
    statically_hoverable: bool
    hover_margin: float
    fail_safe: bool
    fail_safe_within_bounds: bool
    rotor_loss: tuple[RotorLoss, ...]
    level_hover_feasible: bool
    hover_u: np.ndarray | None
    hover_input_fraction: float
    hover_efficiency: float
    thrust_to_weight: float
    nominal_thrust_to_weight: float
    lateral_force_capability_N: float
    lateral_directions: int
    max_torque_at_hover_Nm: dict[str, float]
    singular_values: np.ndarray
    condition_number: float
    condition_number_range: float
    unreachable_axes: tuple[str, ...]
    yaw_authority: float
    torque_rows_balanced: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the attribute names as keys.

        Arrays become nested lists, ``rotor_loss`` a list of dicts, and non-finite
        floats (``inf``, NaN) become ``None`` (JSON ``null``).
        """
        return {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}


def analyze(platform: Platform, alpha=None, beta=None, *, n_directions: int = 36) -> ActuationReport:
    """Compute the full :class:`ActuationReport` of a concrete platform.

    Args:
        platform: the design (concrete, not traced).
        alpha, beta: optional tilt angles for a tilting platform (shapes of
            ``platform.alpha`` / ``platform.beta``); default the platform's own.
        n_directions: number of horizontal directions for the lateral-force capability.

    Returns:
        the report; ``report.to_dict()`` is what ``jaxrotor analyze --json`` prints.
    """
    s = _system(platform, alpha, beta)
    r = _ranks(s)
    h = _hoverability(s.Gs[:3], s.Gs[3:], s.tol)
    losses = tuple(_rotor_loss(s))
    hover = _hover(s)
    sv = np.linalg.svd(s.Gs, compute_uv=False)
    k = min(6, s.n)
    sv6 = np.concatenate([sv, np.zeros(6 - len(sv))]) if len(sv) < 6 else sv
    rank_G = r["rank_G"]
    cond = float(sv6[0] / sv6[5]) if rank_G == 6 else math.inf
    cond_r = float(sv[0] / sv[rank_G - 1]) if rank_G > 0 else math.inf
    if hover["feasible"]:
        rho = np.array([_lateral_rho(s, d) for d in horizontal_directions(n_directions)])
        lateral = float(np.min(rho)) * s.weight if not np.any(np.isnan(rho)) else math.nan
        torques = _torque_at_hover(s)
    else:
        lateral = math.nan
        torques = {"roll": math.nan, "pitch": math.nan, "yaw": math.nan}
    return ActuationReport(
        name=platform.name,
        label=platform.label(),
        n_rotors=s.n,
        mass_kg=float(platform.mass),
        weight_N=s.weight,
        F=s.F,
        M=s.M,
        rank_F=r["rank_F"],
        rank_M=r["rank_M"],
        rank_G=rank_G,
        rank_thrust_torque=r["rank_thrust_torque"],
        fully_actuated=rank_G == 6,
        dim_D=h["dim_D"],
        decoupling=_class_of(h["dim_D"]),
        realizable=h["realizable"],
        statically_hoverable=h["hoverable"],
        hover_margin=h["margin"],
        fail_safe=all(x.hoverable for x in losses),
        fail_safe_within_bounds=all(x.hoverable and x.thrust_to_weight >= 1.0 for x in losses),
        rotor_loss=losses,
        level_hover_feasible=hover["feasible"],
        hover_u=hover["u"],
        hover_input_fraction=hover["input_fraction"],
        hover_efficiency=hover["efficiency"],
        thrust_to_weight=_tw_level(s),
        nominal_thrust_to_weight=_tw_nominal(s),
        lateral_force_capability_N=lateral,
        lateral_directions=int(n_directions),
        max_torque_at_hover_Nm=torques,
        singular_values=sv6[:k],
        condition_number=cond,
        condition_number_range=cond_r,
        unreachable_axes=_unreachable(s),
        yaw_authority=_yaw_authority(s),
        torque_rows_balanced=_balanced(s),
    )

