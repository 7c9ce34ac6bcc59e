"""Animation of a flight (matplotlib Agg, no display or OpenGL; GIF via Pillow, MP4 via ffmpeg if present).

The vehicle is drawn from its geometry in an orthographic view of the world frame
(camera azimuth ``azim``, elevation ``elev`` [deg]): the arms (body centre to each hub
``p_w + s R_wb p_i``, eq. (3)), each rotor disc (a circle of radius ``s r`` about the hub,
normal to its spin axis), the spin-axis arrows ``s R_wb z_i`` (eq. (4), following the
applied tilt angles of a tilting platform) and the body axes; plus the trace of the
trajectory so far, the whole reference path and a time stamp. ``s`` is a drawing scale
(default: the arms span about a tenth of the flight's extent).

Speed: the static parts (axes, reference path) are rendered once; each frame restores that
background and draws only the moving artists (blitting), so rendering cost does not grow
with the figure's complexity.

* :func:`view_basis` - the orthographic projection used.
* :class:`FlightAnimator` - per-frame geometry and artists (testable without writing a file).
* :func:`animate_flight` - write the GIF/MP4.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

__all__ = ["FlightAnimator", "animate_flight", "animate_trajectory_file", "project", "view_basis"]


def view_basis(azim: float, elev: float) -> np.ndarray:
    """Orthographic camera basis ``(2, 3)``: rows are the screen-right and screen-up unit vectors (world frame).

    ``right = (-sin az, cos az, 0)``, ``up = (-sin el cos az, -sin el sin az, cos el)`` with ``az, el`` in
    radians; a world point ``x`` [m] maps to the screen point ``B @ x`` [m].
    """
    az, el = np.deg2rad(azim), np.deg2rad(elev)
    return np.array([[-np.sin(az), np.cos(az), 0.0],
                     [-np.sin(el) * np.cos(az), -np.sin(el) * np.sin(az), np.cos(el)]])


def project(points_w: np.ndarray, azim: float, elev: float) -> np.ndarray:
    """Project ``(..., 3)`` world points [m] to ``(..., 2)`` screen points [m] (see :func:`view_basis`)."""
    return np.asarray(points_w, dtype=float) @ view_basis(azim, elev).T


def _frame_indices(t: np.ndarray, fps: float, t_end: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Frame times ``t0 + k / fps`` [s] and, for each, the last saved sample at or before it."""
    t0 = float(t[0])
    t1 = float(t[-1]) if t_end is None else min(float(t_end), float(t[-1]))
    n = int(np.floor((t1 - t0) * fps + 1e-9)) + 1
    tf = t0 + np.arange(n) / fps
    idx = np.clip(np.searchsorted(t, tf + 1e-12, side="right") - 1, 0, len(t) - 1)
    return tf, idx


