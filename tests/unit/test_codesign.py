"""Co-design (:mod:`jaxrotor.optimize.codesign`, :mod:`jaxrotor.io.design_config`, :mod:`jaxrotor.workflows.design`).

Checked against closed forms and invariants: the shipped design files parse to the problem they describe
(quick mode), a design is rebuilt from its parts (mass summed by hand, the battery and propeller families,
``c_f = c_t rho D^4 / (4 pi^2)``), the clearance of an X quad and a star hexarotor, the hover-tilt margin
against :func:`jaxrotor.allocation.hover_inputs`, the violation signs, the augmented-Lagrangian solver's
bookkeeping, the Latin hypercube, the ``best.toml`` round trip and the configuration errors (``jax.grad`` of a
mission loss against central differences for every continuous variable of both shipped files:
tests/integration/test_codesign_gradient.py).

Cost: the mission flights compile slowly, so every compiled function is built once per module (one solver
step).
"""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor.allocation import allocation_matrix, hover_inputs
from jaxrotor.design.catalogue import MOTORS, BatteryFamily, PropellerFamily
from jaxrotor.design.platform import geometric_rotor_positions
from jaxrotor.io.design_config import design_from_dict, load_design
from jaxrotor.io.toml import ConfigError, read_toml
from jaxrotor.optimize.codesign import (MEASURES, OBJECTIVES, VARIABLES, Constraint, _clearance, _hover_tilt_margin,
                                        latin_hypercube, solve)
from jaxrotor.workflows.design import design_table, write_toml

jax.config.update("jax_enable_x64", True)

ROOT = Path(__file__).resolve().parents[2]
QUAD = ROOT / "configs" / "design_endurance_quad.toml"
HEX = ROOT / "configs" / "design_fully_actuated_hex.toml"
FILES = {"quad": QUAD, "hex": HEX}


def _interdependent_hex() -> dict:
    """The hexarotor file with one interdependent cant ``tilt`` (``alpha_i = (-1)^i alpha_0``) instead of its
    per-rotor cants and azimuths, and the rotor-loss margin of the zero-moment hover: a symmetric star hexarotor."""
    d = read_toml(HEX)
    v = d["design"]["variables"]
    v.pop("tilt"), v.pop("azimuth")
    d["design"]["variables"] = {"tilt": {"lower": 5.0, "upper": 40.0, "start": 30.0}, **v}
    c = d["design"]["constraints"]
    c.pop("rotor_loss_axis")
    c["rotor_loss"] = {"at_least": 0.05, "scale": 0.1}
    return d


@pytest.fixture(scope="module")
def designs():
    """Both shipped design files, quick mode (parsed once per module), and the hexarotor with one interdependent
    cant (``hex_tilt``)."""
    out = {k: load_design(p, quick=True) for k, p in FILES.items()}
    out["hex_tilt"] = design_from_dict(_interdependent_hex(), str(HEX), quick=True)
    return out


@pytest.fixture(scope="module")
def quad(designs):
    return designs["quad"]


@pytest.fixture(scope="module")
def hexa(designs):
    return designs["hex_tilt"]


def _interior(problem, fractions) -> np.ndarray:
    """A design ``lo + (hi - lo) f`` (one fraction per variable)."""
    return problem.lower + (problem.upper - problem.lower) * np.asarray(fractions, float)


# --------------------------------------------------------------------------- parsing the shipped files


@pytest.mark.parametrize("which", ["quad", "hex"])
def test_shipped_design_files_parse(designs, which):
    """Variables (degrees -> radians for tilt/elevation), quick-mode motors, cells and members, constraints
    with their sense and scale: every value as written in the file."""
    conf, raw = designs[which], read_toml(FILES[which])
    d, q = raw["design"], raw["design"]["quick"]
    pr = conf.problem
    assert conf.settings.quick
    assert pr.objective == d["objective"]
    assert pr.motor_names == tuple(q["motors"])
    assert pr.cells == tuple(q["cells"])
    assert int(pr.keys.shape[0]) == q["members"]
    for name in pr.motor_names:
        assert name in MOTORS
    # stacked catalogue in the order of motor_names
    np.testing.assert_array_equal(np.asarray(pr.motors.kv), [MOTORS[n]["kv"] for n in pr.motor_names])
    expected = []  # (name, lower, upper, start) as written: a per-rotor table gives <name>_1 ... <name>_n
    for name, t in d["variables"].items():
        if t.get("per_rotor"):
            n = raw["platform"]["n"]
            per = [t[k] if isinstance(t[k], list) else [t[k]] * n for k in ("lower", "upper", "start")]
            expected += [(f"{name}_{i + 1}", *(math.radians(p[i]) for p in per)) for i in range(n)]
        else:
            conv = math.radians if name in ("tilt", "elevation", "dihedral") else float
            expected.append((name, conv(t["lower"]), conv(t["upper"]), conv(t["start"])))
    assert pr.names == tuple(e[0] for e in expected)
    for v, (_, lo, hi, start) in zip(pr.variables, expected):
        assert (v.lower, v.upper, v.start) == pytest.approx((lo, hi, start), rel=1e-15)
    assert [c.measure for c in pr.constraints] == list(d["constraints"])
    for c in pr.constraints:
        t = d["constraints"][c.measure]
        assert c.at_least == ("at_least" in t)
        assert c.bound == t["at_least" if c.at_least else "at_most"]
        assert c.scale == t.get("scale", max(abs(c.bound), 1e-3))
    np.testing.assert_array_equal(pr.bounds, [c.bound for c in pr.constraints])
    # quick mode: solver and Pareto settings, mission durations cut to the quick duration
    st = conf.settings
    assert st.iterations == q["iterations"] and st.rounds == q["rounds"]
    assert st.pareto_bounds == tuple(q["bounds"]) and st.pareto_iterations == q["pareto_iterations"]
    assert st.pareto_measure == d["pareto"]["measure"]
    assert len(conf.missions) == len(d["mission"]) == len(pr.flights)
    for (name, ref), m in zip(conf.missions, d["mission"]):
        assert name == m["name"]
        assert ref["duration"] == min(m["duration"], q["duration"])
    assert pr.flights_per_design == len(pr.flights) * q["members"]


