"""Packaging and lint: the package ships its type marker, and the tree is ruff-clean.

The rule set is ``[tool.ruff]`` in ``pyproject.toml``. Building the wheel and the
sdist, installing each in a clean environment and running its console script is
``test_wheel.py`` (offline: ``python -m build --no-isolation`` and ``pip --no-index``).
"""

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_py_typed_is_shipped():
    assert (ROOT / "jaxrotor" / "py.typed").is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["jaxrotor"]
    assert pyproject["project"]["scripts"]["jaxrotor"] == "jaxrotor.cli:main"


def test_extras_name_the_docs_toolchain():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {req.split("[")[0].split(">")[0].split("=")[0] for req in extras["docs"]}
    assert names == {"mkdocs", "mkdocs-material", "mkdocstrings"}
    assert set(extras["docs"]) <= set(extras["test"])  # the suite builds the site


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason='ruff is not installed: pip install -e ".[test]"')
def test_ruff_clean():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "jaxrotor", "tests", "experiments"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ruff check found problems:\n{proc.stdout[-6000:]}{proc.stderr[-2000:]}"
