"""Effect of rotor drag on design: the optimal cant of the paper hexarotor for a fast figure-eight, drag on and off.

The RotorSuite use-case hexarotor ``CS_a0b0-Ted_6R`` (``jaxrotor.design.presets.paper_hexarotor``,
Table II: ``l = 0.385 m``, ``beta_0 = 10 deg``, ``m = 3.5 kg``, ``c_f = 3.799e-5 N s^2/rad^2``;
cant ``alpha_i = (-1)^i alpha_0``) flies, closed loop on the analytic layer (Table III gains, exact
pseudo-inverse allocation, ideal motors: the paper's analytic setting), the first 3 s of a fast
horizontal figure-eight (eq. 13 with ``A_x = 16 m``, ``A_y = 4 m``, period 20 s: it starts at the
crossing point at 5.6 m/s, world frame z up) at fixed level attitude, so every lateral force comes
from the canted rotors. Fixed-step Tsit5 (``dt = 0.01 s``): the gradient is the exact derivative of
the discrete flight.

Two flights of the same vehicle:

* *rotor drag off*: ``Flight(aero=None)``;
* *rotor drag on*: ``Flight(aero=Aerodynamics(...))`` with RotorPy's rotor-drag matrix
  ``diag(k_d, k_d, k_z)`` and parasitic drag scaled to the hexarotor (:func:`hexarotor_aero`):
  ``k_d = (k_d / k_eta)_HB c_f = 8.12e-4 N s/m per rad/s``, ``k_z = (k_z / k_eta)_HB c_f = 1.58e-3``
  (the Hummingbird's ratios, so a rotor's H-force per unit thrust, ``(k_d / k_eta) v_p / omega``, is the
  Hummingbird's at the same air and rotor speed) and ``c_D = c_D,HB (0.385 / 0.17)^2 =
  (0.0256, 0.0256, 0.0513) N s^2/m^2`` (quadratic drag scales with frontal area, the square of the
  arm length). Translational lift and flapping stay off in both flights: the comparison is about drag.
  At the reference's 5.6 m/s in hover trim the rotors' drag is 12.3 N and the body's 0.8 N
  (printed and recorded): 38 % of the 34.3 N weight, which the canted rotors must push against at
  fixed attitude.

Objective (library terms, :mod:`jaxrotor.optimize.objectives`)::

    J = Energy() + 10 /m * Tracking() + 100 * SaturationMargin(threshold=0.9)

the rotors' mean power proxy over the flat design's hover power, plus the position RMSE (10 cm
weighs as much as one flat hover's power), plus the smooth saturation cost of rotor speeds within
10 % of their range [0, 700] rad/s of a bound: at fixed attitude a small cant makes some rotors
ask for negative thrust (the ideal motor applies it; a real propeller cannot), which this term
prices before it happens. Without drag the position error does not depend on the cant (exact
allocation delivers the commanded wrench), so the cant is priced by power and saturation alone.

For each flight the script minimises ``J`` over ``alpha_0`` with optax Adam through
:meth:`jaxrotor.optimize.DesignProblem.minimize` from the same start (45 deg) within
``[10, 60] deg`` (box projection), evaluates ``J`` on a grid over that range (1 deg cells; 5 deg with
``--quick``), and checks ``dJ/dalpha_0`` by ``jax.grad`` against central differences
(``h = 1e-5 rad``; 1e-3, 1e-4 and 1e-6 recorded) at 35, 45 and 55 deg, where every rotor input is
positive in both flights (the flight is smooth in ``alpha_0`` there). Every value and gradient comes
from the one compiled optimiser step of each flight. The full run also reports the grid's best cant of
each flight for tracking weights 0, 1 and 10 /m and saturation thresholds 0.85, 0.9 and 0.95 (with
drag the optimum sits where the least loaded rotor enters the saturation band).

Writes ``aero_cant.json`` and ``aero_cant.png`` into ``--out``.

Checks (one ``check ...: PASS/FAIL`` line each; exit 1 if any fails):

* ``dJ/dalpha_0`` against central differences, relative error <= 1e-6 at each point, both flights;
* Adam's optimum within one grid cell of the grid's best, both flights;
* Adam's objective not above the grid's best by more than 1e-3 (relative), both flights;
* rotor drag changes the objective (relative difference at the start > 1e-3);
* every rotor input positive along the flight at each optimum (the optimum is flyable).

Run::

    python experiments/aero_cant.py           # 1-degree grid, 80 Adam iterations, sensitivity (about 2 min)
    python experiments/aero_cant.py --quick   # 5-degree grid, 40 Adam iterations (under a minute)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

import jaxrotor as jr  # noqa: E402
from jaxrotor.aero import body_wrench  # noqa: E402
from jaxrotor.design import presets  # noqa: E402
from jaxrotor.optimize import Design, DesignProblem, MinimizeOptions, Parameters  # noqa: E402
from jaxrotor.optimize import objectives as ob  # noqa: E402
from jaxrotor.optimize.parameters import Box  # noqa: E402
from jaxrotor.optimize.step import make_step  # noqa: E402
from jaxrotor.reference import FigureEight  # noqa: E402

from _checks import Checks  # noqa: E402

#: RotorPy's AscTec Hummingbird (``rotorpy.vehicles.hummingbird_params``): thrust coefficient ``k_eta``
#: [N s^2/rad^2], rotor drag ``k_d`` and induced inflow ``k_z`` [N s/m per rad/s], parasitic drag ``c_D``
#: [N s^2/m^2] (body x, y, z) and arm length [m].
HUMMINGBIRD = {"k_eta": 5.57e-6, "k_d": 1.19e-4, "k_z": 2.32e-4, "c_D": (0.005, 0.005, 0.01), "arm_length": 0.17}

AMPLITUDE = (16.0, 4.0)  # m, figure-eight A_x, A_y
PERIOD = 20.0  # s
DURATION = 3.0  # s flown, from the crossing point
DT = 0.01  # s, fixed Tsit5 step
SAVE_DT = 0.02  # s, samples of the objective's time means
W_TRACKING = 10.0  # 1/m
W_SATURATION = 100.0
SATURATION_THRESHOLD = 0.9  # the cost starts within 10 % of the speed range from a bound
BOUNDS_DEG = (10.0, 60.0)
START_DEG = 45.0
CHECK_DEG = (35.0, 45.0, 55.0)
FD_STEP = 1e-5  # rad; (3 eps |J| / |J'''|)^(1/3) is about 1e-5 here, rounding and truncation both ~1e-10
FD_STEPS = (1e-3, 1e-4, 1e-5, 1e-6)  # rad, recorded to show the step-size trade-off
GRAD_RTOL = 1e-6
CASES = ("rotor_drag_off", "rotor_drag_on")


def hexarotor_aero(platform) -> tuple[jr.Aerodynamics, dict]:
    """Rotor drag of the paper hexarotor from RotorPy's Hummingbird, and the numbers with their reasons.

    ``k_d = (k_d / k_eta)_HB c_f`` and ``k_z = (k_z / k_eta)_HB c_f`` [N s/m per rad/s] keep the
    Hummingbird's drag per unit thrust at the same air and rotor speed; ``c_D = c_D,HB (l / l_HB)^2``
    [N s^2/m^2] scales the body's quadratic drag with the frontal area. Translational lift and flapping
    off (this experiment compares drag).
    """
    hb = HUMMINGBIRD
    c_f = float(np.mean(np.asarray(platform.c_f)))
    area = (float(platform.arm_length) / hb["arm_length"]) ** 2
    k_d = hb["k_d"] / hb["k_eta"] * c_f
    k_z = hb["k_z"] / hb["k_eta"] * c_f
    c_D = tuple(c * area for c in hb["c_D"])
    aero = jr.Aerodynamics(parasitic_drag=c_D, rotor_drag=k_d, induced_inflow=k_z)
    coefficients = {
        "rotor_drag_k_d": k_d, "induced_inflow_k_z": k_z, "parasitic_drag_c_D": list(c_D),
        "translational_lift_k_h": 0.0, "flapping_k_flap": 0.0,
        "units": {"k_d": "N s/m per rad/s", "k_z": "N s/m per rad/s", "c_D": "N s^2/m^2 (body x, y, z)"},
        "hexarotor_c_f": c_f, "hexarotor_arm_length_m": float(platform.arm_length),
        "hummingbird": hb, "k_d_over_k_eta": hb["k_d"] / hb["k_eta"], "k_z_over_k_eta": hb["k_z"] / hb["k_eta"],
        "area_scale": area,
        "why": "k_d, k_z: RotorPy Hummingbird's k_d/k_eta and k_z/k_eta times the hexarotor's c_f (the same "
               "H-force and inflow force per unit thrust at the same air and rotor speed); c_D: Hummingbird's "
               "times (0.385 m / 0.17 m)^2 (quadratic drag scales with frontal area); translational lift and "
               "flapping off in both flights (the comparison is about drag)",
    }
    return aero, coefficients


def drag_at_peak_speed(platform, aero: jr.Aerodynamics, speed: float) -> dict:
    """The aerodynamic force [N] (body frame, level attitude) at ``speed`` [m/s] along the reference's initial
    direction in hover trim: total, the rotors' and the body's parasitic part."""
    u = jr.hover_inputs(platform)
    w = jnp.sqrt(u)
    v0 = FigureEight(DURATION, amplitude=AMPLITUDE, period=PERIOD)(jnp.asarray(0.0)).v
    v = speed * v0 / jnp.linalg.norm(v0)
    z = jnp.zeros(3)
    f, _ = body_wrench(aero, platform, z, jnp.eye(3), v, z, w, platform.alpha, platform.beta, z)
    body_only = jr.Aerodynamics(parasitic_drag=aero.parasitic_drag)
    f_body, _ = body_wrench(body_only, platform, z, jnp.eye(3), v, z, w, platform.alpha, platform.beta, z)
    return {"speed_m_s": speed, "total_N": float(jnp.linalg.norm(f)), "rotors_N": float(jnp.linalg.norm(f - f_body)),
            "body_N": float(jnp.linalg.norm(f_body)), "weight_N": float(platform.weight)}


def figure_eight() -> FigureEight:
    """The fast horizontal figure-eight at 1 m height (eq. 13 with ``A = (16, 4) m``, period 20 s), 3 s of it."""
    return FigureEight(DURATION, center=(0.0, 0.0, 1.0), amplitude=AMPLITUDE, period=PERIOD)


def peak_speed() -> float:
    """The reference's peak speed [m/s], at the crossing point: ``w sqrt(A_x^2 + 4 A_y^2)``."""
    w = 2 * math.pi / PERIOD
    return w * math.hypot(AMPLITUDE[0], 2 * AMPLITUDE[1])


