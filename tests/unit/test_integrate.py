"""The fixed-step path (the diffrax solver's ``step`` in ``lax.scan``) against ``diffrax.diffeqsolve`` and closed forms."""

from typing import ClassVar

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrotor.integrate import (
    AUTO_INTERVAL_STEPS,
    RK4,
    AbstractCheckpoint,
    AutoCheckpoint,
    Integrator,
    IntervalCheckpoint,
    NoCheckpoint,
    StageCheckpoint,
    SaveSchedule,
    StepCheckpoint,
    fixed_step_grid,
    fixed_steps,
    integrate,
    integrate_fixed_step,
)


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

    def solve(k, scan, checkpoint=AutoCheckpoint()):
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

    def loss(k, checkpoint=AutoCheckpoint()):
        return jnp.sum(solve(k, True, checkpoint).ys["x"] ** 2)

    # reverse mode with each step recomputed from its stored state equals reverse mode storing every stage
    g = float(jax.jit(jax.grad(loss))(4.0))
    assert float(jax.jit(jax.grad(loss), static_argnums=1)(4.0, NoCheckpoint())) == pytest.approx(g, rel=1e-12)
    # and both equal the derivative of the saved states: central differences of the forward solve
    h = 1e-5
    fd = (float(jnp.sum(solve(4.0 + h, False).ys["x"] ** 2)) - float(jnp.sum(solve(4.0 - h, False).ys["x"] ** 2))) / (2 * h)
    assert g == pytest.approx(fd, rel=1e-7)


def test_reverse_mode_storage_variants_agree():
    """What reverse mode stores changes its cost, never its value: recomputing whole save intervals (2-3 steps,
    saves inside steps, a jump) and recomputing steps under a policy give the gradient of
    the per-step recomputation."""
    def field(t, y, args):
        return jnp.stack([y[1], -args * jnp.sin(y[0]) + jnp.where(t < 0.37, 1.0, -2.0)])

    ts = np.linspace(0.0, 1.0, 9)

    def loss(k, checkpoint):
        sol = integrate(field, jnp.asarray([0.3, 0.0]), 0.0, 1.0, args=k, ts=ts, jump_ts=(0.37,),
                        integrator=Integrator(adaptive=False, dt=0.05, checkpoint=checkpoint))
        return jnp.sum(sol.ys[:, 0] ** 2 + sol.ys[:, 1])

    grad = jax.jit(jax.grad(loss), static_argnums=1)
    g_step = float(grad(4.0, StepCheckpoint()))
    assert abs(g_step) > 1e-3
    for checkpoint in (IntervalCheckpoint(), StepCheckpoint(policy="dots_with_no_batch_dims_saveable"),
                       AutoCheckpoint(policy=jax.checkpoint_policies.nothing_saveable), StageCheckpoint(),
                       IntervalCheckpoint(recompute_field=False), StepCheckpoint(recompute_field=False),
                       AutoCheckpoint(recompute_field=False)):
        assert float(grad(4.0, checkpoint)) == pytest.approx(g_step, rel=1e-12), checkpoint


@pytest.mark.parametrize("unroll", [False, True])
def test_stage_checkpoint_stores_the_stage_inputs_not_the_field_intermediates(unroll):
    """``StageCheckpoint`` keeps one state per stage for reverse mode and recomputes the field from it: a field with a
    large intermediate (a 64-vector per stage) leaves fewer stored values than ``NoCheckpoint`` (which keeps them),
    and the gradient is the same, with the stages in a scan or written out."""
    def field(t, y, args):
        wide = jnp.sin(jnp.outer(y, jnp.arange(32.0)).ravel() * args)  # a 64-vector intermediate
        return jnp.stack([y[1], -args * jnp.sin(y[0]) + 1e-3 * jnp.sum(wide)])

    def loss(k, checkpoint):
        sol = integrate(field, jnp.asarray([0.3, 0.0]), 0.0, 0.3, args=k, ts=np.asarray([0.0, 0.3]),
                        integrator=Integrator(adaptive=False, dt=0.05, checkpoint=checkpoint, unroll=unroll))
        return jnp.sum(sol.ys[-1] ** 2)

    from jax._src.ad_checkpoint import saved_residuals

    def stored(checkpoint):  # scalars reverse mode keeps
        return sum(int(np.prod(aval.shape)) for aval, _ in saved_residuals(lambda k: loss(k, checkpoint), 4.0))

    kept, all_ = stored(StageCheckpoint()), stored(NoCheckpoint())
    assert kept < all_ / 4, (kept, all_)  # 6 steps x 7 stages x (2 + 64 ...) values against 2 per stage
    g = jax.grad(loss)
    assert float(g(4.0, StageCheckpoint())) == pytest.approx(float(g(4.0, NoCheckpoint())), rel=1e-12)


