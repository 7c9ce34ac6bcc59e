"""Differentiable design: parameters and bounds, objectives, NaN-safe problems and optax loops.

The pieces (``docs/optimization.md`` has the walk-through), one module each:

* ``parameters`` - :class:`Parameters` (which leaves of a :class:`Design` are optimised,
  an ``eqx.partition`` filter built from dotted paths) and the transforms
  :class:`Identity`, :class:`Log`, :class:`Interval`, :class:`LogInterval`, :class:`Box`.
* ``objectives`` - composable terms (:mod:`jaxrotor.optimize.objectives`).
* ``problem`` - :class:`Design` (platform, controller, :class:`~jaxrotor.flight.Flight`),
  the interface :class:`AbstractProblem` (``loss``, ``minimize``, ``report``) and
  :class:`DesignProblem`: ``theta -> design -> flight -> objective`` with a NaN-safe loss.
* ``step`` - compiled steps (:func:`make_step`) and the vmapped :func:`minimize_batch`.
* ``loop`` - :func:`minimize` with :class:`MinimizeOptions`: step rejection, early
  stopping, exact resume.
* ``history`` - ``history.csv`` and ``checkpoint.eqx``.
* ``robust`` - :class:`RobustProblem`: mean or CVaR over a randomized batch.

The files a run ends with (``result.json``, ``loss.png``, ``params.png``) are written by
the workflows layer, :func:`jaxrotor.workflows.report.write_report`.

Example::

    import optax
    import jaxrotor as jr
    from jaxrotor import optimize as op
    from jaxrotor.optimize import objectives as ob

    flight = jr.flight.Flight(jr.reference.FigureEight(5.0, period=10.0),
                              integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.02)
    design = op.Design(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3(), flight)
    params = op.Parameters.select(design, {"platform.alpha": op.Interval(0.0, 1.2), "controller": op.Log()})
    problem = op.DesignProblem(design, params, ob.Tracking() + 0.1 * ob.Energy())
    result = problem.minimize(optax.adam(0.05), op.MinimizeOptions(iterations=50), out_dir="out")
"""

from . import objectives as objectives
from .history import CHECKPOINT_FILE as CHECKPOINT_FILE
from .history import HISTORY_FILE as HISTORY_FILE
from .history import read_history as read_history
from .loop import MinimizeOptions as MinimizeOptions
from .loop import OptimizeResult as OptimizeResult
from .loop import minimize as minimize
from .parameters import TRANSFORMS as TRANSFORMS
from .parameters import AbstractTransform as AbstractTransform
from .parameters import Box as Box
from .parameters import Identity as Identity
from .parameters import Interval as Interval
from .parameters import Log as Log
from .parameters import LogInterval as LogInterval
from .parameters import Parameters as Parameters
from .problem import AbstractProblem as AbstractProblem
from .problem import Design as Design
from .problem import DesignProblem as DesignProblem
from .problem import LossInfo as LossInfo
from .robust import RobustProblem as RobustProblem
from .robust import RobustSettings as RobustSettings
from .robust import cvar as cvar
from .robust import heldout_metrics as heldout_metrics
from .step import Stepper as Stepper
from .step import batch_axes as batch_axes
from .step import make_step as make_step
from .step import minimize_batch as minimize_batch

__all__ = [
    "objectives", "AbstractProblem", "Design", "DesignProblem", "LossInfo", "Parameters", "AbstractTransform", "Identity", "Log",
    "Interval", "LogInterval", "Box", "TRANSFORMS", "Stepper", "make_step", "batch_axes", "minimize_batch",
    "MinimizeOptions", "OptimizeResult", "minimize", "read_history", "HISTORY_FILE", "CHECKPOINT_FILE",
    "RobustProblem", "RobustSettings", "cvar", "heldout_metrics",
]
