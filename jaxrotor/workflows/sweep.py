"""Parameter sweeps: one flight flown at many points of its parameters, in chunks, over every device.

A sweep is a flight configuration (the tables of :mod:`jaxrotor.io.config`) plus a
``[sweep]`` table over dotted parameter paths of the
:class:`~jaxrotor.optimize.Design` ``(platform, controller, flight)`` -- the same
paths as ``[parameters]`` of ``jaxrotor optimize``
(:meth:`jaxrotor.optimize.Parameters.select`)::

    [sweep]
    kind = "grid"                     # grid | random | lhs (Latin hypercube)
    points = 400                      # random / lhs: number of points (grid: the product of the axes' points)
    seed = 0                          # random / lhs
    chunk = 100                       # members per compiled call (default: all points, if memory allows)
    metric = "rmse_position"          # the flight metric drawn in the figures

    [sweep.parameters."platform.alpha"]   # a path naming a scalar, an array (every entry set
    lower = 0.0                           # to the value) or one entry: "controller.K_p[2]"
    upper = 1.0
    points = 20                           # grid only

    [objective.endurance]                 # optional: objective terms reported as columns, the same
    mode = "profile"                      # [objective.<name>] tables as jaxrotor optimize / tune

:func:`load_sweep` reads and checks everything before anything is compiled (unknown
path, ``lower > upper``, zero points, a chunk whose estimated memory exceeds what the
device has: each a :class:`~jaxrotor.io.toml.ConfigError` naming the key, the value and
the fix). :func:`run_sweep` flies the points chunk by chunk with
:func:`jaxrotor.batch.map_batch` (``vmap`` of one compiled flight, the batch sharded
over ``jax.devices()``, which spans every process after ``jax.distributed.initialize``),
writes each finished chunk to ``OUT/chunks/chunk_NNNNN.npz`` (a rerun skips the chunks
whose file holds the same points) and finally ``OUT/sweep.csv``: one row per point with
its parameters, every metric of :func:`jaxrotor.metrics.flight_metrics`
(:meth:`~jaxrotor.metrics.FlightMetrics.to_dict` keys; a ``(3,)`` metric gives
columns ``name[0..2]``; a flight with an electric motor adds the electrical metrics,
:data:`~jaxrotor.metrics.ELECTRICAL_KEYS`), with ``[objective.*]`` tables the objective's
cost ``objective`` and every term's measure ``objective.<name>`` (e.g.
``objective.endurance`` [s], :mod:`jaxrotor.io.optimize_config`; ``metric`` may name these
columns), ``diverged`` and ``verdict``: ``ok`` or the raised reasons
joined by ``;`` (:mod:`jaxrotor.verdict` with the flight's ``[flight]`` thresholds; the
reasons measured in flight, ``diverged``, ``lost_tracking``, ``saturated``: the
linearised stability and the hover feasibility are a design's, reported by
``jaxrotor analyze``). A diverged point is a row with ``diverged = True``, a failed one
a row with its verdict, never an exception. Figures: the metric against the parameter
(one axis) or a heat map over the two first axes (a grid: one cell per point, centred on its
values; random / Latin hypercube points: a scatter), each axis labelled with the parameter's
path and unit (:func:`jaxrotor.io.sweep_plot.axis_label`, e.g. ``platform.alpha [rad]``: the
values as swept) and the metric with its unit.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from .. import batch as _batch
from ..loop import fly
from ..io.config import FlightConfig
from ..io.config import from_dict as flight_from_dict
from ..io.toml import Table, read_toml
from ..metrics import ELECTRICAL_KEYS, ElectricalMetrics, FlightMetrics, flight_metrics
from ..optimize.parameters import Parameters, rederive
from ..optimize.problem import Design
from ..verdict import VerdictMeasures, VerdictThresholds, decide, verdict_measures

__all__ = [
    "SWEEP_KINDS",
    "SweepAxis",
    "SweepConfig",
    "SweepRunner",
    "SweepSpec",
    "load_sweep",
    "loads_sweep",
    "metric_columns",
    "objective_columns",
    "run_sweep",
    "sweep_from_dict",
    "sweep_points",
]

#: ``[sweep] kind`` choices.
SWEEP_KINDS = ("grid", "random", "lhs")

_INDEX = re.compile(r"^(?P<path>[^\[\]]+)(\[(?P<index>[0-9, ]+)\])?$")


@dataclasses.dataclass(frozen=True)
class SweepAxis:
    """One swept parameter.

    Attributes:
        path: dotted path into the design (``"platform.alpha"``), optionally with an entry
            index (``"controller.K_p[2]"``).
        lower, upper: the range, in the parameter's units (``lower <= upper``).
        points: grid points on this axis (grid sweeps; ``lower`` and ``upper`` included).
    """
    path: str
    lower: float
    upper: float
    points: int = 0


@dataclasses.dataclass(frozen=True)
class SweepSpec:
    """How the points are drawn.

    Attributes:
        axes: the swept parameters.
        kind: ``"grid"`` (Cartesian product of ``linspace(lower, upper, points)`` per axis, the
            first axis varying slowest), ``"random"`` (uniform in the box) or ``"lhs"`` (Latin
            hypercube: each axis cut into ``points`` equal strata, one point per stratum, strata
            paired at random across axes).
        points: the number of points (random / lhs).
        seed: seed of ``numpy.random.default_rng`` (random / lhs).
    """
    axes: tuple[SweepAxis, ...]
    kind: str = "grid"
    points: int = 0
    seed: int = 0

    @property
    def size(self) -> int:
        """Number of points."""
        return math.prod(a.points for a in self.axes) if self.kind == "grid" else self.points


def sweep_points(spec: SweepSpec) -> np.ndarray:
    """``(N, d)`` parameter values of the sweep, float64, one column per axis (see :class:`SweepSpec`)."""
    lo = np.array([a.lower for a in spec.axes], dtype=float)
    hi = np.array([a.upper for a in spec.axes], dtype=float)
    if spec.kind == "grid":
        axes = [np.linspace(a.lower, a.upper, a.points) for a in spec.axes]
        return np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], axis=-1)
    rng = np.random.default_rng(spec.seed)
    n, d = spec.points, len(spec.axes)
    if spec.kind == "random":
        unit = rng.random((n, d))
    else:  # lhs: stratum k of axis j holds exactly one point
        unit = np.stack([(rng.permutation(n) + rng.random(n)) / n for _ in range(d)], axis=-1)
    return lo + (hi - lo) * unit


@dataclasses.dataclass
class SweepConfig:
    """A loaded sweep: the flight, the axes and the run settings.

    Attributes:
        name: run name (default output folder ``jaxrotor-out/<name>``).
        flight_config: the :class:`~jaxrotor.io.config.FlightConfig` flown at every point.
        spec: the :class:`SweepSpec`.
        chunk: members per compiled call.
        metric: the metric drawn in the figures (a :class:`~jaxrotor.metrics.FlightMetrics` field, an electrical
            metric of an electric flight, or an objective column).
        source: where it came from.
        runner: the :class:`SweepRunner` built (and checked) at load time.
        objective: the objective of the ``[objective.*]`` tables (its cost and measures become columns), or ``None``.
    """
    name: str
    flight_config: FlightConfig
    spec: SweepSpec
    chunk: int
    metric: str = "rmse_position"
    source: str = "<dict>"
    runner: SweepRunner | None = dataclasses.field(default=None, repr=False)
    objective: Any = None

    @property
    def design(self) -> Design:
        """The base :class:`~jaxrotor.optimize.Design` the points modify."""
        fc = self.flight_config
        return Design(fc.platform, fc.controller, fc.flight)


def _member_columns(params: Parameters, design, axes) -> list[np.ndarray]:
    """For each axis, the indices into the selected-parameter vector it sets (raises ``ValueError``)."""
    names = params.names(design)
    cols = []
    for axis in axes:
        m = _INDEX.match(axis.path)
        if m.group("index") is not None:
            want = f"{m.group('path')}[{','.join(s.strip() for s in m.group('index').split(','))}]"
            idx = [i for i, n in enumerate(names) if n == want]
            if not idx:
                have = [n for n in names if n.startswith(m.group("path") + "[")]
                raise ValueError(f"parameter path `{axis.path}`: no such entry. Fix: use one of "
                                 f"{', '.join(have) or m.group('path')}.")
        else:
            p = axis.path
            idx = [i for i, n in enumerate(names) if n == p or n.startswith((p + ".", p + "["))]
        cols.append(np.asarray(idx, dtype=int))
    return cols


def objective_columns(objective) -> list[str]:
    """The CSV columns of an objective: ``objective`` (its cost, what ``jaxrotor optimize`` minimises) and
    ``objective.<name>`` per leaf term (its measure in its units: :meth:`AbstractTerm.measure_names`)."""
    if objective is None:
        return []
    return ["objective"] + [f"objective.{n}" for n in objective.measure_names()]


def _objective_values(objective, design, traj) -> dict:
    """``{column: ()}`` of :func:`objective_columns` for one flown member (``{}`` without an objective)."""
    if objective is None:
        return {}
    cost, parts = objective.evaluate(design, traj if objective.needs_flight else None)
    return {"objective": cost, **{f"objective.{k}": v for k, v in parts.items()}}


def _available_bytes() -> float:
    """Memory a chunk may use: the device's limit (GPU) or the host's available memory (CPU) [bytes]."""
    stats = jax.local_devices()[0].memory_stats() or {}
    if "bytes_limit" in stats:
        return float(stats["bytes_limit"]) - float(stats.get("bytes_in_use", 0))
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    import os

    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


class SweepRunner:
    """The compiled-once function of a sweep: parameter values -> :class:`~jaxrotor.metrics.FlightMetrics`,
    :class:`~jaxrotor.verdict.VerdictMeasures` (measured with ``thresholds``, default
    :class:`~jaxrotor.verdict.VerdictThresholds`) and the objective's columns (``{}`` without ``objective``:
    ``objective`` the cost and ``objective.<name>`` every term's measure, :func:`objective_columns`).

    A fixed-step flight is flown with its Runge-Kutta stages written out
    (``Integrator(unroll=True)``: longer compilation, fastest run). ``runner(values)`` with ``values`` ``(B, d)`` flies ``B`` members (``vmap``; sharded over
    ``mesh`` when given) and returns their metrics with a leading batch axis. Every chunk of
    the same size reuses one compilation.

    Attributes:
        design: the base design. axes: the swept axes. parameters: the selected leaves.
        objective: the objective term reported (``None``: none).
    """

    def __init__(self, design: Design, axes, mesh=None, thresholds: VerdictThresholds | None = None,
                 objective=None):
        design.flight.check(design.platform, design.controller)  # before compiling: rank, tilt settings
        integ = design.flight.integrator
        if not integ.adaptive and integ.scan and integ.unroll is not True:  # compiled once, flown many times: unroll
            design = eqx.tree_at(lambda d: d.flight.integrator, design, dataclasses.replace(integ, unroll=True))
        self.design, self.axes, self.mesh, self.objective = design, tuple(axes), mesh, objective
        self.thresholds = thresholds = thresholds if thresholds is not None else VerdictThresholds()
        paths = {}
        for axis in self.axes:
            paths[_INDEX.match(axis.path).group("path")] = None
        self.parameters = Parameters.select(design, paths)
        self.columns = _member_columns(self.parameters, design, self.axes)
        selected, rest = self.parameters.partition(design)
        vec0, unravel = ravel_pytree(selected)
        columns = self.columns
        self._shared = (vec0, rest)  # arguments of the compiled sweep, not constants inside it

        def member(values, shared):
            vec, rest = shared
            for j, idx in enumerate(columns):
                vec = vec.at[idx].set(values[j].astype(vec.dtype))
            d = rederive(eqx.combine(unravel(vec), rest))  # a swept arm length moves the mass model
            traj = fly(d.platform, d.controller, d.flight)
            return (flight_metrics(traj, d.platform, d.flight), verdict_measures(traj, d.platform, d.flight, thresholds),
                    _objective_values(objective, d, traj))

        self._member: Callable = member

    def member_bytes(self) -> int:
        """Estimated memory of one member [bytes]: its trajectory and metrics (traced shapes, nothing compiled)."""
        d = self.design
        leaves = jax.tree_util.tree_leaves(jax.eval_shape(lambda x: fly(x.platform, x.controller, x.flight), d))
        return int(sum(math.prod(x.shape) * np.dtype(x.dtype).itemsize for x in leaves))

    def __call__(self, values) -> tuple[FlightMetrics, VerdictMeasures, dict]:
        """Metrics, verdict measures and objective columns of the members ``values`` ``(B, d)`` (leading batch
        axis ``B``)."""
        values = jnp.asarray(values, dtype=jnp.result_type(float))
        return _batch.map_batch(self._member, values, self.mesh, shared=self._shared)


def _check_chunk(t: Table, chunk: int, runner: SweepRunner, factor: float = 4.0) -> None:
    member = runner.member_bytes()
    need = chunk * member * factor
    have = _available_bytes()
    if need > have:
        fit = max(1, int(have / (member * factor)))
        raise t.fail("chunk", chunk, f"{chunk} members need about {need / 2**30:.2f} GiB "
                     f"({member / 2**20:.2f} MiB of trajectory each, x{factor:g} for the solver's "
                     f"work), more than the {have / 2**30:.2f} GiB available", f"use chunk <= {fit} (or a longer "
                     "[flight] save_dt)")


def _axes_from(t: Table, kind: str) -> tuple[SweepAxis, ...]:
    if not t.data:
        raise t.error("missing table [sweep.parameters]. Fix: add e.g. [sweep.parameters.\"platform.alpha\"] with "
                      "lower = 0.0, upper = 1.0" + (", points = 20." if kind == "grid" else "."))
    axes = []
    for path in list(t.data):
        a = t.table(path)
        if not _INDEX.match(path):
            raise t.fail(path, a.data, "not a dotted parameter path", "write e.g. \"platform.alpha\" or "
                         "\"controller.K_p[2]\"")
        lo = a.number("lower", fix="the range's lower end in the parameter's units")
        hi = a.number("upper", fix="the range's upper end in the parameter's units")
        if lo > hi:
            raise a.fail("lower", lo, f"it is above upper = {hi}", "give lower <= upper")
        n = 0
        if kind == "grid":
            n = a.integer("points", fix="the number of grid points on this axis, e.g. 20")
            if n < 1:
                raise a.fail("points", n, "a grid axis needs at least one point", "give points >= 1")
            if n > 1 and lo == hi:
                raise a.fail("points", n, f"the range [{lo}, {hi}] is a single value", "give points = 1 or widen it")
        a.check_unknown()
        axes.append(SweepAxis(path, lo, hi, n))
    return tuple(axes)


def sweep_from_dict(data: dict, source: str = "<dict>", base_dir: Path | None = None, mesh=None,
                    check_memory: bool = True, t1: float | None = None) -> SweepConfig:
    """Build a :class:`SweepConfig` from a parsed TOML mapping (see the module docstring).

    Everything is checked here, before any compilation. ``t1`` [s], if given, ends every
    flight there instead of ``[flight] t1``. ``mesh``: the device mesh the runner shards
    over (default: every device when there are several). ``check_memory=False`` skips the
    chunk's memory estimate.

    Raises:
        ConfigError: naming the file, the key, the value and the fix.
    """
    top = Table(data, source, "")
    if "sweep" not in data:
        raise top.error("missing table [sweep]. Fix: add [sweep] with kind = \"grid\" and "
                        "[sweep.parameters.\"platform.alpha\"] with lower, upper, points.")
    t = top.table("sweep")
    conf = flight_from_dict({k: v for k, v in data.items() if k not in ("sweep", "objective")}, source, base_dir)
    if conf.compare is not None:
        raise top.fail("compare", data.get("compare"), "a sweep flies one flight at many points", "remove it")
    if t1 is not None:
        try:
            conf = conf.with_t1(t1)
        except ValueError as err:
            raise top.error(f"t1 = {t1}: {err}") from None
    kind = t.choice("kind", SWEEP_KINDS, "grid")
    axes = _axes_from(t.table("parameters"), kind)
    if kind == "grid":
        if "points" in t:
            raise t.fail("points", t.data["points"], "a grid's size is the product of its axes' points",
                         "give points in each [sweep.parameters.\"...\"] table instead")
        spec = SweepSpec(axes, "grid")
    else:
        n = t.integer("points", fix="the number of points, e.g. 400")
        if n < 1:
            raise t.fail("points", n, "a sweep needs at least one point", "give points >= 1")
        spec = SweepSpec(axes, kind, n, t.integer("seed", 0))
    objective = None
    if "objective" in data:  # the terms' measures as columns (read, and checked against the design, as optimize does)
        from ..io.optimize_config import objective_from_table

        objective = objective_from_table(top.table("objective"), Design(conf.platform, conf.controller, conf.flight))
    names = [f.name for f in dataclasses.fields(FlightMetrics) if f.name not in ("diverged", "electrical")]
    if conf.flight.actuators.motor.draws_current():
        names += list(ELECTRICAL_KEYS)
    metric = t.choice("metric", names + objective_columns(objective), "rmse_position")
    chunk = t.integer("chunk", None, fix="members per compiled call, e.g. 100")
    if chunk is not None and chunk < 1:
        raise t.fail("chunk", chunk, "a chunk needs at least one member", "give chunk >= 1")
    t.check_unknown()
    try:
        runner = SweepRunner(Design(conf.platform, conf.controller, conf.flight), axes, mesh, conf.thresholds,
                             objective)
    except ValueError as err:
        raise t.error(f"[sweep.parameters]: {err}") from None
    chunk_given = chunk is not None
    chunk = spec.size if chunk is None else chunk
    if check_memory:
        if chunk_given:
            _check_chunk(t, chunk, runner)
        else:  # the default chunk shrinks to what fits
            fit = max(1, int(_available_bytes() / (runner.member_bytes() * 4.0)))
            chunk = min(chunk, fit)
    return SweepConfig(name=conf.name, flight_config=conf, spec=spec, chunk=chunk, metric=metric, source=source,
                       runner=runner, objective=objective)


def loads_sweep(text: str, source: str = "<string>", **kw) -> SweepConfig:
    """Parse TOML text into a :class:`SweepConfig`."""
    from ..io.toml import parse_toml

    return sweep_from_dict(parse_toml(text, source), source, **kw)


def load_sweep(path: str | Path, **kw) -> SweepConfig:
    """Load a TOML sweep configuration file (see the module docstring)."""
    path = Path(path)
    return sweep_from_dict(read_toml(path), str(path), path.parent, **kw)


def metric_columns(metrics: dict) -> list[str]:
    """CSV column names of one flight's :meth:`~jaxrotor.metrics.FlightMetrics.to_dict`: ``name`` or ``name[i]``."""
    cols = []
    for k, v in metrics.items():
        cols.extend([f"{k}[{i}]" for i in range(len(v))] if isinstance(v, list) else [k])
    return cols