def test_shipped_files_specifics(designs):
    """The values the design documentation quotes (per-rotor cants and azimuths in radians, the hexarotor's hover
    tilt, its rotor-loss constraint the analysis' own rule)."""
    q, h = designs["quad"].problem, designs["hex"].problem
    assert q.objective == "mass" and OBJECTIVES[q.objective] == -1
    assert h.objective == "endurance" and OBJECTIVES[h.objective] == 1
    assert "tilt" not in q.names and "tilt" not in h.names
    t = read_toml(HEX)["design"]["variables"]["tilt"]  # written in degrees, one per rotor
    for i in range(6):
        tilt = h.variables[h.names.index(f"tilt_{i + 1}")]
        assert (tilt.lower, tilt.upper, tilt.start) == pytest.approx(
            (t["lower"][i] * math.pi / 180, t["upper"][i] * math.pi / 180, t["start"][i] * math.pi / 180), rel=1e-15)
        az = h.variables[h.names.index(f"azimuth_{i + 1}")]
        assert az.lower < az.start < az.upper
    assert h.hover_tilt_deg == read_toml(HEX)["design"]["hover_tilt"]
    sense = {c.measure: c.at_least for c in h.constraints}
    assert "rotor_loss" not in sense
    assert sense["hover_tilt"] and sense["rotor_loss_axis"] and sense["clearance"] and sense["stability_margin"]
    assert not sense["tracking"] and not sense["attitude"] and not sense["battery_current"]
    assert {c.measure: c.at_least for c in q.constraints}["endurance"]


def test_full_mode_keeps_the_full_catalogue():
    conf = load_design(QUAD, quick=False)
    raw = read_toml(QUAD)["design"]
    assert conf.problem.motor_names == tuple(raw["motors"])
    assert conf.problem.cells == tuple(raw["cells"])
    assert int(conf.problem.keys.shape[0]) == raw["randomize"]["members"]
    assert conf.settings.iterations == raw["optimize"]["iterations"] and not conf.settings.quick


# --------------------------------------------------------------------------- the design from its parts


def _hand_mass(problem, x, motor: str, cells: int) -> tuple[float, dict]:
    """Total mass summed by hand: hub, arms (mass_per_length x (arm length - hub radius); with the tube variable
    1550 pi (D t - t^2) kg/m, t = 1 mm), motors, propellers (m_ref (D / D_ref)^3), battery (cells C s_m),
    payload."""
    raw = read_toml(QUAD)
    parts = raw["parts"]
    v = dict(zip(problem.names, np.asarray(x, float)))
    n = raw["platform"]["n"]
    fam_p, fam_b = problem.propellers, problem.batteries
    r_hub = parts["hub"]["radius"]
    D_arm = v.get("arm_tube_diameter")
    per_m = parts["arm"]["mass_per_length"] if D_arm is None else 1550.0 * math.pi * (D_arm * 1e-3 - 1e-6)
    items = {
        "hub": parts["hub"]["mass"],
        "arms": n * per_m * (v["arm_length"] - r_hub),
        "motors": n * MOTORS[motor]["mass"],
        "propellers": n * fam_p.mass_ref * (v["propeller_diameter"] / fam_p.diameter_ref) ** 3,
        "battery": cells * v["battery_capacity"] * fam_b.specific_mass,
        "payload": parts["payload"]["mass"],
    }
    return sum(items.values()), items


@pytest.mark.parametrize("fractions, motor_index", [(None, 0), ((0.7, 0.4, 0.3, 0.6, 0.45), 1)])
def test_build_reproduces_the_parts(quad, fractions, motor_index):
    pr = quad.problem
    x = pr.start if fractions is None else _interior(pr, fractions)
    cells = pr.cells[0]
    motor = pr.motor_names[motor_index]
    platform, controller = pr.build(jnp.asarray(x), motor_index, cells)
    v = dict(zip(pr.names, x))
    total, items = _hand_mass(pr, x, motor, cells)
    assert float(platform.mass) == pytest.approx(total, rel=1e-12)
    bd = platform.mass_properties().breakdown
    for k, m in items.items():
        assert float(bd[k]) == pytest.approx(m, rel=1e-12), k
    # geometry
    np.testing.assert_allclose(np.asarray(platform.arm_length), v["arm_length"], rtol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(geometric_rotor_positions(platform)), axis=1),
                               v["arm_length"], rtol=1e-13)
    parts = platform.parts
    # the catalogue motor
    for k, val in MOTORS[motor].items():
        assert float(getattr(parts.motor, k)) == val, k
    # the battery family: mass, resistance, capacity, cells, extents; offset kept from the base file
    C = v["battery_capacity"]
    b, fb = parts.battery, pr.batteries
    assert fb == BatteryFamily()  # the file keeps the documented family
    m_b = cells * C * fb.specific_mass
    assert b.cells == cells
    assert float(b.capacity_mah) == pytest.approx(C, rel=1e-15)
    assert float(b.mass) == pytest.approx(m_b, rel=1e-14)
    assert float(b.internal_resistance) == pytest.approx(cells * fb.cell_resistance / C, rel=1e-14)
    np.testing.assert_allclose(np.asarray(b.size), np.array(fb.size_ref) * (m_b / fb.mass_ref) ** (1 / 3), rtol=1e-13)
    np.testing.assert_array_equal(np.asarray(b.offset), read_toml(QUAD)["parts"]["battery"]["offset"])
    # the propeller family and the thrust / drag coefficients
    D, P = v["propeller_diameter"], v["propeller_pitch"]
    fp = pr.propellers
    assert fp == PropellerFamily()
    c_t = fp.c_t_per_pitch_ratio * P / D
    c_p = fp.profile_power + fp.induced_factor * c_t**1.5 / math.sqrt(math.pi / 2)
    assert float(parts.propeller.c_t) == pytest.approx(c_t, rel=1e-14)
    assert float(parts.propeller.c_p) == pytest.approx(c_p, rel=1e-14)
    rho = float(parts.air_density)
    assert rho == 1.225
    np.testing.assert_allclose(np.asarray(platform.c_f), c_t * rho * D**4 / (4 * math.pi**2), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(platform.c_tau), c_p * rho * D**5 / (8 * math.pi**3), rtol=1e-13)
    # the auto gains are finite and positive
    for g in ("K_p", "K_v", "K_R", "K_w"):
        assert np.all(np.isfinite(np.asarray(getattr(controller, g))))
        assert np.all(np.asarray(getattr(controller, g)) > 0)


