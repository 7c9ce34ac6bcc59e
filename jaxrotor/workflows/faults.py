"""Every single-rotor loss of a vehicle, flown on both layers beside the static analysis: ``faults.json``.

:func:`rotor_loss_report` hovers a configuration's vehicle at the reference's first point, loses rotor ``j``
at ``time`` (detected ``detection_delay`` later) for ``j = 1 .. n`` in turn, and judges each flight by
:func:`jaxrotor.verdict.fault_outcome` (``"full_pose"``, ``"yaw_released"`` or ``"lost"``, from ``settle``
seconds after the loss). Beside each flight it puts the outcome the static analysis predicts
(:func:`jaxrotor.analysis.rotor_loss`: ``RotorLoss.outcome``). ``jaxrotor faults CONFIG`` runs it
(:mod:`jaxrotor.cli.faults`).
"""

from __future__ import annotations

import dataclasses
import json
import time as _time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .._util import to_jsonable
from ..faults import OUTCOMES, Faults
from ..io.config import FlightConfig
from ..reference import Hover

__all__ = ["FAULT_REPORT_KEYS", "rotor_loss_config", "rotor_loss_report", "output_dir", "plot_rotor_losses",
           "report_table"]

#: Keys of each ``faults.json`` ``rotors`` entry (the outcome words are :data:`jaxrotor.faults.OUTCOMES`;
#: ``physics`` is ``None`` without the physics layer).
FAULT_REPORT_KEYS = ("rotor", "analysis", "analytic", "physics")


def output_dir(config: FlightConfig, out_dir: str | Path | None = None) -> Path:
    """Where :func:`rotor_loss_report` writes: ``out_dir``, or ``./jaxrotor-out/<name>-faults/``."""
    return Path(out_dir) if out_dir is not None else Path("jaxrotor-out") / f"{config.name}-faults"


def rotor_loss_config(config: FlightConfig, rotor: int, *, time: float = 5.0, settle: float = 3.0,
                      detection_delay: float = 0.05, release_yaw: str = "auto") -> FlightConfig:
    """``config`` turned into a hover that loses rotor ``rotor`` (0-based) at ``time`` [s].

    The reference becomes a :class:`~jaxrotor.reference.Hover` at the first point and heading of the
    config's reference, for ``time + settle + 1`` s; the vehicle, controller, allocator, actuators and
    solver stay the config's. The fault is a ``rotor_loss`` detected ``detection_delay`` [s] later, with
    the flight computer's yaw policy ``release_yaw``.
    """
    flight = config.flight
    start = flight.reference(flight.t0)
    hover = Hover(start.p, duration=time + settle + 1.0, yaw=start.yaw)
    faults = Faults("rotor_loss", rotor, time, detection_delay=detection_delay, release_yaw=release_yaw)
    flight = dataclasses.replace(flight, reference=hover, t1=None, faults=faults)
    return dataclasses.replace(config, flight=flight, compare=None, name=f"{config.name}_loss{rotor + 1}")


def _held_errors(traj, t_from: float) -> dict:
    """Largest position error [m], largest tilt of the body ``z`` axis from the reference's [rad] and tilt of the
    mean body ``z`` axis (:func:`jaxrotor.verdict.mean_tilt`, the thrust axis a spinning vehicle holds) [rad],
    from ``t_from``."""
    from ..verdict import mean_tilt

    t = np.asarray(traj.t)
    w = t >= t_from - 1e-9
    if bool(traj.diverged) or not w.any():
        return {"position_error": None, "tilt_error": None, "axis_tilt": None}
    e_p = np.linalg.norm(np.asarray(traj.p_ref - traj.p)[w], axis=1)
    zb, zr = np.asarray(traj.R)[w][:, :, 2], np.asarray(traj.R_ref)[w][:, :, 2]
    tilt = np.arccos(np.clip(np.sum(zb * zr, axis=1), -1.0, 1.0))
    return {"position_error": float(np.max(e_p)), "tilt_error": float(np.max(tilt)),
            "axis_tilt": float(mean_tilt(traj, t_from))}


