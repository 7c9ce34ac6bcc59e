"""Components a design search chooses from: a motor catalogue, a propeller family, a battery family, arm tubes.

Used by :mod:`jaxrotor.optimize.codesign` (``jaxrotor design``): the motor is discrete (one entry
of :data:`MOTORS`), the propeller's diameter and pitch and the battery's capacity are continuous,
its cell count discrete. Everything is a pure JAX function of its arguments, so a gradient flows
from a flight back to the diameter, the pitch and the capacity.

**Motors** (:data:`MOTORS`): typical values of common outrunner classes (stator size and
``K_v``), not one vendor's data sheet: mass [kg], radius and height [m], spinning bell mass
[kg], ``K_v`` [rpm/V], winding resistance [Ohm], no-load current [A], current limit [A].

**Propellers** (:class:`PropellerFamily`): static coefficients (rev/s convention,
``T = c_t rho n^2 D^4``, ``P = c_p rho n^3 D^5``) from the pitch ratio ``r = pitch / D``:

    c_t = k_t r                                         (blade-element: lift ~ blade angle ~ pitch)
    c_p = c_p0 + kappa c_t^{3/2} / sqrt(pi / 2)         (profile + induced power)

``c_t^{3/2} / sqrt(pi/2)`` is momentum theory's ideal static power coefficient
(``P = T^{3/2} / sqrt(2 rho A)``, ``A = pi D^2 / 4``), ``kappa`` the induced-power factor and
``c_p0`` the profile power. Defaults ``k_t = 0.2444``, ``kappa = 1.15``, ``c_p0 = 0.01152`` give
``c_t = 0.110``, ``c_p = 0.045`` at ``r = 0.45`` (a 10x4.5 propeller, figure of merit 0.65).
Mass ``m = m_ref (D / D_ref)^3`` (geometric similarity), blade chord ``0.08 D``.

**Batteries** (:class:`BatteryFamily`): a Li-Po pack of ``cells`` in series and capacity
``C`` [mAh]: mass ``cells C s_m`` (``s_m`` [kg per cell-mAh]; the default 2.5e-5 is 148 Wh/kg at
3.7 V), internal resistance ``cells r_c / C`` (``r_c`` [Ohm mAh] per cell; default 25: a 4S
5000 mAh pack has 20 mOhm), largest continuous current ``c_rate C / 1000`` [A], and a box whose
extents scale as ``(m / m_ref)^{1/3}`` from a reference pack.

**Arm tubes** (:class:`ArmTubeFamily`): round tubes of one wall thickness ``t`` and material (density
``rho``, Young's modulus ``E``; defaults a carbon-fibre tube, 1 mm wall, 1550 kg/m^3, 70 GPa) by their outer
diameter ``D``: mass per metre ``rho pi (D t - t^2)`` (the annulus), second moment of area
``I = pi (D^4 - (D - 2 t)^4) / 64``, and the tip deflection of the arm as a cantilever of free length ``L``
(hub rim to rotor) under its rotor's full thrust ``F``: ``delta = F L^3 / (3 E I)`` (Euler--Bernoulli). A
thinner tube is lighter and bends more: the deflection over the length, ``delta / L``, is the design measure
``arm_deflection`` that keeps a light tube honest.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array

from .parts import Arm, Battery, Motor, Propeller

__all__ = ["MOTORS", "motor", "stack_motors", "take_motor", "PropellerFamily", "BatteryFamily", "ArmTubeFamily"]

#: The shipped motor catalogue: name -> :class:`~jaxrotor.design.parts.Motor` keyword arguments.
MOTORS: dict[str, dict[str, float]] = {
    "2212_920kv": dict(mass=0.056, radius=0.0140, height=0.026, rotor_mass=0.020, kv=920.0, resistance=0.117,
                       no_load_current=0.4, max_current=18.0),
    "2216_880kv": dict(mass=0.072, radius=0.0145, height=0.030, rotor_mass=0.025, kv=880.0, resistance=0.090,
                       no_load_current=0.5, max_current=25.0),
    "2814_700kv": dict(mass=0.105, radius=0.0175, height=0.032, rotor_mass=0.035, kv=700.0, resistance=0.070,
                       no_load_current=0.6, max_current=30.0),
    "3508_580kv": dict(mass=0.110, radius=0.0210, height=0.027, rotor_mass=0.040, kv=580.0, resistance=0.090,
                       no_load_current=0.5, max_current=28.0),
}


def _check_family(family, positive: tuple[str, ...], nonnegative: tuple[str, ...] = ()) -> None:
    """Refuse a non-finite family constant, or one ``<= 0`` (``positive``) or ``< 0`` (``nonnegative``), by name."""
    for name in (*positive, *nonnegative):
        v = getattr(family, name)
        need = "> 0" if name in positive else ">= 0"
        if not (math.isfinite(v) and (v > 0 if name in positive else v >= 0)):
            raise ValueError(f"{type(family).__name__} parameter `{name}` = {v!r} is invalid: it must be finite and "
                             f"{need}. Fix: give a number {need} (defaults in docs/design.md).")


def motor(name: str) -> Motor:
    """The catalogue motor ``name`` (:data:`MOTORS`) as a :class:`~jaxrotor.design.parts.Motor`.

    Raises:
        ValueError: ``name`` is not in the catalogue (the message lists it).
    """
    if name not in MOTORS:
        raise ValueError(f"motor catalogue: `{name}` is not a catalogue motor. Fix: use one of "
                         f"{', '.join(sorted(MOTORS))}.")
    return Motor(**MOTORS[name])


def stack_motors(names) -> Motor:
    """The motors ``names`` stacked into one :class:`Motor` whose leaves have a leading axis ``(k,)``."""
    motors = [motor(n) for n in names]
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *motors)


def take_motor(motors: Motor, index) -> Motor:
    """Entry ``index`` (an int or a traced integer) of stacked ``motors`` (:func:`stack_motors`)."""
    return jax.tree_util.tree_map(lambda a: a[index], motors)


class PropellerFamily(eqx.Module):
    """Propellers of one family: coefficients from the pitch ratio, mass from the diameter (module docstring).

    Attributes:
        c_t_per_pitch_ratio: ``k_t`` in ``c_t = k_t pitch / D``.
        induced_factor: ``kappa`` (>= 1), the induced power over momentum theory's ideal.
        profile_power: ``c_p0``, the profile power coefficient.
        mass_ref: mass [kg] of the family's propeller of diameter ``diameter_ref`` [m].
        diameter_ref: [m].
        thickness: blade thickness [m] (physics layer's blade boxes).
    """

    c_t_per_pitch_ratio: float = eqx.field(static=True, default=0.2444)
    induced_factor: float = eqx.field(static=True, default=1.15)
    profile_power: float = eqx.field(static=True, default=0.01152)
    mass_ref: float = eqx.field(static=True, default=0.015)
    diameter_ref: float = eqx.field(static=True, default=0.254)
    thickness: float = eqx.field(static=True, default=0.004)

    def __check_init__(self):
        _check_family(self, ("c_t_per_pitch_ratio", "induced_factor", "mass_ref", "diameter_ref", "thickness"),
                      ("profile_power",))

    def coefficients(self, diameter, pitch) -> tuple[Array, Array]:
        """``(c_t, c_p)`` of the propeller of ``diameter`` and ``pitch`` [m]."""
        c_t = self.c_t_per_pitch_ratio * pitch / diameter
        c_p = self.profile_power + self.induced_factor * c_t**1.5 / math.sqrt(math.pi / 2)
        return c_t, c_p

    def mass(self, diameter) -> Array:
        """``m_ref (D / D_ref)^3`` [kg]."""
        return self.mass_ref * (diameter / self.diameter_ref) ** 3

    def propeller(self, diameter, pitch) -> Propeller:
        """The :class:`~jaxrotor.design.parts.Propeller` of ``diameter`` and ``pitch`` (traceable)."""
        c_t, c_p = self.coefficients(diameter, pitch)
        return Propeller(diameter=diameter, pitch=pitch, mass=self.mass(diameter), c_t=c_t, c_p=c_p,
                         chord=0.08 * diameter, thickness=self.thickness)


class BatteryFamily(eqx.Module):
    """Li-Po packs of one family: mass, resistance, current limit and size from cells and capacity.

    Attributes:
        specific_mass: ``s_m`` [kg per cell and mAh].
        cell_resistance: ``r_c`` [Ohm mAh] per cell.
        c_rate: continuous discharge rating [1/h] (current limit ``c_rate C / 1000`` A).
        size_ref: ``(3,)`` extents [m] of a pack of mass ``mass_ref`` [kg].
        mass_ref: [kg].
    """

    specific_mass: float = eqx.field(static=True, default=2.5e-5)
    cell_resistance: float = eqx.field(static=True, default=25.0)
    c_rate: float = eqx.field(static=True, default=25.0)
    size_ref: tuple[float, float, float] = eqx.field(static=True, default=(0.14, 0.045, 0.035))
    mass_ref: float = eqx.field(static=True, default=0.5)

    def __check_init__(self):
        _check_family(self, ("specific_mass", "c_rate", "mass_ref"), ("cell_resistance",))

    def mass(self, capacity_mah, cells: int) -> Array:
        """``cells C s_m`` [kg]."""
        return cells * capacity_mah * self.specific_mass

    def max_current(self, capacity_mah) -> Array:
        """``c_rate C / 1000`` [A]."""
        return self.c_rate * capacity_mah / 1000.0

    def battery(self, capacity_mah, cells: int, like: Battery) -> Battery:
        """A pack of ``cells`` (static) and ``capacity_mah`` (traceable) shaped like ``like`` (its offset,
        open-circuit curve, ``soc0`` and ``soc_floor`` are kept)."""
        m = self.mass(capacity_mah, cells)
        scale = (m / self.mass_ref) ** (1.0 / 3.0)
        size = jnp.asarray(self.size_ref, dtype=jnp.result_type(m)) * scale
        return Battery(mass=m, size=size, offset=like.offset, cells=cells, capacity_mah=capacity_mah,
                       internal_resistance=cells * self.cell_resistance / capacity_mah, ocv=like.ocv,
                       soc0=like.soc0, soc_floor=like.soc_floor)


class ArmTubeFamily(eqx.Module):
    """Round arm tubes of one wall thickness and material, by outer diameter (module docstring).

    Attributes:
        wall: wall thickness ``t`` [m].
        density: material density ``rho`` [kg/m^3].
        modulus: Young's modulus ``E`` [Pa].
    """

    wall: float = eqx.field(static=True, default=0.001)
    density: float = eqx.field(static=True, default=1550.0)
    modulus: float = eqx.field(static=True, default=70e9)

    def __check_init__(self):
        _check_family(self, ("wall", "density", "modulus"))

    def mass_per_length(self, diameter) -> Array:
        """``rho pi (D t - t^2)`` [kg/m] of the tube of outer ``diameter`` ``D`` [m]."""
        t = self.wall
        return self.density * math.pi * (diameter * t - t**2)

    def second_moment(self, diameter) -> Array:
        """``I = pi (D^4 - (D - 2 t)^4) / 64`` [m^4]."""
        return math.pi * (diameter**4 - (diameter - 2 * self.wall) ** 4) / 64.0

    def deflection(self, diameter, free_length, force) -> Array:
        """Tip deflection over length ``delta / L = F L^2 / (3 E I)`` (dimensionless) of a cantilever of
        ``free_length`` ``L`` [m] loaded by ``force`` ``F`` [N] at its tip."""
        return force * free_length**2 / (3.0 * self.modulus * self.second_moment(diameter))

    def arm(self, diameter) -> Arm:
        """The :class:`~jaxrotor.design.parts.Arm` of outer ``diameter`` [m] (radius ``D / 2``, mass per metre)."""
        return Arm(radius=diameter / 2.0, mass_per_length=self.mass_per_length(diameter))
