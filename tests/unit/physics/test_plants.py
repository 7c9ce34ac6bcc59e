"""The engine plants' constructors as issue 19 spells them, and their engine options round-tripping."""

import equinox as eqx
import pytest

import jaxrotor as jr
from jaxrotor.physics import MJXPlant, MuJoCoPlant, PhysicsSettings, paper_hexarotor_parts
from jaxrotor.physics.mjcf import ModelOptions


@pytest.mark.parametrize("cls", [MJXPlant, MuJoCoPlant])
def test_constructor_contract_and_options(cls):
    plant = cls(parts=None, spin_propellers=True, timestep=1e-3)
    assert plant.parts is None and plant.options == ModelOptions(timestep=1e-3, spin=True)
    assert cls().options == plant.options  # those are the defaults
    assert isinstance(plant, jr.AbstractPlant) and plant.host == (cls is MuJoCoPlant)
    custom = ModelOptions(timestep=5e-4, spin=False, floor=False, integrator="implicitfast", spin_time_constant=0.004,
                          servo_bandwidth=25.0)
    assert cls().with_options(custom).options == custom  # every engine option reaches the model it builds
    with pytest.raises(ValueError, match="`timestep` = 0.0"):
        cls(timestep=0.0)


def test_physics_settings_build_the_plant_of_their_options():
    options = ModelOptions(spin=False, spin_time_constant=0.003, servo_bandwidth=30.0)
    plant = PhysicsSettings(parts=paper_hexarotor_parts(), options=options, controller_knows_engine=False).plant()
    assert plant.options == options and not plant.controller_knows_engine
    assert bool(eqx.tree_equal(plant.parts, paper_hexarotor_parts()))
    assert PhysicsSettings().parts is None  # the platform's own parts (physics.parts.default_parts)


def test_fly_takes_the_plant_by_keyword_with_the_analytic_plant_by_default():
    """``jaxrotor.fly(platform, controller, flight, plant=AnalyticPlant())`` as issue 19 writes it."""
    import inspect

    import numpy as np

    from jaxrotor.reference import Hover

    assert isinstance(inspect.signature(jr.fly).parameters["plant"].default, jr.AnalyticPlant)
    quad, ctrl = jr.presets.cs_4r(), jr.UnderactuatedSE3()
    flight = jr.Flight(reference=Hover([0.0, 0.0, 1.0], 0.2), control_rate=50.0,
                       integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.02)
    a = jr.fly(quad, ctrl, flight, plant=jr.AnalyticPlant())
    b = jr.fly(quad, ctrl, flight)
    np.testing.assert_array_equal(np.asarray(a.p), np.asarray(b.p))
    assert a.t.shape == (11,) and not bool(a.diverged)
