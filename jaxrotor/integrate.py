"""Thin layer over ``diffrax.diffeqsolve``: solver choice, step control, save times.

Two modes, chosen statically by :class:`Integrator`:

* adaptive (default, for accuracy reports): an embedded Runge-Kutta method with a
  PID step-size controller told the reference's jump times (``jump_ts``), so no
  step straddles a discontinuity;
* fixed step (for gradients and batches): a grid of step ``dt`` in which every
  jump time is bracketed by its two floating-point neighbours, so the steps on
  either side see only the left or the right limit (no step straddles a jump, as
  with the adaptive controller). It is stepped by :func:`integrate_fixed_step`
  (the diffrax solver inside two nested ``lax.scan``; measured 1.5-2x cheaper per
  step under ``vmap`` than the ``diffeqsolve`` loop, and 2.5x for reverse mode) or, with
  ``Integrator(scan=False)``, by ``diffrax.diffeqsolve`` with ``StepTo``; both take
  the same steps and agree to rounding. :func:`fixed_steps` takes a given number of such
  steps from a (possibly traced) start time, for a plant stepped between two control instants.

What reverse mode stores in a fixed-step solve is chosen by a strategy object,
``Integrator(checkpoint=...)``: :class:`AutoCheckpoint` (default), :class:`StepCheckpoint`,
:class:`IntervalCheckpoint`, :class:`NoCheckpoint`, or a user's own :class:`AbstractCheckpoint`
(defined in :mod:`jaxrotor.checkpoint`). The step grid, the save schedule and the explicit
Runge-Kutta steps live in :mod:`jaxrotor.fixed_step`; every name is importable from here.

Failures never raise inside compiled code (``throw=False``); the diffrax result
code comes back so a caller can flag the run (see ``Trajectory.diverged``).

Tolerances follow the floating-point type of the state (:data:`TOLERANCES`,
:func:`tolerances`). An adaptive step is accepted when its error estimate is
below ``atol + rtol |y|`` component by component; an estimate cannot be made
smaller than the rounding of the state itself, so each type has a floor, and a
tolerance asked below it (by a config written for float64, say) is raised to it:

* float64 (validation, the paper's numbers): default ``rtol = 1e-9``,
  ``atol = 1e-11``; floor ``1e-13``, ``1e-15``.
* float32 (batched GPU runs): default and floor ``rtol = 1e-6`` (about
  ``8 eps``, ``eps = 2^-23 = 1.2e-7``) and ``atol = 1e-7`` (about ``eps``: the
  rounding of a unit-scale state component). Measured on the paper maneuver
  (45 s, Tsit5): ``rtol = 1e-7`` (``~eps``) multiplies the step count by 8 and
  ``1e-8`` exhausts the step budget; ``atol = 1e-10`` multiplies it by 60 and
  ``1e-12`` exhausts it; at the floor the Table IV x/y mean absolute errors agree
  with float64 to ``1e-5`` (relative), since they are set by the controller, not
  by the integration error.

Fixed steps have no tolerance; their grid is built in the time type
(:func:`fixed_step_grid`), so a float32 grid brackets each jump time by its
float32 neighbours.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .checkpoint import AUTO_INTERVAL_STEPS as AUTO_INTERVAL_STEPS
from .checkpoint import AbstractCheckpoint as AbstractCheckpoint
from .checkpoint import AutoCheckpoint as AutoCheckpoint
from .checkpoint import IntervalCheckpoint as IntervalCheckpoint
from .checkpoint import NoCheckpoint as NoCheckpoint
from .checkpoint import StageCheckpoint as StageCheckpoint
from .checkpoint import StepCheckpoint as StepCheckpoint
from .checkpoint import _as_checkpoint
from .fixed_step import SaveSchedule as SaveSchedule
from .fixed_step import UNROLL_MAX_STAGES as UNROLL_MAX_STAGES
from .fixed_step import _explicit_tableau, _flat, _stepper
from .fixed_step import fixed_step_grid as fixed_step_grid

__all__ = ["RK4", "TOLERANCES", "AbstractCheckpoint", "AutoCheckpoint", "Integrator", "IntervalCheckpoint", "NoCheckpoint",
           "SaveSchedule", "StepCheckpoint", "fixed_step_grid", "fixed_steps", "integrate", "integrate_fixed_step",
           "save_times", "tolerances"]

#: Adaptive-step tolerances by floating-point type: ``(default rtol, default atol, floor rtol, floor atol)``
#: (``atol`` in the units of each state component: m, m/s, rad/s, ...). A tolerance below the floor of the
#: state's type cannot be met (the error estimate is then dominated by rounding and the step size collapses)
#: and is raised to the floor; ``None`` takes the default. float32: ``rtol ~ 8 eps``, ``atol ~ eps``
#: (``eps = 1.2e-7``; see the module docstring for the measurements). Other types use the float32 row.
TOLERANCES = {
    "float64": (1e-9, 1e-11, 1e-13, 1e-15),
    "float32": (1e-6, 1e-7, 1e-6, 1e-7),
}


class RK4(diffrax.AbstractERK):
    """The classical 4th-order Runge-Kutta method as a diffrax solver (for fixed steps).

    Four stages, ``k1 = f(t, y)``, ``k2 = f(t + h/2, y + h k1/2)``,
    ``k3 = f(t + h/2, y + h k2/2)``, ``k4 = f(t + h, y + h k3)``,
    ``y1 = y + h (k1 + 2 k2 + 2 k3 + k4) / 6``. Its embedded estimate (against the
    2nd-order midpoint rule ``y + h k2``) is crude: use it with a fixed step. Dense
    output is the cubic Hermite interpolant.
    """

    tableau: ClassVar[diffrax.ButcherTableau] = diffrax.ButcherTableau(
        a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
        b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
        b_error=np.array([1 / 6, 1 / 3 - 1, 1 / 3, 1 / 6]),
        c=np.array([0.5, 0.5, 1.0]),
    )
    interpolation_cls: ClassVar[Callable] = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

    def order(self, terms):
        """4."""
        return 4



def tolerances(integrator: Integrator, dtype) -> tuple[float, float]:
    """The ``(rtol, atol)`` an adaptive solve of a state of ``dtype`` uses (see :data:`TOLERANCES`).

    ``rtol = max(integrator.rtol or default, floor)`` and likewise ``atol``: a float64
    run uses what was asked (default ``1e-9``, ``1e-11``); a float32 run never asks for
    less than its resolution allows (``rtol >= 1e-6``, ``atol >= 1e-7``), so a config
    written with float64 tolerances also flies in float32.
    """
    d_rtol, d_atol, f_rtol, f_atol = TOLERANCES.get(str(np.dtype(dtype)), TOLERANCES["float32"])
    rtol = d_rtol if integrator.rtol is None else max(float(integrator.rtol), f_rtol)
    atol = d_atol if integrator.atol is None else max(float(integrator.atol), f_atol)
    return rtol, atol


class Integrator(eqx.Module):
    """How to integrate: solver, step control, tolerances and reverse-mode storage (all static).

    Which integration path honours which option (a path ignores every option it does not name):

    * adaptive, ``diffrax.diffeqsolve`` (``adaptive=True``): ``solver``, ``dt`` (the first trial
      step), ``rtol``, ``atol``, ``max_steps``; reverse mode through diffrax's
      ``RecursiveCheckpointAdjoint`` (``checkpoint``, ``scan`` and ``unroll`` play no part);
    * fixed step in ``lax.scan`` (``adaptive=False``, ``scan=True``: :func:`integrate_fixed_step`):
      ``solver``, ``dt``, ``checkpoint``, ``unroll`` (explicit Runge-Kutta solvers only); no
      tolerance, and the step count is the grid's (``rtol``, ``atol``, ``max_steps`` play no part);
    * fixed step through ``diffeqsolve`` with ``StepTo`` (``adaptive=False``, ``scan=False``):
      ``solver``, ``dt``; the step budget is the grid's step count; reverse mode through diffrax's
      adjoint (``rtol``, ``atol``, ``max_steps``, ``checkpoint``, ``unroll`` play no part);
    * :func:`fixed_steps` (a given number of steps of a given ``dt``, e.g. a plant between two
      control instants): ``solver``, ``checkpoint``, ``unroll`` (the others play no part).

    Attributes:
        solver: a diffrax solver; default ``Tsit5`` (5th order, embedded error estimate).
        adaptive: adaptive step size (``True``) or a fixed step ``dt``.
        dt: the fixed step, or the first trial step when adaptive [s].
        rtol: relative tolerance of the adaptive controller.
        atol: absolute tolerance of the adaptive controller. For both, ``None``
            (default) follows the state's floating-point type, and a value below what the
            type can resolve is raised to its floor (:func:`tolerances`, :data:`TOLERANCES`).
        max_steps: step budget of one solve (adaptive); a solve that needs more is
            reported as failed, never silently truncated.
        scan: fixed step only: drive the solver's ``step`` in ``lax.scan``
            (:func:`integrate_fixed_step`, the default: 1.5-2x faster under ``vmap``);
            ``False`` runs ``diffrax.diffeqsolve`` with ``StepTo`` (the same steps, the same
            numbers to rounding).
        checkpoint: fixed step with ``scan`` (and :func:`fixed_steps`) only: what reverse mode stores, an
            :class:`AbstractCheckpoint` strategy. :class:`AutoCheckpoint` (default):
            :class:`IntervalCheckpoint` when no save interval holds more than
            :data:`AUTO_INTERVAL_STEPS` steps, else :class:`StepCheckpoint`;
            :class:`StepCheckpoint`: each step recomputed from the stored state before it
            (memory per step = one state); :class:`IntervalCheckpoint`: one state stored per
            save time, the steps between two saves recomputed (these three also recompute each
            stage's vector field from its input while they differentiate a step:
            ``recompute_field=True``); :class:`StageCheckpoint`: each stage's input stored, its
            field recomputed; :class:`NoCheckpoint`: every stage's intermediates stored. Each
            but the last takes ``policy`` (a
            ``jax.checkpoint_policies`` name or callable: which intermediates are kept rather
            than recomputed). A user's own strategy Module works as well. The former values
            ``True``/``"auto"``, ``"step"``, ``"interval"`` and ``False`` are still accepted
            (converted to those strategies, with a ``DeprecationWarning``).
        unroll: fixed step with ``scan`` and an explicit Runge-Kutta solver only: ``True``
            writes the stages out as straight-line code (the vector field is compiled once per
            stage); ``False`` loops over them in a ``lax.scan`` (compiled once); ``"auto"``
            (default) writes them out for methods of at most :data:`UNROLL_MAX_STAGES` stages
            (Euler, Heun, RK4, Bosh3: measured 1.69x faster per step for RK4 at batch 1024 for
            0.7 s more compilation) and loops over the stages of longer ones (Tsit5: 1.06x faster
            written out, for twice the compilation; measured as ``experiments/benchmark_loop.py`` does).
            An int ``k >= 1`` loops over the stages ``k`` at a time (``lax.scan``'s ``unroll``: the
            field compiled ``k`` times). For a gradient run many times (an optimisation of hundreds of
            steps) ``k = 3`` with Tsit5 (six stages in two iterations) is the measured trade: on the
            45 s use case its gradient took 0.86-0.87x the time of the stage loop's for 1.4x the
            gradient's compilation (``experiments/benchmark_gradients.py --compare``); the values are
            the same (``tests/unit/test_integrate.py``). ``jaxrotor sweep`` always unrolls.
    """

    solver: diffrax.AbstractSolver = diffrax.Tsit5()
    adaptive: bool = eqx.field(static=True, default=True)
    dt: float = eqx.field(static=True, default=1e-3)
    rtol: float | None = eqx.field(static=True, default=None)
    atol: float | None = eqx.field(static=True, default=None)
    max_steps: int = eqx.field(static=True, default=200_000)
    scan: bool = eqx.field(static=True, default=True)
    checkpoint: AbstractCheckpoint = eqx.field(default=AutoCheckpoint(), converter=_as_checkpoint)
    unroll: bool | str | int = eqx.field(static=True, default="auto")

    def __check_init__(self):
        if not (self.dt > 0):
            raise ValueError(f"Integrator parameter `dt` = {self.dt!r} is invalid: the step must be > 0 s. Fix: pass e.g. 1e-3.")
        if self.adaptive and not ((self.rtol is None or self.rtol > 0) and (self.atol is None or self.atol > 0)):
            raise ValueError(
                f"Integrator parameters `rtol` = {self.rtol!r}, `atol` = {self.atol!r} are invalid: tolerances must be "
                "> 0. Fix: pass e.g. rtol=1e-8, atol=1e-10."
            )
        if not (self.max_steps >= 1):
            raise ValueError(f"Integrator parameter `max_steps` = {self.max_steps!r} is invalid. Fix: pass a positive int.")
        u = self.unroll
        if not (isinstance(u, (bool, np.bool_)) or (isinstance(u, str) and u == "auto")
                or (isinstance(u, (int, np.integer)) and u >= 1)):
            raise ValueError(f"Integrator parameter `unroll` = {u!r} is invalid. Fix: pass True (stages "
                             "written out), False (a scan over the stages), an int k >= 1 (a scan over the stages, "
                             f"k per iteration) or \"auto\" (written out up to {UNROLL_MAX_STAGES} stages).")


def save_times(t0: float, t1: float, save_dt: float) -> np.ndarray:
    """Uniform save grid ``t0, t0 + save_dt, ..., t1`` (the last point is exactly ``t1``)."""
    n = max(1, round((t1 - t0) / save_dt))
    return np.linspace(t0, t1, n + 1)


def integrate(vector_field, y0, t0: float, t1: float, *, args=None, integrator: Integrator = Integrator(),
              ts=None, jump_ts=()):
    """Integrate ``dy/dt = vector_field(t, y, args)`` from ``t0`` to ``t1``.

    Args:
        vector_field: ``f(t, y, args) -> dy/dt`` with ``y`` any pytree.
        y0: initial state pytree.
        t0: start time [s] (Python float).
        t1: end time [s] (Python float).
        args: passed to the vector field (may hold differentiable leaves).
        integrator: solver settings.
        ts: ``(T,)`` save times (numpy); default ``[t0, t1]``.
        jump_ts: times at which the input is discontinuous.

    Returns:
        A ``diffrax.Solution`` (``sol.ts``, ``sol.ys`` with the structure of ``y0`` and a
        leading time axis, ``sol.result``, ``sol.stats``). Internally the state is
        integrated as one flat vector (``ravel_pytree``). Adaptive solves (and fixed-step
        ones with ``integrator.scan = False``) run ``diffrax.diffeqsolve``; fixed-step
        solves run :func:`integrate_fixed_step` (the same solver's ``step`` in ``lax.scan``).
    """
    t0, t1 = float(t0), float(t1)
    if not t1 > t0:
        raise ValueError(f"integrate: the time span ({t0}, {t1}) is empty. Fix: pass t1 > t0.")
    ts = np.array([t0, t1]) if ts is None else np.asarray(ts, dtype=float)
    jumps = tuple(float(t) for t in jump_ts if t0 < float(t) < t1)
    if not integrator.adaptive and integrator.scan:
        return integrate_fixed_step(vector_field, y0, t0, t1, args=args, integrator=integrator, ts=ts, jump_ts=jumps)
    flat0, unravel, flat_field = _flat(vector_field, y0)
    if integrator.adaptive:
        rtol, atol = tolerances(integrator, flat0.dtype)
        controller = diffrax.PIDController(rtol=rtol, atol=atol, jump_ts=jnp.asarray(jumps) if jumps else None)
        dt0 = integrator.dt
        max_steps = integrator.max_steps
    else:
        grid = fixed_step_grid(t0, t1, integrator.dt, jumps)
        controller = diffrax.StepTo(ts=jnp.asarray(grid))
        dt0 = None
        max_steps = len(grid) - 1
    # Integrate one flat vector rather than the state pytree: diffrax then interpolates and saves a single
    # array per save time instead of one per leaf (measured: 2-3x faster for the 45 s use case).
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(flat_field),
        integrator.solver,
        t0=t0,
        t1=t1,
        dt0=dt0,
        y0=flat0,
        args=args,
        saveat=diffrax.SaveAt(ts=jnp.asarray(ts)),
        stepsize_controller=controller,
        max_steps=max_steps,
        throw=False,
    )
    return eqx.tree_at(lambda s: s.ys, sol, jax.vmap(unravel)(sol.ys))


def fixed_steps(vector_field, y0, t0, dt, n_steps: int, *, args=None, integrator: Integrator):
    """``n_steps`` fixed steps of ``integrator.solver`` from ``t0``: the state at ``t0 + n_steps dt``.

    The stepping of :func:`integrate_fixed_step` without a save grid or jump bracketing:
    step ``k`` runs from ``t0 + k dt`` to ``t0 + (k + 1) dt`` on the state as one flat
    vector (``ravel_pytree``), an explicit Runge-Kutta solver through its tableau (stages in
    a ``lax.scan`` or, with ``integrator.unroll``, written out), any other solver through
    its ``step``. The steps are one save interval for ``integrator.checkpoint``: it wraps
    each step (``wrap_step``) and the loop over all ``n_steps`` (``wrap_interval``), both
    told ``n_steps``; so :class:`StepCheckpoint` recomputes each step in reverse mode,
    :class:`IntervalCheckpoint` the whole call, and :class:`AutoCheckpoint` (default) the
    whole call when ``n_steps <= max_interval_steps``. Used for a plant stepped between two
    control instants: ``t0`` and ``dt`` may be traced, ``n_steps`` is static.

    Uses ``integrator.solver``, ``.unroll`` and ``.checkpoint`` only (``adaptive``, ``dt``,
    ``scan``, ``rtol``, ``atol``, ``max_steps`` play no part: the step is ``dt``). A
    solver's result code (never a failure for an explicit method) is not returned.

    Args:
        vector_field: ``f(t, y, args) -> dy/dt`` with ``y`` any pytree.
        y0: state pytree at ``t0``.
        t0: start time [s] (scalar, may be traced).
        dt: step [s] (scalar > 0, may be traced).
        n_steps: number of steps (static Python int >= 0; 0 returns ``y0``).
        args: passed to the vector field (may hold differentiable leaves).
        integrator: solver, ``unroll`` and ``checkpoint`` settings.

    Returns:
        The state pytree at ``t0 + n_steps dt`` (structure and dtypes of ``y0``).
    """
    try:
        count = operator.index(n_steps)
    except TypeError:
        count = -1
    if isinstance(n_steps, bool) or count < 0:
        raise ValueError(f"fixed_steps parameter `n_steps` = {n_steps!r} is invalid: it must be a static Python int "
                         ">= 0. Fix: pass e.g. round(period / dt).")
    n_steps = count
    if n_steps == 0:
        return y0
    flat0, unravel, flat_field = _flat(vector_field, y0)
    tdtype = jnp.result_type(float)
    t0, dt = jnp.asarray(t0, tdtype), jnp.asarray(dt, tdtype)
    state0, one_step = _stepper(integrator.solver, flat_field, args, integrator.unroll, t0, t0 + dt, flat0,
                                 integrator.checkpoint.wrap_field)
    one_step = integrator.checkpoint.wrap_step(one_step, n_steps)

    def body(carry, k):
        y, state = carry
        y1, _, state1, _ = one_step(y, state, t0 + k * dt, t0 + (k + 1) * dt)
        return (y1, state1), None

    def interval(carry):
        return _scan(body, carry, jnp.arange(n_steps, dtype=tdtype))

    y1, _ = integrator.checkpoint.wrap_interval(interval, n_steps)((flat0, state0))
    return unravel(y1)


def _scan(body, carry, xs):
    """``lax.scan(body, carry, xs)[0]``; a loop of one slot is the body called once, with the same result (a save
    interval of one regular step and one optional step, the usual case, and a control period of one step then compile
    to no inner loop. Measured on the 45 s use case in separate processes, twice each: the gradient's compilation
    6.3-6.7 s -> 5.6-6.1 s, run times unchanged within their noise, results bitwise equal.)"""
    if jax.tree_util.tree_leaves(xs)[0].shape[0] == 1:
        return body(carry, jax.tree_util.tree_map(lambda a: a[0], xs))[0]
    return jax.lax.scan(body, carry, xs)[0]


def integrate_fixed_step(vector_field, y0, t0: float, t1: float, *, args=None,
                         integrator: Integrator | None = None, ts=None, jump_ts=()):
    """Fixed-step solve: the diffrax solver stepped inside ``lax.scan`` (no ``diffeqsolve`` loop).

    The steps are those of :func:`fixed_step_grid` (every jump bracketed), taken in the
    same order with the same solver state as ``diffrax.diffeqsolve`` with ``StepTo``
    would take them, so the saved states agree with it to rounding (tested to 1e-12 in
    float64). What is left out is the machinery a fixed grid does not need: the step
    size controller, the per-step search for save times and the result bookkeeping.

    * The state is one flat vector (``ravel_pytree``); the vector field unravels it.
    * Two nested scans: the outer over save times, the inner over the steps between two
      saves (all static, from :class:`SaveSchedule`); the steps every interval has run
      without a branch, an interval's extra steps (the two-ulp step across a bracketed
      jump) under ``lax.cond`` on a static flag. A save time that is a grid point stores
      the state as is, one inside a step evaluates the solver's dense interpolant (as
      diffrax does). Only the saved states are kept: saving only ``t1`` costs no memory
      per step.
    * An explicit Runge-Kutta solver (``diffrax.AbstractERK`` with a Butcher tableau:
      Tsit5, Dopri5, Bosh3, Heun, :class:`RK4`, ...) is stepped from its tableau, with the
      same stages and weights as its ``step``: in a plain ``lax.scan`` over the stages
      (``_erk_step_scan`` in :mod:`jaxrotor.fixed_step`, the default) or written out (``_erk_step``,
      ``integrator.unroll``), instead of diffrax's general stage loop; any other solver
      through its own ``step``.
    * A first-same-as-last method (Tsit5, Dopri5) takes its first value ``f(t0, y0)`` inside the loop: a first
      save interval of zero-length steps from ``t0`` to ``t0`` (every stage then evaluates ``f(t0, y0)``, the
      state stays ``y0``; its saved state is dropped) instead of one more evaluation before the loop, so the
      compiled program holds the vector field once less (a faulted hover's forward 4.0-4.4 -> 3.5-3.7 s, the
      45 s use case's gradient 9.7-10.1 -> 7.0-8.1 s to compile) for ``regular`` extra steps of no length.
    * Everything not carried (the vector field's arguments) is a loop constant.
    * ``integrator.checkpoint`` (an :class:`AbstractCheckpoint`) wraps the step and the save
      interval before they are traced (``wrap_step``, ``wrap_interval``, told the most steps
      one interval holds): :class:`StepCheckpoint` stores the state before every step and
      recomputes the step (``jax.checkpoint``), memory ``O(steps x state)``;
      :class:`IntervalCheckpoint` stores the state at every save time and recomputes the steps
      of one save interval at a time; :class:`AutoCheckpoint` (default) picks the latter when
      no interval holds more than :data:`AUTO_INTERVAL_STEPS` steps, else the former;
      :class:`NoCheckpoint` stores every stage's intermediates.

    Args and returns: as :func:`integrate` (``integrator`` default: fixed-step Tsit5,
    ``dt = 1e-3``); a ``diffrax.Solution`` whose ``stats`` count the steps and whose
    ``result`` is the first unsuccessful solver result, if any.
    """
    integrator = Integrator(adaptive=False) if integrator is None else integrator
    t0, t1 = float(t0), float(t1)
    ts = np.array([t0, t1]) if ts is None else np.asarray(ts, dtype=float)
    flat0, unravel, flat_field = _flat(vector_field, y0)
    tdtype = np.dtype(jnp.result_type(float))
    grid = fixed_step_grid(t0, t1, integrator.dt, jump_ts, dtype=tdtype)
    sched = SaveSchedule.build(grid, ts)
    solver = integrator.solver
    ok = diffrax.RESULTS.successful
    interp = not bool(np.all(sched.exact))
    length = sched.active.shape[1]
    regular = int(np.min(np.sum(sched.active, axis=1))) if sched.active.size else 0  # steps in every interval
    tableau = _explicit_tableau(solver)
    # a first-same-as-last method's first value f(t0, y0) from a first save interval of zero-length steps, inside
    # the loop, instead of a copy of the vector field before it
    zero_first = tableau is not None and bool(tableau.fsal) and regular > 0
    state0, one_step = _stepper(solver, flat_field, args, integrator.unroll, grid[0], grid[1], flat0,
                                 integrator.checkpoint.wrap_field, first_value=not zero_first)
    one_step = integrator.checkpoint.wrap_step(one_step, length)

    def inner(carry, x):
        y, state, _, _, res = carry
        ta, tb, on = x

        def take(_):
            y1, dense1, state1, r = one_step(y, state, ta, tb)
            dense1 = dense1 if interp else None
            span1 = (ta, tb) if interp else None
            return y1, state1, dense1, span1, diffrax.RESULTS.where(res == ok, r, res)

        return jax.lax.cond(on, take, lambda _: carry, None), None

    def inner_regular(carry, x):
        y, state, _, _, res = carry
        ta, tb, _ = x
        y1, dense1, state1, r = one_step(y, state, ta, tb)
        return (y1, state1, dense1 if interp else None, (ta, tb) if interp else None,
                diffrax.RESULTS.where(res == ok, r, res)), None

    def interval(carry, starts, ends, active):
        # the first `regular` slots are real steps in every interval (no branch); the rest are taken only where
        # active (a save interval holding one step more, e.g. the two-ulp step across a bracketed jump)
        if regular:
            carry = _scan(inner_regular, carry, (starts[:regular], ends[:regular], active[:regular]))
        if regular < length:
            carry = _scan(inner, carry, (starts[regular:], ends[regular:], active[regular:]))
        return carry

    interval = integrator.checkpoint.wrap_interval(interval, length)

    def outer(carry, x):
        starts, ends, active, exact, t_save = x
        carry = interval(carry, starts, ends, active)
        y, _, dense, span, _ = carry
        if interp:
            def interpolate(_):
                return solver.interpolation_cls(t0=span[0], t1=span[1], **dense).evaluate(t_save)

            saved = jax.lax.cond(exact, lambda _: y, interpolate, None)
        else:
            saved = y
        return carry, saved

    dense0, span0 = None, None
    if interp:
        # a dense-output record of the right structure (values unused: the first save interpolates after a step)
        _, dense0, _, _ = jax.eval_shape(lambda: one_step(flat0, state0, grid[0], grid[1]))
        dense0 = jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), dense0)
        span0 = (jnp.asarray(grid[0]), jnp.asarray(grid[1]))
    carry0 = (flat0, state0, dense0, span0, ok)
    xs = (sched.starts, sched.ends, sched.active, sched.exact, sched.ts[sched.n_initial:])
    if zero_first:  # static: a save interval of `regular` steps from t0 to t0 first (its saved state dropped)
        t_first = sched.starts[:1, :1]
        xs = tuple(np.concatenate([first, x]) for first, x in zip(
            (np.broadcast_to(t_first, (1, length)), np.broadcast_to(t_first, (1, length)),
             (np.arange(length) < regular)[None], np.ones(1, bool), t_first[0]), xs))
    (_, _, _, _, result), ys = jax.lax.scan(outer, carry0, tuple(jnp.asarray(x) for x in xs))
    if zero_first:
        ys = ys[1:]
    if sched.n_initial:
        ys = jnp.concatenate([jnp.broadcast_to(flat0, (sched.n_initial,) + flat0.shape), ys])
    n = jnp.asarray(sched.steps)
    stats = {"num_steps": n, "num_accepted_steps": n, "num_rejected_steps": jnp.asarray(0), "max_steps": sched.steps}
    # the save times are known here; behind a barrier they are not a constant that XLA would fold through everything
    # computed from them afterwards (the reference at 4501 times took seconds of compilation)
    ts_out = jax.lax.optimization_barrier(jnp.asarray(sched.ts))
    return diffrax.Solution(t0=jnp.asarray(grid[0]), t1=jnp.asarray(grid[-1]), ts=ts_out,
                            ys=jax.vmap(unravel)(ys), interpolation=None, stats=stats, result=result,
                            solver_state=None, controller_state=None, made_jump=None, event_mask=None)
