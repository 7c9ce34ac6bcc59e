"""Which leaves of a design are optimised, and how they are bounded.

The optimiser works on an unconstrained variable ``theta``; every selected
parameter is ``x = transform.forward(theta)``. Bounds come either from the
reparameterisation (:class:`Log`, :class:`Interval`, :class:`LogInterval`) or from a
projection after each update (:class:`Box`).
"""

from __future__ import annotations

import abc
import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import Array
from jax.flatten_util import ravel_pytree

from .._util import as_float as _f

__all__ = ["AbstractTransform", "Identity", "Log", "Interval", "LogInterval", "Box", "Held", "TRANSFORMS",
           "Parameters", "rederive"]


class AbstractTransform(eqx.Module):
    """Map between the unconstrained optimisation variable ``theta`` and a parameter ``x`` (same shape)."""

    @abc.abstractmethod
    def forward(self, theta: Array) -> Array:
        """``x = forward(theta)``."""

    @abc.abstractmethod
    def inverse(self, x: Array) -> Array:
        """``theta = inverse(x)`` (``x`` must be feasible)."""

    @abc.abstractmethod
    def project(self, theta: Array) -> Array:
        """Projection of ``theta`` onto its feasible set after an optimiser update."""

    @abc.abstractmethod
    def check(self, name: str, x: np.ndarray) -> None:
        """Raise ``ValueError`` naming the parameter ``name`` if the concrete initial value ``x`` is infeasible."""

    def holds(self, x: np.ndarray) -> np.ndarray:
        """Which elements of a leaf starting at the concrete value ``x`` can never move under this transform.

        A bool array of ``x``'s shape. Elements it marks, in a leaf selected through a parent path
        (``"controller"``), are held at their value and not optimised (:attr:`Parameters.held`; the
        rest of the leaf is checked and optimised); in a leaf named by its own path they are refused
        (:meth:`check`). None unless a transform says otherwise (:class:`Log`: the zeros).
        """
        return np.zeros(np.shape(x), dtype=bool)


class Identity(AbstractTransform):
    """No bound: ``x = theta``."""

    def forward(self, theta):
        """``x = theta``."""
        return theta

    def inverse(self, x):
        """``theta = x``."""
        return x

    def project(self, theta):
        """No projection."""
        return theta

    def check(self, name, x):
        """Every finite value is feasible."""


class Log(AbstractTransform):
    """Positivity by reparameterisation: ``x = exp(theta)`` (steps are relative changes of ``x``)."""

    def forward(self, theta):
        """``x = exp(theta)``."""
        return jnp.exp(theta)

    def inverse(self, x):
        """``theta = log(x)``."""
        return jnp.log(x)

    def project(self, theta):
        """No projection."""
        return theta

    def check(self, name, x):
        """``x > 0``."""
        if np.any(x <= 0):
            raise ValueError(f"parameter `{name}` = {x.tolist()} is invalid for a log transform: it must be > 0 "
                             "(x = exp(theta) never reaches 0). Fix: start from positive values, use transform = "
                             "\"box\" with lower = 0, or select its parent (e.g. [parameters.controller]), which "
                             "holds the zeros at 0.")

    def holds(self, x):
        """The zeros of ``x`` (``exp(theta)`` can neither reach nor leave 0): e.g. an integral gain switched off."""
        return np.asarray(x) == 0


