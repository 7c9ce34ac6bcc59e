"""The engine plants' constructors as issue 19 spells them, and their engine options round-tripping."""

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
    assert plant.options == options and plant.parts == paper_hexarotor_parts() and not plant.controller_knows_engine
