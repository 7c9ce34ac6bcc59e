"""Electrical propulsion and energy: motor, ESC and battery, hover power, endurance and payload.

Pure, differentiable JAX functions of the parts (:mod:`jaxrotor.design.parts`): every quantity is a
function of array leaves, with no Python control flow on values, in float64 or float32 (the working
type is the platform's). SI units throughout; ``K_v`` in rad/s/V (``Motor.kv_si``), ``k_t = 1/K_v``.

The chain, per rotor ``i`` at speed ``omega_i`` with drag coefficient ``c_tau,i``::

    Q_i     = c_tau,i omega_i^2                      shaft torque [N m]
    I_i     = K_v Q_i + I_0                          motor current [A]     (k_t (I - I_0) = Q)
    V_m,i   = R I_i + omega_i / K_v                  motor voltage [V]     (winding + back-EMF)
    P_m,i   = V_m,i I_i                              motor electrical power [W]
    P_esc,i = V_m,i I_i / eta                        ESC input power [W]

and the battery (``cells`` in series, per-cell open-circuit voltage ``ocv(SoC)``, internal
resistance ``R_int``, capacity ``Q_cap = 3.6 capacity_mah`` [A s]) supplies ``P = sum_i P_esc,i``
at its terminals::

    OCV = cells ocv(SoC),   P = (OCV - R_int I_b) I_b,
    I_b = 2 P / (OCV + sqrt(OCV^2 - 4 R_int P))     (the small root; finite gradient at R_int = 0)
    V_t = OCV - R_int I_b,  throttle_i = V_m,i / V_t

Energy identity (exact): ``OCV I_b = sum_i [Q_i omega_i + R I_i^2 + omega_i I_0/K_v
+ (1/eta - 1) V_m,i I_i] + R_int I_b^2`` (shaft work, copper, no-load, ESC and battery losses).

Endurance at constant terminal power ``P`` (hover, or a flown profile repeated at its mean power):
``dSoC/dt = -I_b(SoC)/Q_cap``, so ``t = int_{floor}^{soc0} Q_cap / I_b(P, s) ds
= Q_cap/(2P) int (OCV(s) + sqrt(OCV(s)^2 - 4 R_int P)) ds``, integrated by Gauss-Legendre on each
interval of the OCV table (exact kinks), and in closed form (:func:`constant_power_discharge_time`).

Temperature effects on the battery (capacity and resistance) are out of scope. ``docs/energy.md``
derives every equation and gives a worked example.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import ArrayLike, Float

from .allocation import hover_inputs
from .design.parts import (ESC, LIPO_CELL_VOLTS, LIPO_SOC, Battery, Motor, OCVCurve, default_ocv_curve,
                           rotor_speed_limit)
from .design.platform import Platform

__all__ = [
    "LIPO_SOC",
    "LIPO_CELL_VOLTS",
    "OCVCurve",
    "ESC",
    "default_ocv_curve",
    "pack_ocv",
    "battery_current",
    "terminal_voltage",
    "capacity_as",
    "MotorSteadyState",
    "motor_steady_state",
    "ElectricalState",
    "electrical_state",
    "PowerBreakdown",
    "power_breakdown",
    "HoverPoint",
    "has_electrical_parts",
    "missing_electrical_parts",
    "hover_point",
    "discharge_time",
    "constant_power_discharge_time",
    "endurance_hover",
    "endurance_profile",
    "max_vertical_thrust",
    "payload_capacity",
    "electric_motor_rates",
    "EnergyState",
    "WORK_TERMS",
    "ElectricOutputs",
    "electric_drive",
    "top_speed",
    "sizing_report",
    "format_sizing_report",
]

#: Gauss-Legendre points per OCV-table interval (the integrand is smooth there: 12 points reach
#: float64 round-off for every curve the tests try).
GAUSS_POINTS = 12


def _curve(ocv: OCVCurve | None, battery: Battery) -> OCVCurve:
    """``ocv``, or the battery's own curve when it is ``None``."""
    return battery.ocv if ocv is None else ocv


def _esc(esc: ESC | None, parts=None) -> ESC:
    """``esc``, else the parts' ESC, else ``ESC()`` (0.95)."""
    if esc is not None:
        return esc
    return parts.esc if parts is not None and parts.esc is not None else ESC()


def pack_ocv(battery: Battery, soc: ArrayLike, ocv: OCVCurve | None = None) -> Array:
    """Pack open-circuit voltage ``OCV = cells ocv(SoC)`` [V] (same shape as ``soc``).

    Args:
        battery: the pack (``cells`` in series). soc: state of charge in ``[0, 1]``.
        ocv: per-cell curve; ``None``: the battery's own (``battery.ocv``).
    """
    return battery.cells * _curve(ocv, battery)(soc)


def battery_current(power: ArrayLike, ocv_pack: ArrayLike, r_int: ArrayLike) -> Array:
    """Battery current ``I_b`` [A] delivering terminal power ``power`` [W].

    Solves ``P = (OCV - R_int I_b) I_b`` for its small root, written as
    ``I_b = 2 P / (OCV + sqrt(OCV^2 - 4 R_int P))`` (equal to
    ``(OCV - sqrt(OCV^2 - 4 R_int P)) / (2 R_int)``, and to ``P / OCV`` at ``R_int = 0``, with a finite
    gradient there). NaN when ``P > OCV^2 / (4 R_int)`` (more than the pack can deliver).

    Args:
        power: ``P`` [W], any shape. ocv_pack: ``OCV`` [V]. r_int: ``R_int`` [Ohm] (broadcast).
    """
    return 2 * power / (ocv_pack + jnp.sqrt(ocv_pack**2 - 4 * r_int * power))


