"""Relaxed hover of a quadrotor that lost a rotor: a spinning equilibrium and its LQR (Mueller and D'Andrea).

A quadrotor left with three rotors has no hover with zero angular velocity and the yaw torque cancelled.
It can hover spinning: the body turns at a constant rate ``omega_bar n`` about a body-fixed primary axis
``n`` that points up, the thrust averaged over a turn carries the weight, and the rotor opposite the lost one
balances the gyroscopic torque of the spin while its drag torque cancels the other two rotors'.

**Equilibrium** (body frame, constant in it). With ``n = cos(theta) e3 + sin(theta) a`` (``a`` the horizontal
unit vector away from the lost rotor, ``theta`` = :data:`AXIS_TILT`), unknowns the spin ``omega_bar`` and the
three remaining inputs ``u`` [rad^2/s^2], the Euler equation and the weight give four equations:

    ``M u - omega_bar^2 n x J n - omega_bar n x h(u) = 0``,  ``(F_z u) n_z = m g``

with ``M`` the torque rows and ``F_z`` the thrust row of ``G`` for the remaining rotors and
``h(u) = sum_i J_r,i s_i sqrt(u_i) e3`` the rotors' momentum; solved by Newton's method (:func:`equilibrium`).

**Linear model** about it: the state ``x = (omega (3), d_x, d_y, w_r (3))`` with ``d = R^T N`` the
direction the mean thrust should take (``N`` world, body coordinates; ``d_z = sqrt(1 - d_x^2 - d_y^2)``,
``d' = d x omega``) and ``w_r`` the remaining rotors' speeds behind first-order motors
(``w_r' = (w_cmd - w_r) / tau_m``); the input the commanded speeds ``w_cmd`` (3). ``J omega' = M w_r^2 -
omega x (J omega + h) - J_r s w_r' e3``. Differentiated by :func:`jax.jacfwd`, discretised with the
step ``dt`` (``A_d = I + A dt``, ``B_d = B dt``) and closed by the discrete LQR whose Riccati equation is solved
by the structured doubling algorithm (:func:`dare`), pure JAX.

All of it is computed once per flight for each single rotor loss (:func:`relaxed_table`); the flight
computer picks the lost rotor's row at run time (:func:`relaxed_command`).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jaxtyping import Float, Int

from .design.platform import Platform

__all__ = ["AXIS_TILT", "RelaxedHover", "equilibrium", "dare", "relaxed_design", "relaxed_table", "relaxed_command"]

#: Tilt [rad] of the primary axis from body ``z`` in the relaxed hover.
AXIS_TILT = 0.2
#: LQR weights: angular velocity [1/(rad/s)^2], thrust direction, rotor speed [1/(rad/s)^2], input.
Q_OMEGA = 1.0
Q_DIRECTION = 20.0
Q_ROTOR = 1e-6
R_INPUT = 1e-4


class RelaxedHover(eqx.Module):
    """The relaxed hover of one (or, stacked, each) single rotor loss.

    Attributes:
        keep: ``(3,)`` int indices of the remaining rotors.
        x_bar: ``(8,)`` the equilibrium state ``(omega_bar n, n_x, n_y, w_r)`` [rad/s, -, rad/s].
        w_bar: ``(3,)`` the remaining rotors' equilibrium speeds [rad/s].
        K: ``(3, 8)`` LQR gain: ``w_cmd = w_bar - K (x - x_bar)``.
        spin: ``()`` equilibrium spin ``omega_bar`` [rad/s] (signed about ``n``).
        axis: ``(3,)`` primary axis ``n`` (body frame).
        c_f: ``(3,)`` the remaining rotors' thrust per input (the ``f_z`` row of ``G``) [N s^2/rad^2].
    """

    keep: Int[Array, " 3"]
    x_bar: Float[Array, " 8"]
    w_bar: Float[Array, " 3"]
    K: Float[Array, "3 8"]
    spin: Float[Array, ""]
    axis: Float[Array, " 3"]
    c_f: Float[Array, " 3"]


def _parts(platform: Platform, G: Array, keep: Array):
    Gk = G[:, keep]
    s = (-platform.kappa)[keep]
    Jr = platform.J_r[keep]
    return Gk, s, Jr


def equilibrium(platform: Platform, G: Array, lost: int, tilt: float = AXIS_TILT, iterations: int = 40):
    """``(omega_bar, u (3,), n (3,), keep (3,))`` of the spinning hover after losing rotor ``lost`` (0-based).

    ``G`` ``(6, 4)`` is the allocation matrix (per input ``u = omega^2``). Newton's method on the four
    equations of the module docstring, from ``omega_bar = 20 rad/s`` (signed as the remaining rotors' drag
    torque turns the body) and the equal-share hover inputs.
    """
    n_rot = G.shape[1]
    keep = jnp.asarray([i for i in range(n_rot) if i != lost])
    Gk, s, Jr = _parts(platform, G, keep)
    lever = jnp.stack([-G[4, lost], G[3, lost]])  # the lost rotor's (x, y) direction
    a = -lever / jnp.linalg.norm(lever)
    n = jnp.stack([jnp.sin(tilt) * a[0], jnp.sin(tilt) * a[1], jnp.cos(tilt)])
    J = platform.inertia
    mg = platform.mass * platform.gravity
    e3 = jnp.asarray([0.0, 0.0, 1.0], G.dtype)

    def residual(z):
        w, u = z[0], z[1:]
        h = jnp.sum(Jr * s * jnp.sqrt(jnp.maximum(u, 1e-12))) * e3
        tq = Gk[3:] @ u - w**2 * jnp.cross(n, J @ n) - w * jnp.cross(n, h)
        return jnp.concatenate([tq, (Gk[2] @ u * n[2] - mg)[None]])

    sign = jnp.sign(jnp.sum(Gk[5]))
    u0 = jnp.full((3,), mg / jnp.sum(Gk[2]) * 1.0)
    z = jnp.concatenate([(20.0 * sign)[None].astype(G.dtype), u0])

    def step(z, _):
        r, Jz = residual(z), jax.jacfwd(residual)(z)
        return z - jnp.linalg.solve(Jz, r), None

    z, _ = jax.lax.scan(step, z, None, length=iterations)
    return z[0], z[1:], n, keep


def dare(A: Array, B: Array, Q: Array, R: Array, iterations: int = 60) -> Array:
    """The stabilising solution ``P`` of the discrete algebraic Riccati equation
    ``P = A^T P A - A^T P B (R + B^T P B)^-1 B^T P A + Q`` by the structured doubling algorithm
    (``A_k+1 = A_k (I + G_k H_k)^-1 A_k``, ``G_k+1 = G_k + A_k (I + G_k H_k)^-1 G_k A_k^T``,
    ``H_k+1 = H_k + A_k^T H_k (I + G_k H_k)^-1 A_k``, ``G_0 = B R^-1 B^T``, ``H_0 = Q``; ``H_k -> P``
    quadratically). Pure JAX (no eigenvalues), for ``(A, B)`` stabilisable."""
    I = jnp.eye(A.shape[0], dtype=A.dtype)
    Gm = B @ jnp.linalg.solve(R, B.T)

    def step(c, _):
        Ak, Gk, Hk = c
        W = jnp.linalg.inv(I + Gk @ Hk)
        return (Ak @ W @ Ak, Gk + Ak @ W @ Gk @ Ak.T, Hk + Ak.T @ Hk @ W @ Ak), None

    (_, _, P), _ = jax.lax.scan(step, (A, Gm, Q), None, length=iterations)
    return 0.5 * (P + P.T)


def _dynamics(platform: Platform, Gk, s, Jr, tau_m):
    J = platform.inertia
    J_inv = jnp.linalg.inv(J)

    def f(x, w_cmd):
        w, dxy, wr = x[:3], x[3:5], x[5:]
        d = jnp.concatenate([dxy, jnp.sqrt(jnp.maximum(1.0 - dxy @ dxy, 1e-12))[None]])
        wr_dot = (w_cmd - wr) / tau_m
        h = jnp.asarray([0.0, 0.0, 1.0], x.dtype) * jnp.sum(Jr * s * wr)
        dh = jnp.asarray([0.0, 0.0, 1.0], x.dtype) * jnp.sum(Jr * s * wr_dot)
        w_dot = J_inv @ (Gk[3:] @ wr**2 - jnp.cross(w, J @ w + h) - dh)
        d_dot = jnp.cross(d, w)
        return jnp.concatenate([w_dot, d_dot[:2], wr_dot])

    return f


def relaxed_design(platform: Platform, G: Array, lost: int, tau_m, dt: float, tilt: float = AXIS_TILT
                   ) -> RelaxedHover:
    """The :class:`RelaxedHover` of losing rotor ``lost`` (0-based): :func:`equilibrium`, the linear model of
    the module docstring with motor time constant ``tau_m`` [s], discretised with ``dt`` [s], and its LQR."""
    w_bar, u, n, keep = equilibrium(platform, G, lost, tilt)
    Gk, s, Jr = _parts(platform, G, keep)
    wr = jnp.sqrt(u)
    x_bar = jnp.concatenate([w_bar * n, n[:2], wr])
    f = _dynamics(platform, Gk, s, Jr, tau_m)
    A = jax.jacfwd(f, argnums=0)(x_bar, wr)
    B = jax.jacfwd(f, argnums=1)(x_bar, wr)
    Ad = jnp.eye(8, dtype=A.dtype) + A * dt
    Bd = B * dt
    Q = jnp.diag(jnp.asarray([Q_OMEGA] * 3 + [Q_DIRECTION] * 2 + [Q_ROTOR] * 3, A.dtype))
    R = R_INPUT * jnp.eye(3, dtype=A.dtype)
    P = dare(Ad, Bd, Q, R)
    K = jnp.linalg.solve(R + Bd.T @ P @ Bd, Bd.T @ P @ Ad)
    return RelaxedHover(keep=keep, x_bar=x_bar, w_bar=wr, K=K, spin=w_bar, axis=n, c_f=Gk[2])


def relaxed_table(platform: Platform, G: Array, tau_m, dt: float, tilt: float = AXIS_TILT) -> RelaxedHover:
    """Every single rotor loss's :class:`RelaxedHover`, stacked on a leading axis ``(n_rotors, ...)``."""
    designs = [relaxed_design(platform, G, j, tau_m, dt, tilt) for j in range(G.shape[1])]
    return jax.tree.map(lambda *xs: jnp.stack(xs), *designs)


