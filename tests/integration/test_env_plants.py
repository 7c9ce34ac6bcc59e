"""The environment runs on any jittable plant: the same free fall and hover on the analytic and the MJX plant."""

import jax
import jax.numpy as jnp
import numpy as np

import jaxrotor as jr
from jaxrotor.env import FlightEnv
from jaxrotor.integrate import RK4
from jaxrotor.physics import MJXPlant, build_model, paper_hexarotor_parts
from jaxrotor.physics.mjcf import ModelOptions
from jaxrotor.reference import Hover


def test_environment_on_the_mjx_plant_matches_the_analytic_plant():
    """Welded propellers, no floor, the engine's mass and inertia: three control periods of hover and of free fall
    give the same states on both plants (the free fall is also the closed form z0 - g t^2 / 2)."""
    pm = build_model(jr.presets.paper_hexarotor(), paper_hexarotor_parts(), ModelOptions(spin=False, floor=False))
    plat = pm.physics_platform()
    flight = jr.Flight(Hover([0.0, 0.0, 1.0], 0.5), control_rate=50.0,
                       integrator=jr.Integrator(solver=RK4(), adaptive=False, dt=1e-3))
    envs = {"analytic": FlightEnv(plat, flight, reset_noise=0.1),
            "mjx": FlightEnv(plat, flight, plant=MJXPlant().with_model(pm), reset_noise=0.1)}
    keys = jax.random.split(jax.random.key(4), 2)
    actions = jnp.stack([jnp.ones(6), jnp.zeros(6)])  # hover, free fall
    out = {}
    for name, env in envs.items():
        def episode(keys, env=env):  # reset, then three control periods: one compiled program per plant
            s = jax.vmap(env.reset)(keys)
            for _ in range(3):
                s, obs, reward, done = jax.vmap(env.step)(s, actions)
            return s, obs, reward
        out[name] = jax.jit(episode)(keys)
    (sa, oa, ra), (sm, om, rm) = out["analytic"], out["mjx"]
    np.testing.assert_allclose(np.asarray(sm.vehicle.p), np.asarray(sa.vehicle.p), atol=1e-9)
    np.testing.assert_allclose(np.asarray(sm.vehicle.v), np.asarray(sa.vehicle.v), atol=1e-8)
    np.testing.assert_allclose(np.asarray(om), np.asarray(oa), atol=1e-8)
    np.testing.assert_allclose(np.asarray(rm), np.asarray(ra), rtol=1e-8)
    T, g = 3 * 0.02, float(plat.gravity)
    s0 = jax.jit(jax.vmap(envs["analytic"].reset))(keys)  # the same reset on both plants (the key's offsets)
    assert abs(float(sm.vehicle.p[1, 2]) - float(s0.vehicle.p[1, 2] - g * T**2 / 2)) < 1e-9  # free fall
    np.testing.assert_allclose(np.asarray(sm.vehicle.p[0]), np.asarray(s0.vehicle.p[0]), atol=1e-6)  # hover holds
