"""Tests for the primitives of this slice and their C kernels.

add, mul, neg, sin, exp (element-wise), reduce_sum, broadcast_in_dim, reshape and dot_general:
each CPU result is checked against the primitive's NumPy reference *and* against an independent
computation (Python integers with explicit wraparound for integer dtypes, a wider float type for
floating and complex ones), on contiguous, strided, broadcast (zero-stride), flipped
(negative-stride), transposed and Fortran-order operands fed straight to the kernels through
``pullback.Array`` (which wraps an ndarray without copying). Also: the zero-copy guarantees of
the movement primitives, pairwise float summation, jit == eager, reference backend == cpu
backend, and the error messages of bad calls.
"""
from __future__ import annotations

import contextlib
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pullback
from pullback import lax
from pullback.backends.cpu import kernels
from pullback.primitives.dot import dot_general_p
from pullback.primitives.elementwise import add_p, exp_p, mul_p, neg_p, sin_p
from pullback.primitives.movement import broadcast_in_dim_p, reshape_p
from pullback.primitives.reductions import reduce_sum_p

Array = pullback.Array

# ---------------------------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------------------------

SINTS = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
UINTS = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
COMPLEXES = (np.dtype(np.complex64), np.dtype(np.complex128))
INEXACT = FLOATS + COMPLEXES
NUMERIC = SINTS + UINTS + INEXACT
DOT_DTYPES = INEXACT + (np.dtype(np.int32), np.dtype(np.int64))

# the independent model of an inexact dtype is computed in a wider one
WIDE = {np.dtype(np.float32): np.dtype(np.float64),
        np.dtype(np.float64): np.dtype(np.longdouble),
        np.dtype(np.complex64): np.dtype(np.complex128),
        np.dtype(np.complex128): np.dtype(np.clongdouble)}


