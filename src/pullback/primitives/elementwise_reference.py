"""NumPy references of the element-wise primitives: the oracle the C kernels are tested against.

They follow the kernels' semantics, which are XLA's: integer division truncates and never traps
(x / 0 = -1, x % 0 = x, INT_MIN / -1 = INT_MIN), shifts by out-of-range amounts give 0 or the
sign fill, max/min propagate NaN, float16/bfloat16 compute in float32 and round once.
"""
from __future__ import annotations

import importlib
from typing import Callable

import numpy as np

from ..tracer import dtypes

HALVES = (dtypes.float16, dtypes.bfloat16)


class _LazySpecial:
    """``scipy.special``'s functions, the module imported at the first call: they serve only
    the reference rules (tests, the reference backend), and importing scipy.special at start-up
    was about a third of ``import pullback``."""

    def __getattr__(self, name: str) -> Callable:
        def call(*args, **kwargs):
            return getattr(importlib.import_module("scipy.special"), name)(*args, **kwargs)
        call.__name__ = call.__qualname__ = name
        return call


special = _LazySpecial()


def via_float32(fn: Callable) -> Callable:
    """``fn`` on float16/bfloat16 operands computes in float32; the caller rounds the result."""
    def wrapped(*xs, **params):
        if xs and xs[0].dtype in HALVES:
            xs = tuple(x.astype(np.float32) for x in xs)
        return fn(*xs, **params)
    return wrapped


def _unsigned(x: np.ndarray) -> np.ndarray:
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _signed(x: np.ndarray) -> np.ndarray:
    return x.view(np.dtype(f"i{x.dtype.itemsize}"))


def _bits(x: np.ndarray) -> int:
    return 8 * x.dtype.itemsize


def div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not dtypes.is_integer(x.dtype):
        return np.true_divide(x, y)
    x, y = np.broadcast_arrays(x, y)
    signed = x.dtype.kind == "i"
    special = (y == 0) | ((y == -1) if signed else False)
    d = np.where(special, 1, y).astype(x.dtype)
    q = np.floor_divide(x, d)
    # floor -> truncation: step toward zero where the division was inexact and signs differ
    q = q + ((q * d != x) & ((x < 0) != (d < 0))).astype(x.dtype)
    out = np.where(y == 0, np.array(-1).astype(x.dtype), q)
    return np.where(y == -1, np.negative(x), out) if signed else out


def rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not dtypes.is_integer(x.dtype):
        return np.fmod(x, y)
    x, y = np.broadcast_arrays(x, y)
    special = (y == 0) | ((y == -1) if x.dtype.kind == "i" else False)
    r = np.fmod(x, np.where(special, 1, y).astype(x.dtype))
    return np.where(y == 0, x, r)


def shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ux, uy = _unsigned(x), _unsigned(y)
    out = np.left_shift(ux, np.minimum(uy, _bits(x) - 1).astype(ux.dtype))
    return np.where(uy >= _bits(x), 0, out).astype(ux.dtype).view(x.dtype)


def shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ux, uy = _unsigned(x), _unsigned(y)
    out = np.right_shift(ux, np.minimum(uy, _bits(x) - 1).astype(ux.dtype))
    return np.where(uy >= _bits(x), 0, out).astype(ux.dtype).view(x.dtype)


def shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    sx, uy = _signed(x), _unsigned(y)
    amount = np.minimum(uy, _bits(x) - 1).astype(sx.dtype)
    return np.right_shift(sx, amount).astype(sx.dtype).view(x.dtype)


