"""convert_element_type and bitcast_convert_type: every dtype pair, edge values, layouts."""
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
from pullback import lax
from pullback.backends.cpu import kernels
from pullback.lax._conversion import _convert_element_type
from pullback.primitives.conversion import bitcast_convert_type_p
from pullback.test_util import reference_backend
from pullback.primitives.conversion import convert_reference
from pullback.tracer import dtypes

ALL = dtypes.SUPPORTED
F8 = dtypes.FLOAT8
NAMES = [str(d) for d in ALL]


# ---- source values: edges of every format, every bit pattern of the narrow ones ----

EDGE_FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 0.49999997, 0.7, -0.7, 1.999,
    127.0, 127.9, 128.0, -128.0, -128.9, -129.0, 255.0, 255.9, 256.0, -1.0e-3, 32767.0, 32768.0,
    -32768.0, -32769.0, 65535.0, 65536.0, 2.0**31 - 1, 2.0**31, -2.0**31, -2.0**31 - 1, 2.0**32,
    2.0**32 - 1, 2.0**53 + 2, 2.0**63, -2.0**63, 2.0**64, -2.0**64, 1e300, -1e300, 3.4e38,
    math.inf, -math.inf, math.nan, -math.nan,
    2.0**-149, -2.0**-149, 2.0**-126, 2.0**-127, 1e-40,           # float32 subnormals
    2.0**-24, 2.0**-25, 3 * 2.0**-25, 2.0**-14, 65504.0, 65519.0, 65520.0, 1 + 2.0**-11,
    1 + 3 * 2.0**-11,                                               # float16 edges and ties
    1 + 2.0**-8, 1 + 3 * 2.0**-8, 1 + 2.0**-8 + 2.0**-30, 2.0**-133, 3.3895e38,  # bfloat16
    448.0, 464.0, 465.0, 480.0, 240.0, 248.0, 57344.0, 61440.0, 61441.0, 1 + 2.0**-4,
    1 + 3 * 2.0**-4, 1.0625, 1.1875, 2.0**-9, 2.0**-10, 3 * 2.0**-10, 2.0**-16, 2.0**-17,
    3 * 2.0**-17, 2.0**-6, 2.0**-7, 2.0**-15,                       # float8 edges and ties
]
EDGE_INTS = sorted({s * (2**b + d) for b in (0, 7, 8, 15, 16, 24, 31, 32, 53, 63, 64)
                    for d in (-1, 0, 1) for s in (1, -1)} | {3, 100, 2**25 + 2**17 + 1})


def source_values(dtype: np.dtype) -> np.ndarray:
    """Edge values of ``dtype`` plus all of its bit patterns (8/16-bit) or random ones."""
    rng = np.random.default_rng(7)
    if dtype == dtypes.bool_:
        return np.array([False, True])
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        edges = np.array([v for v in EDGE_INTS if info.min <= v <= info.max], dtype)
    elif dtypes.is_complex(dtype):
        re = np.array(EDGE_FLOATS)
        edges = np.zeros(2 * len(re), np.complex128)
        edges.real = np.concatenate([re, re])
        edges.imag[len(re):] = np.roll(re, 7)
        with np.errstate(over="ignore"):
            edges = edges.astype(dtype)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            edges = np.array(EDGE_FLOATS).astype(dtype)
    bits = 8 * dtype.itemsize
    if bits <= 16:
        extra = np.arange(2**bits, dtype=f"u{dtype.itemsize}").view(dtype)
    else:
        extra = rng.integers(0, 256, 3000 * dtype.itemsize, dtype=np.uint8).view(dtype)
    return np.concatenate([edges, extra])


