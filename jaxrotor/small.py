"""Small dense algebra written out as broadcast multiply-adds: no ``dot``, no ``reduce``.

The step of a closed-loop flight multiplies 3 x 3 matrices, 3-vectors and ``6 x n`` allocation matrices.
Written with ``@``, each product is an XLA ``dot`` (a kernel of its own that no fusion crosses); under
``vmap`` over many flights it becomes a batched product of tiny matrices, with transposes around it. Written
out as sums of elementwise products over the (static, small) contracted axis, the same arithmetic is
elementwise work on the batch that XLA fuses with what comes before and after it, and that it vectorises
over the members. Every function takes the operands' last axes as the matrix axes (leading axes broadcast,
as ``jnp.matmul`` does), and sums in the order ``k = 0, 1, ...`` of the contracted index.

:data:`DOTS` set to True makes every function here ``jnp.matmul`` again (the layout before; what
``experiments/benchmark_layout.py`` measures against: set it before a function is traced, and call
``jax.clear_caches()`` when switching it in one process).
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

__all__ = ["DOTS", "dot", "mm", "mtm", "mtv", "mv", "total"]

#: False (default): the products written out; True: ``jnp.matmul`` (XLA ``dot``), for comparison.
DOTS = False


def _agree(name: str, a, b) -> None:
    if a != b:
        raise ValueError(f"small.{name}: the contracted axes differ ({a} against {b}). Fix: pass operands whose "
                         "contracted dimensions agree, as for `@`.")


def total(terms):
    """``terms[0] + terms[1] + ...`` (left to right)."""
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def mv(A: Float[Array, "... m k"], x: Float[Array, "... k"]) -> Float[Array, "... m"]:
    """``A x`` ``(..., m)``: ``sum_k A[..., :, k] x[..., k]``."""
    _agree("mv", A.shape[-1], x.shape[-1])
    if DOTS:
        return jnp.matmul(A, x[..., None])[..., 0]
    return total([A[..., :, k] * x[..., k, None] for k in range(A.shape[-1])])


def mm(A: Float[Array, "... m k"], B: Float[Array, "... k n"]) -> Float[Array, "... m n"]:
    """``A B`` ``(..., m, n)``: ``sum_k A[..., :, k, None] B[..., None, k, :]``."""
    _agree("mm", A.shape[-1], B.shape[-2])
    if DOTS:
        return jnp.matmul(A, B)
    return total([A[..., :, k, None] * B[..., None, k, :] for k in range(A.shape[-1])])


def dot(a: Float[Array, "... k"], b: Float[Array, "... k"]) -> Float[Array, "..."]:
    """``a . b``: ``sum_k a[..., k] b[..., k]``."""
    _agree("dot", a.shape[-1], b.shape[-1])
    if DOTS:
        return jnp.matmul(a[..., None, :], b[..., :, None])[..., 0, 0]
    return total([a[..., k] * b[..., k] for k in range(a.shape[-1])])


def mtv(A: Float[Array, "... k m"], x: Float[Array, "... k"]) -> Float[Array, "... m"]:
    """``A^T x`` ``(..., m)``: ``sum_k A[..., k, :] x[..., k]`` (no transpose is formed)."""
    _agree("mtv", A.shape[-2], x.shape[-1])
    if DOTS:
        return jnp.matmul(jnp.swapaxes(A, -1, -2), x[..., None])[..., 0]
    return total([A[..., k, :] * x[..., k, None] for k in range(A.shape[-2])])


def mtm(A: Float[Array, "... k m"], B: Float[Array, "... k n"]) -> Float[Array, "... m n"]:
    """``A^T B`` ``(..., m, n)``: ``sum_k A[..., k, :, None] B[..., k, None, :]`` (no transpose is formed)."""
    _agree("mtm", A.shape[-2], B.shape[-2])
    if DOTS:
        return jnp.matmul(jnp.swapaxes(A, -1, -2), B)
    return total([A[..., k, :, None] * B[..., k, None, :] for k in range(A.shape[-2])])
