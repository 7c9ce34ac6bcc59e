"""Small dense algebra written out as broadcast multiply-adds: no ``dot``, no ``reduce``.

The step of a closed-loop flight multiplies 3 x 3 matrices, 3-vectors and ``6 x n`` allocation matrices.
Written with ``@``, each product is an XLA ``dot`` (a kernel of its own that no fusion crosses); under
``vmap`` over many flights it becomes a batched product of tiny matrices, with transposes around it. Written
out as sums of elementwise products over the (static, small) contracted axis, the same arithmetic is
elementwise work on the batch that XLA fuses with what comes before and after it, and that it vectorises
over the members. Every function takes the operands' last axes as the matrix axes (leading axes broadcast,
as ``jnp.matmul`` does), and sums in the order ``k = 0, 1, ...`` of the contracted index.

:data:`DOTS` set to True makes every function here ``jnp.matmul`` again (the layout before; what
``experiments/benchmark_loop.py`` measures against, its "batch layout" pair: set it before a function is
traced, and call ``jax.clear_caches()`` when switching it in one process).
"""

from __future__ import annotations

import jax
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


def _written(fn_written, fn_summed):
    """The bilinear product ``fn_written`` (its value, fused) whose derivative is taken with ``fn_summed``.

    ``d(a * b) = da * b + a * db`` with both terms in the summed form (a broadcast product reduced over the
    contracted axis): reverse mode transposes it into another broadcast and sum, whereas the transpose of the
    written-out form pads every slice back into a zero array (measured 1.2x slower gradients). Zero tangents
    stay symbolic (a constant operand adds no term).
    """
    from jax.custom_derivatives import SymbolicZero

    f = jax.custom_jvp(fn_written)

    def jvp(primals, tangents):
        a, b = primals
        da, db = tangents
        y = f(a, b)
        terms = [fn_summed(t, b) for t in (da,) if not isinstance(t, SymbolicZero)]
        terms += [fn_summed(a, t) for t in (db,) if not isinstance(t, SymbolicZero)]
        return y, (total(terms).astype(y.dtype) if terms else jnp.zeros_like(y))

    f.defjvp(jvp, symbolic_zeros=True)
    return f


_mv = _written(lambda A, x: total([A[..., :, k] * x[..., k, None] for k in range(A.shape[-1])]),
               lambda A, x: jnp.sum(A * x[..., None, :], axis=-1))
_mm = _written(lambda A, B: total([A[..., :, k, None] * B[..., None, k, :] for k in range(A.shape[-1])]),
               lambda A, B: jnp.sum(A[..., :, :, None] * B[..., None, :, :], axis=-2))
_dot = _written(lambda a, b: total([a[..., k] * b[..., k] for k in range(a.shape[-1])]),
                lambda a, b: jnp.sum(a * b, axis=-1))
_mtv = _written(lambda A, x: total([A[..., k, :] * x[..., k, None] for k in range(A.shape[-2])]),
                lambda A, x: jnp.sum(A * x[..., :, None], axis=-2))
_mtm = _written(lambda A, B: total([A[..., k, :, None] * B[..., k, None, :] for k in range(A.shape[-2])]),
                lambda A, B: jnp.sum(A[..., :, :, None] * B[..., :, None, :], axis=-3))


def mv(A: Float[Array, "... m k"], x: Float[Array, "... k"]) -> Float[Array, "... m"]:
    """``A x`` ``(..., m)``: ``sum_k A[..., :, k] x[..., k]``."""
    _agree("mv", A.shape[-1], x.shape[-1])
    return jnp.matmul(A, x[..., None])[..., 0] if DOTS else _mv(A, x)


def mm(A: Float[Array, "... m k"], B: Float[Array, "... k n"]) -> Float[Array, "... m n"]:
    """``A B`` ``(..., m, n)``: ``sum_k A[..., :, k, None] B[..., None, k, :]``."""
    _agree("mm", A.shape[-1], B.shape[-2])
    return jnp.matmul(A, B) if DOTS else _mm(A, B)


def dot(a: Float[Array, "... k"], b: Float[Array, "... k"]) -> Float[Array, "..."]:
    """``a . b``: ``sum_k a[..., k] b[..., k]``."""
    _agree("dot", a.shape[-1], b.shape[-1])
    return jnp.matmul(a[..., None, :], b[..., :, None])[..., 0, 0] if DOTS else _dot(a, b)


def mtv(A: Float[Array, "... k m"], x: Float[Array, "... k"]) -> Float[Array, "... m"]:
    """``A^T x`` ``(..., m)``: ``sum_k A[..., k, :] x[..., k]`` (no transpose is formed)."""
    _agree("mtv", A.shape[-2], x.shape[-1])
    return jnp.matmul(jnp.swapaxes(A, -1, -2), x[..., None])[..., 0] if DOTS else _mtv(A, x)


def mtm(A: Float[Array, "... k m"], B: Float[Array, "... k n"]) -> Float[Array, "... m n"]:
    """``A^T B`` ``(..., m, n)``: ``sum_k A[..., k, :, None] B[..., k, None, :]`` (no transpose is formed)."""
    _agree("mtm", A.shape[-2], B.shape[-2])
    return jnp.matmul(jnp.swapaxes(A, -1, -2), B) if DOTS else _mtm(A, B)
