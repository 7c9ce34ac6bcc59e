"""Layout builders, the seeds/002 presets, and [platform] tables."""

import math

import numpy as np
import pytest

from jaxrotor import analysis, presets
from jaxrotor.allocation import force_matrix, moment_matrix
from jaxrotor.design.layouts import (
    coaxial_layout,
    h_layout,
    hex_s550,
    octo_x8,
    plus_layout,
    racing_250,
    x_layout,
)
from jaxrotor.design.platform import rotor_axes, rotor_positions
from jaxrotor.io.platform_table import platform_from_table
from jaxrotor.io.toml import ConfigError

CF, CT = 1.0e-5, 1.6e-7
KW = dict(mass=1.5, c_f=CF, c_tau=CT, hub_mass=0.08, rotor_speed_max=800.0)


def _pos(p):
    return np.asarray(rotor_positions(p))


# --------------------------------------------------------------------------- builders


def test_x_layout_matches_seeds_x_frame():
    """seeds/002: rear-left, rear-right, front-right, front-left, spinning CCW, CW, CCW, CW."""
    arm = 0.175
    p = x_layout(4, arm, **KW)
    pos = _pos(p)
    s = arm / math.sqrt(2)
    np.testing.assert_allclose(pos, [[-s, s, 0], [-s, -s, 0], [s, -s, 0], [s, s, 0]], atol=1e-12)
    np.testing.assert_array_equal(np.asarray(p.kappa), [-1, 1, -1, 1])
    # the seeds/002 mixer A = [1; y_i; -x_i; -(k_tau/k_T) sigma_i] (sigma = +1 for CCW) per newton of thrust
    A_seeds = np.vstack([np.ones(4), pos[:, 1], -pos[:, 0], -(CT / CF) * -np.asarray(p.kappa)])
    F, M = np.asarray(force_matrix(p)), np.asarray(moment_matrix(p))
    np.testing.assert_allclose(np.vstack([F[2], M]) / CF, A_seeds, atol=1e-12)


def test_x_layout_nothing_on_the_nose():
    for n in (4, 6, 8):
        pos = _pos(x_layout(n, 0.3, **KW))
        az = np.arctan2(pos[:, 1], pos[:, 0])
        assert np.min(np.abs(az)) == pytest.approx(math.pi / n)
        assert az[0] == pytest.approx(math.pi - math.pi / n)  # first rotor half a sector off the tail, left
        assert np.all(np.diff(np.unwrap(az)) > 0)  # counter-clockwise order


def test_plus_layout_is_the_paper_star():
    p = plus_layout(4, 0.25, mass=1.5, c_f=3.799e-05, c_tau=1.163e-06, hub_mass=0.08, body_radius=0.1, rotor_speed_max=700.0)
    q = presets.get("cs_4r")
    np.testing.assert_allclose(_pos(p), _pos(q), atol=1e-15)
    np.testing.assert_allclose(np.asarray(p.kappa), np.asarray(q.kappa))
    np.testing.assert_allclose(np.asarray(p.inertia), np.asarray(q.inertia), rtol=1e-12)
    assert p.label() == "CS_4R"


def test_tilted_x_layout_keeps_tilt_leaves():
    p = x_layout(6, 0.3, alpha=0.2, beta=0.1, **KW)
    assert p.alpha.shape == () and p.beta.shape == ()
    assert analysis.ranks(p)["rank_G"] == 6


@pytest.mark.parametrize("n", [4, 6, 8])
def test_h_layout_geometry_and_spins(n):
    L, W = 0.6, 0.3
    p = h_layout(n, L, W, **KW)
    pos = _pos(p)
    kappa = np.asarray(p.kappa)
    m = n // 2
    assert np.allclose(np.sort(np.unique(np.round(pos[:, 1], 12))), [-W / 2, W / 2])
    assert pos[:, 0].max() == pytest.approx(L / 2) and pos[:, 0].min() == pytest.approx(-L / 2)
    assert pos[0, 0] == pytest.approx(-L / 2) and pos[0, 1] == pytest.approx(W / 2)  # rear-left first
    for y in (W / 2, -W / 2):
        rail = np.where(np.isclose(pos[:, 1], y))[0]
        assert len(rail) == m
        order = rail[np.argsort(-pos[rail, 0])]
        assert np.all(kappa[order][1:] == -kappa[order][:-1])  # neighbours on a rail spin opposite
    for i in range(n):
        j = np.where(np.isclose(pos[:, 0], pos[i, 0]) & ~np.isclose(pos[:, 1], pos[i, 1]))[0][0]
        assert kappa[j] == -kappa[i]  # across the rails opposite
    assert analysis.torque_rows_balanced(p)
    assert "nS" in p.label()


