"""The aerodynamic terms (jaxrotor.aero) in flight: the off switch leaves a flight unchanged on both loops, the
wind's air drives the rotor drag, and a flight's gradient in a coefficient against central differences and its
vmap (the terms themselves: tests/unit/test_aero.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxrotor as jr
from jaxrotor import presets
from jaxrotor.aero import Aerodynamics


def test_terms_off_leave_flights_unchanged():
    """Aerodynamics() (every term zero) flies exactly as no aerodynamics: continuous and discrete-rate loops."""
    plat = presets.paper_hexarotor()
    ctrl = jr.control.FullyActuatedSE3()
    ref = jr.reference.Transfer((0.0, 0.0, 1.0), (0.5, -0.3, 1.2), 1.0)
    fixed = jr.Integrator(adaptive=False, dt=2e-3)
    for kw in (dict(integrator=fixed), dict(integrator=fixed, control_rate=250.0, save_dt=0.02)):
        a = jr.fly(plat, ctrl, jr.Flight(reference=ref, **kw))
        b = jr.fly(plat, ctrl, jr.Flight(reference=ref, aero=Aerodynamics(), **kw))
        assert np.abs(np.asarray(a.p) - np.asarray(b.p)).max() <= 1e-12
        assert np.abs(np.asarray(a.R) - np.asarray(b.R)).max() <= 1e-12


def test_gust_drives_rotor_drag():
    """The wind's air drives the rotor terms: with no body drag in the wind model, a mean wind still pushes the
    vehicle through its rotors' H-force (the flight with wind differs from still air only with rotor drag on)."""
    plat = presets.paper_hexarotor()
    ctrl = jr.control.FullyActuatedSE3()
    ref = jr.reference.Hover((0.0, 0.0, 1.0), 0.6)
    common = dict(reference=ref, integrator=jr.Integrator(adaptive=False, dt=2e-3), control_rate=250.0,
                  save_dt=0.02, key=jax.random.PRNGKey(0))
    calm = jr.Wind(mean=0.0)
    windy = jr.Wind(mean=(3.0, 0.0, 0.0))
    drag = Aerodynamics(rotor_drag=5e-3)
    p = {name: np.asarray(jr.fly(plat, ctrl, jr.Flight(wind=w, aero=a, **common)).p)
         for name, (w, a) in {"calm_off": (calm, None), "windy_off": (windy, None), "calm_on": (calm, drag),
                              "windy_on": (windy, drag)}.items()}
    assert np.abs(p["windy_off"] - p["calm_off"]).max() < 1e-12  # no drag coefficient: the wind does nothing
    np.testing.assert_allclose(p["calm_on"], p["calm_off"], atol=1e-12)  # still air, hovering: no airspeed
    push = p["windy_on"][:, 0] - p["calm_on"][:, 0]
    assert push.max() > 1e-3  # downwind (+x): the H-force opposes the rotors' velocity through the air


def test_flight_gradient_and_vmap_over_a_coefficient():
    """A windy discrete-rate hover: d(final x)/d(k_d) through the whole flight against central differences, and a
    vmap over k_d equal to the flights one by one."""
    import equinox as eqx

    plat = presets.paper_hexarotor()
    ctrl = jr.control.FullyActuatedSE3()
    base = jr.Flight(reference=jr.reference.Hover((0.0, 0.0, 1.0), 0.4), integrator=jr.Integrator(adaptive=False,
                     dt=4e-3), control_rate=250.0, save_dt=0.04, key=jax.random.PRNGKey(0),
                     wind=jr.Wind(mean=(3.0, -1.0, 0.0)), aero=Aerodynamics(rotor_drag=5e-4, translational_lift=1e-2))

    @eqx.filter_jit
    def final_x(k_d):
        fl = eqx.tree_at(lambda f: f.aero.rotor_drag, base, k_d)
        return jr.fly(plat, ctrl, fl).p[-1, 0]

    k = jnp.asarray(5e-4)
    g = float(jax.grad(final_x)(k))
    eps = 1e-7
    fd = float(final_x(k + eps) - final_x(k - eps)) / (2 * eps)
    assert abs(g) > 1e-3
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    ks = jnp.array([0.0, 2.5e-4, 5e-4])
    batch = jax.vmap(final_x)(ks)
    np.testing.assert_allclose(np.asarray(batch), [float(final_x(x)) for x in ks], rtol=0, atol=1e-12)
