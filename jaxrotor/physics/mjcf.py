"""The multibody model of a platform: MJCF generation and the compiled MuJoCo model.

:func:`build_model` turns a :class:`~jaxrotor.design.platform.Platform` (rotor
hubs ``p_i`` and spin axes ``z_i``, eqs. 3-4) and its
:class:`~jaxrotor.design.parts.Parts` (the same pytree the analytic layer derives its mass,
inertia and rotor inertia from; a platform's own are :func:`~jaxrotor.physics.parts.default_parts`)
into a MuJoCo model. Positions are the parts' (about the frame's geometric centre ``O_G``)
minus ``platform.com_offset``, so the body origin is the centre of mass; SI units throughout.

* ``frame``: a free body (root of the vehicle) whose origin is the centre of
  mass of the whole vehicle, so its free-joint position is the platform's ``p``
  and its angular velocity (local frame) the platform's ``omega``. Its geoms: the hub
  (cylinder), one arm per arm (capsule from the hub's rim to the arm tip: the rotor hub, or
  the mean hub of an ``platform.arms`` group such as a coaxial pair), the landing gear
  (capsule legs with massless spherical feet), the battery and the ballast (boxes) and the
  payload (a 1 mm sphere). Built from the platform's own parts (``platform.parts``), the frame
  gets an explicit inertial such that the whole model has exactly the analytic layer's mass,
  centre of mass (on the origin) and inertia (:meth:`~jaxrotor.design.platform.Platform.mass_properties`,
  at the platform's angles): it absorbs what the engine's shapes (capsule arms and legs, box
  blades, the motors under the blades) add to the parts' formulas, 0.4 % at most on the
  presets built from parts. From any other parts the geoms carry their masses and the hub cylinder
  is shifted so that the engine's centre of mass lands on the origin.
* ``mount_i``: the rotor mount at ``p_i`` with its local ``z`` along ``z_i``
  (``R_z(gamma_i) R_y(beta_i) R_x(alpha_i)``, eq. 4). Fixed-tilt mounts are welded
  to the frame; on a tilting platform the angle sets in ``platform.tilting`` are
  hinge joints (``beta`` about the arm frame's ``y``, ``alpha`` about the arm
  axis ``x``) driven by position servos. It carries the motor's stator (mass less
  ``rotor_mass``): a cylinder under the blades, top face at ``-thickness/2`` along ``z_i``.
* ``prop_i``: the propeller (two crossed blade boxes, length ``D``) and the motor's bell on a
  hinge about ``z_i`` through ``p_i``, spun by a velocity servo (or a torque motor,
  ``ModelOptions.spin_actuator``) whose reaction torque acts on the mount (spin-up reaction) and
  whose angular momentum gives the gyroscopic torque (both from the engine). With a bell
  (``rotor_mass > 0``), from the platform's own parts, or when the platform has a rotor inertia
  (``platform.rotor_inertia``, derived from its parts or given) the body has an explicit inertial:
  two thin rods plus a thin-walled cylinder, its spin inertia
  ``platform.J_r`` exactly (``m_bell r_m^2 + m_p D^2/12`` from the parts); otherwise the blade boxes'
  ``m_p (D^2 + chord^2)/12``.
* a ``thrust_i`` site at ``p_i`` (axes of the mount) carrying one actuator with
  gear ``(0, 0, c_f,i, 0, 0, kappa_i c_tau,i)``: control ``u_i`` applies the force
  ``c_f,i u_i z_i`` at ``p_i`` and the drag torque ``kappa_i c_tau,i u_i z_i`` (eqs.
  5-6), i.e. column ``i`` of ``F`` and ``M`` (eq. 10) on the vehicle. The drag torque acts on the
  mount, not on the propeller's hinge: a hinge actuator that models the motor's own torque applies it
  less the drag (:func:`jaxrotor.physics.plants.electric_engine_step`).
* a floor plane under the landing-gear feet at rest (vehicle at ``p = 0``); a vehicle without
  landing gear has nothing to stand on and no floor.

Actuator (control) order: ``u`` (n thrust inputs [rad^2/s^2]), ``n`` propeller
speeds (signed, [rad/s]; hinge torques [N m] with ``ModelOptions.spin_actuator = "motor"``), then one
angle target per rotor for each tilting angle set (``alpha`` first) [rad].

:class:`PhysicsModel` carries the engine's mass and inertia beside the platform's (the
analytic layer's) and their relative differences; :func:`warn_mismatch` warns with
:class:`InertiaMismatchWarning` when they differ by more than 0.5 % (the plants call it when they
build a model), except on the paper's presets, whose two inertias ``J^a`` / ``J^p`` are the
paper's design.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings

import equinox as eqx
import mujoco
import numpy as np

from .. import so3
from ..design.platform import (
    TILT_ANGLES,
    Platform,
    geometric_rotor_positions,
    per_rotor_angles,
    rotor_positions,
)
from ..design.parts import Parts
from ._geometry import arm_tips, check_parts, is_paper_platform

__all__ = ["InertiaMismatchWarning", "MISMATCH_TOLERANCE", "ModelOptions", "PhysicsModel", "SPIN_ACTUATORS",
           "build_model", "engine_mass_properties", "mjcf", "own_parts", "warn_mismatch"]

_INTEGRATORS = {"euler": "Euler", "rk4": "RK4", "implicit": "implicit", "implicitfast": "implicitfast"}

#: The kinds of propeller hinge actuator a model can be written with (:attr:`ModelOptions.spin_actuator`).
SPIN_ACTUATORS = ("velocity", "motor")
#: Relative difference of the engine's mass or inertia from the platform's beyond which the plants warn.
MISMATCH_TOLERANCE = 0.005
#: Radius of the payload's sphere [m] (a point mass for the analytic layer).
PAYLOAD_RADIUS = 1e-3
#: Smallest box half-extent written to the model [m] (MuJoCo needs positive sizes).
_MIN_HALF = 1e-6


class InertiaMismatchWarning(UserWarning):
    """The engine's mass or inertia differ from the platform's (the analytic layer's) by more than
    :data:`MISMATCH_TOLERANCE` (e.g. parts plus an explicit mass or inertia override)."""


@dataclasses.dataclass(frozen=True)
class ModelOptions:
    """Engine settings of a generated model.

    Attributes:
        timestep: physics step [s].
        integrator: ``"rk4"`` (default: 4th order, the same flight as the analytic layer's
            fixed-step loop to 1e-9 m on the use case, ``docs/physics.md``), ``"implicitfast"``
            (first order, the servos' velocity terms implicit: for much stiffer servos),
            ``"euler"`` or ``"implicit"``.
        spin: propellers are bodies on hinges spinning at the rotor speed (``False`` welds
            them to the mounts: one rigid body, no gyroscopic or spin-up effects).
        floor: add the floor plane (contacts with the landing-gear feet).
        spin_time_constant: time constant ``I_p / k_v`` of the propeller velocity servo [s] when it follows a
            motor model (an ideal motor, or welded propellers); a flight with a first-order speed motor
            (:meth:`~jaxrotor.dynamics.AbstractMotor.speed_time_constant`) spins the propellers as that motor,
            ``k_v = I_p / tau_m`` (:func:`jaxrotor.physics.plants.propeller_servo`).
        servo_bandwidth: natural frequency of the tilt position servos [Hz] (critically damped).
        spin_actuator: the propeller hinges' actuators as written in the model: ``"velocity"`` (default:
            velocity servos, ``k_v (ctrl - qvel)``) or ``"motor"`` (torque motors, ``<motor>``: the control is
            the hinge torque [N m], what a flight with a motor that draws current from the battery drives,
            :meth:`~jaxrotor.dynamics.AbstractMotor.draws_current`). The plants give each flight the hinge
            actuators its motor needs whatever the model says (:func:`jaxrotor.physics.plants.spin_actuators`),
            so a model of either kind flies every motor; ``"motor"`` writes the MJCF of an electric flight as
            it is flown.
    """

    timestep: float = 0.001
    integrator: str = "rk4"
    spin: bool = True
    floor: bool = True
    spin_time_constant: float = 0.002
    servo_bandwidth: float = 40.0
    spin_actuator: str = "velocity"

    def __post_init__(self):
        for name in ("timestep", "spin_time_constant", "servo_bandwidth"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"ModelOptions parameter `{name}` = {v!r} is invalid: it must be finite and > 0. "
                                 "Fix: pass e.g. timestep=0.001, spin_time_constant=0.002, servo_bandwidth=40.")
        if self.integrator.lower() not in _INTEGRATORS:
            raise ValueError(f"ModelOptions parameter `integrator` = {self.integrator!r} is unknown. Fix: use one of "
                             f"{sorted(_INTEGRATORS)}.")
        if self.spin_actuator not in SPIN_ACTUATORS:
            raise ValueError(f"ModelOptions parameter `spin_actuator` = {self.spin_actuator!r} is unknown. Fix: use "
                             f"one of {list(SPIN_ACTUATORS)} (velocity servos, or torque motors for a motor that "
                             "draws current).")


def _r(x) -> str:
    return repr(float(x))


def _f(x) -> str:
    return " ".join(repr(float(v)) for v in np.ravel(x))


@functools.cache
def _rot_to_quat():
    import jax

    return jax.jit(so3.rot_to_quat)  # compiled once: op by op it costs ~10 ms per call, a model has hundreds


def _quat(R) -> np.ndarray:
    return np.asarray(_rot_to_quat()(np.asarray(R, dtype=float)), dtype=float)


def _frame_from_axis(z) -> np.ndarray:
    """A rotation whose third column is the unit vector ``z`` (the smallest rotation from ``e_3``)."""
    z = np.asarray(z, dtype=float)
    c = float(z[2])
    if c < -1 + 1e-12:
        return np.diag([1.0, -1.0, -1.0])
    k = np.cross([0.0, 0.0, 1.0], z)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + K + K @ K / (1 + c)


def _mount(platform: Platform, i: int, a_i: float, b_i: float, g_i: float):
    """Rotor ``i``'s mount: ``(body quat, [(hinge axis, angle key)], inner quat)``.

    The mount body at ``p_i`` has orientation ``body quat`` times its hinge rotations
    (applied in order, each about its axis in the body frame: ``beta`` about ``y``,
    then ``alpha`` about ``x``); its motor, thrust site and propeller sit at
    ``inner quat`` within it. At the joint angles ``(a_i, b_i)`` the product is
    ``R_z(gamma_i) R_y(beta_i) R_x(alpha_i)``, whose third column is ``z_i`` (eq. 4).
    """
    eye = _quat(np.eye(3))
    if platform.axes is not None:
        return _quat(_frame_from_axis(np.asarray(platform.axes)[i])), [], eye
    Rz, Ry, Rx = (np.asarray(f(x), dtype=float) for f, x in ((so3.rot_z, g_i), (so3.rot_y, b_i), (so3.rot_x, a_i)))
    tilt_a, tilt_b = "alpha" in platform.tilting, "beta" in platform.tilting
    if tilt_b:
        joints = [((0.0, 1.0, 0.0), "beta")] + ([((1.0, 0.0, 0.0), "alpha")] if tilt_a else [])
        return _quat(Rz), joints, (eye if tilt_a else _quat(Rx))
    if tilt_a:
        return _quat(Rz @ Ry), [((1.0, 0.0, 0.0), "alpha")], eye
    return _quat(Rz @ Ry @ Rx), [], eye


def _floats(part, *names):
    return tuple(float(np.asarray(getattr(part, k))) for k in names)


def mjcf(platform: Platform, parts: Parts, options: ModelOptions = ModelOptions(),
         hub_offset=(0.0, 0.0, 0.0), frame_inertial=None, rotor_inertial: bool = False) -> str:
    """The MJCF text of the vehicle (see the module docstring for its structure).

    Args:
        platform: concrete platform (geometry eqs. 3-4, ``com_offset``, ``arms``, ``c_f``, ``c_tau``,
            ``kappa``, ``gravity``).
        parts: masses and shapes (:class:`~jaxrotor.design.parts.Parts`; a platform's own are
            :func:`~jaxrotor.physics.parts.default_parts`).
        options: engine settings.
        hub_offset: ``(3,)`` displacement of the hub cylinder's centre from its place in the parts
            (the geometric centre), body frame [m] (:func:`build_model` sets it so that the centre
            of mass is the origin).
        frame_inertial: ``(mass [kg], centre (3,) [m], inertia (3, 3) about it [kg m^2])`` of the frame
            body, written as its explicit ``<inertial>`` (the frame's geoms then carry no inertia);
            ``None``: from the frame's geoms (:func:`build_model` sets it for a platform's own parts).
        rotor_inertial: give every propeller body the explicit thin-rod (and bell) inertial, its spin
            inertia ``J_r = m_bell r_m^2 + m_p D^2 / 12`` exactly (always with a bell, ``rotor_mass > 0``;
            :func:`build_model` sets it for a platform's own parts); else the blade boxes' inertia. A
            platform with a rotor inertia (``platform.rotor_inertia``: from its parts, or given) always gets
            the explicit inertial with spin inertia ``platform.J_r`` (its transverse inertia the thin rods' and
            bell's, at least ``J_r / 2``).
    """
    geo = np.asarray(geometric_rotor_positions(platform), dtype=float)
    check_parts(parts, geo, platform.arms)
    c0 = None if platform.com_offset is None else np.asarray(platform.com_offset, dtype=float)

    def at(x):  # a point of the parts (about the geometric centre) in the body frame (about the CoM)
        x = np.asarray(x, dtype=float)
        return x if c0 is None else x - c0

    pos = np.asarray(rotor_positions(platform), dtype=float)
    n = platform.n_rotors
    a_all, b_all = (np.asarray(x, dtype=float) for x in per_rotor_angles(platform))
    gam = np.asarray(platform.gamma, dtype=float)
    c_f, c_tau, kappa = (np.asarray(x, dtype=float) for x in (platform.c_f, platform.c_tau, platform.kappa))
    hub_mass, hub_r, hub_h = _floats(parts.hub, "mass", "radius", "height")
    arm_r = float(np.asarray(parts.arm.radius))
    mot_mass, mot_r, mot_h, bell = _floats(parts.motor, "mass", "radius", "height", "rotor_mass")
    prop_D, prop_mass, prop_chord, prop_t = _floats(parts.propeller, "diameter", "mass", "chord", "thickness")
    prop_radius = prop_D / 2
    gear = parts.landing_gear
    nocol = 'contype="0" conaffinity="0"'
    option = (f'  <option timestep="{_r(options.timestep)}" integrator="{_INTEGRATORS[options.integrator.lower()]}" '
              f'gravity="0 0 {_r(-float(platform.gravity))}"/>')
    lines = [f'<mujoco model="{platform.name}">', '  <compiler angle="radian" autolimits="true"/>', option,
             '  <worldbody>']
    if gear is not None:
        g_mass, g_r, g_len, g_leg_r, g_foot_r = _floats(gear, "mass", "radius", "length", "leg_radius", "foot_radius")
        floor_z = -hub_h / 2 - g_len - g_foot_r
        if c0 is not None:
            floor_z = floor_z - float(c0[2])
        if options.floor:
            lines.append(f'    <geom name="floor" type="plane" size="0 0 1" pos="0 0 {_r(floor_z)}" contype="1" '
                         'conaffinity="1"/>')
    hub_pos = np.asarray(hub_offset, dtype=float) if c0 is None else np.asarray(hub_offset, dtype=float) - c0
    hub_geom = (f'      <geom name="hub" type="cylinder" size="{_r(hub_r)} {_r(hub_h / 2)}" '
                f'pos="{_f(hub_pos)}" mass="{_r(hub_mass)}" {nocol}/>')
    lines += ['    <body name="frame">', '      <freejoint name="root"/>']
    if frame_inertial is not None:
        m_f, c_f_body, J_f = frame_inertial
        J_f = np.asarray(J_f, dtype=float)
        full = (J_f[0, 0], J_f[1, 1], J_f[2, 2], J_f[0, 1], J_f[0, 2], J_f[1, 2])
        lines.append(f'      <inertial pos="{_f(c_f_body)}" mass="{_r(m_f)}" fullinertia="{_f(full)}"/>')
    lines.append(hub_geom)
    tips = arm_tips(geo, platform.arms)
    dist = np.linalg.norm(tips, axis=1)
    arm_mass = np.asarray(parts.arm.mass_of(dist - hub_r), dtype=float).reshape(-1)
    for k in range(len(tips)):
        d = tips[k] / dist[k]
        start = d * hub_r / max(np.linalg.norm(d[:2]), 1e-12)  # on the hub's rim
        if arm_mass[k] > 0:
            lines.append(f'      <geom name="arm{k}" type="capsule" fromto="{_f(at(start))} {_f(at(tips[k]))}" '
                         f'size="{_r(arm_r)}" mass="{_r(arm_mass[k])}" {nocol}/>')
    if gear is not None:
        for k in range(gear.legs):
            az = math.pi / gear.legs + 2 * math.pi * k / gear.legs
            x, y = g_r * math.cos(az), g_r * math.sin(az)
            top, bottom = -hub_h / 2, -hub_h / 2 - g_len
            lines.append(f'      <geom name="leg{k}" type="capsule" fromto="{_f(at([x, y, top]))} '
                         f'{_f(at([x, y, bottom]))}" size="{_r(g_leg_r)}" mass="{_r(g_mass)}" {nocol}/>')
            lines.append(f'      <geom name="foot{k}" type="sphere" size="{_r(g_foot_r)}" '
                         f'pos="{_f(at([x, y, bottom]))}" mass="0" contype="1" conaffinity="1" condim="3"/>')
    for key, box in (("battery", parts.battery), ("ballast", parts.ballast)):
        if box is not None and float(np.asarray(box.mass)) > 0:
            half = np.maximum(np.asarray(box.size, dtype=float) / 2, _MIN_HALF)
            lines.append(f'      <geom name="{key}" type="box" size="{_f(half)}" pos="{_f(at(box.offset))}" '
                         f'mass="{_r(box.mass)}" {nocol}/>')
    if parts.payload is not None and float(np.asarray(parts.payload.mass)) > 0:
        lines.append(f'      <geom name="payload" type="sphere" size="{_r(PAYLOAD_RADIUS)}" '
                     f'pos="{_f(at(parts.payload.offset))}" mass="{_r(parts.payload.mass)}" {nocol}/>')
    stator = mot_mass - bell
    z_motor = -(mot_h / 2 + prop_t / 2)  # motor centre along z_i: its top face under the blades
    # a platform's rotor inertia (from its parts, or given: an override) is the engine's spin inertia
    J_r = None if platform.rotor_inertia is None else np.broadcast_to(np.asarray(platform.rotor_inertia, dtype=float),
                                                                      (n,))
    explicit = bell > 0 or rotor_inertial or J_r is not None
    for i in range(n):
        body_q, joints, inner_q = _mount(platform, i, a_all[i], b_all[i], gam[i])
        lines.append(f'      <body name="mount{i}" pos="{_f(pos[i])}" quat="{_f(body_q)}">')
        for axis, key in joints:
            lines.append(f'        <joint name="{key}{i}" type="hinge" axis="{_f(axis)}"/>')
        inner = f'quat="{_f(inner_q)}"'
        z_i = np.asarray(so3.quat_to_rot(inner_q), dtype=float)[:, 2]
        if stator > 0:
            centre = -(mot_h / 2 + prop_t / 2) * z_i
            lines.append(f'        <geom name="motor{i}" type="cylinder" size="{_r(mot_r)} {_r(mot_h / 2)}" '
                         f'pos="{_f(centre)}" {inner} mass="{_r(stator)}" {nocol}/>')
        lines.append(f'        <site name="thrust{i}" pos="0 0 0" {inner}/>')
        lines.append(f'        <body name="prop{i}" {inner}>')
        if options.spin:
            lines.append(f'          <joint name="spin{i}" type="hinge" axis="0 0 1"/>')
        blade_mass = _r(prop_mass / 2)
        if explicit:  # thin rods + a thin-walled bell: spin inertia J_r = m_b r^2 + m_p D^2 / 12, or the platform's
            total = prop_mass + bell
            z_c = bell * z_motor / total
            i_zz = bell * mot_r**2 + prop_mass * prop_D**2 / 12 if J_r is None else float(J_r[i])
            i_xx = (prop_mass * prop_D**2 / 24 + prop_mass * z_c**2
                    + bell * (mot_r**2 / 2 + mot_h**2 / 12) + bell * (z_motor - z_c) ** 2)
            i_xx = max(i_xx, i_zz / 2)  # a body's inertia: i_xx + i_yy >= i_zz (a J_r above the parts' own)
            lines.append(f'          <inertial pos="0.0 0.0 {_r(z_c)}" mass="{_r(total)}" '
                         f'diaginertia="{_r(i_xx)} {_r(i_xx)} {_r(i_zz)}"/>')
            if bell > 0:
                lines.append(f'          <geom name="bell{i}" type="cylinder" size="{_r(mot_r)} {_r(mot_h / 2)}" '
                             f'pos="0.0 0.0 {_r(z_motor)}" mass="0" {nocol}/>')
            blade_mass = "0"
        for b, yaw in enumerate((0.0, math.pi / 2)):
            q = _quat(np.asarray(so3.rot_z(yaw), dtype=float))
            lines.append(f'          <geom name="blade{i}_{b}" type="box" quat="{_f(q)}" size="{_r(prop_radius)} '
                         f'{_r(prop_chord / 2)} {_r(prop_t / 2)}" mass="{blade_mass}" {nocol}/>')
        lines.append('        </body>')
        lines.append('      </body>')
    lines += ['    </body>', '  </worldbody>', '  <actuator>']
    for i in range(n):
        gear_i = (0.0, 0.0, c_f[i], 0.0, 0.0, kappa[i] * c_tau[i])
        lines.append(f'    <general name="u{i}" site="thrust{i}" gear="{_f(gear_i)}"/>')
    if options.spin:
        for i in range(n):
            if options.spin_actuator == "motor":  # the control is the hinge torque [N m]
                lines.append(f'    <motor name="spin{i}" joint="spin{i}" gear="1"/>')
            else:
                lines.append(f'    <velocity name="spin{i}" joint="spin{i}" kv="1"/>')
    for key in TILT_ANGLES:
        if key in platform.tilting:
            for i in range(n):
                lines.append(f'    <position name="servo_{key}{i}" joint="{key}{i}" kp="1" kv="1"/>')
    lines += ['  </actuator>', '</mujoco>']
    return "\n".join(lines)


def _floor_height(platform: Platform, parts: Parts) -> float:
    """World ``z`` of the floor [m] (the feet's bottom at ``p = 0``); ``-inf`` without landing gear."""
    gear = parts.landing_gear
    if gear is None:
        return -math.inf
    z = -float(parts.hub.height) / 2 - float(gear.length) - float(gear.foot_radius)
    return z if platform.com_offset is None else z - float(np.asarray(platform.com_offset)[2])


@dataclasses.dataclass
class PhysicsModel:
    """A compiled vehicle model and where its parts live in the engine's arrays.

    Attributes:
        model: the ``mujoco.MjModel``.
        xml: its MJCF text.
        platform: the platform it was built from.
        parts: the parts it was built from.
        options: engine settings.
        mass: total mass from the engine [kg].
        inertia: ``(3, 3)`` inertia about the centre of mass, body frame, from the engine
            (rotational block of the joint-space inertia of the free joint, propellers locked) [kg m^2].
        platform_mass: the platform's (analytic layer's) mass [kg].
        platform_inertia: ``(3, 3)`` the platform's inertia about its centre of mass [kg m^2].
        spin_sign: ``(n,)`` propeller spin direction along ``z_i``: ``-kappa_i`` (a counter-clockwise
            propeller, ``kappa = -1``, spins about ``+z_i``).
        spin_inertia: ``(n,)`` propeller (and bell) inertia about ``z_i`` from the engine [kg m^2].
        floor_height: world ``z`` of the floor [m] (the vehicle rests on it at ``p = 0``; ``-inf``
            without landing gear: no floor).
        hub_shift: ``(3,)`` how far :func:`build_model` moved the hub to put the engine's centre of
            mass on the origin [m].
        spin_qvel: ``(n,)`` qvel addresses of the propeller hinges (empty without spin).
        spin_qpos: ``(n,)`` their qpos addresses.
        tilt_qpos, tilt_qvel: per tilting angle set, ``(n,)`` hinge addresses.
        ctrl_u, ctrl_spin: control slices of the thrust inputs and propeller speeds.
        ctrl_tilt: per tilting angle set, the control slice of its servo targets.
    """

    model: mujoco.MjModel
    xml: str
    platform: Platform
    parts: Parts
    options: ModelOptions
    mass: float
    inertia: np.ndarray
    platform_mass: float
    platform_inertia: np.ndarray
    spin_sign: np.ndarray
    spin_inertia: np.ndarray
    floor_height: float
    hub_shift: np.ndarray
    spin_qvel: np.ndarray
    spin_qpos: np.ndarray
    tilt_qpos: dict
    tilt_qvel: dict
    ctrl_u: slice
    ctrl_spin: slice
    ctrl_tilt: dict

    @property
    def n_rotors(self) -> int:
        """Number of rotors."""
        return self.platform.n_rotors

    @property
    def relative_difference(self) -> dict:
        """The engine's mass properties relative to the platform's (the analytic layer's).

        Returns:
            ``{"mass": (m_e - m) / m, "inertia": (3, 3) (J_e - J)_ij / sqrt(J_ii J_jj)`` (diagonal: per axis;
            off-diagonal: products of inertia against their axes' moments), ``"spin_inertia": (n,)``
            ``(J_r,e - J_r) / J_r`` (``None`` where the platform has no rotor inertia)``}``.
        """
        J = np.asarray(self.platform_inertia, dtype=float)
        scale = np.sqrt(np.outer(np.diag(J), np.diag(J)))
        J_r = np.asarray(self.platform.J_r, dtype=float)
        spin = None if not np.all(J_r > 0) else (self.spin_inertia - J_r) / J_r
        return {"mass": (self.mass - self.platform_mass) / self.platform_mass,
                "inertia": (np.asarray(self.inertia) - J) / scale, "spin_inertia": spin}

    @property
    def max_relative_difference(self) -> float:
        """``max(|mass|, max_ij |inertia_ij|)`` of :attr:`relative_difference`."""
        d = self.relative_difference
        return float(max(abs(d["mass"]), np.abs(d["inertia"]).max()))

    def physics_platform(self) -> Platform:
        """The platform with the engine's mass and inertia (what a controller of this vehicle should know)."""
        import equinox as eqx
        import jax.numpy as jnp

        dtype = self.platform.mass.dtype
        return eqx.tree_at(lambda p: (p.mass, p.inertia), self.platform,
                           (jnp.asarray(self.mass, dtype=dtype), jnp.asarray(self.inertia, dtype=dtype)))

    def initial_qpos(self) -> np.ndarray:
        """``qpos`` at rest at ``p = 0``, identity attitude, tilt hinges at the platform's angles."""
        q = np.array(self.model.qpos0, dtype=float)
        angles = dict(zip(TILT_ANGLES, (np.asarray(x, dtype=float) for x in per_rotor_angles(self.platform))))
        for key, adr in self.tilt_qpos.items():
            q[adr] = angles[key]
        return q


def mismatch_message(pm: PhysicsModel, tolerance: float = MISMATCH_TOLERANCE) -> str | None:
    """The text of :class:`InertiaMismatchWarning` for ``pm``, or ``None`` when the engine's mass and inertia are
    within ``tolerance`` (relative) of the platform's, or the platform is one of the paper's presets with typed-in
    mass and inertia (its physics inertia ``J^p`` differs from ``J^a`` by the paper's design)."""
    if (is_paper_platform(pm.platform) and pm.platform.parts is None) or pm.max_relative_difference <= tolerance:
        return None
    d = pm.relative_difference
    Je, Jp = np.asarray(pm.inertia), np.asarray(pm.platform_inertia)
    diag = ", ".join(f"{'xyz'[k]}: {Je[k, k]:.6g} vs {Jp[k, k]:.6g} ({100 * d['inertia'][k, k]:+.2f} %)"
                     for k in range(3))
    off = np.abs(d["inertia"] - np.diag(np.diag(d["inertia"]))).max()
    plat = pm.platform
    given = f" (given explicitly: {', '.join(plat.overrides)})" if plat.overrides else ""
    if plat.parts is None:
        why, fix = ("the model's parts are not fitted to this platform", "pass no parts (the physics layer then fits "
                    "generic parts to the platform's mass and inertia, physics.parts.fit_parts), or build the "
                    "platform from these parts (parts=)")
    elif pm.parts is not plat.parts:
        why, fix = "the model's parts are not the platform's", "pass no parts: the physics layer uses platform.parts"
    else:
        why, fix = "the platform overrides what its parts give", ("drop the mass / inertia override so both layers "
                                                                   "take them from the parts")
    return (f"physics model of `{plat.name}`: the engine's mass and inertia differ from the platform's"
            f"{given} by up to {100 * pm.max_relative_difference:.2f} % (tolerance {100 * tolerance:g} %): "
            f"mass {pm.mass:.6g} vs {pm.platform_mass:.6g} kg ({100 * d['mass']:+.2f} %); inertia [kg m^2] {diag}; "
            f"largest product of inertia {100 * off:.2f} % of its moments ({why}). The physics layer flies the "
            f"engine's values (PhysicsModel.mass, .inertia), the analytic layer the platform's. Fix: {fix}.")


def warn_mismatch(pm: PhysicsModel, tolerance: float = MISMATCH_TOLERANCE, stacklevel: int = 2) -> None:
    """Warn (:class:`InertiaMismatchWarning`) when the engine's mass or inertia differ from the platform's by more
    than ``tolerance`` (:func:`mismatch_message`)."""
    msg = mismatch_message(pm, tolerance)
    if msg is not None:
        warnings.warn(msg, InertiaMismatchWarning, stacklevel=stacklevel + 1)


def _addr(model, kind, names, field):
    ids = [mujoco.mj_name2id(model, kind, nm) for nm in names]
    return np.array([getattr(model, field)[j] for j in ids], dtype=int)


def _compile(platform, parts, options, hub_offset, frame_inertial=None, rotor_inertial=False):
    xml = mjcf(platform, parts, options, hub_offset, frame_inertial, rotor_inertial)
    return xml, mujoco.MjModel.from_xml_string(xml)


def own_parts(platform: Platform, parts: Parts) -> bool:
    """Whether ``parts`` are the platform's own (``platform.parts``, the same object or an equal pytree), from which
    its mass properties derive; ``False`` for a platform without parts."""
    own = platform.parts
    if own is None:
        return False
    if parts is own:
        return True
    try:
        return bool(eqx.tree_equal(parts, own))
    except Exception:  # noqa: BLE001 - differently shaped pytrees are simply not equal
        return False


def _shift(m, c):
    """``m (|c|^2 I - c c^T)``: the parallel-axis term of mass ``m`` at ``c``."""
    c = np.asarray(c, dtype=float)
    return m * (float(c @ c) * np.eye(3) - np.outer(c, c))


def _frame_inertial(model, data, platform: Platform):
    """The frame body's inertial that makes the whole engine model have the analytic layer's mass properties of
    ``platform.parts`` (:meth:`~jaxrotor.design.platform.Platform.mass_properties`: total mass, centre of mass on
    the body origin, inertia about it) at the platform's angles, the moving bodies (mounts, propellers) keeping
    the inertia of their shapes; ``None`` when no physical frame inertia can (then the hub is shifted instead)."""
    mp = platform.mass_properties()
    m_D, J_D = float(mp.mass), np.asarray(mp.inertia, dtype=float)
    frame = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "frame")
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    m_E = float(np.sum(model.body_mass))
    s_E = m_E * np.array(data.subtree_com[frame])
    J_E = 0.5 * (M[3:6, 3:6] + M[3:6, 3:6].T)  # about the origin
    m_F, c_F = float(model.body_mass[frame]), np.array(model.body_ipos[frame])
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, model.body_iquat[frame])
    R = R.reshape(3, 3)
    J_F = R @ np.diag(model.body_inertia[frame]) @ R.T
    m_O, s_O = m_E - m_F, s_E - m_F * c_F  # the moving bodies
    J_O = J_E - (J_F + _shift(m_F, c_F))
    m_new = m_D - m_O
    if not m_new > 0:
        return None
    c_new = -s_O / m_new  # the whole centre of mass on the origin
    J_new = J_D - J_O - _shift(m_new, c_new)
    J_new = 0.5 * (J_new + J_new.T)
    ev = np.linalg.eigvalsh(J_new)
    if ev.min() <= 0 or 2 * ev.max() > ev.sum() * (1 + 1e-12):  # positive, A + B >= C
        return None
    return m_new, c_new, J_new


def _tilt_names(platform):
    return {k: [f"{k}{i}" for i in range(platform.n_rotors)] for k in TILT_ANGLES if k in platform.tilting}


def _at_rest(model, platform):
    """``mj_forward`` at the origin, identity attitude, tilt hinges at the platform's angles:
    ``(subtree centre of mass of the frame (3,), data)``."""
    data = mujoco.MjData(model)
    q = np.array(model.qpos0)
    angles = dict(zip(TILT_ANGLES, (np.asarray(x, dtype=float) for x in per_rotor_angles(platform))))
    for key, names in _tilt_names(platform).items():
        q[_addr(model, mujoco.mjtObj.mjOBJ_JOINT, names, "jnt_qposadr")] = angles[key]
    data.qpos[:] = q
    mujoco.mj_forward(model, data)
    frame = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "frame")
    return np.array(data.subtree_com[frame]), data


def engine_mass_properties(platform: Platform, parts: Parts) -> tuple[float, np.ndarray, np.ndarray]:
    """The engine's mass properties of ``parts`` on ``platform`` as placed (hub not shifted, tilt hinges at the
    platform's angles, propellers locked): ``(mass [kg], first moment sum m_k c_k (3,) [kg m], inertia about the
    body origin (3, 3) [kg m^2])``."""
    model = mujoco.MjModel.from_xml_string(mjcf(platform, parts, ModelOptions(floor=False)))
    c, data = _at_rest(model, platform)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    mass = float(np.sum(model.body_mass))
    return mass, mass * c, 0.5 * (M[3:6, 3:6] + M[3:6, 3:6].T)


def build_model(platform: Platform, parts: Parts, options: ModelOptions = ModelOptions()) -> PhysicsModel:
    """Generate, compile and measure the vehicle model.

    Compiles twice. For the platform's own parts (``platform.parts``) the first model gives the
    engine's mass properties of the moving bodies (mounts, propellers) and the frame body gets the
    explicit inertial that completes them to the analytic layer's mass, centre of mass (the body
    origin) and inertia (:meth:`~jaxrotor.design.platform.Platform.mass_properties`, at the
    platform's angles); for any other parts the first model gives the engine's centre of mass
    ``c`` of all parts (hub where the parts put it) and the hub is then moved by
    ``-m c / m_hub``. Either way the centre of mass is the body origin (checked to 1e-9 m).
    Mass and inertia are the engine's (joint-space inertia of the free joint, propellers locked). The
    propeller servo gain is ``k_v = I_p / spin_time_constant`` (a flight whose motor is a first-order speed
    controller sets its own, ``I_p / tau_m``, on the plants) and the tilt servos'
    ``k_p = I w^2``, ``k_v = 2 I w`` (``w = 2 pi servo_bandwidth``, ``I`` the engine's
    inertia about each hinge).

    Args:
        platform: concrete platform.
        parts: the vehicle's parts (:func:`~jaxrotor.physics.parts.default_parts` of the platform: its own
            parts, the paper's for its presets, else :func:`~jaxrotor.physics.parts.fit_parts`).
        options: engine settings.

    Raises:
        ValueError: parts that cannot carry the platform (see :func:`~jaxrotor.physics.parts.check_parts`),
            a platform :func:`~jaxrotor.physics.parts.fit_parts` cannot fit, or a centre of mass the hub
            cannot move to the origin.
    """
    n = platform.n_rotors
    own = own_parts(platform, parts)
    xml, model = _compile(platform, parts, options, (0.0, 0.0, 0.0), rotor_inertial=own)
    tilt_names = _tilt_names(platform)
    c, data = _at_rest(model, platform)
    inertial = _frame_inertial(model, data, platform) if own else None
    if inertial is not None:  # the platform's own parts: the engine has their analytic mass properties
        offset = np.zeros(3)
    else:  # the shapes' own: the hub moves the centre of mass onto the origin
        m_total = float(np.sum(model.body_mass))
        offset = -m_total * c / float(np.asarray(parts.hub.mass))
    xml, model = _compile(platform, parts, options, offset, inertial, rotor_inertial=own)
    c, data = _at_rest(model, platform)
    if np.linalg.norm(c) > 1e-9:
        raise ValueError(f"build_model: the centre of mass is {c.tolist()} m from the body origin after moving the hub. "
                         "Fix: give the hub a larger share of the mass.")
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    mass = float(np.mean(np.diag(M)[:3]))
    inertia = 0.5 * (M[3:6, 3:6] + M[3:6, 3:6].T)
    spin_names = [f"spin{i}" for i in range(n)] if options.spin else []
    spin_qvel = _addr(model, mujoco.mjtObj.mjOBJ_JOINT, spin_names, "jnt_dofadr")
    spin_qpos = _addr(model, mujoco.mjtObj.mjOBJ_JOINT, spin_names, "jnt_qposadr")
    prop_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"prop{i}") for i in range(n)]
    spin_inertia = np.array([float(np.max(model.body_inertia[b])) for b in prop_ids])
    if options.spin:
        spin_inertia = np.array(model.dof_M0[spin_qvel], dtype=float)
    if options.spin and options.spin_actuator == "velocity":
        kv = spin_inertia / options.spin_time_constant
        act = slice(n, 2 * n)
        model.actuator_gainprm[act, 0] = kv
        model.actuator_biasprm[act, 2] = -kv
    tilt_qpos, tilt_qvel, ctrl_tilt = {}, {}, {}
    start = 2 * n if options.spin else n
    w = 2 * math.pi * options.servo_bandwidth
    for key, names in tilt_names.items():
        tilt_qpos[key] = _addr(model, mujoco.mjtObj.mjOBJ_JOINT, names, "jnt_qposadr")
        tilt_qvel[key] = _addr(model, mujoco.mjtObj.mjOBJ_JOINT, names, "jnt_dofadr")
        I = np.array(model.dof_M0[tilt_qvel[key]], dtype=float)
        sl = slice(start, start + n)
        model.actuator_gainprm[sl, 0] = I * w**2
        model.actuator_biasprm[sl, 1] = -I * w**2
        model.actuator_biasprm[sl, 2] = -2 * I * w
        ctrl_tilt[key] = sl
        start += n
    return PhysicsModel(
        model=model, xml=xml, platform=platform, parts=parts, options=options, mass=mass, inertia=inertia,
        platform_mass=float(np.asarray(platform.mass)), platform_inertia=np.asarray(platform.inertia, dtype=float),
        spin_sign=-np.asarray(platform.kappa, dtype=float), spin_inertia=spin_inertia,
        floor_height=_floor_height(platform, parts), hub_shift=np.asarray(offset, dtype=float),
        spin_qvel=spin_qvel, spin_qpos=spin_qpos, tilt_qpos=tilt_qpos, tilt_qvel=tilt_qvel, ctrl_u=slice(0, n),
        ctrl_spin=slice(n, 2 * n) if options.spin else slice(n, n), ctrl_tilt=ctrl_tilt,
    )
