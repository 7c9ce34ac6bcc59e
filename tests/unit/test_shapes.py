"""Shape contracts of the public numerical API (jaxtyping annotations).

(a) Every listed function or method carries a jaxtyping array annotation on each of its
array parameters and on its return, and no public function of the covered modules keeps a
bare ``jax.Array`` annotation (so removing or loosening an annotation fails here).
(b) Wrapped with ``jaxtyped(typechecker=beartype)``, a representative set accepts real
inputs built from the paper hexarotor and rejects a wrong shape with jaxtyping's
``TypeCheckError``; the wrapped results agree with closed forms.
(c) The check also runs at trace time under ``jax.jit``.
"""

import inspect
import types
import typing

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from beartype import beartype
from jaxtyping import AbstractArray, TypeCheckError, jaxtyped

from jaxrotor import allocation, allocators, control, dynamics, metrics, reference, so3, tilt_allocators, tilting
import jaxrotor.analysis.report as report_mod
from jaxrotor.analysis import measures, polytopes
from jaxrotor.design import platform as platform_mod
from jaxrotor.design import presets
from jaxrotor.optimize import design_terms, flight_terms, objectives, terms

COVERED = [so3, dynamics, allocation, allocators, control, metrics, platform_mod, measures, polytopes, objectives,
           terms, flight_terms, design_terms, tilting, tilt_allocators, reference]

