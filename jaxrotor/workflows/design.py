"""``jaxrotor design``: co-design with gradients, the CMA-ES baseline, a Pareto front and the physics-layer check.

:func:`run_design` takes a :class:`~jaxrotor.io.design_config.DesignConfig` and

1. solves it with the augmented-Lagrangian Adam of :func:`jaxrotor.optimize.codesign.solve`
   (every catalogue motor and cell count, each optimised in the continuous variables);
2. runs CMA-ES (:func:`jaxrotor.optimize.codesign.cma_baseline`) on the same function with
   ``budget_factor`` times the gradient method's evaluations, for every seed;
3. sweeps the Pareto measure's bound (epsilon-constraint: one constrained solve per bound,
   warm-started), keeping the points that satisfy every constraint;
4. when a constraint asks for a survivable rotor loss (``rotor_loss`` or ``rotor_loss_axis``), analyses every
   single-rotor loss of the winner exactly (:func:`jaxrotor.analysis.rotor_loss`: ``best.rotor_losses_analysis``);
   a loss the analysis calls ``"lost"`` fails the verdict;
5. writes the winning design (and each Pareto point) as a vehicle configuration
   (``best.toml``: ``[platform]``, ``[parts.*]``, the controller, actuators, solver and the
   mission's first flight), and flies it on the physics layer (MuJoCo C engine: spinning
   propellers, motor lag, the mission's flight computer and sensor noise, or one at
   ``[design.verify] control_rate`` for a file without ``[control]``): the hover
   endurance from the physics flight's rotor speeds and the mission's tracking, beside the analytic
   prediction; with ``rotor_losses``, every single-rotor loss of the winner on both layers
   (:func:`jaxrotor.workflows.faults.rotor_loss_report`) against the static analysis;
6. writes ``design.json``, ``convergence.png`` (objective against flights flown, both methods)
   and ``pareto.png``.

``design.json`` keys (the contract): ``objective`` (``name``, ``sense``: ``"maximize"`` or
``"minimize"``, ``unit``), ``best`` (``objective``, ``parameters``, ``constraints``: each
``{value, bound, satisfied}``, ``endurance_hover_s``), ``gradient`` and ``baseline`` (``method``,
``evaluations`` (flights flown), ``best_objective``, ``wall_s``), ``pareto`` (points), ``physics``
(``objective``, ``tracking``, ...), plus ``verdict``.
"""

from __future__ import annotations

import copy
import json
import math
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .._util import to_jsonable
from ..io.design_config import DesignConfig, degree_variable
from ..optimize.codesign import (MEASURES, OBJECTIVES, PER_ROTOR, _rotor_angles, cma_baseline, per_rotor_variable, solve,
                                 variable_unit)

__all__ = ["DESIGN_KEYS", "run_design", "design_table", "write_toml", "output_dir", "design_summary"]

#: Top-level keys of ``design.json``.
DESIGN_KEYS = ("objective", "best", "gradient", "baseline", "pareto", "physics", "verdict")

#: Relative difference of the physics-layer hover endurance from the analytic one that passes.
ENDURANCE_TOLERANCE = 0.02


def output_dir(config: DesignConfig, out_dir: str | Path | None = None) -> Path:
    """Where :func:`run_design` writes: ``out_dir``, or ``./jaxrotor-out/<name>/``."""
    return Path(out_dir) if out_dir is not None else Path("jaxrotor-out") / config.name


# --------------------------------------------------------------------------- TOML out


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = float(v)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return repr(f)


def write_toml(data: dict, path: str | Path | None = None, header: str = "") -> str:
    """``data`` (nested dicts of numbers, strings, booleans and lists) as TOML text; written to ``path`` if given."""
    lines = [f"# {h}" if h else "#" for h in header.splitlines()] if header else []

    def emit(table: dict, prefix: str):
        scalars = {k: v for k, v in table.items() if not isinstance(v, dict)
                   and not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v))}
        if prefix and (scalars or not table):
            lines.append(f"\n[{prefix}]")
        for k, v in scalars.items():
            lines.append(f"{k} = {_toml_value(v)}")
        for k, v in table.items():
            if isinstance(v, dict):
                emit(v, f"{prefix}.{k}" if prefix else k)
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                for item in v:
                    lines.append(f"\n[[{prefix + '.' if prefix else ''}{k}]]")
                    for kk, vv in item.items():
                        lines.append(f"{kk} = {_toml_value(vv)}")

    emit(data, "")
    text = "\n".join(lines).lstrip("\n") + "\n"
    if path is not None:
        Path(path).write_text(text)
    return text


