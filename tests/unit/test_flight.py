"""The flight's runaway check: norms, not components; divergence flagged under vmap without poisoning the
batch; bad inputs refused before flying.

Every expected value below is derived by hand in the comments.
"""

import jax.numpy as jnp
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.control import FullyActuatedSE3
from jaxrotor.flight import DivergenceLimits
from jaxrotor.reference import Hover, paper_maneuver
from jaxrotor.simulation import simulate
from jaxrotor.trajectory import divergence_flag

# --------------------------------------------------------------------------- runaway on norms


def test_divergence_flag_uses_euclidean_norms():
    """p = (0.8, 0.8, 0) L: every component is under the limit L but |p| = 0.8 sqrt(2) L = 1.13 L is over it.

    Before, the test compared max_k |p_k| = 0.8 L with L and missed it. (0.7, 0.7, 0) L has |p| = 0.99 L: not flagged.
    """
    lim = DivergenceLimits(max_position=10.0, max_speed=20.0, max_rate=30.0)
    z = jnp.zeros((2, 3))
    ok = jnp.asarray(True)

    def flag(p=z, v=z, w=z):
        return bool(divergence_flag(p, v, w, ok, lim))

    row = lambda x, L: jnp.array([[0.0, 0.0, 0.0], [x * L, x * L, 0.0]])  # noqa: E731
    assert not flag()
    assert flag(p=row(0.8, 10.0)) and not flag(p=row(0.7, 10.0))
    assert flag(v=row(0.8, 20.0)) and not flag(v=row(0.7, 20.0))
    assert flag(w=row(0.8, 30.0)) and not flag(w=row(0.7, 30.0))


@pytest.fixture(scope="module")
def hexa():
    return presets.paper_hexarotor()


# --------------------------------------------------------------------------- divergence under vmap


def test_diverged_run_reports_not_nan_silently(hexa):
    """A destabilising disturbance ends outside the runaway limits: flagged, not returned as if fine."""
    ref = Hover([0.0, 0.0, 1.0], 2.0)
    tr = simulate(hexa, FullyActuatedSE3(K_p=0.0, K_v=0.0, K_pi=0.0), ref, integrator=jr.Integrator(adaptive=False, dt=0.01),
                  disturbance=lambda t: jnp.array([1e6, 0.0, 0.0]))
    assert bool(tr.diverged)


# --------------------------------------------------------------------------- tilting platforms


def test_simulate_rejects_bad_inputs_before_flying(hexa):
    with pytest.raises(ValueError, match="FullyActuatedSE3 needs rank G = 6.*has rank 4.*UnderactuatedSE3"):
        simulate(presets.cs_4r(), FullyActuatedSE3(), paper_maneuver())
    with pytest.raises(ValueError, match="`save_dt` = 0.0"):
        simulate(hexa, FullyActuatedSE3(), paper_maneuver(), save_dt=0.0)
    with pytest.raises(ValueError, match="`t1` = -1.0"):
        simulate(hexa, FullyActuatedSE3(), paper_maneuver(), t1=-1.0)
    with pytest.raises(ValueError, match="`K_p`"):
        FullyActuatedSE3(K_p=(1.0, -1.0, 2.0))
    with pytest.raises(ValueError, match="`dt`"):
        jr.Integrator(adaptive=False, dt=0.0)
