"""Wind models: the Ornstein-Uhlenbeck gust's statistics, the drag force's closed form and validation."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor.wind import Wind, drag_force


def test_ornstein_uhlenbeck_gust_is_stationary_with_the_exact_correlation():
    """Stationary variance sigma^2 and lag-1 autocorrelation exp(-h / tau) of the exact discretisation."""
    w = Wind(gust_std=[0.5, 1.0, 0.2], gust_time_constant=0.05)
    h = 0.01
    g = np.asarray(w.gusts(jax.random.PRNGKey(0), 200000, h))
    a = math.exp(-h / 0.05)
    np.testing.assert_allclose(np.std(g, axis=0), [0.5, 1.0, 0.2], rtol=0.03)
    rho = [np.corrcoef(g[:-1, i], g[1:, i])[0, 1] for i in range(3)]
    np.testing.assert_allclose(rho, a, atol=0.01)
    # a longer lag: rho(k) = a^k
    rho5 = np.corrcoef(g[:-5, 1], g[5:, 1])[0, 1]
    assert abs(rho5 - a**5) < 0.02
    # the gust starts in its stationary law (no start-up transient): the first samples over many keys
    first = jax.vmap(lambda k: w.gusts(k, 2, h)[0])(jax.random.split(jax.random.PRNGKey(1), 4000))
    np.testing.assert_allclose(np.std(np.asarray(first), axis=0), [0.5, 1.0, 0.2], rtol=0.06)


def test_drag_force_closed_form_and_finite_gradient_at_rest():
    v_rel = jnp.array([3.0, 4.0, 0.0])  # |v_rel| = 5
    np.testing.assert_allclose(drag_force(v_rel, 0.3, 0.05), -0.3 * v_rel - 0.05 * 5.0 * v_rel)
    w = Wind(mean=[2.0, 0.0, 0.0], drag_linear=0.3, drag_quadratic=0.05)
    # hovering in a 2 m/s wind along x: pushed downwind by c1 w + c2 w^2
    np.testing.assert_allclose(w.force(jnp.zeros(3), w.air_velocity(jnp.zeros(3))), [0.3 * 2 + 0.05 * 4, 0, 0])
    g = jax.jacfwd(lambda v: drag_force(v, 0.3, 0.05))(jnp.zeros(3))
    np.testing.assert_allclose(g, -0.3 * np.eye(3))


@pytest.mark.parametrize("kwargs, match", [
    ({"gust_std": -0.5}, r"`gust_std`.*>= 0.*Fix"),
    ({"gust_time_constant": 0.0}, r"`gust_time_constant` = 0.0 is invalid.*> 0"),
    ({"drag_linear": float("inf")}, r"`drag_linear` = inf is invalid"),
    ({"mean": [1.0, float("nan"), 0.0]}, r"`mean`.*finite"),
])
def test_wind_refuses_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Wind(**kwargs)