class Held(AbstractTransform):
    """``base`` with the elements ``mask`` held at ``value``: ``x = where(mask, value, base.forward(theta))``.

    Built by :meth:`Parameters.select` for a leaf whose transform cannot move some of its elements
    (:meth:`AbstractTransform.holds`); the held elements' ``theta`` is a dummy ``0`` with zero
    gradient, so the optimiser leaves them alone.

    Attributes:
        base: the leaf's transform.
        mask: bool, ``x``'s shape: the held elements.
        value: the held values (``x``'s shape; used where ``mask``).
    """

    base: AbstractTransform
    mask: Array
    value: Array

    def __init__(self, base: AbstractTransform, mask, value):
        self.base, self.mask, self.value = base, jnp.asarray(mask, dtype=bool), _f(value)

    def forward(self, theta):
        """``where(mask, value, base.forward(theta))``."""
        return jnp.where(self.mask, self.value, self.base.forward(jnp.where(self.mask, 0.0, theta)))

    def inverse(self, x):
        """``where(mask, 0, base.inverse(x))`` (held elements replaced by a free element's value first)."""
        fill = jnp.max(jnp.where(self.mask, -jnp.inf, x))
        return jnp.where(self.mask, 0.0, self.base.inverse(jnp.where(self.mask, fill, x)))

    def project(self, theta):
        """``base.project`` on the free elements."""
        return jnp.where(self.mask, theta, self.base.project(theta))

    def check(self, name, x):
        """``base.check`` of the free elements."""
        self.base.check(name, np.asarray(x)[~np.asarray(self.mask)])


def _check_interval(name, x, lo, hi):
    if not np.all(np.asarray(lo) < np.asarray(hi)):
        raise ValueError(f"parameter `{name}`: bounds lower = {np.asarray(lo).tolist()}, upper = "
                         f"{np.asarray(hi).tolist()} are invalid. Fix: give lower < upper.")
    if np.any(x <= lo) or np.any(x >= hi):
        raise ValueError(f"parameter `{name}` = {x.tolist()} lies outside its open interval "
                         f"({np.asarray(lo).tolist()}, {np.asarray(hi).tolist()}). Fix: widen the bounds or change "
                         "the initial design so it lies strictly inside.")


def _logit(r):
    return jnp.log(r) - jnp.log1p(-r)


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
        """``x = lower + (upper - lower) sigmoid(theta)``."""
        return self.lower + (self.upper - self.lower) * jax.nn.sigmoid(theta)

    def inverse(self, x):
        """``theta = logit((x - lower) / (upper - lower))``."""
        return _logit((x - self.lower) / (self.upper - self.lower))

    def project(self, theta):
        """No projection (every ``theta`` is feasible)."""
        return theta

    def check(self, name, x):
        """``lower < x < upper``."""
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
        """``x = exp(log lower + (log upper - log lower) sigmoid(theta))``."""
        lo, hi = jnp.log(self.lower), jnp.log(self.upper)
        return jnp.exp(lo + (hi - lo) * jax.nn.sigmoid(theta))

    def inverse(self, x):
        """``theta = logit((log x - log lower) / (log upper - log lower))``."""
        lo, hi = jnp.log(self.lower), jnp.log(self.upper)
        return _logit((jnp.log(x) - lo) / (hi - lo))

    def project(self, theta):
        """No projection (every ``theta`` is feasible)."""
        return theta

    def check(self, name, x):
        """``0 < lower < x < upper``."""
        if np.any(np.asarray(self.lower) <= 0):
            raise ValueError(f"parameter `{name}`: log_interval needs lower > 0, got {np.asarray(self.lower).tolist()}. "
                             "Fix: use a positive lower bound or transform = \"interval\".")
        _check_interval(name, x, np.asarray(self.lower), np.asarray(self.upper))


class Box(AbstractTransform):
    """Bounds by projection: ``x = theta``, clipped to ``[lower, upper]`` after every update
    (``optax.projections.projection_box``).

    Attributes:
        lower, upper: bounds (``-inf``/``inf`` for none).
    """

    lower: Array
    upper: Array

    def __init__(self, lower=-math.inf, upper=math.inf):
        self.lower, self.upper = _f(lower), _f(upper)

    def forward(self, theta):
        """``x = theta``."""
        return theta

    def inverse(self, x):
        """``theta = x``."""
        return x

    def project(self, theta):
        """``clip(theta, lower, upper)``."""
        return optax.projections.projection_box(theta, self.lower, self.upper)

    def check(self, name, x):
        """``lower <= x <= upper``."""
        if np.any(x < np.asarray(self.lower)) or np.any(x > np.asarray(self.upper)):
            raise ValueError(f"parameter `{name}` = {x.tolist()} lies outside [{np.asarray(self.lower).tolist()}, "
                             f"{np.asarray(self.upper).tolist()}]. Fix: widen the bounds or change the initial design.")


