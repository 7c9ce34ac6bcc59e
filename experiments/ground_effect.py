"""Ground effect on both layers: the hover thrust near the floor against the closed form, and a landing with and
without it.

The vehicle is the x500 preset with its parts (``jaxrotor.physics.default_parts``: 10-inch propellers, rotor
radius ``R = 0.127 m``, landing gear). Both layers fly it with :class:`jaxrotor.aero.Aerodynamics`
``(ground_effect=True, floor_height=h_f)``, ``h_f`` the physics model's floor (world ``z`` of the landing gear's
feet at ``p = 0``: ``build_model(...).floor_height``, -0.205 m), so both see one floor; the rotors are along
``z_B``, so in level hover every rotor's thrust is scaled by the Cheeseman-Bennett ratio at its hub height ``h``
above that floor::

    T/T_inf = 1 / (1 - (R / 4 h)^2)    (capped at ground_effect_max = 2),

and the rotor thrust needed to hover is ``T_hover(h) = m g / (T/T_inf)`` [N] (all rotors together).

1. Hover table. For hub heights ``h = 0.5 R, 1 R, 2 R, 4 R`` and far away (``16 R``), a closed-loop hover on
   the analytic layer and on the physics layer (MuJoCo C engine); the thrust measured is the rotors' commanded
   thrust ``sum_i c_f u_i`` averaged over the last :data:`AVERAGE_S` of the hover, the height the mean hub
   height over the same window. The controller is the under-actuated geometric one with auto gains
   (:func:`jaxrotor.gains.with_auto_gains`) without vertical integral action (``GainSpec(vertical_integral=0)``):
   the ground cushion is a stiff vertical spring (``-(m g / (T/T_inf)) d(T/T_inf)/dh``: about 100 N/m per kg at
   0.5 R, over 20 x the loop's ``K_p,z`` = 4.6 s^-2), so the integral would take tens of seconds to settle (with
   it, a 0.5 R hover is still 1.8 cm high after 30 s); with a proportional vertical loop the vehicle settles in
   seconds where ``(T/T_inf)(h) (m g + m K_p,z e_z) = m g``, and the reference is placed
   ``e_z = g (1/(T/T_inf) - 1) / K_p,z`` below the target height so the hover is at the target. The flown
   thrust is compared with the closed form at the flown hub height (tolerance :data:`TOL_ANALYTIC` relative on
   the analytic layer, :data:`TOL_PHYSICS` on the physics layer) and the flown height with the target
   (:data:`TOL_HEIGHT` in ``h/R``).

   On the physics layer the landing gear touches the floor when the hubs are 1.73 R above it, so the hovers at
   0.5 R and 1 R are flown without the floor contact (``ModelOptions(floor=False)``, the ground effect's floor
   still at ``h_f``: the gear passes through where the floor would be); 2 R, 4 R and 16 R with the floor on.

2. Landing. From a hover at ``z = 1 m`` (hubs 9.6 R above the floor) a minimum-jerk descent in 4 s to
   ``z = -0.02 m`` (the centre of mass 2 cm below its resting height ``z = 0``, where the gear stands on the
   floor), then a 5 s hold (:data:`LANDING`), with the default auto gains (vertical integral on), a 500 Hz
   flight computer, 20 ms first-order motors: on the physics layer (MuJoCo C, floor on) with the
   ground effect on and off; touchdown (first sample with a floor contact force), the vertical speed just
   before it, the peak contact force, and the commanded thrust near the floor. The same landing on the analytic
   layer (no floor: its touchdown is where ``z`` crosses 0) shows that both layers see one ground effect before
   contact: their thrust profiles agree up to the physics layer's touchdown (:data:`TOL_PROFILE` of ``m g``).

Writes ``ground_effect.json`` (``"hover"``: one row per height, ``"landing"``: ``"with_ground_effect"`` and
``"without"``, ...) and ``ground_effect.png`` into ``--out``; prints one ``check ...: PASS/FAIL`` line per check
(``experiments/_checks.py``) and exits 1 if any fails (a hover off the closed form, a flight diverged, a landing
that does not touch down, a landing with ground effect no later than without it). ``--quick``: a faster landing
(3 s descent to ``z = -0.03 m``, 2 s hold), 6 s hovers, the physics layer's hover at 0.5 R only, no analytic
landing without ground effect.

Every flight is one :func:`descent_reference` (a hover has start = end), so the analytic layer compiles one
program for all flights with ground effect and the physics layer's tick is compiled once for them
(``share_compilation``).

Run::

    python experiments/ground_effect.py            # all heights on both layers
    python experiments/ground_effect.py --quick    # under a minute
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

import jaxrotor as jr  # noqa: E402
from jaxrotor.aero import Aerodynamics, ground_effect_ratio  # noqa: E402
from jaxrotor.allocators import Clip  # noqa: E402
from jaxrotor.control import UnderactuatedSE3  # noqa: E402
from jaxrotor.design.platform import rotor_positions  # noqa: E402
from jaxrotor.dynamics import Actuators, FirstOrderMotor  # noqa: E402
from jaxrotor.flight import Flight  # noqa: E402
from jaxrotor.gains import GainSpec, with_auto_gains  # noqa: E402
from jaxrotor.physics import ModelOptions, PhysicsSettings, build_model, default_parts, fly_physics  # noqa: E402
from jaxrotor.reference import Hover, Sequence, Transfer  # noqa: E402

from _checks import Checks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VEHICLE = "x500"
RATE = 500.0  # Hz, flight computer (the engine steps at 1 ms: two steps per tick)
MOTOR_TAU = 0.02  # s, first-order motors
SAVE_DT = 0.002  # s
HEIGHTS = (0.5, 1.0, 2.0, 4.0, 16.0)  # hub height over rotor radius, h / R ("16": far from the floor)
PHYSICS_HEIGHTS = {"full": HEIGHTS, "quick": (0.5,)}
AVERAGE_S = 2.0  # s, the averaging window at the end of a hover
LANDING_START = 1.0  # m, world z of the centre of mass before the descent
#: The landing per mode: ``(end, descent, hold)``: the world z [m] the descent reference ends at (resting on the
#: floor: z = 0), the descent's duration [s] and the hold after it [s]. Every flight of a mode is
#: ``descent_reference`` (1 s + descent + hold long; a hover has start = end), so one program flies them all.
LANDING = {"full": (-0.02, 4.0, 5.0), "quick": (-0.03, 3.0, 2.0)}
TOL_ANALYTIC = 1e-4  # relative: flown hover thrust against the closed form at the flown height
TOL_PHYSICS = 1e-4  # relative, physics layer
TOL_HEIGHT = 0.01  # |h_flown - h_target| / R
TOL_PROFILE = 1e-3  # max |T_physics - T_analytic| / (m g) before the physics layer's touchdown
#: Compile the physics layer's tick once for its flights that differ only in array values (the hovers and the
#: landing with ground effect share one program).
SHARE = True
CONTACT_N = 1e-6  # N: a floor contact force above this is a contact


def hub_heights(traj, platform, floor_height: float) -> np.ndarray:
    """``(T, n)`` each hub's height above the floor [m]: ``p_z + (R p_i)_z - floor_height`` (``p_i`` body frame)."""
    pos = np.asarray(rotor_positions(platform))
    return (np.asarray(traj.p)[:, 2:3] + np.einsum("tj,ij->ti", np.asarray(traj.R)[:, 2, :], pos)
            - floor_height)


