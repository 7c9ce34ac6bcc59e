"""Faults (jaxrotor.faults): the effectiveness and stuck factors in closed form, random draws, the [[faults]]
tables and their errors, the plant carrying a partial loss and a stuck rotor, the flight computer reallocating
around a known fault, a gradient with respect to the effectiveness."""

import dataclasses
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import faults as F
from jaxrotor.io.config import ConfigError, loads

from ._paper_hover import paper_hover_toml

ROOT = Path(__file__).resolve().parents[2]
HOVER = paper_hover_toml(0.002)


def test_effectiveness_and_detection_in_closed_form():
    f = F.Faults(("rotor_partial", "rotor_partial", "rotor_loss"), [1, 1, 3], [1.0, 2.0, 1.5], [0.8, 0.5, 0.3],
                 [0.1, 0.0, 0.2])
    np.testing.assert_allclose(np.asarray(F.effectiveness(f, 4, 0.5)), [1, 1, 1, 1])
    np.testing.assert_allclose(np.asarray(F.effectiveness(f, 4, 1.0)), [1, 0.8, 1, 1])
    np.testing.assert_allclose(np.asarray(F.effectiveness(f, 4, 1.6)), [1, 0.8, 1, 0.0])  # a loss ignores eta
    np.testing.assert_allclose(np.asarray(F.effectiveness(f, 4, 2.0)), [1, 0.4, 1, 0.0])  # events multiply
    # the flight computer learns of each event after its delay
    np.testing.assert_allclose(np.asarray(F.known_effectiveness(f, 4, 1.05)), [1, 1, 1, 1])
    np.testing.assert_allclose(np.asarray(F.known_effectiveness(f, 4, 1.65)), [1, 0.8, 1, 1])
    np.testing.assert_allclose(np.asarray(F.known_effectiveness(f, 4, 2.0)), [1, 0.4, 1, 0.0])
    # a smooth onset: half way at the event time, differentiable in it
    s = F.Faults("rotor_loss", 0, 1.0, onset=0.01)
    assert float(F.effectiveness(s, 2, 1.0)[0]) == pytest.approx(0.5)
    g = jax.grad(lambda t0: F.effectiveness(F.Faults("rotor_loss", 0, t0, onset=0.01), 2, 1.0)[0])(1.0)
    assert float(g) == pytest.approx(0.5 / 0.01)  # d/dt0 of 1 - (1 + tanh((t - t0)/w))/2 at t = t0
    st = F.Faults(("rotor_stuck", "servo_stuck"), [2, 0], [1.0, 1.0])
    np.testing.assert_allclose(np.asarray(F.stuck(st, 3, 1.5)), [1, 1, 0])
    np.testing.assert_allclose(np.asarray(F.servo_stuck(st, 3, 1.5)), [0, 1, 1])
    assert F.stuck(f, 4, 2.0) is None and F.effectiveness(st, 3, 2.0).tolist() == [1, 1, 1]


def test_random_faults_vmap():
    keys = jax.random.split(jax.random.PRNGKey(0), 1024)
    batch = jax.vmap(lambda k: F.random_rotor_faults(k, 6, t_range=(1.0, 4.0), effectiveness_range=(0.2, 0.9)))(keys)
    r, t, eta = np.asarray(batch.rotor[:, 0]), np.asarray(batch.time[:, 0]), np.asarray(batch.effectiveness[:, 0])
    assert set(r.tolist()) == set(range(6)) and t.min() >= 1.0 and t.max() <= 4.0
    assert eta.min() >= 0.2 and eta.max() <= 0.9 and abs(eta.mean() - 0.55) < 0.02


@pytest.mark.parametrize("table, words", [
    ('kind = "rotor_loss"\nrotor = 0\ntime = 1.0', "rotors 1 to 6"),
    ('kind = "rotor_loss"\nrotor = 7\ntime = 1.0', "rotors 1 to 6"),
    ('kind = "rotor_partial"\nrotor = 2\ntime = 1.0', "needs `effectiveness`"),
    ('kind = "rotor_partial"\nrotor = 2\ntime = 1.0\neffectiveness = 1.5', "`faults[0].effectiveness` = 1.5"),
    ('kind = "motor_fire"\nrotor = 2\ntime = 1.0', "unknown choice"),
    ('kind = "rotor_loss"\nrotor = 2\ntime = 1.0\ndetection_delay = -1.0', "detection_delay"),
    ('kind = "rotor_stuck"\nrotor = 2\ntime = 1.0', "no speed state"),
    ('kind = "servo_stuck"\nrotor = 2\ntime = 1.0', "no per-rotor tilt servos"),
    ('kind = "rotor_loss"\nrotor = 2\ntime = 1.0\neta = 0.5', "unknown key"),
])
def test_fault_table_errors_name_the_key_and_the_fix(table, words):
    with pytest.raises(ConfigError) as err:
        loads(HOVER + "\n[[faults]]\n" + table + "\n", "f.toml")
    assert words in str(err.value) and "Fix" in str(err.value)


