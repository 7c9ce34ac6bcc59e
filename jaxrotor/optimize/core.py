"""Differentiable design: parameter selection, bounds, NaN-safe losses and optax loops.

The pieces (``docs/optimization.md`` has the walk-through):

* :class:`Design` - the differentiable parts of a flight: ``platform``,
  ``controller`` and ``actuators`` (every array leaf: ``alpha_0``, ``beta_0``,
  per-rotor angles, arm length, mass, inertia, gains, motor time constant, ...).
* :class:`Parameters` - *which* leaves are optimised (an ``eqx.partition`` filter
  spec, built from dotted paths such as ``"platform.alpha"`` or ``"controller"``)
  and *how* they are bounded: by reparameterisation (:class:`Log`,
  :class:`Interval`, :class:`LogInterval`) or by projection (:class:`Box`). The
  optimiser works on the unconstrained ``theta``; ``x = transform.forward(theta)``.
* :class:`DesignProblem` - ``theta -> design -> flight -> objective``; its
  :meth:`~DesignProblem.loss` is NaN-safe: a diverged or non-finite member gets a
  finite penalty and a zero gradient (double ``where`` plus a gradient guard), so
  one bad design never poisons a ``vmap``-ed batch.
* :class:`Optimizer` - optax settings (static, hashable: the compiled step is
  reused across runs with equal settings).
* :func:`make_step` / :func:`minimize` - a jit-compiled step that does not retrace,
  a tqdm progress bar, step rejection (a diverged or much worse point is not
  accepted: the step is redone from the last accepted point with half the step
  size), early stopping, and ``history.csv`` appended every iteration next to a
  ``checkpoint.eqx`` so an interrupted run resumes exactly.
* :func:`load` - the TOML form (``jaxrotor tune`` / ``jaxrotor optimize``).

Example::

    import jaxrotor as jr
    from jaxrotor import objectives as ob, optimize as op

    design = op.Design(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3(), jr.Actuators())
    params = op.Parameters.select(design, {"platform.alpha": op.Interval(0.0, 1.2),
                                           "controller": op.Log()})
    problem = op.DesignProblem(design, params, ob.Tracking() + 0.1 * ob.Energy(),
                               reference=jr.reference.FigureEight(5.0, period=10.0),
                               integrator=jr.Integrator(adaptive=False, dt=0.01))
    result = op.minimize(problem, op.Optimizer("adam", 0.05), iterations=50, out_dir="out")
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import time
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from . import objectives as ob
from .._util import as_float as _f
from .._util import to_jsonable
from ..allocators import AbstractAllocator, PseudoInverse
from ..dynamics import Actuators
from ..integrate import Integrator
from ..flight import DivergenceLimits
from ..simulate import simulate

__all__ = [
    "Design",
    "AbstractTransform",
    "Identity",
    "Log",
    "Interval",
    "LogInterval",
    "Box",
    "Parameters",
    "LossInfo",
    "DesignProblem",
    "Optimizer",
    "Stepper",
    "make_step",
    "minimize",
    "minimize_batch",
    "batch_axes",
    "OptimizeResult",
    "flight_metrics",
    "read_history",
    "write_report",
    "summary",
    "plot_history",
    "TRANSFORMS",
    "OPTIMIZERS",
    "OptimizationConfig",
    "load",
    "from_dict",
    "HISTORY_FILE",
    "CHECKPOINT_FILE",
]

HISTORY_FILE = "history.csv"
CHECKPOINT_FILE = "checkpoint.eqx"


# =========================================================================== design and parameters


class Design(eqx.Module):
    """The differentiable parts of a closed-loop flight.

    Attributes:
        platform: the :class:`~jaxrotor.design.platform.Platform` (geometry, rotors, mass, inertia).
        controller: e.g. :class:`~jaxrotor.control.FullyActuatedSE3` (18 gain leaves).
        actuators: :class:`~jaxrotor.dynamics.Actuators` (``motor.time_constant`` for a lagged motor).
    """

    platform: Any
    controller: Any
    actuators: Any = Actuators()


class AbstractTransform(eqx.Module):
    """Map between the unconstrained optimisation variable ``theta`` and a parameter ``x``."""

    def forward(self, theta: Array) -> Array:
        """``x = forward(theta)``."""
        return theta

    def inverse(self, x: Array) -> Array:
        """``theta = inverse(x)`` (``x`` must be feasible)."""
        return x

    def project(self, theta: Array) -> Array:
        """Projection of ``theta`` onto its feasible set after an optimiser update (identity unless :class:`Box`)."""
        return theta

    def check(self, name: str, x: np.ndarray) -> None:
        """Raise ``ValueError`` if the concrete initial value ``x`` is infeasible."""


class Identity(AbstractTransform):
    """No bound: ``x = theta``."""


class Log(AbstractTransform):
    """Positivity by reparameterisation: ``x = exp(theta)`` (steps are relative changes of ``x``)."""

    def forward(self, theta):
        return jnp.exp(theta)

    def inverse(self, x):
        return jnp.log(x)

    def check(self, name, x):
        if np.any(x <= 0):
            raise ValueError(f"parameter `{name}` = {x.tolist()} is invalid for a log transform: it must be > 0. "
                             "Fix: start from positive values or use transform = \"identity\".")


def _check_interval(name, x, lo, hi):
    if not np.all(np.asarray(lo) < np.asarray(hi)):
        raise ValueError(f"parameter `{name}`: bounds lower = {np.asarray(lo).tolist()}, upper = "
                         f"{np.asarray(hi).tolist()} are invalid. Fix: give lower < upper.")
    if np.any(x <= lo) or np.any(x >= hi):
        raise ValueError(f"parameter `{name}` = {x.tolist()} lies outside its open interval "
                         f"({np.asarray(lo).tolist()}, {np.asarray(hi).tolist()}). Fix: widen the bounds or change "
                         "the initial design so it lies strictly inside.")


class Interval(AbstractTransform):
    """Bounds by reparameterisation: ``x = lower + (upper - lower) sigmoid(theta)``, ``x`` in ``(lower, upper)``.

    Attributes:
        lower, upper: bounds in the parameter's units (scalars or broadcastable arrays).
    """

    lower: Array
    upper: Array

    def __init__(self, lower, upper):
        self.lower, self.upper = _f(lower), _f(upper)

    def forward(self, theta):
        return self.lower + (self.upper - self.lower) * jax.nn.sigmoid(theta)

    def inverse(self, x):
        r = (x - self.lower) / (self.upper - self.lower)
        return jnp.log(r) - jnp.log1p(-r)

    def check(self, name, x):
        _check_interval(name, x, np.asarray(self.lower), np.asarray(self.upper))


class LogInterval(AbstractTransform):
    """Positive bounds on a log scale: ``log x = log lower + (log upper - log lower) sigmoid(theta)``.

    For gains: positivity, a cap (e.g. below the attitude gains where motor lag
    destabilises the loop) and relative steps.

    Attributes:
        lower, upper: ``0 < lower < upper``.
    """

    lower: Array
    upper: Array

    def __init__(self, lower, upper):
        self.lower, self.upper = _f(lower), _f(upper)

    def forward(self, theta):
        lo, hi = jnp.log(self.lower), jnp.log(self.upper)
        return jnp.exp(lo + (hi - lo) * jax.nn.sigmoid(theta))

    def inverse(self, x):
        lo, hi = jnp.log(self.lower), jnp.log(self.upper)
        r = (jnp.log(x) - lo) / (hi - lo)
        return jnp.log(r) - jnp.log1p(-r)

    def check(self, name, x):
        if np.any(np.asarray(self.lower) <= 0):
            raise ValueError(f"parameter `{name}`: log_interval needs lower > 0, got {np.asarray(self.lower).tolist()}. "
                             "Fix: use a positive lower bound or transform = \"interval\".")
        _check_interval(name, x, np.asarray(self.lower), np.asarray(self.upper))


class Box(AbstractTransform):
    """Bounds by projection: ``x = theta``, clipped to ``[lower, upper]`` after every update.

    Attributes:
        lower, upper: bounds (``-inf``/``inf`` for none).
    """

    lower: Array
    upper: Array

    def __init__(self, lower=-math.inf, upper=math.inf):
        self.lower, self.upper = _f(lower), _f(upper)

    def project(self, theta):
        return jnp.clip(theta, self.lower, self.upper)

    def check(self, name, x):
        if np.any(x < np.asarray(self.lower)) or np.any(x > np.asarray(self.upper)):
            raise ValueError(f"parameter `{name}` = {x.tolist()} lies outside [{np.asarray(self.lower).tolist()}, "
                             f"{np.asarray(self.upper).tolist()}]. Fix: widen the bounds or change the initial design.")


TRANSFORMS: dict[str, type] = {"identity": Identity, "log": Log, "interval": Interval, "log_interval": LogInterval,
                               "box": Box}


def _is_tf(x) -> bool:
    return isinstance(x, AbstractTransform)


def _resolve(tree, path: str):
    node = tree
    for part in path.split("."):
        if not hasattr(node, part):
            fields = [f.name for f in dataclasses.fields(node)] if dataclasses.is_dataclass(node) else []
            raise ValueError(f"parameter path `{path}`: `{type(node).__name__}` has no field `{part}`. "
                             f"Fix: use one of {', '.join(fields) or '(none)'}.")
        node = getattr(node, part)
    return node


def _getter(path: str) -> Callable:
    parts = path.split(".")

    def get(tree):
        for p in parts:
            tree = getattr(tree, p)
        return tree

    return get


def _key_name(path) -> str:
    out = []
    for k in path:
        if isinstance(k, jax.tree_util.GetAttrKey):
            out.append(("." if out else "") + k.name)
        elif isinstance(k, jax.tree_util.SequenceKey):
            out.append(f"[{k.idx}]")
        elif isinstance(k, jax.tree_util.DictKey):
            out.append(f"[{k.key!r}]")
        else:
            out.append(str(k))
    return "".join(out)


class Parameters(eqx.Module):
    """Which leaves of a :class:`Design` are optimised, and their bounds.

    Build with :meth:`select`. ``filter_spec`` is an ``eqx.partition`` filter (a
    Design-shaped tree of bools, static); ``transforms`` has the structure of the
    selected partition with an :class:`AbstractTransform` at every selected leaf.

    Attributes:
        filter_spec: Design-shaped pytree of bools.
        transforms: the selected partition's structure, transforms at the leaves.
        paths: the dotted paths given to :meth:`select` (static, for reports).
    """

    filter_spec: Any
    transforms: Any
    paths: tuple[str, ...] = eqx.field(static=True)

    @classmethod
    def select(cls, design: Design, selection: Mapping[str, AbstractTransform | None]) -> "Parameters":
        """Select leaves by dotted path, each with a transform (``None``: :class:`Identity`).

        Paths name a field or a sub-tree of the design: ``"platform.alpha"``
        (``alpha_0`` when the leaf is a scalar, per-rotor ``alpha_i`` when ``(n,)``),
        ``"platform.beta"``, ``"platform.arm_length"``, ``"platform.mass"``,
        ``"platform.inertia"``, ``"controller"`` (every gain), ``"controller.K_R"``,
        ``"actuators.motor.time_constant"``. Later entries override earlier ones on
        overlapping sub-trees. Initial values are checked against the bounds.

        Raises:
            ValueError: unknown path, a path without array leaves, or an infeasible start.
        """
        if not selection:
            raise ValueError("Parameters.select: nothing selected. Fix: name at least one leaf, e.g. 'controller'.")
        spec = jax.tree_util.tree_map(lambda _: False, design)
        for path in selection:
            sub = _resolve(design, path)
            if not jax.tree_util.tree_leaves(eqx.filter(sub, eqx.is_inexact_array)):
                raise ValueError(f"parameter path `{path}` holds no floating-point array leaves "
                                 f"(it is {type(sub).__name__}). Fix: name an array field such as 'platform.alpha'.")
            spec = eqx.tree_at(_getter(path), spec, replace_fn=lambda s: jax.tree_util.tree_map(
                lambda _: True, eqx.filter(s, lambda _: True)))
        spec = jax.tree_util.tree_map(lambda b, x: bool(b) and eqx.is_inexact_array(x), spec, design)
        params, _ = eqx.partition(design, spec)
        chosen = []
        for path, tf in selection.items():
            tf = Identity() if tf is None else tf
            if not isinstance(tf, AbstractTransform):
                raise ValueError(f"parameter `{path}`: transform {tf!r} is not an AbstractTransform. "
                                 "Fix: pass Identity(), Log(), Interval(lo, hi), LogInterval(lo, hi) or Box(lo, hi).")
            chosen.append((path, tf))

        def transform_of(key_path, _):
            name = _key_name(key_path)
            # the last selection whose path is this leaf or one of its parents wins
            matches = [tf for path, tf in chosen if name == path or name.startswith(path + ".")]
            return matches[-1]

        transforms = jax.tree_util.tree_map_with_path(transform_of, params)
        out = cls(filter_spec=spec, transforms=transforms, paths=tuple(selection))
        for name, x, tf in zip(out.names(design, per_leaf=True), jax.tree_util.tree_leaves(params),
                               jax.tree_util.tree_leaves(transforms, is_leaf=_is_tf)):
            tf.check(name, np.asarray(x, dtype=float))
        return out

    def partition(self, design: Design):
        """``(selected, rest)`` = ``eqx.partition(design, filter_spec)``."""
        return eqx.partition(design, self.filter_spec)

    def _map(self, fn, tree):
        return jax.tree_util.tree_map(lambda tf, x: fn(tf, x), self.transforms, tree, is_leaf=_is_tf)

    def to_theta(self, design: Design):
        """Unconstrained variables ``theta`` (the selected partition's structure) of ``design``."""
        params, _ = self.partition(design)
        return self._map(lambda tf, x: tf.inverse(x), params)

    def physical(self, theta):
        """Selected parameter values ``x = forward(theta)`` (the selected partition)."""
        return self._map(lambda tf, t: tf.forward(t), theta)

    def to_design(self, theta, base: Design) -> Design:
        """``eqx.combine(forward(theta), rest of base)``."""
        _, rest = self.partition(base)
        return eqx.combine(self.physical(theta), rest)

    def project(self, theta):
        """Apply every transform's projection (only :class:`Box` clips)."""
        return self._map(lambda tf, t: tf.project(t), theta)

    def names(self, design: Design, per_leaf: bool = False) -> list[str]:
        """Column names of the selected scalars, e.g. ``platform.alpha``, ``controller.K_p[0]``.

        ``per_leaf=True`` gives one name per leaf (array) instead of per element.
        """
        params, _ = self.partition(design)
        out = []
        for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
            base = _key_name(path)
            if per_leaf or np.ndim(leaf) == 0:
                out.append(base)
            else:
                for idx in np.ndindex(np.shape(leaf)):
                    out.append(base + "[" + ",".join(map(str, idx)) + "]")
        return out

    def flatten(self, design: Design) -> np.ndarray:
        """Selected physical values of ``design`` as one float vector (order of :meth:`names`)."""
        params, _ = self.partition(design)
        leaves = jax.tree_util.tree_leaves(params)
        return np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in leaves]) if leaves else np.zeros(0)

    def unflatten(self, values, base: Design) -> Design:
        """Inverse of :meth:`flatten`: ``base`` with the selected leaves set from ``values``."""
        params, rest = self.partition(base)
        leaves, treedef = jax.tree_util.tree_flatten(params)
        values = np.asarray(values, dtype=float)
        out, k = [], 0
        for x in leaves:
            size = int(np.size(x))
            out.append(jnp.asarray(values[k:k + size].reshape(np.shape(x)), dtype=jnp.asarray(x).dtype))
            k += size
        if k != values.size:
            raise ValueError(f"Parameters.unflatten: got {values.size} values for {k} parameters.")
        return eqx.combine(jax.tree_util.tree_unflatten(treedef, out), rest)


