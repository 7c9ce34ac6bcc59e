"""``experiments/fault_tolerant_tilt.py --quick``: the cant and dihedral of the paper hexarotor chosen together for its
worst single rotor loss (exact allocation), checked against a grid and central differences, and the losses of the
optimised design flown with clipped speeds and 30 ms motors."""

import math
from pathlib import Path

import numpy as np

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "fault_tolerant_tilt.py"


def test_fault_tolerant_tilt_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["passed"] is True and (tmp_path / "fault_tolerant_tilt.png").is_file()
    ab = s["alpha_beta"]
    (a_lo, a_hi), (b_lo, b_hi) = (np.degrees(b) for b in ab["bounds_rad"])
    a, b = ab["optimised_deg"]
    assert a_lo <= a <= a_hi and b_lo <= b <= b_hi
    cells = ab["grid_cell_deg"]
    assert abs(a - ab["grid_best_deg"][0]) <= cells[0] and abs(b - ab["grid_best_deg"][1]) <= cells[1]
    assert ab["optimised_J_m"] < ab["start_J_m"] and ab["optimised_J_m"] <= ab["grid_best_J_m"] * (1 + 1e-3)
    J = np.asarray(ab["grid_J_m"])
    assert J.shape == (len(ab["grid_alpha0_deg"]), len(ab["grid_beta0_deg"])) == (4, 3) and np.all(np.isfinite(J))
    assert ab["grid_best_J_m"] == J.min()
    g, fd = ab["gradient_start"]["grad_m_per_rad"], ab["gradient_start"]["fd_1e-5"]
    assert np.allclose(g, fd, rtol=1e-2)  # piecewise smooth (a rotor on its bound)
    assert len(ab["path_deg"]) == ab["iterations"] == 16
    flown = s["outcomes_realistic"]
    assert list(flown) == ["optimised_alpha_beta"]
    assert [r["rotor"] for r in flown["optimised_alpha_beta"]] == [1, 2, 3, 4, 5, 6]
    assert all(r["outcome"] in ("full_pose", "yaw_released") for r in flown["optimised_alpha_beta"])
    # the soft maximum lies within T ln 6 above the largest per-rotor value (T = 1 mm)
    v = np.asarray(ab["optimised_per_rotor_m"])
    assert v.max() <= ab["optimised_J_m"] <= v.max() + 1e-3 * math.log(6) + 1e-12
