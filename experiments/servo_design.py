"""The slowest tilt servo that still holds the full-pose manoeuvre: found by gradient, checked by a sweep.

The per-arm tilting hexarotor ``CS_αi-Ting_6R`` of ``configs/tilting_hex_fullpose.toml``
(extended-variable allocation, fully actuated controller, first-order rate-limited servos
``angle_dot = clip((command - angle) / tau_s, -r, r)``) flies the first part of its manoeuvre:
the minimum-jerk pitch ramp to 30 deg and the start of the hold (``--quick``: 3 s; full: the
ramp, the 10 s hold and the ramp back, 14 s). A slower servo (larger ``tau_s``) leaves the arms
behind the allocator's commands; the speeds are allocated at the angles the arms have, and
the tracking error grows with ``tau_s``. The design question: the largest ``tau_s`` whose
flight stays within the tracking bound

    e(tau_s) = mean_t |p_r(t) - p(t)| <= e_max = 1 cm

(the position target of the full-pose hold; the rate limit ``r`` stays at the config's
6 rad/s). Two independent answers:

1. **Gradient**: ``g(x) = e(exp x) - e_max`` in ``x = ln tau_s`` and its derivative
   ``dg/dx = tau_s de/dtau_s``, forward-mode (``jax.jvp``) through the whole closed-loop
   flight (fixed-step Heun, 5 ms: non-negative weights, so a rate-clipped servo never
   overshoots its limit). A safeguarded Newton iteration on ``g`` inside the bracket
   ``[ln 0.01, ln 2]`` s (a Newton step that leaves the bracket, or meets a non-increasing
   ``g``, is replaced by bisection) gives ``tau_s*``. Its derivative is checked against a
   central difference of ``e`` at ``tau_s*``.
2. **Sweep**: ``e`` on a log-spaced grid of ``tau_s`` (every point the same compiled flight);
   the boundary cell is ``[tau_j, tau_j+1]`` with ``e(tau_j) <= e_max < e(tau_j+1)``.

Checks (``check ...: PASS/FAIL``; exit 1 on a failure): ``tau_s*`` lies in the sweep's boundary
cell (agreement within one cell); ``|g(tau_s*)| <= 1e-6 e_max``; the flight at ``tau_s*`` has no
rotor saturation and did not diverge; the sweep's ``e`` increases along the grid; the
derivative agrees with the central difference to 1e-4 (relative).

Run::

    python experiments/servo_design.py            # 14 s manoeuvre, 16-point sweep
    python experiments/servo_design.py --quick    # 3 s, 8-point sweep
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import diffrax
import equinox as eqx
import jax.numpy as jnp
import numpy as np
from _checks import Checks

import jaxrotor as jr
from jaxrotor.io import config as cfg
from jaxrotor.metrics import mean_norm, orientation_error, position_error

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "tilting_hex_fullpose.toml"
BOUND = 0.01  # m: mean position error of the full-pose hold
BRACKET = (0.01, 2.0)  # s: servo time constants searched


def make_flight(quick: bool):
    """The config's vehicle, controller and flight, cut to the horizon, on fixed Heun steps of 5 ms."""
    conf = cfg.load(CONFIG).with_t1(3.0 if quick else 14.0)
    fl = dataclasses.replace(conf.flight, save_dt=0.02,
                             integrator=jr.Integrator(solver=diffrax.Heun(), adaptive=False, dt=0.005))
    return conf, fl


def make_evaluate(conf, fl):
    """``x = ln tau_s -> (e, de/dx, attitude MAE, saturated share, diverged)``, one compiled function."""

    def error(x):
        f = eqx.tree_at(lambda f: f.actuators.servo.time_constant, fl, jnp.exp(x))
        tr = jr.fly(conf.platform, conf.controller, f)
        aux = jnp.stack([mean_norm(orientation_error(tr)), jnp.mean(jnp.any(tr.saturated, axis=-1)),
                         tr.diverged.astype(x.dtype)])
        return mean_norm(position_error(tr)), aux

    @jax.jit
    def evaluate(x):
        (e, aux), (de, _) = jax.jvp(error, (x,), (jnp.ones_like(x),))
        return e, de, aux

    return lambda x: tuple(np.asarray(a) for a in evaluate(jnp.asarray(x, dtype=jnp.float64)))


