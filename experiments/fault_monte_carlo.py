"""Monte Carlo of random rotor faults on the paper hexarotor in hover, flown as one vmapped batch.

The vehicle and controller are ``configs/paper_reproduction.toml`` (Table II hexarotor, Table III gains, exact
pseudo-inverse with unbounded inputs, ideal motors), hovering at 1 m for ``HORIZON`` s and integrated by Tsit5
with a fixed 2 ms step (the setting of ``tests/integration/test_fault_flights.py``). Flight ``i`` gets its own
``jax.random`` key (``Flight.key``), from which :func:`jaxrotor.fault_stats.random_fault_mix` draws its fault: a
uniformly random rotor, a time uniform in ``T_RANGE``, a whole rotor loss with probability ``LOSS_SHARE`` and
otherwise a partial loss whose effectiveness is uniform in ``[0, 1]``; the flight computer learns of it after 50 ms and
releases yaw when the fault needs it (``release_yaw = "auto"``). All ``N`` flights (``--quick``: 16) are one
``jax.jit(jax.vmap(member))`` over the keys: one compilation, one call; each member is judged in the same program
by :func:`jaxrotor.verdict.fault_outcome_code` (3 s after the fault: position within 0.1 m, attitude within
0.05 rad per axis).

Reported: the outcome counts (full_pose / yaw_released / lost), the success rate (outcome not ``lost``) with its
Wilson 95 % interval (:func:`jaxrotor.fault_stats.binomial_interval`), the counts per fault kind, the compile
time, the wall time of the batch and flights per second. ``fault_monte_carlo.png``: each flight's outcome against
the effectiveness its fault left and the rotor it hit, and the outcome counts per rotor.

Checks (one ``check ...: PASS/FAIL`` line each; exit 1 if any fails):

* a few members (``SINGLES``, ``--quick``: 4; the first of each fault kind and outcome, then random ones) are
  flown again alone, with the fault as the event of its own kind (:func:`jaxrotor.fault_stats.single_fault`:
  ``rotor_loss`` for a loss), and judged by the one-flight :func:`jaxrotor.verdict.fault_outcome`: every word
  agrees with the batch's code and the final positions agree to ``AGREE`` m;
* every partial loss that leaves at least ``HOLD_ETA`` of the rotor's thrust holds full pose (the hexarotor keeps
  rank 6 and its inputs are unbounded: the allocation only scales the rotor's column);
* no whole rotor loss holds full pose (five rotors leave ``G`` rank 5).

Run::

    python experiments/fault_monte_carlo.py            # N = 1024 (760 s on 2 CPU cores shared with other jobs)
    python experiments/fault_monte_carlo.py --quick    # N = 16 (about 1 min)
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

import jax.numpy as jnp
import numpy as np
from _checks import Checks

import jaxrotor as jr
from jaxrotor.fault_stats import binomial_interval, outcome_counts, random_fault_mix, single_fault
from jaxrotor.io.config import loads
from jaxrotor.so3 import attitude_error
from jaxrotor.verdict import FAULT_OUTCOMES, fault_outcome, fault_outcome_code

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "paper_reproduction.toml"
N, N_QUICK = 1024, 16  # flights in the batch
SINGLES, SINGLES_QUICK = 8, 4  # members flown again alone
HORIZON = 5.0  # s: the latest fault is judged from 4.5 s on
T_RANGE = (0.5, 1.5)  # s
LOSS_SHARE = 0.5  # probability of a whole rotor loss
DETECTION_DELAY = 0.05  # s
AGREE = 1e-9  # m: a member flown alone ends where it ended in the batch
HOLD_ETA = 0.2  # partial losses leaving at least this effectiveness must hold full pose


def hover_config(horizon: float):
    """The paper hexarotor and Table III controller of ``paper_reproduction.toml``, hovering at 1 m."""
    text = CONFIG.read_text().replace('compare = "paper_realistic.toml"', "")
    text = text[:text.index("[reference]")] + f"""[reference]
kind = "hover"
position = [0.0, 0.0, 1.0]
duration = {horizon}

