"""Design objectives: composable, differentiable, NaN-safe scalar costs of a design and its flight.

A *term* is an equinox Module that turns a design (``design.platform``,
``design.controller``, ``design.flight``; normally a :class:`jaxrotor.optimize.Design`)
and, when it needs one, the :class:`~jaxrotor.trajectory.Trajectory` it flew into a
scalar. Every leaf term has a physical **measure** (metres, a ratio, newtons per
weight, ...) and a **sense**: ``+1`` when smaller is better (tracking error, energy,
conditioning), ``-1`` when larger is better (hover efficiency, lateral-force
capability, rotor-loss margin). Its **cost**, what an optimiser minimises, is
``sense * measure``. Terms compose::

    objective = Tracking() + 0.1 * Energy() + at_least(HoverEfficiency(), 0.9)

``w * term`` is a :class:`Weighted` term (the weight is an array leaf, so a batch of
objectives with different weights can be ``vmap``-ed), ``a + b`` a :class:`Sum`.
:class:`Constrained` weighs a measure and bounds it in one term that evaluates the
measure once: ``weight * sense * m + penalty * (relu(lower - m)^2 + relu(m - upper)^2)``;
:func:`at_least` / :func:`at_most` are its pure-bound forms (``weight = 0``), and a
:class:`Barrier` ``-mu log(m - lower)`` keeps every accepted design strictly feasible.

Flight terms (need a trajectory; ``W = m g`` the weight, means are trapezoidal time
means; every formula lives in :mod:`jaxrotor.metrics`):

=========================  ====================================================================
:class:`Tracking`          :func:`~jaxrotor.metrics.rms_norm` ``sqrt(mean_t |e_p|^2)`` [m] or
                           :func:`~jaxrotor.metrics.mean_norm` ``mean_t |e_p|`` of eq. (14),
                           plus optionally the same of ``e_R`` [rad] (eq. 15)
:class:`Effort`            :func:`~jaxrotor.metrics.effort_ratio` ``mean_t sum_i c_f,i |u_i| / W``
:class:`Energy`            ``mean_t`` :func:`~jaxrotor.metrics.rotor_power` ``/``
                           :func:`~jaxrotor.metrics.reference_power` (``normalize=False``: [W])
:class:`SaturationMargin`  ``mean_t sum_i relu(b - m_i)^2 / b^2``, ``m_i`` the
                           :func:`~jaxrotor.metrics.speed_margin` of rotor ``i``, ``b = 1 - threshold``
:class:`WrenchShortfall`   ``mean_t |S (w_achieved - w_requested)|^2``,
                           ``S = diag(1/W, 1/W, 1/W, 1/(W L), 1/(W L), 1/(W L))``
=========================  ====================================================================

Design terms (no flight; from :mod:`jaxrotor.analysis`): :class:`Conditioning`,
:class:`HoverEfficiency`, :class:`LateralCapability`, :class:`RotorLossMargin`, and the
force-polytope measures :class:`ZeroMomentVolume`, :class:`HoverSectionArea`,
:class:`VolumeAboveHover` (exact volumes and area of the zero-moment force set).

Why tilt needs these terms: with the exact pseudo-inverse allocation, no input
bounds and ideal motors, the delivered wrench ``G G^+ w`` equals the commanded
``w`` for every full-rank ``G``, so the closed loop, and therefore the tracking
error, does not depend on the tilt angles at all (``docs/optimization.md``, tested
in ``tests/integration/test_gradients.py``). Tilt acts through effort and power, saturation,
conditioning, lateral-force capability and rotor-loss robustness.

Class structure (every Module abstract or final): :class:`AbstractTerm` is the
interface; :class:`AbstractMeasureTerm` (a measure and a sense) splits into
:class:`AbstractFlightTerm` and :class:`AbstractDesignTerm`, which fix
``needs_flight``; :class:`Weighted`, :class:`Sum`, :class:`Constrained` and
:class:`Barrier` are final composites.

NaN safety: terms are written so that finite trajectories give finite values and
gradients (square roots and norms use the double-``where`` trick at zero). A
diverged flight is handled one level up, in
:meth:`jaxrotor.optimize.DesignProblem.loss`, which replaces the trajectory and the
value of a diverged member by finite stand-ins (double ``where``) and guards the
gradient, so one diverging member never poisons a ``vmap``-ed batch.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jaxtyping import Float

from .._util import as_float
from ..analysis import (condition_number, hover_efficiency, rotor_loss_margin, smooth_lateral_force_capability,
                        zero_moment_measures)
from ..metrics import (effort_ratio, mean_norm, orientation_error, position_error, reference_power, rms_norm,
                       rotor_power, speed_margin)
from ..numerics import time_mean
from ..registry import Option, builders, register

__all__ = [
    "AbstractTerm",
    "AbstractMeasureTerm",
    "AbstractFlightTerm",
    "AbstractDesignTerm",
    "Weighted",
    "Sum",
    "Constrained",
    "Barrier",
    "at_least",
    "at_most",
    "Tracking",
    "Effort",
    "Energy",
    "SaturationMargin",
    "WrenchShortfall",
    "Conditioning",
    "HoverEfficiency",
    "LateralCapability",
    "RotorLossMargin",
    "ZeroMomentVolume",
    "HoverSectionArea",
    "VolumeAboveHover",
    "rotor_loss_margin",
    "TERMS",
]


def _weight(design) -> Array:
    return design.platform.mass * design.platform.gravity


def _unique_names(items: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, v in items:
        key, k = name, 2
        while key in out:
            key, k = f"{name}_{k}", k + 1
        out[key] = v
    return out


def _bound(x) -> Array:
    return jnp.asarray(x, dtype=jnp.result_type(float))


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
        self.weight, self.lower, self.upper, self.penalty = _bound(weight), _bound(lower), _bound(upper), _bound(penalty)

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
        self.lower, self.upper, self.mu = _bound(lower), _bound(upper), _bound(mu)

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


# --------------------------------------------------------------------------- flight terms


_TEMPERATURE = Option(float, gt=0, doc="soft-min temperature", why="a smoothing temperature must be > 0")
_NORMALIZE = Option(bool, doc="divide by a power of the weight m g (dimensionless)")


@register("objective", "tracking", options={
    "metric": Option(str, choices=("rmse", "mae"), doc="RMSE or mean error"),
    "position": Option(float, ge=0, unit="1/m", doc="weight of the position error", why="a weight must be >= 0 (the objective is a cost)"),
    "orientation": Option(float, ge=0, unit="1/rad", doc="weight of the orientation error", why="a weight must be >= 0 (the objective is a cost)")})
class Tracking(AbstractFlightTerm):
    """Tracking error of the flight (eqs. 14-15).

    ``metric="rmse"``: ``position * rms_norm(e_p) + orientation * rms_norm(e_R)``
    (``rms_norm(e) = sqrt(mean_t |e|^2)``); ``metric="mae"``: the same with
    ``mean_norm(e) = mean_t |e|``; ``|.|`` the Euclidean norm over the three
    components (:mod:`jaxrotor.metrics`). Units: metres for the position part,
    radians for the orientation part (weights convert).

    Attributes:
        metric: ``"rmse"`` or ``"mae"`` (static).
        position: weight of the position error [1/m].
        orientation: weight of the orientation error [1/rad].
    """

    position: Array
    orientation: Array
    metric: str = eqx.field(static=True, default="rmse")
    sense: ClassVar[int] = 1

    def __init__(self, metric: str = "rmse", position: float = 1.0, orientation: float = 0.0):
        if metric not in ("rmse", "mae"):
            raise ValueError(f"Tracking parameter `metric` = {metric!r} is invalid. Fix: use 'rmse' or 'mae'.")
        self.metric = metric
        self.position, self.orientation = _bound(position), _bound(orientation)

    @property
    def name(self) -> str:
        """``tracking_rmse`` or ``tracking_mae``."""
        return f"tracking_{self.metric}"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` weighted RMSE or MAE [m (+ rad)]."""
        norm = rms_norm if self.metric == "rmse" else mean_norm
        return self.position * norm(position_error(traj)) + self.orientation * norm(orientation_error(traj))