def test_build_sets_the_hexarotor_tilt(hexa):
    pr = hexa.problem
    x = _interior(pr, (0.8, 0.4, 0.5, 0.5, 0.3))
    platform, _ = pr.build(jnp.asarray(x), 1, pr.cells[0])
    v = dict(zip(pr.names, x))
    assert float(platform.alpha) == pytest.approx(v["tilt"], rel=1e-15)
    # interdependent cant: alpha_i = (-1)^i alpha_0 (alternating signs of the base file)
    np.testing.assert_array_equal(np.asarray(platform.alpha_sign), np.asarray(pr.platform.alpha_sign))
    np.testing.assert_allclose(np.asarray(platform.arm_length), v["arm_length"], rtol=1e-15)


# --------------------------------------------------------------------------- clearance and hover-tilt margin


@pytest.mark.parametrize("arm, D", [(0.25, 0.254),   # the disc-hub gap binds
                                    (0.40, 0.40),    # the disc-hub gap binds
                                    (0.18, 0.35)])   # neighbouring discs bind (overlap)
def test_clearance_x_quad(quad, arm, D):
    pr = quad.problem
    x = pr.start.copy()
    x[pr.names.index("arm_length")] = arm
    x[pr.names.index("propeller_diameter")] = D
    platform, _ = pr.build(jnp.asarray(x), 0, pr.cells[0])
    r_hub = float(platform.parts.hub.radius)
    expected = min(arm * math.sqrt(2) - D, arm - D / 2 - r_hub)
    assert float(_clearance(platform)) == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("arm, D", [(0.35, 0.254), (0.30, 0.40), (0.25, 0.18)])
def test_clearance_star_hexarotor(hexa, arm, D):
    """Neighbouring hubs of a star hexarotor are one arm length apart; the cant does not move the hubs."""
    pr = hexa.problem
    x = pr.start.copy()
    x[pr.names.index("arm_length")] = arm
    x[pr.names.index("propeller_diameter")] = D
    r_hub = float(pr.platform.parts.hub.radius)
    expected = min(arm - D, arm - D / 2 - r_hub)
    for tilt in (0.1, 0.5):
        x[pr.names.index("tilt")] = tilt
        platform, _ = pr.build(jnp.asarray(x), 0, pr.cells[0])
        assert float(_clearance(platform)) == pytest.approx(expected, rel=1e-12, abs=1e-14)


def _margin_reference(platform, tilt):
    """``min_i min(u_max - u_i, u_i - u_min) / u_max`` over level and roll/pitch +-tilt, numpy pseudo-inverse."""
    G = np.asarray(allocation_matrix(platform))
    mg = float(platform.mass * platform.gravity)
    umax, umin = np.asarray(platform.u_max), np.asarray(platform.u_min)
    s, c = math.sin(tilt), math.cos(tilt)
    worst = np.inf
    for up in ([0, 0, 1], [s, 0, c], [-s, 0, c], [0, s, c], [0, -s, c]):
        u = np.linalg.pinv(G) @ np.concatenate([mg * np.asarray(up, float), np.zeros(3)])
        worst = min(worst, float(np.min(np.minimum(umax - u, u - umin) / umax)))
    return worst


@pytest.mark.parametrize("which", ["quad", "hex_tilt"])
def test_hover_tilt_margin(designs, which):
    pr = designs[which].problem
    platform, _ = pr.build(jnp.asarray(pr.start), 0, pr.cells[0])
    u_h = np.asarray(hover_inputs(platform))
    umax, umin = np.asarray(platform.u_max), np.asarray(platform.u_min)
    assert np.all(np.isfinite(umax)) and np.all(u_h > 0)
    level = float(np.min(np.minimum(umax - u_h, u_h - umin) / umax))
    assert float(_hover_tilt_margin(platform, 0.0)) == pytest.approx(level, rel=1e-10)
    # symmetric vehicle, level hover: every rotor carries m g / (n c_f cos alpha) (the cant tilts each thrust)
    alpha = float(jnp.abs(platform.alpha)) if jnp.ndim(platform.alpha) == 0 else 0.0
    np.testing.assert_allclose(u_h, float(platform.weight) / (len(u_h) * np.asarray(platform.c_f) * math.cos(alpha)),
                               rtol=1e-9)
    tilt = math.radians(pr.hover_tilt_deg)
    m_tilt = float(_hover_tilt_margin(platform, tilt))
    assert m_tilt == pytest.approx(_margin_reference(platform, tilt), rel=1e-9)
    assert m_tilt <= level + 1e-15  # the level hover is one of the attitudes checked


# --------------------------------------------------------------------------- gradient check


