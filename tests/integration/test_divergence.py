"""Runaway flights: the position limit on the norm in a flight, divergence flagged under vmap without
poisoning the other members.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets, so3
from jaxrotor.control import FullyActuatedSE3
from jaxrotor.dynamics import WrenchCommand
from jaxrotor.flight import DivergenceLimits
from jaxrotor.metrics import mae, position_error
from jaxrotor.reference import Hover
from jaxrotor.simulation import simulate, simulate_open_loop

# --------------------------------------------------------------------------- runaway on norms


def test_flight_beyond_position_limit_by_norm_is_diverged():
    """A vehicle held at (8, 8, 1) m by its weight-cancelling wrench, with a 10 m limit: |p| = 11.4 m, diverged."""
    hexa = presets.paper_hexarotor()
    s0 = jr.initial_state(hexa, p=[8.0, 8.0, 1.0], rotor_speed="hover")
    hold = WrenchCommand(force=jnp.array([0.0, 0.0, float(hexa.weight)]), torque=jnp.zeros(3))
    run = lambda L: simulate_open_loop(hexa, lambda t: hold, s0, 0.5, save_dt=0.1,  # noqa: E731
                                       limits=DivergenceLimits(max_position=L))
    tr = run(10.0)
    np.testing.assert_allclose(tr.p[-1], [8.0, 8.0, 1.0], atol=1e-9)  # weight cancelled: at rest
    assert bool(tr.diverged)
    assert not bool(run(12.0).diverged)  # |p| = sqrt(129) = 11.36 m < 12 m


@pytest.fixture(scope="module")
def hexa():
    return presets.paper_hexarotor()


# --------------------------------------------------------------------------- divergence under vmap


def test_divergence_is_flagged_under_vmap_without_poisoning(hexa):
    """A gain far too stiff for the fixed step blows the rollout up; it is flagged, the others are untouched."""
    ref = Hover([0.0, 0.0, 1.0], 2.0)
    integ = jr.Integrator(adaptive=False, dt=0.01)
    s0 = jr.initial_state(hexa, p=[0.1, 0.0, 1.0], R=so3.exp(jnp.array([0.1, 0.0, 0.2])), rotor_speed="hover")

    def run(k_w):
        return simulate(hexa, FullyActuatedSE3(K_w=k_w), ref, integrator=integ, save_dt=0.05, state0=s0)

    k_w = jnp.array([25.0, 1e5, 5.0])  # K_w = 1e5 N m s/rad on J ~ 0.15: |lambda| dt ~ 6000, RK unstable
    batch = jax.vmap(run)(k_w)
    assert np.asarray(batch.diverged).tolist() == [False, True, False]
    for i in (0, 2):
        single = run(k_w[i])
        np.testing.assert_allclose(batch.p[i], single.p, atol=1e-12)
        assert bool(jnp.all(jnp.isfinite(batch.p[i])))
    m = jax.vmap(lambda tr: mae(position_error(tr)))(batch)
    assert bool(jnp.all(jnp.isfinite(m[0]))) and bool(jnp.all(jnp.isfinite(m[2])))
