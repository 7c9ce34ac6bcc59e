"""A noisy, gusty flight on the MuJoCo C plant with one compilation shared by flights that differ in array values.

(That every plant honours sensors, delay, wind and gusts, and agrees with the others on them, is the plant
contract: tests/integration/test_plants.py.)"""

import dataclasses

import jax
import numpy as np
import pytest

from jaxrotor.integrate import Integrator
from jaxrotor.physics import (
    ModelOptions,
    PhysicsSettings,
    build_model,
    fly_physics,
    paper_hexarotor_parts,
)
from jaxrotor.sensors import Sensors
from jaxrotor.wind import Wind
from jaxrotor.workflows import usecase

T1 = 1.0  # s: the climb of the use case, in the air (no floor)
NOISY = Sensors(position_std=0.02, velocity_std=0.05, attitude_std=0.01, rate_std=0.015, position_bias_std=0.005,
                delay=2)
GUSTY = Wind(mean=(2.0, -1.0, 0.0), gust_std=0.5, gust_time_constant=1.0, drag_linear=0.3, drag_quadratic=0.05)


@pytest.fixture(scope="module")
def setup():
    """The use case's first second at 500 Hz on the hexarotor with welded propellers and no floor.

    Welded propellers: the analytic layer has no propeller gyroscopic or spin-up torques, and with
    them welded the two layers fly the same rigid body (docs/physics.md: the welded physics flight
    reproduces the analytic one at the same control rate).
    """
    conf = usecase.paper_reproduction_spec(with_comparison=False).with_t1(T1)
    flight = dataclasses.replace(conf.flight, control_rate=500.0, integrator=Integrator(adaptive=False, dt=0.001),
                                 save_dt=0.01)
    settings = PhysicsSettings(parts=paper_hexarotor_parts(), options=ModelOptions(spin=False, floor=False))
    pm = build_model(conf.platform, settings.parts, settings.options)
    return conf, flight, settings, pm


@pytest.fixture(scope="module")
def noisy(setup):
    """The same flight with PX4-class sensor errors, a 4 ms delay, a 2.2 m/s mean wind, gusts and drag."""
    conf, flight, settings, pm = setup
    noisy = dataclasses.replace(flight, sensors=NOISY, wind=GUSTY, key=jax.random.PRNGKey(7))
    return noisy, fly_physics(conf.platform, conf.controller, noisy, settings, model=pm).trajectory


def test_shared_compilation_flies_the_same_flight_and_reuses_one_executable(setup, noisy):
    """``share_compilation``: the flight's arrays are passed at each call instead of compiled in; a second flight
    that differs only in array values (another key, other noise levels, another vehicle's c_f) reuses the executable."""
    from jaxrotor import host

    conf, _, settings, pm = setup
    noisy, closed = noisy
    shared = fly_physics(conf.platform, conf.controller, noisy, settings, model=pm, share_compilation=True).trajectory
    np.testing.assert_allclose(np.asarray(shared.p), np.asarray(closed.p), rtol=0, atol=1e-12)
    cached = len(host._CACHE)
    other = dataclasses.replace(noisy, key=jax.random.PRNGKey(8),
                                sensors=Sensors(position_std=0.03, velocity_std=0.05, attitude_std=0.01,
                                                rate_std=0.015, position_bias_std=0.005, delay=2))
    plat2 = dataclasses.replace(conf.platform, c_f=conf.platform.c_f * 1.05)
    pm2 = build_model(plat2, settings.parts, settings.options)
    tr2 = fly_physics(plat2, conf.controller, other, settings, model=pm2, share_compilation=True).trajectory
    assert len(host._CACHE) == cached  # no new executable
    assert not bool(tr2.diverged) and float(np.abs(np.asarray(tr2.p) - np.asarray(shared.p)).max()) > 1e-4
