"""Closed loop: controllers converge and track, integral action, the paper use case (Table IV), float32,
tilting while flying.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets, so3
from jaxrotor.control import FullyActuatedSE3, UnderactuatedSE3
from jaxrotor import fly
from jaxrotor.metrics import flight_metrics, mae, max_abs, orientation_error, position_error
from jaxrotor.reference import FigureEight, Hover, paper_maneuver
from jaxrotor.simulation import simulate
from jaxrotor.workflows.usecase import PAPER_TABLE_IV, paper_realistic_spec, paper_reproduction_spec

FIXED = jr.Integrator(adaptive=False, dt=0.005)


@pytest.fixture(scope="module")
def hexa():
    return presets.paper_hexarotor()


# --------------------------------------------------------------------------- controllers


def test_fully_actuated_converges_from_offsets(hexa):
    ref = Hover([0.0, 0.0, 1.0], 30.0)  # the Table III x/y gains leave a slow pole near -0.24 1/s
    R0 = so3.exp(jnp.array([0.3, -0.2, 0.4]))
    s0 = jr.initial_state(hexa, p=[0.4, -0.3, 0.7], R=R0, v=[0.2, 0.0, -0.1], omega=[0.5, -0.3, 0.2], rotor_speed="hover")
    tr = simulate(hexa, FullyActuatedSE3(), ref, state0=s0, integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.1)
    assert not bool(tr.diverged)
    assert float(jnp.linalg.norm(position_error(tr)[-1])) < 2e-3
    assert float(jnp.linalg.norm(orientation_error(tr)[-1])) < 1e-4
    # the error shrinks: late errors are far below the initial ones
    assert float(jnp.linalg.norm(position_error(tr)[0])) > 100 * float(jnp.linalg.norm(position_error(tr)[-1]))


def test_integral_action_removes_constant_disturbance(hexa):
    d = jnp.array([2.0, -1.5, 3.0])  # N, world frame
    ref = Hover([0.0, 0.0, 1.0], 40.0)
    no_int = FullyActuatedSE3(K_pi=0.0)
    tr = simulate(hexa, no_int, ref, integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.5,
                  disturbance=lambda t: d)
    # without integral action the steady error is d / (m K_p) (closed form, per axis)
    K_p = np.array([7.0, 7.0, 60.0])
    np.testing.assert_allclose(position_error(tr)[-1], -np.asarray(d) / (3.5 * K_p), rtol=1e-4)
    tr = simulate(hexa, FullyActuatedSE3(), ref, integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.5,
                  disturbance=lambda t: d)
    assert float(jnp.max(jnp.abs(position_error(tr)[-1]))) < 5e-4
    # the position integrator converges to the value that cancels the disturbance: m K_pi int e_p = -d
    K_pi = np.array([3.0, 3.0, 5.0])
    # (x, y converge with the -0.25 1/s pole; z's slowest pole, about -0.085 1/s, leaves ~3 % after 40 s)
    cancel = 3.5 * K_pi * np.asarray(tr.controller_state.int_p[-1])
    np.testing.assert_allclose(cancel[:2], -np.asarray(d)[:2], rtol=2e-3)
    np.testing.assert_allclose(cancel[2], -float(d[2]), rtol=0.05)


def test_underactuated_quadrotor_converges_and_tracks_figure_eight():
    quad = presets.cs_4r()
    ref = Hover([0.0, 0.0, 1.0], 8.0)
    s0 = jr.initial_state(quad, p=[0.5, -0.4, 0.6], R=so3.exp(jnp.array([0.2, -0.1, 0.5])), rotor_speed="hover")
    tr = simulate(quad, UnderactuatedSE3(), ref, state0=s0, integrator=FIXED, save_dt=0.05)
    assert float(jnp.linalg.norm(position_error(tr)[-1])) < 5e-3
    assert abs(float(so3.log(tr.R[-1])[2])) < 5e-3  # heading recovered
    # the paper maneuver: thrust only along body z, tracks within stated bounds
    tr = simulate(quad, UnderactuatedSE3(), paper_maneuver(), integrator=jr.Integrator(adaptive=False, dt=0.01))
    assert not bool(tr.diverged)
    e = position_error(tr)
    assert np.all(np.asarray(max_abs(e)) < [0.08, 0.15, 0.01])
    assert np.all(np.asarray(mae(e)) < [3e-3, 6e-3, 5e-4])
    np.testing.assert_allclose(tr.wrench_achieved[:, :2], 0.0, atol=1e-9)  # no lateral body force


# --------------------------------------------------------------------------- the use case


@pytest.fixture(scope="module")
def use_case_runs():
    rep = paper_reproduction_spec(with_comparison=False)
    real = paper_realistic_spec()
    return {cfg.name: fly(cfg.platform, cfg.controller, cfg.flight) for cfg in (rep, real)}


@pytest.mark.slow
def test_paper_reproduction_matches_table_iv(use_case_runs):
    tr = use_case_runs["paper_reproduction"]
    assert not bool(tr.diverged)
    assert float(tr.t[-1]) == pytest.approx(45.0)
    e_p, e_R = position_error(tr), orientation_error(tr)
    m_p, paper = np.asarray(mae(e_p)), PAPER_TABLE_IV["mae_position_xyz"]
    assert abs(m_p[0] / paper[0] - 1) < 0.15
    assert abs(m_p[1] / paper[1] - 1) < 0.15
    assert m_p[2] < 1e-4
    assert float(jnp.max(mae(e_R))) < 1e-12
    assert np.all(np.asarray(max_abs(e_p))[:2] < 0.10)
    # ideal allocation: achieved == requested wrench
    assert float(jnp.max(jnp.abs(tr.wrench_error))) < 1e-9


@pytest.mark.slow
def test_realistic_configuration_saturates_briefly(use_case_runs):
    rep, real = use_case_runs["paper_reproduction"], use_case_runs["paper_realistic"]
    assert not bool(real.diverged)
    # the figure-eight start asks for negative inputs: the exact allocation goes below zero for ~0.1 s
    t = np.asarray(rep.t)
    neg = np.asarray(jnp.any(rep.u_cmd < 0, axis=1))
    assert neg.any() and 0.03 <= neg[(t >= 8) & (t < 9)].sum() * 0.01 <= 0.3
    # with bounds, inputs stay in [0, u_max] and saturation is flagged around 8 s and 37 s
    assert float(jnp.min(real.u_cmd)) >= 0 and float(jnp.max(real.u_cmd)) <= float(presets.paper_hexarotor().u_max[0]) * (1 + 1e-9)
    sat_t = np.asarray(real.t)[np.asarray(jnp.any(real.saturated, axis=1))]
    assert sat_t.size > 0 and np.all((np.abs(sat_t - 8.1) < 0.5) | (np.abs(sat_t - 37.1) < 0.5))
    # tracking degrades but stays within the paper's 10 cm transient band
    m_rep = np.asarray(mae(position_error(rep)))
    m_real = np.asarray(mae(position_error(real)))
    assert np.all(m_real > m_rep) and np.all(np.asarray(max_abs(position_error(real)))[:2] < 0.10)
    assert float(jnp.max(mae(orientation_error(real)))) > 1e-7  # no longer round-off
    # the motor model: rotor speeds lag the command
    m = flight_metrics(real, presets.paper_hexarotor())
    assert 0 < float(m.saturation_fraction) < 0.02


# --------------------------------------------------------------------------- divergence under vmap


def test_float32_closed_loop_runs(tmp_path):
    """The library also works in float32 (a separate process, x64 disabled)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import jax, jax.numpy as jnp
        jax.config.update("jax_enable_x64", False)
        import jaxrotor as jr
        from jaxrotor import presets
        from jaxrotor.control import FullyActuatedSE3
        from jaxrotor.reference import paper_maneuver
        from jaxrotor.simulation import simulate
        tr = simulate(presets.paper_hexarotor(), FullyActuatedSE3(), paper_maneuver(), t1=10.0,
                      integrator=jr.Integrator(adaptive=False, dt=0.01))
        assert tr.p.dtype == jnp.float32, tr.p.dtype
        assert not bool(tr.diverged)
        e = jnp.abs(tr.p_ref - tr.p).max()
        assert float(e) < 0.05, float(e)
        print("ok", float(e))
        """
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "JAX_ENABLE_X64"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.startswith("ok")


# --------------------------------------------------------------------------- tilting platforms


@pytest.mark.parametrize("servo", [jr.IdealServo(), jr.FirstOrderServo(0.05, 2.0)], ids=["ideal", "lagged"])
def test_tilting_platform_tracks_exactly_while_tilting(servo):
    """Cant angles swept in flight: the allocator uses the current geometry, so tracking stays exact."""
    plat = jr.star_platform(6, 0.385, mass=3.5, c_f=3.799e-5, c_tau=1.163e-6, alpha=[0.3] * 6, beta=0.17,
                            inertia=[0.155, 0.147, 0.251], tilting=("alpha",))
    assert plat.label() == "CS_αiβ0-Ting_6R"
    signs = jnp.array([-1.0, 1.0, -1.0, 1.0, -1.0, 1.0])

    def tilt(t):
        return signs * (0.3 + 0.2 * jnp.sin(1.5 * t)), None

    ref = FigureEight(6.0, period=10.0)
    s0 = jr.initial_state(plat, p=ref(jnp.asarray(0.0)).p, v=ref(jnp.asarray(0.0)).v, rotor_speed="hover")
    s0 = eqx.tree_at(lambda s: s.alpha, s0, tilt(0.0)[0])
    tr = simulate(plat, FullyActuatedSE3(), ref, state0=s0, actuators=jr.Actuators(servo=servo),
                  integrator=jr.Integrator(adaptive=False, dt=0.005), tilt_command=tilt)
    assert not bool(tr.diverged)
    assert float(jnp.max(jnp.abs(position_error(tr)))) < 1e-9
    assert float(jnp.max(jnp.abs(tr.wrench_error))) < 1e-9
    # the applied cant follows the command: exactly (ideal) or through the rate-limited lag
    cmd = jax.vmap(lambda t: tilt(t)[0])(tr.t)
    gap = float(jnp.max(jnp.abs(tr.alpha - cmd)))
    if isinstance(servo, jr.IdealServo):
        assert gap < 1e-12
    else:
        assert 1e-3 < gap < 0.05
        assert float(jnp.max(jnp.abs(jnp.diff(tr.alpha, axis=0)) / 0.01)) <= 2.0 + 1e-9  # rate limit [rad/s]
