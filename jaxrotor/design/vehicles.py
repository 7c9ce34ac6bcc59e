"""Vehicles built from their parts: presets whose mass, inertia and rotor constants are derived.

Each builder returns a :class:`~jaxrotor.design.platform.Platform` made with ``parts=``
(:mod:`jaxrotor.design.parts`): mass, centre of mass, inertia, rotor inertia, ``c_f`` and
``c_tau`` are derived from hub, arms, motors, propellers, battery, payload and landing gear,
and the top rotor speed from the motor on the battery (unless a builder names it as given:
:attr:`Platform.overrides`). The propellers' ``c_t`` and ``c_p`` are those that give the
published rotor constants (``c_t = c_f 4 pi^2 / (rho D^4)``, ``c_p = c_tau 8 pi^3 / (rho D^5)``),
so the coefficients are derived, not overridden. Part masses and sizes are those of real
components of each airframe's class, tuned within that range so the derived mass and inertia
land on the published ones (:data:`PUBLISHED`, measured agreement in ``docs/vehicles.md``).

==========================  ==========================================================================
``paper_hexarotor_parts``   RotorSuite Table II hexarotor ``CS_α0β0-Ted_6R``: 3.5 kg, ``J^p`` within 2 %
``x500``                    Holybro X500-class quad-X, PX4 Gazebo ``x500`` (2.0 kg)
``f450``                    DJI F450-class quad-X, RflySim F450 model (1.4 kg)
``s550``                    S550-class hexa-X (1.8 kg; no published inertia: jaxrotor's build)
``x8``                      coaxial X8, 4 arms (4.5 kg; no published inertia: jaxrotor's build)
``y6``                      Y6, 3 arms (2.1 kg; no published inertia: jaxrotor's build)
``crazyflie``               Crazyflie 2.0 after Förster 2015, as RotorPy ships it (30 g)
``hummingbird``             AscTec Hummingbird, as RotorPy ships it (0.5 kg)
==========================  ==========================================================================

Every preset has the same vehicle as a TOML file, ``configs/vehicles/<name>.toml``
(``[platform]`` and ``[parts.*]`` tables); the test suite checks the two are equal.
"""

from __future__ import annotations

import math

from .layouts import coaxial_x_layout, x_layout, y6_layout
from .parts import AIR_DENSITY, Arm, Battery, Hub, LandingGear, Motor, Parts, Payload, Propeller
from .platform import Platform, star_platform

__all__ = ["PUBLISHED", "PAPER_ARM_LENGTH", "PAPER_GRAVITY", "PAPER_ROTOR_SPEED_MAX", "propeller_coefficients",
           "paper_hexarotor_parts", "paper_hexarotor_from_parts", "x500_parts", "x500", "f450_parts", "f450",
           "s550_parts", "s550", "x8_parts", "x8", "y6_parts", "y6", "crazyflie_parts", "crazyflie",
           "hummingbird_parts", "hummingbird", "BUILDERS", "DESCRIPTIONS"]


def propeller_coefficients(c_f: float, c_tau: float, diameter: float, rho: float = AIR_DENSITY) -> tuple[float, float]:
    """``(c_t, c_p)`` of a propeller of ``diameter`` [m] with rotor constants ``c_f`` [N s^2/rad^2],
    ``c_tau`` [N m s^2/rad^2] at air density ``rho`` [kg/m^3]: ``c_t = 4 pi^2 c_f / (rho D^4)``,
    ``c_p = 8 pi^3 c_tau / (rho D^5)`` (the inverse of :func:`~jaxrotor.design.parts.propulsion`)."""
    return c_f * 4 * math.pi**2 / (rho * diameter**4), c_tau * 8 * math.pi**3 / (rho * diameter**5)


