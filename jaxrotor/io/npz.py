"""A flight saved as a NumPy ``.npz`` file: :func:`save_trajectory`.

The file ``jaxrotor simulate`` writes as ``trajectory.npz`` (and ``jaxrotor validate
--animate`` beside the physics layer's ``trajectory_physics.npz``);
:func:`jaxrotor.io.animation.animate_trajectory_file` reads it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["TRAJECTORY_KEYS", "save_trajectory"]

#: The :class:`~jaxrotor.trajectory.Trajectory` fields :func:`save_trajectory` writes (each with time first).
TRAJECTORY_KEYS = ("t", "p", "v", "R", "omega", "accel", "angular_accel", "u", "u_cmd", "rotor_speed",
                   "wrench_requested", "wrench_achieved", "saturated", "p_ref", "v_ref", "a_ref", "R_ref", "alpha",
                   "beta", "R_cmd")


def save_trajectory(path: str | Path, traj) -> None:
    """Write a :class:`~jaxrotor.trajectory.Trajectory` to ``path`` (``.npz``, compressed).

    One array per field of :data:`TRAJECTORY_KEYS` that is not ``None`` (``t`` ``(T,)`` [s],
    ``p``/``v`` ``(T, 3)`` [m, m/s] world frame, ``R`` ``(T, 3, 3)`` body to world, ``omega``
    ``(T, 3)`` [rad/s] body frame, inputs ``u`` ``(T, n)`` [rad^2/s^2], rotor speeds [rad/s],
    wrenches [N, N m], the reference, tilt angles [rad], the commanded attitude ``R_cmd``
    ``(T, 3, 3)``) and ``diverged`` ``()``.

    Args:
        path: the file to write (``.npz`` is appended by NumPy if missing).
        traj: the :class:`~jaxrotor.trajectory.Trajectory` of one flight (unbatched).
    """
    fields = {k: getattr(traj, k) for k in TRAJECTORY_KEYS}
    arrays = {k: np.asarray(v) for k, v in fields.items() if v is not None}
    np.savez_compressed(path, **arrays, diverged=np.asarray(traj.diverged))
