"""The quadrotor's relaxed hover (jaxrotor.relaxed): the spinning equilibrium solves its equations (the opposite
rotor at twice the others' thrust, so the drag torques cancel, in closed form), the doubling Riccati solver agrees
with scipy's, and the LQR stabilises the linear model."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from jaxrotor import relaxed as RX
from jaxrotor.allocators import prepare_allocation
from jaxrotor.design.presets import PRESETS


@pytest.fixture(scope="module")
def f450():
    pf = PRESETS["f450"]()
    return pf, prepare_allocation(pf).G


def test_equilibrium_in_closed_form(f450):
    """Losing rotor 1 of the F450 made symmetric (J_x = J_y): the three others' drag torques cancel only with
    the opposite rotor (3) at twice the thrust of 2 and 4 (equal c_f, c_tau); the thrust along the primary axis carries the weight; the
    axis is tilted by AXIS_TILT away from the lost rotor; the Euler equation holds at the spin found."""
    import equinox as eqx

    pf, G = f450
    J = np.asarray(pf.inertia)
    jx = 0.5 * (J[0, 0] + J[1, 1])
    sym = eqx.tree_at(lambda p: p.inertia, pf, jnp.diag(jnp.asarray([jx, jx, J[2, 2]])))  # J_x = J_y
    _, us, _, _ = RX.equilibrium(sym, G, 0)
    us = np.asarray(us)
    assert us[1] == pytest.approx(2 * us[0], rel=1e-9) and us[2] == pytest.approx(us[0], rel=1e-9)
    w, u, n, keep = RX.equilibrium(pf, G, 0)  # the F450's own J_x != J_y: close to it
    u = np.asarray(u)
    assert list(np.asarray(keep)) == [1, 2, 3]
    assert u[1] == pytest.approx(u[0] + u[2], rel=0.05)  # J_x != J_y: (omega x J omega)_z enters the yaw row
    c_f = float(pf.c_f[0])
    assert c_f * u.sum() * float(n[2]) == pytest.approx(float(pf.mass * pf.gravity), rel=1e-12)
    assert float(n[2]) == pytest.approx(np.cos(RX.AXIS_TILT), rel=1e-12)
    lost_xy = -np.array([-float(G[4, 0]), float(G[3, 0])])
    assert np.dot(np.asarray(n)[:2], lost_xy) > 0  # away from the lost rotor
    s = -np.asarray(pf.kappa)[1:]
    h = np.array([0, 0, np.sum(np.asarray(pf.J_r)[1:] * s * np.sqrt(u))])
    wv = float(w) * np.asarray(n)
    np.testing.assert_allclose(np.asarray(G)[3:, 1:] @ u, np.cross(wv, J @ wv + h), atol=1e-10)
    assert 10.0 < abs(float(w)) < 60.0


def test_doubling_riccati_matches_scipy():
    rng = np.random.default_rng(0)
    A = np.eye(5) + 0.05 * rng.normal(size=(5, 5))
    B = 0.1 * rng.normal(size=(5, 2))
    Q, R = np.diag(rng.uniform(0.5, 2.0, 5)), np.diag([0.3, 0.7])
    P = np.asarray(RX.dare(jnp.asarray(A), jnp.asarray(B), jnp.asarray(Q), jnp.asarray(R)))
    np.testing.assert_allclose(P, scipy.linalg.solve_discrete_are(A, B, Q, R), rtol=1e-9)


def test_lqr_stabilises_every_loss(f450):
    """For each single loss: the linear model is unstable or marginal open loop (the spin's nutation) and the
    discrete closed loop A_d - B_d K has every eigenvalue inside the unit circle."""
    pf, G = f450
    tab = RX.relaxed_table(pf, G, 0.03, 0.002)
    for j in range(4):
        row = jax.tree.map(lambda a: a[j], tab)
        f = RX._dynamics(pf, *RX._parts(pf, G, row.keep), 0.03)
        np.testing.assert_allclose(np.asarray(f(row.x_bar, row.w_bar)), 0.0, atol=1e-8)  # an equilibrium
        A = np.asarray(jax.jacfwd(f, 0)(row.x_bar, row.w_bar))
        B = np.asarray(jax.jacfwd(f, 1)(row.x_bar, row.w_bar))
        assert np.max(np.linalg.eigvals(A).real) > -1e-6
        closed = np.eye(8) + (A - B @ np.asarray(row.K)) * 0.002
        assert np.max(np.abs(np.linalg.eigvals(closed))) < 1.0
