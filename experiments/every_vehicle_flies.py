"""Every vehicle flies out of the box: auto gains on every preset and on random designs, judged by their verdicts.

Each vehicle gets its controller gains from :func:`jaxrotor.gains.with_auto_gains` (pole placement on
the loops linearised about hover with its own mass, inertia, allocation, motor lag and rotor
inertia; ``docs/closed_loop.md``) and flies two references on the analytic plant with a 500 Hz
flight computer (zero-order hold), first-order motors and inputs clipped to the rotors' bounds:

* a 1 m step in ``x`` at 1 s, hovering at 1 m (``jaxrotor.reference.Step``, 8 s): rise time,
  overshoot and settling time per axis (:func:`jaxrotor.step_response.step_metrics`);
* a figure-eight of 1 m amplitude sized to the vehicle: its period makes the peak reference
  acceleration a fixed fraction :data:`ACCEL_FRACTION` of the lateral acceleration the vehicle has
  (:func:`jaxrotor.gains.lateral_acceleration_limit`: ``g sqrt((T/W)^2 - 1)`` by tilting, or what
  its rotors make at level attitude for the fully actuated controller); 10 s are flown (5 s ``--quick``).

The fully actuated controller flies the vehicles whose allocation has rank 6 and that hover level
with a margin (tilted hexarotors); the under-actuated one the others. Random designs: ``n`` in
{4, 6, 8}, a star layout with random cant ``alpha_0`` (alternating, 0-30 deg) and dihedral
``beta`` (0-15 deg) or flat, mass 0.03-10 kg (log-uniform), arm length, inertia, rotor constants,
top speed (thrust-to-weight 1.8-3), motor time constant (10-40 ms) and rotor spin inertia scaled
with the size (``_random_design``). Every flight's :func:`jaxrotor.verdict.flight_verdict` (with
the linearised stability report and the hover feasibility) must be ``ok``.

Writes ``every_vehicle_flies.json`` and a table (markdown, for ``docs/closed_loop.md``) into ``--out``;
exits 1 when any flight's verdict is raised (:mod:`_checks`).

Run::

    python experiments/every_vehicle_flies.py              # every preset + 50 random designs
    python experiments/every_vehicle_flies.py --quick      # 2 presets + 1 random design, shorter flights
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np
from _checks import Checks

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.allocation import allocation_matrix
from jaxrotor.allocators import Clip
from jaxrotor.analysis import closed_loop_stability
from jaxrotor.analysis.envelope import hover_at_attitude
from jaxrotor.control import FullyActuatedSE3, UnderactuatedSE3
from jaxrotor.design.platform import star_platform
from jaxrotor.dynamics import Actuators, FirstOrderMotor
from jaxrotor.flight import Flight
from jaxrotor.gains import lateral_acceleration_limit, with_auto_gains
from jaxrotor.reference import FigureEight, Step
from jaxrotor.step_response import step_metrics
from jaxrotor.verdict import VerdictThresholds, flight_verdict, hover_feasibility

RATE = 500.0  # Hz
ACCEL_FRACTION = 0.25  # peak figure-eight acceleration / lateral acceleration the thrust-to-weight allows
STEP = 1.0  # m
#: Motor time constant of the presets [s] (they carry none; the random designs draw theirs).
PRESET_TAU = 0.02
RANDOM_DESIGNS = 50
#: Length of every figure-eight flight [s] (one lap or more for most vehicles; one length for all, so the
#: flights of vehicles with the same structure share one compiled program).
FIG8_DURATION = 10.0
QUICK_PRESETS = ("paper_hexarotor", "x500")
#: Verdict thresholds: the defaults (a step's own size is part of the tracking threshold, jaxrotor.verdict).
THRESHOLDS = {"step": VerdictThresholds(), "figure_eight": VerdictThresholds()}


def _random_design(rng: np.random.Generator, k: int):
    """A random valid design: ``(platform, motor time constant [s])``.

    Scaling with the mass ``m`` (log-uniform 0.03-10 kg): arm ``l = 0.16 m^(1/3)`` (x U(0.8, 1.25)),
    principal inertias ``m l^2 (0.3, 0.3, 0.55)`` (x U(0.8, 1.2) each), thrust per rotor at top speed
    ``(T/W) m g / n`` with ``T/W`` U(1.8, 3) and a top speed ``900 m^(-0.25)`` rad/s, ``c_tau = c_f D 0.05``
    with the propeller diameter ``D = 0.8 l``, rotor spin inertia ``J_r = 0.01 m_rotor D^2`` with the
    rotor mass ``0.02 m / n``, motor time constant 10-40 ms growing with the size.
    """
    n = int(rng.choice([4, 6, 8]))
    m = float(np.exp(rng.uniform(np.log(0.03), np.log(10.0))))
    l = 0.16 * m ** (1 / 3) * rng.uniform(0.8, 1.25)
    J = m * l**2 * np.array([0.3, 0.3, 0.55]) * rng.uniform(0.8, 1.2, 3)
    J[2] = min(J[2], 0.98 * (J[0] + J[1]))
    w_max = 900.0 * m ** (-0.25)
    tw = rng.uniform(1.8, 3.0)
    c_f = tw * m * 9.81 / (n * w_max**2)
    D = 0.8 * l * 2 * math.sin(math.pi / n)  # discs of neighbouring rotors clear each other
    c_tau = c_f * D * 0.05
    tilted = rng.uniform() < 0.5 and n >= 6
    alpha = math.radians(rng.uniform(10.0, 30.0)) if tilted else 0.0
    beta = math.radians(rng.uniform(0.0, 15.0)) if tilted else 0.0
    J_r = 0.01 * (0.02 * m / n) * D**2
    tau = float(np.clip(0.02 * (m / 2.0) ** 0.25, 0.01, 0.04))
    # one name for every random design: designs with the same rotor count share one compiled flight
    p = star_platform(n, l, mass=m, inertia=J, c_f=c_f, c_tau=c_tau, alpha=alpha, beta=beta, rotor_speed_max=w_max,
                      rotor_inertia=J_r, name="random")
    return p, tau


def _fully_actuated(platform) -> bool:
    """Rank-6 allocation and level hover with a margin: fly the fully actuated controller."""
    G = np.asarray(allocation_matrix(platform))
    S = np.diag(1 / np.maximum(np.abs(G).max(axis=1), 1e-30))
    return np.linalg.matrix_rank(S @ G, tol=1e-6) == 6 and hover_at_attitude(platform, 0.0, 0.0).margin > 0.1


def _figure_eight_period(platform, underactuated: bool) -> float:
    """Period [s] whose peak reference acceleration ``4 A w^2`` (y, ``A = 1 m``) is ``ACCEL_FRACTION`` of the
    vehicle's lateral acceleration limit (:func:`jaxrotor.gains.lateral_acceleration_limit`: by tilting for the
    under-actuated controller, with the rotors at level attitude for the fully actuated one)."""
    a = ACCEL_FRACTION * float(lateral_acceleration_limit(platform, underactuated=underactuated))
    return round(2 * math.pi / math.sqrt(a / 4.0), 2)  # whole control periods and samples


def fly_vehicle(name: str, platform, tau: float, quick: bool) -> dict:
    """Both flights of one vehicle with auto gains; their verdicts, step metrics and summaries."""
    fa = _fully_actuated(platform)
    ctrl0 = FullyActuatedSE3() if fa else UnderactuatedSE3()
    period = _figure_eight_period(platform, underactuated=not fa)
    step_t1, fig8_t1 = (6.0, 5.0) if quick else (8.0, FIG8_DURATION)
    refs = {"step": Step(target=[STEP, 0.0, 1.0], time=1.0, duration=step_t1, start=[0.0, 0.0, 1.0]),
            "figure_eight": FigureEight(duration=fig8_t1, period=period)}
    out = {"name": name, "n": platform.n_rotors, "mass": float(platform.mass), "controller":
           "fully_actuated" if fa else "underactuated", "motor_time_constant": tau, "figure_eight_period": period}
    for key, ref in refs.items():
        flight = Flight(reference=ref, allocator=Clip(), actuators=Actuators(motor=FirstOrderMotor(tau)),
                        control_rate=RATE, integrator=jr.Integrator(adaptive=False, dt=1.0 / RATE), save_dt=0.01)
        ctrl = with_auto_gains(ctrl0, platform, flight)
        stab = closed_loop_stability(platform, ctrl, flight)
        traj = jr.fly(platform, ctrl, flight)
        v = flight_verdict(traj, platform, flight, controller=ctrl, stability=stab, thresholds=THRESHOLDS[key],
                           feasibility=hover_feasibility(platform, flight, ctrl))
        e = np.linalg.norm(np.asarray(traj.p) - np.asarray(traj.p_ref), axis=1)
        rec = {"verdict": v.to_json(), "line": v.line(), "rmse_position": float(np.sqrt(np.mean(e**2))),
               "max_position_error": float(e.max()), "saturation_fraction": float(np.mean(np.any(np.asarray(traj.saturated), axis=1))),
               "stable": bool(stab.stable), "max_growth_rate": float(stab.max_growth_rate),
               "K_R": np.asarray(ctrl.K_R).tolist(), "K_p": np.asarray(ctrl.K_p).tolist()}
        if key == "step":
            sm = step_metrics(traj, ref)
            rec.update({k: sm[k] for k in ("step_rise_time", "step_overshoot", "step_settling_time")})
        out[key] = rec
    return out


def _fmt(x, scale=1.0, digits=2):
    return "—" if x is None or not np.isfinite(x) else f"{x * scale:.{digits}f}"


def table(rows: list[dict]) -> str:
    """Markdown table: vehicle, controller, step rise/overshoot/settling in x, figure-eight RMSE, verdicts."""
    lines = ["| vehicle | n | mass [kg] | controller | step x: rise [s] | overshoot [%] | settling [s] | "
             "figure-eight period [s] | RMSE [mm] | verdicts |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        s, f = r["step"], r["figure_eight"]
        verdicts = "ok" if s["verdict"] == "ok" and f["verdict"] == "ok" else f"step {s['verdict']}, fig8 {f['verdict']}"
        lines.append(f"| {r['name']} | {r['n']} | {r['mass']:.3g} | {r['controller']} | {_fmt(s['step_rise_time'][0])} | "
                     f"{_fmt(s['step_overshoot'][0], 100, 1)} | {_fmt(s['step_settling_time'][0])} | "
                     f"{r['figure_eight_period']:.2f} | {_fmt(f['rmse_position'], 1e3, 1)} | {verdicts} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 presets and 1 random design, shorter flights")
    ap.add_argument("--out", type=Path, default=Path("jaxrotor-out/every_vehicle_flies"))
    ap.add_argument("--presets", nargs="+", default=None, help="fly only these presets (default: every fixed-tilt one)")
    ap.add_argument("--designs", type=int, default=None, help=f"random designs (default {RANDOM_DESIGNS}, --quick 1)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    names = args.presets or (list(QUICK_PRESETS) if args.quick else [n for n in presets.names()
                                                                       if not presets.get(n).is_tilting])
    n_random = args.designs if args.designs is not None else (1 if args.quick else RANDOM_DESIGNS)
    rng = np.random.default_rng(0)
    vehicles = [(n, presets.get(n), PRESET_TAU) for n in names]
    vehicles += [("random", p, tau) for p, tau in (_random_design(rng, k) for k in range(n_random))]
    rows, t0 = [], time.perf_counter()
    for i, (name, p, tau) in enumerate(vehicles):
        r = fly_vehicle(name if name != "random" else f"random_{i - len(names):02d}", p, tau, args.quick)
        rows.append(r)
        print(f"[{i + 1}/{len(vehicles)}] {name}: step {r['step']['verdict']}, figure-eight {r['figure_eight']['verdict']}"
              f" ({time.perf_counter() - t0:.0f} s)", flush=True)
    md = table(rows)
    print(md)
    (args.out / "table.md").write_text(md + "\n")
    checks = Checks("every_vehicle_flies")
    bad = [f"{r['name']} {k}: {r[k]['line']}" for r in rows for k in ("step", "figure_eight") if r[k]["verdict"] != "ok"]
    for b in bad:
        print("raised:", b)
    checks.add("flights with a raised verdict (presets and random designs, step and figure-eight)", len(bad), "<=", 0)
    checks.add("closed loops unstable by the linearised analysis", sum(not r[k]["stable"] for r in rows
                                                                         for k in ("step", "figure_eight")), "<=", 0)
    print(f"outputs written to {args.out}")
    return checks.finish(args.out / "every_vehicle_flies.json", {"quick": args.quick, "rows": rows})


if __name__ == "__main__":
    sys.exit(main())
