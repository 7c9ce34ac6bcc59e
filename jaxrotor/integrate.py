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
:class:`IntervalCheckpoint`, :class:`NoCheckpoint`, or a user's own :class:`AbstractCheckpoint`.

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

import abc
import operator
import warnings
from collections.abc import Callable
from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

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


#: ``AutoCheckpoint()`` recomputes whole save intervals in reverse mode when none holds more steps than this
#: (the residuals of this many steps are live at once), else single steps.
AUTO_INTERVAL_STEPS = 16


def _as_policy(policy):
    """A checkpoint ``policy`` as given (``None``, a ``jax.checkpoint_policies`` name or a callable), validated."""
    if policy is None or (callable(policy) and not isinstance(policy, str)):
        return policy
    if isinstance(policy, str) and callable(getattr(jax.checkpoint_policies, policy, None)):
        return policy
    raise ValueError(f"checkpoint parameter `policy` = {policy!r} is not a policy in jax.checkpoint_policies. Fix: "
                     "pass None (recompute everything), a name such as 'dots_with_no_batch_dims_saveable', or a "
                     "policy callable such as jax.checkpoint_policies.save_only_these_names('x').")


def _remat(fn: Callable, policy) -> Callable:
    """``jax.checkpoint(fn)`` under ``policy`` (a ``jax.checkpoint_policies`` name, a callable or ``None``)."""
    return jax.checkpoint(fn, prevent_cse=False,
                          policy=getattr(jax.checkpoint_policies, policy) if isinstance(policy, str) else policy)


class AbstractCheckpoint(eqx.Module):
    """What reverse mode stores in a fixed-step solve, and what it recomputes (as ``diffrax`` chooses an adjoint).

    A fixed-step solve (:func:`integrate_fixed_step`, :func:`fixed_steps`) is a loop over
    save intervals, each a loop over steps. Before tracing, it hands its two loop bodies
    to the strategy, which returns them wrapped (typically in ``jax.checkpoint``) or as
    they are:

    * ``wrap_step(step, interval_steps)``: ``step(y, solver_state, t_a, t_b) ->
      (y1, dense_info, solver_state1, result)``, one step from ``t_a`` to ``t_b`` [s] of the
      flat state vector ``y``;
    * ``wrap_interval(interval, interval_steps)``: the steps of one save interval (all
      ``n_steps`` of a :func:`fixed_steps` call), a function of the loop carry.

    ``interval_steps`` is the largest number of steps one save interval holds (static).
    The wrappers change what reverse mode stores and recomputes, never a value: every
    strategy gives the same solution and the same gradient to rounding. Subclass this (an
    ``equinox.Module`` with static fields) to define your own; the loop calls only these
    two methods.
    """

    @abc.abstractmethod
    def wrap_step(self, step: Callable, interval_steps: int) -> Callable:
        """``step``, or a function with the same signature and value (e.g. ``jax.checkpoint(step)``)."""

    @abc.abstractmethod
    def wrap_interval(self, interval: Callable, interval_steps: int) -> Callable:
        """``interval``, or a function with the same signature and value (e.g. ``jax.checkpoint(interval)``)."""


class NoCheckpoint(AbstractCheckpoint):
    """Store every stage's intermediates: no recomputation (memory per step = the stages' residuals)."""

    def wrap_step(self, step, interval_steps):
        """``step`` unchanged."""
        return step

    def wrap_interval(self, interval, interval_steps):
        """``interval`` unchanged."""
        return interval


class StepCheckpoint(AbstractCheckpoint):
    """Recompute each step from the state stored before it (``jax.checkpoint`` around one step).

    Memory per step = one state (plus what ``policy`` keeps).

    Attributes:
        policy: ``None`` (default: recompute everything), the name of a
            ``jax.checkpoint_policies`` policy (e.g. ``"dots_with_no_batch_dims_saveable"``)
            or a policy callable, saying which intermediates are kept rather than recomputed.
    """

    policy: str | Callable | None = eqx.field(static=True, default=None, converter=_as_policy)

    def wrap_step(self, step, interval_steps):
        """``jax.checkpoint(step, policy=policy)``."""
        return _remat(step, self.policy)

    def wrap_interval(self, interval, interval_steps):
        """``interval`` unchanged."""
        return interval


