"""[controller] gains = "auto" | "default": the computed gains equal jaxrotor.gains in Python, given gains win, errors."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor.control import GAIN_NAMES, TABLE_III
from jaxrotor.gains import GainSpec, with_auto_gains
from jaxrotor.io import config as cfg

BASE = """
name = "g"
[platform]
preset = "x500"
[controller]
kind = "underactuated"
{extra}
[actuators.motor]
kind = "first_order"
time_constant = 0.02
[reference]
kind = "hover"
position = [0.0, 0.0, 1.0]
duration = 2.0
"""


def _gains(c):
    return {g: np.asarray(getattr(c, g)) for g in GAIN_NAMES}


def test_auto_is_the_default_and_equals_the_python_computation():
    a = cfg.loads(BASE.format(extra='gains = "auto"'))
    b = cfg.loads(BASE.format(extra=""))
    want = with_auto_gains(b.controller.__class__(), a.platform, a.flight)
    for g in GAIN_NAMES:
        np.testing.assert_array_equal(_gains(a.controller)[g], np.asarray(getattr(want, g)))
        np.testing.assert_array_equal(_gains(b.controller)[g], np.asarray(getattr(want, g)))
    assert float(a.controller.K_pi[2]) > 0 and float(jnp.min(a.controller.K_Ri)) > 0  # height and attitude integrals on
    assert float(jnp.max(a.controller.K_pi[:2])) == 0.0  # no horizontal position integral by default (GainSpec)


def test_bandwidths_reach_the_spec_and_given_gains_win():
    c = cfg.loads(BASE.format(extra='gains = "auto"\nbandwidth_attitude = 6.0\nbandwidth_yaw = 2.0\n'
                                    'bandwidth_position = 1.0\ndamping = 0.9\nintegral_ratio = 0.1\nK_p = [1.0, 2.0, 3.0]'))
    spec = GainSpec(attitude_bandwidth=6.0, yaw_bandwidth=2.0, position_bandwidth=1.0, damping=0.9, integral=0.1)
    want = with_auto_gains(c.controller, c.platform, c.flight, spec)
    np.testing.assert_array_equal(np.asarray(c.controller.K_p), [1.0, 2.0, 3.0])
    for g in GAIN_NAMES[1:]:
        np.testing.assert_array_equal(np.asarray(getattr(c.controller, g)), np.asarray(getattr(want, g)))


def test_default_keeps_the_built_in_gains():
    fa = BASE.replace('preset = "x500"', 'preset = "paper_hexarotor"').replace('"underactuated"', '"fully_actuated"')
    fa = fa.replace('kind = "first_order"\ntime_constant = 0.02', 'kind = "ideal"')
    c = cfg.loads(fa.format(extra='gains = "default"'))
    for g in GAIN_NAMES:
        np.testing.assert_array_equal(np.asarray(getattr(c.controller, g)), np.asarray(TABLE_III[g], dtype=float))


@pytest.mark.parametrize("extra,key", [('gains = "fast"', "gains"), ('gains = "default"\nbandwidth_yaw = 2.0', "bandwidth_yaw"),
                                       ("damping = 0.05", "damping"), ("bandwidth_attitude = -3.0", "attitude_bandwidth")])
def test_bad_gain_choices_are_refused_by_name(extra, key):
    with pytest.raises(cfg.ConfigError, match=key):
        cfg.loads(BASE.format(extra=extra))
