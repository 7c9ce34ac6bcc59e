"""One self-contained HTML design report of a configuration: :func:`build_report` (``jaxrotor report CONFIG``).

The page ``report.html`` holds, with no request to the network:

- the vehicle in 3D (arms, rotor discs coloured by spin direction, spin axes, centre of mass), rotatable;
- the exact zero-moment force polytope ``F_B`` [N] with the hover plane ``f_z = m g`` and its section,
  and the section drawn flat;
- the mass breakdown by part (a vehicle built from parts), inertia and rotor coefficients;
- the allocation properties (ranks, decoupling, conditioning of ``G_s``, hover input, thrust-to-weight,
  the outcome of each single rotor loss) and the polytope measures;
- the closed loop's modes linearised about hover (a whole flight configuration) and the hover envelope
  (largest hover tilt against the lean heading, a fixed-tilt platform);
- the flight: 3D trajectory with the reference, position and attitude errors, rotor speeds, the
  metrics table and the verdict (with ``physics``, the physics layer beside the analytic one).

The numbers are those of ``jaxrotor analyze CONFIG --json`` (the same :func:`jaxrotor.analysis.analyze`,
:func:`jaxrotor.analysis.closed_loop_stability` and electrical sizing, written beside the page as
``analysis.json``) and of ``jaxrotor simulate CONFIG`` (the same :func:`jaxrotor.workflows.usecase.run`, which
writes ``metrics.json`` and ``trajectory.npz`` beside the page). Every number shown carries its exact value:
``data-key`` (``analysis.<key>``, ``metrics.<key>``, ``physics.<key>``, list indices as ``.0``, ``.1``, ...)
and ``data-value`` (the shortest ``repr`` of the float, which reads back to the same double), and the page
embeds the whole of both JSON objects in ``<script type="application/json" id="report-data">``.

The figures are plotly figures. plotly.js (about 4.8 MB) is embedded once, gzip-compressed and base64-encoded
(about 1.9 MB); the page inflates it with the browser's ``DecompressionStream`` and then draws every figure,
so the page stays near 2 MB. When every figure is drawn the page sets ``data-rendered`` on ``<body>`` to the
number of figures (``"error: ..."`` when something failed, which is also shown at the top of the page).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import gzip
import html
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from .._text import format_value as _fmt
from .._util import to_jsonable

__all__ = ["REPORT_SECTIONS", "ReportResult", "analysis_payload", "build_report", "output_dir", "render_html"]

#: The ``id`` of each section of the page, in order (``stability``, ``envelope`` and the flight sections only
#: when the analysis or the flight provides them).
REPORT_SECTIONS = ("vehicle", "polytope", "mass", "allocation", "stability", "envelope", "flight")

#: Colours of the rotor discs by spin direction ``kappa`` (-1: counter-clockwise, +1: clockwise), as
#: :data:`jaxrotor.io.design_plot.SPIN_COLORS` (matplotlib's tab:blue and tab:red).
SPIN_COLORS = {-1: "#1f77b4", 1: "#d62728"}

#: Most samples per flight curve drawn in the page (the flight is decimated evenly; the metrics are of every sample).
MAX_POINTS = 600

#: Tables of a problem or sweep file: such a CONFIG is analysed for its platform only (as ``jaxrotor analyze``).
_NOT_A_FLIGHT = ("objective", "parameters", "sweep", "optimize")


@dataclasses.dataclass
class ReportResult:
    """What :func:`build_report` wrote: the page, the ``analyze --json`` object, the ``metrics.json`` object
    (``None`` without a flight), the physics layer's ``validation.json`` object (``None`` without ``physics``)
    and the time to build it [s]."""

    path: Path
    analysis: dict
    metrics: dict | None
    validation: dict | None
    build_time_s: float

    @property
    def failed(self) -> list[str]:
        """Names of the flights whose verdict is raised (analytic, comparison and physics layer)."""
        out = []
        if self.metrics is not None:
            flights = [self.metrics] + ([self.metrics["compare"]] if self.metrics.get("compare") else [])
            out += [m["name"] for m in flights if m.get("verdict", "ok") != "ok"]
        if self.validation is not None and self.validation["verdict_physics"] != "ok":
            out.append(f"{self.validation['name']}_physics")
        return out


def output_dir(name: str, out_dir: str | Path | None = None) -> Path:
    """Where :func:`build_report` writes: ``out_dir``, or ``./jaxrotor-out/<name>-report/``."""
    return Path(out_dir) if out_dir is not None else Path("jaxrotor-out") / f"{name}-report"


def _load(config_path: str | Path):
    """``(platform, flight config or None)`` as ``jaxrotor analyze`` reads CONFIG: a file with a ``[reference]``
    table (and no problem or sweep tables) is a whole flight configuration; any other its ``[platform]`` alone."""
    from ..io import config as cfg
    from ..io.platform_table import load_platform
    from ..io.toml import read_toml

    data = read_toml(config_path)
    if "reference" in data and not any(k in data for k in _NOT_A_FLIGHT):
        conf = cfg.load(config_path)
        return conf.platform, conf
    return load_platform(config_path), None


def analysis_payload(platform, conf=None, n_directions: int = 36) -> tuple[dict, Any, Any]:
    """The ``jaxrotor analyze CONFIG --json`` object of a platform (and of its flight configuration ``conf``).

    :meth:`~jaxrotor.analysis.ActuationReport.to_dict` of :func:`jaxrotor.analysis.analyze`, plus ``stability``
    (:func:`jaxrotor.analysis.closed_loop_stability` of ``conf``) and ``sizing`` (the electrical sizing of a
    vehicle with a motor ``kv`` and a battery) when there are, exactly as the command builds it.

    Returns:
        ``(payload, report, stability)``: the JSON-ready dict, the :class:`~jaxrotor.analysis.ActuationReport`
        and the :class:`~jaxrotor.analysis.StabilityReport` (``None`` without ``conf``).
    """
    from .. import analysis, electrical

    report = analysis.analyze(platform, n_directions=n_directions)
    payload = report.to_dict()
    stability = None
    if conf is not None:
        stability = analysis.closed_loop_stability(conf.platform, conf.controller, conf.flight)
        payload["stability"] = stability.to_dict()
    if electrical.has_electrical_parts(platform):
        payload["sizing"] = to_jsonable({k: float(v) for k, v in electrical.sizing_report(platform).items()})
    return payload, report, stability


# ----------------------------------------------------------------------------------------------------------------
# HTML pieces


def _esc(x) -> str:
    return html.escape(str(x), quote=True)




def _num(key: str, value, digits: int = 4, unit: str = "") -> str:
    """One number as ``<span data-key data-value>``: the text to ``digits`` significant digits, the exact value
    in ``data-value`` (``repr`` of the float, ``true``/``false``, ``null`` for ``None``)."""
    if isinstance(value, bool):
        exact = "true" if value else "false"
    elif value is None:
        exact = "null"
    elif isinstance(value, int):
        exact = str(value)
    else:
        exact = repr(float(value))
    text = _fmt(value, digits) + (f" {unit}" if unit else "")
    return f'<span class="num" data-key="{_esc(key)}" data-value="{_esc(exact)}">{_esc(text)}</span>'


def _nums(key: str, values, digits: int = 4, unit: str = "") -> str:
    """A list of numbers, each a :func:`_num` with the index appended to the key."""
    inner = ", ".join(_num(f"{key}.{i}", v, digits) for i, v in enumerate(values))
    return f"[{inner}]" + (f" {_esc(unit)}" if unit else "")


def _table(rows: list[tuple[str, str]], cls: str = "kv") -> str:
    """A two-column table; the second cell is HTML already."""
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="{cls}">{body}</table>'


def _grid(header: list[str], rows: list[list[str]]) -> str:
    """A table with a header row; cells are HTML already."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _round(x, digits: int = 5):
    """Floats (nested lists) rounded to ``digits`` significant digits for the figures; ``None`` for a gap or a
    non-finite value."""
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        v = float(a)
        return float(f"{v:.{digits}g}") if math.isfinite(v) else None
    return [_round(r, digits) for r in a]


