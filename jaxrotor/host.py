"""The host driver of the one loop: a host plant (the MuJoCo C engine) stepped from Python.

Per control period the driver makes one call of a compiled function of flat vectors, the tick
(:func:`jaxrotor.tick.tick`) fused with the plant's pure actuation
(:meth:`jaxrotor.plant.AbstractHostPlant.actuation`)::

    (t, h, state_x, tick_x, actuator_x, error, gust) -> (tick_x', input_x, record_x, drive_x)

then the plant's host part (:meth:`~jaxrotor.plant.AbstractHostPlant.advance`: the engine's own
steps). Samples are kept every ``save_every`` ticks; a sample that is non-finite, beyond
``flight.limits`` or flagged by the plant (``PlantReading.ok``) ends the flight, which holds its
last good sample and is reported diverged.
"""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from .tick import FlightComputer, flight_noise, flight_trajectory, plant_key, tick

__all__ = ["HostTimings", "fly_host"]


class HostTimings(eqx.Module):
    """Where a host-driven flight spent its time.

    Attributes:
        setup_s: plant building and compilation [s].
        wall_s: the loop [s].
        tick_s: the part of ``wall_s`` spent in the compiled tick [s] (the rest is the plant and Python).
    """

    setup_s: float = eqx.field(static=True)
    wall_s: float = eqx.field(static=True)
    tick_s: float = eqx.field(static=True)


class _Flat:
    """Flatten a pytree of arrays to one NumPy vector and back on the host (no JAX call)."""

    def __init__(self, example):
        leaves, self.treedef = jax.tree_util.tree_flatten(example)
        self.shapes = [np.shape(x) for x in leaves]
        self.dtypes = [np.asarray(x).dtype for x in leaves]
        sizes = [int(np.prod(s)) for s in self.shapes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)

    def unflatten(self, flat):
        flat = np.asarray(flat)
        leaves = [flat[a:b].reshape(s).astype(d) for a, b, s, d in
                  zip(self.offsets[:-1], self.offsets[1:], self.shapes, self.dtypes)]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)


_CACHE: dict = {}
_CACHE_SIZE = 8


def _compile(fn, args, specs, x_dtype, share: bool):
    """``fn(args, *specs)`` compiled as ``f(*xs)``.

    Without ``share`` the array arguments ``args`` (the flight computer, the plant's actuation
    arguments) are compiled in (XLA folds what depends on them only: the fastest call, one
    compilation per flight). With ``share`` their leaves are one vector passed at every call and the
    executable is cached by the rest (structure, static leaves, shapes and dtypes), so flights that
    differ only in array values (randomized vehicles, gains, noise levels) reuse one compilation.
    """
    if not share:
        return jax.jit(lambda *xs: fn(args, *xs)).lower(*specs).compile()
    dyn, static = eqx.partition(args, eqx.is_array)
    flat, unravel_dyn = ravel_pytree(dyn)
    flat = np.asarray(flat, dtype=x_dtype)
    static_leaves, static_def = jax.tree_util.tree_flatten(static)
    try:
        key = (static_def, tuple(static_leaves), jax.tree_util.tree_structure(dyn),
               tuple((a.shape, str(a.dtype)) for a in jax.tree_util.tree_leaves(dyn)),
               tuple((s.shape, str(s.dtype)) for s in specs))
        hash(key)
    except TypeError:  # a static leaf that cannot be hashed: compile for this flight only
        key = None
    compiled = _CACHE.get(key) if key is not None else None
    if compiled is None:
        compiled = jax.jit(lambda p, *xs: fn(eqx.combine(unravel_dyn(p), static), *xs)).lower(
            jax.ShapeDtypeStruct(flat.shape, x_dtype), *specs).compile()
        if key is not None:
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = compiled
    return lambda *xs: compiled(flat, *xs)


