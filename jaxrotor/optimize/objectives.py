"""Design objectives: composable, differentiable, NaN-safe scalar costs of a design and its flight.

A *term* is an equinox Module that turns a design (``design.platform``,
``design.controller``, ``design.actuators``; normally a
:class:`jaxrotor.optimize.Design`) and, when it needs one, the
:class:`~jaxrotor.trajectory.Trajectory` it flew into a scalar. Every term has a
physical **measure** (metres, a ratio, newtons per weight, ...) and a **sense**:
``+1`` when smaller is better (tracking error, energy, conditioning), ``-1`` when
larger is better (hover efficiency, lateral-force capability, rotor-loss margin).
Its **cost**, what an optimiser minimises, is ``sense * measure``. Terms compose::

    objective = Tracking() + 0.1 * Energy() + at_least(HoverEfficiency(), 0.9)

``w * term`` is a :class:`Weighted` term (the weight is an array leaf, so a batch of
objectives with different weights can be ``vmap``-ed), ``a + b`` a :class:`Sum`, and
:func:`at_least` / :func:`at_most` turn a bound on a measure into the quadratic
:class:`Penalty` ``relu(bound - measure)^2`` (or ``relu(measure - bound)^2``); a
:class:`Barrier` ``-mu log(measure - bound)`` keeps every accepted design strictly feasible.

Flight terms (need a trajectory; ``W = m g`` the weight, means are over the uniform save grid):

=========================  ====================================================================
:class:`Tracking`          RMSE ``sqrt(mean_t |e_p|^2)`` [m] or MAE ``mean_t |e_p|`` of eq. (14),
                           plus optionally the same of ``e_R`` [rad] (eq. 15 as read in
                           :mod:`jaxrotor.metrics`)
:class:`Effort`            ``mean_t sum_i c_f,i |u_i| / W`` (1 for a flat design at hover)
:class:`Energy`            power proxy ``mean_t sum_i c_tau,i |omega_i|^3 / P_ref`` with
                           ``P_ref = sum_i c_tau,i (W / sum_j c_f,j)^(3/2)``, the hover
                           power of the same rotors on a flat design (``normalize=False``: [W])
:class:`SaturationMargin`  ``mean_t sum_i relu(b - m_i)^2 / b^2``, ``m_i`` the headroom of rotor
                           ``i`` to its nearer speed bound as a fraction of its range,
                           ``b = 1 - threshold``: 0 while every rotor stays in the middle band
:class:`WrenchShortfall`   ``mean_t |S (w_achieved - w_requested)|^2``,
                           ``S = diag(1/W, 1/W, 1/W, 1/(W L), 1/(W L), 1/(W L))``
=========================  ====================================================================

Design terms (no flight; from :mod:`jaxrotor.analysis` and :func:`rotor_loss_margin`):

=============================  ================================================================
:class:`Conditioning`          condition number of the unit-consistent ``G_s`` (or its log)
:class:`HoverEfficiency`       ``eta = |F u_h| / sum_i c_f,i |u_h,i|`` at the minimum-norm hover input
:class:`LateralCapability`     smooth lateral-force capability at hover, in units of ``W``
:class:`RotorLossMargin`       :func:`rotor_loss_margin`: hover margin after the worst single rotor loss
=============================  ================================================================

Why tilt needs these terms: with the exact pseudo-inverse allocation, no input
bounds and ideal motors, the delivered wrench ``G G^+ w`` equals the commanded
``w`` for every full-rank ``G``, so the closed loop, and therefore the tracking
error, does not depend on the tilt angles at all (``docs/optimization.md``, tested
in ``tests/test_gradients.py``). Tilt acts through effort and power, saturation,
conditioning, lateral-force capability and rotor-loss robustness.

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
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from .._util import as_float
from ..dynamics import safe_sqrt
from ..metrics import orientation_error, position_error

__all__ = [
    "AbstractTerm",
    "Weighted",
    "Sum",
    "Penalty",
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
    "rotor_loss_margin",
    "saturation_margin",
    "reference_power",
    "safe_sqrt",
    "safe_norm",
    "TERMS",
]


# --------------------------------------------------------------------------- NaN-safe primitives


def safe_norm(x: Array, axis: int = -1) -> Array:
    """Euclidean norm along ``axis`` with a finite (zero) derivative at the origin."""
    return safe_sqrt(jnp.sum(x**2, axis=axis))


def _weight(design) -> Array:
    return design.platform.mass * design.platform.gravity


def _time_mean(t: Array, y: Array) -> Array:
    """Trapezoidal time average of ``y`` ``(T, ...)`` over ``t`` ``(T,)``."""
    dt = jnp.diff(t)
    integral = jnp.sum(0.5 * (y[1:] + y[:-1]) * dt.reshape((-1,) + (1,) * (y.ndim - 1)), axis=0)
    return integral / (t[-1] - t[0])


# --------------------------------------------------------------------------- composition


class AbstractTerm(eqx.Module):
    """A scalar objective term. ``term(design, traj)`` returns its cost ``sense * measure``.

    Subclasses implement :meth:`measure` and set ``sense`` (class attribute ``+1``:
    minimise the measure, ``-1``: maximise it) and ``needs_flight``.
    """

    @abc.abstractmethod
    def measure(self, design, traj) -> Array:
        """The physical quantity (see the class docstring for units), ``()``."""

    @property
    def sense(self) -> int:
        """``+1`` if smaller measures are better, ``-1`` if larger are better."""
        return 1

    @property
    def needs_flight(self) -> bool:
        """Whether :meth:`measure` reads the trajectory (static)."""
        return True

    @property
    def name(self) -> str:
        """Short name used in history files and reports."""
        cls = type(self).__name__
        return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(cls))

    def __call__(self, design, traj=None) -> Array:
        """Cost ``sense * measure`` ``()`` (lower is better)."""
        return self.sense * self.measure(design, traj)

    def breakdown(self, design, traj=None) -> dict[str, Array]:
        """``{name: measure}`` of every leaf term (measures, not weighted costs)."""
        return {self.name: self.measure(design, traj)}

    def leaves(self) -> list["AbstractTerm"]:
        """The non-composite terms inside (``[self]`` for a leaf term)."""
        return [self]

    def __add__(self, other):
        if isinstance(other, (int, float)) and other == 0:
            return self
        if not isinstance(other, AbstractTerm):
            return NotImplemented
        mine = self.terms if isinstance(self, Sum) else (self,)
        theirs = other.terms if isinstance(other, Sum) else (other,)
        return Sum(mine + theirs)

    def __radd__(self, other):
        if isinstance(other, (int, float)) and other == 0:  # sum([...]) starts from 0
            return self
        return NotImplemented

    def __mul__(self, weight):
        if isinstance(weight, AbstractTerm):
            return NotImplemented
        return Weighted(self, weight)

    __rmul__ = __mul__


def _unique_names(items: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, v in items:
        key, k = name, 2
        while key in out:
            key, k = f"{name}_{k}", k + 1
        out[key] = v
    return out


class _Wrapper(AbstractTerm):
    """A term built on another term (``self.term``): it reports that term's name, flight need and leaves."""

    term: eqx.AbstractVar[AbstractTerm]

    @property
    def needs_flight(self):
        return self.term.needs_flight

    @property
    def name(self):
        return self.term.name

    def breakdown(self, design, traj=None):
        return self.term.breakdown(design, traj)

    def leaves(self):
        return self.term.leaves()


