"""Platform geometry (eqs. 3-4), Table I labels, lumped inertia and parameter validation."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.design.platform import _rotor_axis_reference, per_rotor_angles

RNG = np.random.default_rng(7)
KW = dict(mass=1.2, c_f=1e-5, c_tau=2e-7, inertia=[0.01, 0.012, 0.02])


from npref import np_rx, np_ry, np_rz  # noqa: E402  (independent NumPy rotations)


# ----------------------------------------------------------------------------- eq. (4): spin axes


def test_rotor_axes_closed_form_matches_matrix_product_random():
    for n in (3, 6, 8):
        gamma = RNG.uniform(0, 2 * np.pi, n)
        alpha = RNG.uniform(-1.5, 1.5, n)
        beta = RNG.uniform(0, 1.5, n)
        plat = jr.star_platform(n, 0.3, gamma=gamma, alpha=alpha, beta=beta, **KW)
        Z = np.asarray(jr.rotor_axes(plat))
        assert Z.shape == (n, 3)
        for i in range(n):
            ref = np.asarray(_rotor_axis_reference(gamma[i], alpha[i], beta[i]))
            np.testing.assert_allclose(Z[i], ref, atol=1e-15)
            # independent numpy product R_z(gamma) R_y(beta) R_x(alpha) z_B
            ref_np = np_rz(gamma[i]) @ np_ry(beta[i]) @ np_rx(alpha[i]) @ np.array([0.0, 0.0, 1.0])
            np.testing.assert_allclose(Z[i], ref_np, atol=1e-15)
        np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, atol=1e-15)


def test_rotor_axes_sign_conventions():
    # positive cant about the arm x-axis tilts z toward -y_arm; positive dihedral toward +x_arm
    p = jr.star_platform(1, 0.3, alpha=[0.3], **KW)
    np.testing.assert_allclose(np.asarray(jr.rotor_axes(p))[0], [0.0, -math.sin(0.3), math.cos(0.3)], atol=1e-16)
    p = jr.star_platform(1, 0.3, beta=[0.3], **KW)
    np.testing.assert_allclose(np.asarray(jr.rotor_axes(p))[0], [math.sin(0.3), 0.0, math.cos(0.3)], atol=1e-16)
    # rotor on +y arm (gamma = pi/2) with dihedral: axis tilts outward along +y
    p = jr.star_platform(1, 0.3, gamma=[math.pi / 2], beta=[0.3], **KW)
    np.testing.assert_allclose(np.asarray(jr.rotor_axes(p))[0], [0.0, math.sin(0.3), math.cos(0.3)], atol=1e-16)


def test_interdependent_angles_sign_pattern_table_ii():
    hexa = presets.paper_hexarotor()
    a0, b0 = 5 * math.pi / 36, math.pi / 18
    assert hexa.alpha.shape == () and hexa.beta.shape == ()
    assert float(hexa.alpha) == pytest.approx(a0) and float(hexa.beta) == pytest.approx(b0)
    a_i, b_i = (np.asarray(x) for x in per_rotor_angles(hexa))
    np.testing.assert_allclose(a_i, [(-1) ** i * a0 for i in range(1, 7)], atol=0)  # alpha_i = (-1)^i alpha_0
    np.testing.assert_allclose(b_i, np.full(6, b0), atol=0)
    np.testing.assert_array_equal(np.asarray(hexa.kappa), [(-1) ** i for i in range(1, 7)])  # kappa_i = (-1)^i
    np.testing.assert_allclose(np.asarray(hexa.gamma), [(i - 1) * math.pi / 3 for i in range(1, 7)], atol=1e-15)
    # overriding the interdependent angle (a tilting platform's servo angle) moves all rotors together
    a_o, _ = per_rotor_angles(hexa, alpha=jnp.asarray(0.1))
    np.testing.assert_allclose(np.asarray(a_o), 0.1 * np.array([-1, 1, -1, 1, -1, 1.0]), atol=0)
    Z = np.asarray(jr.rotor_axes(hexa))
    for i in range(6):
        ref = np_rz(i * math.pi / 3) @ np_ry(b0) @ np_rx((-1) ** (i + 1) * a0) @ np.array([0.0, 0.0, 1.0])
        np.testing.assert_allclose(Z[i], ref, atol=1e-15)


# ----------------------------------------------------------------------------- eq. (3): positions


def test_rotor_positions_eq3():
    n, l = 5, 0.42
    gamma = RNG.uniform(0, 2 * np.pi, n)
    delta = RNG.uniform(0, 1.5, n)
    plat = jr.star_platform(n, l, gamma=gamma, delta=delta, **KW)
    P = np.asarray(jr.rotor_positions(plat))
    for i in range(n):
        ref = l * np_rz(gamma[i]) @ np_ry(delta[i]) @ np.array([1.0, 0.0, 0.0])
        np.testing.assert_allclose(P[i], ref, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(P, axis=1), l, atol=1e-15)
    # literal eq. (3): R_y(delta) x_B points *below* the x-y plane for delta > 0
    assert np.all(P[:, 2] < 0)
    np.testing.assert_allclose(P[:, 2], -l * np.sin(delta), atol=1e-15)


def test_star_positions_default_layout():
    P = np.asarray(jr.rotor_positions(jr.star_platform(4, 0.25, **KW)))
    np.testing.assert_allclose(P, 0.25 * np.array([[1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0.0]]), atol=1e-16)


def test_explicit_platform_uses_given_geometry():
    pos = np.array([[0.2, 0.1, 0.0], [-0.2, 0.1, 0.0], [-0.2, -0.1, 0.0], [0.2, -0.1, 0.0]])
    ax = np.array([[0, 0, 1.0], [0, 0.6, 0.8], [0, 0, 1.0], [0.6, 0, 0.8]])
    p = jr.explicit_platform(pos, axes=ax, kappa=[-1, 1, -1, 1], **KW)
    np.testing.assert_array_equal(np.asarray(jr.rotor_positions(p)), pos)
    np.testing.assert_array_equal(np.asarray(jr.rotor_axes(p)), ax)
    assert p.n_rotors == 4


# ----------------------------------------------------------------------------- Table I labels


def test_paper_labels():
    assert presets.cs_4r().label() == "CS_4R"
    assert presets.cs_a0_ted_6r().label() == "CS_α0-Ted_6R"
    assert presets.paper_hexarotor().label() == "CS_α0β0-Ted_6R"
    assert presets.paper_hexarotor().label(ascii=True) == "CS_a0b0-Ted_6R"
    assert jr.class_label(presets.cs_a0_ted_6r(), ascii=True) == "CS_a0-Ted_6R"


@pytest.mark.parametrize(
    "kwargs, n, label",
    [
        (dict(), 4, "CS_4R"),
        (dict(delta=[0.0, 0.2, 0.0, 0.2]), 4, "nCS_4R"),  # hubs at different heights
        (dict(delta=0.1), 4, "CS_4R"),  # equal elevations: hubs in one plane parallel to x_B-y_B
        (dict(gamma=[0.0, 1.0, 2.0, 3.0]), 4, "CnS_4R"),
        (dict(gamma=[0.0, 1.0, 2.0, 3.0], delta=[0.0, 0.1, 0.2, 0.3]), 4, "nCnS_4R"),
        (dict(alpha=[0.1, -0.2, 0.1, -0.2]), 4, "CS_αi-Ted_4R"),
        (dict(beta=[0.1, 0.2, 0.1, 0.0]), 4, "CS_βi-Ted_4R"),
        (dict(alpha=0.2, beta=[0.1, 0.2, 0.1, 0.0]), 4, "CS_α0βi-Ted_4R"),
        (dict(beta=0.3), 6, "CS_β0-Ted_6R"),
        (dict(tilting=("alpha",)), 4, "CS_α0-Ting_4R"),
        (dict(alpha=0.3, tilting=("alpha",)), 6, "CS_α0-Ting_6R"),
        (dict(alpha=0.3, beta=0.1, tilting=("alpha", "beta")), 6, "CS_α0β0-Ting_6R"),
        (dict(alpha=[0.1] * 6, tilting=("alpha",)), 6, "CS_αi-Ting_6R"),
        (dict(), 1, "CS_1R"),
        (dict(), 2, "CS_2R"),
        (dict(), 12, "CS_12R"),
        (dict(alpha=0.2), 12, "CS_α0-Ted_12R"),
    ],
)
def test_class_labels(kwargs, n, label):
    p = jr.star_platform(n, 0.3, **{**KW, **kwargs})
    assert jr.class_label(p) == label
    assert p.label(ascii=True) == label.replace("α", "a").replace("β", "b")


def test_explicit_axes_labels():
    pos = 0.3 * np.array([[1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0.0]])
    kap = [-1, 1, -1, 1]
    assert jr.explicit_platform(pos, kappa=kap, **KW).label() == "CS_4R"
    tilted = np.array([[0, 0, 1.0], [0, 0.6, 0.8], [0, 0, 1.0], [0, 0, 1.0]])
    assert jr.explicit_platform(pos, axes=tilted, kappa=kap, **KW).label() == "CS_T-Ted_4R"
    # an H layout (not at the star azimuths) with hubs at two heights
    pos_h = np.array([[0.2, 0.1, 0.0], [-0.2, 0.1, 0.05], [-0.2, -0.1, 0.0], [0.2, -0.1, 0.05]])
    assert jr.explicit_platform(pos_h, kappa=kap, **KW).label() == "nCnS_4R"


# ----------------------------------------------------------------------------- lumped inertia


def test_lumped_inertia_hand_computation():
    mh, mb, l, r, h = 0.08, 1.18, 0.25, 0.1, 0.0
    pos = l * np.array([[1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0.0]])
    J = np.asarray(jr.lumped_inertia(pos, mh, mb, r, h))
    # two hubs at distance l from each in-plane axis, four from z; thin disc m r^2/4, m r^2/2
    Jxx = 2 * mh * l**2 + mb * r**2 / 4
    Jzz = 4 * mh * l**2 + mb * r**2 / 2
    np.testing.assert_allclose(J, np.diag([Jxx, Jxx, Jzz]), atol=1e-17)
    # solid cylinder of height h: m (3 r^2 + h^2) / 12 about the in-plane axes
    h = 0.06
    J = np.asarray(jr.lumped_inertia(pos, mh, mb, r, h))
    np.testing.assert_allclose(J[0, 0], 2 * mh * l**2 + mb * (3 * r**2 + h**2) / 12, atol=1e-17)
    # one off-axis point mass: m (|p|^2 I - p p^T), products of inertia included
    p1 = np.array([[0.1, -0.2, 0.05]])
    J1 = np.asarray(jr.lumped_inertia(p1, 0.5, 1e-30, 0.0, 0.0))
    np.testing.assert_allclose(J1, 0.5 * (p1[0] @ p1[0] * np.eye(3) - np.outer(p1[0], p1[0])), atol=1e-17)
    assert J1[0, 1] == pytest.approx(0.5 * 0.1 * 0.2)  # -m x y with y < 0


def test_star_platform_inertia_from_hub_mass_and_cs_4r():
    p = jr.star_platform(4, 0.25, mass=1.5, c_f=1e-5, c_tau=1e-7, hub_mass=0.08, body_radius=0.1)
    mb = 1.5 - 4 * 0.08
    Jxx = 2 * 0.08 * 0.25**2 + mb * 0.1**2 / 4
    Jzz = 4 * 0.08 * 0.25**2 + mb * 0.1**2 / 2
    np.testing.assert_allclose(np.asarray(p.inertia), np.diag([Jxx, Jxx, Jzz]), atol=1e-17)
    np.testing.assert_allclose(np.asarray(presets.cs_4r().inertia), np.diag([Jxx, Jxx, Jzz]), atol=1e-17)
    with pytest.raises(ValueError, match="`hub_mass`"):
        jr.star_platform(4, 0.25, mass=0.3, c_f=1e-5, c_tau=1e-7, hub_mass=0.08)
    with pytest.raises(ValueError, match="`inertia`"):
        jr.star_platform(4, 0.25, mass=1.5, c_f=1e-5, c_tau=1e-7)


def test_paper_hexarotor_table_ii_values():
    p = presets.paper_hexarotor()
    assert p.n_rotors == 6
    assert float(p.arm_length) == 0.385 and float(p.mass) == 3.5 and float(p.gravity) == 9.81
    np.testing.assert_array_equal(np.asarray(p.c_f), np.full(6, 3.799e-05))
    np.testing.assert_array_equal(np.asarray(p.c_tau), np.full(6, 1.163e-06))
    np.testing.assert_array_equal(np.asarray(p.delta), np.zeros(6))
    np.testing.assert_array_equal(np.asarray(p.inertia), np.diag([0.155, 0.147, 0.251]))
    np.testing.assert_array_equal(np.asarray(presets.paper_hexarotor("physics").inertia), np.diag([0.081, 0.081, 0.162]))
    assert float(p.weight) == pytest.approx(3.5 * 9.81)


# ----------------------------------------------------------------------------- validation

POS3 = [[0.3, 0, 0], [0, 0.3, 0], [-0.3, 0, 0]]


@pytest.mark.parametrize(
    "build, param",
    [
        (lambda: jr.star_platform(4, 0.2, **{**KW, "mass": 0.0}), "mass"),
        (lambda: jr.star_platform(4, 0.2, **{**KW, "mass": -1.0}), "mass"),
        (lambda: jr.star_platform(4, 0.2, **{**KW, "mass": float("nan")}), "mass"),
        (lambda: jr.star_platform(4, float("inf"), **KW), "arm_length"),
        (lambda: jr.star_platform(4, 0.0, **KW), "arm_length"),
        (lambda: jr.star_platform(4, 0.2, **{**KW, "inertia": [[1, 0.1, 0], [0, 1, 0], [0, 0, 1]]}), "inertia"),
        (lambda: jr.star_platform(4, 0.2, **{**KW, "inertia": [1.0, 1.0, -1.0]}), "inertia"),
        (lambda: jr.star_platform(4, 0.2, **{**KW, "inertia": [[1, 2, 0], [2, 1, 0], [0, 0, 1]]}), "inertia"),
        (lambda: jr.star_platform(6, 0.2, **{**KW, "c_f": [1e-5] * 5}), "c_f"),
        (lambda: jr.star_platform(6, 0.2, kappa=[1, -1, 1, -1, 1], **KW), "kappa"),
        (lambda: jr.star_platform(4, 0.2, **{**KW, "c_f": [1e-5, 0.0, 1e-5, 1e-5]}), "c_f"),
        (lambda: jr.star_platform(4, 0.2, **{**KW, "c_f": -1e-5}), "c_f"),
        (lambda: jr.star_platform(4, 0.2, **{**KW, "c_tau": -1e-7}), "c_tau"),
        (lambda: jr.star_platform(4, 0.2, kappa=[1, -1, 2, -1], **KW), "kappa"),
        (lambda: jr.star_platform(4, 0.2, kappa=[1, -1, 0, -1], **KW), "kappa"),
        (lambda: jr.explicit_platform(POS3, axes=[[0, 0, 1], [0, 0, 2], [0, 0, 1]], kappa=[1, -1, 1], **KW), "axes"),
        (lambda: jr.explicit_platform(POS3, axes=[[0, 0, 1], [0, 0, 0], [0, 0, 1]], kappa=[1, -1, 1], **KW), "axes"),
        (lambda: jr.star_platform(4, 0.2, alpha=math.pi / 2, **KW), "alpha"),
        (lambda: jr.star_platform(4, 0.2, alpha=[0.0, 0.0, -1.6, 0.0], **KW), "alpha"),
        (lambda: jr.star_platform(4, 0.2, beta=-0.1, **KW), "beta"),
        (lambda: jr.star_platform(4, 0.2, beta=math.pi / 2, **KW), "beta"),
        (lambda: jr.star_platform(4, 0.2, delta=-0.1, **KW), "delta"),
        (lambda: jr.star_platform(4, 0.2, delta=math.pi / 2, **KW), "delta"),
        (lambda: jr.star_platform(4, 0.2, **{**KW, "gravity": 0.0}), "gravity"),
        (lambda: jr.star_platform(4, 0.2, tilting=("gamma",), **KW), "tilting"),
    ],
)
def test_validation_names_parameter(build, param):
    with pytest.raises(ValueError, match=f"`{param}`"):
        build()


def test_validation_on_direct_construction():
    p = jr.star_platform(6, 0.2, **KW)
    fields = {k: getattr(p, k) for k in p.__dataclass_fields__}
    with pytest.raises(ValueError, match="`kappa`"):
        jr.Platform(**{**fields, "kappa": jnp.ones(5)})
    with pytest.raises(ValueError, match="`c_tau`"):
        jr.Platform(**{**fields, "c_tau": jnp.ones(4)})
    with pytest.raises(ValueError, match="`alpha`"):
        jr.Platform(**{**fields, "alpha": jnp.zeros(4)})
    # a valid copy passes
    assert jr.Platform(**fields).n_rotors == 6


def test_valid_edge_values_accepted():
    # inclusive lower bounds: beta = 0, delta = 0, c_tau = 0; angles just inside the open bounds
    p = jr.star_platform(3, 0.2, alpha=math.pi / 2 - 1e-9, beta=0.0, delta=math.pi / 2 - 1e-9, **{**KW, "c_tau": 0.0})
    assert p.n_rotors == 3
