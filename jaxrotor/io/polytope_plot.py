"""Picture of the exact zero-moment force polytope ``F_B`` with the hover plane and its section.

:func:`draw_polytope` draws, in the body frame [N], the polytope
``F_B = {F u : M u = 0, u_min <= u <= u_max}`` (:func:`jaxrotor.analysis.zero_moment_polytope`,
faces shaded), the hover plane ``f_z = m g`` (level attitude) and the section
polygon (:func:`jaxrotor.analysis.hover_section_polygon`), with the three measures
in the title. Matplotlib's Agg canvas only: no display is needed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d import Axes3D  # noqa: F401  (registers the 3d projection)
from mpl_toolkits.mplot3d.art3d import Poly3DCollection

from .. import analysis
from ..design.platform import Platform

__all__ = ["draw_polytope", "save_polytope_figure"]


def _facets(vertices: np.ndarray, normals: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    """The vertices of each facet, ordered around it (for drawing)."""
    faces = []
    scale = max(1.0, float(np.abs(vertices).max()))
    for a, b in zip(normals, offsets):
        on = vertices[np.abs(vertices @ a - b) <= 1e-7 * scale]
        if len(on) < 3:
            continue
        c = on.mean(axis=0)
        e1 = on[0] - c
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(a, e1)
        ang = np.arctan2((on - c) @ e2, (on - c) @ e1)
        faces.append(on[np.argsort(ang)])
    return faces


def _ordered_polygon(pts: np.ndarray) -> np.ndarray:
    c = pts.mean(axis=0)
    return pts[np.argsort(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0]))]


def draw_polytope(platform: Platform, *, alpha=None, beta=None) -> Figure:
    """3-D figure of ``F_B`` [N] with the hover plane ``f_z = m g`` and its section.

    Args:
        platform: the design (concrete).
        alpha: optional cant angle(s) [rad] (shape of ``platform.alpha``).
        beta: optional dihedral angle(s) [rad] (shape of ``platform.beta``).

    Returns:
        the figure (draw it with ``fig.savefig``).
    """
    P = analysis.zero_moment_polytope(platform, alpha, beta)
    S = analysis.hover_section_polygon(platform, alpha, beta)
    up = analysis.above_hover_polytope(platform, alpha, beta)
    W = float(platform.weight)
    fig = Figure(figsize=(7.5, 7))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1, projection="3d")
    V = P.vertices if len(P.vertices) else np.zeros((1, 3))
    if P.dim == 3:
        ax.add_collection3d(Poly3DCollection(_facets(P.vertices, P.normals, P.offsets), facecolor="tab:orange",
                                             edgecolor="tab:brown", alpha=0.18, lw=0.6))
    elif len(P.vertices) >= 2:
        seg = P.vertices[np.argsort(P.vertices[:, 2])]
        ax.plot(seg[:, 0], seg[:, 1], seg[:, 2], color="tab:orange", lw=4)
    ax.scatter(V[:, 0], V[:, 1], V[:, 2], color="tab:brown", s=8)
    lim = max(float(np.abs(V[:, :2]).max()), 0.25 * W) * 1.15
    xx, yy = np.meshgrid([-lim, lim], [-lim, lim])
    ax.plot_surface(xx, yy, np.full_like(xx, W), color="tab:blue", alpha=0.08)
    if S.dim == 2:
        poly = _ordered_polygon(S.vertices)
        ring = np.column_stack([poly, np.full(len(poly), W)])
        ax.add_collection3d(Poly3DCollection([ring], facecolor="tab:blue", edgecolor="tab:blue", alpha=0.55))
    ax.quiver(0, 0, 0, 0, 0, W, color="k", arrow_length_ratio=0.08, lw=1.5)
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_zlim(min(0.0, float(V[:, 2].min())), max(float(V[:, 2].max()), 1.1 * W))
    ax.set_box_aspect((1, 1, 1.1))
    ax.set_xlabel("$f_x$ [N]")
    ax.set_ylabel("$f_y$ [N]")
    ax.set_zlabel("$f_z$ [N]")
    note = P.reason or S.reason
    ax.set_title(f"{platform.name}: zero-moment force set $F_B$ and the hover plane $f_z$ = m g = {W:.1f} N\n"
                 f"vol $F_B$ = {P.measure:.4g} N³, hover section = {S.measure:.4g} N², "
                 f"vol above hover = {up.measure:.4g} N³" + (f"\n({note})" if note else ""), fontsize=9)
    fig.tight_layout()
    return fig


def save_polytope_figure(platform: Platform, out_dir: str | Path, *, alpha=None, beta=None, dpi: int = 110) -> Path:
    """Write ``<name>_polytope.png`` (:func:`draw_polytope`) into ``out_dir`` (created if missing); return its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in platform.name) or "platform"
    path = out / f"{stem}_polytope.png"
    draw_polytope(platform, alpha=alpha, beta=beta).savefig(path, dpi=dpi)
    return path
