"""Root locus of the paper hexarotor's yaw mode against the motor time constant, with and without rotor inertia.

The RotorSuite hexarotor with its physics-layer inertia ``J^p`` and the paper's Table III
gains hovers under first-order motors of time constant ``tau_m``. For each ``tau_m`` the
closed loop (continuous-time controller) is linearised about hover
(:func:`jaxrotor.analysis.closed_loop_stability`) and the fastest-growing yaw mode is
recorded (its oscillatory pair), once without rotor inertia and once with the Table II propellers'
``J_r = 1.095e-4 kg m^2`` (the spin-up reaction ``J_r omega_dot`` puts a right-half-plane
zero into the yaw loop). The threshold ``tau_m`` where the yaw mode crosses into the right
half-plane is found by bisection. Writes ``yaw_root_locus.json`` and ``yaw_root_locus.png``
(growth rate against ``tau_m``; the locus in the complex plane).

Checks (one ``check ...: PASS/FAIL`` line each; exit 1 if any fails):

* with rotor inertia, 30 ms motors are unstable in yaw (growth > 0; about +6 /s);
* without rotor inertia, 30 ms motors are stable;
* the threshold with rotor inertia lies below 30 ms.

Run::

    python experiments/yaw_root_locus.py           # 41 time constants
    python experiments/yaw_root_locus.py --quick   # 9 time constants
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxrotor as jr  # noqa: E402
from jaxrotor.analysis import closed_loop_stability  # noqa: E402

from _checks import Checks  # noqa: E402

J_R = 1.095e-4  # kg m^2
YAW = jr.analysis.stability.AXES.index("yaw")


def yaw_mode(platform, tau):
    """``(growth [1/s], frequency [Hz])`` of the yaw loop's oscillatory pair (the fastest-growing yaw mode above
    0.5 Hz; the slow real yaw-integral mode stays near -0.1 /s) at motor time constant ``tau`` [s]."""
    flight = jr.Flight(reference=jr.reference.Hover(position=(0.0, 0.0, 1.0), duration=1.0),
                       actuators=jr.dynamics.Actuators(motor=jr.dynamics.FirstOrderMotor(tau)))
    rep = closed_loop_stability(platform, jr.FullyActuatedSE3(), flight, n_modes=40)
    growth = np.asarray(rep.mode_growth)
    freq = np.asarray(rep.mode_frequency_hz)
    yaw = (np.asarray(rep.mode_axis) == YAW) & np.asarray(rep.mode_valid) & (freq > 0.5)
    if not yaw.any():
        return -math.inf, 0.0
    k = int(np.argmax(np.where(yaw, growth, -np.inf)))
    return float(growth[k]), float(freq[k])


def threshold(platform, lo, hi, iters):
    """The ``tau_m`` in ``[lo, hi]`` where the yaw growth rate crosses zero (bisection; NaN if no crossing)."""
    g_lo, g_hi = yaw_mode(platform, lo)[0], yaw_mode(platform, hi)[0]
    if not (g_lo < 0 < g_hi):
        return math.nan
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if yaw_mode(platform, mid)[0] > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="9 time constants, a coarse threshold")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/yaw_root_locus[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or ("jaxrotor-out/yaw_root_locus" + ("_quick" if args.quick else "")))
    out.mkdir(parents=True, exist_ok=True)
    taus = np.linspace(0.005, 0.06, 9 if args.quick else 41)
    base = jr.presets.paper_hexarotor("physics")
    cases = {"no rotor inertia": base, "J_r = 1.095e-4": dataclasses.replace(base, rotor_inertia=jnp.full(6, J_R))}
    record = {"quick": args.quick, "tau_m_s": taus.tolist(), "cases": {}}
    for name, p in cases.items():
        modes = [yaw_mode(p, float(t)) for t in taus]
        at30 = yaw_mode(p, 0.03)
        record["cases"][name] = {
            "growth_per_s": [m[0] for m in modes], "frequency_hz": [m[1] for m in modes],
            "growth_30ms": at30[0], "frequency_30ms_hz": at30[1],
            "threshold_tau_m_s": threshold(p, 0.005, 0.2 if name.startswith("no") else 0.06, 6 if args.quick else 20)}
        r = record["cases"][name]
        print(f"{name:18s} yaw mode at 30 ms: {r['growth_30ms']:+.3f} /s at {r['frequency_30ms_hz']:.2f} Hz; "
              f"unstable above tau_m = {r['threshold_tau_m_s'] * 1e3:.1f} ms")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for name in cases:
        r = record["cases"][name]
        g = np.asarray(r["growth_per_s"])
        w = 2 * np.pi * np.asarray(r["frequency_hz"])
        a.plot(taus * 1e3, g, "o-", ms=3, label=name)
        sc = b.scatter(g, w, c=taus * 1e3, cmap="viridis", s=14, marker="o" if name.startswith("no") else "^")
        b.plot(g, w, "-", lw=0.6, color="0.6")
    a.axhline(0.0, color="k", lw=0.8)
    a.axvline(30.0, color="0.5", ls=":", lw=0.8)
    a.set(xlabel="motor time constant tau_m [ms]", ylabel="yaw mode growth rate Re s [1/s]",
          title="paper hexarotor (J^p, Table III gains): yaw mode")
    a.legend()
    b.axvline(0.0, color="k", lw=0.8)
    b.set(xlabel="Re s [1/s]", ylabel="Im s [rad/s]", title="root locus (o: no J_r, ^: J_r = 1.095e-4)")
    fig.colorbar(sc, ax=b, label="tau_m [ms]")
    fig.tight_layout()
    fig.savefig(out / "yaw_root_locus.png", dpi=120)
    plt.close(fig)
    checks = Checks("yaw_root_locus")
    with_jr, without = record["cases"]["J_r = 1.095e-4"], record["cases"]["no rotor inertia"]
    checks.add("yaw growth with rotor inertia, 30 ms motors [1/s]", with_jr["growth_30ms"], ">", 0.0)
    checks.add("yaw growth without rotor inertia, 30 ms motors [1/s]", without["growth_30ms"], "<", 0.0)
    checks.add("threshold tau_m with rotor inertia [s]", with_jr["threshold_tau_m_s"], "<", 0.03)
    return checks.finish(out / "yaw_root_locus.json", record)


if __name__ == "__main__":
    sys.exit(main())
