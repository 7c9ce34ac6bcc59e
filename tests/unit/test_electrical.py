"""The electrical model (jaxrotor.electrical): closed forms, the energy identity, the battery curve,
endurance against scipy's quadrature, gradients against central differences, payload capacity,
the electric motor against the first-order motor, and float32."""

import dataclasses
import math
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate

from jaxrotor import electrical as E
from jaxrotor.allocation import allocation_matrix
from jaxrotor.design.parts import CELL_VOLTAGE
from jaxrotor.design.platform import star_platform
from jaxrotor.dynamics import FirstOrderMotor
from jaxrotor.io.platform_table import load_platform

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "configs" / "vehicles" / "x_quad_parts.toml"
LIPO = np.array(E.LIPO_CELL_VOLTS)
SOC = np.array(E.LIPO_SOC)


@pytest.fixture(scope="module")
def quad():
    return load_platform(CONTRACT)


@pytest.fixture(scope="module")
def centred(quad):
    """The contract vehicle with its centre of mass on the rotors' centre: per-rotor thrust m g / 4."""
    return dataclasses.replace(quad, com_offset=jnp.zeros(3))


def _hand_chain(u, c_f, c_tau, motor, battery, soc, eta=0.95):
    """The steady electrical chain recomputed in NumPy from hover inputs ``u`` (rad^2/s^2)."""
    kv = float(motor.kv) * 2 * math.pi / 60
    R, i0 = float(motor.resistance), float(motor.no_load_current)
    w = np.sqrt(u)
    q = c_tau * w**2
    i = kv * q + i0
    v = R * i + w / kv
    p_m = v * i
    p = np.sum(p_m / eta)
    e = battery.cells * np.interp(soc, SOC, LIPO)
    r = float(battery.internal_resistance)
    i_b = (e - np.sqrt(e**2 - 4 * r * p)) / (2 * r)
    v_t = e - r * i_b
    return dict(omega=w, torque=q, motor_current=i, motor_voltage=v, motor_power=p_m, mechanical_power=q * w,
                throttle=v / v_t, battery_current=i_b, terminal_voltage=v_t, battery_power=v_t * i_b, ocv=e)


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


@pytest.mark.parametrize("soc", [1.0, 0.55, 0.2])
def test_hover_closed_form_per_rotor_thrust_mg_over_4(centred, soc):
    p = centred
    parts = p.parts
    m, g = float(p.mass), float(p.gravity)
    c_f, c_tau = float(p.c_f[0]), float(p.c_tau[0])
    u = np.full(4, m * g / 4 / c_f)  # per-rotor thrust m g / 4
    ref = _hand_chain(u, c_f, c_tau, parts.motor, parts.battery, soc)
    h = E.hover_point(p, soc)
    np.testing.assert_allclose(np.asarray(h.thrust), m * g / 4, rtol=1e-12)
    for key, val in ref.items():
        assert _rel(getattr(h, key), val) < 1e-9, key
    # figure of merit: T^{3/2} / sqrt(2 rho A) over Q omega
    D, rho = float(parts.propeller.diameter), float(parts.air_density)
    fom = (m * g / 4) ** 1.5 / math.sqrt(2 * rho * math.pi * D**2 / 4) / ref["mechanical_power"]
    assert _rel(h.figure_of_merit, fom) < 1e-9
    assert 0.3 < float(h.figure_of_merit[0]) < 0.9
    assert 0.3 < float(h.throttle[0]) < 0.6


def test_hover_closed_form_contract_vehicle_with_its_centre_of_mass(quad):
    """The contract vehicle as loaded (payload and battery offsets move the centre of mass): the
    inputs from NumPy's pseudo-inverse of the allocation matrix, then the same chain."""
    p = quad
    G = np.asarray(allocation_matrix(p))
    w = np.zeros(6)
    w[2] = float(p.mass) * float(p.gravity)
    u = np.linalg.pinv(G) @ w
    assert np.ptp(u) / np.mean(u) > 0.01  # genuinely unequal rotors
    ref = _hand_chain(u, np.asarray(p.c_f), np.asarray(p.c_tau), p.parts.motor, p.parts.battery, 0.8)
    h = E.hover_point(p, 0.8)
    for key, val in ref.items():
        assert _rel(getattr(h, key), val) < 1e-9, key
    assert float(h.battery_power) == pytest.approx(202.35, rel=1e-3)  # 4S 5000 mAh, 1.77 kg at full charge: ~200 W


