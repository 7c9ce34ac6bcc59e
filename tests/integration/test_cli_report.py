"""``jaxrotor report CONFIG --physics``: the page shows both layers, and its physics numbers are those of the
``jaxrotor validate`` run it makes (``validation/validation.json`` beside the page)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from jaxrotor.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_report_html import _parse  # noqa: E402  (the page parser of the content tests)

ROOT = Path(__file__).resolve().parents[2]


def test_report_with_the_physics_layer(tmp_path):
    res = CliRunner().invoke(main, ["report", str(ROOT / "configs" / "cs_4r.toml"), "--physics", "--t1", "0.5",
                                    "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    validation = json.loads((tmp_path / "validation" / "validation.json").read_text())
    page = _parse(tmp_path / "report.html")
    data = json.loads(page.scripts["report-data"])
    assert data["validation"] == validation and data["metrics"] == json.loads((tmp_path / "metrics.json").read_text())
    assert (tmp_path / "validation" / "trajectory_physics.npz").is_file()
    # the physics layer's numbers on the page are the validation's, exactly
    shown = {key: json.loads(value) for key, value, _ in page.numbers if key.startswith("physics.")}
    assert len(shown) >= 10, sorted(shown)
    for key, value in shown.items():
        parts = key.split(".")[1:]  # a physics flight metric, or a layer comparison of validation.json
        node = validation["metrics_physics"] if parts[0] in validation["metrics_physics"] else validation
        for part in parts:
            node = node[int(part)] if isinstance(node, list) else node[part]
        assert node == value, key
    assert shown["physics.duration"] == 0.5 and shown["physics.verdict"] == "ok"
    assert shown["physics.max_position_error_xyz.2"] < 1e-4  # a 0.5 s hover on the engine