def _figure(fig_id: str, data: list[dict], layout: dict, height: int = 460) -> str:
    """A figure's ``<div>`` and its JSON spec (read by the page's script)."""
    base = {"margin": {"l": 50, "r": 20, "t": 40, "b": 40}, "height": height, "paper_bgcolor": "white",
            "font": {"size": 12}}
    if "title" in layout:  # left, clear of the mode bar on the right
        layout = {**layout, "title": {"x": 0.01, "xanchor": "left", **layout["title"]}}
    spec = json.dumps({"data": data, "layout": {**base, **layout}}, allow_nan=False, separators=(",", ":"))
    spec = spec.replace("</", "<\\/")
    return (f'<div class="fig" id="{fig_id}" data-figure="{fig_id}" style="height:{height}px"></div>'
            f'<script type="application/json" class="figspec" data-for="{fig_id}">{spec}</script>')


# ----------------------------------------------------------------------------------------------------------------
# Figures


def _scene(title_x="x [m]", title_y="y [m]", title_z="z [m]", aspect="data") -> dict:
    return {"xaxis": {"title": {"text": title_x}}, "yaxis": {"title": {"text": title_y}},
            "zaxis": {"title": {"text": title_z}}, "aspectmode": aspect,
            "camera": {"eye": {"x": 1.35, "y": -1.35, "z": 0.9}}}