# =========================================================================== the problem


class LossInfo(eqx.Module):
    """What one loss evaluation reports besides its value.

    Attributes:
        raw: ``()`` the objective before the divergence guard (may be non-finite).
        terms: ``{name: measure}`` of every objective term (finite stand-ins when penalised).
        diverged: ``()`` bool, the flight's ``Trajectory.diverged`` (False without a flight).
        penalized: ``()`` bool: diverged or non-finite, the value is the penalty.
        rmse_position: ``()`` ``sqrt(mean_t |e_p|^2)`` [m] (NaN without a flight).
    """

    raw: Array
    terms: dict
    diverged: Array
    penalized: Array
    rmse_position: Array


def _finite_tree(tree, bad):
    """Double-``where`` stand-in: every inexact leaf with non-finite entries (or all, if ``bad``) replaced by zeros."""
    def fix(x):
        if not eqx.is_inexact_array(x):
            return x
        return jnp.where(bad | ~jnp.isfinite(x), jnp.zeros_like(x), x)

    return jax.tree_util.tree_map(fix, tree)


class DesignProblem(eqx.Module):
    """``theta -> design -> closed-loop flight -> objective``: the function an optimiser minimises.

    Attributes:
        design: the base (initial) :class:`Design`; unselected leaves stay fixed.
        parameters: the :class:`Parameters` selection and bounds.
        objective: an :class:`~jaxrotor.optimize.objectives.AbstractTerm` (lower is better).
        reference: the reference trajectory flown (may be ``None`` for design-only objectives).
        allocator: wrench -> rotor inputs (default exact pseudo-inverse).
        integrator: use a fixed step (``Integrator(adaptive=False, dt=...)``) for gradients.
        save_dt: output period of the flight [s] (static).
        t1: final time [s] (static; ``None``: the reference's duration).
        divergence_penalty: value given to a diverged or non-finite evaluation (static).
        limits: runaway limits for ``Trajectory.diverged``.
    """

    design: Design
    parameters: Parameters
    objective: ob.AbstractTerm
    reference: Any = None
    allocator: AbstractAllocator = PseudoInverse()
    integrator: Integrator = Integrator(adaptive=False, dt=0.01)
    save_dt: float = eqx.field(static=True, default=0.02)
    t1: float | None = eqx.field(static=True, default=None)
    divergence_penalty: float = eqx.field(static=True, default=1e3)
    limits: DivergenceLimits = DivergenceLimits()

    def __check_init__(self):
        if self.objective.needs_flight and self.reference is None:
            raise ValueError("DesignProblem: the objective needs a flight but `reference` is None. "
                             "Fix: pass a reference trajectory (e.g. jaxrotor.reference.FigureEight).")

    # ---------------------------------------------------------------- pieces

    def init(self):
        """Unconstrained variables of the base design."""
        return self.parameters.to_theta(self.design)

    def to_design(self, theta) -> Design:
        """The design at ``theta``."""
        return self.parameters.to_design(theta, self.design)

    def fly(self, design: Design):
        """Fly ``design`` along the reference with the problem's allocator, integrator and limits."""
        return simulate(design.platform, design.controller, self.reference, allocator=self.allocator,
                        actuators=design.actuators, integrator=self.integrator, save_dt=self.save_dt, t1=self.t1,
                        limits=self.limits)

    # ---------------------------------------------------------------- loss

    def evaluate(self, design: Design) -> tuple[Array, LossInfo]:
        """Objective of a design with the divergence guard on the value (no gradient guard).

        Double ``where``: a diverged trajectory is replaced by zeros *before* the
        objective (so the objective's own derivative stays finite), and the value
        by ``divergence_penalty`` after it.
        """
        traj = self.fly(design) if self.objective.needs_flight else None
        if traj is not None:
            diverged = traj.diverged
            traj_safe = _finite_tree(traj, diverged)
        else:
            diverged = jnp.asarray(False)
            traj_safe = None
        raw = self.objective(design, traj_safe)
        terms = self.objective.breakdown(design, traj_safe)
        penalized = diverged | ~jnp.isfinite(raw)
        value = jnp.where(penalized, jnp.asarray(self.divergence_penalty, raw.dtype), jnp.where(penalized, 0.0, raw))
        terms = {k: jnp.where(penalized | ~jnp.isfinite(v), jnp.nan, v) for k, v in terms.items()}
        if traj is not None:
            rmse = jnp.where(diverged, jnp.nan, ob.safe_sqrt(jnp.mean(jnp.sum((traj_safe.p_ref - traj_safe.p) ** 2, -1))))
        else:
            rmse = jnp.asarray(jnp.nan, dtype=raw.dtype)
        return value, LossInfo(raw=raw, terms=terms, diverged=diverged, penalized=penalized, rmse_position=rmse)

    def loss(self, theta) -> tuple[Array, LossInfo]:
        """NaN-safe loss of ``theta``: ``(value, LossInfo)``.

        The value is finite always (the penalty for a diverged or non-finite
        evaluation) and its gradient with respect to ``theta`` is exactly zero for
        a penalised evaluation, also inside ``grad(sum(vmap(loss)))``: a custom VJP
        zeroes the cotangent of a penalised member after the backward pass through
        the simulation, where a non-finite state would otherwise turn
        ``0 * inf`` into NaN. Differentiable with respect to ``theta`` only.
        """
        return _guarded_loss(theta, self)


