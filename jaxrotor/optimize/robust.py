"""Robust objectives: the risk (mean or CVaR) of an objective over a randomized batch, plus a gain price.

A :class:`RobustProblem` holds what a :class:`~jaxrotor.optimize.problem.DesignProblem` does
(design, parameters, objective and divergence penalty) and a batch of ``B`` randomized
vehicles and flights (:mod:`jaxrotor.randomize`). For variables ``theta``::

    L_b(theta)  = the member loss of DesignProblem.loss on member b (NaN-safe, penalised if diverged)
    risk        = mean_b L_b                                   (risk = "mean")
                = CVaR_beta(L_1..L_B)                          (risk = "cvar", see :func:`cvar`)
    loss(theta) = risk + lambda * mean_j K_j(theta) / K_j(theta_0)

The last term is the gain price: ``K_j`` runs over every array leaf of the controller
(its gains), relative to the initial design's, with weight ``lambda`` (``gain_price``).
Under sensor noise a higher gain feeds more noise into the rotors and tracks worse,
so noise, not a clamp, bounds the gains; the price breaks the ties that remain.

The batch is fixed while the loss is minimised (common random numbers: the same
noise, gusts and vehicles at every iteration, so successive losses and gradients
compare like with like); :func:`minimize_robust` redraws it every ``reshuffle_every``
iterations (a new epoch of :func:`jaxrotor.randomize.member_keys`), so the tuning does
not fit one sample. :func:`heldout_metrics` measures a controller on a held-out batch;
:func:`jaxrotor.workflows.robust.physics_metrics` on the first members of that batch flown
on the MuJoCo physics layer (the workflows layer; this module never imports the engine).
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from .. import metrics as _metrics
from ..randomize import HELDOUT, TRAIN, Randomization, fly_batch, member_keys
from . import history as hist
from .loop import MinimizeOptions, OptimizeResult, minimize
from .objectives import AbstractTerm
from .parameters import Parameters
from .problem import AbstractProblem, Design, DesignProblem, LossInfo

__all__ = ["RISKS", "RobustProblem", "RobustSettings", "cvar", "heldout_metrics", "member_summary", "minimize_robust"]

#: The risk measures of a batch.
RISKS = ("mean", "cvar")


def cvar(values: Array, beta: float) -> Array:
    """``CVaR_beta``: the mean of the worst (largest) ``1 - beta`` fraction of ``values`` ``(B,)``.

    With ``x_(1) >= x_(2) >= ... >= x_(B)`` and ``m = (1 - beta) B`` (possibly fractional)::

        CVaR_beta = (1 / m) sum_i w_i x_(i),   w_i = clip(m - (i - 1), 0, 1)

    the exact value for the empirical distribution, equal to Rockafellar and Uryasev's
    ``min_a a + E[(x - a)_+] / (1 - beta)``. ``beta`` in ``(0, 1)``; differentiable
    almost everywhere (through the sort).
    """
    if not 0.0 < beta < 1.0:
        raise ValueError(f"cvar parameter `beta` = {beta!r} is invalid: the level must lie in (0, 1). Fix: pass e.g. "
                         "0.8 (the mean of the worst 20 %).")
    x = jnp.sort(values)[::-1]
    m = (1.0 - beta) * x.shape[0]
    w = jnp.clip(m - jnp.arange(x.shape[0], dtype=x.dtype), 0.0, 1.0)
    return jnp.sum(w * x) / m


@dataclasses.dataclass(frozen=True)
class RobustSettings:
    """How a robust problem is built and minimised (the ``[randomize]`` and ``[robust]`` tables).

    Attributes:
        randomization: the :class:`~jaxrotor.randomize.Randomization`.
        batch_size: flights per iteration ``B`` (>= 1).
        risk: ``"mean"`` or ``"cvar"``.
        beta: CVaR level in ``(0, 1)`` (mean of the worst ``1 - beta``).
        gain_price: weight ``lambda`` of the gain price (>= 0).
        reshuffle_every: redraw the training batch every this many iterations (``None``: never).
        seed: root seed of the training and held-out keys.
        heldout_size: flights of the held-out batch (0: none).
        physics_size: held-out flights re-flown on the MuJoCo physics layer for
            :func:`jaxrotor.workflows.robust.physics_metrics`
            (the first ``min(physics_size, heldout_size)`` members; 0: none).
    """

    randomization: Randomization = dataclasses.field(default_factory=Randomization)
    batch_size: int = 32
    risk: str = "cvar"
    beta: float = 0.8
    gain_price: float = 0.0
    reshuffle_every: int | None = None
    seed: int = 0
    heldout_size: int = 64
    physics_size: int = 8

    def __post_init__(self):
        def bad(name, why, fix):
            raise ValueError(f"RobustSettings parameter `{name}` = {getattr(self, name)!r} is invalid: {why}. "
                             f"Fix: {fix}.")

        if not (isinstance(self.batch_size, int) and self.batch_size >= 1):
            bad("batch_size", "it must be an integer >= 1", "pass e.g. 32")
        if self.risk not in RISKS:
            bad("risk", f"it must be one of {RISKS}", "pass 'mean' or 'cvar'")
        if not (isinstance(self.beta, (int, float)) and 0.0 < self.beta < 1.0):
            bad("beta", "the CVaR level must lie in (0, 1)", "pass e.g. 0.8 (the mean of the worst 20 %)")
        if not (math.isfinite(self.gain_price) and self.gain_price >= 0):
            bad("gain_price", "it must be finite and >= 0", "pass e.g. 0.01, or 0 for no price")
        if self.reshuffle_every is not None and not (isinstance(self.reshuffle_every, int) and self.reshuffle_every >= 1):
            bad("reshuffle_every", "it must be an integer >= 1 or None", "pass e.g. 20")
        if not (isinstance(self.heldout_size, int) and self.heldout_size >= 0):
            bad("heldout_size", "it must be an integer >= 0", "pass e.g. 64")
        if not (isinstance(self.physics_size, int) and self.physics_size >= 0):
            bad("physics_size", "it must be an integer >= 0", "pass e.g. 8, or 0 for no physics-layer check")

    def batch(self, design: Design, stream: int = TRAIN, epoch: int = 0, size: int | None = None):
        """The randomized ``(platforms, flights)`` of ``stream`` / ``epoch`` (leading axis ``size or batch_size``)."""
        keys = member_keys(self.seed, self.batch_size if size is None else size, stream, epoch)
        return self.randomization.batch(keys, design.platform, design.flight)


def _controller_leaves(controller) -> list[Array]:
    return jax.tree_util.tree_leaves(eqx.filter(controller, eqx.is_inexact_array))


class RobustProblem(AbstractProblem):
    """The robust loss of a design problem over a randomized batch (see the module docstring).

    An :class:`~jaxrotor.optimize.problem.AbstractProblem` like
    :class:`~jaxrotor.optimize.problem.DesignProblem` (the same ``design``, ``parameters``,
    ``objective`` and ``divergence_penalty``, hence the same ``init`` and ``to_design``), so
    :func:`jaxrotor.optimize.minimize` and the report writer take it unchanged;
    :meth:`minimize` adds the batch redraws of :func:`minimize_robust`. Build it from a
    nominal problem with :meth:`build`.

    Attributes:
        design: the start design (nominal vehicle and flight).
        parameters: the parameter selection.
        objective: the per-flight objective.
        platforms: batched platforms (leading axis ``B`` on every array leaf).
        flights: batched flights (keys, wind, motor time constants, ...).
        settings: the :class:`RobustSettings` (risk, level, price, batch, seeds; static).
        divergence_penalty: the loss of a diverged member flight (static).
    """

    design: Design
    parameters: Parameters
    objective: AbstractTerm
    platforms: Any
    flights: Any
    settings: RobustSettings = eqx.field(static=True)
    divergence_penalty: float = eqx.field(static=True, default=1e3)

    @classmethod
    def build(cls, problem: DesignProblem, settings: RobustSettings, epoch: int = 0) -> RobustProblem:
        """The robust problem of ``problem`` (its design, parameters, objective and penalty) on the training
        batch of ``epoch`` drawn as ``settings`` say."""
        platforms, flights = settings.batch(problem.design, TRAIN, epoch)
        return cls(problem.design, problem.parameters, problem.objective, platforms, flights, settings,
                   problem.divergence_penalty)

    @property
    def nominal(self) -> DesignProblem:
        """The one-flight problem of the start design (same parameters, objective and penalty)."""
        return DesignProblem(self.design, self.parameters, self.objective, self.divergence_penalty)

    @property
    def batch_size(self) -> int:
        """``B``, flights per evaluation."""
        return int(jax.tree_util.tree_leaves(eqx.filter(self.platforms, eqx.is_array))[0].shape[0])

    def with_batch(self, platforms, flights) -> RobustProblem:
        """The same problem on another batch (same shapes: no recompilation)."""
        return eqx.tree_at(lambda r: (r.platforms, r.flights), self, (platforms, flights))

    def minimize(self, optimizer, options: MinimizeOptions = MinimizeOptions(), *,
                 out_dir: str | Path | None = None, resume: bool = False, progress: bool = True,
                 callback: Callable[[dict], None] | None = None) -> OptimizeResult:
        """:func:`minimize_robust` of this problem (arguments as :func:`jaxrotor.optimize.minimize`)."""
        return minimize_robust(self, optimizer, options, out_dir=out_dir, resume=resume, progress=progress,
                               callback=callback)

    def report(self, result: OptimizeResult, *, physics: Callable[..., dict] | None = None) -> dict[str, Any]:
        """``{"robust": settings, "heldout_metrics": {...}, "physics_metrics": {...}}`` for ``result.json``.

        :func:`heldout_metrics` of the start and the best controller on the held-out
        batch (nothing when ``settings.heldout_size`` is 0), and ``physics`` (the workflows
        layer's :func:`jaxrotor.workflows.robust.physics_metrics`) of both on its first
        ``min(physics_size, heldout_size)`` members flown on the physics layer (nothing when
        that is 0 or ``physics`` is ``None``); each as ``{"initial": ..., "final": ...}``.
        """
        s = self.settings
        out: dict[str, Any] = {"robust": {"batch_size": s.batch_size, "risk": s.risk, "beta": s.beta,
                                          "gain_price": s.gain_price, "reshuffle_every": s.reshuffle_every,
                                          "seed": s.seed, "heldout_size": s.heldout_size,
                                          "physics_size": min(s.physics_size, s.heldout_size),
                                          "randomization": dataclasses.asdict(s.randomization)
                                          if dataclasses.is_dataclass(s.randomization) else {}}}
        if s.heldout_size:
            out["heldout_metrics"] = {"initial": heldout_metrics(result.initial_design, s),
                                      "final": heldout_metrics(result.design, s)}
        n_phys = min(s.physics_size, s.heldout_size)
        if n_phys and physics is not None:
            out["physics_metrics"] = {"initial": physics(result.initial_design, s, size=n_phys),
                                      "final": physics(result.design, s, size=n_phys)}
        return out

    def member_losses(self, theta) -> tuple[Array, LossInfo]:
        """``(B,)`` member losses and their batched :class:`LossInfo` (each NaN-safe, see ``DesignProblem.loss``)."""
        def member(platform, flight):
            design = Design(platform, self.design.controller, flight)
            return DesignProblem(design, self.parameters, self.objective, self.divergence_penalty).loss(theta)

        return eqx.filter_vmap(member)(self.platforms, self.flights)

    def aggregate(self, values: Array) -> Array:
        """The risk of ``(B,)`` member losses: their mean or ``CVaR_beta``."""
        s = self.settings
        return jnp.mean(values) if s.risk == "mean" else cvar(values, s.beta)

    def price(self, theta) -> Array:
        """``lambda mean_j K_j(theta) / K_j(theta_0)`` over every controller array leaf (its gains)."""
        now = _controller_leaves(self.to_design(theta).controller)
        start = _controller_leaves(self.design.controller)
        ratio = jnp.mean(jnp.concatenate([jnp.ravel(a / b) for a, b in zip(now, start)]))
        return self.settings.gain_price * ratio

    def loss(self, theta) -> tuple[Array, LossInfo]:
        """``risk(member losses) + price``, with a :class:`LossInfo` over the batch.

        ``terms`` and ``rmse_position`` are batch means over the members that did not
        diverge; ``diverged`` and ``penalized`` are set if any member's are (the loop
        then rejects the point: a robust design keeps every member flying).
        """
        values, info = self.member_losses(theta)
        value = self.aggregate(values) + self.price(theta)
        terms = {k: jnp.nanmean(v) for k, v in info.terms.items()}
        return value, LossInfo(raw=value, terms=terms, diverged=jnp.any(info.diverged),
                               penalized=jnp.any(info.penalized) | ~jnp.isfinite(value),
                               rmse_position=jnp.nanmean(info.rmse_position))


def minimize_robust(robust: RobustProblem, optimizer, options: MinimizeOptions, *,
                    out_dir: str | Path | None = None, resume: bool = False, progress: bool = True,
                    callback: Callable[[dict], None] | None = None) -> OptimizeResult:
    """:func:`jaxrotor.optimize.minimize` of ``robust``, redrawing its batch every ``settings.reshuffle_every`` iterations.

    Iterations ``[e N, (e + 1) N)`` use the training batch of epoch ``e``
    (``N = reshuffle_every``); between epochs the run continues exactly from its
    checkpoint (optimiser state, step scale, best point), so the result is one run
    with one ``history.csv``. Without ``reshuffle_every`` this is ``minimize``.
    """
    settings = robust.settings
    if settings.reshuffle_every is None:
        return minimize(robust, optimizer, options, out_dir=out_dir, resume=resume, progress=progress,
                        callback=callback)
    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory()
        out_dir = tmp.name
    out = Path(out_dir)
    done = len(hist.read_history(out / hist.HISTORY_FILE)) if resume and (out / hist.HISTORY_FILE).is_file() else 0
    n = settings.reshuffle_every
    epoch = done // n
    first = True
    try:
        while True:
            end = min((epoch + 1) * n, options.iterations)
            platforms, flights = settings.batch(robust.design, TRAIN, epoch)
            result = minimize(robust.with_batch(platforms, flights), optimizer, dataclasses.replace(options, iterations=end),
                              out_dir=out, resume=resume or not first, progress=progress, callback=callback)
            if first:
                resumed = (result.resumed_from, result.resume_mode)
            first = False
            if result.stop_reason != "iterations" or result.iterations >= options.iterations:
                break
            epoch += 1
    finally:
        if tmp is not None:
            tmp.cleanup()
    result.resumed_from, result.resume_mode = resumed
    if tmp is not None:
        result.out_dir = None
    return result


@eqx.filter_jit
def _batch_metrics(platforms, controller, flights) -> _metrics.FlightMetrics:
    traj = fly_batch(platforms, controller, flights)
    return eqx.filter_vmap(_metrics.flight_metrics)(traj, platforms)


def heldout_metrics(design: Design, settings: RobustSettings, size: int | None = None, beta: float | None = None,
                    controller=None) -> dict[str, Any]:
    """Metrics of ``controller`` (default ``design.controller``) on the held-out batch of ``settings``.

    The batch is ``settings.batch(design, HELDOUT, size=size or settings.heldout_size)``:
    keys of a stream training never draws from. Returns a JSON-ready dict:
    ``rmse_position`` (mean over the batch [m]), ``rmse_position_cvar`` (``CVaR_beta``,
    ``beta`` default ``settings.beta``), ``rmse_position_max``, ``rmse_position_median``,
    ``rmse_orientation`` (mean [rad]), ``effort_ratio`` (mean), ``diverged`` (count),
    ``flights`` and ``rmse_position_all`` (every member [m]). A diverged member counts as
    ``inf`` in the mean, CVaR and max (so a diverging controller cannot look good).
    """
    size = settings.heldout_size if size is None else size
    if size < 1:
        raise ValueError(f"heldout_metrics parameter `size` = {size!r} is invalid. Fix: pass a batch size >= 1.")
    beta = settings.beta if beta is None else beta
    platforms, flights = settings.batch(design, HELDOUT, size=size)
    m = _batch_metrics(platforms, design.controller if controller is None else controller, flights)
    return member_summary(m.rmse_position, m.rmse_orientation, m.effort_ratio, m.diverged, beta)


def member_summary(rmse_position, rmse_orientation, effort_ratio, diverged, beta: float) -> dict[str, Any]:
    """The JSON-ready metrics dict of :func:`heldout_metrics` from per-member values.

    Args:
        rmse_position: ``(B,)`` position RMSE of each member [m].
        rmse_orientation: ``(B,)`` orientation RMSE [rad].
        effort_ratio: ``(B,)`` effort ratios.
        diverged: ``(B,)`` bool, whether each member diverged (counted as ``inf``).
        beta: the CVaR level in ``(0, 1)``.
    """
    div = np.asarray(diverged, dtype=bool)
    size = int(div.size)
    rmse = np.where(div, np.inf, np.asarray(rmse_position, dtype=float))
    return {
        "rmse_position": float(np.mean(rmse)),
        "rmse_position_cvar": float(cvar(jnp.asarray(rmse), beta)) if np.all(np.isfinite(rmse)) else math.inf,
        "rmse_position_max": float(np.max(rmse)),
        "rmse_position_median": float(np.median(rmse)),
        "rmse_orientation": float(np.mean(np.where(div, np.inf, np.asarray(rmse_orientation, dtype=float)))),
        "effort_ratio": float(np.mean(np.asarray(effort_ratio, dtype=float))),
        "diverged": int(div.sum()),
        "flights": int(size),
        "cvar_beta": float(beta),
        "rmse_position_all": rmse.tolist(),
    }
