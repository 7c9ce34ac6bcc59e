"""Flight objective terms on whole flights: closed forms in hover, equal to ``jaxrotor.metrics``, finite time
means on a diverged flight.
"""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import optimize as op
from jaxrotor.flight import DivergenceLimits, Flight
from jaxrotor.optimize import objectives as ob
from jaxrotor.reference import Hover


def _tilted(alpha, beta, **kw):
    p = jr.presets.paper_hexarotor(**kw)
    return eqx.tree_at(lambda q: (q.alpha, q.beta), p, (jnp.asarray(alpha, dtype=float), jnp.asarray(beta, dtype=float)))


def _design(platform, flight=None):
    return op.Design(platform, jr.FullyActuatedSE3(), flight)


# --------------------------------------------------------------------------- flight terms


def test_flight_terms_in_hover_have_their_closed_forms():
    """Level hover with exact allocation and ideal motors: effort = 1/eta, energy = eta^-1.5,
    no tracking error, no wrench shortfall; the saturation margin is the hover headroom."""
    tilts = [(0.0, 0.0), (0.5, 0.2)]
    design = _design(jr.presets.paper_hexarotor(), Flight(Hover((0.0, 0.0, 1.0), 0.5), allocator=jr.PseudoInverse()))
    params = op.Parameters.select(design, {"platform.alpha": None, "platform.beta": None})
    objective = (ob.Tracking(position=1.0, orientation=1.0) + ob.Effort() + ob.Energy() + ob.WrenchShortfall()
                 + ob.SaturationMargin(0.5))
    problem = op.DesignProblem(design, params, objective)
    theta0 = problem.init()
    thetas = jax.vmap(lambda a, b: eqx.tree_at(lambda t: (t.platform.alpha, t.platform.beta), theta0, (a, b)))(
        jnp.array([t[0] for t in tilts]), jnp.array([t[1] for t in tilts]))
    _, info = eqx.filter_jit(eqx.filter_vmap(lambda th, p: p.loss(th), in_axes=(0, None)))(thetas, problem)
    terms = {k: np.asarray(v) for k, v in info.terms.items()}
    eta = np.array([math.cos(a) * math.cos(b) for a, b in tilts])
    np.testing.assert_allclose(terms["effort"], 1 / eta, rtol=1e-9)
    np.testing.assert_allclose(terms["energy"], eta**-1.5, rtol=1e-9)
    assert np.all(terms["tracking_rmse"] < 1e-9)
    assert np.all(terms["wrench_shortfall"] < 1e-20)
    # hover speeds omega_h = sqrt(m g / (6 c_f eta)); headroom min(omega_h, 700 - omega_h) / 700
    p = design.platform
    w_h = np.sqrt(float(p.mass * p.gravity) / (6 * float(p.c_f[0]) * eta))
    margin = np.minimum(w_h, 700.0 - w_h) / 700.0
    expected = 6 * np.maximum(0.5 - margin, 0.0) ** 2 / 0.5**2
    np.testing.assert_allclose(terms["saturation"], expected, rtol=1e-8)


def test_flight_terms_are_the_metrics_of_jaxrotor_metrics():
    """Tracking, Effort and Energy measure exactly what flight_metrics reports (one formula each)."""
    # hover, then a figure-eight that starts with a velocity jump: a real tracking transient
    ref = jr.reference.Sequence((Hover((0.0, 0.0, 1.0), 0.3), jr.reference.FigureEight(0.7, period=8.0)))
    flight = Flight(ref, integrator=jr.Integrator(adaptive=False, dt=0.01))
    design = _design(_tilted(0.3, 0.1), flight)
    traj = jr.fly(design.platform, design.controller, flight)
    m = jr.metrics.flight_metrics(traj, design.platform)
    assert float(m.rmse_position) > 1e-4
    assert float(ob.Tracking("rmse").measure(design, traj)) == pytest.approx(float(m.rmse_position), rel=1e-12)
    assert float(ob.Tracking("mae").measure(design, traj)) == pytest.approx(float(m.mae_position), rel=1e-12)
    assert float(ob.Tracking("rmse", 0.0, 1.0).measure(design, traj)) == pytest.approx(float(m.rmse_orientation),
                                                                                       rel=1e-12)
    assert float(ob.Effort().measure(design, traj)) == pytest.approx(float(m.effort_ratio), rel=1e-12)
    assert float(ob.Energy().measure(design, traj)) == pytest.approx(float(m.power_ratio), rel=1e-12)
    assert float(ob.Energy(normalize=False).measure(design, traj)) == pytest.approx(float(m.mean_power), rel=1e-12)


@pytest.mark.parametrize("term", [ob.Effort(), ob.Energy()])
def test_time_means_on_a_diverged_flight_stay_finite(term):
    """A flight flagged diverged (here: it leaves a 0.5 m ball) is replaced by a finite stand-in that
    keeps the time grid, so time means are 0 / duration, not 0 / 0: the raw objective is finite and
    the gradient of the guarded value with respect to the design (mass enters the normalisation) is 0."""
    flight = Flight(Hover((0.0, 0.0, 1.0), 0.2), integrator=jr.Integrator(adaptive=False, dt=0.01),
                    limits=DivergenceLimits(max_position=0.5))
    design = _design(jr.presets.paper_hexarotor(), flight)
    problem = op.DesignProblem(design, op.Parameters.select(design, {"platform.mass": None}), term,
                               divergence_penalty=5.0)
    value, info = problem.evaluate(design)
    assert bool(info.diverged) and bool(info.penalized) and float(value) == 5.0
    assert float(info.raw) == 0.0  # the stand-in's rotors are at rest
    g = jax.grad(lambda d: problem.evaluate(d)[0])(design)
    assert float(g.platform.mass) == 0.0
    assert np.all(np.isfinite(np.asarray(g.platform.c_f))) and np.all(np.isfinite(np.asarray(g.platform.c_tau)))
