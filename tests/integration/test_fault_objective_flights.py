"""The worst_rotor_loss objective (jaxrotor.optimize.fault_terms) on flown rotor losses: its gradient in a tilt
angle against central differences, and the soft maximum and the CVaR of the vmapped per-rotor values against the
rotor losses flown one at a time (its static parts: tests/unit/optimize/test_fault_objective.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.optimize import cvar
from jaxrotor.optimize import objectives as ob

from unit.optimize.test_fault_objective import KW, _at, hover_design


@pytest.fixture(scope="module")
def design():
    """The paper hexarotor hovering (:func:`unit.optimize.test_fault_objective.hover_design`)."""
    return hover_design()


def test_gradient_in_the_cant_matches_central_differences(design):
    """d(soft-max tracking error)/d alpha_0 through six vmapped rotor-loss flights, against central differences
    (exact allocation: a smooth error; a clipped one is smooth only piecewise, docs/optimization.md); the hover
    margin likewise."""
    term = ob.WorstRotorLoss(**KW)
    f = jax.jit(lambda a: term.measure(_at(design, a)))
    a0, h = 0.3, 1e-5
    g = float(jax.jit(jax.grad(lambda a: term.measure(_at(design, a))))(jnp.asarray(a0)))
    fd = (float(f(a0 + h)) - float(f(a0 - h))) / (2 * h)
    assert abs(g) > 1e-4 and g == pytest.approx(fd, rel=1e-6)
    spin = ob.WorstRotorLoss(**KW, spin_weight=0.01)  # with the yaw rate's trend: |a_z| is smooth away from 0
    fs = jax.jit(lambda a: spin.measure(_at(design, a)))
    gs = float(jax.jit(jax.grad(lambda a: spin.measure(_at(design, a))))(jnp.asarray(a0)))
    fds = (float(fs(a0 + h)) - float(fs(a0 - h))) / (2 * h)
    assert abs(gs - g) > 1e-3 and gs == pytest.approx(fds, rel=1e-6)
    margin = ob.WorstRotorLoss(measure="hover_margin")
    fm = jax.jit(lambda a: margin.measure(_at(design, a)))
    gm = float(jax.grad(fm)(jnp.asarray(a0)))
    fdm = (float(fm(a0 + 1e-5)) - float(fm(a0 - 1e-5))) / 2e-5
    assert abs(gm) > 1e-3 and gm == pytest.approx(fdm, rel=1e-6)


def test_aggregates_equal_the_losses_flown_one_at_a_time(design):
    """The vmapped per-rotor values are those of each loss flown alone, computed here by hand from its
    trajectory; the soft maximum and the CVaR are the hand formulas of those six numbers."""
    term = ob.WorstRotorLoss(**KW)
    d = _at(design, 0.3)
    values, bad = jax.jit(term.values)(d)
    values = np.asarray(values)
    assert not np.any(np.asarray(bad)) and values.shape == (6,) and np.all(values > 0)

    @jax.jit
    def one(rotor):  # the loss of one rotor, flown alone
        return jr.fly(d.platform, d.controller, term.fault_flight(d, rotor))

    alone, trends = [], []
    for j in range(6):
        tr = one(jnp.asarray(j))
        late = np.asarray(tr.t) >= 0.3 - 1e-9
        e_p = np.asarray(tr.p_ref - tr.p)[late]
        e_R = np.asarray(jr.metrics.reference_orientation_error(tr))[late, :2]
        alone.append(np.sqrt(np.mean(np.sum(e_p**2, 1))) + 0.1 * np.sqrt(np.mean(np.sum(e_R**2, 1))))
        trends.append(np.polyfit(np.asarray(tr.t)[late], np.asarray(tr.omega)[late, 2], 1)[0])  # yaw spin-up
    alone, trends = np.array(alone), np.array(trends)
    np.testing.assert_allclose(values, alone, rtol=1e-9, atol=0)  # the same flights, batched or alone
    # spin_weight adds w_s |a_z|: the paper hexarotor spins up after every loss (its yaw torque is not cancelled)
    assert np.all(np.abs(trends) > 1.0)
    spun = np.asarray(jax.jit(ob.WorstRotorLoss(**KW, spin_weight=0.01).values)(d)[0])
    np.testing.assert_allclose(spun, alone + 0.01 * np.abs(trends), rtol=1e-9, atol=0)
    v = values  # the aggregates by hand, of the values the term aggregates

    T = 2e-3
    soft = float(ob.WorstRotorLoss(**KW, temperature=T).measure(d))
    assert soft == pytest.approx(T * np.log(np.sum(np.exp(v / T))), rel=1e-12)
    assert v.max() <= soft <= v.max() + T * np.log(6)
    worst2 = float(ob.WorstRotorLoss(**KW, aggregate="cvar", cvar_alpha=1 / 3).measure(d))
    assert worst2 == pytest.approx(np.mean(np.sort(v)[-2:]), rel=1e-12)
    frac = float(ob.WorstRotorLoss(**KW, aggregate="cvar", cvar_alpha=0.25).measure(d))  # 1.5 rotors
    s = np.sort(v)[::-1]
    assert frac == pytest.approx((s[0] + 0.5 * s[1]) / 1.5, rel=1e-12)
    assert frac == pytest.approx(float(cvar(jnp.asarray(v), 0.75)), rel=1e-12)
