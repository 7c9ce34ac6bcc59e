"""``jaxrotor analyze`` and ``jaxrotor presets``: actuation properties of a design.

``jaxrotor analyze [CONFIG | --preset NAME] [--json] [--out DIR]`` prints every
property of :func:`jaxrotor.analysis.analyze` as a table, or with ``--json`` one
JSON object on stdout (the keys of :meth:`~jaxrotor.analysis.ActuationReport.to_dict`;
``null`` for a value that is infinite or undefined). With neither a CONFIG nor a
preset it analyses the paper's use-case hexarotor (``paper_hexarotor``). CONFIG
is a TOML file whose ``[platform]`` table names a ``preset`` or gives the
:func:`~jaxrotor.design.platform.star_platform` parameters
(read by :func:`jaxrotor.io.platform_table.load_platform`). ``--out DIR`` also writes a 3D
drawing of the design, a picture of its force sets and the exact zero-moment force
polytope with the hover plane and its section (:mod:`jaxrotor.io.polytope_plot`) (PNG).

JAX is imported inside ``analyze``; ``jaxrotor presets`` prints :data:`PRESET_ROWS` and
never imports it, so both it and ``jaxrotor --help`` answer at once.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

DEFAULT_PRESET = "paper_hexarotor"


def _load_config(path: Path):
    """The platform of CONFIG's ``[platform]`` table, through the io layer; a config mistake is a usage error."""
    from ..io.platform_table import load_platform
    from ..io.toml import ConfigError

    try:
        return load_platform(path)
    except ConfigError as err:
        raise click.BadParameter(str(err), param_hint="CONFIG") from None


def _fmt(v, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        if math.isinf(v):
            return "inf"
        return f"{v:.{digits}g}"
    return str(v)


def format_report(report) -> str:
    """Readable multi-line table of an :class:`~jaxrotor.analysis.ActuationReport`."""
    r = report
    rows: list[tuple[str, str]] = []

    def add(key, value, unit=""):
        rows.append((key, f"{value} {unit}".rstrip()))

    add("platform", f"{r.name}  ({r.label}, n = {r.n_rotors}, m = {r.mass_kg:g} kg, m g = {r.weight_N:.4g} N)")
    rows.append(("", ""))
    rows.append(("-- algebraic properties", ""))
    add("rank F / rank M / rank G", f"{r.rank_F} / {r.rank_M} / {r.rank_G}")
    add("rank of [thrust; torque] rows", f"{r.rank_thrust_torque} of 4")
    add("fully actuated (rank G = 6)", _fmt(r.fully_actuated))
    add("decoupling (D = F ker M)", f"{r.decoupling} (dim D = {r.dim_D})")
    add("zero-moment input u > 0 exists", _fmt(r.realizable))
    add("statically hoverable", _fmt(r.statically_hoverable))
    add("hover margin (max min u / mean u)", _fmt(r.hover_margin, 3))
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
    rows.append(("-- rotor loss (rotor: hoverable, margin, T/W best attitude)", ""))
    for x in r.rotor_loss:
        add(f"  rotor {x.rotor + 1} lost", f"{_fmt(x.hoverable)}, margin {x.margin:.3f}, T/W {_fmt(x.thrust_to_weight, 3)}")
    width = max(len(k) for k, _ in rows if not k.startswith("--"))
    lines = []
    for k, v in rows:
        if k.startswith("--"):
            lines.append(k)
        elif not k and not v:
            lines.append("")
        else:
            lines.append(f"{k:<{width}}  {v}")
    return "\n".join(lines)


@click.command("analyze")
@click.argument("config", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--preset", "preset", metavar="NAME", default=None,
              help="Analyse a named preset (see `jaxrotor presets`) instead of a CONFIG file.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout instead of the table.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write <name>_design.png, <name>_force_set.png and <name>_polytope.png into this folder.")
@click.option("--directions", "n_directions", type=click.IntRange(min=1), default=36, show_default=True,
              help="Number of horizontal directions for the lateral-force capability.")
def analyze(config: Path | None, preset: str | None, as_json: bool, out: Path | None, n_directions: int) -> None:
    """Actuation properties of a design: ranks, decoupling, hoverability, fail-safety, capability.

    CONFIG is a TOML file with a [platform] table (`preset = "name"` or the
    star_platform parameters). With neither CONFIG nor --preset, the paper's
    use-case hexarotor is analysed.
    """
    if config is not None and preset is not None:
        raise click.UsageError("give either CONFIG or --preset, not both. Fix: drop one of them.")
    from ._setup import setup_jax

    setup_jax(x64=True)  # exact reports are float64 (ranks, LPs)
    from .. import analysis
    from ..design import presets

    if config is not None:
        platform = _load_config(config)
    else:
        name = preset or DEFAULT_PRESET
        if name not in presets.names():
            raise click.BadParameter(f"{name!r} is not a preset. Fix: use one of {', '.join(presets.names())}.",
                                     param_hint="--preset")
        platform = presets.get(name)
    report = analysis.analyze(platform, n_directions=n_directions)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, allow_nan=False))
    else:
        click.echo(format_report(report))
    if out is not None:
        from ..io.design_plot import save_figures
        from ..io.polytope_plot import save_polytope_figure

        paths = save_figures(platform, out, report=report) + [save_polytope_figure(platform, out)]
        for p in paths:
            click.echo(f"wrote {p}", err=as_json)


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
    ("hex_s550", "CnS_6R", 6, 1.8, "flat hexa-X, 1.8 kg, 275 mm arm, T/W 3 (HEX_S550)"),
    ("octo_x8", "nCnS_8R", 8, 4.5, "coaxial X8, 4.5 kg, 350 mm arm, lower rotors 85 %, T/W 2.6 (OCTO_X8)"),
    ("racing_250", "CnS_4R", 4, 0.55, "250-class racing quad-X, 0.55 kg, 125 mm arm, T/W 6"),
)


@click.command("presets")
def presets() -> None:
    """List the named presets with their class label, rotor count, mass and description."""
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