#: Published values each preset is built to match: ``mass`` [kg], ``inertia`` (diagonal, kg m^2, or
#: ``None`` where none is published), ``c_f``, ``c_tau``, ``rotor_speed_max`` [rad/s] (``None``
#: where not published), the relative ``tolerance`` on mass and inertia, and the ``source``.
PUBLISHED: dict[str, dict] = {
    "paper_hexarotor_parts": dict(
        mass=3.5, inertia=(0.081, 0.081, 0.162), c_f=3.799e-5, c_tau=1.163e-6, rotor_speed_max=None, tolerance=0.02,
        source="RotorSuite paper, Table II (the physics-based inertia J^p)"),
    "x500": dict(
        mass=2.0, inertia=(0.02166666666666667, 0.02166666666666667, 0.04000000000000001), c_f=8.54858e-06,
        c_tau=0.016 * 8.54858e-06, rotor_speed_max=1000.0, tolerance=0.05,
        source="PX4/PX4-gazebo-models models/x500_base/model.sdf (base_link mass, inertia) and "
               "models/x500/model.sdf (motorConstant 8.54858e-06, momentConstant 0.016, maxRotVelocity 1000)"),
    "f450": dict(
        mass=1.4, inertia=(0.0211, 0.0219, 0.0366), c_f=1.105e-05, c_tau=1.779e-07, rotor_speed_max=1148.0 - 141.4,
        tolerance=0.05,
        source="RflySim/RflyExpCode e2/e2.3/Init.m, the F450 model of Quan Quan's multicopter design course "
               "(ModelParam_uavMass, uavJxx/Jyy/Jzz, uavR = 0.225 m, rotorCt, rotorCm; full-throttle speed "
               "motorCr + motorWb = 1006.6 rad/s)"),
    "s550": dict(
        mass=1.8, inertia=None, c_f=1.105e-05, c_tau=1.779e-07, rotor_speed_max=None, tolerance=0.05,
        source="no published mass or inertia found: the 1.8 kg all-up mass of jaxrotor's hex_s550 preset, the "
               "F450's 1045 rotor (same power system class); the inertia is jaxrotor's build"),
    "x8": dict(
        mass=4.5, inertia=None, c_f=None, c_tau=None, rotor_speed_max=None, tolerance=0.05,
        source="no published mass or inertia found: the 4.5 kg, 350 mm arm, 0.1 m separation, 85 % lower rotors "
               "of jaxrotor's octo_x8 preset; the inertia is jaxrotor's build"),
    "y6": dict(
        mass=2.1, inertia=None, c_f=None, c_tau=None, rotor_speed_max=None, tolerance=0.05,
        source="no published mass or inertia found: a 2.1 kg Y6 with 300 mm arms chosen by jaxrotor; the inertia "
               "is jaxrotor's build"),
    "crazyflie": dict(
        mass=0.03, inertia=(1.43e-5, 1.43e-5, 2.89e-5), c_f=2.3e-08, c_tau=7.8e-10, rotor_speed_max=2500.0,
        tolerance=0.05,
        source="spencerfolk/rotorpy rotorpy/vehicles/crazyflie_params.py (after Förster 2015: mass, Ixx/Iyy/Izz, "
               "arm 0.043 m, k_eta, k_m, rotor_speed_max 2500)"),
    "hummingbird": dict(
        mass=0.5, inertia=(3.65e-3, 3.68e-3, 7.03e-3), c_f=5.57e-06, c_tau=1.36e-07, rotor_speed_max=1500.0,
        tolerance=0.05,
        source="spencerfolk/rotorpy rotorpy/vehicles/hummingbird_params.py (mass, Ixx/Iyy/Izz, arm 0.17 m, "
               "rotor radius 0.10 m, k_eta, k_m, rotor_speed_max 1500)"),
}


def _propeller(key: str, diameter: float, **kw) -> Propeller:
    c_t, c_p = propeller_coefficients(PUBLISHED[key]["c_f"], PUBLISHED[key]["c_tau"], diameter)
    return Propeller(diameter=diameter, c_t=c_t, c_p=c_p, **kw)


