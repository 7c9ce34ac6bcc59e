"""The vehicle section of the actuation report (mass by part, centre of mass, inertia, rotors, top speed),
its ``-- vehicle`` table block, and the to-scale drawing of a vehicle from its parts."""

import json
import math

import numpy as np
import pytest

from jaxrotor import analysis, presets
from jaxrotor.analysis.report import vehicle_section
from jaxrotor.cli.analyze import format_report, vehicle_rows
from jaxrotor.design import layouts
from jaxrotor.design.parts import (Arm, Battery, Hub, LandingGear, Motor, Parts, Payload, Propeller, propulsion)
from jaxrotor.io.vehicle_plot import NO_DRAWING, draw_vehicle, save_vehicle_figure

VEHICLE_KEYS = ("mass", "com_offset", "inertia", "rotor_inertia", "c_f", "c_tau", "rotor_speed_max",
                "thrust_to_weight", "mass_breakdown", "overrides", "from_parts", "voltage_limited_speed",
                "current_limited_speed", "speed_limit")


def make_parts(**kw):
    base = dict(hub=Hub(0.6, 0.08, 0.05), arm=Arm(mass=0.03, radius=0.008),
                motor=Motor(0.06, 0.014, 0.025, rotor_mass=0.02, kv=920, resistance=0.1, no_load_current=0.5,
                            max_current=25),
                propeller=Propeller(diameter=0.254, pitch=0.114, mass=0.015, c_t=0.11, c_p=0.045),
                battery=Battery(0.55, (0.14, 0.045, 0.035), (0, 0, -0.05), 4, 5000, 0.02),
                payload=Payload(0.2, (0.03, 0, -0.08)))
    base.update(kw)
    return Parts(**base)


@pytest.fixture(scope="module")
def quad():
    return layouts.x_layout(4, 0.25, parts=make_parts())


@pytest.fixture(scope="module")
def report(quad):
    return analysis.analyze(quad, n_directions=4)


def test_report_vehicle_equals_the_platform(quad, report):
    r = report
    assert r.from_parts and r.overrides == ()
    assert r.mass == float(quad.mass) == r.mass_kg
    np.testing.assert_array_equal(r.com_offset, np.asarray(quad.com_offset))
    np.testing.assert_array_equal(r.inertia, np.asarray(quad.inertia))
    np.testing.assert_array_equal(r.rotor_inertia, np.asarray(quad.J_r))
    np.testing.assert_array_equal(r.c_f, np.asarray(quad.c_f))
    np.testing.assert_array_equal(r.c_tau, np.asarray(quad.c_tau))
    np.testing.assert_array_equal(r.rotor_speed_max, np.asarray(quad.rotor_speed_max))
    mp = quad.mass_properties()
    assert set(r.mass_breakdown) == {"hub", "arms", "motors", "propellers", "battery", "payload"}
    assert r.mass_breakdown == {k: float(v) for k, v in mp.breakdown.items()}
    assert sum(r.mass_breakdown.values()) == pytest.approx(r.mass, abs=1e-12)
    assert r.mass_breakdown["battery"] == pytest.approx(0.55, abs=1e-15)
    # top speed: the current limit binds on this vehicle (omega_I < omega_V), as the parts' propulsion says
    pr = propulsion(quad.parts)
    np.testing.assert_allclose(r.voltage_limited_speed, float(pr.voltage_limited_speed), rtol=1e-13)
    np.testing.assert_allclose(r.current_limited_speed, float(pr.current_limited_speed), rtol=1e-13)
    assert r.speed_limit == ("current",) * 4
    np.testing.assert_allclose(r.rotor_speed_max, np.minimum(r.voltage_limited_speed, r.current_limited_speed),
                               rtol=1e-13)


def test_to_dict_carries_the_vehicle_keys(quad, report):
    d = report.to_dict()
    assert set(VEHICLE_KEYS) <= set(d)
    d = json.loads(json.dumps(d, allow_nan=False))
    assert d["mass"] == float(quad.mass)
    assert np.shape(d["com_offset"]) == (3,) and np.shape(d["inertia"]) == (3, 3)
    for key in ("rotor_inertia", "c_f", "c_tau", "rotor_speed_max", "voltage_limited_speed", "current_limited_speed"):
        assert np.shape(d[key]) == (4,), key
    assert d["inertia"] == np.asarray(quad.inertia).tolist()
    assert d["overrides"] == [] and d["from_parts"] is True and d["speed_limit"] == ["current"] * 4
    assert d["thrust_to_weight"] == report.thrust_to_weight > 1


