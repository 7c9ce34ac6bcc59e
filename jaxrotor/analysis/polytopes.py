"""Force and moment polytopes of a platform: exact sets (SciPy) and differentiable measures (JAX).

With the inputs ``u`` in the box ``u_min <= u <= u_max`` [rad^2/s^2] and the
allocation matrices ``F``, ``M`` of eq. (10) (body frame, FLU, at the centre of
mass), this module gives

* the zero-moment force set ``F_B = {F u : M u = 0, u in box}`` [N] as a
  polytope (vertices, facets) and its volume [N^3] (:func:`zero_moment_polytope`);
* its section by the hover plane ``f_z = m g`` (level attitude): a polygon in
  ``(f_x, f_y)`` and its area [N^2] (:func:`hover_section_polygon`);
* the part of ``F_B`` above the hover plane, ``F_B ∩ {f_z >= m g}``, and its
  volume [N^3] (:func:`above_hover_polytope`);
* the force zonotope ``{F u : u in box}`` [N] (:func:`force_zonotope`), volume
  ``sum_{i<j<k} |det(g_i, g_j, g_k)|`` with ``g_i = F[:, i] (u_max,i - u_min,i)``;
* the moments attainable at level hover ``{M u : F u = m g e_3, u in box}``
  [N m] (:func:`hover_moment_polytope`), volume [(N m)^3];

as :class:`Polytope` objects, and all five numbers at once
(:func:`polytope_measures`, what ``jaxrotor analyze --json`` reports). Empty or
lower-dimensional sets have measure 0 and say why (``Polytope.reason``).

Method (exact, any ``n``): every set is ``{C u : A_eq u = b_eq, A_ub u <= b_ub,
u in box}``. With a particular solution ``u_0`` and an orthonormal basis ``N`` of
``ker A_eq``, ``u = u_0 + N y`` and the box becomes a polytope ``P`` in ``y``
(half-spaces); its vertices come from ``scipy.spatial.HalfspaceIntersection``
(interior point: the Chebyshev centre, one linear program), and the set is the
convex hull (``scipy.spatial.ConvexHull``) of their images ``C (u_0 + N y)``.

The differentiable measures (:func:`zero_moment_force_volume`,
:func:`hover_section_area`, :func:`volume_above_hover`) take another route
that is exact and piecewise smooth: for ``rank G = 6`` and ``n >= 6`` the wrench
zonotope ``{G u}`` has one pair of facets per 5-subset ``S`` of rotors, normal
``c_S`` (the generalised cross product of the columns ``G[:, S]``) and offset
``h(c) = sum_i max(c·g_i u_min,i, c·g_i u_max,i)``, so
``F_B = {f : c_S,F · f <= h(c_S), -c_S,F · f <= h(-c_S)}`` (``c_F`` the force
part of ``c``). The volume of a polytope ``{a_i · f <= b_i}`` is the divergence
theorem ``V = (1/3) sum_i (b_i/|a_i|) A_i`` with the facet areas
``A_i = (1/2) sum_j h_ij L_ij`` (``L_ij`` the length of the edge shared with facet
``j``, ``h_ij`` the in-plane distance to its line), and each edge length is a
one-dimensional linear program in closed form (the line ``i ∩ j`` clipped by every
half-space). Which half-space clips an edge is piecewise constant, the values
are smooth in the platform, so the gradient is exact wherever the combinatorial
structure does not change. Pure JAX: ``jit``, ``vmap`` and ``grad`` work.

Units: forces [N], moments [N m]; computations run on the normalised system of
:mod:`jaxrotor.analysis._system` (forces in ``m g``, moments in ``m g L``) and
are scaled back.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import Float

from ..design.platform import AngleLike, Platform
from ._system import System, exact, normalised

__all__ = [
    "POLYTOPE_KEYS",
    "Polytope",
    "above_hover_polytope",
    "force_zonotope",
    "halfspace_area",
    "halfspace_volume",
    "hover_moment_polytope",
    "hover_section_area",
    "hover_section_polygon",
    "polytope_measures",
    "volume_above_hover",
    "zero_moment_force_volume",
    "zero_moment_halfspaces",
    "zero_moment_measures",
    "zero_moment_polytope",
    "zonotope_volume",
]

#: The five numbers of :func:`polytope_measures` with their units (the ``jaxrotor analyze --json`` keys).
POLYTOPE_KEYS = {
    "zero_moment_force_volume": "N^3",
    "hover_section_area": "N^2",
    "volume_above_hover": "N^3",
    "force_zonotope_volume": "N^3",
    "hover_moment_volume": "(N m)^3",
}

_CHEB_FLAT = 1e-9  # a Chebyshev radius below this (in normalised inputs) means the set is flat


@dataclasses.dataclass(frozen=True)
class Polytope:
    """A convex polytope in ``R^d`` (``d = 2`` or ``3``) in body-frame units.

    Attributes:
        vertices: ``(m, d)`` vertices (``m = 0`` for an empty set; for a
            lower-dimensional set the images of the input-polytope vertices).
        normals, offsets: ``(k, d)`` unit outward normals and ``(k,)`` offsets of the
            facets, ``normals @ x <= offsets`` (empty unless full-dimensional).
        dim: affine dimension of the set (``-1`` when empty; ``0``, with one point, when the
            inputs that satisfy the constraints touch the bounds only).
        measure: volume (``d = 3``) or area (``d = 2``); 0 for an empty or
            lower-dimensional set, ``inf`` for an unbounded one.
        reason: empty when ``dim = d``; otherwise why the measure is 0 (or inf).
    """

    vertices: np.ndarray
    normals: np.ndarray
    offsets: np.ndarray
    dim: int
    measure: float
    reason: str = ""

    @property
    def ambient_dim(self) -> int:
        """``d``: 2 for a polygon, 3 for a solid."""
        return int(self.vertices.shape[1])

    @property
    def empty(self) -> bool:
        """Whether the set has no point."""
        return self.dim < 0

    def scaled(self, k: float) -> Polytope:
        """The set scaled by ``k > 0`` (vertices and offsets times ``k``, measure times ``k^d``)."""
        return dataclasses.replace(self, vertices=self.vertices * k, offsets=self.offsets * k,
                                   measure=self.measure * k**self.ambient_dim)


# --------------------------------------------------------------------------- exact sets (NumPy / SciPy)


def _null(X: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
    """Orthonormal basis ``(n, k)`` of ``ker X`` and ``rank X``."""
    n = X.shape[1]
    if X.shape[0] == 0:
        return np.eye(n), 0
    _, s, Vt = np.linalg.svd(X, full_matrices=True)
    r = int(np.sum(s > tol))
    return Vt[r:].T, r


def _empty(d: int, reason: str) -> Polytope:
    return Polytope(np.zeros((0, d)), np.zeros((0, d)), np.zeros(0), -1, 0.0, reason)


def _flat(V: np.ndarray, dim: int, reason: str) -> Polytope:
    d = V.shape[1]
    return Polytope(V, np.zeros((0, d)), np.zeros(0), dim, 0.0, reason)


def _unique_rows(X: np.ndarray, scale: float) -> np.ndarray:
    if len(X) == 0:
        return X
    key = np.round(X / (scale * 1e-9)).astype(np.int64)
    _, idx = np.unique(key, axis=0, return_index=True)
    return X[np.sort(idx)]


def _hull(V: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Vertices, unit facet normals and offsets (coplanar triangles merged), volume/area of ``conv V``."""
    from scipy.spatial import ConvexHull

    h = ConvexHull(V)
    eq = h.equations  # a.x + c <= 0, |a| = 1
    scale = max(1.0, float(np.abs(V).max()))
    eq = _unique_rows(np.column_stack([eq[:, :-1], eq[:, -1] / scale]), 1.0)
    return V[h.vertices], eq[:, :-1], -eq[:, -1] * scale, float(h.volume)


