"""Many rollouts at once: stacking designs, ``vmap``, and sharding the batch over devices.

Every jaxrotor function works on one unbatched object; batching is ``jax.vmap``
and scale-out is ``jax.sharding`` over all devices of the process (several hosts:
call ``jax.distributed.initialize()`` on each first; ``jax.devices()`` then lists
every device of the cluster). There is no parallel runtime of jaxrotor's own.

* :func:`stack` turns a list of same-structure Modules (platforms, controllers)
  into one Module whose array leaves have a leading batch axis.
* :func:`unstack` does the reverse (member ``i`` of a batch).
* :func:`batch_mesh` builds a 1-D ``Mesh`` named ``"batch"`` over the devices.
* :func:`map_batch` applies ``fn`` to each member with ``vmap``; with a mesh the
  batch axis is laid out over the devices (``NamedSharding(mesh, P("batch"))``) and
  XLA runs each device's slice locally. The batch is padded to a multiple of the
  number of devices (:func:`pad_to`) and the padding cut off again. The compiled
  ``vmap(fn)`` is kept per ``fn``: calling ``map_batch`` again with the same ``fn``
  and batch shapes (chunks of a sweep) does not recompile.
* On the CPU, the XLA kernels of a closed-loop step are too small to be split over cores: one ``vmap``
  runs on one core whatever the machine has. With one CPU device per core
  (``XLA_FLAGS=--xla_force_host_platform_device_count=<cores>``, set before JAX starts; the ``jaxrotor``
  command sets it by itself, :func:`jaxrotor.cli._setup.cpu_devices_flag`) and no mesh, :func:`map_batch` splits the batch over
  those devices with ``shard_map``, each device flying its part in chunks on its own core.
* Several processes (``jax.distributed.initialize``): every process calls
  :func:`map_batch` with the same whole batch; each places only the rows of its own
  devices (``jax.make_array_from_callback``) and gets the whole result back
  (``multihost_utils.process_allgather``).

Example (CPU, 8 simulated devices)::

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python my_sweep.py
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["CPU_CHUNK", "batch_mesh", "batch_size", "chunk_size", "chunked_vmap", "map_batch", "pad_to", "shard",
           "stack", "unstack"]


def stack(items: Sequence) -> object:
    """Stack same-structure pytrees along a new leading axis (array leaves only; static parts must agree)."""
    items = list(items)
    if not items:
        raise ValueError("stack: `items` is empty. Fix: pass at least one pytree.")
    arrays = [eqx.filter(x, eqx.is_array) for x in items]
    static = eqx.filter(items[0], eqx.is_array, inverse=True)
    treedefs = {jax.tree_util.tree_structure(a) for a in arrays}
    if len(treedefs) != 1:
        raise ValueError("stack: the items differ in structure (e.g. rotor count, angle shapes, static fields). "
                         "Fix: batch only designs of the same structure.")
    stacked = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *arrays)
    return eqx.combine(stacked, static)


def unstack(batch, i: int):
    """Member ``i`` of a stacked pytree."""
    return jax.tree_util.tree_map(lambda x: x[i] if eqx.is_array(x) else x, batch)


def batch_size(batch) -> int:
    """Leading-axis length shared by the array leaves of ``batch``."""
    sizes = {x.shape[0] for x in jax.tree_util.tree_leaves(eqx.filter(batch, eqx.is_array))}
    if len(sizes) != 1:
        raise ValueError(f"batch_size: array leaves have different leading sizes {sorted(sizes)}. "
                         "Fix: stack the batch with jaxrotor.batch.stack.")
    return sizes.pop()


def batch_mesh(devices=None) -> Mesh:
    """1-D device mesh with axis name ``"batch"`` over ``devices`` (default: all of ``jax.devices()``)."""
    devices = jax.devices() if devices is None else list(devices)
    return Mesh(np.asarray(devices), ("batch",))


def pad_to(batch, multiple: int):
    """Pad the batch axis with copies of the last member to a multiple of ``multiple``; returns ``(padded, n)``."""
    n = batch_size(batch)
    extra = (-n) % multiple
    if extra == 0:
        return batch, n
    pad = jax.tree_util.tree_map(
        lambda x: jnp.concatenate([x, jnp.repeat(x[-1:], extra, axis=0)]) if eqx.is_array(x) else x, batch)
    return pad, n


def shard(batch, mesh: Mesh, replicate: bool = False):
    """Place the array leaves of ``batch`` with their leading axis split over ``mesh``'s ``"batch"`` axis.

    ``replicate=True`` places a whole copy on every device instead (arguments shared by all members).
    """
    n_dev = mesh.devices.size
    if not replicate and batch_size(batch) % n_dev:
        raise ValueError(f"shard: batch size {batch_size(batch)} is not a multiple of the {n_dev} devices. "
                         "Fix: pad with jaxrotor.batch.pad_to(batch, n_devices).")
    sharding = NamedSharding(mesh, PartitionSpec() if replicate else PartitionSpec("batch"))
    if jax.process_count() == 1:
        return jax.tree_util.tree_map(lambda x: jax.device_put(x, sharding) if eqx.is_array(x) else x, batch)

    def place(x):  # several processes: each supplies the rows of its own devices from the same whole batch
        if not eqx.is_array(x):
            return x
        host = np.asarray(x)
        return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])

    return jax.tree_util.tree_map(place, batch)


_COMPILED: weakref.WeakKeyDictionary[Callable, dict] = weakref.WeakKeyDictionary()


#: Members per chunk of a batch on the CPU (:func:`chunk_size`), per CPU device: measured best for the quadrotor of
#: ``experiments/benchmark_peers.py`` (docs/batching.md: chunks of 256 flew its discrete RK4 batch 1.5x faster than
#: 1024, a hexarotor's 0.8x; a chunk's working set then stays in the core's caches).
CPU_CHUNK = 256


def _cpu_cores() -> list | None:
    """The CPU devices :func:`map_batch` splits a batch over without a mesh (one process, several CPU devices)."""
    if jax.default_backend() != "cpu" or jax.process_count() > 1:
        return None
    devices = jax.local_devices()
    return devices if len(devices) > 1 else None


def chunk_size(n: int, chunk: int | str | None = "auto") -> int | None:
    """The members per chunk :func:`map_batch` flies a batch of ``n`` in, or ``None`` for one ``vmap`` of all.

    ``"auto"``: :data:`CPU_CHUNK` on the CPU when ``n`` is larger (on a GPU the whole batch: it wants width),
    ``None``: never chunk, an integer: that many (>= 1).

    Raises:
        ValueError: ``chunk`` is none of these.
    """
    if chunk is None:
        return None
    if chunk == "auto":
        return CPU_CHUNK if jax.default_backend() == "cpu" and n > CPU_CHUNK else None
    if isinstance(chunk, (int, np.integer)) and not isinstance(chunk, bool) and chunk >= 1:
        return int(chunk) if n > chunk else None
    raise ValueError(f"map_batch parameter `chunk` = {chunk!r} is invalid. Fix: pass \"auto\", None (one vmap of "
                     "the whole batch) or a number of members >= 1, e.g. 1024.")


def chunked_vmap(fn: Callable, chunk: int) -> Callable:
    """``vmap(fn)`` evaluated ``chunk`` members at a time (``lax.map`` over chunks of ``vmap(fn)``): the same
    results as ``vmap(fn)`` with a working set of ``chunk`` members. The batch (leading axis of every array leaf
    of the argument) is padded to a whole number of chunks with copies of its first member, the padding cut off."""

    vf = eqx.filter_vmap(fn)

    def run(batch):
        n = batch_size(batch)
        k = -(-n // chunk)
        pad = k * chunk - n
        arrays, static = eqx.partition(batch, eqx.is_array)
        grow = lambda x: jnp.concatenate([x, jnp.broadcast_to(x[:1], (pad,) + x.shape[1:])]) if pad else x
        arrays = jax.tree_util.tree_map(lambda x: grow(x).reshape((k, chunk) + x.shape[1:]), arrays)
        out = jax.lax.map(lambda a: vf(eqx.combine(a, static)), arrays)
        return jax.tree_util.tree_map(lambda x: x.reshape((k * chunk,) + x.shape[2:])[:n], out)

    return run


def _cached(fn: Callable, key, build: Callable[[], Callable]) -> Callable:
    """``build()`` kept per ``(fn, key)`` (a weak reference to ``fn``: repeated calls hit the cache)."""
    try:
        return _COMPILED[fn][key]
    except (KeyError, TypeError):
        f = build()
        try:
            _COMPILED.setdefault(fn, {})[key] = f
        except TypeError:  # not weak-referenceable: no cache
            pass
        return f


def _vmapped(fn: Callable, chunk: int | None) -> Callable:
    """``(batch, shared) -> outputs``: ``fn(member)`` (``fn(member, shared)`` when ``shared`` is given) over the
    batch's leading axis, as one ``vmap`` (``chunk=None``) or in chunks of ``chunk`` members (:func:`chunked_vmap`)."""
    body = lambda member, shared: fn(member) if shared is None else fn(member, shared)  # noqa: E731
    if chunk is None:
        return eqx.filter_vmap(body, in_axes=(0, None))
    return lambda batch, shared: chunked_vmap(lambda m: body(m, shared), chunk)(batch)


