"""The hover envelope against flights: hold position 1 deg inside and 1 deg outside the reported envelope.

For three fixed-tilt hexarotors on the Table II vehicle (same rotors, mass, inertia, top speed
700 rad/s, Table III gains):

* ``paper_hexarotor``: ``alpha_0`` = 25 deg, ``beta_0`` = 10 deg (Table II);
* ``cant35``: ``alpha_0`` = 35 deg, ``beta_0`` = 0;
* ``cant15_dihedral20``: ``alpha_0`` = 15 deg, ``beta_0`` = 20 deg,

:func:`jaxrotor.analysis.hover_envelope` gives the largest hover tilt ``theta_max`` along the four
body axes (nose down, left side down, nose up, right side down). Each design then flies a hover
hold (:class:`jaxrotor.reference.FullPose`: a fixed position and a minimum-jerk attitude ramp from
level to a constant roll/pitch, then held) at ``theta_max - 1 deg`` and ``theta_max + 1 deg`` in
each of the four headings: 24 flights in one ``vmap``, the fully actuated controller
:class:`jaxrotor.control.FullyActuatedSE3`, the :class:`jaxrotor.Clip` allocator, the analytic plant
(ideal motors, continuous-time control). With six rotors and ``rank G = 6`` the hover input at an
attitude is unique, so the clipped pseudo-inverse finds it whenever the envelope says it exists:
the envelope is the allocator's too.

Measured over the second half of the hold (after the ramp's transient): the share of samples with
a rotor at a bound (saturation fraction), the position error (mean and largest) and the attitude
error. Checks (``check ...: PASS/FAIL``, exit 1 on a failure): every hold inside the envelope has a
saturation fraction <= 0.05, a largest position error < 2 cm and no divergence; every hold outside
has a saturation fraction >= 0.9 (a rotor pinned at a bound: the attitude cannot be held with the
inputs in bounds) and loses position (largest error > 5 cm). Writes ``hover_envelope.json`` and ``hover_envelope.png`` (the three polar
envelopes with the flown points, inside green, outside red).

Run::

    python experiments/hover_envelope.py            # 2 s ramp, 8 s hold, Tsit5 at 5 ms
    python experiments/hover_envelope.py --quick    # 1 s ramp, 3 s hold, Heun at 5 ms (well under 60 s)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import diffrax  # noqa: E402
import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _checks import Checks  # noqa: E402

import jaxrotor as jr  # noqa: E402
from jaxrotor import analysis, presets  # noqa: E402
from jaxrotor import reference as R  # noqa: E402
from jaxrotor.design.platform import star_platform  # noqa: E402
from jaxrotor.metrics import orientation_error, position_error  # noqa: E402
from jaxrotor.numerics import safe_norm  # noqa: E402

T2 = presets.TABLE_II
DESIGNS = {"paper_hexarotor": (25.0, 10.0), "cant35": (35.0, 0.0), "cant15_dihedral20": (15.0, 20.0)}
HEADINGS = ("pitch_down", "roll_left", "pitch_up", "roll_right")  # lean headings 0, 90, 180, 270 deg
OFFSET_DEG = 1.0
INSIDE_SATURATION_MAX = 0.05
INSIDE_POSITION_MAX = 0.02  # m
OUTSIDE_SATURATION_MIN = 0.9
OUTSIDE_POSITION_MIN = 0.05  # m


def design(alpha_deg: float, beta_deg: float):
    return star_platform(6, T2["arm_length"], mass=T2["mass"], c_f=T2["c_f"], c_tau=T2["c_tau"],
                         alpha=math.radians(alpha_deg), beta=math.radians(beta_deg), inertia=T2["J_a"],
                         gravity=T2["gravity"], rotor_speed_max=presets.ROTOR_SPEED_MAX)


def window_stats(tr, t_from):
    """Saturation share, position MAE / max [m], attitude MAE [rad] over ``t >= t_from`` (one trajectory)."""
    mask = (tr.t >= t_from).astype(tr.t.dtype)
    k = jnp.sum(mask)
    ep = safe_norm(position_error(tr))
    eR = safe_norm(orientation_error(tr))
    sat = jnp.any(tr.saturated, axis=-1).astype(tr.t.dtype)
    return (jnp.sum(sat * mask) / k, jnp.sum(ep * mask) / k, jnp.max(jnp.where(mask > 0, ep, 0.0)),
            jnp.sum(eR * mask) / k, tr.diverged)


def run(quick: bool, out_dir: Path) -> int:
    chk = Checks("hover_envelope")
    ramp, hold = (1.0, 3.0) if quick else (2.0, 8.0)
    t_from = ramp + 0.5 * hold
    solver = diffrax.Heun() if quick else diffrax.Tsit5()

    base = design(*DESIGNS["paper_hexarotor"])
    paper = presets.paper_hexarotor()
    same = float(np.max(np.abs(np.asarray(jr.allocation.force_matrix(base) - jr.allocation.force_matrix(paper)))))
    chk.add("the paper design is presets.paper_hexarotor (max |F - F_paper|)", same, "<=", 1e-15)

    # the envelope of each design, and the 24 holds
    envelopes, members, rows = {}, [], []
    for name, (a, b) in DESIGNS.items():
        p = design(a, b)
        env = analysis.hover_envelope(p)
        envelopes[name] = env
        for heading in HEADINGS:
            theta = env.axis_tilts[heading]
            psi = {"pitch_down": 0.0, "roll_left": 90.0, "pitch_up": 180.0, "roll_right": 270.0}[heading]
            for side, d in (("inside", -OFFSET_DEG), ("outside", OFFSET_DEG)):
                th = theta + math.radians(d)
                roll, pitch = analysis.lean_to_roll_pitch(th, math.radians(psi))
                check = analysis.hover_at_attitude(p, roll, pitch)
                members.append((math.radians(a), math.radians(b), roll, pitch))
                rows.append({"design": name, "heading": heading, "heading_deg": psi, "side": side,
                             "theta_max_deg": math.degrees(theta), "tilt_deg": math.degrees(th),
                             "roll_deg": math.degrees(roll), "pitch_deg": math.degrees(pitch),
                             "lp_feasible": check.feasible, "lp_margin": check.margin})
    ctrl = jr.FullyActuatedSE3()
    ref = R.FullPose(R.Hover((0.0, 0.0, 1.0), ramp + hold), R.AttitudeRamp((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), ramp))
    fl = jr.Flight(reference=ref, allocator=jr.Clip(),
                   integrator=jr.Integrator(solver=solver, adaptive=False, dt=0.005), save_dt=0.02)
    fl.check(base, ctrl)

    @eqx.filter_jit
    def batch(base, fl, m):
        def one(x):
            p = eqx.tree_at(lambda p: (p.alpha, p.beta), base, (x[0], x[1]))
            f = eqx.tree_at(lambda f: f.reference.attitude.end, fl, jnp.stack([x[2], x[3], 0.0]))
            return window_stats(jr.fly(p, ctrl, f), t_from)
        return jax.vmap(one)(m)

    t0 = time.perf_counter()
    sat, ep, ep_max, eR, div = (np.asarray(x) for x in batch(base, fl, jnp.asarray(members)))
    wall = time.perf_counter() - t0
    for k, r in enumerate(rows):
        r.update(saturation_fraction=float(sat[k]), position_mae=float(ep[k]), position_max=float(ep_max[k]),
                 attitude_mae=float(eR[k]), diverged=bool(div[k]))

    print(f"{len(rows)} hover holds ({'quick' if quick else 'full'}: {ramp:g} s ramp, {hold:g} s hold, measured over "
          f"t >= {t_from:g} s) in {wall:.1f} s with compile\n")
    head = (f"{'design':<18} {'heading':<11} {'max tilt':>8} {'side':<8} {'tilt':>6} {'LP margin':>10} "
            f"{'saturated':>9} {'pos MAE':>9} {'pos max':>9} {'att MAE':>9}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['design']:<18} {r['heading']:<11} {r['theta_max_deg']:7.2f}° {r['side']:<8} {r['tilt_deg']:5.2f}° "
              f"{r['lp_margin']:>+10.4f} {r['saturation_fraction']:>9.3f} {r['position_mae'] * 1e3:>7.2f}mm "
              f"{r['position_max'] * 1e3:>7.2f}mm {r['attitude_mae']:>9.2e}")
    print()

    inside = [r for r in rows if r["side"] == "inside"]
    outside = [r for r in rows if r["side"] == "outside"]
    chk.add("the LP says hover holds at every inside point (count)", sum(r["lp_feasible"] for r in inside), "==",
            len(inside))
    chk.add("the LP says hover fails at every outside point (count)", sum(not r["lp_feasible"] for r in outside), "==",
            len(outside))
    chk.add("inside: largest saturation fraction after the transient", max(r["saturation_fraction"] for r in inside),
            "<=", INSIDE_SATURATION_MAX)
    chk.add("inside: largest position error after the transient [m]",
            max(r["position_max"] if not r["diverged"] else math.inf for r in inside), "<", INSIDE_POSITION_MAX)
    chk.add("outside: smallest saturation fraction after the transient",
            min(r["saturation_fraction"] for r in outside), ">=", OUTSIDE_SATURATION_MIN)
    chk.add("outside: smallest largest position error after the transient [m]",
            min(r["position_max"] for r in outside), ">", OUTSIDE_POSITION_MIN)

    out_dir.mkdir(parents=True, exist_ok=True)
    fig_path = plot(envelopes, rows, out_dir / "hover_envelope.png")
    record = {"quick": quick, "ramp_s": ramp, "hold_s": hold, "window_from_s": t_from, "offset_deg": OFFSET_DEG,
              "wall_s": wall, "figure": str(fig_path),
              "envelopes": {k: e.to_dict() for k, e in envelopes.items()}, "holds": rows}
    return chk.finish(out_dir / "hover_envelope.json", record)


def plot(envelopes, rows, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from jaxrotor.cli.analyze import draw_hover_envelope

    fig = Figure(figsize=(13.5, 4.8))
    FigureCanvasAgg(fig)
    for i, (name, env) in enumerate(envelopes.items()):
        ax = fig.add_subplot(1, 3, i + 1, projection="polar")
        draw_hover_envelope(ax, [env])
        for r in rows:
            if r["design"] != name:
                continue
            ok = r["saturation_fraction"] <= INSIDE_SATURATION_MAX and not r["diverged"]
            ax.plot(math.radians(r["heading_deg"]), r["tilt_deg"], "o" if ok else "x", color="C2" if ok else "C3",
                    ms=7, mew=2)
        ax.set_title(f"{name}\nmax hover tilt [deg]; flown: o held, x saturated", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short holds, Heun steps (well under 60 s)")
    ap.add_argument("--out", type=Path, default=Path("results"), help="folder for hover_envelope.json and .png")
    args = ap.parse_args(argv)
    return run(args.quick, args.out)


if __name__ == "__main__":
    sys.exit(main())
