"""Linearised closed-loop stability about hover (``docs/stability.md``).

The closed loop that :func:`jaxrotor.fly` flies is linearised about a still hover by
forward-mode differentiation (``jax.jacfwd``) of the functions the loop itself runs:

* ``flight.control_rate = None`` (the continuous-time loop, the paper's setting): the closed-loop
  vector field of :mod:`jaxrotor.continuous` (reference -> controller -> allocator -> motor and
  servo models -> eqs. 1-2, 11-12, rotor inertia), ``x_dot = f(x)``; eigenvalues ``s = lambda(A)``;
* a control rate ``1/h``: the map over one control period, one :func:`jaxrotor.tick.tick`
  (sensor delay buffer, flight computer, zero-order hold, integral update) followed by the
  :class:`~jaxrotor.plant.AnalyticPlant`'s fixed steps over ``h``, ``x_{k+1} = Phi(x_k)``;
  eigenvalues ``z = lambda(Phi)`` reported as ``s = log(z) / h``.

The state is minimal: position ``p``, velocity ``v`` (world), the attitude as a local rotation
vector ``R = R_0 exp([theta]_x)`` about the hover attitude ``R_0``, body rate ``omega``, the rotor
speeds when the motor integrates them, the servo angles of a tilting set, the controller's integral
states and, with a sensor delay of ``d`` ticks, the ``d`` older readings ``(p, v, theta, omega)`` the
delay buffer holds. The reference is frozen at ``flight.reference(t0)`` (its position, or
``hover_position``, and attitude; zero velocity, acceleration and rates). The equilibrium is found
by a few Newton steps (minimum-norm, in scaled coordinates) from the allocator's hover input with
zero integral states, so an integral that must hold an offset (a centre-of-mass offset, a mean wind)
is found too.

Neutral coordinates, honestly: a coordinate nothing depends on (its column of ``A``, or of
``Phi - I``, is zero: the position integral with ``K_pi = 0``; the position itself when neither
``K_p`` nor ``K_pi`` act) is a family of equilibria, not a mode. Such coordinates are found
structurally (zero columns, repeatedly), reported in :attr:`StabilityReport.neutral` and left out
of the growth rates; one that feeds another neutral coordinate makes that one drift linearly
(:attr:`StabilityReport.drifting`; the pure integrators of an unused integral), which is reported and
counts as unstable only for a physical coordinate.

Everything here is a pure JAX function of the platform, the controller and the flight:
jit-compiled, vmappable over any array leaf and differentiable (:func:`stability_margin` is the
smooth margin the optimiser's ``stability_margin`` term uses). Tolerances follow the dtype.
"""

from __future__ import annotations

import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.flatten_util import ravel_pytree
from jaxtyping import ArrayLike, Bool, Float, Int

from .. import so3
from ..allocation import characteristic_length
from ..continuous import _closed_loop  # the continuous loop's own closed-loop field
from ..control import AbstractController
from ..design.platform import TILT_ANGLES, Platform
from ..dynamics import VehicleState
from ..flight import Flight, flight_computer
from ..numerics import safe_sqrt
from ..plant import AnalyticPlant
from ..reference import AbstractReference, RefSample
from ..tick import FlightComputer, TickState, tick

__all__ = ["AXES", "GROUPS", "Linearization", "StabilityReport", "closed_loop_stability", "linearize",
           "stability_margin"]

#: Axis names of :attr:`StabilityReport.axis` (the physical axis a mode moves most).
AXES = ("x", "y", "z", "roll", "pitch", "yaw", "rotor", "tilt", "integral")
#: State groups of :attr:`StabilityReport.group` (the kind of state that carries a mode's weight).
GROUPS = ("position", "velocity", "attitude", "rate", "rotor", "tilt", "integral", "delay")

_G = {name: i for i, name in enumerate(GROUPS)}
_ROT = ("roll", "pitch", "yaw")
_NEWTON_STEPS = 3
_N_MODES = 6


# --------------------------------------------------------------------------- the frozen reference


class _Frozen(AbstractReference):
    """The reference held at one sample (still: no velocity, acceleration or rates)."""

    sample: RefSample
    length: float = eqx.field(static=True)
    full_pose: bool = eqx.field(static=True)

    def __call__(self, t):
        return self.sample

    @property
    def duration(self) -> float:
        return self.length

    @property
    def is_full_pose(self) -> bool:
        return self.full_pose


def _frozen_flight(platform: Platform, flight: Flight, hover_position) -> Flight:
    dtype = platform.mass.dtype
    ref0 = flight.reference(jnp.asarray(flight.t0, dtype))
    z = jnp.zeros(3, dtype)
    p = ref0.p if hover_position is None else jnp.asarray(hover_position, dtype)
    sample = RefSample(p=p, v=z, a=z, j=z, R=ref0.R, omega=z, omega_dot=z, yaw=ref0.yaw)
    frozen = _Frozen(sample=sample, length=float(flight.end_time - flight.t0), full_pose=flight.reference.is_full_pose)
    return eqx.tree_at(lambda f: f.reference, flight, frozen)


# --------------------------------------------------------------------------- minimal coordinates


