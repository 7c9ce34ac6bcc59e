"""The ``[platform]`` table of a TOML configuration: a preset name or the star-platform keywords.

Read through the TOML layer of :mod:`jaxrotor.io.toml`; every mistake is a
:class:`~jaxrotor.io.toml.ConfigError` (a ``ValueError``) naming the file, the key,
the value and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import math

from ..design import presets as _presets
from ..design.platform import Platform, explicit_platform, star_platform
from .toml import MISSING, ConfigError, Table, read_toml

__all__ = ["platform_from_table", "parts_from_table", "load_platform", "PLATFORM_KEYS", "PART_KEYS", "LAYOUTS",
           "PRESET_OVERRIDES"]


_NUMBER = "a number"
_NUMBERS = "a number or a list of numbers"
_LIST = "a list of numbers"

#: Keys accepted in a ``[platform]`` table besides ``preset``, with the value kind expected.
PLATFORM_KEYS: dict[str, str] = {
    "n": "an integer >= 1",
    "arm_length": _NUMBER,
    "mass": _NUMBER,
    "c_f": _NUMBERS,
    "c_tau": _NUMBERS,
    "kappa": _NUMBERS,
    "alpha": _NUMBERS,
    "beta": _NUMBERS,
    "alpha_sign": _NUMBERS,
    "beta_sign": _NUMBERS,
    "delta": _NUMBERS,
    "gamma": _LIST,
    "inertia": "a list of 3 numbers (diagonal) or a 3x3 list of lists",
    "hub_mass": _NUMBER,
    "body_radius": _NUMBER,
    "body_height": _NUMBER,
    "gravity": _NUMBER,
    "rotor_speed_min": _NUMBERS,
    "rotor_speed_max": _NUMBERS,
    "tilting": 'a list of angle names, a subset of ["alpha", "beta"]',
    "name": "a string",
}
_REQUIRED = ("n", "arm_length", "mass", "c_f", "c_tau")


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_nums(v) -> bool:
    return isinstance(v, list) and len(v) > 0 and all(_is_num(x) for x in v)


def _kind_ok(key: str, v) -> bool:
    kind = PLATFORM_KEYS[key]
    if key == "n":
        return isinstance(v, int) and not isinstance(v, bool) and v >= 1
    if kind == _NUMBER:
        return _is_num(v)
    if kind == _NUMBERS:
        return _is_num(v) or _is_nums(v)
    if kind == _LIST:
        return _is_nums(v)
    if key == "inertia":
        return (_is_nums(v) and len(v) == 3) or (
            isinstance(v, list) and len(v) == 3 and all(_is_nums(r) and len(r) == 3 for r in v))
    if key == "tilting":
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    if key == "name":
        return isinstance(v, str)
    return True  # pragma: no cover


#: ``layout = ...`` choices of a ``[platform]`` table and the builder of each.
LAYOUTS = ("star", "x", "plus", "h", "coaxial_x", "y6", "explicit")
#: Keys each layout reads besides the common ones (:data:`_COMMON`).
_LAYOUT_KEYS = {
    "star": ("n", "arm_length", "gamma", "delta", "alpha", "beta", "alpha_sign", "beta_sign", "tilting"),
    "x": ("n", "arm_length", "delta", "alpha", "beta", "alpha_sign", "beta_sign", "tilting"),
    "plus": ("n", "arm_length", "delta", "alpha", "beta", "alpha_sign", "beta_sign", "tilting"),
    "h": ("n", "length", "width"),
    "coaxial_x": ("n", "arm_length", "separation", "lower_efficiency", "delta", "alpha", "beta", "alpha_sign",
                  "beta_sign"),
    "y6": ("n", "arm_length", "separation", "lower_efficiency", "delta", "alpha", "beta", "alpha_sign", "beta_sign"),
    "explicit": ("positions", "axes"),
}
_COMMON = ("layout", "mass", "c_f", "c_tau", "kappa", "inertia", "hub_mass", "body_radius", "body_height", "gravity",
           "rotor_speed_min", "rotor_speed_max", "rotor_inertia", "com_offset", "name")
_EXTRA_KEYS = {"layout": "one of " + ", ".join(f'"{x}"' for x in LAYOUTS), "length": _NUMBER, "width": _NUMBER,
               "separation": _NUMBER, "lower_efficiency": _NUMBER, "rotor_inertia": _NUMBERS,
               "com_offset": "a list of 3 numbers [x, y, z] (m)",
               "positions": "an n x 3 list of lists [m]", "axes": "an n x 3 list of lists (unit vectors)"}
PLATFORM_KEYS.update(_EXTRA_KEYS)
#: Angles that may also be given in degrees as ``<name>_deg``.
ANGLE_KEYS = ("alpha", "beta", "gamma", "delta")


def _rows3(v) -> bool:
    return isinstance(v, list) and len(v) > 0 and all(_is_nums(r) and len(r) == 3 for r in v)


def _degrees(table: Mapping[str, Any], where: str) -> dict:
    """``<angle>_deg`` keys converted to radians under their radian names (giving both is an error)."""
    out = dict(table)
    for key in ANGLE_KEYS:
        deg = f"{key}_deg"
        if deg not in out:
            continue
        v = out.pop(deg)
        if key in out:
            raise ConfigError(f"{where} gives both `{key}` = {out[key]!r} [rad] and `{deg}` = {v!r} [deg]. "
                              f"Fix: keep only one of them.")
        if not (_is_num(v) or _is_nums(v)):
            raise ConfigError(f"{where} key `{deg}` = {v!r} is invalid: expected {_NUMBERS} in degrees. "
                              f"Fix: write e.g. `{deg} = 25.0`.")
        out[key] = math.radians(v) if _is_num(v) else [math.radians(x) for x in v]
    return out


def platform_from_table(table: Mapping[str, Any], source: str, parts: Mapping[str, Any] | None = None) -> Platform:
    """Build a platform from the ``[platform]`` table (and the ``[parts.*]`` tables) of a TOML configuration.

    Either ``preset = "name"`` (see :func:`jaxrotor.design.presets.names`), alone or with
    overrides of its fields (:data:`PRESET_OVERRIDES`: ``mass``, ``inertia``, ``c_f``, ``c_tau``,
    the speed bounds, ``rotor_inertia`` [kg m^2], ``gravity``, ``name``), or a
    geometry: ``layout`` (default ``"star"``) with its keys,

    ============  ==============================================================================
    ``star``      ``n``, ``arm_length`` [m]; eqs. (3)-(4) angles ``gamma`` (default the paper's
                  ``(i-1) 2 pi/n``), ``delta``, ``alpha``, ``beta``, ``alpha_sign``, ``beta_sign``,
                  ``tilting``
    ``x``         ``n`` (even), ``arm_length``; azimuths ``pi - pi/n + (i-1) 2 pi/n``, tilt angles as star
    ``plus``      ``n`` (even), ``arm_length``; a rotor on the nose, tilt angles as star
    ``h``         ``n`` (even), ``length``, ``width`` [m]: two rails along ``x_B``
    ``coaxial_x`` ``n`` (8, 12, ...), ``arm_length``, ``separation`` [m] (axial spacing of a pair),
                  ``lower_efficiency`` (default 0.85)
    ``y6``        ``arm_length``, ``separation``, ``lower_efficiency``: three arms, six rotors
    ``explicit``  ``positions`` (n x 3) [m] and ``axes`` (n x 3, unit; default ``z_B``), ``kappa``
    ============  ==============================================================================

    and the vehicle: with parts, ``mass`` [kg], ``inertia`` [kg m^2], ``c_f``, ``c_tau``,
    ``rotor_speed_max`` [rad/s] and ``rotor_inertia`` [kg m^2] are derived and any of them given
    overrides the parts (reported); without parts ``mass``, ``c_f`` [N s^2/rad^2], ``c_tau``
    [N m s^2/rad^2] and ``inertia`` (or ``hub_mass``) are required. Also ``kappa``,
    ``body_radius``, ``body_height`` [m], ``gravity`` [m/s^2], ``rotor_speed_min`` [rad/s],
    ``com_offset`` [m] (the centre of mass relative to the geometric centre: with parts an
    override, ``[0, 0, 0]`` keeps the layout about the centre of mass)
    (``omega_min``/``omega_max`` are short aliases of the speed bounds), ``name``. Every
    angle is in radians, or in degrees as ``alpha_deg``, ``beta_deg``, ``gamma_deg``,
    ``delta_deg`` (not both forms).

    Example::

        [platform]
        layout = "x"
        n = 4
        arm_length = 0.25

        [parts.hub]
        mass = 0.60
        radius = 0.08
        height = 0.05
        # [parts.arm], [parts.motor], [parts.propeller], [parts.battery], ... (docs/vehicles.md)

    Args:
        table: the parsed ``[platform]`` table (a dict).
        source: where it came from (a file name), quoted in error messages.
        parts: the parsed ``[parts]`` table (``hub``, ``arm``, ``motor``, ``propeller``, ``battery``,
            ``payload``, ``landing_gear``, ``ballast`` sub-tables, ``air_density``), or ``None``.

    Returns:
        a validated :class:`Platform`.

    Raises:
        ConfigError: (a ``ValueError``) naming the file, the key, the bad value and the fix.
    """
    where = f"{source}: [platform]"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table, got {type(table).__name__} {table!r}. "
                         "Fix: write a [platform] section with `preset = \"name\"` or the platform parameters.")
    if "preset" in table:
        preset = table["preset"]
        others = sorted(k for k in table if k != "preset")
        bad = [k for k in others if k not in PRESET_OVERRIDES]
        if bad:
            raise ConfigError(f"{where} key `preset` = {preset!r} cannot be combined with {', '.join(bad)}. "
                             f"Fix: a preset takes only the overrides {', '.join(PRESET_OVERRIDES)}; for another "
                             "geometry drop `preset` and give every parameter.")
        if parts is not None:
            raise ConfigError(f"{source}: [parts] cannot be combined with `preset` = {preset!r} (a preset brings its "
                              "own vehicle). Fix: drop [parts], or drop the preset and describe the geometry.")
        if not isinstance(preset, str) or preset not in _presets.names():
            raise ConfigError(f"{where} key `preset` = {preset!r} is not a preset name. "
                             f"Fix: use one of {', '.join(_presets.names())} (see `jaxrotor presets`).")
        platform = _presets.get(preset)
        return _override(platform, {k: table[k] for k in others}, where) if others else platform
    for old in ("omega_min", "omega_max"):  # short aliases of the rotor speed bounds (`omega` in a flight is the body rate)
        if old in table:
            new = old.replace("omega", "rotor_speed")
            if new in table:
                raise ConfigError(f"{where} gives both `{old}` = {table[old]!r} and its long name `{new}` = "
                                  f"{table[new]!r}. Fix: keep only `{new}`.")
            table = {(new if k == old else k): v for k, v in table.items()}
    table = _degrees(table, where)
    layout = table.get("layout", "star")
    if layout not in LAYOUTS:
        raise ConfigError(f"{where} key `layout` = {layout!r} is unknown. Fix: use one of "
                          f"{', '.join(repr(x) for x in LAYOUTS)}.")
    allowed = set(_COMMON) | set(_LAYOUT_KEYS[layout])
    unknown = sorted(k for k in table if k not in allowed)
    if unknown:
        k = unknown[0]
        hint = (f"; `{k}` belongs to other layouts" if k in PLATFORM_KEYS else "; check the spelling")
        raise ConfigError(f"{where} has unknown key(s) {', '.join(f'`{k}`' for k in unknown)} "
                         f"(value {table[k]!r}). Fix: use `preset` or the keys of layout {layout!r}: "
                         f"{', '.join(sorted(allowed))} (angles also as <name>_deg){hint}.")
    required = {"star": ("n", "arm_length"), "x": ("n", "arm_length"), "plus": ("n", "arm_length"),
                "h": ("n", "length", "width"), "coaxial_x": ("n", "arm_length", "separation"),
                "y6": ("arm_length", "separation"), "explicit": ("positions",)}[layout]
    if parts is None:
        required = required + ("mass", "c_f", "c_tau")
    missing = [k for k in required if k not in table]
    if missing:
        raise ConfigError(f"{where} is missing the required key(s) {', '.join(f'`{k}`' for k in missing)}. "
                         f"Fix: add them to the {layout!r} layout" + ("" if parts is not None else
                         " (mass [kg], c_f [N s^2/rad^2], c_tau [N m s^2/rad^2], or [parts.*] tables to derive them)")
                         + " or use `preset = \"name\"`.")
    for key, v in table.items():
        if key in ("positions", "axes"):
            ok = _rows3(v)
        elif key == "layout":
            ok = True
        elif key in ("length", "width", "separation", "lower_efficiency"):
            ok = _is_num(v)
        elif key == "com_offset":
            ok = _is_nums(v) and len(v) == 3
        else:
            ok = _kind_ok(key, v)
        if not ok:
            raise ConfigError(f"{where} key `{key}` = {v!r} is invalid: expected {PLATFORM_KEYS[key]}. "
                             f"Fix: write `{key}` as {PLATFORM_KEYS[key]}.")
    if parts is None and "inertia" not in table and "hub_mass" not in table:
        raise ConfigError(f"{where} gives neither `inertia` nor `hub_mass`. Fix: add `inertia = [Jxx, Jyy, Jzz]` "
                         "[kg m^2], `hub_mass = ...` [kg] to build the inertia from lumped parts, or [parts.*] "
                         "tables to derive it.")
    kwargs = dict(table)
    kwargs.pop("layout", None)
    if "tilting" in kwargs:
        kwargs["tilting"] = tuple(kwargs["tilting"])
    kwargs.setdefault("name", str(source).rsplit("/", 1)[-1].rsplit(".", 1)[0] or "platform")
    if parts is not None:
        kwargs["parts"] = parts_from_table(parts, source)
    try:
        return _build(layout, kwargs)
    except ConfigError:
        raise
    except ValueError as err:
        raise ConfigError(f"{where}: {err}") from None


#: Fields a ``[platform]`` table may override on a preset (``preset = "name"`` plus any of these).
PRESET_OVERRIDES = ("mass", "inertia", "c_f", "c_tau", "rotor_speed_min", "rotor_speed_max", "rotor_inertia",
                    "gravity", "name")


def _override(platform: Platform, values: dict, where: str) -> Platform:
    """``platform`` with the fields in ``values`` replaced (checked like a new platform; listed as overrides)."""
    import dataclasses

    import jax.numpy as jnp
    import numpy as np

    for key, v in values.items():
        if not _kind_ok(key, v):
            raise ConfigError(f"{where} key `{key}` = {v!r} is invalid: expected {PLATFORM_KEYS[key]}. "
                              f"Fix: write `{key}` as {PLATFORM_KEYS[key]}.")
    n = platform.n_rotors
    dtype = platform.c_f.dtype
    new = {}
    for key, v in values.items():
        if key == "name":
            new[key] = v
            continue
        a = np.asarray(v, dtype=float)
        if key == "inertia":
            a = np.diag(a) if a.shape == (3,) else a
        elif key in ("mass", "gravity"):
            a = a.reshape(())
        else:
            if a.ndim == 0:
                a = np.full((n,), float(a))
            if a.shape != (n,):
                raise ConfigError(f"{where} key `{key}` = {v!r} has {a.size} entries but the preset has {n} rotors. "
                                  f"Fix: give one number or {n}.")
            if key == "rotor_inertia" and not np.all(a >= 0):  # (NaN fails too)
                raise ConfigError(f"{where} key `rotor_inertia` = {v!r} is invalid: a spin inertia is >= 0 kg m^2 "
                                  "(a number, not NaN). Fix: give e.g. 1.095e-4.")
        new[key] = jnp.asarray(a, dtype=dtype)
    derived = tuple(k for k in new if k in ("mass", "inertia", "c_f", "c_tau", "rotor_speed_max", "rotor_inertia"))
    try:
        return dataclasses.replace(platform, **new, overrides=tuple(dict.fromkeys(platform.overrides + derived)))
    except ValueError as err:
        raise ConfigError(f"{where}: {err}") from None


def _build(layout: str, kw: dict) -> Platform:
    from ..design import layouts

    if layout == "star":
        return star_platform(kw.pop("n"), kw.pop("arm_length"), **kw)
    if layout == "x":
        return layouts.x_layout(kw.pop("n"), kw.pop("arm_length"), **kw)
    if layout == "plus":
        return layouts.plus_layout(kw.pop("n"), kw.pop("arm_length"), **kw)
    if layout == "h":
        return layouts.h_layout(kw.pop("n"), kw.pop("length"), kw.pop("width"), **kw)
    if layout == "coaxial_x":
        return layouts.coaxial_x_layout(kw.pop("n"), kw.pop("arm_length"), kw.pop("separation"),
                                        kw.pop("lower_efficiency", 0.85), **kw)
    if layout == "y6":
        n = kw.pop("n", 6)
        if n != 6:
            raise ValueError(f"`n` = {n!r} is invalid for layout 'y6' (three arms, two rotors each). Fix: drop `n` "
                             "or write n = 6.")
        return layouts.y6_layout(kw.pop("arm_length"), kw.pop("separation"), kw.pop("lower_efficiency", 0.85), **kw)
    positions = kw.pop("positions")
    if "kappa" not in kw:
        kw["kappa"] = [-((-1.0) ** k) for k in range(len(positions))]
    return explicit_platform(positions, **kw)


#: Keys of each ``[parts.<name>]`` table: (key, required, kind) with kind "number", "vector" or "int".
PART_KEYS: dict[str, tuple[tuple[str, bool, str], ...]] = {
    "hub": (("mass", True, "number"), ("radius", True, "number"), ("height", True, "number")),
    "arm": (("mass", False, "number"), ("mass_per_length", False, "number"), ("radius", True, "number")),
    "motor": (("mass", True, "number"), ("radius", True, "number"), ("height", True, "number"),
              ("rotor_mass", False, "number"), ("kv", False, "number"), ("resistance", False, "number"),
              ("no_load_current", False, "number"), ("max_current", False, "number")),
    "propeller": (("diameter", True, "number"), ("pitch", False, "number"), ("mass", True, "number"),
                  ("c_t", True, "number"), ("c_p", True, "number"), ("chord", False, "number"),
                  ("thickness", False, "number")),
    "battery": (("mass", True, "number"), ("size", True, "vector"), ("offset", False, "vector"),
                ("cells", False, "int"), ("capacity_mah", False, "number"),
                ("internal_resistance", False, "number"), ("ocv_soc", False, "list"), ("ocv_volts", False, "list"),
                ("soc0", False, "number"), ("soc_floor", False, "number")),
    "payload": (("mass", True, "number"), ("offset", False, "vector")),
    "landing_gear": (("mass", True, "number"), ("legs", False, "int"), ("radius", False, "number"),
                     ("length", False, "number"), ("leg_radius", False, "number"), ("foot_radius", False, "number")),
    "ballast": (("mass", True, "number"), ("size", False, "vector"), ("offset", False, "vector")),
    "esc": (("efficiency", False, "number"),),
}
_REQUIRED_PARTS = ("hub", "arm", "motor", "propeller")


def parts_from_table(data: Mapping[str, Any], source: str):
    """The :class:`~jaxrotor.design.parts.Parts` of a ``[parts]`` table (sub-tables per part, SI units).

    Sub-tables (keys and units in ``docs/vehicles.md`` and :mod:`jaxrotor.design.parts`):
    ``hub``, ``arm``, ``motor``, ``propeller`` (required), ``battery`` (with its open-circuit voltage
    table ``ocv_soc``/``ocv_volts`` per cell, ``soc0``, ``soc_floor``), ``esc`` (``efficiency``), ``payload``,
    ``landing_gear``, ``ballast`` (optional); ``air_density`` [kg/m^3] at the top.

    Raises:
        ConfigError: a missing part or key, a wrong type, an unknown key, or a value the
            part refuses (non-positive dimension, ...), naming the key, the value and the fix.
    """
    from ..design import parts as P

    top = Table(data, source, "parts")
    for name in _REQUIRED_PARTS:
        if name not in data:
            raise top.error(f"missing table `[parts.{name}]` (a vehicle from parts needs "
                            f"{', '.join('[parts.' + p + ']' for p in _REQUIRED_PARTS)}). Fix: add [parts.{name}] "
                            f"with {', '.join(k for k, req, _ in PART_KEYS[name] if req)}.")
    built = {}
    classes = {"hub": P.Hub, "arm": P.Arm, "motor": P.Motor, "propeller": P.Propeller, "battery": P.Battery,
               "esc": P.ESC, "payload": P.Payload, "landing_gear": P.LandingGear, "ballast": P.Ballast}
    for name, keys in PART_KEYS.items():
        if name not in data:
            top.used.add(name)
            continue
        t = top.table(name)
        values = {}
        for key, req, kind in keys:
            default = MISSING if req else None
            if kind == "number":
                v = t.get(key, float, default, f"a number in SI units for `{name}.{key}`")
                if v is not None and (math.isnan(v) or (math.isinf(v) and key != "max_current")):
                    raise t.fail(key, v, "must be a finite number", f"give a finite `{key}`")
            elif kind == "int":
                v = t.integer(key, default)
            elif kind == "list":
                v = t.vector(key, None, default, f"write `{key} = [...]`: a list of numbers")
                if isinstance(v, float):
                    raise t.fail(key, v, "expected a list of numbers", f"write `{key} = [...]`")
            else:
                v = t.vector(key, 3, default, f"write `{key} = [x, y, z]` in metres")
            if v is not None:
                values[key] = v
        t.check_unknown()
        if name == "arm" and ("mass" in values) == ("mass_per_length" in values):
            raise t.error(f"[parts.arm] needs exactly one of `mass` [kg] (one arm) and `mass_per_length` [kg/m] "
                          f"(got {sorted(k for k in values if 'mass' in k) or 'neither'}). Fix: give one of them.")
        try:
            built[name] = classes[name](**values)
        except ValueError as err:
            raise t.error(f"[parts.{name}]: {err}") from None
    rho = top.number("air_density", P.AIR_DENSITY, positive=True, fix="the air density in kg/m^3, e.g. 1.225")
    top.check_unknown()
    return P.Parts(air_density=rho, **built)


def load_platform(path: str | Path) -> Platform:
    """The platform of the ``[platform]`` table of the TOML file at ``path`` (other tables are ignored).

    Raises:
        ConfigError: no such file, not valid TOML, no ``[platform]`` table, or a bad
            ``[platform]`` table (see :func:`platform_from_table`).
    """
    data = read_toml(path)
    if "platform" not in data:
        raise ConfigError(f"{path}: no [platform] table (found: {', '.join(data) or 'nothing'}). "
                          'Fix: add a [platform] table with `preset = "name"` or the platform parameters.')
    return platform_from_table(data["platform"], str(path), data.get("parts"))