def _without(problem, measures):
    """``problem`` without the constraints on ``measures`` (they are then not computed)."""
    return dataclasses.replace(problem, constraints=tuple(c for c in problem.constraints if c.measure not in measures))


# --------------------------------------------------------------------------- violations


def test_violation_signs(quad):
    """``g_k <= 0`` is satisfied: ``(bound - value) / scale`` for at_least, ``(value - bound) / scale`` for at_most."""
    cons = (Constraint("endurance", 600.0, True, 600.0), Constraint("thrust_to_weight", 2.0, True, 2.0),
            Constraint("tracking", 0.05, False, 0.05), Constraint("stability_margin", 0.3, True, 0.3),
            Constraint("clearance", 0.01, True, 0.05), Constraint("battery_current", 1.0, False, 1.0))
    pr = dataclasses.replace(quad.problem, constraints=cons)
    want = {"endurance": (700.0, (600.0 - 700.0) / 600.0),      # at_least, above the bound: satisfied
            "thrust_to_weight": (1.5, (2.0 - 1.5) / 2.0),        # at_least, below: violated
            "tracking": (0.04, (0.04 - 0.05) / 0.05),            # at_most, below: satisfied
            "stability_margin": (0.3, 0.0),                      # on the bound
            "clearance": (0.0, (0.01 - 0.0) / 0.05),             # at_least, its own scale
            "battery_current": (1.5, (1.5 - 1.0) / 1.0)}         # at_most, above: violated
    m = {k: jnp.asarray(v[0]) for k, v in want.items()}
    m["mass"] = jnp.asarray(1.0)
    np.testing.assert_array_equal(pr.bounds, [c.bound for c in cons])
    g = np.asarray(pr.violations(m, jnp.asarray(pr.bounds)))
    np.testing.assert_allclose(g, [want[c.measure][1] for c in cons], rtol=1e-14, atol=1e-15)
    assert list(g > 0) == [False, True, False, False, True, True]
    # other bounds (the Pareto sweep's): tightening an at_least bound raises its violation by delta / scale
    b2 = pr.bounds.copy()
    b2[0] = 760.0
    g2 = np.asarray(pr.violations(m, jnp.asarray(b2)))
    assert g2[0] == pytest.approx((760.0 - 700.0) / 600.0, rel=1e-14) and g2[0] > 0
    np.testing.assert_array_equal(g2[1:], g[1:])
    # the shipped file's constraints follow the same convention
    q = quad.problem
    at = {c.measure: c for c in q.constraints}
    for c in q.constraints:
        mm = {k: jnp.asarray(at[k].bound) for k in at} | {"mass": jnp.asarray(1.0)}
        mm[c.measure] = jnp.asarray(c.bound + c.scale)  # above the bound by one scale
        gq = np.asarray(q.violations(mm, jnp.asarray(q.bounds)))
        k = q.constraints.index(c)
        assert gq[k] == pytest.approx(-1.0 if c.at_least else 1.0, rel=1e-12)
        np.testing.assert_array_equal(np.delete(gq, k), 0.0)
    assert float(q.objective_value(m)) == float(m[q.objective])


def test_violations_without_constraints(quad):
    pr = dataclasses.replace(quad.problem, constraints=())
    g = pr.violations({"mass": jnp.asarray(1.0)}, jnp.zeros((0,)))
    assert g.shape == (0,)


# --------------------------------------------------------------------------- the solver


def _loose(c) -> float:
    """A bound no design in the box violates (every iterate whose flights do not diverge is feasible)."""
    if c.at_least:
        return -1e6
    return 9.0 if MEASURES[c.measure][1] else 1e6  # a diverged member's error is 10


@pytest.fixture(scope="module")
def static_quad(quad):
    """The quick quad with its constraints that need no flight and no linearisation (a compiled solver step with
    the mission flights and the stability margin takes about 110 s on 2 cores; the flights' gradients are
    checked above)."""
    return _without(quad.problem, {"stability_margin"} | {k for k, (_, flies) in MEASURES.items() if flies})


@pytest.fixture(scope="module")
def solved(static_quad):
    """Solved twice on one compiled step: the file's bounds, and loose bounds."""
    pr = static_quad
    loose = np.array([_loose(c) for c in pr.constraints])
    r = solve(pr, iterations=4, rounds=2)
    r_loose = solve(pr, iterations=4, rounds=2, bounds=loose)
    return r, r_loose, loose


def _check_result(pr, r, bounds):
    M, d = len(pr.motor_names) * len(pr.cells), len(pr.variables)
    assert r.candidates == [(m, c) for c in pr.cells for m in pr.motor_names]
    assert r.x.shape == (M, d) and r.theta.shape == (M, d)
    assert r.feasible.shape == (M,) and r.feasible.dtype == bool
    assert r.objective.shape == (M,)
    assert len(r.measures) == M
    # 4 iterations in 2 rounds: 2 Adam steps per round, every candidate evaluated at every step
    assert r.evaluations == 4 * M
    assert [e for e, _ in r.history] == [M * k for k in range(1, 5)]
    assert np.all(r.x >= pr.lower) and np.all(r.x <= pr.upper)
    assert r.wall_s > 0
    # the best feasible objective never gets worse (mass: minimised); NaN only before the first feasible design
    best = np.array([b for _, b in r.history], float)
    seen = np.nonzero(~np.isnan(best))[0]
    if seen.size:
        assert np.all(~np.isnan(best[seen[0]:]))
        assert np.all(np.diff(best[seen[0]:]) <= 0.0)
        assert best[-1] == pytest.approx(np.nanmin(r.objective), rel=1e-15)
    else:
        assert not r.feasible.any()
    for i in range(M):
        m = r.measures[i]
        assert set(m) >= {c.measure for c in pr.constraints} | {"mass", "endurance", "diverged"}
        # the measures belong to the reported design
        motor_index = pr.motor_names.index(r.candidates[i][0])
        platform, _ = pr.build(jnp.asarray(r.x[i]), motor_index, r.candidates[i][1])
        assert m["mass"] == pytest.approx(float(platform.mass), rel=1e-12)
        g = np.asarray(pr.violations({k: jnp.asarray(v) for k, v in m.items()}, jnp.asarray(bounds)))
        if r.feasible[i]:
            assert np.all(g <= 0.0), dict(zip([c.measure for c in pr.constraints], g))
            assert m["diverged"] == 0.0
            assert r.objective[i] == m[pr.objective]
        else:
            assert np.isnan(r.objective[i])
            assert np.any(g > 0.0) or m["diverged"] > 0


