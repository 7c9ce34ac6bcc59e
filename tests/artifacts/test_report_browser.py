"""``jaxrotor report``'s page in a real headless browser (Debian's ``chromium``; ``.ci/run`` installs it).

One short flight of ``configs/cs_4r.toml`` (2 s of the paper maneuver) is reported with
:func:`jaxrotor.workflows.report_html.build_report`, then the page is opened once in headless Chromium driven
through the DevTools protocol over a pipe (``--remote-debugging-pipe``: no extra dependency), with host names
resolving nowhere. The page must load with no console error and no uncaught exception, make no request but to
``file:``, ``data:`` and ``blob:`` URLs, draw every figure, and show the vehicle (a screenshot of its 3D view
holds both spin colours), the numbers in the DOM after the scripts ran must equal ``metrics.json`` and the
``jaxrotor analyze --json`` object written beside it (exactly, through each number's ``data-value``, and to the
printed digits in the text), and the page must stay under 5 MB and draw in under 10 s.

Skipped only when no Chromium binary is found.
"""

from __future__ import annotations

import base64
import fcntl
import io
import json
import math
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "cs_4r.toml"
CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary on PATH (Debian's `chromium`, which "
                                                         ".ci/run installs when it is missing)")

#: Page size limit [bytes] of the issue. Its render-time target (10 s) is measured and printed by
#: test_report_size_and_render_time, not asserted: a wall-clock limit in a test fails on a loaded machine.
MAX_BYTES = 5_000_000


def _high_fd(fd: int) -> int:
    """``fd`` moved to a descriptor number of at least 10."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class DevTools:
    """A minimal Chrome DevTools protocol client over ``--remote-debugging-pipe`` (fd 3: commands in, fd 4:
    messages out, each a JSON object followed by a NUL byte)."""

    def __init__(self, argv: list[str]):
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # the child's ends above fd 9, so that the redirections below cannot clobber one another
        to_chrome_r, from_chrome_w = (_high_fd(to_chrome_r), _high_fd(from_chrome_w))
        # chromium reads commands on fd 3 and writes on fd 4: a small Python launcher puts the pipe ends there and
        # execs it (no preexec_fn, so this multithreaded process is never forked)
        launcher = [sys.executable, "-c", "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
                    "os.execv(sys.argv[3], sys.argv[3:])", str(to_chrome_r), str(from_chrome_w)]
        self.proc = subprocess.Popen(launcher + argv + ["--remote-debugging-pipe"], pass_fds=(to_chrome_r, from_chrome_w),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next = 0
        self._replies: dict[int, dict] = {}
        self.events: list[dict] = []
        self._inbox: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buf = b""
        while True:
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                self._inbox.put(None)
                return
            buf += chunk
            *msgs, buf = buf.split(b"\0")
            for m in msgs:
                self._inbox.put(json.loads(m))

    def _pump(self, timeout: float):
        msg = self._inbox.get(timeout=timeout)
        if msg is None:
            raise RuntimeError(f"chromium closed the DevTools pipe (exit status {self.proc.poll()})")
        if "id" in msg:
            self._replies[msg["id"]] = msg
        else:
            self.events.append(msg)

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30.0):
        self._next += 1
        cid = self._next
        msg = {"id": cid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        while cid not in self._replies:
            self._pump(max(end - time.monotonic(), 0.01))
        reply = self._replies.pop(cid)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self._w)


def _evaluate(cdp: DevTools, session: str, expr: str):
    res = cdp.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
    if "exceptionDetails" in res:
        raise RuntimeError(f"{expr}: {res['exceptionDetails']}")
    return res["result"].get("value")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The report of a 2 s flight of configs/cs_4r.toml."""
    from jaxrotor.workflows.report_html import build_report

    out = tmp_path_factory.mktemp("report")
    return build_report(CONFIG, out, t1=2.0, echo=lambda *a, **k: None)


