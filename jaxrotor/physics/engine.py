"""A physics-layer flight on the MuJoCo C engine with its timings: :func:`fly_physics`.

:func:`fly_physics` is :func:`jaxrotor.fly` on :class:`~jaxrotor.physics.plants.MuJoCoPlant`
(the one loop, the one tick: ``docs/architecture.md``) for the workflows that also want the
engine's contact force, the motor model's speeds and the wall-clock times in one
:class:`PhysicsResult`. The control rate is ``flight.control_rate`` (one tick per engine step
when it is ``None``).
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax

from ..control import AbstractController
from ..design.platform import Platform
from ..flight import Flight
from ..loop import fly_with_timings
from ..trajectory import Trajectory
from .mjcf import ModelOptions, PhysicsModel
from .parts import Parts, default_parts
from .plants import MuJoCoPlant, contact_force

__all__ = ["PhysicsResult", "PhysicsSettings", "contact_force", "fly_physics"]


@dataclasses.dataclass(frozen=True)
class PhysicsSettings:
    """How the physics layer is built: the parts and the engine options.

    Attributes:
        parts: the vehicle's parts (:class:`~jaxrotor.design.parts.Parts`), winning over the platform's;
            ``None`` (default): :func:`~jaxrotor.physics.parts.default_parts` of the platform flown.
        options: engine options (:class:`~jaxrotor.physics.mjcf.ModelOptions`; ``timestep`` [s]).
        controller_knows_engine: the controller (and allocator) use the engine's mass and
            inertia (``True``, default) or the platform's as given (``False``).
    """

    parts: Parts | None = None
    options: ModelOptions = dataclasses.field(default_factory=ModelOptions)
    controller_knows_engine: bool = True

    def parts_of(self, platform: Platform) -> Parts:
        """The parts ``platform`` is built from under these settings: ``parts`` when given, else
        :func:`~jaxrotor.physics.parts.default_parts` (its own, the paper's for its presets, else fitted)."""
        return self.parts if self.parts is not None else default_parts(platform)

    def plant(self, model: PhysicsModel | None = None, share_compilation: bool = False) -> MuJoCoPlant:
        """The :class:`~jaxrotor.physics.plants.MuJoCoPlant` of these settings (flying ``model`` when given)."""
        plant = MuJoCoPlant(parts=self.parts, controller_knows_engine=self.controller_knows_engine,
                            share_compilation=share_compilation).with_options(self.options)
        return plant if model is None else plant.with_model(model)


class PhysicsResult(eqx.Module):
    """A physics-layer flight.

    Attributes:
        trajectory: the :class:`~jaxrotor.trajectory.Trajectory` (``rotor_speed`` is the engine's
            propeller hinge speed ``|qvel|``, [rad/s]; ``u`` the applied thrust inputs).
        contact_force: ``(T, 3)`` total force of the floor on the vehicle, world frame [N].
        motor_speed: ``(T, n)`` the motor's rotor speeds [rad/s]: the motor model's driving the propellers, or the
            propellers' own when they are the motor (a first-order motor, spinning propellers).
        wall_time_s: wall-clock time of the loop [s] (excluding model building and compilation).
        compile_time_s: model building and compilation time [s].
        control_time_s: the part of ``wall_time_s`` spent in the compiled tick [s]
            (the rest is ``mj_step`` and the Python loop).
    """

    trajectory: Trajectory
    contact_force: jax.Array
    motor_speed: jax.Array
    wall_time_s: float = eqx.field(static=True)
    compile_time_s: float = eqx.field(static=True)
    control_time_s: float = eqx.field(static=True, default=float("nan"))


def fly_physics(platform: Platform, controller: AbstractController, flight: Flight,
                settings: PhysicsSettings = PhysicsSettings(), model: PhysicsModel | None = None, *,
                share_compilation: bool = False) -> PhysicsResult:
    """Fly ``flight`` on the MuJoCo C engine: ``fly(platform, controller, flight, settings.plant(model))``.

    Args:
        platform: concrete platform (geometry, rotor coefficients).
        controller: any :class:`~jaxrotor.control.AbstractController`.
        flight: the flight (``integrator`` is not used: the engine steps at ``settings.options.timestep``).
        settings: parts, engine options.
        model: a model already built by :func:`~jaxrotor.physics.mjcf.build_model` for this
            platform and settings (built here when ``None``).
        share_compilation: compile the tick once for flights that differ only in array values
            (see :class:`~jaxrotor.physics.plants.MuJoCoPlant`).

    Returns:
        A :class:`PhysicsResult`. A flight whose state becomes non-finite, runs beyond
        ``flight.limits`` or makes the engine reset (bad accelerations) stops there, holds its
        last sample and is reported with ``trajectory.diverged = True``.
    """
    traj, timings = fly_with_timings(platform, controller, flight, settings.plant(model, share_compilation))
    return PhysicsResult(trajectory=traj, contact_force=traj.contact_force, motor_speed=traj.motor_speed,
                         wall_time_s=timings.wall_s, compile_time_s=timings.setup_s, control_time_s=timings.tick_s)
