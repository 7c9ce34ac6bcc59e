"""``jaxrotor sweep``: points, errors before compiling, chunks and resuming, CSV rows against single flights."""

import csv

import numpy as np
import pytest
from click.testing import CliRunner

import jaxrotor as jr
from jaxrotor.cli import main
from jaxrotor.io.toml import ConfigError
from jaxrotor.sweep import (
    SweepAxis,
    SweepSpec,
    load_sweep,
    loads_sweep,
    run_sweep,
    sweep_points,
)

FLIGHT = """
name = "k_v"
[platform]
preset = "paper_hexarotor"
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
t1 = 0.5
"""

# K_v,z = -300 and -140 are unstable (negative damping of the vertical loop: rounding noise grows
# like exp(|K_v| t)); 20 is the Table III value
SWEEP = FLIGHT + """
[sweep]
chunk = 2
[sweep.parameters."controller.K_v[2]"]
lower = -300.0
upper = 20.0
points = 3
"""


def test_points_grid_random_lhs():
    a, b = SweepAxis("platform.alpha", 0.0, 1.0, 3), SweepAxis("platform.beta", -1.0, 1.0, 2)
    g = sweep_points(SweepSpec((a, b), "grid"))
    np.testing.assert_array_equal(g, [[0, -1], [0, 1], [0.5, -1], [0.5, 1], [1, -1], [1, 1]])  # first axis slowest
    n = 50
    lhs = sweep_points(SweepSpec((a, b), "lhs", n, seed=3))
    for j, ax in enumerate((a, b)):
        unit = (lhs[:, j] - ax.lower) / (ax.upper - ax.lower)
        np.testing.assert_array_equal(np.sort(np.floor(unit * n)), np.arange(n))  # one point per stratum
    r = sweep_points(SweepSpec((a, b), "random", n, seed=3))
    assert r.shape == (n, 2) and np.all((r[:, 0] >= 0) & (r[:, 0] <= 1) & (r[:, 1] >= -1) & (r[:, 1] <= 1))
    np.testing.assert_array_equal(r, sweep_points(SweepSpec((a, b), "random", n, seed=3)))


@pytest.mark.parametrize("table, match", [
    ('[sweep.parameters."platform.alpah"]\nlower = 0.0\nupper = 1.0\npoints = 2', "has no field `alpah`"),
    ('[sweep.parameters."controller.K_p[7]"]\nlower = 0.0\nupper = 1.0\npoints = 2', r"controller.K_p\[7\]`: no such"),
    ('[sweep.parameters."platform.alpha"]\nlower = 1.0\nupper = 0.5\npoints = 2', r"sweep.parameters.platform.alpha.lower` = 1.0 is invalid: it is above upper"),
    ('[sweep.parameters."platform.alpha"]\nlower = 0.0\nupper = 1.0\npoints = 0', "points` = 0 is invalid"),
    ('kind = "lhs"\npoints = 0\n[sweep.parameters."platform.alpha"]\nlower = 0.0\nupper = 1.0', "sweep.points` = 0"),
    ('chunk = 1000000000000\n[sweep.parameters."platform.alpha"]\nlower = 0.0\nupper = 1.0\npoints = 2',
     r"sweep.chunk` = 1000000000000 is invalid: .* GiB available. Fix: use chunk <= "),
])
def test_bad_input_errors_before_compiling(table, match):
    with pytest.raises(ConfigError, match=match):
        loads_sweep(FLIGHT + "[sweep]\n" + table, source="bad.toml")


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    path = tmp_path_factory.mktemp("sweep") / "k_v.toml"
    path.write_text(SWEEP)
    conf = load_sweep(path)
    out = path.parent / "out"
    first = run_sweep(conf, out, progress=False, echo=lambda *_: None)
    return conf, path, out, first


def test_rows_equal_single_flights_and_diverged_rows(swept):
    conf, _, out, first = swept
    with open(out / "sweep.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["controller.K_v[2]"]) for r in rows] == [-300.0, -140.0, 20.0]
    assert [r["diverged"] for r in rows] == ["True", "True", "False"]
    assert first["diverged"] == 2 and first["chunks_flown"] == 2
    # the stable point equals the same flight flown alone (no vmap, no sweep machinery)
    c = conf.flight.controller
    ctrl = jr.FullyActuatedSE3(K_p=c.K_p, K_pi=c.K_pi, K_v=c.K_v.at[2].set(20.0), K_R=c.K_R, K_Ri=c.K_Ri, K_w=c.K_w)
    m = jr.metrics.flight_metrics(jr.fly(conf.flight.platform, ctrl, conf.flight.flight), conf.flight.platform)
    for key in ("rmse_position", "mae_orientation", "energy"):
        assert float(rows[2][key]) == pytest.approx(float(getattr(m, key)), rel=1e-12, abs=1e-15), key
    assert int(rows[2]["num_steps"]) == 50
    assert (out / "sweep_rmse_position.png").is_file()


def test_resume_skips_finished_chunks_and_cli(swept):
    conf, path, out, _ = swept
    before = (out / "sweep.csv").read_text()
    (out / "chunks" / "chunk_00001.npz").unlink()
    again = run_sweep(conf, out, progress=False, echo=lambda *_: None, figures=False)
    assert again["chunks_flown"] == 1 and again["chunks_skipped"] == 1
    assert (out / "sweep.csv").read_text() == before
    # the command: everything on disk already, diverged points give exit status 1; a bad file gives 2
    res = CliRunner().invoke(main, ["sweep", str(path), "--out", str(out), "--no-progress"])
    assert res.exit_code == 1 and "2 chunks flown" not in res.output and "0 chunks flown, 2 reused" in res.output
    assert (out / "sweep.csv").read_text() == before
    bad = path.with_name("bad.toml")
    bad.write_text(SWEEP.replace("upper = 20.0", "upper = -400.0"))
    res = CliRunner().invoke(main, ["sweep", str(bad), "--out", str(out)])
    assert res.exit_code == 2 and "lower` = -300.0 is invalid" in res.output
