"""Batching with vmap and sharding the batch axis over (simulated) devices."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import batch, presets
from jaxrotor.control import FullyActuatedSE3
from jaxrotor.reference import paper_maneuver


def _designs(k):
    return [jr.star_platform(6, 0.3 + 0.02 * i, mass=3.0 + 0.1 * i, c_f=3.8e-5, c_tau=1.2e-6, alpha=0.3 + 0.05 * i,
                             beta=0.05 * i, inertia=[0.15, 0.15, 0.25]) for i in range(k)]


def test_stack_unstack_roundtrip_and_errors():
    ps = _designs(3)
    b = batch.stack(ps)
    assert batch.batch_size(b) == 3 and b.alpha.shape == (3,)
    np.testing.assert_array_equal(batch.unstack(b, 1).arm_length, ps[1].arm_length)
    with pytest.raises(ValueError, match="structure"):
        batch.stack([presets.paper_hexarotor(), presets.cs_4r()])
    padded, n = batch.pad_to(b, 4)
    assert n == 3 and batch.batch_size(padded) == 4


def test_map_batch_equals_loop():
    ps = _designs(3)
    integ = jr.Integrator(adaptive=False, dt=0.01)

    def fly(p):
        return jr.simulate(p, FullyActuatedSE3(), paper_maneuver(), t1=9.0, integrator=integ, save_dt=0.1).p

    out = batch.map_batch(fly, batch.stack(ps))
    for i, p in enumerate(ps):
        np.testing.assert_allclose(out[i], fly(p), atol=1e-12)


def test_sharded_batch_on_four_cpu_devices():
    """The same sweep sharded over 4 forced host devices gives the unsharded result."""
    code = textwrap.dedent(
        """
        import jax, numpy as np
        jax.config.update("jax_enable_x64", True)
        assert len(jax.devices()) == 4, jax.devices()
        import jaxrotor as jr
        from jaxrotor import batch
        from jaxrotor.control import FullyActuatedSE3
        from jaxrotor.reference import paper_maneuver
        ps = [jr.star_platform(6, 0.3 + 0.02 * i, mass=3.0 + 0.1 * i, c_f=3.8e-5, c_tau=1.2e-6, alpha=0.3 + 0.05 * i,
                               beta=0.05 * i, inertia=[0.15, 0.15, 0.25]) for i in range(6)]
        integ = jr.Integrator(adaptive=False, dt=0.01)
        fly = lambda p: jr.simulate(p, FullyActuatedSE3(), paper_maneuver(), t1=9.0, integrator=integ, save_dt=0.1).p
        b = batch.stack(ps)
        mesh = batch.batch_mesh()
        sharded = batch.map_batch(fly, b, mesh)
        plain = batch.map_batch(fly, b)
        assert sharded.shape == plain.shape == (6, 91, 3)
        np.testing.assert_allclose(np.asarray(sharded), np.asarray(plain), atol=1e-12)
        print("ok", len(jax.devices()))
        """
    )
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip() == "ok 4"
