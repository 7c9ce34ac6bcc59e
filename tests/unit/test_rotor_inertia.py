"""Rotor inertia in the analytic model: the gyroscopic and spin-up reaction torques against hand-written NumPy,
``J_r = 0`` identical to no rotor inertia, the tilting axis rate, and the refusal of an ideal motor."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.design.platform import rotor_axes, rotor_positions
from jaxrotor.dynamics import (Actuators, FirstOrderMotor, RotorCommand, VehicleState, rotor_inertia_torque,
                               vehicle_derivative)

JR = 1.095e-4  # kg m^2, the paper hexarotor's propeller


def _state(p, speed, omega=(0.3, -0.2, 0.5)):
    return VehicleState(p=jnp.zeros(3), v=jnp.zeros(3), R=jnp.eye(3), omega=jnp.asarray(omega), rotor_speed=speed,
                        alpha=p.alpha, beta=p.beta)


def test_torque_against_numpy():
    """J omega_dot = M u - omega x (J omega + h) - sum J_r s_i omega_dot_i z_i, s_i = -kappa_i (first-order motor)."""
    p = dataclasses.replace(jr.presets.paper_hexarotor(), rotor_inertia=jnp.full(6, JR))
    speed = jnp.linspace(380.0, 430.0, 6)
    u_cmd = jnp.full(6, 420.0**2)
    tau_m = 0.03
    act = Actuators(motor=FirstOrderMotor(tau_m))
    st = _state(p, speed)
    d, out = jax.jit(vehicle_derivative)(p, act, st, RotorCommand(u=u_cmd))
    # hand-written NumPy
    z = np.asarray(rotor_axes(p))
    pos = np.asarray(rotor_positions(p))
    w = np.asarray(speed)
    kappa, c_f, c_tau = (np.asarray(x) for x in (p.kappa, p.c_f, p.c_tau))
    u = w**2
    M = np.cross(pos, c_f[:, None] * z) + (kappa * c_tau)[:, None] * z
    tau_u = (u[:, None] * M).sum(0)
    s = -kappa
    w_dot = (420.0 - w) / tau_m
    h = (JR * s * w)[:, None] * z
    J = np.asarray(p.inertia)
    om = np.asarray(st.omega)
    rhs = tau_u - np.cross(om, J @ om + h.sum(0)) - ((JR * s * w_dot)[:, None] * z).sum(0)
    np.testing.assert_allclose(np.asarray(d.omega), np.linalg.solve(J, rhs), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(d.rotor_speed), w_dot, rtol=1e-14)
    # the rotor terms are of the size of the yaw control torque: spin-up reaction J_r omega_dot ~ 1e-4 * 700
    np.testing.assert_allclose(np.asarray(rotor_inertia_torque(p, st.omega, speed, d.rotor_speed, p.alpha, p.beta,
                                                               jnp.zeros(()), jnp.zeros(()))),
                               -np.cross(om, h.sum(0)) - ((JR * s * w_dot)[:, None] * z).sum(0), rtol=1e-12)


def test_zero_rotor_inertia_is_todays_model():
    p = jr.presets.paper_hexarotor()
    p0 = dataclasses.replace(p, rotor_inertia=jnp.zeros(6))
    act = Actuators(motor=FirstOrderMotor(0.03))
    st = _state(p, jnp.linspace(380.0, 430.0, 6))
    cmd = RotorCommand(u=jnp.full(6, 420.0**2))
    f = jax.jit(vehicle_derivative)
    a, b = f(p, act, st, cmd)[0], f(p0, act, st, cmd)[0]
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_tilting_axis_rate():
    """z_dot of a tilting rotor: the jvp of eq. (4) equals central differences of z along the servo rates."""
    p = dataclasses.replace(jr.presets.cs_ai_ting_4r(), rotor_inertia=jnp.full(4, JR))
    a = jnp.array([0.1, -0.2, 0.3, 0.05])
    a_dot = jnp.array([1.0, -0.5, 0.2, 2.0])
    speed = jnp.full(4, 400.0)
    zero = jnp.zeros(4)
    tau = rotor_inertia_torque(p, jnp.zeros(3), speed, zero, a, p.beta, a_dot, jnp.zeros_like(p.beta))
    h = 1e-6
    z_dot = (np.asarray(rotor_axes(p, a + h * a_dot)) - np.asarray(rotor_axes(p, a - h * a_dot))) / (2 * h)
    s = -np.asarray(p.kappa)
    np.testing.assert_allclose(np.asarray(tau), -((JR * s * 400.0)[:, None] * z_dot).sum(0), rtol=1e-8)


def test_ideal_motor_with_rotor_inertia_is_refused():
    p = dataclasses.replace(jr.presets.paper_hexarotor(), rotor_inertia=jnp.full(6, JR))
    flight = jr.Flight(reference=jr.reference.Hover(position=(0.0, 0.0, 1.0), duration=0.1))
    with pytest.raises(ValueError, match=r"`rotor_inertia` = 0.0001095 kg m\^2 .* needs a motor with a speed state, "
                                         r"but the motor is IdealMotor.*Fix: fly a first-order motor"):
        jr.fly(p, jr.FullyActuatedSE3(), flight)


def test_randomized_rotor_inertia():
    """The robust batch draws J_r (one factor for every rotor, in [1 - r, 1 + r]) without changing the other draws."""
    from jaxrotor.randomize import Randomization, member_keys

    p = dataclasses.replace(jr.presets.paper_hexarotor(), rotor_inertia=jnp.full(6, JR))
    flight = jr.Flight(reference=jr.reference.Hover(position=(0.0, 0.0, 1.0), duration=0.1),
                       actuators=Actuators(motor=FirstOrderMotor(0.03)))
    keys = member_keys(0, 64)
    with_jr, f1 = Randomization(mass=0.1, motor_time_constant=0.2, rotor_inertia=0.5).batch(keys, p, flight)
    without, f0 = Randomization(mass=0.1, motor_time_constant=0.2).batch(keys, p, flight)
    ratio = np.asarray(with_jr.rotor_inertia) / JR
    assert np.all(np.abs(ratio - 1) <= 0.5) and ratio.std() > 0.1
    np.testing.assert_allclose(ratio, ratio[:, :1] * np.ones((1, 6)))  # one factor per member
    np.testing.assert_array_equal(np.asarray(with_jr.mass), np.asarray(without.mass))
    np.testing.assert_array_equal(np.asarray(f1.actuators.motor.time_constant), np.asarray(f0.actuators.motor.time_constant))
    assert float(np.std(np.asarray(f1.actuators.motor.time_constant))) > 0
