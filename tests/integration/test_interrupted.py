"""Interrupted long runs lose nothing: ``jaxrotor tune``, ``optimize`` and ``sweep`` killed mid-run
(SIGINT and SIGKILL, real subprocesses) and rerun in the same folder finish with exactly the result of an
uninterrupted run.

* tune/optimize: every accepted row of ``history.csv`` (all columns but the wall time ``time_s``) and the
  final design in ``result.json`` equal the uninterrupted run's bit for bit: the checkpoint restores the
  optimiser state exactly (``jaxrotor.optimize.loop``).
* sweep: finished chunks are kept (``OUT/chunks/chunk_NNNNN.npz``), the rerun flies only the others, and
  ``sweep.csv`` equals the uninterrupted run's.

Tiny configurations (short horizons, few iterations/points); the processes share a persistent JAX
compilation cache so only the first one of each command compiles.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
JAXROTOR = [sys.executable, "-c", "from jaxrotor.cli import main; main()"]


def _tiny(src: str, dst: Path, replacements: list[tuple[str, str]]) -> Path:
    text = (CONFIGS / src).read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    dst.write_text(text)
    return dst


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    cache = tmp_path_factory.mktemp("jax_cache")
    return {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(cache), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0", "JAX_PLATFORMS": "cpu"}


def _run(args, env, timeout=240):
    res = subprocess.run(JAXROTOR + args, env=env, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def _interrupt(args, env, ready, sig, timeout=240) -> int:
    """Start ``jaxrotor args``, wait until ``ready()`` (progress on disk), send ``sig``; returns the exit code.

    Fails if the run finished before it could be interrupted (then the run is too short for this test)."""
    # a background job of a non-interactive shell (CI) inherits SIGINT as ignored: restore the default so the
    # child installs Python's KeyboardInterrupt handler, as in a terminal
    proc = subprocess.Popen(JAXROTOR + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t0 = time.monotonic()
    try:
        while not ready():
            if proc.poll() is not None:
                pytest.fail(f"{args[0]} ended (exit {proc.returncode}) before it could be interrupted:\n"
                            + proc.stdout.read())
            if time.monotonic() - t0 > timeout:
                pytest.fail(f"{args[0]} made no progress in {timeout} s")
            time.sleep(0.005)
        assert proc.poll() is None, f"{args[0]} finished before the signal"
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    proc.stdout.close()
    return proc.returncode


def _history(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return [{k: v for k, v in row.items() if k != "time_s"} for row in csv.DictReader(fh)]


def _rows(path: Path) -> int:
    try:
        return max(0, len(path.read_text().splitlines()) - 1)
    except FileNotFoundError:
        return 0


def _same_run(ref: Path, resumed: Path) -> None:
    h_ref, h_res = _history(ref / "history.csv"), _history(resumed / "history.csv")
    assert len(h_ref) == len(h_res)
    assert h_res == h_ref  # every column but the wall time, as written (repr of the floats)
    r_ref, r_res = (json.loads((d / "result.json").read_text()) for d in (ref, resumed))
    for key in ("initial_loss", "final_loss", "last_loss", "iterations", "stop_reason", "final_params",
                "final_terms"):
        assert r_res[key] == r_ref[key], key
    untimed = [k for k in r_ref["final_metrics"] if "time" not in k]
    assert {k: r_res["final_metrics"][k] for k in untimed} == {k: r_ref["final_metrics"][k] for k in untimed}


@pytest.mark.parametrize("command,src,sig", [
    ("tune", "tune_gains.toml", signal.SIGKILL),
    ("optimize", "optimize_tilt.toml", signal.SIGINT),
])
def test_optimisation_resumes_exactly(tmp_path, env, command, src, sig):
    # long enough per iteration (a 3 s flight: ~15 ms per iteration on one core, measured) and in all (100
    # iterations) that a warm-cache run on a quiet machine is still running ~1.5 s after its third row, when the
    # signal comes (the poll below looks every 5 ms); an 8 s flight and 200 iterations cost 4x as much per run
    conf = _tiny(src, tmp_path / "tiny.toml", [("[flight]\n", "[flight]\nt1 = 3.0\n"), ("dt = 0.01 ", "dt = 0.02 ")])
    n = 100
    ref, out = tmp_path / "ref", tmp_path / "out"
    _run([command, str(conf), "--out", str(ref), "--iterations", str(n), "--no-progress"], env)
    n_ref = _rows(ref / "history.csv")  # n, or fewer when the run stops early (patience, step size): deterministic
    assert 20 <= n_ref <= n
    code = _interrupt([command, str(conf), "--out", str(out), "--iterations", str(n), "--no-progress"], env,
                      ready=lambda: _rows(out / "history.csv") >= 3, sig=sig)
    if sig == signal.SIGKILL:
        assert code == -signal.SIGKILL
        assert not (out / "result.json").exists()
    done = _rows(out / "history.csv")
    assert 3 <= done < n_ref
    res = _run([command, str(conf), "--out", str(out), "--iterations", str(n), "--no-progress"], env)
    assert "resumed at iteration" in res.stdout and "from the checkpoint" in res.stdout
    _same_run(ref, out)


def test_sweep_resumes_exactly(tmp_path, env):
    conf = _tiny("sweep_tilt.toml", tmp_path / "tiny.toml", [
        ("[flight]\n", "[flight]\nt1 = 12.0\n"), ("chunk = 100 ", "chunk = 2 "),
        ("points = 20\n", "points = 4\n"), ("points = 20\n", "points = 5\n")])
    ref, out = tmp_path / "ref", tmp_path / "out"
    _run(["sweep", str(conf), "--out", str(ref), "--no-progress"], env)
    chunks = out / "chunks"

    def n_chunks():
        return len(list(chunks.glob("chunk_*[0-9].npz"))) if chunks.is_dir() else 0

    # 20 points in 10 chunks: SIGKILL after 2 chunks, SIGINT after 2 more, then the rerun finishes
    code = _interrupt(["sweep", str(conf), "--out", str(out), "--no-progress"], env, ready=lambda: n_chunks() >= 2,
                      sig=signal.SIGKILL)
    assert code == -signal.SIGKILL and not (out / "sweep.csv").exists()
    first = n_chunks()
    code = _interrupt(["sweep", str(conf), "--out", str(out), "--no-progress"], env,
                      ready=lambda: n_chunks() >= first + 2, sig=signal.SIGINT)
    assert code != 0 and not (out / "sweep.csv").exists()
    second = n_chunks()
    assert first < second < 10
    res = _run(["sweep", str(conf), "--out", str(out), "--no-progress"], env)
    assert f"{10 - second} chunks flown, {second} reused" in res.stdout
    assert (out / "sweep.csv").read_text() == (ref / "sweep.csv").read_text()
