"""Outputs named for the vehicle: a flight other than the paper's use case prints and draws under its own name,
without the paper's columns, and ``validate`` flags a vehicle whose layers fly different inertias."""

import json

import pytest

from jaxrotor.io import config as cfg
from jaxrotor.io import plotting
from jaxrotor.workflows import compare, usecase
from jaxrotor.workflows import validate as pv
from unit.io.test_config import BASE  # the paper hexarotor hovering: not the paper's maneuver


@pytest.fixture
def titles(monkeypatch):
    """The title of every figure drawn (the figures themselves are not drawn)."""
    seen = {}

    def record(name):
        def plot(*args, title=None, **kw):
            seen[name] = title
            return args[1] if len(args) > 1 else None
        return plot

    for name in ("plot_trajectory_3d", "plot_errors", "plot_rotor_speeds"):
        monkeypatch.setattr(plotting, name, record(name))
    monkeypatch.setattr(compare, "plot_delta_omega", record("plot_delta_omega"))
    monkeypatch.setattr(pv, "plot_delta_omega", record("plot_delta_omega"))
    return seen


def test_simulate_names_another_flight(tmp_path, titles):
    """The paper's vehicle hovering: the table, Table IV's place and every figure carry the flight's name."""
    conf = cfg.loads(BASE.replace('name = "t"', 'name = "hover_check"') + "[flight]\nt1 = 0.2\n", "hover_check.toml")
    lines = []
    m = usecase.run(conf, tmp_path, progress=False, echo=lines.append, physics=True)
    out = "\n".join(lines)
    title = "hover_check (paper_hexarotor, CS_α0β0-Ted_6R)"
    assert out.startswith(f"{title}: tracking errors\n") and f"\n{title}: mean absolute errors" in out
    assert "Table IV" not in out and "paper" not in out.replace("paper_hexarotor", "")
    assert set(titles) == {"plot_trajectory_3d", "plot_errors", "plot_rotor_speeds", "plot_delta_omega"}
    assert all(t.startswith(f"{title}: ") and "Fig." not in t for t in titles.values()), titles
    written = json.loads((tmp_path / "metrics.json").read_text())
    assert "paper_table_iv_analytic" not in written and "paper_table_iv_analytic" not in m
    assert "paper_table_iv" not in json.loads((tmp_path / "metrics_physics.json").read_text())


X500_TYPED_INERTIA = """
name = "x500_typed"
[platform]
preset = "x500"
inertia = [0.03, 0.03, 0.05]  # kg m^2, typed in over what its parts give
[controller]
kind = "underactuated"
[reference]
kind = "hover"
duration = 1.0
[flight]
t1 = 0.2
"""


def test_validate_flags_a_layer_mismatch(tmp_path, titles):
    """The physics layer flies the parts' inertia, the analytic layer the typed-in one: validate says so."""
    conf = cfg.loads(X500_TYPED_INERTIA, "x500_typed.toml")
    lines = []
    v = pv.validate(conf, tmp_path, echo=lines.append)
    out = "\n".join(lines)
    assert out.startswith("x500_typed (x500, CS_4R): mean absolute errors, analytic (a) and physics (p) layer\nMAE ")
    assert "Table IV" not in out and "paper" not in out
    flagged = [line for line in lines if line.startswith("mass/inertia differ between the layers: ")]
    assert len(flagged) == 1 and "0.03 analytic" not in flagged[0] and "x 0.03 vs " in flagged[0]
    lm = json.loads((tmp_path / "validation.json").read_text())["layer_mismatch"]
    assert lm == v["layer_mismatch"] and lm["differ"] is True and lm["by_design"] is False
    assert lm["inertia"]["analytic"][0][0] == pytest.approx(0.03) and lm["max_relative_difference"] > lm["tolerance"]
    assert "paper_table_iv" not in v
    assert all(t.startswith("x500_typed (x500, CS_4R): ") and "Fig." not in t for t in titles.values()), titles
