"""Vehicle dynamics (eqs. 1-2, 11-12), actuator models and open-loop simulation.

Each simulation is compiled once (module-level commands are equinox Modules, so
changing their arrays does not recompile) and long runs are shared through
module-scoped fixtures.
"""

import math

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import jaxrotor as jr
from jaxrotor import presets, so3
from jaxrotor.dynamics import vehicle_derivative

# Accurate adaptive solve used for validation (see docs/theory.md, "Integrators").
ACC = jr.Integrator(solver=diffrax.Tsit5(), rtol=1e-12, atol=1e-12, max_steps=100_000)
# Fixed-step solve used for gradients and batching.
FIX = jr.Integrator(solver=diffrax.Tsit5(), adaptive=False, dt=5e-3)

E3 = np.array([0.0, 0.0, 1.0])


# ----------------------------------------------------------------------------- commands (pytrees)


class ConstWrench(eqx.Module):
    force: jax.Array
    torque: jax.Array

    def __call__(self, t):
        return jr.WrenchCommand(force=self.force, torque=self.torque)


class ConstU(eqx.Module):
    u: jax.Array

    def __call__(self, t):
        return jr.RotorCommand(u=self.u)


class SineU(eqx.Module):
    """u_i(t) = u0_i + a_i sin(w_i t + phi_i)."""

    u0: jax.Array
    amp: jax.Array
    freq: jax.Array
    phase: jax.Array

    def __call__(self, t):
        return jr.RotorCommand(u=self.u0 + self.amp * jnp.sin(self.freq * t + self.phase))

    def np_u(self, t):
        return np.asarray(self.u0) + np.asarray(self.amp) * np.sin(np.asarray(self.freq) * t + np.asarray(self.phase))


# ----------------------------------------------------------------------------- independent numpy model


from npref import np_rx, np_ry, np_rz  # noqa: E402  (independent NumPy rotations)


def np_FM_table_ii():
    """F and M of the Table II hexarotor written out from eqs. (3)-(9)."""
    l, a0, b0, cf, ct = 0.385, 5 * math.pi / 36, math.pi / 18, 3.799e-05, 1.163e-06
    F = np.zeros((3, 6))
    M = np.zeros((3, 6))
    for i in range(1, 7):
        g = (i - 1) * math.pi / 3
        p_i = l * np_rz(g) @ np.array([1.0, 0.0, 0.0])
        z_i = np_rz(g) @ np_ry(b0) @ np_rx((-1) ** i * a0) @ E3
        F[:, i - 1] = cf * z_i
        M[:, i - 1] = cf * np.cross(p_i, z_i) + (-1) ** i * ct * z_i
    return F, M


def np_newton_euler(y, f_b, tau_b, m, g, J):
    """State y = [p, v, R (row-major 9), omega]; eqs. (1), (2), (11), (12)."""
    v = y[3:6]
    R = y[6:15].reshape(3, 3)
    w = y[15:18]
    W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    v_dot = -g * E3 + R @ f_b / m
    R_dot = R @ W
    w_dot = np.linalg.solve(J, tau_b - np.cross(w, J @ w))
    return np.concatenate([v, v_dot, R_dot.ravel(), w_dot])


# ----------------------------------------------------------------------------- shared setup

HEXA = presets.paper_hexarotor()
U_HOVER = np.asarray(jr.hover_inputs(HEXA))
SINE = SineU(
    u0=jnp.asarray(U_HOVER * np.array([1.02, 0.99, 1.01, 0.98, 1.0, 1.03])),
    amp=jnp.asarray(U_HOVER * np.array([0.05, 0.08, 0.03, 0.06, 0.04, 0.07])),
    freq=jnp.array([3.0, 5.0, 2.0, 7.0, 4.0, 6.0]),
    phase=jnp.array([0.0, 1.0, 2.0, 0.5, 1.5, 2.5]),
)
T_OPEN = 3.0
SAVE_OPEN = 1e-3


def _open_loop_states_equal(tr, sol, atol):
    ys = sol.y.T  # (T, 18 [+ n])
    np.testing.assert_allclose(np.asarray(tr.p), ys[:, 0:3], rtol=0, atol=atol)
    np.testing.assert_allclose(np.asarray(tr.v), ys[:, 3:6], rtol=0, atol=atol)
    np.testing.assert_allclose(np.asarray(tr.R).reshape(-1, 9), ys[:, 6:15], rtol=0, atol=atol)
    np.testing.assert_allclose(np.asarray(tr.omega), ys[:, 15:18], rtol=0, atol=atol)


