"""Allocators: turn a desired body wrench ``w = (f_b, tau_b)`` into rotor inputs ``u``.

Each allocator is an equinox Module with two steps:

* ``prepare(platform, alpha, beta) -> AllocationData``: the matrices that depend only
  on the geometry (``G``, its pseudo-inverse ``G^+``, a torque-free collective
  direction). For a fixed-tilt platform this runs once per simulation, outside the
  vector field.
* ``__call__(data, w) -> Allocation``: the inputs and a record of the requested and
  achieved wrench, so saturation is visible.

Allocators:

* :class:`PseudoInverse`: ``u = G^+ w``, no bounds (minimum-norm, may be negative).
* :class:`Clip`: ``u = clip(G^+ w, u_min, u_max)`` (every axis of the wrench may suffer).
* :class:`TorquePriority`: ``u = clip(G^+ w + s n, u_min, u_max)`` where ``n`` is the
  torque-free direction (``M n = 0``: the hover input, normalised; positive on a usual
  platform, but a rotor may have ``n_i = 0`` or ``n_i < 0``) and the scalar shift ``s``
  is the smallest that brings every rotor inside its bounds. When
  such a shift exists the three torques are delivered exactly and only the
  force along ``F n`` (the collective) changes ("air mode").
* :class:`BoxLS`: ``u = argmin_{u_min <= u <= u_max} |W (G u - w)|^2``, the closest
  achievable wrench with torques weighted above forces (exact inside the wrench set).
"""

from __future__ import annotations

import abc
import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jaxtyping import ArrayLike, Bool, Float

from . import linalg
from .allocation import allocation_matrix, hover_wrench
from .design.platform import AngleArray, AngleLike, Platform
from .numerics import safe_norm
from .registry import Option, register

__all__ = ["AllocationData", "Allocation", "AbstractAllocator", "PseudoInverse", "Clip", "TorquePriority",
           "allocation_record", "BoxLS", "BoxProblem", "BOX_TABLE_MAX_INPUTS"]


class AllocationData(eqx.Module):
    """Geometry-dependent allocation matrices.

    Attributes:
        G: ``(6, n)`` allocation matrix ``[F; M]``.
        G_pinv: ``(n, 6)`` Moore-Penrose pseudo-inverse.
        collective: ``(n,)`` torque-free input direction (hover input / its max).
        u_min: ``(n,)`` lower input bounds [rad^2/s^2].
        u_max: ``(n,)`` upper input bounds [rad^2/s^2].
        relaxed: the :class:`~jaxrotor.relaxed.RelaxedHover` of each single rotor loss (a quadrotor flying with
            faults, :meth:`jaxrotor.flight.Flight.allocation_data`), or ``None``.
        fault_plans: the :class:`~jaxrotor.flight.FaultPhases` of a flight with step-onset faults on this
            fixed geometry (:meth:`jaxrotor.flight.Flight.allocation_data`), or ``None``.
    """

    G: Float[Array, "6 n"]
    G_pinv: Float[Array, "n 6"]
    collective: Float[Array, " n"]
    u_min: Float[Array, " n"]
    u_max: Float[Array, " n"]
    relaxed: object = None
    fault_plans: object = None


class Allocation(eqx.Module):
    """Result of one allocation.

    Attributes:
        u: ``(n,)`` inputs [rad^2/s^2].
        requested: ``(6,)`` wrench asked for ``(f_b [N], tau_b [N m])``.
        achieved: ``(6,)`` wrench ``G u`` the inputs deliver.
        saturated: ``(n,)`` bool, rotor at a bound.
        shift: ``()`` collective shift applied (torque priority; 0 otherwise).
        alpha: commanded cant angle(s) [rad] (shape of ``platform.alpha``) of an allocator that
            decides the tilt (:mod:`jaxrotor.tilting`); ``None`` for fixed-tilt allocators and for
            an angle set the allocator does not command.
        beta: commanded dihedral angle(s) [rad] (shape of ``platform.beta``), likewise.
    """

    u: Float[Array, " n"]
    requested: Float[Array, "6"]
    achieved: Float[Array, "6"]
    saturated: Bool[Array, " n"]
    shift: Float[Array, ""]
    alpha: AngleArray | None = None
    beta: AngleArray | None = None


