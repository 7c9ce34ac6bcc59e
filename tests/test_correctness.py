"""Correctness of three corner cases: torque priority with a non-positive collective entry,
the under-actuated controller at zero commanded force, and the runaway test on norms.

Every expected value below is derived by hand in the comments.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.allocators import AllocationData, TorquePriority
from jaxrotor.control import UnderactuatedSE3
from jaxrotor.dynamics import WrenchCommand
from jaxrotor.flight import DivergenceLimits
from jaxrotor.reference import RefSample
from jaxrotor.simulate import simulate_open_loop
from jaxrotor.trajectory import divergence_flag

# --------------------------------------------------------------------------- torque priority


def _data(collective, M):
    """Three rotors, bounds [0, 10] rad^2/s^2, thrust row (1, 1, 1), torque rows ``M`` (``M n = 0``)."""
    n = jnp.asarray(collective, dtype=float)
    G = jnp.zeros((6, 3)).at[2].set(1.0).at[3:5].set(jnp.asarray(M, dtype=float))
    np.testing.assert_allclose(G[3:] @ n, 0.0, atol=1e-15)  # the collective is torque-free
    return AllocationData(G=G, G_pinv=jnp.linalg.pinv(G), collective=n, u_min=jnp.zeros(3), u_max=jnp.full(3, 10.0))


def _allocate(data, u0):
    """Allocate the wrench ``G u0`` (so ``G^+ w = u0``: G has full column rank)."""
    w = data.G @ jnp.asarray(u0, dtype=float)
    np.testing.assert_allclose(data.G_pinv @ w, u0, atol=1e-12)
    return w, TorquePriority()(data, w)


@pytest.mark.parametrize("u0_middle, u_middle", [(0.0, 0.0), (-1.0, 0.0), (4.0, 4.0), (12.0, 10.0)])
def test_torque_priority_rotor_with_zero_collective_is_only_clipped(u0_middle, u_middle):
    """n = (1, 0, 1): the middle rotor does not move with the shift and must not bound it.

    Rotors 1 and 3 need s in [(0 - (-2))/1, (10 - (-2))/1] = [2, 12] and [(0 - 3)/1, (10 - 3)/1] = [-3, 7],
    so s = clip(0, 2, 7) = 2 and u = (-2 + 2, u0_2, 3 + 2) = (0, u0_2, 5), the middle one clipped to [0, 10].
    (Before: (u_min - u0_2)/0 gave 0/0 = NaN for u0_2 = 0, and +inf for u0_2 < 0 -> NaN inputs.)
    """
    data = _data([1.0, 0.0, 1.0], [[1.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    w, r = _allocate(data, [-2.0, u0_middle, 3.0])
    assert float(r.shift) == pytest.approx(2.0, abs=1e-12)
    np.testing.assert_allclose(r.u, [0.0, u_middle, 5.0], atol=1e-12)
    # the shift along n changed only the collective: the torque about the first row is exact
    # (the second torque row is rotor 2 alone, so it is exact unless rotor 2 was clipped)
    np.testing.assert_allclose(r.achieved[3], w[3], atol=1e-12)
    np.testing.assert_allclose(r.achieved[4], u_middle, atol=1e-12)
    g = jax.grad(lambda ww: jnp.sum(TorquePriority()(data, ww).u))(w)
    assert bool(jnp.all(jnp.isfinite(g)))


def test_torque_priority_negative_collective_entry_swaps_its_bounds():
    """n = (1, -1/2, 1), u0 = (-2, 4, 3), bounds [0, 10].

    Rotor 2: 0 <= 4 - s/2 <= 10  <=>  -12 <= s <= 8 (dividing by -1/2 swaps the inequality).
    Rotors 1, 3: s in [2, 12] and [-3, 7]. So s in [2, 7], s = 2, u = (0, 3, 5), every torque exact.
    (Before: rotor 2 gave s >= 8 and s <= -12, an empty interval: s = midpoint -2, u = (0, 5, 1), torques lost.)
    """
    data = _data([1.0, -0.5, 1.0], [[1.0, 2.0, 0.0], [0.0, 2.0, 1.0]])
    w, r = _allocate(data, [-2.0, 4.0, 3.0])
    assert float(r.shift) == pytest.approx(2.0, abs=1e-12)
    np.testing.assert_allclose(r.u, [0.0, 3.0, 5.0], atol=1e-12)
    np.testing.assert_allclose(r.achieved[3:], w[3:], atol=1e-12)
    # only the collective force F n changed: 2 * (1 - 1/2 + 1) = 3 N along z
    np.testing.assert_allclose(r.achieved[:3] - w[:3], [0.0, 0.0, 3.0], atol=1e-12)
    # the upper end binds through the negative entry: u0 = (5, -4, 2) needs 0 <= -4 - s/2, s <= -8,
    # and rotors 1, 3 give s in [-5, 5] and [-2, 8]: empty, so s = midpoint of [-2, -8] = -5, then clip.
    _, r = _allocate(data, [5.0, -4.0, 2.0])
    assert float(r.shift) == pytest.approx(-5.0, abs=1e-12)
    np.testing.assert_allclose(r.u, [0.0, 0.0, 0.0], atol=1e-12)  # (0, -1.5, -3) clipped


# --------------------------------------------------------------------------- under-actuated controller


def _free_fall_ref(g, j=(0.0, 0.0, 0.0)):
    """A reference accelerating at -g e3 (free fall): the commanded force m (g e3 + a_r) is zero."""
    z = jnp.zeros(3)
    return RefSample(p=jnp.array([0.0, 0.0, 1.0]), v=jnp.array([0.0, 0.0, -2.0]), a=jnp.array([0.0, 0.0, -g]),
                     j=jnp.asarray(j, dtype=float), R=jnp.eye(3), omega=z, omega_dot=z, yaw=jnp.asarray(0.0))


@pytest.mark.parametrize("jerk", [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0)])
def test_underactuated_controller_at_zero_commanded_force_is_finite(jerk):
    """On the free-fall reference with zero tracking error f_w = 0: the desired thrust axis is undefined.

    The controller keeps b3 = e3, so R_d = I (yaw 0); with R = I and omega = 0 the wrench is exactly
    zero (thrust f_w . R e3 = 0, attitude and rate errors 0). Before, b3 = f_w/|f_w| = 0/0 gave NaN.
    The gradient with respect to the state and the gains is finite too.
    """
    quad = presets.cs_4r()
    ctrl = UnderactuatedSE3()
    ref = _free_fall_ref(float(quad.gravity), jerk)
    state = jr.initial_state(quad, p=ref.p, v=ref.v, rotor_speed="hover")
    wrench, d_int = ctrl(quad, state, ctrl.init_state(quad), ref)
    np.testing.assert_allclose(wrench, np.zeros(6), atol=1e-12)
    assert bool(jnp.all(jnp.isfinite(d_int.int_R)))

    def loss(ctrl, p):
        s = jr.initial_state(quad, p=p, v=ref.v, rotor_speed="hover")
        return jnp.sum(ctrl(quad, s, ctrl.init_state(quad), ref)[0] ** 2)

    g_ctrl, g_p = jax.grad(loss, argnums=(0, 1))(ctrl, ref.p)
    for leaf in jax.tree_util.tree_leaves((g_ctrl, g_p)):
        assert bool(jnp.all(jnp.isfinite(leaf)))


# --------------------------------------------------------------------------- runaway on norms


def test_divergence_flag_uses_euclidean_norms():
    """p = (0.8, 0.8, 0) L: every component is under the limit L but |p| = 0.8 sqrt(2) L = 1.13 L is over it.

    Before, the test compared max_k |p_k| = 0.8 L with L and missed it. (0.7, 0.7, 0) L has |p| = 0.99 L: not flagged.
    """
    lim = DivergenceLimits(max_position=10.0, max_speed=20.0, max_rate=30.0)
    z = jnp.zeros((2, 3))
    ok = jnp.asarray(True)

    def flag(p=z, v=z, w=z):
        return bool(divergence_flag(p, v, w, ok, lim))

    row = lambda x, L: jnp.array([[0.0, 0.0, 0.0], [x * L, x * L, 0.0]])  # noqa: E731
    assert not flag()
    assert flag(p=row(0.8, 10.0)) and not flag(p=row(0.7, 10.0))
    assert flag(v=row(0.8, 20.0)) and not flag(v=row(0.7, 20.0))
    assert flag(w=row(0.8, 30.0)) and not flag(w=row(0.7, 30.0))


def test_flight_beyond_position_limit_by_norm_is_diverged():
    """A vehicle held at (8, 8, 1) m by its weight-cancelling wrench, with a 10 m limit: |p| = 11.4 m, diverged."""
    hexa = presets.paper_hexarotor()
    s0 = jr.initial_state(hexa, p=[8.0, 8.0, 1.0], rotor_speed="hover")
    hold = WrenchCommand(force=jnp.array([0.0, 0.0, float(hexa.weight)]), torque=jnp.zeros(3))
    run = lambda L: simulate_open_loop(hexa, lambda t: hold, s0, 0.5, save_dt=0.1,  # noqa: E731
                                       limits=DivergenceLimits(max_position=L))
    tr = run(10.0)
    np.testing.assert_allclose(tr.p[-1], [8.0, 8.0, 1.0], atol=1e-9)  # weight cancelled: at rest
    assert bool(tr.diverged)
    assert not bool(run(12.0).diverged)  # |p| = sqrt(129) = 11.36 m < 12 m