def test_energy_identity(quad):
    parts = quad.parts
    rng = np.random.default_rng(0)
    for soc in (1.0, 0.63, 0.2):
        omega = jnp.asarray(rng.uniform(300.0, 1000.0, size=4))
        for esc in (E.ESC(0.95), E.ESC(0.8), E.ESC(1.0)):
            st = E.electrical_state(omega, quad.c_tau, parts.motor, parts.battery, soc, esc=esc)
            b = E.power_breakdown(st, parts.motor, parts.battery, esc)
            parts_sum = float(b.shaft + b.copper + b.no_load + b.esc + b.battery)
            assert abs(parts_sum - float(b.total)) / float(b.total) < 1e-12
            assert float(st.battery_power + b.battery) == pytest.approx(float(b.total), rel=1e-12)
            assert min(float(b.copper), float(b.no_load), float(b.battery)) > 0
            assert float(b.esc) == pytest.approx((1 / float(esc.efficiency) - 1) * float(jnp.sum(st.motor_power)),
                                                 rel=1e-12, abs=1e-12)


def test_default_ocv_curve_values():
    c = E.default_ocv_curve()
    assert float(c(0.0)) == pytest.approx(3.27, abs=1e-15)
    assert float(c(1.0)) == pytest.approx(4.20, abs=1e-15)
    assert float(c(0.25)) == pytest.approx((3.73 + 3.77) / 2, rel=1e-14)
    assert float(c(0.93)) == pytest.approx(4.11 + 0.3 * (4.20 - 4.11), rel=1e-14)
    assert float(c(1.2)) == pytest.approx(4.20)  # constant beyond the table
    np.testing.assert_allclose(np.asarray(c(jnp.asarray(SOC))), LIPO, rtol=1e-15)
    assert np.all(np.diff(LIPO) > 0) and len(LIPO) == 11
    from jaxrotor.design.parts import Battery

    b = Battery(cells=6)
    assert float(E.pack_ocv(b, 0.5)) == pytest.approx(6 * 3.84, rel=1e-14)
    user = E.OCVCurve([0.0, 1.0], [3.5, 4.2])
    assert float(E.pack_ocv(b, 0.4, user)) == pytest.approx(6 * (3.5 + 0.4 * 0.7), rel=1e-14)


@pytest.mark.parametrize("soc, volts, param, words", [
    ([0.0, 0.6, 0.5, 1.0], [3.5, 3.8, 3.9, 4.2], "ocv_soc", "strictly increasing"),
    ([0.0, 1.5], [3.5, 4.2], "ocv_soc", "[0, 1]"),
    ([0.0, 0.5, 1.0], [3.5, 4.2], "ocv_volts", "one cell voltage per entry"),
    ([0.5], [3.7], "ocv_soc", "at least 2"),
    ([0.0, 1.0], [-3.5, 4.2], "ocv_volts", "> 0"),
])
def test_ocv_curve_validation(soc, volts, param, words):
    with pytest.raises(ValueError, match=rf"Electrical parameter `{param}` = ") as err:
        E.OCVCurve(soc, volts)
    assert words in str(err.value) and "Fix: " in str(err.value)


@pytest.mark.parametrize("eta", [0.0, 1.2, -0.5])
def test_esc_validation(eta):
    with pytest.raises(ValueError, match=r"`esc.efficiency`.*\(0, 1\].*Fix: give e.g. efficiency = 0.95"):
        E.ESC(eta)
    assert float(E.ESC().efficiency) == 0.95


