"""Flight verdicts (:mod:`jaxrotor.verdict`) on synthetic trajectories: each reason fires at its threshold, not below."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.design.platform import star_platform
from jaxrotor.io import config as cfg
from jaxrotor.reference import Hover, paper_maneuver, pitch_hover
from jaxrotor.trajectory import Trajectory
from jaxrotor.verdict import (
    REASONS,
    Verdict,
    VerdictThresholds,
    decide,
    flight_verdict,
    hover_feasibility,
    verdict_line,
    verdict_measures,
)

PLATFORM = jr.presets.get("paper_hexarotor")
N = PLATFORM.n_rotors
DT = 0.01
TH = VerdictThresholds()


def _flight(reference=None, t1=None):
    return jr.Flight(reference=reference if reference is not None else Hover((0.0, 0.0, 1.0), 10.0), save_dt=DT, t1=t1)


def _traj(flight, p_err=None, saturated=None, att=None, p_ref=None, diverged=False, u_cmd=None):
    """A flight that tracks its hover reference exactly, then the given deviations (each ``(T, ...)``)."""
    t = np.asarray(flight.save_times)
    T = len(t)
    p_ref = np.tile([0.0, 0.0, 1.0], (T, 1)) if p_ref is None else p_ref
    p = p_ref - (np.zeros((T, 3)) if p_err is None else p_err)
    R_ref = np.tile(np.eye(3), (T, 1, 1))
    R = R_ref.copy()
    if att is not None:  # a roll of att(t) rad: |e_R| = sin(att) for the attitude error of eq. (15)
        c, s = np.cos(att), np.sin(att)
        R[:, 1, 1], R[:, 1, 2], R[:, 2, 1], R[:, 2, 2] = c, -s, s, c
    u_hover = float(PLATFORM.weight / jnp.sum(PLATFORM.c_f))
    u = np.full((T, N), u_hover)
    z3, z6 = np.zeros((T, 3)), np.zeros((T, 6))
    sat = np.zeros((T, N), bool) if saturated is None else np.repeat(saturated[:, None], N, axis=1)
    return Trajectory(t=jnp.asarray(t), p=jnp.asarray(p), v=jnp.asarray(z3), R=jnp.asarray(R), omega=jnp.asarray(z3),
                      accel=jnp.asarray(z3), angular_accel=jnp.asarray(z3), u=jnp.asarray(u),
                      u_cmd=jnp.asarray(u if u_cmd is None else u_cmd), rotor_speed=jnp.asarray(np.sqrt(u)),
                      alpha=jnp.zeros((T, N)), beta=jnp.zeros((T, N)), wrench_requested=jnp.asarray(z6),
                      wrench_achieved=jnp.asarray(z6), saturated=jnp.asarray(sat), p_ref=jnp.asarray(p_ref),
                      v_ref=jnp.asarray(z3), a_ref=jnp.asarray(z3), R_ref=jnp.asarray(R_ref), controller_state=None,
                      diverged=jnp.asarray(diverged), solver_ok=jnp.asarray(True), num_steps=jnp.asarray(T))


def _verdict(traj, flight, **kw):
    return flight_verdict(traj, PLATFORM, flight, **kw)


def test_healthy_flight_is_ok():
    f = _flight()
    v = _verdict(_traj(f), f)
    assert v.ok and v.reasons == () and v.to_json() == "ok" and v.line() == "verdict: ok"
    assert v.measures["saturation_fraction"] == 0.0 and v.measures["judged_time"] == pytest.approx(9.01)


def _x_error(t, amplitude):
    e = np.zeros((len(t), 3))
    e[:, 0] = amplitude
    return e


def test_lost_tracking_at_the_threshold_scaled_to_the_reference():
    f = _flight()
    t = np.asarray(f.save_times)
    # the 0.5 m floor for a hover (extent 0), after the 1 s settle time
    below = _verdict(_traj(f, _x_error(t, np.where(t > 5, 0.49, 0.0))), f)
    above = _verdict(_traj(f, _x_error(t, np.where(t > 5, 0.51, 0.0))), f)
    assert below.ok and above.reasons == ("lost_tracking",)
    assert "max position error 0.51 m, threshold 0.5 m" in above.line()
    # the first second is not judged
    assert _verdict(_traj(f, _x_error(t, np.where(t < 0.99, 3.0, 0.0))), f).ok
    # a reference travelling 4 m: threshold 0.25 * 4 = 1 m
    p_ref = np.zeros((len(t), 3))
    p_ref[:, 0], p_ref[:, 2] = 0.4 * t, 1.0
    moving = _flight(Hover((0.0, 0.0, 1.0), 10.0))
    assert _verdict(_traj(moving, _x_error(t, np.where(t > 5, 0.99, 0.0)), p_ref=p_ref), moving).ok
    v = _verdict(_traj(moving, _x_error(t, np.where(t > 5, 1.01, 0.0)), p_ref=p_ref), moving)
    assert v.reasons == ("lost_tracking",) and v.measures["reference_extent"] == pytest.approx(4.0)
    # a flight that starts 2 m off its reference may be up to 2 m off after the settle time
    step = np.where(t < 1.5, 2.0, 1.9 * np.exp(-(t - 1.5)))
    assert _verdict(_traj(f, _x_error(t, step)), f).ok
    assert _verdict(_traj(f, _x_error(t, np.where(t < 1.5, 2.0, 2.1))), f).reasons == ("lost_tracking",)
    # a 1 m step of the reference at 5 s: errors up to the step are answering it, not lost tracking
    p_step = np.tile([0.0, 0.0, 1.0], (len(t), 1))
    p_step[t >= 5.0, 0] = 1.0
    v = _verdict(_traj(moving, _x_error(t, np.where(t >= 5.0, np.exp(-(t - 5.0)), 0.0)), p_ref=p_step), moving)
    assert v.ok and v.measures["reference_step"] == pytest.approx(1.0)
    v = _verdict(_traj(moving, _x_error(t, np.where(t >= 5.0, 1.05, 0.0)), p_ref=p_step), moving)
    assert v.reasons == ("lost_tracking",)
    # the second after a reference jump is not judged
    jumps = _flight(paper_maneuver(), t1=20.0)
    tj = np.asarray(jumps.save_times)
    assert _verdict(_traj(jumps, _x_error(tj, np.where((tj >= 8.0) & (tj < 8.99), 0.8, 0.0))), jumps).ok
    assert not _verdict(_traj(jumps, _x_error(tj, np.where((tj >= 8.0) & (tj < 9.05), 0.8, 0.0))), jumps).ok
    # the threshold is configurable
    assert _verdict(_traj(f, _x_error(t, np.where(t > 5, 0.51, 0.0))), f,
                    thresholds=VerdictThresholds(max_position_error=0.6)).ok


def test_attitude_error_for_a_controller_that_tracks_the_attitude():
    f = _flight()
    t = np.asarray(f.save_times)
    att = lambda a: np.where(t > 3, a, 0.0)  # noqa: E731
    fa, ua = jr.FullyActuatedSE3(), jr.UnderactuatedSE3()
    assert _verdict(_traj(f, att=att(0.34)), f, controller=fa).ok
    v = _verdict(_traj(f, att=att(0.37)), f, controller=fa)  # |e_R| = sin(0.37) = 0.3616 > 0.35
    assert v.reasons == ("lost_tracking",) and "max attitude error 0.362 rad, threshold 0.35 rad" in v.line()
    assert _verdict(_traj(f, att=att(0.37)), f, controller=ua).ok  # its R_r is the heading only


def test_saturated_counts_after_the_settle_time_and_not_after_a_reference_jump():
    ref = paper_maneuver()  # jumps at 8 s and 37 s
    f = _flight(ref, t1=20.0)
    t = np.asarray(f.save_times)
    counted = 19.01 - 1.0  # [1, 20] less the second after 8 s
    for share, ok in ((0.049, True), (0.051, False)):
        sat = (t >= 10.0) & (t < 10.0 + share * counted - 1e-9)
        v = _verdict(_traj(f, saturated=sat), f)
        assert v.ok == ok, (share, v.line())
    v = _verdict(_traj(f, saturated=(t >= 10.0) & (t < 11.0)), f)
    assert v.reasons == ("saturated",) and "threshold 5 %" in v.line()
    assert v.measures["judged_time"] == pytest.approx(counted, abs=0.011)
    # the start and the second after the jump at 8 s are not counted, however saturated
    assert _verdict(_traj(f, saturated=(t < 1.0) | ((t >= 8.0) & (t < 9.0))), f).ok
    # an unbounded motor that applies a command above u_max saturates too
    u_cmd = np.full((len(t), N), float(PLATFORM.u_max[0]) * 1.1)
    assert _verdict(_traj(f, u_cmd=u_cmd), f).reasons == ("saturated",)
    assert _verdict(_traj(f, saturated=(t >= 10.0) & (t < 11.0)), f,
                    thresholds=VerdictThresholds(max_saturation=0.06)).ok


def test_growing_oscillation_is_diverged_before_it_leaves_the_tracking_band():
    f = _flight()
    t = np.asarray(f.save_times)
    osc = np.sin(2 * np.pi * 1.5 * t)
    growing = _verdict(_traj(f, _x_error(t, 0.02 * np.exp(0.3 * t) * osc)), f)  # 0.03 m at 1 s, 0.4 m at 10 s
    assert growing.reasons == ("diverged",) and "error envelope growing" in growing.line()
    env = growing.measures["envelope"]
    assert all(b > a for a, b in zip(env, env[1:])) and env[-1] < 0.5
    assert _verdict(_traj(f, _x_error(t, 0.3 * osc)), f).ok  # a steady oscillation
    # an exact first phase, then a harder one: a step in the envelope, not a growth
    harder = np.select([t < 3.5, t < 5.5, t < 7.75], [0.0, 0.33, 0.385], 0.39)
    assert _verdict(_traj(f, _x_error(t, harder * osc)), f).ok
    # a periodic error, then a harder last phase (a fast figure-eight, then the landing): not growing either
    assert _verdict(_traj(f, _x_error(t, np.where(t < 7.9, 0.1 * (1 + 0.01 * t), 0.33) * osc)), f).ok
    assert _verdict(_traj(f, _x_error(t, 1e-3 * np.exp(0.3 * t) * osc)), f).ok  # growing, but millimetres
    # a slower growth (x2.5 over the judged windows) stays below error_growth = 3
    assert _verdict(_traj(f, _x_error(t, 0.1 * np.exp(0.12 * t) * osc)), f).ok
    assert _verdict(_traj(f, _x_error(t, 0.02 * np.exp(0.3 * t) * osc)), f,
                    thresholds=VerdictThresholds(error_growth=20.0)).ok


def test_diverged_flag_unstable_and_infeasible_reasons():
    f = _flight()
    t = np.asarray(f.save_times)
    p_err = _x_error(t, np.where(t > 5, np.nan, 0.0))
    v = _verdict(_traj(f, p_err, diverged=True), f)
    assert v.reasons == ("diverged",) and v.measures["max_position_error"] == 0.0  # the finite part

    @dataclasses.dataclass
    class Report:  # the parts of a StabilityReport the verdict reads
        stable: bool
        equilibrium_found: bool = True

        def summary(self):
            return "UNSTABLE: a yaw mode grows" if not self.stable else "stable"

    traj = _traj(f)
    assert _verdict(traj, f, stability=Report(True)).ok
    assert _verdict(traj, f, stability=Report(False)).reasons == ("unstable",)
    assert _verdict(traj, f, stability=Report(False, equilibrium_found=False)).ok  # left to `infeasible`
    sideways = star_platform(6, 0.385, mass=3.5, inertia=[0.155, 0.147, 0.251], c_f=3.799e-5, c_tau=1.163e-6,
                             alpha=0.49 * math.pi, rotor_speed_max=700.0)
    feas = hover_feasibility(sideways, f)
    assert not feas.feasible and feas.margin < -1 and feas.checked == 1
    v = _verdict(traj, f, stability=Report(False), feasibility=feas)
    assert v.reasons == ("unstable", "infeasible") and "cannot hold level hover" in v.line()
    assert v.to_json() == ["unstable", "infeasible"]


def test_hover_feasibility_checks_the_reference_attitudes():
    f = _flight(pitch_hover((0.0, 0.0, 1.0), math.radians(15.0), duration=4.0, ramp_time=2.0))
    assert hover_feasibility(PLATFORM, f).feasible  # the paper hexarotor holds 15 deg
    low_cant = star_platform(6, 0.385, mass=3.5, inertia=[0.155, 0.147, 0.251], c_f=3.799e-5, c_tau=1.163e-6,
                             alpha=0.2, rotor_speed_max=700.0)
    feas = hover_feasibility(low_cant, f)
    assert not feas.feasible and feas.pitch == pytest.approx(math.radians(15.0), abs=1e-3) and feas.checked > 10
    assert hover_feasibility(low_cant, _flight()).feasible  # level hover only for a position reference
    assert hover_feasibility(low_cant, f, controller=jr.UnderactuatedSE3()).checked == 1


def test_measures_vmap_for_a_batch_of_flights():
    f = _flight()
    t = np.asarray(f.save_times)
    a, b = _traj(f), _traj(f, _x_error(t, np.where(t > 5, 0.7, 0.0)))
    batch = jax.tree_util.tree_map(lambda x, y: jnp.stack([x, y]), a, b)
    m = jax.jit(jax.vmap(lambda tr: verdict_measures(tr, PLATFORM, f, TH)))(batch)
    assert m.max_position_error.shape == (2,) and m.envelope.shape == (2, TH.growth_windows)
    one = jax.tree_util.tree_map(lambda x: x[1], m)
    assert decide(one, TH).reasons == ("lost_tracking",) and decide(jax.tree_util.tree_map(lambda x: x[0], m)).ok


def test_thresholds_are_checked_and_read_from_the_flight_table():
    with pytest.raises(ValueError, match="max_saturation"):
        VerdictThresholds(max_saturation=-0.1)
    with pytest.raises(ValueError, match="growth_windows"):
        VerdictThresholds(growth_windows=2)
    base = ('name = "t"\n[platform]\npreset = "paper_hexarotor"\n[reference]\nkind = "hover"\nduration = 1.0\n'
            "[flight]\n")
    assert cfg.loads(base, "t.toml").thresholds == VerdictThresholds()
    conf = cfg.loads(base + "max_saturation = 0.2\nmax_position_error = 0.1\nsettle_time = 2.0\ngrowth_windows = 6\n",
                     "t.toml")
    assert conf.thresholds == VerdictThresholds(max_saturation=0.2, max_position_error=0.1, settle_time=2.0,
                                                growth_windows=6)
    assert conf.with_t1(0.5).thresholds == conf.thresholds
    with pytest.raises(cfg.ConfigError, match=r"flight.error_growth.*Fix"):
        cfg.loads(base + "error_growth = 0.5\n", "t.toml")


def test_lines():
    ok, bad = Verdict(), Verdict(("saturated",), {"saturated": "34 % of 9 s judged, threshold 5 %"})
    assert bad.line() == "verdict: FAILED — saturated (34 % of 9 s judged, threshold 5 %)"
    assert verdict_line({"a": ok}) == "verdict: ok"
    assert verdict_line({"a": ok, "b": bad}).splitlines() == ["verdict (a): ok", "verdict (b): FAILED — saturated "
                                                              "(34 % of 9 s judged, threshold 5 %)"]
    assert set(REASONS) == {"diverged", "lost_tracking", "saturated", "unstable", "infeasible"}
