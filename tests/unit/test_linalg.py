"""jaxrotor.linalg: the LAPACK-free singular values, pseudo-inverse and rank against numpy's LAPACK.

Random matrices of the tick's shapes (3 or 6 rows, 3 to 8 columns, scales 1e-6 to 1e3), full rank, with a
zero column (a lost rotor) and with a dependent column, in float64 and float32; gradients against
``jnp.linalg``'s own differentiation rules (constant rank) and central differences.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor import linalg


def _matrices(seed=0, count=60):
    rng = np.random.default_rng(seed)
    out = []
    for trial in range(count):
        m, n = int(rng.choice([3, 6])), int(rng.choice([3, 4, 6, 8]))
        A = rng.normal(size=(m, n)) * 10.0 ** rng.uniform(-6, 3)
        if trial % 3 == 0:
            A[:, rng.integers(n)] = 0.0  # a lost rotor's column
        elif trial % 3 == 1 and n > 3:
            A[:, 0] = 2.0 * A[:, 1] + A[:, 2]  # rank deficient without a zero column
        out.append(A)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_lapack(dtype):
    eps = float(np.finfo(dtype).eps)
    for A in _matrices():
        A = A.astype(dtype)
        sv_ref = np.linalg.svd(A.astype(np.float64), compute_uv=False)
        sv = np.asarray(linalg.singular_values(jnp.asarray(A)))
        assert sv.dtype == dtype
        assert np.max(np.abs(sv - sv_ref)) <= 20 * eps * sv_ref[0]
        P_ref = np.linalg.pinv(A.astype(np.float64), rcond=10 * max(A.shape) * eps)
        P = np.asarray(linalg.pinv(jnp.asarray(A)))
        assert P.shape == A.T.shape
        assert np.max(np.abs(P - P_ref)) <= 200 * eps * np.max(np.abs(P_ref))
        rank_ref = int(np.sum(sv_ref > 1e-5 * sv_ref[0]))
        assert int(linalg.rank(jnp.asarray(A), 1e-5)) == rank_ref


def test_zero_matrix():
    assert int(linalg.rank(jnp.zeros((6, 6)), 1e-9)) == 0
    np.testing.assert_array_equal(np.asarray(linalg.pinv(jnp.zeros((3, 6)))), np.zeros((6, 3)))


def test_gradients():
    rng = np.random.default_rng(1)
    A = jnp.asarray(rng.normal(size=(6, 6)))
    mask = jnp.asarray([1.0, 1.0, 1.0, 0.0, 1.0, 1.0])  # a lost rotor: constant rank 5

    def f(pinv):
        return lambda A: jnp.sum(jnp.sin(pinv(A * mask)))

    g = jax.grad(f(linalg.pinv))(A)
    g_ref = jax.grad(f(jnp.linalg.pinv))(A)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_ref), atol=1e-12 * float(jnp.max(jnp.abs(g_ref))))
    # central differences along a random direction
    d = jnp.asarray(rng.normal(size=(6, 6)))
    h = 1e-6
    fd = (f(linalg.pinv)(A + h * d) - f(linalg.pinv)(A - h * d)) / (2 * h)
    assert abs(float(jnp.sum(g * d)) - float(fd)) <= 1e-6 * max(1.0, abs(float(fd)))
    M = jnp.asarray(rng.normal(size=(3, 6))) * mask

    def s(svals):
        return lambda M: jnp.sum(svals(M * mask) ** 3)

    np.testing.assert_allclose(np.asarray(jax.grad(s(linalg.singular_values))(M)),
                               np.asarray(jax.grad(s(lambda M: jnp.linalg.svd(M, compute_uv=False)))(M)), atol=1e-12)
    # the rule of the pseudo-inverse, not the sweeps: wide, tall and rank-deficient matrices, forward mode and
    # forward over reverse equal jnp.linalg.pinv's rule; the compiled gradient stays near the primal's size
    def smooth(pinv):
        return lambda B: jnp.sum(jnp.sin(pinv(B)))

    for B in (jnp.asarray(rng.normal(size=(3, 6))), jnp.asarray(rng.normal(size=(6, 3))), A * mask):
        dB = jnp.asarray(rng.normal(size=B.shape))
        for ours, ref in ((jax.jvp(linalg.pinv, (B,), (dB,))[1], jax.jvp(jnp.linalg.pinv, (B,), (dB,))[1]),
                          (jax.jvp(jax.grad(smooth(linalg.pinv)), (B,), (dB,))[1],
                           jax.jvp(jax.grad(smooth(jnp.linalg.pinv)), (B,), (dB,))[1])):
            np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=0, atol=1e-10 * float(jnp.max(jnp.abs(ref))))
    size = lambda fn: len(jax.jit(fn).lower(A).compile().as_text().splitlines())  # noqa: E731
    assert size(jax.grad(f(linalg.pinv))) < 2 * size(f(linalg.pinv))


def test_batched_without_custom_call():
    """A vmapped batch compiles to plain XLA: no LAPACK custom call waits on the thread pool."""
    A = jnp.asarray(np.stack(_matrices(2, 8)[0:1] * 4))
    hlo = jax.jit(jax.vmap(linalg.pinv)).lower(A).as_text()
    assert "custom_call" not in hlo
    assert "custom_call" in jax.jit(jax.vmap(jnp.linalg.pinv)).lower(A).as_text()  # the LAPACK route it avoids
    np.testing.assert_allclose(np.asarray(jax.vmap(linalg.pinv)(A)), np.linalg.pinv(np.asarray(A)), rtol=0,
                               atol=1e-12 * float(np.max(np.abs(np.linalg.pinv(np.asarray(A[0]))))))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_spd_solve_against_lapack(dtype):
    """Cholesky and the SPD solve against numpy's LAPACK on the box least-squares allocator's shapes (n = 3..12),
    conditioned like its normal equations (its ridge on a unit-trace-scaled H: 1e-12 / 1e-9 in float64, 1e-7 /
    1e-5 in float32, for n <= 6 / n > 6; H of rank 6 for n > 6)."""
    rng = np.random.default_rng(3)
    eps = np.finfo(dtype).eps
    for _ in range(40):
        n = int(rng.choice([3, 4, 6, 8, 12]))
        ridge = (1e-12 if n <= 6 else 1e-9) if dtype == np.float64 else (1e-7 if n <= 6 else 1e-5)
        A = rng.normal(size=(6, n))
        H = A.T @ A
        H = H / (np.trace(H) / n) + ridge * np.eye(n)
        b = rng.normal(size=n)
        L = np.asarray(jax.jit(linalg.cholesky)(jnp.asarray(H, dtype)))
        np.testing.assert_allclose(L @ L.T, H, atol=50 * eps * np.abs(H).max())
        assert np.allclose(L, np.tril(L)) and np.all(np.diag(L) > 0)
        x = np.asarray(jax.jit(linalg.spd_solve)(jnp.asarray(H, dtype), jnp.asarray(b, dtype)))
        # backward error: the residual against |H| |x| (a solve this ill-conditioned has a large forward error)
        r = H @ x.astype(np.float64) - b
        assert np.max(np.abs(r)) <= 1e3 * eps * (np.abs(H) @ np.abs(x) + np.abs(b)).max()
        if n <= 6 and dtype == np.float64:  # well-conditioned enough to compare x itself
            np.testing.assert_allclose(x, np.linalg.solve(H, b), rtol=1e-6, atol=1e-9)


def test_spd_solve_gradient_and_batch():
    """Reverse mode through the unrolled solve equals ``jnp.linalg.solve``'s rule; a vmapped batch has no custom
    call (the box least-squares allocator runs it in the flight loop)."""
    rng = np.random.default_rng(4)
    A = rng.normal(size=(6, 6))
    H = jnp.asarray(A.T @ A + 0.5 * np.eye(6))
    b = jnp.asarray(rng.normal(size=6))
    w = jnp.asarray(rng.normal(size=6))
    f_ours = lambda H, b: w @ linalg.spd_solve(H, b)  # noqa: E731
    f_ref = lambda H, b: w @ jnp.linalg.solve(H, b)  # noqa: E731
    for g, r in zip(jax.grad(f_ours, (0, 1))(H, b), jax.grad(f_ref, (0, 1))(H, b)):
        # the Cholesky reads only the lower triangle: compare the symmetric parts of dH
        g, r = np.asarray(g), np.asarray(r)
        if g.ndim == 2:
            g, r = np.tril(g) + np.triu(g, 1).T, np.tril(r) + np.triu(r, 1).T
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)
    Hs, bs = jnp.stack([H] * 8), jnp.stack([b] * 8)
    assert "custom_call" not in jax.jit(jax.vmap(linalg.spd_solve)).lower(Hs, bs).as_text()
    assert "custom_call" in jax.jit(jax.vmap(jnp.linalg.solve)).lower(Hs, bs).as_text()


def test_spd_solve_derivatives_follow_the_solve_rule_to_second_order():
    """Forward mode, forward over forward and forward over reverse through ``spd_solve`` (its rule
    ``dx = A^-1 (db - dA x)``, applied again at second order) equal the same through ``jnp.linalg.solve``, and the
    compiled second derivative stays small: the rule reuses one factorisation (XLA merges the repeated one)."""
    rng = np.random.default_rng(6)
    A = rng.normal(size=(6, 6))
    H0, dH = jnp.asarray(A.T @ A + 0.5 * np.eye(6)), jnp.asarray(rng.normal(size=(6, 6)))
    dH = dH + dH.T  # a symmetric direction: the factorisation reads one triangle
    b0, db = jnp.asarray(rng.normal(size=6)), jnp.asarray(rng.normal(size=6))
    w = jnp.asarray(rng.normal(size=6))

    def along(solve):
        return lambda s: w @ solve(H0 + s * dH + s**2 * dH @ dH, b0 + s * db)

    ours, ref = along(linalg.spd_solve), along(jnp.linalg.solve)
    s0, one = jnp.asarray(0.3), jnp.asarray(1.0)
    d1 = lambda f: lambda s: jax.jvp(f, (s,), (one,))[1]  # noqa: E731
    for op in (d1, lambda f: d1(d1(f)), lambda f: d1(jax.grad(f)), lambda f: jax.grad(d1(f))):
        assert float(op(ours)(s0)) == pytest.approx(float(op(ref)(s0)), rel=1e-10)
    # the second derivative against central differences of the first (independent of any rule)
    h = 1e-5
    fd = (float(d1(ours)(s0 + h)) - float(d1(ours)(s0 - h))) / (2 * h)
    assert float(d1(d1(ours))(s0)) == pytest.approx(fd, rel=1e-7)
    # the second derivative compiles to about twice the primal program (through the unrolled factorisation: 7x)
    size = lambda f: len(jax.jit(f).lower(s0).compile().as_text().splitlines())  # noqa: E731
    assert size(d1(d1(ours))) < 3 * size(ours)


def test_spd_solve_with_several_right_hand_sides():
    """``b`` ``(n, k)``: each column as solved alone (to rounding), and against numpy's LAPACK (the tilting allocators' null-space
    projection and the cant lookup table solve with matrix right-hand sides)."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(6, 6))
    H = A @ A.T + 0.1 * np.eye(6)
    B = rng.normal(size=(6, 4))
    X = np.asarray(linalg.spd_solve(jnp.asarray(H), jnp.asarray(B)))
    assert X.shape == (6, 4)
    np.testing.assert_allclose(X, np.linalg.solve(H, B), rtol=1e-10, atol=1e-12)
    for j in range(4):
        np.testing.assert_allclose(X[:, j], np.asarray(linalg.spd_solve(jnp.asarray(H), jnp.asarray(B[:, j]))),
                                   rtol=1e-14, atol=1e-15)


