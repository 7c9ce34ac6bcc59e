"""The paper's use case end to end: fly a :class:`~jaxrotor.io.config.FlightSpec`, report, draw.

:func:`paper_reproduction_spec` and :func:`paper_realistic_spec` build the two
configurations of the RotorSuite use case in code (they equal
``configs/paper_reproduction.toml`` and ``configs/paper_realistic.toml``, which a
test checks). :func:`run` flies a spec (and its comparison flight), prints the
metrics table beside the paper's Table IV, and writes the figures,
``trajectory.npz`` and ``metrics.json``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import jax
import numpy as np

from .io.config import FlightSpec

__all__ = [
    "PAPER_TABLE_IV",
    "FlightResult",
    "paper_reproduction_spec",
    "paper_realistic_spec",
    "fly",
    "run",
    "metrics_table",
]

#: Table IV, analytic column (mean absolute errors): e_p [m], e_R [rad].
PAPER_TABLE_IV = {
    "mae_position": [1.7216e-03, 3.4434e-03, 1.5840e-05],
    "mae_orientation": [8.5025e-18, 7.0063e-18, 7.1449e-18],
}


@dataclasses.dataclass
class FlightResult:
    """One flown spec: the trajectory, its metrics (plain floats/lists) and timings [s]."""

    spec: FlightSpec
    trajectory: object
    metrics: dict
    compile_time_s: float
    wall_time_s: float


def _spec(name, platform, controller, allocator, actuators, compare=None) -> FlightSpec:
    from .integrate import Integrator
    from .reference import paper_maneuver

    return FlightSpec(name=name, platform=platform, controller=controller, allocator=allocator, actuators=actuators,
                      reference=paper_maneuver(), integrator=Integrator(rtol=1e-9, atol=1e-11), save_dt=0.01, t1=None,
                      compare=compare, source="<builtin>", raw={})


def paper_realistic_spec() -> FlightSpec:
    """Table II hexarotor, Table III gains, inputs clipped to ``[0, u_max]``, 30 ms first-order motor lag."""
    from .allocators import Clip
    from .control import FullyActuatedSE3
    from .dynamics import Actuators, FirstOrderMotor
    from .design.presets import paper_hexarotor

    return _spec("paper_realistic", paper_hexarotor(), FullyActuatedSE3(), Clip(), Actuators(motor=FirstOrderMotor(0.03)))


def paper_reproduction_spec(with_comparison: bool = True) -> FlightSpec:
    """The analytic setup as the paper runs it (exact pseudo-inverse ``u`` applied directly),
    compared against :func:`paper_realistic_spec` when ``with_comparison``."""
    from .allocators import PseudoInverse
    from .control import FullyActuatedSE3
    from .dynamics import Actuators
    from .design.presets import paper_hexarotor

    return _spec("paper_reproduction", paper_hexarotor(), FullyActuatedSE3(), PseudoInverse(), Actuators(),
                 compare=paper_realistic_spec() if with_comparison else None)


def _to_py(x):
    return np.asarray(x).tolist()


def fly(spec: FlightSpec) -> FlightResult:
    """Compile and fly one spec; time the compiled run separately from compilation."""
    from .metrics import tracking_metrics
    from .simulate import simulate

    kwargs = dict(allocator=spec.allocator, actuators=spec.actuators, integrator=spec.integrator, save_dt=spec.save_dt,
                  t1=spec.t1)
    t0 = time.perf_counter()
    traj = simulate(spec.platform, spec.controller, spec.reference, **kwargs)
    jax.block_until_ready(traj.p)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    traj = simulate(spec.platform, spec.controller, spec.reference, **kwargs)
    jax.block_until_ready(traj.p)
    wall = time.perf_counter() - t0
    m = tracking_metrics(traj, spec.platform.c_f, spec.platform.c_tau)
    metrics = {
        "name": spec.name,
        "label": spec.platform.label(),
        "label_ascii": spec.platform.label(ascii=True),
        **{f.name: _to_py(getattr(m, f.name)) for f in dataclasses.fields(m)},
        "num_steps": int(traj.num_steps),
        "sim_time_s": float(traj.t[-1] - traj.t[0]),
        "wall_time_s": wall,
        "compile_time_s": max(first - wall, 0.0),
    }
    metrics["diverged"] = bool(metrics["diverged"])
    return FlightResult(spec=spec, trajectory=traj, metrics=metrics, compile_time_s=metrics["compile_time_s"],
                        wall_time_s=wall)


def metrics_table(results: list[FlightResult], paper: dict | None = PAPER_TABLE_IV) -> str:
    """A plain-text table of mean absolute errors per component, with the paper's column."""
    names = [r.spec.name for r in results]
    header = f"{'metric':<22}" + ("".join(f"{'paper (Table IV, a)':>22}" if paper else "")) + "".join(f"{n:>22}" for n in names)
    lines = [header, "-" * len(header)]
    rows = [("mae e_p,%s [m]" % c, "mae_position", i) for i, c in enumerate("xyz")]
    rows += [("mae e_R,%d [rad]" % (i + 1), "mae_orientation", i) for i in range(3)]
    rows += [("max |e_p,%s| [m]" % c, "max_abs_position_error", i) for i, c in enumerate("xyz")]
    rows += [("rmse e_p,%s [m]" % c, "rmse_position", i) for i, c in enumerate("xyz")]
    for title, key, i in rows:
        ref = f"{paper[key][i]:>22.4e}" if paper and key in paper else (f"{'':>22}" if paper else "")
        lines.append(f"{title:<22}" + ref + "".join(f"{r.metrics[key][i]:>22.4e}" for r in results))
    for title, key, fmt in (("saturated fraction", "saturation_fraction", ".4f"), ("diverged", "diverged", ""),
                            ("solver steps", "num_steps", "d"), ("wall time [s]", "wall_time_s", ".4f"),
                            ("compile time [s]", "compile_time_s", ".2f")):
        lines.append(f"{title:<22}" + (f"{'':>22}" if paper else "") + "".join(
            f"{format(r.metrics[key], fmt) if fmt else str(r.metrics[key]):>22}" for r in results))
    return "\n".join(lines)


