"""The vehicle as a robot description: MJCF for MuJoCo and URDF for ROS, Gazebo and MuJoCo.

Both files describe the vehicle from its parts (:class:`~jaxrotor.design.parts.Parts`; ``None``: the ones
the physics layer builds the platform from, :func:`jaxrotor.physics.parts.default_parts`), as the physics
layer's multibody model (:mod:`jaxrotor.physics.mjcf`) does, with the same bodies, the same masses and
inertias per body and the same joints. SI units (m, kg, kg m^2, rad) everywhere.

**Frames.** The root (MJCF body ``frame``, URDF link ``base_link``) is jaxrotor's body frame: origin at the
centre of mass of the whole vehicle, axes FLU (x forward, y left, z up), which is also ROS REP 103's body
convention (x forward, y left, z up). The rotor hubs are at :func:`~jaxrotor.design.platform.rotor_positions`,
the spin axes :func:`~jaxrotor.design.platform.rotor_axes` (eqs. 3-4) in that frame.

**Bodies / links.**

* ``frame`` / ``base_link``: hub, arms, landing gear, battery, ballast and payload, with one explicit inertial
  that completes the moving bodies' to the platform's mass, centre of mass (the origin) and inertia about it
  (``platform.mass``, ``platform.inertia``: from the parts, :meth:`~jaxrotor.design.platform.Platform.mass_properties`,
  or as given).
* ``mount{i}``: rotor ``i``'s mount at ``p_i`` carrying the motor's stator; welded to the root (URDF ``fixed``
  joint ``mount{i}_fixed``), or on a tilting platform on hinge joints ``beta{i}`` (about the arm frame's ``y``)
  and/or ``alpha{i}`` (about the arm ``x``), the physics layer's tilt hinges.
* ``prop{i}``: the propeller and the motor's bell, on a hinge ``spin{i}`` about ``z_i`` through ``p_i``
  (URDF ``continuous``).

**Default pose.** Both files load in the design pose: tilt hinges at the platform's angles. The MJCF does
it with the hinges' ``ref`` (``qpos`` is the absolute angle, as the physics layer's servo targets are;
``qpos0`` the platform's angle); URDF has no ``ref``, so a URDF tilt joint's position is the angle *relative
to the design* (absolute angle = platform's angle + joint position), its limits the angle's valid range
(``alpha`` in ``(-pi/2, pi/2)``, ``beta`` in ``[0, pi/2)``) shifted likewise.

Loaded in MuJoCo, either file reproduces the platform's total mass, centre of mass, inertia about it and the
rotor poses to rounding (1e-12 relative; :func:`mass_properties_of_model`, :func:`rotor_poses_of_model`
measure them).
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET

import mujoco
import numpy as np

from ..design.parts import Parts
from ..design.platform import TILT_ANGLES, Platform, per_rotor_angles
from ..physics.mjcf import ModelOptions, mjcf, own_parts

__all__ = ["URDF_SPLIT", "mass_properties_of_model", "mjcf_text", "rotor_poses_of_model", "urdf_text",
           "write_mjcf", "write_urdf"]

#: Share of a two-hinge mount's mass and inertia that the URDF's intermediate link (``mount{i}_beta``, between
#: the ``beta`` and ``alpha`` joints) carries: URDF joints have one degree of freedom each and MuJoCo refuses
#: a massless moving body. The rest stays on ``mount{i}``; both sit at the same place in the design pose.
URDF_SPLIT = 1e-6
#: Relative tolerance of the exported model's mass properties against the platform's (checked on export).
_CHECK = 1e-9
#: The valid range of each tilt angle [rad] (:func:`jaxrotor.design.validation.validate_platform`).
_ANGLE_RANGE = {"alpha": (-math.pi / 2, math.pi / 2), "beta": (0.0, math.pi / 2)}
_ROOT_NAMES = ("frame", "base_link")
#: A flat frame's principal moments (``A + B = C`` to rounding, e.g. lumped inertias of a planar layout) get ``A`` and
#: ``B`` raised until ``A + B = C (1 + _MARGIN)``, as MuJoCo refuses ``A + B < C`` by any amount; at most a
#: shortfall of ``_ROUNDING C`` is rounding (more raises).
_MARGIN = 1e-13
_ROUNDING = 1e-10


# --------------------------------------------------------------------------- small helpers


def _r(x) -> str:
    return repr(float(x))


def _f(x) -> str:
    return " ".join(repr(float(v) + 0.0) for v in np.ravel(x))  # + 0.0: no "-0.0"


def _floats(text: str | None, default) -> np.ndarray:
    return np.array(default, dtype=float) if text is None else np.array([float(v) for v in text.split()])


def _quat2mat(q) -> np.ndarray:
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, np.asarray(q, dtype=float) / np.linalg.norm(q))
    return R.reshape(3, 3)


def _mat2quat(R) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.asarray(R, dtype=float).ravel())
    return q


def _axis_angle(axis, angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` [rad] about the unit ``axis`` (Rodrigues)."""
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def _rpy(R) -> np.ndarray:
    """URDF ``rpy`` of the rotation ``R = R_z(yaw) R_y(pitch) R_x(roll)`` (fixed axes x, y, z)."""
    R = np.asarray(R, dtype=float)
    c = math.hypot(R[0, 0], R[1, 0])
    if c > 1e-6:
        return np.array([math.atan2(R[2, 1], R[2, 2]), math.atan2(-R[2, 0], c), math.atan2(R[1, 0], R[0, 0])])
    # pitch = +-pi/2: only roll -+ yaw is defined; take yaw = 0
    return np.array([math.atan2(-R[1, 2], R[1, 1]), math.atan2(-R[2, 0], c), 0.0])


