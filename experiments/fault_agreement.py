"""Every single-rotor loss, flown, against the static rotor-loss analysis: three hexarotors, a quadrotor and
ten random tilted hexarotors.

Each design hovers at 1 m and loses rotor ``j`` at ``--time`` s (detected 50 ms later), ``j = 1 .. n`` in
turn (:func:`jaxrotor.workflows.faults.rotor_loss_report`, the engine of ``jaxrotor faults``); each flight is
judged by :func:`jaxrotor.verdict.fault_outcome` from 3 s after the loss and compared with the outcome the
analysis predicts (:func:`jaxrotor.analysis.rotor_loss`: ``RotorLoss.outcome``):

* the paper hexarotor (``configs/paper_reproduction.toml``, Table III gains, unbounded pseudo-inverse);
* the S550 flat hexa-X (``configs/faults_s550.toml``, built from its parts, first-order motors, auto gains);
* the cant-tilted ``CS_a0-Ted_6R`` (``configs/cs_a0_ted_6r.toml``, torque priority, 30 ms motors);
* the F450 quadrotor (``configs/faults_f450.toml``, both layers, losses at 0.5 s): its level analysis allows a hover with the
  rotor opposite the lost one idle and the yaw released; the flight computer flies the spinning relaxed hover
  (:mod:`jaxrotor.relaxed`), and with ``release_yaw = "never"`` it falls;
* ten random hexarotors: the paper hexarotor's arms, mass and rotors with per-rotor cant ``alpha_i`` drawn in
  ``+-[10, 40] deg`` and dihedral ``beta_i`` in ``[0, 20] deg`` (seed ``--seed``), each with a level hover
  within its bounds and rank 6, flown with the paper hexarotor's Table III gains (the same mass and inertia)
  and the bounded allocator ``box_ls`` (the analysis judges inputs within ``[0, omega_max^2]``; the paper's
  unbounded pseudo-inverse would fly inputs no motor makes while the loss is not yet detected).
  The auto gains of these designs (``jaxrotor.gains.auto_gains``) come out with position gains near
  ``0.01 1/s^2``, too slow to recover within the judged window, so they are not used here.

Most random losses take rank from ``G`` and leave a static hover along a tilted body axis
(:mod:`jaxrotor.tilted`): the analysis says ``full_pose`` and the flight holds position and a constant tilted
attitude. A yaw-released hover whose rotors cannot cancel their yaw torque spins up without bound: the analysis
(``RotorLoss.yaw_spin_up``) and the verdict (the yaw rate's trend) both call it ``lost``
(:data:`jaxrotor.faults.SPIN_ACCELERATION`).

The three hexarotors fly on both layers (analytic and MuJoCo C; ``--no-physics``: analytic only), the random
designs on the analytic layer. Writes ``fault_agreement.json`` and ``fault_agreement.png`` (the outcome of
every loss, analysis against flight) into ``--out``.

Checks (exit 1 if any fails): every flown outcome of the three hexarotors equals the analysis' (18 losses per
layer), the F450's (4 per layer) and, with ``release_yaw = "never"``, the F450 is lost (4), and of the ten
random designs (60 losses).

Run::

    python experiments/fault_agreement.py           # everything (several minutes)
    python experiments/fault_agreement.py --quick   # one random design, analytic only
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from jaxrotor.allocators import BoxLS  # noqa: E402
from jaxrotor.analysis import hover_solution, ranks  # noqa: E402
from jaxrotor.design.platform import star_platform  # noqa: E402
from jaxrotor.design.presets import TABLE_II  # noqa: E402
from jaxrotor.faults import OUTCOMES  # noqa: E402
from jaxrotor.io.config import load  # noqa: E402
from jaxrotor.workflows.faults import report_table, rotor_loss_report  # noqa: E402

from _checks import Checks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DESIGNS = {"paper_hexarotor": "paper_reproduction.toml", "s550": "faults_s550.toml",
           "cs_a0_ted_6r": "cs_a0_ted_6r.toml"}
QUAD = "faults_f450.toml"
#: Time of the F450's losses [s]. Its relaxed hover holds within 5.7 cm (analytic) and 5.6 cm (physics) with the
#: loss at 0.5 s; with the loss at 5 s the analytic layer's largest error 3-4 s after it is 0.110 m (the physics
#: layer's 5.6 cm), just over the verdict's 0.1 m, which ``docs/faults.md`` reports.
QUAD_T_FAULT = 0.5


def random_designs(base, count: int, seed: int):
    """``count`` random tilted hexarotors on the paper hexarotor's arms, mass and rotors (module docstring),
    each with rank 6 and a level hover within its speed bounds; returns ``[(platform, alpha_deg, beta_deg)]``."""
    rng = np.random.default_rng(seed)
    T = TABLE_II
    out = []
    while len(out) < count:
        alpha = rng.choice([-1.0, 1.0], 6) * rng.uniform(10.0, 40.0, 6)
        beta = rng.uniform(0.0, 20.0, 6)
        pf = star_platform(6, T["arm_length"], mass=T["mass"], c_f=T["c_f"], c_tau=T["c_tau"],
                           alpha=np.radians(alpha).tolist(), beta=np.radians(beta).tolist(), inertia=T["J_a"],
                           gravity=T["gravity"], rotor_speed_max=float(np.sqrt(base.u_max[0])),
                           name=f"random_{len(out) + 1}")
        if ranks(pf)["rank_G"] == 6 and hover_solution(pf)["feasible"]:
            out.append((pf, alpha, beta))
    return out


def fly_design(conf, out: Path, physics: bool, t_fault: float) -> dict:
    """One design's rotor-loss report (quiet), with its per-rotor rows."""
    return rotor_loss_report(conf, out, physics=physics, time=t_fault, echo=lambda *_: None, progress=False,
                             figures=False)


