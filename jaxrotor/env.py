"""A functional environment over the one tick and any jittable plant, for training policies.

:class:`FlightEnv` is a pure, ``vmap``-able pair of functions in the style of ``gymnax`` /
``brax`` environments over the same pieces as :func:`jaxrotor.fly`: the plant
(:class:`~jaxrotor.plant.AnalyticPlant` by default, or :class:`jaxrotor.physics.MJXPlant`), the
sensing of the tick (:func:`jaxrotor.tick.sense`: delay buffer, noise, bias) and its hold
(:func:`jaxrotor.tick.hold`: the command, the air velocity of the wind's gusts and the disturbance,
held over the control period ``h = 1 / flight.control_rate``). The policy takes the place of the
controller:

* ``reset(key) -> EnvState``: at rest at ``reference(t0)`` plus a uniform position offset of at most
  ``reset_noise`` per axis [m], hover rotor speeds; the sensor bias and the first gust are drawn;
* ``step(state, action) -> (state, obs, reward, done)``: the action becomes a rotor command
  (:class:`RotorInputs`: rotor inputs over the hover inputs; :class:`BodyWrench`: a body wrench
  allocated by ``flight.allocator`` with its saturation strategy), held for one control period
  while the plant steps.

Observation (``(18,)``), from the *measured* state (what the flight computer sees): position error
``e_p = p_r - p`` [m] and velocity error ``e_v = v_r - v`` [m/s] (world frame), the attitude ``R``
(9 entries, row-major) and the body rate ``omega`` [rad/s].

Reward, from the true state: ``-(|e_p|^2 + w_v |e_v|^2 + w_omega |omega|^2) h`` after the step.
``done``: the horizon ``t1`` is reached, or the true state left ``flight.limits`` or became
non-finite (a done state should be reset by the caller: ``jnp.where(done, reset(key), state)``).

Example::

    flight = jr.Flight(Hover([0, 0, 1], 5.0), control_rate=100.0,
                       integrator=jr.Integrator(adaptive=False, dt=0.005))
    env = FlightEnv(jr.presets.paper_hexarotor(), flight)
    keys = jax.random.split(jax.random.key(0), 1024)
    state = jax.vmap(env.reset)(keys)
    action = jnp.ones((1024, 6))                              # hover inputs
    state, obs, reward, done = jax.jit(jax.vmap(env.step))(state, action)
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array

from .allocation import hover_inputs
from .design.platform import Platform
from .dynamics import RotorCommand, VehicleState, initial_state
from .flight import Flight
from .plant import AbstractPlant, AnalyticPlant
from .sensors import NORMALS_PER_FLIGHT, NORMALS_PER_TICK
from .tick import hold, sense

__all__ = ["AbstractAction", "BodyWrench", "EnvState", "FlightEnv", "RotorInputs"]


class AbstractAction(eqx.Module):
    """How a policy's action becomes a rotor command (a strategy: its own methods decide)."""

    @abc.abstractmethod
    def size(self, platform: Platform) -> int:
        """The action's length."""

    @abc.abstractmethod
    def command(self, env: FlightEnv, action: Array, state: VehicleState) -> RotorCommand:
        """The :class:`~jaxrotor.dynamics.RotorCommand` of ``action`` (``state``: the measured state)."""


class RotorInputs(AbstractAction):
    """``(n,)`` rotor inputs over the hover inputs, ``u_i = a_i u_hover,i`` (``a = 1`` hovers a fixed-tilt
    platform; :func:`jaxrotor.allocation.hover_inputs`), clipped to ``[rotor_speed_min^2, rotor_speed_max^2]``."""

    def size(self, platform):
        return platform.n_rotors

    def command(self, env, action, state):
        p = env.platform
        u = jnp.asarray(action, p.mass.dtype) * hover_inputs(p)
        return RotorCommand(u=jnp.clip(u, p.rotor_speed_min**2, p.u_max))


class BodyWrench(AbstractAction):
    """``(6,)`` body wrench ``(f, tau)`` in units of the hover weight: ``f = a[:3] m g`` [N],
    ``tau = a[3:] m g`` [N m] (body frame), allocated by ``flight.allocator`` (its bounds and
    saturation strategy); ``a = (0, 0, 1, 0, 0, 0)`` hovers a level vehicle."""

    def size(self, platform):
        return 6

    def command(self, env, action, state):
        p = env.platform
        w = jnp.asarray(action, p.mass.dtype) * (p.mass * p.gravity)
        data = env.flight.allocator.prepare(p)
        return RotorCommand(u=env.flight.allocator(data, w).u)


