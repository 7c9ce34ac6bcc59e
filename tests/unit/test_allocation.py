"""Allocation matrices F, M, G (eqs. 5-10) against hand-derived and independent computations."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import allocation, presets

RNG = np.random.default_rng(11)


from npref import np_rx, np_ry, np_rz  # noqa: E402  (independent NumPy rotations)


def reference_FM(l, gamma, delta, alpha, beta, c_f, c_tau, kappa):
    """Element-by-element eqs. (3)-(9) with numpy: one column per rotor."""
    n = len(gamma)
    F = np.zeros((3, n))
    M = np.zeros((3, n))
    for i in range(n):
        p_i = l * np_rz(gamma[i]) @ np_ry(delta[i]) @ np.array([1.0, 0.0, 0.0])
        z_i = np_rz(gamma[i]) @ np_ry(beta[i]) @ np_rx(alpha[i]) @ np.array([0.0, 0.0, 1.0])
        f_i = c_f[i] * z_i  # eq. (5) per unit input
        tau_d = kappa[i] * c_tau[i] * z_i  # eq. (6)
        tau_t = np.cross(p_i, f_i)  # eq. (7)
        for r in range(3):
            F[r, i] = f_i[r]
            M[r, i] = tau_t[r] + tau_d[r]
    return F, M


def test_flat_quadrotor_closed_form():
    p = presets.cs_4r()
    c_f, c_tau, l = float(p.c_f[0]), float(p.c_tau[0]), float(p.arm_length)
    kappa = np.asarray(p.kappa)
    np.testing.assert_array_equal(kappa, [-1, 1, -1, 1])
    F = np.asarray(jr.force_matrix(p))
    M = np.asarray(jr.moment_matrix(p))
    # every rotor pushes along z_B
    np.testing.assert_allclose(F, c_f * np.array([[0.0] * 4, [0.0] * 4, [1.0] * 4]), atol=1e-20)
    # p_i x z_B = l (cos g, sin g, 0) x (0, 0, 1) = l (sin g, -cos g, 0)
    gam = np.array([0.0, np.pi / 2, np.pi, 3 * np.pi / 2])
    M_ref = np.stack([c_f * l * np.sin(gam), -c_f * l * np.cos(gam), kappa * c_tau])
    np.testing.assert_allclose(M, M_ref, atol=1e-20)
    # written out: rotor 1 on +x rolls nothing and pitches nose down (-y torque), etc.
    np.testing.assert_allclose(
        M,
        np.array([[0.0, c_f * l, 0.0, -c_f * l], [-c_f * l, 0.0, c_f * l, 0.0], [-c_tau, c_tau, -c_tau, c_tau]]),
        atol=1e-20,
    )
    G = np.asarray(jr.allocation_matrix(p))
    np.testing.assert_array_equal(G, np.vstack([F, M]))
    assert np.linalg.matrix_rank(G) == 4  # flat quadrotor: under-actuated, rank 4


def test_paper_hexarotor_against_numpy_loops():
    p = presets.paper_hexarotor()
    a0, b0 = 5 * math.pi / 36, math.pi / 18
    gamma = [(i - 1) * math.pi / 3 for i in range(1, 7)]
    alpha = [(-1) ** i * a0 for i in range(1, 7)]
    beta = [b0] * 6
    kappa = [(-1) ** i for i in range(1, 7)]
    F_ref, M_ref = reference_FM(0.385, gamma, [0.0] * 6, alpha, beta, [3.799e-05] * 6, [1.163e-06] * 6, kappa)
    np.testing.assert_allclose(np.asarray(jr.force_matrix(p)), F_ref, rtol=0, atol=1e-18)
    np.testing.assert_allclose(np.asarray(jr.moment_matrix(p)), M_ref, rtol=0, atol=1e-18)
    assert np.linalg.matrix_rank(np.asarray(jr.allocation_matrix(p))) == 6  # fully actuated


def test_random_general_platform_against_numpy_loops():
    n = 7
    gamma = RNG.uniform(0, 2 * np.pi, n)
    delta = RNG.uniform(0, 1.2, n)
    alpha = RNG.uniform(-1.2, 1.2, n)
    beta = RNG.uniform(0, 1.2, n)
    c_f = RNG.uniform(1e-5, 4e-5, n)
    c_tau = RNG.uniform(1e-7, 2e-6, n)
    kappa = RNG.choice([-1.0, 1.0], n)
    p = jr.star_platform(n, 0.31, mass=2.0, c_f=c_f, c_tau=c_tau, kappa=kappa, alpha=alpha, beta=beta,
                         delta=delta, gamma=gamma, inertia=[0.05, 0.06, 0.09])
    F_ref, M_ref = reference_FM(0.31, gamma, delta, alpha, beta, c_f, c_tau, kappa)
    np.testing.assert_allclose(np.asarray(jr.force_matrix(p)), F_ref, rtol=0, atol=1e-18)
    np.testing.assert_allclose(np.asarray(jr.moment_matrix(p)), M_ref, rtol=0, atol=1e-18)


def test_explicit_platform_allocation():
    pos = np.array([[0.2, 0.1, 0.03], [-0.2, 0.1, 0.0], [-0.2, -0.1, 0.0], [0.2, -0.1, -0.02]])
    ax = np.array([[0, 0, 1.0], [0, 0.6, 0.8], [0.28, 0.0, 0.96], [0.6, 0, 0.8]])
    c_f, c_tau, kappa = np.array([1e-5, 2e-5, 3e-5, 4e-5]), np.array([1e-7, 2e-7, 3e-7, 0.0]), [-1, 1, -1, 1]
    p = jr.explicit_platform(pos, axes=ax, kappa=kappa, mass=1.0, c_f=c_f, c_tau=c_tau, inertia=[0.01, 0.01, 0.02])
    F = np.asarray(jr.force_matrix(p))
    M = np.asarray(jr.moment_matrix(p))
    for i in range(4):
        np.testing.assert_allclose(F[:, i], c_f[i] * ax[i], atol=1e-20)
        np.testing.assert_allclose(M[:, i], c_f[i] * np.cross(pos[i], ax[i]) + kappa[i] * c_tau[i] * ax[i], atol=1e-20)


def test_wrench_is_G_u_and_per_rotor_sums():
    p = presets.paper_hexarotor()
    u = RNG.uniform(1e4, 3e5, 6)
    G = np.asarray(jr.allocation_matrix(p))
    f, tau = jr.wrench(p, jnp.asarray(u))
    np.testing.assert_allclose(np.concatenate([np.asarray(f), np.asarray(tau)]), G @ u, rtol=1e-14, atol=1e-14)
    # eqs. (5)-(9): sum of the per-rotor forces / moments
    f_i = np.asarray(allocation.rotor_forces(p, jnp.asarray(u)))
    drag, thrust_moment = (np.asarray(x) for x in allocation.rotor_moments(p, jnp.asarray(u)))
    np.testing.assert_allclose(f_i.sum(0), np.asarray(f), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose((drag + thrust_moment).sum(0), np.asarray(tau), rtol=1e-13, atol=1e-14)
    P = np.asarray(jr.rotor_positions(p))
    np.testing.assert_allclose(thrust_moment, np.cross(P, f_i), rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize(
    "tilting, a_cmd, b_cmd",
    [
        (("alpha",), 0.35, None),
        (("beta",), None, 0.25),
        (("alpha", "beta"), -0.4, 0.3),
    ],
)
def test_tilting_platform_follows_the_passed_angles(tilting, a_cmd, b_cmd):
    base = dict(mass=2.0, c_f=3e-5, c_tau=1e-6, inertia=[0.05, 0.05, 0.09])
    tilt = jr.star_platform(6, 0.3, alpha=0.1, beta=0.05, tilting=tilting, **base)
    a = 0.1 if a_cmd is None else a_cmd
    b = 0.05 if b_cmd is None else b_cmd
    fixed = jr.star_platform(6, 0.3, alpha=a, beta=b, **base)
    F = np.asarray(jr.force_matrix(tilt, a_cmd, b_cmd))
    M = np.asarray(jr.moment_matrix(tilt, a_cmd, b_cmd))
    np.testing.assert_allclose(F, np.asarray(jr.force_matrix(fixed)), atol=1e-20)
    np.testing.assert_allclose(M, np.asarray(jr.moment_matrix(fixed)), atol=1e-20)
    np.testing.assert_allclose(np.asarray(jr.allocation_matrix(tilt, a_cmd, b_cmd)),
                               np.asarray(jr.allocation_matrix(fixed)), atol=1e-20)
    # and they differ from the matrices at the platform's stored angles
    assert np.max(np.abs(F - np.asarray(jr.force_matrix(tilt)))) > 1e-6


def test_tilting_independent_angles():
    base = dict(mass=2.0, c_f=3e-5, c_tau=1e-6, inertia=[0.05, 0.05, 0.09])
    tilt = jr.star_platform(4, 0.3, alpha=[0.0] * 4, tilting=("alpha",), **base)
    a = np.array([0.1, -0.2, 0.3, -0.4])
    fixed = jr.star_platform(4, 0.3, alpha=a, **base)
    np.testing.assert_allclose(np.asarray(jr.allocation_matrix(tilt, jnp.asarray(a))),
                               np.asarray(jr.allocation_matrix(fixed)), atol=1e-20)


def test_hover_inputs_produce_weight_and_no_torque():
    for p in (presets.paper_hexarotor(), presets.cs_4r(), presets.cs_a0_ted_6r()):
        u = np.asarray(jr.hover_inputs(p))
        G = np.asarray(jr.allocation_matrix(p))
        w = G @ u
        np.testing.assert_allclose(w, [0, 0, float(p.mass * p.gravity), 0, 0, 0], atol=1e-12)
    # flat quadrotor: every rotor lifts a quarter of the weight
    p = presets.cs_4r()
    np.testing.assert_allclose(np.asarray(jr.hover_inputs(p)), np.full(4, 1.5 * 9.81 / 4 / 3.799e-05), rtol=1e-12)
    # Table II hexarotor: by symmetry all six inputs equal, each rotor's vertical thrust m g / 6
    p = presets.paper_hexarotor()
    a0, b0 = 5 * math.pi / 36, math.pi / 18
    u_ref = 3.5 * 9.81 / (6 * 3.799e-05 * math.cos(a0) * math.cos(b0))
    np.testing.assert_allclose(np.asarray(jr.hover_inputs(p)), np.full(6, u_ref), rtol=1e-12)