def test_coaxial_layout_stacks_counter_rotating_rotors():
    base = x_layout(4, 0.35, **KW)
    x8 = coaxial_layout(base, 0.1, 0.85)
    assert x8.n_rotors == 8
    pb, p8 = _pos(base), _pos(x8)
    np.testing.assert_allclose(p8[:4], pb + [0, 0, 0.05], atol=1e-15)
    np.testing.assert_allclose(p8[4:], pb - [0, 0, 0.05], atol=1e-15)
    np.testing.assert_allclose(np.asarray(rotor_axes(x8)), [[0, 0, 1]] * 8)
    np.testing.assert_array_equal(np.asarray(x8.kappa[4:]), -np.asarray(x8.kappa[:4]))
    np.testing.assert_allclose(np.asarray(x8.c_f[4:]), 0.85 * np.asarray(x8.c_f[:4]))
    np.testing.assert_allclose(np.asarray(x8.c_tau[4:]), 0.85 * np.asarray(x8.c_tau[:4]))
    # no added roll/pitch leverage: a lower rotor's roll/pitch column is 0.85 x its upper rotor's
    M = np.asarray(moment_matrix(x8))
    np.testing.assert_allclose(M[:2, 4:], 0.85 * M[:2, :4], atol=1e-18)
    assert float(x8.mass) == float(base.mass)


def test_coaxial_layout_on_tilted_base_stacks_along_the_axis():
    base = x_layout(4, 0.3, alpha=0.3, **KW)
    c = coaxial_layout(base, 0.2, 1.0)
    z = np.asarray(rotor_axes(base))
    np.testing.assert_allclose(_pos(c)[:4] - _pos(c)[4:], 0.2 * z, atol=1e-14)


@pytest.mark.parametrize("builder", [x_layout, plus_layout])
@pytest.mark.parametrize("n", [3, 5, 2, 4.5])
def test_ring_builders_reject_bad_counts(builder, n):
    with pytest.raises(ValueError, match=r"rotor count `n` = .*Fix"):
        builder(n, 0.3, **KW)


def test_builder_errors():
    with pytest.raises(ValueError, match=r"h_layout: rotor count `n` = 5"):
        h_layout(5, 0.5, 0.3, **KW)
    with pytest.raises(ValueError, match=r"`width` = -0.3 .*Fix"):
        h_layout(4, 0.5, -0.3, **KW)
    with pytest.raises(ValueError, match=r"`gamma` .*cannot be given"):
        x_layout(4, 0.3, gamma=[0, 1, 2, 3], **KW)
    base = x_layout(4, 0.3, **KW)
    with pytest.raises(ValueError, match=r"`separation` = 0"):
        coaxial_layout(base, 0)
    with pytest.raises(ValueError, match=r"`lower_efficiency` = 1.2"):
        coaxial_layout(base, 0.1, 1.2)


# --------------------------------------------------------------------------- presets


def _nominal_tw(p):
    return float(np.sum(np.asarray(p.c_f) * np.asarray(p.u_max)) / float(p.mass * p.gravity))


def test_hex_s550_preset():
    p = hex_s550()
    assert p.n_rotors == 6 and float(p.mass) == 1.8
    np.testing.assert_allclose(np.linalg.norm(_pos(p), axis=1), 0.275)
    assert _nominal_tw(p) == pytest.approx(3.0, rel=1e-12)
    assert float(p.c_tau[0] / p.c_f[0]) == pytest.approx(0.016)
    J = np.asarray(p.inertia)
    assert J[2, 2] == pytest.approx(2 * J[0, 0], rel=0.1)  # I_zz ~ 2 I_xx from the lumped parts
    assert np.min(np.abs(np.arctan2(_pos(p)[:, 1], _pos(p)[:, 0]))) == pytest.approx(math.pi / 6)