def test_bad_checkpoint_settings_are_refused():
    with pytest.raises(ValueError, match="`checkpoint` = 'everywhere' is invalid. Fix: pass a strategy"):
        Integrator(adaptive=False, checkpoint="everywhere")
    with pytest.raises(ValueError, match="`checkpoint` = None"):
        Integrator(adaptive=False, checkpoint=None)
    for cls in (StepCheckpoint, IntervalCheckpoint, AutoCheckpoint):
        with pytest.raises(ValueError, match="`policy` = 'save_it_all' is not a policy in jax.checkpoint_policies"):
            cls(policy="save_it_all")
    with pytest.raises(ValueError, match="`max_interval_steps` = 0"):
        AutoCheckpoint(max_interval_steps=0)
    for cls in (StepCheckpoint, IntervalCheckpoint, AutoCheckpoint):
        with pytest.raises(ValueError, match="`recompute_field` = 'yes' is invalid. Fix: pass True"):
            cls(recompute_field="yes")
    with pytest.raises(TypeError):
        Integrator(adaptive=False, checkpoint_policy="dots_saveable")  # the policy belongs to the strategy now


def test_former_checkpoint_values_convert_to_strategies():
    """``Integrator(checkpoint=...)`` still takes the former strings and bools, with a DeprecationWarning naming the
    strategy to pass instead; the default is ``AutoCheckpoint()`` without a warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Integrator().checkpoint == AutoCheckpoint()
        assert Integrator(checkpoint=StepCheckpoint(policy="dots_saveable")).checkpoint.policy == "dots_saveable"
    for old, new in ((True, AutoCheckpoint()), ("auto", AutoCheckpoint()), ("step", StepCheckpoint()),
                     ("interval", IntervalCheckpoint()), (False, NoCheckpoint())):
        with pytest.warns(DeprecationWarning, match=f"Fix: pass checkpoint=jaxrotor.{type(new).__name__}"):
            integ = Integrator(adaptive=False, checkpoint=old)
        assert integ.checkpoint == new and type(integ.checkpoint) is type(new)
    # the strategy is part of the (hashable) integrator: equal settings give equal integrators, others differ
    assert hash(Integrator(checkpoint=StepCheckpoint())) == hash(Integrator(checkpoint=StepCheckpoint()))
    assert Integrator(checkpoint=StepCheckpoint()) != Integrator(checkpoint=IntervalCheckpoint())
    assert AutoCheckpoint().choose(AUTO_INTERVAL_STEPS) == IntervalCheckpoint()
    assert AutoCheckpoint(recompute_field=False).choose(1) == IntervalCheckpoint(recompute_field=False)
    assert AutoCheckpoint(max_interval_steps=2, policy="dots_saveable").choose(3) == StepCheckpoint(policy="dots_saveable")


class _RecordingCheckpoint(AbstractCheckpoint):
    """A user's own strategy: recomputes each step under a policy of its own and records what the loop asked."""

    calls: ClassVar[list] = []

    def wrap_step(self, step, interval_steps):
        self.calls.append(("step", interval_steps))
        return jax.checkpoint(step, policy=jax.checkpoint_policies.everything_saveable)

    def wrap_interval(self, interval, interval_steps):
        self.calls.append(("interval", interval_steps))
        return interval


def test_user_defined_checkpoint_strategy():
    """The loop asks the strategy itself (no check of its class): a strategy defined here is used, told the longest
    save interval, and gives the built-in strategies' gradient."""
    def field(t, y, args):
        return jnp.stack([y[1], -args * jnp.sin(y[0])])

    def loss(k, checkpoint):
        sol = integrate(field, jnp.asarray([0.3, 0.0]), 0.0, 1.0, args=k, ts=np.linspace(0.0, 1.0, 6),
                        integrator=Integrator(adaptive=False, dt=0.05, checkpoint=checkpoint))
        return jnp.sum(sol.ys[:, 0] ** 2)

    grad = jax.jit(jax.grad(loss), static_argnums=1)
    _RecordingCheckpoint.calls.clear()
    g = float(grad(4.0, _RecordingCheckpoint()))
    assert _RecordingCheckpoint.calls == [("step", 4), ("interval", 4)]  # 20 steps, 5 save intervals of 4
    assert abs(g) > 1e-3 and g == pytest.approx(float(grad(4.0, NoCheckpoint())), rel=1e-12)


