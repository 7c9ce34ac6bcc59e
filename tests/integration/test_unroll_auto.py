"""Integrator(unroll="auto"): stages written out for short methods, a scan for long ones; the same flights (an int
k, a scan k stages per iteration: tests/unit/test_integrate.py)."""

import jax

jax.config.update("jax_enable_x64", True)

import diffrax
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.integrate import RK4, UNROLL_MAX_STAGES


@pytest.mark.parametrize("solver, stages", [(RK4(), 4), (diffrax.Tsit5(), 7)])
def test_auto_is_true_or_false_by_stage_count_and_flies_the_same(solver, stages):
    assert (stages <= UNROLL_MAX_STAGES) == (stages == 4)
    plat, ctrl = presets.cs_4r(), jr.UnderactuatedSE3()
    ref = jr.reference.Transfer((0.0, 0.0, 1.0), (0.3, -0.2, 1.1), 0.4)
    p = {}
    for unroll in ("auto", True, False):
        integ = jr.Integrator(solver=solver, adaptive=False, dt=4e-3, unroll=unroll)
        p[unroll] = np.asarray(jr.fly(plat, ctrl, jr.Flight(reference=ref, integrator=integ, save_dt=0.02)).p)
    assert jr.Integrator().unroll == "auto"
    np.testing.assert_allclose(p["auto"], p[True], rtol=0, atol=1e-12)
    np.testing.assert_allclose(p["auto"], p[False], rtol=0, atol=1e-12)


def test_bad_unroll():
    with pytest.raises(ValueError, match=r"`unroll` = 'yes' is invalid"):
        jr.Integrator(unroll="yes")
    for bad in (0, -2, 2.5):
        with pytest.raises(ValueError, match=rf"`unroll` = {bad!r} is invalid.*int k >= 1"):
            jr.Integrator(unroll=bad)