def _plain_loss(theta, problem):
    return problem.evaluate(problem.to_design(theta))


@eqx.filter_custom_vjp
def _guarded_loss(theta, problem):
    return _plain_loss(theta, problem)


@_guarded_loss.def_fwd
def _guarded_fwd(perturbed, theta, problem):
    del perturbed
    value, vjp, info = jax.vjp(lambda th: _plain_loss(th, problem), theta, has_aux=True)
    return (value, info), (vjp, info.penalized)


@_guarded_loss.def_bwd
def _guarded_bwd(residuals, grad_obj, perturbed, theta, problem):
    del perturbed, problem
    vjp, penalized = residuals
    g_value = grad_obj[0]
    if g_value is None:  # symbolic zero: nobody differentiated the value
        return jax.tree_util.tree_map(jnp.zeros_like, theta)
    (g_theta,) = vjp(g_value)
    return jax.tree_util.tree_map(lambda g: jnp.where(penalized | ~jnp.isfinite(g), 0.0, g), g_theta)


# =========================================================================== optimiser and step


class Optimizer(eqx.Module):
    """optax settings (all static, so equal settings share one compiled step).

    The update is ``optax.chain(clip_by_global_norm(clip_norm), <name>(learning_rate))``
    (no clipping if ``clip_norm`` is ``None``), then multiplied by the loop's step
    scale (halved after a rejected step, see :func:`minimize`). For ``"adam"``:
    ``m <- b1 m + (1-b1) g``, ``v <- b2 v + (1-b2) g^2``,
    ``theta <- theta - lr m_hat / (sqrt(v_hat) + eps)``; in log-parameterised
    coordinates a step of ``lr`` changes a parameter by about ``lr`` relative.

    Attributes:
        name: ``"adam"``, ``"adamw"``, ``"sgd"``, ``"rmsprop"`` or ``"lion"``.
        learning_rate: step size in ``theta`` units.
        clip_norm: global gradient-norm clip (``None`` for none).
        b1, b2: moment decay rates (adam, adamw, lion).
        momentum: SGD momentum (``None`` for plain SGD).
        weight_decay: adamw / lion decoupled weight decay.
        decay_steps: if set, the step size follows the cosine decay
            ``lr_k = lr (f + (1 - f) (1 + cos(pi min(k, K) / K)) / 2)`` over ``K = decay_steps``
            optimiser updates, ``f = final_fraction`` (a schedule converges onto kinks and
            active bounds that a constant step only circles).
        final_fraction: ``f`` above.
    """

    name: str = eqx.field(static=True, default="adam")
    learning_rate: float = eqx.field(static=True, default=0.05)
    clip_norm: float | None = eqx.field(static=True, default=None)
    b1: float = eqx.field(static=True, default=0.9)
    b2: float = eqx.field(static=True, default=0.999)
    momentum: float | None = eqx.field(static=True, default=None)
    weight_decay: float = eqx.field(static=True, default=0.0)
    decay_steps: int | None = eqx.field(static=True, default=None)
    final_fraction: float = eqx.field(static=True, default=0.01)

    def __check_init__(self):
        if self.name not in OPTIMIZERS:
            raise ValueError(f"Optimizer parameter `name` = {self.name!r} is unknown. Fix: use one of "
                             f"{', '.join(OPTIMIZERS)}.")
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise ValueError(f"Optimizer parameter `learning_rate` = {self.learning_rate!r} is invalid. "
                             "Fix: pass a positive step size, e.g. 0.05.")
        if self.decay_steps is not None and not self.decay_steps >= 1:
            raise ValueError(f"Optimizer parameter `decay_steps` = {self.decay_steps!r} is invalid. Fix: pass a positive "
                             "number of steps or None for a constant step size.")
        if self.clip_norm is not None and not self.clip_norm > 0:
            raise ValueError(f"Optimizer parameter `clip_norm` = {self.clip_norm!r} is invalid. Fix: pass > 0 or None.")

    def build(self):
        """The ``optax.GradientTransformation``."""
        import optax

        lr = self.learning_rate
        if self.decay_steps is not None:
            lr = optax.cosine_decay_schedule(self.learning_rate, self.decay_steps, alpha=self.final_fraction)
        base = {
            "adam": lambda: optax.adam(lr, b1=self.b1, b2=self.b2),
            "adamw": lambda: optax.adamw(lr, b1=self.b1, b2=self.b2, weight_decay=self.weight_decay),
            "sgd": lambda: optax.sgd(lr, momentum=self.momentum),
            "rmsprop": lambda: optax.rmsprop(lr),
            "lion": lambda: optax.lion(lr, b1=self.b1, b2=self.b2, weight_decay=self.weight_decay),
        }[self.name]()
        if self.clip_norm is None:
            return base
        return optax.chain(optax.clip_by_global_norm(self.clip_norm), base)

    def init(self, theta):
        """Optimiser state for ``theta``."""
        return self.build().init(theta)