def test_solve_bookkeeping(static_quad, solved):
    r, _, _ = solved
    pr = static_quad
    assert len(pr.constraints) >= 3 and pr.flights_per_design == 0
    _check_result(pr, r, pr.bounds)


def test_solve_with_loose_bounds_improves_on_the_start(static_quad, solved):
    """With every constraint slack the first step's best is the lightest catalogue motor at the start, and the
    descent then lowers the mass."""
    pr = static_quad
    _, r, loose = solved
    _check_result(pr, r, loose)
    assert r.feasible.all()
    start_masses = [float(pr.build(jnp.asarray(pr.start), j, pr.cells[0])[0].mass) for j in range(len(pr.motor_names))]
    assert r.history[0][1] == pytest.approx(min(start_masses), rel=1e-12)
    assert r.history[-1][1] < r.history[0][1]
    for i in range(len(r.candidates)):
        assert r.objective[i] <= start_masses[i] * (1 + 1e-12)


# --------------------------------------------------------------------------- Latin hypercube


@pytest.mark.parametrize("n, d, seed", [(1, 3, 0), (7, 3, 0), (16, 5, 3), (50, 2, 11)])
def test_latin_hypercube_strata(n, d, seed):
    u = latin_hypercube(n, d, seed)
    assert u.shape == (n, d)
    assert np.all(u >= 0.0) and np.all(u < 1.0)
    for k in range(d):
        strata = np.floor(u[:, k] * n).astype(int)
        np.testing.assert_array_equal(np.sort(strata), np.arange(n))
    np.testing.assert_array_equal(u, latin_hypercube(n, d, seed))
    if n > 1:
        assert not np.array_equal(u, latin_hypercube(n, d, seed + 1))


# --------------------------------------------------------------------------- best.toml round trip


def _leaves_close(a, b, rtol=1e-9):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x, float), np.asarray(y, float), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("which, fractions", [("quad", (0.3, 0.5, 0.6, 0.45, 0.7)),
                                              ("hex_tilt", (0.65, 0.2, 0.55, 0.4, 0.8))])
def test_design_table_round_trip(designs, tmp_path, which, fractions):
    from jaxrotor.io.platform_table import load_platform

    conf = designs[which]
    pr = conf.problem
    x = _interior(pr, fractions)
    motor_index, cells = 1, pr.cells[0]
    table = design_table(conf, x, pr.motor_names[motor_index], cells, f"{which}_rt")
    path = tmp_path / "best.toml"
    text = write_toml(table, path, header="round trip\nsecond line")
    assert path.read_text() == text and text.startswith("# round trip\n# second line\n")
    loaded = load_platform(path)
    built, _ = pr.build(jnp.asarray(x), motor_index, cells)
    for field in ("mass", "arm_length", "alpha", "delta", "c_f", "c_tau", "inertia", "com_offset", "rotor_inertia",
                  "rotor_speed_max"):
        np.testing.assert_allclose(np.asarray(getattr(loaded, field)), np.asarray(getattr(built, field)),
                                   rtol=1e-9, atol=1e-12, err_msg=field)
    for part in ("hub", "arm", "motor", "propeller", "payload"):
        _leaves_close(getattr(loaded.parts, part), getattr(built.parts, part))
    lb, bb = loaded.parts.battery, built.parts.battery
    assert lb.cells == bb.cells == cells
    for field in ("mass", "size", "offset", "capacity_mah", "internal_resistance", "soc0", "soc_floor"):
        np.testing.assert_allclose(np.asarray(getattr(lb, field)), np.asarray(getattr(bb, field)), rtol=1e-9,
                                   err_msg=field)
    # the design's own entries as written
    t = read_toml(path)
    assert t["parts"]["motor"] == MOTORS[pr.motor_names[motor_index]]
    assert t["reference"] == conf.missions[0][1]
    assert "design" not in t and t["name"] == f"{which}_rt"


def test_design_table_flight_config_round_trip(quad, tmp_path):
    """``best.toml`` as a whole flight configuration: the vehicle and the auto gains of the design."""
    from jaxrotor.io.config import load

    pr = quad.problem
    x = _interior(pr, (0.55, 0.3, 0.35, 0.6, 0.25))
    path = tmp_path / "best.toml"
    write_toml(design_table(quad, x, pr.motor_names[0], pr.cells[0], "quad_best"), path)
    conf = load(path)
    built, controller = pr.build(jnp.asarray(x), 0, pr.cells[0])
    assert float(conf.platform.mass) == pytest.approx(float(built.mass), rel=1e-9)
    np.testing.assert_allclose(np.asarray(conf.platform.inertia), np.asarray(built.inertia), rtol=1e-9, atol=1e-14)
    for g in ("K_p", "K_v", "K_R", "K_w"):
        np.testing.assert_allclose(np.asarray(getattr(conf.controller, g)), np.asarray(getattr(controller, g)),
                                   rtol=1e-6, err_msg=g)


# --------------------------------------------------------------------------- configuration errors


def _raw():
    return copy.deepcopy(read_toml(QUAD))


def _error(data) -> str:
    with pytest.raises(ConfigError) as err:
        design_from_dict(data, "x.toml", quick=True)
    msg = str(err.value)
    assert msg.startswith("x.toml")
    return msg


