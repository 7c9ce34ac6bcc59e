"""Objective terms: values against closed forms and the exact analysis, gradients, composition, NaN safety."""

import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import analysis
from jaxrotor import optimize as op
from jaxrotor.optimize import objectives as ob


def _tilted(alpha, beta, **kw):
    p = jr.presets.paper_hexarotor(**kw)
    return eqx.tree_at(lambda q: (q.alpha, q.beta), p, (jnp.asarray(alpha, dtype=float), jnp.asarray(beta, dtype=float)))


def _design(platform, flight=None):
    return op.Design(platform, jr.FullyActuatedSE3(), flight)


class Counted(ob.AbstractDesignTerm):
    """Test term: the hover efficiency, counting how often its measure is traced or called."""

    calls: ClassVar[list] = []
    sense: ClassVar[int] = -1
    name: ClassVar[str] = "counted"

    def measure(self, design, traj=None):
        """``()`` the hover efficiency."""
        self.calls.append(1)
        return analysis.hover_efficiency(design.platform)


# --------------------------------------------------------------------------- composition


def test_terms_compose_into_weighted_sums_with_named_breakdowns():
    obj = ob.Tracking() + 0.5 * ob.Energy() + ob.at_least(ob.HoverEfficiency(), 0.95)
    assert isinstance(obj, ob.Sum) and len(obj.terms) == 3
    flat = (ob.Tracking() + ob.Effort()) + (ob.Energy() + 2.0 * ob.WrenchShortfall())
    assert [t.name for t in flat.terms] == ["tracking_rmse", "effort", "energy", "wrench_shortfall"]
    assert flat.measure_names() == ["tracking_rmse", "effort", "energy", "wrench_shortfall"]
    assert obj.needs_flight
    assert not (ob.HoverEfficiency() + ob.Conditioning()).needs_flight
    assert sum([ob.Effort(), ob.Energy()]).needs_flight
    design = _design(_tilted(0.3, 0.1))
    # design-only parts evaluate without a flight
    static = 2.0 * ob.Conditioning() + ob.HoverEfficiency()
    eta = float(analysis.hover_efficiency(design.platform))
    kappa = float(analysis.condition_number(design.platform))
    assert float(static(design)) == pytest.approx(2 * kappa - eta, rel=1e-12)
    assert set(static.breakdown(design)) == {"conditioning", "hover_efficiency"}
    assert set((ob.Conditioning() + ob.Conditioning(log=True)).breakdown(design)) == {"conditioning", "conditioning_2"}


def test_bounds_become_quadratic_penalties_on_the_measure():
    design = _design(_tilted(0.3, 0.1))
    eta = float(analysis.hover_efficiency(design.platform))
    kappa = float(analysis.condition_number(design.platform))
    assert float(ob.at_least(ob.HoverEfficiency(), eta - 0.01, penalty=100.0)(design)) == 0.0
    assert float(ob.at_least(ob.HoverEfficiency(), eta + 0.01, penalty=100.0)(design)) == pytest.approx(100 * 0.01**2)
    assert float(ob.at_most(ob.Conditioning(), 1.0, penalty=1.0)(design)) == pytest.approx((kappa - 1.0) ** 2)
    barrier = ob.Barrier(ob.HoverEfficiency(), lower=eta - 0.1, mu=0.01)
    assert float(barrier(design)) == pytest.approx(-0.01 * math.log(0.1), rel=1e-10)
    assert math.isnan(float(ob.Barrier(ob.HoverEfficiency(), lower=eta + 0.1)(design)))  # infeasible: NaN


def test_constrained_weighs_the_measure_and_bounds_the_measure_not_the_weighted_cost():
    """cost = weight * sense * m + penalty * relu(lower - m)^2, with m the measure (not weight * sense * m)."""
    design = _design(_tilted(0.3, 0.1))
    eta = float(analysis.hover_efficiency(design.platform))
    term = ob.Constrained(ob.HoverEfficiency(), weight=2.0, lower=eta + 0.01, penalty=100.0)
    assert float(term(design)) == pytest.approx(-2.0 * eta + 100.0 * 0.01**2, rel=1e-12)
    # bound below the measure: only the weighted cost is left (a bound on -2 eta would be active here)
    inside = ob.Constrained(ob.HoverEfficiency(), weight=2.0, lower=eta - 0.01, penalty=100.0)
    assert float(inside(design)) == pytest.approx(-2.0 * eta, rel=1e-12)
    assert set(term.breakdown(design)) == {"hover_efficiency"}
    assert float(term.breakdown(design)["hover_efficiency"]) == pytest.approx(eta, rel=1e-12)
    with pytest.raises(ValueError, match="lower <= upper"):
        ob.Constrained(ob.HoverEfficiency(), lower=1.0, upper=0.5)