def test_fault_tables_build_the_events():
    cfg = loads(HOVER + '\n[[faults]]\nkind = "rotor_partial"\nrotor = 2\ntime = 1.0\neffectiveness = 0.5\n'
                '[[faults]]\nkind = "rotor_loss"\nrotor = 5\ntime = 2.0\ndetection_delay = 0.1\n', "f.toml")
    f = cfg.flight.faults
    assert f.kind == ("rotor_partial", "rotor_loss") and np.asarray(f.rotor).tolist() == [1, 4]
    np.testing.assert_allclose(np.asarray(f.time), [1.0, 2.0])
    np.testing.assert_allclose(np.asarray(f.effectiveness), [0.5, 0.0])
    np.testing.assert_allclose(np.asarray(f.detection_delay), [0.05, 0.1])


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


def test_rotor_loss_outcomes_of_the_static_analysis():
    """RotorLoss.outcome in closed form: a flat hexa-X losing a rotor hovers level only with yaw released, at the
    margin 5/7 (the neighbours of the lost rotor at 2b, the next two and the opposite one at b), its yaw torque
    cancelled; the paper hexarotor's five-row level hover is unique, with two rotors idle (margin 0), a tilt within
    HOVER_TILT lets every rotor spin, but its yaw torque spins it up (lost); an octorotor keeps full pose."""
    from jaxrotor.analysis import rotor_loss
    from jaxrotor.design.presets import PRESETS

    flat = rotor_loss(PRESETS["hex_s550"]())
    assert [r.outcome for r in flat] == ["yaw_released"] * 6
    assert all(r.yaw_released_margin == pytest.approx(5 / 7, abs=1e-7) for r in flat)
    assert all(abs(r.full_pose_margin) < 1e-7 and not r.hoverable for r in flat)  # a rotor must stop: margin 0

    assert all(abs(r.yaw_spin_up) < 1e-6 for r in flat)  # the four others cancel their yaw torque: steady

    paper = rotor_loss(PRESETS["paper_hexarotor"]())
    assert [r.outcome for r in paper] == ["lost"] * 6  # level with yaw released it spins up at 16-17 rad/s^2
    assert all(15.0 < r.yaw_spin_up < 18.0 for r in paper)
    assert all(0.2 < r.yaw_released_margin < 0.3 and r.full_pose_margin == -np.inf for r in paper)  # rank 5
    assert all(r.hoverable for r in paper)  # ... yet hoverable with zero moment in a tilted attitude
    from jaxrotor.analysis._system import system

    s = system(PRESETS["paper_hexarotor"]())
    keep = np.arange(6) != 0
    x = np.linalg.solve(s.A[:5][:, keep], np.array([0.0, 0, 1, 0, 0]))  # the unique yaw-released hover
    assert np.min(x) == pytest.approx(0.0, abs=1e-9) and np.sum(np.abs(x) < 1e-9) == 2
    from jaxrotor.analysis.exact import _level_hover_margin

    assert abs(_level_hover_margin(s.A[:, keep], s.lo[keep], s.hi[keep], list(range(5)), 0.0)) < 1e-7  # level: 0

    octo = rotor_loss(PRESETS["octo_x8"]())
    assert [r.outcome for r in octo] == ["full_pose"] * 8 and min(r.full_pose_margin for r in octo) > 0.5
    assert [r.outcome for r in rotor_loss(PRESETS["hex_s550"](), alpha=jnp.zeros(6))] == ["yaw_released"] * 6


