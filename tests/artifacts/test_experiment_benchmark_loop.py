"""experiments/benchmark_loop.py --quick: both variants of each pair fly the same flights, ratios are recorded."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_benchmark_loop_quick(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "experiments" / "benchmark_loop.py"), "--quick", "--x64",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    rec = json.loads((tmp_path / "benchmark_loop.json").read_text())
    assert rec["dtype"] == "float64" and rec["batch"] == 64
    assert {c["name"]: c["passed"] for c in rec["checks"]} == {
        "saved-only vs every-tick final positions [m]": True, "chunked vs one-vmap final positions [m]": True,
        "unrolled vs scanned stages final positions [m]": True, "diverged members": True,
        "written-out RK4 step vs diffrax's RK4 step (max abs difference)": True,
        "written-out vs matmul layout final positions [m]": True}
    assert set(rec["ratios"]) == {"saved_only/every_tick", "chunked/one_vmap", "unrolled/scanned", "written_out/dots",
                                  "rk4_step/field"}
    for ratio in rec["ratios"].values():
        assert 0 < ratio["min"] <= ratio["median"] <= ratio["max"]
