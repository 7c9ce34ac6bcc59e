"""Flight terms: objective measures of the flown trajectory (tracking, effort, energy, saturation, wrench).

Each is an :class:`~jaxrotor.optimize.terms.AbstractFlightTerm` (``needs_flight = True``)
whose measure is a trapezoidal time mean of a :mod:`jaxrotor.metrics` quantity (the table
in :mod:`jaxrotor.optimize.objectives`), registered as an ``[objective.<name>]`` TOML kind.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jaxtyping import Float

from .._util import as_float
from ..metrics import (effort_ratio, electrical_metrics, mean_norm, orientation_error, position_error,
                       reference_orientation_error, reference_power, rms_norm, rotor_power, speed_margin)
from ..numerics import time_mean
from ..registry import Option, register
from .terms import AbstractFlightTerm

__all__ = ["ATTITUDES", "ENERGY_SOURCES", "Tracking", "Effort", "Energy", "SaturationMargin", "WrenchShortfall"]

#: What the tracking term's attitude error is measured against (``[objective.tracking] attitude``).
ATTITUDES = ("commanded", "reference")


@register("objective", "tracking", options={
    "metric": Option(str, choices=("rmse", "mae"), doc="RMSE or mean error"),
    "position": Option(float, ge=0, unit="1/m", doc="weight of the position error", why="a weight must be >= 0 (the objective is a cost)"),
    "orientation": Option(float, ge=0, unit="1/rad", doc="weight of the orientation error", why="a weight must be >= 0 (the objective is a cost)"),
    "attitude": Option(str, choices=ATTITUDES, doc="the attitude e_R is measured against: the controller's commanded "
                       "attitude or the reference's")})
class Tracking(AbstractFlightTerm):
    """Tracking error of the flight (eqs. 14-15).

    ``metric="rmse"``: ``position * rms_norm(e_p) + orientation * rms_norm(e_R)``
    (``rms_norm(e) = sqrt(mean_t |e|^2)``); ``metric="mae"``: the same with
    ``mean_norm(e) = mean_t |e|``; ``|.|`` the Euclidean norm over the three
    components (:mod:`jaxrotor.metrics`). Units: metres for the position part,
    radians for the orientation part (weights convert).

    ``e_R`` is measured against the attitude the controller commands
    (``attitude="commanded"``, :func:`~jaxrotor.metrics.orientation_error`; the
    reference attitude for a fully actuated controller) or against the reference
    attitude (``attitude="reference"``, :func:`~jaxrotor.metrics.reference_orientation_error`).
    For an under-actuated vehicle the latter holds the tilt the path needs, a floor no
    gain can lower.

    Attributes:
        metric: ``"rmse"`` or ``"mae"`` (static).
        position: weight of the position error [1/m].
        orientation: weight of the orientation error [1/rad].
        attitude: ``"commanded"`` (default) or ``"reference"`` (static).
    """

    position: Array
    orientation: Array
    metric: str = eqx.field(static=True, default="rmse")
    attitude: str = eqx.field(static=True, default="commanded")
    sense: ClassVar[int] = 1

    def __init__(self, metric: str = "rmse", position: float = 1.0, orientation: float = 0.0,
                 attitude: str = "commanded"):
        if metric not in ("rmse", "mae"):
            raise ValueError(f"Tracking parameter `metric` = {metric!r} is invalid. Fix: use 'rmse' or 'mae'.")
        if attitude not in ATTITUDES:
            raise ValueError(f"Tracking parameter `attitude` = {attitude!r} is invalid. Fix: use 'commanded' (the "
                             "attitude the controller commands) or 'reference' (the reference's attitude).")
        self.metric, self.attitude = metric, attitude
        self.position, self.orientation = as_float(position), as_float(orientation)

    @property
    def name(self) -> str:
        """``tracking_rmse`` or ``tracking_mae``."""
        return f"tracking_{self.metric}"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` weighted RMSE or MAE [m (+ rad)]."""
        norm = rms_norm if self.metric == "rmse" else mean_norm
        e_R = orientation_error(traj) if self.attitude == "commanded" else reference_orientation_error(traj)
        return self.position * norm(position_error(traj)) + self.orientation * norm(e_R)


