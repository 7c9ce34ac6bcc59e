"""The tilting allocators: from the body wrench, the servo commands and the rotor inputs at the applied angles.

:class:`ExtendedVariable` (per-rotor ``alpha_i`` and/or ``beta_i`` in extended
variables), :class:`CantSelection` (one shared cant ``alpha_0`` chosen online),
:class:`CantLookupTable` (its look-up-table baseline) and :func:`speeds_at` (the inputs at
the angles the servos apply). The derivations are in :mod:`jaxrotor.tilting`, which also
holds the checks of a tilting flight; every name is importable from there.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jaxtyping import Bool, Float

from .allocation import allocation_matrix, characteristic_length, rotor_positions
from . import linalg
from .allocators import AbstractAllocator, Allocation, AllocationData, allocation_record
from .design.platform import AngleArray, Platform, is_concrete, per_rotor_angles
from .metrics import reference_power
from .numerics import safe_norm, safe_sqrt
from .registry import Option, register

__all__ = ["CantLookupTable", "CantSelection", "ExtendedSolution", "ExtendedVariable", "extended_matrix", "speeds_at",
           "yaw_authority"]

_LIMIT_DEFAULT = (-math.inf, math.inf)
_CANT_LIMITS = (math.radians(5.0), math.radians(40.0))  # rad, the default servo range of a shared cant


def _wrap(x: Array) -> Array:
    """Angle wrapped to ``(-pi, pi]`` (smooth away from ``+-pi``)."""
    return jnp.arctan2(jnp.sin(x), jnp.cos(x))


def _safe_atan2(y: Array, x: Array) -> Array:
    """``atan2(y, x)`` with finite derivatives at ``(0, 0)`` (value 0 there)."""
    ok = (x**2 + y**2) > 0
    return jnp.where(ok, jnp.arctan2(jnp.where(ok, y, 0.0), jnp.where(ok, x, 1.0)), 0.0)


def _row_scale(platform: Platform) -> Array:
    """``diag(1, 1, 1, 1/L, 1/L, 1/L)`` as a ``(6,)`` vector (unit-consistent rows, see ``scaled_allocation_matrix``)."""
    L = characteristic_length(platform)
    one = jnp.ones((), dtype=platform.mass.dtype)
    return jnp.stack([one, one, one, 1 / L, 1 / L, 1 / L])


def _damped_least_norm(A: Array, b: Array, damping: float) -> Array:
    """``A^T (A A^T + lam I)^-1 b`` with ``lam = damping * trace(A A^T) / rows``: the (damped) minimum-norm solution."""
    AAt = A @ A.T
    lam = damping * jnp.trace(AAt) / AAt.shape[0]
    return A.T @ linalg.spd_solve(AAt + lam * jnp.eye(AAt.shape[0], dtype=A.dtype), b)


def _check_limits(owner: str, name: str, limits) -> tuple[float, float]:
    if np.shape(limits) != (2,):
        raise ValueError(f"{owner} parameter `{name}` = {limits!r} must be a pair (lower, upper) [rad]. "
                         "Fix: pass e.g. (0.0, 0.7).")
    lo, hi = (float(x) for x in limits)
    if not lo < hi:
        raise ValueError(f"{owner} parameter `{name}` = {(lo, hi)!r} is invalid: need lower < upper [rad]. Fix: pass "
                         f"e.g. {name}=(-1.57, 1.57), or (-inf, inf) for a continuously rotating arm.")
    return lo, hi


def _initial_angle(platform: Platform, flight, key: str):
    """The angle set ``key`` the servos start from (``flight.state0``'s, else the platform's); ``None`` if traced."""
    value = getattr(platform, key) if flight.state0 is None else getattr(flight.state0, key)
    return value if is_concrete(value) else None


def _outside(value, limits) -> np.ndarray:
    v = np.asarray(value, dtype=float)
    return (v < limits[0] - 1e-12) | (v > limits[1] + 1e-12)


# --------------------------------------------------------------------------- speeds at the applied angles


def speeds_at(platform: Platform, wrench: Float[Array, "6"], alpha: AngleArray | None, beta: AngleArray | None,
              u_hint: Float[Array, " n"], damping: float = 1e-8) -> tuple[Float[Array, " n"], Float[Array, "6 n"]]:
    """Inputs for ``wrench`` at the angles the servos apply: ``u = clip(u_h + G_s^+ S (w - G u_h), u_min, u_max)``.

    ``G = G(alpha, beta)`` (eq. 10) at the applied angles, ``S`` the unit-consistent row
    scaling and ``G_s^+ = (G_s^T G_s + lam I)^-1 G_s^T`` a damped least-squares inverse of
    ``G_s = S G``. The correction is zero when the hint ``u_h`` ``(n,)`` [rad^2/s^2] already
    produces ``w`` (an ideal servo at the commanded angles), so the extended-variable
    solution passes unchanged; under a lagged servo it is the smallest change that
    restores the wrench at the angles the rotors actually have.

    Returns:
        ``(u (n,), G (6, n))``.
    """
    G = allocation_matrix(platform, alpha, beta)
    S = _row_scale(platform)
    Gs = S[:, None] * G
    r = S * (wrench - G @ u_hint)
    GtG = Gs.T @ Gs
    lam = damping * jnp.trace(GtG) / GtG.shape[0]
    du = linalg.spd_solve(GtG + lam * jnp.eye(GtG.shape[0], dtype=G.dtype), Gs.T @ r)
    return jnp.clip(u_hint + du, platform.u_min, platform.u_max), G


# --------------------------------------------------------------------------- extended variables


def _modes(platform: Platform, angles: tuple[str, ...] | None) -> tuple[str, ...]:
    return tuple(platform.tilting) if angles is None else tuple(angles)


def _basis(platform: Platform, modes: tuple[str, ...]) -> Array:
    """``(n, 3, k)`` body-frame basis of each rotor's decomposed thrust variable (:mod:`jaxrotor.tilting`)."""
    _, b_i = per_rotor_angles(platform)
    g = platform.gamma
    cg, sg, z = jnp.cos(g), jnp.sin(g), jnp.zeros_like(g)
    if modes == ("alpha",):
        sb, cb = jnp.sin(b_i), jnp.cos(b_i)
        a = jnp.stack([cg * sb, sg * sb, cb], axis=-1)
        b = jnp.stack([sg, -cg, z], axis=-1)
        return jnp.stack([a, b], axis=-1)
    if modes == ("beta",):
        a = jnp.stack([z, z, jnp.ones_like(g)], axis=-1)
        b = jnp.stack([cg, sg, z], axis=-1)
        return jnp.stack([a, b], axis=-1)
    # both: the arm frame R_z(gamma_i) [e_x, e_y, e_z]
    ex = jnp.stack([cg, sg, z], axis=-1)
    ey = jnp.stack([-sg, cg, z], axis=-1)
    ez = jnp.stack([z, z, jnp.ones_like(g)], axis=-1)
    return jnp.stack([ex, ey, ez], axis=-1)


