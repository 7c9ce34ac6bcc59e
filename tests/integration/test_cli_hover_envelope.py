"""``jaxrotor analyze``: the hover envelope rows, ``--hover-attitude``, the JSON blocks and the polar plot."""

import json
import math

from click.testing import CliRunner

from jaxrotor import analysis, presets
from jaxrotor.cli import main


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_table_headline_envelope_and_attitude():
    res = run("analyze", "--hover-attitude", "-10,5")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("hovers level within the input bounds (margin 0.344")
    assert "13.4 deg in every direction" in lines[0]
    assert "yes (margin 0.0858" in lines[2] and "roll -10 deg, pitch 5 deg" in lines[2]
    for text in ("-- hover envelope", "13.38 / 24.94 deg",
                 "max pitch nose down / nose up", "lateral force at level hover max / all dirs"):
        assert text in res.output, text
    res = run("analyze", "--preset", "cs_4r", "--hover-attitude=1,0")
    assert "level attitude only (max hover tilt 0 deg)" in res.output.splitlines()[0]
    assert "no (no input makes that force with zero moment" in res.output


def test_json_blocks():
    res = run("analyze", "--preset", "paper_hexarotor", "--json", "--hover-attitude", "0,20")
    out = json.loads(res.output)
    env = out["hover_envelope"]
    assert len(env["max_tilt_deg"]) == len(env["headings_deg"]) == 72 and env["level_hoverable"] is True
    assert math.isclose(env["min_max_tilt_deg"], 13.384, abs_tol=2e-3)
    api = analysis.hover_envelope(presets.get("paper_hexarotor")).to_dict()
    assert env == api
    att = out["hover_attitude"]
    assert att["roll_deg"] == 0 and att["pitch_deg"] == 20 and att["feasible"] is False and att["margin"] < 0
    assert len(att["u"]) == 6
    assert "hover_attitude" not in json.loads(run("analyze", "--json").output)


def test_bad_attitude():
    res = CliRunner().invoke(main, ["analyze", "--hover-attitude", "10"])
    assert res.exit_code == 2 and "is not ROLL,PITCH" in res.output and "Fix" in res.output


def test_out_writes_the_polar_plot(tmp_path):
    res = run("analyze", "--preset", "paper_hexarotor", "--out", str(tmp_path))
    f = tmp_path / "paper_hexarotor_hover_envelope.png"
    assert res.exit_code == 0 and f.exists() and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {f}" in res.output