def design_table(config: DesignConfig, x, motor: str, cells: int, name: str, mission: int = 0) -> dict:
    """The vehicle configuration (a TOML-ready dict) of design ``x`` with catalogue ``motor`` and ``cells``.

    The base file's vehicle and flight tables with ``[platform]`` (arm length, cant, dihedral, elevation) and
    ``[parts.motor]``, ``[parts.propeller]``, ``[parts.battery]`` (and ``[parts.arm]`` with an arm-tube
    variable) set to the design's, and
    ``[reference]`` = mission flight ``mission``. ``jaxrotor analyze``, ``simulate``, ``faults``,
    ``export`` and ``report`` read it.
    """
    from ..design.catalogue import MOTORS

    pr = config.problem
    v = dict(zip(pr.names, (float(a) for a in x)))
    raw = config.raw
    out: dict[str, Any] = {"name": name,
                           "description": f"designed by jaxrotor design from {Path(config.source).name}"}
    for k, t in raw.items():
        if k in ("design", "reference", "name", "description"):
            continue
        out[k] = copy.deepcopy(t)
    plat = out["platform"]
    if "arm_length" in v:
        plat["arm_length"] = v["arm_length"]
    for var, key in (("tilt", "alpha"), ("dihedral", "beta"), ("elevation", "delta")):
        if var in v:
            plat.pop(key, None)
            plat[f"{key}_deg"] = math.degrees(v[var])
    per_rotor = {r[0] for r in map(per_rotor_variable, v) if r is not None}
    if per_rotor:  # per-rotor angles: each rotor's own, as one list per angle
        built, _ = pr.build(np.asarray(x, float), 0, pr.cells[0])
        for var, key in PER_ROTOR.items():  # in PER_ROTOR's order: best.toml's keys do not depend on set order
            if var not in per_rotor:
                continue
            for k in (key, f"{key}_deg", f"{key}_sign"):
                plat.pop(k, None)
            plat[f"{key}_deg"] = [math.degrees(a) for a in np.asarray(_rotor_angles(built, key), float)]
    parts = out.setdefault("parts", {})
    parts["motor"] = dict(MOTORS[motor])
    if "arm_tube_diameter" in v:
        arm = pr.arm_tubes.arm(v["arm_tube_diameter"])
        parts["arm"] = {"mass_per_length": float(arm.mass_per_length), "radius": float(arm.radius)}
    D = v.get("propeller_diameter", float(pr.platform.parts.propeller.diameter))
    P = v.get("propeller_pitch", float(pr.platform.parts.propeller.pitch))
    prop = pr.propellers.propeller(D, P)
    parts["propeller"] = {"diameter": D, "pitch": P, "mass": float(prop.mass), "c_t": float(prop.c_t),
                          "c_p": float(prop.c_p), "chord": float(prop.chord), "thickness": float(prop.thickness)}
    cap = v.get("battery_capacity", float(pr.platform.parts.battery.capacity_mah))
    bat = pr.batteries.battery(cap, int(cells), pr.platform.parts.battery)
    table = dict(parts.get("battery", {}))
    table.update({"mass": float(bat.mass), "size": [float(a) for a in np.asarray(bat.size)], "cells": int(cells),
                  "capacity_mah": cap, "internal_resistance": float(bat.internal_resistance)})
    parts["battery"] = table
    out["reference"] = copy.deepcopy(config.missions[mission][1])
    return out


def _physics_table(table: dict, settings, reference: dict | None = None) -> dict:
    """``table`` (with ``reference``) flown by a flight computer: the file's own ``[control]`` and ``[sensors]``
    (the mission's), or, when it has none, one at ``[design.verify] control_rate`` with its ``sensors``."""
    t = copy.deepcopy(table)
    if "control" not in t:
        period = 1.0 / float(settings.control_rate)
        t["control"] = {"rate": float(settings.control_rate), "seed": 0}
        t["solver"] = {**t.get("solver", {}), "adaptive": False, "dt": period}
        t["flight"] = {**t.get("flight", {}), "save_dt": 5 * period}
        if settings.sensors:
            t["sensors"] = dict(settings.sensors)
    if reference is not None:
        t["reference"] = reference
    return t