class _Coordinate:
    """Static description of one minimal coordinate."""

    __slots__ = ("name", "group", "axis", "order")

    def __init__(self, name, group, axis, order):
        self.name, self.group, self.axis, self.order = name, group, axis, order


def _rigid(prefix: str, delayed: bool) -> list[_Coordinate]:
    """``p, v, theta, omega`` (12 coordinates), of the vehicle or of a delayed reading."""
    out = []
    for kind, group, axes, order in (("p", "position", "xyz", 0), ("v", "velocity", "xyz", 1),
                                     ("theta", "attitude", _ROT, 0), ("omega", "rate", _ROT, 1)):
        for k, ax in enumerate(axes):
            name = f"{prefix}{kind}_{'xyz'[k]}"
            out.append(_Coordinate(name, "delay" if delayed else group, AXES.index(ax), order))
    return out


def _log(E):
    """``log`` of a rotation within a half turn of the identity, smooth to every order at the identity.

    (:func:`jaxrotor.so3.log` keeps ``sqrt(|vee(R)|^2)`` in its unselected branch, whose third derivative
    overflows in float32 a few 1e-7 rad from the identity; the linearisation differentiates the chart that often.)
    """
    skew = so3.vee(0.5 * (E - E.T))  # sin(theta) a
    s2 = jnp.dot(skew, skew)
    cos_t = 0.5 * (jnp.trace(E) - 1.0)
    small = s2 < 1e-6
    s2_safe = jnp.where(small, 1.0, s2)
    s = jnp.sqrt(s2_safe)
    # theta / sin(theta): arcsin series in s^2 near the identity, atan2 elsewhere
    factor = jnp.where(small, 1.0 + s2 / 6.0 + 3.0 * s2**2 / 40.0 + 5.0 * s2**3 / 112.0,
                       jnp.arctan2(s, jnp.where(small, 1.0, cos_t)) / s)
    return factor * skew


class _Chart:
    """Minimal scaled coordinates ``z`` of the closed loop about a base point (built while tracing).

    ``x = scale * z`` is the deviation from the base: ``p - p_0``, ``v``, ``theta`` (``R = R_0 exp(theta)``),
    ``omega``, rotor speeds minus the base speeds, servo angles minus the base angles, integral states minus
    their base, and the delayed readings likewise.
    """

    def __init__(self, platform: Platform, controller: AbstractController, flight: Flight, base: VehicleState,
                 delay: int):
        self.base = base
        self.R0 = base.R
        self.delay = delay
        self.integral0 = controller.init_state(platform)
        self.int_flat0, self.unravel = ravel_pytree(self.integral0)
        dtype = platform.mass.dtype
        self.rotors = bool(flight.actuators.motor.integrates_speed())
        self.tilts = tuple(k for k in TILT_ANGLES if k in platform.tilting)
        n = platform.n_rotors
        coords = _rigid("", False)
        if self.rotors:
            coords += [_Coordinate(f"rotor_speed[{i}]", "rotor", -1, 0) for i in range(n)]
        self.tilt_sizes = []
        for key in self.tilts:
            size = int(np.size(getattr(base, key)))
            self.tilt_sizes.append(size)
            coords += [_Coordinate(f"{key}[{i}]" if size > 1 else key, "tilt", -1, 0) for i in range(size)]
        int_scales = []
        for path, leaf in jax.tree_util.tree_flatten_with_path(self.integral0)[0]:
            name = jax.tree_util.keystr(path).lstrip(".")
            size = int(np.size(leaf))
            axes = (AXES.index("x"), AXES.index("y"), AXES.index("z")) if name.endswith("_p") else (
                tuple(AXES.index(a) for a in _ROT) if name.endswith("_R") else None)
            axes = axes if size == 3 else None
            for i in range(size):
                label = f"{name}_{'xyz'[i]}" if axes is not None else (f"{name}[{i}]" if size > 1 else name)
                coords.append(_Coordinate(label, "integral", -1 if axes is None else axes[i], -1))
                int_scales.append("length" if name.endswith("_p") and axes is not None else "one")
        for k in range(delay):
            coords += _rigid(f"delay{k + 1}.", True)
        self.coords = coords
        self.size = len(coords)
        # scales: lengths by L [m] (a rotation by theta moves a hub by L theta), times by 1 s, rotor speeds by the
        # base speeds [rad/s]; eigenvalues do not depend on them, the conditioning and the mode weights do
        L = jax.lax.stop_gradient(characteristic_length(platform))
        one = jnp.ones((), dtype)
        sc = [L] * 6 + [one] * 6
        if self.rotors:
            sc += list(jnp.maximum(jax.lax.stop_gradient(base.rotor_speed), one))
        for size in self.tilt_sizes:
            sc += [one] * size
        sc += [L if s == "length" else one for s in int_scales]
        sc += ([L] * 6 + [one] * 6) * delay
        self.scale = jnp.stack([jnp.asarray(s, dtype) for s in sc])

    # ---- vehicle, integral and buffer from z

    def _split(self, x):
        i = 0

        def take(k):
            nonlocal i
            out = x[i:i + k]
            i += k
            return out

        rigid = take(12)
        rotor = take(self.base.rotor_speed.shape[0]) if self.rotors else None
        tilt = [take(s) for s in self.tilt_sizes]
        integral = take(self.int_flat0.shape[0])
        delayed = [take(12) for _ in range(self.delay)]
        return rigid, rotor, tilt, integral, delayed

    def _vehicle(self, rigid, rotor=None, tilt=()):
        b = self.base
        changes = dict(p=b.p + rigid[0:3], v=rigid[3:6], R=self.R0 @ so3.exp(rigid[6:9]), omega=rigid[9:12])
        if rotor is not None:
            changes["rotor_speed"] = b.rotor_speed + rotor
        for key, d in zip(self.tilts, tilt):
            base = getattr(b, key)
            changes[key] = base + d.reshape(jnp.shape(base))
        return VehicleState(**{**{k: getattr(b, k) for k in ("p", "v", "R", "omega", "rotor_speed", "alpha",
                                                              "beta")}, **changes})

    def unpack(self, z):
        """``(vehicle state, integral state, [delayed readings])``."""
        rigid, rotor, tilt, integral, delayed = self._split(self.scale * z)
        return (self._vehicle(rigid, rotor, tilt), self.unravel(self.int_flat0 + integral),
                [self._vehicle(r) for r in delayed])

    def _rigid_coords(self, s: VehicleState):
        return jnp.concatenate([s.p - self.base.p, s.v, _log(self.R0.T @ s.R), s.omega])

    def pack(self, vehicle: VehicleState, integral, delayed):
        """``z`` of a state (the inverse of :meth:`unpack`)."""
        parts = [self._rigid_coords(vehicle)]
        if self.rotors:
            parts.append(vehicle.rotor_speed - self.base.rotor_speed)
        for key in self.tilts:
            parts.append(jnp.ravel(getattr(vehicle, key) - getattr(self.base, key)))
        parts.append(ravel_pytree(integral)[0] - self.int_flat0)
        parts += [self._rigid_coords(r) for r in delayed]
        return jnp.concatenate(parts) / self.scale

    def pack_rate(self, vehicle: VehicleState, d_vehicle: VehicleState, d_integral):
        """``dz/dt`` of the continuous loop from the vehicle state and its derivative."""
        E = self.R0.T @ vehicle.R
        theta_dot = jax.jvp(_log, (E,), (self.R0.T @ d_vehicle.R,))[1]
        parts = [d_vehicle.p, d_vehicle.v, theta_dot, d_vehicle.omega]
        if self.rotors:
            parts.append(d_vehicle.rotor_speed)
        for key in self.tilts:
            parts.append(jnp.ravel(getattr(d_vehicle, key)))
        parts.append(ravel_pytree(d_integral)[0])
        return jnp.concatenate(parts) / self.scale


