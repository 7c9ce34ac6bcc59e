"""What a tilted design costs in flight time: hover endurance of the paper hexarotor against its cant.

The RotorSuite use-case hexarotor ``CS_a0b0-Ted_6R`` built from its parts
(``jaxrotor.design.vehicles.paper_hexarotor_parts``, Table II: ``l = 0.385 m``, ``beta_0 = 10 deg``,
``m = 3.5 kg``, 13-inch propellers) is given the electrical parts the paper does not list
(:func:`electric_parts`: 6S 8000 mAh Li-Po, 340 KV motors; the battery's mass is taken out of
the hub's, so the vehicle still weighs 3.5 kg). For cant ``alpha_0`` from 0 to 45 deg
(``alpha_i = (-1)^i alpha_0``) the script computes, with ``jaxrotor.electrical``:

* the hover point (shaft power, battery power, throttle) and the hover endurance from full
  charge down to a 20 % floor (``endurance_hover``);
* the closed-form ``cos`` scaling: a symmetric canted hexarotor hovers with
  ``u_h = m g / (6 c_f cos alpha_0 cos beta_0)``, so its shaft power is
  ``P(alpha_0) = P(0) cos(alpha_0)^{-3/2}`` (exact) and, if the battery power were proportional
  to it, ``t(alpha_0) = t(0) cos(alpha_0)^{3/2}`` (the estimate; the motors' no-load and copper
  losses and the pack's sag make the model differ);
* the worked example of ``docs/energy.md``: the paper's 25 deg cant (10 deg dihedral) against
  the same parts flat (``alpha_0 = beta_0 = 0``);
* ``d t / d alpha_0`` at 25 deg by ``jax.grad`` against central differences.

Writes ``endurance_vs_cant.json`` and ``endurance_vs_cant.png`` into ``--out``.

Checks (one ``check ...: PASS/FAIL`` line each; exit 1 if any fails):

* shaft hover power follows ``cos(alpha_0)^{-3/2}`` to 1e-9;
* endurance falls monotonically with the cant;
* the ``cos^{3/2}`` estimate of the endurance is within 3 % of the model up to 45 deg;
* ``d t / d alpha_0`` agrees with central differences to 1e-6.

Run::

    python experiments/endurance_vs_cant.py           # 1-degree steps
    python experiments/endurance_vs_cant.py --quick   # 5-degree steps (< 30 s)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxrotor import electrical as E  # noqa: E402
from jaxrotor.design import parts as P  # noqa: E402
from jaxrotor.design.vehicles import paper_hexarotor_from_parts, paper_hexarotor_parts  # noqa: E402

from _checks import Checks  # noqa: E402

BATTERY_MASS = 1.10  # kg, a 6S 8000 mAh Li-Po pack


def electric_parts() -> P.Parts:
    """The paper hexarotor's parts with a motor constant, winding data and a battery.

    Motors: a 4114-class 340 KV motor (0.15 Ohm, 0.4 A no-load, 30 A limit) for 13-inch
    propellers on 6S. Battery: 6S 8000 mAh, 24 mOhm (4 mOhm a cell), 1.10 kg at the geometric
    centre; the hub (frame plates, battery, electronics in the paper's lumped mass) loses that
    mass, so the vehicle still weighs 3.5 kg.
    """
    base = paper_hexarotor_parts()
    hub = P.Hub(float(base.hub.mass) - BATTERY_MASS, float(base.hub.radius), float(base.hub.height))
    m = base.motor
    motor = P.Motor(mass=float(m.mass), radius=float(m.radius), height=float(m.height), rotor_mass=float(m.rotor_mass),
                    kv=340.0, resistance=0.15, no_load_current=0.4, max_current=30.0)
    battery = P.Battery(mass=BATTERY_MASS, size=(0.16, 0.065, 0.06), offset=(0.0, 0.0, 0.0), cells=6,
                        capacity_mah=8000.0, internal_resistance=0.024)
    return eqx.tree_at(lambda p: (p.hub, p.motor, p.battery), base, (hub, motor, battery),
                       is_leaf=lambda x: x is None)


def at(platform, alpha0: float | jax.Array, beta0: float | jax.Array | None = None):
    """The platform at cant ``alpha0`` (and dihedral ``beta0``) [rad], parts re-derived."""
    p = eqx.tree_at(lambda q: q.alpha, platform, jnp.asarray(alpha0))
    if beta0 is not None:
        p = eqx.tree_at(lambda q: q.beta, p, jnp.asarray(beta0))
    return p.derive()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="5-degree steps")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/endurance_vs_cant[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or os.environ.get("JAXROTOR_OUT") or
               ("jaxrotor-out/endurance_vs_cant" + ("_quick" if args.quick else "")))
    out.mkdir(parents=True, exist_ok=True)

    hexa = paper_hexarotor_from_parts(electric_parts())
    beta0 = float(hexa.beta)
    step = 5.0 if args.quick else 1.0
    deg = np.arange(0.0, 45.0 + step / 2, step)
    alphas = jnp.asarray(np.radians(deg))

    @jax.jit
    def measures(a):
        p = at(hexa, a)
        h = E.hover_point(p)
        return {"shaft_W": jnp.sum(h.mechanical_power), "battery_W": h.battery_power,
                "battery_A": h.battery_current, "motor_A": jnp.max(h.motor_current),
                "throttle": jnp.max(h.throttle), "endurance_s": E.endurance_hover(p, 1.0, 0.2),
                "mass_kg": p.mass}

    rows = jax.vmap(measures)(alphas)
    rows = {k: np.asarray(v) for k, v in rows.items()}
    t = rows["endurance_s"]
    cos = np.cos(np.radians(deg))
    shaft_cos = rows["shaft_W"][0] * cos**-1.5
    t_cos = t[0] * cos**1.5
    shaft_err = float(np.max(np.abs(rows["shaft_W"] / shaft_cos - 1)))
    t_err = float(np.max(np.abs(t_cos / t - 1)))

    # the worked example: 25 deg cant, 10 deg dihedral (the paper) against the same parts flat
    paper = at(hexa, math.radians(25.0))
    flat = at(hexa, 0.0, 0.0)
    rep_paper, rep_flat = E.sizing_report(paper), E.sizing_report(flat)
    t_paper, t_flat = float(rep_paper["endurance_hover_s"]), float(rep_flat["endurance_hover_s"])
    shaft_paper = float(rep_paper["hover_mechanical_power_W"])
    shaft_flat = float(rep_flat["hover_mechanical_power_W"])
    closed_ratio = (math.cos(math.radians(25.0)) * math.cos(beta0)) ** -1.5
    print("the paper hexarotor (alpha_0 = 25 deg, beta_0 = 10 deg):")
    print(E.format_sizing_report(rep_paper))
    print("the same parts flat (alpha_0 = beta_0 = 0):")
    print(E.format_sizing_report(rep_flat))
    print(f"flight time {t_paper / 60:.2f} min against {t_flat / 60:.2f} min flat: the tilt costs "
          f"{(t_flat - t_paper) / 60:.2f} min ({100 * (1 - t_paper / t_flat):.1f} %); shaft power x "
          f"{shaft_paper / shaft_flat:.4f} (closed form (cos a cos b)^-3/2 = {closed_ratio:.4f})")

    # the gradient of the endurance with respect to the cant at 25 deg
    f = jax.jit(lambda a: E.endurance_hover(at(hexa, a), 1.0, 0.2))
    a0 = math.radians(25.0)
    g = float(jax.grad(f)(jnp.asarray(a0)))
    h = 1e-4
    fd = (float(f(jnp.asarray(a0 + h))) - float(f(jnp.asarray(a0 - h)))) / (2 * h)
    print(f"d t / d alpha_0 at 25 deg: {g:.6g} s/rad (central difference {fd:.6g}) = {g * math.pi / 180:.4g} s/deg")

    print(f"{'alpha_0':>8} {'shaft W':>9} {'battery W':>10} {'I_b A':>7} {'throttle':>8} {'t min':>7} "
          f"{'cos est':>8}")
    for i, d in enumerate(deg):
        print(f"{d:8.1f} {rows['shaft_W'][i]:9.1f} {rows['battery_W'][i]:10.1f} {rows['battery_A'][i]:7.2f} "
              f"{rows['throttle'][i]:8.3f} {t[i] / 60:7.2f} {t_cos[i] / 60:8.2f}")

    record = {
        "quick": args.quick, "vehicle": "paper_hexarotor_parts + electric_parts()", "beta0_deg": math.degrees(beta0),
        "soc0": 1.0, "soc_floor": 0.2, "alpha0_deg": deg,
        "shaft_power_W": rows["shaft_W"], "shaft_power_cos_W": shaft_cos, "battery_power_W": rows["battery_W"],
        "battery_current_A": rows["battery_A"], "motor_current_A": rows["motor_A"], "throttle": rows["throttle"],
        "endurance_s": t, "endurance_cos_estimate_s": t_cos, "mass_kg": float(rows["mass_kg"][0]),
        "worked_example": {
            "paper_endurance_s": t_paper, "flat_endurance_s": t_flat, "cost_s": t_flat - t_paper,
            "cost_fraction": 1 - t_paper / t_flat, "shaft_power_ratio": shaft_paper / shaft_flat,
            "shaft_power_ratio_closed_form": closed_ratio,
            "paper": {k: float(v) for k, v in rep_paper.items()}, "flat": {k: float(v) for k, v in rep_flat.items()},
        },
        "grad_endurance_alpha0_s_per_rad": g, "central_difference_s_per_rad": fd,
    }

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(deg, rows["battery_W"], "o-", ms=3, label="battery (model)")
    ax1.plot(deg, rows["shaft_W"], "s-", ms=3, label="shaft (model)")
    ax1.plot(deg, shaft_cos, "k--", lw=1, label=r"$P_0\,\cos^{-3/2}\alpha_0$")
    ax1.set_xlabel(r"cant $\alpha_0$ [deg]")
    ax1.set_ylabel("hover power [W]")
    ax1.grid(alpha=0.3)
    ax1.legend()
    ax2.plot(deg, t / 60, "o-", ms=3, label="model (endurance_hover)")
    ax2.plot(deg, t_cos / 60, "k--", lw=1, label=r"$t_0\,\cos^{3/2}\alpha_0$")
    ax2.axvline(25.0, color="grey", lw=0.8)
    ax2.set_xlabel(r"cant $\alpha_0$ [deg]")
    ax2.set_ylabel("hover endurance, 100 % to 20 % [min]")
    ax2.grid(alpha=0.3)
    ax2.legend()
    fig.suptitle(r"paper hexarotor with parts ($\beta_0$ = 10 deg, 6S 8000 mAh)")
    fig.tight_layout()
    fig.savefig(out / "endurance_vs_cant.png", dpi=120)
    plt.close(fig)

    checks = Checks("endurance_vs_cant")
    checks.add("shaft power against cos^-3/2 (max relative error)", shaft_err, "<=", 1e-9)
    checks.add("endurance falls with the cant (largest step)", float(np.max(np.diff(t))), "<", 0.0)
    checks.add("cos^3/2 estimate of the endurance (max relative error)", t_err, "<=", 0.03)
    checks.add("d t / d alpha_0 against central differences (relative)", abs(g - fd) / abs(fd), "<=", 1e-6)
    return checks.finish(out / "endurance_vs_cant.json", record)


if __name__ == "__main__":
    sys.exit(main())
