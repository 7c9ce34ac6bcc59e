"""Named platform presets.

* ``paper_hexarotor``: the RotorSuite use case, ``CS_α0β0-Ted_6R``, every value of
  Table II (analytic inertia ``J^a``).
* ``paper_hexarotor_physics``: the same with the physics-based inertia ``J^p``.
* ``cs_4r``: the paper's flat star quadrotor example ``CS_4R`` (values chosen here,
  see below).
* ``cs_a0_ted_6r``: the paper's cant-tilted hexarotor example ``CS_α0-Ted_6R``.
* ``cs_ai_ting_6r``: six independently tilting arms (``CS_αi-Ting_6R``, the arrangement
  of Voliro, Kamel et al. 2018) on the Table II vehicle.
* ``cs_ai_ting_4r``: a tilting quadrotor (``CS_αi-Ting_4R``, the arrangement of Ryll,
  Bülthoff and Robuffo Giordano 2015) on the ``cs_4r`` vehicle.
* ``cs_a0_ting_6r``: the interdependent cant-tilting hexarotor ``CS_α0-Ting_6R``
  (one servo sets ``alpha_i = (-1)^i alpha_0`` on every arm) on the Table II vehicle.

Tilt servos (:data:`TILT_SERVOS`): the sources describe the mechanisms (Voliro: each
arm turned about its own axis by a smart servo; Ryll et al.: one servo per arm
turning the propeller about the arm; the cant-tilting hexarotor: one servo and a
linkage for all arms), not a servo model to reproduce. jaxrotor uses a first-order
servo with the time constant, rate limit and angle limits given there, chosen for
servos of that class (smart servos with a no-load speed near 5-6 rad/s and a
position-loop bandwidth of a few hertz): documented choices, not measured values.

The paper gives no rotor speed limit. jaxrotor uses ``rotor_speed_max = 700 rad/s``
(about 6700 rpm) for the Table II rotors: with ``c_f = 3.799e-5 N s^2/rad^2`` that
is 18.6 N per rotor, a thrust-to-weight ratio near 2.9 for the 3.5 kg hexarotor,
typical of the 13-15 inch propellers such ``c_f`` values describe. The analytic
reproduction (ideal motors) does not use the bound.

Presets built from parts (:mod:`jaxrotor.design.vehicles`; mass, inertia, rotor constants and
top speed derived from hub, arms, motors, propellers, battery and gear, each matched to its
published values, ``docs/vehicles.md``): ``paper_hexarotor_parts`` (Table II from its parts,
``J^p``), ``x500``, ``f450``, ``s550``, ``x8``, ``y6``, ``crazyflie``, ``hummingbird``.

Use :func:`get` to build a preset by name and :func:`names` to list them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from . import vehicles as _vehicles
from .layouts import hex_s550, octo_x8, racing_250
from .platform import Platform, star_platform

__all__ = ["paper_hexarotor", "cs_4r", "cs_a0_ted_6r", "cs_ai_ting_6r", "cs_ai_ting_4r", "cs_a0_ting_6r", "get",
           "names", "describe", "PRESETS", "register", "TILT_SERVOS", "PAPER_ROTOR_INERTIA"]

#: Table II values.
TABLE_II = {
    "arm_length": 0.385,  # m
    "beta0": math.pi / 18,  # rad
    "alpha0": 5 * math.pi / 36,  # rad, alpha_i = (-1)^i alpha0
    "c_f": 3.799e-05,  # N s^2 / rad^2
    "c_tau": 1.163e-06,  # N m s^2 / rad^2
    "mass": 3.5,  # kg
    "gravity": 9.81,  # m/s^2
    "J_a": (0.155, 0.147, 0.251),  # kg m^2 (analytic)
    "J_p": (0.081, 0.081, 0.162),  # kg m^2 (physics-based)
}

#: Rotor speed limit used for the Table II rotors (not in the paper; see module docstring).
ROTOR_SPEED_MAX = 700.0  # rad/s

#: Spin inertia of one Table II propeller with its motor bell [kg m^2], the value the physics layer's
#: spinning propellers carry for the paper hexarotor (the parts-built
#: :func:`jaxrotor.design.vehicles.paper_hexarotor_from_parts` derives 1.089e-4 from its parts).
#: ``configs/paper_realistic.toml`` and ``configs/paper_jr_30ms.toml`` give it as ``rotor_inertia``.
PAPER_ROTOR_INERTIA = 1.095e-4  # kg m^2


def paper_hexarotor(inertia: str = "analytic", rotor_speed_max: float = ROTOR_SPEED_MAX) -> Platform:
    """The use-case hexarotor ``CS_α0β0-Ted_6R`` of Table II.

    ``l = 0.385 m``, ``gamma_i = (i-1) pi/3``, ``delta_i = 0``, ``beta_i = beta_0 = pi/18``,
    ``alpha_i = (-1)^i alpha_0`` with ``alpha_0 = 5 pi/36``, ``kappa_i = (-1)^i``,
    ``c_f = 3.799e-5``, ``c_tau = 1.163e-6``, ``m = 3.5 kg``, ``g = 9.81``,
    ``J^a = diag(0.155, 0.147, 0.251) kg m^2`` (``inertia="physics"`` gives ``J^p``).
    """
    if inertia not in ("analytic", "physics"):
        raise ValueError(f"paper_hexarotor: `inertia` = {inertia!r} is invalid. Fix: use 'analytic' or 'physics'.")
    T = TABLE_II
    return star_platform(
        6,
        T["arm_length"],
        mass=T["mass"],
        c_f=T["c_f"],
        c_tau=T["c_tau"],
        alpha=T["alpha0"],
        beta=T["beta0"],
        inertia=T["J_a"] if inertia == "analytic" else T["J_p"],
        gravity=T["gravity"],
        rotor_speed_max=rotor_speed_max,
        name="paper_hexarotor" if inertia == "analytic" else "paper_hexarotor_physics",
    )


def cs_4r(rotor_speed_max: float = ROTOR_SPEED_MAX) -> Platform:
    """The flat star quadrotor ``CS_4R`` (paper Sec. III-C; values chosen here).

    The paper names the class only. jaxrotor uses the Table II rotors on a
    0.25 m arm, ``m = 1.5 kg``, ``kappa = (-1, +1, -1, +1)``, and an inertia from
    lumped parts: four 0.08 kg motor-propeller hubs and a 1.18 kg central disc of
    radius 0.1 m (``J = diag(0.01295, 0.01295, 0.0259) kg m^2``).
    """
    return star_platform(
        4, 0.25, mass=1.5, c_f=TABLE_II["c_f"], c_tau=TABLE_II["c_tau"], hub_mass=0.08, body_radius=0.1,
        rotor_speed_max=rotor_speed_max, name="cs_4r",
    )


def cs_a0_ted_6r(rotor_speed_max: float = ROTOR_SPEED_MAX) -> Platform:
    """The cant-tilted hexarotor ``CS_α0-Ted_6R`` (paper Sec. III-C).

    Table II's hexarotor without dihedral: ``beta_i = 0``, ``alpha_i = (-1)^i alpha_0``
    with ``alpha_0 = 5 pi/36``, same rotors, mass and ``J^a``.
    """
    T = TABLE_II
    return star_platform(
        6, T["arm_length"], mass=T["mass"], c_f=T["c_f"], c_tau=T["c_tau"], alpha=T["alpha0"], beta=0.0,
        inertia=T["J_a"], gravity=T["gravity"], rotor_speed_max=rotor_speed_max, name="cs_a0_ted_6r",
    )


def cs_ai_ting_6r(rotor_speed_max: float = ROTOR_SPEED_MAX) -> Platform:
    """Six independently tilting arms, ``CS_αi-Ting_6R`` (the Voliro arrangement, Kamel et al. 2018).

    The Table II vehicle (``l = 0.385 m``, rotors, ``m = 3.5 kg``, ``J^a``) with ``beta_i = 0`` and
    each arm turned about its own axis by a servo: ``alpha_i`` is an ``(n,)`` leaf, starting at 0
    (``tilting = ("alpha",)``). Servo: :data:`TILT_SERVOS` ``["cs_ai_ting_6r"]``.
    """
    T = TABLE_II
    return star_platform(
        6, T["arm_length"], mass=T["mass"], c_f=T["c_f"], c_tau=T["c_tau"], alpha=[0.0] * 6, beta=0.0,
        inertia=T["J_a"], gravity=T["gravity"], rotor_speed_max=rotor_speed_max, tilting=("alpha",),
        name="cs_ai_ting_6r",
    )


def cs_ai_ting_4r(rotor_speed_max: float = ROTOR_SPEED_MAX) -> Platform:
    """A tilting quadrotor, ``CS_αi-Ting_4R`` (the arrangement of Ryll et al. 2015).

    The ``cs_4r`` vehicle (0.25 m arms, Table II rotors, 1.5 kg, lumped inertia) with each
    propeller turned about its arm by its own servo: ``alpha_i`` ``(n,)``, starting at 0.
    Servo: :data:`TILT_SERVOS` ``["cs_ai_ting_4r"]``.
    """
    return star_platform(
        4, 0.25, mass=1.5, c_f=TABLE_II["c_f"], c_tau=TABLE_II["c_tau"], hub_mass=0.08, body_radius=0.1,
        alpha=[0.0] * 4, rotor_speed_max=rotor_speed_max, tilting=("alpha",), name="cs_ai_ting_4r",
    )


def cs_a0_ting_6r(rotor_speed_max: float = ROTOR_SPEED_MAX) -> Platform:
    """The interdependent cant-tilting hexarotor ``CS_α0-Ting_6R``.

    ``cs_a0_ted_6r`` whose shared cant ``alpha_0`` (``alpha_i = (-1)^i alpha_0``, a scalar leaf)
    is set in flight by one servo; it starts at Table II's ``alpha_0 = 25 deg``.
    Servo: :data:`TILT_SERVOS` ``["cs_a0_ting_6r"]``.
    """
    T = TABLE_II
    return star_platform(
        6, T["arm_length"], mass=T["mass"], c_f=T["c_f"], c_tau=T["c_tau"], alpha=T["alpha0"], beta=0.0,
        inertia=T["J_a"], gravity=T["gravity"], rotor_speed_max=rotor_speed_max, tilting=("alpha",),
        name="cs_a0_ting_6r",
    )


#: Tilt servos of the tilting presets (module docstring): first-order time constant [s],
#: rate limit [rad/s] and angle limits ``(lower, upper)`` [rad] of the commanded angle set.
TILT_SERVOS: dict[str, dict] = {
    "cs_ai_ting_6r": {"time_constant": 0.05, "rate_limit": 6.0, "limits": (-math.pi, math.pi)},
    "cs_ai_ting_4r": {"time_constant": 0.04, "rate_limit": 6.0, "limits": (-math.pi / 2, math.pi / 2)},
    "cs_a0_ting_6r": {"time_constant": 0.1, "rate_limit": 2.0, "limits": (math.radians(5.0), math.radians(40.0))},
}


PRESETS: dict[str, Callable[[], Platform]] = {
    "paper_hexarotor": paper_hexarotor,
    "paper_hexarotor_physics": lambda: paper_hexarotor("physics"),
    "cs_4r": cs_4r,
    "cs_a0_ted_6r": cs_a0_ted_6r,
    "cs_ai_ting_6r": cs_ai_ting_6r,
    "cs_ai_ting_4r": cs_ai_ting_4r,
    "cs_a0_ting_6r": cs_a0_ting_6r,
    "hex_s550": hex_s550,
    "octo_x8": octo_x8,
    "racing_250": racing_250,
    **_vehicles.BUILDERS,
}

_DESCRIPTIONS: dict[str, str] = {
    "paper_hexarotor": "RotorSuite use case, Table II (J^a)",
    "paper_hexarotor_physics": "RotorSuite use case, Table II with the physics-based inertia J^p",
    "cs_4r": "flat star quadrotor (paper example CS_4R)",
    "cs_a0_ted_6r": "cant-tilted hexarotor (paper example CS_α0-Ted_6R)",
    "cs_ai_ting_6r": "six independently tilting arms, Voliro arrangement (CS_αi-Ting_6R)",
    "cs_ai_ting_4r": "tilting quadrotor, Ryll arrangement (CS_αi-Ting_4R)",
    "cs_a0_ting_6r": "cant-tilting hexarotor, one shared servo cant (CS_α0-Ting_6R)",
    "hex_s550": "flat hexa-X, 1.8 kg, 275 mm arm, T/W 3 (HEX_S550)",
    "octo_x8": "coaxial X8, 4.5 kg, 350 mm arm, lower rotors 85 %, T/W 2.6 (OCTO_X8)",
    "racing_250": "250-class racing quad-X, 0.55 kg, 125 mm arm, T/W 6",
    **_vehicles.DESCRIPTIONS,
}


def register(name: str, builder: Callable[[], Platform], description: str) -> None:
    """Add a preset ``name`` built by ``builder()``."""
    PRESETS[name] = builder
    _DESCRIPTIONS[name] = description


def names() -> list[str]:
    """Names of all presets."""
    return list(PRESETS)


def describe(name: str) -> str:
    """One-line description of a preset."""
    return _DESCRIPTIONS.get(name, "")


def get(name: str) -> Platform:
    """Build the preset ``name``; unknown names raise a ValueError listing the valid ones."""
    try:
        return PRESETS[name]()
    except KeyError:
        raise ValueError(f"Unknown preset {name!r}. Fix: use one of {', '.join(PRESETS)}.") from None

