"""jaxrotor.small: the written-out products equal numpy's, broadcast as matmul does, refuse mismatched axes, and
leave no dot or reduce in the compiled program (what lets XLA fuse a batched step)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor import small


@pytest.fixture
def rng():
    return np.random.default_rng(3)


def test_products_equal_numpy(rng):
    A, B = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    x, y = rng.normal(size=4), rng.normal(size=4)
    C = rng.normal(size=(4, 3))
    np.testing.assert_allclose(small.mv(A, x), A @ x, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(small.mm(A, B), A @ B, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(small.dot(x, y), x @ y, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(small.mtv(C, x), C.T @ x, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(small.mtm(C, B), C.T @ B, rtol=1e-13, atol=1e-14)


def test_leading_axes_broadcast(rng):
    A, x = rng.normal(size=(7, 3, 3)), rng.normal(size=(7, 3))
    np.testing.assert_allclose(small.mv(A, x), np.einsum("bij,bj->bi", A, x), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(small.mtm(A, A), np.swapaxes(A, -1, -2) @ A, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(small.mv(A[0], x), x @ A[0].T, rtol=1e-13, atol=1e-14)  # one matrix, many vectors


@pytest.mark.parametrize("fn,a,b", [(small.mv, (3, 4), (5,)), (small.mm, (3, 4), (3, 4)), (small.dot, (3,), (4,)),
                                    (small.mtv, (3, 4), (4,)), (small.mtm, (3, 4), (4, 4))])
def test_mismatched_axes_refused(fn, a, b):
    with pytest.raises(ValueError, match="contracted axes differ"):
        fn(jnp.ones(a), jnp.ones(b))


def test_no_dot_under_vmap(rng):
    R, v = jnp.asarray(rng.normal(size=(64, 3, 3))), jnp.asarray(rng.normal(size=(64, 3)))
    hlo = jax.jit(jax.vmap(lambda R, v: small.mv(small.mtm(R, R), v))).lower(R, v).compile().as_text()
    assert " dot(" not in hlo and " reduce(" not in hlo
    np.testing.assert_allclose(jax.vmap(lambda R, v: small.mv(small.mtm(R, R), v))(R, v),
                               np.einsum("bki,bkj,bj->bi", R, R, v), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["mv", "mm", "dot", "mtv", "mtm"])
def test_derivatives_equal_matmuls(name, rng):
    """Forward and reverse mode (first and second order) of each product equal those of its matmul form."""
    shapes = {"mv": ((3, 4), (4,)), "mm": ((3, 4), (4, 2)), "dot": ((4,), (4,)), "mtv": ((4, 3), (4,)),
              "mtm": ((4, 3), (4, 2))}[name]
    ref = {"mv": lambda A, x: A @ x, "mm": lambda A, B: A @ B, "dot": lambda a, b: a @ b,
           "mtv": lambda A, x: A.T @ x, "mtm": lambda A, B: A.T @ B}[name]
    fn = getattr(small, name)
    a, b = (jnp.asarray(rng.normal(size=s)) for s in shapes)
    scalar = lambda f: lambda a, b: jnp.sum(jnp.sin(f(a, b)))  # noqa: E731
    for argnums in (0, 1, (0, 1)):
        got, want = jax.grad(scalar(fn), argnums)(a, b), jax.grad(scalar(ref), argnums)(a, b)
        jax.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13), got, want)
        got, want = jax.jacfwd(fn, argnums)(a, b), jax.jacfwd(ref, argnums)(a, b)
        jax.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13), got, want)
    np.testing.assert_allclose(jax.hessian(scalar(fn))(a, b), jax.hessian(scalar(ref))(a, b), rtol=1e-11, atol=1e-12)
    const = lambda x: jnp.sum(fn(a, x) ** 2)  # noqa: E731  (a constant first operand: a symbolic-zero tangent)
    np.testing.assert_allclose(jax.grad(const)(b), jax.grad(lambda x: jnp.sum(ref(a, x) ** 2))(b), rtol=1e-12)
