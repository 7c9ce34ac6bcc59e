"""A to-scale drawing of a vehicle from its parts: a top view (x-y) and a side view (x-z).

Every part is drawn as the orthographic projection of the solid
:mod:`jaxrotor.design.parts` models it as (the same solids its mass properties and the
physics layer's MJCF come from): the hub cylinder, each arm's cylinder from the hub's rim
to its tip, the motor cylinders below the rotor hubs, the propeller discs (diameter ``D``,
in the rotor plane: a circle seen along the spin axis, an ellipse or a line otherwise; blue
counter-clockwise, red clockwise, as :data:`jaxrotor.io.design_plot.SPIN_COLORS`), the
battery and ballast boxes, the payload point, the landing-gear legs with their feet, the
geometric centre ``+`` and the centre of mass. Coordinates are body axes (FLU) about the
frame's geometric centre, in metres, with equal scales on both axes of both views. Nearer
parts are drawn over farther ones (top view: seen from above; side view: seen from the
right-hand side, ``-y``, looking along ``+y``).

A platform without parts is drawn (hubs, spin axes, rotor discs, about the centre of mass)
only when a propeller diameter is given: without one there is nothing to scale the rotors by,
and :func:`save_vehicle_figure` writes nothing and says why.

Figures are built on matplotlib's Agg canvas directly (no ``pyplot``), as in
:mod:`jaxrotor.io.design_plot`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Polygon

from ..design.platform import Platform, geometric_rotor_positions, rotor_axes
from .design_plot import SPIN_COLORS

__all__ = ["draw_vehicle", "save_vehicle_figure", "vehicle_figure_path", "NO_DRAWING"]

#: Why a platform without parts and without a propeller diameter is not drawn.
NO_DRAWING = ("no vehicle drawing: the platform has no parts and no propeller diameter "
              "(mass and inertia were given as numbers), so nothing sets its scale")

_COLORS = {"hub": "0.45", "arms": "0.25", "motors": "0.1", "battery": "tab:olive", "payload": "tab:purple",
           "landing_gear": "tab:brown", "ballast": "tab:cyan", "com": "k"}
#: (horizontal, vertical, depth towards the viewer) body axes of each view.
_VIEWS = {"top": (0, 1, 2, 1.0), "side": (0, 2, 1, -1.0)}
_N = 40  # points per circle


def _hull(pts: np.ndarray) -> np.ndarray:
    """Convex hull of 2D points, counter-clockwise (Andrew's monotone chain)."""
    p = np.unique(np.round(pts, 12), axis=0)
    if len(p) < 3:
        return p
    p = [tuple(q) for q in p.tolist()]

    def half(points):
        h: list[tuple[float, float]] = []
        for q in points:
            while len(h) >= 2 and ((h[-1][0] - h[-2][0]) * (q[1] - h[-2][1])
                                   - (h[-1][1] - h[-2][1]) * (q[0] - h[-2][0])) <= 0:
                h.pop()
            h.append(q)
        return h[:-1]

    return np.array(half(p) + half(p[::-1]))


def _basis(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(a, z)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(z, e1)


def _circle(c: np.ndarray, axis: np.ndarray, r: float) -> np.ndarray:
    """``(_N, 3)`` points of the circle of radius ``r`` about ``c`` normal to ``axis``."""
    e1, e2 = _basis(axis / np.linalg.norm(axis))
    t = np.linspace(0, 2 * np.pi, _N, endpoint=False)
    return c + r * (np.cos(t)[:, None] * e1 + np.sin(t)[:, None] * e2)


def _cylinder(a: np.ndarray, b: np.ndarray, r: float) -> np.ndarray:
    """Points whose convex hull is the solid cylinder of radius ``r`` from ``a`` to ``b``."""
    axis = b - a
    if np.linalg.norm(axis) < 1e-12:
        axis = np.array([0.0, 0.0, 1.0])
    return np.concatenate([_circle(a, axis, r), _circle(b, axis, r)])


def _box(c: np.ndarray, size: np.ndarray) -> np.ndarray:
    s = np.array([[i, j, k] for i in (-0.5, 0.5) for j in (-0.5, 0.5) for k in (-0.5, 0.5)])
    return c + s * size


class _Solid:
    """One convex solid (its points), drawn in every view as the hull of their projection."""

    def __init__(self, pts, kind, face, edge=None, alpha=0.9, lw=0.8, hull=True):
        self.pts, self.kind, self.face, self.edge = np.asarray(pts, float), kind, face, edge or face
        self.alpha, self.lw, self.hull = alpha, lw, hull

    def draw(self, ax, view: str, depth_scale: float):
        h, v, d, sign = _VIEWS[view]
        xy = self.pts[:, [h, v]]
        poly = _hull(xy) if self.hull else xy
        z = 3 + sign * float(np.mean(self.pts[:, d])) / depth_scale  # nearer on top
        if len(poly) < 3:  # seen edge-on
            ax.plot(xy[:, 0], xy[:, 1], color=self.edge, lw=max(self.lw, 1.5), zorder=z)
            return
        ax.add_patch(Polygon(poly, closed=True, facecolor=to_rgba(self.face, self.alpha),
                             edgecolor=to_rgba(self.edge, max(self.alpha, 0.7)), lw=self.lw, zorder=z))


def _parts_solids(platform: Platform) -> tuple[list[_Solid], list[tuple[np.ndarray, str, str]]]:
    """The solids of a platform with parts (about the geometric centre) and its marked points."""
    parts = platform.parts
    pos = np.asarray(geometric_rotor_positions(platform), dtype=float)
    z = np.asarray(rotor_axes(platform), dtype=float)
    kappa = np.asarray(platform.kappa, dtype=float)
    f = float
    hub, arm, mot, prop = parts.hub, parts.arm, parts.motor, parts.propeller
    r_hub, h_hub = f(hub.radius), f(hub.height)
    solids = [_Solid(_cylinder(np.array([0, 0, -h_hub / 2]), np.array([0, 0, h_hub / 2]), r_hub), "hub",
                     _COLORS["hub"], "0.2")]
    tips = pos if not platform.arms else np.stack([pos[list(g)].mean(axis=0) for g in platform.arms])
    for tip in tips:
        dist = np.linalg.norm(tip)
        start = tip / dist * r_hub
        if dist > r_hub:
            solids.append(_Solid(_cylinder(start, tip, f(arm.radius)), "arms", _COLORS["arms"]))
    for i in range(pos.shape[0]):
        solids.append(_Solid(_cylinder(pos[i] - f(mot.height) * z[i], pos[i], f(mot.radius)), "motors",
                             _COLORS["motors"], alpha=0.95))
        c = SPIN_COLORS[1 if kappa[i] > 0 else -1]
        solids.append(_Solid(_circle(pos[i], z[i], f(prop.diameter) / 2), "propellers", c, c, alpha=0.22, lw=1.2,
                             hull=False))
    if parts.battery is not None:
        b = parts.battery
        solids.append(_Solid(_box(np.asarray(b.offset, float), np.asarray(b.size, float)), "battery",
                             _COLORS["battery"], "darkolivegreen", alpha=0.8))
    if parts.ballast is not None and f(parts.ballast.mass) > 0:
        bl = parts.ballast
        solids.append(_Solid(_box(np.asarray(bl.offset, float), np.asarray(bl.size, float)), "ballast",
                             _COLORS["ballast"], "teal", alpha=0.8))
    if parts.landing_gear is not None:
        g = parts.landing_gear
        for k in range(g.legs):
            az = math.pi / g.legs + 2 * math.pi * k / g.legs
            x, y = f(g.radius) * math.cos(az), f(g.radius) * math.sin(az)
            top, bottom = np.array([x, y, -h_hub / 2]), np.array([x, y, -h_hub / 2 - f(g.length)])
            solids.append(_Solid(_cylinder(top, bottom, f(g.leg_radius)), "landing_gear", _COLORS["landing_gear"]))
            foot = bottom + f(g.foot_radius) * np.concatenate([_circle(np.zeros(3), e, 1.0) for e in np.eye(3)])
            solids.append(_Solid(foot, "landing_gear", _COLORS["landing_gear"]))
    points = []
    if parts.payload is not None:
        points.append((np.asarray(parts.payload.offset, float), "payload",
                       f"payload {f(parts.payload.mass):.3g} kg"))
    return solids, points


def _rotor_solids(platform: Platform, diameter: float) -> list[_Solid]:
    """Rotor discs of ``diameter`` at the hubs (about the centre of mass) of a platform without parts."""
    pos = np.asarray(geometric_rotor_positions(platform), dtype=float)
    z = np.asarray(rotor_axes(platform), dtype=float)
    out = []
    for i in range(pos.shape[0]):
        c = SPIN_COLORS[1 if float(platform.kappa[i]) > 0 else -1]
        out.append(_Solid(_circle(pos[i], z[i], diameter / 2), "propellers", c, c, alpha=0.22, lw=1.2, hull=False))
    return out


def draw_vehicle(platform: Platform, *, prop_diameter: float | None = None, fig: Figure | None = None) -> Figure | None:
    """Top view (x-y) and side view (x-z) of a vehicle, to scale.

    Args:
        platform: the design (concrete). With parts every part is drawn about the geometric centre
            and the centre of mass is marked; without parts the hubs, spin axes and rotor discs about
            the centre of mass.
        prop_diameter: propeller diameter [m] for a platform without parts (ignored with parts,
            whose propeller gives it).
        fig: a figure to draw in; default a new one on the Agg canvas, sized to the vehicle.

    Returns:
        the figure, or ``None`` for a platform without parts and without ``prop_diameter``
        (:data:`NO_DRAWING`).
    """
    parts = platform.parts
    if parts is None and prop_diameter is None:
        return None
    pos = np.asarray(geometric_rotor_positions(platform), dtype=float)
    z = np.asarray(rotor_axes(platform), dtype=float)
    if parts is not None:
        solids, points = _parts_solids(platform)
        com = np.zeros(3) if platform.com_offset is None else np.asarray(platform.com_offset, dtype=float)
        D = float(parts.propeller.diameter)
    else:
        D = float(prop_diameter)
        solids, points, com = _rotor_solids(platform, D), [], np.zeros(3)
    allpts = np.concatenate([s.pts for s in solids] + [pos, com[None], np.zeros((1, 3))]
                            + [p[None] for p, _, _ in points])
    lo, hi = allpts.min(axis=0), allpts.max(axis=0)
    pad = 0.08 * float(np.max(hi - lo)) + 1e-3
    lo, hi = lo - pad, hi + pad
    depth_scale = 10 * float(np.max(hi - lo))
    span = hi - lo
    # axes placed in inches so that both views share one scale: W inches per span[0] metres
    W, left, right, top, gap, bottom = 5.6, 0.8, 3.4, 0.75, 0.75, 0.6
    h_top, h_side = W * span[1] / span[0], W * span[2] / span[0]
    fw, fh = left + W + right, top + h_top + gap + h_side + bottom
    if fig is None:
        fig = Figure(figsize=(fw, fh))
        FigureCanvasAgg(fig)
    else:
        fw, fh = fig.get_size_inches()
    axes = {"top": fig.add_axes((left / fw, (bottom + h_side + gap) / fh, W / fw, h_top / fh)),
            "side": fig.add_axes((left / fw, bottom / fh, W / fw, h_side / fh))}
    for view, ax in axes.items():
        h, v, d, sign = _VIEWS[view]
        for s in solids:
            s.draw(ax, view, depth_scale)
        stacks: dict[tuple, list[int]] = {}  # rotors seen at one spot (a coaxial pair from above), nearest first
        for i in sorted(range(pos.shape[0]), key=lambda i: -sign * pos[i, d]):
            stacks.setdefault(tuple(np.round(pos[i, [h, v]] / max(float(span[0]), 1e-9), 4)), []).append(i)
            a, b = pos[i], pos[i] + 0.5 * D * z[i]  # spin axis, D/2 long
            ax.annotate("", xy=(b[h], b[v]), xytext=(a[h], a[v]), zorder=8,
                        arrowprops=dict(arrowstyle="->", color="0.3", lw=0.9))
            if view == "side" and parts is None:
                ax.plot([a[h]], [a[v]], "o", color="0.3", ms=4, zorder=8)
        if view == "top":
            for idx in stacks.values():
                a = pos[idx[0]]
                ax.text(a[h], a[v], "/".join(str(i + 1) for i in idx), fontsize=8, ha="center", va="center",
                        color="white", fontweight="bold", zorder=9,
                        bbox=dict(boxstyle="round,pad=0.2", fc="0.3", ec="none", alpha=0.8))
        if parts is None:
            for i in range(pos.shape[0]):
                ax.plot([0, pos[i, h]], [0, pos[i, v]], color="0.6", lw=1, ls="--", zorder=1)
        for p, kind, text in points:
            ax.plot([p[h]], [p[v]], "D", color=_COLORS[kind], ms=6, mec="k", zorder=9)
            ax.annotate(text, (p[h], p[v]), xytext=(6, -10), textcoords="offset points", fontsize=7,
                        color=_COLORS[kind], zorder=9)
        if parts is not None:
            ax.plot([0], [0], "+", color="k", ms=9, mew=1.2, zorder=10)
        ax.plot([com[h]], [com[v]], "o", ms=9, mfc="yellow", mec="k", mew=1.2, zorder=11)
        ax.plot([com[h]], [com[v]], "x", ms=6, color="k", mew=1.2, zorder=12)
        ax.set_xlim(lo[h], hi[h])
        ax.set_ylim(lo[v], hi[v])
        ax.set_aspect("equal", adjustable="box")
        ax.grid(alpha=0.25)
        names = "xyz"
        ax.set_xlabel(f"{names[h]} [m]")
        ax.set_ylabel(f"{names[v]} [m]")
    axes["top"].set_title("top view (from above; x forward, y left)", fontsize=9)
    axes["side"].set_title("side view (from the right, -y; x forward, z up)", fontsize=9)
    kinds = list(dict.fromkeys(s.kind for s in solids if s.kind != "propellers")) + [k for _, k, _ in points]
    handles = [Patch(facecolor=_COLORS[k], edgecolor="k", lw=0.5, label=k.replace("_", " ")) for k in kinds]
    handles += [Patch(facecolor=SPIN_COLORS[-1], alpha=0.35, label=f"propeller CCW (D = {D * 1e3:.0f} mm)"),
                Patch(facecolor=SPIN_COLORS[1], alpha=0.35, label="propeller CW"),
                *([Line2D([], [], marker="+", color="k", ls="none", label="geometric centre")] if parts is not None
                  else []),
                Line2D([], [], marker="o", mfc="yellow", mec="k", ls="none",
                       label=f"centre of mass ({', '.join(f'{1e3 * x + 0.0:+.1f}' for x in np.round(com, 4))}) mm")]
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=((left + W + 0.25) / fw, 1 - top / fh),
               fontsize=8, framealpha=0.9)
    what = "parts to scale, about the geometric centre" if parts is not None else \
        f"no parts: hubs and rotor discs (D = {D:g} m given), about the centre of mass"
    fig.suptitle(f"{platform.name}   m = {float(platform.mass):.3g} kg\n{what}", fontsize=10)
    return fig


def vehicle_figure_path(platform: Platform, out_dir: str | Path) -> Path:
    """``out_dir/<name>_vehicle.png`` (the name made file-safe as in :func:`jaxrotor.io.design_plot.save_figures`)."""
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in platform.name) or "platform"
    return Path(out_dir) / f"{stem}_vehicle.png"


def save_vehicle_figure(platform: Platform, out_dir: str | Path, *, prop_diameter: float | None = None,
                        dpi: int = 130) -> Path | None:
    """Write ``<name>_vehicle.png`` (:func:`draw_vehicle`) into ``out_dir`` (created if missing).

    Returns:
        the path, or ``None`` when there is nothing to draw to scale (:data:`NO_DRAWING`).
    """
    fig = draw_vehicle(platform, prop_diameter=prop_diameter)
    if fig is None:
        return None
    path = vehicle_figure_path(platform, out_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path