def extended_matrix(platform: Platform, angles: tuple[str, ...] | None = None) -> Float[Array, "6 nk"]:
    """The ``6 x (k n)`` matrix ``A`` with ``w = A v`` (:mod:`jaxrotor.tilting`), columns rotor-major.

    Column ``(i, j)``: ``[e_ij; p_i x e_ij + (kappa_i c_tau,i / c_f,i) e_ij]`` for the basis
    vector ``e_ij`` of rotor ``i``; ``v_ij`` is in newtons.
    """
    E = _basis(platform, _modes(platform, angles))  # (n, 3, k)
    p = rotor_positions(platform)
    drag = (platform.kappa * platform.c_tau / platform.c_f)[:, None, None]
    M = jnp.cross(p[:, :, None], E, axisa=1, axisb=1, axisc=1) + drag * E
    n, _, k = E.shape
    return jnp.concatenate([E, M], axis=1).transpose(1, 0, 2).reshape(6, n * k)


class ExtendedSolution(eqx.Module):
    """The extended-variable solve for one wrench.

    Attributes:
        v: ``(n, k)`` decomposed thrust variables [N].
        thrust: ``(n,)`` ``|v_i|`` [N].
        u: ``(n,)`` ``|v_i| / c_f,i`` [rad^2/s^2] (unclipped).
        alpha: commanded cant angles ``(n,)`` [rad] (``None`` if the cant does not tilt).
        beta: commanded dihedral angles ``(n,)`` [rad] (``None`` if the dihedral does not tilt).
        angle_clipped: ``(n,)`` bool, a commanded angle sits at a servo limit.
    """

    v: Float[Array, "n k"]
    thrust: Float[Array, " n"]
    u: Float[Array, " n"]
    alpha: Float[Array, " n"] | None
    beta: Float[Array, " n"] | None
    angle_clipped: Bool[Array, " n"]


_LIMITS_FIX = "two angles [lower, upper] in rad"
_MARGIN = Option(float, ge=0, lt=0.5, doc="fraction of each rotor's range kept from its bounds",
                 fix="a fraction in [0, 0.5), e.g. 0.05")