def objective(w_tracking: float = W_TRACKING, threshold: float = SATURATION_THRESHOLD) -> ob.AbstractTerm:
    """``Energy() + w_tracking Tracking() + 100 SaturationMargin(threshold)`` (module docstring; ``w_tracking``
    [1/m]). Weights and threshold are array leaves: other values reuse the compiled flight."""
    return ob.Energy() + w_tracking * ob.Tracking() + W_SATURATION * ob.SaturationMargin(threshold)


def problem(aero: jr.Aerodynamics | None, alpha0: float, term: ob.AbstractTerm | None = None) -> DesignProblem:
    """The design problem of one flight: cant ``alpha_0`` [rad] in ``BOUNDS_DEG`` (box), the rest fixed; objective
    ``term`` (default :func:`objective`)."""
    platform = eqx.tree_at(lambda p: p.alpha, presets.paper_hexarotor(), jnp.asarray(alpha0, dtype=jnp.float64))
    flight = jr.Flight(figure_eight(), integrator=jr.Integrator(adaptive=False, dt=DT), save_dt=SAVE_DT, aero=aero)
    design = Design(platform, jr.FullyActuatedSE3(), flight)
    lo, hi = (math.radians(b) for b in BOUNDS_DEG)
    return DesignProblem(design, Parameters.select(design, {"platform.alpha": Box(lo, hi)}),
                         objective() if term is None else term)


