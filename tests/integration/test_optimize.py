"""The optimisation loop on flights and batches: tuning lowers the loss, history and resume, a weight swept in
one vmapped step, capability at a price.

The tuning flight is ``configs/tune_gains.toml`` (Table III / 4 gains, clipped inputs, 30 ms motor
lag, figure-eight at three times the paper's speed) shortened to 1 s, built directly in Python.
"""

import csv
import json
import shutil

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxrotor as jr
from jaxrotor import optimize as op
from jaxrotor.flight import DivergenceLimits, Flight
from jaxrotor.optimize import objectives as ob
from jaxrotor.workflows.report import flight_metrics, write_report

ADAM = optax.adam(0.05)  # one object: runs with it share the compiled step
OPTIONS = op.MinimizeOptions(iterations=6, patience=50, min_delta=1e-4, max_increase=1.5)


def tune_problem():
    """configs/tune_gains.toml with a 1 s flight."""
    controller = jr.FullyActuatedSE3(K_p=(1.75, 1.75, 15.0), K_pi=(0.75, 0.75, 1.25), K_v=(3.5, 3.5, 5.0),
                                     K_R=(22.5, 22.5, 22.5), K_Ri=(6.25, 6.25, 2.5), K_w=(6.25, 6.25, 1.25))
    flight = Flight(jr.reference.FigureEight(1.0, period=10.0), allocator=jr.Clip(),
                    actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)),
                    integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.02,
                    limits=DivergenceLimits(max_rate=100.0))
    design = op.Design(jr.presets.paper_hexarotor(), controller, flight)
    params = op.Parameters.select(design, {"controller": op.Log()})
    return op.DesignProblem(design, params, ob.Tracking("rmse", position=1.0, orientation=1.0))


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    problem = tune_problem()
    out = tmp_path_factory.mktemp("tune") / "a"
    # both compiled functions may be traced at most once over the whole run (else assert_max_traces raises)
    result = op.minimize(problem, ADAM, OPTIONS, out_dir=out, progress=False, stepper=op.make_step(max_traces=1))
    return problem, result, out


def test_tuning_lowers_the_loss_and_improves_tracking(tuned, tmp_path):
    problem, result, _ = tuned
    assert result.iterations == 6 and result.stop_reason == "iterations"
    losses = [r["loss"] for r in result.history]
    assert result.final_loss < 0.9 * result.initial_loss
    assert all(b < a for a, b in zip(losses, losses[1:]))  # gentle steps: every one accepted and better
    before = flight_metrics(problem, result.initial_design)
    after = flight_metrics(problem, result.design)
    assert after["rmse_position"] < 0.9 * before["rmse_position"]
    assert not after["diverged"]
    # the report's metrics are jaxrotor.metrics.flight_metrics of one flight of the design
    traj = problem.fly(result.design)
    expected = jr.metrics.flight_metrics(traj, result.design.platform).to_dict()
    assert after.keys() == expected.keys()
    assert after["rmse_position"] == pytest.approx(expected["rmse_position"], rel=1e-12)
    # and the history's rmse column is the same quantity (the first row flies the initial design)
    assert result.history[0]["rmse_position"] == pytest.approx(before["rmse_position"], rel=1e-12)
    report = write_report(result, problem, tmp_path)
    on_disk = json.loads((tmp_path / "result.json").read_text())
    assert on_disk["final_metrics"]["rmse_position"] == pytest.approx(after["rmse_position"], rel=1e-12)
    assert report["rmse_reduction"] == pytest.approx(before["rmse_position"] / after["rmse_position"])
    assert (tmp_path / "loss.png").is_file() and (tmp_path / "params.png").is_file()
    # gains stay positive (log parameterisation)
    assert np.all(problem.parameters.flatten(result.design) > 0)


def test_history_is_written_row_by_row(tuned):
    problem, result, out = tuned
    with (out / op.HISTORY_FILE).open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6
    names = problem.parameters.names(problem.design)
    assert len(names) == 18
    assert {"iteration", "loss", "accepted", "rmse_position", "term:tracking_rmse", *names} <= set(rows[0])
    assert [int(float(r["iteration"])) for r in rows] == list(range(6))
    assert float(rows[0]["controller.K_p[0]"]) == pytest.approx(1.75)
    assert (out / op.CHECKPOINT_FILE).is_file()


def test_resume_from_checkpoint_continues_exactly(tuned, tmp_path):
    problem, _, out = tuned
    resumed, fresh = tmp_path / "resumed", tmp_path / "fresh"
    shutil.copytree(out, resumed)
    nine = op.MinimizeOptions(iterations=9, patience=50, max_increase=1.5)
    r1 = op.minimize(problem, ADAM, nine, out_dir=resumed, resume=True, progress=False)
    assert r1.resume_mode == "checkpoint" and r1.resumed_from == 6 and r1.iterations == 9
    r2 = op.minimize(problem, ADAM, nine, out_dir=fresh, progress=False)
    rows1, rows2 = op.read_history(resumed / op.HISTORY_FILE), op.read_history(fresh / op.HISTORY_FILE)
    assert len(rows1) == len(rows2) == 9
    for a, b in zip(rows1, rows2):
        assert a["loss"] == b["loss"]
    np.testing.assert_array_equal(problem.parameters.flatten(r1.design), problem.parameters.flatten(r2.design))


