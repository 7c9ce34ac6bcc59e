"""Platform geometry: where each rotor sits and where it points (paper eqs. 3-4).

A :class:`Platform` is an equinox Module whose array fields are differentiable
leaves: arm length, azimuth ``gamma``, elevation ``delta``, cant ``alpha``,
dihedral ``beta``, rotor coefficients, mass, inertia and gravity. Rotor hubs and
spin axes may instead be given directly as coordinates.

Interdependent angles (the paper's ``alpha_0`` / ``beta_0``) are stored as a
scalar leaf with a fixed per-rotor sign pattern, so ``jax.grad`` with respect to
``platform.alpha`` is the derivative with respect to ``alpha_0``; independent
angles are stored as an ``(n,)`` leaf. The shape of the leaf is therefore what
the Table I label reports (``alpha_0`` vs ``alpha_i``).

Conventions: body frame FLU at the centre of mass, SI units, angles in radians.
Every platform is checked at construction by
:func:`jaxrotor.design.validation.validate_platform` (shapes always, values when concrete).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import ArrayLike, Float

from .. import so3
from .._util import as_float as _float
from .parts import MassProperties, Parts, check_assembly, mass_properties, propulsion
from .validation import TILT_ANGLES as TILT_ANGLES
from .validation import is_concrete as is_concrete
from .validation import parameter_error
from .validation import validate_platform

__all__ = [
    "Platform",
    "star_platform",
    "explicit_platform",
    "lumped_inertia",
    "rotor_positions",
    "rotor_axes",
    "per_rotor_angles",
    "geometric_rotor_positions",
    "derive_from_parts",
    "DERIVED",
    "class_label",
    "TILT_ANGLES",
    "is_concrete",
]

#: Annotation of a tilt-angle argument [rad]: ``()`` for an interdependent ``alpha_0``/``beta_0``,
#: ``(n,)`` for per-rotor ``alpha_i``/``beta_i`` (``n`` binds with the other arrays of the call).
AngleLike = Float[ArrayLike, ""] | Float[ArrayLike, " n"]
#: The same for a JAX array (platform fields, vehicle state, allocation records).
AngleArray = Float[Array, ""] | Float[Array, " n"]


class Platform(eqx.Module):
    """A multirotor design: rotor geometry, rotor coefficients and rigid-body properties.

    Build one with :func:`star_platform`, :func:`explicit_platform` or a preset
    (:mod:`jaxrotor.design.presets`) rather than by hand. All array fields are leaves
    (differentiable, vmappable); ``tilting`` and ``name`` are static.

    Attributes:
        arm_length: ``()`` distance ``l`` from the centre of mass to each hub [m] (eq. 3).
        gamma: ``(n,)`` azimuth angles ``gamma_i`` about ``z_B`` [rad] (eq. 3).
        delta: ``(n,)`` elevation angles ``delta_i`` [rad], in [0, pi/2). Eq. (3) rotates the arm by
            ``R_y(delta_i)``, which puts the hub *below* the body x-y plane (``p_z = -l sin delta_i``)
            for ``delta_i > 0``.
        alpha: cant [rad]: ``()`` for an interdependent ``alpha_0`` (then
            ``alpha_i = alpha_sign_i * alpha_0``) or ``(n,)`` independent ``alpha_i``;
            each ``alpha_i`` in (-pi/2, pi/2). Rotation about the arm (eq. 4).
        beta: dihedral [rad], ``()`` for ``beta_0`` or ``(n,)``; each ``beta_i`` in [0, pi/2).
            Rotation about the body-frame ``y`` axis of the arm frame (eq. 4, read as ``R_y``).
        alpha_sign: ``(n,)`` sign pattern of an interdependent cant (e.g. ``(-1)^i``).
        beta_sign: ``(n,)`` sign pattern of an interdependent dihedral.
        positions: ``(n, 3)`` explicit hub positions in the body frame [m], or ``None``
            to use eq. (3).
        axes: ``(n, 3)`` explicit unit spin axes in the body frame, or ``None`` to use eq. (4).
        c_f: ``(n,)`` thrust coefficients ``c_f,i`` [N s^2 / rad^2] (eq. 5), > 0.
        c_tau: ``(n,)`` drag-torque coefficients ``c_tau,i`` [N m s^2 / rad^2] (eq. 6), >= 0.
        kappa: ``(n,)`` spin directions, ``-1`` counter-clockwise, ``+1`` clockwise (eq. 6).
        mass: ``()`` total mass ``m`` [kg].
        inertia: ``(3, 3)`` inertia ``J`` about the centre of mass in the body frame [kg m^2].
        gravity: ``()`` gravitational acceleration ``g`` [m/s^2].
        rotor_speed_min: ``(n,)`` lowest rotor speed [rad/s] (input bound ``u_min = rotor_speed_min^2``).
        rotor_speed_max: ``(n,)`` highest rotor speed [rad/s] (``inf`` for unbounded).
        tilting: static tuple naming the angle sets that are servo-actuated in flight,
            a subset of ``("alpha", "beta")``; empty for a fixed-tilt platform.
        name: static human-readable name.
        axial_offset: ``(n,)`` hub offset along the spin axis [m] (a coaxial pair: ``+-s/2``), or
            ``None``: ``p_i = (eq. 3) + axial_offset_i z_i``.
        com_offset: ``(3,)`` centre of mass relative to the geometric centre the layout is
            built about [m] (from the parts), or ``None`` (the layout is about the centre of mass):
            :func:`rotor_positions` returns hubs relative to the centre of mass.
        rotor_inertia: ``(n,)`` spin inertia ``J_r`` of each rotor (bell + propeller) [kg m^2], or
            ``None`` (zero).
        rotor_efficiency: ``(n,)`` factor on the ``c_f``, ``c_tau`` derived from the parts (a coaxial
            lower rotor in the upper one's wake, e.g. 0.85), or ``None`` (1).
        parts: the :class:`~jaxrotor.design.parts.Parts` the vehicle is built from, or ``None``.
            With parts, ``mass``, ``inertia``, ``com_offset``, ``rotor_inertia``, ``c_f``,
            ``c_tau`` and ``rotor_speed_max`` are derived (:meth:`derive`) except those in
            ``overrides``.
        arms: static groups of rotor indices that share one arm (coaxial pairs); empty: one
            arm per rotor.
        overrides: static names of the derived fields the user gave explicitly (they win over
            the parts; reports say which).
    """

    arm_length: Float[Array, ""]
    gamma: Float[Array, " n"]
    delta: Float[Array, " n"]
    alpha: AngleArray
    beta: AngleArray
    alpha_sign: Float[Array, " n"]
    beta_sign: Float[Array, " n"]
    positions: Float[Array, "n 3"] | None
    axes: Float[Array, "n 3"] | None
    c_f: Float[Array, " n"]
    c_tau: Float[Array, " n"]
    kappa: Float[Array, " n"]
    mass: Float[Array, ""]
    inertia: Float[Array, "3 3"]
    gravity: Float[Array, ""]
    rotor_speed_min: Float[Array, " n"]
    rotor_speed_max: Float[Array, " n"]
    tilting: tuple[str, ...] = eqx.field(static=True, default=())
    name: str = eqx.field(static=True, default="platform")
    axial_offset: Float[Array, " n"] | None = None
    com_offset: Float[Array, "3"] | None = None
    rotor_inertia: Float[Array, " n"] | None = None
    rotor_efficiency: Float[Array, " n"] | None = None
    parts: Parts | None = None
    arms: tuple[tuple[int, ...], ...] = eqx.field(static=True, default=())
    overrides: tuple[str, ...] = eqx.field(static=True, default=())

    def __check_init__(self):
        validate_platform(self)

    @property
    def J_r(self) -> Float[Array, " n"]:
        """``(n,)`` rotor spin inertia [kg m^2] (zeros when not modelled)."""
        if self.rotor_inertia is None:
            return jnp.zeros_like(self.c_f)
        return self.rotor_inertia

    def derive(self) -> "Platform":
        """The platform with every parts-derived field recomputed from ``parts`` and the geometry
        (:func:`derive_from_parts`); itself when it has no parts. Call it after changing a
        geometry or parts leaf (the optimiser does)."""
        return derive_from_parts(self)

    def mass_properties(self) -> MassProperties:
        """Mass properties of ``parts`` on this geometry (:func:`jaxrotor.design.parts.mass_properties`).

        Raises:
            ValueError: the platform has no parts."""
        if self.parts is None:
            raise ValueError(f"Platform `{self.name}` has no parts (mass and inertia were given as numbers). "
                             "Fix: build it with parts (a [parts] table, or `parts=` of the builders).")
        return _mass_properties_of(self)

    @property
    def n_rotors(self) -> int:
        """Number of rotors ``n`` (static)."""
        return int(self.c_f.shape[0])

    @property
    def is_tilting(self) -> bool:
        """Whether any tilt angle is an input that changes in flight."""
        return len(self.tilting) > 0

    @property
    def u_min(self) -> Float[Array, " n"]:
        """``(n,)`` lower input bound ``u_min = rotor_speed_min^2`` [rad^2/s^2]."""
        return self.rotor_speed_min**2

    @property
    def u_max(self) -> Float[Array, " n"]:
        """``(n,)`` upper input bound ``u_max = rotor_speed_max^2`` [rad^2/s^2] (``inf`` if unbounded)."""
        return self.rotor_speed_max**2

    @property
    def weight(self) -> Float[Array, ""]:
        """``m g`` [N]."""
        return self.mass * self.gravity

    def label(self, ascii: bool = False) -> str:
        """Table I class label, e.g. ``CS_α0β0-Ted_6R`` (see :func:`class_label`)."""
        return class_label(self, ascii=ascii)


# --------------------------------------------------------------------------- geometry (eqs. 3-4)


def per_rotor_angles(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                     ) -> tuple[Float[Array, " n"], Float[Array, " n"]]:
    """Per-rotor cant and dihedral angles ``(alpha_i, beta_i)``, each ``(n,)`` [rad].

    Args:
        platform: the design.
        alpha: optional cant override with the shape of ``platform.alpha`` (a
            tilting platform's current servo angles); ``None`` uses the platform's.
        beta: optional dihedral override, likewise.

    Returns:
        ``alpha_i = alpha_sign_i * alpha_0`` for an interdependent angle, else ``alpha_i``;
        the same for ``beta``.
    """
    a = platform.alpha if alpha is None else jnp.asarray(alpha)
    b = platform.beta if beta is None else jnp.asarray(beta)
    a_i = platform.alpha_sign * a if a.ndim == 0 else a
    b_i = platform.beta_sign * b if b.ndim == 0 else b
    return a_i, b_i


def rotor_positions(platform: Platform) -> Float[Array, "n 3"]:
    """Hub positions in the body frame, eq. (3): ``p_i = l R_z(gamma_i) R_y(delta_i) x_B``.

    Note the sign: with ``R_y`` a right-handed rotation, ``R_y(delta) x_B`` points
    *below* the x-y plane for ``delta > 0``; jaxrotor follows eq. (3) literally
    and documents it (``docs/theory.md``).

    Returns:
        ``(n, 3)`` positions relative to the centre of mass [m]: eq. (3) (or the explicit
        ``platform.positions``) plus any coaxial ``axial_offset`` along ``z_i``, minus the
        parts' ``com_offset`` (:func:`geometric_rotor_positions` before the shift).
    """
    p = geometric_rotor_positions(platform)
    return p if platform.com_offset is None else p - platform.com_offset


def geometric_rotor_positions(platform: Platform) -> Float[Array, "n 3"]:
    """Hub positions about the geometric centre the layout is built about (no centre-of-mass shift).

    ``p_i = l R_z(gamma_i) R_y(delta_i) x_B + axial_offset_i z_i`` (eq. 3 plus a coaxial offset),
    or the explicit ``platform.positions``. Equal to :func:`rotor_positions` without parts.
    """
    if platform.positions is not None:
        p = platform.positions
    else:
        l, g, d = platform.arm_length, platform.gamma, platform.delta
        cd = jnp.cos(d)
        p = l * jnp.stack([cd * jnp.cos(g), cd * jnp.sin(g), -jnp.sin(d)], axis=-1)
    if platform.axial_offset is not None:
        p = p + platform.axial_offset[:, None] * rotor_axes(platform)
    return p


def rotor_axes(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
              ) -> Float[Array, "n 3"]:
    """Unit spin axes in the body frame, eq. (4): ``z_i = R_z(gamma_i) R_y(beta_i) R_x(alpha_i) z_B``.

    The paper prints ``R(beta_i)``; its text defines the dihedral as a rotation
    about ``y``, so jaxrotor reads it as ``R_y(beta_i)``.

    Args:
        platform: the design.
        alpha: optional cant override (see :func:`per_rotor_angles`); for a tilting
            platform the current servo angles [rad].
        beta: optional dihedral override, likewise.

    Returns:
        ``(n, 3)`` unit vectors; the explicit ``platform.axes`` if given.
    """
    if platform.axes is not None:
        return platform.axes
    a_i, b_i = per_rotor_angles(platform, alpha, beta)
    # R_x(a) z = (0, -sa, ca); R_y(b) (0, -sa, ca) = (cb*0 + sb*ca, -sa, -sb*0 + cb*ca)
    return _axes_formula(platform.gamma, a_i, b_i)


def per_rotor_angles_of(angle: Array, sign: Array) -> Array:
    """``sign * angle`` for an interdependent (scalar) angle, else the per-rotor ``angle`` itself."""
    return sign * angle if jnp.ndim(angle) == 0 else angle


def _axes_formula(gamma, a_i, b_i):
    """Eq. (4) for per-rotor angles: ``R_z(gamma_i) R_y(beta_i) R_x(alpha_i) z_B``, ``(n, 3)``."""
    ca, sa, cb, sb = jnp.cos(a_i), jnp.sin(a_i), jnp.cos(b_i), jnp.sin(b_i)
    cg, sg = jnp.cos(gamma), jnp.sin(gamma)
    x_arm, y_arm, z_arm = sb * ca, -sa, cb * ca
    return jnp.stack([cg * x_arm - sg * y_arm, sg * x_arm + cg * y_arm, z_arm], axis=-1)


def _rotor_axis_reference(gamma, alpha, beta):
    """Matrix-product form of eq. (4) for one rotor (used in tests and docs)."""
    return so3.rot_z(gamma) @ so3.rot_y(beta) @ so3.rot_x(alpha) @ jnp.array([0.0, 0.0, 1.0])


# --------------------------------------------------------------------------- inertia


def lumped_inertia(
    positions: Float[ArrayLike, "n 3"],
    hub_mass: float | Float[ArrayLike, " n"],
    body_mass: float,
    body_radius: float,
    body_height: float = 0.0,
) -> Float[Array, "3 3"]:
    """Inertia of point masses at the hubs plus a central solid cylinder, about the centre of mass.

    ``J = sum_i m_h (|p_i|^2 I - p_i p_i^T) + J_cyl``, with
    ``J_cyl = diag(m_b (3 r^2 + h^2)/12, m_b (3 r^2 + h^2)/12, m_b r^2 / 2)`` (a disc for ``h = 0``).
    The hubs are assumed to be placed so that the centre of mass is the body origin.

    Args:
        positions: ``(n, 3)`` hub positions in the body frame [m].
        hub_mass: mass of each motor-propeller assembly [kg], scalar or ``(n,)``.
        body_mass: mass of the central body [kg].
        body_radius: radius of the central cylinder [m].
        body_height: height of the central cylinder [m].

    Returns:
        ``(3, 3)`` inertia matrix [kg m^2].
    """
    positions = _float(positions)
    m = jnp.broadcast_to(_float(hub_mass), positions.shape[:1])
    r2 = jnp.sum(positions**2, axis=1)
    eye = jnp.eye(3, dtype=positions.dtype)
    J_hubs = jnp.einsum("i,ijk->jk", m, r2[:, None, None] * eye - positions[:, :, None] * positions[:, None, :])
    jxy = body_mass * (3 * body_radius**2 + body_height**2) / 12.0
    J_body = jnp.diag(_float([jxy, jxy, body_mass * body_radius**2 / 2.0]))
    return J_hubs + J_body


# --------------------------------------------------------------------------- builders


def _per_rotor(value, n: int, name: str) -> Array:
    arr = _float(value)
    if arr.ndim == 0:
        return jnp.full((n,), arr)
    if arr.shape != (n,):
        shown = np.asarray(arr).tolist() if is_concrete(arr) else f"<traced {arr.shape}>"
        raise ValueError(
            f"Platform parameter `{name}` = {shown} has {arr.shape[0] if arr.ndim == 1 else arr.shape} entries but the "
            f"platform has {n} rotors. Fix: pass a scalar or exactly {n} values."
        )
    return arr


def alternating(n: int, first: float = -1.0) -> Float[Array, " n"]:
    """Sign pattern ``(-1)^i`` for ``i = 1..n`` (``first = -1``), as in Table II."""
    return _float([first * (-1.0) ** k for k in range(n)])


def _finish(n, positions_for_inertia, mass, inertia, hub_mass, body_radius, body_height):
    if inertia is None:
        if hub_mass is None:
            raise ValueError(
                "Platform parameter `inertia` = None is invalid: no inertia and no `hub_mass` to compute one from. "
                "Fix: pass `inertia` (3x3 kg m^2) or `hub_mass` (kg) to build it from lumped parts."
            )
        body_mass = float(mass) - n * float(hub_mass)
        if body_mass <= 0:
            raise parameter_error("hub_mass", hub_mass, f"{n} hubs of this mass weigh more than the total mass {mass} kg",
                                  "lower `hub_mass` or raise `mass`")
        return lumped_inertia(positions_for_inertia, hub_mass, body_mass, body_radius, body_height)
    J = _float(inertia)
    if J.shape == (3,):
        J = jnp.diag(J)
    return J


#: The fields a platform built from parts derives (unless given explicitly: ``Platform.overrides``).
DERIVED = ("mass", "inertia", "com_offset", "rotor_inertia", "c_f", "c_tau", "rotor_speed_max")


def _given(parts, **values) -> tuple[str, ...]:
    """Names of the derived fields given explicitly (``hub_mass`` counts as giving the inertia)."""
    if parts is None:
        missing = [k for k in ("mass", "c_f", "c_tau") if values[k] is None]
        if missing:
            raise parameter_error(missing[0], "None", "a platform without parts needs its mass and rotor "
                                  "coefficients", f"pass {', '.join(missing)} (or parts=Parts(...) to derive them)")
        return ()
    if values["hub_mass"] is not None:
        raise parameter_error("hub_mass", values["hub_mass"], "a lumped hub mass cannot be combined with parts",
                              "drop hub_mass (the parts give the inertia) or drop parts")
    return tuple(k for k in DERIVED if values.get(k) is not None)


def _placeholders(parts, mass, c_f, c_tau, inertia, hub_mass, rotor_speed_max):
    """Stand-in values for fields the parts will derive (replaced by :func:`derive_from_parts`)."""
    if parts is not None:
        mass = 1.0 if mass is None else mass
        c_f = 1.0 if c_f is None else c_f
        c_tau = 0.0 if c_tau is None else c_tau
        inertia = (1.0, 1.0, 1.0) if inertia is None else inertia
    if rotor_speed_max is None:
        rotor_speed_max = float("inf")
    return mass, c_f, c_tau, inertia, rotor_speed_max


def _extras(n, axial_offset, rotor_efficiency, rotor_inertia, arms, com_offset=None) -> dict:
    if com_offset is not None and _float(com_offset).shape != (3,):
        raise parameter_error("com_offset", com_offset, "expected 3 numbers [x, y, z] in metres", "pass (3,)")
    return dict(
        com_offset=None if com_offset is None else _float(com_offset),
        axial_offset=None if axial_offset is None else _per_rotor(axial_offset, n, "axial_offset"),
        rotor_efficiency=None if rotor_efficiency is None else _per_rotor(rotor_efficiency, n, "rotor_efficiency"),
        rotor_inertia=None if rotor_inertia is None else _per_rotor(rotor_inertia, n, "rotor_inertia"),
        arms=tuple(tuple(int(i) for i in a) for a in arms),
    )


def _with_parts(platform: Platform, parts, given) -> Platform:
    if parts is None:
        return platform
    out = dataclasses.replace(platform, parts=parts, overrides=tuple(given))
    if is_concrete(out):  # one compiled program (op by op the mass model costs seconds)
        out = _derive_compiled(out)
    else:
        out = derive_from_parts(out)
    if is_concrete(out):
        check_assembly(parts, geometric_rotor_positions(out), rotor_axes(out), out.mass, out.c_f,
                       out.rotor_speed_max, out.gravity, out.name)
    return out


def _mass_properties_of(platform: Platform) -> MassProperties:
    return mass_properties(platform.parts, geometric_rotor_positions(platform), rotor_axes(platform), platform.arms)


@functools.cache
def _derive_jit():
    return eqx.filter_jit(derive_from_parts)


def _derive_compiled(platform: Platform) -> Platform:
    return _derive_jit()(platform)


def derive_from_parts(platform: Platform) -> Platform:
    """Recompute the parts-derived fields of ``platform`` (pure, differentiable).

    From :func:`~jaxrotor.design.parts.mass_properties` (on the platform's geometry at
    its nominal tilt angles): ``mass``, ``inertia`` (about the centre of mass),
    ``com_offset``, ``rotor_inertia``; from :func:`~jaxrotor.design.parts.propulsion`:
    ``c_f = rotor_efficiency c_t rho D^4/(4 pi^2)``,
    ``c_tau = rotor_efficiency c_p rho D^5/(8 pi^3)`` and ``rotor_speed_max`` (the
    motor's top speed on the battery's nominal voltage, or its current limit). Fields
    named in ``platform.overrides`` keep their given values. Without parts, returns
    ``platform`` unchanged.
    """
    parts = platform.parts
    if parts is None:
        return platform
    from .parts import rotor_speed_limit

    ov = set(platform.overrides)
    mp = _mass_properties_of(platform)
    prop = propulsion(parts)
    n = platform.n_rotors
    eff = jnp.ones((n,), dtype=platform.c_f.dtype) if platform.rotor_efficiency is None else platform.rotor_efficiency
    new = {}
    for key, value in (("mass", mp.mass), ("inertia", mp.inertia), ("com_offset", mp.com),
                       ("rotor_inertia", mp.rotor_inertia), ("c_f", eff * prop.c_f), ("c_tau", eff * prop.c_tau)):
        if key not in ov:
            new[key] = value
    if "rotor_speed_max" not in ov:
        c_tau = new.get("c_tau", platform.c_tau)
        if parts.motor.kv is None or parts.battery is None:
            new["rotor_speed_max"] = jnp.full((n,), jnp.inf, dtype=platform.c_f.dtype)
        else:
            new["rotor_speed_max"] = rotor_speed_limit(parts.motor, parts.battery.nominal_voltage, c_tau)[0]
    return dataclasses.replace(platform, **new)


def star_platform(
    n: int,
    arm_length: float,
    *,
    mass: float | None = None,
    c_f: float | Sequence[float] | None = None,
    c_tau: float | Sequence[float] | None = None,
    kappa: Sequence[float] | None = None,
    alpha: float | Sequence[float] = 0.0,
    beta: float | Sequence[float] = 0.0,
    alpha_sign: Sequence[float] | None = None,
    beta_sign: Sequence[float] | None = None,
    delta: float | Sequence[float] = 0.0,
    gamma: Sequence[float] | None = None,
    inertia: Float[ArrayLike, "3 3"] | Float[ArrayLike, "3"] | Sequence[float] | None = None,
    hub_mass: float | None = None,
    body_radius: float = 0.1,
    body_height: float = 0.0,
    gravity: float = 9.81,
    rotor_speed_min: float | Sequence[float] = 0.0,
    rotor_speed_max: float | Sequence[float] | None = None,
    tilting: Sequence[str] = (),
    name: str = "star",
    parts: Parts | None = None,
    axial_offset: Sequence[float] | None = None,
    rotor_efficiency: Sequence[float] | None = None,
    arms: Sequence[Sequence[int]] = (),
    rotor_inertia: float | Sequence[float] | None = None,
    com_offset: Sequence[float] | None = None,
) -> Platform:
    """Build a platform from the angle parameters of eqs. (3)-(4).

    Args:
        n: rotor count (any ``n >= 1``).
        arm_length: ``l`` [m].
        mass: total mass [kg].
        c_f: thrust coefficients [N s^2/rad^2], scalar or ``(n,)``.
        c_tau: drag-torque coefficients [N m s^2/rad^2], scalar or ``(n,)``.
        kappa: ``(n,)`` spin directions (-1 CCW, +1 CW); default ``(-1)^i``, i.e.
            rotor 1 counter-clockwise, alternating.
        alpha: cant [rad]: a scalar is the interdependent ``alpha_0`` (with
            ``alpha_sign``), a sequence of ``n`` gives independent ``alpha_i``.
        beta: dihedral [rad], likewise with ``beta_sign``.
        alpha_sign: ``(n,)`` sign pattern for ``alpha_0``; default ``(-1)^i`` (Table II).
        beta_sign: ``(n,)`` sign pattern for ``beta_0``; default all ``+1`` (Table II).
        delta: elevation [rad], scalar or ``(n,)``.
        gamma: ``(n,)`` azimuths [rad]; default the star layout ``(i-1) 2 pi / n``.
        inertia: ``(3, 3)`` or diagonal ``(3,)`` [kg m^2]; if ``None``, built by
            :func:`lumped_inertia` from ``hub_mass``, ``body_radius``, ``body_height``.
        gravity: ``g`` [m/s^2].
        rotor_speed_min: lower rotor speed bound [rad/s], scalar or ``(n,)``.
        rotor_speed_max: upper rotor speed bound [rad/s], scalar or ``(n,)`` (``inf`` for none).
        tilting: angle sets actuated in flight, subset of ``("alpha", "beta")``.
        name: a name for reports.
        parts: the :class:`~jaxrotor.design.parts.Parts` the vehicle is built from: then
            ``mass``, ``inertia``, ``c_f``, ``c_tau``, ``rotor_speed_max`` and ``rotor_inertia`` may be
            omitted (derived, :meth:`Platform.derive`); any of them given overrides the parts.
            Without parts ``mass``, ``c_f``, ``c_tau`` and ``inertia`` (or ``hub_mass``) are required.
        axial_offset: ``(n,)`` hub offsets along the spin axes [m] (coaxial pairs).
        rotor_efficiency: ``(n,)`` factors on the parts-derived ``c_f``, ``c_tau``.
        arms: groups of rotor indices sharing one arm (coaxial pairs).
        rotor_inertia: ``J_r`` [kg m^2], scalar or ``(n,)`` (default: from the parts, else 0).
        com_offset: ``(3,)`` centre of mass relative to the geometric centre [m] (with parts:
            an override of the derived one; ``[0, 0, 0]`` keeps eq. (3) about the centre of mass).

    Returns:
        A validated :class:`Platform`.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise parameter_error("n", n if isinstance(n, (int, float, np.number)) else str(n), "the rotor count must be an integer",
                              "pass an int, e.g. n=6")
    n = int(n)
    if n < 1:
        raise ValueError(f"Platform parameter `n` = {n} is invalid: need at least one rotor. Fix: pass n >= 1.")
    for pname, pval in (("arm_length", arm_length), ("mass", mass), ("gravity", gravity),
                        ("body_radius", body_radius), ("body_height", body_height), ("hub_mass", hub_mass)):
        if pval is not None and (isinstance(pval, (str, bytes, bool)) or np.ndim(pval) != 0
                                 or not np.issubdtype(pval.dtype if hasattr(pval, "dtype") else np.asarray(pval).dtype,
                                                      np.number)):
            raise parameter_error(pname, str(pval) if isinstance(pval, (str, bytes)) else pval, "expected one number",
                                  f"pass a single float for `{pname}`")
        if pname in ("body_radius", "body_height", "hub_mass") and pval is not None and is_concrete(pval) and not (
                np.isfinite(float(pval)) and float(pval) >= 0):
            raise parameter_error(pname, pval, "must be finite and >= 0", f"pass a non-negative `{pname}`")
    gamma_arr = _float([k * 2 * math.pi / n for k in range(n)]) if gamma is None else _per_rotor(gamma, n, "gamma")
    alpha_arr = _float(alpha)
    beta_arr = _float(beta)
    kappa_arr = alternating(n) if kappa is None else _per_rotor(kappa, n, "kappa")
    a_sign = alternating(n) if alpha_sign is None else _per_rotor(alpha_sign, n, "alpha_sign")
    b_sign = jnp.ones((n,), dtype=gamma_arr.dtype) if beta_sign is None else _per_rotor(beta_sign, n, "beta_sign")
    delta_arr = _per_rotor(delta, n, "delta")
    arm = _float(arm_length)
    cd = jnp.cos(delta_arr)
    pos = arm * jnp.stack([cd * jnp.cos(gamma_arr), cd * jnp.sin(gamma_arr), -jnp.sin(delta_arr)], axis=-1)
    given = _given(parts, mass=mass, c_f=c_f, c_tau=c_tau, inertia=inertia, hub_mass=hub_mass,
                   rotor_speed_max=rotor_speed_max, rotor_inertia=rotor_inertia, com_offset=com_offset)
    mass, c_f, c_tau, inertia, rotor_speed_max = _placeholders(parts, mass, c_f, c_tau, inertia, hub_mass,
                                                               rotor_speed_max)
    if axial_offset is not None:  # the hubs move along their axes: lumped parts sit at the offset hubs
        ca, sa = per_rotor_angles_of(alpha_arr, a_sign), per_rotor_angles_of(beta_arr, b_sign)
        pos = pos + _per_rotor(axial_offset, n, "axial_offset")[:, None] * _axes_formula(gamma_arr, ca, sa)
    J = _finish(n, pos, mass, inertia, hub_mass, body_radius, body_height)
    return _with_parts(Platform(
        arm_length=arm,
        gamma=gamma_arr,
        delta=delta_arr,
        alpha=alpha_arr,
        beta=beta_arr,
        alpha_sign=a_sign,
        beta_sign=b_sign,
        positions=None,
        axes=None,
        c_f=_per_rotor(c_f, n, "c_f"),
        c_tau=_per_rotor(c_tau, n, "c_tau"),
        kappa=kappa_arr,
        mass=_float(mass),
        inertia=J,
        gravity=_float(gravity),
        rotor_speed_min=_per_rotor(rotor_speed_min, n, "rotor_speed_min"),
        rotor_speed_max=_per_rotor(rotor_speed_max, n, "rotor_speed_max"),
        tilting=tuple(tilting),
        name=name,
        **_extras(n, axial_offset, rotor_efficiency, rotor_inertia, arms, com_offset),
    ), parts, given)


def explicit_platform(
    positions: Float[ArrayLike, "n 3"] | Sequence[Sequence[float]],
    *,
    mass: float | None = None,
    c_f: float | Sequence[float] | None = None,
    c_tau: float | Sequence[float] | None = None,
    kappa: Sequence[float] | None = None,
    axes: Float[ArrayLike, "n 3"] | Sequence[Sequence[float]] | None = None,
    inertia: Float[ArrayLike, "3 3"] | Float[ArrayLike, "3"] | Sequence[float] | None = None,
    hub_mass: float | None = None,
    body_radius: float = 0.1,
    body_height: float = 0.0,
    gravity: float = 9.81,
    rotor_speed_min: float | Sequence[float] = 0.0,
    rotor_speed_max: float | Sequence[float] | None = None,
    name: str = "explicit",
    parts: Parts | None = None,
    rotor_efficiency: Sequence[float] | None = None,
    arms: Sequence[Sequence[int]] = (),
    rotor_inertia: float | Sequence[float] | None = None,
    com_offset: Sequence[float] | None = None,
) -> Platform:
    """Build a platform from explicit hub coordinates and spin axes (body frame).

    Args:
        positions: ``(n, 3)`` hub positions [m].
        axes: ``(n, 3)`` unit spin axes; default all ``z_B`` (zero tilt).
        kappa: ``(n,)`` spin directions (-1 CCW, +1 CW).
        mass: total mass [kg].
        c_f: thrust coefficients [N s^2/rad^2], scalar or ``(n,)``.
        c_tau: drag-torque coefficients [N m s^2/rad^2], scalar or ``(n,)``.
        inertia: ``(3, 3)`` or diagonal ``(3,)`` [kg m^2]; if ``None``, built by
            :func:`lumped_inertia` from ``hub_mass``, ``body_radius``, ``body_height``.
        hub_mass: mass of each motor-propeller assembly [kg] (lumped inertia).
        body_radius: radius of the central cylinder [m] (lumped inertia).
        body_height: height of the central cylinder [m] (lumped inertia).
        gravity: ``g`` [m/s^2].
        rotor_speed_min: lower rotor speed bound [rad/s], scalar or ``(n,)``.
        rotor_speed_max: upper rotor speed bound [rad/s], scalar or ``(n,)`` (``inf`` for none).
        name: a name for reports.
        parts: as :func:`star_platform` (positions are then about the geometric centre; the centre of
            mass follows from the parts).
        rotor_efficiency: as :func:`star_platform`.
        arms: as :func:`star_platform`.
        rotor_inertia: as :func:`star_platform`.
        com_offset: as :func:`star_platform`.

    Returns:
        A validated :class:`Platform` whose geometry ignores the angle fields.
    """
    pos = _float(positions)
    if pos.ndim != 2 or pos.shape[1] != 3:
        raise parameter_error("positions", pos, f"expected shape (n, 3), got {tuple(pos.shape)}", "pass one [x, y, z] row per rotor")
    n = pos.shape[0]
    ax = jnp.tile(_float([0.0, 0.0, 1.0]), (n, 1)) if axes is None else _float(axes)
    if kappa is None:
        raise parameter_error("kappa", "None", "explicit rotors need their spin directions",
                              f"pass kappa with {n} entries of -1 (CCW) / +1 (CW)")
    given = _given(parts, mass=mass, c_f=c_f, c_tau=c_tau, inertia=inertia, hub_mass=hub_mass,
                   rotor_speed_max=rotor_speed_max, rotor_inertia=rotor_inertia, com_offset=com_offset)
    mass, c_f, c_tau, inertia, rotor_speed_max = _placeholders(parts, mass, c_f, c_tau, inertia, hub_mass,
                                                               rotor_speed_max)
    J = _finish(n, pos, mass, inertia, hub_mass, body_radius, body_height)
    return _with_parts(Platform(
        arm_length=jnp.mean(jnp.linalg.norm(pos, axis=1)),
        gamma=jnp.mod(jnp.arctan2(pos[:, 1], pos[:, 0]), 2 * math.pi),
        delta=jnp.zeros((n,), dtype=pos.dtype),
        alpha=_float(0.0),
        beta=_float(0.0),
        alpha_sign=jnp.ones((n,), dtype=pos.dtype),
        beta_sign=jnp.ones((n,), dtype=pos.dtype),
        positions=pos,
        axes=ax,
        c_f=_per_rotor(c_f, n, "c_f"),
        c_tau=_per_rotor(c_tau, n, "c_tau"),
        kappa=_per_rotor(kappa, n, "kappa"),
        mass=_float(mass),
        inertia=J,
        gravity=_float(gravity),
        rotor_speed_min=_per_rotor(rotor_speed_min, n, "rotor_speed_min"),
        rotor_speed_max=_per_rotor(rotor_speed_max, n, "rotor_speed_max"),
        tilting=(),
        name=name,
        **_extras(n, None, rotor_efficiency, rotor_inertia, arms, com_offset),
    ), parts, given)


# --------------------------------------------------------------------------- Table I label


def class_label(platform: Platform, ascii: bool = False, tol: float = 1e-9) -> str:
    """Table I class label derived from the parameters (never typed by hand).

    Format ``<position>_<orientation>_<n>R`` where

    * position: ``C`` (coplanar: every hub in one plane parallel to the body
      x-y plane, i.e. equal hub heights; for the angle form equal elevations
      ``delta_i``, ``delta_i = 0`` in the paper's examples) or ``nC``; then ``S``
      (star-shaped: the ``k`` arms at azimuths ``gamma_0 + (j-1) 2 pi / k``, equally spaced
      from a common offset ``gamma_0`` — the paper's ``gamma_0 = 0``, an X layout's
      ``pi/n`` — at equal distance ``|p|`` from the geometric centre, as eq. (3) gives)
      or ``nS``. A coaxial pair (``Platform.arms``) is one arm: a coaxial X8 is
      ``nCS_8R`` (two rotor planes, four equally spaced arms);
    * orientation: absent for zero tilt (every ``z_i = z_B`` and not tilting);
      otherwise the tilt angles in use, ``α0``/``αi`` (interdependent or
      independent cant) and ``β0``/``βi`` (dihedral), followed by ``-Ted``
      (fixed tilt) or ``-Ting`` (tilting). Explicit non-vertical axes have no
      angles and are marked ``T``.

    Examples: ``CS_4R``, ``CS_α0-Ted_6R``, ``CS_α0β0-Ted_6R``; with
    ``ascii=True``: ``CS_a0b0-Ted_6R``.

    Args:
        platform: a concrete (not traced) platform.
        ascii: spell ``α``/``β`` as ``a``/``b``.
        tol: tolerance for "equal" and "zero" [m or rad].
    """
    n = platform.n_rotors
    pos = np.asarray(geometric_rotor_positions(platform), dtype=float)  # about the geometric centre
    coplanar = bool(np.ptp(pos[:, 2]) <= tol * max(1.0, float(np.abs(pos).max())))
    groups = platform.arms or tuple((i,) for i in range(n))
    tips = np.stack([pos[list(g)].mean(axis=0) for g in groups])  # one point per arm (a coaxial pair is one arm)
    k = len(tips)
    az = np.sort(np.mod(np.arctan2(tips[:, 1], tips[:, 0]), 2 * np.pi))
    offset = az[0]
    star_az = offset + np.array([j * 2 * np.pi / k for j in range(k)])
    daz = np.abs(np.angle(np.exp(1j * (az - star_az))))
    radii = np.linalg.norm(tips, axis=1)  # |p_i| (= l for eq. 3, whatever the elevations delta_i)
    star = bool(np.all(daz <= 1e-7) and np.ptp(radii) <= tol * max(1.0, float(radii.max())))
    position = ("C" if coplanar else "nC") + ("S" if star else "nS")

    a_sym, b_sym = ("a", "b") if ascii else ("α", "β")
    parts = []
    if platform.axes is not None:
        axes = np.asarray(platform.axes, dtype=float)
        tilted = bool(np.any(np.abs(axes - np.array([0.0, 0.0, 1.0])) > tol))
        if tilted:
            parts.append("T")
    else:
        a_i, b_i = (np.asarray(x, dtype=float) for x in per_rotor_angles(platform))
        for sym, key, vals, leaf in ((a_sym, "alpha", a_i, platform.alpha), (b_sym, "beta", b_i, platform.beta)):
            if np.any(np.abs(vals) > tol) or key in platform.tilting:
                parts.append(sym + ("0" if np.ndim(leaf) == 0 else "i"))
    if not parts:
        return f"{position}_{n}R"
    kind = "Ting" if platform.is_tilting else "Ted"
    return f"{position}_{''.join(parts)}-{kind}_{n}R"