def _rpy_matrix(rpy) -> np.ndarray:
    r, p, y = rpy
    return _axis_angle((0, 0, 1), y) @ _axis_angle((0, 1, 0), p) @ _axis_angle((1, 0, 0), r)


def _shift(m: float, c) -> np.ndarray:
    """``m (|c|^2 I - c c^T)``: the parallel-axis term of mass ``m`` at ``c``."""
    c = np.asarray(c, dtype=float)
    return m * (float(c @ c) * np.eye(3) - np.outer(c, c))


def _check_platform(platform) -> None:
    if not isinstance(platform, Platform):
        raise ValueError(f"robot export parameter `platform` = {type(platform).__name__} is not a Platform. Fix: pass "
                         "a jaxrotor.design.platform.Platform (a preset: jaxrotor.design.presets.get(name), or "
                         "jaxrotor.io.config.load(path).platform).")


def _parts_of(platform: Platform, parts: Parts | None) -> Parts:
    _check_platform(platform)
    if parts is None:
        from ..physics.parts import default_parts

        return default_parts(platform)
    if not isinstance(parts, Parts):
        raise ValueError(f"robot export parameter `parts` = {type(parts).__name__} is not a Parts. Fix: pass "
                         "jaxrotor.design.parts.Parts, or None for the parts the physics layer builds the platform "
                         "from (jaxrotor.physics.parts.default_parts).")
    return parts


def _model_options(options: dict) -> ModelOptions:
    try:
        return ModelOptions(**options)
    except TypeError:
        known = sorted(f.name for f in ModelOptions.__dataclass_fields__.values())
        unknown = sorted(set(options) - set(known))
        raise ValueError(f"mjcf_text: unknown option(s) {unknown}. Fix: use keywords of "
                         f"jaxrotor.physics.mjcf.ModelOptions: {known}.") from None


def _target(platform: Platform) -> tuple[float, np.ndarray]:
    """The platform's mass [kg] and inertia about its centre of mass (3, 3) [kg m^2]: what the export reproduces."""
    return float(np.asarray(platform.mass)), np.asarray(platform.inertia, dtype=float)


# --------------------------------------------------------------------------- measuring a loaded model


def _root_body(model: mujoco.MjModel, root) -> int:
    if root is None:
        for name in _ROOT_NAMES:
            b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
            if b > 0:
                return b
        if model.nbody < 2:
            raise ValueError("mass_properties_of_model: the model has no body besides the world. Fix: load a vehicle "
                             "model (write_mjcf / write_urdf).")
        return 1
    b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, root) if isinstance(root, str) else int(root)
    if not 0 < b < model.nbody:
        raise ValueError(f"robot export parameter `root` = {root!r} names no body of the model (bodies: "
                         f"{[model.body(i).name for i in range(1, model.nbody)]}). Fix: pass the vehicle's root body, "
                         "'frame' (MJCF) or 'base_link' (URDF).")
    return b


