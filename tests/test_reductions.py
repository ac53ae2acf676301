"""Reductions, arg-reductions and cumulative ops: values against each primitive's NumPy reference
and an independent NumPy computation, over dtypes, shapes of rank 0-4 (with 0-size dimensions),
memory layouts, and the edge semantics (identities, NaN, ties, overflow, accuracy, threads)."""
import functools
import itertools
import os
import struct
import subprocess
import sys
import textwrap

import ml_dtypes

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pullback as pb
from pullback.test_util import LAYOUTS
from pullback.test_util import layout as with_layout
from pullback import lax
from pullback.backends.cpu import kernels as K

# NumPy warns about IEEE results (inf - inf, log(0)) while computing the oracles
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
BOOL = [np.dtype(bool)]
INTS = [np.dtype(t) for t in ("int8", "int16", "int32", "int64",
                              "uint8", "uint16", "uint32", "uint64")]
FLOATS = [F16, BF16, F32, F64]
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
HALVES = (F16, BF16)

# ---- data and layouts ----


def make(rng: np.random.Generator, shape, dtype, specials: bool = True, kind: str = "") -> np.ndarray:
    """Random values with many ties; floats may hold NaN (both signs), +-inf and -0.0."""
    dtype = np.dtype(dtype)
    if dtype == bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -20
        return np.asarray(rng.integers(lo, lo + 41, size=shape)).astype(dtype)
    if kind == "prod":  # magnitudes near 1, so long products stay finite
        v = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1, 1], size=shape)
    else:
        v = np.round(rng.normal(size=shape) * 4, 1)
    if dtype.kind == "c":
        v = v + 1j * np.round(rng.normal(size=shape) * 4, 1)
    elif specials and v.size:
        pick = rng.random(shape)
        v = np.where(pick < 0.04, np.nan, v)
        v = np.where((pick >= 0.04) & (pick < 0.06), -np.nan, v)
        v = np.where((pick >= 0.06) & (pick < 0.09), rng.choice([np.inf, -np.inf], size=shape), v)
        v = np.where((pick >= 0.09) & (pick < 0.12), -0.0, v)
    return np.asarray(v).astype(dtype)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


def axes_of(ndim):
    return st.lists(st.sampled_from(range(ndim)), unique=True).map(tuple) if ndim else st.just(())


# ---- independent NumPy computations ----


def wide(x: np.ndarray) -> np.ndarray:
    """A copy in the widest type of its kind, for arithmetic that cannot lose precision."""
    k = x.dtype.kind
    if x.dtype in HALVES:
        return x.astype(F64)
    return x.astype({"b": bool, "i": np.int64, "u": np.uint64, "f": F64, "c": np.complex128}[k])


def merged(x: np.ndarray, axes) -> np.ndarray:
    """x with ``axes`` moved last and flattened into one axis."""
    keep = [d for d in range(x.ndim) if d not in axes]
    y = np.transpose(x, keep + list(axes))
    return y.reshape(y.shape[:len(keep)] + (int(np.prod([x.shape[a] for a in axes])),))


def identity(name: str, dtype: np.dtype):
    if name in ("reduce_sum", "reduce_or", "reduce_xor"):
        return 0
    if name == "reduce_prod":
        return 1
    if name == "reduce_and":
        return True if dtype == bool else -1 if dtype.kind == "i" else np.iinfo(dtype).max
    big = name == "reduce_min"
    if dtype == bool:
        return big
    if dtype.kind in "iu":
        return np.iinfo(dtype).max if big else np.iinfo(dtype).min
    return np.inf if big else -np.inf


def independent_reduce(name: str, x: np.ndarray, axes) -> np.ndarray:
    m = merged(x, axes)
    if m.shape[-1] == 0:
        return np.full(m.shape[:-1], identity(name, x.dtype)).astype(x.dtype)
    if name in ("reduce_sum", "reduce_prod"):
        f = np.add if name == "reduce_sum" else np.multiply
        return f.reduce(wide(m), axis=-1).astype(x.dtype) if x.dtype.kind in "iu" else \
            f.reduce(wide(m), axis=-1)
    if name in ("reduce_max", "reduce_min"):
        s = np.sort(wide(m), axis=-1)  # NaN sorts last: max is NaN when any element is
        if name == "reduce_max" or x.dtype.kind not in "fV":
            return (s[..., -1] if name == "reduce_max" else s[..., 0]).astype(x.dtype)
        return np.where(np.isnan(s[..., -1]), np.nan, s[..., 0]).astype(x.dtype)
    op = {"reduce_and": np.bitwise_and, "reduce_or": np.bitwise_or,
          "reduce_xor": np.bitwise_xor}[name]
    cols = [m[..., i] for i in range(m.shape[-1])]
    return np.asarray(functools.reduce(op, cols)).astype(x.dtype)


