"""Every script in experiments/ runs on a short horizon (``--quick``)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "experiments").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_experiment_runs_quick(script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg", JAXROTOR_OUT=str(tmp_path))
    res = subprocess.run([sys.executable, str(script), "--quick", "--out", str(tmp_path)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, f"{script.name} failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    assert res.stdout.strip(), f"{script.name} printed nothing"