# --------------------------------------------------------------------------- physics check


def _hover_endurance_from(traj, platform, t_from: float) -> float:
    """Hover endurance [s] of ``platform``'s battery at the mean electrical power of ``traj``'s rotor speeds
    after ``t_from`` (the analytic :func:`~jaxrotor.electrical.endurance_hover` uses the hover speeds instead)."""
    import jax.numpy as jnp

    from ..electrical import discharge_time, electrical_state

    parts = platform.parts
    t = np.asarray(traj.t)
    w = np.asarray(traj.rotor_speed)[t >= t_from - 1e-9]
    b = parts.battery
    power = float(jnp.mean(electrical_state(jnp.asarray(w), platform.c_tau, parts.motor, b, b.soc0,
                                            esc=parts.esc).battery_power))
    return float(discharge_time(jnp.asarray(power), b, soc0=b.soc0, soc_floor=b.soc_floor))


def verify_on_physics(config: DesignConfig, table: dict, analytic: dict, *, echo: Callable = print) -> dict:
    """Fly the design ``table`` on the physics layer: a hover for the endurance, every mission flight for the
    tracking; returns ``{objective, endurance_hover_s, tracking, ...}`` beside the analytic values."""
    from ..io.config import from_dict
    from ..loop import fly
    from ..metrics import position_error, rms_norm
    from . import usecase

    st = config.settings
    dur = float(st.physics_duration)
    first = config.missions[0][1]
    pos = first.get("position", first.get("center", [0.0, 0.0, 1.0]))
    hover = {"kind": "hover", "position": pos, "duration": dur}
    conf = from_dict(_physics_table(table, st, hover), f"{table['name']}_hover")
    res = usecase.fly_physics_layer(conf)
    traj = res["_result"].trajectory
    e_phys = _hover_endurance_from(traj, conf.platform, dur / 2)
    tracking_p, tracking_a = [], []
    for name, ref in config.missions:
        ref = dict(ref)
        ref["duration"] = min(float(ref.get("duration", dur)), dur)
        c = from_dict(_physics_table(table, st, ref), f"{table['name']}_{name}")
        pt = usecase.fly_physics_layer(c)["_result"].trajectory
        at = fly(c.platform, c.controller, c.flight)
        tracking_p.append(float("inf") if bool(pt.diverged) else float(rms_norm(position_error(pt))))
        tracking_a.append(float("inf") if bool(at.diverged) else float(rms_norm(position_error(at))))
    tracking = float(np.sqrt(np.mean(np.square(tracking_p))))
    e_an = float(analytic["endurance"])
    obj = config.problem.objective
    value = {"endurance": e_phys, "mass": float(res["mass"])}.get(obj, float(analytic[obj]))
    out = {"objective": value, "analytic_objective": float(analytic[obj]),
           "endurance_hover_s": e_phys, "analytic_endurance_hover_s": e_an,
           "endurance_relative_difference": (e_phys - e_an) / e_an,
           "tracking": tracking, "analytic_tracking_nominal": float(np.sqrt(np.mean(np.square(tracking_a)))),
           "tracking_per_flight": dict(zip([m[0] for m in config.missions], tracking_p)),
           "mass": float(res["mass"]), "control_rate_hz": float(conf.flight.control_rate),
           "sensors": conf.raw.get("sensors", {}), "duration_s": dur}
    bound = next((c.bound for c in config.problem.constraints if c.measure == "tracking"), None)
    out["tracking_bound"] = bound
    out["holds"] = bool(abs(out["endurance_relative_difference"]) <= ENDURANCE_TOLERANCE
                        and (bound is None or tracking <= bound))
    echo(f"  physics: endurance {e_phys:.1f} s (analytic {e_an:.1f} s, {100 * out['endurance_relative_difference']:+.2f} %),"
         f" tracking {tracking:.4f} m" + (f" (bound {bound} m)" if bound is not None else ""))
    return out


# --------------------------------------------------------------------------- the run


def _bar(total: int, desc: str, progress: bool):
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=desc, disable=not progress, unit="step")

    def update(done, tot):
        bar.n = done
        bar.refresh()
        if done >= tot:
            bar.close()

    return update


