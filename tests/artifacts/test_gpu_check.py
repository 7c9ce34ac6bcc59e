"""``experiments/gpu_check.sh --tiny`` runs end to end on the CPU and its table holds real figures.

The script is run once (tiny sizes, ``SKIP_INSTALL=1``: the package under test as it is
installed); the tests read its printed table and its JSON outputs: the throughput
rows (finite, positive steps/s; steps/s = batch x steps / wall time, from the
benchmark's own record), the sweep (one CSV row per grid point of the tiny config, no
divergence) and the MJX step (skipped in ``--tiny`` mode unless ``MJX=1``). A script
with a failing step must exit non-zero.
"""

import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "experiments" / "gpu_check.sh"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _env(**extra):
    env = dict(os.environ, SKIP_INSTALL="1", PYTHON=sys.executable, MPLBACKEND="Agg",
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("MJX", None)
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_check")
    res = subprocess.run(["bash", str(SCRIPT), "--tiny", str(out)], check=False, cwd=ROOT, env=_env(), capture_output=True,
                         text=True, timeout=600)
    log = f"--- stdout\n{res.stdout[-4000:]}\n--- stderr\n{res.stderr[-3000:]}"
    return res, out, log


def test_tiny_run_succeeds_and_prints_one_table(tiny):
    res, out, log = tiny
    assert res.returncode == 0, log
    table = res.stdout.split("== table", 1)[1]
    summary = json.loads((out / "gpu_check.json").read_text())
    assert summary["passed"] is True
    assert "checks passed: True" in table
    printed = {}
    for r in summary["rows"]:  # every row of the JSON summary is a printed line of the table
        line = re.search(rf"^{re.escape(r['what'])}\s+{r['batch']}\s+(.*)$", table, re.MULTILINE)
        assert line, (r["what"], log)
        printed[r["what"]] = line.group(1).split()
    # the printed steps/s is the recorded one (4 significant digits)
    fly = next(r for r in summary["rows"] if r["what"] == "benchmark fly")
    assert math.isclose(float(printed["benchmark fly"][0]), fly["steps_per_s"], rel_tol=1e-3)


def test_throughput_rows_are_real(tiny):
    res, out, log = tiny
    assert res.returncode == 0, log
    bench = json.loads((out / "benchmark_batch" / "benchmark_batch.json").read_text())
    rows = {r["variant"]: r for r in bench["rows"]}
    assert set(rows) >= {"fly", "floor"} and all(r["dtype"] == "float32" for r in bench["rows"])
    for r in rows.values():
        assert math.isfinite(r["steps_per_s"]) and r["steps_per_s"] > 0
        assert r["wall_s"] > 0
        # steps/s counts every member's steps: batch x (horizon / dt) steps in the measured wall time
        assert r["steps"] == round(bench["horizon_s"] / bench["dt"])
        assert math.isclose(r["steps_per_s"], r["batch"] * r["steps"] / r["wall_s"], rel_tol=1e-9)
    # the fast path and the plain RK4 floor fly the same closed loop (float32, 0.05 s)
    assert bench["agreement"]["float32"]["fly_vs_floor_m"] < 1e-3
    summary = json.loads((out / "gpu_check.json").read_text())
    fly = next(r for r in summary["rows"] if r["what"] == "benchmark fly")
    assert fly["steps_per_s"] == rows["fly"]["steps_per_s"]


def test_sweep_csv_has_one_row_per_point(tiny):
    res, out, log = tiny
    assert res.returncode == 0, log
    with open(out / "sweep" / "sweep.csv") as fh:
        points = list(csv.DictReader(fh))
    assert len(points) == 2 * 2  # the tiny config: 2 x 2 grid over alpha_0, beta_0
    alphas = sorted({float(p["platform.alpha"]) for p in points})
    betas = sorted({float(p["platform.beta"]) for p in points})
    assert alphas == pytest.approx([0.0, 0.7854]) and betas == pytest.approx([0.0, 0.5236])
    assert all(p["diverged"] == "False" for p in points)
    assert all(math.isfinite(float(p["rmse_position"])) and float(p["rmse_position"]) >= 0 for p in points)
    summary = json.loads((out / "gpu_check.json").read_text())
    sweep = next(r for r in summary["rows"] if r["what"].startswith("sweep"))
    assert sweep["batch"] == len(points) and sweep["diverged"] == 0 and sweep["wall_s"] > 0


def test_mjx_step_skipped_in_tiny_mode(tiny):
    res, out, log = tiny
    assert res.returncode == 0, log
    assert "skipped in --tiny mode" in res.stdout.split("== 2. MJX batch", 1)[1].split("== 3.", 1)[0]
    assert json.loads((out / "gpu_check.json").read_text())["mjx"] is False


def test_a_failing_step_fails_the_script(tmp_path):
    # an interpreter that cannot run the benchmark: the first step fails, so must the script (nothing hides it)
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\ncase \"$1\" in *benchmark_batch.py) exit 3;; esac\nexec {sys.executable} \"$@\"\n")
    fake.chmod(0o755)
    res = subprocess.run(["bash", str(SCRIPT), "--tiny", str(tmp_path / "out")], check=False, cwd=ROOT,
                         env=_env(PYTHON=str(fake)), capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert "== 3." not in res.stdout and not (tmp_path / "out" / "gpu_check.json").exists()
