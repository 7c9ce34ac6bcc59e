"""The tilted full-pose hover of a vehicle that lost wrench rank (Michieletto, Ryll and Franchi, T-RO 2018).

A tilted hexarotor that loses a rotor keeps five columns of ``G = [F; M]``: rank 5, so it can no longer make
a body force in every direction at zero moment. If its remaining moment matrix ``M`` keeps rank 3, the forces
it makes with zero moment fill the subspace ``D = F ker(M)`` (a plane for five tilted rotors). Any unit
direction ``d`` of ``D`` whose hover inputs ``u = m g P_N (F P_N)^+ d`` (``P_N = I - M^+ M``, the projector on
``ker M``) lie within the input bounds with every remaining rotor spinning is a *static hover*: turned so that
``R d = e_3``, the vehicle holds its position and a constant attitude, heading included, controlling the
force along ``d`` and the three torques, as a quadrotor controls its thrust along body ``z``.

:func:`hover_axis` picks that direction; the flight computer (:func:`jaxrotor.flight.fault_aware`) flies it
with :func:`jaxrotor.control.axis_wrench` and :func:`axis_allocation`, and the static analysis
(:func:`jaxrotor.analysis.rotor_loss`) calls the same function, so both say the same.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

from . import linalg
from .allocators import Allocation, AllocationData, BoxLS, allocation_record

__all__ = ["AXIS_CANDIDATES", "AXIS_MARGIN", "MAX_AXIS_TILT", "HoverAxis", "hover_axis", "axis_margin", "axis_allocation", "axis_problem"]

#: Number of candidate directions :func:`hover_axis` tries (a Fibonacci upper hemisphere mapped into ``D``).
AXIS_CANDIDATES = 512
#: Largest tilt [rad] of a hover axis from body ``z``: a hover tilted further is not taken. The flight computer
#: turns the vehicle from level to the hover attitude after the loss is detected, with the rotors near their
#: bounds; measured on ten random tilted hexarotors (``experiments/fault_agreement.py``, the paper hexarotor's
#: Table III gains and ``box_ls``), axes tilted up to 0.21 rad were reached and held, axes tilted 0.28 and
#: 0.35 rad tipped the vehicle over in the transient.
MAX_AXIS_TILT = 0.25
#: Margin (the least room of a remaining input to either bound, over their mean) a tilted hover needs: it steers
#: its position by turning the whole vehicle, and the inputs must have room to make the torques. Among the
#: directions with this margin :func:`hover_axis` takes the least tilted; with none, the one of the largest margin
#: (then not feasible).
AXIS_MARGIN = 0.1


class HoverAxis(eqx.Module):
    """A static hover direction of the remaining rotors (:func:`hover_axis`).

    Attributes:
        axis: ``(3,)`` unit body-frame direction ``d`` of the zero-moment force (``R d = e_3`` in hover).
        projector: ``(3, 3)`` projector ``P_D`` on the zero-moment force subspace ``D = F ker(M)`` (body frame).
        inputs: ``(n,)`` hover inputs [rad^2/s^2] along ``axis`` for the weight ``m g``.
        margin: ``()`` the least room of a remaining input to either of its bounds, over their mean (``-inf`` when
            no direction is valid).
        tilt: ``()`` angle between ``axis`` and body ``z`` [rad].
        feasible: ``()`` bool: ``M`` has rank 3 and the margin is at least :data:`AXIS_MARGIN` with every input
            within its bounds.
    """

    axis: Float[Array, "3"]
    projector: Float[Array, "3 3"]
    inputs: Float[Array, " n"]
    margin: Float[Array, ""]
    tilt: Float[Array, ""]
    feasible: Bool[Array, ""]


def _hemisphere(k: int, dtype) -> Array:
    i = jnp.arange(k, dtype=dtype) + 0.5
    z = 1.0 - i / k  # upper hemisphere, z in (0, 1]
    r = jnp.sqrt(jnp.maximum(1.0 - z**2, 0.0))
    th = jnp.pi * (1.0 + 5.0**0.5) * i
    return jnp.stack([r * jnp.cos(th), r * jnp.sin(th), z], axis=0)  # (3, k)


def hover_axis(G: Float[Array, "6 n"], u_min: Float[Array, " n"], u_max: Float[Array, " n"], weight,
               alive: Bool[Array, " n"] | None = None) -> HoverAxis:
    """The zero-moment force direction a vehicle with allocation matrix ``G`` hovers along (module docstring).

    ``P_N = I - M^+ M``; the zero-moment forces are ``D = range(F P_N)`` with projector
    ``P_D = (F P_N)(F P_N)^+``. Candidate directions ``d_k = P_D v_k / |P_D v_k|`` (``v_k``
    :data:`AXIS_CANDIDATES` points on the upper hemisphere) with ``d_z >= cos`` :data:`MAX_AXIS_TILT` get the
    inputs ``u_k = weight P_N (F P_N)^+ d_k`` and the margin ``min_i min(u_i - u_min,i, u_max,i - u_i) / mean_i u_i`` over the
    ``alive`` rotors; those with ``u_k <= u_max`` and ``F u_k = weight d_k`` count. Taken: the least tilted
    direction with margin at least :data:`AXIS_MARGIN`, else the one with the largest margin. Pure JAX, no LAPACK (:mod:`jaxrotor.linalg`;
    ``jit``, ``vmap``; the choice is an ``argmax``, its value differentiable in ``G``).

    Args:
        G: ``(6, n)`` allocation matrix ``[F; M]``, a lost rotor's column zero.
        u_min: ``(n,)`` lower input bounds (the units of ``G``'s inputs).
        u_max: ``(n,)`` upper input bounds (``inf`` allowed).
        weight: ``()`` force to hold [the units of ``F u``]: ``m g`` [N] for a physical ``G``.
        alive: ``(n,)`` bool, the rotors counted in the margin (default: the nonzero columns of ``G``).

    Returns:
        the :class:`HoverAxis`.
    """
    d, P_D, u, margin, tilt, valid, rank_M, _ = _candidates(G, u_min, u_max, weight, alive)
    score = jnp.where(valid & (margin >= AXIS_MARGIN), 10.0 - tilt, jnp.where(valid, margin, -jnp.inf))
    k = jnp.argmax(score)
    best = jnp.where(valid[k], margin[k], -jnp.inf)
    return HoverAxis(axis=d[:, k], projector=P_D, inputs=u[:, k], margin=best, tilt=tilt[k],
                     feasible=rank_M & (best >= AXIS_MARGIN))


def _candidates(G, u_min, u_max, weight, alive):
    """The :data:`AXIS_CANDIDATES` directions of :func:`hover_axis`: ``(d (3, k), P_D, u (n, k), margin (k,),
    tilt (k,), valid (k,), rank_M, in_D (k,))``; ``valid`` = in ``D``, within the upper bounds and tilted at most
    :data:`MAX_AXIS_TILT`."""
    G = jnp.asarray(G)
    dtype = G.dtype
    F, M = G[:3], G[3:]
    n = G.shape[1]
    if alive is None:
        alive = jnp.any(G != 0, axis=0)
    P_N = jnp.eye(n, dtype=dtype) - linalg.pinv(M) @ M
    FN = F @ P_N
    # rounding leaves P_N ~eps off zero on the live rotors; without a zero-moment force (a quadrotor's three
    # rotors) that noise must not become a direction
    FN = jnp.where(jnp.abs(FN) > max(1e-9, 1e4 * float(jnp.finfo(dtype).eps)) * jnp.max(jnp.abs(F)), FN, 0.0)
    FN_pinv = linalg.pinv(FN)
    P_D = FN @ FN_pinv
    v = _hemisphere(AXIS_CANDIDATES, dtype)
    w = P_D @ v
    norm = jnp.linalg.norm(w, axis=0)
    d = w / jnp.maximum(norm, 1e-30)
    d = d * jnp.sign(jnp.where(d[2] == 0, 1.0, d[2]))  # upper half: a thrust that holds the weight
    u = weight * (P_N @ (FN_pinv @ d))  # (n, k)
    scale = jnp.max(jnp.abs(G))
    in_D = (norm > 1e-6 * jnp.max(norm)) & (jnp.linalg.norm(F @ u - weight * d, axis=0) <= 1e-6 * jnp.abs(weight))
    within = jnp.all(jnp.where(alive[:, None], u <= u_max[:, None] * (1 + 1e-9) + 1e-12, True), axis=0)
    count = jnp.maximum(jnp.sum(alive), 1)
    mean = jnp.sum(jnp.where(alive[:, None], u, 0.0), axis=0) / count
    slack = jnp.minimum(u - u_min[:, None], u_max[:, None] - u)  # room below and above each input
    low = jnp.min(jnp.where(alive[:, None], slack, jnp.inf), axis=0)
    margin = jnp.where(mean > 0, low / jnp.where(mean > 0, mean, 1.0), -jnp.inf)
    tilt = jnp.arccos(jnp.clip(d[2], -1.0, 1.0))
    valid = in_D & within & (tilt <= MAX_AXIS_TILT) & jnp.isfinite(margin)
    sv = linalg.singular_values(M)
    rank_M = sv[2] > max(1e-9, 100 * float(jnp.finfo(dtype).eps)) * jnp.maximum(sv[0], 1e-30 * scale)
    return d, P_D, u, margin, tilt, valid, rank_M, in_D


def axis_margin(G: Float[Array, "6 n"], u_min: Float[Array, " n"], u_max: Float[Array, " n"], weight,
                alive: Bool[Array, " n"] | None = None, *, tilt_slope: float = 10.0) -> Float[Array, ""]:
    """A continuous measure of :func:`hover_axis`'s feasibility, for design constraints: ``>=`` :data:`AXIS_MARGIN`
    exactly when some candidate direction is a feasible static hover.

    ``max_k min(margin_k, AXIS_MARGIN + s (MAX_AXIS_TILT - tilt_k))`` over the candidates ``k`` in ``D``
    (``margin_k`` and ``tilt_k`` [rad] as in :func:`hover_axis`, ``s`` = ``tilt_slope`` [1/rad]): a direction
    tilted less than :data:`MAX_AXIS_TILT` by ``(1 - AXIS_MARGIN) / s`` or more counts with its margin (``<= 1``);
    nearer the cone's edge the margin is capped, falling to :data:`AXIS_MARGIN` at the edge (a margin of at least
    :data:`AXIS_MARGIN` keeps the inputs within their upper bounds too), and a direction tilted further scores below
    :data:`AXIS_MARGIN` by ``s`` times the excess, so an optimiser sees how far the hover axis is from the cone.
    Continuous and piecewise smooth in ``G`` (the max over a finite set); ``-1`` when ``M`` lost rank or ``D`` is
    empty (no zero-moment force).

    Args:
        G: ``(6, n)`` allocation matrix ``[F; M]``, a lost rotor's column zero (as :func:`hover_axis`).
        u_min: ``(n,)`` lower input bounds.
        u_max: ``(n,)`` upper input bounds (``inf`` allowed).
        weight: ``()`` force to hold [the units of ``F u``].
        alive: ``(n,)`` bool, the rotors counted in the margin (default: the nonzero columns of ``G``).
        tilt_slope: ``s`` [1/rad], the score lost per radian of tilt toward and beyond the cone's edge.

    Returns:
        ``()`` dimensionless score (``<= 1``).
    """
    _, _, _, margin, tilt, _, rank_M, in_D = _candidates(G, u_min, u_max, weight, alive)
    score = jnp.minimum(margin, AXIS_MARGIN + tilt_slope * (MAX_AXIS_TILT - tilt))
    best = jnp.max(jnp.where(in_D & jnp.isfinite(margin), score, -jnp.inf))
    return jnp.where(rank_M & jnp.isfinite(best), best, -jnp.ones_like(best))


def axis_allocation(data: AllocationData, hover: HoverAxis, w_des: Float[Array, "6"]) -> Allocation:
    """The allocation of a vehicle flying its tilted hover: the force along the hover axis and three torques.

    ``u = argmin_{u_min <= u <= u_max} |W (G_D u - w_D)|^2`` with ``G_D = [P_D F; M]`` and ``w_D = (P_D f, tau)``
    (:class:`~jaxrotor.allocators.BoxLS`): the force is matched in the zero-moment subspace ``D`` only, its
    component across ``D`` (a by-product of the torques) left free, so the rank-deficient rows do not trade
    torque for a force the rotors cannot make. ``w_des`` ``(6,)``: ``(f_b [N], tau_b [N m])`` of
    :func:`jaxrotor.control.axis_wrench`.

    Returns:
        the :class:`~jaxrotor.allocators.Allocation` (its ``achieved`` wrench from the full ``G``).
    """
    G_D, w_D = axis_problem(data, hover, w_des)
    u = BoxLS().inputs(G_D, data.u_min, data.u_max, w_D)
    return allocation_record(data.G, data.u_min, data.u_max, w_des, u)


def axis_problem(data: AllocationData, hover: HoverAxis, w_des: Float[Array, "6"]
                 ) -> tuple[Float[Array, "6 n"], Float[Array, "6"]]:
    """The least-squares problem of :func:`axis_allocation`: ``(G_D, w_D)``, ``G_D = [P_D F; M]`` ``(6, n)`` and
    ``w_D = (P_D f, tau)`` ``(6,)``, ``P_D`` the projector onto the zero-moment force subspace ``D``
    (``hover.projector``)."""
    P = hover.projector
    return (jnp.concatenate([P @ data.G[:3], data.G[3:]], axis=0),
            jnp.concatenate([P @ w_des[:3], w_des[3:]]))
