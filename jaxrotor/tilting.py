"""Allocators that decide the tilt in flight: per-rotor extended variables and a shared cant.

A tilting platform (``platform.tilting`` non-empty) has servo angles as inputs
besides the rotor inputs ``u``. The allocators here take the body wrench the
controller asks for and return both: the servo commands (``Allocation.alpha`` /
``beta``) and the inputs ``u``, allocated for the angles the servos apply *now*
(``servo.applied``: the command for an ideal servo, the servo state for a lagged
one), so the rotors always push through the geometry they have.

**Extended variables** (:class:`ExtendedVariable`, independent ``alpha_i`` and/or
``beta_i``). With ``z_i = R_z(gamma_i) R_y(beta_i) R_x(alpha_i) z_B`` (eq. 4) the
thrust vector ``f_i = c_f,i u_i z_i`` of rotor ``i`` is linear in a decomposed
variable ``v_i`` [N] of ``k`` components:

* ``alpha`` tilts (``k = 2``): ``z_i = cos(alpha_i) a_i + sin(alpha_i) b_i`` with
  ``a_i = R_z(gamma_i) R_y(beta_i) e_z``, ``b_i = R_z(gamma_i) R_y(beta_i) (-e_y)``;
  ``v_i = c_f,i u_i (cos alpha_i, sin alpha_i)``;
* ``beta`` tilts (``k = 2``, fixed ``alpha_i = 0``): ``a_i = e_z``, ``b_i = R_z(gamma_i) e_x``;
* both (``k = 3``): ``v_i = c_f,i u_i R_z(gamma_i)^T z_i`` (the thrust in the arm frame).

The moment of rotor ``i`` is ``p_i x f_i + (kappa_i c_tau,i / c_f,i) f_i`` (eqs. 6-7),
so the wrench is ``w = A v`` with ``A`` of shape ``6 x (k n)``. The allocator takes
the minimum-norm solution ``v = A^+ w`` (minimum ``sum_i |f_i|^2``) and moves it in
the null space of ``A`` (``P = I - A^+ A``, ``w`` unchanged) to keep every thrust
``|v_i|`` inside ``[c_f u_min + m, c_f u_max - m]`` (``m`` a margin fraction of the
range): each step is the damped Gauss-Newton step
``dv = P J^T (J P J^T + mu I)^-1 d`` for the thrust changes ``d_i`` that bring the
rotors outside the band back to it (``J = d|v_i|/dv``; rotors inside keep their
thrust, to first order); then ``alpha_i = atan2(v_i2, v_i1)`` (the equivalent angle nearest the
current one, so the command is continuous across ``+-pi``), clipped to the servo
limits, and ``u_i = |v_i| / c_f,i``. As ``|v_i| -> 0`` the angle is undefined; below
``eps`` the command blends toward the current angle with the smoothstep weight
``x^2 (3 - 2x)``, ``x = |v_i| / eps`` (exactly 1 above ``eps``), and the ``atan2`` and
norm are NaN-safe, so values and gradients stay finite.

**Shared cant** (:class:`CantSelection`, interdependent ``alpha_0`` with
``alpha_i = (-1)^i alpha_0``). ``alpha_0`` is chosen online by minimising

    J(alpha_0) = P(alpha_0) / P_ref + k_s ((alpha_0 - alpha_0,cur) / 1 rad)^2
                 + k_f sum_i [relu(u_lo - u_i)^2 + relu(u_i - u_hi)^2] / u_ref^2 + k_f |r|^2 / (m g)^2

where ``u = G(alpha_0)^+ [f; 0]`` are the inputs that produce the requested force
``f`` with zero moment, ``r`` their scaled residual (zero when ``[f; 0]`` is in the
range of ``G``), ``[u_lo, u_hi]`` the input range shrunk by the margin (so ``f``
lies inside the zero-moment force set ``F_B(alpha_0)`` with margin when the last
terms vanish), ``u_ref = m g / sum_j c_f,j``, ``P = sum_i c_tau,i u_i^(3/2)`` the
rotor power and ``P_ref``
:func:`jaxrotor.metrics.reference_power`. The minimiser is a soft-min over a fixed
candidate grid within the servo limits refined by guarded Newton steps: no look-up
table, differentiable in every leaf. The servo limits should exclude ``alpha_0 = 0``:
there the zero-moment lateral force vanishes (``G`` loses rank), an isolated point
where no candidate near it can make the force. The speeds are then allocated at the applied
``alpha_0``. :class:`CantLookupTable` is the table baseline (zero-moment input maps
precomputed on a grid, hard feasibility and arg-min at run time).

Every solve here is a damped normal-equation solve (no SVD), so derivatives are
defined even where singular values coincide.

Where the code lives: the allocators and :func:`speeds_at` in
:mod:`jaxrotor.tilt_allocators`; here, the checks a tilting or full-pose flight passes
before compiling (:func:`check_tilt_flight`). Every name is importable from here.
"""

from __future__ import annotations

import jax

from .allocation import allocation_rank
from .design.platform import Platform, is_concrete
from .tilt_allocators import CantLookupTable as CantLookupTable
from .tilt_allocators import CantSelection as CantSelection
from .tilt_allocators import ExtendedSolution as ExtendedSolution
from .tilt_allocators import ExtendedVariable as ExtendedVariable
from .tilt_allocators import extended_matrix as extended_matrix
from .tilt_allocators import speeds_at as speeds_at

__all__ = [
    "CantLookupTable",
    "CantSelection",
    "ExtendedSolution",
    "ExtendedVariable",
    "check_tilt_flight",
    "extended_matrix",
    "speeds_at",
]


# --------------------------------------------------------------------------- checks before compiling


def check_tilt_flight(platform: Platform, controller, flight) -> None:
    """Errors of a tilting or full-pose flight, raised before compiling.

    * the allocator's own :meth:`~jaxrotor.allocators.AbstractAllocator.check` (a tilting
      allocator on a fixed-tilt platform, servo limits that exclude the current angle, ...);
    * a full-pose reference (attitude independent of the motion) flown by a controller that
      cannot track an attitude, or on a fixed-tilt platform whose allocation rank is below 6.
    """
    flight.allocator.check(platform, flight)
    with jax.ensure_compile_time_eval():
        _check_full_pose(platform, controller, flight)


def _check_full_pose(platform: Platform, controller, flight) -> None:
    ref = flight.reference
    if not getattr(ref, "is_full_pose", False):
        return
    if not getattr(controller, "tracks_attitude", False):
        raise ValueError(f"fly: the reference is full-pose (an attitude independent of the motion), but the controller "
                         f"{type(controller).__name__} tracks only a heading. Fix: use FullyActuatedSE3 on a fully "
                         "actuated or tilting platform, or a reference with a level attitude.")
    if platform.is_tilting:
        if not flight.allocator.decides_tilt and flight.tilt_command is None:
            raise ValueError(f"fly: platform {platform.name!r} tilts but nothing commands its servos for the full-pose "
                             "reference. Fix: use allocator ExtendedVariable (per-rotor tilt) or CantSelection "
                             "(shared cant).")
        return
    if is_concrete(platform):
        rank = allocation_rank(platform)
        if rank < 6:
            raise ValueError(f"fly: platform {platform.name!r} ({platform.label()}) has allocation rank {rank} < 6: it "
                             "is under-actuated and cannot hold an attitude independent of its motion (full-pose "
                             "reference). Fix: use a fully actuated or tilting platform, or a level reference.")
