"""The `jaxrotor simulate` command: the default use case, every shipped flight config, its outputs and errors.

Loading the configs (without flying them) is checked in ``tests/unit/io/test_config.py``.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import jaxrotor as jr
from jaxrotor.cli import main
from jaxrotor.io import config as cfg
from jaxrotor.metrics import ELECTRICAL_KEYS, FlightMetrics
from jaxrotor.workflows.usecase import RUN_KEYS
from unit.io.test_config import BASE, FIRST_ORDER  # a minimal flight config

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs").glob("*.toml"))
# flight configs; optimisation problems (with an [objective] table) are covered by tests/integration/test_cli_optimize.py,
# sweeps (a [sweep] table) by tests/integration/test_sweep.py
FLIGHT_CONFIGS = [p for p in CONFIGS if "[reference]" in p.read_text() and "[objective" not in p.read_text()
                  and "[sweep" not in p.read_text()]





#: (old TOML, the old key as quoted, the new key the message must name)


def test_flight_config_flies_like_simulate():
    """``fly(config.platform, config.controller, config.flight)`` is ``jaxrotor.simulate`` with the same arguments."""
    text = BASE.replace("duration = 1.0", "duration = 0.5\nposition = [0.0, 0.0, 1.0]") + (
        "[allocator]\nkind = \"clip\"\n" + FIRST_ORDER + "time_constant = 0.03\n[solver]\nadaptive = false\n"
        "dt = 0.01\n[flight]\nsave_dt = 0.05\nt1 = 0.4\n")
    conf = cfg.loads(text, "f.toml")
    a = jr.fly(conf.platform, conf.controller, conf.flight)
    f = conf.flight
    b = jr.simulate(conf.platform, conf.controller, f.reference, allocator=jr.Clip(),
                    actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)), integrator=jr.Integrator(adaptive=False, dt=0.01),
                    save_dt=0.05, t1=0.4)
    assert a.t.shape == (9,) and float(a.t[-1]) == pytest.approx(0.4)
    for k in ("t", "p", "v", "R", "omega", "u", "rotor_speed"):
        np.testing.assert_array_equal(np.asarray(getattr(a, k)), np.asarray(getattr(b, k)), err_msg=k)
    assert not bool(a.diverged) and float(a.rotor_speed[0, 0]) > 0


# the FlightMetrics fields in their JSON form: the electrical ones join only a flight with an electric motor
METRIC_KEYS = set(FlightMetrics.__dataclass_fields__) - {"electrical"}


def _check_outputs(out: Path, compare: bool, t1: float = 0.5):
    for f in ("fig6_trajectory_3d.png", "fig7_errors.png", "fig8_rotor_speeds.png", "trajectory.npz", "metrics.json"):
        assert (out / f).stat().st_size > 0, f
    m = json.loads((out / "metrics.json").read_text())
    # the metric keys are exactly the FlightMetrics fields; the rest describe the run
    extra = {"source", "compare", "paper_table_iv_analytic", "fault_outcome"}
    electric = "energy_wh" in m
    assert electric == ("energy_wh" in m and set(ELECTRICAL_KEYS) <= set(m))
    keys = METRIC_KEYS | (set(ELECTRICAL_KEYS) if electric else set())
    assert keys <= set(m) and set(m) - keys <= set(RUN_KEYS) | extra, set(m) - keys
    assert set(RUN_KEYS) | {"source"} <= set(m)
    assert len(m["mae_position_xyz"]) == 3 and isinstance(m["mae_position"], float) and m["diverged"] is False
    assert "verdict" in m
    assert m["duration"] == pytest.approx(t1) and m["num_steps"] > 0
    assert ("compare" in m) == compare
    if compare:
        assert set(m["compare"]) == METRIC_KEYS | set(RUN_KEYS) | (set(ELECTRICAL_KEYS) if "energy_wh" in m["compare"]
                                                                   else set())
    data = np.load(out / "trajectory.npz")
    assert data["p"].shape == (len(data["t"]), 3)
    return m


def test_cli_simulate_default_is_paper_use_case(tmp_path):
    res = CliRunner().invoke(main, ["simulate", "--out", str(tmp_path), "--no-progress", "--t1", "0.5"])
    assert res.exit_code == 0, res.output
    assert "paper (Table IV, a)" in res.output and "mae e_p,x [m]" in res.output and "DIVERGED" not in res.output
    m = _check_outputs(tmp_path, compare=True)
    assert m["label"] == "CS_α0β0-Ted_6R" and m["source"] == "<builtin>"
    physics = json.loads((tmp_path / "metrics_physics.json").read_text())
    assert m["verdict"] == m["compare"]["verdict"] == physics["verdict"] == "ok"
    assert res.output.splitlines()[-3:] == ["verdict (paper_reproduction): ok", "verdict (paper_realistic): ok",
                                            "verdict (paper_reproduction_physics): ok"]
    assert m["paper_table_iv_analytic"]["mae_position_xyz"][0] == pytest.approx(1.7216e-03)
    # the first 0.5 s of the minimum-jerk takeoff: exact tracking with ideal actuation, tens of
    # micrometres behind it with the 30 ms motor lag; no rotor near its bound
    assert m["max_position_error"] < 1e-6 and 1e-5 < m["compare"]["max_position_error"] < 1e-4
    assert m["saturation_fraction"] == 0.0 and m["compare"]["saturation_fraction"] == 0.0
    assert m["energy"] == pytest.approx(0.5 * m["mean_power"], rel=1e-6) and 200.0 < m["energy"] < 300.0  # J


#: Shipped configs whose verdict is raised by design: the rotor-inertia yaw instability (docs/stability.md).
RAISED = {"paper_jr_30ms.toml": ["unstable"]}


# configs/paper_reproduction.toml is the built-in use case (tests/unit/io/test_config.py checks that they are
# equal), flown with the same --t1 and more checks by test_cli_simulate_default_is_paper_use_case
@pytest.mark.parametrize("path", [p for p in FLIGHT_CONFIGS if p.name != "paper_reproduction.toml"], ids=lambda p: p.name)
def test_cli_simulate_every_config(tmp_path, path):
    """Every shipped flight flies; its verdict is ok (no false alarm), but for the flights in :data:`RAISED`."""
    res = CliRunner().invoke(main, ["simulate", str(path), "--out", str(tmp_path), "--no-progress", "--t1", "0.5"])
    assert res.exit_code == (1 if path.name in RAISED else 0), res.output
    m = _check_outputs(tmp_path, compare="compare =" in path.read_text())
    assert m["source"] == str(path)
    paper = path.name.startswith("paper_")  # the paper's vehicle on its maneuver (jaxrotor.workflows.paper)
    assert ("paper (Table IV, a)" in res.output) == paper and ("paper_table_iv_analytic" in m) == paper
    assert m["verdict"] == RAISED.get(path.name, "ok") and (m.get("compare") or {}).get("verdict", "ok") == "ok"


def test_cli_simulate_diverged_flight_says_so_and_fails(tmp_path):
    """A runaway flight: its column reads DIVERGED instead of numbers, the command exits 1."""
    path = tmp_path / "runaway.toml"
    # the climb to 1 m passes the 0.05 m position limit: the flight is flagged as diverged
    path.write_text(BASE.replace('kind = "hover"\nduration = 1.0', 'kind = "paper_maneuver"')
                    + "[flight]\nsave_dt = 0.1\nmax_position = 0.05\n")
    res = CliRunner().invoke(main, ["simulate", str(path), "--out", str(tmp_path / "o"), "--no-progress", "--t1", "4.0"])
    assert res.exit_code == 1, res.output
    rows = [line for line in res.output.splitlines() if line.startswith(("mae ", "max ", "rmse "))]
    assert len(rows) == 12 and all(line.split()[-1] == "DIVERGED" for line in rows)
    assert "WARNING: flight 't' DIVERGED" in res.output
    assert "verdict: FAILED — diverged (non-finite or runaway state, or solver failure)" in res.output
    m = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert m["diverged"] is True and m["verdict"][0] == "diverged"


@pytest.fixture
def restore_x64():
    import jax

    yield
    jax.config.update("jax_enable_x64", True)


def test_cli_simulate_float32_prints_numbers(tmp_path, restore_x64):
    """float32 flies the use case with float32 tolerances: finite numbers, no inf/nan in the table."""
    res = CliRunner().invoke(main, ["simulate", "--float32", "--out", str(tmp_path), "--no-progress", "--t1", "0.5",
                                    "--no-physics"])  # the physics column is checked in float64 (the engine's type)
    assert res.exit_code == 0, res.output
    rows = [line.split() for line in res.output.splitlines() if line.startswith(("mae ", "max ", "rmse "))]
    assert len(rows) == 12 and "DIVERGED" not in res.output
    assert all(np.isfinite(float(x)) for row in rows for x in row[-2:])  # both flights' columns are numbers
    m = _check_outputs(tmp_path, compare=True)
    assert m["max_position_error"] < 1e-4 and 1e-5 < m["compare"]["max_position_error"] < 1e-4


def test_cli_simulate_bad_config_exits_with_message(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace('kind = "fully_actuated"', 'kind = "pid"'))
    res = CliRunner().invoke(main, ["simulate", str(path), "--out", str(tmp_path)])
    assert res.exit_code == 2
    assert "controller.kind" in res.output and "Fix:" in res.output
