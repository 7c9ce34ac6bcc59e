"""Benchmark: the cost of a gradient of a whole 45 s flight, and its accuracy.

On the RotorSuite use case (paper Sec. IV: Table II hexarotor, Table III gains,
takeoff + figure-eight + landing, 45 s), integrated with fixed-step Tsit5
(dt = 0.01 s, jump times bracketed), float64, the scalar

    L = RMSE(e_p) [m] + RMSE(e_R) [rad] + E

(E the power proxy over the flat-hover power, so the tilt angles matter even with
exact allocation) is differentiated with respect to 20 parameters at once: the 18
controller gains and alpha_0, beta_0. Two set-ups: ``ideal`` (exact pseudo-inverse,
ideal motors: the paper's analytic setup) and ``realistic`` (inputs clipped to
[0, 700^2], 30 ms motor lag).

Printed for each: compile time of the forward flight and of the reverse-mode
gradient, steady-state run times (minimum over ``--repeats``), and the ratio
gradient time / forward time (target: at most 8 on CPU). Then a check of the full
45 s reverse-mode gradient against central finite differences (``h = 1e-6``
relative) for all 20 parameters in both set-ups (the realistic flight touches the
rotor bounds in 0.6 % of the samples, where it is only piecewise smooth; the
agreement there is correspondingly a little looser).

Checks (one ``check ...: PASS/FAIL`` line each; the script exits 1 if any fails):
for each set-up, gradient time / forward time ``<= TARGET`` (8; ``QUICK_TARGET`` = 12 with
``--quick``: on a 3 s flight of 300 steps the forward run takes 2-3 ms and the fixed
costs of the objective and of reverse mode weigh more), and, unless
``--no-fd``, the largest relative error of reverse mode against central differences
(components above 1e-6 of the largest) ``<= FD_TOL`` (1e-5 ideal, 1e-4 realistic;
measured on 45 s: 2.4e-6 and 6.2e-6). Writes ``benchmark_gradients.json`` into OUT.

The fixed-step flight runs on the ``lax.scan`` loop of
:func:`jaxrotor.integrate.integrate_fixed_step` (stages in a scan; in reverse mode each
save interval, here one step, is recomputed from its stored state: ``checkpoint=AutoCheckpoint()``); ``--loop diffeqsolve``
times the same flight through ``diffrax.diffeqsolve`` (its recursive-checkpoint adjoint), ``--no-checkpoint``
stores every stage's intermediates instead of recomputing (``NoCheckpoint()``), ``--unroll`` writes the
stages out (``Integrator(unroll=True)``). ``--compare`` instead times every entry of
:data:`VARIANTS` (what reverse mode stores: each step recomputed, every stage stored,
each save interval recomputed, a ``jax.checkpoint`` policy; stages in a scan or
unrolled) in one process, interleaved, checks that their gradients agree (``COMPARE_TOL``) and
writes ``benchmark_gradients_compare.json``.

Run::

    python experiments/benchmark_gradients.py              # 45 s, 5 repeats, FD check
    python experiments/benchmark_gradients.py --quick      # 3 s horizon, 5 repeats, FD on 4 parameters (< 60 s)
    python experiments/benchmark_gradients.py --no-fd --loop diffeqsolve --setups ideal
    python experiments/benchmark_gradients.py --compare    # every storage variant, 45 s, in one process
"""

from __future__ import annotations

import argparse
import os
import platform as _platform
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx
import numpy as np
from _checks import Checks
from jax.flatten_util import ravel_pytree

import jaxrotor as jr
from jaxrotor import optimize as op
from jaxrotor.optimize import objectives as ob
from jaxrotor.reference import paper_maneuver

TARGET = 8.0  # gradient time / forward time, at most (45 s flight)
QUICK_TARGET = 12.0  # the same on the 3 s flight of --quick
FD_TOL = {"ideal": 1e-5, "realistic": 1e-4}  # worst relative error against central differences
COMPARE_TOL = 1e-10  # --compare: gradients of the storage variants agree (measured <= 1.1e-14)


