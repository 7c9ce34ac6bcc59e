"""Actuation analysis on designs whose answers are known by hand, LPs checked with SciPy,
and gradients of the differentiable measures checked against finite differences."""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linprog

from jaxrotor import analysis, presets
from jaxrotor.allocation import force_matrix, moment_matrix
from jaxrotor.design.layouts import coaxial_layout, h_layout, x_layout
from jaxrotor.design.platform import explicit_platform, star_platform

CF, CT = 3.799e-05, 1.163e-06


# --------------------------------------------------------------------------- designs


@pytest.fixture(scope="module")
def quad():
    return presets.get("cs_4r")


@pytest.fixture(scope="module")
def hexa():
    return presets.get("hex_s550")


@pytest.fixture(scope="module")
def paper():
    return presets.get("paper_hexarotor")


@pytest.fixture(scope="module")
def reports(quad, hexa, paper):
    return {"quad": analysis.analyze(quad), "hex": analysis.analyze(hexa), "paper": analysis.analyze(paper)}


def same_spin_quad():
    return x_layout(4, 0.25, mass=1.5, c_f=CF, c_tau=CT, kappa=[1.0, 1.0, 1.0, 1.0], hub_mass=0.08,
                    rotor_speed_max=700.0, name="same_spin")


def coax_pair_on_y():
    base = explicit_platform([[0.0, 0.3, 0.0], [0.0, -0.3, 0.0]], mass=2.0, c_f=CF, c_tau=CT, kappa=[-1.0, 1.0],
                             inertia=[0.05, 0.02, 0.06], rotor_speed_max=700.0, name="pair")
    return coaxial_layout(base, 0.1, 1.0, name="coax_pair_y")


def tilted_tri(alpha0=0.3, kappa=(-1.0, 1.0, -1.0), alpha_sign=None):
    return star_platform(3, 0.3, mass=1.2, c_f=CF, c_tau=CT, alpha=alpha0, kappa=list(kappa), alpha_sign=alpha_sign,
                         inertia=[0.02, 0.02, 0.04], rotor_speed_max=700.0, name="tri")


# --------------------------------------------------------------------------- flat quadrotor


def test_flat_quad_algebra(reports):
    r = reports["quad"]
    assert (r.rank_F, r.rank_M, r.rank_G, r.rank_thrust_torque) == (1, 3, 4, 4)
    assert not r.fully_actuated
    assert r.dim_D == 1 and r.decoupling == "partially coupled"
    assert r.realizable and r.statically_hoverable
    assert r.hover_margin == pytest.approx(1.0)  # equal inputs hover
    # a quadrotor that loses a rotor has three columns and rank M = 3: only u = 0 gives M u = 0
    assert not r.fail_safe
    assert all(not x.hoverable and x.margin == 0.0 and x.rank_M == 3 and x.dim_D == 0 for x in r.rotor_loss)
    assert r.unreachable_axes == ("fx", "fy")
    assert r.torque_rows_balanced


def test_flat_quad_capability_by_hand(quad, reports):
    r = reports["quad"]
    W, l = 1.5 * 9.81, 0.25
    u_h = W / (4 * CF)
    np.testing.assert_allclose(r.hover_u, u_h, rtol=1e-12)
    assert r.hover_efficiency == pytest.approx(1.0, rel=1e-12)
    assert r.lateral_force_capability_N == 0.0
    u_max = 700.0**2
    assert r.thrust_to_weight == pytest.approx(4 * CF * u_max / W, rel=1e-9)
    assert r.nominal_thrust_to_weight == pytest.approx(4 * CF * u_max / W, rel=1e-12)
    # roll at hover: rotor 2 to 2 u_h, rotor 4 stopped (pitch and yaw stay balanced) -> l m g / 2
    assert r.max_torque_at_hover_Nm["roll"] == pytest.approx(l * W / 2, rel=1e-7)
    assert r.max_torque_at_hover_Nm["pitch"] == pytest.approx(l * W / 2, rel=1e-7)
    # yaw at hover: one diagonal pair at 2 u_h, the other stopped -> (c_tau / c_f) m g
    assert r.max_torque_at_hover_Nm["yaw"] == pytest.approx(CT / CF * W, rel=1e-7)
    assert r.yaw_authority == pytest.approx(CT / CF, rel=1e-7)
    assert r.hover_input_fraction == pytest.approx(u_h / u_max, rel=1e-12)


