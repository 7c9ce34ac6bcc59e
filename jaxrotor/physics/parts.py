"""The parts a multirotor is made of: what the physics layer builds its multibody model from.

A :class:`Parts` description gives the mass and the shape of each component
(hub, arms, motors, propellers, landing gear). Together with a
:class:`~jaxrotor.design.platform.Platform` (where each rotor sits and points,
eqs. 3-4) it is everything :func:`jaxrotor.physics.mjcf.build_model` needs;
mass and inertia then come from the engine's own computation over these shapes
(uniform density per part), never from the platform's ``mass`` / ``inertia``.

Shapes (all SI units, metres and kilograms):

* hub: a solid cylinder about ``z_B`` (radius, height);
* arm: a capsule from the hub's rim to each rotor hub ``p_i`` (radius);
* motor: a solid cylinder about the spin axis ``z_i`` just below the hub point;
* propeller: two crossed thin bars (the blades) centred at ``p_i``, its own body
  on a hinge about ``z_i`` (it spins; its angular momentum is the engine's);
* landing gear: ``legs`` vertical capsules at ``radius`` from ``z_B`` ending in
  spherical feet (the only parts that touch the floor).

:func:`paper_hexarotor_parts` is the Table II hexarotor: ``m = 3.5 kg`` and,
from the engine's computation, ``J^p ~ diag(0.081, 0.081, 0.162) kg m^2``;
:func:`default_parts` gives any other platform a generic build of its mass.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = ["Arm", "Hub", "LandingGear", "Motor", "Parts", "Propeller", "check_parts", "default_parts",
           "paper_hexarotor_parts"]


def _positive(part: str, name: str, value: float, fix: str, allow_zero: bool = False) -> None:
    v = float(value)
    ok = math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        need = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"Parts: `{part}.{name}` = {value!r} is invalid: it must be finite and {need}. Fix: {fix}.")


@dataclasses.dataclass(frozen=True)
class Hub:
    """Central body: a solid cylinder about ``z_B``.

    Attributes:
        mass: [kg]. radius: [m]. height: [m].
    """

    mass: float = 1.0
    radius: float = 0.1
    height: float = 0.05

    def __post_init__(self):
        _positive("hub", "mass", self.mass, "give the hub (frame, battery, electronics) a positive mass in kg")
        _positive("hub", "radius", self.radius, "give a positive hub radius in metres")
        _positive("hub", "height", self.height, "give a positive hub height in metres")


@dataclasses.dataclass(frozen=True)
class Arm:
    """One arm (there is one per rotor): a capsule from the hub rim to the rotor hub ``p_i``.

    Attributes:
        mass: mass of one arm [kg] (>= 0). radius: tube radius [m].
    """

    mass: float = 0.05
    radius: float = 0.01

    def __post_init__(self):
        _positive("arm", "mass", self.mass, "give each arm a mass >= 0 kg", allow_zero=True)
        _positive("arm", "radius", self.radius, "give a positive arm tube radius in metres")


@dataclasses.dataclass(frozen=True)
class Motor:
    """One motor: a solid cylinder about the spin axis ``z_i``, its top at the hub point ``p_i``.

    Attributes:
        mass: [kg] (>= 0). radius: [m]. height: [m].
    """

    mass: float = 0.1
    radius: float = 0.02
    height: float = 0.03

    def __post_init__(self):
        _positive("motor", "mass", self.mass, "give each motor a mass >= 0 kg", allow_zero=True)
        _positive("motor", "radius", self.radius, "give a positive motor radius in metres")
        _positive("motor", "height", self.height, "give a positive motor height in metres")


@dataclasses.dataclass(frozen=True)
class Propeller:
    """One propeller: its blades as two crossed thin bars of length ``2 radius`` in the rotor plane,
    centred at ``p_i``, spinning on a hinge about ``z_i``.

    A uniform bar from tip to tip has the spin inertia ``mass radius^2 / 3`` of a
    real blade pair; two crossed bars (half the mass each) have the same spin
    inertia and an axisymmetric inertia tensor, so a spinning propeller exerts no
    once-per-revolution torque on the engine's time step (the engine computes
    the inertia from these shapes).

    Attributes:
        mass: [kg] (> 0: the propeller is a body of its own). radius: tip radius [m].
        chord: blade width [m]. thickness: [m].
    """

    mass: float = 0.012
    radius: float = 0.12
    chord: float = 0.02
    thickness: float = 0.004

    def __post_init__(self):
        _positive("propeller", "mass", self.mass, "give each propeller a positive mass in kg")
        _positive("propeller", "radius", self.radius, "give a positive propeller tip radius in metres")
        _positive("propeller", "chord", self.chord, "give a positive blade chord in metres")
        _positive("propeller", "thickness", self.thickness, "give a positive blade thickness in metres")


@dataclasses.dataclass(frozen=True)
class LandingGear:
    """Landing gear: ``legs`` vertical capsules at ``radius`` from ``z_B``, each ending in a spherical foot.

    Attributes:
        mass: mass of one leg with its foot [kg] (>= 0).
        legs: number of legs (>= 3 to stand).
        radius: distance of each leg from ``z_B`` [m]; legs at azimuths ``pi/legs + 2 pi k/legs``.
        length: leg length below the hub's underside [m].
        leg_radius: capsule radius [m].
        foot_radius: radius of the contact sphere at each leg's end [m].
    """

    mass: float = 0.05
    legs: int = 4
    radius: float = 0.12
    length: float = 0.15
    leg_radius: float = 0.006
    foot_radius: float = 0.01

    def __post_init__(self):
        if int(self.legs) != self.legs or self.legs < 3:
            raise ValueError(f"Parts: `gear.legs` = {self.legs!r} is invalid: a vehicle needs at least 3 legs to "
                             "stand. Fix: pass legs >= 3.")
        _positive("gear", "mass", self.mass, "give each leg a mass >= 0 kg", allow_zero=True)
        for name in ("radius", "length", "leg_radius", "foot_radius"):
            _positive("gear", name, getattr(self, name), f"give a positive `{name}` in metres")


@dataclasses.dataclass(frozen=True)
class Parts:
    """The components of a multirotor (one arm, motor and propeller per rotor).

    Attributes:
        hub, arm, motor, propeller, gear: the parts (see each class for units).
    """

    hub: Hub = Hub()
    arm: Arm = Arm()
    motor: Motor = Motor()
    propeller: Propeller = Propeller()
    gear: LandingGear = LandingGear()

    def total_mass(self, n_rotors: int) -> float:
        """Sum of the part masses [kg] for ``n_rotors`` rotors (the engine's total, before compiling)."""
        per_rotor = self.arm.mass + self.motor.mass + self.propeller.mass
        return self.hub.mass + n_rotors * per_rotor + self.gear.legs * self.gear.mass


def check_parts(parts: Parts, positions: np.ndarray) -> None:
    """Refuse parts that cannot carry the rotors at ``positions`` ``(n, 3)`` [m] (body frame).

    * every hub point must lie outside the hub (the arm would have no length);
    * propellers of neighbouring rotors must not overlap
      (``2 r_prop <= min_{i != j} |p_i - p_j|``).

    Raises:
        ValueError: naming the part, the value and the fix.
    """
    pos = np.asarray(positions, dtype=float)
    radial = np.linalg.norm(pos[:, :2], axis=1)
    shortest = float(radial.min())
    if shortest <= parts.hub.radius:
        raise ValueError(f"Parts: `hub.radius` = {parts.hub.radius!r} m reaches beyond rotor hub "
                         f"{int(radial.argmin())} at {shortest:.4g} m from z_B: the arm would be shorter than the hub. "
                         f"Fix: use a hub radius < {shortest:.4g} m or longer arms.")
    if len(pos) > 1:
        d = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=-1)
        d[np.diag_indices(len(pos))] = np.inf
        spacing = float(d.min())
        if 2 * parts.propeller.radius > spacing + 1e-12:
            i, j = np.unravel_index(np.argmin(d), d.shape)
            raise ValueError(f"Parts: `propeller.radius` = {parts.propeller.radius!r} m makes the propellers of rotors {i} "
                             f"and {j} overlap (hubs {spacing:.4g} m apart). Fix: use a propeller radius <= "
                             f"{spacing / 2:.4g} m or spread the rotors.")