def _slice_image(C, lo, hi, *, A_eq=None, b_eq=None, A_ub=None, b_ub=None, tol: float,
                 empty_reason: str) -> Polytope:
    """``{C x : A_eq x = b_eq, A_ub x <= b_ub, lo <= x <= hi}`` as a :class:`Polytope` (``d = C.shape[0]``).

    Every matrix is in normalised units (order one); ``hi`` may hold ``inf``.
    """
    from scipy.optimize import linprog
    from scipy.spatial import HalfspaceIntersection

    d, n = C.shape
    A_eq = np.zeros((0, n)) if A_eq is None else np.atleast_2d(A_eq)
    b_eq = np.zeros(0) if b_eq is None else np.atleast_1d(np.asarray(b_eq, dtype=float))
    A_ub = np.zeros((0, n)) if A_ub is None else np.atleast_2d(A_ub)
    b_ub = np.zeros(0) if b_ub is None else np.atleast_1d(np.asarray(b_ub, dtype=float))
    if A_eq.shape[0]:
        x0 = np.linalg.lstsq(A_eq, b_eq, rcond=None)[0]
        if np.linalg.norm(A_eq @ x0 - b_eq) > 1e3 * tol * (1.0 + np.linalg.norm(b_eq)):
            return _empty(d, f"{empty_reason} (the equality constraints have no solution)")
    else:
        x0 = np.zeros(n)
    N, rank_eq = _null(A_eq, tol)
    k = N.shape[1]
    # half-spaces H y <= r in y (u = x0 + N y)
    finite_hi = np.isfinite(hi)
    H = np.concatenate([N[finite_hi], -N, A_ub @ N])
    r = np.concatenate([hi[finite_hi] - x0[finite_hi], x0 - lo, b_ub - A_ub @ x0])
    norms = np.linalg.norm(H, axis=1)
    moving = norms > tol
    if np.any(r[~moving] < -1e3 * tol):
        return _empty(d, empty_reason)
    H, r, norms = H[moving], r[moving], norms[moving]
    CN = C @ N
    image_rank = int(np.sum(np.linalg.svd(CN, compute_uv=False) > tol)) if k else 0
    if k == 0:
        return _flat((C @ x0)[None, :], 0, f"a single point: the constraints (rank {rank_eq}) fix every input")
    # Chebyshev centre: max t s.t. H y + t |H_i| <= r, t <= 1 (capped: the set may be unbounded)
    res = linprog(np.r_[np.zeros(k), -1.0], A_ub=np.column_stack([H, norms]), b_ub=r,
                  bounds=[(None, None)] * k + [(None, 1.0)], method="highs")
    if res.status == 3 or (res.status == 0 and not np.all(finite_hi)):
        for j in range(d):  # bounded? (only an infinite input bound can make it unbounded)
            for sgn in (1.0, -1.0):
                s = linprog(-sgn * CN[j], A_ub=H, b_ub=r, bounds=[(None, None)] * k, method="highs")
                if s.status == 3:
                    return Polytope(np.zeros((0, d)), np.zeros((0, d)), np.zeros(0), image_rank, math.inf,
                                    "unbounded: some rotor has rotor_speed_max = inf; give finite speed limits")
    if res.status == 2 or (res.status == 0 and -res.fun < -1e3 * tol):
        return _empty(d, empty_reason)
    if res.status != 0:
        raise RuntimeError(f"analysis.polytopes: the Chebyshev-centre LP failed ({res.message}). "
                           "Fix: check the platform's values.")
    y_c, t = res.x[:k], -res.fun
    if t < _CHEB_FLAT:
        return _flat((C @ (x0 + N @ y_c))[None, :], 0,
                     "flat: the inputs that meet the constraints touch the input bounds only (no interior point)")
    if k == 1:
        ts = r / H[:, 0]
        Y = np.array([[ts[H[:, 0] < 0].max()], [ts[H[:, 0] > 0].min()]])
    else:
        hs = HalfspaceIntersection(np.column_stack([H, -r]), y_c)
        Y = hs.intersections
    V = _unique_rows((x0[None, :] + Y @ N.T) @ C.T, max(1.0, float(np.abs(C).sum())))
    if image_rank < d:
        return _flat(V, image_rank, f"lower-dimensional: the image has dimension {image_rank} < {d} "
                                    f"(constraint rank {rank_eq}, {k} free input directions)")
    verts, normals, offsets, measure = _hull(V)
    return Polytope(verts, normals, offsets, d, measure)


