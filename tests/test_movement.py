"""Movement primitives: transpose, squeeze, expand_dims, slice, rev, pad, concatenate, iota,
full (and the view/copy split of reshape and broadcast_in_dim).

Each op is checked against its NumPy reference and an independent NumPy computation, over
every dtype, ranks 0-4 with 0-size dimensions, and five input layouts; views must share the
input's memory and kernels must not.
"""
import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
from pullback.test_util import assert_bitwise_equal as assert_same
from pullback.test_util import check_backends as check
from pullback.test_util import LAYOUTS, layout, reference_backend
from pullback import lax
from pullback.tracer import dtypes

ALL_DTYPES = dtypes.SUPPORTED
NUMERIC = tuple(d for d in ALL_DTYPES if d != dtypes.bool_ and d not in dtypes.FLOAT8)


def rand(rng, shape, dtype):
    """Small values every dtype represents exactly (float8 included)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0 if dtype.kind == "u" else -50, 50, shape), dtype)
    if dtype.kind == "c":
        return np.asarray(rng.integers(-8, 8, shape) + 1j * rng.integers(-8, 8, shape), dtype)
    return np.asarray(rng.integers(-16, 16, shape) / 4, dtype)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
arrays = st.tuples(st.sampled_from(ALL_DTYPES), shapes, st.sampled_from(LAYOUTS),
                   st.integers(0, 2 ** 32 - 1)).map(
    lambda t: layout(rand(np.random.default_rng(t[3]), t[1], t[0]), t[2]))


# ---- views: transpose, squeeze, expand_dims, slice, rev ----

@given(arrays, st.data())
def test_transpose(x, data):
    perm = tuple(data.draw(st.permutations(range(x.ndim))))
    check(lambda a: lax.transpose(a, perm), np.transpose(x, perm), x)
    check(lambda a: lax.transpose(a, perm), x.transpose(perm).copy(), x)


@given(arrays, st.data())
def test_squeeze_and_expand_dims(x, data):
    ones = [d for d in range(x.ndim) if x.shape[d] == 1]
    dims = data.draw(st.lists(st.sampled_from(ones), unique=True)) if ones else []
    neg = [d - x.ndim for d in dims]  # negative dimensions count from the end
    want = x.reshape([n for d, n in enumerate(x.shape) if d not in dims])
    check(lambda a: lax.squeeze(a, neg), want, x)
    out_ndim = x.ndim + data.draw(st.integers(0 if x.ndim else 1, 2))
    new = data.draw(st.lists(st.integers(-out_ndim, out_ndim - 1), min_size=out_ndim - x.ndim,
                             max_size=out_ndim - x.ndim, unique_by=lambda d: d % out_ndim))
    check(lambda a: lax.expand_dims(a, new), np.expand_dims(x, tuple(d % out_ndim for d in new)),
          x)


@given(arrays, st.data())
def test_slice(x, data):
    starts, limits, steps = [], [], []
    for n in x.shape:
        s = data.draw(st.integers(0, n))
        starts.append(s)
        limits.append(data.draw(st.integers(s, n)))
        steps.append(data.draw(st.integers(1, 3)))
    index = tuple(slice(s, l, t) for s, l, t in zip(starts, limits, steps))
    check(lambda a: lax.slice(a, starts, limits, steps), x[index], x)
    check(lambda a: lax.slice(a, starts, limits), x[tuple(slice(s, l) for s, l in
                                                          zip(starts, limits))], x)


@given(arrays, st.data())
def test_rev(x, data):
    dims = data.draw(st.lists(st.integers(0, max(x.ndim - 1, 0)), unique=True)) if x.ndim else []
    want = x[tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(x.ndim))]
    check(lambda a: lax.rev(a, dims), want, x)


def test_slice_in_dim_and_index_in_dim():
    x = np.arange(24).reshape(2, 3, 4).astype(np.int32)
    a = pb.Array(x)
    assert_same(lax.slice_in_dim(a, 1, None, axis=2), x[:, :, 1:])
    assert_same(lax.slice_in_dim(a, -3, -1, 2, axis=-1), x[:, :, -3:-1:2])
    assert_same(lax.slice_in_dim(a, None, None, axis=1), x)
    assert_same(lax.index_in_dim(a, -1, axis=1), x[:, -1:])
    assert_same(lax.index_in_dim(a, 2, axis=2, keepdims=False), x[:, :, 2])
    with pytest.raises(IndexError, match="index_in_dim: index 3 is out of bounds for axis 1"):
        lax.index_in_dim(a, 3, axis=1)


VIEW_OPS = [
    ("broadcast_in_dim", lambda a: lax.broadcast_in_dim(a, (2, 3, 4, 5), (0, 1, 2))),
    ("reshape", lambda a: lax.reshape(a, (6, 4))),
    ("transpose", lambda a: lax.transpose(a, (2, 0, 1))),
    ("squeeze", lambda a: lax.squeeze(lax.expand_dims(a, (1,)), (1,))),
    ("expand_dims", lambda a: lax.expand_dims(a, (0, 3))),
    ("slice", lambda a: lax.slice(a, (1, 0, 1), (2, 3, 4), (1, 2, 2))),
    ("rev", lambda a: lax.rev(a, (0, 2))),
]


@pytest.mark.parametrize("name, op", VIEW_OPS, ids=[n for n, _ in VIEW_OPS])
@pytest.mark.parametrize("kind", LAYOUTS)
def test_views_share_memory(name, op, kind):
    x = layout(np.arange(24, dtype=np.float32).reshape(2, 3, 4), kind)
    if name == "reshape" and kind in ("transposed", "broadcast"):
        return  # these layouts cannot merge (2, 3) into 6: covered by the copy test below
    out = np.asarray(op(pb.Array(x)))
    assert np.shares_memory(out, x), f"{name} on a {kind} input copied"


@pytest.mark.parametrize("kind, shape", [("transposed", (6, 4)), ("broadcast", (6, 4)),
                                         ("strided", (24,))])
def test_reshape_copies_when_the_layout_cannot_merge(kind, shape):
    x = layout(np.arange(24, dtype=np.float32).reshape(2, 3, 4), kind)
    out = np.asarray(lax.reshape(pb.Array(x), shape))
    assert not np.shares_memory(out, x)
    assert_same(out, x.reshape(shape))


def test_views_of_views_stay_in_bounds():
    # a flipped, strided, transposed chain addresses exactly NumPy's elements
    x = np.arange(120, dtype=np.int16).reshape(4, 5, 6)
    a = lax.rev(lax.slice(lax.transpose(pb.Array(x), (2, 0, 1)), (1, 0, 1), (6, 4, 5), (2, 3, 1)),
                (0, 2))
    assert_same(a, x.transpose(2, 0, 1)[1:6:2, 0:4:3, 1:5][::-1, :, ::-1])
    assert np.shares_memory(np.asarray(a), x)


# ---- pad ----

def pad_by_loops(x, value, config):
    """Independent oracle: each output position asks which input element (if any) lands there."""
    shape = [lo + hi + n + max(n - 1, 0) * i for (lo, hi, i), n in zip(config, x.shape)]
    out = np.empty(shape, x.dtype)
    for pos in itertools.product(*map(range, shape)):
        src = []
        for p, (lo, _, inner), n in zip(pos, config, x.shape):
            q, r = divmod(p - lo, inner + 1)
            src.append(q if r == 0 and 0 <= q < n else None)
        out[pos] = value if None in src else x[tuple(src)]
    return out


@given(arrays, st.data())
def test_pad(x, data):
    config = []
    for n in x.shape:
        inner = data.draw(st.integers(0, 2))
        full = n + max(n - 1, 0) * inner
        lo = data.draw(st.integers(-full, 3))
        hi = data.draw(st.integers(-(full + lo) if full + lo > 0 else 0, 3))
        config.append((lo, hi, inner))
    value = rand(np.random.default_rng(0), (), x.dtype)
    want = pad_by_loops(x, value, config)
    check(lambda a, v: lax.pad(a, v, config), want, x, value)
    out = np.asarray(lax.pad(pb.Array(x), pb.Array(value), config))
    assert x.size == 0 or not np.shares_memory(out, x)


def test_pad_negative_and_interior_examples():
    x = pb.Array(np.arange(1, 6, dtype=np.int32))
    assert lax.pad(x, 0, [(-2, 1, 0)]).tolist() == [3, 4, 5, 0]
    assert lax.pad(x, 0, [(1, -1, 1)]).tolist() == [0, 1, 0, 2, 0, 3, 0, 4, 0]
    assert lax.pad(x, 9, [(-3, -3, 2)]).tolist() == [2, 9, 9, 3, 9, 9, 4]
    assert lax.pad(x, 0, [(-4, -5, 1)]).tolist() == []
    y = lax.pad(pb.Array(np.ones((2, 2), np.float16)), np.float16(-1), [(1, 0, 1), (0, -1, 0)])
    assert np.asarray(y).tolist() == [[-1], [1], [-1], [1]]


# ---- concatenate ----

@given(st.sampled_from(ALL_DTYPES), shapes.filter(len), st.data())
def test_concatenate(dtype, shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    axis = data.draw(st.integers(0, len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    pieces = [layout(rand(rng, shape[:axis] + (n,) + shape[axis + 1:], dtype),
                     data.draw(st.sampled_from(LAYOUTS))) for n in sizes]
    want = np.concatenate(pieces, axis=axis)
    check(lambda *a: lax.concatenate(a, axis), want, *pieces)


@given(st.sampled_from(ALL_DTYPES), shapes.filter(len), st.data())
def test_split(dtype, shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    x = layout(rand(rng, shape, dtype), data.draw(st.sampled_from(LAYOUTS)))
    want = np.split(x, cuts, axis=axis)
    for piece, w in zip(lax.split(pb.Array(x), sizes, axis), want):
        assert_same(piece, w)
    got = pb.jit(lambda a: lax.split(a, sizes, axis))(x)
    for piece, w in zip(got, want):
        assert_same(piece, w)


def test_jnp_split_is_one_split_equation():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    text = str(pb.make_jaxpr(lambda x: pb.numpy.split(x, [1, 3], axis=1))(x))
    assert text.count("split[") == 1 and "slice" not in text, text
    # decreasing indices (NumPy allows them) still give NumPy's pieces
    for got, want in zip(pb.numpy.split(pb.Array(x), [3, 1], axis=1), np.split(x, [3, 1], 1)):
        assert_same(got, want)


def test_concatenate_of_empty_pieces():
    e = np.zeros((2, 0), np.float32)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_same(lax.concatenate([pb.Array(e), pb.Array(x), pb.Array(e)], 1), x)
    assert_same(lax.concatenate([pb.Array(e), pb.Array(e)], 1), np.zeros((2, 0), np.float32))
    assert_same(lax.concatenate([pb.Array(e), pb.Array(e)], 0), np.zeros((4, 0), np.float32))
    out = np.asarray(lax.concatenate([pb.Array(x)], 0))
    assert_same(out, x) and not np.shares_memory(out, x)


# ---- iota and full ----

@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
def test_iota_every_numeric_dtype(dtype):
    assert_same(lax.iota(dtype, 7), np.arange(7).astype(dtype))
    for shape, dim in [((2, 3, 4), 1), ((3, 0), 0), ((5,), -1), ((1, 4), 1)]:
        ramp = np.arange(shape[dim]).astype(dtype)
        want = np.broadcast_to(ramp.reshape([-1 if d == dim % len(shape) else 1
                                             for d in range(len(shape))]), shape)
        check_iota = lambda: lax.broadcasted_iota(dtype, shape, dim)  # noqa: E731
        assert_same(check_iota(), want)
        with reference_backend():
            assert_same(check_iota(), want)
        assert_same(pb.jit(check_iota)(), want)


def test_iota_large_and_exactness():
    assert_same(lax.iota(np.int8, 300), np.arange(300).astype(np.int8))  # wraps, as a cast does
    assert_same(lax.iota(np.float16, 3000), np.arange(3000).astype(np.float16))
    assert_same(lax.iota(ml_dtypes.bfloat16, 300), np.arange(300).astype(ml_dtypes.bfloat16))


@pytest.mark.x32
def test_full():
    f = lax.full((2, 3), 1.5)
    assert f.dtype == np.float32 and f.weak_type and np.asarray(f).tolist() == [[1.5] * 3] * 2
    assert lax.full((2,), 7, np.int8).dtype == np.int8
    assert not lax.full((2,), 7, np.int8).weak_type
    assert lax.full((), np.float16(2)).dtype == np.float16
    v = pb.Array(np.asarray(3, np.uint16))
    out = lax.full((4, 0, 2), v)
    assert out.shape == (4, 0, 2) and out.dtype == np.uint16
    assert np.asarray(lax.full(3, v)).tolist() == [3, 3, 3]
    assert_same(pb.jit(lambda s: lax.full((2, 2), s))(v), np.full((2, 2), 3, np.uint16))
    # an array fill of another dtype needs convert_element_type (the conversion family)
    if hasattr(lax, "convert_element_type"):
        assert_same(lax.full((2,), v, np.float32), np.full((2,), 3, np.float32))
    else:
        with pytest.raises(TypeError, match="full: argument 'fill_value' has dtype uint16"):
            lax.full((2,), v, np.float32)


# ---- every dtype and layout, deterministically ----

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_and_layout(dtype):
    rng = np.random.default_rng(7)
    for kind in LAYOUTS:
        x = layout(rand(rng, (3, 4, 2), dtype), kind)
        check(lambda a: lax.transpose(a, (1, 2, 0)), x.transpose(1, 2, 0), x)
        check(lambda a: lax.rev(lax.slice(a, (0, 1, 0), (3, 4, 2), (2, 2, 1)), (1,)),
              x[0:3:2, 1:4:2][:, ::-1], x)
        check(lambda a: lax.squeeze(lax.slice(a, (1, 0, 0), (2, 4, 2)), (0,)), x[1], x)
        v = rand(rng, (), dtype)
        check(lambda a, b: lax.pad(a, b, [(1, -1, 1), (0, 2, 0), (-1, 0, 2)]),
              pad_by_loops(x, v, [(1, -1, 1), (0, 2, 0), (-1, 0, 2)]), x, v)
        check(lambda a, b: lax.concatenate([a, b, a], 2), np.concatenate([x, x[:, :, :1], x], 2),
              x, np.ascontiguousarray(x[:, :, :1]))


# ---- errors ----

@pytest.mark.parametrize("call, err, words", [
    (lambda x: lax.transpose(x, (0, 0, 1)), ValueError, ["transpose", "'permutation'"]),
    (lambda x: lax.transpose(x, (0, 1)), ValueError, ["transpose", "'permutation'"]),
    (lambda x: lax.squeeze(x, (1,)), ValueError, ["squeeze", "'dimensions'", "not 1"]),
    (lambda x: lax.squeeze(x, (5,)), ValueError, ["squeeze", "'dimensions'"]),
    (lambda x: lax.expand_dims(x, (0, 0)), ValueError, ["expand_dims", "'dimensions'"]),
    (lambda x: lax.slice(x, (0, 0, 0), (1, 4, 2)), ValueError, ["slice", "limit_indices"]),
    (lambda x: lax.slice(x, (2, 0, 0), (1, 3, 2)), ValueError, ["slice", "start_indices"]),
    (lambda x: lax.slice(x, (0, 0), (1, 3)), TypeError, ["slice", "'start_indices'", "3 ints"]),
    (lambda x: lax.slice(x, (0, 0, 0), (1, 3, 2), (1, 0, 1)), ValueError, ["slice", "'strides'"]),
    (lambda x: lax.rev(x, (3,)), ValueError, ["rev", "'dimensions'"]),
    (lambda x: lax.pad(x, pb.Array(np.zeros((), np.float32)), [(0, 0, 0)] * 3), TypeError,
     ["pad", "'padding_value'", "dtype"]),
    (lambda x: lax.pad(x, np.zeros(2, np.int32), [(0, 0, 0)] * 3), TypeError,
     ["pad", "'padding_value'", "scalar"]),
    (lambda x: lax.pad(x, 0, [(0, 0, 0)] * 2), TypeError, ["pad", "'padding_config'", "3"]),
    (lambda x: lax.pad(x, 0, [(0, 0, -1)] * 3), ValueError, ["pad", "interior"]),
    (lambda x: lax.pad(x, 0, [(-3, 0, 0)] * 3), ValueError, ["pad", "'padding_config'",
                                                            "negative"]),
    (lambda x: lax.concatenate([], 0), ValueError, ["concatenate", "'operands'"]),
    (lambda x: lax.concatenate([x, x], 3), ValueError, ["concatenate", "'dimension'"]),
    (lambda x: lax.concatenate([x, lax.transpose(x, (2, 1, 0))], 0), TypeError,
     ["concatenate", "'operands'", "shapes"]),
    (lambda x: lax.concatenate([x, pb.Array(np.zeros((1, 3, 2), np.int8))], 0), TypeError,
     ["concatenate", "'operands'", "dtype"]),
    (lambda x: lax.split(x, (1, 1), 0), ValueError, ["split", "'sizes'", "3"]),
    (lambda x: lax.split(x, (4, -1), 0), ValueError, ["split", "'sizes'"]),
    (lambda x: lax.split(x, (3,), 3), ValueError, ["split", "'axis'"]),
    (lambda x: lax.iota(np.bool_, 3), TypeError, ["iota", "'dtype'"]),
    (lambda x: lax.iota(np.float32, -1), TypeError, ["broadcasted_iota", "non-negative"]),
    (lambda x: lax.broadcasted_iota(np.int32, (2, 3), 2), ValueError, ["broadcasted_iota",
                                                                        "'dimension'"]),
    (lambda x: lax.full((2,), np.zeros(2)), TypeError, ["full", "'fill_value'", "scalar"]),
])
def test_errors_name_op_and_argument(call, err, words):
    x = pb.Array(np.zeros((3, 3, 2), np.int32))
    with pytest.raises(err) as info:
        call(x)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_errors_inside_jit_too():
    with pytest.raises(ValueError, match="squeeze: argument 'dimensions'"):
        pb.jit(lambda a: lax.squeeze(a, (0,)))(pb.Array(np.zeros((2, 1))))


def test_kernels_reject_bad_calls():
    k = pb.backends.cpu.kernels
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="view: the view reaches outside"):
        k.view(x, (2, 3), (12, 4), 4)
    with pytest.raises(ValueError, match="view: the view reaches outside"):
        k.view(x, (2 ** 40,), (2 ** 40,), 0)  # overflowing extents are caught
    with pytest.raises(ValueError, match="pad: argument 'low' must have 2 entries"):
        k.pad(x, np.zeros((), np.float32), (1,), (1,), (0,))
    with pytest.raises(TypeError, match="pad: argument 'value' has dtype"):
        k.pad(x, np.zeros((), np.float64), (0, 0), (0, 0), (0, 0))
    with pytest.raises(ValueError, match="pad: the padding of dimension 0"):
        k.pad(x, np.zeros((), np.float32), (-5, 0), (0, 0), (0, 0))
    with pytest.raises(ValueError, match="concatenate: operand 1 has a shape"):
        k.concatenate((x, x.T), 0)
    with pytest.raises(ValueError, match="dynamic_update_slice: update of size 2 at start 2"):
        k.dynamic_update_slice(x, np.zeros((2, 2), np.float32), (0, 2))
    with pytest.raises(TypeError, match="copy: argument 'x' has dtype object"):
        k.copy(np.array([None, 1]))
    with pytest.raises(TypeError, match="iota: argument 'dtype' must be a numeric dtype"):
        k.iota(np.dtype(bool), (3,), 0)