def tolerance(dtype: np.dtype, name: str = "") -> float:
    if dtype in HALVES:
        return 1e-2 if dtype == BF16 else 2e-3
    if dtype in (F32, np.complex64):
        return 1e-4 if "prod" in name else 2e-5
    return 1e-11


def check(out: np.ndarray, expected: np.ndarray, dtype: np.dtype, name: str, scale=None):
    """Exact for integer/bool results; otherwise close, NaN matching NaN. ``scale`` bounds the
    absolute error of sums (cancellation makes a relative bound meaningless)."""
    out, expected = np.asarray(out), np.asarray(expected)
    assert out.shape == expected.shape, (out.shape, expected.shape)
    if out.dtype.kind in "biu":
        np.testing.assert_array_equal(out, expected)
        return
    rtol = tolerance(dtype, name)
    atol = 0 if scale is None else rtol * float(np.max(scale, initial=0))
    np.testing.assert_allclose(wide(out), wide(np.asarray(expected).astype(out.dtype)),
                               rtol=rtol, atol=atol, equal_nan=True)


def abs_scale(x: np.ndarray, axis=None) -> np.ndarray:
    a = np.abs(wide(x))
    return np.where(np.isfinite(a), a, 0).sum(axis=axis) + 1


# ---- reductions over axes ----

REDUCE = {
    "reduce_sum": (lax.reduce_sum, INTS + FLOATS + COMPLEX),
    "reduce_prod": (lax.reduce_prod, INTS + FLOATS + COMPLEX),
    "reduce_max": (lax.reduce_max, BOOL + INTS + FLOATS),
    "reduce_min": (lax.reduce_min, BOOL + INTS + FLOATS),
    "reduce_and": (lax.reduce_and, BOOL + INTS),
    "reduce_or": (lax.reduce_or, BOOL + INTS),
    "reduce_xor": (lax.reduce_xor, BOOL + INTS),
}


def check_reduce(name: str, x: np.ndarray, axes) -> None:
    fn, _ = REDUCE[name]
    out = np.asarray(fn(pb.Array(x), axes))
    assert out.dtype == x.dtype
    prim = pb.primitives.registry[name]
    sorted_axes = tuple(sorted(a % x.ndim for a in axes)) if x.ndim else ()
    ref = prim.reference(np.array(x, order="C"), axes=sorted_axes)
    scale = abs_scale(x, sorted_axes) if name == "reduce_sum" else None
    check(out, ref, x.dtype, name, scale)
    check(out, independent_reduce(name, x, sorted_axes), x.dtype, name, scale)


