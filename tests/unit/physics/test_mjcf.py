"""The multibody model: parts, generator, the engine's mass and inertia, and exactness against the analytic layer."""

import dataclasses

import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from jaxrotor import so3
from jaxrotor.allocation import force_matrix, moment_matrix
from jaxrotor.design.platform import rotor_axes, star_platform
from jaxrotor.design.presets import TABLE_II, paper_hexarotor
from jaxrotor.dynamics import RotorCommand, initial_state
from jaxrotor.integrate import Integrator
from jaxrotor.physics import (
    Arm,
    Hub,
    ModelOptions,
    Propeller,
    build_model,
    contact_force,
    paper_hexarotor_parts,
)
from jaxrotor.physics.parts import parts_mass
from jaxrotor.simulation import simulate_open_loop


@pytest.fixture(scope="module")
def hexa():
    return build_model(paper_hexarotor(), paper_hexarotor_parts())


def test_table_ii_parts_reproduce_paper_mass_and_inertia(hexa):
    """m = 3.5 kg and J^p = diag(0.081, 0.081, 0.162) within 2 %, from MuJoCo's joint-space inertia."""
    assert hexa.mass == pytest.approx(TABLE_II["mass"], rel=0.02)
    np.testing.assert_allclose(np.diag(hexa.inertia), TABLE_II["J_p"], rtol=0.02)
    off = hexa.inertia - np.diag(np.diag(hexa.inertia))
    assert np.abs(off).max() < 1e-6
    # the engine's total equals the sum of the parts' masses (nothing lost or doubled)
    assert hexa.mass == pytest.approx(parts_mass(paper_hexarotor_parts(), paper_hexarotor()), rel=1e-12)
    # planar mass distribution: J_z = J_x + J_y - 2 sum m z^2, J^p is (almost) planar
    assert hexa.inertia[2, 2] <= hexa.inertia[0, 0] + hexa.inertia[1, 1]


def test_centre_of_mass_is_body_origin_and_rests_on_floor(hexa):
    m, d = hexa.model, mujoco.MjData(hexa.model)
    d.qpos[:] = hexa.initial_qpos()
    mujoco.mj_forward(m, d)
    assert np.linalg.norm(d.subtree_com[1]) < 1e-12
    for _ in range(1500):  # no thrust: it settles on its feet, the floor carries m g
        mujoco.mj_step(m, d)
    f = contact_force(m, d)
    np.testing.assert_allclose(f, [0.0, 0.0, hexa.mass * 9.81], atol=1e-6 * hexa.mass * 9.81)
    assert abs(d.qpos[2]) < 2e-3  # p_z = 0 at rest, up to the soft contact's penetration