def make_problem(kind: str, t1: float | None, **integrator) -> op.DesignProblem:
    realistic = kind == "realistic"
    flight = jr.Flight(paper_maneuver(), allocator=jr.Clip() if realistic else jr.PseudoInverse(),
                       actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)) if realistic else jr.Actuators(),
                       integrator=jr.Integrator(adaptive=False, dt=0.01, **integrator), save_dt=0.01, t1=t1)
    design = op.Design(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3(), flight)
    params = op.Parameters.select(design, {"controller": None, "platform.alpha": None, "platform.beta": None})
    objective = ob.Tracking(position=1.0, orientation=1.0) + ob.Energy()
    return op.DesignProblem(design, params, objective)


def _time(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t0)
    return best


def bench(problem, repeats):
    theta = problem.init()
    fwd = eqx.filter_jit(lambda p, th: p.loss(th)[0])
    grad = eqx.filter_jit(eqx.filter_value_and_grad(lambda th, p: p.loss(th)[0]))
    t0, p0 = time.perf_counter(), time.process_time()
    jax.block_until_ready(fwd(problem, theta))
    c_fwd, cpu_fwd = time.perf_counter() - t0, time.process_time() - p0
    t_fwd = _time(lambda: fwd(problem, theta), repeats)
    t0, p0 = time.perf_counter(), time.process_time()
    jax.block_until_ready(grad(theta, problem))
    c_grad, cpu_grad = time.perf_counter() - t0, time.process_time() - p0
    t_grad = _time(lambda: grad(theta, problem), repeats)
    value, g = grad(theta, problem)
    # compile CPU time: the first call's process time (compilation + one run); on a loaded machine the wall time
    # of compilation is mostly waiting for a core
    return {"compile_forward_s": c_fwd - t_fwd, "compile_gradient_s": c_grad - t_grad,
            "compile_forward_cpu_s": cpu_fwd, "compile_gradient_cpu_s": cpu_grad, "forward_s": t_fwd,
            "gradient_s": t_grad, "ratio": t_grad / t_fwd, "loss": float(value),
            "grad": np.asarray(ravel_pytree(g)[0]).tolist()}, fwd


#: integrator settings compared by ``--compare`` (the fixed-step ``lax.scan`` loop): what reverse mode stores
#: (the ``checkpoint`` strategy) and whether the stages are written out (``unroll``)
VARIANTS = {
    "default (auto: interval here)": {"unroll": False},
    "default, 2 stages per scan iteration": {"unroll": 2},
    "default, 3 stages per scan iteration": {"unroll": 3},
    "interval recomputed, field not": {"checkpoint": jr.IntervalCheckpoint(recompute_field=False), "unroll": False},
    "step recomputed, stage scan": {"checkpoint": jr.StepCheckpoint(), "unroll": False},
    "step recomputed, field not": {"checkpoint": jr.StepCheckpoint(recompute_field=False), "unroll": False},
    "stages stored, stage scan": {"checkpoint": jr.NoCheckpoint(), "unroll": False},
    "stage inputs stored, field recomputed": {"checkpoint": jr.StageCheckpoint(), "unroll": False},
    "stage inputs stored, 3 stages per iteration": {"checkpoint": jr.StageCheckpoint(), "unroll": 3},
    "step recomputed, dots saved": {"checkpoint": jr.StepCheckpoint(policy="dots_with_no_batch_dims_saveable"),
                                    "unroll": False},
    "step recomputed, unrolled": {"checkpoint": jr.StepCheckpoint(), "unroll": True},
    "stages stored, unrolled": {"checkpoint": jr.NoCheckpoint(), "unroll": True},
    "stage inputs stored, unrolled": {"checkpoint": jr.StageCheckpoint(), "unroll": True},
}


