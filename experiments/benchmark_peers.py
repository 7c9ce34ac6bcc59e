"""Benchmark: jaxrotor against Crazyflow 0.4.0 (a JAX batched drone simulator), interleaved in one run.

The workload is the same on both sides: Crazyflie-class quadrotors hovering at ``(0, 0, 1) m``, each member
starting ``linspace(-0.1, 0.1)`` m off along x with its rotors at hover speed, fixed step dt = 2 ms, batched
(batch 1, 64, 1024, 16384, 65536), float32 and float64, explicit Euler and classical RK4, each member returning
only its final state.

* jaxrotor: ``presets.get("crazyflie")`` (30 g, ``x_layout(4, 0.043)``, rotor inertia from its parts) under
  ``UnderactuatedSE3`` with gains from the vehicle (``gains.with_auto_gains``), a 30 ms first-order motor
  (``FirstOrderMotor(0.03)``: a rotor-speed state, as Crazyflow's), the ``Hover`` reference, the default
  ``PseudoInverse`` allocator, ``Integrator(solver=Euler() | RK4(), adaptive=False, dt=2e-3)`` (every other
  integrator option at its default: what a user gets), ``save_dt = t1``; the batch over the initial position
  flown as ``jaxrotor.batch.map_batch`` flies it (default ``--batching map_batch``: with one CPU device per core,
  which this script asks XLA for as the ``jaxrotor`` command does, the batch is split over the cores, each flying
  its part in chunks of ``CPU_CHUNK`` members; ``--cores 1`` keeps one device), or one ``jax.vmap``
  (``--batching vmap``), inside one ``jax.jit``. Crazyflow's worker is started with one device (its own
  ``Sim`` batches with one ``vmap``, the way it ships). Two loops:

  - ``continuous``: ``Flight(control_rate=None)``: the controller inside the vector field (evaluated at every
    stage: 4 times per RK4 step);
  - ``discrete``: ``Flight(control_rate=500)``: one tick (sensors, flight computer, zero-order hold) per 2 ms,
    then one plant step: Crazyflow's structure (controller once per step, held over the integrator's stages).

* Crazyflow (``_crazyflow_worker.py``, run by ``--peer-python`` in Crazyflow's own virtual environment):
  ``Sim(n_worlds=batch, control="state", dynamics="first_principles", integrator="euler" | "rk4", freq=500)``
  with every controller stage at 500 Hz, timed as the compiled ``sim._step`` (the jitted ``lax.scan`` that
  ``sim.step(n)`` runs).

Both compile ahead of time (``jit(...).lower(...).compile()``, the compile time reported), run once, then are
timed in ``--rounds`` interleaved rounds: per batch size, every jaxrotor variant, then every Crazyflow variant
(a load change on the shared machine hits both alike); per call the minimum of 3 calls at batch <= 64, one
call above. A call flies ``steps(batch) = clamp(2^20 / batch, 20, 5000)`` steps (batch 1: 5000 steps, the 10 s
single flight). Reported per row: member-steps per second (batch x steps / wall, median over rounds), compile
time, and the ratio jaxrotor / Crazyflow of steps per second (> 1: jaxrotor faster) with its min / median / max
over rounds.

Also measured in the same run:

* FLOPs of one member-step: the slope between batch 2 and 4 of XLA's ``cost_analysis()["flops"]`` of a
  compiled batched flight of one step, on both sides (XLA counts a loop body once, so no step loop is
  counted; see :meth:`Jaxrotor.flops_per_step`: jaxrotor's RK4 is counted with its stages written out);
* the machine's float32 peak: the best of several ``jnp.matmul`` of two 2048 x 2048 float32 matrices
  (``2 n^3`` FLOPs), at the start and at the end of the run; the fraction of it each variant reaches
  (FLOPs per step x steps per second / peak);
* gradients (not with ``--quick`` or ``--no-grad``): a 2 s flight at batch 1, discrete loop, RK4: forward and
  reverse-mode gradient of the squared final position error with respect to the initial position, timed in
  the same rounds on both sides (best of 3 calls each; compile times and gradient / forward).

Checks (exit 1 if one fails): every jaxrotor flight finite, not flagged ``diverged``, and ending within 0.15 m
of the hover point (the start is at most 0.1 m off); with float64: the continuous loop's explicit Euler and RK4
converge to an RK4 reference at dt / 8 at their orders (error ratio dt -> dt/2 in [1.6, 2.5] for Euler, in
[10, 24] for RK4, on a 0.5 s flight), and they differ by at most 1.1x Euler's error; with a peer: every Crazyflow
flight finite. The speed targets of issue 28 are reported as MET / NOT MET, never enforced. Without
``--peer-python`` only jaxrotor runs, the script says so, and no ratio is printed or written.

Set-up (two virtual environments: Crazyflow pins its own jax, numpy >= 2, scipy >= 1.17, mujoco, flax, casadi,
gymnasium[mujoco])::

    python -m venv .venv && .venv/bin/pip install -e .                        # jaxrotor (this repository)
    python -m venv /work/cfvenv && /work/cfvenv/bin/pip install crazyflow==0.4.0   # Crazyflow, its own venv

Run (from jaxrotor's environment; the script installs nothing)::

    python experiments/benchmark_peers.py --peer-python /work/cfvenv/bin/python           # full: ~20-25 min on 2 cores
    python experiments/benchmark_peers.py --quick                                          # jaxrotor only, batch 2 and 4
    python experiments/benchmark_peers.py --peer-python PY --sizes 1 64 1024 --dtypes float32 --rounds 5
    python experiments/benchmark_peers.py --peer-python PY --out DIR                       # DIR/benchmark_peers.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform as _platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
from _checks import Checks

SIZES = [1, 64, 1024, 16384, 65536]
QUICK_SIZES = [2, 4]
FLOP_SIZES = (2, 4)  # batch sizes whose FLOP counts give one member-step (slope)
FLOP_STEPS = 1  # a flight of one step: no step loop whose body XLA's count would see once
DT = 2e-3  # [s]
RATE = 500.0  # [Hz] discrete-rate loop (one tick per step)
HOVER = (0.0, 0.0, 1.0)  # [m]
OFFSET = 0.1  # [m] largest initial x offset
WORK = 2**20  # member-steps per timed call
MIN_STEPS, MAX_STEPS = 20, 5000  # per call; batch 1 flies MAX_STEPS (10 s)
QUICK_WORK, QUICK_MAX_STEPS = 1000, 250
GRAD_STEPS = 1000  # 2 s
LOOPS = ("continuous", "discrete")
INTEGRATORS = ("euler", "rk4")
MATMUL_N = 2048
HOVER_TOL = 0.15  # [m]
TARGETS = {"ratio": 1.0, "ratio_large": 1.5, "large_batch": 16384, "peak_fraction": 0.10, "single_flight": 1.0,
           "compile_s": 5.0, "grad_compile_s": 8.0, "grad_over_fwd": 4.0}
EULER_ORDER, RK4_ORDER = (1.6, 2.5), (10.0, 24.0)  # accepted error ratios dt -> dt/2


def steps_for(batch: int, quick: bool) -> int:
    work, top = (QUICK_WORK, QUICK_MAX_STEPS) if quick else (WORK, MAX_STEPS)
    return top if batch == 1 else int(min(top, max(MIN_STEPS, work // batch)))


def offsets(batch: int) -> np.ndarray:
    """``(batch, 3)`` initial position offsets [m] from the hover point (x only)."""
    dp = np.zeros((batch, 3))
    dp[:, 0] = np.linspace(-OFFSET, OFFSET, batch) if batch > 1 else OFFSET / 2
    return dp


# --------------------------------------------------------------------------- peak


def matmul_peak(n: int = MATMUL_N, repeats: int = 5) -> float:
    """The best float32 FLOP/s of ``jnp.matmul`` of two ``n x n`` matrices (``2 n^3`` FLOPs per product)."""
    import jax.numpy as jnp

    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    a = jax.random.normal(k1, (n, n), dtype=jnp.float32)
    b = jax.random.normal(k2, (n, n), dtype=jnp.float32)
    mm = jax.jit(jnp.matmul).lower(a, b).compile()
    jax.block_until_ready(mm(a, b))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(mm(a, b))
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n**3 / best


# --------------------------------------------------------------------------- jaxrotor side


def _flops(compiled) -> float:
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    return float(cost.get("flops", float("nan"))) if cost else float("nan")


class Jaxrotor:
    """The jaxrotor flights of one floating-point type (build after ``jax_enable_x64`` is set)."""

    def __init__(self, dtype: str):
        import diffrax
        import equinox as eqx
        import jax.numpy as jnp

        import jaxrotor as jr
        from jaxrotor.gains import with_auto_gains
        from jaxrotor.integrate import RK4
        from jaxrotor.reference import Hover

        self.jnp, self.eqx, self.jr = jnp, eqx, jr
        self.dtype = jnp.dtype(dtype)
        self.platform = jr.presets.get("crazyflie")
        self.solvers = {"euler": diffrax.Euler(), "rk4": RK4()}
        self.Hover, self.with_auto_gains = Hover, with_auto_gains
        self.hover = jnp.asarray(HOVER, dtype=self.dtype)

    def member(self, loop: str, integ: str, steps: int, dt: float = DT, unroll: bool = False):
        """``dp (3,) -> (final position (3,), diverged ())`` of one member's flight of ``steps`` steps
        (``unroll``: ``Integrator(unroll=True)``, the stages written out; else the integrator's default)."""
        jr, eqx = self.jr, self.eqx
        t1 = steps * dt
        opts = {"unroll": True} if unroll else {}
        flight = jr.Flight(self.Hover(HOVER, t1), actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)),
                           integrator=jr.Integrator(solver=self.solvers[integ], adaptive=False, dt=dt, **opts),
                           save_dt=t1, t1=t1, control_rate=RATE if loop == "discrete" else None)
        controller = self.with_auto_gains(jr.UnderactuatedSE3(), self.platform, flight)
        platform, hover = self.platform, self.hover

        def run(dp):
            s0 = jr.initial_state(platform, p=hover + dp, rotor_speed="hover")
            fl = eqx.tree_at(lambda f: f.state0, flight, s0, is_leaf=lambda x: x is None)
            traj = jr.fly(platform, controller, fl)
            return traj.p[-1], traj.diverged

        return run

    def batched(self, loop: str, integ: str, batch: int, steps: int, batching: str = "vmap"):
        """Compile the batch (``batching``: one ``jax.vmap``, or ``"map_batch"``: what
        :func:`jaxrotor.batch.map_batch` flies, chunks of ``chunk_size(batch, "auto")`` members);
        return ``(compiled, dps, compile_s, flops_program, outputs)``."""
        dps = self.jnp.asarray(offsets(batch), dtype=self.dtype)
        member = self.member(loop, integ, steps)
        vf = jax.vmap(member)
        if batching == "map_batch":
            from jaxrotor.batch import map_batch

            vf = lambda d: map_batch(member, d)  # noqa: E731
        fn = jax.jit(vf)
        t0 = time.perf_counter()
        compiled = fn.lower(dps).compile()
        c = time.perf_counter() - t0
        out = jax.block_until_ready(compiled(dps))
        return compiled, dps, c, _flops(compiled), out

    def flops_per_step(self, loop: str, integ: str) -> tuple[float, dict]:
        """FLOPs of one member-step: the slope between batch 2 and 4 of XLA's count of a batched flight of one step.

        XLA's ``cost_analysis`` counts a loop body once, and how much of a flight lies outside its step loop
        depends on the loop's structure (peeled ticks, say), so the count is taken on a flight of exactly one
        step, with no step loop; the slope over the batch removes what the batch shares (per-member set-up
        and outputs stay in: a few percent). Batch 1 is left out (XLA compiles a batch of one differently;
        the count is linear in the batch from 2 on). The integrator's default loops over an explicit
        Runge-Kutta method's stages in a ``lax.scan``, which the count would see once, so RK4 is counted with
        ``Integrator(unroll=True)`` (the same arithmetic, stages written out).
        """
        counts = {}
        for n in FLOP_SIZES:
            dps = self.jnp.asarray(offsets(n), dtype=self.dtype)
            fn = jax.jit(jax.vmap(self.member(loop, integ, FLOP_STEPS, unroll=integ == "rk4")))
            counts[n] = _flops(fn.lower(dps).compile())
        return slope(counts), counts

    def gradient(self, steps: int):
        """Compiled forward and reverse-mode gradient (discrete loop, RK4, batch 1) of the squared final error."""
        run = self.member("discrete", "rk4", steps)
        hover = self.hover

        def loss(dp):
            p, _ = run(dp)
            return self.jnp.sum((p - hover) ** 2)

        dp = self.jnp.asarray(offsets(1)[0], dtype=self.dtype)
        t0 = time.perf_counter()
        fwd = jax.jit(loss).lower(dp).compile()
        c_fwd = time.perf_counter() - t0
        t0 = time.perf_counter()
        bwd = jax.jit(jax.grad(loss)).lower(dp).compile()
        c_grad = time.perf_counter() - t0
        g = np.asarray(jax.block_until_ready(bwd(dp)))
        jax.block_until_ready(fwd(dp))
        return {"fwd": fwd, "bwd": bwd, "dp": dp, "compile_fwd_s": c_fwd, "compile_grad_s": c_grad,
                "finite": bool(np.all(np.isfinite(g)))}