def test_flat_hexarotor_yaw_released_idles_the_opposite_rotor():
    """After a known loss a flat hexa-X's flight computer gives up its yaw torque and, within the input bounds,
    allocates the force and the roll and pitch torques with the least yaw torque: the rotor opposite the lost
    one idles and the four others share the weight equally (their yaw torques cancel)."""
    from jaxrotor.allocators import prepare_allocation
    from jaxrotor.design.presets import PRESETS
    from jaxrotor.flight import yaw_released_allocation

    pf = PRESETS["hex_s550"]()
    data = prepare_allocation(pf)
    mg = float(pf.mass * pf.gravity)
    G = np.asarray(data.G)
    for j in range(6):
        lost = eqx.tree_at(lambda d: d.G, data, data.G * (jnp.arange(6) != j))
        u = np.asarray(yaw_released_allocation(lost, jnp.asarray([0.0, 0, mg, 0, 0, 0])).u)
        opposite = int(np.argmin(G[3:5, :].T @ G[3:5, j]))  # the rotor whose roll/pitch arm is opposite
        assert u[j] == 0.0 and u[opposite] <= 5e-3 * u.max()  # the ridge against the yaw weight
        others = np.delete(u, [j, opposite])
        np.testing.assert_allclose(others, mg / (4 * float(pf.c_f[0])), rtol=5e-3)  # yaw weight vs ridge
        np.testing.assert_allclose((G @ u)[:5], [0, 0, mg, 0, 0], atol=1e-6 * mg)


def test_stuck_servo_needs_a_servo_state():
    from jaxrotor.design.presets import PRESETS
    from jaxrotor.dynamics import Actuators, FirstOrderServo
    from jaxrotor.reference import Hover

    pf = PRESETS["cs_ai_ting_6r"]()
    faults = F.Faults("servo_stuck", 1, 1.0)
    with pytest.raises(ValueError, match=r"`faults`.*servo_stuck.*IdealServo has no angle state.*Fix"):
        jr.Flight(reference=Hover([0.0, 0, 1], 2.0), faults=faults).check_faults(pf)
    jr.Flight(reference=Hover([0.0, 0, 1], 2.0), faults=faults,
              actuators=Actuators(servo=FirstOrderServo())).check_faults(pf)  # a servo state: carried


def test_only_a_vehicle_left_with_an_idle_rotor_must_spin():
    """The flight computer spins (relaxed hover) only when the yaw-released hover leaves a remaining rotor idle: a
    quadrotor after any single loss (its three rotors' unique hover idles the opposite one); not a flat or tilted
    hexarotor or an octorotor, and never without a fault."""
    from jaxrotor.allocators import prepare_allocation
    from jaxrotor.design.presets import PRESETS
    from jaxrotor.flight import _must_spin

    for name, spins in (("f450", True), ("hex_s550", False), ("paper_hexarotor", False), ("octo_x8", False)):
        pf = PRESETS[name]()
        G, n = prepare_allocation(pf).G, pf.n_rotors
        assert not bool(_must_spin(G, jnp.ones(n)))
        for j in range(n):
            col = (jnp.arange(n) != j).astype(G.dtype)
            assert bool(_must_spin(G * col, col)) is spins, (name, j)