def terminal_voltage(ocv_pack: ArrayLike, r_int: ArrayLike, current: ArrayLike) -> Array:
    """Terminal voltage ``V_t = OCV - R_int I_b`` [V]."""
    return ocv_pack - r_int * current


def capacity_as(battery: Battery) -> Array:
    """Capacity ``Q_cap`` [A s] = ``capacity_mah x 3.6``."""
    return battery.capacity_mah * 3.6


# --------------------------------------------------------------------------- motor steady state


class MotorSteadyState(NamedTuple):
    """One motor (or an array of them) in steady state, from :func:`motor_steady_state`.

    Attributes:
        torque: shaft torque ``Q = c_tau omega^2`` [N m].
        current: ``I = K_v Q + I_0`` [A].
        voltage: ``V_m = R I + omega / K_v`` [V].
        power: electrical ``V_m I`` [W].
    """

    torque: Array
    current: Array
    voltage: Array
    power: Array


def motor_steady_state(omega: ArrayLike, c_tau: ArrayLike, motor: Motor) -> MotorSteadyState:
    """Steady state of a motor turning its propeller at ``omega``.

    ``Q = c_tau omega^2``, ``I = K_v Q + I_0`` (torque constant ``k_t = 1/K_v``, ``K_v`` in rad/s/V),
    ``V_m = R I + omega / K_v``, ``P_m = V_m I``.

    Args:
        omega: rotor speed [rad/s], e.g. ``(n,)``. c_tau: drag coefficient [N m s^2/rad^2] (broadcast).
        motor: the motor (``kv``, ``resistance``, ``no_load_current``); ``kv`` must be given.
    """
    kv = _kv(motor)
    q = c_tau * omega**2
    i = kv * q + motor.no_load_current
    v = motor.resistance * i + omega / kv
    return MotorSteadyState(q, i, v, v * i)


def _kv(motor: Motor) -> Array:
    if motor.kv is None:
        raise ValueError("Electrical model: the motor has no `kv` (speed constant). Fix: give [parts.motor] kv in "
                         "rpm/V (with resistance, no_load_current and max_current).")
    return motor.kv_si


class ElectricalState(NamedTuple):
    """The whole electrical chain at given rotor speeds and state of charge (:func:`electrical_state`).

    Per rotor ``(n,)``: ``omega`` [rad/s], ``torque`` [N m], ``motor_current`` [A], ``motor_voltage`` [V],
    ``motor_power`` (``V_m I``) [W], ``esc_power`` (``V_m I / eta``) [W], ``mechanical_power`` (``Q omega``) [W],
    ``throttle`` (``V_m / V_t``). Pack ``()``: ``soc``, ``ocv`` [V], ``battery_current`` [A],
    ``terminal_voltage`` [V], ``battery_power`` (``V_t I_b = sum esc_power``) [W].
    """

    omega: Array
    torque: Array
    motor_current: Array
    motor_voltage: Array
    motor_power: Array
    esc_power: Array
    mechanical_power: Array
    throttle: Array
    soc: Array
    ocv: Array
    battery_current: Array
    terminal_voltage: Array
    battery_power: Array


def electrical_state(omega: Float[ArrayLike, " n"], c_tau: Float[ArrayLike, " n"], motor: Motor, battery: Battery,
                     soc: ArrayLike = 1.0, *, esc: ESC | None = None, ocv: OCVCurve | None = None
                     ) -> ElectricalState:
    """Motors, ESCs and battery in steady state at rotor speeds ``omega`` and state of charge ``soc``.

    Per rotor :func:`motor_steady_state`, ``P_esc,i = V_m,i I_i / eta``; the battery supplies
    ``P = sum_i P_esc,i``: ``I_b`` from :func:`battery_current`, ``V_t = OCV - R_int I_b``,
    ``throttle_i = V_m,i / V_t`` (above 1: the pack cannot drive that speed).

    Args:
        omega: ``(n,)`` rotor speeds [rad/s]. c_tau: ``(n,)`` [N m s^2/rad^2].
        motor: the motor part.
        battery: the battery part. soc: ``()`` state of charge.
        esc: ``None`` for ``ESC()`` (0.95). ocv: per-cell curve, ``None`` for the default Li-Po curve.
    """
    esc = _esc(esc)
    omega = jnp.asarray(omega)
    dt = omega.dtype
    m = motor_steady_state(omega, c_tau, motor)
    eta = esc.efficiency.astype(dt)
    p_esc = m.power / eta
    p = jnp.sum(p_esc, axis=-1)
    soc = jnp.asarray(soc, dtype=dt)
    e = pack_ocv(battery, soc, ocv).astype(dt)
    r = battery.internal_resistance.astype(dt)
    i_b = battery_current(p, e, r)
    v_t = terminal_voltage(e, r, i_b)
    return ElectricalState(omega=omega, torque=m.torque, motor_current=m.current, motor_voltage=m.voltage,
                           motor_power=m.power, esc_power=p_esc, mechanical_power=m.torque * omega,
                           throttle=m.voltage / v_t[..., None], soc=soc, ocv=e, battery_current=i_b,
                           terminal_voltage=v_t, battery_power=v_t * i_b)


class PowerBreakdown(NamedTuple):
    """Where the battery's energy goes, summed over rotors (:func:`power_breakdown`), all [W].

    ``shaft + copper + no_load + esc + battery == total = OCV I_b`` exactly.
    """

    shaft: Array
    copper: Array
    no_load: Array
    esc: Array
    battery: Array
    total: Array


