"""The tick: what the flight computer does at each control instant, written once for every plant.

At tick ``k`` (time ``t_k = t0 + k h``, ``h = 1 / control_rate``) the flight computer

1. pushes the plant's reading (the true state at ``t_k``) into the sensor delay buffer and
   takes the reading ``delay`` ticks old (:class:`~jaxrotor.sensors.Sensors`, rotor speeds
   and tilt angles pass through current: they are the flight computer's own estimates);
2. applies the tick's sensor errors (noise plus bias, :func:`jaxrotor.sensors.measure`);
3. runs :func:`jaxrotor.flight.flight_computer` (reference, controller, tilt decision,
   allocator) on the measured state;
4. holds the command until the next tick (zero-order hold): the :class:`PlantInput` it
   returns also holds the air velocity ``w_mean + g_k`` (:mod:`jaxrotor.wind`) and the
   disturbance force ``f_d(t_k)`` over the interval;
5. advances the controller's integral states by forward Euler, ``x_{k+1} = x_k + h_k dx/dt``.

:func:`tick` is a pure JAX function: the analytic and MJX plants run it inside one
``lax.scan`` (:mod:`jaxrotor.loop`), the MuJoCo C plant calls its compiled form from the
host. :func:`external_force` is the one place the held disturbance and the wind drag are
summed; every plant calls it with its own velocity at each of its steps.

:func:`control_schedule` checks a discrete-rate flight's timing; :func:`flight_noise` draws a
flight's sensor errors and gusts from ``flight.key`` (the same draws for every plant).
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array

from .allocators import Allocation, AllocationData
from .control import AbstractController
from .design.platform import Platform
from .dynamics import RotorCommand, VehicleState
from .flight import Flight, flight_computer
from .numerics import safe_norm
from .reference import RefSample
from .sensors import NORMALS_PER_FLIGHT, NORMALS_PER_TICK, measure
from .trajectory import Trajectory, assemble_trajectory
from .wind import Wind, drag_force

__all__ = ["ControlSchedule", "FlightComputer", "PlantInput", "TickRecord", "TickState", "control_schedule",
           "external_force", "flight_noise", "flight_trajectory", "hold", "plant_key", "sense", "tick"]

_TOL = 1e-9  # relative tolerance of the "is a whole number of steps" checks


def _whole(x: float) -> int | None:
    n = round(x)
    return n if n >= 1 and abs(x - n) <= _TOL * max(1.0, abs(x)) else None


class ControlSchedule(eqx.Module):
    """The static timing of a discrete-rate flight.

    Attributes:
        period: control period ``h = 1 / control_rate`` [s].
        ticks: number of control intervals ``K = (t1 - t0) / h``.
        save_every: ticks per output sample ``save_dt / h``.
    """

    period: float = eqx.field(static=True)
    ticks: int = eqx.field(static=True)
    save_every: int = eqx.field(static=True)


def control_schedule(flight: Flight, rate: float | None = None) -> ControlSchedule:
    """Check the timing of a discrete-rate ``flight`` and return its :class:`ControlSchedule`.

    Args:
        flight: the flight.
        rate: the control rate [Hz]; default ``flight.control_rate``.

    Raises:
        ValueError: naming the parameter, its value and the fix, if there is no control rate,
            or the horizon / output period is not a whole number of ticks.
    """
    rate = flight.control_rate if rate is None else rate
    if rate is None:
        raise ValueError("fly: the flight has sensors or wind but `control_rate` = None: they are modelled by the "
                         "discrete-rate loop only. Fix: pass Flight(control_rate=500.0, integrator=Integrator("
                         "adaptive=False, dt=0.002), ...).")
    if not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
        raise ValueError(f"Flight parameter `control_rate` = {rate!r} is invalid: it must be a finite rate > 0 Hz. "
                         "Fix: pass e.g. control_rate=500.0.")
    h = 1.0 / rate
    span = flight.end_time - flight.t0
    ticks = _whole(span * rate)
    if ticks is None:
        raise ValueError(f"Flight horizon t1 - t0 = {span!r} s is not a whole number of control periods "
                         f"({h:g} s at `control_rate` = {rate!r} Hz). Fix: choose t1 so that (t1 - t0) * rate is an "
                         "integer.")
    every = _whole(flight.save_dt * rate)
    if every is None or ticks % every:
        raise ValueError(f"Flight parameter `save_dt` = {flight.save_dt!r} s is not a whole number of control "
                         f"periods ({h:g} s) dividing the horizon {span:g} s. Fix: pass save_dt = m * {h:g} s.")
    return ControlSchedule(period=h, ticks=ticks, save_every=every)


def whole_steps(period: float, dt: float, owner: str, name: str) -> int:
    """``period / dt`` as a whole number of steps, or a ValueError naming ``owner``'s parameter ``name``."""
    n = _whole(period / dt)
    if n is None:
        raise ValueError(f"{owner} parameter `{name}` = {dt!r} s does not divide the control period {period:g} s. "
                         f"Fix: choose {name} = h / n, e.g. {period:g} or {period / 2:g}.")
    return n


