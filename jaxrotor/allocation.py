"""Allocation matrices: rotor forces and moments (paper eqs. 5-10).

With inputs ``u_i = omega_i^2 >= 0`` [rad^2/s^2], rotor ``i`` produces in the body frame

* thrust ``f_i = c_f,i u_i z_i`` (eq. 5),
* drag torque ``tau^d_i = kappa_i c_tau,i u_i z_i`` (eq. 6),
* thrust moment ``tau^t_i = c_f,i u_i (p_i x z_i)`` (eq. 7),

so the control force and moment are ``f_c = F u`` and ``tau_c = M u`` (eqs. 8-10)
with the columns ``F[:, i] = c_f,i z_i`` and ``M[:, i] = c_f,i p_i x z_i + kappa_i c_tau,i z_i``.
``G = [F; M]`` is the ``6 x n`` allocation matrix. For a tilting platform pass the
current angles; ``F`` and ``M`` then follow them.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array

from .platform import Platform, rotor_axes, rotor_positions

__all__ = [
    "force_matrix",
    "moment_matrix",
    "allocation_matrix",
    "rotor_forces",
    "rotor_moments",
    "wrench",
    "hover_inputs",
]


def force_matrix(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> Array:
    """Control force input matrix ``F`` of eq. (10): ``F[:, i] = c_f,i z_i``.

    Args:
        platform: the design.
        alpha, beta: optional current tilt angles (shape of ``platform.alpha`` /
            ``platform.beta``) for a tilting platform.

    Returns:
        ``(3, n)`` matrix [N / (rad^2/s^2)], body frame.
    """
    z = rotor_axes(platform, alpha, beta)
    return (platform.c_f[:, None] * z).T


def moment_matrix(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> Array:
    """Control moment input matrix ``M`` of eq. (10).

    ``M[:, i] = c_f,i (p_i x z_i) + kappa_i c_tau,i z_i`` (eqs. 6, 7, 9), moments
    about the centre of mass in the body frame.

    Returns:
        ``(3, n)`` matrix [N m / (rad^2/s^2)].
    """
    z = rotor_axes(platform, alpha, beta)
    p = rotor_positions(platform)
    cols = platform.c_f[:, None] * jnp.cross(p, z) + (platform.kappa * platform.c_tau)[:, None] * z
    return cols.T


def allocation_matrix(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> Array:
    """``G = [F; M]``, the ``(6, n)`` map from inputs ``u`` to the body wrench ``(f_c, tau_c)``."""
    return jnp.concatenate([force_matrix(platform, alpha, beta), moment_matrix(platform, alpha, beta)], axis=0)


def rotor_forces(platform: Platform, u: Array, alpha: Array | None = None, beta: Array | None = None) -> Array:
    """Per-rotor thrust vectors ``f_i = c_f,i u_i z_i`` (eq. 5), ``(n, 3)`` [N], body frame."""
    return (platform.c_f * u)[:, None] * rotor_axes(platform, alpha, beta)


def rotor_moments(platform: Platform, u: Array, alpha: Array | None = None, beta: Array | None = None) -> tuple[Array, Array]:
    """Per-rotor drag torque (eq. 6) and thrust moment (eq. 7), each ``(n, 3)`` [N m], body frame."""
    z = rotor_axes(platform, alpha, beta)
    p = rotor_positions(platform)
    drag = (platform.kappa * platform.c_tau * u)[:, None] * z
    thrust_moment = (platform.c_f * u)[:, None] * jnp.cross(p, z)
    return drag, thrust_moment


def wrench(platform: Platform, u: Array, alpha: Array | None = None, beta: Array | None = None) -> tuple[Array, Array]:
    """Body wrench from inputs, eq. (10): ``f_c = F u`` [N], ``tau_c = M u`` [N m], each ``(3,)``."""
    G = allocation_matrix(platform, alpha, beta)
    w = G @ u
    return w[:3], w[3:]


def hover_inputs(platform: Platform, alpha: Array | None = None, beta: Array | None = None) -> Array:
    """Minimum-norm inputs that hold the platform level and still: ``u = G^+ [m g e_3; 0]``.

    Exact hover needs ``[m g e_3; 0]`` in the range of ``G`` and ``u >= 0``; check
    with :func:`jaxrotor.analysis` before relying on it.

    Returns:
        ``(n,)`` inputs [rad^2/s^2].
    """
    G = allocation_matrix(platform, alpha, beta)
    w = jnp.zeros(6, dtype=G.dtype).at[2].set(platform.mass * platform.gravity)
    return jnp.linalg.pinv(G) @ w