# (callable, array parameters, whether the return is (or holds) an array)
ANNOTATED = [
    (so3.hat, ("w",), True),
    (so3.vee, ("W",), True),
    (so3.rot_x, ("angle",), True),
    (so3.rot_y, ("angle",), True),
    (so3.rot_z, ("angle",), True),
    (so3.exp, ("w",), True),
    (so3.log, ("R",), True),
    (so3.quat_to_rot, ("q",), True),
    (so3.rot_to_quat, ("R",), True),
    (so3.orthonormality_error, ("R",), True),
    (so3.project, ("R",), True),
    (so3.attitude_error, ("R", "R_r"), True),
    (dynamics.initial_state, ("p", "R", "v", "omega", "rotor_speed"), False),
    (dynamics.rigid_body_derivative, ("force_b", "torque_b", "force_ext_w"), True),
    (dynamics.vehicle_derivative, ("force_ext_w",), False),
    (dynamics.AbstractMotor.applied, ("rotor_speed", "u_cmd"), True),
    (dynamics.AbstractServo.applied, ("current", "command"), True),
    (allocation.force_matrix, ("alpha", "beta"), True),
    (allocation.moment_matrix, ("alpha", "beta"), True),
    (allocation.allocation_matrix, ("alpha", "beta"), True),
    (allocation.rotor_forces, ("u", "alpha", "beta"), True),
    (allocation.rotor_moments, ("u", "alpha", "beta"), True),
    (allocation.wrench, ("u", "alpha", "beta"), True),
    (allocation.hover_wrench, (), True),
    (allocation.hover_inputs, ("alpha", "beta"), True),
    (allocation.characteristic_length, (), True),
    (allocation.scaled_allocation_matrix, ("alpha", "beta"), True),
    (allocation.rank_tolerance, ("Gs",), False),
    (allocators.prepare_allocation, ("alpha", "beta"), False),
    (allocators.allocation_record, ("G", "u_min", "u_max", "wrench", "u", "shift", "alpha", "beta"), False),
    (allocators.AbstractAllocator.__call__, ("wrench",), False),
    (allocators.AbstractAllocator.allocate_tilting, ("wrench",), False),
    (allocators.PseudoInverse.__call__, ("wrench",), False),
    (allocators.Clip.__call__, ("wrench",), False),
    (allocators.TorquePriority.__call__, ("wrench",), False),
    (allocators.BoxLS.__call__, ("wrench",), False),
    (allocators.BoxLS.weights, (), True),
    (control.AbstractController.__call__, (), True),
    (control.FullyActuatedSE3.__call__, (), True),
    (control.UnderactuatedSE3.__call__, (), True),
    (metrics.position_error, (), True),
    (metrics.orientation_error, (), True),
    (metrics.mae, ("err",), True),
    (metrics.rmse, ("err",), True),
    (metrics.max_abs, ("err",), True),
    (metrics.rms_norm, ("err",), True),
    (metrics.mean_norm, ("err",), True),
    (metrics.thrust_impulse, ("c_f",), True),
    (metrics.rotor_power, ("c_tau",), True),
    (metrics.speed_margin, (), True),
    (metrics.saturation_margin, (), True),
    (platform_mod.rotor_positions, (), True),
    (platform_mod.rotor_axes, ("alpha", "beta"), True),
    (platform_mod.per_rotor_angles, ("alpha", "beta"), True),
    (platform_mod.lumped_inertia, ("positions", "hub_mass"), True),
    (platform_mod.explicit_platform, ("positions", "axes", "inertia"), False),
    (platform_mod.Platform.u_min.fget, (), True),
    (platform_mod.Platform.u_max.fget, (), True),
    (platform_mod.Platform.weight.fget, (), True),
    (measures.singular_values, ("alpha", "beta"), True),
    (measures.condition_number, ("alpha", "beta"), True),
    (measures.hover_efficiency, ("alpha", "beta"), True),
    (measures.smooth_lateral_force_capability, ("alpha", "beta"), True),
    (measures.rotor_loss_margin, ("alpha", "beta"), True),
    (polytopes.halfspace_volume, ("a", "b"), True),
    (polytopes.halfspace_area, ("a", "b"), True),
    (polytopes.zero_moment_halfspaces, ("alpha", "beta"), True),
    (polytopes.zero_moment_force_volume, ("alpha", "beta"), True),
    (polytopes.hover_section_area, ("alpha", "beta"), True),
    (polytopes.volume_above_hover, ("alpha", "beta"), True),
    (polytopes.zero_moment_measures, ("alpha", "beta"), True),
    (report_mod.analyze, ("alpha", "beta"), False),
    (objectives.AbstractTerm.evaluate, (), True),
    (objectives.AbstractTerm.__call__, (), True),
    (objectives.AbstractMeasureTerm.measure, (), True),
    (objectives.HoverEfficiency.measure, (), True),
    (objectives.Constrained.cost_of, ("m",), True),
    (objectives.Barrier.cost_of, ("m",), True),
    (tilting.speeds_at, ("wrench", "alpha", "beta", "u_hint"), True),
    (tilting.extended_matrix, (), True),
    (tilting.ExtendedVariable.solve, ("wrench", "alpha", "beta"), False),
    (tilting.ExtendedVariable.__call__, ("wrench",), False),
    (tilting.CantSelection.select, ("force", "alpha_cur"), True),
    (tilting.CantSelection.cost, ("alpha0", "force", "alpha_cur"), True),
    (tilting.CantLookupTable.select, ("force", "alpha_cur"), True),
    (reference.AbstractReference.__call__, ("t",), False),
    (reference.Hover.__call__, ("t",), False),
    (reference.Transfer.__call__, ("t",), False),
    (reference.FigureEight.__call__, ("t",), False),
    (reference.Circle.__call__, ("t",), False),
    (reference.Sequence.__call__, ("t",), False),
    (reference.FullPose.__call__, ("t",), False),
    (reference.AbstractAttitude.angles, ("t",), True),
    (reference.ConstantAttitude.angles, ("t",), True),
    (reference.AttitudeRamp.angles, ("t",), True),
    (reference.SinusoidalAttitude.angles, ("t",), True),
]

# equinox Modules whose array fields state their shapes
ANNOTATED_FIELDS = [dynamics.VehicleState, dynamics.VehicleOutputs, dynamics.RotorCommand, dynamics.WrenchCommand,
                    allocators.AllocationData, allocators.Allocation, control.IntegralState, reference.RefSample,
                    tilting.ExtendedSolution, platform_mod.Platform]


def _has_jaxtyping(hint) -> bool:
    """Whether a type hint is, or contains (in a union, tuple, dict, ...), a jaxtyping array type."""
    if isinstance(hint, type) and issubclass(hint, AbstractArray):
        return True
    return any(_has_jaxtyping(a) for a in typing.get_args(hint))


