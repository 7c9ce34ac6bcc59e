"""Domain randomization, robust objectives (mean, CVaR, gain price), reshuffled batches, TOML and `jaxrotor tune`."""

import dataclasses
import json
import tomllib
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from click.testing import CliRunner

from jaxrotor.cli.optimize import tune
from jaxrotor.control import TABLE_III
from jaxrotor.design import presets
from jaxrotor.io import optimize_config
from jaxrotor.io.toml import ConfigError
from jaxrotor.optimize.history import read_history
from jaxrotor.optimize.robust import RobustProblem, _batch_metrics, cvar
from jaxrotor.randomize import HELDOUT, TRAIN, Randomization, member_keys

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "tune_gains_robust.toml"

# a tiny robust problem: 0.1 s at 250 Hz, 4 flights, 4 held-out flights (none re-flown on the physics layer:
# tests/test_experiment_robust_tuning.py checks physics_metrics), 3 iterations with a redraw every 2
TINY = CONFIG.read_text().replace("physics_size = 8 ", "physics_size = 0 ").replace("t1 = 4.0 ", "t1 = 0.1 ").replace("dt = 0.002 ", "dt = 0.004 ").replace(
    "rate = 500.0 ", "rate = 250.0 ").replace("save_dt = 0.02 ", "save_dt = 0.02 ").replace(
    "batch_size = 32 ", "batch_size = 4 ").replace("heldout_size = 64 ", "heldout_size = 4 ").replace(
    "reshuffle_every = 50 ", "reshuffle_every = 2 ").replace("iterations = 100\n", "iterations = 3\n")


@pytest.fixture(scope="module")
def tiny():
    return optimize_config.from_dict(tomllib.loads(TINY), "tiny.toml", kind="tune")


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