@pytest.fixture(scope="module")
def page(built, tmp_path_factory):
    """Load the page in headless Chromium; collect console errors, exceptions, requests, the DOM's numbers,
    a screenshot of the vehicle's 3D view and the render time."""
    profile = tempfile.mkdtemp(prefix="jaxrotor-chromium-")
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader",
            "--use-angle=swiftshader", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--disable-default-apps", "--no-first-run",
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}", "--window-size=1200,900",
            "about:blank"]
    cdp = DevTools(argv)
    try:
        target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            cdp.call(f"{domain}.enable", session=session)
        cdp.call("Emulation.setDeviceMetricsOverride", {"width": 1200, "height": 900, "deviceScaleFactor": 1,
                                                        "mobile": False}, session)
        t0 = time.perf_counter()
        cdp.call("Page.navigate", {"url": built.path.resolve().as_uri()}, session)
        state = "pending"
        while time.perf_counter() - t0 < 60.0:
            state = _evaluate(cdp, session, "document.body ? document.body.getAttribute('data-rendered') : null")
            if state not in (None, "pending"):
                break
            time.sleep(0.05)
        render_s = time.perf_counter() - t0
        rect = _evaluate(cdp, session, "(() => { const r = document.getElementById('fig-vehicle')"
                                       ".getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, "
                                       "r.width, r.height]; })()")
        shot = cdp.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                   "clip": {"x": rect[0], "y": rect[1], "width": rect[2],
                                                            "height": rect[3], "scale": 1}}, session)
        numbers = _evaluate(cdp, session, "Array.from(document.querySelectorAll('[data-key]')).map(e => "
                                          "[e.getAttribute('data-key'), e.getAttribute('data-value'), e.textContent])")
        embedded = _evaluate(cdp, session, "document.getElementById('report-data').textContent")
        sections = _evaluate(cdp, session, "Array.from(document.querySelectorAll('section')).map(s => s.id)")
        figures = _evaluate(cdp, session, "Array.from(document.querySelectorAll('.fig')).map(d => "
                                          "[d.id, d.classList.contains('js-plotly-plot')])")
        render_ms = _evaluate(cdp, session, "document.body.getAttribute('data-render-ms')")
        time.sleep(0.3)  # late console messages
        for _ in range(1000):
            try:
                cdp._pump(0.01)
            except queue.Empty:
                break
        events = list(cdp.events)
    finally:
        cdp.close()
        shutil.rmtree(profile, ignore_errors=True)
    png = base64.b64decode(shot["data"])
    return {"state": state, "render_s": render_s, "render_ms": render_ms, "png": png, "numbers": numbers,
            "embedded": json.loads(embedded), "sections": sections, "figures": figures, "events": events}


def test_report_page_loads_with_no_console_error_and_no_network(page, built):
    """No console error, no uncaught exception, no log entry of level error; requests only to file:, data:,
    blob:; the HTML names no http(s) script, style, image or link target; every figure drawn."""
    ev = page["events"]
    errors = [e["params"] for e in ev if e.get("method") == "Runtime.exceptionThrown"]
    errors += [e["params"] for e in ev if e.get("method") == "Runtime.consoleAPICalled"
               and e["params"]["type"] in ("error", "assert")]
    errors += [e["params"]["entry"] for e in ev if e.get("method") == "Log.entryAdded"
               and e["params"]["entry"]["level"] == "error"]
    assert errors == [], errors
    urls = [e["params"]["request"]["url"] for e in ev if e.get("method") == "Network.requestWillBeSent"]
    assert urls and urls[0] == built.path.resolve().as_uri()
    assert all(u.split(":", 1)[0] in ("file", "data", "blob") for u in urls), urls
    text = built.path.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?\s*(https?:)?//""", text, flags=re.I)
    assert page["state"] == str(len(page["figures"])), page["state"]
    assert len(page["figures"]) >= 7 and all(drawn for _, drawn in page["figures"]), page["figures"]
    assert page["sections"] == ["vehicle", "polytope", "mass", "allocation", "stability", "envelope", "flight"]