def relaxed_command(table: RelaxedHover, lost, omega: Array, d: Array, rotor_speed: Array, thrust_scale
                    ) -> Float[Array, " n"]:
    """``(n,)`` commanded inputs ``u = w_cmd^2`` [rad^2/s^2] of the relaxed hover after losing rotor ``lost``.

    ``w_cmd = k w_bar - K (x - x_bar(k))``, ``k = sqrt(thrust_scale)``, the equilibrium's rotor speeds and spin scaled by ``k`` (the equilibrium's scaling), with ``x = (omega, d_x, d_y, w_r)``: ``omega`` the body
    rate, ``d`` the unit direction of the desired force in the body frame, ``rotor_speed`` ``(n,)`` the measured
    speeds; ``thrust_scale`` = desired force / weight. The lost rotor is commanded 0.
    """
    row = jax.tree.map(lambda a: a[lost], table)
    k = jnp.sqrt(jnp.maximum(thrust_scale, 0.0))
    x = jnp.concatenate([omega, d[:2], rotor_speed[row.keep]])
    x_bar = row.x_bar.at[5:].multiply(k).at[:3].multiply(k)
    w_cmd = k * row.w_bar - row.K @ (x - x_bar)
    w_cmd = jnp.maximum(w_cmd, 0.0)
    # the collective as asked: the equilibrium thrust times thrust_scale, whatever the feedback did to it
    c = row.c_f
    w_cmd = w_cmd * jnp.sqrt(thrust_scale * jnp.sum(c * row.w_bar**2) / jnp.maximum(jnp.sum(c * w_cmd**2), 1e-30))
    return jnp.zeros_like(rotor_speed).at[row.keep].set(w_cmd**2)