# --------------------------------------------------------------------------- the paper's hexarotor

#: Table II arm length [m] and gravity [m/s^2], and the rotor speed limit jaxrotor uses for the
#: Table II rotors [rad/s] (the values of :data:`jaxrotor.design.presets.TABLE_II` and
#: :data:`jaxrotor.design.presets.ROTOR_SPEED_MAX`; the tests check they agree).
PAPER_ARM_LENGTH, PAPER_GRAVITY, PAPER_ROTOR_SPEED_MAX = 0.385, 9.81, 700.0


def paper_hexarotor_parts() -> Parts:
    """Parts of the RotorSuite Table II hexarotor (``l = 0.385 m``): 3.5 kg, ``J^p ~ diag(0.081, 0.081, 0.162)``.

    A 2.2288 kg hub (radius 0.10 m, 30 mm high: frame plates, battery, electronics), six 65 g
    arms (radius 10 mm), six 128.2 g motors (radius 22 mm, 30 mm high, no spinning bell
    modelled), six 12 g propellers of diameter 0.33 m (13 inch; blade chord 25 mm, 4 mm thick)
    and a 4-leg landing gear of 10 g legs, 10 cm long (radius 0.12 m, legs 5 mm, feet 10 mm).
    ``c_t``, ``c_p`` give Table II's ``c_f = 3.799e-5 N s^2`` and ``c_tau = 1.163e-6 N m s^2``
    with ``D = 0.33 m``, ``rho = 1.225 kg/m^3`` (``c_t = 0.1031``, ``c_p = 0.0626``). The paper's
    ``J^p`` is planar (``J_z = J_x + J_y``): the mass sits in the rotor plane, so the hub is flat
    and the gear light. No motor constants or battery: the paper gives no rotor speed limit
    (:data:`PAPER_ROTOR_SPEED_MAX` is given).
    """
    return Parts(
        hub=Hub(mass=2.2288, radius=0.10, height=0.03),
        arm=Arm(mass=0.065, radius=0.01),
        motor=Motor(mass=0.1282, radius=0.022, height=0.03, rotor_mass=0.0),
        propeller=_propeller("paper_hexarotor_parts", 0.33, mass=0.012, chord=0.025, thickness=0.004),
        landing_gear=LandingGear(mass=0.01, legs=4, radius=0.12, length=0.10, leg_radius=0.005, foot_radius=0.01),
        air_density=AIR_DENSITY,
    )


def paper_hexarotor_from_parts(parts: Parts | None = None) -> Platform:
    """The Table II hexarotor ``CS_α0β0-Ted_6R`` built from :func:`paper_hexarotor_parts`.

    Geometry of Table II: ``n = 6``, ``l = 0.385 m``, ``gamma_i = (i-1) pi/3``,
    ``alpha_i = (-1)^i 25 deg``, ``beta_i = 10 deg``, ``kappa_i = (-1)^i``, ``g = 9.81``. Derived:
    ``m = 3.5 kg``, ``J = diag(0.08130, 0.08130, 0.16139) kg m^2`` (+0.4 %, +0.4 %, -0.4 % from
    the paper's ``J^p``), ``c_f``, ``c_tau`` of Table II. Given: ``com_offset = 0`` (the paper's
    eq. (3) places the hubs about the centre of mass; the parts put it 3.7 mm below the hub
    plane) and ``rotor_speed_max = 700 rad/s`` (:data:`PAPER_ROTOR_SPEED_MAX`).
    Source: the RotorSuite paper, Table II.
    """
    return star_platform(
        6, PAPER_ARM_LENGTH, alpha=math.radians(25.0), beta=math.radians(10.0), gravity=PAPER_GRAVITY,
        parts=paper_hexarotor_parts() if parts is None else parts, com_offset=[0.0, 0.0, 0.0],
        rotor_speed_max=PAPER_ROTOR_SPEED_MAX, name="paper_hexarotor_parts",
    )


