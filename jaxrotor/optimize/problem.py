"""The function an optimiser minimises: ``theta -> design -> flight -> objective``, NaN-safe.

:class:`AbstractProblem` is the interface every problem declares (a design, its
parameters and objective, ``loss``, ``minimize`` and ``report``);
:class:`DesignProblem` is one flight per evaluation,
:class:`~jaxrotor.optimize.robust.RobustProblem` the risk over a randomized batch.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array

from .. import flight as _flight
from ..loop import fly
from ..metrics import position_error, rms_norm
from .loop import MinimizeOptions, OptimizeResult
from .loop import minimize as _minimize
from .objectives import AbstractTerm
from .parameters import Parameters

__all__ = ["AbstractProblem", "Design", "LossInfo", "DesignProblem"]


class Design(eqx.Module):
    """The whole differentiable flight as one pytree: vehicle, controller and flight description.

    Parameter paths of :meth:`Parameters.select` start at these fields:
    ``"platform.alpha"``, ``"controller.K_R"``, ``"flight.actuators.motor.time_constant"``.

    Attributes:
        platform: the :class:`~jaxrotor.design.platform.Platform` (geometry, rotors, mass, inertia).
        controller: e.g. :class:`~jaxrotor.control.FullyActuatedSE3` (18 gain leaves).
        flight: the :class:`~jaxrotor.flight.Flight` flown (reference, allocator, actuators,
            integrator, horizon, limits, ...); ``None`` only for design-only objectives.
    """

    platform: Any
    controller: Any
    flight: _flight.Flight | None = None


class LossInfo(eqx.Module):
    """What one loss evaluation reports besides its value.

    Attributes:
        raw: ``()`` the objective before the divergence guard (may be non-finite).
        terms: ``{name: measure}`` of every leaf objective term (NaN when penalised).
        diverged: ``()`` bool, the flight's ``Trajectory.diverged`` (False without a flight).
        penalized: ``()`` bool: diverged or non-finite, the value is the penalty.
        rmse_position: ``()`` :func:`jaxrotor.metrics.rms_norm` of the position error [m]
            (NaN without a flight or when diverged).
    """

    raw: Array
    terms: dict
    diverged: Array
    penalized: Array
    rmse_position: Array


def _stand_in(traj, bad: Array, flight: _flight.Flight):
    """A finite trajectory to evaluate the objective on (double ``where``, first half).

    Where ``bad`` (diverged), every state-dependent inexact leaf is replaced by zeros,
    and any non-finite entry is replaced by zero anyway; the time grid ``t`` is
    replaced by the flight's planned save times (where the solver stopped early
    diffrax fills it with ``inf``), so time means stay ``0 / duration``, not ``0 / 0``.
    """
    def fix(x):
        if not eqx.is_inexact_array(x):
            return x
        return jnp.where(bad | ~jnp.isfinite(x), jnp.zeros_like(x), x)

    t = jnp.asarray(flight.save_times, dtype=traj.t.dtype)
    safe = jax.tree_util.tree_map(fix, traj)
    return eqx.tree_at(lambda tr: tr.t, safe, jnp.where(bad | ~jnp.isfinite(traj.t), t, traj.t))


class AbstractProblem(eqx.Module):
    """An optimisation problem: ``theta -> design -> loss``, minimised by :meth:`minimize`, reported by :meth:`report`.

    What :func:`jaxrotor.optimize.minimize`, the compiled steps and the report writer
    (:func:`jaxrotor.workflows.report.write_report`) use; :class:`DesignProblem` and
    :class:`~jaxrotor.optimize.robust.RobustProblem` implement it.

    Attributes:
        design: the start :class:`Design`; unselected leaves stay fixed.
        parameters: the :class:`~jaxrotor.optimize.Parameters` selection and bounds.
        objective: the per-flight :class:`~jaxrotor.optimize.objectives.AbstractTerm` (lower is better).
    """

    design: eqx.AbstractVar[Design]
    parameters: eqx.AbstractVar[Parameters]
    objective: eqx.AbstractVar[AbstractTerm]

    def init(self):
        """Unconstrained variables ``theta`` of the start design."""
        return self.parameters.to_theta(self.design)

    def to_design(self, theta) -> Design:
        """The design at ``theta``."""
        return self.parameters.to_design(theta, self.design)

    @abc.abstractmethod
    def loss(self, theta) -> tuple[Array, LossInfo]:
        """NaN-safe loss of ``theta``: ``(value (), LossInfo)``, differentiable with respect to ``theta``."""

    @abc.abstractmethod
    def minimize(self, optimizer, options: MinimizeOptions = MinimizeOptions(), *,
                 out_dir: str | Path | None = None, resume: bool = False, progress: bool = True,
                 callback: Callable[[dict], None] | None = None) -> OptimizeResult:
        """Minimise :meth:`loss` from :meth:`init` with an optax ``optimizer``.

        Args:
            optimizer: an ``optax.GradientTransformation``.
            options: iterations, step rejection, early stopping (:class:`~jaxrotor.optimize.MinimizeOptions`).
            out_dir: folder for ``history.csv`` and ``checkpoint.eqx`` (``None``: nothing written).
            resume: continue the run in ``out_dir``.
            progress: show a progress bar.
            callback: ``callback(row)`` after every iteration with the ``history.csv`` row.
        """

    @abc.abstractmethod
    def report(self, result: OptimizeResult, *, physics: Callable[..., dict] | None = None) -> dict[str, Any]:
        """What ``result.json`` holds for this kind of problem besides the keys every run has.

        Args:
            result: the :class:`~jaxrotor.optimize.OptimizeResult` of :meth:`minimize`.
            physics: the physics-layer measure the workflows layer supplies
                (:func:`jaxrotor.workflows.robust.physics_metrics`), or ``None`` to skip the
                physics-layer check; the optimisation layer never imports the engine itself.

        Returns:
            a JSON-ready dict (``{}`` when the problem adds nothing).
        """


class DesignProblem(AbstractProblem):
    """``theta -> design -> closed-loop flight -> objective``: the function an optimiser minimises.

    Attributes:
        design: the base (initial) :class:`Design`; unselected leaves stay fixed. Its
            ``flight`` is what :meth:`fly` flies (use a fixed-step integrator for gradients).
        parameters: the :class:`~jaxrotor.optimize.Parameters` selection and bounds.
        objective: an :class:`~jaxrotor.optimize.objectives.AbstractTerm` (lower is better).
        divergence_penalty: value given to a diverged or non-finite evaluation (static).
    """

    design: Design
    parameters: Parameters
    objective: AbstractTerm
    divergence_penalty: float = eqx.field(static=True, default=1e3)

    def __check_init__(self):
        if self.objective.needs_flight and self.design.flight is None:
            raise ValueError(f"DesignProblem: the objective `{self.objective.name}` needs a flight but "
                             "`design.flight` is None. Fix: build Design(platform, controller, "
                             "jaxrotor.flight.Flight(reference, integrator=Integrator(adaptive=False, dt=0.01))).")
        self.objective.check(self.design)  # a term missing what it reads (e.g. a battery) says so here
        if not self.divergence_penalty > 0:
            raise ValueError(f"DesignProblem parameter `divergence_penalty` = {self.divergence_penalty!r} is invalid. "
                             "Fix: pass a positive loss for diverged flights, e.g. 1e3.")

    # ---------------------------------------------------------------- pieces

    def fly(self, design: Design):
        """``jaxrotor.fly(design.platform, design.controller, design.flight)``."""
        return fly(design.platform, design.controller, design.flight)

    # ---------------------------------------------------------------- loss

    def evaluate(self, design: Design) -> tuple[Array, LossInfo]:
        """Objective of a design with the divergence guard on the value (no gradient guard).

        Double ``where``: a diverged trajectory is replaced by a finite stand-in
        *before* the objective (so the objective's own derivative stays finite, also
        with respect to the design's leaves), and the value by ``divergence_penalty``
        after it. The objective is evaluated once (cost and every term's measure).
        """
        if self.objective.needs_flight:
            traj = self.fly(design)
            diverged = traj.diverged
            traj_safe = _stand_in(traj, diverged, design.flight)
        else:
            traj_safe, diverged = None, jnp.asarray(False)
        raw, terms = self.objective.evaluate(design, traj_safe)
        penalized = diverged | ~jnp.isfinite(raw)
        value = jnp.where(penalized, jnp.asarray(self.divergence_penalty, raw.dtype), jnp.where(penalized, 0.0, raw))
        terms = {k: jnp.where(penalized | ~jnp.isfinite(v), jnp.nan, v) for k, v in terms.items()}
        if traj_safe is not None:
            rmse = jnp.where(diverged, jnp.nan, rms_norm(position_error(traj_safe)))
        else:
            rmse = jnp.asarray(jnp.nan, dtype=raw.dtype)
        return value, LossInfo(raw=raw, terms=terms, diverged=diverged, penalized=penalized, rmse_position=rmse)

    def loss(self, theta) -> tuple[Array, LossInfo]:
        """NaN-safe loss of ``theta``: ``(value, LossInfo)``.

        The value is finite always (the penalty for a diverged or non-finite
        evaluation) and its gradient with respect to ``theta`` is exactly zero for
        a penalised evaluation, also inside ``grad(sum(vmap(loss)))``: a custom VJP
        zeroes the cotangent of a penalised member after the backward pass through
        the simulation, where a non-finite state would otherwise turn
        ``0 * inf`` into NaN. Differentiable with respect to ``theta`` only.
        """
        return _guarded_loss(theta, self)

    # ---------------------------------------------------------------- run and report

    def minimize(self, optimizer, options: MinimizeOptions = MinimizeOptions(), *,
                 out_dir: str | Path | None = None, resume: bool = False, progress: bool = True,
                 callback: Callable[[dict], None] | None = None) -> OptimizeResult:
        """:func:`jaxrotor.optimize.minimize` of this problem (arguments as there)."""
        return _minimize(self, optimizer, options, out_dir=out_dir, resume=resume, progress=progress,
                         callback=callback)

    def report(self, result: OptimizeResult, *, physics: Callable[..., dict] | None = None) -> dict[str, Any]:
        """Nothing beyond the keys every run has: ``{}`` (``physics`` is not used)."""
        del result, physics
        return {}


def _plain_loss(theta, problem):
    return problem.evaluate(problem.to_design(theta))


@eqx.filter_custom_vjp
def _guarded_loss(theta, problem):
    return _plain_loss(theta, problem)


@_guarded_loss.def_fwd
def _guarded_fwd(perturbed, theta, problem):
    del perturbed
    value, vjp, info = jax.vjp(lambda th: _plain_loss(th, problem), theta, has_aux=True)
    return (value, info), (vjp, info.penalized)


@_guarded_loss.def_bwd
def _guarded_bwd(residuals, grad_obj, perturbed, theta, problem):
    del perturbed, problem
    vjp, penalized = residuals
    g_value = grad_obj[0]
    if g_value is None:  # symbolic zero: nobody differentiated the value
        return jax.tree_util.tree_map(jnp.zeros_like, theta)
    (g_theta,) = vjp(g_value)
    return jax.tree_util.tree_map(lambda g: jnp.where(penalized | ~jnp.isfinite(g), 0.0, g), g_theta)
