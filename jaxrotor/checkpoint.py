"""What reverse mode stores in a fixed-step solve: the checkpoint strategies of ``Integrator(checkpoint=...)``.

A fixed-step solve (:func:`jaxrotor.integrate.integrate_fixed_step`,
:func:`jaxrotor.integrate.fixed_steps`) is a loop over save intervals, each a loop over
steps; a strategy wraps the two loop bodies (and the vector field each stage evaluates)
before they are traced, as diffrax chooses its adjoint: :class:`AutoCheckpoint` (default),
:class:`StepCheckpoint`, :class:`IntervalCheckpoint`, :class:`StageCheckpoint`, :class:`NoCheckpoint`, or a user's own
:class:`AbstractCheckpoint`. Every strategy gives the same solution and gradient to
rounding; they differ in memory and recomputation. The names are also importable from
:mod:`jaxrotor.integrate` and ``jaxrotor``.
"""

from __future__ import annotations

import abc
import warnings
from collections.abc import Callable

import equinox as eqx
import jax
import numpy as np

__all__ = ["AUTO_INTERVAL_STEPS", "AbstractCheckpoint", "AutoCheckpoint", "IntervalCheckpoint", "NoCheckpoint",
           "StageCheckpoint", "StepCheckpoint"]


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


def _check_flag(strategy) -> None:
    """Refuse a ``recompute_field`` that is not a bool (at construction, naming the strategy and the value)."""
    if not isinstance(strategy.recompute_field, (bool, np.bool_)):
        raise ValueError(f"{type(strategy).__name__} parameter `recompute_field` = {strategy.recompute_field!r} is "
                         "invalid. Fix: pass True (default: the field recomputed per stage in reverse mode) or False.")


