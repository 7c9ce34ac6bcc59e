"""Every script in experiments/ runs on a short horizon (``--quick``), passes its own checks, and says so.

Each script prints one ``check NAME: PASS|FAIL (measured X, target OP Y)`` line per
check (``experiments/_checks.py``), exits 1 if any fails, and writes a JSON summary
into ``--out`` with the same checks and its figures. The tests parse both and assert
on the figures, not only on the exit status.
"""

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "experiments"
SCRIPTS = sorted(p for p in EXPERIMENTS.glob("*.py") if not p.name.startswith("_"))
SUMMARY = {  # script -> the JSON summary it writes into --out
    "benchmark_gradients.py": "benchmark_gradients.json",
    "benchmark_usecase.py": "benchmark_usecase.json",
    "capability_at_price.py": "capability_at_price.json",
    "parts_arm_length.py": "parts_arm_length.json",
    "preset_table.py": "preset_table.json",
    "tilt_geometry.py": "tilt_geometry.json",
    "tune_gains.py": "tune_gains.json",
    "yaw_root_locus.py": "yaw_root_locus.json",
}


def _load_checks_module():
    spec = importlib.util.spec_from_file_location("_checks", EXPERIMENTS / "_checks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_checks = _load_checks_module()
LINE = re.compile(_checks.LINE_PATTERN, re.M)


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _all_finite(xs) -> bool:
    return all(_finite(x) for x in xs)


def run_quick(script: Path, out: Path, timeout: float = 600):
    env = dict(os.environ, MPLBACKEND="Agg", JAXROTOR_OUT=str(out))
    res = subprocess.run([sys.executable, str(script), "--quick", "--out", str(out)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=timeout)
    log = f"{script.name}:\n--- stdout\n{res.stdout[-4000:]}\n--- stderr\n{res.stderr[-3000:]}"
    return res, log


#: Words that mark a check as a timing measurement (:func:`assert_checks` does not require it to pass).
TIMING_WORDS = ("/ forward time", "loop wall", "wall-time ratio")


def _timing(check: dict) -> bool:
    return any(w in check["name"] for w in TIMING_WORDS)


def assert_checks(res, summary, log):
    """The printed check lines, the JSON's checks and the exit status agree, and every check passed (a timing
    check, :data:`TIMING_WORDS`, may miss its target under load: the script then exits 1 and says so)."""
    printed = [m.groupdict() for m in LINE.finditer(res.stdout)]
    assert printed, f"no check line printed\n{log}"
    checks = summary["checks"]
    assert [c["name"] for c in checks] == [p["name"] for p in printed], log
    for c, p in zip(checks, printed):
        assert _finite(c["measured"]) and _finite(c["target"]), f"{c}\n{log}"
        assert math.isclose(float(p["measured"]), c["measured"], rel_tol=1e-5, abs_tol=1e-300), f"{c} vs {p}"
        assert p["op"] == c["op"]
        assert (p["status"] == "PASS") == c["passed"]
        assert _checks.OPS[c["op"]](c["measured"], c["target"]) == c["passed"], c
    # a timing check (a wall time or a ratio of times) is the benchmark's report, measured under whatever load the
    # test machine carries: printed and consistent above, its target judged by the script's own full runs
    failed = [c for c in checks if not c["passed"] and not _timing(c)]
    assert not failed, f"failed checks: {failed}\n{log}"
    slow = [c for c in checks if not c["passed"]]  # timing checks only, by now
    assert summary["passed"] is (not slow)
    assert res.returncode == (1 if slow else 0), log


def check_capability_at_price(s):
    assert s["quick"] is True
    # the paper's 25 / 10 deg: eta = cos(alpha_0) cos(beta_0)
    assert s["paper"]["eta"] == pytest.approx(math.cos(math.radians(25)) * math.cos(math.radians(10)), abs=1e-4)
    assert 0.0 < s["paper"]["capability"] < 1.0 and 0.0 < s["paper"]["rotor_loss_margin"] < 1.0
    rows = s["results"]
    assert {r["variant"] for r in rows} == {"A", "B", "C"}
    assert {r["eta_min"] for r in rows} == {0.95, 0.9}
    for r in rows:
        assert _all_finite([r[k] for k in ("alpha_deg", "beta_deg", "eta", "capability", "condition_number",
                                            "rotor_loss_margin", "relative_gap")]), r
        assert 0.0 <= r["alpha_deg"] <= 60.0 and 0.0 <= r["beta_deg"] <= 40.0, r  # the Box bounds
        assert r["eta_min"] <= r["eta"] <= 1.0, r
        assert 0.0 < r["capability"] < 1.0 and r["condition_number"] >= 1.0, r
        assert r["relative_gap"] <= 0.1, r
        if r["variant"] == "B":
            assert r["rotor_loss_margin"] >= s["paper"]["rotor_loss_margin"], r
    # at a given efficiency, more cant buys more lateral force: the looser bound gives the larger capability
    for v in ("A", "B"):
        cap = {r["eta_min"]: r["capability"] for r in rows if r["variant"] == v}
        assert cap[0.9] > cap[0.95]
    assert s["all_feasible"] is True


def check_tilt_geometry(s):
    assert s["quick"] is True
    sweep = s["sweep"]
    assert [r["lambda"] for r in sweep] == [3.0, 30.0]
    for r in sweep:
        assert _all_finite([r[k] for k in ("alpha_deg", "beta_deg", "loss", "grid_loss", "tracking_rmse",
                                            "saturation", "energy", "cells_from_grid_best")]), r
        assert 0.0 <= r["alpha_deg"] <= 60.0 and 0.0 <= r["beta_deg"] <= 40.0, r  # the configured Box bounds
        assert r["cells_from_grid_best"] <= 1.0 + 1e-9 and r["within_one_cell"] is True, r
        assert r["penalized"] is False, r
        assert r["tracking_rmse"] > 0.0 and r["saturation"] >= 0.0 and r["energy"] >= 1.0, r  # E: flat hover = 1
    assert _all_finite(s["paper"].values())
    assert s["all_within_one_cell"] is True
    assert len(s["checks"]) == len(sweep) + 1


def check_tune_gains(s):
    assert s["quick"] is True and s["iterations"] >= 1
    assert _all_finite([s["rmse_detuned_m"], s["rmse_table3_m"], s["rmse_tuned_m"], s["reduction_final"]])
    assert 0.0 < s["rmse_tuned_m"] < s["rmse_detuned_m"] < 1.0  # metres: a 1 s flight tracks to well under 1 m
    assert s["reduction_final"] == pytest.approx(s["rmse_detuned_m"] / s["rmse_tuned_m"])
    assert len(s["final_params"]) == 18 and all(_finite(v) and v > 0 for v in s["final_params"].values())


def check_benchmark_gradients(s):
    assert s["quick"] is True and s["horizon_s"] == 3.0
    for kind in ("ideal", "realistic"):
        r = s[kind]
        assert _all_finite([r["forward_s"], r["gradient_s"], r["ratio"], r["loss"]]), r
        # the gradient/forward time ratio is a timing measurement (printed, judged by the full run), not asserted here
        assert r["forward_s"] > 0 and r["ratio"] > 0, r
        assert len(r["grad"]) == 20 and _all_finite(r["grad"])
        fd = r["fd"]
        assert len(fd["rows"]) == 4 and fd["worst_relative_error"] <= s["fd_tolerance"][kind]
        for name, ad, cd in fd["rows"]:
            assert _finite(ad) and _finite(cd)
            if name.startswith("platform."):  # the tilt moves the power proxy: a gradient well above noise
                assert abs(ad) > 1e-3 and ad == pytest.approx(cd, rel=1e-5), (name, ad, cd)


def check_benchmark_usecase(s):
    assert s["quick"] is True and s["horizon_s"] == 2.0
    assert s["agreement_ok"] is True
    for r in s["rows"]:
        assert _finite(r["run"]) and r["run"] > 0 and r["steps"] > 0, r
        if r["mae"] is not None:
            assert len(r["mae"]) == 3 and _all_finite(r["mae"]) and max(r["mae"]) < 0.1, r
    assert s["batch"]["diverged"] == 0 and _finite(s["batch"]["flights_per_s"])
    assert _finite(s["reference_gap_m"]) and s["reference_gap_m"] < 1e-9
    assert _finite(s["realtime_factor"]) and _finite(s["speedup_over_scipy"])


def check_parts_arm_length(s):
    assert s["quick"] is True
    lo, hi = s["bounds"]["arm_length"]
    on, off, off_built = s["parts_on"], s["parts_off_model"], s["parts_off_as_built"]
    for r in (on, off, off_built):
        assert lo - 1e-9 <= r["arm_length_m"] <= hi + 1e-9 and _all_finite(r["authority_rad_s2"]), r
    # frozen inertia: a longer arm only buys torque, the optimum runs to the upper bound
    assert off["arm_length_m"] == pytest.approx(hi, abs=1e-6)
    assert off_built["arm_length_m"] == off["arm_length_m"] and off_built["mass_kg"] > off["mass_kg"]
    # as built, the long-arm design is heavier, has a larger inertia and less authority than its model claimed
    assert min(off_built["authority_rad_s2"]) < min(off["authority_rad_s2"])
    assert off_built["inertia_diag"][2] > off["inertia_diag"][2]
    assert on["objective"] < off_built["objective"]


def check_yaw_root_locus(s):
    assert s["quick"] is True and len(s["tau_m_s"]) == 9
    with_jr, without = s["cases"]["J_r = 1.095e-4"], s["cases"]["no rotor inertia"]
    for r in (with_jr, without):
        assert _all_finite(r["growth_per_s"]) and _all_finite(r["frequency_hz"]), r
    # rotor inertia destabilises: the yaw mode grows faster at every time constant above the fastest motor
    assert all(a > b for a, b in zip(with_jr["growth_per_s"][1:], without["growth_per_s"][1:]))
    assert with_jr["growth_30ms"] == pytest.approx(6.06, rel=0.1) and 4.0 < with_jr["frequency_30ms_hz"] < 5.0
    assert 0.0 < with_jr["threshold_tau_m_s"] < without["threshold_tau_m_s"]


def check_preset_table(s):
    assert s["out_of_date"] == [] and s["tables"] == ["presets", "sign-patterns", "test-designs"]
    assert all(n > 0 for n in s["rows"].values())


SPECIFIC = {
    "benchmark_gradients.py": check_benchmark_gradients,
    "benchmark_usecase.py": check_benchmark_usecase,
    "capability_at_price.py": check_capability_at_price,
    "parts_arm_length.py": check_parts_arm_length,
    "preset_table.py": check_preset_table,
    "tilt_geometry.py": check_tilt_geometry,
    "tune_gains.py": check_tune_gains,
    "yaw_root_locus.py": check_yaw_root_locus,
}


def own_test_file(script: Path) -> Path:
    """A script may be covered by its own module, ``tests/artifacts/test_experiment_<stem>.py`` (using :func:`run_and_check`)."""
    return Path(__file__).with_name(f"test_experiment_{script.stem}.py")


def test_every_script_is_covered():
    own = {p.name for p in SCRIPTS if own_test_file(p).is_file()}
    assert {p.name for p in SCRIPTS} - own == set(SUMMARY) == set(SPECIFIC)
    assert not own & set(SPECIFIC)


def run_and_check(script: Path, tmp_path: Path, summary_name: str | None = None, timeout: float = 600) -> dict:
    """Run ``script --quick`` (within ``timeout`` [s]), assert its printed checks agree with its JSON and all passed;
    return the JSON."""
    res, log = run_quick(script, tmp_path, timeout)
    assert res.returncode in (0, 1), log  # 1: a check failed (reported below); anything else: a crash
    path = tmp_path / (summary_name or f"{script.stem}.json")
    assert path.is_file(), f"{path.name} not written\n{log}"
    summary = json.loads(path.read_text())
    assert summary["script"] == script.stem
    assert_checks(res, summary, log)
    return summary


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.name in SPECIFIC], ids=lambda p: p.name)
def test_experiment_runs_quick(script, tmp_path):
    SPECIFIC[script.name](run_and_check(script, tmp_path, SUMMARY[script.name]))


