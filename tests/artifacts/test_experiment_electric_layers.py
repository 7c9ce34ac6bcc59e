"""``experiments/electric_layers.py --quick``: the electric motor and battery flown on both layers agree."""

from pathlib import Path

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "electric_layers.py"


def test_electric_layers_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["duration_s"] == 4.0
    m = s["metrics"]
    for key in ("energy_wh", "endurance_profile_s"):
        assert abs(m[key]["relative_difference"]) <= 0.005, m[key]
        assert m[key]["analytic"] > 0 and m[key]["physics"] > 0
    assert 0.99 < m["soc_end"]["physics"] < 1.0  # 4 s of a 5000 mAh pack
    w = s["physics_work_J"]
    assert abs(w["terminal"] - (w["shaft"] + w["copper"] + w["no_load"] + w["esc"])) <= 1e-9 * w["terminal"]
