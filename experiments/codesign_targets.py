"""Co-design with gradients against CMA-ES, and independent checks of the optimum, on the shipped examples.

For each design file (default ``configs/design_endurance_quad.toml`` and
``configs/design_fully_actuated_hex.toml``) the script

1. solves it with :func:`jaxrotor.optimize.codesign.solve` (augmented-Lagrangian projected Adam,
   every catalogue motor and cell count enumerated; deterministic from the file's start);
2. runs CMA-ES (:func:`jaxrotor.optimize.codesign.cma_baseline`, the same variables, objective and
   constraints, penalised, on the same function) with ``10 x`` the gradient method's evaluations for
   ``--seeds`` seeds, and reports the median best feasible objective and the evaluations each method
   needed to reach the other's best;
3. gives CMA-ES ``100 x`` the gradient method's evaluations (``--long-seeds`` seeds) and measures by how
   much it beats the gradient design;
4. samples a Latin hypercube of ``--lhs`` points over the continuous variables in a box of +-``--box``
   of each range around the optimum (its motor and cell count) and reports the best feasible one;
5. checks ``jax.grad`` of the whole mission loss (objective, every constraint measure, the tracking
   of the flown mission) against central differences (step 1e-5 of each range) for every variable.

Writes ``codesign_targets.json`` and ``codesign_convergence.png`` into ``--out``.

Checks (one ``check ...: PASS/FAIL`` line each; exit 1 if any fails):

* the gradient design is at least as good as CMA-ES's median best (10x budget);
* the gradient method used at most 1/10 of CMA-ES's evaluations;
* CMA-ES with 100x the budget beats it by at most 1 %;
* no Latin-hypercube point that satisfies every constraint is better by more than 1 %;
* gradient vs central differences: largest relative error <= 1e-4 (of the gradient's norm).

``--quick``: the files' ``[design.quick]`` settings, the winner's catalogue entry only, 2 seeds, no
100x run, 256 hypercube points (a few minutes).

Run::

    python experiments/codesign_targets.py --out jaxrotor-out/codesign_targets
    python experiments/codesign_targets.py --quick
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxrotor.io.design_config import load_design  # noqa: E402
from jaxrotor.optimize.codesign import OBJECTIVES, cma_baseline, latin_hypercube, solve  # noqa: E402

from _checks import Checks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("configs/design_endurance_quad.toml", "configs/design_fully_actuated_hex.toml")


def _better(a: float, b: float, sign: int) -> float:
    """Relative amount by which ``a`` is better than ``b`` (positive: better)."""
    return sign * (a - b) / abs(b)


def _reach(history, target: float, sign: int) -> float:
    """Evaluations after which ``history`` first reaches ``target`` (inf if never)."""
    for e, v in history:
        if np.isfinite(v) and sign * (v - target) >= -1e-12 * abs(target):
            return float(e)
    return math.inf


def gradient_check(problem, x, motor: int, cells: int) -> dict:
    """``jax.grad`` of the mission loss against central differences (step 1e-5 of each range) at ``x``."""
    need = frozenset({c.measure for c in problem.constraints} | {problem.objective, "tracking"})
    sign = OBJECTIVES[problem.objective]

    def loss(x):
        m = problem.measures(x, motor, cells, need)
        f = -sign * m[problem.objective] / abs(float(m0[problem.objective]))
        g = sum(m[c.measure] / c.scale for c in problem.constraints)
        return f + g + m["tracking"]

    m0 = jax.jit(lambda x: problem.measures(x, motor, cells, need))(x)
    grad = np.asarray(jax.jit(jax.grad(loss))(x))
    h = 1e-5 * (problem.upper - problem.lower)
    d = len(x)
    pts = jnp.concatenate([x + jnp.diag(jnp.asarray(h)), x - jnp.diag(jnp.asarray(h))])
    vals = np.asarray(jax.jit(jax.vmap(loss))(pts))
    fd = (vals[:d] - vals[d:]) / (2 * h)
    err = np.abs(grad - fd) / max(np.linalg.norm(fd), 1e-300)
    return {"grad": grad.tolist(), "central_difference": fd.tolist(), "relative_error": err.tolist(),
            "max_relative_error": float(err.max()), "variables": list(problem.names)}


#: Designs per compiled hypercube batch. On the per-rotor hexarotor a batch of 256 stopped making progress (every
#: thread waiting, twice); batches of 32 evaluate its 2 000 points in 30 s on 2 cores.
LHS_CHUNK = 32


def lhs_check(problem, x_best, motor: int, cells: int, n: int, box: float, seed: int = 0) -> dict:
    """Best feasible objective over a Latin hypercube of ``n`` points in +-``box`` of each range around ``x_best``
    (evaluated :data:`LHS_CHUNK` designs at a time)."""
    lo = np.maximum(problem.lower, x_best - box * (problem.upper - problem.lower))
    hi = np.minimum(problem.upper, x_best + box * (problem.upper - problem.lower))
    X = lo + (hi - lo) * latin_hypercube(n, len(x_best), seed)
    f = jax.jit(jax.vmap(lambda x: problem.measures(x, motor, cells)))
    bounds = jnp.asarray(problem.bounds)
    sign = OBJECTIVES[problem.objective]
    chunk = LHS_CHUNK
    best, n_feasible = math.nan, 0
    for s in range(0, n, chunk):
        xs = X[s:s + chunk]
        pad = chunk - len(xs)
        m = f(jnp.asarray(np.concatenate([xs, np.repeat(xs[:1], pad, axis=0)])))
        g = np.asarray(jax.vmap(lambda mm: problem.violations(mm, bounds))(m))[: len(xs)]
        ok = np.all(g <= 0, axis=1) & (np.asarray(m["diverged"])[: len(xs)] == 0)
        vals = np.asarray(m[problem.objective])[: len(xs)][ok]
        n_feasible += int(ok.sum())
        if vals.size:
            cand = float(vals.max() if sign > 0 else vals.min())
            best = cand if math.isnan(best) or sign * (cand - best) > 0 else best
    return {"points": n, "box": box, "feasible": n_feasible, "best_feasible": best}


def run_one(path: str, quick: bool, seeds: int, long_seeds: int, n_lhs: int, box: float) -> dict:
    conf = load_design(ROOT / path, quick=quick)
    pr, st = conf.problem, conf.settings
    sign = OBJECTIVES[pr.objective]
    name = conf.name
    print(f"== {name}: {pr.objective}, {len(pr.motor_names)} motors x {len(pr.cells)} cells", flush=True)
    if quick:  # one catalogue entry (the full run's winner is the file's first quick motor)
        pr = eqx.tree_at(lambda p: p.keys, pr, pr.keys[:1])
    t0 = time.perf_counter()
    grad = solve(pr, iterations=st.iterations if not quick else 24, rounds=st.rounds if not quick else 3,
                 learning_rate=st.learning_rate, rho=st.rho, tighten=st.tighten)
    feas = np.nonzero(grad.feasible)[0]
    if feas.size == 0:
        return {"name": name, "feasible": False}
    i = int(feas[np.argmax(sign * grad.objective[feas])])
    g_best = float(grad.objective[i])
    motor_name, cells = grad.candidates[i]
    motor = pr.motor_names.index(motor_name)
    print(f"gradient: {g_best:.6g} after {grad.evaluations} designs, {grad.wall_s:.1f} s ({motor_name}, {cells}S)",
          flush=True)
    budget = 10 * grad.evaluations
    cma = [cma_baseline(pr, budget, seed=s) for s in range(seeds)]
    for s, b in enumerate(cma):
        print(f"CMA-ES seed {s}: {b.best_objective:.6g} after {b.evaluations} designs, {b.wall_s:.1f} s", flush=True)
    bests = [b.best_objective for b in cma if np.isfinite(b.best_objective)]
    cma_median = float(statistics.median(bests)) if bests else math.nan
    # evaluations the gradient method needed to reach CMA's median best, and CMA (median) to reach the gradient's
    g_reach = _reach(grad.history, cma_median, sign) if np.isfinite(cma_median) else math.inf
    c_reach = float(statistics.median([_reach(b.history, g_best, sign) for b in cma]))
    long = [cma_baseline(pr, 100 * grad.evaluations, seed=100 + s) for s in range(long_seeds)]
    long_best = [b.best_objective for b in long]
    for b in long:
        print(f"CMA-ES 100x: {b.best_objective:.6g} after {b.evaluations} designs, {b.wall_s:.1f} s", flush=True)
    lhs = lhs_check(pr, grad.x[i], motor, cells, n_lhs, box)
    print(f"LHS: {lhs['feasible']} of {lhs['points']} feasible, best {lhs['best_feasible']:.6g}", flush=True)
    gc = gradient_check(pr, jnp.asarray(grad.x[i]), motor, cells)
    print(f"gradient check: max relative error {gc['max_relative_error']:.2e}", flush=True)
    return {
        "name": name, "config": path, "objective": pr.objective, "sense": "maximize" if sign > 0 else "minimize",
        "feasible": True, "gradient": {"best_objective": g_best, "evaluations": grad.evaluations,
                                       "wall_s": grad.wall_s, "motor": motor_name, "cells": cells,
                                       "x": dict(zip(pr.names, grad.x[i].tolist())),
                                       "evaluations_to_reach_cma_median": g_reach,
                                       "history": grad.history},
        "cma": {"budget": budget, "median_best_objective": cma_median,
                "seeds": [{"seed": s, "best_objective": b.best_objective, "evaluations": b.evaluations,
                           "wall_s": b.wall_s, "best": b.best} for s, b in enumerate(cma)],
                "median_evaluations_to_reach_gradient": c_reach,
                "history": cma[0].history if cma else []},
        "cma_long": {"budget": 100 * grad.evaluations, "best_objective": long_best,
                     "wall_s": [b.wall_s for b in long]},
        "gradient_vs_cma": _better(g_best, cma_median, sign) if np.isfinite(cma_median) else math.nan,
        "cma_long_vs_gradient": max((_better(v, g_best, sign) for v in long_best if np.isfinite(v)), default=math.nan),
        "lhs": lhs, "lhs_vs_gradient": _better(lhs["best_feasible"], g_best, sign)
        if np.isfinite(lhs["best_feasible"]) else -math.inf,
        "gradient_check": gc, "wall_s": time.perf_counter() - t0,
    }


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4), squeeze=False)
    for ax, r in zip(axes[0], results):
        if not r.get("feasible"):
            continue
        h = np.asarray(r["gradient"]["history"], float)
        ax.plot(h[:, 0], h[:, 1], "-", label="gradient (AL-Adam)")
        c = np.asarray(r["cma"]["history"], float)
        if c.size:
            ax.plot(c[:, 0], c[:, 1], "--", label="CMA-ES (seed 0)")
        ax.axhline(r["cma"]["median_best_objective"], color="gray", lw=0.8, label="CMA-ES median best")
        ax.set_xscale("log")
        ax.set_xlabel("designs evaluated")
        ax.set_ylabel(f"best feasible {r['objective']}")
        ax.set_title(r["name"])
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.environ.get("JAXROTOR_OUT", "jaxrotor-out/codesign_targets"))
    ap.add_argument("--configs", nargs="*", default=None)
    ap.add_argument("--seeds", type=int, default=None, help="CMA-ES seeds (default 5; 2 with --quick)")
    ap.add_argument("--long-seeds", type=int, default=None, help="100x-budget CMA-ES runs (default 1; 0 quick)")
    ap.add_argument("--lhs", type=int, default=None, help="hypercube points (default 2000; 256 with --quick)")
    ap.add_argument("--box", type=float, default=0.1, help="hypercube half-width, fraction of each range")
    a = ap.parse_args(argv)
    seeds = a.seeds if a.seeds is not None else (2 if a.quick else 5)
    long_seeds = a.long_seeds if a.long_seeds is not None else (0 if a.quick else 1)
    n_lhs = a.lhs if a.lhs is not None else (256 if a.quick else 2000)
    configs = a.configs or (CONFIGS[:1] if a.quick else CONFIGS)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    checks = Checks("codesign_targets")
    results = []
    for path in configs:
        r = run_one(path, a.quick, seeds, long_seeds, n_lhs, a.box)
        results.append(r)
        n = r["name"]
        if not r["feasible"]:
            checks.add(f"{n}: a feasible design found", 0.0, ">=", 1.0)
            continue
        checks.add(f"{n}: gradient best better than CMA-ES median best (relative)", r["gradient_vs_cma"], ">=", 0.0)
        checks.add(f"{n}: gradient evaluations / CMA-ES evaluations", r["gradient"]["evaluations"] / r["cma"]["budget"],
                   "<=", 0.1)
        if r["cma_long"]["best_objective"]:
            checks.add(f"{n}: CMA-ES 100x budget better than gradient (relative)", r["cma_long_vs_gradient"], "<=", 0.01)
        checks.add(f"{n}: best feasible hypercube point better than gradient (relative)", r["lhs_vs_gradient"],
                   "<=", 0.01)
        checks.add(f"{n}: gradient vs central differences (max relative error)",
                   r["gradient_check"]["max_relative_error"], "<=", 1e-4)
    plot(results, out / "codesign_convergence.png")
    return checks.finish(out / "codesign_targets.json", {"quick": a.quick, "results": results})


if __name__ == "__main__":
    sys.exit(main())
