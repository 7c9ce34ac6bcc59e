"""Every ```python and ```bash block of the docs runs as written, so the docs cannot drift from the code.

(The ```toml blocks are read by their loaders in ``test_docs_config_blocks.py``. A
```bash line is a ``jaxrotor ...`` command, run as below on every page, or, on the
workflow pages, one of the README's set-up commands, which CI itself runs.)

Each page's blocks run in order in one namespace (float64, in a temporary working
directory). The value of every top-level expression statement is kept, so the
results the pages state in their comments (``# (True, 8.17)``, ``# ~ 21.2 N/rad``,
``# (501, 3) ...``) are asserted below, page by page, against what the code returns.
A block meant as illustration only is fenced as ``text``, not ``python``.

The ```bash commands run in document order between the python blocks (so a command
reads the TOML files the page wrote, a whole flight's ```toml block being written to
``<name>.toml``, and a later block reads what the command wrote) in-process through
``click.testing.CliRunner`` on ``jaxrotor.cli.main`` (compiled code is shared with the
python blocks), and must exit with status 0. On a tutorial every bash line is such a
command. Shell text that is not run is fenced ``text``.
"""

import ast
import contextlib
import functools
import io
import json
import math
import re
import shlex
import tomllib
from pathlib import Path

import jax
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIALS = DOCS / "tutorials"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", flags=re.S | re.M)


