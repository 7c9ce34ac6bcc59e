"""Flight metrics against closed forms on a constructed trajectory, and on a hover flight (effort 1, power ratio 1)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import metrics, so3
from jaxrotor.reference import Hover


def _trajectory(T=5, n=4):
    """A trajectory with a known position error ``e_p(t_k) = (k, -2k, 0)`` cm and a yaw error of 0.1 rad."""
    t = jnp.linspace(0.0, 1.0, T)
    k = jnp.arange(T, dtype=float)
    p = jnp.stack([-0.01 * k, 0.02 * k, jnp.zeros(T)], axis=1)
    eye = jnp.broadcast_to(jnp.eye(3), (T, 3, 3))
    R = jnp.broadcast_to(so3.exp(jnp.array([0.0, 0.0, 0.1])), (T, 3, 3))
    z3, zn = jnp.zeros((T, 3)), jnp.zeros((T, n))
    return jr.Trajectory(t=t, p=p, v=z3, R=R, omega=z3, accel=z3, angular_accel=z3, u=zn, u_cmd=zn, rotor_speed=zn,
                         alpha=jnp.zeros((T,)), beta=jnp.zeros((T,)), wrench_requested=jnp.zeros((T, 6)),
                         wrench_achieved=jnp.zeros((T, 6)), saturated=jnp.zeros((T, n), bool), p_ref=z3, v_ref=z3,
                         a_ref=z3, R_ref=eye, controller_state=None, diverged=jnp.asarray(False),
                         solver_ok=jnp.asarray(True), num_steps=jnp.asarray(0))


def test_error_statistics_are_their_closed_forms():
    traj = _trajectory()
    e = np.asarray(metrics.position_error(traj))
    k = np.arange(5.0)
    np.testing.assert_allclose(e, np.stack([0.01 * k, -0.02 * k, 0 * k], axis=1), atol=1e-15)
    np.testing.assert_allclose(metrics.mae(e), [0.02, 0.04, 0.0], atol=1e-15)  # mean of k = 2
    np.testing.assert_allclose(metrics.rmse(e), [0.01 * np.sqrt(6.0), 0.02 * np.sqrt(6.0), 0.0], atol=1e-15)
    np.testing.assert_allclose(metrics.max_abs(e), [0.04, 0.08, 0.0], atol=1e-15)
    assert float(metrics.mean_norm(e)) == pytest.approx(2 * 0.01 * np.sqrt(5.0), rel=1e-14)
    assert float(metrics.rms_norm(e)) == pytest.approx(0.01 * np.sqrt(30.0), rel=1e-14)
    # a constant yaw error of 0.1 rad: e_R = sin(0.1) e_z (eq. 15 as read: the vee of the skew part)
    np.testing.assert_allclose(metrics.orientation_error(traj), np.tile([0.0, 0.0, np.sin(0.1)], (5, 1)), atol=1e-15)


def test_flight_metrics_of_a_hover_flight():
    """At hover every rotor gives m g / n: effort ratio 1 and power ratio 1 on the flat quadrotor; no error."""
    quad = jr.presets.cs_4r()
    traj = jr.fly(quad, jr.UnderactuatedSE3(),
                  jr.Flight(reference=Hover([0.0, 0.0, 1.0], 0.5), integrator=jr.Integrator(adaptive=False, dt=0.01)))
    m = metrics.flight_metrics(traj, quad)
    assert float(m.mae_position) < 1e-12 and not bool(m.diverged)
    assert float(m.effort_ratio) == pytest.approx(1.0, rel=1e-10)
    assert float(m.power_ratio) == pytest.approx(1.0, rel=1e-10)
    assert float(m.thrust_impulse) == pytest.approx(float(quad.weight) * 0.5, rel=1e-10)
    assert float(m.saturation_fraction) == 0.0 and float(m.duration) == pytest.approx(0.5)
    # the compiled metrics vmap over a batch of trajectories
    batched = jax.tree_util.tree_map(lambda x: jnp.stack([x, x]), traj)
    mb = jax.vmap(lambda tr: metrics.flight_metrics(tr, quad))(batched)
    np.testing.assert_allclose(mb.effort_ratio, [m.effort_ratio] * 2, rtol=1e-15)


def test_orientation_error_is_against_the_commanded_attitude_and_the_reference_one_has_its_own_name():
    """With ``R_cmd`` = the flown attitude the error is 0 while the error against the level ``R_ref`` is the
    0.1 rad yaw; without ``R_cmd`` (``None``) both are measured against ``R_ref``. ``flight_metrics`` reports both."""
    traj = _trajectory()
    yaw = np.tile([0.0, 0.0, np.sin(0.1)], (5, 1))
    np.testing.assert_allclose(metrics.reference_orientation_error(traj), yaw, atol=1e-15)
    assert traj.R_cmd is None
    commanded = eqx.tree_at(lambda tr: tr.R_cmd, traj, traj.R, is_leaf=lambda x: x is None)
    np.testing.assert_allclose(metrics.orientation_error(commanded), np.zeros((5, 3)), atol=1e-15)
    np.testing.assert_allclose(metrics.reference_orientation_error(commanded), yaw, atol=1e-15)
    m = metrics.flight_metrics(commanded, jr.presets.cs_4r()).to_dict()
    assert m["mae_orientation"] == pytest.approx(0.0, abs=1e-15)
    assert m["mae_orientation_reference"] == pytest.approx(np.sin(0.1), rel=1e-14)
    assert m["rmse_orientation_reference"] == pytest.approx(np.sin(0.1), rel=1e-14)
    assert m["max_orientation_reference_error"] == pytest.approx(np.sin(0.1), rel=1e-14)
    np.testing.assert_allclose(m["mae_orientation_reference_xyz"], [0.0, 0.0, np.sin(0.1)], atol=1e-15)
