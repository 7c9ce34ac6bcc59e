"""``jaxrotor sweep CONFIG [--out DIR]``: fly a flight at every point of a parameter sweep."""

from __future__ import annotations

import sys

import click


@click.command("sweep")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default ./jaxrotor-out/<name>/); finished chunks in it are reused.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.option("--float32", is_flag=True, help="Run in float32 (default float64).")
@click.option("--t1", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="Stop every flight at this time [s] instead of [flight] t1 or the reference's end.")
@click.option("--distributed", is_flag=True,
              help="Call jax.distributed.initialize() first (one process per host; coordinator address, process "
                   "count and id from the environment, e.g. JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, "
                   "JAX_PROCESS_ID).")
def sweep(config: str, out_dir: str | None, no_progress: bool, float32: bool, t1: float | None,
          distributed: bool) -> None:
    """Fly CONFIG (a flight TOML with a [sweep] table, see configs/sweep_tilt.toml) at every sweep point.

    Writes sweep.csv (parameters, every flight metric, the objective and its terms'
    measures when CONFIG has [objective.*] tables, diverged, verdict), the figures
    (metric against the parameter, or a heat map over two parameters) and
    chunks/ (finished chunks; a rerun skips them). Each row's verdict is ok or the
    reasons raised for that point joined by ';' (diverged, lost_tracking,
    saturated; thresholds from [flight], see jaxrotor.verdict); a raised verdict is
    reported, it does not fail the sweep.

    \b
    Exit status:
      0  every point flew (verdicts may be raised: see the verdict column)
      1  a point diverged (its row says diverged = True)
      2  configuration error (nothing flown)
    """
    import jax

    from ._setup import setup_jax

    if distributed:
        jax.distributed.initialize()
    setup_jax(x64=not float32)
    from pathlib import Path

    from ..io.toml import ConfigError
    from ..workflows.sweep import load_sweep, run_sweep

    try:
        conf = load_sweep(config, t1=t1)
    except (ConfigError, ValueError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    out = Path(out_dir) if out_dir else Path("jaxrotor-out") / conf.name
    click.echo(f"sweep {conf.name}: {conf.spec.size} points ({conf.spec.kind}) over "
               f"{', '.join(a.path for a in conf.spec.axes)}; chunks of {conf.chunk} on {jax.device_count()} "
               f"device(s), {jax.process_count()} process(es)")
    result = run_sweep(conf, out, progress=not no_progress, echo=click.echo)
    for p in result["figures"]:
        click.echo(f"wrote {p}")
    if result["failed"]:
        counts: dict[str, int] = {}
        for row in result["rows"]:
            for reason in ([] if row["verdict"] == "ok" else row["verdict"].split(";")):
                counts[reason] = counts.get(reason, 0) + 1
        click.echo(f"verdict: {result['failed']} of {result['points']} points raised ("
                   + ", ".join(f"{k}: {v}" for k, v in counts.items()) + "; column verdict of sweep.csv)")
    else:
        click.echo(f"verdict: ok at all {result['points']} points")
    if result["diverged"]:
        click.echo(f"warning: {result['diverged']} of {result['points']} points diverged (rows with diverged = True).",
                   err=True)
        sys.exit(1)


COMMANDS = [sweep]
