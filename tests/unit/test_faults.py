"""Faults (jaxrotor.faults): the effectiveness and stuck factors in closed form, random draws, the [[faults]]
tables and their errors, the static rotor-loss analysis, the rank and yaw-release rules, the primary axis law (the
flights with faults: tests/integration/test_fault_flights.py)."""

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


def test_a_float32_vehicle_keeps_its_fault_phases_in_float32():
    """The phases of a fault list with float64 times (this process runs x64) on a float32 vehicle: the known
    effectiveness, the stuck factors and every array of the phases' plans are float32, the factors those of
    :func:`jaxrotor.faults.known_phases`."""
    import equinox as eqx

    from jaxrotor.allocators import prepare_allocation
    from jaxrotor.design.presets import PRESETS
    from jaxrotor.flight import fault_phases

    f = F.Faults(("rotor_partial", "rotor_stuck"), [1, 4], [2.0, 1.0], [0.5, 1.0], [0.0, 0.2])
    assert f.time.dtype == jnp.float64
    p = jax.tree.map(lambda x: x.astype(jnp.float32) if eqx.is_inexact_array(x) else x, PRESETS["paper_hexarotor"]())
    phases = eqx.filter_jit(fault_phases)(f, prepare_allocation(p), p.mass * p.gravity)
    leaves = [x for x in jax.tree.leaves(phases) if eqx.is_inexact_array(x)]
    assert leaves and {x.dtype for x in leaves} == {jnp.dtype(jnp.float32)}
    eta, frozen = F.known_phases(f, 6)
    np.testing.assert_array_equal(np.asarray(phases.eta), np.asarray(eta))  # 0.5 and 1: exact in float32
    np.testing.assert_array_equal(np.asarray(phases.frozen), np.asarray(frozen))