@register("objective", "effort")
class Effort(AbstractFlightTerm):
    """Control effort :func:`~jaxrotor.metrics.effort_ratio`: ``mean_t sum_i c_f,i |u_i| / (m g)``.

    ``1`` for a flat design in hover, ``1 / eta`` for a tilted one (see :class:`HoverEfficiency`).
    """

    sense: ClassVar[int] = 1
    name: ClassVar[str] = "effort"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless."""
        return effort_ratio(traj, design.platform)


@register("objective", "energy", options={
    "normalize": Option(bool, doc="divide by the flat design's hover power (else watts)")})
class Energy(AbstractFlightTerm):
    """Power proxy ``mean_t sum_i c_tau,i |omega_i|^3`` (:func:`~jaxrotor.metrics.rotor_power`).

    With ``normalize=True`` (default) divided by :func:`~jaxrotor.metrics.reference_power`,
    so a flat design hovering scores 1 and a tilted one about ``eta^(-3/2)`` (the
    ``power_ratio`` of :func:`jaxrotor.metrics.flight_metrics`); otherwise the mean power in watts.

    Attributes:
        normalize: static flag.
    """

    normalize: bool = eqx.field(static=True, default=True)
    sense: ClassVar[int] = 1
    name: ClassVar[str] = "energy"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless (or [W])."""
        mean = time_mean(traj.t, rotor_power(traj, design.platform.c_tau))
        return mean / reference_power(design.platform) if self.normalize else mean


