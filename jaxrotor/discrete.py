"""The discrete-rate flight loop: a flight computer ticking at a fixed rate, a continuous plant between ticks.

What a flight controller does (``docs/robust.md``): at each tick ``t_k = t0 + k h``
(``h = 1 / control_rate``) it reads the sensors (:mod:`jaxrotor.sensors`: the state
``delay`` ticks old, plus noise and bias), runs the reference, controller, tilt
command and allocator (:func:`jaxrotor.flight.flight_computer`, the same code as the
continuous loop) and holds the rotor command until the next tick (zero-order hold).
The plant (:func:`jaxrotor.dynamics.vehicle_derivative`: motor lag, servos, eqs.
(1)-(2), (11)-(12)) is integrated over ``[t_k, t_k + h)`` by ``h / dt`` fixed steps of
the flight's diffrax solver (``flight.integrator``, which must be fixed-step). The
wind (:mod:`jaxrotor.wind`) is sampled at the ticks and held; its drag force depends
on the plant's own velocity, inside the vector field. The controller's integrator
states are advanced by forward Euler at the tick rate, ``x_{k+1} = x_k + h dx/dt``.

The whole flight is one ``lax.scan`` over ticks: jit-compiled, ``vmap``-able over any
array leaf (a batch of keys draws independent noise and gusts) and differentiable
with respect to every leaf (gains, vehicle, noise levels, wind). The output is the
same :class:`~jaxrotor.trajectory.Trajectory` as :func:`jaxrotor.flight.fly`, sampled
every ``save_dt`` (a whole number of ticks), so every metric and objective works.
Each sample holds the true state at the tick, the command computed there and the
plant outputs under that command.
"""

from __future__ import annotations

import math

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from .control import AbstractController
from .design.platform import Platform
from .dynamics import VehicleState, vehicle_derivative
from .flight import Flight, flight_computer
from .sensors import NORMALS_PER_FLIGHT, NORMALS_PER_TICK, measure
from .trajectory import Trajectory, divergence_flag

__all__ = ["ControlSchedule", "control_schedule", "flight_noise", "fly_discrete"]

_TOL = 1e-9  # relative tolerance of the "is a whole number of steps" checks


class ControlSchedule(eqx.Module):
    """The static timing of a discrete-rate flight.

    Attributes:
        period: control period ``h = 1 / control_rate`` [s].
        ticks: number of control intervals ``K = (t1 - t0) / h``.
        substeps: plant steps per interval ``h / dt``.
        save_every: ticks per output sample ``save_dt / h``.
    """

    period: float = eqx.field(static=True)
    ticks: int = eqx.field(static=True)
    substeps: int = eqx.field(static=True)
    save_every: int = eqx.field(static=True)


def _whole(x: float) -> int | None:
    n = round(x)
    return n if n >= 1 and abs(x - n) <= _TOL * max(1.0, abs(x)) else None


def control_schedule(flight: Flight) -> ControlSchedule:
    """Check the timing of a discrete-rate ``flight`` and return its :class:`ControlSchedule`.

    Raises:
        ValueError: naming the parameter, its value and the fix, if there is no control
            rate, the integrator is adaptive, the integration step ``dt`` does not divide
            the control period, or the horizon / output period is not a whole number of ticks.
    """
    rate = flight.control_rate
    if rate is None:
        raise ValueError("fly: the flight has sensors or wind but `control_rate` = None: they are modelled by the "
                         "discrete-rate loop only. Fix: pass Flight(control_rate=500.0, integrator=Integrator("
                         "adaptive=False, dt=0.002), ...).")
    if not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
        raise ValueError(f"Flight parameter `control_rate` = {rate!r} is invalid: it must be a finite rate > 0 Hz. "
                         "Fix: pass e.g. control_rate=500.0.")
    integ = flight.integrator
    if integ.adaptive:
        raise ValueError(f"Flight parameter `control_rate` = {rate!r} needs a fixed-step plant integrator, but "
                         "`integrator.adaptive` = True. Fix: pass integrator=Integrator(adaptive=False, dt=h / n) "
                         f"with the control period h = {1.0 / rate:g} s.")
    h = 1.0 / rate
    sub = _whole(h / integ.dt)
    if sub is None:
        raise ValueError(f"Flight parameter `control_rate` = {rate!r} Hz (period {h:g} s) is not a whole multiple of "
                         f"the integration step `integrator.dt` = {integ.dt!r} s. Fix: choose dt = h / n, e.g. "
                         f"dt = {h:g} or {h / 2:g}.")
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
    return ControlSchedule(period=h, ticks=ticks, substeps=sub, save_every=every)


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


