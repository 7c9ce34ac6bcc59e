"""SO(3) utilities: hat/vee, elementary rotations, exp/log, quaternions (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from jaxrotor import so3

RNG = np.random.default_rng(20240601)
E1, E2, E3 = np.eye(3)


def random_unit(rng, k=None):
    v = rng.normal(size=(3,) if k is None else (k, 3))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


# ----------------------------------------------------------------------------- hat / vee


def test_hat_matches_cross_product_and_is_skew():
    for _ in range(20):
        w, x = RNG.normal(size=3), RNG.normal(size=3)
        W = np.asarray(so3.hat(w))
        np.testing.assert_allclose(W @ x, np.cross(w, x), rtol=0, atol=1e-14)
        np.testing.assert_array_equal(W.T, -W)
        np.testing.assert_array_equal(np.diag(W), 0.0)


def test_hat_explicit_entries():
    W = np.asarray(so3.hat(jnp.array([1.0, 2.0, 3.0])))
    np.testing.assert_array_equal(W, [[0.0, -3.0, 2.0], [3.0, 0.0, -1.0], [-2.0, 1.0, 0.0]])


def test_vee_inverts_hat_both_ways():
    for _ in range(20):
        w = RNG.normal(size=3)
        np.testing.assert_array_equal(np.asarray(so3.vee(so3.hat(w))), w)
        A = RNG.normal(size=(3, 3))
        S = A - A.T
        np.testing.assert_allclose(np.asarray(so3.hat(so3.vee(S))), S, atol=1e-15)
        # vee takes the skew-symmetric part of any matrix
        np.testing.assert_allclose(np.asarray(so3.vee(A)), np.asarray(so3.vee(0.5 * (A - A.T))), atol=1e-15)


# ----------------------------------------------------------------------------- elementary rotations


@pytest.mark.parametrize("rot", [so3.rot_x, so3.rot_y, so3.rot_z])
def test_elementary_rotations_are_proper_orthonormal(rot):
    for a in RNG.uniform(-2 * np.pi, 2 * np.pi, size=10):
        R = np.asarray(rot(a))
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-15)
        assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-14)


def test_elementary_rotations_right_handed_sign():
    h = np.pi / 2
    np.testing.assert_allclose(np.asarray(so3.rot_z(h)) @ E1, E2, atol=1e-15)  # R_z(pi/2) x = y
    np.testing.assert_allclose(np.asarray(so3.rot_x(h)) @ E2, E3, atol=1e-15)  # R_x(pi/2) y = z
    np.testing.assert_allclose(np.asarray(so3.rot_y(h)) @ E3, E1, atol=1e-15)  # R_y(pi/2) z = x
    np.testing.assert_allclose(np.asarray(so3.rot_y(h)) @ E1, -E3, atol=1e-15)  # R_y(pi/2) x = -z


@pytest.mark.parametrize("axis, rot", [(E1, so3.rot_x), (E2, so3.rot_y), (E3, so3.rot_z)])
def test_elementary_rotation_equals_exp_and_scipy(axis, rot):
    for a in (-2.5, -0.3, 0.0, 0.7, 3.0):
        R = np.asarray(rot(a))
        np.testing.assert_allclose(R, np.asarray(so3.exp(a * axis)), atol=1e-15)
        np.testing.assert_allclose(R, Rotation.from_rotvec(a * axis).as_matrix(), atol=1e-15)
        # composition law R(a) R(b) = R(a + b)
        np.testing.assert_allclose(R @ np.asarray(rot(0.4)), np.asarray(rot(a + 0.4)), atol=1e-14)


# ----------------------------------------------------------------------------- exp / log


def test_exp_matches_scipy_rotvec():
    for _ in range(20):
        w = RNG.normal(size=3) * RNG.uniform(0, 3)
        np.testing.assert_allclose(np.asarray(so3.exp(w)), Rotation.from_rotvec(w).as_matrix(), atol=1e-14)


def test_exp_log_round_trip_random():
    for _ in range(50):
        theta = RNG.uniform(0.0, np.pi - 1e-3)
        w = theta * random_unit(RNG)
        R = so3.exp(w)
        np.testing.assert_allclose(np.asarray(so3.log(R)), w, atol=1e-13)
        # and the other way round from a random rotation
        Rr = Rotation.random(random_state=int(RNG.integers(1 << 30))).as_matrix()
        np.testing.assert_allclose(np.asarray(so3.exp(so3.log(Rr))), Rr, atol=1e-13)


@pytest.mark.parametrize("scale", [0.0, 1e-12, 1e-9, 1e-6, 1e-4, 1e-2])
def test_exp_log_round_trip_near_identity(scale):
    for _ in range(5):
        w = scale * random_unit(RNG)
        R = np.asarray(so3.exp(w))
        np.testing.assert_allclose(R, Rotation.from_rotvec(w).as_matrix(), atol=1e-16)
        lw = np.asarray(so3.log(R))
        # relative accuracy, not just absolute: the rotation vector is recovered to 1e-9 of its size
        assert np.linalg.norm(lw - w) <= 1e-9 * scale + 1e-18


@pytest.mark.parametrize("gap", [1e-6, 1e-4, 1e-3 - 1e-9, 1e-3 + 1e-9, 1e-2])
def test_exp_log_round_trip_near_pi(gap):
    for _ in range(5):
        w = (np.pi - gap) * random_unit(RNG)
        R = so3.exp(w)
        np.testing.assert_allclose(np.asarray(so3.log(R)), w, atol=1e-10)


def test_log_at_exact_half_turn():
    for axis in (E1, E2, E3, random_unit(RNG)):
        R = np.asarray(so3.exp(np.pi * axis))
        w = np.asarray(so3.log(R))
        assert np.linalg.norm(w) == pytest.approx(np.pi, abs=1e-12)
        # either sign is the same rotation
        assert min(np.linalg.norm(w - np.pi * axis), np.linalg.norm(w + np.pi * axis)) < 1e-7
        np.testing.assert_allclose(np.asarray(so3.exp(w)), R, atol=1e-12)


def test_exp_jacobian_at_zero_is_the_generators():
    J = np.asarray(jax.jacobian(so3.exp)(jnp.zeros(3)))  # (3, 3, 3): dR_ij / dw_k
    for k in range(3):
        np.testing.assert_allclose(J[:, :, k], np.asarray(so3.hat(np.eye(3)[k])), atol=1e-15)


@pytest.mark.parametrize(
    "w",
    [np.zeros(3), np.array([1e-9, -2e-9, 5e-10]), np.array([0.3, -0.4, 1.1]),
     (np.pi - 1e-6) * np.array([0.0, 0.0, 1.0]), (np.pi - 1e-6) * np.array([2.0, -1.0, 2.0]) / 3.0],
)
def test_log_exp_derivatives_finite_and_consistent(w):
    # compiled once for every w (op by op, the first w paid ~10 s of per-operation dispatch)
    jac_exp, jac_log = _compiled("jac_exp", jax.jacobian(so3.exp)), _compiled("jac_log", jax.jacobian(so3.log))
    jac_roundtrip = _compiled("jac_roundtrip", jax.jacobian(lambda x: so3.log(so3.exp(x))))
    grad_sum = _compiled("grad_sum", jax.grad(lambda x: jnp.sum(so3.log(so3.exp(x)))))
    log_jvp = _compiled("log_jvp", lambda R, dR: jax.jvp(so3.log, (R,), (dR,))[1])
    log_step = _compiled("log_step", lambda R, v: so3.log(R @ so3.exp(v)))
    w = jnp.asarray(w)
    R = so3.exp(w)
    J_exp = np.asarray(jac_exp(w))
    J_log = np.asarray(jac_log(R))
    assert np.all(np.isfinite(J_exp)) and np.all(np.isfinite(J_log))
    # log(exp(w)) = w for |w| < pi, so its Jacobian is the identity (chain rule through both maps)
    np.testing.assert_allclose(np.asarray(jac_roundtrip(w)), np.eye(3), atol=1e-8)
    g = np.asarray(grad_sum(w))
    np.testing.assert_allclose(g, np.ones(3), atol=1e-8)
    # directional derivative of log along the manifold vs central finite differences
    for _ in range(3):
        xi = RNG.normal(size=3)
        jvp = log_jvp(R, R @ so3.hat(xi))
        # keep the step well inside the distance to the cut at |w| = pi
        h = min(1e-6, 1e-2 * (np.pi - float(jnp.linalg.norm(w)))) / np.linalg.norm(xi)
        fd = (np.asarray(log_step(R, h * xi)) - np.asarray(log_step(R, -h * xi))) / (2 * h)
        np.testing.assert_allclose(np.asarray(jvp), fd, atol=1e-6)


_COMPILED: dict = {}


def _compiled(name, fn):
    """``jax.jit(fn)``, built once per name for the whole module."""
    if name not in _COMPILED:
        _COMPILED[name] = jax.jit(fn)
    return _COMPILED[name]


def test_log_gradient_at_identity_exact():
    # d log(I + eps hat(xi)) / d eps = xi at eps = 0
    for _ in range(3):
        xi = RNG.normal(size=3)
        _, jvp = jax.jvp(so3.log, (jnp.eye(3),), (so3.hat(xi),))
        np.testing.assert_allclose(np.asarray(jvp), xi, atol=1e-15)
    g = jax.grad(lambda R: jnp.sum(so3.log(R) ** 2))(jnp.eye(3))
    np.testing.assert_array_equal(np.asarray(g), 0.0)


# ----------------------------------------------------------------------------- quaternions


def test_quat_to_rot_matches_scipy():
    for _ in range(20):
        q = RNG.normal(size=4)
        q /= np.linalg.norm(q)
        R = np.asarray(so3.quat_to_rot(q))
        R_ref = Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()  # scipy is (x, y, z, w)
        np.testing.assert_allclose(R, R_ref, atol=1e-14)
    # non-unit input is normalised
    np.testing.assert_allclose(np.asarray(so3.quat_to_rot(np.array([2.0, 0, 0, 0]))), np.eye(3), atol=0)


def test_quat_axis_angle_convention():
    # q = (cos(t/2), sin(t/2) a) rotates by t about a
    t, a = 0.8, np.array([1.0, 2.0, 2.0]) / 3.0
    q = np.concatenate([[np.cos(t / 2)], np.sin(t / 2) * a])
    np.testing.assert_allclose(np.asarray(so3.quat_to_rot(q)), np.asarray(so3.exp(t * a)), atol=1e-15)


def _shepperd_branch(R):
    R = np.asarray(R)
    return int(np.argmax([np.trace(R), R[0, 0], R[1, 1], R[2, 2]]))


@pytest.mark.parametrize(
    "q, branch",
    [
        (np.array([0.9, 0.1, -0.3, 0.2]), 0),  # w largest
        (np.array([0.1, 0.9, -0.3, 0.2]), 1),  # x largest
        (np.array([0.1, 0.2, -0.9, 0.3]), 2),  # y largest
        (np.array([0.05, -0.2, 0.3, 0.9]), 3),  # z largest
        (np.array([0.0, 0.0, 0.0, 1.0]), 3),  # half turn about z, w = 0
        (np.array([0.0, 0.6, 0.8, 0.0]), 2),  # half turn, w = 0
    ],
)
def test_quaternion_round_trip_shepperd_branches(q, branch):
    q = q / np.linalg.norm(q)
    R = np.asarray(so3.quat_to_rot(q))
    assert _shepperd_branch(R) == branch
    q2 = np.asarray(so3.rot_to_quat(R))
    assert q2[0] >= 0
    assert np.linalg.norm(q2) == pytest.approx(1.0, abs=1e-15)
    q_ref = q if q[0] >= 0 else -q
    if q[0] == 0:  # sign is arbitrary for a half turn
        assert min(np.linalg.norm(q2 - q), np.linalg.norm(q2 + q)) < 1e-14
    else:
        np.testing.assert_allclose(q2, q_ref, atol=1e-14)
    np.testing.assert_allclose(np.asarray(so3.quat_to_rot(q2)), R, atol=1e-14)


def test_rot_to_quat_random_and_sign():
    for _ in range(30):
        q = RNG.normal(size=4)
        q /= np.linalg.norm(q)
        q2 = np.asarray(so3.rot_to_quat(so3.quat_to_rot(q)))
        np.testing.assert_allclose(q2, q * np.sign(q[0]), atol=1e-14)


# ----------------------------------------------------------------------------- drift measure


def test_orthonormality_error():
    assert float(so3.orthonormality_error(jnp.eye(3))) == 0.0
    R = np.asarray(so3.exp(np.array([0.3, -1.2, 0.5])))
    assert float(so3.orthonormality_error(R)) < 1e-15
    for e in (1e-8, 1e-3, 0.1):
        # (1 + e) R: R^T R - I = ((1 + e)^2 - 1) I, Frobenius norm sqrt(3) (2e + e^2)
        assert float(so3.orthonormality_error((1 + e) * R)) == pytest.approx(np.sqrt(3) * (2 * e + e**2), rel=1e-7)
    # shear: R^T R - I = [[0, s, 0], [s, s^2, 0], [0, 0, 0]] for A = [[1, s, 0], [0, 1, 0], [0, 0, 1]]
    s = 0.01
    A = np.array([[1.0, s, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert float(so3.orthonormality_error(A)) == pytest.approx(np.sqrt(2 * s**2 + s**4), rel=1e-12)
    # batched input
    errs = np.asarray(so3.orthonormality_error(np.stack([np.eye(3), 2 * np.eye(3)])))
    np.testing.assert_allclose(errs, [0.0, 3 * np.sqrt(3)], atol=1e-15)


def test_project_restores_rotation():
    R = np.asarray(so3.exp(np.array([0.2, 0.5, -0.7])))
    noisy = R + 1e-4 * RNG.normal(size=(3, 3))
    P = np.asarray(so3.project(noisy))
    assert float(so3.orthonormality_error(P)) < 1e-14
    assert np.linalg.det(P) == pytest.approx(1.0, abs=1e-14)
    assert np.linalg.norm(P - R) < 1e-3
    np.testing.assert_allclose(np.asarray(so3.project(R)), R, atol=1e-14)