def flight_noise(flight: Flight, n_ticks: int, period: float, dtype):
    """``(sensor errors (n_ticks, 4, 3), gusts (n_ticks, 3))`` of one flight (zeros where there is no model).

    One draw ``z = jax.random.normal(flight.key, (12 n + 12 + 3 n,))`` (``n = n_ticks``; the
    sensor part only with sensors, the gust part only with wind): the first ``12 n + 12``
    go to :meth:`~jaxrotor.sensors.Sensors.scale` (white noise, then the bias; the errors are
    their sum), the last ``3 n``, reshaped ``(n, 3)``, to :meth:`~jaxrotor.wind.Wind.gusts_from`.
    """
    needs_key = flight.sensors is not None or flight.wind is not None
    if needs_key and flight.key is None:
        raise ValueError("fly: the flight has sensors or wind but `key` = None. Fix: pass Flight(key=jax.random."
                         "PRNGKey(seed), ...) (a batch of keys draws independent noise).")
    errors, gusts = jnp.zeros((n_ticks, 4, 3), dtype), jnp.zeros((n_ticks, 3), dtype)
    if not needs_key:
        return errors, gusts
    n_s = NORMALS_PER_TICK * n_ticks + NORMALS_PER_FLIGHT if flight.sensors is not None else 0
    n_w = 3 * n_ticks if flight.wind is not None else 0
    z = jax.random.normal(flight.key, (n_s + n_w,), dtype=dtype)  # one draw: compiles once, not per model
    if flight.sensors is not None:
        draw = flight.sensors.scale(z[:n_s])
        errors = draw.white + draw.bias[None]
    if flight.wind is not None:
        gusts = flight.wind.gusts_from(z[n_s:].reshape(n_ticks, 3), period)
    return errors, gusts


class PlantInput(eqx.Module):
    """What the flight computer hands the plant for one control interval (held over it).

    Attributes:
        command: the :class:`~jaxrotor.dynamics.RotorCommand` (rotor inputs, tilt commands).
        air: ``(3,)`` air velocity ``w_mean + g_k`` [m/s], world frame (zeros in still air).
        force: ``(3,)`` disturbance force ``f_d(t_k)`` [N], world frame, at the centre of mass.
        t: ``()`` start of the interval [s].
    """

    command: RotorCommand
    air: Array
    force: Array
    t: Array


def external_force(wind: Wind | None, v_w, input_air, input_force, norm=safe_norm):
    """``(3,)`` world force [N] on the vehicle's centre of mass besides gravity and the rotors.

    ``f = f_d + f_drag``, ``f_drag = -c_1 v_rel - c_2 |v_rel| v_rel``, ``v_rel = v - air``
    (:func:`jaxrotor.wind.drag_force`; none without wind). Every plant evaluates it at each of
    its steps with its own velocity ``v_w`` [m/s] and the interval's held ``air`` and ``f_d``;
    the MuJoCo C plant passes NumPy arrays and ``norm = numpy.linalg.norm``.
    """
    if wind is None:
        return input_force
    return input_force + drag_force(v_w - input_air, wind.drag_linear, wind.drag_quadratic, norm=norm)


class FlightComputer(eqx.Module):
    """What the flight computer knows: the vehicle it thinks it flies, the controller and the flight.

    Attributes:
        platform: the platform the controller and allocator use (the engine's mass and inertia on
            the physics layer when the plant says so).
        controller: the :class:`~jaxrotor.control.AbstractController`.
        flight: the :class:`~jaxrotor.flight.Flight` (reference, allocator, tilt command, sensors,
            wind, disturbance).
        alloc_data: the allocator's geometry prepared once (``None`` when the tilt moves in flight).
        delay: sensor delay [ticks] (static).
    """

    platform: Platform
    controller: AbstractController
    flight: Flight
    alloc_data: AllocationData | None
    delay: int = eqx.field(static=True)

    @classmethod
    def build(cls, platform: Platform, controller: AbstractController, flight: Flight) -> FlightComputer:
        """The flight computer of ``flight`` on ``platform`` (allocation prepared once when it can be)."""
        return cls(platform=platform, controller=controller, flight=flight,
                   alloc_data=flight.allocation_data(platform),
                   delay=flight.sensors.delay if flight.sensors is not None else 0)

    def init(self, reading: VehicleState) -> TickState:
        """The tick state before tick 0: the controller's initial integral, the buffer filled with ``reading``."""
        buffer = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (self.delay + 1,) + jnp.shape(x)), reading)
        return TickState(integral=self.controller.init_state(self.platform), buffer=buffer)


class TickState(eqx.Module):
    """The flight computer's memory between ticks.

    Attributes:
        integral: the controller's integral state (its own pytree).
        buffer: the last ``delay + 1`` readings (a :class:`~jaxrotor.dynamics.VehicleState` with a leading
            axis; the oldest first).
    """

    integral: object
    buffer: VehicleState