# --------------------------------------------------------------------------- PX4 x500


def x500_parts() -> Parts:
    """Parts of a Holybro X500 V2-class quad-X (500 mm wheelbase, 2216 KV920 motors, 1045 propellers, 4S).

    Hub 0.708 kg (carbon plates, flight controller, GPS, power module, radio, wiring; radius
    75 mm, 40 mm high); four 50 g arms (16 mm carbon tubes); four 105 g motors (a 2216 KV920
    motor with its ESC and mount, radius 14 mm, 32 mm high, 25 g bell; 0.10 Ohm, 0.5 A no-load,
    25 A limit); four 15 g 10 x 4.5 inch propellers; a 0.52 kg 4S 5000 mAh battery
    (155 x 48 x 36 mm) 25 mm below the hub centre; four 23 g gear legs of 0.19 m at 0.14 m.
    ``c_t = 0.0662``, ``c_p = 0.0262`` give PX4's ``motorConstant`` and
    ``momentConstant x motorConstant`` with ``D = 0.254 m`` (low for a 1045 propeller on a
    thrust stand, ``c_t ~ 0.1``: the Gazebo constants are those of the model, not of a
    measured propeller).
    """
    return Parts(
        hub=Hub(mass=0.708, radius=0.075, height=0.04),
        arm=Arm(mass=0.05, radius=0.008),
        motor=Motor(mass=0.105, radius=0.014, height=0.032, rotor_mass=0.025, kv=920.0, resistance=0.10,
                    no_load_current=0.5, max_current=25.0),
        propeller=_propeller("x500", 0.254, mass=0.015, pitch=0.114, chord=0.022, thickness=0.004),
        battery=Battery(mass=0.52, size=(0.155, 0.048, 0.036), offset=(0.0, 0.0, -0.025), cells=4,
                        capacity_mah=5000.0, internal_resistance=0.02),
        landing_gear=LandingGear(mass=0.023, legs=4, radius=0.14, length=0.19, leg_radius=0.006, foot_radius=0.01),
    )


def x500(parts: Parts | None = None) -> Platform:
    """Holybro X500-class quad-X after PX4's Gazebo ``x500`` model (``CS_4R``).

    Rotors at ``(+-0.174, +-0.174) m`` (``x_layout(4, 0.2461)``). Published (PX4-gazebo-models
    ``models/x500_base/model.sdf``, ``models/x500/model.sdf``): ``m = 2.0 kg``,
    ``J = diag(0.021667, 0.021667, 0.04) kg m^2`` (the ``base_link``; the SDF's four rotor links
    add 64 g on top), ``c_f = 8.54858e-6``, ``c_tau = 0.016 c_f``, top speed 1000 rad/s. Derived
    from :func:`x500_parts`: ``m = 2.000 kg``, ``J = diag(0.02119, 0.02213, 0.04001)``
    (-2.2 %, +2.2 %, +0.03 %: the battery lies along ``x_B``), top speed 1229 rad/s (the motor
    on 4S, voltage-limited; PX4's 1000 rad/s is a model setting, 19 % lower).
    """
    return x_layout(4, 0.174 * math.sqrt(2.0), parts=x500_parts() if parts is None else parts, name="x500")


# --------------------------------------------------------------------------- F450


