"""Co-design (jaxrotor.optimize.codesign): ``jax.grad`` of a whole mission loss of each shipped design file (parts,
auto gains, flights) against central differences in every continuous variable (the rest of the co-design's tests:
tests/unit/test_codesign.py)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor.io.design_config import load_design

from unit.test_codesign import FILES, _without


def _loss_fn(problem):
    """A scalar mission loss: tracking and attitude (the flights), endurance, mass and every constraint's
    normalised violation."""
    cells = problem.cells[0]
    bounds = jnp.asarray(problem.bounds)

    def loss(x):
        m = problem.measures(x, 0, cells)
        g = problem.violations(m, bounds)
        return m["tracking"] + m["attitude"] + m["endurance"] / 1000 + m["mass"] + jnp.sum(g)

    return loss


@pytest.mark.parametrize("which", ["quad", "hex"])
def test_mission_gradient_matches_central_differences(which):
    """``jax.grad`` reaches every continuous variable through the parts, the auto gains and the flights.

    One member, one compilation: the jitted ``value_and_grad`` also gives the values of the central differences
    (step 1e-5 of each variable's range); compared per unit of each variable's range. The stability margin is
    left out (it alone doubles the compile time; ``tests/unit/analysis/test_stability.py`` checks its gradient)."""
    pr = load_design(FILES[which], quick=True).problem
    p1 = _without(eqx.tree_at(lambda p: p.keys, pr, pr.keys[:1]), {"stability_margin"})
    assert {"tracking", "clearance", "thrust_to_weight"} <= {c.measure for c in p1.constraints}
    vg = jax.jit(jax.value_and_grad(_loss_fn(p1)))
    x0 = pr.start
    val, grad = vg(jnp.asarray(x0))
    assert np.isfinite(float(val))
    span = pr.upper - pr.lower
    g_ad = np.asarray(grad) * span
    g_fd = np.zeros_like(g_ad)
    for i in range(len(x0)):
        h = 1e-5 * span[i]
        e = np.zeros_like(x0)
        e[i] = h
        fp, _ = vg(jnp.asarray(x0 + e))
        fm, _ = vg(jnp.asarray(x0 - e))
        g_fd[i] = (float(fp) - float(fm)) / (2 * h) * span[i]
    norm = float(np.linalg.norm(g_fd))
    names = dict(zip(pr.names, zip(g_ad, g_fd)))
    assert np.all(np.isfinite(g_ad)), names
    # every variable moves the loss (the check is not vacuous)
    assert np.all(np.abs(g_fd) > 1e-4 * norm), names
    # observed agreement ~1e-10 of the norm (fixed-step flights are smooth in the design); 1e-6 leaves a margin.
    # The hexarotor's rotor-loss measure is a soft minimum (temperature 1e-3) of maxima over candidate hover axes,
    # curved on the scale of its temperature in the per-rotor angles: central differences agree to 3e-6 of the norm.
    tol = 1e-5 if any(n.startswith("tilt_") for n in pr.names) else 1e-6
    np.testing.assert_allclose(g_ad, g_fd, rtol=tol, atol=tol * norm, err_msg=str(names))
