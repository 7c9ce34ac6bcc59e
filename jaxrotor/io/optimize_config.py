"""TOML form of ``jaxrotor tune`` / ``jaxrotor optimize``: a flight configuration plus the design problem.

The flight tables (``[platform]``, ``[controller]``, ``[allocator]``, ``[actuators.*]``,
``[reference]``, ``[solver]``, ``[flight]``) are read by :func:`jaxrotor.io.config.from_dict`
into a :class:`~jaxrotor.io.config.FlightConfig`, whose parts make the
:class:`~jaxrotor.optimize.Design` ``(platform, controller, flight)``; this module reads
the three tables of the problem (see ``docs/optimization.md``)::

    [parameters."platform.alpha"]           # a dotted path into Design; quote it
    transform = "interval"                  # identity | log | interval | log_interval | box
    lower = 0.0                             # bounds in the parameter's units (rad here)
    upper = 1.0

    [objective.tracking]                    # one table per registered term (jaxrotor.registry "objective")
    weight = 1.0
    metric = "rmse"

    [objective.hover_efficiency]
    weight = 0.0
    at_least = 0.85                         # a bound on the measure, with a quadratic penalty
    penalty = 1e3

    [optimize]
    optimizer = "adam"                      # adamw | sgd | rmsprop | lion
    learning_rate = 0.05
    iterations = 100
    divergence_penalty = 1000.0             # the loss of a diverged flight

A design-only problem (``jaxrotor optimize`` only) has ``[platform]``, ``[parameters]``,
``[objective]`` and ``[optimize]`` but no ``[reference]``: every objective term must
then be a design term (``needs_flight`` false, e.g. ``volume_above_hover``), the other
flight tables are refused, and the :class:`~jaxrotor.optimize.Design` has
``controller = None`` and ``flight = None`` (``configs/optimize_polytope.toml``).

Every ``[objective.<name>]`` term is checked against the design when the file is read
(:meth:`~jaxrotor.optimize.objectives.AbstractTerm.check`): ``[objective.payload_capacity]`` for a
vehicle without a battery, or ``[objective.peak_current]`` for a flight whose motor draws no current,
is refused there, naming the table and the fix. The electrical terms (``endurance``, ``energy`` with
``source = "battery"``, ``peak_current``, ``payload_capacity``) are in
:mod:`jaxrotor.optimize.electrical_terms`; :func:`objective_from_table` is the same reading for
``jaxrotor sweep``'s objective columns.

Every mistake raises a :class:`~jaxrotor.io.toml.ConfigError` naming the file, the
key, the value and the fix. The runaway limits (``max_position``, ``max_speed``,
``max_rate``) live in ``[flight]``; in ``[optimize]`` they are refused with that fix.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import equinox as eqx
import optax

from ..optimize import (
    TRANSFORMS,
    Box,
    Design,
    DesignProblem,
    Log,
    MinimizeOptions,
    Parameters,
)
from .. import registry
from ..optimize import objectives as ob
from . import robust_config
from .config import FlightConfig
from .config import from_dict as flight_from_dict
from .platform_table import platform_from_table
from .toml import Table, read_toml

__all__ = ["OptimizationConfig", "Optimizer", "OPTIMIZERS", "from_dict", "load", "objective_from_table"]


class Optimizer(eqx.Module):
    """optax settings (all static, so equal settings share one compiled step).

    The update is ``optax.chain(clip_by_global_norm(clip_norm), <name>(learning_rate))``
    (no clipping if ``clip_norm`` is ``None``), then multiplied by the loop's step
    scale (halved after a rejected step, see :func:`minimize`). For ``"adam"``:
    ``m <- b1 m + (1-b1) g``, ``v <- b2 v + (1-b2) g^2``,
    ``theta <- theta - lr m_hat / (sqrt(v_hat) + eps)``; in log-parameterised
    coordinates a step of ``lr`` changes a parameter by about ``lr`` relative.

    Attributes:
        name: ``"adam"``, ``"adamw"``, ``"sgd"``, ``"rmsprop"`` or ``"lion"``.
        learning_rate: step size in ``theta`` units.
        clip_norm: global gradient-norm clip (``None`` for none).
        b1: first-moment decay rate (adam, adamw, lion).
        b2: second-moment decay rate (adam, adamw, lion).
        momentum: SGD momentum (``None`` for plain SGD).
        weight_decay: adamw / lion decoupled weight decay.
        decay_steps: if set, the step size follows the cosine decay
            ``lr_k = lr (f + (1 - f) (1 + cos(pi min(k, K) / K)) / 2)`` over ``K = decay_steps``
            optimiser updates, ``f = final_fraction`` (a schedule converges onto kinks and
            active bounds that a constant step only circles).
        final_fraction: ``f`` above.
    """
    name: str = eqx.field(static=True, default="adam")
    learning_rate: float = eqx.field(static=True, default=0.05)
    clip_norm: float | None = eqx.field(static=True, default=None)
    b1: float = eqx.field(static=True, default=0.9)
    b2: float = eqx.field(static=True, default=0.999)
    momentum: float | None = eqx.field(static=True, default=None)
    weight_decay: float = eqx.field(static=True, default=0.0)
    decay_steps: int | None = eqx.field(static=True, default=None)
    final_fraction: float = eqx.field(static=True, default=0.01)

    def __check_init__(self):
        if self.name not in OPTIMIZERS:
            raise ValueError(f"Optimizer parameter `name` = {self.name!r} is unknown. Fix: use one of "
                             f"{', '.join(OPTIMIZERS)}.")
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise ValueError(f"Optimizer parameter `learning_rate` = {self.learning_rate!r} is invalid. "
                             "Fix: pass a positive step size, e.g. 0.05.")
        if self.decay_steps is not None and not self.decay_steps >= 1:
            raise ValueError(f"Optimizer parameter `decay_steps` = {self.decay_steps!r} is invalid. Fix: pass a positive "
                             "number of steps or None for a constant step size.")
        if self.clip_norm is not None and not self.clip_norm > 0:
            raise ValueError(f"Optimizer parameter `clip_norm` = {self.clip_norm!r} is invalid. Fix: pass > 0 or None.")

    def build(self):
        """The ``optax.GradientTransformation``."""

        lr = self.learning_rate
        if self.decay_steps is not None:
            lr = optax.cosine_decay_schedule(self.learning_rate, self.decay_steps, alpha=self.final_fraction)
        base = {
            "adam": lambda: optax.adam(lr, b1=self.b1, b2=self.b2),
            "adamw": lambda: optax.adamw(lr, b1=self.b1, b2=self.b2, weight_decay=self.weight_decay),
            "sgd": lambda: optax.sgd(lr, momentum=self.momentum),
            "rmsprop": lambda: optax.rmsprop(lr),
            "lion": lambda: optax.lion(lr, b1=self.b1, b2=self.b2, weight_decay=self.weight_decay),
        }[self.name]()
        if self.clip_norm is None:
            return base
        return optax.chain(optax.clip_by_global_norm(self.clip_norm), base)

    def init(self, theta):
        """Optimiser state for ``theta``."""
        return self.build().init(theta)


OPTIMIZERS = ("adam", "adamw", "sgd", "rmsprop", "lion")


@dataclasses.dataclass
class OptimizationConfig:
    """A loaded ``jaxrotor tune`` / ``jaxrotor optimize`` configuration.

    Attributes:
        name: run name (default output folder ``jaxrotor-out/<name>``).
        kind: ``"tune"`` or ``"optimize"``.
        problem: the :class:`~jaxrotor.optimize.DesignProblem` (its ``design`` is
            ``Design(platform, controller, flight)`` of :attr:`flight_config`).
        optimizer: the optimiser settings; ``optimizer.build()`` is the ``optax.GradientTransformation``.
        options: the :class:`~jaxrotor.optimize.MinimizeOptions` (``iterations``, ``patience``,
            ``min_delta``, ``target``, ``max_increase``).
        flight_config: the flight part (:class:`~jaxrotor.io.config.FlightConfig`; its ``flight`` is the
            :class:`~jaxrotor.flight.Flight`, ``None`` for a design-only problem).
        source: file name.
    """
    name: str
    kind: str
    problem: Any
    optimizer: Optimizer
    options: Any
    flight_config: FlightConfig
    source: str


_OWN_TABLES = ("optimize", "parameters", "objective") + robust_config.PROBLEM_TABLES
def _parameters_from(t: Table, design):

    selection = {}
    for path, sub in t.data.items():
        key = f'parameters."{path}"' if "." in path else f"parameters.{path}"
        if isinstance(sub, dict) and "transform" not in sub and sub and all(isinstance(v, dict) for v in sub.values()):
            raise t.error(f"table `{key}` has sub-tables {sorted(sub)} but no `transform`. Fix: quote "
                          f"dotted paths, e.g. [parameters.\"{path}.{next(iter(sub))}\"].")
        st = Table(sub, t.source, key)
        t.used.add(path)
        kind = st.choice("transform", tuple(TRANSFORMS), "identity")
        if kind in ("interval", "log_interval"):
            tf = TRANSFORMS[kind](st.number("lower", fix="the lower bound in the parameter's units (radians for angles)"),
                                  st.number("upper", fix="the upper bound in the parameter's units"))
        elif kind == "box":
            tf = Box(st.number("lower", -math.inf), st.number("upper", math.inf))
        else:
            tf = None
        if tf is not None and not float(tf.lower) < float(tf.upper):
            raise st.fail("upper", float(tf.upper), f"must exceed lower = {float(tf.lower)}", "give lower < upper")
        if tf is None:
            tf = TRANSFORMS[kind]()
        st.check_unknown()
        selection[path] = tf
    if not selection:
        raise t.error("table [parameters] is empty. Fix: add e.g. [parameters.controller] with transform = \"log\".")
    try:
        return Parameters.select(design, selection)
    except ValueError as err:
        raise t.error(f"[parameters]: {err}") from None


def _terms_from(t: Table) -> list[tuple[str, Table, Any]]:
    """``[(name, table, term)]`` of the ``[objective.<name>]`` tables: each registered term with its options,
    weighted or bounded (``weight``, ``at_least``, ``at_most``, ``penalty``); not yet checked against a design."""
    terms = []
    registered = registry.kinds("objective")
    for name, sub in t.data.items():
        if name not in registered:
            raise t.error(f"unknown objective term `objective.{name}` = {sub!r}. Fix: use one of "
                          f"{', '.join(registered)}.")
        st = t.table(name)
        weight = st.number("weight", 1.0, fix="a non-negative weight")
        if weight < 0:
            raise st.fail("weight", weight, "weights must be >= 0 (every term is a cost; larger-is-better measures "
                          "are negated already)", "give a non-negative weight")
        lower = st.number("at_least", None, fix="the lower bound of the term's measure, in its units")
        upper = st.number("at_most", None, fix="the upper bound of the term's measure, in its units")
        penalty = st.number("penalty", 1e4, positive=True, fix="the quadratic penalty weight of the bound")
        term = st.build_kind(registered[name])  # the term's own options (declared next to its class)
        try:
            if lower is None and upper is None:
                terms.append((name, st, ob.Weighted(term, weight)))
            else:
                terms.append((name, st, ob.Constrained(term, weight=weight, lower=-math.inf if lower is None else lower,
                                                       upper=math.inf if upper is None else upper, penalty=penalty)))
        except ValueError as err:
            raise st.error(f"[objective.{name}]: {err}") from None
    if not terms:
        raise t.error("table [objective] is empty. Fix: add e.g. [objective.tracking] with weight = 1.0.")
    return terms


def _checked(terms: list[tuple[str, Table, Any]], design):
    """The terms' sum (or the one term), each checked against ``design`` (:meth:`AbstractTerm.check`: a term
    that reads a battery, an electric flight, ... the design lacks is refused here, naming its table)."""
    for name, st, term in terms:
        try:
            term.check(design)
        except ValueError as err:
            raise st.error(f"[objective.{name}]: {err}") from None
    return terms[0][2] if len(terms) == 1 else ob.Sum([term for _, _, term in terms])


def objective_from_table(t: Table, design):
    """The objective of an ``[objective]`` table (the module docstring) for ``design``: one term or their
    :class:`~jaxrotor.optimize.objectives.Sum`, every term checked against ``design``.

    Also what ``jaxrotor sweep`` reads to report objective columns (:mod:`jaxrotor.workflows.sweep`).

    Raises:
        ConfigError: an unknown term, a bad option, or a term that needs what ``design`` lacks
            (e.g. ``[objective.payload_capacity]`` for a vehicle without a battery), with the fix.
    """
    return _checked(_terms_from(t), design)


def from_dict(data: Mapping[str, Any], source: str = "<dict>", base_dir: Path | None = None,
              kind: str = "optimize") -> OptimizationConfig:
    """Build an :class:`OptimizationConfig` from a parsed TOML mapping (see the module docstring).

    ``kind="tune"`` defaults ``[parameters]`` to every controller gain with a log
    transform and ``[objective]`` to the tracking RMSE. ``[solver] adaptive = false``
    is required (gradients are taken through fixed-step solves).

    Raises:
        ConfigError: naming the file, the key, the value and the fix.
    """
    top = Table(data, source, "")
    own = {k: top.table(k) for k in _OWN_TABLES if k in data}
    flight_data = {k: v for k, v in data.items() if k not in _OWN_TABLES}
    terms = _terms_from(own["objective"]) if "objective" in own else None
    if "reference" not in data and kind == "optimize":
        conf = _design_only(top, terms, flight_data, source)
        return _finish(top, own, terms, conf, Design(conf.platform, None, None), source, kind)
    conf = flight_from_dict(flight_data, source, base_dir)
    if conf.flight.integrator.adaptive:
        raise top.error("key `solver.adaptive` = true is invalid here: gradients are taken through fixed-step "
                        "solves. Fix: set adaptive = false and dt (e.g. 0.01) in [solver].")
    if conf.compare is not None:
        raise top.fail("compare", data.get("compare"), f"{kind} flies one flight", "remove it")
    return _finish(top, own, terms, conf, Design(conf.platform, conf.controller, conf.flight), source, kind)


#: Tables that describe a flight; a design-only problem (no ``[reference]``) may not have them.
_FLIGHT_ONLY_TABLES = ("controller", "allocator", "actuators", "solver", "flight", "compare")


def _design_only(top: Table, terms, flight_data: Mapping[str, Any], source: str) -> FlightConfig:
    """The :class:`FlightConfig` (platform only, ``flight = None``) of a problem without ``[reference]``.

    Allowed only when every ``[objective]`` term is a design term (``needs_flight`` false; a term whose
    options decide it, e.g. ``endurance`` with ``mode``, as built).
    """
    flying = sorted(name for name, _, term in terms or () if term.needs_flight)
    if terms is None or flying:
        what = f"the objective term(s) {', '.join(flying)} need a flight" if flying else "there is no [objective]"
        design_terms = [k for k, c in ob.TERMS.items() if c.needs_flight is not True]  # a property: per instance
        raise top.error(f"missing table `[reference]`: {what}. Fix: add [reference] (and [solver] with "
                        "adaptive = false) to fly the design, or use only design terms "
                        f"({', '.join(design_terms)}).")
    extra = sorted(k for k in _FLIGHT_ONLY_TABLES if k in flight_data)
    if extra:
        raise top.error(f"table(s) {', '.join(f'[{k}]' for k in extra)} describe a flight, but this design-only "
                        "problem has no [reference]. Fix: remove them, or add [reference] to fly the design.")
    unknown = sorted(k for k in flight_data if k not in ("platform", "parts", "name", "description"))
    if unknown:
        raise top.error(f"unknown key(s) {', '.join(f'`{k}`' for k in unknown)} in a design-only problem. Fix: use "
                        "[platform], [parameters], [objective], [optimize], name and description; check the spelling.")
    if "platform" not in flight_data:
        raise top.error("missing table `[platform]`. Fix: add [platform] with preset = \"paper_hexarotor\" "
                        "or the star_platform keywords.")
    top.used.update(("platform", "parts"))
    platform = platform_from_table(flight_data["platform"], source, flight_data.get("parts"))
    name = top.get("name", str, Path(source).stem if source.endswith(".toml") else "design")
    top.get("description", str, "")
    return FlightConfig(name=name, platform=platform, controller=None, flight=None, source=source,
                        raw=dict(flight_data))


def _finish(top: Table, own: dict, terms, conf: FlightConfig, design: Design, source: str, kind: str
            ) -> OptimizationConfig:
    """Read ``[parameters]`` and ``[optimize]``, check the ``[objective]`` ``terms`` against ``design`` and build
    the configuration."""
    if "parameters" in own:
        parameters = _parameters_from(own["parameters"], design)
    elif kind == "tune":
        parameters = Parameters.select(design, {"controller": Log()})
    else:
        raise top.error("missing table [parameters]. Fix: name what to optimise, e.g. [parameters.\"platform.alpha\"] "
                        "with transform = \"interval\", lower = 0.0, upper = 1.2.")
    if terms is not None:
        objective = _checked(terms, design)
    elif kind == "tune":
        objective = ob.Weighted(ob.Tracking("rmse"), 1.0)
    else:
        raise top.error("missing table [objective]. Fix: add e.g. [objective.tracking] with weight = 1.0.")
    t = own.get("optimize") or Table({}, source, "optimize")
    for limit in ("max_position", "max_speed", "max_rate"):
        t.moved(limit, f"flight.{limit}")
    try:
        optimizer = Optimizer(
            name=t.choice("optimizer", OPTIMIZERS, "adam"),
            learning_rate=t.number("learning_rate", 0.05, positive=True, fix="a step size, e.g. 0.05"),
            clip_norm=t.number("clip_norm", None, positive=True),
            b1=t.number("b1", 0.9, positive=True), b2=t.number("b2", 0.999, positive=True),
            momentum=t.number("momentum", None, positive=True), weight_decay=t.number("weight_decay", 0.0),
            decay_steps=t.integer("decay_steps", None, minimum=1),
            final_fraction=t.number("final_fraction", 0.01, positive=True),
        )
    except ValueError as err:
        raise t.error(f"[optimize]: {err}") from None
    max_increase = t.number("max_increase", None, positive=True)
    if max_increase is not None and max_increase <= 1:
        raise t.fail("max_increase", max_increase, "must be > 1 (a factor on the last accepted loss)",
                     "give e.g. 2.0 or remove it")
    try:
        options = MinimizeOptions(
            iterations=t.integer("iterations", 100, minimum=1),
            patience=t.integer("patience", None, minimum=1),
            min_delta=t.number("min_delta", 1e-4),
            target=t.number("target", None),
            max_increase=max_increase,
        )
    except ValueError as err:
        raise t.error(f"[optimize]: {err}") from None
    penalty = t.number("divergence_penalty", 1e3, positive=True, fix="the loss given to a diverged flight")
    t.check_unknown()
    problem = DesignProblem(design, parameters, objective, divergence_penalty=penalty)
    problem = robust_config.robust_problem(top, problem)  # [randomize], [robust]: a RobustProblem
    return OptimizationConfig(name=conf.name, kind=kind, problem=problem, optimizer=optimizer, options=options,
                              flight_config=conf, source=source)


def load(path: str | Path, kind: str = "optimize") -> OptimizationConfig:
    """Load a TOML optimisation configuration (see :func:`from_dict`)."""
    path = Path(path)
    return from_dict(read_toml(path), str(path), path.parent, kind=kind)
