"""Sweep figures: axis labels with the swept parameter's unit, heat-map cells centred on the swept values.

* :func:`parameter_unit` - the unit of a design path (``"platform.alpha"`` -> ``"rad"``,
  ``"controller.K_p[2]"`` -> ``"1/s^2"``): the platform's fields from :data:`PLATFORM_UNITS`, the
  option units the registry declares for every configurable class (:mod:`jaxrotor.registry`:
  controllers, motors, servos, references, sensors, wind), else a few common field names.
* :func:`axis_label` - ``"platform.alpha [rad]"`` (the path alone when no unit is known).
* :func:`metric_label` - a flight metric with its unit (``"rmse_position [m]"``).
* :func:`cell_edges` and :func:`heatmap` - a ``pcolormesh`` whose cell ``(i, j)`` spans the midpoints
  between neighbouring values: on an evenly spaced axis (every grid sweep) each cell is centred on its
  ``(x_i, y_j)``; on an uneven one each cell is the stretch nearest its value (boundaries midway between
  neighbours, the end cells centred on the end values).

The swept values are drawn as they are swept: an angle in radians, a gain in its SI unit.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["METRIC_UNITS", "PLATFORM_UNITS", "axis_label", "cell_edges", "heatmap", "metric_label", "parameter_unit"]

#: Units of the :class:`~jaxrotor.design.platform.Platform` fields (``"-"``: dimensionless).
PLATFORM_UNITS = {
    "arm_length": "m", "gamma": "rad", "delta": "rad", "alpha": "rad", "beta": "rad", "alpha_sign": "-",
    "beta_sign": "-", "positions": "m", "axes": "-", "c_f": "N s^2/rad^2", "c_tau": "N m s^2/rad^2", "kappa": "-",
    "mass": "kg", "inertia": "kg m^2", "gravity": "m/s^2", "rotor_speed_min": "rad/s", "rotor_speed_max": "rad/s",
    "axial_offset": "m", "com_offset": "m", "rotor_inertia": "kg m^2", "rotor_efficiency": "-",
}

#: Units of field names met elsewhere in a design (the parts, ...), when no registry option declares one.
_COMMON_UNITS = {
    "mass": "kg", "rotor_mass": "kg", "radius": "m", "height": "m", "length": "m", "width": "m", "diameter": "m",
    "pitch": "m", "chord": "m", "thickness": "m", "separation": "m", "time_constant": "s", "rate_limit": "rad/s",
    "inertia": "kg m^2", "capacity_mah": "mAh", "resistance": "ohm", "internal_resistance": "ohm", "kv": "rpm/V",
    "max_current": "A", "no_load_current": "A", "air_density": "kg/m^3",
}

#: Units of the :class:`~jaxrotor.metrics.FlightMetrics` fields drawn by a sweep (``"-"``: dimensionless).
METRIC_UNITS = {
    "mae_position": "m", "rmse_position": "m", "max_position_error": "m", "mae_orientation": "rad",
    "rmse_orientation": "rad", "max_orientation_error": "rad", "thrust_impulse": "N s", "effort_ratio": "-",
    "energy": "J", "mean_power": "W", "power_ratio": "-", "saturation_fraction": "-", "saturation_margin": "-",
    "alpha_min": "rad", "alpha_max": "rad", "alpha_rate_max": "rad/s", "beta_min": "rad", "beta_max": "rad",
    "beta_rate_max": "rad/s", "servo_saturation_fraction": "-", "duration": "s", "num_steps": "-",
}

_PATH = re.compile(r"^(?P<path>[^\[\]]+)(\[[0-9, ]+\])?$")


def _registry_unit(owner, name: str) -> str | None:
    """The unit a registered kind declares for option ``name`` of the class ``owner`` is an instance of."""
    from .. import registry

    for family in registry.FAMILIES:
        for kind in registry.kinds(family).values():
            if not (isinstance(kind.build, type) and isinstance(owner, kind.build)):
                continue
            for key, opt in kind.options.items():
                if name in (key, opt.arg) and opt.unit:
                    return opt.unit
    return None


def parameter_unit(design, path: str) -> str | None:
    """The unit of the leaf ``path`` (``"platform.alpha"``, ``"controller.K_p[2]"``) of ``design``, or ``None``.

    Args:
        design: the :class:`~jaxrotor.optimize.Design` (anything with ``platform``, ``controller``, ``flight``).
        path: a dotted path, optionally with an entry index.

    Returns:
        ``"rad"``, ``"1/s^2"``, ``"-"`` (dimensionless), ... or ``None`` (unknown).
    """
    m = _PATH.match(path)
    if m is None:
        return None
    names = m.group("path").split(".")
    if names[0] == "platform" and len(names) == 2:
        return PLATFORM_UNITS.get(names[1])
    owner = design
    try:
        for name in names[:-1]:
            owner = getattr(owner, name)
    except AttributeError:
        return None
    return _registry_unit(owner, names[-1]) or _COMMON_UNITS.get(names[-1])


def axis_label(design, path: str) -> str:
    """``"<path> [<unit>]"`` (:func:`parameter_unit`), or ``path`` when the unit is unknown."""
    unit = parameter_unit(design, path)
    return path if unit is None else f"{path} [{unit}]"


def metric_label(key: str) -> str:
    """``"<metric> [<unit>]"`` for a :class:`~jaxrotor.metrics.FlightMetrics` column (``"rmse_position[0]"``
    too), or ``key`` when the unit is unknown."""
    unit = METRIC_UNITS.get(key.split("[")[0].removesuffix("_xyz"))
    return key if unit is None else f"{key} [{unit}]"


def cell_edges(values) -> np.ndarray:
    """``(k + 1,)`` cell edges for the ``k`` distinct ``values`` (sorted here): the midpoints between neighbours,
    and half the end step beyond each end. Evenly spaced values: every cell centred on its value; uneven ones:
    each cell the stretch nearest its value, the end cells centred. One value: a cell of width ``0.1 |v|``
    (``1`` for ``v = 0``) centred on it."""
    v = np.unique(np.asarray(values, dtype=float))
    if v.size == 1:
        half = 0.05 * abs(v[0]) or 0.5
        return np.array([v[0] - half, v[0] + half])
    mid = 0.5 * (v[1:] + v[:-1])
    return np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])


def heatmap(ax, x, y, z, norm=None):
    """Draw ``z`` ``(len(x), len(y))`` on ``ax``, the cell of ``z[i, j]`` around ``(x_i, y_j)`` (``pcolormesh``
    with :func:`cell_edges`: centred on it on an evenly spaced grid); ``x`` and ``y`` are the distinct values
    of each axis in increasing order.

    Returns:
        the :class:`matplotlib.collections.QuadMesh` (for a colour bar).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    z = np.asarray(z, dtype=float)
    if z.shape != (x.size, y.size):
        raise ValueError(f"heatmap: values of shape {z.shape} do not match the axes ({x.size}, {y.size}). Fix: "
                         "pass one value per (x_i, y_j).")
    if np.any(np.diff(x) <= 0) or np.any(np.diff(y) <= 0):
        raise ValueError("heatmap: the axis values must be distinct and increasing. Fix: sort them (and z).")
    return ax.pcolormesh(cell_edges(x), cell_edges(y), z.T, norm=norm, shading="flat")
