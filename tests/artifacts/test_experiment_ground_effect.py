"""``experiments/ground_effect.py --quick``: the flown hover thrust near the floor is the Cheeseman-Bennett closed
form on both layers, and the ground effect cushions a landing on the physics layer."""

import math
from pathlib import Path

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "ground_effect.py"


def test_ground_effect_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["vehicle"] == "x500"
    assert (tmp_path / "ground_effect.png").is_file()
    R, weight = s["rotor_radius_m"], s["mass_kg"] * s["gravity"]
    assert R == 0.127 and 1.7 < s["rest_hub_height_over_radius"] < 1.8  # 10-inch propellers; gear on the floor
    rows = s["hover"]
    assert [r["height_over_radius"] for r in rows] == [0.5, 1.0, 2.0, 4.0, 16.0]
    for r in rows:
        for key in ("height_over_radius", "closed_form_thrust", "analytic_thrust", "physics_thrust",
                    "rel_err_analytic"):
            assert key in r, key
        x = R / (4.0 * r["height_over_radius"] * R)
        assert math.isclose(r["closed_form_thrust"], weight * (1.0 - x * x), rel_tol=1e-12)
        # the flown analytic hover needs the closed form's thrust (settled to 1e-4; measured 3e-5 in 6 s)
        assert abs(r["rel_err_analytic"]) <= 1e-4, r
        assert abs(r["analytic_thrust"] / r["closed_form_thrust"] - 1.0) <= 1e-4, r  # and it hovers at the target
        assert abs(r["analytic_height_over_radius"] - r["height_over_radius"]) <= 0.01
    # 0.5 R: a third less thrust than far from the floor (T/T_inf = 4/3), flown
    assert math.isclose(rows[0]["analytic_thrust"], 0.75 * weight, rel_tol=1e-4)
    assert rows[-1]["analytic_thrust"] > rows[2]["analytic_thrust"] > rows[1]["analytic_thrust"] > rows[0]["analytic_thrust"]
    physics = [r for r in rows if r["physics_thrust"] is not None]
    assert [r["height_over_radius"] for r in physics] == [0.5]
    assert physics[0]["physics_floor"] is False  # the gear would be below the floor at 0.5 R: flown without it
    assert abs(physics[0]["rel_err_physics"]) <= 1e-4
    assert math.isclose(physics[0]["physics_thrust"], physics[0]["analytic_thrust"], rel_tol=1e-5)

    land = s["landing"]
    w, wo = land["with_ground_effect"], land["without"]
    assert w["touched_down"] and wo["touched_down"] and not w["diverged"] and not wo["diverged"]
    assert s["landing_reference"] == {"start_z_m": 1.0, "end_z_m": -0.03, "descent_s": 3.0, "hold_s": 2.0}
    # the cushion brakes the descent: a later touchdown (measured +0.09 s), at about half the vertical speed
    # (measured -0.10 against -0.19 m/s) and with about half the peak floor force (16 against 32 N)
    assert w["touchdown_time_s"] > wo["touchdown_time_s"] + 0.02 and land["touchdown_delay_s"] > 0.02
    assert wo["vertical_speed_at_contact_m_s"] < w["vertical_speed_at_contact_m_s"] < 0.0
    assert abs(w["vertical_speed_at_contact_m_s"]) < 0.75 * abs(wo["vertical_speed_at_contact_m_s"])
    assert 0.0 < w["peak_contact_force_N"] < 0.75 * wo["peak_contact_force_N"]
    # near the floor the controller asks for less thrust (measured 2.1 % of m g less; 1 - 1/(T/T_inf) is 2.1 % at
    # the resting height 1.73 R)
    assert math.isclose(w["closed_form_thrust_over_weight_at_rest_height"], 0.9792, abs_tol=1e-4)
    assert 0.005 * weight < land["thrust_reduction_before_contact_N"] < 0.05 * weight
    # both layers see one ground effect before contact: the same thrust profile, the same time at z = 0
    assert w["max_thrust_difference_before_contact_over_weight"] <= 1e-3
    assert abs(w["analytic"]["touchdown_time_s"] - w["touchdown_time_s"]) <= 0.02