def prepare_allocation(platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
                      ) -> AllocationData:
    """Build :class:`AllocationData` for the platform at the given tilt angles."""
    G = allocation_matrix(platform, alpha, beta)
    G_pinv = jnp.linalg.pinv(G)
    hover = G_pinv @ hover_wrench(platform)
    collective = hover / jnp.max(jnp.abs(hover))
    return AllocationData(G=G, G_pinv=G_pinv, collective=collective, u_min=platform.u_min, u_max=platform.u_max)


class AbstractAllocator(eqx.Module):
    """Maps a desired body wrench to rotor inputs.

    A fixed-tilt allocator implements :meth:`__call__` only. An allocator that also
    decides the servo angles of a tilting platform (:mod:`jaxrotor.tilting`) returns
    ``decides_tilt = True`` and implements :meth:`allocate_tilting`; the flight loop
    then sends its angles to the servos and its ``u`` to the motors.
    """

    @property
    def decides_tilt(self) -> bool:
        """Whether this allocator commands the tilt angles (static; ``False`` for fixed-tilt allocators)."""
        return False

    def allocate_tilting(self, platform: Platform, wrench: Float[Array, "6"], state, servo) -> Allocation:
        """Angles and inputs for ``wrench`` ``(6,)`` from the current servo ``state`` (tilt-deciding allocators).

        Returns an :class:`Allocation` whose ``alpha``/``beta`` are the servo commands and whose
        ``u`` is allocated for the angles the servos apply now (``servo.applied``).
        """
        raise NotImplementedError(f"{type(self).__name__} does not decide the tilt (decides_tilt is False).")

    def check(self, platform: Platform, flight) -> None:
        """Errors raised before compiling for this allocator on ``platform`` in ``flight`` (default: none)."""

    def angle_limits(self, key: str) -> tuple[float, float]:
        """Servo limits ``(lower, upper)`` [rad] of the angle set ``key`` it commands (default unbounded)."""
        return (-float("inf"), float("inf"))

    def prepare(self, platform: Platform, alpha: AngleLike | None = None, beta: AngleLike | None = None
               ) -> AllocationData:
        """Geometry-dependent matrices (see :func:`prepare_allocation`)."""
        return prepare_allocation(platform, alpha, beta)

    @abc.abstractmethod
    def __call__(self, data: AllocationData, wrench: Float[Array, "6"]) -> Allocation:
        """Allocate ``wrench`` ``(6,)`` = ``(f_b, tau_b)`` in the body frame."""


def allocation_record(G: Float[Array, "6 n"], u_min: Float[Array, " n"], u_max: Float[Array, " n"],
                      wrench: Float[Array, "6"], u: Float[Array, " n"], shift: Float[ArrayLike, ""] = 0.0,
                      alpha: AngleArray | None = None, beta: AngleArray | None = None) -> Allocation:
    """The :class:`Allocation` of inputs ``u`` ``(n,)`` under ``G`` ``(6, n)``: achieved wrench ``G u`` and the
    saturation flags (a rotor within round-off of ``u_min``/``u_max``: 1e-9 relative, or 8 ulp in float32)."""
    rel = max(1e-9, 8 * float(jnp.finfo(u.dtype).eps))
    tol = rel * jnp.maximum(1.0, jnp.abs(u))
    sat = (u <= u_min + tol) | (u >= u_max - tol)
    return Allocation(u=u, requested=wrench, achieved=G @ u, saturated=sat, shift=jnp.asarray(shift, dtype=u.dtype),
                      alpha=alpha, beta=beta)


def _result(data: AllocationData, wrench: Array, u: Array, shift) -> Allocation:
    return allocation_record(data.G, data.u_min, data.u_max, wrench, u, shift)


@register("allocator", "pseudo_inverse")
class PseudoInverse(AbstractAllocator):
    """``u = G^+ w``: exact whenever ``w`` is in the range of ``G``; ignores input bounds."""

    def __call__(self, data: AllocationData, wrench: Float[Array, "6"]) -> Allocation:
        u = data.G_pinv @ wrench
        res = _result(data, wrench, u, 0.0)
        return eqx.tree_at(lambda r: r.saturated, res, jnp.zeros_like(res.saturated))


