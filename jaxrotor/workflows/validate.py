"""Both layers side by side for one configuration: ``validation.json``, Table IV, figures.

:func:`validate` flies one :class:`~jaxrotor.io.config.FlightConfig` on the
analytic layer (:func:`jaxrotor.fly`) and on the physics layer
(:func:`jaxrotor.physics.engine.fly_physics`), computes every metric of both with
the one :func:`jaxrotor.metrics.flight_metrics`, and compares the rotor speeds
``Delta omega_i = omega_i^p - omega_i^a`` (Fig. 8, :mod:`jaxrotor.workflows.compare`).
:func:`~jaxrotor.workflows.compare.table_iv` prints the comparison, beside the paper's columns
for the paper's use case (:func:`jaxrotor.workflows.paper.is_paper_use_case`), and
:func:`~jaxrotor.workflows.compare.layer_mismatch` says whether the two layers fly the same mass
and inertia.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from .._util import to_jsonable
from ..io.config import FlightConfig
from ..io.npz import save_trajectory
from ..physics.engine import PhysicsResult, PhysicsSettings, fly_physics
from ..physics.mjcf import build_model
from ..physics.parts import parts_dict
from ..verdict import flight_verdict, verdict_line
from . import usecase
from .compare import (
    PAPER_TABLE_IV,
    STEADY_AFTER_JUMP_S,
    delta_omega,
    layer_mismatch,
    physics_settings,
    plot_delta_omega,
    table_iv,
    tilt_comparison,
)
from .paper import is_paper_use_case, is_paper_vehicle, output_title

__all__ = ["VALIDATION_KEYS", "output_dir", "validate"]

#: Keys every ``validation.json`` holds (besides the full metrics of both layers).
VALIDATION_KEYS = ("label", "mae_position_analytic", "mae_position_physics", "mae_orientation_analytic",
                   "mae_orientation_physics", "max_abs_delta_omega", "max_abs_delta_omega_steady", "physics_mass",
                   "physics_inertia", "wall_time_analytic_s", "wall_time_physics_s", "diverged",
                   "verdict_analytic", "verdict_physics", "layer_mismatch")


def _electrical_lines(m_ana: dict, m_phys: dict) -> list[str]:
    """The electrical metrics of both layers side by side (battery energy, profile endurance, end state of charge,
    mean motor current) with the physics layer's relative difference; empty for a flight without the battery."""
    if "energy_wh" not in m_ana or "energy_wh" not in m_phys:
        return []
    out = []
    for title, key, unit in (("battery energy", "energy_wh", "Wh"), ("endurance (profile)", "endurance_profile_s", "s"),
                             ("state of charge at end", "soc_end", ""), ("motor current mean", "motor_current_mean", "A")):
        a, p = float(m_ana[key]), float(m_phys[key])
        out.append(f"{title}: analytic {a:.6g} {unit}, physics {p:.6g} {unit} ({(p - a) / abs(a):+.2e} relative)"
                   .replace("  ", " "))
    return out


def output_dir(config: FlightConfig, out_dir: str | Path | None = None) -> Path:
    """Where :func:`validate` writes: ``out_dir``, or ``./jaxrotor-out/<name>-validation/``."""
    return Path(out_dir) if out_dir is not None else Path("jaxrotor-out") / f"{config.name}-validation"


