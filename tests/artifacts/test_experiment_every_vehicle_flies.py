"""experiments/every_vehicle_flies.py --quick: auto gains fly the paper hexarotor (fully actuated), the x500
(under-actuated) and a random design on a 1 m step and a figure-eight sized to each, every verdict ok."""

import math
from pathlib import Path

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "every_vehicle_flies.py"


def test_every_vehicle_flies_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    rows = {r["name"]: r for r in s["rows"]}
    assert s["quick"] is True and set(rows) == {"paper_hexarotor", "x500", "random_00"}
    assert rows["paper_hexarotor"]["controller"] == "fully_actuated" and rows["x500"]["controller"] == "underactuated"
    for r in rows.values():
        step, eight = r["step"], r["figure_eight"]
        assert step["verdict"] == "ok" and eight["verdict"] == "ok" and step["stable"] and eight["stable"]
        rise, overshoot, settle = (step[k][0] for k in ("step_rise_time", "step_overshoot", "step_settling_time"))
        # the placed loops: a clean step (no integral zero in x), settled inside the flight
        assert 0.3 < rise < 4.0 and 0.0 <= overshoot < 0.05 and math.isfinite(settle) and settle < 4.5
        assert step["step_rise_time"][1] is None and step["saturation_fraction"] < 0.05
        assert eight["rmse_position"] < 0.1 and eight["max_growth_rate"] < 0
    # the fully actuated hexarotor's position bandwidth is set by its small level-attitude lateral force: slower
    assert rows["paper_hexarotor"]["step"]["step_rise_time"][0] > rows["x500"]["step"]["step_rise_time"][0]