def compare(kind, t1, repeats, names):
    """Every variant of :data:`VARIANTS` on one set-up, in one process: compile each (CPU time of the first
    call), then time forward and gradient in interleaved rounds (minimum over the rounds)."""
    fwd = eqx.filter_jit(lambda p, th: p.loss(th)[0])
    grad = eqx.filter_jit(eqx.filter_value_and_grad(lambda th, p: p.loss(th)[0]))
    runs = {}
    for name in names:
        problem = make_problem(kind, t1, **VARIANTS[name])
        theta = problem.init()
        p0 = time.process_time()
        jax.block_until_ready(fwd(problem, theta))
        c_fwd = time.process_time() - p0
        p0 = time.process_time()
        value, g = grad(theta, problem)
        jax.block_until_ready(g)
        c_grad = time.process_time() - p0
        runs[name] = {"problem": problem, "theta": theta, "compile_forward_cpu_s": c_fwd,
                      "compile_gradient_cpu_s": c_grad, "loss": float(value), "grad": np.asarray(ravel_pytree(g)[0]),
                      "forward_s": float("inf"), "gradient_s": float("inf")}
    for _ in range(repeats):  # interleaved: a change of load hits every variant alike
        for r in runs.values():
            r["forward_s"] = min(r["forward_s"], _time(lambda r=r: fwd(r["problem"], r["theta"]), 1))
            r["gradient_s"] = min(r["gradient_s"], _time(lambda r=r: grad(r["theta"], r["problem"]), 1))
    base = runs[names[0]]
    out = {}
    for name, r in runs.items():
        settings = {k: v if isinstance(v, bool) else repr(v) for k, v in VARIANTS[name].items()}  # strategies by repr
        out[name] = {"settings": settings, "compile_forward_cpu_s": r["compile_forward_cpu_s"],
                     "compile_gradient_cpu_s": r["compile_gradient_cpu_s"], "forward_s": r["forward_s"],
                     "gradient_s": r["gradient_s"], "ratio": r["gradient_s"] / r["forward_s"],
                     "ratio_to_default_forward": r["gradient_s"] / base["forward_s"],
                     "loss_difference": abs(r["loss"] - base["loss"]),
                     "grad_relative_difference": float(np.max(np.abs(r["grad"] - base["grad"]))
                                                       / np.max(np.abs(base["grad"])))}
    return out


