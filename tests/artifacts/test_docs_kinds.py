"""The list of TOML kinds in ``docs/closed_loop.md`` is the registry's (:func:`jaxrotor.registry.markdown`).

Every kind jaxrotor registers (the loaders import every module that registers one) is
listed with its options, defaults, admissible values and units; a kind, an option or a
default changed in the code without the page fails here. ``python
tests/artifacts/test_docs_kinds.py`` rewrites the list.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jaxrotor.io.config  # noqa: F401 - importing the loaders registers every kind jaxrotor ships
import jaxrotor.io.optimize_config  # noqa: F401
from jaxrotor import registry

PAGE = Path(__file__).resolve().parents[2] / "docs" / "closed_loop.md"
BLOCK = re.compile(r"(<!-- kinds:begin -->\n)(.*?)(<!-- kinds:end -->)", flags=re.S)


def shipped(kind: registry.Kind) -> bool:
    """Registered by jaxrotor itself (not by a test or a docs example)."""
    return kind.registered_by == "jaxrotor" or kind.registered_by.startswith("jaxrotor.")


def expected() -> str:
    return registry.markdown(only=shipped)


def test_the_docs_list_every_registered_kind_with_its_options():
    m = BLOCK.search(PAGE.read_text())
    assert m, f"{PAGE}: no <!-- kinds:begin --> ... <!-- kinds:end --> block"
    assert m.group(2).strip() == expected().strip(), (
        f"{PAGE.name}: the list of kinds differs from the registry. Fix: run `python {Path(__file__).relative_to(PAGE.parents[1])}`.")


def test_every_family_has_kinds_and_every_kind_is_listed():
    text = BLOCK.search(PAGE.read_text()).group(2)
    for family in registry.FAMILIES:
        names = [k.name for k in registry.kinds(family).values() if shipped(k)]
        assert names, family
        for name in names:
            assert f"| `{name}` |" in text, (family, name)


if __name__ == "__main__":
    text = PAGE.read_text()
    new = BLOCK.sub(lambda m: m.group(1) + expected() + "\n" + m.group(3), text)
    PAGE.write_text(new)
    print(f"{PAGE}: {'rewritten' if new != text else 'unchanged'}", file=sys.stderr)
