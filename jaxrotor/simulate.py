"""Simulation entry points built on :func:`jaxrotor.integrate.integrate`.

* :func:`simulate` flies the closed loop: reference -> controller -> wrench ->
  allocator -> ``u_cmd`` -> actuators -> rigid body, with the controller's
  integrator states carried in the integrated state.
* :func:`simulate_open_loop` integrates the vehicle under a given command
  ``t -> RotorCommand | WrenchCommand`` (the paper's block driven by ``u`` or by
  ``(f_c, tau_c)``).

Every function here is a pure function of pytrees: jit-compiled with
``eqx.filter_jit``, vmappable over platforms or initial states, and
differentiable with respect to every array leaf (take gradients through
fixed-step solves).
"""

from __future__ import annotations

from collections.abc import Callable

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array

from .allocators import AbstractAllocator, PseudoInverse
from .control import AbstractController
from .dynamics import Actuators, FirstOrderServo, RotorCommand, VehicleState, WrenchCommand, initial_state, vehicle_derivative
from .integrate import Integrator, integrate, save_times
from .platform import TILT_ANGLES, Platform
from .reference import AbstractReference
from .trajectory import Trajectory, divergence_flag

__all__ = ["simulate", "simulate_open_loop", "DivergenceLimits", "ClosedLoop"]


class DivergenceLimits(eqx.Module):
    """Runaway limits beyond which a rollout is reported as diverged.

    Attributes:
        max_position: largest ``|p_k|`` [m].
        max_speed: largest ``|v_k|`` [m/s].
        max_rate: largest ``|omega_k|`` [rad/s].
    """

    max_position: float = eqx.field(static=True, default=1e3)
    max_speed: float = eqx.field(static=True, default=1e3)
    max_rate: float = eqx.field(static=True, default=1e3)


def _open_loop_field(t, y, args):
    platform, actuators, command, external_force = args
    f_ext = None if external_force is None else external_force(t)
    dy, _ = vehicle_derivative(platform, actuators, y, command(t), f_ext)
    return dy


