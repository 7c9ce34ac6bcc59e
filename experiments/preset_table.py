"""Generate the property tables of ``docs/analysis.md`` from the code.

Three tables, each between ``<!-- BEGIN generated: NAME -->`` and
``<!-- END generated: NAME -->`` markers in ``docs/analysis.md``:

* ``presets``: every registered preset (:func:`jaxrotor.design.presets.names`);
* ``sign-patterns``: the Table II hexarotor geometry with cant/dihedral on or off,
  the cant sign pattern flipped, and three spin-direction patterns -- whether a
  tilted hexarotor survives a rotor loss depends on how the cant signs pair with
  the spin directions, so it is tabulated here in jaxrotor's sign convention;
* ``test-designs``: the designs of ``tests/unit/analysis/test_analysis.py`` with known answers.

Usage::

    python experiments/preset_table.py            # rewrite docs/analysis.md
    python experiments/preset_table.py --check    # exit 1 if the doc is out of date
    python experiments/preset_table.py --print    # print the tables

With ``--check`` or ``--quick`` the check (one ``check ...: PASS/FAIL`` line; exit 1
if it fails) is that no generated table of ``docs/analysis.md`` differs from the
code's; with ``--out`` the tables are also written as ``preset_table.md`` and the
check's summary as ``preset_table.json``.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

from jaxrotor import analysis, presets  # noqa: E402
from jaxrotor.design.layouts import coaxial_layout, h_layout, x_layout  # noqa: E402
from jaxrotor.design.platform import explicit_platform, star_platform  # noqa: E402

from _checks import Checks  # noqa: E402

DOC = Path(__file__).resolve().parents[1] / "docs" / "analysis.md"
T = presets.TABLE_II
CF, CT = T["c_f"], T["c_tau"]


def _num(v, fmt="{:.3g}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    return fmt.format(v)


def _yn(b: bool) -> str:
    return "yes" if b else "no"


def _loss_margin(r: analysis.ActuationReport) -> str:
    return _num(min(x.margin for x in r.rotor_loss), "{:.3f}")


def preset_table() -> str:
    head = ("| preset | class | n | m [kg] | rank F/M/G | decoupling | hoverable | fail-safe (min margin) "
            "| T/W level / nominal | hover eff. | lateral cap. [N] | max roll/pitch/yaw at hover [N m] "
            "| cond(G_s) | yaw auth. [mm] | unreachable |")
    sep = "|" + "---|" * 15
    rows = [head, sep]
    for name in presets.names():
        r = analysis.analyze(presets.get(name))
        t = r.max_torque_at_hover_Nm
        rows.append(
            f"| `{name}` | {r.label} | {r.n_rotors} | {r.mass_kg:g} | {r.rank_F}/{r.rank_M}/{r.rank_G} "
            f"| {r.decoupling} | {_yn(r.statically_hoverable)} | {_yn(r.fail_safe)} ({_loss_margin(r)}) "
            f"| {_num(r.thrust_to_weight)} / {_num(r.nominal_thrust_to_weight)} | {_num(r.hover_efficiency, '{:.4f}')} "
            f"| {_num(r.lateral_force_capability_N, '{:.2f}')} "
            f"| {_num(t['roll'])} / {_num(t['pitch'])} / {_num(t['yaw'])} "
            f"| {_num(r.condition_number)} | {_num(1e3 * r.yaw_authority, '{:.1f}')} "
            f"| {', '.join(r.unreachable_axes) or '–'} |"
        )
    return "\n".join(rows)


def _hex(alpha0, beta0, alpha_sign, kappa):
    return star_platform(6, T["arm_length"], mass=T["mass"], c_f=CF, c_tau=CT, alpha=alpha0, beta=beta0,
                         alpha_sign=alpha_sign, kappa=kappa, inertia=T["J_a"], rotor_speed_max=presets.ROTOR_SPEED_MAX)


def sign_pattern_table() -> str:
    alt = [(-1.0) ** (k + 1) for k in range(6)]  # (-1)^i for i = 1..6: -, +, -, +, -, +
    cants = {"(-1)^i": alt, "-(-1)^i": [-a for a in alt]}
    spins = {"(-1)^i": alt, "-(-1)^i": [-a for a in alt], "+,+,-,-,+,-": [1.0, 1.0, -1.0, -1.0, 1.0, -1.0]}
    a0, b0 = T["alpha0"], T["beta0"]
    head = ("| alpha_0 | beta_0 | cant signs alpha_i / alpha_0 | spins kappa_i | rank G | hoverable (margin) "
            "| fail-safe | rotor-loss margins (rotors 1..6) | lateral cap. [N] |")
    rows = [head, "|" + "---|" * 9]
    for alpha0, beta0 in ((0.0, 0.0), (a0, 0.0), (0.0, b0), (a0, b0)):
        for cname, csign in cants.items():
            if alpha0 == 0.0 and cname != "(-1)^i":
                continue  # no cant: the sign pattern is irrelevant
            for sname, kappa in spins.items():
                r = analysis.analyze(_hex(alpha0, beta0, csign, kappa))
                margins = ", ".join(f"{x.margin:.3f}" for x in r.rotor_loss)
                rows.append(
                    f"| {math.degrees(alpha0):.0f}° | {math.degrees(beta0):.0f}° | {cname if alpha0 else '–'} | {sname} "
                    f"| {r.rank_G} | {_yn(r.statically_hoverable)} ({r.hover_margin:.3f}) | **{_yn(r.fail_safe)}** "
                    f"| {margins} | {_num(r.lateral_force_capability_N, '{:.2f}')} |"
                )
    return "\n".join(rows)


def test_designs() -> list[tuple[str, object]]:
    """The hand-checked designs of tests/unit/analysis/test_analysis.py."""
    same = x_layout(4, 0.25, mass=1.5, c_f=CF, c_tau=CT, kappa=[1.0] * 4, hub_mass=0.08, rotor_speed_max=700.0,
                    name="same_spin_quad")
    pair = explicit_platform([[0.0, 0.3, 0.0], [0.0, -0.3, 0.0]], mass=2.0, c_f=CF, c_tau=CT, kappa=[-1.0, 1.0],
                             inertia=[0.05, 0.02, 0.06], rotor_speed_max=700.0)
    coax_y = coaxial_layout(pair, 0.1, 1.0, name="coax_pair_on_y")
    tri = star_platform(3, 0.3, mass=1.2, c_f=CF, c_tau=CT, alpha=0.3, kappa=[-1.0, 1.0, -1.0],
                        inertia=[0.02, 0.02, 0.04], rotor_speed_max=700.0, name="tilted_tri")
    tri_bal = star_platform(3, 0.3, mass=1.2, c_f=CF, c_tau=CT, alpha=math.atan(CT / (CF * 0.3)),
                            alpha_sign=[1.0] * 3, kappa=[1.0] * 3, inertia=[0.02, 0.02, 0.04], rotor_speed_max=700.0,
                            name="yaw_balanced_tri")
    hq = h_layout(4, 0.5, 0.3, mass=1.5, c_f=CF, c_tau=CT, hub_mass=0.08, rotor_speed_max=700.0, name="h_quad")
    base3 = star_platform(3, 0.35, mass=2.5, c_f=CF, c_tau=CT, kappa=[-1.0, 1.0, -1.0], inertia=[0.05, 0.05, 0.09],
                          rotor_speed_max=700.0)
    y6 = coaxial_layout(base3, 0.1, 0.85, name="y6_coaxial")
    return [(d.name, d) for d in (same, coax_y, tri, tri_bal, hq, y6)]


def test_design_table() -> str:
    head = ("| design | class | rank F/M/G | [T;τ] rank | decoupling | u>0 with Mu=0 | hoverable | fail-safe "
            "| unreachable | yaw auth. [mm] |")
    rows = [head, "|" + "---|" * 10]
    for name, p in test_designs():
        r = analysis.analyze(p)
        rows.append(
            f"| `{name}` | {r.label} | {r.rank_F}/{r.rank_M}/{r.rank_G} | {r.rank_thrust_torque} | {r.decoupling} "
            f"| {_yn(r.realizable)} | {_yn(r.statically_hoverable)} | {_yn(r.fail_safe)} "
            f"| {', '.join(r.unreachable_axes) or '–'} | {_num(1e3 * r.yaw_authority, '{:.1f}')} |"
        )
    return "\n".join(rows)


def tables() -> dict[str, str]:
    return {"presets": preset_table(), "sign-patterns": sign_pattern_table(), "test-designs": test_design_table()}


def render(doc: str, generated: dict[str, str]) -> str:
    for name, body in generated.items():
        pat = re.compile(rf"(<!-- BEGIN generated: {re.escape(name)} -->\n)(?:.*?\n)?(<!-- END generated: {re.escape(name)} -->)",
                         re.S)
        if not pat.search(doc):
            raise SystemExit(f"{DOC}: no markers for table {name!r}. Fix: add "
                             f"'<!-- BEGIN generated: {name} -->' and '<!-- END generated: {name} -->' lines.")
        doc = pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), doc)
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true", help="exit 1 if docs/analysis.md is out of date")
    g.add_argument("--print", action="store_true", help="print the tables instead of writing")
    g.add_argument("--quick", action="store_true", help="same as --check, and say so on stdout (used by the tests)")
    ap.add_argument("--out", default=None, help="also write the tables as Markdown into this folder")
    args = ap.parse_args(argv)
    args.check = args.check or args.quick
    gen = tables()
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "preset_table.md").write_text("\n\n".join(f"## {k}\n\n{v}" for k, v in gen.items()) + "\n")
    if args.print:
        for name, body in gen.items():
            print(f"## {name}\n\n{body}\n")
        return 0
    old = DOC.read_text(encoding="utf-8")
    new = render(old, gen)
    if args.check:
        stale = [name for name, body in gen.items() if render(old, {name: body}) != old]
        checks = Checks("preset_table")
        checks.add(f"generated tables of {DOC.name} out of date", len(stale), "<=", 0,
                   f"out of date: {', '.join(stale)}" if stale else f"{len(gen)} tables")
        if new != old:
            print(f"{DOC} is out of date ({', '.join(stale)}). Fix: run python experiments/preset_table.py",
                  file=sys.stderr)
        else:
            print(f"{DOC} is up to date ({len(gen)} tables)")
        record = {"doc": str(DOC), "tables": list(gen), "out_of_date": stale,
                  "rows": {name: body.count("\n") - 1 for name, body in gen.items()}}
        return checks.finish(Path(args.out) / "preset_table.json" if args.out else None, record)
    DOC.write_text(new, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
