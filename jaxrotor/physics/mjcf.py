"""The multibody model of a platform: MJCF generation and the compiled MuJoCo model.

:func:`build_model` turns a :class:`~jaxrotor.design.platform.Platform` (rotor
hubs ``p_i`` and spin axes ``z_i``, eqs. 3-4) and a
:class:`~jaxrotor.physics.parts.Parts` description into a MuJoCo model:

* ``frame``: a free body (root of the vehicle) whose origin is the centre of
  mass of the whole vehicle, so its free-joint position is the platform's ``p``
  and its angular velocity (local frame) the platform's ``omega``. The hub, the
  arms and the landing gear are geoms of this body; the hub cylinder is shifted
  so that the engine's centre of mass of every part lands on the origin.
* ``mount_i``: the rotor mount at ``p_i`` with its local ``z`` along ``z_i``
  (``R_z(gamma_i) R_y(beta_i) R_x(alpha_i)``, eq. 4). Fixed-tilt mounts are welded
  to the frame; on a tilting platform the angle sets in ``platform.tilting`` are
  hinge joints (``beta`` about the arm frame's ``y``, ``alpha`` about the arm
  axis ``x``) driven by position servos.
* ``prop_i``: the propeller (two crossed blades) on a hinge about ``z_i`` through ``p_i``, spun by
  a velocity servo whose reaction torque acts on the mount (spin-up reaction) and
  whose angular momentum gives the gyroscopic torque (both from the engine).
* a ``thrust_i`` site at ``p_i`` (axes of the mount) carrying one actuator with
  gear ``(0, 0, c_f,i, 0, 0, kappa_i c_tau,i)``: control ``u_i`` applies the force
  ``c_f,i u_i z_i`` at ``p_i`` and the drag torque ``kappa_i c_tau,i u_i z_i`` (eqs.
  5-6), i.e. column ``i`` of ``F`` and ``M`` (eq. 10) on the vehicle.
* a floor plane under the landing-gear feet at rest (vehicle at ``p = 0``).

Actuator (control) order: ``u`` (n thrust inputs [rad^2/s^2]), ``n`` propeller
speeds (signed, [rad/s]), then one angle target per rotor for each tilting
angle set (``alpha`` first) [rad].
"""

from __future__ import annotations

import dataclasses
import functools
import math

import mujoco
import numpy as np

from .. import so3
from ..design.platform import (
    TILT_ANGLES,
    Platform,
    per_rotor_angles,
    rotor_positions,
)
from .parts import Parts, check_parts

__all__ = ["ModelOptions", "PhysicsModel", "build_model", "mjcf"]