class Weighted(_Wrapper):
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

    def measure(self, design, traj):
        """The weighted cost ``weight * term(design, traj)`` (a weighted term has no measure of its own)."""
        return self.weight * self.term(design, traj)


class Sum(AbstractTerm):
    """Sum of terms' costs. Build with ``a + b``.

    Attributes:
        terms: tuple of terms.
    """

    terms: tuple

    def __init__(self, terms):
        terms = tuple(terms)
        if not terms:
            raise ValueError("Sum parameter `terms` is empty. Fix: pass at least one objective term.")
        self.terms = terms

    def measure(self, design, traj):
        """The total cost ``sum_k term_k(design, traj)``."""
        return sum(t(design, traj) for t in self.terms)

    @property
    def needs_flight(self):
        return any(t.needs_flight for t in self.terms)

    @property
    def name(self):
        return "+".join(t.name for t in self.terms)

    def breakdown(self, design, traj=None):
        return _unique_names([kv for t in self.terms for kv in t.breakdown(design, traj).items()])

    def leaves(self):
        return [leaf for t in self.terms for leaf in t.leaves()]


class Penalty(_Wrapper):
    """Quadratic penalty on a bound of another term's *measure*.

    ``cost = weight * (relu(lower - m)^2 + relu(m - upper)^2)`` with ``m = term.measure``.
    Zero (and flat) inside the bounds; an exterior penalty, so at the optimum the
    bound is met up to about ``|d objective / d m| / (2 weight)``.

    Attributes:
        term: the constrained term.
        lower, upper: ``()`` bounds on the measure (``-inf``/``inf`` for none).
        weight: ``()`` penalty weight.
    """

    term: AbstractTerm
    lower: Array
    upper: Array
    weight: Array

    def __init__(self, term: AbstractTerm, lower=-math.inf, upper=math.inf, weight=1e4):
        f = jnp.result_type(float)
        self.term = term
        self.lower, self.upper = jnp.asarray(lower, dtype=f), jnp.asarray(upper, dtype=f)
        self.weight = jnp.asarray(weight, dtype=f)

    def measure(self, design, traj):
        """The penalty value (>= 0)."""
        m = self.term.measure(design, traj)
        lo = jnp.where(jnp.isfinite(self.lower), self.lower, m)
        hi = jnp.where(jnp.isfinite(self.upper), self.upper, m)
        return self.weight * (jax.nn.relu(lo - m) ** 2 + jax.nn.relu(m - hi) ** 2)


