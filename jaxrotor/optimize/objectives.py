"""Design objectives: composable, differentiable, NaN-safe scalar costs of a design and its flight.

A *term* is an equinox Module that turns a design (``design.platform``,
``design.controller``, ``design.flight``; normally a :class:`jaxrotor.optimize.Design`)
and, when it needs one, the :class:`~jaxrotor.trajectory.Trajectory` it flew into a
scalar. Every leaf term has a physical **measure** (metres, a ratio, newtons per
weight, ...) and a **sense**: ``+1`` when smaller is better (tracking error, energy,
conditioning), ``-1`` when larger is better (hover efficiency, lateral-force
capability, rotor-loss margin). Its **cost**, what an optimiser minimises, is
``sense * measure``. Terms compose::

    objective = Tracking() + 0.1 * Energy() + at_least(HoverEfficiency(), 0.9)

``w * term`` is a :class:`Weighted` term (the weight is an array leaf, so a batch of
objectives with different weights can be ``vmap``-ed), ``a + b`` a :class:`Sum`.
:class:`Constrained` weighs a measure and bounds it in one term that evaluates the
measure once: ``weight * sense * m + penalty * (relu(lower - m)^2 + relu(m - upper)^2)``;
:func:`at_least` / :func:`at_most` are its pure-bound forms (``weight = 0``), and a
:class:`Barrier` ``-mu log(m - lower)`` keeps every accepted design strictly feasible.

Flight terms (need a trajectory; ``W = m g`` the weight, means are trapezoidal time
means; every formula lives in :mod:`jaxrotor.metrics`):

=========================  ====================================================================
:class:`Tracking`          :func:`~jaxrotor.metrics.rms_norm` ``sqrt(mean_t |e_p|^2)`` [m] or
                           :func:`~jaxrotor.metrics.mean_norm` ``mean_t |e_p|`` of eq. (14),
                           plus optionally the same of ``e_R`` [rad] (eq. 15)
:class:`Effort`            :func:`~jaxrotor.metrics.effort_ratio` ``mean_t sum_i c_f,i |u_i| / W``
:class:`Energy`            ``mean_t`` :func:`~jaxrotor.metrics.rotor_power` ``/``
                           :func:`~jaxrotor.metrics.reference_power` (``normalize=False``: [W]);
                           ``source="battery"``: ``int V_t I_b dt`` [Wh] of an electric flight
:class:`SaturationMargin`  ``mean_t sum_i relu(b - m_i)^2 / b^2``, ``m_i`` the
                           :func:`~jaxrotor.metrics.speed_margin` of rotor ``i``, ``b = 1 - threshold``
:class:`WrenchShortfall`   ``mean_t |S (w_achieved - w_requested)|^2``,
                           ``S = diag(1/W, 1/W, 1/W, 1/(W L), 1/(W L), 1/(W L))``
=========================  ====================================================================

Design terms (no flight; from :mod:`jaxrotor.analysis`): :class:`Conditioning`,
:class:`HoverEfficiency`, :class:`LateralCapability`, :class:`RotorLossMargin`, and the
force-polytope measures :class:`ZeroMomentVolume`, :class:`HoverSectionArea`,
:class:`VolumeAboveHover` (exact volumes and area of the zero-moment force set), and
:class:`StabilityMargin` (the smooth margin of the closed loop linearised about hover: it reads the
design's controller and flight but flies nothing; ``docs/stability.md``).

Electrical terms (a vehicle from parts with a motor ``kv`` and a battery; ``docs/energy.md``):
:class:`Endurance` [s] (hover endurance, or with ``mode="profile"`` the flown profile's, maximised),
:class:`PeakCurrent` [A] (a log-sum-exp soft maximum of the motor currents of an electric flight) and
:class:`PayloadCapacity` [kg] (the payload at a thrust-to-weight margin, maximised), in
:mod:`jaxrotor.optimize.electrical_terms`; the battery's energy is :class:`Energy` with ``source="battery"``.
Every term's :meth:`~AbstractTerm.check` refuses a design that lacks what the term reads.

Why tilt needs these terms: with the exact pseudo-inverse allocation, no input
bounds and ideal motors, the delivered wrench ``G G^+ w`` equals the commanded
``w`` for every full-rank ``G``, so the closed loop, and therefore the tracking
error, does not depend on the tilt angles at all (``docs/optimization.md``, tested
in ``tests/integration/test_gradients.py``). Tilt acts through effort and power, saturation,
conditioning, lateral-force capability and rotor-loss robustness.

Class structure (every Module abstract or final): :class:`AbstractTerm` is the
interface; :class:`AbstractMeasureTerm` (a measure and a sense) splits into
:class:`AbstractFlightTerm` and :class:`AbstractDesignTerm`, which fix
``needs_flight``; :class:`Weighted`, :class:`Sum`, :class:`Constrained` and
:class:`Barrier` are final composites.

NaN safety: terms are written so that finite trajectories give finite values and
gradients (square roots and norms use the double-``where`` trick at zero). A
diverged flight is handled one level up, in
:meth:`jaxrotor.optimize.DesignProblem.loss`, which replaces the trajectory and the
value of a diverged member by finite stand-ins (double ``where``) and guards the
gradient, so one diverging member never poisons a ``vmap``-ed batch.

Where the code lives: the interface and the composites in :mod:`jaxrotor.optimize.terms`,
the flight terms in :mod:`jaxrotor.optimize.flight_terms`, the design terms in
:mod:`jaxrotor.optimize.design_terms`, the electrical ones in :mod:`jaxrotor.optimize.electrical_terms`;
every name is importable from here.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..analysis import rotor_loss_margin as rotor_loss_margin
from ..registry import builders
from .terms import AbstractDesignTerm as AbstractDesignTerm
from .terms import AbstractFlightTerm as AbstractFlightTerm
from .terms import AbstractMeasureTerm as AbstractMeasureTerm
from .terms import AbstractTerm as AbstractTerm
from .terms import AbstractWrapperTerm as AbstractWrapperTerm
from .terms import Barrier as Barrier
from .terms import Constrained as Constrained
from .terms import Sum as Sum
from .terms import Weighted as Weighted
from .terms import at_least as at_least
from .terms import at_most as at_most
# the flight terms first: their TOML kinds register (and are listed) in this order
from .flight_terms import Effort as Effort
from .flight_terms import Energy as Energy
from .flight_terms import SaturationMargin as SaturationMargin
from .flight_terms import Tracking as Tracking
from .flight_terms import WrenchShortfall as WrenchShortfall
from .design_terms import AngularAuthority as AngularAuthority
from .design_terms import Conditioning as Conditioning
from .design_terms import HoverPower as HoverPower
from .design_terms import HoverEfficiency as HoverEfficiency
from .design_terms import HoverSectionArea as HoverSectionArea
from .design_terms import LateralCapability as LateralCapability
from .design_terms import RotorLossMargin as RotorLossMargin
from .design_terms import StabilityMargin as StabilityMargin
from .design_terms import VolumeAboveHover as VolumeAboveHover
from .design_terms import ZeroMomentVolume as ZeroMomentVolume
from .electrical_terms import Endurance as Endurance
from .electrical_terms import PayloadCapacity as PayloadCapacity
from .electrical_terms import PeakCurrent as PeakCurrent
from .fault_terms import WorstRotorLoss as WorstRotorLoss

__all__ = [
    "AbstractTerm",
    "AbstractMeasureTerm",
    "AbstractFlightTerm",
    "AbstractDesignTerm",
    "AbstractWrapperTerm",
    "Weighted",
    "Sum",
    "Constrained",
    "Barrier",
    "at_least",
    "at_most",
    "Tracking",
    "Effort",
    "Energy",
    "SaturationMargin",
    "WrenchShortfall",
    "Conditioning",
    "HoverEfficiency",
    "HoverPower",
    "AngularAuthority",
    "LateralCapability",
    "RotorLossMargin",
    "ZeroMomentVolume",
    "HoverSectionArea",
    "VolumeAboveHover",
    "StabilityMargin",
    "Endurance",
    "PeakCurrent",
    "PayloadCapacity",
    "rotor_loss_margin",
    "TERMS",
]

#: Term classes by configuration name (``[objective.<name>]`` tables): a live view of the
#: ``"objective"`` family of :mod:`jaxrotor.registry`, so a term registered anywhere is listed.
TERMS: Mapping[str, type] = builders("objective")