_INTEGRATORS = {"euler": "Euler", "rk4": "RK4", "implicit": "implicit", "implicitfast": "implicitfast"}


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
        spin_time_constant: time constant ``I_p / k_v`` of the propeller velocity servo [s].
        servo_bandwidth: natural frequency of the tilt position servos [Hz] (critically damped).
    """

    timestep: float = 0.001
    integrator: str = "rk4"
    spin: bool = True
    floor: bool = True
    spin_time_constant: float = 0.002
    servo_bandwidth: float = 40.0

    def __post_init__(self):
        for name in ("timestep", "spin_time_constant", "servo_bandwidth"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"ModelOptions parameter `{name}` = {v!r} is invalid: it must be finite and > 0. "
                                 "Fix: pass e.g. timestep=0.001, spin_time_constant=0.002, servo_bandwidth=40.")
        if self.integrator.lower() not in _INTEGRATORS:
            raise ValueError(f"ModelOptions parameter `integrator` = {self.integrator!r} is unknown. Fix: use one of "
                             f"{sorted(_INTEGRATORS)}.")


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


def mjcf(platform: Platform, parts: Parts, options: ModelOptions = ModelOptions(),
         hub_offset=(0.0, 0.0, 0.0)) -> str:
    """The MJCF text of the vehicle (see the module docstring for its structure).

    Args:
        platform: concrete platform (geometry eqs. 3-4, ``c_f``, ``c_tau``, ``kappa``, ``gravity``).
        parts: masses and shapes.
        options: engine settings.
        hub_offset: ``(3,)`` position of the hub cylinder's centre in the body frame [m]
            (:func:`build_model` sets it so that the centre of mass is the origin).
    """
    pos = np.asarray(rotor_positions(platform), dtype=float)
    check_parts(parts, pos)
    n = platform.n_rotors
    a_all, b_all = (np.asarray(x, dtype=float) for x in per_rotor_angles(platform))
    gam = np.asarray(platform.gamma, dtype=float)
    c_f, c_tau, kappa = (np.asarray(x, dtype=float) for x in (platform.c_f, platform.c_tau, platform.kappa))
    hub, arm, mot, prop, gear = parts.hub, parts.arm, parts.motor, parts.propeller, parts.gear
    nocol = 'contype="0" conaffinity="0"'
    option = (f'  <option timestep="{_r(options.timestep)}" integrator="{_INTEGRATORS[options.integrator.lower()]}" '
              f'gravity="0 0 {_r(-float(platform.gravity))}"/>')
    lines = [f'<mujoco model="{platform.name}">', '  <compiler angle="radian" autolimits="true"/>', option,
             '  <worldbody>']
    floor_z = -hub.height / 2 - gear.length - gear.foot_radius
    if options.floor:
        lines.append(f'    <geom name="floor" type="plane" size="0 0 1" pos="0 0 {_r(floor_z)}" contype="1" '
                     'conaffinity="1"/>')
    hub_geom = (f'      <geom name="hub" type="cylinder" size="{_r(hub.radius)} {_r(hub.height / 2)}" '
                f'pos="{_f(hub_offset)}" mass="{_r(hub.mass)}" {nocol}/>')
    lines += ['    <body name="frame">', '      <freejoint name="root"/>', hub_geom]
    for i in range(n):
        d = pos[i] / np.linalg.norm(pos[i])
        start = d * hub.radius / max(np.linalg.norm(d[:2]), 1e-12)
        if arm.mass > 0:
            lines.append(f'      <geom name="arm{i}" type="capsule" fromto="{_f(start)} {_f(pos[i])}" '
                         f'size="{_r(arm.radius)}" mass="{_r(arm.mass)}" {nocol}/>')
    for k in range(gear.legs):
        az = math.pi / gear.legs + 2 * math.pi * k / gear.legs
        x, y = gear.radius * math.cos(az), gear.radius * math.sin(az)
        top, bottom = -hub.height / 2, -hub.height / 2 - gear.length
        lines.append(f'      <geom name="leg{k}" type="capsule" fromto="{_r(x)} {_r(y)} {_r(top)} {_r(x)} {_r(y)} {_r(bottom)}" '
                     f'size="{_r(gear.leg_radius)}" mass="{_r(gear.mass)}" {nocol}/>')
        lines.append(f'      <geom name="foot{k}" type="sphere" size="{_r(gear.foot_radius)}" '
                     f'pos="{_r(x)} {_r(y)} {_r(bottom)}" mass="0" contype="1" conaffinity="1" condim="3"/>')
    for i in range(n):
        body_q, joints, inner_q = _mount(platform, i, a_all[i], b_all[i], gam[i])
        lines.append(f'      <body name="mount{i}" pos="{_f(pos[i])}" quat="{_f(body_q)}">')
        for axis, key in joints:
            lines.append(f'        <joint name="{key}{i}" type="hinge" axis="{_f(axis)}"/>')
        inner = f'quat="{_f(inner_q)}"'
        z_i = np.asarray(so3.quat_to_rot(inner_q), dtype=float)[:, 2]
        if mot.mass > 0:
            centre = -(mot.height / 2 + prop.thickness / 2) * z_i
            lines.append(f'        <geom name="motor{i}" type="cylinder" size="{_r(mot.radius)} {_r(mot.height / 2)}" '
                         f'pos="{_f(centre)}" {inner} mass="{_r(mot.mass)}" {nocol}/>')
        lines.append(f'        <site name="thrust{i}" pos="0 0 0" {inner}/>')
        lines.append(f'        <body name="prop{i}" {inner}>')
        if options.spin:
            lines.append(f'          <joint name="spin{i}" type="hinge" axis="0 0 1"/>')
        for b, yaw in enumerate((0.0, math.pi / 2)):
            q = _quat(np.asarray(so3.rot_z(yaw), dtype=float))
            lines.append(f'          <geom name="blade{i}_{b}" type="box" quat="{_f(q)}" size="{_r(prop.radius)} '
                         f'{_r(prop.chord / 2)} {_r(prop.thickness / 2)}" mass="{_r(prop.mass / 2)}" {nocol}/>')
        lines.append('        </body>')
        lines.append('      </body>')
    lines += ['    </body>', '  </worldbody>', '  <actuator>']
    for i in range(n):
        gear_i = (0.0, 0.0, c_f[i], 0.0, 0.0, kappa[i] * c_tau[i])
        lines.append(f'    <general name="u{i}" site="thrust{i}" gear="{_f(gear_i)}"/>')
    if options.spin:
        for i in range(n):
            lines.append(f'    <velocity name="spin{i}" joint="spin{i}" kv="1"/>')
    for key in TILT_ANGLES:
        if key in platform.tilting:
            for i in range(n):
                lines.append(f'    <position name="servo_{key}{i}" joint="{key}{i}" kp="1" kv="1"/>')
    lines += ['  </actuator>', '</mujoco>']
    return "\n".join(lines)


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
        spin_sign: ``(n,)`` propeller spin direction along ``z_i``: ``-kappa_i`` (a counter-clockwise
            propeller, ``kappa = -1``, spins about ``+z_i``).
        spin_inertia: ``(n,)`` propeller inertia about ``z_i`` from the engine [kg m^2].
        floor_height: world ``z`` of the floor [m] (the vehicle rests on it at ``p = 0``).
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
    spin_sign: np.ndarray
    spin_inertia: np.ndarray
    floor_height: float
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


def _addr(model, kind, names, field):
    ids = [mujoco.mj_name2id(model, kind, nm) for nm in names]
    return np.array([getattr(model, field)[j] for j in ids], dtype=int)


def _compile(platform, parts, options, hub_offset):
    xml = mjcf(platform, parts, options, hub_offset)
    return xml, mujoco.MjModel.from_xml_string(xml)


def build_model(platform: Platform, parts: Parts, options: ModelOptions = ModelOptions()) -> PhysicsModel:
    """Generate, compile and measure the vehicle model.

    Compiles twice: the first model gives the engine's centre of mass ``c`` of all
    parts (hub at the origin); the hub is then moved by ``-m c / m_hub`` so that the
    centre of mass is the body origin (checked to 1e-9 m). Mass and inertia are the
    engine's (joint-space inertia of the free joint, propellers locked). The
    propeller servo gain is ``k_v = I_p / spin_time_constant`` and the tilt servos'
    ``k_p = I w^2``, ``k_v = 2 I w`` (``w = 2 pi servo_bandwidth``, ``I`` the engine's
    inertia about each hinge).

    Raises:
        ValueError: parts that cannot carry the platform (see :func:`~jaxrotor.physics.parts.check_parts`),
            or a centre of mass the hub cannot move to the origin.
    """
    n = platform.n_rotors
    xml, model = _compile(platform, parts, options, (0.0, 0.0, 0.0))
    tilt_names = {k: [f"{k}{i}" for i in range(n)] for k in TILT_ANGLES if k in platform.tilting}

    def com(model):
        data = mujoco.MjData(model)
        q = np.array(model.qpos0)
        angles = dict(zip(TILT_ANGLES, (np.asarray(x, dtype=float) for x in per_rotor_angles(platform))))
        for key, names in tilt_names.items():
            q[_addr(model, mujoco.mjtObj.mjOBJ_JOINT, names, "jnt_qposadr")] = angles[key]
        data.qpos[:] = q
        mujoco.mj_forward(model, data)
        frame = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "frame")
        return np.array(data.subtree_com[frame]), data

    c, _ = com(model)
    m_total = float(np.sum(model.body_mass))
    offset = -m_total * c / parts.hub.mass
    xml, model = _compile(platform, parts, options, offset)
    c, data = com(model)
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
    floor_z = -parts.hub.height / 2 - parts.gear.length - parts.gear.foot_radius
    return PhysicsModel(
        model=model, xml=xml, platform=platform, parts=parts, options=options, mass=mass, inertia=inertia,
        spin_sign=-np.asarray(platform.kappa, dtype=float), spin_inertia=spin_inertia, floor_height=floor_z,
        spin_qvel=spin_qvel, spin_qpos=spin_qpos, tilt_qpos=tilt_qpos, tilt_qvel=tilt_qvel, ctrl_u=slice(0, n),
        ctrl_spin=slice(n, 2 * n) if options.spin else slice(n, n), ctrl_tilt=ctrl_tilt,
    )