class Barrier(_Wrapper):
    """Logarithmic barrier keeping another term's measure strictly inside bounds (interior method).

    ``cost = -mu (log(m - lower) + log(upper - m))`` (only the finite bounds), with
    ``m = term.measure``. Outside the bounds the logarithm is NaN, which
    :meth:`jaxrotor.optimize.DesignProblem.loss` turns into the divergence penalty and
    :func:`jaxrotor.optimize.minimize` rejects (the step is redone shorter), so every
    accepted design is strictly feasible; at the optimum the bound is met up to about
    ``mu / |d objective / d m|``. Start from a feasible design.

    Attributes:
        term: the constrained term.
        lower, upper: ``()`` bounds on the measure (``-inf``/``inf`` for none).
        mu: ``()`` barrier weight.
    """

    term: AbstractTerm
    lower: Array
    upper: Array
    mu: Array

    def __init__(self, term: AbstractTerm, lower=-math.inf, upper=math.inf, mu=1e-4):
        f = jnp.result_type(float)
        self.term = term
        self.lower, self.upper = jnp.asarray(lower, dtype=f), jnp.asarray(upper, dtype=f)
        self.mu = jnp.asarray(mu, dtype=f)

    def measure(self, design, traj):
        """The barrier value (NaN outside the bounds)."""
        m = self.term.measure(design, traj)
        lo = jnp.where(jnp.isfinite(self.lower), jnp.log(m - self.lower), 0.0)
        hi = jnp.where(jnp.isfinite(self.upper), jnp.log(self.upper - m), 0.0)
        return -self.mu * (lo + hi)


def at_least(term: AbstractTerm, bound: float, weight: float = 1e4) -> Penalty:
    """Penalty enforcing ``term.measure >= bound`` (e.g. ``at_least(HoverEfficiency(), 0.9)``)."""
    return Penalty(term, lower=bound, weight=weight)


