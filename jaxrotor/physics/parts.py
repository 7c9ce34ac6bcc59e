"""The parts the physics layer builds its multibody model from: the design's :class:`~jaxrotor.design.parts.Parts`.

There is one vehicle description: the :mod:`jaxrotor.design.parts` pytree (hub, arm, motor,
propeller, battery, payload, landing gear, ballast) that gives the analytic layer its mass,
centre of mass, inertia and rotor inertia is what :func:`jaxrotor.physics.mjcf.build_model`
turns into MJCF. This module re-exports those classes (``from jaxrotor.physics import Parts,
Hub, ...``) and chooses the parts of a platform (:func:`default_parts`):

* a platform built from parts (``platform.parts``): those parts;
* the paper's presets (``platform.name`` starting with ``"paper_hexarotor"``):
  :func:`paper_hexarotor_parts`, the Table II build whose engine inertia is the paper's
  physics-layer ``J^p`` (the paper's two inertias ``J^a`` / ``J^p`` are by design);
* any other platform (mass and inertia typed in): :func:`fit_parts`, a generic build plus a
  :class:`~jaxrotor.design.parts.Ballast` box solved so that the engine's mass and diagonal
  inertia equal the platform's.

All values SI (kg, m, kg m^2); positions in the body frame (x forward, y left, z up).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..design.parts import (
    AIR_DENSITY,
    Arm,
    Ballast,
    Battery,
    Hub,
    LandingGear,
    MassProperties,
    Motor,
    Parts,
    Payload,
    Propeller,
    mass_properties,
)
from ..design.vehicles import paper_hexarotor_parts as paper_hexarotor_parts
from ._geometry import arm_tips, check_parts, is_paper_platform
from .mjcf import engine_mass_properties

__all__ = ["Arm", "Ballast", "Battery", "Hub", "LandingGear", "MassProperties", "Motor", "Parts", "Payload",
           "Propeller", "arm_tips", "check_parts", "default_parts", "fit_parts", "is_paper_platform",
           "parts_dict", "parts_mass", "paper_hexarotor_parts", "scale_masses"]

#: Rotor-assembly mass shares (of the platform's mass) :func:`fit_parts` tries, largest first.
FIT_ROTOR_FRACTIONS = (0.4, 0.2, 0.1, 0.05)
#: Hub share of the mass in a generic build (the ballast takes what the other parts leave).
FIT_HUB_FRACTION = 0.3
#: Landing-gear share of the mass in a generic build (four legs).
FIT_GEAR_FRACTION = 0.01


def parts_mass(parts: Parts, platform) -> float:
    """Total mass [kg] of ``parts`` on ``platform``'s geometry (:func:`~jaxrotor.design.parts.mass_properties`)."""
    from ..design.platform import geometric_rotor_positions, rotor_axes

    return float(mass_properties(parts, geometric_rotor_positions(platform), rotor_axes(platform),
                                 platform.arms).mass)


def scale_masses(parts: Parts, ratio: float) -> Parts:
    """``parts`` with every mass (hub, arm or its mass per length, motor and its bell, propeller, battery,
    payload, landing-gear legs, ballast) multiplied by ``ratio`` (shapes unchanged)."""
    r = float(ratio)

    def scaled(part, *names):
        if part is None:
            return None
        return dataclasses.replace(part, **{k: getattr(part, k) * r for k in names if getattr(part, k) is not None})

    return dataclasses.replace(
        parts, hub=scaled(parts.hub, "mass"), arm=scaled(parts.arm, "mass", "mass_per_length"),
        motor=scaled(parts.motor, "mass", "rotor_mass"), propeller=scaled(parts.propeller, "mass"),
        battery=scaled(parts.battery, "mass"), payload=scaled(parts.payload, "mass"),
        landing_gear=scaled(parts.landing_gear, "mass"), ballast=scaled(parts.ballast, "mass"))