def timed(fn, *args, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - t0)
    return best


def order_check(jrs: Jaxrotor, t1: float = 0.5) -> dict:
    """Final positions of the continuous loop at batch 1 (float64): Euler and RK4 at dt and dt/2 against RK4 at
    dt/8; the error ratios dt -> dt/2 (2 for first order, 16 for fourth)."""
    dp = jrs.jnp.asarray(offsets(1)[0], dtype=jrs.dtype)

    def final(integ, dt):
        p, div = jax.jit(jrs.member("continuous", integ, round(t1 / dt), dt=dt))(dp)
        return np.asarray(p, dtype=float), bool(div)

    ref, d0 = final("rk4", DT / 8)
    res, ends, diverged = {}, {}, d0
    for integ in INTEGRATORS:
        for k, dt in (("dt", DT), ("dt2", DT / 2)):
            p, d = final(integ, dt)
            ends[f"{integ}_{k}"] = p
            res[f"{integ}_{k}"] = float(np.linalg.norm(p - ref))
            diverged |= d
    return {"horizon_s": t1, "errors_m": res, "diverged": diverged,
            "euler_vs_rk4_m": float(np.linalg.norm(ends["euler_dt"] - ends["rk4_dt"])),
            "euler_ratio": res["euler_dt"] / res["euler_dt2"], "rk4_ratio": res["rk4_dt"] / res["rk4_dt2"]}


