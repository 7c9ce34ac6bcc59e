"""TOML configs and the `jaxrotor simulate` command."""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jaxrotor.io import config as cfg
from jaxrotor.cli import main
from jaxrotor.usecase import paper_realistic_spec, paper_reproduction_spec

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("*.toml"))
# flight configs; optimisation problems (with an [objective] table) are covered by tests/test_cli_optimize.py
FLIGHT_CONFIGS = [p for p in CONFIGS if "[reference]" in p.read_text() and "[objective" not in p.read_text()]


def _leaves_equal(a, b):
    import equinox as eqx
    import jax

    la, ta = jax.tree_util.tree_flatten(eqx.filter(a, eqx.is_array))
    lb, tb = jax.tree_util.tree_flatten(eqx.filter(b, eqx.is_array))
    assert ta == tb
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("path", FLIGHT_CONFIGS, ids=lambda p: p.name)
def test_every_flight_config_loads(path):
    spec = cfg.load(path)
    assert spec.name == path.stem
    assert spec.platform.n_rotors >= 4


def test_builtin_use_case_equals_config_files():
    for builtin, name in ((paper_reproduction_spec(), "paper_reproduction.toml"), (paper_realistic_spec(), "paper_realistic.toml")):
        spec = cfg.load(ROOT / "configs" / name)
        for part in ("platform", "controller", "allocator", "actuators", "reference"):
            assert type(getattr(spec, part)) is type(getattr(builtin, part)), part
            _leaves_equal(getattr(spec, part), getattr(builtin, part))
        assert spec.integrator == builtin.integrator and spec.save_dt == builtin.save_dt
    assert cfg.load(ROOT / "configs" / "paper_reproduction.toml").compare.name == "paper_realistic"


BASE = """
name = "t"
[platform]
preset = "paper_hexarotor"
[controller]
kind = "fully_actuated"
[reference]
kind = "hover"
duration = 1.0
"""


@pytest.mark.parametrize(
    "text, key, words",
    [
        (BASE.replace('kind = "hover"\nduration = 1.0', 'kind = "hover"'), "reference.duration", "missing key"),
        (BASE.replace('kind = "fully_actuated"', 'kind = "fully_actuated"\nK_p = "seven"'), "controller.K_p", "expected list"),
        (BASE.replace('kind = "fully_actuated"', 'kind = "fully_actuated"\nK_p = [1.0, -2.0, 3.0]'), "controller.K_p", "gains must be >= 0"),
        (BASE.replace('kind = "fully_actuated"', 'kind = "fully_actuated"\nK_p = [1.0, 2.0]'), "controller.K_p", "expected 3 numbers"),
        (BASE.replace('kind = "fully_actuated"', 'kind = "pid"'), "controller.kind", "unknown choice"),
        (BASE.replace("duration = 1.0", "duration = -1.0"), "reference.duration", "> 0"),
        (BASE + "[solver]\nrtol = 1e-9\nrtoll = 1e-3\n", "solver.rtoll", "unknown key"),
        (BASE + "[actuators]\nmotor = \"first_order\"\n", "actuators.time_constant", "missing key"),
        (BASE + "[actuators]\nmotor = \"first_order\"\ntime_constant = 0.0\n", "actuators.time_constant", "> 0"),
        (BASE + "[allocator]\nkind = \"magic\"\n", "allocator.kind", "unknown choice"),
        (BASE.split("[reference]")[0], "[reference]", "missing table"),
    ],
)
def test_malformed_config_messages(tmp_path, text, key, words):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(cfg.ConfigError) as err:
        cfg.load(path)
    msg = str(err.value)
    assert str(path) in msg and f"`{key}`" in msg and words in msg and "Fix:" in msg


def test_unknown_preset_and_bad_platform_values(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace('preset = "paper_hexarotor"', 'preset = "hexa_9000"'))
    with pytest.raises(cfg.ConfigError, match="hexa_9000") as err:
        cfg.load(path)
    assert "paper_hexarotor" in str(err.value)  # lists the valid names
    path.write_text(BASE.replace('preset = "paper_hexarotor"', 'n = 4\narm_length = 0.25\nmass = -1.0\nc_f = 1e-5\n'
                                                               'c_tau = 1e-7\ninertia = [0.01, 0.01, 0.02]'))
    with pytest.raises(cfg.ConfigError, match="mass") as err:
        cfg.load(path)
    assert str(path) in str(err.value)
    path.write_text("name = [unclosed")
    with pytest.raises(cfg.ConfigError, match="not valid TOML"):
        cfg.load(path)
    with pytest.raises(cfg.ConfigError, match="no such configuration file"):
        cfg.load(tmp_path / "missing.toml")


def _check_outputs(out: Path, compare: bool):
    for f in ("fig6_trajectory_3d.png", "fig7_errors.png", "fig8_rotor_speeds.png", "trajectory.npz", "metrics.json"):
        assert (out / f).stat().st_size > 0, f
    m = json.loads((out / "metrics.json").read_text())
    for k in ("label", "mae_position", "mae_orientation", "max_abs_position_error", "diverged", "sim_time_s", "wall_time_s"):
        assert k in m
    assert len(m["mae_position"]) == 3 and m["diverged"] is False
    assert ("compare" in m) == compare
    data = np.load(out / "trajectory.npz")
    assert data["p"].shape == (len(data["t"]), 3)
    return m


def test_cli_simulate_default_is_paper_use_case(tmp_path):
    res = CliRunner().invoke(main, ["simulate", "--out", str(tmp_path), "--no-progress", "--t1", "2.0"])
    assert res.exit_code == 0, res.output
    assert "paper (Table IV, a)" in res.output and "mae e_p,x [m]" in res.output
    m = _check_outputs(tmp_path, compare=True)
    assert m["label"] == "CS_α0β0-Ted_6R" and m["sim_time_s"] == pytest.approx(2.0)


@pytest.mark.parametrize("path", FLIGHT_CONFIGS, ids=lambda p: p.name)
def test_cli_simulate_every_config(tmp_path, path):
    res = CliRunner().invoke(main, ["simulate", str(path), "--out", str(tmp_path), "--no-progress", "--t1", "2.0"])
    assert res.exit_code == 0, res.output
    _check_outputs(tmp_path, compare="compare =" in path.read_text())


def test_cli_simulate_bad_config_exits_with_message(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace('kind = "fully_actuated"', 'kind = "pid"'))
    res = CliRunner().invoke(main, ["simulate", str(path), "--out", str(tmp_path)])
    assert res.exit_code == 2
    assert "controller.kind" in res.output and "Fix:" in res.output
