"""The export contract as written: `jaxrotor export CONFIG --px4 FILE` writes PX4's control-allocation parameters
(rebuilt the way PX4 builds its matrix, they equal jaxrotor's G), `--urdf FILE` / `--mjcf FILE` the vehicle that
MuJoCo loads with jaxrotor's mass, centre of mass, inertia and rotor poses; usage errors name the fix."""

from pathlib import Path

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner

from jaxrotor.allocation import allocation_matrix
from jaxrotor.cli import main
from jaxrotor.design import presets
from jaxrotor.design.platform import rotor_axes, rotor_positions
from jaxrotor.export import px4, robot
from jaxrotor.io.config import load

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "paper_reproduction.toml"


def _export(*args):
    return CliRunner().invoke(main, ["export", *args])


@pytest.mark.parametrize("fmt", ["qgc", "airframe"])
def test_px4_file_of_the_paper_config_rebuilds_g(tmp_path, fmt):
    out = tmp_path / "paper.params"
    res = _export(str(CONFIG), "--px4", str(out), "--px4-format", fmt)
    assert res.exit_code == 0, res.output
    assert "note:" in res.output  # what PX4's rotor allocation cannot express is said
    platform = load(CONFIG).platform
    params = px4.read_px4_params(out)
    assert params["CA_ROTOR_COUNT"] == platform.n_rotors == 6 and params["CA_AIRFRAME"] == 0
    G_px4 = px4.allocation_from_px4(px4.px4_effectiveness(params), np.asarray(platform.rotor_speed_max) ** 2)
    G = np.asarray(allocation_matrix(platform))
    assert np.abs(G_px4 - G).max() <= 1e-12 * np.abs(G).max()


def test_urdf_and_mjcf_of_a_preset_load_in_mujoco_with_its_mass_properties(tmp_path):
    urdf, mjcf = tmp_path / "x.urdf", tmp_path / "x.xml"
    res = _export("--preset", "cs_4r", "--urdf", str(urdf), "--mjcf", str(mjcf))
    assert res.exit_code == 0, res.output
    platform = presets.get("cs_4r")  # mass and inertia given as numbers: the export fits parts to them
    m0, J0 = float(platform.mass), np.asarray(platform.inertia)
    p, z = np.asarray(rotor_positions(platform)), np.asarray(rotor_axes(platform))
    for path in (urdf, mjcf):
        model = mujoco.MjModel.from_xml_path(str(path))
        mass, com, inertia = robot.mass_properties_of_model(model)
        assert abs(mass - m0) <= 1e-9 * m0
        assert np.abs(com).max() <= 1e-9  # the body origin is the centre of mass
        assert np.abs(inertia - J0).max() <= 1e-9 * np.abs(J0).max()
        pos, axes = robot.rotor_poses_of_model(model)
        assert np.abs(pos - p).max() <= 1e-9 and np.abs(axes - z).max() <= 1e-9


def test_usage_errors_name_the_fix(tmp_path):
    res = _export(str(CONFIG))
    assert res.exit_code == 2 and "give at least one of --px4 FILE" in res.output
    res = _export("--preset", "no_such_vehicle", "--px4", str(tmp_path / "x.params"))
    assert res.exit_code == 2 and "is not a preset" in res.output
    res = _export(str(CONFIG), "--preset", "cs_4r", "--px4", str(tmp_path / "x.params"))
    assert res.exit_code == 2 and "not both" in res.output
