"""TOML flight configs (``jaxrotor.io.config``): every shipped flight config loads, the built-in use case
equals its files, malformed and renamed keys are refused with the fix, tilting configs load.

Flying them with ``jaxrotor simulate`` is checked in ``tests/integration/test_cli_simulate.py``.
"""

from pathlib import Path

import numpy as np
import pytest

import jaxrotor as jr
from jaxrotor.io import config as cfg
from jaxrotor.io.toml import ConfigError
from jaxrotor.workflows.usecase import paper_realistic_spec, paper_reproduction_spec

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = sorted((ROOT / "configs").glob("*.toml"))
# flight configs; optimisation problems (with an [objective] table) are covered by tests/integration/test_cli_optimize.py,
# sweeps (a [sweep] table) by tests/integration/test_sweep.py
FLIGHT_CONFIGS = [p for p in CONFIGS if "[reference]" in p.read_text() and "[objective" not in p.read_text()
                  and "[sweep" not in p.read_text()]


def _leaves_equal(a, b):
    import equinox as eqx
    import jax

    la, ta = jax.tree_util.tree_flatten(eqx.filter(a, eqx.is_array))
    lb, tb = jax.tree_util.tree_flatten(eqx.filter(b, eqx.is_array))
    assert ta == tb
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("path", FLIGHT_CONFIGS, ids=lambda p: p.name)
def test_every_flight_config_loads(path):
    conf = cfg.load(path)
    assert conf.name == path.stem
    assert conf.platform.n_rotors >= 4
    assert isinstance(conf.flight, jr.Flight) and conf.flight.save_dt == 0.01 and conf.flight.t1 is None
    if "[solver]" not in path.read_text() and conf.flight.control_rate is None:  # the loader's default solve
        assert conf.flight.integrator == jr.Integrator()
    elif conf.flight.control_rate is None and not conf.flight.integrator.adaptive:  # a fixed step (faults_*.toml)
        assert 0 < conf.flight.integrator.dt <= 0.002
    elif conf.flight.control_rate is None:  # continuous-time loop: the tight adaptive solve of the shipped configs
        assert conf.flight.integrator.rtol == 1e-9 and conf.flight.integrator.atol == 1e-11
    else:  # discrete-rate loop: a fixed step, a whole number per control period
        integ = conf.flight.integrator
        assert not integ.adaptive and (1.0 / conf.flight.control_rate / integ.dt) == pytest.approx(
            round(1.0 / conf.flight.control_rate / integ.dt), abs=1e-9)


def test_builtin_use_case_equals_config_files():
    for builtin, name in ((paper_reproduction_spec(), "paper_reproduction.toml"), (paper_realistic_spec(), "paper_realistic.toml")):
        conf = cfg.load(ROOT / "configs" / name)
        for part in ("platform", "controller", "flight"):
            assert type(getattr(conf, part)) is type(getattr(builtin, part)), part
            _leaves_equal(getattr(conf, part), getattr(builtin, part))
        for part in ("reference", "allocator", "actuators", "limits"):
            assert type(getattr(conf.flight, part)) is type(getattr(builtin.flight, part)), part
        assert conf.flight.integrator == builtin.flight.integrator
        assert (conf.flight.save_dt, conf.flight.t1, conf.flight.limits) == (0.01, None, builtin.flight.limits)
        assert conf.flight.reference.duration == 45.0
    assert cfg.load(ROOT / "configs" / "paper_reproduction.toml").compare.name == "paper_realistic"


BASE = """
name = "t"
[platform]
preset = "paper_hexarotor"
[controller]
kind = "fully_actuated"
[reference]
kind = "hover"
duration = 1.0
"""
FIRST_ORDER = '[actuators.motor]\nkind = "first_order"\n'


