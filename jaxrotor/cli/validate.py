"""``jaxrotor validate [CONFIG] [--out DIR] [--animate]``: fly a configuration on both layers and compare them."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("validate")
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default ./jaxrotor-out/<name>-validation/).")
@click.option("--t1", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="Stop the flight at this time [s] instead of [flight] t1 or the reference's end.")
@click.option("--control-period", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="Controller period on the physics layer [s] (a multiple of the 1 ms physics step) when the flight "
                   "sets no [control] rate; default one tick per physics step.")
@click.option("--no-figures", is_flag=True, help="Skip the figures.")
@click.option("--animate", is_flag=True,
              help="Also write flight_physics.gif and flight.gif: the vehicle, its trajectory and the reference over "
                   "time on the physics and the analytic layer.")
@click.option("--fps", type=click.FloatRange(min=1.0, max=100.0), default=25.0, show_default=True,
              help="Frames per second of --animate.")
@click.option("--strict", is_flag=True,
              help="Exit with status 3, before flying, when the closed loop linearised about hover is unstable.")
@click.option("--allow-failure", is_flag=True,
              help="Exit with status 0 even when a layer's verdict is raised (the verdicts are still printed and "
                   "written).")
def validate(config: str | None, out_dir: str | None, t1: float | None, control_period: float | None,
             no_figures: bool, animate: bool = False, fps: float = 25.0, strict: bool = False,
             allow_failure: bool = False) -> None:
    """Fly CONFIG (default: the paper's use case) on the analytic and the physics (MuJoCo) layer.

    Prints jaxrotor's columns a, p and p - a (for the paper's use case, the Table II
    hexarotor on the paper's maneuver, as Table IV beside the paper's columns; for any
    other flight under its config and vehicle name, which the figures' titles carry too),
    says when the layers fly different masses or inertias ("mass/inertia differ between
    the layers", layer_mismatch in validation.json; the paper's J^a / J^p by design), and
    writes validation.json, fig6_trajectory_3d.png and fig7_errors.png (both layers
    overlaid) and fig8_delta_omega.png. With --animate also flight_physics.gif
    (the physics layer's trajectory_physics.npz) and flight.gif (the analytic
    layer's flight, saved as trajectory.npz), each with the reference path, at --fps.
    Before flying, prints the verdict of the closed loop linearised about hover (analytic
    layer) and warns when it is unstable. Each layer's flight ends with a verdict
    (jaxrotor.verdict: ok, or diverged, lost_tracking, saturated, unstable, infeasible),
    printed as the last lines and written as verdict_analytic and verdict_physics in
    validation.json.

    \b
    Exit status:
      0  both layers' verdicts are ok (or --allow-failure)
      1  a layer's verdict is raised (a diverged flight included)
      2  configuration error (nothing flown)
      3  --strict and the closed loop linearised about hover is unstable (nothing flown)
    """
    from ._setup import setup_jax

    setup_jax(x64=True)
    from ..io import config as cfg
    from ..workflows import usecase
    from ..workflows import validate as pv
    from ..workflows.compare import physics_settings

    try:
        conf = usecase.paper_reproduction_spec(with_comparison=False) if config is None else cfg.load(config)
        if t1 is not None:
            conf = conf.with_t1(t1)
        settings = physics_settings(conf.platform)
    except (cfg.ConfigError, ValueError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    from .analyze import preflight_stability

    ok, reports = preflight_stability(conf, click.echo, strict)
    if not ok:
        click.echo("error: the closed loop is unstable about hover (--strict): not flying.", err=True)
        sys.exit(3)
    result = pv.validate(conf, out_dir, settings=settings, echo=click.echo, figures=not no_figures,
                         save_analytic=animate,
                         physics_control_rate=None if control_period is None else 1.0 / control_period,
                         stability=reports.get(conf.name))
    if animate:
        from ..workflows.paper import output_title

        _animate_layers(conf, pv.output_dir(conf, out_dir), fps, output_title(conf))
    if result["diverged"]:
        click.echo("error: a flight diverged; its metrics are not meaningful.", err=True)
    failed = [layer for layer in ("analytic", "physics") if result[f"verdict_{layer}"] != "ok"]
    if failed and not allow_failure:
        click.echo(f"error: the verdict of the {' and the '.join(failed)} layer is raised (pass --allow-failure to "
                   "exit 0).", err=True)
        sys.exit(1)


def _animate_layers(conf, out: Path, fps: float, label: str) -> None:
    """Write ``out/flight_physics.gif`` from ``out/trajectory_physics.npz`` and ``out/flight.gif`` from the analytic
    flight the validation saved as ``out/trajectory.npz``, at ``fps`` [1/s], both with the reference path of
    ``conf.flight.reference``. A flight with no finite sample is reported, not animated."""
    from ..io.animation import animate_trajectory_file

    for npz, gif, layer in (("trajectory_physics.npz", "flight_physics.gif", "physics layer (MuJoCo)"),
                            ("trajectory.npz", "flight.gif", "analytic layer")):
        try:
            path = animate_trajectory_file(out / npz, conf.platform, out / gif, fps=fps,
                                           title=f"{label}: {layer}", reference=conf.flight.reference)
        except ValueError as err:
            click.echo(f"error: no animation of the {layer}: {err}", err=True)
            continue
        click.echo(f"wrote {path}")


COMMANDS = [validate]