def as_bits(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bit patterns with every NaN replaced by 0, NaN mask) of a real or complex array."""
    x = np.ascontiguousarray(x)
    if x.dtype.kind == "c":
        x = x.view(x.real.dtype).reshape(x.shape + (2,))
    with np.errstate(invalid="ignore"):
        nan = np.isnan(x.astype(np.float64)) if x.dtype.kind not in "biu" else np.zeros(x.shape, bool)
    bits = x.view(f"u{x.dtype.itemsize}") if x.dtype != dtypes.bool_ else x
    return np.where(nan, 0, bits), nan


def assert_same(got: np.ndarray, want: np.ndarray) -> None:
    """Bitwise equality (so -0.0 and 0.0 differ), with any NaN matching any NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    gb, gn = as_bits(got)
    wb, wn = as_bits(want)
    bad = (gb != wb) | (gn != wn)
    assert not bad.any(), f"{bad.sum()} mismatches, e.g. got {got[bad.any(-1) if got.dtype.kind == 'c' else bad][:4]} want {want[bad.any(-1) if want.dtype.kind == 'c' else bad][:4]}"


def convert(x: np.ndarray, dtype) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return np.asarray(lax.convert_element_type(pb.Array(x), dtype))


# ---- every pair against the NumPy reference ----

@pytest.mark.parametrize("src", ALL, ids=NAMES)
def test_every_pair_matches_reference(src):
    x = source_values(src)
    for dst in ALL:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = convert_reference(x, dst)
        assert_same(convert(x, dst), want)


# ---- an independent model: exact rational rounding and the stated integer rules ----

# (significand bits, smallest normal exponent, largest finite, what overflow gives)
FORMATS = {
    dtypes.float16: (11, -14, 65504.0, "inf"), dtypes.bfloat16: (8, -126, 3.3895313892515355e38, "inf"),
    dtypes.float32: (24, -126, float(np.finfo(np.float32).max), "inf"),
    dtypes.float64: (53, -1022, float(np.finfo(np.float64).max), "inf"),
    dtypes.float8_e4m3fn: (4, -6, 448.0, "nan"), dtypes.float8_e5m2: (3, -14, 57344.0, "inf"),
    dtypes.float8_e4m3fnuz: (4, -7, 240.0, "nan"), dtypes.float8_e5m2fnuz: (3, -15, 57344.0, "nan"),
}


def round_to(v, dtype):
    """v (int or float) rounded to nearest even in ``dtype``'s format, as a Python float."""
    p, emin, top, overflow = FORMATS[dtype]
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        if math.isnan(v) or overflow == "nan":
            return math.nan
        return v
    q = Fraction(v)
    if q == 0:
        zero = math.copysign(0.0, v) if isinstance(v, float) else 0.0
        return 0.0 if dtype in (dtypes.float8_e4m3fnuz, dtypes.float8_e5m2fnuz) else zero
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - (p - 1))
    r = round(a / quantum) * quantum
    if r > Fraction(top):
        return math.nan if overflow == "nan" else math.copysign(math.inf, q)
    out = math.copysign(float(r), q)
    if out == 0.0 and dtype in (dtypes.float8_e4m3fnuz, dtypes.float8_e5m2fnuz):
        return 0.0
    return out


def model(v, dst):
    """The documented semantics, element by element, in exact arithmetic."""
    if isinstance(v, complex) and dst.kind != "c":
        v = v.real
    if dst == dtypes.bool_:
        return v != 0
    if isinstance(v, bool):
        v = int(v)
    if dtypes.is_integer(dst):
        info = np.iinfo(dst)
        if isinstance(v, int):
            return (v - info.min) % 2**info.bits + info.min
        if math.isnan(v):
            return 0
        if math.isinf(v):
            return info.max if v > 0 else info.min
        return min(max(math.trunc(v), info.min), info.max)
    if dtypes.is_complex(dst):
        part = dtypes.float32 if dst == dtypes.complex64 else dtypes.float64
        c = complex(v)
        return complex(round_to(c.real, part), round_to(c.imag, part))
    if dst in (dtypes.bfloat16,) + F8:
        return round_to(round_to(v, dtypes.float32), dst)  # through float32, as documented
    return round_to(v, dst)


def python_value(x):
    if x.dtype == dtypes.bool_:
        return bool(x)
    if dtypes.is_integer(x.dtype):
        return int(x)
    if dtypes.is_complex(x.dtype):
        return complex(x)
    return float(np.float64(x.astype(np.float64)))


