"""Pictures of a design: a 3D drawing of the vehicle and the force sets it can produce.

Figures are built on matplotlib's Agg canvas directly (no ``pyplot``, no change of
the global backend), so they work headless and inside other applications.

* :func:`draw_design`: body, arms, rotor discs (blue counter-clockwise, red
  clockwise, with a curved arrow showing the spin), spin axes as arrows, rotor
  numbers (1-based), and the body frame ``x_B`` (red), ``y_B`` (green), ``z_B`` (blue).
* :func:`draw_force_sets`: left, the zero-moment force set
  ``{F u : M u = 0, u_min <= u <= u_max}`` in the body frame with the weight to
  balance; right, the lateral forces available while hovering level
  (``F u = [f_x, f_y, m g]``, ``M u = 0``) with the lateral-force capability circle.
* :func:`save_figures`: both, as PNG files in a folder.

The to-scale top and side views of a vehicle built from parts are :mod:`jaxrotor.io.vehicle_plot`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from mpl_toolkits.mplot3d import Axes3D  # noqa: F401  (registers the 3d projection)
from mpl_toolkits.mplot3d.art3d import Poly3DCollection

from .. import analysis
from ..design.platform import Platform, rotor_axes, rotor_positions

__all__ = ["draw_design", "draw_force_sets", "save_figures", "SPIN_COLORS"]

#: Disc colours by spin direction ``kappa``: -1 counter-clockwise, +1 clockwise.
SPIN_COLORS = {-1: "tab:blue", 1: "tab:red"}


def _perp_basis(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors ``e1, e2`` with ``e1 x e2 = z``."""
    a = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(a, z)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(z, e1)


def _default_prop_radius(pos: np.ndarray, L: float) -> float:
    xy = pos[:, :2]
    d = np.linalg.norm(xy[:, None, :] - xy[None, :, :], axis=-1)
    d = d[d > 1e-6 * max(L, 1e-9)]
    near = float(d.min()) if d.size else L
    return float(min(0.45 * near, 0.5 * L))


