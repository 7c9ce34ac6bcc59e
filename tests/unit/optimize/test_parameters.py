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


def test_zero_gains_under_a_parent_log_transform_are_held_and_named_ones_refused():
    """``{"controller": Log()}`` on the under-actuated controller's defaults (``K_pi = K_Ri = 0``): exp(theta)
    cannot move a zero gain, so those two leaves are held (listed in ``held``) and the other 12 gains are tuned;
    naming a zero gain itself under a log transform is refused with the fix, and holding everything is refused."""
    design = op.Design(jr.presets.cs_4r(), jr.UnderactuatedSE3())
    params = op.Parameters.select(design, {"controller": op.Log()})
    assert params.held == ("controller.K_pi", "controller.K_Ri")
    names = params.names(design)
    assert len(names) == 12 and not any("K_pi" in n or "K_Ri" in n for n in names)
    back = params.to_design(params.to_theta(design), design)
    np.testing.assert_array_equal(back.controller.K_pi, np.zeros(3))
    assert op.Parameters.select(op.Design(jr.presets.cs_4r(), jr.FullyActuatedSE3()), {"controller": op.Log()}).held == ()
    with pytest.raises(ValueError, match=r"`controller.K_pi` = \[0.0, 0.0, 0.0\] is invalid for a log transform.*"
                                         r"holds the zeros"):
        op.Parameters.select(design, {"controller.K_pi": op.Log()})
    # some zeros in a leaf (the auto gains' lateral position integral): those elements are held, the rest tuned
    part = op.Design(jr.presets.cs_4r(), jr.UnderactuatedSE3(K_pi=(0.0, 0.0, 1.5), K_Ri=0.2))
    params = op.Parameters.select(part, {"controller": op.Log()})
    assert params.held == ("controller.K_pi[0]", "controller.K_pi[1]") and len(params.names(part)) == 18
    theta = params.to_theta(part)
    assert bool(jnp.all(jnp.isfinite(theta.controller.K_pi)))
    np.testing.assert_array_equal(params.to_design(theta, part).controller.K_pi, [0.0, 0.0, 1.5])
    grad = jax.grad(lambda th: jnp.sum(params.to_design(th, part).controller.K_pi * jnp.array([1.0, 2.0, 3.0])))(theta)
    np.testing.assert_allclose(grad.controller.K_pi, [0.0, 0.0, 4.5], rtol=1e-14)
    with pytest.raises(ValueError, match="every selected leaf"):
        zero = jr.UnderactuatedSE3(K_p=0.0, K_v=0.0, K_R=0.0, K_w=0.0)
        op.Parameters.select(op.Design(jr.presets.cs_4r(), zero), {"controller": op.Log()})