@exact
def zero_moment_polytope(s: System) -> Polytope:
    """The zero-moment force set ``F_B = {F u : M u = 0, u_min <= u <= u_max}`` [N] and its volume [N^3].

    Exact (vertex enumeration of the kernel box, convex hull; see the module
    docstring). Flat (volume 0, with the reason) when ``dim F ker(M) < 3``, e.g.
    every collinear multirotor, or when ``rank M = 3`` leaves fewer than three free
    input directions (``n < 6``).

    Returns:
        a 3-D :class:`Polytope` in the body frame.
    """
    P = _slice_image(s.A[:3], s.lo, s.hi, A_eq=s.A[3:], b_eq=np.zeros(3), tol=s.tol / s.n,
                     empty_reason="empty: no input within the bounds gives zero moment")
    return P.scaled(s.weight)


@exact
def hover_section_polygon(s: System) -> Polytope:
    """The section of ``F_B`` by the hover plane ``f_z = m g``: a polygon in ``(f_x, f_y)`` [N], area [N^2].

    ``{(f_x, f_y) : (f_x, f_y, m g) = F u, M u = 0, u_min <= u <= u_max}``: the lateral
    forces the platform can hold at level attitude while carrying its weight with no
    moment. Empty (area 0) when the platform cannot hover level within its bounds.

    Returns:
        a 2-D :class:`Polytope`.
    """
    A_eq = np.vstack([s.A[3:], s.A[2]])
    P = _slice_image(s.A[:2], s.lo, s.hi, A_eq=A_eq, b_eq=np.r_[0.0, 0.0, 0.0, 1.0], tol=s.tol / s.n,
                     empty_reason="not hoverable: no zero-moment input within the bounds gives f_z = m g")
    return P.scaled(s.weight)


