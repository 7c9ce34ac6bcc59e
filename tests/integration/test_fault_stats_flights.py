"""The vectorised fault outcome (jaxrotor.verdict.fault_outcome_code) against the rule written out in NumPy on real
and altered flights, and a vmapped batch of random faults (jaxrotor.fault_stats) against its members flown one by
one (the statistics themselves: tests/unit/test_fault_stats.py)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor import so3
from jaxrotor.fault_stats import random_fault_mix, single_fault
from jaxrotor.faults import SPIN_ACCELERATION, Faults
from jaxrotor.io.config import loads
from jaxrotor.tilted import MAX_AXIS_TILT
from jaxrotor.verdict import FAULT_OUTCOMES, fault_outcome, fault_outcome_code

from unit._paper_hover import paper_hover_toml

HOVER = paper_hover_toml(0.002)


def _rule(traj, t_fault, settle=3.0, position_tol=0.1, attitude_tol=0.05):
    """The outcome rule of docs/faults.md written out in NumPy on the host, one flight."""
    t = np.asarray(traj.t)
    start = min(t_fault + settle, t[-1] - 0.2 * max(t[-1] - t_fault, 0.0))
    window = t >= start - 1e-9
    if bool(traj.diverged) or not window.any():
        return "lost"
    e_p = np.linalg.norm(np.asarray(traj.p_ref - traj.p)[window], axis=1)
    e_R = np.asarray(jax.vmap(so3.attitude_error)(traj.R, traj.R_ref))[window]  # signed, per body axis
    if not np.all(np.isfinite(e_p)) or e_p.max() > position_tol:
        return "lost"
    if np.abs(e_R).max() <= attitude_tol:
        return "full_pose"
    e_m = e_R.mean(axis=0)  # a constant tilted attitude with the heading kept: the tilted full-pose hover
    if (np.abs(e_R - e_m).max() <= attitude_tol and abs(e_m[2]) <= attitude_tol
            and np.linalg.norm(e_m) <= np.sin(MAX_AXIS_TILT)):
        return "full_pose"
    z = np.asarray(traj.R)[window][:, :, 2].mean(axis=0)  # the mean thrust axis against the reference's
    z_ref = np.asarray(traj.R_ref)[window][:, :, 2].mean(axis=0)
    tilt = np.arccos(np.clip(z @ z_ref / (np.linalg.norm(z) * np.linalg.norm(z_ref)), -1.0, 1.0))
    spin_up = np.polyfit(t[window], np.asarray(traj.omega)[window, 2], 1)[0]  # the yaw rate's trend [rad/s^2]
    return "yaw_released" if tilt <= attitude_tol and abs(spin_up) <= SPIN_ACCELERATION else "lost"


@pytest.fixture(scope="module")
def config():
    return loads(HOVER, "f.toml")


@pytest.fixture(scope="module")
def flights(config):
    """The paper hexarotor in hover, 3 s: rotor 2 at 40 % from 0.5 s, rotor 2 lost at 0.5 s (yaw released when the
    loss is known, the default), and the same loss with yaw kept (``release_yaw = "never"``)."""
    out = {}
    for name, faults in (("partial", Faults("rotor_partial", 1, 0.5, 0.4)), ("loss", Faults("rotor_loss", 1, 0.5)),
                         ("never", Faults("rotor_loss", 1, 0.5, release_yaw="never"))):
        flight = dataclasses.replace(config.flight, faults=faults)
        out[name] = (jr.fly(config.platform, config.controller, flight), flight)
    return out


def test_outcome_code_is_the_rule_on_real_flights(flights):
    """Each word from a real flight, and the code agrees with fault_outcome and with the rule written in NumPy for
    every settle time (0.5 s ... 10 s: the flight's last fifth after the fault) and altered copies of each."""
    words = {name: fault_outcome(traj, flight) for name, (traj, flight) in flights.items()}
    # the paper hexarotor's five rotors cannot cancel their yaw torque: with yaw released it spins up (lost)
    assert words == {"partial": "full_pose", "loss": "lost", "never": "lost"}
    traj, flight = flights["partial"]
    t = traj.t[:, None]

    def spinning(rate, accel):  # the held flight turned about body z at rate + accel t [rad/s]
        yaw = rate * t + 0.5 * accel * t**2
        R = traj.R @ jax.vmap(so3.exp)(jnp.concatenate([jnp.zeros_like(t), jnp.zeros_like(t), yaw], axis=1))
        return dataclasses.replace(traj, R=R, omega=traj.omega.at[:, 2].add(rate + accel * t[:, 0]))

    altered = {
        "steady_spin": spinning(6.0, 0.0),
        "slow_spin_up": spinning(6.0, 0.5 * SPIN_ACCELERATION),
        "spin_up": spinning(6.0, 2.0 * SPIN_ACCELERATION),
        "tilted": dataclasses.replace(traj, R=traj.R @ so3.exp(jnp.asarray([0.2, -0.1, 0.0]))),
        "over_tilted": dataclasses.replace(traj, R=traj.R @ so3.exp(jnp.asarray([0.7, 0.0, 0.0]))),
        "yawed": dataclasses.replace(traj, R=traj.R @ so3.exp(jnp.asarray([0.0, 0.0, 0.3]))),
        "rolled": dataclasses.replace(traj, R=traj.R @ so3.exp(jnp.asarray([0.3, 0.0, 0.0]))),
        "fallen": dataclasses.replace(traj, p=traj.p - jnp.asarray([0.0, 0.0, 0.2])),
        "late_fall": dataclasses.replace(traj, p=traj.p.at[-1, 2].add(-0.2)),  # only the last sample is off
        "nan": dataclasses.replace(traj, p=traj.p.at[-3].set(jnp.nan)),
        "diverged": dataclasses.replace(traj, diverged=jnp.asarray(True)),
    }
    cases = {**{n: tf for n, tf in flights.items()}, **{n: (tr, flight) for n, tr in altered.items()}}
    seen = set()
    code_of = jax.jit(lambda tr, faults, settle: fault_outcome_code(tr, faults, settle=settle))
    for name, (tr, fl) in cases.items():
        for settle in (0.5, 1.0, 3.0, 10.0):
            ref = _rule(tr, 0.5, settle)
            code = int(code_of(tr, fl.faults, settle))
            assert FAULT_OUTCOMES[code] == ref == fault_outcome(tr, fl, settle=settle), (name, settle)
            seen.add(ref)
    assert seen == set(FAULT_OUTCOMES)
    # traced fault times and thresholds: one vmapped call judges a batch of them
    times = jnp.asarray([0.5, 1.0, 2.5, 2.9])
    tols = jnp.asarray([0.05, 1e-6, 0.05, 0.05])
    yawed = altered["yawed"]
    codes = jax.jit(jax.vmap(lambda t, a: fault_outcome_code(yawed, Faults("rotor_partial", 1, t, 0.4),
                                                             attitude_tol=a)))(times, tols)
    want = [_rule(yawed, float(t), attitude_tol=float(a)) for t, a in zip(times, tols)]
    assert [FAULT_OUTCOMES[c] for c in np.asarray(codes)] == want


def test_vmapped_batch_matches_its_members_flown_alone(config):
    """Eight random faults (losses and partial losses) flown as one vmapped batch and judged inside it give the codes
    and final positions of the same faults flown one at a time and judged by fault_outcome."""
    keys = jax.random.split(jax.random.PRNGKey(3), 8)

    def member(key):
        faults = random_fault_mix(key, 6, t_range=(0.3, 1.0))
        traj = jr.fly(config.platform, config.controller, dataclasses.replace(config.flight, faults=faults))
        return fault_outcome_code(traj, faults), traj.p[-1], faults

    codes, p_end, faults = jax.jit(jax.vmap(member))(keys)
    eta = np.asarray(faults.effectiveness)[:, 0]
    assert (eta == 0).any() and (eta > 0).any()  # both kinds drawn
    for i in range(len(keys)):
        single = single_fault(faults, i)
        assert single.kind == (("rotor_loss",) if eta[i] == 0 else ("rotor_partial",))
        flight = dataclasses.replace(config.flight, faults=single)
        traj = jr.fly(config.platform, config.controller, flight)
        assert fault_outcome(traj, flight) == FAULT_OUTCOMES[int(codes[i])], i
        np.testing.assert_allclose(np.asarray(traj.p[-1]), np.asarray(p_end[i]), rtol=0, atol=1e-12)
    # partial losses keep full pose; a total loss leaves a yaw torque the paper hexarotor cannot cancel (lost)
    words = [FAULT_OUTCOMES[c] for c in np.asarray(codes)]
    assert all(w == ("lost" if e == 0 else "full_pose") for w, e in zip(words, eta)), (words, eta)
