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
