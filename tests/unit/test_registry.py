"""The TOML kind registry (jaxrotor.registry): a kind declared in one file is loadable from TOML.

The reference and the objective term below are defined, registered and loaded in this
file alone: adding a kind touches no loader.
"""

from __future__ import annotations

import ast
import math
import sys
import tomllib
from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor import registry
from jaxrotor.io import config as cfg
from jaxrotor.io import optimize_config as oc
from jaxrotor.io.toml import ConfigError, Table
from jaxrotor.optimize import objectives as ob
from jaxrotor.reference import AbstractReference, RefSample
from jaxrotor.registry import REQUIRED, Option, register

ROOT = Path(__file__).resolve().parents[2]


@register("reference", "test_constant_velocity", options={
    "duration": Option(float, gt=0, unit="s", doc="flight time"),
    "start": Option(list, length=3, scalar=False, unit="m", doc="start point, world frame"),
    "velocity": Option(list, length=3, scalar=False, unit="m/s", doc="constant velocity, world frame"),
})
class ConstantVelocity(AbstractReference):
    """``p(t) = start + velocity t``, level attitude."""

    start: jnp.ndarray
    velocity: jnp.ndarray
    length: float = eqx.field(static=True)

    def __init__(self, duration: float, start=(0.0, 0.0, 1.0), velocity=(0.5, 0.0, 0.0)):
        self.start, self.velocity = jnp.asarray(start, float), jnp.asarray(velocity, float)
        self.length = duration

    @property
    def duration(self) -> float:
        return self.length

    def __call__(self, t) -> RefSample:
        z = jnp.zeros(3)
        return RefSample(p=self.start + self.velocity * t, v=self.velocity, a=z, j=z, R=jnp.eye(3), omega=z,
                         omega_dot=z, yaw=jnp.zeros(()))


@register("objective", "test_scaled_mass", options={
    "scale": Option(float, gt=0, unit="1/kg", doc="cost per kilogram", why="a scale must be > 0"),
})
class ScaledMass(ob.AbstractDesignTerm):
    """``scale * m``: a design term, larger mass costs more."""

    scale: float = eqx.field(static=True, default=1.0)
    sense: ClassVar[int] = 1
    name: ClassVar[str] = "test_scaled_mass"

    def measure(self, design, traj=None):
        return self.scale * design.platform.mass


FLIGHT = '[platform]\npreset = "paper_hexarotor"\n[reference]\nkind = "test_constant_velocity"\nduration = 2.0\n'


def test_a_reference_kind_declared_in_one_file_loads_from_toml():
    conf = cfg.loads(FLIGHT + "velocity = [0.0, 0.25, -0.5]\n", "line.toml")
    ref = conf.flight.reference
    assert isinstance(ref, ConstantVelocity) and ref.duration == 2.0
    # p(1.5) = start (default, from the signature) + velocity * 1.5
    np.testing.assert_allclose(np.asarray(ref(1.5).p), [0.0, 0.375, 0.25], rtol=0, atol=1e-15)
    assert conf.flight.end_time == 2.0


def test_an_objective_term_declared_in_one_file_loads_from_toml():
    text = ('[platform]\npreset = "paper_hexarotor"\n[parameters."platform.alpha"]\ntransform = "identity"\n'
            '[objective.test_scaled_mass]\nweight = 0.5\nscale = 4.0\n[optimize]\niterations = 1\n')
    conf = oc.from_dict(tomllib.loads(text), "mass.toml", kind="optimize")
    objective = conf.problem.objective
    assert isinstance(objective, ob.Weighted) and isinstance(objective.term, ScaledMass)
    assert objective.term.scale == 4.0 and float(objective.weight) == 0.5
    design = conf.problem.design
    # cost = weight * sense * scale * m, m = 3.5 kg (Table II)
    assert float(objective.term.measure(design)) == pytest.approx(4.0 * float(design.platform.mass), rel=1e-15)
    assert float(design.platform.mass) == pytest.approx(3.5)
    assert ob.TERMS["test_scaled_mass"] is ScaledMass  # TERMS is a live view of the registry


def test_unknown_kind_lists_the_registered_kinds():
    with pytest.raises(ConfigError) as err:
        cfg.loads(FLIGHT.replace("test_constant_velocity", "spiral"), "bad.toml")
    msg = str(err.value)
    assert msg.startswith("bad.toml: key `reference.kind` = 'spiral' is invalid: unknown choice")
    for name in registry.kinds("reference"):
        assert repr(name) in msg, name
    assert "'test_constant_velocity'" in msg and "'figure_eight'" in msg and "Fix: use one of" in msg
    text = ('[platform]\npreset = "paper_hexarotor"\n[parameters."platform.alpha"]\ntransform = "identity"\n'
            '[objective.masss]\nweight = 1.0\n')
    with pytest.raises(ConfigError) as err:
        oc.from_dict(tomllib.loads(text), "bad.toml")
    assert "unknown objective term `objective.masss`" in str(err.value) and "test_scaled_mass" in str(err.value)


