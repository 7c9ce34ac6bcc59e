"""Co-design: geometry, tilt, components and gains of a multirotor for a mission, in one differentiable function.

:class:`CodesignProblem` maps a design to its measures::

    (x, motor, cells) -> vehicle from parts -> auto gains -> mission flights on a randomised batch
                      -> {objective, constraint values}

* ``x`` ``(d,)``: the continuous variables (:data:`VARIABLES`: arm length, tilt (cant), dihedral, elevation,
  propeller diameter and pitch, battery capacity; per rotor ``i`` (1-based) ``tilt_i``, ``dihedral_i``,
  ``elevation_i`` and the arm azimuth ``azimuth_i``, :data:`PER_ROTOR`) in their units;
* ``motor``: an index into the problem's motor catalogue (:mod:`jaxrotor.design.catalogue`);
* ``cells``: the battery's series cell count (static: the problem is compiled once per value).

The vehicle is re-derived from its parts (:meth:`~jaxrotor.design.platform.Platform.derive`:
mass, centre of mass, inertia, rotor inertia, ``c_f``, ``c_tau``, top speed), the propeller from
its family (pitch ratio -> ``c_t``, ``c_p``; diameter -> mass), the battery from its family
(capacity -> mass, resistance, current limit), the controller's gains from
:func:`jaxrotor.gains.auto_gains` of each design, and every mission flight is flown
(:func:`jaxrotor.randomize.fly_batch`) on the same randomised members (common random numbers).
Every step is a JAX function: :func:`jax.grad` of any measure reaches every continuous variable.

Measures (:data:`MEASURES`, all scalars): ``mass`` [kg], ``endurance`` (hover endurance,
:func:`jaxrotor.electrical.endurance_hover`) [s], ``payload`` (:func:`jaxrotor.electrical.payload_capacity`
at the thrust-to-weight bound) [kg], ``thrust_to_weight`` (:func:`jaxrotor.electrical.max_vertical_thrust`
over ``m g``), ``tracking`` (RMS position error over the mission's flights and members) [m],
``attitude`` (RMS attitude error) [rad], ``stability_margin``
(:func:`jaxrotor.analysis.stability.stability_margin`) [1/s], ``hover_tilt`` (input margin of the
pseudo-inverse hover at roll and pitch ``+-tilt``: ``min_i min(u_max - u_i, u_i - u_min) / u_max``),
``rotor_loss`` (:func:`jaxrotor.analysis.rotor_loss_margin`: a zero-moment hover after the worst single loss,
input bounds not counted), ``rotor_loss_axis`` (:func:`jaxrotor.analysis.rotor_loss_axis_margin`: the tilted
full-pose hover after the worst single loss, the rule of the exact analysis and of the flight computer; at least
:data:`jaxrotor.tilted.AXIS_MARGIN` = 0.1 when every loss is held in full pose), ``clearance`` (smallest gap between
propeller discs of neighbouring rotors and between a disc and the hub) [m], ``battery_current``
(full-throttle pack current over the pack's rating), ``arm_deflection`` (tip deflection over free length of an
arm under its rotor's full thrust, :class:`jaxrotor.design.catalogue.ArmTubeFamily`; with the variable
``arm_tube_diameter`` the arm is that family's tube, its mass following).

Constraints are handled by an augmented Lagrangian (:func:`solve`, Powell-Hestenes-Rockafellar for
inequalities): with ``g_k(x) <= 0`` the normalised violations,

    L(x, lambda, rho) = f(x) + sum_k (max(0, lambda_k + rho g_k(x))^2 - lambda_k^2) / (2 rho),

minimised by projected Adam in the normalised ``u = (x - lo) / (hi - lo)`` (clipped to ``[0, 1]`` after
every step, so a bound is reached exactly and its gradient does not vanish), with
``lambda_k <- max(0, lambda_k + rho g_k)`` after every inner round. The discrete choices are
enumerated: every catalogue motor is one member of a ``vmap`` (each optimised in its continuous
variables), every cell count one compiled batch. The best design is the best iterate that
satisfies every constraint. :func:`cma_baseline` searches the same variables with CMA-ES
(``cma``), penalised, on the same function.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import Array

from ..design.catalogue import ArmTubeFamily, BatteryFamily, PropellerFamily, take_motor
from ..design.parts import ESC
from ..design.platform import Platform, geometric_rotor_positions, per_rotor_angles
from ..flight import Flight
from ..gains import GainSpec, with_auto_gains
from ..metrics import orientation_error, position_error, rms_norm
from ..randomize import Randomization, fly_batch

__all__ = ["VARIABLES", "PER_ROTOR", "per_rotor_variable", "variable_unit", "MEASURES", "OBJECTIVES", "Variable", "Constraint", "CodesignProblem", "SolveResult",
           "solve", "cma_baseline", "BaselineResult", "penalised", "latin_hypercube"]

#: Continuous design variables: name -> unit.
VARIABLES: dict[str, str] = {
    "arm_length": "m", "tilt": "rad", "dihedral": "rad", "elevation": "rad", "propeller_diameter": "m", "propeller_pitch": "m",
    "battery_capacity": "mAh", "arm_tube_diameter": "m",
}
#: Angles that may also be one variable per rotor, ``<name>_<i>`` (rotor ``i`` = 1..n): name -> the
#: :class:`~jaxrotor.design.platform.Platform` field it sets (``tilt_i`` = ``alpha_i``, ``dihedral_i`` = ``beta_i``,
#: ``elevation_i`` = ``delta_i``, ``azimuth_i`` = ``gamma_i``, the arm's angle from body ``x`` about ``z``, eq. (3)).
#: A per-rotor angle is rotor ``i``'s own angle [rad] (no sign pattern applies); the rotors without a variable keep
#: the platform's angle.
PER_ROTOR: dict[str, str] = {"tilt": "alpha", "dihedral": "beta", "elevation": "delta", "azimuth": "gamma"}


def per_rotor_variable(name: str) -> tuple[str, int] | None:
    """``(angle, i)`` of a per-rotor variable name ``"<angle>_<i>"`` (``angle`` in :data:`PER_ROTOR`, rotor ``i`` >= 1,
    1-based), else ``None``."""
    base, _, idx = name.rpartition("_")
    if base in PER_ROTOR and idx.isdigit() and int(idx) >= 1 and not idx.startswith("0"):
        return base, int(idx)
    return None


def variable_unit(name: str) -> str:
    """Unit of a design variable (:data:`VARIABLES`; ``rad`` for a per-rotor angle)."""
    return "rad" if per_rotor_variable(name) is not None else VARIABLES[name]

#: Measures of a design: name -> (unit, needs the flights).
MEASURES: dict[str, tuple[str, bool]] = {
    "mass": ("kg", False), "endurance": ("s", False), "payload": ("kg", False), "thrust_to_weight": ("1", False),
    "tracking": ("m", True), "attitude": ("rad", True), "stability_margin": ("1/s", False),
    "hover_tilt": ("1", False), "rotor_loss": ("1", False), "rotor_loss_axis": ("1", False),
    "clearance": ("m", False), "arm_deflection": ("1", False),
    "battery_current": ("1", False),
}
#: Objectives: name -> +1 maximised, -1 minimised.
OBJECTIVES: dict[str, int] = {"endurance": 1, "payload": 1, "mass": -1}

#: Tracking error [m] / attitude error [rad] given to a diverged member (its gradient is zero).
DIVERGED_ERROR = 10.0


class Variable(NamedTuple):
    """A continuous design variable: ``name`` (:data:`VARIABLES`), bounds and start in its unit."""

    name: str
    lower: float
    upper: float
    start: float


class Constraint(NamedTuple):
    """``measure >= bound`` (``at_least``) or ``measure <= bound``; ``scale`` normalises the violation."""

    measure: str
    bound: float
    at_least: bool
    scale: float


class CodesignProblem(eqx.Module):
    """The design problem: base vehicle, catalogue, mission, objective, constraints (module docstring).

    Attributes:
        platform: the base :class:`~jaxrotor.design.platform.Platform` built from parts (hub, arm,
            landing gear, payload, ESC and air density are kept; motor, propeller and battery are
            replaced by the design's).
        controller: an SE(3) controller whose six gains :func:`jaxrotor.gains.auto_gains` recomputes
            for every design.
        flights: the mission's :class:`~jaxrotor.flight.Flight` s (fixed-step integrators).
        motors: the catalogue motors stacked (:func:`jaxrotor.design.catalogue.stack_motors`).
        keys: ``(B, 2)`` member keys of the randomised batch (:func:`jaxrotor.randomize.member_keys`).
        motor_names: static names of the catalogue entries.
        cells: static cell counts to enumerate.
        variables: static :class:`Variable` s.
        objective: static name (:data:`OBJECTIVES`).
        constraints: static :class:`Constraint` s.
        randomization: the :class:`~jaxrotor.randomize.Randomization` of the members.
        propellers, batteries, arm_tubes: the component families.
        gain_spec: the :class:`~jaxrotor.gains.GainSpec` of the auto gains.
        hover_tilt_deg: static tilt [deg] of the ``hover_tilt`` measure.
        payload_twr: static thrust-to-weight ratio the ``payload`` measure keeps.
    """

    platform: Platform
    controller: Any
    flights: tuple[Flight, ...]
    motors: Any
    keys: Array
    motor_names: tuple[str, ...] = eqx.field(static=True)
    cells: tuple[int, ...] = eqx.field(static=True)
    variables: tuple[Variable, ...] = eqx.field(static=True)
    objective: str = eqx.field(static=True, default="endurance")
    constraints: tuple[Constraint, ...] = eqx.field(static=True, default=())
    randomization: Randomization = Randomization()
    propellers: PropellerFamily = PropellerFamily()
    batteries: BatteryFamily = BatteryFamily()
    arm_tubes: ArmTubeFamily = ArmTubeFamily()
    gain_spec: GainSpec = GainSpec()
    hover_tilt_deg: float = eqx.field(static=True, default=15.0)
    payload_twr: float = eqx.field(static=True, default=2.0)

    def __check_init__(self):
        if self.platform.parts is None or self.platform.parts.battery is None:
            raise ValueError(f"CodesignProblem: platform `{self.platform.name}` has no parts or no battery. Fix: "
                             "describe the vehicle by its parts ([parts.hub], [parts.arm], [parts.motor], "
                             "[parts.propeller], [parts.battery]).")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"CodesignProblem: objective `{self.objective}` is unknown. Fix: use one of "
                             f"{', '.join(OBJECTIVES)}.")
        names = [v.name for v in self.variables]
        n = self.platform.n_rotors
        for v in self.variables:
            rotor = per_rotor_variable(v.name)
            if v.name not in VARIABLES and rotor is None:
                raise ValueError(f"CodesignProblem: variable `{v.name}` is unknown. Fix: use one of "
                                 f"{', '.join(VARIABLES)}, or a per-rotor angle <name>_<i> (name one of "
                                 f"{', '.join(PER_ROTOR)}, i = 1..{n}).")
            if rotor is not None and rotor[1] > n:
                raise ValueError(f"CodesignProblem: variable `{v.name}` names rotor {rotor[1]}, but the platform has "
                                 f"{n} rotors. Fix: number the rotors 1..{n}.")
            if rotor is not None and rotor[0] == "azimuth" and self.platform.positions is not None:
                raise ValueError(f"CodesignProblem: variable `{v.name}` sets an arm azimuth, but the platform gives its "
                                 "rotor positions explicitly. Fix: describe the layout by angles (layout = \"star\").")
            if rotor is not None and rotor[0] in names:
                raise ValueError(f"CodesignProblem: variables `{rotor[0]}` (all rotors) and `{v.name}` (one rotor) "
                                 f"both set the {PER_ROTOR[rotor[0]]} angles. Fix: keep one of them.")
            if not (math.isfinite(v.lower) and math.isfinite(v.upper) and v.lower < v.upper
                    and v.lower <= v.start <= v.upper):
                raise ValueError(f"CodesignProblem: variable `{v.name}` has lower = {v.lower}, upper = {v.upper}, "
                                 f"start = {v.start}. Fix: give finite lower < upper and a start between them.")
        if len(set(names)) != len(names):
            raise ValueError(f"CodesignProblem: a variable is named twice in {names}. Fix: name each once.")
        if "tilt" in names and jnp.ndim(self.platform.alpha) != 0:
            raise ValueError("CodesignProblem: variable `tilt` sets the interdependent cant alpha_0, but the "
                             "platform has per-rotor `alpha`. Fix: give [platform] alpha as one number with "
                             "alpha_sign (e.g. alternating).")
        for c in self.constraints:
            if c.measure not in MEASURES:
                raise ValueError(f"CodesignProblem: constraint `{c.measure}` is unknown. Fix: use one of "
                                 f"{', '.join(MEASURES)}.")
            if not (math.isfinite(c.bound) and c.scale > 0):
                raise ValueError(f"CodesignProblem: constraint `{c.measure}` has bound {c.bound}, scale {c.scale}. "
                                 "Fix: give a finite bound and a positive scale.")
        if not self.cells or any(int(c) < 1 for c in self.cells):
            raise ValueError(f"CodesignProblem: cells = {self.cells!r}. Fix: give series cell counts >= 1, e.g. [4].")
        if not self.motor_names:
            raise ValueError("CodesignProblem: the motor catalogue is empty. Fix: name at least one motor.")
        if not self.flights and any(MEASURES[c.measure][1] for c in self.constraints):
            raise ValueError("CodesignProblem: a tracking constraint needs mission flights. Fix: add [[design.mission]].")

    # ------------------------------------------------------------------ layout of x

    @property
    def names(self) -> tuple[str, ...]:
        """Variable names in the order of ``x``."""
        return tuple(v.name for v in self.variables)

    @property
    def lower(self) -> np.ndarray:
        """``(d,)`` lower bounds."""
        return np.array([v.lower for v in self.variables], dtype=float)

    @property
    def upper(self) -> np.ndarray:
        """``(d,)`` upper bounds."""
        return np.array([v.upper for v in self.variables], dtype=float)

    @property
    def start(self) -> np.ndarray:
        """``(d,)`` start values."""
        return np.array([v.start for v in self.variables], dtype=float)

    def to_x(self, u: Array) -> Array:
        """``x = lo + (hi - lo) u`` from the normalised ``u`` in ``[0, 1]^d``."""
        lo, hi = jnp.asarray(self.lower, u.dtype), jnp.asarray(self.upper, u.dtype)
        return lo + (hi - lo) * u

    def to_theta(self, x) -> np.ndarray:
        """``u = (x - lo) / (hi - lo)``, clipped to ``[0, 1]`` (inverse of :meth:`to_x`)."""
        return np.clip((np.asarray(x, float) - self.lower) / (self.upper - self.lower), 0.0, 1.0)

    @property
    def flights_per_design(self) -> int:
        """Flights one evaluation flies: mission flights x members."""
        if not any(MEASURES[c.measure][1] for c in self.constraints):
            return 0
        return len(self.flights) * int(self.keys.shape[0])

    # ------------------------------------------------------------------ the design

    def build(self, x: Array, motor, cells: int) -> tuple[Platform, Any]:
        """``(platform, controller)`` of the design ``x`` with catalogue motor ``motor`` (index) and ``cells``."""
        v = dict(zip(self.names, x))
        p = self.platform
        parts = p.parts
        D = v.get("propeller_diameter", parts.propeller.diameter)
        pitch = v.get("propeller_pitch", parts.propeller.pitch)
        cap = v.get("battery_capacity", parts.battery.capacity_mah)
        new_parts = dataclasses.replace(parts, motor=take_motor(self.motors, motor),
                                        propeller=self.propellers.propeller(D, pitch),
                                        battery=self.batteries.battery(cap, cells, parts.battery))
        if "arm_tube_diameter" in v:
            new_parts = dataclasses.replace(new_parts, arm=self.arm_tubes.arm(v["arm_tube_diameter"]))
        fields = {"parts": new_parts}
        if "arm_length" in v:
            fields["arm_length"] = v["arm_length"] * jnp.ones_like(p.arm_length)
        if "tilt" in v:
            fields["alpha"] = v["tilt"] * jnp.ones_like(p.alpha)
        if "dihedral" in v:
            fields["beta"] = v["dihedral"] * jnp.ones_like(p.beta)
        if "elevation" in v:
            fields["delta"] = v["elevation"] * jnp.ones_like(p.delta)
        for name, value in v.items():
            rotor = per_rotor_variable(name)
            if rotor is None:
                continue
            key = PER_ROTOR[rotor[0]]
            if key not in fields:
                fields[key] = _rotor_angles(p, key)
                if key in ("alpha", "beta"):  # the angles are each rotor's own: no sign pattern
                    fields[f"{key}_sign"] = jnp.ones_like(getattr(p, f"{key}_sign"))
            fields[key] = fields[key].at[rotor[1] - 1].set(value)
        platform = dataclasses.replace(p, **fields).derive()
        flight = self.flights[0] if self.flights else None
        controller = with_auto_gains(self.controller, platform, flight, self.gain_spec)
        return platform, controller

    def measures(self, x: Array, motor, cells: int, need: frozenset | None = None) -> dict[str, Array]:
        """Every measure of :data:`MEASURES` the objective and constraints use (or ``need``), plus ``mass``,
        ``endurance`` and ``diverged`` (fraction of members whose flight diverged)."""
        from ..analysis import rotor_loss_axis_margin, rotor_loss_margin
        from ..electrical import endurance_hover, max_vertical_thrust, motor_steady_state, payload_capacity, top_speed

        need = set(need) if need is not None else {c.measure for c in self.constraints} | {self.objective}
        need |= {"mass", "endurance"}
        platform, controller = self.build(x, motor, cells)
        parts = platform.parts
        out: dict[str, Array] = {"mass": platform.mass, "endurance": endurance_hover(platform)}
        weight = platform.mass * platform.gravity
        if "thrust_to_weight" in need:
            out["thrust_to_weight"] = max_vertical_thrust(platform) / weight
        if "payload" in need:
            out["payload"] = payload_capacity(platform, self.payload_twr)
        if "battery_current" in need:
            w = top_speed(platform)
            i = motor_steady_state(w, platform.c_tau, parts.motor).current
            esc = (parts.esc if parts.esc is not None else ESC()).efficiency
            out["battery_current"] = jnp.sum(i) / esc / self.batteries.max_current(parts.battery.capacity_mah)
        if "clearance" in need:
            out["clearance"] = _clearance(platform)
        if "arm_deflection" in need:
            free = jnp.max(platform.arm_length) - parts.hub.radius
            thrust = jnp.max(platform.c_f * platform.u_max)
            out["arm_deflection"] = self.arm_tubes.deflection(2.0 * parts.arm.radius, free, thrust)
        if "hover_tilt" in need:
            out["hover_tilt"] = _hover_tilt_margin(platform, math.radians(self.hover_tilt_deg))
        if "rotor_loss" in need:
            out["rotor_loss"] = rotor_loss_margin(platform)
        if "rotor_loss_axis" in need:
            out["rotor_loss_axis"] = rotor_loss_axis_margin(platform)
        if "stability_margin" in need:
            from ..analysis.stability import stability_margin

            out["stability_margin"] = stability_margin(platform, controller, self.flights[0])
        if ("tracking" in need or "attitude" in need) and self.flights:
            e_p, e_R, div = [], [], []
            for flight in self.flights:
                ps, fs = self.randomization.batch(self.keys, platform, flight)
                traj = fly_batch(ps, controller, fs)
                bad = traj.diverged
                ep = jax.vmap(lambda tr: rms_norm(_finite(position_error(tr))))(traj)
                eR = jax.vmap(lambda tr: rms_norm(_finite(orientation_error(tr))))(traj)
                e_p.append(jnp.where(bad, DIVERGED_ERROR, ep))
                e_R.append(jnp.where(bad, DIVERGED_ERROR, eR))
                div.append(bad)
            e_p, e_R = jnp.concatenate(e_p), jnp.concatenate(e_R)
            out["tracking"] = jnp.sqrt(jnp.mean(e_p**2))
            out["attitude"] = jnp.sqrt(jnp.mean(e_R**2))
            out["diverged"] = jnp.mean(jnp.concatenate(div).astype(e_p.dtype))
        else:
            out["diverged"] = jnp.zeros_like(platform.mass)
        return out

    # ------------------------------------------------------------------ objective and constraints

    def violations(self, m: dict, bounds: Array) -> Array:
        """``(K,)`` normalised violations ``g_k`` (``<= 0``: satisfied) with constraint bounds ``bounds``."""
        if not self.constraints:
            return jnp.zeros((0,), dtype=m["mass"].dtype)
        g = []
        for k, c in enumerate(self.constraints):
            d = (bounds[k] - m[c.measure]) if c.at_least else (m[c.measure] - bounds[k])
            g.append(d / c.scale)
        return jnp.stack(g)

    def objective_value(self, m: dict) -> Array:
        """The objective measure (in its unit; larger is better when maximised)."""
        return m[self.objective]

    @property
    def bounds(self) -> np.ndarray:
        """``(K,)`` the configured constraint bounds."""
        return np.array([c.bound for c in self.constraints], dtype=float)


def _rotor_angles(p: Platform, key: str) -> Array:
    """``(n,)`` rotor ``key`` angles [rad] of ``p`` (``alpha``, ``beta``: the sign pattern applied to an interdependent
    angle, :func:`~jaxrotor.design.platform.per_rotor_angles`; ``gamma``, ``delta`` as stored)."""
    if key in ("alpha", "beta"):
        a = per_rotor_angles(p)[0 if key == "alpha" else 1]
    else:
        a = jnp.asarray(getattr(p, key))
    return jnp.broadcast_to(a, (p.n_rotors,))


def _finite(e: Array) -> Array:
    return jnp.where(jnp.isfinite(e), e, 0.0)


def _clearance(platform: Platform) -> Array:
    """Smallest gap [m] between neighbouring propeller discs (hub distance minus ``D``) and between a disc and the
    hub (horizontal hub distance minus ``D/2`` minus the hub radius)."""
    p = geometric_rotor_positions(platform)
    n = p.shape[0]
    D = platform.parts.propeller.diameter
    d = jnp.linalg.norm(p[:, None, :] - p[None, :, :] + jnp.eye(n)[..., None], axis=-1)
    pair = jnp.min(jnp.where(jnp.eye(n, dtype=bool), jnp.inf, d)) - D
    hub = jnp.min(jnp.linalg.norm(p[:, :2], axis=1)) - D / 2 - platform.parts.hub.radius
    return jnp.minimum(pair, hub)


def _hover_tilt_margin(platform: Platform, tilt: float) -> Array:
    """Input margin of the pseudo-inverse hover at roll and pitch ``+-tilt`` (level included)."""
    from ..allocation import allocation_matrix

    G = allocation_matrix(platform)
    Gp = jnp.linalg.pinv(G)
    mg = platform.mass * platform.gravity
    s, c = math.sin(tilt), math.cos(tilt)
    ups = jnp.asarray([[0, 0, 1], [s, 0, c], [-s, 0, c], [0, s, c], [0, -s, c]], dtype=G.dtype)
    w = jnp.concatenate([mg * ups, jnp.zeros((5, 3), G.dtype)], axis=1)
    u = w @ Gp.T  # (5, n)
    umax = platform.u_max
    head = jnp.minimum(umax - u, u - platform.u_min) / umax
    return jnp.min(head)


# --------------------------------------------------------------------------- augmented Lagrangian


class SolveResult(NamedTuple):
    """What :func:`solve` returns (host arrays; ``M`` candidates = catalogue motors x cell counts).

    Attributes:
        candidates: ``[(motor name, cells)]`` in row order.
        x: ``(M, d)`` best feasible iterate of each candidate (its last iterate if none was feasible).
        feasible: ``(M,)`` whether the candidate found a feasible iterate.
        objective: ``(M,)`` objective value at ``x`` (NaN if not feasible).
        measures: ``[dict]`` measures at ``x``.
        history: ``[(evaluations so far, best feasible objective so far)]`` (one row per iteration).
        evaluations: designs evaluated (gradient evaluations, each one mission).
        wall_s: [s] (compilation included).
        theta: ``(M, d)`` final normalised iterates ``u`` (a warm start).
        lam: ``(M, K)`` final multipliers. rho: final penalty weight of each cell count's batch.
    """

    candidates: list
    x: np.ndarray
    feasible: np.ndarray
    objective: np.ndarray
    measures: list
    history: list
    evaluations: int
    wall_s: float
    theta: np.ndarray
    lam: np.ndarray
    rho: list


#: Tightening of every normalised constraint inside :func:`solve` (``g_k + TIGHTEN <= 0``): the augmented
#: Lagrangian approaches its optimum from outside, so its iterates then land inside the true constraints.
TIGHTEN = 1e-3


def _lagrangian_fn(problem: CodesignProblem, cells: int):
    sign = OBJECTIVES[problem.objective]

    def one(theta, motor, lam, rho, bounds, f_scale, tighten):
        x = problem.to_x(theta)
        m = problem.measures(x, motor, cells)
        f = -sign * problem.objective_value(m) / f_scale
        g = problem.violations(m, bounds)
        pen_g = g + tighten
        pen = jnp.sum(jnp.maximum(0.0, lam + rho * pen_g) ** 2 - lam**2) / (2.0 * rho)
        return f + pen, (m, g)

    return one


_STEP_CACHE: dict = {}


_ADAM = optax.scale_by_adam(b1=0.5)


def _compiled_step(problem: CodesignProblem, cells: int):
    """The jitted projected Adam step on the augmented Lagrangian of every candidate (``vmap``), one per cell count;
    the learning rate, multipliers, penalty and bounds are traced (one compilation serves the Pareto sweep)."""
    key = (id(problem), cells)
    if key in _STEP_CACHE:
        return _STEP_CACHE[key]
    one = _lagrangian_fn(problem, cells)
    vg = jax.vmap(jax.value_and_grad(one, has_aux=True), in_axes=(0, 0, 0, None, None, None, None))

    @jax.jit
    def step(theta, opt_state, motor, lam, rho, bounds, f_scale, lr, tighten):
        (val, (m, g)), grad = vg(theta, motor, lam, rho, bounds, f_scale, tighten)
        grad = jnp.where(jnp.isfinite(grad), grad, 0.0)
        updates, opt_state = _ADAM.update(grad, opt_state, theta)
        return jnp.clip(theta - lr * updates, 0.0, 1.0), opt_state, val, m, g

    if len(_STEP_CACHE) > 4:
        _STEP_CACHE.clear()
    _STEP_CACHE[key] = step
    return step


def _feasible(g: np.ndarray, diverged: np.ndarray) -> np.ndarray:
    return np.all(g <= 0.0, axis=-1) & (diverged == 0) if g.shape[-1] else diverged == 0


def solve(problem: CodesignProblem, *, iterations: int = 60, rounds: int = 4, learning_rate: float = 0.05,
          rho: float = 0.3, rho_growth: float = 3.0, final_fraction: float = 0.03, bounds: Sequence[float] | None = None,
          theta0: np.ndarray | None = None, lam0: np.ndarray | None = None, motors: Sequence[int] | None = None, cells: Sequence[int] | None = None,
          progress: Callable[[int, int], None] | None = None, tighten: float = TIGHTEN) -> SolveResult:
    """Augmented-Lagrangian Adam over the continuous variables, for every (motor, cells) candidate at once.

    Args:
        problem: the :class:`CodesignProblem`.
        iterations: Adam steps per candidate in all (split evenly into ``rounds``).
        rounds: multiplier updates ``lambda <- max(0, lambda + rho g)``, ``rho <- rho_growth rho``.
        learning_rate: initial Adam step in ``u`` (fraction of each variable's range), decayed to
            ``final_fraction`` of it along a cosine over each candidate's steps.
        rho: initial penalty weight (on normalised violations).
        bounds: ``(K,)`` constraint bounds (default the problem's; the Pareto sweep changes one).
        theta0: ``(M, d)`` warm start (default every candidate at the problem's start).
        lam0: ``(M, K)`` starting multipliers (default 0).
        motors: catalogue indices to enumerate (default all). cells: cell counts (default the problem's).
        progress: ``progress(done, total)`` after every step.
        tighten: the penalised constraints are ``g_k + tighten <= 0`` (normalised; default :data:`TIGHTEN`): a larger
            value keeps the iterates further inside a thin feasible set.

    Returns:
        :class:`SolveResult`.
    """
    if not (math.isfinite(tighten) and tighten >= 0):
        raise ValueError(f"solve parameter `tighten` = {tighten!r} is invalid. Fix: give a finite number >= 0 "
                         f"(default {TIGHTEN}).")
    t0 = time.perf_counter()
    motors = list(range(len(problem.motor_names))) if motors is None else list(motors)
    cells = list(problem.cells) if cells is None else list(cells)
    bounds = jnp.asarray(problem.bounds if bounds is None else bounds, dtype=float)
    sign = OBJECTIVES[problem.objective]
    cand = [(problem.motor_names[m], c) for c in cells for m in motors]
    M, K = len(cand), len(problem.constraints)
    th_all = np.tile(problem.to_theta(problem.start), (M, 1)) if theta0 is None else np.array(theta0, float)
    best_x = np.array([problem.start] * M, float)
    best_f = np.full(M, np.nan)
    best_m: list = [None] * M
    last: list = [None] * M
    lam_all = np.zeros((M, K))
    rho_last: list = []
    history, evals = [], 0
    per_round = max(1, iterations // max(rounds, 1))
    total = per_round * max(rounds, 1) * len(cells)
    done = 0
    f_scale = None
    steps = per_round * max(rounds, 1)
    schedule = optax.cosine_decay_schedule(learning_rate, steps, alpha=final_fraction)
    for ci, c in enumerate(cells):
        rows = slice(ci * len(motors), (ci + 1) * len(motors))
        step = _compiled_step(problem, c)
        theta = jnp.asarray(th_all[rows])
        midx = jnp.asarray(motors)
        lam = jnp.zeros((len(motors), K)) if lam0 is None else jnp.asarray(np.asarray(lam0, float)[rows])
        r = jnp.asarray(rho, dtype=float)
        opt_state = _ADAM.init(theta)
        k_step = 0
        if f_scale is None:
            x0 = problem.to_x(theta[:1])[0]
            m0 = problem.measures(x0, midx[0], c, need=frozenset({problem.objective}))
            f_scale = jnp.maximum(jnp.abs(problem.objective_value(m0)), 1e-6)
        t_r = jnp.asarray(tighten, dtype=theta.dtype)
        for _ in range(max(rounds, 1)):
            for _ in range(per_round):
                x_now = np.asarray(problem.to_x(theta))
                lr = jnp.asarray(schedule(k_step), dtype=theta.dtype)
                theta, opt_state, val, m, g = step(theta, opt_state, midx, lam, r, bounds, f_scale, lr, t_r)
                k_step += 1
                evals += len(motors)
                g_np, m_np = np.asarray(g), {k: np.asarray(v) for k, v in m.items()}
                ok = _feasible(g_np, m_np["diverged"])
                fval = m_np[problem.objective]
                for j in range(len(motors)):
                    i = rows.start + j
                    last[i] = (x_now[j], {k: float(v[j]) for k, v in m_np.items()})
                    if ok[j] and np.isfinite(fval[j]) and (np.isnan(best_f[i]) or sign * fval[j] > sign * best_f[i]):
                        best_f[i], best_x[i] = fval[j], x_now[j]
                        best_m[i] = {k: float(v[j]) for k, v in m_np.items()}
                history.append((evals, _best(best_f, sign)))
                done += 1
                if progress is not None:
                    progress(done, total)
            lam = jnp.maximum(0.0, lam + r * (g + t_r))
            r = r * rho_growth
        th_all[rows] = np.asarray(theta)
        lam_all[rows] = np.asarray(lam)
        rho_last.append(float(r))
    feasible = ~np.isnan(best_f)
    for i in range(M):
        if best_m[i] is None:  # never feasible: its last iterate
            best_x[i], best_m[i] = last[i]
    meas = best_m
    return SolveResult(candidates=cand, x=best_x, feasible=feasible, objective=best_f, measures=meas,
                       history=history, evaluations=evals, wall_s=time.perf_counter() - t0, theta=th_all,
                       lam=lam_all, rho=rho_last)


def _best(values: np.ndarray, sign: int) -> float:
    ok = values[~np.isnan(values)]
    if ok.size == 0:
        return float("nan")
    return float(ok.max() if sign > 0 else ok.min())


# --------------------------------------------------------------------------- CMA-ES baseline


def penalised(problem: CodesignProblem, m: dict, g: Array, weight: float = 100.0) -> Array:
    """The penalised objective CMA-ES minimises: ``-sign f / f_0 + weight sum max(0, g)^2`` (+ ``weight``
    per diverged fraction); ``f_0`` is folded in by the caller."""
    sign = OBJECTIVES[problem.objective]
    return -sign * problem.objective_value(m) + weight * (jnp.sum(jnp.maximum(g, 0.0) ** 2) + m["diverged"])


class BaselineResult(NamedTuple):
    """What :func:`cma_baseline` returns.

    Attributes:
        best_objective: best objective over the evaluated designs that satisfy every constraint (NaN if none).
        best: ``{"motor", "cells", "x"}`` of that design (``None`` if none).
        history: ``[(evaluations so far, best feasible objective so far)]`` (one row per generation).
        evaluations: designs evaluated. wall_s: [s].
    """

    best_objective: float
    best: dict | None
    history: list
    evaluations: int
    wall_s: float


def cma_baseline(problem: CodesignProblem, budget: int, *, seed: int = 0, popsize: int | None = None,
                 sigma0: float = 0.25, penalty: float = 100.0, x0: np.ndarray | None = None,
                 progress: Callable[[int, int], None] | None = None) -> BaselineResult:
    """CMA-ES (``cma``) on the same variables, objective and constraints, penalised, with ``budget`` evaluations.

    The search space is ``[0, 1]^(d + 2)``: the ``d`` continuous variables scaled to their bounds,
    then the motor and the cell count, each ``floor(u k)`` into its ``k`` choices. The function is
    :func:`penalised` on :meth:`CodesignProblem.measures` with the objective divided by its value at
    the start (as :func:`solve` does); a population is evaluated as one ``vmap`` per cell count
    (padded to the population size: one compilation per cell count).
    """
    import cma

    t0 = time.perf_counter()
    d = len(problem.variables)
    nm, nc = len(problem.motor_names), len(problem.cells)
    sign = OBJECTIVES[problem.objective]
    lo, hi = problem.lower, problem.upper
    start = np.concatenate([problem.to_theta(problem.start), [0.5, 0.5]]) if x0 is None else np.asarray(x0)
    opts = {"bounds": [0.0, 1.0], "seed": int(seed) + 1, "verbose": -9, "maxfevals": int(budget),
            "tolfun": 0.0, "tolx": 0.0, "tolfunhist": 0.0, "tolstagnation": 10**9}
    if popsize is not None:
        opts["popsize"] = int(popsize)
    es = cma.CMAEvolutionStrategy(start, sigma0, opts)
    P = es.popsize
    f_scale = None
    fns = {}

    def batch_fn(c):
        if c not in fns:
            fns[c] = jax.jit(jax.vmap(lambda x, mi: problem.measures(x, mi, c)))
        return fns[c]

    bounds = jnp.asarray(problem.bounds, dtype=float)
    best_f, best = float("nan"), None
    history, evals = [], 0
    while evals < budget:
        U = np.clip(np.asarray(es.ask()), 0.0, 1.0)
        X = lo + (hi - lo) * U[:, :d]
        mi = np.minimum((U[:, d] * nm).astype(int), nm - 1)
        ci = np.minimum((U[:, d + 1] * nc).astype(int), nc - 1)
        F = np.zeros(len(U))
        for k, c in enumerate(problem.cells):
            sel = np.nonzero(ci == k)[0]
            if sel.size == 0:
                continue
            xs = np.concatenate([X[sel], np.repeat(X[sel][:1], P - sel.size, axis=0)])
            ms = np.concatenate([mi[sel], np.repeat(mi[sel][:1], P - sel.size)])
            m = batch_fn(c)(jnp.asarray(xs), jnp.asarray(ms))
            if f_scale is None:
                f_scale = max(abs(float(problem.objective_value(m)[0])), 1e-6)
            g = jax.vmap(lambda mm: problem.violations(mm, bounds))(m)
            pen = jax.vmap(lambda mm, gg: penalised(problem, mm, gg, penalty))(
                {kk: vv / f_scale if kk == problem.objective else vv for kk, vv in m.items()}, g)
            pen = np.asarray(pen)[: sel.size]
            F[sel] = np.where(np.isfinite(pen), pen, 1e6)
            g_np = np.asarray(g)[: sel.size]
            div = np.asarray(m["diverged"])[: sel.size]
            fval = np.asarray(problem.objective_value(m))[: sel.size]
            ok = _feasible(g_np, div)
            for j in np.nonzero(ok & np.isfinite(fval))[0]:
                if np.isnan(best_f) or sign * fval[j] > sign * best_f:
                    best_f = float(fval[j])
                    i = sel[j]
                    best = {"motor": problem.motor_names[mi[i]], "cells": int(c), "x": X[i].tolist()}
        es.tell(list(U), list(F))
        evals += len(U)
        history.append((evals, best_f))
        if progress is not None:
            progress(min(evals, budget), budget)
    return BaselineResult(best_objective=best_f, best=best, history=history, evaluations=evals,
                          wall_s=time.perf_counter() - t0)


def latin_hypercube(n: int, d: int, seed: int = 0) -> np.ndarray:
    """``(n, d)`` Latin hypercube sample of ``[0, 1]^d`` (one point per stratum in every coordinate)."""
    rng = np.random.default_rng(seed)
    u = (rng.random((n, d)) + np.arange(n)[:, None]) / n
    for k in range(d):
        u[:, k] = u[rng.permutation(n), k]
    return u