@register("allocator", "clip")
class Clip(AbstractAllocator):
    """``u = clip(G^+ w, u_min, u_max)``."""

    def __call__(self, data: AllocationData, wrench: Float[Array, "6"]) -> Allocation:
        u = jnp.clip(data.G_pinv @ wrench, data.u_min, data.u_max)
        return _result(data, wrench, u, 0.0)


@register("allocator", "torque_priority")
class TorquePriority(AbstractAllocator):
    """Shift the collective, then clip: torques survive whenever a shift suffices.

    With ``u0 = G^+ w`` [rad^2/s^2] and the torque-free direction ``n`` (``M n = 0``,
    scaled so ``max_i |n_i| = 1``), rotor ``i`` is in bounds for the shifts ``s``
    with ``u_min,i <= u0_i + s n_i <= u_max,i``:

    * ``n_i > 0``: ``(u_min,i - u0_i)/n_i <= s <= (u_max,i - u0_i)/n_i``;
    * ``n_i < 0``: the division by a negative number swaps the two bounds,
      ``(u_max,i - u0_i)/n_i <= s <= (u_min,i - u0_i)/n_i``;
    * ``n_i = 0`` (``|n_i|`` within a few ulp of zero): the shift does not move the
      rotor, so it places no bound on ``s``; the rotor is only clipped.

    ``s_lo`` is the largest lower and ``s_hi`` the smallest upper bound. The shift
    is ``clip(0, s_lo, s_hi)`` (no shift when none is needed); if the interval is
    empty, its midpoint, after which the inputs are clipped. No division by zero
    happens, so values and derivatives are finite for every ``n``.
    """

    def __call__(self, data: AllocationData, wrench: Float[Array, "6"]) -> Allocation:
        u0 = data.G_pinv @ wrench
        n = data.collective
        tiny = 8 * jnp.finfo(n.dtype).eps
        pos, neg = n > tiny, n < -tiny
        moves = pos | neg
        n_safe = jnp.where(moves, n, 1.0)
        to_min = (data.u_min - u0) / n_safe  # shift that puts rotor i on u_min
        to_max = (data.u_max - u0) / n_safe  # shift that puts rotor i on u_max
        lower = jnp.where(pos, to_min, jnp.where(neg, to_max, -jnp.inf))
        upper = jnp.where(pos, to_max, jnp.where(neg, to_min, jnp.inf))
        s_lo, s_hi = jnp.max(lower), jnp.min(upper)
        feasible = s_lo <= s_hi
        both = jnp.isfinite(s_lo) & jnp.isfinite(s_hi)
        mid = jnp.where(both, 0.5 * (jnp.where(both, s_lo, 0.0) + jnp.where(both, s_hi, 0.0)),
                        jnp.where(jnp.isfinite(s_lo), s_lo, s_hi))
        s = jnp.where(feasible, jnp.clip(0.0, s_lo, s_hi), mid)
        u = jnp.clip(u0 + s * n, data.u_min, data.u_max)
        return _result(data, wrench, u, s)


#: Most inputs ``n`` for which :meth:`BoxLS.problem` tabulates the working sets' inverses (``2^n`` of them).
BOX_TABLE_MAX_INPUTS = 8


class BoxProblem(eqx.Module):
    """The wrench-independent part of one box least squares of :class:`BoxLS` (:meth:`BoxLS.problem`).

    In the scaled input ``x = u / u_s``: ``min_{lo <= x <= hi} |A x - b|^2 + ridge |x|^2``,
    ``b = W w / sqrt(k)`` for the wrench ``w`` (:meth:`BoxLS.solve`).

    Attributes:
        A: ``(6, n)`` ``W G u_s / sqrt(k)``.
        W: ``(6,)`` the row weights (:meth:`BoxLS.weights_of`).
        sqrt_k: ``()`` ``sqrt(trace(A^T A) / n)`` before the scaling (the objective's scale).
        H: ``(n, n)`` ``A^T A + ridge I``.
        lo: ``(n,)`` ``u_min / u_s``.
        hi: ``(n,)`` ``u_max / u_s``.
        u_s: ``()`` the input scale, the mean finite ``u_max`` [rad^2/s^2].
        inverses: ``(2^n, n, n)`` the inverse of each working set's matrix (``H`` on the free inputs, the
            identity on those at a bound), row ``sum_i fixed_i 2^i``; or ``None`` (solved at each step).
    """

    A: Float[Array, "6 n"]
    W: Float[Array, "6"]
    sqrt_k: Float[Array, ""]
    H: Float[Array, "n n"]
    lo: Float[Array, " n"]
    hi: Float[Array, " n"]
    u_s: Float[Array, ""]
    inverses: Float[Array, "m n n"] | None = None


