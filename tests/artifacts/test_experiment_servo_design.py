"""experiments/servo_design.py --quick: the slowest tilt servo holding the full-pose manoeuvre, gradient vs sweep."""

import math
from pathlib import Path

import numpy as np
from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "servo_design.py"


def test_servo_design_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["horizon_s"] == 3.0 and s["bound_m"] == 0.01
    tau, (lo, hi) = s["found_time_constant"], s["sweep_boundary_cell"]
    taus, errs = np.asarray(s["sweep_time_constants"]), np.asarray(s["sweep_errors_m"])
    # the boundary cell is where the sweep crosses the bound, and the Newton answer lies in it
    j = int(np.searchsorted(taus, lo))
    assert math.isclose(taus[j], lo) and math.isclose(taus[j + 1], hi)
    assert errs[j] <= s["bound_m"] < errs[j + 1]
    assert lo <= tau <= hi
    assert abs(s["found_error_m"] - s["bound_m"]) <= 1e-6 * s["bound_m"]
    # the derivative through the flight agrees with the central difference, and e grows with tau
    assert s["found_de_dlntau"] > 0
    assert math.isclose(s["found_de_dlntau"], s["central_difference_de_dlntau"], rel_tol=1e-4)
    # the config's own servo (50 ms) is faster than the slowest one allowed, and its flight is within the bound
    assert s["config_time_constant"] < tau
    assert np.interp(math.log(s["config_time_constant"]), np.log(taus), errs) < s["bound_m"]
    assert s["found_saturation_fraction"] == 0.0 and s["found_diverged"] is False
