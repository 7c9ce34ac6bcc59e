"""The optimisation loop: optax steps with rejection, early stopping, history and exact resume."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import equinox as eqx
import jax.numpy as jnp
import optax

from . import history as hist
from .step import DEFAULT_STEPPER, Stepper

if TYPE_CHECKING:  # annotations only: the problems call this loop (jaxrotor.optimize.problem imports it)
    from .problem import Design, DesignProblem

__all__ = ["MinimizeOptions", "OptimizeResult", "minimize"]


@dataclasses.dataclass(frozen=True)
class MinimizeOptions:
    """Stopping and step-control settings of :func:`minimize`.

    Attributes:
        iterations: total number of evaluations (a resumed run counts the earlier ones), ``>= 1``.
        patience: stop after this many iterations without the best loss improving by more than
            ``min_delta * max(|best|, 1e-12)`` (``None``: never).
        min_delta: relative improvement that resets the patience counter (``>= 0``).
        target: stop once the best loss is ``<= target`` (``None``: never).
        max_increase: reject a point whose loss exceeds the last accepted loss ``L_a`` by more than
            ``(max_increase - 1) |L_a|`` (``> 1``; ``None``: only penalised points are rejected).
        reject_decay: step-scale factor after a rejection, in ``(0, 1)``.
        recover: step-scale factor after an acceptance (capped at 1), ``>= 1``.
        min_scale: stop when the step scale falls below this, in ``(0, 1]``.
    """

    iterations: int = 100
    patience: int | None = None
    min_delta: float = 1e-4
    target: float | None = None
    max_increase: float | None = None
    reject_decay: float = 0.5
    recover: float = 1.25
    min_scale: float = 1e-3

    def __post_init__(self):
        def bad(name, why, fix):
            raise ValueError(f"MinimizeOptions parameter `{name}` = {getattr(self, name)!r} is invalid: {why}. "
                             f"Fix: {fix}.")

        if not (isinstance(self.iterations, int) and self.iterations >= 1):
            bad("iterations", "it must be an integer >= 1", "pass e.g. iterations=100")
        if self.patience is not None and not (isinstance(self.patience, int) and self.patience >= 1):
            bad("patience", "it must be an integer >= 1 or None", "pass e.g. patience=50 or None")
        if not (math.isfinite(self.min_delta) and self.min_delta >= 0):
            bad("min_delta", "it must be a finite number >= 0", "pass e.g. min_delta=1e-4")
        if self.target is not None and math.isnan(self.target):
            bad("target", "it is NaN", "pass a loss value or None")
        if self.max_increase is not None and not self.max_increase > 1:
            bad("max_increase", "it must be > 1 (a factor on the last accepted loss)", "pass e.g. 1.5 or None")
        if not 0 < self.reject_decay < 1:
            bad("reject_decay", "it must lie in (0, 1)", "pass e.g. 0.5")
        if not (math.isfinite(self.recover) and self.recover >= 1):
            bad("recover", "it must be a finite number >= 1", "pass e.g. 1.25")
        if not 0 < self.min_scale <= 1:
            bad("min_scale", "it must lie in (0, 1]", "pass e.g. 1e-3")


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


def _columns(problem: DesignProblem, names: list[str], term_names: list[str]) -> list[str]:
    return (["iteration", "loss", "accepted", "penalized", "scale", "best_loss", "grad_norm", "rmse_position",
             "time_s"] + [f"term:{t}" for t in term_names] + names)


def _resume(problem, optimizer, out: Path, columns, names, ckpt):
    """``(ckpt, rows, mode)`` restored from ``out`` (exact from the checkpoint, else from the history)."""
    hist_path, ckpt_path = out / hist.HISTORY_FILE, out / hist.CHECKPOINT_FILE
    if hist.read_header(hist_path) != columns:
        raise ValueError(f"{hist_path} was written by a different problem (its columns differ). Fix: resume "
                         "with the same configuration, start over (resume=False, CLI --fresh) or use another "
                         "output folder.")
    rows = hist.read_history(hist_path)
    loaded = hist.load_checkpoint(ckpt_path, ckpt) if ckpt_path.is_file() else None
    if loaded is not None and int(loaded.iteration) <= len(rows):
        return loaded, rows[: int(loaded.iteration)], "checkpoint"
    if not rows:
        return ckpt, rows, "fresh"
    params = problem.parameters
    accepted = [r for r in rows if r.get("accepted", 1.0) == 1.0]
    last = (accepted or rows[:1])[-1]
    best = min(accepted, key=lambda r: r["loss"], default=last)
    theta = params.to_theta(params.unflatten([last[n] for n in names], problem.design))
    best_theta = params.to_theta(params.unflatten([best[n] for n in names], problem.design))
    ckpt = eqx.tree_at(lambda c: (c.iteration, c.theta, c.opt_state, c.best_value, c.best_theta, c.scale), ckpt,
                       (jnp.asarray(len(rows), jnp.int32), theta, optimizer.init(theta), jnp.asarray(best["loss"]),
                        best_theta, jnp.asarray(1.0)))
    return ckpt, rows, "history"


def minimize(
    problem: DesignProblem,
    optimizer: optax.GradientTransformation,
    options: MinimizeOptions = MinimizeOptions(),
    *,
    out_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool = True,
    stepper: Stepper | None = None,
    callback: Callable[[dict], None] | None = None,
) -> OptimizeResult:
    """Minimise ``problem.loss`` with an optax optimiser, e.g. ``minimize(problem, optax.adam(0.05))``.

    Each iteration evaluates the loss and gradient at the current point ``theta_k``
    (one compiled call, :func:`make_step`), proposes
    ``theta_{k+1} = project(theta_k + s * u_k)`` with ``(u_k, state) = optimizer.update(g_k, state, theta_k)``
    and step scale ``s``, and writes one row to ``history.csv``:
    ``iteration, loss, accepted, penalized, scale, best_loss, grad_norm`` (``optax.global_norm``),
    ``rmse_position, time_s``, the measure of every objective term, then every
    selected parameter (physical units, :meth:`Parameters.names`).

    Acceptance: ``theta_k`` is rejected if its evaluation was penalised (diverged or
    non-finite) or, with ``options.max_increase``, if its loss exceeds the last accepted loss
    ``L_a`` by more than ``(max_increase - 1) |L_a|``. A rejected point is discarded:
    the step is redone from the last accepted point and its gradient with
    ``s <- s * reject_decay`` (no new simulation). After an acceptance
    ``s <- min(1, s * recover)``.

    Early stopping (:class:`MinimizeOptions`): ``patience``, ``target``, or ``s < min_scale``.

    Resume (``resume=True`` and ``out_dir/history.csv`` exists): ``checkpoint.eqx``
    restores ``theta``, the optimiser state, the step scale, the anchor and the best
    point *exactly* (rows written after the checkpoint, at most one, are dropped and
    recomputed); without a usable checkpoint the optimiser state is re-initialised at
    the parameters of the last accepted row (Adam's moments restart).
    ``options.iterations`` counts the total, so a resumed run stops where an
    uninterrupted one would.

    Args:
        problem: the :class:`DesignProblem`.
        optimizer: any ``optax.GradientTransformation`` (reuse the object to reuse the compiled step).
        options: :class:`MinimizeOptions`.
        out_dir: folder for ``history.csv`` and ``checkpoint.eqx`` (``None``: nothing written).
        resume: continue the run in ``out_dir``.
        progress: show a tqdm progress bar.
        stepper: replaces the default compiled step (see :func:`make_step`).
        callback: ``callback(row)`` after every iteration with the row just written.

    Returns:
        an :class:`OptimizeResult` (the best accepted design).
    """
    from tqdm.auto import tqdm

    opts = options
    stepper = stepper or DEFAULT_STEPPER
    out = Path(out_dir) if out_dir is not None else None
    params = problem.parameters
    names = params.names(problem.design)
    term_names = problem.objective.measure_names()
    columns = _columns(problem, names, term_names)
    theta0 = problem.init()
    ckpt = hist.template(theta0, optimizer.init(theta0))
    mode, rows = "fresh", []
    history = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        if resume and (out / hist.HISTORY_FILE).is_file():
            ckpt, rows, mode = _resume(problem, optimizer, out, columns, names, ckpt)
        history = hist.History(out / hist.HISTORY_FILE, columns, rows)
    resumed_from = k = int(ckpt.iteration)
    theta, opt_state = ckpt.theta, ckpt.opt_state
    scale = float(ckpt.scale) if mode != "fresh" else 1.0
    has_anchor = bool(ckpt.has_anchor)
    anchor = (ckpt.anchor_theta, ckpt.anchor_opt_state, ckpt.anchor_grad, float(ckpt.anchor_value))
    best_value = float(ckpt.best_value) if k > 0 else math.inf
    best_theta = ckpt.best_theta
    stale = int(ckpt.stale)
    stop = "iterations"
    last_value = rows[-1]["loss"] if rows else math.nan
    t_start = time.perf_counter() - (rows[-1]["time_s"] if rows else 0.0)  # a resumed run keeps counting wall time
    bar = tqdm(total=opts.iterations, initial=min(k, opts.iterations), disable=not progress, desc="optimize",
               unit="it", dynamic_ncols=True)

    def record(row):
        rows.append(row)
        if history is not None:
            history.append(row)

    try:
        while k < opts.iterations:
            theta_next, opt_next, value, info, grad = stepper.step(problem, optimizer, theta, opt_state,
                                                                   jnp.asarray(scale))
            value, penalized = float(value), bool(info.penalized)
            rejected = penalized or (has_anchor and opts.max_increase is not None
                                     and value > anchor[3] + (opts.max_increase - 1.0) * abs(anchor[3]))
            row = {"iteration": k, "loss": value, "accepted": 0.0 if rejected else 1.0, "penalized": float(penalized),
                   "scale": scale, "grad_norm": float(optax.tree.norm(grad)),
                   "rmse_position": float(info.rmse_position), "time_s": time.perf_counter() - t_start}
            row.update({f"term:{t}": float(info.terms[t]) for t in term_names})
            row.update(zip(names, params.flatten(problem.to_design(theta))))
            if rejected and not has_anchor:
                row["best_loss"] = best_value
                record(row)
                k += 1
                stop = "infeasible_start"
                break
            if not rejected:
                improved = (not math.isfinite(best_value)
                            or value < best_value - opts.min_delta * max(abs(best_value), 1e-12))
                if value < best_value:
                    best_value, best_theta = value, theta
                stale = 0 if improved else stale + 1
                anchor, has_anchor = (theta, opt_state, grad, value), True
                theta, opt_state = theta_next, opt_next
                scale = min(1.0, scale * opts.recover)
            else:
                stale += 1
                scale *= opts.reject_decay
                theta, opt_state = stepper.update(problem, optimizer, anchor[0], anchor[1], anchor[2],
                                                  jnp.asarray(scale))
            row["best_loss"] = best_value
            record(row)
            last_value = value
            k += 1
            if out is not None:
                hist.save_checkpoint(out / hist.CHECKPOINT_FILE, hist.Checkpoint(
                    iteration=jnp.asarray(k, jnp.int32), theta=theta, opt_state=opt_state,
                    scale=jnp.asarray(scale), has_anchor=jnp.asarray(has_anchor), anchor_theta=anchor[0],
                    anchor_opt_state=anchor[1], anchor_grad=anchor[2], anchor_value=jnp.asarray(anchor[3]),
                    best_value=jnp.asarray(best_value), best_theta=best_theta, stale=jnp.asarray(stale, jnp.int32)))
            bar.update(1)
            bar.set_postfix(loss=f"{value:.4g}", best=f"{best_value:.4g}", scale=f"{scale:.2g}",
                            rmse=f"{row['rmse_position']:.3g}", refresh=False)
            if callback is not None:
                callback(row)
            if opts.target is not None and best_value <= opts.target:
                stop = "target"
                break
            if opts.patience is not None and stale >= opts.patience:
                stop = "patience"
                break
            if scale < opts.min_scale:
                stop = "step_size"
                break
    except KeyboardInterrupt:
        stop = "interrupted"
    finally:
        bar.close()
    if not math.isfinite(best_value):  # nothing accepted
        best_theta = theta0
        best_value = rows[0]["loss"] if rows else math.nan
    return OptimizeResult(
        design=problem.to_design(best_theta), theta=best_theta, initial_design=problem.design,
        initial_loss=rows[0]["loss"] if rows else math.nan, final_loss=best_value, last_loss=last_value,
        iterations=k, stop_reason=stop, history=rows, names=names, term_names=term_names, resumed_from=resumed_from,
        resume_mode=mode, out_dir=out)
