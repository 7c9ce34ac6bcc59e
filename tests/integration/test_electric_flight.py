"""The electrical chain in the flight loop (jaxrotor.dynamics.ElectricMotor, VehicleState.energy):
the steady hover against the closed forms, the state of charge against the OCV integral, the energy
account over a manoeuvre, the first-order motor as the electric motor's limit, the battery's top
speed as the allocator's bound, the metrics, the config keys and their errors (float32: tests/integration/test_float32.py flies the config)."""

import dataclasses
import math
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import electrical as E
from jaxrotor.dynamics import ElectricMotor, FirstOrderMotor
from jaxrotor.io.config import ConfigError, load, loads
from jaxrotor.metrics import ELECTRICAL_KEYS, flight_metrics

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "configs" / "electric_hover.toml"
TEXT = CONTRACT.read_text()


def _without_payload(text: str) -> str:
    """The contract config without its payload: the centre of mass on the rotors' axis, thrust m g / 4 each."""
    head, tail = text.split("[parts.payload]")
    return head + tail[tail.index("\n[actuators.motor]"):]


@pytest.fixture(scope="module")
def hover():
    """2 s of the contract hover (continuous-time loop), centred vehicle."""
    cfg = loads(_without_payload(TEXT), str(CONTRACT)).with_t1(2.0)
    return cfg, jr.fly(cfg.platform, cfg.controller, cfg.flight)


def _closed_form(platform, soc):
    """Hover by hand: thrust m g / 4 per rotor -> omega, torque, current, voltage, power, battery (NumPy)."""
    parts = platform.parts
    m, g = float(platform.mass), float(platform.gravity)
    c_f, c_tau = float(platform.c_f[0]), float(platform.c_tau[0])
    kv = float(parts.motor.kv) * 2 * math.pi / 60
    R, i0 = float(parts.motor.resistance), float(parts.motor.no_load_current)
    w = math.sqrt(m * g / 4 / c_f)
    q = c_tau * w**2
    i = kv * q + i0
    v_m = R * i + w / kv
    p = 4 * v_m * i / 0.95
    ocv = 4 * (3.5 + 0.7 * soc)
    r = float(parts.battery.internal_resistance)
    i_b = (ocv - math.sqrt(ocv**2 - 4 * r * p)) / (2 * r)
    return dict(omega=w, torque=q, current=i, voltage=v_m, power=p, battery_current=i_b, terminal=ocv - r * i_b)


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a, float) - b) / abs(b)))