class IntervalCheckpoint(AbstractCheckpoint):
    """Store one state per save time and recompute the steps between two saves (``jax.checkpoint`` per interval).

    The backward pass holds every step's residuals of one interval at a time, so a solve
    that saves only ``t1`` stores as much as :class:`NoCheckpoint`.

    Attributes:
        policy: as :class:`StepCheckpoint`.
    """

    policy: str | Callable | None = eqx.field(static=True, default=None, converter=_as_policy)

    def wrap_step(self, step, interval_steps):
        """``step`` unchanged."""
        return step

    def wrap_interval(self, interval, interval_steps):
        """``jax.checkpoint(interval, policy=policy)``."""
        return _remat(interval, self.policy)


class AutoCheckpoint(AbstractCheckpoint):
    """The default: :class:`IntervalCheckpoint` when no save interval holds more than ``max_interval_steps`` steps,
    else :class:`StepCheckpoint` (both with ``policy``).

    On the 45 s use case saved every step, reverse mode measured 10-20 % cheaper than
    :class:`StepCheckpoint`.

    Attributes:
        max_interval_steps: the most steps per save interval for which whole intervals are
            recomputed (default :data:`AUTO_INTERVAL_STEPS` = 16; their residuals are live at once).
        policy: as :class:`StepCheckpoint`.
    """

    max_interval_steps: int = eqx.field(static=True, default=AUTO_INTERVAL_STEPS)
    policy: str | Callable | None = eqx.field(static=True, default=None, converter=_as_policy)

    def __check_init__(self):
        if isinstance(self.max_interval_steps, bool) or not isinstance(self.max_interval_steps, int) or not (
                self.max_interval_steps >= 1):
            raise ValueError(f"AutoCheckpoint parameter `max_interval_steps` = {self.max_interval_steps!r} is invalid. "
                             f"Fix: pass a positive int, e.g. {AUTO_INTERVAL_STEPS}.")

    def choose(self, interval_steps: int) -> AbstractCheckpoint:
        """The strategy used for a solve whose save intervals hold at most ``interval_steps`` steps."""
        if interval_steps <= self.max_interval_steps:
            return IntervalCheckpoint(policy=self.policy)
        return StepCheckpoint(policy=self.policy)

    def wrap_step(self, step, interval_steps):
        """As the chosen strategy (:meth:`choose`)."""
        return self.choose(interval_steps).wrap_step(step, interval_steps)

    def wrap_interval(self, interval, interval_steps):
        """As the chosen strategy (:meth:`choose`)."""
        return self.choose(interval_steps).wrap_interval(interval, interval_steps)


#: The strategies the former string/bool values of ``Integrator(checkpoint=...)`` name.
_CHECKPOINT_NAMES = {"auto": AutoCheckpoint, "step": StepCheckpoint, "interval": IntervalCheckpoint}


