"""The paper's use case end to end: fly a :class:`~jaxrotor.io.config.FlightConfig`, report, draw.

:func:`paper_reproduction_spec` and :func:`paper_realistic_spec` build the two
configurations of the RotorSuite use case in code (they equal
``configs/paper_reproduction.toml`` and ``configs/paper_realistic.toml``, which a
test checks). :func:`run` flies a configuration (and its comparison flight) with
:func:`jaxrotor.fly`, prints the metrics table (beside the paper's Table IV for the
paper's use case, :func:`jaxrotor.workflows.paper.is_paper_use_case`; otherwise under the
flight's name), and writes the figures, ``trajectory.npz`` and ``metrics.json`` (the keys of
:meth:`jaxrotor.metrics.FlightMetrics.to_dict` plus :data:`RUN_KEYS`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._util import to_jsonable
from ..allocators import Clip, PseudoInverse
from ..control import TABLE_III, FullyActuatedSE3
from ..design.presets import PAPER_ROTOR_INERTIA, paper_hexarotor
from ..dynamics import Actuators, FirstOrderMotor
from ..flight import Flight
from ..loop import fly as fly_flight
from ..integrate import Integrator
from ..io import plotting
from ..io.config import FlightConfig
from ..io.npz import save_trajectory
from ..metrics import FlightMetrics, flight_metrics
from ..reference import paper_maneuver
from ..verdict import Feasibility, Verdict, fault_outcome, flight_verdict, hover_feasibility, verdict_line
from .paper import is_paper_use_case, output_title
from ..step_response import step_metrics

__all__ = [
    "PAPER_TABLE_IV",
    "REALISTIC_YAW_GAINS",
    "RUN_KEYS",
    "FlightResult",
    "compiled_metrics",
    "fly",
    "metrics_table",
    "paper_realistic_spec",
    "paper_reproduction_spec",
    "run",
]

#: Table IV, analytic column (mean absolute errors per axis): e_p [m], e_R [rad]
#: (keys as in :class:`~jaxrotor.metrics.FlightMetrics`).
PAPER_TABLE_IV = {
    "mae_position_xyz": [1.7216e-03, 3.4434e-03, 1.5840e-05],
    "mae_orientation_xyz": [8.5025e-18, 7.0063e-18, 7.1449e-18],
}

#: Keys of one flight's ``metrics.json`` entry besides the :class:`~jaxrotor.metrics.FlightMetrics` fields:
#: run name, Table I label (and its ASCII form), wall-clock time of the compiled run and of compilation [s],
#: and the flight's verdict (``"ok"`` or the list of reasons, :meth:`jaxrotor.verdict.Verdict.to_json`).
RUN_KEYS = ("name", "label", "label_ascii", "wall_time_s", "compile_time_s", "verdict")


@dataclasses.dataclass
class FlightResult:
    """One flown configuration: the trajectory, its metrics (plain floats/lists), timings [s], its
    :class:`~jaxrotor.verdict.Verdict` and the :class:`~jaxrotor.verdict.Feasibility` it was judged with."""
    config: FlightConfig
    trajectory: object
    metrics: dict
    compile_time_s: float
    wall_time_s: float
    verdict: Verdict | None = None
    feasibility: Feasibility | None = None


def _config(name, platform, controller, allocator, actuators, compare=None) -> FlightConfig:

    flight = Flight(reference=paper_maneuver(), allocator=allocator, actuators=actuators,
                    integrator=Integrator(rtol=1e-9, atol=1e-11), save_dt=0.01)
    return FlightConfig(name=name, platform=platform, controller=controller, flight=flight, compare=compare)


#: Yaw gains of the realistic flight ``(K_R,z, K_Ri,z, K_w,z)``: Table III's ``(90, 10, 5)`` leave the yaw loop
#: unstable with 30 ms motors and the propellers' spin inertia (``docs/physics.md``); these are stable on both layers.
REALISTIC_YAW_GAINS = (30.0, 5.0, 3.0)


def paper_realistic_spec() -> FlightConfig:
    """Table II hexarotor with the propellers' spin inertia :data:`~jaxrotor.design.presets.PAPER_ROTOR_INERTIA`,
    Table III gains but the yaw gains :data:`REALISTIC_YAW_GAINS`, inputs clipped to ``[0, u_max]``, 30 ms
    first-order motor lag."""
    platform = dataclasses.replace(paper_hexarotor(), rotor_inertia=jnp.full((6,), PAPER_ROTOR_INERTIA),
                                   overrides=("rotor_inertia",))
    K_R, K_Ri, K_w = ((*TABLE_III[k][:2], g) for k, g in zip(("K_R", "K_Ri", "K_w"), REALISTIC_YAW_GAINS))
    controller = FullyActuatedSE3(K_R=K_R, K_Ri=K_Ri, K_w=K_w)
    return _config("paper_realistic", platform, controller, Clip(), Actuators(motor=FirstOrderMotor(0.03)))


def paper_reproduction_spec(with_comparison: bool = True) -> FlightConfig:
    """The analytic setup as the paper runs it (exact pseudo-inverse ``u`` applied directly),
    compared against :func:`paper_realistic_spec` when ``with_comparison``."""
    return _config("paper_reproduction", paper_hexarotor(), FullyActuatedSE3(), PseudoInverse(), Actuators(),
                   compare=paper_realistic_spec() if with_comparison else None)


@eqx.filter_jit
def compiled_metrics(traj, platform, flight=None) -> FlightMetrics:
    """:func:`jaxrotor.metrics.flight_metrics` compiled as one program (one entry of the persistent compilation cache
    a command keeps, instead of one per array operation).

    Args:
        traj: the :class:`~jaxrotor.trajectory.Trajectory` of one flight.
        platform: the :class:`~jaxrotor.design.platform.Platform` it flew.
        flight: the :class:`~jaxrotor.flight.Flight` (for the servo limits of a tilting platform), or ``None``.
    """
    return flight_metrics(traj, platform, flight)


def fly(config: FlightConfig, stability=None) -> FlightResult:
    """Compile and fly one configuration with :func:`jaxrotor.fly`; time the compiled run apart from compilation.

    The metrics are :func:`jaxrotor.metrics.flight_metrics` in their JSON form
    (:meth:`~jaxrotor.metrics.FlightMetrics.to_dict`) plus :data:`RUN_KEYS`, and for a step reference
    the step response (:func:`jaxrotor.step_response.step_metrics`: ``step_rise_time``,
    ``step_overshoot``, ``step_settling_time`` per axis, ...).

    The flight is judged (:func:`jaxrotor.verdict.flight_verdict` with ``config.thresholds``, the hover
    feasibility of :func:`jaxrotor.verdict.hover_feasibility` and ``stability``, the
    :class:`~jaxrotor.analysis.StabilityReport` computed before it flew, if any): ``metrics["verdict"]``.
    A flight with faults adds ``metrics["fault_outcome"]`` (:func:`jaxrotor.verdict.fault_outcome`).
    """
    t0 = time.perf_counter()
    traj = fly_flight(config.platform, config.controller, config.flight)
    jax.block_until_ready(traj.p)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    traj = fly_flight(config.platform, config.controller, config.flight)
    jax.block_until_ready(traj.p)
    wall = time.perf_counter() - t0
    metrics = {
        "name": config.name,
        "label": config.platform.label(),
        "label_ascii": config.platform.label(ascii=True),
        **compiled_metrics(traj, config.platform, config.flight).to_dict(),
        **step_metrics(traj, config.flight.reference),
        "wall_time_s": wall,
        "compile_time_s": max(first - wall, 0.0),
    }
    try:
        feasibility = hover_feasibility(config.platform, config.flight, config.controller, traj.R_ref)
    except Exception:  # a diagnostic only (the linear programs): the flight's own measures still judge it
        feasibility = None
    verdict = flight_verdict(traj, config.platform, config.flight, thresholds=config.thresholds,
                             controller=config.controller, stability=stability, feasibility=feasibility)
    metrics["verdict"] = verdict.to_json()
    if config.flight.faults is not None:  # what the flight held after its faults (jaxrotor.verdict.fault_outcome)
        metrics["fault_outcome"] = fault_outcome(traj, config.flight)
    return FlightResult(config=config, trajectory=traj, metrics=metrics, compile_time_s=metrics["compile_time_s"],
                        wall_time_s=wall, verdict=verdict, feasibility=feasibility)


_W = 22  # column width of the metrics table


def _cell(value, fmt: str, diverged: bool) -> str:
    """One right-aligned cell: ``DIVERGED`` for a diverged flight, ``n/a`` for a non-finite number."""
    if diverged:
        return f"{'DIVERGED':>{_W}}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{'n/a':>{_W}}"
    return f"{format(value, fmt):>{_W}}"


def _step_rows(results: list[FlightResult], blank: str) -> list[str]:
    """Rows of the step response (rise time [s], overshoot [%], settling time [s] per stepped axis, the
    settling time of the others) when a flight has one (:func:`jaxrotor.step_response.step_metrics`)."""
    have = [r for r in results if "step_rise_time" in r.metrics]
    if not have:
        return []
    rows = []
    for i, c in enumerate("xyz"):
        stepped = any(r.metrics["step_rise_time"][i] is not None for r in have)
        if stepped:
            rows += [(f"step rise {c} [s]", "step_rise_time", i, 1.0), (f"step overshoot {c} [%]", "step_overshoot", i,
                                                                         100.0)]
        rows.append((f"step settling {c} [s]", "step_settling_time", i, 1.0))
    if any(r.metrics["step_yaw_rise_time"] is not None for r in have):
        rows += [("step rise yaw [s]", "step_yaw_rise_time", None, 1.0),
                 ("step overshoot yaw [%]", "step_yaw_overshoot", None, 100.0)]
    rows.append(("step settling yaw [s]", "step_yaw_settling_time", None, 1.0))
    out = []
    for title, key, i, scale in rows:
        cells = []
        for r in results:
            v = r.metrics.get(key)
            v = v[i] if (v is not None and i is not None) else v
            v = math.nan if v is None else float(v) * scale
            cells.append(_cell(v, ".4f", r.metrics["diverged"]) if key in r.metrics else f"{'':>{_W}}")
        out.append(f"{title:<{_W}}" + blank + "".join(cells))
    return out


#: Rows of the electrical metrics in :func:`metrics_table`: (title, key, format, scale).
ELECTRICAL_ROWS = (("battery power mean [W]", "electrical_power_mean", ".2f", 1.0),
                   ("battery power peak [W]", "electrical_power_peak", ".2f", 1.0),
                   ("energy [Wh]", "energy_wh", ".4f", 1.0), ("state of charge at end", "soc_end", ".4f", 1.0),
                   ("motor current mean [A]", "motor_current_mean", ".3f", 1.0),
                   ("motor current peak [A]", "motor_current_peak", ".3f", 1.0),
                   ("time at limit [s]", "time_at_limit", ".3f", 1.0),
                   ("endurance hover [min]", "endurance_hover_s", ".2f", 1 / 60),
                   ("endurance profile [min]", "endurance_profile_s", ".2f", 1 / 60),
                   ("shaft power mean [W]", "mechanical_power_mean", ".2f", 1.0),
                   ("figure of merit", "figure_of_merit", ".3f", 1.0))


def _electrical_rows(results: list[FlightResult], blank: str) -> list[str]:
    """The :data:`ELECTRICAL_ROWS` when any flight has the electrical metrics (blank where one has not)."""
    if not any("energy_wh" in r.metrics for r in results):
        return []
    out = []
    for title, key, fmt, scale in ELECTRICAL_ROWS:
        cells = [_cell(float(r.metrics[key]) * scale, fmt, r.metrics["diverged"]) if key in r.metrics
                 else f"{'':>{_W}}" for r in results]
        out.append(f"{title:<{_W}}" + blank + "".join(cells))
    return out


def metrics_table(results: list[FlightResult], paper: dict | None = PAPER_TABLE_IV, title: str | None = None) -> str:
    """A plain-text table of the per-axis errors of each flight, with the paper's Table IV column (``paper``, for
    the paper's use case) or under the line ``title`` (any other flight: its name,
    :func:`jaxrotor.workflows.paper.output_title`).

    Rows: mean absolute, largest and RMS position error per axis [m], mean absolute
    orientation error per axis [rad] (``*_xyz`` of :class:`~jaxrotor.metrics.FlightMetrics`),
    the step response of a step reference (rise time, overshoot, settling time; ``n/a`` where
    the response never reached it or the axis has no step), saturated fraction, solver steps and
    timings. A diverged flight's column reads ``DIVERGED`` in every error row (its numbers are
    meaningless, often inf or NaN).
    """
    names = [r.config.name for r in results]
    blank = f"{'':>{_W}}" if paper else ""
    header = f"{'metric':<{_W}}" + (f"{'paper (Table IV, a)':>{_W}}" if paper else "") + "".join(
        f"{n:>{_W}}" for n in names)
    lines = ([] if paper or not title else [f"{title}: tracking errors"]) + [header, "-" * len(header)]
    rows = [(f"mae e_p,{c} [m]", "mae_position_xyz", i) for i, c in enumerate("xyz")]
    rows += [(f"mae e_R,{i + 1} [rad]", "mae_orientation_xyz", i) for i in range(3)]
    rows += [(f"max |e_p,{c}| [m]", "max_position_error_xyz", i) for i, c in enumerate("xyz")]
    rows += [(f"rmse e_p,{c} [m]", "rmse_position_xyz", i) for i, c in enumerate("xyz")]
    for title, key, i in rows:
        ref = f"{paper[key][i]:>{_W}.4e}" if paper and key in paper else blank
        lines.append(f"{title:<{_W}}" + ref + "".join(
            _cell(r.metrics[key][i], ".4e", r.metrics["diverged"]) for r in results))
    lines += _step_rows(results, blank)
    lines.append(f"{'saturated fraction':<{_W}}" + blank + "".join(
        _cell(r.metrics["saturation_fraction"], ".4f", r.metrics["diverged"]) for r in results))
    lines += _electrical_rows(results, blank)
    lines.append(f"{'diverged':<{_W}}" + blank + "".join(
        f"{'DIVERGED' if r.metrics['diverged'] else 'no':>{_W}}" for r in results))
    lines.append(f"{'verdict':<{_W}}" + blank + "".join(
        f"{'ok' if r.metrics.get('verdict', 'ok') == 'ok' else 'FAILED':>{_W}}" for r in results))
    for title, key, fmt in (("solver steps", "num_steps", "d"), ("wall time [s]", "wall_time_s", ".4f"),
                            ("compile time [s]", "compile_time_s", ".2f")):
        lines.append(f"{title:<{_W}}" + blank + "".join(_cell(r.metrics[key], fmt, False) for r in results))
    return "\n".join(lines)


def fly_physics_layer(config: FlightConfig, stability=None, feasibility: Feasibility | None = None) -> dict:
    """Fly ``config`` on the physics layer (MuJoCo C engine, :func:`jaxrotor.physics.fly_physics` with
    :func:`jaxrotor.workflows.compare.physics_settings`) and return its metrics in the JSON form of :func:`fly`
    (plus ``mass`` [kg] and ``inertia`` [kg m^2] of the engine's model), with the result under ``"_result"``
    and its :class:`~jaxrotor.verdict.Verdict` under ``"_verdict"`` (judged with ``stability`` and
    ``feasibility``, those of the analytic flight of the same vehicle; ``None``: not judged on them)."""
    from ..physics.engine import fly_physics
    from ..physics.mjcf import build_model
    from .compare import physics_settings

    settings = physics_settings(config.platform)
    t0 = time.perf_counter()
    pm = build_model(config.platform, settings.parts, settings.options)
    res = fly_physics(config.platform, config.controller, config.flight, settings, model=pm)
    verdict = flight_verdict(res.trajectory, pm.physics_platform(), config.flight, thresholds=config.thresholds,
                             controller=config.controller, stability=stability, feasibility=feasibility)
    return {
        "name": f"{config.name}_physics",
        "label": config.platform.label(),
        "label_ascii": config.platform.label(ascii=True),
        **compiled_metrics(res.trajectory, pm.physics_platform()).to_dict(),
        "wall_time_s": res.wall_time_s,
        "compile_time_s": max(time.perf_counter() - t0 - res.wall_time_s, 0.0),
        "mass": pm.mass,
        "inertia": pm.inertia,
        "verdict": verdict.to_json(),
        "_result": res,
        "_verdict": verdict,
    }


def run(config: FlightConfig, out_dir: str | Path | None = None, progress: bool = True, echo=print,
        physics: bool = False, stability: dict | None = None) -> dict:
    """Fly ``config`` (and ``config.compare``), print the metrics table, write outputs into ``out_dir``.

    With ``physics``, ``config`` is also flown on the physics layer (:func:`fly_physics_layer`):
    jaxrotor's columns a and p are printed (:func:`jaxrotor.workflows.compare.table_iv`; for the paper's use
    case as Table IV beside the paper's columns), its metrics (plus ``max_abs_delta_omega`` and
    ``max_abs_delta_omega_steady`` [rad/s]) are written to ``metrics_physics.json`` and returned
    under ``"physics"``, and ``fig8_delta_omega.png`` shows ``Delta omega_i = omega_i^p - omega_i^a``.

    Writes ``fig6_trajectory_3d.png``, ``fig7_errors.png``, ``fig8_rotor_speeds.png``,
    ``trajectory.npz`` (and ``trajectory_<compare>.npz``) and ``metrics.json``, which
    holds the metrics of ``config`` at top level (every :class:`~jaxrotor.metrics.FlightMetrics`
    field, e.g. ``mae_position_xyz`` [m], ``diverged``, ``duration`` [s], ``num_steps``, plus
    :data:`RUN_KEYS` and ``source``), those of the comparison flight under ``"compare"``,
    and for the paper's use case (:func:`jaxrotor.workflows.paper.is_paper_use_case`: the Table II hexarotor
    on the paper's maneuver) the Table IV values under ``"paper_table_iv_analytic"``.
    Only for that case do the table and the figures cite the paper (Table IV, Fig. 8); any other flight's
    are titled with its configuration and vehicle name (:func:`jaxrotor.workflows.paper.output_title`).
    Non-finite numbers (a diverged flight) are written as ``null``.

    Every flight (the comparison and the physics-layer flight too) is judged
    (:mod:`jaxrotor.verdict`): its ``verdict`` is ``"ok"`` or the list of reasons, and the printout ends
    with one verdict line per flight. ``stability`` maps a flight's name to the
    :class:`~jaxrotor.analysis.StabilityReport` of its closed loop computed before flying (the physics-layer
    flight takes that of ``config``); a flight without one is not judged ``unstable``.

    Returns:
        The ``metrics.json`` content (with ``physics``: plus ``"physics"``, the ``metrics_physics.json`` content).
    """
    from tqdm.auto import tqdm

    stability = stability or {}
    out = Path(out_dir) if out_dir is not None else Path("jaxrotor-out") / config.name
    out.mkdir(parents=True, exist_ok=True)
    configs = [config] + ([config.compare] if config.compare is not None else [])
    steps = [f"fly {c.name}" for c in configs] + (["fly physics layer"] if physics else []) + ["figures", "files"]
    bar = tqdm(total=len(steps), disable=not progress, desc=config.name, unit="step")
    results = []
    for c in configs:
        bar.set_postfix_str(f"compiling + flying {c.name}")
        results.append(fly(c, stability=stability.get(c.name)))
        bar.update()
    runs = {r.config.name: r.trajectory for r in results}
    phys = None
    if physics:
        bar.set_postfix_str("building + flying the physics layer")
        phys = fly_physics_layer(config, stability=stability.get(config.name), feasibility=results[0].feasibility)
        bar.update()
    bar.set_postfix_str("drawing figures")
    paper = PAPER_TABLE_IV if is_paper_use_case(config) else None
    label = output_title(config, paper=paper is not None)
    plotting.plot_trajectory_3d(runs, out / "fig6_trajectory_3d.png", title=f"{label}: 3D trajectory")
    plotting.plot_errors(runs, out / "fig7_errors.png", title=f"{label}: position and orientation errors")
    plotting.plot_rotor_speeds(runs, out / "fig8_rotor_speeds.png", title=f"{label}: rotor speeds")
    if phys is not None:
        from .compare import delta_omega, plot_delta_omega

        dw, _, _ = delta_omega(results[0].trajectory, phys["_result"].trajectory)
        plot_delta_omega(np.asarray(results[0].trajectory.t), dw, out / "fig8_delta_omega.png",
                         title=f"{label}: Fig. 8, Δω = ω^p − ω^a" if paper else f"{label}: Δω = ω^p − ω^a",
                         jump_times=config.flight.reference.jump_times,
                         band_note="the paper's Fig. 8 band" if paper else None)
    bar.update()
    bar.set_postfix_str("writing files")
    save_trajectory(out / "trajectory.npz", results[0].trajectory)
    for r in results[1:]:
        save_trajectory(out / f"trajectory_{r.config.name}.npz", r.trajectory)
    metrics = dict(results[0].metrics)
    metrics["source"] = config.source
    if paper:
        metrics["paper_table_iv_analytic"] = PAPER_TABLE_IV
    if len(results) > 1:
        metrics["compare"] = results[1].metrics
    metrics = to_jsonable(metrics)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, allow_nan=False, ensure_ascii=False))
    if phys is not None:
        from .compare import PAPER_TABLE_IV as PAPER_BOTH
        from .compare import delta_omega

        _, dw_max, dw_steady = delta_omega(results[0].trajectory, phys["_result"].trajectory,
                                           config.flight.reference.jump_times)
        physics_metrics = {k: v for k, v in phys.items() if not k.startswith("_")}
        physics_metrics.update(max_abs_delta_omega=dw_max, max_abs_delta_omega_steady=dw_steady)
        if paper:
            physics_metrics["paper_table_iv"] = PAPER_BOTH
        physics_metrics = to_jsonable(physics_metrics)
        (out / "metrics_physics.json").write_text(json.dumps(physics_metrics, indent=2, allow_nan=False,
                                                             ensure_ascii=False))
        metrics = {**metrics, "physics": physics_metrics}
    bar.update()
    bar.close()
    echo(metrics_table(results, paper, title=label))
    if phys is not None:
        from .compare import PAPER_TABLE_IV as PAPER_BOTH
        from .compare import table_iv

        echo("")
        echo(table_iv(results[0].metrics, metrics["physics"], PAPER_BOTH if paper else None, title=label))
        p = metrics["physics"]
        diag = ", ".join(f"{p['inertia'][i][i]:.5f}" for i in range(3))
        echo(f"physics layer (MuJoCo): m = {p['mass']:.4f} kg, J = diag({diag}) kg m^2, "
             f"max |Δω| outside 1 s after each reference jump = {p['max_abs_delta_omega_steady']:.3f} rad/s, "
             f"wall time {p['wall_time_s']:.2f} s")
        if p["diverged"]:
            echo(f"WARNING: the physics-layer flight of {config.name!r} DIVERGED.")
    for r in results:
        if r.metrics["diverged"]:
            echo(f"WARNING: flight {r.config.name!r} DIVERGED (non-finite or runaway state, or solver failure).")
    echo(f"outputs written to {out}")
    verdicts = {r.config.name: r.verdict for r in results}
    if phys is not None:
        verdicts[phys["name"]] = phys["_verdict"]
    echo(verdict_line(verdicts))
    return metrics
