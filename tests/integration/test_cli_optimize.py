"""``jaxrotor tune`` and ``jaxrotor optimize``: outputs, resume, and configuration errors.

The tuning run is ``configs/tune_gains.toml`` shortened to a 1 s flight, the same problem
as in ``tests/integration/test_optimize.py`` (so one compiled step serves both).
"""

import json
import tomllib
from pathlib import Path

import jax.numpy as jnp
import pytest
from click.testing import CliRunner

import jaxrotor as jr
from jaxrotor import optimize as op
from jaxrotor.cli import main
from jaxrotor.io import optimize_config as oc
from jaxrotor.io.toml import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def dump(data: dict) -> str:
    """A tiny TOML writer (tables of scalars, one level of sub-tables)."""
    lines = [f"{k} = {_toml(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if not isinstance(v, dict):
            continue
        scalars = {kk: vv for kk, vv in v.items() if not isinstance(vv, dict)}
        if scalars or not v:
            lines.append(f"\n[{k}]")
            lines += [f"{kk} = {_toml(vv)}" for kk, vv in scalars.items()]
        for kk, vv in v.items():
            if isinstance(vv, dict):
                lines.append(f'\n[{k}."{kk}"]' if "." in kk else f"\n[{k}.{kk}]")
                lines += [f"{k3} = {_toml(v3)}" for k3, v3 in vv.items()]
    return "\n".join(lines) + "\n"


def short_tune_config(iterations=6):
    data = tomllib.loads((ROOT / "configs" / "tune_gains.toml").read_text())
    data["reference"]["duration"] = 1.0
    data["optimize"]["iterations"] = iterations
    return data


def test_shipped_configs_load():
    tune = oc.load(ROOT / "configs" / "tune_gains.toml", kind="tune")
    assert len(tune.problem.parameters.names(tune.problem.design)) == 18
    flight = tune.problem.design.flight
    assert isinstance(flight, jr.Flight) and flight is tune.flight_config.flight
    assert flight.reference.period == 10.0 and flight.reference.duration == 20.0 and flight.save_dt == 0.02
    assert flight.limits.max_rate == 100.0 and not flight.integrator.adaptive and flight.integrator.dt == 0.01
    assert float(flight.actuators.motor.time_constant) == 0.03
    assert (tune.options.iterations, tune.options.patience, tune.options.max_increase) == (300, 50, 1.5)
    assert tune.problem.divergence_penalty == 1000.0 and tune.optimizer.learning_rate == 0.05
    tilt = oc.load(ROOT / "configs" / "optimize_tilt.toml")
    assert tilt.problem.parameters.names(tilt.problem.design) == ["platform.alpha", "platform.beta"]
    assert {t.name for t in tilt.problem.objective.leaves()} == {"tracking_rmse", "saturation", "energy"}


def test_bounded_objective_term_is_one_constrained_term():
    data = short_tune_config()
    data["objective"] = {"hover_efficiency": {"weight": 0.5, "at_least": 0.85, "penalty": 1e3}}
    conf = oc.from_dict(data, "c.toml")
    term = conf.problem.objective
    assert isinstance(term, op.objectives.Constrained)
    assert (float(term.weight), float(term.lower), float(term.upper), float(term.penalty)) == (0.5, 0.85, float("inf"), 1e3)


def test_tune_writes_history_result_and_plots_then_resumes(tmp_path):
    config = tmp_path / "tune.toml"
    config.write_text(dump(short_tune_config()))
    out = tmp_path / "out"
    runner = CliRunner()
    res = runner.invoke(main, ["tune", str(config), "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "tracking RMSE" in res.output
    rows = op.read_history(out / "history.csv")
    assert len(rows) == 6
    report = json.loads((out / "result.json").read_text())
    for key in ("initial_loss", "final_loss", "iterations", "initial_params", "final_params", "initial_metrics",
                "final_metrics"):
        assert key in report, key
    assert report["iterations"] == 6 and len(report["final_params"]) == 18
    assert report["final_loss"] < report["initial_loss"]
    assert 0 < report["final_metrics"]["rmse_position"] < report["initial_metrics"]["rmse_position"] < 0.1  # metres
    assert (out / "loss.png").stat().st_size > 1000 and (out / "params.png").stat().st_size > 1000
    # the same command again, asking for more iterations, resumes the run
    res = runner.invoke(main, ["tune", str(config), "--out", str(out), "--no-progress", "--iterations", "8"])
    assert res.exit_code == 0, res.output
    assert "resumed at iteration 6 from the checkpoint" in res.output
    assert len(op.read_history(out / "history.csv")) == 8
    assert json.loads((out / "result.json").read_text())["iterations"] == 8


def test_optimize_design_only_objective(tmp_path):
    data = short_tune_config(iterations=5)
    data["parameters"] = {"platform.alpha": {"transform": "interval", "lower": 0.0, "upper": 1.0},
                          "platform.beta": {"transform": "box", "lower": 0.0, "upper": 0.6}}
    data["objective"] = {"rotor_loss_margin": {"weight": 1.0},
                         "hover_efficiency": {"weight": 0.0, "at_least": 0.85, "penalty": 1e3}}
    config = tmp_path / "tilt.toml"
    config.write_text(dump(data))
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["optimize", str(config), "--out", str(out), "--no-progress", "--fresh"])
    assert res.exit_code == 0, res.output
    report = json.loads((out / "result.json").read_text())
    assert set(report["final_params"]) == {"platform.alpha", "platform.beta"}
    assert report["final_loss"] < report["initial_loss"]
    assert report["final_params"]["platform.beta"] > report["initial_params"]["platform.beta"]  # margin needs dihedral
    assert "rmse_position" in report["final_metrics"]


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda d: d.pop("parameters") and d.pop("objective"), ["missing table [parameters]"]),
        (lambda d: d["parameters"]["platform.alpha"].update(transform="sigmoid"), ["parameters.\"platform.alpha\".transform",
                                                                                 "'sigmoid'", "interval"]),
        (lambda d: d["parameters"].update({"platform.alpah": {"transform": "log"}}), ["platform.alpah", "no field"]),
        (lambda d: d["parameters"]["platform.alpha"].update(lower=0.5), ["outside its open interval", "Fix"]),
        (lambda d: d["objective"].update(trackin={"weight": 1.0}), ["objective.trackin", "tracking"]),
        (lambda d: d["objective"]["tracking"].update(weight=-1.0), ["objective.tracking.weight", "-1.0", "non-negative"]),
        (lambda d: d["optimize"].update(learning_rate=0.0), ["optimize.learning_rate", "0.0"]),
        (lambda d: d["optimize"].update(optimiser="adam"), ["optimize.optimiser", "unknown key"]),
        (lambda d: d["solver"].update(adaptive=True), ["solver.adaptive", "fixed-step"]),
        (lambda d: d["optimize"].update(max_rate=50.0), ["`optimize.max_rate` = 50.0 moved to `flight.max_rate`",
                                                       "under [flight]"]),
        (lambda d: d["optimize"].update(iterations=0), ["optimize.iterations", ">= 1"]),
        (lambda d: d["objective"]["tracking"].update(at_least=0.2, at_most=0.1), ["objective.tracking", "lower <= upper"]),
    ],
)
def test_config_errors_name_file_key_value_and_fix(tmp_path, edit, words):
    data = short_tune_config()
    data["parameters"] = {"platform.alpha": {"transform": "interval", "lower": 0.0, "upper": 1.0}}
    data["objective"] = {"tracking": {"weight": 1.0}}
    edit(data)
    config = tmp_path / "bad.toml"
    config.write_text(dump(data))
    with pytest.raises(ConfigError) as err:
        oc.load(config)
    msg = str(err.value)
    assert str(config) in msg
    for w in words:
        assert w in msg, (w, msg)
    res = CliRunner().invoke(main, ["optimize", str(config), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "error:" in res.output


def test_nested_parameter_tables_get_a_quoting_hint(tmp_path):
    text = dump(short_tune_config()) + "\n[parameters.platform.alpha]\ntransform = \"log\"\n"
    config = tmp_path / "nested.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match='quote dotted paths'):
        oc.load(config)


def _x500_config(**edits):
    data = tomllib.loads((ROOT / "configs" / "tune_x500.toml").read_text())
    for table, values in edits.items():
        data[table] = {**data[table], **values}
    return data


def test_x500_tune_config_tunes_on_the_commanded_attitude_and_runs(tmp_path):
    """``configs/tune_x500.toml`` (the under-actuated X500, 18 gains, e_R against the commanded attitude),
    shortened to 0.5 s and 2 iterations: the loss falls, and the attitude error against the commanded
    attitude is far below the one against the level reference (the tilt the path needs)."""
    conf = oc.load(ROOT / "configs" / "tune_x500.toml", kind="tune")
    design = conf.problem.design
    assert design.controller.required_rank == 4 and float(design.flight.actuators.motor.time_constant) == 0.02
    (term,) = conf.problem.objective.leaves()
    assert term.attitude == "commanded" and float(term.orientation) == 1.0
    assert len(conf.problem.parameters.names(design)) == 18
    assert conf.problem.parameters.held == ("controller.K_pi[0]", "controller.K_pi[1]")  # no lateral integral
    config = tmp_path / "x500.toml"
    config.write_text(dump(_x500_config(reference={"duration": 0.5}, optimize={"iterations": 2})))
    res = CliRunner().invoke(main, ["tune", str(config), "--out", str(tmp_path / "out"), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "note: controller.K_pi[0], controller.K_pi[1] held at 0, not tuned" in res.output
    report = json.loads((tmp_path / "out" / "result.json").read_text())
    assert report["final_loss"] < report["initial_loss"]
    m = report["initial_metrics"]
    assert m["mae_orientation"] < 0.1 * m["mae_orientation_reference"]


def test_tune_defaults_work_on_the_underactuated_controller():
    """Without K_* the gains are the vehicle's auto gains (no lateral position integral: those two held at 0,
    the other 16 tuned); with the controller's built-in gains (K_pi = K_Ri = 0) the default log transform holds
    the zero gains (12 tuned); a zero gain named under a log transform is refused with the fix."""
    data = _x500_config()
    data["controller"] = {"kind": "underactuated"}
    del data["parameters"], data["objective"]
    conf = oc.from_dict(data, "x.toml", kind="tune")
    controller = conf.problem.design.controller
    assert float(controller.K_pi[2]) > 0 and float(jnp.min(controller.K_Ri)) > 0
    held = tuple(f"controller.{g}[{i}]" for g in ("K_pi", "K_Ri") for i in range(3) if float(getattr(controller, g)[i]) == 0)
    assert conf.problem.parameters.held == held
    data["controller"] = {"kind": "underactuated", "gains": "default"}
    conf = oc.from_dict(data, "x.toml", kind="tune")
    assert conf.problem.parameters.held == ("controller.K_pi", "controller.K_Ri")
    assert len(conf.problem.parameters.names(conf.problem.design)) == 12
    data["parameters"] = {"controller.K_pi": {"transform": "log"}}
    with pytest.raises(ConfigError, match=r"controller.K_pi.*log transform.*Fix:.*holds the zeros"):
        oc.from_dict(data, "x.toml", kind="tune")
