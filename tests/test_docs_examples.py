"""Every ```python block of ``docs/*.md`` runs as written, so the docs cannot drift from the code.

Each page's blocks run in order in one namespace (float64, in a temporary working
directory). The value of every top-level expression statement is kept, so the
results the pages state in their comments (``# (True, 8.17)``, ``# ~ 21.2 N/rad``,
``# (501, 3) ...``) are asserted below, page by page, against what the code returns.
A block meant as illustration only is fenced as ``text``, not ``python``.
"""

import ast
import contextlib
import io
import math
import re
from pathlib import Path

import jax
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", flags=re.S | re.M)


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """``(first line number, source)`` of every ```python block of ``page``."""
    text = page.read_text()
    return [(text[: m.start()].count("\n") + 2, m.group(2))
            for m in FENCE.finditer(text) if m.group(1) == "python"]


PAGES = sorted(p for p in DOCS.glob("*.md") if python_blocks(p))


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


def run_page(page: Path) -> tuple[dict, list, str]:
    """Run the page's blocks in order in one namespace; return it, the kept values and stdout."""
    ns = {"__name__": f"docs_{page.stem}", "__values__": []}
    out = io.StringIO()
    for line, src in python_blocks(page):
        tree = ast.increment_lineno(ast.parse(src, filename=str(page)), line - 1)
        code = compile(_Keep().visit(tree), filename=str(page), mode="exec")
        with contextlib.redirect_stdout(out):
            exec(code, ns)  # noqa: S102 - the documentation's own code
    values = [v for v in ns["__values__"] if v is not None]  # not the ``print(...)`` calls
    return ns, values, out.getvalue()


def test_the_docs_have_python_blocks_and_each_parses():
    assert {p.stem for p in PAGES} >= {"quickstart", "closed_loop", "analysis", "optimization", "batching"}
    for page in DOCS.glob("*.md"):
        for line, src in python_blocks(page):
            ast.parse(src, filename=f"{page}:{line}")


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
    # the TOML form on the page describes the same flight
    from jaxrotor.io import config

    toml = [m.group(2) for m in FENCE.finditer((DOCS / "quickstart.md").read_text()) if m.group(1) == "toml"][0]
    Path("lagged_eight.toml").write_text(toml)
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
    assert jax.config.jax_enable_x64
    ns, values, stdout = run_page(page)
    check = CHECKS.get(page.stem)
    if check is not None:
        check(ns, values, stdout)