OPTIMIZERS = ("adam", "adamw", "sgd", "rmsprop", "lion")


def _global_norm(tree) -> Array:
    leaves = jax.tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.sum(x**2) for x in leaves)) if leaves else jnp.asarray(0.0)


def _apply(problem: DesignProblem, optimizer: Optimizer, theta, opt_state, grad, scale):
    import optax

    updates, opt_state = optimizer.build().update(grad, opt_state, theta)
    updates = jax.tree_util.tree_map(lambda u: scale * u, updates)
    return problem.parameters.project(optax.apply_updates(theta, updates)), opt_state


def _step_impl(problem: DesignProblem, optimizer: Optimizer, theta, opt_state, scale):
    """Evaluate ``loss`` and its gradient at ``theta`` and propose the next point.

    Returns:
        ``(theta_next, opt_state_next, value, info, grad)``.
    """
    (value, info), grad = jax.value_and_grad(lambda th: problem.loss(th), has_aux=True)(theta)
    grad = jax.tree_util.tree_map(lambda g: jnp.where(jnp.isfinite(g), g, 0.0), grad)
    theta_next, opt_next = _apply(problem, optimizer, theta, opt_state, grad, scale)
    return theta_next, opt_next, value, info, grad


def _update_impl(problem: DesignProblem, optimizer: Optimizer, theta, opt_state, grad, scale):
    """Re-propose from an accepted point with a different step scale (no new simulation)."""
    return _apply(problem, optimizer, theta, opt_state, grad, scale)


class Stepper(NamedTuple):
    """The two compiled functions of the loop.

    Attributes:
        step: ``step(problem, optimizer, theta, opt_state, scale) -> (theta_next, opt_state_next, value, info, grad)``;
            one loss-and-gradient evaluation plus an optimiser update.
        update: ``update(problem, optimizer, theta, opt_state, grad, scale) -> (theta_next, opt_state_next)``;
            the update alone, used to redo a rejected step with a smaller scale.
    """

    step: Callable
    update: Callable


def make_step(max_traces: int | None = None) -> Stepper:
    """Compile-once step functions (``eqx.filter_jit``).

    Everything that changes between iterations (``theta``, optimiser state, the step
    scale) is an array argument, and the problem's and optimiser's static parts are
    hashable, so the step is traced once per problem structure. ``max_traces`` wraps
    both functions in ``eqx.debug.assert_max_traces`` (a test uses ``max_traces=1``).
    """
    step, update = _step_impl, _update_impl
    if max_traces is not None:
        step = eqx.debug.assert_max_traces(step, max_traces=max_traces)
        update = eqx.debug.assert_max_traces(update, max_traces=max_traces)
    return Stepper(eqx.filter_jit(step), eqx.filter_jit(update))


#: The default step, wrapped in a trace counter (``eqx.debug.get_num_traces(_STEP_COUNTER)``
#: tells how often it was traced; tests use it to show that a long run traces once).
_STEP_COUNTER = eqx.debug.assert_max_traces(_step_impl, max_traces=None)
_DEFAULT_STEPPER = Stepper(eqx.filter_jit(_STEP_COUNTER), eqx.filter_jit(_update_impl))


# =========================================================================== batches


def batch_axes(problem: DesignProblem, where: Callable[[DesignProblem], Any]):
    """``in_axes`` for ``eqx.filter_vmap`` that batch the leaves ``where(problem)`` of a problem (axis 0), nothing else.

    Example: ``batch_axes(problem, lambda p: p.objective.terms[2].weight)`` batches an
    objective weight, to sweep a trade-off with one compiled, vmapped step.
    """
    spec = jax.tree_util.tree_map(lambda _: False, problem)
    spec = eqx.tree_at(where, spec, replace_fn=lambda sub: jax.tree_util.tree_map(lambda _: True, sub))
    return jax.tree_util.tree_map(lambda b: 0 if b else None, spec)


def _batched_step_impl(problem, optimizer, theta, opt_state, scale, axes):
    fn = eqx.filter_vmap(lambda p, th, st: _step_impl(p, optimizer, th, st, scale), in_axes=(axes, 0, 0))
    return fn(problem, theta, opt_state)


_batched_step = eqx.filter_jit(_batched_step_impl)


def minimize_batch(problem: DesignProblem, optimizer: Optimizer = Optimizer(), *, axes=None, thetas=None,
                   batch_size: int | None = None, iterations: int = 100, progress: bool = True):
    """Run independent optimisations side by side as one ``vmap``-ed, jit-compiled step.

    Use it to sweep a trade-off (batch an objective weight with :func:`batch_axes`)
    or to start from several points (batch ``thetas``). There is no step rejection
    here: a penalised member gets a zero gradient (see :meth:`DesignProblem.loss`)
    and is reported, and each member's best point is kept.

    Args:
        problem: the problem; leaves named by ``axes`` carry a leading batch axis.
        optimizer: shared optimiser settings.
        axes: ``in_axes`` for the problem (:func:`batch_axes`), or ``None`` if only ``thetas`` are batched.
        thetas: batched initial variables (leading axis ``B``); default ``problem.init()`` repeated.
        batch_size: ``B`` when ``thetas`` is ``None``.
        iterations: number of steps.

    Returns:
        ``(best_thetas, best_losses (B,), losses (iterations, B), penalized (iterations, B))``.
    """
    from tqdm.auto import tqdm

    if axes is None:
        axes = jax.tree_util.tree_map(lambda _: None, problem)
    if thetas is None:
        if batch_size is None:
            raise ValueError("minimize_batch: pass `thetas` (batched initial variables) or `batch_size`.")
        theta0 = problem.init()
        thetas = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch_size,) + jnp.shape(x)), theta0)
    states = eqx.filter_vmap(optimizer.init)(thetas)
    B = jax.tree_util.tree_leaves(thetas)[0].shape[0]
    best_losses = np.full(B, np.inf)
    best = thetas
    losses, penal = [], []
    one = jnp.asarray(1.0)
    for _ in tqdm(range(iterations), disable=not progress, desc="optimize (batch)", unit="it"):
        nxt, states_n, value, info, _ = _batched_step(problem, optimizer, thetas, states, one, axes)
        v = np.asarray(value)
        pen = np.asarray(info.penalized)
        better = (v < best_losses) & ~pen
        best_losses = np.where(better, v, best_losses)
        mask = jnp.asarray(better)
        best = jax.tree_util.tree_map(lambda b, t: jnp.where(mask.reshape((-1,) + (1,) * (t.ndim - 1)), t, b),
                                      best, thetas)
        losses.append(v)
        penal.append(pen)
        thetas, states = nxt, states_n
    return best, best_losses, np.asarray(losses), np.asarray(penal)


