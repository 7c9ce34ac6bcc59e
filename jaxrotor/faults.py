"""Faults in flight: rotor loss, partial loss, a rotor or a tilt servo stuck, and what the flight computer knows.

A :class:`Faults` pytree lists fault events; every field but the kinds is an array with one entry per
event, so the rotor, the time and the effectiveness of an event can be drawn at random
(:func:`random_rotor_faults`) and batched with ``vmap``. Rotors are numbered from 0 here (column of
``F``/``M``); the TOML ``[[faults]]`` tables number them from 1, as the paper does.

Event ``e`` of kind ``k_e`` on rotor ``r_e`` at time ``t_e`` switches on through the onset
``s_e(t) = 1/2 (1 + tanh((t - t_e) / w))`` (width ``w = onset`` [s]; ``onset = 0``: the step
``s_e = [t >= t_e]``), smooth in ``t_e`` and differentiable in the effectiveness ``eta_e``:

=================  ======================================================================================
``rotor_loss``     rotor ``r_e`` gives no thrust and no drag torque: effectiveness ``eta = 0``
``rotor_partial``  rotor ``r_e`` gives ``eta_e`` of its thrust and drag (a damaged propeller, ``eta_e`` in
                   ``[0, 1]``)
``rotor_stuck``    rotor ``r_e`` keeps the speed it has (its motor's rate times ``1 - s_e``: needs a motor
                   with a speed state)
``servo_stuck``    the tilt servo of rotor ``r_e`` keeps its angle (the servo rate times ``1 - s_e``: needs a
                   tilting platform with per-rotor angles and a lagged servo)
=================  ======================================================================================

The rotor's thrust and drag are ``eta_i(t) c_f,i u_i`` and ``eta_i(t) c_tau,i u_i`` with
``eta_i(t) = prod_e (1 - s_e(t) (1 - eta_e) [r_e = i])`` (:func:`effectiveness`). The flight computer
learns of event ``e`` after its ``detection_delay`` ``d_e``: it knows ``eta_i`` evaluated with
``s_e(t - d_e)`` (:func:`known_effectiveness`) and allocates with the columns of ``G`` scaled by it
(:func:`jaxrotor.flight.flight_computer`); a rotor known stuck is allocated as a column held at its
measured speed. A design that cannot hold full pose after a known fault gives up its yaw torque
(:attr:`Faults.release_yaw`): it holds position and attitude about roll and pitch and lets the heading go.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import ArrayLike, Float, Int

__all__ = ["FAULT_KINDS", "YAW_POLICIES", "FULL_POSE_MARGIN", "HOVER_TILT", "SPIN_ACCELERATION", "OUTCOMES", "Faults", "effectiveness", "known_effectiveness", "stuck", "known_stuck", "known_phases", "known_phase",
           "servo_stuck", "random_rotor_faults", "fault_rotors"]

#: The fault kinds (``[[faults]] kind``).
FAULT_KINDS = ("rotor_loss", "rotor_partial", "rotor_stuck", "servo_stuck")
#: What a vehicle holds after a fault: the words of :func:`jaxrotor.verdict.fault_outcome`, ``jaxrotor faults``
#: and :class:`jaxrotor.analysis.RotorLoss`.
OUTCOMES = ("full_pose", "yaw_released", "lost")
#: The flight computer's yaw policies after a known fault (:attr:`Faults.release_yaw`).
YAW_POLICIES = ("auto", "always", "never")
#: Least hover input of a remaining rotor, as a fraction of their mean, for full pose after a fault: below it
#: the flight computer releases yaw (``release_yaw = "auto"``) and the rotor-loss analysis
#: (:func:`jaxrotor.analysis.rotor_loss`) gives ``"yaw_released"`` or ``"lost"``.
FULL_POSE_MARGIN = 0.02
#: Largest tilt [rad] of a held attitude: the attitude tolerance of :func:`jaxrotor.verdict.fault_outcome`, and
#: the tilt the rotor-loss analysis allows a hover after a loss (:func:`jaxrotor.analysis.rotor_loss`).
HOVER_TILT = 0.05
#: Largest yaw acceleration [rad/s^2] of a vehicle holding position with its yaw released: the spin trend
#: :func:`jaxrotor.verdict.fault_outcome` allows (a steady or slowly drifting spin), and the least yaw torque over
#: inertia of a yaw-released hover the rotor-loss analysis allows (:func:`jaxrotor.analysis.rotor_loss`). A vehicle
#: whose remaining rotors cannot cancel their yaw torque spins up without bound: it does not hold.
SPIN_ACCELERATION = 5.0
#: Kinds that scale a rotor's thrust and drag by an effectiveness.
THRUST_KINDS = ("rotor_loss", "rotor_partial")


def _err(param: str, value, why: str, fix: str) -> ValueError:
    return ValueError(f"Faults parameter `{param}` = {value!r} is invalid: {why}. Fix: {fix}.")


class Faults(eqx.Module):
    """Fault events of one flight (module docstring), one entry per event.

    Attributes:
        kind: static tuple of the events' kinds (:data:`FAULT_KINDS`).
        rotor: ``(k,)`` int rotor index of each event, 0-based.
        time: ``(k,)`` time of each event [s].
        effectiveness: ``(k,)`` remaining effectiveness ``eta_e`` in ``[0, 1]`` (used by ``rotor_partial``;
            0 for ``rotor_loss``; ignored by the stuck kinds).
        detection_delay: ``(k,)`` time from the event until the flight computer knows of it [s] (>= 0).
        onset: static width ``w`` [s] of the smooth onset (0: a step).
        release_yaw: static policy of the flight computer once it knows of a fault (:data:`YAW_POLICIES`):
            ``"auto"`` (default) gives up the yaw torque when the known faults leave the allocation less rank
            than it had or leave no positive inputs for a pure vertical force; ``"always"`` after any known
            fault; ``"never"``.
    """

    kind: tuple[str, ...] = eqx.field(static=True)
    rotor: Int[Array, " k"]
    time: Float[Array, " k"]
    effectiveness: Float[Array, " k"]
    detection_delay: Float[Array, " k"]
    onset: float = eqx.field(static=True, default=0.0)
    release_yaw: str = eqx.field(static=True, default="auto")

    def __init__(self, kind, rotor, time, effectiveness=None, detection_delay=0.05, onset: float = 0.0,
                 release_yaw: str = "auto"):
        if release_yaw not in YAW_POLICIES:
            raise _err("release_yaw", release_yaw, "unknown policy", f"use one of {', '.join(YAW_POLICIES)}")
        self.release_yaw = release_yaw
        kinds = (kind,) if isinstance(kind, str) else tuple(kind)
        for k in kinds:
            if k not in FAULT_KINDS:
                raise _err("kind", k, "unknown fault kind", f"use one of {', '.join(FAULT_KINDS)}")
        m = len(kinds)
        dtype = jnp.result_type(float)
        self.kind = kinds
        self.rotor = jnp.broadcast_to(jnp.asarray(rotor), (m,))
        if not jnp.issubdtype(self.rotor.dtype, jnp.integer):
            raise _err("rotor", rotor, "a rotor is an index", "give a whole rotor number")
        self.time = jnp.broadcast_to(jnp.asarray(time, dtype), (m,))
        eff = [0.0 if k == "rotor_loss" else 1.0 for k in kinds] if effectiveness is None else effectiveness
        self.effectiveness = jnp.broadcast_to(jnp.asarray(eff, dtype), (m,))
        self.effectiveness = jnp.where(jnp.asarray([k == "rotor_loss" for k in kinds]), 0.0, self.effectiveness)
        self.detection_delay = jnp.broadcast_to(jnp.asarray(detection_delay, dtype), (m,))
        if not (isinstance(onset, (int, float)) and np.isfinite(onset) and onset >= 0):
            raise _err("onset", onset, "the onset width is a time >= 0", "give e.g. onset = 0.0 (a step)")
        self.onset = float(onset)
        if _concrete(self.effectiveness, self.detection_delay, self.time):
            eta, d = np.asarray(self.effectiveness), np.asarray(self.detection_delay)
            if np.any((eta < 0) | (eta > 1)):
                raise _err("effectiveness", eta.tolist(), "an effectiveness lies in [0, 1]",
                           "give the fraction of thrust the rotor keeps, e.g. 0.5")
            if np.any(~np.isfinite(d) | (d < 0)):
                raise _err("detection_delay", d.tolist(), "a delay is a time >= 0", "give e.g. 0.05 s")
            if np.any(~np.isfinite(np.asarray(self.time))):
                raise _err("time", np.asarray(self.time).tolist(), "a fault time is finite", "give a time in s")

    def check(self, n_rotors: int) -> None:
        """Refuse, by name, a rotor index outside ``0 .. n_rotors - 1`` (concrete indices only)."""
        if _concrete(self.rotor):
            r = np.asarray(self.rotor)
            if np.any((r < 0) | (r >= n_rotors)):
                raise _err("rotor", (r + 1).tolist(), f"the vehicle has rotors 1 to {n_rotors}",
                           f"number the rotor from 1 to {n_rotors}")

    def kinds_present(self, kinds) -> bool:
        """Whether any event is of one of ``kinds`` (static)."""
        return any(k in kinds for k in self.kind)


def _concrete(*xs) -> bool:
    return not any(isinstance(x, jax.core.Tracer) for x in xs)


def _onset(faults: Faults, t, delay: bool) -> Array:
    """``(k,)`` the events' switches ``s_e(t)`` (``s_e(t - d_e)`` with ``delay``)."""
    dt = faults.time.dtype
    tau = jnp.asarray(t, dt) - faults.time - (faults.detection_delay if delay else 0.0)
    if faults.onset > 0:
        return 0.5 * (1 + jnp.tanh(tau / faults.onset))
    return (tau >= 0).astype(dt)