class FlightAnimator:
    """Geometry and matplotlib artists of a flight animation.

    Args:
        positions: ``(n, 3)`` hub positions in the body frame [m] (:func:`~jaxrotor.design.platform.rotor_positions`).
        axes: ``(n, 3)`` unit spin axes in the body frame, or ``(T, n, 3)`` per saved sample (tilting platform).
        t: ``(T,)`` saved times [s].
        p: ``(T, 3)`` world position [m].
        R: ``(T, 3, 3)`` attitude (body to world).
        p_ref: ``(T, 3)`` reference position [m], or ``None``.
        fps: frames per second of the output.
        scale: drawing scale of the vehicle (1 = true size); ``None`` picks one so the arm span is
            about a tenth of the flight's extent (never below 1).
        azim: camera azimuth [deg] (:func:`view_basis`).
        elev: camera elevation [deg] (:func:`view_basis`).
        size: ``(width, height)`` of each frame [px].
        title: figure title.
        t_end: stop the animation at this time [s] (default: the last saved time).
    """

    def __init__(self, positions, axes, t, p, R, p_ref=None, *, fps: float = 25.0, scale: float | None = None,
                 azim: float = -60.0, elev: float = 25.0, size: tuple[int, int] = (480, 400), title: str = "",
                 t_end: float | None = None):
        positions = np.asarray(positions, dtype=float)
        axes = np.asarray(axes, dtype=float)
        t, p, R = (np.asarray(x, dtype=float) for x in (t, p, R))
        if positions.ndim != 2 or positions.shape[1] != 3 or positions.shape[0] < 1:
            raise ValueError(f"FlightAnimator parameter `positions` has shape {positions.shape}; "
                             "Fix: pass the (n, 3) hub positions, e.g. rotor_positions(platform).")
        if axes.shape[-2:] != positions.shape or axes.ndim not in (2, 3):
            raise ValueError(f"FlightAnimator parameter `axes` has shape {axes.shape}, positions {positions.shape}; "
                             "Fix: pass (n, 3) spin axes or (T, n, 3) per saved sample.")
        T = t.shape[0]
        if t.ndim != 1 or T < 1 or p.shape != (T, 3) or R.shape != (T, 3, 3):
            raise ValueError(f"FlightAnimator: t {t.shape}, p {p.shape}, R {R.shape} do not match; "
                             "Fix: pass t (T,), p (T, 3), R (T, 3, 3) from one Trajectory.")
        if not (np.isfinite(fps) and fps > 0):
            raise ValueError(f"FlightAnimator parameter `fps` = {fps!r}; Fix: give a positive frame rate.")
        finite = np.all(np.isfinite(p), axis=1) & np.all(np.isfinite(R), axis=(1, 2))
        if not finite.all():  # a diverged flight: animate up to the last finite sample
            last = int(np.argmin(finite)) - 1
            if last < 0:
                raise ValueError("FlightAnimator: the trajectory has no finite sample; Fix: animate a flight "
                                 "that did not diverge at t0.")
            t_end = float(t[last]) if t_end is None else min(t_end, float(t[last]))
        self.positions, self.axes_b, self.t, self.p, self.R = positions, axes, t, p, R
        self.p_ref = None if p_ref is None else np.asarray(p_ref, dtype=float)
        self.azim, self.elev, self.fps = float(azim), float(elev), float(fps)
        self.frame_times, self.frame_index = _frame_indices(t, fps, t_end)
        ok = self.frame_index
        pts = p[ok] if self.p_ref is None else np.concatenate([p[ok], self.p_ref[np.isfinite(self.p_ref).all(1)]])
        arm = float(np.max(np.linalg.norm(positions, axis=1)))
        extent = float(np.max(np.ptp(pts, axis=0))) if len(pts) > 1 else 0.0
        self.scale = float(scale) if scale is not None else max(1.0, 0.1 * extent / max(arm, 1e-9))
        self.rotor_radius = 0.35 * arm * min(1.0, np.pi / positions.shape[0] * 1.2)
        self.size, self.title = size, title
        self._B = view_basis(azim, elev)
        self._fig = None

    # --- geometry (world frame, then screen) -------------------------------------------------
    def frame_geometry(self, k: int) -> dict:
        """World-frame geometry of frame ``k`` [m]: ``centre (3,)``, ``hubs (n, 3)``, ``tips (n, 3)`` (spin-axis
        arrow ends), ``discs (n, m, 3)`` (rotor circles), ``body (3, 3)`` (ends of the body x, y, z axes)."""
        i = int(self.frame_index[k])
        c, R, s = self.p[i], self.R[i], self.scale
        ax_b = self.axes_b[i] if self.axes_b.ndim == 3 else self.axes_b
        hubs = c + s * self.positions @ R.T
        z_w = ax_b @ R.T
        tips = hubs + s * 0.6 * float(np.max(np.linalg.norm(self.positions, axis=1))) * z_w
        # an orthonormal pair spanning each rotor plane (normal z_w)
        helper = np.where(np.abs(z_w[:, :1]) < 0.9, np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))
        e1 = np.cross(z_w, helper)
        e1 /= np.linalg.norm(e1, axis=1, keepdims=True)
        e2 = np.cross(z_w, e1)
        th = np.linspace(0.0, 2 * np.pi, 17)
        rr = s * self.rotor_radius
        discs = hubs[:, None, :] + rr * (np.cos(th)[None, :, None] * e1[:, None, :]
                                         + np.sin(th)[None, :, None] * e2[:, None, :])
        body = c + s * 0.5 * float(np.max(np.linalg.norm(self.positions, axis=1))) * R.T
        return {"centre": c, "hubs": hubs, "tips": tips, "discs": discs, "body": body}

    def _xy(self, pts):
        return np.asarray(pts) @ self._B.T

    # --- drawing ------------------------------------------------------------------------------
    def _setup(self):
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        dpi = 80
        fig = Figure(figsize=(self.size[0] / dpi, self.size[1] / dpi), dpi=dpi)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0.12, 0.11, 0.84, 0.8))
        # limits from everything that will be drawn (trajectory, reference, vehicle at every frame)
        pts = [self._xy(self.p[self.frame_index])]
        if self.p_ref is not None:
            pr = self.p_ref[np.isfinite(self.p_ref).all(1)]
            pts.append(self._xy(pr))
            ax.plot(*self._xy(pr).T, "k--", lw=1.0, label="reference")
        margin = 1.3 * self.scale * float(np.max(np.linalg.norm(self.positions, axis=1)))
        allp = np.concatenate(pts)
        lo, hi = allp.min(0) - margin, allp.max(0) + margin
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel(f"screen x [m] (view az {self.azim:g}°, el {self.elev:g}°)")
        ax.set_ylabel("screen up [m]")
        fig.suptitle(self.title or "flight", fontsize=10)
        self._trace_xy = self._xy(self.p[self.frame_index])  # the trace, sampled at the frame times
        (self._trace,) = ax.plot([], [], "-", color="tab:blue", lw=1.3, label="trajectory", animated=True)
        (self._arms,) = ax.plot([], [], "-", color="0.2", lw=2.0, animated=True)
        (self._discs,) = ax.plot([], [], "-", color="tab:orange", lw=1.0, animated=True)
        (self._spin,) = ax.plot([], [], "-", color="tab:red", lw=1.2, animated=True)
        (self._hubs,) = ax.plot([], [], "o", color="tab:red", ms=3, animated=True)
        (self._body,) = ax.plot([], [], "-", color="tab:green", lw=1.0, animated=True)
        self._stamp = ax.text(0.02, 0.96, "", transform=ax.transAxes, va="top", family="monospace", animated=True)
        ax.legend(loc="upper right", fontsize=8)
        fig.canvas.draw()
        self._bg = fig.canvas.copy_from_bbox(fig.bbox)
        self._fig, self._ax = fig, ax
        self._artists = [self._trace, self._arms, self._discs, self._spin, self._hubs, self._body, self._stamp]

    @staticmethod
    def _segments(a, b):
        """Polyline data joining ``a[i] -> b[i]`` with NaN breaks: ``(3 n, 2)``."""
        n = a.shape[0]
        out = np.full((3 * n, 2), np.nan)
        out[0::3], out[1::3] = a, b
        return out

    def update(self, k: int) -> list:
        """Set every moving artist to frame ``k``; returns the artists."""
        if self._fig is None:
            self._setup()
        g = self.frame_geometry(k)
        c, hubs, tips = self._xy(g["centre"]), self._xy(g["hubs"]), self._xy(g["tips"])
        self._trace.set_data(*self._trace_xy[: k + 1].T)
        arms = self._segments(np.broadcast_to(c, hubs.shape), hubs)
        self._arms.set_data(arms[:, 0], arms[:, 1])
        d = self._xy(g["discs"])
        d = np.concatenate([d, np.full((d.shape[0], 1, 2), np.nan)], axis=1).reshape(-1, 2)
        self._discs.set_data(d[:, 0], d[:, 1])
        sp = self._segments(hubs, tips)
        self._spin.set_data(sp[:, 0], sp[:, 1])
        self._hubs.set_data(hubs[:, 0], hubs[:, 1])
        bd = self._segments(np.broadcast_to(c, (3, 2)), self._xy(g["body"]))
        self._body.set_data(bd[:, 0], bd[:, 1])
        self._stamp.set_text(f"t = {self.frame_times[k]:6.2f} s")
        return self._artists

    def render(self, k: int) -> np.ndarray:
        """Frame ``k`` as an ``(H, W, 3)`` uint8 RGB image (background restored, moving artists drawn)."""
        self.update(k)
        canvas = self._fig.canvas
        canvas.restore_region(self._bg)
        for a in self._artists:
            self._ax.draw_artist(a)
        return np.asarray(canvas.buffer_rgba())[..., :3].copy()

    @property
    def num_frames(self) -> int:
        """Number of frames, ``floor((t_end - t0) fps) + 1``."""
        return int(self.frame_times.shape[0])