@register("allocator", "extended_variable", options={
    "alpha_limits": Option(tuple, length=2, scalar=False, allow_inf=True, unit="rad", doc="servo limits of alpha",
                           fix=_LIMITS_FIX),
    "beta_limits": Option(tuple, length=2, scalar=False, allow_inf=True, unit="rad", doc="servo limits of beta",
                          fix=_LIMITS_FIX),
    "margin": _MARGIN})
class ExtendedVariable(AbstractAllocator):
    """Per-rotor tilt allocation in extended variables (Kamel et al. 2018, Ryll et al. 2015); see :mod:`jaxrotor.tilting`.

    Attributes:
        angles: the tilting angle sets it commands, ``("alpha",)``, ``("beta",)`` or
            ``("alpha", "beta")``; ``None`` (default) commands every set in ``platform.tilting``.
        alpha_limits, beta_limits: servo angle limits ``(lower, upper)`` [rad]
            (``(-inf, inf)``: a continuously rotating arm).
        margin: fraction of each rotor's thrust range the null-space term keeps from the bounds.
        null_steps: null-space (Gauss-Newton) steps toward the thrust band.
        zero_thrust: ``eps`` of the zero-thrust blend as a fraction of the hover thrust per rotor ``m g / n``.
        damping: relative damping of the least-norm solve for ``v`` (keeps exactness to ~1e-10).
        speed_damping: relative damping of the speed correction at the applied angles
            (:func:`speeds_at`); it bounds the correction where a lagging servo leaves a
            nearly singular geometry (a flat start asked for a large side force) and is
            irrelevant when the servo is at its command. ``1e-3`` loses the six-arm
            hexarotor on the velocity step of the 3x-speed use-case maneuver (the
            correction saturates every rotor), ``1.0`` corrects too little; 0.1 flies it.
    """

    angles: tuple[str, ...] | None = eqx.field(static=True, default=None)
    alpha_limits: tuple[float, float] = eqx.field(static=True, default=_LIMIT_DEFAULT)
    beta_limits: tuple[float, float] = eqx.field(static=True, default=_LIMIT_DEFAULT)
    margin: float = eqx.field(static=True, default=0.05)
    null_steps: int = eqx.field(static=True, default=4)
    zero_thrust: float = eqx.field(static=True, default=1e-3)
    damping: float = eqx.field(static=True, default=1e-13)
    speed_damping: float = eqx.field(static=True, default=0.1)

    def __check_init__(self):
        if self.angles is not None and tuple(self.angles) not in (("alpha",), ("beta",), ("alpha", "beta")):
            raise ValueError(f"ExtendedVariable parameter `angles` = {self.angles!r} is invalid. Fix: pass "
                             "('alpha',), ('beta',), ('alpha', 'beta') or None (every tilting set).")
        _check_limits("ExtendedVariable", "alpha_limits", self.alpha_limits)
        _check_limits("ExtendedVariable", "beta_limits", self.beta_limits)
        if not 0 <= self.margin < 0.5:
            raise ValueError(f"ExtendedVariable parameter `margin` = {self.margin!r} is invalid: need 0 <= margin "
                             "< 0.5. Fix: pass e.g. 0.05.")

    @property
    def decides_tilt(self) -> bool:
        """True: the allocator commands the servo angles."""
        return True

    def check(self, platform: Platform, flight) -> None:
        """Refuse a fixed-tilt platform, an interdependent angle, an unsupported decomposition, a servo limit
        that excludes the current angle, or an extended matrix of rank < 6 (before compiling)."""
        with jax.ensure_compile_time_eval():  # concrete values stay concrete even inside a trace
            self._check(platform, flight)

    def _check(self, platform: Platform, flight) -> None:
        name = type(self).__name__
        if not platform.is_tilting:
            raise ValueError(f"{name}: platform {platform.name!r} is fixed-tilt (`tilting` = ()): there is no servo "
                             "to command. Fix: build the platform with tilting=('alpha',) (or 'beta'), or use a "
                             "fixed-tilt allocator (pseudo_inverse, clip, torque_priority).")
        modes = _modes(platform, self.angles)
        missing = [m for m in modes if m not in platform.tilting]
        if missing:
            raise ValueError(f"{name} parameter `angles` = {modes!r} names {missing}, which platform "
                             f"{platform.name!r} does not tilt (`tilting` = {platform.tilting!r}). Fix: pass "
                             f"angles={platform.tilting!r} or None.")
        for key in modes:
            if np.ndim(getattr(platform, key)) == 0:
                raise ValueError(f"{name}: platform {platform.name!r} has one shared (interdependent) `{key}`, but "
                                 "extended variables need one angle per rotor. Fix: give per-rotor angles "
                                 f"({key}=[...] of length n), or use CantSelection for a shared cant.")
        if flight.tilt_command is not None:
            raise ValueError(f"{name}: the flight also has a `tilt_command`; the allocator decides the tilt. Fix: "
                             "set tilt_command=None.")
        if not is_concrete(platform):
            return
        a_i, _ = per_rotor_angles(platform)
        if modes == ("beta",) and np.any(np.abs(np.asarray(a_i)) > 1e-12):
            raise ValueError(f"{name}: `beta`-only extended variables need a zero fixed cant, but platform "
                             f"{platform.name!r} has alpha = {np.asarray(a_i).tolist()}. Fix: tilt both angles "
                             "(angles=('alpha', 'beta')) or set alpha = 0.")
        for key, lim in (("alpha", self.alpha_limits), ("beta", self.beta_limits)):
            if key not in modes:
                continue
            current = _initial_angle(platform, flight, key)
            if current is None:
                continue
            bad = _outside(current, lim)
            if np.any(bad):
                raise ValueError(f"{name} parameter `{key}_limits` = {lim!r} excludes the current angle(s) "
                                 f"{np.asarray(current)[bad].tolist()} [rad] of rotor(s) {np.flatnonzero(bad).tolist()}. "
                                 f"Fix: widen `{key}_limits` to contain the initial angles, or start inside them.")
        A = np.asarray(extended_matrix(platform, modes), dtype=float)
        if np.linalg.matrix_rank(A * np.asarray(_row_scale(platform))[:, None], tol=1e-9 * np.abs(A).max()) < 6:
            raise ValueError(f"{name}: the extended matrix of platform {platform.name!r} has rank < 6, so some body "
                             "wrenches cannot be produced at any tilt. Fix: tilt more angle sets or add rotors.")

    def angle_limits(self, key: str) -> tuple[float, float]:
        """``alpha_limits`` or ``beta_limits`` [rad]."""
        return self.alpha_limits if key == "alpha" else self.beta_limits

    def solve(self, platform: Platform, wrench: Float[Array, "6"], alpha: AngleArray, beta: AngleArray
             ) -> ExtendedSolution:
        """Extended-variable solution for ``wrench`` ``(6,)`` [N, N m] from the current angles ``alpha``, ``beta`` [rad]."""
        modes = _modes(platform, self.angles)
        E = _basis(platform, modes)
        n, _, k = E.shape
        A = extended_matrix(platform, modes)
        S = _row_scale(platform)
        As = S[:, None] * A
        AAt = As @ As.T
        lam = self.damping * jnp.trace(AAt) / 6
        M = AAt + lam * jnp.eye(6, dtype=A.dtype)
        L_M = linalg.cholesky(M)  # factored once, used by v and every projection
        v = As.T @ linalg.cholesky_solve(L_M, S * wrench)

        def project(g):  # P g = g - A^+ A g, keeps A v unchanged
            return g - As.T @ linalg.cholesky_solve(L_M, As @ g)

        T_lo = platform.c_f * platform.u_min
        T_hi = platform.c_f * platform.u_max
        span = T_hi - T_lo
        finite = jnp.isfinite(span)
        band = self.margin * jnp.where(finite, span, 0.0)
        lo_b = T_lo + band
        hi_b = jnp.where(finite, T_hi - band, jnp.inf)
        fallback = jnp.zeros(k, dtype=A.dtype).at[0 if k == 2 else 2].set(1.0)

        def direction(V):
            s2 = jnp.sum(V**2, axis=-1, keepdims=True)
            ok = s2 > 0
            Vs = jnp.where(ok, V, fallback)
            return jnp.where(ok, Vs / jnp.sqrt(jnp.sum(Vs**2, axis=-1, keepdims=True)), fallback)

        eye_n = jnp.eye(n, dtype=A.dtype)

        def step(v, _):  # Gauss-Newton on the thrust changes, restricted to the null space of A
            V = v.reshape(n, k)
            s = safe_norm(V)
            push = jnp.maximum(lo_b - s, 0.0) - jnp.maximum(s - hi_b, 0.0)
            Jt = (eye_n[:, None, :] * direction(V)[:, :, None]).reshape(n * k, n)  # d|v_i|/dv, (k n, n)
            PJt = project(Jt)
            JPJt = Jt.T @ PJt
            mu = 1e-6 * jnp.trace(JPJt) / n + jnp.finfo(A.dtype).tiny
            return v + PJt @ linalg.spd_solve(JPJt + mu * eye_n, push), None

        v, _ = jax.lax.scan(step, v, None, length=self.null_steps)
        V = v.reshape(n, k)
        thrust = safe_norm(V)
        x = jnp.clip(thrust / (self.zero_thrust * platform.weight / n), 0.0, 1.0)
        blend = x * x * (3 - 2 * x)  # smoothstep: exactly 1 above eps, 0 at zero thrust, C^1
        cur_a, cur_b = per_rotor_angles(platform, alpha, beta)

        def toward(raw, cur, lim):
            cmd = cur + blend * _wrap(raw - cur)
            return jnp.clip(cmd, lim[0], lim[1]), (cmd <= lim[0]) | (cmd >= lim[1])

        clipped = jnp.zeros(n, dtype=bool)
        a_cmd = b_cmd = None
        if modes == ("alpha",):
            a_cmd, clipped = toward(_safe_atan2(V[:, 1], V[:, 0]), cur_a, self.alpha_limits)
        elif modes == ("beta",):
            b_cmd, clipped = toward(_safe_atan2(V[:, 1], V[:, 0]), cur_b, self.beta_limits)
        else:
            a_cmd, ca = toward(_safe_atan2(-V[:, 1], safe_norm(V[:, ::2])), cur_a, self.alpha_limits)
            b_cmd, cb = toward(_safe_atan2(V[:, 0], V[:, 2]), cur_b, self.beta_limits)
            clipped = ca | cb
        return ExtendedSolution(v=V, thrust=thrust, u=thrust / platform.c_f, alpha=a_cmd, beta=b_cmd,
                                angle_clipped=clipped)

    def allocate_tilting(self, platform: Platform, wrench: Float[Array, "6"], state, servo) -> Allocation:
        """Commands from :meth:`solve` at the servo state; ``u`` by :func:`speeds_at` at the applied angles."""
        sol = self.solve(platform, wrench, state.alpha, state.beta)
        applied = {}
        for key, cmd in (("alpha", sol.alpha), ("beta", sol.beta)):
            applied[key] = None if cmd is None else servo.applied(getattr(state, key), cmd)[0]
        u, G = speeds_at(platform, wrench, applied["alpha"], applied["beta"], sol.u, self.speed_damping)
        return allocation_record(G, platform.u_min, platform.u_max, wrench, u, alpha=sol.alpha, beta=sol.beta)

    def __call__(self, data: AllocationData, wrench: Float[Array, "6"]) -> Allocation:
        """Inputs at a given geometry (``data`` prepared at the applied angles): ``clip(G^+ w, u_min, u_max)``."""
        u = jnp.clip(data.G_pinv @ wrench, data.u_min, data.u_max)
        return allocation_record(data.G, data.u_min, data.u_max, wrench, u)


