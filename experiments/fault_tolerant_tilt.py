"""Fault-tolerant tilt: the cant of the star hexarotor chosen for its worst single rotor loss.

The Table II hexarotor (``beta_0 = 10 deg``) hovers at 1 m; at 1 s it loses one rotor, the flight
computer knows of it 50 ms later and reallocates: it flies the tilted full-pose hover of the five
remaining rotors when one exists within ``MAX_AXIS_TILT`` and ``AXIS_MARGIN`` (:mod:`jaxrotor.tilted`), else
it gives up the yaw torque.
``[objective.worst_rotor_loss]`` flies the six losses as one vmapped program and takes the soft
maximum over the rotors (1 mm) of the RMS position error plus 0.1 m/rad times the roll/pitch RMS
error plus 1 cm per rad/s^2 of the yaw rate's trend (``spin_weight``: a cant leaves the five remaining
rotors a yaw torque they cannot cancel, and with yaw released the vehicle spins up without bound, which
the outcome rule calls lost), from the fault to 2 s after it. Two flights of the same vehicle:

* *exact* (``configs/optimize_fault_tolerance.toml``): Table III gains, unbounded pseudo-inverse,
  ideal motors, the paper's analytic setting until the loss is known; then the flight computer's
  tilted or yaw-released allocation (within the input bounds). The script optimises
  the cant ``alpha_0`` with optax Adam from a poor start (40 deg) within ``[0, 0.80]`` rad, evaluates
  the same objective on a grid over that range, checks the optimum lies within one grid cell of the
  grid's best, and checks ``d J / d alpha_0`` against central differences;
* *exact*, cant and dihedral together: Adam (step 0.05 rad decaying to 0.0025 rad on a cosine over 30
  iterations) over ``(alpha_0, beta_0)`` from (40 deg, 10 deg) within
  ``[0, 0.80] x [0, 0.42]`` rad, checked against a 12 x 13 grid over that box (within one grid cell in each
  angle), ``d J / d alpha_0`` and ``d J / d beta_0`` at the start against central differences;
* *realistic* (``configs/paper_realistic.toml`` in hover): speeds clipped to [0, 700] rad/s, 30 ms
  motors, propeller inertia, lowered yaw gains. The same objective on the same grid, its gradient
  against central differences (reported: the rotor opposite the lost one idles on its bound, so the
  error is smooth only piecewise), and each single-rotor loss of the start, the paper's 25 deg, the
  optimised designs (``alpha_0`` alone, and with ``beta_0``) and the realistic grid's best flown for 4 s after the
  fault, judged by
  :func:`jaxrotor.verdict.fault_outcome`: every failure of the optimised design must fly
  (``full_pose`` or ``yaw_released``, never ``lost``).

Writes ``fault_tolerant_tilt.json`` and ``fault_tolerant_tilt.png`` into ``--out``; exit 1 if a
check fails.

Run::

    python experiments/fault_tolerant_tilt.py           # 34-point and 12 x 13 grids, 20 and 30 iterations
    python experiments/fault_tolerant_tilt.py --quick   # alpha_0 only: a 7-point grid, 20 iterations,
                                                        # the optimum's losses
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
from jaxrotor.io.config import loads  # noqa: E402
from jaxrotor.io.optimize_config import load  # noqa: E402
from jaxrotor.optimize import Box, Design, DesignProblem, MinimizeOptions, Parameters  # noqa: E402
from jaxrotor.optimize import objectives as ob  # noqa: E402
from jaxrotor.optimize.step import DEFAULT_STEPPER  # noqa: E402
from jaxrotor.verdict import fault_outcome  # noqa: E402

from _checks import Checks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "optimize_fault_tolerance.toml"
START = math.radians(40.0)  # rad, the poor starting cant
PAPER = math.radians(25.0)  # rad, Table II


def realistic_design(dt: float = 0.005) -> Design:
    """The paper hexarotor as ``configs/paper_realistic.toml`` flies it, hovering at 1 m (fixed step ``dt`` [s])."""
    text = (ROOT / "configs" / "paper_realistic.toml").read_text()
    text = text[:text.index("[reference]")] + (f"[reference]\nkind = \"hover\"\nposition = [0.0, 0.0, 1.0]\n"
                                               f"duration = 3.0\n\n[solver]\nadaptive = false\ndt = {dt}\n")
    cfg = loads(text, "paper_realistic_hover.toml")
    return Design(cfg.platform, cfg.controller, cfg.flight)


def with_tilt(design, alpha0, beta0=None):
    """``design`` with cant ``alpha0`` [rad] (and dihedral ``beta0`` [rad] unless None)."""
    design = eqx.tree_at(lambda x: x.platform.alpha, design, jnp.asarray(alpha0, dtype=jnp.float64))
    if beta0 is None:
        return design
    return eqx.tree_at(lambda x: x.platform.beta, design, jnp.asarray(beta0, dtype=jnp.float64))


def grid_2d(term, design, alphas, betas, block: int = 16) -> np.ndarray:
    """The objective ``term`` of ``design`` on the grid ``alphas x betas`` [rad], shape ``(len(alphas), len(betas))``.

    The grid points are flown as one vmapped program over blocks of ``block`` designs (each six flights).
    """
    J = jax.jit(jax.vmap(lambda a, b: term.measure(with_tilt(design, a, b))))
    A, B = (x.ravel() for x in np.meshgrid(alphas, betas, indexing="ij"))
    pad = (-len(A)) % block
    A, B = np.concatenate([A, np.full(pad, A[-1])]), np.concatenate([B, np.full(pad, B[-1])])
    vals = np.concatenate([np.asarray(J(jnp.asarray(A[i:i + block]), jnp.asarray(B[i:i + block])))
                           for i in range(0, len(A), block)])
    return vals[:len(vals) - pad].reshape(len(alphas), len(betas))


def outcomes(term: ob.WorstRotorLoss, design, settle: float = 4.0) -> list[dict]:
    """Fly each single-rotor loss of ``design`` for ``settle`` s after the fault; its outcome and errors."""
    long = ob.WorstRotorLoss(time=term.time, detection_delay=term.detection_delay, duration=settle,
                             attitude_weight=term.attitude_weight, spin_weight=term.spin_weight,
                             release_yaw=term.release_yaw)
    fly_one = jax.jit(lambda d, r: jr.fly(d.platform, d.controller, long.fault_flight(d, r)))
    rows = []
    for j in range(design.platform.n_rotors):
        tr = fly_one(design, jnp.asarray(j))
        late = np.asarray(tr.t) >= float(np.asarray(tr.t)[-1]) - 1.0
        e_p = np.linalg.norm(np.asarray(tr.p_ref - tr.p), axis=1)
        e_R = np.abs(np.asarray(jr.metrics.reference_orientation_error(tr)))
        rows.append({"rotor": j + 1, "outcome": fault_outcome(tr, long.fault_flight(design, j)),
                     "max_position_error_m": float(e_p.max()), "last_second_position_error_m": float(e_p[late].max()),
                     "max_roll_pitch_error_rad": float(e_R[:, :2].max()), "diverged": bool(tr.diverged)})
    return rows


def gradient_check(J, dJ, a: float) -> dict:
    """``dJ(a)`` against central differences with steps 1e-5 and 1e-3 rad (``J``, ``dJ`` of one angle; ``dJ`` may
    be the derivative's value at ``a`` instead of a function)."""
    g = float(dJ(jnp.asarray(a))) if callable(dJ) else float(dJ)
    fd = {h: (float(J(a + h)) - float(J(a - h))) / (2 * h) for h in (1e-5, 1e-3)}
    return {"alpha0_deg": math.degrees(a), "grad_m_per_rad": g, "fd_1e-5": fd[1e-5], "fd_1e-3": fd[1e-3],
            "relative_error_1e-5": abs(g - fd[1e-5]) / abs(fd[1e-5])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="alpha_0 only: a 7-point grid, the file's iterations; of the clipped flight only the "
                         "optimum's losses")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/fault_tolerant_tilt[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or os.environ.get("JAXROTOR_OUT") or
               ("jaxrotor-out/fault_tolerant_tilt" + ("_quick" if args.quick else "")))
    out.mkdir(parents=True, exist_ok=True)

    conf = load(CONFIG)
    term = conf.problem.objective.term  # the WorstRotorLoss inside Weighted(term, 1.0)
    exact = conf.problem.design
    real = realistic_design()
    lower, upper = 0.0, 0.80

    J = jax.jit(lambda a: term.measure(with_tilt(exact, a)))
    Jr = jax.jit(lambda a: term.measure(with_tilt(real, a)))
    dJr = jax.jit(jax.grad(lambda a: term.measure(with_tilt(real, a))))

    iters = conf.options.iterations
    k = 7 if args.quick else 34
    grid = np.linspace(lower, upper, k)
    cell = float(grid[1] - grid[0])
    # ---- alpha_0 alone (exact allocation): gradient at the start, Adam, grid
    problem = eqx.tree_at(lambda p: p.design, conf.problem, with_tilt(exact, START))
    adam = optax.adam(conf.optimizer.learning_rate)
    t0 = time.perf_counter()
    # the derivative at the start from the optimiser's own compiled step (its loss is J: the box transform is the
    # identity), which minimize then reuses: the gradient is compiled once, not once more for the check
    theta0 = problem.init()
    _, _, loss0, _, g0 = DEFAULT_STEPPER.step(problem, adam, theta0, adam.init(theta0), jnp.asarray(1.0))
    if not math.isclose(float(loss0), float(J(START)), rel_tol=1e-12):
        raise RuntimeError(f"the optimiser's loss at the start ({float(loss0)!r}) is not J ({float(J(START))!r})")
    grad_start = gradient_check(J, jax.tree.leaves(g0)[0], START)
    t_grad = time.perf_counter() - t0
    print(f"exact: dJ/dalpha_0 at 40 deg {grad_start['grad_m_per_rad']:.10g} m/rad, central difference "
          f"{grad_start['fd_1e-5']:.10g} (relative {grad_start['relative_error_1e-5']:.2e})")
    t0 = time.perf_counter()
    res = problem.minimize(adam, MinimizeOptions(iterations=iters), progress=False)
    t_opt = time.perf_counter() - t0
    a_opt = float(res.design.platform.alpha)
    J_opt, J_start = float(J(a_opt)), float(J(START))
    path = [float(r[res.names[0]]) for r in res.history]
    losses = [float(r["loss"]) for r in res.history]
    print(f"exact: Adam from 40 deg to alpha_0 = {math.degrees(a_opt):.3f} deg, J {100 * J_start:.3f} -> "
          f"{100 * J_opt:.3f} cm, {res.iterations} iterations in {t_opt:.1f} s")
    t0 = time.perf_counter()
    Jg = np.array([float(J(float(a))) for a in grid])  # Python floats, as above: one compiled J
    t_grid = time.perf_counter() - t0
    i_best = int(np.nanargmin(Jg))
    a_grid, J_grid = float(grid[i_best]), float(Jg[i_best])
    print(f"exact: grid of {k} (cell {math.degrees(cell):.2f} deg) best alpha_0 = {math.degrees(a_grid):.2f} deg, "
          f"J = {100 * J_grid:.3f} cm ({t_grid:.1f} s)")
    v_opt = np.asarray(jax.jit(term.values)(with_tilt(exact, a_opt))[0])

    # ---- alpha_0 and beta_0 together (exact allocation; the full run only): Adam from (40 deg, 10 deg), a 2-D grid
    b_lo, b_hi = 0.0, 0.42
    res2 = a2 = b2 = J2_opt = J2_start = grad2 = Jg2 = a2_grid = b2_grid = J2_grid = cells2 = None
    path2, losses2, ga, gb, t_opt2, t_grid2 = np.zeros((0, 2)), [], None, None, 0.0, 0.0
    if not args.quick:
        b_start = float(exact.platform.beta)
        start2 = with_tilt(exact, START, b_start)
        problem2 = DesignProblem(start2, Parameters.select(start2, {"platform.alpha": Box(lower, upper),
                                                                    "platform.beta": Box(b_lo, b_hi)}),
                                 conf.problem.objective, conf.problem.divergence_penalty)
        # two angles trade along a shallow valley: constant steps of 0.05 rad circle it, so the step decays (cosine)
        iters2 = 30
        adam2 = optax.adam(optax.cosine_decay_schedule(conf.optimizer.learning_rate, iters2, alpha=0.05))
        t0 = time.perf_counter()
        res2 = problem2.minimize(adam2, MinimizeOptions(iterations=iters2), progress=False)
        t_opt2 = time.perf_counter() - t0
        a2, b2 = float(res2.design.platform.alpha), float(res2.design.platform.beta)
        J2 = jax.jit(lambda a, b: term.measure(with_tilt(exact, a, b)))
        dJ2 = jax.jit(jax.grad(lambda a, b: term.measure(with_tilt(exact, a, b)), argnums=(0, 1)))
        J2_opt, J2_start = float(J2(a2, b2)), float(J2(START, b_start))
        g_a, g_b = (float(g) for g in dJ2(START, b_start))
        fd_a = (float(J2(START + 1e-5, b_start)) - float(J2(START - 1e-5, b_start))) / 2e-5
        fd_b = (float(J2(START, b_start + 1e-5)) - float(J2(START, b_start - 1e-5))) / 2e-5
        grad2 = {"grad_m_per_rad": [g_a, g_b], "fd_1e-5": [fd_a, fd_b],
                 "relative_error_1e-5": [abs(g_a - fd_a) / abs(fd_a), abs(g_b - fd_b) / abs(fd_b)]}
        path2 = np.degrees([[float(r[n]) for n in res2.names] for r in res2.history])
        losses2 = [float(r["loss"]) for r in res2.history]
        print(f"exact, alpha_0 and beta_0: Adam from (40, {math.degrees(b_start):.0f}) deg to ({math.degrees(a2):.3f}, "
              f"{math.degrees(b2):.3f}) deg, J {100 * J2_start:.3f} -> {100 * J2_opt:.3f} cm in {t_opt2:.1f} s; "
              f"gradient at the start ({g_a:.6g}, {g_b:.6g}) m/rad, central differences ({fd_a:.6g}, {fd_b:.6g})")
        ka, kb = (4, 3) if args.quick else (12, 13)
        ga, gb = np.linspace(lower, upper, ka), np.linspace(b_lo, b_hi, kb)
        t0 = time.perf_counter()
        Jg2 = grid_2d(term, exact, ga, gb)
        t_grid2 = time.perf_counter() - t0
        ia, ib = np.unravel_index(int(np.nanargmin(Jg2)), Jg2.shape)
        a2_grid, b2_grid, J2_grid = float(ga[ia]), float(gb[ib]), float(Jg2[ia, ib])
        cells2 = (float(ga[1] - ga[0]), float(gb[1] - gb[0]))
        print(f"exact, alpha_0 and beta_0: {ka} x {kb} grid best ({math.degrees(a2_grid):.2f}, "
              f"{math.degrees(b2_grid):.2f}) deg, J = {100 * J2_grid:.3f} cm ({t_grid2:.1f} s)")

    # ---- realistic flight: the same objective on the same grid, its gradient, the flown losses
    t0 = time.perf_counter()
    if args.quick:  # the realistic flight: only the optimised design's losses
        Jrg, ir, a_real, grad_real = np.full(k, np.nan), 0, None, None
    else:
        Jrg = np.array([float(Jr(float(a))) for a in grid])
        ir = int(np.nanargmin(Jrg))
        a_real = float(grid[ir])
        print(f"realistic: grid best alpha_0 = {math.degrees(a_real):.2f} deg, J = {100 * Jrg[ir]:.3f} cm; "
              f"at 25 deg {100 * float(Jr(PAPER)):.3f} cm")
        grad_real = gradient_check(Jr, dJr, a_real)
        print(f"realistic: dJ/dalpha_0 at {math.degrees(a_real):.2f} deg {grad_real['grad_m_per_rad']:.4g} m/rad, "
              f"central differences {grad_real['fd_1e-5']:.4g} (h = 1e-5), {grad_real['fd_1e-3']:.4g} (h = 1e-3)")
    t_grid_real = time.perf_counter() - t0
    designs = ({"optimised": (a_opt, None)} if args.quick else
               {"start_40deg": (START, None), "paper_25deg": (PAPER, None), "optimised": (a_opt, None),
                "realistic_grid_best": (a_real, None), "optimised_alpha_beta": (a2, b2)})
    flown = {}
    for label, (a, b) in designs.items():
        flown[label] = outcomes(term, with_tilt(real, a, b))
        beta = math.degrees(b if b is not None else float(real.platform.beta))
        print(f"realistic flight, {label} (alpha_0 = {math.degrees(a):.2f} deg, beta_0 = {beta:.2f} deg), "
              "each rotor lost at 1 s, 4 s flown:")
        for r in flown[label]:
            print(f"  rotor {r['rotor']}: {r['outcome']:>12}  max |e_p| {100 * r['max_position_error_m']:.2f} cm, "
                  f"last second {100 * r['last_second_position_error_m']:.2f} cm, roll/pitch "
                  f"{r['max_roll_pitch_error_rad']:.3f} rad")

    deg = (lambda x: None if x is None else math.degrees(x))
    record = {
        "quick": args.quick, "config": CONFIG.name, "beta0_deg": math.degrees(float(exact.platform.beta)),
        "bounds_rad": [lower, upper], "start_alpha0_deg": math.degrees(START), "start_J_m": J_start,
        "optimised_alpha0_deg": deg(a_opt), "optimised_J_m": J_opt, "optimised_per_rotor_m": v_opt,
        "iterations": res and res.iterations, "stop_reason": res and res.stop_reason,
        "alpha0_path_deg": np.degrees(path),
        "loss_history": losses, "grid_alpha0_deg": np.degrees(grid), "grid_J_m": Jg,
        "grid_cell_deg": math.degrees(cell), "grid_best_alpha0_deg": deg(a_grid), "grid_best_J_m": J_grid,
        "gradient_start": grad_start, "realistic_grid_J_m": Jrg, "realistic_grid_best_alpha0_deg": deg(a_real),
        "realistic_grid_best_J_m": None if a_real is None else float(Jrg[ir]), "realistic_gradient": grad_real, "outcomes_realistic": flown,
        "alpha_beta": None if args.quick else {"start_deg": [math.degrees(START), math.degrees(b_start)], "start_J_m": J2_start,
                       "bounds_rad": [[lower, upper], [b_lo, b_hi]], "iterations": res2.iterations,
                       "optimised_deg": [math.degrees(a2), math.degrees(b2)], "optimised_J_m": J2_opt,
                       "path_deg": path2, "loss_history": losses2, "grid_alpha0_deg": np.degrees(ga),
                       "grid_beta0_deg": np.degrees(gb), "grid_J_m": Jg2, "grid_cell_deg": np.degrees(cells2),
                       "grid_best_deg": [math.degrees(a2_grid), math.degrees(b2_grid)], "grid_best_J_m": J2_grid,
                       "optimised_per_rotor_m": None if args.quick else
                       np.asarray(jax.jit(term.values)(with_tilt(exact, a2, b2))[0]),
                       "gradient_start": grad2},
        "wall_s": {"optimise": t_opt, "grid": t_grid, "realistic_grid": t_grid_real, "optimise_alpha_beta": t_opt2,
                   "grid_alpha_beta": t_grid2,
                   "gradient_check_with_compile": t_grad},
    }

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4))
    ax = axes[0]
    ax.plot(np.degrees(grid), 100 * Jg, "o-", ms=3, label="exact allocation: grid")
    ax.plot(np.degrees(path), 100 * np.asarray(losses), "x--", ms=4, color="C1", label="exact allocation: Adam")
    ax.plot(np.degrees(grid), 100 * Jrg, "s-", ms=3, color="C2", label="clipped, 30 ms motors: grid")
    ax.axvline(math.degrees(PAPER), color="grey", lw=0.8)
    if np.isfinite(Jg).any() or np.isfinite(Jrg).any():
        ax.set_yscale("log")
    else:
        ax.text(0.5, 0.5, "alpha_0 alone: the full run only", transform=ax.transAxes, ha="center")
    ax.set_xlabel(r"cant $\alpha_0$ [deg] ($\beta_0$ = 10 deg)")
    ax.set_ylabel("worst rotor loss: soft max of RMS error [cm]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax = axes[1]
    x = np.arange(1, 7)
    w = 0.8 / len(flown)
    for i, (label, rows) in enumerate(flown.items()):
        a, b = designs[label]
        tag = f"{math.degrees(a):.1f} deg" + ("" if b is None else f", {math.degrees(b):.1f} deg")
        ax.bar(x + w * (i - (len(flown) - 1) / 2), [100 * r["last_second_position_error_m"] for r in rows], w,
               label=f"{label} ({tag})")
    ax.set_yscale("log")
    ax.set_xlabel("lost rotor")
    ax.set_ylabel(r"max $|e_p|$ in the last second [cm]")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax = axes[2]
    if args.quick:
        ax.text(0.5, 0.5, "alpha_0 and beta_0 together: the full run only", transform=ax.transAxes, ha="center")
    else:
        im = ax.pcolormesh(np.degrees(gb), np.degrees(ga), 100 * Jg2, shading="nearest", cmap="viridis")
        fig.colorbar(im, ax=ax, label="worst rotor loss [cm]")
        ax.plot(path2[:, 1], path2[:, 0], "w.-", ms=3, lw=0.8, label="Adam")
        ax.plot([math.degrees(b2_grid)], [math.degrees(a2_grid)], "r+", ms=12, label="grid best")
        ax.set_xlabel(r"dihedral $\beta_0$ [deg]")
        ax.set_ylabel(r"cant $\alpha_0$ [deg]")
        ax.legend(fontsize=8)
    fig.suptitle("paper hexarotor: worst single rotor loss in hover")
    fig.tight_layout()
    fig.savefig(out / "fault_tolerant_tilt.png", dpi=120)
    plt.close(fig)

    checks = Checks("fault_tolerant_tilt")
    checks.add("optimum within one grid cell of the grid's best (|delta alpha_0| / cell)",
               abs(a_opt - a_grid) / cell, "<=", 1.0)
    checks.add("objective at the optimum over the grid's best", J_opt / J_grid, "<=", 1.0 + 1e-3)
    checks.add("objective falls from the start (optimised / start)", J_opt / J_start, "<", 1.0)
    # the yaw-released allocation keeps a rotor at its lower bound (the bounded active set), so the objective is
    # smooth only piecewise: central differences with h = 1e-5 agree to about 1e-3, not to round-off
    checks.add("dJ/dalpha_0 against central differences (relative)", grad_start["relative_error_1e-5"], "<=", 1e-2)
    checks.add("realistic rotor losses of the optimised design that are lost",
               sum(r["outcome"] == "lost" for r in flown["optimised"]), "==", 0)
    if args.quick:
        return checks.finish(out / "fault_tolerant_tilt.json", record)
    checks.add("(alpha_0, beta_0): optimum within one grid cell in alpha_0 (|delta| / cell)",
               abs(a2 - a2_grid) / cells2[0], "<=", 1.0)
    checks.add("(alpha_0, beta_0): optimum within one grid cell in beta_0 (|delta| / cell)",
               abs(b2 - b2_grid) / cells2[1], "<=", 1.0)
    checks.add("(alpha_0, beta_0): objective at the optimum over the grid's best", J2_opt / J2_grid, "<=", 1.0 + 1e-3)
    checks.add("(alpha_0, beta_0): objective falls from the start (optimised / start)", J2_opt / J2_start, "<", 1.0)
    for name, err in zip(("alpha_0", "beta_0"), grad2["relative_error_1e-5"]):
        checks.add(f"(alpha_0, beta_0): dJ/d{name} at the start against central differences (relative)",
                   err, "<=", 1e-2)
    checks.add("(alpha_0, beta_0): realistic rotor losses of the optimised design that are lost",
               sum(r["outcome"] == "lost" for r in flown["optimised_alpha_beta"]), "==", 0)
    return checks.finish(out / "fault_tolerant_tilt.json", record)


if __name__ == "__main__":
    sys.exit(main())
