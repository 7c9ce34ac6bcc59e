"""experiments/robust_tuning.py --quick: nominal vs robust tuning judged on a held-out randomized batch."""

import math
from pathlib import Path

import numpy as np
import pytest
from .test_experiments import run_and_check

from jaxrotor.control import TABLE_III

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "robust_tuning.py"


def test_robust_tuning_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["control_rate_hz"] == 500.0 and s["heldout_size"] == 8
    held = s["heldout"]
    assert set(held) == {"detuned (Table III / 4)", "Table III", "nominal tuned", "robust tuned"}
    for name, h in held.items():
        rmse = np.asarray(h["rmse_position_all"], dtype=float)
        assert rmse.shape == (8,) and h["flights"] == 8, name
        if h["diverged"] == 0:
            assert h["rmse_position"] == pytest.approx(rmse.mean()) and h["rmse_position_max"] == pytest.approx(rmse.max())
            assert 0 < h["rmse_position"] <= h["rmse_position_cvar"] <= h["rmse_position_max"] < 0.1
    det, rob = held["detuned (Table III / 4)"], held["robust tuned"]
    assert s["improvement"] == pytest.approx(det["rmse_position"] / rob["rmse_position"]) and s["improvement"] > 1.0
    assert rob["diverged"] == 0
    # result.json's held-out block of the robust run is the same measurement as the experiment's own
    assert s["heldout_metrics"]["initial"]["rmse_position"] == pytest.approx(det["rmse_position"])
    assert s["heldout_metrics"]["final"]["rmse_position"] == pytest.approx(rob["rmse_position"])
    # gains side by side with Table III
    assert s["gains"]["Table III"] == {g: list(v) for g, v in TABLE_III.items()}
    for name in ("nominal tuned", "robust tuned"):
        assert all(len(v) == 3 and all(x > 0 and math.isfinite(x) for x in v) for v in s["gains"][name].values())
    assert s["benchmark"] is None  # full mode only (a timing)
    # the physics layer (MuJoCo) re-flies the first 2 held-out flights with the same noise, gusts and drag
    phys = s["physics"]
    assert set(phys) == set(held) and s["physics_size"] == 2
    assert s["physics_metrics"]["initial"] == phys["detuned (Table III / 4)"]
    assert s["physics_metrics"]["final"] == phys["robust tuned"]
    for name, h in phys.items():
        assert h["flights"] == 2 and h["diverged"] == 0, name
        assert 0 < h["rmse_position"] <= h["rmse_position_max"] < 0.1, name
    for name in ("detuned (Table III / 4)", "robust tuned"):
        # with their low yaw-rate gains the two layers agree on each flight (same vehicle, noise and wind);
        # Table III's K_w meets the propellers' spin-up reaction torque on the physics layer (docs/physics.md)
        np.testing.assert_allclose(phys[name]["rmse_position_all"], held[name]["rmse_position_all"][:2], rtol=0.1,
                                   err_msg=name)
    assert s["physics_improvement"] == pytest.approx(phys["detuned (Table III / 4)"]["rmse_position"]
                                                     / phys["robust tuned"]["rmse_position"])
    assert (tmp_path / "errors.png").is_file() and (tmp_path / "robust" / "result.json").is_file()
