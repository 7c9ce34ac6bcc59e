"""``jaxrotor analyze`` and ``jaxrotor presets``: actuation properties of a design.

``jaxrotor analyze [CONFIG | --preset NAME] [--json] [--out DIR]`` prints every
property of :func:`jaxrotor.analysis.analyze` as a table, or with ``--json`` one
JSON object on stdout (the keys of :meth:`~jaxrotor.analysis.ActuationReport.to_dict`;
``null`` for a value that is infinite or undefined). With neither a CONFIG nor a
preset it analyses the paper's use-case hexarotor (``paper_hexarotor``). CONFIG
is a TOML file whose ``[platform]`` table names a ``preset`` or gives the
:func:`~jaxrotor.design.platform.star_platform` parameters
(read by :func:`jaxrotor.io.platform_table.load_platform`). ``--out DIR`` also writes a 3D
drawing of the design, a picture of its force sets, the exact zero-moment force
polytope with the hover plane and its section (:mod:`jaxrotor.io.polytope_plot`) and, for a
vehicle built from parts, its top and side views to scale (``<name>_vehicle.png``,
:mod:`jaxrotor.io.vehicle_plot`; skipped with a note for a platform without parts) (PNG).
The table opens with the vehicle: mass by part, centre-of-mass offset, inertia, rotor
inertia, ``c_f``, ``c_tau``, top rotor speed and what limits it, and the values given
explicitly instead of derived from the parts. A vehicle whose parts have a motor ``kv`` and a battery
also gets the static electrical sizing (:func:`electrical_sizing`: hover currents, power, throttle,
endurance from full charge to 20 %, thrust-to-weight and payload capacity; docs/energy.md), a
``sizing (electrical)`` block in the table and a ``sizing`` object in the JSON.

When CONFIG is a whole flight configuration (it has a ``[reference]`` table; read by
:func:`jaxrotor.io.config.load`), the closed loop of its controller and flight is also linearised
about hover (:func:`jaxrotor.analysis.closed_loop_stability`): a ``-- closed-loop stability`` block
in the table, a ``stability`` object (``stable``, ``max_growth_rate``, ``frequency_hz``, ``axis``,
``modes``, ...) in the JSON. A platform-only CONFIG (or one with flight tables but no ``[reference]``)
gives the actuation report alone. :func:`stability_check` is the verdict ``jaxrotor simulate`` and
``jaxrotor validate`` print before flying.

JAX is imported inside ``analyze``; ``jaxrotor presets`` prints :data:`PRESET_ROWS` and
never imports it, so both it and ``jaxrotor --help`` answer at once.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

from .._text import format_value as _fmt

DEFAULT_PRESET = "paper_hexarotor"


#: Tables of a problem or sweep file: such a CONFIG is analysed for its platform only.
_NOT_A_FLIGHT = ("objective", "parameters", "sweep", "optimize")


def load_config(path: Path):
    """``(platform, flight config or None)`` of CONFIG through the io layer; a config mistake is a usage error.

    A file with a ``[reference]`` table (and no problem or sweep tables) is a whole flight configuration
    (:func:`jaxrotor.io.config.load`); any other file gives its ``[platform]`` table alone.
    """
    from ..io import config as cfg
    from ..io.platform_table import load_platform
    from ..io.toml import ConfigError, read_toml

    try:
        data = read_toml(path)
        if "reference" in data and not any(k in data for k in _NOT_A_FLIGHT):
            conf = cfg.load(path)
            return conf.platform, conf
        return load_platform(path), None
    except ConfigError as err:
        raise click.BadParameter(str(err), param_hint="CONFIG") from None


def stability_rows(stab) -> list[tuple[str, str]]:
    """The ``-- closed-loop stability`` block of :func:`format_report` (a
    :class:`~jaxrotor.analysis.StabilityReport`)."""
    rows: list[tuple[str, str]] = [(f"-- closed-loop stability (linearised about hover, {stab.setting})", "")]
    d = stab.to_dict()
    rows.append(("verdict", "stable" if d["stable"] else "UNSTABLE"))
    if not d["equilibrium_found"]:
        rows.append(("hover equilibrium", f"not found (residual {_fmt(d['residual'], 3)} 1/s)"))
    g = d["max_growth_rate"]
    rows.append(("max growth rate (largest Re s)", "-" if g is None else f"{g:+.4g} 1/s (margin {-g:.4g} 1/s)"))
    rows.append(("frequency of that mode", f"{_fmt(d['frequency_hz'], 4)} Hz"))
    rows.append(("axis (dominant state)", f"{d['axis']} ({d['state']})"))
    if g is not None and g > 0:
        rows.append(("doubling time", f"{math.log(2) / g:.3g} s"))
    rows.append(("neutral coordinates", ", ".join(d["neutral"]) or "none"))
    if d["drifting"]:
        rows.append(("drifting (linearly)", ", ".join(d["drifting"])))
    for i, m in enumerate(d["modes"]):
        rows.append((f"  mode {i + 1}", f"{m['growth_rate']:+.4g} 1/s, {m['frequency_hz']:.4g} Hz, damping "
                                       f"{m['damping']:.3g}, {m['axis']} ({m['state']})"))
    return rows


def preflight_stability(conf, echo, strict: bool = False) -> tuple[bool, dict]:
    """The closed loop of ``conf`` (and of its comparison flight) linearised about hover, before flying.

    Prints each verdict (and, for an unstable loop, a warning on stderr) and returns ``(ok, reports)``: ``ok`` is ``False``
    when ``strict`` and a loop is unstable (the caller exits 3 before flying); ``reports`` maps each
    flight's name to its :class:`~jaxrotor.analysis.StabilityReport`, which the flight's verdict reuses
    (a loop that cannot be linearised is noted and left out).
    """
    from ..analysis.stability import closed_loop_stability

    ok, reports = True, {}
    for tag, c in (("", conf), (" (comparison)", conf.compare)):
        if c is None:
            continue
        try:
            rep = closed_loop_stability(c.platform, c.controller, c.flight)
        except Exception as err:  # a diagnostic only: the flight itself reports what is wrong
            echo(f"note: closed-loop stability{tag} not computed ({type(err).__name__}: {err})", err=True)
            continue
        reports[c.name] = rep
        echo(f"closed-loop stability{tag} (linearised about hover, {rep.setting}): {rep.summary()}")
        if not bool(rep.stable):
            ok = False
            m = rep.modes[0] if rep.modes else None
            what = (f"a {m['axis']} mode grows at {m['growth_rate']:+.3g} 1/s ({m['frequency_hz']:.3g} Hz)"
                    if m is not None and m["growth_rate"] > 0 else rep.summary())
            if not bool(rep.equilibrium_found):
                echo(f"warning: {c.name}{tag}: no hover equilibrium found ({rep.summary()}): the vehicle may not "
                     "hold level hover within its input bounds"
                     + ("." if strict else "; pass --strict to stop before flying."), err=True)
                continue
            echo(f"warning: {c.name}{tag}: the closed loop is unstable about hover: {what}. The flight will "
                 "diverge from small errors; retune the gains (e.g. lower the gains of that axis) or the actuators"
                 + ("." if strict else ", or pass --strict to stop before flying."), err=True)
    return ok or not strict, reports


def stability_check(conf, echo, strict: bool = False) -> bool:
    """Print the linearised closed-loop verdict of ``conf`` (and of its comparison flight) before it flies.

    :func:`preflight_stability` without the reports: ``False`` when ``strict`` and a loop is unstable.
    """
    return preflight_stability(conf, echo, strict)[0]




def _per_rotor(values, digits: int = 4) -> str:
    """One value if every rotor has it, else the list."""
    v = [float(x) for x in values]
    if v and all(x == v[0] or (math.isnan(x) and math.isnan(v[0])) for x in v):
        return _fmt(v[0], digits)
    return "[" + ", ".join(_fmt(x, digits) for x in v) + "]"


def _rpm(w: float) -> str:
    return f" ({w * 60 / (2 * math.pi):.0f} rpm)" if math.isfinite(w) else ""


def vehicle_rows(r) -> list[tuple[str, str]]:
    """The ``-- vehicle`` block of :func:`format_report`: mass by part, centre of mass, inertia, rotors, top speed."""
    import numpy as np  # not at import: `jaxrotor presets` and `--help` load neither NumPy nor JAX
    rows: list[tuple[str, str]] = []
    given = set(r.overrides)

    def add(key, value, unit="", field=None):
        mark = "  (given)" if field in given else ""
        rows.append((key, f"{value} {unit}".rstrip() + mark))

    rows.append((f"-- vehicle ({'from parts' if r.from_parts else 'given as numbers, no parts'})", ""))
    add("mass", _fmt(r.mass, 5), "kg", "mass")
    if r.mass_breakdown:
        total = sum(r.mass_breakdown.values())
        for part, m in r.mass_breakdown.items():
            add(f"  {part.replace('_', ' ')}", f"{m:.4g} kg", f"({100 * m / total:.1f} %)" if total > 0 else "")
        if "mass" in given:
            add("  sum of the parts", f"{total:.5g} kg", "(the mass above is given explicitly)")
    c = np.round(np.asarray(r.com_offset, dtype=float) * 1e3, 2) + 0.0  # no "-0.00"
    add("CoM offset from geometric centre", "[" + ", ".join(f"{x:+.2f}" for x in c) + "]", "mm", "com_offset")
    J = np.asarray(r.inertia, dtype=float)
    add("inertia Jxx / Jyy / Jzz", " / ".join(_fmt(J[i, i], 4) for i in range(3)), "kg m^2", "inertia")
    off = np.array([J[0, 1], J[0, 2], J[1, 2]])
    tiny = 1e-9 * max(float(np.max(np.abs(np.diag(J)))), 1e-300)
    if np.any(np.abs(off) > tiny):
        off = np.where(np.abs(off) > tiny, off, 0.0)
        add("inertia Jxy / Jxz / Jyz", " / ".join(_fmt(float(x), 4) for x in off), "kg m^2", "inertia")
    add("rotor spin inertia J_r", _per_rotor(r.rotor_inertia), "kg m^2", "rotor_inertia")
    add("thrust coefficient c_f", _per_rotor(r.c_f), "N s^2/rad^2", "c_f")
    add("drag coefficient c_tau", _per_rotor(r.c_tau), "N m s^2/rad^2", "c_tau")
    w = [float(x) for x in r.rotor_speed_max]
    top = _per_rotor(w) + " rad/s" + (_rpm(w[0]) if len(set(w)) == 1 else "")
    if r.speed_limit is not None:
        kinds = sorted(set(r.speed_limit))
        why = f"{' / '.join(kinds)}-limited" if "rotor_speed_max" not in given else "given explicitly"
        add("top rotor speed", f"{top}, {why}")
        add("  voltage limit (full throttle)", _per_rotor(r.voltage_limited_speed), "rad/s")
        add("  current limit (max current)", _per_rotor(r.current_limited_speed), "rad/s")
    else:
        why = ("given explicitly" if "rotor_speed_max" in given or not r.from_parts
               else "no motor kv or battery: unbounded")
        add("top rotor speed", f"{top}, {why}")
    if r.from_parts:
        add("given explicitly", ", ".join(r.overrides) or "nothing (all derived from the parts)")
    return rows


def headline(report) -> list[str]:
    """The first lines of the ``jaxrotor analyze`` table: whether the design can hover level within its input
    bounds, said plainly before anything else (a design that cannot is not called "statically hoverable" first).

    Level hover is ``F u = m g e_3``, ``M u = 0``, ``u_min <= u <= u_max``; the margin is the
    :class:`~jaxrotor.analysis.HoverCheck` margin (fraction of each rotor's input range).
    """
    r = report
    env = r.hover_envelope
    if not r.level_hover_feasible:
        lines = [f"CANNOT HOVER LEVEL: no input within u_min <= u <= u_max holds the weight ({r.weight_N:.4g} N) at "
                 f"level attitude with zero moment; the vertical force available there is "
                 f"{_fmt(r.thrust_to_weight, 3)} of the weight (nominal thrust-to-weight "
                 f"{_fmt(r.nominal_thrust_to_weight, 3)})."]
        if env is not None and math.isfinite(env.level_margin):
            lines.append(f"  The input bounds would have to widen by {-100 * env.level_margin:.4g} % of the input "
                         "range on each side.")
        if r.statically_hoverable:
            lines.append("  ('statically hoverable' below ignores the input bounds: some zero-moment input with "
                         "every rotor spinning gives a net force, but not enough of it within the bounds.)")
        return lines
    text = "hovers level within the input bounds"
    if env is not None:
        text += f" (margin {env.level_margin:.3g} of the input range)"
        if env.max_max_tilt > 0:
            text += (f"; holds position tilted up to {math.degrees(env.min_max_tilt):.3g} deg in every direction, "
                     f"{math.degrees(env.max_max_tilt):.3g} deg at best")
        else:
            text += "; holds position at level attitude only (max hover tilt 0 deg)"
    return [text]


def envelope_rows(env) -> list[tuple[str, str]]:
    """The ``-- hover envelope`` block of :func:`format_report` (a :class:`~jaxrotor.analysis.HoverEnvelope`
    or ``None`` for a tilting platform)."""
    rows: list[tuple[str, str]] = [("-- hover envelope (hold position tilted, inputs in bounds)", "")]
    if env is None:
        rows.append(("max hover tilt", "n/a: tilting platform (the envelope depends on the servo angles; "
                                       "jaxrotor.analysis.hover_envelope(platform, alpha=..., beta=...))"))
        return rows
    rows.append(("level hover margin (of input range)", _fmt(env.level_margin, 3)))
    if not env.level_hoverable:
        rows.append(("max hover tilt", "n/a: no level hover within the bounds"))
        return rows
    deg = math.degrees
    rows.append((f"max hover tilt min / max ({len(env.headings)} headings)",
                 f"{deg(env.min_max_tilt):.4g} / {deg(env.max_max_tilt):.4g} deg"))
    a = env.axis_tilts
    rows.append(("max pitch nose down / nose up", f"{deg(a['pitch_down']):.4g} / {deg(a['pitch_up']):.4g} deg"))
    rows.append(("max roll right down / left down", f"{deg(a['roll_right']):.4g} / {deg(a['roll_left']):.4g} deg"))
    rows.append(("lateral force at level hover max / all dirs",
                 f"{_fmt(env.lateral_force_max, 4)} / {_fmt(env.lateral_force_min, 4)} N"))
    return rows


def attitude_rows(check, roll_deg: float, pitch_deg: float) -> list[tuple[str, str]]:
    """The ``--hover-attitude`` row: yes/no with the :class:`~jaxrotor.analysis.HoverCheck` margin."""
    verdict = "yes" if check.feasible else "no"
    if check.margin == -math.inf:
        why = "no input makes that force with zero moment: it is outside the range of G"
    else:
        why = f"margin {_fmt(check.margin, 3)} of the input range"
    return [(f"hover at roll {roll_deg:g} deg, pitch {pitch_deg:g} deg", f"{verdict} ({why})")]


def hover_attitude_dict(check, roll_deg: float, pitch_deg: float) -> dict:
    """The ``hover_attitude`` JSON block: ``roll_deg``, ``pitch_deg``, ``feasible``, ``margin`` (fraction of the
    input range, ``null`` for ``-inf``), ``u`` (the inputs at the largest margin [rad^2/s^2])."""
    from .._util import to_jsonable

    return to_jsonable({"roll_deg": roll_deg, "pitch_deg": pitch_deg, "feasible": check.feasible,
                        "margin": check.margin, "u": check.u})


def electrical_sizing(platform) -> dict | None:
    """The static electrical sizing (:func:`jaxrotor.electrical.sizing_report`: hover current, power, throttle,
    endurance, thrust-to-weight, payload capacity) of a platform built from parts with a motor ``kv`` and a
    battery, as plain floats; ``None`` for any other platform."""
    from .. import electrical

    if not electrical.has_electrical_parts(platform):
        return None
    return {k: float(v) for k, v in electrical.sizing_report(platform).items()}


def format_report(report, stability=None, attitude=None) -> str:
    """Readable multi-line table of an :class:`~jaxrotor.analysis.ActuationReport` (and of a
    :class:`~jaxrotor.analysis.StabilityReport`, a last block).

    It opens with :func:`headline` (can the design hover level within its bounds?) and, with
    ``attitude = (HoverCheck, roll_deg, pitch_deg)``, the ``--hover-attitude`` answer.
    """
    r = report
    rows: list[tuple[str, str]] = []

    def add(key, value, unit=""):
        rows.append((key, f"{value} {unit}".rstrip()))

    head = headline(r)
    if attitude is not None:
        rows += attitude_rows(*attitude)
        rows.append(("", ""))
    add("platform", f"{r.name}  ({r.label}, n = {r.n_rotors}, m = {r.mass_kg:g} kg, m g = {r.weight_N:.4g} N)")
    rows.append(("", ""))
    rows += vehicle_rows(r)
    rows.append(("", ""))
    rows.append(("-- algebraic properties", ""))
    add("rank F / rank M / rank G", f"{r.rank_F} / {r.rank_M} / {r.rank_G}")
    add("rank of [thrust; torque] rows", f"{r.rank_thrust_torque} of 4")
    add("fully actuated (rank G = 6)", _fmt(r.fully_actuated))
    add("decoupling (D = F ker M)", f"{r.decoupling} (dim D = {r.dim_D})")
    add("zero-moment input u > 0 exists", _fmt(r.realizable))
    add("statically hoverable (bounds ignored)", _fmt(r.statically_hoverable))
    add("zero-moment input margin (min u / mean u)", _fmt(r.hover_margin, 3))
    add("fail-safe (any one rotor lost)", _fmt(r.fail_safe))
    add("fail-safe within input bounds", _fmt(r.fail_safe_within_bounds))
    add("unreachable wrench axes", ", ".join(r.unreachable_axes) or "none")
    add("torque rows balanced (M 1 = 0)", _fmt(r.torque_rows_balanced))
    rows.append(("", ""))
    rows.append(("-- capability within u_min <= u <= u_max", ""))
    add("level hover feasible", _fmt(r.level_hover_feasible))
    if r.hover_u is not None:
        add("hover input u_h", "[" + ", ".join(f"{x:.4g}" for x in r.hover_u) + "]", "rad^2/s^2")
    add("hover input / u_max (largest)", _fmt(r.hover_input_fraction, 3))
    add("hover efficiency |sum f| / sum |f|", _fmt(r.hover_efficiency, 4))
    add("thrust-to-weight (level, zero moment)", _fmt(r.thrust_to_weight, 4))
    add("nominal thrust-to-weight", _fmt(r.nominal_thrust_to_weight, 4))
    add(f"lateral-force capability ({r.lateral_directions} dirs)", _fmt(r.lateral_force_capability_N, 4), "N")
    t = r.max_torque_at_hover_Nm
    add("max torque at hover roll/pitch/yaw", " / ".join(_fmt(t[k], 4) for k in ("roll", "pitch", "yaw")), "N m")
    add("yaw authority", _fmt(r.yaw_authority, 4), "N m per N")
    rows.append(("", ""))
    rows += envelope_rows(r.hover_envelope)
    rows.append(("", ""))
    rows.append(("-- force polytopes (exact)", ""))
    add("zero-moment force set volume", _fmt(r.zero_moment_force_volume, 5), "N^3")
    add("hover section area (f_z = m g)", _fmt(r.hover_section_area, 5), "N^2")
    add("volume above hover (f_z >= m g)", _fmt(r.volume_above_hover, 5), "N^3")
    add("force zonotope volume", _fmt(r.force_zonotope_volume, 5), "N^3")
    add("moment set volume at hover", _fmt(r.hover_moment_volume, 5), "(N m)^3")
    for key, why in r.polytope_notes.items():
        add(f"  {key}", why)
    rows.append(("", ""))
    rows.append(("-- conditioning of G_s (moments / L, all / mean c_f)", ""))
    add("singular values", "[" + ", ".join(f"{x:.4g}" for x in r.singular_values) + "]")
    add("condition number sigma_1 / sigma_6", _fmt(r.condition_number, 4))
    add("condition number on range(G)", _fmt(r.condition_number_range, 4))
    rows.append(("", ""))
    rows.append(("-- rotor loss (rotor: hoverable in some attitude, margin, T/W best attitude; level hover outcome)",
                 ""))
    for x in r.rotor_loss:
        add(f"  rotor {x.rotor + 1} lost", f"{_fmt(x.hoverable)}, margin {x.margin:.3f}, T/W {_fmt(x.thrust_to_weight, 3)}"
            f"; {x.outcome}")
    if stability is not None:
        rows.append(("", ""))
        rows += stability_rows(stability)
    width = max(len(k) for k, _ in rows if not k.startswith("--"))
    lines = head + [""]
    for k, v in rows:
        if k.startswith("--"):
            lines.append(k)
        elif not k and not v:
            lines.append("")
        else:
            lines.append(f"{k:<{width}}  {v}")
    return "\n".join(lines)


def draw_hover_envelope(ax, envelopes, labels=None) -> None:
    """Polar plot of the largest hover tilt [deg] against the lean heading on a Matplotlib polar ``ax``.

    Heading 0 (nose down) points up the page and headings run counter-clockwise, so the plot is a
    top view of the vehicle (nose up, left on the left): the curve is how far the body can lean
    toward each side and still hold position with its inputs in bounds.
    """
    import numpy as np

    labels = labels or [None] * len(envelopes)
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(1)
    top = 1.0
    for env, label in zip(envelopes, labels):
        th = np.append(env.headings, env.headings[:1])
        r = np.degrees(np.append(env.max_tilt, env.max_tilt[:1]))
        ax.plot(th, r, lw=1.8, label=label)
        ax.fill(th, r, alpha=0.15)
        if np.any(np.isfinite(r)):
            top = max(top, float(np.nanmax(r)))
    ax.set_rmax(1.1 * top)
    ax.set_xticks(np.radians([0, 90, 180, 270]))
    ax.set_xticklabels(["nose down\n(pitch +)", "left down\n(roll -)", "nose up\n(pitch -)", "right down\n(roll +)"],
                       fontsize=8)
    if any(labels):
        ax.legend(loc="lower left", bbox_to_anchor=(-0.15, -0.15), fontsize=8)


def save_hover_envelope_figure(name: str, envelope, out_dir, dpi: int = 110) -> Path:
    """Write ``<name>_hover_envelope.png``: :func:`draw_hover_envelope` of one envelope (min/max in the title)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(5.2, 5.4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(111, projection="polar")
    draw_hover_envelope(ax, [envelope])
    if envelope.level_hoverable:
        title = (f"{name}: max hover tilt [deg]\n{math.degrees(envelope.min_max_tilt):.3g} deg in every direction, "
                 f"{math.degrees(envelope.max_max_tilt):.3g} deg at best")
    else:
        title = f"{name}: cannot hover level within its input bounds"
    ax.set_title(title, fontsize=9)
    path = out / f"{name}_hover_envelope.png"
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return path


def _attitude(value: str | None) -> tuple[float, float] | None:
    """``--hover-attitude ROLL,PITCH`` [deg] as two floats."""
    if value is None:
        return None
    parts = value.split(",")
    try:
        roll, pitch = (float(x) for x in parts)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not ROLL,PITCH. Fix: give two angles in degrees separated by a comma, "
                                 "e.g. --hover-attitude 10,-5.", param_hint="--hover-attitude") from None
    if not (math.isfinite(roll) and math.isfinite(pitch)):
        raise click.BadParameter(f"{value!r} is not finite. Fix: give two finite angles in degrees.",
                                 param_hint="--hover-attitude")
    return roll, pitch


@click.command("analyze")
@click.argument("config", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--preset", "preset", metavar="NAME", default=None,
              help="Analyse a named preset (see `jaxrotor presets`) instead of a CONFIG file.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout instead of the table.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write <name>_design.png, <name>_force_set.png, <name>_polytope.png, "
                   "<name>_hover_envelope.png (max hover tilt against heading, fixed-tilt designs) and, for a vehicle "
                   "built from parts, <name>_vehicle.png (top and side views to scale) into this folder.")
@click.option("--directions", "n_directions", type=click.IntRange(min=1), default=36, show_default=True,
              help="Number of horizontal directions for the lateral-force capability.")
@click.option("--hover-attitude", "hover_attitude", metavar="ROLL,PITCH", default=None,
              help="Also answer whether the design can hold position at this attitude (degrees, R = R_y(pitch) "
                   "R_x(roll), FLU: pitch + is nose down, roll + right side down): yes/no with the margin.")
def analyze(config: Path | None, preset: str | None, as_json: bool, out: Path | None, n_directions: int,
            hover_attitude: str | None) -> None:
    """Actuation properties of a design: ranks, decoupling, hoverability, fail-safety, capability.

    CONFIG is a TOML file with a [platform] table (`preset = "name"` or the
    star_platform parameters). With neither CONFIG nor --preset, the paper's
    use-case hexarotor is analysed. A whole flight CONFIG (with [reference]) also
    gets the closed loop's linearised stability about hover (growth rates, modes).
    """
    if config is not None and preset is not None:
        raise click.UsageError("give either CONFIG or --preset, not both. Fix: drop one of them.")
    from ._setup import setup_jax

    setup_jax(x64=True)  # exact reports are float64 (ranks, LPs)
    from .. import analysis
    from ..design import presets

    conf = None
    if config is not None:
        platform, conf = load_config(config)
    else:
        name = preset or DEFAULT_PRESET
        if name not in presets.names():
            raise click.BadParameter(f"{name!r} is not a preset. Fix: use one of {', '.join(presets.names())}.",
                                     param_hint="--preset")
        platform = presets.get(name)
    attitude = _attitude(hover_attitude)
    report = analysis.analyze(platform, n_directions=n_directions)
    check = None
    if attitude is not None:
        check = (analysis.hover_at_attitude(platform, math.radians(attitude[0]), math.radians(attitude[1])),
                 *attitude)
    stability = None
    if conf is not None:
        try:
            stability = analysis.closed_loop_stability(conf.platform, conf.controller, conf.flight)
        except ValueError as err:  # what fly() refuses (rank, rotor inertia under an ideal motor, timing)
            raise click.BadParameter(str(err), param_hint="CONFIG") from None
    sizing = electrical_sizing(platform)
    if as_json:
        payload = report.to_dict()
        if stability is not None:
            payload["stability"] = stability.to_dict()
        if check is not None:
            payload["hover_attitude"] = hover_attitude_dict(*check)
        if sizing is not None:
            from .._util import to_jsonable

            payload["sizing"] = to_jsonable(sizing)  # a non-finite value (no current limit, ...) as null
        click.echo(json.dumps(payload, ensure_ascii=False, allow_nan=False))
    else:
        click.echo(format_report(report, stability, check))
        if sizing is not None:
            from ..electrical import format_sizing_report

            click.echo("")
            click.echo(format_sizing_report(sizing))
    if out is not None:
        from ..io.design_plot import save_figures
        from ..io.polytope_plot import save_polytope_figure
        from ..io.vehicle_plot import NO_DRAWING, save_vehicle_figure

        paths = save_figures(platform, out, report=report) + [save_polytope_figure(platform, out)]
        if report.hover_envelope is not None:
            paths.append(save_hover_envelope_figure(platform.name, report.hover_envelope, out))
        vehicle = save_vehicle_figure(platform, out)
        for p in paths + ([vehicle] if vehicle is not None else []):
            click.echo(f"wrote {p}", err=as_json)
        if vehicle is None:
            click.echo(f"note: {NO_DRAWING}", err=True)


#: ``jaxrotor presets``: ``(name, Table I class label, rotor count, mass [kg], description)`` of every preset of
#: :mod:`jaxrotor.design.presets`, written out so the listing needs no JAX (``tests/unit/test_cli.py`` checks each
#: row against the preset it names).
PRESET_ROWS = (
    ("paper_hexarotor", "CS_α0β0-Ted_6R", 6, 3.5, "RotorSuite use case, Table II (J^a)"),
    ("paper_hexarotor_physics", "CS_α0β0-Ted_6R", 6, 3.5,
     "RotorSuite use case, Table II with the physics-based inertia J^p"),
    ("cs_4r", "CS_4R", 4, 1.5, "flat star quadrotor (paper example CS_4R)"),
    ("cs_a0_ted_6r", "CS_α0-Ted_6R", 6, 3.5, "cant-tilted hexarotor (paper example CS_α0-Ted_6R)"),
    ("cs_ai_ting_6r", "CS_αi-Ting_6R", 6, 3.5, "six independently tilting arms, Voliro arrangement (CS_αi-Ting_6R)"),
    ("cs_ai_ting_4r", "CS_αi-Ting_4R", 4, 1.5, "tilting quadrotor, Ryll arrangement (CS_αi-Ting_4R)"),
    ("cs_a0_ting_6r", "CS_α0-Ting_6R", 6, 3.5, "cant-tilting hexarotor, one shared servo cant (CS_α0-Ting_6R)"),
    ("hex_s550", "CS_6R", 6, 1.8, "flat hexa-X, 1.8 kg, 275 mm arm, T/W 3 (HEX_S550)"),
    ("octo_x8", "nCS_8R", 8, 4.5, "coaxial X8, 4.5 kg, 350 mm arm, lower rotors 85 %, T/W 2.6 (OCTO_X8)"),
    ("racing_250", "CS_4R", 4, 0.55, "250-class racing quad-X, 0.55 kg, 125 mm arm, T/W 6"),
    ("paper_hexarotor_parts", "CS_α0β0-Ted_6R", 6, 3.5,
     "RotorSuite Table II hexarotor built from its parts (3.5 kg, J^p within 0.4 %)"),
    ("x500", "CS_4R", 4, 2.0, "Holybro X500-class quad-X from parts, PX4 Gazebo x500 (2.0 kg)"),
    ("f450", "CS_4R", 4, 1.4, "DJI F450-class quad-X from parts, RflySim F450 model (1.4 kg)"),
    ("s550", "CS_6R", 6, 1.8, "S550-class hexa-X from parts (1.8 kg, 275 mm arms)"),
    ("x8", "nCS_8R", 8, 4.5, "coaxial X8 from parts (4.5 kg, 350 mm arms, lower rotors 85 %)"),
    ("y6", "nCS_6R", 6, 2.1, "Y6 from parts (2.1 kg, 300 mm arms, lower rotors 85 %)"),
    ("crazyflie", "CS_4R", 4, 0.03, "Crazyflie 2.0 from parts, Förster 2015 as in RotorPy (30 g)"),
    ("hummingbird", "CS_4R", 4, 0.5, "AscTec Hummingbird from parts, as in RotorPy (0.5 kg)"),
)


@click.command("presets")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list: one object per preset with name, n, label, tilting, mass [kg], description.")
def presets(as_json: bool = False) -> None:
    """List the named presets with their class label, rotor count, mass and description."""
    if as_json:
        import json

        click.echo(json.dumps([{"name": name, "n": n, "label": label, "tilting": "-Ting" in label, "mass": mass,
                                "description": text} for name, label, n, mass, text in PRESET_ROWS], indent=1))
        return
    rows = [(name, label, str(n), f"{mass:g} kg", text) for name, label, n, mass, text in PRESET_ROWS]
    header = ("name", "class", "n", "mass", "description")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    click.echo(fmt.format(*header))
    for r in rows:
        click.echo(fmt.format(*r))


COMMANDS = [analyze, presets]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(analyze())