def _save_npz(path: Path, traj) -> None:
    keys = ["t", "p", "v", "R", "omega", "accel", "angular_accel", "u", "u_cmd", "rotor_speed", "wrench_requested",
            "wrench_achieved", "saturated", "p_ref", "v_ref", "a_ref", "R_ref"]
    np.savez_compressed(path, **{k: np.asarray(getattr(traj, k)) for k in keys}, diverged=np.asarray(traj.diverged))


def run(spec: FlightSpec, out_dir: str | Path | None = None, progress: bool = True, echo=print) -> dict:
    """Fly ``spec`` (and ``spec.compare``), print the metrics table, write outputs into ``out_dir``.

    Writes ``fig6_trajectory_3d.png``, ``fig7_errors.png``, ``fig8_rotor_speeds.png``,
    ``trajectory.npz`` (and ``trajectory_<compare>.npz``) and ``metrics.json``, which
    holds the metrics of ``spec`` at top level (``label``, ``mae_position``,
    ``mae_orientation``, ``max_abs_position_error``, ``diverged``, ``sim_time_s``,
    ``wall_time_s``, ...) and those of the comparison flight under ``"compare"``.

    Returns:
        The ``metrics.json`` content.
    """
    from tqdm.auto import tqdm

    from .io import plotting

    out = Path(out_dir) if out_dir is not None else Path("jaxrotor-out") / spec.name
    out.mkdir(parents=True, exist_ok=True)
    specs = [spec] + ([spec.compare] if spec.compare is not None else [])
    steps = [f"fly {s.name}" for s in specs] + ["figures", "files"]
    bar = tqdm(total=len(steps), disable=not progress, desc=spec.name, unit="step")
    results = []
    for s in specs:
        bar.set_postfix_str(f"compiling + flying {s.name}")
        results.append(fly(s))
        bar.update()
    runs = {r.spec.name: r.trajectory for r in results}
    bar.set_postfix_str("drawing figures")
    label = results[0].metrics["label"]
    plotting.plot_trajectory_3d(runs, out / "fig6_trajectory_3d.png", title=f"{label}: 3D trajectory")
    plotting.plot_errors(runs, out / "fig7_errors.png", title=f"{label}: position and orientation errors")
    plotting.plot_rotor_speeds(runs, out / "fig8_rotor_speeds.png", title=f"{label}: rotor speeds")
    bar.update()
    bar.set_postfix_str("writing files")
    _save_npz(out / "trajectory.npz", results[0].trajectory)
    for r in results[1:]:
        _save_npz(out / f"trajectory_{r.spec.name}.npz", r.trajectory)
    metrics = dict(results[0].metrics)
    metrics["source"] = spec.source
    if spec.name.startswith("paper"):
        metrics["paper_table_iv_analytic"] = PAPER_TABLE_IV
    if len(results) > 1:
        metrics["compare"] = results[1].metrics
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    bar.update()
    bar.close()
    echo(metrics_table(results, PAPER_TABLE_IV if spec.name.startswith("paper") else None))
    for r in results:
        if r.metrics["diverged"]:
            echo(f"WARNING: flight {r.spec.name!r} DIVERGED (non-finite or runaway state, or solver failure).")
    echo(f"outputs written to {out}")
    return metrics
