"""Physics layer benchmark: the use case on the MuJoCo C engine and under MJX, against the analytic layer.

What it measures, in one process (ratios against the analytic layer's compiled
flight of the same horizon):

1. the use-case flight (``paper_reproduction``, ideal motors, 1 ms physics step)
   on the MuJoCo C engine at 1 kHz and 500 Hz control: wall time of the loop
   (after compilation), the split between the JAX control step and ``mj_step``,
   and the Table IV numbers of the physics column against the paper's;
2. the effects the analytic layer lacks, measured by switching them off: the same
   flight with welded propellers (no gyroscopic or spin-up reaction torque);
3. (full mode, or ``--mjx``) MJX: one flight as one compiled function, and a
   ``vmap``-ed batch of flights with different position gains (flights per second
   and physics steps per second), the batch agreeing with MuJoCo C.

Checks: the physics flights do not diverge; x and y MAE within 25 % of the
paper's p column (full horizon only); ``|Delta omega|`` outside 1 s after each
reference jump within 2 rad/s at 1 kHz (reported, not checked, at 500 Hz); the
45 s flight's loop within 5 s (full mode); MJX equals MuJoCo C to 1e-6 m (with
``--mjx``/full).

Run::

    python experiments/benchmark_physics.py             # 45 s flights, MJX batch of 8 (a few minutes on 2 cores)
    python experiments/benchmark_physics.py --quick     # 2 s horizon, 1 kHz only, no MJX (smoke test)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx
import jax.numpy as jnp
import mujoco
import numpy as np
from _checks import Checks

from jaxrotor import fly
from jaxrotor.integrate import Integrator
from jaxrotor.metrics import flight_metrics
from jaxrotor.physics import ModelOptions, PhysicsSettings, build_model, fly_physics
from jaxrotor.physics.parts import default_parts
from jaxrotor.workflows.compare import PAPER_TABLE_IV, delta_omega
from jaxrotor.workflows.usecase import paper_reproduction_spec


def _physics(conf, settings, pm=None):
    res = fly_physics(conf.platform, conf.controller, conf.flight, settings, model=pm)
    pm = pm or build_model(conf.platform, settings.parts, settings.options)
    m = flight_metrics(res.trajectory, pm.physics_platform())
    return res, m


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 s horizon, 1 kHz control only, no MJX (smoke test)")
    ap.add_argument("--mjx", action="store_true", help="also run the MJX part in --quick mode")
    ap.add_argument("--batch", type=int, default=8, help="MJX batch size (default 8)")
    ap.add_argument("--out", default=None, help="folder for benchmark_physics.json")
    args = ap.parse_args(argv)
    out = Path(args.out or ("jaxrotor-out/benchmark_physics" + ("_quick" if args.quick else "")))
    checks = Checks("benchmark_physics")
    spec = paper_reproduction_spec(with_comparison=False)
    horizon = 2.0 if args.quick else spec.flight.reference.duration
    conf = spec.with_t1(horizon) if args.quick else spec
    try:
        load = "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except OSError:
        load = ""
    print(f"physics benchmark: jax {jax.__version__}, mujoco {mujoco.__version__}, {os.cpu_count()} CPUs, {load}")
    print(f"  flight {conf.name}, horizon {horizon:g} s, physics step 1 ms")
    record = {"quick": args.quick, "horizon_s": horizon, "load_average": list(os.getloadavg())}

    # ---------------------------------------------------------------- analytic baseline
    if args.quick:  # a fixed step compiles faster; the smoke test only needs a baseline of the same flight
        conf = dataclasses.replace(conf, flight=dataclasses.replace(conf.flight, integrator=Integrator(
            adaptive=False, dt=0.005)))
    fly(conf.platform, conf.controller, conf.flight)
    t0 = time.perf_counter()
    ana = fly(conf.platform, conf.controller, conf.flight)
    jax.block_until_ready(ana.p)
    wall_a = time.perf_counter() - t0
    record["analytic_wall_s"] = wall_a
    print(f"  analytic layer (compiled, {'fixed-step' if args.quick else 'adaptive'} Tsit5): {wall_a:.3f} s")

    # ---------------------------------------------------------------- C engine at two control rates
    parts = default_parts(conf.platform)
    rows = []
    for period in (0.001,) if args.quick else (0.001, 0.002):
        settings = PhysicsSettings(parts=parts)
        pm = build_model(conf.platform, parts, settings.options)
        res, m = _physics(dataclasses.replace(conf, flight=dataclasses.replace(conf.flight, control_rate=1 / period)),
                          settings, pm)
        _, dw_max, dw_steady = delta_omega(ana, res.trajectory, conf.flight.reference.jump_times)
        row = {"control_hz": round(1 / period), "wall_s": res.wall_time_s, "compile_s": res.compile_time_s,
               "control_step_s": res.control_time_s,
               "ratio_to_analytic": res.wall_time_s / wall_a, "ticks": round(horizon / period),
               "mae_position": np.asarray(m.mae_position_xyz).tolist(),
               "mae_orientation": np.asarray(m.mae_orientation_xyz).tolist(), "max_abs_delta_omega": dw_max,
               "max_abs_delta_omega_steady": dw_steady, "diverged": bool(res.trajectory.diverged)}
        rows.append(row)
        print(f"  MuJoCo C, {row['control_hz']} Hz control: loop {res.wall_time_s:.2f} s "
              f"({row['ratio_to_analytic']:.0f}x the analytic flight), compile {res.compile_time_s:.2f} s, "
              f"MAE e_p = {np.round(row['mae_position'], 7).tolist()} m, |Δω| steady {dw_steady:.3f} rad/s")
        checks.add(f"{row['control_hz']} Hz: diverged", int(row["diverged"]), "<=", 0)
        if period == 0.001:  # the default rate; at 500 Hz the rotor speeds may oscillate (docs/physics.md)
            checks.add(f"{row['control_hz']} Hz: max |Δω| outside jumps [rad/s]", dw_steady, "<=", 2.0)
    record["engine"] = rows
    main_row = rows[0]
    if not args.quick:
        for i, c in enumerate("xy"):
            paper = PAPER_TABLE_IV["physics"]["mae_position_xyz"][i]
            checks.add(f"MAE e_p,{c} / paper p", main_row["mae_position"][i] / paper, "<=", 1.25)
            checks.add(f"MAE e_p,{c} / paper p (lower)", main_row["mae_position"][i] / paper, ">=", 0.75)
        checks.add("45 s flight on MuJoCo C, 1 kHz control: loop wall [s]", main_row["wall_s"], "<=", 5.0)

    # where the loop's time goes (measured inside the same 1 kHz run): the compiled control step vs the rest
    ticks = main_row["ticks"]
    control_us = main_row["control_step_s"] / ticks * 1e6
    rest_us = (main_row["wall_s"] - main_row["control_step_s"]) / ticks * 1e6
    record["control_step_us"] = control_us
    record["mj_step_and_loop_us"] = rest_us
    settings = PhysicsSettings(parts=parts)
    print(f"  per tick at 1 kHz: compiled control step {control_us:.1f} us, mj_step + Python loop {rest_us:.1f} us")

    # ---------------------------------------------------------------- effects the analytic layer lacks
    welded = PhysicsSettings(parts=parts, options=ModelOptions(spin=False))
    _, m_w = _physics(conf, welded)
    record["welded_propellers"] = {"mae_position": np.asarray(m_w.mae_position_xyz).tolist(),
                                   "mae_orientation": np.asarray(m_w.mae_orientation_xyz).tolist()}
    print(f"  welded propellers (no gyroscopic or spin-up torque): MAE e_p = "
          f"{np.round(np.asarray(m_w.mae_position_xyz), 7).tolist()} m, e_R = "
          f"{np.asarray(m_w.mae_orientation_xyz).tolist()} rad")

    # ---------------------------------------------------------------- MJX
    if args.mjx or not args.quick:
        from jaxrotor.physics.mjx import make_mjx_flight, put_model

        n_ticks = 1000 if not args.quick else 200
        pm_air = build_model(conf.platform, parts, ModelOptions())
        fn = make_mjx_flight(pm_air, conf.platform, conf.flight, settings, n_ticks=n_ticks)
        mx = put_model(pm_air)
        one = jax.jit(fn)
        t0 = time.perf_counter()
        jax.block_until_ready(one(conf.controller, mx).p)
        compile_one = time.perf_counter() - t0
        t0 = time.perf_counter()
        out1 = one(conf.controller, mx)
        jax.block_until_ready(out1.p)
        wall_one = time.perf_counter() - t0
        c_res = fly_physics(conf.platform, conf.controller, dataclasses.replace(conf.flight, t1=n_ticks * 0.001,
                                                                                save_dt=0.001), settings, model=pm_air)
        gap = float(np.abs(np.asarray(out1.p) - np.asarray(c_res.trajectory.p)).max())
        scales = jnp.linspace(0.8, 1.2, args.batch)
        ctrls = jax.vmap(lambda s: eqx.tree_at(lambda c: c.K_p, conf.controller, conf.controller.K_p * s))(scales)
        batched = jax.jit(jax.vmap(fn, in_axes=(0, None)))
        t0 = time.perf_counter()
        jax.block_until_ready(batched(ctrls, mx).p)
        compile_b = time.perf_counter() - t0
        t0 = time.perf_counter()
        outb = batched(ctrls, mx)
        jax.block_until_ready(outb.p)
        wall_b = time.perf_counter() - t0
        record["mjx"] = {"ticks": n_ticks, "compile_s": compile_one, "wall_one_s": wall_one, "batch": args.batch,
                         "compile_batch_s": compile_b, "wall_batch_s": wall_b, "flights_per_s": args.batch / wall_b,
                         "steps_per_s": args.batch * n_ticks / wall_b,
                         "c_engine_steps_per_s": ticks / main_row["wall_s"], "mjx_vs_c_m": gap,
                         "device": str(jax.devices()[0])}
        print(f"  MJX one flight of {n_ticks} steps: {wall_one:.3f} s (compile {compile_one:.1f} s); batch of "
              f"{args.batch}: {wall_b:.3f} s = {args.batch * n_ticks / wall_b:.0f} steps/s "
              f"(MuJoCo C loop: {ticks / main_row['wall_s']:.0f} steps/s); MJX vs C: {gap:.2e} m")
        checks.add("MJX vs MuJoCo C, max |p| difference [m]", gap, "<=", 1e-6)
    return checks.finish(out / "benchmark_physics.json", record)


if __name__ == "__main__":
    sys.exit(main())