def power_breakdown(state: ElectricalState, motor: Motor, battery: Battery, esc: ESC | None = None) -> PowerBreakdown:
    """Loss breakdown of an :class:`ElectricalState` [W].

    shaft ``sum Q omega``; copper ``sum R I^2``; no-load ``sum omega I_0 / K_v``; ESC
    ``sum (1/eta - 1) V_m I``; battery ``R_int I_b^2``; total ``OCV I_b``. Their sum is the total
    because ``V_m I = R I^2 + omega I/K_v = R I^2 + Q omega + omega I_0/K_v`` and
    ``OCV I_b = V_t I_b + R_int I_b^2 = sum V_m I / eta + R_int I_b^2``.
    """
    dt = state.omega.dtype
    eta = _esc(esc).efficiency.astype(dt)
    kv = _kv(motor).astype(dt)
    i = state.motor_current
    return PowerBreakdown(
        shaft=jnp.sum(state.mechanical_power, axis=-1),
        copper=jnp.sum(motor.resistance.astype(dt) * i**2, axis=-1),
        no_load=jnp.sum(state.omega * motor.no_load_current.astype(dt) / kv, axis=-1),
        esc=jnp.sum((1 / eta - 1) * state.motor_power, axis=-1),
        battery=battery.internal_resistance.astype(dt) * state.battery_current**2,
        total=state.ocv * state.battery_current,
    )


# --------------------------------------------------------------------------- hover


class HoverPoint(NamedTuple):
    """Steady hover, electrically (:func:`hover_point`).

    Per rotor ``(n,)``: ``omega`` [rad/s], ``thrust`` (``c_f omega^2``, along the rotor axis) [N],
    ``torque`` [N m], ``motor_current`` [A], ``motor_voltage`` [V], ``motor_power`` (electrical
    ``V_m I``) [W], ``mechanical_power`` (``Q omega``) [W], ``throttle`` (``V_m / V_t``),
    ``figure_of_merit`` (``T^{3/2} / sqrt(2 rho A)`` over ``Q omega``, ``A = pi D^2/4``).
    Pack ``()``: ``soc``, ``ocv`` [V], ``battery_current`` [A], ``terminal_voltage`` [V],
    ``battery_power`` (terminal ``V_t I_b``) [W].
    """

    omega: Array
    thrust: Array
    torque: Array
    motor_current: Array
    motor_voltage: Array
    motor_power: Array
    mechanical_power: Array
    throttle: Array
    figure_of_merit: Array
    soc: Array
    ocv: Array
    battery_current: Array
    terminal_voltage: Array
    battery_power: Array


def has_electrical_parts(platform: Platform) -> bool:
    """Whether ``platform`` has what the electrical model needs: parts with a motor ``kv`` and a battery."""
    parts = platform.parts
    return parts is not None and parts.battery is not None and parts.motor.kv is not None


def missing_electrical_parts(platform: Platform) -> str | None:
    """What the electrical model lacks on ``platform``, as the end of a sentence (``"has no parts"``, ``"has no
    [parts.battery]"``, ``"has a motor without `kv`"``), or ``None`` when :func:`has_electrical_parts`."""
    parts = platform.parts
    if has_electrical_parts(platform):
        return None
    return ("has no parts" if parts is None else "has no [parts.battery]" if parts.battery is None
            else "has a motor without `kv`")


def _electric_parts(platform: Platform):
    parts = platform.parts
    what = missing_electrical_parts(platform)
    if what is not None:
        raise ValueError(f"Electrical model: platform `{platform.name}` {what}. Fix: build it from parts with "
                         "[parts.motor] kv, resistance, no_load_current, max_current and a [parts.battery] "
                         "(cells, capacity_mah, internal_resistance).")
    return parts


def _with_payload(platform: Platform, payload: ArrayLike) -> Platform:
    """The platform carrying an extra point mass ``payload`` [kg] at its centre of mass."""
    return eqx.tree_at(lambda p: p.mass, platform, platform.mass + jnp.asarray(payload, platform.mass.dtype))


def hover_point(platform: Platform, soc: ArrayLike = 1.0, *, payload: ArrayLike = 0.0, esc: ESC | None = None,
                ocv: OCVCurve | None = None) -> HoverPoint:
    """The electrical hover point of a platform built from parts.

    Rotor speeds ``omega_i = sqrt(u_h,i)`` from the platform's hover inputs
    ``u_h = G^+ [m g e_3; 0]`` (:func:`jaxrotor.allocation.hover_inputs`): a canted rotor
    (cant ``alpha``, dihedral ``beta``) spends part of its thrust sideways, so a symmetric tilted
    design needs ``u_h ~ 1 / (cos alpha cos beta)`` and power ``~ (cos alpha cos beta)^{-3/2}``.
    Then :func:`electrical_state` and the figure of merit.

    Args:
        platform: with parts (motor ``kv`` and a battery). soc: ``()`` state of charge.
        payload: extra mass at the centre of mass [kg]. esc, ocv: see :func:`electrical_state`.

    Returns:
        :class:`HoverPoint`. NaN speeds where ``u_h < 0`` (the platform cannot hover; see
        :func:`jaxrotor.analysis.static_hoverability`).
    """
    parts = _electric_parts(platform)
    p = _with_payload(platform, payload)
    omega = jnp.sqrt(hover_inputs(p))
    st = electrical_state(omega, p.c_tau, parts.motor, parts.battery, soc, esc=_esc(esc, parts), ocv=ocv)
    thrust = p.c_f * omega**2
    dt = omega.dtype
    area = math.pi * parts.propeller.diameter.astype(dt) ** 2 / 4
    ideal = thrust**1.5 / jnp.sqrt(2 * parts.air_density.astype(dt) * area)
    return HoverPoint(omega=omega, thrust=thrust, torque=st.torque, motor_current=st.motor_current,
                      motor_voltage=st.motor_voltage, motor_power=st.motor_power,
                      mechanical_power=st.mechanical_power, throttle=st.throttle,
                      figure_of_merit=ideal / st.mechanical_power, soc=st.soc, ocv=st.ocv,
                      battery_current=st.battery_current, terminal_voltage=st.terminal_voltage,
                      battery_power=st.battery_power)


