"""The two layers compared: the paper's Table IV (columns a, p and their difference), Fig. 8 and the tilt.

The pieces :func:`jaxrotor.workflows.validate.validate` and
:func:`jaxrotor.workflows.usecase.run` (``physics=True``) share:
:func:`physics_settings` (the physics layer's settings for a platform),
:func:`delta_omega` (``Delta omega_i = omega_i^p - omega_i^a``, Fig. 8),
:func:`tilt_comparison`, :func:`plot_delta_omega`, :func:`table_iv` (the
comparison, beside the paper's columns, :data:`PAPER_TABLE_IV`, for the paper's use case) and
:func:`layer_mismatch` (the engine's mass and inertia against the platform's).
"""

from __future__ import annotations

import math

import numpy as np

from ..physics.engine import PhysicsSettings
from ..physics.mjcf import MISMATCH_TOLERANCE, ModelOptions
from ..physics.parts import default_parts

__all__ = [
    "PAPER_TABLE_IV",
    "STEADY_AFTER_JUMP_S",
    "delta_omega",
    "layer_mismatch",
    "physics_settings",
    "plot_delta_omega",
    "table_iv",
    "tilt_comparison",
]

#: Table IV of the paper, mean absolute errors per axis: e_p [m], e_R [rad], columns a (analytic) and p (physics).
PAPER_TABLE_IV = {
    "analytic": {"mae_position_xyz": [1.7216e-03, 3.4434e-03, 1.5840e-05],
                 "mae_orientation_xyz": [8.5025e-18, 7.0063e-18, 7.1449e-18]},
    "physics": {"mae_position_xyz": [1.7089e-03, 3.4200e-03, 5.667e-05],
                "mae_orientation_xyz": [3.322e-04, 1.0891e-04, 1.66e-07]},
}

#: Seconds after each reference jump excluded from ``max_abs_delta_omega_steady``.
STEADY_AFTER_JUMP_S = 1.0


def physics_settings(platform, timestep: float = 0.001) -> PhysicsSettings:
    """The physics layer's settings for ``platform``: :func:`~jaxrotor.physics.parts.default_parts` (the
    platform's own parts; the paper's Table II parts for its presets; else generic parts fitted to its mass and
    inertia, :func:`~jaxrotor.physics.parts.fit_parts`), physics step ``timestep`` [s] (default 1 ms; the control
    rate is the flight's, or one tick per step)."""
    return PhysicsSettings(parts=default_parts(platform), options=ModelOptions(timestep=timestep))


def delta_omega(analytic, physics, jump_times=(), after: float = STEADY_AFTER_JUMP_S):
    """``Delta omega_i = omega_i^p - omega_i^a`` ``(T, n)`` [rad/s] on the common save times, and the largest
    ``|Delta omega|`` over the whole flight and outside ``[t_j, t_j + after]`` for every reference jump ``t_j``.

    Returns:
        ``(dw (T, n), max_abs, max_abs_steady)``.
    """
    t = np.asarray(analytic.t)
    dw = np.asarray(physics.rotor_speed) - np.asarray(analytic.rotor_speed)
    steady = np.ones(len(t), dtype=bool)
    for tj in jump_times:
        steady &= ~((t >= tj - 1e-9) & (t <= tj + after))
    finite = np.isfinite(dw)
    whole = float(np.max(np.abs(np.where(finite, dw, np.inf)))) if dw.size else 0.0
    st = dw[steady]
    steady_max = float(np.max(np.abs(np.where(np.isfinite(st), st, np.inf)))) if st.size else 0.0
    return dw, whole, steady_max