def newton_search(evaluate, bound: float, bracket=BRACKET, tol: float = 1e-10, max_iter: int = 30):
    """Safeguarded Newton on ``g(x) = e(exp x) - bound`` in ``[ln lo, ln hi]``; returns ``(tau*, history)``."""
    lo, hi = (math.log(b) for b in bracket)
    g_lo = float(evaluate(lo)[0]) - bound
    g_hi = float(evaluate(hi)[0]) - bound
    if not (g_lo < 0 < g_hi):
        raise RuntimeError(f"servo_design: the bracket {bracket} s does not contain the boundary "
                           f"(e - e_max = {g_lo:.3g}, {g_hi:.3g} m). Fix: widen BRACKET.")
    x = 0.5 * (lo + hi)
    history = []
    for _ in range(max_iter):
        e, de, _ = evaluate(x)
        g, dg = float(e) - bound, float(de)
        history.append({"tau_s": math.exp(x), "e": float(e), "de_dlntau": dg})
        if abs(g) <= tol * bound:
            break
        if g < 0:
            lo = x
        else:
            hi = x
        step = x - g / dg if dg > 0 else None
        x = step if step is not None and lo < step < hi else 0.5 * (lo + hi)
    return math.exp(x), history


def sweep(evaluate, bound: float, n: int):
    """``e`` on ``n`` log-spaced time constants over :data:`BRACKET`; the boundary cell ``(tau_j, tau_j+1)``."""
    taus = np.geomspace(*BRACKET, n)
    errs = np.array([float(evaluate(math.log(t))[0]) for t in taus])
    over = np.nonzero(errs > bound)[0]
    j = int(over[0]) - 1 if over.size else n - 1
    cell = (float(taus[j]), float(taus[j + 1])) if 0 <= j < n - 1 else (float("nan"), float("nan"))
    return taus, errs, cell


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 s horizon, 8-point sweep")
    ap.add_argument("--out", default="servo_design-out", help="output folder")
    args = ap.parse_args(argv)
    chk = Checks("servo_design")
    conf, fl = make_flight(args.quick)
    evaluate = make_evaluate(conf, fl)
    t0 = time.perf_counter()
    tau, history = newton_search(evaluate, BOUND)
    t_search = time.perf_counter() - t0
    e, de, aux = evaluate(math.log(tau))
    h = 1e-4
    fd = (float(evaluate(math.log(tau) + h)[0]) - float(evaluate(math.log(tau) - h)[0])) / (2 * h)
    t0 = time.perf_counter()
    taus, errs, cell = sweep(evaluate, BOUND, 8 if args.quick else 16)
    t_sweep = time.perf_counter() - t0
    servo = fl.actuators.servo
    rec = {
        "quick": args.quick, "horizon_s": fl.end_time, "bound_m": BOUND, "rate_limit": float(servo.rate_limit),
        "config_time_constant": float(servo.time_constant),
        "found_time_constant": tau, "found_error_m": float(e), "found_de_dlntau": float(de),
        "central_difference_de_dlntau": fd, "found_attitude_mae": float(aux[0]),
        "found_saturation_fraction": float(aux[1]), "found_diverged": bool(aux[2] > 0.5),
        "newton_iterations": len(history), "newton_history": history,
        "sweep_time_constants": taus, "sweep_errors_m": errs, "sweep_boundary_cell": cell,
        "search_s": t_search, "sweep_s": t_sweep,
    }
    print(f"slowest servo holding e <= {BOUND * 100:g} cm: tau_s* = {tau * 1e3:.2f} ms "
          f"(e = {float(e) * 1e3:.4f} mm, {len(history)} Newton iterations); sweep boundary cell "
          f"[{cell[0] * 1e3:.1f}, {cell[1] * 1e3:.1f}] ms")
    in_cell = float(cell[0] <= tau <= cell[1]) if math.isfinite(cell[0]) else float("nan")
    chk.add("found time constant inside the sweep's boundary cell", in_cell, "==", 1.0,
            f"tau* = {tau:.5g} s, cell = [{cell[0]:.5g}, {cell[1]:.5g}] s")
    chk.add("|e(tau*) - e_max| / e_max", abs(float(e) - BOUND) / BOUND, "<=", 1e-6)
    chk.add("rotor saturation share at tau*", float(aux[1]), "==", 0.0)
    chk.add("diverged at tau*", float(aux[2]), "==", 0.0)
    chk.add("smallest step of e along the sweep [m]", float(np.min(np.diff(errs))), ">", 0.0)
    chk.add("forward-mode derivative vs central difference (relative)", abs(float(de) - fd) / abs(fd), "<=", 1e-4)
    return chk.finish(Path(args.out) / "servo_design.json", rec)


if __name__ == "__main__":
    sys.exit(main())