def test_octo_x8_preset():
    p = octo_x8()
    assert p.n_rotors == 8 and float(p.mass) == 4.5
    np.testing.assert_allclose(np.linalg.norm(_pos(p)[:, :2], axis=1), 0.35)
    np.testing.assert_allclose(np.asarray(p.c_f[4:]) / np.asarray(p.c_f[:4]), 0.85)
    np.testing.assert_allclose(np.asarray(p.c_tau[4:]) / np.asarray(p.c_tau[:4]), 0.85)
    assert _nominal_tw(p) == pytest.approx(2.6, rel=1e-12)
    J = np.asarray(p.inertia)
    assert J[2, 2] == pytest.approx(2 * J[0, 0], rel=0.1)


def test_racing_250_preset():
    p = racing_250()
    assert p.n_rotors == 4 and float(p.mass) == 0.55
    np.testing.assert_allclose(np.linalg.norm(_pos(p), axis=1), 0.125)
    assert _nominal_tw(p) == pytest.approx(6.0, rel=1e-12)


def test_presets_registered():
    names = presets.names()
    for name in ("hex_s550", "octo_x8", "racing_250", "paper_hexarotor", "cs_4r"):
        assert name in names and presets.describe(name)
    for name in names:
        assert presets.get(name).name == name


# --------------------------------------------------------------------------- [platform] tables

PAPER_TABLE = {
    "n": 6,
    "arm_length": 0.385,
    "mass": 3.5,
    "c_f": 3.799e-05,
    "c_tau": 1.163e-06,
    "alpha": 5 * math.pi / 36,
    "beta": math.pi / 18,
    "inertia": [0.155, 0.147, 0.251],
    "rotor_speed_max": 700.0,
    "name": "paper_from_table",
}


def test_platform_from_table_preset_and_parameters():
    p = platform_from_table({"preset": "octo_x8"}, "a.toml")
    assert p.name == "octo_x8"
    q = platform_from_table(dict(PAPER_TABLE), "paper.toml")
    ref = presets.get("paper_hexarotor")
    np.testing.assert_allclose(np.asarray(force_matrix(q)), np.asarray(force_matrix(ref)), rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(np.asarray(moment_matrix(q)), np.asarray(moment_matrix(ref)), rtol=1e-12, atol=1e-20)
    assert q.name == "paper_from_table" and q.label() == ref.label()
    t = dict(PAPER_TABLE, kappa=[1, -1, 1, -1, 1, -1], tilting=["alpha"], rotor_speed_max=float("inf"))
    t.pop("name")
    r = platform_from_table(t, "dir/my_design.toml")
    assert r.name == "my_design" and r.tilting == ("alpha",) and np.isinf(np.asarray(r.rotor_speed_max)).all()
    s = platform_from_table({k: v for k, v in PAPER_TABLE.items() if k != "inertia"} | {"hub_mass": 0.2}, "x.toml")
    assert s.inertia.shape == (3, 3)


@pytest.mark.parametrize(
    "table, pattern",
    [
        ({"preset": "nope"}, r"cfg.toml: \[platform\] key `preset` = 'nope' is not a preset name\. Fix: use one of"),
        ({"preset": "cs_4r", "arm_length": 2.0}, r"key `preset` = 'cs_4r' cannot be combined with arm_length\. Fix"),
        (dict(PAPER_TABLE, armlength=0.3), r"unknown key\(s\) `armlength` \(value 0.3\)\. Fix: .*spelling"),
        ({"n": 4, "arm_length": 0.3, "mass": 1.0}, r"missing the required key\(s\) `c_f`, `c_tau`\. Fix"),
        (dict(PAPER_TABLE, mass="heavy"), r"key `mass` = 'heavy' is invalid: expected a number\. Fix"),
        (dict(PAPER_TABLE, n=True), r"key `n` = True is invalid"),
        (dict(PAPER_TABLE, inertia=[1, 2]), r"key `inertia` = \[1, 2\] is invalid"),
        (dict(PAPER_TABLE, tilting="alpha"), r"key `tilting` = 'alpha' is invalid"),
        ({k: v for k, v in PAPER_TABLE.items() if k != "inertia"}, r"neither `inertia` nor `hub_mass`\. Fix"),
        (dict(PAPER_TABLE, alpha=2.0), r"cfg.toml: \[platform\]: Platform parameter `alpha`.*Fix"),
        (dict(PAPER_TABLE, c_f=[1e-5, 1e-5]), r"cfg.toml: \[platform\]: Platform parameter `c_f` = \[1e-05, 1e-05\] has 2 entries"),
    ],
)
def test_platform_from_table_errors(table, pattern):
    with pytest.raises(ConfigError, match=pattern):
        platform_from_table(table, "cfg.toml")
