"""The objective-term interface and its algebra: abstract terms, weights, sums, bounds and barriers.

:class:`AbstractTerm` is the interface (``term(design, traj)`` is a cost, lower is
better); :class:`AbstractMeasureTerm` (a physical measure and a sense, cost
``sense * measure``) splits into :class:`AbstractFlightTerm` (reads the trajectory) and
:class:`AbstractDesignTerm` (the design alone), which fix ``needs_flight``. The final
composites: ``w * term`` is :class:`Weighted`, ``a + b`` a flat :class:`Sum`,
:class:`Constrained` weighs a measure and penalises its bounds (:func:`at_least`,
:func:`at_most`), :class:`Barrier` keeps it strictly inside them. The leaf terms are in
:mod:`jaxrotor.optimize.flight_terms` and :mod:`jaxrotor.optimize.design_terms`; every
name is importable from :mod:`jaxrotor.optimize.objectives`.
"""

from __future__ import annotations

import abc
import math
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jaxtyping import Float

from .._util import as_float

__all__ = [
    "AbstractTerm",
    "AbstractMeasureTerm",
    "AbstractFlightTerm",
    "AbstractDesignTerm",
    "AbstractWrapperTerm",
    "Weighted",
    "Sum",
    "Constrained",
    "Barrier",
    "at_least",
    "at_most",
]


