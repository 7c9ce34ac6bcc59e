"""The continuous-time flight: the controller inside the ODE (the paper's analytic setting).

The analytic plant's branch of :func:`jaxrotor.fly` when ``flight.control_rate`` is ``None``
(``docs/closed_loop.md``)::

    reference(t) -> controller(state) -> body wrench -> allocator -> u_cmd
        -> actuators (motor lag, tilt servos) -> eqs. (1)-(2), (11)-(12) -> diffrax

The controller's integrator states ride in the ODE state, the allocator's matrices are
prepared once for a fixed geometry, and no step straddles a reference jump (adaptive or
fixed-step: every :class:`~jaxrotor.integrate.Integrator` option is honoured by
:func:`jaxrotor.integrate.integrate`). The disturbance force is evaluated at every stage
(continuous in time); there are no sensors and no wind (they need a control rate): the
aerodynamics (``flight.aero``) act in still air.
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax

from .control import AbstractController
from .design.platform import Platform
from .dynamics import FaultState, vehicle_derivative
from .flight import Flight, flight_computer
from .integrate import integrate
from .trajectory import Trajectory, assemble_trajectory

__all__ = ["fly_continuous"]


def _closed_loop(platform, controller, flight, t, y, alloc_data):
    state, integral = y
    cmd, d_integral, alloc, ref = flight_computer(platform, controller, flight, t, state, integral, alloc_data)
    f_ext = None if flight.disturbance is None else flight.disturbance(t)
    fault = FaultState.at(flight.faults, platform.n_rotors, t)
    d_state, out = vehicle_derivative(platform, flight.actuators, state, cmd, f_ext, fault, flight.aero)
    R_cmd = controller.commanded_attitude(platform, state, integral, ref)  # recorded only (dropped in the ODE)
    return (d_state, d_integral), (out, alloc, ref, R_cmd)


def _field(t, y, args):
    platform, controller, flight, alloc_data = args
    return _closed_loop(platform, controller, flight, t, y, alloc_data)[0]


@eqx.filter_jit
def fly_continuous(platform: Platform, controller: AbstractController, flight: Flight) -> Trajectory:
    """Fly ``flight`` with the controller evaluated inside the vector field (module docstring).

    Jit-compiled (``eqx.filter_jit``), vmappable over any array leaf and differentiable with
    respect to all of them (take gradients through fixed-step solves). Called by
    :func:`jaxrotor.fly` through :meth:`jaxrotor.AnalyticPlant.fly_continuous`; the
    checks of :meth:`jaxrotor.Flight.check` are made there.
    """
    alloc_data = flight.allocation_data(platform)
    y0 = (flight.initial_state(platform), controller.init_state(platform))
    sol = integrate(_field, y0, flight.t0, flight.end_time, args=(platform, controller, flight, alloc_data),
                    integrator=flight.integrator, ts=flight.save_times, jump_ts=flight.reference.jump_times)
    states, integrals = sol.ys

    def outputs(t, y):
        return _closed_loop(platform, controller, flight, t, y, alloc_data)[1]

    outs, alloc, ref, R_cmd = jax.vmap(outputs)(sol.ts, sol.ys)
    return assemble_trajectory(sol.ts, states, outs, flight.limits, solver_ok=sol.result == diffrax.RESULTS.successful,
                               num_steps=sol.stats["num_accepted_steps"], u_cmd=alloc.u,
                               wrench_requested=alloc.requested, wrench_achieved=alloc.achieved,
                               saturated=alloc.saturated, p_ref=ref.p, v_ref=ref.v, a_ref=ref.a, R_ref=ref.R,
                               controller_state=integrals, R_cmd=R_cmd)
