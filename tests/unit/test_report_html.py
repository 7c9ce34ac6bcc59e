"""jaxrotor/workflows/report_html.py and ``jaxrotor report``: the page's content without a browser.

The analysis written beside the page equals ``jaxrotor analyze CONFIG --json``; every number the page shows
carries that object's exact value; the figures are valid plotly specs (the vehicle's rotor discs in both spin
colours, one hub per rotor); a vehicle from parts gets its mass by part; the command exits 1 on a raised
verdict unless ``--allow-failure``. The browser test is ``tests/artifacts/test_report_browser.py``.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxrotor.cli import main
from jaxrotor.workflows import report_html
from jaxrotor.workflows.report_html import ReportResult, build_report

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "cs_4r.toml"


class _Page(HTMLParser):
    """Sections, numbers (data-key, data-value, text), figure specs and the embedded data of a report page."""

    def __init__(self):
        super().__init__()
        self.sections, self.numbers, self.specs, self.scripts = [], [], {}, {}
        self._num = None
        self._script = None
        self.srcs = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a:
                self.srcs.append(a[k])
        if tag == "section":
            self.sections.append(a["id"])
        if "data-key" in a:
            self._num = [a["data-key"], a["data-value"], ""]
        if tag == "script":
            self._script = (a.get("class"), a.get("data-for") or a.get("id"), [])

    def handle_endtag(self, tag):
        if self._num is not None and tag == "span":
            self.numbers.append(tuple(self._num))
            self._num = None
        if tag == "script" and self._script is not None:
            cls, key, chunks = self._script
            (self.specs if cls == "figspec" else self.scripts)[key] = "".join(chunks)
            self._script = None

    def handle_data(self, data):
        if self._num is not None:
            self._num[2] += data
        if self._script is not None:
            self._script[2].append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """``jaxrotor analyze configs/cs_4r.toml --json`` and the report of the same CONFIG without a flight."""
    res = CliRunner().invoke(main, ["analyze", str(CONFIG), "--json"])
    assert res.exit_code == 0, res.output
    cli = json.loads(res.stdout)
    out = tmp_path_factory.mktemp("report")
    return cli, build_report(CONFIG, out, flight=False, echo=lambda *a, **k: None)


def test_analysis_equals_analyze_json(analysed):
    cli, result = analysed
    assert result.analysis == cli
    assert json.loads((result.path.parent / "analysis.json").read_text()) == cli
    assert result.metrics is None and result.failed == []
    assert "stability" in cli and cli["rank_G"] == 4 and cli["n_rotors"] == 4


def _lookup(data: dict, key: str):
    node = data
    for p in key.split("."):
        node = node[int(p)] if isinstance(node, list) else node[p]
    return node


def test_page_sections_numbers_and_figures(analysed):
    cli, result = analysed
    page = _parse(result.path)
    assert page.sections == ["vehicle", "polytope", "mass", "allocation", "stability", "envelope"]
    assert json.loads(page.scripts["report-data"]) == {"analysis": cli, "metrics": None, "validation": None}
    assert len(page.numbers) > 60
    for key, exact, text in page.numbers:
        want = _lookup({"analysis": cli}, key)
        assert json.loads(exact) == want, key
        m = re.match(r"\s*([-+]?[0-9.]+(e[-+]?[0-9]+)?)", text)
        if m and isinstance(want, float):
            assert float(m.group(1)) == pytest.approx(want, rel=5e-3), (key, text)
    shown = {k for k, _, _ in page.numbers}
    assert {"analysis.rank_G", "analysis.condition_number_range", "analysis.rotor_loss.3.margin",
            "analysis.stability.max_growth_rate", "analysis.hover_envelope.min_max_tilt_deg"} <= shown
    assert set(page.specs) == {"fig-vehicle", "fig-polytope", "fig-envelope"}  # cs_4r: F_B is a segment, no section
    vehicle = json.loads(page.specs["fig-vehicle"])
    discs = [t for t in vehicle["data"] if t["type"] == "mesh3d"]
    assert sorted(t["color"] for t in discs) == sorted(report_html.SPIN_COLORS.values())
    hubs = next(t for t in vehicle["data"] if t["name"] == "hubs")
    assert hubs["text"] == ["1", "2", "3", "4"]
    assert hubs["x"][0] == pytest.approx(0.25, abs=1e-4)  # cs_4r: rotor 1 on the x axis at the arm length
    envelope = json.loads(page.specs["fig-envelope"])["data"][0]
    assert len(envelope["r"]) == len(cli["hover_envelope"]["max_tilt_deg"]) + 1
    assert page.srcs == [] or all(not s.startswith(("http:", "https:", "//")) for s in page.srcs)
    size = result.path.stat().st_size
    assert 1_500_000 < size < 5_000_000, size  # plotly.js embedded compressed once


def test_vehicle_from_parts_mass_breakdown(tmp_path):
    """A platform-only CONFIG of a vehicle built from parts: the mass by part sums to its mass."""
    cfg = tmp_path / "x500.toml"
    cfg.write_text('[platform]\npreset = "x500"\n')
    result = build_report(cfg, tmp_path / "out", echo=lambda *a, **k: None)
    bd = result.analysis["mass_breakdown"]
    assert bd and sum(bd.values()) == pytest.approx(result.analysis["mass_kg"], rel=1e-9)
    page = _parse(result.path)
    keys = {k: json.loads(v) for k, v, _ in page.numbers}
    assert {f"analysis.mass_breakdown.{k}" for k in bd} <= set(keys)
    assert all(keys[f"analysis.mass_breakdown.{k}"] == v for k, v in bd.items())
    assert "stability" not in page.sections and result.metrics is None
    # the arms start at the geometric centre, -com_offset about the centre of mass the view is drawn about
    com = result.analysis["com_offset"]
    assert any(abs(c) > 1e-4 for c in com)
    arms = next(t for t in json.loads(page.specs["fig-vehicle"])["data"] if t["name"] == "arms")
    assert [arms["x"][0], arms["y"][0], arms["z"][0]] == pytest.approx([-c for c in com], rel=1e-4, abs=1e-12)


def test_failed_verdicts():
    ok = {"name": "a", "verdict": "ok"}
    bad = {"name": "b", "verdict": ["diverged"]}
    res = ReportResult(Path("r.html"), {}, {**ok, "compare": bad}, {"name": "a", "verdict_physics": ["saturated"]},
                       0.0)
    assert res.failed == ["b", "a_physics"]
    assert ReportResult(Path("r.html"), {}, ok, None, 0.0).failed == []


def test_cli_exit_status_follows_the_verdict(monkeypatch, tmp_path):
    page = tmp_path / "report.html"
    page.write_text("<html></html>")
    failed = ReportResult(page, {}, {"name": "cs_4r", "verdict": ["lost_tracking"]}, None, 1.0)
    seen = {}

    def fake(config, out_dir, **kw):
        seen.update(kw)
        return failed

    monkeypatch.setattr(report_html, "build_report", fake)
    runner = CliRunner()
    res = runner.invoke(main, ["report", str(CONFIG), "--out", str(tmp_path)])
    assert res.exit_code == 1 and "cs_4r" in res.output
    assert seen["flight"] is True and seen["physics"] is False
    res = runner.invoke(main, ["report", str(CONFIG), "--out", str(tmp_path), "--allow-failure", "--no-flight"])
    assert res.exit_code == 0, res.output
    assert seen["flight"] is False
    res = runner.invoke(main, ["report", str(tmp_path / "missing.toml")])
    assert res.exit_code == 2
