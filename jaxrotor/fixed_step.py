"""Fixed-step machinery: the step grid, where save times fall on it, and one explicit Runge-Kutta step.

* :func:`fixed_step_grid`: steps of ``dt`` with every jump time bracketed by its two
  floating-point neighbours (no step straddles a discontinuity of the input);
* :class:`SaveSchedule`: the steps between two save times, padded into the static
  arrays two nested ``lax.scan`` loops run over;
* one step of a diffrax solver on a flat state vector: an explicit Runge-Kutta method
  from its Butcher tableau (stages written out, or in a ``lax.scan``), any other solver
  through its own ``step``.

:func:`jaxrotor.integrate.integrate_fixed_step` and :func:`jaxrotor.integrate.fixed_steps`
drive these; ``fixed_step_grid`` and ``SaveSchedule`` are also importable from
:mod:`jaxrotor.integrate`.
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

__all__ = ["SaveSchedule", "fixed_step_grid"]


def fixed_step_grid(t0: float, t1: float, dt: float, jump_ts=(), dtype=None) -> np.ndarray:
    """Step grid ``t0, t0 + dt, ..., t1`` that brackets every jump time in ``(t0, t1)``.

    Each jump time ``t_j`` is replaced by the two floating-point neighbours
    ``prevbefore(t_j)`` and ``nextafter(t_j)``: the step that ends at the jump sees
    only the left limit of the vector field and the next one only the right limit,
    exactly as diffrax's adaptive controllers treat ``jump_ts``. The step across
    the jump itself has length of a few ulp of ``dtype`` (default: JAX's float type,
    float32 unless x64 is enabled).
    """
    dtype = np.dtype(jnp.result_type(float)) if dtype is None else np.dtype(dtype)
    n = max(1, int(np.ceil((t1 - t0) / dt - 1e-9)))
    grid = np.linspace(t0, t1, n + 1).astype(dtype)
    jumps = np.asarray([t for t in jump_ts if t0 < t < t1], dtype=dtype)
    if jumps.size:
        near = np.min(np.abs(grid[:, None] - jumps[None, :]), axis=1) < dt * 1e-3
        bracket = np.concatenate([np.nextafter(jumps, -np.inf), np.nextafter(jumps, np.inf)])
        grid = np.union1d(grid[~near], bracket)
    return grid


def _flat(vector_field, y0):
    """``(flat0, unravel, flat_field)``: ``y0`` as one flat vector and the vector field on such vectors."""
    flat0, unravel = ravel_pytree(y0)

    def flat_field(t, y, args):
        return ravel_pytree(vector_field(t, unravel(y), args))[0]

    return flat0, unravel, flat_field


class SaveSchedule(eqx.Module):
    """Where the save times fall on a fixed step grid (numpy, built once at trace time).

    Save ``j`` lies in step ``k_j`` (``grid[k_j] < ts_j <= grid[k_j + 1]``; ``k_j = -1``
    for ``ts_j <= grid[0]``, the initial state). Between save ``j - 1`` and save ``j``
    the loop takes ``count_j = k_j - k_{j-1}`` steps, padded to ``length = max_j count_j``
    with inactive slots.

    Attributes:
        starts: ``(T - n_initial, length)`` step start times [s] (inactive slots repeat a time).
        ends: ``(T - n_initial, length)`` step end times [s] (inactive slots repeat a time).
        active: ``(T - n_initial, length)`` bool, whether the slot is a real step.
        exact: ``(T - n_initial,)`` bool, ``ts_j`` is the end of its step: the state is saved as is;
            otherwise it is the solver's dense interpolant of step ``k_j`` evaluated at ``ts_j``.
        ts: ``(T,)`` save times in the time type.
        n_initial: how many leading save times equal ``t0`` (saved as the initial state, outside the loop).
        steps: number of steps taken (up to the last save time).
    """

    starts: np.ndarray
    ends: np.ndarray
    active: np.ndarray
    exact: np.ndarray
    ts: np.ndarray
    n_initial: int = eqx.field(static=True)
    steps: int = eqx.field(static=True)

    @classmethod
    def build(cls, grid: np.ndarray, ts: np.ndarray) -> SaveSchedule:
        """Schedule of the save times ``ts`` (ascending, within ``[grid[0], grid[-1]]``) on ``grid``."""
        grid = np.asarray(grid)
        ts = np.asarray(ts).astype(grid.dtype)
        if np.any(np.diff(ts) < 0) or ts[0] < grid[0] or ts[-1] > grid[-1]:
            raise ValueError(f"integrate: save times `ts` must be ascending within [{grid[0]}, {grid[-1]}]. "
                             "Fix: pass sorted times inside the time span.")
        k = np.searchsorted(grid, ts, side="left") - 1  # grid[k] < ts <= grid[k + 1]
        n_initial = int(np.sum(k < 0))  # saves at t0 are the initial state: not part of the loop
        all_ts, ts, k = ts, ts[k >= 0], k[k >= 0]
        if not ts.size:
            empty = np.zeros((0, 1), grid.dtype)
            return cls(starts=empty, ends=empty, active=np.zeros((0, 1), bool), exact=np.zeros(0, bool), ts=all_ts,
                       n_initial=n_initial, steps=0)
        counts = np.diff(np.concatenate([[-1], k]))
        length = max(1, int(counts.max()))
        first = np.concatenate([[0], k[:-1] + 1])  # first step index of each save interval
        idx = first[:, None] + np.arange(length)[None, :]
        active = np.arange(length)[None, :] < counts[:, None]
        idx_c = np.clip(idx, 0, len(grid) - 2)
        exact = grid[k + 1] == ts
        return cls(starts=grid[idx_c], ends=grid[idx_c + 1], active=active, exact=exact, ts=all_ts,
                   n_initial=n_initial, steps=int(k.max()) + 1)


def _explicit_tableau(solver) -> diffrax.ButcherTableau | None:
    """The Butcher tableau of an explicit Runge-Kutta diffrax solver (``None`` for any other solver)."""
    tab = getattr(solver, "tableau", None)
    if not isinstance(solver, diffrax.AbstractERK) or not isinstance(tab, diffrax.ButcherTableau):
        return None
    if (tab.a_diagonal is not None and np.any(tab.a_diagonal != 0)) or tab.c1 != 0:
        return None
    return tab


#: ``Integrator(unroll="auto")`` writes out the stages of explicit methods of at most this many stages.
UNROLL_MAX_STAGES = 4


def _erk_step(tab: diffrax.ButcherTableau, f, t0, t1, y0, f0):
    """One step of the explicit method ``tab`` with its stages written out (what ``AbstractERK.step`` computes).

    ``k_i = h f(t0 + c_i h, y0 + sum_j a_ij k_j)`` (``t1`` itself where ``c_i = 1``),
    ``y1 = y0 + sum_i b_i k_i`` (the last stage's argument when the method is
    solution-as-last-stage). The stages are straight-line code (XLA fuses across them;
    the vector field is traced once per stage). ``f0 = f(t0, y0)`` is reused when the
    method is first-same-as-last (FSAL), and ``f(t1, y1)`` is returned for the next step.

    Returns:
        ``(y1, dense_info, f1)``: ``dense_info = {"y0", "y1", "k"}`` as diffrax's
        interpolation classes take it, ``f1`` the FSAL value (``None`` otherwise).
    """
    h = t1 - t0
    fs = [f0 if tab.fsal else f(t0, y0)]
    ks = [h * fs[0]]
    yi = y0
    for ci, row in zip(tab.c, tab.a_lower):
        yi = y0
        for a, k in zip(row, ks):
            if a != 0:
                yi = yi + float(a) * k
        fs.append(f(t1 if ci == 1 else t0 + float(ci) * h, yi))
        ks.append(h * fs[-1])
    if tab.ssal:
        y1 = yi
    else:
        y1 = y0
        for b, k in zip(tab.b_sol, ks):
            if b != 0:
                y1 = y1 + float(b) * k
    return y1, {"y0": y0, "y1": y1, "k": jnp.stack(ks)}, (fs[-1] if tab.fsal else None)


def _erk_step_scan(tab: diffrax.ButcherTableau, f, t0, t1, y0, f0, per_iteration: int = 1):
    """One step of the explicit method ``tab`` (what ``AbstractERK.step`` computes, in a plain ``lax.scan``).

    ``k_i = h f(t0 + c_i h, y0 + sum_j a_ij k_j)`` (``t1`` itself where ``c_i = 1``),
    ``y1 = y0 + sum_i b_i k_i`` (the last stage's argument when the method is
    solution-as-last-stage). The stages are one ``lax.scan`` over the rows of the
    tableau, so the vector field is traced once (``per_iteration`` stages per iteration of the
    scan: ``lax.scan``'s ``unroll``, the field then compiled that many times). ``f0 = f(t0, y0)``
    is reused when the method is first-same-as-last (FSAL), and ``f(t1, y1)`` is returned for the
    next step.

    Returns:
        ``(y1, dense_info, f1)``: ``dense_info = {"y0", "y1", "k"}`` as diffrax's
        interpolation classes take it, ``f1`` the FSAL value (``None`` otherwise).
    """
    s = len(tab.b_sol)
    a = np.zeros((s, s))
    for i, row in enumerate(tab.a_lower):
        a[i + 1, : len(row)] = row
    c = np.concatenate([[0.0], tab.c])
    h = t1 - t0
    dtype = y0.dtype
    first = 1 if tab.fsal else 0
    ks = jnp.zeros((s,) + y0.shape, dtype)
    if tab.fsal:
        ks = ks.at[0].set(h * f0)

    def stage(carry, x):
        ks, _, _ = carry
        i, a_i, c_i = x
        yi = y0 + jnp.tensordot(a_i.astype(dtype), ks, axes=1)
        fi = f(jnp.where(c_i == 1, t1, t0 + c_i.astype(h.dtype) * h), yi)
        return (ks.at[i].set(h * fi), yi, fi), None

    (ks, y_last, f_last), _ = jax.lax.scan(stage, (ks, y0, jnp.zeros_like(y0)),
                                           (jnp.arange(first, s), jnp.asarray(a[first:]), jnp.asarray(c[first:])),
                                           unroll=per_iteration)
    y1 = y_last if tab.ssal else y0 + jnp.tensordot(jnp.asarray(tab.b_sol, dtype), ks, axes=1)
    return y1, {"y0": y0, "y1": y1, "k": ks}, (f_last if tab.fsal else None)


def _stepper(solver, flat_field, args, unroll: bool | str | int, t_a, t_b, y0, wrap_field=lambda field: field,
             first_value: bool = True):
    """``(state0, one_step)`` of ``solver`` on the flat vector field ``flat_field(t, y, args)``.

    ``one_step(y, state, t_a, t_b) -> (y1, dense_info, state1, result)``: an explicit
    Runge-Kutta solver (:func:`_explicit_tableau`) is stepped from its tableau, its stages
    written out (:func:`_erk_step`, ``unroll``) or in a ``lax.scan`` (:func:`_erk_step_scan`),
    ``state`` the first-same-as-last value ``f(t, y)`` (``None`` for other tableaus); any other
    solver through its own ``step`` from ``solver.init`` over the first step ``(t_a, t_b)``.
    ``wrap_field`` wraps the field every stage of ``one_step`` evaluates (the checkpoint's ``wrap_field``).
    ``first_value=False`` (static) leaves the first-same-as-last value of ``state0`` zero instead of evaluating
    ``f(t_a, y0)``: for a caller whose first step has zero length, which computes it (its stages all evaluate
    ``f(t_a, y0)`` and return it as the step's last-stage value).
    """
    ok = diffrax.RESULTS.successful
    tableau = _explicit_tableau(solver)
    if tableau is not None:
        state0 = None
        if tableau.fsal:  # static
            state0 = flat_field(t_a, y0, args) if first_value else jnp.zeros_like(y0)

        if unroll == "auto":  # written out for short methods (the measured trade, Integrator.unroll)
            unroll = len(tableau.b_sol) <= UNROLL_MAX_STAGES

        flag = isinstance(unroll, (bool, np.bool_))
        per_iteration = 1 if flag else int(unroll)  # False: one stage per iteration; an int k: k of them

        def one_step(y, state, ta, tb):
            field = wrap_field(lambda t, x: flat_field(t, x, args))
            if flag and unroll:
                y1, dense, f1 = _erk_step(tableau, field, ta, tb, y, state)
            else:
                y1, dense, f1 = _erk_step_scan(tableau, field, ta, tb, y, state, per_iteration)
            return y1, dense, f1, ok

        return state0, one_step
    term = diffrax.ODETerm(wrap_field(flat_field))

    def one_step(y, state, ta, tb):
        y1, _, dense, state1, res = solver.step(term, ta, tb, y, args, state, False)
        return y1, dense, state1, res

    return solver.init(term, t_a, t_b, y0, args), one_step
