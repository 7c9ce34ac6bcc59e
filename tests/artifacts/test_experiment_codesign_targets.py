"""``experiments/codesign_targets.py --quick``: the gradient co-design against CMA-ES on the quadrotor example, the
hypercube check around its optimum and the gradient against central differences."""

import math
from pathlib import Path

import numpy as np

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "codesign_targets.py"


def test_codesign_targets_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["passed"] is True and (tmp_path / "codesign_convergence.png").is_file()
    (r,) = s["results"]
    assert r["name"] == "design_endurance_quad" and r["sense"] == "minimize" and r["feasible"] is True
    g, c = r["gradient"], r["cma"]
    # CMA-ES got ten times the gradient method's evaluations, for each seed
    assert c["budget"] == 10 * g["evaluations"] and all(x["evaluations"] >= c["budget"] for x in c["seeds"])
    assert r["gradient_vs_cma"] == (c["median_best_objective"] - g["best_objective"]) / abs(c["median_best_objective"])
    # the hypercube's best feasible point is not better than the optimum by more than 1 %
    assert r["lhs"]["points"] == 256 and r["lhs"]["feasible"] > 0 and r["lhs_vs_gradient"] <= 0.01
    # jax.grad of the whole mission loss agrees with central differences for every variable
    gc = r["gradient_check"]
    assert gc["variables"] == ["arm_length", "arm_tube_diameter", "propeller_diameter", "propeller_pitch",
                              "battery_capacity"]
    fd, gr = np.asarray(gc["central_difference"]), np.asarray(gc["grad"])
    assert np.allclose(gr, fd, rtol=0, atol=1e-4 * np.linalg.norm(fd)) and math.isfinite(gc["max_relative_error"])