def _effectiveness(faults: Faults, n: int, t, delay: bool) -> Array:
    s = _onset(faults, t, delay)
    hit = jax.nn.one_hot(faults.rotor, n, dtype=s.dtype)  # (k, n)
    thrust = jnp.asarray([k in THRUST_KINDS for k in faults.kind], dtype=bool)
    loss = jnp.where(thrust, s * (1 - faults.effectiveness), 0.0)  # (k,)
    return jnp.prod(1 - loss[:, None] * hit, axis=0)


def effectiveness(faults: Faults | None, n: int, t) -> Array:
    """``(n,)`` the rotors' thrust and drag effectiveness ``eta_i(t)`` (ones without faults)."""
    if faults is None or not faults.kinds_present(THRUST_KINDS):
        return jnp.ones(n, dtype=jnp.result_type(float) if faults is None else faults.time.dtype)
    return _effectiveness(faults, n, t, False)


def known_effectiveness(faults: Faults | None, n: int, t) -> Array:
    """``(n,)`` the effectiveness the flight computer knows at ``t``: each event after its detection delay."""
    if faults is None or not faults.kinds_present(THRUST_KINDS):
        return jnp.ones(n, dtype=jnp.result_type(float) if faults is None else faults.time.dtype)
    return _effectiveness(faults, n, t, True)


