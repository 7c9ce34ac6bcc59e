"""Exact actuation reports of a concrete platform (float64 NumPy, linear programs by SciPy's HiGHS).

Every measure here is a function of the one normalised :class:`~jaxrotor.analysis._system.System`
(``x = u / u_ref``, ``A = G_s / n``, ``A x = (f / (m g), tau / (m g L))``); the
decorator :func:`~jaxrotor.analysis._system.exact` makes its public form
``f(platform, alpha=None, beta=None, ...)`` and keeps ``f.on_system`` for
:func:`jaxrotor.analysis.analyze`, which builds the system once. Ranks count the
singular values of the unit-consistent ``G_s`` above
:func:`jaxrotor.allocation.rank_tolerance`. Units are SI, body frame (FLU) at the
centre of mass, inputs ``u_i = omega_i^2`` [rad^2/s^2]. The vocabulary of the
mixer diagnostics (unreachable axes, yaw authority, balanced torque rows,
``thrust``/``roll``/``pitch``/``yaw``) is that of a common Python multirotor
library's mixer.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._util import to_jsonable
from ._system import System, exact
from .measures import horizontal_directions

__all__ = [
    "WRENCH_AXES",
    "DECOUPLING_CLASSES",
    "RotorLoss",
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
]

#: Names of the six body-wrench axes, in the row order of ``G = [F; M]``: ``thrust`` is
#: the body ``z`` force, ``roll``/``pitch``/``yaw`` the moments about ``x_B``/``y_B``/``z_B``.
WRENCH_AXES = ("fx", "fy", "thrust", "roll", "pitch", "yaw")

#: Force-moment decoupling classes by ``dim D``, ``D = F ker(M)``: 0, 1-2, 3.
DECOUPLING_CLASSES = ("fully coupled", "partially coupled", "decoupled")

_MARGIN_TOL = 1e-7  # a hover margin below this counts as zero (LP tolerance is ~1e-9)
_HOVER_B = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])  # A x = e_3: level hover, weight held, no moment


# --------------------------------------------------------------------------- linear algebra and LPs


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
    return Vt[int(np.sum(s > tol)):].T


def _bounds(lo, hi):
    return [(float(a), None if not np.isfinite(b) else float(b)) for a, b in zip(lo, hi)]


def _linprog(c, *, A_eq=None, b_eq=None, A_ub=None, b_ub=None, bounds=None):
    """``min c.x`` with HiGHS; returns (status, x, fun): status 'ok', 'infeasible', 'unbounded'."""
    from scipy.optimize import linprog

    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status == 0:
        return "ok", res.x, float(res.fun)
    if res.status == 2:
        return "infeasible", None, math.nan
    if res.status == 3:
        return "unbounded", None, -math.inf
    raise RuntimeError(f"analysis: the linear program failed ({res.message}). Fix: check the platform's values.")


def _max_with_slack(s: System, row: int, sign: float, b_eq: np.ndarray, slack_bounds) -> tuple[str, float]:
    """``max sign * v`` s.t. ``A x - v e_row = b_eq``, bounds on ``x`` and ``v``: (status, value)."""
    n = s.n
    c = np.zeros(n + 1)
    c[-1] = -sign
    A_eq = np.zeros((6, n + 1))
    A_eq[:, :n] = s.A
    A_eq[row, -1] = -1.0
    status, _, fun = _linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=_bounds(s.lo, s.hi) + [slack_bounds])
    return status, -fun


# --------------------------------------------------------------------------- algebraic properties


@exact
def ranks(s: System) -> dict[str, int]:
    """Ranks of ``F``, ``M``, ``G = [F; M]`` and of the thrust/torque rows ``[F_z; M]``.

    Ranks are taken on the unit-consistent ``G_s``
    (:func:`jaxrotor.allocation.scaled_allocation_matrix`), counting singular values
    above :func:`jaxrotor.allocation.rank_tolerance` (``1e-9 max(1, |G_s|)``,
    ``1e-5`` for a float32 platform). ``rank_thrust_torque`` is the rank of the
    ``4 x n`` mixer ``[T, tau_x, tau_y, tau_z]``; it is 4 for any working flat multirotor.

    Returns:
        ``{"rank_F", "rank_M", "rank_G", "rank_thrust_torque"}``.
    """
    Gs, tol = s.Gs, s.tol
    return {"rank_F": _rank(Gs[:3], tol), "rank_M": _rank(Gs[3:], tol), "rank_G": _rank(Gs, tol),
            "rank_thrust_torque": _rank(Gs[2:], tol)}


def _dim_D(Fs: np.ndarray, Ms: np.ndarray, tol: float) -> int:
    N = _null_space(Ms, tol)
    return 0 if N.shape[1] == 0 else _rank(Fs @ N, tol)


def _class_of(dim_D: int) -> str:
    return DECOUPLING_CLASSES[0] if dim_D == 0 else DECOUPLING_CLASSES[2] if dim_D == 3 else DECOUPLING_CLASSES[1]


@exact
def decoupling(s: System) -> tuple[int, str]:
    """Force-moment decoupling class from ``D = F ker(M)`` (Michieletto, Ryll, Franchi 2018).

    ``D`` is the set of forces the rotors can produce while producing zero moment.
    The class is *fully coupled* if ``D = {0}`` (every force comes with a moment),
    *partially coupled* if ``dim D`` is 1 or 2 (e.g. every collinear multirotor,
    ``D = span{z_B}``), *decoupled* if ``dim D = 3`` (any force at zero moment).

    Returns:
        ``(dim D, class name)`` with the name one of :data:`DECOUPLING_CLASSES`.
    """
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
    return max(0.0, -fun) if status == "ok" else 0.0


def _hoverability(Fs: np.ndarray, Ms: np.ndarray, tol: float) -> dict[str, Any]:
    rank_M = _rank(Ms, tol)
    dim_D = _dim_D(Fs, Ms, tol)
    t = _positive_margin(Ms)
    realizable = t > _MARGIN_TOL
    hoverable = bool(rank_M == 3 and dim_D >= 1 and realizable)
    return {"rank_M": rank_M, "dim_D": dim_D, "realizable": bool(realizable), "hoverable": hoverable,
            "margin": float(t) if hoverable else 0.0}


@exact
def static_hoverability(s: System) -> dict[str, Any]:
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
    return _hoverability(s.Gs[:3], s.Gs[3:], s.tol)


# --------------------------------------------------------------------------- rotor loss


@dataclasses.dataclass(frozen=True)
class RotorLoss:
    """What the platform can still do after rotor ``rotor`` (0-based) stops.

    Attributes:
        rotor: index of the lost rotor (0-based, column of ``F``/``M``).
        hoverable: statically hoverable with the remaining rotors (:func:`static_hoverability`), in some
            attitude.
        margin: ``max min_i u_i / mean_i u_i`` over the remaining rotors' zero-moment inputs
            (0 when not hoverable).
        rank_M: rank of the remaining moment matrix.
        dim_D: dimension of the remaining zero-moment force space.
        thrust_to_weight: exact ``max |F u| / (m g)`` over ``M u = 0``,
            ``u_min <= u <= u_max`` with the remaining rotors, i.e. the largest force at
            zero moment, in the best attitude (``inf`` for unbounded inputs, 0 if not hoverable).
        outcome: what a flight that loses the rotor in level hover can hold (:data:`jaxrotor.faults.OUTCOMES`):
            ``"full_pose"``, ``"yaw_released"`` or ``"lost"`` (:func:`rotor_loss`).
        full_pose_margin: level-hover margin with every wrench row (:func:`rotor_loss`; ``-inf`` if none).
        yaw_released_margin: level-hover margin without the yaw-torque row (``-inf`` if none).
        yaw_spin_up: least yaw acceleration of a yaw-released hover [rad/s^2] (:func:`yaw_released_spin_up`;
            ``inf`` if none).
    """

    rotor: int
    hoverable: bool
    margin: float
    rank_M: int
    dim_D: int
    thrust_to_weight: float
    outcome: str = "lost"
    full_pose_margin: float = -math.inf
    yaw_released_margin: float = -math.inf
    yaw_spin_up: float = math.inf

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (non-finite floats become ``None``)."""
        return {k: to_jsonable(v) for k, v in dataclasses.asdict(self).items()}


