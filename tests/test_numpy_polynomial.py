"""Polynomials (poly, polyadd/sub/mul/div, polyder, polyint, polyval, polyfit, roots, vander,
trim_zeros) against NumPy, with grads, vmap and jit.

``roots`` and ``poly`` of a matrix need ``linalg.eigvals`` and ``polyfit`` needs
``linalg.lstsq`` (issue 28's helpers add them): those tests skip until they exist.
"""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback.test_util import check_grads

RNG = np.random.default_rng(35)
needs_eigvals = pytest.mark.skipif(not hasattr(jnp.linalg, "eigvals"),
                                   reason="jnp.linalg.eigvals is not on this branch yet "
                                          "(issue 28, h28-eig)")
needs_lstsq = pytest.mark.skipif(not hasattr(jnp.linalg, "lstsq"),
                                 reason="jnp.linalg.lstsq is not on this branch yet "
                                        "(issue 28, h28-spectral)")


def test_poly_from_roots():
    for z in ([1, 2, 3], [0.5], [], [2.0, -1.5, 0.25, 4.0]):
        np.testing.assert_allclose(np.asarray(jnp.poly(np.array(z, np.float64))), np.poly(z),
                                   rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.poly(np.array([2, 1 + 2j, 1 - 2j]))),
                               np.poly([2, 1 + 2j, 1 - 2j]), rtol=1e-12)
    assert jnp.poly(np.array([1, 2])).dtype.kind == "f"  # integers promote to inexact
    check_grads(jnp.poly, (RNG.normal(size=4),), order=2)


@needs_eigvals
def test_poly_of_matrix_and_roots():
    a = RNG.normal(size=(3, 3))
    np.testing.assert_allclose(np.asarray(jnp.poly(a)), np.poly(a), rtol=1e-8, atol=1e-10)
    p = np.array([1.0, -6.0, 11.0, -6.0])
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(p))),
                               np.sort_complex(np.roots(p).astype(complex)), rtol=1e-8)
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(np.r_[0.0, 0.0, p]))),
                               np.sort_complex(np.roots(p).astype(complex)), rtol=1e-8)
    r = np.asarray(pb.jit(lambda p: jnp.roots(p, strip_zeros=False))(np.r_[0.0, p]))
    assert np.isnan(r).sum() == 1


def test_roots_trivial_and_errors():
    assert jnp.roots(np.array([3.0])).shape == (0,)
    with pytest.raises(ValueError, match="roots: argument 'p' must be 1-D"):
        jnp.roots(np.ones((2, 2)))
    with pytest.raises(pb.ConcretizationTypeError, match="strip_zeros=False"):
        pb.jit(jnp.roots)(np.array([1.0, 2.0]))


@pytest.mark.parametrize("n1, n2", [(1, 1), (2, 4), (5, 3), (3, 3)])
def test_add_sub_mul_div(n1, n2):
    a, b = RNG.normal(size=n1), RNG.normal(size=n2)
    np.testing.assert_allclose(np.asarray(jnp.polyadd(a, b)), np.polyadd(a, b), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.polysub(a, b)), np.polysub(a, b), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.polymul(a, b)), np.polymul(a, b), rtol=1e-12)
    q, r = jnp.polydiv(a, b)
    nq, nr = np.polydiv(a, b)
    np.testing.assert_allclose(np.asarray(q), nq, rtol=1e-10)
    # JAX keeps the remainder at the dividend's length: its tail is NumPy's remainder
    np.testing.assert_allclose(np.asarray(r)[len(np.asarray(r)) - len(nr):], nr, rtol=1e-9,
                               atol=1e-12)
    check_grads(jnp.polymul, (a, b), order=2)
    check_grads(lambda a, b: jnp.polydiv(a, b)[0], (a, b + np.r_[3.0, np.zeros(n2 - 1)]),
                order=1)


def test_polymul_trim_and_polydiv_trim():
    a, b = np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.0, 3.0, 4.0])
    np.testing.assert_allclose(np.asarray(jnp.polymul(a, b, trim_leading_zeros=True)),
                               np.polymul(a, b))
    q, r = jnp.polydiv(np.array([5.0, 7.0, 9.0]), np.array([4.0, 1.0]),
                       trim_leading_zeros=True)
    nq, nr = np.polydiv([5.0, 7.0, 9.0], [4.0, 1.0])
    np.testing.assert_allclose(np.asarray(r), nr)


