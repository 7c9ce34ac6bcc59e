"""Allocators: turn a desired body wrench ``w = (f_b, tau_b)`` into rotor inputs ``u``.

Each allocator is an equinox Module with two steps:

* ``prepare(platform, alpha, beta) -> AllocationData``: the matrices that depend only
  on the geometry (``G``, its pseudo-inverse ``G^+``, a torque-free collective
  direction). For a fixed-tilt platform this runs once per simulation, outside the
  vector field.
* ``__call__(data, w) -> Allocation``: the inputs and a record of the requested and
  achieved wrench, so saturation is visible.

Allocators:

* :class:`PseudoInverse`: ``u = G^+ w``, no bounds (minimum-norm, may be negative).
* :class:`Clip`: ``u = clip(G^+ w, u_min, u_max)`` (every axis of the wrench may suffer).
* :class:`TorquePriority`: ``u = clip(G^+ w + s n, u_min, u_max)`` where ``n`` is the
  torque-free direction (``M n = 0``: the hover input, normalised; positive on a usual
  platform, but a rotor may have ``n_i = 0`` or ``n_i < 0``) and the scalar shift ``s``
  is the smallest that brings every rotor inside its bounds. When
  such a shift exists the three torques are delivered exactly and only the
  force along ``F n`` (the collective) changes ("air mode").
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax.numpy as jnp
from jax import Array

from .allocation import allocation_matrix, hover_wrench
from .design.platform import Platform

__all__ = ["AllocationData", "Allocation", "AbstractAllocator", "PseudoInverse", "Clip", "TorquePriority"]


class AllocationData(eqx.Module):
    """Geometry-dependent allocation matrices.

    Attributes:
        G: ``(6, n)`` allocation matrix ``[F; M]``.
        G_pinv: ``(n, 6)`` Moore-Penrose pseudo-inverse.
        collective: ``(n,)`` torque-free input direction (hover input / its max).
        u_min, u_max: ``(n,)`` input bounds [rad^2/s^2].
    """

    G: Array
    G_pinv: Array
    collective: Array
    u_min: Array
    u_max: Array


class Allocation(eqx.Module):
    """Result of one allocation.

    Attributes:
        u: ``(n,)`` inputs [rad^2/s^2].
        requested: ``(6,)`` wrench asked for ``(f_b [N], tau_b [N m])``.
        achieved: ``(6,)`` wrench ``G u`` the inputs deliver.
        saturated: ``(n,)`` bool, rotor at a bound.
        shift: ``()`` collective shift applied (torque priority; 0 otherwise).
    """

    u: Array
    requested: Array
    achieved: Array
    saturated: Array
    shift: Array


def prepare_allocation(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> AllocationData:
    """Build :class:`AllocationData` for the platform at the given tilt angles."""
    G = allocation_matrix(platform, alpha, beta)
    G_pinv = jnp.linalg.pinv(G)
    hover = G_pinv @ hover_wrench(platform)
    collective = hover / jnp.max(jnp.abs(hover))
    return AllocationData(G=G, G_pinv=G_pinv, collective=collective, u_min=platform.u_min, u_max=platform.u_max)


class AbstractAllocator(eqx.Module):
    """Maps a desired body wrench to rotor inputs."""

    def prepare(self, platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> AllocationData:
        """Geometry-dependent matrices (see :func:`prepare_allocation`)."""
        return prepare_allocation(platform, alpha, beta)

    @abc.abstractmethod
    def __call__(self, data: AllocationData, wrench: Array) -> Allocation:
        """Allocate ``wrench`` ``(6,)`` = ``(f_b, tau_b)`` in the body frame."""


def _result(data: AllocationData, wrench: Array, u: Array, shift) -> Allocation:
    # a rotor within round-off of a bound counts as saturated: 1e-9 relative, or 8 ulp in float32
    rel = max(1e-9, 8 * float(jnp.finfo(u.dtype).eps))
    tol = rel * jnp.maximum(1.0, jnp.abs(u))
    sat = (u <= data.u_min + tol) | (u >= data.u_max - tol)
    return Allocation(u=u, requested=wrench, achieved=data.G @ u, saturated=sat, shift=jnp.asarray(shift, dtype=u.dtype))


class PseudoInverse(AbstractAllocator):
    """``u = G^+ w``: exact whenever ``w`` is in the range of ``G``; ignores input bounds."""

    def __call__(self, data, wrench):
        u = data.G_pinv @ wrench
        res = _result(data, wrench, u, 0.0)
        return eqx.tree_at(lambda r: r.saturated, res, jnp.zeros_like(res.saturated))


class Clip(AbstractAllocator):
    """``u = clip(G^+ w, u_min, u_max)``."""

    def __call__(self, data, wrench):
        u = jnp.clip(data.G_pinv @ wrench, data.u_min, data.u_max)
        return _result(data, wrench, u, 0.0)


class TorquePriority(AbstractAllocator):
    """Shift the collective, then clip: torques survive whenever a shift suffices.

    With ``u0 = G^+ w`` [rad^2/s^2] and the torque-free direction ``n`` (``M n = 0``,
    scaled so ``max_i |n_i| = 1``), rotor ``i`` is in bounds for the shifts ``s``
    with ``u_min,i <= u0_i + s n_i <= u_max,i``:

    * ``n_i > 0``: ``(u_min,i - u0_i)/n_i <= s <= (u_max,i - u0_i)/n_i``;
    * ``n_i < 0``: the division by a negative number swaps the two bounds,
      ``(u_max,i - u0_i)/n_i <= s <= (u_min,i - u0_i)/n_i``;
    * ``n_i = 0`` (``|n_i|`` within a few ulp of zero): the shift does not move the
      rotor, so it places no bound on ``s``; the rotor is only clipped.

    ``s_lo`` is the largest lower and ``s_hi`` the smallest upper bound. The shift
    is ``clip(0, s_lo, s_hi)`` (no shift when none is needed); if the interval is
    empty, its midpoint, after which the inputs are clipped. No division by zero
    happens, so values and derivatives are finite for every ``n``.
    """

    def __call__(self, data, wrench):
        u0 = data.G_pinv @ wrench
        n = data.collective
        tiny = 8 * jnp.finfo(n.dtype).eps
        pos, neg = n > tiny, n < -tiny
        moves = pos | neg
        n_safe = jnp.where(moves, n, 1.0)
        to_min = (data.u_min - u0) / n_safe  # shift that puts rotor i on u_min
        to_max = (data.u_max - u0) / n_safe  # shift that puts rotor i on u_max
        lower = jnp.where(pos, to_min, jnp.where(neg, to_max, -jnp.inf))
        upper = jnp.where(pos, to_max, jnp.where(neg, to_min, jnp.inf))
        s_lo, s_hi = jnp.max(lower), jnp.min(upper)
        feasible = s_lo <= s_hi
        both = jnp.isfinite(s_lo) & jnp.isfinite(s_hi)
        mid = jnp.where(both, 0.5 * (jnp.where(both, s_lo, 0.0) + jnp.where(both, s_hi, 0.0)),
                        jnp.where(jnp.isfinite(s_lo), s_lo, s_hi))
        s = jnp.where(feasible, jnp.clip(0.0, s_lo, s_hi), mid)
        u = jnp.clip(u0 + s * n, data.u_min, data.u_max)
        return _result(data, wrench, u, s)