@exact
def above_hover_polytope(s: System) -> Polytope:
    """``F_B ∩ {f_z >= m g}`` [N]: the zero-moment forces that hold at least the weight; volume [N^3].

    Returns:
        a 3-D :class:`Polytope`.
    """
    P = _slice_image(s.A[:3], s.lo, s.hi, A_eq=s.A[3:], b_eq=np.zeros(3), A_ub=-s.A[2:3], b_ub=np.array([-1.0]),
                     tol=s.tol / s.n,
                     empty_reason="not hoverable: no zero-moment input within the bounds gives f_z >= m g")
    return P.scaled(s.weight)


def zonotope_volume(generators: np.ndarray) -> float:
    """Volume of the zonotope ``sum_i [0, g_i]`` in ``R^3``: ``sum_{i<j<k} |det(g_i, g_j, g_k)|``.

    Args:
        generators: ``(3, n)`` columns ``g_i``.
    """
    g = np.asarray(generators, dtype=float)
    n = g.shape[1]
    if n < 3:
        return 0.0
    idx = np.array(list(itertools.combinations(range(n), 3)))
    return float(np.abs(np.linalg.det(np.transpose(g[:, idx], (1, 0, 2)))).sum())


@exact
def force_zonotope(s: System) -> Polytope:
    """The force zonotope ``{F u : u_min <= u <= u_max}`` [N] (moments ignored) and its volume [N^3].

    Volume by :func:`zonotope_volume` of the generators ``F[:, i] (u_max,i - u_min,i)``;
    vertices and facets from the hull of the images of the box corners (``n <= 16``).

    Returns:
        a 3-D :class:`Polytope`.
    """
    F = s.A[:3]
    if not np.all(np.isfinite(s.hi)):
        return Polytope(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), int(np.linalg.matrix_rank(F, s.tol)),
                        math.inf, "unbounded: some rotor has rotor_speed_max = inf; give finite speed limits")
    vol = zonotope_volume(F * (s.hi - s.lo)) * s.weight**3
    rank = int(np.sum(np.linalg.svd(F, compute_uv=False) > s.tol / s.n))
    if s.n > 16:  # too many corners to enumerate: the measure alone
        return Polytope(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), rank, vol if rank == 3 else 0.0,
                        "" if rank == 3 else f"lower-dimensional: rank F = {rank} < 3")
    corners = np.array(list(itertools.product(*zip(s.lo, s.hi))))
    V = _unique_rows(corners @ F.T, 1.0) * s.weight
    if rank < 3:
        return _flat(V, rank, f"lower-dimensional: rank F = {rank} < 3 (all thrust axes in a plane or a line)")
    verts, normals, offsets, _ = _hull(V)
    return Polytope(verts, normals, offsets, 3, vol)


