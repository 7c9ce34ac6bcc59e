"""The linearised closed-loop stability verdict against 10 s flights on the physics layer (MuJoCo C).

For random designs and gain sets hovering under 1 kHz control, the verdict of
:func:`jaxrotor.analysis.closed_loop_stability` (the loop linearised about hover, one control period
of the analytic plant) is compared with what a flight of the same vehicle on the MuJoCo C engine
(:class:`jaxrotor.physics.MuJoCoPlant`: the multibody model of the parts, spinning propellers as the
motors, the same rotor inertia ``J_r``) does after a small initial perturbation.

**The cases.** Ten cases are drawn from ``numpy.random.default_rng(SEED)``:

* the design: with probability 0.7 the RotorSuite hexarotor (``paper_hexarotor_physics``, the engine
  model from ``paper_hexarotor_parts()``) with a random cant ``alpha_0 ~ U(15, 35) deg`` and dihedral
  ``beta_0 ~ U(0, 15) deg`` and a spin inertia ``J_r ~ logU(3e-5, 2e-4) kg m^2`` (the Table II
  propellers have 1.095e-4), flown by the fully actuated controller; otherwise the parts-built x500
  quad (``presets.get("x500")``) with its parts' ``J_r`` times ``logU(0.5, 3)``, flown by the
  under-actuated controller;
* a first-order motor of time constant ``tau_m ~ U(10, 60) ms`` (on the physics layer the propeller
  hinge's velocity servo of gain ``J_r / tau_m``);
* the gains. Hexarotor: :data:`BASE_GAINS` (Table III with ``K_p,xy`` doubled and the integral gains
  raised, below) with the position loop (``K_p, K_v, K_pi``) and the roll/pitch loop
  (``K_R, K_w, K_Ri`` in x and y) each scaled by one factor ``logU(0.8, 1.25)``, and the yaw gains drawn
  on their own: ``K_R,z = 90 logU(0.2, 1)``, ``K_w,z = 5 logU(0.5, 2)``, ``K_Ri,z = K_R,z U(0.45, 0.8)``.
  Quad: the under-actuated controller's defaults with ``K_p, K_v`` scaled by ``logU(0.7, 1.4)``, the
  attitude gains ``K_R`` by ``logU(1, 12)`` and ``K_w`` by ``logU(0.5, 2)`` (no integral action).

With this distribution about half the draws are unstable by the analysis (in 300 draws, 100 from each
of three seeds: 111 of 219 hexarotors, in yaw, the spin-up reaction of the rotors against the canted yaw
moment; 35 of 81 quads, in roll or pitch, the attitude loop against the motor lag; 14 within the band
below). Ten draws
need not split evenly, so the draw is stratified: draws are taken in order and accepted until five of
each predicted verdict are in; a draw whose verdict already has five is skipped (counted in
``skipped``; ``unstable_share_of_draws`` is the share over every draw made).

Table III's own integral gains leave slow real modes (the z integral at -0.086 /s, the yaw integral
at -0.11 /s): every stable case would decay that slowly, and a 10 s flight cannot tell a decay at
-0.09 /s from a slow growth. :data:`BASE_GAINS` raises ``K_pi`` to ``(6, 6, 30)`` and ``K_Ri`` to
``(40, 40, 45)`` (and ``K_p,xy`` to 14) so that the integral modes decay at about -0.5 /s.

**Undecidable cases are redrawn.** A draw whose predicted ``|max_growth_rate|`` is below
``BAND = 0.3 /s`` is replaced by the next draw (counted in ``redrawn``): such a mode changes an error
by at most ``e^{0.3 x 3} = 2.5`` over the 3 s the growth is fitted on, too little to tell growth from
decay on a flight of this length (a slow mode may also be too weakly excited to dominate in 10 s).

**The analysis.** ``closed_loop_stability(platform, controller, flight)`` with the flight that is flown
(hover at ``(0, 0, 1) m``, 1 kHz zero-order hold, RK4 at 1 ms on the analytic plant, the first-order
motor) and the engine's mass and inertia (``PhysicsModel.physics_platform()``, the same ``J_r``): the
verdict ``stable``, the growth rate ``max Re s`` [1/s], its frequency [Hz] and axis.

**The flight.** ``FLIGHT_S = 10 s`` (4 s in ``--quick``) of the same flight on MuJoCo C (1 ms engine
steps, spinning propellers, no floor), sampled every 5 ms, from the hover state (hover rotor speeds)
offset by a rotation ``exp([d]_x)``, ``d = PERTURBATION (1, 1, 1) / sqrt(3)`` (``PERTURBATION = 1e-5
rad``), and by ``PERTURBATION L (1, 1, 1) / sqrt(3)`` in position (``L`` the mean hub distance). The
engine holds the unperturbed hover to round-off (errors below 1e-15), so an offset this small is
resolved over ten decades and keeps the flight in the linear range the analysis speaks for: an
unstable mode grows from it through four decades before it reaches ``CEILING`` (below the rotors'
saturation).

**The flight's verdict**, precisely:

1. the error ``e(t)``: the norm of the rigid-body state's deviation from the hover in the analysis'
   scaled coordinates, ``e = sqrt(|p - p_r|^2 / L^2 + |v|^2 (1 s)^2 / L^2 + theta^2 + |omega|^2 (1 s)^2)``
   (``theta`` the angle of ``R_r^T R`` [rad], from ``atan2`` of its sine and cosine: exact near zero);
   with the velocities and rates in it, an oscillation does not pass through zero;
2. its envelope ``E(t) = max e`` over the trailing ``ENVELOPE_S = 0.5 s`` (one period of a 2 Hz
   oscillation; the window is clipped at the flight's start);
3. the linear range ends at the first sample where ``E`` leaves ``(FLOOR, CEILING) = (1e-12, 0.1)``
   or ``e`` is not finite (``exit``: ``ceiling``, ``floor``, ``diverged``), or at the flight's end
   (``end``): time ``t_x``;
4. the measured growth rate ``g_flight`` [1/s] is the least-squares slope of ``log E`` against ``t``
   over ``[t_a, t_x]``, ``t_a = max(t_x - FIT_S, min(ENVELOPE_S, t_x / 2))``: the last ``FIT_S = 3 s``
   of the linear range (1.5 s in ``--quick``), after the envelope window has filled unless the range
   ends sooner;
5. the flight is **unstable** when ``g_flight > 0``, stable otherwise. A case matches when the
   analysis' ``not stable`` equals the flight's ``unstable``.

For an unstable case ``g_flight`` is the growth of the dominant mode, to be compared with the
predicted ``max Re s``. For a stable case it is the decay of the envelope over the fit window, made of
the modes the offset excited; it need not equal the least-damped mode's rate: the hexarotor's slowest
modes, the x/y position-integral pair at about -0.52 /s and 0.07 Hz (a 14 s period), are seen over a
fraction of their period, and their phase adds to the fitted slope.

Writes ``stability_vs_flight.json`` (every case: design, ``J_r``, ``tau_m``, gains, the prediction and
the flight's measurement) and ``stability_vs_flight.png`` (measured against predicted growth rate,
coloured by match) into ``--out``.

Checks (exit 1 if any fails): for every case the flight's verdict matches the analysis'.

Run::

    python experiments/stability_vs_flight.py           # 10 random cases, 10 s flights
    python experiments/stability_vs_flight.py --quick   # 2 fixed cases (the paper hexarotor with
                                                        # J_r = 1.095e-4, 30 ms motors: the base yaw
                                                        # gains, unstable; low yaw gains, stable), 4 s
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxrotor as jr  # noqa: E402
from jaxrotor import presets, so3  # noqa: E402
from jaxrotor.allocation import characteristic_length  # noqa: E402
from jaxrotor.analysis import closed_loop_stability  # noqa: E402
from jaxrotor.integrate import RK4  # noqa: E402
from jaxrotor.physics import MuJoCoPlant, build_model, default_parts, paper_hexarotor_parts  # noqa: E402
from jaxrotor.physics.mjcf import ModelOptions  # noqa: E402

from _checks import Checks  # noqa: E402

SEED = 2026
N_CASES = 10
BAND = 0.3  # 1/s: |max Re s| below this is not decided by a 10 s flight; such draws are replaced
CONTROL_RATE = 1000.0  # Hz
DT = 1e-3  # s: analytic plant's RK4 step and the engine's step
SAVE_DT = 5e-3  # s: the flight's samples
HOVER = (0.0, 0.0, 1.0)  # m
PERTURBATION = 1e-5  # rad (and hub distances)
ENVELOPE_S = 0.5  # s
FLOOR, CEILING = 1e-12, 1e-1  # the linear range of e
FLIGHT_S = {False: 10.0, True: 4.0}  # s
FIT_S = {False: 3.0, True: 1.5}  # s
SPIN = ModelOptions(spin=True, floor=False)
P_HEXAROTOR = 0.7

#: The hexarotor's base gains: Table III with ``K_p,xy`` doubled and the integral gains raised (the integral modes
#: decay at about -0.5 /s instead of Table III's -0.086 /s; module docstring).
BASE_GAINS = {"K_p": (14.0, 14.0, 60.0), "K_pi": (6.0, 6.0, 30.0), "K_v": (14.0, 14.0, 20.0),
              "K_R": (90.0, 90.0, 90.0), "K_Ri": (40.0, 40.0, 45.0), "K_w": (25.0, 25.0, 5.0)}
#: The under-actuated controller's defaults (:class:`jaxrotor.UnderactuatedSE3`).
QUAD_GAINS = {"K_p": (6.0, 6.0, 8.0), "K_pi": (0.0, 0.0, 0.0), "K_v": (4.5, 4.5, 5.0),
              "K_R": (1.2, 1.2, 0.5), "K_Ri": (0.0, 0.0, 0.0), "K_w": (0.25, 0.25, 0.15)}
PAPER_J_R = 1.095e-4  # kg m^2: the Table II propellers


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(np.exp(rng.uniform(math.log(lo), math.log(hi))))


def draw_case(rng: np.random.Generator) -> dict:
    """One random case (module docstring): ``design`` (``"hexarotor"`` or ``"x500"``), ``alpha0_deg``,
    ``beta0_deg`` [deg] (hexarotor; ``None`` for the quad), ``J_r`` [kg m^2], ``tau_m`` [s], ``controller``
    (``"fully_actuated"`` or ``"underactuated"``) and ``gains`` (``{name: (3,) list}``, SI units of
    :class:`jaxrotor.FullyActuatedSE3`)."""
    tau = float(rng.uniform(0.010, 0.060))
    if rng.uniform() < P_HEXAROTOR:
        alpha0, beta0 = float(rng.uniform(15.0, 35.0)), float(rng.uniform(0.0, 15.0))
        J_r = _log_uniform(rng, 3e-5, 2e-4)
        f_pos, f_att = _log_uniform(rng, 0.8, 1.25), _log_uniform(rng, 0.8, 1.25)
        K_Rz = 90.0 * _log_uniform(rng, 0.2, 1.0)
        K_wz = 5.0 * _log_uniform(rng, 0.5, 2.0)
        K_Riz = K_Rz * float(rng.uniform(0.45, 0.8))
        B = BASE_GAINS
        gains = {"K_p": [f_pos * k for k in B["K_p"]], "K_pi": [f_pos * k for k in B["K_pi"]],
                 "K_v": [f_pos * k for k in B["K_v"]],
                 "K_R": [f_att * B["K_R"][0], f_att * B["K_R"][1], K_Rz],
                 "K_Ri": [f_att * B["K_Ri"][0], f_att * B["K_Ri"][1], K_Riz],
                 "K_w": [f_att * B["K_w"][0], f_att * B["K_w"][1], K_wz]}
        return dict(design="hexarotor", alpha0_deg=alpha0, beta0_deg=beta0, J_r=J_r, tau_m=tau,
                    controller="fully_actuated", gains=gains)
    J_factor = _log_uniform(rng, 0.5, 3.0)
    f_pos, f_R, f_w = _log_uniform(rng, 0.7, 1.4), _log_uniform(rng, 1.0, 12.0), _log_uniform(rng, 0.5, 2.0)
    Q = QUAD_GAINS
    gains = {"K_p": [f_pos * k for k in Q["K_p"]], "K_pi": list(Q["K_pi"]), "K_v": [f_pos * k for k in Q["K_v"]],
             "K_R": [f_R * k for k in Q["K_R"]], "K_Ri": list(Q["K_Ri"]), "K_w": [f_w * k for k in Q["K_w"]]}
    J_r = J_factor * float(presets.get("x500").J_r[0])
    return dict(design="x500", alpha0_deg=None, beta0_deg=None, J_r=J_r, tau_m=tau, controller="underactuated",
                gains=gains)


def quick_cases() -> list[dict]:
    """The two fixed ``--quick`` cases: the paper hexarotor (25 / 10 deg, ``J_r = 1.095e-4 kg m^2``, 30 ms motors)
    with :data:`BASE_GAINS` (yaw 90 / 5 / 45: unstable in yaw) and with low yaw gains (30 / 3 / 15: stable)."""
    base = dict(design="hexarotor", alpha0_deg=25.0, beta0_deg=10.0, J_r=PAPER_J_R, tau_m=0.03,
                controller="fully_actuated")
    low = {**{k: list(v) for k, v in BASE_GAINS.items()}}
    low["K_R"][2], low["K_w"][2], low["K_Ri"][2] = 30.0, 3.0, 15.0
    return [{**base, "gains": {k: list(v) for k, v in BASE_GAINS.items()}}, {**base, "gains": low}]


def build(case: dict):
    """``(platform, controller, physics model)`` of a case: the engine model of its parts with the case's ``J_r``
    and the platform with the engine's mass and inertia (what both the analysis and the flight use)."""
    if case["design"] == "hexarotor":
        p0 = presets.get("paper_hexarotor_physics")
        p0 = dataclasses.replace(p0, alpha=jnp.asarray(math.radians(case["alpha0_deg"])),
                                 beta=jnp.asarray(math.radians(case["beta0_deg"])),
                                 rotor_inertia=jnp.full(p0.n_rotors, case["J_r"]))
        pm = build_model(p0, paper_hexarotor_parts(), SPIN)
    else:
        p0 = presets.get("x500")
        p0 = dataclasses.replace(p0, rotor_inertia=jnp.full(p0.n_rotors, case["J_r"]))
        pm = build_model(p0, default_parts(p0), SPIN)
    gains = {k: tuple(v) for k, v in case["gains"].items()}
    ctrl = jr.FullyActuatedSE3(**gains) if case["controller"] == "fully_actuated" else jr.UnderactuatedSE3(**gains)
    return pm.physics_platform(), ctrl, pm


