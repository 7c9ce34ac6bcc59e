"""The documentation site builds with ``mkdocs build --strict`` and covers the package.

Strict mode turns every warning into an error: a broken link between pages, a
page missing from the navigation, a ``::: module`` directive naming a module that
does not exist, or a docstring section griffe cannot parse. The structural tests
(every public module has an API page, every figure is in the gallery, every page
is in the navigation) run without mkdocs; the build itself needs the ``docs``
extra (also part of the ``test`` extra).
"""

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"


def _api_directives() -> set[str]:
    """Module paths named by ``::: module`` directives in ``docs/api/*.md``."""
    names = set()
    for page in (DOCS / "api").glob("*.md"):
        names |= set(re.findall(r"^:::\s+([\w.]+)\s*$", page.read_text(), flags=re.M))
    return names


def _public_modules() -> set[str]:
    """Every public module of the package with an ``__all__`` (not a package ``__init__``, not the CLI)."""
    mods = set()
    for path in (ROOT / "jaxrotor").rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts
        if any(p.startswith("_") for p in parts) or "cli" in parts:
            continue
        if re.search(r"^__all__\s*=", path.read_text(), flags=re.M):
            mods.add(".".join(parts))
    return mods


def test_every_public_module_has_an_api_page():
    directives = _api_directives()
    missing = sorted(_public_modules() - directives)
    assert not missing, f"public modules without a `::: module` directive in docs/api/*.md: {missing}"
    unknown = sorted(d for d in directives if importlib.util.find_spec(d) is None)
    assert not unknown, f"docs/api directives naming no module: {unknown}"


def test_the_key_names_are_documented_on_the_api_pages():
    # the names the site must list, each in the module whose page documents it
    key = {
        "jaxrotor.simulation": ["simulate", "simulate_open_loop"],
        "jaxrotor.flight": ["Flight", "flight_computer"],
        "jaxrotor.loop": ["fly"],
        "jaxrotor.plant": ["AbstractPlant", "AnalyticPlant"],
        "jaxrotor.physics.plants": ["MJXPlant", "MuJoCoPlant"],
        "jaxrotor.design.platform": ["Platform", "star_platform"],
        "jaxrotor.control": ["FullyActuatedSE3", "UnderactuatedSE3"],
        "jaxrotor.allocators": ["PseudoInverse", "Clip", "BoxLS", "TorquePriority"],
        "jaxrotor.tilting": ["ExtendedVariable", "CantSelection"],
        "jaxrotor.optimize.objectives": ["Tracking", "Energy"],
    }
    assert set(key) <= _api_directives()
    for mod, names in key.items():
        module = importlib.import_module(mod)
        for name in names:
            assert name in module.__all__, f"{mod}.{name} is not public"
            assert getattr(module, name).__doc__, f"{mod}.{name} has no docstring"


def test_every_figure_is_in_the_gallery():
    gallery = (DOCS / "gallery.md").read_text()
    shown = set(re.findall(r"\]\(figures/([^)]+)\)", gallery))
    figures = {p.name for p in (DOCS / "figures").glob("*.png")}
    assert figures, "docs/figures holds no figure"
    assert figures <= shown, f"figures missing from docs/gallery.md: {sorted(figures - shown)}"
    assert shown <= figures, f"docs/gallery.md shows figures that do not exist: {sorted(shown - figures)}"


def test_every_page_is_in_the_navigation():
    nav = MKDOCS_YML.read_text().split("\nnav:", 1)[1]
    in_nav = set(re.findall(r":\s+([\w/]+\.md)\s*$", nav, flags=re.M))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages == in_nav, (f"pages missing from the mkdocs.yml nav: {sorted(pages - in_nav)}; "
                             f"nav entries without a page: {sorted(in_nav - pages)}")


_HAVE_DOCS = all(importlib.util.find_spec(m) is not None
                 for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"))


@pytest.mark.skipif(not _HAVE_DOCS, reason='the docs extra is not installed: pip install -e ".[docs]"')
def test_mkdocs_build_strict(tmp_path):
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(MKDOCS_YML),
         "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    # the API pages carry the docstrings of the key names
    simulate_page = (site / "api" / "simulate" / "index.html").read_text()
    assert 'id="jaxrotor.simulation.simulate"' in simulate_page
    assert 'id="jaxrotor.loop.fly"' in simulate_page
    assert 'id="jaxrotor.flight.Flight"' in simulate_page
    platform_page = (site / "api" / "platform" / "index.html").read_text()
    assert 'id="jaxrotor.design.platform.Platform"' in platform_page
    allocation_page = (site / "api" / "allocation" / "index.html").read_text()
    for name in ("allocators.BoxLS", "allocators.Clip", "tilting.ExtendedVariable", "tilting.CantSelection"):
        assert f'id="jaxrotor.{name}"' in allocation_page, name
    # a docstring sentence makes it into the page (the text, not only the heading)
    first_line = importlib.import_module("jaxrotor.flight").Flight.__doc__.splitlines()[0]
    assert first_line.split("(")[0].strip() in simulate_page
    for fig in (DOCS / "figures").glob("*.png"):
        assert (site / "figures" / fig.name).is_file()
