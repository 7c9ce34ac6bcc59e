"""``experiments/benchmark_batch.py --quick``: the fixed-step path agrees with the plain RK4 floor and diffeqsolve."""

import math
from pathlib import Path

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "benchmark_batch.py"


def test_benchmark_batch_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["dtypes"] == ["float64", "float32"] and s["sizes"] == [8]
    rows = {(r["dtype"], r["variant"]): r for r in s["rows"]}
    assert set(rows) == {("float64", "fly"), ("float64", "floor"), ("float64", "diffeqsolve"), ("float32", "fly"),
                         ("float32", "floor")}
    for r in rows.values():
        assert r["steps"] == 50 and r["batch"] == 8  # 0.25 s at 5 ms
        assert math.isfinite(r["wall_s"]) and r["wall_s"] > 0
        assert math.isclose(r["steps_per_s"], 8 * 50 / r["wall_s"], rel_tol=1e-12)
        assert r["memory_per_member_bytes"] is None or r["memory_per_member_bytes"] > 0
    for dtype in ("float64", "float32"):
        fly, floor = rows[(dtype, "fly")], rows[(dtype, "floor")]
        assert math.isclose(fly["fly_over_floor"], fly["wall_s"] / floor["wall_s"], rel_tol=1e-12)
    # float64: the lax.scan loop and diffrax.diffeqsolve take the same steps: the same flight to rounding
    assert s["agreement"]["float64"]["fly_vs_diffeqsolve_m"] <= 1e-12
    assert s["agreement"]["float64"]["fly_vs_floor_m"] <= 1e-9
    assert s["agreement"]["float32"]["fly_vs_floor_m"] <= 1e-3