def make_flight(platform, tau_m: float, duration: float) -> jr.Flight:
    """The hover flight [s] of a case: 1 kHz control, RK4 at 1 ms, a first-order motor of time constant ``tau_m``
    [s], from the hover offset by ``PERTURBATION`` in attitude [rad] and position [hub distances]."""
    L = float(characteristic_length(platform))
    d = PERTURBATION / math.sqrt(3.0) * np.ones(3)
    s0 = jr.initial_state(platform, p=np.asarray(HOVER) + L * d, R=so3.exp(jnp.asarray(d)), rotor_speed="hover")
    return jr.Flight(reference=jr.reference.Hover(position=HOVER, duration=duration),
                     actuators=jr.Actuators(motor=jr.FirstOrderMotor(tau_m)),
                     integrator=jr.Integrator(solver=RK4(), adaptive=False, dt=DT), control_rate=CONTROL_RATE,
                     save_dt=SAVE_DT, state0=s0)


def error_signal(traj, length: float) -> tuple[np.ndarray, np.ndarray]:
    """``(t [s], e)``: the norm of the rigid-body state's deviation from the hover at ``HOVER`` (level, heading 0)
    in the analysis' scaled coordinates (lengths by ``length`` [m], the mean hub distance; times by 1 s):
    ``e = sqrt(|p - p_r|^2 / L^2 + |v|^2 (1 s)^2 / L^2 + theta^2 + |omega|^2 (1 s)^2)``, ``theta`` the angle of
    ``R_r^T R`` [rad] (``atan2`` of its sine and cosine: exact near zero)."""
    t = np.asarray(traj.t)
    R = np.asarray(traj.R)  # R_r = I
    sin = 0.5 * np.linalg.norm(np.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]],
                                        axis=1), axis=1)
    theta = np.arctan2(sin, 0.5 * (np.trace(R, axis1=1, axis2=2) - 1.0))
    dp = np.linalg.norm(np.asarray(traj.p) - np.asarray(HOVER), axis=1) / length
    v = np.linalg.norm(np.asarray(traj.v), axis=1) / length
    w = np.linalg.norm(np.asarray(traj.omega), axis=1)
    return t, np.sqrt(dp**2 + v**2 + theta**2 + w**2)