@exact
def hover_moment_polytope(s: System) -> Polytope:
    """The moments attainable at level hover ``{M u : F u = m g e_3, u_min <= u <= u_max}`` [N m], volume [(N m)^3].

    Empty when level hover is impossible within the bounds; flat when fewer than
    three input directions remain once the force is fixed (``n < 6``) or they do not
    span three moments.

    Returns:
        a 3-D :class:`Polytope`.
    """
    P = _slice_image(s.A[3:], s.lo, s.hi, A_eq=s.A[:3], b_eq=np.r_[0.0, 0.0, 1.0], tol=s.tol / s.n,
                     empty_reason="not hoverable: no input within the bounds gives F u = m g e_3")
    return P.scaled(s.weight * s.L)


@exact
def polytope_measures(s: System) -> dict[str, object]:
    """The five polytope measures of :data:`POLYTOPE_KEYS` and why any of them is 0 or inf.

    Returns:
        ``{"zero_moment_force_volume": [N^3], "hover_section_area": [N^2],
        "volume_above_hover": [N^3], "force_zonotope_volume": [N^3],
        "hover_moment_volume": [(N m)^3], "polytope_notes": {key: reason}}``
        (``polytope_notes`` lists only the keys whose set is empty, flat or unbounded).
    """
    sets = {
        "zero_moment_force_volume": zero_moment_polytope.on_system(s),
        "hover_section_area": hover_section_polygon.on_system(s),
        "volume_above_hover": above_hover_polytope.on_system(s),
        "force_zonotope_volume": force_zonotope.on_system(s),
        "hover_moment_volume": hover_moment_polytope.on_system(s),
    }
    out: dict[str, object] = {k: float(P.measure) for k, P in sets.items()}
    out["polytope_notes"] = {k: P.reason for k, P in sets.items() if P.reason}
    return out


# --------------------------------------------------------------------------- differentiable (JAX)


def _tol(x: Array) -> float:
    """Relative tolerance of the vertex tests: 1e-9 in float64, 1e-4 in float32."""
    return 1e-9 if x.dtype == jnp.float64 else 1e-5


def _where_safe(ok: Array, x: Array, fill=1.0) -> Array:
    return jnp.where(ok, x, fill)


def _unit_rows(a: Array, tol: float) -> tuple[Array, Array, Array]:
    """Row norms, a mask of rows with norm above ``tol`` (relative to the largest) and the unit rows."""
    nrm2 = jnp.sum(a * a, axis=-1)
    ok = nrm2 > (tol * jnp.max(jnp.sqrt(nrm2))) ** 2
    nrm = jnp.sqrt(_where_safe(ok, nrm2))
    return jnp.where(ok, nrm, 0.0), ok, a / nrm[..., None]