def _level_hover_margin(A: np.ndarray, lo: np.ndarray, hi: np.ndarray, rows: list[int], tilt: float) -> float:
    """``max s`` over the hovers within ``tilt`` [rad] of level on ``rows`` with every input ``s mean(x)`` above
    its lower bound.

    The body force of a hover tilted by ``theta`` is ``m g (sin theta d, cos theta)`` for a horizontal unit
    ``d``; in ``A``'s units ``A_r x = (a, b, 1, 0, ...)_r`` with ``(a, b)`` in the regular octagon inscribed in
    the disc of radius ``tan(tilt)`` (``tilt = 0``: a level hover), ``x_i - lo_i >= s mean(x)``, ``x <= hi``.
    Solved as a linear program in ``y = tau x``, ``tau = 1 / mean(x) >= 0`` (Charnes--Cooper), with
    ``(a, b)`` scaled by ``tau`` too; ``s <= 1``. Returns ``-inf`` when no input within the bounds hovers.
    """
    m = A.shape[1]
    Ar = A[rows]
    b = _HOVER_B[rows]
    # variables (y (m), tau, s, a, b); minimise -s
    nv = m + 4
    c = np.zeros(nv)
    c[m + 1] = -1.0
    A_eq = np.zeros((len(rows) + 1, nv))
    A_eq[:-1, :m], A_eq[:-1, m] = Ar, -b
    for k, axis in enumerate((0, 1)):  # the lateral force of a tilted hover on the force rows x and y
        if axis in rows:
            A_eq[rows.index(axis), m + 2 + k] = -1.0
    A_eq[-1, :m] = 1.0 / m
    b_eq = np.zeros(len(rows) + 1)
    b_eq[-1] = 1.0
    ub = []
    for i in range(m):
        if np.isfinite(lo[i]):  # s + tau lo_i - y_i <= 0
            r = np.zeros(nv)
            r[i], r[m], r[m + 1] = -1.0, lo[i], 1.0
            ub.append(r)
        if np.isfinite(hi[i]):  # y_i - tau hi_i <= 0
            r = np.zeros(nv)
            r[i], r[m] = 1.0, -hi[i]
            ub.append(r)
    apothem = math.tan(tilt) * math.cos(math.pi / 8)
    for k in range(8):  # cos(phi_k) a + sin(phi_k) b <= apothem tau
        r = np.zeros(nv)
        r[m + 2], r[m + 3], r[m] = math.cos(k * math.pi / 4), math.sin(k * math.pi / 4), -apothem
        ub.append(r)
    bounds = [(None, None)] * m + [(0.0, None), (None, 1.0), (None, None), (None, None)]
    status, z, fun = _linprog(c, A_eq=A_eq, b_eq=b_eq, A_ub=np.array(ub), b_ub=np.zeros(len(ub)), bounds=bounds)
    if status != "ok" or z[m] <= 1e-12:
        return -math.inf
    return float(-fun)