def flight_growth(t: np.ndarray, e: np.ndarray, fit_s: float) -> dict:
    """The flight's growth rate and verdict from the error ``e`` (module docstring, steps 2-5).

    Args:
        t: ``(T,)`` sample times [s], uniformly spaced.
        e: ``(T,)`` the error ``e(t)`` [rad].
        fit_s: the fit window's length ``FIT_S`` [s].

    Returns:
        ``growth`` [1/s] (``g_flight``; NaN when the window holds fewer than 5 samples), ``unstable``
        (``growth > 0``), ``exit`` (``"end"``, ``"ceiling"``, ``"floor"``, ``"diverged"``), ``t_exit`` [s],
        ``window`` ``[t_a, t_x]`` [s], ``e0``, ``e_max`` (the largest finite ``e``), ``e_end`` (``E`` at ``t_x``).
    """
    dt = float(t[1] - t[0])
    w = max(1, int(round(ENVELOPE_S / dt)) + 1)
    finite = np.isfinite(e)
    padded = np.concatenate([np.full(w - 1, -np.inf), np.where(finite, e, np.inf)])
    env = np.lib.stride_tricks.sliding_window_view(padded, w).max(axis=1)
    inside = finite & (env > FLOOR) & (env < CEILING)
    out = np.nonzero(~inside)[0]
    if out.size:
        k_x = int(out[0])
        exit_kind = "diverged" if not finite[k_x] else ("ceiling" if env[k_x] >= CEILING else "floor")
    else:
        k_x, exit_kind = len(t), "end"
    t_x = float(t[max(k_x - 1, 0)])
    t_a = max(t_x - fit_s, min(ENVELOPE_S, t_x / 2.0))
    sel = (np.arange(len(t)) < k_x) & (t >= t_a - 1e-12)
    growth = float(np.polyfit(t[sel], np.log(env[sel]), 1)[0]) if sel.sum() >= 5 else math.nan
    return dict(growth=growth, unstable=bool(growth > 0.0), exit=exit_kind, t_exit=t_x, window=[t_a, t_x],
                e0=float(e[0]), e_max=float(np.max(np.where(finite, e, -np.inf))),
                e_end=float(env[max(k_x - 1, 0)]))


