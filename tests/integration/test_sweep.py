"""``jaxrotor sweep``: chunks and resuming, CSV rows against single flights, diverged rows."""

import csv

import pytest
from click.testing import CliRunner

import jaxrotor as jr
from jaxrotor.cli import main
from jaxrotor.workflows.sweep import load_sweep, run_sweep
from unit.test_sweep import FLIGHT  # the swept flight

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
    fc = conf.flight_config
    c = fc.controller
    ctrl = jr.FullyActuatedSE3(K_p=c.K_p, K_pi=c.K_pi, K_v=c.K_v.at[2].set(20.0), K_R=c.K_R, K_Ri=c.K_Ri, K_w=c.K_w)
    m = jr.metrics.flight_metrics(jr.fly(fc.platform, ctrl, fc.flight), fc.platform)
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