def paper_hexarotor_parts() -> Parts:
    """Parts of the Table II hexarotor (``l = 0.385 m``): 3.5 kg and ``J^p ~ diag(0.081, 0.081, 0.162) kg m^2``.

    A 2.2288 kg hub (radius 0.10 m, 30 mm high: frame plates, battery,
    electronics), six 65 g arms, six 128.2 g motors, six 12 g propellers of tip
    radius 0.165 m (13 inch; spin inertia ``m r^2 / 3 = 1.1e-4 kg m^2``) and a
    4-leg landing gear of 10 g legs, 10 cm long. The paper's ``J^p`` is planar
    (``J_z = J_x + J_y``, i.e. ``sum m z^2 = 0``): the mass sits in the rotor plane,
    so the hub is flat and the gear light. The engine's values
    (``docs/physics.md``): ``m = 3.5000 kg``, ``J = diag(0.08152, 0.08152, 0.16148) kg m^2``
    (+0.6 %, +0.6 %, -0.3 % from ``J^p``).
    """
    return Parts(
        hub=Hub(mass=2.2288, radius=0.10, height=0.03),
        arm=Arm(mass=0.065, radius=0.01),
        motor=Motor(mass=0.1282, radius=0.022, height=0.03),
        propeller=Propeller(mass=0.012, radius=0.165, chord=0.025, thickness=0.004),
        gear=LandingGear(mass=0.01, legs=4, radius=0.12, length=0.10, leg_radius=0.005, foot_radius=0.01),
    )


