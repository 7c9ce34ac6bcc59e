"""The plant interface: what every layer (analytic, MJX, MuJoCo C) implements, and the analytic plant.

A plant is the vehicle's physics between two control instants. The one loop
(:func:`jaxrotor.loop.fly`) drives any :class:`AbstractPlant`::

    plant_state = plant.init(platform, flight, key)
    every tick k:   reading = plant.read(plant_state)          # true state at t_k (+ what the layer measures)
                    tick_state, plant_input, record = tick(computer, tick_state, reading.state, t_k, h, ...)
                    plant_state = plant.step(plant_state, plant_input, h)   # command held over [t_k, t_k + h)

:class:`AnalyticPlant` steps eqs. (1)-(2), (11)-(12) with the flight's motor and servo models
(:func:`jaxrotor.dynamics.vehicle_derivative`) and the external force of
:func:`jaxrotor.tick.external_force` (wind drag at the plant's own velocity plus the held
disturbance) and the flight's aerodynamics (:func:`jaxrotor.aero.body_wrench`, in the held air) by
fixed steps of the flight's diffrax solver; with ``flight.control_rate = None``
it flies the paper's continuous-time loop instead (the controller inside the ODE,
:meth:`AnalyticPlant.fly_continuous`). The physics layer's plants are
:class:`jaxrotor.physics.MJXPlant` and :class:`jaxrotor.physics.MuJoCoPlant`.

Adding a physical effect means adding it to each plant's ``step`` (or refusing it in
:meth:`AbstractPlant.check` by name); adding a plant means implementing ``init``/``step``/``read``
(``docs/architecture.md``).
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jax import Array

from .aero import Aerodynamics
from .continuous import fly_continuous
from .control import AbstractController
from .design.platform import Platform
from .electrical import ElectricOutputs
from .dynamics import Actuators, FaultState, RotorCommand, VehicleState, check_rotor_inertia, vehicle_derivative
from .faults import Faults
from .flight import Flight
from .integrate import Integrator, fixed_steps
from .tick import PlantInput, external_force, whole_steps
from .wind import Wind

__all__ = ["AbstractHostPlant", "AbstractPlant", "AnalyticPlant", "AnalyticPlantState", "PlantOutputs",
           "PlantReading"]


class PlantOutputs(eqx.Module):
    """What the plant applied at the start of its last step (the command's first instant).

    Attributes:
        accel: ``(3,)`` linear acceleration, world frame [m/s^2].
        angular_accel: ``(3,)`` angular acceleration, body frame [rad/s^2].
        u: ``(n,)`` applied rotor inputs ``omega_i^2`` [rad^2/s^2].
        rotor_speed: ``(n,)`` rotor speeds [rad/s] (the propellers' own on the physics layer).
        alpha, beta: applied tilt angles [rad] (shapes of ``platform.alpha`` / ``beta``).
        contact_force: ``(3,)`` force of the floor on the vehicle, world frame [N] (zero without a floor).
        motor_speed: ``(n,)`` rotor speeds of the motor model [rad/s] (``rotor_speed`` on the analytic layer).
        electrical: the :class:`~jaxrotor.electrical.ElectricOutputs` (motor and battery currents and voltages)
            when the motor draws current from the battery, else ``None``.
    """

    accel: Array
    angular_accel: Array
    u: Array
    rotor_speed: Array
    alpha: Array
    beta: Array
    contact_force: Array
    motor_speed: Array
    electrical: ElectricOutputs | None = None


class PlantReading(eqx.Module):
    """What :meth:`AbstractPlant.read` returns.

    Attributes:
        state: the true :class:`~jaxrotor.dynamics.VehicleState` now (``rotor_speed``: the motor model's
            speeds, what the flight computer knows; ``alpha``/``beta``: the tilt angles the rotors have).
        applied: the :class:`PlantOutputs` of the last step (at its start).
        ok: ``()`` bool: the plant's own numerics are healthy (solver result, engine warnings).
    """

    state: VehicleState
    applied: PlantOutputs
    ok: Array


class AbstractPlant(eqx.Module):
    """The physics between two control instants: ``init``, ``step``, ``read`` (module docstring).

    Class attributes:
        host: ``True`` for a plant stepped on the host (not jittable: the MuJoCo C engine); the loop
            then calls the compiled tick from Python once per control period.
        name: a short name for messages and reports.
    """

    host: ClassVar[bool] = False
    name: ClassVar[str] = "plant"

    @abc.abstractmethod
    def init(self, platform: Platform, flight: Flight, key: Array | None = None):
        """The plant state at ``flight.t0`` from ``flight.initial_state(platform)`` (a pytree; host object for a
        host plant). ``key`` draws anything random the plant itself models (none of the shipped plants)."""

    @abc.abstractmethod
    def step(self, plant_state, plant_input: PlantInput, dt):
        """The plant state after ``dt`` [s] under ``plant_input`` held (``dt = 0``: only what was applied at the
        start is recorded, nothing advances)."""

    @abc.abstractmethod
    def read(self, plant_state) -> PlantReading:
        """The :class:`PlantReading` of ``plant_state``."""

    def check(self, platform: Platform, controller: AbstractController, flight: Flight) -> None:
        """Refuse, by name and before compiling, a ``Flight`` field this plant does not model (default: none)."""

    def prepare(self, platform: Platform) -> AbstractPlant:
        """This plant ready to fly ``platform`` (host-side work on the concrete platform, e.g. building an
        engine model, done once before compiling; default: itself)."""
        return self

    def steps_per_tick(self, plant_state) -> int:
        """Plant steps per control interval (for ``Trajectory.num_steps``; default 1)."""
        return 1

    def compile_shared(self) -> bool:
        """A host plant: compile the tick once for flights that differ only in array values (default ``False``)."""
        return False

    def control_rate(self, flight: Flight) -> float | None:
        """The rate [Hz] the flight computer ticks at on this plant: ``flight.control_rate``, or this plant's
        default when it is ``None`` (``None``: the continuous-time loop)."""
        return flight.control_rate

    def controller_platform(self, platform: Platform, plant_state) -> Platform:
        """The platform the flight computer uses (default ``platform`` itself)."""
        return platform

    def fly_continuous(self, platform: Platform, controller: AbstractController, flight: Flight):
        """The continuous-time flight (controller inside the ODE); only the analytic plant has one."""
        raise ValueError(f"fly: the {self.name} plant has no continuous-time loop. Fix: set Flight(control_rate=...).")


class AbstractHostPlant(AbstractPlant):
    """A plant stepped on the host (not jittable), split so that the loop calls JAX once per tick.

    ``step(ps, plant_input, dt) = advance(ps, actuate(args, actuator_vector(ps), plant_input), dt)``:
    :meth:`actuation` gives the pure JAX part (what the actuator models make of the held input: the
    engine's controls), which the host loop compiles together with the tick; :meth:`advance` is the
    host part (the engine's own steps; it may update the engine's data in place, so read a state
    before advancing it). The loop's per-tick reading is :meth:`state_vector` (a flat NumPy vector of
    the engine's raw state) turned into :meth:`read`'s state inside the compiled tick by
    :meth:`state_from_vector` (pure JAX).
    """

    host: ClassVar[bool] = True

    @abc.abstractmethod
    def actuation(self, plant_state):
        """``(args, actuate)``: ``actuate(args, actuator_vector, plant_input) -> drive`` (pure JAX, ``drive``
        a flat vector; jit-able, and the same function at every call for one flight) and its array arguments
        ``args`` (a pytree), fixed for the flight."""

    @abc.abstractmethod
    def actuator_vector(self, plant_state):
        """The actuator models' states now (a flat NumPy vector, the ``actuate`` input)."""

    @abc.abstractmethod
    def advance(self, plant_state, drive, dt):
        """The plant state after ``dt`` [s] under ``drive`` (a NumPy vector from ``actuate``)."""

    @abc.abstractmethod
    def state_vector(self, plant_state):
        """The raw state now (a flat NumPy vector)."""

    @abc.abstractmethod
    def state_from_vector(self, plant_state, x):
        """The :class:`~jaxrotor.dynamics.VehicleState` of a :meth:`state_vector` ``x`` (pure JAX; equal to
        ``read(plant_state).state`` for the plant state ``x`` was taken from)."""

    def step(self, plant_state, plant_input, dt):
        args, actuate = self.actuation(plant_state)  # a host plant returns the same (compiled) function each time
        drive = actuate(args, self.actuator_vector(plant_state), plant_input)
        return self.advance(plant_state, np.asarray(drive), dt)


class AnalyticPlantState(eqx.Module):
    """The analytic plant's state (a pytree).

    Attributes:
        vehicle: the :class:`~jaxrotor.dynamics.VehicleState`.
        applied: the :class:`PlantOutputs` at the start of the last step.
        platform: the vehicle (geometry, mass, inertia, rotor coefficients).
        actuators: the flight's motor and servo models.
        wind: the flight's wind (its drag coefficients), or ``None``.
        integrator: the fixed-step solver settings.
        substeps: solver steps per control interval (static).
        faults: the flight's :class:`~jaxrotor.faults.Faults`, or ``None``.
        aero: the flight's :class:`~jaxrotor.aero.Aerodynamics`, or ``None``.
    """

    vehicle: VehicleState
    applied: PlantOutputs
    platform: Platform
    actuators: Actuators
    wind: Wind | None
    integrator: Integrator
    substeps: int = eqx.field(static=True)
    faults: Faults | None = None
    aero: Aerodynamics | None = None


def _analytic_outputs(platform, actuators, wind, state: VehicleState, plant_input: PlantInput,
                      faults=None, aero=None) -> PlantOutputs:
    f_ext = external_force(wind, state.v, plant_input.air, plant_input.force)
    fault = FaultState.at(faults, platform.n_rotors, plant_input.t)
    _, out = vehicle_derivative(platform, actuators, state, plant_input.command, f_ext, fault, aero, plant_input.air)
    return PlantOutputs(accel=out.accel, angular_accel=out.angular_accel, u=out.u, rotor_speed=out.rotor_speed,
                        alpha=out.alpha, beta=out.beta, contact_force=jnp.zeros(3, state.p.dtype),
                        motor_speed=out.rotor_speed, electrical=out.electrical)


class AnalyticPlant(AbstractPlant):
    """The Newton-Euler model (eqs. 1-2, 11-12) with the flight's actuator models, in JAX.

    Between two ticks it takes ``h / flight.integrator.dt`` fixed steps of ``flight.integrator.solver``
    (:func:`jaxrotor.integrate.fixed_steps`: an explicit Runge-Kutta method from its tableau,
    ``integrator.unroll`` and ``integrator.checkpoint`` honoured) under the held
    command, the held disturbance and the wind drag at its own velocity
    (:func:`jaxrotor.tick.external_force`). With ``flight.control_rate = None`` (and no sensors or
    wind) :func:`jaxrotor.fly` flies the continuous-time loop (:meth:`fly_continuous`), which
    honours every :class:`~jaxrotor.integrate.Integrator` option.

    A discrete-rate flight refuses, by name, an adaptive integrator (a control interval is a fixed
    number of steps) and ``Integrator(scan=False)`` (the ``diffeqsolve``/``StepTo`` path of a
    whole solve); ``rtol``, ``atol`` and ``max_steps`` concern adaptive solves only.
    """

    name: ClassVar[str] = "analytic"

    def check(self, platform, controller, flight):
        flight.actuators.motor.check_platform(platform)
        check_rotor_inertia(platform, flight.actuators)
        if flight.aero is not None:
            flight.aero.check(platform)
        rate = self.control_rate(flight)
        if rate is None:
            return
        integ = flight.integrator
        if integ.adaptive:
            raise ValueError(f"Flight parameter `control_rate` = {rate!r} needs a fixed-step plant integrator, but "
                             "`integrator.adaptive` = True. Fix: pass integrator=Integrator(adaptive=False, dt=h / n) "
                             f"with the control period h = {1.0 / rate:g} s.")
        if not integ.scan:
            raise ValueError("Flight parameter `integrator.scan` = False selects diffeqsolve with StepTo for a whole "
                             "solve; a discrete-rate flight steps the solver between ticks. Fix: pass "
                             "Integrator(adaptive=False, scan=True, ...), or control_rate=None.")
        whole_steps(1.0 / rate, integ.dt, "Integrator", "dt")

    def init(self, platform, flight, key=None) -> AnalyticPlantState:
        rate = self.control_rate(flight)
        substeps = whole_steps(1.0 / rate, flight.integrator.dt, "Integrator", "dt") if rate is not None else 1
        state = flight.initial_state(platform)
        dtype = state.p.dtype
        hold = PlantInput(command=RotorCommand(u=state.rotor_speed**2), air=jnp.zeros(3, dtype),
                          force=jnp.zeros(3, dtype), t=jnp.asarray(flight.t0, dtype))
        applied = _analytic_outputs(platform, flight.actuators, flight.wind, state, hold, flight.faults, flight.aero)
        return AnalyticPlantState(vehicle=state, applied=applied, platform=platform, actuators=flight.actuators,
                                  wind=flight.wind, integrator=flight.integrator, substeps=substeps,
                                  faults=flight.faults, aero=flight.aero)

    def step(self, plant_state: AnalyticPlantState, plant_input: PlantInput, dt) -> AnalyticPlantState:
        ps = plant_state
        platform, actuators, wind = ps.platform, ps.actuators, ps.wind
        applied = _analytic_outputs(platform, actuators, wind, ps.vehicle, plant_input, ps.faults, ps.aero)

        def field(t_, s, args):
            f_ext = external_force(wind, s.v, plant_input.air, plant_input.force)
            fault = FaultState.at(ps.faults, platform.n_rotors, t_)
            return vehicle_derivative(platform, actuators, s, plant_input.command, f_ext, fault, ps.aero,
                                      plant_input.air)[0]

        # dt = 0 (the last tick): steps of length 0 leave the state as it is
        vehicle = fixed_steps(field, ps.vehicle, plant_input.t, dt / ps.substeps, ps.substeps,
                              integrator=ps.integrator)
        return eqx.tree_at(lambda s: (s.vehicle, s.applied), ps, (vehicle, applied))

    def steps_per_tick(self, plant_state: AnalyticPlantState) -> int:
        return plant_state.substeps

    def read(self, plant_state: AnalyticPlantState) -> PlantReading:
        return PlantReading(state=plant_state.vehicle, applied=plant_state.applied, ok=jnp.asarray(True))

    def fly_continuous(self, platform, controller, flight):
        return fly_continuous(platform, controller, flight)
