"""Benchmark: batched closed-loop throughput (steps per second) against batch size.

The flight is the paper's (Table II hexarotor, Table III gains, ``paper_maneuver``)
with inputs clipped to ``[0, 700^2]`` and a 30 ms first-order motor lag, integrated
with a fixed step (``--dt``, default 5 ms) by the classical RK4 method
(:class:`jaxrotor.integrate.RK4`); each member flies its own cant angle ``alpha_0``
and returns only its final position and ``diverged`` flag. It is batched with
``jax.vmap`` and timed, for each floating-point type and batch size, in three ways:

* ``fly``: :func:`jaxrotor.fly` (the fixed-step path: the diffrax solver stepped in
  ``lax.scan``, :func:`jaxrotor.integrate.integrate_fixed_step`, stages written out:
  ``Integrator(unroll=True)``, as ``jaxrotor sweep`` flies);
* ``floor``: the same closed loop (``flight_computer`` + ``vehicle_derivative``) on a
  flat state, integrated by a plain ``lax.scan`` RK4 written here, on the same grid:
  what the hardware does with no integrator machinery at all;
* ``diffeqsolve`` (one batch size): ``fly`` with ``Integrator(scan=False)``, i.e.
  ``diffrax.diffeqsolve`` with ``StepTo``, the fixed-step path before ``lax.scan``;
* ``discrete`` (with ``--discrete``): the same flight through the discrete-rate loop (``control_rate =
  1 / dt``: one tick of the flight computer per step, held over the RK4 stages), batched by
  :func:`jaxrotor.batch.map_batch` (on a GPU one ``vmap``; on the CPU split over its devices, in chunks).

Reported per row: compile time, steady-state wall time (minimum over ``--repeats``),
member-steps per second (batch x steps / wall), ``floor / fly`` time ratio, and the
memory per member of the compiled program (XLA's buffer assignment: arguments +
outputs + temporaries, divided by the batch; on a GPU also the device's peak bytes
in use).

Checks (one ``check ...: PASS/FAIL`` line each; exit 1 if any fails): ``fly`` and the
plain RK4 floor agree on every member's final position (float64: 1e-9 m; float32:
1e-3 m), ``fly`` and ``diffeqsolve`` agree to 1e-12 m in float64, no member
diverged. The speed targets (>= 3e6 steps/s in float32 at batch >= 1024 on 2 CPU
cores; ``fly`` within 1.2x of the floor) are reported as MET / NOT MET, not enforced.

Run::

    python experiments/benchmark_batch.py                 # CPU: batch 1 ... 65536, float32 and float64, 2 s flight
    python experiments/benchmark_batch.py --quick         # batch 8, 0.25 s flight (smoke test)
    python experiments/benchmark_batch.py --device gpu    # float32, batch 1024 ... 1048576 on the default GPU
    python experiments/benchmark_batch.py --sizes 256 4096 --dtypes float32 --t1 10
"""

from __future__ import annotations

import argparse
import os
import platform as _platform
import sys
import time
from pathlib import Path

import jax
import numpy as np
from _checks import Checks

CPU_SIZES = [1, 16, 256, 1024, 4096, 16384, 65536]
GPU_SIZES = [1024, 16384, 131072, 1048576]
QUICK_SIZES = [8]
TARGET_STEPS_PER_S = 3e6  # float32, batch >= 1024, 2 CPU cores
TARGET_FLOOR_RATIO = 1.2  # fly time / floor time, at most
TARGET_GPU_STEPS_PER_S = 2e9  # float32 hexarotor member-steps/s on one H200 (the speed issue's GPU target)
AGREE = {"float64": 1e-9, "float32": 1e-3}  # |p_fly - p_floor| [m]