def _duplicate_weight(unit: Array, off: Array, ok: Array, tol: float) -> Array:
    """``1 / multiplicity`` of each valid half-space among identical ones (0 for invalid rows)."""
    same = (jnp.sum(jnp.abs(unit[:, None, :] - unit[None, :, :]), axis=-1) < 10 * tol) & (
        jnp.abs(off[:, None] - off[None, :]) < 10 * tol * (1.0 + jnp.abs(off[:, None])))
    same = same & ok[:, None] & ok[None, :]
    mult = jnp.sum(same, axis=1)
    return jnp.where(ok, 1.0 / jnp.maximum(mult, 1), 0.0)


def _segment_length(U: Array, bn: Array, p0: Array, d: Array, usable: Array, tol: float, scale: Array) -> Array:
    """Length of ``{p0 + t d : U p <= bn}`` for every line (``p0 (..., k)``, unit ``d (..., k)``), 0 if empty.

    Each half-space ``l`` bounds ``t`` by ``(bn_l - U_l · p0) / (U_l · d)`` from above
    (``U_l · d > 0``) or below (``< 0``); one parallel to the line (``|U_l · d| <= tol``)
    only tests ``U_l · p0 <= bn_l``. A 1-D linear program in closed form, so no vertex
    test decides an edge.
    """
    s = jnp.einsum("...k,lk->...l", d, U)
    gap = bn - jnp.einsum("...k,lk->...l", p0, U)
    par = jnp.abs(s) <= tol
    t = gap / jnp.where(par, 1.0, s)
    big = jnp.asarray(1e30, p0.dtype)
    upper = jnp.min(jnp.where(~par & (s > 0), t, big), axis=-1)
    lower = jnp.max(jnp.where(~par & (s < 0), t, -big), axis=-1)
    blocked = jnp.any(par & (gap < -10 * tol * scale), axis=-1)
    length = jnp.maximum(upper - lower, 0.0)
    return jnp.where(usable & ~blocked & (length < big), length, 0.0)


def halfspace_volume(a: Float[Array, "m 3"], b: Float[Array, " m"]) -> Float[Array, ""]:
    """Volume of the bounded polytope ``{f in R^3 : a f <= b}`` (pure JAX, exact, piecewise smooth).

    ``V = (1/3) sum_i w_i (b_i / |a_i|) A_i`` (divergence theorem about the origin),
    facet areas ``A_i = (1/2) sum_j w_j h_ij L_ij`` (the same in the facet's plane):
    ``h_ij = (b_j - a_j · r_i) / |a_j - (a_j · â_i) â_i|`` the signed in-plane
    distance from ``r_i = b_i a_i / |a_i|^2`` to the line ``i ∩ j``, ``L_ij`` the
    length of that edge: the line ``p_0 + t d`` (``d = â_i x â_j``) clipped by every
    half-space, a 1-D linear program in closed form. ``w_i = 1 / multiplicity``
    counts repeated half-spaces once; zero rows are ignored. An empty set gives 0;
    an unbounded one is not detected (give a bounded set).

    Args:
        a: ``(m, 3)`` normals (any units).
        b: ``(m,)`` offsets (any units; ``V`` in their cube).

    Returns:
        ``()`` the volume.
    """
    tol = _tol(a)
    nrm, ok, u = _unit_rows(a, tol)
    bn = jnp.where(ok, b / _where_safe(ok, nrm), 0.0)  # offsets of the unit normals
    scale = jnp.max(jnp.abs(bn)) + 1.0
    w = _duplicate_weight(u, bn, ok, tol)
    U = jnp.where(ok[:, None], u, 0.0)
    d = jnp.cross(U[:, None, :], U[None, :, :])  # (m, m, 3) direction of line i ∩ j
    dn2 = jnp.sum(d * d, axis=-1)
    line = (dn2 > tol**2) & ok[:, None] & ok[None, :]
    dn2s = _where_safe(line, dn2)
    # p0 on both planes, p0 . d = 0: (b_i (u_j x d) - b_j (u_i x d)) / |d|^2
    p0 = (bn[:, None, None] * jnp.cross(U[None, :, :], d) - bn[None, :, None] * jnp.cross(U[:, None, :], d)
          ) / dn2s[..., None]
    L = _segment_length(U, bn, p0, d / jnp.sqrt(dn2s)[..., None], line, tol, scale)  # (m, m)
    cos_ij = U @ U.T
    h = jnp.where(line, (bn[None, :] - bn[:, None] * cos_ij) / jnp.sqrt(dn2s), 0.0)  # |u_j perp u_i| = |d|
    area = jnp.where(ok, 0.5 * jnp.sum(w[None, :] * h * L, axis=1), 0.0)
    return jnp.sum(w * bn * area) / 3.0