def draw_design(
    platform: Platform,
    *,
    alpha=None,
    beta=None,
    prop_radius: float | None = None,
    fig: Figure | None = None,
) -> Figure:
    """3D drawing of a design in its body frame.

    Args:
        platform: the design.
        alpha: optional cant angle(s) [rad] of a tilting platform (shape of ``platform.alpha``).
        beta: optional dihedral angle(s) [rad] (shape of ``platform.beta``).
        prop_radius: rotor disc radius [m]; default half the parts' propeller diameter, or without
            parts 45 % of the smallest horizontal hub spacing (at most half the mean arm length).
        fig: a figure to draw in; default a new 7 x 6 inch figure on the Agg canvas.

    Returns:
        the figure (save it with ``fig.savefig(path)``).
    """
    pos = np.asarray(rotor_positions(platform), dtype=float)
    z = np.asarray(rotor_axes(platform, alpha, beta), dtype=float)
    kappa = np.asarray(platform.kappa, dtype=float)
    L = float(np.mean(np.linalg.norm(pos, axis=1)))
    if prop_radius is not None:
        R = float(prop_radius)
    elif platform.parts is not None:  # the propeller's own size
        R = float(platform.parts.propeller.diameter) / 2
    else:
        R = _default_prop_radius(pos, L)
    if fig is None:
        fig = Figure(figsize=(7, 6))
        FigureCanvasAgg(fig)
    ax = fig.add_subplot(projection="3d")

    # body: a disc in the x-y plane
    th = np.linspace(0, 2 * np.pi, 48)
    rb = 0.22 * L
    ax.add_collection3d(Poly3DCollection([np.stack([rb * np.cos(th), rb * np.sin(th), 0 * th], 1)],
                                         facecolor="0.55", edgecolor="0.3", alpha=0.6))
    # arms: to each hub; rotors stacked on one spot (coaxial pairs) share one arm and a mast
    key = np.round(pos[:, :2] / max(L, 1e-9), 6)
    groups: dict[tuple, list[int]] = {}
    for i, k in enumerate(map(tuple, key)):
        groups.setdefault(k, []).append(i)
    for idx in groups.values():
        end = pos[idx].mean(axis=0)
        ax.plot([0, end[0]], [0, end[1]], [0, end[2]], color="0.35", lw=3, solid_capstyle="round")
        if len(idx) > 1:
            lo, hi = pos[idx].min(axis=0), pos[idx].max(axis=0)
            ax.plot([lo[0], hi[0]], [lo[1], hi[1]], [lo[2], hi[2]], color="0.35", lw=3)
    for i in range(pos.shape[0]):
        p, zi = pos[i], z[i]
        color = SPIN_COLORS[1 if kappa[i] > 0 else -1]
        e1, e2 = _perp_basis(zi)
        ring = p + R * (np.cos(th)[:, None] * e1 + np.sin(th)[:, None] * e2)
        ax.add_collection3d(Poly3DCollection([ring], facecolor=color, edgecolor=color, alpha=0.18))
        ax.quiver(*p, *(0.5 * L * zi), color=color, arrow_length_ratio=0.25, lw=1.5)
        # spin direction: a 300-degree arc about z_i with an arrowhead (CCW = positive about z_i)
        sgn = -1.0 if kappa[i] > 0 else 1.0
        ang = sgn * np.linspace(0, 5 * np.pi / 3, 30)
        r_arc = 0.7 * R
        arc = p + r_arc * (np.cos(ang)[:, None] * e1 + np.sin(ang)[:, None] * e2)
        ax.plot(arc[:, 0], arc[:, 1], arc[:, 2], color=color, lw=1.2)
        tangent = sgn * (-np.sin(ang[-1]) * e1 + np.cos(ang[-1]) * e2)
        ax.quiver(*arc[-1], *(0.35 * R * tangent), color=color, arrow_length_ratio=0.8, lw=1.2)
        lbl = p + 1.15 * R * (p / max(np.linalg.norm(p), 1e-9))
        ax.text(*lbl, f"{i + 1}", color=color, fontsize=9, ha="center", va="center", fontweight="bold")

    # body frame
    for v, c, name in ((np.eye(3)[0], "red", "$x_B$"), (np.eye(3)[1], "green", "$y_B$"), (np.eye(3)[2], "blue", "$z_B$")):
        ax.quiver(0, 0, 0, *(0.45 * L * v), color=c, arrow_length_ratio=0.2, lw=2)
        ax.text(*(0.5 * L * v + 0.06 * L * np.array([1.0, -1.0, 0.3])), name, color=c, fontsize=10)

    lim = float(np.max(np.abs(pos))) + R
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_zlim(-lim, lim)
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(elev=28, azim=-60)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.legend(handles=[Patch(color=SPIN_COLORS[-1], alpha=0.5, label="CCW (kappa = -1)"),
                       Patch(color=SPIN_COLORS[1], alpha=0.5, label="CW (kappa = +1)")], loc="upper left", fontsize=8)
    ax.set_title(f"{platform.name}   {platform.label()}   n = {pos.shape[0]}")
    return fig


def _hull_faces(pts: np.ndarray):
    """Triangles of the convex hull of 3D points, or None if degenerate."""
    try:
        from scipy.spatial import ConvexHull, QhullError
    except ImportError:  # pragma: no cover
        return None
    try:
        hull = ConvexHull(pts)
    except (QhullError, ValueError):
        return None
    return [pts[s] for s in hull.simplices]