[solver]
kind = "tsit5"
adaptive = false
dt = 0.002
"""
    return loads(text, CONFIG.name)


def build(horizon: float):
    """``(config, member)``: ``member(key)`` flies the fault drawn from ``key`` and returns its record."""
    cfg = hover_config(horizon)
    n_rotors = cfg.platform.n_rotors

    def member(key):
        faults = random_fault_mix(key, n_rotors, t_range=T_RANGE, loss_share=LOSS_SHARE,
                                  detection_delay=DETECTION_DELAY)
        flight = dataclasses.replace(cfg.flight, faults=faults, key=key)
        traj = jr.fly(cfg.platform, cfg.controller, flight)
        e_R = attitude_error(traj.R[-1], traj.R_ref[-1])
        return {"code": fault_outcome_code(traj, faults), "faults": faults, "p_end": traj.p[-1],
                "position_error_end": jnp.linalg.norm(traj.p_ref[-1] - traj.p[-1]),
                "yaw_error_end": jnp.abs(e_R[2]), "diverged": traj.diverged}

    return cfg, member


def pick_singles(kinds: list[str], words: list[str], count: int, seed: int) -> list[int]:
    """Members to fly alone: the first of each (kind, outcome) pair, then random others, ``count`` in all."""
    picked: list[int] = []
    seen = set()
    for i, pair in enumerate(zip(kinds, words)):
        if pair not in seen:
            seen.add(pair)
            picked.append(i)
    rest = [i for i in np.random.default_rng(seed).permutation(len(kinds)).tolist() if i not in picked]
    return sorted((picked + rest)[:max(count, 1)])


def plot(path: Path, rotor, eta, loss, words):
    """Outcome against effectiveness and rotor; outcome counts per rotor."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"full_pose": "tab:green", "yaw_released": "tab:orange", "lost": "tab:red"}
    jitter = np.random.default_rng(0).uniform(-0.3, 0.3, len(rotor))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    for w in FAULT_OUTCOMES:
        for is_loss, marker in ((False, "o"), (True, "x")):
            m = (words == w) & (loss == is_loss)
            if m.any():
                ax.scatter(eta[m], rotor[m] + 1 + jitter[m], s=10, marker=marker, color=colours[w],
                           label=f"{w} ({'rotor loss' if is_loss else 'partial loss'}, {int(m.sum())})")
    ax.set_xlabel("effectiveness left to the faulty rotor")
    ax.set_ylabel("faulty rotor")
    ax.set_yticks(range(1, 7))
    ax.set_title("outcome of each flight")
    ax.legend(fontsize=7, loc="upper right")
    bottom = np.zeros(6)
    for w in FAULT_OUTCOMES:
        c = np.array([np.sum((rotor == r) & (words == w)) for r in range(6)])
        bx.bar(np.arange(1, 7), c, bottom=bottom, color=colours[w], label=w)
        bottom += c
    bx.set_xlabel("faulty rotor")
    bx.set_ylabel("flights")
    bx.set_title("outcomes per rotor")
    bx.legend(fontsize=8)
    fig.suptitle(f"paper hexarotor in hover, {len(rotor)} random rotor faults (one vmapped batch)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"{N_QUICK} flights, {SINGLES_QUICK} flown alone")
    ap.add_argument("--n", type=int, default=None, help=f"flights in the batch (default {N}; --quick {N_QUICK})")
    ap.add_argument("--seed", type=int, default=0, help="seed of the flights' keys")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/fault_monte_carlo[_quick])")
    args = ap.parse_args(argv)
    n = args.n or (N_QUICK if args.quick else N)
    if n < 1:
        print(f"error: --n {n}: the batch needs at least one flight.", file=sys.stderr)
        return 2
    out = Path(args.out or os.environ.get("JAXROTOR_OUT") or
               ("jaxrotor-out/fault_monte_carlo" + ("_quick" if args.quick else "")))
    out.mkdir(parents=True, exist_ok=True)
    print(f"jax {jax.__version__} on {jax.default_backend()} ({os.cpu_count()} CPU cores)")
    print(f"paper hexarotor hovering {HORIZON:g} s (Tsit5, dt 2 ms), {n} random faults at {T_RANGE[0]:g}-"
          f"{T_RANGE[1]:g} s: rotor loss with probability {LOSS_SHARE:g}, else partial loss with effectiveness "
          "in [0, 1]")

    cfg, member = build(HORIZON)
    keys = jax.random.split(jax.random.PRNGKey(args.seed), n)
    batched = jax.jit(jax.vmap(member))
    t0 = time.perf_counter()
    compiled = batched.lower(keys).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = jax.block_until_ready(compiled(keys))
    wall_s = time.perf_counter() - t0
    codes = np.asarray(res["code"])
    faults = res["faults"]
    rotor = np.asarray(faults.rotor)[:, 0]
    eta = np.asarray(faults.effectiveness)[:, 0]
    t_fault = np.asarray(faults.time)[:, 0]
    loss = eta == 0.0
    words = np.asarray([FAULT_OUTCOMES[c] for c in codes])
    kinds = ["rotor_loss" if x else "rotor_partial" for x in loss]
    counts = outcome_counts(codes)
    held = n - counts["lost"]
    low, high = binomial_interval(held, n)
    by_kind = {k: outcome_counts(codes[np.asarray(kinds) == k]) for k in ("rotor_loss", "rotor_partial")}
    print(f"compile {compile_s:.1f} s, batch of {n} flown in {wall_s:.1f} s: {n / wall_s:.2f} flights/s")
    print(f"outcomes: {counts}; by kind: {by_kind}")
    print(f"success rate (not lost) {held}/{n} = {held / n:.4f}, Wilson 95 % interval [{low:.4f}, {high:.4f}]")

    checks = Checks("fault_monte_carlo")
    chosen = pick_singles(kinds, words.tolist(), SINGLES_QUICK if args.quick else SINGLES, args.seed)
    singles = []
    for i in chosen:
        flight = dataclasses.replace(cfg.flight, faults=single_fault(faults, i), key=keys[i])
        traj = jr.fly(cfg.platform, cfg.controller, flight)
        word = fault_outcome(traj, flight)
        dp = float(np.max(np.abs(np.asarray(traj.p[-1]) - np.asarray(res["p_end"])[i])))
        singles.append({"member": i, "kind": kinds[i], "rotor_number": int(rotor[i]) + 1, "time_s": float(t_fault[i]),
                        "effectiveness": float(eta[i]), "batch_outcome": str(words[i]), "single_outcome": word,
                        "final_position_difference_m": dp})
        print(f"  member {i}: {kinds[i]} of rotor {rotor[i] + 1} at {t_fault[i]:.3f} s, eta {eta[i]:.3f}: batch "
              f"{words[i]}, alone {word}, |dp| {dp:.2e} m")
    disagree = sum(s["batch_outcome"] != s["single_outcome"] for s in singles)
    checks.add(f"batch vs {len(singles)} flights flown alone: outcomes that differ", disagree, "<=", 0)
    checks.add("batch vs flights flown alone: final position difference [m]",
               max(s["final_position_difference_m"] for s in singles), "<=", AGREE)
    strong = ~loss & (eta >= HOLD_ETA)
    if strong.any():
        checks.add(f"partial losses leaving >= {HOLD_ETA:g} of the thrust that hold full pose (share)",
                   float(np.mean(words[strong] == "full_pose")), ">=", 1.0, f"{int(strong.sum())} flights")
    if loss.any():
        checks.add("rotor losses that hold full pose", int(np.sum(words[loss] == "full_pose")), "<=", 0,
                   f"{int(loss.sum())} flights")

    plot(out / "fault_monte_carlo.png", rotor, eta, loss, words)
    members = [{"rotor_number": int(r) + 1, "time_s": float(t), "effectiveness": float(e), "kind": k, "outcome": str(w),
                "position_error_end_m": float(pe), "yaw_error_end_rad": float(ye), "diverged": bool(d)}
               for r, t, e, k, w, pe, ye, d in zip(rotor, t_fault, eta, kinds, words,
                                                   np.asarray(res["position_error_end"]),
                                                   np.asarray(res["yaw_error_end"]), np.asarray(res["diverged"]))]
    record = {"quick": args.quick, "n": n, "seed": args.seed, "device": jax.default_backend(),
              "cpu_count": os.cpu_count(), "horizon_s": HORIZON, "t_range_s": list(T_RANGE), "loss_share": LOSS_SHARE,
              "detection_delay_s": DETECTION_DELAY, "dt_s": 0.002, "counts": counts, "counts_by_kind": by_kind,
              "success_rate": held / n, "wilson_95": [low, high], "compile_s": compile_s, "wall_s": wall_s,
              "flights_per_s": n / wall_s, "diverged": int(np.sum(np.asarray(res["diverged"]))),
              "singles": singles, "members": members}
    code = checks.finish(out / "fault_monte_carlo.json", record)
    print(f"outputs written to {out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
