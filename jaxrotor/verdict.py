"""Each flight ends with a verdict: ``ok``, or the reasons it failed.

A flight that ran without a runaway can still be a failure: a vehicle that cannot
hover falls while its rotors sit at their bounds, a gain set makes a growing
oscillation that never reaches the runaway limits. :func:`flight_verdict` turns a
flight's :class:`~jaxrotor.trajectory.Trajectory` (and what the analysis said before
it flew) into a :class:`Verdict` whose reasons are, in this order:

* ``diverged``: the trajectory's own flag (:func:`jaxrotor.trajectory.divergence_flag`:
  non-finite or runaway state, or a solver failure), or a *growing error envelope*:
  after the settle time the flight is cut into ``growth_windows`` equal windows and
  the largest ``|e_p|`` of the judged samples (below) of each is its envelope
  ``E_1 ... E_k``; the envelope grows when from the second window on each is at least
  :data:`GROWTH_STEP` times the one before, ``E_k >= error_growth * E_2`` and ``E_k`` is at
  least a quarter of the tracking threshold: a growing oscillation that has not yet left
  the tracking band. The first window is left out (a flight whose first phase is tracked
  exactly and whose second is harder is not growing), and millimetre ripples never count.
* ``lost_tracking``: on the judged samples (below) ``|e_p| = |p_r - p|`` [m] exceeds
  ``max(max_position_error, position_error_fraction * extent, step)``, where
  ``extent = max_t |p_r(t) - p_r(t0)|`` is how far the reference travels from its start
  and ``step`` the largest step the flight is asked to make: the initial error
  ``|e_p(t0)|`` (an initial state off the reference) or the largest jump of ``p_r``
  between two samples (a step reference). For a controller that tracks the reference
  attitude (``controller.tracks_attitude``) also ``|e_R|`` [rad] above
  ``max(max_attitude_error, |e_R(t0)|, the largest |e_R| between two reference samples)``.
* ``saturated``: the share of the judged time with any rotor at or beyond a bound
  (the allocator's flag ``Trajectory.saturated``, or a commanded input outside
  ``[u_min, u_max]`` that an unbounded motor applied anyway) above ``max_saturation``.

* ``unstable``: the closed loop linearised about hover has a growing mode
  (:func:`jaxrotor.analysis.closed_loop_stability`, computed before the flight and
  passed in as ``stability``; a loop without a hover equilibrium is left to
  ``infeasible``).
* ``infeasible``: the static analysis says the reference cannot be held: no input
  within bounds holds the vehicle at level hover, or, for a full-pose reference flown
  by a fixed-tilt platform, at one of the reference's attitudes
  (:func:`jaxrotor.analysis.envelope.hover_at_attitude`; :func:`hover_feasibility`).

Judged: the samples from ``t0 + settle`` on, except the ``settle`` after each reference
jump (``reference.jump_times``), where a brief saturation or a large error is the vehicle
answering the jump (the paper's realistic flight touches a rotor bound for a moment at
8 s and 37 s).
``settle = min(settle_time, duration / 2)``, so a short flight is still judged on its
second half. Every threshold is a field of :class:`VerdictThresholds` (TOML: the
``[flight]`` keys of :data:`TOML_KEYS`). The measurements (:func:`verdict_measures`)
are a pure JAX function of the trajectory (``jit``, ``vmap``: a sweep computes them
for every point); the decision (:func:`decide`), the stability report and the
hover linear programs (SciPy) run on the host.
"""

from __future__ import annotations

import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import ArrayLike

from .faults import HOVER_TILT, OUTCOMES, SPIN_ACCELERATION
from .numerics import safe_norm
from .so3 import attitude_error
from .tilted import MAX_AXIS_TILT
from .trajectory import Trajectory

