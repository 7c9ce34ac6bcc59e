"""``jaxrotor export [CONFIG | --preset NAME] [--px4 FILE] [--urdf FILE] [--mjcf FILE]``: a design for other tools.

* ``--px4 FILE``: PX4's control-allocation parameters (``CA_AIRFRAME``, ``CA_ROTOR_COUNT``,
  ``CA_ROTORi_PX/PY/PZ``, ``CA_ROTORi_AX/AY/AZ``, ``CA_ROTORi_CT``, ``CA_ROTORi_KM``; FRD body frame)
  as a parameter file PX4 loads (:func:`jaxrotor.export.px4.write_px4_params`). What PX4's rotor
  allocation cannot express for the design (tilting rotors: the file holds the current angles) is printed.
* ``--urdf FILE`` / ``--mjcf FILE``: the vehicle from its parts as a URDF (ROS, Gazebo, Isaac; MuJoCo parses it)
  or an MJCF (MuJoCo), with each link's mass and inertia, rotor joints and tilt hinges
  (:func:`jaxrotor.export.robot.write_urdf`, :func:`jaxrotor.export.robot.write_mjcf`).

CONFIG is any TOML file with a ``[platform]`` table (a whole flight configuration or a platform
alone), read as ``jaxrotor analyze`` reads it; with neither CONFIG nor ``--preset`` the paper's
hexarotor is exported. JAX is imported inside the command (float64). ``docs/export.md``.
"""

from __future__ import annotations

from pathlib import Path

import click

from .analyze import DEFAULT_PRESET, load_config


def _platform(config: Path | None, preset: str | None):
    """The platform of CONFIG or of the preset NAME (usage errors name the option and the fix)."""
    from ..design import presets

    if config is not None and preset is not None:
        raise click.UsageError("give either CONFIG or --preset, not both. Fix: drop one of them.")
    if config is not None:
        return load_config(config)[0], config.stem
    name = preset or DEFAULT_PRESET
    if name not in presets.names():
        raise click.BadParameter(f"{name!r} is not a preset. Fix: use one of {', '.join(presets.names())}.",
                                 param_hint="--preset")
    return presets.get(name), name


@click.command("export")
@click.argument("config", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--preset", "preset", metavar="NAME", default=None, help="Export a preset instead of CONFIG.")
@click.option("--px4", "px4", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write PX4's control-allocation parameters to FILE.")
@click.option("--px4-format", type=click.Choice(["qgc", "airframe"]), default="qgc", show_default=True,
              help="qgc: a parameter file for QGroundControl / `param import`; airframe: `param set-default` lines.")
@click.option("--urdf", "urdf", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the vehicle as a URDF to FILE.")
@click.option("--mjcf", "mjcf", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the vehicle as an MJCF (MuJoCo XML) to FILE.")
def export(config: Path | None, preset: str | None, px4: Path | None, px4_format: str, urdf: Path | None,
           mjcf: Path | None) -> None:
    """Write CONFIG's vehicle for PX4 (--px4), ROS/Gazebo/Isaac (--urdf) or MuJoCo (--mjcf).

    CONFIG is a TOML file with a [platform] table; with neither CONFIG nor --preset the paper's
    hexarotor is exported. Give at least one of --px4, --urdf, --mjcf.
    """
    if px4 is None and urdf is None and mjcf is None:
        raise click.UsageError("nothing to write. Fix: give at least one of --px4 FILE, --urdf FILE, --mjcf FILE.")
    from ._setup import setup_jax

    setup_jax(x64=True)  # geometry and mass properties exported at full precision
    platform, name = _platform(config, preset)
    for path in (px4, urdf, mjcf):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
    if px4 is not None:
        from ..export import px4 as px4_mod

        px4_mod.write_px4_params(platform, px4, format=px4_format)
        click.echo(f"PX4 control-allocation parameters of {name} ({platform.n_rotors} rotors): {px4}")
        for line in px4_mod.px4_limitations(platform):
            click.echo(f"  note: {line}")
    if urdf is not None:
        from ..export import robot

        robot.write_urdf(platform, urdf)
        click.echo(f"URDF of {name}: {urdf}")
    if mjcf is not None:
        from ..export import robot

        robot.write_mjcf(platform, mjcf)
        click.echo(f"MJCF of {name}: {mjcf}")


COMMANDS = (export,)
