"""BoxLS: box-constrained weighted least-squares allocation against SciPy's bounded least squares."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import lsq_linear

from jaxrotor.allocators import BoxLS, Clip, TorquePriority
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
