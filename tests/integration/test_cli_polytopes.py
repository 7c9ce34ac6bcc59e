"""The command-line contract for force polytopes: a plain [platform] table (with the short `omega_max`),
`jaxrotor analyze --json` reports the five set measures, and a design-only `jaxrotor optimize` finds the cant
of largest zero-moment force volume above hover (the exact optimum from the closed form in docs/analysis.md)."""

import json
import math

import numpy as np
from click.testing import CliRunner

from jaxrotor.cli import main

PLATFORM = """
[platform]
n = 6
arm_length = 0.385
mass = 3.5
inertia = [0.155, 0.147, 0.251]
c_f = 3.799e-5
c_tau = 1.163e-6
alpha = 0.6
omega_max = 700.0
"""

OPTIMIZE = """
[parameters."platform.alpha"]
transform = "interval"
lower = 0.05
upper = 1.4

[objective.volume_above_hover]
weight = 1.0
normalize = true

[optimize]
optimizer = "adam"
learning_rate = 0.1
iterations = 60
decay_steps = 60
"""


def test_analyze_json_reports_the_polytope_measures(tmp_path):
    path = tmp_path / "star.toml"
    path.write_text('name = "star"\n' + PLATFORM)
    res = CliRunner().invoke(main, ["analyze", str(path), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output[res.output.index("{"):])
    keys = ("zero_moment_force_volume", "hover_section_area", "volume_above_hover", "force_zonotope_volume",
            "hover_moment_volume")
    assert all(np.isfinite(out[k]) and out[k] > 0 for k in keys), {k: out.get(k) for k in keys}
    fmax = 3.799e-5 * 700.0**2  # c_f u_max [N]
    closed = 12 * math.sqrt(3) * fmax**3 * math.cos(0.6) * math.sin(0.6) ** 2  # V_FB of the star hexarotor
    assert math.isclose(out["zero_moment_force_volume"], closed, rel_tol=1e-9)
    assert out["volume_above_hover"] < out["zero_moment_force_volume"] <= out["force_zonotope_volume"] * (1 + 1e-9)


def test_design_only_optimize_finds_the_best_cant(tmp_path):
    path = tmp_path / "design.toml"
    path.write_text('name = "design"\n' + PLATFORM + OPTIMIZE)
    out = tmp_path / "run"
    res = CliRunner().invoke(main, ["optimize", str(path), "--out", str(out)])
    assert res.exit_code == 0, res.output
    result = json.loads((out / "result.json").read_text())
    alpha = result["final_params"]["platform.alpha"]
    assert abs(math.degrees(alpha) - 43.02) < 0.3, alpha  # exact argmax of volume above hover (docs/analysis.md)
