"""Step-response metrics of a flight: rise time, overshoot and settling time per axis.

For a reference whose :attr:`~jaxrotor.reference.AbstractReference.step_change` is not
``None`` (the :class:`~jaxrotor.reference.Step` reference), :func:`step_metrics` measures how
the flown position (world ``x``, ``y``, ``z``) and heading ``psi = atan2(R_21, R_11)`` answer
the change of set point from ``start`` to ``target`` at ``time = t_s``. With ``y_0``, ``y_1``
the set point before and after, ``Δ = y_1 - y_0`` the step and ``r(t) = (y(t) - y_0) / Δ`` the
normalised response on the samples ``t >= t_s``:

* rise time [s]: from the first time ``r`` reaches 0.1 to the first time it reaches 0.9
  (linear interpolation between samples); NaN if it never reaches 0.9;
* overshoot (fraction of ``|Δ|``, >= 0): ``max(0, max_t r(t) - 1)``;
* settling time [s]: from ``t_s`` to the instant after which ``|y(t) - y_1|`` stays within the
  band ``settle_fraction |Δ|`` (2 %) for good (interpolated where the error crosses the band);
  0 if it never leaves the band, NaN if the last sample is outside it (never settled).

An axis whose set point does not change (``|Δ| <= 1e-9``) has no rise time and no overshoot
(``None``); its settling time is measured against an absolute band, ``position_band`` (1 cm)
for a position axis, ``yaw_band`` (1 deg) for the heading: how long the step on the other axes
disturbs it. The heading is compared modulo ``2 pi`` (``y(t) = psi_1 - wrap(psi_1 - psi(t))``).
A response with a non-finite sample (a diverged flight) gives NaN; a flight that ends before
the step has no step metrics.

These are reports on a flown :class:`~jaxrotor.trajectory.Trajectory` (NumPy, concrete
values; not differentiable). ``metrics.json`` of ``jaxrotor simulate`` holds them for a step
reference (:func:`jaxrotor.workflows.usecase.fly`); NaN is written as ``null``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SETTLE_FRACTION", "POSITION_BAND", "YAW_BAND", "STEP_KEYS", "step_axis", "step_metrics"]

#: Settling band of a stepped axis, as a fraction of the step size.
SETTLE_FRACTION = 0.02
#: Settling band of a position axis without a step [m].
POSITION_BAND = 0.01
#: Settling band of the heading without a yaw step [rad] (1 deg).
YAW_BAND = math.radians(1.0)
#: The keys :func:`step_metrics` returns.
STEP_KEYS = ("step_time", "step_size", "step_rise_time", "step_overshoot", "step_settling_time", "step_yaw_size",
             "step_yaw_rise_time", "step_yaw_overshoot", "step_yaw_settling_time")

_NO_STEP = 1e-9


def _first_crossing(t: np.ndarray, r: np.ndarray, level: float) -> float:
    """First time ``r`` reaches ``level`` (linear interpolation from the previous sample); NaN if never."""
    hit = np.nonzero(r >= level)[0]
    if hit.size == 0:
        return math.nan
    i = int(hit[0])
    if i == 0:
        return float(t[0])
    f = (level - r[i - 1]) / (r[i] - r[i - 1])
    return float(t[i - 1] + f * (t[i] - t[i - 1]))


def step_axis(t, y, y0: float, y1: float, t_step: float, band: float | None = None,
              settle_fraction: float = SETTLE_FRACTION) -> tuple[float | None, float | None, float]:
    """Rise time [s], overshoot (fraction) and settling time [s] of one sampled response (module docstring).

    Args:
        t: ``(T,)`` sample times [s], increasing.
        y: ``(T,)`` the response (same unit as ``y0``, ``y1``).
        y0: set point before the step.
        y1: set point after the step.
        t_step: the step instant [s]; samples before it are ignored.
        band: settling band (absolute, unit of ``y``) of an axis without a step; required then.
        settle_fraction: settling band of a stepped axis as a fraction of ``|y1 - y0|``.

    Returns:
        ``(rise_time, overshoot, settling_time)``; rise time and overshoot are ``None`` when
        ``|y1 - y0| <= 1e-9``; NaN for what the response never reaches, a non-finite response, or
        fewer than two samples at or after ``t_step`` (a flight that ended before the step).

    Raises:
        ValueError: ``t`` and ``y`` differ in shape, or a missing or non-positive band.
    """
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    if t.shape != y.shape or t.ndim != 1:
        raise ValueError(f"step_axis parameters `t` (shape {t.shape}) and `y` (shape {y.shape}) must be two 1-D "
                         "arrays of the same length. Fix: pass the sample times and one axis of the response.")
    after = t >= t_step
    ta, ya = t[after], y[after]
    delta = float(y1) - float(y0)
    stepped = abs(delta) > _NO_STEP
    if stepped:
        band = settle_fraction * abs(delta)
    elif band is None or not band > 0:
        raise ValueError(f"step_axis parameter `band` = {band!r} is invalid for an axis without a step: the settling "
                         "band must be > 0. Fix: pass an absolute band, e.g. 0.01 (m).")
    if ya.size < 2 or not np.all(np.isfinite(ya)):  # the flight ended before the step, or diverged
        return (math.nan, math.nan, math.nan) if stepped else (None, None, math.nan)
    err = np.abs(ya - float(y1))
    outside = np.nonzero(err > band)[0]
    if outside.size == 0:
        settling = 0.0
    elif outside[-1] == ya.size - 1:
        settling = math.nan
    else:
        k = int(outside[-1])
        f = (err[k] - band) / (err[k] - err[k + 1])
        settling = float(ta[k] + f * (ta[k + 1] - ta[k]) - t_step)
    if not stepped:
        return None, None, settling
    r = (ya - float(y0)) / delta
    rise = _first_crossing(ta, r, 0.9) - _first_crossing(ta, r, 0.1)
    overshoot = max(0.0, float(np.max(r)) - 1.0)
    return float(rise), overshoot, settling


def _wrap(a):
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def step_metrics(traj, reference, settle_fraction: float = SETTLE_FRACTION, position_band: float = POSITION_BAND,
                 yaw_band: float = YAW_BAND) -> dict:
    """Step-response metrics of a flight against its reference's step (module docstring); ``{}`` without one.

    Args:
        traj: the flown :class:`~jaxrotor.trajectory.Trajectory` (unbatched).
        reference: the reference it flew; its ``step_change`` (a :class:`~jaxrotor.reference.StepChange`
            or ``None``) says what to measure.
        settle_fraction: settling band of a stepped axis, fraction of the step size (default 2 %).
        position_band: settling band of a position axis without a step [m] (default 0.01).
        yaw_band: settling band of the heading without a yaw step [rad] (default 1 deg).

    Returns:
        ``{}`` when the reference has no step or the flight ends before it, else (plain Python; NaN
        where never reached, ``None`` where the axis has no step):
        ``step_time`` [s]; ``step_size`` ``[Δx, Δy, Δz]`` [m]; ``step_rise_time`` [s],
        ``step_overshoot`` (fraction of ``|Δ|``), ``step_settling_time`` [s] (after the step), each a
        3-list for ``x, y, z``; ``step_yaw_size`` [rad] and ``step_yaw_rise_time``,
        ``step_yaw_overshoot``, ``step_yaw_settling_time`` for the heading.
    """
    change = getattr(reference, "step_change", None)
    if change is None:
        return {}
    t = np.asarray(traj.t, dtype=float)
    p = np.asarray(traj.p, dtype=float)
    R = np.asarray(traj.R, dtype=float)
    if t.ndim != 1:
        raise ValueError(f"step_metrics parameter `traj` has times of shape {t.shape}: one flight is measured at a "
                         "time. Fix: index the batch (jax.tree.map(lambda x: x[i], traj)) before measuring.")
    if np.count_nonzero(t >= change.time) < 2:  # the flight ended before the step: nothing to measure
        return {}
    start, target = np.asarray(change.start, dtype=float), np.asarray(change.target, dtype=float)
    axes = [step_axis(t, p[:, i], start[i], target[i], change.time, position_band, settle_fraction) for i in range(3)]
    psi1 = float(change.yaw_target)
    dpsi = float(_wrap(psi1 - float(change.yaw_start)))
    psi = psi1 - _wrap(psi1 - np.arctan2(R[:, 1, 0], R[:, 0, 0]))
    yaw = step_axis(t, psi, psi1 - dpsi, psi1, change.time, yaw_band, settle_fraction)
    return {
        "step_time": float(change.time),
        "step_size": [float(x) for x in target - start],
        "step_rise_time": [a[0] for a in axes],
        "step_overshoot": [a[1] for a in axes],
        "step_settling_time": [a[2] for a in axes],
        "step_yaw_size": dpsi,
        "step_yaw_rise_time": yaw[0],
        "step_yaw_overshoot": yaw[1],
        "step_yaw_settling_time": yaw[2],
    }
