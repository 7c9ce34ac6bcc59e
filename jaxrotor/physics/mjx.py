"""The physics layer under MJX as a pure function of the controller and the MJX model.

:func:`make_mjx_flight` returns ``flight_fn(controller, mjx_model) -> Trajectory``: the flight on
:class:`~jaxrotor.physics.plants.MJXPlant` through the one loop (:func:`jaxrotor.fly`), which can be
``jax.jit``-compiled, ``jax.vmap``-ed over controllers or MJX models (``body_mass``,
``actuator_gear``, ...) and differentiated (``jax.grad``) with respect to any array leaf of both.
MuJoCo C (:class:`~jaxrotor.physics.plants.MuJoCoPlant`) is its numerical reference; in float64
the two agree to round-off (``tests/integration/test_plants.py``).
"""

from __future__ import annotations

import dataclasses

from mujoco import mjx

from ..control import AbstractController
from ..design.platform import Platform
from ..flight import Flight
from ..loop import fly
from ..trajectory import Trajectory
from .engine import PhysicsSettings
from .mjcf import PhysicsModel
from .plants import MJXPlant

__all__ = ["make_mjx_flight", "put_model"]


def put_model(pm: PhysicsModel) -> mjx.Model:
    """The MJX copy of a generated model (``mujoco.mjx.put_model``)."""
    return mjx.put_model(pm.model)


def make_mjx_flight(pm: PhysicsModel, platform: Platform, flight: Flight, settings: PhysicsSettings = PhysicsSettings(),
                    n_ticks: int | None = None):
    """Build ``flight_fn(controller, mjx_model) -> Trajectory`` for ``flight`` on the model ``pm``.

    Args:
        pm: the generated model.
        platform: the platform it was built from.
        flight: the flight (reference, allocator, actuators, control rate, sensors, wind, ...).
        settings: whether the controller knows the engine's mass and inertia.
        n_ticks: fly this many control periods from ``flight.t0``, saving every tick (``None``: the
            flight's own horizon and save period).

    Returns:
        A pure function of ``(controller, mjx_model)``; wrap it in ``jax.jit``, ``jax.vmap``, ``jax.grad``.
    """
    plant = MJXPlant(controller_knows_engine=settings.controller_knows_engine).with_model(pm)
    if n_ticks is not None:
        dt = 1.0 / plant.control_rate(flight)
        flight = dataclasses.replace(flight, t1=float(flight.t0) + n_ticks * dt, save_dt=dt)

    def flight_fn(controller: AbstractController, mjx_model: mjx.Model) -> Trajectory:
        return fly(platform, controller, flight, dataclasses.replace(plant, mjx_model=mjx_model))

    return flight_fn