def same_python(got, want) -> bool:
    if isinstance(want, complex):
        return same_python(got.real, want.real) and same_python(got.imag, want.imag)
    if isinstance(want, float):
        got = float(got)
        if math.isnan(want):
            return math.isnan(got)
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return type(got) is type(want) and got == want


@pytest.mark.parametrize("src", ALL, ids=NAMES)
def test_edge_values_follow_the_documented_rules(src):
    x = source_values(src)
    x = x[: 2 * len(EDGE_FLOATS) if src.kind == "c" else max(len(EDGE_FLOATS), len(EDGE_INTS))]
    for dst in ALL:
        got = convert(x, dst)
        for xi, gi in zip(x, got):
            want = model(python_value(np.asarray(xi)), dst)
            g = python_value(np.asarray(gi))
            assert same_python(g, want), f"{src}->{dst}: {xi!r} gave {g!r}, expected {want!r}"


# ---- float8 and bfloat16 against ml_dtypes' own casts ----

NARROW = (dtypes.bfloat16,) + F8


@pytest.mark.parametrize("dst", NARROW, ids=[str(d) for d in NARROW])
def test_narrow_floats_encode_like_ml_dtypes(dst):
    rng = np.random.default_rng(1)
    with np.errstate(all="ignore"):
        x = np.concatenate([np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32),
                            rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32).view(np.float32),
                            np.array(EDGE_FLOATS).astype(np.float32)])
        assert_same(convert(x, dst), x.astype(dst))
        # float64 goes through float32 in ml_dtypes as well
        d = rng.normal(size=20000) * np.float64(2.0) ** rng.integers(-30, 30, 20000)
        assert_same(convert(d, dst), d.astype(dst))


@pytest.mark.parametrize("src", NARROW, ids=[str(d) for d in NARROW])
def test_narrow_floats_decode_and_cross_convert_like_ml_dtypes(src):
    codes = np.arange(2 ** (8 * src.itemsize), dtype=f"u{src.itemsize}").view(src)
    for dst in NARROW:
        with np.errstate(all="ignore"):
            assert_same(convert(codes, np.float32), codes.astype(np.float32))
            assert_same(convert(codes, np.float64), codes.astype(np.float64))
            assert_same(convert(codes, dst), codes.astype(np.float32).astype(dst))
            if src.itemsize == dst.itemsize == 1:
                assert_same(convert(codes, dst), codes.astype(dst))


def test_specific_semantics():
    f = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, -0.7, 2.9, -2.9], np.float32)
    assert convert(f, np.int32).tolist() == [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 0, 2, -2]
    assert convert(f, np.uint8).tolist() == [0, 255, 0, 255, 0, 0, 2, 0]
    assert convert(f, np.bool_).tolist() == [True] * 8
    assert convert(np.array([-0.0, 0.0]), np.bool_).tolist() == [False, False]
    assert convert(np.array([300, -129], np.int32), np.int8).tolist() == [44, 127]
    assert convert(np.array([2**64 - 1], np.uint64), np.float32)[0] == np.float32(2.0**64)
    assert convert(np.array([2**24 + 1, 2**24 + 3], np.int32), np.float32).tolist() == [2.0**24, 2.0**24 + 4]
    # complex: the real part, also for bool (as JAX); imaginary 0 the other way
    assert convert(np.array([1j, 2 + 1j]), np.bool_).tolist() == [False, True]
    assert convert(np.array([-1.5 + 9j]), np.int16).tolist() == [-1]
    assert convert(np.array([1.5], np.float32), np.complex128).tolist() == [1.5 + 0j]
    assert convert(np.array([True, False]), np.float16).tolist() == [1.0, 0.0]
    # float64 -> float16 rounds once (not through float32)
    assert convert(np.array([1 + 2.0**-11 + 2.0**-40]), np.float16)[0] == np.float16(1 + 2.0**-10)


# ---- layouts, ranks, zero sizes ----

LAYOUTS = ("contiguous", "strided", "broadcast", "flipped", "transposed")


