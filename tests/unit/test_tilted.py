"""The tilted full-pose hover (jaxrotor.tilted): the hover axis against an independent scan of the zero-moment
force plane (scipy), its invariants, the axis law and its allocation in closed form, the static analysis and the
verdict calling it, float32."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg as sl

from jaxrotor import so3
from jaxrotor.allocation import allocation_matrix
from jaxrotor.design.platform import star_platform
from jaxrotor.design.presets import PRESETS, TABLE_II
from jaxrotor.tilted import AXIS_MARGIN, MAX_AXIS_TILT, axis_allocation, axis_margin, hover_axis

# a tilted hexarotor on the paper hexarotor's arms, mass and rotors whose rotor 6 loss leaves a hover axis
# 0.8 deg from body z with every other rotor spinning
ALPHA = [15.7, -35.9, -26.9, 24.5, -37.0, -12.6]
BETA = [13.9, 6.6, 3.5, 13.5, 7.3, 6.6]


def _tilted_hex():
    T = TABLE_II
    return star_platform(6, T["arm_length"], mass=T["mass"], c_f=T["c_f"], c_tau=T["c_tau"],
                         alpha=np.radians(ALPHA).tolist(), beta=np.radians(BETA).tolist(), inertia=T["J_a"],
                         gravity=T["gravity"], rotor_speed_max=700.0, name="tilted")


def _lost(pf, j):
    G = np.asarray(allocation_matrix(pf))
    return G * (np.arange(G.shape[1]) != j)


def _scan(G, lo, hi, weight, keep, steps=20001):
    """Independent: the zero-moment force plane from scipy's null space, every direction within MAX_AXIS_TILT on
    a fine angle grid; returns (directions, tilts, margins) of the valid ones."""
    F, M = G[:3][:, keep], G[3:][:, keep]
    N = sl.null_space(M)
    FN = F @ N
    U = np.linalg.svd(FN)[0][:, :2]
    dirs, tilts, margins = [], [], []
    for phi in np.linspace(0, 2 * np.pi, steps):
        d = U @ [np.cos(phi), np.sin(phi)]
        if d[2] < np.cos(MAX_AXIS_TILT):
            continue
        u = weight * N @ np.linalg.lstsq(FN, d, rcond=None)[0]
        if np.any(u > hi[keep]):
            continue
        dirs.append(d)
        tilts.append(np.arccos(d[2]))
        margins.append(np.min(np.minimum(u - lo[keep], hi[keep] - u)) / u.mean())
    return np.array(dirs), np.array(tilts), np.array(margins)


def test_hover_axis_of_a_tilted_hexarotor_against_a_scan():
    """Rotor 6 lost: the axis is the least tilted direction of the zero-moment plane with margin >= AXIS_MARGIN
    (scipy scan, within the candidate spacing); its inputs make zero moment and the weight along the axis, rotor 6
    off, every input within its bounds."""
    pf = _tilted_hex()
    G = _lost(pf, 5)
    lo, hi, w = np.asarray(pf.u_min), np.asarray(pf.u_max), float(pf.mass * pf.gravity)
    h = hover_axis(jnp.asarray(G), pf.u_min, pf.u_max, w)
    assert bool(h.feasible) and float(h.margin) >= AXIS_MARGIN
    u = np.asarray(h.inputs)
    np.testing.assert_allclose(G[3:] @ u, 0.0, atol=1e-9 * w)  # zero moment
    np.testing.assert_allclose(G[:3] @ u, w * np.asarray(h.axis), rtol=1e-9, atol=1e-9 * w)  # the weight along d
    assert u[5] == 0.0 and np.all(u[:5] > 0) and np.all(u <= hi)
    keep = np.arange(6) != 5
    dirs, tilts, margins = _scan(G, lo, hi, w, keep)
    ok = margins >= AXIS_MARGIN
    assert float(h.tilt) == pytest.approx(tilts[ok].min(), abs=0.01)  # the candidates are ~0.08 rad apart in v
    assert float(h.tilt) < 0.05  # a level hover in all but 0.8 deg: full pose judged against the level reference
    nearest = np.argmin(np.linalg.norm(dirs - np.asarray(h.axis), axis=1))  # the same direction on the scan
    assert np.linalg.norm(dirs[nearest] - np.asarray(h.axis)) < 1e-3
    assert float(h.margin) == pytest.approx(margins[nearest], abs=1e-3)


def test_axis_margin_is_the_best_margin_within_the_cone():
    """``axis_margin`` is the scipy scan's best margin over the zero-moment directions within MAX_AXIS_TILT, capped
    by ``AXIS_MARGIN + 10 (MAX_AXIS_TILT - tilt)`` near the cone's edge (within the candidate spacing), for each loss of the tilted hexarotor, and it is at least AXIS_MARGIN exactly
    when :func:`hover_axis` calls the hover feasible."""
    pf = _tilted_hex()
    lo, hi, w = np.asarray(pf.u_min), np.asarray(pf.u_max), float(pf.mass * pf.gravity)
    seen = set()
    for j in range(6):
        G = _lost(pf, j)
        keep = np.arange(6) != j
        r = float(axis_margin(jnp.asarray(G), pf.u_min, pf.u_max, w, alive=jnp.asarray(keep)))
        h = hover_axis(jnp.asarray(G), pf.u_min, pf.u_max, w, alive=jnp.asarray(keep))
        assert (r >= AXIS_MARGIN) == bool(h.feasible), j
        seen.add(bool(h.feasible))
        _, tilts, margins = _scan(G, lo, hi, w, keep, steps=4001)
        if margins.size:
            best = np.max(np.minimum(margins, AXIS_MARGIN + 10.0 * (MAX_AXIS_TILT - tilts)))
            assert r == pytest.approx(best, abs=0.02), j  # the candidates are ~0.08 rad apart
            assert r <= best + 1e-9  # the candidates are directions of the plane: never above the scan
    assert seen == {True, False}  # both sides of the rule are exercised


def test_rotor_loss_axis_margin_is_the_analysis_rule_and_differentiable():
    """The hard minimum of :func:`rotor_loss_axis_margin` over the six losses is at least AXIS_MARGIN exactly when the
    exact analysis holds every loss of a rank-6 hexarotor in full pose by its tilted hover (an outward dihedral
    and three cants on both sides of the rule), and its gradient in the cant matches central differences."""
    from jaxrotor.analysis import rotor_loss_axis_margin
    from jaxrotor.analysis.exact import rotor_loss

    T = TABLE_II
    sign = np.array([(-1.0) ** i for i in range(6)])

    def hexa(a0):
        return star_platform(6, T["arm_length"], mass=T["mass"], c_f=T["c_f"], c_tau=T["c_tau"],
                             alpha=(np.radians(a0) * sign).tolist(), beta=[np.radians(30.0)] * 6, inertia=T["J_a"],
                             gravity=T["gravity"], rotor_speed_max=1000.0, name="h")

    margin = jax.jit(rotor_loss_axis_margin, static_argnames=("temperature",))
    held = []
    for a0 in (4.0, 14.0, 25.0):
        pf = hexa(a0)
        r = float(margin(pf, temperature=0.0))
        outcomes = [loss.outcome for loss in rotor_loss(pf)]
        held.append(all(o == "full_pose" for o in outcomes))
        assert (r >= AXIS_MARGIN) == held[-1], (a0, r, outcomes)
        soft = float(margin(pf))
        assert r - 1e-3 * np.log(6) - 1e-12 <= soft <= r + 1e-12  # the soft minimum's bound
    assert held == [False, True, False]
    pf = hexa(14.0)
    f = jax.jit(lambda a: rotor_loss_axis_margin(pf, a * jnp.asarray(sign), temperature=1e-3))
    a, h = np.radians(14.0), 1e-6
    fd = (float(f(a + h)) - float(f(a - h))) / (2 * h)
    assert float(jax.grad(f)(jnp.asarray(a))) == pytest.approx(fd, rel=1e-4, abs=1e-7)


def test_no_hover_axis_for_a_flat_hexarotor_or_a_quadrotor():
    """A flat hexa-X losing a rotor: the zero-moment forces are vertical only, the opposite rotor idle (margin 0):
    not feasible (it releases yaw). A quadrotor losing a rotor: no zero-moment force at all. The paper hexarotor:
    a tilted hover exists (24 deg) but with 4 % of input room, below AXIS_MARGIN."""
    flat = PRESETS["hex_s550"]()
    h = hover_axis(jnp.asarray(_lost(flat, 0)), flat.u_min, flat.u_max, float(flat.mass * flat.gravity))
    assert not bool(h.feasible) and abs(float(h.margin)) < 1e-9 and float(h.tilt) < 1e-9
    quad = PRESETS["f450"]()
    h = hover_axis(jnp.asarray(_lost(quad, 1)), quad.u_min, quad.u_max, float(quad.mass * quad.gravity))
    assert not bool(h.feasible) and float(h.margin) == -np.inf
    paper = PRESETS["paper_hexarotor"]()
    h = hover_axis(jnp.asarray(_lost(paper, 0)), paper.u_min, paper.u_max, float(paper.mass * paper.gravity))
    assert not bool(h.feasible) and 0.0 < float(h.margin) < AXIS_MARGIN


def test_hover_axis_in_float32():
    """float32 finds the same axis to 1e-3 and the same feasibility."""
    pf = _tilted_hex()
    G = _lost(pf, 5)
    w = float(pf.mass * pf.gravity)
    h64 = hover_axis(jnp.asarray(G), pf.u_min, pf.u_max, w)
    h32 = hover_axis(jnp.asarray(G, jnp.float32), jnp.asarray(pf.u_min, jnp.float32),
                     jnp.asarray(pf.u_max, jnp.float32), jnp.float32(w))
    assert bool(h32.feasible) == bool(h64.feasible)
    np.testing.assert_allclose(np.asarray(h32.axis), np.asarray(h64.axis), atol=1e-3)


def test_axis_law_and_allocation_in_closed_form():
    """At the reference, turned so that R d = e3: the axis law asks the weight along d and no torque, and the
    allocation gives it exactly (G u = (m g d, 0)); _tilt_to maps e3 to d and is a rotation."""
    from jaxrotor.allocators import AllocationData
    from jaxrotor.control import FullyActuatedSE3, IntegralState, _tilt_to, axis_wrench
    from jaxrotor.dynamics import initial_state
    from jaxrotor.reference import Hover

    pf = _tilted_hex()
    G = jnp.asarray(_lost(pf, 5))
    w = pf.mass * pf.gravity
    h = hover_axis(G, pf.u_min, pf.u_max, w)
    d = h.axis
    Q = _tilt_to(d)
    np.testing.assert_allclose(np.asarray(Q @ jnp.asarray([0.0, 0, 1])), np.asarray(d), atol=1e-14)
    np.testing.assert_allclose(np.asarray(Q.T @ Q), np.eye(3), atol=1e-14)
    ref = Hover(jnp.asarray([0.0, 0.0, 1.0]), duration=1.0, yaw=0.3)(0.5)
    R = so3.rot_z(jnp.asarray(0.3)) @ Q.T  # the tilted hover attitude with heading 0.3
    state = initial_state(pf, p=ref.p, R=R)
    ctrl = FullyActuatedSE3()
    integral = IntegralState(int_p=jnp.zeros(3), int_R=jnp.zeros(3))
    wrench, _ = axis_wrench(ctrl, pf, state, integral, ref, d)
    np.testing.assert_allclose(np.asarray(wrench[:3]), np.asarray(w * d), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(wrench[3:]), 0.0, atol=1e-10)
    data = AllocationData(G=G, G_pinv=jnp.linalg.pinv(G), collective=jnp.ones(6), u_min=pf.u_min, u_max=pf.u_max)
    alloc = axis_allocation(data, h, wrench)
    np.testing.assert_allclose(np.asarray(G @ alloc.u), np.asarray(wrench), atol=1e-7 * w)


def test_axis_law_integrates_the_position_error_within_its_band():
    """axis_wrench's position integrator takes e_p clipped to +-AXIS_INTEGRAL_BAND per axis (anti-windup for the
    loss' excursion) and e_p itself within the band."""
    from jaxrotor.control import AXIS_INTEGRAL_BAND, FullyActuatedSE3, IntegralState, axis_wrench
    from jaxrotor.dynamics import initial_state
    from jaxrotor.reference import Hover

    pf = _tilted_hex()
    ref = Hover(jnp.asarray([0.0, 0.0, 1.0]), duration=1.0)(0.5)
    ctrl = FullyActuatedSE3()
    integral = IntegralState(int_p=jnp.zeros(3), int_R=jnp.zeros(3))
    b = AXIS_INTEGRAL_BAND
    d = jnp.asarray([0.0, 0.0, 1.0])
    for offset, expected in [((0.4, -0.3, 0.02), (-b, b, -0.02)), ((0.01, -0.02, 0.03), (-0.01, 0.02, -0.03))]:
        state = initial_state(pf, p=ref.p + jnp.asarray(offset))
        _, d_int = axis_wrench(ctrl, pf, state, integral, ref, d)
        np.testing.assert_allclose(np.asarray(d_int.int_p), expected, rtol=1e-12, atol=1e-15)