__all__ = [
    "mean_tilt",
    "yaw_rate_trend",
    "FAULT_OUTCOMES",
    "GROWTH_STEP",
    "REASONS",
    "TOML_KEYS",
    "Feasibility",
    "Verdict",
    "VerdictMeasures",
    "VerdictThresholds",
    "decide",
    "fault_outcome",
    "fault_outcome_code",
    "flight_verdict",
    "hover_feasibility",
    "verdict_line",
    "verdict_measures",
]

#: The reasons a verdict can raise, in the order they are listed.
REASONS = ("diverged", "lost_tracking", "saturated", "unstable", "infeasible")

#: Least ratio of one window's error envelope to the previous one's in a growing envelope (the periodic
#: error of a figure-eight repeats from window to window; an instability multiplies it).
GROWTH_STEP = 1.2


@dataclasses.dataclass(frozen=True)
class VerdictThresholds:
    """What a flight may do before its verdict is raised (module docstring for each rule).

    Attributes:
        max_saturation: largest share of the judged time with any rotor at a bound
            (dimensionless, default 0.05: 5 %).
        max_position_error: floor of the tracking threshold [m] (default 0.5 m).
        position_error_fraction: the tracking threshold's share of the reference's extent
            ``max_t |p_r(t) - p_r(t0)|`` (dimensionless, default 0.25).
        max_attitude_error: largest ``|e_R|`` of the judged samples for a controller that tracks
            the reference attitude [rad] (default 0.35 rad, 20 deg).
        settle_time: time after the start and after each reference jump that is not judged [s]
            (default 1.0 s; at most half the flight).
        error_growth: envelope ratio ``E_k / E_2`` of a growing oscillation (default 3.0).
        growth_windows: windows the judged time is cut into for the envelope (default 4, at least 3).
    """

    max_saturation: float = 0.05
    max_position_error: float = 0.5
    position_error_fraction: float = 0.25
    max_attitude_error: float = 0.35
    settle_time: float = 1.0
    error_growth: float = 3.0
    growth_windows: int = 4

    def __post_init__(self):
        for name in ("max_saturation", "max_position_error", "position_error_fraction", "max_attitude_error",
                     "settle_time", "error_growth"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"VerdictThresholds `{name}` = {v!r} is invalid: it must be a finite number >= 0. "
                                 f"Fix: pass e.g. {getattr(VerdictThresholds, name)!r}.")
        if self.error_growth < 1.0:
            raise ValueError(f"VerdictThresholds `error_growth` = {self.error_growth!r} is invalid: a growing envelope "
                             "is a ratio >= 1. Fix: pass e.g. 3.0.")
        if isinstance(self.growth_windows, bool) or not isinstance(self.growth_windows, int) or self.growth_windows < 3:
            raise ValueError(f"VerdictThresholds `growth_windows` = {self.growth_windows!r} is invalid: the envelope "
                             "needs at least 3 windows. Fix: pass e.g. 4.")


#: ``[flight]`` TOML key of each :class:`VerdictThresholds` field (the same names).
TOML_KEYS = tuple(f.name for f in dataclasses.fields(VerdictThresholds))


class VerdictMeasures(eqx.Module):
    """What :func:`decide` judges, measured from one trajectory (arrays; a leading batch axis under ``vmap``).

    Attributes:
        diverged: ``()`` bool, the trajectory's divergence flag.
        saturation_fraction: ``()`` share of the judged samples with any rotor at or beyond a bound.
        judged_time: ``()`` judged time [s].
        max_position_error: ``()`` largest finite ``|e_p|`` of the judged samples [m].
        initial_position_error: ``()`` ``|e_p(t0)|`` [m].
        reference_extent: ``()`` ``max_t |p_r(t) - p_r(t0)|`` [m].
        reference_step: ``()`` largest ``|p_r(t_k+1) - p_r(t_k)|`` between two samples [m].
        max_attitude_error: ``()`` largest finite ``|e_R|`` of the judged samples [rad].
        initial_attitude_error: ``()`` ``|e_R(t0)|`` [rad].
        reference_attitude_step: ``()`` largest ``|e_R|`` between two consecutive reference attitudes [rad].
        envelope: ``(W,)`` largest finite ``|e_p|`` of the judged samples in each of the ``growth_windows``
            windows after the settle time [m] (0 for an empty window).
        settle: ``()`` the settle time used, ``min(settle_time, duration / 2)`` [s].
    """

    diverged: Array
    saturation_fraction: Array
    judged_time: Array
    max_position_error: Array
    initial_position_error: Array
    reference_extent: Array
    reference_step: Array
    max_attitude_error: Array
    initial_attitude_error: Array
    reference_attitude_step: Array
    envelope: Array
    settle: Array

    def to_dict(self) -> dict:
        """Plain Python floats and lists (one unbatched flight)."""
        out = {}
        for name in self.__dataclass_fields__:
            a = np.asarray(getattr(self, name))
            out[name] = bool(a) if name == "diverged" else a.astype(float).tolist()
        return out