def test_primary_axis_law_in_closed_form():
    """primary_axis_wrench at the reference position, level: spinning steadily about body z (d = n = e3) it asks
    the thrust m g and exactly the gyroscopic torque omega x (J omega + h), the rotors' momentum h from their
    speeds; tilted, the rate it asks turns d = R^T e3 towards n at k_n (n x d) and keeps the spin about d."""
    from jaxrotor import so3
    from jaxrotor.control import (RELAXED_AXIS_GAIN, RELAXED_RATE_GAIN, UnderactuatedSE3, primary_axis_wrench,
                                  rotor_momentum)
    from jaxrotor.design.presets import PRESETS
    from jaxrotor.dynamics import VehicleState
    from jaxrotor.reference import Hover

    pf = PRESETS["f450"]()
    ctrl = UnderactuatedSE3()
    ref = Hover(jnp.asarray([0.0, 0.0, 1.0]), duration=1.0)(0.0)
    speeds = jnp.asarray([0.0, 700.0, 300.0, 700.0])
    h = np.asarray(pf.J_r) * -np.asarray(pf.kappa) @ np.asarray(speeds)  # rotor axes = e3 (flat quad)
    np.testing.assert_allclose(np.asarray(rotor_momentum(pf, speeds)), [0, 0, h], atol=1e-15)
    w = jnp.asarray([0.0, 0.0, 20.0])
    st = VehicleState(p=ref.p, v=jnp.zeros(3), R=jnp.eye(3), omega=w, rotor_speed=speeds, alpha=pf.alpha,
                      beta=pf.beta)
    integ = ctrl.init_state(pf)
    wrench, d_int = primary_axis_wrench(ctrl, pf, st, integ, ref)
    J = np.asarray(pf.inertia)
    gyro = np.cross(np.asarray(w), J @ np.asarray(w) + np.array([0, 0, h]))
    np.testing.assert_allclose(np.asarray(wrench), [0, 0, float(pf.mass * pf.gravity), *gyro], atol=1e-12)
    assert not np.any(np.asarray(d_int.int_p)) and not np.any(np.asarray(d_int.int_R))

    R = so3.exp(jnp.asarray([0.1, -0.05, 0.3]))
    st = VehicleState(p=ref.p, v=jnp.zeros(3), R=R, omega=w, rotor_speed=speeds, alpha=pf.alpha, beta=pf.beta)
    wrench, _ = primary_axis_wrench(ctrl, pf, st, integ, ref)
    d = np.asarray(R).T @ np.array([0.0, 0, 1])
    K_R, K_w = np.asarray(ctrl.K_R), np.asarray(ctrl.K_w)
    k_n = RELAXED_AXIS_GAIN * (K_R[0] + K_R[1]) / (K_w[0] + K_w[1])
    w_d = np.dot(w, d) * d + k_n * np.cross([0, 0, 1.0], d)
    tau = -RELAXED_RATE_GAIN * K_w * (np.asarray(w) - w_d) + np.cross(np.asarray(w), J @ np.asarray(w) + [0, 0, h])
    np.testing.assert_allclose(np.asarray(wrench[3:]), tau, atol=1e-12)
    np.testing.assert_allclose(float(wrench[2]), float(pf.mass * pf.gravity) / max(d[2], 0.5), rtol=1e-12)


def test_mean_tilt_of_a_cone_is_its_axis():
    """mean_tilt: body z on a cone of half-angle 0.2 rad about the vertical, sampled over whole revolutions, has a
    mean axis tilt of 0 (the largest tilt is 0.2); a constant tilt of 0.03 rad about x is 0.03; samples before
    t_from do not count."""
    from jaxrotor import so3
    from jaxrotor.verdict import mean_tilt

    t = jnp.linspace(0.0, 2.0, 401)
    psi = 2 * jnp.pi * 5 * t[:-1]  # 10 whole revolutions on the 400 samples
    R = jax.vmap(lambda a: so3.exp(jnp.stack([0.2 * jnp.cos(a), 0.2 * jnp.sin(a), 0.0])))(psi)
    R = jnp.concatenate([jnp.broadcast_to(so3.exp(jnp.asarray([1.0, 0, 0])), (1, 3, 3)), R])  # one bad early sample
    tr = type("T", (), {"t": t, "R": R, "R_ref": jnp.broadcast_to(jnp.eye(3), R.shape)})()
    assert float(mean_tilt(tr, 0.001)) < 1e-12
    assert float(mean_tilt(tr, 0.0)) > 1e-3
    tr.R = jnp.broadcast_to(so3.exp(jnp.asarray([0.03, 0, 0])), R.shape)
    assert float(mean_tilt(tr, 0.0)) == pytest.approx(0.03, rel=1e-9)


@pytest.mark.parametrize("dtype", [jnp.float64, jnp.float32])
def test_a_lost_quadrotor_rotor_drops_the_rank_in_either_precision(dtype):
    """The F450 losing rotor 2: G keeps rank 3 of 4 (its zero column leaves a singular value near eps in float32,
    which the rank threshold follows), so the flight computer releases yaw and must spin in both precisions."""
    from jaxrotor.allocators import prepare_allocation
    from jaxrotor.design.presets import PRESETS
    from jaxrotor.flight import _must_spin, _rank

    G0 = jnp.asarray(prepare_allocation(PRESETS["f450"]()).G, dtype)
    col = (jnp.arange(4) != 1).astype(dtype)
    G = G0 * col
    assert int(_rank(G0)) == 4 and int(_rank(G)) == 3  # rank lost: fault_aware releases yaw
    assert bool(_must_spin(G, col))


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