def is_int(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def eps(dtype) -> float:
    return float(np.finfo(dtype).eps)


def tiny(dtype) -> float:
    return float(np.finfo(dtype).smallest_subnormal)


def wide(x: np.ndarray) -> np.ndarray:
    """x in a wider type: Python ints (object) for integers, WIDE[...] for inexact dtypes."""
    return x.astype(object) if is_int(x.dtype) else x.astype(WIDE[x.dtype])


def wrap_int(values, dtype) -> np.ndarray:
    """Python-int results reduced modulo 2**bits into ``dtype`` (two's complement wraparound)."""
    info = np.iinfo(dtype)
    mod = 1 << info.bits
    obj = np.asarray(values, dtype=object)
    flat = [((int(v) - info.min) % mod) + info.min for v in obj.reshape(-1)]
    return np.array(flat, dtype=dtype).reshape(obj.shape)


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of a real or complex float array (so -0.0 and 0.0 differ)."""
    a = np.array(a, order="C").reshape(-1)
    part = a.dtype.itemsize // (2 if a.dtype.kind == "c" else 1)
    return a.view(np.dtype(f"u{part}"))


def assert_within(actual, truth, tol, what="result"):
    """|actual - truth| <= tol element-wise (truth and tol in the wide type)."""
    actual = np.asarray(actual)
    truth = np.asarray(truth)
    assert actual.shape == truth.shape, (what, actual.shape, truth.shape)
    err = np.abs(actual.astype(truth.dtype) - truth)
    bad = ~(err <= tol)
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements off; first at {i}: "
                             f"got {actual[i]!r}, want {truth[i]!r}, |err| {err[i]!r} > tol "
                             f"{np.broadcast_to(tol, bad.shape)[i]!r}")


def run(prim, xs, dtype, **params) -> np.ndarray:
    """Runs ``prim`` on the ndarrays ``xs`` through the raw CPU rule and through ``bind`` (on
    Arrays wrapping the very same layouts); checks both agree and have ``dtype``."""
    raw = prim.cpu(kernels, *xs, **params)
    assert isinstance(raw, np.ndarray)
    assert raw.dtype == dtype, f"{prim.name}: the kernel returned {raw.dtype}, want {dtype}"
    out = prim.bind(*(Array(x) for x in xs), **params)
    assert isinstance(out, Array)
    assert out.dtype == dtype and not out.weak_type
    a = np.asarray(out)
    assert a.dtype == dtype and a.shape == raw.shape
    np.testing.assert_array_equal(a, raw)
    return a


# ---------------------------------------------------------------------------------------------
# strategies: values, shapes, layouts
# ---------------------------------------------------------------------------------------------

def elements(dtype, lo=-10.0, hi=10.0, ilim=11):
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return st.integers(-ilim, ilim)
    if dt.kind == "u":
        return st.integers(0, ilim)
    width = 32 if dt in (np.dtype(np.float32), np.dtype(np.complex64)) else 64
    real = st.floats(lo, hi, width=width)
    return real if dt.kind == "f" else st.builds(complex, real, real)


def shapes(max_dims=4, max_side=3, min_dims=0):
    """Mostly non-empty shapes, with a good share of 0-size ones."""
    return st.one_of(
        hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side),
        hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side))


LAYOUTS = ("contiguous", "strided", "broadcast", "flipped", "transposed", "fortran")


@st.composite
def laid_out(draw, dtype, shape, elems=None, layouts=LAYOUTS):
    """An ndarray of ``shape`` and ``dtype`` whose memory layout is drawn from ``layouts``."""
    dtype, shape = np.dtype(dtype), tuple(shape)
    nd = len(shape)
    el = elems if elems is not None else elements(dtype)

    def fresh(s):
        return draw(hnp.arrays(dtype, tuple(s), elements=el))

    kind = draw(st.sampled_from(layouts)) if nd else "contiguous"
    if kind == "strided":  # x[..., start::step] along one axis of a bigger array
        ax = draw(st.integers(0, nd - 1))
        step = draw(st.sampled_from((2, 3)))
        start = draw(st.integers(0, step - 1))
        big = list(shape)
        big[ax] = shape[ax] * step + start
        idx = [slice(None)] * nd
        idx[ax] = slice(start, None, step)
        out = fresh(big)[tuple(idx)]
    elif kind == "broadcast":  # np.broadcast_to: zero strides (size-1 and missing leading dims)
        ones = draw(st.lists(st.booleans(), min_size=nd, max_size=nd))
        lead = draw(st.integers(0, nd))
        src = tuple(1 if o else s for o, s in zip(ones, shape))[lead:]
        out = np.broadcast_to(fresh(src), shape)
    elif kind == "flipped":  # negative strides
        axes = draw(st.sets(st.integers(0, nd - 1), min_size=1))
        idx = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(nd))
        out = fresh(shape)[idx]
    elif kind == "transposed":
        perm = draw(st.permutations(range(nd)))
        inv = np.argsort(perm)
        out = fresh(tuple(shape[i] for i in inv)).transpose(perm)
    elif kind == "fortran":
        out = np.asfortranarray(fresh(shape))
    else:
        out = np.array(fresh(shape), order="C")  # (ascontiguousarray would make 0-d into 1-d)
    assert out.shape == shape and out.dtype == dtype
    return out


# ---------------------------------------------------------------------------------------------
# element-wise primitives
# ---------------------------------------------------------------------------------------------

EWISE = {"add": (add_p, NUMERIC), "mul": (mul_p, NUMERIC), "neg": (neg_p, NUMERIC),
         "sin": (sin_p, INEXACT), "exp": (exp_p, INEXACT)}
MODEL = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "neg": lambda a: -a,
         "sin": np.sin, "exp": np.exp}


def ewise_elements(name, dtype):
    # sin/exp of complex numbers: keep cosh/exp of the parts moderate
    if name in ("sin", "exp") and np.dtype(dtype).kind == "c":
        return elements(dtype, -5.0, 5.0)
    return elements(dtype)


def check_elementwise(prim, xs):
    name = prim.name
    dtype = xs[0].dtype
    shape = max((x.shape for x in xs), key=len)
    out = run(prim, xs, dtype)
    assert out.shape == shape
    ref = prim.reference(*xs)
    assert ref.dtype == dtype and ref.shape == shape
    if is_int(dtype):
        np.testing.assert_array_equal(out, ref)
        np.testing.assert_array_equal(out, wrap_int(MODEL[name](*(wide(x) for x in xs)), dtype))
        return
    w = [wide(x) for x in xs]
    truth = np.asarray(MODEL[name](*w))
    e, t = eps(dtype), tiny(dtype)
    if name in ("add", "neg") or (name == "mul" and dtype.kind == "f"):
        # one correctly rounded IEEE operation per component: bitwise equal to NumPy (signed
        # zeros included) and within half an ulp of the exact value
        np.testing.assert_array_equal(bits(out), bits(ref))
        tol = e * np.abs(truth) + t
    elif name == "mul":  # complex: a*b - c*d may cancel; bound by the magnitudes of the factors
        tol = 4 * (e * np.abs(w[0]) * np.abs(w[1]) + t)
    elif name == "sin":  # |Re|, |Im| of sin(z) are at most cosh(Im z)
        tol = 8 * e * (np.cosh(w[0].imag) if dtype.kind == "c" else 1.0) + t
    else:  # exp: |Re|, |Im| of exp(z) are at most exp(Re z)
        tol = 8 * e * np.exp(w[0].real) + t
    assert_within(out, truth, tol, f"{name} cpu")
    assert_within(ref, truth, tol, f"{name} reference")


@st.composite
def ewise_operands(draw, name, nin):
    dtype = draw(st.sampled_from(EWISE[name][1]))
    shape = draw(shapes())
    el = ewise_elements(name, dtype)
    return [draw(laid_out(dtype, shape, el)) for _ in range(nin)]


@pytest.mark.parametrize("name", ["neg", "sin", "exp"])
@given(data=st.data())
def test_unary_matches_reference_and_model(name, data):
    (x,) = data.draw(ewise_operands(name, 1))
    check_elementwise(EWISE[name][0], [x])


@pytest.mark.parametrize("name", ["add", "mul"])
@given(data=st.data())
def test_binary_matches_reference_and_model(name, data):
    x, y = data.draw(ewise_operands(name, 2))
    check_elementwise(EWISE[name][0], [x, y])


@pytest.mark.parametrize("name", ["add", "mul"])
@given(data=st.data())
def test_binary_with_scalar_operand(name, data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(shapes())
    el = ewise_elements(name, dtype)
    full = data.draw(laid_out(dtype, shape, el))
    scalar = data.draw(hnp.arrays(dtype, (), elements=el))
    side = data.draw(st.sampled_from(("left", "right", "both")))
    xs = {"left": [scalar, full], "right": [full, scalar], "both": [scalar, scalar]}[side]
    check_elementwise(EWISE[name][0], xs)
    # the lax wrapper with a Python scalar: weakly typed, takes the array's dtype
    py = scalar.item()
    fn = getattr(lax, name)
    out = fn(py, Array(full)) if side == "left" else fn(Array(full), py)
    assert out.dtype == dtype and out.shape == full.shape and not out.weak_type
    prim = EWISE[name][0]
    want = prim.bind(Array(scalar), Array(full)) if side == "left" else \
        prim.bind(Array(full), Array(scalar))
    np.testing.assert_array_equal(np.asarray(out), want)


@pytest.mark.parametrize("dtype", SINTS + UINTS)
def test_integer_add_mul_neg_wrap_around(dtype):
    info = np.iinfo(dtype)
    vals = np.array([info.min, info.min + 1, -1 if info.min else 1, 0, 1, info.max - 1, info.max],
                    dtype=dtype)
    x, y = np.meshgrid(vals, vals[::-1])  # broadcast-free but non-trivial 2-D operands
    x, y = np.ascontiguousarray(x), y.T  # one of them transposed
    for prim, fn in ((add_p, lambda a, b: a + b), (mul_p, lambda a, b: a * b)):
        out = run(prim, [x, y], np.dtype(dtype))
        np.testing.assert_array_equal(out, wrap_int(fn(x.astype(object), y.astype(object)), dtype))
    out = run(neg_p, [vals[::-1]], np.dtype(dtype))
    np.testing.assert_array_equal(out, wrap_int(-vals[::-1].astype(object), dtype))


def test_int8_add_wraps_explicitly():
    x = np.array([127, -128, 100, -100, 127], np.int8)
    y = np.array([1, -1, 100, -100, 127], np.int8)
    out = run(add_p, [x, y], np.dtype(np.int8))
    np.testing.assert_array_equal(out, np.array([-128, 127, -56, 56, -2], np.int8))


# Large operands: OpenMP splits (outer rows, or the inner run when there is one row), the
# contiguous/scalar fast paths and the GIL release.
BIG = 600_000


@pytest.mark.parametrize("layout", ["contiguous", "strided2d", "flipped1d", "scalar", "bcast"])
def test_large_elementwise_all_paths(layout):
    rng = np.random.default_rng(7)
    base = rng.uniform(-10, 10, 2 * BIG).astype(np.float32)
    other = rng.uniform(-10, 10, BIG).astype(np.float32)
    if layout == "contiguous":
        x, y = base[:BIG], other
    elif layout == "strided2d":
        x, y = base.reshape(1000, 2 * BIG // 1000)[:, ::2], other.reshape(1000, -1)
    elif layout == "flipped1d":
        x, y = base[::-2], other
    elif layout == "scalar":
        x, y = base[:BIG], np.array(np.float32(1.5))
    else:
        x, y = np.broadcast_to(base[:600], (1000, 600)), other.reshape(1000, 600)
    for prim, fn in ((add_p, np.add), (mul_p, np.multiply)):
        out = run(prim, [x, y], np.dtype(np.float32))
        np.testing.assert_array_equal(out, fn(x, y))
        out = run(prim, [y, x], np.dtype(np.float32))
        np.testing.assert_array_equal(out, fn(y, x))
    out = run(neg_p, [x], np.dtype(np.float32))
    np.testing.assert_array_equal(out, -x)
    xs = x.astype(np.float64)
    assert_within(run(sin_p, [x], np.dtype(np.float32)), np.sin(xs), 8 * eps(np.float32), "sin")
    assert_within(run(exp_p, [x], np.dtype(np.float32)), np.exp(xs),
                  8 * eps(np.float32) * np.exp(xs), "exp")


def test_large_integer_and_double_elementwise():
    rng = np.random.default_rng(8)
    a = rng.integers(-1000, 1000, (700, 1000), dtype=np.int32)
    b = rng.integers(-1000, 1000, (1000, 700), dtype=np.int32).T
    np.testing.assert_array_equal(run(mul_p, [a, b], np.dtype(np.int32)), a * b)
    np.testing.assert_array_equal(run(add_p, [a, b], np.dtype(np.int32)), a + b)
    z = rng.uniform(-10, 10, 150_000)
    assert_within(run(sin_p, [z[::-1]], np.dtype(np.float64)), np.sin(z[::-1].astype(np.longdouble)),
                  8 * eps(np.float64), "sin f64")


# ---------------------------------------------------------------------------------------------
# reduce_sum
# ---------------------------------------------------------------------------------------------

def check_reduce_sum(x, axes):
    dtype = x.dtype
    want_shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    out = run(reduce_sum_p, [x], dtype, axes=axes)
    assert out.shape == want_shape
    ref = reduce_sum_p.reference(x, axes=axes)
    assert ref.dtype == dtype and ref.shape == want_shape
    if is_int(dtype):
        np.testing.assert_array_equal(out, ref)
        np.testing.assert_array_equal(out, wrap_int(np.sum(wide(x), axis=axes), dtype))
        return
    w = wide(x)
    truth = np.asarray(np.sum(w, axis=axes))
    n = math.prod(x.shape[a] for a in axes)
    c = 2 if dtype.kind == "c" else 1
    tol = c * (n + 2) * eps(dtype) * np.asarray(np.sum(np.abs(w), axis=axes)) + tiny(dtype)
    assert_within(out, truth, tol, f"reduce_sum{axes} cpu")
    assert_within(ref, truth, tol, f"reduce_sum{axes} reference")


@given(data=st.data())
def test_reduce_sum_every_axis_subset(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(shapes(max_dims=3, max_side=4))
    size = math.prod(shape)
    # integers small enough that no sum overflows (wraparound is tested separately)
    ilim = max(1, min(11, np.iinfo(dtype).max // max(size, 1))) if is_int(dtype) else 11
    x = data.draw(laid_out(dtype, shape, elements(dtype, ilim=ilim)))
    for k in range(x.ndim + 1):
        for axes in itertools.combinations(range(x.ndim), k):
            check_reduce_sum(x, axes)


@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.float32, np.complex128])
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4), (0, 0)])
def test_reduce_sum_zero_size(dtype, shape):
    x = np.ones(shape, dtype)
    for k in range(x.ndim + 1):
        for axes in itertools.combinations(range(x.ndim), k):
            out = run(reduce_sum_p, [x], np.dtype(dtype), axes=axes)
            want = tuple(d for i, d in enumerate(shape) if i not in axes)
            assert out.shape == want
            np.testing.assert_array_equal(out, np.zeros(want, dtype))


def test_reduce_sum_unsorted_axes_and_scalar():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    np.testing.assert_array_equal(run(reduce_sum_p, [x], x.dtype, axes=(2, 0)), x.sum(axis=(0, 2)))
    s = np.array(2.5, np.float32)
    out = run(reduce_sum_p, [s], s.dtype, axes=())
    assert out.shape == () and out == 2.5


def test_integer_reduce_sum_wraps():
    x = np.full(1000, 100, np.int8)
    np.testing.assert_array_equal(run(reduce_sum_p, [x], x.dtype, axes=(0,)),
                                  wrap_int(100 * 1000, np.int8))


def test_f32_sum_of_a_million_ones_is_exact():
    x = np.ones(10**6, np.float32)
    out = run(reduce_sum_p, [x], np.dtype(np.float32), axes=(0,))
    assert out.dtype == np.float32 and float(out) == 1e6
    out = run(reduce_sum_p, [x.reshape(1000, 1000)], np.dtype(np.float32), axes=(0, 1))
    assert float(out) == 1e6


def _alternating(n):
    i = np.arange(n)
    return np.where(i % 2 == 0, np.float32(1234.5678), np.float32(0.0012345)).astype(np.float32)


# Naive float32 summation of these 10**6 values is off by ~1e-2 relative; pairwise summation
# (what NumPy does, for any stride of the summed axis) stays within ~log2(n) * eps.
PAIRWISE_INPUTS = {
    "contiguous": lambda: _alternating(10**6),
    "tenths": lambda: np.full(10**6, 0.1, np.float32),
    "strided": lambda: np.repeat(_alternating(10**6), 2)[::2],
    "flipped": lambda: _alternating(10**6)[::-1],
    "strided_tenths": lambda: np.full(2 * 10**6, 0.1, np.float32)[::2],
}


@pytest.mark.parametrize("layout", list(PAIRWISE_INPUTS))
def test_f32_sum_is_pairwise_accurate(layout):
    x = PAIRWISE_INPUTS[layout]()
    truth = x.astype(np.float64).sum()
    bound = 128 * eps(np.float32) * np.abs(x.astype(np.float64)).sum()
    assert abs(float(np.sum(x)) - truth) <= bound  # NumPy itself meets the bound
    out = run(reduce_sum_p, [x], np.dtype(np.float32), axes=(0,))
    assert abs(float(out) - truth) <= bound, (
        f"float32 sum of 1e6 values ({layout}, strides {x.strides}) = {float(out)!r}, "
        f"float64 math {truth!r}, NumPy {float(np.sum(x))!r}: off by {abs(float(out) - truth):.4g}"
        f" > pairwise bound {bound:.4g}")


# Large reductions run in chunks on threads: split along a kept axis (disjoint outputs) or, when
# the output is small, along a reduced axis into private accumulators combined afterwards.
@pytest.mark.parametrize("shape", [(700, 900), (2, 300_000), (300_000, 2), (64, 100, 100)])
def test_large_reduce_sum_chunked(shape):
    # small integer values: every partial sum is an integer below 2**24, exact in float32 too, so
    # any order of summation gives the exact result and a chunking slip shows as a wrong value
    rng = np.random.default_rng(3)
    big = shape[:-1] + (2 * shape[-1],)
    re, im = rng.integers(-8, 9, (2,) + big, dtype=np.int64)
    nd = len(shape)
    for i, dtype in enumerate((np.int64, np.float32, np.complex64)):
        base = (re + 1j * im).astype(dtype) if np.dtype(dtype).kind == "c" else re.astype(dtype)
        dense = np.ascontiguousarray(base[..., :shape[-1]])
        others = [base[..., ::2], dense[::-1], np.asfortranarray(dense)]
        for x in (dense, others[i], others[(i + 1) % 3]):  # each layout with two dtypes
            xr = x.real.astype(np.int64)
            xi = x.imag.astype(np.int64) if x.dtype.kind == "c" else None
            for k in range(nd + 1):
                for axes in itertools.combinations(range(nd), k):
                    out = run(reduce_sum_p, [x], x.dtype, axes=axes)
                    want = np.sum(xr, axis=axes)
                    if xi is not None:
                        want = want + 1j * np.sum(xi, axis=axes)
                    np.testing.assert_array_equal(out, np.asarray(want).astype(dtype),
                                                  err_msg=f"reduce_sum{axes} {x.shape} {dtype}")


# ---------------------------------------------------------------------------------------------
# broadcast_in_dim
# ---------------------------------------------------------------------------------------------

def gather_broadcast(x, shape, dims):
    """Independent model: out[idx] = x[idx[dims[i]] if x.shape[i] > 1 else 0, ...]."""
    if not dims:
        return np.full(shape, x[()], dtype=x.dtype)
    idx = np.indices(shape, dtype=np.intp)
    sel = tuple(idx[d] if x.shape[i] != 1 else np.zeros(shape, np.intp) for i, d in enumerate(dims))
    return x[sel]


@st.composite
def broadcast_case(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    out_shape = draw(shapes())
    r = len(out_shape)
    dims = tuple(sorted(draw(st.sets(st.integers(0, r - 1), max_size=r)))) if r else ()
    op_shape = tuple(draw(st.sampled_from((out_shape[d], 1))) for d in dims)
    x = draw(laid_out(dtype, op_shape))
    return x, out_shape, dims


@given(case=broadcast_case())
def test_broadcast_in_dim(case):
    x, shape, dims = case
    out = run(broadcast_in_dim_p, [x], x.dtype, shape=shape, broadcast_dimensions=dims)
    assert out.shape == shape
    np.testing.assert_array_equal(out, broadcast_in_dim_p.reference(x, shape=shape,
                                                                    broadcast_dimensions=dims))
    np.testing.assert_array_equal(out, gather_broadcast(x, shape, dims))
    if x.size and out.size:
        assert np.shares_memory(out, x), "broadcast_in_dim must be a zero-copy view"
        for d, n in enumerate(shape):
            expanded = d not in dims or x.shape[dims.index(d)] == 1
            if n > 1 and expanded:
                assert out.strides[d] == 0, (out.strides, shape, dims, x.shape)


def test_broadcast_in_dim_expands_and_inserts_zero_copy():
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    out = run(broadcast_in_dim_p, [x], x.dtype, shape=(2, 3, 4), broadcast_dimensions=(1, 2))
    assert out.strides[0] == 0 and out.strides[2] == 0 and out.strides[1] == x.strides[0]
    assert np.shares_memory(out, x)
    np.testing.assert_array_equal(out, np.broadcast_to(x[None], (2, 3, 4)))
    s = np.array(7, np.int16)
    out = run(broadcast_in_dim_p, [s], s.dtype, shape=(2, 3), broadcast_dimensions=())
    assert out.strides == (0, 0) and np.shares_memory(out, s)
    np.testing.assert_array_equal(out, np.full((2, 3), 7, np.int16))
    f = np.arange(6.0)[::-2]  # negative stride survives into the view
    out = run(broadcast_in_dim_p, [f], f.dtype, shape=(3, 4), broadcast_dimensions=(0,))
    assert np.shares_memory(out, f) and out.strides == (f.strides[0], 0)
    np.testing.assert_array_equal(out, np.broadcast_to(f[:, None], (3, 4)))


# ---------------------------------------------------------------------------------------------
# reshape
# ---------------------------------------------------------------------------------------------

def _prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def new_sizes_for(draw, size):
    if size == 0:
        s = list(draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4)))
        s[draw(st.integers(0, len(s) - 1))] = 0
        return tuple(s)
    primes = _prime_factors(size)
    k = draw(st.integers(1 if primes else 0, 4))
    sizes = [1] * k
    for p in primes:
        sizes[draw(st.integers(0, k - 1))] *= p
    return tuple(sizes)


def row_major_values(x):
    """Independent model of reshape: the elements of x in row-major index order."""
    return np.array([x[i] for i in itertools.product(*map(range, x.shape))], dtype=x.dtype)


@st.composite
def reshape_case(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    shape = draw(shapes(max_side=4))
    x = draw(laid_out(dtype, shape))
    dims = draw(st.none() | st.permutations(range(x.ndim)).map(tuple))
    new = draw(new_sizes_for(math.prod(shape)))
    return x, new, dims


@given(case=reshape_case())
def test_reshape(case):
    x, new, dims = case
    out = run(reshape_p, [x], x.dtype, new_sizes=new, dimensions=dims)
    assert out.shape == new
    np.testing.assert_array_equal(out, reshape_p.reference(x, new_sizes=new, dimensions=dims))
    xt = x if dims is None else x.transpose(dims)
    np.testing.assert_array_equal(out, row_major_values(xt).reshape(new))
    try:
        np.reshape(xt, new, copy=False)
        view_possible = True
    except ValueError:
        view_possible = False
    if view_possible and x.size:
        assert np.shares_memory(out, x), (
            f"reshape {x.shape} strides {x.strides} dims {dims} -> {new} copied, but NumPy can "
            "do it without a copy")


def test_reshape_zero_copy_on_contiguous_input():
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    for new in [(24,), (2, 12), (2, 3, 4), (6, 4), (1, 24, 1), (4, 1, 6)]:
        out = run(reshape_p, [x], x.dtype, new_sizes=new)
        assert np.shares_memory(out, x)
        np.testing.assert_array_equal(out, x.reshape(new))


def test_reshape_copies_when_a_view_is_impossible():
    x = np.arange(12.0).reshape(3, 4)
    for src in (x.T, x[::-1], x[:, ::-1], np.asfortranarray(x)):
        out = run(reshape_p, [src], src.dtype, new_sizes=(12,))
        assert not np.shares_memory(out, x)
        np.testing.assert_array_equal(out, src.ravel())
    # all axes flipped is still one (negative) stride: a view
    out = run(reshape_p, [x[::-1, ::-1]], x.dtype, new_sizes=(2, 6))
    assert np.shares_memory(out, x)
    np.testing.assert_array_equal(out, x[::-1, ::-1].reshape(2, 6))
    # dimensions= transposes first
    out = run(reshape_p, [x], x.dtype, new_sizes=(12,), dimensions=(1, 0))
    np.testing.assert_array_equal(out, x.T.ravel())
    out = run(reshape_p, [x], x.dtype, new_sizes=(3, 4), dimensions=(0, 1))
    assert np.shares_memory(out, x)
    np.testing.assert_array_equal(out, x)
    y = np.arange(24).reshape(2, 3, 4)
    out = run(reshape_p, [y], y.dtype, new_sizes=(4, 6), dimensions=(2, 0, 1))
    np.testing.assert_array_equal(out, y.transpose(2, 0, 1).reshape(4, 6))


def test_reshape_scalar_and_zero_size():
    s = np.array(3.5, np.float64)
    out = run(reshape_p, [s], s.dtype, new_sizes=(1, 1))
    assert out.shape == (1, 1) and out[0, 0] == 3.5 and np.shares_memory(out, s)
    one = np.array([[4]], np.uint16)
    out = run(reshape_p, [one], one.dtype, new_sizes=())
    assert out.shape == () and out == 4
    out = run(reshape_p, [one.T], one.dtype, new_sizes=(1,))
    assert out.shape == (1,) and out[0] == 4
    e = np.zeros((0, 3), np.complex64)
    for new in [(3, 0), (0,), (0, 1, 5), (2, 0, 0)]:
        out = run(reshape_p, [e], e.dtype, new_sizes=new)
        assert out.shape == new and out.dtype == np.complex64
    out = run(reshape_p, [e], e.dtype, new_sizes=(3, 0), dimensions=(1, 0))
    assert out.shape == (3, 0)


# ---------------------------------------------------------------------------------------------
# dot_general
# ---------------------------------------------------------------------------------------------

def dot_elements(dtype):
    return elements(dtype, -10.0, 10.0, ilim=5)


@st.composite
def dot_case(draw, dtypes=DOT_DTYPES):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    empty_ok = draw(st.integers(0, 4)) == 0
    size = st.integers(0 if empty_ok else 1, 3)
    nb = draw(st.integers(0, 2))
    nc = draw(st.integers(0, 2))
    nlf = draw(st.integers(0, min(2, 4 - nb - nc)))
    nrf = draw(st.integers(0, min(2, 4 - nb - nc)))
    bs = [draw(size) for _ in range(nb)]
    cs = [draw(size) for _ in range(nc)]

    def place(free):
        roles = ([("b", i, bs[i]) for i in range(nb)] + [("c", i, cs[i]) for i in range(nc)]
                 + [("f", i, draw(size)) for i in range(free)])
        pos = draw(st.permutations(range(len(roles))))
        shape, where = [0] * len(roles), {}
        for (kind, i, n), p in zip(roles, pos):
            shape[p] = n
            where[kind, i] = p
        return tuple(shape), where

    lshape, lw = place(nlf)
    rshape, rw = place(nrf)
    dn = ((tuple(lw["c", i] for i in range(nc)), tuple(rw["c", i] for i in range(nc))),
          (tuple(lw["b", i] for i in range(nb)), tuple(rw["b", i] for i in range(nb))))
    el = dot_elements(dtype)
    lhs = draw(laid_out(dtype, lshape, el))
    rhs = draw(laid_out(dtype, rshape, el))
    return lhs, rhs, dn


def einsum_model(lhs, rhs, dn):
    """Subscripts built from the dimension numbers: batch, then lhs free, then rhs free."""
    (lc, rc), (lb, rb) = dn
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ls = [None] * lhs.ndim
    rs = [None] * rhs.ndim
    for l, r in zip(lb + lc, rb + rc):
        ls[l] = rs[r] = next(letters)
    lf = [d for d in range(lhs.ndim) if ls[d] is None]
    rf = [d for d in range(rhs.ndim) if rs[d] is None]
    for d in lf:
        ls[d] = next(letters)
    for d in rf:
        rs[d] = next(letters)
    out = [ls[d] for d in lb] + [ls[d] for d in lf] + [rs[d] for d in rf]
    spec = f"{''.join(ls)},{''.join(rs)}->{''.join(out)}"
    shape = (tuple(lhs.shape[d] for d in lb) + tuple(lhs.shape[d] for d in lf)
             + tuple(rhs.shape[d] for d in rf))
    return spec, shape


def check_dot(lhs, rhs, dn):
    dtype = lhs.dtype
    spec, shape = einsum_model(lhs, rhs, dn)
    out = run(dot_general_p, [lhs, rhs], dtype, dimension_numbers=dn)
    assert out.shape == shape
    ref = dot_general_p.reference(lhs, rhs, dimension_numbers=dn)
    assert ref.dtype == dtype and ref.shape == shape
    if lhs.size == 0 or rhs.size == 0:
        # an empty operand: the result is all zeros. (Not computed with np.einsum: in NumPy 2.4
        # einsum on clongdouble operands of size 0, e.g. "cba,ba->abc" with shapes (0,3,3) and
        # (3,3), corrupts the heap and aborts the process later.)
        np.testing.assert_array_equal(out, np.zeros(shape, dtype))
        np.testing.assert_array_equal(ref, np.zeros(shape, dtype))
        return
    wl, wr = wide(lhs), wide(rhs)
    if is_int(dtype):
        np.testing.assert_array_equal(out, ref)
        np.testing.assert_array_equal(out, wrap_int(np.einsum(spec, wl, wr), dtype))
        return
    truth = np.einsum(spec, wl, wr)
    k = math.prod(lhs.shape[d] for d in dn[0][0])
    c = 4 if dtype.kind == "c" else 1
    # (k + 2) roundings, each relative or, for subnormal products, absolute
    tol = c * (k + 2) * (eps(dtype) * np.einsum(spec, np.abs(wl), np.abs(wr)) + tiny(dtype))
    assert_within(out, truth, tol, f"dot_general {spec} cpu")
    assert_within(ref, truth, tol, f"dot_general {spec} reference")


@given(case=dot_case())
def test_dot_general_random_dimension_numbers(case):
    check_dot(*case)


@pytest.mark.parametrize("dtype", DOT_DTYPES)
def test_dot_general_fixed_cases(dtype):
    rng = np.random.default_rng(11)

    def rand(*s):
        a = rng.integers(-5, 6, s) if is_int(dtype) else rng.uniform(-1, 1, s)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * rng.uniform(-1, 1, s)
        return np.asarray(a).astype(dtype)

    mm = (((1,), (0,)), ((), ()))
    a, b = rand(5, 7), rand(7, 3)
    check_dot(a, b, mm)                                   # plain matmul
    check_dot(np.asfortranarray(a), np.asfortranarray(b), mm)  # Fortran-order operands
    check_dot(rand(7, 5).T, rand(3, 7).T, mm)             # transposed views
    check_dot(rand(5, 14)[:, ::2], rand(7, 6)[:, 1::2], mm)  # strided
    check_dot(rand(5, 7)[::-1], rand(7, 3)[:, ::-1], mm)  # flipped
    check_dot(np.broadcast_to(rand(1, 7), (5, 7)), np.broadcast_to(rand(7), (3, 7)).T, mm)
    check_dot(rand(4), rand(6), (((), ()), ((), ())))     # outer product (no contraction)
    check_dot(rand(2, 3, 4), rand(2, 4, 5), (((2,), (1,)), ((0,), (0,))))  # batched
    check_dot(rand(4, 3, 2), rand(5, 2, 4), (((0,), (2,)), ((2,), (1,))))  # batch/contract moved
    check_dot(rand(3, 0), rand(0, 4), mm)                 # K = 0: zeros
    check_dot(rand(0, 3), rand(3, 4), mm)                 # M = 0
    check_dot(rand(2, 3), rand(3, 0), mm)                 # N = 0
    check_dot(rand(1, 1), rand(1, 1), mm)
    check_dot(rand(6), rand(6), (((0,), (0,)), ((), ())))  # inner product -> 0-d


@pytest.mark.parametrize("layout", ["c", "fortran", "strided"])
def test_large_float32_matmul_through_blas(layout):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((257, 129)).astype(np.float32)
    b = rng.standard_normal((129, 65)).astype(np.float32)
    if layout == "fortran":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
    elif layout == "strided":
        a = np.repeat(a, 2, axis=1)[:, ::2]
        b = np.repeat(b, 2, axis=0)[::2]
    out = run(dot_general_p, [a, b], np.dtype(np.float32), dimension_numbers=(((1,), (0,)), ((), ())))
    assert out.shape == (257, 65)
    truth = a.astype(np.float64) @ b.astype(np.float64)
    tol = 131 * eps(np.float32) * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    assert_within(out, truth, tol, "sgemm")
    # batched, with the batch dimension last on both sides
    ab = np.stack([a[:, :64], a[:, 64:128]], axis=-1)
    bb = np.stack([b[:64], b[64:128]], axis=-1)
    out = run(dot_general_p, [ab, bb], np.dtype(np.float32),
              dimension_numbers=(((1,), (0,)), ((2,), (2,))))
    truth = np.einsum("mkb,knb->bmn", ab.astype(np.float64), bb.astype(np.float64))
    assert_within(out, truth, 66 * eps(np.float32) * np.einsum(
        "mkb,knb->bmn", np.abs(ab).astype(np.float64), np.abs(bb).astype(np.float64)), "batched")


# ---------------------------------------------------------------------------------------------
# jit == eager, reference backend == cpu backend
# ---------------------------------------------------------------------------------------------

@contextlib.contextmanager
def backend(name):
    old = pullback.config.backend
    pullback.config.update("backend", name)
    try:
        yield
    finally:
        pullback.config.update("backend", old)


@pytest.fixture(autouse=True, scope="module")
def _cpu_backend_after():
    try:
        yield
    finally:
        pullback.config.update("backend", "cpu")


@st.composite
def lax_call(draw, name):
    """(function of Arrays calling pullback.lax, its ndarray arguments)."""
    if name in ("add", "mul"):
        xs = draw(ewise_operands(name, 2))
        return getattr(lax, name), xs
    if name in ("neg", "sin", "exp"):
        return getattr(lax, name), draw(ewise_operands(name, 1))
    if name == "reduce_sum":
        dtype = draw(st.sampled_from(NUMERIC))
        shape = draw(shapes(max_dims=3))
        x = draw(laid_out(dtype, shape, elements(dtype, ilim=2)))
        axes = draw(st.sets(st.integers(-x.ndim, x.ndim - 1), max_size=x.ndim).map(
            lambda s: tuple({a % x.ndim: a for a in s}.values()))) if x.ndim else ()
        return (lambda v: lax.reduce_sum(v, axes)), [x]
    if name == "broadcast_in_dim":
        x, shape, dims = draw(broadcast_case())
        return (lambda v: lax.broadcast_in_dim(v, shape, dims)), [x]
    if name == "reshape":
        x, new, dims = draw(reshape_case())
        return (lambda v: lax.reshape(v, new, dims)), [x]
    if name == "dot_general":
        lhs, rhs, dn = draw(dot_case())
        return (lambda a, b: lax.dot_general(a, b, dn)), [lhs, rhs]
    assert name == "composite"
    dtype = draw(st.sampled_from(INEXACT))
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=4))
    el = elements(dtype, -3.0, 3.0)
    x = draw(laid_out(dtype, shape, el))
    y = draw(laid_out(dtype, shape[::-1], el))

    def f(a, b):
        s = lax.mul(lax.sin(a), lax.exp(lax.neg(lax.reshape(b, a.shape, (1, 0)))))
        t = lax.add(s, lax.broadcast_in_dim(lax.reduce_sum(a, (1,)), a.shape, (0,)))
        return lax.dot_general(t, b, (((1,), (0,)), ((), ())))

    return f, [x, y]


def assert_backends_close(cpu, ref):
    cpu, ref = np.asarray(cpu), np.asarray(ref)
    assert cpu.dtype == ref.dtype and cpu.shape == ref.shape
    if is_int(cpu.dtype):
        np.testing.assert_array_equal(cpu, ref)
    elif cpu.size:
        scale = float(np.max(np.abs(ref.astype(WIDE[ref.dtype])))) + 1.0
        assert_within(cpu, ref.astype(WIDE[ref.dtype]), 1000 * eps(cpu.dtype) * scale, "cpu vs ref")


@pytest.mark.parametrize("name", ["add", "mul", "neg", "sin", "exp", "reduce_sum",
                                  "broadcast_in_dim", "reshape", "dot_general", "composite"])
@settings(max_examples=30)
@given(data=st.data())
def test_jit_and_reference_backend_agree_with_eager(name, data):
    fn, xs = data.draw(lax_call(name))
    args = [Array(x) for x in xs]
    eager = fn(*args)
    jitted = pullback.jit(fn)
    # bitwise equal to eager: with IEEE subnormals, as eager (jit flushes them by default)
    pullback.config.update("jit_flush_denormals", False)
    try:
        compiled = jitted(*args)
    finally:
        pullback.config.update("jit_flush_denormals", True)
    assert isinstance(compiled, Array)
    assert compiled.dtype == eager.dtype and compiled.shape == eager.shape
    np.testing.assert_array_equal(np.asarray(compiled), np.asarray(eager))
    assert jitted(*args).shape == eager.shape  # the cached program runs again
    with backend("reference"):
        ref_eager = fn(*args)
        ref_jit = jitted(*args)
    assert pullback.config.backend == "cpu"
    np.testing.assert_array_equal(np.asarray(ref_jit), np.asarray(ref_eager))
    assert_backends_close(eager, ref_eager)


def test_reference_backend_is_restored_after_an_error():
    with pytest.raises(TypeError):
        with backend("reference"):
            lax.sin(Array(np.arange(3, dtype=np.int32)))
    assert pullback.config.backend == "cpu"


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------

def f32(*shape):
    return Array(np.ones(shape, np.float32))


def arr(dtype, *shape):
    return Array(np.ones(shape, dtype))


MM = (((1,), (0,)), ((), ()))
ERROR_CASES = {
    "add shape": (lambda: lax.add(f32(2, 3), f32(3, 2)), ("add", "'y'")),
    "add shape (bind)": (lambda: add_p.bind(f32(2, 3), f32(2, 4)), ("add", "'y'")),
    "add shape first": (lambda: add_p.bind(f32(2), f32(2, 3)), ("add", "'x'")),
    "add dtype": (lambda: add_p.bind(f32(2), arr(np.int32, 2)), ("add", "'y'", "dtype")),
    "add bool": (lambda: add_p.bind(arr(bool, 2), arr(bool, 2)), ("add", "'x'")),
    "add under jit": (lambda: pullback.jit(lax.add)(f32(2, 3), f32(3, 2)), ("add", "'y'")),
    "mul shape": (lambda: lax.mul(f32(4), f32(5)), ("mul", "'y'")),
    "mul dtype": (lambda: mul_p.bind(arr(np.int8, 3), arr(np.uint8, 3)), ("mul", "'y'")),
    "neg bool": (lambda: lax.neg(arr(bool, 3)), ("neg", "'x'")),
    "sin int32": (lambda: lax.sin(arr(np.int32, 3)), ("sin", "'x'")),
    "sin int32 (bind)": (lambda: sin_p.bind(arr(np.int32, 3)), ("sin", "'x'")),
    "exp uint8": (lambda: exp_p.bind(arr(np.uint8, 2, 2)), ("exp", "'x'")),
    "exp bool under jit": (lambda: pullback.jit(lax.exp)(arr(bool, 2)), ("exp", "'x'")),
    "reduce_sum axis out of range": (lambda: lax.reduce_sum(f32(2, 3), (2,)), ("reduce_sum", "'axes'")),
    "reduce_sum axis out of range (bind)": (lambda: reduce_sum_p.bind(f32(2, 3), axes=(5,)),
                                            ("reduce_sum", "'axes'")),
    "reduce_sum negative axis (bind)": (lambda: reduce_sum_p.bind(f32(2, 3), axes=(-1,)),
                                        ("reduce_sum", "'axes'")),
    "reduce_sum repeated axis": (lambda: lax.reduce_sum(f32(2, 3), (1, -1)), ("reduce_sum", "'axes'")),
    "reduce_sum repeated axis (bind)": (lambda: reduce_sum_p.bind(f32(2, 3), axes=(0, 0)),
                                        ("reduce_sum", "'axes'")),
    "reduce_sum axes list (bind)": (lambda: reduce_sum_p.bind(f32(2, 3), axes=[0]),
                                    ("reduce_sum", "'axes'")),
    "reduce_sum scalar axis": (lambda: lax.reduce_sum(f32(), (0,)), ("reduce_sum", "'axes'")),
    "reduce_sum bool": (lambda: lax.reduce_sum(arr(bool, 3), (0,)),
                        ("reduce_sum", ("'operand'", "'x'"))),
    "reshape impossible": (lambda: lax.reshape(f32(2, 3), (4,)), ("reshape", "'new_sizes'")),
    "reshape impossible (bind)": (lambda: reshape_p.bind(f32(2, 3), new_sizes=(7,), dimensions=None),
                                  ("reshape", "'new_sizes'")),
    "reshape negative size": (lambda: lax.reshape(f32(2, 3), (-1, 6)), ("reshape", "'new_sizes'")),
    "reshape not a permutation": (lambda: lax.reshape(f32(2, 3), (6,), (0, 0)),
                                  ("reshape", "'dimensions'")),
    "reshape short permutation": (lambda: lax.reshape(f32(2, 3), (6,), (0,)),
                                  ("reshape", "'dimensions'")),
    "broadcast_in_dim wrong count": (lambda: lax.broadcast_in_dim(f32(3), (2, 3), ()),
                                     ("broadcast_in_dim", "'broadcast_dimensions'")),
    "broadcast_in_dim decreasing": (lambda: lax.broadcast_in_dim(f32(3, 3), (3, 3), (1, 0)),
                                    ("broadcast_in_dim", "'broadcast_dimensions'")),
    "broadcast_in_dim out of range": (lambda: lax.broadcast_in_dim(f32(3), (3,), (1,)),
                                      ("broadcast_in_dim", "'broadcast_dimensions'")),
    "broadcast_in_dim size mismatch": (lambda: lax.broadcast_in_dim(f32(3), (4,), (0,)),
                                       ("broadcast_in_dim", "'shape'")),
    "broadcast_in_dim negative shape": (lambda: lax.broadcast_in_dim(f32(1), (-2,), (0,)),
                                        ("broadcast_in_dim", "'shape'")),
    "dot_general contracting sizes": (lambda: lax.dot_general(f32(2, 3), f32(4, 5), MM),
                                      ("dot_general", "contracting")),
    "dot_general batch sizes": (lambda: lax.dot_general(f32(2, 3, 4), f32(5, 4, 6),
                                                        (((2,), (1,)), ((0,), (0,)))),
                                ("dot_general", "batch")),
    "dot_general dtypes": (lambda: lax.dot_general(f32(2, 3), arr(bool, 3, 2), MM),
                           ("dot_general",)),
    "dot_general axis out of range": (lambda: lax.dot_general(f32(2, 3), f32(3, 2),
                                                              (((2,), (0,)), ((), ()))),
                                      ("dot_general", "lhs")),
    "dot_general repeated axis": (lambda: lax.dot_general(f32(3, 3), f32(3, 3),
                                                          (((0,), (0,)), ((0,), (1,)))),
                                  ("dot_general", "lhs")),
    "dot_general unequal counts": (lambda: lax.dot_general(f32(2, 3), f32(3, 2),
                                                           (((1,), ()), ((), ()))),
                                   ("dot_general",)),
    "dot_general bad structure": (lambda: dot_general_p.bind(f32(2, 3), f32(3, 2),
                                                             dimension_numbers=(1, 2)),
                                  ("dot_general", "'dimension_numbers'")),
    "dot_general bool": (lambda: lax.dot_general(arr(bool, 2, 3), arr(bool, 3, 2), MM),
                         ("dot_general", "'lhs'")),
    # an integer result narrower than the operands is refused (JAX's rule)
    "dot_general preferred type": (lambda: lax.dot_general(arr(np.int32, 2, 3),
                                                           arr(np.int32, 3, 2), MM,
                                                           preferred_element_type=np.int8),
                                   ("dot_general", "preferred_element_type")),
    "dot_general under jit": (lambda: pullback.jit(lambda a, b: lax.dot_general(a, b, MM))(
        f32(2, 3), f32(4, 5)), ("dot_general", "contracting")),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_bad_input_raises_a_named_error(case):
    fn, needles = ERROR_CASES[case]
    with pytest.raises((TypeError, ValueError)) as info:
        fn()
    msg = str(info.value)
    for n in needles:  # a needle, or a tuple of acceptable alternatives (the lax/primitive name)
        alternatives = n if isinstance(n, tuple) else (n,)
        assert any(a in msg for a in alternatives), f"{case}: {n!r} not in message {msg!r}"
    assert pullback.config.backend == "cpu"


def _cpu(prim, *xs, **params):
    """The primitive's CPU rule on raw ndarrays: no abstract evaluation in front of the kernel."""
    return lambda: prim.cpu(kernels, *xs, **params)


# The kernels must check their operands themselves (a bad call raises, it never reads or writes
# out of bounds), since a rule may be reached without the abstract evaluation in front of it.
KERNEL_MISUSE = {
    "add shapes": _cpu(add_p, np.ones(3), np.ones(4)),
    "mul ranks": _cpu(mul_p, np.ones((2, 3)), np.ones(3)),
    "add dtypes": _cpu(add_p, np.ones(3), np.ones(3, np.float32)),
    "sin int": _cpu(sin_p, np.ones(3, np.int32)),
    "neg bool": _cpu(neg_p, np.ones(3, bool)),
    "neg byteswapped": _cpu(neg_p, np.ones(3, ">f8")),
    "neg object": _cpu(neg_p, np.array([1, 2], dtype=object)),
    "add arity": lambda: kernels.ewise(kernels.EWISE_OPS["add"], np.ones(3)),
    "ewise code": lambda: kernels.ewise(10**6, np.ones(3)),
    "ewise not an array": lambda: kernels.ewise(kernels.EWISE_OPS["neg"], [1.0, 2.0]),
    "reduce_sum axis": _cpu(reduce_sum_p, np.ones(3), axes=(1,)),
    "reduce_sum negative axis": _cpu(reduce_sum_p, np.ones(3), axes=(-1,)),
    "reduce_sum repeated": _cpu(reduce_sum_p, np.ones((2, 2)), axes=(0, 0)),
    "reduce_sum axes type": _cpu(reduce_sum_p, np.ones(3), axes=[0]),
    "reduce_sum bool": _cpu(reduce_sum_p, np.ones(3, bool), axes=(0,)),
    "dot sizes": _cpu(dot_general_p, np.ones((2, 3)), np.ones((4, 5)), dimension_numbers=MM),
    "dot bool": _cpu(dot_general_p, np.ones((2, 3), bool), np.ones((3, 2), bool),
                     dimension_numbers=MM),
    "matmul rank": lambda: kernels.matmul(np.ones((2, 3)), np.ones((3, 2))),
    "matmul batch": lambda: kernels.matmul(np.ones((2, 2, 3)), np.ones((1, 3, 2))),
    "view outside": lambda: kernels.view(np.ones(4), (5,), (8,), 0),
    "view offset": lambda: kernels.view(np.ones(4), (4,), (8,), 8),
    "view negative": lambda: kernels.view(np.ones(4), (2,), (-8,), 0),
    "view lengths": lambda: kernels.view(np.ones(4), (2,), (8, 8), 0),
    "copy object": lambda: kernels.copy(np.array([object()] * 3)),
}


@pytest.mark.parametrize("case", list(KERNEL_MISUSE))
def test_kernels_reject_misuse_without_crashing(case):
    with pytest.raises((TypeError, ValueError)):
        KERNEL_MISUSE[case]()


def test_dot_general_mixed_dtypes_take_the_wider_type():
    # as in JAX, operands of different dtypes are accepted; the result has the wider one
    out = dot_general_p.bind(Array(np.ones((2, 3))), Array(np.ones((3, 2), np.float32)),
                             dimension_numbers=MM, precision=None, preferred_element_type=None)
    assert out.dtype == np.float64 and np.asarray(out).tolist() == [[3.0, 3.0], [3.0, 3.0]]
