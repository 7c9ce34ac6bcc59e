"""A flight compiled with the jaxrotor command's faster-compiling CPU code generation
(:func:`jaxrotor.cli._setup.compile_speed_flag`) equals XLA's default to rounding (the flag's rules:
tests/unit/test_cli_setup.py)."""

import json
import subprocess
import sys

import numpy as np

import jaxrotor as jr
from jaxrotor.reference import paper_maneuver

from unit.test_cli_setup import FLAG

_FLIGHT = ("import jax; jax.config.update('jax_enable_x64', True); import json, jaxrotor as jr; "
           "from jaxrotor.reference import paper_maneuver; "
           "t = jr.fly(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3(), jr.Flight(paper_maneuver(), t1=1.0, "
           "integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.1)); "
           "print(json.dumps([float(x) for x in t.p[-1]] + [float(x) for x in t.u[-1]]))")


def _fly_here():
    t = jr.fly(jr.presets.paper_hexarotor(), jr.FullyActuatedSE3(),
               jr.Flight(paper_maneuver(), t1=1.0, integrator=jr.Integrator(adaptive=False, dt=0.01), save_dt=0.1))
    return np.concatenate([np.asarray(t.p[-1]), np.asarray(t.u[-1])])


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