# --------------------------------------------------------------------------- endurance


def _socs(battery: Battery, soc0, soc_floor):
    """``(soc_floor, soc0)``, each the battery's own (``battery.soc_floor``, ``battery.soc0``) when ``None``."""
    return (battery.soc_floor if soc_floor is None else soc_floor), (battery.soc0 if soc0 is None else soc0)


def _intervals(curve: OCVCurve, soc_floor, soc0, dt) -> tuple[Array, Array]:
    """Ends ``(a, c)`` ``(k+1,)`` of the OCV table's intervals inside ``[soc_floor, soc0]`` (empty ones have
    ``a == c``): the table's points clipped to the range, with the range's ends added."""
    lo, hi = jnp.asarray(soc_floor, dt), jnp.asarray(soc0, dt)
    b = jnp.concatenate([lo[None], jnp.clip(curve.soc.astype(dt), lo, hi), hi[None]])
    return b[:-1], b[1:]


def _nodes(n: int, dt) -> tuple[Array, Array]:
    x, w = np.polynomial.legendre.leggauss(n)
    return jnp.asarray(x, dt), jnp.asarray(w, dt)


def discharge_time(power: ArrayLike, battery: Battery, *, soc0: ArrayLike | None = None,
                   soc_floor: ArrayLike | None = None,
                   ocv: OCVCurve | None = None, points: int = GAUSS_POINTS) -> Array:
    """Time [s] to discharge from ``soc0`` to ``soc_floor`` at constant terminal power ``power`` [W].

    ``dSoC/dt = -I_b(P, SoC) / Q_cap`` gives ``t = int_{floor}^{soc0} Q_cap / I_b(P, s) ds`` with
    ``1 / I_b = (OCV(s) + sqrt(OCV(s)^2 - 4 R_int P)) / (2 P)``; integrated by ``points``-point
    Gauss-Legendre on every interval of the OCV table inside ``[soc_floor, soc0]`` (the integrand
    is smooth between table points, so the kinks are exact). Differentiable in ``power``, the
    battery's leaves, the curve, ``soc0`` and ``soc_floor``. Needs ``soc0 >= soc_floor``.

    Args:
        power: ``()`` terminal power [W] (> 0). battery: the pack. soc0, soc_floor: ``()`` (``None``: the
            battery's ``soc0``, ``soc_floor``).
        ocv: per-cell curve (``None``: default Li-Po). points: static Gauss points per interval.
    """
    curve = _curve(ocv, battery)
    power = jnp.asarray(power)
    dt = jnp.result_type(power, jnp.float32) if not jnp.issubdtype(power.dtype, jnp.floating) else power.dtype
    power = power.astype(dt)
    a, c = _intervals(curve, *_socs(battery, soc0, soc_floor), dt)
    x, w = _nodes(points, dt)
    s = (a + c)[:, None] / 2 + (c - a)[:, None] / 2 * x  # (k+1, points)
    e = pack_ocv(battery, s, curve)
    r = battery.internal_resistance.astype(dt)
    inv_i = (e + jnp.sqrt(e**2 - 4 * r * power)) / (2 * power)
    integral = jnp.sum((c - a)[:, None] / 2 * w * inv_i)
    return capacity_as(battery).astype(dt) * integral


def constant_power_discharge_time(power: ArrayLike, battery: Battery, *, soc0: ArrayLike | None = None,
                                  soc_floor: ArrayLike | None = None, ocv: OCVCurve | None = None) -> Array:
    """Closed form of :func:`discharge_time` [s] (a reference for the quadrature).

    On each table interval the pack voltage is linear, ``V(s) = V_a + k (s - s_a)``, and
    ``int (V + sqrt(V^2 - c)) ds = [F(V)]/k`` with ``c = 4 R_int P`` and
    ``F(V) = V^2/2 + (V sqrt(V^2 - c) - c ln(V + sqrt(V^2 - c)))/2`` (``k = 0``: length times
    the integrand). ``t = Q_cap / (2 P) sum_intervals``; at ``R_int = 0`` it is
    ``Q_cap / P int OCV ds``, the energy under the OCV curve over the power.
    """
    curve = _curve(ocv, battery)
    power = jnp.asarray(power)
    dt = power.dtype if jnp.issubdtype(power.dtype, jnp.floating) else jnp.result_type(float)
    power = power.astype(dt)
    a, c = _intervals(curve, *_socs(battery, soc0, soc_floor), dt)
    va, vc = pack_ocv(battery, a, curve), pack_ocv(battery, c, curve)
    cc = 4 * battery.internal_resistance.astype(dt) * power

    def F(v):
        q = jnp.sqrt(v**2 - cc)
        return v**2 / 2 + (v * q - cc * jnp.log(v + q)) / 2

    length = c - a
    dv = vc - va
    flat = jnp.abs(dv) <= 1e-12 * jnp.abs(va)
    slope = jnp.where(flat, 1.0, dv / jnp.where(length > 0, length, 1.0))
    sloped = (F(vc) - F(va)) / slope
    vm = (va + vc) / 2
    level = length * (vm + jnp.sqrt(vm**2 - cc))
    pieces = jnp.where(length > 0, jnp.where(flat, level, sloped), 0.0)
    return capacity_as(battery).astype(dt) * jnp.sum(pieces) / (2 * power)