def test_battery_current_limits_and_gradient_at_zero_resistance():
    P, V = 300.0, 16.0
    assert float(E.battery_current(P, V, 0.0)) == pytest.approx(P / V, rel=1e-15)
    r = 0.03
    i = float(E.battery_current(P, V, r))
    assert (V - r * i) * i == pytest.approx(P, rel=1e-14)
    assert i == pytest.approx((V - math.sqrt(V * V - 4 * r * P)) / (2 * r), rel=1e-12)
    d = float(jax.grad(lambda R: E.battery_current(P, V, R))(0.0))
    assert d == pytest.approx(P**2 / V**3, rel=1e-12)  # I_b = P/V + R P^2/V^3 + O(R^2)


def _scipy_time(power, battery, soc0, floor, soc=SOC, volts=LIPO):
    r, cells = float(battery.internal_resistance), battery.cells

    def inv_current(s):
        e = cells * np.interp(s, soc, volts)
        return (e + math.sqrt(e * e - 4 * r * power)) / (2 * power)

    knots = [s for s in soc if floor < s < soc0]
    val, err = integrate.quad(inv_current, floor, soc0, points=knots or None, epsabs=0.0, epsrel=1e-13, limit=500)
    return float(battery.capacity_mah) * 3.6 * val


@pytest.mark.parametrize("soc0, floor", [(1.0, 0.2), (0.87, 0.33), (0.5, 0.0)])
def test_endurance_quadrature_against_scipy_and_closed_form(quad, soc0, floor):
    b = quad.parts.battery
    h = E.hover_point(quad, soc0)
    t = float(E.endurance_hover(quad, soc0, floor))
    ref = _scipy_time(float(h.battery_power), b, soc0, floor)
    assert abs(t - ref) / ref < 1e-10
    closed = float(E.constant_power_discharge_time(h.battery_power, b, soc0=soc0, soc_floor=floor))
    assert abs(closed - ref) / ref < 1e-10
    assert 0.5 * 60 < t < 40 * 60


def test_endurance_is_the_time_the_state_of_charge_ode_takes_to_reach_the_floor(quad):
    """dSoC/dt = -I_b(P_h, SoC) / Q_cap integrated by scipy's solve_ivp until SoC = 0.2."""
    b = quad.parts.battery
    P = float(E.hover_point(quad).battery_power)
    r, q_cap = float(b.internal_resistance), float(b.capacity_mah) * 3.6

    def rate(t, y):
        e = b.cells * np.interp(y[0], SOC, LIPO)
        return [-2 * P / (e + math.sqrt(e * e - 4 * r * P)) / q_cap]

    floor = lambda t, y: y[0] - 0.2  # noqa: E731
    floor.terminal = True
    sol = integrate.solve_ivp(rate, (0.0, 1e5), [1.0], method="DOP853", events=floor, rtol=1e-12, atol=1e-14,
                              max_step=5.0)
    t_ode = float(sol.t_events[0][0])
    assert float(E.endurance_hover(quad)) == pytest.approx(t_ode, rel=1e-8)


def test_constant_power_discharge_is_the_integral_of_the_ocv_curve(quad):
    """At R_int = 0 and the contract curve (3.5 V to 4.2 V linear): t = Q_cap / P int cells OCV ds."""
    b = eqx.tree_at(lambda x: x.internal_resistance, quad.parts.battery, jnp.asarray(0.0))
    curve = E.OCVCurve([0.0, 1.0], [3.5, 4.2])
    P = 250.0
    energy = 4 * (3.5 * 0.8 + 0.7 * (1.0 - 0.2**2) / 2)  # V * (state of charge) over [0.2, 1]
    exact = 5000 * 3.6 * energy / P
    for f in (E.discharge_time, E.constant_power_discharge_time):
        assert float(f(P, b, ocv=curve)) == pytest.approx(exact, rel=1e-13)
    # and with resistance, the quadrature and closed form against scipy on the user curve
    b2 = quad.parts.battery
    ref = _scipy_time(P, b2, 1.0, 0.2, np.array([0.0, 1.0]), np.array([3.5, 4.2]))
    assert float(E.discharge_time(P, b2, ocv=curve)) == pytest.approx(ref, rel=1e-10)
    assert float(E.constant_power_discharge_time(P, b2, ocv=curve)) == pytest.approx(ref, rel=1e-10)