# --------------------------------------------------------------------------- shared cant


def yaw_authority(platform: Platform, alpha0) -> Float[Array, ""]:
    """Yaw authority of the shared cant ``alpha0`` [rad] relative to drag alone (dimensionless, >= 0).

    ``a(alpha_0) = |G(alpha_0)_{6,:}|_2 / |c_tau|_2``: the norm of the yaw row of the allocation matrix
    (eq. 10; yaw moment per unit input ``u_i``) over that of a flat platform whose yaw comes from the
    drag torques ``kappa_i c_tau,i`` alone. On the alternating cant ``alpha_i = (-1)^i alpha_0`` the canted
    thrust's yaw moment ``c_f (p_i x z_i)_z`` and the drag's ``kappa_i c_tau z_i,z`` have opposite signs; they
    cancel at the singular cant (4.55 deg for the Table II rotors, ``tan alpha_s ~ c_tau / (c_f l cos beta)``),
    where ``a = 0`` and a yaw command needs unbounded inputs. ``a = 1`` is the flat platform's authority.
    """
    G = allocation_matrix(platform, alpha0)
    return safe_sqrt(jnp.sum(G[5] ** 2)) / jnp.sqrt(jnp.sum(platform.c_tau**2))


def _cant_terms(platform: Platform, alpha0, force, alpha_cur, margin: float, damping: float):
    """``(power ratio, smoothness [rad^2], bound violation, residual, u)`` of the cost of :mod:`jaxrotor.tilting` at ``alpha0``.

    ``u = G(alpha_0)^+ [f; 0]`` (damped least norm on unit-consistent rows); the violation is
    ``sum_i [relu(u_lo - u_i)^2 + relu(u_i - u_hi)^2] / u_ref^2`` with ``u_ref = m g / sum_j c_f,j``,
    the residual ``|S (G u - [f; 0])|^2 / (m g)^2`` (non-zero only where ``G`` loses rank, e.g.
    at ``alpha_0 = 0`` where no zero-moment lateral force exists).
    """
    G = allocation_matrix(platform, alpha0)
    S = _row_scale(platform)
    w = jnp.concatenate([force, jnp.zeros(3, dtype=force.dtype)])
    u = _damped_least_norm(S[:, None] * G, S * w, damping)
    span = platform.u_max - platform.u_min
    finite = jnp.isfinite(span)
    band = margin * jnp.where(finite, span, 0.0)
    lo, hi = platform.u_min + band, jnp.where(finite, platform.u_max - band, jnp.inf)
    u_ref = platform.weight / jnp.sum(platform.c_f)
    viol = jnp.sum(jnp.maximum(lo - u, 0.0) ** 2 + jnp.maximum(u - hi, 0.0) ** 2) / u_ref**2
    resid = jnp.sum((S * (G @ u - w)) ** 2) / platform.weight**2
    u_pos = jnp.maximum(u, 0.0)
    power = jnp.sum(platform.c_tau * u_pos * jnp.sqrt(u_pos + 1e-30)) / reference_power(platform)
    return power, (alpha0 - alpha_cur) ** 2, viol, resid, u


