"""Parameter transforms and selections: round trips, box projection, selection by path and filter spec, errors."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import optimize as op
from jaxrotor.flight import Flight


# --------------------------------------------------------------------------- options, problems, parameters


@pytest.mark.parametrize("tf, x", [(op.Identity(), -2.0), (op.Log(), 3.0), (op.Interval(-1.0, 2.0), 0.5),
                                   (op.LogInterval(0.1, 100.0), 7.0), (op.Box(0.0, 1.0), 0.25)])
def test_transforms_round_trip(tf, x):
    x = jnp.asarray(x)
    assert float(tf.forward(tf.inverse(x))) == pytest.approx(float(x), rel=1e-12)


def test_box_projects_and_the_others_do_not():
    theta = jnp.array([-1.0, 0.5, 2.0])
    np.testing.assert_array_equal(op.Box(0.0, 1.0).project(theta), [0.0, 0.5, 1.0])
    for tf in (op.Identity(), op.Log(), op.Interval(0.0, 1.0), op.LogInterval(0.1, 1.0)):
        np.testing.assert_array_equal(tf.project(theta), theta)


def test_selection_by_path_and_filter_spec():
    flight = Flight(jr.reference.Hover((0.0, 0.0, 1.0), 0.5), actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)))
    design = op.Design(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3(), flight)
    params = op.Parameters.select(design, {"controller": op.Log(), "controller.K_R": op.LogInterval(1.0, 500.0),
                                           "platform.beta": None, "flight.actuators.motor.time_constant": op.Log()})
    names = params.names(design)
    assert len(names) == 18 + 1 + 1 and "platform.beta" in names and "controller.K_R[2]" in names
    assert "flight.actuators.motor.time_constant" in names
    sel, rest = params.partition(design)
    assert sel.platform.alpha is None and rest.platform.beta is None
    theta = params.to_theta(design)
    assert isinstance(theta.controller.K_R, jax.Array)
    back = params.to_design(theta, design)
    np.testing.assert_allclose(params.flatten(back), params.flatten(design), rtol=1e-12)
    values = params.flatten(design) * 2.0
    np.testing.assert_allclose(params.flatten(params.unflatten(values, design)), values, rtol=1e-15)
    tfs = jax.tree_util.tree_leaves(params.transforms, is_leaf=lambda t: isinstance(t, op.AbstractTransform))
    assert sum(isinstance(t, op.LogInterval) for t in tfs) == 1  # the later, more specific entry wins


def test_selection_errors_name_the_problem():
    design = op.Design(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3())
    with pytest.raises(ValueError, match="no field `alpah`"):
        op.Parameters.select(design, {"platform.alpah": None})
    with pytest.raises(ValueError, match="outside its open interval"):
        op.Parameters.select(design, {"platform.alpha": op.Interval(0.5, 1.0)})
    with pytest.raises(ValueError, match="log transform"):
        op.Parameters.select(design, {"platform.beta": op.Log(), "controller": None} | {"platform.delta": op.Log()})
    with pytest.raises(ValueError, match="no floating-point array leaves"):
        op.Parameters.select(design, {"platform.name": None})
    with pytest.raises(ValueError, match="has 3 entries for 1 selected"):
        op.Parameters.select(design, {"platform.alpha": None}).unflatten([1.0, 2.0, 3.0], design)
