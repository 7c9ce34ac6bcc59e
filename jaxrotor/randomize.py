"""Domain randomization: a distribution over vehicles and conditions, sampled into a batch ``vmap`` flies.

One member is drawn from one ``jax.random`` key ``k`` (:meth:`Randomization.sample`)::

    m'      = m (1 + r_m u_0)                                      mass [kg]
    J'      = D J D,  D = diag(sqrt(1 + r_J u_{1..3}))             inertia [kg m^2] (stays symmetric positive definite)
    c_f,i'  = c_f,i (1 + r_f u_i),  c_tau,i' = c_tau,i (1 + r_tau u'_i)    per rotor
    tau_m'  = tau_m (1 + r_tau_m u)                                motor time constant [s] (a motor that has one)
    J_r,i'  = J_r,i (1 + r_Jr u_J)                                 rotor spin inertia [kg m^2] (a platform with one;
                                                                   one draw for every rotor, from fold_in(k, 1))
    w_mean' = s (cos psi, sin psi, 0),  s ~ U[s_lo, s_hi],  psi ~ U[0, 2 pi)     mean wind [m/s]
    key'    = a fresh key for the member's sensor noise and gusts

with every ``u ~ U[-1, 1]`` independent. The relative half-widths ``r`` are in
``[0, 1)`` so every mass, inertia, thrust and drag coefficient stays positive (checked
at construction). :meth:`Randomization.batch` ``vmap``-s the sampler over keys: the
result is a ``(platform, flight)`` pair whose array leaves have a leading batch axis,
flown by :func:`fly_batch`.

Keys: a training batch of epoch ``e`` uses ``fold_in(fold_in(root, 0), e)`` and a
held-out batch ``fold_in(root, 1)`` (:func:`member_keys`): the two streams never share a key.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .design.platform import Platform
from .flight import Flight
from .loop import fly
from .registry import Option, register

__all__ = ["HELDOUT", "TRAIN", "Randomization", "fly_batch", "member_keys"]

#: Stream indices of :func:`member_keys`.
TRAIN, HELDOUT = 0, 1

_RELATIVE = ("mass", "inertia", "c_f", "c_tau", "motor_time_constant", "rotor_inertia")


def _relative(what: str) -> Option:
    return Option(float, ge=0, lt=1, doc=f"relative half-width of the {what}",
                  why=f"a relative half-width must lie in [0, 1): at 1 or more the {what} can reach zero or "
                      "less (non-positive)", fix="give e.g. 0.1 for +-10 %")


@register("randomization", "uniform", options={
    "mass": _relative("mass"), "inertia": _relative("inertia"), "c_f": _relative("thrust coefficient"),
    "c_tau": _relative("drag-torque coefficient"), "motor_time_constant": _relative("motor time constant"),
    "rotor_inertia": _relative("rotor spin inertia"),
    "wind_speed": Option(tuple, length=2, scalar=False, ge=0, unit="m/s", doc="range [low, high] of the mean wind "
                         "speed, random horizontal direction", why="expected a finite range [low, high] with "
                         "0 <= low <= high", fix="give e.g. [0.0, 3.0] (m/s)")})
class Randomization(eqx.Module):
    """Relative ranges of the randomized parameters (static; see the module docstring).

    Attributes:
        mass: relative half-width ``r_m`` of the mass, in ``[0, 1)`` (0.1: +-10 %).
        inertia: ``r_J``, per principal axis, in ``[0, 1)``.
        c_f: ``r_f``, per rotor, in ``[0, 1)``.
        c_tau: ``r_tau``, per rotor, in ``[0, 1)``.
        motor_time_constant: ``r_tau_m``, in ``[0, 1)`` (ignored for a motor without a time constant).
        rotor_inertia: ``r_Jr``, in ``[0, 1)`` (ignored for a platform without rotor inertia).
        wind_speed: ``(s_lo, s_hi)`` range of the mean wind speed [m/s] in a uniformly random
            horizontal direction, or ``None`` to keep the flight's wind mean.
    """

    mass: float = eqx.field(static=True, default=0.0)
    inertia: float = eqx.field(static=True, default=0.0)
    c_f: float = eqx.field(static=True, default=0.0)
    c_tau: float = eqx.field(static=True, default=0.0)
    motor_time_constant: float = eqx.field(static=True, default=0.0)
    rotor_inertia: float = eqx.field(static=True, default=0.0)
    wind_speed: tuple[float, float] | None = eqx.field(static=True, default=None)

    def __check_init__(self):
        for name in _RELATIVE:
            r = getattr(self, name)
            if not (isinstance(r, (int, float)) and math.isfinite(r) and 0 <= r < 1):
                raise ValueError(f"Randomization parameter `{name}` = {r!r} is invalid: a relative half-width must "
                                 "lie in [0, 1) (at 1 or more the parameter can reach zero or turn negative). Fix: "
                                 "pass e.g. 0.1 for +-10 %.")
        if self.wind_speed is not None:
            if isinstance(self.wind_speed, (str, bytes)) or np.shape(self.wind_speed) != (2,):
                raise ValueError(f"Randomization parameter `wind_speed` = {self.wind_speed!r} is invalid: it must be "
                                 "a pair (low, high) in m/s. Fix: pass e.g. (0.0, 3.0).")
            lo, hi = self.wind_speed
            if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo <= hi):
                raise ValueError(f"Randomization parameter `wind_speed` = {self.wind_speed!r} is invalid: it must be "
                                 "a finite range 0 <= low <= high in m/s. Fix: pass e.g. (0.0, 3.0).")

    def sample(self, key: jax.Array, platform: Platform, flight: Flight) -> tuple[Platform, Flight]:
        """One randomized ``(platform, flight)`` drawn from ``key`` (unbatched; vmap it over keys)."""
        dtype = platform.mass.dtype
        k_u, k_flight = jax.random.split(key)
        n = platform.c_f.shape[0]
        # one uniform draw for every parameter (one random-bits kernel to compile):
        # [mass, inertia (3), c_f (n), c_tau (n), motor time constant, wind speed, wind direction]
        v = jax.random.uniform(k_u, (7 + 2 * n,), dtype=dtype)
        u = 2.0 * v - 1.0  # U[-1, 1]
        d = jnp.sqrt(1.0 + self.inertia * u[1:4])
        platform = eqx.tree_at(
            lambda p: (p.mass, p.inertia, p.c_f, p.c_tau), platform,
            (platform.mass * (1.0 + self.mass * u[0]), d[:, None] * platform.inertia * d[None, :],
             platform.c_f * (1.0 + self.c_f * u[4:4 + n]), platform.c_tau * (1.0 + self.c_tau * u[4 + n:4 + 2 * n])))
        if self.rotor_inertia and platform.rotor_inertia is not None:  # its own stream: other draws unchanged
            u_j = 2.0 * jax.random.uniform(jax.random.fold_in(key, 1), (), dtype=dtype) - 1.0
            platform = eqx.tree_at(lambda p: p.rotor_inertia, platform,
                                   platform.rotor_inertia * (1.0 + self.rotor_inertia * u_j))
        motor = flight.actuators.motor
        if self.motor_time_constant:  # a motor without lag has none to scale
            flight = eqx.tree_at(lambda f: f.actuators.motor, flight,
                                 motor.with_lag_scaled(1.0 + self.motor_time_constant * u[4 + 2 * n]))
        if self.wind_speed is not None:
            if flight.wind is None:
                raise ValueError("Randomization parameter `wind_speed` needs a flight with wind (a drag model). "
                                 "Fix: give the Flight a jaxrotor.wind.Wind(drag_linear=..., ...).")
            lo, hi = self.wind_speed
            s = lo + (hi - lo) * v[5 + 2 * n]
            psi = 2 * jnp.pi * v[6 + 2 * n]
            flight = eqx.tree_at(lambda f: f.wind.mean, flight,
                                 jnp.stack([s * jnp.cos(psi), s * jnp.sin(psi), jnp.zeros((), dtype)]))
        flight = eqx.tree_at(lambda f: f.key, flight, k_flight, is_leaf=lambda x: x is None)
        return platform, flight

    def batch(self, keys: jax.Array, platform: Platform, flight: Flight) -> tuple[Platform, Flight]:
        """``vmap`` of :meth:`sample` over ``keys`` ``(B, 2)``: a batched ``(platform, flight)`` (leading axis ``B``)."""
        return eqx.filter_vmap(lambda k: self.sample(k, platform, flight))(keys)


def member_keys(seed: int, size: int, stream: int = TRAIN, epoch: int = 0) -> jax.Array:
    """``(size, 2)`` member keys: ``fold_in(fold_in(fold_in(PRNGKey(seed), stream), epoch), i)``.

    ``stream`` is :data:`TRAIN` (one batch per ``epoch``: common random numbers, redrawn
    at each new epoch) or :data:`HELDOUT` (never used in training).
    """
    base = jax.random.fold_in(jax.random.fold_in(jax.random.PRNGKey(seed), stream), epoch)
    return jax.vmap(lambda i: jax.random.fold_in(base, i))(jnp.arange(size))


def fly_batch(platforms: Platform, controller, flights: Flight):
    """Fly a batch (leading axis on every array leaf of ``platforms`` and ``flights``) under one ``controller``.

    ``eqx.filter_vmap(jaxrotor.fly, in_axes=(0, None, 0))``: returns a batched
    :class:`~jaxrotor.trajectory.Trajectory`.
    """
    return eqx.filter_vmap(fly, in_axes=(0, None, 0))(platforms, controller, flights)