def at_most(term: AbstractTerm, bound: float, weight: float = 1e4) -> Penalty:
    """Penalty enforcing ``term.measure <= bound`` (e.g. ``at_most(Conditioning(), 5.0)``)."""
    return Penalty(term, upper=bound, weight=weight)


# --------------------------------------------------------------------------- flight terms


class Tracking(AbstractTerm):
    """Tracking error of the flight (eqs. 14-15).

    ``metric="rmse"``: ``position * sqrt(mean_t |e_p|^2) + orientation * sqrt(mean_t |e_R|^2)``;
    ``metric="mae"``: ``position * mean_t |e_p| + orientation * mean_t |e_R|``,
    with ``|.|`` the Euclidean norm over the three components. Units: metres for
    the position part, radians for the orientation part (weights convert).

    Attributes:
        metric: ``"rmse"`` or ``"mae"`` (static).
        position: weight of the position error [1/m].
        orientation: weight of the orientation error [1/rad].
    """

    position: Array
    orientation: Array
    metric: str = eqx.field(static=True, default="rmse")

    def __init__(self, metric: str = "rmse", position: float = 1.0, orientation: float = 0.0):
        if metric not in ("rmse", "mae"):
            raise ValueError(f"Tracking parameter `metric` = {metric!r} is invalid. Fix: use 'rmse' or 'mae'.")
        f = jnp.result_type(float)
        self.metric = metric
        self.position, self.orientation = jnp.asarray(position, dtype=f), jnp.asarray(orientation, dtype=f)

    @property
    def name(self):
        return f"tracking_{self.metric}"

    def measure(self, design, traj):
        """``()`` weighted RMSE or MAE [m (+ rad)]."""
        e_p, e_R = position_error(traj), orientation_error(traj)
        if self.metric == "rmse":
            return (self.position * safe_sqrt(jnp.mean(jnp.sum(e_p**2, axis=-1)))
                    + self.orientation * safe_sqrt(jnp.mean(jnp.sum(e_R**2, axis=-1))))
        return self.position * jnp.mean(safe_norm(e_p)) + self.orientation * jnp.mean(safe_norm(e_R))


class Effort(AbstractTerm):
    """Control effort ``mean_t sum_i c_f,i |u_i| / (m g)``: total rotor thrust over weight (time average).

    ``1`` for a flat design in hover, ``1 / eta`` for a tilted one (see :class:`HoverEfficiency`).
    """

    def measure(self, design, traj):
        """``()`` dimensionless."""
        thrust = jnp.sum(design.platform.c_f * jnp.abs(traj.u), axis=-1)
        return _time_mean(traj.t, thrust) / _weight(design)


def reference_power(platform) -> Array:
    """``P_ref = sum_i c_tau,i (m g / sum_j c_f,j)^(3/2)`` [W]: hover power proxy of the rotors on a flat design."""
    u_ref = platform.mass * platform.gravity / jnp.sum(platform.c_f)
    return jnp.sum(platform.c_tau) * u_ref**1.5


class Energy(AbstractTerm):
    """Power proxy ``mean_t sum_i c_tau,i |omega_i|^3`` (shaft power ``tau_i omega_i``).

    With ``normalize=True`` (default) divided by :func:`reference_power`, so a flat
    design hovering scores 1 and a tilted one about ``eta^(-3/2)``; otherwise in watts.

    Attributes:
        normalize: static flag.
    """

    normalize: bool = eqx.field(static=True, default=True)

    def measure(self, design, traj):
        """``()`` dimensionless (or [W])."""
        p = jnp.sum(design.platform.c_tau * jnp.abs(traj.rotor_speed) ** 3, axis=-1)
        mean = _time_mean(traj.t, p)
        return mean / reference_power(design.platform) if self.normalize else mean