def total_thrust(traj, platform, commanded: bool = True) -> np.ndarray:
    """``(T,)`` the rotors' thrust without ground effect ``sum_i c_f,i u_i`` [N] (commanded or applied inputs)."""
    u = np.asarray(traj.u_cmd if commanded else traj.u)
    return (np.asarray(platform.c_f) * u).sum(axis=1)


def closed_form_thrust(h, radius: float, weight: float, cap: float = 2.0):
    """``m g / (T/T_inf)(h)`` [N]: the thrust needed to hover with every hub at height ``h`` [m] (level, rotors
    along ``z_B``)."""
    return weight / np.asarray(ground_effect_ratio(np.asarray(h, dtype=float), radius, cap, xp=np))


def make_flight(reference, aero) -> Flight:
    """The flight every run shares: 500 Hz ZOH, fixed-step RK4 at the tick, 20 ms motors, clipped inputs."""
    return Flight(reference=reference, allocator=Clip(), actuators=Actuators(motor=FirstOrderMotor(MOTOR_TAU)),
                  control_rate=RATE, integrator=jr.Integrator(adaptive=False, dt=1.0 / RATE), save_dt=SAVE_DT,
                  aero=aero)


def hover_row(h_over_r: float, ctx: dict, physics: bool, mode: str) -> dict:
    """Hover at hub height ``h_over_r * R`` on the analytic layer (and on the physics layer if ``physics``)."""
    R, fh, hub_z, kpz, weight = ctx["R"], ctx["floor_height"], ctx["hub_z"], ctx["K_pz"], ctx["weight"]
    h = h_over_r * R
    ratio = float(ground_effect_ratio(h, R, 2.0, xp=np))
    offset = ctx["g"] * (1.0 / ratio - 1.0) / kpz  # e_z of the proportional vertical loop at that height
    z_ref = fh + h - hub_z + offset
    _, descent, hold = LANDING[mode]
    flight = make_flight(descent_reference(z_ref, z_ref, descent, hold), ctx["aero"])
    row = {"height_over_radius": h_over_r, "height_m": h, "ratio_closed_form": ratio,
           "closed_form_thrust": weight / ratio, "reference_z_m": z_ref}

    def measure(traj, key):
        t = np.asarray(traj.t)
        w = t >= t[-1] - AVERAGE_S
        thrust = float(total_thrust(traj, ctx["platform"])[w].mean())
        h_flown = float(hub_heights(traj, ctx["platform"], fh)[w].mean())
        cf = float(closed_form_thrust(h_flown, R, weight))
        row[f"{key}_thrust"] = thrust
        row[f"{key}_height_over_radius"] = h_flown / R
        row[f"{key}_closed_form_thrust_at_flown_height"] = cf
        row[f"rel_err_{key}"] = thrust / cf - 1.0
        row[f"{key}_ratio"] = weight / thrust  # the ground-effect ratio the flight needed
        row[f"{key}_thrust_ripple"] = float(np.ptp(total_thrust(traj, ctx["platform"])[w]))
        row[f"{key}_diverged"] = bool(traj.diverged)

    measure(jr.fly(ctx["platform"], ctx["hover_controller"], flight), "analytic")
    row["physics_floor"] = None
    row["physics_thrust"] = None
    if physics:
        floor = h_over_r * R > ctx["rest_height"]  # the gear clears the floor: fly with the floor contact
        opts = ModelOptions(floor=floor)
        pm = ctx["model"] if floor else ctx["model_no_floor"]
        res = fly_physics(ctx["platform"], ctx["hover_controller"], flight, PhysicsSettings(parts=ctx["parts"],
                          options=opts), model=pm, share_compilation=SHARE)
        measure(res.trajectory, "physics")
        row["physics_floor"] = floor
        row["physics_max_contact_force"] = float(np.abs(np.asarray(res.contact_force)).max())
    return row