class EnvState(eqx.Module):
    """The state of one environment (a pytree; batch it with ``vmap``).

    Attributes:
        plant: the plant's state (:meth:`~jaxrotor.plant.AbstractPlant.init`).
        vehicle: the true :class:`~jaxrotor.dynamics.VehicleState` now (the plant's reading).
        buffer: the sensor delay buffer (the last ``delay + 1`` true states, oldest first).
        measured: the :class:`~jaxrotor.dynamics.VehicleState` the policy sees now.
        bias: ``(4, 3)`` the episode's sensor bias.
        gust: ``(3,)`` the gust velocity now [m/s].
        key: the episode's ``jax.random`` key (advanced every step).
        t: ``()`` time [s].
        steps: ``()`` int, control periods taken since ``reset``.
    """

    plant: object
    vehicle: VehicleState
    buffer: VehicleState
    measured: VehicleState
    bias: Array
    gust: Array
    key: Array
    t: Array
    steps: Array


class FlightEnv(eqx.Module):
    """A pure environment: ``reset(key)`` and ``step(state, action)`` (see the module docstring).

    Attributes:
        platform: the vehicle.
        flight: the :class:`~jaxrotor.flight.Flight` supplying the reference, the allocator (with
            :class:`BodyWrench`), the actuator models, the integrator, the control rate, sensors, wind,
            disturbance, ``t0``/``t1`` and the limits.
        plant: a jittable :class:`~jaxrotor.plant.AbstractPlant` (default :class:`~jaxrotor.plant.AnalyticPlant`).
        action: the :class:`AbstractAction` (default :class:`RotorInputs`).
        reset_noise: largest initial position offset per axis [m].
        w_v, w_omega: reward weights of the velocity error [s^2] and body rate [m^2 s^2/rad^2].
    """

    platform: Platform
    flight: Flight
    plant: AbstractPlant = AnalyticPlant()
    action: AbstractAction = RotorInputs()
    reset_noise: float = eqx.field(static=True, default=0.1)
    w_v: float = eqx.field(static=True, default=0.1)
    w_omega: float = eqx.field(static=True, default=0.01)

    def __check_init__(self):
        if self.flight.control_rate is None:
            raise ValueError("FlightEnv parameter `flight.control_rate` = None: the action is held for one control "
                             "period. Fix: pass Flight(control_rate=100.0, integrator=Integrator(adaptive=False, "
                             "dt=0.005), ...).")
        if self.plant.host:
            raise ValueError(f"FlightEnv parameter `plant` = {type(self.plant).__name__} is stepped on the host, "
                             "not under jit. Fix: use jaxrotor.AnalyticPlant() or jaxrotor.physics.MJXPlant().")
        if not self.reset_noise >= 0:
            raise ValueError(f"FlightEnv parameter `reset_noise` = {self.reset_noise!r} is invalid: it must be >= 0 m. "
                             "Fix: pass e.g. 0.1.")
        if self.platform.is_tilting:
            raise ValueError("FlightEnv parameter `platform` is a tilting platform; the action holds rotor inputs "
                             "only. Fix: fix its tilt angles (a fixed-tilt platform).")
        self.plant.check(self.platform, None, self.flight)

    def __post_init__(self):
        self.plant = self.plant.prepare(self.platform)  # host-side model building, once

    @property
    def control_period(self) -> float:
        """``h = 1 / flight.control_rate`` [s]."""
        return 1.0 / float(self.flight.control_rate)

    @property
    def action_size(self) -> int:
        """The action's length (``n`` rotors for :class:`RotorInputs`, 6 for :class:`BodyWrench`)."""
        return self.action.size(self.platform)

    def _noise(self, key, bias):
        """This tick's sensor errors ``(4, 3)`` and gust innovations ``(3,)`` from ``key``."""
        dtype = self.platform.mass.dtype
        z = jax.random.normal(key, (NORMALS_PER_TICK + NORMALS_PER_FLIGHT + 3,), dtype)
        sensors = self.flight.sensors
        error = sensors.scale(z[:NORMALS_PER_TICK + NORMALS_PER_FLIGHT]).white[0] + bias if sensors is not None \
            else jnp.zeros((4, 3), dtype)
        return error, z[-3:]

    def reset(self, key: Array) -> EnvState:
        """At rest at ``reference(t0) + offset``, ``offset ~ U[-reset_noise, reset_noise]^3`` [m], hover speeds."""
        dtype = self.platform.mass.dtype
        k_offset, k_draw, k_plant, k_run = jax.random.split(key, 4)
        t0 = jnp.asarray(self.flight.t0, dtype=dtype)
        ref = self.flight.reference(t0)
        offset = jax.random.uniform(k_offset, (3,), dtype, -self.reset_noise, self.reset_noise)
        vehicle = initial_state(self.platform, p=ref.p + offset, R=ref.R, v=ref.v, rotor_speed="hover")
        flight = eqx.tree_at(lambda f: f.state0, self.flight, vehicle, is_leaf=lambda x: x is None)
        plant = self.plant
        ps = plant.init(self.platform, flight, k_plant)
        z = jax.random.normal(k_draw, (NORMALS_PER_TICK + NORMALS_PER_FLIGHT + 3,), dtype)
        sensors, wind = self.flight.sensors, self.flight.wind
        bias = sensors.scale(z[:NORMALS_PER_TICK + NORMALS_PER_FLIGHT]).bias if sensors is not None \
            else jnp.zeros((4, 3), dtype)
        gust = wind.gust_std.astype(dtype) * z[-3:] if wind is not None else jnp.zeros(3, dtype)
        reading = plant.read(ps).state
        delay = sensors.delay if sensors is not None else 0
        buffer = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (delay + 1,) + jnp.shape(x)), reading)
        error, _ = self._noise(k_run, bias)
        buffer, measured = sense(self.flight, buffer, reading, error)
        return EnvState(plant=ps, vehicle=reading, buffer=buffer, measured=measured, bias=bias, gust=gust, key=k_run,
                        t=t0, steps=jnp.asarray(0))

    def observe(self, state: EnvState) -> Array:
        """``(18,)`` observation ``[e_p, e_v, vec(R), omega]`` of the measured state."""
        ref = self.flight.reference(state.t)
        s = state.measured
        return jnp.concatenate([ref.p - s.p, ref.v - s.v, s.R.reshape(-1), s.omega])

    def step(self, state: EnvState, action: Array) -> tuple[EnvState, Array, Array, Array]:
        """Hold ``action`` for one control period; return ``(state, obs, reward, done)``.

        Args:
            state: the current :class:`EnvState`.
            action: the policy's action (:attr:`action_size` entries, see :attr:`action`).
        """
        plant, h = self.plant, self.control_period
        dtype = self.platform.mass.dtype
        command = self.action.command(self, action, state.measured)
        plant_input = hold(self.flight, command, state.t, state.gust, dtype)
        ps = plant.step(state.plant, plant_input, jnp.asarray(h, dtype))
        t = state.t + h
        key, k_tick = jax.random.split(state.key)
        error, n_gust = self._noise(k_tick, state.bias)
        true = plant.read(ps).state
        buffer, measured = sense(self.flight, state.buffer, true, error)
        gust = self.flight.wind.gust_step(state.gust, n_gust, h) if self.flight.wind is not None else state.gust
        new = EnvState(plant=ps, vehicle=true, buffer=buffer, measured=measured, bias=state.bias, gust=gust, key=key, t=t,
                       steps=state.steps + 1)
        ref = self.flight.reference(t)
        e_p, e_v = ref.p - true.p, ref.v - true.v
        reward = -(e_p @ e_p + self.w_v * (e_v @ e_v) + self.w_omega * (true.omega @ true.omega)) * h
        lim = self.flight.limits
        finite = jnp.all(jnp.isfinite(jnp.concatenate([true.p, true.v, true.omega])))
        runaway = ((jnp.linalg.norm(true.p) > lim.max_position) | (jnp.linalg.norm(true.v) > lim.max_speed)
                   | (jnp.linalg.norm(true.omega) > lim.max_rate))
        done = (t >= self.flight.end_time - 0.5 * h) | runaway | ~finite
        return new, self.observe(new), reward, done

