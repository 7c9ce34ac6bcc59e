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
* :class:`TorquePriority`: ``u = clip(G^+ w + s n, u_min, u_max)`` where ``n`` is a
  positive, torque-free direction (``M n = 0``: the hover input, normalised) and the
  scalar shift ``s`` is the smallest that brings every rotor inside its bounds. When
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
    tol = 1e-9 * jnp.maximum(1.0, jnp.abs(u))
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

    With ``u0 = G^+ w`` and the torque-free direction ``n > 0``, every rotor is in
    bounds for ``s`` in ``[s_lo, s_hi]`` with ``s_lo = max_i (u_min,i - u0_i)/n_i`` and
    ``s_hi = min_i (u_max,i - u0_i)/n_i``. The shift is ``clip(0, s_lo, s_hi)`` (no
    shift when none is needed); if the interval is empty, its midpoint, after which
    the inputs are clipped.
    """

    def __call__(self, data, wrench):
        u0 = data.G_pinv @ wrench
        n = data.collective
        s_lo = jnp.max((data.u_min - u0) / n)
        s_hi = jnp.min((data.u_max - u0) / n)
        feasible = s_lo <= s_hi
        mid = jnp.where(jnp.isfinite(s_hi), 0.5 * (s_lo + s_hi), s_lo)
        s = jnp.where(feasible, jnp.clip(0.0, s_lo, s_hi), mid)
        u = jnp.clip(u0 + s * n, data.u_min, data.u_max)
        return _result(data, wrench, u, s)