def _speed_margin(traj, platform) -> tuple[Array, Array]:
    """Per-sample distance of each rotor speed to its nearer bound, as a fraction of ``omega_max - omega_min``.

    Returns ``(margin (T, n), bounded (n,))``; unbounded rotors (``omega_max = inf``) get margin 1.
    """
    span = platform.omega_max - platform.omega_min
    bounded = jnp.isfinite(span)
    span_safe = jnp.where(bounded, span, 1.0)
    w_max = jnp.where(bounded, platform.omega_max, 0.0)
    w = traj.rotor_speed
    margin = jnp.minimum(w - platform.omega_min, w_max - w) / span_safe
    return jnp.where(bounded, margin, 1.0), bounded


class SaturationMargin(AbstractTerm):
    """Smooth saturation cost: how close the rotor speeds come to *either* bound.

    With ``m_i(t) = min(omega_i - omega_min,i, omega_max,i - omega_i) / (omega_max,i - omega_min,i)``
    (the headroom of rotor ``i`` as a fraction of its speed range) and the band
    ``b = 1 - threshold``,

        ``cost = mean_t sum_i relu(b - m_i(t))^2 / b^2``:

    zero while every rotor keeps at least ``b`` of its range from both bounds, about
    1 per rotor pinned at a bound for the whole flight. Both bounds matter: under a
    fast fixed-attitude manoeuvre the rotors that must *reduce* thrust reach
    ``omega_min = 0`` first. Unbounded rotors (``omega_max = inf``) contribute 0.
    See :func:`saturation_margin` for the plain margin.

    Attributes:
        threshold: ``()`` the cost starts when a rotor uses more than this fraction of its
            range towards a bound (default 0.9, i.e. a 10 % band at each end).
    """

    threshold: Array

    def __init__(self, threshold: float = 0.9):
        self.threshold = as_float(threshold)

    @property
    def name(self):
        return "saturation"

    def measure(self, design, traj):
        """``()`` dimensionless cost."""
        margin, _ = _speed_margin(traj, design.platform)
        band = 1.0 - self.threshold
        excess = jax.nn.relu(band - margin) / band
        return jnp.mean(jnp.sum(excess**2, axis=-1))


def saturation_margin(traj, platform) -> Array:
    """``min_{t,i} m_i(t)``: headroom of the busiest rotor to its nearer speed bound, as a fraction of
    its range (0 at a bound, 0.5 at mid-range; 1 if unbounded). See :class:`SaturationMargin`."""
    margin, _ = _speed_margin(traj, platform)
    return jnp.min(margin)


class WrenchShortfall(AbstractTerm):
    """Unmet wrench ``mean_t |S (w_achieved - w_requested)|^2`` (0 unless the allocator saturates).

    ``S`` divides forces by the weight ``m g`` and moments by ``m g L`` (``L`` the arm length).
    """

    def measure(self, design, traj):
        """``()`` dimensionless."""
        W = _weight(design)
        L = design.platform.arm_length
        scale = jnp.concatenate([jnp.full((3,), 1.0 / W), jnp.full((3,), 1.0 / (W * L))])
        return jnp.mean(jnp.sum((traj.wrench_error * scale) ** 2, axis=-1))


# --------------------------------------------------------------------------- design terms


class _DesignTerm(AbstractTerm):
    @property
    def needs_flight(self):
        return False


class Conditioning(_DesignTerm):
    """Condition number ``sigma_1 / sigma_6`` of the unit-consistent allocation matrix
    (:func:`jaxrotor.analysis.condition_number`); ``log=True`` gives ``log(kappa)``.

    Attributes:
        log: static flag.
    """

    log: bool = eqx.field(static=True, default=False)

    def measure(self, design, traj=None):
        """``()`` dimensionless (>= 1, or >= 0 as a log)."""
        from ..analysis import condition_number

        k = condition_number(design.platform)
        return jnp.log(k) if self.log else k


class HoverEfficiency(_DesignTerm):
    """Hover efficiency ``eta`` (:func:`jaxrotor.analysis.hover_efficiency`): larger is better.

    ``cos(alpha_0) cos(beta_0)`` for the symmetric tilted hexarotor; cost ``-eta``.
    """

    @property
    def sense(self):
        return -1

    def measure(self, design, traj=None):
        """``()`` in ``(0, 1]``."""
        from ..analysis import hover_efficiency

        return hover_efficiency(design.platform)