def test_unknown_variable():
    d = _raw()
    d["design"]["variables"]["wingspan"] = {"lower": 0.1, "upper": 0.2}
    msg = _error(d)
    assert "design.variables.wingspan" in msg
    for name in VARIABLES:
        assert name in msg


def test_constraint_with_both_bounds():
    d = _raw()
    d["design"]["constraints"]["tracking"] = {"at_least": 0.0, "at_most": 0.05}
    msg = _error(d)
    assert "design.constraints.tracking" in msg and "at_least" in msg and "at_most" in msg


def test_constraint_with_no_bound():
    d = _raw()
    d["design"]["constraints"]["tracking"] = {"scale": 0.05}
    msg = _error(d)
    assert "design.constraints.tracking" in msg and "at_least" in msg and "at_most" in msg


def test_unknown_measure():
    d = _raw()
    d["design"]["constraints"]["noise"] = {"at_most": 60.0}
    msg = _error(d)
    assert "design.constraints.noise" in msg
    for name in MEASURES:
        assert name in msg


@pytest.mark.parametrize("where", ["design", "quick"])
def test_unknown_motor(where):
    d = _raw()
    table = d["design"] if where == "design" else d["design"]["quick"]
    table["motors"] = ["2216_880kv", "9999_1kv"]
    if where == "design":
        d["design"]["quick"].pop("motors")  # quick mode would replace the list
    msg = _error(d)
    assert "design.motors" in msg and "9999_1kv" in msg


@pytest.mark.parametrize("mission", [[], None])
def test_empty_mission(mission):
    d = _raw()
    if mission is None:
        d["design"].pop("mission")
    else:
        d["design"]["mission"] = mission
    msg = _error(d)
    assert "design.mission" in msg


def test_pareto_measure_that_is_not_a_constraint():
    d = _raw()
    d["design"]["pareto"]["measure"] = "payload"
    msg = _error(d)
    assert "design.pareto.measure" in msg and "payload" in msg


def test_pareto_needs_two_bounds():
    d = _raw()
    d["design"]["quick"]["bounds"] = [600.0]
    msg = _error(d)
    assert "design.pareto.bounds" in msg


def test_variable_bounds_and_start():
    d = _raw()
    d["design"]["variables"]["arm_length"] = {"lower": 0.3, "upper": 0.2}
    assert "design.variables.arm_length.upper" in _error(d)
    d = _raw()
    d["design"]["variables"]["arm_length"] = {"lower": 0.2, "upper": 0.3, "start": 0.5}
    assert "design.variables.arm_length.start" in _error(d)


def test_solver_tightening_and_loss_settle_settings():
    """``[design.optimize] tighten`` and ``[design.verify] loss_settle`` reach the settings as written (defaults 1e-3
    and 3 s); a negative tightening is refused by name, by the file and by ``solve``."""
    from jaxrotor.optimize.codesign import TIGHTEN

    conf = design_from_dict(_raw(), "x.toml", quick=True)
    assert conf.settings.tighten == TIGHTEN == 1e-3 and conf.settings.loss_settle == 3.0
    hexa = load_design(HEX, quick=True)
    raw = read_toml(HEX)["design"]
    assert hexa.settings.tighten == raw["optimize"]["tighten"] and hexa.settings.rho == raw["optimize"]["rho"]
    assert hexa.settings.loss_settle == raw["verify"]["loss_settle"]
    d = _raw()
    d["design"].setdefault("optimize", {})["tighten"] = -0.1
    assert "design.optimize.tighten" in _error(d)
    with pytest.raises(ValueError, match="tighten"):
        solve(conf.problem, iterations=1, rounds=1, tighten=-1.0)


def test_unknown_quick_key():
    d = _raw()
    d["design"]["quick"]["wingspan"] = 0.1
    assert "design.quick.wingspan" in _error(d)


# --------------------------------------------------------------------------- the dihedral and the tilted-hover loss


def test_dihedral_variable_and_the_tilted_hover_loss_measure(tmp_path):
    """A ``dihedral`` variable (degrees in the file) sets ``beta_0`` of every rotor, is written to ``best.toml`` as
    ``beta_deg`` and read back; the ``rotor_loss_axis`` measure is :func:`rotor_loss_axis_margin` of the built vehicle
    and its gradient in the dihedral matches central differences."""
    from jaxrotor.analysis import rotor_loss_axis_margin
    from jaxrotor.io.platform_table import load_platform

    d = read_toml(HEX)
    d["platform"]["beta_deg"] = 20.0
    d["design"]["variables"]["dihedral"] = {"lower": 0.0, "upper": 40.0, "start": 20.0}
    d["design"]["constraints"] = {"rotor_loss_axis": {"at_least": 0.1, "scale": 0.1}}
    d["design"].pop("pareto")
    conf = design_from_dict(d, str(HEX), quick=True)
    pr = conf.problem
    assert "dihedral" in pr.names
    k = pr.names.index("dihedral")
    assert pr.lower[k] == 0.0 and pr.upper[k] == pytest.approx(math.radians(40.0), rel=1e-15)
    x = pr.start.copy()
    x[k] = math.radians(30.0)
    platform, _ = pr.build(jnp.asarray(x), 0, pr.cells[0])
    np.testing.assert_allclose(np.asarray(platform.beta) * np.asarray(platform.beta_sign), math.radians(30.0),
                               rtol=1e-15)
    m = jax.jit(lambda x: pr.measures(x, 0, pr.cells[0]))(jnp.asarray(x))
    # two programs (the platform built inside one, given to the other): equal to rounding
    assert float(m["rotor_loss_axis"]) == pytest.approx(float(jax.jit(rotor_loss_axis_margin)(platform)), rel=1e-12)
    table = design_table(conf, x, pr.motor_names[0], pr.cells[0], "dihedral_rt")
    assert table["platform"]["beta_deg"] == pytest.approx(30.0, rel=1e-14)
    path = tmp_path / "best.toml"
    write_toml(table, path)
    loaded = load_platform(path)
    np.testing.assert_allclose(np.asarray(loaded.beta), np.asarray(platform.beta), rtol=1e-12)
    f = jax.jit(lambda b: pr.measures(jnp.asarray(x).at[k].set(b), 0, pr.cells[0],  # noqa: E731
                                      frozenset({"rotor_loss_axis"}))["rotor_loss_axis"])
    h = 1e-6
    fd = (float(f(x[k] + h)) - float(f(x[k] - h))) / (2 * h)
    assert float(jax.grad(f)(jnp.asarray(x[k]))) == pytest.approx(fd, rel=1e-4, abs=1e-7)