def _random_platform(rng, n):
    return star_platform(n, float(rng.uniform(0.25, 0.5)), mass=2.0, c_f=rng.uniform(1e-5, 5e-5, n),
                         c_tau=rng.uniform(1e-7, 2e-6, n), kappa=rng.choice([-1.0, 1.0], n),
                         alpha=rng.uniform(-0.6, 0.6, n), beta=rng.uniform(0.0, 0.5, n),
                         delta=rng.uniform(0.0, 0.3, n),
                         inertia=(0.05, 0.05, 0.09), name="random")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_actuator_wrench_equals_F_u_and_M_u(seed):
    """The engine's generalized actuator force on the free joint is (R F u, M u) to 1e-10 (eq. 10)."""
    rng = np.random.default_rng(seed)
    n = [4, 6, 8][seed]
    plat = _random_platform(rng, n)
    parts = dataclasses.replace(paper_hexarotor_parts(), propeller=Propeller(diameter=0.1, mass=0.012))
    pm = build_model(plat, parts, ModelOptions(floor=False))
    m, d = pm.model, mujoco.MjData(pm.model)
    u = rng.uniform(0.0, 4e5, n)
    R = np.asarray(so3.exp(jnp.asarray(rng.normal(size=3))))
    d.qpos[:] = pm.initial_qpos()
    d.qpos[3:7] = np.asarray(so3.rot_to_quat(R))
    d.ctrl[pm.ctrl_u] = u
    mujoco.mj_forward(m, d)
    F, M = np.asarray(force_matrix(plat)), np.asarray(moment_matrix(plat))
    scale = np.abs(F @ u).max()
    np.testing.assert_allclose(d.qfrc_actuator[0:3], R @ F @ u, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(d.qfrc_actuator[3:6], M @ u, rtol=0, atol=1e-10 * scale)


def test_free_body_matches_analytic_layer_over_two_seconds():
    """Propellers welded, no floor, RK4: the engine and eqs. (1)-(2), (11)-(12) agree to 1e-6 m over 2 s."""
    plat = paper_hexarotor()
    pm = build_model(plat, paper_hexarotor_parts(), ModelOptions(floor=False, spin=False, integrator="rk4",
                                                                  timestep=0.001))
    matched = pm.physics_platform()
    rng = np.random.default_rng(3)
    u = np.asarray(matched.mass * 9.81 / (6 * matched.c_f[0] * np.cos(0.2)) * rng.uniform(0.9, 1.15, 6))
    omega0 = np.array([0.3, -0.2, 0.5])
    state0 = initial_state(matched, omega=omega0, v=(0.1, 0.0, 0.2))
    traj = simulate_open_loop(matched, lambda t: RotorCommand(u=jnp.asarray(u)), state0, 2.0,
                              integrator=Integrator(rtol=1e-12, atol=1e-12), save_dt=0.5)
    m, d = pm.model, mujoco.MjData(pm.model)
    d.qvel[0:3], d.qvel[3:6] = (0.1, 0.0, 0.2), omega0
    d.ctrl[pm.ctrl_u] = u
    for _ in range(2000):
        mujoco.mj_step(m, d)
    assert float(np.linalg.norm(np.asarray(traj.p[-1]) - np.asarray(traj.p[0]))) > 0.1  # it really moved
    np.testing.assert_allclose(d.qpos[0:3], np.asarray(traj.p[-1]), atol=1e-6)
    np.testing.assert_allclose(so3.quat_to_rot(d.qpos[3:7]), np.asarray(traj.R[-1]), atol=1e-6)


@pytest.mark.parametrize("change, key", [
    (dict(hub=Hub(mass=2.2288, radius=0.5, height=0.03)), "hub.radius"),
    (dict(propeller=Propeller(diameter=0.6, mass=0.012)), "propeller.diameter"),
])
def test_parts_that_cannot_carry_the_platform_are_refused(change, key):
    with pytest.raises(ValueError, match=key.replace(".", r"\.")) as err:
        build_model(paper_hexarotor(), dataclasses.replace(paper_hexarotor_parts(), **change))
    assert "Fix:" in str(err.value)


@pytest.mark.parametrize("make, key", [
    (lambda: Arm(mass=-0.1), "arm.mass"),
    (lambda: Hub(mass=0.0), "hub.mass"),
    (lambda: Propeller(mass=float("nan")), "propeller.mass"),
])
def test_bad_part_values_name_the_part(make, key):
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        make()


def test_tilting_platform_gets_hinges_and_servos():
    plat = star_platform(6, 0.385, mass=3.5, c_f=3.8e-5, c_tau=1.2e-6, alpha=0.3, beta=0.1, inertia=(0.08, 0.08, 0.16),
              tilting=("alpha", "beta"))
    pm = build_model(plat, paper_hexarotor_parts())
    assert set(pm.ctrl_tilt) == {"alpha", "beta"}
    m, d = pm.model, mujoco.MjData(pm.model)
    d.qpos[:] = pm.initial_qpos()
    mujoco.mj_forward(m, d)
    # at the platform's angles every thrust site's z axis is z_i of eq. (4)
    z = np.stack([d.site_xmat[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f"thrust{i}")].reshape(3, 3)[:, 2]
                  for i in range(6)])
    np.testing.assert_allclose(z, np.asarray(rotor_axes(plat)), atol=1e-12)