def rotor_loss_outcome(s: System, keep: np.ndarray) -> tuple[str, float, float]:
    """The outcome word of level hover on the rotors ``keep`` (bool ``(n,)``), and its two margins.

    ``"full_pose"`` when the remaining columns keep the rank of ``G`` and some input within the bounds hovers
    level, or tilted by at most :data:`jaxrotor.faults.HOVER_TILT` (the tilt a held attitude may have in
    :func:`jaxrotor.verdict.fault_outcome`), with zero moment (``F u = m g R^T e_3``, ``M u = 0``) and every
    remaining rotor at :data:`jaxrotor.faults.FULL_POSE_MARGIN` of their mean or more above its lower bound (the rule by which the flight computer keeps full pose,
    :func:`jaxrotor.flight.fault_aware`); else ``"yaw_released"`` when, without the yaw-torque row, the
    remaining columns keep the rank of the other five rows of ``G`` and some input within the bounds gives such a
    force and zero roll and pitch torque, a rotor idle at its lower bound allowed (the flight computer then gives
    up the yaw torque: :func:`jaxrotor.flight.yaw_released_allocation`) and that hover's spin stays steady
    (:func:`_steady_spin`: a collinear vehicle's relaxed hover, or a least yaw acceleration within
    :data:`jaxrotor.faults.SPIN_ACCELERATION`); else ``"lost"``. A loss that takes rank
    from ``G`` is also ``"full_pose"`` when the remaining rotors have a static hover along a body axis
    (:func:`tilted_hover`: Michieletto's tilted hover, flown by the flight computer as
    :func:`jaxrotor.control.axis_wrench`), position and a constant attitude held, tilted by that axis' tilt.

    Returns:
        ``(outcome, full_pose_margin, yaw_released_margin)``.
    """
    from ..faults import FULL_POSE_MARGIN, HOVER_TILT

    A, lo, hi, tol = s.A[:, keep], s.lo[keep], s.hi[keep], s.tol / s.n
    full = _level_hover_margin(A, lo, hi, list(range(6)), HOVER_TILT)
    relaxed = _level_hover_margin(A, lo, hi, list(range(5)), HOVER_TILT)
    if _rank(A, tol) == _rank(s.A, tol) and full >= FULL_POSE_MARGIN:
        return "full_pose", full, relaxed
    if _rank(A, tol) < _rank(s.A, tol) and tilted_hover(s, keep).feasible:
        return "full_pose", full, relaxed
    if _rank(A[:5], tol) == _rank(s.A[:5], tol) and relaxed >= -_MARGIN_TOL and _steady_spin(s, A, lo, hi):
        return "yaw_released", full, relaxed
    return "lost", full, relaxed


