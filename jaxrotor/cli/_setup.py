"""What every command does before it computes: JAX's float width and the persistent compilation cache.

A command's compiled flights are kept on disk (JAX's persistent compilation cache), so
the second ``jaxrotor simulate`` of a configuration skips XLA compilation. The folder is
:func:`cache_dir`: ``$XDG_CACHE_HOME/jaxrotor/xla`` (default ``~/.cache/jaxrotor/xla``;
``~/Library/Caches/jaxrotor/xla`` on macOS, ``%LOCALAPPDATA%\\jaxrotor\\xla`` on Windows).
``JAXROTOR_NO_CACHE=1`` turns it off; a cache folder set for JAX itself
(``JAX_COMPILATION_CACHE_DIR``) is used as it is.

JAX never writes a program that calls back into Python, and equinox's runtime checks
(``eqx.error_if``: diffrax's check that the save times are ordered and inside
``[t0, t1]``) are such callbacks unless ``EQX_ON_ERROR=nan``. With the cache on, a
command therefore sets ``EQX_ON_ERROR=nan`` (unless it is set already): a failed check
returns NaN, which the flight's divergence check reports (``DIVERGED``, exit status 1)
instead of an exception; jaxrotor builds those save times itself and checks every
configuration before compiling.

Nothing here imports JAX at module level: ``jaxrotor --help`` stays fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path

__all__ = ["BATCH_COMMANDS", "FUSION_EMITTERS_ENV", "NO_CACHE_ENV", "cache_dir", "compile_speed_flag",
           "configure_compilation_cache", "cpu_devices_flag", "setup_jax"]

#: Environment variable that turns the persistent compilation cache off (any value but ``""`` and ``"0"``).
NO_CACHE_ENV = "JAXROTOR_NO_CACHE"


def cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The folder of jaxrotor's compilation cache, or ``None`` when ``JAXROTOR_NO_CACHE`` turns it off.

    Args:
        environ: the environment to read (default ``os.environ``): ``JAXROTOR_NO_CACHE``,
            ``XDG_CACHE_HOME``, ``LOCALAPPDATA`` (Windows), ``HOME``.
    """
    env = os.environ if environ is None else environ
    if env.get(NO_CACHE_ENV, "").strip() not in ("", "0"):
        return None
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    if env.get("XDG_CACHE_HOME"):
        base = Path(env["XDG_CACHE_HOME"])
    elif sys.platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Caches"
    else:
        base = home / ".cache"
    return base / "jaxrotor" / "xla"


def configure_compilation_cache(environ: MutableMapping[str, str] | None = None) -> Path | None:
    """Point JAX's persistent compilation cache at :func:`cache_dir` and cache every compiled program.

    Sets ``jax_compilation_cache_dir``, ``jax_persistent_cache_min_compile_time_secs = 0`` and
    ``jax_persistent_cache_min_entry_size_bytes = -1`` (no size floor), so even a short
    flight's programs are written, and ``EQX_ON_ERROR=nan`` in ``environ`` when it is unset
    and equinox not yet imported (the module docstring says why). Leaves JAX alone when
    ``JAXROTOR_NO_CACHE`` is set, when JAX already has a cache folder
    (``JAX_COMPILATION_CACHE_DIR`` or an earlier ``jax.config.update``; only
    ``EQX_ON_ERROR`` is set then), or when the folder cannot be created.

    Args:
        environ: the environment to read (default ``os.environ``).

    Returns:
        the cache folder JAX now uses (``None``: no persistent cache configured here).
    """
    import jax

    env = os.environ if environ is None else environ
    if env.get(NO_CACHE_ENV, "").strip() not in ("", "0"):
        return None
    if "equinox" not in sys.modules:  # read when equinox is imported: a program with a callback is never cached
        env.setdefault("EQX_ON_ERROR", "nan")
    current = jax.config.jax_compilation_cache_dir or env.get("JAX_COMPILATION_CACHE_DIR")
    if current:
        return Path(current)
    path = cache_dir(env)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:  # read-only home, no permission: run without a cache
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return path


