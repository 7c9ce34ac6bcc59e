"""Electrical terms: endurance, battery energy, peak motor current and payload capacity (:mod:`jaxrotor.electrical`).

The objective measures of a vehicle built from parts with a motor ``kv`` and a battery
(``docs/energy.md``), registered as ``[objective.<name>]`` TOML kinds:

* :class:`Endurance` [s], maximised. ``mode = "hover"`` (default, a design term): the hover
  endurance :func:`jaxrotor.electrical.endurance_hover` from ``soc0`` down to ``soc_floor``;
  ``mode = "profile"`` (flies): the flown profile repeated at its mean terminal power,
  ``endurance_profile_s`` of :func:`jaxrotor.metrics.electrical_metrics`.
* ``energy`` with ``source = "battery"`` [Wh], minimised: ``int V_t I_b dt`` at the battery's
  terminals over the flight, ``energy_wh`` of :func:`jaxrotor.metrics.electrical_metrics` (an option
  of :class:`jaxrotor.optimize.flight_terms.Energy`, whose default stays the rotor-power proxy).
* :class:`PeakCurrent` [A], minimised: ``T log sum_{k,i} exp(I_i(t_k) / T)``, a smooth maximum of
  the motor currents over the saved times and the rotors.
* :class:`PayloadCapacity` [kg], maximised: :func:`jaxrotor.electrical.payload_capacity`, the
  largest payload at which the vehicle keeps the thrust-to-weight ratio ``twr_margin``.

Each term's :meth:`check` refuses, before anything is traced, a design that lacks what it reads
(parts with a motor ``kv`` and a battery; for the flight terms a motor that draws current,
``[actuators.motor] kind = "electric"``), naming the fix; the TOML loaders call it at load time.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jax import Array
from jax.scipy.special import logsumexp
from jaxtyping import Float

from .. import electrical as _el
from ..metrics import electrical_metrics
from ..registry import Option, register
from .terms import AbstractDesignTerm, AbstractFlightTerm, AbstractMeasureTerm

__all__ = ["ENDURANCE_MODES", "Endurance", "PeakCurrent", "PayloadCapacity", "check_electrical_parts",
           "check_electric_flight"]

#: ``[objective.endurance] mode`` choices.
ENDURANCE_MODES = ("hover", "profile")

_PARTS_FIX = ("build the vehicle from parts with [parts.motor] kv, resistance, no_load_current, max_current and a "
              "[parts.battery] (cells, capacity_mah, internal_resistance)")


def check_electrical_parts(design, term: str) -> None:
    """Refuse a design whose platform lacks parts with a motor ``kv`` and a battery (``ValueError`` naming ``term``)."""
    platform = design.platform
    if _el.has_electrical_parts(platform):
        return
    parts = platform.parts
    what = ("has no parts" if parts is None else "has no [parts.battery]" if parts.battery is None
            else "has a motor without `kv`")
    raise ValueError(f"objective `{term}` reads the electrical model, but platform `{platform.name}` {what}. "
                     f"Fix: {_PARTS_FIX}.")


def check_electric_flight(design, term: str, reads: str) -> None:
    """Refuse a design whose flight does not integrate the battery: no flight, or a motor that draws no current.

    Args:
        design: the :class:`~jaxrotor.optimize.Design`.
        term: the term's TOML name (for the message).
        reads: what the term reads from the flight, in words (for the message).
    """
    check_electrical_parts(design, term)
    flight = getattr(design, "flight", None)
    if flight is None:
        raise ValueError(f"objective `{term}` reads {reads} of the flight, but the design has no flight. Fix: add "
                         "[reference] (and [solver] adaptive = false) and fly [actuators.motor] kind = \"electric\".")
    motor = flight.actuators.motor
    if not motor.draws_current():
        raise ValueError(f"objective `{term}` reads {reads} of the flight, but its motor "
                         f"({type(motor).__name__}) draws no current from the battery. Fix: set [actuators.motor] "
                         "kind = \"electric\" (with speed_bandwidth in rad/s).")


@register("objective", "endurance", options={
    "mode": Option(str, choices=ENDURANCE_MODES, doc="hover: the hover endurance of the parts (no flight); profile: "
                   "the flown profile repeated at its mean terminal power (an electric flight)")})
class Endurance(AbstractMeasureTerm):
    """Endurance [s] from the battery's ``soc0`` down to its ``soc_floor``: larger is better.

    ``mode="hover"`` (default): :func:`jaxrotor.electrical.endurance_hover` of the design's platform,
    ``t = int_{floor}^{soc0} Q_cap / I_b(P_h, s) ds`` at the hover's terminal power ``P_h``; a design
    term (nothing flown; ``needs_flight`` false). ``mode="profile"``: the flown trajectory's
    ``endurance_profile_s`` (:func:`jaxrotor.metrics.electrical_metrics`), the same integral at the
    flight's mean terminal power ``int V_t I_b dt / T``; needs an electric flight. Both are
    differentiable in every platform and parts leaf (capacity, propeller, arm length, tilt).

    Attributes:
        mode: ``"hover"`` or ``"profile"`` (static).
    """

    mode: str = eqx.field(static=True, default="hover")
    sense: ClassVar[int] = -1
    name: ClassVar[str] = "endurance"

    def __init__(self, mode: str = "hover"):
        if mode not in ENDURANCE_MODES:
            raise ValueError(f"Endurance parameter `mode` = {mode!r} is invalid. Fix: use 'hover' (the hover "
                             "endurance of the parts) or 'profile' (the flown profile's, an electric flight).")
        self.mode = mode

    @property
    def needs_flight(self) -> bool:
        """``mode == "profile"``."""
        return self.mode == "profile"

    def check(self, design) -> None:
        """Parts with a motor ``kv`` and a battery; for ``mode="profile"`` also an electric flight."""
        if self.mode == "profile":
            check_electric_flight(design, "endurance", "the mean battery power (mode = \"profile\")")
        else:
            check_electrical_parts(design, "endurance")

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` [s]."""
        if self.mode == "profile":
            return electrical_metrics(traj, design.platform).endurance_profile_s
        return _el.endurance_hover(design.platform)