def descent_reference(z_start: float, z_end: float, descent_s: float, hold_s: float) -> Sequence:
    """Hold ``z_start`` [m] (1 s), a minimum-jerk descent to ``z_end`` [m] in ``descent_s`` [s], hold ``hold_s``
    [s]; ``x = y = 0``, world frame. A hover is this reference with ``z_start = z_end``."""
    top, end = (0.0, 0.0, z_start), (0.0, 0.0, z_end)
    return Sequence([Hover(top, 1.0), Transfer(top, end, descent_s), Hover(end, hold_s)])


def landing_reference(mode: str) -> Sequence:
    """Hover at ``LANDING_START`` (1 s), minimum-jerk descent and hold of :data:`LANDING` ``[mode]``."""
    return descent_reference(LANDING_START, *LANDING[mode])


def landing_summary(traj, ctx: dict, contact=None) -> dict:
    """Touchdown time [s] and state of one landing. On the physics layer (``contact``: ``(T, 3)`` floor force [N])
    touchdown is the first sample with a contact force; on the analytic layer (no floor) the first where the
    centre of mass reaches its resting height ``z = 0``. The vertical speed is the last sample's before it."""
    t, z = np.asarray(traj.t), np.asarray(traj.p)[:, 2]
    vz = np.asarray(traj.v)[:, 2]
    thrust = total_thrust(traj, ctx["platform"])
    hit = (np.asarray(contact)[:, 2] > CONTACT_N) if contact is not None else (z <= 0.0)
    k = int(np.argmax(hit)) if hit.any() else None
    out = {"touched_down": k is not None, "diverged": bool(traj.diverged)}
    if k is None:
        return out
    before = (t >= t[k] - 0.1) & (t < t[k])
    out.update({"touchdown_time_s": float(t[k]), "vertical_speed_at_contact_m_s": float(vz[max(k - 1, 0)]),
                "hub_height_over_radius_at_contact": float(hub_heights(traj, ctx["platform"],
                                                                       ctx["floor_height"])[max(k - 1, 0)].mean()
                                                           / ctx["R"]),
                "thrust_before_contact_N": float(thrust[before].mean()),
                "thrust_before_contact_over_weight": float(thrust[before].mean() / ctx["weight"])})
    if contact is not None:
        f = np.asarray(contact)[:, 2]
        out.update({"peak_contact_force_N": float(f.max()), "final_contact_force_N": float(f[-1]),
                    "final_z_m": float(z[-1])})
    return out


