"""Electrical objective terms (endurance, battery energy, peak current, payload capacity): values equal the
direct computations, gradients agree with central differences, the TOML paths of optimize, tune and sweep
build them, a vehicle without a battery or a flight without an electric motor is refused at load, and an
optimize run with endurance in the objective raises the endurance.

Flights are the electric hover of ``configs/electric_hover.toml`` shortened to 0.5 s (Heun, fixed 10 ms step).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor import electrical as E
from jaxrotor.io import optimize_config
from jaxrotor.io.toml import ConfigError, read_toml
from jaxrotor.loop import fly
from jaxrotor.metrics import electrical_metrics
from jaxrotor.optimize import objectives as ob
from jaxrotor.optimize.parameters import rederive
from jaxrotor.workflows.sweep import run_sweep, sweep_from_dict

ROOT = Path(__file__).resolve().parents[2]
HOVER = ROOT / "configs" / "electric_hover.toml"
EXAMPLE = ROOT / "configs" / "optimize_endurance.toml"

#: One table per electrical term, as a configuration writes them.
TERMS = {"endurance": {"mode": "profile"}, "energy": {"source": "battery"}, "peak_current": {"temperature": 0.05},
         "payload_capacity": {"twr_margin": 1.5}}
DIAMETER = {"transform": "interval", "lower": 0.2, "upper": 0.3}


def _flight_data(**objective) -> dict:
    """The electric hover flown for 0.5 s at a fixed step, with ``objective`` as its ``[objective]`` tables."""
    data = copy.deepcopy(read_toml(HOVER))
    data["reference"]["duration"] = 0.5
    data["solver"] = {"kind": "heun", "adaptive": False, "dt": 0.01}
    data["parameters"] = {"platform.parts.propeller.diameter": dict(DIAMETER)}
    if objective:
        data["objective"] = copy.deepcopy(objective)
    return data


def _design_data(**objective) -> dict:
    """The electric hover's vehicle alone (a design-only problem: no [reference], nothing flown)."""
    data = _flight_data(**objective)
    return {k: v for k, v in data.items() if k in ("name", "platform", "parts", "parameters", "objective")}


@pytest.fixture(scope="module")
def loaded():
    return optimize_config.from_dict(_flight_data(**TERMS), "electric.toml")


#: The flight terms whose derivatives are checked, measured in one compiled program with the flight.
FLIGHT_TERMS = (ob.Endurance("profile"), ob.Energy(source="battery"), ob.PeakCurrent(0.05))


@eqx.filter_jit
def _flight_and_derivative(design, x):
    """At propeller diameter ``x`` [m] (the platform re-derived from its parts): ``(traj, measures, d measures /
    d x)`` of :data:`FLIGHT_TERMS`, forward mode; one compiled program serves the values, the finite
    differences (its primal outputs) and the derivative."""

    def f(x):
        d = rederive(eqx.tree_at(lambda q: q.platform.parts.propeller.diameter, design, x))
        traj = fly(d.platform, d.controller, d.flight)
        return jnp.stack([t.measure(d, traj) for t in FLIGHT_TERMS]), traj

    (m, traj), (dm, _) = jax.jvp(f, (x,), (jnp.ones_like(x),))
    return traj, m, dm


@pytest.fixture(scope="module")
def flown(loaded):
    d = loaded.problem.design
    return (d, *_flight_and_derivative(d, d.platform.parts.propeller.diameter))


# --------------------------------------------------------------------------- values