def _pick(result, sign: int) -> int | None:
    ok = np.nonzero(result.feasible)[0]
    if ok.size == 0:
        return None
    vals = result.objective[ok]
    return int(ok[np.argmax(vals)] if sign > 0 else ok[np.argmin(vals)])


def _parameters(config: DesignConfig, x, motor: str, cells: int) -> dict:
    out = {}
    for name, value in zip(config.problem.names, np.asarray(x, float)):
        out[name] = float(value)
        if degree_variable(name):
            out[f"{name}_deg"] = math.degrees(float(value))
    out["motor"], out["cells"] = motor, int(cells)
    return out


def _constraints(config: DesignConfig, m: dict, bounds=None) -> dict:
    out = {}
    for k, c in enumerate(config.problem.constraints):
        b = c.bound if bounds is None else float(bounds[k])
        v = float(m[c.measure])
        out[c.measure] = {"value": v, "bound": b, "sense": "at_least" if c.at_least else "at_most",
                          "unit": MEASURES[c.measure][0], "satisfied": bool(v >= b if c.at_least else v <= b)}
    return out


def mark_dominated(points: list[dict], sign: int, at_least: bool) -> None:
    """Set ``dominated`` on each Pareto point: a feasible point is dominated when another has an objective at least
    as good (``sign``: +1 maximised) and a swept measure at least as good (``at_least``: larger is better), one of
    them strictly; an infeasible point is marked dominated. Only the others form the front."""
    s_m = 1 if at_least else -1
    for p in points:
        p["dominated"] = not p["feasible"] or any(
            q is not p and q["feasible"] and sign * q["objective"] >= sign * p["objective"]
            and s_m * q["value"] >= s_m * p["value"]
            and (sign * q["objective"] > sign * p["objective"] or s_m * q["value"] > s_m * p["value"])
            for q in points)


def _median(values):
    ok = [v for v in values if v is not None and np.isfinite(v)]
    return float(statistics.median(ok)) if ok else float("nan")