def layout(base: np.ndarray, kind: str) -> np.ndarray:
    if kind == "strided":
        return base[(slice(None),) * (base.ndim - 1) + (slice(None, None, 2),)] if base.ndim else base
    if kind == "broadcast":
        return np.broadcast_to(base[..., :1] if base.ndim else base, base.shape)
    if kind == "flipped":
        return base[::-1] if base.ndim else base
    if kind == "transposed":
        return base.T
    return base


@given(src=st.sampled_from(ALL), dst=st.sampled_from(ALL),
       shape=st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple),
       kind=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**31))
def test_layouts_and_shapes(src, dst, shape, kind, seed):
    vals = source_values(src)
    idx = np.random.default_rng(seed).integers(0, len(vals), int(np.prod(shape)))
    x = layout(vals[idx].reshape(shape), kind)
    got = convert(x, dst)
    assert got.shape == x.shape and (got.flags.c_contiguous or src == dst)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(got, convert_reference(x, dst))


@pytest.mark.parametrize("dst", [np.int8, np.float16, dtypes.bfloat16, np.float64, np.complex64])
def test_large_arrays_use_threads_correctly(dst):
    x = np.random.default_rng(3).normal(size=(700, 1500)).astype(np.float32) * 300
    for view in (x, x[:, ::-3], x.T):
        with np.errstate(all="ignore"):
            assert_same(convert(view, dst), convert_reference(view, np.dtype(dst)))


# ---- the public function: weak types, scalars, jit, the reference backend ----

@pytest.mark.x32
def test_weak_type_and_identity():
    x = pb.Array(np.arange(4, dtype=np.float32))
    assert lax.convert_element_type(x, np.float32) is x
    assert not lax.convert_element_type(x, np.int32).weak_type
    w = _convert_element_type(x, np.int32, weak_type=True)
    assert w.weak_type and w.dtype == np.int32
    strong = lax.convert_element_type(w, np.int32)  # strips the weak type only
    assert not strong.weak_type and np.asarray(strong).tolist() == [0, 1, 2, 3]
    s = lax.convert_element_type(2.7, np.int8)
    assert s.dtype == np.int8 and not s.weak_type and int(s) == 2
    assert float(lax.convert_element_type(2**40, np.float32)) == 2.0**40
    assert lax.convert_element_type(3, float).dtype == np.float32
    assert lax.convert_element_type(np.float32(3), int).dtype == np.int32
    with pb.enable_x64():
        assert lax.convert_element_type(x, np.int64).dtype == np.int64  # not Python's int
    with pytest.warns(UserWarning, match="int64 requested in convert_element_type is not "
                      "available, and will be truncated to dtype int32"):
        assert lax.convert_element_type(x, np.int64).dtype == np.int32
    with pytest.raises(OverflowError, match="convert_element_type"):
        lax.convert_element_type(2**70, np.float32)


def test_complex_to_real_warns():
    with pytest.warns(np.exceptions.ComplexWarning):
        lax.convert_element_type(pb.Array(np.array([1 + 2j])), np.float32)


def test_jit_matches_eager_and_jaxpr_shows_params():
    x = pb.Array(np.array([1.5, -2.5, np.nan, 1e10], np.float32))

    def f(x):
        return lax.convert_element_type(x, np.int16), lax.bitcast_convert_type(x, np.uint8)

    for got, want in zip(pb.jit(f)(x), f(x)):
        assert_same(np.asarray(got), np.asarray(want))
    text = str(pb.make_jaxpr(f)(x))
    assert "convert_element_type[new_dtype=int16 weak_type=False]" in text
    assert "bitcast_convert_type[new_dtype=uint8]" in text


def test_reference_backend_matches_cpu():
    x = source_values(np.dtype(np.float32))
    y = source_values(dtypes.bfloat16)[::37]
    cpu = [convert(x, np.int64), convert(x, dtypes.float8_e5m2), convert(y, np.uint16),
           np.asarray(lax.bitcast_convert_type(pb.Array(x[:8].reshape(2, 4)), np.uint16))]
    pb.config.update("backend", "reference")
    try:
        ref = [convert(x, np.int64), convert(x, dtypes.float8_e5m2), convert(y, np.uint16),
               np.asarray(lax.bitcast_convert_type(pb.Array(x[:8].reshape(2, 4)), np.uint16))]
    finally:
        pb.config.update("backend", "cpu")
    for c, r in zip(cpu, ref):
        assert_same(c, r)