# --------------------------------------------------------------------------- flat hexarotor


def test_flat_hex_not_fail_safe(reports):
    """Michieletto et al.: a standard hexarotor cannot hover still on five rotors."""
    r = reports["hex"]
    assert (r.rank_F, r.rank_M, r.rank_G) == (1, 3, 4)
    assert r.statically_hoverable and r.hover_margin == pytest.approx(1.0)
    assert not r.fail_safe
    for x in r.rotor_loss:
        assert x.rank_M == 3 and x.dim_D == 1  # still full moment rank: the failure is positivity
        assert not x.hoverable and x.margin == 0.0
    assert r.yaw_authority == pytest.approx(0.016, rel=1e-7)  # seeds/002: 16 mm on the S550
    assert r.thrust_to_weight == pytest.approx(3.0, rel=1e-9)


def test_flat_hex_loss_needs_opposite_rotor_stopped(hexa):
    """The only zero-moment inputs after a loss stop the opposite rotor (checked with an independent LP)."""
    M = np.asarray(moment_matrix(hexa))
    keep = [1, 2, 3, 4, 5]  # rotor 0 lost; rotor 3 is opposite
    Mk = M[:, keep] / CF
    res = linprog(-np.eye(5)[2], A_eq=np.vstack([Mk, np.ones(5)]), b_eq=[0, 0, 0, 1.0], bounds=[(0, None)] * 5,
                  method="highs")
    assert res.status == 0 and res.x[2] == pytest.approx(0.0, abs=1e-9)


# --------------------------------------------------------------------------- the paper hexarotor


def test_paper_hexarotor_algebra(reports, paper):
    r = reports["paper"]
    assert (r.rank_F, r.rank_M, r.rank_G) == (3, 3, 6)
    assert r.fully_actuated and r.dim_D == 3 and r.decoupling == "decoupled"
    assert r.statically_hoverable and r.hover_margin == pytest.approx(1.0)
    assert r.unreachable_axes == ()
    a0, b0 = presets.TABLE_II["alpha0"], presets.TABLE_II["beta0"]
    W = 3.5 * 9.81
    np.testing.assert_allclose(r.hover_u, W / (6 * CF * math.cos(a0) * math.cos(b0)), rtol=1e-10)
    assert r.hover_efficiency == pytest.approx(math.cos(a0) * math.cos(b0), rel=1e-10)
    # singular values / condition number of the unit-consistent G_s against NumPy
    F, M = np.asarray(force_matrix(paper)), np.asarray(moment_matrix(paper))
    Gs = np.vstack([F, M / 0.385]) / CF
    sv = np.linalg.svd(Gs, compute_uv=False)
    np.testing.assert_allclose(r.singular_values, sv, rtol=1e-10)
    assert r.condition_number == pytest.approx(sv[0] / sv[5], rel=1e-10)


def test_paper_hexarotor_fail_safe_margin(reports, paper):
    """With cant and dihedral the Table II hexarotor hovers on any five rotors (positive inputs)."""
    r = reports["paper"]
    assert r.fail_safe and r.fail_safe_within_bounds
    M = np.asarray(moment_matrix(paper))
    for x in r.rotor_loss:
        keep = [i for i in range(6) if i != x.rotor]
        # independent LP in raw units: max t, M u = 0, sum u = 5, u_i >= t
        c = np.zeros(6)
        c[-1] = -1
        A_eq = np.zeros((4, 6))
        A_eq[:3, :5] = M[:, keep] / CF
        A_eq[3, :5] = 1.0
        A_ub = np.hstack([-np.eye(5), np.ones((5, 1))])
        res = linprog(c, A_ub=A_ub, b_ub=np.zeros(5), A_eq=A_eq, b_eq=[0, 0, 0, 5.0],
                      bounds=[(0, None)] * 5 + [(None, None)], method="highs")
        assert x.hoverable and x.margin == pytest.approx(-res.fun, rel=1e-6, abs=1e-9)
        assert 0.0 < x.margin < 0.1
        assert x.thrust_to_weight > 1.0