@register("objective", "saturation", options={
    "threshold": Option(float, ge=0, le=0.999, doc="fraction of the range where the cost starts",
                        why="the threshold is a fraction of the rotor's range in [0, 1)")})
class SaturationMargin(AbstractFlightTerm):
    """Smooth saturation cost: how close the rotor speeds come to *either* bound.

    With ``m_i(t)`` the :func:`~jaxrotor.metrics.speed_margin` (the headroom of rotor
    ``i`` to its nearer speed bound as a fraction of its range) and the band
    ``b = 1 - threshold``,

        ``cost = mean_t sum_i relu(b - m_i(t))^2 / b^2``:

    zero while every rotor keeps at least ``b`` of its range from both bounds, about
    1 per rotor pinned at a bound for the whole flight. Both bounds matter: under a
    fast fixed-attitude manoeuvre the rotors that must *reduce* thrust reach
    ``rotor_speed_min = 0`` first. Unbounded rotors (``rotor_speed_max = inf``) contribute 0.

    Attributes:
        threshold: ``()`` the cost starts when a rotor uses more than this fraction of its
            range towards a bound (default 0.9, i.e. a 10 % band at each end).
    """

    threshold: Array
    sense: ClassVar[int] = 1
    name: ClassVar[str] = "saturation"

    def __init__(self, threshold: float = 0.9):
        self.threshold = as_float(threshold)

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless cost."""
        band = 1.0 - self.threshold
        excess = jax.nn.relu(band - speed_margin(traj, design.platform)) / band
        return jnp.mean(jnp.sum(excess**2, axis=-1))


@register("objective", "wrench_shortfall")
class WrenchShortfall(AbstractFlightTerm):
    """Unmet wrench ``mean_t |S (w_achieved - w_requested)|^2`` (0 unless the allocator saturates).

    ``S`` divides forces by the weight ``m g`` and moments by ``m g L`` (``L`` the arm length).
    """

    sense: ClassVar[int] = 1
    name: ClassVar[str] = "wrench_shortfall"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless."""
        W = _weight(design)
        L = design.platform.arm_length
        scale = jnp.concatenate([jnp.full((3,), 1.0 / W), jnp.full((3,), 1.0 / (W * L))])
        return jnp.mean(jnp.sum((traj.wrench_error * scale) ** 2, axis=-1))


# --------------------------------------------------------------------------- design terms

@register("objective", "conditioning", options={"log": Option(bool, doc="log of the condition number")})
class Conditioning(AbstractDesignTerm):
    """Condition number ``sigma_1 / sigma_6`` of the unit-consistent allocation matrix
    (:func:`jaxrotor.analysis.condition_number`); ``log=True`` gives ``log(kappa)``. Smaller is better.

    Attributes:
        log: static flag.
    """

    log: bool = eqx.field(static=True, default=False)
    sense: ClassVar[int] = 1
    name: ClassVar[str] = "conditioning"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless (>= 1, or >= 0 as a log)."""
        k = condition_number(design.platform)
        return jnp.log(k) if self.log else k


@register("objective", "hover_efficiency")
class HoverEfficiency(AbstractDesignTerm):
    """Hover efficiency ``eta`` (:func:`jaxrotor.analysis.hover_efficiency`): larger is better.

    ``cos(alpha_0) cos(beta_0)`` for the symmetric tilted hexarotor; cost ``-eta``.
    """

    sense: ClassVar[int] = -1
    name: ClassVar[str] = "hover_efficiency"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` in ``(0, 1]``."""
        return hover_efficiency(design.platform)


@register("objective", "lateral_capability", options={
    "n_directions": Option(int, ge=1, doc="horizontal directions"), "temperature": _TEMPERATURE})
