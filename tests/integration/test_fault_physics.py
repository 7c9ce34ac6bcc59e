"""Faults on the physics layer (MJX and MuJoCo C) against the analytic layer.

The paper hexarotor of ``configs/paper_reproduction.toml`` hovering with its ``[[faults]]`` tables, flown as
one rigid vehicle on both layers (the engine's mass and inertia, welded propellers, no floor, 500 Hz control,
RK4 at 1 ms on both). Measured (float64):

* rotor 2 at 40 % from 0.5 s: analytic and MJX agree to 5.8e-5 m and 1.2e-4 rad, both hold full pose, MJX equals
  MuJoCo C to round-off. The engine holds each step's effectiveness from the step's start, so it sees the event
  at the first step after it; the analytic RK4 sees it in that step's middle stages. That is a first-order gap
  over one step, which the closed loop then damps;
* rotor 2 lost at 0.5 s, yaw released ("auto"): both layers' outcome is ``yaw_released``. Positions agree to
  4.6e-4 m and roll and pitch to 2.1e-4 rad; the released headings part by 3.5e-3 rad;
* a stuck rotor, with the propellers as the 30 ms motor (the paper hexarotor with its propellers' ``J_r``): the
  stuck propeller's speed drifts by 0.11 rad/s of 435 rad/s (the engine's body, moving with the vehicle) while
  the others move by 6 rad/s; the layers agree to 3.5e-5 m;
* a stuck tilt servo of the Voliro-like hexarotor (first-order servos): the hinge stays within 6e-4 rad of the
  frozen servo angle while the others follow their command; the layers agree to 1.5e-5 m.

Bounds are 3 to 5 times the measured gaps (the free heading's wider).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.faults import Faults
from jaxrotor.integrate import RK4
from jaxrotor.io.config import loads
from jaxrotor.physics import MJXPlant, MuJoCoPlant, build_model, default_parts, paper_hexarotor_parts
from jaxrotor.physics.mjcf import ModelOptions
from jaxrotor.reference import Hover
from jaxrotor.verdict import fault_outcome

ROOT = Path(__file__).resolve().parents[2]
BASE = (ROOT / "configs" / "paper_reproduction.toml").read_text().replace('compare = "paper_realistic.toml"', "")
RATE = 500.0  # Hz: two 1 ms engine steps per tick
RK4_1MS = jr.Integrator(solver=RK4(), adaptive=False, dt=1e-3)
WELDED = ModelOptions(spin=False, floor=False)
JR = 1.095e-4  # kg m^2: the paper hexarotor's propeller spin inertia
# Fault times fall between engine steps, and with the 50 ms detection delay between ticks: an event on the grid
# is a knife edge (the rounding of t - t_e decides which step sees it) that two compiled programs may cut apart.
T_STUCK, T_SERVO = 0.2005, 0.3005  # s


def _hover(duration: float, fault_table: str):
    """The paper hexarotor hovering at 1 m for ``duration`` [s] with one ``[[faults]]`` table."""
    text = BASE[:BASE.index("[reference]")] + f'[reference]\nkind = "hover"\nposition = [0.0, 0.0, 1.0]\n' \
                                              f"duration = {duration}\n"
    return loads(text + "\n[[faults]]\n" + fault_table + "\n", "fault.toml")


def _discrete(cfg, pm):
    """``(platform, flight)``: the config's flight at ``RATE`` with RK4 at 1 ms, on the engine's rigid vehicle."""
    return pm.physics_platform(), dataclasses.replace(cfg.flight, control_rate=RATE, integrator=RK4_1MS)


def _position_gap(a, b):
    return float(np.abs(np.asarray(a.p) - np.asarray(b.p)).max())


def _rotation_gaps(a, b):
    """``(angle, tilt)`` [rad]: the largest angle of ``R_a^T R_b`` and the largest angle between the body z axes."""
    M = np.einsum("tji,tjk->tik", np.asarray(a.R), np.asarray(b.R))
    sin = 0.5 * np.linalg.norm(np.stack([M[:, 2, 1] - M[:, 1, 2], M[:, 0, 2] - M[:, 2, 0], M[:, 1, 0] - M[:, 0, 1]],
                                        axis=1), axis=1)
    angle = np.arctan2(sin, (np.trace(M, axis1=1, axis2=2) - 1) / 2)
    za, zb = np.asarray(a.R)[:, :, 2], np.asarray(b.R)[:, :, 2]
    tilt = np.arctan2(np.linalg.norm(np.cross(za, zb), axis=1), np.einsum("ti,ti->t", za, zb))
    return float(angle.max()), float(tilt.max())


@pytest.fixture(scope="module")
def welded():
    """The paper hexarotor's model from the paper's parts, welded propellers, no floor."""
    return build_model(presets.paper_hexarotor(), paper_hexarotor_parts(), WELDED)


def test_a_partial_loss_on_the_engines_agrees_with_the_analytic_layer(welded):
    """Rotor 2 keeps 40 % of its thrust and drag from 0.5 s (detected after 50 ms): on MJX as on the analytic layer
    the reallocation holds full pose, and the trajectories agree; MJX equals MuJoCo C to round-off."""
    cfg = _hover(1.5, 'kind = "rotor_partial"\nrotor = 2\ntime = 0.5005\neffectiveness = 0.4')
    platform, flight = _discrete(cfg, welded)
    a = jr.fly(platform, cfg.controller, flight)
    x = jr.fly(platform, cfg.controller, flight, plant=MJXPlant().with_model(welded))
    c = jr.fly(platform, cfg.controller, flight, plant=MuJoCoPlant().with_model(welded))
    assert not bool(a.diverged) and not bool(x.diverged) and not bool(c.diverged)
    # MJX equals its numerical reference, the C engine, with the fault
    assert _position_gap(x, c) < 1e-9 and _rotation_gaps(x, c)[0] < 1e-9
    dp, (dR, _) = _position_gap(a, x), _rotation_gaps(a, x)
    print(f"partial loss, analytic vs MJX: |dp| {dp:.3g} m, |dR| {dR:.3g} rad")
    assert dp < 2e-4 and dR < 5e-4  # measured 5.8e-5 m, 1.2e-4 rad
    # the fault acts on the engine: the vehicle sags by far more than the layers' gap before the reallocation
    sag = float(np.abs(np.asarray(x.p - x.p_ref)).max())
    assert sag > 1e-3 and sag > 10 * dp
    assert fault_outcome(a, flight) == fault_outcome(x, flight) == "full_pose"
    # the degraded rotor is driven at 1/0.4 of its hover input on the engine
    u = np.asarray(x.u)
    assert u[-1, 1] == pytest.approx(u[0, 1] / 0.4, rel=1e-3)


def test_losing_a_rotor_releases_yaw_on_both_layers(welded):
    """Rotor 2 lost at 0.5 s, yaw released by the default policy: the MuJoCo C engine's outcome is the analytic
    layer's (``lost``: position and tilt held, the heading spins up beyond ``SPIN_ACCELERATION``); position,
    roll and pitch agree; the released headings part slowly."""
    cfg = _hover(2.5, 'kind = "rotor_loss"\nrotor = 2\ntime = 0.5005')
    platform, flight = _discrete(cfg, welded)
    a = jr.fly(platform, cfg.controller, flight)
    c = jr.fly(platform, cfg.controller, flight, plant=MuJoCoPlant().with_model(welded))
    dp, (dR, tilt) = _position_gap(a, c), _rotation_gaps(a, c)
    print(f"rotor loss, analytic vs MuJoCo C: |dp| {dp:.3g} m, |dR| {dR:.3g} rad, roll/pitch {tilt:.3g} rad")
    assert fault_outcome(a, flight) == fault_outcome(c, flight) == "lost"
    assert dp < 1.5e-3 and tilt < 1e-3 and dR < 0.05  # measured 4.6e-4 m, 2.1e-4 rad, 3.5e-3 rad (the free heading)
    # the lost rotor gives no thrust: the allocation switched it off on the engine too
    late = np.asarray(c.t) >= 2.0
    u = np.asarray(c.u)[late]
    assert np.abs(u[:, 1]).max() < 1e-6 * u.max()


def test_a_stuck_propeller_keeps_its_speed_and_the_layers_agree():
    """The paper hexarotor with its propellers' spin inertia, the propellers the 30 ms motor on the engine (their
    velocity servos), rotor 4 stuck at 0.2 s: the engine's propeller keeps its speed, the others move; the layers
    agree."""
    plat = dataclasses.replace(presets.get("paper_hexarotor_physics"), rotor_inertia=jnp.full(6, JR))
    pm = build_model(plat, paper_hexarotor_parts(), ModelOptions(spin=True, floor=False))
    platform = pm.physics_platform()
    hover = Hover((0.0, 0.0, 1.0), 0.6)
    s0 = jr.dynamics.initial_state(platform, p=[0.0, 0.0, 1.0], omega=[0.2, -0.1, 0.3], rotor_speed="hover")
    flight = jr.Flight(reference=hover, integrator=RK4_1MS, control_rate=RATE, save_dt=0.01, state0=s0,
                       actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)),
                       faults=Faults("rotor_stuck", 3, T_STUCK))
    # the lower yaw gains: with Table III's the yaw mode of this vehicle grows (tests/integration/test_rotor_inertia_layers)
    ctrl = jr.FullyActuatedSE3(K_R=(90.0, 90.0, 30.0), K_w=(25.0, 25.0, 3.0), K_Ri=(25.0, 25.0, 5.0))
    a = jr.fly(platform, ctrl, flight)
    c = jr.fly(platform, ctrl, flight, plant=MuJoCoPlant().with_model(pm))
    assert not bool(a.diverged) and not bool(c.diverged)
    after = np.asarray(c.t) > T_STUCK
    w_a, w_c = np.asarray(a.rotor_speed)[after], np.asarray(c.rotor_speed)[after]
    drift = np.abs(w_c[:, 3] - w_c[0, 3]).max()
    moving = np.ptp(w_c[:, [0, 1, 2, 4, 5]], axis=0).min()
    dp = _position_gap(a, c)
    print(f"stuck rotor: engine speed drift {drift:.3g} rad/s (others move {moving:.3g} rad/s), analytic vs "
          f"MuJoCo C |dp| {dp:.3g} m, |dw| {np.abs(w_a - w_c).max():.3g} rad/s")
    np.testing.assert_allclose(w_a[:, 3], w_a[0, 3], rtol=1e-12)  # the analytic rotor: frozen exactly
    assert drift < 1e-3 * w_c[0, 3] and moving > 10 * drift
    assert dp < 1.5e-4  # measured 3.5e-5 m


def test_a_stuck_tilt_servo_keeps_its_hinge_angle():
    """The Voliro-like hexarotor (one tilt hinge per arm, first-order servos) follows a tilt command; rotor 4's servo
    sticks at 0.3 s. The engine's hinge keeps its angle, the others follow; the layers agree."""
    tilt = presets.get("cs_ai_ting_6r")
    pm = build_model(tilt, default_parts(tilt), WELDED)
    platform = pm.physics_platform()
    a0 = jnp.asarray(platform.alpha)
    flight = jr.Flight(reference=Hover((0.0, 0.0, 1.0), 0.8), integrator=RK4_1MS, control_rate=RATE, save_dt=0.01,
                       tilt_command=lambda t: (a0 + 0.2 * jnp.sin(3.0 * t), None),
                       actuators=jr.Actuators(servo=jr.FirstOrderServo(0.05, rate_limit=6.0)),
                       faults=Faults("servo_stuck", 3, T_SERVO))
    ctrl = jr.FullyActuatedSE3()
    a = jr.fly(platform, ctrl, flight)
    c = jr.fly(platform, ctrl, flight, plant=MuJoCoPlant().with_model(pm))
    assert not bool(a.diverged) and not bool(c.diverged)
    t = np.asarray(c.t)
    after = t > T_SERVO
    al_a, al_c = np.asarray(a.alpha), np.asarray(c.alpha)
    frozen = al_a[after][0, 3]
    settled = t >= T_SERVO + 0.1  # the hinge's position servo (40 Hz) has caught up with its frozen target
    hold = np.abs(al_c[settled, 3] - frozen).max()
    moving = np.ptp(al_c[after][:, [0, 1, 2, 4, 5]], axis=0).min()
    dp = _position_gap(a, c)
    print(f"stuck servo: engine hinge off the frozen angle by {hold:.3g} rad from 0.1 s after the fault, "
          f"{np.abs(al_c[after, 3] - frozen).max():.3g} rad from the fault (others move {moving:.3g} rad), analytic vs "
          f"MuJoCo C |dp| {dp:.3g} m, |d alpha| {np.abs(al_a - al_c).max():.3g} rad")
    np.testing.assert_allclose(al_a[after, 3], frozen, rtol=0, atol=1e-12)  # the analytic servo: frozen
    assert hold < 2e-3 and moving > 0.03  # measured 6e-4 rad, 0.062 rad
    assert dp < 5e-5  # measured 1.5e-5 m