def f450_parts() -> Parts:
    """Parts of a DJI F450-class quad-X (450 mm wheelbase, 2212 KV920 motors, 1045 propellers, 3S).

    Hub 0.20 kg (glass-fibre centre plates, flight controller, receiver, GPS; radius 70 mm);
    four 60 g moulded arms (radius 12 mm); four 117 g motors at the arm tips (a 2212 KV920
    motor, its 20 A ESC strapped under it and the mount; 0.10 Ohm, 0.5 A no-load, 20 A limit);
    four 13 g 10 x 4.5 inch propellers; a 0.30 kg 3S 4000 mAh battery (140 x 45 x 25 mm) hung
    70 mm below the hub; four 35 g gear legs of 0.20 m at 0.16 m. ``c_t = 0.0856``,
    ``c_p = 0.0341`` give the RflySim rotor constants with ``D = 0.254 m``.
    """
    return Parts(
        hub=Hub(mass=0.20, radius=0.07, height=0.04),
        arm=Arm(mass=0.06, radius=0.012),
        motor=Motor(mass=0.117, radius=0.014, height=0.03, rotor_mass=0.02, kv=920.0, resistance=0.10,
                    no_load_current=0.5, max_current=20.0),
        propeller=_propeller("f450", 0.254, mass=0.013, pitch=0.114, chord=0.022, thickness=0.004),
        battery=Battery(mass=0.30, size=(0.14, 0.045, 0.025), offset=(0.0, 0.0, -0.07), cells=3,
                        capacity_mah=4000.0, internal_resistance=0.02),
        landing_gear=LandingGear(mass=0.035, legs=4, radius=0.16, length=0.20, leg_radius=0.006, foot_radius=0.01),
    )


def f450(parts: Parts | None = None) -> Platform:
    """DJI F450-class quad-X after the RflySim F450 model (``CS_4R``, ``x_layout(4, 0.225)``).

    Published (RflySim/RflyExpCode ``e2/e2.3/Init.m``): ``m = 1.4 kg``,
    ``J = diag(0.0211, 0.0219, 0.0366) kg m^2``, ``R = 0.225 m``, ``c_f = 1.105e-5``,
    ``c_tau = 1.779e-7``, full-throttle speed ``C_r + omega_b = 1006.6 rad/s``. Derived from
    :func:`f450_parts`: ``m = 1.400 kg``, ``J = diag(0.02098, 0.02142, 0.03698)``
    (-0.6 %, -2.2 %, +1.0 %), top speed 924 rad/s (3S, voltage-limited; -8 %). PX4's Gazebo
    ``iris`` (1.5 kg, ``diag(0.029125, 0.029125, 0.055225)``) is not used: that inertia is a
    uniform 0.47 x 0.47 x 0.11 m box, which no F450 build reaches.
    """
    return x_layout(4, 0.225, parts=f450_parts() if parts is None else parts, name="f450")


# --------------------------------------------------------------------------- S550 hexa-X


def s550_parts() -> Parts:
    """Parts of an S550-class hexa-X (550 mm wheelbase, six 2212 KV920 motors, 1045 propellers, 3S).

    Hub 0.412 kg (plates with power distribution, flight controller, GPS; radius 90 mm); six 45 g
    arms; six 85 g motors with ESCs; six 13 g propellers with the F450's coefficients; a 0.41 kg
    3S 5000 mAh battery 50 mm below the hub; four 30 g gear legs of 0.18 m at 0.15 m.
    """
    return Parts(
        hub=Hub(mass=0.412, radius=0.09, height=0.04),
        arm=Arm(mass=0.045, radius=0.012),
        motor=Motor(mass=0.085, radius=0.014, height=0.03, rotor_mass=0.02, kv=920.0, resistance=0.10,
                    no_load_current=0.5, max_current=20.0),
        propeller=_propeller("s550", 0.254, mass=0.013, pitch=0.114, chord=0.022, thickness=0.004),
        battery=Battery(mass=0.41, size=(0.138, 0.043, 0.035), offset=(0.0, 0.0, -0.05), cells=3,
                        capacity_mah=5000.0, internal_resistance=0.02),
        landing_gear=LandingGear(mass=0.03, legs=4, radius=0.15, length=0.18, leg_radius=0.006, foot_radius=0.01),
    )


