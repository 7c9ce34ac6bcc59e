"""Test configuration: float64 everywhere, one shared compilation cache, and a bounded number of live programs.

Every compiled XLA CPU program maps a few memory regions into the process. A pytest-xdist worker runs hundreds
of test files and JAX keeps each jitted function's executables for as long as the function lives (module-level
functions live for the whole run), so a worker approached Linux's ``vm.max_map_count`` (65530) and the next
compile died with a segmentation fault inside XLA (a fatal signal: the worker is lost, and xdist's ``loadfile``
scheduler then waits forever). :func:`_bounded_programs` therefore drops JAX's caches (``jax.clear_caches``)
after any test file that leaves the process with more than ``MAX_MAPS`` mappings.

The workers and the subprocesses the tests start (the CLI, the experiment scripts) share one persistent XLA
cache folder (``JAX_COMPILATION_CACHE_DIR``, under the system's temporary folder) so a program compiled once is
loaded by the others; set ``JAXROTOR_TEST_CACHE=0`` to run without it (each process then compiles on its own
and the CLI configures no cache: ``JAXROTOR_NO_CACHE=1``).

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
if os.environ.get("JAXROTOR_TEST_CACHE", "1").strip() not in ("", "0"):
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"jaxrotor-tests-xla-{os.getuid()}"))
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.2")  # what takes longer to compile than to load
elif "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    os.environ.setdefault("JAXROTOR_NO_CACHE", "1")  # the CLI (in process and in subprocesses) configures none
# a compiled program with a host callback is never written to the persistent cache; equinox's runtime checks
# (diffrax's save-time checks) are such callbacks unless they return NaN, as the CLI sets them (jaxrotor.cli._setup)
os.environ.setdefault("EQX_ON_ERROR", "nan")
# one CPU device per process, as before the jaxrotor command asked for one per core (jaxrotor.cli._setup): the
# xdist workers already use the cores, and an in-process CLI call must not change a worker's devices.
# tests/unit/test_batch_chunk.py flies the several-device path in a subprocess of its own.
os.environ.setdefault("JAXROTOR_CPU_DEVICES", "1")
# XLA's older CPU fusion code generation, as the jaxrotor command compiles (jaxrotor.cli._setup.compile_speed_flag,
# docs/benchmarks.md "Compilation: XLA's CPU fusion emitters"): the suite's time is mostly compilation. Set before JAX
# starts, so the workers, the in-process CLI calls and the subprocesses compile alike and share the persistent cache
# (its key holds XLA_FLAGS). JAXROTOR_FUSION_EMITTERS=1 runs the suite with XLA's default code generation instead;
# tests/integration/test_compile_flag_flight.py flies a flight under both and compares them.
if (os.environ.get("JAXROTOR_FUSION_EMITTERS", "").strip() != "1"
        and "xla_cpu_use_fusion_emitters" not in os.environ.get("XLA_FLAGS", "")):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=false").strip()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)


import gc  # noqa: E402

import pytest  # noqa: E402

MAX_MAPS = 20000  # memory mappings of this process above which a test file's end drops JAX's compiled programs


def _mapping_count() -> int:
    """Memory mappings of this process (``/proc/self/maps`` lines); 0 where there is no procfs."""
    try:
        with open("/proc/self/maps", "rb") as maps:
            return sum(1 for _ in maps)
    except OSError:
        return 0


@pytest.fixture(scope="module", autouse=True)
def _bounded_programs():
    """After each test file: drop JAX's caches when the process holds more than ``MAX_MAPS`` mappings."""
    yield
    if _mapping_count() > MAX_MAPS:
        jax.clear_caches()
        gc.collect()
