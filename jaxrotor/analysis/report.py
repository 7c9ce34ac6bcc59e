"""The full actuation report of a concrete platform: every exact measure, computed on one system,
and the vehicle it is computed for (mass, centre of mass, inertia, rotor coefficients, top speed and,
for a vehicle built from parts, the mass by part and what limits the top speed)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._util import to_jsonable
from ..design.parts import rotor_speed_limit
from ..design.platform import AngleLike, Platform
from ._system import system
from .envelope import HoverEnvelope, envelope_on_system
from .exact import (RotorLoss, _class_of, hover_solution, lateral_force_profile, max_torques_at_hover, ranks,
                    rotor_loss, static_hoverability, thrust_to_weight, torque_rows_balanced, unreachable_axes,
                    yaw_authority)
from .polytopes import polytope_measures

__all__ = ["ActuationReport", "analyze", "vehicle_section"]


@dataclasses.dataclass(frozen=True)
class ActuationReport:
    """Every actuation property of a platform at given tilt angles (see ``docs/analysis.md``).

    Attributes:
        name: the platform's name.
        label: Table I class label.
        n_rotors: rotor count ``n``.
        mass_kg, weight_N: ``m`` [kg] and ``m g`` [N].
        F, M: ``(3, n)`` allocation matrices of eq. (10) [N/(rad^2/s^2)], [N m/(rad^2/s^2)].
        rank_F, rank_M, rank_G: ranks (unit-consistent, :func:`jaxrotor.analysis.ranks`).
        rank_thrust_torque: rank of the 4-row mixer ``[F_z; M]``.
        fully_actuated: ``rank G = 6``.
        dim_D: ``dim F ker(M)``.
        decoupling: one of :data:`jaxrotor.analysis.DECOUPLING_CLASSES`.
        realizable: some ``u > 0`` gives ``M u = 0``.
        statically_hoverable: :func:`jaxrotor.analysis.static_hoverability`.
        hover_margin: ``max min u / mean u`` over zero-moment inputs (0 if not hoverable).
        fail_safe: statically hoverable after the loss of any single rotor.
        fail_safe_within_bounds: and with a rotor-loss thrust-to-weight ``>= 1``.
        rotor_loss: one :class:`jaxrotor.analysis.RotorLoss` per rotor.
        level_hover_feasible: hover at level attitude is possible within the input bounds.
        hover_u: ``(n,)`` minimum-norm level hover input [rad^2/s^2], or None.
        hover_input_fraction: ``max_i u_h,i / u_max,i``.
        hover_efficiency: ``|F u_h| / sum_i c_f,i u_h,i``.
        thrust_to_weight: vertical force at level attitude, zero moment and no lateral
            force, within bounds, over ``m g``.
        nominal_thrust_to_weight: ``sum_i c_f,i u_max,i / (m g)``.
        lateral_force_capability_N: :func:`jaxrotor.analysis.lateral_force_capability` [N].
        lateral_directions: the number ``K`` of horizontal directions used.
        max_torque_at_hover_Nm: :func:`jaxrotor.analysis.max_torques_at_hover` [N m].
        singular_values: of ``G_s`` (:func:`jaxrotor.allocation.scaled_allocation_matrix`),
            descending, ``min(6, n)`` values.
        condition_number: ``sigma_1 / sigma_6`` of ``G_s`` (``inf`` unless fully actuated).
        condition_number_range: ``sigma_1 / sigma_r`` with ``r = rank G`` (conditioning of
            the reachable wrench subspace).
        unreachable_axes: :func:`jaxrotor.analysis.unreachable_axes`.
        yaw_authority: :func:`jaxrotor.analysis.yaw_authority` [m].
        torque_rows_balanced: :func:`jaxrotor.analysis.torque_rows_balanced`.
        zero_moment_force_volume: volume of ``F_B = {F u : M u = 0, u in bounds}`` [N^3]
            (:func:`jaxrotor.analysis.zero_moment_polytope`).
        hover_section_area: area of ``F_B ∩ {f_z = m g}`` [N^2]
            (:func:`jaxrotor.analysis.hover_section_polygon`).
        volume_above_hover: volume of ``F_B ∩ {f_z >= m g}`` [N^3]
            (:func:`jaxrotor.analysis.above_hover_polytope`).
        force_zonotope_volume: volume of ``{F u : u in bounds}`` [N^3]
            (:func:`jaxrotor.analysis.force_zonotope`).
        hover_moment_volume: volume of ``{M u : F u = m g e_3, u in bounds}`` [(N m)^3]
            (:func:`jaxrotor.analysis.hover_moment_polytope`).
        polytope_notes: why a polytope measure is 0 or inf (empty, flat, unbounded),
            by the key above; empty when every set is full-dimensional.
        hover_envelope: :class:`jaxrotor.analysis.HoverEnvelope` (72 lean headings): the largest
            hover tilt per heading, the lateral force at level hover, the level hover margin; its
            ``to_dict()`` is the ``hover_envelope`` JSON block (degrees). ``None`` for a tilting
            platform analysed at its own angles (the envelope depends on the servo angles).

        The vehicle (the platform's own values: derived from its parts unless given explicitly):

        mass: ``m`` [kg] (the same as ``mass_kg``).
        com_offset: ``(3,)`` centre of mass relative to the geometric centre the layout is built
            about [m] (zeros without parts: the layout is about the centre of mass).
        inertia: ``(3, 3)`` ``J`` about the centre of mass, body axes [kg m^2].
        rotor_inertia: ``(n,)`` spin inertia ``J_r`` of each rotor [kg m^2] (zeros when not modelled).
        c_f: ``(n,)`` thrust coefficients [N s^2/rad^2]. c_tau: ``(n,)`` drag-torque coefficients
            [N m s^2/rad^2].
        rotor_speed_max: ``(n,)`` top rotor speed [rad/s] (``inf``: unbounded, ``null`` in JSON).
        from_parts: the platform is built from :class:`~jaxrotor.design.parts.Parts`.
        mass_breakdown: part kind (``hub``, ``arms``, ``motors``, ``propellers``, ``battery``,
            ``payload``, ``landing_gear``, ``ballast``; the kinds present) -> total mass of that kind
            [kg], summing to the parts' mass; empty without parts.
        overrides: the derived fields given explicitly (they win over the parts,
            ``Platform.overrides``); empty without parts.
        voltage_limited_speed: ``(n,)`` ``omega_V``, the steady full-throttle speed on the
            battery's nominal voltage [rad/s] (:func:`~jaxrotor.design.parts.rotor_speed_limit`,
            with the platform's ``c_tau``), or ``None`` (no parts, no motor ``kv`` or no battery).
        current_limited_speed: ``(n,)`` ``omega_I``, the speed at the motor's current limit
            [rad/s] (``inf`` for none), or ``None`` likewise.
        speed_limit: per rotor, which of the two limits the parts' top speed: ``"voltage"`` or
            ``"current"``; ``None`` likewise. (With ``rotor_speed_max`` in ``overrides`` the
            platform's top speed is the given one, not this.)
    """

    name: str
    label: str
    n_rotors: int
    mass_kg: float
    weight_N: float
    F: np.ndarray
    M: np.ndarray
    rank_F: int
    rank_M: int
    rank_G: int
    rank_thrust_torque: int
    fully_actuated: bool
    dim_D: int
    decoupling: str
    realizable: bool
    statically_hoverable: bool
    hover_margin: float
    fail_safe: bool
    fail_safe_within_bounds: bool
    rotor_loss: tuple[RotorLoss, ...]
    level_hover_feasible: bool
    hover_u: np.ndarray | None
    hover_input_fraction: float
    hover_efficiency: float
    thrust_to_weight: float
    nominal_thrust_to_weight: float
    lateral_force_capability_N: float
    lateral_directions: int
    max_torque_at_hover_Nm: dict[str, float]
    singular_values: np.ndarray
    condition_number: float
    condition_number_range: float
    unreachable_axes: tuple[str, ...]
    yaw_authority: float
    torque_rows_balanced: bool
    zero_moment_force_volume: float
    hover_section_area: float
    volume_above_hover: float
    force_zonotope_volume: float
    hover_moment_volume: float
    polytope_notes: dict[str, str]
    hover_envelope: HoverEnvelope | None
    mass: float
    com_offset: np.ndarray
    inertia: np.ndarray
    rotor_inertia: np.ndarray
    c_f: np.ndarray
    c_tau: np.ndarray
    rotor_speed_max: np.ndarray
    from_parts: bool
    mass_breakdown: dict[str, float]
    overrides: tuple[str, ...]
    voltage_limited_speed: np.ndarray | None
    current_limited_speed: np.ndarray | None
    speed_limit: tuple[str, ...] | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the attribute names as keys.

        Arrays become nested lists, ``rotor_loss`` a list of dicts, and non-finite
        floats (``inf``, NaN) become ``None`` (JSON ``null``).
        """
        return {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}


def analyze(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None, *,
            n_directions: int = 36) -> ActuationReport:
    """Compute the full :class:`ActuationReport` of a concrete platform.

    Builds the normalised system once and calls every exact measure of
    :mod:`jaxrotor.analysis.exact` on it (``f.on_system``).

    Args:
        platform: the design (concrete, not traced).
        alpha: optional cant angle(s) [rad] for a tilting platform (shape of ``platform.alpha``);
            default the platform's own.
        beta: optional dihedral angle(s) [rad] (shape of ``platform.beta``); default the platform's own.
        n_directions: number of horizontal directions for the lateral-force capability.

    Returns:
        the report; ``report.to_dict()`` is what ``jaxrotor analyze --json`` prints.
    """
    s = system(platform, alpha, beta)
    r = ranks.on_system(s)
    h = static_hoverability.on_system(s)
    losses = tuple(rotor_loss.on_system(s))
    hover = hover_solution.on_system(s)
    tw = thrust_to_weight.on_system(s)
    sv = np.linalg.svd(s.Gs, compute_uv=False)
    k = min(6, s.n)
    sv6 = np.concatenate([sv, np.zeros(6 - len(sv))]) if len(sv) < 6 else sv
    rank_G = r["rank_G"]
    rho = None
    if hover["feasible"]:
        _, rho = lateral_force_profile.on_system(s, n_directions=n_directions)
        lateral = float(np.min(rho)) if not np.any(np.isnan(rho)) else math.nan  # lateral_force_capability
        torques = max_torques_at_hover.on_system(s)
    else:  # the same values the LPs give, without solving them
        lateral = math.nan
        torques = {"roll": math.nan, "pitch": math.nan, "yaw": math.nan}
    fixed = not platform.is_tilting or alpha is not None or beta is not None
    envelope = envelope_on_system(s, n_directions=n_directions, rho=rho) if fixed else None
    poly = polytope_measures.on_system(s)
    return ActuationReport(
        name=platform.name,
        label=platform.label(),
        n_rotors=s.n,
        mass_kg=float(platform.mass),
        weight_N=s.weight,
        F=s.F,
        M=s.M,
        rank_F=r["rank_F"],
        rank_M=r["rank_M"],
        rank_G=rank_G,
        rank_thrust_torque=r["rank_thrust_torque"],
        fully_actuated=rank_G == 6,
        dim_D=h["dim_D"],
        decoupling=_class_of(h["dim_D"]),
        realizable=h["realizable"],
        statically_hoverable=h["hoverable"],
        hover_margin=h["margin"],
        fail_safe=all(x.hoverable for x in losses),
        fail_safe_within_bounds=all(x.hoverable and x.thrust_to_weight >= 1.0 for x in losses),
        rotor_loss=losses,
        level_hover_feasible=hover["feasible"],
        hover_u=hover["u"],
        hover_input_fraction=hover["input_fraction"],
        hover_efficiency=hover["efficiency"],
        thrust_to_weight=tw["thrust_to_weight"],
        nominal_thrust_to_weight=tw["nominal_thrust_to_weight"],
        lateral_force_capability_N=lateral,
        lateral_directions=int(n_directions),
        max_torque_at_hover_Nm=torques,
        singular_values=sv6[:k],
        condition_number=float(sv6[0] / sv6[5]) if rank_G == 6 else math.inf,
        condition_number_range=float(sv[0] / sv[rank_G - 1]) if rank_G > 0 else math.inf,
        unreachable_axes=unreachable_axes.on_system(s),
        yaw_authority=yaw_authority.on_system(s),
        torque_rows_balanced=torque_rows_balanced.on_system(s),
        zero_moment_force_volume=poly["zero_moment_force_volume"],
        hover_section_area=poly["hover_section_area"],
        volume_above_hover=poly["volume_above_hover"],
        force_zonotope_volume=poly["force_zonotope_volume"],
        hover_moment_volume=poly["hover_moment_volume"],
        polytope_notes=poly["polytope_notes"],
        hover_envelope=envelope,
        **vehicle_section(platform),
    )


def _np(x) -> np.ndarray:
    return np.array(x, dtype=float)


def vehicle_section(platform: Platform) -> dict[str, Any]:
    """The vehicle fields of :class:`ActuationReport` (``mass`` ... ``speed_limit``) of a concrete platform.

    The platform's own values (derived from its parts unless named in ``platform.overrides``); the
    mass breakdown from :meth:`Platform.mass_properties`; the two speed limits from
    :func:`~jaxrotor.design.parts.rotor_speed_limit` with the platform's ``c_tau`` (what
    :func:`~jaxrotor.design.platform.derive_from_parts` uses for ``rotor_speed_max``).
    """
    n = platform.n_rotors
    parts = platform.parts
    out: dict[str, Any] = dict(
        mass=float(platform.mass),
        com_offset=np.zeros(3) if platform.com_offset is None else _np(platform.com_offset),
        inertia=_np(platform.inertia),
        rotor_inertia=_np(platform.J_r),
        c_f=_np(platform.c_f),
        c_tau=_np(platform.c_tau),
        rotor_speed_max=_np(platform.rotor_speed_max),
        from_parts=parts is not None,
        mass_breakdown={},
        overrides=tuple(platform.overrides),
        voltage_limited_speed=None,
        current_limited_speed=None,
        speed_limit=None,
    )
    if parts is None:
        return out
    out["mass_breakdown"] = {k: float(v) for k, v in platform.mass_properties().breakdown.items()}
    if parts.motor.kv is not None and parts.battery is not None:
        _, w_v, w_i = rotor_speed_limit(parts.motor, parts.battery.nominal_voltage, platform.c_tau)
        w_v, w_i = np.broadcast_to(_np(w_v), (n,)).copy(), np.broadcast_to(_np(w_i), (n,)).copy()
        out.update(voltage_limited_speed=w_v, current_limited_speed=w_i,
                   speed_limit=tuple("voltage" if a <= b else "current" for a, b in zip(w_v, w_i)))
    return out
