"""Sensor noise models: their statistics, the measurement they produce and validation."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor import so3
from jaxrotor.dynamics import VehicleState
from jaxrotor.sensors import Sensors, measure


def test_sensor_draw_has_the_configured_statistics_and_is_reproducible():
    s = Sensors([0.01, 0.02, 0.03], 0.05, 0.002, 0.1, velocity_bias_std=0.2, delay=1)
    key = jax.random.PRNGKey(11)
    d = s.draw(key, 20000)
    np.testing.assert_array_equal(d.white, s.draw(key, 20000).white)  # same key, same noise
    assert not np.allclose(d.white, s.draw(jax.random.PRNGKey(12), 20000).white)
    std = np.std(np.asarray(d.white), axis=0)
    # sample std of n normal draws: relative standard error 1 / sqrt(2 n) = 0.5 %; allow 4 of them
    np.testing.assert_allclose(std, np.asarray(s.white_std), rtol=0.02)
    np.testing.assert_allclose(np.mean(np.asarray(d.white), axis=0), 0.0, atol=4 * 0.1 / math.sqrt(20000))
    assert np.all(np.asarray(d.bias)[[0, 2, 3]] == 0.0) and np.all(np.asarray(d.bias[1]) != 0.0)
    # the bias is drawn per flight: its spread over many keys is the configured std
    biases = jax.vmap(lambda k: s.draw(k, 1).bias[1])(jax.random.split(key, 4000))
    np.testing.assert_allclose(np.std(np.asarray(biases), axis=0), 0.2, rtol=0.06)


def test_measure_adds_the_errors_and_keeps_the_attitude_a_rotation():
    R = so3.exp(jnp.array([0.3, -0.2, 0.5]))
    st = VehicleState(p=jnp.array([1.0, 2.0, 3.0]), v=jnp.array([0.1, 0.0, -0.1]), R=R, omega=jnp.array([0.2, 0.1, 0]),
                      rotor_speed=jnp.ones(4), alpha=jnp.zeros(4), beta=jnp.zeros(4))
    err = jnp.array([[0.01, 0.0, 0.0], [0.0, 0.02, 0.0], [0.0, 0.0, 0.05], [0.1, 0.0, 0.0]])
    m = measure(st, err)
    np.testing.assert_allclose(m.p, st.p + err[0])
    np.testing.assert_allclose(m.v, st.v + err[1])
    np.testing.assert_allclose(m.omega, st.omega + err[3])
    # a body-frame rotation of 0.05 rad about z: R_m = R R_z(0.05)
    np.testing.assert_allclose(m.R, R @ so3.rot_z(0.05), atol=1e-14)
    assert float(so3.orthonormality_error(m.R)) < 1e-14
    assert m.rotor_speed is st.rotor_speed


@pytest.mark.parametrize("kwargs, match", [
    ({"position_std": -0.01}, r"`position_std` = \[-0.01, -0.01, -0.01\] is invalid.*Fix"),
    ({"rate_std": float("nan")}, r"`rate_std` = \[nan, nan, nan\] is invalid.*finite"),
    ({"attitude_bias_std": [0.0, -1.0, 0.0]}, r"`attitude_bias_std`.*>= 0"),
    ({"delay": -1}, r"`delay` = -1 is invalid.*Fix"),
    ({"delay": 1.5}, r"`delay` = 1.5 is invalid"),
])
def test_sensors_refuse_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Sensors(**kwargs)