def test_cholesky_solve_reuses_one_factor():
    """One :func:`linalg.cholesky` factor serves several solves: ``L L^T`` is ``H`` and each ``cholesky_solve(L, b)``
    is numpy's LAPACK solve of ``H``, equal to ``spd_solve(H, b)`` to rounding (the same substitutions; ``spd_solve``
    runs them compiled, where XLA may fuse and reorder, this test op by op)."""
    rng = np.random.default_rng(11)
    A = rng.normal(size=(6, 6))
    H = A @ A.T + 0.1 * np.eye(6)
    L = linalg.cholesky(jnp.asarray(H))
    np.testing.assert_allclose(np.asarray(L @ L.T), H, rtol=1e-12, atol=1e-12)
    for b in (rng.normal(size=6), rng.normal(size=(6, 3))):
        x = np.asarray(linalg.cholesky_solve(L, jnp.asarray(b)))
        np.testing.assert_allclose(x, np.linalg.solve(H, b), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(x, np.asarray(linalg.spd_solve(jnp.asarray(H), jnp.asarray(b))), rtol=0,
                                   atol=1e-14 * np.abs(x).max())


def test_tilting_allocators_lower_without_custom_call():
    """The tilting allocators solve their damped normal equations with :func:`linalg.spd_solve`: a vmapped batch of
    extended-variable solutions (its projection, Gauss-Newton steps and clip) and of the speed refinement has no
    LAPACK custom call (the pool deadlock of the module docstring)."""
    from jaxrotor.design import presets
    from jaxrotor.tilt_allocators import ExtendedVariable, speeds_at

    p = presets.get("cs_ai_ting_6r")
    ws = jnp.tile(jnp.asarray([0.5, -0.3, float(p.mass * p.gravity), 0.01, 0.02, 0.0]), (8, 1))
    ev = ExtendedVariable()
    solve = jax.vmap(lambda w: ev.solve(p, w, p.alpha, p.beta).u)
    refine = jax.vmap(lambda w: speeds_at(p, w, p.alpha, p.beta, jnp.full(p.n_rotors, 1e5))[0])
    for fn in (solve, refine):
        assert "custom_call" not in jax.jit(fn).lower(ws).as_text()