def test_cant_only_hexarotor_not_fail_safe():
    """Cant alone (beta = 0) in either pairing with the spin directions: some rotor must stop."""
    a0 = presets.TABLE_II["alpha0"]
    alt = [(-1.0) ** (k + 1) for k in range(6)]
    for sign in (1.0, -1.0):
        p = star_platform(6, 0.385, mass=3.5, c_f=CF, c_tau=CT, alpha=a0, alpha_sign=[sign * a for a in alt],
                          inertia=[0.155, 0.147, 0.251], rotor_speed_max=700.0)
        hl = analysis.static_hoverability(p)
        assert hl["hoverable"] and hl["margin"] == pytest.approx(1.0)
        assert not any(x.hoverable for x in analysis.rotor_loss(p))


# --------------------------------------------------------------------------- seeds/002 failure modes


def test_all_rotors_same_direction():
    r = analysis.analyze(same_spin_quad())
    assert r.rank_thrust_torque == 3  # yaw row is a multiple of the thrust row
    assert {"thrust", "yaw"} <= set(r.unreachable_axes)
    assert "roll" not in r.unreachable_axes and "pitch" not in r.unreachable_axes
    assert not r.realizable and not r.statically_hoverable and r.hover_margin == 0.0
    assert not r.level_hover_feasible and r.hover_u is None
    assert math.isnan(r.lateral_force_capability_N)
    assert r.yaw_authority == 0.0
    assert not r.torque_rows_balanced
    assert r.thrust_to_weight == 0.0  # no vertical force at zero moment


def test_coaxial_pair_on_one_lateral_axis():
    r = analysis.analyze(coax_pair_on_y())
    assert r.n_rotors == 4
    assert r.rank_M == 2 and r.rank_thrust_torque == 3
    assert "pitch" in r.unreachable_axes
    assert not {"thrust", "roll", "yaw"} & set(r.unreachable_axes)
    # it can balance its moments with every rotor spinning, but cannot hold its attitude
    assert r.realizable and not r.statically_hoverable
    assert r.max_torque_at_hover_Nm["pitch"] == 0.0


# --------------------------------------------------------------------------- n = 3 and non-star layouts


def test_tilted_trirotor_fully_coupled():
    """n = 3 with rank M = 3: M u = 0 forces u = 0, so no force comes without a moment."""
    r = analysis.analyze(tilted_tri())
    assert (r.rank_F, r.rank_M, r.rank_G) == (3, 3, 3)
    assert r.dim_D == 0 and r.decoupling == "fully coupled"
    assert not r.realizable and not r.statically_hoverable
    assert not r.level_hover_feasible and not r.fail_safe


def test_yaw_balanced_trirotor_has_no_yaw_control():
    """All three cants chosen so each rotor's yaw moment vanishes: balanced but rank M = 2."""
    l = 0.3
    alpha = math.atan(CT / (CF * l))  # c_f l sin(a) = kappa c_tau cos(a) with kappa = +1
    p = tilted_tri(alpha, kappa=(1.0, 1.0, 1.0), alpha_sign=[1.0, 1.0, 1.0])
    np.testing.assert_allclose(np.asarray(moment_matrix(p))[2], 0.0, atol=1e-18)
    r = analysis.analyze(p)
    assert r.rank_M == 2 and r.dim_D == 1 and r.realizable
    assert not r.statically_hoverable  # rank M < 3: yaw cannot be held
    assert "yaw" in r.unreachable_axes


def test_h_quad_by_hand():
    L, Wd = 0.5, 0.3
    p = h_layout(4, L, Wd, mass=1.5, c_f=CF, c_tau=CT, hub_mass=0.08, rotor_speed_max=700.0)
    r = analysis.analyze(p)
    W = 1.5 * 9.81
    assert (r.rank_F, r.rank_M, r.rank_G) == (1, 3, 4)
    assert r.statically_hoverable and r.hover_margin == pytest.approx(1.0) and r.torque_rows_balanced
    assert not r.fail_safe
    # all the thrust on one rail: roll = (W_rail/2) m g; on the front or rear pair: pitch = (L/2) m g
    assert r.max_torque_at_hover_Nm["roll"] == pytest.approx(Wd / 2 * W, rel=1e-7)
    assert r.max_torque_at_hover_Nm["pitch"] == pytest.approx(L / 2 * W, rel=1e-7)


