"""Force polytopes of the star hexarotor against its cant: exact sets, closed forms, gradient optima, BoxLS.

The star hexarotor with alternating cant ``alpha_i = (-1)^i alpha_0``, no dihedral and
the Table II rotors (``c_f = 3.799e-5``, ``c_tau = 1.163e-6``, ``l = 0.385 m``,
``m = 3.5 kg``, ``0 <= omega <= 700 rad/s``) has three measures of its zero-moment
force set ``F_B`` (``docs/analysis.md`` derives them):

    V_FB(alpha)    = 12 sqrt(3) T^3 cos(a) sin^2(a)                    [N^3]
    A_hover(alpha) = 3 sqrt(3) T^2 sin^2(a) h(x)                       [N^2]
    V_above(alpha) = 6 sqrt(3) T^3 cos(a) sin^2(a) (2 - Phi(x))        [N^3]

with ``T = c_f (u_max - u_min)``, ``x = (m g / (2 c_f cos a) - 3 u_min) / (u_max - u_min)``,
``h(x) = x^2 - 3 (x-1)_+^2 + 3 (x-2)_+^2`` and ``Phi(x) = x^3/3 - (x-1)_+^3 + (x-2)_+^3``.

What it does and prints:

1. the three measures on a grid of ``alpha_0`` from 0 to 80 deg from the exact
   polytopes (:mod:`jaxrotor.analysis.polytopes`), the closed forms and the
   differentiable JAX measures; checks that they agree;
2. the argmax of each measure from the exact curve (bounded scalar search on the
   exact polytopes) and from an optax (Adam) run on the differentiable measure,
   all three runs as one compiled ``vmap``-ed scan; checks they are within 0.3 deg;
3. the paper's hexarotor (25 deg cant, 10 deg dihedral) and its preset family
   placed on the curves (``cs_a0_ted_6r`` is the same hexarotor without dihedral:
   it lies on the curves), and the five polytope measures of every preset;
4. ``BoxLS`` against ``Clip`` and ``TorquePriority`` on a saturating manoeuvre: the
   paper's hexarotor asked for a lateral force growing to 0.6 m g with rolling and
   yawing torques; the weighted wrench shortfall of each (BoxLS is the least-squares
   optimum, so it must not be beaten), and the torque error; a full run also flies
   the fixed-attitude figure-eight of ``configs/optimize_tilt.toml`` (8 s and 6 s
   laps, rotors saturating) with each allocator: tracking and wrench shortfall;
5. ``polytopes.png`` (the three curves, closed forms dashed, argmaxes, presets) and
   ``polytopes.json``; a full run also writes ``docs/figures/polytopes.png``.

Run::

    python experiments/polytopes.py             # full: 161 angles, 600 Adam steps
    python experiments/polytopes.py --quick     # 9 angles, 200 Adam steps (about 15 s of CPU)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import optax
from scipy.optimize import minimize_scalar

from jaxrotor.allocators import BoxLS, Clip, TorquePriority
from jaxrotor.analysis import polytopes as P
from jaxrotor.design import presets
from jaxrotor.design.platform import star_platform

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _checks import Checks

ROOT = Path(__file__).resolve().parents[1]
T2 = presets.TABLE_II
W_MAX = presets.ROTOR_SPEED_MAX
NAMES = ("zero_moment_force_volume", "hover_section_area", "volume_above_hover")
EXACT = (P.zero_moment_polytope, P.hover_section_polygon, P.above_hover_polytope)
POWER = (3, 2, 3)


def star(alpha0: float, beta0: float = 0.0):
    """The Table II star hexarotor at cant ``alpha0`` and dihedral ``beta0`` [rad]."""
    return star_platform(6, T2["arm_length"], mass=T2["mass"], c_f=T2["c_f"], c_tau=T2["c_tau"], alpha=alpha0,
                         beta=beta0, inertia=T2["J_a"], gravity=T2["gravity"], rotor_speed_max=W_MAX)


def closed_forms(a: float) -> tuple[float, float, float]:
    """``(V_FB, A_hover, V_above)`` of the module docstring at cant ``a`` [rad] (``u_min = 0``)."""
    du = W_MAX**2
    T = T2["c_f"] * du
    x = T2["mass"] * T2["gravity"] / (2 * T2["c_f"] * math.cos(a)) / du
    h = x**2 - 3 * max(x - 1, 0) ** 2 + 3 * max(x - 2, 0) ** 2 if x <= 3 else 0.0
    phi = x**3 / 3 - max(x - 1, 0) ** 3 + max(x - 2, 0) ** 3 if x <= 3 else 2.0
    s2c = math.sin(a) ** 2 * math.cos(a)
    return (12 * math.sqrt(3) * T**3 * s2c, 3 * math.sqrt(3) * T**2 * math.sin(a) ** 2 * h,
            6 * math.sqrt(3) * T**3 * s2c * (2 - phi))


def exact_measures(p) -> list[float]:
    return [f(p).measure for f in EXACT]


def measure_slopes(alpha_start: float):
    """``f(alphas (K,)) -> (m (K, 3), dm/dalpha (K, 3))`` of the star hexarotor, jit-compiled once for every ``K``.

    Measures in ``(m g)^p`` units; the derivatives are forward-mode ``jvp`` of the
    differentiable measures, ``vmap``-ed over the cants.
    """
    base = star(alpha_start)
    scale = jnp.asarray([float(base.weight) ** -p for p in POWER])

    def measures(alpha):
        return P.zero_moment_measures(eqx.tree_at(lambda q: q.alpha, base, alpha)) * scale

    return jax.jit(jax.vmap(lambda a: jax.jvp(measures, (a,), (jnp.ones_like(a),))))


def optax_argmax(slopes, alpha_start: float, steps: int, width: int) -> np.ndarray:
    """Adam on ``-m_k(alpha)`` for the three measures at once [rad] (three cants in a batch of ``width``)."""
    opt = optax.adam(optax.cosine_decay_schedule(0.05, steps, alpha=1e-3))
    alphas = jnp.full(3, alpha_start)
    state = opt.init(alphas)
    pad = jnp.full(width - 3, alpha_start)  # the batch shape of the already compiled function

    @jax.jit
    def update(alphas, d, state):
        upd, state = opt.update(-jnp.diagonal(d[:3]), state)
        return optax.apply_updates(alphas, upd), state

    for _ in range(steps):
        _, d = slopes(jnp.concatenate([alphas, pad]))
        alphas, state = update(alphas, d, state)
    return np.asarray(alphas)


def manoeuvre(k: int):
    """Requests ``(k, 6)`` for the paper hexarotor: hover, a lateral force ramp to 0.6 m g, roll and yaw torques."""
    W = T2["mass"] * T2["gravity"]
    s = np.linspace(0.0, 1.0, k)
    w = np.zeros((k, 6))
    w[:, 0] = 0.6 * W * s
    w[:, 2] = W
    w[:, 3] = 0.05 * W * T2["arm_length"] * np.sin(6 * np.pi * s)
    w[:, 5] = 0.02 * W * T2["arm_length"] * np.cos(4 * np.pi * s)
    return w


def compare_allocators(k: int) -> dict:
    p = presets.get("paper_hexarotor")
    W, L = float(p.weight), T2["arm_length"]
    req = jnp.asarray(manoeuvre(k))
    box = BoxLS()
    Wd = np.asarray(box.weights(box.prepare(p)))
    out = {}
    for name, al in (("BoxLS", box), ("Clip", Clip()), ("TorquePriority", TorquePriority())):
        data = al.prepare(p)
        ach = np.asarray(jax.jit(jax.vmap(lambda w: al(data, w).achieved))(req))  # noqa: B023
        err = ach - np.asarray(req)
        S = np.r_[np.full(3, 1 / W), np.full(3, 1 / (W * L))]
        out[name] = {
            "weighted_cost_mean": float(np.mean(np.sum((Wd * err) ** 2, axis=1))),
            "shortfall_mean": float(np.mean(np.sum((S * err) ** 2, axis=1))),
            "force_error_max_N": float(np.max(np.linalg.norm(err[:, :3], axis=1))),
            "torque_error_max_Nm": float(np.max(np.linalg.norm(err[:, 3:], axis=1))),
            "saturated_fraction": float(np.mean(np.any(np.abs(err) > 1e-9 * W, axis=1))),
        }
    return out


def fly_allocators(period: float) -> dict:
    """The paper's hexarotor on the figure-eight of ``configs/optimize_tilt.toml`` at ``period`` [s] with each allocator.

    Tracking (RMSE of eq. 14 and 15), the time-mean weighted wrench shortfall
    ``|S (w_achieved - w_requested)|^2`` (``S = diag(1/W, 1/W, 1/W, 1/(W L), ...)``) and the saturated fraction.
    """
    from jaxrotor import reference as R
    from jaxrotor import fly
    from jaxrotor.io import optimize_config
    from jaxrotor.metrics import flight_metrics

    conf = optimize_config.load(ROOT / "configs" / "optimize_tilt.toml").flight_config
    ref = R.FigureEight(duration=period, period=period)
    W, L = T2["mass"] * T2["gravity"], T2["arm_length"]
    S = np.r_[np.full(3, 1 / W), np.full(3, 1 / (W * L))]
    out = {}
    for name, al in (("BoxLS", BoxLS()), ("Clip", Clip()), ("TorquePriority", TorquePriority())):
        flight = eqx.tree_at(lambda f: (f.allocator, f.reference), conf.flight, (al, ref))
        traj = fly(conf.platform, conf.controller, flight)
        m = flight_metrics(traj, conf.platform)
        err = np.asarray(traj.wrench_error)
        out[name] = {"rmse_position_m": float(m.rmse_position), "rmse_orientation_rad": float(m.rmse_orientation),
                     "wrench_shortfall_mean": float(np.mean(np.sum((S * err) ** 2, axis=-1))),
                     "saturation_fraction": float(m.saturation_fraction), "diverged": bool(m.diverged)}
    return out


def figure(path: Path, grid_deg, exact, closed, argmax, opt, family) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 4))
    FigureCanvasAgg(fig)
    fine = np.linspace(0, 80, 801)
    cf = np.array([closed_forms(math.radians(a)) for a in fine])
    titles = ("zero-moment force volume $V_{FB}$ [N$^3$]", "hover section area [N$^2$]",
              "volume above hover [N$^3$]")
    for k in range(3):
        ax = fig.add_subplot(1, 3, k + 1)
        ax.plot(fine, cf[:, k], "--", color="0.5", lw=1.5, label="closed form")
        ax.plot(grid_deg, exact[:, k], "o", ms=3.5, color="C0", label="exact polytope")
        ax.axvline(argmax[k], color="C2", lw=1, label=f"exact argmax {argmax[k]:.2f}°")
        ax.axvline(opt[k], color="C3", lw=1, ls=":", label=f"optax {opt[k]:.2f}°")
        for j, (name, a, vals) in enumerate(family):
            ax.plot(a, vals[k], "s^D"[j % 3], ms=7, mfc="none", label=name)
        ax.set_xlabel("cant $\\alpha_0$ [deg]")
        ax.set_title(titles[k], fontsize=10)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="9 angles, 200 Adam steps (smoke test)")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/polytopes[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or f"jaxrotor-out/polytopes{'_quick' if args.quick else ''}")
    out.mkdir(parents=True, exist_ok=True)
    checks = Checks("polytopes")

    # 1. curves
    grid_deg = np.linspace(0.0, 80.0, 9 if args.quick else 161)
    exact = np.array([exact_measures(star(math.radians(a))) for a in grid_deg])
    paper = presets.get("paper_hexarotor")
    P.polytope_measures(paper)
    t0 = time.perf_counter()
    for _ in range(10):  # all five exact measures of a built hexarotor (system, five polytopes)
        P.polytope_measures(paper)
    t_exact = (time.perf_counter() - t0) / 10
    closed = np.array([closed_forms(math.radians(a)) for a in grid_deg])
    slopes = measure_slopes(0.3)
    W = T2["mass"] * T2["gravity"]
    smooth = np.asarray(slopes(jnp.asarray(np.radians(grid_deg)))[0]) * np.array([W**p for p in POWER])
    for k, name in enumerate(NAMES):
        scale = np.abs(closed[:, k]).max()
        checks.add(f"{name}: exact vs closed form, max relative error", np.abs(exact[:, k] - closed[:, k]).max() / scale,
                   "<=", 1e-9)
        checks.add(f"{name}: differentiable vs exact, max relative error",
                   np.abs(smooth[:, k] - exact[:, k]).max() / scale, "<=", 1e-6)

    # 2. argmax: exact curve and optax
    argmax_exact, argmax_closed = [], []
    for k in range(3):
        r = minimize_scalar(lambda a: -EXACT[k](star(a)).measure, bounds=(0.3, 1.3), method="bounded",  # noqa: B023
                            options={"xatol": 1e-5 if args.quick else 1e-7})
        argmax_exact.append(math.degrees(r.x))
        rc = minimize_scalar(lambda a: -closed_forms(a)[k], bounds=(0.3, 1.3), method="bounded",  # noqa: B023
                             options={"xatol": 1e-9})
        argmax_closed.append(math.degrees(rc.x))
    opt = np.degrees(optax_argmax(slopes, math.radians(25.0), 200 if args.quick else 600, len(grid_deg)))
    for k, name in enumerate(NAMES):
        checks.add(f"{name}: |optax argmax - exact argmax| [deg]", abs(opt[k] - argmax_exact[k]), "<=", 0.3)

    # 3. the paper's hexarotor and its family
    family = [("paper_hexarotor (25°/10°)", 25.0, exact_measures(paper)),
              ("cs_a0_ted_6r (25°/0°)", 25.0, exact_measures(presets.get("cs_a0_ted_6r")))]
    on_curve = max(abs(family[1][2][k] - closed_forms(math.radians(25.0))[k]) / closed_forms(math.radians(25.0))[k]
                   for k in range(3))
    checks.add("cs_a0_ted_6r lies on the closed-form curves (max relative error)", on_curve, "<=", 1e-9)
    table = {}
    for name in ("paper_hexarotor", "cs_4r", "hex_s550", "octo_x8") if args.quick else presets.names():
        table[name] = P.polytope_measures(presets.get(name))
    # the singular cant: tan(alpha) = c_tau / (c_f l) makes the yaw row of M vanish (rank M = 2); the
    # extra kernel direction moves thrust between the two rotor triples, which leaves F_B unchanged
    a_sing = math.atan(T2["c_tau"] / (T2["c_f"] * T2["arm_length"]))
    from jaxrotor.analysis import ranks

    singular = {"alpha_deg": math.degrees(a_sing), "rank_M": ranks(star(a_sing))["rank_M"],
                "V_FB_exact": exact_measures(star(a_sing))[0], "V_FB_closed_form": closed_forms(a_sing)[0]}

    # 4. allocators on a saturating manoeuvre
    alloc = compare_allocators(21 if args.quick else 201)
    b = alloc["BoxLS"]["weighted_cost_mean"]
    checks.add("BoxLS weighted shortfall / Clip's", b / alloc["Clip"]["weighted_cost_mean"], "<=", 1.0 + 1e-9)
    checks.add("BoxLS weighted shortfall / TorquePriority's", b / alloc["TorquePriority"]["weighted_cost_mean"], "<=",
               1.0 + 1e-9)

    flights = None
    if not args.quick:  # the same comparison in closed loop: a faster figure-eight that saturates the rotors
        flights = {f"period_{T:g}s": fly_allocators(T) for T in (8.0, 6.0)}
        print("flights (figure-eight):", flights)

    # 5. figure and summary
    figure(out / "polytopes.png", grid_deg, exact, closed, argmax_exact, opt, family)
    if not args.quick:
        (ROOT / "docs" / "figures").mkdir(parents=True, exist_ok=True)
        figure(ROOT / "docs" / "figures" / "polytopes.png", grid_deg, exact, closed, argmax_exact, opt, family)
    summary = {
        "quick": args.quick,
        "alpha_deg": grid_deg,
        "exact": {n: exact[:, k] for k, n in enumerate(NAMES)},
        "closed_form": {n: closed[:, k] for k, n in enumerate(NAMES)},
        "argmax_exact_deg": dict(zip(NAMES, argmax_exact)),
        "argmax_closed_form_deg": dict(zip(NAMES, argmax_closed)),
        "argmax_optax_deg": dict(zip(NAMES, opt)),
        "family": {n: dict(zip(NAMES, v)) | {"alpha_deg": a} for n, a, v in family},
        "presets": table,
        "singular_cant": singular,
        "allocators": alloc,
        "flights": flights,
        "exact_seconds_per_design": t_exact,
    }
    print(f"argmax exact [deg]: {np.round(argmax_exact, 3)}; optax: {np.round(opt, 3)}; "
          f"five exact measures of the paper hexarotor: {1e3 * t_exact:.1f} ms")
    return checks.finish(out / "polytopes.json", summary)


if __name__ == "__main__":
    sys.exit(main())