def halfspace_area(a: Float[Array, "m 2"], b: Float[Array, " m"]) -> Float[Array, ""]:
    """Area of the bounded polygon ``{p in R^2 : a p <= b}`` (pure JAX, exact, piecewise smooth).

    ``A = (1/2) sum_i w_i (b_i / |a_i|) L_i`` with ``L_i`` the length of the edge on
    line ``i`` (the line clipped by every half-space, in closed form) and
    ``w_i = 1 / multiplicity`` of repeated half-spaces. Rows with ``a_i = 0`` only test
    feasibility (``0 <= b_i``). An empty set gives 0.

    Args:
        a: ``(m, 2)`` normals.
        b: ``(m,)`` offsets.

    Returns:
        ``()`` the area.
    """
    tol = _tol(a)
    nrm, ok, u = _unit_rows(a, tol)
    bn = jnp.where(ok, b / _where_safe(ok, nrm), 0.0)
    scale = jnp.max(jnp.abs(bn)) + 1.0
    infeasible_const = jnp.any(~ok & (b < -10 * tol * scale))
    w = _duplicate_weight(u, bn, ok, tol)
    U = jnp.where(ok[:, None], u, 0.0)
    tang = jnp.stack([-U[:, 1], U[:, 0]], axis=-1)
    L = _segment_length(U, bn, bn[:, None] * U, tang, ok, tol, scale)
    return jnp.where(infeasible_const, 0.0, 0.5 * jnp.sum(w * bn * L))


_DROP_ROW = np.array([[r for r in range(6) if r != j] for j in range(6)])  # (6, 5): rows kept when row j is dropped
_COFACTOR_SIGN = np.array([(-1.0) ** j for j in range(6)])


def _cross5(B: Array) -> Array:
    """Generalised cross products in ``R^6`` of the five columns of each ``B`` ``(..., 6, 5)``.

    ``c_j = (-1)^j det(B without row j)``, orthogonal to every column of ``B``.
    """
    minors = B[..., _DROP_ROW, :]  # (..., 6, 5, 5)
    return jnp.linalg.det(minors) * jnp.asarray(_COFACTOR_SIGN, B.dtype)


def zero_moment_halfspaces(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                           ) -> tuple[Float[Array, "m 3"], Float[Array, " m"]]:
    """Half-spaces ``a f <= b`` of ``F_B`` in weight units (``f = F u / (m g)``), pure JAX.

    One pair per 5-subset ``S`` of the ``n >= 6`` rotors: ``c_S`` the generalised cross
    product of the columns ``A[:, S]`` of the normalised ``A = G_s / n``, ``a = ±c_S,F``
    (force part) and ``b = h(±c_S) = sum_i max(±c_S · A_i lo_i, ±c_S · A_i hi_i)``
    (:func:`jaxrotor.analysis._system.normalised` for ``A``, ``lo``, ``hi``). Valid for
    ``rank G = 6``.

    Returns:
        ``a (2 C(n, 5), 3)``, ``b (2 C(n, 5),)``.

    Raises:
        ValueError: for ``n < 6`` (``F_B`` is then flat or its volume needs the exact sets).
    """
    N = normalised(platform, alpha, beta)
    A, lo, hi = N.A, N.lo, N.hi
    n = A.shape[1]
    if n < 6:
        raise ValueError(f"analysis: the differentiable polytope measures need n >= 6 rotors, got n = {n} "
                         "(with fewer, rank G < 6 and F_B is flat or needs the exact sets). Fix: use "
                         "zero_moment_polytope / hover_section_polygon / above_hover_polytope.")
    subsets = np.array(list(itertools.combinations(range(n), 5)))
    c = _cross5(jnp.transpose(A[:, subsets], (1, 0, 2)))  # (s, 6)
    ref = jnp.max(jnp.linalg.norm(A, axis=0)) ** 5  # |c_S| of five orthogonal columns of the largest norm
    cn = jnp.linalg.norm(c, axis=1)
    real = cn > 1e2 * _tol(A) * ref  # 5-subsets of rank < 5 (round-off) give no facet
    c = jnp.where(real[:, None], c, 0.0) / ref
    proj = c @ A  # (s, n): c . A_i
    hp = jnp.sum(jnp.maximum(proj * lo, proj * hi), axis=1)
    hm = jnp.sum(jnp.maximum(-proj * lo, -proj * hi), axis=1)
    return jnp.concatenate([c[:, :3], -c[:, :3]]), jnp.concatenate([hp, hm])