class Evaluator:
    """``J``, ``dJ/dalpha_0`` and the term breakdown at any ``alpha_0`` [rad], from the compiled optimiser step of
    :func:`jaxrotor.optimize.minimize` (one compilation per flight, shared with the optimisation)."""

    def __init__(self, prob: DesignProblem, optimizer, stepper):
        self.prob, self.optimizer, self.stepper = prob, optimizer, stepper
        self.theta0 = prob.init()
        self.state0 = optimizer.init(self.theta0)

    def __call__(self, alpha0: float) -> tuple[float, float, dict]:
        theta = jax.tree_util.tree_map(lambda x: jnp.asarray(alpha0, dtype=x.dtype), self.theta0)
        _, _, value, info, grad = self.stepper.step(self.prob, self.optimizer, theta, self.state0, jnp.asarray(1.0))
        terms = {k: float(v) for k, v in info.terms.items()}
        return float(value), float(jax.tree_util.tree_leaves(grad)[0]), terms

    def rotors(self, alpha0: float) -> dict:
        """Smallest rotor input [rad^2/s^2] and largest rotor speed [rad/s] along the flight at ``alpha_0``."""
        theta = jax.tree_util.tree_map(lambda x: jnp.asarray(alpha0, dtype=x.dtype), self.theta0)
        u_min, w_max = _rotor_extremes(self.prob.to_design(theta))
        return {"min_rotor_input": float(u_min), "max_rotor_speed": float(w_max)}


