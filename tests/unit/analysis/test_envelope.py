"""The hover envelope (jaxrotor.analysis.envelope): hover at an attitude, the largest hover tilt per heading,
checked against an independent feasibility computation on the unnormalised allocation with SciPy."""

import math

import numpy as np
import pytest
from scipy.optimize import linprog

from jaxrotor import analysis, presets
from jaxrotor.allocation import force_matrix, moment_matrix
from jaxrotor.analysis.envelope import _lean_up, _up_in_body
from jaxrotor.design.platform import star_platform
from jaxrotor.design.presets import TABLE_II

DEG = math.pi / 180


@pytest.fixture(scope="module")
def paper():
    return presets.get("paper_hexarotor")


@pytest.fixture(scope="module")
def paper_env(paper):
    return analysis.hover_envelope(paper, n_headings=24)


@pytest.fixture(scope="module")
def sideways():
    """The Table II hexarotor with its rotors canted almost sideways (alpha_0 = 1.56 rad)."""
    T = TABLE_II
    return star_platform(6, T["arm_length"], mass=T["mass"], c_f=T["c_f"], c_tau=T["c_tau"], alpha=1.56, beta=0.0,
                         inertia=T["J_a"], rotor_speed_max=700.0, name="sideways_hex")


def feasible_direct(p, roll, pitch):
    """Independent check: some u_min <= u <= u_max with G u = [m g R^T e3; 0], on the unnormalised G (SI units)."""
    F, M = np.asarray(force_matrix(p)), np.asarray(moment_matrix(p))
    cr, sr, cp, sp = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    f = float(p.weight) * (Ry @ Rx).T @ np.array([0.0, 0.0, 1.0])
    scale = np.array([1, 1, 1, 1 / 0.385, 1 / 0.385, 1 / 0.385]) / float(p.weight)  # rows of order one
    G = np.vstack([F, M]) * scale[:, None]
    res = linprog(np.zeros(p.n_rotors), A_eq=G, b_eq=np.r_[f, 0, 0, 0] * scale,
                  bounds=list(zip(np.asarray(p.u_min, float), np.asarray(p.u_max, float))), method="highs")
    return res.status == 0


@pytest.mark.parametrize("name", ["cs_4r", "x500"])
def test_flat_quadrotor_envelope_is_zero_everywhere(name):
    quad = presets.get(name)  # a plus and an X quadrotor
    env = analysis.hover_envelope(quad)
    assert env.level_hoverable and env.method == "subspace"
    assert np.all(env.max_tilt == 0.0) and env.min_max_tilt == env.max_max_tilt == 0.0
    assert env.lateral_force_max == 0.0 and env.lateral_force_min == 0.0
    assert analysis.hover_at_attitude(quad, 0.0, 0.0).feasible
    for roll, pitch in ((1e-4, 0.0), (0.0, -1e-4), (0.01, 0.01)):
        c = analysis.hover_at_attitude(quad, roll, pitch)
        assert not c.feasible and c.margin == -math.inf and np.all(np.isnan(c.u))
        assert not feasible_direct(quad, roll, pitch)


def test_paper_hexarotor_envelope_against_direct_feasibility(paper, paper_env):
    env = paper_env
    assert env.level_hoverable and env.method == "facets" and len(env.max_tilt) == 24
    # measured: 13.38 deg in every direction, 24.94 deg at best, three-fold symmetric
    assert math.degrees(env.min_max_tilt) == pytest.approx(13.384, abs=2e-3)
    assert math.degrees(env.max_max_tilt) == pytest.approx(24.938, abs=2e-3)
    np.testing.assert_allclose(env.max_tilt[:8], env.max_tilt[8:16], atol=1e-9)
    for psi, theta in zip(env.headings[::3], env.max_tilt[::3]):
        assert feasible_direct(paper, *analysis.lean_to_roll_pitch(theta - 1e-4, psi))
        assert not feasible_direct(paper, *analysis.lean_to_roll_pitch(theta + 1e-4, psi))
    # a brute-force grid along two headings: the last feasible grid tilt brackets theta_max
    for k in (0, 6):
        psi = env.headings[k]
        grid = np.arange(0.0, 40.0, 0.5) * DEG
        ok = np.array([feasible_direct(paper, *analysis.lean_to_roll_pitch(t, psi)) for t in grid])
        first_out = int(np.argmin(ok))
        assert ok[:first_out].all() and not ok[first_out:].any()
        assert grid[first_out - 1] <= env.max_tilt[k] < grid[first_out]


def test_axis_tilts_and_lateral_force(paper, paper_env):
    a = paper_env.axis_tilts
    assert math.degrees(a["pitch_down"]) == pytest.approx(15.25, abs=0.01)
    assert a["pitch_down"] == pytest.approx(a["pitch_up"], abs=1e-9)
    assert math.degrees(a["roll_right"]) == pytest.approx(24.938, abs=2e-3)
    assert math.degrees(a["roll_left"]) == pytest.approx(13.384, abs=2e-3)
    # the pure axes are pure roll / pitch: roll right down is roll = +theta
    r, p = analysis.lean_to_roll_pitch(a["roll_right"] - 1e-6, 1.5 * math.pi)
    assert r == pytest.approx(a["roll_right"] - 1e-6) and p == pytest.approx(0.0, abs=1e-12)
    assert analysis.hover_at_attitude(paper, a["roll_right"] - 1e-6, 0.0).feasible
    assert not analysis.hover_at_attitude(paper, a["roll_right"] + 1e-6, 0.0).feasible
    assert not analysis.hover_at_attitude(paper, -a["roll_right"] + 1e-6, 0.0).feasible  # left is 13.4 deg
    # the lateral forces are those of lateral_force_profile
    _, rho = analysis.lateral_force_profile(paper)
    assert paper_env.lateral_force_max == pytest.approx(rho.max(), rel=1e-12)
    assert paper_env.lateral_force_min == pytest.approx(analysis.lateral_force_capability(paper), rel=1e-12)


