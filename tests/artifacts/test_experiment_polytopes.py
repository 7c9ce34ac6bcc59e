"""experiments/polytopes.py --quick: closed forms, exact and differentiable curves, optax optima, BoxLS."""

import math
from pathlib import Path

import numpy as np
import pytest
from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "polytopes.py"
NAMES = ("zero_moment_force_volume", "hover_section_area", "volume_above_hover")


def test_polytopes_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and len(s["alpha_deg"]) == 9 and s["alpha_deg"][-1] == 80.0
    for name in NAMES:
        ex, cf = np.asarray(s["exact"][name]), np.asarray(s["closed_form"][name])
        assert ex[0] == pytest.approx(0.0, abs=1e-9 * ex.max())  # no cant, no lateral force: flat F_B
        np.testing.assert_allclose(ex, cf, rtol=1e-9, atol=1e-9 * ex.max())
        assert abs(s["argmax_optax_deg"][name] - s["argmax_exact_deg"][name]) <= 0.3
        assert s["argmax_exact_deg"][name] == pytest.approx(s["argmax_closed_form_deg"][name], abs=1e-3)
    # V_FB ~ cos(a) sin(a)^2 peaks at tan(a) = sqrt(2)
    assert s["argmax_exact_deg"]["zero_moment_force_volume"] == pytest.approx(math.degrees(math.atan(math.sqrt(2))),
                                                                             abs=1e-4)
    paper, flat = s["family"]["paper_hexarotor (25°/10°)"], s["family"]["cs_a0_ted_6r (25°/0°)"]
    assert paper["zero_moment_force_volume"] > 0 and flat["zero_moment_force_volume"] > 0
    assert set(s["presets"]) >= {"paper_hexarotor", "cs_4r", "hex_s550", "octo_x8"}
    assert s["presets"]["hex_s550"]["zero_moment_force_volume"] == 0.0  # collinear rotors: F_B is a segment
    assert "lower-dimensional" in s["presets"]["hex_s550"]["polytope_notes"]["zero_moment_force_volume"]
    # at the singular cant the yaw row of M vanishes (rank M = 2), yet F_B keeps the closed form (docs/analysis.md)
    sing = s["singular_cant"]
    assert sing["rank_M"] == 2 and sing["alpha_deg"] == pytest.approx(4.5463, abs=1e-3)
    assert sing["V_FB_exact"] == pytest.approx(sing["V_FB_closed_form"], rel=1e-9)
    a = s["allocators"]
    assert a["BoxLS"]["weighted_cost_mean"] <= min(a["Clip"]["weighted_cost_mean"],
                                                   a["TorquePriority"]["weighted_cost_mean"])
    assert a["BoxLS"]["torque_error_max_Nm"] < a["Clip"]["torque_error_max_Nm"]
    assert (tmp_path / "polytopes.png").is_file()