def setup(dtype: str, t1: float, dt: float):
    """Build the flight in ``dtype``; return ``(run_fly, run_floor, run_diffeqsolve, steps)`` of ``alphas``."""
    jax.config.update("jax_enable_x64", dtype == "float64")
    import equinox as eqx
    import jax.numpy as jnp
    from jax.flatten_util import ravel_pytree

    import jaxrotor as jr
    from jaxrotor.dynamics import vehicle_derivative
    from jaxrotor.flight import flight_computer
    from jaxrotor.integrate import RK4, fixed_step_grid
    from jaxrotor.reference import paper_maneuver

    platform = jr.presets.paper_hexarotor()
    controller = jr.FullyActuatedSE3()

    def flight_with(scan: bool, control_rate=None):
        return jr.Flight(paper_maneuver(), allocator=jr.Clip(), actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)),
                         integrator=jr.Integrator(solver=RK4(), adaptive=False, dt=dt, scan=scan, unroll=True),
                         save_dt=t1, t1=t1, control_rate=control_rate)

    flight = flight_with(True)
    flight_ds = flight_with(False)
    flight_disc = flight_with(True, 1.0 / dt)
    grid = fixed_step_grid(0.0, t1, dt, flight.reference.jump_times, dtype=np.dtype(dtype))

    def member_fly(fl):
        def run(alpha):
            p = eqx.tree_at(lambda q: q.alpha, platform, alpha)
            traj = jr.fly(p, controller, fl)
            return traj.p[-1], traj.diverged
        return run

    def member_floor(alpha):
        p = eqx.tree_at(lambda q: q.alpha, platform, alpha)
        alloc = flight.allocation_data(p)
        y0 = (flight.initial_state(p), controller.init_state(p))
        flat0, unravel = ravel_pytree(y0)

        def f(t, y):
            state, integral = unravel(y)
            cmd, d_int, _, _ = flight_computer(p, controller, flight, t, state, integral, alloc)
            d_state, _ = vehicle_derivative(p, flight.actuators, state, cmd, None)
            return ravel_pytree((d_state, d_int))[0]

        def rk4(y, x):
            ta, tb = x
            h = tb - ta
            k1 = f(ta, y)
            k2 = f(ta + h / 2, y + h / 2 * k1)
            k3 = f(ta + h / 2, y + h / 2 * k2)
            k4 = f(tb, y + h * k3)
            return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None

        y1, _ = jax.lax.scan(rk4, flat0, (jnp.asarray(grid[:-1]), jnp.asarray(grid[1:])))
        state = unravel(y1)[0]
        return state.p, ~jnp.all(jnp.isfinite(y1))

    alpha_dtype = platform.alpha.dtype
    return ({"fly": member_fly(flight), "floor": member_floor, "diffeqsolve": member_fly(flight_ds),
             "discrete": member_fly(flight_disc)},
            len(grid) - 1, alpha_dtype)


def _memory(compiled, batch: int) -> float | None:
    try:
        m = compiled.memory_analysis()
        total = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
        return total / batch
    except Exception:  # noqa: BLE001  (not every backend reports it)
        return None


def _peak_bytes() -> float | None:
    stats = jax.local_devices()[0].memory_stats()
    return None if not stats else float(stats.get("peak_bytes_in_use", 0)) or None


