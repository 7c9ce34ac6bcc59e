"""``jaxrotor design CONFIG --out DIR --quick``: the contract of ``design.json`` and ``best.toml`` on the tilted
hexarotor example (the quadrotor example runs in the tutorial, ``docs/tutorials/design_quad.md``, checked by
``tests/artifacts/test_docs_examples.py``); the winning design read back by ``jaxrotor analyze`` is the design the
optimiser measured."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxrotor.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["design_fully_actuated_hex"])
def test_design_quick_contract(name, tmp_path):
    res = CliRunner().invoke(main, ["design", str(ROOT / "configs" / f"{name}.toml"), "--out", str(tmp_path),
                                    "--quick", "--no-progress"])
    d = json.loads((tmp_path / "design.json").read_text())
    assert res.exit_code == (0 if d["verdict"]["ok"] else 1), res.output
    assert "step/s" not in res.output and "flight/s" not in res.output  # --no-progress: no bars
    # the contract
    obj = d["objective"]
    assert obj["name"] in ("mass", "endurance", "payload") and obj["sense"] in ("maximize", "minimize")
    best = d["best"]
    assert set(best) >= {"objective", "parameters", "constraints", "endurance_hover_s"}
    for key in ("gradient", "baseline"):
        assert set(d[key]) >= {"method", "evaluations", "best_objective", "wall_s"}
        assert d[key]["evaluations"] > 0 and d[key]["wall_s"] > 0
    assert "CMA-ES" in d["baseline"]["method"]
    # the baseline got budget_factor x the gradient's evaluations (flights flown, the same per evaluation)
    assert d["baseline"]["evaluations"] >= d["baseline"]["budget_factor"] * d["gradient"]["evaluations"]
    assert isinstance(d["pareto"], list) and len(d["pareto"]) == 2
    for p in d["pareto"]:
        if p["feasible"]:  # every point shown satisfies every constraint at its own bound
            assert all(c["satisfied"] for c in p["constraints"].values()), p
    # the winning design satisfies every constraint, and its objective is its measure
    cons = best["constraints"]
    assert cons and all(c["satisfied"] for c in cons.values()), cons
    for c in cons.values():
        assert (c["value"] >= c["bound"]) if c["sense"] == "at_least" else (c["value"] <= c["bound"])
    assert best["objective"] == best["measures"][obj["name"]]
    assert best["endurance_hover_s"] == best["measures"]["endurance"]
    # the rotor-loss constraint is checked by the exact analysis of every single loss; a lost one fails the verdict
    losses = best["rotor_losses_analysis"]
    assert [r["rotor"] for r in losses] == [1, 2, 3, 4, 5, 6]
    assert all(r["outcome"] in ("full_pose", "yaw_released", "lost") for r in losses)
    if any(r["outcome"] == "lost" for r in losses):
        assert not d["verdict"]["ok"] and any("analysis" in r for r in d["verdict"]["reasons"])
    # the physics layer flew the winner: its hover endurance within 2 % of the analytic one
    phys = d["physics"]
    assert set(phys) >= {"objective", "tracking"}
    assert abs(phys["endurance_hover_s"] / best["endurance_hover_s"] - 1.0) <= 0.02
    assert math.isfinite(phys["tracking"]) and phys["tracking"] > 0
    # best.toml is a vehicle config every command takes: analyze reads back the mass the optimiser measured
    res = CliRunner().invoke(main, ["analyze", str(tmp_path / "best.toml"), "--json"])
    assert res.exit_code == 0, res.output
    a = json.loads(res.output[res.output.index("{"):])
    assert a["mass_kg"] == pytest.approx(best["mass_kg"], rel=1e-9)
    assert (tmp_path / "convergence.png").is_file()
