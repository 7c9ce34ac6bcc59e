"""Sweep points (grid, random, Latin hypercube) and sweep tables refused before compiling."""

import numpy as np
import pytest

from jaxrotor.io.toml import ConfigError
from jaxrotor.workflows.sweep import SweepAxis, SweepSpec, loads_sweep, sweep_points

FLIGHT = """
name = "k_v"
[platform]
preset = "paper_hexarotor"
[reference]
kind = "paper_maneuver"
duration = 15.0
takeoff_time = 2.6667
landing_time = 2.6667
period = 10.0
[solver]
adaptive = false
dt = 0.01
[flight]
save_dt = 0.05
t1 = 0.5
"""

# K_v,z = -300 and -140 are unstable (negative damping of the vertical loop: rounding noise grows
# like exp(|K_v| t)); 20 is the Table III value


def test_points_grid_random_lhs():
    a, b = SweepAxis("platform.alpha", 0.0, 1.0, 3), SweepAxis("platform.beta", -1.0, 1.0, 2)
    g = sweep_points(SweepSpec((a, b), "grid"))
    np.testing.assert_array_equal(g, [[0, -1], [0, 1], [0.5, -1], [0.5, 1], [1, -1], [1, 1]])  # first axis slowest
    n = 50
    lhs = sweep_points(SweepSpec((a, b), "lhs", n, seed=3))
    for j, ax in enumerate((a, b)):
        unit = (lhs[:, j] - ax.lower) / (ax.upper - ax.lower)
        np.testing.assert_array_equal(np.sort(np.floor(unit * n)), np.arange(n))  # one point per stratum
    r = sweep_points(SweepSpec((a, b), "random", n, seed=3))
    assert r.shape == (n, 2) and np.all((r[:, 0] >= 0) & (r[:, 0] <= 1) & (r[:, 1] >= -1) & (r[:, 1] <= 1))
    np.testing.assert_array_equal(r, sweep_points(SweepSpec((a, b), "random", n, seed=3)))


@pytest.mark.parametrize("table, match", [
    ('[sweep.parameters."platform.alpah"]\nlower = 0.0\nupper = 1.0\npoints = 2', "has no field `alpah`"),
    ('[sweep.parameters."controller.K_p[7]"]\nlower = 0.0\nupper = 1.0\npoints = 2', r"controller.K_p\[7\]`: no such"),
    ('[sweep.parameters."platform.alpha"]\nlower = 1.0\nupper = 0.5\npoints = 2', r"sweep.parameters.platform.alpha.lower` = 1.0 is invalid: it is above upper"),
    ('[sweep.parameters."platform.alpha"]\nlower = 0.0\nupper = 1.0\npoints = 0', "points` = 0 is invalid"),
    ('kind = "lhs"\npoints = 0\n[sweep.parameters."platform.alpha"]\nlower = 0.0\nupper = 1.0', "sweep.points` = 0"),
    ('chunk = 1000000000000\n[sweep.parameters."platform.alpha"]\nlower = 0.0\nupper = 1.0\npoints = 2',
     r"sweep.chunk` = 1000000000000 is invalid: .* GiB available. Fix: use chunk <= "),
])
def test_bad_input_errors_before_compiling(table, match):
    with pytest.raises(ConfigError, match=match):
        loads_sweep(FLIGHT + "[sweep]\n" + table, source="bad.toml")