def test_y6_coaxial_is_fail_safe():
    """Michieletto et al.: the Y-shaped hexarotor (three coaxial pairs) can hover on five rotors."""
    base = star_platform(3, 0.35, mass=2.5, c_f=CF, c_tau=CT, kappa=[-1.0, 1.0, -1.0], inertia=[0.05, 0.05, 0.09],
                         rotor_speed_max=700.0)
    y6 = coaxial_layout(base, 0.1, 0.85)
    r = analysis.analyze(y6)
    assert y6.label() == "nCS_6R"  # two rotor planes; the three arms (one per coaxial pair) form a star
    assert (r.rank_F, r.rank_M) == (1, 3)
    assert r.statically_hoverable and r.fail_safe
    assert all(x.margin > 0.1 for x in r.rotor_loss)


def test_octo_x8_fail_safe_and_hover_split():
    r = analysis.analyze(presets.get("octo_x8"))
    assert r.fail_safe and r.fail_safe_within_bounds
    assert r.unreachable_axes == ("fx", "fy")
    # minimum-norm in u = omega^2 loads the more effective upper rotors (documented)
    assert np.all(r.hover_u[:4] > r.hover_u[4:])
    np.testing.assert_allclose(r.hover_u[4:] / r.hover_u[:4], 0.85, rtol=1e-9)


# --------------------------------------------------------------------------- LPs against SciPy in raw units


def _raw(p):
    F, M = np.asarray(force_matrix(p)), np.asarray(moment_matrix(p))
    return F, M, float(p.mass * p.gravity), [(float(a), float(b)) for a, b in zip(p.u_min, p.u_max)]


def test_lateral_force_matches_linprog(paper):
    F, M, W, bnds = _raw(paper)
    n = 6
    dirs, rho = analysis.lateral_force_profile(paper, n_directions=8)
    sc = 1e-5  # scale u for the LP: v = u * sc
    for d, r in zip(dirs, rho):
        A_eq = np.zeros((6, n + 1))
        A_eq[:3, :n], A_eq[3:, :n] = F / sc, M / sc
        A_eq[0, n], A_eq[1, n] = -d[0], -d[1]
        c = np.zeros(n + 1)
        c[-1] = -1
        res = linprog(c, A_eq=A_eq, b_eq=[0, 0, W, 0, 0, 0], bounds=[(a * sc, b * sc) for a, b in bnds] + [(None, None)],
                      method="highs")
        assert res.status == 0 and r == pytest.approx(-res.fun, rel=1e-6)
    assert analysis.lateral_force_capability(paper, n_directions=8) == pytest.approx(rho.min())


def test_torque_and_thrust_to_weight_match_linprog(paper, reports):
    F, M, W, bnds = _raw(paper)
    n, sc = 6, 1e-5
    vb = [(a * sc, b * sc) for a, b in bnds]
    for j, name in enumerate(("roll", "pitch", "yaw")):
        vals = []
        for sign in (1, -1):
            A_eq = np.zeros((6, n + 1))
            A_eq[:3, :n], A_eq[3:, :n] = F / sc, M / sc
            A_eq[3 + j, n] = -1.0
            c = np.zeros(n + 1)
            c[-1] = -sign
            res = linprog(c, A_eq=A_eq, b_eq=[0, 0, W, 0, 0, 0], bounds=vb + [(None, None)], method="highs")
            vals.append(-res.fun)
        assert reports["paper"].max_torque_at_hover_Nm[name] == pytest.approx(min(vals), rel=1e-6)
    A_eq = np.zeros((6, n + 1))
    A_eq[:3, :n], A_eq[3:, :n] = F / sc, M / sc
    A_eq[2, n] = -1.0
    c = np.zeros(n + 1)
    c[-1] = -1
    res = linprog(c, A_eq=A_eq, b_eq=np.zeros(6), bounds=vb + [(0, None)], method="highs")
    assert reports["paper"].thrust_to_weight == pytest.approx(-res.fun / W, rel=1e-6)


def test_yaw_authority_matches_linprog(paper):
    F, M, _, _ = _raw(paper)
    E = np.vstack([F, M]) / CF  # per newton of rotor thrust
    n = 6
    cons, obj = E[:5], E[5]
    res = linprog(np.concatenate([-obj, obj]), A_eq=np.hstack([cons, -cons]), b_eq=np.zeros(5),
                  A_ub=np.ones((1, 2 * n)), b_ub=[1.0], bounds=[(0, None)] * (2 * n), method="highs")
    assert analysis.yaw_authority(paper) == pytest.approx(-res.fun, rel=1e-6)


