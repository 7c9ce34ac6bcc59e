"""A flight on the fixed-step path (``lax.scan`` of the solver's step) equals the same flight by ``diffeqsolve``."""

import numpy as np

import jaxrotor as jr
from jaxrotor.integrate import Integrator
from jaxrotor.reference import paper_maneuver


def _flight(scan):
    # takeoff ends at 0.25 s: a reference jump inside the horizon; save_dt = 2.5 steps, so saves fall inside steps
    ref = paper_maneuver(takeoff_time=0.25, landing_time=0.25, duration=2.0)
    return jr.Flight(ref, allocator=jr.Clip(), actuators=jr.Actuators(motor=jr.FirstOrderMotor(0.03)),
                     integrator=Integrator(adaptive=False, dt=0.01, scan=scan), save_dt=0.025, t1=0.5)


def test_fly_fixed_step_equals_diffeqsolve():
    """The closed loop with clipping, motor lag and a reference jump: every saved field to 1e-12 (relative to scale)."""
    platform, controller = jr.presets.paper_hexarotor(), jr.FullyActuatedSE3()
    a = jr.fly(platform, controller, _flight(True))
    b = jr.fly(platform, controller, _flight(False))
    assert not bool(a.diverged) and int(a.num_steps) == int(b.num_steps) == 51
    for name in ("t", "p", "v", "R", "omega", "rotor_speed", "u", "u_cmd", "accel", "wrench_requested", "p_ref"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        scale = max(1.0, float(np.max(np.abs(y))))
        assert float(np.max(np.abs(x - y))) <= 1e-12 * scale, name
    np.testing.assert_array_equal(np.asarray(a.saturated), np.asarray(b.saturated))