def predict(case: dict, duration: float) -> tuple:
    """``(platform, controller, physics model, flight, report, seconds)``: a case built (:func:`build`), its flight
    of ``duration`` [s] (:func:`make_flight`) and the analysis' :class:`~jaxrotor.analysis.StabilityReport`."""
    platform, ctrl, pm = build(case)
    flight = make_flight(platform, case["tau_m"], duration)
    t0 = time.perf_counter()
    rep = closed_loop_stability(platform, ctrl, flight)
    return platform, ctrl, pm, flight, rep, time.perf_counter() - t0


def run_case(case: dict, predicted: tuple, fit_s: float) -> dict:
    """Fly one predicted case (:func:`predict`) on MuJoCo C and measure it (:func:`flight_growth`, ``fit_s`` [s]);
    returns the case with ``prediction``, ``flight``, ``match`` and the run times [s]."""
    platform, ctrl, pm, flight, rep, t_analysis = predicted
    prediction = dict(stable=bool(rep.stable), growth=float(rep.max_growth_rate), frequency_hz=float(rep.frequency_hz),
                      axis=rep.axis, state=rep.state, summary=rep.summary())
    t1 = time.perf_counter()
    traj = jr.fly(platform, ctrl, flight, MuJoCoPlant(share_compilation=True).with_model(pm))
    t2 = time.perf_counter()
    t, e = error_signal(traj, float(characteristic_length(platform)))
    measured = flight_growth(t, e, fit_s)
    measured["diverged_flag"] = bool(traj.diverged)
    return {**case, "J_r_engine": float(np.mean(pm.spin_inertia)), "prediction": prediction, "flight": measured,
            "match": (not prediction["stable"]) == measured["unstable"],
            "seconds": {"analysis": t_analysis, "flight": t2 - t1}, "_trace": (t, e)}


