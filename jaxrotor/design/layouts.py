"""Layout builders (x, plus, H, coaxial) and the common airframe presets built from them.

Builders return an ordinary :class:`~jaxrotor.design.platform.Platform`:

============================  =====================================================
``x_layout(n, arm)``          even ring, first rotor half a sector off the tail
                              (rear-left), nothing on the nose; angle form, so the
                              cant/dihedral leaves can still be tilted and optimised
``plus_layout(n, arm)``       even ring with the first rotor on the nose (``x_B``),
                              the paper's star layout ``gamma_i = (i-1) 2 pi / n``
``h_layout(n, length, width)`` two rails along ``x_B``, ``width`` apart (explicit coordinates)
``coaxial_layout(base, ...)`` a counter-rotating rotor under each rotor of ``base``
============================  =====================================================

Rotor order goes counter-clockwise seen from above (increasing azimuth), and the
spin directions alternate along it starting counter-clockwise (``kappa = -1, +1, ...``),
as the X-frame convention of common Python multirotor mixer libraries: rear-left CCW, rear-right CW, front-right CCW,
front-left CW. Rotor counts must be even and at least four: an odd ring cannot
alternate spin directions all the way round.

Presets defined here and registered by :mod:`jaxrotor.design.presets` (values chosen by jaxrotor where the usual preset descriptions give none;
inertia from lumped parts, point masses at the hubs plus a central disc, so
``I_zz ~ 2 I_xx`` comes out of the layout):

* ``hex_s550``: flat hexa-X, 1.8 kg, 275 mm arm, nominal thrust-to-weight 3.0,
  ``c_f = 1.1e-5 N s^2``, ``c_tau / c_f = 16 mm`` (a typical 10-inch propeller), 80 g hubs.
* ``octo_x8``: coaxial X8 on 4 arms, 4.5 kg, 350 mm arm, 0.1 m rotor separation,
  lower rotors at 85 % of the upper rotors' thrust and torque coefficients, nominal
  thrust-to-weight 2.6 counting the lower rotors at 85 %; ``c_f = 3e-5 N s^2``,
  ``c_tau / c_f = 18 mm``, 150 g hubs.
* ``racing_250``: 250-class racing quad-X, 0.55 kg, 125 mm arm, nominal
  thrust-to-weight 6, ``c_f = 1e-6 N s^2``, ``c_tau / c_f = 12 mm``, 40 g hubs.

"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .platform import Platform, explicit_platform, rotor_axes, rotor_positions, star_platform

__all__ = [
    "x_layout",
    "plus_layout",
    "h_layout",
    "coaxial_layout",
    "coaxial_x_layout",
    "y6_layout",
    "rotor_speed_max_for_thrust_to_weight",
    "hex_s550",
    "octo_x8",
    "racing_250",
]


def _check_even(n, builder: str) -> int:
    if isinstance(n, bool) or int(n) != n or int(n) < 4 or int(n) % 2:
        raise ValueError(
            f"{builder}: rotor count `n` = {n!r} is invalid: layouts need an even count of at least 4 (an odd ring "
            "cannot alternate spin directions, so it carries a net yaw torque at hover). Fix: pass n = 4, 6, 8, ...; "
            "for other designs use star_platform or explicit_platform."
        )
    return int(n)


def _no_key(kwargs: Mapping[str, Any], key: str, builder: str, why: str) -> None:
    if key in kwargs:
        raise ValueError(f"{builder}: `{key}` = {kwargs[key]!r} cannot be given: {why}. Fix: drop `{key}`.")


def x_layout(n: int, arm_length: float, **platform_kwargs) -> Platform:
    """Even ring with nothing on the nose: ``gamma_i = pi - pi/n + (i-1) 2 pi / n`` (mod ``2 pi``).

    The first rotor sits half a sector off the tail on the left (rear-left), the
    others follow counter-clockwise seen from above; spin directions alternate
    starting counter-clockwise (``kappa = -1, +1, ...``). For ``n = 4`` this is the
    the common X-frame convention: rear-left CCW, rear-right CW, front-right CCW, front-left CW.

    Args:
        n: even rotor count ``>= 4``.
        arm_length: hub distance from the centre of mass [m].
        **platform_kwargs: keyword arguments of :func:`~jaxrotor.design.platform.star_platform`
            (``mass``, ``c_f``, ``c_tau`` required; ``kappa``, ``alpha``/``beta`` tilts,
            ``inertia`` or ``hub_mass``, ``rotor_speed_max``, ``name``, ...), except ``gamma``.

    Returns:
        an angle-form :class:`Platform` (its tilt leaves can be optimised).
    """
    n = _check_even(n, "x_layout")
    _no_key(platform_kwargs, "gamma", "x_layout", "the x layout sets the azimuths")
    gamma = [math.fmod(math.pi - math.pi / n + k * 2 * math.pi / n, 2 * math.pi) for k in range(n)]
    platform_kwargs.setdefault("name", f"x{n}")
    return star_platform(n, arm_length, gamma=gamma, **platform_kwargs)


def plus_layout(n: int, arm_length: float, **platform_kwargs) -> Platform:
    """Even ring with a rotor on each axis: the paper's star, ``gamma_i = (i-1) 2 pi / n``.

    The first rotor is on the nose (``x_B``); spin directions alternate starting
    counter-clockwise. ``plus_layout(4, ...)`` is the geometry of the ``cs_4r`` preset.

    Args:
        n: even rotor count ``>= 4``.
        arm_length: hub distance [m].
        **platform_kwargs: as :func:`x_layout`.
    """
    n = _check_even(n, "plus_layout")
    _no_key(platform_kwargs, "gamma", "plus_layout", "the plus layout sets the azimuths")
    platform_kwargs.setdefault("name", f"plus{n}")
    return star_platform(n, arm_length, **platform_kwargs)


def h_layout(n: int, length: float, width: float, **platform_kwargs) -> Platform:
    """Two rails along ``x_B``: ``n/2`` rotors on each, ``length`` fore-aft, ``width`` apart.

    Rail ``y = +width/2`` (left) and ``y = -width/2`` (right); on each rail the rotors
    are evenly spaced from ``x = +length/2`` to ``x = -length/2``. Rotor order goes
    counter-clockwise seen from above starting at the rear-left rotor (rear-left,
    right rail rear to front, left rail front to rear); spin directions alternate
    along that order starting counter-clockwise, which makes neighbours on a rail
    and across the rails spin opposite ways and balances every torque row.

    Args:
        n: even rotor count ``>= 4``.
        length: fore-aft extent of a rail [m] (> 0).
        width: distance between the rails [m] (> 0).
        **platform_kwargs: keyword arguments of :func:`~jaxrotor.design.platform.explicit_platform`
            (``mass``, ``c_f``, ``c_tau`` required; ``kappa`` to override the spin pattern,
            ``inertia`` or ``hub_mass``, ``rotor_speed_max``, ``name``, ...), except ``axes``.

    Returns:
        a flat, explicit-coordinate :class:`Platform` (class ``CnS_nR``).
    """
    n = _check_even(n, "h_layout")
    for key, val in (("length", length), ("width", width)):
        if not (isinstance(val, (int, float, np.floating)) and float(val) > 0):
            raise ValueError(f"h_layout: `{key}` = {val!r} is invalid: it must be a positive length in metres. "
                             f"Fix: pass {key} > 0.")
    _no_key(platform_kwargs, "axes", "h_layout", "the H layout is flat (spin axes along z_B)")
    m = n // 2
    xs = [length / 2 - k * length / (m - 1) for k in range(m)]  # front to rear
    left = [(x, width / 2, 0.0) for x in xs]
    right = [(x, -width / 2, 0.0) for x in xs]
    positions = [left[m - 1]] + right[::-1] + left[: m - 1]
    platform_kwargs.setdefault("kappa", [-((-1.0) ** k) for k in range(n)])
    platform_kwargs.setdefault("name", f"h{n}")
    return explicit_platform(positions, **platform_kwargs)


def coaxial_layout(
    base: Platform,
    separation: float,
    lower_efficiency: float = 0.85,
    *,
    mass: float | None = None,
    inertia=None,
    hub_mass: float | None = None,
    body_radius: float = 0.1,
    body_height: float = 0.0,
    gravity: float | None = None,
    name: str | None = None,
    parts=None,
    com_offset=None,
) -> Platform:
    """Stack a counter-rotating rotor under each rotor of ``base``.

    Rotor ``i`` of ``base`` (hub ``p_i``, axis ``z_i``) becomes an upper rotor at
    ``p_i + (separation/2) z_i`` and a lower rotor at ``p_i - (separation/2) z_i``, both
    along ``z_i`` (``Platform.axial_offset = +-separation/2``); the pair shares one arm
    (``Platform.arms``). Rotors ``0..n-1`` are the upper ones (``base``'s ``kappa``), rotors
    ``n..2n-1`` the lower ones, spinning the other way, whose ``c_f`` and ``c_tau`` are
    scaled by ``lower_efficiency`` (``Platform.rotor_efficiency``): a lower rotor in the upper
    rotor's wake returns about 85 % of its thrust (Leishman, *Principles of Helicopter
    Aerodynamics*, Sec. 2.14), a first-order lump applied to both the thrust and torque
    curves, not a wake model. Speed limits are copied. An angle-form ``base`` gives an
    angle-form result (its arm length and tilt stay differentiable leaves); an explicit
    one gives explicit coordinates.

    A coaxial pair adds thrust and yaw authority but no roll or pitch leverage: a
    rotor's thrust moment ``p_i x z_i`` does not depend on its offset along ``z_i``.

    Args:
        base: the design to stack (its geometry at its own tilt angles).
        separation: distance between the two rotors of a pair along the axis [m] (> 0).
        lower_efficiency: thrust and torque factor of the lower rotors, in (0, 1].
        mass: total mass [kg]; default ``base.mass`` (without parts).
        inertia: ``(3, 3)`` or diagonal inertia [kg m^2]; default from ``hub_mass`` if
            given (lumped parts), else ``base.inertia`` (without parts).
        hub_mass: mass of each hub [kg], a lumped-inertia part (see
            :func:`~jaxrotor.design.platform.lumped_inertia`).
        body_radius: radius of the central body [m], a lumped-inertia part.
        body_height: height of the central body [m], a lumped-inertia part.
        gravity: ``g`` [m/s^2]; default ``base.gravity``.
        name: default ``base.name + "_coax"``.
        parts: the :class:`~jaxrotor.design.parts.Parts` (default ``base.parts``): then mass,
            inertia, ``c_f``, ``c_tau`` and speed limits are derived unless given.
        com_offset: ``(3,)`` centre of mass relative to the geometric centre [m] (an override with parts).

    Returns:
        a :class:`Platform` with ``2n`` rotors.
    """
    if not float(separation) > 0:
        raise ValueError(f"coaxial_layout: `separation` = {separation!r} is invalid: the rotors of a pair need a "
                         "positive distance [m]. Fix: pass separation > 0, e.g. 0.1.")
    if not 0 < float(lower_efficiency) <= 1:
        raise ValueError(f"coaxial_layout: `lower_efficiency` = {lower_efficiency!r} is invalid: it must lie in "
                         "(0, 1]. Fix: pass e.g. 0.85.")
    if base.is_tilting:
        raise ValueError(f"coaxial_layout: `base` = {base.name!r} tilts in flight ({base.tilting}); coaxial pairs on "
                         "tilting mounts are not modelled. Fix: stack a fixed-tilt base.")
    parts = base.parts if parts is None else parts
    n = base.n_rotors
    h = float(separation) / 2
    eta = float(lower_efficiency)
    kappa = np.asarray(base.kappa, dtype=float)
    common = dict(
        gravity=float(base.gravity) if gravity is None else gravity,
        rotor_speed_min=np.tile(np.asarray(base.rotor_speed_min, dtype=float), 2),
        name=name or f"{base.name}_coax",
        parts=parts,
        rotor_efficiency=np.concatenate([np.ones(n), np.full(n, eta)]),
        arms=[(i, i + n) for i in range(n)],
        com_offset=com_offset,
    )
    if parts is None:
        cf = np.asarray(base.c_f, dtype=float)
        ct = np.asarray(base.c_tau, dtype=float)
        if inertia is None and hub_mass is None:
            inertia = np.asarray(base.inertia, dtype=float)
        common.update(mass=float(base.mass) if mass is None else mass, c_f=np.concatenate([cf, eta * cf]),
                      c_tau=np.concatenate([ct, eta * ct]), inertia=inertia, hub_mass=hub_mass,
                      body_radius=body_radius, body_height=body_height,
                      rotor_speed_max=np.tile(np.asarray(base.rotor_speed_max, dtype=float), 2))
    else:
        common.update(mass=mass, inertia=inertia)
        if "rotor_speed_max" in base.overrides:
            common["rotor_speed_max"] = np.tile(np.asarray(base.rotor_speed_max, dtype=float), 2)
    common["rotor_efficiency"] = None if parts is None else common["rotor_efficiency"]
    if base.positions is None:
        def two(x):
            x = np.asarray(x, dtype=float)
            return x if x.ndim == 0 else np.tile(x, 2)

        return star_platform(
            2 * n, base.arm_length, gamma=two(base.gamma), delta=two(base.delta), alpha=two(base.alpha),
            beta=two(base.beta), alpha_sign=two(base.alpha_sign), beta_sign=two(base.beta_sign),
            kappa=np.concatenate([kappa, -kappa]), axial_offset=np.concatenate([np.full(n, h), np.full(n, -h)]),
            **common)
    p = np.asarray(rotor_positions(base), dtype=float)
    z = np.asarray(rotor_axes(base), dtype=float)
    return explicit_platform(np.concatenate([p + h * z, p - h * z]), axes=np.concatenate([z, z]),
                             kappa=np.concatenate([kappa, -kappa]), **common)


def coaxial_x_layout(n: int, arm_length: float, separation: float, lower_efficiency: float = 0.85,
                     **platform_kwargs) -> Platform:
    """Coaxial X: ``n/2`` arms in the :func:`x_layout` ring, a counter-rotating pair on each (an X8 for ``n = 8``).

    Args:
        n: total rotor count (``n/2`` even, ``>= 4``: 8, 12, 16).
        arm_length: hub distance from the geometric centre [m].
        separation: axial distance between the rotors of a pair [m].
        lower_efficiency: factor on the lower rotors' ``c_f`` and ``c_tau``.
        **platform_kwargs: keyword arguments of :func:`x_layout` for the upper ring (``parts``,
            ``mass``, ``c_f``, ``c_tau``, ``kappa``, ``rotor_speed_max``, ...); ``inertia``,
            ``hub_mass``, ``name`` go to :func:`coaxial_layout`.
    """
    if isinstance(n, bool) or int(n) != n or int(n) % 4 or int(n) < 8:
        raise ValueError(f"coaxial_x_layout: rotor count `n` = {n!r} is invalid: a coaxial X has an even number of "
                         "arms (>= 4) with two rotors each. Fix: pass n = 8, 12, 16, ... (a Y6 is y6_layout).")
    top = {k: platform_kwargs.pop(k) for k in ("inertia", "hub_mass", "name", "body_radius", "body_height", "com_offset")
           if k in platform_kwargs}
    if platform_kwargs.get("parts") is None and "inertia" not in top and "hub_mass" not in top:
        raise ValueError("coaxial_x_layout: give `parts`, `inertia` or `hub_mass`. Fix: pass one of them.")
    base_kwargs = dict(platform_kwargs)
    if base_kwargs.get("parts") is None:
        base_kwargs.setdefault("inertia", (1.0, 1.0, 1.0))  # replaced by coaxial_layout's inertia
    base = x_layout(int(n) // 2, arm_length, **base_kwargs)
    top.setdefault("name", f"coaxial_x{int(n)}")
    return coaxial_layout(base, separation, lower_efficiency, mass=platform_kwargs.get("mass")
                          if platform_kwargs.get("parts") is not None else None, **top)


def y6_layout(arm_length: float, separation: float, lower_efficiency: float = 0.85, **platform_kwargs) -> Platform:
    """Y6: three arms at azimuths 60, 180 and 300 deg (two forward, one aft), a counter-rotating pair on each.

    Upper rotors spin ``kappa = (-1, +1, -1)`` (the lower ones the other way); each pair's
    drag torques cancel up to ``lower_efficiency``.

    Args:
        arm_length: hub distance from the geometric centre [m].
        separation: axial distance between the rotors of a pair [m].
        lower_efficiency: factor on the lower rotors' ``c_f`` and ``c_tau``.
        **platform_kwargs: as :func:`coaxial_x_layout`.
    """
    _no_key(platform_kwargs, "gamma", "y6_layout", "the Y6 layout sets the azimuths")
    top = {k: platform_kwargs.pop(k) for k in ("inertia", "hub_mass", "name", "body_radius", "body_height", "com_offset")
           if k in platform_kwargs}
    if platform_kwargs.get("parts") is None and "inertia" not in top and "hub_mass" not in top:
        raise ValueError("y6_layout: give `parts`, `inertia` or `hub_mass`. Fix: pass one of them.")
    base_kwargs = dict(platform_kwargs)
    base_kwargs.setdefault("kappa", [-1.0, 1.0, -1.0])
    if base_kwargs.get("parts") is None:
        base_kwargs.setdefault("inertia", (1.0, 1.0, 1.0))
    base = star_platform(3, arm_length, gamma=[math.pi / 3, math.pi, 5 * math.pi / 3],
                         alpha_sign=[-1.0, 1.0, -1.0], **base_kwargs)
    top.setdefault("name", "y6")
    return coaxial_layout(base, separation, lower_efficiency, mass=platform_kwargs.get("mass")
                          if platform_kwargs.get("parts") is not None else None, **top)


def rotor_speed_max_for_thrust_to_weight(mass: float, c_f_total: float, thrust_to_weight: float, gravity: float = 9.81) -> float:
    """Common rotor speed limit [rad/s] giving a nominal thrust-to-weight ratio.

    ``sum_i c_f,i rotor_speed_max^2 = (T/W) m g``, so ``rotor_speed_max = sqrt((T/W) m g / sum_i c_f,i)``.

    Args:
        mass: total mass [kg].
        c_f_total: ``sum_i c_f,i`` [N s^2/rad^2] (lower coaxial rotors counted at their reduced value).
        thrust_to_weight: nominal ratio (every rotor at full speed) over the weight.
        gravity: ``g`` [m/s^2].
    """
    return math.sqrt(thrust_to_weight * mass * gravity / c_f_total)


# --------------------------------------------------------------------------- presets


def hex_s550() -> Platform:
    """Flat hexa-X ``HEX_S550`` (an S550-class airframe): 1.8 kg, 275 mm arm, nominal T/W 3.0.

    ``c_f = 1.1e-5 N s^2/rad^2`` (a 10-inch propeller: 2.9 N per rotor at about
    4900 rpm in hover), ``c_tau = 0.016 c_f`` (a 16 mm torque-to-thrust ratio, typical of
    10-inch propellers), ``rotor_speed_max`` from T/W = 3 (about 900 rad/s). Inertia: six 80 g
    hubs and a 1.32 kg disc of radius 0.1 m.
    """
    mass, c_f, n = 1.8, 1.1e-5, 6
    return x_layout(
        n, 0.275, mass=mass, c_f=c_f, c_tau=0.016 * c_f, hub_mass=0.08, body_radius=0.1,
        rotor_speed_max=rotor_speed_max_for_thrust_to_weight(mass, n * c_f, 3.0), name="hex_s550",
    )


def octo_x8() -> Platform:
    """Coaxial X8 ``OCTO_X8`` (a heavy-lift coaxial airframe): 4.5 kg, 350 mm arm, 4 arms, nominal T/W 2.6.

    An X quad base (``x_layout(4, 0.35)``) stacked by :func:`coaxial_layout` with a
    0.1 m separation; the lower rotors work at 85 % of the upper rotors' thrust and
    torque coefficients, and T/W 2.6 counts them at 85 % (``sum c_f = 7.4 c_f``).
    ``c_f = 3e-5 N s^2/rad^2`` (15-inch propellers), ``c_tau = 0.018 c_f``. Inertia:
    eight 150 g hubs and a 3.3 kg disc of radius 0.15 m.
    """
    mass, c_f, eta = 4.5, 3.0e-5, 0.85
    rotor_speed_max = rotor_speed_max_for_thrust_to_weight(mass, 4 * c_f * (1 + eta), 2.6)
    base = x_layout(4, 0.35, mass=mass, c_f=c_f, c_tau=0.018 * c_f, inertia=(1.0, 1.0, 1.0), rotor_speed_max=rotor_speed_max)
    return coaxial_layout(base, 0.1, eta, hub_mass=0.15, body_radius=0.15, name="octo_x8")


def racing_250() -> Platform:
    """250-class racing quad-X ``RACING_250``: 0.55 kg, 125 mm arm, nominal T/W 6.

    Values chosen by jaxrotor (the preset is commonly named but not specified):
    ``c_f = 1e-6 N s^2/rad^2`` (5-inch propellers, about 11 000 rpm in hover),
    ``c_tau = 0.012 c_f``, ``rotor_speed_max`` from T/W = 6 (about 2800 rad/s). Inertia:
    four 40 g hubs and a 0.39 kg disc of radius 0.05 m.
    """
    mass, c_f = 0.55, 1.0e-6
    return x_layout(
        4, 0.125, mass=mass, c_f=c_f, c_tau=0.012 * c_f, hub_mass=0.04, body_radius=0.05,
        rotor_speed_max=rotor_speed_max_for_thrust_to_weight(mass, 4 * c_f, 6.0), name="racing_250",
    )