def zero_moment_force_volume(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                            ) -> Float[Array, ""]:
    """Volume of the zero-moment force set ``F_B`` [N^3], differentiable (pure JAX).

    :func:`halfspace_volume` of :func:`zero_moment_halfspaces` times ``(m g)^3``;
    equals :func:`zero_moment_polytope` ``.measure`` (exact, not smoothed) for every
    fully actuated platform with ``n >= 6`` and finite ``rotor_speed_max``. For the
    star hexarotor with alternating cant ``alpha_0`` and no dihedral:
    ``12 sqrt(3) (c_f (u_max - u_min))^3 cos(alpha_0) sin^2(alpha_0)`` (``docs/analysis.md``).
    Entry 0 of :func:`zero_moment_measures` (under ``jit`` the other two are not computed).

    Returns:
        ``()`` [N^3].
    """
    return zero_moment_measures(platform, alpha, beta)[0]


def hover_section_area(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                      ) -> Float[Array, ""]:
    """Area of the hover section ``F_B ∩ {f_z = m g}`` [N^2], differentiable (pure JAX).

    :func:`halfspace_area` of ``a_xy p <= b - a_z`` (the half-spaces of
    :func:`zero_moment_halfspaces` at ``f_z / (m g) = 1``) times ``(m g)^2``; equals
    :func:`hover_section_polygon` ``.measure``. 0 when the platform cannot hover level.
    Entry 1 of :func:`zero_moment_measures`.

    Returns:
        ``()`` [N^2].
    """
    return zero_moment_measures(platform, alpha, beta)[1]


def volume_above_hover(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                      ) -> Float[Array, ""]:
    """Volume of ``F_B ∩ {f_z >= m g}`` [N^3], differentiable (pure JAX).

    :func:`halfspace_volume` of :func:`zero_moment_halfspaces` plus ``-f_z <= -1``
    (weight units) times ``(m g)^3``; equals :func:`above_hover_polytope` ``.measure``.
    Entry 2 of :func:`zero_moment_measures`.

    Returns:
        ``()`` [N^3].
    """
    return zero_moment_measures(platform, alpha, beta)[2]


def zero_moment_measures(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                        ) -> Float[Array, "3"]:
    """``(3,)`` :func:`zero_moment_force_volume` [N^3], :func:`hover_section_area` [N^2] and
    :func:`volume_above_hover` [N^3] from one set of half-spaces (pure JAX, differentiable)."""
    a, b = zero_moment_halfspaces(platform, alpha, beta)
    W = platform.weight
    up = jnp.concatenate([a, jnp.array([[0.0, 0.0, -1.0]], dtype=a.dtype)])
    return jnp.stack([halfspace_volume(a, b) * W**3, halfspace_area(a[:, :2], b - a[:, 2]) * W**2,
                      halfspace_volume(up, jnp.concatenate([b, jnp.array([-1.0], dtype=b.dtype)])) * W**3])
