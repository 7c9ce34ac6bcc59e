"""The fixed-step path (the diffrax solver's ``step`` in ``lax.scan``) against ``diffrax.diffeqsolve`` and closed forms."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.integrate import AUTO_INTERVAL_STEPS, RK4, Integrator, SaveSchedule, fixed_step_grid, integrate
from jaxrotor.reference import paper_maneuver


def _rk4_factor(z):
    """One classical RK4 step of ``y' = lambda y`` multiplies ``y`` by ``1 + z + z^2/2 + z^3/6 + z^4/24``, ``z = lambda h``."""
    return 1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24


def test_save_schedule_hand_derived():
    grid = np.array([0.0, 0.1, 0.2, 0.3, 0.4])
    s = SaveSchedule.build(grid, np.array([0.0, 0.0, 0.15, 0.2, 0.4]))
    assert s.n_initial == 2 and s.steps == 4
    # save 0.15 lies in step 1 (two steps from t0), 0.2 ends step 1 (no step), 0.4 ends step 3 (two steps)
    np.testing.assert_array_equal(s.active, [[True, True], [False, False], [True, True]])
    np.testing.assert_array_equal(s.exact, [False, True, True])
    np.testing.assert_array_equal(s.starts[0], [0.0, 0.1])
    np.testing.assert_array_equal(s.starts[2], [0.2, 0.3])
    with pytest.raises(ValueError, match="ascending"):
        SaveSchedule.build(grid, np.array([0.2, 0.1]))


def test_rk4_closed_form_and_gradient():
    lam, h, n = -1.3, 0.1, 10

    @jax.jit
    def final(a):
        sol = integrate(lambda t, y, args: args * y, jnp.asarray(1.0), 0.0, 1.0, args=a,
                        integrator=Integrator(solver=RK4(), adaptive=False, dt=h))
        return sol.ys[-1]

    z = lam * h
    assert float(final(lam)) == pytest.approx(_rk4_factor(z) ** n, rel=1e-14)
    # d/dlambda R(lambda h)^n = n R^(n-1) R'(z) h, R'(z) = 1 + z + z^2/2 + z^3/6
    dR = 1 + z + z**2 / 2 + z**3 / 6
    assert float(jax.grad(final)(lam)) == pytest.approx(n * _rk4_factor(z) ** (n - 1) * dR * h, rel=1e-12)
    # vmap of the scan loop equals the loop per member
    lams = jnp.asarray([-2.0, -0.5, 0.7])
    np.testing.assert_allclose(jax.vmap(final)(lams), [_rk4_factor(x * h) ** n for x in lams], rtol=1e-13)


