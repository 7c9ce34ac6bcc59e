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
    position = [0.0, 0.0, 1.0]             # initial state (each omitted: the reference's first sample,
    velocity = [0.0, 0.0, 0.0]             # at rest): m, m/s; attitude as roll_deg, pitch_deg,
    yaw_deg = 30.0                         # yaw_deg (deg, R = R_z R_y R_x) or quaternion = [w, x, y, z];
    body_rates = [0.0, 0.0, 0.0]           # rad/s, body frame; rotor speeds at hover
    max_saturation = 0.05                  # verdict thresholds (jaxrotor.verdict.VerdictThresholds):
    max_position_error = 0.5               # share of time at a rotor bound, tracking floor [m],
    position_error_fraction = 0.25         # its share of the reference's extent, attitude [rad],
    max_attitude_error = 0.35              # time not judged after the start and each jump [s],
    settle_time = 1.0                      # growing-envelope ratio and windows
    error_growth = 3.0
    growth_windows = 4
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
    FirstOrderMotor,
    check_rotor_inertia,
)
from ..flight import DivergenceLimits, Flight
from ..integrate import Integrator
from ..tilting import check_tilt_flight
from ..verdict import TOML_KEYS as VERDICT_TOML_KEYS
from ..verdict import VerdictThresholds
from . import robust_config
from .platform_table import platform_from_table
from .toml import ConfigError, Table, parse_toml, read_toml

__all__ = ["ConfigError", "FlightConfig", "load", "loads", "from_dict", "SOLVERS", "FLIGHT_TABLES", "VERDICT_KEYS"]

# Kinds of classes defined in jaxrotor.dynamics (motors, servos) and of the diffrax solvers, registered here,
# by the loader that names them (jaxrotor.registry); the motor and servo lines belong next to their classes.
for _name, _solver in (("tsit5", diffrax.Tsit5), ("dopri5", diffrax.Dopri5), ("dopri8", diffrax.Dopri8),
                       ("bosh3", diffrax.Bosh3), ("heun", diffrax.Heun), ("euler", diffrax.Euler)):
    registry.register("solver", _name, _solver, doc=f"diffrax.{_solver.__name__}")

#: The ``[solver] kind`` choices (the diffrax solvers registered above).
SOLVERS = tuple(registry.kinds("solver"))

#: The tables of a flight configuration.
FLIGHT_TABLES = ("platform", "controller", "allocator", "actuators", "reference", "solver", "flight")