def test_each_term_equals_the_direct_computation(loaded, flown):
    design, traj = flown[:2]
    p = design.platform
    em = electrical_metrics(traj, p)
    assert float(ob.Endurance().measure(design)) == float(E.endurance_hover(p))
    assert float(ob.Endurance("profile").measure(design, traj)) == float(em.endurance_profile_s)
    assert float(ob.Energy(source="battery").measure(design, traj)) == float(em.energy_wh)
    b = p.parts.battery
    pack_wh = float(b.cells) * 3.7 * float(b.capacity_mah) / 1000.0
    assert float(ob.Energy(normalize=True, source="battery").measure(design, traj)) == pytest.approx(
        float(em.energy_wh) / pack_wh, rel=1e-14)
    assert float(ob.PayloadCapacity().measure(design)) == float(E.payload_capacity(p, 2.0))
    assert float(ob.PayloadCapacity(1.5).measure(design)) == float(E.payload_capacity(p, 1.5))
    current = np.asarray(traj.electrical.motor_current)
    for T in (0.05, 0.5):
        top = current.max()
        ref = top + T * math.log(np.exp((current - top) / T).sum())
        m = float(ob.PeakCurrent(T).measure(design, traj))
        assert m == pytest.approx(ref, rel=1e-13)
        assert top <= m <= top + T * math.log(current.size) + 1e-12
    # the sense: endurance and payload are maximised (negative costs), energy and current minimised
    assert float(ob.Endurance()(design)) == -float(E.endurance_hover(p))
    assert float(ob.PayloadCapacity()(design)) == -float(E.payload_capacity(p, 2.0))
    assert float(ob.PeakCurrent(0.05)(design, traj)) == float(ob.PeakCurrent(0.05).measure(design, traj))
    # the loaded objective (the TOML path) measures the same: one breakdown per term, cost = sum of sense * m
    value, terms = loaded.problem.objective.evaluate(design, traj)
    want = {"endurance": float(em.endurance_profile_s), "battery_energy": float(em.energy_wh),
            "peak_current": float(ob.PeakCurrent(0.05).measure(design, traj)),
            "payload_capacity": float(E.payload_capacity(p, 1.5))}
    assert set(terms) == set(want)
    for k, v in want.items():
        assert float(terms[k]) == pytest.approx(v, rel=1e-12), k
    assert float(value) == pytest.approx(-want["endurance"] + want["battery_energy"] + want["peak_current"]
                                         - want["payload_capacity"], rel=1e-12)
    # the compiled flight of the gradient test measures the same
    np.testing.assert_allclose(np.asarray(flown[2]), [want["endurance"], want["battery_energy"],
                                                      want["peak_current"]], rtol=1e-12)


def test_the_rotor_energy_stays_the_default():
    e = ob.Energy()
    assert (e.source, e.normalize, e.name) == ("rotor", True, "energy")
    assert ob.Energy(source="battery").name == "battery_energy"
    assert ob.Endurance().needs_flight is False and ob.Endurance("profile").needs_flight is True
    with pytest.raises(ValueError, match="`mode` = 'cruise' is invalid"):
        ob.Endurance("cruise")
    with pytest.raises(ValueError, match="`twr_margin` = 0.5 is invalid"):
        ob.PayloadCapacity(0.5)


# --------------------------------------------------------------------------- gradients


def _central(f, x0: np.ndarray, rel: float = 1e-4) -> np.ndarray:
    """Central differences of ``f`` ``(k,) -> (m,)`` at ``x0``: ``(m, k)``."""
    cols = []
    for j in range(x0.size):
        h = rel * abs(x0[j])
        up, dn = x0.copy(), x0.copy()
        up[j] += h
        dn[j] -= h
        cols.append((np.asarray(f(jnp.asarray(up))) - np.asarray(f(jnp.asarray(dn)))) / (2 * h))
    return np.stack(cols, axis=-1)


def _agree(g: np.ndarray, fd: np.ndarray, tol: float = 1e-6) -> np.ndarray:
    """Relative disagreement of each entry (0 where both are exactly 0)."""
    scale = np.where((g == 0) & (fd == 0), 1.0, np.abs(fd))
    return np.abs(g - fd) / scale


def test_design_term_gradients_match_central_differences(flown):
    """Hover endurance and payload capacity against battery capacity, propeller diameter, arm length and cant."""
    base = flown[0].platform
    signs = jnp.asarray([1.0, -1.0, 1.0, -1.0])
    terms = (ob.Endurance(), ob.PayloadCapacity(1.5))

    @jax.jit
    def f(x):
        p = eqx.tree_at(lambda q: (q.parts.battery.capacity_mah, q.parts.propeller.diameter, q.arm_length, q.alpha),
                        base, (x[0], x[1], x[2], x[3] * signs)).derive()
        design = eqx.tree_at(lambda d: d.platform, flown[0], p)
        return jnp.stack([t.measure(design) for t in terms])

    x0 = np.array([5000.0, 0.254, 0.25, 0.2])
    g = np.asarray(jax.jit(jax.jacfwd(f))(jnp.asarray(x0)))
    fd = _central(f, x0)
    err = _agree(g, fd)
    assert np.all(err < 1e-6), (g, fd, err)
    assert np.all(g[0] != 0)  # endurance moves with every parameter
    assert g[1, 0] == 0.0 and np.all(g[1, 1:] != 0)  # the payload reads the nominal voltage, not the capacity
    assert g[0, 0] > 0  # more capacity (same mass) flies longer