def test_steady_hover_agrees_with_the_closed_forms(hover):
    cfg, traj = hover
    assert not bool(traj.diverged)
    for k in (0, len(traj.t) // 2, len(traj.t) - 1):
        soc = float(traj.energy.soc[k])
        cf = _closed_form(cfg.platform, soc)
        el = traj.electrical
        assert _rel(traj.rotor_speed[k], cf["omega"]) < 1e-6
        assert _rel(cfg.platform.c_tau * traj.rotor_speed[k] ** 2, cf["torque"]) < 1e-6
        assert _rel(el.motor_current[k], cf["current"]) < 1e-6
        assert _rel(el.motor_voltage[k], cf["voltage"]) < 1e-6
        assert _rel(el.terminal_voltage[k] * el.battery_current[k], cf["power"]) < 1e-6
        assert _rel(el.battery_current[k], cf["battery_current"]) < 1e-6
        assert _rel(el.terminal_voltage[k], cf["terminal"]) < 1e-6
    # the battery power of the flight is the rate of its terminal-energy integral
    m = flight_metrics(traj, cfg.platform, cfg.flight).electrical
    assert _rel(m.electrical_power_mean, _closed_form(cfg.platform, 0.999)["power"]) < 1e-6
    assert float(m.time_at_limit) == 0.0


def test_state_of_charge_follows_the_ocv_integral(hover):
    """At constant terminal power, the time the flight takes from soc0 to its final charge is
    Q/(2P) int (OCV + sqrt(OCV^2 - 4 R P)) ds (jaxrotor.electrical.constant_power_discharge_time)."""
    cfg, traj = hover
    b = cfg.platform.parts.battery
    p = float(traj.electrical.terminal_voltage[0] * traj.electrical.battery_current[0])
    t = float(E.constant_power_discharge_time(p, b, soc0=1.0, soc_floor=float(traj.energy.soc[-1])))
    assert t == pytest.approx(float(traj.t[-1] - traj.t[0]), rel=1e-6)


def _ticked(cfg, rate=200.0):
    """``cfg`` flown by the discrete-rate loop at ``rate`` [Hz] (fixed 1 ms Tsit5 steps)."""
    integ = jr.Integrator(solver=cfg.flight.integrator.solver, adaptive=False, dt=1e-3)
    return dataclasses.replace(cfg, flight=dataclasses.replace(cfg.flight, control_rate=rate, integrator=integ))


@pytest.fixture(scope="module")
def manoeuvre():
    """2 s of a 0.3 m circle (5 s period) with the payload (an off-centre centre of mass), discrete-rate control
    at 200 Hz; motors allowed 100 A, so neither the current nor the voltage limit is reached."""
    text = TEXT.replace('kind = "hover"\nposition = [0.0, 0.0, 1.0]\nduration = 60.0',
                        'kind = "circle"\nstart = [0.0, 0.0, 1.0]\nradius = 0.3\nperiod = 5.0\nduration = 2.0')
    text = text.replace("max_current = 25", "max_current = 100")
    cfg = _ticked(loads(text, str(CONTRACT)))
    return cfg, jr.fly(cfg.platform, cfg.controller, cfg.flight)


def test_energy_account_over_a_manoeuvre(manoeuvre):
    """battery energy out = shaft work + copper + no-load + ESC losses (1e-9), and OCV I_b = V_t I_b + R_int I_b^2;
    the shaft work is the propellers' drag work plus the rotors' kinetic energy."""
    cfg, traj = manoeuvre
    assert not bool(traj.diverged)
    w = np.asarray(traj.energy.work[-1] - traj.energy.work[0])
    terminal, shaft, copper, no_load, esc, internal = w
    assert abs(terminal - (shaft + copper + no_load + esc)) / terminal < 1e-9
    assert shaft > 0 and copper > 0 and no_load > 0 and esc > 0 and internal > 0
    # the charge drawn is the integral of I_b: (soc0 - soc) Q = int I_b dt, and int OCV I_b = terminal + internal;
    # shaft work = int sum c_tau omega^3 dt + the rotors' kinetic energy gained. These integrals of the 10 ms
    # samples miss the current's steps at the 5 ms ticks: 2 % (the account itself is exact, above)
    el = traj.electrical
    t = np.asarray(traj.t)
    q = float(E.capacity_as(cfg.platform.parts.battery))
    charge = np.trapezoid(np.asarray(el.battery_current), t)
    assert (1.0 - float(traj.energy.soc[-1])) * q == pytest.approx(charge, rel=2e-2)
    ocv_energy = np.trapezoid(np.asarray(el.ocv * el.battery_current), t)
    assert terminal + internal == pytest.approx(ocv_energy, rel=2e-2)
    p = cfg.platform
    drag = np.trapezoid(np.sum(np.asarray(p.c_tau * traj.rotor_speed**3), axis=-1), t)
    ke = 0.5 * np.sum(np.asarray(p.J_r) * (np.asarray(traj.rotor_speed[-1]) ** 2 - np.asarray(traj.rotor_speed[0]) ** 2))
    assert shaft == pytest.approx(drag + ke, rel=2e-2)
    # the step asks for more than hover: peak current above the hover current, peaks reported
    m = flight_metrics(traj, cfg.platform, cfg.flight).to_dict()
    assert set(ELECTRICAL_KEYS) <= set(m)
    assert m["motor_current_peak"] > m["motor_current_mean"] > 0
    assert m["electrical_power_peak"] > m["electrical_power_mean"]
    assert m["energy_wh"] == pytest.approx(terminal / 3600, rel=1e-12)
    assert m["endurance_profile_s"] == pytest.approx(
        float(E.discharge_time(terminal / float(t[-1] - t[0]), cfg.platform.parts.battery)), rel=1e-12)


def test_large_bandwidth_electric_motor_flies_as_the_first_order_motor(manoeuvre):
    """With no limit reached, ElectricMotor(lambda) is FirstOrderMotor(1/lambda): the same flight to 1e-6."""
    cfg, traj = manoeuvre
    first = eqx.tree_at(lambda f: f.actuators, cfg.flight, jr.Actuators(motor=FirstOrderMotor(1 / 200.0)))
    ref = jr.fly(cfg.platform, cfg.controller, first)
    assert float(jnp.sum(traj.electrical.limited)) == 0
    np.testing.assert_allclose(np.asarray(traj.rotor_speed), np.asarray(ref.rotor_speed), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(traj.p), np.asarray(ref.p), rtol=0, atol=1e-6)


def test_top_speed_follows_the_battery():
    """At full throttle on every rotor the top speed is a steady state of the electric motor, and it falls with
    the state of charge; the allocator's bound is that speed."""
    cfg = loads(TEXT.replace("max_current = 25", "max_current = 60"), str(CONTRACT))  # the voltage limits first
    p = cfg.platform
    motor = cfg.flight.actuators.motor
    tops = [float(E.top_speed(p, s)[0]) for s in (1.0, 0.6, 0.2)]
    assert tops[0] > tops[1] > tops[2]
    for soc, w_top in zip((1.0, 0.6, 0.2), tops):
        omega = jnp.full(4, w_top)
        w_dot, rates, out = E.electric_drive(p, omega, omega + 500.0, soc, 200.0)
        # the voltage limit holds the rotor at its top speed: no acceleration, motor voltage = terminal voltage
        np.testing.assert_allclose(np.asarray(w_dot), 0.0, atol=1e-6 * w_top)
        np.testing.assert_allclose(np.asarray(out.motor_voltage), float(out.terminal_voltage), rtol=1e-9)
        state = eqx.tree_at(lambda s: s.energy, cfg.flight.initial_state(p), E.EnergyState(
            soc=jnp.asarray(soc), work=jnp.zeros(6)))
        limited = motor.supply_limited(p, state)
        np.testing.assert_allclose(np.asarray(limited.u_max), w_top**2, rtol=1e-12)


def test_a_sagging_battery_limits_the_climb():
    """A nearly empty pack cannot give a 3 m/s^2 climb: the motors run at their voltage limit (time at limit > 0)
    and the achieved thrust stays below the full pack's."""
    text = _without_payload(TEXT).replace("soc0 = 1.0", "soc0 = 0.05\nsoc_floor = 0.0").replace(
        "max_current = 25", "max_current = 60").replace(
        'kind = "hover"\nposition = [0.0, 0.0, 1.0]\nduration = 60.0',
        'kind = "step"\nstart = [0.0, 0.0, 1.0]\ntarget = [0.0, 0.0, 4.0]\ntime = 0.1\nduration = 1.0')
    cfg = _ticked(loads(text, str(CONTRACT)))
    traj = jr.fly(cfg.platform, cfg.controller, cfg.flight)
    m = flight_metrics(traj, cfg.platform, cfg.flight).electrical
    assert float(m.time_at_limit) > 0.05
    v = np.asarray(traj.electrical.motor_voltage)
    vt = np.asarray(traj.electrical.terminal_voltage)
    assert np.all(v <= vt[:, None] * (1 + 1e-9))  # the motor never gets more than the battery gives
    lim = np.asarray(traj.electrical.limited).any(axis=-1)
    assert np.max(np.abs(v[lim].max(axis=-1) - vt[lim]) / vt[lim]) < 0.01  # limited: at the terminal voltage


def test_config_keys_build_the_parts():
    cfg = load(CONTRACT)
    b = cfg.platform.parts.battery
    np.testing.assert_allclose(np.asarray(b.ocv.soc), [0.0, 1.0])
    np.testing.assert_allclose(np.asarray(b.ocv.volts), [3.5, 4.2])
    assert float(b.soc0) == 1.0 and float(b.soc_floor) == 0.2
    assert float(cfg.platform.parts.esc.efficiency) == 0.95
    assert isinstance(cfg.flight.actuators.motor, ElectricMotor)
    assert float(cfg.flight.actuators.motor.speed_bandwidth) == 200.0
    assert float(E.pack_ocv(b, 0.5)) == pytest.approx(4 * 3.85, rel=1e-14)


@pytest.mark.parametrize("old, new, words", [
    ("ocv_volts = [3.5, 4.2]\n", "", "`battery.ocv_volts`"),
    ("soc0 = 1.0", "soc0 = 1.5", "`battery.soc0` = 1.5"),
    ("soc0 = 1.0", "soc0 = 1.0\nsoc_floor = 1.0", "`battery.soc_floor` = 1.0"),
    ("ocv_volts = [3.5, 4.2]", "ocv_volts = [3.5, 4.2, 4.3]", "`ocv_volts`"),
    ("ocv_soc = [0.0, 1.0]", "ocv_soc = [1.0, 0.0]", "strictly increasing"),
    ("efficiency = 0.95", "efficiency = 1.5", "`esc.efficiency` = 1.5"),
    ("speed_bandwidth = 200.0", "speed_bandwidth = -1.0", "speed_bandwidth"),
    ("efficiency = 0.95", "efficiency = 0.95\nwatts = 3", "watts"),
])
def test_config_errors_name_the_key_and_the_fix(old, new, words):
    assert old in TEXT
    with pytest.raises((ConfigError, ValueError)) as err:
        loads(TEXT.replace(old, new), str(CONTRACT))
    assert words in str(err.value) and "Fix" in str(err.value)


def test_electric_motor_refuses_a_vehicle_without_a_battery():
    cfg = load(ROOT / "configs" / "paper_realistic.toml").with_t1(0.1)
    flight = eqx.tree_at(lambda f: f.actuators, cfg.flight, jr.Actuators(motor=ElectricMotor(200.0)))
    with pytest.raises(ValueError, match=r"ElectricMotor .*draws current.*Fix"):
        jr.fly(cfg.platform, cfg.controller, flight)
