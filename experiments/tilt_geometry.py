"""Tilt geometry: choose alpha_0 and beta_0 by gradient descent through whole flights, and check it.

The problem is ``configs/optimize_tilt.toml``: the Table II hexarotor flies the
figure-eight of eq. (13) with an 8 s period (3.75 times the paper's speed, up to
2.5 m/s^2 lateral acceleration) at fixed attitude, with rotor speeds clipped to
[0, 700] rad/s and 30 ms motor lag, and minimises over ``(alpha_0, beta_0)``

    J = RMSE(e_p) [mm] + 1000 S + lambda E

(S: saturation cost, rotor speeds within 20 % of their range from a bound; E: power
proxy over the flat-hover power; see ``jaxrotor.optimize.objectives``).

What it does and prints:

1. the gradient optimum for the configured lambda (``jaxrotor.optimize.minimize``,
   from the paper's 25 deg / 10 deg; ``history.csv``, ``result.json``, plots in
   ``OUT/gradient``);
2. a dense grid over ``(alpha_0, beta_0)`` flown as one ``vmap``-ed batch, and the
   check that the gradient optimum lies within one grid cell of the grid's best;
3. the trade-off over lambda: one independent optimisation per lambda (twice the
   single run's iterations), all run as one ``vmap``-ed step (``minimize_batch``,
   lambda is a batched array leaf of the objective), each checked against the grid's
   best for that lambda;
4. the paper's design evaluated on the same objective;
5. figures ``landscape.png`` (J over the grid with the gradient path), ``tradeoff.png``
   and ``cliff.png`` (tracking error against tilt: flat, then a cliff), and
   ``tilt_geometry.json``.

Checks (one ``check ...: PASS/FAIL`` line each; the script exits 1 if any fails):
for every lambda of the sweep (and, in full mode, for the single run), the distance
of the gradient optimum from the grid's best, in grid cells (the larger of
``|alpha - alpha_grid| / cell`` and ``|beta - beta_grid| / cell``), is at most 1; and
no optimum is a penalised (diverged) flight.

Run::

    python experiments/tilt_geometry.py                  # full (a few minutes on 2 CPU cores)
    python experiments/tilt_geometry.py --quick          # 2 s flight, coarse grid, few iterations (< 60 s)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import tomllib
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxrotor import optimize as op  # noqa: E402
from jaxrotor.io import optimize_config  # noqa: E402
from jaxrotor.workflows.report import write_report  # noqa: E402

from _checks import Checks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "optimize_tilt.toml"
PAPER = (math.radians(25.0), math.radians(10.0))


def _weights(problem):
    """``{term name: (index, weight)}`` of the objective's weighted terms."""
    out = {}
    for i, t in enumerate(problem.objective.terms):
        out[t.name] = (i, float(t.weight))
    return out


def _design_at(problem, a, b):
    return eqx.tree_at(lambda d: (d.platform.alpha, d.platform.beta), problem.design,
                       (jnp.asarray(a, dtype=float), jnp.asarray(b, dtype=float)))


def grid_terms(problem, alphas, betas, chunk):
    """Term measures on the grid (one vmapped, jit-compiled flight per chunk of designs)."""

    @eqx.filter_jit
    def run(p, a, b):
        def one(ai, bi):
            value, info = p.evaluate(_design_at(p, ai, bi))
            return info.terms, info.penalized
        return jax.vmap(one)(a, b)

    A, B = np.meshgrid(alphas, betas, indexing="ij")
    a, b = A.ravel(), B.ravel()
    n = a.size
    pad = (-n) % chunk
    a = np.concatenate([a, np.full(pad, a[-1])])
    b = np.concatenate([b, np.full(pad, b[-1])])
    outs, pens = [], []
    for k in range(0, a.size, chunk):
        terms, pen = run(problem, jnp.asarray(a[k:k + chunk]), jnp.asarray(b[k:k + chunk]))
        outs.append({key: np.asarray(v) for key, v in terms.items()})
        pens.append(np.asarray(pen))
    terms = {key: np.concatenate([o[key] for o in outs])[:n].reshape(A.shape) for key in outs[0]}
    return terms, np.concatenate(pens)[:n].reshape(A.shape)