class TickRecord(eqx.Module):
    """What a tick records besides the state: the controller's integral before the update, the allocation,
    the reference sample (:class:`~jaxrotor.allocators.Allocation`, :class:`~jaxrotor.reference.RefSample`)
    and ``R_cmd`` ``(3, 3)``, the attitude the controller commands (body to world,
    :meth:`~jaxrotor.control.AbstractController.commanded_attitude` of the measured state)."""

    integral: object
    alloc: Allocation
    ref: RefSample
    R_cmd: Array


def sense(flight: Flight, buffer: VehicleState, reading: VehicleState, error) -> tuple[VehicleState, VehicleState]:
    """Steps 1-2 of the tick: ``(buffer with reading pushed, measured state)``.

    The measured state is the reading ``delay`` ticks old (``buffer`` holds the last ``delay + 1``,
    oldest first) with the ``(4, 3)`` sensor ``error`` applied (:func:`jaxrotor.sensors.measure`; the
    true reading without sensors); its rotor speeds and tilt angles are the current ones.
    """
    buffer = jax.tree_util.tree_map(lambda b, x: jnp.concatenate([b[1:], x[None]], axis=0), buffer, reading)
    seen = jax.tree_util.tree_map(lambda b: b[0], buffer)  # the reading `delay` ticks old
    seen = eqx.tree_at(lambda s: (s.rotor_speed, s.alpha, s.beta), seen,
                       (reading.rotor_speed, reading.alpha, reading.beta))
    return buffer, (measure(seen, error) if flight.sensors is not None else seen)


def hold(flight: Flight, command: RotorCommand, t, gust, dtype) -> PlantInput:
    """Step 4 of the tick: the :class:`PlantInput` held over the interval from ``t`` [s]: ``command``, the air
    velocity ``w_mean + gust`` [m/s] (zeros in still air) and the disturbance ``f_d(t)`` [N] (zeros without one)."""
    air = flight.wind.air_velocity(gust) if flight.wind is not None else jnp.zeros(3, dtype)
    force = flight.disturbance(t) if flight.disturbance is not None else jnp.zeros(3, dtype)
    return PlantInput(command=command, air=jnp.asarray(air, dtype), force=jnp.asarray(force, dtype),
                      t=jnp.asarray(t, dtype))


def tick(computer: FlightComputer, state: TickState, reading: VehicleState, t, h, error, gust
         ) -> tuple[TickState, PlantInput, TickRecord]:
    """One control instant (module docstring, steps 1-5).

    Args:
        computer: the :class:`FlightComputer`.
        state: the :class:`TickState` before the tick.
        reading: the plant's true state at ``t`` (:meth:`jaxrotor.plant.AbstractPlant.read`).
        t: ``()`` time of the tick [s].
        h: ``()`` length of the interval that follows [s] (``0`` at the last tick).
        error: ``(4, 3)`` sensor errors of this tick (position [m], velocity [m/s], attitude rotation
            vector [rad], body rate [rad/s]); zeros without sensors.
        gust: ``(3,)`` gust velocity of this tick [m/s]; zeros without wind.

    Returns:
        ``(next tick state, plant input held over [t, t + h), record)``.
    """
    flight = computer.flight
    buffer, measured = sense(flight, state.buffer, reading, error)
    command, d_integral, alloc, ref = flight_computer(computer.platform, computer.controller, flight, t, measured,
                                                      state.integral, computer.alloc_data)
    R_cmd = computer.controller.commanded_attitude(computer.platform, measured, state.integral, ref)
    plant_input = hold(flight, command, t, gust, reading.p.dtype)
    integral = jax.tree_util.tree_map(lambda x, dx: x + h * dx, state.integral, d_integral)
    return (TickState(integral=integral, buffer=buffer), plant_input,
            TickRecord(state.integral, alloc, ref, R_cmd))


def plant_key(flight: Flight):
    """The key of what a plant draws itself: ``fold_in(flight.key, 1)`` (``None`` without a key)."""
    return None if flight.key is None else jax.random.fold_in(flight.key, 1)


def flight_trajectory(flight: Flight, t, states, applied, records, ok, num_steps) -> Trajectory:
    """The :class:`~jaxrotor.trajectory.Trajectory` of a ticked flight from its samples (leading axis ``T``):
    true ``states``, plant ``applied`` outputs, tick ``records`` (:class:`~jaxrotor.tick.TickRecord`)."""
    alloc, ref = records.alloc, records.ref
    return assemble_trajectory(t, states, applied, flight.limits, solver_ok=ok, num_steps=num_steps,
                               u_cmd=alloc.u, wrench_requested=alloc.requested, wrench_achieved=alloc.achieved,
                               saturated=alloc.saturated, p_ref=ref.p, v_ref=ref.v, a_ref=ref.a, R_ref=ref.R,
                               controller_state=records.integral, contact_force=applied.contact_force,
                               motor_speed=applied.motor_speed, R_cmd=records.R_cmd)