def test_static_analysis_says_full_pose_for_a_tilted_hover():
    """rotor_loss: rotor 6 of the tilted hexarotor takes rank from G, yet its hover axis is feasible: full_pose; the
    paper hexarotor's losses do not (its tilted hover has too little input room)."""
    from jaxrotor.analysis import rotor_loss

    out = rotor_loss(_tilted_hex())
    assert out[5].outcome == "full_pose" and out[5].full_pose_margin > 0
    assert "full_pose" not in [r.outcome for r in rotor_loss(PRESETS["paper_hexarotor"]())]


def test_verdict_takes_a_constant_tilted_attitude_as_full_pose():
    """fault_outcome_code: position held and a constant attitude tilted 0.2 rad about a horizontal axis, heading
    kept: full_pose; the same tilt wobbling by +-0.1 rad: not full pose; a constant tilt beyond MAX_AXIS_TILT: lost;
    a constant heading offset of 0.3 rad with the thrust axis level: yaw_released."""
    from jaxrotor.faults import Faults
    from jaxrotor.verdict import FAULT_OUTCOMES, fault_outcome_code

    t = jnp.linspace(0.0, 4.0, 401)
    zeros = jnp.zeros((t.shape[0], 3))
    eye = jnp.broadcast_to(jnp.eye(3), (t.shape[0], 3, 3))

    def outcome(rotvecs):
        R = jax.vmap(so3.exp)(rotvecs)
        tr = type("T", (), {"t": t, "R": R, "R_ref": eye, "p": zeros, "p_ref": zeros, "omega": zeros,
                            "diverged": False})()
        return FAULT_OUTCOMES[int(fault_outcome_code(tr, Faults("rotor_loss", 0, 0.5)))]

    axis = jnp.asarray([0.6, 0.8, 0.0])
    assert outcome(jnp.broadcast_to(0.2 * axis, (t.shape[0], 3))) == "full_pose"
    wobble = (0.2 + 0.1 * jnp.sin(2 * jnp.pi * 3 * t))[:, None] * axis
    assert outcome(wobble) != "full_pose"
    assert outcome(jnp.broadcast_to((MAX_AXIS_TILT + 0.1) * axis, (t.shape[0], 3))) == "lost"
    assert outcome(jnp.broadcast_to(jnp.asarray([0.0, 0.0, 0.3]), (t.shape[0], 3))) == "yaw_released"