def objective_on_grid(terms, weights, lam):
    J = np.zeros_like(next(iter(terms.values())))
    for name, (_, w) in weights.items():
        J = J + (lam if name == "energy" else w) * terms[name]
    return J


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 s flight, coarse grid, few iterations (smoke test)")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/tilt_geometry[_quick])")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out or ("jaxrotor-out/tilt_geometry" + ("_quick" if args.quick else "")))
    out.mkdir(parents=True, exist_ok=True)
    progress = not args.no_progress

    data = tomllib.loads(CONFIG.read_text())
    if args.quick:
        data["reference"]["duration"] = 2.0
        data["optimize"]["iterations"] = 12
        data["optimize"]["decay_steps"] = 12
        step_deg = 7.0
        lambdas = [3.0, 30.0]
    else:
        step_deg = 1.0
        lambdas = [1.0, 3.0, 10.0, 30.0, 100.0, 300.0]
    conf = optimize_config.from_dict(data, str(CONFIG), CONFIG.parent)
    problem, optimizer = conf.problem, conf.optimizer  # optimizer: the settings; .build() is the optax transform
    reference = problem.design.flight.reference
    weights = _weights(problem)
    lam0 = weights["energy"][1]
    t_start = time.perf_counter()

    # 1. gradient optimum for the configured lambda (full mode: the logged single run)
    if not args.quick:
        result = op.minimize(problem, optimizer.build(), conf.options, out_dir=out / "gradient", progress=progress)
        write_report(result, problem, out / "gradient")
        path = np.degrees([[r["platform.alpha"], r["platform.beta"]] for r in result.history])
        single = np.degrees(problem.parameters.flatten(result.design))
    t_single = time.perf_counter() - t_start

    # 2. dense grid, one vmapped batch per chunk
    alphas = np.radians(np.arange(15.0, 50.0 + 1e-9, step_deg))
    betas = np.radians(np.arange(0.0, 30.0 + 1e-9, step_deg))
    t0 = time.perf_counter()
    terms, penalized = grid_terms(problem, alphas, betas, chunk=64 if args.quick else 128)
    t_grid = time.perf_counter() - t0

    # 3. lambda trade-off as one vmapped optimisation
    i_energy = weights["energy"][0]
    lam = jnp.asarray(lambdas)
    batched = eqx.tree_at(lambda p: p.objective.terms[i_energy].weight, problem, lam)
    axes = op.batch_axes(batched, lambda p: p.objective.terms[i_energy].weight)
    # twice the single run's budget: at small lambda the objective is nearly flat in beta_0
    n_batch = 2 * conf.options.iterations
    batch_opt = optimize_config.Optimizer(optimizer.name, optimizer.learning_rate, clip_norm=optimizer.clip_norm,
                                          b1=optimizer.b1, b2=optimizer.b2, decay_steps=n_batch,
                                          final_fraction=optimizer.final_fraction)
    t0 = time.perf_counter()
    best, best_loss, losses, penal = op.minimize_batch(batched, batch_opt.build(), axes=axes,
                                                       batch_size=len(lambdas), iterations=n_batch, progress=progress)
    t_batch = time.perf_counter() - t0
    sweep = []
    cell = (math.degrees(alphas[1] - alphas[0]), math.degrees(betas[1] - betas[0]))

    def cells_from(ab, grid_best):
        """Distance of ``ab`` from ``grid_best`` [deg], in grid cells (the larger of the two axes)."""
        return max(abs(ab[0] - grid_best[0]) / cell[0], abs(ab[1] - grid_best[1]) / cell[1])

    def grid_best_at(lam):
        J = np.where(penalized, np.inf, objective_on_grid(terms, weights, lam))
        i, j = np.unravel_index(np.argmin(J), J.shape)
        return (math.degrees(alphas[i]), math.degrees(betas[j])), float(J[i, j])

    all_ok = True
    for k, l in enumerate(lambdas):
        th = jax.tree_util.tree_map(lambda x: x[k], best)
        design = problem.to_design(th)
        ab = np.degrees(problem.parameters.flatten(design))
        _, info = eqx.filter_jit(lambda p, d: p.evaluate(d))(problem, design)
        grid_best, grid_loss = grid_best_at(l)
        dist = cells_from(ab, grid_best)
        ok = dist <= 1.0 + 1e-9
        all_ok &= ok
        sweep.append({"lambda": l, "alpha_deg": ab[0], "beta_deg": ab[1], "loss": float(best_loss[k]),
                      "grid_alpha_deg": grid_best[0], "grid_beta_deg": grid_best[1], "grid_loss": grid_loss,
                      "cells_from_grid_best": dist, "within_one_cell": bool(ok), "penalized": bool(info.penalized),
                      **{f"{n}": float(v) for n, v in info.terms.items()}})

    # 4. the paper's design on the same objective
    _, info_p = eqx.filter_jit(lambda p, d: p.evaluate(d))(problem, _design_at(problem, *PAPER))
    paper = {n: float(v) for n, v in info_p.terms.items()}
    paper["loss"] = sum((lam0 if n == "energy" else w) * paper[n] for n, (_, w) in weights.items())

    # report
    print(f"tilt geometry ({'quick' if args.quick else 'full'}): {conf.name}, flight {reference.duration:g} s, "
          f"grid {len(alphas)} x {len(betas)} ({cell[0]:g} deg cells)")
    if not args.quick:
        print(f"gradient optimum (lambda = {lam0:g}): alpha_0 = {single[0]:.2f} deg, beta_0 = {single[1]:.2f} deg, "
              f"J = {result.final_loss:.4f} after {result.iterations} iterations ({result.stop_reason})")
    print(f"paper design 25 / 10 deg: J(lambda={lam0:g}) = {paper['loss']:.4f}, tracking {paper['tracking_rmse']:.3f} mm, "
          f"saturation {paper['saturation']:.3g}, energy {paper['energy']:.4f}")
    print(f"{'lambda':>8} {'alpha*':>8} {'beta*':>8} {'grid a':>8} {'grid b':>8} {'J':>10} {'J grid':>10} "
          f"{'RMSE mm':>9} {'S':>9} {'E':>7} ok")
    for s in sweep:
        print(f"{s['lambda']:>8g} {s['alpha_deg']:>8.2f} {s['beta_deg']:>8.2f} {s['grid_alpha_deg']:>8.1f} "
              f"{s['grid_beta_deg']:>8.1f} {s['loss']:>10.4f} {s['grid_loss']:>10.4f} {s['tracking_rmse']:>9.4f} "
              f"{s['saturation']:>9.2e} {s['energy']:>7.4f} {'yes' if s['within_one_cell'] else 'NO'}")
    print(f"times: single run {t_single:.1f} s, grid ({penalized.size} flights) {t_grid:.1f} s, "
          f"lambda batch {t_batch:.1f} s")
    print("gradient optima within one grid cell of the grid's best: " + ("yes" if all_ok else "NO"))

    summary = {"quick": args.quick, "lambda_configured": lam0, "grid_cell_deg": cell, "paper": paper, "sweep": sweep,
               "all_within_one_cell": bool(all_ok), "times_s": {"single": t_single, "grid": t_grid,
                                                                "batch": t_batch}}
    checks = Checks("tilt_geometry")
    for s in sweep:
        checks.add(f"lambda = {s['lambda']:g}: optimum's distance from the grid's best [cells]",
                   s["cells_from_grid_best"], "<=", 1.0 + 1e-9,
                   f"optimum {s['alpha_deg']:.2f} / {s['beta_deg']:.2f} deg, grid best {s['grid_alpha_deg']:.1f} / "
                   f"{s['grid_beta_deg']:.1f} deg")
    if not args.quick:
        grid_best, _ = grid_best_at(lam0)
        summary["gradient_optimum_deg"] = single.tolist()
        summary["gradient_final_loss"] = result.final_loss
        summary["gradient_cells_from_grid_best"] = cells_from(single, grid_best)
        checks.add(f"single run (lambda = {lam0:g}): optimum's distance from the grid's best [cells]",
                   summary["gradient_cells_from_grid_best"], "<=", 1.0 + 1e-9,
                   f"optimum {single[0]:.2f} / {single[1]:.2f} deg, "
                   f"grid best {grid_best[0]:.1f} / {grid_best[1]:.1f} deg")
    checks.add("penalised (diverged) optima of the sweep", sum(s["penalized"] for s in sweep), "<=", 0)
    _plots(out, alphas, betas, terms, weights, lam0, sweep, None if args.quick else path, paper)
    print(f"outputs written to {out}")
    return checks.finish(out / "tilt_geometry.json", summary)