def _unique_names(items: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, v in items:
        key, k = name, 2
        while key in out:
            key, k = f"{name}_{k}", k + 1
        out[key] = v
    return out


# --------------------------------------------------------------------------- interface


class AbstractTerm(eqx.Module):
    """A scalar objective term: ``term(design, traj)`` is its cost (lower is better).

    Implementations provide :meth:`evaluate` (the cost and the measure of every leaf
    term, in one pass), :meth:`leaves`, :meth:`summands`, ``needs_flight`` and ``name``
    (a property, or a ``ClassVar`` in a final class).
    ``a + b`` builds a :class:`Sum` of both operands' :meth:`summands` (flat), ``w * a`` a
    :class:`Weighted` term.
    """

    @property
    @abc.abstractmethod
    def needs_flight(self) -> bool:
        """Whether the term reads the trajectory (a Python bool)."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Short name used in history files and reports."""

    @abc.abstractmethod
    def evaluate(self, design, traj=None) -> tuple[Float[Array, ""], dict[str, Float[Array, ""]]]:
        """``(cost (), {name: measure ()})``: the cost and every leaf term's measure, each measure computed once."""

    @abc.abstractmethod
    def leaves(self) -> tuple["AbstractMeasureTerm", ...]:
        """The measure terms inside, in :meth:`evaluate`'s breakdown order."""

    @abc.abstractmethod
    def summands(self) -> tuple["AbstractTerm", ...]:
        """The terms this one adds up (``(self,)`` unless it is a :class:`Sum`); ``+`` concatenates them."""

    def check(self, design) -> None:
        """Refuse, before anything is traced, a design this term cannot measure (raise ``ValueError`` naming the
        missing parameter and the fix); a term that reads everything any design has does nothing (the default).

        The TOML loaders call it at load time and :class:`~jaxrotor.optimize.DesignProblem` when it is built;
        composites check every term inside.
        """
        del design

    def __call__(self, design, traj=None) -> Float[Array, ""]:
        """Cost ``()`` (lower is better): the first element of :meth:`evaluate`."""
        return self.evaluate(design, traj)[0]

    def breakdown(self, design, traj=None) -> dict[str, Float[Array, ""]]:
        """``{name: measure}`` of every leaf term (measures, not weighted costs)."""
        return self.evaluate(design, traj)[1]

    def measure_names(self) -> list[str]:
        """The keys of :meth:`breakdown` (repeated names get ``_2``, ``_3``, ...), without evaluating."""
        return list(_unique_names([(t.name, None) for t in self.leaves()]))

    def __add__(self, other):
        if isinstance(other, (int, float)) and other == 0:
            return self
        if not isinstance(other, AbstractTerm):
            return NotImplemented
        return Sum(self.summands() + other.summands())

    def __radd__(self, other):
        if isinstance(other, (int, float)) and other == 0:  # sum([...]) starts from 0
            return self
        return NotImplemented

    def __mul__(self, weight):
        if isinstance(weight, AbstractTerm):
            return NotImplemented
        return Weighted(self, weight)

    __rmul__ = __mul__


class AbstractMeasureTerm(AbstractTerm):
    """A leaf term with a physical measure ``m`` and a sense (``+1``: minimise ``m``, ``-1``: maximise): cost ``sense * m``."""

    @property
    @abc.abstractmethod
    def sense(self) -> int:
        """``+1`` if smaller measures are better, ``-1`` if larger are better."""

    @abc.abstractmethod
    def measure(self, design, traj=None) -> Float[Array, ""]:
        """The physical quantity ``()`` (the class docstring gives its units)."""

    def evaluate(self, design, traj=None) -> tuple[Float[Array, ""], dict[str, Float[Array, ""]]]:
        """``(sense * m, {name: m})``."""
        m = self.measure(design, traj)
        return self.sense * m, {self.name: m}

    def leaves(self):
        """``(self,)``."""
        return (self,)

    def summands(self):
        """``(self,)``."""
        return (self,)


class AbstractFlightTerm(AbstractMeasureTerm):
    """A measure of the flown :class:`~jaxrotor.trajectory.Trajectory` (``needs_flight = True``)."""

    needs_flight: ClassVar[bool] = True


class AbstractDesignTerm(AbstractMeasureTerm):
    """A measure of the design alone (``needs_flight = False``; ``traj`` is ignored)."""

    needs_flight: ClassVar[bool] = False


# --------------------------------------------------------------------------- composition


class AbstractWrapperTerm(AbstractTerm):
    """A term built on one inner term ``term``: it reports that term's name and flight need."""

    term: eqx.AbstractVar[AbstractTerm]

    @property
    def needs_flight(self) -> bool:
        """The inner term's."""
        return self.term.needs_flight

    @property
    def name(self) -> str:
        """The inner term's."""
        return self.term.name

    def check(self, design) -> None:
        """The inner term's :meth:`~AbstractTerm.check`."""
        self.term.check(design)


class Weighted(AbstractWrapperTerm):
    """``weight * term`` (cost). ``weight`` is an array leaf (differentiable, vmappable).

    Attributes:
        term: the weighted term.
        weight: ``()`` non-negative weight.
    """

    term: AbstractTerm
    weight: Array

    def __init__(self, term: AbstractTerm, weight):
        self.term = term
        self.weight = as_float(weight)

    def evaluate(self, design, traj=None) -> tuple[Float[Array, ""], dict[str, Float[Array, ""]]]:
        """``(weight * cost, breakdown)`` of the weighted term."""
        cost, parts = self.term.evaluate(design, traj)
        return self.weight * cost, parts

    def leaves(self):
        """The weighted term's leaves."""
        return self.term.leaves()

    def summands(self):
        """``(self,)``."""
        return (self,)


class Sum(AbstractTerm):
    """Sum of terms' costs ``sum_k term_k(design, traj)``. Build with ``a + b``.

    Attributes:
        terms: tuple of terms.
    """

    terms: tuple

    def __init__(self, terms):
        terms = tuple(terms)
        if not terms:
            raise ValueError("Sum parameter `terms` is empty. Fix: pass at least one objective term.")
        self.terms = terms

    @property
    def needs_flight(self) -> bool:
        """Whether any term needs the flight."""
        return any(t.needs_flight for t in self.terms)

    @property
    def name(self) -> str:
        """The terms' names joined by ``+``."""
        return "+".join(t.name for t in self.terms)

    def evaluate(self, design, traj=None) -> tuple[Float[Array, ""], dict[str, Float[Array, ""]]]:
        """``(sum of costs, merged breakdowns)`` (repeated names get ``_2``, ``_3``, ...)."""
        results = [t.evaluate(design, traj) for t in self.terms]
        cost = sum(c for c, _ in results)
        return cost, _unique_names([kv for _, parts in results for kv in parts.items()])

    def check(self, design) -> None:
        """Every term's :meth:`~AbstractTerm.check`."""
        for t in self.terms:
            t.check(design)

    def leaves(self):
        """Every term's leaves, in order."""
        return tuple(leaf for t in self.terms for leaf in t.leaves())

    def summands(self):
        """``terms`` (so ``(a + b) + c`` is the flat ``Sum((a, b, c))``)."""
        return self.terms


class _AbstractBound(AbstractWrapperTerm):
    """A term on the measure ``m`` of one measure term, evaluated once: cost ``cost_of(m)``, breakdown ``{name: m}``."""

    term: eqx.AbstractVar[AbstractMeasureTerm]  # a dataclass field in every final subclass

    @abc.abstractmethod
    def cost_of(self, m: Float[Array, ""]) -> Float[Array, ""]:
        """The cost as a function of the measure ``m``."""

    def evaluate(self, design, traj=None) -> tuple[Float[Array, ""], dict[str, Float[Array, ""]]]:
        """``(cost_of(m), {name: m})`` with ``m = term.measure(design, traj)`` computed once."""
        m = self.term.measure(design, traj)
        return self.cost_of(m), {self.term.name: m}

    def leaves(self):
        """``(term,)``."""
        return (self.term,)

    def summands(self):
        """``(self,)``."""
        return (self,)


class Constrained(_AbstractBound):
    """A weighted measure with a quadratic penalty on its bounds, the measure evaluated once.

    ``cost = weight * sense * m + penalty * (relu(lower - m)^2 + relu(m - upper)^2)``
    with ``m = term.measure`` (the bound applies to the measure, not to the weighted
    cost). An exterior penalty: at the optimum the bound is met up to about
    ``|d objective / d m| / (2 penalty)``. ``weight = 0`` is a pure constraint
    (:func:`at_least`, :func:`at_most`).

    Attributes:
        term: the measure term.
        weight: ``()`` weight of the measure's cost ``sense * m`` (>= 0).
        lower, upper: ``()`` bounds on ``m`` in its units (``-inf``/``inf`` for none).
        penalty: ``()`` quadratic penalty weight (> 0).
    """

    term: AbstractMeasureTerm
    weight: Array
    lower: Array
    upper: Array
    penalty: Array

    def __init__(self, term: AbstractMeasureTerm, weight=1.0, lower=-math.inf, upper=math.inf, penalty=1e4):
        if not float(lower) <= float(upper):
            raise ValueError(f"Constrained parameters `lower` = {lower!r}, `upper` = {upper!r} are invalid. "
                             "Fix: give lower <= upper.")
        if not (float(weight) >= 0):
            raise ValueError(f"Constrained parameter `weight` = {weight!r} is invalid. Fix: pass a weight >= 0 "
                             "(the term's sense already makes larger-is-better measures a cost).")
        if not (float(penalty) > 0):
            raise ValueError(f"Constrained parameter `penalty` = {penalty!r} is invalid. Fix: pass a penalty > 0.")
        self.term = term
        self.weight, self.lower, self.upper, self.penalty = as_float(weight), as_float(lower), as_float(upper), as_float(penalty)

    def cost_of(self, m: Float[Array, ""]) -> Float[Array, ""]:
        """``weight * sense * m + penalty * (relu(lower - m)^2 + relu(m - upper)^2)``."""
        lo = jnp.where(jnp.isfinite(self.lower), self.lower, m)
        hi = jnp.where(jnp.isfinite(self.upper), self.upper, m)
        excess = jax.nn.relu(lo - m) ** 2 + jax.nn.relu(m - hi) ** 2
        return self.weight * self.term.sense * m + self.penalty * excess


class Barrier(_AbstractBound):
    """Logarithmic barrier keeping a measure strictly inside bounds (interior method).

    ``cost = -mu (log(m - lower) + log(upper - m))`` (only the finite bounds), with
    ``m = term.measure``. Outside the bounds the logarithm is NaN, which
    :meth:`jaxrotor.optimize.DesignProblem.loss` turns into the divergence penalty and
    :func:`jaxrotor.optimize.minimize` rejects (the step is redone shorter), so every
    accepted design is strictly feasible; at the optimum the bound is met up to about
    ``mu / |d objective / d m|``. Start from a feasible design.

    Attributes:
        term: the measure term.
        lower, upper: ``()`` bounds on the measure (``-inf``/``inf`` for none).
        mu: ``()`` barrier weight.
    """

    term: AbstractMeasureTerm
    lower: Array
    upper: Array
    mu: Array

    def __init__(self, term: AbstractMeasureTerm, lower=-math.inf, upper=math.inf, mu=1e-4):
        self.term = term
        self.lower, self.upper, self.mu = as_float(lower), as_float(upper), as_float(mu)

    def cost_of(self, m: Float[Array, ""]) -> Float[Array, ""]:
        """``-mu (log(m - lower) + log(upper - m))`` (NaN outside the bounds)."""
        lo = jnp.where(jnp.isfinite(self.lower), jnp.log(m - self.lower), 0.0)
        hi = jnp.where(jnp.isfinite(self.upper), jnp.log(self.upper - m), 0.0)
        return -self.mu * (lo + hi)


def at_least(term: AbstractMeasureTerm, bound: float, penalty: float = 1e4) -> Constrained:
    """``Constrained(term, weight=0, lower=bound, penalty=penalty)``: enforce ``term.measure >= bound``."""
    return Constrained(term, weight=0.0, lower=bound, penalty=penalty)


def at_most(term: AbstractMeasureTerm, bound: float, penalty: float = 1e4) -> Constrained:
    """``Constrained(term, weight=0, upper=bound, penalty=penalty)``: enforce ``term.measure <= bound``."""
    return Constrained(term, weight=0.0, upper=bound, penalty=penalty)