@pytest.fixture(scope="module")
def sine_run():
    s0 = jr.initial_state(HEXA, p=jnp.array([0.1, -0.2, 1.0]), v=jnp.array([0.3, 0.0, -0.1]),
                          omega=jnp.array([0.2, -0.1, 0.3]), R=so3.exp(jnp.array([0.1, 0.2, -0.3])))
    tr = jr.simulate_open_loop(HEXA, SINE, s0, T_OPEN, integrator=ACC, save_dt=SAVE_OPEN)
    return s0, tr


# ----------------------------------------------------------------------------- vector field


def test_vehicle_derivative_matches_numpy_model():
    F, M = np_FM_table_ii()
    J = np.diag([0.155, 0.147, 0.251])
    rng = np.random.default_rng(3)
    for _ in range(3):
        R = np.asarray(so3.exp(rng.normal(size=3)))
        w = rng.normal(size=3)
        v = rng.normal(size=3)
        u = U_HOVER * rng.uniform(0.5, 1.5, 6)
        state = jr.initial_state(HEXA, p=rng.normal(size=3), v=v, R=R, omega=w)
        d, out = vehicle_derivative(HEXA, jr.Actuators(), state, jr.RotorCommand(u=jnp.asarray(u)))
        y = np.concatenate([np.asarray(state.p), v, R.ravel(), w])
        ref = np_newton_euler(y, F @ u, M @ u, 3.5, 9.81, J)
        got = np.concatenate([np.asarray(d.p), np.asarray(d.v), np.asarray(d.R).ravel(), np.asarray(d.omega)])
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(np.asarray(out.force), F @ u, rtol=1e-13)
        np.testing.assert_allclose(np.asarray(out.torque), M @ u, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(np.asarray(d.rotor_speed), 0.0)  # ideal motor: speeds not integrated


def test_fixed_tilt_angles_come_from_the_platform_not_the_state():
    # A state built for another design must not change a fixed-tilt platform's geometry.
    other = eqx.tree_at(lambda q: q.alpha, HEXA, jnp.asarray(0.05))
    u = jnp.asarray(U_HOVER * 1.1)
    d_own, out_own = vehicle_derivative(HEXA, jr.Actuators(), jr.initial_state(HEXA), jr.RotorCommand(u=u))
    d_mix, out_mix = vehicle_derivative(HEXA, jr.Actuators(), jr.initial_state(other), jr.RotorCommand(u=u))
    np.testing.assert_array_equal(np.asarray(d_mix.v), np.asarray(d_own.v))
    np.testing.assert_array_equal(np.asarray(d_mix.omega), np.asarray(d_own.omega))
    assert float(out_mix.alpha) == float(HEXA.alpha)


def test_wrench_command_applied_directly():
    R = so3.exp(jnp.array([0.3, -0.2, 0.4]))
    w = jnp.array([0.5, -1.0, 2.0])
    state = jr.initial_state(HEXA, R=R, omega=w)
    f, tau = jnp.array([1.0, -2.0, 30.0]), jnp.array([0.1, 0.2, -0.3])
    d, out = vehicle_derivative(HEXA, jr.Actuators(), state, jr.WrenchCommand(force=f, torque=tau))
    J = np.diag([0.155, 0.147, 0.251])
    np.testing.assert_allclose(np.asarray(d.v), -9.81 * E3 + np.asarray(R) @ np.asarray(f) / 3.5, rtol=1e-14)
    w_np = np.asarray(w)
    np.testing.assert_allclose(np.asarray(d.omega), np.linalg.solve(J, np.asarray(tau) - np.cross(w_np, J @ w_np)),
                               rtol=1e-13)
    np.testing.assert_array_equal(np.asarray(out.u), 0.0)


def test_tilting_platform_uses_commanded_angles_and_servo_lag():
    base = dict(mass=2.0, c_f=3e-5, c_tau=1e-6, inertia=[0.05, 0.05, 0.09])
    tilt = jr.star_platform(6, 0.3, alpha=0.1, tilting=("alpha",), **base)
    fixed = jr.star_platform(6, 0.3, alpha=0.35, **base)
    u = jnp.full(6, 1e5)
    state = jr.initial_state(tilt, R=so3.exp(jnp.array([0.1, 0.0, 0.2])))
    d_t, out_t = vehicle_derivative(tilt, jr.Actuators(), state, jr.RotorCommand(u=u, alpha=jnp.asarray(0.35)))
    d_f, _ = vehicle_derivative(fixed, jr.Actuators(), jr.initial_state(fixed, R=state.R), jr.RotorCommand(u=u))
    np.testing.assert_allclose(np.asarray(d_t.v), np.asarray(d_f.v), atol=1e-14)
    np.testing.assert_allclose(np.asarray(d_t.omega), np.asarray(d_f.omega), atol=1e-14)
    assert float(out_t.alpha) == 0.35 and float(d_t.alpha) == 0.0
    # first-order servo: applied angle is the state's, rate (cmd - angle)/tau clipped at the rate limit
    act = jr.Actuators(servo=jr.FirstOrderServo(time_constant=0.05, rate_limit=6.0))
    d_s, out_s = vehicle_derivative(tilt, act, state, jr.RotorCommand(u=u, alpha=jnp.asarray(0.12)))
    assert float(out_s.alpha) == pytest.approx(0.1) and float(d_s.alpha) == pytest.approx((0.12 - 0.1) / 0.05)
    d_s, _ = vehicle_derivative(tilt, act, state, jr.RotorCommand(u=u, alpha=jnp.asarray(0.9)))
    assert float(d_s.alpha) == pytest.approx(6.0)


# ----------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize(
    "force",
    [
        np.zeros(3),  # free fall
        np.array([2.0, -1.0, 40.0]),  # constant body force at a fixed tilted attitude
    ],
    ids=["free_fall", "constant_body_force"],
)
def test_free_fall_and_constant_force_closed_form(force):
    p0, v0 = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 4.0])
    R0 = np.asarray(so3.exp(np.array([0.2, -0.3, 0.5])))
    s0 = jr.initial_state(HEXA, p=jnp.asarray(p0), v=jnp.asarray(v0), R=jnp.asarray(R0))
    cmd = ConstWrench(jnp.asarray(force), jnp.zeros(3))
    tr = jr.simulate_open_loop(HEXA, cmd, s0, 2.0, integrator=ACC, save_dt=0.05)
    t = np.asarray(tr.t)
    a = -9.81 * E3 + R0 @ force / 3.5
    p_exact = p0 + np.outer(t, v0) + 0.5 * np.outer(t**2, a)
    np.testing.assert_allclose(np.asarray(tr.p), p_exact, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.asarray(tr.v), v0 + np.outer(t, a), rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.asarray(tr.R), np.broadcast_to(R0, (t.size, 3, 3)), atol=1e-12)
    np.testing.assert_allclose(np.asarray(tr.accel), np.broadcast_to(a, (t.size, 3)), atol=1e-12)
    assert not bool(tr.diverged) and bool(tr.solver_ok)