def _disc(center: np.ndarray, axis: np.ndarray, radius: float, k: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """A disc as a triangle fan: ``(points (k + 1, 3), triangles (k, 3))`` (centre first)."""
    z = axis / np.linalg.norm(axis)
    a = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(z, a)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(z, e1)
    th = np.linspace(0.0, 2 * np.pi, k, endpoint=False)
    ring = center + radius * (np.outer(np.cos(th), e1) + np.outer(np.sin(th), e2))
    tri = np.array([[0, 1 + i, 1 + (i + 1) % k] for i in range(k)])
    return np.vstack([center, ring]), tri


def vehicle_figure(platform) -> tuple[list[dict], dict]:
    """Plotly traces and layout of the vehicle about its centre of mass (body frame, FLU) [m]: arms from the
    geometric centre to each hub, the rotor discs (propeller diameter from the parts, else 0.45 of the smallest hub
    spacing) coloured by spin direction, each spin axis ``z_i`` and the centre of mass."""
    from ..design.platform import rotor_axes, rotor_positions

    pos = np.asarray(rotor_positions(platform), dtype=float)
    axes = np.asarray(rotor_axes(platform), dtype=float)
    kappa = np.asarray(platform.kappa, dtype=float)
    n = pos.shape[0]
    reach = float(np.max(np.linalg.norm(pos, axis=1))) or 1.0
    if platform.parts is not None:
        radius = 0.5 * float(platform.parts.propeller.diameter)
    else:
        gaps = [np.linalg.norm(pos[i] - pos[j]) for i in range(n) for j in range(i + 1, n)]
        gaps = [g for g in gaps if g > 1e-6 * reach]
        radius = 0.45 * min(gaps) if gaps else 0.3 * reach
    traces: list[dict] = []
    # the arms start at the frame's geometric centre, -com_offset about the centre of mass
    c0 = np.zeros(3) if platform.com_offset is None else -np.asarray(platform.com_offset, dtype=float)
    xs, ys, zs = [], [], []
    for p in pos:
        xs += [c0[0], p[0], None]
        ys += [c0[1], p[1], None]
        zs += [c0[2], p[2], None]
    traces.append({"type": "scatter3d", "mode": "lines", "name": "arms", "x": _round(xs), "y": _round(ys),
                   "z": _round(zs), "line": {"color": "#444", "width": 8}, "hoverinfo": "skip"})
    for sign, label in ((-1, "rotor disc, counter-clockwise"), (1, "rotor disc, clockwise")):
        idx = [i for i in range(n) if (kappa[i] > 0) == (sign > 0)]
        if not idx:
            continue
        pts, tris = [], []
        for i in idx:
            p, t = _disc(pos[i], axes[i], radius)
            tris.append(t + sum(len(q) for q in pts))
            pts.append(p)
        P, T = np.vstack(pts), np.vstack(tris)
        traces.append({"type": "mesh3d", "name": label, "showlegend": True, "x": _round(P[:, 0]),
                       "y": _round(P[:, 1]), "z": _round(P[:, 2]), "i": T[:, 0].tolist(), "j": T[:, 1].tolist(),
                       "k": T[:, 2].tolist(), "color": SPIN_COLORS[sign], "opacity": 0.45, "flatshading": True,
                       "hoverinfo": "name"})
    L = 0.5 * reach
    xs, ys, zs = [], [], []
    for p, z in zip(pos, axes):
        q = p + L * z
        xs += [p[0], q[0], None]
        ys += [p[1], q[1], None]
        zs += [p[2], q[2], None]
    traces.append({"type": "scatter3d", "mode": "lines", "name": "spin axes z_i (thrust)", "x": _round(xs),
                   "y": _round(ys), "z": _round(zs), "line": {"color": "#2ca02c", "width": 5}, "hoverinfo": "skip"})
    tips = pos + L * axes
    traces.append({"type": "cone", "name": "thrust direction", "showlegend": False, "showscale": False,
                   "x": _round(tips[:, 0]), "y": _round(tips[:, 1]), "z": _round(tips[:, 2]),
                   "u": _round(axes[:, 0]), "v": _round(axes[:, 1]), "w": _round(axes[:, 2]), "sizemode": "absolute",
                   "sizeref": 0.12 * reach, "anchor": "tip", "colorscale": [[0, "#2ca02c"], [1, "#2ca02c"]],
                   "hoverinfo": "skip"})
    traces.append({"type": "scatter3d", "mode": "markers+text", "name": "hubs", "x": _round(pos[:, 0]),
                   "y": _round(pos[:, 1]), "z": _round(pos[:, 2]), "text": [str(i + 1) for i in range(n)],
                   "textposition": "top center", "marker": {"size": 4, "color": "#111"}})
    traces.append({"type": "scatter3d", "mode": "markers", "name": "centre of mass", "x": [0.0], "y": [0.0],
                   "z": [0.0], "marker": {"size": 6, "color": "black", "symbol": "diamond"}})
    if np.any(np.abs(c0) > 1e-9 * reach):
        traces.append({"type": "scatter3d", "mode": "markers", "name": "geometric centre", "x": _round(c0[:1]),
                       "y": _round(c0[1:2]), "z": _round(c0[2:]), "marker": {"size": 5, "color": "#7f7f7f",
                                                                            "symbol": "cross"}})
    lim = 1.25 * (reach + radius)
    scene = _scene()
    scene.update(aspectmode="cube")
    for ax in ("xaxis", "yaxis", "zaxis"):
        scene[ax]["range"] = [-lim, lim]
    return traces, {"scene": scene, "legend": {"x": 0.0, "y": 1.0}, "title": {"text": "vehicle (body frame, FLU)"}}


def polytope_figures(platform) -> tuple[tuple[list[dict], dict], tuple[list[dict], dict] | None]:
    """The zero-moment force set ``F_B`` in 3D with the hover plane and its section, and the section alone
    (``None`` when the section is not a polygon): plotly traces and layouts, forces in N."""
    from .. import analysis

    P = analysis.zero_moment_polytope(platform)
    S = analysis.hover_section_polygon(platform)
    W = float(platform.weight)
    traces: list[dict] = []
    V = np.asarray(P.vertices, dtype=float).reshape(-1, 3)
    if P.dim == 3 and len(V) >= 4:
        from scipy.spatial import ConvexHull

        T = ConvexHull(V).simplices
        traces.append({"type": "mesh3d", "name": "F_B (zero moment)", "showlegend": True, "x": _round(V[:, 0]),
                       "y": _round(V[:, 1]), "z": _round(V[:, 2]), "i": T[:, 0].tolist(), "j": T[:, 1].tolist(),
                       "k": T[:, 2].tolist(), "color": "#ff7f0e", "opacity": 0.3, "flatshading": True})
    elif len(V) >= 2:
        seg = V[np.argsort(V[:, 2])]
        traces.append({"type": "scatter3d", "mode": "lines", "name": f"F_B ({P.reason or 'flat'})",
                       "x": _round(seg[:, 0]), "y": _round(seg[:, 1]), "z": _round(seg[:, 2]),
                       "line": {"color": "#ff7f0e", "width": 8}})
    if len(V):
        traces.append({"type": "scatter3d", "mode": "markers", "name": "vertices", "x": _round(V[:, 0]),
                       "y": _round(V[:, 1]), "z": _round(V[:, 2]), "marker": {"size": 2.5, "color": "#8c564b"}})
    lim = max(float(np.abs(V[:, :2]).max()) if len(V) else 0.0, 0.25 * W) * 1.15
    traces.append({"type": "mesh3d", "name": "hover plane f_z = m g", "showlegend": True,
                   "x": [-lim, lim, lim, -lim], "y": [-lim, -lim, lim, lim], "z": [W] * 4, "i": [0, 0], "j": [1, 2],
                   "k": [2, 3], "color": "#1f77b4", "opacity": 0.12})
    section = None
    SV = np.asarray(S.vertices, dtype=float).reshape(-1, 2)
    if S.dim == 2 and len(SV) >= 3:
        c = SV.mean(axis=0)
        ring = SV[np.argsort(np.arctan2(SV[:, 1] - c[1], SV[:, 0] - c[0]))]
        closed = np.vstack([ring, ring[:1]])
        traces.append({"type": "scatter3d", "mode": "lines", "name": "hover section", "x": _round(closed[:, 0]),
                       "y": _round(closed[:, 1]), "z": [W] * len(closed), "line": {"color": "#1f77b4", "width": 6}})
        section = ([{"type": "scatter", "mode": "lines", "fill": "toself", "name": "hover section",
                     "x": _round(closed[:, 0]), "y": _round(closed[:, 1]), "line": {"color": "#1f77b4"}},
                    {"type": "scatter", "mode": "markers", "name": "no lateral force", "x": [0.0], "y": [0.0],
                     "marker": {"color": "black", "symbol": "x", "size": 9}}],
                   {"xaxis": {"title": {"text": "f_x [N]"}, "zeroline": True},
                    "yaxis": {"title": {"text": "f_y [N]"}, "scaleanchor": "x", "zeroline": True},
                    "title": {"text": f"hover section, f_z = m g = {W:.4g} N"}})
    traces.append({"type": "scatter3d", "mode": "lines", "name": "weight m g", "x": [0, 0], "y": [0, 0],
                   "z": [0, W], "line": {"color": "black", "width": 4}})
    scene = _scene("f_x [N]", "f_y [N]", "f_z [N]", aspect="cube")
    zlo = min(0.0, float(V[:, 2].min()) if len(V) else 0.0)
    zhi = max(float(V[:, 2].max()) if len(V) else 0.0, 1.1 * W)
    scene["xaxis"]["range"] = [-lim, lim]
    scene["yaxis"]["range"] = [-lim, lim]
    scene["zaxis"]["range"] = [zlo, zhi]
    return (traces, {"scene": scene, "title": {"text": "zero-moment force set F_B and the hover plane"},
                     "legend": {"x": 0.0, "y": 1.0}}), section


def envelope_figure(envelope: dict) -> tuple[list[dict], dict]:
    """Polar plot of the largest hover tilt [deg] against the lean heading [deg] (the ``hover_envelope`` block)."""
    th = list(envelope["headings_deg"]) + envelope["headings_deg"][:1]
    r = list(envelope["max_tilt_deg"]) + envelope["max_tilt_deg"][:1]
    return ([{"type": "scatterpolar", "mode": "lines", "fill": "toself", "name": "max hover tilt", "theta": _round(th),
              "r": _round(r), "line": {"color": "#1f77b4"}}],
            {"polar": {"angularaxis": {"rotation": 90, "direction": "counterclockwise",
                                       "tickvals": [0, 90, 180, 270],
                                       "ticktext": ["nose down", "left down", "nose up", "right down"]},
                       "radialaxis": {"title": {"text": "deg"}}},
             "title": {"text": "largest hover tilt against the lean heading [deg]"}, "showlegend": False})


def _decimate(n: int, max_points: int) -> np.ndarray:
    step = max(1, int(math.ceil(n / max_points)))
    idx = np.arange(0, n, step)
    return idx if idx[-1] == n - 1 else np.append(idx, n - 1)


def _vee_error(R: np.ndarray, Rc: np.ndarray) -> np.ndarray:
    """``e_R = 1/2 (R_c^T R - R^T R_c)^vee`` [rad] per sample (``jaxrotor.metrics.orientation_error``)."""
    E = 0.5 * (np.einsum("tji,tjk->tik", Rc, R) - np.einsum("tji,tjk->tik", R, Rc))
    return np.stack([E[:, 2, 1], E[:, 0, 2], E[:, 1, 0]], axis=1)


def _flight_series(path: Path, max_points: int) -> dict:
    """Decimated curves of a saved flight (``trajectory.npz``): time, position, reference, errors, rotor speeds."""
    d = np.load(path)
    t = np.asarray(d["t"], dtype=float)
    keep = np.all(np.isfinite(d["p"]), axis=1)
    idx = _decimate(len(t), max_points)
    idx = idx[keep[idx]]
    out = {"t": t[idx], "p": d["p"][idx], "rotor_speed": d["rotor_speed"][idx]}
    if "p_ref" in d:
        out["p_ref"] = d["p_ref"][idx]
        out["e_p"] = out["p"] - out["p_ref"]
    if "R" in d:
        Rc = d["R_cmd"] if "R_cmd" in d else (d["R_ref"] if "R_ref" in d else None)
        if Rc is not None:
            out["e_R"] = _vee_error(d["R"][idx], Rc[idx])
    return out


def flight_figures(runs: dict[str, dict]) -> list[tuple[str, list[dict], dict, int]]:
    """``(id, traces, layout, height)`` of the flight figures of one or more runs (name -> :func:`_flight_series`):
    3D trajectory with the reference, position errors, attitude errors, rotor speeds."""
    dash = ["solid", "dash", "dot", "dashdot"]
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c"]
    first = next(iter(runs.values()))
    traj = []
    if "p_ref" in first:
        traj.append({"type": "scatter3d", "mode": "lines", "name": "reference", "x": _round(first["p_ref"][:, 0]),
                     "y": _round(first["p_ref"][:, 1]), "z": _round(first["p_ref"][:, 2]),
                     "line": {"color": "black", "width": 3, "dash": "dash"}})
    for k, (name, s) in enumerate(runs.items()):
        traj.append({"type": "scatter3d", "mode": "lines", "name": name, "x": _round(s["p"][:, 0]),
                     "y": _round(s["p"][:, 1]), "z": _round(s["p"][:, 2]),
                     "line": {"color": ["#d62728", "#9467bd", "#17becf"][k % 3], "width": 4}})
    pts = np.vstack([s["p"] for s in runs.values()] + ([first["p_ref"]] if "p_ref" in first else []))
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    scene = _scene(aspect="cube")  # equal scales on the three axes, a cube about the flight
    if len(pts):
        mid = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
        half = 0.55 * float(np.max(pts.max(axis=0) - pts.min(axis=0))) + 0.05
        for i, ax in enumerate(("xaxis", "yaxis", "zaxis")):
            scene[ax]["range"] = [float(mid[i] - half), float(mid[i] + half)]
    figs = [("fig-trajectory", traj, {"scene": scene, "title": {"text": "trajectory (world frame, z up)"},
                                      "legend": {"x": 0.0, "y": 1.0}}, 480)]
    for key, fid, title, unit in (("e_p", "fig-position-error", "position error p - p_ref", "m"),
                                  ("e_R", "fig-attitude-error", "attitude error e_R (body frame)", "rad")):
        tr = []
        for k, (name, s) in enumerate(runs.items()):
            if key not in s:
                continue
            for i, c in enumerate("xyz"):
                tr.append({"type": "scatter", "mode": "lines", "name": f"{c} ({name})" if len(runs) > 1 else c,
                           "x": _round(s["t"]), "y": _round(s[key][:, i]),
                           "line": {"color": colors[i], "dash": dash[k % 4], "width": 1.5}})
        if tr:
            figs.append((fid, tr, {"title": {"text": f"{title} [{unit}]"}, "xaxis": {"title": {"text": "t [s]"}},
                                   "yaxis": {"title": {"text": unit}, "exponentformat": "e"}}, 320))
    tr = []
    for k, (name, s) in enumerate(runs.items()):
        w = np.asarray(s["rotor_speed"], dtype=float)
        for i in range(w.shape[1]):
            tr.append({"type": "scatter", "mode": "lines", "name": f"ω{i + 1}" + (f" ({name})" if len(runs) > 1 else ""),
                       "x": _round(s["t"]), "y": _round(w[:, i]), "line": {"dash": dash[k % 4], "width": 1.5}})
    figs.append(("fig-rotor-speeds", tr, {"title": {"text": "rotor speeds ω_i [rad/s]"},
                                          "xaxis": {"title": {"text": "t [s]"}},
                                          "yaxis": {"title": {"text": "rad/s"}}}, 340))
    return figs


# ----------------------------------------------------------------------------------------------------------------
# Sections


def _vehicle_rows(a: dict) -> list[tuple[str, str]]:
    rows = [("platform", f"{_esc(a['name'])} ({_esc(a['label'])}, n = {_num('analysis.n_rotors', a['n_rotors'])})"),
            ("mass", _num("analysis.mass_kg", a["mass_kg"], 5, "kg")),
            ("weight m g", _num("analysis.weight_N", a["weight_N"], 5, "N")),
            ("CoM offset from geometric centre", _nums("analysis.com_offset", a["com_offset"], 4, "m")),
            ("inertia J (diagonal)", " / ".join(_num(f"analysis.inertia.{i}.{i}", a["inertia"][i][i])
                                                for i in range(3)) + " kg m²"),
            ("rotor spin inertia J_r", _nums("analysis.rotor_inertia", a["rotor_inertia"], 4, "kg m²")),
            ("thrust coefficient c_f", _nums("analysis.c_f", a["c_f"], 4, "N s²/rad²")),
            ("drag coefficient c_tau", _nums("analysis.c_tau", a["c_tau"], 4, "N m s²/rad²")),
            ("top rotor speed", _nums("analysis.rotor_speed_max", a["rotor_speed_max"], 4, "rad/s"))]
    if a["speed_limit"]:
        rows.append(("top speed limited by", _esc(", ".join(a["speed_limit"]))))
    rows.append(("built from parts", _esc(_fmt(a["from_parts"]))))
    if a["overrides"]:
        rows.append(("given explicitly", _esc(", ".join(a["overrides"]))))
    return rows


def _mass_section(a: dict) -> str:
    rows = _vehicle_rows(a)
    out = _table(rows)
    bd = a["mass_breakdown"]
    if bd:
        total = sum(bd.values())
        grid = [[_esc(k.replace("_", " ")), _num(f"analysis.mass_breakdown.{k}", v, 4, "kg"),
                 _esc(f"{100 * v / total:.1f} %") if total > 0 else "-"] for k, v in bd.items()]
        grid.append(["<b>sum of the parts</b>", _esc(f"{total:.5g} kg"), "100 %"])
        out += "<h3>mass by part</h3>" + _grid(["part", "mass", "share"], grid)
    else:
        out += '<p class="note">No mass breakdown: the vehicle is given as numbers (mass, inertia), not parts.</p>'
    if "sizing" in a:
        s = a["sizing"]
        out += "<h3>electrical sizing (static)</h3>" + _table(
            [(k.replace("_", " "), _num(f"analysis.sizing.{k}", v)) for k, v in s.items()
             if isinstance(v, (int, float)) or v is None])
    return out


def _allocation_section(a: dict) -> str:
    t = a["max_torque_at_hover_Nm"]
    rows = [("rank F / rank M / rank G", " / ".join(_num(f"analysis.{k}", a[k]) for k in ("rank_F", "rank_M",
                                                                                            "rank_G"))),
            ("rank of [thrust; torque] rows", _num("analysis.rank_thrust_torque", a["rank_thrust_torque"]) + " of 4"),
            ("fully actuated (rank G = 6)", _num("analysis.fully_actuated", a["fully_actuated"])),
            ("decoupling (D = F ker M)", f"{_esc(a['decoupling'])} (dim D = {_num('analysis.dim_D', a['dim_D'])})"),
            ("statically hoverable (bounds ignored)", _num("analysis.statically_hoverable",
                                                           a["statically_hoverable"])),
            ("level hover feasible within bounds", _num("analysis.level_hover_feasible", a["level_hover_feasible"])),
            ("hover input u_h", _nums("analysis.hover_u", a["hover_u"], 4, "rad²/s²") if a["hover_u"] else "-"),
            ("hover input / u_max (largest)", _num("analysis.hover_input_fraction", a["hover_input_fraction"], 3)),
            ("hover efficiency |Σ f| / Σ |f|", _num("analysis.hover_efficiency", a["hover_efficiency"])),
            ("thrust-to-weight (level, zero moment)", _num("analysis.thrust_to_weight", a["thrust_to_weight"])),
            ("nominal thrust-to-weight", _num("analysis.nominal_thrust_to_weight", a["nominal_thrust_to_weight"])),
            (f"lateral-force capability ({a['lateral_directions']} dirs)",
             _num("analysis.lateral_force_capability_N", a["lateral_force_capability_N"], 4, "N")),
            ("max torque at hover roll / pitch / yaw", " / ".join(
                _num(f"analysis.max_torque_at_hover_Nm.{k}", t[k]) for k in ("roll", "pitch", "yaw")) + " N m"),
            ("yaw authority", _num("analysis.yaw_authority", a["yaw_authority"], 4, "N m per N")),
            ("unreachable wrench axes", _esc(", ".join(a["unreachable_axes"]) or "none")),
            ("singular values of G_s", _nums("analysis.singular_values", a["singular_values"])),
            ("condition number σ₁/σ₆", _num("analysis.condition_number", a["condition_number"])),
            ("condition number on range(G)", _num("analysis.condition_number_range", a["condition_number_range"])),
            ("fail-safe (any one rotor lost)", _num("analysis.fail_safe", a["fail_safe"])),
            ("fail-safe within input bounds", _num("analysis.fail_safe_within_bounds", a["fail_safe_within_bounds"]))]
    out = _table(rows)
    loss = [[_esc(x["rotor"] + 1), _num(f"analysis.rotor_loss.{i}.hoverable", x["hoverable"]),
             _num(f"analysis.rotor_loss.{i}.margin", x["margin"], 3),
             _num(f"analysis.rotor_loss.{i}.thrust_to_weight", x["thrust_to_weight"], 3),
             _esc(x["outcome"].replace("_", " "))] for i, x in enumerate(a["rotor_loss"])]
    out += "<h3>single rotor loss</h3>" + _grid(
        ["rotor lost", "hoverable (some attitude)", "margin", "T/W (best attitude)", "level hover outcome"], loss)
    return out


def _polytope_rows(a: dict) -> str:
    rows = [("zero-moment force set volume", _num("analysis.zero_moment_force_volume",
                                                  a["zero_moment_force_volume"], 5, "N³")),
            ("hover section area (f_z = m g)", _num("analysis.hover_section_area", a["hover_section_area"], 5, "N²")),
            ("volume above hover (f_z ≥ m g)", _num("analysis.volume_above_hover", a["volume_above_hover"], 5, "N³")),
            ("force zonotope volume", _num("analysis.force_zonotope_volume", a["force_zonotope_volume"], 5, "N³")),
            ("moment set volume at hover", _num("analysis.hover_moment_volume", a["hover_moment_volume"], 5,
                                                "(N m)³"))]
    rows += [(f"note: {k.replace('_', ' ')}", _esc(v)) for k, v in a["polytope_notes"].items()]
    return _table(rows)


def _stability_section(s: dict) -> str:
    rows = [("verdict", f'<span data-key="analysis.stability.stable" data-value="{str(s["stable"]).lower()}" '
                        f'class="{"ok" if s["stable"] else "bad"}">{"stable" if s["stable"] else "UNSTABLE"}</span>'),
            ("setting", _esc(s["setting"])),
            ("max growth rate (largest Re s)", _num("analysis.stability.max_growth_rate", s["max_growth_rate"], 4,
                                                    "1/s")),
            ("frequency of that mode", _num("analysis.stability.frequency_hz", s["frequency_hz"], 4, "Hz")),
            ("axis (dominant state)", f"{_esc(s['axis'])} ({_esc(s['state'])})"),
            ("hover equilibrium found", _num("analysis.stability.equilibrium_found", s["equilibrium_found"])),
            ("neutral coordinates", _esc(", ".join(s["neutral"]) or "none"))]
    modes = [[_esc(i + 1), _num(f"analysis.stability.modes.{i}.growth_rate", m["growth_rate"]),
              _num(f"analysis.stability.modes.{i}.frequency_hz", m["frequency_hz"]),
              _num(f"analysis.stability.modes.{i}.damping", m["damping"], 3), _esc(m["axis"]), _esc(m["state"])]
             for i, m in enumerate(s["modes"])]
    return _table(rows) + "<h3>slowest modes</h3>" + _grid(
        ["mode", "growth rate Re s [1/s]", "frequency [Hz]", "damping", "axis", "dominant state"], modes)


def _envelope_rows(e: dict) -> str:
    ax = e["axis_tilt_deg"]
    rows = [("level hover margin (of input range)", _num("analysis.hover_envelope.level_margin", e["level_margin"],
                                                         3)),
            ("max hover tilt, every direction", _num("analysis.hover_envelope.min_max_tilt_deg",
                                                     e["min_max_tilt_deg"], 4, "deg")),
            ("max hover tilt, best direction", _num("analysis.hover_envelope.max_max_tilt_deg",
                                                    e["max_max_tilt_deg"], 4, "deg"))]
    rows += [(f"max {k.replace('_', ' ')}", _num(f"analysis.hover_envelope.axis_tilt_deg.{k}", v, 4, "deg"))
             for k, v in ax.items()]
    rows += [("lateral force at level hover, best / every direction",
              _num("analysis.hover_envelope.lateral_force_max", e["lateral_force_max"], 4, "N") + " / "
              + _num("analysis.hover_envelope.lateral_force_min", e["lateral_force_min"], 4, "N"))]
    return _table(rows)


#: Rows of the flight metrics table: (title, key, digits, unit).
METRIC_ROWS = (("mean |e_p| per axis", "mae_position_xyz", 4, "m"),
               ("max |e_p| per axis", "max_position_error_xyz", 4, "m"),
               ("rms e_p per axis", "rmse_position_xyz", 4, "m"),
               ("mean |e_R| per axis", "mae_orientation_xyz", 4, "rad"),
               ("max |e_R|", "max_orientation_error", 4, "rad"),
               ("mean total thrust / weight", "effort_ratio", 4, ""),
               ("energy (rotor power proxy)", "energy", 4, "J"),
               ("saturated fraction", "saturation_fraction", 4, ""),
               ("diverged", "diverged", 4, ""),
               ("duration", "duration", 4, "s"),
               ("solver steps", "num_steps", 4, ""))


def _metrics_grid(flights: list[tuple[str, str, dict]]) -> str:
    """The metrics of each flight, one column each: ``(column title, key prefix, metrics dict)``."""
    rows = []
    for title, key, digits, unit in METRIC_ROWS:
        cells = [_esc(title + (f" [{unit}]" if unit else ""))]
        for _, prefix, m in flights:
            if key not in m:
                cells.append("-")
            elif isinstance(m[key], list):
                cells.append(_nums(f"{prefix}.{key}", m[key], digits))
            else:
                cells.append(_num(f"{prefix}.{key}", m[key], digits))
        rows.append(cells)
    verdicts = ["verdict"]
    for _, prefix, m in flights:
        v = m.get("verdict", "ok")
        text = "ok" if v == "ok" else "FAILED: " + ", ".join(x if isinstance(x, str) else json.dumps(x) for x in v)
        verdicts.append(f'<span class="{"ok" if v == "ok" else "bad"}" data-key="{_esc(prefix)}.verdict" '
                        f'data-value="{_esc(json.dumps(v))}">{_esc(text)}</span>')
    rows.append(verdicts)
    return _grid(["metric"] + [t for t, _, _ in flights], rows)


# ----------------------------------------------------------------------------------------------------------------
# The page


@functools.lru_cache(maxsize=1)
def _plotly_js_gzip_b64() -> tuple[str, str]:
    """plotly.js (the bundle the plotly package ships), gzip-compressed and base64-encoded, and its version."""
    import plotly
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs().encode("utf-8")
    return base64.b64encode(gzip.compress(js, compresslevel=9, mtime=0)).decode("ascii"), plotly.__version__


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1180px;padding:0 16px 40px;
color:#222}
h1{font-size:1.5em;margin:18px 0 4px}h2{border-bottom:2px solid #ddd;padding-bottom:3px;margin-top:34px}
h3{font-size:1.02em;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0;font-size:.92em}th,td{padding:3px 10px;border-bottom:1px solid #eee;
text-align:left;vertical-align:top}table.kv th{font-weight:500;color:#444;width:330px}
table.grid thead th{background:#f4f4f4}.num{font-variant-numeric:tabular-nums}
.ok{color:#1a7f37;font-weight:600}.bad{color:#c62828;font-weight:600}.note{color:#666;font-size:.9em}
.fig{width:100%;border:1px solid #eee;margin:8px 0}.row{display:flex;gap:12px;flex-wrap:wrap}.row>div{flex:1 1 520px}
#status{padding:6px 10px;background:#fff8e1;border:1px solid #f0d98c;font-size:.9em;margin:8px 0}
#status.done{display:none}#status.failed{background:#fdecea;border-color:#e57373}
nav a{margin-right:12px}
"""

_JS = """
(function () {
  var status = document.getElementById('status');
  var t0 = performance.now();
  function fail(err) {
    var msg = (err && err.message) ? err.message : String(err);
    document.body.setAttribute('data-rendered', 'error: ' + msg);
    status.className = 'failed';
    status.textContent = 'The figures could not be drawn: ' + msg;
  }
  window.addEventListener('error', function (e) { fail(e.error || e.message); });
  async function loadPlotly() {
    if (typeof DecompressionStream === 'undefined') {
      throw new Error('this browser has no DecompressionStream (use a current Chromium, Firefox or Safari)');
    }
    var holder = document.getElementById('plotly-js-gz');
    var b64 = holder.textContent;
    holder.remove();
    var bytes;
    if (typeof Uint8Array.fromBase64 === 'function') {
      bytes = Uint8Array.fromBase64(b64);
    } else {
      var bin = atob(b64);
      bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    var text = await new Response(stream).text();
    var s = document.createElement('script');
    s.textContent = text;
    document.head.appendChild(s);
    s.remove();
    if (typeof Plotly === 'undefined') { throw new Error('plotly.js did not load'); }
  }
  async function draw() {
    await loadPlotly();
    document.body.setAttribute('data-plotly-ms', (performance.now() - t0).toFixed(0));
    var specs = document.querySelectorAll('script.figspec');
    var config = {displaylogo: false, responsive: true, showLink: false, showSendToCloud: false,
                  modeBarButtonsToRemove: ['sendDataToCloud'],
                  plotGlPixelRatio: Math.max(window.devicePixelRatio || 1, 1)};  // plotly's default 2 is 4x the pixels
    var n = 0;
    for (var k = 0; k < specs.length; k++) {
      var spec = JSON.parse(specs[k].textContent);
      var div = document.getElementById(specs[k].getAttribute('data-for'));
      var t1 = performance.now();
      await Plotly.newPlot(div, spec.data, spec.layout, config);
      div.setAttribute('data-draw-ms', (performance.now() - t1).toFixed(0));
      n += 1;
    }
    var ms = performance.now() - t0;
    document.body.setAttribute('data-render-ms', ms.toFixed(0));
    document.body.setAttribute('data-rendered', String(n));
    status.className = 'done';
    status.textContent = n + ' figures drawn in ' + ms.toFixed(0) + ' ms';
  }
  draw().catch(fail);
})();
"""


def render_html(analysis: dict, metrics: dict | None = None, validation: dict | None = None, *, platform=None,
                flights: dict[str, Path] | None = None, physics_npz: Path | None = None, title: str | None = None,
                source: str = "", max_points: int = MAX_POINTS) -> str:
    """The page: every section from the ``analyze --json`` object ``analysis``, the ``metrics.json`` object
    ``metrics`` and the physics layer's ``validation.json`` object ``validation``; the 3D figures of the vehicle
    and the force polytope from ``platform``; the flight figures from the saved flights ``flights``
    (name -> ``trajectory.npz``) and ``physics_npz`` (``trajectory_physics.npz``)."""
    a = analysis
    name = a["name"]
    sections: list[tuple[str, str, str]] = []
    figs_vehicle = ""
    figs_poly = ""
    if platform is not None:
        tr, lay = vehicle_figure(platform)
        figs_vehicle = _figure("fig-vehicle", tr, lay, 560)
        (ptr, play), section = polytope_figures(platform)
        figs_poly = '<div class="row"><div>' + _figure("fig-polytope", ptr, play, 520) + "</div>"
        if section is not None:
            figs_poly += "<div>" + _figure("fig-hover-section", section[0], section[1], 520) + "</div>"
        else:
            figs_poly += ('<div><p class="note">The hover section is not a polygon (area '
                          f'{_esc(_fmt(a["hover_section_area"]))} N²): '
                          f'{_esc(a["polytope_notes"].get("hover_section_area", ""))}</p></div>')
        figs_poly += "</div>"
    spin = ('<p class="note">Rotor discs: <span style="color:#1f77b4">■</span> counter-clockwise (κ = −1), '
            '<span style="color:#d62728">■</span> clockwise (κ = +1); green: spin axes z_i, the direction of each '
            'rotor\'s thrust. Drag to rotate, scroll to zoom.</p>')
    sections.append(("vehicle", "Vehicle", figs_vehicle + spin))
    sections.append(("polytope", "Force polytope and hover section", figs_poly + _polytope_rows(a)))
    sections.append(("mass", "Mass, inertia and rotors", _mass_section(a)))
    sections.append(("allocation", "Allocation properties", _allocation_section(a)))
    if a.get("stability"):
        sections.append(("stability", "Closed-loop stability (linearised about hover)", _stability_section(
            a["stability"])))
    env = a.get("hover_envelope")
    if env and env.get("level_hoverable"):
        etr, elay = envelope_figure(env)
        sections.append(("envelope", "Hover envelope", '<div class="row"><div>' + _figure("fig-envelope", etr, elay,
                                                                                         440)
                         + "</div><div>" + _envelope_rows(env) + "</div></div>"))
    elif env:
        sections.append(("envelope", "Hover envelope", '<p class="note">No level hover within the input bounds: '
                                                      "no envelope.</p>" + _envelope_rows(env)))
    if metrics is not None:
        cols = [(metrics["name"], "metrics", metrics)]
        if metrics.get("compare"):
            cols.append((metrics["compare"]["name"], "metrics.compare", metrics["compare"]))
        if validation is not None:
            cols.append((f"{validation['name']} (physics layer)", "physics", validation["metrics_physics"]))
        runs = {}
        for label, path in (flights or {}).items():
            runs[label] = _flight_series(path, max_points)
        if physics_npz is not None:
            phys = _flight_series(physics_npz, max_points)
            if flights and "p_ref" not in phys:  # the same reference, at the physics layer's sample times
                with np.load(next(iter(flights.values()))) as d:
                    if "p_ref" in d:
                        ref = np.stack([np.interp(phys["t"], d["t"], d["p_ref"][:, i]) for i in range(3)], axis=1)
                        phys["e_p"] = phys["p"] - ref
            runs["physics layer"] = phys
        body = _metrics_grid(cols)
        if validation is not None:
            body += _table([("max |Δω| (whole flight)", _num("physics.max_abs_delta_omega",
                                                              validation["max_abs_delta_omega"], 4, "rad/s")),
                            ("max |p_p − p_a|", _num("physics.max_position_difference",
                                                     validation["max_position_difference"], 4, "m"))])
        body += "".join(_figure(fid, tr, lay, h) for fid, tr, lay, h in flight_figures(runs)) if runs else ""
        sections.append(("flight", "Flight", body))
    nav = "".join(f'<a href="#{sid}">{_esc(t)}</a>' for sid, t, _ in sections)
    verdict = ""
    if metrics is not None:
        bad = [c for c in ([metrics] + ([metrics["compare"]] if metrics.get("compare") else []))
               if c.get("verdict", "ok") != "ok"]
        if validation is not None and validation["verdict_physics"] != "ok":
            bad.append({"name": f"{validation['name']} (physics layer)"})
        verdict = (f'<span class="{"bad" if bad else "ok"}">flight verdict: '
                   f'{"FAILED (" + ", ".join(_esc(b["name"]) for b in bad) + ")" if bad else "ok"}</span>')
    data = json.dumps(to_jsonable({"analysis": analysis, "metrics": metrics, "validation": validation}),
                      allow_nan=False, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    js_b64, version = _plotly_js_gzip_b64()
    body = "".join(f'<section id="{sid}"><h2>{_esc(t)}</h2>{content}</section>' for sid, t, content in sections)
    head_title = title or f"{name}: design report"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' "
        "'unsafe-eval' blob:; style-src 'unsafe-inline'; img-src data: blob:; worker-src blob:; "
        "connect-src data: blob:; font-src data:\">"
        f"<title>{_esc(head_title)}</title><style>{_CSS}</style></head>"
        f'<body data-rendered="pending"><h1>{_esc(head_title)}</h1>'
        f'<p>{_esc(a["label"])} · {_num("analysis.n_rotors", a["n_rotors"])} rotors · '
        f'{_num("analysis.mass_kg", a["mass_kg"], 5, "kg")}'
        + (f" · {_esc(source)}" if source else "") + (f" · {verdict}" if verdict else "") + "</p>"
        f'<div id="status">Drawing the figures (plotly.js {_esc(version)}, embedded)…</div><nav>{nav}</nav>{body}'
        f'<script type="application/json" id="report-data">{data}</script>'
        f'<script type="application/octet-stream" id="plotly-js-gz">{js_b64}</script>'
        f"<script>{_JS}</script></body></html>\n")


def build_report(config_path: str | Path, out_dir: str | Path | None = None, *, flight: bool = True,
                 physics: bool = False, t1: float | None = None, n_directions: int = 36, echo=print,
                 max_points: int = MAX_POINTS) -> ReportResult:
    """Analyse and fly CONFIG and write ``report.html`` (module docstring) into ``out_dir``.

    Args:
        config_path: a TOML file: a whole flight configuration (``[reference]``: analysed, its closed loop
            linearised and, with ``flight``, flown) or a platform alone (analysed only).
        out_dir: the folder (default ``./jaxrotor-out/<name>-report/``, :func:`output_dir`). Besides
            ``report.html`` it receives ``analysis.json`` (the ``jaxrotor analyze CONFIG --json`` object) and,
            for a flight, what ``jaxrotor simulate CONFIG --out DIR`` writes (``metrics.json``,
            ``trajectory.npz``, the PNG figures) and with ``physics`` ``validation/`` (``jaxrotor validate``:
            ``validation.json``, ``trajectory_physics.npz``).
        flight: fly the configuration (:func:`jaxrotor.workflows.usecase.run`).
        physics: also fly it on the physics layer (:func:`jaxrotor.workflows.validate.validate`).
        t1: end the flight(s) at this time [s] (``jaxrotor simulate --t1``); ``None``: the configuration's.
        n_directions: horizontal directions of the lateral-force capability (``analyze --directions``).
        echo: where the flight's table and progress lines go.
        max_points: most samples per flight curve drawn.

    Raises:
        jaxrotor.io.toml.ConfigError: the configuration is invalid.
        ValueError: the closed loop cannot be set up (what :func:`jaxrotor.fly` refuses).
    """
    t_start = time.perf_counter()
    platform, conf = _load(config_path)
    if conf is not None and t1 is not None:
        conf = conf.with_t1(t1)
    name = conf.name if conf is not None else platform.name
    out = output_dir(name, out_dir)
    out.mkdir(parents=True, exist_ok=True)
    payload, _, stability = analysis_payload(platform, conf, n_directions)
    (out / "analysis.json").write_text(json.dumps(payload, ensure_ascii=False, allow_nan=False))
    metrics = validation = None
    flights: dict[str, Path] = {}
    physics_npz = None
    if conf is not None and flight:
        from ..analysis import closed_loop_stability
        from . import usecase

        reports = {conf.name: stability} if stability is not None else {}
        if conf.compare is not None:
            try:
                reports[conf.compare.name] = closed_loop_stability(conf.compare.platform, conf.compare.controller,
                                                                   conf.compare.flight)
            except Exception as err:  # a diagnostic only, as `jaxrotor simulate` treats it
                echo(f"note: closed-loop stability (comparison) not computed ({type(err).__name__}: {err})")
        metrics = usecase.run(conf, out, progress=False, echo=echo, physics=False, stability=reports)
        flights[conf.name] = out / "trajectory.npz"
        if conf.compare is not None and (out / f"trajectory_{conf.compare.name}.npz").exists():
            flights[conf.compare.name] = out / f"trajectory_{conf.compare.name}.npz"
        if physics:
            from . import validate

            validation = validate.validate(conf, out / "validation", echo=echo, figures=False, stability=stability)
            physics_npz = out / "validation" / "trajectory_physics.npz"
    page = render_html(payload, metrics, validation, platform=platform, flights=flights, physics_npz=physics_npz,
                       source=str(config_path), max_points=max_points)
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return ReportResult(path=path, analysis=payload, metrics=metrics, validation=validation,
                        build_time_s=time.perf_counter() - t_start)