@register("allocator", "box_ls", options={
    "force_weight": Option(float, gt=0, doc="weight w_f of the force residual", fix="a weight > 0, e.g. 1"),
    "torque_weight": Option(float, gt=0, doc="weight w_tau of the torque residual", fix="a weight > 0, e.g. 10")})
class BoxLS(AbstractAllocator):
    """Box-constrained weighted least squares: the closest achievable wrench.

    ``u = argmin_{u_min <= u <= u_max} |W (G u - w)|^2`` with the diagonal weight
    ``W = diag(w_f, w_f, w_f, w_tau / L_G, w_tau / L_G, w_tau / L_G) / c_G``:
    ``c_G = mean_i |F[:, i]|`` makes the force rows dimensionless per unit input, the
    length ``L_G = mean_i |M[:, i]| / c_G`` [m] (the arm length of a usual platform)
    turns moments into forces, and ``w_tau / w_f`` (default 10) puts torques above
    forces: when the request lies outside the wrench set, the attitude is kept and
    the force gives. Inside the set the solution is exact (``G u = w``).

    Solver: a primal active-set method on ``x = u / u_s`` (``u_s`` the mean finite
    ``u_max``; :func:`_box_qp_active_set`) for ``iterations`` steps, run without
    derivatives. The working set it ends on fixes which inputs sit at
    ``u_min``/``u_max``; the free inputs are then solved from the normal equations of
    that set, ``H_FF u_F = c_F - H_FB u_B`` (``H = (W G)^T W G``, ``c = (W G)^T W w``), so
    values are exact and the derivative is that of the solution with its active set
    fixed. With ``n > 6`` rotors ``H`` is singular
    and ``ridge`` makes the solution unique. Static choices select code only.
    :meth:`problem` sets up the wrench-independent part (:class:`BoxProblem`, optionally with every
    working set's inverse tabulated, for a ``G`` fixed over many allocations) and :meth:`solve`
    allocates one wrench on it; :meth:`inputs` is the two in one.

    Attributes:
        force_weight: ``w_f`` (static).
        torque_weight: ``w_tau`` (static).
        iterations: active-set steps (static; ``None``: ``3 n + 6``, each adds or releases one bound).
        ridge: Tikhonov term ``rho |x|^2 / 2`` added to the objective (normalised so that
            ``trace H = n``; static). ``None``: ``1e-12`` for ``n <= 6`` (a full-rank solution
            moves by about ``rho / lambda_min(H)`` relative) and ``1e-9`` for ``n > 6``
            (``1e-5`` in float32), which keeps the problem strictly convex when ``rank G < n``
            and picks among the least-squares solutions one of small input norm.
    """

    force_weight: float = eqx.field(static=True, default=1.0)
    torque_weight: float = eqx.field(static=True, default=10.0)
    iterations: int | None = eqx.field(static=True, default=None)
    ridge: float | None = eqx.field(static=True, default=None)

    def __check_init__(self):
        for name in ("force_weight", "torque_weight"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"BoxLS parameter `{name}` = {v!r} is invalid: weights must be finite and > 0. "
                                 "Fix: pass a positive weight, e.g. 1.0 for forces and 10.0 for torques.")
        it = self.iterations
        if it is not None and not (isinstance(it, int) and not isinstance(it, bool) and it >= 1):
            raise ValueError(f"BoxLS parameter `iterations` = {it!r} is invalid: it must be an integer >= 1. "
                             "Fix: pass e.g. 20, or None for 3 n + 6.")
        r = self.ridge
        if r is not None and not (isinstance(r, (int, float)) and math.isfinite(r) and r >= 0):
            raise ValueError(f"BoxLS parameter `ridge` = {r!r} is invalid: it must be finite and >= 0. "
                             "Fix: pass e.g. 1e-12, or None.")

    def weights(self, data: AllocationData) -> Float[Array, "6"]:
        """``(6,)`` the diagonal of ``W`` for the allocation matrix ``data.G`` (see the class docstring)."""
        return self.weights_of(data.G)

    def weights_of(self, G: Float[Array, "6 n"]) -> Float[Array, "6"]:
        """``(6,)`` the diagonal of ``W`` for the allocation matrix ``G`` ``(6, n)`` (see the class docstring)."""
        F, M = G[:3], G[3:]
        c_G = jnp.mean(safe_norm(F, axis=0))  # a lost rotor's zero column: a finite derivative
        L_G = jnp.mean(safe_norm(M, axis=0)) / c_G
        w = jnp.concatenate([jnp.full((3,), self.force_weight, G.dtype),
                             jnp.full((3,), self.torque_weight, G.dtype) / L_G])
        return w / c_G

    def ridge_for(self, n: int, dtype) -> float:
        """The ridge ``rho`` (a Python float) this allocator adds for ``n`` inputs in ``dtype`` (the class docstring:
        ``ridge``, or ``1e-12`` for ``n <= 6`` and ``1e-9`` above; at least ``1e-7`` / ``1e-5`` in float32)."""
        ridge = self.ridge if self.ridge is not None else (1e-12 if n <= 6 else 1e-9)
        if jnp.dtype(dtype) == jnp.float32:
            ridge = max(ridge, 1e-5 if n > 6 else 1e-7)
        return float(ridge)

    def inputs(self, G: Float[Array, "6 n"], u_min: Float[Array, " n"], u_max: Float[Array, " n"],
               wrench: Float[Array, "6"], ridge: Float[ArrayLike, ""] | None = None) -> Float[Array, " n"]:
        """``(n,)`` the inputs ``u`` of the box least squares of the class docstring for the allocation matrix
        ``G`` ``(6, n)``, bounds ``u_min``/``u_max`` ``(n,)`` and the wrench ``(6,)`` [N, N m]:
        ``solve(problem(G, u_min, u_max, ridge), wrench)``.

        ``ridge`` (default :meth:`ridge_for`) may be traced, so several problems of the same size with different
        ridges are one ``vmap`` batch (the flight computer's tilted and yaw-released allocations after a fault,
        :func:`jaxrotor.flight.flight_computer`): one copy of the active-set solver in the program instead of
        one per problem."""
        return self.solve(self.problem(G, u_min, u_max, ridge), wrench)

    def problem(self, G: Float[Array, "6 n"], u_min: Float[Array, " n"], u_max: Float[Array, " n"],
                ridge: Float[ArrayLike, ""] | None = None, table: bool = False) -> BoxProblem:
        """The wrench-independent part of :meth:`inputs` for ``G`` ``(6, n)`` and the bounds ``(n,)``: the
        :class:`BoxProblem` (the scaled matrix, the normal-equation matrix with its ridge, the scaled bounds).

        ``table=True`` (static) also tabulates the inverse of every working set's matrix
        (:class:`BoxProblem`, ``inverses``; ``n <=`` :data:`BOX_TABLE_MAX_INPUTS`): for a problem fixed over a
        flight (a flight computer's plan after a known fault, built once per flight), whose every allocation then
        looks its solves up instead of factorising at every active-set step."""
        W = self.weights_of(G)
        finite = jnp.isfinite(u_max)
        u_s = jnp.where(jnp.any(finite), jnp.sum(jnp.where(finite, u_max, 0.0)) / jnp.maximum(
            jnp.sum(finite), 1), 1.0)
        A = (W[:, None] * G) * u_s
        H = A.T @ A
        n = H.shape[0]
        k = jnp.trace(H) / n  # scale the objective (not its minimiser) so that H is of order one
        sqrt_k = jnp.sqrt(k)
        A, H = A / sqrt_k, H / k
        ridge = self.ridge_for(n, H.dtype) if ridge is None else ridge
        H = H + ridge * jnp.eye(n, dtype=H.dtype)
        inverses = None
        if table:  # static
            if n > BOX_TABLE_MAX_INPUTS:
                raise ValueError(f"BoxLS.problem parameter `table` = True needs n <= {BOX_TABLE_MAX_INPUTS} inputs "
                                 f"(2^n working sets), got n = {n}. Fix: pass table=False.")
            inverses = _working_set_inverses(H)
        return BoxProblem(A=A, W=W, sqrt_k=sqrt_k, H=H, lo=u_min / u_s, hi=u_max / u_s, u_s=u_s, inverses=inverses)

    def solve(self, problem: BoxProblem, wrench: Float[Array, "6"]) -> Float[Array, " n"]:
        """``(n,)`` the inputs ``u`` of the box least squares of ``problem`` (:meth:`problem`) for the wrench
        ``(6,)`` [N, N m]: the active set (:func:`_box_qp_active_set`, without derivatives), then the free inputs
        from the normal equations of that set (the class docstring)."""
        P = problem
        c = P.A.T @ (P.W * wrench / P.sqrt_k)
        n = P.H.shape[0]
        inverses = None if P.inverses is None else jax.lax.stop_gradient(P.inverses)
        at_lo, at_hi = _box_qp_active_set(jax.lax.stop_gradient(P.H), jax.lax.stop_gradient(c),
                                          jax.lax.stop_gradient(P.lo), jax.lax.stop_gradient(P.hi),
                                          self.iterations if self.iterations is not None else 3 * n + 6, inverses)
        fixed = at_lo | at_hi
        x_fixed = jnp.where(at_hi, jnp.where(at_hi, P.hi, 0.0), jnp.where(at_lo, P.lo, 0.0))
        x = _masked_solve(P.H, c, fixed, x_fixed, P.inverses)
        return jnp.clip(x, P.lo, P.hi) * P.u_s

    def __call__(self, data: AllocationData, wrench: Float[Array, "6"]) -> Allocation:
        return _result(data, wrench, self.inputs(data.G, data.u_min, data.u_max, wrench), 0.0)