def _plots(out, alphas, betas, terms, weights, lam0, sweep, path, paper):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from jaxrotor.io.plotting import save_figure

    A, B = np.degrees(alphas), np.degrees(betas)
    J = objective_on_grid(terms, weights, lam0)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    levels = np.quantile(J[np.isfinite(J)], np.linspace(0, 0.9, 25))
    cs = ax.contourf(A, B, J.T, levels=np.unique(levels), cmap="viridis")
    fig.colorbar(cs, ax=ax, label=f"J (lambda = {lam0:g})")
    i, j = np.unravel_index(np.nanargmin(J), J.shape)
    ax.plot(A[i], B[j], "s", mfc="none", mec="w", ms=10, label="grid best")
    if path is not None:
        ax.plot(path[:, 0], path[:, 1], ".-", color="C1", ms=3, lw=1, label="gradient path")
    ax.plot(25, 10, "*", color="C3", ms=12, label="paper 25/10 deg")
    ax.set_xlabel("alpha_0 [deg]")
    ax.set_ylabel("beta_0 [deg]")
    ax.legend(fontsize=8)
    save_figure(fig, out / "landscape.png", dpi=120)

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    e = [s["energy"] for s in sweep]
    sat = [s["saturation"] for s in sweep]
    ax.plot(e, sat, "o-")
    for s in sweep:
        ax.annotate(f"λ={s['lambda']:g}\n{s['alpha_deg']:.1f}°/{s['beta_deg']:.1f}°", (s["energy"], s["saturation"]),
                    fontsize=7, textcoords="offset points", xytext=(4, 4))
    ax.plot(paper["energy"], paper["saturation"], "*", color="C3", ms=12, label="paper 25/10 deg")
    ax.set_xlabel("energy E (flat hover = 1)")
    ax.set_ylabel("saturation cost S")
    ax.set_yscale("symlog", linthresh=1e-5)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, out / "tradeoff.png", dpi=120)

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for jb in sorted({0, min(len(B) - 1, int(round(10 / max(B[1] - B[0], 1e-9))))}):
        ax.semilogy(A, terms["tracking_rmse"][:, jb], ".-", label=f"beta_0 = {B[jb]:g} deg")
    ax.set_xlabel("alpha_0 [deg]")
    ax.set_ylabel("position RMSE [mm]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, out / "cliff.png", dpi=120)


if __name__ == "__main__":
    sys.exit(main())
