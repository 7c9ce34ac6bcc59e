"""Tilt-deciding allocators: extended variables, online cant selection, the table baseline, checks, gradients."""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets, so3
from jaxrotor.allocation import allocation_matrix
from jaxrotor.design.platform import star_platform
from jaxrotor.tilting import (
    CantLookupTable,
    CantSelection,
    ExtendedVariable,
    extended_matrix,
)
from jaxrotor.tilt_allocators import yaw_authority

BASE = {"mass": 3.5, "c_f": 3.799e-5, "c_tau": 1.163e-6, "inertia": (0.155, 0.147, 0.251), "rotor_speed_max": 700.0}


@pytest.fixture(scope="module")
def voliro():
    return presets.get("cs_ai_ting_6r")


def _random_angles(rng, n, modes):
    a = rng.uniform(-1.2, 1.2, n) if "alpha" in modes else np.zeros(n)
    b = rng.uniform(-1.2, 1.2, n) if "beta" in modes else np.zeros(n)
    return a, b


@pytest.mark.parametrize("modes", [("alpha",), ("beta",), ("alpha", "beta")])
def test_extended_matrix_is_the_allocation_matrix_in_decomposed_variables(modes):
    """``A v = G(alpha, beta) u`` for v built from the angles and thrusts (eq. 4 by matrix products)."""
    rng = np.random.default_rng(1)
    p = star_platform(5, 0.3, alpha=[0.0] * 5, beta=[0.0] * 5, tilting=modes, c_tau=[1e-6, 2e-6, 1e-6, 3e-6, 1e-6],
                      **{k: v for k, v in BASE.items() if k != "c_tau"})
    a, b = _random_angles(rng, 5, modes)
    u = rng.uniform(1e4, 4e5, 5)
    T = p.c_f * u
    if modes == ("alpha",):
        v = np.stack([T * np.cos(a), T * np.sin(a)], -1)
    elif modes == ("beta",):
        v = np.stack([T * np.cos(b), T * np.sin(b)], -1)
    else:  # thrust in the arm frame R_y(beta) R_x(alpha) e_z
        v = np.stack([np.asarray(so3.rot_y(bi) @ so3.rot_x(ai) @ jnp.array([0.0, 0.0, 1.0])) * Ti
                      for ai, bi, Ti in zip(a, b, np.asarray(T))])
    w_ext = np.asarray(extended_matrix(p)) @ v.reshape(-1)
    w_G = np.asarray(allocation_matrix(p, jnp.asarray(a), jnp.asarray(b))) @ u
    np.testing.assert_allclose(w_ext, w_G, rtol=1e-12, atol=1e-12 * np.abs(w_G).max())


@pytest.mark.parametrize("name", ["cs_ai_ting_6r", "cs_ai_ting_4r"])
def test_extended_variable_reproduces_achievable_wrenches_exactly(name):
    """Random wrenches made by in-bound thrusts at random tilts are reproduced to 1e-9 (relative)."""
    p = presets.get(name)
    ev = ExtendedVariable()
    A = np.asarray(extended_matrix(p))
    n = p.n_rotors
    solve = jax.jit(lambda w: ev.solve(p, w, p.alpha, p.beta))
    rng = np.random.default_rng(0)
    T_max = float(p.c_f[0]) * 700.0**2
    worst = 0.0
    for _ in range(25):
        th = rng.uniform(-1.3, 1.3, n)
        T = rng.uniform(0.3, 0.7, n) * T_max
        w = A @ np.stack([T * np.cos(th), T * np.sin(th)], -1).reshape(-1)
        sol = solve(jnp.asarray(w))
        u = np.asarray(sol.u)
        assert np.all(u >= 0) and np.all(u <= 700.0**2)
        achieved = np.asarray(allocation_matrix(p, sol.alpha)) @ u
        worst = max(worst, np.abs(achieved - w).max() / np.abs(w).max())
    assert worst < 1e-9