def _masked_max(x: Array, mask: Array) -> Array:
    """Largest finite entry of ``x`` where ``mask``; 0 when there is none."""
    ok = mask & jnp.isfinite(x)
    return jnp.max(jnp.where(ok, x, 0.0), initial=0.0)


def verdict_measures(traj: Trajectory, platform, flight, thresholds: VerdictThresholds = VerdictThresholds()
                     ) -> VerdictMeasures:
    """Measure one flight for its verdict (pure JAX: ``jit``- and ``vmap``-able; units in :class:`VerdictMeasures`).

    Args:
        traj: the :class:`~jaxrotor.trajectory.Trajectory` (unbatched).
        platform: the :class:`~jaxrotor.design.platform.Platform` flown (its input bounds ``u_min``, ``u_max``).
        flight: the :class:`~jaxrotor.flight.Flight` (its start ``t0``, end and the reference's ``jump_times``).
        thresholds: the static settle time and number of envelope windows.
    """
    t = traj.t
    dtype = t.dtype
    t0 = float(flight.t0)
    duration = float(flight.end_time) - t0
    settle = min(float(thresholds.settle_time), 0.5 * duration)
    after_start = t >= t0 + settle - 1e-9
    judged = after_start
    for tj in flight.reference.jump_times:
        tj = t0 + float(tj)
        judged = judged & ~((t >= tj - 1e-9) & (t < tj + settle - 1e-9))
    # at a bound: the allocator's flag, or a command outside the bounds that an unbounded motor applied
    tol = 1e-9 * jnp.maximum(1.0, jnp.abs(traj.u_cmd))
    beyond = (traj.u_cmd < platform.u_min - tol) | (traj.u_cmd > platform.u_max + tol)
    at_bound = jnp.any(traj.saturated | beyond, axis=-1)
    n_judged = jnp.sum(judged)
    sat = jnp.where(n_judged > 0, jnp.sum(at_bound & judged) / jnp.maximum(n_judged, 1), 0.0).astype(dtype)
    save_dt = float(flight.save_dt)
    e_p = safe_norm(traj.p_ref - traj.p)
    e_R = safe_norm(jax.vmap(attitude_error)(traj.R, traj.R_ref))
    everywhere = jnp.ones_like(after_start)
    extent = _masked_max(safe_norm(traj.p_ref - traj.p_ref[0]), everywhere)
    ref_step = _masked_max(safe_norm(jnp.diff(traj.p_ref, axis=0)), everywhere[1:])
    ref_att_step = _masked_max(safe_norm(jax.vmap(attitude_error)(traj.R_ref[1:], traj.R_ref[:-1])), everywhere[1:])
    k = int(thresholds.growth_windows)
    start, span = t0 + settle, max(duration - settle, 1e-12)
    idx = jnp.clip(jnp.floor((t - start) / span * k), 0, k - 1)
    envelope = jnp.stack([_masked_max(e_p, judged & (idx == i)) for i in range(k)])
    return VerdictMeasures(
        diverged=jnp.asarray(traj.diverged),
        saturation_fraction=sat,
        judged_time=(n_judged * save_dt).astype(dtype),
        max_position_error=_masked_max(e_p, judged),
        initial_position_error=jnp.where(jnp.isfinite(e_p[0]), e_p[0], 0.0),
        reference_extent=extent,
        reference_step=ref_step,
        max_attitude_error=_masked_max(e_R, judged),
        initial_attitude_error=jnp.where(jnp.isfinite(e_R[0]), e_R[0], 0.0),
        reference_attitude_step=ref_att_step,
        envelope=envelope,
        settle=jnp.asarray(settle, dtype=dtype),
    )


