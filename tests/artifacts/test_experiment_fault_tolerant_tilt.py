"""``experiments/fault_tolerant_tilt.py --quick``: the cant of the paper hexarotor chosen for its worst single rotor
loss (exact allocation), checked against a grid, and the losses of the optimised design flown with clipped speeds
and 30 ms motors."""

import math
from pathlib import Path

import numpy as np

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "fault_tolerant_tilt.py"


def test_fault_tolerant_tilt_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["passed"] is True and (tmp_path / "fault_tolerant_tilt.png").is_file()
    lo, hi = (math.degrees(b) for b in s["bounds_rad"])
    assert lo <= s["optimised_alpha0_deg"] <= hi
    assert abs(s["optimised_alpha0_deg"] - s["grid_best_alpha0_deg"]) <= s["grid_cell_deg"]
    assert s["optimised_J_m"] < s["start_J_m"]
    assert len(s["grid_J_m"]) == len(s["grid_alpha0_deg"]) == 6 and np.all(np.isfinite(s["grid_J_m"]))
    assert abs(s["gradient_start"]["grad_m_per_rad"] / s["gradient_start"]["fd_1e-5"] - 1) < 1e-2  # piecewise smooth
    flown = s["outcomes_realistic"]
    assert [r["rotor"] for r in flown["optimised"]] == [1, 2, 3, 4, 5, 6]
    assert all(r["outcome"] in ("full_pose", "yaw_released") for r in flown["optimised"])
    # the soft maximum lies within T ln 6 above the largest per-rotor value (T = 1 mm)
    v = np.asarray(s["optimised_per_rotor_m"])
    assert v.max() <= s["optimised_J_m"] <= v.max() + 1e-3 * math.log(6) + 1e-12
