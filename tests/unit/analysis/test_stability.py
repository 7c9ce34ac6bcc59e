"""The closed loop linearised about hover (jaxrotor.analysis.stability): closed forms and the paper hexarotor.

* a flat quadrotor under the under-actuated controller, continuous loop: the vertical modes are the roots of
  ``s^2 + K_v,z s + K_p,z`` (the gains are mass-normalised accelerations), the unused integrals are neutral;
* the same at a control rate with a one-tick sensor delay: the vertical modes are ``log(z) / h`` of the exact
  zero-order-hold discretisation of the double integrator with the delayed feedback;
* the paper hexarotor (``J^p``, 30 ms motor, Table III): stable without rotor inertia, an unstable yaw mode
  with ``J_r = 1.095e-4 kg m^2``, stable again with the lower yaw gains (one vmapped call);
* the ``stability_margin`` objective term: its gradient with respect to a yaw gain against central
  differences.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.analysis import closed_loop_stability
from jaxrotor.analysis.stability import StabilityReport
from jaxrotor.optimize import Design
from jaxrotor.optimize.objectives import TERMS, StabilityMargin

JR = 1.095e-4  # kg m^2, the paper hexarotor's propeller and bell
LOW_YAW = dict(K_R=(90.0, 90.0, 30.0), K_w=(25.0, 25.0, 3.0), K_Ri=(25.0, 25.0, 5.0))
# the physics layer's measured yaw instability of the paper hexarotor with rotor inertia (1/s, Hz)
MEASURED_GROWTH, MEASURED_HZ = 6.06, 4.44


def _nearest(s, targets):
    """For each target, the distance to the nearest eigenvalue in ``s``."""
    s = np.asarray(s)
    return np.array([np.min(np.abs(s - t)) for t in targets])


def _hover(duration=2.0, **kw):
    return jr.Flight(reference=jr.reference.Hover(position=(0.0, 0.0, 1.0), duration=duration), **kw)


def _eigenvalues(report: StabilityReport):
    """Every mode's ``s`` (both of a complex pair) from the report's growth rates and frequencies."""
    g, f = np.asarray(report.growth_rates), np.asarray(report.frequencies_hz)
    keep = np.isfinite(g)
    return np.concatenate([g[keep] + 2j * np.pi * f[keep], g[keep] - 2j * np.pi * f[keep]])


def test_flat_quadrotor_continuous_vertical_modes():
    quad = jr.presets.cs_4r()
    ctrl = jr.UnderactuatedSE3()
    kp, kv = float(ctrl.K_p[2]), float(ctrl.K_v[2])
    rep = closed_loop_stability(quad, ctrl, _hover())
    roots = np.roots([1.0, kv, kp])
    assert np.all(_nearest(_eigenvalues(rep), roots) < 1e-9), (roots, rep.modes)
    z_modes = [m for m in rep.modes if m["axis"] == "z"]
    assert z_modes and abs(z_modes[0]["growth_rate"] - roots.real.max()) < 1e-9
    assert abs(z_modes[0]["frequency_hz"] - abs(roots.imag).max() / (2 * np.pi)) < 1e-9
    assert abs(z_modes[0]["damping"] - kv / (2 * np.sqrt(kp))) < 1e-9
    # K_pi = K_Ri = 0: the six integral states are neutral (nothing depends on them), not modes
    assert rep.neutral_states == ["int_p_x", "int_p_y", "int_p_z", "int_R_x", "int_R_y", "int_R_z"]
    assert rep.drifting_states == [] and bool(rep.stable) and bool(rep.equilibrium_found)
    assert rep.setting == "continuous" and float(rep.margin) == -float(rep.max_growth_rate) > 0
    d = rep.to_dict()
    assert {"stable", "max_growth_rate", "frequency_hz", "axis", "modes"} <= set(d) and d["stable"] is True
    # the linearised matrix in physical units: the z rows are those of the double integrator under PD
    lin = rep.linearization
    A = np.asarray(lin.physical_matrix)
    iz, ivz = lin.labels.index("p_z"), lin.labels.index("v_z")
    np.testing.assert_allclose(A[ivz, [iz, ivz]], [-kp, -kv], rtol=1e-12)
    assert lin.labels[:12] == ("p_x", "p_y", "p_z", "v_x", "v_y", "v_z", "theta_x", "theta_y", "theta_z",
                               "omega_x", "omega_y", "omega_z")


def test_flat_quadrotor_discrete_with_delay_is_the_exact_zoh_map():
    quad = jr.presets.cs_4r()
    ctrl = jr.UnderactuatedSE3()
    kp, kv = float(ctrl.K_p[2]), float(ctrl.K_v[2])
    rate = 100.0
    h = 1.0 / rate
    flight = _hover(control_rate=rate, integrator=jr.Integrator(adaptive=False, dt=h / 2),
                    sensors=jr.Sensors(delay=1), key=jax.random.PRNGKey(0))
    rep = closed_loop_stability(quad, ctrl, flight)
    # x_k = (z, w, z_{k-1}, w_{k-1}); a_k = -K_p z_{k-1} - K_v w_{k-1} held over the period
    Phi = np.array([[1.0, h, -0.5 * h * h * kp, -0.5 * h * h * kv],
                    [0.0, 1.0, -h * kp, -h * kv],
                    [1.0, 0.0, 0.0, 0.0],
                    [0.0, 1.0, 0.0, 0.0]])
    z = np.linalg.eigvals(Phi).astype(complex)
    expected = np.log(z[np.abs(z) > 1e-6]) / h  # the others vanish within a period (z ~ 1e-17: not resolved)
    assert len(expected) == 3
    assert np.all(_nearest(_eigenvalues(rep), expected) < 1e-9), (expected, rep.modes)
    assert rep.period == pytest.approx(h) and rep.setting == f"discrete, h = {h:g} s"
    assert "delay1.p_z" in rep.labels and "delay1.omega_z" in rep.labels and "rotor_speed[0]" not in rep.labels
    assert "int_p_z" in rep.neutral_states and bool(rep.stable)


def _paper_batch():
    base = jr.presets.get("paper_hexarotor_physics")
    platforms = [dataclasses.replace(base, rotor_inertia=jnp.full(6, j)) for j in (0.0, JR, JR)]
    controllers = [jr.FullyActuatedSE3(), jr.FullyActuatedSE3(), jr.FullyActuatedSE3(**LOW_YAW)]
    stack = lambda xs: jax.tree_util.tree_map(lambda *a: jnp.stack([jnp.asarray(x) for x in a]), *xs)
    return stack(platforms), stack(controllers)


def test_paper_hexarotor_rotor_inertia_destabilises_yaw():
    platforms, controllers = _paper_batch()
    flight = _hover(10.0, actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)))
    batch = eqx.filter_jit(jax.vmap(lambda p, c: closed_loop_stability(p, c, flight)))(platforms, controllers)
    none, inertia, low = (jax.tree_util.tree_map(lambda x, i=i: x[i], batch) for i in range(3))
    for name, r in (("J_r = 0", none), ("J_r = 1.095e-4", inertia), ("J_r = 1.095e-4, low yaw gains", low)):
        print(f"paper hexarotor, {name}: {r.summary()}")
        print("   ", [(round(m["growth_rate"], 4), round(m["frequency_hz"], 3), m["axis"]) for m in r.modes])
    assert bool(none.stable) and float(none.max_growth_rate) < 0 and not none.neutral_states
    assert not bool(inertia.stable) and inertia.axis == "yaw"
    assert float(inertia.max_growth_rate) == pytest.approx(MEASURED_GROWTH, rel=0.1)
    assert float(inertia.frequency_hz) == pytest.approx(MEASURED_HZ, rel=0.1)
    assert inertia.modes[0]["damping"] < 0 and inertia.modes[0]["axis"] == "yaw"
    assert bool(low.stable) and float(low.max_growth_rate) < 0
    # without rotor inertia or with the lower yaw gains, the slowest modes are the integral-action ones
    assert float(none.max_growth_rate) == pytest.approx(float(low.max_growth_rate), rel=1e-6)


def test_stability_margin_term_gradient_against_central_differences():
    platform = dataclasses.replace(jr.presets.get("paper_hexarotor_physics"), rotor_inertia=jnp.full(6, JR))
    flight = _hover(10.0, actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)))
    term = TERMS["stability_margin"]()
    assert isinstance(term, StabilityMargin) and term.sense == -1 and not term.needs_flight

    def margin(k_w_z):
        ctrl = jr.FullyActuatedSE3(K_w=jnp.stack([25.0, 25.0, k_w_z]))
        return term.measure(Design(platform, ctrl, flight))

    f = jax.jit(jax.value_and_grad(margin))
    x, step = 5.0, 1e-4  # Table III's K_w,z
    value, grad = f(x)
    fd = (f(x + step)[0] - f(x - step)[0]) / (2 * step)
    print(f"smooth margin {float(value):.6f} 1/s, d/dK_w,z = {float(grad):.8f} (central differences {float(fd):.8f})")
    assert float(grad) == pytest.approx(float(fd), rel=1e-6)
    # the unstable yaw pair: the smooth margin sits below -Re s = -6.02 1/s by about T log 2 (T = 0.1 1/s)
    assert -MEASURED_GROWTH * 1.1 - 0.1 * np.log(30) < float(value) < -MEASURED_GROWTH * 0.9