def parts_dict(parts: Parts) -> dict:
    """``parts`` as plain Python (part -> field -> float, list or int; absent parts ``None``): what a JSON
    report records (SI units as in :mod:`jaxrotor.design.parts`)."""

    def plain(v):
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if dataclasses.is_dataclass(v):
            return {f.name: plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
        a = np.asarray(v, dtype=float)
        return float(a) if a.ndim == 0 else a.tolist()

    return plain(parts)


def default_parts(platform) -> Parts:
    """The parts the physics layer builds ``platform`` from.

    ``platform.parts`` when the platform was built from parts; :func:`paper_hexarotor_parts` for
    the paper's presets (``J^p``, by design); otherwise :func:`fit_parts` (the engine then has the
    platform's mass and diagonal inertia).

    Raises:
        ValueError: from :func:`fit_parts` (an inertia no parts can have).
    """
    if getattr(platform, "parts", None) is not None:
        return platform.parts
    if is_paper_platform(platform):
        return paper_hexarotor_parts()
    return fit_parts(platform)


def _generic(platform, fraction: float, flat: bool = False) -> Parts:
    """A generic build of ``platform``'s mass: ``fraction`` of it in the rotor assemblies (per rotor:
    arm 30 %, motor 65 %, propeller 5 %), 1 % in a 4-leg gear, 30 % in the hub; sizes from the geometry
    (hub radius 0.3 of the shortest arm tip distance from ``z_B``, propeller diameter 0.86 of the
    closest spacing between rotors on different arms). ``flat``: only the propellers keep their mass
    (0.25 % of the platform's, thin blades), the hub a near-massless disc; motors, arms and legs massless."""
    from ..design.platform import geometric_rotor_positions

    pos = np.asarray(geometric_rotor_positions(platform), dtype=float)
    arms = platform.arms
    n = len(pos)
    tips = arm_tips(pos, arms)
    radial = float(np.linalg.norm(tips[:, :2], axis=1).min())
    group = np.arange(n)
    for k, g in enumerate(arms):
        group[list(g)] = n + k
    d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    d[group[:, None] == group[None, :]] = np.inf
    spacing = float(d.min()) if n > 1 and np.isfinite(d.min()) else 2 * radial
    m = float(np.asarray(platform.mass))
    n_arms = len(tips)
    per_rotor = fraction * m / n
    D = 0.86 * spacing
    c_f = float(np.mean(np.asarray(platform.c_f)))
    c_tau = float(np.mean(np.abs(np.asarray(platform.c_tau))))
    rho = AIR_DENSITY
    c_t = max(c_f * 4 * math.pi**2 / (rho * D**4), 1e-12)
    c_p = max(c_tau * 8 * math.pi**3 / (rho * D**5), 1e-12)
    arm_mass = 0.3 * per_rotor * n / n_arms
    motor_mass, prop_mass, gear_mass, hub_mass = 0.65 * per_rotor, 0.05 * per_rotor, FIT_GEAR_FRACTION * m / 4, \
        FIT_HUB_FRACTION * m
    thickness = 0.004
    if flat:
        arm_mass = motor_mass = gear_mass = 0.0
        prop_mass, hub_mass, thickness = 0.0025 * m / n, 1e-9 * m, 1e-6
    return Parts(
        hub=Hub(mass=hub_mass, radius=0.3 * radial, height=0.03),
        arm=Arm(mass=arm_mass, radius=0.01 * max(radial, 0.1) / 0.385),
        motor=Motor(mass=motor_mass, radius=0.06 * radial, height=0.03),
        propeller=Propeller(diameter=D, mass=prop_mass, chord=0.06 * spacing, thickness=thickness, c_t=c_t, c_p=c_p),
        landing_gear=LandingGear(mass=gear_mass, legs=4, radius=0.25 * radial, length=0.1),
        air_density=rho,
    )


#: Smallest ballast half-extent written to the model [m] (MuJoCo needs positive box sizes).
_MIN_HALF = 1e-6


def _solve_ballast(platform, parts: Parts):
    """The ballast that makes ``parts`` (without ballast) have the platform's mass, a centre of mass at
    the origin and its diagonal inertia, from the engine's own mass properties of the other parts.

    Returns ``(ballast | None, why)``: ``None`` and the numbers when no box can do it.
    """
    m0, first, J0 = engine_mass_properties(platform, parts)  # about the origin, tilt hinges at nominal angles
    m_P = float(np.asarray(platform.mass))
    J_P = np.asarray(platform.inertia, dtype=float)
    m_b = m_P - m0
    if not m_b > 1e-9 * m_P:
        return None, f"the other parts weigh {m0:.6g} kg of the platform's {m_P:.6g} kg (ballast {m_b:.3g} kg)"
    o = -first / m_b
    I_box = J_P - J0 - m_b * (float(o @ o) * np.eye(3) - np.outer(o, o))
    Ixx, Iyy, Izz = np.diag(I_box)
    sq = 6.0 * np.array([Iyy + Izz - Ixx, Ixx + Izz - Iyy, Ixx + Iyy - Izz]) / m_b  # a^2, b^2, c^2 [m^2]
    tol = 1e-10 * 12.0 * float(np.trace(J_P)) / m_b  # rounding of an exactly planar target
    if np.any(sq < -tol):
        return None, (f"the ballast box would need squared extents (a^2, b^2, c^2) = "
                      f"({sq[0]:.4g}, {sq[1]:.4g}, {sq[2]:.4g}) m^2 for the residual inertia "
                      f"diag({Ixx:.6g}, {Iyy:.6g}, {Izz:.6g}) kg m^2 of {m_b:.6g} kg")
    size = np.maximum(np.sqrt(np.maximum(sq, 0.0)), 2 * _MIN_HALF)
    return Ballast(mass=m_b, size=size, offset=o), ""


def fit_parts(platform) -> Parts:
    """Generic parts whose engine mass and diagonal inertia are exactly ``platform.mass`` / ``platform.inertia``.

    For a platform whose mass and inertia were typed in (no ``parts``). The build
    (:func:`_generic`): a hub (30 % of the mass), per rotor an arm, motor and propeller
    (a share ``f`` of the mass: 30 / 65 / 5 %), a 4-leg landing gear (1 %), and a
    :class:`~jaxrotor.design.parts.Ballast` box of the remaining mass ``m_b`` at ``o`` with
    extents ``a, b, c`` solved from the engine's own mass properties of the other parts
    (mass ``m_0``, first moment ``s_0``, inertia ``J_0`` about the origin, tilt hinges at the
    platform's angles): ``m_b = m - m_0``, ``o = -s_0 / m_b`` (the centre of mass at the
    origin), ``J_box = J - J_0 - m_b (|o|^2 I - o o^T)`` and, from
    ``J_box = diag(m_b (b^2+c^2), m_b (a^2+c^2), m_b (a^2+b^2)) / 12``,
    ``a^2 = 6 (J_yy + J_zz - J_xx) / m_b`` and cyclically. When a squared extent is negative
    the rotor share ``f`` shrinks (0.4, 0.2, 0.1, 0.05); last comes a flat build (massless
    motors, arms and legs, a near-massless hub, thin propellers of 0.25 % of the mass, a flat
    ballast), the only one that can have a planar inertia ``J_z = J_x + J_y`` (what lumped
    point masses in the rotor plane and a flat disc give, e.g. ``cs_4r``: any part with height
    has ``J_x + J_y - J_z = 2 sum m z^2 > 0``).

    Raises:
        ValueError: naming the platform and the numbers: an inertia with products of inertia
            beyond 1e-9 (relative: a body-aligned box cannot carry them), or one no build fits
            (e.g. ``J_z > J_x + J_y``, which no body has).
    """
    name = platform.name
    m = float(np.asarray(platform.mass))
    J = np.asarray(platform.inertia, dtype=float)
    diag = np.diag(J)
    off = J - np.diag(diag)
    shown = f"m = {m:.6g} kg, J = diag({diag[0]:.6g}, {diag[1]:.6g}, {diag[2]:.6g}) kg m^2"
    if np.abs(off).max() > 1e-9 * float(np.abs(diag).max()):
        i, j = np.unravel_index(np.argmax(np.abs(off)), off.shape)
        raise ValueError(f"fit_parts: platform `{name}` ({shown}) has a product of inertia J_{'xyz'[i]}{'xyz'[j]} = "
                         f"{off[i, j]:.6g} kg m^2 ({abs(off[i, j]) / float(np.abs(diag).max()):.3g} of the largest "
                         "moment, beyond 1e-9): the fitted ballast is a body-aligned box. Fix: give the platform its "
                         "parts (parts=Parts(...)), or pass parts= to the physics plant / PhysicsSettings.")
    tried = []
    for flat, fraction in [(False, f) for f in FIT_ROTOR_FRACTIONS] + [(True, FIT_ROTOR_FRACTIONS[-1])]:
        parts = _generic(platform, fraction, flat=flat)
        check_parts(parts, _geometric(platform), platform.arms)
        ballast, why = _solve_ballast(platform, parts)
        if ballast is not None:
            return dataclasses.replace(parts, ballast=ballast)
        tried.append(f"{'flat build' if flat else f'rotor share {fraction:g}'}: {why}")
    planar = diag[0] + diag[1] - diag[2]
    raise ValueError(
        f"fit_parts: no generic parts reproduce platform `{name}` ({shown}; J_x + J_y - J_z = {planar:.6g} kg m^2, "
        "which is 2 sum m z^2 >= 0 for any body). Tried " + "; ".join(tried) + ". Fix: give an inertia with "
        "J_z <= J_x + J_y (and each moment no smaller than the rotors' m_rotor l^2 share), build the platform from "
        "its parts (parts=Parts(...): mass and inertia are then derived), or pass parts= to the physics plant / "
        "PhysicsSettings.")


def _geometric(platform) -> np.ndarray:
    from ..design.platform import geometric_rotor_positions

    return np.asarray(geometric_rotor_positions(platform), dtype=float)
