"""Rotor inertia on both layers: the physics layer's propellers are the motor, and the layers agree.

The RotorSuite hexarotor with ``J^p`` (``paper_hexarotor_physics``) and its propellers' spin inertia
``J_r = 1.095e-4 kg m^2``, a 30 ms first-order motor, spinning propellers, the paper maneuver from
3 s to 10 s (the reference jump at 8 s inside), 1 kHz control, 1 ms steps (RK4 on both layers):

* with the lower yaw gains (``K_R = (90, 90, 30)``, ``K_w = (25, 25, 3)``, ``K_Ri = (25, 25, 5)``) the
  analytic plant (eqs. 1-2, 11-12 with the gyroscopic and spin-up reaction torques) and the MuJoCo C
  engine (the propeller hinges servoed as the motor, ``k_v = J_r / tau_m``) agree to 1 mm in position,
  1e-3 rad in attitude and 2 rad/s in rotor speed outside the second after the jump (measured
  0.14 mm, 1.7e-4 rad, 0.27 rad/s: the engine holds each step's thrust at the propeller's speed at the
  step's start, a first-order term that halves with the step); MJX equals MuJoCo C to round-off;
* with Table III's gains the yaw mode is unstable on both layers and grows at the same rate
  (measured 6.3 /s analytic, 6.5 /s engine, both at 4.5 Hz).

Also: the engine's spin inertia is the platform's rotor inertia (an override, in Python or TOML),
the propeller servo's gain is the flight's, and the motor's current limit acts alike on both layers
and is refused by name where the platform lacks what it needs.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.control import FullyActuatedSE3, UnderactuatedSE3
from jaxrotor.integrate import RK4
from jaxrotor.io.platform_table import platform_from_table
from jaxrotor.physics import MJXPlant, MuJoCoPlant, build_model, default_parts, paper_hexarotor_parts
from jaxrotor.physics.mjcf import ModelOptions

JR = 1.095e-4  # kg m^2
T0, T1 = 3.0, 10.0  # s: the paper maneuver's transfer end, the jump at 8 s, two seconds of the figure-eight
LOW_YAW = dict(K_R=(90.0, 90.0, 30.0), K_w=(25.0, 25.0, 3.0), K_Ri=(25.0, 25.0, 5.0))
SPIN = ModelOptions(spin=True, floor=False)


def _paper_platform():
    return dataclasses.replace(presets.get("paper_hexarotor_physics"), rotor_inertia=jnp.full(6, JR))


@pytest.fixture(scope="module")
def model():
    return build_model(_paper_platform(), paper_hexarotor_parts(), SPIN)


def _flight():
    return jr.Flight(reference=jr.reference.paper_maneuver(), actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)),
                     integrator=jr.Integrator(solver=RK4(), adaptive=False, dt=1e-3), control_rate=1000.0,
                     save_dt=0.01, t0=T0, t1=T1)


@pytest.fixture(scope="module")
def flown(model):
    """``{(plant, gains): Trajectory}``: the lower yaw gains and Table III's on the analytic plant (one vmapped
    compilation) and MuJoCo C (one shared compilation), the lower gains on MJX."""
    plat = model.physics_platform()  # the engine's mass and inertia on both layers
    flight = _flight()
    ctrls = {"low": FullyActuatedSE3(**LOW_YAW), "table": FullyActuatedSE3()}
    stacked = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *ctrls.values())
    trajs = eqx.filter_vmap(lambda c: jr.fly(plat, c, flight, jr.AnalyticPlant()))(stacked)
    out = {("analytic", g): jax.tree_util.tree_map(lambda x, i=i: x[i] if eqx.is_array(x) else x, trajs)
           for i, g in enumerate(ctrls)}
    c_plant = MuJoCoPlant(share_compilation=True).with_model(model)
    for g, c in ctrls.items():
        out[("mujoco", g)] = jr.fly(plat, c, flight, c_plant)
    out[("mjx", "low")] = jr.fly(plat, ctrls["low"], flight, MJXPlant().with_model(model))
    return out


def _attitude_gap(a, b):
    """``(T,)`` the angle of ``R_a^T R_b`` [rad] (``atan2`` of its sine and cosine: exact near zero)."""
    M = np.einsum("tji,tjk->tik", np.asarray(a.R), np.asarray(b.R))
    sin = 0.5 * np.linalg.norm(np.stack([M[:, 2, 1] - M[:, 1, 2], M[:, 0, 2] - M[:, 2, 0], M[:, 1, 0] - M[:, 0, 1]],
                                        axis=1), axis=1)
    return np.arctan2(sin, (np.trace(M, axis1=1, axis2=2) - 1) / 2)


def _growth(traj, lo=1e-10, hi=3e-2):
    """``(rate [1/s], frequency [Hz])`` of the yaw rate while its envelope (a 0.23 s running maximum, one period)
    grows from ``lo`` to ``hi`` rad/s: the slope of its logarithm and the zero crossings."""
    t, w = np.asarray(traj.t), np.asarray(traj.omega)[:, 2]
    env = np.array([np.abs(w[max(0, i - 11):i + 12]).max() for i in range(len(w))])
    m = (env > lo) & (env < hi) & (t > T0 + 0.5)
    rate = np.polyfit(t[m], np.log(env[m]), 1)[0]
    s, ts = w[m], t[m]
    zc = ts[1:][np.sign(s[1:]) != np.sign(s[:-1])]
    return float(rate), float((len(zc) - 1) / (2 * (zc[-1] - zc[0])))


def test_the_layers_agree_with_rotor_inertia_and_a_30ms_motor(flown):
    a, c = flown[("analytic", "low")], flown[("mujoco", "low")]
    assert not bool(a.diverged) and not bool(c.diverged)
    t = np.asarray(a.t)
    dp = np.abs(np.asarray(a.p) - np.asarray(c.p)).max()
    dR = _attitude_gap(a, c).max()
    dw = np.abs(np.asarray(a.rotor_speed) - np.asarray(c.rotor_speed)).max(axis=1)
    steady = np.ones_like(t, dtype=bool)
    for j in _flight().reference.jump_times:
        steady &= ~((t >= j) & (t < j + 1.0))
    print(f"analytic vs MuJoCo C: |dp| {dp:.3g} m, |dR| {dR:.3g} rad, |dw| {dw[steady].max():.3g} rad/s "
          f"(outside 1 s after the jump; {dw.max():.3g} rad/s with it)")
    assert dp < 1e-3 and dR < 1e-3 and dw[steady].max() < 2.0
    # the physics layer's motor is the propeller: it reports the hinge speeds as the motor's
    np.testing.assert_array_equal(np.asarray(c.motor_speed), np.asarray(c.rotor_speed))
    # the figure-eight moves the rotors: the agreement is not that of a flight that does nothing
    assert np.ptp(np.asarray(c.rotor_speed)[t > 8.5]) > 10.0


def test_mjx_equals_mujoco_c_with_the_propellers_as_the_motor(flown):
    m, c = flown[("mjx", "low")], flown[("mujoco", "low")]
    assert np.abs(np.asarray(m.p) - np.asarray(c.p)).max() < 1e-9
    assert _attitude_gap(m, c).max() < 1e-9
    assert np.abs(np.asarray(m.rotor_speed) - np.asarray(c.rotor_speed)).max() < 1e-6
    np.testing.assert_allclose(np.asarray(m.u), np.asarray(c.u), rtol=1e-9)


def test_table_iii_gains_grow_in_yaw_alike_on_both_layers(flown):
    (ra, fa), (rc, fc) = _growth(flown[("analytic", "table")]), _growth(flown[("mujoco", "table")])
    print(f"yaw growth: analytic {ra:.2f} /s at {fa:.2f} Hz, MuJoCo C {rc:.2f} /s at {fc:.2f} Hz")
    assert 4.0 < ra < 9.0 and 4.0 < rc < 9.0 and abs(ra - rc) < 0.15 * ra
    assert 3.5 < fa < 5.5 and abs(fa - fc) < 0.3
    for plant in ("analytic", "mujoco"):  # grown from round-off to a tenth of a radian within the flight
        assert np.abs(np.asarray(flown[(plant, "table")].omega)[:, 2]).max() > 0.1


def test_the_engine_spins_the_platform_rotor_inertia(model):
    np.testing.assert_allclose(model.spin_inertia, JR, rtol=1e-12)
    np.testing.assert_allclose(model.relative_difference["spin_inertia"], 0.0, atol=1e-12)
    # the TOML override of a preset sizes the same bodies
    toml = platform_from_table({"preset": "paper_hexarotor_physics", "rotor_inertia": 2e-4}, "test.toml")
    pm = build_model(toml, paper_hexarotor_parts(), SPIN)
    np.testing.assert_allclose(pm.spin_inertia, 2e-4, rtol=1e-12)
    # a platform built from parts, its rotor inertia overridden: the engine has the override, whole-vehicle
    # mass properties still the parts'
    x500 = presets.get("x500")
    big = dataclasses.replace(x500, rotor_inertia=jnp.full(4, 4 * float(x500.J_r[0])))
    pm = build_model(big, default_parts(big), SPIN)
    np.testing.assert_allclose(pm.spin_inertia, 4 * float(x500.J_r[0]), rtol=1e-12)
    np.testing.assert_allclose(pm.inertia, np.asarray(x500.inertia), rtol=1e-9, atol=1e-12)


def test_the_propeller_servo_gain_is_the_flights(model):
    plat = model.physics_platform()
    flight = dataclasses.replace(_flight(), t1=T0 + 0.01, actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.05)))
    ps = MuJoCoPlant().with_model(model).init(plat, flight)
    m = ps.context["model"]
    np.testing.assert_allclose(m.actuator_gainprm[model.ctrl_spin, 0], JR / 0.05, rtol=1e-12)
    np.testing.assert_allclose(m.actuator_biasprm[model.ctrl_spin, 2], -JR / 0.05, rtol=1e-12)
    # the shared model keeps the motor-model servo (2 ms) for the flights that have one
    np.testing.assert_allclose(model.model.actuator_gainprm[model.ctrl_spin, 0], JR / 0.002, rtol=1e-12)


# ----------------------------------------------------------------------------- current limit


def _x500_spin_up(pm, plant):
    """The x500 (engine mass and inertia) spinning up from 60 % of its hover speed under the current limit."""
    x500 = pm.physics_platform()
    hover = jr.reference.Hover((0.0, 0.0, 1.0), 0.1)
    s0 = jr.Flight(reference=hover).initial_state(x500)
    s0 = eqx.tree_at(lambda s: s.rotor_speed, s0, 0.6 * s0.rotor_speed)
    flight = jr.Flight(reference=hover, integrator=jr.Integrator(solver=RK4(), adaptive=False, dt=1e-3),
                       control_rate=500.0, save_dt=0.002, state0=s0,
                       actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03, current_limit=True)))
    return x500, jr.fly(x500, UnderactuatedSE3(), flight, plant)


def test_the_current_limit_bounds_the_spin_up_on_both_layers():
    x500 = presets.get("x500")
    pm = build_model(x500, default_parts(x500), SPIN)
    plat, a = _x500_spin_up(pm, jr.AnalyticPlant())
    _, c = _x500_spin_up(pm, MuJoCoPlant().with_model(pm))
    motor = plat.parts.motor
    tau_max = (float(motor.max_current) - float(motor.no_load_current)) / float(motor.kv_si)
    J_r, c_tau = float(plat.J_r[0]), float(plat.c_tau[0])
    for traj in (a, c):
        w = np.asarray(traj.rotor_speed)[:, 0]
        accel = np.diff(w) / 0.002
        limit = (tau_max - c_tau * w[:-1] ** 2) / J_r  # at the sample's start: the limit falls as the rotor speeds up
        assert np.all(accel <= limit * (1 + 1e-3)), (accel - limit).max()
        assert accel[:20].min() > 0.97 * limit[:20].min()  # it is reached: the 30 ms lag alone asks ~4x more
    assert np.abs(np.asarray(a.rotor_speed) - np.asarray(c.rotor_speed)).max() < 2.0


def test_the_current_limit_is_refused_without_what_it_needs():
    limited = jr.Actuators(motor=jr.FirstOrderMotor(0.03, current_limit=True))
    flight = jr.Flight(reference=jr.reference.Hover((0.0, 0.0, 1.0), 0.01), actuators=limited, save_dt=0.01)
    paper = presets.get("paper_hexarotor_physics")
    for plant in (jr.AnalyticPlant(), MuJoCoPlant(spin_propellers=False, floor=False)):
        with pytest.raises(ValueError, match=r"FirstOrderMotor parameter `current_limit` = True needs the motor's kv "
                                             r"and max_current, but platform `paper_hexarotor_physics` has no parts"):
            jr.fly(paper, FullyActuatedSE3(), dataclasses.replace(flight, control_rate=1000.0, integrator=jr.Integrator(
                solver=RK4(), adaptive=False, dt=1e-3)), plant)
    parts = presets.get("paper_hexarotor_parts")
    with pytest.raises(ValueError, match=r"has parts whose motor has no `kv`.*Fix: build the platform from parts"):
        limited.motor.check_platform(parts)
    x500 = presets.get("x500")
    no_limit = eqx.tree_at(lambda p: p.parts.motor.max_current, x500, jnp.asarray(np.inf))
    with pytest.raises(ValueError, match=r"needs a finite motor max_current"):
        limited.motor.check_platform(no_limit)
    limited.motor.check_platform(x500)  # what it needs: no error
    jr.FirstOrderMotor(0.03).check_platform(paper)  # no current limit: nothing needed
    with pytest.raises(ValueError, match=r"`current_limit` = 'yes' is invalid"):
        jr.FirstOrderMotor(0.03, current_limit="yes")


def test_the_analytic_current_limit_is_the_exact_minimum():
    x500 = presets.get("x500")
    motor = jr.FirstOrderMotor(0.03, current_limit=True)
    w = jnp.array([300.0, 500.0, 800.0, 1100.0])
    u_cmd = jnp.full(4, 1200.0**2)
    _, _, w_dot = motor.applied(x500, w, u_cmd)
    m = x500.parts.motor
    tau_max = (float(m.max_current) - float(m.no_load_current)) / (float(m.kv) * 2 * np.pi / 60)
    w_cmd = np.minimum(1200.0, np.asarray(x500.rotor_speed_max))
    expect = np.minimum((w_cmd - np.asarray(w)) / 0.03,
                        (tau_max - np.asarray(x500.c_tau) * np.asarray(w) ** 2) / np.asarray(x500.J_r))
    np.testing.assert_allclose(np.asarray(w_dot), expect, rtol=1e-12)
    assert np.any(np.asarray(w_dot) < (w_cmd - np.asarray(w)) / 0.03 - 1.0)  # the limit binds here
    _, _, free = jr.FirstOrderMotor(0.03).applied(x500, w, u_cmd)
    np.testing.assert_allclose(np.asarray(free), (w_cmd - np.asarray(w)) / 0.03, rtol=1e-12)