# ---- bitcast_convert_type ----

BITCASTABLE = [d for d in ALL if d.kind not in "bc"]


@pytest.mark.parametrize("src", BITCASTABLE, ids=[str(d) for d in BITCASTABLE])
def test_bitcast_every_pair(src):
    rng = np.random.default_rng(5)
    for dst in BITCASTABLE:
        ratio = max(src.itemsize, dst.itemsize) // min(src.itemsize, dst.itemsize)
        shape = (3, 2, ratio) if src.itemsize < dst.itemsize else (3, 2)
        x = rng.integers(0, 256, int(np.prod(shape)) * src.itemsize, dtype=np.uint8).view(src).reshape(shape)
        out = np.asarray(lax.bitcast_convert_type(pb.Array(x), dst))
        if src.itemsize > dst.itemsize:
            assert out.shape == shape + (ratio,)
            want = x.reshape(shape + (1,)).view(dst)
        elif src.itemsize < dst.itemsize:
            assert out.shape == shape[:-1]
            want = x.view(dst).reshape(shape[:-1])
        else:
            assert out.shape == shape
            want = x.view(dst)
        assert out.dtype == dst and out.tobytes() == want.tobytes()
        assert np.shares_memory(out, x)  # contiguous operands are never copied


def test_bitcast_byte_order_and_scalars():
    x = pb.Array(np.array([1.5, -2.5], np.float32))
    assert np.asarray(lax.bitcast_convert_type(x, np.uint8)).tolist() == [[0, 0, 192, 63], [0, 0, 32, 192]]
    s = lax.bitcast_convert_type(pb.Array(np.array(1.0)), np.uint32)
    assert s.shape == (2,) and np.asarray(s).tolist() == [0, 0x3FF00000]
    back = lax.bitcast_convert_type(s, np.float64)
    assert back.shape == () and float(back) == 1.0
    assert lax.bitcast_convert_type(pb.Array(np.ones(3, bool)), np.bool_).dtype == np.bool_


def test_bitcast_reference_keeps_a_scalar_a_scalar():
    # the same itemsize: a scalar stays 0-d (the reference once made it 1-d, so a random
    # float sampled with shape () had shape (1,) under the reference backend)
    ref = bitcast_convert_type_p.reference
    for src, dst in ((np.uint32, np.float32), (np.float64, np.int64), (np.int8, np.uint8)):
        out = ref(np.array(7, src), new_dtype=np.dtype(dst))
        assert out.shape == () and out.dtype == dst
        assert out.tobytes() == np.array(7, src).tobytes()
    with reference_backend():
        assert pb.random.normal(pb.random.key(0), (), np.float32).shape == ()


@pytest.mark.parametrize("kind", LAYOUTS)
def test_bitcast_layouts(kind):
    rng = np.random.default_rng(2)
    # narrowing appends a dimension and never copies, whatever the layout
    x = layout(rng.normal(size=(4, 6)).astype(np.float32), kind)
    n = np.asarray(lax.bitcast_convert_type(pb.Array(x), np.uint8))
    assert n.shape == x.shape + (4,) and np.shares_memory(n, x)
    assert n.tobytes() == np.ascontiguousarray(x).tobytes()
    # widening over a contiguous trailing dimension shares memory too
    w = rng.integers(0, 2**16, (6, 4, 2), dtype=np.uint16)
    w = {"strided": w[::2], "broadcast": np.broadcast_to(w[:1], w.shape), "flipped": w[::-1],
         "transposed": w.transpose(1, 0, 2), "contiguous": w}[kind]
    got = np.asarray(lax.bitcast_convert_type(pb.Array(w), np.float32))
    assert got.shape == w.shape[:-1] and np.shares_memory(got, w)
    assert got.tobytes() == np.ascontiguousarray(w).view(np.float32).tobytes()