@eqx.filter_jit
def _rotor_extremes(design: Design):
    """Smallest applied rotor input [rad^2/s^2] and largest rotor speed [rad/s] of the flight of ``design``."""
    traj = jr.fly(design.platform, design.controller, design.flight)
    return jnp.min(traj.u), jnp.max(traj.rotor_speed)


def sensitivity(aero, grid_deg: np.ndarray, optimizer, stepper) -> list[dict]:
    """The grid's best cant of each flight for other tracking weights [1/m] and saturation thresholds."""
    rows = []
    for w in (0.0, 1.0, W_TRACKING):
        for threshold in (0.85, SATURATION_THRESHOLD, 0.95):
            for case in CASES:
                ev = Evaluator(problem(aero if case == "rotor_drag_on" else None, math.radians(START_DEG),
                                       objective(w, threshold)), optimizer, stepper)
                J = np.array([ev(math.radians(d))[0] for d in grid_deg])
                i = int(np.nanargmin(J))
                rows.append({"case": case, "w_tracking": w, "saturation_threshold": threshold,
                             "grid_best_alpha_deg": float(grid_deg[i]), "grid_best_objective": float(J[i])})
            off, on = rows[-2], rows[-1]
            print(f"  w_tracking {w:4g} /m, threshold {threshold:.2f}: grid best {off['grid_best_alpha_deg']:.0f} deg "
                  f"without rotor drag, {on['grid_best_alpha_deg']:.0f} deg with it")
    return rows


def gradient_check(ev: Evaluator, alpha_deg: float, case: str) -> dict:
    """``dJ/dalpha_0`` by ``jax.grad`` against central differences at ``alpha_deg`` (steps :data:`FD_STEPS`)."""
    a = math.radians(alpha_deg)
    _, g, _ = ev(a)
    fd = {h: (ev(a + h)[0] - ev(a - h)[0]) / (2 * h) for h in FD_STEPS}
    row = {"case": case, "alpha_deg": alpha_deg, "grad": g, "fd": fd[FD_STEP], "fd_step_rad": FD_STEP,
           "rel_err": abs(g - fd[FD_STEP]) / abs(fd[FD_STEP]),
           "rel_err_by_step": {f"{h:g}": abs(g - f) / abs(f) for h, f in fd.items()}}
    return row


