"""``experiments/hover_envelope.py --quick``: holds 1 deg inside the reported hover envelope hold, 1 deg outside saturate."""

import math
from pathlib import Path

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "hover_envelope.py"


def test_hover_envelope_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["passed"] is True and (tmp_path / "hover_envelope.png").is_file()
    assert set(s["envelopes"]) == {"paper_hexarotor", "cant35", "cant15_dihedral20"}
    assert math.isclose(s["envelopes"]["paper_hexarotor"]["min_max_tilt_deg"], 13.384, abs_tol=2e-3)
    holds = s["holds"]
    assert len(holds) == 24 and {h["heading"] for h in holds} == {"pitch_down", "roll_left", "pitch_up", "roll_right"}
    for h in holds:
        assert math.isclose(abs(h["tilt_deg"] - h["theta_max_deg"]), 1.0, rel_tol=1e-9)
        if h["side"] == "inside":
            assert h["lp_feasible"] and h["saturation_fraction"] <= 0.05 and not h["diverged"]
        else:
            assert not h["lp_feasible"] and h["saturation_fraction"] >= 0.9
