"""Fault-tolerance terms: the worst single rotor loss as an objective (:mod:`jaxrotor.faults`).

:class:`WorstRotorLoss` (``[objective.worst_rotor_loss]``) measures every single rotor loss of the
design, one value ``v_j`` per lost rotor ``j = 0 .. n-1``, and aggregates the worst of them:

* ``measure = "tracking"`` (default): the design's hover (or its own reference) is flown once per rotor,
  rotor ``j`` lost at ``time`` and known to the flight computer ``detection_delay`` later
  (:class:`~jaxrotor.faults.Faults`, reallocation and yaw release as :func:`jaxrotor.flight.fault_aware`
  does them). The ``n`` flights are one compiled program, ``vmap`` over the rotor index.
  ``v_j = sqrt(mean_k |e_p(t_k)|^2) + w_R sqrt(mean_k (e_R,x(t_k)^2 + e_R,y(t_k)^2))`` over the saved
  times ``t_k >= t_fault`` [m]: position error (eq. 14) plus ``w_R = attitude_weight`` [m/rad] times
  the roll and pitch error against the reference attitude (eq. 15; yaw is left out because the flight
  computer may give it up), plus ``w_s |a_z|`` (``w_s = spin_weight`` [m s^2/rad]) with ``a_z`` the yaw
  rate's trend after the fault (:func:`jaxrotor.verdict.yaw_rate_trend` over ``t_k >= t_fault``): a vehicle
  whose remaining rotors cannot cancel their yaw torque spins up without bound, which the outcome rule calls
  lost (:data:`jaxrotor.faults.SPIN_ACCELERATION`) however well it holds position. Smaller is better
  (``sense = +1``).
* ``measure = "hover_margin"``: the static hover margin after the loss of rotor ``j``, the value ``r_j``
  of the linear program behind :func:`jaxrotor.analysis.rotor_loss_margin` (``max s`` s.t. the remaining
  rotors give zero moment, ``mean x = 1``, ``x_i >= s``; attitude free, input bounds not used), per
  rotor instead of its soft minimum. Larger is better (``sense = -1``). Nothing is flown.

Aggregation works on the *badness* ``b_j = sense v_j`` (larger is worse for both measures) and
returns a measure in ``v``'s units, ``m = sense A(b)``, so the cost ``sense m = A(b)`` is what an
optimiser minimises:

* ``aggregate = "max"``: ``A(b) = T log sum_j exp(b_j / T)``, a soft maximum in
  ``[max_j b_j, max_j b_j + T ln n]`` (``T = temperature``, in ``v``'s units);
* ``aggregate = "cvar"``: ``A(b) = (1 / k) sum_i w_i b_(i)`` with ``b_(1) >= b_(2) >= ...``,
  ``k = cvar_alpha n`` and ``w_i = clip(k - (i - 1), 0, 1)``: the mean of the worst fraction
  ``cvar_alpha`` of the rotors (a fractional rotor weighted in part), the empirical CVaR of
  :func:`jaxrotor.optimize.cvar` at level ``beta = 1 - cvar_alpha``; differentiable almost everywhere
  (through the sort).
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import logsumexp
from jaxtyping import Float

from ..allocation import scaled_allocation_matrix
from ..analysis.barrier import barrier_schedule
from ..analysis.measures import _max_min_ratio
from ..faults import YAW_POLICIES, Faults
from ..loop import fly
from ..metrics import position_error, reference_orientation_error
from ..numerics import safe_sqrt
from ..reference import Hover
from ..verdict import yaw_rate_trend
from ..registry import Option, register
from .terms import AbstractMeasureTerm

__all__ = ["FAULT_MEASURES", "FAULT_AGGREGATES", "FAULT_REFERENCES", "WorstRotorLoss", "soft_max", "worst_fraction"]

#: ``[objective.worst_rotor_loss] measure`` choices.
FAULT_MEASURES = ("tracking", "hover_margin")
#: ``[objective.worst_rotor_loss] aggregate`` choices.
FAULT_AGGREGATES = ("max", "cvar")
#: ``[objective.worst_rotor_loss] reference`` choices.
FAULT_REFERENCES = ("hover", "flight")


def soft_max(b: Float[Array, " n"], temperature: float) -> Float[Array, ""]:
    """``T log sum_j exp(b_j / T)`` of ``(n,)`` values: a smooth maximum, at most ``T ln n`` above ``max_j b_j``."""
    T = jnp.asarray(temperature, b.dtype)
    return T * logsumexp(b / T)


def worst_fraction(b: Float[Array, " n"], fraction: float) -> Float[Array, ""]:
    """The mean of the largest ``fraction`` of ``(n,)`` values (the empirical CVaR, module docstring).

    ``(1 / k) sum_i clip(k - (i - 1), 0, 1) b_(i)`` with ``b_(1) >= b_(2) >= ...`` and ``k = fraction n``;
    ``fraction = 1`` is the mean, ``fraction = 1 / n`` the maximum.
    """
    x = jnp.sort(b)[::-1]
    k = fraction * x.shape[0]
    w = jnp.clip(k - jnp.arange(x.shape[0], dtype=x.dtype), 0.0, 1.0)
    return jnp.sum(w * x) / k


def _err(key: str, value, why: str, fix: str) -> ValueError:
    return ValueError(f"WorstRotorLoss parameter `{key}` = {value!r} is invalid: {why}. Fix: {fix}.")


def _positive_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


@register("objective", "worst_rotor_loss", options={
    "measure": Option(str, choices=FAULT_MEASURES, doc="tracking: RMS error of a flight per lost rotor; "
                      "hover_margin: the static zero-moment hover margin per lost rotor (no flight)"),
    "aggregate": Option(str, choices=FAULT_AGGREGATES, doc="max: soft maximum over the rotors (temperature); "
                        "cvar: mean of the worst cvar_alpha of the rotors"),
    "temperature": Option(float, gt=0, doc="soft-max temperature, in the measure's units (m, or the margin)",
                          why="a smoothing temperature must be > 0"),
    "cvar_alpha": Option(float, gt=0, le=1, doc="fraction of the rotors whose worst values are averaged (cvar)",
                         why="a fraction of the rotors lies in (0, 1]"),
    "time": Option(float, ge=0, unit="s", doc="fault time after the flight's start (tracking)"),
    "detection_delay": Option(float, ge=0, unit="s", doc="time until the flight computer knows of the loss"),
    "duration": Option(float, gt=0, unit="s", doc="hover flown after the fault (tracking, reference = hover)"),
    "attitude_weight": Option(float, ge=0, unit="m/rad", doc="weight of the roll and pitch RMS error"),
    "spin_weight": Option(float, ge=0, unit="m s^2/rad", doc="weight of the yaw rate's trend after the fault "
                          "(a spin-up: the yaw torque the remaining rotors cannot cancel)"),
    "reference": Option(str, choices=FAULT_REFERENCES, doc="hover: hold the flight's start point; flight: fly "
                        "the design's own reference"),
    "release_yaw": Option(str, choices=YAW_POLICIES, doc="the flight computer's yaw policy after the known loss")})
class WorstRotorLoss(AbstractMeasureTerm):
    """The worst single rotor loss (module docstring): soft-max or CVaR of per-rotor fault measures.

    ``measure="tracking"``: ``v_j`` [m] the RMS position error (plus ``attitude_weight`` times the
    roll/pitch RMS error) from the fault to the end of the flight that loses rotor ``j``; smaller is
    better. ``measure="hover_margin"``: ``v_j`` the dimensionless zero-moment hover margin ``r_j`` after
    losing rotor ``j`` (``<= 1``, negative when no input with every remaining rotor spinning gives zero
    moment); larger is better. Why not the margin of a *level* hover with yaw released (the inputs the
    flight computer allocates after the loss): on a tilted star hexarotor that five-rotor input is unique
    and idles the rotor opposite the lost one, so its margin ``min_i u_i / mean_i u_i`` is 0 (to round-off)
    for every ``alpha_0``, ``beta_0`` and carries no gradient; the zero-moment margin keeps all three moments and
    lets the attitude free, and measures how far the design is from hovering on every remaining rotor.

    Differentiable in every array leaf of the design the flights or the margin read: the tilt angles,
    the geometry, the controller gains, the motor time constant. A flight that diverges makes the
    measure NaN (the problem's loss then gives the divergence penalty and a zero gradient); its values
    are replaced by finite stand-ins first (double ``where``), so a diverged member of a ``vmap``-ed
    batch does not poison the others. Cost ``sense * measure``.

    Attributes:
        measure: ``"tracking"`` or ``"hover_margin"`` (static).
        aggregate: ``"max"`` (soft maximum) or ``"cvar"`` (mean of the worst ``cvar_alpha``) (static).
        temperature: soft-max temperature ``T`` in the measure's units (static, > 0).
        cvar_alpha: fraction of the rotors averaged by ``"cvar"`` (static, in ``(0, 1]``).
        time: fault time [s] after the flight's start ``t0`` (static).
        detection_delay: time [s] from the loss until the flight computer knows of it (static, >= 0).
        duration: hover flown after the fault [s] (static; ``reference="hover"``).
        attitude_weight: ``w_R`` [m/rad] on the roll and pitch RMS error (static, >= 0).
        spin_weight: ``w_s`` [m s^2/rad] on ``|a_z|``, the yaw rate's trend after the fault [rad/s^2]
            (static, >= 0).
        reference: ``"hover"``: hold the design flight's start point and heading for ``time + duration``;
            ``"flight"``: the design's own flight (reference, horizon, initial state) (static).
        release_yaw: the flight computer's yaw policy after the known loss (:data:`~jaxrotor.faults.YAW_POLICIES`).
    """

    measure_kind: str = eqx.field(static=True, default="tracking")
    aggregate: str = eqx.field(static=True, default="max")
    temperature: float = eqx.field(static=True, default=1e-3)
    cvar_alpha: float = eqx.field(static=True, default=1.0 / 3.0)
    time: float = eqx.field(static=True, default=1.0)
    detection_delay: float = eqx.field(static=True, default=0.05)
    duration: float = eqx.field(static=True, default=2.0)
    attitude_weight: float = eqx.field(static=True, default=0.0)
    spin_weight: float = eqx.field(static=True, default=0.0)
    reference: str = eqx.field(static=True, default="hover")
    release_yaw: str = eqx.field(static=True, default="auto")
    name: ClassVar[str] = "worst_rotor_loss"

    def __init__(self, measure: str = "tracking", aggregate: str = "max", temperature: float = 1e-3,
                 cvar_alpha: float = 1.0 / 3.0, time: float = 1.0, detection_delay: float = 0.05,
                 duration: float = 2.0, attitude_weight: float = 0.0, reference: str = "hover",
                 release_yaw: str = "auto", spin_weight: float = 0.0):
        if measure not in FAULT_MEASURES:
            raise _err("measure", measure, "unknown measure", "use 'tracking' (a flight per lost rotor) or "
                       "'hover_margin' (the static zero-moment margin per lost rotor)")
        if aggregate not in FAULT_AGGREGATES:
            raise _err("aggregate", aggregate, "unknown aggregate", "use 'max' (soft maximum with `temperature`) or "
                       "'cvar' (mean of the worst `cvar_alpha` of the rotors)")
        if reference not in FAULT_REFERENCES:
            raise _err("reference", reference, "unknown reference", "use 'hover' (hold the start point) or "
                       "'flight' (the design's own reference)")
        if release_yaw not in YAW_POLICIES:
            raise _err("release_yaw", release_yaw, "unknown yaw policy", f"use one of {', '.join(YAW_POLICIES)}")
        if not _positive_number(temperature):
            raise _err("temperature", temperature, "a smoothing temperature must be finite and > 0",
                       "give one in the measure's units, e.g. 1e-3 (m for tracking)")
        if not (_positive_number(cvar_alpha) and cvar_alpha <= 1):
            raise _err("cvar_alpha", cvar_alpha, "the fraction of rotors averaged lies in (0, 1]",
                       "give e.g. 0.34 (the worst 2 of 6 rotors)")
        if not (isinstance(time, (int, float)) and math.isfinite(time) and time >= 0):
            raise _err("time", time, "a fault time is finite and >= 0", "give the time after the start in s, e.g. 1.0")
        if not (isinstance(detection_delay, (int, float)) and math.isfinite(detection_delay) and detection_delay >= 0):
            raise _err("detection_delay", detection_delay, "a delay is finite and >= 0", "give e.g. 0.05 s")
        if not _positive_number(duration):
            raise _err("duration", duration, "the hover after the fault lasts > 0 s", "give e.g. 2.0 s")
        if not (isinstance(attitude_weight, (int, float)) and math.isfinite(attitude_weight) and attitude_weight >= 0):
            raise _err("attitude_weight", attitude_weight, "a weight is finite and >= 0",
                       "give e.g. 0.1 m/rad, or 0 for position only")
        if not (isinstance(spin_weight, (int, float)) and math.isfinite(spin_weight) and spin_weight >= 0):
            raise _err("spin_weight", spin_weight, "a weight is finite and >= 0",
                       "give e.g. 0.01 m s^2/rad (1 cm per rad/s^2 of spin-up), or 0 to leave the spin out")
        self.measure_kind, self.aggregate, self.reference, self.release_yaw = measure, aggregate, reference, release_yaw
        self.temperature, self.cvar_alpha = float(temperature), float(cvar_alpha)
        self.time, self.detection_delay, self.duration = float(time), float(detection_delay), float(duration)
        self.attitude_weight, self.spin_weight = float(attitude_weight), float(spin_weight)

    # ------------------------------------------------------------------ interface

    @property
    def sense(self) -> int:
        """``+1`` for ``"tracking"`` (an error), ``-1`` for ``"hover_margin"`` (a margin)."""
        return 1 if self.measure_kind == "tracking" else -1

    @property
    def needs_flight(self) -> bool:
        """``False``: the term flies its own rotor-loss flights (from the design's controller and flight)."""
        return False

    def check(self, design) -> None:
        """Refuse, before tracing: a tracking measure without a controller or flight, a fault outside the
        flight (``reference="flight"``), a vehicle with fewer than two rotors."""
        n = design.platform.n_rotors
        if n < 2:
            raise ValueError(f"objective `worst_rotor_loss` loses one rotor at a time, but platform "
                             f"`{design.platform.name}` has {n}. Fix: use a vehicle with two or more rotors.")
        if self.measure_kind != "tracking":
            return
        if getattr(design, "flight", None) is None or getattr(design, "controller", None) is None:
            raise ValueError("objective `worst_rotor_loss` with measure = \"tracking\" flies each rotor loss, but the "
                             "design has no controller or flight. Fix: add [reference] (and [solver] adaptive = "
                             "false), or use measure = \"hover_margin\" (no flight).")
        if self.reference == "flight":
            flight = design.flight
            t_fault = flight.t0 + self.time
            if not t_fault < flight.end_time:
                raise ValueError(f"objective `worst_rotor_loss` parameter `time` = {self.time!r} puts the fault at "
                                 f"{t_fault} s, at or after the flight's end {flight.end_time} s. Fix: give a time "
                                 "inside the flight, or reference = \"hover\".")

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` the aggregate in the measure's units (m for tracking; the margin for hover_margin)."""
        del traj
        values, bad = self.values(design)
        b = self.sense * jnp.where(bad, 0.0, values)
        agg = soft_max(b, self.temperature) if self.aggregate == "max" else worst_fraction(b, self.cvar_alpha)
        return jnp.where(jnp.any(bad), jnp.nan, self.sense * agg)

    # ------------------------------------------------------------------ the per-rotor values

    def values(self, design) -> tuple[Float[Array, " n"], Array]:
        """``((n,) v_j, (n,) bad_j)``: the per-rotor measure (module docstring) and whether it is unusable
        (its flight diverged or the value is not finite); ``v_j`` is finite where ``bad_j``."""
        if self.measure_kind == "hover_margin":
            v = self.hover_margins(design.platform)
            bad = ~jnp.isfinite(v)
            return jnp.where(bad, 0.0, v), bad
        n = design.platform.n_rotors
        return jax.vmap(lambda j: self._tracking_one(design, j))(jnp.arange(n))

    def hover_margins(self, platform) -> Float[Array, " n"]:
        """``(n,)`` the zero-moment hover margin ``r_j`` after losing rotor ``j`` (the LP of
        :func:`jaxrotor.analysis.rotor_loss_margin`, with its barrier schedule; dimensionless)."""
        Gs = scaled_allocation_matrix(platform)
        n = Gs.shape[1]
        keep = np.array([[i for i in range(n) if i != j] for j in range(n)])
        Ms = Gs[3:]
        t_schedule = barrier_schedule(1e6, 6, 10, Gs.dtype)
        return jax.vmap(lambda idx: _max_min_ratio(Ms[:, idx], t_schedule))(jnp.asarray(keep))

    def fault_flight(self, design, rotor):
        """The :class:`~jaxrotor.flight.Flight` that loses ``rotor`` (0-based; an int or a traced int) at
        ``t0 + time``: the design's flight with the hover reference (``reference="hover"``: the start point
        and heading of the design's reference, held until ``t0 + time + duration``, starting at rest) and
        the one :class:`~jaxrotor.faults.Faults` event (any faults of the design's flight are replaced)."""
        flight = design.flight
        dtype = design.platform.mass.dtype
        faults = Faults("rotor_loss", jnp.asarray(rotor), jnp.asarray(flight.t0 + self.time, dtype), None,
                        jnp.asarray(self.detection_delay, dtype), release_yaw=self.release_yaw)
        if self.reference == "flight":
            return dataclasses.replace(flight, faults=faults)
        ref0 = flight.reference(jnp.asarray(flight.t0, dtype))
        hover = Hover(np.zeros(3), self.time + self.duration)  # then the start point and heading, traced or not
        hover = eqx.tree_at(lambda h: (h.position, h.yaw), hover, (ref0.p, jnp.asarray(ref0.yaw, dtype)))
        return dataclasses.replace(flight, reference=hover, t1=None, state0=None, faults=faults)

    def tracking_value(self, traj, t_fault: float) -> tuple[Float[Array, ""], Array]:
        """``(v, bad)`` of one rotor-loss trajectory: ``sqrt(mean |e_p|^2) + w_R sqrt(mean (e_x^2 + e_y^2)) +
        w_s |a_z|`` over the saved times ``t_k >= t_fault`` [m] (``a_z``: :func:`jaxrotor.verdict.yaw_rate_trend`),
        and whether the flight diverged or gave non-finite errors
        (then ``v`` is computed on zeros)."""
        window = traj.t >= t_fault - 1e-9
        e_p = position_error(traj)
        e_R = reference_orientation_error(traj)[:, :2]
        bad = traj.diverged | ~jnp.all(jnp.isfinite(e_p)) | ~jnp.all(jnp.isfinite(e_R))
        e_p = jnp.where(bad, 0.0, e_p)
        e_R = jnp.where(bad, 0.0, e_R)
        count = jnp.maximum(jnp.sum(window), 1)
        ms_p = jnp.sum(jnp.where(window, jnp.sum(e_p**2, axis=-1), 0.0)) / count
        ms_R = jnp.sum(jnp.where(window, jnp.sum(e_R**2, axis=-1), 0.0)) / count
        value = safe_sqrt(ms_p) + self.attitude_weight * safe_sqrt(ms_R)
        if self.spin_weight:  # static
            trend = yaw_rate_trend(dataclasses.replace(traj, omega=jnp.where(bad, 0.0, traj.omega)), window)
            value = value + self.spin_weight * jnp.abs(trend)
        return value, bad

    def _tracking_one(self, design, rotor):
        flight = self.fault_flight(design, rotor)
        traj = fly(design.platform, design.controller, flight)
        return self.tracking_value(traj, flight.t0 + self.time)