def yaw_released_spin_up(s: System, A: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """The least yaw acceleration [rad/s^2] of a yaw-released hover of the columns ``A`` (bounds ``lo``, ``hi``).

    ``min |tau_z| / J_zz`` over the inputs ``lo <= x <= hi`` with ``A_r x = (a, b, 1, 0, 0)`` (rows ``f_x, f_y,
    f_z, tau_x, tau_y``; ``(a, b)`` within the :data:`jaxrotor.faults.HOVER_TILT` octagon of
    :func:`_level_hover_margin`), a linear program in ``(x, a, b, t)`` minimising ``t >= |A_6 x|``;
    ``tau_z = t m g L``. The yaw-released flight computer allocates the same way (least yaw torque,
    :func:`jaxrotor.flight.yaw_released_allocation`), and with no yaw torque left to the heading loop the vehicle
    spins up at this rate. ``inf`` when no such hover exists.
    """
    from ..faults import HOVER_TILT

    m = A.shape[1]
    nv = m + 3  # x, a, b, t
    c = np.zeros(nv)
    c[-1] = 1.0
    A_eq = np.zeros((5, nv))
    A_eq[:, :m] = A[:5]
    A_eq[0, m], A_eq[1, m + 1] = -1.0, -1.0
    b_eq = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    ub = []
    for sign in (1.0, -1.0):  # +-A_6 x - t <= 0
        r = np.zeros(nv)
        r[:m], r[-1] = sign * A[5], -1.0
        ub.append(r)
    apothem = math.tan(HOVER_TILT) * math.cos(math.pi / 8)
    b_ub = [0.0, 0.0]
    for k in range(8):
        r = np.zeros(nv)
        r[m], r[m + 1] = math.cos(k * math.pi / 4), math.sin(k * math.pi / 4)
        ub.append(r)
        b_ub.append(apothem)
    bounds = list(_bounds(lo, hi)) + [(None, None), (None, None), (0.0, None)]
    status, z, fun = _linprog(c, A_eq=A_eq, b_eq=b_eq, A_ub=np.array(ub), b_ub=np.array(b_ub), bounds=bounds)
    if status != "ok":
        return math.inf
    J_zz = float(s.J[2, 2]) if s.J is not None else math.nan
    return float(fun) * s.weight * s.L / J_zz


def _steady_spin(s: System, A: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
    """Whether a yaw-released hover of the columns ``A`` holds a steady spin: a collinear vehicle (no lateral force
    rows) settles into the relaxed hover's spin, where the gyroscopic torque balances the rotors' yaw torque
    (:mod:`jaxrotor.relaxed`); any other needs a hover whose least yaw acceleration
    (:func:`yaw_released_spin_up`) is within :data:`jaxrotor.faults.SPIN_ACCELERATION`."""
    from ..faults import SPIN_ACCELERATION

    if np.max(np.abs(A[:2])) <= 1e-9 * np.max(np.abs(A[2])):
        return True
    return yaw_released_spin_up(s, A, lo, hi) <= SPIN_ACCELERATION


def tilted_hover(s: System, keep: np.ndarray):
    """The static hover along a body axis of the rotors ``keep`` (bool ``(n,)``): :func:`jaxrotor.tilted.hover_axis`
    of the normalised system (weight 1), the same function the flight computer calls
    (:func:`jaxrotor.flight.fault_aware`). Returns its :class:`~jaxrotor.tilted.HoverAxis` (NumPy leaves)."""
    import jax

    from ..tilted import hover_axis

    A = np.where(keep[None, :], s.A, 0.0)
    hover = hover_axis(A, np.where(keep, s.lo, 0.0), np.where(keep, s.hi, np.inf), 1.0, alive=keep)
    return jax.tree.map(np.asarray, hover)


def _fibonacci_sphere(k: int) -> np.ndarray:
    i = np.arange(k) + 0.5
    phi = np.arccos(1 - 2 * i / k)
    th = np.pi * (1 + 5**0.5) * i
    return np.stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)], axis=1)


