"""``jaxrotor report CONFIG``: one self-contained HTML design report (:mod:`jaxrotor.workflows.report_html`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("report")
@click.argument("config", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default ./jaxrotor-out/<name>-report/).")
@click.option("--physics/--no-physics", default=False, show_default=True,
              help="Also fly the physics layer (MuJoCo, as `jaxrotor validate`) and show both layers.")
@click.option("--no-flight", is_flag=True, help="Analyse only: do not fly the configuration.")
@click.option("--t1", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="Stop the flight(s) at this time [s] instead of [flight] t1 or the reference's end.")
@click.option("--allow-failure", is_flag=True,
              help="Exit with status 0 even when a flight's verdict is raised (the report shows it).")
def report(config: Path, out_dir: Path | None, physics: bool, no_flight: bool, t1: float | None,
           allow_failure: bool) -> None:
    """Write one self-contained report.html of CONFIG: the vehicle in 3D, the force polytope and its hover
    section, the mass breakdown, the allocation properties, the closed-loop modes and the hover envelope,
    and the flight (trajectory, errors, rotor speeds; both layers with --physics).

    The page needs no network (plotly.js is embedded). Its numbers are those of `jaxrotor analyze CONFIG
    --json` (written beside it as analysis.json) and of `jaxrotor simulate CONFIG` (metrics.json,
    trajectory.npz and the PNG figures, also written beside it).

    \b
    Exit status:
      0  the report is written and every flight's verdict is ok (or --allow-failure, or --no-flight)
      1  the report is written but a flight's verdict is raised
      2  configuration error (nothing written)
    """
    from ._setup import setup_jax

    setup_jax(x64=True)
    from ..io.toml import ConfigError
    from ..workflows.report_html import build_report

    try:
        result = build_report(config, out_dir, flight=not no_flight, physics=physics, t1=t1, echo=click.echo)
    except (ConfigError, ValueError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    size = result.path.stat().st_size
    click.echo(f"wrote {result.path} ({size / 1e6:.2f} MB, built in {result.build_time_s:.1f} s)")
    failed = result.failed
    if failed and not allow_failure:
        click.echo(f"error: the verdict of {', '.join(failed)} is raised (pass --allow-failure to exit 0).", err=True)
        sys.exit(1)


COMMANDS = (report,)