def test_hover_qp_with_active_bounds():
    """X8 with a speed limit below the upper rotors' minimum-norm hover input: uppers saturate."""
    x8 = presets.get("octo_x8")
    u_cap = 200000.0
    p = eqx.tree_at(lambda q: q.rotor_speed_max, x8, jnp.full(8, math.sqrt(u_cap)))
    h = analysis.hover_solution(p)
    assert h["feasible"]
    W, cf = 4.5 * 9.81, float(x8.c_f[0])
    u_low = (W / cf - 4 * u_cap) / (4 * 0.85)
    np.testing.assert_allclose(h["u"][:4], u_cap, rtol=1e-7)
    np.testing.assert_allclose(h["u"][4:], u_low, rtol=1e-6)
    assert h["input_fraction"] == pytest.approx(1.0, rel=1e-7)
    # infeasible below the thrust needed
    p2 = eqx.tree_at(lambda q: q.rotor_speed_max, x8, jnp.full(8, math.sqrt(0.5 * u_cap)))
    assert not analysis.hover_solution(p2)["feasible"]


def test_float32_platform_ranks():
    """Rank tolerances follow the platform's dtype: a float32 flat hex still has rank G = 4."""
    with jax.enable_x64(False):
        p = x_layout(6, 0.275, mass=1.8, c_f=1.1e-5, c_tau=1.76e-7, hub_mass=0.08, rotor_speed_max=900.0)
        assert p.c_f.dtype == jnp.float32
        rk = analysis.ranks(p)
    assert (rk["rank_F"], rk["rank_M"], rk["rank_G"]) == (1, 3, 4)


# --------------------------------------------------------------------------- differentiable measures


def _with_angles(p, a, b):
    return eqx.tree_at(lambda q: (q.alpha, q.beta), p, (a, b))


@pytest.mark.parametrize("name", ["condition_number", "hover_efficiency", "smooth_lateral_force_capability"])
def test_gradients_match_finite_differences(paper, name):
    fn = getattr(analysis, name)
    f = eqx.filter_jit(lambda a, b: fn(_with_angles(paper, a, b)))
    a0, b0 = paper.alpha, paper.beta
    ga, gb = jax.grad(f, argnums=(0, 1))(a0, b0)
    h = 1e-5
    fd_a = (f(a0 + h, b0) - f(a0 - h, b0)) / (2 * h)
    fd_b = (f(a0, b0 + h) - f(a0, b0 - h)) / (2 * h)
    np.testing.assert_allclose(ga, fd_a, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gb, fd_b, rtol=1e-5, atol=1e-7)
    assert np.isfinite(ga) and np.isfinite(gb) and abs(ga) > 1e-3


def test_smooth_measures_agree_with_exact(paper, reports):
    r = reports["paper"]
    assert float(analysis.condition_number(paper)) == pytest.approx(r.condition_number, rel=1e-10)
    assert float(analysis.hover_efficiency(paper)) == pytest.approx(r.hover_efficiency, rel=1e-10)
    np.testing.assert_allclose(analysis.singular_values(paper), r.singular_values, rtol=1e-9)
    W, n, K = r.weight_N, 6, 36
    exact = r.lateral_force_capability_N
    hard = float(analysis.smooth_lateral_force_capability(paper, temperature=0.0))
    soft = float(analysis.smooth_lateral_force_capability(paper))
    assert exact - 2 * n / 1e5 * W <= hard <= exact + 1e-9
    assert hard - 1e-3 * math.log(K) * W <= soft <= hard + 1e-12


def test_smooth_lateral_is_smooth_in_tilt_and_vmaps(paper):
    """vmap over alpha_0: batched values equal single ones and increase with the cant here."""
    alphas = jnp.array([0.30, 0.35, 0.40, 0.436])
    f = lambda a: analysis.smooth_lateral_force_capability(_with_angles(paper, a, paper.beta))  # noqa: E731
    batched = jax.jit(jax.vmap(f))(alphas)
    np.testing.assert_allclose(batched[-1], f(alphas[-1]), rtol=1e-10)
    assert np.all(np.diff(np.asarray(batched)) > 0)
    cond = jax.vmap(lambda a: analysis.condition_number(_with_angles(paper, a, paper.beta)))(alphas)
    assert np.all(np.isfinite(cond))