class TestHoverAndDivergence:
    @pytest.fixture(scope="class")
    @classmethod
    def run(cls):
        s0 = jr.initial_state(HEXA)

        def go(u):
            return jr.simulate_open_loop(HEXA, ConstU(jnp.asarray(u)), s0, 10.0, save_dt=0.1)

        return go

    def test_hover_stays_still(self, run):
        tr = run(U_HOVER)
        assert np.max(np.abs(np.asarray(tr.p))) < 1e-9
        assert np.max(np.abs(np.asarray(tr.v))) < 1e-9
        assert np.max(np.abs(np.asarray(tr.omega))) < 1e-9
        assert np.max(np.abs(np.asarray(tr.R) - np.eye(3))) < 1e-9
        assert not bool(tr.diverged)

    def test_blow_up_is_flagged(self, run):
        tr = run(1e3 * U_HOVER)  # 1000 times the weight: leaves every runaway limit within a second
        assert bool(tr.diverged)
        assert np.max(np.abs(np.asarray(tr.p))) > 1e3

    def test_slightly_above_hover_is_not_flagged(self, run):
        tr = run(1.01 * U_HOVER)  # climbs with 0.0981 m/s^2: 4.9 m after 10 s, well within the limits
        np.testing.assert_allclose(float(tr.p[-1, 2]), 0.5 * 0.01 * 9.81 * 100, rtol=1e-9)
        assert not bool(tr.diverged)


# ----------------------------------------------------------------------------- torque-free rigid body


