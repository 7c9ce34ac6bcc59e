"""The one TOML layer of jaxrotor: read a file, access its tables with typed checks.

Every configuration jaxrotor reads (a flight for ``jaxrotor simulate``, a design for
``jaxrotor analyze``, a problem for ``jaxrotor tune`` / ``optimize``) is parsed by
:func:`read_toml` and read through :class:`Table`. Each mistake raises a
:class:`ConfigError` whose message names the file, the key (dotted, e.g.
``solver.rtol``), the bad value and the fix, while the configuration is loaded,
never as a NaN later in a flight.

Example::

    data = read_toml("configs/paper_reproduction.toml")
    solver = Table(data.get("solver", {}), "configs/paper_reproduction.toml", "solver")
    rtol = solver.number("rtol", None, positive=True)   # None when absent
    solver.check_unknown()                              # a misspelt key is an error
"""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import registry
from ..registry import REQUIRED, Kind, Option

__all__ = ["ConfigError", "Table", "read_toml", "parse_toml", "MISSING"]


class ConfigError(ValueError):
    """A configuration mistake; the message names the file, the key, the value and the fix."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: Default of :meth:`Table.get` meaning "the key is required".
MISSING: Any = _Missing()


def parse_toml(text: str, source: str = "<string>") -> dict:
    """Parse TOML ``text``; ``source`` (a file name) is quoted in the error of a syntax mistake.

    Raises:
        ConfigError: the text is not valid TOML (the message gives the line and column).
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{source}: not valid TOML ({err}). Fix: check the syntax at that line.") from None


