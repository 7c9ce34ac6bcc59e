"""Quasi-steady rotor and body aerodynamics: rotor drag, induced inflow, translational lift, blade
flapping, parasitic drag and ground effect (``docs/aero.md``).

Each rotor ``i`` moves through the air at its hub with the velocity ``v_i`` (the body's velocity
at the hub less the air's: ``v_i = R^T (v - w) + omega x p_i`` in the body frame), spins at
``omega_i`` [rad/s] about its unit axis ``z_i``, and splits ``v_i`` into an axial part
``v_a,i = v_i . z_i`` and an in-plane part ``v_p,i = v_i - v_a,i z_i``. Over its thrust
``c_f,i u_i z_i`` (eq. 5) it adds, at its hub::

    H-force (rotor drag)   H_i  = -k_d omega_i v_p,i                         [N]
    induced inflow         I_i  = -k_z omega_i v_a,i z_i                     [N]
    translational lift     L_i  =  k_h |v_p,i|^2 z_i                         [N]
    ground effect          E_i  = (T/T_inf(z_i) - 1) c_f,i u_i z_i           [N]
    flapping moment        M_i  = -k_flap omega_i (v_i x z_i)                [N m]  (a couple)

with the Cheeseman-Bennett ratio ``T/T_inf = 1 / (1 - (r / 4 h_i)^2)`` at the hub's height ``h_i``
above the floor (rotor radius ``r``), capped at ``ground_effect_max``, and the body feels the
parasitic drag at its centre of mass (body frame, per axis)::

    D = -|v_b| c_D v_b - c_D,lin v_b,         v_b = R^T (v - w)              [N]

For rotors along ``z_B`` these are RotorPy's ``Multirotor.compute_body_wrench`` terms with the same
names, definitions and units (``c_Dx, c_Dy, c_Dz, k_d, k_z, k_h, k_flap``; its rotor-drag matrix
``diag(k_d, k_d, k_z)`` is the first two lines), so RotorPy's parameter files carry over; on a
tilted or tilting rotor "axial" and "in-plane" are taken in that rotor's own frame. A rotor's
aerodynamic terms scale with its effectiveness under a fault (a lost rotor has no blades).

:func:`rotor_terms` is the one place the rotor terms are written; the analytic layer
(:func:`body_wrench`, from :func:`jaxrotor.dynamics.vehicle_derivative`) and the physics layer
(:mod:`jaxrotor.physics.plants`, from the engine's own hub positions, axes and velocities, applied
at each propeller body) both call it. Every function takes ``xp`` (``jax.numpy`` by default,
``numpy`` on the MuJoCo C plant's host loop).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from ._util import as_float, vec3
from .registry import Option, register

__all__ = ["Aerodynamics", "ROTORPY_COEFFICIENTS", "body_wrench", "ground_effect_ratio", "parasitic_drag",
           "rotor_terms", "scaled_coefficients"]


def _check(value, name: str, fix: str, lower: float = 0.0, strict: bool = False) -> None:
    if value is None or isinstance(value, jax.core.Tracer):
        return
    v = np.asarray(value, dtype=float)
    ok = np.all(np.isfinite(v)) and (np.all(v > lower) if strict else np.all(v >= lower))
    if not ok:
        raise ValueError(f"Aerodynamics parameter `{name}` = {v.tolist()!r} is invalid: it must be finite and "
                         f"{'>' if strict else '>='} {lower:g}. Fix: {fix}.")


@register("aero", "quasi_steady", options={
    "parasitic_drag": Option(list, default=[0.0, 0.0, 0.0], length=3, ge=0, unit="N s^2/m^2",
                             doc="quadratic body drag c_Dx, c_Dy, c_Dz (RotorPy's), body axes"),
    "parasitic_drag_linear": Option(list, default=[0.0, 0.0, 0.0], length=3, ge=0, unit="N s/m",
                                    doc="linear body drag per body axis"),
    "rotor_drag": Option(float, default=0.0, ge=0, unit="N s/m", doc="rotor drag (H-force) k_d, per rad/s"),
    "induced_inflow": Option(float, default=0.0, ge=0, unit="N s/m", doc="induced inflow k_z, per rad/s"),
    "translational_lift": Option(float, default=0.0, ge=0, unit="N s^2/m^2", doc="translational lift k_h"),
    "flapping": Option(float, default=0.0, ge=0, unit="N s", doc="blade flapping moment k_flap, per rad/s"),
    "ground_effect": Option(bool, default=False, doc="Cheeseman-Bennett ground effect on each rotor"),
    "rotor_radius": Option(float, default=None, gt=0, unit="m",
                           doc="rotor radius for ground effect (default: the parts' propeller)"),
    "floor_height": Option(float, default=0.0, unit="m", doc="world z of the floor for ground effect"),
    "ground_effect_max": Option(float, default=2.0, gt=1, unit="", doc="cap on the ground-effect ratio T/T_inf")})
class Aerodynamics(eqx.Module):
    """Quasi-steady aerodynamics of the rotors and the body (module docstring); every term off by default.

    Attributes:
        parasitic_drag: ``(3,)`` quadratic body drag ``c_Dx, c_Dy, c_Dz`` [N s^2/m^2] (RotorPy's), body axes.
        parasitic_drag_linear: ``(3,)`` linear body drag [N s/m], body axes.
        rotor_drag: ``()`` or ``(n,)`` rotor-drag (H-force) coefficient ``k_d`` [N s/m per rad/s].
        induced_inflow: ``()`` or ``(n,)`` induced-inflow coefficient ``k_z`` [N s/m per rad/s].
        translational_lift: ``()`` or ``(n,)`` translational-lift coefficient ``k_h`` [N s^2/m^2].
        flapping: ``()`` or ``(n,)`` flapping-moment coefficient ``k_flap`` [N m s/m per rad/s].
        ground_effect: apply the Cheeseman-Bennett ground effect (static).
        rotor_radius: ``()`` or ``(n,)`` rotor radius ``r`` [m] for the ground effect, or ``None``: half the
            platform's propeller diameter (its parts).
        floor_height: ``()`` world ``z`` of the floor [m] for the ground effect.
        ground_effect_max: ``()`` cap on ``T/T_inf`` (> 1; reached at ``h = r / (4 sqrt(1 - 1/cap))``).
    """

    parasitic_drag: Array
    parasitic_drag_linear: Array
    rotor_drag: Array
    induced_inflow: Array
    translational_lift: Array
    flapping: Array
    ground_effect: bool = eqx.field(static=True)
    rotor_radius: Array | None
    floor_height: Array
    ground_effect_max: Array

    def __init__(self, parasitic_drag=0.0, rotor_drag=0.0, induced_inflow=0.0, translational_lift=0.0,
                 flapping=0.0, ground_effect: bool = False, *, parasitic_drag_linear=0.0, rotor_radius=None,
                 floor_height=0.0, ground_effect_max=2.0):
        self.parasitic_drag = vec3(parasitic_drag, "Aerodynamics", "parasitic_drag",
                                   "pass a scalar or three body-axis values (x, y, z)")
        self.parasitic_drag_linear = vec3(parasitic_drag_linear, "Aerodynamics", "parasitic_drag_linear",
                                          "pass a scalar or three body-axis values (x, y, z)")
        self.rotor_drag = as_float(rotor_drag)
        self.induced_inflow = as_float(induced_inflow)
        self.translational_lift = as_float(translational_lift)
        self.flapping = as_float(flapping)
        if not isinstance(ground_effect, (bool, np.bool_)):
            raise ValueError(f"Aerodynamics parameter `ground_effect` = {ground_effect!r} is invalid: it must be True "
                             "or False. Fix: pass ground_effect=True to model the floor's effect on the rotors.")
        self.ground_effect = bool(ground_effect)
        self.rotor_radius = None if rotor_radius is None else as_float(rotor_radius)
        self.floor_height = as_float(floor_height)
        self.ground_effect_max = as_float(ground_effect_max)
        _check(self.parasitic_drag, "parasitic_drag", "pass e.g. (0.005, 0.005, 0.01) N s^2/m^2, or 0")
        _check(self.parasitic_drag_linear, "parasitic_drag_linear", "pass e.g. 0.1 N s/m, or 0")
        for name, eg in (("rotor_drag", "1.19e-4"), ("induced_inflow", "2.32e-4"), ("translational_lift", "3.39e-3"),
                         ("flapping", "0")):
            _check(getattr(self, name), name, f"pass e.g. {eg} (RotorPy's Hummingbird), or 0 to leave the term off")
        _check(self.rotor_radius, "rotor_radius", "pass the propeller radius in m, e.g. 0.127", strict=True)
        _check(self.ground_effect_max, "ground_effect_max", "pass a cap > 1, e.g. 2.0", lower=1.0, strict=True)
        if not isinstance(self.floor_height, jax.core.Tracer) and not np.isfinite(np.asarray(self.floor_height)):
            raise ValueError(f"Aerodynamics parameter `floor_height` = {float(self.floor_height)!r} is invalid: it "
                             "must be finite. Fix: pass the world z of the floor in m, e.g. 0.0.")

    def radius(self, platform) -> Array:
        """The rotor radius ``r`` [m] of the ground effect: ``rotor_radius``, else half the diameter of the
        platform's propeller (its parts); ``()`` or ``(n,)``.

        Raises:
            ValueError: ground effect on, no ``rotor_radius`` and a platform without parts.
        """
        if self.rotor_radius is not None:
            return self.rotor_radius
        if platform.parts is None:
            raise ValueError(f"Aerodynamics parameter `rotor_radius` = None needs the propeller of the platform's "
                             f"parts for the ground effect, but platform `{platform.name}` has no parts. Fix: pass "
                             "Aerodynamics(..., rotor_radius=0.127) (m), or [aero] rotor_radius, or build the "
                             "platform from parts.")
        return 0.5 * platform.parts.propeller.diameter

    def check(self, platform) -> None:
        """Refuse, before a flight, what this model cannot evaluate for ``platform``: a per-rotor coefficient of
        the wrong length, or the ground effect without a rotor radius."""
        n = platform.n_rotors
        for name in ("rotor_drag", "induced_inflow", "translational_lift", "flapping", "rotor_radius"):
            v = getattr(self, name)
            if v is not None and jnp.ndim(v) not in (0,) and jnp.shape(v) != (n,):
                raise ValueError(f"Aerodynamics parameter `{name}` has shape {jnp.shape(v)}, but platform "
                                 f"`{platform.name}` has {n} rotors. Fix: pass one number, or {n} (one per rotor).")
        if self.ground_effect:
            self.radius(platform)


def ground_effect_ratio(height, radius, cap, xp=jnp):
    """Cheeseman-Bennett thrust ratio ``T/T_inf = 1 / (1 - (r / 4 h)^2)`` [-], capped at ``cap``.

    ``height`` ``h`` [m] of the hub above the floor, ``radius`` ``r`` [m]; the cap holds below
    ``h_min = r / (4 sqrt(1 - 1/cap))`` (the ratio there equals the cap), so the ratio is finite, continuous
    and differentiable (zero gradient below ``h_min``) everywhere, the floor and below included.
    """
    h_min = radius / (4.0 * xp.sqrt(1.0 - 1.0 / cap))
    x = radius / (4.0 * xp.maximum(height, h_min))
    return 1.0 / (1.0 - x * x)


def rotor_terms(aero: Aerodynamics, air_velocity, axes, speed, thrust=None, height=None, radius=None, xp=jnp):
    """The aerodynamic forces and couples of each rotor (module docstring), in any one frame.

    Args:
        aero: the coefficients.
        air_velocity: ``(n, 3)`` each hub's velocity relative to the air ``v_i`` [m/s].
        axes: ``(n, 3)`` unit spin axes ``z_i``, same frame.
        speed: ``(n,)`` rotor speeds ``omega_i`` [rad/s] (>= 0).
        thrust: ``(n,)`` each rotor's thrust ``c_f,i u_i`` [N] (for the ground effect; ``None`` without).
        height: ``(n,)`` hub heights above the floor [m] (for the ground effect).
        radius: ``()`` or ``(n,)`` rotor radius [m] (for the ground effect).
        xp: ``jax.numpy`` or ``numpy``.

    Returns:
        ``(forces, couples)``, each ``(n, 3)`` in the frame of the inputs: the force at each hub [N]
        (``H_i + I_i + L_i + E_i``) and the flapping couple [N m].
    """
    axial = xp.sum(air_velocity * axes, axis=-1)
    in_plane = air_velocity - axial[:, None] * axes
    c = lambda k: xp.asarray(k)[..., None] if xp.ndim(k) else k  # a per-rotor coefficient against (n, 3)
    w = speed[:, None]
    force = (-c(aero.rotor_drag) * w * in_plane - (c(aero.induced_inflow) * w * axial[:, None]) * axes
             + (c(aero.translational_lift) * xp.sum(in_plane * in_plane, axis=-1, keepdims=True)) * axes)
    if aero.ground_effect:  # static
        ratio = ground_effect_ratio(height, radius, aero.ground_effect_max, xp=xp)
        force = force + ((ratio - 1.0) * thrust)[:, None] * axes
    cross = xp.cross(air_velocity, axes)
    couple = -c(aero.flapping) * w * cross
    return force, couple


def parasitic_drag(aero: Aerodynamics, v_b, xp=jnp, norm=None):
    """``D = -|v_b| c_D v_b - c_D,lin v_b`` [N], body frame, for the air-relative body velocity ``v_b`` ``(3,)``.

    ``norm``: :func:`jaxrotor.numerics.safe_norm` by default (finite gradient at ``v_b = 0``).
    """
    if norm is None:
        from .numerics import safe_norm as norm
    return -norm(v_b) * aero.parasitic_drag * v_b - aero.parasitic_drag_linear * v_b


def body_wrench(aero: Aerodynamics, platform, p, R, v, omega, speed, alpha, beta, air, thrust=None,
                effectiveness=None):
    """The aerodynamic wrench on the vehicle ``(force_b, torque_b)`` [N], [N m], body frame, about the centre
    of mass (the analytic layer's).

    ``v_i = R^T (v - air) + omega x p_i`` at each hub ``p_i`` (:func:`~jaxrotor.design.platform.rotor_positions`),
    axes ``z_i(alpha, beta)``; ``force_b = sum_i f_i + D``, ``torque_b = sum_i (p_i x f_i + m_i)`` with
    ``(f_i, m_i)`` of :func:`rotor_terms` times the rotor's ``effectiveness`` and ``D`` of
    :func:`parasitic_drag`. Hub height ``p_z + (R p_i)_z - floor_height`` for the ground effect.

    Args:
        p: ``(3,)`` world position [m]. R: ``(3, 3)`` body-to-world. v: ``(3,)`` world velocity [m/s].
        omega: ``(3,)`` body rate [rad/s]. speed: ``(n,)`` rotor speeds [rad/s]. alpha, beta: applied angles [rad].
        air: ``(3,)`` world air velocity [m/s]. thrust: ``(n,)`` rotor thrusts ``c_f u`` [N] (ground effect).
        effectiveness: ``(n,)`` fault effectiveness ``eta_i`` or ``None``.
    """
    from .design.platform import rotor_axes, rotor_positions

    pos = rotor_positions(platform)
    axes = rotor_axes(platform, alpha, beta)
    v_b = R.T @ (v - air)
    rel = v_b[None, :] + jnp.cross(omega[None, :], pos)
    height = radius = None
    if aero.ground_effect:
        height = p[2] + pos @ R[2] - aero.floor_height
        radius = aero.radius(platform)
    force, couple = rotor_terms(aero, rel, axes, speed, thrust, height, radius)
    if effectiveness is not None:
        force, couple = effectiveness[:, None] * force, effectiveness[:, None] * couple
    f_b = jnp.sum(force, axis=0) + parasitic_drag(aero, v_b)
    tau_b = jnp.sum(jnp.cross(pos, force) + couple, axis=0)
    return f_b, tau_b


#: RotorPy 3.0's aerodynamic coefficients of its two vehicles (``rotorpy.vehicles.*_params.quad_params``), with the
#: thrust coefficient ``k_eta`` [N s^2/rad^2] and mass [kg] they belong to.
ROTORPY_COEFFICIENTS = {
    "hummingbird": {"k_eta": 5.57e-06, "mass": 0.5, "c_D": (0.005, 0.005, 0.01), "k_d": 1.19e-4, "k_z": 2.32e-4,
                    "k_h": 3.39e-3, "k_flap": 0.0, "rotor_radius": 0.1},
    "crazyflie": {"k_eta": 2.3e-08, "mass": 0.03, "c_D": (0.0, 0.0, 0.0), "k_d": 1.02506e-06, "k_z": 7.553e-07,
                  "k_h": 0.0, "k_flap": 0.0, "rotor_radius": None},
}


def scaled_coefficients(platform, like: str = "hummingbird", ground_effect: bool = False, **overrides) -> Aerodynamics:
    """A first guess of a vehicle's :class:`Aerodynamics` from one of RotorPy's identified vehicles
    (:data:`ROTORPY_COEFFICIENTS`), for a design study before its own coefficients are measured.

    The rotor terms scale with the rotor's size through its thrust coefficient, ``k = k_ref c_f / k_eta,ref``
    (``k_d``, ``k_z``, ``k_h``, ``k_flap``: at equal rotor speed and airspeed the H-force, inflow and lift change
    in proportion to the thrust), the body drag with the frontal area, ``c_D = c_D,ref (m / m_ref)^(2/3)``. A
    heuristic, not an identification: say so where its results are reported. ``overrides`` replace any argument
    of :class:`Aerodynamics` (e.g. ``rotor_radius``).
    """
    if like not in ROTORPY_COEFFICIENTS:
        raise ValueError(f"scaled_coefficients parameter `like` = {like!r} is unknown. Fix: use one of "
                         f"{sorted(ROTORPY_COEFFICIENTS)}.")
    ref = ROTORPY_COEFFICIENTS[like]
    k = jnp.mean(platform.c_f) / ref["k_eta"]
    area = (platform.mass / ref["mass"]) ** (2.0 / 3.0)
    kw = dict(parasitic_drag=jnp.asarray(ref["c_D"]) * area, rotor_drag=ref["k_d"] * k, induced_inflow=ref["k_z"] * k,
              translational_lift=ref["k_h"] * k, flapping=ref["k_flap"] * k, ground_effect=ground_effect)
    kw.update(overrides)
    return Aerodynamics(**kw)