def _field(strategy, field: Callable) -> Callable:
    """``field`` wrapped in ``jax.checkpoint`` under ``strategy.policy`` when ``strategy.recompute_field``, else as is."""
    return _remat(field, strategy.policy) if strategy.recompute_field else field


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
      ``n_steps`` of a :func:`fixed_steps` call), a function of the loop carry;
    * ``wrap_field(field)`` (optional, default: unchanged): the vector field ``field(t, y)``
      on the flat state as every stage of a step evaluates it.

    ``interval_steps`` is the largest number of steps one save interval holds (static).
    The wrappers change what reverse mode stores and recomputes, never a value: every
    strategy gives the same solution and the same gradient to rounding. Subclass this (an
    ``equinox.Module`` with static fields) to define your own; the loop calls only these
    three methods.
    """

    @abc.abstractmethod
    def wrap_step(self, step: Callable, interval_steps: int) -> Callable:
        """``step``, or a function with the same signature and value (e.g. ``jax.checkpoint(step)``)."""

    @abc.abstractmethod
    def wrap_interval(self, interval: Callable, interval_steps: int) -> Callable:
        """``interval``, or a function with the same signature and value (e.g. ``jax.checkpoint(interval)``)."""

    def wrap_field(self, field: Callable) -> Callable:
        """The vector field ``field(t, y) -> dy/dt`` on the flat state as each stage of a step evaluates it, or a
        function with the same value (e.g. ``jax.checkpoint(field)``). Default: ``field`` unchanged."""
        return field


class NoCheckpoint(AbstractCheckpoint):
    """Store every stage's intermediates: no recomputation (memory per step = the stages' residuals)."""

    def wrap_step(self, step, interval_steps):
        """``step`` unchanged."""
        return step

    def wrap_interval(self, interval, interval_steps):
        """``interval`` unchanged."""
        return interval


class StageCheckpoint(AbstractCheckpoint):
    """Store each stage's input ``(t_i, y_i)`` and recompute the vector field there in reverse mode (``jax.checkpoint``
    around the field, no step or interval recomputed).

    Reverse mode then evaluates the field once more per stage, instead of reading back every
    intermediate of the field (what :class:`NoCheckpoint` stores) or stepping again (what
    :class:`StepCheckpoint` and :class:`IntervalCheckpoint` do before they differentiate).
    Memory per step = one state per stage (plus what ``policy`` keeps).

    Attributes:
        policy: as :class:`StepCheckpoint`, for the field's intermediates.
    """

    policy: str | Callable | None = eqx.field(static=True, default=None, converter=_as_policy)

    def wrap_step(self, step, interval_steps):
        """``step`` unchanged."""
        return step

    def wrap_interval(self, interval, interval_steps):
        """``interval`` unchanged."""
        return interval

    def wrap_field(self, field):
        """``jax.checkpoint(field, policy=policy)``."""
        return _remat(field, self.policy)


class StepCheckpoint(AbstractCheckpoint):
    """Recompute each step from the state stored before it (``jax.checkpoint`` around one step).

    Memory per step = one state (plus what ``policy`` keeps).

    Attributes:
        policy: ``None`` (default: recompute everything), the name of a
            ``jax.checkpoint_policies`` policy (e.g. ``"dots_with_no_batch_dims_saveable"``)
            or a policy callable, saying which intermediates are kept rather than recomputed.
        recompute_field: also recompute each stage's vector field from the stage's input while the
            recomputed step is differentiated (``jax.checkpoint`` around the field, :meth:`wrap_field`;
            default ``True``): the step's reverse pass then reads back one state per stage rather
            than every intermediate of the field. Measured 0.87x the gradient time of the 45 s use
            case (Tsit5, stages in a scan) and 0.93x with RK4's stages written out, at no more
            compilation (``experiments/benchmark_gradients.py``).
    """

    policy: str | Callable | None = eqx.field(static=True, default=None, converter=_as_policy)
    recompute_field: bool = eqx.field(static=True, default=True)

    def __check_init__(self):
        _check_flag(self)

    def wrap_step(self, step, interval_steps):
        """``jax.checkpoint(step, policy=policy)``."""
        return _remat(step, self.policy)

    def wrap_interval(self, interval, interval_steps):
        """``interval`` unchanged."""
        return interval

    def wrap_field(self, field):
        """``jax.checkpoint(field, policy=policy)`` when ``recompute_field``, else ``field``."""
        return _field(self, field)


class IntervalCheckpoint(AbstractCheckpoint):
    """Store one state per save time and recompute the steps between two saves (``jax.checkpoint`` per interval).

    The backward pass holds every step's residuals of one interval at a time, so a solve
    that saves only ``t1`` stores as much as :class:`NoCheckpoint`.

    Attributes:
        policy: as :class:`StepCheckpoint`.
        recompute_field: as :class:`StepCheckpoint` (default ``True``).
    """

    policy: str | Callable | None = eqx.field(static=True, default=None, converter=_as_policy)
    recompute_field: bool = eqx.field(static=True, default=True)

    def __check_init__(self):
        _check_flag(self)

    def wrap_step(self, step, interval_steps):
        """``step`` unchanged."""
        return step

    def wrap_interval(self, interval, interval_steps):
        """``jax.checkpoint(interval, policy=policy)``."""
        return _remat(interval, self.policy)

    def wrap_field(self, field):
        """``jax.checkpoint(field, policy=policy)`` when ``recompute_field``, else ``field``."""
        return _field(self, field)


class AutoCheckpoint(AbstractCheckpoint):
    """The default: :class:`IntervalCheckpoint` when no save interval holds more than ``max_interval_steps`` steps,
    else :class:`StepCheckpoint` (both with ``policy``).

    On the 45 s use case saved every step, reverse mode measured 10-20 % cheaper than
    :class:`StepCheckpoint`.

    Attributes:
        max_interval_steps: the most steps per save interval for which whole intervals are
            recomputed (default :data:`AUTO_INTERVAL_STEPS` = 16; their residuals are live at once).
        policy: as :class:`StepCheckpoint`.
        recompute_field: as :class:`StepCheckpoint` (default ``True``), passed to the chosen strategy.
    """

    max_interval_steps: int = eqx.field(static=True, default=AUTO_INTERVAL_STEPS)
    policy: str | Callable | None = eqx.field(static=True, default=None, converter=_as_policy)
    recompute_field: bool = eqx.field(static=True, default=True)

    def __check_init__(self):
        _check_flag(self)
        if isinstance(self.max_interval_steps, bool) or not isinstance(self.max_interval_steps, int) or not (
                self.max_interval_steps >= 1):
            raise ValueError(f"AutoCheckpoint parameter `max_interval_steps` = {self.max_interval_steps!r} is invalid. "
                             f"Fix: pass a positive int, e.g. {AUTO_INTERVAL_STEPS}.")

    def choose(self, interval_steps: int) -> AbstractCheckpoint:
        """The strategy used for a solve whose save intervals hold at most ``interval_steps`` steps."""
        if interval_steps <= self.max_interval_steps:
            return IntervalCheckpoint(policy=self.policy, recompute_field=self.recompute_field)
        return StepCheckpoint(policy=self.policy, recompute_field=self.recompute_field)

    def wrap_step(self, step, interval_steps):
        """As the chosen strategy (:meth:`choose`)."""
        return self.choose(interval_steps).wrap_step(step, interval_steps)

    def wrap_interval(self, interval, interval_steps):
        """As the chosen strategy (:meth:`choose`)."""
        return self.choose(interval_steps).wrap_interval(interval, interval_steps)

    def wrap_field(self, field):
        """As either strategy :meth:`choose` returns (both wrap the field alike)."""
        return _field(self, field)


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
