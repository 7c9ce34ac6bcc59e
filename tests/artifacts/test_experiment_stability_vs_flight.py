"""experiments/stability_vs_flight.py --quick: the linearised verdict against a MuJoCo C flight, one unstable and one
stable case of the paper hexarotor with rotor inertia and 30 ms motors."""

import math
from pathlib import Path

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "stability_vs_flight.py"


def test_stability_vs_flight_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["flight_s"] == 4.0 and s["control_rate_hz"] == 1000.0
    assert (tmp_path / "stability_vs_flight.png").is_file()
    unstable, stable = s["cases"]
    assert len(s["cases"]) == 2 and s["matches"] == 2 and s["n_unstable"] == 1 and s["n_stable"] == 1
    for case in (unstable, stable):
        assert case["design"] == "hexarotor" and case["match"] is True
        assert math.isclose(case["J_r_engine"], 1.095e-4, rel_tol=1e-9)  # the engine spins the case's rotor inertia
        assert math.isfinite(case["flight"]["growth"]) and math.isfinite(case["prediction"]["growth"])
    # Table III-like yaw gains with J_r and 30 ms motors: the yaw pair grows on both layers at about +6 /s, 4.5 Hz
    p, f = unstable["prediction"], unstable["flight"]
    assert p["stable"] is False and p["axis"] == "yaw" and 4.0 < p["growth"] < 9.0 and 3.5 < p["frequency_hz"] < 5.5
    assert f["unstable"] is True and f["growth"] > 0.0 and abs(f["growth"] - p["growth"]) < 0.2 * p["growth"]
    assert f["exit"] == "ceiling" and f["e_max"] > 1e3 * f["e0"]  # it left the linear range within the flight
    # low yaw gains: stable by the analysis (out of the undecidable band) and the flight's error decays
    p, f = stable["prediction"], stable["flight"]
    assert p["stable"] is True and p["growth"] < -s["band"]
    assert f["unstable"] is False and f["growth"] < 0.0 and f["e_end"] < f["e0"]