def _rows(metrics: FlightMetrics, measures: VerdictMeasures, objective: dict, n: int, thresholds: VerdictThresholds,
          tracks_attitude: bool) -> list[dict]:
    out = []
    for i in range(n):
        m = jax.tree_util.tree_map(lambda x, i=i: x[i], metrics).to_dict()
        row = {}
        for k, v in m.items():
            if isinstance(v, list):
                row.update({f"{k}[{j}]": x for j, x in enumerate(v)})
            else:
                row[k] = v
        verdict = decide(jax.tree_util.tree_map(lambda x, i=i: x[i], measures), thresholds,
                         tracks_attitude=tracks_attitude)
        row.update({k: float(np.asarray(v)[i]) for k, v in objective.items()})
        row["verdict"] = "ok" if verdict.ok else ";".join(verdict.reasons)
        out.append(row)
    return out


def run_sweep(config: SweepConfig, out_dir: str | Path, progress: bool = True, echo: Callable = print,
              mesh=None, figures: bool = True) -> dict:
    """Fly every point of ``config`` chunk by chunk; write ``chunks/``, ``sweep.csv`` and the figures.

    A chunk already on disk with the same points is not flown again. With several
    processes every process runs this function; the batch is sharded over all their
    devices and process 0 writes the files.

    Returns:
        ``{"csv": path, "figures": [paths], "points": N, "diverged": count, "failed": count of rows whose
        verdict is not ok, "chunks_flown": k, "chunks_skipped": s, "rows": [row dicts]}``.
    """
    from tqdm.auto import tqdm

    out = Path(out_dir)
    chunks_dir = out / "chunks"
    writer = jax.process_index() == 0
    if writer:
        chunks_dir.mkdir(parents=True, exist_ok=True)
    runner = config.runner
    if runner is None or mesh is not None:
        runner = SweepRunner(config.design, config.spec.axes, mesh if mesh is not None else _default_mesh(),
                             config.flight_config.thresholds, config.objective)
    elif runner.mesh is None:
        runner.mesh = _default_mesh()
    points = sweep_points(config.spec)
    n, c = len(points), config.chunk
    starts = list(range(0, n, c))
    columns = objective_columns(config.objective)
    done = np.array([_chunk_done(chunks_dir / f"chunk_{k:05d}.npz", points[s:s + c], columns)
                     for k, s in enumerate(starts)])
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        done = np.asarray(multihost_utils.broadcast_one_to_all(done))
    rows: list[dict] = []
    flown = 0
    tracks = bool(config.flight_config.controller.tracks_attitude)
    bar = tqdm(total=n, disable=not progress, desc=f"sweep {config.name}", unit="pt")
    for k, s in enumerate(starts):
        path = chunks_dir / f"chunk_{k:05d}.npz"
        vals = points[s:s + c]
        if not done[k]:
            padded = np.concatenate([vals, np.repeat(vals[-1:], c - len(vals), axis=0)]) if len(vals) < c else vals
            metrics, measures, objective = _head(runner(padded), len(vals))
            if writer:
                arrays = {f"m_{f.name}": np.asarray(getattr(metrics, f.name)) for f in dataclasses.fields(metrics)
                          if f.name != "electrical"}
                if metrics.electrical is not None:  # the electrical metrics, one array each
                    arrays.update({f"e_{k}": np.asarray(getattr(metrics.electrical, k)) for k in ELECTRICAL_KEYS})
                arrays.update({f"v_{f.name}": np.asarray(getattr(measures, f.name))
                               for f in dataclasses.fields(measures)})
                arrays.update({f"o_{k}": np.asarray(v) for k, v in objective.items()})
                tmp = path.with_suffix(".tmp.npz")
                np.savez(tmp, points=vals, **arrays)
                tmp.replace(path)
            flown += 1
        else:
            metrics, measures, objective = _load_chunk(path, columns)
        rows.extend(_rows(metrics, measures, objective, len(vals), runner.thresholds, tracks))
        bar.update(len(vals))
    bar.close()
    names = [_INDEX.match(a.path).group(0) for a in config.spec.axes]
    table = [{**dict(zip(names, map(float, p))), **r} for p, r in zip(points, rows)]
    diverged = sum(bool(r["diverged"]) for r in table)
    failed = sum(r["verdict"] != "ok" for r in table)
    result = {"csv": out / "sweep.csv", "figures": [], "points": n, "diverged": diverged, "failed": failed,
              "chunks_flown": flown, "chunks_skipped": int(done.sum()), "rows": table}
    if writer:
        cols = names + [k for k in table[0] if k not in names]
        with open(out / "sweep.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            w.writerows(table)
        if figures:
            result["figures"] = _figures(config, points, table, out)
    echo(f"sweep {config.name}: {n} points ({flown} chunks flown, {int(done.sum())} reused), {diverged} diverged, "
         f"{failed} with a raised verdict (column verdict)"
         + (f"; wrote {out / 'sweep.csv'}" if writer else ""))
    return result


def _head(metrics, n: int):
    """The first ``n`` members of a batch of metrics (any pytree), as numpy arrays (a padded chunk's real members)."""
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[:n], metrics)


