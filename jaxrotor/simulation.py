"""Simulation entry points on the analytic layer.

* :func:`simulate` flies the closed loop: a convenience that builds a
  :class:`~jaxrotor.flight.Flight` from keyword arguments and calls
  :func:`jaxrotor.fly` on a plant (default the analytic one).
* :func:`simulate_open_loop` integrates the vehicle under a given command
  ``t -> RotorCommand | WrenchCommand`` (the paper's block driven by ``u`` or by
  ``(f_c, tau_c)``).

Both are pure functions of pytrees: jit-compiled, vmappable over platforms or
initial states, and differentiable with respect to every array leaf (take
gradients through fixed-step solves).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array

from .aero import Aerodynamics
from .control import AbstractController
from .design.platform import Platform
from .dynamics import AbstractCommand, Actuators, VehicleState, vehicle_derivative
from .flight import DivergenceLimits, Flight
from .integrate import Integrator, integrate, save_times
from .loop import fly
from .plant import AbstractPlant, AnalyticPlant
from .reference import AbstractReference
from .trajectory import Trajectory, assemble_trajectory

__all__ = ["simulate", "simulate_open_loop"]


def _air_at(air, t):
    return air(t) if callable(air) else air


def _open_loop_field(t, y, args):
    platform, actuators, command, external_force, aero, air = args
    f_ext = None if external_force is None else external_force(t)
    dy, _ = vehicle_derivative(platform, actuators, y, command(t), f_ext, None, aero, _air_at(air, t))
    return dy


@eqx.filter_jit
def simulate_open_loop(
    platform: Platform,
    command: Callable[[Array], AbstractCommand],
    state0: VehicleState,
    t1: float,
    *,
    t0: float = 0.0,
    actuators: Actuators = Actuators(),
    integrator: Integrator = Integrator(),
    save_dt: float = 0.01,
    jump_ts: tuple[float, ...] = (),
    external_force: Callable[[Array], Array] | None = None,
    limits: DivergenceLimits = DivergenceLimits(),
    aero: Aerodynamics | None = None,
    air: Array | Callable[[Array], Array] | None = None,
) -> Trajectory:
    """Integrate eqs. (1)-(2), (11)-(12) with actuator models under an open-loop command.

    Args:
        platform: the vehicle.
        command: ``command(t)`` returns a :class:`RotorCommand` (inputs ``u`` and tilt
            angles, through the motor/servo models) or a :class:`WrenchCommand`
            (body wrench applied directly). A plain function is static; an equinox
            Module with ``__call__`` is a pytree whose leaves can be differentiated.
        state0: initial :class:`VehicleState` (see :func:`jaxrotor.initial_state`).
        t1: final time [s]. t0: initial time [s].
        actuators: motor and servo models (default ideal).
        integrator: adaptive (default) or fixed-step settings.
        save_dt: output sampling period [s].
        jump_ts: times at which ``command`` is discontinuous; no step straddles them.
        external_force: optional ``t -> (3,)`` world-frame force [N].
        limits: runaway limits for the ``diverged`` flag.
        aero: the rotors' and body's :class:`~jaxrotor.aero.Aerodynamics` (``None``: none).
        air: the world air velocity [m/s] the aerodynamics act in: ``(3,)``, or ``t -> (3,)``; ``None``: still air.

    Returns:
        A :class:`Trajectory` (reference fields are zeros/identity).
    """
    ts = save_times(t0, t1, save_dt)
    args = (platform, actuators, command, external_force, aero, air)
    sol = integrate(_open_loop_field, state0, t0, t1, args=args, integrator=integrator, ts=ts, jump_ts=jump_ts)
    ys: VehicleState = sol.ys

    def outputs(t, y):
        f_ext = None if external_force is None else external_force(t)
        cmd = command(t)
        _, out = vehicle_derivative(platform, actuators, y, cmd, f_ext, None, aero, _air_at(air, t))
        u_cmd = cmd.commanded_inputs(y.rotor_speed)
        return out, u_cmd

    outs, u_cmd = jax.vmap(outputs)(sol.ts, ys)
    wrench = jnp.concatenate([outs.force, outs.torque], axis=-1)
    T, dtype = sol.ts.shape[0], ys.p.dtype
    zeros3 = jnp.zeros((T, 3), dtype=dtype)
    return assemble_trajectory(sol.ts, ys, outs, limits, solver_ok=sol.result == diffrax.RESULTS.successful,
                               num_steps=sol.stats["num_accepted_steps"], u_cmd=u_cmd, wrench_requested=wrench,
                               wrench_achieved=wrench, saturated=jnp.zeros(u_cmd.shape, dtype=bool), p_ref=zeros3,
                               v_ref=zeros3, a_ref=zeros3, R_ref=jnp.broadcast_to(jnp.eye(3, dtype=dtype), (T, 3, 3)),
                               controller_state=None)


def simulate(platform: Platform, controller: AbstractController, reference: AbstractReference, *,
             plant: AbstractPlant = AnalyticPlant(), **flight_fields) -> Trajectory:
    """Fly ``platform`` under ``controller`` along ``reference``: ``fly(platform, controller, Flight(...), plant)``.

    Every keyword besides ``plant`` is the :class:`~jaxrotor.flight.Flight` field of the same
    name (``allocator``, ``actuators``, ``integrator``, ``save_dt``, ``t0``, ``t1``, ``limits``,
    ``tilt_command``, ``disturbance``, ``state0``, ``control_rate``, ``sensors``, ``wind``, ``key``;
    see there for units and defaults), so it cannot fall behind the ``Flight``. The default
    integrator is adaptive Tsit5 with tolerances that follow the floating-point type.

    Raises:
        ValueError: for a keyword that is not a ``Flight`` field (naming it and the fields there are).

    Returns:
        A :class:`Trajectory`; ``diverged`` is set (never a silent NaN) if the flight
        became non-finite, ran away, or the solver failed.
    """
    fields = {f.name for f in dataclasses.fields(Flight)} - {"reference"}
    unknown = sorted(set(flight_fields) - fields)
    if unknown:
        raise ValueError(f"simulate: unknown keyword(s) {unknown}: not fields of jaxrotor.Flight. Fix: pass any of "
                         f"{sorted(fields)} or `plant`.")
    return fly(platform, controller, Flight(reference=reference, **flight_fields), plant)