def _directions_in(basis: np.ndarray, k2: int, k3: int) -> np.ndarray:
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


def _zero_moment_basis(A: np.ndarray, tol: float) -> np.ndarray:
    """Orthonormal basis ``(3, dim D)`` of ``D = A_F ker(A_M)`` (``tol`` on the singular values of ``A``)."""
    N = _null_space(A[3:], tol)
    if N.shape[1] == 0:
        return np.zeros((3, 0))
    U, sv, _ = np.linalg.svd(A[:3] @ N)
    return U[:, : int(np.sum(sv > tol))]


def _max_zero_moment_force(A: np.ndarray, lo, hi, tol: float, eps: float = 1e-10) -> float:
    """Exact ``max |A_F x|`` over ``A_M x = 0``, ``lo <= x <= hi`` (units of W).

    The zero-moment forces form a convex polytope ``P`` in ``D = A_F ker(A_M)``; the
    maximum of the convex function ``|y|`` over ``P`` is attained at a vertex. The
    vertices are found with support linear programs: start from the supports along
    ``+-`` a basis of ``D``, and repeatedly ask for the support in the outer normal of
    every facet of the hull of the points found so far (and along the directions
    orthogonal to their affine hull); a support beyond the facet by more than ``eps``
    is a new point of ``P``. When no facet moves, the hull is ``P`` itself.
    """
    B = _zero_moment_basis(A, tol)
    d = B.shape[1]
    if d == 0:
        return 0.0
    from scipy.spatial import ConvexHull

    pts: list[np.ndarray] = []

    def support(w: np.ndarray) -> np.ndarray | float:
        """Support point (coordinates in ``B``) along ``w`` (in ``B`` coordinates), or inf / nan."""
        val, x = _support_zero_moment(A, lo, hi, B @ w)
        return val if x is None else B.T @ (A[:3] @ x)

    def add(w: np.ndarray, level: float) -> bool | float:
        p = support(w)
        if not isinstance(p, np.ndarray):
            return p
        pts.append(p)
        return bool(w @ p > level + eps)

    for k in range(d):
        for sign in (1.0, -1.0):
            r = add(sign * np.eye(d)[k], math.inf)
            if not isinstance(r, bool):
                return math.inf if r == math.inf else 0.0  # unbounded; or no zero-moment input within bounds
    for _ in range(1000):
        P = np.array(pts)
        p0 = P[0]
        U, sv, _ = np.linalg.svd((P - p0).T, full_matrices=True)
        r = int(np.sum(sv > eps * max(1.0, float(np.abs(P).max()))))
        Q, Qperp = U[:, :r], U[:, r:]
        grown = False
        for w in Qperp.T:  # is P really inside the affine hull of the points found?
            for sign in (1.0, -1.0):
                grown |= add(sign * w, sign * w @ p0) is True
        if grown:
            continue
        if r == 1:
            break  # a segment: both ends were supports along +-its direction
        if r >= 2:
            hull = ConvexHull((P - p0) @ Q)
            for eq in hull.equations:  # a . y + b <= 0 inside, |a| = 1
                w = Q @ eq[:-1]
                grown |= add(w, w @ p0 - eq[-1]) is True
        if not grown:
            break
    return float(max(np.linalg.norm(p) for p in pts))