# --------------------------------------------------------------------------- the loop as a map of z


def _base_state(platform, controller, flight, alloc_data) -> VehicleState:
    """Still hover at the frozen reference: rotor speeds from the allocator's hover input and, for a tilting
    set, the servo angles at what the flight computer commands there (a servo at rest holds its command)."""
    dtype = platform.mass.dtype
    t0 = jnp.asarray(flight.t0, dtype)
    ref = flight.reference(t0)
    z = jnp.zeros(3, dtype)
    state = VehicleState(p=ref.p, v=z, R=ref.R, omega=z, rotor_speed=jnp.zeros(platform.n_rotors, dtype),
                         alpha=platform.alpha, beta=platform.beta)
    integral = controller.init_state(platform)
    cmd = flight_computer(platform, controller, flight, t0, state, integral, alloc_data)[0]
    tilts = [k for k in TILT_ANGLES if k in platform.tilting and getattr(cmd, k) is not None]
    for _ in range(2 if tilts else 0):  # a tilt-deciding allocator's command may depend on the angles it sees
        state = eqx.tree_at(lambda s: [getattr(s, k) for k in tilts], state,
                            [jnp.broadcast_to(getattr(cmd, k), jnp.shape(getattr(state, k))).astype(dtype)
                             for k in tilts])
        cmd = flight_computer(platform, controller, flight, t0, state, integral, alloc_data)[0]
    speed = safe_sqrt(jnp.maximum(cmd.u, 0.0))
    return eqx.tree_at(lambda s: s.rotor_speed, state, speed)


class _Loop(eqx.Module):
    """The closed loop of one flight as a function of the minimal coordinates (continuous or per period)."""

    platform: Platform
    controller: AbstractController
    flight: Flight
    period: float | None = eqx.field(static=True)
    delay: int = eqx.field(static=True)

    def parts(self):
        platform, controller, flight = self.platform, self.controller, self.flight
        alloc_data = flight.allocation_data(platform)
        base = _base_state(platform, controller, flight, alloc_data)
        chart = _Chart(platform, controller, flight, base, self.delay)
        t0 = jnp.asarray(flight.t0, platform.mass.dtype)
        if self.period is None:
            def step(z):
                vehicle, integral, _ = chart.unpack(z)
                (d_state, d_integral), _ = _closed_loop(platform, controller, flight, t0, (vehicle, integral),
                                                        alloc_data)
                return chart.pack_rate(vehicle, d_state, d_integral)
            return chart, step

        plant = AnalyticPlant()
        ps0 = plant.init(platform, flight, None)
        computer = FlightComputer.build(plant.controller_platform(platform, ps0), controller, flight)
        h = jnp.asarray(self.period, platform.mass.dtype)
        err = jnp.zeros((4, 3), platform.mass.dtype)
        gust = jnp.zeros(3, platform.mass.dtype)

        def tick_of(z):
            vehicle, integral, delayed = chart.unpack(z)
            readings = [base] + delayed  # buffer entry 0 is dropped by the push: it never reaches the controller
            buffer = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *readings)
            tstate, plant_input, _ = tick(computer, TickState(integral=integral, buffer=buffer), vehicle, t0, h,
                                          err, gust)
            return vehicle, tstate, plant_input

        def step(z):
            vehicle, tstate, plant_input = tick_of(z)
            ps = plant.step(eqx.tree_at(lambda s: s.vehicle, ps0, vehicle), plant_input, h)
            nxt = plant.read(ps).state
            delayed = [jax.tree_util.tree_map(lambda b, k=k: b[k], tstate.buffer) for k in range(1, self.delay + 1)]
            return chart.pack(nxt, tstate.integral, delayed)
        return chart, step