def tilt_comparison(platform, analytic, physics) -> dict:
    """The tilt histories of both layers, per tilting angle set of ``platform`` (empty for a fixed-tilt one).

    For each key in ``platform.tilting`` (``"alpha"``, ``"beta"``): the smallest and largest angle
    [rad] and the largest rate ``max |d angle / dt|`` [rad/s] (finite differences over the save
    times) on the analytic layer (servo-model state) and the physics layer (the engine's hinge
    angles), and ``max_abs_difference`` ``max_t,i |angle_p - angle_a|`` [rad] on the common save times.
    """
    t = np.asarray(analytic.t)
    out = {}
    for key in platform.tilting:
        a = np.asarray(getattr(analytic, key)).reshape(len(t), -1)
        p = np.asarray(getattr(physics, key)).reshape(len(t), -1)

        def rate(x):
            return float(np.max(np.abs(np.diff(x, axis=0)) / np.diff(t)[:, None])) if len(t) > 1 else 0.0

        out[key] = {"min_analytic": float(a.min()), "max_analytic": float(a.max()), "min_physics": float(p.min()),
                    "max_physics": float(p.max()), "rate_max_analytic": rate(a), "rate_max_physics": rate(p),
                    "max_abs_difference": float(np.max(np.abs(p - a)))}
    return out


def plot_delta_omega(t, dw, path, title: str = "Fig. 8: Δω = ω^p − ω^a", band: float = 2.0, jump_times=(),
                     band_note: str | None = "the paper's Fig. 8 band"):
    """Fig. 8: ``Delta omega_i(t)`` [rad/s] of every rotor, the whole range and zoomed to ``+-band``.

    Args:
        t: ``(T,)`` times [s]. dw: ``(T, n)`` ``omega_i^p - omega_i^a`` [rad/s].
        path: PNG file. band: half-height of the zoomed panel [rad/s] (the paper's Fig. 8: 2 rad/s).
        jump_times: reference jumps [s], drawn as dotted lines.
        title: the figure's title (the paper's use case: ``"... Fig. 8 ..."``; any other vehicle: its name,
            :func:`jaxrotor.workflows.paper.output_title`).
        band_note: said of the band in the zoomed panel's title (``None`` for a vehicle other than the paper's).
    """
    import matplotlib

    from ..io.plotting import save_figure

    matplotlib.use("Agg")  # files only, never a display (as jaxrotor.io.plotting)
    import matplotlib.pyplot as plt

    t, dw = np.asarray(t), np.asarray(dw)
    fig, axes = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    for ax, zoom in zip(axes, (False, True)):
        for i in range(dw.shape[1]):
            ax.plot(t, dw[:, i], lw=0.9, label=f"Δω{i + 1}")
        for tj in jump_times:
            ax.axvline(tj, color="k", ls=":", lw=0.8)
        if zoom:
            ax.set_ylim(-band * 1.25, band * 1.25)
            ax.axhline(band, color="gray", lw=0.6)
            ax.axhline(-band, color="gray", lw=0.6)
            ax.set_title(f"zoomed to ±{band:g} rad/s" + (f" ({band_note})" if band_note else ""), fontsize=9)
        else:
            ax.set_title(title, fontsize=10)
            ax.legend(fontsize=7, ncol=dw.shape[1], loc="upper right")
        ax.set_ylabel("Δω [rad/s]")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("t [s]")
    return save_figure(fig, path)


def _row(title, values, fmt=".4e"):
    cells = []
    for v in values:
        if v is None:
            cells.append(f"{'':>13}")
        elif isinstance(v, str):
            cells.append(f"{v:>13}")
        elif isinstance(v, float) and not math.isfinite(v):
            cells.append(f"{'n/a':>13}")
        else:
            cells.append(f"{format(v, fmt):>13}")
    return f"{title:<20}" + "".join(cells)


def table_iv(analytic_metrics: dict, physics_metrics: dict, paper: dict | None = PAPER_TABLE_IV,
             title: str | None = None) -> str:
    """Per-axis MAE of e_p [m] and e_R [rad] on both layers: Table IV as the paper prints it, for its use case.

    With ``paper`` (the paper's use case, :func:`jaxrotor.workflows.paper.is_paper_use_case`) the table is
    headed ``Table IV`` and its columns are paper a, paper p, paper p - a, then jaxrotor a, p, p - a.
    Without, it has jaxrotor's columns only, under the line ``title`` (the flight's name,
    :func:`jaxrotor.workflows.paper.output_title`) and a ``MAE`` head.
    A diverged flight's column reads ``DIVERGED``.
    """
    heads = (["paper a", "paper p", "paper p-a"] if paper else []) + ["jaxrotor a", "jaxrotor p", "jaxrotor p-a"]
    header = f"{'Table IV' if paper else 'MAE':<20}" + "".join(f"{h:>13}" for h in heads)
    lines = ([] if paper or not title else [f"{title}: mean absolute errors, analytic (a) and physics (p) layer"])
    lines += [header, "-" * len(header)]
    div_a, div_p = bool(analytic_metrics["diverged"]), bool(physics_metrics["diverged"])
    for key, names in (("mae_position_xyz", [f"MAE(e_p,{c}) [m]" for c in "xyz"]),
                       ("mae_orientation_xyz", [f"MAE(e_R,{i}) [rad]" for i in (1, 2, 3)])):
        for i, title_i in enumerate(names):
            vals = []
            if paper:
                pa, pp = paper["analytic"][key][i], paper["physics"][key][i]
                vals += [pa, pp, pp - pa]
            a = analytic_metrics[key][i]
            p = physics_metrics[key][i]
            vals += ["DIVERGED" if div_a else a, "DIVERGED" if div_p else p,
                     "DIVERGED" if (div_a or div_p) else p - a]
            lines.append(_row(title_i, vals))
    return "\n".join(lines)