def test_endurance_profile_mean_power(quad):
    b = quad.parts.battery
    trace = jnp.asarray([150.0, 250.0, 400.0, 200.0])
    assert float(E.endurance_profile(trace, b)) == pytest.approx(float(E.discharge_time(250.0, b)), rel=1e-14)
    w = jnp.asarray([1.0, 1.0, 0.0, 2.0])
    assert float(E.endurance_profile(trace, b, weights=w)) == pytest.approx(float(E.discharge_time(200.0, b)),
                                                                            rel=1e-14)


def _tilted(quad, alpha=0.3):
    return eqx.tree_at(lambda p: p.alpha, quad, jnp.asarray(alpha)).derive()


@pytest.mark.parametrize("which", ["capacity", "diameter", "arm_length", "cant"])
def test_endurance_gradient_against_central_differences(quad, which):
    base = _tilted(quad)
    setters = {
        "capacity": (lambda p: p.parts.battery.capacity_mah, 5000.0),
        "diameter": (lambda p: p.parts.propeller.diameter, 0.254),
        "arm_length": (lambda p: p.arm_length, 0.25),
        "cant": (lambda p: p.alpha, 0.3),
    }
    where, x0 = setters[which]

    @jax.jit
    def f(x):
        return E.endurance_hover(eqx.tree_at(where, base, x).derive(), 1.0, 0.2)

    g = float(jax.grad(f)(jnp.asarray(x0)))
    h = 1e-4 * abs(x0)
    fd = (float(f(jnp.asarray(x0 + h))) - float(f(jnp.asarray(x0 - h)))) / (2 * h)
    assert abs(g) > 0
    assert abs(g - fd) / abs(fd) < 1e-6, (g, fd)


def test_tilted_hover_costs_the_cos_scaling(quad):
    """A symmetric hexarotor with alternating cant: u_h = m g / (6 c_f cos alpha), shaft power x cos^{-3/2}."""
    parts = dataclasses.replace(quad.parts, payload=None)
    P = {}
    for a in (0.0, math.radians(25.0)):
        hexa = star_platform(6, 0.4, alpha=a, parts=parts, name="hexa")
        h = E.hover_point(hexa)
        u = float(hexa.mass * hexa.gravity) / (6 * float(hexa.c_f[0]) * math.cos(a))
        np.testing.assert_allclose(np.asarray(h.omega) ** 2, u, rtol=1e-10)
        P[a] = float(jnp.sum(h.mechanical_power))
    assert P[math.radians(25.0)] / P[0.0] == pytest.approx(math.cos(math.radians(25.0)) ** -1.5, rel=1e-10)


def test_payload_capacity_closed_form_flat_quad(centred):
    p = centred
    parts = p.parts
    mot, b = parts.motor, parts.battery
    kv = float(mot.kv) * 2 * math.pi / 60
    c_f, c_tau = float(p.c_f[0]), float(p.c_tau[0])
    for soc, V in ((None, 4 * CELL_VOLTAGE), (1.0, 4 * 4.2), (0.2, 4 * 3.73)):
        R = float(mot.resistance) + 4 * float(b.internal_resistance) / 0.95  # full throttle: the pack's sag
        i0 = float(mot.no_load_current)
        # R K_v c_tau w^2 + w / K_v - (V - R I_0) = 0, or the current limit
        a_, b_, c_ = R * kv * c_tau, 1 / kv, -(V - R * i0)
        w_v = (-b_ + math.sqrt(b_ * b_ - 4 * a_ * c_)) / (2 * a_)
        w_i = math.sqrt((float(mot.max_current) - i0) / (kv * c_tau))
        w = min(w_v, w_i)
        T = 4 * c_f * w * w
        for twr in (1.0, 2.0):
            m_p = T / (twr * float(p.gravity)) - float(p.mass)
            assert float(E.payload_capacity(p, twr, soc)) == pytest.approx(m_p, rel=1e-10)
        assert float(E.max_vertical_thrust(p, soc)) == pytest.approx(T, rel=1e-10)
        # with that payload at twr = 1 the rotors just reach their top speed
        h = E.hover_point(p, 1.0, payload=T / float(p.gravity) - float(p.mass))
        np.testing.assert_allclose(np.asarray(h.omega), w, rtol=1e-10)
    # differentiable, and a larger battery gives more capacity through the voltage... but weighs more
    g = jax.grad(lambda d: E.payload_capacity(eqx.tree_at(lambda q: q.parts.propeller.diameter, p, d).derive()))(
        jnp.asarray(0.254))
    assert np.isfinite(float(g)) and float(g) != 0.0


