"""A vehicle from its parts: mass, centre of mass, inertia, rotor inertia and propulsion, in JAX.

A :class:`Parts` pytree lists what a multirotor is made of. Every dimension and
mass is a JAX array leaf, so ``jax.grad`` flows from a flight, a hover power or
a thrust-to-weight ratio back to the arm length, the propeller diameter, the
battery mass or the payload offset. The same parts (same masses, same
dimensions) are what the physics layer's MJCF is built from
(:mod:`jaxrotor.physics.mjcf`), so the two layers fly one vehicle.

Shapes (SI units; positions in the body frame about the frame's *geometric
centre* ``O_G``, where the hub sits; the centre of mass follows from the parts):

==============  ==========================================================================
hub             solid cylinder about ``z_B`` centred at ``O_G`` (mass, radius, height)
arm             per arm, a solid cylinder of radius ``r_a`` from the hub's rim
                ``s = r_hub p/|p|`` to the arm's tip ``p`` (mass given, or
                ``mass_per_length`` x length)
motor           per rotor, a solid cylinder of its whole mass along ``z_i``, top face at
                the rotor hub ``p_i`` (centre ``p_i - h/2 z_i``); ``rotor_mass`` of it is
                the spinning bell, a thin-walled cylinder of the motor's radius
propeller       per rotor, two crossed thin rods of length ``D`` in the rotor plane at
                ``p_i``: ``m D^2/12`` about ``z_i``, ``m D^2/24`` about any axis in the plane
battery         solid box (``size`` = extents along ``x_B, y_B, z_B``) at ``offset``
payload         point mass at ``offset``
landing_gear    ``legs`` vertical solid cylinders (radius ``leg_radius``, ``length``) at
                ``radius`` from ``z_B``, azimuths ``pi/legs + 2 pi k/legs``, hanging from the
                hub's underside; massless spherical feet (the contacts)
ballast         solid box at ``offset`` (what :func:`fit_parts` adds to match a given
                mass and inertia)
==============  ==========================================================================

Mass properties (:func:`mass_properties`): with part masses ``m_k``, centres
``c_k`` and inertias ``I_k`` about their own centres,
``m = sum m_k``, ``c = sum m_k c_k / m``,
``J = sum_k [I_k + m_k (|c_k - c|^2 I_3 - (c_k - c)(c_k - c)^T)]`` (parallel axes).
Spin inertia of rotor ``i``: ``J_r = m_bell r_motor^2 + m_prop D^2 / 12``.

Propulsion (:func:`propulsion`), static coefficients ``T = c_t rho n^2 D^4``,
``P = c_p rho n^3 D^5`` (``n = omega / 2 pi`` in rev/s) give
``c_f = c_t rho D^4 / (4 pi^2)`` and ``c_tau = c_p rho D^5 / (8 pi^3)``
(``T = c_f omega^2``, ``Q = P/omega = c_tau omega^2``). Top speed at full throttle
on the battery's nominal voltage ``V = cells x 3.7 V``: the steady state of
``V = R I + omega / K_v`` with ``k_t (I - I_0) = c_tau omega^2``, ``k_t = 1/K_v``
(``K_v`` in rad/s/V), i.e.
``R K_v c_tau omega^2 + omega / K_v - (V - R I_0) = 0``, solved as
``omega_V = 2 (V - R I_0) / (1/K_v + sqrt(1/K_v^2 + 4 R K_v c_tau (V - R I_0)))``;
or, if lower, the speed where the current reaches ``max_current``:
``omega_I = sqrt((I_max - I_0) / (K_v c_tau))``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import ArrayLike, Float

from .._util import as_float as _float
from .validation import is_concrete, shown_value

__all__ = ["AIR_DENSITY", "CELL_VOLTAGE", "LIPO_SOC", "LIPO_CELL_VOLTS", "OCVCurve", "default_ocv_curve", "ESC", "Hub", "Arm", "Motor", "Propeller", "Battery", "Payload", "LandingGear",
           "Ballast", "Parts", "MassProperties", "Propulsion", "mass_properties", "propulsion",
           "rotor_speed_limit", "parts_error", "check_assembly", "RPM_PER_V_TO_RAD_PER_S_PER_V"]

#: Sea-level air density [kg/m^3] (ISA), the default of :attr:`Parts.air_density`.
AIR_DENSITY = 1.225
#: Nominal voltage of one Li-Po cell [V] (the top speed is computed on ``cells x CELL_VOLTAGE``).
CELL_VOLTAGE = 3.7
#: ``K_v`` [rpm/V] to [rad/s/V].
RPM_PER_V_TO_RAD_PER_S_PER_V = 2 * math.pi / 60


def parts_error(part: str, name: str, value, why: str, fix: str) -> ValueError:
    """``ValueError("Parts: `part.name` = value is invalid: why. Fix: fix.")``."""
    return ValueError(f"Parts: `{part}.{name}` = {shown_value(value)} is invalid: {why}. Fix: {fix}.")


def _check(part: str, obj, names, allow_zero=(), unit="m"):
    """Concrete values: finite and > 0 (>= 0 for ``allow_zero``)."""
    for name in names:
        v = getattr(obj, name)
        if v is None or not is_concrete(v):
            continue
        a = np.asarray(v, dtype=float)
        zero_ok = name in allow_zero
        bad = ~np.isfinite(a) | ((a < 0) if zero_ok else (a <= 0))
        if np.any(bad):
            need = ">= 0" if zero_ok else "> 0"
            u = "kg" if "mass" in name else unit
            raise parts_error(part, name, a, f"it must be finite and {need}", f"give `{part}.{name}` {need} in {u}")


def _vec3(x, part: str, name: str) -> Array:
    a = _float(x)
    if a.shape != (3,):
        raise parts_error(part, name, a, f"expected 3 numbers [x, y, z] (got shape {tuple(a.shape)})",
                          f"write `{name} = [x, y, z]` in metres")
    return a


#: State-of-charge points of the default Li-Po curve (0 to 1 in steps of 0.1).
LIPO_SOC = tuple(i / 10 for i in range(11))
#: Rest (open-circuit) voltage of one Li-Po cell [V] at :data:`LIPO_SOC`: the typical published
#: Li-Po discharge chart (rest voltage against remaining charge at room temperature, 3.27 V empty,
#: 4.20 V full; docs/energy.md).
LIPO_CELL_VOLTS = (3.27, 3.69, 3.73, 3.77, 3.80, 3.84, 3.87, 3.95, 4.02, 4.11, 4.20)


def _electrical_error(param: str, value, why: str, fix: str) -> ValueError:
    return ValueError(f"Electrical parameter `{param}` = {shown_value(value)} is invalid: {why}. Fix: {fix}.")


class OCVCurve(eqx.Module):
    """Open-circuit voltage of one cell against state of charge, linear between table points.

    ``ocv(s) = interp(s, soc, volts)`` (``jnp.interp``: piecewise linear, constant beyond the ends).
    The default (:func:`default_ocv_curve`) is the typical published Li-Po rest-voltage chart
    (:data:`LIPO_SOC`, :data:`LIPO_CELL_VOLTS`); such a curve comes from discharging a cell in
    steps and reading its voltage after it rests (no load). Temperature is out of scope.

    Attributes:
        soc: ``(k,)`` states of charge, strictly increasing in ``[0, 1]``, ``k >= 2``.
        volts: ``(k,)`` cell open-circuit voltages [V] (> 0).
    """

    soc: Float[Array, " k"]
    volts: Float[Array, " k"]

    def __init__(self, soc: ArrayLike, volts: ArrayLike):
        s = jnp.asarray(soc, dtype=jnp.result_type(float))
        v = jnp.asarray(volts, dtype=jnp.result_type(float))
        if s.ndim != 1 or s.shape[0] < 2:
            raise _electrical_error("ocv_soc", s, "the table needs at least 2 states of charge in a 1-D list",
                       "give e.g. ocv_soc = [0.0, 1.0] and ocv_volts = [3.5, 4.2]")
        if v.shape != s.shape:
            raise _electrical_error("ocv_volts", v, f"it has {v.size} values for {s.shape[0]} states of charge",
                       "give one cell voltage per entry of ocv_soc")
        if is_concrete(s, v):
            sn, vn = np.asarray(s), np.asarray(v)
            if not np.all(np.isfinite(sn)) or sn.min() < 0 or sn.max() > 1:
                raise _electrical_error("ocv_soc", sn, "states of charge lie in [0, 1]", "give fractions, e.g. 0.5 for 50 %")
            if np.any(np.diff(sn) <= 0):
                raise _electrical_error("ocv_soc", sn, "the states of charge must be strictly increasing",
                           "sort the table by state of charge and drop repeated points")
            if not np.all(np.isfinite(vn)) or np.any(vn <= 0):
                raise _electrical_error("ocv_volts", vn, "cell voltages must be finite and > 0",
                           "give the rest voltage of one cell in volts, e.g. 3.7")
        self.soc, self.volts = s, v

    def __call__(self, soc: ArrayLike) -> Array:
        """Cell open-circuit voltage [V] at ``soc`` (any shape), in the dtype of ``soc``."""
        s = jnp.asarray(soc)
        dt = jnp.result_type(s, jnp.float32) if not jnp.issubdtype(s.dtype, jnp.floating) else s.dtype
        s = s.astype(dt)
        return jnp.interp(s, self.soc.astype(dt), self.volts.astype(dt))


def default_ocv_curve() -> OCVCurve:
    """The default Li-Po cell curve (:data:`LIPO_SOC`, :data:`LIPO_CELL_VOLTS`): 3.27 V at 0 % to 4.20 V at 100 %."""
    return OCVCurve(LIPO_SOC, LIPO_CELL_VOLTS)


class ESC(eqx.Module):
    """Electronic speed controller: a constant efficiency ``eta`` between battery and motor power.

    Driving, ``P_battery = V_m I / eta``; braking (``V_m I < 0``), ``P_battery = eta V_m I``: either way
    the loss ``(1/eta - 1) |V_m I|`` (driving) is heat in the ESC (:mod:`jaxrotor.electrical`).

    Attributes:
        efficiency: ``()`` ``eta`` in ``(0, 1]`` (default 0.95).
    """

    efficiency: Float[Array, ""]

    def __init__(self, efficiency=0.95):
        e = _float(efficiency)
        if e.ndim != 0:
            raise _electrical_error("esc.efficiency", e, "one efficiency for all ESCs", "give one number, e.g. 0.95")
        if is_concrete(e) and not (0.0 < float(e) <= 1.0):
            raise _electrical_error("esc.efficiency", e, "an efficiency lies in (0, 1]", "give e.g. efficiency = 0.95")
        self.efficiency = e


class Hub(eqx.Module):
    """Central body: a solid cylinder about ``z_B`` at the geometric centre.

    Attributes:
        mass: ``()`` [kg] (> 0). radius: ``()`` [m] (> 0). height: ``()`` [m] (> 0).
    """

    mass: Float[Array, ""]
    radius: Float[Array, ""]
    height: Float[Array, ""]

    def __init__(self, mass=1.0, radius=0.1, height=0.05):
        self.mass, self.radius, self.height = _float(mass), _float(radius), _float(height)
        _check("hub", self, ("mass", "radius", "height"))


class Arm(eqx.Module):
    """One arm (per arm of the layout): a solid cylinder from the hub's rim to the arm's tip.

    Attributes:
        radius: ``()`` tube radius [m] (> 0).
        mass: ``()`` mass of one arm [kg] (>= 0), or ``None`` to use ``mass_per_length``.
        mass_per_length: ``()`` [kg/m] (>= 0): the arm's mass is ``mass_per_length`` x its length
            (so it follows the arm length). Exactly one of ``mass`` / ``mass_per_length``.
    """

    radius: Float[Array, ""]
    mass: Float[Array, ""] | None
    mass_per_length: Float[Array, ""] | None

    def __init__(self, mass=None, radius=0.01, mass_per_length=None):
        if (mass is None) == (mass_per_length is None):
            raise ValueError(f"Parts: `arm` gives mass = {mass!r} and mass_per_length = {mass_per_length!r}: exactly "
                             "one is needed. Fix: give the mass of one arm [kg] or its mass per metre [kg/m].")
        self.radius = _float(radius)
        self.mass = None if mass is None else _float(mass)
        self.mass_per_length = None if mass_per_length is None else _float(mass_per_length)
        _check("arm", self, ("radius", "mass", "mass_per_length"), allow_zero=("mass", "mass_per_length"))

    def mass_of(self, length: Array) -> Array:
        """Mass of an arm of ``length`` [m]: ``mass``, or ``mass_per_length * length`` [kg]."""
        return self.mass_per_length * length if self.mass is None else jnp.broadcast_to(self.mass, jnp.shape(length))


class Motor(eqx.Module):
    """One motor per rotor: a solid cylinder along ``z_i`` whose top face is at the rotor hub.

    Attributes:
        mass: ``()`` whole motor [kg] (>= 0). radius: ``()`` [m]. height: ``()`` [m].
        rotor_mass: ``()`` spinning bell [kg], part of ``mass`` (a thin-walled cylinder of the motor's
            radius: spin inertia ``rotor_mass radius^2``).
        kv: ``()`` speed constant ``K_v`` [rpm/V], or ``None`` (then the top speed must be given).
        resistance: ``()`` winding resistance ``R`` [Ohm] (>= 0).
        no_load_current: ``()`` ``I_0`` [A] (>= 0).
        max_current: ``()`` current limit [A] (> ``I_0``; ``inf`` for none).
    """

    mass: Float[Array, ""]
    radius: Float[Array, ""]
    height: Float[Array, ""]
    rotor_mass: Float[Array, ""]
    kv: Float[Array, ""] | None
    resistance: Float[Array, ""]
    no_load_current: Float[Array, ""]
    max_current: Float[Array, ""]

    def __init__(self, mass=0.1, radius=0.02, height=0.03, rotor_mass=0.0, kv=None, resistance=0.0,
                 no_load_current=0.0, max_current=math.inf):
        self.mass, self.radius, self.height = _float(mass), _float(radius), _float(height)
        self.rotor_mass = _float(rotor_mass)
        self.kv = None if kv is None else _float(kv)
        self.resistance, self.no_load_current = _float(resistance), _float(no_load_current)
        self.max_current = _float(max_current)
        _check("motor", self, ("mass", "radius", "height", "rotor_mass", "kv", "resistance", "no_load_current"),
               allow_zero=("mass", "rotor_mass", "resistance", "no_load_current"))
        if is_concrete(self.mass, self.rotor_mass) and float(self.rotor_mass) > float(self.mass):
            raise parts_error("motor", "rotor_mass", self.rotor_mass, f"the bell is part of the motor's mass "
                              f"{float(self.mass)} kg", "give rotor_mass <= mass")
        if is_concrete(self.max_current, self.no_load_current) and not (
                float(self.max_current) > float(self.no_load_current)):
            raise parts_error("motor", "max_current", self.max_current, "the current limit must exceed the no-load "
                              f"current {float(self.no_load_current)} A", "give max_current > no_load_current (A)")

    @property
    def kv_si(self) -> Array:
        """``K_v`` in rad/s/V (``kv`` [rpm/V] x ``2 pi / 60``)."""
        return self.kv * RPM_PER_V_TO_RAD_PER_S_PER_V


class Propeller(eqx.Module):
    """One propeller per rotor (static thrust and power coefficients, rev/s convention).

    Attributes:
        diameter: ``()`` ``D`` [m] (> 0). pitch: ``()`` [m] (> 0; recorded, used by aerodynamics).
        mass: ``()`` [kg] (> 0). c_t: ``()`` thrust coefficient (``T = c_t rho n^2 D^4``).
        c_p: ``()`` power coefficient (``P = c_p rho n^3 D^5``), ``n`` in rev/s.
        chord, thickness: ``()`` blade width and thickness [m], for the physics layer's blade boxes
            (its inertia differs from the thin rods by ``(chord / D)^2``).
    """

    diameter: Float[Array, ""]
    pitch: Float[Array, ""]
    mass: Float[Array, ""]
    c_t: Float[Array, ""]
    c_p: Float[Array, ""]
    chord: Float[Array, ""]
    thickness: Float[Array, ""]

    def __init__(self, diameter=0.254, mass=0.015, c_t=0.11, c_p=0.045, pitch=0.114, chord=None, thickness=0.004):
        self.diameter, self.pitch, self.mass = _float(diameter), _float(pitch), _float(mass)
        self.c_t, self.c_p = _float(c_t), _float(c_p)
        self.chord = 0.08 * self.diameter if chord is None else _float(chord)
        self.thickness = _float(thickness)
        _check("propeller", self, ("diameter", "pitch", "mass", "c_t", "c_p", "chord", "thickness"))


class Battery(eqx.Module):
    """The battery: a solid box, and a pack of ``cells`` in series.

    Electrically (:mod:`jaxrotor.electrical`): open-circuit voltage ``cells x ocv(SoC)`` from the
    per-cell curve ``ocv`` (default :func:`default_ocv_curve`), internal resistance ``R_int``
    (terminal voltage ``V = OCV - R_int I``), capacity ``Q = 3.6 capacity_mah`` [A s]; a flight
    starts at ``soc0`` and endurance counts down to ``soc_floor``. Temperature is out of scope.

    Attributes:
        mass: ``()`` [kg] (> 0). size: ``(3,)`` extents along ``x_B, y_B, z_B`` [m] (> 0).
        offset: ``(3,)`` centre relative to the geometric centre [m].
        cells: static series cell count (nominal ``cells x 3.7 V``).
        capacity_mah: ``()`` [mAh] (> 0). internal_resistance: ``()`` [Ohm] (>= 0).
        ocv: the per-cell :class:`OCVCurve` (from ``ocv_soc``, ``ocv_volts`` or a given curve).
        soc0: ``()`` state of charge at the start of a flight, in ``(0, 1]`` (default 1).
        soc_floor: ``()`` state of charge that ends the usable discharge, in ``[0, soc0)`` (default 0.2).
    """

    mass: Float[Array, ""]
    size: Float[Array, "3"]
    offset: Float[Array, "3"]
    capacity_mah: Float[Array, ""]
    internal_resistance: Float[Array, ""]
    ocv: OCVCurve
    soc0: Float[Array, ""]
    soc_floor: Float[Array, ""]
    cells: int = eqx.field(static=True)

    def __init__(self, mass=0.5, size=(0.14, 0.045, 0.035), offset=(0.0, 0.0, 0.0), cells=4, capacity_mah=5000.0,
                 internal_resistance=0.02, ocv: OCVCurve | None = None, ocv_soc=None, ocv_volts=None, soc0=1.0,
                 soc_floor=0.2):
        if isinstance(cells, bool) or int(cells) != cells or int(cells) < 1:
            raise parts_error("battery", "cells", cells, "the series cell count is a whole number >= 1",
                              "give e.g. cells = 4 (a 4S pack)")
        self.cells = int(cells)
        self.mass = _float(mass)
        self.size, self.offset = _vec3(size, "battery", "size"), _vec3(offset, "battery", "offset")
        self.capacity_mah, self.internal_resistance = _float(capacity_mah), _float(internal_resistance)
        _check("battery", self, ("mass", "size", "capacity_mah", "internal_resistance"),
               allow_zero=("internal_resistance",))
        if (ocv_soc is None) != (ocv_volts is None):
            given, missing = ("ocv_soc", "ocv_volts") if ocv_volts is None else ("ocv_volts", "ocv_soc")
            raise parts_error("battery", missing, None, f"`{given}` is given without it (the curve is a table of "
                              "both)", "give ocv_soc = [...] (states of charge) and ocv_volts = [...] (one cell's "
                              "rest voltage at each), or neither for the default Li-Po curve")
        if ocv is not None and ocv_soc is not None:
            raise parts_error("battery", "ocv", ocv, "a curve is given twice (ocv and ocv_soc/ocv_volts)",
                              "give one of them")
        self.ocv = OCVCurve(ocv_soc, ocv_volts) if ocv_soc is not None else ocv if ocv is not None \
            else default_ocv_curve()
        self.soc0, self.soc_floor = _float(soc0), _float(soc_floor)
        if is_concrete(self.soc0) and not (0.0 < float(self.soc0) <= 1.0):
            raise parts_error("battery", "soc0", self.soc0, "a state of charge lies in (0, 1]",
                              "give the charge at take-off as a fraction, e.g. soc0 = 1.0 (full)")
        if is_concrete(self.soc0, self.soc_floor) and not (0.0 <= float(self.soc_floor) < float(self.soc0)):
            raise parts_error("battery", "soc_floor", self.soc_floor, f"the floor lies in [0, soc0 = "
                              f"{float(self.soc0)})", "give e.g. soc_floor = 0.2 (land at 20 %)")

    @property
    def nominal_voltage(self) -> Array:
        """``cells x 3.7 V`` [V]."""
        return self.cells * CELL_VOLTAGE * jnp.ones_like(self.mass)


class Payload(eqx.Module):
    """A point mass at ``offset`` (relative to the geometric centre).

    Attributes:
        mass: ``()`` [kg] (>= 0). offset: ``(3,)`` [m].
    """

    mass: Float[Array, ""]
    offset: Float[Array, "3"]

    def __init__(self, mass=0.0, offset=(0.0, 0.0, 0.0)):
        self.mass, self.offset = _float(mass), _vec3(offset, "payload", "offset")
        _check("payload", self, ("mass",), allow_zero=("mass",))


class Ballast(eqx.Module):
    """A solid box of extra mass (body-aligned) at ``offset``; :func:`fit_parts` sizes it.

    Attributes:
        mass: ``()`` [kg] (>= 0). size: ``(3,)`` extents [m] (>= 0). offset: ``(3,)`` [m].
    """

    mass: Float[Array, ""]
    size: Float[Array, "3"]
    offset: Float[Array, "3"]

    def __init__(self, mass=0.0, size=(0.0, 0.0, 0.0), offset=(0.0, 0.0, 0.0)):
        self.mass = _float(mass)
        self.size, self.offset = _vec3(size, "ballast", "size"), _vec3(offset, "ballast", "offset")
        _check("ballast", self, ("mass", "size"), allow_zero=("mass", "size"))


class LandingGear(eqx.Module):
    """Landing gear: ``legs`` vertical solid cylinders hanging from the hub's underside, spherical feet.

    Attributes:
        mass: ``()`` mass of one leg [kg] (>= 0; the feet are massless contact spheres).
        legs: static leg count (>= 3 to stand).
        radius: ``()`` distance of each leg from ``z_B`` [m]; azimuths ``pi/legs + 2 pi k/legs``.
        length: ``()`` leg length below the hub's underside [m].
        leg_radius: ``()`` [m]. foot_radius: ``()`` [m].
    """

    mass: Float[Array, ""]
    radius: Float[Array, ""]
    length: Float[Array, ""]
    leg_radius: Float[Array, ""]
    foot_radius: Float[Array, ""]
    legs: int = eqx.field(static=True)

    def __init__(self, mass=0.05, legs=4, radius=0.12, length=0.15, leg_radius=0.006, foot_radius=0.01):
        if isinstance(legs, bool) or int(legs) != legs or int(legs) < 3:
            raise parts_error("landing_gear", "legs", legs, "a vehicle needs at least 3 legs to stand",
                              "give legs >= 3")
        self.legs = int(legs)
        self.mass, self.radius, self.length = _float(mass), _float(radius), _float(length)
        self.leg_radius, self.foot_radius = _float(leg_radius), _float(foot_radius)
        _check("landing_gear", self, ("mass", "radius", "length", "leg_radius", "foot_radius"), allow_zero=("mass",))


class Parts(eqx.Module):
    """The components of a multirotor: one hub, and per rotor one motor and one propeller, per arm one arm.

    Every rotor has the same motor and propeller; optional parts are ``None``.

    Attributes:
        hub, arm, motor, propeller: required parts.
        battery, payload, landing_gear, ballast: optional parts (``None``: absent).
        esc: the speed controllers' :class:`ESC` (``None``: ``ESC()``, 95 % efficient).
        air_density: ``()`` ``rho`` [kg/m^3] for the propulsion coefficients (default 1.225).
    """

    hub: Hub
    arm: Arm
    motor: Motor
    propeller: Propeller
    battery: Battery | None = None
    payload: Payload | None = None
    landing_gear: LandingGear | None = None
    ballast: Ballast | None = None
    esc: ESC | None = None
    air_density: Float[Array, ""] = eqx.field(default=AIR_DENSITY, converter=_float)


# --------------------------------------------------------------------------- shapes


def _cylinder(m, r, h, axis):
    """Inertia of a solid cylinder about its centre: ``m r^2/2`` about ``axis``, ``m (3 r^2 + h^2)/12`` across.

    ``m``, ``r``, ``h`` broadcast against the leading axes of ``axis`` (``(..., 3)``); returns ``(..., 3, 3)``."""
    zz = axis[..., :, None] * axis[..., None, :]
    m, r, h = (jnp.asarray(x)[..., None, None] for x in (m, r, h))
    return m * r**2 / 2 * zz + m * (3 * r**2 + h**2) / 12 * (jnp.eye(3) - zz)


def _box(m, size):
    a, b, c = size[0] ** 2, size[1] ** 2, size[2] ** 2
    return m / 12 * jnp.diag(jnp.stack([b + c, a + c, a + b]))


def _rods(m, D, axis):
    """Two crossed thin rods of length ``D`` in the plane normal to ``axis``."""
    zz = axis[..., :, None] * axis[..., None, :]
    return m * D**2 / 12 * zz + m * D**2 / 24 * (jnp.eye(3) - zz)


class MassProperties(NamedTuple):
    """What :func:`mass_properties` derives.

    Attributes:
        mass: ``()`` total [kg].
        com: ``(3,)`` centre of mass relative to the geometric centre [m].
        inertia: ``(3, 3)`` about the centre of mass, body axes [kg m^2].
        rotor_inertia: ``(n,)`` spin inertia ``J_r`` of each rotor (bell + propeller) [kg m^2].
        breakdown: part name -> ``()`` mass of all parts of that kind [kg].
    """

    mass: Array
    com: Array
    inertia: Array
    rotor_inertia: Array
    breakdown: dict


def _arm_tips(positions, arms):
    if not arms:
        return positions
    return jnp.stack([jnp.mean(positions[jnp.asarray(idx)], axis=0) for idx in arms])


def mass_properties(parts: Parts, positions: Float[Array, "n 3"], axes: Float[Array, "n 3"],
                    arms: tuple[tuple[int, ...], ...] = ()) -> MassProperties:
    """Mass, centre of mass, inertia and rotor inertia of ``parts`` carrying rotors at ``positions``.

    Args:
        parts: the components.
        positions: ``(n, 3)`` rotor hubs about the geometric centre [m].
        axes: ``(n, 3)`` unit spin axes.
        arms: static groups of rotor indices sharing one arm (a coaxial pair); each arm ends at the
            mean of its rotors' hubs. Empty: one arm per rotor.

    Returns:
        :class:`MassProperties` (formulas in the module docstring).
    """
    pos, z = _float(positions), _float(axes)
    hub, arm, mot, prop = parts.hub, parts.arm, parts.motor, parts.propeller
    items = []  # (name, mass (k,), centres (k, 3), inertias (k, 3, 3))
    e3 = jnp.array([0.0, 0.0, 1.0], dtype=pos.dtype)
    items.append(("hub", hub.mass[None], jnp.zeros((1, 3), pos.dtype), _cylinder(hub.mass, hub.radius, hub.height, e3)[None]))
    tips = _arm_tips(pos, arms)
    dist = jnp.linalg.norm(tips, axis=1)
    d = tips / dist[:, None]
    length = dist - hub.radius
    m_arm = arm.mass_of(length)
    centre = d * (hub.radius + dist)[:, None] / 2
    J_arm = _cylinder(m_arm, arm.radius, length, d)
    items.append(("arms", m_arm, centre, J_arm))
    n = pos.shape[0]
    m_mot = jnp.broadcast_to(mot.mass, (n,))
    items.append(("motors", m_mot, pos - mot.height / 2 * z,
                  _cylinder(mot.mass, mot.radius, mot.height, z)))
    items.append(("propellers", jnp.broadcast_to(prop.mass, (n,)), pos, _rods(prop.mass, prop.diameter, z)))
    if parts.battery is not None:
        b = parts.battery
        items.append(("battery", b.mass[None], b.offset[None], _box(b.mass, b.size)[None]))
    if parts.payload is not None:
        items.append(("payload", parts.payload.mass[None], parts.payload.offset[None], jnp.zeros((1, 3, 3), pos.dtype)))
    if parts.landing_gear is not None:
        g = parts.landing_gear
        az = jnp.asarray([math.pi / g.legs + 2 * math.pi * k / g.legs for k in range(g.legs)], dtype=pos.dtype)
        zc = -hub.height / 2 - g.length / 2
        c = jnp.stack([g.radius * jnp.cos(az), g.radius * jnp.sin(az), jnp.broadcast_to(zc, az.shape)], axis=1)
        J_leg = _cylinder(g.mass, g.leg_radius, g.length, e3)
        items.append(("landing_gear", jnp.broadcast_to(g.mass, (g.legs,)), c, jnp.broadcast_to(J_leg, (g.legs, 3, 3))))
    if parts.ballast is not None:
        bl = parts.ballast
        items.append(("ballast", bl.mass[None], bl.offset[None], _box(bl.mass, bl.size)[None]))
    masses = jnp.concatenate([m for _, m, _, _ in items])
    centres = jnp.concatenate([c for _, _, c, _ in items])
    inertias = jnp.concatenate([J for _, _, _, J in items])
    total = jnp.sum(masses)
    com = masses @ centres / total
    r = centres - com
    shift = masses[:, None, None] * (jnp.sum(r**2, axis=1)[:, None, None] * jnp.eye(3, dtype=pos.dtype)
                                      - r[:, :, None] * r[:, None, :])
    J = jnp.sum(inertias + shift, axis=0)
    J = (J + J.T) / 2
    J_r = jnp.broadcast_to(mot.rotor_mass * mot.radius**2 + prop.mass * prop.diameter**2 / 12, (n,))
    breakdown = {name: jnp.sum(m) for name, m, _, _ in items}
    return MassProperties(mass=total, com=com, inertia=J, rotor_inertia=J_r, breakdown=breakdown)


# --------------------------------------------------------------------------- propulsion


class Propulsion(NamedTuple):
    """What :func:`propulsion` derives (per rotor, before any coaxial efficiency).

    Attributes:
        c_f: ``()`` [N s^2/rad^2]. c_tau: ``()`` [N m s^2/rad^2].
        rotor_speed_max: ``()`` [rad/s] (``inf`` without a motor ``kv`` or a battery).
        voltage_limited_speed: ``()`` ``omega_V`` [rad/s]. current_limited_speed: ``()`` ``omega_I`` [rad/s].
    """

    c_f: Array
    c_tau: Array
    rotor_speed_max: Array
    voltage_limited_speed: Array
    current_limited_speed: Array


def rotor_speed_limit(motor: Motor, voltage, c_tau) -> tuple[Array, Array, Array]:
    """Top rotor speed ``(omega_max, omega_V, omega_I)`` [rad/s] of ``motor`` at ``voltage`` [V] with drag ``c_tau``.

    ``omega_V`` solves ``R K_v c_tau omega^2 + omega/K_v = V - R I_0`` (steady state of
    ``V = R I + omega/K_v``, ``k_t (I - I_0) = c_tau omega^2``, ``k_t = 1/K_v``);
    ``omega_I = sqrt((I_max - I_0)/(K_v c_tau))``; ``omega_max = min(omega_V, omega_I)``.
    """
    kv = motor.kv_si
    head = voltage - motor.resistance * motor.no_load_current
    w_v = 2 * head / (1 / kv + jnp.sqrt(1 / kv**2 + 4 * motor.resistance * kv * c_tau * head))
    w_i = jnp.sqrt((motor.max_current - motor.no_load_current) / (kv * c_tau))
    return jnp.minimum(w_v, w_i), w_v, w_i


def propulsion(parts: Parts, c_tau: Array | None = None) -> Propulsion:
    """Thrust and drag coefficients and the top rotor speed from the propeller, motor and battery.

    Args:
        parts: the components (``air_density`` ``rho``).
        c_tau: the drag coefficient the top speed is computed with; ``None``: the derived one.

    Returns:
        :class:`Propulsion` (formulas in the module docstring).
    """
    prop, rho = parts.propeller, parts.air_density
    c_f = prop.c_t * rho * prop.diameter**4 / (4 * math.pi**2)
    c_q = prop.c_p * rho * prop.diameter**5 / (8 * math.pi**3)
    inf = jnp.full_like(c_f, jnp.inf)
    if parts.motor.kv is None or parts.battery is None:
        return Propulsion(c_f, c_q, inf, inf, inf)
    w, w_v, w_i = rotor_speed_limit(parts.motor, parts.battery.nominal_voltage, c_q if c_tau is None else c_tau)
    return Propulsion(c_f, c_q, w, w_v, w_i)


# --------------------------------------------------------------------------- assembly checks


def _disc_distance(c1, n1, R1, c2, n2, R2, samples: int = 48, rings: int = 12) -> float:
    """Smallest distance between two discs (centre, unit normal, radius) in 3-D [m], by sampling disc 2.

    The distance of a point to disc 1 splits into its height ``h`` above the disc's plane and
    its radial distance ``rho`` from the axis: ``|h|`` inside the rim, ``sqrt(h^2 + (rho - R)^2)``
    outside. Sampling disc 2 (``rings`` x ``samples`` points, rim included) bounds the true
    minimum from above by at most the sampling pitch.
    """
    n2 = n2 / np.linalg.norm(n2)
    a = np.cross(n2, [1.0, 0.0, 0.0] if abs(n2[0]) < 0.9 else [0.0, 1.0, 0.0])
    a /= np.linalg.norm(a)
    b = np.cross(n2, a)
    r = R2 * np.linspace(0.0, 1.0, rings)[:, None]
    t = np.linspace(0.0, 2 * np.pi, samples, endpoint=False)[None, :]
    pts = c2 + (r * np.cos(t))[..., None] * a + (r * np.sin(t))[..., None] * b
    d = pts.reshape(-1, 3) - c1
    h = d @ n1
    rho = np.linalg.norm(d - h[:, None] * n1, axis=1)
    dist = np.where(rho <= R1, np.abs(h), np.hypot(h, np.maximum(rho - R1, 0.0)))
    return float(dist.min())


def check_assembly(parts: Parts, positions, axes, mass, c_f, rotor_speed_max, gravity, name: str = "vehicle") -> None:
    """Refuse an assembly that cannot be built or cannot fly, before anything is compiled.

    Checks (concrete values):

    * propeller discs (diameter ``D`` at each hub, normal ``z_i``) that touch or cross, tilted
      and coaxial ones included: the discs' smallest distance (:func:`_disc_distance`) must
      exceed 0.5 % of ``D``; the message names the pair and the overlap ``D - |p_i - p_j|``
      of their centres projected on the first disc's plane;
    * a hub radius reaching the rotors (arm length <= 0);
    * a motor that cannot lift the vehicle: ``sum_i c_f,i omega_max,i^2 < m g``;
    * a battery or payload offset outside the frame: farther from ``z_B`` than the farthest
      rotor hub, or farther above/below the hub than the frame's span.

    Args:
        parts: the components. positions: ``(n, 3)`` hubs about the geometric centre [m].
        axes: ``(n, 3)`` unit spin axes. mass: [kg]. c_f: ``(n,)``. rotor_speed_max: ``(n,)`` [rad/s].
        gravity: [m/s^2]. name: the vehicle, quoted in messages.

    Raises:
        ValueError: naming the part, the value and the fix.
    """
    pos = np.asarray(positions, dtype=float)
    z = np.asarray(axes, dtype=float)
    D = float(parts.propeller.diameter)
    R = D / 2
    n = len(pos)
    r_hub = float(parts.hub.radius)
    reach = np.linalg.norm(pos, axis=1)
    if np.any(reach <= r_hub):
        i = int(reach.argmin())
        raise parts_error("hub", "radius", r_hub, f"it reaches beyond rotor {i + 1} at {reach[i]:.4g} m from the "
                          f"centre of {name}: the arm would have no length",
                          f"use a hub radius < {reach[i]:.4g} m or longer arms")
    for i in range(n):
        for j in range(i + 1, n):
            gap = _disc_distance(pos[i], z[i], R, pos[j], z[j], R)
            if gap <= 5e-3 * D:
                d = pos[j] - pos[i]
                lateral = float(np.linalg.norm(d - (d @ z[i]) * z[i]))
                raise parts_error("propeller", "diameter", D, f"the propeller discs of rotors {i + 1} and {j + 1} of "
                                  f"{name} overlap by {D - lateral:.4g} m (hubs {lateral:.4g} m apart across the disc, "
                                  f"{abs(float(d @ z[i])):.4g} m along the axis)",
                                  f"use a diameter < {lateral:.4g} m, longer arms, or separate the pair along its "
                                  "axis (coaxial)")
    thrust = float(np.sum(np.asarray(c_f, dtype=float) * np.asarray(rotor_speed_max, dtype=float) ** 2))
    weight = float(mass) * float(gravity)
    if np.isfinite(thrust) and thrust < weight:
        raise parts_error("motor", "kv", None if parts.motor.kv is None else float(parts.motor.kv),
                          f"at top speed the rotors of {name} give {thrust:.4g} N for a weight of {weight:.4g} N "
                          f"(thrust-to-weight {thrust / weight:.3f} < 1)",
                          "use a higher-kv motor, more cells, a larger propeller or a lighter build")
    span_r = float(np.max(np.linalg.norm(pos[:, :2], axis=1)))
    span_z = max(float(np.max(np.abs(pos[:, 2]))), float(parts.hub.height) / 2, span_r / 2)
    if parts.landing_gear is not None:
        span_z = max(span_z, float(parts.hub.height) / 2 + float(parts.landing_gear.length))
    for part, obj in (("battery", parts.battery), ("payload", parts.payload)):
        if obj is None:
            continue
        off = np.asarray(obj.offset, dtype=float)
        if np.linalg.norm(off[:2]) > span_r or abs(off[2]) > span_z:
            raise parts_error(part, "offset", off, f"it lies outside the frame of {name} (rotor hubs within "
                              f"{span_r:.4g} m of z_B, frame within +-{span_z:.4g} m in height)",
                              f"place the {part} within the frame: |[x, y]| <= {span_r:.4g} m and "
                              f"|z| <= {span_z:.4g} m")
