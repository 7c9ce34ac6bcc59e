"""Bad-input battery: malformed configs, constructor arguments and CLI arguments (property-based, hypothesis).

Every generated input is malformed by construction (a wrong type, a missing required table, an unknown
key, an out-of-range value, NaN/inf, an empty array, a wrong length). Each must be refused with a
``ValueError`` (``ConfigError`` for files) whose message names where (the key or parameter), the value and a
fix (``Fix:``): never another exception type, never a silently accepted value. Nothing is flown.

The count of distinct bad inputs tried and the pass rate are printed by the last test (``-s``) and written
as JSON to ``$JAXROTOR_BAD_INPUT_REPORT`` when that variable is set.
"""

from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxrotor import reference as R
from jaxrotor.allocators import BoxLS
from jaxrotor.cli import main
from jaxrotor.design.platform import star_platform
from jaxrotor.dynamics import FirstOrderMotor, FirstOrderServo
from jaxrotor.flight import DivergenceLimits, Flight
from jaxrotor.io import config as cfg
from jaxrotor.io import optimize_config as oc
from jaxrotor.io.toml import ConfigError, read_toml
from jaxrotor.randomize import Randomization
from jaxrotor.sensors import Sensors
from jaxrotor.workflows.sweep import sweep_from_dict
from jaxrotor.tilting import CantSelection, ExtendedVariable
from jaxrotor.wind import Wind

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
SETTINGS = settings(derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

#: category -> {distinct input key: passed?}
RESULTS: dict[str, dict[str, bool]] = {}


def _record(category: str, key: str, ok: bool) -> None:
    RESULTS.setdefault(category, {})[key] = RESULTS.get(category, {}).get(key, True) and ok


def _shown(msg: str, value) -> bool:
    """Whether the message shows ``value`` (in one of the forms the loaders print it)."""
    if isinstance(value, float) and math.isnan(value):
        return "nan" in msg
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]" in msg or "()" in msg or "empty" in msg or "shape (0" in msg
        return all(_shown(msg, v) for v in value[:1]) or repr(list(value)) in msg or f"got {len(value)}" in msg
    if isinstance(value, dict):
        return repr(value) in msg or "table" in msg or "dict" in msg
    forms = {repr(value), str(value)}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        forms |= {f"{value:g}", repr(float(value)), np.array2string(np.asarray(float(value)), precision=6)}
    return any(f in msg for f in forms)


def _check_error(category: str, key: str, call, where: str, value, show_value: bool = True,
                 expect: type = ValueError) -> None:
    """``call()`` must raise ``expect`` (a ValueError) naming ``where`` and ``value`` with a fix."""
    try:
        call()
    except ValueError as err:  # ConfigError is a ValueError
        msg = str(err)
        ok = isinstance(err, expect) and "Fix" in msg and where in msg and (not show_value or _shown(msg, value))
        _record(category, key, ok)
        assert ok, f"unhelpful error for {key}: {msg}"
        return
    except Exception as err:  # noqa: BLE001 - the point: any other type is a failure
        _record(category, key, False)
        raise AssertionError(f"{key}: {type(err).__name__} instead of a clear ValueError: {err}") from err
    _record(category, key, False)
    raise AssertionError(f"{key}: accepted silently")


# ---------------------------------------------------------------------------------------------------------------
# Configuration files: mutations of the shipped configs
# ---------------------------------------------------------------------------------------------------------------

LOADERS = {
    "cs_4r.toml": lambda d: cfg.from_dict(d, "bad.toml", CONFIGS),
    "paper_realistic.toml": lambda d: cfg.from_dict(d, "bad.toml", CONFIGS),
    "cant_tilting_hex.toml": lambda d: cfg.from_dict(d, "bad.toml", CONFIGS),
    "tilting_hex_fullpose.toml": lambda d: cfg.from_dict(d, "bad.toml", CONFIGS),
    "tune_gains_robust.toml": lambda d: oc.from_dict(d, "bad.toml", CONFIGS, kind="tune"),
    "optimize_tilt.toml": lambda d: oc.from_dict(d, "bad.toml", CONFIGS, kind="optimize"),
    "optimize_polytope.toml": lambda d: oc.from_dict(d, "bad.toml", CONFIGS, kind="optimize"),
    "sweep_tilt.toml": lambda d: sweep_from_dict(d, "bad.toml", CONFIGS, check_memory=False),
}
BASES = {name: read_toml(CONFIGS / name) for name in LOADERS}
#: free-text keys (any string is valid)
FREE_TEXT = {"name", "description"}
#: keys where +-inf is meaningful (unbounded transform bounds and servo limits)
INF_OK = {"lower", "upper", "alpha_limits", "beta_limits"}
#: keys that must be > 0 (a zero or negative value is out of range)
POSITIVE = {"duration", "period", "dt", "save_dt", "t1", "time_constant", "rtol", "atol", "learning_rate",
            "iterations", "batch_size", "rate_limit", "gust_time_constant", "max_position", "max_speed", "max_rate",
            "takeoff_time", "landing_time", "radius", "arm_length", "mass", "chunk"}
#: tables every file of the kind needs
REQUIRED = {"reference", "sweep"}


def _nodes(d: dict, prefix=()):
    for k, v in d.items():
        yield prefix + (k,), v
        if isinstance(v, dict):
            yield from _nodes(v, prefix + (k,))


NODES = {name: list(_nodes(base)) for name, base in BASES.items()}


def _put(base: dict, path: tuple, value, delete: bool = False) -> dict:
    d = copy.deepcopy(base)
    x = d
    for k in path[:-1]:
        x = x[k]
    if delete:
        del x[path[-1]]
    else:
        x[path[-1]] = value
    return d


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@st.composite
def config_mutation(draw):
    """``(config name, description, mutated dict, where, value)`` of one malformed configuration."""
    name = draw(st.sampled_from(sorted(BASES)))
    base = BASES[name]
    path, v = draw(st.sampled_from(NODES[name]))
    key = path[-1]
    kinds = ["unknown_key"]
    if isinstance(v, dict):
        kinds += ["table_is_scalar"]
    elif _is_num(v):
        kinds += ["nan", "wrong_type_str", "wrong_type_list"] + (["inf"] if key not in INF_OK else [])
        kinds += ["not_positive"] if key in POSITIVE else []
    elif isinstance(v, str) and key not in FREE_TEXT:
        kinds += ["bad_choice", "wrong_type_num"]
    elif isinstance(v, bool):
        kinds += ["wrong_type_str"]
    elif isinstance(v, list) and v and all(_is_num(x) for x in v):
        kinds += ["empty", "wrong_length", "nan_entry", "str_entry"]
    if key in REQUIRED and len(path) == 1:
        kinds += ["missing_table"]
    kind = draw(st.sampled_from(kinds))
    if kind == "unknown_key":
        extra = draw(st.from_regex(r"zz[a-z_]{1,6}", fullmatch=True))
        target = path if isinstance(v, dict) else path[:-1]
        d = copy.deepcopy(base)
        x = d
        for k in target:
            x = x[k]
        x[extra] = draw(st.one_of(st.integers(-3, 3), st.text("abc", min_size=1, max_size=3)))
        return name, f"{'.'.join(target + (extra,))} (unknown)", d, extra, extra
    if kind == "missing_table":
        return name, f"{key} missing", _put(base, path, None, delete=True), key, key
    value = {
        "table_is_scalar": lambda: draw(st.one_of(st.integers(-5, 5), st.text("xyz", min_size=1, max_size=3))),
        "nan": lambda: math.nan,
        "inf": lambda: draw(st.sampled_from([math.inf, -math.inf])),
        "wrong_type_str": lambda: draw(st.text("qwrty", min_size=1, max_size=4)),
        "wrong_type_list": lambda: [v, v],
        "not_positive": lambda: draw(st.one_of(st.just(0), st.floats(-1e3, 0.0), st.integers(-100, 0))),
        "bad_choice": lambda: draw(st.text("qwrty", min_size=1, max_size=5)),
        "wrong_type_num": lambda: draw(st.floats(-10, 10)),
        "empty": lambda: [],
        "wrong_length": lambda: (v + v[-1:] * draw(st.integers(1, 3))) if draw(st.booleans()) else v[:-1],
        "nan_entry": lambda: [math.nan] + v[1:],
        "str_entry": lambda: [draw(st.text("qwrty", min_size=1, max_size=3))] + v[1:],
    }[kind]()
    if kind == "wrong_length" and len(value) == len(v):
        value = v[:-1]
    return name, f"{'.'.join(path)} <- {kind} {value!r}", _put(base, path, value), key, value


@settings(SETTINGS, max_examples=260)
@given(config_mutation())
def test_config_battery(case):
    name, desc, data, where, value = case
    _check_error("config", f"{name}: {desc}", lambda: LOADERS[name](data), where, value, expect=ConfigError)


def test_shipped_configs_load():
    """The battery's bases are valid: each mutation, not the base, causes the error."""
    for name, load in LOADERS.items():
        load(copy.deepcopy(BASES[name]))


@settings(SETTINGS, max_examples=30)
@given(st.sampled_from(["cs_4r.toml", "sweep_tilt.toml", "optimize_tilt.toml"]), st.data())
def test_toml_syntax_and_missing_files(tmp_path_factory, name, data):
    """A syntax error names the file and the line; a missing file names the path."""
    text = (CONFIGS / name).read_text()
    lines = text.splitlines()
    k = data.draw(st.sampled_from([i for i, line in enumerate(lines) if "=" in line and not line.startswith("#")]))
    code = lines[k].split("#")[0].rstrip()
    broken = data.draw(st.sampled_from([lines[k].replace("=", "", 1), code + " = 1", "[" + lines[k]]))
    path = tmp_path_factory.mktemp("toml") / "broken.toml"
    path.write_text("\n".join(lines[:k] + [broken] + lines[k + 1:]))
    loader = {"cs_4r.toml": cfg.load, "sweep_tilt.toml": lambda p: sweep_from_dict(read_toml(p)),
              "optimize_tilt.toml": lambda p: oc.load(p, kind="optimize")}[name]
    _check_error("toml", f"{name}: line {k + 1} -> {broken!r}", lambda: loader(path), "broken.toml", "line",
                 expect=ConfigError)
    missing = path.parent / "absent.toml"
    _check_error("toml", f"{name}: missing file", lambda: loader(missing), "absent.toml", "absent.toml",
                 expect=ConfigError)


def test_with_t1_refuses_nonfinite():
    conf = cfg.load(CONFIGS / "cs_4r.toml")
    for t1 in (math.inf, math.nan, -1.0, 0.0):
        _check_error("config", f"with_t1({t1})", lambda t1=t1: conf.with_t1(t1), "t1", t1)


# ---------------------------------------------------------------------------------------------------------------
# Constructors
# ---------------------------------------------------------------------------------------------------------------

_HOVER = R.Hover([0.0, 0.0, 1.0], 1.0)
_PLATFORM = {"n": 6, "arm_length": 0.4, "mass": 2.0, "c_f": 1e-5, "c_tau": 1e-7, "hub_mass": 0.1}
_TEXT = st.text("qwrty", min_size=1, max_size=4)
_NONFINITE = st.sampled_from([math.nan, math.inf, -math.inf])


def _bad_number(lo_ok: float, strict: bool):
    """A value outside ``(lo_ok, inf)`` (strict) or ``[lo_ok, inf)``, non-finite, or not a number."""
    below = st.floats(max_value=lo_ok, exclude_max=not strict, allow_nan=False, allow_infinity=False, min_value=-1e6)
    return st.one_of(below, _NONFINITE, _TEXT)


POSITIVE_NUM = _bad_number(0.0, strict=True)
NONNEG_NUM = _bad_number(0.0, strict=False)


def _bad_vector(n: int):
    wrong_len = st.integers(0, 6).filter(lambda m: m != n).flatmap(
        lambda m: st.lists(st.floats(-5, 5), min_size=m, max_size=m))
    with_bad = st.tuples(st.integers(0, n - 1), _NONFINITE).map(
        lambda ib: [ib[1] if i == ib[0] else 0.5 for i in range(n)])
    return st.one_of(wrong_len, with_bad)


#: (constructor, parameter) -> (builder taking the bad value, strategy of bad values)
CTORS = {
    ("star_platform", "n"): (lambda v: star_platform(**{**_PLATFORM, "n": v}),
                             st.one_of(st.integers(-5, 0), st.floats(0.5, 9.5).filter(lambda x: x != int(x)), _TEXT)),
    ("star_platform", "arm_length"): (lambda v: star_platform(**{**_PLATFORM, "arm_length": v}), POSITIVE_NUM),
    ("star_platform", "mass"): (lambda v: star_platform(**{**_PLATFORM, "mass": v}), POSITIVE_NUM),
    ("star_platform", "c_f"): (lambda v: star_platform(**{**_PLATFORM, "c_f": v}),
                               st.one_of(POSITIVE_NUM.filter(lambda x: not isinstance(x, str)), _bad_vector(6))),
    ("star_platform", "alpha"): (lambda v: star_platform(**{**_PLATFORM, "alpha": v}),
                                 st.one_of(_NONFINITE, _bad_vector(6).filter(lambda x: len(x) not in (0, 1)))),
    ("star_platform", "delta"): (lambda v: star_platform(**{**_PLATFORM, "delta": v}),
                                 _bad_vector(6).filter(lambda x: len(x) != 1)),
    ("star_platform", "hub_mass"): (lambda v: star_platform(**{**_PLATFORM, "hub_mass": v}), NONNEG_NUM),
    ("star_platform", "gravity"): (lambda v: star_platform(**{**_PLATFORM, "gravity": v}), POSITIVE_NUM),
    ("star_platform", "rotor_speed_max"): (lambda v: star_platform(**{**_PLATFORM, "rotor_speed_max": v}),
                                           st.one_of(st.floats(-1e3, 0.0), st.just(math.nan))),
    ("FirstOrderMotor", "time_constant"): (lambda v: FirstOrderMotor(v), POSITIVE_NUM),
    ("FirstOrderServo", "time_constant"): (lambda v: FirstOrderServo(time_constant=v), POSITIVE_NUM),
    ("FirstOrderServo", "rate_limit"): (lambda v: FirstOrderServo(rate_limit=v), POSITIVE_NUM),
    ("Hover", "position"): (lambda v: R.Hover(v, 1.0), _bad_vector(3)),
    ("Hover", "duration"): (lambda v: R.Hover([0.0, 0.0, 1.0], v), POSITIVE_NUM),
    ("Transfer", "end"): (lambda v: R.Transfer([0.0, 0.0, 1.0], v, 2.0), _bad_vector(3)),
    ("FigureEight", "amplitude"): (lambda v: R.FigureEight(10.0, amplitude=v), _bad_vector(2)),
    ("FigureEight", "period"): (lambda v: R.FigureEight(10.0, period=v), POSITIVE_NUM),
    ("Circle", "radius"): (lambda v: R.Circle(10.0, radius=v), POSITIVE_NUM),
    ("Sequence", "phases"): (lambda v: R.Sequence(v), st.one_of(st.just([]), _TEXT, st.lists(st.integers(), min_size=1,
                                                                                           max_size=3))),
    ("Sensors", "position_std"): (lambda v: Sensors(position_std=v), st.one_of(NONNEG_NUM, _bad_vector(3).filter(
        lambda x: len(x) not in (0, 1)))),
    ("Sensors", "rate_bias_std"): (lambda v: Sensors(rate_bias_std=v), NONNEG_NUM),
    ("Sensors", "delay"): (lambda v: Sensors(delay=v), st.one_of(st.integers(-10, -1), st.floats(0.5, 3.5), _TEXT)),
    ("Wind", "mean"): (lambda v: Wind(mean=v), _bad_vector(3).filter(lambda x: len(x) not in (0, 1))),
    ("Wind", "gust_std"): (lambda v: Wind(gust_std=v), NONNEG_NUM.filter(lambda x: not isinstance(x, str))),
    ("Wind", "gust_time_constant"): (lambda v: Wind(gust_time_constant=v),
                                     POSITIVE_NUM.filter(lambda x: not isinstance(x, str))),
    ("Wind", "drag_quadratic"): (lambda v: Wind(drag_quadratic=v), NONNEG_NUM.filter(lambda x: not isinstance(x, str))),
    ("Randomization", "mass"): (lambda v: Randomization(mass=v), st.one_of(st.floats(1.0, 10.0), NONNEG_NUM)),
    ("Randomization", "wind_speed"): (lambda v: Randomization(wind_speed=v), st.one_of(
        st.tuples(st.floats(1.0, 5.0), st.floats(0.0, 0.9)), st.tuples(_NONFINITE, st.just(1.0)),
        st.tuples(st.floats(-5.0, -0.1), st.just(1.0)), st.just((1.0,)), _TEXT)),
    ("BoxLS", "torque_weight"): (lambda v: BoxLS(torque_weight=v), st.floats(-10.0, 0.0)),
    ("DivergenceLimits", "max_speed"): (lambda v: DivergenceLimits(max_speed=v), st.one_of(st.floats(-10.0, 0.0),
                                                                                         st.just(math.nan))),
    ("Flight", "save_dt"): (lambda v: Flight(_HOVER, save_dt=v), POSITIVE_NUM),
    ("Flight", "t1"): (lambda v: Flight(_HOVER, t1=v), st.one_of(st.floats(-10.0, 0.0), st.just(math.nan))),
    ("ExtendedVariable", "alpha_limits"): (lambda v: ExtendedVariable(alpha_limits=v),
                                           st.tuples(st.floats(0.1, 1.0), st.floats(-1.0, 0.0))),
    ("CantSelection", "limits"): (lambda v: CantSelection(limits=v), st.one_of(
        st.tuples(st.floats(0.5, 1.0), st.floats(0.0, 0.4)), st.just((-math.inf, math.inf)))),
}


def _ctor_case():
    return st.sampled_from(sorted(CTORS)).flatmap(lambda k: st.tuples(st.just(k), CTORS[k][1]))


@settings(SETTINGS, max_examples=220)
@given(_ctor_case())
def test_constructor_battery(case):
    (owner, param), value = case
    build = CTORS[(owner, param)][0]
    _check_error("constructor", f"{owner}({param}={value!r})", lambda: build(value), param, value,
                 show_value=not isinstance(value, list))


#: Fixed single cases the strategies above do not draw (inf weights, a non-integer count, a one-element pair).
SINGLE_CASES = [
    ("BoxLS", "force_weight", math.inf, lambda v: BoxLS(force_weight=v)),
    ("BoxLS", "iterations", 2.5, lambda v: BoxLS(iterations=v)),
    ("BoxLS", "ridge", -1.0, lambda v: BoxLS(ridge=v)),
    ("BoxLS", "ridge", math.nan, lambda v: BoxLS(ridge=v)),
    ("Flight", "control_rate", 0.0, lambda v: Flight(_HOVER, control_rate=v)),
    ("Flight", "control_rate", math.nan, lambda v: Flight(_HOVER, control_rate=v)),
    ("Flight", "reference", None, lambda v: Flight(v)),
    ("ExtendedVariable", "alpha_limits", (0.1,), lambda v: ExtendedVariable(alpha_limits=v)),
    ("CantSelection", "limits", (0.1,), lambda v: CantSelection(limits=v)),
]


@pytest.mark.parametrize("owner,param,value,build", SINGLE_CASES,
                         ids=[f"{o}.{p}={v!r}" for o, p, v, _ in SINGLE_CASES])
def test_constructor_single_cases(owner, param, value, build):
    _check_error("constructor", f"{owner}({param}={value!r})", lambda: build(value), param, value)


# ---------------------------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------------------------

_CLI_CASES = st.one_of(
    st.tuples(st.just("simulate"), st.just("--t1"), st.sampled_from(["-1", "0", "nan", "inf", "abc", "1e400"])),
    st.tuples(st.just("simulate"), st.just("--fps"), st.sampled_from(["0", "-3", "1000", "x"])),
    st.tuples(st.just("validate"), st.just("--fps"), st.sampled_from(["0", "-3", "1000", "x"])),
    st.tuples(st.sampled_from(["tune", "optimize"]), st.just("--iterations"), st.sampled_from(["0", "-2", "1.5", "x"])),
    st.tuples(st.just("sweep"), st.just("--t1"), st.sampled_from(["-1", "0", "nan", "inf", "abc"])),
    st.tuples(st.just("analyze"), st.just("--directions"), st.sampled_from(["0", "-1", "x"])),
    st.tuples(st.sampled_from(["simulate", "tune", "optimize", "sweep", "analyze"]), st.just("CONFIG"),
              st.sampled_from(["missing.toml", "bad_syntax.toml", "bad_key.toml"])),
)

_CLI_CONFIG = {"simulate": "cs_4r.toml", "validate": "cs_4r.toml", "tune": "tune_gains.toml", "optimize": "optimize_tilt.toml",
               "sweep": "sweep_tilt.toml", "analyze": "cs_4r.toml"}


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "bad_syntax.toml").write_text("name = 'x'\n[platform\npreset = 'paper_hexarotor'\n")
    (d / "bad_key.toml").write_text((CONFIGS / "cs_4r.toml").read_text() + "\nzz_typo = 3\n")
    return d