def endurance_hover(platform: Platform, soc0: ArrayLike | None = None, soc_floor: ArrayLike | None = None,
                    payload: ArrayLike = 0.0,
                    *, esc: ESC | None = None, ocv: OCVCurve | None = None, points: int = GAUSS_POINTS) -> Array:
    """Hover endurance [s] from ``soc0`` down to ``soc_floor``.

    A speed-controlled motor holds the hover speeds whatever the battery's voltage, so the
    terminal power ``P_h = sum_i V_m,i I_i / eta`` of :func:`hover_point` is constant over the
    discharge and ``t = int_{floor}^{soc0} Q_cap / I_b(P_h, s) ds`` (:func:`discharge_time`).
    Differentiable with respect to every platform and parts leaf (capacity, propeller diameter,
    arm length, tilt, ...: re-derive the platform, :meth:`Platform.derive`, after changing a
    parts leaf). It does not check that the pack can drive the hover speeds down to the floor
    (throttle <= 1 there): :func:`sizing_report` reports that throttle.

    Args:
        platform: with parts. soc0, soc_floor: ``()`` states of charge (``None``: the battery's). payload: extra mass [kg]
            at the centre of mass. esc, ocv: see :func:`electrical_state`. points: Gauss points.
    """
    parts = _electric_parts(platform)
    soc_floor, soc0 = _socs(parts.battery, soc0, soc_floor)
    h = hover_point(platform, soc0, payload=payload, esc=esc, ocv=ocv)
    return discharge_time(h.battery_power, parts.battery, soc0=soc0, soc_floor=soc_floor, ocv=ocv, points=points)


def endurance_profile(power: ArrayLike, battery: Battery, *, weights: ArrayLike | None = None,
                      soc0: ArrayLike | None = None, soc_floor: ArrayLike | None = None,
                      ocv: OCVCurve | None = None,
                      points: int = GAUSS_POINTS) -> Array:
    """Endurance [s] repeating a flown profile, at its mean terminal power.

    ``P_mean = sum_k w_k P_k / sum_k w_k`` (``weights``: e.g. the time steps of a non-uniform
    trace; ``None``: uniform samples), then :func:`discharge_time`. Drawing the mean power instead
    of the trace neglects the extra ``R_int`` loss of the power's variance (second order).

    Args:
        power: ``()`` mean power or ``(T,)`` terminal power trace ``V_t I_b`` [W].
        battery: the pack. weights: ``(T,)`` or ``None``. soc0, soc_floor, ocv, points: as
            :func:`discharge_time`.
    """
    power = jnp.asarray(power)
    if weights is None:
        p = jnp.mean(power)
    else:
        w = jnp.asarray(weights, power.dtype)
        p = jnp.sum(w * power) / jnp.sum(w)
    return discharge_time(p, battery, soc0=soc0, soc_floor=soc_floor, ocv=ocv, points=points)


# --------------------------------------------------------------------------- payload capacity


def _top_speed(platform: Platform, soc, esc, ocv) -> Array:
    """Top rotor speed ``(n,)`` [rad/s] with every rotor at full throttle on the pack at ``soc``."""
    parts = _electric_parts(platform)
    dt = platform.c_f.dtype
    b, motor = parts.battery, parts.motor
    n = platform.n_rotors
    eta = _esc(esc, parts).efficiency.astype(dt)
    volts = b.nominal_voltage.astype(dt) if soc is None else pack_ocv(b, jnp.asarray(soc, dt), ocv).astype(dt)
    # full throttle: V_m = V_t and I_b = n I / eta, so OCV = (R + n R_int / eta) I + omega / K_v
    sag = eqx.tree_at(lambda m: m.resistance, motor, motor.resistance + n * b.internal_resistance / eta)
    w = rotor_speed_limit(sag, volts, platform.c_tau)[0]
    if "rotor_speed_max" in platform.overrides:
        w = jnp.minimum(w, platform.rotor_speed_max)
    return w


def max_vertical_thrust(platform: Platform, soc: ArrayLike | None = None, *, esc: ESC | None = None,
                        ocv: OCVCurve | None = None) -> Array:
    """The largest vertical force [N] the rotors give while holding the hover's zero moment and side force.

    ``T_max = m g min_i (omega_max,i^2 / u_h,i)``: the hover inputs ``u_h`` (:func:`hover_inputs`)
    scaled up until the first rotor reaches its top speed ``omega_max,i``. The top speed is the
    electrical one at full throttle (:func:`jaxrotor.design.parts.rotor_speed_limit` with the pack's
    sag: winding resistance ``R + n R_int / eta``), on the pack voltage ``cells OCV(soc)``, or on the
    nominal ``cells x 3.7 V`` when ``soc`` is ``None``; capped by a user-given ``rotor_speed_max``
    (in ``platform.overrides``). For equal, flat rotors about the centre of mass it is
    ``sum_i c_f omega_max^2``; with four rotors it is the exact maximum (the hover wrench fixes the
    inputs up to scale); with more it is the maximum along the hover direction (a lower bound
    of the linear programme's optimum).
    """
    w = _top_speed(platform, soc, esc, ocv)
    u_h = hover_inputs(platform)
    return platform.mass * platform.gravity * jnp.min(w**2 / u_h)


def payload_capacity(platform: Platform, twr_margin: ArrayLike = 2.0, soc: ArrayLike | None = None, *,
                     esc: ESC | None = None, ocv: OCVCurve | None = None) -> Array:
    """Largest payload [kg] at which the vehicle keeps a thrust-to-weight ratio of ``twr_margin``.

    A payload ``m_p`` at the centre of mass scales the hover inputs by ``(m + m_p)/m``, so the
    vertical thrust available (:func:`max_vertical_thrust`) does not change and the condition
    ``T_max >= twr_margin (m + m_p) g`` gives ``m_p = T_max / (twr_margin g) - m`` (negative: the
    vehicle already lacks that margin). ``twr_margin = 1`` is hover at full throttle; 2 is the usual
    rule for a controllable multirotor. Differentiable in every platform and parts leaf.

    Args:
        platform: with parts. twr_margin: ``()`` required thrust-to-weight ratio (>= 1).
        soc: state of charge of the voltage, or ``None`` for the nominal ``cells x 3.7 V``.
        esc: see :func:`electrical_state`.
        ocv: see :func:`electrical_state`.
    """
    return _payload(max_vertical_thrust(platform, soc, esc=esc, ocv=ocv), platform, twr_margin)