def test_extended_variable_is_continuous_across_pi_and_safe_at_zero_thrust(voliro):
    ev = ExtendedVariable()
    A = np.asarray(extended_matrix(voliro))
    T = 8.0
    cur = jnp.full(6, 3.1)
    target = -3.1  # the same direction as 3.1832 rad
    w = A @ np.stack([np.full(6, T * math.cos(target)), np.full(6, T * math.sin(target))], -1).reshape(-1)
    solve = jax.jit(lambda w, cur: ev.solve(voliro, w, cur, voliro.beta))
    sol = solve(jnp.asarray(w), cur)
    # the equivalent angle nearest the current 3.1 rad (2 pi - 3.1 = 3.18), not the principal -3.1
    assert np.all(np.abs(np.asarray(sol.alpha) - (2 * math.pi + target)) < 1e-3)
    achieved = np.asarray(allocation_matrix(voliro, sol.alpha)) @ np.asarray(sol.u)
    np.testing.assert_allclose(achieved, w, atol=1e-9 * np.abs(w).max())
    # zero wrench without the null-space term: every thrust is zero, the angles stay where they are and
    # derivatives are finite (with the term, internal forces keep each thrust at its margin instead)
    plain = ExtendedVariable(null_steps=0)
    solve0 = jax.jit(lambda w: plain.solve(voliro, w, jnp.full(6, 0.4), voliro.beta))
    zero = jnp.zeros(6)
    np.testing.assert_allclose(np.asarray(solve0(zero).alpha), 0.4, atol=1e-15)
    jac = jax.jit(jax.jacobian(lambda w: (solve0(w).alpha, solve0(w).u)))(zero)
    assert all(np.all(np.isfinite(np.asarray(j))) for j in jac)


def test_null_space_term_lifts_rotors_off_their_lower_bound():
    """With a high idle speed the minimum-norm thrusts fall below the band; the null-space steps lift them
    inside it while the wrench stays exact."""
    p = star_platform(6, 0.385, alpha=[0.0] * 6, beta=0.0, tilting=("alpha",), rotor_speed_min=400.0, **BASE)
    ev = ExtendedVariable(margin=0.05)
    w = jnp.asarray([8.0, 0.0, 34.335, 0.0, 0.0, 0.0])
    plain = ExtendedVariable(margin=0.05, null_steps=0).solve(p, w, p.alpha, p.beta)
    sol = ev.solve(p, w, p.alpha, p.beta)
    T_lo = float(p.c_f[0]) * 400.0**2
    band = T_lo + 0.05 * float(p.c_f[0]) * (700.0**2 - 400.0**2)
    assert float(jnp.min(plain.thrust)) < T_lo  # the minimum-norm solution needs a rotor below its idle speed
    assert float(jnp.min(sol.thrust)) > band - 1e-6 * band
    A = np.asarray(extended_matrix(p))
    np.testing.assert_allclose(A @ np.asarray(sol.v).reshape(-1), np.asarray(w), atol=1e-9)


def test_cant_selection_matches_a_fine_search_and_its_derivative_matches_differences():
    p = presets.get("cs_a0_ting_6r")
    cs = CantSelection(newton_steps=1)
    fine = jnp.linspace(cs.limits[0], cs.limits[1], 4001)
    # one compiled function gives the selection and its directional derivative in the requested force
    select_jvp = jax.jit(lambda f, a, df: jax.jvp(lambda f_: cs.select(p, f_, a), (f,), (df,)))
    cost = jax.jit(jax.vmap(lambda x, f, a: cs.cost(p, x, f, a), in_axes=(0, None, None)))
    rng = np.random.default_rng(3)
    W = float(p.weight)
    e = jnp.asarray([1.0, 0.5, -0.2])
    for _ in range(5):
        f = jnp.asarray([rng.uniform(-0.25, 0.25) * W, rng.uniform(-0.25, 0.25) * W, rng.uniform(0.9, 1.3) * W])
        a_cur = rng.uniform(*cs.limits)
        a = float(select_jvp(f, a_cur, e)[0])
        a_best = float(fine[jnp.argmin(cost(fine, f, a_cur))])
        assert abs(a - a_best) < 2e-3
    f0 = jnp.asarray([0.15 * W, 0.1 * W, W])
    _, da = select_jvp(f0, 0.2, e)
    h = 1e-4
    fd = (float(select_jvp(f0 + h * e, 0.2, e)[0]) - float(select_jvp(f0 - h * e, 0.2, e)[0])) / (2 * h)
    assert abs(float(da) - fd) <= 1e-4 * max(abs(fd), 1e-3) and abs(fd) > 1e-4


def test_lookup_table_baseline_picks_a_feasible_grid_cant():
    p = presets.get("cs_a0_ting_6r")
    lut = eqx.filter_jit(CantLookupTable.build)(p, size=71)
    W = float(p.weight)
    f = jnp.asarray([0.2 * W, -0.1 * W, 1.05 * W])
    a = float(lut.select(f, 0.3))
    assert np.any(np.isclose(np.asarray(lut.alphas), a))
    u = np.linalg.lstsq(np.asarray(allocation_matrix(p, a)), np.concatenate([np.asarray(f), np.zeros(3)]), rcond=None)[0]
    assert np.all(u >= np.asarray(lut.u_lo) - 1e-6) and np.all(u <= np.asarray(lut.u_hi) + 1e-6)


