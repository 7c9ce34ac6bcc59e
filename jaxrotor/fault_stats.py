"""Monte Carlo of rotor faults: a random mix of losses and partial losses, outcome counts, a binomial interval.

A batch of flights with random faults is one ``vmap`` over ``jax.random`` keys: each key draws one fault
(:func:`random_fault_mix`), the flight flies it and :func:`jaxrotor.verdict.fault_outcome_code` judges it in the
same compiled program. The fault kinds of a :class:`~jaxrotor.faults.Faults` are static, so a batch that mixes
rotor losses and partial losses holds one ``rotor_partial`` event per member whose effectiveness is 0 for a loss:
the plant and the flight computer see exactly a ``rotor_loss`` (thrust and drag times ``eta = 0``,
:func:`jaxrotor.faults.effectiveness`). :func:`single_fault` gives member ``i`` back as the event of its own
kind, to fly it alone.

The share of flights that keep the vehicle (outcome not ``"lost"``) is a binomial proportion ``k / n``;
:func:`binomial_interval` is its Wilson score interval (Wilson 1927)::

    p = k / n,   c = (p + z^2 / 2n) / (1 + z^2 / n),   h = z / (1 + z^2 / n) sqrt(p (1 - p) / n + z^2 / 4n^2)

    [c - h, c + h],   z = Phi^-1((1 + confidence) / 2)

which, unlike the normal approximation ``p +- z sqrt(p (1 - p) / n)``, stays inside ``[0, 1]`` and keeps its
coverage when ``k`` is 0 or ``n`` (every flight held: ``[n / (n + z^2), 1]``).
"""

from __future__ import annotations

import dataclasses
import math
from statistics import NormalDist

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import ArrayLike

from .faults import Faults, random_rotor_faults
from .verdict import FAULT_OUTCOMES

__all__ = ["binomial_interval", "outcome_counts", "random_fault_mix", "single_fault"]


def random_fault_mix(key: Array, n_rotors: int, *, t_range: tuple[float, float] = (0.5, 1.5),
                     loss_share: float = 0.5, effectiveness_range: tuple[float, float] = (0.0, 1.0),
                     detection_delay: ArrayLike = 0.05, release_yaw: str = "auto") -> Faults:
    """One fault drawn from ``key``: a rotor loss with probability ``loss_share``, else a partial loss.

    The rotor is uniform over ``0 .. n_rotors - 1``, the time uniform in ``t_range`` [s], the partial loss's
    effectiveness uniform in ``effectiveness_range``; a loss is the same ``rotor_partial`` event with
    effectiveness 0 (module docstring), so every member of a ``vmap`` over keys has the same structure.

    Args:
        key: ``jax.random`` key of the flight.
        n_rotors: the vehicle's rotor count (static).
        t_range: ``(low, high)`` fault time [s].
        loss_share: probability that the fault is a whole rotor loss.
        effectiveness_range: ``(low, high)`` effectiveness a partial loss leaves, within ``[0, 1]``.
        detection_delay: time until the flight computer knows of the fault [s].
        release_yaw: the flight computer's yaw policy (:attr:`jaxrotor.faults.Faults.release_yaw`).

    Returns:
        A :class:`~jaxrotor.faults.Faults` with one ``rotor_partial`` event.
    """
    k_fault, k_kind = jax.random.split(key)
    f = random_rotor_faults(k_fault, n_rotors, t_range=t_range, effectiveness_range=effectiveness_range,
                            detection_delay=detection_delay, kind="rotor_partial")
    loss = jax.random.bernoulli(k_kind, loss_share)
    return dataclasses.replace(f, effectiveness=jnp.where(loss, 0.0, f.effectiveness), release_yaw=release_yaw)


def single_fault(batch: Faults, i: int) -> Faults:
    """Member ``i`` of a batch of one-event faults (:func:`random_fault_mix` under ``vmap``) as the event of its own
    kind: ``rotor_loss`` where its effectiveness is 0, else ``rotor_partial`` (concrete arrays only)."""
    rotor = int(np.asarray(batch.rotor)[i, 0])
    time = float(np.asarray(batch.time)[i, 0])
    eta = float(np.asarray(batch.effectiveness)[i, 0])
    delay = float(np.asarray(batch.detection_delay)[i, 0])
    kind = "rotor_loss" if eta == 0.0 else "rotor_partial"
    return Faults(kind, rotor, time, eta, delay, onset=batch.onset, release_yaw=batch.release_yaw)


def outcome_counts(codes: ArrayLike) -> dict[str, int]:
    """How many flights ended with each outcome: ``{word: count}`` over :data:`jaxrotor.verdict.FAULT_OUTCOMES`
    for the codes of :func:`jaxrotor.verdict.fault_outcome_code` (any shape)."""
    c = np.asarray(codes).ravel()
    if c.size and (c.min() < 0 or c.max() >= len(FAULT_OUTCOMES)):
        raise ValueError(f"outcome_counts: codes {sorted(set(c.tolist()))} are not all fault outcome codes 0 to "
                         f"{len(FAULT_OUTCOMES) - 1}. Fix: pass the output of jaxrotor.verdict.fault_outcome_code.")
    return {word: int(np.sum(c == i)) for i, word in enumerate(FAULT_OUTCOMES)}


def binomial_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(low, high)`` of a binomial proportion ``successes / n`` (module docstring).

    Args:
        successes: ``k``, the number of successes, ``0 <= k <= n``.
        n: the number of trials, ``n >= 1``.
        confidence: the interval's nominal coverage, in ``(0, 1)`` (default 0.95).

    Raises:
        ValueError: for a count that is not a whole number in range, or a confidence outside ``(0, 1)``.
    """
    for name, v in (("successes", successes), ("n", n)):
        if isinstance(v, bool) or not float(v).is_integer():
            raise ValueError(f"binomial_interval parameter `{name}` = {v!r} is invalid: it is a count. "
                             "Fix: pass a whole number.")
    k, n = int(successes), int(n)
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"binomial_interval: `successes` = {k}, `n` = {n} is invalid: it needs n >= 1 and "
                         "0 <= successes <= n. Fix: pass the number of successes out of n trials.")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"binomial_interval parameter `confidence` = {confidence!r} is invalid: it lies in (0, 1). "
                         "Fix: pass e.g. 0.95.")
    z = NormalDist().inv_cdf(0.5 * (1.0 + confidence))
    p, z2 = k / n, z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    low = 0.0 if k == 0 else max(0.0, centre - half)  # exact bounds: the rounding of c - h at k = 0 is not a rate
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high