class LateralCapability(AbstractDesignTerm):
    """Lateral-force capability at level hover in units of the weight ``m g``: larger is better.

    :func:`jaxrotor.analysis.smooth_lateral_force_capability` (barrier-smoothed
    linear programs under the input bounds, soft minimum over ``n_directions``
    horizontal directions) divided by ``m g``. Needs finite ``rotor_speed_max`` and a hover
    input strictly inside the bounds (else NaN, which the problem's loss penalises).

    Attributes:
        n_directions: number of horizontal directions (static).
        temperature: soft-min temperature as a fraction of ``m g`` (static).
    """

    n_directions: int = eqx.field(static=True, default=12)
    temperature: float = eqx.field(static=True, default=1e-3)
    sense: ClassVar[int] = -1
    name: ClassVar[str] = "lateral_capability"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` capability / (m g), dimensionless."""
        c = smooth_lateral_force_capability(design.platform, n_directions=self.n_directions,
                                            temperature=self.temperature)
        return c / _weight(design)


# --------------------------------------------------------------------------- rotor-loss margin


@register("objective", "rotor_loss_margin", options={"temperature": _TEMPERATURE})
class RotorLossMargin(AbstractDesignTerm):
    """Hover margin after the worst single rotor loss (:func:`jaxrotor.analysis.rotor_loss_margin`): larger is better.

    Attributes:
        temperature: soft-min temperature over the lost rotor (static).
    """

    temperature: float = eqx.field(static=True, default=1e-3)
    sense: ClassVar[int] = -1
    name: ClassVar[str] = "rotor_loss_margin"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless margin (negative when some single loss leaves no zero-moment input)."""
        return rotor_loss_margin(design.platform, temperature=self.temperature)


# --------------------------------------------------------------------------- force polytopes


class _AbstractPolytopeTerm(AbstractDesignTerm):
    """A measure of the zero-moment force set ``F_B`` (:func:`jaxrotor.analysis.zero_moment_measures`); larger is better.

    Exact (not smoothed) and differentiable for ``n >= 6`` rotors with ``rank G = 6``
    and finite ``rotor_speed_max``; ``normalize=True`` divides by ``(m g)^k`` (``k`` the
    dimension) so the measure is dimensionless.
    """

    index: eqx.AbstractClassVar[int]
    power: eqx.AbstractClassVar[int]
    normalize: eqx.AbstractVar[bool]
    sense: ClassVar[int] = -1

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` in N^k, or in (m g)^k with ``normalize``."""
        m = zero_moment_measures(design.platform)[self.index]
        return m / _weight(design) ** self.power if self.normalize else m


@register("objective", "zero_moment_volume", options={"normalize": _NORMALIZE})
class ZeroMomentVolume(_AbstractPolytopeTerm):
    """Volume of the zero-moment force set ``F_B = {F u : M u = 0, u in bounds}`` [N^3]
    (:func:`jaxrotor.analysis.zero_moment_force_volume`): larger is better.

    Attributes:
        normalize: static; divide by ``(m g)^3``.
    """

    normalize: bool = eqx.field(static=True, default=False)
    index: ClassVar[int] = 0
    power: ClassVar[int] = 3
    name: ClassVar[str] = "zero_moment_volume"


@register("objective", "hover_section_area", options={"normalize": _NORMALIZE})
class HoverSectionArea(_AbstractPolytopeTerm):
    """Area of the hover section ``F_B ∩ {f_z = m g}`` [N^2]
    (:func:`jaxrotor.analysis.hover_section_area`): the lateral forces held at level hover. Larger is better.

    Attributes:
        normalize: static; divide by ``(m g)^2``.
    """

    normalize: bool = eqx.field(static=True, default=False)
    index: ClassVar[int] = 1
    power: ClassVar[int] = 2
    name: ClassVar[str] = "hover_section_area"


@register("objective", "volume_above_hover", options={"normalize": _NORMALIZE})
class VolumeAboveHover(_AbstractPolytopeTerm):
    """Volume of ``F_B ∩ {f_z >= m g}`` [N^3] (:func:`jaxrotor.analysis.volume_above_hover`): larger is better.

    Attributes:
        normalize: static; divide by ``(m g)^3``.
    """

    normalize: bool = eqx.field(static=True, default=False)
    index: ClassVar[int] = 2
    power: ClassVar[int] = 3
    name: ClassVar[str] = "volume_above_hover"


#: Term classes by configuration name (``[objective.<name>]`` tables): a live view of the
#: ``"objective"`` family of :mod:`jaxrotor.registry`, so a term registered anywhere is listed.
TERMS: Mapping[str, type] = builders("objective")