def test_default_checkpoint_saving_every_step_across_a_jump():
    """``checkpoint="auto"`` on a solve saved every step (plus the two steps bracketing a jump) recomputes
    whole save intervals: its gradient equals per-step recomputation and central differences."""
    assert Integrator(adaptive=False).checkpoint == AutoCheckpoint() and AUTO_INTERVAL_STEPS >= 2
    # reverse mode: an oscillator with a jump at 0.37, saved every step (plus the bracketing steps)
    def field(t, y, args):
        return jnp.stack([y[1], -args * jnp.sin(y[0]) + jnp.where(t < 0.37, 1.0, -2.0)])

    def loss(kk, mode):
        sol = integrate(field, jnp.asarray([0.3, 0.0]), 0.0, 1.0, args=kk, ts=np.linspace(0.0, 1.0, 21),
                        jump_ts=(0.37,), integrator=Integrator(adaptive=False, dt=0.05, checkpoint=mode))
        return jnp.sum(sol.ys[:, 0] ** 2 + sol.ys[:, 1])

    grad = jax.jit(jax.grad(loss), static_argnums=1)
    g_auto, g_step = float(grad(4.0, AutoCheckpoint())), float(grad(4.0, StepCheckpoint()))
    assert abs(g_auto) > 1e-3 and g_auto == pytest.approx(g_step, rel=1e-12)
    h = 1e-5
    step = StepCheckpoint()
    assert g_auto == pytest.approx((float(loss(4.0 + h, step)) - float(loss(4.0 - h, step))) / (2 * h), rel=1e-7)