def _frozen(faults: Faults, n: int, t, kind: str, delay: bool) -> Array:
    s = _onset(faults, t, delay)
    hit = jax.nn.one_hot(faults.rotor, n, dtype=s.dtype)
    mine = jnp.asarray([k == kind for k in faults.kind], dtype=bool)
    return jnp.prod(1 - jnp.where(mine, s, 0.0)[:, None] * hit, axis=0)


def stuck(faults: Faults | None, n: int, t) -> Array | None:
    """``(n,)`` factor ``1 - s_e(t)`` on each rotor's speed rate (0: the rotor keeps its speed), or ``None``
    without a ``rotor_stuck`` event."""
    if faults is None or not faults.kinds_present(("rotor_stuck",)):
        return None
    return _frozen(faults, n, t, "rotor_stuck", False)


def known_stuck(faults: Faults | None, n: int, t) -> Array | None:
    """``(n,)`` what the flight computer knows of :func:`stuck` (each event after its delay), or ``None``."""
    if faults is None or not faults.kinds_present(("rotor_stuck",)):
        return None
    return _frozen(faults, n, t, "rotor_stuck", True)


def servo_stuck(faults: Faults | None, n: int, t) -> Array | None:
    """``(n,)`` factor on each rotor's tilt-servo rate (0: the servo keeps its angle), or ``None``."""
    if faults is None or not faults.kinds_present(("servo_stuck",)):
        return None
    return _frozen(faults, n, t, "servo_stuck", False)


