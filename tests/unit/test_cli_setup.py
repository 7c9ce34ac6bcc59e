"""The jaxrotor command's XLA set-up: the faster-compiling CPU code generation for every command but the sweep
(:func:`jaxrotor.cli._setup.compile_speed_flag`; a flight compiled with it equals XLA's default to rounding:
tests/integration/test_compile_flag_flight.py)."""

import json
import subprocess
import sys

import jax.numpy as jnp

from jaxrotor.cli._setup import BATCH_COMMANDS, compile_speed_flag

FLAG = "--xla_cpu_use_fusion_emitters=false"

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
