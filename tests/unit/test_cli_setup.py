"""The jaxrotor command's XLA set-up: the faster-compiling CPU code generation for every command but the sweep
(:func:`jaxrotor.cli._setup.compile_speed_flag`), and a flight compiled with it equal to XLA's default to rounding."""

import json
import subprocess
import sys

import jax.numpy as jnp
import numpy as np

import jaxrotor as jr
from jaxrotor.cli._setup import BATCH_COMMANDS, compile_speed_flag
from jaxrotor.reference import paper_maneuver

FLAG = "--xla_cpu_use_fusion_emitters=false"

_FLIGHT = ("import jax; jax.config.update('jax_enable_x64', True); import json, jaxrotor as jr; "
           "from jaxrotor.reference import paper_maneuver; "
           "t = jr.fly(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3(), jr.Flight(paper_maneuver(), t1=1.0, "
           "integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.1)); "
           "print(json.dumps([float(x) for x in t.p[-1]] + [float(x) for x in t.u[-1]]))")


def _fly_here():
    t = jr.fly(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3(),
               jr.Flight(paper_maneuver(), t1=1.0, integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.1))
    return np.concatenate([np.asarray(t.p[-1]), np.asarray(t.u[-1])])


def test_compile_speed_flag_is_set_for_commands_but_the_sweep_before_jax_starts():
    jnp.zeros(1).block_until_ready()  # this process's backend has started: the flag would not apply
    env = {"XLA_FLAGS": "--xla_cpu_foo=1"}
    assert compile_speed_flag("simulate", env) is False and env == {"XLA_FLAGS": "--xla_cpu_foo=1"}
    assert "sweep" in BATCH_COMMANDS
    code = ("from jaxrotor.cli._setup import compile_speed_flag as f; import json; e = {'XLA_FLAGS': '--a=1'}; "
            "r = [f('simulate', e), e['XLA_FLAGS']]; e2 = {}; r += [f('sweep', e2), e2]; "
            "e3 = {'JAXROTOR_FUSION_EMITTERS': '1'}; r += [f('design', e3), e3]; "
            "e4 = {'XLA_FLAGS': '--xla_cpu_use_fusion_emitters=true'}; r += [f('analyze', e4), e4['XLA_FLAGS']]; "
            "r += [f(None, {})]; print(json.dumps(r))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r[0] is True and r[1] == f"--a=1 {FLAG}", r
    assert r[2] is False and r[3] == {}, r  # the sweep keeps XLA's default (batches run faster with it)
    assert r[4] is False and r[5] == {"JAXROTOR_FUSION_EMITTERS": "1"}, r
    assert r[6] is False and r[7] == "--xla_cpu_use_fusion_emitters=true", r  # the user's own choice stays
    assert r[8] is False


def _other_generator_env() -> tuple[dict, bool]:
    """The environment of a subprocess that compiles with the other CPU code generation than this process
    (the suite runs with the flag, tests/conftest.py; with ``JAXROTOR_FUSION_EMITTERS=1`` with XLA's default), and
    whether this process has the flag."""
    import os

    flags = os.environ.get("XLA_FLAGS", "").split()
    here_flagged = FLAG in flags
    there = [f for f in flags if "xla_cpu_use_fusion_emitters" not in f] + ([] if here_flagged else [FLAG])
    env = {**os.environ, "XLA_FLAGS": " ".join(there), "JAX_ENABLE_COMPILATION_CACHE": "false"}
    return env, here_flagged


def test_a_flight_compiled_with_the_flag_equals_the_default_to_rounding():
    """The paper's manoeuvre (1 s, fixed-step Tsit5) flown with the flag and with XLA's default (one here, the other
    in a subprocess): final position to 1e-12 m and rotor inputs to 1e-10 relative (the two code generators may sum
    in another order, nothing more)."""
    env, here_flagged = _other_generator_env()
    assert (FLAG in env["XLA_FLAGS"].split()) != here_flagged  # the two processes compile differently
    out = subprocess.run([sys.executable, "-c", _FLIGHT], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    there = np.asarray(json.loads(out.stdout.strip().splitlines()[-1]))
    here = _fly_here()
    assert float(np.linalg.norm(here[:3])) > 1e-2  # the vehicle climbed off the ground (1.6 cm in 1 s)
    np.testing.assert_allclose(there[:3], here[:3], rtol=0, atol=1e-12)
    np.testing.assert_allclose(there[3:], here[3:], rtol=1e-10)
