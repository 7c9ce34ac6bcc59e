"""Reports of an optimisation run: ``result.json`` (flight metrics of :mod:`jaxrotor.metrics`), ``loss.png``,
``params.png``.

:func:`write_report` writes what every run has, plus what the problem itself reports
(:meth:`jaxrotor.optimize.AbstractProblem.report`: e.g. the held-out and physics-layer
metrics of a robust tuning, given :func:`jaxrotor.workflows.robust.physics_metrics`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import equinox as eqx
import numpy as np

from ..loop import fly
from .. import metrics as _metrics
from .._util import to_jsonable
from ..io.plotting import save_figure
from ..optimize.loop import OptimizeResult
from ..optimize.problem import AbstractProblem, Design

__all__ = ["flight_metrics", "write_report", "summary", "plot_history"]


def _physics_metrics(*args, **kwargs) -> dict[str, Any]:
    """:func:`jaxrotor.workflows.robust.physics_metrics`, imported when a problem asks for it (MuJoCo)."""
    from .robust import physics_metrics

    return physics_metrics(*args, **kwargs)


@eqx.filter_jit
def _metrics_of(design: Design) -> _metrics.FlightMetrics:
    traj = fly(design.platform, design.controller, design.flight)
    return _metrics.flight_metrics(traj, design.platform)


def flight_metrics(problem: AbstractProblem, design: Design) -> dict[str, Any]:
    """Every metric of ``design`` flown once along ``design.flight`` (JSON-ready).

    ``jaxrotor.metrics.flight_metrics(fly(...), design.platform).to_dict()``: the same
    keys as every other report (``rmse_position`` is ``sqrt(mean_t |e_p|^2)`` [m],
    ``*_xyz`` per axis, ``effort_ratio``, ``power_ratio``, ``energy`` [J],
    ``saturation_margin``, ``diverged``, ...; :class:`jaxrotor.metrics.FlightMetrics`).
    One compiled function per flight structure.

    Raises:
        ValueError: if ``design.flight`` is ``None`` (a design-only problem has no flight).
    """
    if design.flight is None:
        raise ValueError("flight_metrics: parameter `design.flight` is None, so there is no flight to measure. "
                         "Fix: give the Design a jaxrotor.flight.Flight.")
    design.flight.check(design.platform, design.controller)
    return _metrics_of(design).to_dict()


def write_report(result: OptimizeResult, problem: AbstractProblem, out_dir: str | Path, *, metrics: bool = True,
                 physics: bool = True, extra: Mapping[str, Any] | None = None,
                 echo: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Write ``result.json``, ``loss.png`` and ``params.png`` into ``out_dir``.

    ``result.json`` holds ``initial_loss``, ``final_loss`` (best accepted), ``last_loss``,
    ``iterations``, ``stop_reason``, ``resume_mode``, ``resumed_from``, ``objective``,
    ``parameters``, ``initial_params`` and ``final_params`` (``{name: value}`` in physical
    units), ``initial_terms`` / ``final_terms`` (objective term measures), and, with
    ``metrics=True`` and a flight, ``initial_metrics`` / ``final_metrics`` from
    :func:`flight_metrics` (the keys of :meth:`jaxrotor.metrics.FlightMetrics.to_dict`)
    and ``rmse_reduction`` (initial over final ``rmse_position``), then the keys of
    ``problem.report(result)`` (:meth:`~jaxrotor.optimize.AbstractProblem.report`; a robust
    problem: ``robust``, ``heldout_metrics`` and, with ``physics``, ``physics_metrics``) and ``extra``.

    Args:
        result: the run (:meth:`~jaxrotor.optimize.AbstractProblem.minimize`).
        problem: the problem it minimised.
        out_dir: the folder written.
        metrics: fly the start and the best design once more for ``initial_metrics`` / ``final_metrics``.
        physics: give the problem's report the physics-layer measure
            (:func:`jaxrotor.workflows.robust.physics_metrics`).
        extra: more keys for ``result.json``.
        echo: prints :func:`summary` when given.

    Returns:
        the ``result.json`` content.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p = problem.parameters
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
        "initial_params": dict(zip(result.names, p.flatten(result.initial_design).tolist())),
        "final_params": dict(zip(result.names, p.flatten(result.design).tolist())),
        "initial_terms": {t: rows[0].get(f"term:{t}") for t in result.term_names} if rows else {},
        "final_terms": {t: best_row.get(f"term:{t}") for t in result.term_names},
    }
    if metrics and problem.design.flight is not None:
        report["initial_metrics"] = flight_metrics(problem, result.initial_design)
        report["final_metrics"] = flight_metrics(problem, result.design)
        r0, r1 = report["initial_metrics"]["rmse_position"], report["final_metrics"]["rmse_position"]
        report["rmse_reduction"] = r0 / r1 if r1 > 0 else math.inf
    report.update(problem.report(result, physics=_physics_metrics if physics else None))
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