def run_case(case: str, aero, grid_deg: np.ndarray, iterations: int, optimizer, stepper) -> tuple[dict, Evaluator]:
    """Optimise, grid-evaluate and record one flight."""
    prob = problem(aero, math.radians(START_DEG))
    ev = Evaluator(prob, optimizer, stepper)
    t0 = time.perf_counter()
    J_start, g_start, terms_start = ev(math.radians(START_DEG))
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = prob.minimize(optimizer, MinimizeOptions(iterations=iterations), progress=False)
    t_opt = time.perf_counter() - t0
    a_opt = float(res.design.platform.alpha)
    J_opt, g_opt, terms_opt = ev(a_opt)
    t0 = time.perf_counter()
    grid = [ev(math.radians(d)) for d in grid_deg]
    rotors = [ev.rotors(math.radians(d)) for d in grid_deg]
    t_grid = time.perf_counter() - t0
    Jg = np.array([r[0] for r in grid])
    i = int(np.nanargmin(Jg))
    rec = {
        "alpha_opt_deg": math.degrees(a_opt), "objective": J_opt, "grad_at_opt": g_opt, "terms_at_opt": terms_opt,
        "rotors_at_opt": ev.rotors(a_opt), "start_alpha_deg": START_DEG, "start_objective": J_start,
        "start_grad": g_start, "terms_at_start": terms_start, "iterations": res.iterations,
        "stop_reason": res.stop_reason, "alpha_path_deg": [math.degrees(r["platform.alpha"]) for r in res.history],
        "loss_history": [r["loss"] for r in res.history],
        "grid_alpha_deg": grid_deg, "grid_objective": Jg, "grid_grad": [r[1] for r in grid],
        "grid_terms": {k: [r[2][k] for r in grid] for k in grid[0][2]},
        "grid_min_rotor_input": [r["min_rotor_input"] for r in rotors],
        "grid_max_rotor_speed": [r["max_rotor_speed"] for r in rotors],
        "grid_cell_deg": float(grid_deg[1] - grid_deg[0]), "grid_best_alpha_deg": float(grid_deg[i]),
        "grid_best_objective": float(Jg[i]),
        "wall_s": {"first_step_with_compile": t_compile, "optimise": t_opt, "grid": t_grid},
    }
    print(f"{case}: Adam from {START_DEG:.0f} deg to alpha_0 = {rec['alpha_opt_deg']:.3f} deg, J {J_start:.5f} -> "
          f"{J_opt:.5f} ({res.iterations} iterations, {t_opt:.1f} s); grid best {rec['grid_best_alpha_deg']:.1f} deg, "
          f"J = {rec['grid_best_objective']:.5f}")
    print("  terms at the optimum: " + ", ".join(f"{k} {v:.5g}" for k, v in terms_opt.items())
          + f"; smallest rotor input {rec['rotors_at_opt']['min_rotor_input']:.4g} rad^2/s^2, largest speed "
          f"{rec['rotors_at_opt']['max_rotor_speed']:.1f} rad/s")
    return rec, ev