def test_large_bandwidth_electric_motor_is_the_first_order_motor(quad):
    p = quad
    motor = p.parts.motor
    omega = jnp.asarray([600.0, 650.0, 700.0, 720.0])
    u_cmd = jnp.asarray([610.0, 640.0, 730.0, 700.0]) ** 2
    unlimited = eqx.tree_at(lambda m: m.max_current, motor, jnp.asarray(jnp.inf))
    for tau in (0.03, 1e-3, 1e-4):
        first = FirstOrderMotor(tau)
        _, _, w_dot = first.applied(p, omega, u_cmd)
        w_cmd = first.commanded_speed(p, u_cmd)
        e_dot, i, v = E.electric_motor_rates(omega, w_cmd, p.c_tau, p.J_r, unlimited, 1 / tau, 1e6)
        np.testing.assert_allclose(np.asarray(e_dot), np.asarray(w_dot), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(e_dot), np.asarray(w_cmd - omega) / tau, rtol=1e-12)
    # with the current limit: FirstOrderMotor(current_limit=True) speeding up (rotors 0 and 2); braking (rotors 1
    # and 3) the electric motor's current is limited too, at -max_current
    first = FirstOrderMotor(1e-3, current_limit=True)
    _, _, w_dot = first.applied(p, omega, u_cmd)
    e_dot, i, _ = E.electric_motor_rates(omega, first.commanded_speed(p, u_cmd), p.c_tau, p.J_r, motor, 1e3, 1e6)
    up = np.array([0, 2])
    np.testing.assert_allclose(np.asarray(e_dot)[up], np.asarray(w_dot)[up], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(i), [25.0, -25.0, 25.0, -25.0], rtol=1e-12)  # every rotor at a limit
    kv, i0 = float(motor.kv_si), float(motor.no_load_current)
    brake = ((-25.0 - i0) / kv - np.asarray(p.c_tau * omega**2)) / np.asarray(p.J_r)
    np.testing.assert_allclose(np.asarray(e_dot)[[1, 3]], brake[[1, 3]], rtol=1e-12)


def test_electric_motor_steady_state_and_voltage_limit(quad):
    p = quad
    motor = p.parts.motor
    omega = jnp.asarray([500.0, 600.0, 700.0, 800.0])
    w_dot, i, v = E.electric_motor_rates(omega, omega, p.c_tau, p.J_r, motor, 200.0, 16.0)
    ss = E.motor_steady_state(omega, p.c_tau, motor)
    np.testing.assert_allclose(np.asarray(w_dot), 0.0, atol=1e-9)
    np.testing.assert_allclose(np.asarray(i), np.asarray(ss.current), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(v), np.asarray(ss.voltage), rtol=1e-14)
    # asking for far more speed: the slow rotors reach the current limit, the fast ones the voltage (9 V)
    w_dot, i, v = E.electric_motor_rates(omega, omega + 300.0, p.c_tau, p.J_r, motor, 200.0, 9.0)
    kv = float(motor.kv_si)
    lim = (9.0 - np.asarray(omega) / kv) / float(motor.resistance)
    expect_i = np.minimum(np.minimum(kv * np.asarray(p.c_tau * omega**2 + p.J_r * 200.0 * 300.0)
                                     + float(motor.no_load_current), float(motor.max_current)), lim)
    np.testing.assert_allclose(np.asarray(i), expect_i, rtol=1e-13)
    assert float(i[0]) == pytest.approx(float(motor.max_current), rel=1e-14)
    assert float(v[3]) == pytest.approx(9.0, rel=1e-13) and float(i[3]) < float(motor.max_current)
    expect_dot = ((expect_i - float(motor.no_load_current)) / kv - np.asarray(p.c_tau * omega**2)) / np.asarray(p.J_r)
    np.testing.assert_allclose(np.asarray(w_dot), expect_dot, rtol=1e-12)


