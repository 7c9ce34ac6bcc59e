"""One vehicle for both layers: the physics model is built from the design's parts.

Measured (float64, MuJoCo 3.17), the X quadrotor below (hub, arms, motors with bells, propellers,
battery, payload): the engine's shapes alone (capsule arms, box blades, the motors under the blades)
give the analytic mass to 1e-16, a CoM 0.27 mm lower and the inertia about it to J_xx +0.075 %,
J_yy +0.070 %, J_zz +0.178 %; built from the platform's own parts the frame's inertial absorbs that, and the engine
equals the analytic layer to 3e-15 (mass, inertia, spin inertia J_r), the CoM on the origin, no hub
shift. fit_parts reproduces a typed-in mass and diagonal inertia to 2e-10 (cs_4r, hex_s550: flat
builds) and 3e-15 (a tilted star hexarotor). The paper hexarotor's MJCF is the one from before the physics
layer took the design's parts: the same elements and attributes, its numbers equal to 1e-12.
"""

import dataclasses
import xml.etree.ElementTree as ET
import warnings
from pathlib import Path

import equinox as eqx
import mujoco
import numpy as np
import pytest

from jaxrotor.design import layouts, presets
from jaxrotor.design.parts import Arm, Battery, Hub, Motor, Parts, Payload, Propeller
from jaxrotor.design.platform import rotor_positions, star_platform
from jaxrotor.physics import (
    InertiaMismatchWarning,
    ModelOptions,
    MuJoCoPlant,
    build_model,
    default_parts,
    fit_parts,
    paper_hexarotor_parts,
)
from jaxrotor.physics.mjcf import engine_mass_properties

#: The paper hexarotor's MJCF (``paper_hexarotor()`` + ``paper_hexarotor_parts()``, default options, float64) as
#: generated before the physics layer used the design's parts (written by 81d1ccf; the code since writes the same).
#: Compared number by number to rounding, not by a hash: the hub's shift puts the engine's centre of mass on the
#: origin, and its residue (about 1e-17 m) follows the machine's floating-point rounding.
PAPER_XML = Path(__file__).parent / "data" / "paper_hexarotor.xml"


def assert_same_mjcf(xml: str, reference: str, tol: float = 1e-12) -> None:
    """Two MJCF texts have the same elements, in order, with the same attributes; numeric attributes agree to
    ``tol`` (relative and absolute), the others exactly."""
    a, b = ET.fromstring(xml), ET.fromstring(reference)
    ea, eb = list(a.iter()), list(b.iter())
    assert [e.tag for e in ea] == [e.tag for e in eb]
    for x, y in zip(ea, eb):
        assert list(x.attrib) == list(y.attrib), (x.tag, x.attrib, y.attrib)
        for key, value in x.attrib.items():
            try:
                got, want = np.asarray(value.split(), float), np.asarray(y.attrib[key].split(), float)
            except ValueError:
                assert value == y.attrib[key], (x.tag, key)
                continue
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"<{x.tag} {key}>")


def quad_parts() -> Parts:
    return Parts(hub=Hub(0.6, 0.08, 0.05), arm=Arm(mass=0.03, radius=0.008),
                 motor=Motor(0.06, 0.014, 0.025, rotor_mass=0.02, kv=920, resistance=0.1, no_load_current=0.5,
                             max_current=25),
                 propeller=Propeller(diameter=0.254, pitch=0.114, mass=0.015, c_t=0.11, c_p=0.045),
                 battery=Battery(0.55, (0.14, 0.045, 0.035), (0, 0, -0.05), 4, 5000, 0.02),
                 payload=Payload(0.2, (0.03, 0, -0.08)))


@pytest.fixture(scope="module")
def quad():
    return layouts.x_layout(4, 0.25, parts=quad_parts())


def _com(pm):
    d = mujoco.MjData(pm.model)
    d.qpos[:] = pm.initial_qpos()
    mujoco.mj_forward(pm.model, d)
    return np.array(d.subtree_com[1])