@settings(SETTINGS, max_examples=45)
@given(case=_CLI_CASES)
def test_cli_battery(cli_files, case):
    cmd, opt, value = case
    if opt == "CONFIG":
        args = [cmd, str(cli_files / value)]
        where = value
        if cmd == "analyze" and value == "bad_key.toml":
            return  # analyze reads only the design tables of a flight file
    else:
        # every bad option must be refused before any flight/compilation: the output folder must stay empty
        args = [cmd, str(CONFIGS / _CLI_CONFIG[cmd]), opt, value]
        where = opt
    out = cli_files / "out" / f"{cmd}-{abs(hash((opt, value)))}"
    if cmd != "analyze":
        args += ["--out", str(out)]
    res = CliRunner().invoke(main, args)
    text = res.output + (str(res.stderr) if res.stderr_bytes else "")
    key = " ".join(args[:1] + args[2:3] + args[3:4] if opt != "CONFIG" else args[:2])
    ok = (res.exit_code == 2 and isinstance(res.exception, SystemExit) and "Traceback" not in text
          and (where in text or where.strip("-") in text) and not (out / "metrics.json").exists())
    if opt == "CONFIG" and value != "missing.toml":
        ok = ok and "Fix" in text
    _record("cli", key, ok)
    assert ok, f"{args}: exit {res.exit_code}, exception {res.exception!r}\n{text}"


# ---------------------------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------------------------

def test_zz_report():
    """Counts of distinct bad inputs and the pass rate (runs last in this module: --dist loadfile)."""
    summary = {cat: {"distinct_inputs": len(v), "passed": sum(v.values())} for cat, v in sorted(RESULTS.items())}
    total = sum(s["distinct_inputs"] for c, s in summary.items() if "known gap" not in c)
    passed = sum(s["passed"] for c, s in summary.items() if "known gap" not in c)
    summary["total"] = {"distinct_inputs": total, "passed": passed, "pass_rate": passed / max(total, 1)}
    print("\nbad-input battery:", json.dumps(summary, indent=1))
    if os.environ.get("JAXROTOR_BAD_INPUT_REPORT"):
        Path(os.environ["JAXROTOR_BAD_INPUT_REPORT"]).write_text(json.dumps(summary, indent=2))
    if total:  # the battery ran in this process
        assert passed == total
