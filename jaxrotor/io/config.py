"""TOML configuration of a flight: the vehicle, its controller and one :class:`~jaxrotor.flight.Flight`.

One loader, :func:`load`, turns a TOML file into a :class:`FlightConfig`, whose
``flight`` is the :class:`~jaxrotor.flight.Flight` every engine flies
(:func:`jaxrotor.fly`). Every mistake (missing key, wrong type, bad value,
unknown key or preset, a key of an older spelling) raises a
:class:`~jaxrotor.io.toml.ConfigError` whose message names the file, the key, the
bad value and the fix. One choice key, ``kind``, selects a strategy in every table:
the kinds and their options are those registered next to their classes
(:mod:`jaxrotor.registry`; ``docs/closed_loop.md`` lists them).
Example (``configs/paper_realistic.toml``)::

    name = "paper_realistic"
    compare = "other.toml"                 # optional: a second flight drawn against this one

    [platform]
    preset = "paper_hexarotor"             # or star_platform keywords (n, arm_length, ...)

    [controller]
    kind = "fully_actuated"                # or "underactuated"
    K_p = [7.0, 7.0, 60.0]                 # Table III (omitted gains take their defaults)

    [allocator]
    kind = "clip"                          # "pseudo_inverse" | "clip" | "torque_priority"
                                           # tilting platforms: "extended_variable" (alpha_limits,
                                           # beta_limits, margin) | "cant_selection" (limits,
                                           # smoothness, margin, candidates); angles in rad

    [actuators.motor]
    kind = "first_order"                   # or "ideal" (default)
    time_constant = 0.03                   # s

    [actuators.servo]                      # tilt servos of a tilting platform
    kind = "first_order"                   # or "ideal" (default)
    time_constant = 0.05                   # s
    rate_limit = 6.0                       # rad/s

    [reference]
    kind = "paper_maneuver"                # "figure_eight" | "circle" | "hover"; full pose:
                                           # "pitch_hover" | "pitching_figure_eight" | "tilting_hex_maneuver"
    duration = 45.0                        # s

    [solver]
    kind = "tsit5"                         # dopri5 | dopri8 | bosh3 | heun | euler
    adaptive = true                        # false: fixed step dt (for gradients)
    rtol = 1e-9                            # omitted: follow the floating-point type
    atol = 1e-11

    [flight]
    save_dt = 0.01                         # output period [s]
    t1 = 20.0                              # end time [s] (default: the reference's end)
    max_position = 1000.0                  # runaway limits [m], [m/s], [rad/s]
    max_speed = 1000.0
    max_rate = 1000.0
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import diffrax

from .. import allocators as _allocators  # noqa: F401 - importing these modules registers their kinds
from .. import control as _control  # noqa: F401
from .. import reference as _references  # noqa: F401
from .. import registry
from ..dynamics import (
    Actuators,
)
from ..flight import DivergenceLimits, Flight
from ..integrate import Integrator
from ..tilting import check_tilt_flight
from . import robust_config
from .platform_table import platform_from_table
from .toml import ConfigError, Table, parse_toml, read_toml

__all__ = ["ConfigError", "FlightConfig", "load", "loads", "from_dict", "SOLVERS", "FLIGHT_TABLES"]

# Kinds of classes defined in jaxrotor.dynamics (motors, servos) and of the diffrax solvers, registered here,
# by the loader that names them (jaxrotor.registry); the motor and servo lines belong next to their classes.
for _name, _solver in (("tsit5", diffrax.Tsit5), ("dopri5", diffrax.Dopri5), ("dopri8", diffrax.Dopri8),
                       ("bosh3", diffrax.Bosh3), ("heun", diffrax.Heun), ("euler", diffrax.Euler)):
    registry.register("solver", _name, _solver, doc=f"diffrax.{_solver.__name__}")

#: The ``[solver] kind`` choices (the diffrax solvers registered above).
SOLVERS = tuple(registry.kinds("solver"))

#: The tables of a flight configuration.
FLIGHT_TABLES = ("platform", "controller", "allocator", "actuators", "reference", "solver", "flight")


@dataclasses.dataclass
class FlightConfig:
    """A loaded flight configuration: the vehicle, its controller and the :class:`~jaxrotor.flight.Flight`.

    ``fly(config.platform, config.controller, config.flight)`` flies it.

    Attributes:
        name: run name (the default output folder ``jaxrotor-out/<name>``).
        platform: the :class:`~jaxrotor.design.platform.Platform`.
        controller: the controller.
        flight: the :class:`~jaxrotor.flight.Flight` (reference, allocator, actuators,
            integrator, output period ``save_dt`` [s], end time ``t1`` [s], runaway limits).
        compare: optional second :class:`FlightConfig` flown for comparison.
        source: where it came from (a file path or ``"<builtin>"``).
        raw: the parsed TOML table (``{}`` for a configuration built in code).
    """
    name: str
    platform: Any
    controller: Any
    flight: Any
    compare: "FlightConfig | None" = None
    source: str = "<builtin>"
    raw: dict = dataclasses.field(default_factory=dict)

    def with_t1(self, t1: float | None) -> "FlightConfig":
        """The same configuration (and comparison) ending at ``t1`` [s] (``None``: the reference's end).

        Raises:
            ConfigError: ``t1`` is not a finite time after the flight's start."""
        if t1 is not None and not (isinstance(t1, (int, float)) and math.isfinite(t1) and t1 > self.flight.t0):
            raise ConfigError(f"{self.source}: t1 = {t1!r} is invalid: the end time must be finite and after t0 = "
                              f"{self.flight.t0} s. Fix: pass a finite end time in s, e.g. --t1 5.0.")
        compare = None if self.compare is None else self.compare.with_t1(t1)
        return dataclasses.replace(self, flight=dataclasses.replace(self.flight, t1=t1), compare=compare)


def _controller(t: Table):
    """``[controller]``: a registered ``"controller"`` kind (default ``fully_actuated``)."""
    return t.build("controller", "fully_actuated")


def _allocator(t: Table):
    """``[allocator]``: a registered ``"allocator"`` kind (default ``pseudo_inverse``)."""
    return t.build("allocator", "pseudo_inverse")


def _old_actuator_strings(t: Table) -> None:
    """The old string form ``motor = "first_order"`` names the new table ``[actuators.motor] kind = ...``."""
    for name in ("motor", "servo"):
        v = t.data.get(name)
        if isinstance(v, str):
            also = " and its time_constant" + (", rate_limit" if name == "servo" else "") if v == "first_order" else ""
            raise t.error(f"key `actuators.{name}` = {v!r} moved: write [actuators.{name}] kind = \"{v}\". Fix: "
                          f"replace `{name} = \"{v}\"` under [actuators] by a table [actuators.{name}] holding "
                          f"kind = \"{v}\"{also}.")


def _actuators(t: Table):
    """``[actuators.motor]``, ``[actuators.servo]``: registered ``"motor"`` / ``"servo"`` kinds (default ``ideal``)."""
    _old_actuator_strings(t)
    t.moved("time_constant", "actuators.motor.time_constant")
    t.moved("servo_time_constant", "actuators.servo.time_constant")
    t.moved("servo_rate_limit", "actuators.servo.rate_limit")
    motor = t.table("motor").build("motor", "ideal")
    servo = t.table("servo").build("servo", "ideal")
    t.check_unknown()
    return Actuators(motor=motor, servo=servo)


def _reference(t: Table):
    """``[reference]``: a registered ``"reference"`` kind (required)."""
    t.renamed("total_time", "reference.duration")
    t.renamed("length", "reference.duration")
    return t.build("reference")


def _integrator(t: Table):


    t.renamed("method", "solver.kind")
    t.moved("save_dt", "flight.save_dt")
    t.moved("t1", "flight.t1")
    solver = t.kind("solver", "tsit5")()  # the other keys of [solver] are the Integrator's
    integ = Integrator(solver=solver, adaptive=t.boolean("adaptive", True),
                       dt=t.number("dt", 1e-3, positive=True, fix="the fixed step in s, e.g. 0.01"),
                       rtol=t.number("rtol", None, positive=True), atol=t.number("atol", None, positive=True),
                       max_steps=t.integer("max_steps", 200_000, minimum=1))
    t.check_unknown()
    return integ


def _flight_settings(t: Table) -> dict:

    out = dict(
        save_dt=t.number("save_dt", 0.01, positive=True, fix="the output period in s, e.g. 0.01"),
        t1=t.number("t1", None, positive=True, fix="the end time in s, or remove it to fly the whole reference"),
        limits=DivergenceLimits(
            max_position=t.number("max_position", 1e3, positive=True, fix="the largest |p| in m, e.g. 1000.0"),
            max_speed=t.number("max_speed", 1e3, positive=True, fix="the largest |v| in m/s, e.g. 1000.0"),
            max_rate=t.number("max_rate", 1e3, positive=True, fix="the largest |omega| in rad/s, e.g. 1000.0")),
    )
    t.check_unknown()
    return out


def from_dict(data: dict, source: str = "<dict>", base_dir: Path | None = None) -> FlightConfig:
    """Build a :class:`FlightConfig` from a parsed TOML mapping (see the module docstring).

    Raises:
        ConfigError: naming the file, the key, the value and the fix.
    """
    top = Table(data, source, "")
    name = top.get("name", str, Path(source).stem if source.endswith(".toml") else "flight")
    top.get("description", str, "")
    if "platform" not in data:
        raise top.error("missing table `[platform]`. Fix: add [platform] with preset = \"paper_hexarotor\" "
                        "or the star_platform keywords.")
    top.used.update(("platform", "parts"))
    platform = platform_from_table(data["platform"], source, data.get("parts"))
    if "reference" not in data:
        raise top.error("missing table `[reference]`. Fix: add [reference] with kind = \"paper_maneuver\" "
                        "(or figure_eight, circle, hover).")
    controller = _controller(top.table("controller"))
    allocator = _allocator(top.table("allocator"))
    actuators = _actuators(top.table("actuators"))
    reference = _reference(top.table("reference"))
    integrator = _integrator(top.table("solver"))
    settings = _flight_settings(top.table("flight"))
    try:
        flight = Flight(reference=reference, allocator=allocator, actuators=actuators, integrator=integrator,
                        **settings)
    except ValueError as err:
        raise top.error(f"[flight]: {err}") from None
    try:
        check_tilt_flight(platform, controller, flight)  # tilting allocator, servo limits, full-pose reference
    except ValueError as err:
        raise top.error(f"[allocator]/[reference]: {err}") from None
    flight = robust_config.flight_tables(top, flight)  # [control], [sensors], [wind]
    compare = None
    cmp_name = top.get("compare", str, None)
    if cmp_name is not None:
        path = (base_dir or Path(".")) / cmp_name
        if not path.exists():
            raise top.fail("compare", cmp_name, f"no such file {path}", "name a TOML file next to this one")
        compare = load(path, _depth=1)
    top.check_unknown()
    return FlightConfig(name=name, platform=platform, controller=controller, flight=flight, compare=compare,
                        source=source, raw=data)


def loads(text: str, source: str = "<string>", base_dir: Path | None = None) -> FlightConfig:
    """Parse TOML text into a :class:`FlightConfig`."""
    return from_dict(parse_toml(text, source), source, base_dir)


def load(path: str | Path, _depth: int = 0) -> FlightConfig:
    """Load a TOML flight configuration file into a :class:`FlightConfig`."""
    path = Path(path)
    config = from_dict(read_toml(path), str(path), path.parent)
    if _depth and config.compare is not None:
        raise ConfigError(f"{path}: key `compare` is only allowed one level deep. Fix: remove it from {path.name}.")
    return config
