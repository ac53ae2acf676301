"""x[idx] with NumPy's rules (basic, advanced, mixed, boolean masks), take / take_along_axis,
and x.at[idx] updates, against NumPy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
import pullback.numpy as jnp

X = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)

INDEXES = [
    1, -1, (0, 2), (slice(None), 1), (Ellipsis, 2), (slice(1, None), slice(None, None, 2)),
    (slice(None, None, -1),), (slice(3, 0, -2), Ellipsis), (None, 1), (1, None, slice(2)),
    (Ellipsis, None), (slice(-2, None), -3, slice(None, 1)),
    np.array([0, 2, 2]), [1, 0], (np.array([0, 1]), np.array([3, 2])),
    (slice(None), np.array([[0, 1], [3, 2]])), (np.array([0, 2]), slice(None), np.array([4, 0])),
    (1, np.array([0, 3]), slice(1, 3)), (Ellipsis, np.array([-1, 0])),
    (np.array([[0], [2]]), np.array([1, 3])), (slice(None), None, np.array([1, 2])),
    np.array([True, False, True]), (slice(None), np.array([True, False, True, True])),
    X > 30, (np.array([1, 2]), 0, np.array([4, -5])),
]


@pytest.mark.parametrize("idx", INDEXES, ids=[repr(i)[:40] for i in range(len(INDEXES))])
def test_getitem_against_numpy(idx):
    got = jnp.asarray(X)[idx]
    want = X[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("idx", [i for i in INDEXES if not (isinstance(i, np.ndarray) and i.dtype == bool)
                                 and not (isinstance(i, tuple) and any(isinstance(e, np.ndarray) and e.dtype == bool for e in i))],
                         ids=str)
def test_getitem_under_jit(idx):
    got = pb.jit(lambda x: x[idx])(jnp.asarray(X))
    np.testing.assert_array_equal(np.asarray(got), X[idx])


def test_traced_scalar_index_is_a_clamped_dynamic_slice():
    f = pb.jit(lambda x, i: x[i, 1:3])
    for i in (0, 2, -1):
        np.testing.assert_array_equal(np.asarray(f(jnp.asarray(X), jnp.asarray(i))), X[i, 1:3])


def test_static_out_of_bounds_index_clamps_as_jax():
    # JAX: negative indices count from the end once, then the index is clamped
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(x[3]), X[-1])
    np.testing.assert_array_equal(np.asarray(x[-10]), X[0])
    with pytest.raises(IndexError, match="too many indices"):
        jnp.asarray(X)[0, 0, 0, 0]


def test_boolean_mask_under_jit_needs_concrete_values():
    with pytest.raises(pb.ConcretizationTypeError, match="boolean indices must be concrete"):
        pb.jit(lambda x: x[x > 3])(jnp.asarray(X))


@pytest.mark.parametrize("mode", [None, "clip", "wrap"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take(mode, axis):
    idx = np.array([[0, 2], [-1, 1]])
    got = jnp.take(jnp.asarray(X), idx, axis=axis, mode=mode)
    want = np.take(X, idx, axis=axis, mode=mode or "raise")
    np.testing.assert_array_equal(np.asarray(got), want)


def test_take_fill_mode_out_of_bounds():
    got = jnp.take(jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([0, 5]))
    assert np.asarray(got)[0] == 1.0 and np.isnan(np.asarray(got)[1])


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_take_along_axis(axis):
    idx = np.argsort(X, axis=axis)[..., :2] if axis == 2 else np.argsort(-X, axis=axis)
    got = jnp.take_along_axis(jnp.asarray(X), jnp.asarray(idx), axis=axis)
    np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(X, idx, axis=axis))


AT_INDEXES = [1, (0, slice(1, 3)), (Ellipsis, 2), np.array([0, 2, 0]), (np.array([0, 1, 0]), np.array([2, 2, 2])),
              (slice(None), np.array([1, 1])), (slice(None, None, -2), 0)]


@pytest.mark.parametrize("idx", AT_INDEXES, ids=str)
def test_at_set_add_multiply_min_max_against_numpy(idx):
    x = jnp.asarray(X)
    vals = np.float32(0.5) + np.zeros(X[idx].shape, np.float32) + np.arange(X[idx].size,
                                                                              dtype=np.float32).reshape(X[idx].shape)
    want = X.copy()
    want[idx] = vals  # NumPy: the last of repeated indices wins
    np.testing.assert_array_equal(np.asarray(x.at[idx].set(vals)), want)
    for method, ufunc in (("add", np.add), ("multiply", np.multiply), ("min", np.minimum),
                          ("max", np.maximum)):
        want = X.copy()
        ufunc.at(want, idx, vals)  # repeated indices combine
        np.testing.assert_allclose(np.asarray(getattr(x.at[idx], method)(vals)), want, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(x.at[idx].get()), X[idx])
    np.testing.assert_array_equal(np.asarray(x), X)  # the original is untouched


def test_at_out_of_bounds_updates_are_dropped_and_divide_power_apply():
    x = jnp.asarray([1.0, 2.0, 3.0])
    assert x.at[5].set(9.0).tolist() == [1.0, 2.0, 3.0]
    assert x.at[jnp.asarray([0, 7])].add(10.0).tolist() == [11.0, 2.0, 3.0]
    assert x.at[1].divide(4.0).tolist() == [1.0, 0.5, 3.0]
    assert x.at[2].power(2).tolist() == [1.0, 2.0, 9.0]
    assert x.at[0].apply(lambda v: v * 100).tolist() == [100.0, 2.0, 3.0]
    assert x.at[-1].set(0.0).tolist() == [1.0, 2.0, 0.0]


def test_at_under_jit_and_scalar_broadcast():
    f = pb.jit(lambda x, i, v: x.at[i].add(v))
    out = f(jnp.zeros((3, 2)), jnp.asarray([0, 2, 0]), 1.0)
    np.testing.assert_array_equal(np.asarray(out), [[2, 2], [0, 0], [1, 1]])


@given(st.data())
def test_random_basic_indexing(data):
    shape = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple))
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    idx = []
    for n in shape:
        kind = data.draw(st.sampled_from(["slice", "int", "all"] if n else ["slice", "all"]))
        if kind == "int":
            idx.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            idx.append(slice(data.draw(st.none() | st.integers(-5, 5)),
                             data.draw(st.none() | st.integers(-5, 5)),
                             data.draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))))
        else:
            idx.append(slice(None))
    idx = tuple(idx)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[idx]), x[idx])


def test_float_indices_raise_type_error_as_jax():
    x = jnp.ones((2, 3))
    for idx in (1.5, (0, 1.5), np.float32(1)):
        with pytest.raises(TypeError, match="Indexer must have integer or boolean type"):
            x[idx]
    with pytest.raises(TypeError, match="slice indices must be integers or None"):
        x[0.5:2]