def default_parts(platform) -> Parts:
    """Parts for a platform without its own description.

    The Table II preset (:func:`paper_hexarotor_parts`) for the paper's
    hexarotor; otherwise a generic build whose masses add up to ``platform.mass`` ``m``: 40 % in
    the ``n`` rotor assemblies (per rotor: arm 30 %, motor 65 %, propeller 5 % of ``0.4 m / n``),
    1 % in a 4-leg gear, the rest in the hub; sizes follow the geometry (hub radius 0.3 of the
    shortest hub distance from ``z_B``, propeller tip radius 0.43 of the closest hub spacing).
    Light propellers: their spin-up reaction torque can destabilise the yaw loop of a canted
    design (``docs/physics.md``).
    """
    if platform.name.startswith("paper_hexarotor"):
        return paper_hexarotor_parts()
    from ..design.platform import rotor_positions

    pos = np.asarray(rotor_positions(platform), dtype=float)
    n = len(pos)
    radial = float(np.linalg.norm(pos[:, :2], axis=1).min())
    d = np.linalg.norm(pos[:, None] - pos[None], axis=-1) + np.eye(n) * 1e9
    spacing = float(d.min()) if n > 1 else 2 * radial
    m = float(np.asarray(platform.mass))
    gear_mass, legs = 0.01 * m / 4, 4
    per_rotor = 0.4 * m / n
    return Parts(
        hub=Hub(mass=m - n * per_rotor - legs * gear_mass, radius=0.3 * radial, height=0.03),
        arm=Arm(mass=0.3 * per_rotor, radius=0.01 * max(radial, 0.1) / 0.385),
        motor=Motor(mass=0.65 * per_rotor, radius=0.06 * radial, height=0.03),
        propeller=Propeller(mass=0.05 * per_rotor, radius=0.43 * spacing, chord=0.06 * spacing, thickness=0.004),
        gear=LandingGear(mass=gear_mass, legs=legs, radius=0.25 * radial, length=0.1),
    )