def validate(config: FlightConfig, out_dir: str | Path | None = None, settings: PhysicsSettings | None = None,
             echo=print, figures: bool = True, save_analytic: bool = False,
             physics_control_rate: float | None = None, stability=None) -> dict:
    """Fly ``config`` on both layers, print the comparison (Table IV beside the paper's for the paper's use case),
    write ``validation.json`` and figures.

    Writes into ``out_dir`` (default ``./jaxrotor-out/<name>-validation/``):
    ``validation.json`` (:data:`VALIDATION_KEYS` plus ``metrics_analytic``, ``metrics_physics``,
    ``paper_table_iv`` for the paper's use case only, ``settings``, ``max_position_difference``
    ``max_t |p_p - p_a|`` [m] and
    ``tilt``, :func:`tilt_comparison`: empty for a fixed-tilt platform), ``fig6_trajectory_3d.png`` and ``fig7_errors.png`` with
    both layers overlaid, ``fig8_rotor_speeds.png`` (rotor speeds of both layers),
    ``fig8_delta_omega.png`` (:func:`plot_delta_omega`), ``trajectory_physics.npz`` (with the hinge
    angles ``alpha``, ``beta``).

    Args:
        config: any flight configuration (its ``compare`` flight is ignored).
        settings: physics-layer settings (default :func:`physics_settings` of the platform).
        physics_control_rate: the flight computer's rate on the physics layer [Hz] when the flight sets
            none (default: one tick per engine step, ``1 / settings.options.timestep``).
        save_analytic: also write the analytic flight as ``trajectory.npz``
            (:func:`jaxrotor.io.npz.save_trajectory`, the file ``jaxrotor simulate`` writes).
        stability: the :class:`~jaxrotor.analysis.StabilityReport` of the closed loop computed before flying
            (``None``: neither layer is judged ``unstable``).

    Each layer's flight is judged (:func:`jaxrotor.verdict.flight_verdict`, ``config.thresholds``; the
    hover feasibility and ``stability`` are the vehicle's, shared by both layers): ``verdict_analytic``
    and ``verdict_physics`` (``"ok"`` or the list of reasons, also as ``verdict`` in each layer's
    metrics), printed as the last lines.

    The paper's use case (:func:`jaxrotor.workflows.paper.is_paper_use_case`) prints Table IV with the paper's
    columns and titles Fig. 8 as the paper's; any other flight prints jaxrotor's columns under its configuration
    and vehicle name (:func:`jaxrotor.workflows.paper.output_title`), which every figure title carries.

    ``layer_mismatch`` (:func:`jaxrotor.workflows.compare.layer_mismatch`) compares the physics model's mass
    [kg] and inertia [kg m^2] with the platform's: above 0.5 % (relative) the layers fly two vehicles, and a
    line ``mass/inertia differ between the layers: ...`` is printed; for the paper's vehicle the difference
    is the paper's own (``J^a`` against ``J^p``) and the line says so (``by_design``).

    Returns:
        The ``validation.json`` content.
    """
    settings = settings if settings is not None else physics_settings(config.platform)
    out = output_dir(config, out_dir)
    out.mkdir(parents=True, exist_ok=True)
    config = dataclasses.replace(config, compare=None)
    analytic = usecase.fly(config, stability=stability)
    pm = build_model(config.platform, settings.parts_of(config.platform), settings.options)
    t0 = time.perf_counter()
    phys_flight = config.flight
    if physics_control_rate is not None and phys_flight.control_rate is None:
        phys_flight = dataclasses.replace(phys_flight, control_rate=float(physics_control_rate))
    phys_rate = phys_flight.control_rate if phys_flight.control_rate is not None else 1.0 / settings.options.timestep
    phys: PhysicsResult = fly_physics(config.platform, config.controller, phys_flight, settings, model=pm)
    m_phys = usecase.compiled_metrics(phys.trajectory, pm.physics_platform()).to_dict()
    verdict_phys = flight_verdict(phys.trajectory, pm.physics_platform(), phys_flight, thresholds=config.thresholds,
                                  controller=config.controller, stability=stability,
                                  feasibility=analytic.feasibility)
    m_phys["verdict"] = verdict_phys.to_json()
    m_ana = analytic.metrics
    dw, dw_max, dw_steady = delta_omega(analytic.trajectory, phys.trajectory, config.flight.reference.jump_times)
    paper = PAPER_TABLE_IV if is_paper_use_case(config) else None
    mismatch = layer_mismatch(pm, paper=is_paper_vehicle(config.platform))
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
        "verdict_analytic": m_ana["verdict"],
        "verdict_physics": m_phys["verdict"],
        "layer_mismatch": {k: v for k, v in mismatch.items() if k != "line"},
        "settings": {"timestep_s": settings.options.timestep, "control_period_s": 1.0 / phys_rate,
                     "integrator": settings.options.integrator, "spin": settings.options.spin,
                     "parts": parts_dict(pm.parts)},
        **({"paper_table_iv": PAPER_TABLE_IV} if paper else {}),
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
        save_trajectory(out / "trajectory.npz", analytic.trajectory)
    if figures:
        from ..io import plotting

        runs = {"analytic (a)": analytic.trajectory, "physics (p)": phys.trajectory}
        label = output_title(config, paper=paper is not None)
        plotting.plot_trajectory_3d(runs, out / "fig6_trajectory_3d.png", title=f"{label}: both layers")
        plotting.plot_errors(runs, out / "fig7_errors.png", title=f"{label}: errors, both layers")
        plotting.plot_rotor_speeds(runs, out / "fig8_rotor_speeds.png", title=f"{label}: rotor speeds, both layers")
        plot_delta_omega(np.asarray(analytic.trajectory.t), dw, out / "fig8_delta_omega.png",
                         title=f"{label}: Fig. 8, Δω = ω^p − ω^a" if paper else f"{label}: Δω = ω^p − ω^a",
                         jump_times=config.flight.reference.jump_times,
                         band_note="the paper's Fig. 8 band" if paper else None)
    echo(table_iv(m_ana, m_phys, paper, title=output_title(config, paper=paper is not None)))
    echo(f"max |Δω| = {dw_max:.3f} rad/s (whole flight), {dw_steady:.3f} rad/s (outside {STEADY_AFTER_JUMP_S:g} s "
         "after each reference jump)")
    for key, row in result["tilt"].items():
        echo(f"tilt {key}: analytic [{row['min_analytic']:.4f}, {row['max_analytic']:.4f}] rad, physics hinges "
             f"[{row['min_physics']:.4f}, {row['max_physics']:.4f}] rad, max |Δ{key}| = {row['max_abs_difference']:.3e} "
             f"rad, max rate {row['rate_max_analytic']:.3f} / {row['rate_max_physics']:.3f} rad/s")
    echo(f"max |p^p - p^a| = {result['max_position_difference']:.3e} m")
    for line in _electrical_lines(result["metrics_analytic"], result["metrics_physics"]):
        echo(line)
    echo(f"physics model: m = {pm.mass:.4f} kg, J = diag({', '.join(f'{v:.5f}' for v in np.diag(pm.inertia))}) kg m^2")
    if mismatch["line"]:
        echo(mismatch["line"])
    echo(f"wall time: analytic {analytic.wall_time_s:.2f} s, physics {phys.wall_time_s:.2f} s")
    if result["diverged"]:
        echo("WARNING: a flight DIVERGED: " + ", ".join(k for k in ("analytic", "physics")
                                                        if result[f"diverged_{k}"]))
    echo(f"outputs written to {out}")
    echo(verdict_line({"analytic": analytic.verdict, "physics": verdict_phys}))
    return result
