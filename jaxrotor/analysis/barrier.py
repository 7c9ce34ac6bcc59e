"""One smooth linear-program solver: a log-barrier central point with an implicit-function gradient.

Every differentiable capability measure of :mod:`jaxrotor.analysis` is the
optimum of a small linear program whose data depend on the design. The linear
program

    ``max c . z   s.t.  z in z_0 + range(P)  (equalities),   g_k . z >= h_k  (k with mask_k)``

is replaced by its log-barrier central point

    ``z*(t) = argmax  t c . z + sum_k mask_k log(g_k . z - h_k)``

on the affine set, which undershoots the LP optimum by at most ``sum_k mask_k / t``
and is a smooth function of the data. :func:`barrier_lp` follows the path
``t_1 < t_2 < ...`` (:func:`barrier_schedule`) with damped Newton steps
``dy / (1 + lambda)`` (``lambda`` the Newton decrement), which keep every iterate
strictly feasible because the barrier is self-concordant. The path runs on
constants (no derivative is traced through the iterations); one full Newton step
from the converged point with live data then returns the value, and the
derivative of that step is the implicit-function derivative of the central
point, so gradients are exact for the smooth function at the cost of one solve.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array


def null_projector(C: Array) -> Array:
    """Orthogonal projector ``I - C^+ C`` onto ``ker C``: ``(N, N)`` for ``C`` of shape ``(k, N)``."""
    return jnp.eye(C.shape[1], dtype=C.dtype) - jnp.linalg.pinv(C) @ C


def barrier_schedule(t_max, stages: int, newton_steps: int, dtype) -> Array:
    """Barrier weights ``t_max 10^-(stages-1), ..., t_max``, each repeated ``newton_steps`` times: ``(stages * newton_steps,)``."""
    ts = jnp.asarray(t_max).astype(dtype) * 10.0 ** jnp.arange(-(stages - 1), 1, dtype=dtype)
    return jnp.repeat(ts, newton_steps)


def barrier_lp(c: Array, g: Array, h: Array, mask: Array, z0: Array, P: Array, y0: Array, t_schedule: Array) -> Array:
    """Smooth optimum ``c . z*(t_last)`` of ``max c.z`` on ``z0 + range(P)`` with ``g z >= h`` (log barrier).

    Args:
        c: ``(N,)`` objective.
        g: ``(K, N)`` inequality rows; ``h``: ``(K,)`` right-hand sides (any finite value where masked off).
        mask: ``(K,)`` boolean; rows with ``False`` are ignored (e.g. infinite upper bounds).
        z0: ``(N,)`` a point of the affine equality set.
        P: ``(N, N)`` projector onto the directions of the equality set (:func:`null_projector`).
        y0: ``(N,)`` start offset (no gradient): ``z0 + P y0`` must satisfy every active inequality strictly.
        t_schedule: ``(S,)`` barrier weights, one damped Newton step each (:func:`barrier_schedule`).

    Returns:
        ``()`` the barrier optimum's objective, below the LP optimum by at most ``sum(mask) / t_schedule[-1]``;
        NaN if the start is not strictly feasible.
    """
    N = z0.shape[0]
    eye = jnp.eye(N, dtype=z0.dtype)

    def newton(y, t, c_, g_, h_, z0_, P_):
        z = z0_ + P_ @ y
        s = jnp.where(mask, g_ @ z - h_, 1.0)  # slacks
        r = jnp.where(mask, 1.0 / s, 0.0)
        grad = -t * c_ - g_.T @ r  # of psi = -t c.z - sum log(s)
        H = g_.T @ ((r**2)[:, None] * g_)
        gy = P_ @ grad
        Hy = P_ @ H @ P_ + (eye - P_)
        dy = -jnp.linalg.solve(Hy, gy)
        lam = jnp.sqrt(jnp.maximum(-(gy @ dy), 0.0))
        return dy, lam

    consts = jax.lax.stop_gradient((c, g, h, z0, P))

    def body(y, t):
        dy, lam = newton(y, t, *consts)
        return y + dy / (1.0 + lam), None  # damped Newton: stays strictly feasible

    y_star, _ = jax.lax.scan(body, jax.lax.stop_gradient(y0), t_schedule)
    y_star = jax.lax.stop_gradient(y_star)
    # one full Newton step with live data: its derivative is the implicit-function derivative
    dy, _ = newton(y_star, t_schedule[-1], c, g, h, z0, P)
    return c @ (z0 + P @ (y_star + dy))
