"""map_batch flies a large batch in chunks (lax.map over vmap): the same results as one vmap."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor import batch as jb


def _member(x):
    """A small scan per member, so the chunked program is not trivial."""
    def step(c, _):
        return jnp.sin(c) * x["a"] + jnp.cos(c * x["b"]), c

    c, hist = jax.lax.scan(step, x["a"] * 0.1, None, length=20)
    return {"end": c, "mean": jnp.mean(hist, axis=0)}


def test_chunks_equal_one_vmap_with_padding():
    rng = np.random.default_rng(0)
    batch = {"a": jnp.asarray(rng.normal(size=(7, 3))), "b": jnp.asarray(rng.normal(size=(7,)))}
    whole = jb.map_batch(_member, batch, chunk=None)
    for chunk in (1, 3, 7, 100):
        out = jb.map_batch(_member, batch, chunk=chunk)
        for k in whole:
            assert out[k].shape == whole[k].shape
            np.testing.assert_allclose(np.asarray(out[k]), np.asarray(whole[k]), rtol=0, atol=1e-12)


def test_chunk_size_rule_and_bad_chunk():
    assert jb.chunk_size(10, None) is None
    assert jb.chunk_size(10, 4) == 4 and jb.chunk_size(4, 4) is None  # a batch within one chunk: one vmap
    expect = jb.CPU_CHUNK if jax.default_backend() == "cpu" else None
    assert jb.chunk_size(jb.CPU_CHUNK + 1) == expect and jb.chunk_size(jb.CPU_CHUNK) is None
    with pytest.raises(ValueError, match=r"`chunk` = 0 is invalid"):
        jb.chunk_size(10, 0)
    with pytest.raises(ValueError, match=r"`chunk` = 'big' is invalid"):
        jb.map_batch(_member, {"a": jnp.ones((3, 3)), "b": jnp.ones(3)}, chunk="big")