def _payload(t_max: Array, platform: Platform, twr_margin: ArrayLike) -> Array:
    """``m_p = T_max / (twr_margin g) - m`` [kg] (:func:`payload_capacity`)."""
    return t_max / (jnp.asarray(twr_margin, t_max.dtype) * platform.gravity) - platform.mass


# --------------------------------------------------------------------------- dynamic motor


def electric_motor_rates(omega: ArrayLike, omega_cmd: ArrayLike, c_tau: ArrayLike, J_r: ArrayLike, motor: Motor,
                         speed_bandwidth: ArrayLike, v_available: ArrayLike) -> tuple[Array, Array, Array]:
    """Rotor acceleration, current and voltage of a speed-controlled electric motor.

    The speed controller of bandwidth ``lambda`` asks for the torque
    ``Q_cmd = c_tau omega^2 + J_r lambda (omega_cmd - omega)``, i.e. the current
    ``I_cmd = K_v Q_cmd + I_0``; the current is limited in magnitude by the motor's ``max_current`` and
    by the voltage the ESC can apply either way, ``|V_m| = |R I + omega/K_v| <= V``:
    ``I = clip(I_cmd, max(-I_max, (-V - omega/K_v)/R), min(I_max, (V - omega/K_v)/R))`` (the voltage
    terms absent when ``R = 0``; braking is limited too, unlike
    :class:`jaxrotor.dynamics.FirstOrderMotor`). Then
    ``J_r omega_dot = (I - I_0)/K_v - c_tau omega^2`` and ``V_m = R I + omega/K_v``.

    With no limit active, ``omega_dot = lambda (omega_cmd - omega)``: the first-order motor with
    ``tau_m = 1/lambda``; with the current limit only and speeding up, ``FirstOrderMotor(1/lambda,
    current_limit=True)``;
    at ``omega = omega_cmd`` the current and voltage are those of :func:`motor_steady_state`.

    Args:
        omega: ``(n,)`` rotor speeds [rad/s].
        omega_cmd: ``(n,)`` their commands [rad/s]. c_tau: ``(n,)``.
        J_r: ``(n,)`` rotor spin inertia [kg m^2] (> 0). motor: the motor part.
        speed_bandwidth: ``()`` ``lambda`` [rad/s]. v_available: voltage at the motor at full
            throttle [V] (the battery's terminal voltage: the ESC passes it through).

    Returns:
        ``(omega_dot (n,) [rad/s^2], current (n,) [A], voltage (n,) [V])``.
    """
    return _drive_currents(omega, omega_cmd, c_tau, J_r, motor, speed_bandwidth, v_available)[:3]


#: Newton steps of the terminal-voltage solve in :func:`electric_drive` (quadratic convergence: float64
#: round-off in 4 to 5 from any load the pack can carry).
NEWTON_STEPS = 6


class EnergyState(eqx.Module):
    """The battery's state and the energy account, integrated in the plant beside the rigid body.

    Attributes:
        soc: ``()`` state of charge, ``dSoC/dt = -I_b / Q_cap``.
        work: ``(6,)`` energy since the start [J], in the order of :data:`WORK_TERMS`:
            ``terminal`` (``int V_t I_b dt``, what the battery delivers at its terminals), ``shaft``
            (``int sum_i omega_i k_t (I_i - I_0) dt``: propeller drag work plus the rotors' kinetic
            energy), ``copper`` (``int sum_i R I_i^2 dt``), ``no_load`` (``int sum_i omega_i I_0 / K_v dt``),
            ``esc`` (the ESCs' loss) and ``battery`` (``int R_int I_b^2 dt``). At every instant
            ``terminal = shaft + copper + no_load + esc`` and ``OCV I_b = terminal + battery``.
    """

    soc: Float[Array, ""]
    work: Float[Array, "6"]


#: The order of :attr:`EnergyState.work`.
WORK_TERMS = ("terminal", "shaft", "copper", "no_load", "esc", "battery")


class ElectricOutputs(eqx.Module):
    """The electrical chain at one instant (:func:`electric_drive`).

    Attributes:
        motor_current: ``(n,)`` ``I_i`` [A]. motor_voltage: ``(n,)`` ``V_m,i = R I_i + omega_i / K_v`` [V].
        battery_current: ``()`` ``I_b`` [A]. terminal_voltage: ``()`` ``V_t = OCV - R_int I_b`` [V].
        ocv: ``()`` pack open-circuit voltage [V].
        limited: ``(n,)`` bool, the speed controller asks for more current than the current limit or the
            voltage allows.
    """

    motor_current: Float[Array, " n"]
    motor_voltage: Float[Array, " n"]
    battery_current: Float[Array, ""]
    terminal_voltage: Float[Array, ""]
    ocv: Float[Array, ""]
    limited: Array


