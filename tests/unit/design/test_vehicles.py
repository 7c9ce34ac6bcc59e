"""Presets built from parts (jaxrotor.design.vehicles): hand-derived mass properties, published values,
their TOML configs, class labels.

The hand derivation below is plain numpy, written from the shapes' textbook formulas and the
configs' numbers (read with ``tomllib``), independently of ``jaxrotor.design.parts``.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from jaxrotor.design import presets, vehicles
from jaxrotor.design.parts import propulsion
from jaxrotor.design.platform import geometric_rotor_positions, rotor_axes, rotor_positions
from jaxrotor.io.platform_table import load_platform

CONFIGS = Path(__file__).resolve().parents[3] / "configs" / "vehicles"
NAMES = tuple(vehicles.BUILDERS)


@pytest.fixture(scope="module")
def built():
    """Each preset and its config, built once (each build compiles the parts model once)."""
    return {name: (presets.get(name), load_platform(CONFIGS / f"{name}.toml")) for name in NAMES}


# --------------------------------------------------------------------------- the hand derivation

E3 = np.array([0.0, 0.0, 1.0])


def _cylinder(m, r, h, axis):
    """Solid cylinder about its centre: m r^2/2 about its axis, m (3 r^2 + h^2)/12 across."""
    zz = np.outer(axis, axis)
    return m * r**2 / 2 * zz + m * (3 * r**2 + h**2) / 12 * (np.eye(3) - zz)


def _box(m, a, b, c):
    """Solid box of extents a, b, c along x, y, z: m (b^2 + c^2)/12, ... ."""
    return m / 12 * np.diag([b**2 + c**2, a**2 + c**2, a**2 + b**2])


def _rods(m, D, axis):
    """Two crossed thin rods of length D normal to axis: m D^2/12 about it, m D^2/24 across."""
    zz = np.outer(axis, axis)
    return m * D**2 / 12 * zz + m * D**2 / 24 * (np.eye(3) - zz)


def _rx(a):
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


def _ry(a):
    return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])


def _rz(a):
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def _hand(cfg: dict, hubs, axes, tips, efficiency):
    """Mass, centre of mass, inertia about it, rotor inertia, c_f, c_tau, top speeds, from the config's parts.

    hubs, axes: (n, 3) rotor hubs about the geometric centre and spin axes; tips: (k, 3) arm ends.
    """
    P = cfg["parts"]
    hub, arm, mot, prop = P["hub"], P["arm"], P["motor"], P["propeller"]
    items = [(hub["mass"], np.zeros(3), _cylinder(hub["mass"], hub["radius"], hub["height"], E3))]
    for t in tips:  # arm: solid cylinder from the hub's rim to the tip
        dist = np.linalg.norm(t)
        d = t / dist
        items.append((arm["mass"], d * (hub["radius"] + dist) / 2,
                      _cylinder(arm["mass"], arm["radius"], dist - hub["radius"], d)))
    for p, z in zip(hubs, axes):
        items.append((mot["mass"], p - mot["height"] / 2 * z, _cylinder(mot["mass"], mot["radius"], mot["height"], z)))
        items.append((prop["mass"], p, _rods(prop["mass"], prop["diameter"], z)))
    if "battery" in P:
        b = P["battery"]
        items.append((b["mass"], np.asarray(b["offset"], float), _box(b["mass"], *b["size"])))
    if "payload" in P:
        items.append((P["payload"]["mass"], np.asarray(P["payload"]["offset"], float), np.zeros((3, 3))))
    if "landing_gear" in P:
        g = P["landing_gear"]
        for k in range(g["legs"]):
            az = math.pi / g["legs"] + 2 * math.pi * k / g["legs"]
            c = np.array([g["radius"] * math.cos(az), g["radius"] * math.sin(az), -hub["height"] / 2 - g["length"] / 2])
            items.append((g["mass"], c, _cylinder(g["mass"], g["leg_radius"], g["length"], E3)))
    m = sum(mk for mk, _, _ in items)
    com = sum(mk * ck for mk, ck, _ in items) / m
    J = np.zeros((3, 3))
    for mk, ck, Ik in items:  # parallel axes: I_k + m_k (|r|^2 I - r r^T), r = c_k - c
        r = ck - com
        J += Ik + mk * (r @ r * np.eye(3) - np.outer(r, r))
    J_r = mot.get("rotor_mass", 0.0) * mot["radius"] ** 2 + prop["mass"] * prop["diameter"] ** 2 / 12
    rho, D = P.get("air_density", 1.225), prop["diameter"]
    c_f = np.asarray(efficiency) * prop["c_t"] * rho * D**4 / (4 * math.pi**2)
    c_tau = np.asarray(efficiency) * prop["c_p"] * rho * D**5 / (8 * math.pi**3)
    top = None
    if "kv" in mot and "battery" in P:  # R K_v c_tau w^2 + w / K_v - (V - R I_0) = 0, and the current limit
        kv = mot["kv"] * 2 * math.pi / 60
        R, I0, Imax = mot.get("resistance", 0.0), mot.get("no_load_current", 0.0), mot.get("max_current", math.inf)
        V = P["battery"]["cells"] * 3.7
        top = []
        for ct in c_tau:
            roots = np.roots([R * kv * ct, 1 / kv, -(V - R * I0)])
            w_v = float(max(r.real for r in roots if abs(r.imag) < 1e-9 and r.real > 0))
            top.append(min(w_v, math.sqrt((Imax - I0) / (kv * ct))))
        top = np.array(top)
    return m, com, J, J_r, c_f, c_tau, top


def _x_ring(n, arm):
    g = [math.pi - math.pi / n + k * 2 * math.pi / n for k in range(n)]
    return np.array([[arm * math.cos(a), arm * math.sin(a), 0.0] for a in g])


def _geometry_x_quad(cfg):
    pl = cfg["platform"]
    hubs = _x_ring(pl["n"], pl["arm_length"])
    return hubs, np.tile(E3, (pl["n"], 1)), hubs, np.ones(pl["n"])


def _geometry_paper(cfg):
    pl = cfg["platform"]
    a0, b0 = math.radians(pl["alpha_deg"]), math.radians(pl["beta_deg"])
    hubs, axes = [], []
    for k in range(pl["n"]):  # eqs. (3)-(4): gamma_i = (i-1) 2 pi/n, alpha_i = (-1)^i alpha_0
        g = 2 * math.pi * k / pl["n"]
        hubs.append(pl["arm_length"] * _rz(g) @ np.array([1.0, 0.0, 0.0]))
        axes.append(_rz(g) @ _ry(b0) @ _rx((-1.0) ** (k + 1) * a0) @ E3)
    hubs = np.array(hubs)
    return hubs, np.array(axes), hubs, np.ones(pl["n"])


def _geometry_x8(cfg):
    pl = cfg["platform"]
    base = _x_ring(pl["n"] // 2, pl["arm_length"])
    h = pl["separation"] / 2  # upper rotors +s/2 along z_i, lower ones -s/2, one arm per pair
    hubs = np.concatenate([base + h * E3, base - h * E3])
    eff = np.concatenate([np.ones(len(base)), np.full(len(base), pl["lower_efficiency"])])
    return hubs, np.tile(E3, (pl["n"], 1)), base, eff


HAND = {
    "x_quad_parts": (_geometry_x_quad, lambda: load_platform(CONFIGS / "x_quad_parts.toml")),
    "paper_hexarotor_parts": (_geometry_paper, lambda: presets.get("paper_hexarotor_parts")),
    "x8": (_geometry_x8, lambda: presets.get("x8")),
}


@pytest.mark.parametrize("name", list(HAND))
def test_mass_properties_and_propulsion_by_hand(name):
    """Parallel-axis sums part by part, c_f, c_tau and the top speed, against the derived platform (1e-12)."""
    geometry, build = HAND[name]
    cfg = tomllib.loads((CONFIGS / f"{name}.toml").read_text())
    hubs, axes, tips, eff = geometry(cfg)
    m, com, J, J_r, c_f, c_tau, top = _hand(cfg, hubs, axes, tips, eff)
    p = build()
    np.testing.assert_allclose(np.asarray(geometric_rotor_positions(p)), hubs, rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.asarray(rotor_axes(p)), axes, rtol=0, atol=1e-15)
    np.testing.assert_allclose(float(p.mass), m, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(p.mass_properties().com), com, rtol=0, atol=1e-12 * np.abs(hubs).max())
    np.testing.assert_allclose(np.asarray(p.inertia), J, rtol=0, atol=1e-12 * np.abs(J).max())
    np.testing.assert_allclose(np.asarray(p.J_r), J_r, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(p.c_f), c_f, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(p.c_tau), c_tau, rtol=1e-12)
    if "rotor_speed_max" not in p.overrides:
        np.testing.assert_allclose(np.asarray(p.rotor_speed_max), top, rtol=1e-12)
    if "com_offset" not in p.overrides:  # rotor hubs about the centre of mass
        np.testing.assert_allclose(np.asarray(rotor_positions(p)), hubs - com, rtol=0, atol=1e-12)
    print(f"{name}: m = {m:.6f} kg, com = {np.round(com, 6)} m, J = diag({np.array2string(np.diag(J), precision=7)}) kg m^2, "
          f"c_f = {c_f[0]:.6e}, c_tau = {c_tau[0]:.6e}"
          + ("" if top is None else f", top speed {top[0]:.2f} rad/s"))


# --------------------------------------------------------------------------- published values


@pytest.mark.parametrize("name", NAMES)
def test_preset_matches_its_published_values(built, name):
    """Mass (and inertia, where published) within the stated tolerance; rotor constants exactly."""
    p, _ = built[name]
    pub = vehicles.PUBLISHED[name]
    tol = pub["tolerance"]
    m, J = float(p.mass), np.diag(np.asarray(p.inertia))
    line = f"{name}: m = {m:.5f} kg (published {pub['mass']}, {100 * (m / pub['mass'] - 1):+.2f} %)"
    assert abs(m / pub["mass"] - 1) <= tol
    if pub["inertia"] is not None:
        err = J / np.asarray(pub["inertia"]) - 1
        line += f", J = diag({np.array2string(J, precision=7)}) (published {pub['inertia']}, {np.round(100 * err, 2)} %)"
        assert np.all(np.abs(err) <= tol), line
        off = np.asarray(p.inertia) - np.diag(J)
        assert np.abs(off).max() <= 1e-12 * J.max()  # principal axes along the body axes, as published
    for key in ("c_f", "c_tau"):
        if pub[key] is not None:  # the upper rotors (coaxial lower ones carry the efficiency factor)
            np.testing.assert_allclose(np.asarray(getattr(p, key))[: 4 if name == "x8" else None][0], pub[key],
                                       rtol=1e-12)
    derived = float(propulsion(p.parts).rotor_speed_max)
    if pub["rotor_speed_max"] is not None:
        line += (f", top speed {np.asarray(p.rotor_speed_max)[0]:.1f} rad/s (published {pub['rotor_speed_max']:.1f}; "
                 f"motor model {derived:.1f})")
        if "rotor_speed_max" in p.overrides:
            assert float(np.asarray(p.rotor_speed_max)[0]) == pub["rotor_speed_max"]
    print(line)
    assert pub["source"] and presets.describe(name)


def test_paper_constants_agree_with_table_ii():
    assert vehicles.PAPER_ARM_LENGTH == presets.TABLE_II["arm_length"]
    assert vehicles.PAPER_GRAVITY == presets.TABLE_II["gravity"]
    assert vehicles.PAPER_ROTOR_SPEED_MAX == presets.ROTOR_SPEED_MAX
    p = presets.get("paper_hexarotor_parts")
    assert p.overrides == ("com_offset", "rotor_speed_max")
    np.testing.assert_allclose(np.asarray(p.alpha), presets.TABLE_II["alpha0"], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(p.beta), presets.TABLE_II["beta0"], rtol=1e-15)


# --------------------------------------------------------------------------- configs = presets


@pytest.mark.parametrize("name", NAMES)
def test_config_is_the_preset(built, name):
    """configs/vehicles/<name>.toml describes the same vehicle as the preset (1e-12)."""
    a, b = built[name]
    text = (CONFIGS / f"{name}.toml").read_text()
    assert "preset" not in tomllib.loads(text)["platform"] and text.startswith("#")
    for what in ("mass", "inertia", "c_f", "c_tau", "kappa", "rotor_speed_max", "rotor_inertia", "gravity"):
        x, y = np.asarray(getattr(a, what)), np.asarray(getattr(b, what))
        np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-15, err_msg=what)
    np.testing.assert_allclose(np.asarray(rotor_axes(b)), np.asarray(rotor_axes(a)), rtol=0, atol=1e-12)
    g = np.asarray(geometric_rotor_positions(a))
    np.testing.assert_allclose(np.asarray(geometric_rotor_positions(b)), g, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(rotor_positions(b)), np.asarray(rotor_positions(a)), rtol=0, atol=1e-12)
    assert b.overrides == a.overrides


# --------------------------------------------------------------------------- classes


LABELS = {"paper_hexarotor_parts": "CS_α0β0-Ted_6R", "x500": "CS_4R", "f450": "CS_4R", "s550": "CS_6R",
          "x8": "nCS_8R", "y6": "nCS_6R", "crazyflie": "CS_4R", "hummingbird": "CS_4R"}


@pytest.mark.parametrize("name", NAMES)
def test_class_label(built, name):
    """Table I labels: an X quadrotor is CS_4R, coaxial pairs make two rotor planes (nC)."""
    p, _ = built[name]
    assert p.label() == LABELS[name]
