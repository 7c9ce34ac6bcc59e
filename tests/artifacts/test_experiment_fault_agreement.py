"""``experiments/fault_agreement.py --quick``: a random tilted hexarotor loses each rotor in turn; every flown
outcome is one of the three words and the JSON rows agree with the printed check."""

from pathlib import Path

from jaxrotor.faults import OUTCOMES

from .test_experiments import run_and_check

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "fault_agreement.py"


def test_fault_agreement_quick(tmp_path):
    s = run_and_check(SCRIPT, tmp_path)
    assert s["quick"] is True and s["physics"] is False and (tmp_path / "fault_agreement.png").is_file()
    (name,) = s["designs"]
    rows = s["designs"][name]["rotors"]
    assert [r["rotor"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert all(r["analysis"] in OUTCOMES and r["analytic"] in OUTCOMES and r["physics"] is None for r in rows)
    (check,) = s["checks"]
    assert check["measured"] == sum(r["analytic"] == r["analysis"] for r in rows) and check["target"] == 6
    assert sum(s["random_outcome_counts"].values()) == 6
    assert len(s["designs"][name]["alpha_deg"]) == 6 and all(10 <= abs(a) <= 40 for a in s["designs"][name]["alpha_deg"])
