"""The ``[platform]`` table of a TOML configuration: a preset name or the star-platform keywords.

Read through the TOML layer of :mod:`jaxrotor.io.toml`; every mistake is a
:class:`~jaxrotor.io.toml.ConfigError` (a ``ValueError``) naming the file, the key,
the value and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..design import presets as _presets
from ..design.platform import Platform, star_platform
from .toml import ConfigError, read_toml

__all__ = ["platform_from_table", "load_platform", "PLATFORM_KEYS"]


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


def platform_from_table(table: Mapping[str, Any], source: str) -> Platform:
    """Build a platform from the ``[platform]`` table of a TOML configuration.

    Either ``preset = "name"`` (alone; see :func:`jaxrotor.design.presets.names`) or the keyword
    arguments of :func:`~jaxrotor.design.platform.star_platform`: required ``n``,
    ``arm_length`` [m], ``mass`` [kg], ``c_f`` [N s^2/rad^2], ``c_tau`` [N m s^2/rad^2],
    and ``inertia`` [kg m^2] or ``hub_mass`` [kg]; optional ``kappa``, ``alpha``,
    ``beta``, ``alpha_sign``, ``beta_sign``, ``delta``, ``gamma`` [rad], ``body_radius``,
    ``body_height`` [m], ``gravity`` [m/s^2], ``rotor_speed_min``, ``rotor_speed_max`` [rad/s]
    (TOML ``inf`` for no limit; ``omega_min``/``omega_max`` are accepted as short aliases of
    these rotor speed bounds), ``tilting``, ``name``. Angles are in radians.

    Example::

        [platform]
        n = 6
        arm_length = 0.385
        mass = 3.5
        c_f = 3.799e-5
        c_tau = 1.163e-6
        alpha = 0.436   # alpha_0, with the default sign pattern (-1)^i
        beta = 0.175
        inertia = [0.155, 0.147, 0.251]
        rotor_speed_max = 700.0

    Args:
        table: the parsed ``[platform]`` table (a dict).
        source: where it came from (a file name), quoted in error messages.

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
        if others:
            raise ConfigError(f"{where} key `preset` = {preset!r} cannot be combined with {', '.join(others)}. "
                             "Fix: either name a preset alone, or drop `preset` and give every parameter.")
        if not isinstance(preset, str) or preset not in _presets.names():
            raise ConfigError(f"{where} key `preset` = {preset!r} is not a preset name. "
                             f"Fix: use one of {', '.join(_presets.names())} (see `jaxrotor presets`).")
        return _presets.get(preset)
    for old in ("omega_min", "omega_max"):  # short aliases of the rotor speed bounds (`omega` in a flight is the body rate)
        if old in table:
            new = old.replace("omega", "rotor_speed")
            if new in table:
                raise ConfigError(f"{where} gives both `{old}` = {table[old]!r} and its long name `{new}` = "
                                  f"{table[new]!r}. Fix: keep only `{new}`.")
            table = {(new if k == old else k): v for k, v in table.items()}
    unknown = sorted(k for k in table if k not in PLATFORM_KEYS)
    if unknown:
        raise ConfigError(f"{where} has unknown key(s) {', '.join(f'`{k}`' for k in unknown)} "
                         f"(value {table[unknown[0]]!r}). Fix: use `preset` or the keys "
                         f"{', '.join(PLATFORM_KEYS)}; check the spelling.")
    missing = [k for k in _REQUIRED if k not in table]
    if missing:
        raise ConfigError(f"{where} is missing the required key(s) {', '.join(f'`{k}`' for k in missing)}. "
                         f"Fix: add them (n, arm_length [m], mass [kg], c_f [N s^2/rad^2], c_tau [N m s^2/rad^2]) "
                         "or use `preset = \"name\"`.")
    for key, v in table.items():
        if not _kind_ok(key, v):
            raise ConfigError(f"{where} key `{key}` = {v!r} is invalid: expected {PLATFORM_KEYS[key]}. "
                             f"Fix: write `{key}` as {PLATFORM_KEYS[key]}.")
    if "inertia" not in table and "hub_mass" not in table:
        raise ConfigError(f"{where} gives neither `inertia` nor `hub_mass`. Fix: add `inertia = [Jxx, Jyy, Jzz]` "
                         "[kg m^2] or `hub_mass = ...` [kg] to build the inertia from lumped parts.")
    kwargs = dict(table)
    n = kwargs.pop("n")
    arm = kwargs.pop("arm_length")
    if "tilting" in kwargs:
        kwargs["tilting"] = tuple(kwargs["tilting"])
    kwargs.setdefault("name", str(source).rsplit("/", 1)[-1].rsplit(".", 1)[0] or "platform")
    try:
        return star_platform(n, arm, **kwargs)
    except ValueError as err:
        raise ConfigError(f"{where}: {err}") from None


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
    return platform_from_table(data["platform"], str(path))