@register("allocator", "cant_selection", options={
    "limits": Option(tuple, length=2, scalar=False, unit="rad", doc="servo limits of alpha_0", fix=_LIMITS_FIX),
    "smoothness": Option(float, gt=0, unit="1/rad^2", doc="weight k_s of the cant change", fix="a weight, e.g. 0.05"),
    "margin": _MARGIN, "candidates": Option(int, ge=2, doc="size of the candidate grid"),
    "yaw_authority": Option(float, ge=0, doc="yaw authority the chosen cant keeps, relative to drag alone",
                            fix="a fraction, e.g. 0.5 (0 turns the term off)")})
class CantSelection(AbstractAllocator):
    """Online choice of a shared cant ``alpha_0`` (:mod:`jaxrotor.tilting`), then speeds at the applied ``alpha_0``.

    Attributes:
        limits: servo limits ``(lower, upper)`` of ``alpha_0`` [rad].
        smoothness: ``k_s``, weight of ``(alpha_0 - alpha_0,cur)^2`` [1/rad^2] against the power ratio.
        margin: fraction of the input range kept free at both bounds.
        yaw_authority: ``a_min``, the yaw authority :func:`yaw_authority` the chosen cant keeps
            (relative to a flat platform's drag-only yaw authority): the cost gains
            ``k_f relu(a_min - a(alpha_0))^2``, which keeps the cant away from the singular cant where
            canted thrust and drag cancel in yaw (0.5: 6.8 deg and above for the Table II rotors).
        feasibility: ``k_f``, weight of the bound-violation, residual and yaw-authority terms.
        candidates: size of the candidate grid over ``limits`` (static).
        temperature: soft-min temperature on ``J`` (dimensionless).
        newton_steps: guarded Newton refinements of the soft-min (static).
        damping: relative damping of the least-norm solves.
    """

    limits: tuple[float, float] = eqx.field(static=True, default=_CANT_LIMITS)
    smoothness: float = eqx.field(static=True, default=0.05)
    margin: float = eqx.field(static=True, default=0.05)
    yaw_authority: float = eqx.field(static=True, default=0.5)
    feasibility: float = eqx.field(static=True, default=1e3)
    candidates: int = eqx.field(static=True, default=41)
    temperature: float = eqx.field(static=True, default=1e-3)
    newton_steps: int = eqx.field(static=True, default=2)
    damping: float = eqx.field(static=True, default=1e-10)

    def __check_init__(self):
        _check_limits("CantSelection", "limits", self.limits)
        if not (math.isfinite(self.limits[0]) and math.isfinite(self.limits[1])):
            raise ValueError(f"CantSelection parameter `limits` = {self.limits!r} must be finite (the candidate grid "
                             "spans it). Fix: pass e.g. limits=(0.09, 0.7).")
        if not 0 <= self.margin < 0.5:
            raise ValueError(f"CantSelection parameter `margin` = {self.margin!r} is invalid: need 0 <= margin < 0.5. "
                             "Fix: pass e.g. 0.05.")
        if not (math.isfinite(self.yaw_authority) and self.yaw_authority >= 0):
            raise ValueError(f"CantSelection parameter `yaw_authority` = {self.yaw_authority!r} is invalid: need a "
                             "finite fraction >= 0. Fix: pass e.g. 0.5 (0 turns the term off).")
        if self.candidates < 2:
            raise ValueError(f"CantSelection parameter `candidates` = {self.candidates!r} is invalid. Fix: pass >= 2, "
                             "e.g. 41.")
        for name in ("smoothness", "feasibility", "temperature"):
            if not getattr(self, name) > 0:
                raise ValueError(f"CantSelection parameter `{name}` = {getattr(self, name)!r} must be > 0. Fix: pass "
                                 "a positive weight.")

    @property
    def decides_tilt(self) -> bool:
        """True: the allocator commands ``alpha_0``."""
        return True

    def check(self, platform: Platform, flight) -> None:
        """Refuse a platform without a servo-actuated shared cant, a tilt command, or limits excluding ``alpha_0``."""
        name = type(self).__name__
        if "alpha" not in platform.tilting or np.ndim(platform.alpha) != 0:
            raise ValueError(f"{name}: platform {platform.name!r} ({'fixed-tilt' if not platform.is_tilting else 'tilting ' + repr(platform.tilting)}, "
                             f"alpha of shape {np.shape(platform.alpha)}) has no servo-actuated shared cant alpha_0. Fix: "
                             "build it with a scalar alpha and tilting=('alpha',) (preset cs_a0_ting_6r), or use "
                             "ExtendedVariable for per-rotor tilt.")
        if flight.tilt_command is not None:
            raise ValueError(f"{name}: the flight also has a `tilt_command`; the allocator decides the tilt. Fix: "
                             "set tilt_command=None.")
        if not is_concrete(platform):
            return
        current = _initial_angle(platform, flight, "alpha")
        if current is not None and np.any(_outside(current, self.limits)):
            raise ValueError(f"{name} parameter `limits` = {self.limits!r} excludes the current cant alpha_0 = "
                             f"{float(np.asarray(current)):.6g} rad. Fix: widen `limits` or start inside them.")

    def angle_limits(self, key: str) -> tuple[float, float]:
        """``limits`` [rad] for the cant (``"alpha"``); unbounded otherwise."""
        return self.limits if key == "alpha" else (-math.inf, math.inf)

    def grid(self, dtype) -> Float[Array, " candidates"]:
        """``(candidates,)`` candidate cants spanning ``limits`` [rad]."""
        return jnp.linspace(self.limits[0], self.limits[1], self.candidates, dtype=dtype)

    def cost(self, platform: Platform, alpha0: Float[Array, ""], force: Float[Array, "3"], alpha_cur: Float[Array, ""]
             ) -> Float[Array, ""]:
        """``J(alpha_0)`` of :mod:`jaxrotor.tilting` for the requested body force ``force`` ``(3,)`` [N], plus the
        yaw-authority term ``k_f relu(a_min - a(alpha_0))^2`` (:func:`yaw_authority`)."""
        power, smooth, viol, resid, _ = _cant_terms(platform, alpha0, force, alpha_cur, self.margin, self.damping)
        yaw = jnp.maximum(self.yaw_authority - yaw_authority(platform, alpha0), 0.0) ** 2 if self.yaw_authority else 0.0
        return power + self.smoothness * smooth + self.feasibility * (viol + resid + yaw)

    def select(self, platform: Platform, force: Float[Array, "3"], alpha_cur: Float[Array, ""]) -> Float[Array, ""]:
        """The chosen ``alpha_0`` [rad]: soft-min of ``J`` over :meth:`grid`, then ``newton_steps`` guarded Newton steps."""
        cands = self.grid(force.dtype)
        J = jax.vmap(lambda a: self.cost(platform, a, force, alpha_cur))(cands)
        weights = jax.nn.softmax(-(J - jnp.min(J)) / self.temperature)
        a = jnp.sum(weights * cands)
        f = lambda x: self.cost(platform, x, force, alpha_cur)
        h_floor = 1e-3 * self.smoothness
        step_max = (self.limits[1] - self.limits[0]) / (self.candidates - 1)

        def newton(a, _):
            # J' and J'' in forward mode over the scalar cant (forward over forward), the steps in one loop; with
            # the solve's own derivative rule (linalg.spd_solve) `select` compiled in 2.3 s instead of 9.0 s and its
            # gradient in 5.7 s instead of 21.7 s (reverse over reverse through the unrolled factorisation before)
            g, h = jax.jvp(lambda x: jax.jvp(f, (x,), (jnp.ones_like(x),))[1], (a,), (jnp.ones_like(a),))
            return jnp.clip(a - jnp.clip(g / jnp.maximum(h, h_floor), -step_max, step_max), *self.limits), None

        return jax.lax.scan(newton, a, None, length=self.newton_steps)[0] if self.newton_steps else a

    def allocate_tilting(self, platform: Platform, wrench: Float[Array, "6"], state, servo) -> Allocation:
        """``alpha_0`` from :meth:`select` at the servo state, ``u`` by :func:`speeds_at` at the applied ``alpha_0``."""
        a_cmd = self.select(platform, wrench[:3], state.alpha)
        a_applied = servo.applied(state.alpha, a_cmd)[0]
        u, G = speeds_at(platform, wrench, a_applied, None, jnp.zeros_like(platform.c_f))
        return allocation_record(G, platform.u_min, platform.u_max, wrench, u, alpha=a_cmd)

    def __call__(self, data: AllocationData, wrench: Float[Array, "6"]) -> Allocation:
        """Inputs at a given geometry: ``clip(G^+ w, u_min, u_max)``."""
        u = jnp.clip(data.G_pinv @ wrench, data.u_min, data.u_max)
        return allocation_record(data.G, data.u_min, data.u_max, wrench, u)


