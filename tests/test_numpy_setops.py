"""Set operations (isin, union1d, intersect1d, setdiff1d, setxor1d, unique_*) against NumPy,
eager and under jit with size=, and the concretization error without it."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
import pullback.numpy as jnp

RNG = np.random.default_rng(30)

ints = st.lists(st.integers(-4, 4), min_size=0, max_size=9).map(lambda v: np.array(v, np.int32))


@given(ints, ints, st.sampled_from(["auto", "compare_all", "binary_search", "sort"]),
       st.booleans())
def test_isin_matches_numpy(a, b, method, invert):
    got = jnp.isin(a, b, invert=invert, method=method)
    np.testing.assert_array_equal(np.asarray(got), np.isin(a, b, invert=invert))


def test_isin_shape_nan_and_promotion():
    a = np.array([[1.0, np.nan], [2.5, 3.0]], np.float32)
    b = np.array([3, 1, 7], np.int32)
    got = jnp.isin(a, b)
    assert got.shape == (2, 2) and got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), [[True, False], [False, True]])
    assert not bool(jnp.isin(np.nan, np.array([np.nan])))  # NaN is never found
    got = pb.jit(lambda a, b: jnp.isin(a, b, method="binary_search"))(a, b)
    np.testing.assert_array_equal(np.asarray(got), np.isin(a, b))


def test_isin_bad_method_names_argument():
    with pytest.raises(ValueError, match="isin: argument 'method'"):
        jnp.isin(np.arange(3), np.arange(2), method="hash")


@given(ints, ints)
def test_union_intersect_setdiff_setxor_eager(a, b):
    np.testing.assert_array_equal(np.asarray(jnp.union1d(a, b)), np.union1d(a, b))
    np.testing.assert_array_equal(np.asarray(jnp.intersect1d(a, b)), np.intersect1d(a, b))
    np.testing.assert_array_equal(np.asarray(jnp.setdiff1d(a, b)), np.setdiff1d(a, b))
    np.testing.assert_array_equal(np.asarray(jnp.setxor1d(a, b)), np.setxor1d(a, b))


@given(ints, ints)
def test_intersect1d_return_indices(a, b):
    v, i1, i2 = jnp.intersect1d(a, b, return_indices=True)
    nv, n1, n2 = np.intersect1d(a, b, return_indices=True)
    np.testing.assert_array_equal(np.asarray(v), nv)
    np.testing.assert_array_equal(np.asarray(i1), n1)
    np.testing.assert_array_equal(np.asarray(i2), n2)


@pytest.mark.parametrize("fn", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_size_under_jit_pads_like_jax(fn):
    a = np.array([5, 1, 3, 3, 9], np.int32)
    b = np.array([3, 4, 9, 9], np.int32)
    ref = getattr(np, fn)(a, b)
    size = len(ref) + 3
    f = pb.jit(lambda a, b: getattr(jnp, fn)(a, b, size=size, fill_value=-7))
    got = np.asarray(f(a, b))
    np.testing.assert_array_equal(got[:len(ref)], ref)
    assert (got[len(ref):] == -7).all()
    # truncation keeps the smallest values
    got = np.asarray(pb.jit(lambda a, b: getattr(jnp, fn)(a, b, size=1))(a, b))
    np.testing.assert_array_equal(got, ref[:1])


def test_default_fill_values_match_jax():
    a = np.array([5, 1, 3], np.int32)
    b = np.array([3, 9], np.int32)
    # union/intersect/setxor pad with the smallest result value, setdiff1d with 0 (JAX's)
    assert jnp.union1d(a, b, size=6).tolist() == [1, 3, 5, 9, 1, 1]
    assert jnp.intersect1d(a, b, size=3).tolist() == [3, 3, 3]
    assert jnp.setxor1d(a, b, size=5).tolist() == [1, 5, 9, 1, 1]
    assert jnp.setdiff1d(a, b, size=4).tolist() == [1, 5, 0, 0]
    v, i1, i2 = jnp.intersect1d(a, b, size=3, return_indices=True)
    assert i1.tolist() == [2, 3, 3] and i2.tolist() == [0, 2, 2]


@pytest.mark.parametrize("fn", ["union1d", "intersect1d", "setdiff1d", "setxor1d",
                                "unique_values"])
def test_jit_without_size_raises_concretization(fn):
    args = (np.arange(4),) if fn == "unique_values" else (np.arange(4), np.arange(2))
    with pytest.raises(pb.ConcretizationTypeError, match="size"):
        pb.jit(getattr(jnp, fn))(*args)


def test_size_must_be_static_int():
    with pytest.raises(TypeError, match="argument 'size'"):
        jnp.union1d(np.arange(3), np.arange(2), size=2.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_unique_array_api_functions(dtype):
    x = RNG.integers(0, 4, (3, 5)).astype(dtype)
    if dtype != np.int32:
        x[0, 0] = x[2, 1] = np.nan
    r = jnp.unique_all(x)
    # NaNs are distinct (equal_nan=False), inverse keeps x's shape
    nv, ni, ninv, nc = np.unique(x, return_index=True, return_inverse=True,
                                 return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(np.asarray(r.values), nv)
    np.testing.assert_array_equal(np.asarray(r.counts), nc)
    np.testing.assert_array_equal(np.asarray(r.values)[np.asarray(r.inverse_indices)],
                                  np.where(np.isnan(x), np.nan, x) if dtype != np.int32 else x)
    assert r.inverse_indices.shape == x.shape
    np.testing.assert_array_equal(np.asarray(x).ravel()[np.asarray(r.indices)], nv)
    c = jnp.unique_counts(x)
    np.testing.assert_array_equal(np.asarray(c.counts), nc)
    inv = jnp.unique_inverse(x)
    assert inv.inverse_indices.shape == x.shape
    np.testing.assert_array_equal(np.asarray(jnp.unique_values(x)), nv)


def test_unique_values_size_under_jit():
    f = pb.jit(lambda x: jnp.unique_values(x, size=4, fill_value=0))
    assert f(np.array([3, 1, 3], np.int32)).tolist() == [1, 3, 0, 0]


def test_zero_size_inputs():
    e = np.zeros((0,), np.float32)
    assert jnp.isin(e, np.arange(3.0)).shape == (0,)
    assert jnp.union1d(e, e).shape == (0,)
    assert jnp.intersect1d(e, np.arange(3.0)).shape == (0,)
    assert jnp.setdiff1d(e, np.arange(3.0)).shape == (0,)
    assert jnp.setxor1d(e, e, size=2).shape == (2,)
    np.testing.assert_array_equal(np.asarray(jnp.setxor1d(e, np.arange(3.0))), [0, 1, 2])