# --------------------------------------------------------------------------- Crazyflow side


class Peer:
    """The Crazyflow worker of one floating-point type, in its own interpreter (``--peer-python``)."""

    def __init__(self, python: str, dtype: str, plan: dict, grad_steps: int, log: Path, flop_sizes=FLOP_SIZES):
        cmd = [python, str(Path(__file__).with_name("_crazyflow_worker.py")), "--dtype", dtype, "--plan",
               json.dumps({str(k): v for k, v in plan.items()}), "--integrators", *INTEGRATORS,
               "--flop-sizes", *map(str, flop_sizes)]
        if grad_steps:
            cmd += ["--grad-steps", str(grad_steps)]
        log.parent.mkdir(parents=True, exist_ok=True)
        self.log = log
        self._err = open(log, "w")  # noqa: SIM115  (closed in close())
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["XLA_FLAGS"] = " ".join(f for f in env.get("XLA_FLAGS", "").split()
                                    if not f.startswith("--xla_force_host_platform_device_count"))
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                     text=True, bufsize=1, env=env)
        self.ready = self._read()

    def _read(self) -> dict:
        for line in self.proc.stdout:
            if line.startswith("@@peer "):
                msg = json.loads(line[len("@@peer "):])
                if "error" in msg:
                    raise RuntimeError(f"crazyflow worker: {msg['error']}")
                return msg
        self.proc.wait()
        self._err.flush()
        tail = self.log.read_text()[-3000:] if self.log.is_file() else ""
        raise RuntimeError(f"the crazyflow worker ended (exit {self.proc.returncode}) without a reply; its log "
                           f"{self.log}:\n{tail}")

    def ask(self, command: str) -> dict:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=60)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
        self._err.close()