@pytest.mark.parametrize("m", [0, 1, 2, 4])
def test_polyder_polyint(m):
    p = RNG.normal(size=5)
    np.testing.assert_allclose(np.asarray(jnp.polyder(p, m)), np.polyder(p, m), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.polyint(p, m)), np.polyint(p, m), rtol=1e-12)
    k = list(RNG.normal(size=m))
    np.testing.assert_allclose(np.asarray(jnp.polyint(p, m, k)), np.polyint(p, m, k),
                               rtol=1e-12)
    check_grads(lambda p: jnp.polyint(p, 2, 1.5), (p,), order=2)
    with pytest.raises(ValueError, match="polyder: argument 'm'"):
        jnp.polyder(p, -1)
    with pytest.raises(ValueError, match="polyint: argument 'k'"):
        jnp.polyint(p, 2, [1.0, 2.0, 3.0])


def test_polyval_matches_numpy_grads_vmap_jit():
    p = RNG.normal(size=6)
    x = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(np.asarray(jnp.polyval(p, x)), np.polyval(p, x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(pb.jit(jnp.polyval)(p, x)), np.polyval(p, x),
                               rtol=1e-12)
    check_grads(jnp.polyval, (p, x), order=2)
    out = pb.vmap(jnp.polyval, in_axes=(0, None))(RNG.normal(size=(5, 6)), x)
    assert out.shape == (5, 3, 4)
    # a batch of polynomials in the columns of p (JAX's: coefficients along axis 0)
    pc = RNG.normal(size=(6, 2))
    np.testing.assert_allclose(np.asarray(jnp.polyval(pc, np.array([0.5, -1.0]))),
                               [np.polyval(pc[:, 0], 0.5), np.polyval(pc[:, 1], -1.0)],
                               rtol=1e-12)
    assert jnp.polyval(np.zeros(0), x).shape == x.shape


@needs_lstsq
def test_polyfit_matches_numpy():
    x = np.linspace(-1, 1, 20)
    y = 3 * x ** 3 - x + 0.1 * RNG.normal(size=20)
    for deg in (1, 3):
        np.testing.assert_allclose(np.asarray(jnp.polyfit(x, y, deg)), np.polyfit(x, y, deg),
                                   rtol=1e-8)
    w = RNG.random(20) + 0.5
    np.testing.assert_allclose(np.asarray(jnp.polyfit(x, y, 2, w=w)), np.polyfit(x, y, 2, w=w),
                               rtol=1e-8)
    y2 = np.stack([y, 2 * y], 1)
    np.testing.assert_allclose(np.asarray(jnp.polyfit(x, y2, 2)), np.polyfit(x, y2, 2),
                               rtol=1e-8)
    c, v = jnp.polyfit(x, y, 2, cov=True)
    nc, nv = np.polyfit(x, y, 2, cov=True)
    np.testing.assert_allclose(np.asarray(v)[..., 0] if np.ndim(v) == 3 else np.asarray(v), nv,
                               rtol=1e-6)


def test_polyfit_argument_errors():
    with pytest.raises(ValueError, match="polyfit: argument 'deg' must be non-negative"):
        jnp.polyfit(np.arange(3.0), np.arange(3.0), -1)
    with pytest.raises(TypeError, match="polyfit: arguments 'x' and 'y' must have the same"):
        jnp.polyfit(np.arange(3.0), np.arange(4.0), 1)


def test_vander_and_trim_zeros():
    x = np.array([1.0, 2.0, 3.0, 5.0])
    for n, inc in [(None, False), (3, True), (0, False), (6, False)]:
        np.testing.assert_allclose(np.asarray(jnp.vander(x, n, increasing=inc)),
                                   np.vander(x, n, increasing=inc))
    check_grads(lambda x: jnp.vander(x, 3), (x,), order=2)
    with pytest.raises(ValueError, match="vander: argument 'x' must be 1-D"):
        jnp.vander(np.ones((2, 2)))
    a = np.array([0, 0, 1, 2, 0, 3, 0])
    for trim in ["fb", "f", "b", "FB"]:
        np.testing.assert_array_equal(np.asarray(jnp.trim_zeros(a, trim)),
                                      np.trim_zeros(a, trim))
    assert jnp.trim_zeros(a, "").shape == a.shape  # JAX's: nothing to trim
    assert jnp.trim_zeros(np.zeros(3)).shape == (0,)
    b = np.zeros((4, 5))
    b[1:3, 2] = 1
    np.testing.assert_array_equal(np.asarray(jnp.trim_zeros(b)), np.trim_zeros(b))
    with pytest.raises(pb.ConcretizationTypeError):
        pb.jit(jnp.trim_zeros)(a)