_compiled_measures = eqx.filter_jit(verdict_measures)


@dataclasses.dataclass(frozen=True)
class Feasibility:
    """Whether the platform can hold the reference at rest (:func:`hover_feasibility`).

    Attributes:
        feasible: ``True`` when every attitude checked can be held with inputs in bounds.
        margin: the smallest :attr:`~jaxrotor.analysis.envelope.HoverCheck.margin` over them (fraction of
            the input range; ``< 0`` infeasible, ``-inf`` when no input at all makes that wrench).
        roll, pitch: the attitude of that worst case [rad] (``R = R_z R_y R_x``).
        checked: how many attitudes were checked (level hover included).
    """

    feasible: bool
    margin: float
    roll: float
    pitch: float
    checked: int


#: Largest number of reference attitudes :func:`hover_feasibility` checks (evenly spread, plus the most tilted).
MAX_ATTITUDES = 48


def hover_feasibility(platform, flight, controller=None, R_ref=None) -> Feasibility:
    """Check that ``platform`` can hold level hover and, when the attitude is tracked, the reference's attitudes.

    Level hover is always checked. The reference's attitudes are checked too when the reference is a
    full-pose one (``flight.reference.is_full_pose``), ``controller`` (if given) tracks it and the
    platform has fixed tilt (a tilting platform's allocator moves its rotors to hold an attitude the
    frozen angles cannot). Each check is the linear program of
    :func:`jaxrotor.analysis.envelope.hover_at_attitude` (host side, SciPy): at most
    :data:`MAX_ATTITUDES` distinct attitudes, evenly spread over the flight, plus the most tilted one.

    Args:
        platform: a concrete (untraced) :class:`~jaxrotor.design.platform.Platform`.
        flight: the :class:`~jaxrotor.flight.Flight`.
        controller: the controller, for its ``tracks_attitude`` (``None``: judged by the reference alone).
        R_ref: ``(T, 3, 3)`` reference attitudes already sampled (e.g. ``Trajectory.R_ref``); ``None``
            samples ``flight.reference`` at ``flight.save_times``.
    """
    from .analysis.envelope import hover_at_attitude

    attitudes = [(0.0, 0.0)]
    tracks = True if controller is None else bool(controller.tracks_attitude)
    if flight.reference.is_full_pose and tracks and not platform.is_tilting:
        if R_ref is None:
            times = jnp.asarray(flight.save_times, dtype=jnp.result_type(float))
            R_ref = jax.jit(jax.vmap(lambda s: flight.reference(s).R))(times)
        n_up = np.asarray(R_ref)[:, 2, :]  # R^T e_3 = (-sin p, cos p sin r, cos p cos r)
        n_up = n_up[np.all(np.isfinite(n_up), axis=-1)]
        if len(n_up):
            pitch = -np.arcsin(np.clip(n_up[:, 0], -1.0, 1.0))
            roll = np.arctan2(n_up[:, 1], n_up[:, 2])
            rp = np.unique(np.round(np.stack([roll, pitch], axis=-1), 4), axis=0)
            tilt = np.arccos(np.clip(np.cos(rp[:, 0]) * np.cos(rp[:, 1]), -1.0, 1.0))
            pick = np.unique(np.r_[np.linspace(0, len(rp) - 1, min(len(rp), MAX_ATTITUDES)).round().astype(int),
                                   np.argmax(tilt)])
            attitudes += [(float(r), float(p)) for r, p in rp[pick]]
    worst = None
    for roll, pitch in attitudes:
        check = hover_at_attitude(platform, roll, pitch)
        if worst is None or check.margin < worst[0]:
            worst = (check.margin, roll, pitch)
    margin, roll, pitch = worst
    return Feasibility(feasible=bool(margin >= -1e-9), margin=float(margin), roll=roll, pitch=pitch,
                       checked=len(attitudes))


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The verdict of one flight.

    Attributes:
        reasons: the raised reasons (a subset of :data:`REASONS`, in that order); empty when ok.
        details: for each reason, what was measured against which threshold (the text of :meth:`line`).
        measures: the :class:`VerdictMeasures` in plain form (``{}`` when none were taken).
    """

    reasons: tuple[str, ...] = ()
    details: dict = dataclasses.field(default_factory=dict)
    measures: dict = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No reason raised."""
        return not self.reasons

    def to_json(self) -> str | list[str]:
        """``"ok"``, or the list of reasons (the ``verdict`` of ``metrics.json``)."""
        return "ok" if self.ok else list(self.reasons)

    def line(self, name: str | None = None) -> str:
        """One line: ``verdict: ok`` or ``verdict: FAILED — saturated (34 % of the time, threshold 5 %), ...``."""
        head = "verdict" + (f" ({name})" if name else "") + ": "
        if self.ok:
            return head + "ok"
        return head + "FAILED — " + ", ".join(f"{r} ({self.details[r]})" if self.details.get(r) else r
                                               for r in self.reasons)


