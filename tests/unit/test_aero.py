"""The aerodynamic terms (jaxrotor.aero): hand-derived cases, RotorPy's wrench, ground effect, gradients, the TOML
table and bad input (flights with the terms: tests/integration/test_aero_flights.py)."""

from __future__ import annotations

import jax

jax.config.update("jax_enable_x64", True)

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.aero import Aerodynamics, body_wrench, ground_effect_ratio, rotor_terms
from jaxrotor.io.rotorpy import from_rotorpy
from jaxrotor.allocation import wrench
from jaxrotor.io import config as cfg
from jaxrotor.so3 import rot_x, rot_z

HB = {"mass": 0.5, "Ixx": 0.00365, "Iyy": 0.00368, "Izz": 0.00703, "Ixy": 0.0, "Iyz": 0.0, "Ixz": 0.0,
      "num_rotors": 4, "rotor_radius": 0.1,
      "rotor_pos": {"r1": np.array([0.12020815, 0.12020815, 0.0]), "r2": np.array([0.12020815, -0.12020815, 0.0]),
                    "r3": np.array([-0.12020815, -0.12020815, 0.0]), "r4": np.array([-0.12020815, 0.12020815, 0.0])},
      "rotor_directions": np.array([1, -1, 1, -1]), "c_Dx": 0.005, "c_Dy": 0.005, "c_Dz": 0.01, "k_eta": 5.57e-06,
      "k_m": 1.36e-07, "k_d": 0.000119, "k_z": 0.000232, "k_h": 0.00339, "k_flap": 0.0, "tau_m": 0.005,
      "rotor_speed_min": 0, "rotor_speed_max": 1500}  # RotorPy 3.0's Hummingbird (hummingbird_params.quad_params)


