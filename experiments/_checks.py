"""Pass/fail checks shared by the experiment scripts.

Each script states its own checks as ``measured <op> target`` (for example the
gradient/forward time ratio ``<= 8``). :class:`Checks` prints one line per check::

    check gradient/forward time ratio: PASS (measured 5.76, target <= 8)

records it, and :meth:`Checks.finish` writes the script's JSON summary (the
script's own figures plus ``"checks"`` and ``"passed"``), prints every failed check
again with its measured value and target, and returns the exit status: 0 when
every check passed, 1 otherwise. A non-finite measured value fails its check.

The scripts import it as ``from _checks import Checks`` (``python
experiments/NAME.py`` puts ``experiments/`` on ``sys.path``).
"""

from __future__ import annotations

import json
import math
import operator
from pathlib import Path
from typing import Any

OPS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt, "==": operator.eq}

# the line printed for each check; tests/artifacts/test_experiments.py parses it with this pattern
LINE_PATTERN = (r"^check (?P<name>.+): (?P<status>PASS|FAIL) "
                r"\(measured (?P<measured>\S+), target (?P<op><=|>=|<|>|==) (?P<target>\S+)\)")


def _jsonable(x: Any) -> Any:
    """Plain JSON types: numpy scalars and arrays to floats and lists, non-finite floats to strings."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist"):  # numpy / jax arrays and scalars
        return _jsonable(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)  # 'nan', 'inf', '-inf': JSON has no literal for them
    return x


class Checks:
    """The checks of one script run: ``add`` each, then ``return checks.finish(...)`` from ``main``."""

    def __init__(self, script: str):
        self.script = script
        self.items: list[dict] = []

    def add(self, name: str, measured: float, op: str, target: float, detail: str = "") -> bool:
        """Check ``measured <op> target``; print and record it; return whether it passed."""
        if op not in OPS:
            raise ValueError(f"check {name!r}: unknown comparison {op!r}; use one of {sorted(OPS)}")
        measured, target = float(measured), float(target)
        ok = math.isfinite(measured) and bool(OPS[op](measured, target))
        self.items.append({"name": name, "measured": measured, "op": op, "target": target, "passed": ok,
                           "detail": detail})
        print(f"check {name}: {'PASS' if ok else 'FAIL'} (measured {measured:.6g}, target {op} {target:g})"
              + (f"  {detail}" if detail else ""))
        return ok

    @property
    def passed(self) -> bool:
        return all(c["passed"] for c in self.items)

    @property
    def failed(self) -> list[dict]:
        return [c for c in self.items if not c["passed"]]

    def summary(self) -> dict:
        return {"script": self.script, "passed": self.passed, "checks": _jsonable(self.items)}

    def finish(self, path: str | Path | None = None, record: dict | None = None) -> int:
        """Write ``record`` plus the checks to ``path`` (JSON, if given); report failures; return the exit status."""
        if path is not None:
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({**_jsonable(record or {}), **self.summary()}, indent=2))
        if not self.items:
            print(f"{self.script}: FAILED: no check was made")
            return 1
        if self.passed:
            print(f"{self.script}: all {len(self.items)} checks passed")
            return 0
        print(f"{self.script}: FAILED {len(self.failed)} of {len(self.items)} checks:")
        for c in self.failed:
            print(f"  {c['name']}: measured {c['measured']:.6g}, target {c['op']} {c['target']:g}"
                  + (f" ({c['detail']})" if c["detail"] else ""))
        return 1