@exact
def rotor_loss(s: System) -> list[RotorLoss]:
    """Fail-safe analysis: what the platform can do after losing each single rotor.

    For each rotor ``j`` the column ``j`` of ``F`` and ``M`` is removed and
    :func:`static_hoverability` is evaluated on the rest (positive inputs on every
    remaining rotor: hover in some attitude). ``thrust_to_weight`` adds the input bounds: the largest
    zero-moment force magnitude ``max |F u|`` the remaining rotors can make within
    ``u_min <= u <= u_max`` (best attitude), divided by ``m g``, computed exactly as the
    largest vertex norm of the zero-moment force polytope (support linear programs);
    hover after the loss needs it ``>= 1``.

    ``outcome`` says what a flight losing the rotor in level hover holds (:func:`rotor_loss_outcome`, the
    words of :func:`jaxrotor.verdict.fault_outcome`): ``"full_pose"``, ``"yaw_released"`` or ``"lost"``. Each
    margin is ``max min_i (u_i - u_min,i) / mean_i u_i`` over the remaining rotors' hover inputs within
    the bounds, level or tilted by at most :data:`jaxrotor.faults.HOVER_TILT` (``-inf`` when there is none), with every wrench row (``full_pose_margin``) or without the
    yaw-torque row (``yaw_released_margin``).

    Returns:
        one :class:`RotorLoss` per rotor.
    """
    out = []
    for j in range(s.n):
        keep = np.arange(s.n) != j
        Gs = s.Gs[:, keep]
        h = _hoverability(Gs[:3], Gs[3:], s.tol)
        tw = _max_zero_moment_force(s.A[:, keep], s.lo[keep], s.hi[keep], s.tol / s.n) if h["hoverable"] else 0.0
        outcome, full, relaxed = rotor_loss_outcome(s, keep)
        out.append(RotorLoss(rotor=j, hoverable=h["hoverable"], margin=h["margin"], rank_M=h["rank_M"],
                             dim_D=h["dim_D"], thrust_to_weight=float(tw), outcome=outcome, full_pose_margin=full,
                             yaw_released_margin=relaxed,
                             yaw_spin_up=yaw_released_spin_up(s, s.A[:, keep], s.lo[keep], s.hi[keep])))
    return out


# --------------------------------------------------------------------------- capability under input bounds


def _hover_x(s: System) -> np.ndarray | None:
    """Minimum-norm level hover input in normalised units, or None if infeasible within bounds."""
    A, lo, hi = s.A, s.lo, s.hi
    status, x_lp, _ = _linprog(np.zeros(s.n), A_eq=A, b_eq=_HOVER_B, bounds=_bounds(lo, hi))
    if status != "ok":
        return None
    x_p = s.x_hover
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


@exact
def hover_solution(s: System) -> dict[str, Any]:
    """Hover input at level attitude within the bounds, and its efficiency.

    ``u_h = argmin |u|^2`` subject to ``F u = [0, 0, m g]``, ``M u = 0``,
    ``u_min <= u <= u_max`` (the minimum-norm solution of
    :func:`jaxrotor.allocation.hover_inputs` when that respects the bounds,
    otherwise the bounded quadratic program solved by SciPy's SLSQP).

    Returns:
        ``{"feasible", "u" ((n,) [rad^2/s^2] or None), "efficiency"
        (|F u_h| / sum_i c_f,i u_h,i), "input_fraction" (max_i u_h,i / u_max,i)}``.
    """
    x = _hover_x(s)
    if x is None:
        return {"feasible": False, "u": None, "efficiency": math.nan, "input_fraction": math.nan}
    u = x * s.u_ref
    eff = float(np.linalg.norm(s.F @ u) / np.sum(s.c_f * np.abs(u)))
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = float(np.max(np.where(np.isfinite(s.hi), x / s.hi, 0.0)))
    return {"feasible": True, "u": u, "efficiency": eff, "input_fraction": frac}


