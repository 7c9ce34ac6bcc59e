"""``experiments/fault_tolerant_tilt.py --quick``: the cant of the paper hexarotor chosen for its worst single rotor
loss (exact allocation), checked against a grid and central differences, and the losses of the optimised design
flown with clipped speeds and 30 ms motors (the cant and dihedral together: the full run only)."""

import math
from pathlib import Path

import numpy as np

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "fault_tolerant_tilt.py"


def test_fault_tolerant_tilt_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path, timeout=1200)  # ~5 min alone on 2 cores, up to twice that beside other tests
    assert s["quick"] is True and s["passed"] is True and (tmp_path / "fault_tolerant_tilt.png").is_file()
    lo, hi = s["bounds_rad"]
    a = s["optimised_alpha0_deg"]
    assert math.degrees(lo) <= a <= math.degrees(hi)
    grid, J = np.asarray(s["grid_alpha0_deg"]), np.asarray(s["grid_J_m"])
    assert grid.shape == J.shape == (7,) and np.all(np.isfinite(J)) and s["grid_best_J_m"] == J.min()
    assert abs(a - s["grid_best_alpha0_deg"]) <= s["grid_cell_deg"]
    assert s["optimised_J_m"] < s["start_J_m"] and s["optimised_J_m"] <= s["grid_best_J_m"] * (1 + 1e-3)
    g = s["gradient_start"]
    assert np.isclose(g["grad_m_per_rad"], g["fd_1e-5"], rtol=1e-2)  # piecewise smooth (a rotor on its bound)
    assert len(s["alpha0_path_deg"]) == s["iterations"]
    assert s["alpha_beta"] is None  # the full run only
    flown = s["outcomes_realistic"]
    assert list(flown) == ["optimised"]
    assert [r["rotor"] for r in flown["optimised"]] == [1, 2, 3, 4, 5, 6]
    assert all(r["outcome"] in ("full_pose", "yaw_released") for r in flown["optimised"])
    # the soft maximum lies within T ln 6 above the largest per-rotor value (T = 1 mm)
    v = np.asarray(s["optimised_per_rotor_m"])
    assert v.max() <= s["optimised_J_m"] <= v.max() + 1e-3 * math.log(6) + 1e-12
