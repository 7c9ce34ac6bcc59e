"""The [platform] geometry forms and the [parts] tables of a TOML configuration, and the assembly checks.

Every layout loads from TOML to the same platform as its Python builder; angles in degrees equal the radian
form; giving both forms, a key of another layout, or a bad part value is refused with the key, the value and
the fix. Each check of an assembly (overlapping propellers, a weak motor, a battery outside the frame, a
non-positive dimension) fires before anything is compiled.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from jaxrotor.design import layouts
from jaxrotor.design import parts as P
from jaxrotor.design.platform import (explicit_platform, geometric_rotor_positions, rotor_axes, rotor_positions,
                                      star_platform)
from jaxrotor.io.platform_table import load_platform, parts_from_table, platform_from_table
from jaxrotor.io.toml import ConfigError, read_toml

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = ROOT / "configs" / "vehicles" / "x_quad_parts.toml"
RAW = read_toml(CONTRACT)
ROTORS = dict(mass=2.0, c_f=1e-5, c_tau=2e-7, inertia=[0.02, 0.02, 0.04])


def same(a, b):
    for f in (rotor_positions, rotor_axes):
        np.testing.assert_allclose(np.asarray(f(a)), np.asarray(f(b)), rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.asarray(a.kappa), np.asarray(b.kappa))
    np.testing.assert_allclose(np.asarray(a.inertia), np.asarray(b.inertia), rtol=1e-15)


@pytest.mark.parametrize("table, build", [
    (dict(layout="x", n=6, arm_length=0.3), lambda: layouts.x_layout(6, 0.3, **ROTORS)),
    (dict(layout="plus", n=4, arm_length=0.3), lambda: layouts.plus_layout(4, 0.3, **ROTORS)),
    (dict(layout="h", n=4, length=0.4, width=0.3), lambda: layouts.h_layout(4, 0.4, 0.3, **ROTORS)),
    (dict(layout="coaxial_x", n=8, arm_length=0.35, separation=0.1),
     lambda: layouts.coaxial_x_layout(8, 0.35, 0.1, **ROTORS)),
    (dict(layout="y6", arm_length=0.35, separation=0.1, lower_efficiency=0.9),
     lambda: layouts.y6_layout(0.35, 0.1, 0.9, **ROTORS)),
    (dict(layout="star", n=6, arm_length=0.385, alpha_deg=25.0, beta_deg=10.0),
     lambda: star_platform(6, 0.385, alpha=math.radians(25.0), beta=math.radians(10.0), **ROTORS)),
])
def test_layouts_load_as_their_builders(table, build):
    p = platform_from_table({**table, **ROTORS}, "cfg.toml")
    same(p, build())


def test_coaxial_pairs_and_labels():
    """A coaxial X8: two rotor planes 0.1 m apart, counter-rotating pairs on four arms: ``nCS_8R``."""
    x8 = platform_from_table(dict(layout="coaxial_x", n=8, arm_length=0.35, separation=0.1, **ROTORS), "x8.toml")
    pos = np.asarray(rotor_positions(x8))
    np.testing.assert_allclose(pos[:4, 2] - pos[4:, 2], 0.1, atol=1e-15)
    np.testing.assert_allclose(pos[:4, :2], pos[4:, :2], atol=1e-15)
    np.testing.assert_allclose(np.asarray(x8.kappa[:4]), -np.asarray(x8.kappa[4:]))
    np.testing.assert_allclose(np.asarray(x8.c_f[4:]) / np.asarray(x8.c_f[:4]), 0.85)
    assert x8.label() == "nCS_8R" and x8.arms == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert platform_from_table(dict(layout="x", n=4, arm_length=0.3, **ROTORS), "q.toml").label() == "CS_4R"
    assert platform_from_table(dict(layout="y6", arm_length=0.3, separation=0.1, **ROTORS), "y.toml").label() == "nCS_6R"
    h = platform_from_table(dict(layout="h", n=4, length=0.5, width=0.3, **ROTORS), "h.toml")
    assert h.label() == "CnS_4R"  # rails longer than wide: not equally spaced azimuths


def test_explicit_positions_and_axes():
    s = math.sin(math.radians(20.0))
    axes = [[0.0, -s, math.cos(math.radians(20.0))], [0.0, s, math.cos(math.radians(20.0))]] * 2
    positions = [[0.3, 0.0, 0.0], [0.0, 0.3, 0.0], [-0.3, 0.0, 0.0], [0.0, -0.3, 0.0]]
    p = platform_from_table(dict(layout="explicit", positions=positions, axes=axes, **ROTORS), "e.toml")
    np.testing.assert_allclose(np.asarray(rotor_positions(p)), positions)
    np.testing.assert_allclose(np.asarray(rotor_axes(p)), axes)
    np.testing.assert_allclose(np.asarray(p.kappa), [-1, 1, -1, 1])


def test_degrees_equal_radians_and_both_is_an_error():
    deg = platform_from_table(dict(n=6, arm_length=0.385, alpha_deg=25.0, gamma_deg=[60.0 * k for k in range(6)],
                                   delta_deg=5.0, **ROTORS), "d.toml")
    rad = platform_from_table(dict(n=6, arm_length=0.385, alpha=math.radians(25.0),
                                   gamma=[math.radians(60.0 * k) for k in range(6)], delta=math.radians(5.0),
                                   **ROTORS), "r.toml")
    same(deg, rad)
    with pytest.raises(ConfigError, match=r"gives both `alpha` = 0.4 \[rad\] and `alpha_deg` = 25.0 \[deg\]\. Fix: keep"):
        platform_from_table(dict(n=6, arm_length=0.385, alpha=0.4, alpha_deg=25.0, **ROTORS), "b.toml")


@pytest.mark.parametrize("table, pattern", [
    (dict(layout="hexagon", n=6, arm_length=0.3), r"`layout` = 'hexagon' is unknown\. Fix: use one of 'star'"),
    (dict(layout="h", n=4, arm_length=0.3, length=0.4, width=0.3), r"unknown key\(s\) `arm_length`.*other layouts"),
    (dict(layout="coaxial_x", n=8, arm_length=0.3), r"missing the required key\(s\) `separation`"),
    (dict(layout="coaxial_x", n=6, arm_length=0.3, separation=0.1), r"rotor count `n` = 6 is invalid.*y6_layout"),
    (dict(layout="explicit", positions=[[0.3, 0.0]]), r"`positions` = \[\[0.3, 0.0\]\] is invalid: expected an n x 3"),
])
def test_geometry_errors(table, pattern):
    with pytest.raises(ConfigError, match=pattern):
        platform_from_table({**table, **ROTORS}, "cfg.toml")


def test_contract_config_derives_the_vehicle():
    """mass = sum of the parts; c_f, c_tau from c_t, c_p; the top speed is the current limit."""
    p = load_platform(CONTRACT)
    assert p.parts is not None and p.overrides == () and p.label() == "CS_4R"
    np.testing.assert_allclose(float(p.mass), 0.60 + 4 * (0.03 + 0.06 + 0.015) + 0.55 + 0.2, rtol=1e-15)
    rho, D = 1.225, 0.254
    np.testing.assert_allclose(np.asarray(p.c_f), 0.11 * rho * D**4 / (4 * math.pi**2), rtol=1e-14)
    c_tau = 0.045 * rho * D**5 / (8 * math.pi**3)
    np.testing.assert_allclose(np.asarray(p.c_tau), c_tau, rtol=1e-14)
    kv = 920 * 2 * math.pi / 60
    np.testing.assert_allclose(np.asarray(p.rotor_speed_max), math.sqrt((25 - 0.5) / (kv * c_tau)), rtol=1e-14)
    # the payload and the battery sit low and forward: the centre of mass moves, the hubs are taken from it
    np.testing.assert_allclose(np.asarray(geometric_rotor_positions(p) - rotor_positions(p))[0],
                               np.asarray(p.com_offset), rtol=1e-15, atol=1e-15)


def test_overrides_win_and_are_listed():
    data = dict(RAW["platform"], mass=2.0, rotor_speed_max=900.0)
    p = platform_from_table(data, "o.toml", RAW["parts"])
    assert set(p.overrides) == {"mass", "rotor_speed_max"}
    assert float(p.mass) == 2.0 and np.all(np.asarray(p.rotor_speed_max) == 900.0)


@pytest.mark.parametrize("part, key, value, pattern", [
    ("hub", "radius", -0.08, r"`hub.radius` = -0.08 is invalid: it must be finite and > 0\. Fix: give `hub.radius` > 0 in m"),
    ("propeller", "diameter", 0.0, r"`propeller.diameter` = 0.0 is invalid: it must be finite and > 0"),
    ("motor", "rotor_mass", 0.1, r"`motor.rotor_mass` = 0.1 is invalid: the bell is part of the motor's mass"),
    ("battery", "size", [0.14, 0.045], r"key `parts.battery.size` = \[0.14, 0.045\] is invalid: expected 3 numbers"),
    ("arm", "mass_per_length", 0.1, r"\[parts.arm\] needs exactly one of `mass`"),
    ("motor", "kvv", 900, r"unknown key `parts.motor.kvv` = 900"),
])
def test_part_errors(part, key, value, pattern):
    parts = {k: dict(v) for k, v in RAW["parts"].items()}
    parts[part][key] = value
    with pytest.raises(ConfigError, match=pattern):
        parts_from_table(parts, "p.toml")


def test_missing_part_is_named():
    parts = {k: v for k, v in RAW["parts"].items() if k != "propeller"}
    with pytest.raises(ConfigError, match=r"missing table `\[parts.propeller\]`.*Fix: add \[parts.propeller\] with "
                                          r"diameter, mass, c_t, c_p"):
        parts_from_table(parts, "p.toml")


@pytest.fixture(scope="module")
def contract_parts():
    return load_platform(CONTRACT).parts


def test_overlapping_propellers_name_the_pair(contract_parts):
    big = dataclasses.replace(contract_parts, propeller=P.Propeller(diameter=0.40, mass=0.015, c_t=0.11, c_p=0.045))
    with pytest.raises(ValueError, match=r"`propeller.diameter` = 0.4 is invalid: the propeller discs of rotors 1 and 2 "
                                         r"of x4 overlap by 0.04645 m .*Fix: use a diameter < 0.3536 m"):
        layouts.x_layout(4, 0.25, parts=big)


def test_tilted_and_coaxial_discs(contract_parts):
    """Discs in parallel planes 6 cm apart (a stacked pair) clear each other; tilting the lower one by 40 deg
    lifts its rim 8 cm into the upper one's plane, and the check names the pair."""
    layouts.coaxial_x_layout(8, 0.25, 0.08, parts=contract_parts)  # no error
    pos = [[0.25, 0.0, 0.03], [0.25, 0.0, -0.03], [-0.25, 0.0, 0.03], [-0.25, 0.0, -0.03]]
    kw = dict(kappa=[-1.0, 1.0, 1.0, -1.0], parts=contract_parts, name="stacked")
    explicit_platform(pos, **kw)  # flat: parallel discs, no error
    c, s = math.cos(0.7), math.sin(0.7)
    axes = [[0.0, 0.0, 1.0], [s, 0.0, c], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    with pytest.raises(ValueError, match=r"the propeller discs of rotors 1 and 2 of stacked overlap by 0.254 m "
                                         r"\(hubs 0 m apart across the disc, 0.06 m along the axis\)"):
        explicit_platform(pos, axes=axes, **kw)


def test_weak_motor_is_refused(contract_parts):
    weak = dataclasses.replace(contract_parts, motor=P.Motor(0.06, 0.014, 0.025, rotor_mass=0.02, kv=300,
                                                             resistance=0.1, no_load_current=0.5, max_current=25))
    with pytest.raises(ValueError, match=r"`motor.kv` = 300.0 is invalid: at top speed the rotors of x4 give \S+ N for "
                                         r"a weight of 17.36 N \(thrust-to-weight 0.\d+ < 1\)\. Fix: use a higher-kv"):
        layouts.x_layout(4, 0.25, parts=weak)


def test_battery_outside_the_frame(contract_parts):
    out = dataclasses.replace(contract_parts, battery=P.Battery(0.55, (0.14, 0.045, 0.035), (0.0, 0.4, 0.0)))
    with pytest.raises(ValueError, match=r"`battery.offset` = \[0.  0.4 0. \] is invalid: it lies outside the frame.*"
                                         r"Fix: place the battery within the frame"):
        layouts.x_layout(4, 0.25, parts=out)


def test_hub_reaching_the_rotors(contract_parts):
    hub = dataclasses.replace(contract_parts, hub=P.Hub(0.6, 0.3, 0.05))
    with pytest.raises(ValueError, match=r"`hub.radius` = 0.3 is invalid: it reaches beyond rotor 1"):
        layouts.x_layout(4, 0.25, parts=hub)


def test_preset_with_overrides():
    """``preset`` plus overrides of its fields: the contract of the rotor-inertia configs."""
    p = platform_from_table({"preset": "paper_hexarotor_physics", "rotor_inertia": 1.095e-4, "mass": 3.6}, "o.toml")
    np.testing.assert_allclose(np.asarray(p.J_r), 1.095e-4)
    assert float(p.mass) == 3.6 and {"rotor_inertia", "mass"} <= set(p.overrides)
    np.testing.assert_allclose(np.asarray(p.inertia), np.diag([0.081, 0.081, 0.162]))
    with pytest.raises(ConfigError, match=r"`rotor_inertia` = -1.0 is invalid: a spin inertia is >= 0"):
        platform_from_table({"preset": "cs_4r", "rotor_inertia": -1.0}, "o.toml")
    with pytest.raises(ConfigError, match=r"`rotor_inertia` = nan is invalid: a spin inertia is >= 0 .*not NaN"):
        platform_from_table({"preset": "cs_4r", "rotor_inertia": float("nan")}, "o.toml")
    with pytest.raises(ConfigError, match=r"`rotor_inertia` = \[inf inf inf inf\] is invalid: spin inertias must be finite"):
        platform_from_table({"preset": "cs_4r", "rotor_inertia": float("inf")}, "o.toml")
    with pytest.raises(ConfigError, match=r"`c_f` = \[1e-05, 1e-05\] has 2 entries but the preset has 4 rotors"):
        platform_from_table({"preset": "cs_4r", "c_f": [1e-5, 1e-5]}, "o.toml")
