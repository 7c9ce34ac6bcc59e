"""MJX flies the same model and loop as MuJoCo C (its numerical reference), and is differentiable."""

import dataclasses

import equinox as eqx
import jax
import numpy as np
import pytest

from jaxrotor.physics import (
    ModelOptions,
    PhysicsSettings,
    build_model,
    fly_physics,
    paper_hexarotor_parts,
)
from jaxrotor.physics.mjx import make_mjx_flight, put_model
from jaxrotor.reference import Transfer
from jaxrotor.workflows import usecase

N_TICKS = 2000  # 2 s at 1 kHz


@pytest.fixture(scope="module")
def setup():
    conf = usecase.paper_reproduction_spec(with_comparison=False)
    flight = dataclasses.replace(conf.flight, reference=Transfer((0.0, 0.0, 1.0), (0.2, -0.1, 1.1), 2.0))
    settings = PhysicsSettings(parts=paper_hexarotor_parts(), options=ModelOptions(floor=False, integrator="implicitfast"))
    pm = build_model(conf.platform, settings.parts, settings.options)
    fn = make_mjx_flight(pm, conf.platform, flight, settings, n_ticks=N_TICKS)
    model = put_model(pm)

    def flight_fn(K_p):
        return fn(eqx.tree_at(lambda c: c.K_p, conf.controller, K_p), model)

    # one compilation: the flight and its derivative w.r.t. the three position gains (forward mode)
    jac = jax.jit(lambda K_p: jax.vmap(lambda e: jax.jvp(flight_fn, (K_p,), (e,)), out_axes=(None, 0))(np.eye(3)))
    out, d_out = jac(conf.controller.K_p)
    c_res = fly_physics(conf.platform, conf.controller, flight, settings, model=pm)
    return conf, jac, out, d_out, c_res


def test_mjx_equals_mujoco_c_over_a_two_second_closed_loop_flight(setup):
    conf, _, out, _, c_res = setup
    c = c_res.trajectory
    assert out.p.dtype == np.float64
    step = round(float(conf.flight.save_dt) / 0.001)
    np.testing.assert_allclose(np.asarray(out.p)[::step], np.asarray(c.p), atol=1e-6)
    np.testing.assert_allclose(np.asarray(out.R)[::step], np.asarray(c.R), atol=1e-6)
    np.testing.assert_allclose(np.asarray(out.rotor_speed)[::step], np.asarray(c.rotor_speed), atol=1e-6)
    assert float(np.linalg.norm(np.asarray(out.p[-1]) - np.asarray(out.p[0]))) > 0.2  # it flew the transfer


def test_gradient_through_mjx_rollout_matches_central_differences(setup):
    """d p(t1) / d K_p through 2000 MJX steps of the closed loop, against central differences (1e-4)."""
    conf, jac, _, d_out, _ = setup
    K_p = np.asarray(conf.controller.K_p)
    grad = np.asarray(d_out.p[:, -1, :])  # (gain, axis)
    h = 1e-4
    for i in range(3):
        e = np.zeros(3)
        e[i] = h
        p_plus = np.asarray(jac(K_p + e)[0].p[-1])
        p_minus = np.asarray(jac(K_p - e)[0].p[-1])
        fd = (p_plus - p_minus) / (2 * h)
        np.testing.assert_allclose(grad[i], fd, rtol=1e-4, atol=1e-4 * max(1e-6, np.abs(fd).max()))
    assert np.abs(grad).max() > 1e-6  # the gains matter