def population_count(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(_unsigned(x)).astype(x.dtype)


def clz(x: np.ndarray) -> np.ndarray:
    u = _unsigned(x).copy()
    n = np.full(u.shape, _bits(x), np.int64)
    # the bit length by binary search: shift off the high halves that are non-zero
    length = np.zeros(u.shape, np.int64)
    s = _bits(x) // 2
    while s:
        high = (u >> np.array(s, u.dtype)) != 0
        length += np.where(high, s, 0)
        u = np.where(high, u >> np.array(s, u.dtype), u)
        s //= 2
    length += (u != 0)
    return (n - length).astype(x.dtype)


def nextafter(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype not in HALVES:
        return np.nextafter(x, y)
    x, y = np.broadcast_arrays(x, y)
    fx, fy = x.astype(np.float32), y.astype(np.float32)
    ux, uy = x.view(np.uint16).astype(np.int32), y.view(np.uint16).astype(np.int32)
    step = np.where((fx < fy) == (fx > 0), 1, -1)
    out = np.where(fx == 0, (uy & 0x8000) | 1, ux + step)
    out = np.where(fx == fy, uy, out)
    nan = 0x7E00 if x.dtype == dtypes.float16 else 0x7FC0
    out = np.where(np.isnan(fx) | np.isnan(fy), nan, out)
    return out.astype(np.uint16).view(x.dtype)


def sign(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "u":
        return (x > 0).astype(x.dtype)
    return np.where(x == 0, x, np.sign(x))  # -0.0 stays -0.0, as XLA


def lgamma(x: np.ndarray) -> np.ndarray:
    """gammaln, except that lgamma(-inf) = inf (C99) and tiny |x| gives -log|x| (SciPy's
    overflows to inf for subnormals)."""
    tiny = np.abs(x) < 1e-300
    out = np.where(tiny, -np.log(np.where(tiny, np.abs(x), 1)), special.gammaln(x))
    return np.where(x == -np.inf, np.inf, out)


def round_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def logistic(x: np.ndarray) -> np.ndarray:
    if dtypes.is_complex(x.dtype):
        return 1 / (1 + np.exp(-x))
    return special.expit(x)


def rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def digamma(x: np.ndarray) -> np.ndarray:
    """SciPy's psi for x >= 1/2; below, the reflection psi(1 - x) - pi / tan(pi x) (SciPy's own
    is off by hundreds of ulp there). Poles (non-positive integers) are NaN, as XLA."""
    f = x - np.round(x)  # tan has period 1: reduce exactly first
    low = special.psi(1 - np.minimum(x, 0.5)) - np.pi / np.tan(np.pi * f)
    out = np.where(x >= 0.5, special.psi(np.maximum(x, 0.5)), low)
    return np.where((x <= 0) & (f == 0), np.nan, out)


def make_complex(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, np.complex64 if x.dtype == dtypes.float32 else np.complex128)
    out.real, out.imag = x, y
    return out


def conj(x: np.ndarray) -> np.ndarray:
    if dtypes.is_complex(x.dtype):
        return np.conj(x)
    return make_complex(x, np.full(x.shape, -0.0, x.dtype))


def integer_pow(x: np.ndarray, *, y: int) -> np.ndarray:
    """Repeated squaring in the operand's dtype (integers wrap; float16/bfloat16 round after
    every product, as their multiplications and JAX's chain do), as the kernel."""
    acc, base, n = np.ones_like(x), x.copy(), abs(y)
    with np.errstate(all="ignore"):
        while n:
            if n & 1:
                acc = acc * base
            base = base * base
            n >>= 1
        return 1 / acc if y < 0 else acc


def _unsigned_abs(x: np.ndarray) -> np.ndarray:
    """|x| as uint64 (|INT_MIN| = 2^(n-1): the same-width unsigned negation never wraps)."""
    u = _unsigned(x)
    return (np.where(x < 0, np.negative(u), u) if x.dtype.kind == "i" else u).astype(np.uint64)


def _narrow(u: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """uint64 values wrapped to ``dtype``'s width, as ``dtype``."""
    return np.asarray(u).astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)


def gcd(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """gcd(|x|, |y|) computed in uint64 and wrapped back (gcd(INT_MIN, 0) = INT_MIN, as JAX)."""
    return _narrow(np.gcd(_unsigned_abs(x), _unsigned_abs(y)), x.dtype)


def lcm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|x| * (|y| / gcd), wrapping; 0 where the gcd is 0 (JAX's formula)."""
    a, b = _unsigned_abs(x), _unsigned_abs(y)
    g = np.gcd(a, b)
    return _narrow(np.where(g == 0, np.uint64(0), a * (b // np.where(g == 0, np.uint64(1), g))),
                   x.dtype)


# (bits type, exponent bits, mantissa bits) of each floating format
_FORMATS = {dtypes.float16: (np.uint16, 5, 10), dtypes.bfloat16: (np.uint16, 8, 7),
            dtypes.float32: (np.uint32, 8, 23), dtypes.float64: (np.uint64, 11, 52)}


def reduce_precision(x: np.ndarray, *, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA's reduce_precision on x's bits: round the mantissa to nearest even, then overflow to
    inf and underflow (below the narrower format's normal range) to a signed zero; NaN kept."""
    ut, src_e, src_m = _FORMATS[x.dtype]
    u64 = np.uint64
    bits = np.asarray(x).view(ut).astype(u64)
    sign = u64(1 << (8 * x.dtype.itemsize - 1))
    exp_mask = u64(((1 << src_e) - 1) << src_m)
    out = bits
    if mantissa_bits < src_m:
        shift = src_m - mantissa_bits
        last = 1 << shift
        odd = (out >> u64(shift)) & u64(1)
        out = (out + u64((last >> 1) - 1) + odd) & u64(((1 << 64) - 1) ^ (last - 1))
    if exponent_bits < src_e:
        bias, rbias = (1 << (src_e - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        xe = out & exp_mask
        out = np.where(xe > u64((bias + rbias) << src_m), (out & sign) | exp_mask,
                       np.where(xe <= u64((bias - rbias) << src_m), out & sign, out))
    out = np.where((bits & ~sign) > exp_mask, bits, out)
    return np.asarray(out).astype(ut).view(x.dtype)


def clamp(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(x, lo), hi)


def select_n(which: np.ndarray, *cases: np.ndarray) -> np.ndarray:
    idx = np.clip(which.astype(np.int64), 0, len(cases) - 1)
    shape = np.broadcast_shapes(which.shape, cases[0].shape)
    out = np.empty(shape, cases[0].dtype)
    idx = np.broadcast_to(idx, shape)
    for i, c in enumerate(cases):
        np.copyto(out, np.broadcast_to(c, shape), where=idx == i)
    return out
