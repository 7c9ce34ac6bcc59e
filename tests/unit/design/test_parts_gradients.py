"""Gradients through the parts: hover power and thrust-to-weight (the flight loss is in
``tests/integration/test_parts_flight_gradient.py``) with respect to the
arm length, the propeller diameter, the battery mass and the payload offset agree with central differences.

The vehicle is the contract X quadrotor of ``configs/vehicles/x_quad_parts.toml`` (mass 1.77 kg). Each function
rebuilds the platform from its parameter vector ``theta = (arm length [m], D [m], battery mass [kg], payload x
[m])`` inside the differentiated function, so every derivative flows through the mass model
(``jaxrotor.design.parts.mass_properties``) and the propulsion model (``c_f``, ``c_tau``, top speed).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor import analysis
from jaxrotor.io.platform_table import load_platform
from partsref import CONTRACT, NAMES, THETA0, central, vehicle  # noqa: E402



@pytest.fixture(scope="module")
def parts():
    return load_platform(CONTRACT).parts


def _check(f, theta, tol, zero=()):
    """``jax.grad`` against central differences; every parameter not in ``zero`` moves the quantity."""
    f = jax.jit(f)
    exact = np.asarray(jax.jit(jax.grad(f))(jnp.asarray(theta)))
    fd = central(f, theta)
    moving = np.array([k not in zero for k in range(theta.size)])
    assert np.all(np.abs(exact[moving]) > 0), dict(zip(NAMES, exact))
    assert np.all(exact[~moving] == 0), dict(zip(NAMES, exact))
    np.testing.assert_allclose(exact, fd, rtol=tol, atol=tol * np.max(np.abs(exact)), err_msg=str(dict(zip(NAMES, exact))))


def test_hover_power_gradient(parts):
    _check(lambda th: analysis.hover_power(vehicle(parts, th)), THETA0, 1e-6)


def test_thrust_to_weight_gradient(parts):
    """Top speed is current-limited here (omega_I = sqrt((I_max - I_0)/(K_v c_tau)), c_tau ~ D^5); with a fixed
    arm mass neither the arm length nor where the payload sits changes the ratio (exact zeros)."""
    _check(lambda th: analysis.nominal_thrust_to_weight(vehicle(parts, th)), THETA0, 1e-6, zero=(0, 3))


def test_parts_move_the_derived_fields(parts):
    """Sanity of the directions: a longer arm adds inertia, a larger propeller adds thrust per rad^2/s^2."""
    p0 = vehicle(parts, jnp.asarray(THETA0))
    p1 = vehicle(parts, jnp.asarray(THETA0 * np.array([1.2, 1.0, 1.0, 1.0])))
    assert float(p1.inertia[2, 2]) > float(p0.inertia[2, 2])
    p2 = vehicle(parts, jnp.asarray(THETA0 * np.array([1.0, 1.1, 1.0, 1.0])))
    np.testing.assert_allclose(np.asarray(p2.c_f) / np.asarray(p0.c_f), 1.1**4, rtol=1e-12)
    # the payload offset moves the centre of mass by m_p dx / m
    p3 = vehicle(parts, jnp.asarray(THETA0 + np.array([0.0, 0.0, 0.0, 0.01])))
    np.testing.assert_allclose(float(p3.com_offset[0] - p0.com_offset[0]), 0.2 * 0.01 / float(p0.mass), rtol=1e-12)
    assert dataclasses.is_dataclass(p0)