def _default_mesh():
    return _batch.batch_mesh() if jax.device_count() > 1 else None


def _chunk_done(path: Path, vals: np.ndarray, columns: list[str] = ()) -> bool:
    """Whether ``path`` holds the chunk of the points ``vals`` with every verdict measure and objective column (a
    chunk written by an older version, with an object array for the electrical metrics, is flown again)."""
    if not path.is_file():
        return False
    try:
        with np.load(path) as z:
            return (z["points"].shape == vals.shape and bool(np.array_equal(z["points"], vals))
                    and all(f"v_{f.name}" in z for f in dataclasses.fields(VerdictMeasures))
                    and all(f"o_{c}" in z for c in columns) and "m_electrical" not in z.files)
    except (OSError, ValueError, KeyError):
        return False


def _load_chunk(path: Path, columns: list[str] = ()) -> tuple[FlightMetrics, VerdictMeasures, dict]:
    with np.load(path) as z:
        electrical = (ElectricalMetrics(**{k: z[f"e_{k}"] for k in ELECTRICAL_KEYS})
                      if all(f"e_{k}" in z for k in ELECTRICAL_KEYS) else None)
        fields = [f.name for f in dataclasses.fields(FlightMetrics) if f.name != "electrical"]
        return (FlightMetrics(**{n: z[f"m_{n}"] for n in fields}, electrical=electrical),
                VerdictMeasures(**{f.name: z[f"v_{f.name}"] for f in dataclasses.fields(VerdictMeasures)}),
                {c: z[f"o_{c}"] for c in columns})


