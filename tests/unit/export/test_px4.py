"""PX4 control-allocation export: the parameters rebuild jaxrotor's G the way PX4 builds its matrix (1e-12)."""

from pathlib import Path

import numpy as np
import pytest

from jaxrotor.allocation import allocation_matrix
from jaxrotor.design import presets
from jaxrotor.design.layouts import coaxial_layout
from jaxrotor.design.platform import explicit_platform, geometric_rotor_positions, rotor_positions, star_platform
from jaxrotor.export import px4
from jaxrotor.io.config import load
from jaxrotor.io.platform_table import load_platform

ROOT = Path(__file__).resolve().parents[3]
VEHICLE_CONFIGS = sorted((ROOT / "configs" / "vehicles").glob("*.toml"))
S = np.diag([1.0, -1.0, -1.0])
TOL = 1e-12


def px4_column(P, A, CT, KM):
    """One column of PX4's effectiveness, written out from ActuatorEffectivenessRotors.cpp: (moment; thrust), FRD."""
    a = np.asarray(A, float) / np.linalg.norm(A)
    P = np.asarray(P, float)
    cross = np.array([P[1] * a[2] - P[2] * a[1], P[2] * a[0] - P[0] * a[2], P[0] * a[1] - P[1] * a[0]])
    return np.concatenate([CT * cross - CT * KM * a, CT * a])


def rebuild_G(params, u_max):
    """G in FLU per unit u, rebuilt independently of jaxrotor.export.px4: PX4 columns, rows swapped, S, / u_max."""
    n = params["CA_ROTOR_COUNT"]
    cols = []
    for i in range(n):
        g = lambda f: params[f"CA_ROTOR{i}_{f}"]  # noqa: E731
        e = px4_column((g("PX"), g("PY"), g("PZ")), (g("AX"), g("AY"), g("AZ")), g("CT"), g("KM"))
        cols.append(np.concatenate([S @ e[3:], S @ e[:3]]) / u_max[i])
    return np.stack(cols, axis=1)


def round_trip_error(platform, alpha=None, beta=None):
    """Largest |G_px4 - G| relative to max |G|, by both rebuilds (the module's and the test's own)."""
    params = px4.px4_parameters(platform, alpha=alpha, beta=beta)
    G = np.asarray(allocation_matrix(platform, alpha, beta), float)
    u_max = np.asarray(platform.u_max, float)
    via_module = px4.allocation_from_px4(px4.px4_effectiveness(params), u_max)
    via_test = rebuild_G(params, u_max)
    scale = np.abs(G).max()
    return max(np.abs(via_module - G).max(), np.abs(via_test - G).max()) / scale


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("name", presets.names())
def test_round_trip_presets(name):
    p = presets.get(name)
    assert round_trip_error(p) < TOL


@pytest.mark.parametrize("path", VEHICLE_CONFIGS, ids=lambda p: p.stem)
def test_round_trip_vehicle_configs(path):
    p = load_platform(path)
    assert round_trip_error(p) < TOL
    params = px4.px4_parameters(p)
    P = np.array([[params[f"CA_ROTOR{i}_P{c}"] for c in "XYZ"] for i in range(p.n_rotors)])
    np.testing.assert_allclose(P, np.asarray(rotor_positions(p)) @ S, rtol=0, atol=1e-15)
    if p.com_offset is not None and np.abs(np.asarray(p.com_offset)).max() > 1e-6:  # relative to the centre of mass
        assert np.abs(P - np.asarray(geometric_rotor_positions(p)) @ S).max() > 1e-6


def test_round_trip_paper_reproduction_config():
    p = load(ROOT / "configs" / "paper_reproduction.toml").platform
    assert round_trip_error(p) < TOL


