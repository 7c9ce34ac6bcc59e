"""The command line's start-up: ``--help`` and ``presets`` without JAX, the preset table, the compilation cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxrotor.cli import _setup
from jaxrotor.cli.analyze import PRESET_ROWS

ROOT = Path(__file__).resolve().parents[2]

_NO_JAX = ("import sys\nfrom click.testing import CliRunner\nfrom jaxrotor.cli import main\n"
           "r = CliRunner().invoke(main, {args!r})\n"
           "print(r.output)\n"
           "print('EXIT', r.exit_code, 'JAX', 'jax' in sys.modules, 'NUMPY', 'numpy' in sys.modules)\n")


def _run_cli(args: list[str]) -> str:
    run = subprocess.run([sys.executable, "-c", _NO_JAX.format(args=args)], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


@pytest.mark.parametrize("args", [["--help"], ["presets"], ["simulate", "--help"], ["tune", "--help"]])
def test_help_and_presets_answer_without_importing_jax(args):
    """A fresh interpreter runs the command and has not imported JAX (nor NumPy) when it is done."""
    out = _run_cli(args)
    assert out.rstrip().endswith("EXIT 0 JAX False NUMPY False"), out[-2000:]
    if args == ["--help"]:
        assert "JAXROTOR_NO_CACHE" in out and "presets" in out and "simulate" in out


def test_presets_lists_every_preset_with_its_class_rotor_count_mass_and_description():
    """PRESET_ROWS (what ``jaxrotor presets`` prints without JAX) equals what jaxrotor.design.presets builds."""
    import jax

    jax.config.update("jax_enable_x64", True)
    from jaxrotor.design import presets

    assert [row[0] for row in PRESET_ROWS] == presets.names()
    for name, label, n, mass, text in PRESET_ROWS:
        p = presets.get(name)
        assert (label, n, text) == (p.label(), p.n_rotors, presets.describe(name)), name
        assert mass == pytest.approx(float(p.mass), rel=1e-12), name
    out = _run_cli(["presets"]).splitlines()
    assert out[0].split() == ["name", "class", "n", "mass", "description"]
    assert [line.split()[0] for line in out[1:1 + len(PRESET_ROWS)]] == presets.names()
    assert "CS_α0β0-Ted_6R  6  3.5 kg" in out[1]


def test_cache_dir_follows_xdg_home_and_the_opt_out_variable(tmp_path):
    """``$XDG_CACHE_HOME/jaxrotor/xla``, else ``~/.cache/jaxrotor/xla`` (Linux); ``JAXROTOR_NO_CACHE=1``: none."""
    home = str(tmp_path / "home")
    assert _setup.cache_dir({"XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": home}) == tmp_path / "xdg" / "jaxrotor" / "xla"
    if sys.platform.startswith("linux"):
        assert _setup.cache_dir({"HOME": home}) == Path(home) / ".cache" / "jaxrotor" / "xla"
    for off in ("1", "yes", "true"):
        assert _setup.cache_dir({"HOME": home, "JAXROTOR_NO_CACHE": off}) is None
    for on in ("", "0"):
        assert _setup.cache_dir({"HOME": home, "JAXROTOR_NO_CACHE": on}) is not None


_CONFIGURE = ("import json, os\nimport jax\nfrom jaxrotor.cli._setup import configure_compilation_cache\n"
              "path = configure_compilation_cache()\n"
              "print(json.dumps({'returned': None if path is None else str(path), "
              "'dir': jax.config.jax_compilation_cache_dir, "
              "'min_time': jax.config.jax_persistent_cache_min_compile_time_secs, "
              "'min_size': jax.config.jax_persistent_cache_min_entry_size_bytes, "
              "'eqx_on_error': os.environ.get('EQX_ON_ERROR')}))\n")


def _configure(tmp_path, **env) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT",
                                                                      "JAXROTOR_", "XDG_CACHE", "EQX_"))}
    clean.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), **env)
    run = subprocess.run([sys.executable, "-c", _CONFIGURE], capture_output=True, text=True, cwd=ROOT, env=clean,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_configure_compilation_cache_sets_the_folder_and_caches_every_entry_unless_turned_off(tmp_path):
    """In a fresh interpreter: the folder is created and JAX caches every program (no time or size floor, and
    equinox's checks as NaN, not host callbacks); with JAXROTOR_NO_CACHE=1 JAX keeps no cache and equinox raises;
    a folder JAX was given itself is kept; an EQX_ON_ERROR the user set is kept."""
    on = _configure(tmp_path)
    folder = tmp_path / "xdg" / "jaxrotor" / "xla"
    assert on == {"returned": str(folder), "dir": str(folder), "min_time": 0.0, "min_size": -1, "eqx_on_error": "nan"}
    assert folder.is_dir()
    off = _configure(tmp_path, JAXROTOR_NO_CACHE="1")
    assert off["returned"] is None and off["dir"] is None and off["min_time"] == 1.0 and off["eqx_on_error"] is None
    own = _configure(tmp_path, JAX_COMPILATION_CACHE_DIR=str(tmp_path / "mine"), EQX_ON_ERROR="raise")
    assert own["returned"] == own["dir"] == str(tmp_path / "mine") and own["min_time"] == 1.0
    assert own["eqx_on_error"] == "raise"