def test_overrides_are_listed_and_shown():
    p = layouts.x_layout(4, 0.25, parts=make_parts(), mass=2.0, rotor_speed_max=900.0)
    v = vehicle_section(p)
    assert v["overrides"] == ("mass", "rotor_speed_max") and v["mass"] == 2.0
    np.testing.assert_array_equal(v["rotor_speed_max"], 900.0)
    assert sum(v["mass_breakdown"].values()) == pytest.approx(1.77, abs=1e-12)  # the parts, not the given mass
    text = "\n".join(f"{k}  {x}" for k, x in vehicle_rows(_Report(v)))
    assert "given explicitly  mass, rotor_speed_max" in text
    assert "sum of the parts" in text and "900 rad/s" in text and "given explicitly" in text.split("top rotor")[1]


class _Report:
    """The vehicle fields alone, as :func:`vehicle_rows` reads them."""

    def __init__(self, fields):
        self.__dict__.update(fields)


def test_platform_without_parts():
    p = presets.get("cs_4r")
    v = vehicle_section(p)
    assert v["from_parts"] is False and v["mass_breakdown"] == {} and v["overrides"] == ()
    assert v["voltage_limited_speed"] is None and v["current_limited_speed"] is None and v["speed_limit"] is None
    np.testing.assert_array_equal(v["com_offset"], np.zeros(3))
    np.testing.assert_array_equal(v["inertia"], np.asarray(p.inertia))
    text = "\n".join(f"{k}  {x}" for k, x in vehicle_rows(_Report(v)))
    assert "-- vehicle (given as numbers, no parts)" in text and "%" not in text
    assert draw_vehicle(p) is None
    assert "no parts" in NO_DRAWING


def test_unbounded_top_speed_is_null_in_json():
    p = layouts.x_layout(4, 0.25, parts=make_parts(battery=None))  # no battery: no top speed
    v = vehicle_section(p)
    assert np.all(np.isinf(v["rotor_speed_max"])) and v["speed_limit"] is None
    assert "battery" not in v["mass_breakdown"]
    from jaxrotor._util import to_jsonable
    assert to_jsonable(v["rotor_speed_max"]) == [None] * 4


def test_table_has_the_vehicle_block(report):
    text = format_report(report)
    block = text.split("-- vehicle (from parts)")[1].split("-- algebraic")[0]
    for s in ("mass", "hub", "battery", "(31.1 %)", "CoM offset from geometric centre", "[+3.39, +0.00, -26.27] mm",
              "inertia Jxx / Jyy / Jzz", "inertia Jxy / Jxz / Jyz", "J_r", "c_f", "c_tau",
              "rpm), current-limited", "voltage limit", "given explicitly", "nothing (all derived from the parts)"):
        assert s in block, s


def _scale(ax):
    """Inches per metre along both axes of a drawn view."""
    bbox = ax.get_position()
    w, h = ax.figure.get_size_inches()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return bbox.width * w / (x1 - x0), bbox.height * h / (y1 - y0)


def test_drawing_is_to_scale_with_every_part():
    parts = make_parts(landing_gear=LandingGear(0.03, 4, 0.12, 0.15))
    p = layouts.x_layout(4, 0.3, parts=parts, alpha=0.3, name="canted")
    fig = draw_vehicle(p)
    top, side = fig.axes
    assert (top.get_xlabel(), top.get_ylabel(), side.get_xlabel(), side.get_ylabel()) == \
        ("x [m]", "y [m]", "x [m]", "z [m]")
    sx, sy = _scale(top)
    sx2, sz = _scale(side)
    assert sx == pytest.approx(sy, rel=1e-9) and sx2 == pytest.approx(sx, rel=1e-9) and sz == pytest.approx(sx, rel=1e-9)
    # the views reach the propeller tips and the feet
    D = float(parts.propeller.diameter)
    assert top.get_xlim()[1] > 0.3 * math.cos(math.pi / 4) + 0.9 * D / 2
    assert side.get_ylim()[0] < -0.025 - 0.15
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    for s in ("hub", "arms", "motors", "battery", "payload", "landing gear", "geometric centre"):
        assert s in labels, s
    assert any(s.startswith("centre of mass") for s in labels)
    # a platform without parts is drawn only with a propeller diameter
    assert draw_vehicle(presets.get("cs_4r"), prop_diameter=0.25) is not None


def test_save_vehicle_figure(tmp_path, quad):
    path = save_vehicle_figure(quad, tmp_path / "figs")
    assert path == tmp_path / "figs" / "x4_vehicle.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    assert save_vehicle_figure(presets.get("cs_4r"), tmp_path) is None