@pytest.mark.parametrize("name, lost, dtype", [("tilted", 5, jnp.float64), ("octo_x8", 2, jnp.float64),
                                               ("tilted", 5, jnp.float32)])
def test_tilted_and_released_batch_equals_each_allocation_alone(name, lost, dtype):
    """The flight computer solves the tilted-hover and the yaw-released box least squares as one vmap batch of
    two, each with its own ridge (the same for six rotors, 1e-9 against 1e-12 for eight): the same allocations as
    axis_allocation and yaw_released_allocation called alone, at requests up to 3 m g that saturate rotors.

    Batched products round differently, and a lost rotor's zero column (and, for eight rotors, the two-dimensional
    null space) leaves H singular but for its ridge, so agreement is to that conditioning: the achieved wrench to
    1e-9 m g (float64) or 2e-3 m g (float32: a ridge of 1e-7), the inputs of the six-rotor problem to 1e-11 of
    u_max; the saturation flags are equal."""
    import equinox as eqx

    from jaxrotor.allocators import PseudoInverse
    from jaxrotor.flight import _tilted_and_released, yaw_released_allocation

    pf = _tilted_hex() if name == "tilted" else PRESETS[name]()
    data = PseudoInverse().prepare(pf)
    G = jnp.asarray(_lost(pf, lost), dtype)
    data = jax.tree.map(lambda x: jnp.asarray(x, dtype) if eqx.is_inexact_array(x) else x,
                        eqx.tree_at(lambda d: d.G, data, G))
    weight = float(pf.mass * pf.gravity)
    hover = hover_axis(G, data.u_min, data.u_max, weight, alive=jnp.arange(G.shape[1]) != lost)
    rng = np.random.default_rng(3)
    both = jax.jit(_tilted_and_released)
    alone = jax.jit(lambda d, h, wa, wd: (axis_allocation(d, h, wa), yaw_released_allocation(d, wd)))
    f64 = dtype == jnp.float64
    saturated = 0
    for k in range(6):
        w_axis, w_des = (jnp.asarray(np.r_[0, 0, weight, 0, 0, 0] + rng.normal(size=6) * np.r_[1, 1, 1, .1, .1, .1]
                                     * weight * 0.6 * k, dtype) for _ in range(2))
        got, ref = both(data, hover, w_axis, w_des), alone(data, hover, w_axis, w_des)
        for a, b in zip(got, ref):
            assert a.u.dtype == dtype
            np.testing.assert_allclose(np.asarray(a.achieved), np.asarray(b.achieved), rtol=0,
                                       atol=(1e-9 if f64 else 2e-3) * weight)
            if f64 and name == "tilted":
                np.testing.assert_allclose(np.asarray(a.u), np.asarray(b.u), rtol=0,
                                           atol=1e-11 * float(jnp.max(data.u_max)))
            np.testing.assert_array_equal(np.asarray(a.saturated), np.asarray(b.saturated))
            saturated += int(np.any(np.asarray(a.saturated)))
    assert saturated >= 4  # the requests reach the bounds
