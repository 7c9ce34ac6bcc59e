"""Thin layer over ``diffrax.diffeqsolve``: solver choice, step control, save times.

Two modes, chosen statically by :class:`Integrator`:

* adaptive (default, for accuracy reports): an embedded Runge-Kutta method with a
  PID step-size controller told the reference's jump times (``jump_ts``), so no
  step straddles a discontinuity;
* fixed step (for gradients): ``diffrax.StepTo`` on a grid of step ``dt`` in
  which every jump time is bracketed by its two floating-point neighbours, so the
  steps on either side see only the left or the right limit (no step straddles a
  jump, as with the adaptive controller).

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

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree
import numpy as np

__all__ = ["Integrator", "integrate", "fixed_step_grid", "save_times", "tolerances", "TOLERANCES"]

#: Adaptive-step tolerances by floating-point type: ``(default rtol, default atol, floor rtol, floor atol)``
#: (``atol`` in the units of each state component: m, m/s, rad/s, ...). A tolerance below the floor of the
#: state's type cannot be met (the error estimate is then dominated by rounding and the step size collapses)
#: and is raised to the floor; ``None`` takes the default. float32: ``rtol ~ 8 eps``, ``atol ~ eps``
#: (``eps = 1.2e-7``; see the module docstring for the measurements). Other types use the float32 row.
TOLERANCES = {
    "float64": (1e-9, 1e-11, 1e-13, 1e-15),
    "float32": (1e-6, 1e-7, 1e-6, 1e-7),
}


def tolerances(integrator: "Integrator", dtype) -> tuple[float, float]:
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
    """How to integrate: solver, step control and tolerances (all static).

    Attributes:
        solver: a diffrax solver; default ``Tsit5`` (5th order, embedded error estimate).
        adaptive: adaptive step size (``True``) or a fixed step ``dt``.
        dt: the fixed step, or the first trial step when adaptive [s].
        rtol, atol: relative and absolute tolerances of the adaptive controller; ``None``
            (default) follows the state's floating-point type, and a value below what the
            type can resolve is raised to its floor (:func:`tolerances`, :data:`TOLERANCES`).
        max_steps: step budget of one solve (adaptive); a solve that needs more is
            reported as failed, never silently truncated.
    """

    solver: diffrax.AbstractSolver = diffrax.Tsit5()
    adaptive: bool = eqx.field(static=True, default=True)
    dt: float = eqx.field(static=True, default=1e-3)
    rtol: float | None = eqx.field(static=True, default=None)
    atol: float | None = eqx.field(static=True, default=None)
    max_steps: int = eqx.field(static=True, default=200_000)

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
    n = max(1, int(round((t1 - t0) / save_dt)))
    return np.linspace(t0, t1, n + 1)


def integrate(vector_field, y0, t0: float, t1: float, *, args=None, integrator: Integrator = Integrator(),
              ts=None, jump_ts=()):
    """Integrate ``dy/dt = vector_field(t, y, args)`` from ``t0`` to ``t1``.

    Args:
        vector_field: ``f(t, y, args) -> dy/dt`` with ``y`` any pytree.
        y0: initial state pytree.
        t0, t1: time span [s] (Python floats).
        args: passed to the vector field (may hold differentiable leaves).
        integrator: solver settings.
        ts: ``(T,)`` save times (numpy); default ``[t0, t1]``.
        jump_ts: times at which the input is discontinuous.

    Returns:
        The ``diffrax.Solution`` (``sol.ts``, ``sol.ys`` with the structure of ``y0`` and a
        leading time axis, ``sol.result``, ``sol.stats``). Internally the state is
        integrated as one flat vector (``ravel_pytree``).
    """
    t0, t1 = float(t0), float(t1)
    if not t1 > t0:
        raise ValueError(f"integrate: the time span ({t0}, {t1}) is empty. Fix: pass t1 > t0.")
    ts = np.array([t0, t1]) if ts is None else np.asarray(ts, dtype=float)
    jumps = tuple(float(t) for t in jump_ts if t0 < float(t) < t1)
    flat0, unravel = ravel_pytree(y0)
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

    def flat_field(t, y, args):
        return ravel_pytree(vector_field(t, unravel(y), args))[0]

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