#: ``[flight]`` keys of the verdict thresholds (the :class:`~jaxrotor.verdict.VerdictThresholds` fields).
VERDICT_KEYS = VERDICT_TOML_KEYS


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
        thresholds: the :class:`~jaxrotor.verdict.VerdictThresholds` the flight's verdict is judged by
            (``[flight]`` keys :data:`VERDICT_KEYS`).
    """
    name: str
    platform: Any
    controller: Any
    flight: Any
    compare: "FlightConfig | None" = None
    source: str = "<builtin>"
    raw: dict = dataclasses.field(default_factory=dict)
    thresholds: VerdictThresholds = dataclasses.field(default_factory=VerdictThresholds)

    def with_t1(self, t1: float | None) -> "FlightConfig":
        """The same configuration (and comparison) ending at ``t1`` [s] (``None``: the reference's end).

        Raises:
            ConfigError: ``t1`` is not a finite time after the flight's start."""
        if t1 is not None and not (isinstance(t1, (int, float)) and math.isfinite(t1) and t1 > self.flight.t0):
            raise ConfigError(f"{self.source}: t1 = {t1!r} is invalid: the end time must be finite and after t0 = "
                              f"{self.flight.t0} s. Fix: pass a finite end time in s, e.g. --t1 5.0.")
        compare = None if self.compare is None else self.compare.with_t1(t1)
        return dataclasses.replace(self, flight=dataclasses.replace(self.flight, t1=t1), compare=compare)


#: ``[controller]`` keys of the gain choice (:func:`_controller`): ``gains`` and the :class:`~jaxrotor.gains.GainSpec`.
GAIN_KEYS = {"bandwidth_position": "position_bandwidth", "bandwidth_attitude": "attitude_bandwidth",
             "bandwidth_yaw": "yaw_bandwidth", "damping": "damping", "integral_ratio": "integral",
             "position_integral_ratio": "position_integral", "vertical_integral_ratio": "vertical_integral"}


def _controller(t: Table):
    """``[controller]``: a registered ``"controller"`` kind (default ``fully_actuated``) and its gain choice.

    ``gains = "auto"`` (the default when no gain ``K_*`` is given) computes the gains from the vehicle and
    the flight (:func:`jaxrotor.gains.auto_gains`, with ``bandwidth_position``, ``bandwidth_attitude``,
    ``bandwidth_yaw`` [rad/s], ``damping`` and ``integral_ratio``); gains given as ``K_*`` replace the
    computed ones. ``gains = "default"`` keeps the controller's built-in gains (Table III for
    ``fully_actuated``) except the ones given.

    Returns:
        ``(controller, spec, given)``: the controller, the :class:`~jaxrotor.gains.GainSpec` when the gains are
        computed (``None`` otherwise), and the names of the gains the table gives.
    """
    from ..control import GAIN_NAMES
    from ..gains import GainSpec

    mode = t.get("gains", str, None)
    given = tuple(g for g in GAIN_NAMES if g in t.data)
    if mode is None:
        mode = "default" if given else "auto"
    if mode not in ("auto", "default"):
        raise t.fail("gains", mode, "unknown gain choice", 'write gains = "auto" (from the vehicle) or gains = '
                     '"default" (the controller\'s built-in gains), or give the six K_* gains')
    spec_kw = {}
    for key, field in GAIN_KEYS.items():
        v = t.number(key, None, fix="a number, e.g. 8.0 rad/s for a bandwidth, 0.8 for damping, 0.2 for integral_ratio")
        if v is not None:
            if mode != "auto":
                raise t.fail(key, v, 'it sets a bandwidth of the computed gains, but gains = "default"',
                             'write gains = "auto" or remove the key')
            spec_kw[field] = v
    controller = t.build("controller", "fully_actuated")  # the keys above are marked used: not refused
    if mode != "auto":
        return controller, None, given
    try:
        spec = GainSpec(**spec_kw)
    except ValueError as err:
        raise t.error(f"[{t.path}]: {err}") from None
    return controller, spec, given


def _auto_gains(t: Table, controller, spec, given, platform, flight):
    """``controller`` with :func:`jaxrotor.gains.auto_gains` for ``platform`` and ``flight``, the ``given`` gains kept."""
    from ..gains import with_auto_gains

    if spec is None:
        return controller
    try:
        auto = with_auto_gains(controller, platform, flight, spec)
    except ValueError as err:
        raise t.error(f"[controller] gains = \"auto\": {err}") from None
    if given:
        import equinox as eqx

        auto = eqx.tree_at(lambda c: tuple(getattr(c, g) for g in given), auto,
                           tuple(getattr(controller, g) for g in given))
    return auto


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


def _spins(platform) -> bool:
    """Whether ``platform`` has a (concrete) rotor spin inertia ``J_r > 0``, whose reaction needs a motor speed state."""
    import numpy as np

    J_r = getattr(platform, "rotor_inertia", None)
    try:
        return J_r is not None and bool(np.any(np.asarray(J_r) > 0))
    except Exception:  # a traced value: no default is chosen from it
        return False


def _actuators(t: Table, platform=None):
    """``[actuators.motor]``, ``[actuators.servo]``: registered ``"motor"`` / ``"servo"`` kinds (default ``ideal``).

    Without an ``[actuators.motor]`` table, a platform with rotor spin inertia (every parts-built preset)
    flies ``first_order`` with its default 30 ms time constant: the spin-up reaction ``J_r omega_dot``
    needs a motor with a speed state (:func:`jaxrotor.dynamics.check_rotor_inertia`).
    """
    _old_actuator_strings(t)
    t.moved("time_constant", "actuators.motor.time_constant")
    t.moved("servo_time_constant", "actuators.servo.time_constant")
    t.moved("servo_rate_limit", "actuators.servo.rate_limit")
    motor_table = t.table("motor")
    if "motor" not in t.data and platform is not None and _spins(platform):
        motor = FirstOrderMotor()
    else:
        motor = motor_table.build("motor", "ideal")
    servo = t.table("servo").build("servo", "ideal")
    t.check_unknown()
    return Actuators(motor=motor, servo=servo)


def _reference(t: Table, flight: Table):
    """``[reference]``: a registered ``"reference"`` kind (required).

    A list of lists (``points = [[0, 0, 1], [1, 0, 1]]`` of ``kind = "waypoints"``) is checked row
    by row and handed to the builder flat. A ``step`` without ``start`` starts at ``[flight] position``.
    """
    t.renamed("total_time", "reference.duration")
    t.renamed("length", "reference.duration")
    for key, value in list(t.data.items()):
        if isinstance(value, list) and value and all(isinstance(row, list) for row in value):
            for i, row in enumerate(value):
                if len(row) != len(value[0]) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                        and math.isfinite(x) for x in row):
                    raise t.fail(key, value, f"row {i} = {row!r} is not {len(value[0])} finite numbers like row 0",
                                 "give rows of equal length, e.g. [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]]")
            t.data[key] = [float(x) for row in value for x in row]
    if t.data.get("kind") == "step" and "start" not in t.data and "position" in flight:
        t.data["start"] = _vector3(flight, "position", "the initial position in m, e.g. [0.0, 0.0, 1.0]")
    return t.build("reference")


