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

import math
from typing import NamedTuple

import numpy as np

from ..design.platform import Platform
from ._system import System, system
from .exact import _linprog

__all__ = ["HoverCheck", "hover_at_attitude"]

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
            and only its lower bound moves.
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
        roll, pitch, yaw: attitude [rad].
        alpha, beta: optional tilt-angle overrides, as for :func:`jaxrotor.analysis.analyze`.

    Returns:
        :class:`HoverCheck` ``(feasible, margin, u)`` with ``u`` of shape ``(n,)`` [rad^2/s^2].
    """
    roll, pitch = _angle(roll, "roll"), _angle(pitch, "pitch")
    _angle(yaw, "yaw")
    return _check(system(platform, alpha, beta), _up_in_body(roll, pitch))