def random_design(seed):
    """Ten designs: tilted stars (4-12 rotors), coaxial stacks, explicit geometry with a centre-of-mass offset,
    and tilting platforms (exported at random current angles)."""
    rng = np.random.default_rng(seed)
    kind = ("tilted", "tilted", "tilted", "tilted", "coaxial", "coaxial", "explicit", "explicit", "tilting_ai",
            "tilting_a0b0")[seed]
    n = int(rng.choice([4, 5, 6, 8, 12])) if kind == "tilted" else int(rng.integers(3, 7))
    common = dict(mass=1.5, c_f=rng.uniform(1e-5, 4e-5, n), c_tau=rng.uniform(2e-7, 1e-6, n),
                  kappa=rng.choice([-1.0, 1.0], n), inertia=(0.02, 0.02, 0.04),
                  rotor_speed_max=rng.uniform(500.0, 1500.0, n))
    alpha, beta = None, None
    if kind in ("tilted", "coaxial"):
        p = star_platform(n, rng.uniform(0.1, 0.5), alpha=rng.uniform(-0.7, 0.7, n), beta=rng.uniform(0, 0.5, n),
                          delta=rng.uniform(0, 0.3, n), gamma=np.sort(rng.uniform(0, 2 * np.pi, n)), **common)
        if kind == "coaxial":
            p = coaxial_layout(p, rng.uniform(0.05, 0.15), rng.uniform(0.7, 0.95))
    elif kind == "explicit":
        axes = rng.normal(size=(n, 3)) + np.array([0.0, 0.0, 2.0])
        p = explicit_platform(rng.uniform(-0.4, 0.4, (n, 3)), axes=axes / np.linalg.norm(axes, axis=1, keepdims=True),
                              com_offset=rng.uniform(-0.05, 0.05, 3), **common)
    elif kind == "tilting_ai":
        p = star_platform(n, 0.3, alpha=np.zeros(n), tilting=("alpha",), **common)
        alpha = rng.uniform(-1.0, 1.0, n)
    else:
        p = star_platform(n, 0.3, alpha=0.2, beta=0.1, alpha_sign=(-1.0) ** np.arange(n), tilting=("alpha", "beta"),
                          **common)
        alpha, beta = rng.uniform(-0.6, 0.6), rng.uniform(0.0, 0.4)
    return p, alpha, beta


@pytest.mark.parametrize("seed", range(10))
def test_round_trip_random_designs(seed):
    p, alpha, beta = random_design(seed)
    assert round_trip_error(p, alpha, beta) < TOL
    if alpha is not None:  # a tilting platform: the export follows the current angles, not the stored ones
        G_now = np.asarray(allocation_matrix(p, alpha, beta))
        assert np.abs(G_now - np.asarray(allocation_matrix(p))).max() > 1e-3 * np.abs(G_now).max()
        assert any("Tilting rotors" in note for note in px4.px4_limitations(p))


def test_round_trip_coaxial_pairs_share_a_line():
    """A coaxial pair: same PX, PY and axis, PZ apart by the separation along the axis, KM of opposite signs."""
    p = presets.get("octo_x8")
    prm = px4.px4_parameters(p)
    for i in range(4):
        up = np.array([prm[f"CA_ROTOR{i}_{f}"] for f in ("PX", "PY", "PZ", "AX", "AY", "AZ", "KM")])
        lo = np.array([prm[f"CA_ROTOR{i + 4}_{f}"] for f in ("PX", "PY", "PZ", "AX", "AY", "AZ", "KM")])
        np.testing.assert_allclose(lo[:2], up[:2], atol=1e-15)
        np.testing.assert_allclose(lo[2] - up[2], 0.1, rtol=1e-12)  # FRD: the lower rotor has the larger z
        np.testing.assert_allclose(lo[3:6], up[3:6], atol=1e-15)
        assert np.sign(lo[6]) == -np.sign(up[6]) != 0


def test_float32_like_px4():
    """In PX4's single precision the matrix agrees to float32 rounding."""
    p = presets.get("paper_hexarotor")
    E32 = px4.px4_effectiveness(px4.px4_parameters(p), dtype=np.float32)
    assert E32.dtype == np.float32
    G = np.asarray(allocation_matrix(p))
    err = np.abs(px4.allocation_from_px4(E32, np.asarray(p.u_max)) - G).max() / np.abs(G).max()
    assert 1e-10 < err < 1e-6


# --------------------------------------------------------------------------- hand-checked values


def flat_quad():
    """Plus quadrotor: arms at 0, 90, 180, 270 deg (FLU), rotor 0 counter-clockwise, alternating."""
    return star_platform(4, 0.2, mass=1.0, c_f=2e-5, c_tau=4e-7, inertia=(0.01, 0.01, 0.02), rotor_speed_max=1000.0,
                         name="hand_quad")


