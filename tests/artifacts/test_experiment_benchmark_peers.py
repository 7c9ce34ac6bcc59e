"""``experiments/benchmark_peers.py --quick`` without a peer: jaxrotor's side only, real figures, no ratio."""

import math
from pathlib import Path

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "benchmark_peers.py"


def test_benchmark_peers_quick_without_peer(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["dtypes"] == ["float32"] and s["sizes"] == [2, 4] and s["rounds"] == 1
    # without --peer-python nothing is compared and no ratio is pretended
    assert s["peer_ran"] is False and s["peer"] is None and s["ratios"] == []
    assert not any(k.startswith(("discrete_ge", "continuous_ge", "single_flight")) for k in s["targets"])
    assert all(r["impl"] == "jaxrotor" for r in s["rows"])
    keys = {(r["loop"], r["integrator"], r["batch"]) for r in s["rows"]}
    assert keys == {(lp, i, n) for lp in ("continuous", "discrete") for i in ("euler", "rk4") for n in (2, 4)}
    peak = s["peak_flops_f32"]
    assert math.isfinite(peak) and peak > 1e8  # a float32 matmul does > 0.1 GFLOP/s on any CPU
    for r in s["rows"]:
        assert r["steps"] == int(s["plan"][str(r["batch"])]) > 0
        assert math.isfinite(r["wall_s"]) and r["wall_s"] > 0 and r["compile_s"] > 0, r
        assert r["steps_per_s"] > 0 and math.isclose(r["steps_per_s"], r["batch"] * r["steps"] / r["wall_s"],
                                                     rel_tol=1e-12)
        assert r["final_error_m"] <= 0.15, r  # started <= 0.1 m off the hover point
        assert r["flops_per_step"] > 0
        assert 0.0 < r["peak_fraction"] <= 1.0, r
        assert math.isclose(r["peak_fraction"], r["flops_per_step"] * r["steps_per_s"] / peak, rel_tol=1e-12)
    flops = s["flops_per_step"]
    assert set(flops) == {f"float32/jaxrotor/{lp}/{i}" for lp in ("continuous", "discrete") for i in ("euler", "rk4")}
    for loop in ("continuous", "discrete"):
        euler, rk4 = flops[f"float32/jaxrotor/{loop}/euler"], flops[f"float32/jaxrotor/{loop}/rk4"]
        assert 100 < euler < rk4 < 1e6  # one step of one quadrotor: hundreds to thousands of FLOPs
    t = s["targets"]["rk4_float32_peak_fraction"]
    assert 0.0 < t["measured"] <= 1.0 and t["met"] == (t["measured"] >= 0.1)
