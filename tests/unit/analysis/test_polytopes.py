"""Force and moment polytopes: closed forms of the star hexarotor, brute-force vertex enumeration, gradients."""

import itertools
import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial import ConvexHull

from jaxrotor.allocation import force_matrix, moment_matrix
from jaxrotor.analysis import polytopes as P
from jaxrotor.design import presets
from jaxrotor.design.platform import star_platform

CF, CT, ARM, MASS, G = 3.799e-5, 1.163e-6, 0.385, 3.5, 9.81
MEASURES3 = jax.jit(P.zero_moment_measures)  # compiled once per dtype and rotor count


def star(alpha, w_min=0.0, w_max=700.0, mass=MASS):
    return star_platform(6, ARM, mass=mass, c_f=CF, c_tau=CT, alpha=alpha, beta=0.0, inertia=(0.155, 0.147, 0.251),
                         gravity=G, rotor_speed_min=w_min, rotor_speed_max=w_max)


def closed_forms(alpha, w_min=0.0, w_max=700.0, mass=MASS):
    """docs/analysis.md: the alternating-cant star hexarotor, kappa_i = alpha_sign_i = (-1)^i."""
    du = w_max**2 - w_min**2
    T = CF * du
    x = (mass * G / (2 * CF * math.cos(alpha)) - 3 * w_min**2) / du
    h = x**2 - 3 * max(x - 1, 0) ** 2 + 3 * max(x - 2, 0) ** 2 if 0 <= x <= 3 else 0.0
    phi = x**3 / 3 - max(x - 1, 0) ** 3 + max(x - 2, 0) ** 3 if x <= 3 else 2.0
    s2c = math.sin(alpha) ** 2 * math.cos(alpha)
    return (12 * math.sqrt(3) * T**3 * s2c, 3 * math.sqrt(3) * T**2 * math.sin(alpha) ** 2 * h,
            6 * math.sqrt(3) * T**3 * s2c * (2 - max(phi, 0.0) if x >= 0 else 2.0))


@pytest.mark.parametrize("alpha,w_min", [(0.3, 0.0), (0.7, 0.0), (0.95, 250.0), (1.25, 0.0)])
def test_star_hexarotor_closed_forms(alpha, w_min):
    p = star(alpha, w_min)
    V, A, Va = closed_forms(alpha, w_min)
    m = P.polytope_measures(p)
    assert m["zero_moment_force_volume"] == pytest.approx(V, rel=1e-9)
    assert m["hover_section_area"] == pytest.approx(A, rel=1e-9)
    assert m["volume_above_hover"] == pytest.approx(Va, rel=1e-9)
    # opposite rotors have equal force columns: every force of the zonotope is reachable at zero moment
    assert m["force_zonotope_volume"] == pytest.approx(V, rel=1e-9)
    assert m["polytope_notes"] == {}


def _basic_vertices(E, e, lo, hi):
    """Vertices of {u : E u = e, lo <= u <= hi} by enumeration: n - rank(E) rotors at a bound, solve the rest."""
    r, n = E.shape
    out = []
    for S in itertools.combinations(range(n), n - r):
        free = [i for i in range(n) if i not in S]
        Ef = E[:, free]
        if abs(np.linalg.det(Ef)) < 1e-12 * np.abs(Ef).max() ** r:
            continue
        for bounds in itertools.product(*[(lo[i], hi[i]) for i in S]):
            u = np.zeros(n)
            u[list(S)] = bounds
            u[free] = np.linalg.solve(Ef, e - E[:, list(S)] @ np.array(bounds))
            if np.all(u >= lo - 1e-9 * hi) and np.all(u <= hi * (1 + 1e-9)):
                out.append(u)
    return np.array(out).reshape(-1, n)


def random_platform(n, seed, mass=1.0):
    """Random geometry, rotors and bounds (``u_min > 0`` only for n >= 6, where zero moment leaves room)."""
    rng = np.random.default_rng(seed)
    return star_platform(n, 0.3, mass=mass, c_f=rng.uniform(2e-5, 4e-5, n), c_tau=rng.uniform(3e-7, 1e-6, n),
                         alpha=rng.uniform(-0.7, 0.7, n), beta=rng.uniform(0.0, 0.5, n), delta=rng.uniform(0, 0.3, n),
                         gamma=np.sort(rng.uniform(0, 2 * np.pi, n)), inertia=(0.1, 0.1, 0.2),
                         rotor_speed_min=rng.uniform(0.0, 150.0, n) * (n >= 6), rotor_speed_max=rng.uniform(600.0, 800.0, n))