def _has_bare_array(hint) -> bool:
    """Whether a type hint contains ``jax.Array`` outside a jaxtyping annotation."""
    if isinstance(hint, type) and issubclass(hint, AbstractArray):
        return False
    return hint is jax.Array or any(_has_bare_array(a) for a in typing.get_args(hint))


def _public_functions(module):
    """Public functions and methods (including ``__call__`` and property getters) defined in ``module``."""
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:
            for key, member in vars(obj).items():
                if key.startswith("_") and key != "__call__":
                    continue
                member = member.fget if isinstance(member, property) else member
                if inspect.isfunction(member):
                    yield f"{name}.{key}", member


# --------------------------------------------------------------------------- (a) annotations are present


def test_detector_tells_annotated_from_bare():
    from jaxtyping import Array, Float

    def bare(x: jax.Array) -> jax.Array:
        return x

    def shaped(x: Float[Array, "n 3"]) -> Float[Array, " n"]:  # noqa: F722
        return x[:, 0]

    assert not _has_jaxtyping(typing.get_type_hints(bare)["x"]) and _has_bare_array(typing.get_type_hints(bare)["x"])
    hints = typing.get_type_hints(shaped)
    assert _has_jaxtyping(hints["x"]) and _has_jaxtyping(hints["return"]) and not _has_bare_array(hints["x"])


@pytest.mark.parametrize("fn, params, returns", ANNOTATED, ids=lambda v: getattr(v, "__qualname__", None))
def test_array_parameters_and_return_are_annotated(fn, params, returns):
    hints = typing.get_type_hints(fn)
    assert set(params) <= set(inspect.signature(fn).parameters), f"{fn.__qualname__}: unknown parameter in the list"
    for p in params:
        assert p in hints and _has_jaxtyping(hints[p]), f"{fn.__qualname__}({p}) lacks a jaxtyping shape annotation"
    if returns:
        assert _has_jaxtyping(hints["return"]), f"{fn.__qualname__} return lacks a jaxtyping shape annotation"


@pytest.mark.parametrize("cls", ANNOTATED_FIELDS, ids=lambda c: c.__qualname__)
def test_module_array_fields_are_annotated(cls):
    hints = typing.get_type_hints(cls)
    arrays = {k: h for k, h in hints.items() if _has_jaxtyping(h) or _has_bare_array(h)}
    assert arrays, cls.__qualname__
    assert not [k for k, h in arrays.items() if _has_bare_array(h)], cls.__qualname__


@pytest.mark.parametrize("module", COVERED, ids=lambda m: m.__name__)
def test_no_bare_array_annotation_in_public_functions(module):
    bare = []
    for qualname, fn in _public_functions(module):
        hints = typing.get_type_hints(getattr(fn, "on_system", fn))  # exact measures: the wrapped function
        bare += [f"{qualname}({k})" for k, h in hints.items() if _has_bare_array(h)]
    assert not bare, f"bare jax.Array annotations (give a jaxtyping shape): {bare}"


def test_library_does_not_check_at_runtime(hexa):
    """No runtime checking in library code: no decorator on the functions, no import hook on the package."""
    import sys

    for module in COVERED:
        for qualname, fn in _public_functions(module):
            assert not hasattr(fn, "__wrapped__"), f"{qualname} is wrapped"
    assert not [f for f in sys.meta_path if "jaxtyping" in type(f).__module__]
    # u of length n + 1 fails in JAX itself (broadcasting), not in a type checker
    with pytest.raises(TypeError) as info:
        allocation.rotor_forces(hexa, jnp.ones(7))
    assert not isinstance(info.value, TypeCheckError)


# --------------------------------------------------------------------------- (b) runtime checks


def checked(fn):
    return jaxtyped(typechecker=beartype)(fn)


def checked_jit(fn):
    """Checked at trace time, then compiled: one compilation is cheaper than many eager dispatches."""
    return jax.jit(checked(fn))


@pytest.fixture(scope="module")
def hexa():
    return presets.paper_hexarotor()