def draw_force_sets(
    platform: Platform,
    *,
    alpha=None,
    beta=None,
    report: analysis.ActuationReport | None = None,
    n_directions: int = 72,
) -> Figure:
    """Force sets available at hover.

    Left: the zero-moment force set ``{F u : M u = 0, u_min <= u <= u_max}`` (body
    frame [N]; a segment along ``z_B`` for a flat design, a polytope for a fully
    actuated one), with the weight ``m g z_B`` to balance at level attitude. Right:
    the lateral forces available while hovering level
    (:func:`jaxrotor.analysis.lateral_force_set`), with the circle of radius equal
    to the lateral-force capability.

    Args:
        platform: the design.
        alpha: optional cant angle(s) [rad] (shape of ``platform.alpha``).
        beta: optional dihedral angle(s) [rad] (shape of ``platform.beta``).
        report: an existing :class:`~jaxrotor.analysis.ActuationReport` (for the capability);
            computed if omitted.
        n_directions: sampling of the set boundaries.

    Returns:
        the figure.
    """
    if report is None:
        report = analysis.analyze(platform, alpha, beta)
    W = report.weight_N
    fig = Figure(figsize=(12, 5.5))
    FigureCanvasAgg(fig)

    ax = fig.add_subplot(1, 2, 1, projection="3d")
    pts = analysis.zero_moment_force_set(platform, alpha, beta, n_directions=max(n_directions, 60))
    if pts.shape[0] == 0:
        ax.text2D(0.05, 0.9, "unbounded (u_max = inf) or infeasible", transform=ax.transAxes)
        pts = np.zeros((1, 3))
    faces = _hull_faces(pts) if report.dim_D == 3 else None
    if faces is not None:
        ax.add_collection3d(Poly3DCollection(faces, facecolor="tab:orange", edgecolor="tab:orange", alpha=0.15, lw=0.3))
    elif report.dim_D == 2 and pts.shape[0] > 2:
        ax.add_collection3d(Poly3DCollection([pts], facecolor="tab:orange", edgecolor="tab:orange", alpha=0.3))
    else:
        seg = np.concatenate([pts, np.zeros((1, 3))])
        ax.plot(seg[:, 0], seg[:, 1], seg[:, 2], color="tab:orange", lw=4)
    ax.scatter(pts[:, 0], pts[:, 1], pts[:, 2], color="tab:orange", s=4)
    ax.quiver(0, 0, 0, 0, 0, W, color="k", arrow_length_ratio=0.1, lw=2)
    lim_xy = max(float(np.max(np.abs(pts[:, :2]))), 0.25 * W) * 1.15
    ax.text(0.15 * lim_xy, 0, W, "m g (level hover)", fontsize=9)
    z_lo, z_hi = min(0.0, float(pts[:, 2].min())), max(float(pts[:, 2].max()), 1.1 * W)
    ax.set_xlim(-lim_xy, lim_xy)
    ax.set_ylim(-lim_xy, lim_xy)
    ax.set_zlim(z_lo, z_hi)
    ax.set_box_aspect((1, 1, 1.2))
    ax.set_xlabel("$f_x$ [N]")
    ax.set_ylabel("$f_y$ [N]")
    ax.set_zlabel("$f_z$ [N]")
    ax.set_title(f"zero-moment force set (dim D = {report.dim_D}, {report.decoupling})", fontsize=10)

    ax2 = fig.add_subplot(1, 2, 2)
    lat = analysis.lateral_force_set(platform, alpha, beta, n_directions=n_directions) if report.level_hover_feasible \
        else np.zeros((0, 2))
    cap = report.lateral_force_capability_N
    extent = float(np.max(np.abs(lat))) if lat.size else 0.0
    if lat.shape[0] and extent > 1e-9 * W:
        closed = np.concatenate([lat, lat[:1]])
        ax2.fill(closed[:, 0], closed[:, 1], color="tab:orange", alpha=0.25, label="available lateral force")
        ax2.plot(closed[:, 0], closed[:, 1], color="tab:orange", lw=1)
        if np.isfinite(cap):
            t = np.linspace(0, 2 * np.pi, 200)
            ax2.plot(cap * np.cos(t), cap * np.sin(t), "k--", lw=1, label=f"capability {cap:.2f} N")
        lim2 = 1.15 * extent
    else:
        msg = "level hover infeasible within the input bounds" if not report.level_hover_feasible else \
            "no lateral force at level hover\n(all spin axes parallel: the body must tilt to push sideways)"
        ax2.text(0.5, 0.6, msg, transform=ax2.transAxes, ha="center", fontsize=10)
        lim2 = 0.1 * W
    ax2.plot([0], [0], "k+", ms=10)
    ax2.set_xlim(-lim2, lim2)
    ax2.set_ylim(-lim2, lim2)
    ax2.set_aspect("equal")
    ax2.grid(alpha=0.3)
    ax2.set_xlabel("$f_x$ [N] (body, forward)")
    ax2.set_ylabel("$f_y$ [N] (body, left)")
    ax2.set_title(f"lateral force at level hover, $f_z$ = m g = {W:.1f} N, zero moment", fontsize=10)
    if ax2.get_legend_handles_labels()[0]:
        ax2.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{platform.name}   {platform.label()}")
    fig.tight_layout()
    return fig


def save_figures(
    platform: Platform,
    out_dir: str | Path,
    *,
    alpha=None,
    beta=None,
    report: analysis.ActuationReport | None = None,
    dpi: int = 110,
) -> list[Path]:
    """Write ``<name>_design.png`` (:func:`draw_design`) and ``<name>_force_set.png``
    (:func:`draw_force_sets`) into ``out_dir`` (created if missing).

    Returns:
        the two paths.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in platform.name) or "platform"
    p1, p2 = out / f"{stem}_design.png", out / f"{stem}_force_set.png"
    draw_design(platform, alpha=alpha, beta=beta).savefig(p1, dpi=dpi)
    draw_force_sets(platform, alpha=alpha, beta=beta, report=report).savefig(p2, dpi=dpi)
    return [p1, p2]
