"""Contract: `jaxrotor presets --json` lists every preset with `name`, `n`, `label`, `tilting` (issue "Every vehicle flies")."""

import json

from click.testing import CliRunner

from jaxrotor import presets
from jaxrotor.cli import main


def test_presets_json_lists_every_preset_as_built():
    res = CliRunner().invoke(main, ["presets", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert [r["name"] for r in rows] == presets.names()
    for r in rows:
        p = presets.get(r["name"])
        assert {"name", "n", "label", "tilting"} <= set(r)
        assert r["n"] == p.n_rotors and r["label"] == p.label() and r["tilting"] is bool(p.is_tilting), r
