"""Compiled optimiser steps: one loss-and-gradient evaluation plus an optax update, single or batched."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

if TYPE_CHECKING:  # annotations only: jaxrotor.optimize.problem imports the loop, which imports this module
    from .problem import DesignProblem

__all__ = ["Stepper", "make_step", "batch_axes", "minimize_batch"]


def _apply(problem: DesignProblem, optimizer: optax.GradientTransformation, theta, opt_state, grad, scale):
    """``theta+ = project(theta + scale * u)`` with ``(u, state+) = optimizer.update(grad, state, theta)``."""
    updates, opt_state = optimizer.update(grad, opt_state, theta)
    updates = optax.tree_utils.tree_scale(scale, updates)
    return problem.parameters.project(optax.apply_updates(theta, updates)), opt_state


def _step_impl(problem: DesignProblem, optimizer: optax.GradientTransformation, theta, opt_state, scale):
    """Evaluate ``loss`` and its gradient at ``theta`` and propose the next point.

    Returns:
        ``(theta_next, opt_state_next, value, info, grad)``.
    """
    (value, info), grad = jax.value_and_grad(problem.loss, has_aux=True)(theta)
    grad = jax.tree_util.tree_map(lambda g: jnp.where(jnp.isfinite(g), g, 0.0), grad)
    theta_next, opt_next = _apply(problem, optimizer, theta, opt_state, grad, scale)
    return theta_next, opt_next, value, info, grad


def _update_impl(problem: DesignProblem, optimizer: optax.GradientTransformation, theta, opt_state, grad, scale):
    """Re-propose from an accepted point with a different step scale (no new simulation)."""
    return _apply(problem, optimizer, theta, opt_state, grad, scale)


class Stepper(NamedTuple):
    """The two compiled functions of the loop.

    Attributes:
        step: ``step(problem, optimizer, theta, opt_state, scale) -> (theta_next, opt_state_next, value, info, grad)``;
            one loss-and-gradient evaluation plus the update
            ``theta_next = project(theta + scale * optimizer.update(grad, opt_state, theta)[0])``.
        update: ``update(problem, optimizer, theta, opt_state, grad, scale) -> (theta_next, opt_state_next)``;
            the update alone, used to redo a rejected step with a smaller scale.
    """

    step: Callable
    update: Callable


def make_step(max_traces: int | None = None) -> Stepper:
    """Compile-once step functions (``eqx.filter_jit``).

    Everything that changes between iterations (``theta``, optimiser state, the step
    scale) is an array argument; the problem's static parts and the optax
    transformation (its functions) are hashed, so the step is traced once per problem
    structure and optimiser object (pass the same ``optax.adam(...)`` object to reuse
    a compiled step across runs). ``max_traces`` wraps both functions in
    ``eqx.debug.assert_max_traces`` (a test uses ``max_traces=1``).
    """
    step, update = _step_impl, _update_impl
    if max_traces is not None:
        step = eqx.debug.assert_max_traces(step, max_traces=max_traces)
        update = eqx.debug.assert_max_traces(update, max_traces=max_traces)
    return Stepper(eqx.filter_jit(step), eqx.filter_jit(update))


#: The stepper :func:`jaxrotor.optimize.minimize` uses when none is given.
DEFAULT_STEPPER = make_step()


def batch_axes(problem: DesignProblem, where: Callable[[DesignProblem], Any]):
    """``in_axes`` for ``eqx.filter_vmap`` that batch the leaves ``where(problem)`` of a problem (axis 0), nothing else.

    Example: ``batch_axes(problem, lambda p: p.objective.terms[1].weight)`` batches an
    objective weight, to sweep a trade-off with one compiled, vmapped step.
    """
    spec = jax.tree_util.tree_map(lambda _: False, problem)
    spec = eqx.tree_at(where, spec, replace_fn=lambda sub: jax.tree_util.tree_map(lambda _: True, sub))
    return jax.tree_util.tree_map(lambda b: 0 if b else None, spec)


@eqx.filter_jit
def _batched_step(problem, optimizer, theta, opt_state, scale, axes):
    fn = eqx.filter_vmap(lambda p, th, st: _step_impl(p, optimizer, th, st, scale), in_axes=(axes, 0, 0))
    return fn(problem, theta, opt_state)


def minimize_batch(problem: DesignProblem, optimizer: optax.GradientTransformation, *, axes=None, thetas=None,
                   batch_size: int | None = None, iterations: int = 100, progress: bool = True):
    """Run independent optimisations side by side as one ``vmap``-ed, jit-compiled step.

    Use it to sweep a trade-off (batch an objective weight with :func:`batch_axes`)
    or to start from several points (batch ``thetas``). There is no step rejection
    here: a penalised member gets a zero gradient (see :meth:`DesignProblem.loss`)
    and is reported, and each member's best point is kept.

    Args:
        problem: the problem; leaves named by ``axes`` carry a leading batch axis.
        optimizer: the ``optax.GradientTransformation`` shared by every member.
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
            raise ValueError("minimize_batch: parameters `thetas` and `batch_size` are both None. Fix: pass batched "
                             "initial variables `thetas` or a `batch_size`.")
        thetas = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch_size,) + jnp.shape(x)), problem.init())
    states = eqx.filter_vmap(optimizer.init)(thetas)
    B = jax.tree_util.tree_leaves(thetas)[0].shape[0]
    best_losses = np.full(B, np.inf)
    best = thetas
    losses, penal = [], []
    one = jnp.asarray(1.0)
    for _ in tqdm(range(iterations), disable=not progress, desc="optimize (batch)", unit="it"):
        nxt, states_n, value, info, _ = _batched_step(problem, optimizer, thetas, states, one, axes)
        v, pen = np.asarray(value), np.asarray(info.penalized)
        better = (v < best_losses) & ~pen
        best_losses = np.where(better, v, best_losses)
        mask = jnp.asarray(better)
        best = jax.tree_util.tree_map(lambda b, t: jnp.where(mask.reshape((-1,) + (1,) * (t.ndim - 1)), t, b),
                                      best, thetas)
        losses.append(v)
        penal.append(pen)
        thetas, states = nxt, states_n
    return best, best_losses, np.asarray(losses), np.asarray(penal)