@exact
def thrust_to_weight(s: System) -> dict[str, float]:
    """Thrust-to-weight ratios.

    * ``thrust_to_weight``: ``max f_z / (m g)`` over ``F u = [0, 0, f_z]``, ``M u = 0``,
      ``u_min <= u <= u_max`` -- the vertical force available at level attitude with
      no moment and no lateral force (``inf`` with unbounded inputs, 0 if none).
    * ``nominal_thrust_to_weight``: ``sum_i c_f,i u_max,i / (m g)``, every rotor at full
      speed whatever its direction (the figure a preset is specified by).
    """
    status, value = _max_with_slack(s, 2, 1.0, np.zeros(6), (0.0, None))
    level = math.inf if status == "unbounded" else float(value) if status == "ok" else 0.0
    return {"thrust_to_weight": level, "nominal_thrust_to_weight": float(np.sum(s.c_f * s.hi * s.u_ref) / s.weight)}


def _lateral_rho(s: System, d: np.ndarray) -> float:
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


@exact
def lateral_force_profile(s: System, *, n_directions: int = 36) -> tuple[np.ndarray, np.ndarray]:
    """Largest lateral force in each horizontal direction while hovering level [N].

    ``rho(d) = max { s : F u = [s d_x, s d_y, m g], M u = 0, u_min <= u <= u_max }``
    for the directions ``d_k`` of :func:`horizontal_directions` (body frame, level
    attitude, weight held, no moment). ``rho = 0`` for a flat design, NaN where level
    hover itself is infeasible, ``inf`` if unbounded.

    Returns:
        ``(directions (K, 2), rho (K,) [N])``.
    """
    dirs = horizontal_directions(n_directions)
    return dirs, np.array([_lateral_rho(s, d) for d in dirs]) * s.weight


@exact
def lateral_force_capability(s: System, *, n_directions: int = 36) -> float:
    """Lateral-force capability at hover [N]: ``min_k rho(d_k)`` (:func:`lateral_force_profile`).

    The largest force the platform can push with in *every* one of the ``K``
    horizontal directions while holding its weight at level attitude with zero
    moment and inputs within bounds. As ``K`` grows it tends to the radius of the
    largest disc centred at zero inside the set of achievable lateral forces.
    NaN if level hover is infeasible.
    """
    _, rho = lateral_force_profile.on_system(s, n_directions=n_directions)
    return float(np.min(rho)) if not np.any(np.isnan(rho)) else math.nan


@exact
def lateral_force_set(s: System, *, n_directions: int = 72) -> np.ndarray:
    """Vertices of the set of lateral forces available at level hover [N] (for plots).

    The set is ``{F_xy u : F_z u = m g, M u = 0, u_min <= u <= u_max}``, a convex
    polygon; returned as its support points in ``n_directions`` directions
    (ordered by angle; an inner approximation that touches the true boundary).
    Empty ``(0, 2)`` if level hover is infeasible or the set is unbounded.
    """
    pts = []
    for e in horizontal_directions(n_directions):
        status, x, _ = _linprog(-(e @ s.A[:2]), A_eq=s.A[2:], b_eq=_HOVER_B[2:], bounds=_bounds(s.lo, s.hi))
        if status != "ok":
            return np.zeros((0, 2))
        pts.append(s.A[:2] @ x * s.weight)
    return np.array(pts)


