"""The worst_rotor_loss objective (jaxrotor.optimize.fault_terms): its gradient in a tilt angle against central
differences, the soft maximum and the CVaR of the vmapped per-rotor values against the rotor losses flown one at
a time, the hover margin against jaxrotor.analysis.rotor_loss_margin, the TOML table and its errors."""

from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.io.config import ConfigError, loads
from jaxrotor.io.optimize_config import from_dict
from jaxrotor.io.toml import read_toml
from jaxrotor.optimize import Design, cvar
from jaxrotor.optimize import objectives as ob

from .._paper_hover import paper_hover_toml

ROOT = Path(__file__).resolve().parents[3]
HOVER = paper_hover_toml(0.005)
KW = dict(time=0.3, duration=0.5, detection_delay=0.05, attitude_weight=0.1)


@pytest.fixture(scope="module")
def design():
    """The paper hexarotor with Table III gains and exact allocation (unbounded pseudo-inverse, ideal motors) hovering."""
    cfg = loads(HOVER, "f.toml")
    return Design(cfg.platform, cfg.controller, cfg.flight)


def _at(design, alpha0):
    return eqx.tree_at(lambda d: d.platform.alpha, design, jnp.asarray(alpha0))


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


def test_hover_margin_is_the_per_rotor_rotor_loss_margin(design):
    """measure = "hover_margin": the per-rotor values behind rotor_loss_margin; larger is better (sense -1),
    so the soft maximum of the badness is rotor_loss_margin's soft minimum, and the cost is its negative."""
    p = design.platform
    term = ob.WorstRotorLoss(measure="hover_margin", temperature=1e-3)
    r = np.asarray(term.hover_margins(p))
    assert term.sense == -1 and not term.needs_flight
    assert r.min() == pytest.approx(float(jr.analysis.rotor_loss_margin(p, temperature=0.0)), rel=1e-9)
    m = float(term.measure(design))
    assert m == pytest.approx(float(jr.analysis.rotor_loss_margin(p, temperature=1e-3)), rel=1e-9)
    assert float(term(design)) == pytest.approx(-m)
    worst = float(ob.WorstRotorLoss(measure="hover_margin", aggregate="cvar", cvar_alpha=0.5).measure(design))
    assert worst == pytest.approx(np.mean(np.sort(r)[:3]), rel=1e-9)  # the three smallest margins


CONFIG = HOVER + """
[parameters."platform.alpha"]
transform = "interval"
lower = 0.15
upper = 0.8

[objective.worst_rotor_loss]
measure = "tracking"
aggregate = "cvar"
cvar_alpha = 0.5
time = 1.0
detection_delay = 0.05
attitude_weight = 0.1
spin_weight = 0.01
"""


def _load(text):
    import tomllib

    return from_dict(tomllib.loads(text), "f.toml")


def test_the_table_loads():
    conf = _load(CONFIG)
    term = conf.problem.objective.term
    assert isinstance(term, ob.WorstRotorLoss) and term.aggregate == "cvar" and term.cvar_alpha == 0.5
    assert term.attitude_weight == 0.1 and term.spin_weight == 0.01 and term.measure_kind == "tracking" and term.sense == 1
    shipped = from_dict(read_toml(ROOT / "configs" / "optimize_fault_tolerance.toml"),
                        str(ROOT / "configs" / "optimize_fault_tolerance.toml"))
    assert isinstance(shipped.problem.objective.term, ob.WorstRotorLoss)


@pytest.mark.parametrize("line, words", [
    ('measure = "wobble"', "worst_rotor_loss.measure` = 'wobble'"),
    ('aggregate = "mean"', "worst_rotor_loss.aggregate` = 'mean'"),
    ("temperature = 0.0", "worst_rotor_loss.temperature` = 0.0"),
    ("cvar_alpha = 1.5", "worst_rotor_loss.cvar_alpha` = 1.5"),
    ("detection_delay = -0.1", "worst_rotor_loss.detection_delay` = -0.1"),
    ('reference = "circle"', "worst_rotor_loss.reference` = 'circle'"),
    ('release_yaw = "sometimes"', "worst_rotor_loss.release_yaw` = 'sometimes'"),
    ("spin_weight = -0.01", "worst_rotor_loss.spin_weight` = -0.01"),
    ("rotor = 2", "worst_rotor_loss.rotor` = 2"),
    ('time = 9.0\nreference = "flight"', "`time` = 9.0"),
])
def test_bad_options_are_refused_by_name(line, words):
    """At load: the key, the value and the fix."""
    text = CONFIG[:CONFIG.index("[objective.worst_rotor_loss]")] + "[objective.worst_rotor_loss]\n" + line + "\n"
    with pytest.raises(ConfigError) as err:
        _load(text)
    msg = str(err.value)
    assert words in msg and "Fix" in msg and "worst_rotor_loss" in msg


def test_tracking_needs_a_flight_the_margin_does_not():
    design_only = """
[platform]
preset = "paper_hexarotor"

[parameters."platform.alpha"]
transform = "interval"
lower = 0.15
upper = 0.8

[objective.worst_rotor_loss]
measure = "hover_margin"
"""
    conf = _load(design_only)
    assert conf.problem.design.flight is None and conf.problem.objective.term.sense == -1
    with pytest.raises(ConfigError, match=r"worst_rotor_loss.*no controller or flight.*Fix"):
        _load(design_only.replace('"hover_margin"', '"tracking"'))
