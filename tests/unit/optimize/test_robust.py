"""Robust objectives and domain randomization: CVaR against its definition, draws within their ranges."""

import tomllib
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor.design import presets
from jaxrotor.io import optimize_config
from jaxrotor.optimize.robust import cvar
from jaxrotor.randomize import HELDOUT, TRAIN, Randomization, member_keys

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "configs" / "tune_gains_robust.toml"

# a tiny robust problem: 0.1 s at 250 Hz, 4 flights, 4 held-out flights (none re-flown on the physics layer:
# tests/artifacts/test_experiment_robust_tuning.py checks physics_metrics), 3 iterations with a redraw every 2
TINY = CONFIG.read_text().replace("physics_size = 8 ", "physics_size = 0 ").replace("t1 = 4.0 ", "t1 = 0.1 ").replace("dt = 0.002 ", "dt = 0.004 ").replace(
    "rate = 500.0 ", "rate = 250.0 ").replace("save_dt = 0.02 ", "save_dt = 0.02 ").replace(
    "batch_size = 32 ", "batch_size = 4 ").replace("heldout_size = 64 ", "heldout_size = 4 ").replace(
    "reshuffle_every = 50 ", "reshuffle_every = 2 ").replace("iterations = 100\n", "iterations = 3\n")


def load_tiny():
    """The tiny robust problem as its optimisation config."""
    return optimize_config.from_dict(tomllib.loads(TINY), "tiny.toml", kind="tune")


@pytest.fixture(scope="module")
def tiny():
    return load_tiny()


def ru_cvar(x, beta):
    """Rockafellar-Uryasev: min_a a + E[(x - a)_+] / (1 - beta); the minimum is at a sample (piecewise linear)."""
    x = np.asarray(x, dtype=float)
    return min(a + np.mean(np.maximum(x - a, 0.0)) / (1 - beta) for a in x)


def test_cvar_is_the_mean_of_the_worst_fraction():
    x = jnp.asarray([0.3, 1.0, 0.1, 0.7, 0.2, 0.9, 0.4, 0.5, 0.8, 0.6])
    assert float(cvar(x, 0.8)) == pytest.approx((1.0 + 0.9) / 2)  # the worst 2 of 10
    rng = np.random.default_rng(0)
    for beta in (0.5, 0.8, 0.87, 0.95):
        y = rng.lognormal(size=37)
        assert float(cvar(jnp.asarray(y), beta)) == pytest.approx(ru_cvar(y, beta), rel=1e-12)
    assert float(cvar(x, 0.01)) == pytest.approx(float(jnp.mean(x)) / 0.99 - 0.1 * 0.01 / 0.99)  # all but 1 % of the best
    g = jax.grad(lambda v: cvar(v, 0.8))(x)
    np.testing.assert_allclose(g, np.where(np.asarray(x) >= 0.9, 0.5, 0.0))
    for beta in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"`beta` = .* must lie in \(0, 1\)"):
            cvar(x, beta)


def test_randomization_draws_within_its_ranges_and_keeps_the_inertia_positive_definite(tiny):
    plat = presets.get("paper_hexarotor")
    r = Randomization(mass=0.1, inertia=0.3, c_f=0.1, c_tau=0.2, motor_time_constant=0.2, wind_speed=(1.0, 3.0))
    flight = tiny.problem.design.flight
    keys = member_keys(0, 200)
    plats, flights = r.batch(keys, plat, flight)
    m = np.asarray(plats.mass)
    assert m.shape == (200,) and np.all(np.abs(m / 3.5 - 1) <= 0.1) and np.std(m / 3.5) > 0.04
    J = np.asarray(plats.inertia)
    assert np.all(np.linalg.eigvalsh(J) > 0) and np.allclose(J, np.swapaxes(J, 1, 2))
    d = np.sqrt(J[:, [0, 1, 2], [0, 1, 2]] / np.diag(np.asarray(plat.inertia)))
    assert np.all(np.abs(d**2 - 1) <= 0.3)
    assert np.all(np.abs(np.asarray(plats.c_tau) / np.asarray(plat.c_tau) - 1) <= 0.2)
    tau = np.asarray(flights.actuators.motor.time_constant)
    assert np.all(np.abs(tau / 0.03 - 1) <= 0.2)
    speed = np.linalg.norm(np.asarray(flights.wind.mean), axis=1)
    assert np.all((speed >= 1.0 - 1e-12) & (speed <= 3.0 + 1e-12)) and np.all(np.asarray(flights.wind.mean)[:, 2] == 0)
    assert len({tuple(k) for k in np.asarray(flights.key).tolist()}) == 200  # independent noise per member
    # reproducible from the keys; the held-out stream shares no key with 50 training epochs
    np.testing.assert_array_equal(r.batch(keys, plat, flight)[0].mass, m)
    train = {tuple(k) for e in range(50) for k in np.asarray(member_keys(0, 32, TRAIN, e)).tolist()}
    held = {tuple(k) for k in np.asarray(member_keys(0, 64, HELDOUT)).tolist()}
    assert len(train) == 50 * 32 and not train & held
    with pytest.raises(ValueError, match=r"`mass` = 1.0 is invalid.*\[0, 1\).*Fix"):
        Randomization(mass=1.0)