#: ``[flight]`` keys of the initial state (:func:`_initial_state`).
STATE_KEYS = ("position", "velocity", "roll_deg", "pitch_deg", "yaw_deg", "quaternion", "body_rates")


def _vector3(t: Table, k: str, fix: str) -> list[float] | None:
    """Key ``k`` as 3 finite numbers (``None`` when absent); one number is refused."""
    v = t.vector(k, 3, None, fix=fix)
    if isinstance(v, float):
        raise t.fail(k, v, "expected 3 numbers, got one number", fix)
    return v


def _initial_state(t: Table, platform, reference):
    """``[flight]`` initial state: ``position`` [m], ``velocity`` [m/s] (world frame), the attitude as
    ``roll_deg``, ``pitch_deg``, ``yaw_deg`` [deg] (``R = R_z(yaw) R_y(pitch) R_x(roll)``) or ``quaternion``
    ``[w, x, y, z]`` (normalised), ``body_rates`` [rad/s] (body frame).

    Each omitted quantity is the reference's at ``t = 0`` (its position, velocity and attitude) or zero
    (body rates); the rotor speeds are the hover speeds (:func:`jaxrotor.dynamics.initial_state`).
    ``None`` (the flight's own default start) when no key is given.

    Raises:
        ConfigError: a bad value, an angle given together with a quaternion, a zero quaternion, or
            ``attitude_deg`` (write the three angles as separate keys).
    """
    import jax
    import jax.numpy as jnp

    from ..dynamics import initial_state
    from ..so3 import rot_x, rot_y, rot_z

    if "attitude_deg" in t:
        raise t.fail("attitude_deg", t.data["attitude_deg"], "the initial attitude is given by separate angles",
                     "write roll_deg = ..., pitch_deg = ..., yaw_deg = ... (degrees, R = R_z(yaw) R_y(pitch) R_x(roll)) "
                     "or quaternion = [w, x, y, z]")
    if not any(k in t for k in STATE_KEYS):
        return None
    p = _vector3(t, "position", "the initial position in m, world frame, e.g. [0.0, 0.0, 1.0]")
    v = _vector3(t, "velocity", "the initial velocity in m/s, world frame, e.g. [0.0, 0.0, 0.0]")
    w = _vector3(t, "body_rates", "the initial body rates in rad/s, body frame, e.g. [0.0, 0.0, 0.0]")
    angles = {k: t.number(k, None, fix=f"the initial {k[:-4]} angle in degrees, e.g. 10.0")
              for k in ("roll_deg", "pitch_deg", "yaw_deg")}
    q = t.vector("quaternion", 4, None, fix="a unit quaternion [w, x, y, z], e.g. [1.0, 0.0, 0.0, 0.0]")
    given = [k for k, a in angles.items() if a is not None]
    if q is not None and given:
        raise t.fail("quaternion", q, f"the attitude is also given by `{t.key(given[0])}` = {angles[given[0]]!r}",
                     "give the attitude one way: either roll_deg, pitch_deg, yaw_deg or quaternion")
    if isinstance(q, float):
        raise t.fail("quaternion", q, "expected 4 numbers, got one number", "write [w, x, y, z], e.g. [1.0, 0.0, 0.0, 0.0]")
    if q is not None and not math.fsum(x * x for x in q) > 1e-24:
        raise t.fail("quaternion", q, "a zero quaternion is no rotation", "write a unit quaternion [w, x, y, z], "
                     "e.g. [1.0, 0.0, 0.0, 0.0] for level")
    dtype = platform.mass.dtype
    with jax.ensure_compile_time_eval():
        ref0 = reference(jnp.zeros((), dtype=dtype))
        if q is not None:
            qa = jnp.asarray(q, dtype=dtype)
            R = qa / jnp.linalg.norm(qa)
        elif given:
            r, pt, y = (math.radians(angles[k] or 0.0) for k in ("roll_deg", "pitch_deg", "yaw_deg"))
            R = rot_z(jnp.asarray(y, dtype)) @ rot_y(jnp.asarray(pt, dtype)) @ rot_x(jnp.asarray(r, dtype))
        else:
            R = ref0.R
        return initial_state(platform, p=ref0.p if p is None else p, R=R, v=ref0.v if v is None else v,
                             omega=w, rotor_speed="hover")


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