def fd_check(problem, fwd, grad_vec, columns):
    theta = problem.init()
    vec0, unravel = ravel_pytree(theta)
    names = problem.parameters.names(problem.design)
    rows = []
    for name in columns:
        i = names.index(name)
        h = 1e-6 * max(1.0, abs(float(vec0[i])))
        fp = float(fwd(problem, unravel(vec0.at[i].add(h))))
        fm = float(fwd(problem, unravel(vec0.at[i].add(-h))))
        fd = (fp - fm) / (2 * h)
        rows.append((name, grad_vec[i], fd))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 s horizon, 5 repeats, FD on 4 parameters (smoke test)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-fd", action="store_true", help="skip the finite-difference check")
    ap.add_argument("--loop", choices=("scan", "diffeqsolve"), default="scan",
                    help="fixed-step loop: the solver's step in lax.scan (default) or diffrax.diffeqsolve")
    ap.add_argument("--no-checkpoint", action="store_true",
                    help="lax.scan loop: store every stage's intermediates instead of recomputing each step")
    ap.add_argument("--unroll", action="store_true",
                    help="lax.scan loop: write the Runge-Kutta stages out instead of looping over them")
    ap.add_argument("--compare", action="store_true",
                    help="time every reverse-mode storage variant (VARIANTS) in this process, then exit")
    ap.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=None, metavar="NAME",
                    help="with --compare: only these variants (the first is the reference); default all")
    ap.add_argument("--setups", nargs="+", choices=("ideal", "realistic"), default=["ideal", "realistic"])
    ap.add_argument("--out", default=None,
                    help="write benchmark_gradients.json here (default jaxrotor-out/benchmark_gradients[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or ("jaxrotor-out/benchmark_gradients" + ("_quick" if args.quick else "")))
    t1 = 3.0 if args.quick else None
    # a few repeats even in --quick: the ratio is a checked minimum, one timing on a busy machine is noisy
    repeats = max(5, args.repeats) if args.quick else args.repeats
    print(f"jax {jax.__version__} on {jax.default_backend()} ({_platform.processor() or _platform.machine()}, "
          f"{os.cpu_count()} CPU cores), float64")
    print(f"flight: paper use case, {'3' if args.quick else '45'} s, fixed-step Tsit5 dt = 0.01 s; "
          "20 parameters (18 gains + alpha_0 + beta_0)")
    if args.compare:
        names = args.variants or list(VARIANTS)
        record = {"quick": args.quick, "horizon_s": t1 if t1 is not None else 45.0, "repeats": repeats}
        print(f"{'set-up':<10} {'variant':<30} {'compile fwd':>11} {'grad (CPU)':>10} {'forward':>9} "
              f"{'gradient':>9} {'ratio':>6} {'/ default fwd':>13} {'grad diff':>9}")
        for kind in args.setups:
            rows = compare(kind, t1, repeats, names)
            record[kind] = rows
            for name, r in rows.items():
                print(f"{kind:<10} {name:<30} {r['compile_forward_cpu_s']:>10.1f}s {r['compile_gradient_cpu_s']:>9.1f}s "
                      f"{r['forward_s'] * 1e3:>7.1f}ms {r['gradient_s'] * 1e3:>7.1f}ms {r['ratio']:>5.2f}x "
                      f"{r['ratio_to_default_forward']:>12.2f}x {r['grad_relative_difference']:>9.1e}")
        # storage changes the cost, never the value: every variant's gradient equals the first's
        checks = Checks("benchmark_gradients --compare")
        for kind in args.setups:
            worst = max(r["grad_relative_difference"] for r in record[kind].values())
            checks.add(f"{kind}: largest gradient difference between variants (relative)", worst, "<=",
                       COMPARE_TOL, f"{len(record[kind])} variants")
        code = checks.finish(out / "benchmark_gradients_compare.json", record)
        print(f"outputs written to {out}")
        return code
    results, problems = {}, {}
    print(f"{'set-up':<10} {'compile fwd':>12} {'compile grad':>13} {'(cpu fwd':>9} {'grad)':>7} {'forward':>10} "
          f"{'gradient':>10} {'ratio':>7}")
    integ = {"scan": args.loop == "scan", "checkpoint": jr.NoCheckpoint() if args.no_checkpoint else jr.AutoCheckpoint(),
             "unroll": args.unroll}
    for kind in args.setups:
        problem = make_problem(kind, t1, **integ)
        r, fwd = bench(problem, repeats)
        results[kind] = r
        print(f"{kind:<10} {r['compile_forward_s']:>11.1f}s {r['compile_gradient_s']:>12.1f}s "
              f"{r['compile_forward_cpu_s']:>8.1f}s {r['compile_gradient_cpu_s']:>6.1f}s "
              f"{r['forward_s'] * 1e3:>8.1f}ms {r['gradient_s'] * 1e3:>8.1f}ms {r['ratio']:>6.2f}x")
        problems[kind] = (problem, fwd)
    worst = max(r["ratio"] for r in results.values())
    target = QUICK_TARGET if args.quick else TARGET
    print(f"gradient / forward: at most {worst:.2f}x (target <= {target:g}x): {'met' if worst <= target else 'NOT met'}")
    checks = Checks("benchmark_gradients")
    for kind, r in results.items():
        checks.add(f"{kind}: gradient / forward time", r["ratio"], "<=", target,
                   f"forward {r['forward_s'] * 1e3:.1f} ms, gradient {r['gradient_s'] * 1e3:.1f} ms")
    if not args.no_fd:
        for kind, (problem, fwd) in problems.items():
            names = problem.parameters.names(problem.design)
            cols = ["platform.alpha", "platform.beta", "controller.K_p[1]", "controller.K_w[2]"] if args.quick else names
            rows = fd_check(problem, fwd, results[kind]["grad"], cols)
            scale = max(abs(r[1]) for r in rows)
            worst_rel = 0.0
            print(f"\nfinite differences, {kind} set-up ({'3' if args.quick else '45'} s), central, h = 1e-6 relative:")
            print(f"{'parameter':<26} {'reverse mode':>14} {'central diff.':>14} {'rel. error':>11}")
            for name, ad, fd in rows:
                rel = abs(ad - fd) / max(abs(fd), 1e-9 * scale)
                worst_rel = max(worst_rel, rel if abs(fd) > 1e-6 * scale else 0.0)
                print(f"{name:<26} {ad:>14.6e} {fd:>14.6e} {rel:>11.2e}")
            print(f"largest relative error (components above 1e-6 of the largest): {worst_rel:.2e}")
            results[kind]["fd"] = {"rows": [list(r) for r in rows], "worst_relative_error": worst_rel}
            checks.add(f"{kind}: reverse mode vs central differences, worst relative error", worst_rel, "<=",
                       FD_TOL[kind], f"{len(rows)} parameters")
    print()
    record = {"quick": args.quick, "horizon_s": t1 if t1 is not None else 45.0, "repeats": repeats,
              "target_ratio": target, "fd_tolerance": FD_TOL, **results}
    code = checks.finish(out / "benchmark_gradients.json", record)
    print(f"outputs written to {out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
