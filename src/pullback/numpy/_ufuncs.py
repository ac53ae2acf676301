"""Element-wise functions (NumPy's ufuncs) with NumPy broadcasting and JAX's type promotion.

Integer floor division and modulo follow Python (the quotient rounds toward -inf, the
remainder takes the divisor's sign); lax's div/rem are C's, so they are adjusted here.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..primitives import elementwise as ew
from ..primitives.elementwise import gcd_p, lcm_p
from ..tracer import dtypes, executor
from ..tracer.array import Array
from ..transforms.custom_derivatives import custom_jvp
from ._promotion import (aval_of, broadcast_all, broadcast_args, convert, eager_binary,
                         promote_args, promote_args_inexact, promote_args_numeric,
                         promote_dtypes, promote_dtypes_inexact)

eager = executor.installed().eager  # the eager short paths (backends/eager.py)

_max_p, _min_p = ew.max_p, ew.min_p

ArrayLike = Any


def _dtype(x: Any) -> np.dtype:
    return aval_of(x).dtype


def _is_bool(x: Any) -> bool:
    return _dtype(x) == dtypes.bool_


def _is_int(x: Any) -> bool:
    return dtypes.is_integer(_dtype(x))


def _is_signed(x: Any) -> bool:
    return _dtype(x).kind == "i"


def _is_complex(x: Any) -> bool:
    return dtypes.is_complex(_dtype(x))


# ---- arithmetic ----

def add(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise ``x + y`` (logical or for booleans, as JAX)."""
    x, y = promote_args("add", x, y)
    return lax.bitwise_or(x, y) if _is_bool(x) else lax.add(x, y)


