"""The physics layer's aerodynamics: the forces it applies to the propeller bodies are the analytic layer's
(jaxrotor.aero.body_wrench) at the same state, in NumPy and JAX; the terms off change nothing; the ground effect's
floor is the engine's."""

from __future__ import annotations

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.aero import Aerodynamics, body_wrench
from jaxrotor.physics import MuJoCoPlant, build_model, default_parts
from jaxrotor.physics.mjcf import ModelOptions
from jaxrotor.physics.plants import engine_aero, engine_aero_rows
from jaxrotor.so3 import rot_to_quat, rot_x, rot_z


@pytest.fixture(scope="module")
def x500():
    plat = presets.get("x500")
    pm = build_model(plat, default_parts(plat), ModelOptions(spin=False, floor=True))
    return plat, pm


def _engine_at(pm, p, R, v, omega):
    m = pm.model
    d = mujoco.MjData(m)
    d.qpos[:] = pm.initial_qpos()
    d.qpos[0:3] = p
    d.qpos[3:7] = np.asarray(rot_to_quat(jnp.asarray(R)))
    d.qvel[0:3] = v
    d.qvel[3:6] = omega
    mujoco.mj_forward(m, d)
    return d


def test_engine_rows_are_the_analytic_wrench(x500):
    """At one state the propeller rows (moved to the centre of mass) and the frame row sum to body_wrench's
    force and moment, to 1e-12, with every term and the ground effect on; NumPy and JAX rows agree."""
    plat, pm = x500
    aero = Aerodynamics(parasitic_drag=(0.02, 0.03, 0.05), rotor_drag=8e-4, induced_inflow=1.2e-3,
                        translational_lift=2e-2, flapping=2e-5, ground_effect=True, floor_height=pm.floor_height,
                        parasitic_drag_linear=0.05)
    R = np.asarray(rot_z(0.7) @ rot_x(0.15))
    p, v, omega, air = np.array([0.3, -0.2, 0.12]), np.array([3.0, -1.5, 0.4]), np.array([0.4, -0.3, 1.1]), \
        np.array([1.0, 0.5, -0.2])
    d = _engine_at(pm, p, R, v, omega)
    u = np.linspace(0.8, 1.2, 4) * 450.0**2
    eta = np.array([1.0, 0.7, 1.0, 0.0])
    frame = mujoco.mj_name2id(pm.model, mujoco.mjtObj.mjOBJ_BODY, "frame")
    offset_b = -np.asarray(pm.model.body_ipos[frame], dtype=float)
    rows = {}
    for xp in (np, jnp):
        ea = engine_aero(pm, plat, aero, xp=xp)
        ea = jax.tree_util.tree_map(lambda x: np.asarray(x, dtype=float), ea) if xp is np else ea
        ids, props = list(ea.sites), list(ea.props)
        arr = (lambda a: a) if xp is np else jnp.asarray
        rows[xp.__name__] = engine_aero_rows(ea, arr(d.qvel), arr(d.xpos[frame]), arr(d.xmat[frame]),
                                             arr(d.site_xpos[ids]), arr(d.site_xmat[ids]), arr(d.xipos[props]),
                                             arr(u), arr(eta), arr(air), arr(offset_b), xp=xp)
    (frame_row, prop_rows), (frame_j, prop_j) = rows["numpy"], rows["jax.numpy"]
    np.testing.assert_allclose(np.asarray(frame_j), frame_row, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(np.asarray(prop_j), prop_rows, rtol=1e-13, atol=1e-15)
    # total force and moment about the vehicle's centre of mass (the frame body's origin), world frame
    com = d.xpos[frame]
    F = frame_row[:3] + prop_rows[:, :3].sum(0)
    frame_com = d.xipos[frame]
    M = frame_row[3:] + np.cross(frame_com - com, frame_row[:3])
    for i, b in enumerate(props):
        M = M + prop_rows[i, 3:] + np.cross(d.xipos[b] - com, prop_rows[i, :3])
    eng = pm.physics_platform()
    f_b, tau_b = body_wrench(aero, eng, jnp.asarray(p), jnp.asarray(R), jnp.asarray(v), jnp.asarray(omega),
                             jnp.sqrt(jnp.asarray(u)), eng.alpha, eng.beta, jnp.asarray(air),
                             thrust=eng.c_f * jnp.asarray(u), effectiveness=jnp.asarray(eta))
    assert np.abs(F).max() > 0.5  # the terms are not small here
    np.testing.assert_allclose(F, R @ np.asarray(f_b), rtol=0, atol=1e-12)
    np.testing.assert_allclose(M, R @ np.asarray(tau_b), rtol=0, atol=1e-12)


def test_terms_off_change_nothing_and_floor_is_the_engines(x500):
    plat, pm = x500
    eng = pm.physics_platform()
    ctrl = jr.UnderactuatedSE3()
    ref = jr.reference.Transfer((0.0, 0.0, 1.0), (0.3, 0.2, 1.2), 0.6)
    common = dict(reference=ref, control_rate=250.0, save_dt=0.02, key=jax.random.PRNGKey(1),
                  integrator=jr.Integrator(adaptive=False, dt=4e-3), wind=jr.Wind(mean=(1.0, 0.0, 0.0)))
    plant = MuJoCoPlant(timestep=2e-3).with_model(build_model(plat, default_parts(plat),
                                                              ModelOptions(spin=False, floor=True, timestep=2e-3)))
    a = jr.fly(eng, ctrl, jr.Flight(**common), plant)
    b = jr.fly(eng, ctrl, jr.Flight(**common, aero=Aerodynamics()), plant)
    assert np.abs(np.asarray(a.p) - np.asarray(b.p)).max() <= 1e-12
    on = jr.fly(eng, ctrl, jr.Flight(**common, aero=Aerodynamics(rotor_drag=1e-3)), plant)
    assert np.abs(np.asarray(on.p) - np.asarray(a.p)).max() > 1e-4
    bad = jr.Flight(**common, aero=Aerodynamics(ground_effect=True, floor_height=0.0))
    with pytest.raises(ValueError, match=r"`floor_height` = 0 m is not the engine's floor .*Fix: pass "
                                         r"Aerodynamics\(\.\.\., floor_height="):
        jr.fly(eng, ctrl, bad, plant)
