"""TOML tables of the realistic loop and of robust tuning: ``[control]``, ``[sensors]``, ``[wind]``,
``[randomize]``, ``[robust]`` (``docs/robust.md``; ``configs/tune_gains_robust.toml``).

The first three belong to any flight (read by :func:`jaxrotor.io.config.from_dict`
through :func:`flight_tables`); the last two to ``jaxrotor tune`` / ``optimize``
(read by :mod:`jaxrotor.io.optimize_config` through :func:`robust_problem`)::

    [control]
    rate = 500.0                  # flight-computer rate [Hz]; [solver] dt must divide 1 / rate
    seed = 0                      # key of this flight's sensor noise and gusts

    [sensors]                     # white-noise std per channel: a number or 3 per-axis values
    position_std = 0.02           # m
    velocity_std = 0.05           # m/s
    attitude_std = 0.01           # rad (body-frame rotation vector)
    rate_std = 0.015              # rad/s
    position_bias_std = 0.005     # std of a constant bias drawn per flight (also velocity_, attitude_, rate_)
    delay = 2                     # measurement delay [control ticks]

    [wind]
    mean = [0.0, 0.0, 0.0]        # mean air velocity, world frame [m/s]
    gust_std = 0.5                # Ornstein-Uhlenbeck stationary std [m/s] (number or 3 values)
    gust_time_constant = 1.0      # s
    drag_linear = 0.3             # N s/m
    drag_quadratic = 0.05         # N s^2/m^2

    [randomize]                   # relative half-widths in [0, 1): 0.1 is +-10 %
    mass = 0.1
    inertia = 0.1
    c_f = 0.1
    c_tau = 0.1
    motor_time_constant = 0.2
    wind_speed = [0.0, 3.0]       # mean wind speed range [m/s], random horizontal direction

    [robust]
    batch_size = 32               # randomized flights per iteration
    risk = "cvar"                 # or "mean"
    beta = 0.8                    # CVaR level in (0, 1): the mean of the worst 20 %
    gain_price = 0.0005           # weight of mean_j K_j / K_j(start)
    reshuffle_every = 50          # redraw the training batch every 50 iterations
    seed = 0                      # root of the training and held-out keys
    heldout_size = 64             # held-out flights for result.json's heldout_metrics
    physics_size = 8              # of those, re-flown on the physics layer for physics_metrics (0: none)

Every mistake (a negative or non-finite noise level or delay, a control rate whose
period the step does not divide, a CVaR level outside (0, 1), a randomization range
that would make the mass or inertia non-positive, ...) raises a
:class:`~jaxrotor.io.toml.ConfigError` naming the file, the key, the value and the fix.
"""

from __future__ import annotations

import dataclasses

import jax

from ..randomize import Randomization
from ..tick import control_schedule, whole_steps
from .toml import Table

__all__ = ["FLIGHT_TABLES", "PROBLEM_TABLES", "flight_tables", "robust_problem"]

#: Tables of a flight read here.
FLIGHT_TABLES = ("control", "sensors", "wind")
#: Tables of an optimisation problem read here.
PROBLEM_TABLES = ("randomize", "robust")



