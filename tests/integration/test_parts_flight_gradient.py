"""The gradient of a closed-loop flight loss with respect to the parts (arm length, propeller diameter, battery
mass, payload offset) agrees with central differences: the whole chain parts -> mass model and propulsion ->
platform -> flight -> loss is differentiable."""

from __future__ import annotations

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.io.platform_table import load_platform
from jaxrotor.metrics import position_error, rms_norm

from partsref import CONTRACT, NAMES, THETA0, central, vehicle  # noqa: E402


@pytest.fixture
def no_persistent_cache():
    """Compile this test's programs without writing them to the persistent cache: one run of the suite aborted
    inside JAX's cache write of this gradient program (a worker crash, not a test failure)."""
    before = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    yield
    jax.config.update("jax_enable_compilation_cache", before)


def test_flight_loss_gradient(no_persistent_cache):
    """RMSE of the position error of a 1 s closed-loop transfer (fixed-step Tsit5, continuous-time controller,
    first-order motors, rotor inertia from the parts)."""
    parts = load_platform(CONTRACT).parts
    ref = jr.reference.Transfer(start=(0.0, 0.0, 1.0), end=(0.3, -0.2, 1.2), duration=1.0)
    # a 20 ms motor: the parts' rotor inertia J_r acts (gyroscopic and spin-up reaction torques)
    flight = jr.Flight(reference=ref, integrator=jr.Integrator(solver=diffrax.Tsit5(), adaptive=False, dt=0.01),
                       save_dt=0.05, actuators=jr.dynamics.Actuators(motor=jr.dynamics.FirstOrderMotor(0.02)))
    ctrl = jr.UnderactuatedSE3()

    @jax.jit
    def loss(th):
        return rms_norm(position_error(jr.fly(vehicle(parts, th), ctrl, flight)))

    exact = np.asarray(jax.jit(jax.grad(loss))(jnp.asarray(THETA0)))
    fd = central(loss, THETA0)
    assert np.all(np.abs(exact) > 0), dict(zip(NAMES, exact))
    np.testing.assert_allclose(exact, fd, rtol=1e-6, atol=1e-6 * np.max(np.abs(exact)), err_msg=str(dict(zip(NAMES, exact))))
