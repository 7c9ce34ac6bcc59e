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


_CORES_SCRIPT = r"""
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp, numpy as np
from jaxrotor import batch as jb

assert len(jax.devices()) == 2, jax.devices()

def member(x, shared):
    def step(c, _):
        return jnp.sin(c) * x["a"] + jnp.cos(c * x["b"]) + shared, c
    c, hist = jax.lax.scan(step, x["a"] * 0.1, None, length=20)
    return {"end": c, "mean": jnp.mean(hist, axis=0)}

rng = np.random.default_rng(1)
batch = {"a": jnp.asarray(rng.normal(size=(11, 3))), "b": jnp.asarray(rng.normal(size=(11,)))}
shared = jnp.asarray(0.25)
lone = jax.vmap(lambda m: member(m, shared))(batch)   # one vmap on one device: the reference
for chunk in (None, 2, "auto"):
    out = jb.map_batch(member, batch, shared=shared, chunk=chunk)
    for k in lone:
        assert out[k].shape == lone[k].shape, (k, out[k].shape)
        np.testing.assert_allclose(np.asarray(out[k]), np.asarray(lone[k]), rtol=0, atol=1e-12)
# the program splits the batch over both devices (shard_map): one computation per device
text = jax.jit(lambda b: jb.map_batch(member, b, shared=shared)).lower(batch).as_text()
assert "num_partitions = 2" in text or "mhlo.num_partitions = 2" in text, text[:400]
print("ok")
"""


def test_map_batch_over_two_cpu_devices():
    """With one CPU device per core (here two, by XLA_FLAGS in a fresh process) map_batch splits the batch over
    them (shard_map; 11 members padded to 12): each member's result equals one vmap's on one device to 1e-12, for
    one vmap per device, chunks of 2 and the default chunks, with a shared argument."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    res = subprocess.run([sys.executable, "-c", _CORES_SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stdout + res.stderr


def test_cpu_devices_flag():
    """The jaxrotor command's flag: one CPU device per core, appended to XLA_FLAGS; left alone when the count is
    set already, JAXROTOR_CPU_DEVICES=1, or JAX's backend has started (as in this process)."""
    import os

    from jaxrotor.cli._setup import cpu_devices_flag

    jnp.zeros(1).block_until_ready()  # this process's backend has started
    env = {"XLA_FLAGS": "--xla_cpu_foo=1"}
    assert cpu_devices_flag(env) is False and env == {"XLA_FLAGS": "--xla_cpu_foo=1"}
    import subprocess
    import sys

    code = ("import os; from jaxrotor.cli._setup import cpu_devices_flag; e = {'XLA_FLAGS': '--a=1'}; "
            "print(cpu_devices_flag(e), e['XLA_FLAGS']); e2 = {'XLA_FLAGS': "
            "'--xla_force_host_platform_device_count=3'}; print(cpu_devices_flag(e2)); "
            "print(cpu_devices_flag({'JAXROTOR_CPU_DEVICES': '1'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.split("\n")
    cores = os.cpu_count() or 1
    if cores >= 2:
        assert out[0] == f"True --a=1 --xla_force_host_platform_device_count={cores}", out
    assert out[1] == "False" and out[2] == "False", out
