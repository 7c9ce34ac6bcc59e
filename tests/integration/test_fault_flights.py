"""Faults in flight (jaxrotor.faults, jaxrotor.flight): the plant carrying a partial loss and a stuck rotor, the
flight computer reallocating around a known fault, a gradient with respect to the effectiveness, the fault outcome
that `jaxrotor simulate` writes, a rotor of the paper hexarotor lost in flight, and the knowledge phases a flight
builds once (the closed forms, the tables and the static analysis: tests/unit/test_faults.py)."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import faults as F
from jaxrotor.io.config import loads

from unit._paper_hover import paper_hover_toml

HOVER = paper_hover_toml(0.002)


@pytest.fixture(scope="module")
def partial():
    """The paper hexarotor (unbounded inputs) hovering; rotor 2 keeps 40 % of its thrust from 1 s."""
    cfg = loads(HOVER + '\n[[faults]]\nkind = "rotor_partial"\nrotor = 2\ntime = 1.0\neffectiveness = 0.4\n'
                'detection_delay = 0.05\n', "f.toml")
    aware = jr.fly(cfg.platform, cfg.controller, cfg.flight)
    # never detected: the flight computer allocates as if rotor 2 were whole
    blind = dataclasses.replace(cfg.flight, faults=F.Faults("rotor_partial", 1, 1.0, 0.4, 1e3))
    return cfg, aware, jr.fly(cfg.platform, cfg.controller, blind)


def test_plant_applies_the_effectiveness(partial):
    """After the fault the body wrench is G diag(eta) u: the vehicle's acceleration is that of the degraded rotor."""
    cfg, aware, _ = partial
    p = cfg.platform
    k = int(np.searchsorted(np.asarray(aware.t), 2.0))
    eta = np.array([1, 0.4, 1, 1, 1, 1])
    f_b, tau_b = jr.allocation.wrench(p, jnp.asarray(eta) * aware.u[k])
    a = np.asarray(aware.R[k] @ f_b) / float(p.mass) - [0, 0, float(p.gravity)]
    np.testing.assert_allclose(np.asarray(aware.accel[k]), a, rtol=1e-9, atol=1e-9)


def test_reallocation_holds_full_pose_after_a_partial_loss(partial):
    """With the fault known (after 50 ms) the allocator scales rotor 2's column: the hexarotor, still of rank 6,
    holds position and attitude; the computer that never learns of it leaves larger errors."""
    _, aware, blind = partial
    t = np.asarray(aware.t)
    late = t >= 2.5
    e_aware = np.linalg.norm(np.asarray(aware.p_ref - aware.p)[late], axis=1).max()
    e_blind = np.linalg.norm(np.asarray(blind.p_ref - blind.p)[late], axis=1).max()
    assert not bool(aware.diverged)
    assert e_aware < 1e-3 < e_blind
    r_aware = np.abs(np.asarray(jr.metrics.reference_orientation_error(aware))[late]).max()
    assert r_aware < 1e-3
    # the degraded rotor is driven harder: 1/0.4 of its hover input, to round-off in steady state
    u = np.asarray(aware.u)
    assert u[-1, 1] == pytest.approx(u[0, 1] / 0.4, rel=1e-3)


def test_stuck_rotor_keeps_its_speed():
    text = HOVER.replace('[actuators.motor]\nkind = "ideal"', '[actuators.motor]\nkind = "first_order"\ntime_constant = 0.02')
    cfg = loads(text + '\n[[faults]]\nkind = "rotor_stuck"\nrotor = 4\ntime = 0.5\n', "f.toml")
    tr = jr.fly(cfg.platform, cfg.controller, dataclasses.replace(cfg.flight, t1=1.5))
    t, w = np.asarray(tr.t), np.asarray(tr.rotor_speed)
    after = t >= 0.5 + 1e-9
    np.testing.assert_allclose(w[after, 3], w[np.searchsorted(t, 0.5), 3], rtol=1e-9)
    assert not bool(tr.diverged)


def test_gradient_with_respect_to_the_effectiveness():
    cfg = loads(HOVER, "f.toml")
    flight = dataclasses.replace(cfg.flight, t1=1.5)

    def z_end(eta):
        f = dataclasses.replace(flight, faults=F.Faults("rotor_partial", 1, 0.5, eta, 1e3))  # never detected
        return jr.fly(cfg.platform, cfg.controller, f).p[-1, 2]

    g = float(jax.grad(z_end)(0.6))
    h = 1e-5
    fd = (float(z_end(0.6 + h)) - float(z_end(0.6 - h))) / (2 * h)
    assert g == pytest.approx(fd, rel=1e-5) and abs(g) > 1e-4


