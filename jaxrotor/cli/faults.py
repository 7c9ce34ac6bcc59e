"""``jaxrotor faults CONFIG [--out DIR] [--no-physics]``: lose each rotor in hover, on both layers, beside the
static rotor-loss analysis."""

from __future__ import annotations

import sys

import click


@click.command("faults")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default ./jaxrotor-out/<name>-faults/).")
@click.option("--physics/--no-physics", default=True, show_default=True,
              help="Also fly each loss on the physics layer (MuJoCo C engine).")
@click.option("--time", "t_fault", type=click.FloatRange(min=0.0, min_open=True), default=5.0, show_default=True,
              help="Time of the loss, after that much hover [s].")
@click.option("--settle", type=click.FloatRange(min=0.0, min_open=True), default=3.0, show_default=True,
              help="Time after the loss from which the flight is judged [s] (it ends 1 s later).")
@click.option("--detection-delay", type=click.FloatRange(min=0.0), default=0.05, show_default=True,
              help="Time from the loss until the flight computer knows of it [s].")
@click.option("--release-yaw", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="The flight computer's yaw policy after the loss.")
@click.option("--rotors", default=None, metavar="LIST",
              help="Rotors to lose, numbered from 1, comma-separated (default every rotor), e.g. 1,4.")
@click.option("--no-figures", is_flag=True, help="Skip faults.png.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.option("--allow-failure", is_flag=True,
              help="Exit with status 0 even when a flown outcome differs from the analysis.")
def faults(config: str, out_dir: str | None, physics: bool, t_fault: float, settle: float, detection_delay: float,
           release_yaw: str, rotors: str | None, no_figures: bool, no_progress: bool, allow_failure: bool) -> None:
    """Hover CONFIG's vehicle, lose each rotor in turn, and compare what each flight held with the analysis.

    Each flight hovers at the first point of CONFIG's reference, loses rotor j at --time (the flight
    computer learns of it --detection-delay later) and is judged from --settle s after the loss: "full_pose"
    (position within 0.1 m and attitude within 0.05 rad), "yaw_released" (position and tilt held, heading
    given up) or "lost". The analysis column is jaxrotor analyze's rotor-loss outcome (a level hover with the
    remaining rotors, with every wrench row or without the yaw torque). Prints the table and writes
    faults.json ({"rotors": [{"rotor", "analysis", "analytic", "physics"}, ...]}, rotors from 1) and
    faults.png.

    \b
    Exit status:
      0  every flown outcome equals the analysis' (or --allow-failure)
      1  a flown outcome differs from the analysis
      2  configuration error (nothing flown)
    """
    from ._setup import setup_jax

    setup_jax(x64=True)
    from ..io import config as cfg
    from ..workflows.faults import rotor_loss_report

    try:
        chosen = None if rotors is None else [int(r) for r in rotors.split(",") if r.strip()]
    except ValueError:
        click.echo(f"error: --rotors = {rotors!r} is invalid: rotors are whole numbers. Fix: e.g. --rotors 1,4.",
                   err=True)
        sys.exit(2)
    try:
        conf = cfg.load(config)
        if chosen is not None and any(not 1 <= r <= conf.platform.n_rotors for r in chosen):
            raise ValueError(f"--rotors = {rotors!r} is invalid: the vehicle has rotors 1 to "
                             f"{conf.platform.n_rotors}. Fix: give rotor numbers from 1 to {conf.platform.n_rotors}.")
        if physics:
            from ..workflows.compare import physics_settings

            physics_settings(conf.platform)
    except (cfg.ConfigError, ValueError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    report = rotor_loss_report(conf, out_dir, physics=physics, time=t_fault, settle=settle,
                               detection_delay=detection_delay, release_yaw=release_yaw, rotors=chosen,
                               echo=click.echo,
                               progress=not no_progress, figures=not no_figures)
    if not report["agree"] and not allow_failure:
        click.echo("error: a flown outcome differs from the analysis (pass --allow-failure to exit 0).", err=True)
        sys.exit(1)


COMMANDS = [faults]
