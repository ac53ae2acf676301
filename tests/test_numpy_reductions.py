"""pullback.numpy reductions, cumulative ops, quantiles and nan-variants against NumPy."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp

RNG = np.random.default_rng(1)
X = RNG.normal(size=(3, 4, 5)).astype(np.float32)
AXES = [None, 0, 1, -1, (0, 2), (0, 1, 2)]


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "max", "min", "ptp"])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(name, axis, keepdims):
    got = getattr(jnp, name)(jnp.asarray(X), axis=axis, keepdims=keepdims)
    want = getattr(np, name)(X, axis=axis, keepdims=keepdims)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=1e-6)
    jitted = pb.jit(lambda x: getattr(jnp, name)(x, axis=axis, keepdims=keepdims))(jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(got), rtol=1e-6)


@pytest.mark.x32
def test_sum_dtype_rules_as_jax():
    assert jnp.sum(jnp.asarray([True, True, False])).dtype == np.int32
    assert int(jnp.sum(jnp.asarray([True, True, False]))) == 2
    assert jnp.sum(jnp.asarray(np.ones(3, np.int8))).dtype == np.int32
    assert jnp.sum(jnp.asarray(np.ones(3, np.uint8))).dtype == np.uint32
    assert jnp.mean(jnp.asarray([1, 2])).dtype == np.float32
    assert jnp.sum(jnp.asarray(np.ones(3, np.float16))).dtype == np.float16


def test_where_initial_ddof():
    x = np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], np.float32)
    m = np.array([[True, False, True], [False, True, True]])
    np.testing.assert_allclose(np.asarray(jnp.sum(x, axis=1, where=m)), np.sum(x, axis=1, where=m))
    np.testing.assert_allclose(np.asarray(jnp.mean(x, axis=1, where=m)), np.mean(x, axis=1, where=m))
    np.testing.assert_allclose(np.asarray(jnp.max(x, axis=0, initial=4.5)), np.max(x, axis=0, initial=4.5))
    np.testing.assert_allclose(np.asarray(jnp.var(x, ddof=1)), np.var(x, ddof=1), rtol=1e-6)
    with pytest.raises(ValueError, match="zero-size"):
        jnp.max(jnp.zeros((0, 3)), axis=0)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_first_occurrence_and_nan(name):
    x = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 2.0, np.nan, 5.0]], np.float32)
    for axis in (None, 0, 1):
        got = getattr(jnp, name)(jnp.asarray(x), axis=axis)
        np.testing.assert_array_equal(np.asarray(got), getattr(np, name)(x, axis=axis))
    assert getattr(jnp, name)(jnp.asarray(x), axis=1, keepdims=True).shape == (2, 1)


def test_any_all_count_nonzero():
    b = np.array([[0, 1, 0], [0, 0, 0]])
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(np.asarray(jnp.any(b, axis=axis)), np.any(b, axis=axis))
        np.testing.assert_array_equal(np.asarray(jnp.all(b, axis=axis)), np.all(b, axis=axis))
        np.testing.assert_array_equal(np.asarray(jnp.count_nonzero(b, axis=axis)),
                                      np.count_nonzero(b, axis=axis))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumulative(name, axis):
    x = RNG.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(getattr(jnp, name)(x, axis=axis)),
                               getattr(np, name)(x, axis=axis), rtol=1e-5)
    assert jnp.cumsum(jnp.asarray([True, True])).dtype == np.int64  # the default int (x64)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("axis", [None, 0, (1, 2)], ids=str)
def test_quantile_methods(method, axis):
    q = np.array([0.0, 0.1, 0.5, 0.9, 1.0])
    got = jnp.quantile(jnp.asarray(X), q, axis=axis, method=method)
    want = np.quantile(X, q, axis=axis, method=method)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    got_k = jnp.quantile(jnp.asarray(X), 0.3, axis=axis, method=method, keepdims=True)
    assert got_k.shape == np.quantile(X, 0.3, axis=axis, method=method, keepdims=True).shape


def test_median_percentile_average():
    np.testing.assert_allclose(np.asarray(jnp.median(X, axis=1)), np.median(X, axis=1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.percentile(X, 25)), np.percentile(X, 25), rtol=1e-5)
    w = RNG.uniform(size=4).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.average(X, axis=1, weights=w)),
                               np.average(X, axis=1, weights=w), rtol=1e-5)
    avg, ws = jnp.average(X, axis=0, returned=True)
    navg, nws = np.average(X, axis=0, returned=True)
    np.testing.assert_allclose(np.asarray(avg), navg, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ws), nws)
    assert np.isnan(float(jnp.median(jnp.asarray([1.0, np.nan, 2.0]))))


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax",
                                  "nanmin", "nanargmax", "nanargmin", "nanmedian"])
def test_nan_variants(name):
    x = X.copy()
    x[0, 1, 2] = x[2, 0, 0] = np.nan
    for axis in (None, 1):
        np.testing.assert_allclose(np.asarray(getattr(jnp, name)(jnp.asarray(x), axis=axis)),
                                   getattr(np, name)(x, axis=axis), rtol=2e-5, atol=1e-6)


def test_nan_quantile_and_cumulative():
    x = np.array([[1.0, np.nan, 3.0, 4.0], [np.nan, np.nan, 2.0, 8.0]], np.float32)
    np.testing.assert_allclose(np.asarray(jnp.nanquantile(x, 0.5, axis=1)),
                               np.nanquantile(x, 0.5, axis=1))
    np.testing.assert_allclose(np.asarray(jnp.nancumsum(x, axis=1)), np.nancumsum(x, axis=1))
