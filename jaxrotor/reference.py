"""Reference trajectories: position, velocity, acceleration, jerk and attitude as functions of time.

Every reference is an equinox Module called as ``ref(t) -> RefSample`` (pure JAX,
no Python branching on ``t``) and exposes ``duration`` and ``jump_times``, the
instants where a derivative the controller uses (velocity or acceleration) is
discontinuous, so integrators can avoid stepping across them.

Phases (local time ``tau`` from 0 to ``duration``):

* :class:`Hover` - hold a point.
* :class:`Transfer` - smooth point-to-point motion with a quintic minimum-jerk
  profile ``s(x) = 10 x^3 - 15 x^4 + 6 x^5``, ``x = tau / duration``: zero velocity
  and acceleration at both ends. :func:`takeoff` and :func:`landing` build it.
* :class:`FigureEight` - eq. (13): ``p = c + (A_x sin(2 pi tau / T), A_y sin(4 pi tau / T), 0)``
  with ``T = 30 s`` for the paper (``sin(pi t / 15)``, ``sin(2 pi t / 15)``; the printed
  second component lost its ``t``).
* :class:`Circle` - ``p = c + r (cos(2 pi tau / T) - 1, sin(2 pi tau / T), 0)`` (starts at ``c``).
* :class:`Sequence` - phases one after the other; the jump times are the phase
  boundaries where the motion is not smooth.
* :class:`Step` - hold ``start`` until ``time``, then ``target`` (an ideal step, or a
  minimum-jerk one of ``rise`` seconds); position and heading. Its
  :attr:`~AbstractReference.step_change` tells :mod:`jaxrotor.step_response` what to measure.
* :class:`Waypoints` - straight segments through ``k`` points, each flown with the
  minimum-jerk profile (timing from a peak ``speed`` or given ``segment_times``), an
  optional ``hold`` at every point.

Attitude references are constant (``R_r`` fixed, ``omega_r = 0``) for these phases.

Full-pose references (:class:`FullPose`) pair any of these position phases with an
attitude that is an independent function of time, for platforms that can hold an
attitude independent of their motion (fully actuated or tilting):

    R_r(t) = R_z(psi(t)) R_y(theta(t)) R_x(phi(t)),   omega_r = (R_r^T dR_r/dt)^vee,
    omega_dot_r = d omega_r / dt,

with the roll-pitch-yaw angles ``(phi, theta, psi)`` from an :class:`AbstractAttitude`
(:class:`ConstantAttitude`, :class:`AttitudeRamp` with a minimum-jerk profile,
:class:`SinusoidalAttitude`); ``omega_r`` and ``omega_dot_r`` are exact (forward-mode
derivatives in time). :func:`pitch_hover`, :func:`tilted_transfer`,
:func:`pitching_figure_eight` and :func:`tilting_hex_maneuver` build the standard ones.
"""

from __future__ import annotations

import abc
import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import ArrayLike, Float

from ._util import as_float as _f
from .registry import Option, register

__all__ = [
    "RefSample",
    "AbstractReference",
    "Hover",
    "Transfer",
    "FigureEight",
    "Circle",
    "Sequence",
    "StepChange",
    "Step",
    "Waypoints",
    "takeoff",
    "landing",
    "paper_maneuver",
    "AbstractAttitude",
    "ConstantAttitude",
    "AttitudeRamp",
    "SinusoidalAttitude",
    "FullPose",
    "pitch_hover",
    "tilted_transfer",
    "pitching_figure_eight",
    "tilting_hex_maneuver",
]


# TOML options shared by several reference kinds (``[reference]``, jaxrotor.registry)
_DURATION = Option(float, gt=0, unit="s", doc="the reference's duration")
_PERIOD = Option(float, gt=0, unit="s", doc="period of the figure-eight or circle")
_CENTER = Option(list, length=3, scalar=False, unit="m", doc="centre, world frame")
_AMPLITUDE = Option(list, length=2, scalar=False, unit="m", doc="figure-eight amplitudes (A_x, A_y)")
_PITCH = Option(float, unit="rad", doc="held pitch angle")
_PITCH_AMPLITUDE = Option(float, unit="rad", doc="amplitude of the pitch oscillation")
_RAMP = Option(float, gt=0, unit="s", doc="duration of each minimum-jerk pitch ramp")


class RefSample(eqx.Module):
    """Reference at one instant (world frame).

    Attributes:
        p: ``(3,)`` position [m].
        v: ``(3,)`` velocity [m/s].
        a: ``(3,)`` acceleration [m/s^2].
        j: ``(3,)`` jerk [m/s^3].
        R: ``(3, 3)`` reference attitude (body to world).
        omega: ``(3,)`` reference body rate [rad/s].
        omega_dot: ``(3,)`` reference body angular acceleration [rad/s^2].
        yaw: ``()`` heading [rad] for under-actuated controllers.
    """

    p: Float[Array, "3"]
    v: Float[Array, "3"]
    a: Float[Array, "3"]
    j: Float[Array, "3"]
    R: Float[Array, "3 3"]
    omega: Float[Array, "3"]
    omega_dot: Float[Array, "3"]
    yaw: Float[Array, ""]


class AbstractReference(eqx.Module):
    """A reference trajectory ``t -> RefSample``."""

    @abc.abstractmethod
    def __call__(self, t: Float[ArrayLike, ""]) -> RefSample:
        """Sample at time ``t`` [s] (local time for a phase)."""

    @property
    @abc.abstractmethod
    def duration(self) -> float:
        """Length [s]."""

    @property
    def jump_times(self) -> tuple[float, ...]:
        """Times where velocity or acceleration jump (none inside a smooth phase)."""
        return ()

    @property
    def is_full_pose(self) -> bool:
        """Whether the attitude is an independent function of time (not just a heading; static)."""
        return False

    @property
    def step_change(self) -> "StepChange | None":
        """The set-point change a step response is measured against (:class:`StepChange`), or ``None``.

        ``None`` for every reference but a step (:class:`Step`); a user's reference that steps
        returns its own :class:`StepChange` and gets the step metrics of :mod:`jaxrotor.step_response`.
        """
        return None

    def end_position(self) -> np.ndarray:
        """Position at the end of the phase (concrete numpy ``(3,)``; evaluated eagerly even inside a trace)."""
        with jax.ensure_compile_time_eval():
            return np.asarray(self(_f(self.duration)).p)


