"""``experiments/endurance_vs_cant.py --quick``: hover endurance of the paper hexarotor with parts against its cant."""

import math
from pathlib import Path

import numpy as np

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "endurance_vs_cant.py"


def test_endurance_vs_cant_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["passed"] is True and (tmp_path / "endurance_vs_cant.png").is_file()
    w = s["worked_example"]
    # shaft power scales as (cos alpha_0 cos beta_0)^(-3/2) for the same thrust per unit weight
    assert math.isclose(w["shaft_power_ratio"], w["shaft_power_ratio_closed_form"], rel_tol=1e-9)
    assert math.isclose(w["shaft_power_ratio_closed_form"],
                        (math.cos(math.radians(25.0)) * math.cos(math.radians(10.0))) ** -1.5, rel_tol=1e-12)
    assert w["cost_s"] == w["flat_endurance_s"] - w["paper_endurance_s"] and w["cost_s"] > 0
    assert abs(w["cost_s"] - 168.3) < 1.0
    t = np.asarray(s["endurance_s"])
    assert np.all(np.diff(t) < 0)  # more cant, less flight time
    assert math.isclose(s["grad_endurance_alpha0_s_per_rad"], s["central_difference_s_per_rad"], rel_tol=1e-6)
