"""TOML form of ``jaxrotor design``: a vehicle from its parts, a mission, variables, objective, constraints.

The vehicle and flight tables (``[platform]``, ``[parts.*]``, ``[controller]``, ``[actuators.*]``,
``[solver]``, ``[flight]``) are those of every flight configuration; ``[design]`` holds the problem
(``docs/design.md``)::

    [design]
    objective = "endurance"          # endurance | payload (maximised) | mass (minimised)
    motors = ["2212_920kv", "2216_880kv"]   # catalogue (jaxrotor.design.catalogue.MOTORS): discrete
    cells = [4]                      # battery series cell counts: discrete
    hover_tilt = 15.0                # deg, the attitude of the hover_tilt measure
    payload_twr = 2.0                # thrust-to-weight kept by the payload measure

    [design.variables.propeller_diameter]   # continuous: arm_length, tilt, dihedral, elevation,
    lower = 0.20                            # propeller_diameter, propeller_pitch [m], battery_capacity
    upper = 0.30                            # [mAh]; tilt, dihedral and elevation in degrees here
    start = 0.254

    [design.variables.tilt]          # one variable per rotor (tilt_1 ... tilt_n): tilt, dihedral, elevation, azimuth
    per_rotor = true                 # lower, upper, start: one number or a list of n [deg]; start defaults to the
    lower = -50.0                    # platform's angles; rotors = [1, 2] limits the variables to those rotors
    upper = 50.0

    [design.constraints.tracking]    # one table per measure (jaxrotor.optimize.codesign.MEASURES)
    at_most = 0.05                   # or at_least = ...; scale = the normalising size (default |bound|)

    [[design.mission]]               # one flight per entry: a [reference] table plus a name
    name = "eight"
    kind = "figure_eight"
    duration = 3.0

    [design.randomize]               # the batch the tracking is measured on
    members = 4
    mass = 0.1                       # relative half-widths (jaxrotor.randomize.Randomization)
    seed = 0

    [design.propeller] / [design.battery] / [design.arm_tube]   # family constants (jaxrotor.design.catalogue)
    [design.optimize]                # iterations, rounds, learning_rate, rho, tighten
    [design.baseline]                # budget_factor (CMA-ES gets this x the gradient's evaluations), popsize
    [design.pareto]                  # measure (one of the constraints), bounds = [...]
    [design.verify]                  # physics, control_rate, the [sensors] of the physics flights, rotor_losses,
                                     # loss_settle
    [design.quick]                   # what --quick changes (iterations, motors, cells, members, duration, ...)

Every mistake raises :class:`~jaxrotor.io.toml.ConfigError` naming the key, the value and the fix.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np

from .toml import MISSING, ConfigError, Table, read_toml

__all__ = ["DesignSettings", "DesignConfig", "load_design", "design_from_dict", "degree_variable"]

_DEG_VARIABLES = ("tilt", "dihedral", "elevation")


def degree_variable(name: str) -> bool:
    """Whether design variable ``name`` is an angle (written in degrees in the file, radians in ``x``): ``tilt``,
    ``dihedral``, ``elevation`` and every per-rotor angle ``<angle>_<i>``."""
    from ..optimize.codesign import per_rotor_variable

    return name in _DEG_VARIABLES or per_rotor_variable(name) is not None


@dataclasses.dataclass(frozen=True)
class DesignSettings:
    """How ``jaxrotor design`` runs (``[design.optimize]``, ``[design.baseline]``, ``[design.pareto]``,
    ``[design.verify]``, after ``[design.quick]`` when quick).

    Attributes:
        iterations, rounds, learning_rate, rho, tighten: of :func:`jaxrotor.optimize.codesign.solve`.
        budget_factor: CMA-ES's budget over the gradient method's evaluations.
        popsize: CMA-ES population (``None``: cma's default ``4 + 3 ln n``).
        seeds: CMA-ES seeds (the median best is reported).
        pareto_measure: the constraint swept for the Pareto front (``None``: no front).
        pareto_bounds: its bounds, one Pareto point each.
        pareto_iterations: Adam steps per Pareto point (warm-started).
        physics: verify on the physics layer. physics_duration: [s] of each physics flight.
        control_rate: [Hz] of the physics flights' flight computer when the file has no ``[control]``
            (otherwise the mission's own is flown). sensors: their ``[sensors]`` table then.
        rotor_losses: fly every single-rotor loss of the winning design (both layers).
        loss_settle: [s] after each loss before its flown outcome is judged (the flights last 5 s of hover,
            the loss, ``loss_settle`` and one more second; :func:`jaxrotor.workflows.faults.rotor_loss_report`).
        quick: whether ``[design.quick]`` was applied.
    """

    iterations: int = 60
    rounds: int = 4
    learning_rate: float = 0.05
    rho: float = 0.3
    tighten: float = 1e-3
    budget_factor: float = 10.0
    popsize: int | None = None
    seeds: tuple[int, ...] = (0,)
    pareto_measure: str | None = None
    pareto_bounds: tuple[float, ...] = ()
    pareto_iterations: int = 30
    physics: bool = True
    physics_duration: float = 3.0
    control_rate: float = 250.0
    sensors: dict = dataclasses.field(default_factory=dict)
    rotor_losses: bool = True
    loss_settle: float = 3.0
    quick: bool = False


@dataclasses.dataclass(frozen=True)
class DesignConfig:
    """A parsed design file.

    Attributes:
        name: the design's name. source: the file.
        problem: the :class:`~jaxrotor.optimize.codesign.CodesignProblem`.
        settings: :class:`DesignSettings`.
        missions: ``[(name, reference table)]`` of the mission flights.
        raw: the parsed TOML (the vehicle tables are reused for ``best.toml``).
    """

    name: str
    source: str
    problem: Any
    settings: DesignSettings
    missions: list
    raw: dict


def _variables(t: Table, platform) -> tuple:
    from ..optimize.codesign import PER_ROTOR, VARIABLES, Variable, _rotor_angles

    out = []
    parts = platform.parts
    defaults = {"arm_length": float(platform.arm_length), "propeller_diameter": float(parts.propeller.diameter),
                "propeller_pitch": float(parts.propeller.pitch),
                "battery_capacity": float(parts.battery.capacity_mah) if parts.battery is not None else None,
                "tilt": None, "dihedral": None, "elevation": None,
                "arm_tube_diameter": 2 * float(parts.arm.radius) if parts.arm is not None else None}
    names = ", ".join(list(VARIABLES) + ["azimuth (per_rotor)"])
    for name in list(t.data):
        if name not in VARIABLES and name not in PER_ROTOR:
            raise t.fail(name, t.data[name], "not a design variable", f"use one of {names}")
        v = t.table(name)
        unit = "deg" if name in _DEG_VARIABLES or name in PER_ROTOR else VARIABLES[name]
        per_rotor = v.boolean("per_rotor", False) if name in PER_ROTOR else False
        if name == "azimuth" and not per_rotor:
            raise v.fail("per_rotor", per_rotor, "an arm azimuth is one variable per rotor",
                         "write per_rotor = true")
        if per_rotor:
            angles = np.degrees(np.asarray(_rotor_angles(platform, PER_ROTOR[name])))
            out.extend(_per_rotor_variables(v, name, platform, angles))
            continue
        lo = v.number("lower", fix=f"the lower bound in {unit}")
        hi = v.number("upper", fix=f"the upper bound in {unit}")
        start = v.number("start", defaults[name] if defaults[name] is not None else (lo + hi) / 2,
                         fix=f"the start value in {unit}")
        v.check_unknown()
        if name in _DEG_VARIABLES:
            lo, hi, start = (math.radians(a) for a in (lo, hi, start))
        out.append(_variable(v, Variable, name, lo, hi, start))
    if not out:
        raise t.error("no design variable: [design.variables] is empty. Fix: add e.g. "
                      "[design.variables.propeller_diameter] with lower, upper.")
    return tuple(out)


def _variable(v: Table, cls, name: str, lo: float, hi: float, start: float):
    if not lo < hi:
        raise v.fail("upper", hi, f"it must exceed lower = {lo} (`{name}`)", "give lower < upper")
    if not lo <= start <= hi:
        raise v.fail("start", start, f"`{name}` starts outside [{lo}, {hi}]", "give a start between lower and upper")
    return cls(name, lo, hi, start)


def _per_rotor_variables(v: Table, name: str, platform, current_deg) -> list:
    """``<name>_<i>`` variables (radians) of ``[design.variables.<name>]`` with ``per_rotor = true``: ``lower``,
    ``upper`` and ``start`` in degrees, each one number for every rotor or a list of one per rotor (``start``
    defaults to the platform's angles), ``rotors`` the 1-based rotors that get a variable (default all)."""
    from ..optimize.codesign import Variable

    n = platform.n_rotors
    rotors = v.get("rotors", list, list(range(1, n + 1)), fix=f"a list of rotor numbers 1..{n}")
    if not rotors or any(isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= n for r in rotors) or len(
            set(rotors)) != len(rotors):
        raise v.fail("rotors", rotors, f"rotors are numbered 1..{n}, each at most once", f"list rotors from 1..{n}")

    def per(key: str, default=None):
        x = v.vector(key, n, default if default is not None else MISSING, fix=f"degrees: one number or {n}")
        return np.broadcast_to(np.asarray(x, float), (n,))

    lo, hi = per("lower"), per("upper")
    start = per("start", [float(a) for a in current_deg])
    v.check_unknown()
    return [_variable(v, Variable, f"{name}_{i}", math.radians(lo[i - 1]), math.radians(hi[i - 1]),
                      math.radians(start[i - 1])) for i in rotors]


def _constraints(t: Table) -> tuple:
    from ..optimize.codesign import MEASURES, Constraint

    out = []
    for name in list(t.data):
        if name not in MEASURES:
            raise t.fail(name, t.data[name], "not a measure", f"use one of {', '.join(MEASURES)}")
        c = t.table(name)
        lo, hi = c.number("at_least", None), c.number("at_most", None)
        if (lo is None) == (hi is None):
            raise c.error(f"[{c.path}] needs exactly one of `at_least` and `at_most` (in {MEASURES[name][0]}). "
                          "Fix: give one bound.")
        bound = lo if lo is not None else hi
        scale = c.number("scale", max(abs(bound), 1e-3), positive=True,
                         fix="the size a violation is measured in (default |bound|)")
        c.check_unknown()
        out.append(Constraint(name, bound, lo is not None, scale))
    return tuple(out)


def _tighten(o: Table) -> float:
    from ..optimize.codesign import TIGHTEN

    t = o.number("tighten", TIGHTEN, fix=f"a normalised margin >= 0 the solver keeps inside each constraint (default {TIGHTEN})")
    if t < 0:
        raise o.fail("tighten", t, "it must be >= 0", f"give a margin >= 0 (default {TIGHTEN})")
    return t


def _apply_quick(design: dict, source: str) -> dict:
    """``design`` with ``[design.quick]`` merged into its sub-tables."""
    d = copy.deepcopy(design)
    q = Table(d.pop("quick", {}), source, "design.quick")
    moves = {"iterations": "optimize", "rounds": "optimize", "learning_rate": "optimize", "budget_factor": "baseline", "popsize": "baseline",
             "seeds": "baseline", "bounds": "pareto", "pareto_iterations": "pareto", "members": "randomize",
             "rotor_losses": "verify", "physics_duration": "verify", "physics": "verify"}
    for k, v in list(q.data.items()):
        q.used.add(k)
        if k in moves:
            d.setdefault(moves[k], {})[k if k != "pareto_iterations" else "iterations"] = v
        elif k in ("motors", "cells"):
            d[k] = v
        elif k == "duration":
            for m in d.get("mission", []):
                m["duration"] = min(float(m.get("duration", v)), float(v))
        else:
            raise q.fail(k, v, "not a quick-mode key", f"use one of {', '.join([*moves, 'motors', 'cells', 'duration'])}")
    return d


def design_from_dict(data: dict, source: str = "<dict>", quick: bool = False) -> DesignConfig:
    """Build a :class:`DesignConfig` from a parsed TOML mapping (module docstring).

    Raises:
        ConfigError: naming the key, the value and the fix.
    """
    from ..design.catalogue import MOTORS, ArmTubeFamily, BatteryFamily, PropellerFamily, stack_motors
    from ..optimize.codesign import OBJECTIVES, CodesignProblem
    from ..randomize import Randomization, member_keys
    from .config import from_dict

    top = Table(data, source, "")
    name = top.get("name", str, Path(source).stem if source.endswith(".toml") else "design")
    if "design" not in data:
        raise top.error("missing table `[design]`. Fix: add [design] with objective, motors, cells, "
                        "[design.variables.*], [design.constraints.*] and [[design.mission]] (docs/design.md).")
    raw_design = data["design"]
    if not isinstance(raw_design, dict):
        raise top.fail("design", raw_design, "expected a table", "write [design]")
    full = Table(raw_design, source, "design")
    for m in full.get("motors", list, [], "a list of catalogue motor names"):  # checked also when --quick replaces it
        if m not in MOTORS:
            raise full.fail("motors", raw_design["motors"], f"`{m}` is not a catalogue motor",
                            f"use names from {', '.join(MOTORS)}")
    dd = _apply_quick(raw_design, source) if quick else copy.deepcopy(raw_design)
    dd.pop("quick", None)
    d = Table(dd, source, "design")
    objective = d.choice("objective", tuple(OBJECTIVES), "endurance")
    motors = d.get("motors", list, list(MOTORS), "a list of catalogue motor names")
    for m in motors:
        if m not in MOTORS:
            raise d.fail("motors", motors, f"`{m}` is not a catalogue motor", f"use names from {', '.join(MOTORS)}")
    cells = d.get("cells", list, None, "a list of series cell counts, e.g. [4]")
    hover_tilt = d.number("hover_tilt", 15.0, fix="the tilt of the hover_tilt measure in degrees")
    payload_twr = d.number("payload_twr", 2.0, positive=True, fix="a thrust-to-weight ratio, e.g. 2.0")

    vehicle = {k: v for k, v in data.items() if k not in ("design", "reference", "name", "description")}
    missions = d.get("mission", list, MISSING_MISSION, "[[design.mission]] tables")
    flights, mission_tables, controller = [], [], None
    for k, entry in enumerate(missions):
        mt = Table(entry, source, f"design.mission[{k}]")
        mname = mt.get("name", str, f"flight{k + 1}")
        ref = {kk: vv for kk, vv in entry.items() if kk != "name"}
        conf = from_dict({**vehicle, "name": f"{name}_{mname}", "reference": ref}, source)
        flights.append(conf.flight)
        mission_tables.append((mname, ref))
        controller = conf.controller if controller is None else controller
        platform = conf.platform
    if not flights:
        raise d.error("[[design.mission]] is empty. Fix: add at least one flight, e.g. kind = \"hover\".")
    if platform.parts is None or platform.parts.battery is None:
        raise top.error("the vehicle has no [parts.*] with a [parts.battery]. Fix: describe it by its parts "
                        "(docs/vehicles.md); the design replaces its motor, propeller and battery.")
    if cells is None:
        cells = [platform.parts.battery.cells]
    if not cells or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in cells):
        raise d.fail("cells", cells, "expected whole series cell counts >= 1", "write e.g. cells = [3, 4]")
    variables = _variables(d.table("variables", required=True, fix="with at least one variable"), platform)
    layout = data.get("platform", {}).get("layout", "star") if isinstance(data.get("platform"), dict) else None
    if any(v.name.startswith("azimuth_") for v in variables) and layout != "star":
        raise d.error(f"[design.variables.azimuth] moves the arms, but [platform] layout = {layout!r} places them "
                      "itself. Fix: give layout = \"star\" (with gamma_deg) to design the arm azimuths.")
    constraints = _constraints(d.table("constraints"))
    r = d.table("randomize")
    members = r.integer("members", 4, minimum=1)
    seed = r.integer("seed", 0)
    rand = Randomization(**{k: r.number(k, 0.0) for k in ("mass", "inertia", "c_f", "c_tau")})
    r.check_unknown()
    fam = d.table("propeller")
    propellers = PropellerFamily(**{k: fam.number(k) for k in list(fam.data)}) if fam.data else PropellerFamily()
    bat = d.table("battery")
    bkw = {k: (tuple(bat.vector(k, 3)) if k == "size_ref" else bat.number(k)) for k in list(bat.data)}
    try:
        batteries = BatteryFamily(**bkw)
    except TypeError as err:
        raise bat.error(f"[design.battery]: {err}. Fix: use specific_mass, cell_resistance, c_rate, size_ref, "
                        "mass_ref.") from None
    tube = d.table("arm_tube")
    try:
        arm_tubes = ArmTubeFamily(**{k: tube.number(k) for k in list(tube.data)}) if tube.data else ArmTubeFamily()
    except TypeError as err:
        raise tube.error(f"[design.arm_tube]: {err}. Fix: use wall [m], density [kg/m^3], modulus [Pa].") from None
    except ValueError as err:
        raise tube.error(f"[design.arm_tube]: {err}") from None
    uses_tube = any(v.name == "arm_tube_diameter" for v in variables) or any(
        c.measure == "arm_deflection" for c in constraints)
    if uses_tube and platform.parts.arm is None:
        raise d.error("arm_tube_diameter / arm_deflection need the vehicle's [parts.arm]. Fix: describe its arms "
                      "(docs/vehicles.md).")
    for var in variables:
        if var.name == "arm_tube_diameter" and not var.lower > 2 * arm_tubes.wall:
            raise d.table("variables").table("arm_tube_diameter").fail(
                "lower", var.lower, f"a tube of wall {arm_tubes.wall} m needs an outer diameter above {2 * arm_tubes.wall} m",
                "raise the lower bound or thin [design.arm_tube] wall")
    o = d.table("optimize")
    b = d.table("baseline")
    p = d.table("pareto")
    v = d.table("verify")
    pm = p.get("measure", str, None)
    settings = DesignSettings(
        iterations=o.integer("iterations", 60, minimum=1), rounds=o.integer("rounds", 4, minimum=1),
        learning_rate=o.number("learning_rate", 0.05, positive=True), rho=o.number("rho", 0.3, positive=True),
        tighten=_tighten(o),
        budget_factor=b.number("budget_factor", 10.0, positive=True), popsize=b.integer("popsize", None, minimum=4),
        seeds=tuple(int(s) for s in b.get("seeds", list, [0])),
        pareto_measure=pm, pareto_bounds=tuple(p.vector("bounds", None, [])),
        pareto_iterations=p.integer("iterations", 30, minimum=1),
        physics=v.boolean("physics", True), physics_duration=v.number("physics_duration", 3.0, positive=True),
        control_rate=v.number("control_rate", 250.0, positive=True),
        sensors=dict(v.get("sensors", dict, {})), rotor_losses=v.boolean("rotor_losses", True),
        loss_settle=v.number("loss_settle", 3.0, positive=True, fix="seconds after a loss before it is judged"),
        quick=quick)
    b.get("method", str, "cma")
    for t in (o, b, p, v, d):
        t.check_unknown(("mission",) if t is d else ())
    if pm is not None:
        if pm not in {c.measure for c in constraints}:
            raise p.fail("measure", pm, "the swept measure must be one of the constraints",
                         f"add [design.constraints.{pm}] or sweep one of {[c.measure for c in constraints]}")
        if len(settings.pareto_bounds) < 2:
            raise p.fail("bounds", list(settings.pareto_bounds), "a front needs at least 2 bounds",
                         "give e.g. bounds = [1.8, 2.2, 2.6]")
    try:
        problem = CodesignProblem(platform=platform, controller=controller, flights=tuple(flights),
                                  motors=stack_motors(motors), keys=member_keys(seed, members),
                                  motor_names=tuple(motors), cells=tuple(int(c) for c in cells),
                                  variables=variables, objective=objective, constraints=constraints,
                                  randomization=rand, propellers=propellers, batteries=batteries,
                                  arm_tubes=arm_tubes,
                                  hover_tilt_deg=hover_tilt, payload_twr=payload_twr)
    except ValueError as err:
        raise d.error(f"[design]: {err}") from None
    return DesignConfig(name=name, source=source, problem=problem, settings=settings, missions=mission_tables,
                        raw=data)


MISSING_MISSION: list = []


def load_design(path: str | Path, quick: bool = False) -> DesignConfig:
    """Read a design file (:func:`design_from_dict`); ``quick`` applies ``[design.quick]``.

    Raises:
        ConfigError: a TOML syntax error or an invalid key (named, with the fix).
    """
    path = Path(path)
    data = read_toml(path)
    try:
        return design_from_dict(data, str(path), quick=quick)
    except ValueError as err:
        if isinstance(err, ConfigError):
            raise
        raise ConfigError(f"{path}: {err}") from None