def _measure(points, d):
    pts = np.unique(np.round(points, 9), axis=0)
    if len(pts) <= d or np.linalg.matrix_rank(pts[1:] - pts[0], tol=1e-7 * np.abs(pts).max()) < d:
        return 0.0
    return ConvexHull(pts).volume


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8])
def test_brute_force_random_platforms(n):
    for seed in range(100 * n, 100 * n + 100):  # the first draw that lifts something at zero moment
        base = random_platform(n, seed=seed)
        F, M = np.asarray(force_matrix(base), float), np.asarray(moment_matrix(base), float)
        lo, hi = np.asarray(base.u_min, float), np.asarray(base.u_max, float)
        U = _basic_vertices(M, np.zeros(3), lo, hi)
        if len(U) and (U @ F.T)[:, 2].max() > 1.0:
            break
    W = 0.45 * (U @ F.T)[:, 2].max()  # a weight the platform can carry at zero moment
    p = random_platform(n, seed=seed, mass=W / G)

    FB = U @ F.T
    V_bf = _measure(FB, 3)
    zm = P.zero_moment_polytope(p)
    assert zm.measure == pytest.approx(V_bf, rel=1e-9, abs=1e-9 * np.abs(FB).max() ** 3)
    assert (zm.measure > 0) == (n >= 6) and (zm.reason == "") == (n >= 6)
    if n >= 6:  # the facets hold every brute-force vertex, and every polytope vertex is one of them
        assert np.all(FB @ zm.normals.T <= zm.offsets + 1e-9 * np.abs(FB).max())
        d = np.min(np.linalg.norm(zm.vertices[:, None, :] - FB[None, :, :], axis=-1), axis=1)
        assert d.max() < 1e-8 * np.abs(FB).max()

    Us = _basic_vertices(np.vstack([M, F[2]]), np.r_[0, 0, 0, W], lo, hi)
    section = Us @ F[:2].T
    assert P.hover_section_polygon(p).measure == pytest.approx(_measure(section, 2), rel=1e-9,
                                                                 abs=1e-9 * np.abs(FB).max() ** 2)
    above = np.vstack([FB[FB[:, 2] >= W], Us @ F.T])
    assert P.above_hover_polytope(p).measure == pytest.approx(_measure(above, 3), rel=1e-9,
                                                                abs=1e-9 * np.abs(FB).max() ** 3)
    corners = np.array(list(itertools.product(*zip(lo, hi))))
    assert P.force_zonotope(p).measure == pytest.approx(ConvexHull(corners @ F.T).volume, rel=1e-9)
    Um = _basic_vertices(F, np.r_[0, 0, W], lo, hi)
    Mh = Um @ M.T
    assert P.hover_moment_polytope(p).measure == pytest.approx(_measure(Mh, 3), rel=1e-9,
                                                                 abs=1e-9 * np.abs(Mh).max() ** 3 if len(Mh) else 0)


def test_degenerate_sets_say_why():
    flat = presets.get("hex_s550")  # collinear rotors: F_B is a segment on z_B
    zm = P.zero_moment_polytope(flat)
    assert zm.measure == 0.0 and zm.dim == 1 and "lower-dimensional" in zm.reason
    assert P.hover_section_polygon(flat).measure == 0.0
    heavy = star(0.5, mass=40.0)  # 392 N > 6 * 18.6 N * cos(0.5): cannot hover
    sec = P.hover_section_polygon(heavy)
    assert sec.empty and sec.measure == 0.0 and "not hoverable" in sec.reason
    assert P.hover_moment_polytope(heavy).measure == 0.0
    assert P.zero_moment_polytope(heavy).measure > 0
    free = star(0.5, w_max=math.inf)
    assert math.isinf(P.zero_moment_polytope(free).measure) and "unbounded" in P.zero_moment_polytope(free).reason
    assert math.isinf(P.force_zonotope(free).measure)
    with pytest.raises(ValueError, match="n >= 6"):
        P.zero_moment_force_volume(presets.get("cs_4r"))
    # a hexarotor whose tilt leaves F ker M flat: alpha = 0 (every thrust vertical)
    assert P.zero_moment_polytope(star(0.0)).measure == 0.0


def test_float32_measures():
    p = jax.tree_util.tree_map(lambda x: x.astype(jnp.float32) if isinstance(x, jax.Array) else x, star(0.7))
    assert p.alpha.dtype == jnp.float32
    out = MEASURES3(p)
    assert out.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(out), closed_forms(0.7), rtol=1e-4)


DESIGN_ONLY = {
    "name": "polytope_design",
    "platform": {"n": 6, "arm_length": ARM, "mass": MASS, "inertia": [0.155, 0.147, 0.251], "c_f": CF, "c_tau": CT,
                 "alpha": 0.436, "rotor_speed_max": 700.0},
    "parameters": {"platform.alpha": {"transform": "interval", "lower": 0.05, "upper": 1.4}},
    "objective": {"volume_above_hover": {"weight": 1.0, "normalize": True}},
    "optimize": {"iterations": 3},
}


def test_design_only_optimization_config():
    from jaxrotor.io import optimize_config
    from jaxrotor.io.toml import ConfigError
    from jaxrotor.optimize import objectives as ob

    conf = optimize_config.from_dict(DESIGN_ONLY, "design.toml")
    d = conf.problem.design
    assert d.flight is None and d.controller is None and conf.flight_config.flight is None
    assert list(conf.problem.parameters.paths) == ["platform.alpha"]
    assert not conf.problem.objective.needs_flight
    leaf = conf.problem.objective.leaves()[0]
    assert isinstance(leaf, ob.VolumeAboveHover) and leaf.normalize and leaf.sense == -1
    assert float(d.platform.alpha) == 0.436
    for name, cls in (("zero_moment_volume", ob.ZeroMomentVolume), ("hover_section_area", ob.HoverSectionArea)):
        c = optimize_config.from_dict({**DESIGN_ONLY, "objective": {name: {}}}, "d.toml")
        assert isinstance(c.problem.objective.leaves()[0], cls)
    with pytest.raises(ConfigError, match=r"missing table `\[reference\]`.*tracking need a flight"):
        optimize_config.from_dict({**DESIGN_ONLY, "objective": {"tracking": {}, "volume_above_hover": {}}}, "d.toml")
    with pytest.raises(ConfigError, match=r"\[controller\] describe a flight"):
        optimize_config.from_dict({**DESIGN_ONLY, "controller": {"kind": "fully_actuated"}}, "d.toml")
    with pytest.raises(ConfigError, match="unknown key"):
        optimize_config.from_dict({**DESIGN_ONLY, "refrence": {}}, "d.toml")
    assert optimize_config.load(Path(__file__).resolve().parents[3] / "configs" / "optimize_polytope.toml"
                                ).problem.design.flight is None
