"""``jaxrotor validate``: both layers, Table IV with the paper's columns, validation.json."""

import json

import numpy as np
from click.testing import CliRunner

from jaxrotor.cli import main
from jaxrotor.workflows.validate import VALIDATION_KEYS


def test_validate_writes_table_iv_and_validation_json(tmp_path):
    res = CliRunner().invoke(main, ["validate", "configs/paper_reproduction.toml", "--t1", "1.0", "--out",
                                    str(tmp_path), "--no-figures"])
    assert res.exit_code == 0, res.output
    for head in ("paper a", "paper p", "paper p-a", "jaxrotor a", "jaxrotor p", "jaxrotor p-a"):
        assert head in res.output
    v = json.loads((tmp_path / "validation.json").read_text())
    assert set(VALIDATION_KEYS) <= set(v)
    # the paper's vehicle on its maneuver: the paper's columns; its layers' inertias differ by the paper's design
    assert v["layer_mismatch"]["differ"] is True and v["layer_mismatch"]["by_design"] is True and "paper_table_iv" in v
    assert "mass/inertia differ between the layers (by design: " in res.output
    assert v["diverged"] is False
    assert v["verdict_analytic"] == v["verdict_physics"] == "ok" and v["metrics_physics"]["verdict"] == "ok"
    assert res.output.splitlines()[-2:] == ["verdict (analytic): ok", "verdict (physics): ok"]
    assert abs(v["physics_mass"] - 3.5) < 0.07
    np.testing.assert_allclose(np.diag(v["physics_inertia"]), [0.081, 0.081, 0.162], rtol=0.02)
    for key in ("mae_position_analytic", "mae_position_physics", "mae_orientation_analytic",
                "mae_orientation_physics"):
        assert len(v[key]) == 3 and all(np.isfinite(v[key]))
    # the first second is the climb from the floor: both layers track it to well under a millimetre
    assert max(v["mae_position_physics"]) < 1e-3
    assert 0.0 <= v["max_abs_delta_omega_steady"] <= v["max_abs_delta_omega"] and v["max_abs_delta_omega"] < 2.0
    assert v["wall_time_physics_s"] > 0 and v["wall_time_analytic_s"] > 0
    # the JSON's physics column is what the table printed
    assert f"{v['mae_position_physics'][0]:.4e}" in res.output


def test_validate_bad_config_exits_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[platform]\npreset = 'no_such_preset'\n")
    res = CliRunner().invoke(main, ["validate", str(bad), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "error:" in res.output