def test_flight_term_gradients_match_central_differences(flown):
    """Profile endurance, battery energy and peak current through the flight, against the propeller diameter."""
    design, _, _, g = flown
    x0 = np.array([float(design.platform.parts.propeller.diameter)])
    assert x0[0] == 0.254
    fd = _central(lambda x: _flight_and_derivative(design, x[0])[1], x0)
    g = np.asarray(g)[:, None]
    err = _agree(g, fd)
    assert np.all(err < 1e-6), (g, fd, err)
    assert np.all(g != 0)


# --------------------------------------------------------------------------- TOML: optimize, tune, sweep


def test_toml_builds_each_term_in_optimize_tune_and_design_only_problems(loaded):
    names = loaded.problem.objective.measure_names()
    assert names == ["endurance", "battery_energy", "peak_current", "payload_capacity"]
    leaves = loaded.problem.objective.leaves()
    assert leaves[0].mode == "profile" and leaves[1].source == "battery" and leaves[2].temperature == 0.05
    assert leaves[3].twr_margin == 1.5
    tune = optimize_config.from_dict(_flight_data(**TERMS), "electric.toml", kind="tune")
    assert tune.problem.objective.measure_names() == names
    # each term alone, weighted or bounded
    for name, options in TERMS.items():
        one = optimize_config.from_dict(_flight_data(**{name: {**options, "weight": 0.5}}), "one.toml")
        assert type(one.problem.objective.term) is type(ob.TERMS[name](**options))
    bounded = optimize_config.from_dict(_flight_data(peak_current={"weight": 0.0, "at_most": 20.0}), "b.toml")
    assert isinstance(bounded.problem.objective, ob.Constrained) and float(bounded.problem.objective.upper) == 20.0
    # a design-only problem takes the design terms (endurance in hover mode, payload capacity) ...
    static = optimize_config.from_dict(_design_data(endurance={}, payload_capacity={}), "static.toml")
    assert static.problem.design.flight is None and not static.problem.objective.needs_flight
    # ... and refuses the flight terms (endurance in profile mode needs a flight)
    for name in ("endurance", "energy", "peak_current"):
        with pytest.raises(ConfigError, match=rf"missing table `\[reference\]`: the objective term\(s\) {name} need "
                                              "a flight.*endurance, .*payload_capacity"):
            optimize_config.from_dict(_design_data(**{name: TERMS[name]}), "static.toml")


def test_sweep_reports_the_terms_as_columns(tmp_path):
    data = _flight_data(**TERMS)
    del data["parameters"]
    data["solver"] = {"kind": "euler", "adaptive": False, "dt": 0.005}  # one stage: the sweep compiles it unrolled
    data["sweep"] = {"kind": "grid", "metric": "objective.endurance",
                     "parameters": {"platform.parts.battery.capacity_mah": {"lower": 4000.0, "upper": 6000.0,
                                                                            "points": 2}}}
    conf = sweep_from_dict(data, "sweep.toml", check_memory=False)
    result = run_sweep(conf, tmp_path, progress=False, echo=lambda *_: None, figures=False)
    rows = result["rows"]
    cols = ["objective", "objective.endurance", "objective.battery_energy", "objective.peak_current",
            "objective.payload_capacity"]
    assert all(c in rows[0] for c in cols)
    header = (tmp_path / "sweep.csv").read_text().splitlines()[0].split(",")
    assert all(c in header for c in cols)
    payload = float(E.payload_capacity(conf.design.platform, 1.5))  # the nominal voltage's: not the capacity's
    for row in rows:
        assert row["objective.endurance"] == pytest.approx(row["endurance_profile_s"], rel=1e-12)
        assert row["objective.battery_energy"] == pytest.approx(row["energy_wh"], rel=1e-12)
        assert row["motor_current_peak"] <= row["objective.peak_current"] <= row["motor_current_peak"] + 0.5
        assert row["objective.payload_capacity"] == pytest.approx(payload, rel=1e-12)
        assert row["objective"] == pytest.approx(-row["objective.endurance"] + row["objective.battery_energy"]
                                                 + row["objective.peak_current"] - row["objective.payload_capacity"],
                                                 rel=1e-12)
    assert rows[1]["objective.endurance"] > rows[0]["objective.endurance"]  # the larger pack flies longer
    again = run_sweep(conf, tmp_path, progress=False, echo=lambda *_: None, figures=False)  # chunks reused
    assert again["chunks_skipped"] == 1
    assert again["rows"] == rows


