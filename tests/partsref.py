"""Shared pieces of the parts-gradient tests: the contract quadrotor rebuilt from a parameter vector."""

from pathlib import Path

import equinox as eqx
import numpy as np

CONTRACT = Path(__file__).resolve().parents[1] / "configs" / "vehicles" / "x_quad_parts.toml"
#: ``theta = (arm length [m], propeller diameter [m], battery mass [kg], payload x offset [m])`` of the contract.
THETA0 = np.array([0.25, 0.254, 0.55, 0.03])
NAMES = ("arm_length", "propeller.diameter", "battery.mass", "payload.offset[0]")


def vehicle(parts, theta):
    """The contract X quadrotor with ``theta`` set; built inside a differentiated function, every derivative
    flows through the mass and propulsion models."""
    from jaxrotor.design import layouts

    p = eqx.tree_at(lambda q: (q.propeller.diameter, q.battery.mass), parts, (theta[1], theta[2]))
    p = eqx.tree_at(lambda q: q.payload.offset, p, p.payload.offset.at[0].set(theta[3]))
    return layouts.x_layout(4, theta[0], parts=p)


def central(f, theta, rel=1e-5):
    """Central differences of the scalar ``f`` at ``theta``, step ``rel * max(|theta_k|, 0.01)``."""
    g = np.zeros_like(theta)
    for k in range(theta.size):
        h = rel * max(abs(theta[k]), 1e-2)
        e = np.zeros_like(theta)
        e[k] = h
        g[k] = (float(f(theta + e)) - float(f(theta - e))) / (2 * h)
    return g
