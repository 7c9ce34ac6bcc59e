"""The ``jaxrotor`` command line: ``jaxrotor simulate``, ``jaxrotor analyze``, ``jaxrotor presets``, ...

Each sub-command lives in its own module of this package and is registered on
the :data:`main` click group below. Sub-command modules import JAX inside the
commands (``jaxrotor --help`` and ``jaxrotor presets`` never import it,
``tests/unit/test_cli.py``), and every command keeps its compiled programs in a
persistent cache (:mod:`jaxrotor.cli._setup`; ``JAXROTOR_NO_CACHE=1`` turns it off).
"""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="jaxrotor")
@click.pass_context
def main(ctx: click.Context) -> None:
    """jaxrotor: simulate, analyse and optimise tilted and tilting multirotors.

    Compiled flights are cached on disk (~/.cache/jaxrotor/xla, or
    $XDG_CACHE_HOME/jaxrotor/xla), so a second run of a configuration skips
    compilation. Set JAXROTOR_NO_CACHE=1 to turn the cache off. On the CPU each
    core is one JAX device, so batches fly on every core; JAXROTOR_CPU_DEVICES=1
    keeps one. Every command but the sweep compiles with XLA's faster-compiling
    CPU code generation; JAXROTOR_FUSION_EMITTERS=1 keeps XLA's default.
    """
    from ._setup import compile_speed_flag, cpu_devices_flag

    cpu_devices_flag()
    compile_speed_flag(ctx.invoked_subcommand)


def _register() -> None:
    import importlib

    for module in ("simulate", "analyze", "optimize", "validate", "sweep", "faults", "report", "export", "design"):
        try:
            mod = importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as err:  # a sub-command module not present in this build
            if err.name != f"{__name__}.{module}":
                raise
            continue
        for cmd in getattr(mod, "COMMANDS", ()):
            main.add_command(cmd)


_register()