def _verdict_thresholds(t: Table) -> VerdictThresholds:
    """``[flight]`` verdict thresholds: the :class:`~jaxrotor.verdict.VerdictThresholds` fields (each omitted: its
    default)."""
    defaults = VerdictThresholds()
    kw = {}
    for k in VERDICT_KEYS:
        if k == "growth_windows":
            continue
        low = 1.0 if k == "error_growth" else 0.0
        kw[k] = t.number(k, getattr(defaults, k), fix=f"a number >= {low:g}, e.g. {getattr(defaults, k)}")
        if kw[k] < low:
            raise t.fail(k, kw[k], f"must be >= {low:g}", f"give a number >= {low:g}, e.g. {getattr(defaults, k)}")
    kw["growth_windows"] = t.integer("growth_windows", defaults.growth_windows, minimum=3,
                                     fix="the number of envelope windows, e.g. 4")
    try:
        return VerdictThresholds(**kw)
    except ValueError as err:
        raise t.error(str(err)) from None


def _flight_settings(t: Table, platform=None, reference=None) -> dict:
    """``[flight]``: output period, end time, runaway limits and the initial state (:func:`_initial_state`)."""
    out = dict(
        save_dt=t.number("save_dt", 0.01, positive=True, fix="the output period in s, e.g. 0.01"),
        t1=t.number("t1", None, positive=True, fix="the end time in s, or remove it to fly the whole reference"),
        limits=DivergenceLimits(
            max_position=t.number("max_position", 1e3, positive=True, fix="the largest |p| in m, e.g. 1000.0"),
            max_speed=t.number("max_speed", 1e3, positive=True, fix="the largest |v| in m/s, e.g. 1000.0"),
            max_rate=t.number("max_rate", 1e3, positive=True, fix="the largest |omega| in rad/s, e.g. 1000.0")),
    )
    if platform is not None:
        state0 = _initial_state(t, platform, reference)
        if state0 is not None:
            out["state0"] = state0
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
    controller_table = top.table("controller")
    controller, gain_spec, given_gains = _controller(controller_table)
    allocator = _allocator(top.table("allocator"))
    actuators = _actuators(top.table("actuators"), platform)
    try:
        check_rotor_inertia(platform, actuators)
    except ValueError as err:
        raise top.error(f"[actuators.motor]: {err}") from None
    flight_table = top.table("flight")
    reference = _reference(top.table("reference"), flight_table)
    integrator = _integrator(top.table("solver"))
    thresholds = _verdict_thresholds(flight_table)
    settings = _flight_settings(flight_table, platform, reference)
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
    flight = _faults(top, flight, platform)  # [[faults]]
    flight = _aero(top, flight, platform)  # [aero]
    controller = _auto_gains(controller_table, controller, gain_spec, given_gains, platform, flight)
    compare = None
    cmp_name = top.get("compare", str, None)
    if cmp_name is not None:
        path = (base_dir or Path(".")) / cmp_name
        if not path.exists():
            raise top.fail("compare", cmp_name, f"no such file {path}", "name a TOML file next to this one")
        compare = load(path, _depth=1)
    top.check_unknown()
    return FlightConfig(name=name, platform=platform, controller=controller, flight=flight, compare=compare,
                        source=source, raw=data, thresholds=thresholds)