def _pct(x: float) -> str:
    return f"{100 * x:.3g} %"


def decide(measures: VerdictMeasures | dict, thresholds: VerdictThresholds = VerdictThresholds(), *,
           tracks_attitude: bool = False, stability=None, feasibility: Feasibility | None = None) -> Verdict:
    """The :class:`Verdict` of one flight from its :class:`VerdictMeasures` (host side; module docstring for the rules).

    Args:
        measures: of one unbatched flight (or its :meth:`~VerdictMeasures.to_dict`).
        thresholds: the :class:`VerdictThresholds`.
        tracks_attitude: judge the attitude error too (the controller tracks the reference attitude).
        stability: a :class:`~jaxrotor.analysis.StabilityReport` of the flight's closed loop, or ``None``
            (not judged).
        feasibility: a :class:`Feasibility`, or ``None`` (not judged).
    """
    m = measures.to_dict() if isinstance(measures, VerdictMeasures) else dict(measures)
    th = thresholds
    reasons: dict[str, str] = {}
    pos_limit = max(th.max_position_error, th.position_error_fraction * m["reference_extent"],
                    m["initial_position_error"], m["reference_step"])
    env = [float(e) for e in m["envelope"]][1:]
    growing = (len(env) >= 2 and all(b >= GROWTH_STEP * a for a, b in zip(env, env[1:]))
               and env[-1] >= th.error_growth * env[0] and env[-1] >= 0.25 * pos_limit)
    if m["diverged"]:
        reasons["diverged"] = "non-finite or runaway state, or solver failure"
    elif growing:
        reasons["diverged"] = (f"error envelope growing {env[0]:.3g} -> {env[-1]:.3g} m over the last "
                               f"{len(env)} of {len(env) + 1} windows, x{env[-1] / max(env[0], 1e-300):.3g}, "
                               f"threshold x{th.error_growth:g}")
    lost = []
    if m["max_position_error"] > pos_limit:
        lost.append(f"max position error {m['max_position_error']:.3g} m, threshold {pos_limit:.3g} m")
    att_limit = max(th.max_attitude_error, m["initial_attitude_error"], m["reference_attitude_step"])
    if tracks_attitude and m["max_attitude_error"] > att_limit:
        lost.append(f"max attitude error {m['max_attitude_error']:.3g} rad, threshold {att_limit:.3g} rad")
    if lost:
        reasons["lost_tracking"] = "; ".join(lost)
    if m["saturation_fraction"] > th.max_saturation:
        reasons["saturated"] = (f"{_pct(m['saturation_fraction'])} of {m['judged_time']:.3g} s judged, "
                                f"threshold {_pct(th.max_saturation)}")
    if stability is not None and bool(stability.equilibrium_found) and not bool(stability.stable):
        reasons["unstable"] = f"linearised about hover: {stability.summary()}"
    if feasibility is not None and not feasibility.feasible:
        where = ("level hover" if feasibility.roll == 0.0 and feasibility.pitch == 0.0 else
                 f"roll {math.degrees(feasibility.roll):.3g} deg, pitch {math.degrees(feasibility.pitch):.3g} deg")
        reasons["infeasible"] = f"cannot hold {where} with inputs in bounds, margin {feasibility.margin:.3g}"
    ordered = tuple(r for r in REASONS if r in reasons)
    return Verdict(reasons=ordered, details={r: reasons[r] for r in ordered}, measures=m)