def test_flat_design_measures(quad):
    assert float(analysis.hover_efficiency(quad)) == pytest.approx(1.0)
    assert float(analysis.smooth_lateral_force_capability(quad, temperature=0.0)) == pytest.approx(0.0, abs=1e-6)
    assert float(analysis.condition_number(quad)) > 1e6  # rank G = 4: effectively infinite


def test_exact_reports_refuse_tracers(paper):
    with pytest.raises(ValueError, match="concrete platform"):
        jax.jit(lambda p: analysis.ranks(p)["rank_G"])(paper)


def test_report_json_ready(reports):
    import json

    d = reports["quad"].to_dict()
    assert d["condition_number"] is None  # inf -> null
    s = json.dumps(d, allow_nan=False)
    assert json.loads(s)["rotor_loss"][0]["rotor"] == 0
    assert len(d["F"]) == 3 and len(d["F"][0]) == 4


def test_tilting_platform_at_given_angles(reports):
    """A tilting platform analysed at alpha_0 of Table II equals the fixed-tilt use case."""
    T = presets.TABLE_II
    p = star_platform(6, T["arm_length"], mass=3.5, c_f=CF, c_tau=CT, alpha=0.0, beta=T["beta0"], inertia=T["J_a"],
                      rotor_speed_max=700.0, tilting=("alpha",))
    flat_alpha = analysis.analyze(p, n_directions=12)
    assert flat_alpha.rank_G == 6  # the dihedral alone makes it fully actuated
    r = analysis.analyze(p, alpha=T["alpha0"])
    ref = reports["paper"]
    assert r.label.endswith("Ting_6R")
    assert r.lateral_force_capability_N == pytest.approx(ref.lateral_force_capability_N, rel=1e-9)
    assert r.fail_safe == ref.fail_safe and r.condition_number == pytest.approx(ref.condition_number, rel=1e-10)
    assert float(analysis.condition_number(p, alpha=jnp.asarray(T["alpha0"]))) == pytest.approx(ref.condition_number)


# --------------------------------------------------------------------------- conditioning of rank-deficient designs


def tilted_mount_quad(angle):
    """A flat quadrotor whose four spin axes all lean by ``angle`` about ``x_B``: rank G = 4, no zero rows in G."""
    l = 0.25
    axis = [0.0, math.sin(angle), math.cos(angle)]
    return explicit_platform([[l, 0, 0], [0, l, 0], [-l, 0, 0], [0, -l, 0]], mass=1.5, c_f=CF, c_tau=CT,
                             kappa=[-1.0, 1.0, -1.0, 1.0], axes=[axis] * 4, inertia=[0.02, 0.02, 0.04],
                             rotor_speed_max=700.0)


@pytest.mark.parametrize("angle", [0.1, 0.5, 0.9])
def test_condition_number_of_rank_deficient_design_is_inf_not_nan(angle):
    """Round-off makes the smallest eigenvalue of G_s G_s^T slightly negative here; kappa must stay inf."""
    p = tilted_mount_quad(angle)
    assert analysis.ranks(p)["rank_G"] == 4
    k = float(analysis.condition_number(p))
    assert not math.isnan(k) and (math.isinf(k) or k > 1e6)
    sv = np.asarray(analysis.singular_values(p))
    assert np.all(np.isfinite(sv)) and np.all(sv >= 0.0)
    assert float(analysis.condition_number(presets.get("cs_4r"))) == math.inf


def test_condition_number_gradient_finite_for_full_rank(paper):
    g = jax.grad(lambda a: analysis.condition_number(_with_angles(paper, a, paper.beta)))(paper.alpha)
    assert np.isfinite(g) and abs(float(g)) > 1e-3


# --------------------------------------------------------------------------- rotor-loss thrust-to-weight, exactly


def _max_force_by_vertex_enumeration(p, lost):
    """Independent ``max |F u| / (m g)`` over ``M u = 0``, bounds: enumerate every vertex of the polytope.

    ``u = N t`` with ``N`` a basis of ``ker M`` (k columns); a vertex makes ``k`` of the
    ``2 m`` bound constraints active. The maximum of the convex ``|F N t|`` is at a vertex.
    """
    import itertools

    from scipy.linalg import null_space

    F, M = np.asarray(force_matrix(p)), np.asarray(moment_matrix(p))
    keep = [i for i in range(F.shape[1]) if i != lost]
    F, M = F[:, keep], M[:, keep]
    lo, hi = np.asarray(p.u_min)[keep], np.asarray(p.u_max)[keep]
    N = null_space(M / CF)
    k, m = N.shape[1], len(keep)
    rows, rhs = np.vstack([N, -N]), np.concatenate([hi, -lo])  # rows @ t <= rhs
    best = 0.0
    for act in itertools.combinations(range(2 * m), k):
        R = rows[list(act)]
        if abs(np.linalg.det(R)) < 1e-12:
            continue
        t = np.linalg.solve(R, rhs[list(act)])
        if np.all(rows @ t <= rhs + 1e-9 * np.abs(rhs).max()):
            best = max(best, float(np.linalg.norm(F @ N @ t)))
    return best / float(p.mass * p.gravity)


