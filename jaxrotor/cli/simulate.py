"""``jaxrotor simulate [CONFIG] [--out DIR]``: fly a configured flight and write its report."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("simulate")
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default ./jaxrotor-out/<name>/).")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.option("--float32", is_flag=True, help="Run in float32 (default float64).")
@click.option("--t1", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="Stop the flight(s) at this time [s] instead of [flight] t1 or the reference's end.")
@click.option("--physics/--no-physics", default=None,
              help="Also fly the physics layer (MuJoCo) and print its column (Table IV for the paper's use case) "
                   "(default: on for the use case, off for a CONFIG).")
@click.option("--animate", is_flag=True,
              help="Also write flight.gif: the vehicle, its trajectory and the reference over time.")
@click.option("--fps", type=click.FloatRange(min=1.0, max=100.0), default=25.0, show_default=True,
              help="Frames per second of --animate.")
@click.option("--strict", is_flag=True,
              help="Exit with status 3, before flying, when the closed loop linearised about hover is unstable.")
@click.option("--allow-failure", is_flag=True,
              help="Exit with status 0 even when a flight's verdict is raised (the verdict is still printed and "
                   "written).")
def simulate(config: str | None, out_dir: str | None, no_progress: bool, float32: bool, t1: float | None,
             physics: bool | None, animate: bool = False, fps: float = 25.0, strict: bool = False,
             allow_failure: bool = False) -> None:
    """Fly CONFIG (a TOML file, see configs/); without CONFIG, the paper's hexarotor use case on both layers.

    Without CONFIG the use case is also flown on the physics layer (MuJoCo):
    Table IV is printed with the paper's and jaxrotor's columns a and p, and
    metrics_physics.json and fig8_delta_omega.png are written
    (``jaxrotor validate CONFIG`` does the same for any configuration).

    Prints the metrics table (beside the paper's Table IV column for the paper's use case,
    the Table II hexarotor on the paper's maneuver; any other flight's table and figures
    are titled with its config and vehicle name) and writes the figures (fig6_trajectory_3d.png,
    fig7_errors.png, fig8_rotor_speeds.png), trajectory.npz and metrics.json; with --animate also
    flight.gif (the vehicle's arms, rotors and spin axes, its trace and the reference, at --fps).
    Before flying, prints the verdict of the closed loop linearised about hover
    (jaxrotor.analysis.closed_loop_stability) and warns when it is unstable.

    Each flight ends with a verdict (jaxrotor.verdict): ok, or the reasons among
    diverged, lost_tracking, saturated, unstable, infeasible, printed as the last
    lines and written as "verdict" in metrics.json (thresholds: the [flight] keys
    max_saturation, max_position_error, position_error_fraction, max_attitude_error,
    settle_time, error_growth, growth_windows).

    \b
    Exit status:
      0  every flight's verdict is ok (or --allow-failure)
      1  a verdict is raised (a diverged flight's table column reads DIVERGED)
      2  configuration error (nothing flown)
      3  --strict and the closed loop linearised about hover is unstable (nothing flown)
    """
    from ._setup import setup_jax

    setup_jax(x64=not float32)
    from ..io import config as cfg
    from ..workflows import usecase

    try:
        conf = usecase.paper_reproduction_spec() if config is None else cfg.load(config)
        if t1 is not None:
            conf = conf.with_t1(t1)
    except (cfg.ConfigError, ValueError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    from .analyze import preflight_stability

    ok, reports = preflight_stability(conf, click.echo, strict)
    if not ok:
        click.echo("error: the closed loop is unstable about hover (--strict): not flying.", err=True)
        sys.exit(3)
    physics = config is None if physics is None else physics
    metrics = usecase.run(conf, out_dir, progress=not no_progress, echo=click.echo, physics=physics,
                          stability=reports)
    if animate:
        from ..io.animation import animate_trajectory_file
        from ..workflows.paper import output_title

        out = Path(out_dir) if out_dir is not None else Path("jaxrotor-out") / conf.name
        gif = animate_trajectory_file(out / "trajectory.npz", conf.platform, out / "flight.gif", fps=fps,
                                      title=output_title(conf))
        click.echo(f"wrote {gif}")
    flights = [metrics] + [metrics[k] for k in ("compare", "physics") if metrics.get(k)]
    if any(m["diverged"] for m in flights):
        click.echo("error: a flight diverged; its metrics are not meaningful.", err=True)
    failed = [m["name"] for m in flights if m.get("verdict", "ok") != "ok"]
    if failed and not allow_failure:
        click.echo(f"error: the verdict of {', '.join(failed)} is raised (pass --allow-failure to exit 0).", err=True)
        sys.exit(1)


COMMANDS = [simulate]