def _solve(step, z0, period, steps: int):
    """Newton steps on the equilibrium condition (``f(z) = 0``, or ``Phi(z) = z`` per period), minimum-norm
    (``pinv``: neutral directions stay where they are). Returns ``(z, matrix, residual)`` with the matrix (``A``
    or ``Phi``) evaluated at the returned ``z``: ``steps - 1`` updates, one Jacobian per step."""
    def body(_, carry):
        z = carry[3]
        jac, value = jax.jacfwd(lambda x: (lambda s: (s, s))(step(x)), has_aux=True)(z)  # one trace of step
        if period is None:
            r, J = value, jac
        else:
            r, J = value - z, jac - jnp.eye(z.shape[0], dtype=z.dtype)
        return z, jac, r, z - jnp.linalg.pinv(J) @ r

    n = z0.shape[0]
    init = (z0, jnp.zeros((n, n), z0.dtype), z0, z0)
    z, matrix, r, _ = jax.lax.fori_loop(0, steps, body, init)
    return z, matrix, r


def _step_of(platform, controller, flight, period, delay):
    return _Loop(platform, controller, flight, period, delay).parts()


@eqx.filter_custom_jvp
def _equilibrium(platform, controller, flight, *, period, delay, steps):
    """``(z*, matrix at z*, residual)`` of the frozen ``flight`` (:func:`_solve`)."""
    chart, step = _step_of(platform, controller, flight, period, delay)
    return _solve(step, jnp.zeros(chart.size, platform.mass.dtype), period, steps)


@_equilibrium.def_jvp
def _equilibrium_jvp(primals, tangents, *, period, delay, steps):
    """Forward derivative by the implicit function theorem: the Newton loop is not differentiated.

    ``dz* = -J^+ (dr/dtheta)`` (``J`` the residual's Jacobian at ``z*``), and the matrix's derivative is the
    directional derivative of ``jacfwd(step)`` along ``(dtheta, dz*)``.
    """
    z, matrix, r = _equilibrium(*primals, period=period, delay=delay, steps=steps)
    dyn, static = eqx.partition(primals, eqx.is_inexact_array)
    t = jax.tree_util.tree_map(lambda p, dp: p if p is None else (jnp.zeros_like(p) if dp is None else dp), dyn, tangents,
                               is_leaf=lambda x: x is None)

    def step_at(d, x):
        return _step_of(*eqx.combine(d, static), period, delay)[1](x)

    J = matrix if period is None else matrix - jnp.eye(z.shape[0], dtype=z.dtype)
    dr = jax.jvp(lambda d: step_at(d, z), (dyn,), (t,))[1]
    dz = -jnp.linalg.pinv(J) @ dr
    d_matrix = jax.jvp(lambda d, x: jax.jacfwd(lambda y: step_at(d, y))(x), (dyn, z), (t, dz))[1]
    return (z, matrix, r), (dz, d_matrix, dr + J @ dz)


# --------------------------------------------------------------------------- linearisation


class Linearization(eqx.Module):
    """The closed loop linearised about hover, in scaled minimal coordinates ``z = x / scale``.

    Attributes:
        matrix: ``(N, N)`` ``A`` of ``dz/dt = A z`` (continuous loop) or ``Phi`` of ``z_{k+1} = Phi z_k``
            (one control period).
        scale: ``(N,)`` the coordinates' scales (``x = scale * z``; lengths by the characteristic length ``L``
            [m], rotor speeds by the hover speeds [rad/s], angles [rad], times [s]).
        equilibrium: ``(N,)`` the hover equilibrium ``z*`` (deviation from the still state at the reference
            with the allocator's hover speeds and zero integral states).
        residual: ``()`` the scaled residual ``|f(z*)|`` (``|Phi(z*) - z*| / h`` per period) [1/s].
        labels: the coordinates' names (static).
        groups, axes, orders: per coordinate the index into :data:`GROUPS`, into :data:`AXES` (``-1``: none) and
            the derivative order (``0`` position or angle, ``1`` velocity or rate, ``-1`` integral) (static).
        period: the control period ``h`` [s], ``None`` for the continuous loop (static).
    """

    matrix: Float[Array, "N N"]
    scale: Float[Array, " N"]
    equilibrium: Float[Array, " N"]
    residual: Float[Array, ""]
    labels: tuple = eqx.field(static=True)
    groups: tuple = eqx.field(static=True)
    axes: tuple = eqx.field(static=True)
    orders: tuple = eqx.field(static=True)
    period: float | None = eqx.field(static=True)

    @property
    def physical_matrix(self) -> Float[Array, "N N"]:
        """``A`` (or ``Phi``) in physical units: ``diag(scale) matrix diag(scale)^-1``."""
        return self.scale[:, None] * self.matrix / self.scale[None, :]


