"""The Array type: layout, conversions, immutability, dtype defaults."""
import pickle

import ml_dtypes
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp


def test_np_asarray_is_zero_copy_and_read_only():
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = pb.Array(src)
    v = np.asarray(x)
    assert np.shares_memory(v, src) and not v.flags.writeable
    with pytest.raises(ValueError):
        v[0, 0] = 1.0


def test_asarray_copies_numpy_input_so_later_mutation_is_invisible():
    src = np.ones(3, np.float32)
    x = jnp.asarray(src)
    src[0] = 7.0
    assert np.asarray(x).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("data, dtype, weak", [
    (1.5, np.float32, True), (3, np.int32, True), (True, np.bool_, False), (2j, np.complex64, True),
    ([1.0, 2.0], np.float32, False), ([1, 2], np.int32, False), ([[1, 2.5]], np.float32, False),
    (np.ones(2), np.float32, False), (np.ones(2, np.int64), np.int32, False),
    (np.float16(1), np.float16, False), (np.ones(2, ml_dtypes.bfloat16), ml_dtypes.bfloat16, False),
])
@pytest.mark.x32
def test_dtype_defaults(data, dtype, weak):
    x = jnp.asarray(data)
    assert x.dtype == np.dtype(dtype) and x.weak_type == weak


def test_explicit_dtype_and_ndmin():
    x = jnp.array([1, 2, 3], dtype=jnp.float64, ndmin=3)
    assert x.dtype == np.float64 and x.shape == (1, 1, 3)
    assert jnp.float32(2.5).dtype == np.float32 and float(jnp.float32(2.5)) == 2.5


def test_immutability_and_the_at_hint():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"immutable.*\.at\[idx\]\.set"):
        x[0] = 2.0
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


def test_python_protocols():
    x = jnp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert len(x) == 2 and x.shape == (2, 3) and x.ndim == 2 and x.size == 6
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert x.item(4) == 4 and jnp.asarray(7).item() == 7
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0, 1, 2], [3, 4, 5]]
    assert int(jnp.asarray(3)) == 3 and float(jnp.asarray(2.5)) == 2.5
    assert bool(jnp.asarray(1.0)) and not bool(jnp.asarray(0))
    assert [1, 2, 3][jnp.asarray(1)] == 2  # __index__
    assert x.block_until_ready() is x
    assert f"{jnp.asarray(2.5):.2f}" == "2.50"
    with pytest.raises(TypeError, match="0-d"):
        len(jnp.asarray(1.0))


def test_repr_like_jax():
    # JAX 0.10's reprs, in x64 mode and in the default mode
    assert repr(jnp.asarray(2.0)) == "Array(2., dtype=float64, weak_type=True)"
    assert repr(jnp.asarray([1.0, 2.0])) == "Array([1., 2.], dtype=float64)"
    assert repr(jnp.asarray(np.array([1, 2]))) == "Array([1, 2], dtype=int64)"
    with pb.enable_x64(False):
        assert repr(jnp.asarray(2.0)) == "Array(2., dtype=float32, weak_type=True)"
        assert repr(jnp.asarray([1.0, 2.0])) == "Array([1., 2.], dtype=float32)"
        assert repr(jnp.asarray(np.array([1, 2]))) == "Array([1, 2], dtype=int32)"


def test_pickle_round_trip_and_dlpack():
    x = jnp.asarray(np.arange(4, dtype=np.float32))
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, pb.Array) and y.tolist() == x.tolist() and y.dtype == x.dtype
    z = np.from_dlpack(x)
    assert z.tolist() == [0, 1, 2, 3]


def test_shape_dtype_struct():
    s = pb.ShapeDtypeStruct((2, 3), jnp.float32)
    assert s.shape == (2, 3) and s.dtype == np.float32 and s.ndim == 2 and s.size == 6
    assert s == pb.ShapeDtypeStruct((2, 3), np.float32)


def test_from_dlpack_shares_memory_both_ways():
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = jnp.from_dlpack(src)
    assert isinstance(x, pb.Array) and np.shares_memory(np.asarray(x), src)
    assert x.tolist() == src.tolist()
    y = jnp.from_dlpack(x)  # an Array is a producer too
    assert np.shares_memory(np.asarray(y), src) and y.dtype == np.float32
    z = jnp.from_dlpack(src, copy=True)
    assert not np.shares_memory(np.asarray(z), src)
