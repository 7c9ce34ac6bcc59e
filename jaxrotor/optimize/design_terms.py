"""Design terms: objective measures of the design alone, from :mod:`jaxrotor.analysis` (no flight).

Each is an :class:`~jaxrotor.optimize.terms.AbstractDesignTerm` (``needs_flight = False``):
conditioning, hover efficiency, lateral-force capability, rotor-loss margin and the exact
force-polytope measures of the zero-moment force set; registered as ``[objective.<name>]``
TOML kinds.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import Float

from ..analysis import (angular_authority, condition_number, hover_efficiency, hover_power, rotor_loss_margin,
                        smooth_lateral_force_capability, zero_moment_measures)
from ..design.validation import is_concrete, parameter_error
from ..registry import Option, register
from .terms import AbstractDesignTerm

__all__ = ["Conditioning", "HoverEfficiency", "LateralCapability", "RotorLossMargin", "ZeroMomentVolume",
           "HoverSectionArea", "VolumeAboveHover", "HoverPower", "AngularAuthority"]
__all__ += ["StabilityMargin"]

_TEMPERATURE = Option(float, gt=0, doc="soft-min temperature", why="a smoothing temperature must be > 0")
_NORMALIZE = Option(bool, doc="divide by a power of the weight m g (dimensionless)")


@register("objective", "conditioning", options={"log": Option(bool, doc="log of the condition number")})
class Conditioning(AbstractDesignTerm):
    """Condition number ``sigma_1 / sigma_6`` of the unit-consistent allocation matrix
    (:func:`jaxrotor.analysis.condition_number`); ``log=True`` gives ``log(kappa)``. Smaller is better.

    Attributes:
        log: static flag.
    """

    log: bool = eqx.field(static=True, default=False)
    sense: ClassVar[int] = 1
    name: ClassVar[str] = "conditioning"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless (>= 1, or >= 0 as a log)."""
        k = condition_number(design.platform)
        return jnp.log(k) if self.log else k


@register("objective", "hover_efficiency")
class HoverEfficiency(AbstractDesignTerm):
    """Hover efficiency ``eta`` (:func:`jaxrotor.analysis.hover_efficiency`): larger is better.

    ``cos(alpha_0) cos(beta_0)`` for the symmetric tilted hexarotor; cost ``-eta``.
    """

    sense: ClassVar[int] = -1
    name: ClassVar[str] = "hover_efficiency"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` in ``(0, 1]``."""
        return hover_efficiency(design.platform)


@register("objective", "lateral_capability", options={
    "n_directions": Option(int, ge=1, doc="horizontal directions"), "temperature": _TEMPERATURE})
class LateralCapability(AbstractDesignTerm):
    """Lateral-force capability at level hover in units of the weight ``m g``: larger is better.

    :func:`jaxrotor.analysis.smooth_lateral_force_capability` (barrier-smoothed
    linear programs under the input bounds, soft minimum over ``n_directions``
    horizontal directions) divided by ``m g``. Needs finite ``rotor_speed_max`` and a hover
    input strictly inside the bounds (else NaN, which the problem's loss penalises).

    Attributes:
        n_directions: number of horizontal directions (static).
        temperature: soft-min temperature as a fraction of ``m g`` (static).
    """

    n_directions: int = eqx.field(static=True, default=12)
    temperature: float = eqx.field(static=True, default=1e-3)
    sense: ClassVar[int] = -1
    name: ClassVar[str] = "lateral_capability"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` capability / (m g), dimensionless."""
        c = smooth_lateral_force_capability(design.platform, n_directions=self.n_directions,
                                            temperature=self.temperature)
        return c / design.platform.weight


# --------------------------------------------------------------------------- rotor-loss margin


@register("objective", "rotor_loss_margin", options={"temperature": _TEMPERATURE})
class RotorLossMargin(AbstractDesignTerm):
    """Hover margin after the worst single rotor loss (:func:`jaxrotor.analysis.rotor_loss_margin`): larger is better.

    Attributes:
        temperature: soft-min temperature over the lost rotor (static).
    """

    temperature: float = eqx.field(static=True, default=1e-3)
    sense: ClassVar[int] = -1
    name: ClassVar[str] = "rotor_loss_margin"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless margin (negative when some single loss leaves no zero-moment input)."""
        return rotor_loss_margin(design.platform, temperature=self.temperature)