def test_dense_saves_and_gradient_match_diffeqsolve():
    """Save times inside steps (the solver's interpolant), a jump, reverse mode: as diffeqsolve, to rounding."""
    def field(t, y, args):
        drive = jnp.where(t < 0.37, 1.0, -2.0)  # jump at 0.37
        return {"x": y["v"], "v": -args * y["x"] + drive}

    ts = np.linspace(0.0, 1.0, 9)  # 0.125 apart: most lie inside a step of 0.05

    def solve(k, scan, checkpoint=True):
        return integrate(field, {"x": jnp.asarray(0.3), "v": jnp.asarray(0.0)}, 0.0, 1.0, args=jnp.asarray(k), ts=ts,
                         jump_ts=(0.37,), integrator=Integrator(adaptive=False, dt=0.05, scan=scan,
                                                               checkpoint=checkpoint))

    a, b = jax.jit(solve, static_argnums=1)(4.0, True), solve(4.0, False)
    np.testing.assert_allclose(a.ys["x"], b.ys["x"], rtol=0, atol=1e-14)
    np.testing.assert_allclose(a.ys["v"], b.ys["v"], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(a.ts, b.ts)
    assert int(a.stats["num_accepted_steps"]) == int(b.stats["num_accepted_steps"]) == len(
        fixed_step_grid(0.0, 1.0, 0.05, (0.37,))) - 1
    assert a.result == diffrax.RESULTS.successful

    def loss(k, checkpoint=True):
        return jnp.sum(solve(k, True, checkpoint).ys["x"] ** 2)

    # reverse mode with each step recomputed from its stored state equals reverse mode storing every stage
    g = float(jax.jit(jax.grad(loss))(4.0))
    assert float(jax.jit(jax.grad(loss), static_argnums=1)(4.0, False)) == pytest.approx(g, rel=1e-12)
    # and both equal the derivative of the saved states: central differences of the forward solve
    h = 1e-5
    fd = (float(jnp.sum(solve(4.0 + h, False).ys["x"] ** 2)) - float(jnp.sum(solve(4.0 - h, False).ys["x"] ** 2))) / (2 * h)
    assert g == pytest.approx(fd, rel=1e-7)


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


def test_reverse_mode_storage_variants_agree():
    """What reverse mode stores changes its cost, never its value: recomputing whole save intervals (2-3 steps,
    saves inside steps, a jump) and recomputing steps under a policy give the gradient of
    the per-step recomputation."""
    def field(t, y, args):
        return jnp.stack([y[1], -args * jnp.sin(y[0]) + jnp.where(t < 0.37, 1.0, -2.0)])

    ts = np.linspace(0.0, 1.0, 9)

    def loss(k, settings):
        sol = integrate(field, jnp.asarray([0.3, 0.0]), 0.0, 1.0, args=k, ts=ts, jump_ts=(0.37,),
                        integrator=Integrator(adaptive=False, dt=0.05, **dict(settings)))
        return jnp.sum(sol.ys[:, 0] ** 2 + sol.ys[:, 1])

    grad = jax.jit(jax.grad(loss), static_argnums=1)
    g_step = float(grad(4.0, ()))
    assert abs(g_step) > 1e-3
    for settings in ((("checkpoint", "interval"),),
                     (("checkpoint_policy", "dots_with_no_batch_dims_saveable"),)):
        assert float(grad(4.0, settings)) == pytest.approx(g_step, rel=1e-12), settings


def test_bad_checkpoint_settings_are_refused():
    with pytest.raises(ValueError, match="`checkpoint` = 'everywhere'"):
        Integrator(adaptive=False, checkpoint="everywhere")
    with pytest.raises(ValueError, match="`checkpoint_policy` = 'save_it_all'.*jax.checkpoint_policies"):
        Integrator(adaptive=False, checkpoint_policy="save_it_all")


def test_default_checkpoint_saving_every_step_across_a_jump():
    """``checkpoint="auto"`` on a solve saved every step (plus the two steps bracketing a jump) recomputes
    whole save intervals: its gradient equals per-step recomputation and central differences."""
    assert Integrator(adaptive=False).checkpoint == "auto" and AUTO_INTERVAL_STEPS >= 2
    # reverse mode: an oscillator with a jump at 0.37, saved every step (plus the bracketing steps)
    def field(t, y, args):
        return jnp.stack([y[1], -args * jnp.sin(y[0]) + jnp.where(t < 0.37, 1.0, -2.0)])

    def loss(kk, mode):
        sol = integrate(field, jnp.asarray([0.3, 0.0]), 0.0, 1.0, args=kk, ts=np.linspace(0.0, 1.0, 21),
                        jump_ts=(0.37,), integrator=Integrator(adaptive=False, dt=0.05, checkpoint=mode))
        return jnp.sum(sol.ys[:, 0] ** 2 + sol.ys[:, 1])

    grad = jax.jit(jax.grad(loss), static_argnums=1)
    g_auto, g_step = float(grad(4.0, "auto")), float(grad(4.0, "step"))
    assert abs(g_auto) > 1e-3 and g_auto == pytest.approx(g_step, rel=1e-12)
    h = 1e-5
    assert g_auto == pytest.approx((float(loss(4.0 + h, "step")) - float(loss(4.0 - h, "step"))) / (2 * h), rel=1e-7)