@pytest.mark.parametrize("extra, says", [
    ("velocity = [0.0, 0.25]\n", "key `reference.velocity` = [0.0, 0.25] is invalid: expected 3 numbers, got 2. "
                                 "Fix: give 3 numbers in m/s."),
    ("velocity = 0.5\n", "key `reference.velocity` = 0.5 is invalid: expected a list of 3 numbers, got one number."),
    ("duration = -1.0\n", "key `reference.duration` = -1.0 is invalid: must be > 0. Fix: give a number > 0 in s."),
    ("duration = nan\n", "key `reference.duration` = nan is invalid: must be a finite number > 0."),
    ('start = "origin"\n', "key `reference.start` = 'origin' is invalid: expected list or float, got str."),
    ("speed = 3.0\n", "unknown key `reference.speed` = 3.0 in [reference]. Fix: remove it or correct the spelling; "
                      "valid keys here: duration, kind, start, velocity."),
])
def test_bad_option_names_the_option_the_value_and_the_fix(extra, says):
    text = FLIGHT.replace("duration = 2.0\n", "") + ("" if "duration" in extra else "duration = 2.0\n") + extra
    with pytest.raises(ConfigError) as err:
        cfg.loads(text, "bad.toml")
    assert says in str(err.value), str(err.value)


def test_missing_required_option_and_range_reason():
    with pytest.raises(ConfigError, match=r"missing key `reference.duration`. Fix: add it \(flight time: a number > 0 "
                                          r"in s\)"):
        cfg.loads(FLIGHT.replace("duration = 2.0\n", ""), "bad.toml")
    text = ('[platform]\npreset = "paper_hexarotor"\n[parameters."platform.alpha"]\ntransform = "identity"\n'
            '[objective.test_scaled_mass]\nscale = 0.0\n')
    with pytest.raises(ConfigError, match=r"key `objective.test_scaled_mass.scale` = 0.0 is invalid: a scale must be "
                                          r"> 0. Fix: give a number > 0 in 1/kg."):
        oc.from_dict(tomllib.loads(text), "bad.toml")


def test_option_reading_bounds_and_conversions():
    t = Table({"a": 0.5, "b": [1, 2], "c": 1.0, "n": 3, "s": "mae", "x": math.inf, "lim": [-math.inf, 1.0]}, "f.toml", "t")
    assert t.option("a", Option(float, ge=0, lt=1)) == 0.5
    assert t.option("b", Option(tuple, length=2, scalar=False)) == (1.0, 2.0)
    assert t.option("lim", Option(tuple, length=2, allow_inf=True)) == (-math.inf, 1.0)
    assert t.option("absent", Option(float, default=None)) is None
    assert t.option("n", Option(int, ge=2)) == 3
    assert t.option("s", Option(str, choices=("rmse", "mae"))) == "mae"
    with pytest.raises(ConfigError, match=r"`t.c` = 1.0 is invalid: must be in \[0, 1\)"):
        t.option("c", Option(float, ge=0, lt=1))
    with pytest.raises(ConfigError, match=r"`t.x` = inf is invalid: must be a finite number"):
        t.option("x", Option(float))
    with pytest.raises(ConfigError, match=r"`t.n` = 3 is invalid: must be <= 2"):
        t.option("n", Option(int, le=2))
    with pytest.raises(ConfigError, match=r"missing key `t.absent`"):
        t.option("absent", Option(float, default=REQUIRED))
    assert Option(float, gt=0).bounds() == "> 0" and Option(float, ge=0, le=0.999).bounds() == "in [0, 0.999]"
    assert Option(list, length=3, ge=0, unit="m").describe() == "a number or 3 numbers >= 0 in m"


def test_defaults_come_from_the_builder_signature_and_options_must_name_keywords():
    kind = registry.lookup("reference", "test_constant_velocity")
    assert kind.options["start"].default == (0.0, 0.0, 1.0) and kind.options["duration"].default is REQUIRED
    assert kind.registered_by == __name__ and kind.public_name == f"{__name__}.ConstantVelocity"

    def build(duration, gain=2.0):
        return duration * gain

    with pytest.raises(ValueError, match=r"option `gian` names no keyword `gian` of the builder \(keywords: "
                                         r"duration, gain\)"):
        register("reference", "test_typo", build, options={"gian": Option(float)})
    with pytest.raises(ValueError, match=r"register\('reference', 'figure_eight'\): the name is taken by "
                                         r"jaxrotor.reference.FigureEight"):
        register("reference", "figure_eight", build)
    register("reference", "test_constant_velocity", ConstantVelocity,  # the same builder again: replaces
             options=dict(kind.options))
    with pytest.raises(LookupError, match=r"no reference kind 'spiral'. Fix: use one of 'hover'"):
        registry.lookup("reference", "spiral")


def test_every_family_is_registered_by_the_loaders():
    """The loaders' kinds: every family has its kinds, the defaults the loaders use exist."""
    expected = {"reference": "paper_maneuver", "controller": "fully_actuated", "allocator": "pseudo_inverse",
                "motor": "ideal", "servo": "ideal", "solver": "tsit5", "objective": "tracking",
                "sensors": "gaussian", "wind": "ornstein_uhlenbeck", "aero": "quasi_steady",
                "randomization": "uniform"}
    assert set(expected) == set(registry.FAMILIES)
    for family, name in expected.items():
        assert name in registry.kinds(family), family
    assert cfg.SOLVERS == ("tsit5", "dopri5", "dopri8", "bosh3", "heun", "euler")


def test_registry_imports_only_the_standard_library():
    tree = ast.parse((ROOT / "jaxrotor" / "registry.py").read_text())
    modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
    assert not any(isinstance(n, ast.ImportFrom) and n.level > 0 for n in ast.walk(tree))
    assert modules <= set(sys.stdlib_module_names) | {"__future__"}, modules