# --------------------------------------------------------------------------- errors before compiling


def _flight(allocator, ref=None, servo=None):
    return jr.Flight(reference=ref if ref is not None else jr.reference.Hover((0.0, 0.0, 1.0), 1.0),
                     allocator=allocator, actuators=jr.Actuators(servo=servo or jr.IdealServo()))


def test_bad_tilting_input_is_refused_before_compiling(voliro):
    ctrl = jr.FullyActuatedSE3()
    with pytest.raises(ValueError, match="fixed-tilt"):
        jr.fly(presets.paper_hexarotor(), ctrl, _flight(ExtendedVariable()))
    with pytest.raises(ValueError, match="shared"):
        jr.fly(presets.get("cs_a0_ting_6r"), ctrl, _flight(ExtendedVariable()))
    with pytest.raises(ValueError, match="alpha_limits.*excludes the current angle"):
        jr.fly(voliro, ctrl, _flight(ExtendedVariable(alpha_limits=(0.1, 1.0))))
    with pytest.raises(ValueError, match="limits.*excludes the current cant"):
        jr.fly(presets.get("cs_a0_ting_6r"), ctrl, _flight(CantSelection(limits=(0.5, 0.6))))
    with pytest.raises(ValueError, match="no servo-actuated shared cant"):
        jr.fly(voliro, ctrl, _flight(CantSelection()))
    with pytest.raises(ValueError, match="lower < upper"):
        ExtendedVariable(alpha_limits=(1.0, -1.0))


def test_yaw_authority_vanishes_at_the_singular_cant_and_the_selection_keeps_its_margin():
    """On ``cs_a0_ting_6r`` (beta = 0, alpha_i = s_i alpha_0, kappa_i = s_i) rotor i's yaw entry is
    ``c_f (p_i x z_i)_z + kappa_i c_tau z_i,z = s_i (c_tau cos alpha_0 - c_f l sin alpha_0)`` (``p_i = l R_z(g_i) x``,
    ``z_i = R_z(g_i) R_x(s_i alpha_0) z``), here built with NumPy rotations; the authority is the row norm over
    ``|c_tau|`` and vanishes at ``tan alpha_s = c_tau / (c_f l)``."""
    from tests.npref import np_rx, np_rz

    p = presets.get("cs_a0_ting_6r")
    c_f, c_tau, l = float(p.c_f[0]), float(p.c_tau[0]), float(p.arm_length)

    def by_hand(a0):
        row = []
        for g, s, k in zip(np.asarray(p.gamma), np.asarray(p.alpha_sign), np.asarray(p.kappa)):
            z = np_rz(g) @ np_rx(s * a0) @ np.array([0.0, 0.0, 1.0])
            pos = l * np_rz(g) @ np.array([1.0, 0.0, 0.0])
            row.append(c_f * np.cross(pos, z)[2] + k * c_tau * z[2])
        return np.linalg.norm(row) / (math.sqrt(6) * c_tau)

    authority = eqx.filter_jit(yaw_authority)
    for deg in (0.0, 3.0, 4.55, 6.0, 25.0, 40.0):
        a0 = math.radians(deg)
        assert float(authority(p, jnp.asarray(a0))) == pytest.approx(by_hand(a0), rel=1e-12, abs=1e-14)
    assert float(authority(p, jnp.asarray(0.0))) == pytest.approx(1.0, rel=1e-12)
    singular = math.atan(c_tau / (c_f * l))  # the yaw entries c_f l sin(a) - c_tau cos(a) vanish
    assert float(authority(p, jnp.asarray(singular))) < 1e-12
    # at hover the power term alone picks the lower limit (5 deg, 0.45 deg from the singular cant, a = 0.10);
    # the yaw-authority term keeps a >= 0.5 (within the soft penalty's tolerance)
    W = float(p.weight)
    hover = jnp.asarray([0.0, 0.0, W])
    plain = float(eqx.filter_jit(CantSelection(yaw_authority=0.0).select)(p, hover, jnp.asarray(0.4)))
    kept = float(eqx.filter_jit(CantSelection().select)(p, hover, jnp.asarray(0.4)))
    assert plain == pytest.approx(math.radians(5.0), abs=1e-6)
    assert float(authority(p, jnp.asarray(plain))) < 0.11
    assert 0.49 <= float(authority(p, jnp.asarray(kept))) <= 0.6
    with pytest.raises(ValueError, match="yaw_authority"):
        CantSelection(yaw_authority=-0.1)
