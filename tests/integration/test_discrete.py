"""The discrete-rate loop: zero-order hold, fixed-step plant, sensor delay, gradients, tilting, bad input."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree
from jaxrotor.tick import control_schedule
from scipy.integrate import solve_ivp

import jaxrotor as jr
from jaxrotor import metrics
from jaxrotor.allocators import Clip
from jaxrotor.control import FullyActuatedSE3
from jaxrotor.design import presets
from jaxrotor.dynamics import RotorCommand, vehicle_derivative
from jaxrotor import fly
from jaxrotor.flight import Flight, flight_computer
from jaxrotor.reference import FigureEight
from jaxrotor.sensors import Sensors, measure
from jaxrotor.wind import Wind

REF = FigureEight(1.0, period=8.0)
ACT = jr.Actuators(motor=jr.FirstOrderMotor(0.03))


HEUN = diffrax.Heun()


def flight(rate=None, dt=1e-3, save_dt=0.004, t1=None, solver=HEUN, **kw):
    return Flight(reference=REF, allocator=Clip(), actuators=ACT, save_dt=save_dt, t1=t1,
                  integrator=jr.Integrator(solver=solver, adaptive=False, dt=dt), control_rate=rate, **kw)


@pytest.fixture(scope="module")
def hexa():
    return presets.get("paper_hexarotor")


@pytest.fixture(scope="module")
def ctrl():
    return FullyActuatedSE3()


SENSORS = Sensors(0.01, 0.02, 0.005, 0.01, position_bias_std=0.02, rate_bias_std=0.01, delay=2)
WIND = Wind(mean=[2.0, -1.0, 0.0], gust_std=0.5, gust_time_constant=0.5, drag_linear=0.3, drag_quadratic=0.05)
KEY = jax.random.PRNGKey(7)


def noisy(**kw):
    """0.3 s at 250 Hz (one sample per tick), four Heun steps per tick, noise, bias, 2-tick delay, gusts, drag."""
    return flight(250.0, t1=0.3, sensors=SENSORS, wind=WIND, key=KEY, **kw)


@pytest.fixture(scope="module")
def traj(hexa, ctrl):
    return fly(hexa, ctrl, noisy())


def test_commands_are_held_and_the_plant_integrates_exactly_under_noise_delay_and_wind(traj, hexa, ctrl):
    """At every tick the command is the flight computer's on the state of two ticks ago plus that tick's noise and
    the flight's bias; the next state is the plant integrated under it and the held air velocity (scipy's adaptive
    RK45, an independent integrator; the loop takes four Heun steps of 1 ms, second order, hence the tolerances)."""
    tr, fl = traj, noisy()
    n = tr.t.shape[0]
    z = jax.random.normal(KEY, (15 * n + 12,))  # the documented layout: sensor noise, bias, then gusts
    draw = SENSORS.scale(z[:12 * n + 12])
    gusts = WIND.gusts_from(z[12 * n + 12:].reshape(n, 3), 0.004)
    assert float(jnp.max(jnp.abs(draw.bias[0]))) > 1e-3 and float(jnp.max(jnp.abs(draw.bias[1]))) == 0.0
    data = fl.allocation_data(hexa)
    unravel = ravel_pytree(fl.initial_state(hexa))[1]

    @jax.jit
    def field(y, u, air):  # the plant under a held command and air velocity, on the flat state
        s = unravel(y)
        return ravel_pytree(vehicle_derivative(hexa, ACT, s, RotorCommand(u=u), WIND.force(s.v, air))[0])[0]

    for k in (0, 1, 2, 40):
        j = max(k - 2, 0)  # before the first tick the sensors report the initial state
        state = jr.VehicleState(p=tr.p[k], v=tr.v[k], R=tr.R[k], omega=tr.omega[k], rotor_speed=tr.rotor_speed[k],
                                alpha=hexa.alpha, beta=hexa.beta)
        seen = jr.VehicleState(p=tr.p[j], v=tr.v[j], R=tr.R[j], omega=tr.omega[j], rotor_speed=tr.rotor_speed[k],
                               alpha=hexa.alpha, beta=hexa.beta)
        i_k = jax.tree_util.tree_map(lambda x, k=k: x[k], tr.controller_state)
        cmd, d_int, _, _ = flight_computer(hexa, ctrl, fl, tr.t[k], measure(seen, draw.white[k] + draw.bias), i_k,
                                           data)
        np.testing.assert_allclose(tr.u_cmd[k], cmd.u, rtol=1e-10)
        # controller integrator: forward Euler at the tick rate
        np.testing.assert_allclose(tr.controller_state.int_p[k + 1], i_k.int_p + 0.004 * d_int.int_p, atol=1e-14)
        flat0, _ = ravel_pytree(state)
        air = WIND.air_velocity(gusts[k])

        def f(t, y, u=cmd.u, air=air):
            return np.asarray(field(jnp.asarray(y), u, air))

        sol = solve_ivp(f, (0.0, 0.004), np.asarray(flat0), rtol=1e-11, atol=1e-12)
        nxt = unravel(jnp.asarray(sol.y[:, -1]))
        np.testing.assert_allclose(tr.p[k + 1], nxt.p, atol=1e-7)
        np.testing.assert_allclose(tr.v[k + 1], nxt.v, atol=1e-5)
        np.testing.assert_allclose(tr.omega[k + 1], nxt.omega, atol=1e-5)
        np.testing.assert_allclose(tr.rotor_speed[k + 1], nxt.rotor_speed, rtol=1e-4)
        assert float(jnp.max(jnp.abs(tr.v[k + 1] - state.v))) > 1e-4  # the step is not trivial
    # the noise is felt, but the flight still tracks to centimetres
    rmse = float(metrics.rms_norm(metrics.position_error(tr)))
    assert 1e-3 < rmse < 0.05 and not bool(tr.diverged)


def test_a_sample_every_third_tick_is_every_tick_sample_bit_for_bit(traj, hexa, ctrl):
    """The loop writes only the saved ticks: ``save_dt`` = 3 ticks gives rows 0, 3, ..., 75 of the every-tick
    flight exactly (state, applied outputs, commands, allocation, reference, controller integral), and the same
    divergence flag and step count."""
    sparse = fly(hexa, ctrl, noisy(save_dt=0.012))
    assert sparse.t.shape[0] == 26 and traj.t.shape[0] == 76
    dense, thin = jax.tree_util.tree_leaves(traj), jax.tree_util.tree_leaves(sparse)
    assert len(dense) == len(thin)
    for a, b in zip(dense, thin):
        a, b = np.asarray(a), np.asarray(b)
        if a.ndim and a.shape[0] == 76:
            np.testing.assert_array_equal(a[::3], b)
        else:  # per-flight leaves: diverged, num_steps, the limits
            np.testing.assert_array_equal(a, b)


def test_gradient_through_the_noisy_discrete_loop_matches_central_differences(hexa):
    """d(tracking RMSE)/d(gains, drag, noise level) through the 250 Hz loop with noise, bias, delay, gusts, drag,
    motor lag and clipping (fixed key) agrees with central differences to 1e-5."""
    fl = noisy()

    def loss(x):
        c = FullyActuatedSE3(K_p=x[0:3], K_v=x[3:6], K_R=x[6:9], K_w=x[9:12])
        f = eqx.tree_at(lambda f: (f.wind.drag_linear, f.sensors.velocity_std), fl, (x[12], jnp.full(3, x[13])))
        return tracking(fly(hexa, c, f))  # the compiled flight of the fixture (same structure)

    @jax.jit
    def tracking(tr):
        return metrics.rms_norm(metrics.position_error(tr)) + metrics.rms_norm(metrics.orientation_error(tr))

    x0 = jnp.asarray([7.0, 7.0, 60.0, 14.0, 14.0, 20.0, 90.0, 90.0, 90.0, 25.0, 25.0, 5.0, 0.3, 0.03])
    g = jax.grad(loss)(x0)
    assert bool(jnp.all(jnp.isfinite(g))) and float(jnp.max(jnp.abs(g))) > 0
    for i in (0, 2, 4, 6, 9, 12, 13):
        eps = 1e-6 * max(1.0, abs(float(x0[i])))
        e = jnp.zeros_like(x0).at[i].set(eps)
        fd = (float(loss(x0 + e)) - float(loss(x0 - e))) / (2 * eps)
        assert abs(float(g[i]) - fd) <= 1e-5 * max(abs(fd), 1e-3 * float(jnp.max(jnp.abs(g)))), (i, float(g[i]), fd)


def test_tilting_platform_with_servo_lag_converges_at_first_order_in_the_control_period(ctrl):
    """Cant angles swept in flight through a lagged, rate-limited servo. The continuous loop tracks this exactly
    (tests/integration/test_closed_loop.py: the allocator uses the tilt the rotors have); the discrete loop allocates exactly at
    each tick too, and its tracking error is the zero-order hold's, first order in the period: 4x the rate, 4x
    smaller."""
    plat = jr.star_platform(6, 0.385, mass=3.5, c_f=3.799e-5, c_tau=1.163e-6, alpha=[0.3] * 6, beta=0.17,
                            inertia=[0.155, 0.147, 0.251], tilting=("alpha",))
    signs = jnp.array([-1.0, 1.0, -1.0, 1.0, -1.0, 1.0])

    def tilt(t):
        return signs * (0.3 + 0.2 * jnp.sin(3.0 * t)), None

    s0 = jr.initial_state(plat, p=REF(jnp.asarray(0.0)).p, v=REF(jnp.asarray(0.0)).v, rotor_speed="hover")
    s0 = eqx.tree_at(lambda s: s.alpha, s0, tilt(0.0)[0])
    act = jr.Actuators(servo=jr.FirstOrderServo(0.05, 2.0))
    err = {}
    for rate in (250.0, 1000.0):
        tr = fly(plat, ctrl, Flight(reference=REF, actuators=act, save_dt=0.02, state0=s0, tilt_command=tilt,
                                    integrator=jr.Integrator(adaptive=False, dt=1e-3), control_rate=rate))
        assert not bool(tr.diverged)
        assert float(jnp.max(jnp.abs(tr.wrench_error))) < 1e-9  # allocated at the applied tilt
        assert float(jnp.max(jnp.abs(tr.alpha - s0.alpha))) > 0.1  # the cant really moved
        assert float(jnp.max(jnp.abs(jnp.diff(tr.alpha, axis=0)) / 0.02)) <= 2.0 + 1e-9  # servo rate limit
        err[rate] = float(jnp.max(jnp.abs(metrics.position_error(tr))))
    assert 1e-6 < err[1000.0] < err[250.0] < 1e-3
    assert 3.5 < err[250.0] / err[1000.0] < 4.5


def test_discrete_loop_refuses_bad_timing_before_compiling(hexa, ctrl):
    # the plant's integration step must divide the control period; the analytic plant refuses an adaptive solver
    with pytest.raises(ValueError, match=r"`dt` = 0.002 s does not divide the control period 0.00333333 s.*Fix"):
        fly(hexa, ctrl, flight(300.0, dt=0.002))
    with pytest.raises(ValueError, match=r"`integrator.adaptive` = True.*Fix"):
        fly(hexa, ctrl, Flight(reference=REF, control_rate=500.0))
    with pytest.raises(ValueError, match=r"`control_rate` = -5.0 is invalid.*Fix"):
        control_schedule(flight(-5.0))
    with pytest.raises(ValueError, match=r"`save_dt` = 0.005 s is not a whole number of control periods.*Fix"):
        control_schedule(flight(250.0, save_dt=0.005))
    with pytest.raises(ValueError, match=r"`key` = None.*Fix: pass Flight\(key="):
        fly(hexa, ctrl, flight(250.0, sensors=Sensors(0.01)))
    with pytest.raises(ValueError, match=r"`control_rate` = None.*Fix"):
        fly(hexa, ctrl, flight(None, wind=Wind(drag_linear=0.1), key=jax.random.PRNGKey(0)))
    s = control_schedule(flight(250.0, dt=1e-3, save_dt=0.008))
    assert (s.period, s.ticks, s.save_every) == (0.004, 250, 2)
