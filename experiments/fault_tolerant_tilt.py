"""Fault-tolerant tilt: the cant of the star hexarotor chosen for its worst single rotor loss.

The Table II hexarotor as ``configs/paper_realistic.toml`` flies it (rotor speeds clipped to
[0, 700] rad/s, 30 ms motors, propeller spin inertia, lowered yaw gains) hovers at 1 m; at 1 s it
loses one rotor, the flight computer knows of it 50 ms later, reallocates and gives up the yaw
torque. ``[objective.worst_rotor_loss]`` (``configs/optimize_fault_tolerance.toml``) flies the six
losses as one vmapped program and takes the soft maximum over the rotors of the RMS position error
plus 0.1 m/rad times the roll/pitch RMS error, from the fault to 2 s after it.

The script

* optimises the cant ``alpha_0`` (dihedral ``beta_0`` kept at 10 deg) with optax Adam through
  :func:`jaxrotor.optimize.minimize`, from a poor start (40 deg);
* evaluates the same objective on a grid over the same range (``[0.14, 0.80]`` rad);
* checks the optimum lies within one grid cell of the grid's best and is no worse than it;
* checks ``d J / d alpha_0`` against central differences at the start;
* flies each single-rotor loss of the start and of the optimised design for 4 s after the fault and
  reports :func:`jaxrotor.verdict.fault_outcome` of each: every failure of the optimised design flies
  (``full_pose`` or ``yaw_released``, never ``lost``);
* full run only: the objective on an ``(alpha_0, beta_0)`` grid, the map of the valley that runs into
  the cliff below ``alpha_0`` of about 7 deg.

Writes ``fault_tolerant_tilt.json`` and ``fault_tolerant_tilt.png`` into ``--out``; exit 1 if a
check fails.

Run::

    python experiments/fault_tolerant_tilt.py           # 34-point grid, 30 iterations, beta_0 map
    python experiments/fault_tolerant_tilt.py --quick   # 12-point grid, 12 iterations
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

import jaxrotor as jr  # noqa: E402
from jaxrotor.io.optimize_config import load  # noqa: E402
from jaxrotor.optimize import MinimizeOptions  # noqa: E402
from jaxrotor.optimize import objectives as ob  # noqa: E402
from jaxrotor.verdict import fault_outcome  # noqa: E402

from _checks import Checks  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "optimize_fault_tolerance.toml"
START = math.radians(40.0)  # rad, the poor starting cant


def with_tilt(design, alpha0, beta0=None):
    """``design`` with cant ``alpha0`` (and dihedral ``beta0``) [rad]."""
    d = eqx.tree_at(lambda x: x.platform.alpha, design, jnp.asarray(alpha0, dtype=jnp.float64))
    if beta0 is not None:
        d = eqx.tree_at(lambda x: x.platform.beta, d, jnp.asarray(beta0, dtype=jnp.float64))
    return d


def outcomes(term: ob.WorstRotorLoss, design, settle: float = 4.0) -> list[dict]:
    """Fly each single-rotor loss of ``design`` for ``settle`` s after the fault; its outcome and errors."""
    long = ob.WorstRotorLoss(time=term.time, detection_delay=term.detection_delay, duration=settle,
                             attitude_weight=term.attitude_weight, release_yaw=term.release_yaw)
    fly_one = jax.jit(lambda r: jr.fly(design.platform, design.controller, long.fault_flight(design, r)))
    rows = []
    for j in range(design.platform.n_rotors):
        flight = long.fault_flight(design, j)
        tr = fly_one(jnp.asarray(j))
        late = np.asarray(tr.t) >= float(np.asarray(tr.t)[-1]) - 1.0
        e_p = np.linalg.norm(np.asarray(tr.p_ref - tr.p), axis=1)
        e_R = np.abs(np.asarray(jr.metrics.reference_orientation_error(tr)))
        rows.append({"rotor": j + 1, "outcome": fault_outcome(tr, flight),
                     "max_position_error_m": float(e_p.max()), "last_second_position_error_m": float(e_p[late].max()),
                     "max_roll_pitch_error_rad": float(e_R[:, :2].max()),
                     "yaw_error_end_rad": float(e_R[-1, 2]), "diverged": bool(tr.diverged)})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="12-point grid, 12 iterations, no beta_0 map")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/fault_tolerant_tilt[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or os.environ.get("JAXROTOR_OUT") or
               ("jaxrotor-out/fault_tolerant_tilt" + ("_quick" if args.quick else "")))
    out.mkdir(parents=True, exist_ok=True)

    conf = load(CONFIG)
    problem = conf.problem
    term = problem.objective.term  # Weighted(WorstRotorLoss, 1.0)
    base = problem.design
    lower, upper = 0.14, 0.80
    beta0 = float(base.platform.beta)
    problem = eqx.tree_at(lambda p: p.design, problem, with_tilt(base, START))

    J = jax.jit(lambda a: term.measure(with_tilt(base, a)))
    dJ = jax.jit(jax.grad(lambda a: term.measure(with_tilt(base, a))))

    # ---- the gradient at the start against central differences
    t0 = time.perf_counter()
    g = float(dJ(jnp.asarray(START)))
    t_grad_compile = time.perf_counter() - t0
    h = 1e-5
    fd = (float(J(START + h)) - float(J(START - h))) / (2 * h)
    grad_rel = abs(g - fd) / abs(fd)
    print(f"dJ/dalpha_0 at {math.degrees(START):.0f} deg: {g:.6g} m/rad, central difference {fd:.6g} "
          f"(relative {grad_rel:.2e})")

    # ---- optimise with optax Adam (the config's [optimize] settings, fewer iterations with --quick)
    iters = 12 if args.quick else conf.options.iterations
    lr = conf.optimizer.learning_rate
    t0 = time.perf_counter()
    res = problem.minimize(optax.adam(optax.cosine_decay_schedule(lr, iters, 0.01)),
                           MinimizeOptions(iterations=iters, max_increase=2.0), progress=False)
    t_opt = time.perf_counter() - t0
    a_opt = float(res.design.platform.alpha)
    J_opt = float(J(a_opt))
    J_start = float(J(START))
    path = [float(r[res.names[0]]) for r in res.history]
    print(f"optimised alpha_0 = {math.degrees(a_opt):.2f} deg: J = {100 * J_opt:.3f} cm "
          f"(start {math.degrees(START):.0f} deg: {100 * J_start:.3f} cm), {res.iterations} iterations in {t_opt:.1f} s "
          f"({res.stop_reason})")

    # ---- the same objective on a grid over the same range
    k = 12 if args.quick else 34
    grid = np.linspace(lower, upper, k)
    cell = float(grid[1] - grid[0])
    t0 = time.perf_counter()
    Jg = np.array([float(J(a)) for a in grid])
    t_grid = time.perf_counter() - t0
    i_best = int(np.nanargmin(Jg))
    a_grid, J_grid = float(grid[i_best]), float(Jg[i_best])
    print(f"grid ({k} points, cell {math.degrees(cell):.2f} deg): best alpha_0 = {math.degrees(a_grid):.2f} deg, "
          f"J = {100 * J_grid:.3f} cm ({t_grid:.1f} s)")

    # ---- the per-rotor values and the flown failures of the start and of the optimum
    v_opt = np.asarray(jax.jit(term.values)(with_tilt(base, a_opt))[0])
    rows_opt = outcomes(term, with_tilt(base, a_opt))
    rows_start = outcomes(term, with_tilt(base, START))
    for label, rows in (("start", rows_start), ("optimised", rows_opt)):
        print(f"{label} design, each rotor lost at 1 s (flown 4 s after):")
        for r in rows:
            print(f"  rotor {r['rotor']}: {r['outcome']:>12}  max |e_p| {100 * r['max_position_error_m']:.2f} cm, "
                  f"last second {100 * r['last_second_position_error_m']:.2f} cm, roll/pitch "
                  f"{r['max_roll_pitch_error_rad']:.3f} rad")

    # ---- full run: the (alpha_0, beta_0) map
    beta_map = None
    if not args.quick:
        A = np.radians(np.arange(8.0, 46.0, 3.0))
        B = np.radians(np.arange(0.0, 21.0, 4.0))
        J2 = jax.jit(lambda a, b: term.measure(with_tilt(base, a, b)))
        t0 = time.perf_counter()
        M = np.array([[float(J2(a, b)) for a in A] for b in B])
        ib, ia = np.unravel_index(int(np.nanargmin(M)), M.shape)
        beta_map = {"alpha0_deg": np.degrees(A), "beta0_deg": np.degrees(B), "J_m": M,
                    "best_alpha0_deg": float(np.degrees(A[ia])), "best_beta0_deg": float(np.degrees(B[ib])),
                    "best_J_m": float(M[ib, ia]), "wall_s": time.perf_counter() - t0}
        print(f"(alpha_0, beta_0) map: best at ({beta_map['best_alpha0_deg']:.0f}, {beta_map['best_beta0_deg']:.0f}) "
              f"deg, J = {100 * beta_map['best_J_m']:.3f} cm")

    record = {
        "quick": args.quick, "config": str(CONFIG.name), "beta0_deg": math.degrees(beta0),
        "bounds_rad": [lower, upper], "start_alpha0_deg": math.degrees(START), "start_J_m": J_start,
        "optimised_alpha0_deg": math.degrees(a_opt), "optimised_J_m": J_opt, "optimised_per_rotor_m": v_opt,
        "iterations": res.iterations, "stop_reason": res.stop_reason, "alpha0_path_deg": np.degrees(path),
        "loss_history": [r.get("loss") for r in res.history],
        "grid_alpha0_deg": np.degrees(grid), "grid_J_m": Jg, "grid_cell_deg": math.degrees(cell),
        "grid_best_alpha0_deg": math.degrees(a_grid), "grid_best_J_m": J_grid,
        "grad_start_m_per_rad": g, "central_difference_m_per_rad": fd, "grad_relative_error": grad_rel,
        "outcomes_optimised": rows_opt, "outcomes_start": rows_start, "beta_map": beta_map,
        "wall_s": {"optimise": t_opt, "grid": t_grid, "first_gradient_with_compile": t_grad_compile},
    }

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3 if beta_map else 2, figsize=(15 if beta_map else 10, 4))
    ax = axes[0]
    ax.plot(np.degrees(grid), 100 * Jg, "o-", ms=3, label="grid")
    ax.plot(np.degrees(path), [100 * float(x) for x in record["loss_history"]], "x--", ms=4, color="C1",
            label="Adam path")
    ax.axvline(math.degrees(a_opt), color="C1", lw=0.8)
    ax.set_xlabel(r"cant $\alpha_0$ [deg]")
    ax.set_ylabel("worst rotor loss: soft max of RMS error [cm]")
    ax.grid(alpha=0.3)
    ax.legend()
    ax = axes[1]
    x = np.arange(1, 7)
    ax.bar(x - 0.2, [100 * r["max_position_error_m"] for r in rows_start], 0.4, label=f"start {math.degrees(START):.0f} deg")
    ax.bar(x + 0.2, [100 * r["max_position_error_m"] for r in rows_opt], 0.4,
           label=f"optimised {math.degrees(a_opt):.1f} deg")
    ax.set_xlabel("lost rotor")
    ax.set_ylabel(r"max $|e_p|$ after the loss [cm]")
    ax.legend()
    ax.grid(alpha=0.3)
    if beta_map:
        ax = axes[2]
        im = ax.contourf(beta_map["alpha0_deg"], beta_map["beta0_deg"], 100 * np.minimum(M, 0.1), 20)
        fig.colorbar(im, ax=ax, label="J [cm] (clipped at 10)")
        ax.plot(beta_map["best_alpha0_deg"], beta_map["best_beta0_deg"], "r*")
        ax.set_xlabel(r"$\alpha_0$ [deg]")
        ax.set_ylabel(r"$\beta_0$ [deg]")
    fig.suptitle(r"paper hexarotor (clipped speeds, 30 ms motors): worst single rotor loss in hover")
    fig.tight_layout()
    fig.savefig(out / "fault_tolerant_tilt.png", dpi=120)
    plt.close(fig)

    checks = Checks("fault_tolerant_tilt")
    checks.add("optimum within one grid cell of the grid's best (|delta alpha_0| / cell)",
               abs(a_opt - a_grid) / cell, "<=", 1.0)
    checks.add("objective at the optimum over the grid's best", J_opt / J_grid, "<=", 1.0 + 1e-3)
    checks.add("objective falls from the start (optimised / start)", J_opt / J_start, "<", 1.0)
    checks.add("dJ/dalpha_0 against central differences (relative)", grad_rel, "<=", 1e-2)
    checks.add("rotor losses of the optimised design that are lost", sum(r["outcome"] == "lost" for r in rows_opt),
               "==", 0)
    return checks.finish(out / "fault_tolerant_tilt.json", record)


if __name__ == "__main__":
    sys.exit(main())