# =========================================================================== history and checkpoints


class _Checkpoint(eqx.Module):
    iteration: Array
    theta: Any
    opt_state: Any
    scale: Array
    has_anchor: Array
    anchor_theta: Any
    anchor_opt_state: Any
    anchor_grad: Any
    anchor_value: Array
    best_value: Array
    best_theta: Any
    stale: Array


def _template(problem: DesignProblem, optimizer: Optimizer) -> _Checkpoint:
    theta = problem.init()
    state = optimizer.init(theta)
    f = jnp.result_type(float)
    z = jnp.zeros((), f)
    return _Checkpoint(iteration=jnp.zeros((), jnp.int32), theta=theta, opt_state=state, scale=z,
                       has_anchor=jnp.asarray(False), anchor_theta=theta, anchor_opt_state=state, anchor_grad=theta, anchor_value=z, best_value=z,
                       best_theta=theta, stale=jnp.zeros((), jnp.int32))


def _save_checkpoint(path: Path, ckpt: _Checkpoint) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    eqx.tree_serialise_leaves(tmp, ckpt)
    os.replace(tmp, path)


def read_history(path: str | Path) -> list[dict[str, float]]:
    """Rows of a ``history.csv`` as dicts of floats (empty list if the file is missing)."""
    path = Path(path)
    if not path.is_file():
        return []
    with path.open(newline="") as fh:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(fh)]