def _checks(platform: Platform, controller: AbstractController, flight: Flight) -> None:
    """What :func:`jaxrotor.fly` refuses, refused here by the same messages (concrete inputs only)."""
    flight.check(platform, controller)
    AnalyticPlant().check(platform, controller, flight)


def _linearize(platform, controller, flight, hover_position) -> Linearization:
    frozen = _frozen_flight(platform, flight, hover_position)
    period = None if flight.control_rate is None else 1.0 / float(flight.control_rate)
    delay = 0 if (period is None or flight.sensors is None) else int(flight.sensors.delay)
    chart, _ = _step_of(platform, controller, frozen, period, delay)
    z_eq, matrix, r = _equilibrium(platform, controller, frozen, period=period, delay=delay,
                                   steps=_NEWTON_STEPS + 1)
    res = jnp.linalg.norm(r) / (1.0 if period is None else period)
    return Linearization(matrix=matrix, scale=chart.scale, equilibrium=z_eq, residual=res,
                         labels=tuple(c.name for c in chart.coords), groups=tuple(_G[c.group] for c in chart.coords),
                         axes=tuple(c.axis for c in chart.coords), orders=tuple(c.order for c in chart.coords),
                         period=period)


@eqx.filter_jit
def _linearize_jit(platform, controller, flight, hover_position):
    return _linearize(platform, controller, flight, hover_position)


def linearize(platform: Platform, controller: AbstractController, flight: Flight, *,
              hover_position: Float[ArrayLike, "3"] | None = None) -> Linearization:
    """The closed loop of ``flight`` linearised about hover (module docstring): a :class:`Linearization`.

    Args:
        platform: the vehicle.
        controller: any :class:`~jaxrotor.control.AbstractController`.
        flight: the :class:`~jaxrotor.flight.Flight` (its reference sets the hover point and attitude,
            ``control_rate`` the continuous or the per-period map, ``sensors.delay`` the buffer states).
        hover_position: ``(3,)`` hover position [m]; default the reference's position at ``flight.t0``.

    Raises:
        ValueError: what :func:`jaxrotor.fly` refuses on the analytic plant (rank, rotor inertia under an
            ideal motor, a discrete-rate flight without a fixed step dividing the period), by the same message.
    """
    _checks(platform, controller, flight)
    return _linearize_jit(platform, controller, flight, hover_position)


# --------------------------------------------------------------------------- eigen-analysis