def s550(parts: Parts | None = None) -> Platform:
    """S550-class hexa-X (``CS_6R``, ``x_layout(6, 0.275)``).

    No published mass or inertia was found for an S550 build: the mass target is the 1.8 kg
    all-up mass of the lumped ``hex_s550`` preset and the inertia is what :func:`s550_parts`
    give, ``diag(0.0317, 0.0323, 0.0598) kg m^2``; the rotors are the F450's (RflySim constants).
    """
    return x_layout(6, 0.275, parts=s550_parts() if parts is None else parts, name="s550")


# --------------------------------------------------------------------------- X8


def x8_parts() -> Parts:
    """Parts of a coaxial X8 (4 arms, 8 rotors, 15-inch propellers, 4S).

    Hub 1.11 kg (plates, electronics, radius 0.12 m, 60 mm high); four 90 g arms (25 mm carbon
    tubes), each carrying a pair; eight 150 g motors (a 4114-class 400 KV motor with ESC and
    mount; 0.10 Ohm, 0.5 A, 30 A); eight 30 g 15 x 5 inch propellers (``c_t = 0.10``,
    ``c_p = 0.04``); a 0.85 kg 4S 10000 mAh battery 60 mm below the hub; a 0.5 kg camera payload
    50 mm forward, 0.12 m below; four 60 g gear legs of 0.25 m at 0.2 m.
    """
    return Parts(
        hub=Hub(mass=1.11, radius=0.12, height=0.06),
        arm=Arm(mass=0.09, radius=0.0125),
        motor=Motor(mass=0.15, radius=0.02, height=0.03, rotor_mass=0.06, kv=400.0, resistance=0.10,
                    no_load_current=0.5, max_current=30.0),
        propeller=Propeller(diameter=0.381, mass=0.03, c_t=0.10, c_p=0.04, pitch=0.127, chord=0.03, thickness=0.005),
        battery=Battery(mass=0.85, size=(0.17, 0.07, 0.045), offset=(0.0, 0.0, -0.06), cells=4, capacity_mah=10000.0,
                        internal_resistance=0.01),
        payload=Payload(mass=0.5, offset=(0.05, 0.0, -0.12)),
        landing_gear=LandingGear(mass=0.06, legs=4, radius=0.2, length=0.25, leg_radius=0.008, foot_radius=0.015),
    )


def x8(parts: Parts | None = None) -> Platform:
    """Coaxial X8 (``nCS_8R``): ``coaxial_x_layout(8, 0.35, 0.1, 0.85)``.

    No published mass or inertia was found: the airframe of the lumped ``octo_x8`` preset
    (4.5 kg, 350 mm arms, 0.1 m between the rotors of a pair, lower rotors at 85 % of the upper
    ones' ``c_f`` and ``c_tau``), built from :func:`x8_parts`; the inertia is jaxrotor's build.
    """
    return coaxial_x_layout(8, 0.35, 0.1, 0.85, parts=x8_parts() if parts is None else parts, name="x8")


# --------------------------------------------------------------------------- Y6


def y6_parts() -> Parts:
    """Parts of a Y6 (3 arms, 6 rotors, 11-inch propellers, 4S).

    Hub 0.634 kg (radius 80 mm); three 60 g arms; six 90 g motors (2216 KV880 with ESC and
    mount; 0.10 Ohm, 0.5 A, 25 A); six 16 g 11 x 4.7 inch propellers (``c_t = 0.11``,
    ``c_p = 0.045``); a 0.53 kg 4S 5000 mAh battery 50 mm below the hub; four 30 g gear legs.
    """
    return Parts(
        hub=Hub(mass=0.634, radius=0.08, height=0.04),
        arm=Arm(mass=0.06, radius=0.01),
        motor=Motor(mass=0.09, radius=0.014, height=0.032, rotor_mass=0.025, kv=880.0, resistance=0.10,
                    no_load_current=0.5, max_current=25.0),
        propeller=Propeller(diameter=0.2794, mass=0.016, c_t=0.11, c_p=0.045, pitch=0.119, chord=0.024,
                            thickness=0.004),
        battery=Battery(mass=0.53, size=(0.155, 0.048, 0.036), offset=(0.0, 0.0, -0.05), cells=4, capacity_mah=5000.0,
                        internal_resistance=0.02),
        landing_gear=LandingGear(mass=0.03, legs=4, radius=0.12, length=0.2, leg_radius=0.006, foot_radius=0.01),
    )


