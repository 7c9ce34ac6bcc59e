"""Test configuration: float64 everywhere, and no persistent compilation cache unless asked for.

JAX's persistent XLA compilation cache could be shared by the pytest-xdist workers and the
subprocesses the tests start, but writing an executable to it has aborted a worker inside
``compilation_cache.put_executable_and_time`` (a fatal abort, not an exception: the whole worker
is lost) in runs of this suite; a fresh CI clone starts with an empty cache anyway. So the suite
runs with ``JAXROTOR_NO_CACHE=1`` (the CLI and the experiments configure no cache) and without
``JAX_COMPILATION_CACHE_DIR``; each process keeps JAX's in-memory cache. Set
``JAXROTOR_TEST_CACHE=1`` to share one persistent cache folder again (faster warm reruns on a
workstation), or ``JAX_COMPILATION_CACHE_DIR`` yourself.

The suite is laid out as ``unit/`` (mirrors ``jaxrotor/``, fast), ``integration/`` (whole flights, layers
against each other, the CLI, several processes) and ``artifacts/`` (docs blocks, the docs site, the wheel,
the experiment scripts). This folder is put on ``sys.path`` so the shared helper modules (``npref``) import
from every subfolder.
"""

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ.setdefault("JAX_ENABLE_X64", "1")
if os.environ.get("JAXROTOR_TEST_CACHE", "").strip() not in ("", "0"):
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"jaxrotor-tests-xla-{os.getuid()}"))
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")  # small programs are shared too
elif "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    os.environ.setdefault("JAXROTOR_NO_CACHE", "1")  # the CLI (in process and in subprocesses) configures none
# a compiled program with a host callback is never written to the persistent cache; equinox's runtime checks
# (diffrax's save-time checks) are such callbacks unless they return NaN, as the CLI sets them (jaxrotor.cli._setup)
os.environ.setdefault("EQX_ON_ERROR", "nan")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
