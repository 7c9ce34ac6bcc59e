"""Controllers: the under-actuated controller at zero commanded force (values derived by hand in the comments)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.control import UnderactuatedSE3
from jaxrotor.reference import RefSample


# --------------------------------------------------------------------------- under-actuated controller


def _free_fall_ref(g, j=(0.0, 0.0, 0.0)):
    """A reference accelerating at -g e3 (free fall): the commanded force m (g e3 + a_r) is zero."""
    z = jnp.zeros(3)
    return RefSample(p=jnp.array([0.0, 0.0, 1.0]), v=jnp.array([0.0, 0.0, -2.0]), a=jnp.array([0.0, 0.0, -g]),
                     j=jnp.asarray(j, dtype=float), R=jnp.eye(3), omega=z, omega_dot=z, yaw=jnp.asarray(0.0))


@pytest.mark.parametrize("jerk", [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0)])
def test_underactuated_controller_at_zero_commanded_force_is_finite(jerk):
    """On the free-fall reference with zero tracking error f_w = 0: the desired thrust axis is undefined.

    The controller keeps b3 = e3, so R_d = I (yaw 0); with R = I and omega = 0 the wrench is exactly
    zero (thrust f_w . R e3 = 0, attitude and rate errors 0). Before, b3 = f_w/|f_w| = 0/0 gave NaN.
    The gradient with respect to the state and the gains is finite too.
    """
    quad = presets.cs_4r()
    ctrl = UnderactuatedSE3()
    ref = _free_fall_ref(float(quad.gravity), jerk)
    state = jr.initial_state(quad, p=ref.p, v=ref.v, rotor_speed="hover")
    wrench, d_int = eqx.filter_jit(ctrl)(quad, state, ctrl.init_state(quad), ref)  # compiled: op by op took seconds
    np.testing.assert_allclose(wrench, np.zeros(6), atol=1e-12)
    assert bool(jnp.all(jnp.isfinite(d_int.int_R)))

    def loss(ctrl, p):
        s = jr.initial_state(quad, p=p, v=ref.v, rotor_speed="hover")
        return jnp.sum(ctrl(quad, s, ctrl.init_state(quad), ref)[0] ** 2)

    g_ctrl, g_p = eqx.filter_jit(jax.grad(loss, argnums=(0, 1)))(ctrl, ref.p)
    for leaf in jax.tree_util.tree_leaves((g_ctrl, g_p)):
        assert bool(jnp.all(jnp.isfinite(leaf)))


# --------------------------------------------------------------------------- commanded attitude


def _figure_eight_ref():
    return jr.reference.FigureEight(10.0, period=5.0, yaw=0.3)(jnp.asarray(0.7))


def test_commanded_attitude_is_the_reference_for_the_fully_actuated_controller_and_r_d_for_the_other():
    """Fully actuated: ``ref.R``. Under-actuated: ``R_d`` with body z along the desired force and heading
    ``ref.yaw``, the attitude its attitude law regulates to (its torque vanishes at ``R = R_d`` with the
    feed-forward rate). A controller that does not say falls back to ``ref.R``."""
    quad = presets.cs_4r()
    ref = _figure_eight_ref()
    state = jr.initial_state(quad, p=ref.p + jnp.array([0.05, -0.02, 0.01]), v=ref.v, rotor_speed="hover")
    fa = jr.FullyActuatedSE3()
    np.testing.assert_array_equal(fa.commanded_attitude(quad, state, fa.init_state(quad), ref), ref.R)
    ua = UnderactuatedSE3()
    R_d = ua.commanded_attitude(quad, state, ua.init_state(quad), ref)
    np.testing.assert_allclose(R_d.T @ R_d, np.eye(3), atol=1e-14)
    f_w = quad.mass * (jnp.array([0.0, 0.0, quad.gravity]) + ref.a + ua.K_p * (ref.p - state.p) + ua.K_v * (ref.v - state.v))
    np.testing.assert_allclose(R_d[:, 2], f_w / jnp.linalg.norm(f_w), atol=1e-14)
    assert float(jnp.dot(R_d[:, 1], jnp.array([jnp.cos(0.3), jnp.sin(0.3), 0.0]))) == pytest.approx(0.0, abs=1e-14)
    assert float(jnp.linalg.norm(jr.so3.attitude_error(R_d, ref.R))) > 0.05  # the tilt the path needs
    at_R_d = eqx.tree_at(lambda s: s.R, state, R_d)
    assert float(jnp.linalg.norm(jr.so3.attitude_error(at_R_d.R, ua.commanded_attitude(quad, at_R_d,
                                                                                         ua.init_state(quad), ref)))) < 1e-6

    class Own(jr.control.AbstractController):
        @property
        def required_rank(self):
            return 4

        def __call__(self, platform, state, integral, ref):
            return jnp.zeros(6), integral

    np.testing.assert_array_equal(Own().commanded_attitude(quad, state, Own().init_state(quad), ref), ref.R)


@pytest.mark.parametrize("rate", [None, 100.0])
def test_trajectory_records_the_commanded_attitude(rate):
    """Both loops record ``R_cmd``: the continuous one and the ticked one (from the measured state)."""
    quad = presets.cs_4r()
    ua = UnderactuatedSE3()
    flight = jr.Flight(jr.reference.FigureEight(0.2, period=5.0), control_rate=rate,
                       integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.05)
    tr = jr.fly(quad, ua, flight)
    assert tr.R_cmd.shape == (5, 3, 3)
    k = 3
    state = jax.tree_util.tree_map(lambda x: x[k], jr.dynamics.VehicleState(
        p=tr.p, v=tr.v, R=tr.R, omega=tr.omega, rotor_speed=tr.rotor_speed, alpha=tr.alpha, beta=tr.beta))
    integral = jax.tree_util.tree_map(lambda x: x[k], tr.controller_state)
    expect = ua.commanded_attitude(quad, state, integral, flight.reference(tr.t[k]))
    np.testing.assert_allclose(tr.R_cmd[k], expect, atol=1e-12)