def y6(parts: Parts | None = None) -> Platform:
    """Y6 (``nCS_6R``): ``y6_layout(0.30, 0.08, 0.85)``, arms at 60, 180 and 300 deg.

    No published mass or inertia was found: a 2.1 kg Y6 chosen by jaxrotor, built from
    :func:`y6_parts`; the inertia is jaxrotor's build.
    """
    return y6_layout(0.30, 0.08, 0.85, parts=y6_parts() if parts is None else parts, name="y6")


# --------------------------------------------------------------------------- RotorPy vehicles


def crazyflie_parts() -> Parts:
    """Parts of a Crazyflie 2.0 (92 mm, four 7 x 16 mm coreless motors, 46 mm propellers, 1S).

    Hub 7.3 g (the PCB core with its electronics, radius 20 mm, 4 mm thick); four 1.1 g PCB
    arms; four 2.5 g motors (radius 3.5 mm, 16 mm long, 0.8 g rotor; 14000 rpm/V, 1 Ohm,
    0.05 A, 1.5 A: chosen, the sources give no motor constants); four 0.3 g propellers; a 7.1 g
    1S 250 mAh battery (32 x 20 x 8 mm) 3.5 mm below the PCB centre. ``c_t = 0.166`` and
    ``c_p = 0.767`` give RotorPy's ``k_eta`` and ``k_m`` with ``D = 0.046 m``; that ``c_p`` is
    several times a real propeller's (RotorPy's file says its drag constant is "mostly made up"),
    so the motor model on it cannot reach RotorPy's top speed, which is given instead.
    """
    return Parts(
        hub=Hub(mass=0.0073, radius=0.02, height=0.004),
        arm=Arm(mass=0.0011, radius=0.002),
        motor=Motor(mass=0.0025, radius=0.0035, height=0.016, rotor_mass=0.0008, kv=14000.0, resistance=1.0,
                    no_load_current=0.05, max_current=1.5),
        propeller=_propeller("crazyflie", 0.046, mass=0.0003, pitch=0.02, chord=0.005, thickness=0.0005),
        battery=Battery(mass=0.0071, size=(0.032, 0.02, 0.008), offset=(0.0, 0.0, -0.0035), cells=1,
                        capacity_mah=250.0, internal_resistance=0.1),
    )


def crazyflie(parts: Parts | None = None) -> Platform:
    """Crazyflie 2.0 (``CS_4R``) after Förster 2015, as RotorPy ships it: ``x_layout(4, 0.043)``.

    Published (spencerfolk/rotorpy ``rotorpy/vehicles/crazyflie_params.py``): ``m = 0.03 kg``,
    ``J = diag(1.43e-5, 1.43e-5, 2.89e-5) kg m^2``, arm 0.043 m, ``k_eta = 2.3e-8`` (``c_f``),
    ``k_m = 7.8e-10`` (``c_tau``), ``rotor_speed_max = 2500 rad/s`` (given here). That inertia has
    ``J_zz > J_xx + J_yy`` (by 1 %), which no body has; the parts give
    ``diag(1.437e-5, 1.473e-5, 2.785e-5)`` (+0.5 %, +3.0 %, -3.6 %). The motor model's own top
    speed on 1S with RotorPy's drag is 1126 rad/s (current-limited).
    """
    return x_layout(4, 0.043, parts=crazyflie_parts() if parts is None else parts, rotor_speed_max=2500.0,
                    name="crazyflie")


