"""PX4 control-allocation parameters of a design: ``CA_AIRFRAME``, ``CA_ROTOR_COUNT`` and ``CA_ROTORi_*``.

PX4's control allocator (``src/modules/control_allocator``) builds its effectiveness matrix from a
parameter set per rotor ``i`` (numbered from 0): position ``P = (PX, PY, PZ)`` [m] relative to the
centre of gravity, thrust axis ``A = (AX, AY, AZ)`` (only the direction counts), thrust coefficient
``CT`` [N] and moment ratio ``KM`` [m]. ``ActuatorEffectivenessRotors::computeEffectivenessMatrix``
(``src/modules/control_allocator/VehicleActuatorEffectiveness/ActuatorEffectivenessRotors.cpp``) sets, with
``a = A / |A|``::

    thrust_i = CT_i a_i                                   (rows 3-5 of PX4's matrix)
    moment_i = CT_i (P_i x a_i) - CT_i KM_i a_i           (rows 0-2: roll, pitch, yaw torque)

per unit of the rotor's normalised command ``s_i in [0, 1]``, in PX4's body frame FRD (x forward,
y right, z down). A rotor whose ``|A|`` or ``|CT|`` is below ``FLT_EPSILON`` is left out (its column is zero).

jaxrotor's allocation matrix ``G = [F; M]`` (:func:`jaxrotor.allocation.allocation_matrix`, eqs. 5-10)
has, in the FLU body frame and per unit ``u_i = omega_i^2`` [rad^2/s^2], the columns
``F[:, i] = c_f,i z_i`` and ``M[:, i] = c_f,i (p_i x z_i) + kappa_i c_tau,i z_i``. With

* the frame change ``S = diag(1, -1, -1)`` (FLU <-> FRD: a half turn about x, its own inverse, ``det S = +1``,
  so positions, forces and moments all map as ``v_FRD = S v_FLU``),
* the normalised command ``s_i = u_i / u_max,i = (omega_i / omega_max,i)^2``,

the two matrices are the same map exactly when

* ``P_i = S p_i`` (hub relative to the centre of mass, :func:`jaxrotor.design.platform.rotor_positions`),
* ``A_i = S z_i`` (unit spin axis; an upright rotor gives ``(0, 0, -1)``, PX4's default ``CA_ROTORi_AZ``),
* ``CT_i = c_f,i omega_max,i^2`` [N], the thrust at full command. PX4's parameter text
  (``src/modules/control_allocator/module.yaml``, ``CA_ROTOR${i}_CT``): "The thrust coefficient if defined as
  Thrust = CT * u^2, where u (with value between actuator minimum and maximum) is the output signal sent to
  the motor controller"; with a signal proportional to rotor speed, ``u = omega / omega_max`` and
  ``CT u^2 = c_f omega^2``. PX4's allocator is linear in the command, which it treats as a thrust
  fraction ``s = u^2``: the matching thrust curve is ``THR_MDL_FAC = 1`` (pure quadratic).
* ``KM_i = -kappa_i c_tau,i / c_f,i`` [m]. PX4 (``module.yaml``, ``CA_ROTOR${i}_KM``): "The moment
  coefficient if defined as Torque = KM * Thrust. Use a positive value for a rotor with CCW rotation. Use a
  negative value for a rotor with CW rotation." jaxrotor's ``kappa_i = -1`` is a counter-clockwise rotor
  (seen from the tip of its spin axis ``z_i``, i.e. from above for an upright rotor), so ``KM > 0`` for it,
  as PX4 asks: the drag torque ``kappa c_tau u z`` equals PX4's ``-CT KM a s``.

so that ``G = S6 E[[3, 4, 5, 0, 1, 2]] diag(1 / u_max)`` with ``S6 = diag(S, S)`` and ``E`` PX4's matrix
(:func:`allocation_from_px4`). ``CA_AIRFRAME = 0`` selects PX4's "Multirotor" effectiveness, whose rotor
axes are configurable (``CA_ROTORi_AX/AY/AZ``); ``CA_ROTOR_COUNT`` is at most :data:`PX4_MAX_ROTORS`.

PX4 then rescales the columns of the pseudo-inverse of ``E`` (roll and pitch by one factor, yaw by another,
thrust by a third: ``ControlAllocationPseudoInverse::updateControlAllocationMatrixScale``); that scaling
acts on the controller's normalised setpoints and leaves ``E`` itself, the geometry, unchanged.

PX4 stores every float parameter as a 32-bit float (relative precision about ``6e-8``); the files
written here carry the float64 values in full so that nothing is rounded before PX4 reads them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from jaxtyping import ArrayLike, Float

from ..design.platform import AngleLike, Platform, rotor_axes, rotor_positions

__all__ = [
    "px4_parameters",
    "px4_effectiveness",
    "allocation_from_px4",
    "write_px4_params",
    "read_px4_params",
    "px4_limitations",
    "FLU_TO_FRD",
    "PX4_MAX_ROTORS",
    "CA_AIRFRAME_MULTIROTOR",
    "PX4_ROTOR_DEFAULTS",
    "FORMATS",
]

#: ``S = diag(1, -1, -1)``: FLU body vector -> FRD body vector (and back: ``S`` is its own inverse).
FLU_TO_FRD = np.diag([1.0, -1.0, -1.0])

#: Most rotors PX4's rotor effectiveness takes (``CA_ROTOR_COUNT`` 0-12, ``max_num_mc_motors`` in
#: ``src/modules/control_allocator/module.yaml``).
PX4_MAX_ROTORS = 12

#: ``CA_AIRFRAME`` value of PX4's "Multirotor" effectiveness (configurable rotor axes).
CA_AIRFRAME_MULTIROTOR = 0

#: PX4's default of each per-rotor parameter (``module.yaml``): what PX4 uses for a parameter a file leaves out.
PX4_ROTOR_DEFAULTS = {"PX": 0.0, "PY": 0.0, "PZ": 0.0, "AX": 0.0, "AY": 0.0, "AZ": -1.0, "CT": 6.5, "KM": 0.05}

#: Parameter-file formats :func:`write_px4_params` writes: ``"qgc"`` (QGroundControl ``.params``) or
#: ``"airframe"`` (a PX4 airframe script of ``param set-default`` lines).
FORMATS = ("qgc", "airframe")

_FLT_EPSILON = float(np.finfo(np.float32).eps)  # PX4's FLT_EPSILON: the threshold of its rotor checks
_MAV_PARAM_TYPE = {int: 6, float: 9}  # MAV_PARAM_TYPE_INT32, MAV_PARAM_TYPE_REAL32
_ROTOR_FIELDS = ("PX", "PY", "PZ", "AX", "AY", "AZ", "CT", "KM")
# PX4's parameter metadata ranges (module.yaml); PX4 stores values outside them but its ground station flags them.
_PX4_RANGES = {"PX": (-100.0, 100.0), "PY": (-100.0, 100.0), "PZ": (-100.0, 100.0), "CT": (0.0, 100.0),
               "KM": (-1.0, 1.0)}


def _rotor_arrays(platform: Platform, alpha: AngleLike | None, beta: AngleLike | None) -> dict[str, np.ndarray]:
    """The per-rotor float64 arrays the export needs, checked: ``p``, ``z`` (FLU), ``c_f``, ``c_tau``, ``kappa``,
    ``omega_max``."""
    n = platform.n_rotors
    if n > PX4_MAX_ROTORS:
        raise ValueError(f"CA_ROTOR_COUNT = {n} for platform `{platform.name}`: PX4's rotor allocation takes at most "
                         f"{PX4_MAX_ROTORS} rotors (CA_ROTOR_COUNT 0-{PX4_MAX_ROTORS}). Fix: export a design with at "
                         f"most {PX4_MAX_ROTORS} rotors.")
    arrays = {
        "p": np.asarray(rotor_positions(platform), dtype=np.float64),
        "z": np.asarray(rotor_axes(platform, alpha, beta), dtype=np.float64),
        "c_f": np.asarray(platform.c_f, dtype=np.float64),
        "c_tau": np.asarray(platform.c_tau, dtype=np.float64),
        "kappa": np.asarray(platform.kappa, dtype=np.float64),
        "omega_max": np.asarray(platform.rotor_speed_max, dtype=np.float64),
    }
    w = arrays["omega_max"]
    bad = np.flatnonzero(~np.isfinite(w) | (w <= 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"CA_ROTOR{i}_CT = c_f * rotor_speed_max^2 needs a finite rotor_speed_max > 0; rotor {i} of "
                         f"`{platform.name}` has rotor_speed_max = {float(w[i])!r} rad/s. Fix: give `rotor_speed_max` "
                         "[rad/s] (or parts with a motor and a battery, from which it is derived).")
    cf = arrays["c_f"]
    bad = np.flatnonzero(~np.isfinite(cf) | (cf <= 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"CA_ROTOR{i}_KM = -kappa * c_tau / c_f needs c_f > 0; rotor {i} of `{platform.name}` has "
                         f"c_f = {float(cf[i])!r} N s^2/rad^2. Fix: give a positive, finite `c_f`.")
    for name in ("p", "z", "c_tau", "kappa"):
        bad = np.flatnonzero(~np.all(np.isfinite(arrays[name].reshape(n, -1)), axis=1))
        if bad.size:
            i = int(bad[0])
            what = {"p": "rotor position", "z": "rotor axis"}.get(name, name)
            raise ValueError(f"Rotor {i} of `{platform.name}` has a non-finite {what}: {arrays[name][i].tolist()!r}. "
                             "Fix: give finite geometry, angles and coefficients.")
    return arrays


def _snap(X: np.ndarray) -> np.ndarray:
    """``X`` with the rounding noise of ``cos(pi / 2)`` and the like (below ``8 eps max|X|``) set to exact zeros."""
    return np.where(np.abs(X) < 8 * np.finfo(np.float64).eps * np.abs(X).max(initial=0.0), 0.0, X)


def px4_parameters(platform: Platform, *, alpha: AngleLike | None = None, beta: AngleLike | None = None
                   ) -> dict[str, int | float]:
    """PX4 control-allocation parameters of ``platform`` (module docstring for every definition).

    For rotor ``i`` (PX4 numbers rotors from 0, in jaxrotor's order), with ``S = diag(1, -1, -1)`` (FLU -> FRD):

    * ``CA_ROTORi_PX/PY/PZ = S p_i`` [m]: hub relative to the centre of mass, FRD;
    * ``CA_ROTORi_AX/AY/AZ = S z_i``: unit thrust axis, FRD (upright: ``(0, 0, -1)``);
    * ``CA_ROTORi_CT = c_f,i omega_max,i^2`` [N]: thrust at full command;
    * ``CA_ROTORi_KM = -kappa_i c_tau,i / c_f,i`` [m]: moment-to-thrust ratio, positive for a
      counter-clockwise rotor (``kappa_i = -1``) as PX4 asks.

    Args:
        platform: the design; at most :data:`PX4_MAX_ROTORS` rotors with a finite ``rotor_speed_max``.
        alpha: optional current cant angle(s) [rad] (shape of ``platform.alpha``) of a tilting platform; the axes
            are exported at these angles (:func:`px4_limitations` says what PX4 cannot follow).
        beta: optional current dihedral angle(s) [rad], likewise.

    Position and axis components below ``8 eps`` of the largest (the rounding of ``cos(pi / 2)``) are written
    as exact zeros.

    Returns:
        ``{"CA_AIRFRAME": 0, "CA_ROTOR_COUNT": n, "CA_ROTOR0_PX": ..., ..., "CA_ROTOR{n-1}_KM": ...}`` in that
        order: ``int`` for the two enums, ``float`` for the rest.

    Raises:
        ValueError: more than :data:`PX4_MAX_ROTORS` rotors, a non-finite or non-positive ``rotor_speed_max``
            or ``c_f``, or non-finite geometry.
    """
    a = _rotor_arrays(platform, alpha, beta)
    P = _snap(a["p"] @ FLU_TO_FRD.T)
    A = _snap(a["z"] @ FLU_TO_FRD.T)
    CT = a["c_f"] * a["omega_max"] ** 2
    KM = -a["kappa"] * a["c_tau"] / a["c_f"]
    params: dict[str, int | float] = {"CA_AIRFRAME": CA_AIRFRAME_MULTIROTOR, "CA_ROTOR_COUNT": platform.n_rotors}
    for i in range(platform.n_rotors):
        values = (*P[i], *A[i], CT[i], KM[i])
        for field, value in zip(_ROTOR_FIELDS, values):
            params[f"CA_ROTOR{i}_{field}"] = float(value) + 0.0  # + 0.0: no signed zeros in the files
    return params


def _rotor_count(params: Mapping[str, int | float]) -> int:
    if "CA_ROTOR_COUNT" not in params:
        raise ValueError("The parameters have no CA_ROTOR_COUNT. Fix: pass the dict of px4_parameters or "
                         "read_px4_params, which always holds it.")
    raw = params["CA_ROTOR_COUNT"]
    n = int(raw)
    if n != raw or not 0 <= n <= PX4_MAX_ROTORS:
        raise ValueError(f"CA_ROTOR_COUNT = {raw!r}: PX4 takes a whole number from 0 to {PX4_MAX_ROTORS}. "
                         f"Fix: set CA_ROTOR_COUNT to the number of rotors (at most {PX4_MAX_ROTORS}).")
    return n


def px4_effectiveness(params: Mapping[str, int | float], *, dtype: type = np.float64) -> Float[np.ndarray, "6 n"]:
    """PX4's rotor effectiveness matrix rebuilt from the parameters, as ``computeEffectivenessMatrix`` does it.

    Column ``i``, per unit of the normalised command ``s_i`` (FRD), with ``a_i = A_i / |A_i|``::

        E[0:3, i] = CT_i (P_i x a_i) - CT_i KM_i a_i     roll, pitch, yaw torque [N m]
        E[3:6, i] = CT_i a_i                               thrust [N]

    A column stays zero where PX4 leaves the rotor out (``|A_i| <= FLT_EPSILON`` or ``|CT_i| < FLT_EPSILON``).
    A per-rotor parameter missing from ``params`` takes PX4's default (:data:`PX4_ROTOR_DEFAULTS`), as on
    the vehicle. Only the ``CA_AIRFRAME = 0`` (configurable-axis) rotor model is rebuilt.

    Args:
        params: parameter name -> value (:func:`px4_parameters`, :func:`read_px4_params`).
        dtype: arithmetic precision; ``np.float32`` repeats PX4's single-precision arithmetic.

    Returns:
        ``(6, CA_ROTOR_COUNT)`` matrix, rows ``(tau_x, tau_y, tau_z, f_x, f_y, f_z)`` in FRD.

    Raises:
        ValueError: ``CA_ROTOR_COUNT`` missing or outside 0-12, or ``CA_AIRFRAME`` given and not 0.
    """
    airframe = params.get("CA_AIRFRAME", CA_AIRFRAME_MULTIROTOR)
    if airframe != CA_AIRFRAME_MULTIROTOR:
        raise ValueError(f"CA_AIRFRAME = {airframe!r}: only PX4's Multirotor effectiveness (CA_AIRFRAME = 0, "
                         "configurable rotor axes) is rebuilt here. Fix: set CA_AIRFRAME to 0.")
    n = _rotor_count(params)
    E = np.zeros((6, n), dtype=dtype)
    for i in range(n):
        v = {f: dtype(params.get(f"CA_ROTOR{i}_{f}", PX4_ROTOR_DEFAULTS[f])) for f in _ROTOR_FIELDS}
        axis = np.array([v["AX"], v["AY"], v["AZ"]], dtype=dtype)
        norm = np.linalg.norm(axis)
        if not norm > _FLT_EPSILON or abs(v["CT"]) < _FLT_EPSILON:
            continue
        axis = axis / norm
        position = np.array([v["PX"], v["PY"], v["PZ"]], dtype=dtype)
        E[0:3, i] = v["CT"] * np.cross(position, axis) - v["CT"] * v["KM"] * axis
        E[3:6, i] = v["CT"] * axis
    return E


def allocation_from_px4(effectiveness: Float[ArrayLike, "6 n"], u_max: Float[ArrayLike, " n"]
                        ) -> Float[np.ndarray, "6 n"]:
    """jaxrotor's ``G`` (FLU, per unit ``u = omega^2``) from PX4's effectiveness matrix (FRD, per unit command).

    ``G = S6 E[[3, 4, 5, 0, 1, 2]] diag(1 / u_max)`` with ``S6 = diag(S, S)``, ``S = diag(1, -1, -1)``: PX4's
    rows are (torque, thrust), jaxrotor's (force, moment); ``s_i = u_i / u_max,i``.

    Args:
        effectiveness: ``(6, n)`` PX4 matrix (:func:`px4_effectiveness`).
        u_max: ``(n,)`` ``omega_max^2`` [rad^2/s^2] (``platform.u_max``).

    Returns:
        ``(6, n)`` ``G = [F; M]`` [N / (rad^2/s^2), N m / (rad^2/s^2)], body frame FLU.
    """
    E = np.asarray(effectiveness, dtype=np.float64)
    S6 = np.kron(np.eye(2), FLU_TO_FRD)
    return S6 @ E[[3, 4, 5, 0, 1, 2]] / np.asarray(u_max, dtype=np.float64)[None, :]


def _format_value(value: int | float) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"PX4 parameter value {value!r} is not a number. Fix: pass ints and floats only.")
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        raise ValueError(f"PX4 parameter value {value!r} is not finite. Fix: export a design with finite values.")
    return repr(float(value))  # shortest text that reads back as the same float64


def write_px4_params(platform: Platform, path: str | Path, *, format: str = "qgc", alpha: AngleLike | None = None,
                     beta: AngleLike | None = None, vehicle_id: int = 1, component_id: int = 1) -> Path:
    """Write the PX4 control-allocation parameters of ``platform`` (:func:`px4_parameters`) to a file PX4 loads.

    Formats:

    * ``"qgc"`` (default): QGroundControl's parameter file (``.params``), loaded with *Vehicle Setup >
      Parameters > Tools > Load from file* (on a vehicle or PX4 SITL). ``#`` comment lines (a header naming the
      vehicle), then one tab-separated line per parameter:
      ``vehicle_id  component_id  NAME  VALUE  TYPE`` with ``TYPE`` the MAVLink ``MAV_PARAM_TYPE``
      (6 = INT32 for ``CA_AIRFRAME`` and ``CA_ROTOR_COUNT``, 9 = REAL32 for the rest).
    * ``"airframe"``: a PX4 airframe script (``#!/bin/sh``, comments, ``. ${R}etc/init.d/rc.mc_defaults``, then
      ``param set-default NAME VALUE`` per parameter), as the files in
      ``ROMFS/px4fmu_common/init.d-posix/airframes/`` of PX4 SITL; ``param set-default`` sets a default, so a
      value already changed on the vehicle wins. The ``param set-default`` lines can also be typed in the
      PX4 shell (``pxh>``).

    Float values are written in full float64 precision (PX4 rounds them to float32 when it stores them).

    Args:
        platform: the design (see :func:`px4_parameters`).
        path: file to write (parent folders are created).
        format: one of :data:`FORMATS`.
        alpha: optional current tilt angle(s) ``alpha`` [rad] of a tilting platform (see :func:`px4_parameters`).
        beta: optional current tilt angle(s) ``beta`` [rad] of a tilting platform.
        vehicle_id: MAVLink system id of the ``"qgc"`` lines (PX4: 1).
        component_id: MAVLink component id of the ``"qgc"`` lines (PX4: 1).

    Returns:
        the path written.

    Raises:
        ValueError: an unknown ``format`` or a design PX4 cannot take (:func:`px4_parameters`).
    """
    if format not in FORMATS:
        raise ValueError(f"format = {format!r} is not a PX4 parameter-file format. Fix: use one of "
                         f"{', '.join(repr(f) for f in FORMATS)}.")
    params = px4_parameters(platform, alpha=alpha, beta=beta)
    notes = px4_limitations(platform)
    head = [f"PX4 control-allocation parameters of `{platform.name}` ({platform.n_rotors} rotors), "
            "written by jaxrotor (jaxrotor.export.px4).",
            "Body frame FRD, positions relative to the centre of mass [m], CT = thrust at full command [N],",
            "KM = moment-to-thrust ratio [m], positive for a counter-clockwise rotor."]
    if platform.is_tilting:
        head.append("Tilting platform: the rotor axes are those at the angles of the export.")
    head += [f"Note: {note}" for note in notes]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if format == "qgc":
        lines = [f"# Onboard parameters for Vehicle {vehicle_id}", "#", *(f"# {h}" for h in head), "#",
                 "# Vehicle-Id Component-Id Name Value Type"]
        lines += [f"{vehicle_id}\t{component_id}\t{name}\t{_format_value(value)}\t{_MAV_PARAM_TYPE[type(value)]}"
                  for name, value in params.items()]
    else:
        lines = ["#!/bin/sh", "#", f"# @name {platform.name}", "#", *(f"# {h}" for h in head), "#",
                 ". ${R}etc/init.d/rc.mc_defaults", ""]
        lines += [f"param set-default {name} {_format_value(value)}" for name, value in params.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_px4_params(path: str | Path) -> dict[str, int | float]:
    """Read a parameter file of either format :func:`write_px4_params` writes (told apart line by line).

    ``"qgc"`` lines ``id  id  NAME  VALUE  TYPE`` (type 1-6 integer, 9-10 float) and ``param set`` /
    ``param set-default NAME VALUE`` lines are read; comments, blank lines and other shell lines are skipped.

    Returns:
        parameter name -> ``int`` or ``float``, in file order.

    Raises:
        ValueError: a parameter line that cannot be read (the line number and text are given).
    """
    path = Path(path)
    params: dict[str, int | float] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = text.split()
        try:
            if fields[0] == "param" and len(fields) >= 2 and fields[1] in ("set", "set-default"):
                if len(fields) != 4:
                    raise ValueError("expected `param set-default NAME VALUE`")
                name, raw = fields[2], fields[3]
                params[name] = int(raw) if raw.lstrip("+-").isdigit() else float(raw)
            elif "\t" in text or (len(fields) == 5 and fields[0].isdigit()):
                if len(fields) != 5:
                    raise ValueError("expected 5 tab-separated fields: vehicle-id component-id name value type")
                kind = int(fields[4])
                if 1 <= kind <= 8:
                    params[fields[2]] = int(float(fields[3]))
                elif kind in (9, 10):
                    params[fields[2]] = float(fields[3])
                else:
                    raise ValueError(f"unknown MAV_PARAM_TYPE {kind}")
        except ValueError as err:
            raise ValueError(f"{path}:{number}: cannot read the parameter line {line!r} ({err}). "
                             "Fix: write the file with jaxrotor.export.px4.write_px4_params.") from None
    return params


def px4_limitations(platform: Platform) -> list[str]:
    """What PX4's rotor allocation (``CA_AIRFRAME = 0``) does not express of ``platform``, one sentence each.

    Always listed: the command model (``THR_MDL_FAC``), the rotor speed lower bound, the motor dynamics, and
    the float32 storage. Listed when they apply: tilting rotors, rotor inertia, lateral force authority
    (a fully actuated design), values outside PX4's parameter ranges, more rotors than PX4 takes.

    Returns:
        plain sentences (possibly many); an empty list never (the general notes always apply).
    """
    notes: list[str] = []
    n = platform.n_rotors
    if n > PX4_MAX_ROTORS:
        notes.append(f"{n} rotors: PX4's rotor allocation takes at most {PX4_MAX_ROTORS} (CA_ROTOR_COUNT); "
                     "the design cannot be exported.")
    if platform.is_tilting:
        notes.append(
            f"Tilting rotors ({', '.join(platform.tilting)} servo-actuated): the CA_ROTORi_AX/AY/AZ are the axes at "
            "the angles of the export and stay fixed in PX4's Multirotor allocation (CA_AIRFRAME 0). PX4's "
            "'Multirotor with Tilt' (CA_AIRFRAME 8) does not take them either: its rotors are upright "
            "(axes not configurable), at most 4 tilt servos (CA_SV_TL_COUNT) each tilt their rotors from upright "
            "towards one fixed direction (CA_SV_TLi_TD) and are allocated as yaw/pitch actuators, so "
            "jaxrotor's per-arm cant and dihedral angles and its tilt allocation have no PX4 counterpart.")
    if platform.rotor_inertia is not None and float(np.max(np.abs(np.asarray(platform.rotor_inertia)))) > 0:
        notes.append("Rotor spin inertia J_r (gyroscopic and reaction torques of speed changes) is not part of "
                     "PX4's allocation.")
    F = np.asarray(rotor_axes(platform), dtype=np.float64) * np.asarray(platform.c_f, dtype=np.float64)[:, None]
    if np.linalg.matrix_rank(F.T, tol=1e-9 * max(1.0, float(np.abs(F).max()))) > 1:
        notes.append("Lateral force authority (the rotor axes are not parallel): the exported matrix holds it, "
                     "but PX4's standard multicopter controllers set only the body-z component of the thrust "
                     "setpoint, so PX4 flies the design as an underactuated multirotor.")
    if n <= PX4_MAX_ROTORS:
        try:
            params = px4_parameters(platform)
        except ValueError as err:
            notes.append(f"Not exportable as it is: {err}")
        else:
            for field, (lo, hi) in _PX4_RANGES.items():
                for i in range(n):
                    value = params[f"CA_ROTOR{i}_{field}"]
                    if not lo <= value <= hi:
                        notes.append(f"CA_ROTOR{i}_{field} = {value:.6g} is outside PX4's parameter range "
                                     f"[{lo:g}, {hi:g}] (module.yaml): PX4 stores it, its ground station flags it.")
    u_min = np.asarray(platform.rotor_speed_min, dtype=np.float64)
    if np.any(u_min > 0):
        notes.append("The lowest rotor speed (rotor_speed_min > 0) is not a CA_ROTOR parameter: it is the "
                     "command floor s_min = (rotor_speed_min / rotor_speed_max)^2, set through the motor outputs' "
                     "minimum (e.g. PWM_MAIN_MINi or the ESC's idle).")
    notes.append("The command model: CT is the thrust at full command and PX4's allocation is linear in the command "
                 "s = (omega / omega_max)^2; with an output signal proportional to rotor speed set THR_MDL_FAC = 1.")
    notes.append("Motor dynamics (lag, slew limits), the battery and aerodynamic effects are not part of the "
                 "allocation (CA_Ri_SLEW is a separate slew-rate limit).")
    notes.append("PX4 stores the values as 32-bit floats (relative rounding about 6e-8).")
    return notes