def test_saves_every_step_across_a_jump_match_diffeqsolve():
    """Saved at every step's end, with the two steps that bracket a jump (a save interval of three steps among ones of
    one): the states of ``diffeqsolve`` with ``StepTo`` to rounding, in float64 and float32, and forward mode equals
    reverse mode."""
    def field(t, y, args):
        return jnp.stack([y[1], -args * jnp.sin(y[0]) + jnp.where(t < 0.37, 1.0, -2.0)])

    ts = np.linspace(0.0, 1.0, 21)
    grid = fixed_step_grid(0.0, 1.0, 0.05, (0.37,))
    sched = SaveSchedule.build(grid, ts)
    assert sched.active.shape == (20, 3) and sched.steps == 22 and bool(np.all(sched.exact))

    def solve(k, scan, dtype=jnp.float64):
        return integrate(field, jnp.asarray([0.3, 0.0], dtype), 0.0, 1.0, args=jnp.asarray(k, dtype), ts=ts,
                         jump_ts=(0.37,), integrator=Integrator(adaptive=False, dt=0.05, scan=scan))

    a, b = jax.jit(solve, static_argnums=1)(4.0, True), solve(4.0, False)
    np.testing.assert_allclose(a.ys, b.ys, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(a.ts, b.ts)
    assert int(a.stats["num_steps"]) == int(b.stats["num_accepted_steps"]) == 22
    a32, b32 = (solve(4.0, scan, jnp.float32) for scan in (True, False))
    assert a32.ys.dtype == jnp.float32
    np.testing.assert_allclose(a32.ys, b32.ys, rtol=0, atol=1e-5)

    def loss(k):
        return jnp.sum(solve(k, True).ys[:, 0] ** 2)

    assert float(jax.grad(loss)(4.0)) == pytest.approx(float(jax.jacfwd(loss)(4.0)), rel=1e-12)


def _forced_oscillator(t, y, args):
    """``x'' + w^2 x = F cos(W t)`` as ``{"x", "v"}``; ``args = (w, F)``, ``W = 1.3`` rad/s."""
    w, force = args
    return {"x": y["v"], "v": -w**2 * y["x"] + force * jnp.cos(1.3 * t)}


def _forced_oscillator_exact(t, t0, x0, v0, w, force):
    """The closed form: ``x = A cos(w t) + B sin(w t) + F / (w^2 - W^2) cos(W t)`` through ``(x0, v0)`` at ``t0``."""
    W, c = 1.3, force / (w**2 - 1.3**2)
    # solve A cos + B sin = x0 - c cos(W t0),  w (-A sin + B cos) = v0 + c W sin(W t0)
    rx, rv = x0 - c * np.cos(W * t0), (v0 + c * W * np.sin(W * t0)) / w
    A = rx * np.cos(w * t0) - rv * np.sin(w * t0)
    B = rx * np.sin(w * t0) + rv * np.cos(w * t0)
    return (A * np.cos(w * t) + B * np.sin(w * t) + c * np.cos(W * t),
            w * (-A * np.sin(w * t) + B * np.cos(w * t)) - c * W * np.sin(W * t))


@pytest.mark.parametrize("solver, unroll, exact_tol, grads", [(diffrax.Tsit5(), False, 1e-10, True),
                                                              (RK4(), True, 1e-8, False),
                                                              (diffrax.ImplicitEuler(), False, None, False)])
def test_fixed_steps_equal_integrate_fixed_step_and_the_closed_form(solver, unroll, exact_tol, grads):
    """``n`` fixed steps from ``t0`` (traced under jit) equal the fixed-step solve over ``[t0, t0 + n dt]`` to 1e-12,
    and the forced harmonic oscillator's closed form to the method's accuracy; also taken tick by tick in a scan
    (the discrete-rate use) and, for one tableau solver (the stepping and the checkpointing are the same code for
    every solver), differentiated, with every checkpoint strategy giving one gradient."""
    if isinstance(solver, diffrax.ImplicitEuler):
        solver = diffrax.ImplicitEuler(root_finder=diffrax.VeryChord(rtol=1e-13, atol=1e-13))
    integ = Integrator(solver=solver, adaptive=False, dt=0.01, unroll=unroll)
    t0, n, y0, args = 0.3, 40, {"x": jnp.asarray(0.5), "v": jnp.asarray(-0.2)}, (jnp.asarray(2.0), jnp.asarray(0.7))
    y = jax.jit(lambda t: fixed_steps(_forced_oscillator, y0, t, 0.01, n, args=args, integrator=integ))(t0)
    ref = integrate_fixed_step(_forced_oscillator, y0, t0, t0 + n * 0.01, args=args, integrator=integ).ys
    for name in ("x", "v"):
        assert y[name].dtype == jnp.float64 and y[name].shape == ()
        assert abs(float(y[name]) - float(ref[name][-1])) <= 1e-12, name
    if exact_tol is not None:
        x, v = _forced_oscillator_exact(t0 + n * 0.01, t0, 0.5, -0.2, 2.0, 0.7)
        assert abs(float(y["x"]) - x) <= exact_tol and abs(float(y["v"]) - v) <= exact_tol
        assert abs(float(y["x"]) - x) > 0  # a discretisation error remains: the closed form is independent
    # 5 ticks of 8 steps in a scan (t0 of each tick traced), differentiated with respect to w
    def ticks(w, checkpoint):
        it = Integrator(solver=solver, adaptive=False, dt=0.01, unroll=unroll, checkpoint=checkpoint)

        def tick(y, k):
            return fixed_steps(_forced_oscillator, y, t0 + 0.08 * k, 0.01, 8, args=(w, args[1]), integrator=it), None

        return jax.lax.scan(tick, y0, jnp.arange(5.0))[0]["x"]

    ref_grad = lambda: jax.grad(lambda w: integrate_fixed_step(_forced_oscillator, y0, t0, t0 + 0.4, args=(w, args[1]),
                                                       integrator=integ).ys["x"][-1])(2.0)
    assert float(jax.jit(ticks, static_argnums=1)(2.0, AutoCheckpoint())) == pytest.approx(float(ref["x"][-1]),
                                                                                          abs=1e-12)
    if not grads:
        return
    grads = [float(jax.jit(jax.grad(ticks), static_argnums=1)(2.0, c))
             for c in (AutoCheckpoint(), StepCheckpoint(), NoCheckpoint(), StageCheckpoint(),
                       AutoCheckpoint(recompute_field=False), StepCheckpoint(recompute_field=False))]
    assert abs(grads[0]) > 1e-2
    np.testing.assert_allclose(grads, float(ref_grad()), rtol=1e-12)



@pytest.mark.parametrize("k", [2, 3])
def test_stages_k_per_iteration_solve_and_differentiate_as_one(k):
    """``Integrator(unroll=k)``: Tsit5's six scanned stages ``k`` per iteration (``lax.scan``'s ``unroll``) give the
    forced oscillator's states and their derivative with respect to its frequency of one stage per iteration
    (1e-13 relative), saved at every step and between steps."""
    def solve(w, unroll):
        integ = Integrator(solver=diffrax.Tsit5(), adaptive=False, dt=0.01, unroll=unroll)
        ys = integrate_fixed_step(_forced_oscillator, {"x": jnp.asarray(0.5), "v": jnp.asarray(-0.2)}, 0.0, 0.5,
                                  args=(w, jnp.asarray(0.7)), integrator=integ, ts=np.linspace(0.0, 0.5, 34)).ys
        return jnp.sum(ys["x"] ** 2), ys["x"]

    out = {u: jax.jit(jax.value_and_grad(lambda w, u=u: solve(w, u), has_aux=True))(2.0) for u in (False, k)}
    (_, x1), g1 = out[False]
    (_, xk), gk = out[k]
    assert abs(float(g1)) > 1e-2 and float(jnp.ptp(x1)) > 0.1
    np.testing.assert_allclose(np.asarray(xk), np.asarray(x1), rtol=1e-13, atol=1e-15)
    assert float(gk) == pytest.approx(float(g1), rel=1e-13)

def test_fixed_steps_edge_cases():
    integ = Integrator(adaptive=False)
    y0 = {"x": jnp.asarray(0.5), "v": jnp.asarray(-0.2)}
    assert fixed_steps(_forced_oscillator, y0, 0.0, 0.01, 0, args=(2.0, 0.0), integrator=integ) is y0
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match=f"`n_steps` = {bad!r} is invalid"):
            fixed_steps(_forced_oscillator, y0, 0.0, 0.01, bad, args=(2.0, 0.0), integrator=integ)


