"""Both layers side by side: the paper's Table IV (columns a, p and their difference) and Fig. 8.

:func:`validate` flies one :class:`~jaxrotor.io.config.FlightConfig` on the
analytic layer (:func:`jaxrotor.flight.fly`) and on the physics layer
(:func:`jaxrotor.physics.engine.fly_physics`), computes every metric of both with
the one :func:`jaxrotor.metrics.flight_metrics`, and compares the rotor speeds
``Delta omega_i = omega_i^p - omega_i^a`` (Fig. 8). :func:`table_iv` prints the
comparison beside the paper's columns.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path

import numpy as np

from .._util import to_jsonable
from ..io.config import FlightConfig
from ..metrics import flight_metrics
from .engine import PhysicsResult, PhysicsSettings, fly_physics
from .mjcf import build_model
from .parts import Arm, Hub, LandingGear, Motor, Parts, Propeller, paper_hexarotor_parts

__all__ = [
    "PAPER_TABLE_IV",
    "VALIDATION_KEYS",
    "default_parts",
    "delta_omega",
    "physics_settings",
    "table_iv",
    "tilt_comparison",
    "validate",
]

#: Table IV of the paper, mean absolute errors per axis: e_p [m], e_R [rad], columns a (analytic) and p (physics).
PAPER_TABLE_IV = {
    "analytic": {"mae_position_xyz": [1.7216e-03, 3.4434e-03, 1.5840e-05],
                 "mae_orientation_xyz": [8.5025e-18, 7.0063e-18, 7.1449e-18]},
    "physics": {"mae_position_xyz": [1.7089e-03, 3.4200e-03, 5.667e-05],
                "mae_orientation_xyz": [3.322e-04, 1.0891e-04, 1.66e-07]},
}

#: Keys every ``validation.json`` holds (besides the full metrics of both layers).
VALIDATION_KEYS = ("label", "mae_position_analytic", "mae_position_physics", "mae_orientation_analytic",
                   "mae_orientation_physics", "max_abs_delta_omega", "max_abs_delta_omega_steady", "physics_mass",
                   "physics_inertia", "wall_time_analytic_s", "wall_time_physics_s", "diverged")

#: Seconds after each reference jump excluded from ``max_abs_delta_omega_steady``.
STEADY_AFTER_JUMP_S = 1.0


def default_parts(platform) -> Parts:
    """Parts for a platform without its own description.

    The Table II preset (:func:`~jaxrotor.physics.parts.paper_hexarotor_parts`) for the paper's
    hexarotor; otherwise a generic build whose masses add up to ``platform.mass`` ``m``: 40 % in
    the ``n`` rotor assemblies (per rotor: arm 30 %, motor 65 %, propeller 5 % of ``0.4 m / n``),
    1 % in a 4-leg gear, the rest in the hub; sizes follow the geometry (hub radius 0.3 of the
    shortest hub distance from ``z_B``, propeller tip radius 0.43 of the closest hub spacing).
    Light propellers: their spin-up reaction torque can destabilise the yaw loop of a canted
    design (``docs/physics.md``).
    """
    if platform.name.startswith("paper_hexarotor"):
        return paper_hexarotor_parts()
    import jax.numpy as jnp

    from ..design.platform import rotor_positions

    pos = np.asarray(rotor_positions(platform), dtype=float)
    n = len(pos)
    radial = float(np.linalg.norm(pos[:, :2], axis=1).min())
    d = np.linalg.norm(pos[:, None] - pos[None], axis=-1) + np.eye(n) * 1e9
    spacing = float(d.min()) if n > 1 else 2 * radial
    m = float(jnp.asarray(platform.mass))
    gear_mass, legs = 0.01 * m / 4, 4
    per_rotor = 0.4 * m / n
    return Parts(
        hub=Hub(mass=m - n * per_rotor - legs * gear_mass, radius=0.3 * radial, height=0.03),
        arm=Arm(mass=0.3 * per_rotor, radius=0.01 * max(radial, 0.1) / 0.385),
        motor=Motor(mass=0.65 * per_rotor, radius=0.06 * radial, height=0.03),
        propeller=Propeller(mass=0.05 * per_rotor, radius=0.43 * spacing, chord=0.06 * spacing, thickness=0.004),
        gear=LandingGear(mass=gear_mass, legs=legs, radius=0.25 * radial, length=0.1),
    )


def physics_settings(platform, control_period: float = 0.001, timestep: float = 0.001) -> PhysicsSettings:
    """The physics layer's settings for ``platform``: :func:`default_parts`, 1 kHz control and physics."""
    from .mjcf import ModelOptions

    return PhysicsSettings(parts=default_parts(platform), options=ModelOptions(timestep=timestep),
                           control_period=control_period)


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


