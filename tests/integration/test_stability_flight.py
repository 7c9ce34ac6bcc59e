"""The linearised closed loop against a flight, the CLI's stability verdict, and float32.

* One 10 s analytic flight (continuous loop, fixed step, vmapped over two controllers) of the paper hexarotor
  (``J^p``, 30 ms motor, ``J_r = 1.095e-4 kg m^2``) from a 1 urad yaw offset: with the Table III gains the yaw
  error grows at the predicted rate (a fit of ``log |yaw error|`` over its peaks while it is small) and
  frequency; with the lower yaw gains it does not grow.
* ``jaxrotor analyze CONFIG --json`` of a whole flight config reports ``stability``; ``simulate`` and
  ``validate`` print the verdict and, with ``--strict``, exit 3 before flying.
* float32: the same verdict, growth rate and margin gradient as float64 (a subprocess without x64).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from click.testing import CliRunner

import jaxrotor as jr
from jaxrotor import so3
from jaxrotor.analysis import closed_loop_stability
from jaxrotor.cli import main

JR = 1.095e-4
LOW_YAW = dict(K_R=(90.0, 90.0, 30.0), K_w=(25.0, 25.0, 3.0), K_Ri=(25.0, 25.0, 5.0))
YAW0 = 1e-6  # rad


def _paper_rotor_inertia():
    return dataclasses.replace(jr.presets.get("paper_hexarotor_physics"), rotor_inertia=jnp.full(6, JR))


def test_yaw_error_grows_at_the_predicted_rate():
    platform = _paper_rotor_inertia()
    motor = jr.Actuators(motor=jr.FirstOrderMotor(0.03))
    ref = jr.reference.Hover(position=(0.0, 0.0, 1.0), duration=10.0)
    controllers = [jr.FullyActuatedSE3(), jr.FullyActuatedSE3(**LOW_YAW)]
    predicted = [closed_loop_stability(platform, c, jr.Flight(reference=ref, actuators=motor)) for c in controllers]
    state0 = jr.initial_state(platform, p=(0.0, 0.0, 1.0), R=so3.rot_z(YAW0), rotor_speed="hover")
    flight = jr.Flight(reference=ref, actuators=motor, integrator=jr.Integrator(adaptive=False, dt=1e-3),
                       state0=state0, save_dt=0.01)
    batch = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *controllers)
    traj = eqx.filter_jit(jax.vmap(lambda c: jr.fly(platform, c, flight)))(batch)
    t = np.asarray(traj.t[0])
    yaw = np.abs(np.arctan2(np.asarray(traj.R[..., 1, 0]), np.asarray(traj.R[..., 0, 0])))

    # unstable: the peaks of |yaw error| while it is small (past the first transient, below 1e-2 rad)
    e = yaw[0]
    peaks = np.where((e[1:-1] > e[:-2]) & (e[1:-1] >= e[2:]))[0] + 1
    peaks = peaks[(t[peaks] >= 0.3) & (e[peaks] < 1e-2)]
    assert len(peaks) >= 8
    rate = np.polyfit(t[peaks], np.log(e[peaks]), 1)[0]
    freq = 1.0 / (2.0 * np.mean(np.diff(t[peaks])))  # |e| peaks twice per period
    g, f = float(predicted[0].max_growth_rate), float(predicted[0].frequency_hz)
    print(f"yaw error: fitted growth {rate:.4f} 1/s at {freq:.3f} Hz; linearised {g:.4f} 1/s at {f:.3f} Hz")
    assert predicted[0].axis == "yaw" and not bool(predicted[0].stable)
    assert rate == pytest.approx(g, rel=0.1) and freq == pytest.approx(f, rel=0.1)
    assert np.max(e) > 1e3 * YAW0  # it left the linear range

    # stable: the lower yaw gains, the same offset, no growth
    assert bool(predicted[1].stable)
    assert np.max(yaw[1][t >= 1.0]) < YAW0 and yaw[1][-1] < yaw[1][0]


CONTRACT = Path(__file__).resolve().parents[2] / "configs" / "paper_jr_30ms.toml"


def test_cli_reports_stability_and_strict_stops_before_flying(tmp_path):
    """The contract config ``configs/paper_jr_30ms.toml`` (preset + rotor_inertia, 30 ms motors, 1 kHz) as written."""
    cfg = tmp_path / "hex.toml"
    cfg.write_text(CONTRACT.read_text())
    res = CliRunner().invoke(main, ["analyze", str(cfg), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    st = out["stability"]
    assert {"stable", "max_growth_rate", "frequency_hz", "axis", "modes"} <= set(st)
    assert st["stable"] is False and st["axis"] == "yaw" and st["max_growth_rate"] == pytest.approx(6.06, rel=0.1)
    assert st["modes"][0]["axis"] == "yaw" and out["name"] == "paper_hexarotor_physics"
    res = CliRunner().invoke(main, ["analyze", str(cfg)])
    assert res.exit_code == 0 and "-- closed-loop stability" in res.output and "UNSTABLE" in res.output
    for command in ("simulate", "validate"):
        out_dir = tmp_path / command
        res = CliRunner().invoke(main, [command, str(cfg), "--strict", "--out", str(out_dir)]
                                 + (["--no-progress"] if command == "simulate" else []))
        assert res.exit_code == 3, res.output
        assert "UNSTABLE" in res.output and "warning:" in res.output and "not flying" in res.output
        assert not out_dir.exists()  # nothing flown, nothing written
    # without rotor inertia the same loop is stable
    stable = tmp_path / "stable.toml"
    stable.write_text(CONTRACT.read_text().replace("rotor_inertia = 1.095e-4\n", ""))
    res = CliRunner().invoke(main, ["analyze", str(stable), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["stability"]["stable"] is True


FLOAT32 = textwrap.dedent("""
    import dataclasses, json
    import jax
    jax.config.update("jax_enable_x64", False)
    import jax.numpy as jnp
    import jaxrotor as jr
    from jaxrotor.analysis import closed_loop_stability, stability_margin

    p = dataclasses.replace(jr.presets.get("paper_hexarotor_physics"), rotor_inertia=jnp.full(6, 1.095e-4))
    f = jr.Flight(reference=jr.reference.Hover(position=(0.0, 0.0, 1.0), duration=1.0),
                  actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)))

    def margin(k):
        c = jr.FullyActuatedSE3(K_w=jnp.stack([25.0, 25.0, k]))
        return stability_margin(p, c, f), closed_loop_stability(p, c, f)

    (m, rep), g = jax.jit(jax.value_and_grad(margin, has_aux=True))(jnp.float32(5.0))
    print(json.dumps(dict(dtype=str(m.dtype), margin=float(m), grad=float(g), stable=bool(rep.stable),
                          growth=float(rep.max_growth_rate), hz=float(rep.frequency_hz), axis=rep.axis)))
