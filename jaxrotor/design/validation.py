"""Platform validation: the shape and value checks every :class:`~jaxrotor.design.platform.Platform` passes.

:func:`validate_platform` runs at construction (``Platform.__check_init__``): shapes
always, values (finite, positive mass and inertia, angle ranges of eqs. 3-4, sign
patterns, speed bounds) on concrete platforms only (:func:`is_concrete`: a platform
built inside ``jit``/``vmap`` is checked when it is built outside). Every error names
the parameter, the value and the fix (:func:`parameter_error`). ``TILT_ANGLES`` and
``is_concrete`` are also importable from :mod:`jaxrotor.design.platform`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import jax
import numpy as np

if TYPE_CHECKING:  # annotations only: jaxrotor.design.platform imports this module
    from .platform import Platform

__all__ = ["TILT_ANGLES", "is_concrete", "parameter_error", "shown_value", "validate_platform"]

#: The angle sets that may be servo-actuated in flight (``Platform.tilting`` is a subset).
TILT_ANGLES = ("alpha", "beta")
_HALF_PI = math.pi / 2


def is_concrete(*xs) -> bool:
    """Whether no leaf of ``xs`` is a JAX tracer (i.e. the values can be checked eagerly)."""
    return not any(isinstance(leaf, jax.core.Tracer) for x in xs for leaf in jax.tree_util.tree_leaves(x))


def shown_value(value) -> str:
    """``value`` as an error message shows it: an array to 6 digits, a scalar by its ``repr``, a traced one as such."""
    if not is_concrete(value):
        return "(traced)"
    v = np.asarray(value)
    return np.array2string(v, precision=6, threshold=12) if v.ndim else repr(v.item())


def parameter_error(param: str, value, why: str, fix: str) -> ValueError:
    """``ValueError("Platform parameter `param` = value is invalid: why. Fix: fix.")`` (arrays shown to 6 digits)."""
    return ValueError(f"Platform parameter `{param}` = {shown_value(value)} is invalid: {why}. Fix: {fix}.")


def validate_platform(p: Platform) -> None:
    """Raise a ``ValueError`` naming the parameter, its value and the fix if ``p`` is inconsistent.

    Shapes (one entry per rotor, scalar or per-rotor angles, ``(n, 3)`` explicit
    positions and axes, a ``(3, 3)`` inertia), the ``tilting`` names, and on a concrete
    platform the values: finite leaves, ``m > 0``, ``g > 0``, ``l > 0``, a symmetric
    positive-definite inertia, ``c_f > 0``, ``c_tau >= 0``, ``kappa_i = +-1``, sign
    patterns in ``{-1, 0, 1}``, ``0 <= rotor_speed_min < rotor_speed_max``,
    ``delta_i in [0, pi/2)``, ``alpha_i in (-pi/2, pi/2)``, ``beta_i in [0, pi/2)``
    (eqs. 3-4) and unit explicit axes.
    """
    n = p.c_f.shape[0] if p.c_f.ndim == 1 else None
    if n is None or n < 1:
        raise parameter_error("c_f", p.c_f, "expected a 1-D array with one entry per rotor (n >= 1)", "pass c_f with shape (n,)")
    per_rotor = {
        "gamma": p.gamma,
        "delta": p.delta,
        "alpha_sign": p.alpha_sign,
        "beta_sign": p.beta_sign,
        "c_tau": p.c_tau,
        "kappa": p.kappa,
        "rotor_speed_min": p.rotor_speed_min,
        "rotor_speed_max": p.rotor_speed_max,
    }
    for name, arr in per_rotor.items():
        if arr.shape != (n,):
            raise ValueError(
                f"Platform parameter `{name}` = {shown_value(arr)} has shape {tuple(arr.shape)} but there are {n} rotors "
                f"(from `c_f`). Fix: give `{name}` exactly one entry per rotor, shape ({n},)."
            )
    for name in ("alpha", "beta"):
        arr = getattr(p, name)
        if arr.shape not in ((), (n,)):
            raise ValueError(
                f"Platform parameter `{name}` = {shown_value(arr)} has shape {tuple(arr.shape)}; expected () for an interdependent "
                f"angle ({name}_0) or ({n},) for independent per-rotor angles. Fix: pass a scalar or {n} values."
            )
    for name, arr, shape in (("positions", p.positions, (n, 3)), ("axes", p.axes, (n, 3))):
        if arr is not None and arr.shape != shape:
            raise ValueError(
                f"Platform parameter `{name}` has shape {tuple(arr.shape)} but there are {n} rotors. "
                f"Fix: pass explicit {name} with shape {shape}."
            )
    if p.arm_length.shape != () or p.mass.shape != () or p.gravity.shape != ():
        raise ValueError("Platform parameters `arm_length`, `mass` and `gravity` must be scalars. Fix: pass floats.")
    if p.inertia.shape != (3, 3):
        raise parameter_error("inertia", p.inertia, f"expected shape (3, 3), got {tuple(p.inertia.shape)}", "pass a 3x3 matrix")
    bad_tilt = set(p.tilting) - set(TILT_ANGLES)
    if bad_tilt:
        raise ValueError(
            f"Platform parameter `tilting` = {p.tilting!r} names unknown angles {sorted(bad_tilt)}. "
            f"Fix: use a subset of {TILT_ANGLES}."
        )
    if p.axes is not None and p.tilting:
        raise ValueError(
            "Platform parameter `tilting` = %r cannot be used with explicit `axes`: a tilting platform's axes come "
            "from its cant/dihedral angles (eq. 4). Fix: give angles instead of axes, or set tilting=()." % (p.tilting,)
        )

    leaves = [p.arm_length, p.gamma, p.delta, p.alpha, p.beta, p.alpha_sign, p.beta_sign, p.positions, p.axes,
              p.c_f, p.c_tau, p.kappa, p.mass, p.inertia, p.gravity, p.rotor_speed_min, p.rotor_speed_max]
    if not is_concrete(leaves):
        return  # values are checked on concrete platforms only (construction outside jit/vmap)

    def f(x):
        return np.asarray(x, dtype=float)

    names = ["arm_length", "gamma", "delta", "alpha", "beta", "alpha_sign", "beta_sign", "positions", "axes",
             "c_f", "c_tau", "kappa", "mass", "inertia", "gravity", "rotor_speed_min"]
    for name, arr in zip(names, leaves):
        if arr is not None and not np.all(np.isfinite(f(arr))):
            raise parameter_error(name, arr, "contains NaN or infinity", f"give finite values for `{name}`")
    J_r = getattr(p, "rotor_inertia", None)
    if J_r is not None and is_concrete([J_r]) and not np.all(np.isfinite(f(J_r)) & (f(J_r) >= 0)):
        raise parameter_error("rotor_inertia", J_r, "spin inertias must be finite and >= 0 kg m^2",
                              "give each rotor's J_r (bell + propeller), e.g. 1.095e-4, or None for none")
    if np.any(np.isnan(f(p.rotor_speed_max))):
        raise parameter_error("rotor_speed_max", p.rotor_speed_max, "contains NaN", "give finite values or inf for no upper bound")

    if f(p.mass) <= 0:
        raise parameter_error("mass", p.mass, "the total mass must be > 0 kg", "pass a positive mass in kilograms")
    if f(p.gravity) <= 0:
        raise parameter_error("gravity", p.gravity, "g must be > 0 m/s^2 (gravity acts along -z_W)", "pass e.g. 9.81")
    if p.positions is None and f(p.arm_length) <= 0:
        raise parameter_error("arm_length", p.arm_length, "the arm length must be > 0 m", "pass a positive arm length in metres")
    J = f(p.inertia)
    if not np.allclose(J, J.T, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(J).max())):
        raise parameter_error("inertia", J, "the inertia matrix must be symmetric", "pass J with J == J.T (kg m^2, body frame)")
    eig = np.linalg.eigvalsh(J)
    if eig.min() <= 0:
        raise parameter_error("inertia", J, f"the inertia matrix must be positive definite (smallest eigenvalue {eig.min():.3g})",
                              "pass a symmetric positive-definite J in kg m^2")
    if np.any(f(p.c_f) <= 0):
        raise parameter_error("c_f", p.c_f, "thrust coefficients must be > 0", "pass c_f > 0 in N s^2/rad^2 for every rotor")
    if np.any(f(p.c_tau) < 0):
        raise parameter_error("c_tau", p.c_tau, "drag-torque coefficients must be >= 0",
                              "pass c_tau >= 0 in N m s^2/rad^2; the spin direction goes in `kappa`")
    if not np.all(np.isin(f(p.kappa), (-1.0, 1.0))):
        raise parameter_error("kappa", p.kappa, "spin directions must be -1 (counter-clockwise) or +1 (clockwise)",
                              "pass kappa_i in {-1, +1}")
    for name in ("alpha_sign", "beta_sign"):
        if not np.all(np.isin(f(getattr(p, name)), (-1.0, 0.0, 1.0))):
            raise parameter_error(name, getattr(p, name), "a sign pattern must hold only -1, 0 or +1",
                                  f"pass `{name}` like (-1)**i")
    if np.any(f(p.rotor_speed_min) < 0) or np.any(f(p.rotor_speed_max) <= f(p.rotor_speed_min)):
        raise parameter_error("rotor_speed_max", p.rotor_speed_max, f"rotor speed bounds need 0 <= rotor_speed_min < rotor_speed_max (rotor_speed_min = "
                              f"{f(p.rotor_speed_min).tolist()})", "pass rotor_speed_min >= 0 and rotor_speed_max > rotor_speed_min in rad/s")
    if p.positions is None:
        d = f(p.delta)
        if np.any(d < 0) or np.any(d >= _HALF_PI):
            raise parameter_error("delta", d, "elevation angles must lie in [0, pi/2)", "pass delta_i in radians within [0, pi/2)")
    if p.axes is None:
        # alpha_i = alpha_sign_i alpha_0 for an interdependent angle (per_rotor_angles, in numpy)
        a, b = (f(s) * f(x) if np.ndim(x) == 0 else f(x) for x, s in ((p.alpha, p.alpha_sign), (p.beta, p.beta_sign)))
        if np.any(np.abs(a) >= _HALF_PI):
            raise parameter_error("alpha", p.alpha, "cant angles alpha_i must lie in (-pi/2, pi/2)",
                                  "pass cant angles in radians with |alpha_i| < pi/2")
        if np.any(b < 0) or np.any(b >= _HALF_PI):
            raise parameter_error("beta", p.beta, "dihedral angles beta_i must lie in [0, pi/2)",
                                  "pass dihedral angles in radians within [0, pi/2) (check the sign pattern `beta_sign`)")
    else:
        norms = np.linalg.norm(f(p.axes), axis=1)
        if np.any(np.abs(norms - 1.0) > 1e-6):
            raise parameter_error("axes", p.axes, f"explicit spin axes must be unit vectors (norms {np.round(norms, 6).tolist()})",
                                  "normalise each row of `axes`")
