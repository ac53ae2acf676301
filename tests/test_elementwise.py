"""Element-wise primitives: every op on every dtype it defines, against its NumPy reference and
an independent oracle, over shapes and memory layouts; XLA's edge semantics; jit, the reference
backend and error messages.

Accuracy is measured in units in the last place (ulp) of the result dtype against a float64
(longdouble for float64 results, where NumPy has the function) NumPy/SciPy computation. The
tolerances (``TOL`` below, per op) are:
  * correctly rounded ops (add/sub/mul/div/sqrt, rounding, fmod, min/max, ...): 0.5 ulp;
  * exp (our polynomial): 1 ulp (measured 0.96);
  * glibc functions (sin, log, pow, erf, ...), logistic, rsqrt: 2-4 ulp;
  * erf_inv: float32 uses Giles' approximation as XLA does: 6 ulp; float64 1 ulp after Newton;
  * lgamma/digamma: 4 ulp of max(|y|, 1) (absolute near their zeros);
  * complex results: componentwise error over ulp(|y|), 4-8 ulp;
  * float16/bfloat16: computed in float32 and rounded once: 1 ulp of the half type.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Callable

import ml_dtypes
import numpy as np
import pytest
import scipy.special
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
import pullback.lax as lax
from pullback.primitives import elementwise as ew
from pullback.tracer import dtypes as D

SINTS = (D.int8, D.int16, D.int32, D.int64)
UINTS = (D.uint8, D.uint16, D.uint32, D.uint64)
INTS = SINTS + UINTS
HALVES = (D.float16, D.bfloat16)
REALS = (D.float32, D.float64)
FLOATS = HALVES + REALS
COMPLEXES = (D.complex64, D.complex128)
BOOL = (D.bool_,)


# ---------------------------------------------------------------------------------------------
# ulp measurement

def real_dtype(dt: np.dtype) -> np.dtype:
    return {D.complex64: D.float32, D.complex128: D.float64}.get(dt, dt)


def ulp_error(got: np.ndarray, exact: np.ndarray, dt: np.dtype, floor: float = 0.0) -> np.ndarray:
    """|got - exact| in ulps of dtype ``dt`` at max(|exact|, floor); equal specials are 0."""
    got = np.asarray(got)
    exact = np.asarray(exact)
    rd = real_dtype(dt)
    hi = np.longdouble if rd == D.float64 else np.float64
    g = got.astype(np.clongdouble if got.dtype.kind == "c" else hi)
    e = exact.astype(np.clongdouble if exact.dtype.kind == "c" else hi)
    with np.errstate(all="ignore"):
        mag = np.maximum(np.abs(e), floor)
        finite = np.isfinite(mag.astype(rd)) & np.isfinite(e)
        spacing = np.spacing(np.where(finite, mag, 1).astype(rd)).astype(hi)
        spacing = np.maximum(spacing, ml_dtypes.finfo(rd).smallest_subnormal)
        err = np.abs(g - e) / spacing
        # non-finite (or overflowing) expectations must be matched exactly
        same = (g == e.astype(got.dtype)) | (np.isnan(g) & np.isnan(e))
        if got.dtype.kind == "c":
            same = same | (np.isnan(g.real) & np.isnan(e.real)) & (np.isnan(g.imag) & np.isnan(e.imag))
    return np.where(finite, np.where(np.isnan(err), np.where(same, 0, np.inf), err),
                    np.where(same, 0, np.inf)).astype(np.float64)


def oracle_precision(dt: np.dtype):
    """The dtype an oracle computes in for results of dtype ``dt``."""
    if dt.kind == "c":
        return np.clongdouble if dt == D.complex128 else np.complex128
    return np.longdouble if dt == D.float64 else np.float64


# ---------------------------------------------------------------------------------------------
# the op table

def wrap(v: int, dt: np.dtype) -> int:
    """A Python int wrapped into integer dtype ``dt`` (two's complement)."""
    if dt == D.bool_:
        return v & 1
    bits = 8 * dt.itemsize
    v &= (1 << bits) - 1
    if dt.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def int_oracle(fn: Callable) -> Callable:
    """An element-wise oracle over Python ints (exact), wrapped into the operand dtype."""
    def oracle(*xs: np.ndarray) -> np.ndarray:
        dt = xs[0].dtype
        bx = np.broadcast_arrays(*xs)
        flat = [x.ravel().tolist() for x in bx]
        bits = 8 * dt.itemsize
        out = [wrap(int(fn(*vals, bits)), dt) for vals in zip(*flat)]
        return np.array(out, dtype=dt).reshape(bx[0].shape)
    return oracle


def _tdiv(a: int, b: int, bits: int) -> int:
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _trem(a: int, b: int, bits: int) -> int:
    return a if b == 0 else a - b * _tdiv(a, b, bits)


def _unsigned(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def _shl(a, b, bits):
    b = _unsigned(b, bits)
    return 0 if b >= bits else a << b


def _shr_logical(a, b, bits):
    b = _unsigned(b, bits)
    return 0 if b >= bits else _unsigned(a, bits) >> b


def _shr_arith(a, b, bits):
    b = min(_unsigned(b, bits), bits - 1)
    s = _unsigned(a, bits)
    s = s - (1 << bits) if s >= 1 << (bits - 1) else s
    return s >> b


def _round_away(x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _fmax(a, b):
    return np.where(np.isnan(a) | (a > b), a, b)


def _fmin(a, b):
    return np.where(np.isnan(a) | (a < b), a, b)


def _cmax(a, b):
    gt = (a.real > b.real) | ((a.real == b.real) & (a.imag > b.imag))
    return np.where(np.isnan(a) | gt, a, b)


def _cmin(a, b):
    lt = (a.real < b.real) | ((a.real == b.real) & (a.imag < b.imag))
    return np.where(np.isnan(a) | lt, a, b)


PI_LD = np.longdouble("3.14159265358979323846264338327950288")


def _digamma(x):
    """SciPy's psi where it is accurate (x >= 0.5; it is not for negative x), reflected below:
    psi(x) = psi(1 - x) - pi / tan(pi x), the cotangent in long double."""
    x = np.asarray(x, np.float64)
    f = x - np.round(x)
    cot = (PI_LD / np.tan(PI_LD * f.astype(np.longdouble))).astype(np.float64)
    out = np.where(x >= 0.5, scipy.special.psi(np.maximum(x, 0.5)),
                   scipy.special.psi(1 - np.minimum(x, 0.5)) - cot)
    return np.where((x <= 0) & (f == 0), np.nan, out)


@dataclass(repr=False)
class Op:
    name: str
    fn: Callable
    nin: int
    dtypes: tuple
    oracle: Callable | None = None       # float/complex oracle, computed in high precision
    ioracle: Callable | None = None      # integer/bool oracle (exact)
    tol: float = 0.5                      # ulps, real float32/float64 results
    ctol: float = 4.0                     # ulps, complex results
    domain: tuple = (-10.0, 10.0)
    floor: float = 0.0
    params: dict = field(default_factory=dict)
    scipy_only: bool = False              # oracle has no longdouble version: compute in float64
    tol64: float | None = None            # float64 tolerance, where it differs from ``tol``

    def __repr__(self) -> str:
        return self.name


def _real_ops() -> list[Op]:
    sp = scipy.special
    return [
        Op("add", lax.add, 2, INTS + FLOATS + COMPLEXES, np.add, int_oracle(lambda a, b, n: a + b)),
        Op("sub", lax.sub, 2, INTS + FLOATS + COMPLEXES, np.subtract,
           int_oracle(lambda a, b, n: a - b)),
        Op("mul", lax.mul, 2, INTS + FLOATS + COMPLEXES, np.multiply,
           int_oracle(lambda a, b, n: a * b)),
        Op("div", lax.div, 2, INTS + FLOATS + COMPLEXES, np.divide, int_oracle(_tdiv)),
        Op("rem", lax.rem, 2, INTS + FLOATS, np.fmod, int_oracle(_trem)),
        Op("pow", lax.pow, 2, FLOATS + COMPLEXES, np.power, tol=2, ctol=16, domain=(0.1, 4.0)),
        Op("atan2", lax.atan2, 2, FLOATS, np.arctan2, tol=2),
        Op("max", lax.max, 2, BOOL + INTS + FLOATS + COMPLEXES, _fmax,
           int_oracle(lambda a, b, n: max(a, b)), ctol=0),
        Op("min", lax.min, 2, BOOL + INTS + FLOATS + COMPLEXES, _fmin,
           int_oracle(lambda a, b, n: min(a, b)), ctol=0),
        Op("nextafter", lax.nextafter, 2, FLOATS, None),
        Op("complex", lax.complex, 2, REALS, lambda x, y: x + 1j * y, ctol=0),
        Op("and", lax.bitwise_and, 2, BOOL + INTS, None, int_oracle(lambda a, b, n: a & b)),
        Op("or", lax.bitwise_or, 2, BOOL + INTS, None, int_oracle(lambda a, b, n: a | b)),
        Op("xor", lax.bitwise_xor, 2, BOOL + INTS, None, int_oracle(lambda a, b, n: a ^ b)),
        Op("shift_left", lax.shift_left, 2, INTS, None, int_oracle(_shl)),
        Op("shift_right_logical", lax.shift_right_logical, 2, INTS, None,
           int_oracle(_shr_logical)),
        Op("shift_right_arithmetic", lax.shift_right_arithmetic, 2, INTS, None,
           int_oracle(_shr_arith)),
        Op("eq", lax.eq, 2, BOOL + INTS + FLOATS + COMPLEXES, np.equal,
           int_oracle(lambda a, b, n: a == b)),
        Op("ne", lax.ne, 2, BOOL + INTS + FLOATS + COMPLEXES, np.not_equal,
           int_oracle(lambda a, b, n: a != b)),
        Op("lt", lax.lt, 2, BOOL + INTS + FLOATS, np.less, int_oracle(lambda a, b, n: a < b)),
        Op("le", lax.le, 2, BOOL + INTS + FLOATS, np.less_equal,
           int_oracle(lambda a, b, n: a <= b)),
        Op("gt", lax.gt, 2, BOOL + INTS + FLOATS, np.greater, int_oracle(lambda a, b, n: a > b)),
        Op("ge", lax.ge, 2, BOOL + INTS + FLOATS, np.greater_equal,
           int_oracle(lambda a, b, n: a >= b)),
        Op("clamp", lax.clamp, 3, BOOL + INTS + FLOATS, lambda lo, x, hi: _fmin(_fmax(x, lo), hi),
           int_oracle(lambda lo, x, hi, n: min(max(x, lo), hi))),
        # unary
        Op("neg", lax.neg, 1, INTS + FLOATS + COMPLEXES, np.negative, int_oracle(lambda a, n: -a)),
        Op("sign", lax.sign, 1, INTS + FLOATS + COMPLEXES, np.sign,
           int_oracle(lambda a, n: (a > 0) - (a < 0)), ctol=2),
        Op("abs", lax.abs, 1, SINTS + FLOATS + COMPLEXES, np.abs, int_oracle(lambda a, n: abs(a)),
           ctol=1),
        Op("reciprocal", lax.reciprocal, 1, FLOATS + COMPLEXES, np.reciprocal, ctol=2),
        Op("sqrt", lax.sqrt, 1, FLOATS + COMPLEXES, np.sqrt, ctol=4, domain=(0.0, 100.0)),
        Op("rsqrt", lax.rsqrt, 1, FLOATS + COMPLEXES, lambda x: 1 / np.sqrt(x), tol=1.5,
           domain=(0.01, 100.0)),
        Op("cbrt", lax.cbrt, 1, FLOATS, np.cbrt, tol=3),
        Op("integer_pow", lambda x: lax.integer_pow(x, 3), 1, INTS + FLOATS + COMPLEXES,
           lambda x: x * x * x, int_oracle(lambda a, n: a ** 3), tol=2, ctol=8),
        Op("exp", lax.exp, 1, FLOATS + COMPLEXES, np.exp, tol=1),
        Op("exp2", lax.exp2, 1, FLOATS + COMPLEXES, np.exp2, tol=2, ctol=8),
        Op("expm1", lax.expm1, 1, FLOATS + COMPLEXES, np.expm1, tol=2, ctol=8),
        Op("log", lax.log, 1, FLOATS + COMPLEXES, np.log, tol=2, domain=(0.001, 100.0)),
        Op("log1p", lax.log1p, 1, FLOATS + COMPLEXES, np.log1p, tol=2, ctol=8,
           domain=(-0.99, 10.0)),
        Op("logistic", lax.logistic, 1, FLOATS + COMPLEXES, lambda x: 1 / (1 + np.exp(-x)),
           tol=3, ctol=8),
        Op("sin", lax.sin, 1, FLOATS + COMPLEXES, np.sin, tol=2),
        Op("cos", lax.cos, 1, FLOATS + COMPLEXES, np.cos, tol=2),
        Op("tan", lax.tan, 1, FLOATS + COMPLEXES, np.tan, tol=2, domain=(-1.5, 1.5)),
        Op("asin", lax.asin, 1, FLOATS + COMPLEXES, np.arcsin, tol=2, domain=(-0.99, 0.99)),
        Op("acos", lax.acos, 1, FLOATS + COMPLEXES, np.arccos, tol=2, domain=(-0.99, 0.99)),
        Op("atan", lax.atan, 1, FLOATS + COMPLEXES, np.arctan, tol=2),
        Op("sinh", lax.sinh, 1, FLOATS + COMPLEXES, np.sinh, tol=2, domain=(-5.0, 5.0)),
        Op("cosh", lax.cosh, 1, FLOATS + COMPLEXES, np.cosh, tol=2, domain=(-5.0, 5.0)),
        Op("tanh", lax.tanh, 1, FLOATS + COMPLEXES, np.tanh, tol=2, ctol=8, domain=(-5.0, 5.0)),
        Op("asinh", lax.asinh, 1, FLOATS + COMPLEXES, np.arcsinh, tol=2),
        Op("acosh", lax.acosh, 1, FLOATS + COMPLEXES, np.arccosh, tol=2, domain=(1.0, 10.0)),
        Op("atanh", lax.atanh, 1, FLOATS + COMPLEXES, np.arctanh, tol=2, domain=(-0.99, 0.99)),
        Op("floor", lax.floor, 1, FLOATS, np.floor),
        Op("ceil", lax.ceil, 1, FLOATS, np.ceil),
        Op("round", lax.round, 1, FLOATS, _round_away),
        Op("round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), 1, FLOATS,
           np.rint),
        Op("trunc", lax.trunc, 1, FLOATS, np.trunc),
        Op("is_finite", lax.is_finite, 1, FLOATS, np.isfinite),
        Op("erf", lax.erf, 1, FLOATS, sp.erf, tol=2, domain=(-4.0, 4.0), scipy_only=True),
        # SciPy's float64 erfc is off by up to 32 ulp (measured against mpmath; ours: 2)
        Op("erfc", lax.erfc, 1, FLOATS, sp.erfc, tol=4, domain=(-4.0, 8.0), scipy_only=True,
           tol64=40),
        # float32: Giles' single-precision approximation, as XLA (measured 8.3 ulp)
        Op("erf_inv", lax.erf_inv, 1, FLOATS, sp.erfinv, tol=10, domain=(-0.999, 0.999),
           scipy_only=True, tol64=3),
        Op("lgamma", lax.lgamma, 1, FLOATS, sp.gammaln, tol=4, floor=1.0, scipy_only=True),
        Op("digamma", lax.digamma, 1, FLOATS, _digamma, tol=8, floor=1.0, scipy_only=True),
        Op("not", lax.bitwise_not, 1, BOOL + INTS, None, int_oracle(lambda a, n: ~a)),
        Op("population_count", lax.population_count, 1, INTS, None,
           int_oracle(lambda a, n: bin(_unsigned(a, n)).count("1"))),
        Op("clz", lax.clz, 1, INTS, None,
           int_oracle(lambda a, n: n - _unsigned(a, n).bit_length())),
        Op("real", lax.real, 1, COMPLEXES, np.real, ctol=0),
        Op("imag", lax.imag, 1, COMPLEXES, np.imag, ctol=0),
        Op("conj", lax.conj, 1, REALS + COMPLEXES, np.conj, ctol=0),
    ]


OPS = _real_ops()
OPS_BY_NAME = {op.name: op for op in OPS}
PAIRS = [(op, dt) for op in OPS for dt in op.dtypes]


# ---------------------------------------------------------------------------------------------
# operands

def operand(op: Op, dt: np.dtype, shape, rng: np.random.Generator, i: int = 0) -> np.ndarray:
    """A random operand of ``dt`` for ``op``: the whole range for integers (small shift amounts
    and exponents included), ``op.domain`` for floats."""
    if dt == D.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if op.name.startswith("shift") and i == 1:
            return rng.integers(-2, 8 * dt.itemsize + 3, shape).astype(dt)
        if op.name in ("div", "rem") and i == 1:
            small = rng.integers(max(info.min, -5), 6, shape)
            big = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
            return np.where(rng.random(shape) < 0.5, small, big).astype(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    lo, hi = op.domain
    rd = real_dtype(dt)
    if dt.kind == "c":
        x = rng.uniform(lo, hi, shape) + 1j * rng.uniform(-3, 3, shape)
        if op.name in ("log", "sqrt", "rsqrt", "pow", "log1p"):
            x = rng.uniform(0.1, 4, shape) * np.exp(1j * rng.uniform(-3, 3, shape))
        return x.astype(dt)
    x = rng.uniform(lo, hi, shape).astype(rd)
    if op.name in ("round", "round_even", "floor", "ceil", "trunc"):
        x = (np.round(x * 2) / 2).astype(rd)  # many exact halves
    return x


def operands(op: Op, dt: np.dtype, shape, rng: np.random.Generator) -> list[np.ndarray]:
    xs = [np.asarray(operand(op, dt, shape, rng, i)) for i in range(op.nin)]
    if op.name in ("lgamma", "digamma"):  # avoid the poles, keep negative arguments
        xs[0] = np.where(xs[0] == np.round(xs[0]), xs[0] + np.asarray(0.25, dt), xs[0]).astype(dt)
    if op.name == "clamp":
        lo, hi = np.asarray(np.minimum(xs[0], xs[2])), np.asarray(np.maximum(xs[0], xs[2]))
        xs[0], xs[2] = lo, hi
    return xs


def run(op: Op, *xs: np.ndarray) -> np.ndarray:
    out = op.fn(*[pb.Array(x) for x in xs])
    return np.asarray(out)


def reference(op: Op, *xs: np.ndarray) -> np.ndarray:
    """The same lax call on the reference backend (each primitive's NumPy rule)."""
    pb.config.update("backend", "reference")
    try:
        return run(op, *xs)
    finally:
        pb.config.update("backend", "cpu")


def check_against_oracle(op: Op, dt: np.dtype, xs: list[np.ndarray], got: np.ndarray) -> None:
    """The independent check: exact for integers/bool, ulp-bounded for floats."""
    if dt.kind in "biu" and op.ioracle is not None:
        np.testing.assert_array_equal(got, op.ioracle(*xs))
        return
    if op.name == "nextafter":
        expect = np.nextafter(xs[0].astype(np.float32) if dt in HALVES else xs[0],
                              xs[1].astype(np.float32) if dt in HALVES else xs[1])
        if dt in HALVES:  # one step of the half type: the neighbour in the direction of y
            assert np.all((got.astype(np.float32) - xs[0].astype(np.float32)) *
                          np.sign(xs[1].astype(np.float32) - xs[0].astype(np.float32)) >= 0)
            assert np.all(ulp_error(got, xs[0].astype(np.float64), dt) <= 1.0)
        else:
            np.testing.assert_array_equal(got, expect)
        return
    hp = oracle_precision(dt)
    if op.scipy_only or dt in HALVES:
        hp = np.float64
    with np.errstate(all="ignore"):
        exact = np.asarray(op.oracle(*[x.astype(hp) for x in xs]))
    if got.dtype == D.bool_:
        np.testing.assert_array_equal(got, exact)
        return
    tol = 1.0 if dt in HALVES else (op.ctol if got.dtype.kind == "c" or dt.kind == "c" else op.tol)
    if dt == D.float64 and op.tol64 is not None:
        tol = op.tol64
    elif op.scipy_only and dt == D.float64:
        tol += 1  # SciPy's float64 oracle has its own rounding error
    err = ulp_error(got, exact, got.dtype, op.floor)
    worst = int(np.argmax(err)) if err.size else 0
    assert err.size == 0 or err.max() <= max(tol, 0.5) + 1e-9, (
        f"{op.name}[{dt}]: {err.max():.3g} ulp > {tol} at input "
        f"{[x.ravel()[worst] for x in np.broadcast_arrays(*xs)]}: got {got.ravel()[worst]}, "
        f"want {exact.ravel()[worst]}")


# ---------------------------------------------------------------------------------------------
# values: every op on every dtype it defines

def check_against_reference(op: Op, dt: np.dtype, got: np.ndarray, want: np.ndarray) -> None:
    """Bitwise equal where both sides are exact (integer/bool results, correctly rounded ops);
    else within the op's tolerance of each other (different libm or polynomial)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    complex_in = dt.kind == "c"
    if got.dtype.kind in "biu" or (not complex_in and op.tol <= 0.5) or (complex_in and op.ctol == 0):
        np.testing.assert_array_equal(got, want)
        return
    tol = 1.0 if dt in HALVES else 2 * (op.ctol if complex_in else op.tol)
    if dt == D.float64 and op.tol64 is not None:
        tol = op.tol64
    err = ulp_error(got, want.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
                    if got.dtype != D.float64 and got.dtype != D.complex128 else want,
                    got.dtype, op.floor)
    assert err.max(initial=0) <= tol, f"{op.name}[{dt}]: cpu and reference differ by {err.max()} ulp"


@pytest.mark.parametrize("op, dt", PAIRS, ids=[f"{op.name}-{dt}" for op, dt in PAIRS])
def test_values(op, dt):
    rng = np.random.default_rng(abs(hash((op.name, str(dt)))) % 2**32)
    xs = operands(op, dt, (7, 33), rng)
    got = run(op, *xs)
    assert got.shape == (7, 33)
    check_against_reference(op, dt, got, reference(op, *xs))
    check_against_oracle(op, dt, xs, got)


# ---------------------------------------------------------------------------------------------
# shapes and layouts: kernels read any strides and write fresh C-contiguous outputs

LAYOUTS = ("contiguous", "strided", "broadcast", "flipped", "transposed", "scalar")


def in_layout(x: np.ndarray, layout: str) -> np.ndarray:
    """The values of ``x`` (or, for broadcast/scalar, a stand-in of its shape) in ``layout``."""
    if layout == "strided":
        big = np.empty(x.shape[:-1] + (2 * x.shape[-1],), x.dtype) if x.ndim else x.copy()
        if x.ndim:
            big[..., ::2] = x
            return big[..., ::2]
        return big
    if layout == "broadcast":  # zero strides along every axis but the last
        row = x.reshape(-1)[: x.shape[-1]] if x.ndim and x.size else x
        return np.broadcast_to(row, x.shape) if x.ndim and x.size else x
    if layout == "flipped":
        return np.flip(np.flip(x).copy()) if x.ndim else x
    if layout == "transposed":
        return np.ascontiguousarray(x.T).T if x.ndim > 1 else x
    if layout == "scalar":
        return np.asarray(x.reshape(-1)[0]).reshape(()) if x.size else x
    return x.copy(order="C")


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@given(st.data())
def test_shapes_and_layouts(data):
    op = data.draw(st.sampled_from(OPS), label="op")
    dt = data.draw(st.sampled_from(op.dtypes), label="dtype")
    shape = data.draw(shapes, label="shape")
    layouts = [data.draw(st.sampled_from(LAYOUTS), label=f"layout{i}") for i in range(op.nin)]
    if all(lay == "scalar" for lay in layouts) and shape:
        layouts[0] = "contiguous"
    if op.name == "clamp" and layouts[1] == "scalar":  # only the bounds may be scalars
        layouts[1] = "contiguous"
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    xs = [in_layout(x, lay) for x, lay in zip(operands(op, dt, shape, rng), layouts)]
    got = run(op, *xs)
    out_shape = max((x.shape for x in xs), key=len)
    assert got.shape == out_shape and got.flags.c_contiguous
    check_against_reference(op, dt, got, reference(op, *xs))
    if got.size:
        check_against_oracle(op, dt, [np.broadcast_to(x, out_shape) for x in xs], got)


@pytest.mark.parametrize("layout", LAYOUTS[1:5])
@pytest.mark.parametrize("name, dt", [("add", D.float32), ("mul", D.int16), ("exp", D.float64),
                                      ("lt", D.bfloat16), ("clamp", D.float16),
                                      ("sin", D.complex64), ("abs", D.complex128),
                                      ("shift_left", D.uint8)])
def test_each_layout_against_a_contiguous_copy(name, dt, layout):
    op = OPS_BY_NAME[name]
    xs = operands(op, dt, (5, 3, 6), np.random.default_rng(3))
    views = [in_layout(x, layout) for x in xs]
    assert any(not v.flags.c_contiguous for v in views) or layout == "broadcast"
    copies = [np.ascontiguousarray(v) for v in views]
    np.testing.assert_array_equal(run(op, *views), run(op, *copies))


def test_large_inputs_split_over_threads_match_small_chunks():
    # above the OpenMP grain the work is split; every element must still be computed once
    x = np.linspace(-20, 20, 600_001, dtype=np.float32)
    got = run(OPS_BY_NAME["exp"], x)
    parts = np.concatenate([run(OPS_BY_NAME["exp"], c) for c in np.array_split(x, 7)])
    np.testing.assert_array_equal(got, parts)
    y = np.arange(1_000_003, dtype=np.int64)[::-1]
    np.testing.assert_array_equal(run(OPS_BY_NAME["add"], y, y), 2 * y)


# ---------------------------------------------------------------------------------------------
# select_n

def test_select_n_with_a_bool_which():
    which = np.array([True, False, True, False])
    a, b = np.arange(4.0, dtype=np.float32), -np.arange(4.0, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(lax.select_n(which, a, b)), [-0.0, 1, -2, 3])
    np.testing.assert_array_equal(np.asarray(lax.select_n(np.bool_(True), a, b)), b)
    np.testing.assert_array_equal(np.asarray(lax.select_n(True, a, b)), b)


@pytest.mark.parametrize("dt", [D.bool_, D.int8, D.bfloat16, D.int32, D.float64, D.complex128])
@pytest.mark.parametrize("ncases", [1, 2, 3, 6, 7, 13])
def test_select_n_with_an_int32_which_clamps_out_of_range(dt, ncases):
    rng = np.random.default_rng(ncases)
    cases = [(rng.normal(size=(4, 5)) * 10).astype(dt) for _ in range(ncases)]
    which = rng.integers(-3, ncases + 3, (4, 5)).astype(np.int32)
    got = np.asarray(lax.select_n(which, *cases))
    idx = np.clip(which, 0, ncases - 1)
    want = np.choose(idx, cases)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(got.view(np.uint8), reference_select(which, *cases).view(np.uint8))


def reference_select(which, *cases):
    pb.config.update("backend", "reference")
    try:
        return np.asarray(lax.select_n(which, *cases))
    finally:
        pb.config.update("backend", "cpu")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_select_n_layouts(layout):
    rng = np.random.default_rng(1)
    shape = (3, 4, 5)
    which = in_layout(rng.integers(0, 3, shape).astype(np.int32), layout)
    cases = [in_layout(rng.normal(size=shape), lay) for lay in ("flipped", layout, "strided")]
    if which.ndim:  # the cases set the shape; which may be 0-d
        cases = [np.broadcast_to(c, shape) for c in cases]
    else:
        cases = [np.broadcast_to(c, shape).copy() for c in cases]
    got = np.asarray(lax.select_n(which, *cases))
    want = np.choose(np.broadcast_to(which, shape), [np.asarray(c) for c in cases])
    np.testing.assert_array_equal(got, want)
