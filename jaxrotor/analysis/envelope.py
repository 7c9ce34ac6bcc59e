"""The hover envelope: the attitudes at which a platform can hold position with its inputs in bounds.

Holding position (zero linear and angular acceleration) at attitude ``R`` (body to
world) needs the rotors to cancel gravity and to make no moment about the centre
of mass:

    ``F u = m g R^T e_3``,  ``M u = 0``,  ``u_min <= u <= u_max``

(``F``, ``M`` of eq. (10), body frame FLU, ``u_i = omega_i^2`` [rad^2/s^2]). Only the
world's up direction seen in the body, ``n = R^T e_3``, enters: yaw about the world
vertical never matters. In the normalised system of :mod:`._system`
(``x = u / u_ref``, ``A = G_s / n``) the condition reads ``A x = (n, 0)``,
``lo <= x <= hi``; every question here is a linear program on it (SciPy HiGHS).

* :func:`hover_at_attitude`: can the platform hold position at ``roll``, ``pitch``
  (and by how much, :class:`HoverCheck`)?
* :func:`hover_envelope`: the largest hover tilt in every lean direction, the
  largest lateral force at level hover (:class:`HoverEnvelope`).

``docs/analysis.md`` ("The hover envelope") has the definitions and the paper
hexarotor's numbers.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import numpy as np

from .._util import to_jsonable
from ..design.platform import Platform
from ._system import System, system
from .exact import _linprog

__all__ = ["HoverCheck", "HoverEnvelope", "hover_at_attitude", "hover_envelope", "lean_to_roll_pitch"]

#: A margin above ``-FEASIBILITY_TOL`` counts as feasible (the LP's own tolerance is ~1e-9).
FEASIBILITY_TOL = 1e-9


class HoverCheck(NamedTuple):
    """Whether a platform can hold position at one attitude (:func:`hover_at_attitude`).

    Attributes:
        feasible: some ``u`` with ``u_min <= u <= u_max`` gives ``F u = m g R^T e_3``,
            ``M u = 0`` (``margin >= -1e-9``, the linear program's tolerance).
        margin: the largest uniform shrink ``t`` of the input bounds, as a fraction of
            each rotor's input range, that still admits a hover solution:
            ``max t`` s.t. ``G u = [m g R^T e_3; 0]``,
            ``u_min + t w <= u <= u_max - t w`` with ``w = u_max - u_min``. ``t = 0.5``
            when the centre of every range hovers, ``0 < t`` when the hover solution
            has every rotor strictly inside its range, ``t = 0`` on the boundary, ``t < 0``
            (the bounds must be widened by ``|t| w`` on both sides) when it is infeasible,
            ``-inf`` when no input at all makes that wrench (it is outside the range of
            ``G``, e.g. any tilted hover of a flat multirotor). For a rotor without an
            upper bound (``u_max = inf``) ``w`` is taken as ``u_ref = m g / sum_i c_f,i``
            and only its lower bound moves; ``t`` is capped at 1/2 in every case.
        u: ``(n,)`` the hover inputs at the largest margin [rad^2/s^2] (the most centred
            solution; outside the bounds by at most ``|t| w`` when infeasible); NaN when
            ``margin = -inf``.
    """

    feasible: bool
    margin: float
    u: np.ndarray


def _up_in_body(roll: float, pitch: float) -> np.ndarray:
    """``R^T e_3`` for ``R = R_z(yaw) R_y(pitch) R_x(roll)``: ``(-sin p, cos p sin r, cos p cos r)``."""
    return np.array([-math.sin(pitch), math.cos(pitch) * math.sin(roll), math.cos(pitch) * math.cos(roll)])


def _widths(s: System) -> np.ndarray:
    """Input range per rotor in ``x`` units (``u_ref`` = 1 where unbounded above)."""
    return np.where(np.isfinite(s.hi), s.hi - s.lo, 1.0)


def _margin(s: System, n_body: np.ndarray) -> tuple[float, np.ndarray | None]:
    """``max t`` s.t. ``A x = (n_body, 0)``, ``lo + t w <= x <= hi - t w``, ``t <= 1/2``: (t, x) or (-inf, None)."""
    n = s.n
    w = _widths(s)
    finite = np.isfinite(s.hi)
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_eq = np.zeros((6, n + 1))
    A_eq[:, :n] = s.A
    b_eq = np.concatenate([n_body, np.zeros(3)])
    # -x_i + t w_i <= -lo_i ;  x_i + t w_i <= hi_i (finite hi only)
    rows_lo = np.concatenate([-np.eye(n), w[:, None]], axis=1)
    rows_hi = np.concatenate([np.eye(n), w[:, None]], axis=1)[finite]
    A_ub = np.concatenate([rows_lo, rows_hi], axis=0)
    b_ub = np.concatenate([-s.lo, s.hi[finite]])
    status, z, fun = _linprog(c, A_eq=A_eq, b_eq=b_eq, A_ub=A_ub, b_ub=b_ub,
                              bounds=[(None, None)] * n + [(None, 0.5)])
    if status != "ok":
        return -math.inf, None
    return float(-fun) + 0.0, z[:n]


def _check(s: System, n_body: np.ndarray) -> HoverCheck:
    t, x = _margin(s, n_body)
    u = np.full(s.n, math.nan) if x is None else x * s.u_ref
    return HoverCheck(feasible=bool(t >= -FEASIBILITY_TOL), margin=t, u=u)


def _angle(value, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"hover_at_attitude: `{name}` = {value!r} is not a number. "
                         f"Fix: pass the angle in radians as a float.") from None
    if not math.isfinite(v):
        raise ValueError(f"hover_at_attitude: `{name}` = {v} is not finite. Fix: pass a finite angle in radians.")
    return v


def hover_at_attitude(platform: Platform, roll: float, pitch: float, yaw: float = 0.0, *,
                      alpha=None, beta=None) -> HoverCheck:
    """Whether ``platform`` can hold position at attitude ``R = R_z(yaw) R_y(pitch) R_x(roll)``.

    Solves the linear program (SciPy HiGHS, normalised inputs ``x = u / u_ref``)

        ``max t``  s.t.  ``F u = m g R^T e_3``,  ``M u = 0``,
        ``u_min + t w <= u <= u_max - t w``,  ``t <= 1/2``,  ``w = u_max - u_min``

    (body frame FLU, moments about the centre of mass): the body force that cancels
    gravity with zero moment, with the bounds shrunk by the fraction ``t`` of each
    rotor's range. ``R^T e_3 = (-sin(pitch), cos(pitch) sin(roll), cos(pitch) cos(roll))``
    does not depend on ``yaw``; positive ``pitch`` is nose down, positive ``roll`` right
    side down (FLU). See :class:`HoverCheck` for ``margin`` (``t``) and ``u``.

    Args:
        platform: a concrete platform (not traced). A tilting platform is evaluated with its
            servos frozen at ``alpha``, ``beta`` (default: the platform's current angles).
        roll: attitude, ``R = R_z(yaw) R_y(pitch) R_x(roll)`` [rad].
        pitch: [rad].
        yaw: [rad].
        alpha: optional cant override [rad], as for :func:`jaxrotor.analysis.analyze`.
        beta: optional dihedral override [rad].

    Returns:
        :class:`HoverCheck` ``(feasible, margin, u)`` with ``u`` of shape ``(n,)`` [rad^2/s^2].
    """
    roll, pitch = _angle(roll, "roll"), _angle(pitch, "pitch")
    _angle(yaw, "yaw")
    return _check(system(platform, alpha, beta), _up_in_body(roll, pitch))



# --------------------------------------------------------------------------- the envelope


@dataclasses.dataclass(frozen=True)
class HoverEnvelope:
    """The hover envelope of a fixed-tilt platform (:func:`hover_envelope`).

    A *lean* ``(theta, psi)`` is the attitude reached from level by turning the body by
    ``theta`` about the horizontal axis ``(-sin psi, cos psi, 0)``: the body ``z`` axis
    then leans by ``theta`` toward the body direction ``(cos psi, sin psi, 0)`` (FLU), and
    the world's up direction seen in the body is
    ``n = R^T e_3 = (-sin theta cos psi, -sin theta sin psi, cos theta)``. Heading
    ``psi = 0`` is nose down (``pitch = +theta``), ``90 deg`` left side down
    (``roll = -theta``), ``180 deg`` nose up (``pitch = -theta``), ``270 deg`` right side
    down (``roll = +theta``), for ``R = R_y(pitch) R_x(roll)``. Yaw never matters.

    Attributes:
        headings: ``(K,)`` lean headings ``psi_k = 2 pi k / K`` [rad].
        max_tilt: ``(K,)`` ``theta_max(psi_k)`` [rad]: hover (:func:`hover_at_attitude`) holds
            at every lean ``(theta, psi_k)`` with ``0 <= theta <= theta_max`` and fails just
            beyond; ``pi`` if it holds all the way round, NaN when level hover itself fails.
        min_max_tilt: ``min_k theta_max(psi_k)`` [rad]: the tilt held in every direction.
        max_max_tilt: ``max_k theta_max(psi_k)`` [rad].
        axis_tilts: ``theta_max`` along the body axes [rad]: ``"pitch_down"`` (``psi = 0``),
            ``"roll_left"`` (90 deg), ``"pitch_up"`` (180 deg), ``"roll_right"`` (270 deg).
        lateral_force_max: the largest lateral force at level hover, best direction [N]:
            ``max_k rho(d_k)`` of :func:`jaxrotor.analysis.lateral_force_profile` (NaN if
            level hover fails).
        lateral_force_min: the lateral force available in every direction at level hover [N]
            (:func:`jaxrotor.analysis.lateral_force_capability`).
        level_hoverable: level hover holds within the input bounds.
        level_margin: :class:`HoverCheck` ``margin`` at level attitude.
        method: ``"facets"`` (exact arc-facet intersection with the zero-moment force
            polytope), ``"subspace"`` (every lean leaves the zero-moment force space:
            ``theta_max = 0``), ``"lp"`` (bisection with :func:`hover_at_attitude`), or
            ``"none"`` (no level hover).
    """

    headings: np.ndarray
    max_tilt: np.ndarray
    min_max_tilt: float
    max_max_tilt: float
    axis_tilts: dict[str, float]
    lateral_force_max: float
    lateral_force_min: float
    level_hoverable: bool
    level_margin: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        """The ``jaxrotor analyze --json`` ``hover_envelope`` block: angles in degrees, forces in N."""
        deg = np.degrees
        return to_jsonable({
            "headings_deg": deg(self.headings).tolist(),
            "max_tilt_deg": deg(self.max_tilt).tolist(),
            "min_max_tilt_deg": float(deg(self.min_max_tilt)),
            "max_max_tilt_deg": float(deg(self.max_max_tilt)),
            "axis_tilt_deg": {k: float(deg(v)) for k, v in self.axis_tilts.items()},
            "lateral_force_max": self.lateral_force_max,
            "lateral_force_min": self.lateral_force_min,
            "level_hoverable": self.level_hoverable,
            "level_margin": self.level_margin,
            "method": self.method,
        })


_AXES = {"pitch_down": 0.0, "roll_left": 0.5 * math.pi, "pitch_up": math.pi, "roll_right": 1.5 * math.pi}
_SUBSPACE_TOL = 1e-9
_LP_STEP = math.radians(2.0)
_LP_TOL = 1e-10


def lean_to_roll_pitch(theta: float, psi: float) -> tuple[float, float]:
    """``(roll, pitch)`` [rad] of the lean ``(theta, psi)`` (:class:`HoverEnvelope`), ``R = R_y(pitch) R_x(roll)``.

    Matches ``R^T e_3``: ``sin(pitch) = sin(theta) cos(psi)``,
    ``tan(roll) = -sin(theta) sin(psi) / cos(theta)``; the pure axes map to
    ``pitch = +-theta`` (``psi = 0, 180 deg``) and ``roll = -+theta`` (``psi = 90, 270 deg``).
    """
    pitch = math.asin(max(-1.0, min(1.0, math.sin(theta) * math.cos(psi))))
    roll = math.atan2(-math.sin(theta) * math.sin(psi), math.cos(theta))
    return roll, pitch


def _lean_up(theta: float, psi: float) -> np.ndarray:
    return np.array([-math.sin(theta) * math.cos(psi), -math.sin(theta) * math.sin(psi), math.cos(theta)])


def _exit_by_facets(normals: np.ndarray, offsets: np.ndarray, psi: float) -> float:
    """First ``theta`` in ``[0, pi]`` where ``n(theta, psi)`` leaves ``{a_k . n <= d_k}`` (level inside).

    Along the arc ``a . n(theta) = a_z cos(theta) + a_h sin(theta) = r cos(theta - phi)``
    with ``a_h = -a_x cos(psi) - a_y sin(psi)``; it rises through ``d`` at
    ``theta = phi - acos(d / r)`` (mod ``2 pi``).
    """
    a_z = normals[:, 2]
    a_h = -normals[:, 0] * math.cos(psi) - normals[:, 1] * math.sin(psi)
    r = np.hypot(a_z, a_h)
    phi = np.arctan2(a_h, a_z)
    crosses = r > offsets
    if not np.any(crosses):
        return math.pi
    out = np.mod(phi[crosses] - np.arccos(np.clip(offsets[crosses] / r[crosses], -1.0, 1.0)), 2 * math.pi)
    out = np.where(out > 2 * math.pi - 1e-9, 0.0, out)
    return float(min(math.pi, out.min()))


def _exit_by_lp(s: System, psi: float) -> float:
    """First ``theta`` where hover fails along heading ``psi``: march in 2 deg steps, bisect to 1e-10 rad."""
    ok = lambda th: _margin(s, _lean_up(th, psi))[0] >= -FEASIBILITY_TOL  # noqa: E731
    lo = 0.0
    while lo < math.pi:
        hi = min(math.pi, lo + _LP_STEP)
        if not ok(hi):
            break
        lo = hi
    else:
        return math.pi
    while hi - lo > _LP_TOL:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def _tilts(s: System, psis: np.ndarray) -> tuple[np.ndarray, str]:
    from .exact import _zero_moment_basis
    from .polytopes import zero_moment_polytope

    B = _zero_moment_basis(s.A, s.tol / s.n)
    off_D = lambda v: np.linalg.norm(v - B @ (B.T @ v)) > _SUBSPACE_TOL  # noqa: E731
    P = zero_moment_polytope.on_system(s)
    facets = P.dim == 3 and math.isfinite(P.measure) and len(P.offsets) > 0
    out, methods = [], set()
    for psi in psis:
        h = np.array([-math.cos(psi), -math.sin(psi), 0.0])
        if off_D(h):  # the lean leaves F ker(M) at once: no tilted hover along psi
            out.append(0.0)
            methods.add("subspace")
        elif facets:
            out.append(_exit_by_facets(P.normals, P.offsets / s.weight, psi))
            methods.add("facets")
        else:
            out.append(_exit_by_lp(s, psi))
            methods.add("lp")
    method = "facets" if "facets" in methods else "lp" if "lp" in methods else "subspace"
    return np.array(out), method


def hover_envelope(platform: Platform, n_headings: int = 72, *, alpha=None, beta=None,
                   n_directions: int = 36) -> HoverEnvelope:
    """The largest hover tilt in every lean direction and the lateral force at level hover.

    For each heading ``psi_k = 2 pi k / K`` the largest ``theta`` such that hover
    (:func:`hover_at_attitude`: ``F u = m g n``, ``M u = 0``, ``u_min <= u <= u_max``,
    ``n = R^T e_3``) holds at every lean ``(theta', psi_k)`` with ``0 <= theta' <= theta``
    (leans as in :class:`HoverEnvelope`). Hover at ``n`` holds exactly when the unit
    vector ``n`` (forces in units of ``m g``) lies in the zero-moment force polytope
    ``F_B = {F u / (m g) : M u = 0, u in bounds}`` (:func:`jaxrotor.analysis.zero_moment_polytope`),
    so with ``F_B`` full-dimensional and its facets ``a_j . f <= d_j``, ``theta_max`` is the
    first angle at which the arc ``n(theta, psi)`` crosses a facet, in closed form
    (``method = "facets"``). When a lean direction ``(-cos psi, -sin psi, 0)`` is outside
    ``D = F ker(M)`` (every flat multirotor) the arc leaves ``F_B`` at once and
    ``theta_max = 0`` exactly (``"subspace"``). Otherwise (a flat ``F_B`` containing the
    arc, unbounded inputs) ``theta_max`` is found with the linear program of
    :func:`hover_at_attitude`, marching ``theta`` in 2 deg steps and bisecting to 1e-10 rad
    (``"lp"``; a feasible island beyond a gap narrower than 2 deg would be missed).

    The lateral forces are :func:`jaxrotor.analysis.lateral_force_profile` over
    ``n_directions`` horizontal directions (reused, not recomputed differently).

    Args:
        platform: a concrete fixed-tilt platform. A tilting one is refused unless the servo
            angles to freeze are given as ``alpha``/``beta``.
        n_headings: ``K >= 4``, number of lean headings.
        alpha: optional cant angles [rad] (as for :func:`jaxrotor.analysis.analyze`).
        beta: optional dihedral angles [rad].
        n_directions: horizontal directions of the lateral-force profile.

    Returns:
        :class:`HoverEnvelope` (angles [rad], forces [N]).
    """
    if isinstance(n_headings, bool) or not isinstance(n_headings, (int, np.integer)) or n_headings < 4:
        raise ValueError(f"hover_envelope: `n_headings` = {n_headings!r} is invalid. "
                         "Fix: pass an integer >= 4 (72 gives one heading every 5 deg).")
    if platform.is_tilting and alpha is None and beta is None:
        raise ValueError(
            f"hover_envelope: platform {platform.name!r} tilts its rotors in flight ({', '.join(platform.tilting)}); "
            "its envelope depends on the servo angles. Fix: pass the angles to freeze as alpha=/beta= "
            "(hover_envelope(platform, alpha=..., beta=...)), or analyze a fixed-tilt platform.")
    return envelope_on_system(system(platform, alpha, beta), int(n_headings), n_directions=n_directions)


def envelope_on_system(s: System, n_headings: int = 72, *, n_directions: int = 36, rho=None) -> HoverEnvelope:
    """:func:`hover_envelope` of a built :class:`~jaxrotor.analysis._system.System` (what ``analyze`` calls).

    ``rho``: the ``(n_directions,)`` lateral-force profile [N] if already computed.
    """
    from .exact import lateral_force_profile

    level = _check(s, np.array([0.0, 0.0, 1.0]))
    headings = 2 * math.pi * np.arange(n_headings) / n_headings
    if not level.feasible:
        nan = math.nan
        return HoverEnvelope(headings=headings, max_tilt=np.full(len(headings), nan), min_max_tilt=nan,
                             max_max_tilt=nan, axis_tilts={k: nan for k in _AXES}, lateral_force_max=nan,
                             lateral_force_min=nan, level_hoverable=False, level_margin=level.margin, method="none")
    if rho is None:
        _, rho = lateral_force_profile.on_system(s, n_directions=n_directions)
    tilts, method = _tilts(s, np.concatenate([headings, list(_AXES.values())]))
    tilts, axis = tilts[:n_headings], tilts[n_headings:]
    return HoverEnvelope(headings=headings, max_tilt=tilts, min_max_tilt=float(tilts.min()),
                         max_max_tilt=float(tilts.max()), axis_tilts=dict(zip(_AXES, map(float, axis))),
                         lateral_force_max=float(np.max(rho)), lateral_force_min=float(np.min(rho)),
                         level_hoverable=True, level_margin=level.margin, method=method)