class _History:
    """Appends one CSV row per iteration, flushed and fsync-ed, so a killed run loses nothing."""

    def __init__(self, path: Path, columns: list[str], keep_rows: list[dict] | None):
        self.path, self.columns = path, columns
        if keep_rows is None:
            with path.open("w", newline="") as fh:
                csv.writer(fh).writerow(columns)
        else:  # rewrite the kept rows (drops rows after the checkpoint)
            tmp = path.with_suffix(".csv.tmp")
            with tmp.open("w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(columns)
                for row in keep_rows:
                    w.writerow([_fmt(row.get(c, math.nan)) for c in columns])
            os.replace(tmp, path)

    def append(self, row: dict[str, float]) -> None:
        with self.path.open("a", newline="") as fh:
            csv.writer(fh).writerow([_fmt(row.get(c, math.nan)) for c in self.columns])
            fh.flush()
            os.fsync(fh.fileno())


def _fmt(x) -> str:
    x = float(x)
    return repr(x) if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


# =========================================================================== the loop


@dataclasses.dataclass
class OptimizeResult:
    """Outcome of :func:`minimize`.

    Attributes:
        design: the best accepted :class:`Design` (lowest loss evaluated).
        theta: its unconstrained variables.
        initial_design: the design the run started from (iteration 0).
        initial_loss, final_loss: loss at iteration 0 and at ``design``.
        last_loss: loss of the last evaluation.
        iterations: number of evaluations (rows of ``history.csv``), including resumed ones.
        stop_reason: ``"iterations"``, ``"patience"``, ``"target"``, ``"step_size"``,
            ``"infeasible_start"`` or ``"interrupted"``.
        history: the rows of ``history.csv``.
        names: parameter column names.
        term_names: objective term column names.
        resumed_from: iteration the run resumed at (0 for a fresh run).
        resume_mode: ``"fresh"``, ``"checkpoint"`` (exact: optimiser state restored) or
            ``"history"`` (optimiser re-initialised at the last accepted row's parameters).
        out_dir: where files went (or ``None``).
    """

    design: Design
    theta: Any
    initial_design: Design
    initial_loss: float
    final_loss: float
    last_loss: float
    iterations: int
    stop_reason: str
    history: list[dict[str, float]]
    names: list[str]
    term_names: list[str]
    resumed_from: int
    resume_mode: str
    out_dir: Path | None


def _term_names(problem: DesignProblem) -> list[str]:
    leaves = ob._unique_names([(t.name, None) for t in problem.objective.leaves()])
    return list(leaves)


def minimize(
    problem: DesignProblem,
    optimizer: Optimizer = Optimizer(),
    *,
    iterations: int = 100,
    out_dir: str | Path | None = None,
    resume: bool = False,
    patience: int | None = None,
    min_delta: float = 1e-4,
    target: float | None = None,
    max_increase: float | None = None,
    reject_decay: float = 0.5,
    recover: float = 1.25,
    min_scale: float = 1e-3,
    progress: bool = True,
    stepper: Stepper | None = None,
    callback: Callable[[dict], None] | None = None,
) -> OptimizeResult:
    """Minimise ``problem.loss`` with an optax optimiser.

    Each iteration evaluates the loss and gradient at the current point ``theta_k``
    (one compiled call, :func:`make_step`) and writes one row to ``history.csv``:
    ``iteration, loss, accepted, penalized, scale, best_loss, grad_norm,
    rmse_position, time_s``, the measure of every objective term, then every
    selected parameter (physical units, :meth:`Parameters.names`).

    Acceptance: ``theta_k`` is rejected if its evaluation was penalised (diverged or
    non-finite) or, with ``max_increase``, if its loss exceeds the last accepted loss
    ``L_a`` by more than ``(max_increase - 1) |L_a|`` (a 1.5 allows a 50 % rise).
    A rejected point is discarded: the step is redone from the
    last accepted point and its gradient with the step scale times ``reject_decay``
    (no new simulation). After an accepted step the scale grows by ``recover`` up to 1.

    Early stopping: ``patience`` accepted-or-rejected iterations without the best loss
    improving by more than ``min_delta * max(|best|, 1e-12)``; ``target`` loss reached;
    or the step scale falls below ``min_scale``.

    Resume (``resume=True`` and ``out_dir/history.csv`` exists): if
    ``checkpoint.eqx`` is present it restores ``theta``, the optimiser state, the
    step scale, the anchor and the best point *exactly* (rows written after the
    checkpoint, at most one, are dropped and recomputed); without a checkpoint the
    optimiser state is re-initialised at the parameters of the last accepted row
    (documented approximation: Adam's moments restart). ``iterations`` counts the
    total, so a resumed run stops at the same place an uninterrupted one would.

    ``callback(row)`` is called after every iteration with the row just written;
    ``stepper`` replaces the default compiled step (see :func:`make_step`).

    Returns:
        an :class:`OptimizeResult` (the best accepted design).
    """
    from tqdm.auto import tqdm

    stepper = stepper or _DEFAULT_STEPPER
    out = Path(out_dir) if out_dir is not None else None
    names = problem.parameters.names(problem.design)
    term_names = _term_names(problem)
    columns = (["iteration", "loss", "accepted", "penalized", "scale", "best_loss", "grad_norm", "rmse_position",
                "time_s"] + [f"term:{t}" for t in term_names] + names)
    params0 = problem.parameters
    ckpt = _template(problem, optimizer)
    resumed_from, mode = 0, "fresh"
    rows: list[dict] = []
    keep_rows = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        hist_path, ckpt_path = out / HISTORY_FILE, out / CHECKPOINT_FILE
        if resume and hist_path.is_file():
            with hist_path.open(newline="") as fh:
                header = next(csv.reader(fh), [])
            if header != columns:
                raise ValueError(f"{hist_path} was written by a different problem (its columns differ). Fix: resume "
                                 "with the same configuration, start over (resume=False, CLI --fresh) or use another "
                                 "output folder.")
            rows = read_history(hist_path)
            loaded = None
            if ckpt_path.is_file():
                try:
                    loaded = eqx.tree_deserialise_leaves(ckpt_path, ckpt)
                except Exception:  # a checkpoint from another problem: fall back to the history
                    loaded = None
            if loaded is not None and int(loaded.iteration) <= len(rows):
                ckpt = loaded
                rows = rows[: int(ckpt.iteration)]
                mode = "checkpoint"
            elif rows:
                accepted = [r for r in rows if r.get("accepted", 1.0) == 1.0] or rows[:1]
                last = accepted[-1]
                design = params0.unflatten([last[n] for n in names], problem.design)
                theta = params0.to_theta(design)
                best = min((r for r in rows if r.get("accepted", 1.0) == 1.0), key=lambda r: r["loss"], default=last)
                best_theta = params0.to_theta(params0.unflatten([best[n] for n in names], problem.design))
                ckpt = eqx.tree_at(
                    lambda c: (c.iteration, c.theta, c.opt_state, c.best_value, c.best_theta, c.scale),
                    ckpt, (jnp.asarray(len(rows), jnp.int32), theta, optimizer.init(theta),
                           jnp.asarray(best["loss"]), best_theta, jnp.asarray(1.0)))
                mode = "history"
            resumed_from = int(ckpt.iteration)
            keep_rows = rows
        history = _History(hist_path, columns, keep_rows)
    k = int(ckpt.iteration)
    theta, opt_state = ckpt.theta, ckpt.opt_state
    scale = float(ckpt.scale) if mode != "fresh" else 1.0
    has_anchor = bool(ckpt.has_anchor)
    anchor = (ckpt.anchor_theta, ckpt.anchor_opt_state, ckpt.anchor_grad, float(ckpt.anchor_value))
    best_value = float(ckpt.best_value) if k > 0 else math.inf
    best_theta = ckpt.best_theta
    stale = int(ckpt.stale)
    stop = "iterations"
    t_start = time.perf_counter()
    bar = tqdm(total=iterations, initial=min(k, iterations), disable=not progress, desc="optimize", unit="it",
               dynamic_ncols=True)
    last_value = rows[-1]["loss"] if rows else math.nan
    t_start -= rows[-1]["time_s"] if rows else 0.0  # a resumed run keeps counting wall time
    try:
        while k < iterations:
            theta_next, opt_next, value, info, grad = stepper.step(problem, optimizer, theta, opt_state,
                                                                   jnp.asarray(scale))
            value = float(value)
            penalized = bool(info.penalized)
            rejected = penalized or (has_anchor and max_increase is not None
                                     and value > anchor[3] + (max_increase - 1.0) * abs(anchor[3]))
            row = {"iteration": k, "loss": value, "accepted": 0.0 if rejected else 1.0, "penalized": float(penalized),
                   "scale": scale, "grad_norm": float(_global_norm(grad)), "rmse_position": float(info.rmse_position),
                   "time_s": time.perf_counter() - t_start}
            for t_name in term_names:
                row[f"term:{t_name}"] = float(info.terms[t_name])
            row.update(zip(names, params0.flatten(problem.to_design(theta))))
            if not rejected:
                improved = value < best_value - min_delta * max(abs(best_value), 1e-12) if math.isfinite(best_value) else True
                if value < best_value:
                    best_value, best_theta = value, theta
                stale = 0 if improved else stale + 1
                anchor, has_anchor = (theta, opt_state, grad, value), True
                theta, opt_state = theta_next, opt_next
                scale = min(1.0, scale * recover)
            else:
                stale += 1
                if not has_anchor:
                    row["best_loss"] = best_value
                    rows.append(row)
                    if out is not None:
                        history.append(row)
                    k += 1
                    stop = "infeasible_start"
                    break
                scale *= reject_decay
                theta, opt_state = stepper.update(problem, optimizer, anchor[0], anchor[1], anchor[2], jnp.asarray(scale))
            row["best_loss"] = best_value
            rows.append(row)
            last_value = value
            k += 1
            if out is not None:
                history.append(row)
                _save_checkpoint(out / CHECKPOINT_FILE, _Checkpoint(
                    iteration=jnp.asarray(k, jnp.int32), theta=theta, opt_state=opt_state,
                    scale=jnp.asarray(scale), has_anchor=jnp.asarray(has_anchor), anchor_theta=anchor[0],
                    anchor_opt_state=anchor[1], anchor_grad=anchor[2], anchor_value=jnp.asarray(anchor[3]),
                    best_value=jnp.asarray(best_value), best_theta=best_theta, stale=jnp.asarray(stale, jnp.int32)))
            bar.update(1)
            bar.set_postfix(loss=f"{value:.4g}", best=f"{best_value:.4g}", scale=f"{scale:.2g}",
                            rmse=f"{row['rmse_position']:.3g}", refresh=False)
            if callback is not None:
                callback(row)
            if target is not None and best_value <= target:
                stop = "target"
                break
            if patience is not None and stale >= patience:
                stop = "patience"
                break
            if scale < min_scale:
                stop = "step_size"
                break
    except KeyboardInterrupt:
        stop = "interrupted"
    finally:
        bar.close()
    if not math.isfinite(best_value):  # nothing accepted
        best_theta = problem.init()
        best_value = rows[0]["loss"] if rows else math.nan
    return OptimizeResult(
        design=problem.to_design(best_theta), theta=best_theta, initial_design=problem.design,
        initial_loss=rows[0]["loss"] if rows else math.nan, final_loss=best_value, last_loss=last_value,
        iterations=k, stop_reason=stop, history=rows, names=names, term_names=term_names, resumed_from=resumed_from,
        resume_mode=mode, out_dir=out)


# =========================================================================== reports


class _Flight(eqx.Module):
    """The flight part of a problem (so flights with equal setups share one compiled metrics function)."""

    reference: Any
    allocator: Any
    integrator: Integrator
    save_dt: float = eqx.field(static=True)
    t1: float | None = eqx.field(static=True)
    limits: DivergenceLimits


@eqx.filter_jit
def _flight_metrics_impl(flight: _Flight, design: Design):
    from ..metrics import tracking_metrics

    traj = simulate(design.platform, design.controller, flight.reference, allocator=flight.allocator,
                    actuators=design.actuators, integrator=flight.integrator, save_dt=flight.save_dt, t1=flight.t1,
                    limits=flight.limits)
    m = tracking_metrics(traj, design.platform.c_f, design.platform.c_tau)
    e_p = traj.p_ref - traj.p
    extra = {
        "rmse_position": ob.safe_sqrt(jnp.mean(jnp.sum(e_p**2, -1))),
        "mae_position_norm": jnp.mean(ob.safe_norm(e_p)),
        "max_position_error": jnp.max(ob.safe_norm(e_p)),
        "saturation_margin": ob.saturation_margin(traj, design.platform),
        "energy": ob.Energy().measure(design, traj),
        "effort": ob.Effort().measure(design, traj),
    }
    return m, extra


def flight_metrics(problem: DesignProblem, design: Design) -> dict[str, Any]:
    """Tracking metrics of ``design`` flown as the problem flies it (JSON-ready).

    Keys: ``rmse_position`` (``sqrt(mean_t |e_p|^2)`` [m]), ``rmse_position_xyz``
    (per axis [m]), ``mae_position`` (per axis [m], Table IV), ``mae_position_norm``
    (``mean_t |e_p|`` [m]), ``max_position_error`` [m], ``rmse_orientation`` and
    ``mae_orientation`` (per axis [rad]), ``saturation_fraction``,
    ``saturation_margin`` (:func:`jaxrotor.optimize.objectives.saturation_margin`), ``energy`` and ``effort``
    (normalised, see :mod:`jaxrotor.optimize.objectives`), ``diverged``.
    """
    flight = _Flight(problem.reference, problem.allocator, problem.integrator, problem.save_dt, problem.t1,
                     problem.limits)
    m, extra = _flight_metrics_impl(flight, design)

    def py(x):
        a = np.asarray(x, dtype=float)
        return a.tolist() if a.ndim else float(a)

    return {
        "rmse_position": py(extra["rmse_position"]),
        "rmse_position_xyz": py(m.rmse_position),
        "mae_position": py(m.mae_position),
        "mae_position_norm": py(extra["mae_position_norm"]),
        "max_position_error": py(extra["max_position_error"]),
        "rmse_orientation": py(m.rmse_orientation),
        "mae_orientation": py(m.mae_orientation),
        "saturation_fraction": py(m.saturation_fraction),
        "saturation_margin": py(extra["saturation_margin"]),
        "energy": py(extra["energy"]),
        "effort": py(extra["effort"]),
        "diverged": bool(m.diverged),
    }


def write_report(result: OptimizeResult, problem: DesignProblem, out_dir: str | Path, *, metrics: bool = True,
                 extra: Mapping[str, Any] | None = None, echo: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Write ``result.json``, ``loss.png`` and ``params.png`` into ``out_dir``.

    ``result.json`` holds ``initial_loss``, ``final_loss`` (best accepted), ``last_loss``,
    ``iterations``, ``stop_reason``, ``resume_mode``, ``initial_params`` and
    ``final_params`` (``{name: value}`` in physical units), ``initial_terms`` /
    ``final_terms`` (objective term measures), and, with ``metrics=True``,
    ``initial_metrics`` / ``final_metrics`` from :func:`flight_metrics` (``rmse_position``
    in metres) and ``rmse_reduction`` (initial over final RMSE).

    Returns:
        the ``result.json`` content.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p = problem.parameters
    init_vals = p.flatten(result.initial_design)
    final_vals = p.flatten(result.design)
    rows = result.history
    accepted = [r for r in rows if r.get("accepted", 1.0) == 1.0]
    best_row = min(accepted, key=lambda r: r["loss"]) if accepted else (rows[0] if rows else {})
    report: dict[str, Any] = {
        "initial_loss": result.initial_loss,
        "final_loss": result.final_loss,
        "last_loss": result.last_loss,
        "iterations": result.iterations,
        "stop_reason": result.stop_reason,
        "resume_mode": result.resume_mode,
        "resumed_from": result.resumed_from,
        "objective": problem.objective.name,
        "parameters": list(p.paths),
        "initial_params": dict(zip(result.names, init_vals.tolist())),
        "final_params": dict(zip(result.names, final_vals.tolist())),
        "initial_terms": {t: rows[0].get(f"term:{t}") for t in result.term_names} if rows else {},
        "final_terms": {t: best_row.get(f"term:{t}") for t in result.term_names},
    }
    if metrics and problem.reference is not None:
        report["initial_metrics"] = flight_metrics(problem, result.initial_design)
        report["final_metrics"] = flight_metrics(problem, result.design)
        r0, r1 = report["initial_metrics"]["rmse_position"], report["final_metrics"]["rmse_position"]
        report["rmse_reduction"] = r0 / r1 if r1 > 0 else math.inf
    if extra:
        report.update(extra)
    report = to_jsonable(report)
    (out / "result.json").write_text(json.dumps(report, indent=2))
    plot_history(rows, result.names, out)
    if echo is not None:
        echo(summary(report))
    return report


def summary(report: Mapping[str, Any]) -> str:
    """A few lines describing a ``result.json`` content."""
    lines = [f"iterations: {report['iterations']} (stopped: {report['stop_reason']})",
             f"loss: {report['initial_loss']:.6g} -> {report['final_loss']:.6g}"]
    if "initial_metrics" in report:
        a, b = report["initial_metrics"]["rmse_position"], report["final_metrics"]["rmse_position"]
        lines.append(f"tracking RMSE: {a * 1e3:.3f} mm -> {b * 1e3:.3f} mm ({report['rmse_reduction']:.2f}x)")
    names = list(report["final_params"])
    if len(names) <= 24:
        for n in names:
            lines.append(f"  {n:<34} {report['initial_params'][n]:>12.6g} -> {report['final_params'][n]:>12.6g}")
    return "\n".join(lines)


def plot_history(rows: list[dict[str, float]], names: list[str], out_dir: str | Path) -> None:
    """``loss.png`` (loss per iteration, rejected points marked, best so far) and
    ``params.png`` (every parameter relative to its initial value, or in degrees for angles)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ..io.plotting import save_figure

    out = Path(out_dir)
    if not rows:
        return
    it = np.array([r["iteration"] for r in rows])
    loss = np.array([r["loss"] for r in rows])
    acc = np.array([r.get("accepted", 1.0) == 1.0 for r in rows])
    best = np.array([r.get("best_loss", np.nan) for r in rows])
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.plot(it[acc], loss[acc], ".-", label="loss (accepted)")
    if np.any(~acc):
        ax.plot(it[~acc], loss[~acc], "x", color="C3", label="rejected")
    ax.plot(it, best, "--", color="k", lw=1, label="best so far")
    finite = loss[np.isfinite(loss)]
    if finite.size and np.all(finite > 0):
        ax.set_yscale("log")
    else:
        ax.set_yscale("symlog", linthresh=max(1e-6, float(np.min(np.abs(finite[finite != 0]))) if np.any(finite != 0)
                      else 1.0))
    ax.set_xlabel("iteration")
    ax.set_ylabel("loss")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save_figure(fig, out / "loss.png", dpi=120)

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    angles = [n for n in names if n.startswith("platform.alpha") or n.startswith("platform.beta")]
    if angles and len(angles) == len(names):
        for n in names:
            ax.plot(it, np.degrees([r[n] for r in rows]), label=n)
        ax.set_ylabel("angle [deg]")
    else:
        ratios = []
        for n in names:
            v = np.array([r[n] for r in rows])
            ref = v[0] if v[0] != 0 else 1.0
            ratios.append(v / ref)
            ax.plot(it, v / ref, lw=1, label=n)
        if all(np.all(r > 0) for r in ratios):
            ax.set_yscale("log")
        ax.set_ylabel("parameter / initial value")
    ax.set_xlabel("iteration")
    ax.grid(True, which="both", alpha=0.3)
    if len(names) <= 24:
        ax.legend(fontsize=6, ncol=3)
    save_figure(fig, out / "params.png", dpi=120)


# =========================================================================== TOML


@dataclasses.dataclass
class OptimizationConfig:
    """A loaded ``jaxrotor tune`` / ``jaxrotor optimize`` configuration.

    Attributes:
        name: run name (default output folder ``jaxrotor-out/<name>``).
        kind: ``"tune"`` or ``"optimize"``.
        problem: the :class:`DesignProblem`.
        optimizer: the :class:`Optimizer`.
        run: keyword arguments of :func:`minimize` (``iterations``, ``patience``,
            ``min_delta``, ``target``, ``max_increase``).
        spec: the flight part (:class:`jaxrotor.io.config.FlightSpec`).
        source: file name.
    """

    name: str
    kind: str
    problem: DesignProblem
    optimizer: Optimizer
    run: dict[str, Any]
    spec: Any
    source: str


_OWN_TABLES = ("optimize", "parameters", "objective")
_TERM_OPTIONS: dict[str, dict[str, tuple]] = {
    "tracking": {"metric": (str, "rmse"), "position": (float, 1.0), "orientation": (float, 0.0)},
    "effort": {},
    "energy": {"normalize": (bool, True)},
    "saturation": {"threshold": (float, 0.9)},
    "wrench_shortfall": {},
    "conditioning": {"log": (bool, False)},
    "hover_efficiency": {},
    "lateral_capability": {"n_directions": (int, 12), "temperature": (float, 1e-3)},
    "rotor_loss_margin": {"temperature": (float, 1e-3)},
}


def _parameters_from(table, design: Design, source: str):
    from ..io.config import ConfigError, _Table

    t = _Table(table, source, "parameters")
    selection = {}
    for path, sub in table.items():
        key = f'parameters."{path}"' if "." in path else f"parameters.{path}"
        st = _Table(sub, t.source, key)
        if isinstance(sub, dict) and "transform" not in sub and all(isinstance(v, dict) for v in sub.values()):
            raise ConfigError(f"{t.source}: table `{key}` has sub-tables {sorted(sub)} but no `transform`. Fix: quote "
                              f"dotted paths, e.g. [parameters.\"{path}.{next(iter(sub))}\"].")
        kind = st.choice("transform", tuple(TRANSFORMS), "identity")
        if kind in ("interval", "log_interval"):
            tf = TRANSFORMS[kind](st.number("lower", fix="the lower bound in the parameter's units (radians for angles)"),
                                  st.number("upper", fix="the upper bound in the parameter's units"))
        elif kind == "box":
            tf = Box(st.number("lower", -math.inf), st.number("upper", math.inf))
        else:
            tf = TRANSFORMS[kind]()
        st.check_unknown()
        selection[path] = tf
    if not selection:
        raise ConfigError(f"{t.source}: table [parameters] is empty. Fix: add e.g. [parameters.controller] with "
                          "transform = \"log\".")
    try:
        return Parameters.select(design, selection)
    except ValueError as err:
        raise ConfigError(f"{t.source}: [parameters]: {err}") from None


def _objective_from(table, src: str):
    from ..io.config import ConfigError, _Table

    _Table(table, src, "objective")  # raises if [objective] is not a table
    terms = []
    for name, sub in table.items():
        if name not in ob.TERMS:
            raise ConfigError(f"{src}: unknown objective term `objective.{name}` = {sub!r}. Fix: use one of "
                              f"{', '.join(ob.TERMS)}.")
        st = _Table(sub, src, f"objective.{name}")
        weight = st.number("weight", 1.0, fix="a non-negative weight")
        if weight < 0:
            raise st.fail("weight", weight, "weights must be >= 0 (every term is a cost; larger-is-better measures "
                          "are negated already)", "give a non-negative weight")
        kwargs = {}
        for opt, (kind, default) in _TERM_OPTIONS[name].items():
            if kind is float:
                kwargs[opt] = st.number(opt, default)
            elif kind is int:
                v = st.get(opt, int, default)
                if v < 1:
                    raise st.fail(opt, v, "must be >= 1", "give a positive integer")
                kwargs[opt] = v
            else:
                kwargs[opt] = st.get(opt, kind, default)
        lower = st.number("at_least", None)
        upper = st.number("at_most", None)
        penalty = st.number("penalty", 1e4, positive=True, fix="the quadratic penalty weight of the bound")
        st.check_unknown()
        try:
            term = ob.TERMS[name](**kwargs)
        except ValueError as err:
            raise ConfigError(f"{src}: [objective.{name}]: {err}") from None
        terms.append(ob.Weighted(term, weight))
        if lower is not None or upper is not None:
            terms.append(ob.Penalty(term, -math.inf if lower is None else lower, math.inf if upper is None else upper,
                                    penalty))
    if not terms:
        raise ConfigError(f"{src}: table [objective] is empty. Fix: add e.g. [objective.tracking] with weight = 1.0.")
    return terms[0] if len(terms) == 1 else ob.Sum(terms)


def _opt_int(t, key):
    v = t.get(key, int, None, "a positive integer")
    if v is not None and v < 1:
        raise t.fail(key, v, "must be >= 1", "give a positive integer or remove it")
    return v


def from_dict(data: Mapping[str, Any], source: str = "<dict>", base_dir: Path | None = None,
              kind: str = "optimize") -> OptimizationConfig:
    """Build an :class:`OptimizationConfig` from a parsed TOML mapping.

    The flight tables (``[platform]``, ``[controller]``, ``[allocator]``,
    ``[actuators]``, ``[reference]``, ``[solver]``) are read by
    :func:`jaxrotor.io.config.from_dict`; this function reads ``[parameters]``,
    ``[objective]`` and ``[optimize]`` (see ``docs/optimization.md``). ``kind="tune"``
    defaults ``[parameters]`` to every controller gain with a log transform and
    ``[objective]`` to the tracking RMSE.

    Raises:
        jaxrotor.io.config.ConfigError: naming the file, the key, the value and the fix.
    """
    from ..io import config as cfg

    data = dict(data)
    own = {k: data.pop(k) for k in _OWN_TABLES if k in data}
    for k in _OWN_TABLES:
        if k in own and not isinstance(own[k], dict):
            raise cfg.ConfigError(f"{source}: `{k}` must be a table, got {own[k]!r}. Fix: write it as [{k}].")
    spec = cfg.from_dict(data, source, base_dir)
    if spec.integrator.adaptive:
        raise cfg.ConfigError(f"{source}: key `solver.adaptive` = true is invalid here: gradients are taken through "
                              "fixed-step solves. Fix: set adaptive = false and dt (e.g. 0.01) in [solver].")
    if spec.compare is not None:
        raise cfg.ConfigError(f"{source}: key `compare` is not used by {kind}. Fix: remove it.")
    design = Design(spec.platform, spec.controller, spec.actuators)
    if "parameters" in own:
        parameters = _parameters_from(own["parameters"], design, source)
    elif kind == "tune":
        parameters = Parameters.select(design, {"controller": Log()})
    else:
        raise cfg.ConfigError(f"{source}: missing table [parameters]. Fix: name what to optimise, e.g. "
                              "[parameters.\"platform.alpha\"] with transform = \"interval\", lower = 0.0, upper = 1.2.")
    if "objective" in own:
        objective = _objective_from(own["objective"], source)
    elif kind == "tune":
        objective = ob.Weighted(ob.Tracking("rmse"), 1.0)
    else:
        raise cfg.ConfigError(f"{source}: missing table [objective]. Fix: add e.g. [objective.tracking] with "
                              "weight = 1.0.")
    t = cfg._Table(own.get("optimize", {}), source, "optimize")
    try:
        optimizer = Optimizer(
            name=t.choice("optimizer", OPTIMIZERS, "adam"),
            learning_rate=t.number("learning_rate", 0.05, positive=True, fix="a step size, e.g. 0.05"),
            clip_norm=t.number("clip_norm", None, positive=True),
            b1=t.number("b1", 0.9, positive=True), b2=t.number("b2", 0.999, positive=True),
            momentum=t.number("momentum", None, positive=True), weight_decay=t.number("weight_decay", 0.0),
            decay_steps=_opt_int(t, "decay_steps"),
            final_fraction=t.number("final_fraction", 0.01, positive=True),
        )
    except ValueError as err:
        raise cfg.ConfigError(f"{source}: [optimize]: {err}") from None
    iterations = t.get("iterations", int, 100, "a positive integer")
    if iterations < 1:
        raise t.fail("iterations", iterations, "must be >= 1", "give a positive integer")
    patience = t.get("patience", int, None, "a positive integer")
    if patience is not None and patience < 1:
        raise t.fail("patience", patience, "must be >= 1", "give a positive integer or remove it")
    run = {
        "iterations": iterations,
        "patience": patience,
        "min_delta": t.number("min_delta", 1e-4),
        "target": t.number("target", None),
        "max_increase": t.number("max_increase", None, positive=True),
    }
    if run["max_increase"] is not None and run["max_increase"] <= 1:
        raise t.fail("max_increase", run["max_increase"], "must be > 1 (a factor on the last accepted loss)",
                     "give e.g. 2.0 or remove it")
    penalty = t.number("divergence_penalty", 1e3, positive=True, fix="the loss given to a diverged flight")
    limits = DivergenceLimits(max_position=t.number("max_position", 1e3, positive=True),
                              max_speed=t.number("max_speed", 1e3, positive=True),
                              max_rate=t.number("max_rate", 1e3, positive=True))
    t.check_unknown()
    problem = DesignProblem(design, parameters, objective, reference=spec.reference, allocator=spec.allocator,
                            integrator=spec.integrator, save_dt=spec.save_dt, t1=spec.t1, divergence_penalty=penalty,
                            limits=limits)
    return OptimizationConfig(name=spec.name, kind=kind, problem=problem, optimizer=optimizer, run=run, spec=spec,
                              source=source)


def load(path: str | Path, kind: str = "optimize") -> OptimizationConfig:
    """Load a TOML optimisation configuration (see :func:`from_dict`)."""
    from ..io.config import ConfigError

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such configuration file. Fix: pass the path of a TOML file (see configs/).")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML ({err}). Fix: check the syntax at that line.") from None
    return from_dict(data, str(path), path.parent, kind=kind)