@register("objective", "effort")
class Effort(AbstractFlightTerm):
    """Control effort :func:`~jaxrotor.metrics.effort_ratio`: ``mean_t sum_i c_f,i |u_i| / (m g)``.

    ``1`` for a flat design in hover, ``1 / eta`` for a tilted one (see :class:`HoverEfficiency`).
    """

    sense: ClassVar[int] = 1
    name: ClassVar[str] = "effort"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless."""
        return effort_ratio(traj, design.platform)


#: What :class:`Energy` measures (``[objective.energy] source``).
ENERGY_SOURCES = ("rotor", "battery")


@register("objective", "energy", options={
    "normalize": Option(bool, doc="source rotor: divide by the flat design's hover power (default true, else watts); "
                        "source battery: divide by the pack's nominal energy (default false: Wh)"),
    "source": Option(str, choices=ENERGY_SOURCES, doc="rotor: the power proxy sum_i c_tau,i |omega_i|^3; battery: "
                     "the energy drawn from the battery (an electric flight)")})
class Energy(AbstractFlightTerm):
    """Energy of the flight: the rotors' power proxy (``source="rotor"``, default) or the battery's energy.

    ``source="rotor"``: ``mean_t sum_i c_tau,i |omega_i|^3`` (:func:`~jaxrotor.metrics.rotor_power`),
    with ``normalize=True`` (its default) divided by :func:`~jaxrotor.metrics.reference_power`, so a
    flat design hovering scores 1 and a tilted one about ``eta^(-3/2)`` (the ``power_ratio`` of
    :func:`jaxrotor.metrics.flight_metrics`); otherwise the mean power in watts.

    ``source="battery"``: the energy the battery delivers at its terminals over the flight,
    ``int V_t I_b dt`` [Wh] (``energy_wh`` of :func:`jaxrotor.metrics.electrical_metrics`, exact to
    the plant's integrator); with ``normalize=True`` divided by the pack's nominal energy
    ``cells x 3.7 V x capacity`` [Wh] (a fraction of the pack). Needs an electric flight
    (``[actuators.motor] kind = "electric"``, a platform from parts with a motor ``kv`` and a battery);
    named ``battery_energy`` in breakdowns.

    Attributes:
        normalize: static flag (``None`` at construction: true for the rotor source, false for the battery).
        source: ``"rotor"`` or ``"battery"`` (static).
    """

    normalize: bool = eqx.field(static=True, default=True)
    source: str = eqx.field(static=True, default="rotor")
    sense: ClassVar[int] = 1

    def __init__(self, normalize: bool | None = None, source: str = "rotor"):
        if source not in ENERGY_SOURCES:
            raise ValueError(f"Energy parameter `source` = {source!r} is invalid. Fix: use 'rotor' (the power proxy) "
                             "or 'battery' (the battery's energy, an electric flight).")
        self.source = source
        self.normalize = (source == "rotor") if normalize is None else bool(normalize)

    @property
    def name(self) -> str:
        """``energy`` (rotor) or ``battery_energy``."""
        return "energy" if self.source == "rotor" else "battery_energy"

    def check(self, design) -> None:
        """The battery source needs parts with a motor ``kv`` and a battery and an electric flight."""
        if self.source == "battery":
            from .electrical_terms import check_electric_flight  # here: the electrical kinds register after these

            check_electric_flight(design, "energy", "the battery's energy (source = \"battery\")")

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless (or [W]); the battery source [Wh] (or a fraction of the pack)."""
        if self.source == "battery":
            wh = electrical_metrics(traj, design.platform).energy_wh
            if not self.normalize:
                return wh
            b = design.platform.parts.battery
            return wh / (b.nominal_voltage * b.capacity_mah / 1000.0).astype(wh.dtype)
        mean = time_mean(traj.t, rotor_power(traj, design.platform.c_tau))
        return mean / reference_power(design.platform) if self.normalize else mean


@register("objective", "saturation", options={
    "threshold": Option(float, ge=0, le=0.999, doc="fraction of the range where the cost starts",
                        why="the threshold is a fraction of the rotor's range in [0, 1)")})
class SaturationMargin(AbstractFlightTerm):
    """Smooth saturation cost: how close the rotor speeds come to *either* bound.

    With ``m_i(t)`` the :func:`~jaxrotor.metrics.speed_margin` (the headroom of rotor
    ``i`` to its nearer speed bound as a fraction of its range) and the band
    ``b = 1 - threshold``,

        ``cost = mean_t sum_i relu(b - m_i(t))^2 / b^2``:

    zero while every rotor keeps at least ``b`` of its range from both bounds, about
    1 per rotor pinned at a bound for the whole flight. Both bounds matter: under a
    fast fixed-attitude manoeuvre the rotors that must *reduce* thrust reach
    ``rotor_speed_min = 0`` first. Unbounded rotors (``rotor_speed_max = inf``) contribute 0.

    Attributes:
        threshold: ``()`` the cost starts when a rotor uses more than this fraction of its
            range towards a bound (default 0.9, i.e. a 10 % band at each end).
    """

    threshold: Array
    sense: ClassVar[int] = 1
    name: ClassVar[str] = "saturation"

    def __init__(self, threshold: float = 0.9):
        self.threshold = as_float(threshold)

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless cost."""
        band = 1.0 - self.threshold
        excess = jax.nn.relu(band - speed_margin(traj, design.platform)) / band
        return jnp.mean(jnp.sum(excess**2, axis=-1))


@register("objective", "wrench_shortfall")
class WrenchShortfall(AbstractFlightTerm):
    """Unmet wrench ``mean_t |S (w_achieved - w_requested)|^2`` (0 unless the allocator saturates).

    ``S`` divides forces by the weight ``m g`` and moments by ``m g L`` (``L`` the arm length).
    """

    sense: ClassVar[int] = 1
    name: ClassVar[str] = "wrench_shortfall"

    def measure(self, design, traj=None) -> Float[Array, ""]:
        """``()`` dimensionless."""
        W = design.platform.weight
        L = design.platform.arm_length
        scale = jnp.concatenate([jnp.full((3,), 1.0 / W), jnp.full((3,), 1.0 / (W * L))])
        return jnp.mean(jnp.sum((traj.wrench_error * scale) ** 2, axis=-1))