def read_toml(path: str | Path) -> dict:
    """Read and parse the TOML file at ``path``.

    Raises:
        ConfigError: the file does not exist or is not valid TOML.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such configuration file. Fix: pass the path of a TOML file (see configs/).")
    return parse_toml(path.read_text(), str(path))


class Table:
    """Typed access to one TOML table; error messages locate the key as ``path.key`` in ``source``.

    Every accessor marks its key as used, so :meth:`check_unknown` can refuse the
    keys nobody read (misspellings). Numbers are SI; integers are accepted where a
    float is expected.

    Attributes:
        data: the table (a dict). source: the file name. path: the table's dotted
            name (``""`` for the top level).
    """

    def __init__(self, data: Any, source: str, path: str = ""):
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: `{path}` must be a table, got {type(data).__name__} {data!r}. "
                              f"Fix: write it as [{path}] with key = value lines.")
        self.data, self.source, self.path = dict(data), source, path
        self.used: set[str] = set()

    def __contains__(self, k: str) -> bool:
        return k in self.data

    def key(self, k: str) -> str:
        """The dotted name of key ``k`` (``"solver.rtol"``)."""
        return f"{self.path}.{k}" if self.path else k

    def error(self, message: str) -> ConfigError:
        """A :class:`ConfigError` for this table: ``"<source>: <message>"``."""
        return ConfigError(f"{self.source}: {message}")

    def fail(self, k: str, value: Any, why: str, fix: str) -> ConfigError:
        """The error for key ``k`` holding ``value``: why it is wrong and how to fix it."""
        return self.error(f"key `{self.key(k)}` = {value!r} is invalid: {why}. Fix: {fix}.")

    def get(self, k: str, kind: type | tuple, default: Any = MISSING, fix: str = ""):
        """Value of ``k`` checked to be of ``kind`` (a type or tuple of types); ``default`` when absent.

        Raises:
            ConfigError: ``k`` is absent and has no default, or has the wrong type.
        """
        self.used.add(k)
        if k not in self.data:
            if default is MISSING:
                near = difflib.get_close_matches(k, [x for x in self.data if x not in self.used], n=1)
                hint = f" (is `{self.key(near[0])}` = {self.data[near[0]]!r} a misspelling of it?)" if near else ""
                raise self.error(f"missing key `{self.key(k)}`{hint}. Fix: add it" + (f" ({fix})" if fix else "") + ".")
            return default
        v = self.data[k]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in kinds):
            names = " or ".join("table" if t is dict else t.__name__ for t in kinds)
            raise self.fail(k, v, f"expected {names}, got {type(v).__name__}", fix or f"give a {names}")
        return v

    def number(self, k: str, default: Any = MISSING, positive: bool = False, fix: str = "") -> float:
        """A finite float (``> 0`` when ``positive``); ``default`` (may be ``None``) when absent."""
        v = self.get(k, float, default, fix)
        if v is None or v is default:
            return v
        if not math.isfinite(v) or (positive and v <= 0):
            raise self.fail(k, v, "must be a finite number" + (" > 0" if positive else ""),
                            fix or ("give a positive number" if positive else "give a finite number"))
        return v

    def integer(self, k: str, default: Any = MISSING, minimum: int | None = None, fix: str = "") -> int:
        """An integer (``>= minimum`` when given); ``default`` (may be ``None``) when absent."""
        v = self.get(k, int, default, fix or "an integer")
        if v is None or v is default:
            return v
        if minimum is not None and v < minimum:
            raise self.fail(k, v, f"must be >= {minimum}", fix or f"give an integer >= {minimum}")
        return v

    def boolean(self, k: str, default: Any = MISSING) -> bool:
        """``true`` or ``false``; ``default`` when absent."""
        return self.get(k, bool, default, "write true or false")

    def vector(self, k: str, n: int | None = None, default: Any = MISSING, fix: str = "", allow_inf: bool = False):
        """A list of ``n`` floats (or a single float, returned as is); ``default`` when absent.

        NaN is always refused; ``inf`` only when ``allow_inf`` (e.g. an unbounded limit)."""
        v = self.get(k, (list, float), default, fix)
        if v is default:
            return v
        if isinstance(v, float):
            if math.isnan(v) or (math.isinf(v) and not allow_inf):
                raise self.fail(k, v, "must be a finite number", fix or "give a finite number")
            return v
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            raise self.fail(k, v, "expected a list of numbers", fix or "write e.g. [1.0, 2.0, 3.0]")
        if n is not None and len(v) != n:
            raise self.fail(k, v, f"expected {n} numbers, got {len(v)}", fix or f"give exactly {n} numbers")
        if any(math.isnan(x) or (math.isinf(x) and not allow_inf) for x in v):
            raise self.fail(k, v, "every entry must be a finite number" + (" or +-inf" if allow_inf else ""),
                            fix or "give finite numbers")
        return [float(x) for x in v]

    def choice(self, k: str, options, default: Any = MISSING) -> str:
        """One of the strings ``options``; ``default`` when absent."""
        v = self.get(k, str, default, f"one of {', '.join(options)}")
        if v not in options:
            raise self.fail(k, v, "unknown choice", f"use one of {', '.join(repr(o) for o in options)}")
        return v

    def option(self, k: str, opt: Option) -> Any:
        """The value of option ``k`` declared by ``opt`` (type, bounds, default; :class:`jaxrotor.registry.Option`).

        Absent: the option's default (an error naming the key and what to give when it is
        :data:`~jaxrotor.registry.REQUIRED`). A ``tuple`` option's list comes back as a tuple.

        Raises:
            ConfigError: the value has the wrong type, length or choice, is NaN or (unless
                ``allow_inf``) infinite, or lies outside the bounds; naming the key, the value and the fix.
        """
        fix = opt.fix or f"give {opt.describe()}"
        if k not in self.data:
            default = MISSING if opt.default is REQUIRED else opt.default
            return self.get(k, object, default, opt.fix or (f"{opt.doc}: {opt.describe()}" if opt.doc else opt.describe()))
        if opt.type is bool:
            v = self.boolean(k)
        elif opt.type is str:
            v = self.choice(k, opt.choices) if opt.choices else self.get(k, str, fix=fix)
        elif opt.type is int:
            v = self.integer(k, fix=fix)
        elif opt.type is float:
            v = self.get(k, float, fix=fix)
            if math.isnan(v) or (math.isinf(v) and not opt.allow_inf):
                raise self.fail(k, v, "must be a finite number" + (f" {opt.bounds()}" if opt.bounds() else ""), fix)
        else:
            v = self.vector(k, opt.length, fix=fix, allow_inf=opt.allow_inf)
            if isinstance(v, float) and not opt.scalar:
                raise self.fail(k, v, f"expected a list of {opt.length or 'several'} numbers, got one number", fix)
        if opt.type is not bool and opt.type is not str and opt.outside(v):
            raise self.fail(k, v, opt.why or f"must be {opt.bounds()}", fix)
        return tuple(v) if opt.type is tuple and isinstance(v, list) else v

    def kind(self, family: str, default: Any = MISSING) -> Kind:
        """The registered :class:`~jaxrotor.registry.Kind` of ``family`` this table's ``kind`` key names
        (``default`` when absent).

        Raises:
            ConfigError: the name is not a registered kind of ``family`` (the message lists them).
        """
        registered = tuple(registry.kinds(family))
        name = self.get("kind", str, default, f"one of {', '.join(registered)}")
        if name not in registered:
            raise self.fail("kind", name, f"unknown choice, not a registered {family} kind",
                            f"use one of {', '.join(repr(o) for o in registered)}")
        return registry.lookup(family, name)

    def build(self, family: str, default: Any = MISSING) -> Any:
        """The object of family ``family`` that this table's ``kind`` names (``default`` when absent), built from
        the options that kind declares (:mod:`jaxrotor.registry`); every other key is refused.

        Raises:
            ConfigError: an unknown kind (listing the registered ones), a bad or unknown option,
                or a value the builder refuses (its message, prefixed by the table).
        """
        return self.build_kind(self.kind(family, default))

    def build_kind(self, kind: Kind) -> Any:
        """``kind`` built from this table: :meth:`option` for each declared option, then :meth:`check_unknown`.

        Raises:
            ConfigError: a bad or unknown option, or a value the builder refuses (as a ``ValueError``).
        """
        values = {k: self.option(k, opt) for k, opt in kind.options.items()}
        self.check_unknown()
        try:
            return kind(**values)
        except ValueError as err:
            raise self.error(f"[{self.path}]: {err}") from None

    def table(self, k: str, required: bool = False, fix: str = "") -> "Table":
        """The sub-table ``k`` as a :class:`Table` (empty when absent and not ``required``)."""
        self.used.add(k)
        if k not in self.data:
            if required:
                raise self.error(f"missing table `[{self.key(k)}]`. Fix: add [{self.key(k)}]"
                                 + (f" {fix}" if fix else "") + ".")
            return Table({}, self.source, self.key(k))
        v = self.data[k]
        if not isinstance(v, Mapping):
            raise self.fail(k, v, f"expected a table, got {type(v).__name__}", fix or f"write it as [{self.key(k)}]")
        return Table(v, self.source, self.key(k))

    def renamed(self, old: str, new: str, value_fix: str | None = None) -> None:
        """Refuse the old key ``old`` of this table, now spelt ``new`` (a full dotted key).

        Raises:
            ConfigError: "key `solver.method` = 'tsit5` was renamed: use `solver.kind`. Fix: ...".
        """
        if old in self.data:
            v = self.data[old]
            raise self.error(f"key `{self.key(old)}` = {v!r} was renamed: use `{new}`. Fix: "
                             + (value_fix or f"write `{new.rsplit('.', 1)[-1]} = {_toml(v)}` in "
                                             f"[{new.rsplit('.', 1)[0]}] instead") + ".")

    def moved(self, old: str, new: str) -> None:
        """Refuse the key ``old`` of this table, which now lives at ``new`` (a full dotted key) in another table.

        Raises:
            ConfigError: "key `solver.save_dt` = 0.01 moved to `flight.save_dt`. Fix: ...".
        """
        if old in self.data:
            v = self.data[old]
            table, key = new.rsplit(".", 1)
            raise self.error(f"key `{self.key(old)}` = {v!r} moved to `{new}`. Fix: write `{key} = {_toml(v)}` "
                             f"under [{table}] and remove it from [{self.path}].")

    def check_unknown(self, extra_ok: tuple[str, ...] = ()) -> None:
        """Refuse every key no accessor read (a misspelling), listing the valid ones."""
        unknown = set(self.data) - self.used - set(extra_ok)
        if unknown:
            k = sorted(unknown)[0]
            where = f" in [{self.path}]" if self.path else ""
            raise self.error(f"unknown key `{self.key(k)}` = {self.data[k]!r}{where}. Fix: remove it or correct the "
                             f"spelling; valid keys here: {', '.join(sorted(self.used | set(extra_ok))) or 'none'}.")


def _toml(v: Any) -> str:
    """``v`` as a TOML value (for the fixes quoted in error messages)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return repr(v)