def test_no_faults_changes_nothing():
    cfg = loads(HOVER, "f.toml")
    flight = dataclasses.replace(cfg.flight, t1=0.5)
    a = jr.fly(cfg.platform, cfg.controller, flight)
    b = jr.fly(cfg.platform, cfg.controller, dataclasses.replace(flight, faults=F.Faults("rotor_loss", 0, 10.0)))
    np.testing.assert_allclose(np.asarray(a.p), np.asarray(b.p), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(a.u), np.asarray(b.u), rtol=1e-12)  # G's pseudo-inverse rebuilt per tick


def test_fault_outcome_words(partial):
    """The partial loss, reallocated: full pose; a copy whose attitude is off in yaw only: yaw released, unless its
    yaw rate grows faster than SPIN_ACCELERATION: lost; a constant roll of 0.3 rad: full pose (a held tilted
    attitude), of 0.7 rad: lost; one whose position is off: lost."""
    from jaxrotor import so3
    from jaxrotor.verdict import fault_outcome

    cfg, aware, _ = partial
    assert fault_outcome(aware, cfg.flight) == "full_pose"
    yawed = dataclasses.replace(aware, R=aware.R @ so3.exp(jnp.asarray([0.0, 0.0, 0.3])))
    assert fault_outcome(yawed, cfg.flight) == "yaw_released"
    rolled = dataclasses.replace(aware, R=aware.R @ so3.exp(jnp.asarray([0.2, 0.0, 0.0])))
    assert fault_outcome(rolled, cfg.flight) == "full_pose"  # a constant tilted attitude: the tilted hover
    rolled = dataclasses.replace(aware, R=aware.R @ so3.exp(jnp.asarray([0.7, 0.0, 0.0])))
    assert fault_outcome(rolled, cfg.flight) == "lost"  # beyond MAX_AXIS_TILT
    spun = dataclasses.replace(yawed, omega=yawed.omega.at[:, 2].set(6.0 * yawed.t))  # spinning up at 6 rad/s^2
    assert fault_outcome(spun, cfg.flight) == "lost"
    fallen = dataclasses.replace(aware, p=aware.p - jnp.asarray([0.0, 0.0, 0.2]))
    assert fault_outcome(fallen, cfg.flight) == "lost"
    assert fault_outcome(aware, dataclasses.replace(cfg.flight, faults=None)) is None


def test_simulate_writes_the_fault_outcome(tmp_path):
    """`jaxrotor simulate` of a config with [[faults]] writes fault_outcome into metrics.json."""
    import json

    from click.testing import CliRunner

    from jaxrotor.cli import main

    path = tmp_path / "fault.toml"
    path.write_text(HOVER + '\n[[faults]]\nkind = "rotor_partial"\nrotor = 2\ntime = 0.5\neffectiveness = 0.7\n')
    res = CliRunner().invoke(main, ["simulate", str(path), "--out", str(tmp_path / "o"), "--no-progress",
                                    "--t1", "1.0"])
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert m["fault_outcome"] == "full_pose"


@pytest.mark.parametrize("policy, outcome", [("auto", "lost"), ("never", "lost")])
def test_losing_a_rotor_of_the_paper_hexarotor(policy, outcome):
    """The paper hexarotor loses rotor 2 at 1 s: five rotors leave G rank 5, so full pose is gone (its tilted hover
    has 4 % input room, below AXIS_MARGIN). Releasing yaw (the default once the loss is known) it holds position
    within 0.01 m, every input but rotor 2's positive to within 4e-4 of the largest, but its five rotors cannot
    cancel their yaw torque: it spins up faster than SPIN_ACCELERATION, which the verdict calls lost, as the
    analysis does; allocating the whole wrench by least squares it falls."""
    from jaxrotor.verdict import fault_outcome

    text = HOVER.replace("duration = 3.0", "duration = 4.5")
    cfg = loads(text + f'\n[[faults]]\nkind = "rotor_loss"\nrotor = 2\ntime = 1.0\nrelease_yaw = "{policy}"\n', "f.toml")
    tr = jr.fly(cfg.platform, cfg.controller, cfg.flight)
    assert fault_outcome(tr, cfg.flight) == outcome
    if policy == "auto":
        late = np.asarray(tr.t) >= 4.0
        assert np.linalg.norm(np.asarray(tr.p_ref - tr.p)[late], axis=1).max() < 0.01
        u = np.asarray(tr.u)[late]
        # rotor 2 off; the pseudo-inverse's minimum-norm inputs of the others stay above -4e-4 of the largest
        assert np.abs(u[:, 1]).max() < 1e-6 * u.max() and u.min() >= -1e-3 * u.max()
        from jaxrotor.faults import SPIN_ACCELERATION

        wz, t = np.asarray(tr.omega)[late, 2], np.asarray(tr.t)[late]
        assert abs(np.polyfit(t, wz, 1)[0]) > 2 * SPIN_ACCELERATION  # the spin-up the analysis predicts (~16 /s^2)