def flight_tables(top: Table, flight):
    """``flight`` with the ``[control]``, ``[sensors]`` and ``[wind]`` tables of ``top`` applied (if present).

    A ``[control] rate`` without a step in ``[solver]`` (no ``adaptive``, no ``dt``) flies the
    plant with the fixed step ``dt = 1 / rate`` (one plant step per control period).

    Raises:
        ConfigError: naming the file, the key, the value and the fix.
    """
    present = [k for k in FLIGHT_TABLES if k in top]
    if not present:
        return flight
    c = top.table("control")
    rate = c.number("rate", None, fix="the flight-computer rate in Hz, e.g. 500.0")
    if rate is not None and rate <= 0:
        raise c.fail("rate", rate, "a control rate must be > 0 Hz", "give e.g. 500.0")
    seed = c.get("seed", int, 0, "an integer seed")
    c.check_unknown()
    sensors = top.table("sensors").build("sensors", "gaussian") if "sensors" in top else None
    wind = top.table("wind").build("wind", "ornstein_uhlenbeck") if "wind" in top else None
    if rate is None:
        raise top.error(f"table(s) [{'], ['.join(present)}] need the discrete-rate loop but `control.rate` is missing. "
                        "Fix: add [control] with rate = 500.0 (Hz) and a fixed-step [solver] dt dividing 1 / rate.")
    flight = dataclasses.replace(flight, control_rate=rate, sensors=sensors, wind=wind,
                                 key=jax.random.PRNGKey(seed))
    solver = top.data.get("solver", {})
    if flight.integrator.adaptive and isinstance(solver, dict) and "adaptive" not in solver and "dt" not in solver:
        # no step given: the discrete-rate loop steps the plant once per control period (fixed step 1 / rate)
        flight = dataclasses.replace(flight, integrator=dataclasses.replace(flight.integrator, adaptive=False,
                                                                            dt=1.0 / rate))
    if flight.integrator.adaptive:
        raise c.fail("rate", rate, "the discrete-rate loop steps the [solver] a whole number of fixed steps per "
                     "control period, but `solver.adaptive` = true", "set adaptive = false and dt = 1 / rate / n "
                     f"in [solver], e.g. dt = {1.0 / rate:g}")
    try:
        control_schedule(flight)
        whole_steps(1.0 / rate, flight.integrator.dt, "Flight", "integrator.dt")  # the analytic plant's step
    except ValueError as err:  # its own fix, else the general one
        why, _, fix = str(err).partition(" Fix: ")
        raise c.fail("rate", rate, why.rstrip("."), fix.rstrip(".") or "make 1 / rate a whole number of [solver] dt "
                     "steps, the horizon and [flight] save_dt whole numbers of control periods") from None
    return flight


def _settings(r: Table, randomization: Randomization):
    from ..optimize.robust import RISKS, RobustSettings  # here: a flight TOML never imports the optimiser

    beta = r.number("beta", 0.8, fix="the CVaR level in (0, 1), e.g. 0.8")
    if not 0 < beta < 1:
        raise r.fail("beta", beta, "the CVaR level must lie in (0, 1) (CVaR_beta is the mean of the worst 1 - beta "
                     "fraction)", "give e.g. 0.8 (the worst 20 %)")
    price = r.number("gain_price", 0.0, fix="the gain price weight, a number >= 0")
    if price < 0:
        raise r.fail("gain_price", price, "a price must be >= 0", "give e.g. 0.01, or 0 for none")
    settings = RobustSettings(
        randomization=randomization,
        batch_size=r.integer("batch_size", 32, minimum=1, fix="flights per iteration, e.g. 32"),
        risk=r.choice("risk", RISKS, "cvar"),
        beta=beta,
        gain_price=price,
        reshuffle_every=r.integer("reshuffle_every", None, minimum=1, fix="iterations between batch redraws"),
        seed=r.get("seed", int, 0, "an integer seed"),
        heldout_size=r.integer("heldout_size", 64, minimum=0, fix="held-out flights, e.g. 64"),
        physics_size=r.integer("physics_size", 8, minimum=0,
                               fix="held-out flights re-flown on the physics layer, e.g. 8 (0: none)"),
    )
    r.check_unknown()
    return settings


def robust_problem(top: Table, problem):
    """``problem`` made robust by the ``[randomize]`` / ``[robust]`` tables of ``top`` (unchanged if neither is there).

    Returns a :class:`~jaxrotor.optimize.robust.RobustProblem` on the training batch of epoch 0.

    Raises:
        ConfigError: naming the file, the key, the value and the fix (also when the
            flight has no ``[control]`` rate, or a wind range is given without ``[wind]``).
    """
    if not any(k in top for k in PROBLEM_TABLES):
        return problem
    from ..optimize.robust import RobustProblem  # here: a flight TOML never imports the optimiser

    randomization = top.table("randomize").build("randomization", "uniform")
    settings = _settings(top.table("robust"), randomization)
    flight = problem.design.flight
    if flight is None or flight.control_rate is None:
        raise top.error("tables [randomize] / [robust] fly randomized batches on the discrete-rate loop, but "
                        "`control.rate` is missing. Fix: add [control] with rate = 500.0 (Hz).")
    if randomization.wind_speed is not None and flight.wind is None:
        raise top.fail("randomize.wind_speed", list(randomization.wind_speed), "there is no [wind] table (no drag "
                       "model for the wind to act through)", "add [wind] with drag_linear / drag_quadratic")
    return RobustProblem.build(problem, settings)