@pytest.fixture(scope="module")
def torque_free():
    J = np.array([[1.0, 0.1, -0.05], [0.1, 2.0, 0.2], [-0.05, 0.2, 3.0]])
    plat = jr.star_platform(4, 0.2, mass=1.3, c_f=1e-5, c_tau=1e-7, inertia=J)
    w0 = np.array([0.4, 1.0, -0.7])  # not along a principal axis, near the unstable middle one
    s0 = jr.initial_state(plat, omega=jnp.asarray(w0), R=so3.exp(jnp.array([0.3, 0.1, -0.2])))
    tr = jr.simulate_open_loop(plat, ConstWrench(jnp.zeros(3), jnp.zeros(3)), s0, 45.0, integrator=ACC, save_dt=0.05)
    return J, w0, tr


def test_torque_free_energy_and_momentum_conserved(torque_free):
    J, w0, tr = torque_free
    t = np.asarray(tr.t)
    om, R = np.asarray(tr.omega), np.asarray(tr.R)
    assert np.linalg.eigvalsh(J).min() > 0 and np.linalg.norm(np.cross(J @ w0, w0)) > 0.1
    E = 0.5 * np.einsum("ti,ij,tj->t", om, J, om)
    L = np.einsum("tij,jk,tk->ti", R, J, om)  # world-frame angular momentum R J omega
    sel = t <= 20.0 + 1e-9
    assert np.max(np.abs(E[sel] / E[0] - 1)) < 1e-9
    assert np.max(np.linalg.norm(L[sel] - L[0], axis=1)) / np.linalg.norm(L[0]) < 1e-9
    # the body really tumbles: omega changes by O(1) while the invariants hold
    assert np.max(np.linalg.norm(om - om[0], axis=1)) > 0.5
    # over the full 45 s the invariants still hold to 1e-9 and R stays on SO(3)
    assert np.max(np.abs(E / E[0] - 1)) < 1e-9
    assert np.max(np.linalg.norm(L - L[0], axis=1)) / np.linalg.norm(L[0]) < 1e-9
    assert float(np.max(np.asarray(so3.orthonormality_error(R)))) < 1e-10


