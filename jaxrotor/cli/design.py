"""``jaxrotor design CONFIG``: co-design a vehicle for a mission (:mod:`jaxrotor.workflows.design`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("design")
@click.argument("config", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default ./jaxrotor-out/<name>/).")
@click.option("--quick", is_flag=True, help="Apply the file's [design.quick] table (fewer candidates, steps, "
              "members and a shorter mission: for tests and a first look).")
@click.option("--no-physics", is_flag=True, help="Skip the physics-layer check of the winning design.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bars.")
@click.option("--allow-failure", is_flag=True,
              help="Exit with status 0 even when no design is feasible or the physics-layer check fails.")
def design(config: Path, out_dir: Path | None, quick: bool, no_physics: bool, no_progress: bool,
           allow_failure: bool) -> None:
    """Optimise CONFIG's vehicle (geometry, tilt, propeller, battery, motor, cells; auto gains) for its mission.

    Solves the problem with gradients (augmented Lagrangian + Adam, every catalogue motor and cell count
    enumerated), runs CMA-ES on the same function as the baseline, sweeps a Pareto front, writes the
    winning design as DIR/best.toml and flies it on the physics layer. Results: DIR/design.json,
    DIR/convergence.png, DIR/pareto.png (docs/design.md).

    \b
    Exit status:
      0  a feasible design was found and it holds on the physics layer (or --allow-failure)
      1  no feasible design, or the physics-layer check failed (design.json says which)
      2  configuration error (nothing written)
    """
    from ._setup import setup_jax

    setup_jax(x64=True)
    import dataclasses

    from ..io.design_config import load_design
    from ..io.toml import ConfigError
    from ..workflows.design import run_design

    try:
        conf = load_design(config, quick=quick)
    except (ConfigError, ValueError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    if no_physics:
        conf = dataclasses.replace(conf, settings=dataclasses.replace(conf.settings, physics=False))
    report = run_design(conf, out_dir, echo=click.echo, progress=not no_progress)
    if not report["verdict"]["ok"] and not allow_failure:
        click.echo("error: " + "; ".join(report["verdict"]["reasons"]) + " (pass --allow-failure to exit 0).",
                   err=True)
        sys.exit(1)


COMMANDS = (design,)
