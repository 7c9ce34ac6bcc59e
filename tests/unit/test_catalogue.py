"""The design catalogue (:mod:`jaxrotor.design.catalogue`) against its closed forms.

Propellers: ``c_t = k_t pitch / D``, ``c_p = c_p0 + kappa c_t^{3/2} / sqrt(pi/2)``, ``m = m_ref (D / D_ref)^3``;
the documented defaults give ``c_t = 0.110``, ``c_p = 0.045`` for a 10x4.5 propeller. Batteries:
``m = cells C s_m``, ``R = cells r_c / C``, ``I_max = c_rate C / 1000``, extents ``size_ref (m / m_ref)^{1/3}``.
Motors: every catalogue entry, the stacked catalogue and entry selection (also with a traced index).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor.design.catalogue import MOTORS, BatteryFamily, PropellerFamily, motor, stack_motors, take_motor
from jaxrotor.design.parts import Battery, Motor

MOTOR_FIELDS = ("mass", "radius", "height", "rotor_mass", "kv", "resistance", "no_load_current", "max_current")


# --------------------------------------------------------------------------- propellers


def test_propeller_defaults_give_the_documented_10x45_coefficients():
    fam = PropellerFamily()
    D = 0.254
    c_t, c_p = fam.coefficients(D, 0.45 * D)
    np.testing.assert_allclose(float(c_t), 0.110, rtol=1e-3)
    np.testing.assert_allclose(float(c_p), 0.045, rtol=1e-3)
    # figure of merit: momentum theory's ideal power coefficient c_t^{3/2} / sqrt(pi/2) over c_p, documented 0.65
    fom = float(c_t) ** 1.5 / math.sqrt(math.pi / 2) / float(c_p)
    np.testing.assert_allclose(fom, 0.65, atol=5e-3)


@pytest.mark.parametrize("D, pitch", [(0.18, 0.07), (0.254, 0.114), (0.40, 0.20), (0.30, 0.09)])
def test_propeller_coefficients_closed_form(D, pitch):
    fam = PropellerFamily(c_t_per_pitch_ratio=0.3, induced_factor=1.3, profile_power=0.008)
    c_t, c_p = fam.coefficients(jnp.asarray(D), jnp.asarray(pitch))
    assert float(c_t) == pytest.approx(0.3 * pitch / D, rel=1e-14)
    # the profile part is exactly c_p0 and the induced part kappa c_t^{3/2} / sqrt(pi / 2)
    np.testing.assert_allclose(float(c_p) - 0.008, 1.3 * float(c_t) ** 1.5 / math.sqrt(math.pi / 2), rtol=1e-13)
    # the pitch ratio alone sets both coefficients
    c_t2, c_p2 = fam.coefficients(jnp.asarray(2 * D), jnp.asarray(2 * pitch))
    np.testing.assert_allclose([float(c_t2), float(c_p2)], [float(c_t), float(c_p)], rtol=1e-14)


def test_propeller_mass_scales_as_diameter_cubed():
    fam = PropellerFamily(mass_ref=0.02, diameter_ref=0.3)
    assert float(fam.mass(0.3)) == pytest.approx(0.02, rel=1e-15)
    D = np.array([0.1, 0.2, 0.25, 0.4, 0.6])
    m = np.asarray(fam.mass(jnp.asarray(D)))
    np.testing.assert_allclose(m, 0.02 * (D / 0.3) ** 3, rtol=1e-14)
    np.testing.assert_allclose(m[3] / m[1], 8.0, rtol=1e-14)


def test_propeller_part_from_the_family():
    fam = PropellerFamily(thickness=0.005)
    D, pitch = 0.33, 0.12
    p = fam.propeller(D, pitch)
    c_t, c_p = fam.coefficients(D, pitch)
    assert float(p.diameter) == D and float(p.pitch) == pitch
    assert float(p.c_t) == pytest.approx(float(c_t), rel=1e-15)
    assert float(p.c_p) == pytest.approx(float(c_p), rel=1e-15)
    assert float(p.mass) == pytest.approx(0.015 * (D / 0.254) ** 3, rel=1e-14)
    assert float(p.chord) == pytest.approx(0.08 * D, rel=1e-15)
    assert float(p.thickness) == 0.005


def test_propeller_family_is_differentiable():
    """d c_t / d pitch = k_t / D, d c_p / d pitch = kappa 1.5 c_t^{1/2} (k_t / D) / sqrt(pi/2), d m / d D = 3 m / D."""
    fam = PropellerFamily()
    D, pitch = 0.3, 0.12
    dct = jax.grad(lambda p: fam.coefficients(D, p)[0])(pitch)
    dcp = jax.grad(lambda p: fam.coefficients(D, p)[1])(pitch)
    dm = jax.grad(fam.mass)(D)
    c_t = 0.2444 * pitch / D
    assert float(dct) == pytest.approx(0.2444 / D, rel=1e-13)
    assert float(dcp) == pytest.approx(1.15 * 1.5 * math.sqrt(c_t) * 0.2444 / D / math.sqrt(math.pi / 2), rel=1e-12)
    assert float(dm) == pytest.approx(3 * float(fam.mass(D)) / D, rel=1e-12)


@pytest.mark.parametrize("name, value", [("c_t_per_pitch_ratio", 0.0), ("induced_factor", -1.0), ("mass_ref", math.nan),
                                         ("diameter_ref", math.inf), ("thickness", 0.0), ("profile_power", -0.01),
                                         ("profile_power", math.nan)])
def test_invalid_propeller_family_raises_naming_the_parameter(name, value):
    with pytest.raises(ValueError, match=f"`{name}`"):
        PropellerFamily(**{name: value})


def test_zero_profile_power_is_allowed():
    fam = PropellerFamily(profile_power=0.0)
    c_t, c_p = fam.coefficients(0.25, 0.1)
    np.testing.assert_allclose(float(c_p), 1.15 * float(c_t) ** 1.5 / math.sqrt(math.pi / 2), rtol=1e-14)


# --------------------------------------------------------------------------- batteries


def test_battery_family_closed_forms():
    fam = BatteryFamily()
    assert float(fam.mass(5000.0, 4)) == pytest.approx(4 * 5000 * 2.5e-5, rel=1e-15)  # 0.5 kg
    assert float(fam.max_current(5000.0)) == pytest.approx(25.0 * 5000 / 1000, rel=1e-15)  # 125 A
    like = Battery()
    b = fam.battery(5000.0, 4, like)
    assert float(b.internal_resistance) == pytest.approx(0.02, rel=1e-14)  # 4S 5000 mAh: 20 mOhm
    assert b.cells == 4
    assert float(b.capacity_mah) == 5000.0
    # a 4S 5000 mAh pack is the reference mass: the reference extents
    np.testing.assert_allclose(np.asarray(b.size), [0.14, 0.045, 0.035], rtol=1e-14)


@pytest.mark.parametrize("cells, cap", [(3, 2200.0), (6, 10000.0), (1, 450.0)])
def test_battery_from_the_family_keeps_the_shape_of_like(cells, cap):
    fam = BatteryFamily(specific_mass=3e-5, cell_resistance=30.0, c_rate=20.0, size_ref=(0.1, 0.04, 0.03), mass_ref=0.4)
    like = Battery(mass=0.7, offset=(0.01, -0.02, -0.05), cells=5, capacity_mah=1234.0, internal_resistance=0.5,
                   ocv_soc=[0.0, 0.5, 1.0], ocv_volts=[3.3, 3.7, 4.2], soc0=0.9, soc_floor=0.25)
    b = fam.battery(jnp.asarray(cap), cells, like)
    m = cells * cap * 3e-5
    assert float(b.mass) == pytest.approx(m, rel=1e-14)
    assert float(b.internal_resistance) == pytest.approx(cells * 30.0 / cap, rel=1e-14)
    assert float(fam.max_current(cap)) == pytest.approx(20.0 * cap / 1000, rel=1e-14)
    np.testing.assert_allclose(np.asarray(b.size), np.array([0.1, 0.04, 0.03]) * (m / 0.4) ** (1 / 3), rtol=1e-13)
    assert b.cells == cells and float(b.capacity_mah) == cap
    # kept from `like`
    np.testing.assert_array_equal(np.asarray(b.offset), np.asarray(like.offset))
    assert float(b.soc0) == 0.9 and float(b.soc_floor) == 0.25
    for a, c in zip(jax.tree_util.tree_leaves(b.ocv), jax.tree_util.tree_leaves(like.ocv)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(c))
    # nominal voltage follows the new cell count, not like's
    assert float(b.nominal_voltage) == pytest.approx(cells * float(like.nominal_voltage) / 5, rel=1e-14)


def test_battery_size_doubles_with_eight_times_the_mass():
    fam = BatteryFamily()
    like = Battery()
    s1 = np.asarray(fam.battery(2000.0, 4, like).size)
    s8 = np.asarray(fam.battery(16000.0, 4, like).size)
    np.testing.assert_allclose(s8 / s1, 2.0, rtol=1e-13)


def test_battery_family_is_differentiable_in_the_capacity():
    fam = BatteryFamily()
    like = Battery()
    C = 4000.0
    dR = jax.grad(lambda c: fam.battery(c, 4, like).internal_resistance)(C)
    dm = jax.grad(lambda c: fam.battery(c, 4, like).mass)(C)
    assert float(dR) == pytest.approx(-4 * 25.0 / C**2, rel=1e-13)
    assert float(dm) == pytest.approx(4 * 2.5e-5, rel=1e-13)


@pytest.mark.parametrize("name, value", [("specific_mass", 0.0), ("c_rate", -5.0), ("mass_ref", math.inf),
                                         ("cell_resistance", -1.0), ("cell_resistance", math.nan)])
def test_invalid_battery_family_raises_naming_the_parameter(name, value):
    with pytest.raises(ValueError, match=f"`{name}`"):
        BatteryFamily(**{name: value})


def test_zero_cell_resistance_is_allowed():
    b = BatteryFamily(cell_resistance=0.0).battery(3000.0, 3, Battery())
    assert float(b.internal_resistance) == 0.0


# --------------------------------------------------------------------------- motors


@pytest.mark.parametrize("name", sorted(MOTORS))
def test_catalogue_motor(name):
    m = motor(name)
    assert isinstance(m, Motor)
    for field in MOTOR_FIELDS:
        assert float(getattr(m, field)) == MOTORS[name][field], field
    assert set(MOTORS[name]) == set(MOTOR_FIELDS)
    # physically sensible: the bell is part of the motor, the limit exceeds the no-load current
    assert 0 < float(m.rotor_mass) < float(m.mass)
    assert float(m.max_current) > float(m.no_load_current) > 0
    assert float(m.kv_si) == pytest.approx(MOTORS[name]["kv"] * 2 * math.pi / 60, rel=1e-14)


def test_unknown_motor_names_the_catalogue():
    with pytest.raises(ValueError) as err:
        motor("9999_1kv")
    msg = str(err.value)
    assert "9999_1kv" in msg and "catalogue" in msg
    for name in MOTORS:
        assert name in msg
    with pytest.raises(ValueError, match="9999_1kv"):
        stack_motors(["2212_920kv", "9999_1kv"])


def _leaves_equal(a: Motor, b: Motor):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    assert len(la) == len(MOTOR_FIELDS)
    for x, y in zip(la, lb):
        assert jnp.shape(x) == jnp.shape(y) == ()
        assert float(x) == float(y)


def test_stack_and_take_motor_round_trip():
    names = ["3508_580kv", "2212_920kv", "2814_700kv", "2216_880kv", "2212_920kv"]
    stacked = stack_motors(names)
    for leaf in jax.tree_util.tree_leaves(stacked):
        assert leaf.shape == (len(names),)
    np.testing.assert_array_equal(np.asarray(stacked.kv), [MOTORS[n]["kv"] for n in names])
    for i, name in enumerate(names):
        _leaves_equal(take_motor(stacked, i), motor(name))

    @jax.jit
    def pick(index):
        return take_motor(stacked, index)

    for i, name in enumerate(names):
        _leaves_equal(pick(jnp.asarray(i)), motor(name))
    # a vmap over the index is the stacked catalogue itself
    all_ = jax.vmap(lambda i: take_motor(stacked, i))(jnp.arange(len(names)))
    for a, b in zip(jax.tree_util.tree_leaves(all_), jax.tree_util.tree_leaves(stacked)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_single_motor_stack():
    stacked = stack_motors(["2814_700kv"])
    assert all(leaf.shape == (1,) for leaf in jax.tree_util.tree_leaves(stacked))
    _leaves_equal(take_motor(stacked, 0), motor("2814_700kv"))


# --------------------------------------------------------------------------- arm tubes


def test_arm_tube_closed_forms():
    """A 16 mm x 1 mm carbon tube: annulus area pi (D t - t^2) = 4.712e-5 m^2 -> 73.04 g/m at 1550 kg/m^3;
    I = pi (0.016^4 - 0.014^4) / 64 = 1.3312e-9 m^4; a 0.2 m cantilever under 10 N bends
    F L^3 / (3 E I) = 0.2862 mm, 0.143 % of its length at 70 GPa (hand-computed)."""
    from jaxrotor.design.catalogue import ArmTubeFamily

    fam = ArmTubeFamily()
    area = math.pi * (0.008**2 - 0.007**2)
    assert float(fam.mass_per_length(0.016)) == pytest.approx(1550.0 * area, rel=1e-14)
    assert float(fam.mass_per_length(0.016)) == pytest.approx(0.0730420, rel=1e-6)
    I = math.pi * (0.016**4 - 0.014**4) / 64
    assert float(fam.second_moment(0.016)) == pytest.approx(I, rel=1e-14)
    assert I == pytest.approx(1.33125e-9, rel=1e-4)
    delta = 10.0 * 0.2**3 / (3 * 70e9 * I)
    assert float(fam.deflection(0.016, 0.2, 10.0)) == pytest.approx(delta / 0.2, rel=1e-14)
    assert delta == pytest.approx(2.862e-4, rel=1e-3)
    arm = fam.arm(0.016)
    assert float(arm.radius) == 0.008 and float(arm.mass_of(jnp.asarray(0.25))) == pytest.approx(0.25 * 1550.0 * area)
    # a thicker tube is heavier and stiffer; the deflection falls as the tube grows (the gradient's sign)
    g = jax.grad(lambda D: fam.deflection(D, 0.2, 10.0))(0.016)
    assert float(g) < 0 and float(jax.grad(fam.mass_per_length)(0.016)) == pytest.approx(1550 * math.pi * 1e-3)
    with pytest.raises(ValueError, match="`wall` = 0.0"):
        ArmTubeFamily(wall=0.0)