def flight_verdict(traj: Trajectory, platform, flight, *, thresholds: VerdictThresholds = VerdictThresholds(),
                   controller=None, stability=None, feasibility: Feasibility | None = None) -> Verdict:
    """The :class:`Verdict` of one flight: :func:`verdict_measures` (compiled) then :func:`decide`.

    Args:
        traj: the flight's :class:`~jaxrotor.trajectory.Trajectory` (unbatched, any layer).
        platform: the :class:`~jaxrotor.design.platform.Platform` flown (its input bounds).
        flight: the :class:`~jaxrotor.flight.Flight` flown.
        thresholds: the :class:`VerdictThresholds`.
        controller: the controller flown; its ``tracks_attitude`` says whether the attitude error is judged
            (``None``: it is judged for a full-pose reference only).
        stability: the :class:`~jaxrotor.analysis.StabilityReport` computed before the flight, or ``None``.
        feasibility: a :class:`Feasibility` (:func:`hover_feasibility`), or ``None``.
    """
    measures = _compiled_measures(traj, platform, flight, thresholds)
    tracks = flight.reference.is_full_pose if controller is None else bool(controller.tracks_attitude)
    return decide(measures, thresholds, tracks_attitude=tracks, stability=stability, feasibility=feasibility)


def verdict_line(verdicts: dict[str, Verdict]) -> str:
    """The verdict lines of several flights ``{name: Verdict}``: one flight's :meth:`Verdict.line`, or one line each."""
    if len(verdicts) == 1:
        return next(iter(verdicts.values())).line()
    return "\n".join(v.line(n) for n, v in verdicts.items())


#: The words of :func:`fault_outcome` (``metrics.json`` ``fault_outcome``); :func:`fault_outcome_code` ``i`` is
#: ``FAULT_OUTCOMES[i]``.
FAULT_OUTCOMES = OUTCOMES