def run_design(config: DesignConfig, out_dir: str | Path | None = None, *, echo: Callable = print,
               progress: bool = True, figures: bool = True) -> dict:
    """Run the design problem of ``config`` end to end (module docstring) and write ``DIR/design.json`` and
    ``DIR/best.toml``. Returns the ``design.json`` dict; its ``verdict.ok`` is false when no candidate
    satisfies the constraints or the physics-layer check does not hold."""
    pr, st = config.problem, config.settings
    out = output_dir(config, out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sign = OBJECTIVES[pr.objective]
    unit = MEASURES[pr.objective][0]
    fpd = max(pr.flights_per_design, 1)
    echo(f"design {config.name}: {pr.objective} ({'maximize' if sign > 0 else 'minimize'}), "
         f"{len(pr.motor_names)} motors x {len(pr.cells)} cell counts, variables {', '.join(pr.names)}")

    # 1. gradient
    steps = (st.iterations // st.rounds) * st.rounds * len(pr.cells)
    grad = solve(pr, iterations=st.iterations, rounds=st.rounds, learning_rate=st.learning_rate, rho=st.rho, tighten=st.tighten,
                 progress=_bar(steps, "gradient (AL-Adam)", progress))
    i_best = _pick(grad, sign)
    g_best = float(grad.objective[i_best]) if i_best is not None else float("nan")
    echo(f"gradient: best {pr.objective} {g_best:.5g} {unit} after {grad.evaluations} designs "
         f"({grad.evaluations * fpd} flights), {grad.wall_s:.1f} s")

    # 2. CMA-ES baseline, same function, budget_factor x the evaluations
    budget = int(round(st.budget_factor * grad.evaluations))
    runs = []
    for seed in st.seeds:
        b = cma_baseline(pr, budget, seed=seed, popsize=st.popsize,
                         progress=_bar(budget, f"CMA-ES seed {seed}", progress))
        runs.append(b)
        echo(f"CMA-ES seed {seed}: best {pr.objective} {b.best_objective:.5g} {unit} after {b.evaluations} designs, "
             f"{b.wall_s:.1f} s")
    base_best = _median([b.best_objective for b in runs])

    # 3. Pareto front (epsilon-constraint on one constraint's bound)
    pareto = []
    if st.pareto_measure is not None and i_best is not None:
        k = [c.measure for c in pr.constraints].index(st.pareto_measure)
        # continuation: each point starts from the previous one's best feasible designs and multipliers
        warm_x, warm_lam = grad.x, grad.lam
        for bnd in st.pareto_bounds:
            bounds = pr.bounds.copy()
            bounds[k] = bnd
            r = solve(pr, iterations=st.pareto_iterations, rounds=3, learning_rate=st.learning_rate, rho=st.rho, tighten=st.tighten,
                      bounds=bounds, theta0=np.stack([pr.to_theta(x) for x in warm_x]), lam0=warm_lam, progress=None)
            warm_x, warm_lam = r.x, r.lam
            j = _pick(r, sign)
            point = {"bound": float(bnd), "measure": st.pareto_measure, "feasible": j is not None}
            if j is not None:
                motor, cells = r.candidates[j]
                point.update(objective=float(r.objective[j]), value=float(r.measures[j][st.pareto_measure]),
                             parameters=_parameters(config, r.x[j], motor, cells),
                             constraints=_constraints(config, r.measures[j], bounds),
                             endurance_hover_s=float(r.measures[j]["endurance"]), _x=r.x[j])
                echo(f"pareto {st.pareto_measure} {'>=' if pr.constraints[k].at_least else '<='} {bnd:g}: "
                     f"{pr.objective} {point['objective']:.5g} {unit} ({motor}, {cells}S)")
            else:
                echo(f"pareto {st.pareto_measure} bound {bnd:g}: no feasible design")
            pareto.append(point)

    mark_dominated(pareto, sign, pr.constraints[[c.measure for c in pr.constraints].index(st.pareto_measure)].at_least
                   if st.pareto_measure is not None else True)
    report: dict[str, Any] = {
        "name": config.name, "config": config.source, "quick": st.quick,
        "objective": {"name": pr.objective, "sense": "maximize" if sign > 0 else "minimize", "unit": unit},
        "variables": {v.name: {"lower": v.lower, "upper": v.upper, "start": v.start, "unit": variable_unit(v.name)}
                      for v in pr.variables},
        "catalogue": {"motors": list(pr.motor_names), "cells": list(pr.cells)},
        "flights_per_evaluation": fpd,
        "gradient": {"method": "augmented Lagrangian + Adam, catalogue enumerated (vmap)",
                     "evaluations": grad.evaluations * fpd, "designs_evaluated": grad.evaluations,
                     "best_objective": g_best, "wall_s": grad.wall_s,
                     "candidates": [{"motor": c[0], "cells": c[1], "feasible": bool(f),
                                     "objective": None if not f else float(o)}
                                    for c, f, o in zip(grad.candidates, grad.feasible, grad.objective)],
                     "history": [[e * fpd, v] for e, v in grad.history]},
        "baseline": {"method": "CMA-ES (cma), penalised", "evaluations": int(round(statistics.median(
                         [b.evaluations for b in runs]))) * fpd, "designs_evaluated": [b.evaluations for b in runs],
                     "best_objective": base_best, "wall_s": float(statistics.median([b.wall_s for b in runs])),
                     "budget_factor": st.budget_factor,
                     "seeds": [{"seed": s, "best_objective": b.best_objective, "best": b.best, "wall_s": b.wall_s}
                               for s, b in zip(st.seeds, runs)],
                     "history": [[e * fpd, v] for e, v in runs[0].history] if runs else []},
        "pareto": [{k: v for k, v in p.items() if not k.startswith("_")} for p in pareto],
    }
    if i_best is None:
        report["best"] = None
        report["physics"] = None
        report["verdict"] = {"ok": False, "reasons": ["no candidate satisfies every constraint"]}
        _write(report, out, echo)
        if figures:
            plot_convergence(report, out / "convergence.png")
        return report

    motor, cells = grad.candidates[i_best]
    mb = grad.measures[i_best]
    report["best"] = {"objective": g_best, "parameters": _parameters(config, grad.x[i_best], motor, cells),
                      "constraints": _constraints(config, mb), "endurance_hover_s": float(mb["endurance"]),
                      "mass_kg": float(mb["mass"]), "measures": mb}
    best = design_table(config, grad.x[i_best], motor, cells, f"{config.name}_best")
    write_toml(best, out / "best.toml", header=f"The winning design of {config.name} (jaxrotor design).\n"
               f"{pr.objective} = {g_best:.6g} {unit}; motor {motor}, {cells}S.")
    echo(f"wrote {out / 'best.toml'}")
    feas = [p for p in pareto if p["feasible"] and not p["dominated"]]
    for n, p in enumerate(feas):
        t = design_table(config, p["_x"], p["parameters"]["motor"], p["parameters"]["cells"],
                         f"{config.name}_pareto{n + 1}")
        write_toml(t, out / f"pareto{n + 1}.toml", header=f"Pareto point {n + 1} of {config.name}: "
                   f"{st.pareto_measure} bound {p['bound']:g}.")
        p["config"] = f"pareto{n + 1}.toml"
    report["pareto"] = [{k: v for k, v in p.items() if not k.startswith("_")} for p in pareto]

    # 4. the static rotor-loss analysis of the winner, when a constraint asks for a survivable loss
    reasons = []
    if {c.measure for c in pr.constraints} & {"rotor_loss", "rotor_loss_axis"}:
        report["best"]["rotor_losses_analysis"] = _loss_outcomes(best)
        lost = [r["rotor"] for r in report["best"]["rotor_losses_analysis"] if r["outcome"] == "lost"]
        if lost:
            reasons.append(f"the exact analysis says the loss of rotor(s) {lost} is lost although the design's "
                           "rotor-loss constraint holds (rotor_loss_axis is the analysis' own rule)")

    # 5. physics layer
    if st.physics:
        echo("physics layer: the winning design")
        phys = verify_on_physics(config, best, mb, echo=echo)
        checked = [phys]
        idx = sorted({0, len(feas) - 1}) if len(feas) >= 2 else list(range(len(feas)))
        for j in idx[:2]:
            p = feas[j]
            t = design_table(config, p["_x"], p["parameters"]["motor"], p["parameters"]["cells"],
                             f"{config.name}_pareto{j + 1}")
            echo(f"physics layer: Pareto point {j + 1}")
            meas = {"endurance": p["endurance_hover_s"], pr.objective: p["objective"]}
            p["physics"] = verify_on_physics(config, t, meas, echo=echo)
            checked.append(p["physics"])
        report["pareto"] = [{k: v for k, v in p.items() if not k.startswith("_")} for p in pareto]
        if st.rotor_losses:
            phys["rotor_losses"] = _rotor_losses(best, st, out, echo, progress)
            if not phys["rotor_losses"]["agree"]:
                reasons.append("a rotor loss flown did not hold as the analysis said")
        report["physics"] = phys
        for c in checked:
            if not c["holds"]:
                reasons.append(f"physics layer: endurance off by {100 * c['endurance_relative_difference']:+.2f} % "
                               f"or tracking {c['tracking']:.4g} m over its bound")
    else:
        report["physics"] = None
    report["verdict"] = {"ok": not reasons, "reasons": reasons}
    _write(report, out, echo)
    if figures:
        plot_convergence(report, out / "convergence.png")
        if pareto:
            plot_pareto(report, out / "pareto.png")
    return report


def _loss_outcomes(table: dict) -> list[dict]:
    """The exact analysis of every single-rotor loss of the design ``table`` (:func:`jaxrotor.analysis.rotor_loss`):
    ``[{rotor (from 1), outcome, yaw_spin_up [rad/s^2]}]``."""
    from ..analysis.exact import rotor_loss
    from ..io.config import from_dict

    platform = from_dict(copy.deepcopy(table), f"{table['name']}_analysis").platform
    return [{"rotor": r.rotor + 1, "outcome": r.outcome, "yaw_spin_up": r.yaw_spin_up} for r in rotor_loss(platform)]


def _rotor_losses(table: dict, settings, out: Path, echo, progress) -> dict:
    """Every single-rotor loss of the design ``table`` flown on both layers (:func:`rotor_loss_report`)."""
    from ..io.config import from_dict
    from .faults import rotor_loss_report

    first = table["reference"]
    pos = first.get("position", first.get("center", [0.0, 0.0, 1.0]))
    t = copy.deepcopy(table)
    t["reference"] = {"kind": "hover", "position": pos, "duration": 5.0}
    conf = from_dict(t, f"{table['name']}_losses")
    rep = rotor_loss_report(conf, out / "rotor_losses", physics=True, settle=settings.loss_settle, echo=echo,
                            progress=progress)
    return {"agree": bool(rep["agree"]),
            "rotors": [{k: r[k] for k in ("rotor", "analysis", "analytic", "physics")} for r in rep["rotors"]]}


def _write(report: dict, out: Path, echo) -> None:
    (out / "design.json").write_text(json.dumps(to_jsonable(report), indent=2))
    echo(design_summary(report))
    echo(f"wrote {out / 'design.json'}")


def design_summary(report: dict) -> str:
    """A short text table of a ``design.json`` dict: the two methods and the physics check."""
    o = report["objective"]
    g, b = report["gradient"], report["baseline"]
    lines = [f"{'method':<34}{'best ' + o['name'] + ' [' + o['unit'] + ']':>22}{'flights':>10}{'wall [s]':>10}",
             f"{g['method'][:33]:<34}{g['best_objective']:>22.6g}{g['evaluations']:>10d}{g['wall_s']:>10.1f}",
             f"{b['method'][:33]:<34}{b['best_objective']:>22.6g}{b['evaluations']:>10d}{b['wall_s']:>10.1f}"]
    losses = (report.get("best") or {}).get("rotor_losses_analysis")
    if losses:
        lines.append("rotor losses (exact analysis): " + ", ".join(
            f"{r['rotor']} {r['outcome']}" for r in losses))
    phys = report.get("physics")
    if phys:
        lines.append(f"physics layer: endurance {phys['endurance_hover_s']:.1f} s vs analytic "
                     f"{phys['analytic_endurance_hover_s']:.1f} s; tracking {phys['tracking']:.4f} m")
    v = report.get("verdict", {})
    lines.append("verdict: " + ("OK" if v.get("ok") else "FAILED: " + "; ".join(v.get("reasons", []))))
    return "\n".join(lines)


# --------------------------------------------------------------------------- figures


def _save(fig, ax, path) -> Path:
    """Grid, legend (when something is labelled), tight layout; ``fig`` written to ``path`` (120 dpi) and closed."""
    import matplotlib.pyplot as plt

    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def plot_convergence(report: dict, path: str | Path) -> Path:
    """Best feasible objective against flights flown, the gradient method and CMA-ES (``convergence.png``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for key, style in (("gradient", "-"), ("baseline", "--")):
        h = np.asarray(report[key]["history"], dtype=float).reshape(-1, 2)
        if h.size:
            ax.plot(h[:, 0], h[:, 1], style, label=report[key]["method"])
    o = report["objective"]
    ax.set_xscale("log")
    ax.set_xlabel("flights flown")
    ax.set_ylabel(f"best feasible {o['name']} [{o['unit']}]")
    ax.set_title(f"{report['name']}: {o['sense']} {o['name']}")
    return _save(fig, ax, path)


def plot_pareto(report: dict, path: str | Path) -> Path:
    """The Pareto front: objective against the swept measure, dominated points greyed (``pareto.png``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = sorted((p for p in report["pareto"] if p.get("feasible") and not p.get("dominated")),
                 key=lambda p: p["value"])
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    dominated = [p for p in report["pareto"] if p.get("feasible") and p.get("dominated")]
    if dominated:
        ax.plot([p["value"] for p in dominated], [p["objective"] for p in dominated], "x", color="gray",
                label="dominated (not on the front)")
    if pts:
        xs = [p["value"] for p in pts]
        ys = [p["objective"] for p in pts]
        ax.plot(xs, ys, "o-", label="Pareto points (every constraint satisfied)")
        for p, x, y in zip(pts, xs, ys):
            ax.annotate(f"{p['parameters']['motor']} {p['parameters']['cells']}S", (x, y), fontsize=7,
                        textcoords="offset points", xytext=(4, 4))
    if report.get("best"):
        m = pts[0]["measure"] if pts else None
        if m is not None:
            ax.plot([report["best"]["constraints"][m]["value"]], [report["best"]["objective"]], "r*", ms=12,
                    label="winning design")
    o = report["objective"]
    ax.set_xlabel(pts[0]["measure"] if pts else "")
    ax.set_ylabel(f"{o['name']} [{o['unit']}]")
    return _save(fig, ax, path)