def test_hand_checked_flat_quadrotor():
    prm = px4.px4_parameters(flat_quad())
    assert list(prm)[:4] == ["CA_AIRFRAME", "CA_ROTOR_COUNT", "CA_ROTOR0_PX", "CA_ROTOR0_PY"]
    assert list(prm)[-1] == "CA_ROTOR3_KM" and len(prm) == 2 + 4 * 8
    assert prm["CA_AIRFRAME"] == 0 and prm["CA_ROTOR_COUNT"] == 4
    assert type(prm["CA_AIRFRAME"]) is int and type(prm["CA_ROTOR_COUNT"]) is int
    # FLU (x fwd, y left) -> FRD (x fwd, y right): the left arm (FLU +y) has PY = -0.2.
    expected_P = [(0.2, 0.0, 0.0), (0.0, -0.2, 0.0), (-0.2, 0.0, 0.0), (0.0, 0.2, 0.0)]
    for i in range(4):
        got = [prm[f"CA_ROTOR{i}_P{c}"] for c in "XYZ"]
        np.testing.assert_allclose(got, expected_P[i], rtol=0, atol=1e-17)
        assert [prm[f"CA_ROTOR{i}_A{c}"] for c in "XYZ"] == [0.0, 0.0, -1.0]  # upright: up is FRD -z
        assert prm[f"CA_ROTOR{i}_CT"] == pytest.approx(2e-5 * 1000.0**2, rel=1e-15)  # 20 N at full command
        # kappa = -1 (counter-clockwise) on rotors 0 and 2: PX4 wants KM > 0 for them; c_tau / c_f = 0.02 m.
        assert prm[f"CA_ROTOR{i}_KM"] == pytest.approx(0.02 if i % 2 == 0 else -0.02, rel=1e-15)
    E = px4.px4_effectiveness(prm)
    # Front rotor: thrust 20 N up = (0, 0, -20) FRD; P x a = (0.2, 0, 0) x (0, 0, -1) = (0, 0.2, 0): nose up 4 N m;
    # -CT KM a = -20 * 0.02 * (0, 0, -1) = (0, 0, 0.4): the reaction of a CCW rotor turns the body clockwise
    # seen from above, +yaw in FRD.
    np.testing.assert_allclose(E[:, 0], [0.0, 4.0, 0.4, 0.0, 0.0, -20.0], rtol=0, atol=1e-14)
    # Left rotor (FRD y = -0.2), clockwise: P x a = (0, -0.2, 0) x (0, 0, -1) = (0.2, 0, 0): it lifts the left
    # side, a right-wing-down roll, +roll in FRD, 4 N m; its reaction turns the body counter-clockwise: yaw -0.4.
    np.testing.assert_allclose(E[:, 1], [4.0, 0.0, -0.4, 0.0, 0.0, -20.0], rtol=0, atol=1e-14)


def test_px4_defaults_fill_missing_parameters():
    """An airframe file that sets only PX, PY and KM (as PX4's SITL iris does) gets AZ = -1 and CT = 6.5."""
    prm = {"CA_AIRFRAME": 0, "CA_ROTOR_COUNT": 1, "CA_ROTOR0_PX": 0.1515, "CA_ROTOR0_PY": 0.245,
           "CA_ROTOR0_KM": 0.05}
    # P x a = (0.1515, 0.245, 0) x (0, 0, -1) = (-0.245, 0.1515, 0); times 6.5; -6.5 * 0.05 * (0, 0, -1) = +0.325 yaw.
    np.testing.assert_allclose(px4.px4_effectiveness(prm)[:, 0], [-1.5925, 0.98475, 0.325, 0.0, 0.0, -6.5],
                               rtol=1e-15, atol=1e-15)


def test_px4_leaves_out_rotors_it_ignores():
    """Zero axis or zero CT: PX4 skips the rotor, its column stays zero; an unnormalised axis is normalised."""
    prm = {"CA_ROTOR_COUNT": 3, "CA_ROTOR0_AZ": 0.0, "CA_ROTOR1_CT": 0.0, "CA_ROTOR2_AZ": -5.0, "CA_ROTOR2_CT": 2.0,
           "CA_ROTOR2_KM": 0.0}
    E = px4.px4_effectiveness(prm)
    assert not E[:, :2].any()
    np.testing.assert_allclose(E[:, 2], [0, 0, 0, 0, 0, -2.0], atol=1e-15)


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize("fmt", px4.FORMATS)
def test_file_written_and_read_back(tmp_path, fmt):
    p = presets.get("paper_hexarotor")
    path = px4.write_px4_params(p, tmp_path / "sub" / f"hex.{fmt}", format=fmt)
    text = path.read_text()
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("`paper_hexarotor` (6 rotors)" in line for line in header)
    prm = px4.px4_parameters(p)
    back = px4.read_px4_params(path)
    assert back == prm and list(back) == list(prm) and type(back["CA_ROTOR_COUNT"]) is int
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    if fmt == "qgc":
        assert text.startswith("# Onboard parameters for Vehicle 1\n")
        assert "# Vehicle-Id Component-Id Name Value Type" in text
        rows = [line.split("\t") for line in lines]
        assert all(len(r) == 5 and r[:2] == ["1", "1"] for r in rows) and len(rows) == len(prm)
        types = {r[2]: r[4] for r in rows}
        assert types["CA_AIRFRAME"] == types["CA_ROTOR_COUNT"] == "6" and types["CA_ROTOR5_KM"] == "9"
        assert {r[2]: r[3] for r in rows}["CA_ROTOR_COUNT"] == "6"
    else:
        assert text.startswith("#!/bin/sh\n") and ". ${R}etc/init.d/rc.mc_defaults" in lines
        assert "param set-default CA_AIRFRAME 0" in lines and "param set-default CA_ROTOR_COUNT 6" in lines
        assert sum(line.startswith("param set-default ") for line in lines) == len(prm)
    E = px4.px4_effectiveness(back)
    G = np.asarray(allocation_matrix(p))
    assert np.abs(px4.allocation_from_px4(E, np.asarray(p.u_max)) - G).max() < TOL * np.abs(G).max()


