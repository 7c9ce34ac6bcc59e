"""Test configuration: float64 everywhere, and one compilation cache for the whole run.

The persistent XLA compilation cache is shared by the pytest-xdist workers and by every
subprocess a test starts (experiments, CLI runs inherit ``JAX_COMPILATION_CACHE_DIR``), so a
flight compiled once is not compiled again in another process. Set the variable yourself to
use another folder.
"""

import os
import tempfile

os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"jaxrotor-tests-xla-{os.getuid()}"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