@pytest.mark.parametrize(
    "text, key, words",
    [
        (BASE.replace('kind = "hover"\nduration = 1.0', 'kind = "hover"'), "reference.duration", "missing key"),
        (BASE.replace('kind = "fully_actuated"', 'kind = "fully_actuated"\nK_p = "seven"'), "controller.K_p", "expected list"),
        (BASE.replace('kind = "fully_actuated"', 'kind = "fully_actuated"\nK_p = [1.0, -2.0, 3.0]'), "controller.K_p", "gains must be >= 0"),
        (BASE.replace('kind = "fully_actuated"', 'kind = "fully_actuated"\nK_p = [1.0, 2.0]'), "controller.K_p", "expected 3 numbers"),
        (BASE.replace('kind = "fully_actuated"', 'kind = "pid"'), "controller.kind", "unknown choice"),
        (BASE.replace("duration = 1.0", "duration = -1.0"), "reference.duration", "> 0"),
        (BASE + "[solver]\nrtol = 1e-9\nrtoll = 1e-3\n", "solver.rtoll", "unknown key"),
        (BASE + "[solver]\nkind = \"rk4\"\n", "solver.kind", "unknown choice"),
        (BASE + "[solver]\nmax_steps = 0\n", "solver.max_steps", ">= 1"),
        (BASE + FIRST_ORDER, "actuators.motor.time_constant", "missing key"),
        (BASE + FIRST_ORDER + "time_constant = 0.0\n", "actuators.motor.time_constant", "> 0"),
        (BASE + FIRST_ORDER + "time_constnat = 0.03\n", "actuators.motor.time_constant", "`actuators.motor.time_constnat` = 0.03 a misspelling"),
        (BASE + FIRST_ORDER + "time_constant = 0.03\ntau = 0.03\n", "actuators.motor.tau", "unknown key"),
        (BASE + "[actuators.servo]\nkind = \"first_order\"\nrate_limit = -1.0\n", "actuators.servo.rate_limit", "> 0"),
        (BASE + "[actuators]\nmotr = \"ideal\"\n", "actuators.motr", "unknown key"),
        (BASE + "[allocator]\nkind = \"magic\"\n", "allocator.kind", "unknown choice"),
        (BASE + "[flight]\nsave_dt = 0.0\n", "flight.save_dt", "> 0"),
        (BASE + "[flight]\nmax_rate = -5.0\n", "flight.max_rate", "> 0"),
        (BASE + "[flight]\nt1 = \"end\"\n", "flight.t1", "expected float"),
        (BASE.split("[reference]")[0], "[reference]", "missing table"),
    ],
)
def test_malformed_config_messages(tmp_path, text, key, words):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(cfg.ConfigError) as err:
        cfg.load(path)
    msg = str(err.value)
    assert str(path) in msg and f"`{key}`" in msg and words in msg and "Fix:" in msg


#: (old TOML, the old key as quoted, the new key the message must name)
RENAMES = [
    ("[solver]\nmethod = \"tsit5\"\n", "solver.method", "was renamed: use `solver.kind`", 'kind = "tsit5"'),
    ("[solver]\nsave_dt = 0.02\n", "solver.save_dt", "moved to `flight.save_dt`", "save_dt = 0.02"),
    ("[solver]\nt1 = 3.0\n", "solver.t1", "moved to `flight.t1`", "t1 = 3.0"),
    ("[actuators]\nmotor = \"first_order\"\ntime_constant = 0.03\n", "actuators.motor",
     'moved: write [actuators.motor] kind = "first_order"', "time_constant"),
    ("[actuators]\nmotor = \"ideal\"\n", "actuators.motor", 'moved: write [actuators.motor] kind = "ideal"', "[actuators.motor]"),
    ("[actuators]\nservo = \"first_order\"\n", "actuators.servo", 'moved: write [actuators.servo] kind = "first_order"',
     "[actuators.servo]"),
    ("[actuators]\ntime_constant = 0.03\n[actuators.motor]\nkind = \"first_order\"\n", "actuators.time_constant",
     "moved to `actuators.motor.time_constant`", "time_constant = 0.03"),
    ("[actuators]\nservo_time_constant = 0.05\n", "actuators.servo_time_constant",
     "moved to `actuators.servo.time_constant`", "time_constant = 0.05"),
    ("[actuators]\nservo_rate_limit = 6.0\n", "actuators.servo_rate_limit", "moved to `actuators.servo.rate_limit`",
     "rate_limit = 6.0"),
]


