"""``experiments/fault_agreement.py --quick``: a random tilted hexarotor loses each rotor in turn; the script reports
each flown outcome beside the analysis', and its check, its JSON and its exit status say the same.

The agreement itself is a measured target, not a given (docs/faults.md: spinning flights after a loss can hold
where no static hover exists): this test asserts the report is true to the flights, and that it fails loudly
(exit status 1, FAIL line) exactly when some loss disagrees."""

import json
import re
from pathlib import Path

from jaxrotor.faults import OUTCOMES

from .test_experiments import run_quick

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "fault_agreement.py"


def test_fault_agreement_quick(tmp_path):
    res, log = run_quick(SCRIPT, tmp_path)
    assert res.returncode in (0, 1), log
    s = json.loads((tmp_path / "fault_agreement.json").read_text())
    assert s["quick"] is True and s["physics"] is False and (tmp_path / "fault_agreement.png").is_file()
    (name,) = s["designs"]
    rows = s["designs"][name]["rotors"]
    assert [r["rotor"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert all(r["analysis"] in OUTCOMES and r["analytic"] in OUTCOMES and r["physics"] is None for r in rows)
    agree = sum(r["analytic"] == r["analysis"] for r in rows)
    (check,) = s["checks"]
    assert check["measured"] == agree and check["target"] == 6 and check["passed"] == (agree == 6)
    assert res.returncode == (0 if agree == 6 else 1) and s["passed"] == (agree == 6), log
    line = re.search(r"^check random-design losses.*: (PASS|FAIL) \(measured (\d+)", res.stdout, re.M)
    assert line and line.group(1) == ("PASS" if agree == 6 else "FAIL") and int(line.group(2)) == agree, log
    for r in rows:  # each row of the printed table is the JSON's
        assert re.search(rf"^\s+{r['rotor']}\s+{r['analysis']}\s+{r['analytic']}\s", res.stdout, re.M), log
    assert sum(s["random_outcome_counts"].values()) == 6
    alpha = s["designs"][name]["alpha_deg"]
    assert len(alpha) == 6 and all(10 <= abs(a) <= 40 for a in alpha)