# --------------------------------------------------------------------------- errors at load


def _without_battery(data: dict) -> dict:
    data = copy.deepcopy(data)
    del data["parts"]["battery"]
    return data


@pytest.mark.parametrize("name", list(TERMS))
def test_a_vehicle_without_a_battery_is_refused_at_load(name):
    # the flight terms: a first-order motor (an electric motor itself refuses the vehicle without a battery)
    data = _without_battery(_flight_data(**{name: TERMS[name]}))
    data["actuators"]["motor"] = {"kind": "first_order", "time_constant": 0.03}
    with pytest.raises(ConfigError, match=rf"\[objective.{name}\]: objective `{name}` reads .*platform "
                                          r"`nobattery` has no \[parts.battery\]. Fix: build the vehicle from "
                                          r"parts with \[parts.motor\] kv.*\[parts.battery\]"):
        optimize_config.from_dict(data, "nobattery.toml")
    if name in ("endurance", "payload_capacity"):  # the design terms, design-only
        with pytest.raises(ConfigError, match=rf"\[objective.{name}\]: .*has no \[parts.battery\]"):
            optimize_config.from_dict(_without_battery(_design_data(**{name: {}})), "nobattery.toml")


@pytest.mark.parametrize("name", ["endurance", "energy", "peak_current"])
def test_a_flight_without_an_electric_motor_is_refused_at_load(name):
    data = _flight_data(**{name: TERMS[name]})
    data["actuators"]["motor"] = {"kind": "first_order", "time_constant": 0.03}
    with pytest.raises(ConfigError, match=rf"\[objective.{name}\]: objective `{name}` reads .* but its motor "
                                          r"\(FirstOrderMotor\) draws no current from the battery. Fix: set "
                                          r"\[actuators.motor\] kind = \"electric\""):
        optimize_config.from_dict(data, "lag.toml")
    # the same check in the Python API: the term's check, run when the problem is built
    problem = optimize_config.from_dict(data | {"objective": {"tracking": {}}}, "lag.toml").problem
    term = ob.TERMS[name](**TERMS[name])
    with pytest.raises(ValueError, match="draws no current"):
        term.check(problem.design)
    with pytest.raises(ValueError, match="draws no current"):
        type(problem)(problem.design, problem.parameters, ob.Tracking() + term)


def test_a_sweep_refuses_a_term_the_vehicle_cannot_measure():
    data = _without_battery(_flight_data(payload_capacity={}))
    data["actuators"]["motor"] = {"kind": "first_order", "time_constant": 0.03}
    del data["parameters"]
    data["sweep"] = {"parameters": {"platform.arm_length": {"lower": 0.2, "upper": 0.3, "points": 2}}}
    with pytest.raises(ConfigError, match=r"\[objective.payload_capacity\]: .*has no \[parts.battery\]"):
        sweep_from_dict(data, "sweep.toml", check_memory=False)


# --------------------------------------------------------------------------- end to end


def test_optimize_with_endurance_raises_the_endurance():
    """A few Adam steps on the propeller diameter of the design-only problem: the diameter grows, so does the
    hover endurance (its gradient is positive there)."""
    data = _design_data(endurance={"weight": 1e-3})
    data["optimize"] = {"learning_rate": 0.1, "iterations": 4}
    conf = optimize_config.from_dict(data, "endurance.toml")
    result = conf.problem.minimize(conf.optimizer.build(), conf.options, progress=False)
    d0, d1 = result.initial_design.platform, result.design.platform
    assert float(d1.parts.propeller.diameter) > float(d0.parts.propeller.diameter)
    assert float(E.endurance_hover(d1)) > float(E.endurance_hover(d0))
    assert result.final_loss < result.initial_loss


def test_the_example_configuration_loads():
    conf = optimize_config.load(EXAMPLE)
    names = conf.problem.objective.measure_names()
    assert "endurance" in names and conf.problem.objective.needs_flight