def test_constrained_evaluates_its_measure_once():
    """One evaluation of a problem's loss (value, term breakdown, bounds) traces the measure exactly once."""
    design = _design(_tilted(0.3, 0.1))
    eta = float(analysis.hover_efficiency(design.platform))
    term = ob.Constrained(Counted(), weight=1.0, lower=eta + 0.01, upper=eta + 0.5, penalty=10.0)
    Counted.calls.clear()
    cost, parts = term.evaluate(design)
    assert len(Counted.calls) == 1
    assert float(cost) == pytest.approx(-eta + 10.0 * 0.01**2, rel=1e-12)
    assert float(parts["counted"]) == pytest.approx(eta, rel=1e-12)
    params = op.Parameters.select(design, {"platform.alpha": op.Interval(0.0, 1.0)})
    problem = op.DesignProblem(design, params, term + ob.Conditioning())
    Counted.calls.clear()
    jax.make_jaxpr(lambda th: problem.loss(th)[0])(problem.init())
    assert len(Counted.calls) == 1


# --------------------------------------------------------------------------- design terms


def test_hover_efficiency_term_is_cos_alpha_cos_beta_and_maximised():
    a, b = 0.4, 0.2
    term = ob.HoverEfficiency()
    design = _design(_tilted(a, b))
    assert float(term.measure(design)) == pytest.approx(math.cos(a) * math.cos(b), rel=1e-10)
    assert float(term(design)) == pytest.approx(-math.cos(a) * math.cos(b), rel=1e-10)  # cost: larger is better


@pytest.mark.parametrize("tilt", [(5 * math.pi / 36, math.pi / 18), (0.6, 0.3), (0.0, 0.3)])
def test_rotor_loss_margin_matches_the_exact_report(tilt):
    p = _tilted(*tilt)
    exact = min(r.margin for r in analysis.rotor_loss(p))
    assert exact > 0
    assert float(ob.rotor_loss_margin(p, temperature=0.0)) == pytest.approx(exact, abs=2e-5)
    soft = float(ob.rotor_loss_margin(p))
    assert exact - 1e-3 * math.log(6) - 2e-5 <= soft <= exact + 2e-5


def test_rotor_loss_margin_is_not_positive_for_the_flat_hexarotor():
    assert float(ob.rotor_loss_margin(_tilted(0.0, 0.0), temperature=0.0)) <= 1e-5


def test_lateral_capability_term_matches_the_exact_capability():
    p = _tilted(5 * math.pi / 36, math.pi / 18)
    exact = analysis.lateral_force_capability(p, n_directions=12) / float(p.mass * p.gravity)
    smooth = float(ob.LateralCapability(n_directions=12).measure(_design(p)))
    assert exact > 0.05
    assert exact * 0.97 <= smooth <= exact * 1.0001


def test_design_term_gradients_match_finite_differences_for_per_rotor_angles():
    """Per-rotor (independent) cant and dihedral angles, shape (6,), through conditioning,
    hover efficiency and the rotor-loss margin."""
    base = jr.presets.paper_hexarotor()
    rng = np.random.default_rng(0)
    alpha_i = np.asarray(base.alpha_sign * base.alpha) + 0.05 * rng.standard_normal(6)
    beta_i = np.full(6, float(base.beta)) + 0.03 * rng.standard_normal(6)
    p = eqx.tree_at(lambda q: (q.alpha, q.beta), base, (jnp.asarray(alpha_i), jnp.asarray(beta_i)))
    objective = ob.Conditioning() + ob.HoverEfficiency() + 3.0 * ob.RotorLossMargin()

    def f(ab):
        q = eqx.tree_at(lambda q: (q.alpha, q.beta), p, (ab[:6], ab[6:]))
        return objective(_design(q))

    x0 = jnp.concatenate([jnp.asarray(alpha_i), jnp.asarray(beta_i)])
    fg = jax.jit(jax.value_and_grad(f))
    _, g = fg(x0)
    h = 1e-6
    fd = np.array([(fg(x0.at[i].add(h))[0] - fg(x0.at[i].add(-h))[0]) / (2 * h) for i in range(12)])
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-5, atol=1e-7 * np.max(np.abs(fd)))