def _batched(fn: Callable, chunk: int | None = None) -> Callable:
    """``filter_jit`` of :func:`_vmapped`, built once per ``(fn, chunk)``."""
    return _cached(fn, chunk, lambda: eqx.filter_jit(_vmapped(fn, chunk)))


def _over_cores(fn: Callable, chunk: int | None, devices: tuple) -> Callable:
    """:func:`_vmapped` of each device's part of a batch split evenly over the CPU ``devices`` (``shard_map``: each
    part on its own core), jitted, built once per ``(fn, chunk, devices)``."""

    def build():
        try:
            from jax import shard_map
        except ImportError:  # jax < 0.6
            from jax.experimental.shard_map import shard_map
        mesh = Mesh(np.asarray(devices), ("batch",))
        part = _vmapped(fn, chunk)

        def run(batch, shared):
            arrays, static = eqx.partition(batch, eqx.is_array)
            sh_arrays, sh_static = eqx.partition(shared, eqx.is_array)
            spec = jax.tree_util.tree_map(lambda _: PartitionSpec("batch"), arrays)
            rep = jax.tree_util.tree_map(lambda _: PartitionSpec(), sh_arrays)
            g = lambda a, sh: part(eqx.combine(a, static), eqx.combine(sh, sh_static))  # noqa: E731
            try:
                f = shard_map(g, mesh=mesh, in_specs=(spec, rep), out_specs=PartitionSpec("batch"), check_vma=False)
            except TypeError:  # older JAX names the check check_rep
                f = shard_map(g, mesh=mesh, in_specs=(spec, rep), out_specs=PartitionSpec("batch"), check_rep=False)
            return f(arrays, sh_arrays)

        return eqx.filter_jit(run)

    return _cached(fn, ("cores", chunk, devices), build)


