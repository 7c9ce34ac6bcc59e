"""TOML kinds: every class a configuration file can name declares its ``kind`` and options next to itself.

A configuration table chooses a strategy with one key, ``kind`` (``[reference] kind =
"figure_eight"``), or, for objective terms, by its table name (``[objective.tracking]``).
The class (or factory) that ``kind`` names registers itself where it is defined::

    @register("reference", "circle", options={
        "duration": Option(float, gt=0, unit="s", doc="flight time"),
        "radius": Option(float, gt=0, unit="m", doc="circle radius"),
    })
    class Circle(AbstractReference):
        def __init__(self, duration, start=(0.0, 0.0, 1.0), radius=1.0, period=10.0): ...

and the loaders (:mod:`jaxrotor.io.config`, :mod:`jaxrotor.io.optimize_config`,
:mod:`jaxrotor.io.robust_config`) read the registry: the ``kind`` choices, the options
of each kind (type, admissible range, default, unit, doc) and the builder. Adding a
reference, a controller, an allocator or an objective term is a change to one file,
the one that defines it. An option's default, when not declared, is the builder's
keyword default (no keyword default: the option is required).

Families (:data:`FAMILIES`): ``reference``, ``controller``, ``allocator``, ``motor``,
``servo``, ``solver``, ``objective``, ``sensors``, ``wind``, ``aero``, ``randomization``.

This module imports only the standard library, so a core module can register its
classes without importing the configuration layer.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["FAMILIES", "REQUIRED", "Kind", "Option", "builders", "kinds", "lookup", "markdown", "register"]

#: The kind families and the TOML table each one is chosen in.
FAMILIES: dict[str, str] = {
    "reference": "[reference] kind",
    "controller": "[controller] kind",
    "allocator": "[allocator] kind",
    "motor": "[actuators.motor] kind",
    "servo": "[actuators.servo] kind",
    "solver": "[solver] kind",
    "objective": "[objective.<kind>] table",
    "sensors": "[sensors] kind",
    "wind": "[wind] kind",
    "aero": "[aero] kind",
    "randomization": "[randomize] kind",
}


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of an :class:`Option` that must be given in the table.
REQUIRED: Any = _Required()
_SIGNATURE: Any = object()  # "take the builder's keyword default"

_TYPES = (float, int, bool, str, list, tuple)
_TYPE_WORDS = {float: "a number", int: "an integer", bool: "true or false", str: "a string"}


@dataclasses.dataclass(frozen=True)
class Option:
    """One option of a kind: its TOML type, admissible range, default, unit and meaning.

    Attributes:
        type: ``float``, ``int``, ``bool``, ``str``, or ``list`` / ``tuple`` (a list of
            numbers; ``tuple`` converts it to a tuple before building).
        default: the value when the key is absent; :data:`REQUIRED` when it must be
            given; omitted: the builder's keyword default (:data:`REQUIRED` if it has none).
        unit: SI unit of the value (``"s"``, ``"m"``, ``"rad"``, ``""`` for none).
        doc: one line saying what it is.
        ge, gt, le, lt: inclusive / exclusive bounds (of every entry of a list), or ``None``.
        length: the number of entries of a list (``None``: any).
        scalar: whether a list option also accepts one number (passed on as a number).
        allow_inf: whether ``+-inf`` is admissible (an unbounded limit); NaN never is.
        choices: the admissible strings of a ``str`` option.
        why: the reason shown when a value is outside the bounds (default: the bounds).
        fix: the fix shown for a bad value (default: built from the type, bounds and unit).
        arg: the builder's keyword, when it differs from the TOML name.
    """

    type: type
    default: Any = _SIGNATURE
    unit: str = ""
    doc: str = ""
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    length: int | None = None
    scalar: bool = True
    allow_inf: bool = False
    choices: tuple[str, ...] | None = None
    why: str = ""
    fix: str = ""
    arg: str | None = None

    def __post_init__(self):
        if self.type not in _TYPES:
            raise ValueError(f"Option parameter `type` = {self.type!r} is invalid. Fix: use one of float, int, bool, "
                             "str, list, tuple.")
        if self.choices is not None and self.type is not str:
            raise ValueError(f"Option parameter `choices` = {self.choices!r} needs type=str, got {self.type!r}. "
                             "Fix: declare Option(str, choices=...).")

    @property
    def is_list(self) -> bool:
        """Whether the value is a list of numbers."""
        return self.type in (list, tuple)

    def bounds(self) -> str:
        """The admissible range in words: ``"> 0"``, ``">= 0"``, ``"in [0, 1)"`` or ``""``."""
        lo = None if self.ge is None and self.gt is None else ("[", self.ge) if self.gt is None else ("(", self.gt)
        hi = None if self.le is None and self.lt is None else ("]", self.le) if self.lt is None else (")", self.lt)
        if lo and hi:
            return f"in {lo[0]}{lo[1]:g}, {hi[1]:g}{hi[0]}"
        if lo:
            return f"{'>=' if lo[0] == '[' else '>'} {lo[1]:g}"
        if hi:
            return f"{'<=' if hi[0] == ']' else '<'} {hi[1]:g}"
        return ""

    def outside(self, value: Any) -> bool:
        """Whether ``value`` (a number or a list of numbers) lies outside the bounds."""
        vals = value if isinstance(value, (list, tuple)) else [value]
        return any((self.ge is not None and not x >= self.ge) or (self.gt is not None and not x > self.gt)
                   or (self.le is not None and not x <= self.le) or (self.lt is not None and not x < self.lt)
                   for x in vals)

    def describe(self) -> str:
        """What a valid value is, in words (``"a number > 0 in s"``, ``"3 numbers >= 0 in m"``)."""
        if self.type is str and self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.is_list:
            n = f"{self.length} numbers" if self.length else "a list of numbers"
            what = (f"a number or {n}" if self.scalar else n)
        else:
            what = _TYPE_WORDS[self.type]
        rng = self.bounds()
        return what + (f" {rng}" if rng else "") + (f" in {self.unit}" if self.unit else "")


@dataclasses.dataclass(frozen=True)
class Kind:
    """A registered kind: the family, the TOML name, the builder and its options.

    ``kind(**values)`` builds the object from option values keyed by TOML name.

    Attributes:
        family: one of :data:`FAMILIES` (or a new family name).
        name: the TOML name (``kind = "<name>"``).
        build: the class or factory called with the options.
        options: TOML name -> :class:`Option`, every default resolved.
        doc: one line (default: the first line of the builder's docstring).
        registered_by: the module that registered it (``jaxrotor.reference``, a test module, ...).
    """

    family: str
    name: str
    build: Callable[..., Any]
    options: Mapping[str, Option]
    doc: str
    registered_by: str = ""

    def __call__(self, **values: Any) -> Any:
        return self.build(**{self.options[k].arg or k: v for k, v in values.items()})

    @property
    def origin(self) -> str:
        """``module.qualname`` of the builder."""
        return f"{self.build.__module__}.{self.build.__qualname__}"

    @property
    def public_name(self) -> str:
        """The builder's name in its package's public path (``diffrax.Tsit5``, not ``diffrax._solver.tsit5.Tsit5``)."""
        parts = self.build.__module__.split(".")
        private = next((i for i, p in enumerate(parts) if p.startswith("_")), len(parts))
        return ".".join(parts[:private] + [self.build.__qualname__])


_REGISTRY: dict[str, dict[str, Kind]] = {}


def _resolve(family: str, name: str, build: Callable, options: Mapping[str, Option]) -> dict[str, Option]:
    """``options`` with every omitted default taken from ``build``'s signature; checks the keywords exist."""
    where = f"register({family!r}, {name!r}, {getattr(build, '__qualname__', build)!r})"
    try:
        params = inspect.signature(build).parameters
    except (TypeError, ValueError):  # a builtin without a signature: every option must declare its default
        params = None
    var_kw = params is not None and any(p.kind is p.VAR_KEYWORD for p in params.values())
    out = {}
    for key, opt in options.items():
        if not isinstance(opt, Option):
            raise ValueError(f"{where}: option `{key}` = {opt!r} is not an Option. Fix: declare it as "
                             f"Option(float, ...) (jaxrotor.registry.Option).")
        arg = opt.arg or key
        p = None if params is None else params.get(arg)
        if params is not None and p is None and not var_kw:
            raise ValueError(f"{where}: option `{key}` names no keyword `{arg}` of the builder (keywords: "
                             f"{', '.join(params) or 'none'}). Fix: correct the name or set Option(arg=...).")
        if opt.default is _SIGNATURE:
            has = p is not None and p.default is not inspect.Parameter.empty
            opt = dataclasses.replace(opt, default=p.default if has else REQUIRED)
        out[key] = opt
    return out


def _caller() -> str:
    """The module that called :func:`register` (the first frame outside this module)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return "" if frame is None else str(frame.f_globals.get("__name__", ""))


def register(family: str, name: str, build: Callable | None = None, *, options: Mapping[str, Option] | None = None,
             doc: str | None = None):
    """Register ``build`` as ``kind = name`` of ``family``; without ``build``, a class/function decorator.

    Registering the same name again with a builder of the same ``module.qualname``
    replaces it (a reloaded module); a different builder is refused.

    Args:
        family: the family (:data:`FAMILIES`: ``"reference"``, ``"objective"``, ...).
        name: the TOML name.
        build: the class or factory; its keywords receive the options.
        options: TOML name -> :class:`Option` (default: none).
        doc: one line (default: the first line of ``build``'s docstring).

    Returns:
        ``build`` unchanged (or the decorator that registers and returns it).

    Raises:
        ValueError: a name taken by another builder, or an option that names no keyword of ``build``.
    """
    if build is None:
        return lambda b: register(family, name, b, options=options, doc=doc)
    resolved = _resolve(family, name, build, options or {})
    text = doc if doc is not None else (inspect.getdoc(build) or "").split("\n\n")[0].replace("\n", " ")
    kind = Kind(family, name, build, resolved, text, _caller())
    old = _REGISTRY.get(family, {}).get(name)
    if old is not None and old.origin != kind.origin:
        raise ValueError(f"register({family!r}, {name!r}): the name is taken by {old.origin}. Fix: choose another "
                         f"name for {kind.origin}.")
    _REGISTRY.setdefault(family, {})[name] = kind
    return build


class _Family(Mapping):
    """Read-only live view of one family: name -> :class:`Kind` (or its builder), in registration order."""

    def __init__(self, family: str, builders: bool = False):
        self.family, self.builders = family, builders

    def __getitem__(self, name: str) -> Any:
        kind = _REGISTRY.get(self.family, {})[name]
        return kind.build if self.builders else kind

    def __iter__(self) -> Iterator[str]:
        return iter(list(_REGISTRY.get(self.family, {})))

    def __len__(self) -> int:
        return len(_REGISTRY.get(self.family, {}))

    def __repr__(self) -> str:
        return f"kinds({self.family!r}): {', '.join(self)}"


def kinds(family: str) -> Mapping[str, Kind]:
    """The kinds of ``family`` (a live read-only mapping name -> :class:`Kind`)."""
    return _Family(family)


def builders(family: str) -> Mapping[str, Callable[..., Any]]:
    """The builders of ``family`` (a live read-only mapping name -> class or factory)."""
    return _Family(family, builders=True)


def lookup(family: str, name: str) -> Kind:
    """The :class:`Kind` ``name`` of ``family``.

    Raises:
        LookupError: no such kind; the message lists the registered ones.
    """
    found = _REGISTRY.get(family, {}).get(name)
    if found is None:
        known = ", ".join(repr(k) for k in _REGISTRY.get(family, {})) or "none"
        raise LookupError(f"no {family} kind {name!r}. Fix: use one of {known} (or register one with "
                          f"jaxrotor.registry.register({family!r}, {name!r}, ...)).")
    return found


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def _default_text(opt: Option) -> str:
    if opt.default is REQUIRED:
        return "required"
    return "none" if opt.default is None else f"`{_toml(opt.default)}`"


def markdown(families: tuple[str, ...] | None = None, only: Callable[[Kind], bool] | None = None) -> str:
    """The registered kinds as Markdown tables, one per family, one row per option (``docs/closed_loop.md``).

    Args:
        families: the families to list, in order (default: :data:`FAMILIES`, then any others).
        only: a filter on kinds (e.g. those registered by ``jaxrotor`` itself).
    """
    order = list(families or list(FAMILIES) + [f for f in _REGISTRY if f not in FAMILIES])
    out = []
    for fam in order:
        rows = [k for k in _REGISTRY.get(fam, {}).values() if only is None or only(k)]
        if not rows:
            continue
        out += [f"**{fam}** (`{FAMILIES.get(fam, fam)}`)", "", "| kind | builds | option | default | value | meaning |",
                "| --- | --- | --- | --- | --- | --- |"]
        for k in rows:
            head = f"| `{k.name}` | `{k.public_name}` "
            if not k.options:
                out.append(head + "| | | | |")
            for i, (key, opt) in enumerate(k.options.items()):
                cells = (f"`{key}`", _default_text(opt), opt.describe(), opt.doc)
                out.append((head if i == 0 else "| | ") + "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out.append("")
    return "\n".join(out)


def std_option(channel: str, unit: str, what: str) -> Option:
    """The :class:`Option` of a standard deviation: 1 or 3 numbers ``>= 0`` in ``unit`` (``what`` std of the ``channel``)."""
    return Option(list, length=3, ge=0, unit=unit, doc=f"{what} std of the {channel}",
                  why="a standard deviation must be finite and >= 0",
                  fix=f"give a number >= 0 in {unit} (0 for none) or 3 of them")