def _drive_currents(omega, omega_cmd, c_tau, J_r, motor: Motor, speed_bandwidth, v_available):
    """``(omega_dot, I, V_m, limited)`` of :func:`electric_motor_rates` (each ``(n,)``)."""
    kv = _kv(motor)
    omega = jnp.asarray(omega)
    dt = omega.dtype
    kv, r = kv.astype(dt), motor.resistance.astype(dt)
    i0, imax = motor.no_load_current.astype(dt), motor.max_current.astype(dt)
    q_drag = c_tau * omega**2
    q_cmd = q_drag + J_r * speed_bandwidth * (omega_cmd - omega)
    i_cmd = kv * q_cmd + i0
    has_r = r > 0
    r_safe = jnp.where(has_r, r, 1.0)
    i_hi = jnp.minimum(imax, jnp.where(has_r, (v_available - omega / kv) / r_safe, jnp.inf))
    i_lo = jnp.maximum(-imax, jnp.where(has_r, (-v_available - omega / kv) / r_safe, -jnp.inf))
    i = jnp.clip(i_cmd, i_lo, i_hi)
    omega_dot = ((i - i0) / kv - q_drag) / J_r
    return omega_dot, i, r * i + omega / kv, (i_cmd > i_hi) | (i_cmd < i_lo)


def electric_drive(platform: Platform, omega: Float[Array, " n"], omega_cmd: Float[Array, " n"], soc: ArrayLike,
                   speed_bandwidth: ArrayLike) -> tuple[Array, EnergyState, ElectricOutputs]:
    """Rotor accelerations and the battery's rates of a platform flying electric motors.

    Per rotor :func:`electric_motor_rates` (speed controller of bandwidth ``lambda``, current limit,
    the voltage at the motor at most the terminal voltage ``V_t``). ESC: driving, the battery gives
    ``V_m I / eta``; braking (``V_m I < 0``), it takes back ``eta |V_m I|``. Battery: terminal power
    ``P = sum_i P_i``, ``I_b`` from :func:`battery_current` at ``OCV = cells ocv(soc)``,
    ``V_t = OCV - R_int I_b``. ``V_t`` depends on the currents and, through the voltage limit, the
    currents on ``V_t``: ``V_t`` is the largest root of the power balance
    ``g(V) = V (OCV - V) - R_int P(V) = 0`` (what the pack delivers at ``V`` against what the motors draw
    at ``V``), found by :data:`NEWTON_STEPS` Newton steps from ``OCV`` (``g`` is concave and
    ``g(OCV) <= 0``, so they fall monotonically onto it). The battery's current and terminal voltage are
    then those of the final currents (``I_b`` from :func:`battery_current`), so the energy account below
    is exact whatever the solve leaves. Beyond the pack's largest power ``OCV^2 / (4 R_int)`` the
    terminal voltage stays at ``OCV/2`` (the pack's maximum-power point).

    Args:
        platform: with parts (motor ``kv``, a battery; ``platform.J_r`` > 0; ``parts.esc``).
        omega: ``(n,)`` rotor speeds [rad/s]. omega_cmd: ``(n,)`` speed commands [rad/s].
        soc: ``()`` state of charge. speed_bandwidth: ``()`` ``lambda`` [rad/s].

    Returns:
        ``(omega_dot (n,) [rad/s^2], rates, outputs)``: ``rates`` an :class:`EnergyState` of time derivatives
        (``-I_b/Q_cap`` and the powers of :data:`WORK_TERMS` [W]), ``outputs`` the :class:`ElectricOutputs`.
    """
    parts = _electric_parts(platform)
    motor, b = parts.motor, parts.battery
    dt = omega.dtype
    eta = _esc(None, parts).efficiency.astype(dt)
    soc = jnp.asarray(soc, dt)
    e = pack_ocv(b, soc).astype(dt)
    r_int = b.internal_resistance.astype(dt)
    J_r = platform.J_r

    def chain(v_available):
        w_dot, i, v_m, limited = _drive_currents(omega, omega_cmd, platform.c_tau, J_r, motor, speed_bandwidth,
                                                 v_available)
        p_m = v_m * i
        p = jnp.where(p_m >= 0, p_m / eta, p_m * eta)
        return w_dot, i, v_m, limited, p_m, p

    def balance(v):  # g(V) = V (OCV - V) - R_int P(V): delivered power at V against the power drawn at V
        return v * (e - v) - r_int * jnp.sum(chain(v)[-1])

    v = e
    for _ in range(NEWTON_STEPS):  # concave g, g(OCV) <= 0: Newton from OCV falls monotonically onto the root
        g, dg = jax.jvp(balance, (v,), (jnp.ones_like(v),))
        v = jnp.maximum(v - g / jnp.where(dg < 0, dg, -1.0), e / 2)
    w_dot, i, v_m, limited, p_m, p = chain(v)
    has_r = r_int > 0
    p_max = jnp.where(has_r, e**2 / (4 * jnp.where(has_r, r_int, 1.0)), jnp.inf)
    i_b = battery_current(jnp.minimum(jnp.sum(p), p_max), e, r_int)
    v_t = terminal_voltage(e, r_int, i_b)
    kv = motor.kv_si.astype(dt)
    i0, r = motor.no_load_current.astype(dt), motor.resistance.astype(dt)
    work = jnp.stack([
        v_t * i_b,
        jnp.sum(omega * (i - i0) / kv),
        jnp.sum(r * i**2),
        jnp.sum(omega * i0 / kv),
        jnp.sum(p - p_m),
        r_int * i_b**2,
    ])
    rates = EnergyState(soc=-i_b / capacity_as(b).astype(dt), work=work)
    return w_dot, rates, ElectricOutputs(motor_current=i, motor_voltage=v_m, battery_current=i_b,
                                         terminal_voltage=v_t, ocv=e, limited=limited)


