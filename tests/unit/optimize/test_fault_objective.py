"""The worst_rotor_loss objective (jaxrotor.optimize.fault_terms): the hover margin against
jaxrotor.analysis.rotor_loss_margin, the TOML table and its errors (its flown rotor losses, their gradient and
aggregates: tests/integration/test_fault_objective_flights.py)."""

from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.io.config import ConfigError, loads
from jaxrotor.io.optimize_config import from_dict
from jaxrotor.io.toml import read_toml
from jaxrotor.optimize import Design
from jaxrotor.optimize import objectives as ob

from .._paper_hover import paper_hover_toml

ROOT = Path(__file__).resolve().parents[3]
HOVER = paper_hover_toml(0.005)
KW = dict(time=0.3, duration=0.5, detection_delay=0.05, attitude_weight=0.1)


def hover_design() -> Design:
    """The paper hexarotor with Table III gains and exact allocation (unbounded pseudo-inverse, ideal motors) hovering."""
    cfg = loads(HOVER, "f.toml")
    return Design(cfg.platform, cfg.controller, cfg.flight)


@pytest.fixture(scope="module")
def design():
    """:func:`hover_design`, once per file."""
    return hover_design()


def _at(design, alpha0):
    return eqx.tree_at(lambda d: d.platform.alpha, design, jnp.asarray(alpha0))


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
