"""experiments/tilting.py --quick: full pose, the 3x-speed figure-eight and the cant choice."""

import math
from pathlib import Path

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "tilting.py"


def test_tilting_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True
    fp = s["full_pose"]
    vol, fixed = fp["per_arm_tilting"], fp["fixed_paper"]
    assert vol["members"] == fixed["members"] == 2
    assert vol["hold_mae_position"] < 0.01 and vol["hold_mae_orientation"] < 0.01 and vol["reachable_share"] == 1.0
    assert vol["alpha_range"][1] - vol["alpha_range"][0] > 0.5  # the arms tilted to hold the pitch
    assert fixed["hold_saturation_fraction"] > 0 and fixed["reachable_share"] == 0.0
    fe = s["figure_eight"]
    assert len(fe["fixed"]) == 7 and fe["fixed"][-1]["alpha_deg"] == 25.0 and fe["fixed"][-1]["beta_deg"] == 10.0
    best = fe["best_fixed"]
    assert best["saturation_fraction"] == 0.0
    assert all(r["mean_power"] >= best["mean_power"] for r in fe["fixed"][:-1] if r["saturation_fraction"] == 0.0)
    cant = fe["cant_tilting"]
    assert math.isclose(fe["power_saving"], 1 - cant["mean_power"] / best["mean_power"], rel_tol=1e-12)
    assert 0 < fe["power_saving"] <= fe["power_saving_bound"] + 1e-9 and fe["window_s"] == [0.0, 5.0]
    lo, hi = math.radians(5.0), math.radians(40.0)
    assert lo - 1e-9 <= cant["alpha_min"] <= cant["alpha_max"] <= hi + 1e-9
    cc = s["cant_choice"]
    assert cc["online_max_error_deg"] <= 0.5 and cc["table_max_error_deg"] <= cc["table_grid_deg"] + 1e-9
    assert cc["online_us_per_call"] > 0 and cc["table_us_per_call"] > 0