def _plant_step(platform, flight, schedule: ControlSchedule, state: VehicleState, command, air, t, h_k):
    """Integrate the plant over ``[t, t + h_k]`` under the held ``command`` and air velocity (fixed steps)."""
    solver = flight.integrator.solver
    flat0, unravel = ravel_pytree(state)

    def field(t_, y, args):
        s = unravel(y)
        f_ext = flight.wind.force(s.v, air) if flight.wind is not None else None
        if flight.disturbance is not None:
            d = flight.disturbance(t_)
            f_ext = d if f_ext is None else f_ext + d
        return ravel_pytree(vehicle_derivative(platform, flight.actuators, s, command, f_ext)[0])[0]

    term = diffrax.ODETerm(field)
    dt = h_k / schedule.substeps
    t_end = t + dt
    solver_state = solver.init(term, t, t_end, flat0, None)

    def sub(carry, i):
        y, st = carry
        t_a = t + i * dt
        y_next, _, _, st, _ = solver.step(term, t_a, t_a + dt, y, None, st, made_jump=False)
        return (y_next, st), None

    (y1, _), _ = jax.lax.scan(sub, (flat0, solver_state), jnp.arange(schedule.substeps, dtype=flat0.dtype))
    return unravel(y1)


@eqx.filter_jit
def _fly_discrete(platform: Platform, controller: AbstractController, flight: Flight,
                  schedule: ControlSchedule) -> Trajectory:
    dtype = platform.mass.dtype
    K, h = schedule.ticks, schedule.period
    n = K + 1  # ticks 0..K; the last one is recorded at t1 and not integrated (h_K = 0)
    errors, gusts = flight_noise(flight, n, h, dtype)
    alloc_data = flight.allocation_data(platform)
    state0 = flight.initial_state(platform)
    integral0 = controller.init_state(platform)
    d = flight.sensors.delay if flight.sensors is not None else 0
    buffer0 = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (d + 1,) + x.shape), state0)
    ts = flight.t0 + h * jnp.arange(n, dtype=dtype)
    hs = jnp.where(jnp.arange(n) < K, jnp.asarray(h, dtype), jnp.asarray(0.0, dtype))

    def tick(carry, xs):
        state, integral, buffer = carry
        t, h_k, err, gust = xs
        buffer = jax.tree_util.tree_map(lambda b, x: jnp.concatenate([b[1:], x[None]], axis=0), buffer, state)
        seen = jax.tree_util.tree_map(lambda b: b[0], buffer)  # the state d ticks ago
        measured = measure(eqx.tree_at(lambda s: (s.rotor_speed, s.alpha, s.beta), seen,
                                       (state.rotor_speed, state.alpha, state.beta)), err)
        command, d_integral, alloc, ref = flight_computer(platform, controller, flight, t, measured, integral,
                                                          alloc_data)
        air = flight.wind.air_velocity(gust) if flight.wind is not None else None
        f_ext = flight.wind.force(state.v, air) if flight.wind is not None else None
        if flight.disturbance is not None:
            f_ext = flight.disturbance(t) if f_ext is None else f_ext + flight.disturbance(t)
        _, out = vehicle_derivative(platform, flight.actuators, state, command, f_ext)
        state_next = _plant_step(platform, flight, schedule, state, command, air, t, h_k)
        integral_next = jax.tree_util.tree_map(lambda x, dx: x + h_k * dx, integral, d_integral)
        return (state_next, integral_next, buffer), (state, integral, out, alloc, ref)

    _, (states, integrals, outs, alloc, ref) = jax.lax.scan(tick, (state0, integral0, buffer0),
                                                            (ts, hs, errors, gusts))
    keep = slice(0, n, schedule.save_every)
    states, integrals, outs, alloc, ref, t = jax.tree_util.tree_map(
        lambda x: x[keep], (states, integrals, outs, alloc, ref, ts))
    solver_ok = jnp.asarray(True)
    return Trajectory(
        t=t, p=states.p, v=states.v, R=states.R, omega=states.omega, accel=outs.accel,
        angular_accel=outs.angular_accel, u=outs.u, u_cmd=alloc.u, rotor_speed=outs.rotor_speed, alpha=outs.alpha,
        beta=outs.beta, wrench_requested=alloc.requested, wrench_achieved=alloc.achieved, saturated=alloc.saturated,
        p_ref=ref.p, v_ref=ref.v, a_ref=ref.a, R_ref=ref.R, controller_state=integrals,
        diverged=divergence_flag(states.p, states.v, states.omega, solver_ok, flight.limits),
        solver_ok=solver_ok, num_steps=jnp.asarray(K * schedule.substeps),
    )


def fly_discrete(platform: Platform, controller: AbstractController, flight: Flight) -> Trajectory:
    """Fly ``flight`` with its flight computer at ``flight.control_rate`` (see the module docstring).

    Called by :func:`jaxrotor.flight.fly` when the flight has a control rate, sensors or
    wind. ``flight.integrator`` must be fixed-step with ``dt`` dividing the control
    period; ``flight.key`` drives the sensor noise and the gusts.

    Raises:
        ValueError: before compiling, for the timing errors of :func:`control_schedule`
            or a stochastic flight without a key.

    Returns:
        A :class:`~jaxrotor.trajectory.Trajectory` sampled every ``save_dt``; ``diverged`` is
        set if the flight became non-finite or ran past ``flight.limits``.
    """
    schedule = control_schedule(flight)
    if (flight.sensors is not None or flight.wind is not None) and flight.key is None:
        flight_noise(flight, 1, schedule.period, platform.mass.dtype)  # raises the missing-key error
    return _fly_discrete(platform, controller, flight, schedule)
