"""``jaxrotor analyze`` / ``jaxrotor presets``: JSON output equals the Python API, configs, errors, figures."""

import json
import math
import subprocess
import sys

import pytest
from click.testing import CliRunner

from jaxrotor import analysis, presets
from jaxrotor.cli import main

REQUIRED_KEYS = {
    "label", "n_rotors", "F", "M", "rank_F", "rank_M", "rank_G", "fully_actuated", "decoupling",
    "statically_hoverable", "fail_safe", "rotor_loss", "hover_u", "hover_efficiency",
    "lateral_force_capability_N", "condition_number", "unreachable_axes", "yaw_authority",
}


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def assert_same(a, b, path="$"):
    """JSON value ``a`` equals the API value ``b`` (floats to 1e-12 relative)."""
    if isinstance(b, float):
        assert isinstance(a, (int, float)) and a == pytest.approx(b, rel=1e-12, abs=1e-300), path
    elif isinstance(b, dict):
        assert set(a) == set(b), path
        for k in b:
            assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b, path


@pytest.mark.parametrize("name", presets.names())
def test_json_matches_api_for_every_preset(name):
    res = run("analyze", "--preset", name, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)  # exactly one JSON object on stdout
    assert REQUIRED_KEYS <= set(out)
    platform = presets.get(name)
    api = analysis.analyze(platform).to_dict()
    sizing = out.pop("sizing", None)  # the electrical sizing of a vehicle with a motor kv and a battery
    assert_same(out, api)
    from jaxrotor.electrical import has_electrical_parts, sizing_report

    assert (sizing is not None) == has_electrical_parts(platform)
    if sizing is not None:

        for key, value in sizing_report(platform).items():
            if math.isfinite(float(value)):
                assert sizing[key] == pytest.approx(float(value), rel=1e-12), (name, key)
            else:  # e.g. the crazyflie's 1S pack cannot deliver its published c_tau's hover power: null in JSON
                assert sizing[key] is None, (name, key)
    assert out["name"] == name and len(out["F"]) == 3 and len(out["F"][0]) == out["n_rotors"]
    assert all({"rotor", "hoverable", "margin"} <= set(r) for r in out["rotor_loss"])


def test_default_is_the_paper_hexarotor():
    out = json.loads(run("analyze", "--json").output)
    assert out["name"] == "paper_hexarotor" and out["label"] == "CS_α0β0-Ted_6R"
    assert out["fully_actuated"] and out["fail_safe"] and out["decoupling"] == "decoupled"


def test_table_output():
    res = run("analyze", "--preset", "cs_4r")
    assert res.exit_code == 0
    for text in ("statically hoverable", "partially coupled (dim D = 1)", "unreachable wrench axes", "fx, fy",
                 "rotor 4 lost", "lateral-force capability"):
        assert text in res.output


def test_config_files(tmp_path):
    cfg = tmp_path / "design.toml"
    cfg.write_text('[platform]\npreset = "hex_s550"\n\n[controller]\nkind = "geometric"\n')
    out = json.loads(run("analyze", str(cfg), "--json").output)
    assert out["name"] == "hex_s550" and not out["fail_safe"]
    cfg2 = tmp_path / "tri.toml"
    cfg2.write_text("[platform]\nn = 3\narm_length = 0.3\nmass = 1.2\nc_f = 3.799e-5\nc_tau = 1.163e-6\n"
                    "alpha = 0.3\nkappa = [-1, 1, -1]\ninertia = [0.02, 0.02, 0.04]\nrotor_speed_max = inf\n")
    out = json.loads(run("analyze", str(cfg2), "--json").output)
    assert out["name"] == "tri" and out["decoupling"] == "fully coupled" and not out["statically_hoverable"]
    assert out["lateral_force_capability_N"] is None  # level hover infeasible -> null


def test_errors(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[platform]\npreset = "cs_4r"\n')
    res = CliRunner().invoke(main, ["analyze", str(cfg), "--preset", "cs_4r"])
    assert res.exit_code == 2 and "either CONFIG or --preset" in res.output
    res = CliRunner().invoke(main, ["analyze", "--preset", "nope"])
    assert res.exit_code == 2 and "'nope' is not a preset" in res.output and "cs_4r" in res.output
    bad = tmp_path / "bad.toml"
    bad.write_text("[platform]\nn = 4\narm_lenght = 0.3\n")
    res = CliRunner().invoke(main, ["analyze", str(bad)])
    assert res.exit_code == 2 and "bad.toml" in res.output and "`arm_lenght`" in res.output and "Fix" in res.output
    empty = tmp_path / "empty.toml"
    empty.write_text("[simulation]\nt1 = 3\n")
    res = CliRunner().invoke(main, ["analyze", str(empty)])
    assert res.exit_code == 2 and "no [platform] table" in res.output
    broken = tmp_path / "broken.toml"
    broken.write_text("[platform\n")
    res = CliRunner().invoke(main, ["analyze", str(broken)])
    assert res.exit_code == 2 and "not valid TOML" in res.output


def test_out_writes_pictures(tmp_path):
    res = CliRunner().invoke(main, ["analyze", "--preset", "cs_4r", "--json", "--out", str(tmp_path / "figs")])
    assert res.exit_code == 0
    # with --json, stdout stays one JSON object (the "wrote" lines go to stderr)
    assert json.loads(res.stdout)["name"] == "cs_4r"
    for stem in ("cs_4r_design.png", "cs_4r_force_set.png"):
        f = tmp_path / "figs" / stem
        assert f.exists() and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f.stat().st_size > 10_000


def test_presets_command():
    res = run("presets")
    assert res.exit_code == 0
    for name in presets.names():
        assert name in res.output
    assert "CS_α0β0-Ted_6R" in res.output


def test_entry_point_subprocess():
    """The real program: stdout is exactly one JSON object, float64 results as in the API."""
    code = "from jaxrotor.cli import main; main()"
    proc = subprocess.run([sys.executable, "-c", code, "analyze", "--preset", "cs_4r", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["rank_G"] == 4 and out["yaw_authority"] == pytest.approx(1.163e-06 / 3.799e-05, rel=1e-7)
    assert math.isclose(out["hover_efficiency"], 1.0, rel_tol=1e-12)