def top_speed(platform: Platform, soc: ArrayLike | None = None) -> Array:
    """Top rotor speed ``(n,)`` [rad/s] with every rotor at full throttle on the pack at ``soc``.

    The steady state of ``V = R I + omega/K_v`` (:func:`jaxrotor.design.parts.rotor_speed_limit`) at the
    pack's open-circuit voltage ``cells ocv(soc)`` with the pack's sag folded into the winding
    resistance (``R + n R_int / eta``: at full throttle ``V_m = V_t`` and ``I_b = n I / eta``), or the
    current limit's speed if lower; capped by a user-given ``rotor_speed_max``. ``soc = None``: the
    nominal ``cells x 3.7 V``. The allocator's bounds follow it when the motor is electric.
    """
    return _top_speed(platform, soc, None, None)


# --------------------------------------------------------------------------- sizing report


def sizing_report(platform: Platform, soc: ArrayLike | None = None, *, soc_floor: ArrayLike | None = None,
                  twr_margin: ArrayLike = 2.0, esc: ESC | None = None, ocv: OCVCurve | None = None) -> dict:
    """Static sizing of a platform built from parts, as a flat ``dict`` of JAX scalars (eCalc-like).

    Keys (units in the name): ``mass_kg``; hover at ``soc``: ``hover_battery_current_A``,
    ``hover_motor_current_A`` (largest rotor), ``hover_battery_power_W`` (terminal), ``hover_mechanical_power_W``,
    ``hover_terminal_voltage_V``, ``hover_throttle`` (largest), ``hover_throttle_at_floor`` (largest, at
    ``soc_floor``: above 1 the pack cannot hold hover that long), ``figure_of_merit`` (mean),
    ``efficiency`` (shaft over battery energy ``OCV I_b``); ``endurance_hover_s`` and
    ``endurance_hover_min`` (``soc`` to ``soc_floor``); ``top_speed_rad_s`` (full throttle, nominal
    voltage, with sag), ``thrust_to_weight`` (:func:`max_vertical_thrust` over ``m g``) and
    ``payload_capacity_kg`` (:func:`payload_capacity` at ``twr_margin``), ``twr_margin``.
    """
    parts = _electric_parts(platform)
    soc_floor, soc = _socs(parts.battery, soc, soc_floor)
    h = hover_point(platform, soc, esc=esc, ocv=ocv)
    h_floor = hover_point(platform, soc_floor, esc=esc, ocv=ocv)
    t = endurance_hover(platform, soc, soc_floor, esc=esc, ocv=ocv)
    t_max = max_vertical_thrust(platform, None, esc=esc, ocv=ocv)
    dt = platform.c_f.dtype
    return {
        "mass_kg": platform.mass,
        "hover_battery_current_A": h.battery_current,
        "hover_motor_current_A": jnp.max(h.motor_current),
        "hover_battery_power_W": h.battery_power,
        "hover_mechanical_power_W": jnp.sum(h.mechanical_power),
        "hover_terminal_voltage_V": h.terminal_voltage,
        "hover_throttle": jnp.max(h.throttle),
        "hover_throttle_at_floor": jnp.max(h_floor.throttle),
        "figure_of_merit": jnp.mean(h.figure_of_merit),
        "efficiency": jnp.sum(h.mechanical_power) / (h.ocv * h.battery_current),
        "endurance_hover_s": t,
        "endurance_hover_min": t / 60,
        "top_speed_rad_s": jnp.max(_top_speed(platform, None, esc, ocv)),
        "thrust_to_weight": t_max / platform.weight,
        "payload_capacity_kg": _payload(t_max, platform, twr_margin),
        "twr_margin": jnp.asarray(twr_margin, dt),
        "capacity_mah": parts.battery.capacity_mah,
    }


_REPORT_ROWS = (
    ("mass_kg", "mass", "kg", "{:.3f}"),
    ("hover_battery_current_A", "hover battery current", "A", "{:.2f}"),
    ("hover_motor_current_A", "hover motor current (max)", "A", "{:.2f}"),
    ("hover_battery_power_W", "hover power (battery terminals)", "W", "{:.1f}"),
    ("hover_mechanical_power_W", "hover shaft power", "W", "{:.1f}"),
    ("hover_terminal_voltage_V", "hover terminal voltage", "V", "{:.2f}"),
    ("hover_throttle", "hover throttle (max)", "", "{:.1%}"),
    ("hover_throttle_at_floor", "hover throttle at the floor", "", "{:.1%}"),
    ("figure_of_merit", "figure of merit (mean)", "", "{:.3f}"),
    ("efficiency", "shaft / battery energy", "", "{:.1%}"),
    ("endurance_hover_min", "hover endurance", "min", "{:.2f}"),
    ("top_speed_rad_s", "top rotor speed", "rad/s", "{:.0f}"),
    ("thrust_to_weight", "thrust-to-weight", "", "{:.2f}"),
    ("payload_capacity_kg", "payload capacity", "kg", "{:.3f}"),
)


def format_sizing_report(report: dict) -> str:
    """The :func:`sizing_report` as an aligned text table (one quantity a line, with its unit)."""
    margin = float(np.asarray(report.get("twr_margin", 2.0)))
    lines = []
    for key, label, unit, fmt in _REPORT_ROWS:
        if key not in report:
            continue
        if key == "payload_capacity_kg":
            label = f"{label} (T/W {margin:g})"
        value = report[key]
        value = float("nan") if value is None else float(np.asarray(value))
        shown = fmt.format(value) if math.isfinite(value) else "n/a"
        lines.append(f"  {label:<36} {shown:>10} {unit}".rstrip())
    current = report.get("hover_battery_current_A")
    if current is None or not math.isfinite(float(np.asarray(current))):
        lines.append("  note: the battery cannot deliver the hover power (more than OCV^2 / (4 R_int) at its "
                     "terminals): the vehicle does not hover on this pack")
    return "sizing (electrical)\n" + "\n".join(lines)
