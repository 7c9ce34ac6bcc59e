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
import numpy as np
from jax import Array
from jaxtyping import ArrayLike, Float

from . import small
from .design.platform import AngleLike, Platform, rotor_axes, rotor_positions

__all__ = [
    "force_matrix",
    "moment_matrix",
    "allocation_matrix",
    "rotor_forces",
    "rotor_moments",
    "wrench",
    "hover_wrench",
    "hover_inputs",
    "characteristic_length",
    "scaled_allocation_matrix",
    "allocation_rank",
    "rank_tolerance",
    "RANK_RTOL",
]

#: Relative singular-value tolerance of every numerical rank in jaxrotor (on the unit-consistent ``G_s``),
#: by floating-point type: a singular value counts as zero below ``RANK_RTOL[dtype] * max(1, sigma_max)``.
RANK_RTOL = {"float64": 1e-9, "float32": 1e-5}


def rank_tolerance(Gs: Float[ArrayLike, "k n"]) -> float:
    """Singular-value threshold of a numerical rank of (rows of) ``G_s``: ``RANK_RTOL * max(1, ||G_s||_2)``."""
    Gs = np.asarray(Gs)
    rtol = RANK_RTOL.get(str(Gs.dtype), RANK_RTOL["float32"])
    return rtol * max(1.0, float(np.linalg.norm(Gs.astype(float), 2)) if Gs.size else 1.0)


def force_matrix(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                ) -> Float[Array, "3 n"]:
    """Control force input matrix ``F`` of eq. (10): ``F[:, i] = c_f,i z_i``.

    Args:
        platform: the design.
        alpha: optional current cant angle(s) [rad] (shape of ``platform.alpha``) for a tilting platform.
        beta: optional current dihedral angle(s) [rad] (shape of ``platform.beta``), likewise.

    Returns:
        ``(3, n)`` matrix [N / (rad^2/s^2)], body frame.
    """
    z = rotor_axes(platform, alpha, beta)
    return (platform.c_f[:, None] * z).T


def moment_matrix(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                 ) -> Float[Array, "3 n"]:
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


def allocation_matrix(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                     ) -> Float[Array, "6 n"]:
    """``G = [F; M]``, the ``(6, n)`` map from inputs ``u`` to the body wrench ``(f_c, tau_c)``."""
    return jnp.concatenate([force_matrix(platform, alpha, beta), moment_matrix(platform, alpha, beta)], axis=0)


def rotor_forces(platform: Platform, u: Float[ArrayLike, " n"], alpha: AngleLike | None = None,
                 beta: AngleLike | None = None) -> Float[Array, "n 3"]:
    """Per-rotor thrust vectors ``f_i = c_f,i u_i z_i`` (eq. 5), ``(n, 3)`` [N], body frame."""
    return (platform.c_f * u)[:, None] * rotor_axes(platform, alpha, beta)


def rotor_moments(platform: Platform, u: Float[ArrayLike, " n"], alpha: AngleLike | None = None,
                  beta: AngleLike | None = None) -> tuple[Float[Array, "n 3"], Float[Array, "n 3"]]:
    """Per-rotor drag torque (eq. 6) and thrust moment (eq. 7), each ``(n, 3)`` [N m], body frame."""
    z = rotor_axes(platform, alpha, beta)
    p = rotor_positions(platform)
    drag = (platform.kappa * platform.c_tau * u)[:, None] * z
    thrust_moment = (platform.c_f * u)[:, None] * jnp.cross(p, z)
    return drag, thrust_moment


def wrench(platform: Platform, u: Float[ArrayLike, " n"], alpha: AngleLike | None = None,
           beta: AngleLike | None = None) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
    """Body wrench from inputs, eq. (10): ``f_c = F u`` [N], ``tau_c = M u`` [N m], each ``(3,)``."""
    w = small.mv(allocation_matrix(platform, alpha, beta), u)
    return w[:3], w[3:]


def hover_wrench(platform: Platform) -> Float[Array, "6"]:
    """The body wrench that holds the platform level and still: ``[m g e_3; 0]`` ``(6,)`` [N, N m]."""
    return jnp.zeros(6, dtype=platform.mass.dtype).at[2].set(platform.mass * platform.gravity)


def hover_inputs(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                ) -> Float[Array, " n"]:
    """Minimum-norm inputs that hold the platform level and still: ``u_h = G^+ [m g e_3; 0]``.

    Exact hover needs ``[m g e_3; 0]`` in the range of ``G`` and ``u_h >= 0``; check
    with :func:`jaxrotor.analysis.static_hoverability` before relying on it.

    Returns:
        ``(n,)`` inputs [rad^2/s^2].
    """
    return jnp.linalg.pinv(allocation_matrix(platform, alpha, beta)) @ hover_wrench(platform)


def characteristic_length(platform: Platform) -> Float[Array, ""]:
    """Mean hub distance ``L = mean_i |p_i|`` [m] used to make moments comparable with forces.

    Equals ``platform.arm_length`` for layouts built from eq. (3).
    """
    return jnp.mean(jnp.linalg.norm(rotor_positions(platform), axis=1))


def scaled_allocation_matrix(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                            ) -> Float[Array, "6 n"]:
    """Unit-consistent allocation matrix ``G_s = diag(1,1,1,1/L,1/L,1/L) G / mean_i c_f,i``.

    ``G = [F; M]`` of eq. (10) mixes newtons and newton-metres; dividing the moment
    rows by the characteristic length ``L`` (:func:`characteristic_length`) and the
    whole matrix by the mean thrust coefficient makes every entry dimensionless and
    of order one: force column ``i`` is ``(c_f,i / mean c_f) z_i``, moment column
    ``i`` is ``(c_f,i / mean c_f) (p_i / L x z_i) + (kappa_i c_tau,i / (mean c_f L)) z_i``.
    Its singular values, rank and condition number do not depend on the choice of units.

    Returns:
        ``(6, n)`` dimensionless matrix (differentiable in every platform leaf).
    """
    G = allocation_matrix(platform, alpha, beta)
    L = characteristic_length(platform)
    return jnp.concatenate([G[:3], G[3:] / L], axis=0) / jnp.mean(platform.c_f)


def allocation_rank(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None, *,
                    rows: slice = slice(None)) -> int:
    """Numerical rank of (rows of) the unit-consistent ``G_s`` (concrete platforms only).

    Singular values below :func:`rank_tolerance` of the whole ``G_s`` count as zero.
    ``rows`` selects e.g. the force rows ``slice(0, 3)`` or the moment rows ``slice(3, 6)``.
    """
    Gs = np.asarray(scaled_allocation_matrix(platform, alpha, beta))
    X = Gs[rows].astype(float)
    if X.size == 0:
        return 0
    return int(np.sum(np.linalg.svd(X, compute_uv=False) > rank_tolerance(Gs)))