def _verdict(unstable: bool) -> str:
    return "UNSTABLE" if unstable else "stable"


def print_table(rows: list[dict]) -> None:
    """One line per case: design, J_r, tau_m, yaw gains, the prediction and the flight's measurement."""
    head = (f"{'case':>4} {'design':22s} {'J_r':>9s} {'tau_m':>6s} {'yaw K_R/K_w/K_Ri':>18s} {'predicted':>9s} "
            f"{'growth':>8s} {'Hz':>6s} {'axis':>5s} {'flight':>8s} {'verdict':>9s} {'match':>5s}")
    print(head)
    print("-" * len(head))
    for i, r in enumerate(rows):
        g = r["gains"]
        design = r["design"] + (f" {r['alpha0_deg']:.0f}/{r['beta0_deg']:.0f}deg" if r["alpha0_deg"] is not None else "")
        yaw = f"{g['K_R'][2]:.3g}/{g['K_w'][2]:.3g}/{g['K_Ri'][2]:.3g}"
        p, f = r["prediction"], r["flight"]
        print(f"{i:4d} {design:22s} {r['J_r']:9.3e} {r['tau_m'] * 1e3:4.1f}ms {yaw:>18s} {_verdict(not p['stable']):>9s} "
              f"{p['growth']:+8.3f} {p['frequency_hz']:6.2f} {p['axis']:>5s} {f['growth']:+8.3f} "
              f"{_verdict(f['unstable']):>9s} {'yes' if r['match'] else 'NO':>5s}")