def _unpad(out, n: int):
    """The first ``n`` members of every array leaf of ``out`` (the padding cut off)."""
    return jax.tree_util.tree_map(lambda x: x[:n] if eqx.is_array(x) else x, out)


def map_batch(fn: Callable, batch, mesh: Mesh | None = None, *, shared=None, chunk: int | str | None = "auto"):
    """``vmap(fn)(batch)``, jit-compiled; with ``mesh``, the batch axis is sharded over its devices.

    Without a mesh a large batch is flown in chunks (:func:`chunk_size`, :func:`chunked_vmap`): on the CPU
    ``chunk = "auto"`` takes :data:`CPU_CHUNK` members at a time, whose working set stays in the caches (the
    results are the whole-batch ``vmap``'s); ``chunk=None`` is one ``vmap`` of the whole batch. With several CPU
    devices in one process (one per core: ``XLA_FLAGS=--xla_force_host_platform_device_count=<cores>``) and at least two members per device, the
    batch is split evenly over them (``shard_map``, padded with copies of its last member), each device flying
    its part in chunks of ``chunk`` on its own core: the same results, member for member.

    Args:
        fn: function of one member (e.g. ``lambda p: simulate(p, ctrl, ref)``), or of one member
            and ``shared`` when that is given: ``fn(member, shared)``.
        batch: stacked pytree (see :func:`stack`).
        shared: optional pytree passed whole to every member (not mapped; replicated over the
            mesh). Its arrays are arguments of the compiled program, not constants baked into it,
            so a new value reuses the compilation and the values stay traced inside ``fn``.
        mesh: optional device mesh from :func:`batch_mesh`; the output keeps the batch sharding
            (several processes: it is gathered, every process gets the whole output).

    Returns:
        ``fn``'s output with a leading batch axis.
    """
    if mesh is None:
        n = batch_size(batch)
        cores = _cpu_cores()
        if cores is not None and n >= 2 * len(cores):
            k = len(cores)
            padded, _ = pad_to(batch, k)
            return _unpad(_over_cores(fn, chunk_size(-(-n // k), chunk), tuple(cores))(padded, shared), n)
        return _batched(fn, chunk_size(n, chunk))(batch, shared)
    f = _batched(fn)
    padded, n = pad_to(batch, mesh.devices.size)
    out = f(shard(padded, mesh), None if shared is None else shard(shared, mesh, replicate=True))
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        arrays, static = eqx.partition(out, eqx.is_array)
        out = eqx.combine(multihost_utils.process_allgather(arrays, tiled=True), static)
    return _unpad(out, n)