class StabilityReport(eqx.Module):
    """The closed loop's linearised stability about hover (:func:`closed_loop_stability`).

    Growth rates are continuous-time: ``s = lambda(A)``, or ``s = log(z) / h`` for the per-period map.
    Array fields (vmappable); the properties and :meth:`to_dict` read an unbatched report.

    Attributes:
        stable: ``()`` bool: an equilibrium was found, every mode has ``Re s`` below :attr:`tolerance`, and no
            physical coordinate drifts (neutral coordinates are not modes; module docstring).
        max_growth_rate: ``()`` largest ``Re s`` over the modes [1/s] (``-inf`` without modes).
        margin: ``()`` ``-max_growth_rate`` [1/s].
        frequency_hz: ``()`` ``|Im s| / 2 pi`` of that mode [Hz].
        axis_index, group_index, state_index: ``()`` that mode's axis (:data:`AXES`), group (:data:`GROUPS`) and
            dominant coordinate (:attr:`labels`).
        growth_rates, frequencies_hz: ``(N,)`` ``Re s`` [1/s] and ``|Im s| / 2 pi`` [Hz] of every eigenvalue (the
            neutral coordinates' and those decaying within a control period: ``-inf``).
        mode_growth, mode_frequency_hz, mode_damping: ``(k,)`` the leading modes (one per complex pair, the
            fastest-growing first): ``Re s`` [1/s], ``|Im s| / 2 pi`` [Hz], damping ratio ``-Re s / |s|``.
        mode_axis, mode_group, mode_state: ``(k,)`` their axis, group and dominant coordinate (indices).
        mode_valid: ``(k,)`` bool: the entry is a mode (fewer modes than ``k``: padding).
        neutral: ``(N,)`` bool per coordinate: neutral (a family of equilibria, no mode).
        drifting: ``(N,)`` bool per coordinate: a neutral coordinate fed by another one (it grows linearly).
        residual: ``()`` equilibrium residual [1/s]; ``equilibrium_found`` compares it with the tolerance.
        equilibrium_found: ``()`` bool.
        tolerance: ``()`` [1/s] below which a growth rate is not resolved (follows the dtype and ``|A|``).
        linearization: the :class:`Linearization` the report is made from.
        labels: the coordinates' names (static). period: ``h`` [s] or ``None`` (static).
    """

    stable: Bool[Array, ""]
    max_growth_rate: Float[Array, ""]
    margin: Float[Array, ""]
    frequency_hz: Float[Array, ""]
    axis_index: Int[Array, ""]
    group_index: Int[Array, ""]
    state_index: Int[Array, ""]
    growth_rates: Float[Array, " N"]
    frequencies_hz: Float[Array, " N"]
    mode_growth: Float[Array, " k"]
    mode_frequency_hz: Float[Array, " k"]
    mode_damping: Float[Array, " k"]
    mode_axis: Int[Array, " k"]
    mode_group: Int[Array, " k"]
    mode_state: Int[Array, " k"]
    mode_valid: Bool[Array, " k"]
    neutral: Bool[Array, " N"]
    drifting: Bool[Array, " N"]
    residual: Float[Array, ""]
    equilibrium_found: Bool[Array, ""]
    tolerance: Float[Array, ""]
    linearization: Linearization
    labels: tuple = eqx.field(static=True)
    groups: tuple = eqx.field(static=True)
    period: float | None = eqx.field(static=True)

    AXES: ClassVar[tuple] = AXES
    GROUPS: ClassVar[tuple] = GROUPS

    @property
    def axis(self) -> str:
        """The fastest-growing mode's axis (:data:`AXES`)."""
        return AXES[int(self.axis_index)]

    @property
    def group(self) -> str:
        """The fastest-growing mode's dominant state group (:data:`GROUPS`)."""
        return GROUPS[int(self.group_index)]

    @property
    def state(self) -> str:
        """The fastest-growing mode's dominant coordinate."""
        return self.labels[int(self.state_index)]

    @property
    def setting(self) -> str:
        """``"continuous"`` or ``"discrete, h = ... s"``."""
        return "continuous" if self.period is None else f"discrete, h = {self.period:g} s"

    @property
    def modes(self) -> list[dict]:
        """The leading modes: ``growth_rate`` [1/s], ``frequency_hz``, ``damping``, ``axis``, ``group``, ``state``."""
        out = []
        for i in range(self.mode_growth.shape[0]):
            if not bool(self.mode_valid[i]):
                continue
            out.append(dict(growth_rate=float(self.mode_growth[i]), frequency_hz=float(self.mode_frequency_hz[i]),
                            damping=float(self.mode_damping[i]), axis=AXES[int(self.mode_axis[i])],
                            group=GROUPS[int(self.mode_group[i])], state=self.labels[int(self.mode_state[i])]))
        return out

    @property
    def neutral_states(self) -> list[str]:
        """Names of the neutral coordinates."""
        return [n for n, m in zip(self.labels, np.asarray(self.neutral)) if m]

    @property
    def drifting_states(self) -> list[str]:
        """Names of the coordinates that drift linearly."""
        return [n for n, m in zip(self.labels, np.asarray(self.drifting)) if m]

    def to_dict(self) -> dict:
        """JSON-ready (``None`` for an infinite value): ``stable``, ``max_growth_rate``, ``frequency_hz``, ``axis``,
        ``modes`` and the rest."""
        def num(x):
            v = float(x)
            return v if math.isfinite(v) else None

        return dict(stable=bool(self.stable), max_growth_rate=num(self.max_growth_rate), margin=num(self.margin),
                    frequency_hz=num(self.frequency_hz), axis=self.axis, group=self.group, state=self.state,
                    setting=self.setting, modes=self.modes, neutral=self.neutral_states,
                    drifting=self.drifting_states, equilibrium_found=bool(self.equilibrium_found),
                    residual=num(self.residual), tolerance=num(self.tolerance), states=list(self.labels))

    def summary(self) -> str:
        """One line: the verdict, the fastest-growing (or slowest-decaying) mode and its axis."""
        if not bool(self.equilibrium_found):
            return (f"no hover equilibrium found (residual {float(self.residual):.3g} 1/s): the linearisation "
                    "says nothing")
        g = float(self.max_growth_rate)
        if not math.isfinite(g):
            return "stable (no modes besides neutral coordinates)"
        verdict = "stable" if bool(self.stable) else "UNSTABLE"
        lead = f"a {self.axis} mode ({self.state}) grows" if g > 0 else (
            f"the least damped mode, {self.axis} ({self.state}), decays")
        line = f"{verdict}: {lead} at {g:+.4g} 1/s, {float(self.frequency_hz):.4g} Hz"
        if g > 0:
            line += f" (doubling every {math.log(2) / g:.3g} s)"
        drift = [s for s in self.drifting_states if not s.startswith("int")]
        if drift:
            line += f"; drifting: {', '.join(drift)}"
        return line


def _tolerances(M, dtype, extra=None):
    eps = jnp.finfo(dtype).eps
    scale = jnp.linalg.norm(M)
    if extra is not None:
        scale = jnp.maximum(scale, extra)
    scale = jnp.maximum(scale, 1.0)
    return 1e2 * eps * scale, 10 * eps * scale, scale


