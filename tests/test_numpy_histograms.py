"""digitize, histogram(2d/dd), histogram_bin_edges, and the statistics (cov, corrcoef,
interp, gradient, trapezoid, ediff1d, unwrap) against NumPy, with grads, vmap and jit."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pullback as pb
import pullback.numpy as jnp
from pullback.test_util import check_grads

RNG = np.random.default_rng(34)
floats = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=0,
                                                 max_side=6), elements=st.floats(-5, 5))


@given(floats, st.booleans())
def test_digitize_matches_numpy(x, right):
    for bins in (np.array([-2.0, 0.0, 0.5, 3.0]), np.array([3.0, 1.0, 1.0, -4.0]),
                 np.array([1.0])):
        np.testing.assert_array_equal(np.asarray(jnp.digitize(x, bins, right=right)),
                                      np.digitize(x, bins, right=right))
    assert jnp.digitize(x, np.zeros(0)).shape == x.shape


def test_digitize_jit_vmap_errors():
    bins = np.array([0.0, 1.0, 2.5])
    x = RNG.normal(size=(4, 3)) * 2
    np.testing.assert_array_equal(np.asarray(pb.jit(jnp.digitize)(x, bins)),
                                  np.digitize(x, bins))
    np.testing.assert_array_equal(np.asarray(pb.vmap(jnp.digitize, in_axes=(0, None))(x, bins)),
                                  np.digitize(x, bins))
    with pytest.raises(ValueError, match="digitize: argument 'bins' must be 1-D"):
        jnp.digitize(x, np.ones((2, 2)))


@pytest.mark.parametrize("bins", [1, 5, 10, [-3.0, -1.0, 0.0, 0.5, 2.0]])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("density", [False, True])
def test_histogram_matches_numpy(bins, weighted, density):
    a = RNG.normal(size=(7, 9))
    w = RNG.random(size=a.shape) if weighted else None
    h, e = jnp.histogram(a, bins, weights=w, density=density)
    nh, ne = np.histogram(a, bins, weights=w, density=density)
    np.testing.assert_allclose(np.asarray(e), ne, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(h), nh, rtol=1e-12)
    h2, e2 = jnp.histogram(a, bins, range=(-1.0, 1.5), weights=w)
    nh2, ne2 = np.histogram(a, bins, range=(-1.0, 1.5), weights=w)
    np.testing.assert_allclose(np.asarray(h2), nh2, rtol=1e-12)


def test_histogram_constant_data_empty_data_jit_and_grad():
    h, e = jnp.histogram(np.full(4, 2.0), 3)
    nh, ne = np.histogram(np.full(4, 2.0), 3)
    np.testing.assert_allclose(np.asarray(e), ne)
    np.testing.assert_array_equal(np.asarray(h), nh)
    h, e = jnp.histogram(np.zeros(0), 3)
    nh, ne = np.histogram(np.zeros(0), 3)
    np.testing.assert_array_equal(np.asarray(h), nh)
    np.testing.assert_allclose(np.asarray(e), ne)
    a = RNG.normal(size=20)
    f = pb.jit(lambda a: jnp.histogram(a, 6, range=(-2.0, 2.0))[0])
    np.testing.assert_array_equal(np.asarray(f(a)), np.histogram(a, 6, range=(-2.0, 2.0))[0])
    # differentiable in the weights (a scatter-add)
    w = RNG.random(20)
    check_grads(lambda w: jnp.histogram(a, 4, weights=w, density=True)[0], (w,), order=2)
    with pytest.raises(ValueError, match="histogram: argument 'weights' must have the shape"):
        jnp.histogram(a, 3, weights=np.ones(3))
    with pytest.raises(pb.ConcretizationTypeError, match="'bins'"):
        pb.jit(lambda b: jnp.histogram(a, b))(3)


def test_histogram_bin_edges():
    a = RNG.normal(size=30)
    for bins in (4, [0.0, 1.0, 3.0]):
        np.testing.assert_allclose(np.asarray(jnp.histogram_bin_edges(a, bins)),
                                   np.histogram_bin_edges(a, bins), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="string values of 'bins'"):
        jnp.histogram_bin_edges(a, "auto")
    with pytest.raises(ValueError, match="argument 'range'"):
        jnp.histogram_bin_edges(a, 3, range=(1.0, 2.0, 3.0))


@pytest.mark.parametrize("bins", [3, (3, 5), [np.array([-2.0, 0.0, 2.0]), 4]])
def test_histogram2d_dd(bins):
    x, y, z = RNG.normal(size=(3, 40))
    w = RNG.random(40)
    h, ex, ey = jnp.histogram2d(x, y, bins=bins, weights=w)
    nh, nex, ney = np.histogram2d(x, y, bins=bins, weights=w)
    np.testing.assert_allclose(np.asarray(h), nh, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ex), nex, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ey), ney, rtol=1e-12)
    sample = np.stack([x, y, z], 1)
    h, edges = jnp.histogramdd(sample, bins=4, density=True,
                               range=[(-2, 2), None, (-1, 1)])
    nh, nedges = np.histogramdd(sample, bins=4, density=True, range=[(-2, 2), None, (-1, 1)])
    np.testing.assert_allclose(np.asarray(h), nh, rtol=1e-10)
    for e, ne in zip(edges, nedges):
        np.testing.assert_allclose(np.asarray(e), ne, rtol=1e-12)
    with pytest.raises(ValueError, match="histogramdd: argument 'bins' must have one entry"):
        jnp.histogramdd(sample, bins=[3, 3])


def test_ediff1d_gradient_trapezoid():
    a = np.array([2, 3, 5, 9, 1, 4])
    np.testing.assert_array_equal(np.asarray(jnp.ediff1d(a, to_end=[20, 30], to_begin=-10)),
                                  np.ediff1d(a, to_end=[20, 30], to_begin=-10))
    f = RNG.normal(size=(5, 6))
    for args, kw in [((), {}), ((2.0,), {}), ((2.0, np.arange(6.0) ** 2), {}),
                     ((np.arange(5.0) ** 1.5,), {"axis": 0}), ((), {"axis": -1})]:
        got, ref = jnp.gradient(f, *args, **kw), np.gradient(f, *args, **kw)
        if isinstance(ref, (list, tuple)):
            for g, r in zip(got, ref):
                np.testing.assert_allclose(np.asarray(g), r, rtol=1e-10, atol=1e-12)
        else:
            np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="gradient: argument 'f' is too small"):
        jnp.gradient(np.ones(1))
    check_grads(lambda f: jnp.gradient(f, axis=1), (f,), order=2)
    for kw in [{}, {"dx": 0.5}, {"axis": 0}, {"x": np.arange(6.0) ** 2},
               {"x": np.cumsum(RNG.random((5, 6)), axis=0), "axis": 0}]:
        np.testing.assert_allclose(np.asarray(jnp.trapezoid(f, **kw)), np.trapezoid(f, **kw),
                                   rtol=1e-12)
    check_grads(lambda y, x: jnp.trapezoid(y, x), (f, np.arange(6.0) ** 2), order=2)
    assert float(jnp.trapezoid(np.zeros(0))) == 0.0


def test_interp_matches_numpy_and_differentiates():
    xp = np.sort(RNG.random(8))
    fp = RNG.normal(size=8)
    x = RNG.random(30) * 1.4 - 0.2
    np.testing.assert_allclose(np.asarray(jnp.interp(x, xp, fp)), np.interp(x, xp, fp),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.interp(x, xp, fp, left=-9.0, right=9.0)),
                               np.interp(x, xp, fp, left=-9.0, right=9.0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.interp(x, xp, fp, period=0.7)),
                               np.interp(x, xp, fp, period=0.7), rtol=1e-10)
    cfp = fp + 1j * RNG.normal(size=8)
    np.testing.assert_allclose(np.asarray(jnp.interp(x, xp, cfp)), np.interp(x, xp, cfp),
                               rtol=1e-12)
    # extrapolate continues the end segments
    got = jnp.interp(np.array([-1.0, 2.0]), np.array([0.0, 1.0]), np.array([0.0, 2.0]),
                     left="extrapolate", right="extrapolate")
    assert got.tolist() == [-2.0, 4.0]
    inside = (x > xp[0] + 1e-3) & (x < xp[-1] - 1e-3)
    check_grads(lambda x, fp: jnp.interp(x, xp, fp), (x[inside], fp), order=2)
    out = pb.vmap(lambda f: jnp.interp(x, xp, f))(np.stack([fp, 2 * fp]))
    np.testing.assert_allclose(np.asarray(out[1]), np.interp(x, xp, 2 * fp), rtol=1e-12)
    with pytest.raises(ValueError, match="interp: arguments 'xp' and 'fp' must be 1-D"):
        jnp.interp(x, xp, fp[:3])
    with pytest.raises(ValueError, match="interp: the only valid string value of argument"):
        jnp.interp(x, xp, fp, left="clip")


def test_unwrap():
    p = np.cumsum(RNG.normal(size=(3, 20)) * 3, axis=1)
    np.testing.assert_allclose(np.asarray(jnp.unwrap(p)), np.unwrap(p), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.unwrap(p, axis=0, period=4.0)),
                               np.unwrap(p, axis=0, period=4.0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.unwrap(p, discont=4.0)),
                               np.unwrap(p, discont=4.0), rtol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"rowvar": False}, {"bias": True}, {"ddof": 2},
                                {"fweights": "f"}, {"aweights": "a"},
                                {"fweights": "f", "aweights": "a", "ddof": 0},
                                {"fweights": "f", "aweights": "a"}])
def test_cov_matches_numpy(kw):
    m = RNG.normal(size=(3, 10))
    kw = {k: (RNG.integers(1, 4, 10) if v == "f" else RNG.random(10) if v == "a" else v)
          for k, v in kw.items()}
    np.testing.assert_allclose(np.asarray(jnp.cov(m, **kw)), np.cov(m, **kw), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jnp.cov(m[0], m[1], **kw)),
                               np.cov(m[0], m[1], **kw), rtol=1e-10)


def test_cov_corrcoef_complex_scalar_grad_errors():
    m = RNG.normal(size=(3, 8)) + 1j * RNG.normal(size=(3, 8))
    np.testing.assert_allclose(np.asarray(jnp.cov(m)), np.cov(m), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jnp.corrcoef(m)), np.corrcoef(m), rtol=1e-10)
    r = RNG.normal(size=(4, 9))
    np.testing.assert_allclose(np.asarray(jnp.corrcoef(r)), np.corrcoef(r), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jnp.corrcoef(r, rowvar=False)),
                               np.corrcoef(r, rowvar=False), rtol=1e-10)
    assert jnp.cov(r[0]).shape == () and float(jnp.corrcoef(r[0])) == 1.0
    check_grads(jnp.cov, (r,), order=2)
    check_grads(jnp.corrcoef, (r,), order=1)
    out = pb.vmap(jnp.cov)(RNG.normal(size=(5, 2, 6)))
    assert out.shape == (5, 2, 2)
    with pytest.raises(ValueError, match="cov: argument 'm' has more than 2 dimensions"):
        jnp.cov(np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="cov: argument 'fweights' must be integer"):
        jnp.cov(r, fweights=np.ones(9))
    with pytest.raises(ValueError, match="argument 'dtype' must be a floating"):
        jnp.cov(r, dtype=np.int32)