def test_one_tilted_rotor_by_hand():
    """A rotor canted about x by 0.3 rad moving through the air: axial and in-plane parts in the rotor's own frame."""
    a = 0.3
    z = np.array([0.0, -np.sin(a), np.cos(a)])
    v = np.array([1.5, -2.0, 0.7])
    w = 800.0
    k_d, k_z, k_h, k_f = 1e-4, 2e-4, 3e-3, 1e-5
    aero = Aerodynamics(rotor_drag=k_d, induced_inflow=k_z, translational_lift=k_h, flapping=k_f)
    f, m = rotor_terms(aero, jnp.asarray(v)[None], jnp.asarray(z)[None], jnp.array([w]))
    va = v @ z
    vp = v - va * z
    expected_f = -k_d * w * vp - k_z * w * va * z + k_h * (vp @ vp) * z
    np.testing.assert_allclose(np.asarray(f[0]), expected_f, rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(np.asarray(m[0]), -k_f * w * np.cross(v, z), rtol=1e-14, atol=1e-18)
    # the H-force lies in the rotor plane, the couple too
    H = -k_d * w * vp
    assert abs(H @ z) < 1e-15 and abs(np.asarray(m[0]) @ z) < 1e-15


def test_rotorpy_wrench_formulas():
    """The body wrench of a RotorPy vehicle equals RotorPy's compute_body_wrench, written out here from its
    definitions (the package itself is compared in tests/integration/test_aero_rotorpy.py)."""
    params = dict(HB, k_flap=2e-5)
    veh = from_rotorpy(params)
    pos = np.array(list(params["rotor_pos"].values()))
    rng = np.random.default_rng(3)
    for _ in range(5):
        R = np.asarray(rot_z(rng.uniform(-3, 3)) @ rot_x(rng.uniform(-1, 1)))
        v, air, om = rng.normal(size=3) * 3, rng.normal(size=3), rng.normal(size=3)
        spd = rng.uniform(400, 1400, 4)
        vb = R.T @ (v - air)
        local = vb[None] + np.cross(om, pos)
        T = np.zeros((4, 3))
        T[:, 2] = params["k_eta"] * spd**2 + params["k_h"] * (local[:, 0] ** 2 + local[:, 1] ** 2)
        H = -spd[:, None] * local * np.array([params["k_d"], params["k_d"], params["k_z"]])
        flap = -params["k_flap"] * spd[:, None] * np.cross(local, [0.0, 0.0, 1.0])
        D = -np.linalg.norm(vb) * np.array([params["c_Dx"], params["c_Dy"], params["c_Dz"]]) * vb
        F = (T + H).sum(0) + D
        yaw = np.zeros(3)
        yaw[2] = np.sum(params["rotor_directions"] * params["k_m"] * spd**2)
        M = np.cross(pos, T + H).sum(0) + yaw + flap.sum(0)
        f0, t0 = wrench(veh.platform, jnp.asarray(spd**2))
        fa, ta = body_wrench(veh.aero, veh.platform, jnp.zeros(3), jnp.asarray(R), jnp.asarray(v), jnp.asarray(om),
                             jnp.asarray(spd), veh.platform.alpha, veh.platform.beta, jnp.asarray(air))
        np.testing.assert_allclose(np.asarray(f0 + fa), F, rtol=0, atol=1e-12)
        np.testing.assert_allclose(np.asarray(t0 + ta), M, rtol=0, atol=1e-12)


@pytest.mark.parametrize("h_over_r", [0.5, 1.0, 2.0, 4.0])
def test_ground_effect_hover_input_closed_form(h_over_r):
    """At hub height h the hover input is m g / (n c_f) / (1 - (r / 4 h)^2): the vehicle holds still there."""
    r = 0.127
    plat = presets.get("x500")
    n = plat.n_rotors
    aero = Aerodynamics(ground_effect=True, rotor_radius=r, floor_height=-1.0)
    ratio = 1.0 / (1.0 - (1.0 / (4.0 * h_over_r)) ** 2)
    np.testing.assert_allclose(float(ground_effect_ratio(h_over_r * r, r, 2.0)), ratio, rtol=1e-15)
    # a flat vehicle: every hub at the same height p_z + p_i,z
    hub_z = float(jr.rotor_positions(plat)[0, 2])
    p = jnp.array([0.0, 0.0, -1.0 + h_over_r * r - hub_z])
    u = jnp.full(n, float(plat.mass * plat.gravity) / (n * float(plat.c_f[0])) / ratio)
    state = jr.initial_state(plat, p=p, rotor_speed=jnp.sqrt(u))
    d, out = jr.vehicle_derivative(plat, jr.Actuators(), state, jr.RotorCommand(u=u), aero=aero)
    np.testing.assert_allclose(np.asarray(d.v), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(d.omega), 0.0, atol=1e-10)
    # without the ground effect the same input falls short by (1 - 1/ratio) g
    d0, _ = jr.vehicle_derivative(plat, jr.Actuators(), state, jr.RotorCommand(u=u))
    np.testing.assert_allclose(float(d0.v[2]), -(1.0 - 1.0 / ratio) * float(plat.gravity), rtol=1e-12)


def test_ground_effect_cap_and_below_floor():
    """Capped at ground_effect_max (reached at h = r / (4 sqrt(1 - 1/cap))), finite with a zero gradient below."""
    r, cap = 0.1, 2.0
    h_min = r / (4 * np.sqrt(1 - 1 / cap))
    for h in (h_min, 0.5 * h_min, 0.0, -0.3):
        np.testing.assert_allclose(float(ground_effect_ratio(h, r, cap)), cap, rtol=1e-14)
        assert float(jax.grad(ground_effect_ratio)(jnp.asarray(h * 0.999), r, cap)) == 0.0
    g = jax.grad(ground_effect_ratio)(0.1, r, cap)
    fd = (ground_effect_ratio(0.1 + 1e-6, r, cap) - ground_effect_ratio(0.1 - 1e-6, r, cap)) / 2e-6
    np.testing.assert_allclose(float(g), float(fd), rtol=1e-7)


def test_body_wrench_gradient_against_central_differences():
    """d(wrench)/d(coefficients, velocity) by jax.grad against central differences, all terms and a tilt on."""
    plat = presets.paper_hexarotor()
    aero = Aerodynamics(parasitic_drag=(0.02, 0.03, 0.04), rotor_drag=8e-4, induced_inflow=1.5e-3,
                        translational_lift=2e-2, flapping=1e-5, ground_effect=True, rotor_radius=0.127,
                        parasitic_drag_linear=0.1)
    R = rot_z(0.4) @ rot_x(0.2)
    spd = jnp.linspace(500.0, 700.0, 6)

    def scalar(k_d, k_h, v, alpha):
        a = dataclasses.replace(aero, rotor_drag=k_d, translational_lift=k_h)
        f, t = body_wrench(a, plat, jnp.array([0.0, 0.0, 0.3]), R, v, jnp.array([0.3, -0.2, 0.5]), spd, alpha,
                           plat.beta, jnp.array([1.0, 0.5, 0.0]), thrust=plat.c_f * spd**2)
        return jnp.sum(f * jnp.array([1.0, -2.0, 0.5])) + jnp.sum(t * jnp.array([3.0, 1.0, -1.0]))

    args = (jnp.asarray(8e-4), jnp.asarray(2e-2), jnp.array([4.0, -1.0, 0.5]), jnp.asarray(0.3))
    grads = jax.grad(scalar, argnums=(0, 1, 2, 3))(*args)
    for i, g in enumerate(grads):
        x = np.asarray(args[i], dtype=float)
        eps = 1e-6 * max(1.0, float(np.abs(x).max()))
        for j in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[j] = eps
            up = scalar(*[jnp.asarray(x + e) if k == i else a for k, a in enumerate(args)])
            dn = scalar(*[jnp.asarray(x - e) if k == i else a for k, a in enumerate(args)])
            fd = float(up - dn) / (2 * eps)
            np.testing.assert_allclose(float(np.asarray(g)[j]), fd, rtol=1e-6, atol=1e-9)


def test_float32_wrench_is_finite_and_close():
    plat64 = presets.paper_hexarotor()
    aero = Aerodynamics(parasitic_drag=0.02, rotor_drag=8e-4, induced_inflow=1e-3, translational_lift=1e-2,
                        flapping=1e-5)
    args = (jnp.zeros(3), rot_z(0.3), jnp.array([3.0, -1.0, 0.2]), jnp.array([0.1, 0.2, -0.3]),
            jnp.full(6, 600.0), plat64.alpha, plat64.beta, jnp.array([0.5, 0.0, 0.0]))
    f64, t64 = body_wrench(aero, plat64, *args)
    to32 = lambda t: jax.tree_util.tree_map(lambda x: x.astype(jnp.float32) if eqx_is_float(x) else x, t)
    f32, t32 = body_wrench(to32(aero), to32(plat64), *to32(args))
    assert f32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(f32), np.asarray(f64), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(t32), np.asarray(t64), rtol=1e-5, atol=1e-6)
    # the gradient at zero airspeed is finite (safe norm in the parasitic drag)
    g = jax.grad(lambda v: jnp.sum(body_wrench(to32(aero), to32(plat64), jnp.zeros(3, jnp.float32),
                                               jnp.eye(3, dtype=jnp.float32), v, jnp.zeros(3, jnp.float32),
                                               jnp.full(6, 600.0, jnp.float32), plat64.alpha.astype(jnp.float32),
                                               plat64.beta.astype(jnp.float32), jnp.zeros(3, jnp.float32))[0]))(
        jnp.zeros(3, jnp.float32))
    assert np.all(np.isfinite(np.asarray(g)))