def _masked_solve(H: Array, c: Array, fixed: Array, x_fixed: Array, inverses: Array | None = None) -> Array:
    """``x`` with ``x_i = x_fixed_i`` where ``fixed`` and ``H_FF x_F = c_F - H_FB x_B`` on the free inputs:
    ``x = Ht^-1 r`` with ``Ht`` = ``H`` on the free rows and columns, the identity on the fixed ones, and
    ``r = (c - H x_B)`` on the free inputs, ``x_B`` on the fixed ones; ``Ht^-1`` looked up in ``inverses``
    (:func:`_working_set_inverses`) when given, else solved (:func:`jaxrotor.linalg.spd_solve`)."""
    free = ~fixed
    x_B = jnp.where(fixed, x_fixed, 0.0)
    r = jnp.where(free, c - H @ x_B, x_B)
    if inverses is not None:  # static: the tabulated inverse of this working set
        return inverses[_working_set_index(fixed)] @ r
    return linalg.spd_solve(_working_set_matrix(H, fixed), r)  # no LAPACK in the tick (jaxrotor.linalg)


def _working_set_matrix(H: Array, fixed: Array) -> Array:
    """``Ht`` ``(n, n)``: ``H`` on the free rows and columns, the identity on the ``fixed`` ones."""
    free = ~fixed
    return jnp.where(free[:, None] & free[None, :], H, 0.0) + jnp.diag(jnp.where(free, 0.0, 1.0))