def known_phases(faults: Faults, n: int) -> tuple[Array, Array, Array | None]:
    """The flight computer's knowledge of a step-onset ``faults`` (``onset = 0``) as phases.

    Phase ``k`` (``k = 0..K`` for ``K`` events) holds once the ``k`` events with the earliest detection times
    ``t_e + d_e`` are known; the phase at ``t`` is the number of events known then (:func:`known_phase`).
    Phase ``k`` has the :func:`known_effectiveness` and :func:`known_stuck` that hold between those detections.

    Returns:
        ``(eta, frozen)``: ``(K+1, n)`` known effectiveness per phase and ``(K+1, n)`` known stuck factors
        (``None`` without a ``rotor_stuck`` event).
    """
    if faults.onset > 0:
        raise ValueError(f"known_phases: Faults.onset = {faults.onset} s is a smooth onset, not phases. Fix: "
                         "evaluate known_effectiveness(faults, n, t) at each t.")
    k = len(faults.kind)
    detect = faults.time + faults.detection_delay
    rank = jnp.argsort(jnp.argsort(detect))  # (k,) position of each event in detection order
    s = (rank[None, :] < jnp.arange(k + 1)[:, None]).astype(faults.time.dtype)  # (K+1, k) known switches
    hit = jax.nn.one_hot(faults.rotor, n, dtype=s.dtype)  # (k, n)
    thrust = jnp.asarray([kind in THRUST_KINDS for kind in faults.kind], dtype=bool)
    loss = jnp.where(thrust, s * (1 - faults.effectiveness), 0.0)  # (K+1, k)
    eta = jnp.prod(1 - loss[:, :, None] * hit, axis=1)
    frozen = None
    if faults.kinds_present(("rotor_stuck",)):
        mine = jnp.asarray([kind == "rotor_stuck" for kind in faults.kind], dtype=bool)
        frozen = jnp.prod(1 - jnp.where(mine, s, 0.0)[:, :, None] * hit, axis=1)
    return eta, frozen


def known_phase(faults: Faults, t) -> Array:
    """``()`` int: the phase of :func:`known_phases` at ``t`` [s], the number of events known then (each after
    its detection delay, the rule of :func:`known_effectiveness`)."""
    return jnp.sum(_onset(faults, t, True) > 0.5).astype(jnp.int32)


def random_rotor_faults(key: Array, n_rotors: int, *, t_range: tuple[float, float] = (1.0, 5.0),
                        effectiveness_range: tuple[float, float] = (0.0, 1.0), detection_delay: ArrayLike = 0.05,
                        kind: str = "rotor_partial", onset: float = 0.0) -> Faults:
    """One fault drawn from ``key``: a uniformly random rotor, time in ``t_range`` [s] and effectiveness in
    ``effectiveness_range`` (``kind = "rotor_loss"``: 0). ``vmap`` over keys for a Monte Carlo batch."""
    k1, k2, k3 = jax.random.split(key, 3)
    dtype = jnp.result_type(float)
    rotor = jax.random.randint(k1, (1,), 0, n_rotors)
    t = jax.random.uniform(k2, (1,), dtype, *t_range)
    eta = jax.random.uniform(k3, (1,), dtype, *effectiveness_range)
    return Faults((kind,), rotor, t, eta, detection_delay, onset)


def fault_rotors(faults: Faults) -> list[int]:
    """The rotors (0-based) of the events (concrete faults only)."""
    return [int(r) for r in np.asarray(faults.rotor)]