def test_tilting_file_says_so(tmp_path):
    p = presets.get("cs_ai_ting_6r")
    text = px4.write_px4_params(p, tmp_path / "t.params", alpha=np.full(6, 0.3)).read_text()
    assert "Tilting platform" in text and "CA_SV_TL_COUNT" in text
    back = px4.read_px4_params(tmp_path / "t.params")
    G = np.asarray(allocation_matrix(p, np.full(6, 0.3)))
    assert np.abs(px4.allocation_from_px4(px4.px4_effectiveness(back), np.asarray(p.u_max)) - G).max() < 1e-12 * np.abs(
        G).max()


# --------------------------------------------------------------------------- limitations


def test_limitations():
    flat = px4.px4_limitations(flat_quad())
    assert not any("Tilting" in s or "Lateral force" in s for s in flat)
    assert any("THR_MDL_FAC" in s for s in flat) and any("32-bit" in s for s in flat)
    tilted = px4.px4_limitations(presets.get("paper_hexarotor"))
    assert any("Lateral force" in s for s in tilted)
    parts = px4.px4_limitations(presets.get("x500"))
    assert any("inertia" in s for s in parts) == (presets.get("x500").rotor_inertia is not None)
    floor = star_platform(4, 0.2, mass=1.0, c_f=2e-5, c_tau=4e-7, inertia=(0.01, 0.01, 0.02),
                          rotor_speed_min=100.0, rotor_speed_max=1000.0)
    assert any("rotor_speed_min" in s for s in px4.px4_limitations(floor))
    big = star_platform(4, 0.2, mass=1.0, c_f=2e-4, c_tau=4e-7, inertia=(0.01, 0.01, 0.02), rotor_speed_max=1000.0)
    assert any("CA_ROTOR0_CT = 200" in s for s in px4.px4_limitations(big))  # PX4's range is [0, 100] N


# --------------------------------------------------------------------------- errors


def test_too_many_rotors():
    p = star_platform(13, 0.5, mass=3.0, c_f=2e-5, c_tau=4e-7, inertia=(0.1, 0.1, 0.2), rotor_speed_max=800.0)
    with pytest.raises(ValueError, match=r"CA_ROTOR_COUNT = 13.*at most 12.*Fix"):
        px4.px4_parameters(p)
    assert any("13 rotors" in s for s in px4.px4_limitations(p))


def test_unbounded_rotor_speed():
    p = star_platform(4, 0.2, mass=1.0, c_f=2e-5, c_tau=4e-7, inertia=(0.01, 0.01, 0.02),
                      rotor_speed_max=[1000.0, np.inf, 1000.0, 1000.0])
    with pytest.raises(ValueError, match=r"CA_ROTOR1_CT.*rotor_speed_max = inf.*Fix"):
        px4.px4_parameters(p)


def test_bad_format_and_bad_parameters(tmp_path):
    with pytest.raises(ValueError, match=r"format = 'json'.*Fix.*'qgc', 'airframe'"):
        px4.write_px4_params(flat_quad(), tmp_path / "x", format="json")
    with pytest.raises(ValueError, match="no CA_ROTOR_COUNT"):
        px4.px4_effectiveness({"CA_AIRFRAME": 0})
    with pytest.raises(ValueError, match=r"CA_ROTOR_COUNT = 13.*0 to 12"):
        px4.px4_effectiveness({"CA_ROTOR_COUNT": 13})
    with pytest.raises(ValueError, match=r"CA_AIRFRAME = 8.*Fix"):
        px4.px4_effectiveness({"CA_AIRFRAME": 8, "CA_ROTOR_COUNT": 1})
    bad = tmp_path / "bad.params"
    bad.write_text("# header\n1\t1\tCA_ROTOR_COUNT\t4\n")
    with pytest.raises(ValueError, match=r"bad.params:2.*5 tab-separated"):
        px4.read_px4_params(bad)
    bad.write_text("param set-default CA_ROTOR0_CT\n")
    with pytest.raises(ValueError, match=r"bad.params:1.*param set-default NAME VALUE"):
        px4.read_px4_params(bad)
