"""Allocators: BoxLS against SciPy's bounded least squares; Clip, PseudoInverse and TorquePriority by hand.

Torque priority is checked at a non-positive collective entry, at the upper bound and when infeasible;
every expected value is derived in the comments.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import lsq_linear

from jaxrotor.allocators import AllocationData, BoxLS, Clip, PseudoInverse, TorquePriority, prepare_allocation
from jaxrotor.design import presets

_ALLOC = BoxLS()
_CACHE = {}


def batched(name):
    """``(platform, data, f)`` of a preset, ``f(W, T) = (u, du)``: jit(vmap(jvp of w -> u)), compiled once per module."""
    if name not in _CACHE:
        p = presets.get(name)
        data = _ALLOC.prepare(p)
        jvp = jax.vmap(lambda w, t: jax.jvp(lambda v: _ALLOC(data, v).u, (w,), (t,)))
        _CACHE[name] = p, data, jax.jit(jvp)
    return _CACHE[name]


def inputs(f, W):
    return np.asarray(f(jnp.asarray(W), jnp.zeros_like(jnp.asarray(W)))[0])


def _requests(p, k, seed):
    """Hover plus random forces (up to 2 m g) and torques (up to 0.2 m g L)."""
    rng = np.random.default_rng(seed)
    W = float(p.weight)
    scale = np.r_[1.0, 1.0, 1.0, 0.1, 0.1, 0.1] * W
    return np.r_[0, 0, W, 0, 0, 0] + rng.normal(size=(k, 6)) * scale * rng.uniform(0, 2, (k, 1))


@pytest.mark.parametrize("name", ["paper_hexarotor", "octo_x8"])
def test_matches_scipy_bounded_least_squares(name):
    p, data, f = batched(name)
    W, G = np.asarray(_ALLOC.weights(data)), np.asarray(data.G)
    lo, hi = np.asarray(data.u_min), np.asarray(data.u_max)
    reqs = _requests(p, 40, seed=1)
    U = inputs(f, reqs)
    saturated = 0
    for w, u in zip(reqs, U):
        ref = lsq_linear(W[:, None] * G, W * w, bounds=(lo, hi), method="bvls", tol=1e-15)
        assert np.all(u >= lo) and np.all(u <= hi)
        cost, cost_ref = np.sum((W * (G @ u - w)) ** 2), np.sum((W * (G @ ref.x - w)) ** 2)
        assert cost == pytest.approx(cost_ref, rel=1e-8, abs=1e-8 * np.sum((W * w) ** 2))
        if name != "octo_x8":  # rank G = n: the minimiser is unique
            np.testing.assert_allclose(u, ref.x, rtol=0, atol=1e-8 * hi.max())
        saturated += np.any(np.isclose(u, hi) | np.isclose(u, lo))
    assert saturated >= 10  # the requests exercise the bounds
    if name != "octo_x8":  # one request at a time: the active-set loop stops at its own fixed point (in the
        one = jax.jit(lambda w: _ALLOC(data, w).u)  # batch above each member waits for the slowest): same inputs
        for w, u in zip(reqs[:12], U[:12]):
            np.testing.assert_allclose(np.asarray(one(jnp.asarray(w))), u, rtol=0, atol=1e-12 * hi.max())


def test_exact_inside_the_wrench_set_and_torques_first_outside():
    p, data, f = batched("paper_hexarotor")
    G = np.asarray(data.G)
    rng = np.random.default_rng(3)
    u_in = rng.uniform(0.2, 0.8, (4, 6)) * np.asarray(data.u_max)
    W = float(p.weight)
    # inside: wrenches made by inputs within bounds; outside: a lateral force no input makes, with roll torque
    w_out = np.array([3 * W, 0.0, W, 0.3 * W * 0.385, 0.0, 0.0])
    U = inputs(f, np.vstack([u_in @ G.T, w_out]))
    np.testing.assert_allclose(U[:4] @ G.T, u_in @ G.T, rtol=1e-10, atol=1e-10 * W)
    ach = {"boxls": G @ U[4]}
    for k, al in (("clip", Clip()), ("tp", TorquePriority())):
        ach[k] = np.asarray(al(al.prepare(p), jnp.asarray(w_out)).achieved)
    torque_err = {k: float(np.linalg.norm((a - w_out)[3:])) for k, a in ach.items()}
    assert torque_err["boxls"] < 0.1 * torque_err["clip"]
    Wd = np.asarray(_ALLOC.weights(data))
    cost = {k: float(np.sum((Wd * (a - w_out)) ** 2)) for k, a in ach.items()}
    assert cost["boxls"] <= min(cost["clip"], cost["tp"]) * (1 + 1e-12)


def test_gradient_matches_central_differences():
    p, data, f = batched("paper_hexarotor")
    W = float(p.weight)
    w0 = np.array([0.6 * W, 0.2 * W, 1.2 * W, 0.5, -0.3, 0.2])
    h = 1e-4 * W
    steps = np.vstack([w0 + h * np.eye(6), w0 - h * np.eye(6), np.tile(w0, (6, 1))])
    tangents = np.vstack([np.zeros((12, 6)), np.eye(6)])  # the last six rows: d u / d w_k at w0
    U, dU = (np.asarray(x) for x in f(jnp.asarray(steps), jnp.asarray(tangents)))
    hi = np.asarray(data.u_max)
    n_sat = int(np.sum(np.isclose(U[12], hi) | (U[12] <= 1e-9 * hi)))
    assert 0 < n_sat < 6  # some rotors saturated, some free
    fd = (U[:6] - U[6:12]).T / (2 * h)
    J = dU[12:].T
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


def test_float32_and_bad_weights():
    p = jax.tree_util.tree_map(lambda x: x.astype(jnp.float32) if isinstance(x, jax.Array) else x,
                               presets.get("paper_hexarotor"))
    alloc = BoxLS()
    data = alloc.prepare(p)
    W = float(p.weight)
    w = jnp.asarray([0.1 * W, 0.0, 1.1 * W, 0.2, 0.0, 0.1], dtype=jnp.float32)
    a = jax.jit(alloc)(data, w)
    assert a.u.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(a.achieved), np.asarray(w), rtol=1e-4, atol=1e-4 * W)
    with pytest.raises(ValueError, match="torque_weight"):
        BoxLS(torque_weight=0.0)


def test_tabulated_working_sets_give_the_solved_inputs_and_gradients():
    """BoxLS.problem(table=True) looks each working set's inverse up instead of factorising: the same inputs (to
    rounding) for 6 and 8 inputs and the same derivatives with respect to G and the wrench for 6, inside the box
    and at its bounds; more than BOX_TABLE_MAX_INPUTS inputs are refused by name."""
    from jaxrotor.allocators import BOX_TABLE_MAX_INPUTS, _working_set_index

    rng = np.random.default_rng(3)
    box = BoxLS()
    eps = float(np.finfo(float).eps)

    def u_of(G, w, u_max, table):
        return box.solve(box.problem(G, jnp.zeros_like(u_max), u_max, table=table), w)

    def loss(G, w, u_max, table):
        return jnp.sum(jnp.sin(u_of(G, w, u_max, table)))

    @jax.jit
    @jax.vmap
    def values(G, w, u_max):  # the solved and the tabulated inputs, and H
        return u_of(G, w, u_max, False), u_of(G, w, u_max, True), box.problem(G, jnp.zeros_like(u_max), u_max).H

    @jax.jit
    @jax.vmap
    def gradients(G, w, u_max):  # the two gradients with respect to (G, w)
        return [jax.grad(loss, argnums=(0, 1))(G, w, u_max, t) for t in (False, True)]

    saturated = 0
    for n in (6, 8):
        G = rng.normal(size=(12, 6, n))
        u_max = np.repeat(rng.uniform(0.5, 2.0, size=(12, 1)), n, axis=1)
        w = rng.normal(size=(12, 6)) * rng.uniform(0.1, 4.0, size=(12, 1))
        inside = u_max[1::2] * rng.uniform(0.2, 0.8, size=(6, n))  # every other wrench achievable with no bound met
        w[1::2] = np.einsum("bij,bj->bi", G[1::2], inside)
        G, w, u_max = jnp.asarray(G), jnp.asarray(w), jnp.asarray(u_max)
        u, u_t, H = jax.tree.map(np.asarray, values(G, w, u_max))
        u_max = np.asarray(u_max)
        cond = np.linalg.cond(H)  # 1e2 to 5e4 for n = 6; ~5e9 for n = 8 (the ridge 1e-9 holds G's null space)
        np.testing.assert_array_less(np.max(np.abs(u_t - u), axis=1), 10 * eps * cond * u_max[:, 0])
        saturated += int(np.sum(np.any((u <= 0) | (u >= u_max), axis=1)))
        if n > 6:  # the derivative is rounding-dominated in either method there (cond(H)^2 eps ~ 5e3): inputs only
            continue
        for g, g_t in zip(*jax.tree.map(np.asarray, gradients(G, w, jnp.asarray(u_max)))):
            g, g_t = g.reshape(12, -1), g_t.reshape(12, -1)
            # the derivative of H^-1 amplifies rounding by about cond(H)^2
            scale = np.maximum(1.0, np.max(np.abs(g), axis=1))
            np.testing.assert_array_less(np.max(np.abs(g_t - g), axis=1), 100 * eps * cond**2 * scale)
    assert 6 <= saturated <= 18  # both kinds of working set were met (an interior wrench of n = 8 may saturate)
    # the table's row of a working set: fixed inputs 0 and 2 of 4 -> 1 + 4
    assert int(_working_set_index(jnp.asarray([True, False, True, False]))) == 5
    n = BOX_TABLE_MAX_INPUTS + 1
    with pytest.raises(ValueError, match="`table` = True"):
        box.problem(jnp.ones((6, n)), jnp.zeros(n), jnp.ones(n), table=True)


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


# --------------------------------------------------------------------------- runaway on norms


@pytest.fixture(scope="module")
def hexa():
    return presets.paper_hexarotor()


# --------------------------------------------------------------------------- allocators


def test_allocators_exact_clip_and_torque_priority(hexa):
    data = prepare_allocation(hexa)
    M = np.asarray(data.G[3:])
    # the collective direction is torque-free and positive
    np.testing.assert_allclose(M @ np.asarray(data.collective), 0.0, atol=1e-15)
    assert np.all(np.asarray(data.collective) > 0)
    # inside the bounds: all three allocators deliver the wrench exactly
    w = jnp.array([1.0, -2.0, 36.0, 0.3, -0.2, 0.05])
    for alloc in (PseudoInverse(), Clip(), TorquePriority()):
        r = alloc(data, w)
        np.testing.assert_allclose(r.achieved, w, atol=1e-10)
        assert not bool(jnp.any(r.saturated))
    # a large torque with low collective: G^+ w asks for negative inputs
    w = jnp.array([0.0, 0.0, 5.0, 5.0, 0.0, 0.0])
    u0 = PseudoInverse()(data, w).u
    assert float(jnp.min(u0)) < 0
    clip = Clip()(data, w)
    assert bool(jnp.any(clip.saturated)) and float(jnp.min(clip.u)) >= 0
    assert float(jnp.max(jnp.abs(clip.achieved[3:] - w[3:]))) > 1e-3  # torques suffer under clip
    np.testing.assert_allclose(clip.achieved - clip.requested, np.asarray(data.G) @ np.asarray(clip.u) - np.asarray(w), atol=1e-12)
    tp = TorquePriority()(data, w)
    assert float(jnp.min(tp.u)) >= -1e-9
    np.testing.assert_allclose(tp.achieved[3:], w[3:], atol=1e-9)  # all three torques exact
    assert float(tp.shift) > 0
    # only the collective force F n changed
    F = np.asarray(data.G[:3])
    np.testing.assert_allclose(tp.achieved[:3] - w[:3], float(tp.shift) * F @ np.asarray(data.collective), atol=1e-9)


def test_torque_priority_at_upper_bound_and_when_infeasible(hexa):
    data = prepare_allocation(hexa)
    u_max = float(data.u_max[0])
    # near full thrust with some torque: shift down
    w = jnp.array([0.0, 0.0, 0.99 * 6 * u_max * float(data.G[2, 0]), 1.0, 0.0, 0.0])
    tp = TorquePriority()(data, w)
    assert float(tp.shift) < 0 and float(jnp.max(tp.u)) <= u_max * (1 + 1e-12)
    np.testing.assert_allclose(tp.achieved[3:], w[3:], atol=1e-9)
    # impossible torque: no shift suffices, inputs stay within bounds and the error is reported
    w = jnp.array([0.0, 0.0, 30.0, 50.0, 0.0, 0.0])
    tp = TorquePriority()(data, w)
    assert float(jnp.min(tp.u)) >= 0 and float(jnp.max(tp.u)) <= u_max * (1 + 1e-12)
    assert float(jnp.abs(tp.achieved[3] - w[3])) > 1.0