def plot(results: dict, path: Path) -> None:
    """A grid of designs (rows) by rotors (columns): each cell the analysis' outcome (left half) and the
    analytic flight's (right half); a red frame marks a disagreement."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    colors = {"full_pose": "#2ca02c", "yaw_released": "#ff7f0e", "lost": "#d62728"}
    names = list(results)
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.5))
    for i, name in enumerate(names):
        for r in results[name]["rotors"]:
            x = r["rotor"] - 1
            ax.add_patch(Rectangle((x, i), 0.5, 0.9, color=colors[r["analysis"]]))
            ax.add_patch(Rectangle((x + 0.5, i), 0.45, 0.9, color=colors[r["analytic"]]))
            if r["analytic"] != r["analysis"] or (r["physics"] is not None and r["physics"] != r["analysis"]):
                ax.add_patch(Rectangle((x, i), 0.95, 0.9, fill=False, ec="k", lw=2.5))
    ax.set_xlim(0, 8)
    ax.set_ylim(0, len(names))
    ax.set_yticks(np.arange(len(names)) + 0.45, names)
    ax.set_xticks(np.arange(6) + 0.47, [str(k) for k in range(1, 7)])
    ax.set_xlabel("lost rotor (left half: analysis, right half: analytic flight; framed: they differ)")
    ax.legend(handles=[Rectangle((0, 0), 1, 1, color=c, label=w) for w, c in colors.items()], loc="center right",
              fontsize=8)
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one random design, analytic only")
    parser.add_argument("--no-physics", action="store_true", help="the analytic layer only")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random designs")
    parser.add_argument("--out", default="jaxrotor-out/fault_agreement", help="output folder")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    physics = not (args.no_physics or args.quick)
    t_fault = 1.0 if args.quick else 5.0
    checks = Checks("fault_agreement")
    results: dict[str, dict] = {}
    t0 = time.perf_counter()

    designs = {} if args.quick else DESIGNS
    for name, file in designs.items():
        conf = load(ROOT / "configs" / file)
        results[name] = fly_design(conf, out / name, physics, t_fault)
        print(report_table(results[name]), flush=True)
    for layer in () if args.quick else ("analytic",) + (("physics",) if physics else ()):
        rows = [r for name in designs for r in results[name]["rotors"]]
        agree = sum(r[layer] == r["analysis"] for r in rows)
        checks.add(f"hexarotor losses whose {layer} outcome equals the analysis'", agree, "==", len(rows),
                   f"({', '.join(designs)})")

    quad = None
    if not args.quick:
        conf = load(ROOT / "configs" / QUAD)
        quad = fly_design(conf, out / "f450", physics, QUAD_T_FAULT)
        never = rotor_loss_report(conf, out / "f450_never", physics=False, time=QUAD_T_FAULT, release_yaw="never",
                                  echo=lambda *_: None, progress=False, figures=False)
        print(report_table(quad), flush=True)
        print("F450 with release_yaw = never: " + ", ".join(r["analytic"] for r in never["rotors"]))
        results["f450 (quadrotor)"] = quad
        for layer in ("analytic",) + (("physics",) if physics else ()):
            agree = sum(r[layer] == r["analysis"] for r in quad["rotors"])
            checks.add(f"F450 losses whose {layer} outcome (relaxed hover) equals the analysis'", agree, "==", 4)
        checks.add("F450 losses lost with release_yaw = never", sum(r["analytic"] == "lost" for r in never["rotors"]),
                   "==", 4)

    paper = load(ROOT / "configs" / "paper_reproduction.toml")
    base = dataclasses.replace(paper, compare=None)
    base = dataclasses.replace(base, flight=dataclasses.replace(base.flight, allocator=BoxLS()))
    count = 1 if args.quick else 10
    randoms = random_designs(base.platform, count, args.seed)
    random_rows = []
    for k, (pf, alpha, beta) in enumerate(randoms):
        conf = dataclasses.replace(base, platform=pf, name=f"random_{k + 1}")
        rep = fly_design(conf, out / f"random_{k + 1}", False, t_fault)
        rep["alpha_deg"], rep["beta_deg"] = alpha.tolist(), beta.tolist()
        results[f"random {k + 1}"] = rep
        random_rows += rep["rotors"]
        print(f"random {k + 1}: alpha = {np.round(alpha, 1).tolist()} deg, beta = {np.round(beta, 1).tolist()} deg")
        print(report_table(rep), flush=True)
    agree = sum(r["analytic"] == r["analysis"] for r in random_rows)
    checks.add("random-design losses whose analytic outcome equals the analysis'", agree, "==", len(random_rows),
               f"({count} designs, seed {args.seed})")
    counts = {w: sum(r["analysis"] == w for r in random_rows) for w in OUTCOMES}
    print(f"random designs: analysis outcomes {counts}")
    plot(results, out / "fault_agreement.png")
    wall = time.perf_counter() - t0
    print(f"wrote {out / 'fault_agreement.png'} ({wall:.0f} s)")
    record = {"designs": {k: v for k, v in results.items()}, "random_outcome_counts": counts, "wall_time_s": wall,
              "physics": physics, "seed": args.seed, "quick": args.quick,
              "quadrotor_never": None if quad is None else [r["analytic"] for r in never["rotors"]]}
    return checks.finish(out / "fault_agreement.json", record)


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.exit(main())