@register("objective", "hover_power")
class HoverPower(AbstractDesignTerm):
    """Mechanical hover power :func:`jaxrotor.analysis.hover_power` [W]: smaller is better.

    On a platform built from parts it prices every gram and the propeller: a longer arm
    (heavier) or a smaller propeller (higher disc loading) costs watts.
    """

    sense: ClassVar[int] = 1
    name: ClassVar[str] = "hover_power"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` [W]."""
        return hover_power(design.platform)


@register("objective", "angular_authority", options={
    "axes": Option(tuple, doc="body axes to take the minimum over (0 x, 1 y, 2 z)")})
class AngularAuthority(AbstractDesignTerm):
    """Weakest angular-acceleration authority at hover (:func:`jaxrotor.analysis.angular_authority`)
    over ``axes`` [rad/s^2]: larger is better.

    Torque grows with the arm length and inertia with its square, so on a platform built
    from parts this term has an optimum arm length; with a frozen inertia it grows without bound.

    Attributes:
        axes: static tuple of body axes (default roll and pitch, ``(0, 1)``).
    """

    axes: tuple = eqx.field(static=True, default=(0, 1))
    sense: ClassVar[int] = -1
    name: ClassVar[str] = "angular_authority"

    def __init__(self, axes=(0, 1)):
        self.axes = tuple(int(a) for a in axes)

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` [rad/s^2]."""
        return jnp.min(angular_authority(design.platform)[jnp.asarray(self.axes)])


# --------------------------------------------------------------------------- force polytopes


class _AbstractPolytopeTerm(AbstractDesignTerm):
    """A measure of the zero-moment force set ``F_B`` (:func:`jaxrotor.analysis.zero_moment_measures`); larger is better.

    Exact (not smoothed) and differentiable for ``n >= 6`` rotors with ``rank G = 6``
    and finite ``rotor_speed_max``; ``normalize=True`` divides by ``(m g)^k`` (``k`` the
    dimension) so the measure is dimensionless.
    """

    index: eqx.AbstractClassVar[int]
    power: eqx.AbstractClassVar[int]
    normalize: eqx.AbstractVar[bool]
    sense: ClassVar[int] = -1

    def check(self, design) -> None:
        """Refuse a rotor without a finite ``rotor_speed_max``: ``F_B`` is then unbounded and has no finite measure."""
        top = design.platform.rotor_speed_max
        if is_concrete(top) and not np.all(np.isfinite(np.asarray(top))):
            raise parameter_error("rotor_speed_max", top, f"the objective {self.name} measures the zero-moment force "
                                  "set, which an unbounded rotor speed makes unbounded",
                                  "give every rotor a finite rotor_speed_max [rad/s], e.g. 700")

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` in N^k, or in (m g)^k with ``normalize``."""
        m = zero_moment_measures(design.platform)[self.index]
        return m / design.platform.weight ** self.power if self.normalize else m


@register("objective", "zero_moment_volume", options={"normalize": _NORMALIZE})
class ZeroMomentVolume(_AbstractPolytopeTerm):
    """Volume of the zero-moment force set ``F_B = {F u : M u = 0, u in bounds}`` [N^3]
    (:func:`jaxrotor.analysis.zero_moment_force_volume`): larger is better.

    Attributes:
        normalize: static; divide by ``(m g)^3``.
    """

    normalize: bool = eqx.field(static=True, default=False)
    index: ClassVar[int] = 0
    power: ClassVar[int] = 3
    name: ClassVar[str] = "zero_moment_volume"


@register("objective", "hover_section_area", options={"normalize": _NORMALIZE})
class HoverSectionArea(_AbstractPolytopeTerm):
    """Area of the hover section ``F_B ∩ {f_z = m g}`` [N^2]
    (:func:`jaxrotor.analysis.hover_section_area`): the lateral forces held at level hover. Larger is better.

    Attributes:
        normalize: static; divide by ``(m g)^2``.
    """

    normalize: bool = eqx.field(static=True, default=False)
    index: ClassVar[int] = 1
    power: ClassVar[int] = 2
    name: ClassVar[str] = "hover_section_area"


@register("objective", "volume_above_hover", options={"normalize": _NORMALIZE})
class VolumeAboveHover(_AbstractPolytopeTerm):
    """Volume of ``F_B ∩ {f_z >= m g}`` [N^3] (:func:`jaxrotor.analysis.volume_above_hover`): larger is better.

    Attributes:
        normalize: static; divide by ``(m g)^3``.
    """

    normalize: bool = eqx.field(static=True, default=False)
    index: ClassVar[int] = 2
    power: ClassVar[int] = 3
    name: ClassVar[str] = "volume_above_hover"


# --------------------------------------------------------------------------- closed-loop stability


@register("objective", "stability_margin", options={
    "temperature": Option(float, gt=0, unit="1/s", doc="soft-max temperature over the growth rates",
                          why="a smoothing temperature must be > 0")})
class StabilityMargin(AbstractDesignTerm):
    """Smooth stability margin of the closed loop linearised about hover [1/s]: larger is better.

    :func:`jaxrotor.analysis.stability_margin` of ``design.platform``, ``design.controller`` and
    ``design.flight`` (``-T log sum exp(Re s_i / T)``, ``docs/stability.md``): positive when every mode
    decays, ``-max Re s`` minus at most ``T log N``. Needs the design's controller and flight but flies
    nothing.

    Attributes:
        temperature: soft-max temperature ``T`` [1/s] (static).
    """

    temperature: float = eqx.field(static=True, default=0.1)
    sense: ClassVar[int] = -1
    name: ClassVar[str] = "stability_margin"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` [1/s]."""
        from ..analysis.stability import stability_margin

        if getattr(design, "flight", None) is None or getattr(design, "controller", None) is None:
            raise ValueError("objective `stability_margin` linearises the closed loop, but the design has no "
                             "controller or flight. Fix: build Design(platform, controller, Flight(reference, ...)) "
                             "(in a TOML problem: add [reference]).")
        return stability_margin(design.platform, design.controller, design.flight, temperature=self.temperature)