def test_infeasible_design_is_penalised_not_crashed():
    """Rotor limit too low to hover: the lateral capability is NaN; the loss is the penalty, gradient zero."""
    design = _design(_tilted(0.4, 0.1, rotor_speed_max=300.0))
    params = op.Parameters.select(design, {"platform.alpha": op.Interval(0.0, 1.0)})
    problem = op.DesignProblem(design, params, ob.LateralCapability(), divergence_penalty=7.0)
    (value, info), grad = jax.value_and_grad(lambda th: problem.loss(th), has_aux=True)(problem.init())
    assert bool(info.penalized) and not bool(info.diverged)
    assert float(value) == 7.0
    assert float(grad.platform.alpha) == 0.0


def test_tracking_measures_the_attitude_error_against_the_commanded_attitude_unless_told():
    """``Tracking(orientation=1)``: 0 when the vehicle holds the commanded attitude; ``attitude="reference"``
    measures the 0.2 rad roll against the level reference. A bad choice is refused with the fix."""
    T = 4
    R = jnp.broadcast_to(jr.so3.exp(jnp.array([0.2, 0.0, 0.0])), (T, 3, 3))
    z3, z4 = jnp.zeros((T, 3)), jnp.zeros((T, 4))
    traj = jr.Trajectory(t=jnp.linspace(0.0, 1.0, T), p=z3, v=z3, R=R, omega=z3, accel=z3, angular_accel=z3, u=z4,
                         u_cmd=z4, rotor_speed=z4, alpha=jnp.zeros(T), beta=jnp.zeros(T), wrench_requested=jnp.zeros((T, 6)),
                         wrench_achieved=jnp.zeros((T, 6)), saturated=jnp.zeros((T, 4), bool), p_ref=z3, v_ref=z3,
                         a_ref=z3, R_ref=jnp.broadcast_to(jnp.eye(3), (T, 3, 3)), controller_state=None,
                         diverged=jnp.asarray(False), solver_ok=jnp.asarray(True), num_steps=jnp.asarray(0), R_cmd=R)
    design = _design(jr.presets.cs_4r())
    assert float(ob.Tracking(position=1.0, orientation=1.0).measure(design, traj)) == pytest.approx(0.0, abs=1e-15)
    ref = ob.Tracking(position=1.0, orientation=1.0, attitude="reference")
    assert float(ref.measure(design, traj)) == pytest.approx(math.sin(0.2), rel=1e-14)
    with pytest.raises(ValueError, match=r"`attitude` = 'level' is invalid. Fix: use 'commanded'"):
        ob.Tracking(attitude="level")


def test_polytope_objectives_refuse_an_unbounded_rotor_speed_at_load():
    """A zero-moment force set measure needs bounded speeds: an infinite ``rotor_speed_max`` is refused when the
    config loads (naming the key, the value and the fix), not measured as an infinite volume."""
    from pathlib import Path

    from jaxrotor.io import optimize_config as oc
    from jaxrotor.io.toml import ConfigError, read_toml

    configs = Path(__file__).resolve().parents[3] / "configs"
    data = read_toml(configs / "optimize_polytope.toml")
    assert "volume_above_hover" in data["objective"]
    data["platform"]["rotor_speed_max"] = math.inf
    with pytest.raises(ConfigError, match=r"objective.volume_above_hover.*`rotor_speed_max` = \[inf.*Fix: give every"):
        oc.from_dict(data, "bad.toml", configs, kind="optimize")
    unbounded = jr.presets.paper_hexarotor()
    unbounded = eqx.tree_at(lambda p: p.rotor_speed_max, unbounded, jnp.full(6, jnp.inf))
    for term in (ob.ZeroMomentVolume(), ob.HoverSectionArea(), ob.VolumeAboveHover()):
        with pytest.raises(ValueError, match="rotor_speed_max"):
            term.check(_design(unbounded))
        term.check(_design(jr.presets.paper_hexarotor()))  # bounded: accepted