@register("objective", "peak_current", options={
    "temperature": Option(float, gt=0, unit="A", doc="soft-max temperature over the saved times and rotors",
                          why="a smoothing temperature must be > 0")})
class PeakCurrent(AbstractFlightTerm):
    """Smooth peak motor current of the flight [A]: smaller is better.

    ``T log sum_{k,i} exp(I_i(t_k) / T)`` over the saved times ``t_k`` and the rotors ``i``
    (``traj.electrical.motor_current``), a log-sum-exp soft maximum: it lies in
    ``[max I, max I + T ln N]`` (``N`` the number of samples times rotors) and its gradient is
    spread over the samples within a few ``T`` of the peak (a hard ``max`` sends it to one sample
    only). Needs an electric flight (``[actuators.motor] kind = "electric"``).

    Attributes:
        temperature: ``T`` [A] (static, default 0.05).
    """

    temperature: float = eqx.field(static=True, default=0.05)
    sense: ClassVar[int] = 1
    name: ClassVar[str] = "peak_current"

    def __init__(self, temperature: float = 0.05):
        if not float(temperature) > 0:
            raise ValueError(f"PeakCurrent parameter `temperature` = {temperature!r} is invalid. Fix: pass a "
                             "temperature > 0 in A, e.g. 0.05.")
        self.temperature = float(temperature)

    def check(self, design) -> None:
        """Parts with a motor ``kv`` and a battery and an electric flight."""
        check_electric_flight(design, "peak_current", "the motor currents")

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` [A]."""
        if traj.electrical is None:
            raise ValueError("objective `peak_current`: the trajectory has no motor currents (traj.electrical is "
                             "None). Fix: fly an electric motor ([actuators.motor] kind = \"electric\").")
        current = traj.electrical.motor_current
        T = jnp.asarray(self.temperature, current.dtype)
        return T * logsumexp(current / T)


@register("objective", "payload_capacity", options={
    "twr_margin": Option(float, ge=1.0, doc="thrust-to-weight ratio kept with the payload on board",
                         why="a vehicle carrying the payload must at least hover (thrust-to-weight >= 1)")})
class PayloadCapacity(AbstractDesignTerm):
    """Payload capacity [kg] (:func:`jaxrotor.electrical.payload_capacity`): larger is better.

    ``m_p = T_max / (twr_margin g) - m``: the largest payload at the centre of mass with which the
    rotors, at full throttle on the pack's nominal voltage (the sag of ``R_int`` included), still
    give ``twr_margin`` times the loaded weight along the hover direction
    (:func:`jaxrotor.electrical.max_vertical_thrust`); negative when the empty vehicle lacks that
    margin. A design term: needs parts with a motor ``kv`` and a battery.

    Attributes:
        twr_margin: required thrust-to-weight ratio (static, default 2.0, >= 1).
    """

    twr_margin: float = eqx.field(static=True, default=2.0)
    sense: ClassVar[int] = -1
    name: ClassVar[str] = "payload_capacity"

    def __init__(self, twr_margin: float = 2.0):
        if not float(twr_margin) >= 1.0:
            raise ValueError(f"PayloadCapacity parameter `twr_margin` = {twr_margin!r} is invalid. Fix: pass a "
                             "thrust-to-weight ratio >= 1, e.g. 2.0.")
        self.twr_margin = float(twr_margin)

    def check(self, design) -> None:
        """Parts with a motor ``kv`` and a battery."""
        check_electrical_parts(design, "payload_capacity")

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` [kg]."""
        return _el.payload_capacity(design.platform, self.twr_margin)