def _per_rotor_hex(**variables):
    """The hexarotor file with its interdependent ``tilt`` replaced by ``variables`` (tables by angle)."""
    d = read_toml(HEX)
    d["design"]["variables"].pop("tilt"), d["design"]["variables"].pop("azimuth")
    d["design"]["variables"].update(copy.deepcopy(variables))
    d["design"].pop("pareto")
    return d


def test_per_rotor_tilt_and_azimuth_variables(tmp_path):
    """``per_rotor = true`` makes ``tilt_i`` / ``azimuth_i`` (rotor i = 1..n, degrees in the file, one bound for all or
    a list) that set ``alpha_i`` (no sign pattern) and ``gamma_i`` of the built vehicle, the rest as the platform has
    them; hub positions and spin axes follow eqs. (3)-(4) by hand; ``best.toml`` writes them as ``alpha_deg`` /
    ``gamma_deg`` lists and reads back the same rotors; ``jax.grad`` of the hover-tilt and rotor-loss measures in
    every per-rotor variable matches central differences."""
    from jaxrotor.design.platform import rotor_axes
    from jaxrotor.io.platform_table import load_platform

    g0 = [60.0 * i for i in range(6)]
    d = _per_rotor_hex(tilt={"per_rotor": True, "lower": -50.0, "upper": 50.0},
                       azimuth={"per_rotor": True, "rotors": [2, 5], "lower": [g - 20 for g in g0],
                                "upper": [g + 20 for g in g0], "start": [g + 5 for g in g0]})
    pr = design_from_dict(d, str(HEX), quick=True).problem
    tilt0 = read_toml(HEX)["platform"]["alpha_deg"]
    assert pr.names[-8:] == tuple(f"tilt_{i}" for i in range(1, 7)) + ("azimuth_2", "azimuth_5")
    k = {n: j for j, n in enumerate(pr.names)}
    # the default start is the platform's own per-rotor angles: alpha_i = (-1)^i alpha_0 (alternating)
    np.testing.assert_allclose([pr.start[k[f"tilt_{i}"]] for i in range(1, 7)],
                               [math.radians(tilt0) * (-1) ** i for i in range(1, 7)], rtol=1e-15)
    assert pr.start[k["azimuth_5"]] == pytest.approx(math.radians(245.0), rel=1e-15)
    assert pr.lower[k["azimuth_2"]] == pytest.approx(math.radians(40.0), rel=1e-15)
    x = pr.start.copy()
    alpha = np.radians([20.0, -15.0, 30.0, -25.0, 40.0, -35.0])
    for i in range(6):
        x[k[f"tilt_{i + 1}"]] = alpha[i]
    x[k["azimuth_2"]], x[k["azimuth_5"]] = math.radians(50.0), math.radians(250.0)
    platform, _ = pr.build(jnp.asarray(x), 0, pr.cells[0])
    gamma = np.radians([0.0, 50.0, 120.0, 180.0, 250.0, 300.0])
    L = x[k["arm_length"]]
    np.testing.assert_allclose(np.asarray(geometric_rotor_positions(platform)),
                               L * np.stack([np.cos(gamma), np.sin(gamma), np.zeros(6)], 1), atol=1e-15)
    # eq. (4) with beta = 0: z_i = R_z(gamma_i) R_x(alpha_i) z_B = (sin g sin a, -cos g sin a, cos a)
    hand = np.stack([np.sin(gamma) * np.sin(alpha), -np.cos(gamma) * np.sin(alpha), np.cos(alpha)], 1)
    np.testing.assert_allclose(np.asarray(rotor_axes(platform)), hand, atol=1e-15)
    table = design_table(pr_conf := design_from_dict(d, str(HEX), quick=True), x, pr.motor_names[0], pr.cells[0], "pr")
    assert pr_conf.problem.names == pr.names
    assert table["platform"]["alpha_deg"] == pytest.approx(np.degrees(alpha).tolist(), rel=1e-14)
    assert table["platform"]["gamma_deg"] == pytest.approx(np.degrees(gamma).tolist(), abs=1e-12)
    assert "alpha_sign" not in table["platform"]
    write_toml(table, tmp_path / "best.toml")
    loaded = load_platform(tmp_path / "best.toml")
    np.testing.assert_allclose(np.asarray(rotor_axes(loaded)), hand, atol=1e-13)
    np.testing.assert_allclose(np.asarray(geometric_rotor_positions(loaded)),
                               np.asarray(geometric_rotor_positions(platform)), atol=1e-13)
    # the gradients of the two static measures in every per-rotor variable, against central differences
    need = frozenset({"hover_tilt", "rotor_loss_axis"})
    idx = [k[n] for n in pr.names if n.startswith(("tilt_", "azimuth_"))]

    def f(z):
        m = pr.measures(jnp.asarray(x).at[jnp.asarray(idx)].set(z), 0, pr.cells[0], need)
        return m["hover_tilt"] + m["rotor_loss_axis"]

    z0 = jnp.asarray(x[idx])
    fj = jax.jit(f)  # compiled once for the sixteen differences
    g = np.asarray(jax.jit(jax.grad(f))(z0))
    h = 1e-6
    fd = np.array([(float(fj(z0.at[j].add(h))) - float(fj(z0.at[j].add(-h)))) / (2 * h) for j in range(len(idx))])
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-6)
    assert np.count_nonzero(np.abs(fd) > 1e-3) >= 4  # the measures do move with the per-rotor angles