class LateralCapability(_DesignTerm):
    """Lateral-force capability at level hover in units of the weight ``m g``: larger is better.

    :func:`jaxrotor.analysis.smooth_lateral_force_capability` (barrier-smoothed
    linear programs under the input bounds, soft minimum over ``n_directions``
    horizontal directions) divided by ``m g``. Needs finite ``omega_max`` and a hover
    input strictly inside the bounds (else NaN, which the problem's loss penalises).

    Attributes:
        n_directions: number of horizontal directions (static).
        temperature: soft-min temperature as a fraction of ``m g`` (static).
    """

    n_directions: int = eqx.field(static=True, default=12)
    temperature: float = eqx.field(static=True, default=1e-3)

    @property
    def sense(self):
        return -1

    @property
    def name(self):
        return "lateral_capability"

    def measure(self, design, traj=None):
        """``()`` capability / (m g), dimensionless."""
        from ..analysis import smooth_lateral_force_capability

        c = smooth_lateral_force_capability(design.platform, n_directions=self.n_directions,
                                            temperature=self.temperature)
        return c / _weight(design)


# --------------------------------------------------------------------------- rotor-loss margin


def _barrier_max_min(Ms: Array, t_schedule: Array) -> Array:
    """``max s`` s.t. ``Ms x = 0``, ``mean(x) = 1``, ``x_i >= s`` by a log barrier (see :func:`rotor_loss_margin`)."""
    m = Ms.shape[1]
    dtype = Ms.dtype
    C = jnp.concatenate([
        jnp.concatenate([Ms, jnp.zeros((Ms.shape[0], 1), dtype)], axis=1),
        jnp.concatenate([jnp.full((1, m), 1.0 / m, dtype), jnp.zeros((1, 1), dtype)], axis=1),
    ], axis=0)  # (4, m + 1): moments zero, mean input one; the last variable is s
    b = jnp.zeros(C.shape[0], dtype).at[-1].set(1.0)
    z0 = jnp.linalg.pinv(C) @ b
    P = jnp.eye(m + 1, dtype=dtype) - jnp.linalg.pinv(C) @ C  # projector onto ker C (contains e_s)
    e_s = jnp.zeros(m + 1, dtype).at[m].set(1.0)

    def newton(y, t, z0_, P_):
        z = z0_ + P_ @ y
        x, s = z[:m], z[m]
        r = 1.0 / (x - s)
        # psi = -t s - sum log(x_i - s): gradient and Hessian in z
        g = jnp.concatenate([-r, jnp.array([jnp.sum(r) - t])])
        w = r**2
        H = jnp.zeros((m + 1, m + 1), dtype).at[:m, :m].set(jnp.diag(w))
        H = H.at[:m, m].set(-w).at[m, :m].set(-w).at[m, m].set(jnp.sum(w))
        gy = P_ @ g
        Hy = P_ @ H @ P_ + (jnp.eye(m + 1, dtype=dtype) - P_)
        dy = -jnp.linalg.solve(Hy, gy)
        lam = jnp.sqrt(jnp.maximum(-(gy @ dy), 0.0))
        return dy, lam

    z0_c, P_c = jax.lax.stop_gradient((z0, P))
    y_start = (jnp.min(z0_c[:m]) - 1.0) * e_s  # strictly feasible: x_i - s >= 1

    def body(y, t):
        dy, lam = newton(y, t, z0_c, P_c)
        return y + dy / (1.0 + lam), None  # damped Newton stays strictly feasible

    y_star, _ = jax.lax.scan(body, y_start, t_schedule)
    y_star = jax.lax.stop_gradient(y_star)
    # one full Newton step with live parameters: its derivative is the implicit-function derivative
    dy, _ = newton(y_star, t_schedule[-1], z0, P)
    return (z0 + P @ (y_star + dy))[m]


