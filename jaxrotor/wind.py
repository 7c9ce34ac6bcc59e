"""Wind and aerodynamic drag of the discrete-rate flight loop.

The air velocity (world frame) is a constant mean plus an Ornstein-Uhlenbeck gust,
sampled at the control ticks (period ``h``) and held between them::

    w(t)      = w_mean + g_k,                  t in [t_k, t_k + h)
    g_{k+1}   = a g_k + sigma sqrt(1 - a^2) n_k,   a = exp(-h / tau_g),  n_k ~ N(0, I_3)
    g_0       ~ N(0, diag(sigma^2))            (the stationary law: the gust is stationary from t0)

which is the exact discretisation of ``dg = -g / tau_g dt + sigma sqrt(2 / tau_g) dW``
(stationary standard deviation ``sigma`` per axis, correlation time ``tau_g``). The
body feels a drag force against its air-relative velocity ``v_rel = v - w``::

    f_drag = -c_1 v_rel - c_2 |v_rel| v_rel                                          [N], world frame

with a linear coefficient ``c_1`` [N s/m] and a quadratic one ``c_2`` [N s^2/m^2]
(either may be zero). Every draw comes from an explicit ``jax.random`` key.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from ._util import as_float, vec3
from .numerics import safe_norm
from .registry import Option, register, std_option

__all__ = ["Wind", "drag_force"]


def _check(value: Array, name: str, fix: str, positive: bool = False) -> None:
    if isinstance(value, jax.core.Tracer):
        return
    v = np.asarray(value, dtype=float)
    ok = np.all(np.isfinite(v)) and (np.all(v > 0) if positive else np.all(v >= 0))
    if not ok:
        raise ValueError(f"Wind parameter `{name}` = {v.tolist()!r} is invalid: it must be finite and "
                         f"{'> 0' if positive else '>= 0'}. Fix: {fix}.")


@register("wind", "ornstein_uhlenbeck", options={
    "mean": Option(list, default=[0.0, 0.0, 0.0], length=3, unit="m/s", doc="mean air velocity, world frame",
                   fix="the mean air velocity in m/s, 3 world-axis values"),
    "gust_std": std_option("gust", "m/s", "stationary"),
    "gust_time_constant": Option(float, gt=0, unit="s", doc="gust correlation time",
                                 fix="the gust correlation time in s, e.g. 1.0"),
    "drag_linear": Option(float, ge=0, unit="N s/m", doc="linear drag coefficient",
                          why="a drag coefficient must be >= 0"),
    "drag_quadratic": Option(float, ge=0, unit="N s^2/m^2", doc="quadratic drag coefficient",
                             why="a drag coefficient must be >= 0")})
class Wind(eqx.Module):
    """Constant wind plus an Ornstein-Uhlenbeck gust, acting through linear and quadratic drag.

    Attributes:
        mean: ``(3,)`` mean air velocity in the world frame [m/s].
        gust_std: ``(3,)`` stationary gust standard deviation per world axis [m/s].
        gust_time_constant: ``()`` gust correlation time ``tau_g`` [s].
        drag_linear: ``()`` linear drag coefficient ``c_1`` [N s/m].
        drag_quadratic: ``()`` quadratic drag coefficient ``c_2`` [N s^2/m^2].
    """

    mean: Array
    gust_std: Array
    gust_time_constant: Array
    drag_linear: Array
    drag_quadratic: Array

    def __init__(self, mean=0.0, gust_std=0.0, gust_time_constant=1.0, drag_linear=0.0, drag_quadratic=0.0):
        self.mean = vec3(mean, "Wind", "mean", "pass a scalar or 3 world-axis values")
        self.gust_std = vec3(gust_std, "Wind", "gust_std", "pass a scalar or 3 world-axis values")
        self.gust_time_constant = as_float(gust_time_constant)
        self.drag_linear = as_float(drag_linear)
        self.drag_quadratic = as_float(drag_quadratic)
        if not isinstance(self.mean, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(self.mean))):
            raise ValueError(f"Wind parameter `mean` = {np.asarray(self.mean).tolist()!r} is invalid: it must be "
                             "finite. Fix: pass finite wind components in m/s.")
        _check(self.gust_std, "gust_std", "pass e.g. 0.5 m/s, or 0 for no gust")
        _check(self.gust_time_constant, "gust_time_constant", "pass e.g. 1.0 s", positive=True)
        _check(self.drag_linear, "drag_linear", "pass e.g. 0.3 N s/m, or 0")
        _check(self.drag_quadratic, "drag_quadratic", "pass e.g. 0.05 N s^2/m^2, or 0")

    def gusts(self, key: Array, n_ticks: int, period: float, dtype=None) -> Array:
        """``(n_ticks, 3)`` gust velocities ``g_k`` [m/s] at ticks ``k = 0 .. n_ticks-1`` of period ``period`` [s].

        :meth:`gusts_from` of ``jax.random.normal(key, (n_ticks, 3))``.
        """
        dtype = self.gust_std.dtype if dtype is None else dtype
        return self.gusts_from(jax.random.normal(key, (n_ticks, 3), dtype=dtype), period)

    def gusts_from(self, n: Array, period: float) -> Array:
        """The gusts driven by standard normals ``n`` ``(K, 3)``: ``g_0 = sigma n_0`` (the stationary law), then the
        exact OU recursion of the module docstring with innovations ``n_1 .. n_{K-1}``."""
        sigma = self.gust_std.astype(n.dtype)

        def step(g, n_k):
            g_next = self.gust_step(g, n_k, period)
            return g_next, g_next

        _, rest = jax.lax.scan(step, sigma * n[0], n[1:])
        return jnp.concatenate([(sigma * n[0])[None], rest], axis=0)

    def gust_step(self, g: Array, n: Array, period: float) -> Array:
        """One step of the exact OU recursion: ``g_{k+1} = a g_k + sigma sqrt(1 - a^2) n_k``,
        ``a = exp(-period / gust_time_constant)``, for the gust ``g`` ``(3,)`` [m/s] and standard normals ``n``."""
        dtype = n.dtype
        sigma = self.gust_std.astype(dtype)
        a = jnp.exp(-jnp.asarray(period, dtype) / self.gust_time_constant.astype(dtype))
        return a * g + sigma * jnp.sqrt(1.0 - a**2) * n

    def air_velocity(self, gust: Array) -> Array:
        """``(3,)`` air velocity ``w_mean + g`` [m/s], world frame."""
        return self.mean + gust

    def force(self, v_w: Array, air_w: Array) -> Array:
        """``(3,)`` drag force [N], world frame, on a body moving at ``v_w`` through air moving at ``air_w``."""
        return drag_force(v_w - air_w, self.drag_linear, self.drag_quadratic)


def drag_force(v_rel: Array, c_linear: Array, c_quadratic: Array, norm=safe_norm) -> Array:
    """``f = -c_1 v_rel - c_2 |v_rel| v_rel`` [N] for the air-relative velocity ``v_rel`` ``(3,)`` [m/s].

    ``|.|`` is ``norm``: :func:`jaxrotor.numerics.safe_norm` (finite gradient at ``v_rel = 0``) by
    default; the physics layer passes ``numpy.linalg.norm`` and NumPy arrays to evaluate the same
    force at every engine step without a JAX call.
    """
    return -c_linear * v_rel - c_quadratic * norm(v_rel) * v_rel
