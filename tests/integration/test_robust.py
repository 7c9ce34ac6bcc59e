"""``jaxrotor tune`` on a robust problem: held-out metrics, losses are the CVaR of redrawn batches plus the price."""

import dataclasses
import json

import jax.numpy as jnp
import numpy as np
import pytest
from click.testing import CliRunner

from jaxrotor.cli.optimize import tune
from jaxrotor.control import TABLE_III
from jaxrotor.optimize.history import read_history
from jaxrotor.optimize.robust import RobustProblem, _batch_metrics
from jaxrotor.randomize import TRAIN
from unit.optimize.test_robust import TINY, load_tiny, ru_cvar


@pytest.fixture(scope="module")
def tiny():
    return load_tiny()


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