def _as_checkpoint(value) -> AbstractCheckpoint:
    """``Integrator.checkpoint`` as a strategy: a strategy as is; the former values ``True``/``"auto"``,
    ``"step"``, ``"interval"``, ``False`` (deprecated) as :class:`AutoCheckpoint`, :class:`StepCheckpoint`,
    :class:`IntervalCheckpoint`, :class:`NoCheckpoint`."""
    if isinstance(value, AbstractCheckpoint):
        return value
    if isinstance(value, (bool, np.bool_)):
        new = AutoCheckpoint() if value else NoCheckpoint()
    elif isinstance(value, str) and value in _CHECKPOINT_NAMES:
        new = _CHECKPOINT_NAMES[value]()
    else:
        raise ValueError(f"Integrator parameter `checkpoint` = {value!r} is invalid. Fix: pass a strategy, "
                         "jaxrotor.AutoCheckpoint() (default), StepCheckpoint(), IntervalCheckpoint() or NoCheckpoint() "
                         "(each but the last takes policy=...).")
    warnings.warn(f"Integrator(checkpoint={value!r}) is deprecated and will be refused in the next release. "
                  f"Fix: pass checkpoint=jaxrotor.{type(new).__name__}().", DeprecationWarning, stacklevel=3)
    return new


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
            save time, the steps between two saves recomputed; :class:`NoCheckpoint`: every
            stage's intermediates stored. Each but the last takes ``policy`` (a
            ``jax.checkpoint_policies`` name or callable: which intermediates are kept rather
            than recomputed). A user's own strategy Module works as well. The former values
            ``True``/``"auto"``, ``"step"``, ``"interval"`` and ``False`` are still accepted
            (converted to those strategies, with a ``DeprecationWarning``).
        unroll: fixed step with ``scan`` and an explicit Runge-Kutta solver only: ``True``
            writes the stages out as straight-line code (the fastest run: measured as fast as a
            hand-written RK4 loop under ``vmap``; the vector field is compiled once per stage,
            so compilation takes about twice as long); ``False`` (default) loops over them in a
            ``lax.scan`` (compiled once; measured 1.3-1.5x slower per step under ``vmap``).
            ``jaxrotor sweep`` and ``experiments/benchmark_batch.py`` unroll.
    """

    solver: diffrax.AbstractSolver = diffrax.Tsit5()
    adaptive: bool = eqx.field(static=True, default=True)
    dt: float = eqx.field(static=True, default=1e-3)
    rtol: float | None = eqx.field(static=True, default=None)
    atol: float | None = eqx.field(static=True, default=None)
    max_steps: int = eqx.field(static=True, default=200_000)
    scan: bool = eqx.field(static=True, default=True)
    checkpoint: AbstractCheckpoint = eqx.field(default=AutoCheckpoint(), converter=_as_checkpoint)
    unroll: bool = eqx.field(static=True, default=False)

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


def fixed_step_grid(t0: float, t1: float, dt: float, jump_ts=(), dtype=None) -> np.ndarray:
    """Step grid ``t0, t0 + dt, ..., t1`` that brackets every jump time in ``(t0, t1)``.

    Each jump time ``t_j`` is replaced by the two floating-point neighbours
    ``prevbefore(t_j)`` and ``nextafter(t_j)``: the step that ends at the jump sees
    only the left limit of the vector field and the next one only the right limit,
    exactly as diffrax's adaptive controllers treat ``jump_ts``. The step across
    the jump itself has length of a few ulp of ``dtype`` (default: JAX's float type,
    float32 unless x64 is enabled).
    """
    dtype = np.dtype(jnp.result_type(float)) if dtype is None else np.dtype(dtype)
    n = max(1, int(np.ceil((t1 - t0) / dt - 1e-9)))
    grid = np.linspace(t0, t1, n + 1).astype(dtype)
    jumps = np.asarray([t for t in jump_ts if t0 < t < t1], dtype=dtype)
    if jumps.size:
        near = np.min(np.abs(grid[:, None] - jumps[None, :]), axis=1) < dt * 1e-3
        bracket = np.concatenate([np.nextafter(jumps, -np.inf), np.nextafter(jumps, np.inf)])
        grid = np.union1d(grid[~near], bracket)
    return grid


def save_times(t0: float, t1: float, save_dt: float) -> np.ndarray:
    """Uniform save grid ``t0, t0 + save_dt, ..., t1`` (the last point is exactly ``t1``)."""
    n = max(1, round((t1 - t0) / save_dt))
    return np.linspace(t0, t1, n + 1)


def _flat(vector_field, y0):
    """``(flat0, unravel, flat_field)``: ``y0`` as one flat vector and the vector field on such vectors."""
    flat0, unravel = ravel_pytree(y0)

    def flat_field(t, y, args):
        return ravel_pytree(vector_field(t, unravel(y), args))[0]

    return flat0, unravel, flat_field


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


class SaveSchedule(eqx.Module):
    """Where the save times fall on a fixed step grid (numpy, built once at trace time).

    Save ``j`` lies in step ``k_j`` (``grid[k_j] < ts_j <= grid[k_j + 1]``; ``k_j = -1``
    for ``ts_j <= grid[0]``, the initial state). Between save ``j - 1`` and save ``j``
    the loop takes ``count_j = k_j - k_{j-1}`` steps, padded to ``length = max_j count_j``
    with inactive slots.

    Attributes:
        starts: ``(T - n_initial, length)`` step start times [s] (inactive slots repeat a time).
        ends: ``(T - n_initial, length)`` step end times [s] (inactive slots repeat a time).
        active: ``(T - n_initial, length)`` bool, whether the slot is a real step.
        exact: ``(T - n_initial,)`` bool, ``ts_j`` is the end of its step: the state is saved as is;
            otherwise it is the solver's dense interpolant of step ``k_j`` evaluated at ``ts_j``.
        ts: ``(T,)`` save times in the time type.
        n_initial: how many leading save times equal ``t0`` (saved as the initial state, outside the loop).
        steps: number of steps taken (up to the last save time).
    """

    starts: np.ndarray
    ends: np.ndarray
    active: np.ndarray
    exact: np.ndarray
    ts: np.ndarray
    n_initial: int = eqx.field(static=True)
    steps: int = eqx.field(static=True)

    @classmethod
    def build(cls, grid: np.ndarray, ts: np.ndarray) -> SaveSchedule:
        """Schedule of the save times ``ts`` (ascending, within ``[grid[0], grid[-1]]``) on ``grid``."""
        grid = np.asarray(grid)
        ts = np.asarray(ts).astype(grid.dtype)
        if np.any(np.diff(ts) < 0) or ts[0] < grid[0] or ts[-1] > grid[-1]:
            raise ValueError(f"integrate: save times `ts` must be ascending within [{grid[0]}, {grid[-1]}]. "
                             "Fix: pass sorted times inside the time span.")
        k = np.searchsorted(grid, ts, side="left") - 1  # grid[k] < ts <= grid[k + 1]
        n_initial = int(np.sum(k < 0))  # saves at t0 are the initial state: not part of the loop
        all_ts, ts, k = ts, ts[k >= 0], k[k >= 0]
        if not ts.size:
            empty = np.zeros((0, 1), grid.dtype)
            return cls(starts=empty, ends=empty, active=np.zeros((0, 1), bool), exact=np.zeros(0, bool), ts=all_ts,
                       n_initial=n_initial, steps=0)
        counts = np.diff(np.concatenate([[-1], k]))
        length = max(1, int(counts.max()))
        first = np.concatenate([[0], k[:-1] + 1])  # first step index of each save interval
        idx = first[:, None] + np.arange(length)[None, :]
        active = np.arange(length)[None, :] < counts[:, None]
        idx_c = np.clip(idx, 0, len(grid) - 2)
        exact = grid[k + 1] == ts
        return cls(starts=grid[idx_c], ends=grid[idx_c + 1], active=active, exact=exact, ts=all_ts,
                   n_initial=n_initial, steps=int(k.max()) + 1)


def _explicit_tableau(solver) -> diffrax.ButcherTableau | None:
    """The Butcher tableau of an explicit Runge-Kutta diffrax solver (``None`` for any other solver)."""
    tab = getattr(solver, "tableau", None)
    if not isinstance(solver, diffrax.AbstractERK) or not isinstance(tab, diffrax.ButcherTableau):
        return None
    if (tab.a_diagonal is not None and np.any(tab.a_diagonal != 0)) or tab.c1 != 0:
        return None
    return tab


def _erk_step(tab: diffrax.ButcherTableau, f, t0, t1, y0, f0):
    """One step of the explicit method ``tab`` with its stages written out (what ``AbstractERK.step`` computes).

    ``k_i = h f(t0 + c_i h, y0 + sum_j a_ij k_j)`` (``t1`` itself where ``c_i = 1``),
    ``y1 = y0 + sum_i b_i k_i`` (the last stage's argument when the method is
    solution-as-last-stage). The stages are straight-line code (XLA fuses across them;
    the vector field is traced once per stage). ``f0 = f(t0, y0)`` is reused when the
    method is first-same-as-last (FSAL), and ``f(t1, y1)`` is returned for the next step.

    Returns:
        ``(y1, dense_info, f1)``: ``dense_info = {"y0", "y1", "k"}`` as diffrax's
        interpolation classes take it, ``f1`` the FSAL value (``None`` otherwise).
    """
    h = t1 - t0
    fs = [f0 if tab.fsal else f(t0, y0)]
    ks = [h * fs[0]]
    yi = y0
    for ci, row in zip(tab.c, tab.a_lower):
        yi = y0
        for a, k in zip(row, ks):
            if a != 0:
                yi = yi + float(a) * k
        fs.append(f(t1 if ci == 1 else t0 + float(ci) * h, yi))
        ks.append(h * fs[-1])
    if tab.ssal:
        y1 = yi
    else:
        y1 = y0
        for b, k in zip(tab.b_sol, ks):
            if b != 0:
                y1 = y1 + float(b) * k
    return y1, {"y0": y0, "y1": y1, "k": jnp.stack(ks)}, (fs[-1] if tab.fsal else None)


def _erk_step_scan(tab: diffrax.ButcherTableau, f, t0, t1, y0, f0):
    """One step of the explicit method ``tab`` (what ``AbstractERK.step`` computes, in a plain ``lax.scan``).

    ``k_i = h f(t0 + c_i h, y0 + sum_j a_ij k_j)`` (``t1`` itself where ``c_i = 1``),
    ``y1 = y0 + sum_i b_i k_i`` (the last stage's argument when the method is
    solution-as-last-stage). The stages are one ``lax.scan`` over the rows of the
    tableau, so the vector field is traced once. ``f0 = f(t0, y0)`` is reused when the
    method is first-same-as-last (FSAL), and ``f(t1, y1)`` is returned for the next step.

    Returns:
        ``(y1, dense_info, f1)``: ``dense_info = {"y0", "y1", "k"}`` as diffrax's
        interpolation classes take it, ``f1`` the FSAL value (``None`` otherwise).
    """
    s = len(tab.b_sol)
    a = np.zeros((s, s))
    for i, row in enumerate(tab.a_lower):
        a[i + 1, : len(row)] = row
    c = np.concatenate([[0.0], tab.c])
    h = t1 - t0
    dtype = y0.dtype
    first = 1 if tab.fsal else 0
    ks = jnp.zeros((s,) + y0.shape, dtype)
    if tab.fsal:
        ks = ks.at[0].set(h * f0)

    def stage(carry, x):
        ks, _, _ = carry
        i, a_i, c_i = x
        yi = y0 + jnp.tensordot(a_i.astype(dtype), ks, axes=1)
        fi = f(jnp.where(c_i == 1, t1, t0 + c_i.astype(h.dtype) * h), yi)
        return (ks.at[i].set(h * fi), yi, fi), None

    (ks, y_last, f_last), _ = jax.lax.scan(stage, (ks, y0, jnp.zeros_like(y0)),
                                           (jnp.arange(first, s), jnp.asarray(a[first:]), jnp.asarray(c[first:])))
    y1 = y_last if tab.ssal else y0 + jnp.tensordot(jnp.asarray(tab.b_sol, dtype), ks, axes=1)
    return y1, {"y0": y0, "y1": y1, "k": ks}, (f_last if tab.fsal else None)


def _stepper(solver, flat_field, args, unroll: bool, t_a, t_b, y0):
    """``(state0, one_step)`` of ``solver`` on the flat vector field ``flat_field(t, y, args)``.

    ``one_step(y, state, t_a, t_b) -> (y1, dense_info, state1, result)``: an explicit
    Runge-Kutta solver (:func:`_explicit_tableau`) is stepped from its tableau, its stages
    written out (:func:`_erk_step`, ``unroll``) or in a ``lax.scan`` (:func:`_erk_step_scan`),
    ``state`` the first-same-as-last value ``f(t, y)`` (``None`` for other tableaus); any other
    solver through its own ``step`` from ``solver.init`` over the first step ``(t_a, t_b)``.
    """
    ok = diffrax.RESULTS.successful
    tableau = _explicit_tableau(solver)
    if tableau is not None:
        state0 = flat_field(t_a, y0, args) if tableau.fsal else None

        def one_step(y, state, ta, tb):
            stepper = _erk_step if unroll else _erk_step_scan
            y1, dense, f1 = stepper(tableau, lambda t, x: flat_field(t, x, args), ta, tb, y, state)
            return y1, dense, f1, ok

        return state0, one_step
    term = diffrax.ODETerm(flat_field)

    def one_step(y, state, ta, tb):
        y1, _, dense, state1, res = solver.step(term, ta, tb, y, args, state, False)
        return y1, dense, state1, res

    return solver.init(term, t_a, t_b, y0, args), one_step


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
    state0, one_step = _stepper(integrator.solver, flat_field, args, integrator.unroll, t0, t0 + dt, flat0)
    one_step = integrator.checkpoint.wrap_step(one_step, n_steps)

    def body(carry, k):
        y, state = carry
        y1, _, state1, _ = one_step(y, state, t0 + k * dt, t0 + (k + 1) * dt)
        return (y1, state1), None

    def interval(carry):
        return jax.lax.scan(body, carry, jnp.arange(n_steps, dtype=tdtype))[0]

    y1, _ = integrator.checkpoint.wrap_interval(interval, n_steps)((flat0, state0))
    return unravel(y1)


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
      (:func:`_erk_step_scan`, the default) or written out (:func:`_erk_step`,
      ``integrator.unroll``), instead of diffrax's general stage loop; any other solver
      through its own ``step``.
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
    state0, one_step = _stepper(solver, flat_field, args, integrator.unroll, grid[0], grid[1], flat0)
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
            carry, _ = jax.lax.scan(inner_regular, carry, (starts[:regular], ends[:regular], active[:regular]))
        if regular < length:
            carry, _ = jax.lax.scan(inner, carry, (starts[regular:], ends[regular:], active[regular:]))
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
    xs = (jnp.asarray(sched.starts), jnp.asarray(sched.ends), jnp.asarray(sched.active), jnp.asarray(sched.exact),
          jnp.asarray(sched.ts[sched.n_initial:]))
    (_, _, _, _, result), ys = jax.lax.scan(outer, carry0, xs)
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
