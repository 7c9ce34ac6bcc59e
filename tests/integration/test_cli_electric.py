"""The electrical contract as written: `jaxrotor simulate configs/electric_hover.toml` flies the 60 s hover at
1 m with the motors, ESCs and battery in the loop, prints the electrical rows and writes their keys."""

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxrotor import electrical as E
from jaxrotor.cli import main
from jaxrotor.io.config import load
from jaxrotor.metrics import ELECTRICAL_KEYS

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "configs" / "electric_hover.toml"


def test_electric_hover_contract_flies_as_written(tmp_path):
    res = CliRunner().invoke(main, ["simulate", str(CONTRACT), "--out", str(tmp_path), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "verdict: ok" in res.output
    for row in ("battery power mean [W]", "energy [Wh]", "state of charge at end", "endurance hover [min]",
                "time at limit [s]", "figure of merit"):
        assert row in res.output
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert set(ELECTRICAL_KEYS) <= set(m) and m["verdict"] == "ok"
    assert m["duration"] == pytest.approx(60.0)
    # a steady hover: the battery power is the closed-form hover power at the state of charge (it moves by 4 %,
    # and with it the battery current: the mean and the peak bracket the start's value)
    cfg = load(CONTRACT)
    h0 = E.hover_point(cfg.platform, 1.0)
    h1 = E.hover_point(cfg.platform, m["soc_end"])
    assert float(h1.battery_power) <= m["electrical_power_mean"] * (1 + 1e-9)
    assert m["electrical_power_peak"] == pytest.approx(float(h0.battery_power), rel=1e-6)
    assert m["energy_wh"] == pytest.approx(m["electrical_power_mean"] * 60 / 3600, rel=1e-9)
    # the state of charge after 60 s: the constant-power discharge over the linear OCV curve
    t = E.constant_power_discharge_time(m["electrical_power_mean"], cfg.platform.parts.battery, soc0=1.0,
                                        soc_floor=m["soc_end"])
    assert float(t) == pytest.approx(60.0, rel=1e-4)
    assert m["time_at_limit"] == 0.0 and m["motor_current_peak"] < 25.0
    assert m["endurance_hover_s"] == pytest.approx(float(E.endurance_hover(cfg.platform)), rel=1e-12)
    assert 10 * 60 < m["endurance_hover_s"] < 30 * 60 and math.isfinite(m["endurance_profile_s"])
    assert 0.5 < m["figure_of_merit"] < 0.8


def test_validate_compares_the_battery_on_both_layers(tmp_path):
    """`jaxrotor validate` flies the electric hover on both layers and prints their battery energy side by side:
    in steady hover the two layers' energy and endurance agree to 1e-6."""
    res = CliRunner().invoke(main, ["validate", str(CONTRACT), "--out", str(tmp_path), "--t1", "1.0", "--no-figures"])
    assert res.exit_code == 0, res.output
    line = next(s for s in res.output.splitlines() if s.startswith("battery energy: analytic"))
    assert float(line.split("(")[1].split()[0]) == pytest.approx(0.0, abs=1e-6)
    v = json.loads((tmp_path / "validation.json").read_text())
    a, p = v["metrics_analytic"], v["metrics_physics"]
    for key in ("energy_wh", "endurance_profile_s", "soc_end", "motor_current_mean"):
        assert p[key] == pytest.approx(a[key], rel=1e-6), key
