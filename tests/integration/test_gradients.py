"""Gradients of whole closed-loop flights (fixed-step solves, float64).

* reverse-mode gradients of a flight objective with respect to alpha_0, beta_0, arm
  length, mass, inertia, all 18 controller gains and the motor time constant agree
  with central finite differences;
* ``vmap`` of ``grad`` equals ``grad`` of ``sum(vmap)``;
* a batch with one diverging design gives finite losses for the others, flags the
  diverged one and gives it a zero gradient, in both batching orders;
* with the exact pseudo-inverse allocation, no bounds and ideal motors the tracking
  error does not depend on the tilt at all, while energy does.

Every flight is 1 s long (dt = 0.01 s). To keep compilation to a minimum, the
finite-difference points and the diverging design ride in the *same* batch as the
point where the gradient is taken, so one compiled ``vmap(value_and_grad)`` serves all checks.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

import jaxrotor as jr
from jaxrotor import optimize as op
from jaxrotor.flight import Flight
from jaxrotor.optimize import objectives as ob
from jaxrotor.reference import FigureEight, Hover, Sequence

FIXED = jr.Integrator(adaptive=False, dt=0.01)
H_REL = 1e-6  # relative finite-difference step

# every kind of leaf the issue names; all Identity (gradients in physical units)
SELECTION = {
    "platform.alpha": None,
    "platform.beta": None,
    "platform.arm_length": None,
    "platform.mass": None,
    "platform.inertia": None,
    "controller": None,
    "flight.actuators.motor.time_constant": None,
}
# finite-difference checks: (name, parameter column)
FD_COLUMNS = [
    "platform.alpha", "platform.beta", "platform.arm_length", "platform.mass",
    "platform.inertia[0,0]", "platform.inertia[1,1]", "platform.inertia[2,2]", "platform.inertia[0,1]",
    *[f"controller.{g}[{i}]" for g in ("K_p", "K_pi", "K_v", "K_R", "K_Ri", "K_w") for i in range(3)],
    "flight.actuators.motor.time_constant",
]


def realistic_problem():
    """Paper hexarotor, Table III gains, clipped inputs, 30 ms lag; tracking + energy + effort + saturation.

    The figure-eight (period 10 s, 0.5 m) keeps every rotor command inside its bounds (0.7-1.2 times
    hover), so the flight is a smooth function of the parameters and central differences converge;
    the saturation term (threshold 0.5) is active all along and smooth.
    """
    flight = Flight(FigureEight(1.0, period=10.0, amplitude=(0.5, 0.5)), allocator=jr.Clip(),
                    actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)), integrator=FIXED, save_dt=0.02)
    design = op.Design(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3(), flight)
    objective = ob.Tracking(position=1.0, orientation=1.0) + ob.Energy() + ob.Effort() + ob.SaturationMargin(0.5)
    return op.DesignProblem(design, op.Parameters.select(design, SELECTION), objective)


def _value_and_grad(theta, problem):
    return problem.loss(theta)


_vmap_value_and_grad = eqx.filter_jit(
    eqx.filter_vmap(eqx.filter_value_and_grad(_value_and_grad, has_aux=True), in_axes=(0, None)))


@eqx.filter_jit
@eqx.filter_grad
def _grad_of_vmap(thetas, problem):
    values, _ = eqx.filter_vmap(lambda th: problem.loss(th))(thetas)
    return jnp.sum(values)


@pytest.fixture(scope="module")
def batch():
    """One batch: the base point, +-h along every FD column, and a design whose flight is NaN (J = 0)."""
    problem = realistic_problem()
    names = problem.parameters.names(problem.design)
    vec0, unravel = ravel_pytree(problem.init())
    members = [vec0]
    steps = []
    for name in FD_COLUMNS:
        i = names.index(name)
        h = H_REL * max(1.0, abs(float(vec0[i])))
        steps.append(h)
        members += [vec0.at[i].add(h), vec0.at[i].add(-h)]
    bad = vec0  # a singular inertia: omega_dot = J^-1 (...) is NaN from the first step
    for k in range(9):
        bad = bad.at[names.index(f"platform.inertia[{k // 3},{k % 3}]")].set(0.0)
    members.append(bad)
    thetas = jax.vmap(unravel)(jnp.stack(members))
    (values, info), grads = _vmap_value_and_grad(thetas, problem)
    return dict(problem=problem, names=names, thetas=thetas, values=np.asarray(values), info=info,
                grads=np.asarray(jax.vmap(lambda g: ravel_pytree(g)[0])(grads)), steps=steps,
                n_fd=1 + 2 * len(FD_COLUMNS))


def test_gradient_matches_central_differences(batch):
    """Tilt, geometry, mass, inertia, every gain and the motor time constant."""
    g = batch["grads"][0]
    names, values = batch["names"], batch["values"]
    scale = np.max(np.abs(g))
    assert np.all(np.isfinite(g)) and scale > 0
    for k, (name, h) in enumerate(zip(FD_COLUMNS, batch["steps"])):
        fd = (values[1 + 2 * k] - values[2 + 2 * k]) / (2 * h)
        ad = g[names.index(name)]
        assert abs(ad - fd) <= 1e-5 * abs(fd) + 1e-7 * scale, (name, ad, fd)
    # the tilt gradient is genuinely non-zero here (energy, effort, bounds and lag enter)
    for name in ("platform.alpha", "platform.beta"):
        assert abs(g[names.index(name)]) > 1e-3 * scale, name


def test_vmap_of_grad_equals_grad_of_vmap(batch):
    gv = _grad_of_vmap(batch["thetas"], batch["problem"])
    gv = np.asarray(jax.vmap(lambda t: ravel_pytree(t)[0])(gv))
    np.testing.assert_allclose(gv, batch["grads"], rtol=1e-10, atol=1e-12 * np.max(np.abs(batch["grads"])))


def test_diverged_member_is_flagged_and_isolated(batch):
    info, values, grads = batch["info"], batch["values"], batch["grads"]
    diverged = np.asarray(info.diverged)
    penalized = np.asarray(info.penalized)
    assert diverged[-1] and penalized[-1]
    assert not np.any(diverged[:-1]) and not np.any(penalized[:-1])
    assert np.all(np.isfinite(values))
    assert values[-1] == batch["problem"].divergence_penalty
    assert np.all(grads[-1] == 0.0)
    assert np.all(np.isfinite(grads))
    assert np.isnan(float(info.rmse_position[-1])) and np.all(np.isfinite(np.asarray(info.rmse_position[:-1])))


# --------------------------------------------------------------------------- ideal allocation: tilt does not matter


def test_ideal_tracking_error_does_not_depend_on_tilt():
    """Exact pseudo-inverse, no bounds, ideal motors: G G^+ w = w for any full-rank G, so the
    flight (and its tracking error) is the same for every tilt; energy is not."""
    # hover, then the figure-eight starts with a velocity jump: a real tracking transient
    ref = Sequence((Hover((0.0, 0.0, 1.0), 0.3), FigureEight(0.7, period=8.0)))
    flight = Flight(ref, allocator=jr.PseudoInverse(), integrator=FIXED, save_dt=0.02)
    design = op.Design(jr.presets.paper_hexarotor(rotor_speed_max=float("inf")), jr.FullyActuatedSE3(), flight)
    params = op.Parameters.select(design, {"platform.alpha": None, "platform.beta": None})
    objective = ob.Tracking(position=1.0, orientation=1.0) + ob.Weighted(ob.Energy(), 0.0)
    problem = op.DesignProblem(design, params, objective)
    a0, b0 = float(design.platform.alpha), float(design.platform.beta)
    h = 1e-4
    tilts = [(a0, b0), (a0 + h, b0), (a0 - h, b0), (a0, b0 + h), (a0, b0 - h), (0.05, 0.0), (0.6, 0.3), (0.1, 0.5)]
    theta0 = problem.init()
    thetas = jax.vmap(lambda a, b: eqx.tree_at(lambda t: (t.platform.alpha, t.platform.beta), theta0, (a, b)))(
        jnp.array([t[0] for t in tilts]), jnp.array([t[1] for t in tilts]))
    _, info = eqx.filter_jit(eqx.filter_vmap(lambda th, p: p.loss(th), in_axes=(0, None)))(thetas, problem)
    tracking = np.asarray(info.terms["tracking_rmse"])
    energy = np.asarray(info.terms["energy"])
    assert not np.any(np.asarray(info.diverged))
    assert tracking[0] > 1e-3  # a real transient (metres)
    np.testing.assert_allclose(tracking, tracking[0], rtol=1e-9)
    d_track = [(tracking[1] - tracking[2]) / (2 * h), (tracking[3] - tracking[4]) / (2 * h)]
    d_energy = [(energy[1] - energy[2]) / (2 * h), (energy[3] - energy[4]) / (2 * h)]
    assert max(abs(d) for d in d_track) < 1e-8
    assert min(abs(d) for d in d_energy) > 1e-2  # tilt matters through power
    assert np.ptp(energy) > 0.1
