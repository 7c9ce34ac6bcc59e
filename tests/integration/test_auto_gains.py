"""Auto gains on every preset: the linearised closed loop with motor lag, rotor inertia and a 500 Hz hold is stable."""

import jax.numpy as jnp
import pytest

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.allocators import Clip
from jaxrotor.analysis import closed_loop_stability
from jaxrotor.control import FullyActuatedSE3, UnderactuatedSE3
from jaxrotor.design import vehicles
from jaxrotor.dynamics import Actuators, FirstOrderMotor
from jaxrotor.flight import Flight
from jaxrotor.gains import with_auto_gains
from jaxrotor.reference import Hover


ALL = [("paper_hexarotor", presets.paper_hexarotor, False), ("cs_a0_ted_6r", lambda: presets.get("cs_a0_ted_6r"), False),
       ("cs_4r", lambda: presets.get("cs_4r"), True)] + [
    (n, getattr(vehicles, n), True) for n in ("x500", "f450", "s550", "x8", "y6", "crazyflie", "hummingbird")]


@pytest.mark.parametrize("name,build,under", ALL, ids=[a[0] for a in ALL])
def test_auto_gains_are_stable_on_every_preset_with_motor_lag_rotor_inertia_and_500_hz(name, build, under):
    """The linearised closed loop (rotor inertia from the parts, 20 ms motors, 500 Hz zero-order hold) is stable."""
    p = build()
    flight = Flight(reference=Hover([0.0, 0.0, 1.0], 5.0), allocator=Clip(),
                    actuators=Actuators(motor=FirstOrderMotor(0.02)), control_rate=500.0,
                    integrator=jr.Integrator(adaptive=False, dt=0.002))
    ctrl = with_auto_gains(UnderactuatedSE3() if under else FullyActuatedSE3(), p, flight)
    rep = closed_loop_stability(p, ctrl, flight)
    assert bool(rep.stable), rep.summary()
    assert all(float(jnp.min(getattr(ctrl, k))) > 0 for k in ("K_p", "K_v", "K_R", "K_w", "K_Ri"))