def fly_landings(ctx: dict, mode: str, analytic_without: bool = True) -> tuple[dict, dict]:
    """The landing with and without ground effect on the physics layer, and with it (and without it if
    ``analytic_without``) on the analytic layer: ``(summary, series)``."""
    ref = landing_reference(mode)
    aeros = {"with_ground_effect": ctx["aero"], "without": None}
    summary, series = {}, {}
    settings = PhysicsSettings(parts=ctx["parts"], options=ModelOptions(floor=True))
    for key, aero in aeros.items():
        flight = make_flight(ref, aero)
        res = fly_physics(ctx["platform"], ctx["controller"], flight, settings, model=ctx["model"],
                          share_compilation=SHARE)
        phys = res.trajectory
        s = landing_summary(phys, ctx, res.contact_force)
        t = np.asarray(phys.t)
        series[key] = {"t": t, "z_physics": np.asarray(phys.p)[:, 2], "thrust_physics": total_thrust(phys, ctx["platform"]),
                       "contact": np.asarray(res.contact_force)[:, 2]}
        if s["touched_down"]:
            s["closed_form_thrust_over_weight_at_rest_height"] = 1.0 / float(
                ground_effect_ratio(ctx["rest_height"], ctx["R"], 2.0, xp=np)) if aero is not None else 1.0
        s["physics_wall_s"] = res.wall_time_s
        s["analytic"] = None
        s["max_thrust_difference_before_contact_over_weight"] = None
        if aero is not None or analytic_without:
            ana = jr.fly(ctx["platform"], ctx["controller"], flight)
            s["analytic"] = landing_summary(ana, ctx)
            airborne = t < s.get("touchdown_time_s", t[-1])
            d = total_thrust(phys, ctx["platform"]) - total_thrust(ana, ctx["platform"])
            s["max_thrust_difference_before_contact_over_weight"] = float(np.abs(d[airborne]).max() / ctx["weight"])
            series[key].update({"z_analytic": np.asarray(ana.p)[:, 2], "thrust_analytic": total_thrust(ana, ctx["platform"])})
        summary[key] = s
    w, wo = summary["with_ground_effect"], summary["without"]
    if w["touched_down"] and wo["touched_down"]:
        summary["touchdown_delay_s"] = w["touchdown_time_s"] - wo["touchdown_time_s"]
        summary["contact_speed_ratio"] = (w["vertical_speed_at_contact_m_s"] / wo["vertical_speed_at_contact_m_s"])
        summary["thrust_reduction_before_contact_N"] = wo["thrust_before_contact_N"] - w["thrust_before_contact_N"]
        summary["thrust_reduction_before_contact_fraction"] = (summary["thrust_reduction_before_contact_N"]
                                                               / wo["thrust_before_contact_N"])
    return summary, series