def fault_outcome_code(traj: Trajectory, faults, *, settle: float | ArrayLike = 3.0,
                       position_tol: float | ArrayLike = 0.1, attitude_tol: float | ArrayLike = HOVER_TILT) -> Array:
    """What a flight with faults held after its last fault, as an integer: the index into :data:`FAULT_OUTCOMES`.

    ``0`` (``"full_pose"``), ``1`` (``"yaw_released"``) or ``2`` (``"lost"``); the rule is :func:`fault_outcome`'s.
    Pure JAX (``jit``, ``vmap``): the fault times, the thresholds and the trajectory may all be traced, so a
    batch of flights with random faults is judged inside the same compiled program that flies it.

    The judged window starts at ``t_s = min(t_f + settle, t_end - (t_end - t_f)^+ / 5)``, with ``t_f`` the last
    fault's time and ``t_end`` the last sample (the flight's last fifth after the fault when it ends before
    ``t_f + settle``). On the samples ``t >= t_s`` the position error is ``e_p = |p_r - p|`` [m] and the attitude
    error ``e_R`` is Lee's ``1/2 (R_r^T R - R^T R_r)^vee`` [rad] per body axis (roll, pitch, yaw). The flight is
    ``full_pose`` when it did not diverge, the window is not empty and on every judged sample ``e_p <=
    position_tol`` and every axis of ``e_R`` is within ``attitude_tol``, or when, the position held, the attitude
    is held constant and heading kept (the tilted full-pose hover of a vehicle that lost wrench rank,
    :func:`jaxrotor.control.axis_wrench`): every axis of ``e_R`` stays within ``attitude_tol`` of its window mean
    ``e_m``, ``|e_m,z| <= attitude_tol`` and ``|e_m| <= sin`` :data:`jaxrotor.tilted.MAX_AXIS_TILT`; else
    ``yaw_released`` when the position is
    held on every judged sample, the spin steady (the least-squares slope of the body yaw rate ``omega_z`` over the
    window, :func:`yaw_rate_trend`, within :data:`jaxrotor.faults.SPIN_ACCELERATION`: a vehicle whose yaw torque is not cancelled spins up
    without bound) and the thrust axis is held on average: the window mean of the body ``z`` axis
    ``R e3`` lies within ``attitude_tol`` of the window mean of the reference's (:func:`mean_tilt`; a vehicle in a
    relaxed hover spins with its body ``z`` axis on a cone about the vertical, and its mean thrust is what holds
    it up); else ``lost`` (a non-finite error counts as exceeding).

    Args:
        traj: the flight's :class:`~jaxrotor.trajectory.Trajectory` (unbatched; ``vmap`` for a batch).
        faults: the flight's :class:`~jaxrotor.faults.Faults` (its ``time`` ``(k,)`` [s], traced or not).
        settle: time after the last fault before the flight is judged [s].
        position_tol: largest position error of a held flight [m].
        attitude_tol: largest attitude error per axis of a held attitude [rad].

    Returns:
        ``()`` int32 code.
    """
    t = traj.t
    t_fault = jnp.max(jnp.asarray(faults.time, t.dtype))
    t_end = t[-1]
    start = jnp.minimum(t_fault + settle, t_end - 0.2 * jnp.maximum(t_end - t_fault, 0.0))
    window = t >= start - 1e-9
    e_p = jnp.linalg.norm(traj.p_ref - traj.p, axis=-1)
    e_R_signed = jax.vmap(attitude_error)(traj.R, traj.R_ref)
    e_R = jnp.abs(e_R_signed)
    within = e_R <= attitude_tol  # False for a non-finite error

    def held(ok):
        return jnp.all(jnp.where(window, ok, True))

    position = held(e_p <= position_tol)
    axis_held = _mean_tilt(traj, window) <= attitude_tol  # False for NaN
    count = jnp.maximum(jnp.sum(window), 1)
    e_mean = jnp.sum(jnp.where(window[:, None], e_R_signed, 0.0), axis=0) / count
    steady = held(jnp.all(jnp.abs(e_R_signed - e_mean) <= attitude_tol, axis=-1))
    tilted = steady & (jnp.abs(e_mean[2]) <= attitude_tol) & (jnp.linalg.norm(e_mean) <= math.sin(MAX_AXIS_TILT))
    full = held(jnp.all(within, axis=-1)) | tilted
    spin_steady = jnp.abs(yaw_rate_trend(traj, window)) <= SPIN_ACCELERATION  # False for NaN
    lost = jnp.asarray(traj.diverged) | ~jnp.any(window) | ~position | ~(full | (axis_held & spin_steady))
    return jnp.where(lost, 2, jnp.where(full, 0, 1)).astype(jnp.int32)