def test_resume_drops_rows_written_after_the_last_checkpoint(tuned, tmp_path):
    problem, _, out = tuned
    d = tmp_path / "crashed"
    shutil.copytree(out, d)
    with (d / op.HISTORY_FILE).open("a") as fh:  # a row whose checkpoint never made it to disk
        fh.write(",".join(["6"] + ["0.5"] * (len(open(d / op.HISTORY_FILE).readline().split(",")) - 1)) + "\n")
    r = op.minimize(problem, ADAM, op.MinimizeOptions(iterations=7, max_increase=1.5), out_dir=d, resume=True,
                    progress=False)
    rows = op.read_history(d / op.HISTORY_FILE)
    assert r.resume_mode == "checkpoint" and len(rows) == 7 and rows[6]["loss"] != 0.5


def test_resume_without_checkpoint_restarts_the_optimizer_at_the_last_row(tuned, tmp_path):
    problem, result, out = tuned
    d = tmp_path / "history_only"
    shutil.copytree(out, d)
    (d / op.CHECKPOINT_FILE).unlink()
    r = op.minimize(problem, ADAM, op.MinimizeOptions(iterations=7, max_increase=1.5), out_dir=d, resume=True,
                    progress=False)
    rows = op.read_history(d / op.HISTORY_FILE)
    assert r.resume_mode == "history" and len(rows) == 7
    assert rows[6]["loss"] == pytest.approx(rows[5]["loss"], rel=1e-9)  # re-evaluates the last accepted point
    assert r.final_loss <= result.final_loss


def test_resume_with_another_optimizer_warns_and_falls_back_to_the_history(tuned, tmp_path):
    """SGD's state does not fit Adam's checkpoint: a clear warning, then the history-based resume."""
    problem, _, out = tuned
    d = tmp_path / "other_optimizer"
    shutil.copytree(out, d)
    with pytest.warns(UserWarning, match="does not match this problem and optimiser"):
        r = op.minimize(problem, optax.sgd(0.01, momentum=0.9), op.MinimizeOptions(iterations=7), out_dir=d,
                        resume=True, progress=False)
    assert r.resume_mode == "history" and r.iterations == 7


def test_resume_refuses_a_different_problem(tuned, tmp_path):
    problem, _, out = tuned
    d = tmp_path / "other"
    shutil.copytree(out, d)
    params = op.Parameters.select(problem.design, {"controller.K_p": op.Log()})
    other = eqx.tree_at(lambda p: p.parameters, problem, params)
    with pytest.raises(ValueError, match="different problem"):
        op.minimize(other, ADAM, op.MinimizeOptions(iterations=8), out_dir=d, resume=True, progress=False)


# --------------------------------------------------------------------------- design-only problems (cheap)


def _tilt_problem(objective, transform=None, **platform):
    design = op.Design(jr.presets.paper_hexarotor(**platform), jr.FullyActuatedSE3())
    tf = transform or op.Interval(0.0, 1.2)
    params = op.Parameters.select(design, {"platform.alpha": tf, "platform.beta": tf})
    return op.DesignProblem(design, params, objective)


def test_capability_at_a_price_respects_the_efficiency_bound():
    """Maximise the lateral-force capability with a log barrier on hover efficiency >= 0.85:
    steps that cross the bound are NaN, penalised and rejected, so every accepted design is feasible."""
    objective = ob.LateralCapability(n_directions=8) + ob.Barrier(ob.HoverEfficiency(), lower=0.85, mu=1e-4)
    problem = _tilt_problem(objective, op.Box(0.0, 1.2))
    result = op.minimize(problem, optax.sgd(0.003, momentum=0.9),
                         op.MinimizeOptions(iterations=120, max_increase=1.1), progress=False)
    eta = float(jr.analysis.hover_efficiency(result.design.platform))
    cap0 = float(ob.LateralCapability(n_directions=8).measure(result.initial_design))
    cap1 = float(ob.LateralCapability(n_directions=8).measure(result.design))
    assert 0.85 < eta < 0.852  # the paper's design has eta = 0.89: the bound ends up active
    assert cap1 > 1.2 * cap0
    assert all(r["term:hover_efficiency"] > 0.85 for r in result.history if r["accepted"] == 1.0)
    assert any(r["penalized"] == 1.0 and r["accepted"] == 0.0 for r in result.history)


def test_minimize_batch_sweeps_a_weight_in_one_vmapped_step():
    """Trade-off sweep: hover efficiency against rotor-loss margin for three weights at once."""
    objective = ob.HoverEfficiency() + ob.Weighted(ob.RotorLossMargin(), 1.0)
    problem = _tilt_problem(objective)
    problem = eqx.tree_at(lambda p: p.objective.terms[1].weight, problem, jnp.array([0.0, 1.0, 10.0]))
    axes = op.batch_axes(problem, lambda p: p.objective.terms[1].weight)
    best, best_loss, losses, penalized = op.minimize_batch(problem, optax.adam(0.05), axes=axes, batch_size=3,
                                                           iterations=40, progress=False)
    assert losses.shape == (40, 3) and not penalized.any()
    assert np.all(best_loss <= losses[0])
    margins = [float(ob.rotor_loss_margin(problem.to_design(jax.tree_util.tree_map(lambda x: x[i], best)).platform))
               for i in range(3)]
    assert margins[0] < margins[1] < margins[2]  # a larger weight buys more fail-safe margin
