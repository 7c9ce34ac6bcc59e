"""The fault-report contract as written: `jaxrotor faults CONFIG [--out DIR] [--no-physics]` hovers the config's
vehicle, loses each rotor in turn and writes faults.json {"rotors": [{"rotor", "analysis", "analytic",
"physics"}]} with the three outcome words; its exit status says whether the flights agree with the analysis."""

import json
from pathlib import Path

from click.testing import CliRunner

from jaxrotor.cli import main
from jaxrotor.faults import OUTCOMES
from jaxrotor.workflows.faults import FAULT_REPORT_KEYS

ROOT = Path(__file__).resolve().parents[2]


def _run(*args):
    return CliRunner().invoke(main, ["faults", *args, "--no-progress", "--time", "0.5"])


def test_flat_hexarotor_report_releases_yaw_as_the_analysis_says(tmp_path):
    res = _run(str(ROOT / "configs" / "faults_s550.toml"), "--no-physics", "--rotors", "1,3", "--out", str(tmp_path))
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "faults.json").read_text())
    assert [r["rotor"] for r in report["rotors"]] == [1, 3] and report["agree"] is True
    for r in report["rotors"]:
        assert set(FAULT_REPORT_KEYS) <= set(r) and r["physics"] is None
        assert r["analysis"] == r["analytic"] == "yaw_released"
        assert abs(r["yaw_released_margin"] - 5 / 7) < 1e-7  # closed form (tests/unit/test_faults.py)
        assert r["analytic_position_error"] < 0.1 and r["analytic_tilt_error"] < 0.05
    assert "every flown outcome agrees with the analysis" in res.output
    assert (tmp_path / "faults.png").stat().st_size > 10_000


def test_paper_hexarotor_loss_on_both_layers(tmp_path):
    """Rotor 2 of the paper hexarotor: the analytic and the physics (MuJoCo C) flight both hold position and tilt
    with the heading released, but the five rotors' yaw torque spins the vehicle up beyond SPIN_ACCELERATION, so
    the analysis and both layers say ``lost`` (its static hover axis is tilted beyond MAX_AXIS_TILT)."""
    res = _run(str(ROOT / "configs" / "paper_reproduction.toml"), "--rotors", "2", "--out", str(tmp_path),
               "--no-figures")
    assert res.exit_code == 0, res.output
    (r,) = json.loads((tmp_path / "faults.json").read_text())["rotors"]
    assert (r["analysis"], r["analytic"], r["physics"]) == ("lost",) * 3
    assert r["physics_position_error"] < 0.1 and r["physics_tilt_error"] < 0.05
    assert r["analytic_position_error"] < 0.02


def test_quadrotor_relaxed_hover_agrees_and_never_releasing_falls(tmp_path):
    """The F450 quadrotor loses rotor 1: the level analysis allows a hover with the opposite rotor idle and the
    yaw released. With the yaw released the flight computer spins up and flies the relaxed hover's LQR (its mean
    thrust axis held within 0.05 rad of the vertical and the position within 0.1 m from 3 s after the loss, while
    the body z axis cones by the primary axis' tilt, 0.2 rad); allocating the whole wrench (`--release-yaw
    never`) it falls, the report says so and exits 1."""
    res = _run(str(ROOT / "configs" / "faults_f450.toml"), "--no-physics", "--rotors", "1", "--out", str(tmp_path),
               "--no-figures")
    assert res.exit_code == 0, res.output
    (r,) = json.loads((tmp_path / "faults.json").read_text())["rotors"]
    assert r["analysis"] == r["analytic"] == "yaw_released"
    assert r["analytic_position_error"] < 0.1 and r["analytic_axis_tilt"] < 0.05 < r["analytic_tilt_error"]
    res = _run(str(ROOT / "configs" / "faults_f450.toml"), "--no-physics", "--rotors", "1", "--out", str(tmp_path),
               "--no-figures", "--release-yaw", "never")
    assert res.exit_code == 1, res.output
    (r,) = json.loads((tmp_path / "faults.json").read_text())["rotors"]
    assert r["analysis"] == "yaw_released" and r["analytic"] == "lost" and r["analytic"] in OUTCOMES
    assert "DISAGREEMENT" in res.output and "--allow-failure" in res.output


def test_bad_rotor_list_is_refused_before_flying(tmp_path):
    res = _run(str(ROOT / "configs" / "faults_s550.toml"), "--no-physics", "--rotors", "7", "--out", str(tmp_path))
    assert res.exit_code == 2 and "--rotors" in res.output and "rotors 1 to 6" in res.output
    res = _run(str(ROOT / "configs" / "faults_s550.toml"), "--rotors", "a", "--out", str(tmp_path))
    assert res.exit_code == 2 and "whole numbers" in res.output
    assert not (tmp_path / "faults.json").exists()