def test_platform_with_parts_is_one_vehicle_on_both_layers(quad):
    with warnings.catch_warnings():
        warnings.simplefilter("error", InertiaMismatchWarning)  # within 0.5 %: the plant stays quiet
        plant = MuJoCoPlant().prepare(quad)
    pm = plant.model.value
    assert pm.parts is quad.parts  # the platform's own parts
    d = pm.relative_difference
    assert abs(d["mass"]) < 1e-12
    np.testing.assert_allclose(pm.platform_inertia, np.asarray(quad.inertia), rtol=0, atol=0)
    assert np.abs(d["inertia"]).max() < 1e-12  # xx, yy, zz and the payload's J_xz
    # the bell spins with the propeller: the engine's spin inertia is J_r = m_bell r^2 + m_p D^2 / 12
    np.testing.assert_allclose(pm.spin_inertia, np.asarray(quad.J_r), rtol=1e-12)
    assert np.linalg.norm(_com(pm)) < 1e-12
    assert np.linalg.norm(pm.hub_shift) == 0.0
    # the shapes alone (capsules, boxes, the motors under the blades) are within 0.5 % of the parts' formulas
    m_e, first, J_o = engine_mass_properties(quad, quad.parts)
    c = first / m_e
    J_e = J_o - m_e * (float(c @ c) * np.eye(3) - np.outer(c, c))
    J = np.asarray(quad.inertia)
    assert m_e == pytest.approx(float(quad.mass), rel=1e-12)
    np.testing.assert_allclose(np.diag(J_e) / np.diag(J) - 1, [7.47e-4, 6.99e-4, 1.778e-3], atol=2e-5)
    assert abs(c[2] + 2.712e-4) < 1e-6  # the motors under the blades: the shapes' CoM 0.27 mm low
    # rotors at rotor_positions (about the analytic CoM), the battery and payload where the parts put them
    m = pm.model
    site = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f"thrust{i}") for i in range(4)]
    body = [m.site_bodyid[s] for s in site]
    np.testing.assert_allclose(m.body_pos[body], np.asarray(rotor_positions(quad)), atol=1e-15)
    payload = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "payload")
    np.testing.assert_allclose(m.geom_pos[payload], np.array([0.03, 0, -0.08]) - np.asarray(quad.com_offset),
                               atol=1e-15)
    assert mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "battery") >= 0
    assert pm.floor_height == -np.inf  # no landing gear: nothing to stand on, no floor


def test_coaxial_pairs_share_one_arm():
    p = layouts.coaxial_x_layout(8, 0.3, 0.06, parts=quad_parts())
    pm = build_model(p, default_parts(p), ModelOptions(floor=False))
    names = [mujoco.mj_id2name(pm.model, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(pm.model.ngeom)]
    assert sum(nm.startswith("arm") for nm in names) == 4
    assert pm.max_relative_difference < 1e-12


@pytest.mark.parametrize("make", [
    presets.cs_4r,
    layouts.hex_s550,
    lambda: star_platform(6, 0.385, mass=3.5, c_f=3.8e-5, c_tau=1.2e-6, alpha=[0.3, -0.3] * 3, beta=0.17,
                          inertia=(0.155, 0.147, 0.251), name="tilted_star"),
], ids=["cs_4r", "hex_s550", "tilted_star"])
def test_fit_parts_reproduce_a_typed_in_mass_and_inertia(make):
    plat = make()
    parts = fit_parts(plat)
    assert parts.ballast is not None
    pm = build_model(plat, parts)
    J = np.asarray(plat.inertia, dtype=float)
    assert pm.mass == pytest.approx(float(plat.mass), rel=1e-9)
    np.testing.assert_allclose(np.diag(pm.inertia), np.diag(J), rtol=1e-9)
    assert np.abs(pm.inertia - np.diag(np.diag(pm.inertia))).max() < 1e-9 * J.max()
    assert np.linalg.norm(_com(pm)) < 1e-12 and np.linalg.norm(pm.hub_shift) < 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("error", InertiaMismatchWarning)
        MuJoCoPlant().prepare(plat)  # a plant without parts fits them: no mismatch


def test_an_inertia_no_body_has_is_refused_with_numbers():
    plat = star_platform(4, 0.25, mass=1.5, c_f=3.8e-5, c_tau=1.2e-6, inertia=(0.01, 0.01, 0.03), name="impossible")
    with pytest.raises(ValueError, match=r"`impossible`.*J_x \+ J_y - J_z = -0\.01 .*Fix:"):
        fit_parts(plat)
    skew = star_platform(4, 0.25, mass=1.5, c_f=3.8e-5, c_tau=1.2e-6, name="skew",
                         inertia=[[0.02, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.03]])
    with pytest.raises(ValueError, match=r"`skew`.*J_xy = 0\.001 .*Fix:"):
        fit_parts(skew)


def test_paper_hexarotor_xml_is_unchanged_and_keeps_its_physics_inertia():
    plat = presets.paper_hexarotor()
    assert bool(eqx.tree_equal(default_parts(plat), paper_hexarotor_parts()))
    pm = build_model(plat, paper_hexarotor_parts())
    assert_same_mjcf(pm.xml, PAPER_XML.read_text())
    # J^p against J^a is the paper's design: reported, not warned
    assert pm.max_relative_difference > 0.4
    with warnings.catch_warnings():
        warnings.simplefilter("error", InertiaMismatchWarning)
        MuJoCoPlant().prepare(plat)


def test_parts_with_an_inertia_override_warn_with_both_numbers(quad):
    J = np.asarray(quad.inertia)
    given = layouts.x_layout(4, 0.25, parts=quad_parts(), inertia=1.1 * J, name="x4_override")
    assert "inertia" in given.overrides
    with pytest.warns(InertiaMismatchWarning, match=r"x4_override.*given explicitly: inertia.*-9\.09 %") as rec:
        plant = MuJoCoPlant().prepare(given)
    text = str(rec[0].message)
    assert f"{float(J[0, 0] * 1.1):.6g}" in text and f"{plant.model.value.inertia[0, 0]:.6g}" in text
    # an explicit plant parts= wins over the platform's: the same check
    other = dataclasses.replace(quad_parts(), payload=None)
    with pytest.warns(InertiaMismatchWarning, match="mass"):
        MuJoCoPlant(parts=other).prepare(quad)
