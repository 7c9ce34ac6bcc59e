"""Geometry rules the physics layer's parts obey: arm tips, the parts-fit-the-platform check, the paper's presets.

Positions in the body frame [m], about the frame's geometric centre (where the hub sits).
"""

from __future__ import annotations

import numpy as np

from ..design.parts import Parts

__all__ = ["arm_tips", "check_parts", "is_paper_platform"]


def is_paper_platform(platform) -> bool:
    """Whether ``platform`` is one of the paper's presets (its name starts with ``"paper_hexarotor"``)."""
    return str(platform.name).startswith("paper_hexarotor")


def arm_tips(positions: np.ndarray, arms=()) -> np.ndarray:
    """``(k, 3)`` arm tips [m]: the hubs ``positions`` ``(n, 3)``, or for ``arms`` groups (a coaxial pair
    shares one arm) the mean hub of each group."""
    pos = np.asarray(positions, dtype=float)
    if not arms:
        return pos
    return np.stack([pos[list(g)].mean(axis=0) for g in arms])


def check_parts(parts: Parts, positions: np.ndarray, arms=()) -> None:
    """Refuse parts that cannot carry the rotors at ``positions`` ``(n, 3)`` [m] (body frame, about the
    geometric centre the hub sits at).

    * every arm tip must lie outside the hub (the arm would have no length);
    * propellers of rotors on different arms must not overlap
      (``D <= min |p_i - p_j|``; the rotors of one ``arms`` group, a coaxial pair, share a disc by design).

    Raises:
        ValueError: naming the part, the value and the fix.
    """
    pos = np.asarray(positions, dtype=float)
    tips = arm_tips(pos, arms)
    radial = np.linalg.norm(tips[:, :2], axis=1)
    shortest = float(radial.min())
    r_hub = float(parts.hub.radius)
    if shortest <= r_hub:
        raise ValueError(f"Parts: `hub.radius` = {r_hub!r} m reaches beyond arm tip "
                         f"{int(radial.argmin())} at {shortest:.4g} m from z_B: the arm would be shorter than the hub. "
                         f"Fix: use a hub radius < {shortest:.4g} m or longer arms.")
    n = len(pos)
    if n > 1:
        group = np.arange(n)
        for k, g in enumerate(arms):
            group[list(g)] = n + k
        d = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=-1)
        d[group[:, None] == group[None, :]] = np.inf
        spacing = float(d.min())
        D = float(parts.propeller.diameter)
        if np.isfinite(spacing) and D > spacing + 1e-12:
            i, j = np.unravel_index(np.argmin(d), d.shape)
            raise ValueError(f"Parts: `propeller.diameter` = {D!r} m makes the propellers of rotors {i} and {j} "
                             f"overlap (hubs {spacing:.4g} m apart). Fix: use a propeller diameter <= {spacing:.4g} m "
                             "or spread the rotors.")
