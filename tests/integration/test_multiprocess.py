"""A sweep across two processes (``jax.distributed`` on 127.0.0.1) equals the same sweep in one process."""

import csv
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np

from jaxrotor.workflows.sweep import loads_sweep, run_sweep

CONFIG = """
name = "two_processes"
[platform]
preset = "paper_hexarotor"
[allocator]
kind = "clip"
[actuators.motor]
kind = "first_order"
time_constant = 0.03
[reference]
kind = "paper_maneuver"
duration = 15.0
takeoff_time = 2.6667
landing_time = 2.6667
period = 10.0
[solver]
adaptive = false
dt = 0.01
[flight]
save_dt = 0.05
t1 = 0.2
[sweep]
chunk = 3
[sweep.parameters."platform.alpha"]
lower = 0.1
upper = 0.6
points = 5
"""

WORKER = textwrap.dedent("""
    import sys
    import jax
    pid, port, out, cfg = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    jax.config.update("jax_enable_x64", True)
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=pid,
                               initialization_timeout=60)
    assert jax.process_count() == 2 and jax.device_count() == 2
    from jaxrotor.workflows.sweep import load_sweep, run_sweep
    run_sweep(load_sweep(cfg), out, progress=False)
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _table(path):
    """The numeric columns of a sweep CSV (booleans as 0/1) and the text columns (the verdict) apart."""
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    text = [c for c in rows[0] if c == "verdict"]
    cols = [c for c in rows[0] if c not in text]
    values = np.array([[float(r[c] == "True") if r[c] in ("True", "False") else float(r[c]) for c in cols]
                       for r in rows])
    return cols, values, [[r[c] for c in text] for r in rows]


def test_two_processes_equal_one(tmp_path):
    cfg = tmp_path / "two.toml"
    cfg.write_text(CONFIG)
    port = str(_free_port())
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(i), port, str(tmp_path / "multi"), str(cfg)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in (0, 1)]
    # meanwhile, the same sweep in this one process
    single = run_sweep(loads_sweep(CONFIG), tmp_path / "single", progress=False, echo=lambda *_: None,
                       figures=False)
    logs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(logs)
    assert single["points"] == 5 and single["diverged"] == 0
    cols_m, multi, verdict_m = _table(tmp_path / "multi" / "sweep.csv")
    cols_s, one, verdict_s = _table(tmp_path / "single" / "sweep.csv")
    assert cols_m == cols_s and multi.shape == one.shape == (5, len(cols_s))
    assert verdict_m == verdict_s == [["ok"]] * 5
    np.testing.assert_array_equal(multi[:, 0], np.linspace(0.1, 0.6, 5))
    # the motor lag gives a real tracking error (not rounding noise), so the sweeps agree to rounding; columns that
    # are rounding noise themselves (x, y errors of a vertical takeoff, ~1e-19 m) agree to an absolute 1e-12
    rmse = multi[:, cols_m.index("rmse_position")]
    assert np.all(rmse > 1e-6)
    np.testing.assert_allclose(multi, one, rtol=1e-9, atol=1e-12)
