"""References: derivatives consistent, eq. (13), minimum jerk and sequences; full-pose references (position and
attitude independent functions of time) and their checks.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets, so3
from jaxrotor.reference import (
    AttitudeRamp,
    Circle,
    ConstantAttitude,
    FigureEight,
    FullPose,
    Hover,
    SinusoidalAttitude,
    Transfer,
    paper_maneuver,
    pitch_hover,
    pitching_figure_eight,
    tilted_transfer,
    tilting_hex_maneuver,
)


@pytest.mark.parametrize("ref", [
    pitch_hover(duration=4.0, ramp_time=2.0),
    tilted_transfer((0.0, 0.0, 1.0), (2.0, 1.0, 1.5), 4.0, rpy=(0.1, -0.2, 0.3)),
    pitching_figure_eight(6.0, period=6.0),
    FullPose(Hover((0.0, 0.0, 1.0), 3.0), SinusoidalAttitude((0.2, 0.3, 0.5), 2.0, offset=(0.0, 0.1, -0.4))),
])
def test_attitude_rates_match_finite_differences(ref):
    """``omega = (R^T dR/dt)^vee`` and ``omega_dot`` agree with central differences of ``R`` and ``omega``."""
    sample = jax.jit(ref.__call__)
    h = 1e-5
    for t in np.linspace(0.31, ref.duration - 0.29, 5):  # off the ramp ends (kinks of the clip)
        s, sp, sm = sample(jnp.asarray(t)), sample(jnp.asarray(t + h)), sample(jnp.asarray(t - h))
        R = np.asarray(s.R)
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
        dR = (np.asarray(sp.R) - np.asarray(sm.R)) / (2 * h)
        np.testing.assert_allclose(np.asarray(s.omega), np.asarray(so3.vee(R.T @ dR)), atol=1e-7)
        np.testing.assert_allclose(np.asarray(s.omega_dot), (np.asarray(sp.omega) - np.asarray(sm.omega)) / (2 * h),
                                   atol=1e-6)


def test_attitude_profiles_and_the_maneuver():
    ramp = AttitudeRamp((0.0, 0.0, 0.0), (0.0, 0.5, 0.0), 2.0)
    np.testing.assert_allclose(np.asarray(ramp.angles(jnp.asarray(1.0))), [0.0, 0.25, 0.0], atol=1e-15)  # s(1/2)
    np.testing.assert_allclose(np.asarray(ramp.angles(jnp.asarray(3.0))), [0.0, 0.5, 0.0])
    np.testing.assert_allclose(np.asarray(ConstantAttitude((0.1, 0.2, 0.3)).angles(jnp.asarray(5.0))), [0.1, 0.2, 0.3])
    R30 = np.asarray(pitch_hover()(jnp.asarray(5.0)).R)
    np.testing.assert_allclose(R30, np.asarray(so3.rot_y(math.radians(30.0))), atol=1e-15)
    maneuver = tilting_hex_maneuver()
    assert maneuver.is_full_pose and maneuver.duration == 44.0 and 14.0 in maneuver.jump_times
    m = jax.jit(maneuver.__call__)
    assert not Hover((0.0, 0.0, 1.0), 1.0).is_full_pose
    # the attitude is continuous across the phase boundaries (level at 14 s, 30 deg through 12 s)
    for tb in (12.0, 14.0):
        Ra, Rb = (np.asarray(m(jnp.asarray(tb + d)).R) for d in (-1e-9, 1e-9))
        np.testing.assert_allclose(Ra, Rb, atol=1e-6)
    np.testing.assert_allclose(np.asarray(m(jnp.asarray(14.0 + 7.5)).R), np.asarray(so3.rot_y(math.radians(20.0))),
                               atol=1e-12)  # the pitch amplitude at a quarter period of the figure-eight


def test_full_pose_references_need_an_attitude_tracking_fully_actuated_vehicle():
    ref = pitch_hover(duration=2.0)
    flight = jr.Flight(reference=ref)
    with pytest.raises(ValueError, match="tracks only a heading"):
        jr.fly(presets.cs_4r(), jr.UnderactuatedSE3(), flight)
    with pytest.raises(ValueError, match="under-actuated and cannot hold an attitude"):
        jr.fly(presets.cs_4r(), jr.FullyActuatedSE3(), flight)
    with pytest.raises(ValueError, match="nothing commands its servos"):
        jr.fly(presets.get("cs_ai_ting_6r"), jr.FullyActuatedSE3(), flight)


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize(
    "ref",
    [
        FigureEight(10.0, period=30.0),
        FigureEight(5.0, center=(1.0, 2.0, 3.0), amplitude=(0.5, 2.0), period=7.0),
        Circle(6.0, radius=1.5, period=4.0),
        Transfer((0.0, 0.0, 0.0), (1.0, -2.0, 3.0), 4.0),
    ],
)
def test_reference_derivatives_are_consistent(ref):
    """v, a, j are the time derivatives of p, v, a (checked by forward-mode AD in t)."""
    for t in np.linspace(0.1, ref.duration - 0.1, 7):
        t = jnp.asarray(t)
        s = ref(t)
        for lo, hi in (("p", "v"), ("v", "a"), ("a", "j")):
            d = jax.jacfwd(lambda tt: getattr(ref(tt), lo))(t)
            np.testing.assert_allclose(d, getattr(s, hi), atol=1e-10)


def test_figure_eight_is_eq_13():
    ref = FigureEight(30.0)
    for t in (0.0, 3.3, 12.0, 29.0):
        np.testing.assert_allclose(ref(jnp.asarray(t)).p, [np.sin(np.pi * t / 15), np.sin(2 * np.pi * t / 15), 1.0], atol=1e-14)


def test_minimum_jerk_endpoints_and_sequence_jumps():
    tr = Transfer((0, 0, 0), (0, 0, 1), 8.0)
    for t, p in ((0.0, 0.0), (4.0, 0.5), (8.0, 1.0)):
        s = tr(jnp.asarray(t))
        np.testing.assert_allclose(s.p[2], p, atol=1e-14)
    for t in (0.0, 8.0):
        s = tr(jnp.asarray(t))
        np.testing.assert_allclose([s.v[2], s.a[2]], 0.0, atol=1e-14)
    m = paper_maneuver()
    assert m.duration == 45.0
    assert 8.0 in m.jump_times and 37.0 in m.jump_times
    # velocity jumps at 8 s from rest to (pi/15, 2 pi/15, 0)
    np.testing.assert_allclose(m(jnp.asarray(8.0 - 1e-9)).v, 0.0, atol=1e-6)
    np.testing.assert_allclose(m(jnp.asarray(8.0)).v, [np.pi / 15, 2 * np.pi / 15, 0.0], atol=1e-12)
    # continuous position at the phase boundaries, landing ends on the ground
    for tj in (8.0, 37.0):
        np.testing.assert_allclose(m(jnp.asarray(tj - 1e-9)).p, m(jnp.asarray(tj)).p, atol=1e-8)
    assert float(m(jnp.asarray(45.0)).p[2]) == pytest.approx(0.0, abs=1e-14)
    with pytest.raises(ValueError, match="duration"):
        paper_maneuver(duration=10.0)


# --------------------------------------------------------------------------- step and waypoints

from jaxrotor.fixed_step import fixed_step_grid  # noqa: E402
from jaxrotor.reference import MIN_JERK_PEAK_RATIO, Step, Waypoints  # noqa: E402


def test_step_holds_start_then_target_and_declares_its_jump():
    ref = Step([1.0, 0.0, 1.0], 1.0, 6.0, start=[0.0, 0.0, 1.0], target_yaw_deg=90.0)
    sample = jax.jit(ref.__call__)
    before, at, after = sample(jnp.asarray(np.nextafter(1.0, 0.0))), sample(jnp.asarray(1.0)), sample(jnp.asarray(7.0))
    np.testing.assert_array_equal(np.asarray(before.p), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(at.p), [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(after.p), [1.0, 0.0, 1.0])
    assert float(before.yaw) == 0.0 and float(at.yaw) == pytest.approx(math.pi / 2)
    np.testing.assert_allclose(np.asarray(at.R), np.asarray(so3.rot_z(math.pi / 2)), atol=1e-15)
    for s in (before, at, after):
        for leaf in (s.v, s.a, s.j, s.omega, s.omega_dot):
            np.testing.assert_array_equal(np.asarray(leaf), 0.0)
    assert ref.duration == 6.0 and ref.jump_times == (1.0,)
    change = ref.step_change
    assert change.time == 1.0 and change.yaw_target == pytest.approx(math.pi / 2) and change.rise == 0.0
    np.testing.assert_array_equal(change.target - change.start, [1.0, 0.0, 0.0])
    assert Hover((0.0, 0.0, 1.0), 2.0).step_change is None
    # a fixed-step solve brackets the step by its floating-point neighbours: no step straddles it
    grid = fixed_step_grid(0.0, 2.0, 0.3, ref.jump_times, dtype=np.float64)
    assert np.nextafter(1.0, 0.0) in grid and np.nextafter(1.0, 2.0) in grid


def test_smoothed_step_is_a_minimum_jerk_transfer_with_a_yaw_rate():
    ref = Step([2.0, -1.0, 1.5], 0.5, 4.0, start=[0.0, 0.0, 1.0], yaw=0.2, target_yaw=1.2, rise=2.0)
    assert ref.jump_times == (0.5, 2.5)
    same = Transfer([0.0, 0.0, 1.0], [2.0, -1.0, 1.5], 2.0)
    sample = jax.jit(ref.__call__)
    h = 1e-6
    for t in (0.9, 1.5, 2.2):
        s, m = sample(jnp.asarray(t)), same(jnp.asarray(t - 0.5))
        for k in ("p", "v", "a", "j"):
            np.testing.assert_allclose(np.asarray(getattr(s, k)), np.asarray(getattr(m, k)), rtol=1e-12, atol=1e-12)
        # omega_r = (0, 0, dpsi/dt) and omega_dot_r its derivative, from the same profile
        dpsi = (float(sample(jnp.asarray(t + h)).yaw) - float(sample(jnp.asarray(t - h)).yaw)) / (2 * h)
        np.testing.assert_allclose(np.asarray(s.omega), [0.0, 0.0, dpsi], atol=1e-8)
        dw = (np.asarray(sample(jnp.asarray(t + h)).omega) - np.asarray(sample(jnp.asarray(t - h)).omega)) / (2 * h)
        np.testing.assert_allclose(np.asarray(s.omega_dot), dw, atol=1e-6)
    assert float(sample(jnp.asarray(1.5)).yaw) == pytest.approx(0.7)  # s(1/2) = 1/2


@pytest.mark.parametrize("kwargs, words", [
    (dict(time=6.0), "must end before `duration`"),
    (dict(time=5.0, rise=1.5), "must end before `duration`"),
    (dict(time=0.0), "`time` = 0.0"),
    (dict(yaw=0.1, yaw_deg=5.0), "both given"),
    (dict(start=None), "`start` is missing"),
    (dict(target=[1.0, 0.0]), "`target`"),
    (dict(rise=-1.0), "`rise` = -1.0"),
])
def test_step_refuses_bad_parameters(kwargs, words):
    args = dict(target=[1.0, 0.0, 1.0], time=1.0, duration=6.0, start=[0.0, 0.0, 1.0]) | kwargs
    with pytest.raises(ValueError, match="Fix:") as err:
        Step(**args)
    assert words in str(err.value)


def test_waypoints_follow_the_minimum_jerk_closed_form_on_each_segment():
    pts = np.array([[0.0, 0.0, 1.0], [2.0, 0.0, 1.0], [2.0, 1.0, 2.0]])
    ref = Waypoints(pts, segment_times=[4.0, 3.0], yaw=[0.0, 0.5, 0.5], hold=1.0)
    assert ref.duration == 4.0 + 3.0 + 3 * 1.0 and ref.segment_starts == (1.0, 6.0)
    assert ref.jump_times == (1.0, 5.0, 6.0, 9.0)
    sample = jax.jit(ref.__call__)
    for (t0, T), p0, p1 in zip(((1.0, 4.0), (6.0, 3.0)), pts[:-1], pts[1:]):
        d = p1 - p0
        start, mid, end = (sample(jnp.asarray(t0 + f * T)) for f in (0.0, 0.5, 1.0))
        # s(0) = 0, s(1/2) = 1/2, s(1) = 1; s' = 30 x^2 (1 - x)^2: 0 at the ends, 15/8 at the midpoint; s''(1/2) = 0
        np.testing.assert_allclose(np.asarray(start.p), p0, atol=1e-15)
        np.testing.assert_allclose(np.asarray(mid.p), p0 + d / 2, atol=1e-15)
        np.testing.assert_allclose(np.asarray(end.p), p1, atol=1e-15)
        np.testing.assert_allclose(np.asarray(mid.v), MIN_JERK_PEAK_RATIO * d / T, rtol=1e-14)
        np.testing.assert_allclose(np.asarray(mid.a), 0.0, atol=1e-14)
        np.testing.assert_allclose(np.asarray(mid.j), -30.0 * d / T**3, rtol=1e-14)  # s'''(1/2) = 60 (1 - 3 + 3/2)
        for s in (start, end):
            np.testing.assert_allclose(np.asarray(s.v), 0.0, atol=1e-15)
            np.testing.assert_allclose(np.asarray(s.a), 0.0, atol=1e-15)
        x = 0.3  # anywhere on the segment
        s = sample(jnp.asarray(t0 + x * T))
        np.testing.assert_allclose(np.asarray(s.p), p0 + d * x**3 * (10 - 15 * x + 6 * x**2), rtol=1e-14)
        np.testing.assert_allclose(np.asarray(s.a), d * 60 * x * (1 - x) * (1 - 2 * x) / T**2, rtol=1e-13)
    # continuous position, velocity and acceleration (and heading) across every segment end and hold
    for tj in ref.jump_times:
        lo, hi = sample(jnp.asarray(np.nextafter(tj, 0.0))), sample(jnp.asarray(np.nextafter(tj, 20.0)))
        for k in ("p", "v", "a", "yaw"):
            np.testing.assert_allclose(np.asarray(getattr(lo, k)), np.asarray(getattr(hi, k)), atol=1e-12, err_msg=k)
    np.testing.assert_array_equal(np.asarray(sample(jnp.asarray(0.5)).p), pts[0])  # the first hold
    np.testing.assert_array_equal(np.asarray(sample(jnp.asarray(12.0)).p), pts[-1])  # held after the end
    assert float(sample(jnp.asarray(7.5)).yaw) == pytest.approx(0.5)


def test_waypoints_speed_is_the_peak_speed_and_points_are_differentiable():
    pts = np.array([[0.0, 0.0, 1.0], [3.0, 4.0, 1.0], [3.0, 4.0, 2.0]])
    ref = Waypoints(pts, speed=2.0)
    assert ref.segment_times == pytest.approx((1.875 * 5.0 / 2.0, 1.875 * 1.0 / 2.0))
    ts = np.linspace(0.0, ref.duration, 2001)
    speeds = np.linalg.norm(np.asarray(jax.vmap(ref.__call__)(jnp.asarray(ts)).v), axis=1)
    assert speeds.max() == pytest.approx(2.0, rel=1e-5)

    def x_at(points, t):
        return Waypoints(points, segment_times=[2.0, 1.0])(t).p[0]

    t = 0.5  # x = 1/4 on segment 0: p = p0 + (p1 - p0) s, s(1/4) = 0.103515625
    g = jax.jit(jax.grad(x_at))(jnp.asarray(pts), jnp.asarray(t))
    s = 0.25**3 * (10 - 15 * 0.25 + 6 * 0.25**2)
    np.testing.assert_allclose(np.asarray(g), [[1 - s, 0, 0], [s, 0, 0], [0, 0, 0]], atol=1e-15)
    flat = Waypoints(pts.ravel().tolist(), speed=2.0)  # a flat list of 3k numbers is the same
    np.testing.assert_array_equal(np.asarray(flat.points), pts)


@pytest.mark.parametrize("kwargs, words", [
    (dict(speed=1.0, segment_times=[1.0, 1.0]), "exactly one"),
    (dict(), "exactly one"),
    (dict(points=[[0, 0, 1], [0, 0, 1], [1, 0, 1]], speed=1.0), "zero length"),
    (dict(segment_times=[1.0]), "2 finite durations"),
    (dict(segment_times=[1.0, -1.0]), "2 finite durations"),
    (dict(points=[[0, 0, 1]], speed=1.0), "k >= 2"),
    (dict(points=[[0, 0], [1, 0]], speed=1.0), "expected (k, 3)"),
    (dict(speed=1.0, yaw=[0.0, 1.0]), "`yaw`"),
    (dict(speed=1.0, hold=-1.0), "`hold`"),
    (dict(segment_times=[1.0, 1.0], duration=1.0), "shorter"),
])
def test_waypoints_refuse_bad_parameters(kwargs, words):
    args = dict(points=[[0, 0, 1], [1, 0, 1], [1, 1, 1]]) | kwargs
    with pytest.raises(ValueError, match="Fix:") as err:
        Waypoints(**args)
    assert words in str(err.value)
