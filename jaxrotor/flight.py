"""One description of a flight, and the flight computer's decision at one instant.

A :class:`Flight` holds everything about a flight except the vehicle
(:class:`~jaxrotor.design.platform.Platform`), its controller and the plant it is flown
on: the reference, the allocator, the actuator models, the integrator, the output
period, the horizon, the runaway limits, an external disturbance, a tilt command, the
initial state, the control rate, sensors, wind, aerodynamics, faults and the key of their random draws.
``simulate``, the TOML loader (:mod:`jaxrotor.io.config`), the optimizer
(:mod:`jaxrotor.optimize`), the CLI and every plant take a ``Flight``;
:func:`jaxrotor.fly` (:mod:`jaxrotor.loop`) flies one on any plant.

:func:`flight_computer` is the plant-independent part of one control evaluation::

    reference(t) -> controller(state) -> body wrench -> allocator -> u_cmd (+ tilt command)

which the tick (:mod:`jaxrotor.tick`) runs at each control instant and the
continuous-time loop (:mod:`jaxrotor.continuous`) inside the vector field.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import Bool, Float

from .allocation import allocation_rank
from .allocators import (BOX_TABLE_MAX_INPUTS, AbstractAllocator, Allocation, AllocationData, BoxLS, PseudoInverse,
                         allocation_record)
from .control import AbstractController, axis_wrench, force_direction, primary_axis_wrench, relaxed_force
from .design.platform import TILT_ANGLES, Platform, is_concrete
from .dynamics import Actuators, IdealServo, RotorCommand, VehicleState, initial_state
from .faults import FULL_POSE_MARGIN, Faults, known_effectiveness, known_phase, known_phases, known_stuck
from .integrate import Integrator, save_times
from . import linalg
from .reference import AbstractReference, RefSample
from .sensors import Sensors
from .tilted import axis_problem, hover_axis
from .tilting import check_tilt_flight
from .aero import Aerodynamics
from .wind import Wind

__all__ = ["DivergenceLimits", "Flight", "FaultPlan", "FaultPhases", "fault_aware", "fault_phases", "flight_computer", "yaw_released_allocation", "yaw_released_problem",
           "RELEASED_YAW_WEIGHT", "RELEASED_RIDGE", "RELEASED_ALLOCATOR"]


class DivergenceLimits(eqx.Module):
    """Runaway limits beyond which a rollout is reported as diverged.

    Attributes:
        max_position: largest ``|p_k|`` [m] (Euclidean norm of the world position).
        max_speed: largest ``|v_k|`` [m/s].
        max_rate: largest ``|omega_k|`` [rad/s] (body rate).
    """

    max_position: float = eqx.field(static=True, default=1e3)
    max_speed: float = eqx.field(static=True, default=1e3)
    max_rate: float = eqx.field(static=True, default=1e3)

    def __check_init__(self):
        for name in ("max_position", "max_speed", "max_rate"):
            v = getattr(self, name)
            if not (v > 0):
                raise ValueError(f"DivergenceLimits parameter `{name}` = {v!r} is invalid: it must be > 0. "
                                 "Fix: pass a positive limit, e.g. 1e3.")


class Flight(eqx.Module):
    """Everything one flight needs besides the vehicle and its controller (a pytree).

    Every array leaf is differentiable (e.g. ``flight.actuators.motor.time_constant``);
    the output period and the horizon are static.

    Attributes:
        reference: the reference trajectory (e.g. :func:`jaxrotor.reference.paper_maneuver`).
        allocator: body wrench -> rotor inputs (default exact pseudo-inverse, unbounded).
        actuators: motor and servo models (default ideal: the paper's analytic setup).
        integrator: solver settings; default adaptive Tsit5 whose tolerances follow the
            floating-point type (:class:`~jaxrotor.integrate.Integrator`). Use a fixed step for gradients.
        save_dt: output period [s].
        t0: start time [s].
        t1: end time [s]; ``None`` flies to ``t0 + reference.duration``.
        limits: runaway limits for ``Trajectory.diverged``.
        tilt_command: ``t -> (alpha, beta)`` servo commands for a tilting platform (``None``
            keeps the platform's angles).
        disturbance: ``t -> (3,)`` world-frame external force [N] at the centre of mass (``None`` for
            none); evaluated at every stage in the continuous loop, sampled at each tick and held
            over the control interval at a control rate (as the wind).
        state0: initial state; ``None`` starts at rest at ``reference(t0)`` with the
            reference attitude and the hover rotor speeds.
        control_rate: flight-computer rate [Hz] (static); ``None`` (default) is the continuous
            loop on the analytic plant and one tick per engine step on the physics plants. Set,
            :func:`jaxrotor.fly` runs the tick of :mod:`jaxrotor.tick` at this rate (zero-order hold
            of the rotor commands, the plant stepped between ticks).
        sensors: a :class:`~jaxrotor.sensors.Sensors` (noise, bias, delay in ticks) the controller
            sees the state through (discrete-rate loop only; ``None``: the true state).
        wind: a :class:`~jaxrotor.wind.Wind` (mean, Ornstein-Uhlenbeck gust, drag) (discrete-rate
            loop only; ``None``: still air, no drag).
        key: ``jax.random`` key driving the sensor noise and the gusts (required with either).
        faults: the :class:`~jaxrotor.faults.Faults` of the flight (rotor loss, partial loss, a rotor or a
            servo stuck; ``None``: none). The plant applies them; the flight computer learns of each after
            its detection delay and allocates around it (:func:`flight_computer`).
        aero: the :class:`~jaxrotor.aero.Aerodynamics` of the rotors and the body (rotor drag, induced
            inflow, translational lift, flapping, parasitic drag, ground effect; ``None``: none). Every plant
            applies it at its own velocities, in the wind's air when there is wind.
    """

    reference: AbstractReference
    allocator: AbstractAllocator = PseudoInverse()
    actuators: Actuators = Actuators()
    integrator: Integrator = Integrator()
    save_dt: float = eqx.field(static=True, default=0.01)
    t0: float = eqx.field(static=True, default=0.0)
    t1: float | None = eqx.field(static=True, default=None)
    limits: DivergenceLimits = DivergenceLimits()
    tilt_command: Callable | None = None
    disturbance: Callable | None = None
    state0: VehicleState | None = None
    control_rate: float | None = eqx.field(static=True, default=None)
    sensors: Sensors | None = None
    wind: Wind | None = None
    key: jax.Array | None = None
    faults: Faults | None = None
    aero: Aerodynamics | None = None

    def __check_init__(self):
        if not isinstance(self.reference, AbstractReference):
            raise ValueError(f"Flight parameter `reference` = {self.reference!r} is not a reference. "
                             "Fix: pass e.g. jaxrotor.reference.paper_maneuver() or reference.Hover(...).")
        rate = self.control_rate
        if rate is not None and not (isinstance(rate, (int, float)) and not isinstance(rate, bool)
                                     and np.isfinite(rate) and rate > 0):
            raise ValueError(f"Flight parameter `control_rate` = {rate!r} is invalid: it must be a finite rate "
                             "> 0 Hz. Fix: pass e.g. 500.0, or None for the continuous loop.")
        if not (isinstance(self.save_dt, (int, float)) and np.isfinite(self.save_dt) and self.save_dt > 0):
            raise ValueError(f"Flight parameter `save_dt` = {self.save_dt!r} is invalid: the output period must be "
                             "> 0 s. Fix: pass e.g. save_dt=0.01.")
        if not float(self.end_time) > float(self.t0):
            raise ValueError(f"Flight parameter `t1` = {self.end_time!r} must be after `t0` = {self.t0!r}. Fix: pass "
                             "t1 > t0 (or a reference with a positive duration).")

    @property
    def end_time(self) -> float:
        """The horizon's end ``t1`` [s] (the reference's end when ``t1`` is ``None``)."""
        return float(self.t0 + self.reference.duration) if self.t1 is None else float(self.t1)

    @property
    def save_times(self) -> np.ndarray:
        """``(T,)`` output times ``t0, t0 + save_dt, ..., t1`` [s]."""
        return save_times(self.t0, self.end_time, self.save_dt)

    def check_faults(self, platform: Platform) -> None:
        """Refuse, by name, fault events the flight cannot carry: a rotor outside the vehicle, a stuck rotor under
        a motor without a speed state, a stuck servo on a platform without per-rotor tilt servos or under an ideal
        servo (no angle state to hold)."""
        if self.faults is None:
            return
        self.faults.check(platform.n_rotors)
        if self.faults.kinds_present(("rotor_stuck",)) and not self.actuators.motor.integrates_speed():
            raise ValueError(f"Flight parameter `faults` has a rotor_stuck event, which holds a rotor at its "
                             f"speed, but the motor {type(self.actuators.motor).__name__} has no speed state. "
                             "Fix: fly a first-order or electric motor ([actuators.motor] kind = \"first_order\").")
        if self.faults.kinds_present(("servo_stuck",)) and not (platform.is_tilting and jnp.shape(
                platform.alpha) == (platform.n_rotors,)):
            raise ValueError(f"Flight parameter `faults` has a servo_stuck event, but platform "
                             f"{platform.name!r} has no per-rotor tilt servos. Fix: fly a tilting platform with "
                             "one angle per rotor, or drop the servo_stuck event.")
        if self.faults.kinds_present(("servo_stuck",)) and isinstance(self.actuators.servo, IdealServo):
            raise ValueError("Flight parameter `faults` has a servo_stuck event, which holds a tilt servo at its "
                             "angle, but the servo IdealServo has no angle state (it applies every command at "
                             "once). Fix: fly a first-order servo ([actuators.servo] kind = \"first_order\").")

    def check(self, platform: Platform, controller: AbstractController) -> None:
        """Errors that would otherwise surface as a bad flight, raised before compiling (concrete inputs only).

        The controller states the rank of the unit-consistent allocation matrix it
        needs (:attr:`~jaxrotor.control.AbstractController.required_rank`); a fixed-tilt
        platform with a lower rank is refused here.
        """
        check_tilt_flight(platform, controller, self)  # tilt-deciding allocators, servo limits, full-pose references
        self.check_faults(platform)
        need = controller.required_rank
        if platform.is_tilting or not is_concrete(platform) or need is None:
            return
        rows = slice(None) if need == 6 else slice(2, 6)  # 6: all of G; 4: the thrust and torque rows
        with jax.ensure_compile_time_eval():  # concrete even when fly() is called inside a jit with a closed-over platform
            rank = allocation_rank(platform, rows=rows)
        if rank < need:
            what = "G" if need == 6 else "[f_z; tau] (rows 3-6 of G)"
            raise ValueError(
                f"fly: `controller` = {type(controller).__name__} needs rank {what} = {need}, but platform "
                f"{platform.name!r} ({platform.label()}) has rank {rank}: it cannot produce the wrench this "
                "controller commands. Fix: use jaxrotor.control.UnderactuatedSE3 for collinear platforms, "
                "tilt the rotors, or add rotors."
            )

    def initial_state(self, platform: Platform) -> VehicleState:
        """``state0``, or at rest at ``reference(t0)`` with the reference attitude and hover rotor speeds; with a
        motor that draws current (:meth:`~jaxrotor.dynamics.AbstractMotor.draws_current`) the battery's state at
        take-off (:meth:`~jaxrotor.dynamics.AbstractMotor.initial_energy`) unless ``state0`` has one."""
        if self.state0 is not None:
            state = self.state0
        else:
            ref0 = self.reference(jnp.asarray(self.t0, dtype=platform.mass.dtype))
            state = initial_state(platform, p=ref0.p, R=ref0.R, v=ref0.v, rotor_speed="hover")
        if self.actuators.motor.draws_current() and state.energy is None:
            state = eqx.tree_at(lambda s: s.energy, state, self.actuators.motor.initial_energy(platform),
                                is_leaf=lambda x: x is None)
        return state

    def tilt(self, platform: Platform, t, state: VehicleState):
        """Commanded and applied tilt angles, ``((alpha_cmd, beta_cmd), (alpha, beta))``.

        ``None`` stands for the platform's own angles (every fixed angle set). For a
        tilting set the servo model says which angle the rotors have now
        (:meth:`~jaxrotor.dynamics.AbstractServo.applied`: the command for an ideal
        servo, the servo state for a lagged one), so the allocator always sees the
        geometry the rotors have.
        An allocator that decides the tilt (``allocator.decides_tilt``, :mod:`jaxrotor.tilting`)
        commands the servos itself in :func:`flight_computer`, by the same rule.
        """
        if not (platform.is_tilting and self.tilt_command is not None):
            return (None, None), (None, None)
        commanded, applied = [], []
        for key, cmd in zip(TILT_ANGLES, self.tilt_command(t)):
            if key not in platform.tilting:
                commanded.append(None)
                applied.append(None)
                continue
            current = getattr(state, key)
            commanded.append(cmd)
            applied.append(self.actuators.servo.applied(current, jnp.broadcast_to(cmd, current.shape))[0])
        return tuple(commanded), tuple(applied)

    def allocation_data(self, platform: Platform) -> AllocationData | None:
        """The allocator's geometry, prepared once when it is constant (``None`` when the tilt moves in flight).

        For a fixed-tilt quadrotor flying with faults (and yaw release allowed) it carries the relaxed hover of
        each single rotor loss (:func:`jaxrotor.relaxed.relaxed_table`, with the motor's lag, or
        :data:`RELAXED_MOTOR_LAG` for a motor without one, discretised at :data:`RELAXED_DT`). With step-onset
        faults (and a motor whose top speed does not follow a battery) it carries the flight computer's plan for
        each phase of what is known (:func:`fault_phases`): the pseudo-inverses, ranks and hover axes of
        :func:`fault_aware` are built here, once, not at every evaluation of the flight computer.
        """
        if platform.is_tilting and (self.tilt_command is not None or self.allocator.decides_tilt):
            return None
        data = self.allocator.prepare(platform)
        if (self.faults is not None and self.faults.release_yaw != "never" and platform.n_rotors == 4
                and not platform.is_tilting):  # static: a quadrotor that may lose a rotor and spin
            from .relaxed import relaxed_table

            lag = self.actuators.motor.lag_time_constant()
            lag = RELAXED_MOTOR_LAG if lag is None else lag
            data = eqx.tree_at(lambda d: d.relaxed, data, relaxed_table(platform, data.G, lag, RELAXED_DT),
                               is_leaf=lambda x: x is None)
        if (self.faults is not None and self.faults.onset == 0
                and not self.actuators.motor.draws_current()):  # static: the fault plans, once per flight
            data = eqx.tree_at(lambda d: d.fault_plans, data,
                               fault_phases(self.faults, data, platform.mass * platform.gravity),
                               is_leaf=lambda x: x is None)
        return data


def flight_computer(platform: Platform, controller: AbstractController, flight: Flight, t, state: VehicleState,
                    integral, alloc_data: AllocationData | None):
    """The engine-independent part of one control evaluation.

    ``reference(t) -> controller -> wrench -> allocator`` plus the tilt command (from
    ``flight.tilt_command``, or from the allocator itself when ``allocator.decides_tilt``:
    it commands the servos and allocates ``u`` at the angles they apply now).

    Returns:
        ``(command, d_integral, allocation, reference_sample)``: the
        :class:`~jaxrotor.dynamics.RotorCommand` for the plant, the controller's
        integrator-state derivative, the :class:`~jaxrotor.allocators.Allocation`
        record and the :class:`~jaxrotor.reference.RefSample`.
    """
    ref: RefSample = flight.reference(t)
    vehicle = platform
    if flight.actuators.motor.draws_current():  # static: the top speed follows the battery
        platform = flight.actuators.motor.supply_limited(platform, state)
        if alloc_data is not None:
            alloc_data = eqx.tree_at(lambda d: d.u_max, alloc_data, platform.u_max)
    if flight.allocator.decides_tilt and platform.is_tilting:  # angles and speeds from the allocator
        w_des, d_integral = controller(vehicle, state, integral, ref)
        alloc = flight.allocator.allocate_tilting(platform, w_des, state, flight.actuators.servo)
        return RotorCommand(u=alloc.u, alpha=alloc.alpha, beta=alloc.beta), d_integral, alloc, ref
    (a_cmd, b_cmd), (alpha, beta) = flight.tilt(platform, t, state)
    data = alloc_data if alloc_data is not None else flight.allocator.prepare(platform, alpha, beta)
    if flight.faults is None:
        w_des, d_integral = controller(vehicle, state, integral, ref)
        alloc: Allocation = flight.allocator(data, w_des)
        return RotorCommand(u=alloc.u, alpha=a_cmd, beta=b_cmd), d_integral, alloc, ref
    # static: allocate around the faults the flight computer knows of
    plan = fault_aware(flight.faults, data, state, t, weight=vehicle.mass * vehicle.gravity)
    w_des, d_integral = controller(vehicle, state, integral, ref)
    w_des = w_des - plan.held
    alloc = flight.allocator(plan.data, w_des)
    with_axis = flight.faults.release_yaw == "auto" and controller.tracks_attitude  # static: the tilted hover
    if with_axis:
        w_axis, d_axis = axis_wrench(controller, vehicle, state, integral, ref, plan.hover.axis)
        w_axis = w_axis - plan.held
        d_integral = jax.tree.map(lambda a, b: jnp.where(plan.tilted, a, b), d_axis, d_integral)
    if flight.faults.release_yaw != "never":  # static: the yaw-released allocation once it is needed
        spin_up = controller.required_rank == 4  # static: a collinear vehicle may have to spin (relaxed hover)
        if spin_up:
            f_relaxed = relaxed_force(controller, vehicle, state, integral, ref)
            w_spin, d_spin = primary_axis_wrench(controller, vehicle, state, integral, ref, f_w=f_relaxed)
            w_des = jnp.where(plan.spins, w_spin, w_des)
            d_integral = jax.tree.map(lambda a, b: jnp.where(plan.spins, a, b), d_spin, d_integral)
        if with_axis:  # static: both bounded problems in one batch
            tilted, relaxed = _tilted_and_released(plan.data, plan.hover, w_axis, w_des, plan.box)
            alloc = jax.tree.map(lambda a, b: jnp.where(plan.tilted, a, b), tilted, alloc)
        else:
            relaxed = _released_inputs(plan, w_des)
        if spin_up and data.relaxed is not None:  # static: the spinning equilibrium's LQR once the spin is up
            u_lqr, spun = _relaxed_inputs(vehicle, state, f_relaxed, data.relaxed, plan.lost)
            lqr = allocation_record(plan.data.G, plan.data.u_min, plan.data.u_max, w_des, u_lqr)
            relaxed = jax.tree.map(lambda a, b: jnp.where(plan.spins & spun, a, b), lqr, relaxed)
        alloc = jax.tree.map(lambda a, b: jnp.where(plan.released, a, b), relaxed, alloc)
    return RotorCommand(u=alloc.u, alpha=a_cmd, beta=b_cmd), d_integral, alloc, ref


#: Weight of the yaw-torque row, relative to the roll and pitch rows, in :func:`yaw_released_allocation`.
RELEASED_YAW_WEIGHT = 1e-3
#: Relative ridge of :func:`yaw_released_allocation`: among inputs equally good, the smallest.
RELEASED_RIDGE = 1e-12
#: The box least squares of :func:`yaw_released_allocation` (:class:`~jaxrotor.allocators.BoxLS` with
#: :data:`RELEASED_RIDGE`).
RELEASED_ALLOCATOR = BoxLS(ridge=RELEASED_RIDGE)


def yaw_released_allocation(data: AllocationData, w_des) -> Allocation:
    """The allocation of a flight computer that has given up its yaw torque (:attr:`Faults.release_yaw`).

    The force and the roll and pitch torques of ``w_des`` ``(6,)`` are allocated first; among the inputs
    that give them, the ones with the least yaw torque are taken, within the input bounds:

        ``u = argmin_{u_min <= u <= u_max} |W (G_y u - w_y)|^2``,  ``G_y = diag(1, 1, 1, 1, 1, e) G``,
        ``w_y = (f, tau_x, tau_y, 0)``

    with ``e`` = :data:`RELEASED_YAW_WEIGHT`, the force/torque weights ``W`` of
    :class:`~jaxrotor.allocators.BoxLS` (the bounded active-set solver) and its ridge :data:`RELEASED_RIDGE`
    (the smallest inputs among equally good ones: a design with two or more inputs to spare). The yaw
    torque asked is zero, not the heading controller's: a yaw the rotors cannot make in both directions
    would otherwise be traded against the force and the tilt. A flat hexarotor that lost a rotor idles the rotor opposite (the yaw
    torque of the other four cancels) and its heading keeps the rate it has; a design with no freedom left
    (five tilted rotors, a quadrotor's three) gets its unique inputs and a constant yaw torque.

    Returns:
        the :class:`~jaxrotor.allocators.Allocation` (its ``achieved`` wrench from the unweighted ``G``).
    """
    G_y, w_y = yaw_released_problem(data, w_des)
    u = RELEASED_ALLOCATOR.inputs(G_y, data.u_min, data.u_max, w_y)
    return allocation_record(data.G, data.u_min, data.u_max, w_des, u)


def yaw_released_problem(data: AllocationData, w_des: Float[Array, "6"]
                         ) -> tuple[Float[Array, "6 n"], Float[Array, "6"]]:
    """The least-squares problem of :func:`yaw_released_allocation`: ``(G_y, w_y)``,
    ``G_y = diag(1, 1, 1, 1, 1, e) G`` ``(6, n)`` and ``w_y = (f, tau_x, tau_y, 0)`` ``(6,)``."""
    keep = jnp.asarray([1.0, 1, 1, 1, 1, RELEASED_YAW_WEIGHT], data.G.dtype)
    return data.G * keep[:, None], w_des * keep.at[5].set(0.0)


def _tilted_and_released(data: AllocationData, hover, w_axis, w_des, box_problems=None
                         ) -> tuple[Allocation, Allocation]:
    """:func:`jaxrotor.tilted.axis_allocation` ``(data, hover, w_axis)`` and :func:`yaw_released_allocation`
    ``(data, w_des)`` as one ``vmap`` batch of two box least-squares problems (one active-set solver in the
    program, not two; each problem keeps its own ridge). ``box_problems``: the pair's
    :class:`~jaxrotor.allocators.BoxProblem` set up beforehand (:attr:`FaultPlan.box`), or ``None``."""
    problems = [axis_problem(data, hover, w_axis), yaw_released_problem(data, w_des)]
    w = jnp.stack([w for _, w in problems])
    if box_problems is None:  # static: set the two problems up here
        box_problems = _box_pair(data, jnp.stack([g for g, _ in problems]))
    u = jax.vmap(_BOX.solve)(box_problems, w)
    return (allocation_record(data.G, data.u_min, data.u_max, w_axis, u[0]),
            allocation_record(data.G, data.u_min, data.u_max, w_des, u[1]))


#: The box least squares of the tilted hover (:func:`jaxrotor.tilted.axis_allocation`); the yaw-released one,
#: :data:`RELEASED_ALLOCATOR`, differs only in its ridge.
_BOX = BoxLS()


def _box_pair(data: AllocationData, G_pair, table: bool = False):
    """The :class:`~jaxrotor.allocators.BoxProblem` of the tilted and yaw-released problems ``G_pair``
    ``(2, 6, n)`` under ``data``'s bounds, as one batch (leading axis 2), each with its own ridge."""
    n, dtype = data.G.shape[1], data.G.dtype
    ridge = jnp.asarray([_BOX.ridge_for(n, dtype), RELEASED_ALLOCATOR.ridge_for(n, dtype)], dtype)
    return jax.vmap(lambda G, r: _BOX.problem(G, data.u_min, data.u_max, r, table=table))(G_pair, ridge)


def _released_inputs(plan, w_des) -> Allocation:
    """:func:`yaw_released_allocation` ``(plan.data, w_des)``, on the plan's tabulated problem when it has one."""
    if plan.box is None:  # static
        return yaw_released_allocation(plan.data, w_des)
    data = plan.data
    _, w_y = yaw_released_problem(data, w_des)
    u = RELEASED_ALLOCATOR.solve(jax.tree.map(lambda x: x[-1], plan.box), w_y)
    return allocation_record(data.G, data.u_min, data.u_max, w_des, u)


class FaultPlan(eqx.Module):
    """What the flight computer does about the faults it knows of at one instant (:func:`fault_aware`).

    Attributes:
        data: the :class:`~jaxrotor.allocators.AllocationData` with the known faults' columns scaled (and a
            stuck rotor's removed), its pseudo-inverse and collective direction rebuilt.
        held: ``(6,)`` body wrench of the rotors known stuck, held at their measured speed [N, N m]: taken
            from the wrench asked of the others.
        released: ``()`` bool: the yaw torque is given up (:func:`yaw_released_allocation`).
        tilted: ``()`` bool: the faults took wrench rank and the remaining rotors have a static hover along a
            body axis (:func:`jaxrotor.tilted.hover_axis`): full pose is kept by flying that axis
            (:func:`jaxrotor.control.axis_wrench`, :func:`jaxrotor.tilted.axis_allocation`).
        hover: the :class:`~jaxrotor.tilted.HoverAxis` of the remaining rotors (``None`` unless ``release_yaw``
            is ``"auto"``).
        spins: ``()`` bool: released, and the yaw-released hover leaves a remaining rotor idle, so a collinear
            vehicle flies the relaxed (spinning) hover of :func:`jaxrotor.control.primary_axis_wrench`.
        lost: ``()`` int: the rotor with the least known effectiveness (the lost one of a single loss).
        box: the :class:`~jaxrotor.allocators.BoxProblem` of the bounded allocations, with a leading axis over
            ``[tilted, yaw-released]`` (``release_yaw = "auto"``) or ``[yaw-released]`` (``"always"``), their
            working sets' inverses tabulated: built once per phase by :func:`fault_phases`, ``None`` when the plan
            is built at ``t`` (the problems are then set up at each allocation).
    """

    data: AllocationData
    held: Float[Array, "6"]
    released: Bool[Array, ""]
    spins: Bool[Array, ""]
    lost: Array
    tilted: Bool[Array, ""]
    hover: object = None
    box: object = None


def fault_aware(faults: Faults, data: AllocationData, state: VehicleState, t, weight=None) -> FaultPlan:
    """The flight computer's plan after the faults known at ``t`` (:mod:`jaxrotor.faults`).

    Known effectiveness ``eta`` (each event after its detection delay) scales the columns of ``G``
    (a lost rotor's column is zero, so a least-squares allocator leaves it out); a rotor known to be
    stuck is held at its measured speed ``omega_j``: its column is removed and its wrench
    ``eta_j G_j omega_j^2`` taken from the wrench asked of the others. Then, by ``faults.release_yaw``:

    * ``"auto"``: level full pose while the known faults keep the rank of ``G`` and a minimum-norm input for
      a pure vertical force with every remaining rotor at :data:`~jaxrotor.faults.FULL_POSE_MARGIN` of their
      mean or more; else, when the faults took rank from ``G`` and the remaining rotors have a static hover
      along a body axis (:func:`jaxrotor.tilted.hover_axis`, ``weight`` = ``m g`` [N]), the tilted full pose
      (``tilted``); otherwise the yaw torque is given up (:func:`yaw_released_allocation`);
    * ``"always"``: the yaw torque is given up once any fault is known;
    * ``"never"``: the whole wrench is allocated by the flight's allocator on the remaining columns.

    The plan's geometry (the scaled ``G``, its pseudo-inverse, ranks and hover axis) depends only on what is
    known, which with a step onset changes only at the detections: when ``data.fault_plans`` holds the
    :class:`FaultPhases` of ``faults`` (:meth:`Flight.allocation_data`), the plan of the phase at ``t``
    (:func:`jaxrotor.faults.known_phase`) is taken from it and only the stuck rotors' ``held`` wrench is
    evaluated here; otherwise the whole plan is built at ``t``.

    Returns:
        the :class:`FaultPlan`.
    """
    n = data.G.shape[1]
    phases = getattr(data, "fault_plans", None)
    if isinstance(phases, FaultPhases):  # static: the plans of the known phases, built once per flight
        k = known_phase(faults, t)
        plan, eta = jax.tree.map(lambda x: x[k], phases.plans), phases.eta[k]
        frozen = None if phases.frozen is None else phases.frozen[k]
    else:
        eta, frozen = known_effectiveness(faults, n, t), known_stuck(faults, n, t)
        plan = _phase_plan(faults, data, eta, frozen, weight)
    if frozen is None:
        return plan
    held = data.G @ (eta * (1 - frozen) * state.rotor_speed**2)
    return eqx.tree_at(lambda p: p.held, plan, held)


class FaultPhases(eqx.Module):
    """The flight computer's plans for each phase of a step-onset fault list (:func:`jaxrotor.faults.known_phases`),
    built once per flight by :meth:`Flight.allocation_data` and looked up by :func:`fault_aware`.

    Attributes:
        plans: the :class:`FaultPlan` of each phase, every leaf with a leading ``(K+1,)`` axis (``held`` zero).
        eta: ``(K+1, n)`` known effectiveness per phase.
        frozen: ``(K+1, n)`` known stuck factors per phase, or ``None`` without a ``rotor_stuck`` event.
    """

    plans: FaultPlan
    eta: Float[Array, "p n"]
    frozen: Float[Array, "p n"] | None = None


def fault_phases(faults: Faults, data: AllocationData, weight) -> FaultPhases:
    """The :class:`FaultPhases` of a step-onset ``faults`` (``onset = 0``) on the fixed geometry ``data``, for a
    vehicle of weight ``weight`` = ``m g`` [N]: :func:`fault_aware`'s plan for each phase, ``vmap`` over phases.
    The phases (``eta``, ``frozen``, the plans) are in the dtype of ``data.G``, whatever the dtype of the fault
    times."""
    n = data.G.shape[1]
    eta, frozen = known_phases(faults, n)
    # the phases take the allocation's dtype: a float32 vehicle's plans stay float32 whatever the fault times' dtype
    eta = eta.astype(data.G.dtype)
    frozen = None if frozen is None else frozen.astype(data.G.dtype)
    table = n <= BOX_TABLE_MAX_INPUTS  # static: each phase's bounded problems set up with their inverses
    if frozen is None:
        plans = jax.vmap(lambda e: _phase_plan(faults, data, e, None, weight, table))(eta)
    else:
        plans = jax.vmap(lambda e, f: _phase_plan(faults, data, e, f, weight, table))(eta, frozen)
    return FaultPhases(plans=plans, eta=eta, frozen=frozen)


def _phase_plan(faults: Faults, data: AllocationData, eta, frozen, weight, table: bool = False) -> FaultPlan:
    """:func:`fault_aware`'s plan for the known effectiveness ``eta`` ``(n,)`` and stuck factors ``frozen``
    ``(n,)`` (or ``None``), with ``held`` zero; ``table`` (static): with its bounded problems set up and their
    working sets' inverses tabulated (:attr:`FaultPlan.box`)."""
    col = eta if frozen is None else eta * frozen
    G = data.G * col
    G_pinv = linalg.pinv(G)  # no LAPACK in the tick (jaxrotor.linalg)
    released = jnp.asarray(False)
    tilted, hover_ax = jnp.asarray(False), None
    if faults.release_yaw != "never":  # static
        released = jnp.any(col < 1)
        if faults.release_yaw == "auto":
            rank_lost = _rank(G) < _rank(data.G)
            released = released & (rank_lost | _idle_rotor(G_pinv[:, 2], col))
            if weight is None:
                raise ValueError("fault_aware: `weight` (m g [N]) is required with release_yaw = 'auto'. Fix: pass "
                                 "weight=platform.mass * platform.gravity.")
            hover_ax = hover_axis(G, data.u_min, data.u_max, weight, alive=col > 0)
            tilted = released & rank_lost & hover_ax.feasible
            released = released & ~tilted
    hover = G_pinv[:, 2]  # the inputs of a pure vertical force: the torque-free collective direction
    collective = hover / jnp.max(jnp.abs(hover))
    data_f = eqx.tree_at(lambda d: (d.G, d.G_pinv, d.collective), data, (G, G_pinv, collective))
    if hasattr(data_f, "fault_plans"):
        data_f = eqx.tree_at(lambda d: d.fault_plans, data_f, None, is_leaf=lambda x: x is None)
    box = None
    if table and faults.release_yaw == "auto":  # static: the tilted and yaw-released problems
        G_pair = jnp.stack([axis_problem(data_f, hover_ax, jnp.zeros(6, G.dtype))[0],
                            yaw_released_problem(data_f, jnp.zeros(6, G.dtype))[0]])
        box = _box_pair(data_f, G_pair, table=True)
    elif table and faults.release_yaw == "always":  # static: the yaw-released problem alone
        G_y = yaw_released_problem(data_f, jnp.zeros(6, G.dtype))[0]
        box = jax.tree.map(lambda x: x[None], RELEASED_ALLOCATOR.problem(G_y, data.u_min, data.u_max, table=True))
    return FaultPlan(data=data_f, held=jnp.zeros(6, data.G.dtype), released=released,
                     spins=released & _must_spin(G, col), lost=jnp.argmin(col), tilted=tilted, hover=hover_ax,
                     box=box)


def _rank(G):
    """Numerical rank of ``G`` (singular values above ``max(1e-9, 100 eps)`` of the largest, ``eps`` of ``G``'s
    dtype: a lost rotor's zero column leaves a singular value near ``eps`` in float32), traced."""
    return linalg.rank(G, max(1e-9, 100 * float(jnp.finfo(G.dtype).eps)))


def _idle_rotor(hover, col):
    """Whether the hover inputs ``hover`` ``(n,)`` (sign-normalised) put a remaining rotor (``col > 0``) below
    :data:`jaxrotor.faults.FULL_POSE_MARGIN` of the remaining rotors' mean."""
    alive = col > 0
    hover = hover * jnp.sign(jnp.sum(hover))
    mean = jnp.sum(jnp.where(alive, hover, 0.0)) / jnp.maximum(jnp.sum(alive), 1)
    return jnp.min(jnp.where(alive, hover, jnp.inf)) < FULL_POSE_MARGIN * mean


def _must_spin(G, col):
    """Whether the yaw-released hover of the remaining rotors leaves one of them idle: the minimum-norm inputs
    for a pure vertical force with no roll or pitch torque (rows ``f_z, tau_x, tau_y`` of the fault-scaled
    ``G``) put a remaining rotor below :data:`~jaxrotor.faults.FULL_POSE_MARGIN` of their mean. A quadrotor
    that lost a rotor: the opposite one idles, its torque is one-sided, and only a spin holds the attitude.
    Only for a collinear vehicle (no lateral force rows in ``G``): the relaxed-hover laws assume thrust along
    body ``z``."""
    hover = linalg.pinv(G[jnp.asarray([2, 3, 4])])[:, 0]
    collinear = jnp.max(jnp.abs(G[:2])) <= 1e-5 * jnp.max(jnp.abs(G[2]))  # every rotor along body z (float32 too)
    return _idle_rotor(hover, col) & collinear


#: Discretisation step [s] of the relaxed hover's LQR design (:mod:`jaxrotor.relaxed`).
RELAXED_DT = 0.002
#: Motor lag [s] the relaxed hover's LQR assumes for a motor without one.
RELAXED_MOTOR_LAG = 0.01
#: Fraction of the equilibrium spin above which the relaxed hover's LQR takes over from the spin-up law.
RELAXED_SWITCH = 0.8


def _relaxed_inputs(platform, state, f_w, table, lost):
    """The LQR inputs of :func:`jaxrotor.relaxed.relaxed_command` for the known lost rotor, given the relaxed
    position loop's force ``f_w`` (:func:`jaxrotor.control.relaxed_force`), and whether the spin about the desired
    force direction has reached :data:`RELAXED_SWITCH` of the equilibrium spin."""
    from .relaxed import relaxed_command

    mg = platform.mass * platform.gravity
    d = force_direction(state.R, f_w)
    u = relaxed_command(table, lost, state.omega, d, state.rotor_speed, jnp.linalg.norm(f_w) / mg)
    spin = jnp.dot(state.omega, d)
    target = table.spin[lost] * jnp.dot(table.axis[lost], d)
    return u, spin * jnp.sign(target) >= RELAXED_SWITCH * jnp.abs(target)