def rotor_loss_report(config: FlightConfig, out_dir: str | Path | None = None, *, physics: bool = True,
                      time: float = 5.0, settle: float = 3.0, detection_delay: float = 0.05,
                      release_yaw: str = "auto", rotors: list[int] | None = None, echo: Callable = print,
                      progress: bool = True, figures: bool = True) -> dict:
    """Fly every single-rotor loss of ``config``'s vehicle in hover and compare with the static analysis.

    Each flight is :func:`rotor_loss_config` (rotor ``j`` lost at ``time`` [s]), flown on the analytic layer
    (:func:`jaxrotor.fly`) and, with ``physics``, on the physics layer (MuJoCo C engine,
    :func:`jaxrotor.workflows.usecase.fly_physics_layer`), and judged by :func:`jaxrotor.verdict.fault_outcome`
    from ``settle`` [s] after the loss. The analysis is :func:`jaxrotor.analysis.rotor_loss` of the vehicle.

    ``rotors``: the rotors to lose, numbered from 1 (default every rotor).

    Writes ``faults.json`` (``{"rotors": [{"rotor", "analysis", "analytic", "physics", ...}], "agree", ...}``,
    rotors numbered from 1) and, with ``figures``, ``faults.png`` (position error and yaw rate after each loss).

    Returns:
        the report dict (as written); ``agree`` is whether every flown outcome equals the analysis'.

    Raises:
        ValueError: a rotor of ``rotors`` outside ``1 .. n``.
    """
    from ..analysis import rotor_loss
    from ..loop import fly
    from ..verdict import fault_outcome
    from . import usecase

    out = output_dir(config, out_dir)
    out.mkdir(parents=True, exist_ok=True)
    n = config.platform.n_rotors
    chosen = list(range(1, n + 1)) if rotors is None else [int(r) for r in rotors]
    if not chosen or any(not 1 <= r <= n for r in chosen):
        raise ValueError(f"faults: `rotors` = {rotors!r} is invalid: the vehicle has rotors 1 to {n}. "
                         f"Fix: give rotor numbers from 1 to {n}, e.g. --rotors 1,2.")
    analysis = rotor_loss(config.platform)
    rows, curves = [], []
    try:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(chosen) * (2 if physics else 1), disable=not progress, desc=f"rotor losses {config.name}",
                   unit="flight")
    except ImportError:  # pragma: no cover - tqdm is a dependency
        bar = None
    t0 = _time.perf_counter()
    for j in (r - 1 for r in chosen):
        conf = rotor_loss_config(config, j, time=time, settle=settle, detection_delay=detection_delay,
                                 release_yaw=release_yaw)
        traj = fly(conf.platform, conf.controller, conf.flight)
        row = {"rotor": j + 1, "analysis": analysis[j].outcome, "analytic": fault_outcome(traj, conf.flight, settle=settle),
               "physics": None}
        row.update({f"analytic_{k}": v for k, v in _held_errors(traj, time + settle).items()})
        curves.append({"t": np.asarray(traj.t), "e_p": np.linalg.norm(np.asarray(traj.p_ref - traj.p), axis=1),
                       "yaw_rate": np.asarray(traj.omega)[:, 2], "layer": "analytic", "rotor": j + 1})
        if bar is not None:
            bar.update()
        if physics:
            res = usecase.fly_physics_layer(conf)["_result"]
            ptraj = res.trajectory
            row["physics"] = fault_outcome(ptraj, conf.flight, settle=settle)
            row.update({f"physics_{k}": v for k, v in _held_errors(ptraj, time + settle).items()})
            curves.append({"t": np.asarray(ptraj.t),
                           "e_p": np.linalg.norm(np.asarray(ptraj.p_ref - ptraj.p), axis=1),
                           "yaw_rate": np.asarray(ptraj.omega)[:, 2], "layer": "physics", "rotor": j + 1})
            if bar is not None:
                bar.update()
        row.update(full_pose_margin=analysis[j].full_pose_margin,
                   yaw_released_margin=analysis[j].yaw_released_margin, hoverable=analysis[j].hoverable)
        rows.append(row)
    if bar is not None:
        bar.close()
    agree = all(r[layer] == r["analysis"] for r in rows for layer in ("analytic", "physics") if r[layer] is not None)
    report = {"config": config.source, "name": config.name, "label": config.platform.label(),
              "time": time, "settle": settle, "detection_delay": detection_delay, "release_yaw": release_yaw,
              "outcomes": list(OUTCOMES), "rotors": rows, "agree": agree,
              "wall_time_s": _time.perf_counter() - t0}
    (out / "faults.json").write_text(json.dumps(to_jsonable(report), indent=2))
    echo(report_table(report))
    echo(f"wrote {out / 'faults.json'}")
    if figures:
        path = plot_rotor_losses(curves, report, out / "faults.png")
        echo(f"wrote {path}")
    return report


def report_table(report: dict) -> str:
    """The rotor-loss table of a :func:`rotor_loss_report` dict: one line per rotor, the analysis' outcome and
    each layer's, the largest position error after settling, and whether they agree."""
    lines = [f"Rotor losses of {report['name']} ({report['label']}): rotor lost at {report['time']} s of hover, "
             f"judged from {report['settle']} s after",
             f"{'rotor':>5}  {'analysis':<13}{'analytic':<13}{'physics':<13}{'|e_p| analytic':>15}"
             f"{'|e_p| physics':>15}  agree"]
    for r in report["rotors"]:
        ok = all(r[k] == r["analysis"] for k in ("analytic", "physics") if r[k] is not None)
        ep = [r.get(f"{k}_position_error") for k in ("analytic", "physics")]
        cells = [f"{e:15.4f}" if e is not None else f"{'-':>15}" for e in ep]
        lines.append(f"{r['rotor']:>5}  {r['analysis']:<13}{r['analytic']:<13}{str(r['physics'] or '-'):<13}"
                     f"{cells[0]}{cells[1]}  {'yes' if ok else 'NO'}")
    lines.append("every flown outcome agrees with the analysis" if report["agree"]
                 else "DISAGREEMENT: a flown outcome differs from the analysis (rows marked NO)")
    return "\n".join(lines)


def plot_rotor_losses(curves: list[dict], report: dict, path: str | Path) -> Path:
    """``faults.png``: position error [m] (log scale) and yaw rate [rad/s] against time for every rotor
    loss (analytic solid, physics dashed), the loss time and the judged window marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for c in curves:
        color = colors[(c["rotor"] - 1) % len(colors)]
        style = "-" if c["layer"] == "analytic" else "--"
        label = f"rotor {c['rotor']} ({c['layer']})"
        ax1.semilogy(c["t"], np.maximum(c["e_p"], 1e-6), style, color=color, label=label, lw=1.2)
        ax2.plot(c["t"], c["yaw_rate"], style, color=color, lw=1.2)
    for ax in (ax1, ax2):
        ax.axvline(report["time"], color="k", lw=0.8)
        ax.axvspan(report["time"] + report["settle"], max(float(c["t"][-1]) for c in curves), color="0.9")
        ax.grid(True, alpha=0.3)
    ax1.axhline(0.1, color="r", lw=0.8, ls=":")
    ax1.set_ylabel("position error [m]")
    ax2.set_ylabel("yaw rate [rad/s]")
    ax2.set_xlabel("time [s]")
    ax1.set_title(f"{report['name']}: each rotor lost at {report['time']} s (shaded: judged window)")
    ax1.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