def test_sizing_report(quad):
    r = E.sizing_report(quad)
    assert float(r["endurance_hover_s"]) == pytest.approx(float(E.endurance_hover(quad)), rel=1e-14)
    assert float(r["thrust_to_weight"]) * float(quad.weight) == pytest.approx(float(E.max_vertical_thrust(quad)),
                                                                              rel=1e-14)
    assert float(r["payload_capacity_kg"]) == pytest.approx(float(E.payload_capacity(quad)), rel=1e-12)
    assert 15.0 < float(r["endurance_hover_min"]) < 22.0
    assert float(r["hover_throttle"]) < float(r["hover_throttle_at_floor"]) < 1.0
    assert 0.6 < float(r["efficiency"]) < 0.9
    text = E.format_sizing_report(r)
    assert "hover endurance" in text and f"{float(r['endurance_hover_min']):.2f} min" in text
    assert "payload capacity (T/W 2)" in text


def test_missing_electrical_parts_is_refused_by_name():
    from jaxrotor.design.vehicles import paper_hexarotor_from_parts

    with pytest.raises(ValueError, match=r"paper_hexarotor_parts.*Fix: .*kv"):
        E.hover_point(paper_hexarotor_from_parts())


def test_float32(quad):
    p32 = jax.tree_util.tree_map(lambda x: x.astype(jnp.float32) if eqx.is_inexact_array(x) else x, quad)
    h32, h64 = E.hover_point(p32, 0.7), E.hover_point(quad, 0.7)
    assert h32.battery_power.dtype == jnp.float32 and h32.omega.dtype == jnp.float32
    assert float(h32.battery_power) == pytest.approx(float(h64.battery_power), rel=1e-5)
    t32 = E.endurance_hover(p32, 1.0, 0.2)
    assert t32.dtype == jnp.float32
    assert float(t32) == pytest.approx(float(E.endurance_hover(quad)), rel=1e-5)
    g32 = jax.grad(lambda c: E.endurance_hover(eqx.tree_at(lambda q: q.parts.battery.capacity_mah, p32, c)))(
        jnp.float32(5000.0))
    assert float(g32) == pytest.approx(float(E.endurance_hover(quad)) / 5000.0, rel=1e-4)
    m32 = E.payload_capacity(p32)
    assert m32.dtype == jnp.float32
    assert float(m32) == pytest.approx(float(E.payload_capacity(quad)), rel=1e-4)
    w_dot, _, _ = E.electric_motor_rates(h32.omega, h32.omega + 10, p32.c_tau, p32.J_r, p32.parts.motor, 50.0,
                                         jnp.float32(16.0))
    assert w_dot.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(w_dot), 500.0, rtol=1e-4)


def test_has_electrical_parts_needs_parts_a_motor_kv_and_a_battery(quad):
    from jaxrotor import presets

    assert E.has_electrical_parts(quad)  # [parts.motor] kv and a [parts.battery]
    assert not E.has_electrical_parts(presets.get("paper_hexarotor"))  # numbers, no parts
    no_battery = eqx.tree_at(lambda p: p.parts.battery, quad, None, is_leaf=lambda x: x is None)
    no_kv = eqx.tree_at(lambda p: p.parts.motor.kv, quad, None, is_leaf=lambda x: x is None)
    for platform, words in ((no_battery, "has no [parts.battery]"), (no_kv, "has a motor without `kv`")):
        assert not E.has_electrical_parts(platform)
        with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
            E.hover_point(platform)