def test_per_rotor_variable_errors():
    """A per-rotor azimuth without ``per_rotor = true``, a rotor out of range, a start list of the wrong length, an
    azimuth on a layout that places its own arms, and ``tilt`` with ``tilt_i`` are refused by name."""
    from jaxrotor.optimize.codesign import CodesignProblem, Variable

    def error(d):
        with pytest.raises(ConfigError) as err:
            design_from_dict(d, "x.toml", quick=True)
        return str(err.value)

    assert "per_rotor" in error(_per_rotor_hex(azimuth={"lower": 0.0, "upper": 10.0}))
    assert "design.variables.tilt.rotors" in error(_per_rotor_hex(tilt={"per_rotor": True, "lower": -5.0,
                                                                         "upper": 5.0, "rotors": [0, 7]}))
    assert "design.variables.tilt.start" in error(_per_rotor_hex(tilt={"per_rotor": True, "lower": -50.0,
                                                                        "upper": 50.0, "start": [1.0, 2.0]}))
    d = _per_rotor_hex(azimuth={"per_rotor": True, "lower": -400.0, "upper": 400.0})
    d["platform"]["layout"] = "x"
    assert "layout" in error(d)
    pr = load_design(HEX, quick=True).problem
    both = pr.variables + (Variable("tilt_2", -0.5, 0.5, 0.0),)
    with pytest.raises(ValueError, match="tilt_2"):
        CodesignProblem(**{f.name: getattr(pr, f.name) for f in dataclasses.fields(pr)} | {"variables": both})
    far = tuple(v for v in pr.variables if v.name != "tilt") + (Variable("tilt_7", -0.5, 0.5, 0.0),)
    with pytest.raises(ValueError, match="rotor 7"):
        CodesignProblem(**{f.name: getattr(pr, f.name) for f in dataclasses.fields(pr)} | {"variables": far})


def test_arm_tube_variable_and_the_deflection_measure(tmp_path):
    """``arm_tube_diameter`` makes every arm the family's tube (radius D/2, mass rho pi (D t - t^2) per metre, so the
    vehicle's mass moves by n (L - hub radius) times that), ``best.toml`` carries it as ``[parts.arm]``, ``arm_deflection`` is
    F L^2 / (3 E I) with the rotor's full thrust and the free length (arm minus hub radius), and its gradient in the
    diameter matches central differences; a lower bound at or under twice the wall is refused by name."""
    from jaxrotor.design.catalogue import ArmTubeFamily
    from jaxrotor.io.platform_table import load_platform

    d = read_toml(QUAD)
    d["design"]["variables"]["arm_tube_diameter"] = {"lower": 0.008, "upper": 0.030, "start": 0.016}
    d["design"]["constraints"] = {"arm_deflection": {"at_most": 0.005}}
    d["design"].pop("pareto", None)
    conf = design_from_dict(d, str(QUAD), quick=True)
    pr = conf.problem
    k = pr.names.index("arm_tube_diameter")
    fam = ArmTubeFamily()
    x = pr.start.copy()
    masses = []
    for D in (0.012, 0.020):
        x[k] = D
        platform, _ = pr.build(jnp.asarray(x), 0, pr.cells[0])
        assert float(platform.parts.arm.radius) == pytest.approx(D / 2, rel=1e-15)
        assert float(platform.parts.arm.mass_per_length) == pytest.approx(float(fam.mass_per_length(D)), rel=1e-15)
        masses.append(float(platform.mass))
        m = pr.measures(jnp.asarray(x), 0, pr.cells[0])
        free = float(jnp.max(platform.arm_length)) - float(platform.parts.hub.radius)
        F = float(jnp.max(platform.c_f * platform.u_max))
        I = math.pi * (D**4 - (D - 0.002) ** 4) / 64
        assert float(m["arm_deflection"]) == pytest.approx(F * free**2 / (3 * 70e9 * I), rel=1e-12)
    built = pr.build(jnp.asarray(x), 0, pr.cells[0])[0]
    L = float(jnp.max(built.arm_length)) - float(built.parts.hub.radius)  # each arm runs from the hub's rim
    expect = 4 * L * float(fam.mass_per_length(0.020) - fam.mass_per_length(0.012))  # four arms
    assert masses[1] - masses[0] == pytest.approx(expect, rel=1e-9)
    table = design_table(conf, x, pr.motor_names[0], pr.cells[0], "tube_rt")
    assert table["parts"]["arm"]["radius"] == pytest.approx(0.010, rel=1e-15)
    write_toml(table, tmp_path / "best.toml")
    loaded = load_platform(tmp_path / "best.toml")
    assert float(loaded.mass) == pytest.approx(masses[1], rel=1e-9)
    f = lambda D: pr.measures(jnp.asarray(x).at[k].set(D), 0, pr.cells[0],  # noqa: E731
                              frozenset({"arm_deflection"}))["mass"]
    h = 1e-7
    fd = (float(f(0.016 + h)) - float(f(0.016 - h))) / (2 * h)
    assert float(jax.grad(f)(jnp.asarray(0.016))) == pytest.approx(fd, rel=1e-6)
    d["design"]["variables"]["arm_tube_diameter"]["lower"] = 0.002
    msg = _error(d)
    assert "design.variables.arm_tube_diameter.lower" in msg and "0.002" in msg