def test_checks_fail_with_measured_value_and_target(tmp_path, capsys):
    checks = _checks.Checks("demo")
    assert checks.add("ratio", 5.0, "<=", 8.0)
    assert not checks.add("rotor-loss margin", -0.01, ">=", 0.0, "worst: B")
    assert not checks.add("not a number", float("nan"), "<=", 1.0)  # a non-finite measurement fails
    code = checks.finish(tmp_path / "s.json", {"value": float("inf")})
    out = capsys.readouterr().out
    assert code == 1
    assert "check ratio: PASS (measured 5, target <= 8)" in out
    assert "check rotor-loss margin: FAIL (measured -0.01, target >= 0)" in out
    assert "FAILED 2 of 3 checks" in out and "rotor-loss margin: measured -0.01, target >= 0 (worst: B)" in out
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["passed"] is False and [c["passed"] for c in s["checks"]] == [True, False, False]
    assert s["value"] == "inf"  # non-finite floats are written as strings: the JSON stays strict
    assert [m.group("status") for m in LINE.finditer(out)] == ["PASS", "FAIL", "FAIL"]

    ok = _checks.Checks("demo")
    ok.add("ratio", 5.0, "<=", 8.0)
    assert ok.finish() == 0
    assert _checks.Checks("empty").finish() == 1  # a script that checked nothing has not passed