def test_report_3d_vehicle_view_is_drawn(page, tmp_path):
    """The screenshot of the vehicle's 3D view is not blank and shows both rotor spin colours."""
    import matplotlib.image as mpimg

    img = mpimg.imread(io.BytesIO(page["png"]), format="png")[..., :3]
    assert img.shape[0] > 300 and img.shape[1] > 600
    assert float(img.std()) > 0.05
    non_white = np.mean(np.any(img < 0.9, axis=-1))
    assert non_white > 0.02, non_white

    def near(rgb, tol=0.25):  # the discs are half transparent over white: their hue, lighter
        c = np.asarray(rgb) / 255.0
        light = 1.0 - 0.45 * (1.0 - c)
        return int(np.sum(np.linalg.norm(img - light, axis=-1) < tol * 0.5))

    blue, red = near((31, 119, 180)), near((214, 39, 40))
    assert blue > 200 and red > 200, (blue, red)


def _printed_tolerance(token: str) -> float:
    """Half a unit in the last printed digit of ``token`` (``0.198``: 5e-4; ``1.25e-05``: 5e-8)."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals) * (1 + 1e-9)


def _lookup(data: dict, key: str):
    head, *path = key.split(".")
    node = data[head]
    for p in path:
        node = node[int(p)] if isinstance(node, list) else node[p]
    return node


def test_report_numbers_equal_metrics_and_analysis(page, built):
    """Every number in the rendered DOM equals metrics.json / analysis.json (the ``analyze --json`` object):
    exactly through ``data-value``, and to the printed digits in the text."""
    out = built.path.parent
    files = {"metrics": json.loads((out / "metrics.json").read_text()),
             "analysis": json.loads((out / "analysis.json").read_text())}
    assert page["embedded"]["metrics"] == files["metrics"]
    assert page["embedded"]["analysis"] == files["analysis"]
    keys = {k for k, _, _ in page["numbers"]}
    for must in ("metrics.mae_position_xyz.0", "metrics.mae_position_xyz.2", "metrics.max_position_error_xyz.1",
                 "metrics.mae_orientation_xyz.0", "metrics.saturation_fraction", "metrics.num_steps",
                 "metrics.duration", "metrics.verdict", "analysis.rank_G", "analysis.condition_number_range",
                 "analysis.singular_values.3", "analysis.thrust_to_weight", "analysis.rotor_loss.0.margin",
                 "analysis.hover_u.0", "analysis.stability.max_growth_rate", "analysis.stability.modes.0.damping",
                 "analysis.hover_envelope.level_margin", "analysis.zero_moment_force_volume", "analysis.mass_kg"):
        assert must in keys, must
    checked = 0
    for key, exact, text in page["numbers"]:
        want = _lookup(files, key)
        got = json.loads(exact)
        if isinstance(want, float) and isinstance(got, (int, float)):
            assert got == want, key  # the same double
            shown = re.match(r"\s*([-+]?[0-9.]+(e[-+]?[0-9]+)?)", text)
            if shown and math.isfinite(want):
                assert abs(float(shown.group(1)) - want) <= _printed_tolerance(shown.group(1)), (key, text)
        else:
            assert got == want, key
        checked += 1
    assert checked >= 80, checked
    assert files["metrics"]["duration"] == pytest.approx(2.0)
    assert files["metrics"]["verdict"] == "ok"


def test_report_size_and_render_time(page, built, capsys):
    """The page is under 5 MB and finishes drawing every figure (``data-rendered`` set within the fixture's 60 s
    wait); the time from navigation to the last figure is printed (the 10 s target is measured, not asserted)."""
    size = built.path.stat().st_size
    with capsys.disabled():
        print(f"\nreport.html: {size / 1e6:.2f} MB, drawn in {page['render_s']:.2f} s "
              f"(in-page {page['render_ms']} ms), built in {built.build_time_s:.1f} s")
    assert size < MAX_BYTES, size
    assert page["state"] not in (None, "pending"), page["state"]  # drawn, not timed out