def hummingbird_parts() -> Parts:
    """Parts of an AscTec Hummingbird (340 mm motor to motor, 8-inch propellers, 3S).

    Hub 0.12 kg (centre plate with the flight computer, radius 50 mm); four 13 g arms; four 46 g
    brushless motors with their controllers (radius 14 mm, 25 mm high, 12 g bell; 1000 rpm/V,
    0.2 Ohm, 0.4 A, 10 A: chosen); four 6 g propellers of 0.20 m (RotorPy's rotor radius
    0.10 m); a 0.12 kg 3S 1300 mAh battery 40 mm below the hub. ``c_t = 0.112``,
    ``c_p = 0.0861`` give RotorPy's ``k_eta`` and ``k_m``.
    """
    return Parts(
        hub=Hub(mass=0.12, radius=0.05, height=0.03),
        arm=Arm(mass=0.013, radius=0.006),
        motor=Motor(mass=0.046, radius=0.014, height=0.025, rotor_mass=0.012, kv=1000.0, resistance=0.2,
                    no_load_current=0.4, max_current=10.0),
        propeller=_propeller("hummingbird", 0.20, mass=0.006, pitch=0.11, chord=0.02, thickness=0.003),
        battery=Battery(mass=0.12, size=(0.1, 0.035, 0.025), offset=(0.0, 0.0, -0.04), cells=3, capacity_mah=1300.0,
                        internal_resistance=0.03),
    )


def hummingbird(parts: Parts | None = None) -> Platform:
    """AscTec Hummingbird (``CS_4R``) as RotorPy ships it: ``x_layout(4, 0.17)``.

    Published (spencerfolk/rotorpy ``rotorpy/vehicles/hummingbird_params.py``): ``m = 0.5 kg``,
    ``J = diag(3.65e-3, 3.68e-3, 7.03e-3) kg m^2``, arm 0.17 m, ``k_eta = 5.57e-6``,
    ``k_m = 1.36e-7``, ``rotor_speed_max = 1500 rad/s`` (given here). Derived from
    :func:`hummingbird_parts`: ``J = diag(3.633e-3, 3.721e-3, 7.064e-3)`` (-0.5 %, +1.1 %, +0.5 %);
    the motor model's own top speed is 821 rad/s (current-limited): 1500 rad/s would take
    0.3 N m and 460 W per rotor with RotorPy's ``k_m``.
    """
    return x_layout(4, 0.17, parts=hummingbird_parts() if parts is None else parts, rotor_speed_max=1500.0,
                    name="hummingbird")


#: Preset name -> builder, registered by :mod:`jaxrotor.design.presets`.
BUILDERS = {
    "paper_hexarotor_parts": paper_hexarotor_from_parts,
    "x500": x500,
    "f450": f450,
    "s550": s550,
    "x8": x8,
    "y6": y6,
    "crazyflie": crazyflie,
    "hummingbird": hummingbird,
}

#: Preset name -> one-line description.
DESCRIPTIONS = {
    "paper_hexarotor_parts": "RotorSuite Table II hexarotor built from its parts (3.5 kg, J^p within 0.4 %)",
    "x500": "Holybro X500-class quad-X from parts, PX4 Gazebo x500 (2.0 kg)",
    "f450": "DJI F450-class quad-X from parts, RflySim F450 model (1.4 kg)",
    "s550": "S550-class hexa-X from parts (1.8 kg, 275 mm arms)",
    "x8": "coaxial X8 from parts (4.5 kg, 350 mm arms, lower rotors 85 %)",
    "y6": "Y6 from parts (2.1 kg, 300 mm arms, lower rotors 85 %)",
    "crazyflie": "Crazyflie 2.0 from parts, Förster 2015 as in RotorPy (30 g)",
    "hummingbird": "AscTec Hummingbird from parts, as in RotorPy (0.5 kg)",
}
