"""Robust tuning TOML (``configs/tune_gains_robust.toml``): bad input named by file, key, value and fix;
flight tables load into the flight.
"""

import tomllib

import jax
import numpy as np
import pytest

from jaxrotor.io import optimize_config
from jaxrotor.io.toml import ConfigError

from ..optimize.test_robust import TINY, load_tiny


@pytest.fixture(scope="module")
def tiny():
    return load_tiny()


def _tweak(old: str, new: str) -> str:
    assert old in TINY, old
    return TINY.replace(old, new, 1)


@pytest.mark.parametrize("old, new, match", [
    ("position_std = 0.02 ", "position_std = -0.02 ", r"key `sensors.position_std` = -0.02 is invalid.*>= 0.*Fix"),
    ("velocity_std = 0.05 ", "velocity_std = nan ", r"key `sensors.velocity_std` = nan is invalid.*Fix"),
    ("rate_std = 0.015 ", "rate_std = [0.01, inf, 0.01] ", r"key `sensors.rate_std` = \[0.01, inf, 0.01\].*Fix"),
    ("delay = 2 ", "delay = -1 ", r"key `sensors.delay` = -1 is invalid.*>= 0.*Fix"),
    ("rate = 250.0 ", "rate = 300.0 ", r"key `control.rate` = 300.0 is invalid.*`integrator.dt` = 0.004.*Fix"),
    ("beta = 0.8 ", "beta = 1.0 ", r"key `robust.beta` = 1.0 is invalid.*\(0, 1\).*Fix"),
    ("beta = 0.8 ", "beta = 0.0 ", r"key `robust.beta` = 0.0 is invalid"),
    ("mass = 0.1\n", "mass = 1.0\n", r"key `randomize.mass` = 1.0 is invalid.*non-positive.*Fix"),
    ("inertia = 0.1\n", "inertia = 1.5\n", r"key `randomize.inertia` = 1.5 is invalid.*Fix"),
    ("gust_std = 0.5 ", "gust_std = -0.5 ", r"key `wind.gust_std` = -0.5 is invalid.*Fix"),
])
def test_config_refuses_bad_robust_input_naming_file_key_value_and_fix(old, new, match):
    with pytest.raises(ConfigError, match=r"^bad\.toml: " + match):
        optimize_config.from_dict(tomllib.loads(_tweak(old, new)), "bad.toml", kind="tune")


def test_flight_tables_load_into_the_flight_and_need_a_control_rate():
    from jaxrotor.io import config

    base = ('[platform]\npreset = "paper_hexarotor"\n[reference]\nkind = "hover"\nduration = 1.0\n'
            '[solver]\nadaptive = false\ndt = 0.002\n')
    fc = config.loads(base + "[control]\nrate = 500.0\nseed = 4\n[sensors]\nrate_std = [0.01, 0.02, 0.03]\ndelay = 3\n"
                      "[wind]\nmean = [1.0, 0.0, 0.0]\ndrag_quadratic = 0.1\n", "f.toml")
    f = fc.flight
    assert f.control_rate == 500.0 and f.sensors.delay == 3 and f.wind.drag_quadratic == 0.1
    np.testing.assert_array_equal(f.sensors.rate_std, [0.01, 0.02, 0.03])
    np.testing.assert_array_equal(f.key, jax.random.PRNGKey(4))
    with pytest.raises(ConfigError, match=r"^f\.toml: table\(s\) \[sensors\] need the discrete-rate loop but "
                                          r"`control.rate` is missing\. Fix: add \[control\]"):
        config.loads(base + "[sensors]\nposition_std = 0.01\n", "f.toml")
    with pytest.raises(ConfigError, match=r"^f\.toml: key `control.rate` = -1.0 is invalid.*Fix"):
        config.loads(base + "[control]\nrate = -1.0\n", "f.toml")
    with pytest.raises(ConfigError, match=r"^f\.toml: unknown key `sensors.position_sd`"):
        config.loads(base + "[control]\nrate = 500.0\n[sensors]\nposition_sd = 0.01\n", "f.toml")