def rotor_loss_margin(
    platform,
    alpha: Array | None = None,
    beta: Array | None = None,
    *,
    temperature: float = 1e-3,
    barrier_t_max: float = 1e6,
    stages: int = 6,
    newton_steps: int = 10,
) -> Array:
    """Differentiable static-hover margin after the worst single rotor loss (pure JAX).

    For each rotor ``j`` the column ``j`` of the moment matrix is removed and the
    linear program

        ``r_j = max s  s.t.  M_-j x = 0,  mean_i x_i = 1,  x_i >= s``

    is solved, i.e. the best ``min_i x_i / mean_i x_i`` over zero-moment inputs of
    the remaining rotors (the margin of :func:`jaxrotor.analysis.static_hoverability`
    and :class:`jaxrotor.analysis.RotorLoss`). ``r_j > 0`` means some input with every
    remaining rotor spinning gives zero moment (the platform can then hover in the
    attitude that points ``F x`` up, if that force is non-zero); unlike the exact
    report, ``r_j`` is negative (not clipped to 0) when it cannot, which tells an
    optimiser how far it is from fail-safe. Input bounds are not used. The margin is the soft minimum
    ``-tau log sum_j exp(-r_j / tau)`` over ``j`` (``tau = temperature``; at most
    ``tau log n`` below the hard minimum).

    Each LP is replaced by its log-barrier central point
    ``max t s + sum_i log(x_i - s)`` on the affine set, followed along
    ``t = barrier_t_max 10^-(stages-1) .. barrier_t_max`` by damped Newton steps
    (gap at most ``(n-1) / barrier_t_max``); the gradient is the implicit-function
    derivative of the barrier optimum (one live Newton step), so it is exact for
    this smooth function. The moment matrix is the unit-consistent one
    (:func:`jaxrotor.analysis.scaled_allocation_matrix`), which does not change the margin.

    Args:
        platform: the design.
        alpha, beta: optional tilt angles.
        temperature: soft-min temperature (dimensionless, static); 0 for a hard minimum.
        barrier_t_max, stages, newton_steps: barrier path (static).

    Returns:
        ``()`` dimensionless margin (``<= 1``; ``1`` when equal inputs give zero moment).
    """
    from ..analysis import scaled_allocation_matrix

    Gs = scaled_allocation_matrix(platform, alpha, beta)
    n = Gs.shape[1]
    keep = np.array([[i for i in range(n) if i != j] for j in range(n)])
    Ms = Gs[3:]
    ts = barrier_t_max * 10.0 ** jnp.arange(-(stages - 1), 1, dtype=Gs.dtype)
    t_schedule = jnp.repeat(ts, newton_steps)
    r = jax.vmap(lambda idx: _barrier_max_min(Ms[:, idx], t_schedule))(jnp.asarray(keep))
    if temperature > 0:
        return -temperature * jax.nn.logsumexp(-r / temperature)
    return jnp.min(r)


class RotorLossMargin(_DesignTerm):
    """Hover margin after the worst single rotor loss (:func:`rotor_loss_margin`): larger is better.

    Attributes:
        temperature: soft-min temperature over the lost rotor (static).
    """

    temperature: float = eqx.field(static=True, default=1e-3)

    @property
    def sense(self):
        return -1

    def measure(self, design, traj=None):
        """``()`` dimensionless margin (negative when some single loss leaves no zero-moment input)."""
        return rotor_loss_margin(design.platform, temperature=self.temperature)


#: Term classes by configuration name (``[objective.<name>]`` tables).
TERMS: dict[str, type] = {
    "tracking": Tracking,
    "effort": Effort,
    "energy": Energy,
    "saturation": SaturationMargin,
    "wrench_shortfall": WrenchShortfall,
    "conditioning": Conditioning,
    "hover_efficiency": HoverEfficiency,
    "lateral_capability": LateralCapability,
    "rotor_loss_margin": RotorLossMargin,
}