@pytest.mark.parametrize("name", REDUCE)
@settings(max_examples=40)
@given(data=st.data())
def test_reduce_matches_reference_and_numpy(name, data):
    dtype = data.draw(st.sampled_from(REDUCE[name][1]), "dtype")
    shape = data.draw(shapes, "shape")
    axes = data.draw(axes_of(len(shape)), "axes")
    layout = data.draw(st.sampled_from(LAYOUTS), "layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    x = with_layout(make(rng, shape, dtype, kind="prod" if "prod" in name else ""), layout)
    check_reduce(name, x, axes)


@pytest.mark.parametrize("name", REDUCE)
def test_every_subset_of_axes_up_to_rank_3(name):
    rng = np.random.default_rng(1)
    for dtype in REDUCE[name][1][::3]:  # a spread of the op's dtypes
        for shape in [(), (3,), (3, 4), (2, 3, 5)]:
            x = make(rng, shape, dtype, kind="prod" if "prod" in name else "")
            for r in range(len(shape) + 1):
                for axes in itertools.combinations(range(len(shape)), r):
                    for layout in ("contiguous", "flipped", "transposed"):
                        check_reduce(name, with_layout(x, layout), axes)
            if shape:  # negative axes count from the end
                check_reduce(name, x, (-1,))


@pytest.mark.parametrize("name", REDUCE)
def test_empty_reductions_give_the_identity(name):
    for dtype in REDUCE[name][1]:
        x = np.zeros((2, 0, 3), dtype)
        out = np.asarray(REDUCE[name][0](pb.Array(x), (1,)))
        want = np.full((2, 3), identity(name, np.dtype(dtype))).astype(dtype)
        np.testing.assert_array_equal(out, want)
        assert out.dtype == dtype
        assert np.asarray(REDUCE[name][0](pb.Array(x), (0, 1, 2))).shape == ()


def test_max_min_propagate_nan_and_empty_extremes():
    x = pb.Array(np.array([[1.0, np.nan, 3.0], [2.0, -np.inf, 0.5]], np.float32))
    np.testing.assert_array_equal(np.asarray(lax.reduce_max(x, (1,))), [np.nan, 2.0])
    np.testing.assert_array_equal(np.asarray(lax.reduce_min(x, (1,))), [np.nan, -np.inf])
    np.testing.assert_array_equal(np.asarray(lax.reduce_max(x, (0,))), [2.0, np.nan, 3.0])
    for dtype in HALVES:
        h = pb.Array(np.array([1, np.nan, -5], dtype))
        assert np.isnan(np.asarray(lax.reduce_min(h, (0,)), F32))
    big = np.arange(300000, dtype=np.float32)
    big[123457] = np.nan  # in one chunk of the parallel split only
    assert np.isnan(np.asarray(lax.reduce_max(pb.Array(big), (0,))))
    assert np.asarray(lax.reduce_max(pb.Array(np.int8([-128, -128])), (0,))) == -128


def test_integer_sums_and_products_wrap():
    cases = [
        (lax.reduce_sum, np.int8([100, 100, 100]), 44),
        (lax.reduce_sum, np.uint8([200, 100]), 44),
        (lax.reduce_sum, np.int64([2**62, 2**62, 2**62]), -(2**62)),
        (lax.reduce_sum, np.uint64([2**63, 2**63, 5]), 5),
        (lax.reduce_prod, np.int8([100, 3, 7]), 52),
        (lax.reduce_prod, np.int32([65536, 65536, 3]), 0),
        (lax.reduce_prod, np.uint16([65535, 65535]), 1),
        (lax.reduce_prod, np.int64([2**32 + 1, 2**32 + 1]), 2**33 + 1),
    ]
    for fn, x, want in cases:
        out = np.asarray(fn(pb.Array(x), (0,)))
        assert out.dtype == x.dtype and int(out) == want, (fn, x, out)
    # wrapping in every lane of the vectorized and the chunked paths
    x = np.full(1 << 18, 3, np.int8)
    assert int(np.asarray(lax.reduce_sum(pb.Array(x), (0,)))) == np.int8((3 << 18) % 256)


def test_float32_sums_are_pairwise():
    n = 1 << 20
    x = np.full(n, 0.1, np.float32)
    exact = n * float(np.float32(0.1))
    naive = np.float32(0)
    for v in x[:1 << 16]:  # a sequential float32 sum drifts by ~1e-3 relative already here
        naive += v
    assert abs(float(naive) - (1 << 16) * float(np.float32(0.1))) > 1e-4 * (1 << 16) * 0.1
    for view in (x, x.reshape(1024, 1024).T, np.broadcast_to(np.float32(0.1), (n,))):
        out = float(np.asarray(lax.reduce_sum(pb.Array(view), tuple(range(view.ndim)))))
        assert abs(out - exact) < 1e-6 * exact, out
    big = np.zeros(2 * n, np.float32)
    big[::2] = x
    out = float(np.asarray(lax.reduce_sum(pb.Array(big[::2]), (0,))))
    assert abs(out - exact) < 1e-6 * exact


def ulps(got, want):
    """|got - want| in units of the last place of want rounded to got's dtype, at worst."""
    got = np.asarray(got)
    dt = F32 if got.dtype == np.complex64 else got.dtype
    sp = np.spacing(np.abs(want).astype(dt)).astype(F64)
    return float(np.max(np.abs(got.astype(np.complex128 if got.dtype.kind == "c" else F64)
                                - want) / sp))


@pytest.mark.parametrize("shape, axes", [((10000, 1000), (0,)), ((100, 100, 1000), (0, 2)),
                                         ((1000, 10000), (1,)), ((10**7,), (0,))], ids=str)
def test_rows_of_a_float_sum_meet_pairwise(shape, axes):
    # 10^7 float32 values summed along any axes against a float64 sum: within 3 ulps of the
    # result (JAX 0.10: 1.9, 1.3, 1.2, 0.1; one running sum of 10^4 rows was 54 ulps off)
    x = np.random.default_rng(7).random(shape, dtype=np.float32)
    want = x.astype(F64).sum(axes)
    f = pb.jit(lambda v: lax.reduce_sum(v, axes))
    for v in (x, np.asarray(x.T).T if x.ndim > 1 else x):
        assert ulps(lax.reduce_sum(pb.Array(v), axes), want) <= 3
    assert ulps(f(pb.Array(x)), want) <= 3
    xt = x.reshape(x.shape[::-1]).T  # the reduced axes now strided
    assert ulps(lax.reduce_sum(pb.Array(xt), axes), xt.astype(F64).sum(axes)) <= 3


def test_rows_of_half_and_complex_sums_meet_pairwise():
    rng = np.random.default_rng(8)
    h = rng.random((4000, 100), dtype=np.float32).astype(F16)
    assert ulps(lax.reduce_sum(pb.Array(h), (0,)), h.astype(F64).sum(0)) <= 1  # rounded once
    c = (rng.random((10000, 100)) + 1j * rng.random((10000, 100))).astype(np.complex64)
    got = np.asarray(lax.reduce_sum(pb.Array(c), (0,)))
    want = c.astype(np.complex128).sum(0)
    for part in (np.real, np.imag):
        assert ulps(part(got), part(want)) <= 3


def test_float_cumsum_is_blocked_pairwise():
    # every running sum of 10^6 uniform float32 values against float64: within 4 ulps (JAX
    # 0.10's associative scan: 3.55; one running float32 sum: ~1000); float16 within 2.2 (JAX
    # 2.12), complex parts alike
    rng = np.random.default_rng(7)
    x = rng.random(10**6, dtype=np.float32)
    want = np.cumsum(x.astype(F64))
    assert ulps(lax.cumsum(pb.Array(x)), want) <= 4
    assert ulps(pb.jit(lax.cumsum)(pb.Array(x)), want) <= 4
    r = lax.cumsum(pb.Array(x), reverse=True)
    assert ulps(r, np.cumsum(x[::-1].astype(F64))[::-1]) <= 4
    h = rng.random(5000).astype(F16)
    assert ulps(lax.cumsum(pb.Array(h)), np.cumsum(h.astype(F64))) <= 2.2
    c = (x[:10**5] + 1j * x[10**5:2 * 10**5]).astype(np.complex64)
    got, want = np.asarray(lax.cumsum(pb.Array(c))), np.cumsum(c.astype(np.complex128))
    for part in (np.real, np.imag):
        assert ulps(part(got), part(want)) <= 4


def test_halves_accumulate_in_float32():
    for dtype, tol in ((F16, 0.25), (BF16, 2.0)):
        x = np.full(3000, 0.1, dtype)
        exact = 3000 * float(x[0].astype(F32))  # a float16 accumulator stalls far below this
        out = np.asarray(lax.reduce_sum(pb.Array(x), (0,)))
        assert out.dtype == dtype and abs(float(out.astype(F32)) - exact) <= tol
        c = np.asarray(lax.cumsum(pb.Array(x)))
        assert abs(float(c[-1].astype(F32)) - exact) <= tol
        ref = np.cumsum(x.astype(F32)).astype(dtype)  # rounded once per element
        np.testing.assert_array_equal(c.astype(F32), ref.astype(F32))


def test_large_reductions_on_every_split_path():
    rng = np.random.default_rng(3)
    cases = [((1 << 20,), (0,)), ((4, 300000), (0,)), ((300000, 4), (0,)),
             ((300000, 4), (1,)), ((64, 64, 128), (0, 2)), ((3, 3, 200000), (2,))]
    for shape, axes in cases:
        x = rng.normal(size=shape).astype(np.float32)
        for layout in ("contiguous", "transposed"):
            v = with_layout(x, layout)
            out = np.asarray(lax.reduce_sum(pb.Array(v), axes))
            np.testing.assert_allclose(out, np.sum(v.astype(F64), axis=axes), rtol=1e-5,
                                       atol=1e-5 * abs_scale(v, axes).max())
            np.testing.assert_array_equal(np.asarray(lax.reduce_max(pb.Array(v), axes)),
                                          np.max(v, axis=axes))


def test_results_do_not_depend_on_the_thread_count(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, pullback as pb
        from pullback import lax
        rng = np.random.default_rng(7)
        x = rng.normal(size=1 << 21).astype(np.float32)
        x[[5, 1 << 20, 2000000]] = x.max() + 1  # ties for argmax across chunks
        m = rng.normal(size=(1 << 16, 8)).astype(np.float32)
        outs = [lax.reduce_sum(pb.Array(x), (0,)), lax.reduce_sum(pb.Array(m), (0,)),
                lax.argmax(pb.Array(x), 0, np.int32), lax.reduce_prod(pb.Array(x[:300000] * 0 + 1.0001), (0,)),
                lax.cumsum(pb.Array(m), 1)]
        print(b"".join(np.asarray(o).tobytes() for o in outs).hex())
    """)
    runs = []
    for threads in ("1", "2", "3"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        # run from an empty directory: the installed package, never the source tree
        runs.append(subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                   capture_output=True, text=True, cwd=tmp_path).stdout)
    assert runs[0] == runs[1] == runs[2] and len(runs[0]) > 100


# ---- argmax / argmin ----

ARG = {"argmax": lax.argmax, "argmin": lax.argmin}


def independent_arg(name: str, x: np.ndarray, axis: int) -> np.ndarray:
    """First index of the extreme, NaN counting as the extreme: from sorting, not comparing."""
    w = wide(x)
    s = np.sort(w, axis=axis)
    has_nan = np.take(np.isnan(s), [-1], axis=axis) if w.dtype.kind == "f" else False
    ext = np.take(s, [-1 if name == "argmax" else 0], axis=axis)
    hit = np.where(has_nan, np.isnan(w), w == ext) if w.dtype.kind == "f" else w == ext
    return np.argmax(hit, axis=axis)


@pytest.mark.parametrize("name", ARG)
@settings(max_examples=60)
@given(data=st.data())
def test_arg_reductions_match_reference_and_numpy(name, data):
    dtype = data.draw(st.sampled_from(BOOL + INTS + FLOATS), "dtype")
    shape = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple), "shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), "axis")
    if shape[axis] == 0:
        shape = shape[:axis % len(shape)] + (3,) + shape[axis % len(shape) + 1:]
    layout = data.draw(st.sampled_from(LAYOUTS), "layout")
    index_dtype = data.draw(st.sampled_from(INTS), "index_dtype")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    x = with_layout(make(rng, shape, dtype), layout)
    out = np.asarray(ARG[name](pb.Array(x), axis, index_dtype))
    assert out.dtype == index_dtype
    ax = axis % x.ndim
    ref = pb.primitives.registry[name].reference(np.array(x, order="C"), axes=(ax,),
                                                 index_dtype=index_dtype)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(out, independent_arg(name, x, ax))


def test_arg_reductions_pick_the_first_extreme_and_the_first_nan():
    x = np.array([1.0, 5.0, np.nan, 5.0, -np.nan, -2.0, -2.0], np.float32)
    assert int(np.asarray(lax.argmax(pb.Array(x), 0, np.int32))) == 2
    assert int(np.asarray(lax.argmin(pb.Array(x), 0, np.int32))) == 2
    y = x[~np.isnan(x)]
    assert int(np.asarray(lax.argmax(pb.Array(y), 0, np.int32))) == 1
    assert int(np.asarray(lax.argmin(pb.Array(y), 0, np.int32))) == 3
    for dtype in FLOATS:
        z = np.array([-np.inf, -np.inf], dtype)
        assert int(np.asarray(lax.argmax(pb.Array(z), 0, np.int32))) == 0
    assert int(np.asarray(lax.argmin(pb.Array(np.int8([-128, 0, -128])), 0, np.uint8))) == 0
    assert int(np.asarray(lax.argmax(pb.Array(np.array([False, True, True])), 0, np.int8))) == 1
    assert np.asarray(lax.argmin(pb.Array(np.ones((2, 3))), 1)).dtype == np.int32  # the default
    # ties and NaNs across the chunks of the parallel path
    big = np.zeros(1 << 20, np.float32)
    big[[700000, 300000, 900000]] = 7.0
    assert int(np.asarray(lax.argmax(pb.Array(big), 0, np.int32))) == 300000
    assert int(np.asarray(lax.argmax(pb.Array(big[::-1]), 0, np.int32))) == (1 << 20) - 900001
    big[[800000, 600000]] = np.nan
    assert int(np.asarray(lax.argmin(pb.Array(big), 0, np.int64))) == 600000
    rows = np.zeros((1 << 18, 4), np.float32)
    rows[[9, 200000], 2] = 3.0
    np.testing.assert_array_equal(np.asarray(lax.argmax(pb.Array(rows), 0, np.int32)),
                                  [0, 0, 9, 0])


# ---- cumulative ops ----

CUM = {
    "cumsum": (lax.cumsum, INTS + FLOATS + COMPLEX),
    "cumprod": (lax.cumprod, INTS + FLOATS + COMPLEX),
    "cummax": (lax.cummax, INTS + FLOATS),
    "cummin": (lax.cummin, INTS + FLOATS),
    "cumlogsumexp": (lax.cumlogsumexp, FLOATS),
}


def independent_cumulative(name: str, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """Each output position computed from scratch over its prefix (or suffix)."""
    w = np.flip(x, axis) if reverse else x
    parts = []
    for i in range(w.shape[axis]):
        prefix = np.take(w, range(i + 1), axis=axis)
        if name in ("cummax", "cummin"):
            red = independent_reduce("reduce_max" if name == "cummax" else "reduce_min",
                                     prefix, (axis,))
        elif name == "cumlogsumexp":
            red = np.log(np.sum(np.exp(wide(prefix)), axis=axis))
        else:
            red = independent_reduce("reduce_sum" if name == "cumsum" else "reduce_prod",
                                     prefix, (axis,))
        parts.append(np.expand_dims(np.asarray(red), axis))
    out = np.concatenate(parts, axis) if parts else wide(w)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("name", CUM)
@settings(max_examples=40)
@given(data=st.data())
def test_cumulative_ops_match_reference_and_numpy(name, data):
    dtype = data.draw(st.sampled_from(CUM[name][1]), "dtype")
    shape = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple), "shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), "axis")
    reverse = data.draw(st.booleans(), "reverse")
    layout = data.draw(st.sampled_from(LAYOUTS), "layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    x = with_layout(make(rng, shape, dtype, kind="prod" if "prod" in name else ""), layout)
    out = np.asarray(CUM[name][0](pb.Array(x), axis=axis, reverse=reverse))
    assert out.dtype == x.dtype and out.shape == x.shape
    ax = axis % x.ndim
    ref = pb.primitives.registry[name].reference(np.array(x, order="C"), axis=ax, reverse=reverse)
    scale = None
    if name == "cumsum":
        a = np.abs(wide(x))
        scale = np.where(np.isfinite(a), a, 0).sum() + 1
    check(out, ref, x.dtype, name, scale)
    check(out, independent_cumulative(name, x, ax, reverse), x.dtype, name, scale)


def test_cumulative_ops_in_reverse_and_their_edges():
    x = pb.Array(np.array([1, 2, 3, 4], np.int32))
    np.testing.assert_array_equal(np.asarray(lax.cumsum(x, reverse=True)), [10, 9, 7, 4])
    np.testing.assert_array_equal(np.asarray(lax.cumprod(x, reverse=True)), [24, 24, 12, 4])
    np.testing.assert_array_equal(np.asarray(lax.cummax(pb.Array(np.int8([3, 1, 5, 2])),
                                                        reverse=True)), [5, 5, 5, 2])
    f = pb.Array(np.array([1.0, np.nan, 0.0, 5.0], np.float32))
    np.testing.assert_array_equal(np.asarray(lax.cummax(f)), [1.0, np.nan, np.nan, np.nan])
    np.testing.assert_array_equal(np.asarray(lax.cummin(f, reverse=True)),
                                  [np.nan, np.nan, 0.0, 5.0])
    # stable: no overflow for large inputs, -inf is the identity, +inf absorbs
    lse = np.asarray(lax.cumlogsumexp(pb.Array(np.array([1000.0, 1000.0, -np.inf], np.float32))))
    np.testing.assert_allclose(lse, [1000.0, 1000.0 + np.log(2), 1000.0 + np.log(2)], rtol=1e-6)
    np.testing.assert_array_equal(
        np.asarray(lax.cumlogsumexp(pb.Array(np.array([-np.inf, -np.inf, np.inf, 1.0])))),
        [-np.inf, -np.inf, np.inf, np.inf])
    np.testing.assert_array_equal(np.asarray(lax.cumsum(pb.Array(np.int8([100, 100])))),
                                  [100, -56])
    big = np.ones((1 << 18, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(lax.cumsum(pb.Array(big), axis=0, reverse=True))[0],
                                  [1 << 18] * 3)


# ---- staging, backends and errors ----

CALLS = [
    (lambda x: lax.reduce_sum(x, (0, 2)), F32), (lambda x: lax.reduce_prod(x * 0.1, (1,)), F64),
    (lambda x: lax.reduce_max(x, (0,)), BF16), (lambda x: lax.reduce_min(x, (0, 1, 2)), F32),
    (lambda x: lax.reduce_or(x, (1,)), np.dtype(bool)),
    (lambda x: lax.reduce_xor(x, (0, 2)), np.dtype(np.uint16)),
    (lambda x: lax.reduce_and(x, (2,)), np.dtype(np.int32)),
    (lambda x: lax.argmax(x, 1, np.int32), F32), (lambda x: lax.argmin(x, 2, np.int64), F16),
    (lambda x: lax.cumsum(x, 1, reverse=True), F32), (lambda x: lax.cumprod(x * 0.1, 2), F32),
    (lambda x: lax.cummax(x, 0), np.dtype(np.int8)), (lambda x: lax.cummin(x, 2, True), F64),
    (lambda x: lax.cumlogsumexp(x, 1), F32),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_jit_and_the_reference_backend_agree_with_eager(i):
    f, dtype = CALLS[i]
    xv = make(np.random.default_rng(i), (3, 4, 5), dtype)
    x = pb.Array(xv)
    eager = np.asarray(f(x))
    np.testing.assert_array_equal(wide(np.asarray(pb.jit(f)(x))), wide(eager))
    pb.config.update("backend", "reference")
    try:
        ref = np.asarray(f(x))
    finally:
        pb.config.update("backend", "cpu")
    assert ref.dtype == eager.dtype
    check(eager, ref, xv.dtype, "", abs_scale(xv))


def test_staged_params_are_normalized():
    jaxpr = pb.make_jaxpr(lambda x: (lax.reduce_max(x, (-1, 0)), lax.cumsum(x, -1),
                                     lax.argmin(x, -1, np.int16)))(np.ones((2, 3), F32))
    text = str(jaxpr)
    assert "reduce_max[axes=(0, 1)]" in text
    assert "cumsum[axis=1 reverse=False]" in text
    assert "argmin[axes=(1,) index_dtype=int16]" in text


@pytest.mark.parametrize("call, exc, words", [
    (lambda: lax.reduce_sum(np.array([True]), (0,)), TypeError, ["reduce_sum", "'operand'", "bool"]),
    (lambda: lax.reduce_and(np.ones(2, F32), (0,)), TypeError, ["reduce_and", "'operand'"]),
    (lambda: lax.reduce_max(np.ones(2, np.complex64), (0,)), TypeError, ["reduce_max", "'operand'"]),
    (lambda: lax.reduce_sum(np.ones(2, ml_dtypes.float8_e4m3fn), (0,)), TypeError, ["float8"]),
    (lambda: lax.reduce_sum(np.ones((2, 3)), (2,)), ValueError, ["reduce_sum", "'axes'"]),
    (lambda: lax.reduce_prod(np.ones((2, 3)), (1, -1)), ValueError, ["reduce_prod", "'axes'"]),
    (lambda: lax.argmax(np.zeros((0, 3)), 0, np.int32), ValueError, ["argmax", "'operand'"]),
    (lambda: lax.argmin(np.ones(3), 0, np.float32), TypeError, ["argmin", "'index_dtype'"]),
    (lambda: lax.argmax(np.ones(3), 1, np.int32), ValueError, ["argmax", "'axis'"]),
    (lambda: lax.argmax(np.ones(300), 0, np.int8), ValueError, ["argmax", "'index_dtype'"]),
    (lambda: lax.argmax(np.ones(3, np.complex64), 0, np.int32), TypeError, ["argmax", "'operand'"]),
    (lambda: lax.cumsum(np.array([True]), 0), TypeError, ["cumsum", "'operand'"]),
    (lambda: lax.cummax(np.ones(2, np.complex64)), TypeError, ["cummax", "'operand'"]),
    (lambda: lax.cumlogsumexp(np.arange(3)), TypeError, ["cumlogsumexp", "'operand'"]),
    (lambda: lax.cumprod(np.ones((2, 2)), 2), ValueError, ["cumprod", "'axis'"]),
    (lambda: lax.cumsum(np.float32(1.0)), ValueError, ["cumsum", "'axis'"]),
])
def test_bad_input_names_the_op_and_argument(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def _kcall(name, x, dtype, shape, params):
    return K.call(K.kernel(name), (x,), ((np.dtype(dtype), shape),), params)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: K.reduce(99, np.ones(2), (0,)), ValueError, ["'op'"]),
    (lambda: K.reduce(0, [1.0, 2.0], (0,)), TypeError, ["reduce_sum", "'operand'", "ndarray"]),
    (lambda: K.reduce(0, np.ones(2, bool), (0,)), TypeError, ["reduce_sum", "'operand'"]),
    (lambda: K.reduce(4, np.ones(2, F32), (0,)), TypeError, ["reduce_and", "'operand'"]),
    (lambda: K.reduce(0, np.ones(2), [0]), TypeError, ["reduce_sum", "'axes'"]),
    (lambda: K.reduce(0, np.ones(2), (1,)), ValueError, ["reduce_sum", "'axes'"]),
    (lambda: K.reduce(0, np.ones((2, 2)), (1, 1)), ValueError, ["reduce_sum", "'axes'"]),
    (lambda: K.reduce(0, np.ones(2)), TypeError, ["reduce"]),
    (lambda: K.reduce(0, np.ones(4, ">f4"), (0,)), ValueError, ["'operand'", "byte order"]),
    # the kernels through the generic entry: they check what memory safety needs
    (lambda: _kcall("cumsum", np.ones(2), "f8", (2,), struct.pack("=2i", 1, 0)), TypeError,
     ["cumsum", "axis in range"]),
    (lambda: _kcall("cumlogsumexp", np.ones(2, np.int32), "i4", (2,), struct.pack("=2i", 0, 0)),
     TypeError, ["cumlogsumexp", "supported dtype"]),
    (lambda: _kcall("cumsum", np.ones(2), "f4", (2,), struct.pack("=2i", 0, 0)), TypeError,
     ["cumsum", "its dtype"]),
    (lambda: _kcall("argmax", np.ones((2, 0)), "i4", (2,), struct.pack("=i", 1)), ValueError,
     ["argmax", "axis 1 is empty"]),
    (lambda: _kcall("argmin", np.ones(2), "f4", (), struct.pack("=i", 0)), TypeError,
     ["argmin", "integer output"]),
    (lambda: _kcall("argmax", np.ones(2, np.complex64), "i4", (), struct.pack("=i", 0)),
     TypeError, ["argmax", "real operand"]),
    (lambda: _kcall("argmax", np.ones((2, 3)), "i4", (3,), struct.pack("=i", 1)), TypeError,
     ["argmax", "without the axis"]),
])
def test_kernels_validate_their_arguments(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))
