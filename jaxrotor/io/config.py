"""TOML configuration of a flight: platform, controller, allocator, actuators, reference, solver.

One loader, :func:`load`, turns a TOML file into a :class:`FlightSpec`. Every
mistake (missing key, wrong type, bad value, unknown key or preset) raises a
:class:`ConfigError` whose message names the file, the key, the bad value and
the fix. Example (``configs/paper_reproduction.toml``)::

    name = "paper_reproduction"
    compare = "paper_realistic.toml"       # optional: a second flight drawn against this one

    [platform]
    preset = "paper_hexarotor"             # or star_platform keywords (n, arm_length, ...)

    [controller]
    kind = "fully_actuated"                # or "underactuated"
    K_p = [7.0, 7.0, 60.0]                 # Table III (omitted gains take their defaults)

    [allocator]
    kind = "pseudo_inverse"                # "clip" | "torque_priority"

    [actuators]
    motor = "ideal"                        # or "first_order" with time_constant [s]

    [reference]
    kind = "paper_maneuver"                # "figure_eight" | "circle" | "hover"

    [solver]
    adaptive = true
    rtol = 1e-9
    atol = 1e-11
    save_dt = 0.01
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "FlightSpec", "load", "loads", "from_dict", "SOLVERS"]


class ConfigError(ValueError):
    """A configuration mistake; the message names file, key, value and fix."""


SOLVERS = ("tsit5", "dopri5", "dopri8", "bosh3", "heun", "euler")
_MISSING = object()


@dataclasses.dataclass
class FlightSpec:
    """A fully built flight description (the objects :func:`jaxrotor.simulate.simulate` takes).

    Attributes:
        name: run name (output folder).
        platform, controller, allocator, actuators, reference, integrator: the loop's parts.
        save_dt: output period [s]. t1: final time [s] (``None``: the reference's duration).
        compare: optional second :class:`FlightSpec` flown for comparison.
        source: where it came from (file path or ``"<builtin>"``).
        raw: the parsed TOML table.
    """

    name: str
    platform: Any
    controller: Any
    allocator: Any
    actuators: Any
    reference: Any
    integrator: Any
    save_dt: float
    t1: float | None
    compare: "FlightSpec | None"
    source: str
    raw: dict


class _Table:
    """Typed access to one TOML table with error messages that locate the key."""

    def __init__(self, data: Any, source: str, path: str):
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: `{path}` must be a table, got {type(data).__name__} {data!r}. "
                              f"Fix: write it as [{path}] with key = value lines.")
        self.data, self.source, self.path = data, source, path
        self.used: set[str] = set()

    def key(self, k: str) -> str:
        return f"{self.path}.{k}" if self.path else k

    def fail(self, k: str, value: Any, why: str, fix: str) -> ConfigError:
        return ConfigError(f"{self.source}: key `{self.key(k)}` = {value!r} is invalid: {why}. Fix: {fix}.")

    def get(self, k: str, kind: type | tuple, default: Any = _MISSING, fix: str = ""):
        self.used.add(k)
        if k not in self.data:
            if default is _MISSING:
                raise ConfigError(f"{self.source}: missing key `{self.key(k)}`. Fix: add it"
                                  + (f" ({fix})" if fix else "") + ".")
            return default
        v = self.data[k]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in kinds):
            names = " or ".join(t.__name__ for t in kinds)
            raise self.fail(k, v, f"expected {names}, got {type(v).__name__}", fix or f"give a {names}")
        return v

    def number(self, k: str, default: Any = _MISSING, positive: bool = False, fix: str = "") -> float:
        v = self.get(k, float, default, fix)
        if v is None:
            return v
        if not math.isfinite(v) or (positive and v <= 0):
            raise self.fail(k, v, "must be a finite number" + (" > 0" if positive else ""), fix or "give a positive number")
        return v

    def vector(self, k: str, n: int | None = None, default: Any = _MISSING, fix: str = ""):
        v = self.get(k, (list, float), default, fix)
        if isinstance(v, float):
            return v
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            raise self.fail(k, v, "expected a list of numbers", fix or "write e.g. [1.0, 2.0, 3.0]")
        if n is not None and len(v) != n:
            raise self.fail(k, v, f"expected {n} numbers, got {len(v)}", fix or f"give exactly {n} numbers")
        return [float(x) for x in v]

    def choice(self, k: str, options, default: Any = _MISSING) -> str:
        v = self.get(k, str, default, f"one of {', '.join(options)}")
        if v not in options:
            raise self.fail(k, v, "unknown choice", f"use one of {', '.join(repr(o) for o in options)}")
        return v

    def check_unknown(self, extra_ok: tuple[str, ...] = ()):
        unknown = set(self.data) - self.used - set(extra_ok)
        if unknown:
            k = sorted(unknown)[0]
            raise ConfigError(f"{self.source}: unknown key `{self.key(k)}` = {self.data[k]!r}. Fix: remove it or "
                              f"correct the spelling; valid keys here: {', '.join(sorted(self.used | set(extra_ok)))}.")


def _controller(t: _Table):
    from ..control import GAIN_NAMES, FullyActuatedSE3, UnderactuatedSE3

    kind = t.choice("kind", ("fully_actuated", "underactuated"), "fully_actuated")
    gains = {}
    for g in GAIN_NAMES:
        if g in t.data:
            v = t.vector(g, 3, fix="give 3 non-negative diagonal gains, e.g. [7.0, 7.0, 60.0]")
            vals = [v] * 3 if isinstance(v, float) else v
            if any(x < 0 for x in vals):
                raise t.fail(g, v, "gains must be >= 0", "give non-negative gains")
            gains[g] = vals
    t.check_unknown()
    cls = FullyActuatedSE3 if kind == "fully_actuated" else UnderactuatedSE3
    return cls(**gains)


def _allocator(t: _Table):
    from ..allocators import Clip, PseudoInverse, TorquePriority

    kind = t.choice("kind", ("pseudo_inverse", "clip", "torque_priority"), "pseudo_inverse")
    t.check_unknown()
    return {"pseudo_inverse": PseudoInverse, "clip": Clip, "torque_priority": TorquePriority}[kind]()


def _actuators(t: _Table):
    from ..dynamics import Actuators, FirstOrderMotor, FirstOrderServo, IdealMotor, IdealServo

    motor_kind = t.choice("motor", ("ideal", "first_order"), "ideal")
    if motor_kind == "first_order":
        motor = FirstOrderMotor(t.number("time_constant", positive=True, fix="the motor time constant in s, e.g. 0.03"))
    else:
        motor = IdealMotor()
    servo_kind = t.choice("servo", ("ideal", "first_order"), "ideal")
    if servo_kind == "first_order":
        servo = FirstOrderServo(t.number("servo_time_constant", 0.05, positive=True),
                                t.number("servo_rate_limit", 6.0, positive=True))
    else:
        servo = IdealServo()
    t.check_unknown()
    return Actuators(motor=motor, servo=servo)


def _reference(t: _Table):
    from .. import reference as R

    kind = t.choice("kind", ("paper_maneuver", "figure_eight", "circle", "hover"))
    if kind == "paper_maneuver":
        ref = R.paper_maneuver(
            takeoff_time=t.number("takeoff_time", 8.0, positive=True),
            landing_time=t.number("landing_time", 8.0, positive=True),
            total_time=t.number("total_time", 45.0, positive=True),
            altitude=t.number("altitude", 1.0, positive=True),
            period=t.number("period", 30.0, positive=True, fix="the figure-eight period in s (paper: 30)"),
            amplitude=t.vector("amplitude", 2, [1.0, 1.0]),
        )
    elif kind == "figure_eight":
        ref = R.FigureEight(t.number("duration", positive=True), center=t.vector("center", 3, [0.0, 0.0, 1.0]),
                            amplitude=t.vector("amplitude", 2, [1.0, 1.0]),
                            period=t.number("period", 30.0, positive=True))
    elif kind == "circle":
        ref = R.Circle(t.number("duration", positive=True), start=t.vector("start", 3, [0.0, 0.0, 1.0]),
                       radius=t.number("radius", 1.0, positive=True), period=t.number("period", 10.0, positive=True))
    else:
        ref = R.Hover(t.vector("position", 3, [0.0, 0.0, 1.0]), t.number("duration", positive=True))
    t.check_unknown()
    return ref


def _solver(t: _Table):
    import diffrax

    from ..integrate import Integrator

    method = t.choice("method", SOLVERS, "tsit5")
    solver = {"tsit5": diffrax.Tsit5, "dopri5": diffrax.Dopri5, "dopri8": diffrax.Dopri8, "heun": diffrax.Heun,
              "bosh3": diffrax.Bosh3, "euler": diffrax.Euler}[method]()
    adaptive = t.get("adaptive", bool, True)
    integ = Integrator(solver=solver, adaptive=adaptive, dt=t.number("dt", 1e-3, positive=True),
                       rtol=t.number("rtol", 1e-9, positive=True), atol=t.number("atol", 1e-11, positive=True),
                       max_steps=int(t.number("max_steps", 200_000, positive=True)))
    save_dt = t.number("save_dt", 0.01, positive=True, fix="the output period in s, e.g. 0.01")
    t1 = t.number("t1", None, positive=True)
    t.check_unknown()
    return integ, save_dt, t1


def from_dict(data: dict, source: str = "<dict>", base_dir: Path | None = None) -> FlightSpec:
    """Build a :class:`FlightSpec` from a parsed TOML mapping (see the module docstring)."""
    from .platform_table import platform_from_table

    top = _Table(data, source, "")
    name = top.get("name", str, Path(source).stem if source.endswith(".toml") else "flight")
    top.get("description", str, "")
    if "platform" not in data:
        raise ConfigError(f"{source}: missing table `[platform]`. Fix: add [platform] with preset = \"paper_hexarotor\" "
                          "or the star_platform keywords.")
    top.used.add("platform")
    try:
        platform = platform_from_table(data["platform"], source)
    except ConfigError:
        raise
    except ValueError as err:  # the message already names the file, the key, the value and the fix
        raise ConfigError(str(err)) from None
    if "reference" not in data:
        raise ConfigError(f"{source}: missing table `[reference]`. Fix: add [reference] with kind = "
                          "\"paper_maneuver\" (or figure_eight, circle, hover).")
    sections = {}
    for sec, builder in (("controller", _controller), ("allocator", _allocator), ("actuators", _actuators),
                         ("reference", _reference)):
        top.used.add(sec)
        sections[sec] = builder(_Table(data.get(sec, {}), source, sec))
    top.used.add("solver")
    integ, save_dt, t1 = _solver(_Table(data.get("solver", {}), source, "solver"))
    compare = None
    cmp_name = top.get("compare", str, None)
    if cmp_name is not None:
        path = (base_dir or Path(".")) / cmp_name
        if not path.exists():
            raise top.fail("compare", cmp_name, f"no such file {path}", "name a TOML file next to this one")
        compare = load(path, _depth=1)
    top.check_unknown()
    return FlightSpec(name=name, platform=platform, controller=sections["controller"], allocator=sections["allocator"],
                      actuators=sections["actuators"], reference=sections["reference"], integrator=integ,
                      save_dt=save_dt, t1=t1, compare=compare, source=source, raw=data)


def loads(text: str, source: str = "<string>", base_dir: Path | None = None) -> FlightSpec:
    """Parse TOML text into a :class:`FlightSpec`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{source}: not valid TOML ({err}). Fix: check the syntax at that line.") from None
    return from_dict(data, source, base_dir)


def load(path: str | Path, _depth: int = 0) -> FlightSpec:
    """Load a TOML flight configuration file into a :class:`FlightSpec`."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such configuration file. Fix: pass the path of a TOML file (see configs/).")
    spec = loads(path.read_text(), str(path), path.parent)
    if _depth and spec.compare is not None:
        raise ConfigError(f"{path}: key `compare` is only allowed one level deep. Fix: remove it from {path.name}.")
    return spec
