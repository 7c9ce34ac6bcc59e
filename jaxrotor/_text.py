"""Numbers as text for tables and pages (no JAX: the command line imports this at start-up)."""

from __future__ import annotations

import math

__all__ = ["format_value"]


def format_value(v, digits: int = 4) -> str:
    """``v`` as a table cell: ``-`` for ``None``, ``yes``/``no`` for a bool, an int as it is, a float to ``digits``
    significant digits (``n/a`` for NaN, ``inf``/``-inf``), anything else as ``str(v)``."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.{digits}g}"
    return str(v)