def plot(path: Path, rows: list[dict], series: dict, ctx: dict) -> None:
    """Ratio against ``h/R`` (closed form and flown points); the landings' height and thrust against time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    x = np.linspace(0.3, 17.0, 600)
    ax[0].plot(x, np.asarray(ground_effect_ratio(x * ctx["R"], ctx["R"], 2.0, xp=np)), "k-",
               label="closed form 1/(1-(R/4h)^2), cap 2")
    for key, mark in (("analytic", "o"), ("physics", "x")):
        pts = [(r[f"{key}_height_over_radius"], r[f"{key}_ratio"]) for r in rows if r.get(f"{key}_thrust")]
        if pts:
            ax[0].plot(*zip(*pts), mark, ms=8, mfc="none", label=f"{key} hover: m g / flown thrust")
    ax[0].set_xscale("log")
    ax[0].set_xlabel("hub height over rotor radius h/R")
    ax[0].set_ylabel("T / T_inf")
    ax[0].legend(fontsize=8)
    ax[0].set_title(f"{VEHICLE}: hover thrust in ground effect")
    for key, style in (("with_ground_effect", "-"), ("without", "--")):
        s = series[key]
        ax[1].plot(s["t"], s["z_physics"], "b" + style, label=f"physics, {key}")
        ax[2].plot(s["t"], s["thrust_physics"] / ctx["weight"], "b" + style, label=f"physics, {key}")
        if "z_analytic" in s:
            ax[1].plot(s["t"], s["z_analytic"], "r" + style, lw=0.8, label=f"analytic, {key}")
            ax[2].plot(s["t"], s["thrust_analytic"] / ctx["weight"], "r" + style, lw=0.8, label=f"analytic, {key}")
    ax[1].axhline(0.0, color="k", lw=0.5)
    ax[1].set_xlim(3.0, series["without"]["t"][-1])
    ax[1].set_ylim(-0.05, 0.4)
    ax[1].set_xlabel("t [s]")
    ax[1].set_ylabel("z of the centre of mass [m] (gear on the floor at 0)")
    ax[1].legend(fontsize=7)
    ax[1].set_title("landing")
    ax[2].set_xlim(3.0, series["without"]["t"][-1])
    ax[2].set_ylim(0.9, 1.1)
    ax[2].set_xlabel("t [s]")
    ax[2].set_ylabel("commanded thrust / m g")
    ax[2].legend(fontsize=7)
    ax[2].set_title("landing: commanded thrust")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def context() -> dict:
    """The vehicle, its physics models, the aerodynamics and the controllers."""
    preset = jr.presets.get(VEHICLE)
    parts = default_parts(preset)
    model = build_model(preset, parts, ModelOptions(floor=True))
    model_no_floor = build_model(preset, parts, ModelOptions(floor=False))
    platform = model.physics_platform()  # the engine's mass and inertia on both layers
    fh = float(model.floor_height)
    R = 0.5 * float(parts.propeller.diameter)
    hub_z = float(np.asarray(rotor_positions(platform))[:, 2].mean())
    aero = Aerodynamics(ground_effect=True, floor_height=fh)
    probe = make_flight(Hover((0.0, 0.0, 1.0), 1.0), aero)
    hover_controller = with_auto_gains(UnderactuatedSE3(), platform, probe, GainSpec(vertical_integral=0.0))
    controller = with_auto_gains(UnderactuatedSE3(), platform, probe)
    g = float(platform.gravity)
    return {"platform": platform, "parts": parts, "model": model, "model_no_floor": model_no_floor,
            "floor_height": fh, "R": R, "hub_z": hub_z, "rest_height": hub_z - fh, "aero": aero, "g": g,
            "weight": float(platform.mass) * g, "K_pz": float(np.asarray(hover_controller.K_p)[2]),
            "hover_controller": hover_controller, "controller": controller}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter hovers, one physics hover (0.5 R)")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/ground_effect[_quick])")
    args = ap.parse_args(argv)
    mode = "quick" if args.quick else "full"
    out = Path(args.out or os.environ.get("JAXROTOR_OUT") or
               ROOT / "jaxrotor-out" / ("ground_effect_quick" if args.quick else "ground_effect"))
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    ctx = context()
    print(f"ground_effect: {VEHICLE}, m = {ctx['weight'] / ctx['g']:.4g} kg, rotor radius R = {ctx['R']:.4g} m, "
          f"floor at z = {ctx['floor_height']:.5g} m, hubs {ctx['rest_height'] / ctx['R']:.3f} R above it at rest")

    rows = [hover_row(hr, ctx, hr in PHYSICS_HEIGHTS[mode], mode) for hr in HEIGHTS]
    print(f"{'h/R':>6s}{'closed form [N]':>17s}{'analytic [N]':>14s}{'h/R flown':>11s}{'rel. err':>11s}"
          f"{'physics [N]':>13s}{'h/R flown':>11s}{'rel. err':>11s}  floor")
    for r in rows:
        phys = (f"{r['physics_thrust']:13.6f}{r['physics_height_over_radius']:11.4f}{r['rel_err_physics']:11.2e}  "
                f"{'on' if r['physics_floor'] else 'off'}") if r["physics_thrust"] is not None else f"{'—':>13s}"
        print(f"{r['height_over_radius']:6.2f}{r['closed_form_thrust']:17.6f}{r['analytic_thrust']:14.6f}"
              f"{r['analytic_height_over_radius']:11.4f}{r['rel_err_analytic']:11.2e}{phys}")

    landing, series = fly_landings(ctx, mode, analytic_without=not args.quick)
    for key in ("with_ground_effect", "without"):
        s = landing[key]
        if not s["touched_down"]:
            print(f"landing {key}: no touchdown")
            continue
        print(f"landing {key}: touchdown {s['touchdown_time_s']:.3f} s at {s['vertical_speed_at_contact_m_s']:+.4f} m/s,"
              f" peak contact force {s['peak_contact_force_N']:.3f} N, thrust over the 0.1 s before contact "
              f"{s['thrust_before_contact_over_weight']:.4f} m g (closed form at rest height "
              f"{s['closed_form_thrust_over_weight_at_rest_height']:.4f} m g)")
        a = s["analytic"]
        if a is not None and a["touched_down"]:
            print(f"  analytic layer: reaches z = 0 at {a['touchdown_time_s']:.3f} s at "
                  f"{a['vertical_speed_at_contact_m_s']:+.4f} m/s; max |T_physics - T_analytic| before contact "
                  f"{s['max_thrust_difference_before_contact_over_weight']:.2e} m g")
    plot(out / "ground_effect.png", rows, series, ctx)

    checks = Checks("ground_effect")
    diverged = sum(r["analytic_diverged"] + bool(r.get("physics_diverged")) for r in rows)
    diverged += sum(landing[k]["diverged"] + bool(landing[k]["analytic"] and landing[k]["analytic"]["diverged"])
                    for k in ("with_ground_effect", "without"))
    checks.add("diverged flights", diverged, "==", 0)
    checks.add("analytic hover thrust against the closed form (max |relative error|)",
               max(abs(r["rel_err_analytic"]) for r in rows), "<=", TOL_ANALYTIC)
    phys_rows = [r for r in rows if r["physics_thrust"] is not None]
    checks.add("physics hover thrust against the closed form (max |relative error|)",
               max(abs(r["rel_err_physics"]) for r in phys_rows), "<=", TOL_PHYSICS)
    checks.add("hover height against the target (max |h_flown - h| / R, both layers)",
               max(abs(r[f"{k}_height_over_radius"] - r["height_over_radius"]) for r in rows
                   for k in ("analytic", "physics") if r.get(f"{k}_thrust") is not None), "<=", TOL_HEIGHT)
    checks.add("landings that touched down (physics, with and without ground effect)",
               sum(landing[k]["touched_down"] for k in ("with_ground_effect", "without")), "==", 2)
    if "touchdown_delay_s" in landing:
        checks.add("touchdown delay with ground effect [s]", landing["touchdown_delay_s"], ">", 0.0)
        checks.add("thrust reduction before contact with ground effect [N]",
                   landing["thrust_reduction_before_contact_N"], ">", 0.0)
    checks.add("analytic against physics thrust before contact, with ground effect (max |dT| / m g)",
               landing["with_ground_effect"]["max_thrust_difference_before_contact_over_weight"], "<=", TOL_PROFILE)
    wall = time.perf_counter() - t0
    print(f"wall time {wall:.1f} s; outputs in {out}")
    record = {"quick": args.quick, "vehicle": VEHICLE, "mass_kg": ctx["weight"] / ctx["g"], "gravity": ctx["g"],
              "rotor_radius_m": ctx["R"], "floor_height_m": ctx["floor_height"],
              "rest_hub_height_over_radius": ctx["rest_height"] / ctx["R"], "ground_effect_max": 2.0,
              "hover_s": 1.0 + sum(LANDING[mode][1:]), "average_s": AVERAGE_S, "control_rate_hz": RATE,
              "landing_reference": dict(zip(("start_z_m", "end_z_m", "descent_s", "hold_s"),
                                            (LANDING_START, *LANDING[mode]))),
              "tolerances": {"analytic": TOL_ANALYTIC, "physics": TOL_PHYSICS, "height_over_radius": TOL_HEIGHT,
                             "profile": TOL_PROFILE},
              "hover_K_pz": ctx["K_pz"], "hover": rows, "landing": landing, "wall_s": wall}
    return checks.finish(out / "ground_effect.json", record)


if __name__ == "__main__":
    sys.exit(main())
