"""Arm length and tilt of a hexarotor, with its mass model on and off: the optimum moves.

No flight: the design measures of ``jaxrotor.analysis`` are differentiable, so the arm
length ``l`` and the cant ``alpha_0`` of a fully actuated star hexarotor
(``alpha_i = (-1)^i alpha_0``, ``beta_0 = 10 deg``) are optimised for

    J = -a_min + lambda P_h,

``a_min`` the weakest angular-acceleration authority at hover over roll, pitch and yaw
(:func:`jaxrotor.analysis.angular_authority`, rad/s^2) and ``P_h`` the mechanical hover
power (:func:`jaxrotor.analysis.hover_power`, W).

* **parts on**: the vehicle is built from its parts (``jaxrotor.design.parts``; arms of
  0.25 kg/m, so a longer arm is heavier): the inertia grows with ``l^2`` and the mass with
  ``l`` while the torque grows with ``l``;
* **parts off**: the same vehicle with its mass, inertia and rotor constants frozen at the
  start design (what jaxrotor could optimise before parts): a longer arm only buys torque.

Each optimum is then evaluated on the vehicle as built (parts on): a design result is
only as good as the model it was optimised on.

Checks (one ``check ...: PASS/FAIL`` line each; exit 1 if any fails):

* the optimum arm length moves by at least 0.1 m when the parts are switched on;
* on the vehicle as built, the parts-on optimum has the lower objective;
* the parts-on optimum is a buildable vehicle (no overlapping propellers:
  ``jaxrotor.design.parts.check_assembly`` passes).

Run::

    python experiments/parts_arm_length.py           # 300 iterations per optimisation
    python experiments/parts_arm_length.py --quick   # 60 iterations (< 60 s)
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
import optax  # noqa: E402

import jaxrotor as jr  # noqa: E402
from jaxrotor import analysis  # noqa: E402
from jaxrotor import optimize as op  # noqa: E402
from jaxrotor.design import parts as P  # noqa: E402
from jaxrotor.design.platform import star_platform  # noqa: E402
from jaxrotor.optimize import objectives as ob  # noqa: E402

from _checks import Checks  # noqa: E402

LAMBDA = 0.1  # rad/s^2 per W
BOUNDS = {"arm_length": (0.28, 0.8), "alpha": (0.0, 1.0)}  # m, rad
PARTS = P.Parts(
    hub=P.Hub(0.5, 0.09, 0.04), arm=P.Arm(mass_per_length=0.25, radius=0.01),
    motor=P.Motor(0.12, 0.02, 0.03, rotor_mass=0.04, kv=400, resistance=0.12, no_load_current=0.5, max_current=30),
    propeller=P.Propeller(diameter=0.254, mass=0.015, c_t=0.11, c_p=0.045, pitch=0.114),
    battery=P.Battery(1.0, (0.16, 0.06, 0.05), (0.0, 0.0, -0.04), 6, 6000, 0.02),
    payload=P.Payload(0.3, (0.0, 0.0, -0.1)))


def built(arm_length: float, alpha: float, name: str = "hex_parts"):
    """The vehicle as built from PARTS at (l, alpha_0)."""
    return star_platform(6, arm_length, parts=PARTS, alpha=alpha, beta=math.radians(10.0), name=name)


def frozen(p):
    """The same vehicle with its mass, inertia and rotor constants frozen (no parts)."""
    return star_platform(6, float(p.arm_length), mass=float(p.mass), inertia=np.asarray(p.inertia),
                         c_f=np.asarray(p.c_f), c_tau=np.asarray(p.c_tau), rotor_speed_max=np.asarray(p.rotor_speed_max),
                         alpha=float(p.alpha), beta=float(p.beta), name="hex_frozen")


def measures(p) -> dict:
    a = np.asarray(analysis.angular_authority(p), dtype=float)
    power = float(analysis.hover_power(p))
    return {"arm_length_m": float(p.arm_length), "alpha_deg": math.degrees(float(p.alpha)), "mass_kg": float(p.mass),
            "inertia_diag": np.diag(np.asarray(p.inertia)).tolist(), "authority_rad_s2": a.tolist(),
            "hover_power_W": power, "objective": float(-a.min() + LAMBDA * power)}


def solve(platform, iterations: int):
    design = op.Design(platform, jr.FullyActuatedSE3())  # no flight: design measures only
    box = {"platform.arm_length": op.Box(*BOUNDS["arm_length"]), "platform.alpha": op.Box(*BOUNDS["alpha"])}
    objective = ob.AngularAuthority(axes=(0, 1, 2)) + LAMBDA * ob.HoverPower()
    problem = op.DesignProblem(design, op.Parameters.select(design, box), objective)
    result = op.minimize(problem, optax.adam(0.01), op.MinimizeOptions(iterations=iterations), progress=False)
    return result.design.platform


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="60 iterations per optimisation")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/parts_arm_length[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or ("jaxrotor-out/parts_arm_length" + ("_quick" if args.quick else "")))
    out.mkdir(parents=True, exist_ok=True)
    iterations = 60 if args.quick else 300
    start = built(0.385, math.radians(25.0))
    opt_on = solve(start, iterations)
    opt_off = solve(frozen(start), iterations)
    # both optima as built: the frozen model's optimum re-derived from the parts at its (l, alpha_0)
    on_built = built(float(opt_on.arm_length), float(opt_on.alpha))
    off_built = built(float(opt_off.arm_length), float(opt_off.alpha), name="hex_parts_at_frozen_optimum")
    record = {"quick": args.quick, "iterations": iterations, "lambda": LAMBDA, "bounds": BOUNDS,
              "start": measures(start), "parts_on": measures(opt_on), "parts_off_model": measures(opt_off),
              "parts_off_as_built": measures(off_built)}
    for k in ("start", "parts_on", "parts_off_model", "parts_off_as_built"):
        r = record[k]
        print(f"{k:20s} l = {r['arm_length_m']:.3f} m  alpha_0 = {r['alpha_deg']:5.1f} deg  m = {r['mass_kg']:.3f} kg  "
              f"a = {np.round(r['authority_rad_s2'], 1).tolist()} rad/s^2  P_h = {r['hover_power_W']:.1f} W  "
              f"J = {r['objective']:.3f}")
    checks = Checks("parts_arm_length")
    checks.add("optimum arm length moves with the parts [m]",
               abs(record["parts_on"]["arm_length_m"] - record["parts_off_model"]["arm_length_m"]), ">=", 0.1)
    checks.add("objective as built: parts-on optimum minus parts-off optimum",
               record["parts_on"]["objective"] - record["parts_off_as_built"]["objective"], "<", 0.0)
    try:
        P.check_assembly(PARTS, np.asarray(jr.design.platform.geometric_rotor_positions(on_built)),
                         np.asarray(jr.design.platform.rotor_axes(on_built)), on_built.mass, on_built.c_f,
                         on_built.rotor_speed_max, on_built.gravity, on_built.name)
        buildable = 1.0
    except ValueError as err:
        print(err)
        buildable = 0.0
    checks.add("parts-on optimum is buildable", buildable, "==", 1.0)
    return checks.finish(out / "parts_arm_length.json", record)


if __name__ == "__main__":
    sys.exit(main())