def test_bitcast_misaligned_operand_is_copied():
    buf = np.zeros(49, np.uint8)
    x = buf[1:].reshape(4, 3, 4)  # the data pointer is odd: no uint32 view of it exists
    x[...] = np.arange(48, dtype=np.uint8).reshape(4, 3, 4)
    got = np.asarray(lax.bitcast_convert_type(pb.Array(x), np.uint32))
    assert got.shape == (4, 3) and not np.shares_memory(got, buf)
    assert got.tobytes() == x.tobytes()


def test_bitcast_copies_only_when_needed():
    x = np.zeros((3, 8), np.uint16)
    assert np.shares_memory(np.asarray(lax.bitcast_convert_type(pb.Array(x[:, 2:4]), np.uint32)), x)
    y = np.asarray(lax.bitcast_convert_type(pb.Array(x[:, ::4]), np.uint32))  # trailing stride 8
    assert y.shape == (3,) and not np.shares_memory(y, x)
    z = np.asarray(lax.bitcast_convert_type(pb.Array(np.broadcast_to(np.uint16(7), (2, 2))), np.uint32))
    assert z.tolist() == [7 * 65537, 7 * 65537]


# ---- errors ----

def test_errors_name_the_op_and_argument():
    x = pb.Array(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="convert_element_type.*'new_dtype'"):
        lax.convert_element_type(x, np.dtype("U3"))
    with pytest.raises(TypeError, match="convert_element_type.*'new_dtype'"):
        lax.convert_element_type(x, "not a dtype")
    with pytest.raises(TypeError, match="bitcast_convert_type.*'new_dtype'"):
        lax.bitcast_convert_type(x, object)
    with pytest.raises(TypeError, match="bitcast_convert_type.*bool"):
        lax.bitcast_convert_type(x, np.bool_)
    with pytest.raises(TypeError, match="bitcast_convert_type.*complex"):
        lax.bitcast_convert_type(pb.Array(np.ones(2, np.complex64)), np.float64)
    with pytest.raises(ValueError, match="bitcast_convert_type.*'operand'.*size 2, got 3"):
        lax.bitcast_convert_type(x, np.float64)
    with pytest.raises(ValueError, match="bitcast_convert_type.*0-d"):
        lax.bitcast_convert_type(pb.Array(np.float32(1)), np.float64)


def test_kernel_entry_points_validate_their_arguments():
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="convert: argument 'x'"):
        kernels.convert([1.0], np.dtype(np.float32))
    with pytest.raises(TypeError, match="convert: argument 'dtype'"):
        kernels.convert(x, "float32")
    with pytest.raises(TypeError, match="convert: target dtype"):
        kernels.convert(x, np.dtype("U3"))
    with pytest.raises(TypeError, match="convert: argument 'x' dtype"):
        kernels.convert(np.array(["a"]), np.dtype(np.float32))
    with pytest.raises(TypeError, match="convert: expected"):
        kernels.convert(x)
    with pytest.raises(ValueError, match="aligned and in native byte order"):
        kernels.convert(x.astype(">f4"), np.dtype(np.float32))
    with pytest.raises(TypeError, match="reinterpret: argument 'dtype'"):
        kernels.reinterpret(x, 4)
    with pytest.raises(ValueError, match="reinterpret: .*trailing dimension of size 2, got 3"):
        kernels.reinterpret(x, np.dtype(np.float64))
    with pytest.raises(TypeError, match="reinterpret: cannot"):
        kernels.reinterpret(np.array([None]), np.dtype(np.float64))
    with pytest.raises(ValueError, match="reinterpret: cannot split"):
        kernels.reinterpret(np.ones(2, "V3"), np.dtype(np.uint16))
    with pytest.raises(ValueError, match="reinterpret: cannot combine"):
        kernels.reinterpret(np.ones((2, 3), "V3"), np.dtype(np.uint64))
    with pytest.raises(ValueError, match="reinterpret: argument 'x' has 32 dimensions"):
        kernels.reinterpret(np.ones((1,) * 32, np.uint16), np.dtype(np.uint8))
