"""jaxrotor's aerodynamics against RotorPy 3.0 (an independent implementation): the body wrench at random states
and 2 s open-loop flights in wind, for RotorPy's Hummingbird and Crazyflie parameter files mapped by
``jaxrotor.io.rotorpy.from_rotorpy`` (docs/aero.md)."""

from __future__ import annotations

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

rotorpy = pytest.importorskip("rotorpy")
from rotorpy.vehicles.crazyflie_params import quad_params as CRAZYFLIE  # noqa: E402
from rotorpy.vehicles.hummingbird_params import quad_params as HUMMINGBIRD  # noqa: E402
from rotorpy.vehicles.multirotor import Multirotor  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

import jaxrotor as jr  # noqa: E402
from jaxrotor.aero import body_wrench  # noqa: E402
from jaxrotor.io.rotorpy import from_rotorpy  # noqa: E402
from jaxrotor.allocation import wrench  # noqa: E402

VEHICLES = {"hummingbird": HUMMINGBIRD, "crazyflie": CRAZYFLIE}
FLAP = 1e-5  # both files have k_flap = 0: a flapping coefficient so the term is compared too


def _params(name):
    params = dict(VEHICLES[name])
    params["k_flap"] = FLAP * params["k_eta"] / HUMMINGBIRD["k_eta"]
    return params


@pytest.mark.parametrize("name", list(VEHICLES))
def test_wrench_matches_rotorpy(name):
    """Thrust, yaw torque and every aerodynamic term at 50 random states with wind: to 1e-10 (N, N m)."""
    params = _params(name)
    veh = from_rotorpy(params)
    ref = Multirotor(params, aero=True)
    rng = np.random.default_rng(11)
    worst = 0.0
    for k in range(50):
        R = Rotation.random(random_state=k).as_matrix()
        v, wind, om = rng.normal(size=3) * 4, rng.normal(size=3) * 2, rng.normal(size=3) * 3
        spd = rng.uniform(0.2, 1.0, 4) * params["rotor_speed_max"]
        F, M = ref.compute_body_wrench(om, spd, R.T @ (v - wind))
        f0, t0 = wrench(veh.platform, jnp.asarray(spd**2))
        fa, ta = body_wrench(veh.aero, veh.platform, jnp.zeros(3), jnp.asarray(R), jnp.asarray(v), jnp.asarray(om),
                             jnp.asarray(spd), veh.platform.alpha, veh.platform.beta, jnp.asarray(wind))
        worst = max(worst, np.abs(np.asarray(f0 + fa) - F).max(), np.abs(np.asarray(t0 + ta) - M).max())
        assert np.abs(np.asarray(fa)).max() > 1e-4 * np.abs(F).max()  # the aerodynamic part is not negligible
    assert worst < 1e-10, worst


@pytest.mark.parametrize("name", list(VEHICLES))
def test_open_loop_flight_matches_rotorpy(name):
    """2 s under piecewise-constant motor commands (20 ms) in a 2.3 m/s wind: positions agree to 1e-8 m.

    RotorPy integrates each 20 ms with DOP853 at rtol = atol = 1e-13 and renormalises its quaternion; jaxrotor
    integrates the whole flight adaptively at 1e-12 with a jump at every command change."""
    params = _params(name)
    veh = from_rotorpy(params)
    ref = Multirotor(params, aero=True, integrator_kwargs={"method": "DOP853", "rtol": 1e-13, "atol": 1e-13})
    dt, T = 0.02, 2.0
    K = int(round(T / dt))
    hover = np.sqrt(params["mass"] * 9.81 / (4 * params["k_eta"]))
    cmds = hover * (1 + 0.05 * np.random.default_rng(1).normal(size=(K, 4)))
    wind = np.array([2.0, -1.0, 0.5])
    s = {"x": np.zeros(3), "v": np.zeros(3), "q": np.array([0.0, 0.0, 0.0, 1.0]), "w": np.zeros(3),
         "wind": wind.copy(), "rotor_speeds": np.full(4, hover)}
    xs = [s["x"].copy()]
    for k in range(K):
        s = ref.step(s, {"cmd_motor_speeds": cmds[k]}, dt)
        s["wind"] = wind.copy()
        xs.append(s["x"].copy())
    cm = jnp.asarray(cmds)
    command = lambda t: jr.RotorCommand(u=cm[jnp.clip(jnp.floor(t / dt + 1e-9).astype(int), 0, K - 1)] ** 2)
    traj = jr.simulate_open_loop(veh.platform, command, jr.initial_state(veh.platform, rotor_speed=jnp.full(4, hover)),
                                 T, actuators=jr.Actuators(motor=veh.motor),
                                 integrator=jr.Integrator(rtol=1e-12, atol=1e-12, max_steps=100_000), save_dt=dt,
                                 jump_ts=tuple(dt * k for k in range(1, K)), aero=veh.aero, air=jnp.asarray(wind))
    xs = np.array(xs)
    assert np.abs(xs).max() > 0.5  # the flight goes somewhere
    gap = np.abs(np.asarray(traj.p) - xs).max()
    assert gap < 1e-8, gap