@pytest.fixture(scope="module")
def state(hexa):
    c, s = np.cos(0.3), np.sin(0.3)
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    return dynamics.initial_state(hexa, p=jnp.array([0.1, -0.2, 1.0]), R=R,
                                  rotor_speed="hover")


def test_so3_checked(hexa):
    w = jnp.array([0.3, -0.2, 0.5])
    x = jnp.array([1.0, 2.0, -0.5])
    np.testing.assert_allclose(checked(so3.hat)(w) @ x, np.cross(w, x), atol=1e-15)

    @jax.jit  # each function is checked while tracing; one compilation for all of them
    def chain(w):
        R = checked(so3.exp)(w)
        batch = jnp.stack([R, R.T, jnp.eye(3)])  # "*batch 3 3"
        return (R, checked(so3.log)(R), checked(so3.quat_to_rot)(checked(so3.rot_to_quat)(R)),
                checked(so3.attitude_error)(R, jnp.eye(3)), checked(so3.orthonormality_error)(batch),
                checked(so3.rot_z)(w[2]))

    R, log_R, R_q, e, drift, Rz = chain(w)
    np.testing.assert_allclose(log_R, w, atol=1e-12)
    np.testing.assert_allclose(R_q, R, atol=1e-12)
    theta = np.linalg.norm(w)
    np.testing.assert_allclose(e, np.sin(theta) * np.asarray(w) / theta, atol=1e-12)  # e_R = sin(theta) a
    np.testing.assert_allclose(drift, 0.0, atol=1e-12)
    c, s = np.cos(w[2]), np.sin(w[2])
    np.testing.assert_allclose(Rz, [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]], atol=1e-15)
    for fn, bad in ((so3.hat, jnp.ones(4)), (so3.exp, jnp.ones(2)), (so3.log, jnp.eye(3)[:, :2]),
                    (so3.orthonormality_error, jnp.ones((3, 3, 2))), (so3.rot_x, jnp.ones(2))):
        with pytest.raises(TypeCheckError):
            checked(fn)(bad)
    with pytest.raises(TypeCheckError):
        checked(so3.attitude_error)(R, jnp.eye(2))


def test_platform_and_allocation_checked(hexa):
    n = hexa.n_rotors
    pos = checked(platform_mod.rotor_positions)(hexa)
    z = checked(platform_mod.rotor_axes)(hexa)
    assert pos.shape == (n, 3) and z.shape == (n, 3)
    np.testing.assert_allclose(np.linalg.norm(pos, axis=1), hexa.arm_length, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), 1.0, rtol=1e-12)
    a_i, _ = checked(platform_mod.per_rotor_angles)(hexa)
    np.testing.assert_allclose(a_i, hexa.alpha_sign * hexa.alpha)
    G = checked(allocation.allocation_matrix)(hexa)
    F = checked(allocation.force_matrix)(hexa)
    M = checked(allocation.moment_matrix)(hexa)
    np.testing.assert_array_equal(G, jnp.concatenate([F, M]))
    u_h = checked(allocation.hover_inputs)(hexa)
    np.testing.assert_allclose(G @ u_h, checked(allocation.hover_wrench)(hexa), atol=1e-9)
    f_c, tau_c = checked(allocation.wrench)(hexa, u_h)
    np.testing.assert_allclose(checked(allocation.rotor_forces)(hexa, u_h).sum(0), f_c, atol=1e-9)
    drag, thrust_moment = checked(allocation.rotor_moments)(hexa, u_h)
    np.testing.assert_allclose((drag + thrust_moment).sum(0), tau_c, atol=1e-9)
    np.testing.assert_allclose(checked(platform_mod.Platform.u_max.fget)(hexa), hexa.rotor_speed_max**2)
    J = checked(platform_mod.lumped_inertia)(pos, 0.1, 1.0, 0.1)
    np.testing.assert_allclose(J, J.T)

    per_rotor = jnp.full((n,), 0.2)
    G_i = checked(allocation.allocation_matrix)(hexa, per_rotor)  # independent angles bind n = 6 as well
    np.testing.assert_allclose(G_i[:3], checked(allocation.force_matrix)(hexa, per_rotor))
    # n is not a field the checker can read off a Platform: it is bound by the first array argument
    with pytest.raises(TypeCheckError):  # u of length n + 1 against n per-rotor angles
        checked(allocation.rotor_forces)(hexa, jnp.ones(n + 1), per_rotor)
    with pytest.raises(TypeCheckError):
        checked(allocation.wrench)(hexa, jnp.ones(n + 1), per_rotor, per_rotor)
    with pytest.raises(TypeCheckError):  # cant of length n, dihedral of length n + 1
        checked(allocation.allocation_matrix)(hexa, per_rotor, jnp.full((n + 1,), 0.2))
    with pytest.raises(TypeCheckError):  # positions (n, 2)
        checked(platform_mod.lumped_inertia)(pos[:, :2], 0.1, 1.0, 0.1)
    with pytest.raises(TypeCheckError):
        checked(platform_mod.rotor_axes)(hexa, jnp.zeros((n, 2)))


