"""Test configuration: float64 everywhere, and one compilation cache for the whole run.

The persistent XLA compilation cache is shared by the pytest-xdist workers and by every
subprocess a test starts (experiments, CLI runs inherit ``JAX_COMPILATION_CACHE_DIR``), so a
flight compiled once is not compiled again in another process. Set the variable yourself to
use another folder.

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
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"jaxrotor-tests-xla-{os.getuid()}"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")  # small programs are shared too
# a compiled program with a host callback is never written to the persistent cache; equinox's runtime checks
# (diffrax's save-time checks) are such callbacks unless they return NaN, as the CLI sets them (jaxrotor.cli._setup)
os.environ.setdefault("EQX_ON_ERROR", "nan")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
