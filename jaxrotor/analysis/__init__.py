"""Actuation analysis: what a design can do with its rotors (paper Sec. III-A, ref. [4]).

``docs/analysis.md`` has the theory and every definition. The subpackage, in the
order data flows through it:

* :mod:`._system`: the normalised system ``x = u / u_ref``, ``A = G_s / n`` of a
  platform, in JAX (:func:`._system.normalised`) and as concrete float64 NumPy
  (:class:`._system.System`, built once per report), and the decorator that makes
  each exact measure's public ``f(platform, alpha=None, beta=None)``.
* :mod:`.barrier`: the one smooth linear-program solver (log-barrier central
  point, damped Newton, implicit-function gradient).
* :mod:`.measures`: differentiable measures (pure JAX, jit-able, vmappable):
  singular values and condition number of ``G_s``, hover efficiency, smooth
  lateral-force capability, rotor-loss margin.
* :mod:`.exact`: exact reports by linear programs (SciPy HiGHS): ranks,
  decoupling, static hoverability, rotor loss, hover input, thrust-to-weight,
  lateral force, torque at hover, mixer diagnostics.
* :mod:`.envelope`: the hover envelope by linear programs: hover at a given attitude
  (:func:`hover_at_attitude`), the largest hover tilt per lean direction.
* :mod:`.polytopes`: exact force and moment polytopes (zero-moment force set,
  hover section, the part above hover, force zonotope, moments at hover) with
  their volumes, and the differentiable volumes and area of the zero-moment set.
* :mod:`.report`: :class:`ActuationReport` and :func:`analyze`.
* :mod:`.stability`: the closed loop linearised about hover (continuous field or one control
  period), its modes and the verdict (:func:`closed_loop_stability`, :class:`StabilityReport`),
  and the smooth :func:`stability_margin` (``docs/stability.md``).

The unit-consistent allocation matrix and its characteristic length live in
:mod:`jaxrotor.allocation` and are re-exported here.
"""

from ..allocation import characteristic_length as characteristic_length
from ..allocation import scaled_allocation_matrix as scaled_allocation_matrix
from .exact import DECOUPLING_CLASSES as DECOUPLING_CLASSES
from .exact import WRENCH_AXES as WRENCH_AXES
from .exact import RotorLoss as RotorLoss
from .exact import decoupling as decoupling
from .exact import hover_solution as hover_solution
from .exact import lateral_force_capability as lateral_force_capability
from .exact import lateral_force_profile as lateral_force_profile
from .exact import lateral_force_set as lateral_force_set
from .exact import max_torques_at_hover as max_torques_at_hover
from .exact import ranks as ranks
from .exact import rotor_loss as rotor_loss
from .exact import static_hoverability as static_hoverability
from .exact import thrust_to_weight as thrust_to_weight
from .exact import torque_rows_balanced as torque_rows_balanced
from .exact import unreachable_axes as unreachable_axes
from .exact import yaw_authority as yaw_authority
from .exact import zero_moment_force_set as zero_moment_force_set
from .envelope import HoverCheck as HoverCheck
from .envelope import HoverEnvelope as HoverEnvelope
from .envelope import hover_at_attitude as hover_at_attitude
from .envelope import hover_envelope as hover_envelope
from .envelope import lean_to_roll_pitch as lean_to_roll_pitch
from .measures import angular_authority as angular_authority
from .measures import condition_number as condition_number
from .measures import hover_power as hover_power
from .measures import nominal_thrust_to_weight as nominal_thrust_to_weight
from .measures import horizontal_directions as horizontal_directions
from .measures import hover_efficiency as hover_efficiency
from .measures import rotor_loss_margin as rotor_loss_margin
from .measures import rotor_loss_axis_margin as rotor_loss_axis_margin
from .measures import singular_values as singular_values
from .measures import smooth_lateral_force_capability as smooth_lateral_force_capability
from .polytopes import POLYTOPE_KEYS as POLYTOPE_KEYS
from .polytopes import Polytope as Polytope
from .polytopes import above_hover_polytope as above_hover_polytope
from .polytopes import force_zonotope as force_zonotope
from .polytopes import hover_moment_polytope as hover_moment_polytope
from .polytopes import hover_section_area as hover_section_area
from .polytopes import hover_section_polygon as hover_section_polygon
from .polytopes import polytope_measures as polytope_measures
from .polytopes import volume_above_hover as volume_above_hover
from .polytopes import zero_moment_force_volume as zero_moment_force_volume
from .polytopes import zero_moment_measures as zero_moment_measures
from .polytopes import zero_moment_polytope as zero_moment_polytope
from .report import ActuationReport as ActuationReport
from .report import analyze as analyze
from .stability import Linearization as Linearization
from .stability import StabilityReport as StabilityReport
from .stability import closed_loop_stability as closed_loop_stability
from .stability import linearize as linearize
from .stability import stability_margin as stability_margin

__all__ = [
    "WRENCH_AXES",
    "DECOUPLING_CLASSES",
    "ActuationReport",
    "RotorLoss",
    "analyze",
    "ranks",
    "decoupling",
    "static_hoverability",
    "rotor_loss",
    "hover_solution",
    "thrust_to_weight",
    "lateral_force_profile",
    "lateral_force_capability",
    "lateral_force_set",
    "zero_moment_force_set",
    "HoverCheck",
    "hover_at_attitude",
    "HoverEnvelope",
    "hover_envelope",
    "lean_to_roll_pitch",
    "max_torques_at_hover",
    "unreachable_axes",
    "yaw_authority",
    "torque_rows_balanced",
    "characteristic_length",
    "scaled_allocation_matrix",
    "singular_values",
    "condition_number",
    "hover_efficiency",
    "smooth_lateral_force_capability",
    "rotor_loss_margin",
    "rotor_loss_axis_margin",
    "horizontal_directions",
    "POLYTOPE_KEYS",
    "Polytope",
    "zero_moment_polytope",
    "hover_section_polygon",
    "above_hover_polytope",
    "force_zonotope",
    "hover_moment_polytope",
    "polytope_measures",
    "angular_authority",
    "hover_power",
    "nominal_thrust_to_weight",
    "zero_moment_force_volume",
    "hover_section_area",
    "volume_above_hover",
    "zero_moment_measures",
    "Linearization",
    "StabilityReport",
    "closed_loop_stability",
    "linearize",
    "stability_margin",
]
