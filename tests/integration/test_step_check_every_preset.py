"""The contract of "every vehicle flies": ``configs/step_check.toml`` with any fixed-tilt preset in place of ``x500``
(the fully actuated controller for a fully actuated preset, as the config's comment says) flies as written through
``jaxrotor simulate`` and writes ``verdict`` and the per-axis step metrics into ``metrics.json``."""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jaxrotor import presets
from jaxrotor.allocation import allocation_matrix
from jaxrotor.analysis import hover_at_attitude
from jaxrotor.cli import main
from jaxrotor.cli.analyze import PRESET_ROWS

TEXT = (Path(__file__).resolve().parents[2] / "configs" / "step_check.toml").read_text()
FIXED_TILT = [name for name, label, *_ in PRESET_ROWS if "-Ting" not in label]


def _fully_actuated(platform) -> bool:
    """Rank-6 allocation (rows scaled to one) and level hover with a margin."""
    G = np.asarray(allocation_matrix(platform))
    S = np.diag(1 / np.maximum(np.abs(G).max(axis=1), 1e-30))
    return np.linalg.matrix_rank(S @ G, tol=1e-6) == 6 and hover_at_attitude(platform, 0.0, 0.0).margin > 0.1


def test_the_contract_names_every_fixed_tilt_preset():
    assert "x500" in FIXED_TILT and len(FIXED_TILT) >= 10
    assert set(FIXED_TILT) <= set(presets.names())


@pytest.mark.parametrize("name", FIXED_TILT)
def test_step_check_flies_every_fixed_tilt_preset_as_written(name, tmp_path):
    kind = "fully_actuated" if _fully_actuated(presets.get(name)) else "underactuated"
    text = TEXT.replace('preset = "x500"', f'preset = "{name}"').replace('kind = "underactuated"', f'kind = "{kind}"', 1)
    path = tmp_path / "step_check.toml"
    path.write_text(text)
    res = CliRunner().invoke(main, ["simulate", str(path), "--out", str(tmp_path / "out"), "--no-progress"])
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert m["verdict"] == "ok" and m["diverged"] is False
    assert m["step_size"] == [1.0, 0.0, 0.0]
    for key in ("step_rise_time", "step_overshoot", "step_settling_time"):
        assert len(m[key]) == 3, key
    # the 1 m step in x rises and settles within the 5 s after it, with little overshoot
    assert 0.0 < m["step_rise_time"][0] < 5.0 and 0.0 <= m["step_overshoot"][0] < 0.1
    assert m["step_settling_time"][0] is not None and m["step_settling_time"][0] < 5.0