#: A 10-rotor design with uneven cants, dihedrals and speed limits: after losing rotor 2 the zero-moment force
#: polytope (in 3-D) has its farthest vertex between sampled directions (a sampled support bound reads 2.0426).
ODD_DECA = dict(
    alpha=[0.527, -0.003, 0.308, -0.258, 0.037, -0.454, -0.639, -0.738, 0.323, -0.070],
    beta=[0.539, 0.501, 0.231, 0.584, 0.355, 0.460, 0.244, 0.118, 0.103, 0.109],
    rotor_speed_max=[702.0, 456.0, 410.0, 816.0, 450.0, 625.0, 644.0, 710.0, 652.0, 869.0],
)


@pytest.mark.parametrize("design", ["paper", "odd_deca"])
def test_rotor_loss_thrust_to_weight_is_exact(paper, design):
    """The reported rotor-loss thrust-to-weight is the polytope's largest force, not a sampled bound."""
    if design == "paper":
        p, rotors = paper, range(6)
    else:
        p = star_platform(10, 0.3, mass=4.0, c_f=CF, c_tau=CT, inertia=[0.1, 0.1, 0.2], **ODD_DECA)
        rotors = [2]
    losses = analysis.rotor_loss(p)
    for j in rotors:
        assert losses[j].hoverable
        assert losses[j].thrust_to_weight == pytest.approx(_max_force_by_vertex_enumeration(p, j), rel=1e-9)
    if design == "odd_deca":
        assert losses[2].thrust_to_weight == pytest.approx(2.048834027, rel=1e-9)


# --------------------------------------------------------------------------- the one barrier solver


def test_barrier_lp_against_linprog_and_finite_differences():
    """max c.z on {z : a.z = 1, 0 <= z <= 1} (z in R^3): value within sum(mask)/t of HiGHS, exact-ish gradient."""
    from jaxrotor.analysis.barrier import barrier_lp, barrier_schedule, null_projector

    def smooth(c):
        a = jnp.array([[1.0, 2.0, 1.0]])
        z0 = jnp.full(3, 0.25)  # a . z0 = 1, strictly inside the box
        g = jnp.concatenate([jnp.eye(3), -jnp.eye(3)])
        h = jnp.concatenate([jnp.zeros(3), -jnp.ones(3)])
        mask = jnp.ones(6, dtype=bool)
        return barrier_lp(c, g, h, mask, z0, null_projector(a), jnp.zeros(3), barrier_schedule(1e6, 6, 12, jnp.float64))

    c = jnp.array([1.0, 0.5, 2.0])
    res = linprog(-np.asarray(c), A_eq=[[1.0, 2.0, 1.0]], b_eq=[1.0], bounds=[(0, 1)] * 3, method="highs")
    value = float(smooth(c))
    assert -res.fun - 6 / 1e6 <= value <= -res.fun + 1e-12  # the LP optimum is 2 (z = e_3)
    grad = np.asarray(jax.grad(smooth)(c))
    h = 1e-6
    fd = [(float(smooth(c + h * e)) - float(smooth(c - h * e))) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(grad, [0.0, 0.0, 1.0], atol=1e-4)  # d(optimum)/dc = z* = e_3


def test_rotor_loss_margin_lives_in_analysis(paper):
    from jaxrotor.optimize import objectives

    assert objectives.rotor_loss_margin is analysis.rotor_loss_margin
    exact = min(x.margin for x in analysis.rotor_loss(paper))
    assert float(analysis.rotor_loss_margin(paper, temperature=0.0)) == pytest.approx(exact, abs=2e-5)
    with pytest.raises(ValueError, match="temperature"):
        analysis.rotor_loss_margin(paper, temperature=-1.0)