def yaw_rate_trend(traj: Trajectory, window) -> Array:
    """``()`` the least-squares slope [rad/s^2] of the body yaw rate ``omega_z`` over the samples where ``window``
    ``(T,)`` bool is true: ``sum_k (t_k - t_m)(omega_z,k - omega_m) / sum_k (t_k - t_m)^2`` (``t_m``, ``omega_m``
    the window means; ``sum_k (t_k - t_m) = 0`` drops ``omega_m``). A vehicle whose yaw torque is not cancelled
    spins up at ``tau_z / J_zz``: this is that rate; a steady spin gives 0. Pure JAX (traced windows, ``vmap``);
    differentiable in the trajectory."""
    count = jnp.maximum(jnp.sum(window), 1)
    t_mean = jnp.sum(jnp.where(window, traj.t, 0.0)) / count
    dt = jnp.where(window, traj.t - t_mean, 0.0)
    return jnp.sum(dt * jnp.where(window, traj.omega[:, 2], 0.0)) / jnp.maximum(jnp.sum(dt**2), 1e-30)


def _mean_tilt(traj: Trajectory, window) -> Array:
    z = jnp.sum(jnp.where(window[:, None], traj.R[:, :, 2], 0.0), axis=0)
    z_ref = jnp.sum(jnp.where(window[:, None], traj.R_ref[:, :, 2], 0.0), axis=0)
    cos = jnp.dot(z, z_ref) / jnp.maximum(jnp.linalg.norm(z) * jnp.linalg.norm(z_ref), 1e-30)
    return jnp.arccos(jnp.clip(cos, -1.0, 1.0))


def mean_tilt(traj: Trajectory, t_from: float | ArrayLike) -> Array:
    """``()`` the angle [rad] between the mean body ``z`` axis and the mean reference ``z`` axis from ``t_from`` [s].

    ``z_m = sum_k R_k e3``, ``z_r = sum_k R_r,k e3`` over the samples ``t_k >= t_from``;
    ``acos(z_m . z_r / (|z_m| |z_r|))``: the tilt of the mean thrust direction. For a hovering vehicle it is its
    tilt; for a vehicle in a relaxed hover, spinning with its body ``z`` axis on a cone, it is the tilt of the
    cone's axis (the primary axis), not the cone's half-angle. NaN for a non-finite attitude; ``pi/2`` for no
    sample. Pure JAX.
    """
    return _mean_tilt(traj, traj.t >= t_from - 1e-9)


_compiled_outcome = eqx.filter_jit(fault_outcome_code)


def fault_outcome(traj: Trajectory, flight, *, settle: float = 3.0, position_tol: float = 0.1,
                  attitude_tol: float = HOVER_TILT) -> str | None:
    """What a flight with faults held after its last fault: ``"full_pose"``, ``"yaw_released"`` or ``"lost"``.

    Judged on the samples from ``settle`` [s] after the last fault's time (or, for a flight that ends
    sooner, its last fifth after the fault): ``"lost"`` when the flight diverged or the position error
    ``|p_r - p|`` exceeds ``position_tol`` [m] there; else ``"full_pose"`` when the attitude error against
    the reference attitude stays within ``attitude_tol`` [rad] on every axis (or the attitude is held constant
    within it, heading kept, tilted by at most :data:`jaxrotor.tilted.MAX_AXIS_TILT`: the tilted full-pose hover
    of a vehicle that lost wrench rank), ``"yaw_released"`` when the mean
    body ``z`` axis (the mean thrust direction, :func:`mean_tilt`) stays within it of the reference's but the
    attitude does not (position and thrust axis held, heading given up: a flat hexarotor turning slowly, or a
    quadrotor spinning in a relaxed hover) and the yaw rate's trend is within :data:`jaxrotor.faults.SPIN_ACCELERATION`
    [rad/s^2]; and ``"lost"`` when the mean axis or the spin does not hold either. ``None`` for a flight without faults. The rule is
    :func:`fault_outcome_code` (compiled), whose code names the word in :data:`FAULT_OUTCOMES`.
    """
    if flight.faults is None:
        return None
    dtype = traj.t.dtype  # thresholds as arrays: one compilation serves every value
    code = _compiled_outcome(traj, flight.faults, settle=jnp.asarray(settle, dtype),
                             position_tol=jnp.asarray(position_tol, dtype), attitude_tol=jnp.asarray(attitude_tol, dtype))
    return FAULT_OUTCOMES[int(code)]
