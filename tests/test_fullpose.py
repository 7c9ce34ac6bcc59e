"""Full-pose references (position and attitude independent functions of time), their checks and configs."""

import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets, so3
from jaxrotor.io import config as cfg
from jaxrotor.reference import (
    AttitudeRamp,
    ConstantAttitude,
    FullPose,
    Hover,
    SinusoidalAttitude,
    pitch_hover,
    pitching_figure_eight,
    tilted_transfer,
    tilting_hex_maneuver,
)

ROOT = Path(__file__).resolve().parents[1]


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


def test_tilting_configs_load_and_bad_ones_fail_at_load(tmp_path):
    from jaxrotor.tilting import CantSelection, ExtendedVariable

    full = cfg.load(ROOT / "configs" / "tilting_hex_fullpose.toml")
    assert isinstance(full.flight.allocator, ExtendedVariable) and full.platform.label() == "CS_αi-Ting_6R"
    assert full.flight.reference.is_full_pose and full.flight.end_time == 44.0
    cant = cfg.load(ROOT / "configs" / "cant_tilting_hex.toml")
    assert isinstance(cant.flight.allocator, CantSelection) and cant.platform.label() == "CS_α0-Ting_6R"
    assert cant.flight.reference.phases[1].period == 10.0
    text = (ROOT / "configs" / "cant_tilting_hex.toml").read_text()
    with pytest.raises(cfg.ConfigError, match="excludes the current cant"):
        cfg.loads(text.replace("limits = [0.08726646259971647, 0.6981317007977318]", "limits = [0.5, 0.6]"))
    with pytest.raises(cfg.ConfigError, match="fixed-tilt"):
        cfg.loads(text.replace('preset = "cs_a0_ting_6r"', 'preset = "paper_hexarotor"'))
