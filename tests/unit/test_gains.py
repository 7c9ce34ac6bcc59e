"""Controller gains from the vehicle (jaxrotor.gains): pole placement against numpy.roots, the full closed loop's
eigenvalues, stability of every preset, gradients against central differences."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor import presets
from jaxrotor.allocators import PseudoInverse
from jaxrotor.analysis import linearize
from jaxrotor.control import FullyActuatedSE3
from jaxrotor.dynamics import Actuators, FirstOrderMotor
from jaxrotor.flight import Flight
from jaxrotor.gains import GainSpec, auto_gains, place_axis, reaction_coefficients, with_auto_gains
from jaxrotor.reference import Hover


def _sorted(z):
    """Complex values in a tie-proof order (real part, then imaginary part, both rounded)."""
    z = np.asarray(z, dtype=complex)
    return z[np.lexsort((np.round(z.imag, 6), np.round(z.real, 6)))]


def _designed(omega, zeta, a, p4=None):
    pair = np.roots([1.0, 2 * zeta * omega, omega**2])
    poles = list(pair) + [-a * omega] + ([] if p4 is None else [-p4])
    return _sorted(poles)


@pytest.mark.parametrize("tau,b", [(0.0, 0.0), (0.0, -0.05), (0.03, 0.0), (0.03, 0.023), (0.02, -0.4)])
def test_place_axis_puts_the_roots_of_the_characteristic_polynomial_where_designed(tau, b):
    """tau I s^4 + (I - b K_d) s^3 + (K_d - b K_p) s^2 + (K_p - b K_i) s + K_i has the pair, the integral pole and p_4."""
    I, omega, zeta, a = 0.16, 3.0, 0.8, 0.2
    d = place_axis(I, tau, b, omega, zeta, a)
    Kp, Kd, Ki = float(d.K_p), float(d.K_d), float(d.K_i)
    coeffs = [tau * I, I - b * Kd, Kd - b * Kp, Kp - b * Ki, Ki]
    roots = _sorted(np.roots(coeffs[1:] if tau == 0 else coeffs))
    want = _designed(omega, zeta, a, None if tau == 0 else float(d.lag_pole))
    np.testing.assert_allclose(roots, want, rtol=1e-9, atol=1e-9)
    if tau == 0 and b == 0:  # the textbook third-order placement
        assert Kd == pytest.approx(I * (2 * zeta + a) * omega) and Ki == pytest.approx(I * a * omega**3)
    if tau > 0 and b == 0:  # the lag fixes the sum of the poles: p_4 = 1/tau - (2 zeta + a) omega
        assert float(d.lag_pole) == pytest.approx(1 / tau - (2 * zeta + a) * omega, rel=1e-12)


@pytest.mark.parametrize("motor", [None, 0.03])
def test_the_full_closed_loop_has_the_placed_poles(motor):
    """Fully actuated paper hexarotor, continuous loop: the eigenvalues of the linearised closed loop
    (jacfwd of the loop itself) are exactly the placed poles of the three position and three attitude loops."""
    hexa = presets.paper_hexarotor()
    act = Actuators() if motor is None else Actuators(motor=FirstOrderMotor(motor))
    flight = Flight(reference=Hover([0.0, 0.0, 1.0], 5.0), allocator=PseudoInverse(), actuators=act)
    spec = GainSpec()
    ctrl = with_auto_gains(FullyActuatedSE3(), hexa, flight, spec)
    lin = linearize(hexa, ctrl, flight)
    ev = _sorted(np.linalg.eigvals(np.asarray(lin.physical_matrix)))
    tau = 0.0 if motor is None else motor
    J = np.diag(np.asarray(hexa.inertia))
    want = []
    g = auto_gains(hexa, flight)
    for k in range(6):  # recover each loop's bandwidth from its integral gain: K_i = I a omega^3 (tau = 0) ...
        I = 1.0 if k < 3 else J[k - 3]
        Kd, Kp, Ki = (float(g["K_v"][k]), float(g["K_p"][k]), float(g["K_pi"][k])) if k < 3 else (
            float(g["K_w"][k - 3]), float(g["K_R"][k - 3]), float(g["K_Ri"][k - 3]))
        coeffs = [tau * I, I, Kd, Kp, Ki] if tau else [I, Kd, Kp, Ki]
        want += list(np.roots(coeffs))
    want = _sorted(want)
    np.testing.assert_allclose(ev, want, rtol=1e-7, atol=1e-7)
    # and those roots are the specification: damping 0.8 on each loop's pair, the integral pole at 0.2 omega
    pairs = ev[np.imag(ev) > 1e-9]
    np.testing.assert_allclose(-np.real(pairs) / np.abs(pairs), spec.damping, rtol=1e-9)
    if motor is not None:  # the default attitude bandwidth keeps the lag pole at twice it: 1 / (tau (2 zeta + a + 2))
        w = 1.0 / (motor * (2 * 0.8 + 0.2 + 2.0))
        assert np.abs(pairs).max() == pytest.approx(w, rel=0.12)  # to the resolution of the log grid


def test_reaction_coefficient_of_the_paper_hexarotor_is_211_J_r():
    """b_z = J_r sum_i s_i z_i,z (G^+)_{i,6} / (2 omega_i) = 211 J_r s (docs/physics.md) for the Table II hexarotor."""
    p = dataclasses.replace(presets.paper_hexarotor(), rotor_inertia=jnp.full((6,), 1.095e-4), overrides=("rotor_inertia",))
    b = reaction_coefficients(p)
    assert float(b[2]) / 1.095e-4 == pytest.approx(211.0, rel=5e-3)
    assert float(jnp.max(jnp.abs(reaction_coefficients(presets.paper_hexarotor())))) == 0.0


def test_auto_gains_are_differentiable_in_the_vehicle():
    """d K / d(mass, J_zz, tau_m) by jax.jacfwd against central differences."""
    hexa = dataclasses.replace(presets.paper_hexarotor(), rotor_inertia=jnp.full((6,), 1.0e-4), overrides=("rotor_inertia",))

    def gains(x):
        m, jz, tau = x
        p = dataclasses.replace(hexa, mass=m, inertia=hexa.inertia.at[2, 2].set(jz))
        fl = Flight(reference=Hover([0.0, 0.0, 1.0], 5.0), actuators=Actuators(motor=FirstOrderMotor(tau)))
        g = auto_gains(p, fl, spec=GainSpec(attitude_bandwidth=8.0, yaw_bandwidth=4.0, position_bandwidth=2.0))
        return jnp.concatenate([g[k] for k in ("K_p", "K_v", "K_pi", "K_R", "K_w", "K_Ri")])

    x = jnp.asarray([3.5, 0.251, 0.03])
    jac = np.asarray(jax.jacfwd(gains)(x))
    h = 1e-6
    for j in range(3):
        e = jnp.zeros(3).at[j].set(h * float(x[j]))
        fd = (np.asarray(gains(x + e)) - np.asarray(gains(x - e))) / (2 * h * float(x[j]))
        np.testing.assert_allclose(jac[:, j], fd, rtol=1e-6, atol=1e-8)
    assert np.abs(jac[:, 2]).max() > 0 and np.abs(jac[:, 1]).max() > 0


def test_gain_spec_refuses_bad_values():
    for kw, name in (({"attitude_bandwidth": -1.0}, "attitude_bandwidth"), ({"damping": 0.1}, "damping"),
                     ({"integral": 1.5}, "integral"), ({"lag_ratio": 0.5}, "lag_ratio")):
        with pytest.raises(ValueError, match=name):
            GainSpec(**kw)
    with pytest.raises(ValueError, match="gains"):
        with_auto_gains(object.__new__(type("Other", (), {"required_rank": 6})), presets.paper_hexarotor())


def test_lateral_acceleration_limit_against_the_exact_linear_program():
    """Fully actuated: the paper hexarotor's level-attitude lateral acceleration equals the exact LP's largest
    lateral force available in every direction (SciPy, analysis.exact) over the mass; under-actuated:
    g sqrt((T/W)^2 - 1)."""
    from jaxrotor.analysis.exact import lateral_force_capability
    from jaxrotor.gains import lateral_acceleration_limit

    hexa = presets.paper_hexarotor()
    exact = lateral_force_capability(hexa, n_directions=72) / float(hexa.mass)
    assert float(lateral_acceleration_limit(hexa)) == pytest.approx(exact, rel=2e-3)
    tw = float(jnp.sum(hexa.c_f * hexa.rotor_speed_max**2) / (hexa.mass * hexa.gravity))
    assert float(lateral_acceleration_limit(hexa, underactuated=True)) == pytest.approx(
        min(9.81 * np.sqrt(tw**2 - 1), 3 * 9.81), rel=1e-12)