def test_dynamics_allocators_control_checked(hexa, state):
    n = hexa.n_rotors
    checked(dynamics.initial_state)(hexa, p=jnp.zeros(3), R=jnp.array([1.0, 0.0, 0.0, 0.0]))
    with pytest.raises(TypeCheckError):
        checked(dynamics.initial_state)(hexa, p=jnp.zeros(2))
    f_b = jnp.array([0.0, 0.0, float(hexa.weight)])
    p_dot, v_dot, R_dot, omega_dot = checked(dynamics.rigid_body_derivative)(hexa, state, f_b, jnp.zeros(3))
    np.testing.assert_allclose(v_dot, state.R @ f_b / hexa.mass - jnp.array([0.0, 0.0, hexa.gravity]), atol=1e-12)
    with pytest.raises(TypeCheckError):
        checked(dynamics.rigid_body_derivative)(hexa, state, f_b[:2], jnp.zeros(3))
    u_cmd = allocation.hover_inputs(hexa)
    u, _, _ = checked(dynamics.IdealMotor.applied)(dynamics.IdealMotor(), hexa, state.rotor_speed, u_cmd)
    np.testing.assert_array_equal(u, u_cmd)
    with pytest.raises(TypeCheckError):
        checked(dynamics.IdealMotor.applied)(dynamics.IdealMotor(), hexa, state.rotor_speed, jnp.ones(n + 1))

    data = allocators.prepare_allocation(hexa)
    w = allocation.hover_wrench(hexa)
    alloc = checked(allocators.PseudoInverse.__call__)(allocators.PseudoInverse(), data, w)
    np.testing.assert_allclose(alloc.achieved, w, atol=1e-9)
    with pytest.raises(TypeCheckError):  # a (5,) wrench
        checked(allocators.PseudoInverse.__call__)(allocators.PseudoInverse(), data, w[:5])
    rec = checked(allocators.allocation_record)(data.G, data.u_min, data.u_max, w, alloc.u)
    np.testing.assert_allclose(rec.achieved, data.G @ alloc.u, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeCheckError):  # G of shape (5, n)
        checked(allocators.allocation_record)(data.G[:5], data.u_min, data.u_max, w, alloc.u)
    with pytest.raises(TypeCheckError):  # u of length n + 1
        checked(allocators.allocation_record)(data.G, data.u_min, data.u_max, w, jnp.ones(n + 1))

    ctrl = control.FullyActuatedSE3()
    ref = reference.Hover(position=(0.1, -0.2, 1.0), duration=5.0)
    sample = checked(reference.Hover.__call__)(ref, 1.0)
    np.testing.assert_allclose(sample.p, [0.1, -0.2, 1.0])
    wrench_b, _ = checked_jit(control.FullyActuatedSE3.__call__)(ctrl, hexa, state, ctrl.init_state(hexa), sample)
    # on the reference position with zero velocity the force is m g R^T e3 (no position error)
    np.testing.assert_allclose(wrench_b[:3], hexa.weight * state.R.T[:, 2], rtol=1e-9)
    with pytest.raises(TypeCheckError):
        checked(reference.Hover.__call__)(ref, jnp.array([1.0, 2.0]))
    rpy = checked(reference.ConstantAttitude.angles)(reference.ConstantAttitude((0.1, 0.2, 0.3)), 2.0)
    np.testing.assert_allclose(rpy, [0.1, 0.2, 0.3])


