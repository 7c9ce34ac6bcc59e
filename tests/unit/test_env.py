"""The functional environment: pure, vmappable, and right on closed forms (hover, free fall under vmap)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.env import FlightEnv
from jaxrotor.integrate import RK4
from jaxrotor.reference import Hover


@pytest.fixture(scope="module")
def env():
    # a speed limit of 1.5 m/s: free fall passes it after 0.15 s (|v| = g t)
    flight = jr.Flight(Hover([0.0, 0.0, 1.0], 0.5), integrator=jr.Integrator(solver=RK4(), adaptive=False, dt=0.025),
                       limits=jr.DivergenceLimits(max_speed=1.5), control_rate=20.0)
    return FlightEnv(jr.presets.paper_hexarotor(), flight, reset_noise=0.2)


@pytest.fixture(scope="module")
def step(env):
    return jax.jit(jax.vmap(env.step))


def test_reset_is_pure_and_bounded(env):
    keys = jax.random.split(jax.random.key(0), 64)
    reset = jax.jit(jax.vmap(env.reset))
    s1, s2 = reset(keys), reset(keys)
    np.testing.assert_array_equal(s1.vehicle.p, s2.vehicle.p)  # same keys, same states
    offset = np.asarray(s1.vehicle.p) - np.array([0.0, 0.0, 1.0])
    assert np.all(np.abs(offset) <= 0.2) and np.unique(offset[:, 0]).size == 64
    np.testing.assert_array_equal(s1.vehicle.v, 0.0)


def test_hover_and_free_fall_closed_forms(env, step):
    """a = 1 holds the hover (equilibrium); a = 0 is free fall: z(T) = z0 - g T^2 / 2, v_z = -g T (RK4 is exact)."""
    keys = jax.random.split(jax.random.key(1), 2)
    s0 = jax.jit(jax.vmap(env.reset))(keys)
    actions = jnp.stack([jnp.ones(6), jnp.zeros(6)])
    s = s0
    for k in range(4):
        s, obs, reward, done = step(s, actions)
        # done: the free fall leaves the speed limit at t = 0.2 s (|v| = 1.96 > 1.5 m/s), the hover never
        assert not bool(done[0]) and bool(done[1]) == (k == 3)
    T, g = 4 * env.control_period, float(env.platform.gravity)
    np.testing.assert_allclose(s.t, [T, T], rtol=1e-15)
    np.testing.assert_allclose(s.vehicle.p[0], s0.vehicle.p[0], atol=1e-12)  # hover: stays put
    np.testing.assert_allclose(s.vehicle.omega[0], 0.0, atol=1e-12)
    np.testing.assert_allclose(s.vehicle.p[1, 2], s0.vehicle.p[1, 2] - g * T**2 / 2, rtol=1e-13)
    np.testing.assert_allclose(s.vehicle.v[1], [0.0, 0.0, -g * T], atol=1e-12)
    # observation and reward from their definitions
    e_p = np.array([0.0, 0.0, 1.0]) - np.asarray(s.vehicle.p[1])
    np.testing.assert_allclose(obs[1, :3], e_p, atol=1e-14)
    np.testing.assert_allclose(obs[1, 3:6], -np.asarray(s.vehicle.v[1]), atol=1e-14)
    expect = -(e_p @ e_p + 0.1 * (g * T) ** 2) * env.control_period
    assert float(reward[1]) == pytest.approx(expect, rel=1e-12)
    # the horizon (0.5 s) ends the episode
    for _ in range(6):
        s, _, _, done = step(s, actions)
    assert bool(done[0]) and int(s.steps[0]) == 10


def test_bad_settings():
    with pytest.raises(ValueError, match="control_rate"):
        FlightEnv(jr.presets.paper_hexarotor(), jr.Flight(Hover([0.0, 0.0, 1.0], 0.5)))
    with pytest.raises(ValueError, match="dt"):  # the step must divide the control period
        FlightEnv(jr.presets.paper_hexarotor(), jr.Flight(Hover([0.0, 0.0, 1.0], 0.5), control_rate=20.0,
                                                           integrator=jr.Integrator(adaptive=False, dt=0.03)))


def test_sensors_delay_wind_and_the_allocator_act_in_the_environment():
    """The environment flies the tick's sensing and hold: a 1-tick delay shows the previous state, the wind's drag
    pushes a hovering vehicle downwind, and a body-wrench action goes through the flight's allocator."""
    from jaxrotor.allocators import Clip
    from jaxrotor.env import BodyWrench

    hexa = jr.presets.paper_hexarotor()
    base = dict(integrator=jr.Integrator(solver=RK4(), adaptive=False, dt=0.025), control_rate=20.0)
    # delay: after one step the observation is the state of the tick before (the reset state), not the new one
    env = FlightEnv(hexa, jr.Flight(Hover([0.0, 0.0, 1.0], 0.5), sensors=jr.Sensors(delay=1), **base), reset_noise=0.0)
    s0 = eqx.filter_jit(env.reset)(jax.random.key(0))
    step = eqx.filter_jit(env.step)
    s1, obs, _, _ = step(s0, jnp.zeros(6))  # free fall
    assert float(s1.vehicle.v[2]) < -0.4
    np.testing.assert_allclose(obs[3:6], -np.asarray(s0.vehicle.v), atol=1e-12)  # e_v of the delayed (rest) state
    s2, obs2, _, _ = step(s1, jnp.zeros(6))
    np.testing.assert_allclose(obs2[3:6], -np.asarray(s1.vehicle.v), atol=1e-12)
    # wind: 3 m/s along x and linear drag 0.5 N s/m: a_x = c v_rel / m at rest, the vehicle drifts downwind
    windy = FlightEnv(hexa, jr.Flight(Hover([0.0, 0.0, 1.0], 0.5), wind=jr.Wind(mean=(3.0, 0.0, 0.0), drag_linear=0.5),
                                      key=jax.random.key(1), **base), reset_noise=0.0)
    s, _, _, _ = jax.jit(lambda k: windy.step(windy.reset(k), jnp.ones(6)))(jax.random.key(0))
    a_x = 0.5 * 3.0 / float(hexa.mass)
    assert float(s.vehicle.v[0]) == pytest.approx(a_x * 0.05, rel=2e-2)
    # a body wrench through a clipping allocator: the hover wrench hovers, a huge one saturates every rotor
    clip = FlightEnv(hexa, jr.Flight(Hover([0.0, 0.0, 1.0], 0.5), allocator=Clip(), **base), action=BodyWrench(),
                     reset_noise=0.0)
    assert clip.action_size == 6
    s = eqx.filter_jit(clip.reset)(jax.random.key(0))
    step = eqx.filter_jit(clip.step)
    hover, _, _, _ = step(s, jnp.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0]))
    np.testing.assert_allclose(hover.vehicle.p, s.vehicle.p, atol=1e-10)
    up, _, _, _ = step(s, jnp.array([0.0, 0.0, 100.0, 0.0, 0.0, 0.0]))
    u_max = float(np.max(hexa.u_max))
    np.testing.assert_allclose(up.plant.applied.u, u_max, rtol=1e-12)
