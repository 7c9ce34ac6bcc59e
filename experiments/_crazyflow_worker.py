"""Crazyflow side of ``experiments/benchmark_peers.py``: runs in Crazyflow's own virtual environment.

Not meant to be run by hand. ``benchmark_peers.py`` starts it as::

    PEER_PYTHON experiments/_crazyflow_worker.py --dtype float32 --plan '{"1": 5000, "64": 5000}' \
        --integrators euler rk4 [--grad-steps 1000]

with ``PEER_PYTHON`` the interpreter of a virtual environment holding ``crazyflow==0.4.0`` (its jax pin
differs from jaxrotor's, so it cannot share jaxrotor's environment). The worker imports nothing from
jaxrotor; it speaks a line protocol on stdin/stdout, every reply one line ``@@peer <json>`` (other lines
on stdout, e.g. a library's import notice, are ignored by the parent):

* on start it builds one ``crazyflow.sim.Sim`` per integrator and batch size (``n_worlds`` = the batch, one
  drone per world, ``Control.state`` on ``Dynamics.first_principles``: the Mellinger position, attitude and
  force-torque stages at 500 Hz, the sim at 500 Hz, i.e. dt = 2 ms and one controller evaluation per step),
  starts every world at its hover set point ``(0, 0, 1) m`` shifted along x by ``linspace(-0.1, 0.1)`` m
  with the rotors at the hover speed, compiles ``sim._step`` (the jitted ``lax.scan`` that ``sim.step(n)``
  runs) for the plan's step count, runs it once, and replies ``{"ready": ..., "configs": [...],
  "flop_counts": ...}`` with the build and compile times, the final positions' spread, and XLA's FLOP count
  of a one-step program at each of ``--flop-sizes`` (the parent takes the slope over the batch);
* ``run N`` (a batch size) times each integrator's compiled step at that batch (the best of 3 calls at
  N <= 64, one call above, as the parent times jaxrotor) and replies ``{"walls": {"euler": s, "rk4": s}}``;
* ``grad`` (with ``--grad-steps``) times the batch-1 forward and gradient (reverse mode) of the final
  position error with respect to the initial position, RK4 (best of 3 calls each), and replies their walls;
* ``quit`` ends it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time


def reply(obj) -> None:
    sys.stdout.write("@@peer " + json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", choices=("float32", "float64"), required=True)
    ap.add_argument("--plan", required=True, help='JSON {batch: steps per call}')
    ap.add_argument("--integrators", nargs="+", default=["euler", "rk4"])
    ap.add_argument("--grad-steps", type=int, default=0)
    ap.add_argument("--flop-sizes", type=int, nargs="*", default=[2, 4])
    args = ap.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", args.dtype == "float64")
    import jax.numpy as jnp
    import numpy as np

    # the Sim's build prints MuJoCo notices on stdout; keep the protocol channel clean
    with contextlib.redirect_stdout(sys.stderr):
        import crazyflow
        from crazyflow.sim import Sim

    plan = {int(k): int(v) for k, v in json.loads(args.plan).items()}
    dtype = jnp.dtype(args.dtype)

    def build(n: int, integrator: str):
        with contextlib.redirect_stdout(sys.stderr):
            sim = Sim(n_worlds=n, n_drones=1, control="state", dynamics="first_principles", integrator=integrator,
                      freq=500, state_freq=500, attitude_freq=500, body_rate_freq=500, force_torque_freq=500)
        prm = sim.data.params
        # hover rotor speed [RPM]: k0 + k1 w + k2 w^2 = m g / 4
        k0, k1, k2 = (float(np.asarray(prm.rpm2thrust)[..., i].ravel()[0]) for i in range(3))
        f = float(np.asarray(prm.mass).ravel()[0]) * float(-np.asarray(prm.gravity_vec)[2]) / 4.0
        w_h = (-k1 + np.sqrt(k1 * k1 - 4.0 * k2 * (k0 - f))) / (2.0 * k2)
        cmd = np.zeros((n, 1, 16))
        cmd[..., 2], cmd[..., 12] = 1.0, 1.0  # position (0, 0, 1) m, identity attitude (x, y, z, w)
        sim.state_control(jnp.asarray(cmd, dtype=dtype))
        st = sim.data.states
        pos = np.zeros((n, 1, 3))
        pos[:, 0, 0] = np.linspace(-0.1, 0.1, n) if n > 1 else 0.05
        pos[..., 2] = 1.0
        st = st.replace(pos=jnp.asarray(pos, dtype=dtype), rotor_vel=jnp.full((n, 1, 4), w_h, dtype=dtype))
        return sim, sim.data.replace(states=st)

    sims, t_build = {}, {}
    configs = []
    for integ in args.integrators:
        for n, steps in plan.items():
            t0 = time.perf_counter()
            sim, data = build(n, integ)
            t_build[(integ, n)] = time.perf_counter() - t0
            t0 = time.perf_counter()
            compiled = sim._step.lower(data, n_steps=steps).compile()
            t_compile = time.perf_counter() - t0
            out = jax.block_until_ready(compiled(data))
            p = np.asarray(out.states.pos, dtype=float).reshape(n, 3)
            cost = compiled.cost_analysis()
            cost = cost[0] if isinstance(cost, list) else cost
            sims[(integ, n)] = (compiled, data)
            configs.append({"integrator": integ, "batch": n, "steps": steps, "build_s": t_build[(integ, n)],
                            "compile_s": t_compile, "flops_program": float(cost.get("flops", float("nan"))),
                            "finite": bool(np.all(np.isfinite(p))),
                            "max_error_m": float(np.max(np.linalg.norm(p - np.array([0.0, 0.0, 1.0]), axis=1)))})
    flop_counts = {}  # XLA's FLOP count of a one-step program (no step loop) per integrator and batch size
    for integ in args.integrators:
        flop_counts[integ] = {}
        for n in args.flop_sizes:
            sim, data = build(n, integ)
            cost = sim._step.lower(data, n_steps=1).compile().cost_analysis()
            cost = cost[0] if isinstance(cost, list) else cost
            flop_counts[integ][n] = float(cost.get("flops", float("nan")))
    grad = None
    if args.grad_steps:
        sim, data = build(1, "rk4")

        def final_error(dp):
            st = data.states
            d = data.replace(states=st.replace(pos=st.pos + dp))
            out = sim._step(d, n_steps=args.grad_steps)
            return jnp.sum((out.states.pos - jnp.asarray([0.0, 0.0, 1.0], dtype=dtype)) ** 2)

        dp = jnp.zeros((1, 1, 3), dtype=dtype)
        t0 = time.perf_counter()
        fwd = jax.jit(final_error).lower(dp).compile()
        c_fwd = time.perf_counter() - t0
        t0 = time.perf_counter()
        bwd = jax.jit(jax.grad(final_error)).lower(dp).compile()
        c_grad = time.perf_counter() - t0
        g = np.asarray(jax.block_until_ready(bwd(dp)), dtype=float)
        jax.block_until_ready(fwd(dp))
        grad = {"fwd": fwd, "bwd": bwd, "dp": dp, "compile_fwd_s": c_fwd, "compile_grad_s": c_grad,
                "finite": bool(np.all(np.isfinite(g)))}
    reply({"ready": True, "crazyflow": getattr(crazyflow, "__version__", "0.4.0"), "jax": jax.__version__,
           "dtype": args.dtype, "configs": configs, "flop_counts": flop_counts,
           "grad": None if grad is None else {k: grad[k] for k in ("compile_fwd_s", "compile_grad_s", "finite")}})

    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "quit":
            break
        if cmd[0] == "run":
            n = int(cmd[1])
            walls = {}
            for integ in args.integrators:
                compiled, data = sims[(integ, n)]
                walls[integ] = float("inf")
                for _ in range(3 if n <= 64 else 1):  # as the parent times jaxrotor
                    t0 = time.perf_counter()
                    jax.block_until_ready(compiled(data))
                    walls[integ] = min(walls[integ], time.perf_counter() - t0)
            reply({"walls": walls})
        elif cmd[0] == "grad" and grad is not None:
            walls = {}
            for name in ("fwd", "bwd"):
                walls[name] = float("inf")
                for _ in range(3):
                    t0 = time.perf_counter()
                    jax.block_until_ready(grad[name](grad["dp"]))
                    walls[name] = min(walls[name], time.perf_counter() - t0)
            reply({"grad_walls": walls})
        else:
            reply({"error": f"unknown command {line.strip()!r}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