def eqx_is_float(x):
    return isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jnp.floating)


def test_toml_aero_table(tmp_path):
    base = _config("paper_reproduction.toml").read_text().replace('compare = "paper_realistic.toml"', "")
    path = tmp_path / "aero.toml"
    path.write_text(base + "\n[aero]\nparasitic_drag = [0.01, 0.01, 0.02]\nrotor_drag = 1e-4\ninduced_inflow = 2e-4\n"
                    "translational_lift = 3e-3\nflapping = 1e-6\n")
    c = cfg.load(path)
    a = c.flight.aero
    np.testing.assert_allclose(np.asarray(a.parasitic_drag), [0.01, 0.01, 0.02])
    assert float(a.rotor_drag) == 1e-4 and float(a.induced_inflow) == 2e-4 and float(a.flapping) == 1e-6
    assert not a.ground_effect
    path.write_text(base + "\n[aero]\nrotor_drag = -1e-4\n")
    with pytest.raises(cfg.ConfigError, match=r"aero.rotor_drag"):
        cfg.load(path)
    path.write_text(base + "\n[aero]\nground_effect = true\n")  # the paper's platform has no parts: no radius
    with pytest.raises(cfg.ConfigError, match=r"rotor_radius"):
        cfg.load(path)
    path.write_text(base + "\n[aero]\nrotor_dragg = 1e-4\n")
    with pytest.raises(cfg.ConfigError, match=r"rotor_dragg"):
        cfg.load(path)


def _config(name):
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "configs" / name


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match=r"`rotor_drag` = -0.1 is invalid"):
        Aerodynamics(rotor_drag=-0.1)
    with pytest.raises(ValueError, match=r"`parasitic_drag` has shape \(2,\)"):
        Aerodynamics(parasitic_drag=(0.1, 0.2))
    with pytest.raises(ValueError, match=r"`ground_effect_max`"):
        Aerodynamics(ground_effect=True, ground_effect_max=1.0)
    with pytest.raises(ValueError, match=r"`rotor_drag` has shape \(4,\), but platform .* has 6 rotors"):
        Aerodynamics(rotor_drag=jnp.ones(4) * 1e-4).check(presets.paper_hexarotor())
    plat = presets.paper_hexarotor()
    flight = jr.Flight(reference=jr.reference.Hover((0.0, 0.0, 1.0), 0.1), aero=Aerodynamics(ground_effect=True))
    with pytest.raises(ValueError, match=r"`rotor_radius` = None needs the propeller"):
        jr.fly(plat, jr.control.FullyActuatedSE3(), flight)


def test_scaled_coefficients_and_the_rotorpy_table():
    """The table is RotorPy's Hummingbird (the file this test module copies), and scaling to it is the identity."""
    veh = from_rotorpy(HB)
    same = jr.aero.scaled_coefficients(veh.platform, "hummingbird")
    for k in ("parasitic_drag", "rotor_drag", "induced_inflow", "translational_lift", "flapping"):
        np.testing.assert_allclose(np.asarray(getattr(same, k)), np.asarray(getattr(veh.aero, k)), rtol=1e-12)
    hexa = presets.paper_hexarotor()
    a = jr.aero.scaled_coefficients(hexa, rotor_radius=0.127)
    np.testing.assert_allclose(float(a.rotor_drag), HB["k_d"] * float(hexa.c_f[0]) / HB["k_eta"], rtol=1e-12)
    assert float(a.rotor_radius) == 0.127
    with pytest.raises(ValueError, match="`like` = 'kestrel'"):
        jr.aero.scaled_coefficients(hexa, "kestrel")
