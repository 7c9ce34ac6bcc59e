"""The electric motor and the battery on the physics layer (MuJoCo C and MJX).

With spinning propellers and a motor that draws current (``configs/electric_hover.toml``: 920 KV motors
behind 95 % ESCs on a 4S 5000 mAh pack, a 200 rad/s speed controller) each propeller hinge is a torque
motor driven per engine step by the motor's electrical chain (``jaxrotor.electrical.electric_drive``) at
the propeller's speed, and the battery's state of charge and energy account are integrated at the
engine step. Measured (float64, 1 ms engine steps):

* MuJoCo C against MJX on 50 ms from 0.1 m below the hover point (the climb starts at the 25 A
  current limit): the same flight to round-off (state of charge 0, work 2e-14 J, currents 2e-12 A);
* the physics layer against the analytic layer (the config's continuous-time loop) on a 1 s hover:
  energy and endurance of the flown profile within 2e-10 (relative), each motor's hover current
  within 3e-8, state of charge within 4e-11 (the issue asks 0.5 %);
* a model written with torque motors on the hinges (``ModelOptions(spin_actuator="motor")``) gets the
  same hinge actuators for each flight as the default model (velocity servos for a speed motor, torque
  motors for the electric one) and flies the electric climb bit for bit alike;
* welded propellers with an electric motor are refused by name.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.dynamics import ElectricMotor
from jaxrotor.electrical import WORK_TERMS
from jaxrotor.io.config import load
from jaxrotor.metrics import electrical_metrics
from jaxrotor.physics import MJXPlant, MuJoCoPlant, ModelOptions, build_model
from jaxrotor.workflows.compare import physics_settings

CONFIG = "configs/electric_hover.toml"


@pytest.fixture(scope="module")
def config():
    return load(CONFIG)


@pytest.fixture(scope="module")
def settings(config):
    return physics_settings(config.platform)


@pytest.fixture(scope="module")
def model(config, settings):
    return build_model(config.platform, settings.parts, settings.options)


def _climb(config, t1):
    """The electric hover flight starting 0.1 m below its hover point (a climb: the currents move)."""
    p = config.platform
    state0 = jr.dynamics.initial_state(p, p=[0.0, 0.0, 0.9], rotor_speed="hover")
    return dataclasses.replace(config.flight, t1=t1, save_dt=0.01, state0=state0)


@pytest.fixture(scope="module")
def climb_c(config, settings, model):
    """The climb on the MuJoCo C engine (50 ms; the tick compiled once for this and the torque-motor model's)."""
    return jr.fly(config.platform, config.controller, _climb(config, 0.05),
                  plant=settings.plant(model, share_compilation=True))


def test_mujoco_c_and_mjx_agree_on_an_electric_climb(config, model, climb_c):
    c = climb_c
    x = jr.fly(config.platform, config.controller, _climb(config, 0.05), plant=MJXPlant().with_model(model))
    assert not bool(c.diverged) and not bool(x.diverged)
    assert c.energy is not None and x.energy is not None and c.electrical is not None
    np.testing.assert_allclose(np.asarray(x.energy.soc), np.asarray(c.energy.soc), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(x.energy.work), np.asarray(c.energy.work), rtol=1e-10, atol=1e-10)
    for name in ("motor_current", "motor_voltage", "battery_current", "terminal_voltage", "ocv"):
        np.testing.assert_allclose(np.asarray(getattr(x.electrical, name)), np.asarray(getattr(c.electrical, name)),
                                   rtol=1e-9, atol=1e-9, err_msg=name)
    np.testing.assert_array_equal(np.asarray(x.electrical.limited), np.asarray(c.electrical.limited))
    assert bool(np.any(np.asarray(c.electrical.limited)))  # the climb starts at the current limit
    np.testing.assert_allclose(np.asarray(x.p), np.asarray(c.p), rtol=0, atol=1e-10)
    assert float(c.energy.soc[-1]) < float(c.energy.soc[0]) == pytest.approx(1.0)  # the battery is drawn
    assert float(c.energy.work[-1, 0]) > 0


def test_physics_and_analytic_layers_agree_on_the_electric_hover(config, settings, model):
    cfg = config.with_t1(1.0)
    platform, flight = cfg.platform, cfg.flight
    a = jr.fly(platform, cfg.controller, flight)
    p = jr.fly(platform, cfg.controller, flight, plant=settings.plant(model))
    assert not bool(a.diverged) and not bool(p.diverged)
    ma, mp = electrical_metrics(a, platform), electrical_metrics(p, platform)
    for key in ("energy_wh", "endurance_profile_s", "electrical_power_mean", "motor_current_mean"):
        ref = float(getattr(ma, key))
        assert float(getattr(mp, key)) == pytest.approx(ref, rel=5e-3), key  # the 0.5 %
        assert float(getattr(mp, key)) == pytest.approx(ref, rel=1e-6), key  # what the layers reach
    # the hover current of each motor at the end (the payload's offset makes them differ pairwise)
    i_a, i_p = np.asarray(a.electrical.motor_current[-1]), np.asarray(p.electrical.motor_current[-1])
    np.testing.assert_allclose(i_p, i_a, rtol=5e-3)
    np.testing.assert_allclose(i_p, i_a, rtol=1e-6)
    assert float(np.ptp(i_a)) > 0.1
    assert float(p.energy.soc[-1]) == pytest.approx(float(a.energy.soc[-1]), abs=1e-9)
    # the energy account closes on the physics layer: terminal = shaft + copper + no-load + ESC at every sample
    w = np.asarray(p.energy.work)
    terms = dict(zip(WORK_TERMS, w.T))
    np.testing.assert_allclose(terms["terminal"], terms["shaft"] + terms["copper"] + terms["no_load"] + terms["esc"],
                               rtol=1e-12, atol=1e-9)


@pytest.fixture(scope="module")
def motor_model(config, settings):
    """The vehicle's model written with torque motors on the propeller hinges."""
    return build_model(config.platform, settings.parts, dataclasses.replace(settings.options, spin_actuator="motor"))


@pytest.mark.parametrize("motor", [jr.FirstOrderMotor(0.03), jr.IdealMotor(), ElectricMotor(200.0)],
                         ids=lambda m: type(m).__name__)
def test_each_flight_gets_the_hinge_actuators_of_its_motor_whatever_the_model_says(config, model, motor_model, motor):
    assert '<motor name="spin0" joint="spin0"' in motor_model.xml and '<velocity name="spin0"' in model.xml
    flight = dataclasses.replace(_climb(config, 0.01), actuators=jr.Actuators(motor=motor))
    spin = model.ctrl_spin
    fields = ("actuator_gaintype", "actuator_gainprm", "actuator_biastype", "actuator_biasprm")
    built = [MuJoCoPlant().with_model(pm).init(config.platform, flight).context["model"] for pm in (model, motor_model)]
    for name in fields:
        np.testing.assert_array_equal(getattr(built[1], name)[spin], getattr(built[0], name)[spin], err_msg=name)
    gain, bias = built[0].actuator_gainprm[spin, 0], built[0].actuator_biasprm[spin, 2]
    if motor.draws_current():  # torque motors: the control is the hinge torque
        np.testing.assert_array_equal(gain, 1.0)
        np.testing.assert_array_equal(bias, 0.0)
    else:  # velocity servos
        assert np.all(gain > 0) and np.array_equal(bias, -gain)


def test_an_electric_flight_on_a_model_written_with_torque_motors_is_the_same_flight(config, motor_model, climb_c):
    plant = MuJoCoPlant(share_compilation=True).with_model(motor_model)
    assert plant.options.spin_actuator == "motor"
    b = jr.fly(config.platform, config.controller, _climb(config, 0.05), plant=plant)
    for name in ("p", "R", "rotor_speed"):
        np.testing.assert_array_equal(np.asarray(getattr(b, name)), np.asarray(getattr(climb_c, name)), err_msg=name)
    np.testing.assert_array_equal(np.asarray(b.energy.work), np.asarray(climb_c.energy.work))


def test_spin_actuator_option_is_checked():
    with pytest.raises(ValueError, match="`spin_actuator` = 'torque'"):
        ModelOptions(spin_actuator="torque")


@pytest.mark.parametrize("cls", [MuJoCoPlant, MJXPlant])
def test_welded_propellers_with_an_electric_motor_are_refused_by_name(config, cls):
    flight = config.with_t1(0.01).flight
    with pytest.raises(ValueError, match=r"`spin_propellers` = False .*draws current.*Fix: spin_propellers=True"):
        jr.fly(config.platform, config.controller, flight, plant=cls(spin_propellers=False))