def animate_flight(path: str | Path, animator: FlightAnimator) -> Path:
    """Render every frame of ``animator`` and write ``path``: a GIF (Pillow) or, for ``.mp4``, an MP4 via ffmpeg.

    Raises ``ValueError`` for another suffix, or ``.mp4`` without an ``ffmpeg`` on the PATH (Fix: write a .gif).
    Returns the path.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".mp4":
        exe = shutil.which("ffmpeg")
        if exe is None:
            raise ValueError(f"animation path `{path}`: MP4 needs ffmpeg, which is not on the PATH; "
                             "Fix: write a .gif instead.")
        first = animator.render(0)
        h, w = first.shape[:2]
        cmd = [exe, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}",
               "-r", f"{animator.fps:g}", "-i", "-", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
               "-pix_fmt", "yuv420p", str(path)]
        with subprocess.Popen(cmd, stdin=subprocess.PIPE) as proc:
            proc.stdin.write(first.tobytes())
            for k in range(1, animator.num_frames):
                proc.stdin.write(animator.render(k).tobytes())
            proc.stdin.close()
            if proc.wait() != 0:
                raise RuntimeError(f"ffmpeg failed writing {path}")
        return path
    if suffix != ".gif":
        raise ValueError(f"animation path `{path}` has suffix {suffix!r}; Fix: use .gif (or .mp4 with ffmpeg).")
    from PIL import Image

    # one adaptive palette from the last frame (every colour is on screen), reused (fast, no flicker)
    palette = Image.fromarray(animator.render(animator.num_frames - 1)).quantize(
        colors=64, method=Image.Quantize.MEDIANCUT)
    frames = [Image.fromarray(animator.render(k)).quantize(palette=palette, dither=Image.Dither.NONE)
              for k in range(animator.num_frames)]
    duration = round(1000.0 / animator.fps)
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=duration, loop=0, optimize=False)
    return path


def animate_trajectory_file(npz_path: str | Path, platform, path: str | Path, *, fps: float = 25.0,
                            title: str = "", reference=None, **kwargs) -> Path:
    """Animate a saved flight: ``npz_path`` as written by ``jaxrotor simulate`` (``trajectory.npz``) or
    ``jaxrotor validate`` (``trajectory_physics.npz``): ``t`` [s], ``p`` [m], ``R``, and if present ``p_ref`` [m]
    and ``alpha``/``beta`` [rad] (the applied tilt of a tilting platform), drawn with the geometry of ``platform``
    (:class:`~jaxrotor.design.platform.Platform`). Without ``p_ref`` in the file the reference path is
    ``reference(t).p`` of ``reference`` (an :class:`~jaxrotor.reference.AbstractReference`), if given.
    Extra ``kwargs`` go to :class:`FlightAnimator`. Returns the written path."""
    from ..design.platform import rotor_axes, rotor_positions

    data = np.load(npz_path)
    if "p_ref" in data.files:
        p_ref = data["p_ref"]
    elif reference is not None:
        import jax

        p_ref = np.asarray(jax.vmap(lambda t: reference(t).p)(np.asarray(data["t"])))
    else:
        p_ref = None
    pos = np.asarray(rotor_positions(platform))
    if platform.is_tilting and "alpha" in data.files and "beta" in data.files:
        import jax

        axes = np.asarray(jax.vmap(lambda a, b: rotor_axes(platform, a, b))(data["alpha"], data["beta"]))
    else:
        axes = np.asarray(rotor_axes(platform))
    anim = FlightAnimator(pos, axes, data["t"], data["p"], data["R"], p_ref, fps=fps, title=title, **kwargs)
    return animate_flight(path, anim)
