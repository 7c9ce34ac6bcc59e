"""``jaxrotor analyze`` on vehicles built from parts: the vehicle keys of ``--json``, the ``-- vehicle`` table,
and the to-scale ``<name>_vehicle.png`` of ``--out``."""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jaxrotor import presets
from jaxrotor.cli import main
from jaxrotor.io.platform_table import load_platform

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "vehicles" / "x_quad_parts.toml"
VEHICLE_KEYS = {"mass", "com_offset", "inertia", "rotor_inertia", "c_f", "c_tau", "rotor_speed_max",
                "thrust_to_weight", "mass_breakdown", "overrides", "from_parts"}


def test_preset_json_carries_the_vehicle_keys():
    res = CliRunner().invoke(main, ["analyze", "--preset", "paper_hexarotor", "--json", "--directions", "4"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert VEHICLE_KEYS <= set(out)
    p = presets.get("paper_hexarotor")
    assert out["mass"] == float(p.mass) == 3.5
    assert out["from_parts"] is False and out["mass_breakdown"] == {} and out["overrides"] == []
    assert out["inertia"] == np.asarray(p.inertia).tolist() and out["com_offset"] == [0.0, 0.0, 0.0]
    assert out["c_f"] == np.asarray(p.c_f).tolist() and len(out["rotor_speed_max"]) == 6
    assert out["voltage_limited_speed"] is None and out["speed_limit"] is None
    assert "sizing" not in out  # no motor kv, no battery: no electrical sizing


def test_parts_config_json_table_and_vehicle_picture(tmp_path):
    figs = tmp_path / "figs"
    res = CliRunner().invoke(main, ["analyze", str(CONFIG), "--json", "--out", str(figs), "--directions", "4"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)  # the "wrote" lines go to stderr
    p = load_platform(CONFIG)
    assert out["name"] == p.name and out["from_parts"] is True and out["overrides"] == []
    assert out["mass"] == pytest.approx(float(p.mass), abs=1e-15)
    assert sum(out["mass_breakdown"].values()) == pytest.approx(out["mass"], abs=1e-12)
    assert set(out["mass_breakdown"]) == {"hub", "arms", "motors", "propellers", "battery", "payload"}
    np.testing.assert_allclose(out["com_offset"], np.asarray(p.com_offset), rtol=0, atol=1e-15)
    np.testing.assert_allclose(out["inertia"], np.asarray(p.inertia), rtol=1e-14)
    np.testing.assert_allclose(out["rotor_speed_max"], np.asarray(p.rotor_speed_max), rtol=1e-14)
    assert out["speed_limit"] == ["current"] * 4 and out["thrust_to_weight"] > 1
    # the static electrical sizing (jaxrotor.electrical, tested against closed forms in tests/unit)
    from jaxrotor.electrical import sizing_report

    sizing = out["sizing"]
    expected = {k: float(v) for k, v in sizing_report(p).items()}
    assert set(sizing) == set(expected)
    for key, value in expected.items():
        assert sizing[key] == pytest.approx(value, rel=1e-12), key
    assert sizing["hover_battery_power_W"] == pytest.approx(
        sizing["hover_battery_current_A"] * sizing["hover_terminal_voltage_V"], rel=1e-12)
    assert sizing["endurance_hover_min"] == pytest.approx(sizing["endurance_hover_s"] / 60, rel=1e-14)
    assert 0 < sizing["hover_throttle"] < sizing["hover_throttle_at_floor"] < 1 and sizing["payload_capacity_kg"] > 0
    vehicle = figs / f"{p.name}_vehicle.png"
    assert vehicle.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and vehicle.stat().st_size > 10_000
    assert f"wrote {vehicle}" in res.stderr


def test_preset_without_parts_skips_the_picture_with_a_note(tmp_path, monkeypatch):
    # the other pictures are not what this checks: stub them to keep the test fast
    import jaxrotor.io.design_plot as design_plot
    import jaxrotor.io.polytope_plot as polytope_plot
    monkeypatch.setattr(design_plot, "save_figures", lambda platform, out, report=None: [])
    monkeypatch.setattr(polytope_plot, "save_polytope_figure", lambda platform, out: out / "stub.png")
    res = CliRunner().invoke(main, ["analyze", "--preset", "cs_4r", "--out", str(tmp_path), "--directions", "4"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "-- vehicle (given as numbers, no parts)" in res.stdout
    assert "no vehicle drawing" in res.stderr and not (tmp_path / "cs_4r_vehicle.png").exists()


def test_parts_config_table_ends_with_the_electrical_sizing():
    res = CliRunner().invoke(main, ["analyze", str(CONFIG), "--directions", "4"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    from jaxrotor.electrical import format_sizing_report, sizing_report

    block = format_sizing_report({k: float(v) for k, v in sizing_report(load_platform(CONFIG)).items()})
    assert res.output.rstrip().endswith(block)
    assert "hover endurance" in block and "payload capacity (T/W 2)" in block