# --------------------------------------------------------------------------- figures


def slope(flops_by_batch: dict[int, float]) -> float:
    """FLOPs of one member-step: the slope of the program's count between the two smallest batch sizes >= 2
    (all sizes if fewer than two are; a single size: its count over the batch)."""
    bs = sorted(b for b, f in flops_by_batch.items() if np.isfinite(f))
    if len([b for b in bs if b >= 2]) >= 2:
        bs = [b for b in bs if b >= 2]
    if not bs:
        return float("nan")
    if len(bs) == 1:
        return flops_by_batch[bs[0]] / bs[0]
    b0, b1 = bs[0], bs[1]
    return (flops_by_batch[b1] - flops_by_batch[b0]) / (b1 - b0)


def spread(xs: list[float]) -> dict:
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs)}


def fmt_ratio(r: dict | None) -> str:
    return "" if r is None else f"{r['min']:.2f}/{r['median']:.2f}/{r['max']:.2f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="batch 2 and 4, float32, 1 round, 250 steps, no gradients (jaxrotor only unless "
                         "--peer-python is given)")
    ap.add_argument("--peer-python", default=None,
                    help="python of a virtual environment with crazyflow==0.4.0 (without it: jaxrotor only)")
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help=f"batch sizes (default {SIZES})")
    ap.add_argument("--dtypes", nargs="+", choices=("float32", "float64"), default=None)
    ap.add_argument("--rounds", type=int, default=None, help="interleaved timing rounds (default 5; --quick 1)")
    ap.add_argument("--no-grad", action="store_true", help="skip the gradient timing")
    ap.add_argument("--batching", choices=("vmap", "map_batch"), default="map_batch",
                    help="jaxrotor's batch: map_batch (default: split over the CPU devices, chunks of "
                         "jaxrotor.batch.CPU_CHUNK members each), or one jax.vmap")
    ap.add_argument("--cores", choices=("all", "1"), default="all",
                    help="CPU devices for jaxrotor: one per core (default, as the jaxrotor command), or 1")
    ap.add_argument("--out", default=None, help="write benchmark_peers.json here (default jaxrotor-out/benchmark_peers)")
    args = ap.parse_args(argv)
    if args.cores == "all":
        from jaxrotor.cli._setup import cpu_devices_flag

        cpu_devices_flag()  # before JAX's backend starts (the matmul peak below starts it)
    else:
        os.environ["JAXROTOR_CPU_DEVICES"] = "1"
    if args.sizes is not None and min(args.sizes) < 1:
        print(f"error: --sizes {args.sizes}: every batch size must be >= 1.", file=sys.stderr)
        return 2
    if args.peer_python is not None and not Path(args.peer_python).is_file():
        print(f"error: --peer-python {args.peer_python}: no such interpreter. Fix: create Crazyflow's venv "
              "(python -m venv /work/cfvenv && /work/cfvenv/bin/pip install crazyflow==0.4.0) and pass its python.",
              file=sys.stderr)
        return 2
    quick = args.quick
    sizes = sorted(set(args.sizes or (QUICK_SIZES if quick else SIZES)))
    dtypes = args.dtypes or (["float32"] if quick else ["float32", "float64"])
    rounds = args.rounds or (1 if quick else 5)
    grad_steps = 0 if (quick or args.no_grad) else GRAD_STEPS
    out = Path(args.out or ("jaxrotor-out/benchmark_peers" + ("_quick" if quick else "")))
    peer = args.peer_python
    plan = {n: steps_for(n, quick) for n in sizes}
    dev = jax.devices()[0]
    print(f"jax {jax.__version__} on {jax.default_backend()} ({dev.device_kind}; "
          f"{_platform.processor() or _platform.machine()}, {os.cpu_count()} CPU cores)")
    print("workload: Crazyflie-class quadrotors hovering at (0, 0, 1) m, started up to 0.1 m off, dt = 2 ms, "
          "final state only; steps per call " + ", ".join(f"batch {n}: {s}" for n, s in plan.items()))
    if peer is None:
        print("no --peer-python: jaxrotor only (no Crazyflow run, no ratios)")
    else:
        print(f"peer: Crazyflow via {peer} (_crazyflow_worker.py), interleaved per batch size, {rounds} rounds")

    checks = Checks("benchmark_peers")
    peak0 = matmul_peak(1024 if quick else MATMUL_N)
    rows, ratios, gradient, order, peer_info, jr_flops, peer_flops = [], [], {}, None, None, {}, {}
    jr_ok = {"nonfinite": 0, "diverged": 0, "worst_error_m": 0.0}
    cf_nonfinite = 0
    for dtype in dtypes:
        jax.config.update("jax_enable_x64", dtype == "float64")
        print(f"\n{dtype}: compiling ...", flush=True)
        jrs = Jaxrotor(dtype)
        jr_c = {}  # (loop, integ, n) -> compiled, dps
        for loop in LOOPS:
            for integ in INTEGRATORS:
                for n in sizes:
                    compiled, dps, c, fl, (p_end, div) = jrs.batched(loop, integ, n, plan[n], args.batching)
                    p = np.asarray(p_end, dtype=float)
                    jr_ok["nonfinite"] += int(np.sum(~np.all(np.isfinite(p), axis=1)))
                    jr_ok["diverged"] += int(np.sum(np.asarray(div)))
                    err = float(np.max(np.linalg.norm(p - np.array(HOVER), axis=1)))
                    jr_ok["worst_error_m"] = max(jr_ok["worst_error_m"], err if np.isfinite(err) else np.inf)
                    jr_c[(loop, integ, n)] = (compiled, dps)
                    rows.append({"dtype": dtype, "impl": "jaxrotor", "loop": loop, "integrator": integ, "batch": n,
                                 "steps": plan[n], "compile_s": c, "flops_program": fl, "final_error_m": err,
                                 "walls_s": []})
        for loop in LOOPS:
            for integ in INTEGRATORS:
                jr_flops[f"{dtype}/jaxrotor/{loop}/{integ}"] = jrs.flops_per_step(loop, integ)[0]
        grad = jrs.gradient(grad_steps) if grad_steps else None
        pw = None
        if peer is not None:
            t0 = time.perf_counter()
            pw = Peer(peer, dtype, plan, grad_steps, out / f"crazyflow_worker_{dtype}.log", FLOP_SIZES)
            peer_info = {"python": peer, "crazyflow": pw.ready["crazyflow"], "jax": pw.ready["jax"]}
            for integ, counts in pw.ready["flop_counts"].items():  # one-step programs at FLOP_SIZES
                peer_flops[f"{dtype}/crazyflow/crazyflow/{integ}"] = slope({int(k): v for k, v in counts.items()})
            print(f"  crazyflow worker ready in {time.perf_counter() - t0:.0f} s", flush=True)
            for c in pw.ready["configs"]:
                cf_nonfinite += int(not c["finite"])
                rows.append({"dtype": dtype, "impl": "crazyflow", "loop": "crazyflow", "integrator": c["integrator"],
                             "batch": c["batch"], "steps": c["steps"], "compile_s": c["compile_s"],
                             "build_s": c["build_s"], "flops_program": c["flops_program"],
                             "final_error_m": c["max_error_m"], "walls_s": []})
        mine = {(r["impl"], r["loop"], r["integrator"], r["batch"]): r for r in rows if r["dtype"] == dtype}
        grad_walls = {"jaxrotor_fwd": [], "jaxrotor_grad": [], "crazyflow_fwd": [], "crazyflow_grad": []}
        try:
            for k in range(rounds):
                print(f"  round {k + 1}/{rounds}", flush=True)
                for n in sizes:
                    reps = 3 if n <= 64 else 1
                    for loop in LOOPS:
                        for integ in INTEGRATORS:
                            compiled, dps = jr_c[(loop, integ, n)]
                            mine[("jaxrotor", loop, integ, n)]["walls_s"].append(timed(compiled, dps, reps=reps))
                    if pw is not None:
                        for integ, w in pw.ask(f"run {n}")["walls"].items():
                            mine[("crazyflow", "crazyflow", integ, n)]["walls_s"].append(w)
                if grad is not None:
                    grad_walls["jaxrotor_fwd"].append(timed(grad["fwd"], grad["dp"], reps=3))
                    grad_walls["jaxrotor_grad"].append(timed(grad["bwd"], grad["dp"], reps=3))
                    if pw is not None:
                        g = pw.ask("grad")["grad_walls"]
                        grad_walls["crazyflow_fwd"].append(g["fwd"])
                        grad_walls["crazyflow_grad"].append(g["bwd"])
        finally:
            if pw is not None:
                pw.close()
        if grad is not None:
            gj = {"steps": grad_steps, "compile_fwd_s": grad["compile_fwd_s"],
                  "compile_grad_s": grad["compile_grad_s"], "finite": grad["finite"],
                  "fwd_s": statistics.median(grad_walls["jaxrotor_fwd"]),
                  "grad_s": statistics.median(grad_walls["jaxrotor_grad"])}
            gj["grad_over_fwd"] = gj["grad_s"] / gj["fwd_s"]
            gradient[dtype] = {"jaxrotor": gj}
            if pw is not None and pw.ready.get("grad"):
                pg = pw.ready["grad"]
                gc = {"compile_fwd_s": pg["compile_fwd_s"], "compile_grad_s": pg["compile_grad_s"],
                      "finite": pg["finite"], "fwd_s": statistics.median(grad_walls["crazyflow_fwd"]),
                      "grad_s": statistics.median(grad_walls["crazyflow_grad"])}
                gc["grad_over_fwd"] = gc["grad_s"] / gc["fwd_s"]
                gradient[dtype]["crazyflow"] = gc
                gradient[dtype]["grad_ratio"] = spread([c / j for c, j in zip(grad_walls["crazyflow_grad"],
                                                                             grad_walls["jaxrotor_grad"])])
                cf_nonfinite += int(not pg["finite"])
        if dtype == "float64":
            order = order_check(jrs)
    peak = max(peak0, matmul_peak(1024 if quick else MATMUL_N))
    print(f"\nfloat32 matmul peak ({MATMUL_N if not quick else 1024}^2, best of start and end): "
          f"{peak / 1e9:.1f} GFLOP/s")

    # figures per row: median steps/s; FLOPs per member-step (slope over batch sizes); fraction of the peak
    flops_step = {**jr_flops, **peer_flops}
    for r in rows:
        r["wall_s"] = statistics.median(r["walls_s"])
        r["steps_per_s"] = r["batch"] * r["steps"] / r["wall_s"]
        r["flops_per_step"] = flops_step["/".join((r["dtype"], r["impl"], r["loop"], r["integrator"]))]
        r["peak_fraction"] = r["flops_per_step"] * r["steps_per_s"] / peak
    by = {(r["dtype"], r["impl"], r["loop"], r["integrator"], r["batch"]): r for r in rows}
    if peer is not None:
        for dtype in dtypes:
            for loop in LOOPS:
                for integ in INTEGRATORS:
                    for n in sizes:
                        j, c = by[(dtype, "jaxrotor", loop, integ, n)], by[(dtype, "crazyflow", "crazyflow", integ, n)]
                        per_round = [wc / wj for wj, wc in zip(j["walls_s"], c["walls_s"])]
                        ratios.append({"dtype": dtype, "loop": loop, "integrator": integ, "batch": n,
                                       "steps": plan[n], **spread(per_round), "rounds": per_round})
    rat = {(q["dtype"], q["loop"], q["integrator"], q["batch"]): q for q in ratios}

    # tables
    for dtype in dtypes:
        print(f"\n{dtype}: member-steps/s (median of {rounds} rounds), compile [s]"
              + ("; ratio jaxrotor/crazyflow min/median/max" if peer else ""))
        head = f"{'batch':>6} {'integ':>5} {'steps':>5} | {'continuous':>17} | {'discrete':>17}"
        if peer:
            head += f" | {'crazyflow':>17} | {'cont/cf':>14} | {'disc/cf':>14}"
        print(head)
        for integ in INTEGRATORS:
            for n in sizes:
                cells = [by[(dtype, "jaxrotor", loop, integ, n)] for loop in LOOPS]
                line = f"{n:>6} {integ:>5} {plan[n]:>5} | " + " | ".join(
                    f"{c['steps_per_s'] / 1e6:>8.3f}M {c['compile_s']:>5.1f}s" for c in cells)
                if peer:
                    c = by[(dtype, "crazyflow", "crazyflow", integ, n)]
                    line += f" | {c['steps_per_s'] / 1e6:>8.3f}M {c['compile_s']:>5.1f}s | " + " | ".join(
                        f"{fmt_ratio(rat[(dtype, loop, integ, n)]):>14}" for loop in LOOPS)
                print(line)
    print("\nFLOPs per member-step (XLA cost_analysis, slope over batch) and best fraction of the float32 peak:")
    for key in sorted(flops_step):
        best = max((r for r in rows if "/".join((r["dtype"], r["impl"], r["loop"], r["integrator"])) == key),
                   key=lambda r: r["peak_fraction"])
        print(f"  {key:<32} {flops_step[key]:>8.0f} FLOP  {100 * best['peak_fraction']:6.2f} % "
              f"(batch {best['batch']}, {best['steps_per_s'] / 1e6:.3f} M steps/s)")
    for dtype, g in gradient.items():
        j = g["jaxrotor"]
        line = (f"gradient {dtype} (batch 1, {j['steps']} steps, discrete RK4): jaxrotor compile {j['compile_grad_s']:.1f} s,"
                f" grad {j['grad_s'] * 1e3:.1f} ms, grad/fwd {j['grad_over_fwd']:.2f}")
        if "crazyflow" in g:
            c = g["crazyflow"]
            line += (f"; crazyflow compile {c['compile_grad_s']:.1f} s, grad {c['grad_s'] * 1e3:.1f} ms, grad/fwd "
                     f"{c['grad_over_fwd']:.2f}; gradient ratio {fmt_ratio(g['grad_ratio'])}")
        print(line)

    # targets (reported, not enforced)
    targets = {}
    big = TARGETS["large_batch"]
    if peer is not None:
        disc = [q for q in ratios if q["loop"] == "discrete"]
        worst = min(disc, key=lambda q: q["median"])
        targets["discrete_ge_1x_every_batch"] = {
            "measured": worst["median"], "target": TARGETS["ratio"], "op": ">=",
            "where": f"{worst['dtype']} {worst['integrator']} batch {worst['batch']}"}
        large = [q for q in disc if q["batch"] >= big]
        if large:
            w = min(large, key=lambda q: q["median"])
            targets[f"discrete_ge_1.5x_batch_{big}_plus"] = {
                "measured": w["median"], "target": TARGETS["ratio_large"], "op": ">=",
                "where": f"{w['dtype']} {w['integrator']} batch {w['batch']}"}
        cont = [q for q in ratios if q["loop"] == "continuous"]
        w = min(cont, key=lambda q: q["median"])
        targets["continuous_ge_1x_every_batch"] = {"measured": w["median"], "target": TARGETS["ratio"], "op": ">=",
                                                   "where": f"{w['dtype']} {w['integrator']} batch {w['batch']}"}
        if 1 in sizes:
            single = [q for q in disc if q["batch"] == 1]
            w = min(single, key=lambda q: q["median"])
            targets["single_flight_ge_1x"] = {"measured": w["median"], "target": TARGETS["single_flight"], "op": ">=",
                                              "where": f"{w['dtype']} {w['integrator']} discrete, {plan[1]} steps"}
    f32 = [r for r in rows if r["dtype"] == "float32" and r["impl"] == "jaxrotor" and r["integrator"] == "rk4"]
    if f32:
        floor_b = 1024 if max(sizes) >= 1024 else max(sizes)
        w = max((r for r in f32 if r["batch"] >= floor_b), key=lambda r: r["peak_fraction"])
        targets["rk4_float32_peak_fraction"] = {"measured": w["peak_fraction"], "target": TARGETS["peak_fraction"],
                                                "op": ">=", "where": f"{w['loop']} batch {w['batch']}"}
    if 1 in sizes:
        w = max((r for r in rows if r["impl"] == "jaxrotor" and r["batch"] == 1), key=lambda r: r["compile_s"])
        targets["flight_compile_s"] = {"measured": w["compile_s"], "target": TARGETS["compile_s"], "op": "<=",
                                       "where": f"{w['dtype']} {w['loop']} {w['integrator']}, {plan[1]} steps"}
    for dtype, g in gradient.items():
        targets[f"{dtype}_gradient_compile_s"] = {"measured": g["jaxrotor"]["compile_grad_s"],
                                                  "target": TARGETS["grad_compile_s"], "op": "<=", "where": "this flight"}
        targets[f"{dtype}_gradient_over_forward"] = {"measured": g["jaxrotor"]["grad_over_fwd"],
                                                     "target": TARGETS["grad_over_fwd"], "op": "<=",
                                                     "where": "this 2 s hover (issue: 45 s flight, 20 parameters)"}
    print()
    for name, t in targets.items():
        t["met"] = bool(t["measured"] >= t["target"] if t["op"] == ">=" else t["measured"] <= t["target"])
        print(f"target {name}: measured {t['measured']:.4g} ({t['where']}), target {t['op']} {t['target']:g}: "
              f"{'MET' if t['met'] else 'NOT MET'}")
    if peer is None:
        print("(no Crazyflow run: the ratio targets are not evaluated)")

    # checks (correctness; exit 1 on failure)
    print()
    checks.add("jaxrotor: members with a non-finite final state", jr_ok["nonfinite"], "<=", 0)
    checks.add("jaxrotor: members flagged diverged", jr_ok["diverged"], "<=", 0)
    checks.add("jaxrotor: worst final distance from the hover point [m]", jr_ok["worst_error_m"], "<=", HOVER_TOL)
    for dtype, g in gradient.items():
        checks.add(f"{dtype}: jaxrotor gradient finite", int(g["jaxrotor"]["finite"]), "==", 1)
    if order is not None:
        checks.add("float64: flights of the order check flagged diverged", int(order["diverged"]), "<=", 0)
        checks.add("float64: Euler error ratio dt -> dt/2 (first order: 2)", order["euler_ratio"], ">=", EULER_ORDER[0])
        checks.add("float64: Euler error ratio dt -> dt/2, at most", order["euler_ratio"], "<=", EULER_ORDER[1])
        checks.add("float64: RK4 error ratio dt -> dt/2 (fourth order: 16)", order["rk4_ratio"], ">=", RK4_ORDER[0])
        checks.add("float64: RK4 error ratio dt -> dt/2, at most", order["rk4_ratio"], "<=", RK4_ORDER[1])
        checks.add("float64: |Euler - RK4| final position at dt, over Euler's error", order["euler_vs_rk4_m"]
                   / order["errors_m"]["euler_dt"], "<=", 1.1)
    if peer is not None:
        checks.add("crazyflow: flights with a non-finite state", cf_nonfinite, "<=", 0)

    record = {"quick": quick, "device": jax.default_backend(), "device_kind": dev.device_kind,
              "cpu_count": os.cpu_count(), "jax": jax.__version__, "dt": DT, "control_rate": RATE,
              "sizes": sizes, "dtypes": dtypes, "rounds": rounds, "batching": args.batching, "jax_devices": len(jax.devices()), "plan": {str(k): v for k, v in plan.items()},
              "peer": peer_info, "peer_ran": peer is not None, "peak_flops_f32": peak, "matmul_n":
              1024 if quick else MATMUL_N, "flops_per_step": flops_step, "rows": rows, "ratios": ratios,
              "gradient": gradient, "order_check": order, "targets": targets}
    code = checks.finish(out / "benchmark_peers.json", record)
    print(f"outputs written to {out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
