"""Outputs named for the vehicle: the paper's use case predicate, the tables' titles, the layers' mass check."""

import dataclasses
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor.design import presets
from jaxrotor.io import config as cfg
from jaxrotor.reference import Hover, paper_maneuver
from jaxrotor.workflows import usecase
from jaxrotor.workflows.compare import PAPER_TABLE_IV, layer_mismatch, table_iv
from jaxrotor.workflows.paper import is_paper_maneuver, is_paper_use_case, is_paper_vehicle, output_title
from unit.io.test_config import BASE  # the paper hexarotor hovering: not the paper's maneuver


@pytest.mark.parametrize("name", ["paper_hexarotor", "paper_hexarotor_physics", "paper_hexarotor_parts"])
def test_paper_presets_are_the_paper_vehicle(name):
    p = presets.get(name)
    assert is_paper_vehicle(p)
    # renamed, with rotor inertia and another top speed: still the Table II vehicle
    assert is_paper_vehicle(dataclasses.replace(p, name="mine", rotor_inertia=jnp.full((6,), 1e-4),
                                                rotor_speed_max=jnp.full((6,), 650.0)))


def test_other_vehicles_are_not():
    p = presets.paper_hexarotor()
    for other in (dataclasses.replace(p, mass=jnp.asarray(4.0)),  # another mass
                  dataclasses.replace(p, inertia=jnp.diag(jnp.array([0.155, 0.147, 0.3]))),  # neither J^a nor J^p
                  dataclasses.replace(p, alpha=jnp.asarray(0.3)),  # another cant
                  presets.get("cs_a0_ted_6r"), presets.get("x500"), presets.get("cs_a0_ting_6r")):
        assert not is_paper_vehicle(other), other.name


def test_paper_maneuver_only_with_its_parameters():
    assert is_paper_maneuver(paper_maneuver())
    assert not is_paper_maneuver(paper_maneuver(duration=15.0, takeoff_time=2.6667, landing_time=2.6667, period=10.0))
    assert not is_paper_maneuver(paper_maneuver(altitude=2.0))
    assert not is_paper_maneuver(Hover((0.0, 0.0, 1.0), 45.0))


def test_use_case_predicate_and_titles():
    spec = usecase.paper_reproduction_spec()
    assert is_paper_use_case(spec) and is_paper_use_case(spec.compare) and is_paper_use_case(spec.with_t1(0.5))
    assert output_title(spec) == "CS_α0β0-Ted_6R"
    hover = cfg.loads(BASE, "t.toml")  # the paper's vehicle on another maneuver
    assert not is_paper_use_case(hover) and output_title(hover) == "t (paper_hexarotor, CS_α0β0-Ted_6R)"
    x500 = cfg.loads(BASE.replace('preset = "paper_hexarotor"', 'preset = "x500"').replace(
        'kind = "fully_actuated"', 'kind = "underactuated"').replace('name = "t"', 'name = "x500"'), "x.toml")
    assert output_title(x500) == "x500 (CS_4R)"


def test_tables_cite_the_paper_only_for_its_case():
    a = {"mae_position_xyz": [1e-3, 2e-3, 3e-3], "mae_orientation_xyz": [1e-4, 2e-4, 3e-4], "diverged": False}
    with_paper = table_iv(a, a, PAPER_TABLE_IV, title="ignored")
    assert with_paper.splitlines()[0].startswith("Table IV") and "paper a" in with_paper and "ignored" not in with_paper
    mine = table_iv(a, a, None, title="x500 (CS_4R)")
    lines = mine.splitlines()
    assert lines[0].startswith("x500 (CS_4R): ") and lines[1].split()[:4] == ["MAE", "jaxrotor", "a", "jaxrotor"]
    assert "Table IV" not in mine and "paper" not in mine
    assert table_iv(a, a, None).splitlines()[0].startswith("MAE")


def _model(platform):
    from jaxrotor.physics.mjcf import build_model
    from jaxrotor.workflows.compare import physics_settings

    s = physics_settings(platform)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # InertiaMismatchWarning: the point of the mismatching case
        return build_model(platform, s.parts, s.options)


def test_layer_mismatch():
    same = layer_mismatch(_model(presets.get("x500")))
    assert same["differ"] is False and same["line"] == "" and same["max_relative_difference"] < 1e-6
    x500 = presets.get("x500")
    J = np.asarray(x500.inertia) * np.array([1.3, 1.3, 1.0])[:, None]  # typed in over what the parts give
    heavy = dataclasses.replace(x500, inertia=jnp.asarray(J), overrides=(*x500.overrides, "inertia"))
    m = layer_mismatch(_model(heavy))
    assert m["differ"] is True and m["by_design"] is False
    assert m["line"].startswith("mass/inertia differ between the layers: ") and "(-23.08 %)" in m["line"]
    assert m["inertia"]["relative"][0][0] == pytest.approx(1 / 1.3 - 1) and abs(m["mass"]["relative"]) < 1e-9
    paper = layer_mismatch(_model(presets.paper_hexarotor()), paper=True)  # J^a against the engine's J^p
    assert paper["differ"] is True and paper["by_design"] is True and "by design" in paper["line"]
