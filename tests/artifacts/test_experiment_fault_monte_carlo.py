"""``experiments/fault_monte_carlo.py --quick``: random rotor faults on the paper hexarotor flown as one vmapped batch,
judged inside it, agree with the same faults flown alone; counts, rate and Wilson interval are consistent."""

import math
from pathlib import Path

from scipy.stats import binomtest

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "fault_monte_carlo.py"


def test_fault_monte_carlo_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    n = s["n"]
    assert s["quick"] is True and s["passed"] is True and n == 16 and (tmp_path / "fault_monte_carlo.png").is_file()
    counts = s["counts"]
    assert set(counts) == {"full_pose", "yaw_released", "lost"} and sum(counts.values()) == n
    members = s["members"]
    assert len(members) == n and [sum(m["outcome"] == w for m in members) for w in counts] == list(counts.values())
    for kind, c in s["counts_by_kind"].items():
        assert sum(c.values()) == sum(m["kind"] == kind for m in members)
    for m in members:
        assert 1 <= m["rotor_number"] <= 6 and 0.5 <= m["time_s"] <= 1.5 and 0.0 <= m["effectiveness"] <= 1.0
        assert (m["kind"] == "rotor_loss") == (m["effectiveness"] == 0.0)
    held = n - counts["lost"]
    assert math.isclose(s["success_rate"], held / n, rel_tol=1e-12)
    ci = binomtest(held, n).proportion_ci(method="wilson")
    assert math.isclose(s["wilson_95"][0], ci.low, abs_tol=1e-12) and math.isclose(s["wilson_95"][1], ci.high,
                                                                                   rel_tol=1e-12)
    assert s["wall_s"] > 0 and math.isclose(s["flights_per_s"], n / s["wall_s"], rel_tol=1e-12)
    assert s["compile_s"] > 0
    singles = s["singles"]
    assert len(singles) == 4 and {x["kind"] for x in singles} == {"rotor_loss", "rotor_partial"}
    for x in singles:
        assert x["single_outcome"] == x["batch_outcome"] == members[x["member"]]["outcome"]
        assert x["final_position_difference_m"] <= 1e-9
