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