@pytest.mark.parametrize("n", [1, 3])
def test_a_one_slot_loop_is_its_body_called_once(n):
    """``_scan`` equals ``lax.scan`` (the carry, bitwise) and, for one slot, traces no loop at all."""
    from jaxrotor.integrate import _scan

    def body(carry, x):
        y, k = carry
        return (jnp.sin(y) * x[0] + x[1], k + 1), None

    xs = (jnp.linspace(0.5, 1.5, n), jnp.arange(n, dtype=float))
    c0 = (jnp.asarray([0.3, -1.2]), jnp.asarray(0))
    got, want = _scan(body, c0, xs), jax.lax.scan(body, c0, xs)[0]
    assert np.array_equal(got[0], want[0]) and int(got[1]) == int(want[1]) == n
    prims = {e.primitive.name for e in jax.make_jaxpr(lambda c: _scan(body, c, xs))(c0).jaxpr.eqns}
    assert ("scan" in prims) == (n > 1)


@pytest.mark.parametrize("unroll", [False, True])
def test_a_first_same_as_last_method_takes_its_first_value_inside_the_loop(unroll):
    """Tsit5 (first same as last) on a fixed step: its first value ``f(t0, y0)`` comes from a first save interval of
    zero-length steps inside the loop, so the vector field is traced once (the stages' field is one
    ``jax.checkpoint``-wrapped function, scanned or written out) and not once more before the loop; the saved
    states and the gradient are diffeqsolve's with ``StepTo`` to rounding."""
    calls = []

    def field(t, y, args):
        calls.append(t)
        return {"x": y["v"], "v": -args * jnp.sin(y["x"]) + 0.3 * jnp.cos(2.0 * t)}

    ts = np.linspace(0.0, 1.0, 11)

    def solve(k, scan):
        return integrate(field, {"x": jnp.asarray(0.4), "v": jnp.asarray(0.1)}, 0.0, 1.0, args=k, ts=ts,
                         integrator=Integrator(solver=diffrax.Tsit5(), adaptive=False, dt=0.025, scan=scan,
                                               unroll=unroll))

    jax.make_jaxpr(lambda k: solve(k, True))(jnp.asarray(3.0))
    assert len(calls) == 1
    a, b = jax.jit(solve, static_argnums=1)(jnp.asarray(3.0), True), solve(jnp.asarray(3.0), False)
    for key in ("x", "v"):
        np.testing.assert_allclose(np.asarray(a.ys[key]), np.asarray(b.ys[key]), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(np.asarray(a.ts), np.asarray(b.ts))
    assert int(a.stats["num_accepted_steps"]) == 40

    def loss(k, scan):
        return jnp.sum(solve(k, scan).ys["x"] ** 2)

    g, g_ref = float(jax.jit(jax.grad(loss), static_argnums=1)(3.0, True)), float(jax.grad(loss)(3.0, False))
    assert g == pytest.approx(g_ref, rel=1e-12)