def _aero(top: Table, flight, platform):
    """``[aero]``: the :class:`jaxrotor.aero.Aerodynamics` of the flight (keys as its arguments:
    ``parasitic_drag``, ``parasitic_drag_linear``, ``rotor_drag``, ``induced_inflow``, ``translational_lift``,
    ``flapping``, ``ground_effect``, ``rotor_radius``, ``floor_height``, ``ground_effect_max``).

    Raises:
        ConfigError: a bad or unknown key, or a model the platform cannot carry (the ground effect without a
            rotor radius).
    """
    if "aero" not in top:
        return flight
    aero = top.table("aero").build("aero", "quasi_steady")
    try:
        aero.check(platform)
    except ValueError as err:
        raise top.error(f"[aero]: {err}") from None
    return dataclasses.replace(flight, aero=aero)


#: Keys of one ``[[faults]]`` table.
FAULT_KEYS = ("kind", "rotor", "time", "effectiveness", "detection_delay", "release_yaw")


def _faults(top: Table, flight, platform):
    """``[[faults]]``: an array of tables, one fault event each (:class:`jaxrotor.faults.Faults`).

    Keys: ``kind`` (``rotor_loss`` | ``rotor_partial`` | ``rotor_stuck`` | ``servo_stuck``), ``rotor``
    (numbered from 1, as the paper numbers them), ``time`` [s], ``effectiveness`` (``rotor_partial``: in
    ``[0, 1]``), ``detection_delay`` [s] (default 0.05), ``release_yaw`` (``"auto"`` | ``"always"`` |
    ``"never"``, the flight computer's yaw policy once it knows of a fault; one value for the flight).
    """
    from ..faults import FAULT_KINDS, YAW_POLICIES, Faults

    top.used.add("faults")
    raw = top.data.get("faults")
    if raw is None:
        return flight
    if not isinstance(raw, list) or not raw:
        raise top.fail("faults", raw, "faults are an array of tables", "write one [[faults]] table per event, "
                       "with kind, rotor, time")
    kinds, rotors, times, etas, delays, policies = [], [], [], [], [], set()
    for i, item in enumerate(raw):
        t = Table(item, top.source, f"faults[{i}]")
        kind = t.choice("kind", FAULT_KINDS)
        rotor = t.integer("rotor", fix=f"the rotor's number, 1 to {platform.n_rotors}")
        if not 1 <= rotor <= platform.n_rotors:
            raise t.fail("rotor", rotor, f"the vehicle has rotors 1 to {platform.n_rotors} (numbered from 1)",
                         f"give a rotor number from 1 to {platform.n_rotors}")
        time_ = t.number("time", fix="the time of the fault in s")
        eta = t.number("effectiveness", 0.0 if kind == "rotor_loss" else 1.0,
                       fix="the fraction of thrust the rotor keeps, in [0, 1]")
        if kind == "rotor_partial" and "effectiveness" not in t:
            raise t.error(f"[[faults]] #{i + 1}: kind = \"rotor_partial\" needs `effectiveness`. Fix: give the "
                          "fraction of thrust the rotor keeps, e.g. effectiveness = 0.5.")
        if not 0.0 <= eta <= 1.0:
            raise t.fail("effectiveness", eta, "an effectiveness lies in [0, 1]", "give e.g. effectiveness = 0.5")
        if "release_yaw" in t:
            policies.add(t.choice("release_yaw", YAW_POLICIES))
        delay = t.number("detection_delay", 0.05, fix="the detection delay in s, e.g. 0.05")
        if delay < 0:
            raise t.fail("detection_delay", delay, "a delay is >= 0 s", "give e.g. detection_delay = 0.05")
        t.check_unknown()
        kinds.append(kind)
        rotors.append(rotor - 1)
        times.append(time_)
        etas.append(eta)
        delays.append(delay)
    if len(policies) > 1:
        raise top.fail("faults.release_yaw", sorted(policies), "one yaw policy holds for the whole flight",
                       "give the same release_yaw in every [[faults]] table (or in one of them)")
    faults = Faults(tuple(kinds), rotors, times, etas, delays, release_yaw=policies.pop() if policies else "auto")
    flight = dataclasses.replace(flight, faults=faults)
    try:
        flight.check_faults(platform)
    except ValueError as err:
        raise top.error(f"[[faults]]: {err}") from None
    return flight


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