class CantLookupTable(eqx.Module):
    """Look-up-table baseline for the shared cant (zero-moment force maps tabulated offline).

    For each grid cant ``alpha_j`` the table stores ``K_j = G(alpha_j)^+[:, :3]`` ``(n, 3)``:
    ``u = K_j f`` is the zero-moment input for the body force ``f``, and ``f`` lies in the
    zero-moment force set ``F_B(alpha_j)`` with margin iff ``u`` is inside the shrunk input
    range. At run time every entry is checked and the feasible one with the least
    ``P / P_ref + k_s (alpha_j - alpha_cur)^2`` is taken (hard arg-min; if none is
    feasible, the least-violating). The answer is quantised to the grid and has no
    useful derivative, which :class:`CantSelection` avoids.

    Attributes:
        alphas: ``(N,)`` grid [rad]. K: ``(N, n, 3)`` zero-moment input maps [rad^2/s^2 / N].
        c_tau, u_lo, u_hi, p_ref: power coefficients and the shrunk input range, ``P_ref`` [W].
        smoothness: ``k_s`` [1/rad^2].
    """

    alphas: Array
    K: Array
    c_tau: Array
    u_lo: Array
    u_hi: Array
    p_ref: Array
    smoothness: float = eqx.field(static=True, default=0.05)

    @classmethod
    def build(cls, platform: Platform, limits=_CANT_LIMITS, size: int = 141, margin: float = 0.05,
              smoothness: float = 0.05, damping: float = 1e-10) -> CantLookupTable:
        """Tabulate ``size`` cants over ``limits`` [rad] for ``platform`` (offline step)."""
        alphas = jnp.linspace(limits[0], limits[1], size, dtype=platform.mass.dtype)
        S = _row_scale(platform)

        def entry(a):
            Gs = S[:, None] * allocation_matrix(platform, a)
            return _damped_least_norm(Gs, jnp.eye(6, dtype=Gs.dtype)[:, :3], damping)

        span = platform.u_max - platform.u_min
        finite = jnp.isfinite(span)
        band = margin * jnp.where(finite, span, 0.0)
        return cls(alphas=alphas, K=jax.vmap(entry)(alphas), c_tau=platform.c_tau, u_lo=platform.u_min + band,
                   u_hi=jnp.where(finite, platform.u_max - band, jnp.inf), p_ref=reference_power(platform),
                   smoothness=smoothness)

    def select(self, force: Float[Array, "3"], alpha_cur: Float[Array, ""]) -> Float[Array, ""]:
        """The table's cant [rad] for the body force ``force`` ``(3,)`` [N] from the current cant ``alpha_cur``."""
        u = self.K @ force  # (N, n)
        viol = jnp.sum(jnp.maximum(self.u_lo - u, 0.0) + jnp.maximum(u - self.u_hi, 0.0), axis=-1)
        up = jnp.maximum(u, 0.0)
        cost = jnp.sum(self.c_tau * up * jnp.sqrt(up), axis=-1) / self.p_ref
        cost = cost + self.smoothness * (self.alphas - alpha_cur) ** 2
        feasible = viol <= 0
        score = jnp.where(jnp.any(feasible), jnp.where(feasible, cost, jnp.inf), viol)
        return self.alphas[jnp.argmin(score)]
