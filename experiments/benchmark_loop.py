"""Benchmark: what storing every tick costs the one loop, chunked batches, unrolled stages and the cost of a stage.

Two measurements, each a ratio against a baseline flown in the same process, interleaved over
``--rounds`` rounds (median, min and max reported):

* **saved ticks only**: a batch of quadrotor hovers (``presets.cs_4r``, ``UnderactuatedSE3``, RK4 at 2 ms,
  a 500 Hz flight computer) saved only at ``t0`` and ``t1`` against the same flights saved at every tick
  (``save_dt`` = the control period: every tick's state, outputs and allocation kept). The loop's scan emits
  every tick's record and keeps every ``save_every``-th; a scan over chunks that keeps only the saved ticks
  was measured slower on the CPU (0.54x at batch 1024) with twice the compile time, and is not used;
* **chunked batch**: :func:`jaxrotor.batch.map_batch` of the continuous-time flight over ``--batch``
  members in chunks of :data:`jaxrotor.batch.CPU_CHUNK` (``chunk="auto"``) against one ``vmap`` of the
  whole batch (``chunk=None``);
* **unrolled stages**: the continuous-time RK4 flight batched with ``vmap`` with its stages written out
  (``Integrator(unroll=True)``, what ``unroll="auto"`` picks for RK4) against a ``lax.scan`` over them
  (``unroll=False``).

* **batch layout**: the discrete-rate loop's RK4 batch (500 Hz ticks, one plant step each) as
  :func:`jaxrotor.batch.map_batch` flies it, with the step's small products written out
  (:mod:`jaxrotor.small`, the default) against the layout before: the same products as ``jnp.matmul``
  (``small.DOTS``), each compiled with the flag set;

* **stage cost**: one RK4 step of the continuous closed loop's vector field with its stages written out
  (``fixed_step._erk_step``, what the unrolled loop runs) against one evaluation of that field, batched over
  ``--batch`` members: the ratio is the step's cost in field evaluations (four stages, one plant and
  controller evaluation each; XLA's ``cost_analysis`` counts about seven, its fusions duplicate cheap
  producers, which costs no time). The step also equals diffrax's own ``RK4.step``.

Checks (exit 1 if one fails): the final positions of both variants agree (float64: 1e-12 m, float32:
1e-5 m) and no member diverged. Speed ratios are reported, not enforced.

Run::

    python experiments/benchmark_loop.py                  # batch 16384, 1 s flights, 5 rounds, float32
    python experiments/benchmark_loop.py --quick          # batch 64, 0.1 s (smoke test)
    python experiments/benchmark_loop.py --x64 --out DIR  # float64; DIR/benchmark_loop.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jax


def _setup(x64: bool):
    jax.config.update("jax_enable_x64", x64)
    import equinox as eqx
    import jax.numpy as jnp
    import numpy as np

    import jaxrotor as jr
    from jaxrotor import presets
    from jaxrotor.integrate import RK4

    return eqx, jnp, np, jr, presets, RK4


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="batch 64, 0.1 s flights, 2 rounds")
    parser.add_argument("--batch", type=int, default=16384, help="members of the batch")
    parser.add_argument("--t1", type=float, default=1.0, help="flight time [s]")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--x64", action="store_true", help="float64 (default float32)")
    parser.add_argument("--out", default=None, help="folder for benchmark_loop.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.batch, args.t1, args.rounds = 64, 0.1, 2
    eqx, jnp, np, jr, presets, RK4 = _setup(args.x64)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _checks import Checks

    from jaxrotor.batch import CPU_CHUNK, map_batch

    checks = Checks("benchmark_loop")
    dtype = jnp.float64 if args.x64 else jnp.float32
    plat = jax.tree_util.tree_map(lambda x: x.astype(dtype) if eqx.is_inexact_array(x) else x, presets.cs_4r())
    ctrl = jr.UnderactuatedSE3()
    ref = jr.reference.Hover((0.0, 0.0, 1.0), args.t1)
    integ = jr.Integrator(solver=RK4(), adaptive=False, dt=2e-3)
    offsets = jnp.asarray(np.random.default_rng(0).normal(size=(args.batch, 3)) * 0.1, dtype)
    steps = int(round(args.t1 / 2e-3))

    def flight(p, **kw):
        fl = jr.Flight(reference=ref, integrator=integ, **kw)
        s0 = fl.initial_state(plat)
        return eqx.tree_at(lambda f: f.state0, fl, eqx.tree_at(lambda s: s.p, s0, s0.p + p),
                           is_leaf=lambda x: x is None)

    def discrete(save_dt):
        return jax.jit(jax.vmap(lambda p: jr.fly(plat, ctrl, flight(p, control_rate=500.0, save_dt=save_dt)).p[-1]))

    def member(p):
        tr = jr.fly(plat, ctrl, flight(p, save_dt=args.t1))
        return tr.p[-1], tr.diverged

    def stages(unroll):
        integ_u = jr.Integrator(solver=RK4(), adaptive=False, dt=2e-3, unroll=unroll)

        def one(p):
            fl = eqx.tree_at(lambda f: f.integrator, flight(p, save_dt=args.t1), integ_u)
            return jr.fly(plat, ctrl, fl).p[-1]

        return jax.jit(jax.vmap(one))

    unrolled, scanned = stages(True), stages(False)

    # one RK4 step of the continuous closed loop's vector field against one evaluation of that field (batched)
    import diffrax

    from jaxrotor import continuous, fixed_step

    fl0 = flight(jnp.zeros(3, dtype), save_dt=args.t1)
    field_args = (plat, ctrl, fl0, fl0.allocation_data(plat))
    flat0, _, flat_field = fixed_step._flat(continuous._field, (fl0.initial_state(plat), ctrl.init_state(plat)))
    tableau = fixed_step._explicit_tableau(RK4())
    t_a, t_b = jnp.asarray(0.1, dtype), jnp.asarray(0.1 + 2e-3, dtype)
    ys = flat0 + jnp.zeros((args.batch, 1), dtype).at[:, :1].set(offsets[:, :1])  # members apart in x
    field_b = jax.jit(jax.vmap(lambda y: flat_field(t_a, y, field_args)))
    step_b = jax.jit(jax.vmap(lambda y: fixed_step._erk_step(tableau, lambda t, x: flat_field(t, x, field_args),
                                                             t_a, t_b, y, None)[0]))
    diffrax_b = jax.jit(jax.vmap(lambda y: RK4().step(diffrax.ODETerm(flat_field), t_a, t_b, y, field_args, None,
                                                       False)[0]))

    saved_only, every_tick = discrete(args.t1), discrete(2e-3)  # compiled once each

    # the batch layout: the discrete-rate RK4 batch as map_batch flies it, with the step's small products written
    # out (the default) against the same products as matmuls
    from jaxrotor import small

    def layout(old: bool):
        small.DOTS = old
        jax.clear_caches()

        def one(p):
            tr = jr.fly(plat, ctrl, flight(p, control_rate=500.0, save_dt=args.t1))
            return tr.p[-1]

        try:
            return jax.jit(lambda d: map_batch(one, d)).lower(offsets).compile()
        finally:
            small.DOTS = False

    written_out, dots = layout(False), layout(True)
    variants = {
        "saved_only": lambda: saved_only(offsets),
        "every_tick": lambda: every_tick(offsets),
        "chunked": lambda: map_batch(member, offsets, chunk="auto"),
        "one_vmap": lambda: map_batch(member, offsets, chunk=None),
        "unrolled": lambda: unrolled(offsets),
        "scanned": lambda: scanned(offsets),
        "written_out": lambda: written_out(offsets),
        "dots": lambda: dots(offsets),
        "rk4_step": lambda: step_b(ys),
        "field": lambda: field_b(ys),
    }
    results, compile_s, times = {}, {}, {k: [] for k in variants}
    for name, run in variants.items():
        t0 = time.perf_counter()
        results[name] = jax.block_until_ready(run())
        compile_s[name] = time.perf_counter() - t0
    for _ in range(args.rounds):
        for name, run in variants.items():
            t0 = time.perf_counter()
            jax.block_until_ready(run())
            times[name].append(time.perf_counter() - t0)
    tol = 1e-12 if args.x64 else 1e-5
    gap_tick = float(np.abs(np.asarray(results["saved_only"]) - np.asarray(results["every_tick"])).max())
    gap_chunk = float(np.abs(np.asarray(results["chunked"][0]) - np.asarray(results["one_vmap"][0])).max())
    checks.add("saved-only vs every-tick final positions [m]", gap_tick, "<=", tol)
    checks.add("chunked vs one-vmap final positions [m]", gap_chunk, "<=", tol)
    gap_unroll = float(np.abs(np.asarray(results["unrolled"]) - np.asarray(results["scanned"])).max())
    checks.add("unrolled vs scanned stages final positions [m]", gap_unroll, "<=", tol)
    gap_layout = float(np.abs(np.asarray(results["written_out"]) - np.asarray(results["dots"])).max())
    checks.add("written-out vs matmul layout final positions [m]", gap_layout, "<=", tol)
    checks.add("diverged members", int(np.sum(np.asarray(results["chunked"][1]))), "==", 0)
    gap_step = float(np.abs(np.asarray(results["rk4_step"]) - np.asarray(diffrax_b(ys))).max())
    checks.add("written-out RK4 step vs diffrax's RK4 step (max abs difference)", gap_step, "<=",
               1e-12 if args.x64 else 1e-5)
    record = {"batch": args.batch, "t1": args.t1, "steps": steps, "dtype": str(jnp.dtype(dtype)),
              "rounds": args.rounds, "chunk": CPU_CHUNK, "compile_s": compile_s, "wall_s": times, "ratios": {}}
    print(f"batch {args.batch}, {steps} steps of 2 ms, {jnp.dtype(dtype)}, {args.rounds} rounds")
    for faster, base in (("saved_only", "every_tick"), ("chunked", "one_vmap"), ("unrolled", "scanned"),
                       ("written_out", "dots")):
        r = np.asarray(times[base]) / np.asarray(times[faster])
        record["ratios"][f"{faster}/{base}"] = {"median": float(np.median(r)), "min": float(r.min()),
                                                "max": float(r.max())}
        rate = args.batch * steps / min(times[faster]) / 1e6
        print(f"{faster:>10} vs {base:<10}: speed-up median {np.median(r):.2f}x (min {r.min():.2f}, "
              f"max {r.max():.2f}); {rate:.3f} M member-steps/s; compile {compile_s[faster]:.1f} s vs "
              f"{compile_s[base]:.1f} s")
    r = np.asarray(times["rk4_step"]) / np.asarray(times["field"])
    record["ratios"]["rk4_step/field"] = {"median": float(np.median(r)), "min": float(r.min()), "max": float(r.max())}
    print(f"one RK4 step of the closed loop costs {np.median(r):.2f} field evaluations (median; min {r.min():.2f}, "
          f"max {r.max():.2f}): four stages, one plant and controller evaluation each")
    out = None if args.out is None else Path(args.out) / "benchmark_loop.json"
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
    return checks.finish(out, record)


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.exit(main())
