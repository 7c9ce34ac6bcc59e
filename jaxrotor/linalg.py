"""Singular values, pseudo-inverse and rank of the small matrices of the flight tick, without LAPACK.

The flight computer decomposes its allocation matrix ``G`` ``(6, n)`` (and blocks of it) every tick once
faults are known. ``jnp.linalg.svd`` on CPU is a LAPACK call (``gesdd``) that, for a large enough batch (a
``vmap`` over flights), spreads its matrices over XLA's intra-op thread pool and waits for them there; two such
calls running at once inside one while loop can take every thread of the pool (two on a two-core machine)
and wait for each other for ever. These functions use a one-sided Jacobi iteration (Hestenes) written in
``jax.numpy``: elementwise work on the batch, no custom call, so nothing waits on the pool, and ``vmap``
vectorises it over flights.

One-sided Jacobi: ``B`` ``(p, k)`` (``p >= k``; the matrix or its transpose) is rotated from the right,
``B <- B J``, ``V <- V J``, by plane rotations, each making a column pair ``(i, j)`` orthogonal; the pairs of a
sweep go in round-robin order, ``k / 2`` disjoint pairs rotated at once per round (Brent and Luk's parallel
ordering), so the compiled loop body is one round: with ``a = |b_i|^2``, ``b = |b_j|^2``, ``g = b_i . b_j``,
``zeta = (b - a) / (2 g)``, ``t = sign(zeta) / (|zeta| + sqrt(1 + zeta^2))``, ``c = 1 / sqrt(1 + t^2)``,
``s = c t``. After a few sweeps over all pairs the columns are orthogonal: ``B V = U S`` with
``sigma_i = |b_i|``, so ``B = U S V^T``. Convergence is quadratic; :data:`SWEEPS` sweeps reach rounding on
the ``6 x 6`` matrices of the tick. :func:`singular_values` is differentiated through the fixed sweeps;
:func:`pinv` and :func:`spd_solve` by their own rules (the derivative of a pseudo-inverse of locally constant
rank, of a linear solve), which compile to a few matrix products instead of the sweeps' or the factorisation's
reverse pass.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

__all__ = ["SWEEPS", "singular_values", "pinv", "rank", "cholesky", "cholesky_solve", "spd_solve"]

#: Jacobi sweeps over all column pairs; each sweep roughly squares the off-diagonal residual.
SWEEPS = 8


def _round_robin(k: int) -> tuple[int, list[int]]:
    """``(h, perm)`` of the round-robin ("parallel") ordering of :func:`_jacobi` on ``k`` columns (``k`` even):
    each round pairs position ``i`` with position ``k - 1 - i`` (``i < h = k / 2``: disjoint pairs), then the
    columns move by ``perm`` (position ``0`` stays, the others turn by one), so ``k - 1`` rounds pair every two
    columns once (a sweep) and bring the columns back to their order."""
    return k // 2, [0, k - 1] + list(range(1, k - 1))


def _jacobi(A: Float[Array, "m n"], sweeps: int):
    """``(B, V, transposed)``: ``B = X V`` with orthogonal columns, ``X = A`` (``m >= n``) or ``A^T``.

    The column pairs of a sweep in round-robin order (:func:`_round_robin`): the ``k / 2`` disjoint pairs of one
    round are rotated at once, elementwise, and the loop body is one round (``sweeps (k - 1)`` rounds in a
    ``fori_loop``), so the compiled program holds one round instead of a sweep's ``k (k - 1) / 2`` rotations
    (an odd ``k`` gets a zero column, which no rotation touches, removed at the end)."""
    A = jnp.asarray(A)
    transposed = A.shape[0] < A.shape[1]
    X = A.T if transposed else A
    k0 = X.shape[1]
    k = k0 + k0 % 2
    if k > k0:  # static: a zero column to pair with
        X = jnp.concatenate([X, jnp.zeros((X.shape[0], 1), X.dtype)], axis=1)
    h, perm = _round_robin(k)
    perm = jnp.asarray(perm)
    right = jnp.arange(k - 1, h - 1, -1)  # partner of position i < h
    tiny = jnp.finfo(X.dtype).tiny
    eps = jnp.finfo(X.dtype).eps

    def rotate(M, c, s):
        Mi, Mj = M[:, :h], M[:, right]
        return jnp.concatenate([c * Mi - s * Mj, (s * Mi + c * Mj)[:, ::-1]], axis=1)[:, perm]

    def one_round(_, carry):
        B, V = carry
        bi, bj = B[:, :h], B[:, right]
        a, b, g = jnp.sum(bi * bi, 0), jnp.sum(bj * bj, 0), jnp.sum(bi * bj, 0)
        turn = jnp.abs(g) > eps * jnp.sqrt(a * b) + tiny
        g_safe = jnp.where(turn, g, 1.0)
        zeta = (b - a) / (2.0 * g_safe)
        t = jnp.where(zeta >= 0, 1.0, -1.0) / (jnp.abs(zeta) + jnp.hypot(1.0, zeta))
        c = jnp.where(turn, 1.0 / jnp.sqrt(1.0 + t * t), 1.0)
        s = jnp.where(turn, c * t, 0.0)
        return rotate(B, c, s), rotate(V, c, s)

    B, V = jax.lax.fori_loop(0, sweeps * (k - 1), one_round, (X, jnp.eye(k, dtype=X.dtype)))
    if k > k0:  # static: the zero column and its row of V
        B, V = B[:, :k0], V[:k0, :k0]
    return B, V, transposed


def _sigma(B):
    # |b_i| with a zero-safe gradient (a column rotated to zero)
    sq = jnp.sum(B * B, axis=0)
    pos = sq > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, sq, 1.0)), 0.0)


@partial(jax.jit, static_argnames=("sweeps",))
def singular_values(A: Float[Array, "m n"], sweeps: int = SWEEPS) -> Float[Array, " k"]:
    """``(min(m, n),)`` singular values of ``A`` ``(m, n)``, largest first (one-sided Jacobi, module docstring).

    Agrees with ``jnp.linalg.svd(A, compute_uv=False)`` to a few ``eps * sigma_max``.
    """
    B, _, _ = _jacobi(A, sweeps)
    return -jnp.sort(-_sigma(B))


@partial(jax.jit, static_argnames=("rtol", "sweeps"))
def pinv(A: Float[Array, "m n"], rtol=None, sweeps: int = SWEEPS) -> Float[Array, "n m"]:
    """``(n, m)`` Moore–Penrose pseudo-inverse of ``A`` ``(m, n)``: ``A^+ = V S^+ U^T``.

    Singular values at or below ``rtol * sigma_max`` count as zero (default ``rtol = 10 max(m, n) eps``, as
    ``jnp.linalg.pinv``; ``rtol`` a Python float or ``None``, static). With ``X = A`` (or ``A^T`` when ``A`` is wide) and
    ``B = X V = U S``: ``X^+ = V diag(1 / sigma_i^2) B^T`` over the kept ``sigma_i``.

    Derivatives by the rule of the pseudo-inverse where its rank is locally constant (Golub and Pereyra, 1973; the rule
    ``jnp.linalg.pinv`` uses), not through the Jacobi sweeps:
    ``dA^+ = -A^+ dA A^+ + A^+ A^+T dA^T (I - A A^+) + (I - A^+ A) dA^T A^+T A^+``. Reverse mode through a flight
    that rebuilds ``G^+`` every tick (a known fault) then transposes a few matrix products per tick instead of 8
    sweeps of plane rotations.
    """
    return _pinv(A, rtol, sweeps)


@partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _pinv(A, rtol, sweeps):
    """:func:`pinv` with its derivative rule (``_pinv_jvp``)."""
    B, V, transposed = _jacobi(A, sweeps)
    sigma = _sigma(B)
    if rtol is None:
        rtol = 10.0 * max(A.shape) * jnp.finfo(B.dtype).eps
    keep = sigma > rtol * jnp.max(sigma)
    w = jnp.where(keep, 1.0 / jnp.where(keep, sigma, 1.0) ** 2, 0.0)
    X_pinv = (V * w) @ B.T  # (k, p): the pseudo-inverse of X
    return X_pinv.T if transposed else X_pinv


@_pinv.defjvp
def _pinv_jvp(rtol, sweeps, primals, tangents):
    """``(A^+, dA^+)`` by the rule of :func:`pinv`."""
    (A,), (dA,) = primals, tangents
    P = _pinv(A, rtol, sweeps)
    m, n = A.shape
    dP = -P @ dA @ P
    dP = dP + P @ P.T @ dA.T @ (jnp.eye(m, dtype=A.dtype) - A @ P)
    dP = dP + (jnp.eye(n, dtype=A.dtype) - P @ A) @ dA.T @ P.T @ P
    return P, dP


@partial(jax.jit, static_argnames=("sweeps",))
def rank(A: Float[Array, "m n"], rtol: float, sweeps: int = SWEEPS) -> Array:
    """``()`` int: the number of singular values of ``A`` above ``rtol * sigma_max`` (``0`` for ``A = 0``)."""
    sv = singular_values(A, sweeps)
    return jnp.sum(sv > rtol * jnp.maximum(sv[0], jnp.finfo(sv.dtype).tiny))


def cholesky(A: Float[Array, "n n"]) -> Float[Array, "n n"]:
    """Lower-triangular ``L`` with ``A = L L^T`` for a symmetric positive definite ``A`` ``(n, n)`` (small ``n``,
    static), column by column (Cholesky–Banachiewicz):

        ``L_jj = sqrt(A_jj - sum_{k<j} L_jk^2)``,  ``L_ij = (A_ij - sum_{k<j} L_ik L_jk) / L_jj``  (``i > j``)

    in ``jax.numpy``, unrolled over the columns: no LAPACK custom call (``potrf``/``getrf`` spread a large batch over
    XLA's intra-op pool and can deadlock there, module docstring). A pivot below ``eps |A_jj|`` (``A`` singular or
    not positive definite to rounding) is raised to it, so the result stays finite."""
    A = jnp.asarray(A)
    n = A.shape[-1]
    eps, tiny = jnp.finfo(A.dtype).eps, jnp.finfo(A.dtype).tiny
    L = jnp.zeros_like(A)
    for j in range(n):
        floor = jnp.maximum(eps * jnp.abs(A[j, j]), tiny)
        d = jnp.sqrt(jnp.maximum(A[j, j] - jnp.sum(L[j, :j] ** 2), floor))
        L = L.at[j, j].set(d)
        if j + 1 < n:
            L = L.at[j + 1:, j].set((A[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / d)
    return L


@jax.custom_jvp
def spd_solve(A: Float[Array, "n n"], b: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    """``x = A^{-1} b`` for a symmetric positive definite ``A`` ``(n, n)`` and ``b`` ``(n,)`` or ``(n, k)`` (``k``
    right-hand sides): ``cholesky_solve(cholesky(A), b)`` (:func:`cholesky`, :func:`cholesky_solve`; no LAPACK;
    ``jit`` and ``vmap`` through the elementwise steps). For the normal equations solved inside the
    flight loop: the box least-squares allocator's (:class:`jaxrotor.allocators.BoxLS`) and the tilting allocators'
    damped ones (:mod:`jaxrotor.tilt_allocators`). Factor once with :func:`cholesky` and call
    :func:`cholesky_solve` where one matrix meets several right-hand sides in turn.

    Derivatives by the rule of the solve, not through the factorisation: ``dx = A^{-1} (db - dA x)``, itself a solve
    with the same ``A`` (XLA computes the factor once), so reverse mode transposes two triangular substitutions and
    higher orders (the Newton steps of :class:`jaxrotor.tilt_allocators.CantSelection` take a second derivative)
    apply the rule again instead of differentiating the unrolled factorisation. The factorisation reads the lower
    triangle, so the function is that of a symmetric ``A``; the rule agrees with it for symmetric ``dA``, the only
    kind a caller's ``A`` (built as ``M M^T + lam I`` or ``G^T G + ...``) produces."""
    return _spd_solve_primal(A, b)


