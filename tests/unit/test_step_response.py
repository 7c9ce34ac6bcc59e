"""Step-response metrics (``jaxrotor.step_response``) against closed forms: a first-order lag (rise time
``tau ln 9``, settling time ``tau ln 50``), an underdamped second-order system (overshoot
``exp(-zeta pi / sqrt(1 - zeta^2))``), the axes without a step, the heading, and what never settles.
"""

import math
import types

import numpy as np
import pytest

from jaxrotor import so3
from jaxrotor.reference import Hover, Step
from jaxrotor.step_response import POSITION_BAND, STEP_KEYS, step_axis, step_metrics

T_STEP = 1.0
T = np.linspace(0.0, 12.0, 120_001)  # 0.1 ms samples: the interpolated crossings are exact to ~1e-9 s
AFTER = np.clip(T - T_STEP, 0.0, None)


def first_order(tau):
    return 1.0 - np.exp(-AFTER / tau)


def second_order(zeta, wn):
    wd = wn * math.sqrt(1 - zeta**2)
    phi = math.acos(zeta)
    return 1.0 - np.exp(-zeta * wn * AFTER) * np.sin(wd * AFTER + phi) / math.sqrt(1 - zeta**2)


def test_first_order_rise_and_settling_times_are_the_closed_form():
    tau = 0.4
    y0, y1 = 2.0, -1.0  # a step down of 3: the measures do not depend on its sign or size
    rise, overshoot, settling = step_axis(T, y0 + (y1 - y0) * first_order(tau), y0, y1, T_STEP)
    assert rise == pytest.approx(tau * math.log(9.0), abs=1e-8)
    assert settling == pytest.approx(tau * math.log(50.0), abs=1e-8)
    assert overshoot == 0.0


@pytest.mark.parametrize("zeta", [0.2, 0.5, 0.7])
def test_second_order_overshoot_is_the_closed_form(zeta):
    wn = 4.0
    y = 1.0 + 0.5 * second_order(zeta, wn)
    rise, overshoot, settling = step_axis(T, y, 1.0, 1.5, T_STEP)
    assert overshoot == pytest.approx(math.exp(-zeta * math.pi / math.sqrt(1 - zeta**2)), abs=1e-8)
    # the envelope exp(-zeta wn t) / sqrt(1 - zeta^2) bounds the settling time; the first band crossing
    # of a lightly damped system is within one half period of it
    envelope = math.log(1 / (0.02 * math.sqrt(1 - zeta**2))) / (zeta * wn)
    assert envelope - math.pi / (wn * math.sqrt(1 - zeta**2)) < settling <= envelope + 1e-6
    assert 0 < rise < math.pi / (wn * math.sqrt(1 - zeta**2))  # before the first peak


def test_an_axis_without_a_step_has_a_settling_time_against_the_absolute_band():
    bump = 0.05 * np.exp(-AFTER / 0.5) * (T >= T_STEP)  # disturbed to 5 cm at the step, decaying with 0.5 s
    rise, overshoot, settling = step_axis(T, 1.0 + bump, 1.0, 1.0, T_STEP, band=POSITION_BAND)
    assert rise is None and overshoot is None
    assert settling == pytest.approx(0.5 * math.log(0.05 / POSITION_BAND), abs=1e-8)
    assert step_axis(T, np.full_like(T, 1.0), 1.0, 1.0, T_STEP, band=0.01)[2] == 0.0  # never left the band
    with pytest.raises(ValueError, match="`band`.*Fix:"):
        step_axis(T, np.full_like(T, 1.0), 1.0, 1.0, T_STEP)


def test_what_never_happens_is_nan():
    slow = first_order(100.0)  # never reaches 90 % (nor the 2 % band) within the samples
    rise, overshoot, settling = step_axis(T, slow, 0.0, 1.0, T_STEP)
    assert math.isnan(rise) and math.isnan(settling) and overshoot == 0.0
    bad = first_order(0.3)
    bad[-10] = np.nan  # a diverged response
    assert all(math.isnan(v) for v in step_axis(T, bad, 0.0, 1.0, T_STEP))
    early = step_axis(T[T < 0.9], first_order(0.3)[T < 0.9], 0.0, 1.0, T_STEP)  # the flight ended before the step
    assert all(math.isnan(v) for v in early)


def test_step_metrics_measures_every_axis_and_the_heading():
    ref = Step([1.0, 0.0, 2.0], T_STEP, 12.0, start=[0.0, 0.0, 1.0], yaw_deg=170.0, target_yaw_deg=-170.0)
    tau = 0.3
    r = first_order(tau)
    p = np.stack([r, 0.02 * np.exp(-AFTER / 0.2) * (T >= T_STEP), 1.0 + 1.0 * second_order(0.5, 5.0)], axis=1)
    dpsi = math.radians(20.0)  # 170 deg to -170 deg: +20 deg the short way, through +-180 deg
    psi = math.radians(170.0) + dpsi * first_order(0.5)
    R = np.stack([np.asarray(so3.rot_z(a)) for a in psi[::100]])
    traj = types.SimpleNamespace(t=T[::100], p=p[::100], R=R)  # 10 ms samples, as a flight saves them
    m = step_metrics(traj, ref)
    assert set(m) == set(STEP_KEYS)
    assert m["step_time"] == T_STEP and m["step_size"] == [1.0, 0.0, 1.0]
    assert m["step_rise_time"][0] == pytest.approx(tau * math.log(9.0), abs=2e-3)
    assert m["step_rise_time"][1] is None and m["step_overshoot"][1] is None
    assert m["step_overshoot"][2] == pytest.approx(math.exp(-0.5 * math.pi / math.sqrt(0.75)), abs=1e-3)
    assert m["step_settling_time"][0] == pytest.approx(tau * math.log(50.0), abs=2e-3)
    assert m["step_settling_time"][1] == pytest.approx(0.2 * math.log(2.0), abs=2e-3)
    assert m["step_yaw_size"] == pytest.approx(dpsi)
    assert m["step_yaw_rise_time"] == pytest.approx(0.5 * math.log(9.0), abs=2e-3)
    assert m["step_yaw_overshoot"] == pytest.approx(0.0, abs=1e-9)
    assert m["step_yaw_settling_time"] == pytest.approx(0.5 * math.log(50.0), abs=2e-3)
    assert step_metrics(traj, Hover((0.0, 0.0, 1.0), 12.0)) == {}  # no step: no step metrics
    early = types.SimpleNamespace(t=traj.t[:100], p=traj.p[:100], R=traj.R[:100])
    assert step_metrics(early, ref) == {}  # the flight ended before the step: nothing to measure
