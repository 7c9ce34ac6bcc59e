"""``experiments/benchmark_physics.py --quick``: the physics layer flies the use case's first 2 s like the analytic one."""

import math
from pathlib import Path

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "benchmark_physics.py"


def test_benchmark_physics_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["horizon_s"] == 2.0
    assert [r["control_hz"] for r in s["engine"]] == [1000]
    for r in s["engine"]:
        assert r["diverged"] is False and r["ticks"] == round(2.0 * r["control_hz"])
        assert math.isfinite(r["wall_s"]) and r["wall_s"] > 0
        assert math.isclose(r["ratio_to_analytic"], r["wall_s"] / s["analytic_wall_s"], rel_tol=1e-12)
        assert len(r["mae_position"]) == 3 and max(r["mae_position"]) < 1e-3  # the climb is tracked to < 1 mm
        assert 0.0 <= r["control_step_s"] <= r["wall_s"]
    assert 0.0 <= s["engine"][0]["max_abs_delta_omega_steady"] <= 2.0  # 1 kHz: within the paper's Fig. 8 band
    assert s["control_step_us"] > 0 and s["mj_step_and_loop_us"] > 0
    assert math.isclose((s["control_step_us"] + s["mj_step_and_loop_us"]) * s["engine"][0]["ticks"] * 1e-6,
                        s["engine"][0]["wall_s"], rel_tol=1e-9)
    # welding the propellers removes their gyroscopic and reaction torques: the attitude stays exact to round-off
    assert max(s["welded_propellers"]["mae_orientation"]) < 1e-9
    assert "mjx" not in s
