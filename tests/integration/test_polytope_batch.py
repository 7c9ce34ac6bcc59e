"""Force polytopes over a batch: jit and vmap over 1024 designs give the single-design values and gradients."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxrotor.analysis import polytopes as P
from jaxrotor.design.platform import star_platform
from unit.analysis.test_polytopes import ARM, CF, CT, MASS, G, closed_forms  # the star hexarotor's closed forms


def _hexa(alpha, beta, gamma=None, delta=0.0, c_f=CF, w_min=0.0, mass=MASS):
    """A hexarotor with per-rotor angle leaves, so different designs stack into one vmapped batch."""
    gamma = np.arange(6) * np.pi / 3 if gamma is None else gamma
    return star_platform(6, ARM, mass=mass, c_f=c_f, c_tau=CT, alpha=np.broadcast_to(alpha, 6).astype(float),
                         beta=np.broadcast_to(beta, 6).astype(float), gamma=gamma, delta=delta,
                         inertia=(0.155, 0.147, 0.251), gravity=G, rotor_speed_min=w_min, rotor_speed_max=700.0)


def test_jit_vmap_values_and_gradients_over_1024_designs():
    """One compiled jvp, vmapped over 1024 star designs, the paper hexarotor (+-h) and a random hexarotor."""
    sign = np.array([-1.0, 1, -1, 1, -1, 1])  # alternating cant, kappa_i = alpha_sign_i
    alphas = np.linspace(0.05, 1.35, 1018)
    a0, b0, h = 5 * np.pi / 36, np.pi / 18, 1e-6  # the paper hexarotor, central differences in alpha_0 and beta_0
    extra = [(a0 + da, b0 + db) for da, db in ((0, 0), (h, 0), (-h, 0), (0, h), (0, -h))]
    base = _hexa(sign * 0.3, 0.0)
    A = np.concatenate([alphas, [a for a, _ in extra]])[:, None] * sign
    B = np.concatenate([np.zeros_like(alphas), [b for _, b in extra]])[:, None] * np.ones(6)
    stars = jax.vmap(lambda a, b: eqx.tree_at(lambda q: (q.alpha, q.beta), base, (a, b)))(A, B)
    for seed in range(50):  # the first random hexarotor that can hover level
        rng = np.random.default_rng(seed)
        rnd = _hexa(rng.uniform(-0.7, 0.7, 6), rng.uniform(0, 0.4, 6), np.sort(rng.uniform(0, 6.2, 6)),
                    rng.uniform(0, 0.3, 6), rng.uniform(3e-5, 4e-5, 6), rng.uniform(0, 100, 6), 1.0)
        exact_rnd = [P.zero_moment_polytope(rnd).measure, P.hover_section_polygon(rnd).measure,
                     P.above_hover_polytope(rnd).measure]
        if min(exact_rnd) > 0:
            break
    batch = jax.tree_util.tree_map(lambda s, r: jnp.concatenate([s, r[None]]), stars, rnd)
    t_alpha = jnp.broadcast_to(jnp.asarray(sign), batch.alpha.shape)
    t_beta = jnp.zeros_like(batch.beta).at[-6].set(1.0)  # d/d beta_0 for the paper hexarotor
    t_alpha = t_alpha.at[-6].set(0.0)

    def value_and_directional(p, ta, tb):
        tangent = jax.tree_util.tree_map(jnp.zeros_like, p)
        tangent = eqx.tree_at(lambda q: (q.alpha, q.beta), tangent, (ta, tb))
        return jax.jvp(P.zero_moment_measures, (p,), (tangent,))

    val, der = jax.jit(jax.vmap(value_and_directional))(batch, t_alpha, t_beta)
    val, der = np.asarray(val), np.asarray(der)
    n = len(alphas)
    np.testing.assert_allclose(val[:n], [closed_forms(a) for a in alphas], rtol=1e-9, atol=1e-9 * val.max())
    cd = [(np.array(closed_forms(a + h)) - closed_forms(a - h)) / (2 * h) for a in alphas]
    np.testing.assert_allclose(der[:n], cd, rtol=1e-5, atol=1e-5 * np.abs(der[:n]).max())
    # the paper hexarotor: values equal the exact polytopes, derivatives central differences
    paper = _hexa(sign * a0, b0)
    exact = [P.zero_moment_polytope(paper).measure, P.hover_section_polygon(paper).measure,
             P.above_hover_polytope(paper).measure]
    np.testing.assert_allclose(val[n], exact, rtol=1e-9)
    np.testing.assert_allclose(der[n], (val[n + 3] - val[n + 4]) / (2 * h), rtol=1e-5)  # d/d beta_0
    # the random hexarotor: values equal the exact polytopes
    assert min(exact_rnd) > 0
    np.testing.assert_allclose(val[-1], exact_rnd, rtol=1e-9)