""")


def test_float32_matches_float64():
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    proc = subprocess.run([sys.executable, "-c", FLOAT32], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    r32 = json.loads(proc.stdout.strip().splitlines()[-1])
    p = _paper_rotor_inertia()
    f = jr.Flight(reference=jr.reference.Hover(position=(0.0, 0.0, 1.0), duration=1.0),
                  actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)))
    r64 = closed_loop_stability(p, jr.FullyActuatedSE3(), f)
    assert r32["dtype"] == "float32" and r32["stable"] is False and r32["axis"] == "yaw"
    assert r32["growth"] == pytest.approx(float(r64.max_growth_rate), rel=1e-4)
    assert r32["hz"] == pytest.approx(float(r64.frequency_hz), rel=1e-4)
    assert np.isfinite(r32["grad"]) and r32["grad"] == pytest.approx(-0.27281, rel=1e-3)  # float64: -0.272815


def test_validate_flies_the_contract_config_on_both_layers(tmp_path):
    """``jaxrotor validate configs/paper_jr_30ms.toml`` (as written, on a 3 s horizon) flies both layers, each with
    its verdict: the loop is unstable in yaw by design, so both verdicts are raised and the exit status is 1."""
    cfg = tmp_path / "hex.toml"
    cfg.write_text(CONTRACT.read_text())
    out_dir = tmp_path / "validate"
    res = CliRunner().invoke(main, ["validate", str(cfg), "--t1", "3.0", "--out", str(out_dir)])
    assert res.exit_code == 1, res.output
    v = json.loads((out_dir / "validation.json").read_text())
    assert "unstable" in v["verdict_analytic"] and "unstable" in v["verdict_physics"], v
    assert (out_dir / "fig7_errors.png").stat().st_size > 1000