def test_torque_free_translation_is_free_fall(torque_free):
    _, _, tr = torque_free
    t = np.asarray(tr.t)
    np.testing.assert_allclose(np.asarray(tr.p)[:, 2], -0.5 * 9.81 * t**2, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(np.asarray(tr.p)[:, :2], 0.0, atol=1e-12)


# ----------------------------------------------------------------------------- against scipy


def test_open_loop_matches_scipy_dop853(sine_run):
    s0, tr = sine_run
    F, M = np_FM_table_ii()
    J = np.diag([0.155, 0.147, 0.251])

    def rhs(t, y):
        u = SINE.np_u(t)
        return np_newton_euler(y, F @ u, M @ u, 3.5, 9.81, J)

    y0 = np.concatenate([np.asarray(s0.p), np.asarray(s0.v), np.asarray(s0.R).ravel(), np.asarray(s0.omega)])
    t_eval = np.asarray(tr.t)[::50]
    sol = solve_ivp(rhs, (0.0, T_OPEN), y0, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t_eval)
    assert sol.success

    class Sub:  # the trajectory at the scipy sample times
        p, v, R, omega = (np.asarray(getattr(tr, k))[::50] for k in ("p", "v", "R", "omega"))

    # the run does move: the comparison is not between two constants
    assert np.max(np.abs(Sub.p - Sub.p[0])) > 0.1 and np.max(np.abs(Sub.omega - Sub.omega[0])) > 0.1
    _open_loop_states_equal(Sub, sol, atol=1e-7)
    # outputs: IdealMotor applies the command at once and reports sqrt(u)
    u_exact = np.stack([SINE.np_u(t) for t in np.asarray(tr.t)])
    np.testing.assert_allclose(np.asarray(tr.u), u_exact, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(tr.u_cmd), u_exact, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(tr.rotor_speed), np.sqrt(u_exact), rtol=1e-13)


def test_outputs_accel_is_derivative_of_velocity(sine_run):
    _, tr = sine_run
    v, a = np.asarray(tr.v), np.asarray(tr.accel)
    w, dw = np.asarray(tr.omega), np.asarray(tr.angular_accel)
    R = np.asarray(tr.R)
    h = SAVE_OPEN
    fd_v = (v[2:] - v[:-2]) / (2 * h)
    fd_w = (w[2:] - w[:-2]) / (2 * h)
    fd_R = (R[2:] - R[:-2]) / (2 * h)
    # central differences are O(h^2) accurate: h^2/6 |jerk| ~ 1e-6 here
    np.testing.assert_allclose(fd_v, a[1:-1], rtol=0, atol=1e-5 * np.max(np.abs(a)))
    np.testing.assert_allclose(fd_w, dw[1:-1], rtol=0, atol=1e-5 * np.max(np.abs(dw)))
    W = np.zeros((w.shape[0], 3, 3))
    W[:, 0, 1], W[:, 0, 2], W[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    W -= np.swapaxes(W, 1, 2)
    np.testing.assert_allclose(fd_R, np.einsum("tij,tjk->tik", R, W)[1:-1], rtol=0, atol=1e-5)
    # and a consistent wrench: accel = -g e3 + R f / m
    f_b = np.asarray(tr.wrench_achieved)[:, :3]
    np.testing.assert_allclose(a, -9.81 * E3 + np.einsum("tij,tj->ti", R, f_b) / 3.5, rtol=0, atol=1e-12)


def test_first_order_motor_matches_scipy():
    tau_m = 0.04
    act = jr.Actuators(motor=jr.FirstOrderMotor(tau_m))
    s0 = jr.initial_state(HEXA, rotor_speed="hover", omega=jnp.array([0.0, 0.1, -0.2]))
    np.testing.assert_allclose(np.asarray(s0.rotor_speed), np.sqrt(U_HOVER), rtol=1e-14)
    tr = jr.simulate_open_loop(HEXA, SINE, s0, 2.0, actuators=act, integrator=ACC, save_dt=0.02)
    F, M = np_FM_table_ii()
    J = np.diag([0.155, 0.147, 0.251])

    def rhs(t, y):
        s = y[18:]
        w_cmd = np.clip(np.sqrt(np.maximum(SINE.np_u(t), 0.0)), 0.0, 700.0)
        u = s**2  # applied input follows the lagged speed
        return np.concatenate([np_newton_euler(y[:18], F @ u, M @ u, 3.5, 9.81, J), (w_cmd - s) / tau_m])

    y0 = np.concatenate([np.zeros(3), np.zeros(3), np.eye(3).ravel(), np.asarray(s0.omega), np.sqrt(U_HOVER)])
    sol = solve_ivp(rhs, (0.0, 2.0), y0, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=np.asarray(tr.t))
    assert sol.success
    _open_loop_states_equal(tr, sol, atol=1e-7)
    np.testing.assert_allclose(np.asarray(tr.rotor_speed), sol.y[18:].T, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(np.asarray(tr.u), sol.y[18:].T ** 2, rtol=1e-9)
    # the lag is visible: applied and commanded inputs differ
    assert np.max(np.abs(np.asarray(tr.u) - np.asarray(tr.u_cmd))) > 0.01 * U_HOVER[0]


# ----------------------------------------------------------------------------- motor model


class TestFirstOrderMotorStep:
    TAU = 0.05

    @pytest.fixture(scope="class")
    @classmethod
    def run(cls):
        act = jr.Actuators(motor=jr.FirstOrderMotor(cls.TAU))

        def go(plat, u):
            s0 = jr.initial_state(plat)
            return jr.simulate_open_loop(plat, ConstU(jnp.asarray(u)), s0, 0.3, actuators=act, integrator=ACC,
                                         save_dt=0.01)

        return go

    def test_step_response(self, run):
        p = presets.cs_4r()
        tr = run(p, np.ones(4))  # omega_cmd = 1 rad/s
        t = np.asarray(tr.t)
        expected = 1.0 - np.exp(-t / self.TAU)
        np.testing.assert_allclose(np.asarray(tr.rotor_speed), np.tile(expected[:, None], (1, 4)), rtol=0, atol=1e-8)
        np.testing.assert_allclose(np.asarray(tr.u), np.tile(expected[:, None] ** 2, (1, 4)), rtol=0, atol=1e-8)

    def test_speed_limit_clips_the_command(self, run):
        p = presets.cs_4r()  # rotor_speed_max = 700 rad/s
        tr = run(p, np.full(4, 1e8))  # asks for 1e4 rad/s
        t = np.asarray(tr.t)
        np.testing.assert_allclose(np.asarray(tr.rotor_speed)[:, 0], 700.0 * (1 - np.exp(-t / self.TAU)), atol=1e-6)
        assert np.max(np.asarray(tr.rotor_speed)) < 700.0

    def test_lower_speed_limit(self, run):
        # same structure as cs_4r (no recompilation), with rotor_speed_min = 50 rad/s
        p = eqx.tree_at(lambda q: q.rotor_speed_min, presets.cs_4r(), jnp.full(4, 50.0, dtype=jnp.float64))
        tr = run(p, np.array([0.0, -10.0, 100.0, 3600.0]))  # zero, negative, below and above rotor_speed_min
        t = np.asarray(tr.t)
        e = 1 - np.exp(-t / self.TAU)
        np.testing.assert_allclose(np.asarray(tr.rotor_speed), np.outer(e, [50.0, 50.0, 50.0, 60.0]), atol=1e-6)


@pytest.mark.parametrize("bad", [0.0, -0.01, float("nan"), float("inf")])
def test_first_order_motor_rejects_bad_time_constant(bad):
    with pytest.raises(ValueError, match="`time_constant`"):
        jr.FirstOrderMotor(bad)


def test_first_order_servo_rejects_bad_parameters():
    with pytest.raises(ValueError, match="`time_constant`"):
        jr.FirstOrderServo(time_constant=0.0)
    with pytest.raises(ValueError, match="`rate_limit`"):
        jr.FirstOrderServo(rate_limit=-1.0)


# ----------------------------------------------------------------------------- gradients


U_GRAD = jnp.asarray(U_HOVER * np.array([1.05, 0.97, 1.02, 0.99, 1.04, 0.96]))
STATE_GRAD = jr.initial_state(HEXA, omega=jnp.array([0.1, -0.2, 0.05]))


def _final_scalar(theta):
    """sum(p(T)) + R(T)[0, 1] + R(T)[1, 2] + omega(T)[2] for design theta = (alpha0, beta0, l, m)."""
    plat = eqx.tree_at(lambda q: (q.alpha, q.beta, q.arm_length, q.mass), HEXA, (theta[0], theta[1], theta[2], theta[3]))
    tr = jr.simulate_open_loop(plat, ConstU(U_GRAD), STATE_GRAD, 1.5, integrator=FIX, save_dt=0.5)
    return jnp.sum(tr.p[-1]) + tr.R[-1, 0, 1] + tr.R[-1, 1, 2] + tr.omega[-1, 2]


_final_scalar_jit = jax.jit(_final_scalar)
_final_grad_jit = jax.jit(jax.grad(_final_scalar))


def test_gradient_wrt_design_matches_finite_differences():
    theta0 = np.array([float(HEXA.alpha), float(HEXA.beta), float(HEXA.arm_length), float(HEXA.mass)])
    g = np.asarray(_final_grad_jit(jnp.asarray(theta0)))
    assert np.all(np.isfinite(g))
    for k, name in enumerate(("alpha0", "beta0", "arm_length", "mass")):
        h = 1e-5 * abs(theta0[k])
        tp, tm = theta0.copy(), theta0.copy()
        tp[k] += h
        tm[k] -= h
        fd = (float(_final_scalar_jit(jnp.asarray(tp))) - float(_final_scalar_jit(jnp.asarray(tm)))) / (2 * h)
        assert abs(fd) > 1e-3, f"{name}: the scalar should depend on it"
        assert g[k] == pytest.approx(fd, rel=1e-6), name


# ----------------------------------------------------------------------------- jit + vmap


def test_vmap_over_platforms_matches_loop():
    rng = np.random.default_rng(5)
    plats = [
        eqx.tree_at(
            lambda q: (q.alpha, q.beta, q.arm_length, q.mass),
            HEXA,
            tuple(jnp.asarray(x) for x in (rng.uniform(0.1, 0.6), rng.uniform(0.0, 0.4), rng.uniform(0.3, 0.45),
                                           rng.uniform(3.0, 4.0))),
        )
        for _ in range(8)
    ]
    batch = jax.tree.map(lambda *x: jnp.stack(x), *plats)
    cmd = ConstU(U_GRAD)

    def run(plat):
        return jr.simulate_open_loop(plat, cmd, jr.initial_state(plat, omega=jnp.array([0.1, -0.2, 0.05])), 1.0,
                                     integrator=FIX, save_dt=0.25)

    out = jax.jit(jax.vmap(run))(batch)
    assert out.p.shape == (8, 5, 3)
    finals = []
    for i, plat in enumerate(plats):
        tr = run(plat)
        for k in ("p", "v", "R", "omega", "u", "accel"):
            np.testing.assert_allclose(np.asarray(getattr(out, k))[i], np.asarray(getattr(tr, k)), rtol=1e-12, atol=1e-12)
        finals.append(np.asarray(tr.p[-1]))
    # the eight designs do fly differently
    assert np.min([np.linalg.norm(finals[i] - finals[j]) for i in range(8) for j in range(i)]) > 1e-4
    assert not np.any(np.asarray(out.diverged))