@exact
def zero_moment_force_set(s: System, *, n_directions: int = 150) -> np.ndarray:
    """Support points of the zero-moment force set ``{F u : M u = 0, u_min <= u <= u_max}`` [N].

    Sampled in ``n_directions`` directions of ``D = F ker(M)`` (Fibonacci sphere if
    ``dim D = 3``, a circle if 2, the two ends if 1). Empty if unbounded.

    Returns:
        ``(m, 3)`` body-frame force points.
    """
    basis = _zero_moment_basis(s.Gs, s.tol)
    if basis.shape[1] == 0:
        return np.zeros((1, 3))
    pts = []
    for e in _directions_in(basis, k2=n_directions, k3=n_directions):
        _, x = _support_zero_moment(s.A, s.lo, s.hi, e)
        if x is None:
            return np.zeros((0, 3))
        pts.append(s.A[:3] @ x * s.weight)
    return np.array(pts)


@exact
def max_torques_at_hover(s: System) -> dict[str, float]:
    """Largest moment about each body axis while hovering level [N m].

    For axis ``j`` and sign ``+-``: ``max +-tau_j`` subject to ``F u = [0, 0, m g]``,
    ``M u = tau_j e_j``, ``u_min <= u <= u_max``; the reported value is the smaller of
    the two signs (the authority available both ways). NaN if level hover is
    infeasible, ``inf`` with unbounded inputs.

    Returns:
        ``{"roll", "pitch", "yaw"}`` [N m].
    """
    out = {}
    for j, name in enumerate(("roll", "pitch", "yaw")):
        best = math.inf
        for sign in (1.0, -1.0):
            status, value = _max_with_slack(s, 3 + j, sign, _HOVER_B, (None, None))
            if status == "infeasible":
                best = math.nan
                break
            best = min(best, max(math.inf if status == "unbounded" else value, 0.0))
        out[name] = float(best * s.weight * s.L) + 0.0
    return out


@exact
def unreachable_axes(s: System) -> tuple[str, ...]:
    """Wrench axes that cannot be commanded on their own (``e_j`` not in the range of ``G``).

    An axis of :data:`WRENCH_AXES` is unreachable when no input change produces a
    wrench along that axis alone. A flat multirotor always reports ``fx`` and ``fy``;
    rotors all spinning the same way add ``thrust`` and ``yaw`` (the yaw row is a
    multiple of the thrust row); a coaxial pair on one lateral axis adds ``pitch``.
    """
    U, sv, _ = np.linalg.svd(s.Gs, full_matrices=False)
    Ur = U[:, : int(np.sum(sv > s.tol))]
    res = np.linalg.norm(np.eye(6) - Ur @ Ur.T, axis=0)
    return tuple(name for name, r in zip(WRENCH_AXES, res) if r > 1e-6)


@exact
def yaw_authority(s: System) -> float:
    """Yaw moment per newton of thrust redistributed [N m / N = m].

    ``max tau_z`` over input changes ``du`` that leave the other five wrench
    components unchanged, with ``sum_i |c_f,i du_i| <= 1 N``. For a flat layout this
    is the propeller's torque-to-thrust ratio ``c_tau / c_f`` (yaw has no lever arm);
    tilted rotors add the moment of the tilted thrust. 0 when yaw is unreachable.
    """
    if "yaw" in unreachable_axes.on_system(s):
        return 0.0
    # y = c_f delta_u: thrust change per rotor [N]; rows of G diag(1/c_f), moments / L.
    E = np.concatenate([s.F, s.M], axis=0) / s.c_f[None, :]
    E[3:5] /= s.L
    n = s.n
    obj, cons = E[5], E[:5]
    status, _, fun = _linprog(np.concatenate([-obj, obj]), A_eq=np.concatenate([cons, -cons], axis=1),
                              b_eq=np.zeros(5), A_ub=np.ones((1, 2 * n)), b_ub=np.ones(1),
                              bounds=[(0.0, None)] * (2 * n))
    return float(max(-fun, 0.0)) if status == "ok" else 0.0


@exact
def torque_rows_balanced(s: System) -> bool:
    """Whether each moment row of ``G`` sums to zero: ``M 1 = 0`` (within the rank tolerance).

    Then adding the same input to every rotor changes no moment, which is what the
    prioritise-torque ("air mode") saturation strategy relies on.
    """
    return bool(np.linalg.norm(s.Gs[3:] @ np.ones(s.n)) <= s.tol * s.n)