def fly_host(platform, controller, flight, plant, schedule):
    """Fly ``flight`` on the host plant ``plant`` (module docstring).

    Returns:
        ``(trajectory, timings)``: the :class:`~jaxrotor.trajectory.Trajectory` and the :class:`HostTimings`.
    """
    t_setup = time.perf_counter()
    dtype = platform.mass.dtype
    K, h = schedule.ticks, schedule.period
    n = K + 1
    errors, gusts = (np.asarray(a, dtype=float) for a in flight_noise(flight, n, h, dtype))
    ps = plant.init(platform, flight, plant_key(flight))
    flight_ctrl = eqx.tree_at(lambda f: f.key, flight, None) if flight.key is not None else flight
    computer = FlightComputer.build(plant.controller_platform(platform, ps), controller, flight_ctrl)
    reading0 = plant.read(ps)
    state0 = jax.tree_util.tree_map(lambda x: jnp.asarray(x, dtype), reading0.state)
    raw0 = np.asarray(plant.state_vector(ps), dtype=float)
    tick_flat0, unravel_tick = ravel_pytree(computer.init(state0))
    act_args, actuate = plant.actuation(ps)
    act0 = plant.actuator_vector(ps)
    x_dtype = tick_flat0.dtype if tick_flat0.size else jnp.dtype(dtype)
    record_shape = jax.eval_shape(lambda: tick(computer, computer.init(state0), state0, jnp.asarray(0.0, x_dtype),
                                               jnp.asarray(h, x_dtype), jnp.zeros((4, 3), x_dtype),
                                               jnp.zeros(3, x_dtype))[2])
    record_flat = _Flat(jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype), record_shape))

    sizes = (1, 1, raw0.size, tick_flat0.size, int(np.size(act0)), 12, 3)
    cuts = np.cumsum(sizes)[:-1]

    def fused(args, x):
        comp, a_args = args
        t, h_k, state_x, tick_x, act_x, err, gust = jnp.split(x, cuts)
        tstate, plant_input, record = tick(comp, unravel_tick(tick_x), plant.state_from_vector(ps, state_x), t[0],
                                           h_k[0], err.reshape(4, 3), gust)
        drive = actuate(a_args, act_x, plant_input)
        ok = jnp.all(jnp.isfinite(ravel_pytree(plant_input)[0]))
        return jnp.concatenate([ravel_pytree(tstate)[0], ravel_pytree(record)[0].astype(x_dtype),
                                drive.astype(x_dtype), ok.astype(x_dtype)[None]])

    compiled = _compile(fused, (computer, act_args), [jax.ShapeDtypeStruct((int(sum(sizes)),), x_dtype)], x_dtype,
                        plant.compile_shared())
    n_tick, n_rec = tick_flat0.size, record_flat.offsets[-1]
    setup = time.perf_counter() - t_setup

    every, T = schedule.save_every, K // schedule.save_every + 1
    lim = flight.limits
    tick_x = np.asarray(tick_flat0)
    states, applied, records = [], [], []
    diverged, tick_time = False, 0.0
    # bound once: a method looked up on an equinox Module builds a bound-method Module at every access
    state_vector, actuator_vector, advance = plant.state_vector, plant.actuator_vector, plant.advance
    t_run = time.perf_counter()
    t0 = float(flight.t0)
    for k in range(n):
        t = t0 + k * h
        h_k = h if k < K else 0.0
        state_x = state_vector(ps)
        act_x = actuator_vector(ps)
        reading = plant.read(ps) if k % every == 0 else None  # before the engine advances (in place)
        tc = time.perf_counter()
        y = np.asarray(compiled(np.concatenate([(t, h_k), state_x, tick_x, act_x, errors[k].ravel(), gusts[k]])))
        tick_time += time.perf_counter() - tc
        tick_x, rec_x, drive_x, input_ok = y[:n_tick], y[n_tick:n_tick + n_rec], y[n_tick + n_rec:-1], y[-1] > 0.5
        ps_next = advance(ps, drive_x, h_k)
        if k % every == 0:
            after = plant.read(ps_next)
            s = reading.state
            bad = (not (np.all(np.isfinite(state_x)) and bool(input_ok)) or not bool(after.ok)
                   or np.linalg.norm(s.p) > lim.max_position or np.linalg.norm(s.v) > lim.max_speed
                   or np.linalg.norm(s.omega) > lim.max_rate)
            if bad:
                diverged = True
                break
            states.append(s)
            applied.append(after.applied)
            records.append(record_flat.unflatten(rec_x))
        ps = ps_next
    wall = time.perf_counter() - t_run
    kept = len(states)
    if kept == 0:
        raise ValueError("fly: the flight diverged at its first tick (non-finite or runaway initial state). Fix: "
                         "check Flight.state0 and flight.limits.")
    states += [states[-1]] * (T - kept)  # a diverged flight holds its last good sample
    applied += [applied[-1]] * (T - kept)
    records += [records[-1]] * (T - kept)

    def stack(items):
        def one(*xs):
            a = np.stack([np.asarray(x) for x in xs])
            return jnp.asarray(a, dtype) if np.issubdtype(a.dtype, np.floating) else jnp.asarray(a)

        return jax.tree_util.tree_map(one, *items)

    traj = flight_trajectory(flight, jnp.asarray(flight.save_times, dtype), stack(states), stack(applied),
                             stack(records), not diverged, min(K, (kept - 1) * every) * plant.steps_per_tick(ps))
    return traj, HostTimings(setup_s=setup, wall_s=wall, tick_s=tick_time)
