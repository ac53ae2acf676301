"""sort (one or several operands, several keys), argsort and top_k: values and exact bits
against each primitive's NumPy reference and an independent Python sort, over dtypes, shapes of
rank 1-4 (with 0-size dimensions), layouts, NaN placement and ties (stability)."""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pullback as pb
from pullback.test_util import LAYOUTS
from pullback.test_util import layout as with_layout
from pullback import lax
from pullback.backends.cpu import kernels as K
from pullback.primitives import sort as S

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
INTS = [np.dtype(t) for t in ("int8", "int16", "int32", "int64",
                              "uint8", "uint16", "uint32", "uint64")]
FLOATS = [F16, BF16, F32, F64]
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
ORDERED = [np.dtype(bool)] + INTS + FLOATS
SORTABLE = ORDERED + COMPLEX
NEG_NAN = -np.nan  # numpy keeps the sign bit: a NaN that is "negative" in IEEE totalOrder

# ---- data and layouts ----


def make(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Values with many ties; floats also hold +-NaN, +-inf and -0.0 next to 0.0."""
    dtype = np.dtype(dtype)
    if dtype == bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        v = rng.integers(-3 if dtype.kind == "i" else 0, 4, size=shape).astype(dtype)
        ext = rng.random(shape)  # the extremes exercise the sign-flipping keys
        v = np.where(ext < 0.05, info.min, np.where(ext > 0.95, info.max, v))
        return np.asarray(v).astype(dtype)
    v = rng.choice([-2.5, -1.0, 0.0, -0.0, 0.5, 1.0, 3.0, np.inf, -np.inf, np.nan, NEG_NAN],
                   size=shape)
    if dtype.kind == "c":
        v = v + 1j * rng.choice([-1.0, 0.0, 2.0, np.nan], size=shape)
    return np.asarray(v).astype(dtype)


def bits(x: np.ndarray) -> np.ndarray:
    """The raw bits, so -0.0 differs from 0.0 and NaN payloads and signs count."""
    x = np.ascontiguousarray(x)
    if x.dtype.kind in "biu":
        return x
    if x.dtype.kind == "c":
        return x.view({8: np.uint32, 16: np.uint64}[x.dtype.itemsize])
    return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def same_bits(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(bits(a), bits(b))


shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple)

# ---- independent orders: Python's sorted (stable, also with reverse=True) ----


def sort_key(v):
    """lax.sort's order of one element: NaN after everything, -0.0 == 0.0, complex by parts."""
    if isinstance(v, complex):
        return (sort_key(v.real), sort_key(v.imag))
    if isinstance(v, float) and math.isnan(v):
        return (1, 0.0)
    return (0, v)


def total_key(v, dtype):
    """IEEE totalOrder of a float from its bits (+NaN above +inf, -NaN below -inf)."""
    if dtype.kind in "biu":
        return int(v)
    u = int(np.asarray(v, dtype).reshape(1).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize])[0])
    top = 1 << (8 * dtype.itemsize - 1)
    return -(u ^ top) - 1 if u & top else u


def python_order(keys, axis, descending, key=sort_key):
    """Per row along ``axis``, the stable order of the rows of ``keys`` (first key primary)."""
    moved = [np.moveaxis(k, axis, -1) for k in keys]
    out = np.zeros(moved[0].shape, np.int64)
    for idx in np.ndindex(moved[0].shape[:-1]):
        rows = [[x.item() for x in m[idx]] for m in moved]
        n = len(rows[0])
        out[idx] = sorted(range(n), key=lambda i: tuple(key(r[i]) for r in rows),
                          reverse=descending)
    return np.moveaxis(out, -1, axis)


def pyval(x: np.ndarray) -> np.ndarray:
    """Halves as float32 so .item() gives Python floats."""
    return x.astype(F32) if x.dtype in (F16, BF16) else x


# ---- sort ----


