"""Figures of flights (matplotlib, Agg backend; PNG files).

* :func:`plot_trajectory_3d` - 3D path with the reference (the paper's Fig. 6).
* :func:`plot_errors` - position and orientation errors (Fig. 7).
* :func:`plot_rotor_speeds` - rotor speeds and their difference between two runs (Fig. 8 analog).

Each takes one or more labelled :class:`~jaxrotor.trajectory.Trajectory` objects
and a path, writes the PNG and returns the path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["plot_trajectory_3d", "plot_errors", "plot_rotor_speeds", "save_figure"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | Path, dpi: int = 130) -> Path:
    """Lay out ``fig``, write it to ``path`` (PNG) and close it; returns the path."""
    plt = _plt()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def plot_trajectory_3d(runs: dict, path: str | Path, title: str = "3D trajectory") -> Path:
    """3D position of each run with the reference (from the first run) [m].

    Args:
        runs: ``{label: Trajectory}``.
        path: output PNG.
    """
    plt = _plt()
    fig = plt.figure(figsize=(7, 6))
    ax = fig.add_subplot(projection="3d")
    first = next(iter(runs.values()))
    pr = np.asarray(first.p_ref)
    ax.plot(pr[:, 0], pr[:, 1], pr[:, 2], "k--", lw=1.2, label="reference")
    styles = ["-", "-.", ":"]
    for k, (label, tr) in enumerate(runs.items()):
        p = np.asarray(tr.p)
        ax.plot(p[:, 0], p[:, 1], p[:, 2], styles[k % 3], lw=1.4, label=label)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return save_figure(fig, path)


def plot_errors(runs: dict, path: str | Path, title: str = "Tracking errors") -> Path:
    """Position error ``e_p`` [m] (top) and orientation error ``e_R`` [rad] (bottom) per component."""
    from ..metrics import orientation_error, position_error

    plt = _plt()
    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    colors = ["tab:blue", "tab:orange", "tab:green"]
    styles = ["-", "--", ":"]
    for k, (label, tr) in enumerate(runs.items()):
        t = np.asarray(tr.t)
        ep, eR = np.asarray(position_error(tr)), np.asarray(orientation_error(tr))
        for i, comp in enumerate("xyz"):
            axes[0].plot(t, ep[:, i], styles[k % 3], color=colors[i], lw=1.1, label=f"{label}: e_p,{comp}")
            axes[1].plot(t, eR[:, i], styles[k % 3], color=colors[i], lw=1.1, label=f"{label}: e_R,{i + 1}")
    axes[0].set_ylabel("e_p [m]")
    axes[1].set_ylabel("e_R [rad]")
    axes[1].set_xlabel("t [s]")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="upper right")
    axes[0].set_title(title)
    return save_figure(fig, path)


def plot_rotor_speeds(runs: dict, path: str | Path, title: str = "Rotor speeds") -> Path:
    """Rotor speeds ``omega_i`` [rad/s] of each run; with two runs also ``Delta omega_i = omega_i^(2) - omega_i^(1)``."""
    plt = _plt()
    labels = list(runs)
    nrows = len(labels) + (1 if len(labels) == 2 else 0)
    fig, axes = plt.subplots(nrows, 1, figsize=(9, 2.6 * nrows), sharex=True, squeeze=False)
    axes = axes[:, 0]
    for ax, label in zip(axes, labels):
        tr = runs[label]
        t, w = np.asarray(tr.t), np.asarray(tr.rotor_speed)
        for i in range(w.shape[1]):
            ax.plot(t, w[:, i], lw=1.0, label=f"ω{i + 1}")
        ax.set_ylabel("ω [rad/s]")
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=w.shape[1], loc="upper right")
    if len(labels) == 2:
        a, b = runs[labels[0]], runs[labels[1]]
        t = np.asarray(a.t)
        dw = np.asarray(b.rotor_speed) - np.asarray(a.rotor_speed)
        ax = axes[-1]
        for i in range(dw.shape[1]):
            ax.plot(t, dw[:, i], lw=1.0, label=f"Δω{i + 1}")
        ax.set_ylabel("Δω [rad/s]")
        ax.set_title(f"Δω = ω({labels[1]}) − ω({labels[0]})", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=dw.shape[1], loc="upper right")
    axes[-1].set_xlabel("t [s]")
    fig.suptitle(title)
    return save_figure(fig, path)