@pytest.mark.parametrize("extra, old, says, fix", RENAMES, ids=[r[1] for r in RENAMES])
def test_old_key_names_the_new_key(tmp_path, extra, old, says, fix):
    path = tmp_path / "old.toml"
    path.write_text(BASE + extra)
    with pytest.raises(ConfigError) as err:
        cfg.load(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: key `{old}` = ") and says in msg and "Fix:" in msg and fix in msg, msg


@pytest.mark.parametrize("old", ["total_time = 45.0", "length = 45.0"])
def test_old_reference_duration_names(tmp_path, old):
    path = tmp_path / "old.toml"
    path.write_text(BASE.replace('kind = "hover"\nduration = 1.0', f'kind = "paper_maneuver"\n{old}'))
    with pytest.raises(ConfigError) as err:
        cfg.load(path)
    key = old.split(" ")[0]
    assert f"key `reference.{key}` = 45.0 was renamed: use `reference.duration`" in str(err.value)
    assert "Fix: write `duration = 45.0` in [reference]" in str(err.value)


def test_flight_table_builds_the_flight(tmp_path):
    text = BASE + (FIRST_ORDER + "time_constant = 0.04\n[actuators.servo]\nkind = \"first_order\"\ntime_constant = 0.1\n"
                   "rate_limit = 3.0\n[solver]\nkind = \"heun\"\nadaptive = false\ndt = 0.005\nmax_steps = 5000\n"
                   "[flight]\nsave_dt = 0.05\nt1 = 0.5\nmax_position = 10.0\nmax_speed = 5.0\nmax_rate = 20.0\n")
    conf = cfg.loads(text, "f.toml")
    f = conf.flight
    assert isinstance(f, jr.Flight) and (f.save_dt, f.t1, f.end_time) == (0.05, 0.5, 0.5)
    assert (f.limits.max_position, f.limits.max_speed, f.limits.max_rate) == (10.0, 5.0, 20.0)
    assert float(f.actuators.motor.time_constant) == 0.04
    assert (float(f.actuators.servo.time_constant), float(f.actuators.servo.rate_limit)) == (0.1, 3.0)
    integ = f.integrator
    assert type(integ.solver).__name__ == "Heun" and (integ.adaptive, integ.dt, integ.max_steps) == (False, 0.005, 5000)
    assert integ.rtol is None and integ.atol is None  # omitted tolerances follow the dtype
    assert f.reference.duration == 1.0 and f.save_times.shape == (11,)
    assert conf.with_t1(0.2).flight.end_time == 0.2 and conf.flight.t1 == 0.5  # with_t1 copies


def test_unknown_preset_and_bad_platform_values(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace('preset = "paper_hexarotor"', 'preset = "hexa_9000"'))
    with pytest.raises(cfg.ConfigError, match="hexa_9000") as err:
        cfg.load(path)
    assert "paper_hexarotor" in str(err.value)  # lists the valid names
    path.write_text(BASE.replace('preset = "paper_hexarotor"', 'n = 4\narm_length = 0.25\nmass = -1.0\nc_f = 1e-5\n'
                                                               'c_tau = 1e-7\ninertia = [0.01, 0.01, 0.02]'))
    with pytest.raises(cfg.ConfigError, match="mass") as err:
        cfg.load(path)
    assert str(path) in str(err.value)
    path.write_text("name = [unclosed")
    with pytest.raises(cfg.ConfigError, match="not valid TOML"):
        cfg.load(path)
    with pytest.raises(cfg.ConfigError, match="no such configuration file"):
        cfg.load(tmp_path / "missing.toml")


@pytest.mark.parametrize("old", ["omega_min", "omega_max"])
def test_short_rotor_speed_bound_names(old):
    """`omega_min/max` in [platform] are aliases of `rotor_speed_min/max`; giving both is refused."""
    from jaxrotor.io.platform_table import platform_from_table

    base = {"n": 4, "arm_length": 0.25, "mass": 1.5, "c_f": 3.8e-5, "c_tau": 1.2e-6, "hub_mass": 0.08}
    new = old.replace("omega", "rotor_speed")
    value = 100.0 if old == "omega_min" else 700.0
    short = platform_from_table({**base, old: value}, "short.toml")
    long = platform_from_table({**base, new: value}, "long.toml")
    bound = "u_min" if old == "omega_min" else "u_max"
    np.testing.assert_array_equal(getattr(short, bound), np.full(4, value**2))
    np.testing.assert_array_equal(getattr(short, bound), getattr(long, bound))
    with pytest.raises(ConfigError) as err:
        platform_from_table({**base, old: value, new: value}, "both.toml")
    assert f"gives both `{old}` = {value!r} and its long name `{new}`" in str(err.value)
    assert f"Fix: keep only `{new}`" in str(err.value)


def test_tilting_configs_load_and_bad_ones_fail_at_load(tmp_path):
    from jaxrotor.tilting import CantSelection, ExtendedVariable

    full = cfg.load(ROOT / "configs" / "tilting_hex_fullpose.toml")
    assert isinstance(full.flight.allocator, ExtendedVariable) and full.platform.label() == "CS_αi-Ting_6R"
    assert full.flight.reference.is_full_pose and full.flight.end_time == 44.0
    cant = cfg.load(ROOT / "configs" / "cant_tilting_hex.toml")
    assert isinstance(cant.flight.allocator, CantSelection) and cant.platform.label() == "CS_α0-Ting_6R"
    assert cant.flight.reference.phases[1].period == 10.0
    text = (ROOT / "configs" / "cant_tilting_hex.toml").read_text()
    with pytest.raises(cfg.ConfigError, match="excludes the current cant"):
        cfg.loads(text.replace("limits = [0.08726646259971647, 0.6981317007977318]", "limits = [0.5, 0.6]"))
    with pytest.raises(cfg.ConfigError, match="fixed-tilt"):
        cfg.loads(text.replace('preset = "cs_a0_ting_6r"', 'preset = "paper_hexarotor"'))


STEP = """
name = "step_check"
[platform]
preset = "x500"
[controller]
kind = "underactuated"
[actuators.motor]
kind = "first_order"
time_constant = 0.03
[reference]
kind = "step"
start = [0.0, 0.0, 1.0]
target = [1.0, 0.0, 1.0]
time = 1.0
duration = 6.0
"""


def test_step_and_waypoints_references_load():
    from jaxrotor.reference import Step, Waypoints

    conf = cfg.loads(STEP, "step.toml")
    ref = conf.flight.reference
    assert isinstance(ref, Step) and ref.jump_times == (1.0,) and conf.flight.end_time == 6.0
    assert conf.flight.state0 is None  # the flight starts at rest at the reference's first sample: the start
    np.testing.assert_array_equal(np.asarray(conf.flight.initial_state(conf.platform).p), [0.0, 0.0, 1.0])
    hexa = cfg.loads(BASE.replace('kind = "hover"\nduration = 1.0', 'kind = "step"\ntarget = [0.0, 0.5, 1.2]\n'
                                  'time = 0.5\nduration = 3.0\ntarget_yaw_deg = 30.0\nrise = 0.4')
                     + "[flight]\nposition = [0.0, 0.0, 1.0]\n", "hex.toml")  # the step starts at [flight] position
    change = hexa.flight.reference.step_change
    np.testing.assert_array_equal(change.start, [0.0, 0.0, 1.0])
    assert change.yaw_target == pytest.approx(np.radians(30.0)) and hexa.flight.reference.jump_times == (0.5, 0.9)
    way = cfg.loads(BASE.replace('kind = "hover"\nduration = 1.0', 'kind = "waypoints"\n'
                                 'points = [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.5]]\nspeed = 0.5\n'
                                 'hold = 1.0\nyaw = [0.0, 0.0, 1.0]'), "way.toml").flight.reference
    assert isinstance(way, Waypoints) and way.points.shape == (3, 3) and way.segment_times == (3.75, 3.75 * 1.25**0.5)


@pytest.mark.parametrize("ref, key, words", [
    ('kind = "step"\ntarget = [1.0, 0.0, 1.0]\ntime = 1.0\nduration = 6.0', "Step parameter `start` is missing",
     "[flight] position"),
    ('kind = "step"\nstart = [0.0, 0.0, 1.0]\ntarget = [1.0, 0.0, 1.0]\ntime = 7.0\nduration = 6.0', "`time` = 7.0",
     "raise duration"),
    ('kind = "step"\nstart = [0.0, 0.0, 1.0]\ntarget = [1.0, 0.0]\ntime = 1.0\nduration = 6.0', "reference.target",
     "expected 3 numbers"),
    ('kind = "waypoints"\npoints = [[0.0, 0.0, 1.0], [1.0, 0.0]]\nspeed = 1.0', "reference.points",
     "row 1 = [1.0, 0.0]"),
    ('kind = "waypoints"\npoints = [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]]', "`speed` = None", "give exactly one"),
])
def test_bad_step_and_waypoints_name_the_key_and_the_fix(ref, key, words):
    with pytest.raises(ConfigError) as err:
        cfg.loads(BASE.replace('kind = "hover"\nduration = 1.0', ref), "bad.toml")
    assert key in str(err.value) and words in str(err.value) and "Fix:" in str(err.value)


def test_flight_table_sets_the_initial_state():
    from jaxrotor import so3
    from jaxrotor.dynamics import hover_inputs

    conf = cfg.loads(BASE + "[flight]\nposition = [1.0, 2.0, 3.0]\nvelocity = [0.5, 0.0, 0.0]\nroll_deg = 10.0\n"
                     "pitch_deg = -5.0\nyaw_deg = 30.0\nbody_rates = [0.1, 0.2, 0.3]\n", "s.toml")
    s = conf.flight.state0
    assert s is conf.flight.initial_state(conf.platform)
    np.testing.assert_array_equal(np.asarray(s.p), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(s.v), [0.5, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(s.omega), [0.1, 0.2, 0.3])
    R = so3.rot_z(np.radians(30.0)) @ so3.rot_y(np.radians(-5.0)) @ so3.rot_x(np.radians(10.0))
    np.testing.assert_allclose(np.asarray(s.R), np.asarray(R), atol=1e-15)
    np.testing.assert_allclose(np.asarray(s.rotor_speed) ** 2, np.asarray(hover_inputs(conf.platform)), rtol=1e-12)
    # a quaternion (normalised); every quantity not given is the reference's first sample, at rest
    q = cfg.loads(BASE + "[flight]\nquaternion = [2.0, 0.0, 0.0, 2.0]\n", "q.toml").flight.state0
    np.testing.assert_allclose(np.asarray(q.R), np.asarray(so3.rot_z(np.pi / 2)), atol=1e-15)
    np.testing.assert_array_equal(np.asarray(q.p), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(q.v), 0.0)
    assert cfg.loads(BASE + "[flight]\nsave_dt = 0.02\n", "n.toml").flight.state0 is None


@pytest.mark.parametrize("extra, key, words", [
    ("quaternion = [1.0, 0.0, 0.0, 0.0]\nyaw_deg = 10.0", "flight.quaternion", "also given by `flight.yaw_deg`"),
    ("quaternion = [0.0, 0.0, 0.0, 0.0]", "flight.quaternion", "zero quaternion"),
    ("quaternion = [1.0, 0.0, 0.0]", "flight.quaternion", "expected 4 numbers"),
    ("attitude_deg = [0.0, 0.0, 10.0]", "flight.attitude_deg", "roll_deg = ..., pitch_deg = ..., yaw_deg"),
    ("position = 1.0", "flight.position", "expected 3 numbers"),
    ("velocity = [1.0, 0.0, nan]", "flight.velocity", "finite"),
    ("yaw_deg = \"north\"", "flight.yaw_deg", "expected float"),
    ("roll = 10.0", "flight.roll", "unknown key"),
])
def test_bad_initial_state_names_the_key_and_the_fix(extra, key, words):
    with pytest.raises(ConfigError) as err:
        cfg.loads(BASE + "[flight]\n" + extra + "\n", "bad.toml")
    msg = str(err.value)
    assert f"`{key}`" in msg and words in msg and "Fix:" in msg, msg


def test_a_vehicle_with_spinning_propellers_flies_a_first_order_motor_by_default():
    """The x500's parts give its propellers spin inertia; their spin-up reaction needs a motor speed state."""
    no_motor = STEP.replace('[actuators.motor]\nkind = "first_order"\ntime_constant = 0.03\n', "")
    motor = cfg.loads(no_motor, "x500.toml").flight.actuators.motor
    assert isinstance(motor, jr.FirstOrderMotor) and float(motor.time_constant) == 0.03
    assert isinstance(cfg.loads(BASE, "hex.toml").flight.actuators.motor, jr.IdealMotor)  # no spin inertia: ideal
    with pytest.raises(ConfigError) as err:  # an ideal motor asked for explicitly is refused at load
        cfg.loads(no_motor + '[actuators.motor]\nkind = "ideal"\n', "x500.toml")
    assert "[actuators.motor]" in str(err.value) and "speed state" in str(err.value) and "Fix:" in str(err.value)