@jax.jit
def _three_allocations(plan, w):
    """The tilted hover's, the yaw-released (batched) and the yaw-released (alone) allocations of ``w`` under
    ``plan``, on its tabulated problems when it has them."""
    from jaxrotor.flight import _released_inputs, _tilted_and_released

    return (*_tilted_and_released(plan.data, plan.hover, w, w, plan.box), _released_inputs(plan, w))


def test_known_phases_match_the_knowledge_at_each_time():
    """The phases of a step-onset fault list (built once per flight) are the known effectiveness and stuck factors
    between the detections, and the flight computer's plan looked up from them is the plan built at ``t``."""
    from jaxrotor.allocators import prepare_allocation
    from jaxrotor.design.presets import PRESETS
    from jaxrotor.flight import FaultPhases, fault_aware, fault_phases

    f = F.Faults(("rotor_partial", "rotor_stuck", "rotor_loss"), [1, 4, 3], [2.0, 1.0, 1.5], [0.5, 1.0, 0.0],
                 [0.0, 0.2, 0.2])  # detections at 2.0, 1.2, 1.7
    eta, frozen = F.known_phases(f, 6)
    np.testing.assert_allclose(np.asarray(eta), [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 1, 1],
                                                 [1, 0.5, 1, 0, 1, 1]])
    np.testing.assert_allclose(np.asarray(frozen), [[1] * 6, [1, 1, 1, 1, 0, 1], [1, 1, 1, 1, 0, 1],
                                                    [1, 1, 1, 1, 0, 1]])
    pf = PRESETS["paper_hexarotor"]()
    data = prepare_allocation(pf)
    weight = pf.mass * pf.gravity
    table = fault_phases(f, data, weight)
    with_table = eqx.tree_at(lambda d: d.fault_plans, data, table, is_leaf=lambda x: x is None)
    state = jr.initial_state(pf)
    state = eqx.tree_at(lambda s: s.rotor_speed, state, jnp.linspace(400.0, 500.0, 6))
    for t, phase in ((0.5, 0), (1.3, 1), (1.8, 2), (2.5, 3)):
        assert int(F.known_phase(f, t)) == phase
        np.testing.assert_allclose(np.asarray(eta[phase]), np.asarray(F.known_effectiveness(f, 6, t)))
        np.testing.assert_allclose(np.asarray(frozen[phase]), np.asarray(F.known_stuck(f, 6, t)))
        looked_up, built = fault_aware(f, with_table, state, t), fault_aware(f, data, state, t, weight=weight)
        assert built.box is None and jax.tree.leaves(looked_up.box)  # the phases carry their bounded problems
        leaves_up, leaves_built = (jax.tree.leaves(eqx.tree_at(lambda p: p.box, plan, None, is_leaf=lambda x: x is None))
                                   for plan in (looked_up, built))
        assert len(leaves_up) == len(leaves_built)
        for a, b in zip(leaves_up, leaves_built):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
        # the tilted and yaw-released allocations on the tabulated problems are those set up at each call, for a
        # wrench inside the bounds and for one that saturates (0.1 and 4 times the weight)
        for scale in (0.1, 4.0):
            w = jnp.asarray([0.1, -0.2, 1.0, 0.02, -0.01, 0.03]) * scale * float(weight)
            tabulated, set_up = _three_allocations(looked_up, w), _three_allocations(built, w)
            for a, b in zip(tabulated, set_up):
                np.testing.assert_allclose(np.asarray(a.u), np.asarray(b.u), rtol=0, atol=1e-9 * 4.9e5)
        assert bool(jnp.any(tabulated[2].saturated))  # 4 x the weight: a bound is met
    assert isinstance(table, FaultPhases) and bool(looked_up.released | looked_up.tilted)
    assert float(jnp.abs(looked_up.held).max()) > 0  # the stuck rotor's wrench, evaluated at t
    with pytest.raises(ValueError, match="onset"):
        F.known_phases(F.Faults("rotor_loss", 0, 1.0, onset=0.01), 6)
