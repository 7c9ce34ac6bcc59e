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
