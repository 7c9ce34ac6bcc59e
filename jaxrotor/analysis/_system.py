"""The normalised actuation system of a platform: built once, shared by every analysis.

Linear programs and barrier problems are posed in the dimensionless inputs
``x = u / u_ref`` with ``u_ref = m g / sum_i c_f,i`` (the common input with which
vertical rotors would just lift the weight) on

    ``A = G_s / n = diag(1, 1, 1, 1/L, 1/L, 1/L) G / sum_i c_f,i``

(``G_s`` the unit-consistent :func:`jaxrotor.allocation.scaled_allocation_matrix`,
``L`` the :func:`jaxrotor.allocation.characteristic_length`), so that
``A x = (f_c / (m g), tau_c / (m g L))`` and every number is of order one.
:func:`normalised` is the JAX form (differentiable measures); :func:`system` the
concrete float64 NumPy form (exact reports), built from the same function;
:func:`exact` turns a function of the system into the public
``f(platform, alpha=None, beta=None, ...)``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from jax import Array

from ..allocation import (characteristic_length, force_matrix, hover_inputs, moment_matrix, rank_tolerance,
                          scaled_allocation_matrix)
from ..design.platform import Platform, is_concrete


class Normalised(NamedTuple):
    """The normalised system in JAX (every field differentiable in the platform's leaves).

    Attributes:
        A: ``(6, n)`` ``G_s / n``: ``A x = (f / (m g), tau / (m g L))``.
        lo, hi: ``(n,)`` input bounds in ``x`` (``hi`` may be ``inf``).
        u_ref: ``()`` ``m g / sum_i c_f,i`` [rad^2/s^2].
        x_hover: ``(n,)`` the minimum-norm level hover input ``G^+ [m g e_3; 0] / u_ref``
            (:func:`jaxrotor.allocation.hover_inputs`), which solves ``A x = e_3``.
    """

    A: Array
    lo: Array
    hi: Array
    u_ref: Array
    x_hover: Array


def normalised(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> Normalised:
    """:class:`Normalised` system of ``platform`` at tilt angles ``alpha``, ``beta`` (pure JAX)."""
    Gs = scaled_allocation_matrix(platform, alpha, beta)
    u_ref = platform.weight / platform.c_f.sum()
    return Normalised(A=Gs / Gs.shape[1], lo=platform.u_min / u_ref, hi=platform.u_max / u_ref, u_ref=u_ref,
                      x_hover=hover_inputs(platform, alpha, beta) / u_ref)


@dataclasses.dataclass(frozen=True)
class System:
    """Concrete float64 matrices of a platform at given tilt angles, with the normalisation.

    Attributes:
        F, M: ``(3, n)`` allocation matrices of eq. (10) [N/(rad^2/s^2)], [N m/(rad^2/s^2)].
        c_f: ``(n,)`` thrust coefficients.
        A: ``(6, n)`` normalised ``G_s / n``.
        lo, hi: ``(n,)`` bounds in ``x = u / u_ref`` (``hi`` may be ``inf``).
        x_hover: ``(n,)`` minimum-norm level hover input in ``x`` (bounds not enforced).
        u_ref: ``m g / sum_i c_f,i`` [rad^2/s^2].
        weight: ``m g`` [N].
        L: characteristic length [m].
        tol: singular-value tolerance on ``G_s``, :func:`jaxrotor.allocation.rank_tolerance`
            (of the platform's own float type); ``tol / n`` on ``A``.
        J: ``(3, 3)`` body inertia about the centre of mass [kg m^2].
    """

    F: np.ndarray
    M: np.ndarray
    c_f: np.ndarray
    A: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    x_hover: np.ndarray
    u_ref: float
    weight: float
    L: float
    tol: float
    J: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Rotor count."""
        return self.F.shape[1]

    @property
    def Gs(self) -> np.ndarray:
        """``(6, n)`` unit-consistent ``G_s = n A``."""
        return self.A * self.n


def system(platform: Platform, alpha=None, beta=None) -> System:
    """The concrete :class:`System` of ``platform`` (raises ``ValueError`` on traced values or ``L = 0``)."""
    if not is_concrete(platform, alpha, beta):
        raise ValueError(
            "analysis: the exact reports need a concrete platform, got traced values (inside jit/vmap/grad). "
            "Fix: call analyze() outside jit, or use the differentiable measures condition_number, "
            "hover_efficiency, smooth_lateral_force_capability, rotor_loss_margin."
        )
    L = float(characteristic_length(platform))
    if not L > 0:
        raise ValueError(
            f"analysis: the mean hub distance L = {L} m is not positive (every rotor at the centre of mass). "
            "Fix: place the rotors away from the centre of mass."
        )
    N = normalised(platform, alpha, beta)
    A = np.asarray(N.A, dtype=float)
    f64 = lambda x: np.asarray(x, dtype=float)  # noqa: E731
    return System(F=f64(force_matrix(platform, alpha, beta)), M=f64(moment_matrix(platform, alpha, beta)),
                  c_f=f64(platform.c_f), A=A, lo=f64(N.lo), hi=f64(N.hi), x_hover=f64(N.x_hover),
                  u_ref=float(N.u_ref), weight=float(platform.weight), L=L,
                  tol=rank_tolerance(N.A * A.shape[1]), J=f64(platform.inertia))


def exact(fn: Callable) -> Callable:
    """Make the public ``f(platform, alpha=None, beta=None, **options)`` of an exact measure ``fn(system, **options)``.

    The public function builds the :class:`System` once and calls ``fn``; ``fn``
    itself stays available as ``f.on_system`` (what :func:`jaxrotor.analysis.analyze`
    calls on its one system). Docstring and options are ``fn``'s.
    """

    @functools.wraps(fn)
    def public(platform: Platform, alpha=None, beta=None, **options):
        return fn(system(platform, alpha, beta), **options)

    sig = inspect.signature(fn)
    head = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
            for name, default in (("platform", inspect.Parameter.empty), ("alpha", None), ("beta", None))]
    public.__signature__ = sig.replace(parameters=head + list(sig.parameters.values())[1:])
    del public.__wrapped__
    public.on_system = fn
    return public
