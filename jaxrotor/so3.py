"""Rotations: hat/vee, elementary rotations, exp/log maps and quaternions.

Conventions (see ``docs/theory.md``): a rotation matrix ``R`` maps vectors from
the body frame to the world frame; ``hat(w) @ x == cross(w, x)``; quaternions are
``(w, x, y, z)`` with a non-negative scalar part on output. Every function is pure
JAX, works in float32 and float64, and has finite derivatives everywhere it is
evaluated in jaxrotor (the exp and log maps use series expansions near the
identity and a stable formula near a half turn).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike
from jaxtyping import Float

from . import small

__all__ = [
    "attitude_error",
    "hat",
    "vee",
    "rot_x",
    "rot_y",
    "rot_z",
    "exp",
    "log",
    "quat_to_rot",
    "rot_to_quat",
    "orthonormality_error",
    "project",
]


def hat(w: Float[ArrayLike, "3"]) -> Float[Array, "3 3"]:
    """Skew-symmetric matrix of a 3-vector, ``[w]_x`` in the paper.

    Args:
        w: ``(3,)`` vector.

    Returns:
        ``(3, 3)`` matrix ``W`` with ``W @ x == cross(w, x)`` and ``W.T == -W``.
    """
    w = jnp.asarray(w)
    z = jnp.zeros_like(w[0])
    return jnp.array(
        [
            [z, -w[2], w[1]],
            [w[2], z, -w[0]],
            [-w[1], w[0], z],
        ]
    )


def vee(W: Float[ArrayLike, "3 3"]) -> Float[Array, "3"]:
    """Inverse of :func:`hat`, ``(.)^vee`` in the paper.

    Takes the skew-symmetric part, so ``vee(A) == vee((A - A.T) / 2)`` for any
    ``(3, 3)`` matrix ``A``.

    Args:
        W: ``(3, 3)`` matrix.

    Returns:
        ``(3,)`` vector.
    """
    W = jnp.asarray(W)
    return 0.5 * jnp.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])


def rot_x(angle: Float[ArrayLike, ""]) -> Float[Array, "3 3"]:
    """Elementary rotation ``R_x(angle)`` about the x axis [rad] -> ``(3, 3)``."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    o, z = jnp.ones_like(c), jnp.zeros_like(c)
    return jnp.array([[o, z, z], [z, c, -s], [z, s, c]])


def rot_y(angle: Float[ArrayLike, ""]) -> Float[Array, "3 3"]:
    """Elementary rotation ``R_y(angle)`` about the y axis [rad] -> ``(3, 3)``."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    o, z = jnp.ones_like(c), jnp.zeros_like(c)
    return jnp.array([[c, z, s], [z, o, z], [-s, z, c]])


def rot_z(angle: Float[ArrayLike, ""]) -> Float[Array, "3 3"]:
    """Elementary rotation ``R_z(angle)`` about the z axis [rad] -> ``(3, 3)``."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    o, z = jnp.ones_like(c), jnp.zeros_like(c)
    return jnp.array([[c, -s, z], [s, c, z], [z, z, o]])


def _sinc_coeffs(theta2: Array) -> tuple[Array, Array]:
    """``A = sin(t)/t`` and ``B = (1 - cos t)/t^2`` with a Taylor branch near 0."""
    small = theta2 < 1e-6
    t2 = jnp.where(small, 1.0, theta2)  # keep the unused branch finite
    t = jnp.sqrt(t2)
    A = jnp.where(small, 1.0 - theta2 / 6.0 + theta2**2 / 120.0, jnp.sin(t) / t)
    B = jnp.where(small, 0.5 - theta2 / 24.0 + theta2**2 / 720.0, (1.0 - jnp.cos(t)) / t2)
    return A, B


def exp(w: Float[ArrayLike, "3"]) -> Float[Array, "3 3"]:
    """Exponential map so(3) -> SO(3) (Rodrigues' formula).

    ``exp(w) = I + sin|w|/|w| [w]_x + (1 - cos|w|)/|w|^2 [w]_x^2``.

    Args:
        w: ``(3,)`` rotation vector [rad]; axis ``w/|w|``, angle ``|w|``.

    Returns:
        ``(3, 3)`` rotation matrix. Derivatives are finite at ``w = 0``.
    """
    w = jnp.asarray(w)
    W = hat(w)
    A, B = _sinc_coeffs(jnp.dot(w, w))
    return jnp.eye(3, dtype=W.dtype) + A * W + B * (W @ W)


