"""The physics-layer check of a robust tuning: held-out members re-flown on the MuJoCo engine.

:func:`physics_metrics` is what :meth:`jaxrotor.optimize.robust.RobustProblem.report`
is given as its ``physics`` measure (:func:`jaxrotor.workflows.report.write_report` passes
it), so ``result.json`` of ``jaxrotor tune`` on a robust configuration holds
``physics_metrics`` beside ``heldout_metrics`` while the optimisation layer never
imports the engine.
"""

from __future__ import annotations

import math
from typing import Any

import equinox as eqx
import jax
import numpy as np

from ..metrics import flight_metrics
from ..optimize.problem import Design
from ..optimize.robust import RobustSettings, member_summary
from ..physics import ModelOptions, PhysicsSettings, build_model, fly_physics
from ..physics.parts import default_parts, parts_mass, scale_masses
from ..randomize import HELDOUT

__all__ = ["physics_metrics"]


def physics_metrics(design: Design, settings: RobustSettings, size: int | None = None, beta: float | None = None,
                    controller=None, timestep: float = 0.001) -> dict[str, Any]:
    """:func:`~jaxrotor.optimize.robust.heldout_metrics` of ``controller`` on the first ``size`` held-out members
    flown on the physics layer.

    Member ``b`` (``b < size``, default ``min(settings.physics_size, settings.heldout_size)``)
    is the same randomized vehicle and flight as in :func:`~jaxrotor.optimize.robust.heldout_metrics`
    (the held-out stream's keys: the same sensor noise, bias, delay, gusts, mean wind, control rate,
    ``c_f``, ``c_tau`` and motor time constant), flown by
    :func:`jaxrotor.physics.fly_physics` on the MuJoCo multibody model of its platform
    built from :func:`jaxrotor.physics.parts.default_parts` of the member: its own parts or
    the paper's Table II parts with every part's mass scaled by ``m_b / m_parts`` (so the
    engine's mass is the member's ``m_b`` [kg]; its inertia is the parts' scaled by the same
    ratio, not the member's per-axis draw), or, for a platform whose mass and inertia are
    numbers, generic parts fitted to the member's mass and diagonal inertia
    (:func:`jaxrotor.physics.parts.fit_parts`). Spinning propellers,
    floor, physics step: the largest ``control_period / j <= timestep`` [s]. The controller
    knows the engine's mass and inertia.

    Args:
        design: the start :class:`~jaxrotor.optimize.Design` (nominal vehicle and flight; its
            flight needs a ``control_rate``).
        settings: the :class:`~jaxrotor.optimize.RobustSettings` whose held-out stream is drawn.
        size: members flown (>= 1).
        beta: CVaR level (default ``settings.beta``).
        controller: the controller flown (default ``design.controller``).
        timestep: the largest physics step [s].

    Returns:
        the dict of :func:`~jaxrotor.optimize.robust.heldout_metrics` (a member whose physics
        flight diverges counts as ``inf``).
    """
    size = min(settings.physics_size, settings.heldout_size) if size is None else size
    if size < 1:
        raise ValueError(f"physics_metrics parameter `size` = {size!r} is invalid. Fix: pass a batch size >= 1.")
    beta = settings.beta if beta is None else beta
    controller = design.controller if controller is None else controller
    platforms, flights = settings.batch(design, HELDOUT, size=size)
    rate = design.flight.control_rate
    if rate is None:
        raise ValueError("physics_metrics: the design's flight has no `control_rate`. Fix: set [control] rate.")
    period = 1.0 / float(rate)
    step = period / math.ceil(period / timestep - 1e-9)
    rows = []
    for b in range(size):
        platform, flight = jax.tree_util.tree_map(lambda a, b=b: a[b] if eqx.is_array(a) else a, (platforms, flights))
        parts = default_parts(platform)
        ratio = float(platform.mass) / parts_mass(parts, platform)
        if abs(ratio - 1.0) > 1e-12:  # fitted parts have the member's mass already
            parts = scale_masses(parts, ratio)
        phys = PhysicsSettings(parts=parts, options=ModelOptions(timestep=step))
        pm = build_model(platform, parts, phys.options)
        traj = fly_physics(platform, controller, flight, phys, model=pm, share_compilation=True).trajectory
        m = flight_metrics(traj, pm.physics_platform())
        rows.append((m.rmse_position, m.rmse_orientation, m.effort_ratio, traj.diverged))
    return member_summary(*(np.asarray([r[i] for r in rows], dtype=float) for i in range(4)), beta)
