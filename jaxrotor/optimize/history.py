"""``history.csv`` (one row per iteration) and ``checkpoint.eqx`` (the exact loop state) of a run."""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

import equinox as eqx
import jax.numpy as jnp
from jax import Array

__all__ = ["HISTORY_FILE", "CHECKPOINT_FILE", "read_history"]

#: File name of the per-iteration CSV history in a run's output folder.
HISTORY_FILE = "history.csv"
#: File name of the loop checkpoint in a run's output folder.
CHECKPOINT_FILE = "checkpoint.eqx"


class Checkpoint(eqx.Module):
    """Everything the loop needs to continue exactly (saved after every iteration).

    Attributes:
        iteration: ``()`` int, evaluations done.
        theta, opt_state: the next point to evaluate and its optimiser state.
        scale: ``()`` current step scale.
        has_anchor: ``()`` bool, whether a point was accepted.
        anchor_theta, anchor_opt_state, anchor_grad, anchor_value: the last accepted point.
        best_value, best_theta: the best accepted point.
        stale: ``()`` int, iterations since the best loss improved.
    """

    iteration: Array
    theta: Any
    opt_state: Any
    scale: Array
    has_anchor: Array
    anchor_theta: Any
    anchor_opt_state: Any
    anchor_grad: Any
    anchor_value: Array
    best_value: Array
    best_theta: Any
    stale: Array


def template(theta, opt_state) -> Checkpoint:
    """A checkpoint of a fresh run at ``theta`` (also the structure a saved one is read into)."""
    z = jnp.zeros((), jnp.result_type(float))
    return Checkpoint(iteration=jnp.zeros((), jnp.int32), theta=theta, opt_state=opt_state, scale=z,
                      has_anchor=jnp.asarray(False), anchor_theta=theta, anchor_opt_state=opt_state, anchor_grad=theta,
                      anchor_value=z, best_value=z, best_theta=theta, stale=jnp.zeros((), jnp.int32))


def save_checkpoint(path: Path, ckpt: Checkpoint) -> None:
    """Write ``ckpt`` atomically (a temporary file renamed over ``path``)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    eqx.tree_serialise_leaves(tmp, ckpt)
    os.replace(tmp, path)


def load_checkpoint(path: Path, like: Checkpoint) -> Checkpoint | None:
    """Read a checkpoint with the structure of ``like``; ``None`` (and a warning) if it does not match.

    ``eqx.tree_deserialise_leaves`` raises ``RuntimeError`` (``TreePathError`` included)
    when a leaf's shape, dtype or the tree differs, and ``ValueError``/``EOFError`` for a
    truncated file: a checkpoint of another problem or optimiser, or a broken file.
    """
    import warnings

    try:
        return eqx.tree_deserialise_leaves(path, like)
    except (RuntimeError, ValueError, EOFError) as err:
        warnings.warn(f"{path} does not match this problem and optimiser ({type(err).__name__}: {err}); resuming "
                      f"from the last accepted row of {HISTORY_FILE} instead (the optimiser state restarts). Fix: "
                      "resume with the same optimiser, or start over.", stacklevel=3)
        return None


def read_history(path: str | Path) -> list[dict[str, float]]:
    """Rows of a ``history.csv`` as dicts of floats (empty list if the file is missing)."""
    path = Path(path)
    if not path.is_file():
        return []
    with path.open(newline="") as fh:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def read_header(path: Path) -> list[str]:
    """The column names of a ``history.csv``."""
    with path.open(newline="") as fh:
        return next(csv.reader(fh), [])


def _fmt(x) -> str:
    x = float(x)
    return repr(x) if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


class History:
    """Appends one CSV row per iteration, flushed and fsync-ed, so a killed run loses nothing.

    ``keep_rows=None`` starts a new file with the header; otherwise the file is
    rewritten with ``keep_rows`` (dropping rows written after the last checkpoint).
    """

    def __init__(self, path: Path, columns: list[str], keep_rows: list[dict] | None):
        self.path, self.columns = path, columns
        tmp = path.with_suffix(".csv.tmp")
        with tmp.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(columns)
            for row in keep_rows or []:
                w.writerow([_fmt(row.get(c, math.nan)) for c in columns])
        os.replace(tmp, path)

    def append(self, row: dict[str, float]) -> None:
        """Write ``row`` (missing columns as ``nan``) and sync it to disk."""
        with self.path.open("a", newline="") as fh:
            csv.writer(fh).writerow([_fmt(row.get(c, math.nan)) for c in self.columns])
            fh.flush()
            os.fsync(fh.fileno())
