"""sort, argsort, lexsort, searchsorted, unique, nonzero against NumPy."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp

RNG = np.random.default_rng(2)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_argsort_stable_nan_last(axis):
    x = RNG.integers(0, 4, (5, 6)).astype(np.float32)
    x[1, 2] = x[3, 0] = np.nan
    np.testing.assert_array_equal(np.asarray(jnp.sort(x, axis=axis)), np.sort(x, axis=axis))
    np.testing.assert_array_equal(np.asarray(jnp.argsort(x, axis=axis)),
                                  np.argsort(x, axis=axis, kind="stable"))


def test_descending_sort_is_stable():
    x = np.array([2, 1, 2, 3, 1], np.int32)
    assert jnp.sort(x, descending=True).tolist() == [3, 2, 2, 1, 1]
    assert jnp.argsort(x, descending=True).tolist() == [3, 0, 2, 1, 4]


def test_lexsort():
    a = np.array([1, 5, 1, 4, 3, 4, 4])
    b = np.array([9, 4, 0, 4, 0, 2, 1])
    np.testing.assert_array_equal(np.asarray(jnp.lexsort((b, a))), np.lexsort((b, a)))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    a = np.sort(RNG.integers(0, 10, 13)).astype(np.float32)
    v = np.array([-1, 0, 3, 3.5, 9, 10, np.nan], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(a, v, side=side)),
                                  np.searchsorted(a, v, side=side))
    got = pb.jit(lambda a, v: jnp.searchsorted(a, v, side=side))(jnp.asarray(a), jnp.asarray(v))
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v, side=side))


def test_unique_with_all_outputs():
    x = np.array([[3, 1, 2], [3, 3, 0]])
    vals, idx, inv, cnt = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    nvals, nidx, ninv, ncnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(np.asarray(vals), nvals)
    np.testing.assert_array_equal(np.asarray(idx), nidx)
    np.testing.assert_array_equal(np.asarray(inv).ravel(), ninv.ravel())
    np.testing.assert_array_equal(np.asarray(cnt), ncnt)


def test_unique_with_size_under_jit_and_nan():
    f = pb.jit(lambda x: jnp.unique(x, size=5, fill_value=-1))
    assert f(jnp.asarray([4, 1, 4, 2])).tolist() == [1, 2, 4, -1, -1]
    u = jnp.unique(jnp.asarray([np.nan, 1.0, np.nan]))
    assert np.asarray(u)[0] == 1.0 and np.isnan(np.asarray(u)[1]) and u.shape == (2,)


def test_unique_axis():
    x = np.array([[1, 2], [0, 5], [1, 2]])
    np.testing.assert_array_equal(np.asarray(jnp.unique(x, axis=0)), np.unique(x, axis=0))


def test_nonzero_argwhere_flatnonzero():
    x = np.array([[0, 2, 0], [3, 0, 4]])
    for g, w in zip(jnp.nonzero(x), np.nonzero(x)):
        np.testing.assert_array_equal(np.asarray(g), w)
    np.testing.assert_array_equal(np.asarray(jnp.argwhere(x)), np.argwhere(x))
    np.testing.assert_array_equal(np.asarray(jnp.flatnonzero(x)), np.flatnonzero(x))
    rows, cols = pb.jit(lambda x: jnp.nonzero(x, size=4, fill_value=-1))(jnp.asarray(x))
    assert rows.tolist() == [0, 1, 1, -1] and cols.tolist() == [1, 0, 2, -1]
    with pytest.raises(pb.ConcretizationTypeError, match="size="):
        pb.jit(jnp.nonzero)(jnp.asarray(x))
    r, = jnp.where(jnp.asarray([0, 1, 1]))
    assert r.tolist() == [1, 2]
