"""One loop for every plant: :func:`fly`.

:func:`fly` flies a :class:`~jaxrotor.flight.Flight` on any
:class:`~jaxrotor.plant.AbstractPlant`:

* with no control rate on the analytic plant: the continuous-time loop
  (:mod:`jaxrotor.continuous`, the controller inside the ODE: the paper's setting);
* otherwise ``K = (t1 - t0) h^-1`` ticks (:func:`jaxrotor.tick.tick`) and plant steps, as one
  ``lax.scan`` for a jittable plant (analytic, MJX: jit-compiled, ``vmap``-able over any array
  leaf, differentiable with respect to every leaf), or from the host for a host plant (the
  MuJoCo C engine: one compiled tick per control period, the engine's own steps between).

Each sample of the :class:`~jaxrotor.trajectory.Trajectory` holds the true state at the tick,
the command computed there and what the plant applied at the start of the interval that
follows (:class:`~jaxrotor.plant.PlantOutputs`); samples are taken every ``save_dt`` (a whole
number of ticks). The sensor errors and gusts of the ticks are drawn once from ``flight.key``
(:func:`jaxrotor.tick.flight_noise`): every plant sees the same draws for the same key.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from .control import AbstractController
from .design.platform import Platform
from .flight import Flight
from .plant import AbstractPlant, AnalyticPlant
from .host import HostTimings, fly_host
from .tick import (ControlSchedule, FlightComputer, control_schedule, flight_noise, flight_trajectory, plant_key,
                   tick)
from .trajectory import Trajectory

__all__ = ["HostTimings", "fly", "fly_with_timings"]


@eqx.filter_jit
def _fly_scan(platform: Platform, controller: AbstractController, flight: Flight, plant: AbstractPlant,
              schedule: ControlSchedule) -> Trajectory:
    """The ticks of a jittable plant as one ``lax.scan`` that stores only the saved samples.

    A sample (the true state at the tick, what the plant applied over the interval after it, the
    tick's record) is written into a carried buffer of ``S = K // save_every + 1`` rows under a
    ``lax.cond`` on the tick index ``k % save_every == 0``; the index is not batched, so under
    ``vmap`` the condition stays a branch and the other ticks write nothing. Stacking every tick's
    sample as scan outputs and slicing them afterwards gives the same trajectory, bit for bit, with
    ``K + 1`` rows written instead of ``S``.
    """
    dtype = platform.mass.dtype
    K, h, every = schedule.ticks, schedule.period, schedule.save_every
    n = K + 1  # ticks 0..K; the last one is recorded at t1 and not integrated (h_K = 0)
    S = K // every + 1  # saved ticks 0, every, ..., (S - 1) every
    errors, gusts = flight_noise(flight, n, h, dtype)
    ps0 = plant.init(platform, flight, plant_key(flight))
    computer = FlightComputer.build(plant.controller_platform(platform, ps0), controller, flight)
    tick0 = computer.init(plant.read(ps0).state)
    ks = jnp.arange(n)
    ts = flight.t0 + h * jnp.arange(n, dtype=dtype)
    hs = jnp.where(ks < K, jnp.asarray(h, dtype), jnp.asarray(0.0, dtype))

    def one(ps, tstate, t, h_k, err, gust):
        reading = plant.read(ps)
        tstate, plant_input, record = tick(computer, tstate, reading.state, t, h_k, err, gust)
        ps = plant.step(ps, plant_input, h_k)
        after = plant.read(ps)
        return ps, tstate, (reading.state, after.applied, record), after.ok

    shapes = jax.eval_shape(lambda: one(ps0, tick0, ts[0], hs[0], errors[0], gusts[0])[2])
    samples0 = jax.tree_util.tree_map(lambda x: jnp.zeros((S,) + x.shape, x.dtype), shapes)

    def body(carry, xs):
        ps, tstate, samples, ok = carry
        k, t, h_k, err, gust = xs
        ps, tstate, sample, ok_k = one(ps, tstate, t, h_k, err, gust)
        samples = jax.lax.cond(
            k % every == 0,
            lambda b: jax.tree_util.tree_map(lambda rows, x: rows.at[k // every].set(x), b, sample),
            lambda b: b, samples)
        return (ps, tstate, samples, ok & ok_k), None

    (_, _, (states, applied, records), ok), _ = jax.lax.scan(
        body, (ps0, tick0, samples0, jnp.asarray(True)), (ks, ts, hs, errors, gusts))
    return flight_trajectory(flight, ts[::every], states, applied, records, ok, K * plant.steps_per_tick(ps0))


def _prepare(platform, controller, flight, plant) -> tuple[AbstractPlant, ControlSchedule | None]:
    flight.check(platform, controller)
    plant.check(platform, controller, flight)
    rate = plant.control_rate(flight)
    if rate is None:
        if flight.sensors is not None or flight.wind is not None:
            control_schedule(flight)  # raises: sensors and wind need a control rate
        return plant, None
    schedule = control_schedule(flight, rate)
    if (flight.sensors is not None or flight.wind is not None) and flight.key is None:
        flight_noise(flight, 1, schedule.period, platform.mass.dtype)  # raises the missing-key error
    return plant.prepare(platform), schedule


def fly(platform: Platform, controller: AbstractController, flight: Flight,
        plant: AbstractPlant = AnalyticPlant()) -> Trajectory:
    """Fly ``platform`` under ``controller`` as ``flight`` describes, on ``plant`` (module docstring).

    Args:
        platform: the vehicle.
        controller: any :class:`~jaxrotor.control.AbstractController`.
        flight: the :class:`~jaxrotor.flight.Flight`.
        plant: :class:`~jaxrotor.plant.AnalyticPlant` (default), :class:`jaxrotor.physics.MJXPlant` or
            :class:`jaxrotor.physics.MuJoCoPlant` (or any :class:`~jaxrotor.plant.AbstractPlant`).

    Raises:
        ValueError: before compiling, if the controller needs a higher allocation rank than the
            platform has, a flight field the plant does not model is set (named), the timing is not a
            whole number of ticks, or a stochastic flight has no key.

    Returns:
        A :class:`~jaxrotor.trajectory.Trajectory`; ``diverged`` is set (never a silent NaN) if the
        flight became non-finite, ran away past ``flight.limits``, or the plant's numerics failed.
    """
    plant, schedule = _prepare(platform, controller, flight, plant)
    if schedule is None:
        return plant.fly_continuous(platform, controller, flight)
    if plant.host:
        return fly_host(platform, controller, flight, plant, schedule)[0]
    return _fly_scan(platform, controller, flight, plant, schedule)


def fly_with_timings(platform: Platform, controller: AbstractController, flight: Flight,
                     plant: AbstractPlant) -> tuple[Trajectory, HostTimings]:
    """:func:`fly` on a host plant, with the :class:`HostTimings` of the run."""
    if not plant.host:
        raise ValueError(f"fly_with_timings: `plant` = {type(plant).__name__} is not a host plant. Fix: time "
                         "fly() with jax.block_until_ready instead.")
    plant, schedule = _prepare(platform, controller, flight, plant)
    return fly_host(platform, controller, flight, plant, schedule)