def _forward(model: mujoco.MjModel, qpos) -> mujoco.MjData:
    data = mujoco.MjData(model)
    if qpos is not None:
        q = np.asarray(qpos, dtype=float)
        if q.shape != (model.nq,):
            raise ValueError(f"robot export parameter `qpos` has shape {q.shape}, the model has nq = {model.nq}. Fix: "
                             "pass None (the model's default pose, qpos0) or a (nq,) array.")
        data.qpos[:] = q
    mujoco.mj_forward(model, data)
    return data


def _subtree(model: mujoco.MjModel, root: int) -> list[int]:
    out = []
    for b in range(1, model.nbody):
        k = b
        while k > 0 and k != root:
            k = int(model.body_parentid[k])
        if k == root:
            out.append(b)
    return out


def _moments(model, data, bodies, root: int):
    """Mass [kg], first moment (3,) [kg m] and inertia about the root's origin (3, 3) [kg m^2] of ``bodies``,
    in the root body's frame."""
    R0, p0 = np.array(data.xmat[root]).reshape(3, 3), np.array(data.xpos[root])
    m, s, J = 0.0, np.zeros(3), np.zeros((3, 3))
    for b in bodies:
        mb = float(model.body_mass[b])
        c = R0.T @ (np.array(data.xipos[b]) - p0)
        Rb = R0.T @ np.array(data.ximat[b]).reshape(3, 3)
        m += mb
        s += mb * c
        J += Rb @ np.diag(model.body_inertia[b]) @ Rb.T + _shift(mb, c)
    return m, s, J


def mass_properties_of_model(model: mujoco.MjModel, qpos=None, root: str | int | None = None
                             ) -> tuple[float, np.ndarray, np.ndarray]:
    """The whole vehicle's mass properties in a loaded MuJoCo model.

    ``mj_forward`` at ``qpos`` (default: the model's ``qpos0``, the design pose of an exported vehicle), then
    over the root body and every body below it: the total mass, the centre of mass and the inertia about it by
    the parallel-axis theorem from each body's principal inertia (``body_inertia``), its frame (``ximat``) and
    its centre of mass (``xipos``).

    Args:
        model: a compiled ``mujoco.MjModel`` (an exported MJCF, or URDF loaded by MuJoCo).
        qpos: ``(nq,)`` joint positions, or ``None`` for ``model.qpos0``.
        root: the vehicle's root body (name or id); ``None``: ``frame`` (MJCF), else ``base_link`` (URDF),
            else body 1.

    Returns:
        ``(mass [kg], com (3,) [m], inertia (3, 3) [kg m^2])``: centre of mass and inertia about it in the root
        body's frame (jaxrotor's body frame for an exported vehicle: FLU, origin at the centre of mass, so
        ``com`` is zero to rounding).

    Raises:
        ValueError: ``qpos`` of the wrong shape, or a ``root`` that names no body.
    """
    b0 = _root_body(model, root)
    data = _forward(model, qpos)
    m, s, J_o = _moments(model, data, _subtree(model, b0), b0)
    if not m > 0:
        raise ValueError(f"mass_properties_of_model: the bodies under `{model.body(b0).name}` have no mass. Fix: pass "
                         "the vehicle's root body as `root`.")
    c = s / m
    J = J_o - _shift(m, c)
    return m, c, 0.5 * (J + J.T)