def subtract(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise ``x - y``."""
    x, y = promote_args("subtract", x, y)
    if _is_bool(x):
        raise TypeError("subtract: boolean subtract is not supported; use logical_xor")
    return lax.sub(x, y)


def multiply(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise ``x * y`` (logical and for booleans, as JAX)."""
    x, y = promote_args("multiply", x, y)
    return lax.bitwise_and(x, y) if _is_bool(x) else lax.mul(x, y)


def true_divide(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise ``x / y`` in floating point (integers are promoted to float)."""
    x, y = promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


divide = true_divide


def _float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    # Python semantics from C's fmod: fix up where the remainder's sign differs from y's
    mod = lax.rem(x, y)
    # x / ±0 is ±inf (or NaN for 0 / 0), as in NumPy and JAX; x - NaN would make it NaN
    zero_y = lax.eq(y, lax.full_like(y, 0))
    div = lax.div(lax.select_n(zero_y, lax.sub(x, mod), x), y)
    fix = lax.bitwise_and(lax.ne(mod, lax.full_like(mod, 0)),
                          lax.ne(lax.sign(y), lax.sign(mod)))
    mod = lax.select_n(fix, mod, lax.add(mod, y))
    div = lax.select_n(fix, div, lax.sub(div, lax.full_like(div, 1)))
    return lax.round(div, lax.RoundingMethod.TO_NEAREST_EVEN), mod


def _int_floordiv(x: Any, y: Any) -> Any:
    # JAX's rule over XLA's total division (x / 0 = -1, all bits set): the truncated quotient
    # steps down where the signs differ and the division is inexact, which also makes a
    # non-zero x // 0 give -2 as in JAX (sign(0) differs from sign(x), x % 0 = x)
    q = lax.div(x, y)
    if not _is_signed(x):
        return q
    zero = lax.full_like(x, 0)
    fix = lax.bitwise_and(lax.ne(lax.rem(x, y), zero), lax.ne(lax.sign(x), lax.sign(y)))
    return lax.select_n(fix, q, lax.sub(q, lax.full_like(q, 1)))


def _int_nonzero_divisor(y: Any) -> Any:
    """An integer divisor with its zeros replaced by one: JAX's remainder and fmod by an
    integer zero are 0 (x % 1), not XLA's x."""
    return lax.select_n(lax.eq(y, lax.full_like(y, 0)), y, lax.full_like(y, 1))


def floor_divide(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise ``x // y`` with Python semantics (rounds toward negative infinity)."""
    x, y = promote_args_numeric("floor_divide", x, y)
    if _is_int(x):
        return _int_floordiv(x, y)
    if _is_complex(x):
        raise TypeError("floor_divide: complex operands are not supported")
    return _float_divmod(x, y)[0]


def remainder(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise ``x % y`` with Python semantics (the result takes the sign of ``y``)."""
    x, y = promote_args_numeric("remainder", x, y)
    if _is_complex(x):
        raise TypeError("remainder: complex operands are not supported")
    if _is_int(x):
        y = _int_nonzero_divisor(y)
    r = lax.rem(x, y)
    if _is_int(x) and not _is_signed(x):
        return r
    zero = lax.full_like(r, 0)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(y, zero)))
    return lax.select_n(fix, r, lax.add(r, y))


mod = remainder


def fmod(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise C remainder (the sign of ``x``)."""
    # as JAX: an integer zero divisor gives 0, but bool operands (counted as int32) keep
    # XLA's remainder by zero (the dividend)
    integer = _is_int(promote_dtypes("fmod", x, y)[0])
    x, y = promote_args_numeric("fmod", x, y)
    return lax.rem(x, _int_nonzero_divisor(y) if integer else y)


def divmod(x: ArrayLike, y: ArrayLike, /) -> tuple[Any, Any]:  # noqa: A001
    """``(floor_divide(x, y), remainder(x, y))``."""
    x, y = promote_args_numeric("divmod", x, y)  # (rank promotion is reported as divmod's)
    return floor_divide(x, y), remainder(x, y)


def _int_pow(x: Any, y: Any) -> Any:
    # square-and-multiply over the exponent's bits (integer exponents may be traced)
    nbits = _dtype(y).itemsize * 8
    one = lax.full_like(x, 1)
    acc, base, e = one, x, y
    zero_e = lax.full_like(e, 0)
    for _ in range(nbits):
        bit = lax.ne(lax.bitwise_and(e, lax.full_like(e, 1)), zero_e)
        acc = lax.select_n(bit, acc, lax.mul(acc, base))
        base = lax.mul(base, base)
        e = lax.shift_right_logical(e, lax.full_like(e, 1))
    if _is_signed(y):  # negative powers of integers: 1, +-1 for |x| == 1, else 0
        neg = lax.lt(y, zero_e)
        odd = lax.ne(lax.bitwise_and(y, lax.full_like(y, 1)), zero_e)
        m1 = lax.eq(x, lax.full_like(x, -1))
        negval = lax.select_n(lax.eq(x, one), lax.select_n(m1, lax.full_like(x, 0),
                              lax.select_n(odd, one, lax.neg(one))), one)
        acc = lax.select_n(neg, acc, negval)
    return acc


def power(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise ``x ** y``. A Python-int exponent uses repeated multiplication
    (``integer_pow``), as JAX does."""
    if isinstance(y, int) and not isinstance(y, bool):
        if type(x) is Array and x._aval.dtype != dtypes.bool_ and (
                y >= 0 or dtypes.is_inexact(x._aval.dtype)):
            # eager Array ** int: the kernel by the short path, as x * x takes (same result)
            out = eager.call1(ew.integer_pow_p, x, {"y": y})
            if out is not None:
                return out
        (x,) = promote_dtypes("power", x)
        if _is_bool(x):
            x = convert(x, dtypes.to_numeric(dtypes.bool_))
        if y >= 0 or not _is_int(x):
            return lax.integer_pow(x, y)
    x, y = promote_args_numeric("power", x, y)
    if _is_int(x):
        return _int_pow(x, y)
    return lax.pow(x, y)


pow = power  # noqa: A001


def float_power(x: ArrayLike, y: ArrayLike, /) -> Any:
    """``x ** y`` computed in float64 (or complex128)."""
    x, y = promote_args_inexact("float_power", x, y)
    target = dtypes.complex128 if _is_complex(x) else dtypes.float64
    return lax.pow(convert(x, target), convert(y, target))


def negative(x: ArrayLike, /) -> Any:
    """Element-wise ``-x``."""
    (x,) = promote_args("negative", x)
    if _is_bool(x):
        raise TypeError("negative: boolean negative is not supported; use logical_not")
    return lax.neg(x)


def positive(x: ArrayLike, /) -> Any:
    """Element-wise ``+x``."""
    (x,) = promote_args("positive", x)
    return x


def absolute(x: ArrayLike, /) -> Any:
    """Element-wise absolute value (the magnitude for complex)."""
    (x,) = promote_args("absolute", x)
    if _is_bool(x) or (_is_int(x) and not _is_signed(x)):
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001


def sign(x: ArrayLike, /) -> Any:
    """Element-wise sign: -1, 0 or 1 (x / |x| for complex)."""
    (x,) = promote_args_numeric("sign", x)
    return lax.sign(x)


def reciprocal(x: ArrayLike, /) -> Any:
    """Element-wise ``1 / x`` (integer division for integers, as NumPy)."""
    (x,) = promote_args_numeric("reciprocal", x)
    if _is_int(x):
        return lax.div(lax.full_like(x, 1), x)
    return lax.reciprocal(x)


def square(x: ArrayLike, /) -> Any:
    """Element-wise ``x * x``."""
    (x,) = promote_args_numeric("square", x)
    return lax.square(x)


def _prim_of(op: Any) -> Any:
    """The primitive a lax element-wise function binds on its operand alone (None for
    composites)."""
    return getattr(op, "primitive", None)


def _inexact_unary(name: str, op: Any, doc: str) -> Any:
    prim = _prim_of(op)

    def f(x: ArrayLike, /) -> Any:
        if prim is not None and type(x) is Array and dtypes.is_inexact(x._aval.dtype):
            out = eager.unary(prim, x)  # (what the general path binds: op on x as it is)
            if out is not None:
                return out
        (x,) = promote_args_inexact(name, x)
        return op(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


sqrt = _inexact_unary("sqrt", lax.sqrt, "Element-wise square root.")
cbrt = _inexact_unary("cbrt", lax.cbrt, "Element-wise cube root.")
exp = _inexact_unary("exp", lax.exp, "Element-wise exponential.")
exp2 = _inexact_unary("exp2", lax.exp2, "Element-wise ``2 ** x``.")
expm1 = _inexact_unary("expm1", lax.expm1, "Element-wise ``exp(x) - 1``.")
log = _inexact_unary("log", lax.log, "Element-wise natural logarithm.")
log1p = _inexact_unary("log1p", lax.log1p, "Element-wise ``log(1 + x)``.")
log2 = _inexact_unary("log2", lambda x: lax.div(lax.log(x), lax.log(lax.full_like(x, 2))),
                      "Element-wise base-2 logarithm.")
log10 = _inexact_unary("log10", lambda x: lax.div(lax.log(x), lax.log(lax.full_like(x, 10))),
                       "Element-wise base-10 logarithm.")
sin = _inexact_unary("sin", lax.sin, "Element-wise sine.")
cos = _inexact_unary("cos", lax.cos, "Element-wise cosine.")
tan = _inexact_unary("tan", lax.tan, "Element-wise tangent.")
arcsin = _inexact_unary("arcsin", lax.asin, "Element-wise inverse sine.")
arccos = _inexact_unary("arccos", lax.acos, "Element-wise inverse cosine.")
arctan = _inexact_unary("arctan", lax.atan, "Element-wise inverse tangent.")
sinh = _inexact_unary("sinh", lax.sinh, "Element-wise hyperbolic sine.")
cosh = _inexact_unary("cosh", lax.cosh, "Element-wise hyperbolic cosine.")
tanh = _inexact_unary("tanh", lax.tanh, "Element-wise hyperbolic tangent.")
arcsinh = _inexact_unary("arcsinh", lax.asinh, "Element-wise inverse sinh.")
arccosh = _inexact_unary("arccosh", lax.acosh, "Element-wise inverse cosh.")
arctanh = _inexact_unary("arctanh", lax.atanh, "Element-wise inverse tanh.")
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh
deg2rad = _inexact_unary("deg2rad", lambda x: lax.mul(x, lax.full_like(x, np.pi / 180)),
                         "Degrees to radians.")
rad2deg = _inexact_unary("rad2deg", lambda x: lax.mul(x, lax.full_like(x, 180 / np.pi)),
                         "Radians to degrees.")
radians, degrees = deg2rad, rad2deg


def sinc(x: ArrayLike, /) -> Any:
    """Normalized sinc: ``sin(pi x) / (pi x)``, 1 at 0."""
    (x,) = promote_args_inexact("sinc", x)
    zero = lax.eq(x, lax.full_like(x, 0))
    safe = lax.select_n(zero, x, lax.full_like(x, 1))
    pix = lax.mul(safe, lax.full_like(x, np.pi))
    return lax.select_n(zero, lax.div(lax.sin(pix), pix), lax.full_like(x, 1))


def arctan2(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Element-wise ``atan2(x1, x2)``, the angle of (x2, x1) in (-pi, pi]."""
    x1, x2 = promote_args_inexact("arctan2", x1, x2)
    return lax.atan2(x1, x2)


atan2 = arctan2


def hypot(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Element-wise ``sqrt(x1**2 + x2**2)``, without intermediate overflow; inf wherever
    either input is infinite, even when the other is NaN (IEEE's and JAX's hypot)."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if _is_complex(x1):
        raise ValueError("hypot: arguments 'x1' and 'x2' must be real; hypot is not well "
                         "defined for complex values (take abs() first)")
    a, b = lax.abs(x1), lax.abs(x2)
    inf = lax.full_like(a, np.inf)
    either_inf = lax.bitwise_or(lax.eq(a, inf), lax.eq(b, inf))
    hi, lo = lax.max(a, b), lax.min(a, b)
    zero_hi = lax.eq(hi, lax.full_like(hi, 0))
    r = lax.div(lo, lax.select_n(zero_hi, hi, lax.full_like(hi, 1)))
    out = lax.mul(hi, lax.sqrt(lax.add(lax.full_like(r, 1), lax.mul(r, r))))
    return lax.select_n(either_inf, lax.select_n(zero_hi, out, hi), inf)


@custom_jvp
def _logaddexp(x1: Any, x2: Any) -> Any:
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    nan = lax.ne(delta, delta)  # inf - inf, or a NaN input
    out = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    return lax.select_n(nan, out, lax.add(x1, x2))


@_logaddexp.defjvp
def _logaddexp_jvp(primals: tuple, tangents: tuple) -> tuple:
    # d out / d xi = exp(xi - out): 0.5 each at a tie, as JAX (differentiating the max and the
    # |x1 - x2| above would give 0 and 1). Where xi is the result itself (xi = +inf, or the
    # other operand negligible), the weight is exp(0) = 1 rather than exp(inf - inf).
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp(x1, x2)

    def weight(x: Any) -> Any:
        d = lax.sub(x, out)
        return lax.exp(lax.select_n(lax.eq(x, out), d, lax.full_like(d, 0)))
    return out, lax.add(lax.mul(t1, weight(x1)), lax.mul(t2, weight(x2)))


def logaddexp(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """``log(exp(x1) + exp(x2))`` without overflow; its derivative in ``x1`` is
    ``exp(x1 - logaddexp(x1, x2))`` (0.5 where the operands are equal)."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(x1, x2)


def logaddexp2(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """``log2(2**x1 + 2**x2)`` without overflow."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    ln2 = np.log(2)
    out = logaddexp(lax.mul(x1, lax.full_like(x1, ln2)), lax.mul(x2, lax.full_like(x2, ln2)))
    return lax.div(out, lax.full_like(out, ln2))


# ---- rounding ----

def _keep_ints(name: str, op: Any, doc: str) -> Any:
    def f(x: ArrayLike, /) -> Any:
        (x,) = promote_args_numeric(name, x)
        return x if _is_int(x) else op(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


floor = _keep_ints("floor", lax.floor, "Element-wise floor.")
ceil = _keep_ints("ceil", lax.ceil, "Element-wise ceiling.")
trunc = _keep_ints("trunc", lax.trunc, "Element-wise rounding toward zero.")
fix = trunc
rint = _keep_ints("rint", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                  "Element-wise rounding to the nearest integer, halves to even.")


def round(a: ArrayLike, decimals: int = 0, out: None = None) -> Any:  # noqa: A001
    """Round to ``decimals`` decimal places, halves to even (as NumPy)."""
    if out is not None:
        raise TypeError("round: the 'out' argument is not supported (arrays are immutable)")
    (a,) = promote_args_numeric("round", a)
    if _is_int(a):
        if decimals >= 0:
            return a
        f = 10 ** (-decimals)
        return lax.mul(floor_divide(lax.add(a, lax.full_like(a, f // 2)), f), lax.full_like(a, f))
    if _is_complex(a):
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    if decimals == 0:
        return lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)
    f = lax.full_like(a, 10.0 ** decimals)
    return lax.div(lax.round(lax.mul(a, f), lax.RoundingMethod.TO_NEAREST_EVEN), f)


around = round_ = round


# ---- comparisons and predicates ----

def _compare(name: str, op: Any) -> Any:
    def f(x: ArrayLike, y: ArrayLike, /) -> Any:
        x, y = promote_args(name, x, y)
        return op(x, y)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Element-wise ``{name}`` comparison, as a boolean array."
    return f


equal = _compare("equal", lax.eq)
not_equal = _compare("not_equal", lax.ne)
less = _compare("less", lax.lt)
less_equal = _compare("less_equal", lax.le)
greater = _compare("greater", lax.gt)
greater_equal = _compare("greater_equal", lax.ge)


def maximum(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise maximum, propagating NaN."""
    out = eager_binary(_max_p, x, y, False)
    if out is not None:
        return out
    x, y = promote_args("maximum", x, y)
    return lax.bitwise_or(x, y) if _is_bool(x) else lax.max(x, y)


def minimum(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise minimum, propagating NaN."""
    out = eager_binary(_min_p, x, y, False)
    if out is not None:
        return out
    x, y = promote_args("minimum", x, y)
    return lax.bitwise_and(x, y) if _is_bool(x) else lax.min(x, y)


def fmax(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise maximum, ignoring NaN where the other operand is a number."""
    x, y = promote_args("fmax", x, y)
    if not dtypes.is_inexact(_dtype(x)):
        return maximum(x, y)
    # x where it is larger or y is NaN, else y (a tie's derivative goes to y, as in JAX)
    return lax.select(lax.bitwise_or(lax.gt(x, y), isnan(y)), x, y)


def fmin(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise minimum, ignoring NaN where the other operand is a number."""
    x, y = promote_args("fmin", x, y)
    if not dtypes.is_inexact(_dtype(x)):
        return minimum(x, y)
    return lax.select(lax.bitwise_or(lax.lt(x, y), isnan(y)), x, y)


def clip(arr: ArrayLike, min: ArrayLike | None = None, max: ArrayLike | None = None,  # noqa: A002
         *, a_min: ArrayLike | None = None, a_max: ArrayLike | None = None) -> Any:
    """``arr`` limited to [min, max] (either bound may be None)."""
    lo = min if min is not None else a_min
    hi = max if max is not None else a_max
    out = arr
    if lo is not None:
        out = maximum(out, lo)
    if hi is not None:
        out = minimum(out, hi)
    return promote_args("clip", out)[0]


def isnan(x: ArrayLike, /) -> Any:
    """Element-wise test for NaN."""
    (x,) = promote_args("isnan", x)
    if not dtypes.is_inexact(_dtype(x)):
        return lax.full_like(x, False, dtypes.bool_)
    return lax.ne(x, x)


def isfinite(x: ArrayLike, /) -> Any:
    """Element-wise test for finite values (not inf, not NaN)."""
    (x,) = promote_args("isfinite", x)
    if not dtypes.is_inexact(_dtype(x)):
        return lax.full_like(x, True, dtypes.bool_)
    if _is_complex(x):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def isinf(x: ArrayLike, /) -> Any:
    """Element-wise test for positive or negative infinity."""
    (x,) = promote_args("isinf", x)
    if not dtypes.is_inexact(_dtype(x)):
        return lax.full_like(x, False, dtypes.bool_)
    if _is_complex(x):
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    return lax.eq(lax.abs(x), lax.full_like(x, np.inf))


def isposinf(x: ArrayLike, /) -> Any:
    """Element-wise test for +inf."""
    (x,) = promote_args("isposinf", x)
    return lax.eq(x, lax.full_like(x, np.inf)) if dtypes.is_float(_dtype(x)) else \
        lax.full_like(x, False, dtypes.bool_)


def isneginf(x: ArrayLike, /) -> Any:
    """Element-wise test for -inf."""
    (x,) = promote_args("isneginf", x)
    return lax.eq(x, lax.full_like(x, -np.inf)) if dtypes.is_float(_dtype(x)) else \
        lax.full_like(x, False, dtypes.bool_)


def signbit(x: ArrayLike, /) -> Any:
    """Element-wise test of the sign bit (True for -0.0 and negative NaN)."""
    (x,) = promote_args_numeric("signbit", x)
    dt = _dtype(x)
    if _is_int(x):
        return lax.lt(x, lax.full_like(x, 0)) if dt.kind == "i" else \
            lax.full_like(x, False, dtypes.bool_)
    itype = {2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}[dt.itemsize]
    bits = lax.bitcast_convert_type(x, itype)
    return lax.lt(bits, lax.full_like(bits, 0))


def copysign(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """``|x1|`` with the sign of ``x2``."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    return lax.select_n(signbit(x2), lax.abs(x1), lax.neg(lax.abs(x1)))


def nextafter(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """The next representable value after ``x1`` toward ``x2``."""
    x1, x2 = promote_args_inexact("nextafter", x1, x2)
    return lax.nextafter(x1, x2)


def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    """Element-wise ``|a - b| <= atol + rtol * |b|`` (infinities equal only to themselves)."""
    a, b = promote_args("isclose", a, b)
    if not dtypes.is_inexact(_dtype(a)):
        return lax.eq(a, b)
    diff = lax.abs(lax.sub(a, b))
    tol = lax.add(lax.full_like(diff, atol), lax.mul(lax.full_like(diff, rtol), lax.abs(b)))
    close = lax.le(diff, tol)
    inf = lax.bitwise_or(isinf(a), isinf(b))
    close = lax.select_n(inf, close, lax.eq(a, b))
    if equal_nan:
        close = lax.bitwise_or(close, lax.bitwise_and(isnan(a), isnan(b)))
    return close


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (None: the default float type).

    Complex to bool tests the whole value, ``x != 0`` (1j is True), as JAX's astype does;
    complex to a real dtype keeps the real part, as ``lax.convert_element_type``.

    Args:
      x: an array or scalar.
      dtype: the target dtype.
      copy: accepted for NumPy compatibility (arrays are immutable).
      device: accepted for JAX compatibility (everything runs on the CPU).

    Returns:
      An array of ``x``'s shape and dtype ``dtype``.
    """
    (x,) = promote_dtypes("astype", x)
    dt = dtypes.DEFAULT_FLOAT if dtype is None else dtypes.requested(dtype, "astype")
    if dt == dtypes.bool_ and _is_complex(x):
        return not_equal(x, 0)
    return convert(x, dt)


# ---- logical and bitwise ----

def _as_bool(x: Any) -> Any:
    (x,) = promote_dtypes("logical", x)
    return x if _is_bool(x) else not_equal(x, 0)


def logical_and(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise logical and."""
    return lax.bitwise_and(*broadcast_args("logical_and", _as_bool(x), _as_bool(y)))


def logical_or(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise logical or."""
    return lax.bitwise_or(*broadcast_args("logical_or", _as_bool(x), _as_bool(y)))


def logical_xor(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Element-wise logical exclusive or."""
    return lax.bitwise_xor(*broadcast_args("logical_xor", _as_bool(x), _as_bool(y)))


def logical_not(x: ArrayLike, /) -> Any:
    """Element-wise logical not."""
    return lax.bitwise_not(_as_bool(x))


def _bitwise(name: str, op: Any) -> Any:
    def f(x: ArrayLike, y: ArrayLike, /) -> Any:
        x, y = promote_args(name, x, y)
        if not (_is_int(x) or _is_bool(x)):
            raise TypeError(f"{name}: operands must be integers or booleans, got {_dtype(x)}")
        return op(x, y)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Element-wise ``{name}`` of integers or booleans."
    return f


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and)
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor)
left_shift = _bitwise("left_shift", lax.shift_left)
right_shift = _bitwise("right_shift", lambda x, y: lax.shift_right_arithmetic(x, y)
                       if _is_signed(x) else lax.shift_right_logical(x, y))
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def bitwise_not(x: ArrayLike, /) -> Any:
    """Element-wise bitwise not (logical not for booleans)."""
    (x,) = promote_args("bitwise_not", x)
    if not (_is_int(x) or _is_bool(x)):
        raise TypeError(f"bitwise_not: the operand must be an integer or boolean, got {_dtype(x)}")
    return lax.bitwise_not(x)


invert = bitwise_invert = bitwise_not


def _gcd_operands(name: str, x1: ArrayLike, x2: ArrayLike) -> list[Any]:
    x1, x2 = promote_args(name, x1, x2)
    if not _is_int(x1):  # (bool too: JAX's ValueError)
        raise ValueError(f"{name}: arguments 'x1' and 'x2' must be integers, got {_dtype(x1)}")
    return [x1, x2]


def gcd(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Element-wise greatest common divisor of ``|x1|`` and ``|x2|`` (0 when both are 0).

    Args:
      x1, x2: integer arrays (or scalars), broadcast together.

    Returns:
      The gcds, in the operands' promoted dtype.
    """
    return gcd_p.bind(*_gcd_operands("gcd", x1, x2))


def lcm(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Element-wise least common multiple of ``|x1|`` and ``|x2|`` (0 when either is 0; wraps
    on overflow, as JAX).

    Args:
      x1, x2: integer arrays (or scalars), broadcast together.

    Returns:
      The lcms, in the operands' promoted dtype.
    """
    return lcm_p.bind(*_gcd_operands("lcm", x1, x2))


def bitwise_count(x: ArrayLike, /) -> Any:
    """Number of set bits of each element."""
    (x,) = promote_args("bitwise_count", x)
    return lax.population_count(lax.abs(x) if _is_signed(x) else x)


# ---- complex ----

def real(val: ArrayLike, /) -> Any:
    """The real part."""
    (val,) = promote_args("real", val)
    return lax.real(val) if _is_complex(val) else val


def imag(val: ArrayLike, /) -> Any:
    """The imaginary part (zeros for real input)."""
    (val,) = promote_args("imag", val)
    return lax.imag(val) if _is_complex(val) else lax.full_like(val, 0)


def conjugate(x: ArrayLike, /) -> Any:
    """The complex conjugate (the input itself for real input)."""
    (x,) = promote_args("conjugate", x)
    return lax.conj(x) if _is_complex(x) else x


conj = conjugate


def angle(z: ArrayLike, deg: bool = False) -> Any:
    """The angle of complex ``z`` (0 or pi for real input)."""
    (z,) = promote_args_inexact("angle", z)
    re, im = (lax.real(z), lax.imag(z)) if _is_complex(z) else (z, lax.full_like(z, 0))
    out = lax.atan2(im, re)
    return rad2deg(out) if deg else out


# ---- selection ----

def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike, /) -> Any:
    """``x`` where ``condition`` holds, else ``y``: jnp.where's three-argument form (the
    public ``where``, in _sorting.py, adds the one-argument form, ``nonzero``)."""
    if type(condition) is Array and type(x) is Array and type(y) is Array:
        ca, xa, ya = condition._aval, x._aval, y._aval
        if ca.dtype == dtypes.bool_ and xa.dtype == ya.dtype and \
                ca.shape == xa.shape == ya.shape:
            # nothing to promote, convert or broadcast: the general path's select_n as it is
            out = eager.call(ew.select_n_p, (condition, y, x), {})
            if out is not None:
                return out
    x, y = promote_dtypes("where", x, y)
    c, x, y = broadcast_all("where", _as_bool(condition), x, y)
    return lax.select_n(c, y, x)


def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0, NaN where x1 is NaN (broadcast)."""
    x1, x2 = promote_dtypes_inexact("heaviside", x1, x2)
    # (JAX broadcasts heaviside's operands without the jax_numpy_rank_promotion check)
    x1, x2 = broadcast_all("heaviside", x1, x2)
    zero = lax.full_like(x1, 0)
    at_zero = lax.select_n(lax.ne(x1, x1), x2, x1)
    return lax.select_n(lax.lt(x1, zero), lax.select_n(lax.gt(x1, zero), at_zero,
                                                        lax.full_like(x1, 1)), zero)