def _flags_too_late() -> bool:
    """Whether ``XLA_FLAGS`` would no longer apply: JAX's backend has started (or it cannot be told)."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):  # cannot tell: leave the process as it is
        return True


def cpu_devices_flag(environ: MutableMapping[str, str] | None = None) -> bool:
    """Ask XLA for one CPU device per core, so that :func:`jaxrotor.batch.map_batch` flies a batch on every core.

    Appends ``--xla_force_host_platform_device_count=os.cpu_count()`` to ``XLA_FLAGS`` in ``environ`` (default
    ``os.environ``). XLA's CPU kernels of a closed-loop step are too small to be split over cores, so one device
    uses one core; with one device per core ``map_batch`` splits a batch over them (docs/batching.md). Does nothing,
    and returns ``False``, when JAX's backend has started already (the flag would not apply), ``XLA_FLAGS`` sets
    the count already, ``JAXROTOR_CPU_DEVICES=1``, or the machine has one core; else returns ``True``.
    """
    env = os.environ if environ is None else environ
    flags = env.get("XLA_FLAGS", "")
    cores = os.cpu_count() or 1
    if "xla_force_host_platform_device_count" in flags or env.get("JAXROTOR_CPU_DEVICES", "") == "1" or cores < 2:
        return False
    if _flags_too_late():
        return False
    env["XLA_FLAGS"] = (flags + f" --xla_force_host_platform_device_count={cores}").strip()
    return True


#: Commands whose time goes to running large batches rather than to compiling: :func:`compile_speed_flag` leaves
#: XLA's CPU code generation as it is for them.
BATCH_COMMANDS = frozenset({"sweep"})

#: Environment variable that keeps XLA's CPU fusion emitters for every command (``1``).
FUSION_EMITTERS_ENV = "JAXROTOR_FUSION_EMITTERS"

_FUSION_FLAG = "--xla_cpu_use_fusion_emitters=false"


def compile_speed_flag(command: str | None, environ: MutableMapping[str, str] | None = None) -> bool:
    """Compile a command's programs with XLA's older CPU fusion code generation (faster to compile).

    Appends ``--xla_cpu_use_fusion_emitters=false`` to ``XLA_FLAGS`` in ``environ`` (default ``os.environ``).
    Measured on 2 cores (docs/benchmarks.md, "Compilation: XLA's CPU fusion emitters"): the cant-selecting flight
    of ``configs/cant_tilting_hex.toml`` compiles in 2.2 s instead of 4.1 s of XLA time and runs 0.32 s instead of
    0.36 s; the 45 s use case's gradient compiles in 5.0-5.5 s instead of 7.0-7.5 s of CPU time and runs within 3 %;
    but a batch of 1 024-16 384 vectorised flights runs 12-31 % slower, so the sweep (:data:`BATCH_COMMANDS`) keeps
    XLA's default. Does nothing, and returns ``False``, for those commands, when ``XLA_FLAGS`` already names the
    option, when ``JAXROTOR_FUSION_EMITTERS=1``, or when JAX's backend has started (the flag would not apply);
    else returns ``True``. Only XLA's CPU backend reads the option.

    Args:
        command: the sub-command about to run (``None``: none).
        environ: the environment to change (default ``os.environ``).
    """
    env = os.environ if environ is None else environ
    flags = env.get("XLA_FLAGS", "")
    if (command is None or command in BATCH_COMMANDS or "xla_cpu_use_fusion_emitters" in flags
            or env.get(FUSION_EMITTERS_ENV, "").strip() == "1"):
        return False
    if _flags_too_late():
        return False
    env["XLA_FLAGS"] = (flags + " " + _FUSION_FLAG).strip()
    return True


def setup_jax(x64: bool = True) -> None:
    """Before a command computes: float64 (``x64``) or float32, and :func:`configure_compilation_cache`."""
    import jax

    jax.config.update("jax_enable_x64", x64)
    configure_compilation_cache()