def test_metrics_analysis_objectives_tilting_checked(hexa):
    rng = np.random.default_rng(0)
    err = jnp.asarray(rng.normal(size=(7, 3)))
    np.testing.assert_allclose(checked(metrics.mae)(err), np.mean(np.abs(err), axis=0))
    np.testing.assert_allclose(checked(metrics.rms_norm)(err), np.sqrt(np.mean(np.sum(err**2, axis=1))))
    np.testing.assert_allclose(checked(metrics.max_abs)(err[:, 0]), np.max(np.abs(err[:, 0])))  # "T *k", k empty
    with pytest.raises(TypeCheckError):
        checked(metrics.rms_norm)(err[:, 0])

    a = jnp.concatenate([jnp.eye(3), -jnp.eye(3)])

    @jax.jit
    def measured(platform):
        return (checked(measures.singular_values)(platform), checked(measures.condition_number)(platform),
                checked(measures.hover_efficiency)(platform), checked(polytopes.halfspace_volume)(a, jnp.ones(6)),
                checked(polytopes.halfspace_area)(a[jnp.array([0, 1, 3, 4]), :2], jnp.ones(4)))

    sv, cond, eta, volume, area = measured(hexa)
    np.testing.assert_allclose(cond, sv[0] / sv[-1], rtol=1e-9)
    np.testing.assert_allclose(eta, np.cos(5 * np.pi / 36) * np.cos(np.pi / 18), rtol=1e-9)  # Table II angles
    with pytest.raises(TypeCheckError):
        checked(measures.singular_values)(hexa, jnp.zeros((hexa.n_rotors, 2)))
    # the cube |f_k| <= 1: volume 8, square section area 4
    np.testing.assert_allclose(volume, 8.0, rtol=1e-12)
    np.testing.assert_allclose(area, 4.0, rtol=1e-12)
    with pytest.raises(TypeCheckError):  # m normals, m + 1 offsets
        checked(polytopes.halfspace_volume)(a, jnp.ones(7))

    design = types.SimpleNamespace(platform=hexa)
    np.testing.assert_allclose(checked(objectives.HoverEfficiency.measure)(objectives.HoverEfficiency(), design), eta)
    term = objectives.Constrained(objectives.HoverEfficiency(), weight=1.0, lower=0.9, penalty=10.0)
    cost = checked(type(term).cost_of)(term, eta)
    np.testing.assert_allclose(cost, -eta + 10.0 * (0.9 - eta) ** 2, rtol=1e-12)
    with pytest.raises(TypeCheckError):
        checked(type(term).cost_of)(term, jnp.ones(2))

    tilt = presets.cs_ai_ting_6r()
    u_h = allocation.hover_inputs(tilt)
    w = allocation.hover_wrench(tilt)
    u, G = checked_jit(tilting.speeds_at)(tilt, w, tilt.alpha, tilt.beta, u_h)
    np.testing.assert_allclose(G @ u, w, atol=1e-8)
    with pytest.raises(TypeCheckError):  # u_hint of length n + 1
        checked(tilting.speeds_at)(tilt, w, tilt.alpha, tilt.beta, jnp.ones(tilt.n_rotors + 1))


# --------------------------------------------------------------------------- (c) under jit


def test_checked_under_jit(hexa):
    G = jax.jit(checked(allocation.allocation_matrix))(hexa)
    np.testing.assert_allclose(G, allocation.allocation_matrix(hexa), atol=1e-15)
    rotate = jax.jit(checked(so3.exp))
    np.testing.assert_allclose(rotate(jnp.zeros(3)), jnp.eye(3))
    with pytest.raises(TypeCheckError):  # raised while tracing
        rotate(jnp.zeros(2))
    # vmap keeps the unbatched contract: the checker sees one (3,) vector per call
    np.testing.assert_allclose(jax.vmap(checked(so3.exp))(jnp.zeros((4, 3))), jnp.broadcast_to(jnp.eye(3), (4, 3, 3)))
