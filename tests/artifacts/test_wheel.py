"""The wheel and the sdist build offline, install into a clean environment and fly.

Both are built with ``python -m build --no-isolation`` from a copy of the source tree (the
files git tracks or would track, so the checkout gets no ``build/`` or ``*.egg-info``). Each is
installed with ``pip --no-index --no-deps --no-build-isolation`` (the sdist builds its own
wheel) into a fresh venv that sees this environment's dependencies through a ``.pth`` file but
not its jaxrotor, and the installed ``jaxrotor`` console script flies a short flight from a
folder outside the source tree. Nothing is downloaded.
"""

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "cs_4r.toml"
T1 = 0.5  # s

pytestmark = pytest.mark.skipif(importlib.util.find_spec("build") is None or shutil.which("git") is None
                                or not (ROOT / ".git").exists(),
                                reason='needs a git checkout and the build frontend: pip install -e ".[test]"')


def _source_files() -> list[str]:
    """Paths (relative to the root) of the tracked and the untracked, not ignored files that exist."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    return sorted(f for f in out.split("\0") if f and (ROOT / f).is_file())


def _env() -> dict:
    """This environment without ``PYTHONPATH`` (which could put the source tree on the path)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``(wheel, sdist, package_files)``: the artifacts and the source files under ``jaxrotor/``."""
    base = tmp_path_factory.mktemp("wheel")
    src, dist = base / "src", base / "dist"
    files = _source_files()
    for f in files:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, src / f)
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--sdist", "--outdir",
                           str(dist)], cwd=src, capture_output=True, text=True, timeout=300, env=_env())
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    (wheel,), (sdist,) = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    return wheel, sdist, sorted(f for f in files if f.startswith("jaxrotor/"))


def test_artifacts_hold_the_package(built):
    wheel, sdist, package = built
    assert "jaxrotor/py.typed" in package and "jaxrotor/cli/__init__.py" in package
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        entry_points = zf.read(info).decode()
    assert set(package) <= names, f"missing from the wheel: {sorted(set(package) - names)}"
    assert "jaxrotor = jaxrotor.cli:main" in entry_points
    with tarfile.open(sdist) as tf:
        root = tf.getnames()[0].split("/")[0]
        names = {n.removeprefix(root + "/") for n in tf.getnames()}
        readme = tf.extractfile(f"{root}/README.md").read().decode()
    # what a build from the sdist needs: the build configuration, the readme it declares, every package file
    assert {"pyproject.toml", "README.md", "PKG-INFO"} <= names
    assert set(package) <= names, f"missing from the sdist: {sorted(set(package) - names)}"
    assert readme == (ROOT / "README.md").read_text()


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_installed_console_script_flies(built, kind, tmp_path):
    wheel, sdist, package = built
    artifact = wheel if kind == "wheel" else sdist
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    py = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True, env=_env()).stdout.strip())
    # this environment's dependencies (and pip, setuptools, wheel) become visible; its jaxrotor does not, since
    # a .pth line only adds a folder to the path and the folder's own .pth files (an editable install) stay unread
    deps = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]
    (purelib / "_jaxrotor_test_deps.pth").write_text("\n".join(deps) + "\n")
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    proc = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
                           "--ignore-installed", "--disable-pip-version-check", "-q", str(artifact)],
                          cwd=cwd, capture_output=True, text=True, timeout=300, env=_env())
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]

    # jaxrotor now comes from the venv, not from the source tree
    origin = subprocess.run([str(py), "-c", "import importlib.util; print(importlib.util.find_spec('jaxrotor').origin)"],
                            cwd=cwd, capture_output=True, text=True, check=True, env=_env()).stdout.strip()
    installed = Path(origin).parent
    assert installed == purelib / "jaxrotor" and ROOT not in installed.parents
    for f in package:  # every package file, the type marker included
        assert (purelib / f).is_file(), f"{f} is not installed from the {kind}"

    out = tmp_path / "out"
    proc = subprocess.run([str(venv / "bin" / "jaxrotor"), "simulate", str(CONFIG), "--t1", str(T1), "--no-physics",
                           "--no-progress", "--out", str(out)], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=_env())
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    m = json.loads((out / "metrics.json").read_text())
    numbers = [v for v in m.values() if isinstance(v, float)]
    numbers += [x for v in m.values() if isinstance(v, list) for x in v if isinstance(x, float)]
    assert numbers and all(math.isfinite(x) for x in numbers)
    assert m["diverged"] is False and m["duration"] == pytest.approx(T1) and m["num_steps"] > 0
    # exact tracking with ideal actuation, and a vertical climb: the rotors' thrust impulse is the momentum
    # balance m (g T + v_z(T)) with v_z(0) = 0 (the reference evaluated here, by the source tree's package)
    from jaxrotor.io import config

    conf = config.load(str(CONFIG))
    v_z = float(conf.flight.reference(T1).v[2])
    assert m["max_position_error"] < 1e-9
    assert m["thrust_impulse"] == pytest.approx(float(conf.platform.mass) * (float(conf.platform.gravity) * T1 + v_z),
                                                rel=1e-5)
