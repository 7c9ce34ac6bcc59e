"""The physics layer under MJX: the same MuJoCo model and the same loop as one JAX function.

:func:`make_mjx_flight` returns a pure function ``flight_fn(controller, model) ->
MJXFlight`` that flies ``n_ticks`` control periods of a flight: at each tick the
flight computer of :func:`jaxrotor.physics.engine.fly_physics` (the very same
compiled step, :func:`~jaxrotor.physics.engine.control_step`) and ``k`` calls of
``mujoco.mjx.step``, under ``jax.lax.scan``. It can be ``jax.jit``-compiled,
``jax.vmap``-ed over controllers or MJX models (e.g. ``body_mass``,
``actuator_gear``) and differentiated (``jax.grad``) with respect to any array
leaf of both. MuJoCo C (:func:`~jaxrotor.physics.engine.fly_physics`) is its
numerical reference; in float64 the two agree to round-off (``tests/test_physics_mjx.py``).

MJX supports the generated model as is (free joint, hinges, site and joint
actuators, sphere-plane contacts); on CPU it is slower per flight than the C
engine, its strength is batches (``vmap``) and gradients.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from mujoco import mjx

from .. import so3
from ..control import AbstractController
from ..design.platform import TILT_ANGLES, Platform, per_rotor_angles
from ..flight import Flight
from . import engine
from .engine import PhysicsSettings
from .mjcf import PhysicsModel

__all__ = ["MJXFlight", "make_mjx_flight", "put_model"]


class MJXFlight(eqx.Module):
    """An MJX flight sampled at every control tick (leading axis ``n_ticks + 1``).

    Attributes:
        t: times [s]. p: ``(N, 3)`` world position of the centre of mass [m].
        quat: ``(N, 4)`` attitude ``(w, x, y, z)``. v: ``(N, 3)`` world velocity [m/s].
        omega: ``(N, 3)`` body rate [rad/s]. rotor_speed: ``(N, n)`` propeller hinge speeds [rad/s].
        u: ``(N, n)`` applied thrust inputs [rad^2/s^2].
    """

    t: jax.Array
    p: jax.Array
    quat: jax.Array
    v: jax.Array
    omega: jax.Array
    rotor_speed: jax.Array
    u: jax.Array

    @property
    def R(self) -> jax.Array:
        """``(N, 3, 3)`` attitude matrices (body to world)."""
        return jax.vmap(so3.quat_to_rot)(self.quat)


def put_model(pm: PhysicsModel) -> mjx.Model:
    """The MJX copy of a generated model (``mujoco.mjx.put_model``)."""
    return mjx.put_model(pm.model)


def make_mjx_flight(pm: PhysicsModel, platform: Platform, flight: Flight, settings: PhysicsSettings,
                    n_ticks: int, controller_platform: Platform | None = None):
    """Build ``flight_fn(controller, model) -> MJXFlight``: ``n_ticks`` control periods from ``flight.t0``.

    Args:
        pm: the generated model (gives the layout of controls and joints).
        platform: the platform it was built from (geometry, motor bounds).
        flight: the flight (reference, allocator, actuators, initial state).
        settings: control period and engine options (as for :func:`~jaxrotor.physics.engine.fly_physics`).
        n_ticks: number of control periods (static).
        controller_platform: the platform the controller sees (default ``pm.physics_platform()``).

    Returns:
        A pure function of ``(controller, mjx_model)``; wrap it in ``jax.jit``, ``jax.vmap``, ``jax.grad``.
    """
    for name, what in (("sensors", "measurement noise and delay"), ("wind", "wind and drag"),
                       ("disturbance", "an external force")):
        if getattr(flight, name, None) is not None:
            raise ValueError(f"make_mjx_flight: `flight.{name}` is set, but the MJX flight does not model {what}. "
                             f"Fix: fly it on the MuJoCo C engine (jaxrotor.physics.engine.fly_physics), or set "
                             f"flight.{name} = None for MJX.")
    settings = settings.for_flight(flight)
    plat_ctrl = controller_platform if controller_platform is not None else pm.physics_platform()
    n, k, nu = platform.n_rotors, settings.steps_per_control, pm.model.nu
    a_size, b_size = int(np.size(platform.alpha)), int(np.size(platform.beta))
    state0 = flight.initial_state(platform)
    alloc_data = flight.allocation_data(plat_ctrl)
    qpos0 = pm.initial_qpos()
    sign = np.asarray(pm.spin_sign)
    dt = settings.control_period
    t0 = float(flight.t0)

    def flight_fn(controller: AbstractController, model: mjx.Model) -> MJXFlight:
        dtype = plat_ctrl.mass.dtype
        int0 = controller.init_state(plat_ctrl)
        flat_int0, unravel_int = ravel_pytree(int0)
        in_layout = engine.FlatLayout([("p", 3), ("quat", 4), ("v", 3), ("omega", 3), ("motor", n), ("alpha", a_size),
                                    ("beta", b_size), ("integral", flat_int0.size)])
        out_layout = engine.FlatLayout([("ctrl", k * nu), ("motor", n), ("alpha", a_size), ("beta", b_size),
                                     ("integral", flat_int0.size), ("u", n)])
        qpos = jnp.asarray(qpos0, dtype=dtype).at[0:3].set(state0.p).at[3:7].set(so3.rot_to_quat(state0.R))
        angles = dict(zip(TILT_ANGLES, per_rotor_angles(platform, state0.alpha, state0.beta)))
        for key, adr in pm.tilt_qpos.items():
            qpos = qpos.at[adr].set(angles[key])
        qvel = jnp.zeros(model.nv, dtype=dtype).at[0:3].set(state0.v).at[3:6].set(state0.omega)
        if pm.options.spin:
            qvel = qvel.at[pm.spin_qvel].set(jnp.asarray(sign, dtype) * state0.rotor_speed)
        d0 = mjx.make_data(model).replace(qpos=qpos, qvel=qvel)
        d0 = mjx.forward(model, d0)
        x0 = jnp.concatenate([jnp.zeros(13, dtype), jnp.asarray(state0.rotor_speed, dtype),
                              jnp.ravel(state0.alpha).astype(dtype), jnp.ravel(state0.beta).astype(dtype),
                              flat_int0.astype(dtype)])

        def rotor_speed(d):
            return jnp.abs(d.qvel[pm.spin_qvel]) if pm.options.spin else jnp.zeros(n, dtype)

        def tick(carry, i):
            d, x = carry
            t = t0 + i * dt
            x = x.at[in_layout["p"]].set(d.qpos[0:3]).at[in_layout["quat"]].set(d.qpos[3:7])
            x = x.at[in_layout["v"]].set(d.qvel[0:3]).at[in_layout["omega"]].set(d.qvel[3:6])
            y = engine.control_step(plat_ctrl, platform, controller, flight, alloc_data, settings, pm, in_layout,
                                     unravel_int, t, x)
            sample = (d.qpos[0:3], d.qpos[3:7], d.qvel[0:3], d.qvel[3:6], rotor_speed(d), y[out_layout["u"]])
            ctrl = y[out_layout["ctrl"]].reshape(k, nu)

            def sub(d, row):
                return mjx.step(model, d.replace(ctrl=row)), None

            d, _ = jax.lax.scan(sub, d, ctrl)
            x = (x.at[in_layout["motor"]].set(y[out_layout["motor"]]).at[in_layout["alpha"]].set(y[out_layout["alpha"]])
                 .at[in_layout["beta"]].set(y[out_layout["beta"]]).at[in_layout["integral"]].set(y[out_layout["integral"]]))
            return (d, x), sample

        (d_end, _), samples = jax.lax.scan(tick, (d0, x0), jnp.arange(n_ticks))
        last = (d_end.qpos[0:3], d_end.qpos[3:7], d_end.qvel[0:3], d_end.qvel[3:6], rotor_speed(d_end),
                samples[5][-1])
        p, quat, v, w, rs, u = (jnp.concatenate([s, l[None]]) for s, l in zip(samples, last))
        return MJXFlight(t=t0 + dt * jnp.arange(n_ticks + 1, dtype=dtype), p=p, quat=quat, v=v, omega=w,
                         rotor_speed=rs, u=u)

    return flight_fn