@eqx.filter_jit
def simulate_open_loop(
    platform: Platform,
    command: Callable[[Array], RotorCommand | WrenchCommand],
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

    Returns:
        A :class:`Trajectory` (reference fields are zeros/identity).
    """
    ts = save_times(t0, t1, save_dt)
    args = (platform, actuators, command, external_force)
    sol = integrate(_open_loop_field, state0, t0, t1, args=args, integrator=integrator, ts=ts, jump_ts=jump_ts)
    ys: VehicleState = sol.ys

    def outputs(t, y):
        f_ext = None if external_force is None else external_force(t)
        cmd = command(t)
        _, out = vehicle_derivative(platform, actuators, y, cmd, f_ext)
        u_cmd = cmd.u if isinstance(cmd, RotorCommand) else jnp.zeros_like(y.rotor_speed)
        return out, u_cmd

    outs, u_cmd = jax.vmap(outputs)(sol.ts, ys)
    wrench = jnp.concatenate([outs.force, outs.torque], axis=-1)
    T, dtype = sol.ts.shape[0], ys.p.dtype
    zeros3 = jnp.zeros((T, 3), dtype=dtype)
    return _assemble(sol, ys, outs, limits, u_cmd=u_cmd, wrench_requested=wrench, wrench_achieved=wrench,
                     saturated=jnp.zeros(u_cmd.shape, dtype=bool), p_ref=zeros3, v_ref=zeros3, a_ref=zeros3,
                     R_ref=jnp.broadcast_to(jnp.eye(3, dtype=dtype), (T, 3, 3)), controller_state=None)


def _assemble(sol, states: VehicleState, outs, limits: DivergenceLimits, **fields) -> Trajectory:
    """Build a :class:`Trajectory` from a diffrax solution, its saved states and the outputs at the save times."""
    solver_ok = sol.result == diffrax.RESULTS.successful
    return Trajectory(
        t=sol.ts,
        p=states.p,
        v=states.v,
        R=states.R,
        omega=states.omega,
        accel=outs.accel,
        angular_accel=outs.angular_accel,
        u=outs.u,
        rotor_speed=outs.rotor_speed,
        alpha=outs.alpha,
        beta=outs.beta,
        diverged=divergence_flag(states.p, states.v, states.omega, solver_ok, limits.max_position, limits.max_speed,
                                 limits.max_rate),
        solver_ok=solver_ok,
        num_steps=sol.stats["num_accepted_steps"],
        **fields,
    )



# --------------------------------------------------------------------------- closed loop


class ClosedLoop(eqx.Module):
    """Everything one closed-loop vector field needs (a pytree: every array leaf is differentiable).

    Attributes:
        platform, controller, allocator, actuators, reference: the loop's parts.
        tilt_command: optional ``t -> (alpha, beta)`` servo commands for a tilting
            platform (``None`` keeps the platform's angles).
        disturbance: optional ``t -> (3,)`` world-frame external force [N].
    """

    platform: Platform
    controller: AbstractController
    allocator: AbstractAllocator
    actuators: Actuators
    reference: AbstractReference
    tilt_command: Callable | None = None
    disturbance: Callable | None = None

    def tilt(self, t, state: VehicleState):
        """Commanded and applied tilt angles, ``((alpha_cmd, beta_cmd), (alpha, beta))``.

        ``None`` stands for the platform's own angles (every fixed angle set). For a
        tilting set the allocator uses the servo state with a lagged servo and the
        command with an ideal one, so it always sees the geometry the rotors have.
        """
        if not (self.platform.is_tilting and self.tilt_command is not None):
            return (None, None), (None, None)
        lagged = isinstance(self.actuators.servo, FirstOrderServo)
        commanded, applied = [], []
        for key, cmd in zip(TILT_ANGLES, self.tilt_command(t)):
            moving = key in self.platform.tilting
            commanded.append(cmd if moving else None)
            applied.append((getattr(state, key) if lagged else cmd) if moving else None)
        return tuple(commanded), tuple(applied)

    def step(self, t, y, alloc_data):
        """Vector field body: returns ``(dy, (outputs, allocation, reference sample))``."""
        state, integral = y
        ref = self.reference(t)
        w_des, d_integral = self.controller(self.platform, state, integral, ref)
        (a_cmd, b_cmd), (alpha, beta) = self.tilt(t, state)
        data = alloc_data if alloc_data is not None else self.allocator.prepare(self.platform, alpha, beta)
        alloc = self.allocator(data, w_des)
        cmd = RotorCommand(u=alloc.u, alpha=a_cmd, beta=b_cmd)
        f_ext = None if self.disturbance is None else self.disturbance(t)
        d_state, out = vehicle_derivative(self.platform, self.actuators, state, cmd, f_ext)
        return (d_state, d_integral), (out, alloc, ref)


def _closed_loop_field(t, y, args):
    loop, alloc_data = args
    dy, _ = loop.step(t, y, alloc_data)
    return dy


def simulate(
    platform: Platform,
    controller: AbstractController,
    reference: AbstractReference,
    *,
    allocator: AbstractAllocator = PseudoInverse(),
    actuators: Actuators = Actuators(),
    state0: VehicleState | None = None,
    t0: float = 0.0,
    t1: float | None = None,
    integrator: Integrator = Integrator(rtol=1e-9, atol=1e-11),
    save_dt: float = 0.01,
    tilt_command: Callable | None = None,
    disturbance: Callable | None = None,
    limits: DivergenceLimits = DivergenceLimits(),
) -> Trajectory:
    """Fly ``platform`` under ``controller`` along ``reference`` (the closed loop of docs/closed_loop.md).

    ``reference(t) -> controller -> body wrench -> allocator -> u_cmd ->
    actuators (motor lag, tilt servos) -> eqs. (11)-(12)``, integrated by diffrax.
    The controller's integrator states ride in the ODE state. No step straddles a
    reference jump (``reference.jump_times``), adaptive or fixed-step.

    Args:
        platform: the vehicle.
        controller: e.g. :class:`jaxrotor.control.FullyActuatedSE3`.
        reference: e.g. :func:`jaxrotor.reference.paper_maneuver`.
        allocator: wrench -> inputs (default exact pseudo-inverse, unbounded).
        actuators: motor and servo models (default ideal: the paper's analytic setup).
        state0: initial state; default at rest at ``reference(t0)`` with the
            reference attitude and hover rotor speeds.
        t0, t1: time span [s]; ``t1`` defaults to ``reference.duration``.
        integrator: adaptive Tsit5 by default (``rtol=1e-9``, ``atol=1e-11``); fixed step for gradients.
        save_dt: output period [s].
        tilt_command: ``t -> (alpha, beta)`` for a tilting platform.
        disturbance: ``t -> (3,)`` world-frame external force [N].
        limits: runaway limits for ``Trajectory.diverged``.

    Returns:
        A :class:`Trajectory` with the reference, requested/achieved wrench and
        saturation flags; ``diverged`` is set (never a silent NaN) if the flight
        became non-finite, ran away, or the solver failed.
    """
    _check_closed_loop(platform, controller, save_dt, t0, reference.duration if t1 is None else t1)
    return _simulate(platform, controller, reference, allocator=allocator, actuators=actuators, state0=state0, t0=t0,
                     t1=t1, integrator=integrator, save_dt=save_dt, tilt_command=tilt_command, disturbance=disturbance,
                     limits=limits)


def _check_closed_loop(platform, controller, save_dt, t0, t1) -> None:
    """Errors that would otherwise surface as a bad flight: raised before compiling (concrete inputs only)."""
    import numpy as np

    from .allocation import allocation_matrix
    from .control import FullyActuatedSE3
    from .platform import _is_concrete

    if not float(t1) > float(t0):
        raise ValueError(f"simulate: `t1` = {t1!r} must be after `t0` = {t0!r}. Fix: pass t1 > t0 (or a reference "
                         "with a positive duration).")
    if not (save_dt > 0 and np.isfinite(save_dt)):
        raise ValueError(f"simulate: `save_dt` = {save_dt!r} is invalid: the output period must be > 0 s. "
                         "Fix: pass e.g. save_dt=0.01.")
    if isinstance(controller, FullyActuatedSE3) and not platform.is_tilting and _is_concrete(platform):
        rank = int(np.linalg.matrix_rank(np.asarray(allocation_matrix(platform)), tol=1e-9 * float(
            np.abs(np.asarray(allocation_matrix(platform))).max())))
        if rank < 6:
            raise ValueError(
                f"simulate: `controller` = FullyActuatedSE3 needs a fully actuated platform (rank G = 6), but "
                f"platform {platform.name!r} ({platform.label()}) has rank G = {rank}: it cannot produce the lateral "
                "body forces this controller commands. Fix: use jaxrotor.control.UnderactuatedSE3 for collinear "
                "platforms, or tilt the rotors."
            )


@eqx.filter_jit
def _simulate(platform, controller, reference, *, allocator, actuators, state0, t0, t1, integrator, save_dt,
              tilt_command, disturbance, limits) -> Trajectory:
    """Jit-compiled body of :func:`simulate`."""
    t1 = reference.duration if t1 is None else float(t1)
    if state0 is None:
        ref0 = reference(jnp.asarray(t0, dtype=platform.mass.dtype))
        state0 = initial_state(platform, p=ref0.p, R=ref0.R, v=ref0.v, rotor_speed="hover")
    loop = ClosedLoop(platform, controller, allocator, actuators, reference, tilt_command, disturbance)
    alloc_data = None if (platform.is_tilting and tilt_command is not None) else allocator.prepare(platform)
    y0 = (state0, controller.init_state(platform))
    ts = save_times(t0, t1, save_dt)
    sol = integrate(_closed_loop_field, y0, t0, t1, args=(loop, alloc_data), integrator=integrator, ts=ts,
                    jump_ts=reference.jump_times)
    ys_state, ys_int = sol.ys

    def outputs(t, y):
        _, (out, alloc, ref) = loop.step(t, y, alloc_data)
        return out, alloc, ref

    outs, alloc, ref = jax.vmap(outputs)(sol.ts, sol.ys)
    return _assemble(sol, ys_state, outs, limits, u_cmd=alloc.u, wrench_requested=alloc.requested, wrench_achieved=alloc.achieved,
                     saturated=alloc.saturated, p_ref=ref.p, v_ref=ref.v, a_ref=ref.a, R_ref=ref.R,
                     controller_state=ys_int)