def _working_set_index(fixed: Array) -> Array:
    """``()`` int: the working set ``fixed`` ``(n,)`` as the number ``sum_i fixed_i 2^i`` (its row of the table)."""
    return jnp.sum(jnp.where(fixed, 2 ** jnp.arange(fixed.shape[0], dtype=jnp.int32), 0))


def _working_set_inverses(H: Array) -> Array:
    """``(2^n, n, n)``: ``Ht^-1`` (:func:`_working_set_matrix`) of every working set, row ``sum_i fixed_i 2^i``
    (:func:`jaxrotor.linalg.spd_solve` against the identity, one ``vmap`` batch; differentiable by its rule)."""
    n = H.shape[0]
    sets = (jnp.arange(2**n)[:, None] >> jnp.arange(n)[None, :]) & 1 == 1
    eye = jnp.eye(n, dtype=H.dtype)
    return jax.vmap(lambda fixed: linalg.spd_solve(_working_set_matrix(H, fixed), eye))(sets)


def _box_qp_active_set(H: Array, c: Array, lo: Array, hi: Array, iterations: int,
                       inverses: Array | None = None) -> tuple[Array, Array]:
    """Inputs at the lower and upper bound at ``argmin_{lo <= x <= hi} x^T H x / 2 - c^T x`` (primal active set).

    ``H`` ``(n, n)`` symmetric positive definite; ``lo``/``hi`` may be infinite. Start:
    the unconstrained minimiser clipped to the box, with the clipped inputs fixed at
    their bound. Each step solves the equality problem of the working set; if its
    solution is inside the box, the iterate moves there and the fixed input whose
    multiplier ``g_i`` (``g = H x - c``) has the wrong sign (``g_i < 0`` at a lower,
    ``> 0`` at an upper bound) most is released; otherwise the iterate moves to the
    first bound on the way and that input is fixed. A step that does neither is a fixed point
    (the next one would solve the same problem again): the loop stops there, after at most
    ``iterations`` steps, so the masks are those of the full count. ``inverses``: the working sets' tabulated
    inverses (:func:`_working_set_inverses`), or ``None`` to solve each step. Returns two ``(n,)`` bool masks.
    """
    dtype = H.dtype
    x_free = linalg.spd_solve(H, c) if inverses is None else inverses[0] @ c
    x0 = jnp.clip(x_free, lo, hi)
    tol = 1e3 * jnp.finfo(dtype).eps

    def body(state):
        i, _, x, at_lo, at_hi = state
        fixed = at_lo | at_hi
        x_eq = _masked_solve(H, c, fixed, jnp.where(at_hi, jnp.where(at_hi, hi, 0.0), jnp.where(at_lo, lo, 0.0)),
                             inverses)
        p = x_eq - x
        room_hi = jnp.where(p > 0, (hi - x) / jnp.where(p > 0, p, 1.0), jnp.inf)
        room_lo = jnp.where(p < 0, (lo - x) / jnp.where(p < 0, p, 1.0), jnp.inf)
        room = jnp.where(fixed, jnp.inf, jnp.minimum(room_hi, room_lo))
        i_block = jnp.argmin(room)
        blocked = room[i_block] < 1.0
        # inside the box: move to x_eq and release the worst multiplier, if any
        g = H @ x_eq - c
        scale = jnp.maximum(1.0, jnp.max(jnp.abs(g)))
        wrong = jnp.where(at_lo, -g, 0.0) + jnp.where(at_hi, g, 0.0)
        i_rel = jnp.argmax(wrong)
        release = wrong[i_rel] > tol * scale
        onehot_rel = (jnp.arange(x.shape[0]) == i_rel) & release
        # blocked: step to the first bound and fix it
        t = jnp.clip(room[i_block], 0.0, 1.0)
        x_step = jnp.clip(x + t * p, lo, hi)
        onehot_blk = jnp.arange(x.shape[0]) == i_block
        hits_hi = p[i_block] > 0
        x_new = jnp.where(blocked, x_step, x_eq)
        lo_new = jnp.where(blocked, at_lo | (onehot_blk & ~hits_hi), at_lo & ~onehot_rel)
        hi_new = jnp.where(blocked, at_hi | (onehot_blk & hits_hi), at_hi & ~onehot_rel)
        return i + 1, ~blocked & ~release, x_new, lo_new, hi_new

    def more(state):
        i, done = state[:2]
        return (i < iterations) & ~done

    state = (jnp.zeros((), jnp.int32), jnp.asarray(False), x0, (x_free < lo), (x_free > hi))
    *_, at_lo, at_hi = jax.lax.while_loop(more, body, state)
    return at_lo, at_hi