@settings(max_examples=60)
@given(data=st.data())
def test_sort_one_operand(data):
    dtype = data.draw(st.sampled_from(SORTABLE), "dtype")
    shape = data.draw(shapes, "shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), "dimension")
    descending = data.draw(st.booleans(), "descending")
    layout = data.draw(st.sampled_from(LAYOUTS), "layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    x = with_layout(make(rng, shape, dtype), layout)
    out = lax.sort(pb.Array(x), dim, descending=descending)
    d = dim % x.ndim
    ref = S.sort_p.reference(np.array(x), dimension=d, is_stable=True, num_keys=1,
                             descending=descending)[0]
    same_bits(out, ref)
    perm = python_order([pyval(x)], d, descending)
    same_bits(out, np.take_along_axis(x, perm, d))
    if not descending and dtype.kind != "c":  # NumPy's own stable sort has lax.sort's order
        same_bits(out, np.take_along_axis(x, np.argsort(pyval(x), d, kind="stable"), d))


@settings(max_examples=60)
@given(data=st.data())
def test_sort_several_operands_and_keys(data):
    nops = data.draw(st.integers(1, 4), "operands")
    num_keys = data.draw(st.integers(1, nops), "num_keys")
    shape = data.draw(shapes, "shape")
    dim = data.draw(st.integers(0, len(shape) - 1), "dimension")
    descending = data.draw(st.booleans(), "descending")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    xs = []
    for i in range(nops):
        dtype = data.draw(st.sampled_from(SORTABLE), f"dtype{i}")
        layout = data.draw(st.sampled_from(LAYOUTS), f"layout{i}")
        xs.append(with_layout(make(rng, shape, dtype), layout))
    outs = lax.sort(tuple(pb.Array(x) for x in xs), dim, num_keys=num_keys, descending=descending)
    assert isinstance(outs, tuple) and len(outs) == nops
    refs = S.sort_p.reference(*[np.array(x) for x in xs], dimension=dim, is_stable=True,
                              num_keys=num_keys, descending=descending)
    perm = python_order([pyval(x) for x in xs[:num_keys]], dim, descending)
    for out, ref, x in zip(outs, refs, xs):
        same_bits(out, ref)
        same_bits(out, np.take_along_axis(x, perm, dim))


def test_sort_matches_jax_on_nan_signed_zero_and_ties():
    # expected orders recorded from jax 0.10.2 (lax.sort, jnp.argsort, lax.top_k)
    x = np.array([-np.inf, np.nan, 0.0, np.inf, -0.0, NEG_NAN, 1.0, 0.0, -0.0], np.float32)
    for dtype in FLOATS:
        xd = x.astype(dtype)
        same_bits(lax.sort(pb.Array(xd)), xd[[0, 2, 4, 7, 8, 6, 3, 1, 5]])
        np.testing.assert_array_equal(np.asarray(lax.argsort(pb.Array(xd))),
                                      [0, 2, 4, 7, 8, 6, 3, 1, 5])
        np.testing.assert_array_equal(np.asarray(lax.argsort(pb.Array(xd), descending=True)),
                                      [1, 5, 3, 6, 2, 4, 7, 8, 0])
        same_bits(lax.sort(pb.Array(xd), descending=True), xd[[1, 5, 3, 6, 2, 4, 7, 8, 0]])
        values, indices = lax.top_k(pb.Array(xd), 9)
        np.testing.assert_array_equal(np.asarray(indices), [1, 3, 6, 2, 7, 4, 8, 0, 5])
        same_bits(values, xd[[1, 3, 6, 2, 7, 4, 8, 0, 5]])


@pytest.mark.parametrize("dtype", SORTABLE)
def test_long_rows_keep_nan_payloads_and_zero_signs_in_input_order(dtype):
    # rows past the short-row cut-off take the vector quicksort where the CPU has AVX-512
    rng = np.random.default_rng(11)
    x = make(rng, (3, 1500), dtype)
    if dtype.kind == "f" and dtype.itemsize >= 4:  # NaNs with payloads, both signs
        u = x.view({4: np.uint32, 8: np.uint64}[dtype.itemsize])
        nan = np.isnan(x)
        u[nan] |= rng.integers(1, 1000, size=nan.sum()).astype(u.dtype)
    for layout in ("contiguous", "transposed", "flipped"):
        v = with_layout(x, layout)
        for descending in (False, True):
            ref = S.sort_p.reference(np.array(v), dimension=1, is_stable=True, num_keys=1,
                                     descending=descending)[0]
            same_bits(lax.sort(pb.Array(v), 1, descending=descending), ref)
    ints = rng.integers(-5, 5, size=(2, 5000)).astype(dtype) if dtype.kind in "iu" else None
    if ints is not None:  # many equal keys: the partitions that split off a minimum
        same_bits(lax.sort(pb.Array(ints)), np.sort(ints))


def test_multi_key_sort_orders_lexicographically_and_stably():
    a = np.array([3, 1, 2, 1, 3, 1], np.int32)
    b = np.array([0.0, 5.0, 1.0, np.nan, -1.0, 2.0], np.float32)
    c = np.arange(6)
    ka, kb, kc = lax.sort((pb.Array(a), pb.Array(b), pb.Array(c)), num_keys=2)
    np.testing.assert_array_equal(np.asarray(kc), [5, 1, 3, 2, 4, 0])
    _, _, kc = lax.sort((pb.Array(a), pb.Array(b), pb.Array(c)), num_keys=1)
    np.testing.assert_array_equal(np.asarray(kc), [1, 3, 5, 2, 0, 4])  # ties keep input order
    _, _, kc = lax.sort((pb.Array(a), pb.Array(b), pb.Array(c)), num_keys=2, descending=True)
    np.testing.assert_array_equal(np.asarray(kc), [0, 4, 2, 3, 1, 5])
    k, v = lax.sort_key_val(pb.Array(np.array([2, 1, 2, 1])), pb.Array(np.arange(4.0)))
    np.testing.assert_array_equal(np.asarray(k), [1, 1, 2, 2])
    np.testing.assert_array_equal(np.asarray(v), [1.0, 3.0, 0.0, 2.0])


def test_complex_sorts_by_real_then_imaginary_part():
    z = np.array([1 + 2j, complex(np.nan, 0), 1 + 1j, complex(0, np.nan), 5j, complex(1, -np.inf)],
                 np.complex64)
    out = np.asarray(lax.sort(pb.Array(z)))
    np.testing.assert_array_equal(bits(out), bits(z[[4, 3, 5, 2, 0, 1]]))


def test_large_sorts_against_numpy():
    rng = np.random.default_rng(5)
    for dtype in (F32, F64, np.dtype(np.int64), np.dtype(np.uint16), F16):
        x = (rng.normal(size=1 << 17) * 1000).astype(dtype)
        same_bits(lax.sort(pb.Array(x)), np.sort(x))
    x = rng.integers(0, 50, size=(300, 400)).astype(np.float32)  # heavy ties: stability counts
    for dim in (0, 1):
        np.testing.assert_array_equal(np.asarray(lax.argsort(pb.Array(x), dim)),
                                      np.argsort(x, dim, kind="stable"))
        same_bits(lax.sort(pb.Array(x.T.copy().T), dim), np.sort(x, dim))
    y = rng.integers(0, 3, size=(500, 300)).astype(np.int8)
    z = rng.integers(0, 50, size=(500, 300)).astype(np.float32)
    i = np.broadcast_to(np.arange(500)[:, None], (500, 300))
    outs = lax.sort((pb.Array(y), pb.Array(z), pb.Array(i)), 0, num_keys=2)
    perm = np.lexsort((z, y), axis=0)  # stable, last key primary
    for out, x in zip(outs, (y, z, i)):
        same_bits(out, np.take_along_axis(x, perm, 0))


# ---- argsort ----


@settings(max_examples=50)
@given(data=st.data())
def test_argsort(data):
    dtype = data.draw(st.sampled_from(SORTABLE), "dtype")
    shape = data.draw(shapes, "shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), "dimension")
    descending = data.draw(st.booleans(), "descending")
    layout = data.draw(st.sampled_from(LAYOUTS), "layout")
    index_dtype = data.draw(st.sampled_from([np.dtype(np.int32), np.dtype(np.int64),
                                             np.dtype(np.uint8), np.dtype(np.int16)]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    x = with_layout(make(rng, shape, dtype), layout)
    out = np.asarray(lax.argsort(pb.Array(x), dim, descending=descending, index_dtype=index_dtype))
    assert out.dtype == index_dtype and out.shape == x.shape
    d = dim % x.ndim
    ref = S.argsort_p.reference(np.array(x), dimension=d, descending=descending,
                                index_dtype=index_dtype)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(out, python_order([pyval(x)], d, descending))


# ---- top_k ----


@settings(max_examples=50)
@given(data=st.data())
def test_top_k(data):
    dtype = data.draw(st.sampled_from(ORDERED), "dtype")
    shape = data.draw(shapes, "shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), "axis")
    k = data.draw(st.integers(0, shape[axis]), "k")
    layout = data.draw(st.sampled_from(LAYOUTS), "layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    x = with_layout(make(rng, shape, dtype), layout)
    values, indices = lax.top_k(pb.Array(x), k, axis=axis)
    a = axis % x.ndim
    rv, ri = S.top_k_p.reference(np.array(x), k=k, axis=a)
    same_bits(values, rv)
    same_bits(indices, ri)
    perm = python_order([x], a, True, key=lambda v: total_key(v, x.dtype))
    perm = np.take(perm, np.arange(k), a)
    np.testing.assert_array_equal(np.asarray(indices), perm)
    same_bits(values, np.take_along_axis(x, perm, a))


def test_top_k_orders_nan_by_sign_and_breaks_ties_by_index():
    x = np.array([[1.0, NEG_NAN, 7.0, 7.0, np.nan, 0.0, -0.0]], np.float32)
    values, indices = lax.top_k(pb.Array(x), 4)
    np.testing.assert_array_equal(np.asarray(indices), [[4, 2, 3, 0]])
    _, indices = lax.top_k(pb.Array(x), 7)
    np.testing.assert_array_equal(np.asarray(indices), [[4, 2, 3, 0, 5, 6, 1]])
    _, indices = lax.top_k(pb.Array(np.array([3, 1, 3, 2], np.uint64)), 2)
    np.testing.assert_array_equal(np.asarray(indices), [0, 2])
    v, i = lax.top_k(pb.Array(np.zeros((2, 5), np.int8)), 0)
    assert np.asarray(v).shape == (2, 0) and np.asarray(i).dtype == np.int32
    big = np.random.default_rng(2).normal(size=(3, 1 << 16)).astype(np.float32)
    v, i = lax.top_k(pb.Array(big), 5)
    np.testing.assert_array_equal(np.asarray(v), -np.sort(-big, axis=1)[:, :5])


# ---- staging, backends and errors ----

CALLS = [
    lambda x: lax.sort(x, 0),
    lambda x: lax.sort((x, x * 2.0), 1, num_keys=1, descending=True),
    lambda x: lax.sort((x, x), -1, num_keys=2),
    lambda x: lax.argsort(x, 0, descending=True),
    lambda x: lax.top_k(x, 2),
    lambda x: lax.sort_key_val(x, x, 0),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_jit_and_the_reference_backend_agree_with_eager(i):
    f = CALLS[i]
    x = pb.Array(make(np.random.default_rng(i), (4, 5), F32))
    eager = pb.tree_util.tree_leaves(f(x))
    jitted = pb.tree_util.tree_leaves(pb.jit(f)(x))
    pb.config.update("backend", "reference")
    try:
        ref = pb.tree_util.tree_leaves(f(x))
    finally:
        pb.config.update("backend", "cpu")
    for e, j, r in zip(eager, jitted, ref):
        same_bits(e, j)
        same_bits(e, r)


def test_the_staged_primitives():
    text = str(pb.make_jaxpr(lambda x: (lax.sort((x, x), -1, num_keys=2), lax.argsort(x),
                                        lax.top_k(x, 1)))(np.ones((2, 3), F32)))
    assert "sort[dimension=1 is_stable=True num_keys=2 descending=False] a a" in text
    assert "argsort[dimension=1 descending=False index_dtype=int32]" in text
    assert "top_k[k=1 axis=1]" in text


@pytest.mark.parametrize("call, exc, words", [
    (lambda: lax.sort(np.float32(1.0)), ValueError, ["sort", "'operand'"]),
    (lambda: lax.sort(()), TypeError, ["sort", "'operand'"]),
    (lambda: lax.sort((np.ones(3), np.ones(4))), TypeError, ["sort", "'operand[1]'", "shape"]),
    (lambda: lax.sort((np.ones(3), np.ones(3)), num_keys=3), ValueError, ["sort", "'num_keys'"]),
    (lambda: lax.sort(np.ones(3), num_keys=2), ValueError, ["sort", "'num_keys'"]),
    (lambda: lax.sort(np.ones((2, 3)), 2), ValueError, ["sort", "'dimension'"]),
    (lambda: lax.sort(np.ones(3, ml_dtypes.float8_e5m2)), TypeError, ["sort", "'operand'", "float8"]),
    (lambda: lax.top_k(np.ones(3, np.complex64), 1), TypeError, ["top_k", "'operand'"]),
    (lambda: lax.top_k(np.ones(3), 4), ValueError, ["top_k", "'k'"]),
    (lambda: lax.top_k(np.ones(3), -1), ValueError, ["top_k", "'k'"]),
    (lambda: lax.top_k(np.float32(1.0), 1), ValueError, ["top_k", "'operand'"]),
    (lambda: lax.top_k(np.ones((2, 3)), 1, axis=2), ValueError, ["top_k", "'axis'"]),
    (lambda: lax.argsort(np.ones(3), index_dtype=np.float32), TypeError, ["argsort", "'index_dtype'"]),
    (lambda: lax.argsort(np.ones(300), index_dtype=np.int8), ValueError, ["argsort", "'index_dtype'"]),
])
def test_bad_input_names_the_op_and_argument(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def _kcall(name, ins, outs, params):
    """The kernel itself through the generic entry (outs: (dtype, shape) pairs)."""
    return K.call(K.kernel(name), ins, tuple((np.dtype(d), s) for d, s in outs), params)


_P3 = S._SORT_PARAMS.pack


@pytest.mark.parametrize("call, exc, words", [
    # the kernels check what memory safety needs, whatever the frontend sends
    (lambda: _kcall("sort", (np.ones(3), np.ones(2)), [("f8", (3,)), ("f8", (2,))], _P3(0, 1, 0)),
     TypeError, ["sort", "shape"]),
    (lambda: _kcall("sort", (np.ones(3),), [("f8", (3,))], _P3(1, 1, 0)), TypeError,
     ["sort", "axis"]),
    (lambda: _kcall("sort", (np.ones(3),), [("f8", (3,))], _P3(-1, 1, 0)), TypeError,
     ["sort", "axis"]),
    (lambda: _kcall("sort", (np.ones(3),), [("f8", (3,))], _P3(0, 2, 0)), TypeError,
     ["sort", "num_keys"]),
    (lambda: _kcall("sort", (np.ones(3, "V4"),), [("V4", (3,))], _P3(0, 1, 0)), TypeError,
     ["sort", "sortable"]),
    (lambda: _kcall("sort", (np.ones(3),), [("f4", (3,))], _P3(0, 1, 0)), TypeError, ["sort"]),
    (lambda: _kcall("sort", (np.ones(3),), [("f8", (3,))], b"\0" * 8), ValueError,
     ["sort", "params are 12 bytes"]),
    (lambda: _kcall("sort", (), (), _P3(0, 1, 0)), TypeError, ["sort"]),
    (lambda: _kcall("argsort", (np.ones(3),), [("f8", (3,))], S._ARGSORT_PARAMS.pack(0, 0)),
     TypeError, ["argsort", "integer output"]),
    (lambda: _kcall("argsort", (np.ones(3),), [("i4", (3,)), ("i4", (3,))],
                    S._ARGSORT_PARAMS.pack(0, 0)), ValueError, ["argsort", "1 outputs"]),
    (lambda: _kcall("top_k", (np.ones(3),), [("f8", (4,)), ("i4", (4,))],
                    S._TOP_K_PARAMS.pack(0)), TypeError, ["top_k", "k <= n"]),
    (lambda: _kcall("top_k", (np.ones(3, np.complex128),), [("c16", (1,)), ("i4", (1,))],
                    S._TOP_K_PARAMS.pack(0)), TypeError, ["top_k", "real operand"]),
    (lambda: _kcall("top_k", (np.ones((2, 2)),), [("f8", (2, 1)), ("i4", (2, 1))],
                    S._TOP_K_PARAMS.pack(-1)), TypeError, ["top_k", "axis"]),
    (lambda: _kcall("top_k", ([1.0, 2.0],), [("f8", (1,)), ("i4", (1,))],
                    S._TOP_K_PARAMS.pack(0)), TypeError, ["top_k", "numpy.ndarray"]),
])
def test_kernels_validate_their_arguments(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))