def plot_delta_omega(t, dw, path, title: str = "Fig. 8: Δω = ω^p − ω^a", band: float = 2.0, jump_times=()):
    """Fig. 8: ``Delta omega_i(t)`` [rad/s] of every rotor, the whole range and zoomed to ``+-band``.

    Args:
        t: ``(T,)`` times [s]. dw: ``(T, n)`` ``omega_i^p - omega_i^a`` [rad/s].
        path: PNG file. band: half-height of the zoomed panel (the paper's Fig. 8: 2 rad/s).
        jump_times: reference jumps, drawn as dotted lines.
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
            ax.set_title(f"zoomed to ±{band:g} rad/s (the paper's Fig. 8 band)", fontsize=9)
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


def table_iv(analytic_metrics: dict, physics_metrics: dict, paper: dict | None = PAPER_TABLE_IV) -> str:
    """Table IV as the paper prints it (per-axis MAE of e_p [m] and e_R [rad]) with jaxrotor's columns beside it.

    Columns: paper a, paper p, paper p - a (when ``paper``), then jaxrotor a, p, p - a.
    A diverged flight's column reads ``DIVERGED``.
    """
    heads = (["paper a", "paper p", "paper p-a"] if paper else []) + ["jaxrotor a", "jaxrotor p", "jaxrotor p-a"]
    header = f"{'Table IV':<20}" + "".join(f"{h:>13}" for h in heads)
    lines = [header, "-" * len(header)]
    div_a, div_p = bool(analytic_metrics["diverged"]), bool(physics_metrics["diverged"])
    for key, names in (("mae_position_xyz", [f"MAE(e_p,{c}) [m]" for c in "xyz"]),
                       ("mae_orientation_xyz", [f"MAE(e_R,{i}) [rad]" for i in (1, 2, 3)])):
        for i, title in enumerate(names):
            vals = []
            if paper:
                pa, pp = paper["analytic"][key][i], paper["physics"][key][i]
                vals += [pa, pp, pp - pa]
            a = analytic_metrics[key][i]
            p = physics_metrics[key][i]
            vals += ["DIVERGED" if div_a else a, "DIVERGED" if div_p else p,
                     "DIVERGED" if (div_a or div_p) else p - a]
            lines.append(_row(title, vals))
    return "\n".join(lines)


def output_dir(config: FlightConfig, out_dir: str | Path | None = None) -> Path:
    """Where :func:`validate` writes: ``out_dir``, or ``./jaxrotor-out/<name>-validation/``."""
    return Path(out_dir) if out_dir is not None else Path("jaxrotor-out") / f"{config.name}-validation"


def validate(config: FlightConfig, out_dir: str | Path | None = None, settings: PhysicsSettings | None = None,
             echo=print, figures: bool = True, save_analytic: bool = False) -> dict:
    """Fly ``config`` on both layers, print Table IV beside the paper's, write ``validation.json`` and figures.

    Writes into ``out_dir`` (default ``./jaxrotor-out/<name>-validation/``):
    ``validation.json`` (:data:`VALIDATION_KEYS` plus ``metrics_analytic``, ``metrics_physics``,
    ``paper_table_iv``, ``settings``, ``max_position_difference`` ``max_t |p_p - p_a|`` [m] and
    ``tilt``, :func:`tilt_comparison`: empty for a fixed-tilt platform), ``fig6_trajectory_3d.png`` and ``fig7_errors.png`` with
    both layers overlaid, ``fig8_rotor_speeds.png`` (rotor speeds of both layers),
    ``fig8_delta_omega.png`` (:func:`plot_delta_omega`), ``trajectory_physics.npz`` (with the hinge
    angles ``alpha``, ``beta``).

    Args:
        config: any flight configuration (its ``compare`` flight is ignored).
        settings: physics-layer settings (default :func:`physics_settings` of the platform).
        save_analytic: also write the analytic flight as ``trajectory.npz``
            (:func:`jaxrotor.usecase.save_trajectory`, the file ``jaxrotor simulate`` writes).

    Returns:
        The ``validation.json`` content.
    """
    from .. import usecase

    settings = settings if settings is not None else physics_settings(config.platform)
    out = output_dir(config, out_dir)
    out.mkdir(parents=True, exist_ok=True)
    config = dataclasses.replace(config, compare=None)
    analytic = usecase.fly(config)
    pm = build_model(config.platform, settings.parts, settings.options)
    t0 = time.perf_counter()
    phys: PhysicsResult = fly_physics(config.platform, config.controller, config.flight, settings, model=pm)
    m_phys = flight_metrics(phys.trajectory, pm.physics_platform()).to_dict()
    m_ana = analytic.metrics
    dw, dw_max, dw_steady = delta_omega(analytic.trajectory, phys.trajectory, config.flight.reference.jump_times)
    result = {
        "name": config.name,
        "label": analytic.metrics["label"],
        "mae_position_analytic": m_ana["mae_position_xyz"],
        "mae_position_physics": m_phys["mae_position_xyz"],
        "mae_orientation_analytic": m_ana["mae_orientation_xyz"],
        "mae_orientation_physics": m_phys["mae_orientation_xyz"],
        "max_abs_delta_omega": dw_max,
        "max_abs_delta_omega_steady": dw_steady,
        "physics_mass": pm.mass,
        "physics_inertia": pm.inertia,
        "wall_time_analytic_s": analytic.wall_time_s,
        "wall_time_physics_s": phys.wall_time_s,
        "physics_build_and_compile_s": time.perf_counter() - t0 - phys.wall_time_s,
        "max_contact_force_N": float(np.max(np.linalg.norm(np.asarray(phys.contact_force), axis=1))),
        "max_position_difference": float(np.max(np.linalg.norm(np.asarray(phys.trajectory.p)
                                                               - np.asarray(analytic.trajectory.p), axis=1))),
        "tilt": tilt_comparison(config.platform, analytic.trajectory, phys.trajectory),
        "diverged": bool(m_ana["diverged"]) or bool(m_phys["diverged"]),
        "diverged_analytic": bool(m_ana["diverged"]),
        "diverged_physics": bool(m_phys["diverged"]),
        "settings": {"timestep_s": settings.options.timestep, "control_period_s": settings.control_period,
                     "integrator": settings.options.integrator, "spin": settings.options.spin,
                     "parts": dataclasses.asdict(settings.parts)},
        "paper_table_iv": PAPER_TABLE_IV,
        "metrics_analytic": m_ana,
        "metrics_physics": m_phys,
    }
    result = to_jsonable(result)
    (out / "validation.json").write_text(json.dumps(result, indent=2, allow_nan=False, ensure_ascii=False))
    np.savez_compressed(out / "trajectory_physics.npz", t=np.asarray(phys.trajectory.t),
                        p=np.asarray(phys.trajectory.p), R=np.asarray(phys.trajectory.R),
                        rotor_speed=np.asarray(phys.trajectory.rotor_speed), u=np.asarray(phys.trajectory.u),
                        contact_force=np.asarray(phys.contact_force), delta_omega=dw,
                        alpha=np.asarray(phys.trajectory.alpha), beta=np.asarray(phys.trajectory.beta))
    if save_analytic:
        usecase.save_trajectory(out / "trajectory.npz", analytic.trajectory)
    if figures:
        from ..io import plotting

        runs = {"analytic (a)": analytic.trajectory, "physics (p)": phys.trajectory}
        label = result["label"]
        plotting.plot_trajectory_3d(runs, out / "fig6_trajectory_3d.png", title=f"{label}: both layers")
        plotting.plot_errors(runs, out / "fig7_errors.png", title=f"{label}: errors, both layers")
        plotting.plot_rotor_speeds(runs, out / "fig8_rotor_speeds.png", title=f"{label}: rotor speeds, both layers")
        plot_delta_omega(np.asarray(analytic.trajectory.t), dw, out / "fig8_delta_omega.png",
                         title=f"{label}: Fig. 8, Δω = ω^p − ω^a", jump_times=config.flight.reference.jump_times)
    paper = PAPER_TABLE_IV if config.name.startswith("paper") else None
    echo(table_iv(m_ana, m_phys, paper))
    echo(f"max |Δω| = {dw_max:.3f} rad/s (whole flight), {dw_steady:.3f} rad/s (outside {STEADY_AFTER_JUMP_S:g} s "
         "after each reference jump)")
    for key, row in result["tilt"].items():
        echo(f"tilt {key}: analytic [{row['min_analytic']:.4f}, {row['max_analytic']:.4f}] rad, physics hinges "
             f"[{row['min_physics']:.4f}, {row['max_physics']:.4f}] rad, max |Δ{key}| = {row['max_abs_difference']:.3e} "
             f"rad, max rate {row['rate_max_analytic']:.3f} / {row['rate_max_physics']:.3f} rad/s")
    echo(f"max |p^p - p^a| = {result['max_position_difference']:.3e} m")
    echo(f"physics model: m = {pm.mass:.4f} kg, J = diag({', '.join(f'{v:.5f}' for v in np.diag(pm.inertia))}) kg m^2")
    echo(f"wall time: analytic {analytic.wall_time_s:.2f} s, physics {phys.wall_time_s:.2f} s")
    if result["diverged"]:
        echo("WARNING: a flight DIVERGED: " + ", ".join(k for k in ("analytic", "physics")
                                                        if result[f"diverged_{k}"]))
    echo(f"outputs written to {out}")
    return result
