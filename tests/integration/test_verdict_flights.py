"""Flights that cannot succeed end with a raised verdict and a non-zero exit; ``--allow-failure`` keeps 0.

The healthy side (every shipped flight config flown briefly ends ``ok``) is checked by
``tests/integration/test_cli_simulate.py``; the rules themselves by ``tests/unit/test_verdict.py``.
"""

import json
import math

from click.testing import CliRunner

from jaxrotor.cli import main
from jaxrotor.io import config as cfg
from jaxrotor.workflows import usecase

#: A star hexarotor of the paper's size and rotors with Table III's gains; ``{alpha}`` the cant [rad],
#: ``{reference}`` the reference table.
STAR_HEX = """
name = "{name}"
[platform]
n = 6
arm_length = 0.385
mass = 3.5
inertia = [0.155, 0.147, 0.251]
c_f = 3.799e-5
c_tau = 1.163e-6
alpha = {alpha}
rotor_speed_max = 700.0
[controller]
kind = "fully_actuated"
K_p = [7.0, 7.0, 60.0]
K_pi = [3.0, 3.0, 5.0]
K_v = [14.0, 14.0, 20.0]
K_R = [90.0, 90.0, 90.0]
K_Ri = [25.0, 25.0, 10.0]
K_w = [25.0, 25.0, 5.0]
[allocator]
kind = "clip"
[actuators.motor]
kind = "first_order"
time_constant = 0.03
[reference]
{reference}
[flight]
save_dt = 0.01
"""
DIVERGING = """
name = "gains"
[platform]
preset = "paper_hexarotor"
[controller]
kind = "fully_actuated"
K_p = [7.0, 7.0, 60.0]
K_pi = [3.0, 3.0, 5.0]
K_v = [14.0, 14.0, 20.0]
K_R = [400.0, 400.0, 90.0]
K_Ri = [25.0, 25.0, 10.0]
K_w = [1.0, 1.0, 5.0]
[allocator]
kind = "clip"
[actuators.motor]
kind = "first_order"
time_constant = 0.03
[reference]
kind = "figure_eight"
duration = 10.0
period = 10.0
"""
HOVER = 'kind = "hover"\nduration = 10.0\nposition = [0.0, 0.0, 1.0]'


def test_sideways_hexarotor_fails_and_exits_non_zero(tmp_path):
    """Rotors at 0.49 pi from vertical lift 9 % of the weight: it falls with every rotor at full speed."""
    path = tmp_path / "sideways.toml"
    path.write_text(STAR_HEX.format(name="sideways", alpha=0.49 * math.pi, reference=HOVER))
    res = CliRunner().invoke(main, ["simulate", str(path), "--t1", "2", "--out", str(tmp_path / "a"), "--no-progress"])
    assert res.exit_code == 1, res.output
    m = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert m["verdict"] == ["lost_tracking", "saturated", "infeasible"] and m["diverged"] is False
    line = res.output.splitlines()
    assert any(x.startswith("verdict: FAILED — lost_tracking (max position error") for x in line), res.output
    assert "cannot hold level hover" in res.output and "--allow-failure" in res.output
    res = CliRunner().invoke(main, ["simulate", str(path), "--t1", "2", "--out", str(tmp_path / "b"), "--no-progress",
                                    "--allow-failure"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "b" / "metrics.json").read_text())["verdict"] == m["verdict"]


def test_pitch_hold_beyond_the_envelope_and_diverging_gains():
    # a 0.2 rad cant cannot hold 15 deg of pitch (hover margin -0.39): infeasible, and the flight shows it
    pitch = cfg.loads(STAR_HEX.format(name="pitch15", alpha=0.2, reference=(
        'kind = "pitch_hover"\npitch = 0.2617993877991494\nduration = 2.0\nramp_time = 1.0')), "pitch15.toml")
    r = usecase.fly(pitch)
    assert {"infeasible", "saturated", "lost_tracking"} <= set(r.metrics["verdict"]), r.verdict.line()
    assert r.feasibility.margin < -0.3 and r.feasibility.pitch > 0.2
    # Table III but a stiff, undamped attitude loop on the paper's hexarotor (linearised: pitch grows at +11.9 /s,
    # 6 Hz), excited by a figure-eight
    diverging = cfg.loads(DIVERGING, "gains.toml").with_t1(2.5)
    r = usecase.fly(diverging)
    assert {"diverged", "lost_tracking"} & set(r.metrics["verdict"]), r.verdict.line()
    assert r.verdict.measures["envelope"][-1] > 3 * r.verdict.measures["envelope"][0]
