"""``experiments/aero_cant.py --quick``: the optimal cant of the paper hexarotor for a fast fixed-attitude figure-eight
with rotor drag on and off, by Adam and by a grid, and ``dJ/dalpha_0`` against central differences."""

import math
from pathlib import Path

import numpy as np

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "aero_cant.py"


def test_aero_cant_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["passed"] is True and (tmp_path / "aero_cant.png").is_file()
    assert {"rotor_drag_on", "rotor_drag_off", "gradient_check", "coefficients", "optimum_shift_deg"} <= set(s)

    # the coefficients: RotorPy Hummingbird's ratios against the Table II c_f, its c_D scaled by the frontal area
    c = s["coefficients"]
    assert math.isclose(c["rotor_drag_k_d"], 1.19e-4 / 5.57e-6 * 3.799e-5, rel_tol=1e-12)
    assert math.isclose(c["induced_inflow_k_z"], 2.32e-4 / 5.57e-6 * 3.799e-5, rel_tol=1e-12)
    assert np.allclose(c["parasitic_drag_c_D"], np.array([0.005, 0.005, 0.01]) * (0.385 / 0.17) ** 2, rtol=1e-12)
    assert s["flight"]["reference"]["peak_speed_m_s"] > 5.0

    # the gradient agrees with central differences in both flights, at three cants each
    rows = s["gradient_check"]
    assert sorted(r["case"] for r in rows) == ["rotor_drag_off"] * 3 + ["rotor_drag_on"] * 3
    for r in rows:
        assert {"alpha_deg", "grad", "fd", "rel_err", "case"} <= set(r)
        assert abs(r["grad"]) > 0.1 and r["rel_err"] == abs(r["grad"] - r["fd"]) / abs(r["fd"])
        assert r["rel_err"] <= 1e-6, r

    for case in ("rotor_drag_on", "rotor_drag_off"):
        r = s[case]
        assert {"alpha_opt_deg", "objective", "grid_alpha_deg", "grid_objective", "grid_best_alpha_deg"} <= set(r)
        grid, J = np.asarray(r["grid_alpha_deg"]), np.asarray(r["grid_objective"])
        assert len(grid) == len(J) == 11 and np.all(np.isfinite(J)) and r["grid_cell_deg"] == 5.0
        # Adam's optimum lies within one grid cell of the grid's minimum, and is at least as good
        assert abs(r["alpha_opt_deg"] - grid[np.argmin(J)]) <= r["grid_cell_deg"]
        assert r["objective"] <= J.min() * (1 + 1e-3)
        assert r["objective"] < r["start_objective"]  # descended from the same 45 deg start
        assert r["rotors_at_opt"]["min_rotor_input"] > 0  # every rotor pushes at the optimum

    on, off = s["rotor_drag_on"], s["rotor_drag_off"]
    # rotor drag changes the objective: at every cant of the grid, and at the start
    assert np.all(np.abs(np.asarray(on["grid_objective"]) - np.asarray(off["grid_objective"])) > 1e-3)
    assert s["objective_change_at_start"]["relative"] > 1e-3
    # without drag the position error does not depend on the cant (exact allocation): it is round-off
    assert off["terms_at_opt"]["tracking_rmse"] < 1e-9 and on["terms_at_opt"]["tracking_rmse"] > 0.01
    # pushing against the drag at fixed attitude takes more cant
    assert math.isclose(s["optimum_shift_deg"], on["alpha_opt_deg"] - off["alpha_opt_deg"], rel_tol=1e-12)
    assert s["optimum_shift_deg"] > 2.0