def _neutral(M, thr):
    """Coordinates whose columns vanish (repeatedly, over the rows not yet neutral) and those that drift."""
    n = M.shape[0]
    absM = jnp.abs(M)

    def body(_, mask):
        rows = jnp.where(mask[:, None], 0.0, absM)
        return mask | (jnp.sum(rows, axis=0) <= thr)

    mask = jax.lax.fori_loop(0, n, body, jnp.zeros(n, bool))
    off = jnp.where(jnp.eye(n, dtype=bool), 0.0, absM)
    fed = jnp.sum(jnp.where(mask[None, :], off, 0.0), axis=1) > thr
    return mask, mask & fed


def _safe_abs(z, floor):
    re, im = jnp.real(z), jnp.imag(z)
    r2 = re * re + im * im
    ok = r2 > floor * floor
    r = jnp.sqrt(jnp.where(ok, r2, 1.0))
    return jnp.where(ok, r, floor), ok


def _spectrum(lin: Linearization):
    """``(s (N,) complex, excluded (N,) bool, tolerance, neutral, drifting, scale)`` of a linearisation."""
    M0 = lin.matrix
    dtype = M0.dtype
    n = M0.shape[0]
    eye = jnp.eye(n, dtype=dtype)
    Ms = jax.lax.stop_gradient(M0)
    if lin.period is None:
        tol, thr, scale = _tolerances(Ms, dtype)
        mask, drift = _neutral(Ms, thr)
        block = mask[:, None] | mask[None, :]
        sentinel = 1e6 * scale
        A = jnp.where(block, 0.0, M0) - jnp.diag(jnp.where(mask, sentinel, 0.0))
        s = jnp.linalg.eigvals(A)
        excluded = jnp.real(s) < -0.5 * sentinel
        s = jnp.where(excluded, -jnp.inf + 0j, s)
        return s, excluded, tol, mask, drift, scale
    h = lin.period
    tol, thr, scale = _tolerances((Ms - eye) / h, dtype, jnp.linalg.norm(Ms) / h)
    mask, drift = _neutral((Ms - eye) / h, thr)
    block = mask[:, None] | mask[None, :]
    Phi = jnp.where(block, 0.0, M0)
    z = jnp.linalg.eigvals(Phi)
    # |z| below the eigenvalues' rounding (~eps |Phi|): decayed within one period, its rate is not resolved
    floor = 1e3 * jnp.finfo(dtype).eps * jnp.maximum(jnp.linalg.norm(Ms), 1.0)
    r, ok = _safe_abs(z, floor)
    zs = jnp.where(ok, z, 1.0 + 0j)
    s = jnp.where(ok, (jnp.log(r) + 1j * jnp.angle(zs)) / h, -jnp.inf + 0j)
    excluded = ~ok
    return s, excluded, tol, mask, drift, scale


def _mode_weights(lin: Linearization, s, vec):
    """``(axis, group, coordinate)`` indices of one mode (eigenvalue ``s``, eigenvector ``vec`` in scaled coordinates).

    A coordinate's weight is ``|vec_i| |s|^-order`` (positions and angles as they are, velocities and rates divided
    by ``|s|``, integrals times ``|s|``: the three weigh alike along one axis); the axis is the physical axis
    (x, y, z, roll, pitch, yaw) with the largest summed weight, or the rotor, tilt or integral states when the
    rigid-body and integral coordinates with an axis carry less than 1e-3 of the weight.
    """
    dtype = lin.matrix.dtype
    sig = jnp.maximum(jnp.abs(s), jnp.asarray(1e-6, dtype))
    w = jnp.abs(vec) * sig ** (-jnp.asarray(lin.orders, dtype))
    axes = jnp.asarray(lin.axes)
    axis_w = (axes[:, None] == jnp.arange(6)[None, :]).T.astype(dtype) @ w
    groups = jnp.asarray(lin.groups)
    group_w = (groups[:, None] == jnp.arange(len(GROUPS))[None, :]).T.astype(dtype) @ w
    fallback = jnp.asarray([_G["rotor"], _G["tilt"], _G["integral"]])
    other = 6 + jnp.argmax(group_w[fallback])
    axis = jnp.where(jnp.sum(axis_w) >= 1e-3 * jnp.sum(w), jnp.argmax(axis_w), other)
    return axis, jnp.argmax(group_w), jnp.argmax(w)


def _null_vector(M, lam, rank):
    """A unit vector of the null space of ``M - lam I``: the right singular vector ``rank`` places above the
    smallest singular value (``rank > 0`` for the second, third, ... copy of a repeated eigenvalue)."""
    n = M.shape[0]
    _, _, vh = jnp.linalg.svd(M.astype(lam.dtype) - lam * jnp.eye(n, dtype=lam.dtype))
    return jnp.conj(vh[n - 1 - rank])