def _sample(p, v, a, j, yaw, R=None) -> RefSample:
    dtype = p.dtype
    z = jnp.zeros(3, dtype=dtype)
    if R is None:
        c, s = jnp.cos(yaw), jnp.sin(yaw)
        o, zz = jnp.ones_like(c), jnp.zeros_like(c)
        R = jnp.array([[c, -s, zz], [s, c, zz], [zz, zz, o]])
    return RefSample(p=p, v=v, a=a, j=j, R=R, omega=z, omega_dot=z, yaw=_f(yaw))


class _Phase(AbstractReference):
    """A single phase of fixed ``duration`` [s] (stored in the static field ``length``)."""

    length: eqx.AbstractVar[float]

    @property
    def duration(self) -> float:
        return self.length


def _positive(owner: str, name: str, value: float, example: str) -> float:
    """``float(value)``, or a ValueError naming ``owner.name`` unless it is finite and > 0."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{owner} parameter `{name}` = {value!r} is invalid: not a number. Fix: pass e.g. "
                         f"{example}.") from None
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{owner} parameter `{name}` = {value!r} is invalid: must be finite and > 0. Fix: pass "
                         f"e.g. {example}.")
    return value


def _finite(owner: str, name: str, value, shape: tuple, example: str) -> Array:
    """``value`` as a float array of ``shape``; a ValueError naming ``owner.name`` if it has another shape
    or (when concrete, i.e. not traced) a NaN or infinite entry."""
    try:
        arr = _f(value)
    except (TypeError, ValueError):
        raise ValueError(f"{owner} parameter `{name}` = {value!r} is invalid: not numbers. Fix: pass e.g. "
                         f"{example}.") from None
    if arr.shape != shape:
        raise ValueError(f"{owner} parameter `{name}` = {value!r} has shape {arr.shape}, expected {shape}. Fix: "
                         f"pass e.g. {example}.")
    if not isinstance(arr, jax.core.Tracer) and not bool(jnp.all(jnp.isfinite(arr))):
        raise ValueError(f"{owner} parameter `{name}` = {value!r} is invalid: contains NaN or infinity. Fix: "
                         f"pass finite values, e.g. {example}.")
    return arr


@register("reference", "hover", options={
    "position": Option(list, default=[0.0, 0.0, 1.0], length=3, scalar=False, unit="m", doc="held point, world frame"),
    "duration": _DURATION})
class Hover(_Phase):
    """Hold ``position`` [m] with heading ``yaw`` [rad] for ``duration`` seconds."""

    position: Array
    yaw: Array
    length: float = eqx.field(static=True)

    def __init__(self, position, duration: float, yaw: float = 0.0):
        self.position = _finite("Hover", "position", position, (3,), "[0.0, 0.0, 1.0]")
        self.yaw = _finite("Hover", "yaw", yaw, (), "0.0")
        self.length = _positive("Hover", "duration", duration, "8.0")

    def __call__(self, t: Float[ArrayLike, ""]) -> RefSample:
        z = jnp.zeros(3, dtype=self.position.dtype)
        return _sample(self.position, z, z, z, self.yaw)


class Transfer(_Phase):
    """Minimum-jerk straight-line move from ``start`` to ``end`` [m] in ``duration`` seconds.

    ``p(tau) = start + (end - start) s(tau / duration)``, ``s(x) = 10x^3 - 15x^4 + 6x^5``.
    Velocity and acceleration are zero at both ends.
    """

    start: Array
    end: Array
    yaw: Array
    length: float = eqx.field(static=True)

    def __init__(self, start, end, duration: float, yaw: float = 0.0):
        self.start = _finite("Transfer", "start", start, (3,), "[0.0, 0.0, 0.0]")
        self.end = _finite("Transfer", "end", end, (3,), "[0.0, 0.0, 1.0]")
        self.yaw = _finite("Transfer", "yaw", yaw, (), "0.0")
        self.length = _positive("Transfer", "duration", duration, "8.0")

    def __call__(self, t: Float[ArrayLike, ""]) -> RefSample:
        T = self.length
        x = jnp.clip(t / T, 0.0, 1.0)
        s = x**3 * (10 - 15 * x + 6 * x**2)
        ds = 30 * x**2 * (1 - x) ** 2 / T
        dds = 60 * x * (1 - x) * (1 - 2 * x) / T**2
        ddds = 60 * (1 - 6 * x + 6 * x**2) / T**3
        inside = (t >= 0) & (t <= T)
        d = self.end - self.start
        return _sample(self.start + d * s, d * ds * inside, d * dds * inside, d * ddds * inside, self.yaw)


def takeoff(position, altitude: float, duration: float, yaw: float = 0.0) -> Transfer:
    """Vertical minimum-jerk climb from ``position`` to ``altitude`` [m] above it... to ``z = altitude``."""
    p0 = np.asarray(position, dtype=float)
    return Transfer(p0, np.array([p0[0], p0[1], altitude]), duration, yaw)


def landing(position, duration: float, ground: float = 0.0, yaw: float = 0.0) -> Transfer:
    """Vertical minimum-jerk descent from ``position`` to ``z = ground`` [m]."""
    p0 = np.asarray(position, dtype=float)
    return Transfer(p0, np.array([p0[0], p0[1], ground]), duration, yaw)


@register("reference", "figure_eight", options={
    "duration": _DURATION, "center": _CENTER, "amplitude": _AMPLITUDE, "period": _PERIOD})
class FigureEight(_Phase):
    """Figure-eight of eq. (13) in a horizontal plane.

    ``p(tau) = center + (A_x sin(w tau), A_y sin(2 w tau), 0)``, ``w = 2 pi / period``.
    The paper: ``center = (0, 0, 1)``, ``A_x = A_y = 1 m``, ``period = 30 s``
    (``sin(pi t / 15)``, ``sin(2 pi t / 15)``). Starting at ``tau = 0`` from rest the
    reference velocity jumps to ``(A_x w, 2 A_y w, 0)``.
    """

    center: Array
    amplitude: Array
    yaw: Array
    period: Array
    length: float = eqx.field(static=True)

    def __init__(self, duration: float, center=(0.0, 0.0, 1.0), amplitude=(1.0, 1.0), period: float = 30.0, yaw=0.0):
        self.center = _finite("FigureEight", "center", center, (3,), "(0.0, 0.0, 1.0)")
        self.amplitude = _finite("FigureEight", "amplitude", amplitude, (2,), "(1.0, 1.0)")
        self.yaw = _finite("FigureEight", "yaw", yaw, (), "0.0")
        # a leaf: differentiable, and figure-eights of other periods share one compiled flight
        self.period = _finite("FigureEight", "period", _positive("FigureEight", "period", period, "30.0"), (), "30.0")
        self.length = _positive("FigureEight", "duration", duration, "29.0")

    def __call__(self, t: Float[ArrayLike, ""]) -> RefSample:
        w = 2 * math.pi / self.period
        Ax, Ay = self.amplitude[0], self.amplitude[1]
        z = jnp.zeros_like(t)
        p = self.center + jnp.stack([Ax * jnp.sin(w * t), Ay * jnp.sin(2 * w * t), z])
        v = jnp.stack([Ax * w * jnp.cos(w * t), 2 * Ay * w * jnp.cos(2 * w * t), z])
        a = jnp.stack([-Ax * w**2 * jnp.sin(w * t), -4 * Ay * w**2 * jnp.sin(2 * w * t), z])
        j = jnp.stack([-Ax * w**3 * jnp.cos(w * t), -8 * Ay * w**3 * jnp.cos(2 * w * t), z])
        return _sample(p, v, a, j, self.yaw)


@register("reference", "circle", options={
    "duration": _DURATION, "start": Option(list, length=3, scalar=False, unit="m", doc="start point, world frame"),
    "radius": Option(float, gt=0, unit="m", doc="circle radius"), "period": _PERIOD})
class Circle(_Phase):
    """Horizontal circle through ``start``: ``p = start + r (cos(w tau) - 1, sin(w tau), 0)``, ``w = 2 pi / period``."""

    start: Array
    radius: Array
    yaw: Array
    period: float = eqx.field(static=True)
    length: float = eqx.field(static=True)

    def __init__(self, duration: float, start=(0.0, 0.0, 1.0), radius: float = 1.0, period: float = 10.0, yaw=0.0):
        self.start = _finite("Circle", "start", start, (3,), "(0.0, 0.0, 1.0)")
        self.radius = _finite("Circle", "radius", radius, (), "1.0")
        if not isinstance(self.radius, jax.core.Tracer) and not float(self.radius) > 0:
            raise ValueError(f"Circle parameter `radius` = {radius!r} is invalid: must be > 0 m. Fix: pass e.g. 1.0.")
        self.yaw = _finite("Circle", "yaw", yaw, (), "0.0")
        self.period = _positive("Circle", "period", period, "10.0")
        self.length = _positive("Circle", "duration", duration, "10.0")

    def __call__(self, t: Float[ArrayLike, ""]) -> RefSample:
        w = 2 * math.pi / self.period
        r = self.radius
        c, s, z = jnp.cos(w * t), jnp.sin(w * t), jnp.zeros_like(t)
        p = self.start + r * jnp.stack([c - 1, s, z])
        v = r * w * jnp.stack([-s, c, z])
        a = r * w**2 * jnp.stack([-c, -s, z])
        j = r * w**3 * jnp.stack([s, -c, z])
        return _sample(p, v, a, j, self.yaw)


class Sequence(AbstractReference):
    """Phases flown one after another; phase ``k`` starts when phase ``k-1`` ends.

    Evaluates every phase at its local time and selects the active one with
    ``jnp.select`` (no Python branching on ``t``); after the last phase the last
    sample is held with zero velocity. ``jump_times`` are all phase boundaries
    (plus each phase's own jump times).
    """

    phases: tuple[AbstractReference, ...]

    def __init__(self, phases):
        if isinstance(phases, (str, bytes)) or not hasattr(phases, "__iter__"):
            raise ValueError(f"Sequence parameter `phases` = {phases!r} is invalid: not a list of phases. Fix: pass "
                             "a list of references, e.g. [Hover((0, 0, 1), 5.0)].")
        phases = tuple(phases)
        if not phases:
            raise ValueError("Sequence parameter `phases` is empty. Fix: pass at least one phase.")
        bad = [ph for ph in phases if not isinstance(ph, AbstractReference)]
        if bad:
            raise ValueError(f"Sequence parameter `phases` holds {bad[0]!r}, not a reference. Fix: pass "
                             "AbstractReference instances (Hover, Transfer, FigureEight, Circle, ...).")
        self.phases = phases

    @property
    def starts(self) -> tuple[float, ...]:
        out, t = [], 0.0
        for ph in self.phases:
            out.append(t)
            t += ph.duration
        return tuple(out)

    @property
    def duration(self) -> float:
        return float(sum(ph.duration for ph in self.phases))

    @property
    def is_full_pose(self) -> bool:
        """Whether any phase is full-pose."""
        return any(ph.is_full_pose for ph in self.phases)

    @property
    def jump_times(self) -> tuple[float, ...]:
        js = set()
        for t0, ph in zip(self.starts, self.phases):
            js.add(t0)
            js.add(t0 + ph.duration)
            js.update(t0 + tj for tj in ph.jump_times)
        return tuple(sorted(t for t in js if 0 < t < self.duration))

    def __call__(self, t: Float[ArrayLike, ""]) -> RefSample:
        samples = [ph(jnp.clip(t - t0, 0.0, ph.duration)) for t0, ph in zip(self.starts, self.phases)]
        ends = [t0 + ph.duration for t0, ph in zip(self.starts, self.phases)]
        conds = [t < e for e in ends[:-1]] + [jnp.ones_like(t, dtype=bool)]
        stacked = [jnp.stack(leaves) for leaves in zip(*(_leaves(s) for s in samples))]
        # index of the active phase: first whose end is after t
        idx = jnp.select(conds, [jnp.asarray(k) for k in range(len(samples))])
        picked = [x[idx] for x in stacked]
        out = _unleaves(samples[0], picked)
        after = t > self.duration
        zero = jnp.zeros_like(out.v)
        return eqx.tree_at(lambda s: (s.v, s.a, s.j), out, (jnp.where(after, zero, out.v),
                                                            jnp.where(after, zero, out.a),
                                                            jnp.where(after, zero, out.j)))


def _leaves(s: RefSample):
    return (s.p, s.v, s.a, s.j, s.R, s.omega, s.omega_dot, s.yaw)


def _unleaves(template: RefSample, leaves) -> RefSample:
    p, v, a, j, R, omega, omega_dot, yaw = leaves
    return RefSample(p=p, v=v, a=a, j=j, R=R, omega=omega, omega_dot=omega_dot, yaw=yaw)


# --------------------------------------------------------------------------- step and waypoints


def _min_jerk(x, T):
    """Minimum-jerk profile ``s(x) = 10x^3 - 15x^4 + 6x^5`` and its time derivatives for a phase of ``T`` [s].

    Returns ``(s, ds/dt, d2s/dt2, d3s/dt3)`` at ``x = tau / T`` (``x`` already clipped to ``[0, 1]``).
    """
    s = x**3 * (10 - 15 * x + 6 * x**2)
    ds = 30 * x**2 * (1 - x) ** 2 / T
    dds = 60 * x * (1 - x) * (1 - 2 * x) / T**2
    ddds = 60 * (1 - 6 * x + 6 * x**2) / T**3
    return s, ds, dds, ddds


def _heading_sample(p, v, a, j, yaw, yaw_rate, yaw_acc) -> RefSample:
    """A sample whose attitude is the heading ``R_z(yaw)``: ``omega = (0, 0, yaw_rate)``, ``omega_dot = (0, 0, yaw_acc)``."""
    z = jnp.zeros_like(yaw)
    c, s, o = jnp.cos(yaw), jnp.sin(yaw), jnp.ones_like(yaw)
    R = jnp.array([[c, -s, z], [s, c, z], [z, z, o]])
    return RefSample(p=p, v=v, a=a, j=j, R=R, omega=jnp.stack([z, z, yaw_rate]), omega_dot=jnp.stack([z, z, yaw_acc]),
                     yaw=yaw)


@dataclasses.dataclass(frozen=True)
class StepChange:
    """A set-point change, what a step response is measured against (:mod:`jaxrotor.step_response`).

    Attributes:
        time: the instant the set point changes [s] (flight time).
        start: ``(3,)`` position held before ``time`` [m], world frame.
        target: ``(3,)`` position after the change [m], world frame.
        yaw_start: heading before ``time`` [rad].
        yaw_target: heading after the change [rad].
        rise: length of the reference's own minimum-jerk transition [s] (0 for an ideal step).
    """

    time: float
    start: np.ndarray
    target: np.ndarray
    yaw_start: float = 0.0
    yaw_target: float = 0.0
    rise: float = 0.0


def _angle(owner: str, name: str, rad, deg, default):
    """The angle given as ``name`` [rad] or ``name_deg`` [deg] (not both), in rad; ``default`` when neither."""
    if rad is not None and deg is not None:
        raise ValueError(f"{owner} parameters `{name}` = {rad!r} (rad) and `{name}_deg` = {deg!r} (deg) are both "
                         f"given: the heading would be ambiguous. Fix: keep one of them.")
    if deg is not None:
        return _finite(owner, f"{name}_deg", deg, (), "90.0") * (math.pi / 180.0)
    if rad is not None:
        return _finite(owner, name, rad, (), "0.0")
    return default


@register("reference", "step", options={
    "start": Option(list, default=None, length=3, scalar=False, unit="m",
                    doc="position held before the step, world frame (omitted: [flight] position)"),
    "target": Option(list, length=3, scalar=False, unit="m", doc="position after the step, world frame"),
    "time": Option(float, gt=0, unit="s", doc="when the set point changes (0 < time < duration)"),
    "duration": _DURATION,
    "yaw": Option(float, default=None, unit="rad", doc="heading before the step (default 0)"),
    "yaw_deg": Option(float, default=None, unit="deg", doc="the same in degrees (give yaw or yaw_deg)"),
    "target_yaw": Option(float, default=None, unit="rad", doc="heading after the step (default: yaw)"),
    "target_yaw_deg": Option(float, default=None, unit="deg", doc="the same in degrees"),
    "rise": Option(float, ge=0, unit="s", doc="minimum-jerk transition time; 0: an ideal step")})
class Step(_Phase):
    """Step response reference: hold ``start`` until ``time``, then ``target`` (position [m] and heading [rad]).

    ``p(t) = start + (target - start) s(t)``, ``psi(t) = yaw + (target_yaw - yaw) s(t)`` with
    ``s(t) = 0`` before ``time`` and ``1`` from ``time`` on (``rise = 0``, an ideal step: the
    reference velocity, acceleration and body rate stay zero and the position jumps), or the
    minimum-jerk ``s = 10x^3 - 15x^4 + 6x^5``, ``x = (t - time) / rise`` clipped to ``[0, 1]``
    (``rise > 0``: a smoothed step whose velocity, acceleration, jerk and yaw rate
    ``omega_r = (0, 0, dpsi/dt)`` follow from ``s``). ``R_r = R_z(psi)``. ``jump_times`` holds
    ``time`` (and ``time + rise``), so a fixed-step solve never straddles the step.

    Args:
        target: ``(3,)`` position after the step [m], world frame.
        time: step instant [s], ``0 < time`` and ``time + rise < duration``.
        duration: total length [s] (the set point is held after ``time`` until then).
        start: ``(3,)`` position before the step [m] (required; a configuration file may take it
            from ``[flight] position``).
        yaw: heading before the step [rad] (or ``yaw_deg``; default 0).
        yaw_deg: the same in degrees.
        target_yaw: heading after the step [rad] (or ``target_yaw_deg``; default: the heading before).
        target_yaw_deg: the same in degrees.
        rise: minimum-jerk transition time [s] (0: an ideal step).
    """

    start: Array
    target: Array
    yaw_start: Array
    yaw_target: Array
    time: float = eqx.field(static=True)
    rise: float = eqx.field(static=True)
    length: float = eqx.field(static=True)

    def __init__(self, target, time: float, duration: float, start=None, yaw=None, yaw_deg=None, target_yaw=None,
                 target_yaw_deg=None, rise: float = 0.0):
        if start is None:
            raise ValueError("Step parameter `start` is missing: the position held before the step. Fix: pass e.g. "
                             "start=[0.0, 0.0, 1.0] (in a configuration file: [reference] start, or [flight] position).")
        self.start = _finite("Step", "start", start, (3,), "[0.0, 0.0, 1.0]")
        self.target = _finite("Step", "target", target, (3,), "[1.0, 0.0, 1.0]")
        self.yaw_start = _angle("Step", "yaw", yaw, yaw_deg, _f(0.0))
        self.yaw_target = _angle("Step", "target_yaw", target_yaw, target_yaw_deg, self.yaw_start)
        self.length = _positive("Step", "duration", duration, "6.0")
        self.time = _positive("Step", "time", time, "1.0")
        try:
            self.rise = float(rise)
        except (TypeError, ValueError):
            raise ValueError(f"Step parameter `rise` = {rise!r} is invalid: not a number. Fix: pass a time >= 0 s, "
                             "e.g. 0.0 for an ideal step.") from None
        if not (self.rise >= 0 and math.isfinite(self.rise)):
            raise ValueError(f"Step parameter `rise` = {rise!r} is invalid: must be finite and >= 0 s. Fix: pass "
                             "e.g. 0.0 (an ideal step) or 0.5.")
        if not self.time + self.rise < self.length:
            raise ValueError(f"Step parameter `time` = {time!r} (+ rise = {self.rise!r}) is invalid: the step must "
                             f"end before `duration` = {duration!r} s. Fix: step earlier or raise duration, e.g. "
                             f"duration = {self.time + self.rise + 5.0:g}.")

    @property
    def jump_times(self) -> tuple[float, ...]:
        """``(time,)`` for an ideal step (the position jumps), ``(time, time + rise)`` for a smoothed one."""
        return (self.time,) if self.rise == 0 else (self.time, self.time + self.rise)

    @property
    def step_change(self) -> StepChange:
        """The change of set point (concrete numpy values; evaluated eagerly even inside a trace)."""
        with jax.ensure_compile_time_eval():
            return StepChange(time=self.time, start=np.asarray(self.start, dtype=float),
                              target=np.asarray(self.target, dtype=float), yaw_start=float(self.yaw_start),
                              yaw_target=float(self.yaw_target), rise=self.rise)

    def __call__(self, t: Float[ArrayLike, ""]) -> RefSample:
        t = jnp.asarray(t, dtype=self.start.dtype)
        if self.rise > 0:
            x = jnp.clip((t - self.time) / self.rise, 0.0, 1.0)
            s, ds, dds, ddds = _min_jerk(x, self.rise)
            inside = ((t >= self.time) & (t <= self.time + self.rise)).astype(t.dtype)
            ds, dds, ddds = ds * inside, dds * inside, ddds * inside
        else:
            s = (t >= self.time).astype(t.dtype)
            ds = dds = ddds = jnp.zeros_like(t)
        d, dpsi = self.target - self.start, self.yaw_target - self.yaw_start
        return _heading_sample(self.start + d * s, d * ds, d * dds, d * ddds, self.yaw_start + dpsi * s, dpsi * ds,
                               dpsi * dds)


#: Peak over mean speed of the minimum-jerk profile: ``max ds/dx = s'(1/2) = 30/16``.
MIN_JERK_PEAK_RATIO = 1.875


@register("reference", "waypoints", options={
    "points": Option(list, scalar=False, unit="m",
                     doc="k >= 2 points [[x, y, z], ...] (or flat [x0, y0, z0, x1, ...]), world frame"),
    "speed": Option(float, default=None, gt=0, unit="m/s",
                    doc="peak speed of each segment: segment time = 1.875 length / speed (give speed or segment_times)"),
    "segment_times": Option(list, default=None, gt=0, unit="s", doc="duration of each of the k - 1 segments"),
    "yaw": Option(list, unit="rad", doc="heading at each point (one number: the same at all)"),
    "hold": Option(float, ge=0, unit="s", doc="time held at each point, the first and the last included"),
    "duration": Option(float, default=None, gt=0, unit="s",
                       doc="total length, >= the waypoints' own (omitted: their own; the last point is held)")})
class Waypoints(AbstractReference):
    """Straight segments through ``k`` points, each flown with the minimum-jerk profile.

    Timeline: hold ``points[0]`` for ``hold`` s, fly segment 0 in ``T_0`` s, hold ``points[1]``
    for ``hold`` s, ..., hold ``points[k-1]`` for ``hold`` s (and until ``duration``). On segment
    ``i``, started at ``t_i``::

        p(t) = points[i] + (points[i+1] - points[i]) s(x),   x = (t - t_i) / T_i,
        s(x) = 10 x^3 - 15 x^4 + 6 x^5,

    so the velocity and acceleration are zero at every point (the vehicle comes to rest at each
    one) and the jerk jumps there (the segment ends are the ``jump_times``). The heading follows
    the same profile from ``yaw[i]`` to ``yaw[i+1]`` (``omega_r = (0, 0, dpsi/dt)``).

    Segment times: ``segment_times`` ``(k-1,)`` [s], or from a peak ``speed`` [m/s]:
    ``T_i = 1.875 |points[i+1] - points[i]| / speed`` (the profile's peak speed is 1.875 times
    its mean ``|Δp| / T_i``; that peak is ``speed``). The times are static (they set the jump
    times); with ``speed`` the points must be concrete when the reference is built (under a trace
    pass ``segment_times``). The position is differentiable with respect to ``points`` and ``yaw``
    (pure JAX, no Python branching on ``t``).

    Args:
        points: ``(k, 3)`` [m] (or a flat list of ``3k`` numbers), world frame, ``k >= 2``.
        speed: peak speed on each segment [m/s] (exclusive with ``segment_times``).
        segment_times: ``(k-1,)`` segment durations [s], each > 0.
        yaw: ``(k,)`` heading at each point [rad], or one number for all.
        hold: time held at each point [s] (>= 0).
        duration: total length [s], at least the waypoints' own ``k hold + sum T_i`` (``None``: that).
    """

    points: Array
    yaws: Array
    segment_times: tuple[float, ...] = eqx.field(static=True)
    hold: float = eqx.field(static=True)
    length: float = eqx.field(static=True)

    def __init__(self, points, speed: float | None = None, segment_times=None, yaw=0.0, hold: float = 0.0,
                 duration: float | None = None):
        try:
            pts = _f(points)
        except (TypeError, ValueError):
            raise ValueError(f"Waypoints parameter `points` = {points!r} is invalid: not numbers. Fix: pass k >= 2 "
                             "points, e.g. [[0, 0, 1], [1, 0, 1]].") from None
        if pts.ndim == 1 and pts.size % 3 == 0:
            pts = pts.reshape(-1, 3)
        if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] < 2:
            raise ValueError(f"Waypoints parameter `points` = {points!r} has shape {pts.shape}, expected (k, 3) with "
                             "k >= 2. Fix: pass e.g. [[0, 0, 1], [1, 0, 1], [1, 1, 1]].")
        k = pts.shape[0]
        self.points = _finite("Waypoints", "points", pts, (k, 3), "[[0, 0, 1], [1, 0, 1]]")
        try:
            yaws = jnp.broadcast_to(_f(yaw), (k,))
        except (TypeError, ValueError):
            raise ValueError(f"Waypoints parameter `yaw` = {yaw!r} is invalid: expected one number or k = {k} "
                             f"headings in rad. Fix: pass e.g. 0.0 or {[0.0] * k}.") from None
        self.yaws = _finite("Waypoints", "yaw", yaws, (k,), f"{[0.0] * k}")
        try:
            self.hold = float(hold)
        except (TypeError, ValueError):
            self.hold = float("nan")
        if not (self.hold >= 0 and math.isfinite(self.hold)):
            raise ValueError(f"Waypoints parameter `hold` = {hold!r} is invalid: must be a finite time >= 0 s. Fix: "
                             "pass e.g. 0.0 or 1.0.")
        if (speed is None) == (segment_times is None):
            raise ValueError(f"Waypoints parameters `speed` = {speed!r} and `segment_times` = {segment_times!r}: "
                             "give exactly one of them. Fix: pass speed (peak speed in m/s, e.g. 1.0) or "
                             f"segment_times ({k - 1} durations in s).")
        if segment_times is not None:
            ts = np.atleast_1d(np.asarray(segment_times, dtype=float)) if not isinstance(segment_times, (int, float)) \
                else np.full(k - 1, float(segment_times))
            if ts.shape != (k - 1,) or not np.all(np.isfinite(ts) & (ts > 0)):
                raise ValueError(f"Waypoints parameter `segment_times` = {segment_times!r} is invalid: expected "
                                 f"{k - 1} finite durations > 0 s (one per segment). Fix: pass e.g. {[2.0] * (k - 1)}.")
        else:
            speed = _positive("Waypoints", "speed", speed, "1.0")
            if isinstance(self.points, jax.core.Tracer):
                raise ValueError("Waypoints parameter `speed` needs concrete `points` (the segment times are static), "
                                 "but the points are traced. Fix: pass segment_times when building under jit/grad.")
            lengths = np.linalg.norm(np.diff(np.asarray(self.points), axis=0), axis=1)
            if np.any(lengths <= 0):
                i = int(np.argmin(lengths))
                raise ValueError(f"Waypoints parameter `points`: segment {i} (point {i} to {i + 1}) has zero length, "
                                 "so `speed` gives it no time. Fix: remove the repeated point, or pass segment_times.")
            ts = MIN_JERK_PEAK_RATIO * lengths / speed
        self.segment_times = tuple(float(x) for x in ts)
        own = sum(self.segment_times) + k * self.hold
        if duration is None:
            self.length = own
        else:
            self.length = _positive("Waypoints", "duration", duration, f"{own:g}")
            if self.length < own * (1 - 1e-12):
                raise ValueError(f"Waypoints parameter `duration` = {duration!r} is shorter than the waypoints' own "
                                 f"{own:g} s (segments + holds). Fix: omit it, or pass at least {own:g}.")

    @property
    def duration(self) -> float:
        return self.length

    @property
    def segment_starts(self) -> tuple[float, ...]:
        """``(k-1,)`` start time of each segment [s]: ``t_0 = hold``, ``t_(i+1) = t_i + T_i + hold``."""
        out, t = [], self.hold
        for T in self.segment_times:
            out.append(t)
            t = (t + T) + self.hold
        return tuple(out)

    @property
    def jump_times(self) -> tuple[float, ...]:
        """Segment starts and ends inside ``(0, duration)`` (the jerk jumps there)."""
        js = set()
        for t0, T in zip(self.segment_starts, self.segment_times):
            js.update((t0, t0 + T))
        return tuple(sorted(t for t in js if 0 < t < self.duration))

    def __call__(self, t: Float[ArrayLike, ""]) -> RefSample:
        dtype = self.points.dtype
        t = jnp.asarray(t, dtype=dtype)
        starts = jnp.asarray(np.asarray(self.segment_starts), dtype=dtype)
        Ts = jnp.asarray(np.asarray(self.segment_times), dtype=dtype)
        i = jnp.clip(jnp.searchsorted(starts, t, side="right") - 1, 0, Ts.shape[0] - 1)
        t0, T = starts[i], Ts[i]
        x = jnp.clip((t - t0) / T, 0.0, 1.0)
        s, ds, dds, ddds = _min_jerk(x, T)
        inside = ((t >= t0) & (t <= t0 + T)).astype(dtype)
        ds, dds, ddds = ds * inside, dds * inside, ddds * inside
        p0, d = self.points[i], self.points[i + 1] - self.points[i]
        psi0, dpsi = self.yaws[i], self.yaws[i + 1] - self.yaws[i]
        return _heading_sample(p0 + d * s, d * ds, d * dds, d * ddds, psi0 + dpsi * s, dpsi * ds, dpsi * dds)


@register("reference", "paper_maneuver", options={
    "takeoff_time": Option(float, gt=0, unit="s", doc="climb time"),
    "landing_time": Option(float, gt=0, unit="s", doc="descent time"),
    "duration": _DURATION, "altitude": Option(float, gt=0, unit="m", doc="figure-eight altitude"),
    "period": dataclasses.replace(_PERIOD, fix="the figure-eight period in s (paper: 30)"),
    "amplitude": _AMPLITUDE})
def paper_maneuver(
    takeoff_time: float = 8.0,
    landing_time: float = 8.0,
    duration: float = 45.0,
    altitude: float = 1.0,
    period: float = 30.0,
    amplitude=(1.0, 1.0),
) -> Sequence:
    """The use-case maneuver: takeoff, figure-eight (eq. 13) at fixed attitude, landing.

    ``0 - 8 s``: minimum-jerk climb from the origin to ``(0, 0, 1)``;
    ``8 - 37 s``: figure-eight ``(sin(pi tau/15), sin(2 pi tau/15), 1)``, ``tau = t - 8``;
    ``37 - 45 s``: minimum-jerk vertical descent to the ground below the point where the
    figure-eight stops. ``R_r = I`` throughout. The reference velocity jumps at 8 s
    (from rest to ``(pi/15, 2 pi/15, 0)`` m/s) and at 37 s (back to rest), the two
    transients seen in the paper's Fig. 7.
    """
    eight_time = duration - takeoff_time - landing_time
    if not eight_time > 0:
        raise ValueError(
            f"paper_maneuver: takeoff ({takeoff_time} s) + landing ({landing_time} s) leave no time for the "
            f"figure-eight within duration = {duration} s. Fix: raise duration."
        )
    up = takeoff((0.0, 0.0, 0.0), altitude, takeoff_time)
    eight = FigureEight(eight_time, center=(0.0, 0.0, altitude), amplitude=amplitude, period=period)
    w = 2 * math.pi / period
    end = np.array([amplitude[0] * math.sin(w * eight_time), amplitude[1] * math.sin(2 * w * eight_time), altitude])
    down = landing(end, landing_time)  # (closed form in numpy: no JAX op, so it works inside a trace too)
    return Sequence((up, eight, down))


# --------------------------------------------------------------------------- full-pose references


class AbstractAttitude(eqx.Module):
    """Roll-pitch-yaw angles ``(phi, theta, psi)`` [rad] as a function of (local) time ``t`` [s]."""

    @abc.abstractmethod
    def angles(self, t: Float[ArrayLike, ""]) -> Float[Array, "3"]:
        """``(3,)`` ``(phi, theta, psi)`` [rad]; ``R = R_z(psi) R_y(theta) R_x(phi)``."""

    @property
    def jump_times(self) -> tuple[float, ...]:
        """Times where ``omega_r`` or ``omega_dot_r`` jump (none for a smooth attitude)."""
        return ()


class ConstantAttitude(AbstractAttitude):
    """A fixed attitude ``rpy`` ``(3,)`` [rad]."""

    rpy: Array

    def __init__(self, rpy=(0.0, 0.0, 0.0)):
        self.rpy = _f(rpy)

    def angles(self, t: Float[ArrayLike, ""]) -> Float[Array, "3"]:
        return self.rpy + 0.0 * t


class AttitudeRamp(AbstractAttitude):
    """Minimum-jerk change from ``start`` to ``end`` ``(3,)`` [rad] over ``ramp_time`` [s], then hold ``end``.

    ``rpy(t) = start + (end - start) s(t / ramp_time)``, ``s(x) = 10x^3 - 15x^4 + 6x^5`` (clipped to
    ``[0, 1]``): ``omega_r`` and ``omega_dot_r`` are zero at both ends of the ramp.
    """

    start: Array
    end: Array
    ramp_time: float = eqx.field(static=True)

    def __init__(self, start, end, ramp_time: float):
        self.start, self.end = _f(start), _f(end)
        self.ramp_time = _positive("AttitudeRamp", "ramp_time", ramp_time, "2.0")

    def angles(self, t: Float[ArrayLike, ""]) -> Float[Array, "3"]:
        x = jnp.clip(t / self.ramp_time, 0.0, 1.0)
        return self.start + (self.end - self.start) * x**3 * (10 - 15 * x + 6 * x**2)


class SinusoidalAttitude(AbstractAttitude):
    """``rpy(t) = offset + amplitude sin(2 pi t / period)`` (each ``(3,)`` [rad]; ``period`` [s])."""

    offset: Array
    amplitude: Array
    period: float = eqx.field(static=True)

    def __init__(self, amplitude, period: float, offset=(0.0, 0.0, 0.0)):
        self.amplitude, self.offset = _f(amplitude), _f(offset)
        self.period = _positive("SinusoidalAttitude", "period", period, "30.0")

    def angles(self, t: Float[ArrayLike, ""]) -> Float[Array, "3"]:
        return self.offset + self.amplitude * jnp.sin(2 * math.pi * t / self.period)


def _rpy_to_R(rpy: Array) -> Array:
    """``R_z(psi) R_y(theta) R_x(phi)`` for ``rpy = (phi, theta, psi)``."""
    cr, sr = jnp.cos(rpy[0]), jnp.sin(rpy[0])
    cp, sp = jnp.cos(rpy[1]), jnp.sin(rpy[1])
    cy, sy = jnp.cos(rpy[2]), jnp.sin(rpy[2])
    return jnp.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


class FullPose(AbstractReference):
    """A position reference and an independent attitude (module docstring).

    Attributes:
        position: any position reference (its ``R`` is replaced).
        attitude: the :class:`AbstractAttitude`, evaluated at the same (local) time.
    """

    position: AbstractReference
    attitude: AbstractAttitude

    @property
    def duration(self) -> float:
        return self.position.duration

    @property
    def jump_times(self) -> tuple[float, ...]:
        js = set(self.position.jump_times) | {t for t in self.attitude.jump_times if 0 < t < self.duration}
        return tuple(sorted(js))

    @property
    def is_full_pose(self) -> bool:
        """True: the attitude is independent of the motion."""
        return True

    def __call__(self, t: Float[ArrayLike, ""]) -> RefSample:
        base = self.position(t)
        t = jnp.asarray(t, dtype=base.p.dtype)

        def R_of(s):
            return _rpy_to_R(self.attitude.angles(s))

        def omega_of(s):
            Rs, dR = jax.jvp(R_of, (s,), (jnp.ones_like(s),))
            return jnp.stack([Rs[:, 2] @ dR[:, 1], Rs[:, 0] @ dR[:, 2], Rs[:, 1] @ dR[:, 0]])  # (R^T dR)^vee

        omega, omega_dot = jax.jvp(omega_of, (t,), (jnp.ones_like(t),))
        return RefSample(p=base.p, v=base.v, a=base.a, j=base.j, R=R_of(t), omega=omega, omega_dot=omega_dot,
                         yaw=self.attitude.angles(t)[2])


@register("reference", "pitch_hover", options={
    "center": dataclasses.replace(_CENTER, arg="position"), "pitch": _PITCH,
    "duration": _DURATION, "ramp_time": _RAMP})
def pitch_hover(position=(0.0, 0.0, 1.0), pitch: float = math.radians(30.0), duration: float = 12.0,
                ramp_time: float = 2.0) -> FullPose:
    """Hover at ``position`` [m] while pitching to ``pitch`` [rad] in ``ramp_time`` [s] (minimum jerk), then holding it."""
    return FullPose(Hover(position, duration), AttitudeRamp((0.0, 0.0, 0.0), (0.0, pitch, 0.0), ramp_time))


def tilted_transfer(start, end, duration: float, rpy=(0.0, 0.2617993877991494, 0.0)) -> FullPose:
    """Minimum-jerk move from ``start`` to ``end`` [m] holding the constant body attitude ``rpy`` [rad] (default 15 deg pitch)."""
    return FullPose(Transfer(start, end, duration), ConstantAttitude(rpy))


@register("reference", "pitching_figure_eight", options={
    "duration": _DURATION, "period": _PERIOD, "pitch_amplitude": _PITCH_AMPLITUDE, "center": _CENTER,
    "amplitude": _AMPLITUDE})
def pitching_figure_eight(duration: float = 30.0, period: float = 30.0, pitch_amplitude: float = math.radians(20.0),
                          center=(0.0, 0.0, 1.0), amplitude=(1.0, 1.0)) -> FullPose:
    """The figure-eight of eq. (13) with the pitch ``theta = pitch_amplitude sin(2 pi t / period)`` [rad]."""
    return FullPose(FigureEight(duration, center=center, amplitude=amplitude, period=period),
                    SinusoidalAttitude((0.0, pitch_amplitude, 0.0), period))


@register("reference", "tilting_hex_maneuver", options={
    "pitch": _PITCH, "hold_time": Option(float, gt=0, unit="s", doc="time the pitch is held"), "ramp_time": _RAMP,
    "eight_time": Option(float, gt=0, unit="s", doc="duration of the pitching figure-eight"), "period": _PERIOD,
    "pitch_amplitude": _PITCH_AMPLITUDE, "center": _CENTER})
def tilting_hex_maneuver(pitch: float = math.radians(30.0), hold_time: float = 10.0, ramp_time: float = 2.0,
                         eight_time: float = 30.0, period: float = 30.0, pitch_amplitude: float = math.radians(20.0),
                         center=(0.0, 0.0, 1.0)) -> Sequence:
    """Pitch to ``pitch`` and hold it for ``hold_time`` at ``center``, pitch back, then a pitching figure-eight.

    Phases: ``ramp_time + hold_time`` s of :func:`pitch_hover`; ``ramp_time`` s back to level;
    ``eight_time`` s of :func:`pitching_figure_eight` (level at its start, so the attitude is
    continuous; its velocity jumps there as in the paper's maneuver).
    """
    level = (0.0, 0.0, 0.0)
    tilted = (0.0, pitch, 0.0)
    return Sequence((
        pitch_hover(center, pitch, ramp_time + hold_time, ramp_time),
        FullPose(Hover(center, ramp_time), AttitudeRamp(tilted, level, ramp_time)),
        pitching_figure_eight(eight_time, period, pitch_amplitude, center),
    ))
