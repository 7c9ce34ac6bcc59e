"""Sensor model of the discrete-rate flight loop: noise, bias and delay on the measured state.

At control tick ``k`` (period ``h = 1 / control_rate``) the controller sees the
state of ``delay`` ticks ago, with white noise and a constant bias per channel::

    p_m   = p(t_{k-d}) + b_p + sigma_p n_p,k                  [m], world frame
    v_m   = v(t_{k-d}) + b_v + sigma_v n_v,k                  [m/s], world frame
    R_m   = R(t_{k-d}) exp([b_R + sigma_R n_R,k]_x)           attitude error in the body frame [rad]
    w_m   = omega(t_{k-d}) + b_w + sigma_w n_w,k              [rad/s], body frame

with ``n_*,k ~ N(0, I_3)`` independent per tick and channel, ``b_* ~ N(0, diag(bias_std^2))``
drawn once per flight, and ``d = delay`` ticks (before the first tick the initial state
is what the sensors report). Every draw comes from an explicit ``jax.random`` key
(:meth:`Sensors.draw`; :meth:`Sensors.scale` maps standard normals drawn elsewhere, as
the flight loop does with one draw for sensors and wind), so a flight is reproducible
and a ``vmap`` over keys draws independent noise. The standard deviations are array leaves (differentiable,
randomizable); the delay is static (it sizes a buffer).

Rotor speeds and tilt angles are passed through unmeasured (the actuators' own state).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from . import so3
from ._util import as_float
from .dynamics import VehicleState
from .registry import Option, register, std_option

__all__ = ["CHANNELS", "NORMALS_PER_FLIGHT", "NORMALS_PER_TICK", "SensorDraw", "Sensors", "measure"]

#: The measured channels, in the order of the ``(4, 3)`` noise rows.
CHANNELS = ("position", "velocity", "attitude", "rate")
#: Standard normals a flight's sensors use per control tick (white noise) and once (bias).
NORMALS_PER_TICK, NORMALS_PER_FLIGHT = 12, 12
_UNITS = {"position": "m", "velocity": "m/s", "attitude": "rad", "rate": "rad/s"}


def _std(value, owner: str, name: str) -> Array:
    """A ``(3,)`` per-axis standard deviation (a scalar is broadcast), checked finite and ``>= 0`` when concrete."""
    try:
        x = as_float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{owner} parameter `{name}` = {value!r} is invalid: not a number. Fix: pass a scalar or "
                         "3 per-axis values, e.g. 0.0.") from None
    if x.ndim == 0:
        x = jnp.full((3,), x)
    if x.shape != (3,):
        raise ValueError(f"{owner} parameter `{name}` has shape {x.shape}. Fix: pass a scalar or 3 per-axis values.")
    if not isinstance(x, jax.core.Tracer):
        v = np.asarray(x, dtype=float)
        if not (np.all(np.isfinite(v)) and np.all(v >= 0)):
            raise ValueError(f"{owner} parameter `{name}` = {v.tolist()!r} is invalid: a standard deviation must be "
                             "finite and >= 0. Fix: pass e.g. 0.0 (no noise) or a positive value in "
                             f"{_UNITS.get(name.split('_')[0], 'SI units')}.")
    return x


class SensorDraw(eqx.Module):
    """The random part of one flight's measurements.

    Attributes:
        white: ``(K, 4, 3)`` scaled white noise per tick and channel (rows: position [m],
            velocity [m/s], attitude [rad], body rate [rad/s]).
        bias: ``(4, 3)`` constant bias per channel (same units).
    """

    white: Array
    bias: Array


_CHANNEL_UNITS = (("position", "m"), ("velocity", "m/s"), ("attitude", "rad"), ("rate", "rad/s"))


@register("sensors", "gaussian", options={
    **{f"{c}_std": std_option(c, u, "white-noise") for c, u in _CHANNEL_UNITS},
    **{f"{c}_bias_std": std_option(c, u, "per-flight bias") for c, u in _CHANNEL_UNITS},
    "delay": Option(int, ge=0, unit="control ticks", doc="measurement delay",
                    why="a measurement delay must be >= 0 control ticks", fix="give an integer >= 0, e.g. 2 (4 ms at 500 Hz)")})
class Sensors(eqx.Module):
    """Per-channel sensor noise, bias and delay (see the module docstring for the equations).

    Attributes:
        position_std: ``(3,)`` white-noise std of the position [m] (world axes).
        velocity_std: ``(3,)`` of the velocity [m/s] (world axes).
        attitude_std: ``(3,)`` of the attitude, a rotation vector in the body frame [rad].
        rate_std: ``(3,)`` of the body rate [rad/s].
        position_bias_std, velocity_bias_std, attitude_bias_std, rate_bias_std: ``(3,)`` std of the
            constant bias drawn once per flight (same units; zero: no bias).
        delay: measurement delay in control ticks (``>= 0``, static).
    """

    position_std: Array
    velocity_std: Array
    attitude_std: Array
    rate_std: Array
    position_bias_std: Array
    velocity_bias_std: Array
    attitude_bias_std: Array
    rate_bias_std: Array
    delay: int = eqx.field(static=True, default=0)

    def __init__(self, position_std=0.0, velocity_std=0.0, attitude_std=0.0, rate_std=0.0, *,
                 position_bias_std=0.0, velocity_bias_std=0.0, attitude_bias_std=0.0, rate_bias_std=0.0,
                 delay: int = 0):
        for name, value in (("position_std", position_std), ("velocity_std", velocity_std),
                            ("attitude_std", attitude_std), ("rate_std", rate_std),
                            ("position_bias_std", position_bias_std), ("velocity_bias_std", velocity_bias_std),
                            ("attitude_bias_std", attitude_bias_std), ("rate_bias_std", rate_bias_std)):
            setattr(self, name, _std(value, "Sensors", name))
        if isinstance(delay, bool) or not isinstance(delay, (int, np.integer)) or delay < 0:
            raise ValueError(f"Sensors parameter `delay` = {delay!r} is invalid: it must be an integer number of "
                             "control ticks >= 0. Fix: pass e.g. delay=2 (4 ms at 500 Hz).")
        self.delay = int(delay)

    @property
    def white_std(self) -> Array:
        """``(4, 3)`` white-noise standard deviations, rows in :data:`CHANNELS` order."""
        return jnp.stack([self.position_std, self.velocity_std, self.attitude_std, self.rate_std])

    @property
    def bias_std(self) -> Array:
        """``(4, 3)`` bias standard deviations, rows in :data:`CHANNELS` order."""
        return jnp.stack([self.position_bias_std, self.velocity_bias_std, self.attitude_bias_std,
                          self.rate_bias_std])

    def draw(self, key: Array, n_ticks: int, dtype=None) -> SensorDraw:
        """Noise for ``n_ticks`` ticks and the flight's bias from ``key``: :meth:`scale` of ``N(0, 1)`` draws
        ``jax.random.normal(key, (NORMALS_PER_TICK * n_ticks + NORMALS_PER_FLIGHT,))``."""
        dtype = self.position_std.dtype if dtype is None else dtype
        return self.scale(jax.random.normal(key, (NORMALS_PER_TICK * n_ticks + NORMALS_PER_FLIGHT,), dtype=dtype))

    def scale(self, z: Array) -> SensorDraw:
        """The noise and bias from standard normals ``z`` of length ``12 K + 12`` (differentiable in the stds).

        The first ``12 K`` entries, reshaped ``(K, 4, 3)``, times :attr:`white_std` are the per-tick
        noise; the last 12, reshaped ``(4, 3)``, times :attr:`bias_std` the bias.
        """
        k = (z.shape[0] - NORMALS_PER_FLIGHT) // NORMALS_PER_TICK
        white = z[: NORMALS_PER_TICK * k].reshape(k, 4, 3) * self.white_std.astype(z.dtype)
        bias = z[NORMALS_PER_TICK * k:].reshape(4, 3) * self.bias_std.astype(z.dtype)
        return SensorDraw(white=white, bias=bias)


def measure(state: VehicleState, error: Array) -> VehicleState:
    """The measured state: ``state`` with the ``(4, 3)`` channel errors (noise plus bias) applied.

    Position, velocity and body rate are additive; the attitude error is a body-frame
    rotation vector, ``R_m = R exp([e_R]_x)`` (stays on SO(3)). Rotor speeds and tilt
    angles pass through.
    """
    return VehicleState(p=state.p + error[0], v=state.v + error[1], R=state.R @ so3.exp(error[2]),
                        omega=state.omega + error[3], rotor_speed=state.rotor_speed, alpha=state.alpha,
                        beta=state.beta)