def rotor_poses_of_model(model: mujoco.MjModel, qpos=None, root: str | int | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Each propeller body's (``prop0``, ``prop1``, ...) position and spin axis in the vehicle's root frame.

    Args:
        model: a compiled ``mujoco.MjModel`` of an exported vehicle.
        qpos: ``(nq,)`` joint positions, or ``None`` for ``model.qpos0`` (the design pose).
        root: the root body as in :func:`mass_properties_of_model`.

    Returns:
        ``(positions (n, 3) [m], axes (n, 3) unit)``: the hubs ``p_i`` and spin axes ``z_i`` (the propeller
        body's local ``z``) in the root body's frame (jaxrotor's body frame, FLU about the centre of mass).

    Raises:
        ValueError: the model has no body ``prop0``; bad ``qpos`` or ``root``.
    """
    b0 = _root_body(model, root)
    ids = []
    while (b := mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"prop{len(ids)}")) >= 0:
        ids.append(b)
    if not ids:
        raise ValueError("rotor_poses_of_model: the model has no body `prop0`. Fix: load a vehicle exported by "
                         "jaxrotor.export.robot (write_mjcf / write_urdf), whose propellers are prop0, prop1, ...")
    data = _forward(model, qpos)
    R0, p0 = np.array(data.xmat[b0]).reshape(3, 3), np.array(data.xpos[b0])
    pos = np.stack([R0.T @ (np.array(data.xpos[b]) - p0) for b in ids])
    axes = np.stack([R0.T @ np.array(data.xmat[b]).reshape(3, 3)[:, 2] for b in ids])
    return pos, axes


# --------------------------------------------------------------------------- MJCF


def _design_pose(tree: ET.Element, platform: Platform) -> None:
    """Put the tilt hinges' reference at the platform's angles: each mount's ``quat`` becomes its design
    orientation, each hinge gets ``ref`` = its design angle and its axis in that frame (in place).

    The physics layer's mount ``i`` is ``Q R(j_1, q_1) ... R(j_k, q_k)`` (hinge ``l`` about the body axis ``j_l``,
    angle ``q_l``). With ``Q' = Q R(j_1, t_1) ... R(j_k, t_k)`` at the design angles ``t`` and axes
    ``j_l' = (R(j_{l+1}, t_{l+1}) ... R(j_k, t_k))^T j_l``, MuJoCo's ``Q' R(j_1', q_1 - t_1) ... R(j_k', q_k - t_k)``
    is the same rotation for every ``q``: the same kinematics, ``qpos`` still the absolute angle.
    """
    angles = dict(zip(TILT_ANGLES, (np.asarray(x, dtype=float) for x in per_rotor_angles(platform))))
    for body in tree.iter("body"):
        name = body.get("name", "")
        if not name.startswith("mount"):
            continue
        i = int(name[len("mount"):])
        joints = [j for j in body.findall("joint") if j.get("type") == "hinge"]
        if not joints:
            continue
        Q = _quat2mat(_floats(body.get("quat"), (1, 0, 0, 0)))
        axes = [_floats(j.get("axis"), (0, 0, 1)) for j in joints]
        theta = [float(angles[j.get("name")[:-len(str(i))]][i]) for j in joints]
        rots = [_axis_angle(a, t) for a, t in zip(axes, theta)]
        for k, joint in enumerate(joints):
            after = np.eye(3)
            for R in rots[k + 1:]:
                after = after @ R
            joint.set("axis", _f(after.T @ axes[k]))
            joint.set("ref", _r(theta[k]))
            Q = Q @ rots[k]
        body.set("quat", _f(_mat2quat(Q)))


def _compile(tree: ET.Element, platform: Platform) -> mujoco.MjModel:
    try:
        return mujoco.MjModel.from_xml_string(ET.tostring(tree, encoding="unicode"))
    except ValueError as e:
        raise ValueError(f"robot export: MuJoCo refuses the model of `{platform.name}`: {str(e).strip()}. Fix: give "
                         "every moving body mass (a tilting mount carries the motor's stator: parts.motor.mass > "
                         "parts.motor.rotor_mass), or pass other parts.") from None


def _frame_inertial(model: mujoco.MjModel, platform: Platform):
    """The ``frame`` body's inertial completing the other bodies' (at the design pose) to the platform's mass,
    centre of mass (the origin) and inertia."""
    m_D, J_D = _target(platform)
    frame = _root_body(model, "frame")
    data = _forward(model, None)
    others = [b for b in _subtree(model, frame) if b != frame]
    m_O, s_O, J_O = _moments(model, data, others, frame)
    m_F = m_D - m_O
    where = (f"platform `{platform.name}` (mass {m_D:.6g} kg, inertia diag {np.diag(J_D).tolist()} kg m^2) on these "
             f"parts, whose mounts and propellers weigh {m_O:.6g} kg")
    fix = ("Fix: pass parts that fit the platform (parts=None: the physics layer's, "
           "jaxrotor.physics.parts.default_parts), or build the platform from its parts.")
    if not m_F > 0:
        raise ValueError(f"robot export: {where}, leave the frame a mass of {m_F:.6g} kg (it must be > 0). {fix}")
    c_F = -s_O / m_F
    J_F = J_D - J_O - _shift(m_F, c_F)
    J_F = 0.5 * (J_F + J_F.T)
    ev, V = np.linalg.eigh(J_F)
    gap = ev[2] * (1 + _MARGIN) - ev[0] - ev[1]
    if 0 < gap <= _ROUNDING * ev[2] and ev[0] > 0:  # a flat frame (A + B = C) short of it by rounding only
        ev = ev + np.array([gap / 2, gap / 2, 0.0])
        J_F = V @ np.diag(ev) @ V.T
        J_F = 0.5 * (J_F + J_F.T)
    if ev.min() <= 0 or ev[2] > ev[0] + ev[1]:
        raise ValueError(f"robot export: {where}, leave the frame an inertia with principal moments {ev.tolist()} "
                         f"kg m^2, which no body has (each must be > 0 and at most the sum of the other two). {fix}")
    return m_F, c_F, J_F


def _set_gains(tree: ET.Element, model: mujoco.MjModel, platform: Platform, options: ModelOptions) -> None:
    """Write the physics layer's servo gains (:func:`jaxrotor.physics.mjcf.build_model`) into the actuators:
    propeller velocity servos ``kv = I_p / spin_time_constant``, tilt position servos ``kp = I w^2``,
    ``kv = 2 I w`` (``w = 2 pi servo_bandwidth``), ``I`` the engine's inertia about each hinge."""
    def dof_inertia(joint: str) -> float:
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        return float(model.dof_M0[model.jnt_dofadr[j]])

    w = 2 * math.pi * options.servo_bandwidth
    act = tree.find("actuator")
    if act is None:
        return
    for el in act:
        name = el.get("name", "")
        if el.tag == "velocity" and name.startswith("spin"):
            el.set("kv", _r(dof_inertia(name) / options.spin_time_constant))
        elif el.tag == "position" and name.startswith("servo_"):
            I = dof_inertia(name[len("servo_"):])
            el.set("kp", _r(I * w**2))
            el.set("kv", _r(2 * I * w))


def _check(model: mujoco.MjModel, platform: Platform, what: str) -> None:
    m_D, J_D = _target(platform)
    m, c, J = mass_properties_of_model(model)
    scale = float(np.abs(J_D).max())
    err = max(abs(m - m_D) / m_D, float(np.linalg.norm(c)) / max(float(np.sqrt(scale / m_D)), 1e-12),
              float(np.abs(J - J_D).max()) / scale)
    if err > _CHECK:
        raise ValueError(f"robot export: the {what} of `{platform.name}` reloads with mass properties off by {err:.3g} "
                         f"(relative, tolerance {_CHECK:g}). Fix: report it; the physics layer's model "
                         "(jaxrotor.physics.mjcf.build_model) is the reference meanwhile.")


def _build(platform: Platform, parts: Parts, options: ModelOptions) -> tuple[ET.Element, mujoco.MjModel]:
    own = own_parts(platform, parts)
    tree = ET.fromstring(mjcf(platform, parts, options, rotor_inertial=own))
    _design_pose(tree, platform)
    inertial = _frame_inertial(_compile(tree, platform), platform)
    tree = ET.fromstring(mjcf(platform, parts, options, frame_inertial=inertial, rotor_inertial=own))
    _design_pose(tree, platform)
    _set_gains(tree, _compile(tree, platform), platform, options)
    model = _compile(tree, platform)
    _check(model, platform, "MJCF")
    return tree, model


def _vehicle(platform: Platform, parts: Parts | None, options: ModelOptions) -> tuple[ET.Element, mujoco.MjModel]:
    """The exported MJCF tree of the vehicle and its compiled model (design pose as ``qpos0``)."""
    return _build(platform, _parts_of(platform, parts), options)


def _text(tree: ET.Element) -> str:
    ET.indent(tree, space="  ")
    return ET.tostring(tree, encoding="unicode") + "\n"


def mjcf_text(platform: Platform, parts: Parts | None = None, **options) -> str:
    """The vehicle as a standalone MJCF model: open it in MuJoCo's viewer (``python -m mujoco.viewer
    --mjcf=FILE``), or load it with ``mujoco.MjModel.from_xml_string``.

    The physics layer's model (:func:`jaxrotor.physics.mjcf.mjcf`: bodies ``frame`` (free joint ``root``),
    ``mount{i}``, ``prop{i}``, sites ``thrust{i}``, the floor under the landing-gear feet when the vehicle has
    landing gear) with what :func:`~jaxrotor.physics.mjcf.build_model` sets after compiling written into the
    file: the frame's inertial (the platform's mass, centre of mass on the body origin, inertia: also for
    parts that are not the platform's own, e.g. the paper's presets, whose physics layer keeps its ``J^p``)
    and the servo gains. The actuators are the physics layer's, in its order: ``u{i}`` (thrust input
    ``u_i = omega_i^2`` [rad^2/s^2] on site ``thrust{i}``: force ``c_f,i u_i`` along ``z_i`` and drag torque
    ``kappa_i c_tau,i u_i z_i``), ``spin{i}`` (propeller speed [rad/s], signed ``-kappa_i omega_i``; hinge torque
    [N m] with ``spin_actuator="motor"``), then ``servo_alpha{i}`` / ``servo_beta{i}`` (absolute tilt angle [rad])
    on a tilting platform. The tilt hinges' ``ref`` is the platform's angle, so ``qpos0`` is the design pose
    (``qpos`` stays the absolute angle).

    Args:
        platform: concrete platform.
        parts: the vehicle's parts; ``None``: the physics layer's (:func:`jaxrotor.physics.parts.default_parts`).
        **options: :class:`~jaxrotor.physics.mjcf.ModelOptions` keywords (``timestep``, ``integrator``, ``spin``,
            ``floor``, ``spin_time_constant``, ``servo_bandwidth``, ``spin_actuator``); defaults are the
            physics layer's.

    Returns:
        The MJCF text (model name ``platform.name``).

    Raises:
        ValueError: an unknown or invalid option, parts that cannot carry the platform
            (:func:`jaxrotor.physics.parts.check_parts`), or a platform mass / inertia the parts' mounts and
            propellers leave no physical frame body for.
    """
    tree, _ = _vehicle(platform, parts, _model_options(options))
    return _text(tree)


# --------------------------------------------------------------------------- URDF


def _origin(pos, R) -> str:
    return f'<origin xyz="{_f(pos)}" rpy="{_f(_rpy(R))}"/>'


def _geometry(model: mujoco.MjModel, g: int) -> tuple[str, np.ndarray, np.ndarray] | None:
    """A geom as URDF ``(geometry, pos, R)`` in its body's frame (capsules as cylinders); ``None`` for planes."""
    kind, size = int(model.geom_type[g]), np.array(model.geom_size[g])
    pos, R = np.array(model.geom_pos[g]), _quat2mat(model.geom_quat[g])
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return f'<sphere radius="{_r(size[0])}"/>', pos, R
    if kind in (mujoco.mjtGeom.mjGEOM_CYLINDER, mujoco.mjtGeom.mjGEOM_CAPSULE):
        return f'<cylinder radius="{_r(size[0])}" length="{_r(2 * size[1])}"/>', pos, R
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        return f'<box size="{_f(2 * size)}"/>', pos, R
    return None


def _shapes(model: mujoco.MjModel, body: int, indent: str) -> list[str]:
    """The body's geoms as URDF ``<visual>`` (no contact in the physics layer) and ``<collision>`` (contact: the
    landing-gear feet; a root without any gets its hub cylinder as collision)."""
    geoms = [g for g in range(model.ngeom) if int(model.geom_bodyid[g]) == body]
    contact = [g for g in geoms if model.geom_contype[g] or model.geom_conaffinity[g]]
    if body == 1 and not contact:
        contact = [g for g in geoms if model.geom(g).name == "hub"]
    out = []
    for g in geoms:
        shape = _geometry(model, g)
        if shape is None:
            continue
        geometry, pos, R = shape
        name = model.geom(g).name
        kinds = ("visual", "collision") if g in contact else ("visual",)
        for kind in kinds:
            label = name if kind == "visual" else f"{name}_collision"
            out += [f'{indent}<{kind} name="{label}">', f'{indent}  {_origin(pos, R)}',
                    f'{indent}  <geometry>{geometry}</geometry>', f'{indent}</{kind}>']
    return out


def _inertial(mass: float, com, J, indent: str) -> list[str]:
    J = np.asarray(J, dtype=float)
    return [f'{indent}<inertial>', f'{indent}  <origin xyz="{_f(com)}" rpy="0.0 0.0 0.0"/>',
            f'{indent}  <mass value="{_r(mass)}"/>',
            f'{indent}  <inertia ixx="{_r(J[0, 0])}" ixy="{_r(J[0, 1])}" ixz="{_r(J[0, 2])}" iyy="{_r(J[1, 1])}" '
            f'iyz="{_r(J[1, 2])}" izz="{_r(J[2, 2])}"/>', f'{indent}</inertial>']


def _body_inertial(model: mujoco.MjModel, b: int) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, centre of mass and inertia about it (3, 3) of body ``b`` in its own frame."""
    R = _quat2mat(model.body_iquat[b])
    return float(model.body_mass[b]), np.array(model.body_ipos[b]), R @ np.diag(model.body_inertia[b]) @ R.T


def _link(name: str, inertial, shapes: list[str]) -> list[str]:
    return [f'  <link name="{name}">', *_inertial(*inertial, "    "), *shapes, '  </link>']


def _joint(name: str, kind: str, parent: str, child: str, pos, R, axis=None, limit=None) -> list[str]:
    out = [f'  <joint name="{name}" type="{kind}">', f'    <parent link="{parent}"/>', f'    <child link="{child}"/>',
           f'    {_origin(pos, R)}']
    if axis is not None:
        out.append(f'    <axis xyz="{_f(axis)}"/>')
    if limit is not None:
        lo, hi, velocity = limit
        out.append(f'    <limit lower="{_r(lo)}" upper="{_r(hi)}" effort="0.0" velocity="{_r(velocity)}"/>')
    return out + ['  </joint>']


def urdf_text(platform: Platform, parts: Parts | None = None, name: str | None = None) -> str:
    """The vehicle as a URDF robot (ROS, Gazebo; MuJoCo loads it too).

    Links (see the module docstring): ``base_link`` (the frame: origin at the centre of mass, axes FLU = REP 103's
    x forward, y left, z up), ``mount{i}`` (rotor ``i``'s mount and motor stator; joint ``mount{i}_fixed``, or on a
    tilting platform revolute joints ``beta{i}`` / ``alpha{i}`` with their origins and axes as the physics layer's
    hinges, a two-hinge mount with an intermediate link ``mount{i}_beta`` carrying :data:`URDF_SPLIT` of its
    mass), ``prop{i}`` (propeller and bell, ``continuous`` joint ``spin{i}`` about the local ``z``, the spin axis
    ``z_i``, through the hub ``p_i``). Every link has the mass and inertia of the MJCF body of the same name
    (:func:`mjcf_text`; inertia about the link's centre of mass in the link frame), so the totals are the platform's
    mass, centre of mass and inertia. Geometry: the MJCF's shapes (cylinders, boxes, spheres; capsules as
    cylinders) as ``<visual>``; the landing-gear feet (or, without landing gear, the hub) as ``<collision>``.
    A tilt joint's position is the angle relative to the platform's (the file's zero pose is the design), its
    limits the angle's valid range shifted likewise, ``velocity`` the preset's servo rate limit
    (:data:`jaxrotor.design.presets.TILT_SERVOS`; 0: not given) and ``effort`` 0 (not given).

    A ``<mujoco><compiler .../></mujoco>`` element makes MuJoCo keep every link a body (``fusestatic="false"``),
    the visuals (``discardvisual="false"``) and the explicit inertias (``inertiafromgeom="false"``); MuJoCo welds
    ``base_link`` to the world (URDF has no free joint; :func:`mjcf_text` is the flyable model).

    Args:
        platform: concrete platform.
        parts: the vehicle's parts; ``None``: the physics layer's (:func:`jaxrotor.physics.parts.default_parts`).
        name: the robot's name; ``None``: ``platform.name``.

    Returns:
        The URDF text.

    Raises:
        ValueError: a ``name`` that is not a non-empty string, and what :func:`mjcf_text` raises.
    """
    _check_platform(platform)
    if name is None:
        name = str(platform.name)
    if not isinstance(name, str) or not name.strip() or any(ch in name for ch in '<>&"'):
        raise ValueError(f"urdf_text parameter `name` = {name!r} is invalid: it must be a non-empty string without "
                         "<, >, & or \". Fix: pass e.g. name='my_hexarotor', or None for platform.name.")
    _, model = _vehicle(platform, parts, ModelOptions(floor=False, spin=True))
    from ..design.presets import TILT_SERVOS

    rate = float(TILT_SERVOS.get(platform.name, {}).get("rate_limit", 0.0))
    lines = ['<?xml version="1.0"?>', f'<robot name="{name}">',
             '  <mujoco>', '    <compiler angle="radian" fusestatic="false" discardvisual="false" '
             'inertiafromgeom="false" balanceinertia="false"/>', '  </mujoco>']
    frame = _root_body(model, "frame")
    lines += _link("base_link", _body_inertial(model, frame), _shapes(model, frame, "    "))
    names = {frame: "base_link"}
    angles = dict(zip(TILT_ANGLES, (np.asarray(x, dtype=float) for x in per_rotor_angles(platform))))
    for b in range(frame + 1, model.nbody):
        body = model.body(b).name
        parent = names[int(model.body_parentid[b])]
        pos, R = np.array(model.body_pos[b]), _quat2mat(model.body_quat[b])
        joints = [j for j in range(model.njnt) if int(model.jnt_bodyid[j]) == b]
        mass, com, J = _body_inertial(model, b)
        shapes = _shapes(model, b, "    ")
        names[b] = body
        if not joints:
            lines += _link(body, (mass, com, J), shapes)
            lines += _joint(f"{body}_fixed", "fixed", parent, body, pos, R)
            continue
        if body.startswith("prop"):
            (j,) = joints
            lines += _link(body, (mass, com, J), shapes)
            lines += _joint(model.joint(j).name, "continuous", parent, body, pos, R, axis=model.jnt_axis[j])
            continue
        i = int(body[len("mount"):])
        share = URDF_SPLIT * (len(joints) - 1)
        for k, j in enumerate(joints):
            key = model.joint(j).name[:-len(str(i))]
            last = k == len(joints) - 1
            link = body if last else f"{body}_{key}"
            part = (1 - share) if last else URDF_SPLIT
            lines += _link(link, (part * mass, com, part * J), shapes if last else [])
            t = float(angles[key][i])
            lo, hi = _ANGLE_RANGE[key]
            lines += _joint(model.joint(j).name, "revolute", parent, link, pos, R, axis=model.jnt_axis[j],
                            limit=(lo - t, hi - t, rate))
            parent, pos, R = link, np.zeros(3), np.eye(3)
    lines.append('</robot>')
    text = "\n".join(lines) + "\n"
    _check(mujoco.MjModel.from_xml_string(text), platform, "URDF")
    return text


# --------------------------------------------------------------------------- files


def _checked_path(path, what: str) -> str:
    try:
        path = os.fspath(path)
    except TypeError:
        raise ValueError(f"{what} parameter `path` = {path!r} is not a path. Fix: pass a str or pathlib.Path.") from None
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{what} parameter `path` = {path!r}: its folder {folder!r} does not exist. Fix: create it, "
                         "or pass a path in an existing folder.")
    return path


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def write_mjcf(platform: Platform, path, parts: Parts | None = None) -> None:
    """Write :func:`mjcf_text` of ``platform`` (physics layer's default options) to ``path`` (UTF-8).

    Raises:
        ValueError: ``path``'s folder does not exist, and what :func:`mjcf_text` raises.
    """
    path = _checked_path(path, "write_mjcf")
    _write(path, mjcf_text(platform, parts))


def write_urdf(platform: Platform, path, parts: Parts | None = None) -> None:
    """Write :func:`urdf_text` of ``platform`` (robot name ``platform.name``) to ``path`` (UTF-8).

    Raises:
        ValueError: ``path``'s folder does not exist, and what :func:`urdf_text` raises.
    """
    path = _checked_path(path, "write_urdf")
    _write(path, urdf_text(platform, parts))