def _report(lin: Linearization, n_modes: int) -> StabilityReport:
    s, excluded, tol, neutral, drifting, scale = _spectrum(lin)
    dtype = lin.matrix.dtype
    growth = jnp.real(s)
    freq = jnp.abs(jnp.imag(s)) / (2 * jnp.pi)
    freq = jnp.where(excluded, 0.0, freq)
    big = jnp.asarray(jnp.finfo(dtype).max / 4, dtype)
    valid_growth = jnp.where(excluded, -jnp.inf, growth)
    conj = ~excluded & (jnp.imag(s) < 0)  # LAPACK returns a complex pair as exact conjugates
    key = jnp.where(excluded, -big, jnp.where(conj, -big / 2, growth))
    k = min(n_modes, s.shape[0])
    order = jnp.argsort(-key)[:k]
    lead = order[0]
    mode_valid = ~excluded[order] & ~conj[order]
    sg = jax.lax.stop_gradient(s)
    Ms = jax.lax.stop_gradient(lin.matrix)
    # eigenvectors of the whole matrix (neutral coordinates included) for the listed eigenvalues
    lam = sg[order]
    if lin.period is not None:
        lam_m = jnp.exp(jnp.where(mode_valid, lam, 0.0) * lin.period)
    else:
        lam_m = jnp.where(mode_valid, lam, 0.0)
    # a repeated eigenvalue (the x and y loops of a symmetric vehicle): each copy takes the next null vector
    close = jnp.abs(lam_m[:, None] - lam_m[None, :]) <= 1e3 * tol * jnp.maximum(1.0, jnp.abs(lam_m[None, :]))
    rank = jnp.sum(jnp.tril(close & mode_valid[None, :] & mode_valid[:, None], k=-1), axis=1)
    rank = jnp.minimum(rank, Ms.shape[0] - 1)
    vecs = jax.vmap(lambda l, r: _null_vector(Ms, l, r))(lam_m, rank)
    m_axis, m_group, m_state = jax.vmap(lambda l, v: _mode_weights(lin, l, v))(jnp.where(mode_valid, lam, 0.0), vecs)
    max_growth = jnp.max(valid_growth)
    mode_s = s[order]
    mag = jnp.abs(jnp.where(mode_valid, mode_s, 1.0))
    damping = jnp.where(mode_valid & (mag > 0), -jnp.real(jnp.where(mode_valid, mode_s, 0.0)) / mag, 0.0)
    physical = jnp.asarray([GROUPS[g] != "integral" for g in lin.groups])
    found = lin.residual <= jnp.sqrt(jnp.finfo(dtype).eps) * scale
    stable = found & (max_growth < tol) & ~jnp.any(drifting & physical)
    any_mode = jnp.any(~excluded)
    lead_freq = jnp.where(any_mode, freq[lead], 0.0)
    return StabilityReport(
        stable=stable, max_growth_rate=max_growth, margin=-max_growth, frequency_hz=lead_freq,
        axis_index=m_axis[0], group_index=m_group[0], state_index=m_state[0],
        growth_rates=valid_growth, frequencies_hz=freq,
        mode_growth=jnp.where(mode_valid, growth[order], -jnp.inf), mode_frequency_hz=freq[order],
        mode_damping=damping, mode_axis=m_axis, mode_group=m_group, mode_state=m_state, mode_valid=mode_valid,
        neutral=neutral, drifting=drifting, residual=lin.residual, equilibrium_found=found, tolerance=tol,
        linearization=lin, labels=lin.labels, groups=lin.groups, period=lin.period)


@eqx.filter_jit
def _stability_jit(platform, controller, flight, hover_position, n_modes):
    return _report(_linearize(platform, controller, flight, hover_position), n_modes)


def closed_loop_stability(platform: Platform, controller: AbstractController, flight: Flight, *,
                          hover_position: Float[ArrayLike, "3"] | None = None,
                          n_modes: int = _N_MODES) -> StabilityReport:
    """Whether the closed loop of ``flight`` is stable about hover, and which mode decides it.

    The loop is linearised by :func:`linearize` (continuous field or one control period, module
    docstring); its eigenvalues give the continuous-time growth rates ``Re s``. Jit-compiled,
    vmappable over any array leaf (gains, time constants, rotor inertia, ...) and differentiable
    (``report.margin`` is ``-max Re s``; :func:`stability_margin` is its smooth form).

    Args:
        platform: the vehicle.
        controller: the controller.
        flight: the flight (reference at ``t0``, actuators, control rate, sensor delay, wind, disturbance).
        hover_position: ``(3,)`` hover position [m] (default the reference's at ``t0``).
        n_modes: number of leading modes reported (static).

    Returns:
        A :class:`StabilityReport`.

    Raises:
        ValueError: as :func:`linearize`.
    """
    _checks(platform, controller, flight)
    return _stability_jit(platform, controller, flight, hover_position, int(n_modes))


def stability_margin(platform: Platform, controller: AbstractController, flight: Flight, *,
                     hover_position: Float[ArrayLike, "3"] | None = None,
                     temperature: float = 0.1) -> Float[Array, ""]:
    """Smooth stability margin ``-T log sum_i exp(Re s_i / T)`` [1/s] over the modes (neutral coordinates
    and modes decaying within a control period left out): positive when stable, at most ``-max Re s`` and within
    ``T log N`` of it. Differentiable, vmappable, NaN-safe (``T = temperature`` [1/s]).

    Pure JAX (call it under ``jax.jit``); the checks of :func:`linearize` are made when the inputs are concrete.
    """
    _checks(platform, controller, flight)
    lin = _linearize(platform, controller, flight, hover_position)
    s, excluded = _spectrum(lin)[:2]
    g = jnp.where(excluded, 0.0, jnp.real(s))
    T = jnp.asarray(temperature, g.dtype)
    lse = jax.nn.logsumexp(jnp.where(excluded, -jnp.inf, g / T), b=jnp.where(excluded, 0.0, 1.0))
    return -T * lse