def _figures(config: SweepConfig, points: np.ndarray, table: list[dict], out: Path) -> list[Path]:
    """The sweep's figures (module docstring): ``sweep_<metric>.png`` (one axis) or ``sweep_<metric>_heatmap.png``."""
    from ..io.plotting import _plt, save_figure
    from ..io.sweep_plot import axis_label, heatmap, metric_label

    plt = _plt()
    metric = config.metric
    key = metric if metric in table[0] else f"{metric}[0]"
    z = np.array([np.nan if r["diverged"] else float(r[key]) for r in table])
    bad = np.array([bool(r["diverged"]) for r in table])
    axes = config.spec.axes
    labels = [axis_label(config.design, a.path) for a in axes]
    paths = []
    if len(axes) == 1:
        order = np.argsort(points[:, 0])
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(points[order, 0], z[order], "o-", ms=3)
        if bad.any():
            ax.plot(points[bad, 0], np.full(bad.sum(), np.nanmin(z) if np.isfinite(z).any() else 0.0), "rx",
                    label="diverged")
            ax.legend()
        ax.set_xlabel(labels[0])
        ax.set_ylabel(metric_label(key))
        ax.set_title(f"{config.name}: {key}")
        paths.append(save_figure(fig, out / f"sweep_{metric}.png"))
    else:
        from matplotlib.colors import LogNorm

        x, y = points[:, 0], points[:, 1]
        fig, ax = plt.subplots(figsize=(6, 5))
        ok = z[np.isfinite(z)]
        # a metric spanning decades (a tracking error from mm to a runaway) is drawn on a log scale
        norm = LogNorm() if ok.size and ok.min() > 0 and ok.max() > 100 * ok.min() else None
        if config.spec.kind == "grid" and len(axes) == 2:
            grid = z.reshape(axes[0].points, axes[1].points)  # the first axis varies slowest
            xs, ys = x.reshape(grid.shape)[:, 0], y.reshape(grid.shape)[0, :]
            im = heatmap(ax, xs, ys, grid, norm=norm)
        else:
            im = ax.scatter(x, y, c=z, s=18, norm=norm)
        if bad.any():
            ax.plot(x[bad], y[bad], "rx", ms=4, label="diverged")
            ax.legend(loc="upper right")
        fig.colorbar(im, ax=ax, label=metric_label(key))
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
        ax.set_title(f"{config.name}: {key}" + (" (first two axes)" if len(axes) > 2 else ""))
        paths.append(save_figure(fig, out / f"sweep_{metric}_heatmap.png"))
    return paths