def plot(rows: list[dict], path: Path) -> None:
    """Measured against predicted growth rate [1/s] (symmetric log axes), green where the verdicts match, red where
    not; the band ``|growth| < BAND`` shaded; the error traces ``e(t)`` on the right."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
    g_p = np.array([r["prediction"]["growth"] for r in rows])
    g_f = np.array([r["flight"]["growth"] for r in rows])
    lim = 1.3 * max(1.0, np.nanmax(np.abs(np.concatenate([g_p, g_f]))))
    a.axvspan(-BAND, BAND, color="0.9", label=f"|predicted| < {BAND} 1/s (redrawn)")
    a.plot([-lim, lim], [-lim, lim], color="0.6", lw=0.8, ls="--", label="measured = predicted")
    a.axhline(0.0, color="k", lw=0.6)
    a.axvline(0.0, color="k", lw=0.6)
    for i, r in enumerate(rows):
        colour = "tab:green" if r["match"] else "tab:red"
        marker = "o" if r["design"] == "hexarotor" else "s"
        a.scatter(g_p[i], g_f[i], c=colour, marker=marker, s=40, edgecolors="k", linewidths=0.5, zorder=3)
    for i in range(len(rows)):  # one label per cluster of (nearly) coincident points
        near = [j for j in range(len(rows)) if abs(g_p[j] - g_p[i]) < 0.05 and abs(g_f[j] - g_f[i]) < 0.05] or [i]
        if near[0] == i:
            a.annotate(", ".join(map(str, near)), (g_p[i], g_f[i]), textcoords="offset points", xytext=(5, 3),
                       fontsize=8)
    a.scatter([], [], c="tab:green", marker="o", edgecolors="k", label="match (o hexarotor, s x500)")
    a.scatter([], [], c="tab:red", marker="o", edgecolors="k", label="mismatch")
    a.set_xscale("symlog", linthresh=1.0)
    a.set_yscale("symlog", linthresh=1.0)
    a.set(xlim=(-lim, lim), ylim=(-lim, lim), xlabel="predicted max Re s [1/s] (linearised, analytic plant)",
          ylabel="measured envelope growth [1/s] (MuJoCo C flight)",
          title=f"{sum(r['match'] for r in rows)}/{len(rows)} verdicts match")
    a.legend(fontsize=7, loc="upper left")
    for i, r in enumerate(rows):
        t, e = r["_trace"]
        b.semilogy(t, np.where(np.isfinite(e) & (e > 0), e, np.nan), lw=0.7,
                   color="tab:red" if not r["prediction"]["stable"] else "tab:blue")
    b.axhline(CEILING, color="0.5", ls=":", lw=0.8)
    b.annotate("end of the linear range", (0.0, CEILING), textcoords="offset points", xytext=(2, 3), fontsize=7,
               color="0.4")
    b.set(xlabel="t [s]", ylabel="e: deviation from hover, scaled state norm",
          title="flights (red: predicted unstable, blue: stable)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    """Draw, predict, fly and compare (module docstring); returns the exit status (1 on any mismatch)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 fixed cases (unstable, stable), 4 s flights")
    ap.add_argument("--out", default=None, help="output folder (default jaxrotor-out/stability_vs_flight[_quick])")
    args = ap.parse_args(argv)
    out = Path(args.out or ("jaxrotor-out/stability_vs_flight" + ("_quick" if args.quick else "")))
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    duration, fit_s = FLIGHT_S[args.quick], FIT_S[args.quick]
    rows, redrawn, skipped, drawn = [], [], [], []
    if args.quick:
        for case in quick_cases():
            rows.append(run_case(case, predict(case, duration), fit_s))
    else:
        rng = np.random.default_rng(SEED)
        half = {True: 0, False: 0}  # accepted cases per predicted verdict (unstable?)
        while len(rows) < N_CASES:
            case = draw_case(rng)
            predicted = predict(case, duration)
            growth, unstable = float(predicted[4].max_growth_rate), not bool(predicted[4].stable)
            drawn.append({**case, "growth": growth, "unstable": unstable})
            if abs(growth) < BAND:
                redrawn.append(drawn[-1])
                print(f"redrawn: {case['design']} growth {growth:+.3f} 1/s within the band")
                continue
            if half[unstable] >= N_CASES // 2:
                skipped.append(drawn[-1])
                print(f"skipped: {case['design']} growth {growth:+.3f} 1/s, {_verdict(unstable)} cases complete")
                continue
            half[unstable] += 1
            rows.append(run_case(case, predicted, fit_s))
            r = rows[-1]
            print(f"case {len(rows) - 1}: {r['design']}, predicted {r['prediction']['summary']}; flight growth "
                  f"{r['flight']['growth']:+.3f} 1/s ({r['flight']['exit']} at {r['flight']['t_exit']:.2f} s)"
                  f" [{r['seconds']['flight']:.1f} s]", flush=True)
    print_table(rows)
    plot(rows, out / "stability_vs_flight.png")
    n_unstable = sum(not r["prediction"]["stable"] for r in rows)
    matches = sum(r["match"] for r in rows)
    share = sum(d["unstable"] for d in drawn) / max(len(drawn), 1)
    print(f"split: {n_unstable} unstable, {len(rows) - n_unstable} stable by the analysis; of {len(drawn)} draws "
          f"{100 * share:.0f} % unstable, {len(redrawn)} redrawn (|growth| < {BAND} 1/s), {len(skipped)} skipped "
          f"(their verdict's half complete); {matches}/{len(rows)} verdicts match")
    record = dict(quick=args.quick, seed=None if args.quick else SEED, flight_s=duration, fit_s=fit_s,
                  envelope_s=ENVELOPE_S, floor=FLOOR, ceiling=CEILING, perturbation=PERTURBATION, band=BAND,
                  control_rate_hz=CONTROL_RATE, n_unstable=n_unstable, n_stable=len(rows) - n_unstable,
                  draws=len(drawn), unstable_share_of_draws=share, redrawn=len(redrawn), redrawn_cases=redrawn,
                  skipped=len(skipped), skipped_cases=skipped, matches=matches,
                  cases=[{k: v for k, v in r.items() if not k.startswith("_")} for r in rows],
                  runtime_s=time.perf_counter() - start)
    checks = Checks("stability_vs_flight")
    for i, r in enumerate(rows):
        checks.add(f"case {i} ({r['design']}, predicted {_verdict(not r['prediction']['stable'])}): flight verdict "
                   "matches", float(r["match"]), "==", 1.0,
                   f"predicted {r['prediction']['growth']:+.3f} 1/s, flight {r['flight']['growth']:+.3f} 1/s")
    print(f"runtime {record['runtime_s']:.1f} s")
    return checks.finish(out / "stability_vs_flight.json", record)


if __name__ == "__main__":
    sys.exit(main())
