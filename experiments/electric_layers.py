"""The electric motor and the battery on both layers: one manoeuvre, the same energy and endurance.

The quadrotor of ``configs/electric_hover.toml`` (built from its parts: 920 KV motors behind 95 % ESCs
on a 4S 5000 mAh pack, a 200 rad/s speed controller, its auto-tuned controller) flies one manoeuvre
on the analytic layer (the config's continuous-time loop, adaptive Tsit5) and on the physics layer
(the MuJoCo C engine at 1 ms, one tick per engine step, :func:`jaxrotor.physics.fly_physics` with
:func:`jaxrotor.workflows.compare.physics_settings`). On the physics layer each propeller hinge is a
torque motor driven per engine step by the motor's current (``jaxrotor.electrical.electric_drive``)
and the battery's state of charge and energy account are integrated at the engine step.

The manoeuvre (60 s): a hover at 1 m (5 s), a figure-eight of 1 m amplitude and 15 s period flown
twice (30 s), a 5 s minimum-jerk transfer to (1, 0, 1.5) m and a hover there (20 s). ``--quick``:
a hover (1 s), a 2 s transfer to (0.5, 0, 1.2) m and a hover (1 s).

Printed: both layers' electrical metrics (``jaxrotor.metrics.flight_metrics(...).electrical``: energy
at the battery's terminals, endurance of the flown profile from ``soc0`` to ``soc_floor``, mean power,
state of charge at the end, mean and peak motor current) with their relative differences, and the
tracking error of each layer. Writes ``electric_layers.json`` into ``--out``.

Checks (one ``check ...: PASS/FAIL`` line each; exit 1 if any fails):

* neither flight diverges;
* energy and endurance of the profile agree within 0.5 % (relative);
* the energy account closes on the physics layer (``terminal = shaft + copper + no_load + esc``) to 1e-9.

Run::

    python experiments/electric_layers.py           # the 60 s manoeuvre
    python experiments/electric_layers.py --quick   # 4 s
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

import numpy as np  # noqa: E402

import jaxrotor as jr  # noqa: E402
from jaxrotor.electrical import WORK_TERMS  # noqa: E402
from jaxrotor.io.config import load  # noqa: E402
from jaxrotor.physics import build_model, fly_physics  # noqa: E402
from jaxrotor.reference import FigureEight, Hover, Sequence, Transfer  # noqa: E402
from jaxrotor.workflows.compare import physics_settings  # noqa: E402

from _checks import Checks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "electric_hover.toml"
TOLERANCE = 0.005  # relative: the layers' energy and endurance
KEYS = (("energy_wh", "energy at the terminals [Wh]"), ("endurance_profile_s", "endurance of the profile [s]"),
        ("electrical_power_mean", "mean terminal power [W]"), ("soc_end", "state of charge at the end"),
        ("motor_current_mean", "mean motor current [A]"), ("motor_current_peak", "peak motor current [A]"),
        ("time_at_limit", "time at a current/voltage limit [s]"))


def manoeuvre(quick: bool) -> Sequence:
    """The reference flown (module docstring)."""
    home = (0.0, 0.0, 1.0)
    if quick:
        return Sequence([Hover(home, 1.0), Transfer(home, (0.5, 0.0, 1.2), 2.0), Hover((0.5, 0.0, 1.2), 1.0)])
    return Sequence([Hover(home, 5.0), FigureEight(30.0, center=home, amplitude=(1.0, 1.0), period=15.0),
                     Transfer(home, (1.0, 0.0, 1.5), 5.0), Hover((1.0, 0.0, 1.5), 20.0)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a 4 s manoeuvre")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/electric_layers[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or os.environ.get("JAXROTOR_OUT") or
               ROOT / "jaxrotor-out" / ("electric_layers_quick" if args.quick else "electric_layers"))

    config = load(CONFIG)
    platform, controller = config.platform, config.controller
    reference = manoeuvre(args.quick)
    flight = dataclasses.replace(config.flight, reference=reference, t1=reference.duration)

    t0 = time.perf_counter()
    analytic = jr.fly(platform, controller, flight)
    jax.block_until_ready(analytic.p)
    t_analytic = time.perf_counter() - t0

    settings = physics_settings(platform)
    model = build_model(platform, settings.parts, settings.options)
    phys = fly_physics(platform, controller, flight, settings, model=model)
    physics = phys.trajectory

    m_a = jr.metrics.flight_metrics(analytic, platform, flight)
    m_p = jr.metrics.flight_metrics(physics, model.physics_platform(), flight)
    e_a, e_p = m_a.electrical, m_p.electrical

    print(f"electric_layers: {platform.name}, {reference.duration:g} s manoeuvre "
          f"({'quick' if args.quick else 'hover, figure-eight, transfer, hover'})")
    print(f"{'':38s}{'analytic':>14s}{'physics':>14s}{'rel. diff':>12s}")
    rows = {}
    for key, title in KEYS:
        a, p = float(getattr(e_a, key)), float(getattr(e_p, key))
        rel = (p - a) / abs(a) if a != 0 else float("nan")
        rows[key] = {"analytic": a, "physics": p, "relative_difference": rel}
        print(f"{title:38s}{a:14.6g}{p:14.6g}{rel:12.2e}")
    for key, title in (("mae_position", "mean position error [m]"), ("max_position_error", "max position error [m]")):
        a, p = float(getattr(m_a, key)), float(getattr(m_p, key))
        rows[key] = {"analytic": a, "physics": p}
        print(f"{title:38s}{a:14.6g}{p:14.6g}")
    print(f"wall time: analytic {t_analytic:.1f} s (with compilation), physics {phys.wall_time_s:.1f} s "
          f"(+ {phys.compile_time_s:.1f} s setup)")

    w = np.asarray(physics.energy.work[-1] - physics.energy.work[0])
    terms = dict(zip(WORK_TERMS, w))
    closure = abs(terms["terminal"] - (terms["shaft"] + terms["copper"] + terms["no_load"] + terms["esc"]))
    closure_rel = closure / abs(terms["terminal"])

    checks = Checks("electric_layers")
    checks.add("diverged flights", int(bool(analytic.diverged)) + int(bool(physics.diverged)), "==", 0)
    for key in ("energy_wh", "endurance_profile_s"):
        checks.add(f"{key}: physics against analytic (|relative difference|)",
                   abs(rows[key]["relative_difference"]), "<=", TOLERANCE)
    checks.add("energy account on the physics layer (|terminal - sum of uses| / terminal)", closure_rel, "<=", 1e-9)
    record = {"quick": args.quick, "duration_s": reference.duration, "vehicle": platform.name, "metrics": rows,
              "physics_work_J": {k: float(v) for k, v in terms.items()},
              "wall_time_s": {"analytic": t_analytic, "physics": phys.wall_time_s}}
    return checks.finish(out / "electric_layers.json", record)


if __name__ == "__main__":
    sys.exit(main())