def blocks(page: Path) -> list[tuple[int, str, str]]:
    """``(first line number, language, source)`` of every fenced block of ``page``, in order."""
    text = page.read_text()
    return [(text[: m.start()].count("\n") + 2, m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """``(first line number, source)`` of every ```python block of ``page``."""
    return [(line, src) for line, lang, src in blocks(page) if lang == "python"]


def is_tutorial(page: Path) -> bool:
    return page.parent == TUTORIALS


@functools.cache
def _setup_commands() -> frozenset[str]:
    """The lines of the README's ```bash blocks: its set-up and test commands (CI runs them on a fresh clone)."""
    found = set()
    for _, lang, src in blocks(ROOT / "README.md"):
        if lang != "bash":
            continue
        for line in src.splitlines():
            argv = shlex.split(line, comments=True)
            if argv:
                found.add(shlex.join(argv))
    return frozenset(found)


def commands(src: str, allow_setup: bool = False) -> list[list[str]]:
    """The ``jaxrotor`` argument lists of a ```bash block (comment lines skipped).

    With ``allow_setup``, a line may instead be one of the README's set-up commands
    (``pip install ...``, ``python -m pytest ...``): CI runs those itself, so they are
    checked against the README here and not run again.
    """
    out = []
    setup = _setup_commands() if allow_setup else set()
    for line in src.splitlines():
        argv = shlex.split(line, comments=True)
        if not argv:
            continue
        if argv[0] == "jaxrotor":
            out.append(argv[1:])
        else:
            assert allow_setup and any(shlex.join(argv) in cmd for cmd in setup), (
                f"a docs bash line must be a `jaxrotor ...` command or a set-up command of the README: {line!r}")
    return out


PAGES = sorted(p for p in DOCS.glob("*.md") if any(lang in ("python", "bash") for _, lang, _ in blocks(p)))
TUTORIAL_PAGES = sorted(TUTORIALS.glob("*.md"))


class _Keep(ast.NodeTransformer):
    """Rewrite each top-level expression statement ``e`` into ``__values__.append(e)``."""

    def visit_Module(self, node):
        body = []
        for stmt in node.body:
            if isinstance(stmt, ast.Expr):
                call = ast.Call(func=ast.Attribute(value=ast.Name("__values__", ast.Load()), attr="append",
                                                   ctx=ast.Load()), args=[stmt.value], keywords=[])
                stmt = ast.copy_location(ast.Expr(call), stmt)
            body.append(stmt)
        node.body = body
        return ast.fix_missing_locations(node)


def _run_command(argv: list[str], where: str):
    """Run ``jaxrotor *argv`` in-process; it must exit with status 0."""
    from click.testing import CliRunner

    from jaxrotor.cli import main

    result = CliRunner().invoke(main, argv, catch_exceptions=False)
    assert result.exit_code == 0, f"{where}: `jaxrotor {shlex.join(argv)}` exited {result.exit_code}:\n{result.output[-4000:]}"
    return result


def run_page(page: Path) -> tuple[dict, list, str]:
    """Run the page's blocks in order in one namespace; return it, the kept values and stdout.

    ``ns["__cli__"]`` holds ``(argv, stdout)`` of each ``jaxrotor`` command, in order.
    """
    ns = {"__name__": f"docs_{page.stem}", "__values__": [], "__cli__": []}
    out = io.StringIO()
    for line, lang, src in blocks(page):
        if lang == "python":
            tree = ast.increment_lineno(ast.parse(src, filename=str(page)), line - 1)
            code = compile(_Keep().visit(tree), filename=str(page), mode="exec")
            with contextlib.redirect_stdout(out):
                exec(code, ns)  # noqa: S102 - the documentation's own code
        elif lang == "toml" and "name" in (table := tomllib.loads(src)):
            # a whole flight named `name`: the file the page's commands read (`jaxrotor simulate name.toml`)
            Path(table["name"] + ".toml").write_text(src)
        elif lang == "bash":
            for argv in commands(src, allow_setup=not is_tutorial(page)):
                result = _run_command(argv, f"{page.name}:{line}")
                ns["__cli__"].append((argv, result.stdout))
    values = [v for v in ns["__values__"] if v is not None]  # not the ``print(...)`` calls
    return ns, values, out.getvalue()


def test_the_docs_have_python_blocks_and_each_parses():
    assert {p.stem for p in PAGES} >= {"quickstart", "closed_loop", "analysis", "optimization", "batching"}
    for page in [*DOCS.glob("*.md"), *TUTORIAL_PAGES]:
        for line, src in python_blocks(page):
            ast.parse(src, filename=f"{page}:{line}")


def test_no_page_hides_commands_in_other_shell_fences():
    for page in [*DOCS.glob("*.md"), *TUTORIAL_PAGES]:
        langs = {lang for _, lang, _ in blocks(page)}
        assert not langs & {"sh", "shell", "console", "zsh"}, f"{page.name}: fence commands as `bash` (run by the tests)"


def test_every_tutorial_is_checked_and_its_shell_blocks_are_commands():
    assert {p.stem for p in TUTORIAL_PAGES} == set(TUTORIAL_CHECKS) | {"index"}
    for page in TUTORIAL_PAGES:  # (other shell fences: test_no_page_hides_commands_in_other_shell_fences)
        for line, lang, src in blocks(page):
            if lang == "bash":
                assert commands(src), f"{page.name}:{line}: an empty bash block"


def _check_quickstart(ns, values, stdout):
    hexa, quad = ns["hexa"], ns["quad"]
    assert hexa.label() == "CS_α0β0-Ted_6R" and hexa.label(ascii=True) == "CS_a0b0-Ted_6R"
    assert quad.label() == "CS_4R"
    assert ns["P"].shape == (6, 3) and ns["Z"].shape == (6, 3) and ns["G"].shape == (6, 6)
    assert int(np.linalg.matrix_rank(np.asarray(ns["G"]))) == 6
    # hover: six equal inputs about 1.69e5 rad^2/s^2, wrench [0, 0, m g], [0, 0, 0]
    u = np.asarray(ns["u_hover"])
    assert np.allclose(u, u[0], rtol=1e-10) and u[0] == pytest.approx(1.69e5, rel=5e-3)
    f_c, tau_c = (np.asarray(x) for x in (ns["f_c"], ns["tau_c"]))
    assert np.allclose(f_c, [0.0, 0.0, float(hexa.mass) * 9.81], atol=1e-8) and np.allclose(tau_c, 0.0, atol=1e-8)
    # open loop: shapes as printed; the printed final height against the printed closed form
    # z(5 s) = 1 + 0.01 g (t/2 - sin(2t)/4) of a +-1 % thrust wobble
    assert "(501, 3) (501, 3, 3) (501, 6)" in stdout
    final = re.search(r"^\[\s*(\S+)\s+(\S+)\s+(\S+)\s*\] False\n([-+0-9.e]+)$", stdout, flags=re.M)
    assert final, stdout
    z_sim, z_printed = float(final.group(3)), float(final.group(4))
    t = 5.0
    assert z_printed == pytest.approx(1.0 + 0.01 * 9.81 * (t / 2 - math.sin(2 * t) / 4), rel=1e-12)
    assert z_sim == pytest.approx(z_printed, abs=1e-6)
    assert abs(float(final.group(1))) < 1e-6 and abs(float(final.group(2))) < 1e-6
    # the vmapped batch of three platforms
    assert ns["trajs"].p.shape[0] == 3 and ns["trajs"].p.shape[2] == 3
    # the closed-loop flight: Table IV per-axis MAE in millimetres, not diverged
    mae, diverged = values[-1]
    assert diverged is False
    assert np.all(np.isfinite(mae)) and max(mae) < 0.01
    # the TOML form on the page (written by run_page as lagged_eight.toml) describes the same flight
    from jaxrotor.io import config

    conf, flight = config.load("lagged_eight.toml"), ns["flight"]
    assert conf.platform.label() == hexa.label() and type(conf.controller) is type(ns["FullyActuatedSE3"]())
    assert type(conf.flight.allocator) is type(flight.allocator)
    assert conf.flight.integrator.adaptive == flight.integrator.adaptive and conf.flight.integrator.dt == flight.integrator.dt
    assert conf.flight.end_time == flight.end_time and conf.flight.save_dt == flight.save_dt
    assert float(conf.flight.actuators.motor.time_constant) == float(flight.actuators.motor.time_constant)


def _check_analysis(ns, values, stdout):
    (fail_safe, capability), report_dict, grad = values
    assert ns["report"].fail_safe is fail_safe
    assert fail_safe is True and capability == pytest.approx(8.17, abs=0.01)  # the page: (True, 8.17)
    assert report_dict["fail_safe"] is True
    assert float(grad) == pytest.approx(21.2, abs=0.1)                         # the page: ~ 21.2 N/rad
    # the page's commands: `analyze --preset octo_x8 --json` is one JSON object; the file's PNGs are written
    cli = {shlex.join(argv): out for argv, out in ns["__cli__"]}
    octo = json.loads(cli["analyze --preset octo_x8 --json"])
    assert (octo["n_rotors"], octo["rank_G"], octo["fully_actuated"]) == (8, 4, False)  # planar: thrust + 3 torques
    assert sorted(Path("figs").glob("*.png")) and "paper_hexarotor" in cli["presets"]


def _check_closed_loop(ns, values, stdout):
    diverged, wrench_error_max, _saturated = values[-1]
    assert not bool(diverged)
    assert math.isfinite(float(wrench_error_max))
    assert float(ns["traj"].t[-1]) == pytest.approx(10.0)


def _check_batching(ns, values, stdout):
    P = np.asarray(ns["P"])
    assert P.shape == (64, 201, 3) and np.all(np.isfinite(P))
    # every design starts on the reference's first point
    p0 = np.asarray(ns["ref"](0.0).p)
    assert np.allclose(P[:, 0], p0, atol=1e-9)
    obs = np.asarray(ns["obs"])
    assert obs.shape == (1024, 18) and np.all(np.isfinite(obs))


def _check_optimization(ns, values, stdout):
    value, grad = ns["value"], ns["grad"]
    assert math.isfinite(float(value))
    leaves = jax.tree_util.tree_leaves(grad)
    assert leaves and all(np.all(np.isfinite(np.asarray(x))) for x in leaves)
    result = ns["result"]
    assert result.iterations == 3
    assert result.final_loss <= result.initial_loss
    assert result.initial_loss == pytest.approx(float(value), rel=1e-9)
    assert (Path("out") / "history.csv").is_file()
    # the page's commands: three iterations each, their reports next to the configs' names
    assert [argv[0] for argv, _ in ns["__cli__"]] == ["tune", "optimize"]
    for name in ("tune_gains", "optimize_tilt"):
        report = json.loads((Path("jaxrotor-out") / name / "result.json").read_text())
        assert report["iterations"] == 3 and report["final_loss"] <= report["initial_loss"]


CHECKS = {
    "quickstart": _check_quickstart,
    "analysis": _check_analysis,
    "closed_loop": _check_closed_loop,
    "batching": _check_batching,
    "optimization": _check_optimization,
}


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_docs_page_code_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks that write (``out_dir="out"``) write here
    (tmp_path / "configs").symlink_to(ROOT / "configs")  # commands name the shipped `configs/...` as from a checkout
    assert jax.config.jax_enable_x64
    ns, values, stdout = run_page(page)
    check = CHECKS.get(page.stem)
    if check is not None:
        check(ns, values, stdout)


# ---------------------------------------------------------------------------------------------
# docs/tutorials/*.md: the python blocks and the `jaxrotor` commands of each tutorial


def _cli(ns, command: str) -> list[tuple[list[str], str]]:
    """``(argv, stdout)`` of the page's commands that ran ``jaxrotor <command>``."""
    runs = [(argv, out) for argv, out in ns["__cli__"] if argv[0] == command]
    assert runs, f"the page ran no `jaxrotor {command}`"
    return runs


def _check_analyse(ns, values, stdout):
    hexa, flat = ns["hexa"], ns["flat"]
    assert values[0] == ("CS_α0β0-Ted_6R", "CS_6R") == (hexa.label(), flat.label())
    assert values[1] == (6, 4)
    # hover: the closed form m g / (6 c_f cos alpha_0 cos beta_0), ~ 1.688e5 rad^2/s^2, ~ 410.8 rad/s
    u_h, closed_form = values[2]
    assert np.allclose(ns["u_h"], closed_form, rtol=1e-10) and closed_form == pytest.approx(1.688e5, rel=1e-3)
    assert values[3] == pytest.approx(410.8, abs=0.1)
    report, report_flat = ns["report"], ns["report_flat"]
    assert values[4] == ("decoupled", "partially coupled")
    assert values[5] == pytest.approx(8.17, abs=0.005) and values[6] == 0.0
    eta = math.cos(float(hexa.alpha)) * math.cos(float(hexa.beta))
    assert values[7] == pytest.approx(eta, rel=1e-9) and eta == pytest.approx(0.893, abs=5e-4)
    assert values[8] == (True, False) and report.fully_actuated and not report_flat.fully_actuated
    assert values[9] == pytest.approx(1.97, abs=0.005) and values[9] > 1.0
    # polytopes: dims, the page's numbers, and the report's measures from the same sets
    (dim_fb, vol), (dim_sec, area) = values[10], values[11]
    assert (dim_fb, dim_sec) == (3, 2)
    assert vol == pytest.approx(21256, rel=1e-4) and vol == pytest.approx(report.zero_moment_force_volume, rel=1e-9)
    assert area == pytest.approx(338.6, abs=0.05) and area == pytest.approx(report.hover_section_area, rel=1e-9)
    assert values[12] and "lower-dimensional" in values[12]
    # the commands: the JSON object is the report of the preset; the flat design is rank 4 with three pictures
    (argv_json, out_json), (argv_flat, out_flat) = _cli(ns, "analyze")
    as_json = json.loads(out_json)
    assert as_json["label"] == hexa.label() and as_json["rank_G"] == 6
    assert as_json["lateral_force_capability_N"] == pytest.approx(values[5], rel=1e-9)
    assert re.search(r"rank G\b.*\b4\b", out_flat), out_flat
    for kind in ("design", "force_set", "polytope"):
        assert (Path("figs") / f"flat_hex_{kind}.png").stat().st_size > 1000


def _check_fly(ns, values, stdout):
    traj, conf = ns["traj"], ns["conf"]
    assert values[0] == ((101, 3), False)
    # the reference starts at (0, 0, 1) m and the vehicle stays within millimetres of it
    assert np.allclose(np.asarray(traj.p_ref[0]), [0.0, 0.0, 1.0], atol=1e-12)
    mae = np.asarray(ns["metrics"]["mae_position_xyz"])
    assert np.allclose(values[1], np.round(1000 * mae, 2)) and np.all(mae < 5e-3)
    assert values[1][0] == pytest.approx(0.31, abs=0.02) and values[1][1] == pytest.approx(1.5, abs=0.1)
    assert values[2] == 0.0
    w = np.asarray(traj.rotor_speed)
    assert values[3] == pytest.approx(495, abs=5) and values[3] < float(conf.platform.rotor_speed_max[0])
    assert np.all(w >= 0.0)
    assert Path("eight_errors.png").stat().st_size > 1000
    assert values[-1] is True or values[-1] == np.True_
    # the command flew the same 2 s: same samples, and it wrote every output it names
    data = np.load("out/trajectory.npz")
    assert np.allclose(data["p"], np.asarray(traj.p), atol=1e-9)
    for name in ("metrics.json", "fig6_trajectory_3d.png", "fig7_errors.png", "fig8_rotor_speeds.png", "flight.gif"):
        assert (Path("out") / name).stat().st_size > 100, name
    assert "eight" in _cli(ns, "simulate")[0][1]


def _check_optimise_tilt(ns, values, stdout):
    result = ns["result"]
    assert result["iterations"] == 2 and result["parameters"] == ["platform.alpha", "platform.beta"]
    start, end = values[0]
    assert np.allclose(start, [25.0, 10.0], atol=1e-9)
    # one Adam step of at most the learning rate (0.01 rad = 0.573 deg), both angles up
    step = np.asarray(ns["end"]) - np.asarray(ns["start"])
    assert np.all(step > 0.0) and np.all(step <= math.degrees(0.01) + 1e-9)
    assert np.allclose(end, [25.57, 10.57], atol=0.01)
    initial, final = values[1]
    assert final < initial
    sat = values[2]
    assert len(sat) == 2 and sat[0] > 0.0 and sat[-1] < sat[0]
    # the start saturates: 1000 S is most of the initial loss
    assert 1000 * float(ns["history"][0]["term:saturation"]) > 0.5 * initial
    # the exact volume above hover peaks near 42 deg (the analysis page's 43.02 deg without dihedral)
    best = values[3]
    assert 41.0 <= best <= 44.0 and best > end[0]
    v = np.asarray(ns["volume_above_hover"])
    assert np.all(v > 0.0) and v[0] < v.max() and v[-1] < v.max()


def _check_sweep(ns, values, stdout):
    assert values[0] == ["platform.alpha", "platform.beta"]
    grid = np.array([[a, b] for a in (0.1, 0.35, 0.6) for b in (0.0, 0.2, 0.4)])
    assert np.allclose(ns["points"], grid, atol=1e-12)
    rows = ns["rows"]
    assert values[-2] == 9 == len(rows)
    assert values[-1] == []
    columns = list(rows[0])
    assert columns[:2] == ["platform.alpha", "platform.beta"]
    assert {"diverged", "duration", "num_steps", "verdict"} <= set(columns)
    assert {"rmse_position", "mae_position_xyz[0]", "mae_position_xyz[2]", "saturation_fraction"} <= set(columns)
    # the rows are the grid, in order, each a finished 2 s flight
    got = np.array([[float(r["platform.alpha"]), float(r["platform.beta"])] for r in rows])
    assert np.allclose(got, grid, atol=1e-12)
    assert all(float(r["duration"]) == pytest.approx(2.0) for r in rows)
    rmse = np.array([float(r["rmse_position"]) for r in rows]).reshape(3, 3)
    sat = np.array([float(r["saturation_fraction"]) for r in rows]).reshape(3, 3)
    # the page's reading: alpha_0 = 0.1 saturates 85-88 % and loses the track by 1.0-1.4 m ...
    assert np.all((sat[0] >= 0.85) & (sat[0] <= 0.89)) and np.all((rmse[0] > 0.95) & (rmse[0] < 1.45))
    # ... from 0.35 rad on nothing saturates and the RMSE is ~ 1.7 mm
    assert np.all(sat[1:] == 0.0) and np.allclose(rmse[1:], 1.7e-3, atol=1e-4)
    assert len(re.findall(r"^alpha_0 .* RMSE .* mm  saturated", stdout, flags=re.M)) == 9
    assert Path("grid/sweep_rmse_position_heatmap.png").stat().st_size > 1000
    assert len(list(Path("grid/chunks").glob("chunk_*.npz"))) == 1


def _check_tilting_flight(ns, values, stdout):
    conf, traj, metrics = ns["conf"], ns["traj"], ns["metrics"]
    assert values[0] == "CS_αi-Ting_6R"
    assert values[1] == "ExtendedVariable: platform 'cs_4r' is fixed-tilt" and "Fix:" in ns["message"]
    assert values[2] is False and values[3] == (201, 6)
    arms = values[4]
    assert np.allclose(arms, [0.0, -45.0, -45.0, 0.0, 45.0, 45.0], atol=0.5)
    # the reference reached its 30 deg pitch at 2 s; the attitude followed it
    assert np.all(np.asarray(metrics["mae_orientation_xyz"]) < 1e-4)
    # the tilt stays inside the servo limits [-pi, pi] and the rate below the 6 rad/s limit
    alpha = np.asarray(traj.alpha)
    assert np.all(np.abs(alpha) <= math.pi) and np.allclose(alpha[0], 0.0, atol=1e-12)
    assert np.allclose(values[5], [-45.1, 45.1], atol=0.15)
    assert metrics["alpha_min"] == pytest.approx(alpha.min()) and metrics["alpha_max"] == pytest.approx(alpha.max())
    rate = np.max(np.abs(np.diff(alpha, axis=0))) / 0.01
    assert values[6] == pytest.approx(rate, rel=1e-6) and values[6] == pytest.approx(0.74, abs=0.01)
    assert values[6] < float(conf.flight.actuators.servo.rate_limit) == 6.0
    assert values[7] == 0.0
    assert values[8] == pytest.approx(6.7, abs=0.1)
    # the command flew the same 2 s
    assert values[9] is True or values[9] == np.True_
    saved = json.loads(Path("pitch/metrics.json").read_text())
    for key in ("alpha_min", "alpha_max", "alpha_rate_max", "servo_saturation_fraction"):
        assert saved[key] == pytest.approx(metrics[key], rel=1e-9, abs=1e-12), key


def _check_tune(ns, values, stdout):
    result = ns["result"]
    assert values[0] == (3, "iterations")
    initial, final = values[1]
    assert final < initial, "two Adam steps must lower the tracking loss"
    assert initial == pytest.approx(0.00705, abs=5e-5) and final == pytest.approx(0.00639, abs=5e-5)
    assert final == pytest.approx(0.91 * initial, abs=0.01 * initial)            # "about 9 %"
    # every gain grew "by a few percent"
    k0, k1 = (np.array(list(result[k].values())) for k in ("initial_params", "final_params"))
    assert np.all(k1 >= k0) and np.all(k1 <= 1.15 * k0)
    rows = Path("tuned/history.csv").read_text().strip().splitlines()
    assert len(rows) == 1 + 3  # header, the start and two steps
    # the held-out check: the page's printed RMSEs, lower after tuning in both conditions,
    # by less in the wind than on the tuning flight
    found = re.findall(r"^(tuning condition|2 N side force)\s+RMSE\s+([0-9.]+) mm ->\s+([0-9.]+) mm$", stdout, flags=re.M)
    assert [f[0] for f in found] == ["tuning condition", "2 N side force"], stdout
    ratios = [float(after) / float(before) for _, before, after in found]
    assert ratios[0] < ratios[1] < 1.0
    # the wind is felt: the detuned controller tracks worse with it
    assert float(found[1][1]) > 2 * float(found[0][1])
    # the tuning condition's position RMSE is the position part of the loss it started from
    assert float(found[0][1]) / 1000 == pytest.approx(initial, rel=0.01)


def _check_validate(ns, values, stdout):
    import jaxrotor as jr

    conf, v = ns["conf"], ns["v"]
    mass, J_p, J_a = values[0], values[1], values[2]
    assert mass == pytest.approx(3.5, abs=1e-6) == float(conf.platform.mass)
    assert np.allclose(J_p, [0.0815, 0.0815, 0.1615], atol=1e-4) and np.allclose(J_a, [0.155, 0.147, 0.251])
    # the bounds the page states
    assert np.all(np.abs(ns["p"] - ns["a"]) < 3e-5)                       # 25 micrometres at most
    assert np.allclose(values[3], [5e-6, 2.5e-5, 0.0], atol=1e-6)
    assert np.all(ns["a"] < 1e-11)                                        # column a ~ 1e-12 m
    assert values[4] < 1e-4                                               # below 0.1 mm
    assert values[5] == pytest.approx(0.6, abs=0.05)                      # ~ 0.6 rad/s
    e_R = np.asarray(ns["v"]["mae_orientation_physics"])
    assert np.allclose(values[6], np.round(e_R, 7)) and np.all(e_R < 1e-4) and e_R[0] > 1e-5   # tens of urad
    assert values[7] is False
    # validation.json against an independent reading: the analytic flight flown here (the same 2 s)
    # and the physics trajectory the command wrote
    short = conf.with_t1(2.0)
    traj = jr.fly(short.platform, short.controller, short.flight)
    m = jr.flight_metrics(traj, short.platform, short.flight)
    assert np.allclose(v["mae_position_analytic"], np.asarray(m.mae_position_xyz), rtol=1e-9, atol=1e-15)
    assert np.all(np.asarray(m.mae_orientation_xyz) < 1e-7)
    phys = np.load("val/trajectory_physics.npz")
    assert phys["p"].shape == np.asarray(traj.p).shape == (101, 3)
    gap = float(np.max(np.linalg.norm(phys["p"] - np.asarray(traj.p), axis=1)))
    assert gap == pytest.approx(v["max_position_difference"], rel=1e-9)
    table = _cli(ns, "validate")[0][1]
    assert "jaxrotor a" in table and "jaxrotor p" in table


def _check_own_vehicle(ns, values, stdout):
    (mass, label), (K_p, K_R), (stable, tilt), verdict, rise, improved = values
    # the parts' mass (hub 0.60 + 4 x (arm 0.03 + motor 0.06 + propeller 0.015) + battery 0.55 kg) and the label
    assert (mass, label) == (1.57, "CS_4R") and mass == pytest.approx(0.60 + 4 * (0.03 + 0.06 + 0.015) + 0.55)
    # the auto gains equal jaxrotor.gains for the loaded vehicle and flight, as printed on the page
    from jaxrotor.gains import with_auto_gains

    conf = ns["conf"]
    want = with_auto_gains(type(conf.controller)(), conf.platform, conf.flight)
    assert np.allclose(K_p, np.round(np.asarray(want.K_p), 2)) and np.allclose(K_R, np.round(np.asarray(want.K_R), 3))
    assert K_p == [2.13, 2.13, 4.58] and K_R == [1.417, 1.502, 0.753]
    assert stable is True and tilt == 0.0              # a flat quadrotor's hover envelope is 0 deg everywhere
    assert verdict == "ok" and rise[1:] == [None, None] and rise[0] == pytest.approx(1.55, abs=0.01)
    m = json.loads(Path("my_quad/metrics.json").read_text())
    assert m["step_overshoot"][0] < 0.05 and m["saturation_fraction"] < 0.05
    assert improved is True
    assert [argv[0] for argv, _ in ns["__cli__"]] == ["analyze", "simulate", "tune"]


def _check_design_quad(ns, values, stdout):
    names, motors, cells = values[0]
    assert names == ("arm_length", "arm_tube_diameter", "propeller_diameter", "propeller_pitch", "battery_capacity")
    assert motors == ("2212_920kv", "2216_880kv", "2814_700kv", "3508_580kv") and cells == (3, 4)
    assert values[1] == [("endurance", 600.0), ("thrust_to_weight", 2.0), ("tracking", 0.08),
                         ("stability_margin", 0.3), ("clearance", 0.01), ("battery_current", 1.0),
                         ("arm_deflection", 0.005)]
    # hub 0.45 + 4 x (arm: a 16 mm x 1 mm carbon tube, 1550 pi (0.016 0.001 - 0.001^2) kg/m x (0.25 - 0.07) m
    # + motor 0.072 + propeller 0.015) + battery 0.5 + payload 0.5
    tube = 1550 * math.pi * (0.016 * 0.001 - 0.001**2)
    mass = 0.45 + 4 * (tube * (0.25 - 0.07) + 0.072 + 0.015) + 4 * 5000 * 2.5e-5 + 0.5
    assert values[2][0] == round(mass, 3) == 1.851
    assert values[2][1] == 1042.3 and values[2][2] == 3.156
    # d mass / d capacity = cells x specific mass, exactly; d endurance / d capacity against central differences
    assert values[3][1] == 0.1
    problem, x0, static = ns["problem"], ns["x0"], ns["static"]
    h = 1.0
    e = [float(problem.measures(x0.at[4].add(s * h), 1, 4, static)["endurance"]) for s in (1, -1)]
    assert values[3][0] == pytest.approx((e[0] - e[1]) / (2 * h), abs=1e-4)
    assert values[4] == ("mass", "minimize", True) and values[5] == (True, True) and values[6] == (True, True)
    d = ns["d"]
    assert d["baseline"]["evaluations"] >= d["baseline"]["budget_factor"] * d["gradient"]["evaluations"]
    assert [argv[0] for argv, _ in ns["__cli__"]] == ["design", "analyze"]


TUTORIAL_CHECKS = {
    "design_quad": _check_design_quad,
    "own_vehicle": _check_own_vehicle,
    "analyse": _check_analyse,
    "fly": _check_fly,
    "validate": _check_validate,
    "tune": _check_tune,
    "optimise_tilt": _check_optimise_tilt,
    "sweep": _check_sweep,
    "tilting_flight": _check_tilting_flight,
}


@pytest.mark.parametrize("page", [p for p in TUTORIAL_PAGES if p.stem != "index"],
                         ids=lambda p: f"tutorials/{p.stem}")
def test_tutorial_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the page's TOML files and every command's output land here
    (tmp_path / "configs").symlink_to(ROOT / "configs")  # pages that name the shipped `configs/...`
    assert jax.config.jax_enable_x64
    ns, values, stdout = run_page(page)
    TUTORIAL_CHECKS[page.stem](ns, values, stdout)


def test_readme_quick_start_runs_and_prints_what_it_says(tmp_path, monkeypatch):
    """The README's python block: the label, G's shape, the Table IV errors in its comments, not diverged."""
    monkeypatch.chdir(tmp_path)
    ns, values, stdout = run_page(ROOT / "README.md")
    lines = stdout.splitlines()
    assert lines[0] == "CS_α0β0-Ted_6R" and lines[-1] == "False"
    from jaxrotor import allocation_matrix

    assert np.asarray(allocation_matrix(ns["hexa"])).shape == (6, 6)
    e = np.asarray(ns["mae"](ns["position_error"](ns["traj"])))
    np.testing.assert_allclose(e[:2], [1.66e-3, 3.22e-3], rtol=5e-3)  # the comment: ~ [1.66e-3, 3.22e-3, 2e-12] m
    assert e[2] < 1e-9