def log(R: Float[ArrayLike, "3 3"]) -> Float[Array, "3"]:
    """Logarithm map SO(3) -> so(3), the inverse of :func:`exp` for angles in [0, pi].

    Near the identity a series in ``s^2 = |vee(R)|^2 = sin^2(theta)`` keeps the
    value and the derivative finite (no square root of zero is differentiated);
    near a half turn the axis is read from the symmetric part
    ``(R + R^T)/2 - cos(theta) I = (1 - cos theta) a a^T`` (its largest column,
    sign fixed by the skew part), which stays accurate where ``sin(theta) -> 0``.
    At exactly a half turn the sign of the axis is arbitrary (``w`` and ``-w``
    give the same rotation).

    Args:
        R: ``(3, 3)`` rotation matrix.

    Returns:
        ``(3,)`` rotation vector ``theta * axis`` [rad].
    """
    R = jnp.asarray(R)
    eye = jnp.eye(3, dtype=R.dtype)
    cos_t = jnp.clip(0.5 * (jnp.trace(R) - 1.0), -1.0, 1.0)
    skew = vee(R)  # = sin(theta) * axis
    s2 = jnp.dot(skew, skew)  # = sin(theta)^2

    # Near-identity branch (cos(theta) > 0 and sin(theta)^2 tiny): theta/sin(theta)
    # as a series in s^2 = sin^2(theta): arcsin(s)/s = 1 + s^2/6 + 3 s^4/40 + 5 s^6/112.
    small = (s2 < 1e-8) & (cos_t > 0)
    factor_small = 1.0 + s2 / 6.0 + 3.0 * s2**2 / 40.0 + 5.0 * s2**3 / 112.0

    # Regular branch: theta / sin(theta) with theta = atan2(sin, cos).
    pos = s2 > 0
    sin_t = jnp.where(pos, jnp.sqrt(jnp.where(pos, s2, 1.0)), 0.0)
    theta = jnp.arctan2(sin_t, cos_t)
    sin_safe = jnp.where(small | ~pos, 1.0, sin_t)
    theta_safe = jnp.where(small | ~pos, 1.0, theta)
    factor = jnp.where(small, factor_small, theta_safe / sin_safe)
    w_regular = factor * skew

    # Near pi: axis from the symmetric part.
    S = 0.5 * (R + R.T) - cos_t * eye  # = (1 - cos t) a a^T
    col = jnp.argmax(jnp.diagonal(S))
    v = S[:, col]
    v2 = jnp.dot(v, v)
    v_pos = v2 > 0
    v_norm = jnp.sqrt(jnp.where(v_pos, v2, 1.0))
    axis = jnp.where(v_pos, v / v_norm, 0.0)
    sign = jnp.where(jnp.dot(axis, skew) < 0, -1.0, 1.0)
    w_pi = sign * theta * axis

    near_pi = theta > jnp.pi - 1e-3
    return jnp.where(near_pi, w_pi, w_regular)


def quat_to_rot(q: Float[ArrayLike, "4"]) -> Float[Array, "3 3"]:
    """Unit quaternion ``(w, x, y, z)`` -> rotation matrix ``(3, 3)``.

    The quaternion is normalised first, so any non-zero 4-vector is accepted.
    """
    q = jnp.asarray(q)
    q = q / jnp.linalg.norm(q)
    w, x, y, z = q[0], q[1], q[2], q[3]
    return jnp.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def rot_to_quat(R: Float[ArrayLike, "3 3"]) -> Float[Array, "4"]:
    """Rotation matrix ``(3, 3)`` -> unit quaternion ``(w, x, y, z)`` with ``w >= 0``.

    Shepperd's method: the largest of ``w^2, x^2, y^2, z^2`` is computed from the
    diagonal and the others from off-diagonal sums, which is accurate for every
    rotation.
    """
    R = jnp.asarray(R)
    tr = jnp.trace(R)
    d = jnp.diagonal(R)
    cands = jnp.array([tr, d[0], d[1], d[2]])
    k = jnp.argmax(cands)

    def from_w():
        s = 2.0 * jnp.sqrt(jnp.maximum(1.0 + tr, 1e-30))
        return jnp.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s])

    def from_x():
        s = 2.0 * jnp.sqrt(jnp.maximum(1.0 + d[0] - d[1] - d[2], 1e-30))
        return jnp.array([(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s])

    def from_y():
        s = 2.0 * jnp.sqrt(jnp.maximum(1.0 - d[0] + d[1] - d[2], 1e-30))
        return jnp.array([(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s])

    def from_z():
        s = 2.0 * jnp.sqrt(jnp.maximum(1.0 - d[0] - d[1] + d[2], 1e-30))
        return jnp.array([(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s])

    qs = jnp.stack([from_w(), from_x(), from_y(), from_z()])
    q = qs[k]
    q = jnp.where(q[0] < 0, -q, q)
    return q / jnp.linalg.norm(q)


def orthonormality_error(R: Float[ArrayLike, "*batch 3 3"]) -> Float[Array, "*batch"]:
    """Frobenius norm ``||R^T R - I||``: drift of an integrated attitude from SO(3)."""
    R = jnp.asarray(R)
    return jnp.linalg.norm(jnp.swapaxes(R, -1, -2) @ R - jnp.eye(3, dtype=R.dtype), axis=(-2, -1))


def project(R: Float[ArrayLike, "3 3"]) -> Float[Array, "3 3"]:
    """Nearest rotation matrix to ``R`` in the Frobenius norm (polar decomposition by SVD)."""
    U, _, Vt = jnp.linalg.svd(jnp.asarray(R))
    D = jnp.diag(jnp.array([1.0, 1.0, jnp.linalg.det(U @ Vt)], dtype=U.dtype))
    return U @ D @ Vt


def attitude_error(R: Float[ArrayLike, "3 3"], R_r: Float[ArrayLike, "3 3"]) -> Float[Array, "3"]:
    """Geometric attitude error ``e_R = 1/2 (R_r^T R - R^T R_r)^vee`` ``(3,)`` [rad, small-angle], body frame.

    The paper prints eq. (15) as ``1/2 (R_r - R)^vee``; ``R_r - R`` is not
    skew-symmetric, so jaxrotor reads it as Lee's error above, which the geometric
    SE(3) controller regulates and which equals the printed one to first order.
    For a rotation by ``theta`` about a unit axis ``a``: ``e_R = sin(theta) a``.
    """
    E = small.mtm(jnp.asarray(R_r), jnp.asarray(R))
    return 0.5 * vee(E - jnp.swapaxes(E, -1, -2))
