"""``jaxrotor tune CONFIG`` and ``jaxrotor optimize CONFIG``: gradient-based tuning and design.

Both read a TOML file (the flight tables of ``jaxrotor simulate`` plus
``[parameters]``, ``[objective]`` and ``[optimize]``; :mod:`jaxrotor.io.optimize_config`,
``docs/optimization.md``), run :func:`jaxrotor.optimize.minimize` with a progress bar, and write into the
output folder ``history.csv`` (one row per iteration, appended as it goes),
``checkpoint.eqx`` (to resume), ``result.json``, ``loss.png`` and ``params.png``
(:func:`jaxrotor.workflows.report.write_report`, with the problem's own report:
:meth:`jaxrotor.optimize.AbstractProblem.report`).
``tune`` defaults the parameters to every controller gain (log-parameterised) and
the objective to the tracking RMSE; ``optimize`` needs both spelled out.
JAX is imported inside the commands so ``jaxrotor --help`` stays fast.
"""

from __future__ import annotations

import sys

import click


def _options(fn):
    fn = click.option("--float32", is_flag=True, help="Run in float32 (default float64).")(fn)
    fn = click.option("--no-progress", is_flag=True, help="Hide the progress bar.")(fn)
    fn = click.option("--fresh", is_flag=True,
                      help="Start over even if DIR holds a previous run (default: resume it).")(fn)
    fn = click.option("--iterations", type=click.IntRange(min=1), default=None,
                      help="Override [optimize] iterations (total, counting resumed ones).")(fn)
    fn = click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
                      help="Output folder (default ./jaxrotor-out/<name>/).")(fn)
    fn = click.argument("config", type=click.Path(dir_okay=False))(fn)
    return fn


def _run(kind: str, config: str, out_dir, iterations, fresh: bool, no_progress: bool, float32: bool) -> None:
    import dataclasses
    from pathlib import Path

    from ._setup import setup_jax

    setup_jax(x64=not float32)
    from ..io import optimize_config
    from ..io.toml import ConfigError
    from ..workflows.report import summary, write_report

    try:
        conf = optimize_config.load(config, kind=kind)
    except ConfigError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    out = Path(out_dir) if out_dir is not None else Path("jaxrotor-out") / conf.name
    options = conf.options if iterations is None else dataclasses.replace(conf.options, iterations=iterations)
    names = conf.problem.parameters.names(conf.problem.design)
    held = conf.problem.parameters.held
    if held:
        click.echo(f"note: {', '.join(held)} held at 0, not tuned: a log transform (x = exp(theta)) cannot move a "
                   "zero gain. To tune them, start them from positive values in [controller] or give them "
                   "transform = \"box\" with lower = 0 in [parameters].")
    click.echo(f"{kind} {conf.name}: {len(names)} parameters ({', '.join(conf.problem.parameters.paths)}), "
               f"objective {conf.problem.objective.name}, {conf.optimizer.name} lr={conf.optimizer.learning_rate}, "
               f"{options.iterations} iterations -> {out}")
    click.echo("compiling the step (the first iteration includes compilation) ...")
    try:  # AbstractProblem.minimize: a robust problem redraws its batch as it goes
        result = conf.problem.minimize(conf.optimizer.build(), options, out_dir=out, resume=not fresh,
                                       progress=not no_progress)
    except ValueError as err:  # e.g. DIR holds the history of a different problem
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    if result.resume_mode != "fresh":
        click.echo(f"resumed at iteration {result.resumed_from} from the {result.resume_mode}")
    report = write_report(result, conf.problem, out, extra={"config": conf.source, "kind": kind})
    click.echo(summary(report))
    for key, where in (("heldout_metrics", "held-out batch"), ("physics_metrics", "physics layer (MuJoCo)")):
        if key in report:  # a robust problem: mean and CVaR of the position RMSE, start -> tuned
            a, b = report[key]["initial"], report[key]["final"]
            click.echo(f"{where}, {b['flights']} flights: mean position RMSE {a['rmse_position'] * 1e3:.2f} -> "
                       f"{b['rmse_position'] * 1e3:.2f} mm, CVaR_{b['cvar_beta']:g} {a['rmse_position_cvar'] * 1e3:.2f}"
                       f" -> {b['rmse_position_cvar'] * 1e3:.2f} mm, diverged {a['diverged']} -> {b['diverged']}")
    click.echo(f"outputs written to {out}")
    if result.stop_reason == "infeasible_start":
        click.echo("error: the initial design is infeasible (its flight diverged or its loss is not finite).", err=True)
        sys.exit(1)


@click.command("tune")
@_options
def tune(config, out_dir, iterations, fresh, no_progress, float32) -> None:
    """Tune controller gains for the flight in CONFIG (TOML, see configs/tune_gains.toml).

    Without [parameters], every gain of [controller] is optimised in log
    coordinates; without [objective], the tracking RMSE is minimised. Writes
    history.csv, checkpoint.eqx, result.json, loss.png and params.png into DIR; a
    second call with the same DIR resumes (use --fresh to start over).
    """
    _run("tune", config, out_dir, iterations, fresh, no_progress, float32)


@click.command("optimize")
@_options
def optimize(config, out_dir, iterations, fresh, no_progress, float32) -> None:
    """Optimise the design parameters named in CONFIG (TOML, see configs/optimize_tilt.toml).

    CONFIG must have [parameters] (dotted paths such as "platform.alpha", each with
    a transform and bounds) and [objective] (weighted terms). A design-only problem
    (every term a design term, e.g. volume_above_hover; see
    configs/optimize_polytope.toml) has no [reference] and no flight tables: nothing
    is flown. Writes history.csv,
    checkpoint.eqx, result.json, loss.png and params.png into DIR; a second call
    with the same DIR resumes (use --fresh to start over).
    """
    _run("optimize", config, out_dir, iterations, fresh, no_progress, float32)


COMMANDS = [tune, optimize]
