"""The optimisation loop on design-only problems: the step compiles once, bounds, infeasible starts and
option checks.

The tuning flight (``configs/tune_gains.toml`` shortened to 1 s), history, resume and vmapped batches are
in ``tests/integration/test_optimize.py``.
"""


import numpy as np
import optax
import pytest

import jaxrotor as jr
from jaxrotor import optimize as op
from jaxrotor.optimize import objectives as ob

# --------------------------------------------------------------------------- design-only problems (cheap)


def _tilt_problem(objective, transform=None, **platform):
    design = op.Design(jr.presets.paper_hexarotor(**platform), jr.FullyActuatedSE3())
    tf = transform or op.Interval(0.0, 1.2)
    params = op.Parameters.select(design, {"platform.alpha": tf, "platform.beta": tf})
    return op.DesignProblem(design, params, objective)


def test_step_compiles_once_with_rejections(tmp_path):
    """eqx.debug.assert_max_traces(max_traces=1) on both compiled functions over a run with rejected steps."""
    problem = _tilt_problem(ob.Conditioning() + 10.0 * ob.HoverEfficiency())
    stepper = op.make_step(max_traces=1)
    result = op.minimize(problem, optax.adam(0.3), op.MinimizeOptions(iterations=25, max_increase=1.0 + 1e-9),
                         out_dir=tmp_path, progress=False, stepper=stepper)
    accepted = [r["accepted"] for r in result.history]
    assert 0.0 in accepted and 1.0 in accepted  # the large step overshoots and gets rejected
    assert result.final_loss < result.initial_loss
    assert min(r["scale"] for r in result.history) < 1.0


def test_box_bounds_are_enforced_by_projection():
    # minimising the hover efficiency pushes both angles up, into the box's upper bound
    problem = _tilt_problem(-1.0 * ob.HoverEfficiency(), op.Box(0.0, 0.5))
    result = op.minimize(problem, optax.sgd(0.5), op.MinimizeOptions(iterations=20), progress=False)
    ab = problem.parameters.flatten(result.design)
    np.testing.assert_array_equal(ab, [0.5, 0.5])


def test_infeasible_start_stops_cleanly():
    design = op.Design(jr.presets.paper_hexarotor(rotor_speed_max=300.0), jr.FullyActuatedSE3())
    params = op.Parameters.select(design, {"platform.alpha": op.Interval(0.0, 1.0)})
    problem = op.DesignProblem(design, params, ob.LateralCapability(n_directions=4))
    result = op.minimize(problem, optax.adam(0.05), op.MinimizeOptions(iterations=5), progress=False)
    assert result.stop_reason == "infeasible_start" and result.iterations == 1


# --------------------------------------------------------------------------- options, problems, parameters


def test_minimize_options_validate_with_clear_errors():
    assert op.MinimizeOptions().iterations == 100
    with pytest.raises(ValueError, match="`iterations` = 0"):
        op.MinimizeOptions(iterations=0)
    with pytest.raises(ValueError, match="`max_increase` = 0.9"):
        op.MinimizeOptions(max_increase=0.9)
    with pytest.raises(ValueError, match="`reject_decay` = 1.0"):
        op.MinimizeOptions(reject_decay=1.0)
    with pytest.raises(ValueError, match="`patience` = 0"):
        op.MinimizeOptions(patience=0)


def test_a_flight_objective_needs_a_flight():
    design = op.Design(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3())
    params = op.Parameters.select(design, {"controller": op.Log()})
    with pytest.raises(ValueError, match="needs a flight but `design.flight` is None"):
        op.DesignProblem(design, params, ob.Tracking() + ob.Conditioning())