def time_variants(members: dict, alphas, repeats: int) -> dict:
    """Compile ``vmap(member)`` of each variant for ``alphas``, then time them round-robin (so a load change on a
    shared machine hits every variant alike); return ``{variant: (figures, outputs)}``."""
    from jaxrotor.batch import map_batch

    compiled, out = {}, {}
    for name, member in members.items():
        fn = jax.jit((lambda m: lambda a: map_batch(m, a))(member)) if name == "discrete" else jax.jit(jax.vmap(member))
        t0 = time.perf_counter()
        compiled[name] = fn.lower(alphas).compile()
        c = time.perf_counter() - t0
        out[name] = (c, jax.block_until_ready(compiled[name](alphas)))
    best = dict.fromkeys(members, float("inf"))
    for _ in range(repeats):
        for name in members:
            t0 = time.perf_counter()
            jax.block_until_ready(compiled[name](alphas))
            best[name] = min(best[name], time.perf_counter() - t0)
    n = alphas.shape[0]
    return {name: ({"compile_s": out[name][0], "wall_s": best[name],
                    "memory_per_member_bytes": _memory(compiled[name], n), "device_peak_bytes": _peak_bytes()},
                   out[name][1]) for name in members}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="batch 8, 0.25 s flight, 2 repeats (smoke test)")
    ap.add_argument("--device", choices=("cpu", "gpu"), default=None,
                    help="gpu: float32, batch 1024 ... 1048576 on the default GPU (default: whatever JAX runs on)")
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help="batch sizes")
    ap.add_argument("--dtypes", nargs="+", choices=("float32", "float64"), default=None)
    ap.add_argument("--t1", type=float, default=None, help="flight horizon [s] (default 2; --quick 0.25)")
    ap.add_argument("--dt", type=float, default=0.005, help="fixed step [s]")
    ap.add_argument("--repeats", type=int, default=None, help="timed calls per row (minimum reported)")
    ap.add_argument("--diffeqsolve-size", type=int, default=None,
                    help="batch size at which diffrax.diffeqsolve is also timed (default 256; --quick 8, float64 only; "
                         "0: never)")
    ap.add_argument("--discrete", action="store_true",
                    help="also time the discrete-rate loop of the same flight, batched by map_batch")
    ap.add_argument("--out", default=None, help="write benchmark_batch.json here (default jaxrotor-out/benchmark_batch)")
    args = ap.parse_args(argv)
    if args.device == "gpu" and jax.default_backend() != "gpu":
        print(f"error: --device gpu, but JAX runs on {jax.default_backend()} (install jax[cuda12]).", file=sys.stderr)
        return 2
    if args.sizes is not None and min(args.sizes) < 1:
        print(f"error: --sizes {args.sizes}: every batch size must be >= 1.", file=sys.stderr)
        return 2
    gpu = args.device == "gpu"
    sizes = args.sizes or (QUICK_SIZES if args.quick else GPU_SIZES if gpu else CPU_SIZES)
    dtypes = args.dtypes or (["float32"] if gpu else ["float64", "float32"])
    t1 = args.t1 or (0.25 if args.quick else 2.0)
    repeats = args.repeats or (2 if args.quick else 3)
    ds_size = args.diffeqsolve_size if args.diffeqsolve_size is not None else (8 if args.quick else 256)
    out = Path(args.out or ("jaxrotor-out/benchmark_batch" + ("_quick" if args.quick else "")))
    dev = jax.devices()[0]
    print(f"jax {jax.__version__} on {jax.default_backend()} ({dev.device_kind}; {_platform.processor() or _platform.machine()}, "
          f"{os.cpu_count()} CPU cores, {jax.device_count()} device(s))")
    print(f"flight: paper maneuver with clipping and 30 ms motor lag, {t1:g} s, fixed-step RK4 dt = {args.dt:g} s, "
          "vmap over alpha_0, final state only")
    checks = Checks("benchmark_batch")
    rows, agree, diverged = [], {}, 0
    for dtype in dtypes:
        members, steps, adtype = setup(dtype, t1, args.dt)
        print(f"\n{dtype}: {steps} steps per member")
        print(f"{'batch':>8} {'variant':>12} {'compile':>8} {'wall':>10} {'steps/s':>10} {'fly/floor':>9} "
              f"{'mem/member':>11}")
        worst_floor, worst_ds = 0.0, 0.0
        for n in sizes:
            alphas = jax.numpy.asarray(np.linspace(0.2, 0.6, n), dtype=adtype)
            variants = ["fly", "floor"] + (["diffeqsolve"] if n == ds_size and (dtype == "float64" or not args.quick)
                                           else []) + (["discrete"] if args.discrete else [])
            timed = time_variants({v: members[v] for v in variants}, alphas, repeats)
            res = {v: (r, np.asarray(p_end, dtype=float), np.asarray(div)) for v, (r, (p_end, div)) in timed.items()}
            for v in variants:
                r, _, div = res[v]
                diverged += int(div.sum())
                r.update(dtype=dtype, batch=n, variant=v, steps=steps, steps_per_s=n * steps / r["wall_s"],
                         fly_over_floor=res["fly"][0]["wall_s"] / res["floor"][0]["wall_s"] if v == "fly" else None)
                rows.append(r)
                mem = r["memory_per_member_bytes"]
                print(f"{n:>8} {v:>12} {r['compile_s']:>7.1f}s {r['wall_s'] * 1e3:>8.2f}ms "
                      f"{r['steps_per_s'] / 1e6:>8.3f}M "
                      f"{(format(r['fly_over_floor'], '.2f') + 'x') if r['fly_over_floor'] else '':>9} "
                      f"{(format(mem / 1024, '.1f') + ' KiB') if mem else 'n/a':>11}")
            worst_floor = max(worst_floor, float(np.max(np.abs(res["fly"][1] - res["floor"][1]))))
            if "diffeqsolve" in res:
                worst_ds = max(worst_ds, float(np.max(np.abs(res["fly"][1] - res["diffeqsolve"][1]))))
        agree[dtype] = {"fly_vs_floor_m": worst_floor, "fly_vs_diffeqsolve_m": worst_ds}
    print()
    for dtype in dtypes:
        checks.add(f"{dtype}: fly vs plain lax.scan RK4, final position [m]", agree[dtype]["fly_vs_floor_m"], "<=",
                   AGREE[dtype])
    if "float64" in dtypes and any(r["variant"] == "diffeqsolve" for r in rows):
        checks.add("float64: fly (lax.scan) vs diffrax.diffeqsolve, final position [m]",
                   agree["float64"]["fly_vs_diffeqsolve_m"], "<=", 1e-12)
    checks.add("diverged members", diverged, "<=", 0)
    targets = {}
    f32 = [r for r in rows if r["dtype"] == "float32" and r["variant"] == "fly" and r["batch"] >= 1024]
    if f32:
        best = max(r["steps_per_s"] for r in f32)
        targets["float32_steps_per_s_at_1024_plus"] = {"measured": best, "target": TARGET_STEPS_PER_S,
                                                        "met": best >= TARGET_STEPS_PER_S}
    if gpu:
        f32g = [r for r in rows if r["dtype"] == "float32"]
        if f32g:
            best = max(f32g, key=lambda r: r["steps_per_s"])
            targets["gpu_float32_hexarotor_steps_per_s"] = {
                "measured": best["steps_per_s"], "target": TARGET_GPU_STEPS_PER_S,
                "met": best["steps_per_s"] >= TARGET_GPU_STEPS_PER_S, "variant": best["variant"],
                "batch": best["batch"]}
    for dtype in dtypes:
        fl = [r for r in rows if r["dtype"] == dtype and r["variant"] == "fly"]
        big = max(fl, key=lambda r: r["batch"])
        targets[f"{dtype}_fly_over_floor_at_{big['batch']}"] = {
            "measured": big["fly_over_floor"], "target": TARGET_FLOOR_RATIO,
            "met": big["fly_over_floor"] <= TARGET_FLOOR_RATIO}
        ds = [r for r in rows if r["dtype"] == dtype and r["variant"] == "diffeqsolve"]
        if ds:
            same = next(r for r in fl if r["batch"] == ds[0]["batch"])
            print(f"{dtype}: lax.scan path is {ds[0]['wall_s'] / same['wall_s']:.2f}x faster than diffeqsolve at "
                  f"batch {ds[0]['batch']}")
    for name, t in targets.items():
        print(f"target {name}: measured {t['measured']:.4g}, target {'>=' if 'steps' in name else '<='} "
              f"{t['target']:g}: {'MET' if t['met'] else 'NOT MET'}")
    record = {"quick": args.quick, "device": jax.default_backend(), "device_kind": dev.device_kind,
              "cpu_count": os.cpu_count(), "horizon_s": t1, "dt": args.dt, "sizes": sizes, "dtypes": dtypes,
              "rows": rows, "agreement": agree, "targets": targets}
    code = checks.finish(out / "benchmark_batch.json", record)
    print(f"outputs written to {out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
