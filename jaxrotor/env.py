"""A functional environment over the analytic flight, for training policies.

:class:`FlightEnv` is a pure, ``vmap``-able pair of functions in the style of
``gymnax`` / ``brax`` environments, built on the same plant as
:func:`jaxrotor.fly` (eqs. (1)-(2), (11)-(12) with the flight's motor and servo
models, :func:`jaxrotor.dynamics.vehicle_derivative`) and the same reference:

* ``reset(key) -> EnvState``: at rest at ``reference(t0)`` plus a uniform position
  offset of at most ``reset_noise`` per axis [m], hover rotor speeds;
* ``step(state, action) -> (state, obs, reward, done)``: the action is held for one
  control period ``control_dt`` (zero-order hold) while the plant is integrated by
  ``substeps`` steps of the flight's diffrax solver (its ``step``, as the fixed-step
  path of :func:`jaxrotor.integrate.integrate_fixed_step`).

Action: ``(n,)`` rotor inputs in units of the hover inputs, ``u_i = a_i u_hover,i``
(``a = 1`` hovers a fixed-tilt platform; see :func:`jaxrotor.allocation.hover_inputs`),
clipped to ``[u_min, u_max]`` (``rotor_speed_min^2``, ``rotor_speed_max^2``).

Observation (``(18,)``): position error ``e_p = p_r - p`` [m] and velocity error
``e_v = v_r - v`` [m/s] (world frame), the attitude ``R`` (9 entries, row-major) and the
body rate ``omega`` [rad/s].

Reward: ``-(|e_p|^2 + w_v |e_v|^2 + w_omega |omega|^2) control_dt`` after the step.
``done``: the horizon ``t1`` is reached, or the state left the runaway limits of
``flight.limits`` or became non-finite (a done state should be reset by the caller:
``jnp.where(done, reset(key), state)``).

Example::

    env = FlightEnv(jr.presets.paper_hexarotor(), jr.Flight(Hover([0, 0, 1], 5.0)))
    keys = jax.random.split(jax.random.key(0), 1024)
    state = jax.vmap(env.reset)(keys)
    action = jnp.ones((1024, 6))                              # hover inputs
    state, obs, reward, done = jax.jit(jax.vmap(env.step))(state, action)
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array

from .allocation import hover_inputs
from .design.platform import Platform
from .dynamics import RotorCommand, VehicleState, initial_state, vehicle_derivative
from .flight import Flight

__all__ = ["EnvState", "FlightEnv"]


class EnvState(eqx.Module):
    """The state of one environment (a pytree; batch it with ``vmap``).

    Attributes:
        vehicle: the :class:`~jaxrotor.dynamics.VehicleState`.
        t: ``()`` time [s].
        steps: ``()`` int, control periods taken since ``reset``.
    """

    vehicle: VehicleState
    t: Array
    steps: Array


class FlightEnv(eqx.Module):
    """A pure environment: ``reset(key)`` and ``step(state, action)`` (see the module docstring).

    Attributes:
        platform: the vehicle.
        flight: the :class:`~jaxrotor.flight.Flight` supplying the reference, the actuator
            models, the solver (``flight.integrator.solver``), ``t0``/``t1`` and the limits.
        control_dt: control period [s] (the action is held over it).
        substeps: solver steps per control period.
        reset_noise: largest initial position offset per axis [m].
        w_v, w_omega: reward weights of the velocity error [s^2] and body rate [m^2 s^2/rad^2].
    """

    platform: Platform
    flight: Flight
    control_dt: float = eqx.field(static=True, default=0.01)
    substeps: int = eqx.field(static=True, default=2)
    reset_noise: float = eqx.field(static=True, default=0.1)
    w_v: float = eqx.field(static=True, default=0.1)
    w_omega: float = eqx.field(static=True, default=0.01)

    def __check_init__(self):
        if not self.control_dt > 0:
            raise ValueError(f"FlightEnv parameter `control_dt` = {self.control_dt!r} is invalid: it must be > 0 s. "
                             "Fix: pass e.g. control_dt=0.01.")
        if not (isinstance(self.substeps, int) and self.substeps >= 1):
            raise ValueError(f"FlightEnv parameter `substeps` = {self.substeps!r} is invalid. Fix: pass an int >= 1.")
        if not self.reset_noise >= 0:
            raise ValueError(f"FlightEnv parameter `reset_noise` = {self.reset_noise!r} is invalid: it must be >= 0 m. "
                             "Fix: pass e.g. 0.1.")
        if self.platform.is_tilting:
            raise ValueError("FlightEnv parameter `platform` is a tilting platform; the action holds rotor inputs "
                             "only. Fix: fix its tilt angles (a fixed-tilt platform).")

    @property
    def action_size(self) -> int:
        """``n``, the number of rotors."""
        return int(self.platform.rotor_speed_max.shape[0])

    def reset(self, key: Array) -> EnvState:
        """At rest at ``reference(t0) + offset``, ``offset ~ U[-reset_noise, reset_noise]^3`` [m], hover speeds."""
        dtype = self.platform.mass.dtype
        t0 = jnp.asarray(self.flight.t0, dtype=dtype)
        ref = self.flight.reference(t0)
        offset = jax.random.uniform(key, (3,), dtype, -self.reset_noise, self.reset_noise)
        vehicle = initial_state(self.platform, p=ref.p + offset, R=ref.R, v=ref.v, rotor_speed="hover")
        return EnvState(vehicle=vehicle, t=t0, steps=jnp.asarray(0))

    def observe(self, state: EnvState) -> Array:
        """``(18,)`` observation ``[e_p, e_v, vec(R), omega]``."""
        ref = self.flight.reference(state.t)
        s = state.vehicle
        return jnp.concatenate([ref.p - s.p, ref.v - s.v, s.R.reshape(-1), s.omega])

    def _inputs(self, action: Array) -> Array:
        u = jnp.asarray(action, self.platform.mass.dtype) * hover_inputs(self.platform)
        return jnp.clip(u, self.platform.rotor_speed_min**2, self.platform.u_max)

    def step(self, state: EnvState, action: Array) -> tuple[EnvState, Array, Array, Array]:
        """Hold ``action`` for ``control_dt``; return ``(state, obs, reward, done)``.

        Args:
            state: the current :class:`EnvState`.
            action: ``(n,)`` rotor inputs over the hover inputs (``u_i = a_i u_hover,i``, clipped).
        """
        cmd = RotorCommand(u=self._inputs(action))
        solver = self.flight.integrator.solver
        platform, actuators = self.platform, self.flight.actuators
        term = diffrax.ODETerm(lambda t, y, args: vehicle_derivative(platform, actuators, y, cmd)[0])
        h = self.control_dt / self.substeps

        def sub(carry, _):
            y, t = carry
            t1 = t + h
            y1, _, _, _, _ = solver.step(term, t, t1, y, None, solver.init(term, t, t1, y, None), False)
            return (y1, t1), None

        (vehicle, t), _ = jax.lax.scan(sub, (state.vehicle, state.t), None, length=self.substeps)
        new = EnvState(vehicle=vehicle, t=t, steps=state.steps + 1)
        obs = self.observe(new)
        e_p, e_v, omega = obs[:3], obs[3:6], obs[15:]
        reward = -(e_p @ e_p + self.w_v * (e_v @ e_v) + self.w_omega * (omega @ omega)) * self.control_dt
        lim = self.flight.limits
        finite = jnp.all(jnp.isfinite(obs))
        runaway = ((jnp.linalg.norm(vehicle.p) > lim.max_position) | (jnp.linalg.norm(vehicle.v) > lim.max_speed)
                   | (jnp.linalg.norm(vehicle.omega) > lim.max_rate))
        done = (t >= self.flight.end_time - 0.5 * self.control_dt) | runaway | ~finite
        return new, obs, reward, done