def plot(out: Path, record: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for case, color, label in (("rotor_drag_off", "C0", "rotor drag off"), ("rotor_drag_on", "C3", "rotor drag on")):
        r = record[case]
        d, J = np.asarray(r["grid_alpha_deg"]), np.asarray(r["grid_objective"])
        ax1.plot(d, J, "o-", ms=3, color=color, label=f"{label}: grid")
        ax1.plot(np.asarray(r["alpha_path_deg"]), np.asarray(r["loss_history"]), "x", ms=3, alpha=0.5, color=color,
                 label=f"{label}: Adam iterates")
        ax1.plot([r["alpha_opt_deg"]], [r["objective"]], "*", ms=14, color=color, mec="k",
                 label=f"{label}: optimum {r['alpha_opt_deg']:.1f} deg")
        u = np.asarray(r["grid_min_rotor_input"])
        ax2.plot(d, np.sign(u) * np.sqrt(np.abs(u)), "o-", ms=3, color=color, label=label)
        ax2.axvline(r["alpha_opt_deg"], color=color, lw=0.8, ls="--")
    ax1.set_yscale("log")
    ax1.set_xlabel(r"cant $\alpha_0$ [deg] ($\beta_0$ = 10 deg)")
    ax1.set_ylabel(r"$J$ = power + 10/m RMSE + 100 saturation")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    ax2.axhline(0.0, color="k", lw=0.8)
    ax2.set_xlabel(r"cant $\alpha_0$ [deg]")
    ax2.set_ylabel(r"least rotor input, sign$(u)\sqrt{|u|}$ [rad/s]")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    fig.suptitle(f"paper hexarotor, fixed attitude, figure-eight at {peak_speed():.1f} m/s: optimal cant with and "
                 "without rotor drag", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "aero_cant.png", dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="5-degree grid, 40 Adam iterations")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/aero_cant[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or os.environ.get("JAXROTOR_OUT") or ("jaxrotor-out/aero_cant" + ("_quick" if args.quick else "")))
    out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()

    hexa = presets.paper_hexarotor()
    aero, coefficients = hexarotor_aero(hexa)
    drag = drag_at_peak_speed(hexa, aero, peak_speed())
    print(f"paper hexarotor at {math.degrees(float(hexa.alpha)):.0f} deg cant, {drag['speed_m_s']:.2f} m/s in hover "
          f"trim: aerodynamic force {drag['total_N']:.2f} N (rotors {drag['rotors_N']:.2f} N, body "
          f"{drag['body_N']:.2f} N) against a weight of {drag['weight_N']:.2f} N")
    print(f"coefficients: k_d = {coefficients['rotor_drag_k_d']:.4g}, k_z = {coefficients['induced_inflow_k_z']:.4g} "
          f"N s/m per rad/s, c_D = {np.round(coefficients['parasitic_drag_c_D'], 5).tolist()} N s^2/m^2")

    step = 5.0 if args.quick else 1.0
    grid_deg = np.arange(BOUNDS_DEG[0], BOUNDS_DEG[1] + step / 2, step)
    iterations = 40 if args.quick else 80
    # Adam with a cosine decay from 0.03 rad (1.7 deg) per step to 1 % of it: travels the range, then settles
    optimizer = optax.adam(optax.cosine_decay_schedule(0.03, iterations, alpha=0.01))
    stepper = make_step()

    record = {"quick": args.quick, "coefficients": coefficients, "drag_at_peak_speed": drag,
              "flight": {"vehicle": "paper_hexarotor (Table II, J^a)", "controller": "FullyActuatedSE3 (Table III)",
                         "allocator": "PseudoInverse (exact, unbounded)", "motors": "ideal",
                         "reference": {"kind": "figure_eight", "amplitude_m": AMPLITUDE, "period_s": PERIOD,
                                       "duration_s": DURATION, "center_m": [0.0, 0.0, 1.0],
                                       "peak_speed_m_s": peak_speed(),
                                       "peak_acceleration_m_s2": 4 * AMPLITUDE[1] * (2 * math.pi / PERIOD) ** 2},
                         "integrator": f"Tsit5, fixed step {DT} s", "save_dt_s": SAVE_DT},
              "objective_definition": f"Energy() + {W_TRACKING:g} /m * Tracking() + {W_SATURATION:g} * "
                                      f"SaturationMargin(threshold={SATURATION_THRESHOLD})",
              "bounds_deg": BOUNDS_DEG, "optimizer": "optax.adam(cosine_decay_schedule(0.03, iterations, alpha=0.01))"}
    evaluators = {}
    for case in CASES:
        record[case], evaluators[case] = run_case(case, aero if case == "rotor_drag_on" else None, grid_deg,
                                                  iterations, optimizer, stepper)

    checks_rows = []
    for case in CASES:
        for d in CHECK_DEG:
            row = gradient_check(evaluators[case], d, case)
            checks_rows.append(row)
            print(f"{case}: dJ/dalpha_0 at {d:.0f} deg {row['grad']:.12g} /rad, central difference (h = {FD_STEP:g}) "
                  f"{row['fd']:.12g}, relative {row['rel_err']:.2e} (by step: "
                  + ", ".join(f"{h}: {e:.1e}" for h, e in row["rel_err_by_step"].items()) + ")")
    record["gradient_check"] = checks_rows

    on, off = record["rotor_drag_on"], record["rotor_drag_off"]
    shift = on["alpha_opt_deg"] - off["alpha_opt_deg"]
    ev_on = evaluators["rotor_drag_on"]
    J_on_at_off, _, terms_on_at_off = ev_on(math.radians(off["alpha_opt_deg"]))
    rotors_on_at_off = ev_on.rotors(math.radians(off["alpha_opt_deg"]))
    record["optimum_shift_deg"] = shift
    record["drag_off_design_flown_with_drag"] = {"alpha_deg": off["alpha_opt_deg"], "objective": J_on_at_off,
                                                 "terms": terms_on_at_off, **rotors_on_at_off}
    print(f"optimal cant: {off['alpha_opt_deg']:.2f} deg without rotor drag, {on['alpha_opt_deg']:.2f} deg with it "
          f"(moves {shift:+.2f} deg); J {off['objective']:.5f} and {on['objective']:.5f}")
    print(f"the drag-free optimum flown with drag: J = {J_on_at_off:.5f} (the drag optimum's {on['objective']:.5f}); "
          f"smallest rotor input {rotors_on_at_off['min_rotor_input']:.4g} rad^2/s^2")
    rel_change = abs(on["start_objective"] - off["start_objective"]) / abs(off["start_objective"])
    record["objective_change_at_start"] = {"off": off["start_objective"], "on": on["start_objective"],
                                           "relative": rel_change}
    if not args.quick:  # the drag optimum sits on the saturation band: how far do the weights move it?
        print("sensitivity of the grid's best cant to the objective's weights:")
        t0 = time.perf_counter()
        record["sensitivity"] = sensitivity(aero, grid_deg, optimizer, stepper)
        record["wall_s_sensitivity"] = time.perf_counter() - t0
    record["wall_s_total"] = time.perf_counter() - t_all

    plot(out, record)

    checks = Checks("aero_cant")
    for row in checks_rows:
        checks.add(f"dJ/dalpha_0 against central differences, {row['case']} at {row['alpha_deg']:.0f} deg (relative)",
                   row["rel_err"], "<=", GRAD_RTOL)
    for case in CASES:
        r = record[case]
        checks.add(f"{case}: Adam's optimum within one grid cell of the grid's best (|delta alpha_0| / cell)",
                   abs(r["alpha_opt_deg"] - r["grid_best_alpha_deg"]) / r["grid_cell_deg"], "<=", 1.0)
        checks.add(f"{case}: Adam's objective over the grid's best", r["objective"] / r["grid_best_objective"],
                   "<=", 1.0 + 1e-3)
        checks.add(f"{case}: smallest rotor input along the flight at the optimum [rad^2/s^2]",
                   r["rotors_at_opt"]["min_rotor_input"], ">", 0.0)
    checks.add("rotor drag changes the objective at the start (relative difference)", rel_change, ">", 1e-3)
    print(f"total wall time {record['wall_s_total']:.1f} s")
    return checks.finish(out / "aero_cant.json", record)


if __name__ == "__main__":
    sys.exit(main())