def test_margin_definition(paper):
    level = analysis.hover_at_attitude(paper, 0.0, 0.0)
    # equal inputs hover the paper hexarotor: the margin is their distance to the nearer bound over the range
    frac = float(analysis.hover_solution(paper)["input_fraction"])
    assert level.margin == pytest.approx(min(frac, 1 - frac), rel=1e-7)
    G = np.vstack([np.asarray(force_matrix(paper)), np.asarray(moment_matrix(paper))])
    np.testing.assert_allclose(G @ level.u, [0, 0, float(paper.weight), 0, 0, 0], atol=1e-6)
    # margin t: the inputs sit at least t w inside the bounds; it decreases with the tilt and changes sign
    w = np.asarray(paper.u_max - paper.u_min)
    margins = []
    for th in (0.1, 0.2, 0.3):
        c = analysis.hover_at_attitude(paper, 0.0, th)
        assert np.all(c.u >= np.asarray(paper.u_min) + c.margin * w - 1e-6)
        assert np.all(c.u <= np.asarray(paper.u_max) - c.margin * w + 1e-6)
        margins.append(c.margin)
    assert margins[0] > margins[1] > 0 > margins[2]
    assert analysis.hover_at_attitude(paper, 0.0, 0.3).feasible is False
    # yaw never matters
    a, b = analysis.hover_at_attitude(paper, 0.1, 0.05), analysis.hover_at_attitude(paper, 0.1, 0.05, yaw=2.0)
    assert a.margin == pytest.approx(b.margin, abs=1e-12)


def test_lean_convention():
    for theta, psi in ((0.3, 0.0), (0.2, 1.0), (0.5, 2.5), (0.1, 4.0), (1.2, 5.5)):
        roll, pitch = analysis.lean_to_roll_pitch(theta, psi)
        np.testing.assert_allclose(_up_in_body(roll, pitch), _lean_up(theta, psi), atol=1e-14)
    assert analysis.lean_to_roll_pitch(0.2, 0.0) == pytest.approx((0.0, 0.2))          # nose down
    assert analysis.lean_to_roll_pitch(0.2, math.pi / 2) == pytest.approx((-0.2, 0.0))  # left side down


def test_cannot_hover_level(sideways):
    env = analysis.hover_envelope(sideways, n_headings=8)
    assert not env.level_hoverable and env.method == "none" and env.level_margin < -1
    assert np.all(np.isnan(env.max_tilt))
    assert env.to_dict()["min_max_tilt_deg"] is None and env.to_dict()["level_hoverable"] is False
    rep = analysis.analyze(sideways)
    assert rep.statically_hoverable and not rep.level_hover_feasible  # bound-free property vs the bounds
    from jaxrotor.cli.analyze import format_report

    text = format_report(rep)
    assert text.startswith("CANNOT HOVER LEVEL")
    assert text.index("CANNOT HOVER LEVEL") < text.index("statically hoverable (bounds ignored)")


def test_tilting_platform_and_bad_input(paper):
    ting = presets.get("cs_ai_ting_6r")
    with pytest.raises(ValueError, match=r"tilts its rotors in flight.*Fix: pass the angles to freeze"):
        analysis.hover_envelope(ting)
    env = analysis.hover_envelope(ting, n_headings=8, alpha=ting.alpha)  # frozen at its own angles
    assert env.level_hoverable
    assert analysis.analyze(ting).hover_envelope is None
    with pytest.raises(ValueError, match=r"`n_headings` = 3 .*Fix"):
        analysis.hover_envelope(paper, n_headings=3)
    with pytest.raises(ValueError, match=r"`roll` = nan .*Fix"):
        analysis.hover_at_attitude(paper, float("nan"), 0.0)
    with pytest.raises(ValueError, match=r"`pitch` = 'x' .*Fix"):
        analysis.hover_at_attitude(paper, 0.0, "x")


def test_json_block(paper_env):
    d = paper_env.to_dict()
    assert {"max_tilt_deg", "headings_deg", "min_max_tilt_deg", "lateral_force_max", "level_hoverable"} <= set(d)
    assert len(d["max_tilt_deg"]) == len(d["headings_deg"]) == 24 and d["headings_deg"][6] == pytest.approx(90.0)
    assert d["min_max_tilt_deg"] == pytest.approx(min(d["max_tilt_deg"]))


def test_linear_program_fallback_agrees_with_the_facets(paper_env):
    """Unbounded top speed: F_B is unbounded, the envelope comes from the LP march and bisection. The paper
    hexarotor's limits are rotors stopping (u = 0), and with rank G = n = 6 the hover input is unique, so the
    envelope is the same as with the 700 rad/s limit."""
    T = TABLE_II
    free = star_platform(6, T["arm_length"], mass=T["mass"], c_f=T["c_f"], c_tau=T["c_tau"], alpha=T["alpha0"],
                         beta=T["beta0"], inertia=T["J_a"], rotor_speed_max=float("inf"))
    env = analysis.hover_envelope(free, n_headings=8)
    assert env.method == "lp" and env.lateral_force_max > paper_env.lateral_force_max  # top speed no longer binds
    np.testing.assert_allclose(env.max_tilt, paper_env.max_tilt[::3], atol=1e-8)
    c = analysis.hover_at_attitude(free, 0.0, 0.1)
    assert c.feasible and 0 < c.margin <= 0.5 and np.all(np.isfinite(c.u))