def test_tune_writes_heldout_metrics_and_its_losses_are_the_cvar_of_redrawn_batches_plus_the_price(tiny, tmp_path):
    """`jaxrotor tune` on a robust config: result.json gains heldout_metrics; every history row's loss is
    CVaR_0.8 of the member tracking RMSEs (position + attitude, flown again through the metrics, an independent
    path) plus the gain price, on the epoch-0 batch for iterations 0-1 and the redrawn epoch-1 batch for 2."""
    rp = tiny.problem
    assert isinstance(rp, RobustProblem) and rp.settings.batch_size == 4 and rp.settings.risk == "cvar"
    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY)
    out = tmp_path / "out"
    res = CliRunner().invoke(tune, [str(cfg), "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    report = json.loads((out / "result.json").read_text())
    held = report["heldout_metrics"]
    for when in ("initial", "final"):
        h = held[when]
        assert h["flights"] == 4 and h["diverged"] == 0 and len(h["rmse_position_all"]) == 4
        assert h["rmse_position"] == pytest.approx(np.mean(h["rmse_position_all"]))
        assert h["rmse_position_cvar"] == pytest.approx(ru_cvar(h["rmse_position_all"], 0.8))
        assert 0 < h["rmse_position"] <= h["rmse_position_cvar"] <= h["rmse_position_max"] < 0.1
    assert report["robust"]["batch_size"] == 4 and report["robust"]["reshuffle_every"] == 2
    rows = read_history(out / "history.csv")
    assert len(rows) == 3
    names = rp.parameters.names(rp.design)
    values = {}
    for i, epoch in ((0, 0), (2, 1), (2, 0)):
        design = rp.parameters.unflatten([rows[i][n] for n in names], rp.design)
        platforms, flights = rp.settings.batch(rp.design, TRAIN, epoch)
        m = _batch_metrics(platforms, design.controller, flights)
        members = np.asarray(m.rmse_position) + np.asarray(m.rmse_orientation)
        ratios = np.concatenate([np.ravel(np.asarray(getattr(design.controller, g)) / np.asarray(
            getattr(rp.design.controller, g))) for g in TABLE_III])
        values[i, epoch] = ru_cvar(members, 0.8) + 0.0005 * np.mean(ratios)
        assert len(set(members.tolist())) == 4
    assert rows[0]["loss"] == pytest.approx(values[0, 0], rel=1e-9)  # the start, gain price 0.0005 x 1
    assert rows[2]["loss"] == pytest.approx(values[2, 1], rel=1e-9)  # iteration 2 flew the redrawn batch
    assert values[2, 0] != pytest.approx(values[2, 1], rel=1e-6)
    # the mean risk is the plain average of the same member losses
    mean = dataclasses.replace(rp, settings=dataclasses.replace(rp.settings, risk="mean"))
    x = jnp.asarray([0.3, 0.1, 0.2, 0.6])
    assert float(mean.aggregate(x)) == pytest.approx(0.3) and float(rp.aggregate(x)) == pytest.approx(0.6)


def _tweak(old: str, new: str) -> str:
    assert old in TINY, old
    return TINY.replace(old, new, 1)


@pytest.mark.parametrize("old, new, match", [
    ("position_std = 0.02 ", "position_std = -0.02 ", r"key `sensors.position_std` = -0.02 is invalid.*>= 0.*Fix"),
    ("velocity_std = 0.05 ", "velocity_std = nan ", r"key `sensors.velocity_std` = nan is invalid.*Fix"),
    ("rate_std = 0.015 ", "rate_std = [0.01, inf, 0.01] ", r"key `sensors.rate_std` = \[0.01, inf, 0.01\].*Fix"),
    ("delay = 2 ", "delay = -1 ", r"key `sensors.delay` = -1 is invalid.*>= 0.*Fix"),
    ("rate = 250.0 ", "rate = 300.0 ", r"key `control.rate` = 300.0 is invalid.*`integrator.dt` = 0.004.*Fix"),
    ("beta = 0.8 ", "beta = 1.0 ", r"key `robust.beta` = 1.0 is invalid.*\(0, 1\).*Fix"),
    ("beta = 0.8 ", "beta = 0.0 ", r"key `robust.beta` = 0.0 is invalid"),
    ("mass = 0.1\n", "mass = 1.0\n", r"key `randomize.mass` = 1.0 is invalid.*non-positive.*Fix"),
    ("inertia = 0.1\n", "inertia = 1.5\n", r"key `randomize.inertia` = 1.5 is invalid.*Fix"),
    ("gust_std = 0.5 ", "gust_std = -0.5 ", r"key `wind.gust_std` = -0.5 is invalid.*Fix"),
])
def test_config_refuses_bad_robust_input_naming_file_key_value_and_fix(old, new, match):
    with pytest.raises(ConfigError, match=r"^bad\.toml: " + match):
        optimize_config.from_dict(tomllib.loads(_tweak(old, new)), "bad.toml", kind="tune")


def test_flight_tables_load_into_the_flight_and_need_a_control_rate():
    from jaxrotor.io import config

    base = ('[platform]\npreset = "paper_hexarotor"\n[reference]\nkind = "hover"\nduration = 1.0\n'
            '[solver]\nadaptive = false\ndt = 0.002\n')
    fc = config.loads(base + "[control]\nrate = 500.0\nseed = 4\n[sensors]\nrate_std = [0.01, 0.02, 0.03]\ndelay = 3\n"
                      "[wind]\nmean = [1.0, 0.0, 0.0]\ndrag_quadratic = 0.1\n", "f.toml")
    f = fc.flight
    assert f.control_rate == 500.0 and f.sensors.delay == 3 and f.wind.drag_quadratic == 0.1
    np.testing.assert_array_equal(f.sensors.rate_std, [0.01, 0.02, 0.03])
    np.testing.assert_array_equal(f.key, jax.random.PRNGKey(4))
    with pytest.raises(ConfigError, match=r"^f\.toml: table\(s\) \[sensors\] need the discrete-rate loop but "
                                          r"`control.rate` is missing\. Fix: add \[control\]"):
        config.loads(base + "[sensors]\nposition_std = 0.01\n", "f.toml")
    with pytest.raises(ConfigError, match=r"^f\.toml: key `control.rate` = -1.0 is invalid.*Fix"):
        config.loads(base + "[control]\nrate = -1.0\n", "f.toml")
    with pytest.raises(ConfigError, match=r"^f\.toml: unknown key `sensors.position_sd`"):
        config.loads(base + "[control]\nrate = 500.0\n[sensors]\nposition_sd = 0.01\n", "f.toml")
