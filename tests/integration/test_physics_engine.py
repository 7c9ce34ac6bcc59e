"""The physics-layer loop on the MuJoCo C engine: same flight computer, same Trajectory, contacts, divergence."""

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor.control import FullyActuatedSE3
from jaxrotor.design.platform import star_platform
from jaxrotor.dynamics import Actuators, FirstOrderServo
from jaxrotor import fly
from jaxrotor.flight import Flight
from jaxrotor.metrics import flight_metrics
from jaxrotor.physics import (
    ModelOptions,
    PhysicsSettings,
    build_model,
    fly_physics,
    paper_hexarotor_parts,
)
from jaxrotor.reference import Hover
from jaxrotor.workflows import usecase
from jaxrotor.workflows.compare import delta_omega


@pytest.fixture(scope="module")
def takeoff():
    """The first second of the use case (resting on the floor, then the climb) on both layers.

    The analytic flight has the structure of ``jaxrotor validate --t1 1.0`` (tests/integration/test_cli_validate.py), so
    the two share one compilation when they run in one process.
    """
    conf = usecase.paper_reproduction_spec(with_comparison=False).with_t1(1.0)
    settings = PhysicsSettings(parts=paper_hexarotor_parts())
    pm = build_model(conf.platform, settings.parts, settings.options)
    # the analytic reference flies the engine's mass and inertia (the controller sees those on both layers)
    analytic = fly(pm.physics_platform(), conf.controller, conf.flight)
    physics = fly_physics(conf.platform, conf.controller, conf.flight, settings, model=pm)
    return conf, pm, analytic, physics


def test_physics_flight_follows_the_analytic_one(takeoff):
    conf, _, ana, phys = takeoff
    tr = phys.trajectory
    assert not bool(tr.diverged)
    np.testing.assert_allclose(np.asarray(tr.t), np.asarray(ana.t), atol=1e-12)
    assert float(np.asarray(tr.p[-1, 2])) > 0.01  # it took off (minimum-jerk climb: 1.6 cm at 1 s)
    # same flight within a millimetre (ZOH at 1 kHz, propeller inertia and the floor are the differences)
    assert float(np.abs(np.asarray(tr.p) - np.asarray(ana.p)).max()) < 1e-3
    _, _, steady = delta_omega(ana, tr, conf.flight.reference.jump_times)
    assert steady < 2.0  # Fig. 8 band of the paper [rad/s]


def test_trajectory_feeds_the_metrics_unchanged(takeoff):
    _, pm, _, phys = takeoff
    m = flight_metrics(phys.trajectory, pm.physics_platform())
    assert np.all(np.isfinite(np.asarray(m.mae_position_xyz)))
    assert np.all(np.asarray(m.mae_position_xyz) < 1e-2)
    # the engine's rotor speeds are the propeller hinge speeds, close to the motor model's
    np.testing.assert_allclose(np.asarray(phys.trajectory.rotor_speed), np.asarray(phys.motor_speed), atol=1.0)


def test_floor_carries_the_vehicle_until_takeoff(takeoff):
    _, pm, _, phys = takeoff
    f = np.asarray(phys.contact_force)
    t = np.asarray(phys.trajectory.t)
    # the flight starts resting on the floor at hover thrust: the rotors, not the floor, carry the weight
    assert abs(f[0, 2]) < 0.01 * pm.mass * 9.81
    airborne = np.asarray(phys.trajectory.p[:, 2]) > 0.002
    assert airborne.any() and np.allclose(f[airborne], 0.0)
    assert np.all(f[:, 2] >= -1e-9)  # a floor only pushes
    assert t[airborne][0] < 1.0


def test_runaway_flight_is_reported_diverged():
    """Gains far beyond what a 20 ms zero-order hold can stabilise: the flight blows up and says so."""
    conf = usecase.paper_reproduction_spec(with_comparison=False)
    flight = dataclasses.replace(conf.flight, reference=Hover((0.0, 0.0, 1.0), 5.0), save_dt=0.02)
    ctrl = FullyActuatedSE3(K_p=4000.0, K_v=400.0, K_R=4000.0, K_w=400.0)
    settings = PhysicsSettings(parts=paper_hexarotor_parts(), options=ModelOptions(floor=False))
    res = fly_physics(conf.platform, ctrl, dataclasses.replace(flight, state0=None, control_rate=50.0), settings)
    tr = res.trajectory
    assert bool(tr.diverged)
    assert np.all(np.isfinite(np.asarray(tr.p)))  # held at the last good sample, never NaN


def test_bad_rates_are_refused():
    conf = usecase.paper_reproduction_spec(with_comparison=False)
    with pytest.raises(ValueError, match="timestep"):  # 1.5 ms is not a whole number of 1 ms engine steps
        fly_physics(conf.platform, conf.controller, dataclasses.replace(conf.flight, control_rate=1 / 0.0015),
                    PhysicsSettings(parts=paper_hexarotor_parts()))
    flight = dataclasses.replace(conf.flight, save_dt=0.0105)
    with pytest.raises(ValueError, match="save_dt"):
        fly_physics(conf.platform, conf.controller, flight, PhysicsSettings(parts=paper_hexarotor_parts()))


def test_tilting_platform_flies_its_servo_command():
    """A cant-tilting hexarotor steps alpha_0 from 0.3 to 0.4 rad in hover: the hinges follow the servo model
    (lag and rate limit), the vehicle holds its position."""
    plat = star_platform(6, 0.385, mass=3.5, c_f=3.8e-5, c_tau=1.2e-6, alpha=0.3, beta=0.1,
                         inertia=(0.08, 0.08, 0.16), tilting=("alpha",), kappa=[-1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
    flight = Flight(reference=Hover((0.0, 0.0, 1.0), 1.0), actuators=Actuators(servo=FirstOrderServo(0.05, 2.0)),
                    tilt_command=lambda t: (jnp.where(t > 0.2, 0.4, 0.3), None), save_dt=0.01)
    settings = PhysicsSettings(parts=paper_hexarotor_parts(), options=ModelOptions(floor=False))
    res = fly_physics(plat, FullyActuatedSE3(), flight, settings)
    tr = res.trajectory
    alpha = np.asarray(tr.alpha)
    assert not bool(tr.diverged)
    assert alpha[0] == pytest.approx(0.3) and alpha[-1] == pytest.approx(0.4, abs=1e-6)
    assert np.all(np.diff(alpha) >= -1e-12)  # the servo moves one way
    assert np.max(np.diff(alpha)) <= 2.0 * 0.01 + 1e-9  # rate limit 2 rad/s over a 10 ms sample
    assert float(np.abs(np.asarray(tr.p) - np.array([0.0, 0.0, 1.0])).max()) < 1e-3
