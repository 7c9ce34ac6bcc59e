"""Sensors and wind on the physics layer: the same draws and drag as the analytic discrete-rate loop."""

import dataclasses

import jax
import numpy as np
import pytest
from jaxrotor.discrete import fly_discrete

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
    plain = fly_physics(conf.platform, conf.controller, flight, settings, model=pm).trajectory
    return conf, flight, settings, pm, plain


@pytest.fixture(scope="module")
def noisy(setup):
    """The same flight with PX4-class sensor errors, a 4 ms delay, a 2.2 m/s mean wind, gusts and drag."""
    conf, flight, settings, pm, _ = setup
    noisy = dataclasses.replace(flight, sensors=NOISY, wind=GUSTY, key=jax.random.PRNGKey(7))
    return noisy, fly_physics(conf.platform, conf.controller, noisy, settings, model=pm).trajectory


def test_zero_noise_and_still_air_is_the_plain_physics_flight(setup):
    conf, flight, settings, pm, plain = setup
    quiet = dataclasses.replace(flight, sensors=Sensors(), wind=Wind(), key=jax.random.PRNGKey(3))
    tr = fly_physics(conf.platform, conf.controller, quiet, settings, model=pm).trajectory
    assert not bool(tr.diverged) and not bool(plain.diverged)
    for name in ("p", "v", "R", "omega", "u"):
        np.testing.assert_allclose(np.asarray(getattr(tr, name)), np.asarray(getattr(plain, name)), rtol=0,
                                   atol=1e-12, err_msg=name)


def test_noisy_gusty_physics_flight_follows_the_analytic_discrete_loop(setup, noisy):
    conf, _, _, pm, plain = setup
    noisy, phys = noisy
    ana = fly_discrete(pm.physics_platform(), conf.controller, noisy)
    assert not bool(phys.diverged) and not bool(ana.diverged)
    np.testing.assert_allclose(np.asarray(phys.t), np.asarray(ana.t), atol=1e-12)
    # noise, delay, bias and a 2.2 m/s wind move the flight by centimetres ...
    moved = float(np.abs(np.asarray(phys.p) - np.asarray(plain.p)).max())
    assert moved > 5e-3
    # ... and the two layers agree on it: same noise draws, same gusts, same drag
    gap_p = float(np.abs(np.asarray(phys.p) - np.asarray(ana.p)).max())
    gap_v = float(np.abs(np.asarray(phys.v) - np.asarray(ana.v)).max())
    gap_u = float(np.abs(np.asarray(phys.u_cmd) - np.asarray(ana.u_cmd)).max() / np.abs(np.asarray(ana.u_cmd)).max())
    # measured 1.2e-7 m, 1.5e-6 m/s, 1.9e-6: the engine holds the drag over each 1 ms step (RK4 stages),
    # the analytic loop evaluates it in its vector field (4.5e-11 m with the noise alone)
    assert gap_p < 1e-6 and gap_v < 1e-5 and gap_u < 1e-5, (gap_p, gap_v, gap_u, moved)


def test_shared_compilation_flies_the_same_flight_and_reuses_one_executable(setup, noisy):
    """``share_compilation``: the flight's arrays are passed at each call instead of compiled in; a second flight
    that differs only in array values (another key, other noise levels, another vehicle's c_f) reuses the executable."""
    from jaxrotor.physics import engine

    conf, _, settings, pm, _ = setup
    noisy, closed = noisy
    shared = fly_physics(conf.platform, conf.controller, noisy, settings, model=pm, share_compilation=True).trajectory
    np.testing.assert_allclose(np.asarray(shared.p), np.asarray(closed.p), rtol=0, atol=1e-12)
    cached = len(engine._STEP_CACHE)
    other = dataclasses.replace(noisy, key=jax.random.PRNGKey(8),
                                sensors=Sensors(position_std=0.03, velocity_std=0.05, attitude_std=0.01,
                                                rate_std=0.015, position_bias_std=0.005, delay=2))
    plat2 = dataclasses.replace(conf.platform, c_f=conf.platform.c_f * 1.05)
    pm2 = build_model(plat2, settings.parts, settings.options)
    tr2 = fly_physics(plat2, conf.controller, other, settings, model=pm2, share_compilation=True).trajectory
    assert len(engine._STEP_CACHE) == cached  # no new executable
    assert not bool(tr2.diverged) and float(np.abs(np.asarray(tr2.p) - np.asarray(shared.p)).max()) > 1e-4