def layer_mismatch(pm, paper: bool = False, tolerance: float = MISMATCH_TOLERANCE) -> dict:
    """The physics layer's mass and inertia against the analytic layer's (the platform's).

    Args:
        pm: the :class:`~jaxrotor.physics.mjcf.PhysicsModel` flown (``mass`` [kg], ``inertia`` [kg m^2] of the
            engine; ``platform_mass``, ``platform_inertia`` of the platform).
        paper: whether the vehicle is the paper's (:func:`jaxrotor.workflows.paper.is_paper_vehicle`): its two
            inertias differ by design (Table II's ``J^a`` for the analytic column, ``J^p`` for the physics one).
        tolerance: the relative difference above which the layers differ (default 0.5 %, as
            :class:`~jaxrotor.physics.mjcf.InertiaMismatchWarning`).

    Returns:
        ``{"differ": bool, "by_design": bool, "tolerance": float, "max_relative_difference": float,
        "mass": {"analytic", "physics" [kg], "relative"}, "inertia": {"analytic", "physics" (3, 3) [kg m^2],
        "relative" (3, 3)}, "line": str}``: ``relative`` is ``(physics - analytic) / analytic`` (inertia:
        ``/ sqrt(J_ii J_jj)``, :attr:`~jaxrotor.physics.mjcf.PhysicsModel.relative_difference`); ``differ``
        when the largest exceeds ``tolerance``; ``by_design`` for the paper's vehicle; ``line`` the printed
        sentence (empty when the layers agree).
    """
    d = pm.relative_difference
    worst = float(pm.max_relative_difference)
    differ = worst > tolerance
    by_design = bool(differ and paper)
    line = ""
    if differ:
        Ja, Jp = np.diag(np.asarray(pm.platform_inertia, dtype=float)), np.diag(np.asarray(pm.inertia, dtype=float))
        rel = np.diag(np.asarray(d["inertia"], dtype=float))
        line = ("mass/inertia differ between the layers" + (" (by design: the paper's Table II gives J^a to the "
                "analytic column and J^p to the physics one)" if by_design else "")
                + f": mass {pm.platform_mass:.6g} kg analytic vs {pm.mass:.6g} kg physics "
                f"({100 * float(d['mass']):+.2f} %), inertia diag [kg m^2] "
                + ", ".join(f"{'xyz'[k]} {Ja[k]:.6g} vs {Jp[k]:.6g} ({100 * rel[k]:+.2f} %)" for k in range(3))
                + f"; largest relative difference {100 * worst:.2f} % (tolerance {100 * tolerance:g} %)"
                + ("" if by_design else ". The analytic layer flies the platform's values, the physics layer the "
                   "engine's: the layers compare two vehicles"))
    return {"differ": differ, "by_design": by_design, "tolerance": float(tolerance),
            "max_relative_difference": worst,
            "mass": {"analytic": float(pm.platform_mass), "physics": float(pm.mass), "relative": float(d["mass"])},
            "inertia": {"analytic": np.asarray(pm.platform_inertia, dtype=float).tolist(),
                        "physics": np.asarray(pm.inertia, dtype=float).tolist(),
                        "relative": np.asarray(d["inertia"], dtype=float).tolist()},
            "line": line}
