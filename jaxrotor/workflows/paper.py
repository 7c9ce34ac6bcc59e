"""Whether a flight is the paper's use case, and the title its outputs carry.

The paper's Table IV (and Figs. 6-8) report one vehicle on one maneuver: the Table II
hexarotor ``CS_α0β0-Ted_6R`` flying the takeoff, figure-eight and landing of
:func:`jaxrotor.reference.paper_maneuver`. Its numbers are a reference for that flight
only, so the reports print the paper's columns and say "Table IV" / "Fig. 8" only when
:func:`is_paper_use_case` holds; any other flight is titled with its configuration and
vehicle name (:func:`output_title`).

The test is by value, not by name (a renamed copy of the preset is still the paper's
vehicle; a preset with another mass is not):

* the vehicle (:func:`is_paper_vehicle`): six fixed-tilt rotors whose hub positions [m] and spin
  axes match :func:`jaxrotor.design.presets.paper_hexarotor` (``1e-6`` absolute), the same spin
  directions, ``c_f``, ``c_tau``, mass and gravity within ``0.1 %``, and an inertia within
  ``1 %`` of either of the paper's two, ``J^a`` or ``J^p``. The presets ``paper_hexarotor``,
  ``paper_hexarotor_physics`` and ``paper_hexarotor_parts`` (inertia from its parts, ``J^p``
  within 0.4 %) pass; rotor speed bounds, rotor inertia and the name are not compared (the
  realistic variants keep the paper's vehicle).
* the maneuver (:func:`is_paper_maneuver`): the reference is ``paper_maneuver()`` with its
  default parameters (8 s takeoff to 1 m, a figure-eight of period 30 s, 8 s landing, 45 s in
  all), as ``[reference] kind = "paper_maneuver"`` builds it. A flight stopped early
  (``--t1``) still flies that maneuver.

The controller, the allocator and the actuators are not compared: the paper's columns are
the reference a realistic flight of the same vehicle and maneuver is read against.
"""

from __future__ import annotations

import jax
import numpy as np

__all__ = ["PAPER_VEHICLE_TOLERANCES", "is_paper_maneuver", "is_paper_use_case", "is_paper_vehicle",
           "output_title"]

#: Tolerances of :func:`is_paper_vehicle`: ``geometry`` absolute on hub positions [m] and unit spin axes,
#: ``constants`` relative on ``c_f``, ``c_tau``, mass and gravity, ``inertia`` relative on each moment (and on
#: the products of inertia against the moments).
PAPER_VEHICLE_TOLERANCES = {"geometry": 1e-6, "constants": 1e-3, "inertia": 1e-2}


def _close(a, b, rtol: float) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rtol * np.abs(b)))


def is_paper_vehicle(platform) -> bool:
    """Whether ``platform`` is the paper's Table II hexarotor (module docstring; :data:`PAPER_VEHICLE_TOLERANCES`).

    Args:
        platform: a :class:`~jaxrotor.design.platform.Platform` with concrete values (not traced).
    """
    from ..design.platform import rotor_axes, rotor_positions
    from ..design.presets import TABLE_II, paper_hexarotor

    tol = PAPER_VEHICLE_TOLERANCES
    try:
        if platform.n_rotors != 6 or platform.tilting:
            return False
        ref = paper_hexarotor()
        if np.abs(np.asarray(rotor_positions(platform), dtype=float)
                  - np.asarray(rotor_positions(ref), dtype=float)).max() > tol["geometry"]:
            return False
        if np.abs(np.asarray(rotor_axes(platform), dtype=float)
                  - np.asarray(rotor_axes(ref), dtype=float)).max() > tol["geometry"]:
            return False
        if not np.array_equal(np.sign(np.asarray(platform.kappa)), np.sign(np.asarray(ref.kappa))):
            return False
        for key in ("c_f", "c_tau", "mass", "gravity"):
            if not _close(getattr(platform, key), getattr(ref, key), tol["constants"]):
                return False
        J = np.asarray(platform.inertia, dtype=float)
        for diag in (TABLE_II["J_a"], TABLE_II["J_p"]):
            Jt = np.diag(np.asarray(diag, dtype=float))
            scale = np.sqrt(np.outer(np.diag(Jt), np.diag(Jt)))
            if J.shape == (3, 3) and np.all(np.abs(J - Jt) <= tol["inertia"] * scale):
                return True
        return False
    except (TypeError, ValueError, jax.errors.ConcretizationTypeError):  # traced or malformed: not provably so
        return False


def is_paper_maneuver(reference, rtol: float = 1e-9) -> bool:
    """Whether ``reference`` is :func:`jaxrotor.reference.paper_maneuver` with the paper's parameters: the same
    phases (takeoff, figure-eight, landing) with equal times [s], positions [m] and amplitudes, leaf by leaf
    (``rtol``; :func:`equinox.tree_equal`)."""
    import equinox as eqx

    from ..reference import paper_maneuver

    try:
        return bool(eqx.tree_equal(reference, paper_maneuver(), rtol=rtol, atol=rtol))
    except Exception:  # leaves that cannot be compared (traced values): not provably the paper's
        return False


def is_paper_use_case(config) -> bool:
    """Whether ``config`` (a :class:`~jaxrotor.io.config.FlightConfig`) flies the paper's vehicle on the paper's
    maneuver (:func:`is_paper_vehicle` and :func:`is_paper_maneuver`): the flight the paper's Table IV and
    Figs. 6-8 report, the only one the reports print the paper's columns for."""
    return is_paper_vehicle(config.platform) and is_paper_maneuver(config.flight.reference)


def output_title(config, paper: bool | None = None) -> str:
    """The title of ``config``'s tables and figures.

    The paper's use case (``paper``, default :func:`is_paper_use_case`): the Table I label
    (``"CS_α0β0-Ted_6R"``). Any other flight: its configuration name, the vehicle's name when it differs
    and the label, e.g. ``"x500_hover (x500, CS_4R)"``.
    """
    label = config.platform.label()
    if paper if paper is not None else is_paper_use_case(config):
        return label
    names = [config.name] + ([config.platform.name] if config.platform.name != config.name else [])
    return f"{names[0]} ({', '.join(names[1:] + [label])})"
