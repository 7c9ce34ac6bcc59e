"""A tilting flight's derivatives: the six-arm tilting hexarotor's pitch-up, gradient in the servo's time
constant and rate limit against central differences.
"""

import math

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.metrics import flight_metrics
from jaxrotor.reference import pitch_hover
from jaxrotor.tilting import (
    ExtendedVariable,
)


@pytest.fixture(scope="module")
def voliro():
    return presets.get("cs_ai_ting_6r")


# --------------------------------------------------------------------------- a tilting flight and its gradients


@pytest.fixture(scope="module")
def voliro_flight(voliro):
    """A 1.5 s pitch-up of the six-arm tilting hexarotor with a lagged, rate-limited servo (fixed-step Euler).

    One compiled function returns the loss, the trajectory and its metrics (computed inside the compiled
    call: evaluated op by op they cost more than four flights) and the gradient in
    ``(time_constant, rate_limit)``; the central differences use its value output.
    """
    ref = pitch_hover(pitch=math.radians(20.0), duration=1.5, ramp_time=1.0)
    flight = jr.Flight(reference=ref, allocator=ExtendedVariable(null_steps=1, alpha_limits=(-1.5, 1.5)),
                       actuators=jr.Actuators(servo=jr.FirstOrderServo(0.05, 0.9)),
                       integrator=jr.Integrator(solver=diffrax.Euler(), adaptive=False, dt=0.005),
                       save_dt=0.05)
    ctrl = jr.FullyActuatedSE3()

    def loss(x):
        f = eqx.tree_at(lambda f: (f.actuators.servo.time_constant, f.actuators.servo.rate_limit), flight, (x[0], x[1]))
        traj = jr.fly(voliro, ctrl, f)
        m = flight_metrics(traj, voliro, f)
        return m.rmse_position + 1e-2 * m.rmse_orientation + 1e-4 * m.mean_power, (traj, m)

    return flight, jax.jit(jax.value_and_grad(loss, has_aux=True))


def test_tilting_flight_derivatives_match_central_differences(voliro, voliro_flight):
    """d(tracking + power)/d(servo time constant, rate limit) agree with central differences to 1e-5."""
    _, loss_grad = voliro_flight
    x0 = jnp.asarray([0.05, 0.9])
    (_, (traj, m)), grad = loss_grad(x0)
    assert not bool(traj.diverged)
    alpha = np.asarray(traj.alpha)
    assert np.ptp(alpha) > 0.1  # the allocator tilted the arms in flight
    # Euler steps keep the integrated angle within the rate limit
    assert np.max(np.abs(np.diff(alpha, axis=0))) / 0.05 <= 0.9 * (1 + 1e-9)
    assert 0 < float(m.servo_saturation_fraction) < 1  # the rate limit is active part of the time
    assert float(m.saturation_fraction) == 0 and float(m.max_position_error) < 2e-2
    h = 1e-6
    for k in range(2):
        e = jnp.zeros(2).at[k].set(h)
        fd = (float(loss_grad(x0 + e)[0][0]) - float(loss_grad(x0 - e)[0][0])) / (2 * h)
        assert abs(fd) > 1e-6
        assert abs(float(grad[k]) - fd) <= 1e-5 * max(1.0, abs(fd)), (k, float(grad[k]), fd)