#: Transform classes by configuration name (``transform = "..."`` in ``[parameters.<path>]``).
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


def _path_name(key_path) -> str:
    return jax.tree_util.keystr(key_path, simple=True, separator=".")


class Parameters(eqx.Module):
    """Which leaves of a design are optimised, and their bounds.

    Build with :meth:`select`. ``filter_spec`` is an ``eqx.partition`` filter (a
    design-shaped tree of bools); ``transforms`` has the structure of the selected
    partition with an :class:`AbstractTransform` at every selected leaf.

    Attributes:
        filter_spec: design-shaped pytree of bools.
        transforms: the selected partition's structure, transforms at the leaves.
        paths: the dotted paths given to :meth:`select` (static, for reports).
        held: the leaves or elements under a selected path that are held at their initial value
            because their transform cannot move them (:meth:`AbstractTransform.holds`: zeros under
            :class:`Log`), e.g. ``("controller.K_pi[0]", "controller.K_pi[1]", "controller.K_Ri")``
            (a whole leaf is left out of the selection; a held element stays in :meth:`names` at its
            value, its transform a :class:`Held`) (static).
    """

    filter_spec: Any
    transforms: Any
    paths: tuple[str, ...] = eqx.field(static=True)
    held: tuple[str, ...] = eqx.field(static=True, default=())

    @classmethod
    def select(cls, design, selection: Mapping[str, AbstractTransform | None]) -> "Parameters":
        """Select leaves of ``design`` by dotted path, each with a transform (``None``: :class:`Identity`).

        Paths name a field or a sub-tree of the design: ``"platform.alpha"``
        (``alpha_0`` when the leaf is a scalar, per-rotor ``alpha_i`` when ``(n,)``),
        ``"platform.beta"``, ``"platform.arm_length"``, ``"platform.mass"``,
        ``"platform.inertia"``, ``"controller"`` (every gain), ``"controller.K_R"``,
        ``"flight.actuators.motor.time_constant"``. Later entries override earlier ones on
        overlapping sub-trees. Initial values are checked against the bounds, except that the
        elements of a leaf selected through a parent path which its transform cannot move (zero
        gains under :class:`Log`, e.g. ``K_pi = (0, 0, 1.3)`` under ``{"controller": Log()}``) are
        held at their value and listed in :attr:`held`; the same leaf named by its own path is refused.

        Raises:
            ValueError: unknown path, a path without array leaves, an infeasible start, or every
                selected leaf held.
        """
        if not selection:
            raise ValueError("Parameters.select parameter `selection` is empty. Fix: name at least one leaf, "
                             "e.g. {'controller': Log()}.")
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
            if not _is_tf(tf):
                raise ValueError(f"parameter `{path}`: transform {tf!r} is not an AbstractTransform. "
                                 "Fix: pass Identity(), Log(), Interval(lo, hi), LogInterval(lo, hi) or Box(lo, hi).")
            chosen.append((path, tf))

        def transform_of(key_path, _):
            name = _path_name(key_path)
            # the last selection whose path is this leaf or one of its parents wins
            return [tf for path, tf in chosen if name == path or name.startswith(path + ".")][-1]

        def explicit(name):  # the leaf's own path was given (not only a parent's)
            return any(name == path for path, _ in chosen)

        transforms = jax.tree_util.tree_map_with_path(transform_of, params)
        held, dropped, partial = [], set(), {}
        for (key_path, x), tf in zip(jax.tree_util.tree_flatten_with_path(params)[0],
                                     jax.tree_util.tree_leaves(transforms, is_leaf=_is_tf)):
            name, x = _path_name(key_path), np.asarray(x, dtype=float)
            mask = np.asarray(tf.holds(x), dtype=bool) if not explicit(name) else np.zeros(x.shape, bool)
            if mask.size and mask.all():  # nothing of the leaf can move: leave it out
                held.append(name)
                dropped.add(name)
            elif mask.any():  # some elements: hold those, optimise the rest
                held += [name + "[" + ",".join(map(str, i)) + "]" for i in zip(*np.nonzero(mask))]
                partial[name] = Held(tf, mask, x)
                partial[name].check(name, x)
            else:
                tf.check(name, x)
        if dropped:
            if len(dropped) == len(jax.tree_util.tree_leaves(params)):
                raise ValueError(f"Parameters.select: every selected leaf ({', '.join(held)}) is held: its transform "
                                 "cannot move its initial value (0 under a log transform). Fix: start from positive "
                                 "values or use transform = \"box\" with lower = 0.")
            spec = jax.tree_util.tree_map_with_path(lambda kp, b: b and _path_name(kp) not in dropped, spec)
            params, _ = eqx.partition(design, spec)
        if dropped or partial:
            transforms = jax.tree_util.tree_map_with_path(
                lambda kp, x: partial.get(_path_name(kp)) or transform_of(kp, x), params)
        return cls(filter_spec=spec, transforms=transforms, paths=tuple(selection), held=tuple(held))

    def partition(self, design):
        """``(selected, rest)`` = ``eqx.partition(design, filter_spec)``."""
        return eqx.partition(design, self.filter_spec)

    def _map(self, fn, tree):
        return jax.tree_util.tree_map(fn, self.transforms, tree, is_leaf=_is_tf)

    def to_theta(self, design):
        """Unconstrained variables ``theta = inverse(x)`` (the selected partition's structure) of ``design``."""
        return self._map(lambda tf, x: tf.inverse(x), self.partition(design)[0])

    def physical(self, theta):
        """Selected parameter values ``x = forward(theta)`` (the selected partition)."""
        return self._map(lambda tf, t: tf.forward(t), theta)

    def to_design(self, theta, base):
        """``eqx.combine(forward(theta), rest of base)``, every platform built from parts re-derived
        (:func:`rederive`: a new arm length or propeller moves the mass, inertia and thrust)."""
        return rederive(eqx.combine(self.physical(theta), self.partition(base)[1]))

    def project(self, theta):
        """Apply every transform's projection (only :class:`Box` clips)."""
        return self._map(lambda tf, t: tf.project(t), theta)

    def names(self, design, per_leaf: bool = False) -> list[str]:
        """Column names of the selected scalars, e.g. ``platform.alpha``, ``controller.K_p[0]``.

        ``per_leaf=True`` gives one name per leaf (array) instead of per element.
        """
        out = []
        for path, leaf in jax.tree_util.tree_flatten_with_path(self.partition(design)[0])[0]:
            base = _path_name(path)
            if per_leaf or np.ndim(leaf) == 0:
                out.append(base)
            else:
                out.extend(base + "[" + ",".join(map(str, idx)) + "]" for idx in np.ndindex(np.shape(leaf)))
        return out

    def flatten(self, design) -> np.ndarray:
        """Selected physical values of ``design`` as one float vector (order of :meth:`names`)."""
        vec, _ = ravel_pytree(self.partition(design)[0])
        return np.asarray(vec, dtype=float)

    def unflatten(self, values, base):
        """Inverse of :meth:`flatten`: ``base`` with the selected leaves set from ``values``."""
        params, rest = self.partition(base)
        vec, unravel = ravel_pytree(params)
        values = np.asarray(values, dtype=float)
        if values.shape != vec.shape:
            raise ValueError(f"Parameters.unflatten parameter `values` has {values.size} entries for {vec.size} "
                             "selected scalars. Fix: pass one value per name of Parameters.names().")
        return rederive(eqx.combine(unravel(jnp.asarray(values, dtype=vec.dtype)), rest))


def _is_platform(x) -> bool:
    from ..design.platform import Platform

    return isinstance(x, Platform)


def rederive(tree):
    """``tree`` with every :class:`~jaxrotor.design.platform.Platform` in it re-derived from its parts
    (:meth:`Platform.derive`; platforms without parts are unchanged). Pure and differentiable: a
    gradient with respect to a geometry or parts leaf flows through the mass model."""
    return jax.tree_util.tree_map(lambda x: x.derive() if _is_platform(x) else x, tree, is_leaf=_is_platform)