@jax.jit
def _spd_solve_primal(A, b):
    """``cholesky_solve(cholesky(A), b)`` as one ``jit``: a flight computer solves systems of the same few shapes
    tens of times per evaluation (the box least squares' active set, the tilting allocators' damped solves, each
    once more for a derivative), and the unrolled factorisation is then traced once per shape and dtype instead of
    at every call (XLA inlines the calls: the compiled program and its results are the same)."""
    return cholesky_solve(cholesky(A), b)


@spd_solve.defjvp
def _spd_solve_jvp(primals, tangents):
    """``(x, dx)``: ``x = A^{-1} b``, ``dx = A^{-1} (db - dA x)``."""
    A, b = primals
    dA, db = tangents
    x = spd_solve(A, b)
    return x, spd_solve(A, db - dA @ x)


def cholesky_solve(L: Float[Array, "n n"], b: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    """``x = (L L^T)^{-1} b`` for a lower-triangular Cholesky factor ``L`` ``(n, n)`` (:func:`cholesky`) and ``b``
    ``(n,)`` or ``(n, k)``: the forward substitution ``L y = b`` and the back substitution ``L^T x = y``, row by
    row, unrolled in ``jax.numpy`` (no LAPACK; ``jit``, ``vmap``, reverse mode)."""
    L = jnp.asarray(L)
    b = jnp.asarray(b, L.dtype)
    n = L.shape[0]
    y = jnp.zeros_like(b)
    for i in range(n):
        y = y.at[i].set((b[i] - L[i, :i] @ y[:i]) / L[i, i])
    x = jnp.zeros_like(b)
    for i in reversed(range(n)):
        x = x.at[i].set((y[i] - L[i + 1:, i] @ x[i + 1:]) / L[i, i])
    return x
