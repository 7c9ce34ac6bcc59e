"""Small helpers shared across jaxrotor modules (private)."""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import Array


def as_float(x) -> Array:
    """``x`` as a JAX array of the default float type (float64 with x64 enabled, else float32)."""
    return jnp.asarray(x, dtype=jnp.result_type(float))


def vec3(value, owner: str, name: str, fix: str) -> Array:
    """``value`` as a ``(3,)`` float array (a scalar broadcast to all three), else a ``ValueError`` naming
    ``owner``'s parameter ``name``, its shape and ``fix``."""
    x = as_float(value)
    if x.ndim == 0:
        x = jnp.full((3,), x)
    if x.shape != (3,):
        raise ValueError(f"{owner} parameter `{name}` has shape {x.shape}. Fix: {fix}.")
    return x


def to_jsonable(v: Any) -> Any:
    """Plain Python for ``json.dumps``: NumPy scalars and arrays to numbers and lists, non-finite floats to
    ``None``, objects with ``to_dict()`` to dicts, containers recursively."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, np.ndarray):
        return to_jsonable(v.tolist())
    if isinstance(v, dict):
        return {k: to_jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_jsonable(x) for x in v]
    if hasattr(v, "to_dict"):
        return v.to_dict()
    return v
