"""Floating-point decomposition and cleanup: frexp, ldexp, modf, spacing, fabs, nan_to_num
(JAX's algorithms: frexp and ldexp work on the bits, exact for subnormals)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..transforms.custom_derivatives import custom_jvp
from ._dtype_info import finfo
from ._promotion import aval_of, convert, promote_args, promote_args_inexact
from ._ufuncs import (ceil, copysign, exp2, floor, isinf, isnan, isneginf, isposinf,
                      logical_or, power, where)

ArrayLike = Any

_INT_OF_BITS = {16: np.dtype(np.int16), 32: np.dtype(np.int32), 64: np.dtype(np.int64)}


def _int_type(dt: np.dtype) -> np.dtype:
    return _INT_OF_BITS[np.dtype(dt).itemsize * 8]


def _real_inexact(name: str, x: Any) -> Any:
    (x,) = promote_args_inexact(name, x)
    if dtypes.is_complex(aval_of(x).dtype):
        raise TypeError(f"{name}: argument 'x' must be real, got {aval_of(x).dtype}")
    return x


def _normalize_float(x: Any) -> tuple[Any, Any]:
    """x's bits as integers, subnormals scaled up by 2**nmant first, and the exponent
    correction that scaling needs."""
    info = finfo(aval_of(x).dtype)
    it = _int_type(aval_of(x).dtype)
    small = lax.lt(lax.abs(x), lax.full_like(x, info.tiny))
    x1 = where(small, lax.mul(x, lax.full_like(x, float(1 << info.nmant))), x)
    x2 = where(small, convert(-info.nmant, it), convert(0, it))
    return lax.bitcast_convert_type(x1, it), x2


@custom_jvp
def _frexp(x: Any) -> tuple[Any, Any]:
    dt = aval_of(x).dtype
    info = finfo(dt)
    it = _int_type(dt)
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    bits, e = _normalize_float(x)
    c = lambda v: lax.full_like(bits, v)  # noqa: E731
    e = lax.add(e, lax.sub(lax.bitwise_and(lax.shift_right_arithmetic(bits, c(info.nmant)),
                                           c(mask)), c(bias - 1)))
    bits = lax.bitwise_and(bits, c(~(mask << info.nmant)))
    bits = lax.bitwise_or(bits, c((bias - 1) << info.nmant))
    m = lax.bitcast_convert_type(bits, dt)
    special = logical_or(logical_or(isinf(x), isnan(x)), lax.eq(x, lax.full_like(x, 0)))
    e = where(special, lax.full_like(e, 0), e)
    return where(special, x, m), convert(e, dtypes.int32)


@_frexp.defjvp
def _frexp_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    m = _frexp(x)[0]
    # the exponent is an integer: computed from x without a tangent, so that converting it
    # never sees a float0 tangent at higher orders
    e = _frexp(lax.stop_gradient(x))[1]
    mdot = lax.mul(t, exp2(lax.neg(convert(e, aval_of(t).dtype))))
    return (m, e), (mdot, np.zeros(aval_of(e).shape, dtypes.float0))


def frexp(x: ArrayLike, /) -> tuple[Any, Any]:
    """Splits ``x`` into a mantissa in [0.5, 1) (signed) and an int32 power of two, with
    ``x == mantissa * 2 ** exponent``; 0, inf and NaN give themselves and exponent 0."""
    x = _real_inexact("frexp", x)
    if x is not None and not dtypes.is_inexact(aval_of(x).dtype):
        raise TypeError("frexp: argument 'x' must be real")
    return _frexp(x)


def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """``x1 * 2 ** x2`` for integer ``x2``, exact while the result is representable."""
    d1 = aval_of(x1).dtype if not dtypes.is_python_scalar(x1) else np.dtype(type(x1))
    d2 = aval_of(x2).dtype if not dtypes.is_python_scalar(x2) else np.dtype(type(x2))
    if dtypes.is_complex(d1) or dtypes.is_inexact(d2) or d2 == np.dtype(float):
        raise ValueError(f"ldexp: argument 'x2' must be an integer and 'x1' real, got "
                         f"{(d1, d2)}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x1, x2 = promote_args("ldexp", x1, convert(x2, aval_of(x1).dtype)
                          if not dtypes.is_python_scalar(x2) else x2)
    # split the exponent off first so that a tiny x1 with a large x2 does not overflow
    m = frexp(x1)[0]
    e = frexp(lax.stop_gradient(x1))[1]  # an integer: no tangent to convert
    e = lax.add(convert(e, aval_of(x2).dtype), x2)
    pos = lax.gt(e, lax.full_like(e, 0))
    m = where(pos, lax.mul(m, lax.full_like(m, 2)), m)
    e = where(pos, lax.sub(e, lax.full_like(e, 1)), e)
    out = lax.mul(m, power(lax.full_like(m, 2), e))
    keep = logical_or(isinf(x1), lax.eq(x1, lax.full_like(x1, 0)))
    return where(keep, x1, out)


def modf(x: ArrayLike, /, out: None = None) -> tuple[Any, Any]:
    """The fractional and integral parts of ``x``, both with ``x``'s sign."""
    if out is not None:
        raise NotImplementedError("modf: the 'out' argument is not supported")
    x = _real_inexact("modf", x)
    whole = where(lax.ge(x, lax.full_like(x, 0)), floor(x), ceil(x))
    return lax.sub(x, whole), whole


def fabs(x: ArrayLike, /) -> Any:
    """Element-wise absolute value as floating point (real input only)."""
    return lax.abs(_real_inexact("fabs", x))


def spacing(x: ArrayLike, /) -> Any:
    """The distance from ``x`` to the next representable value away from zero (towards +inf
    for float16, as NumPy)."""
    (x,) = promote_args_inexact("spacing", x)
    if dtypes.is_complex(aval_of(x).dtype):
        raise ValueError("spacing: argument 'x' must be real (spacing is not defined for "
                         "complex inputs)")
    inf = lax.full_like(x, np.inf)
    if aval_of(x).dtype == np.float16:
        return lax.sub(lax.nextafter(x, inf), x)
    r = lax.sub(lax.nextafter(x, copysign(inf, x)), x)
    tiny = float(finfo(aval_of(x).dtype).smallest_subnormal)
    return where(lax.eq(r, lax.full_like(r, 0)), copysign(lax.full_like(x, tiny), x), r)


def nan_to_num(x: ArrayLike, copy: bool = True, nan: ArrayLike = 0.0,
               posinf: ArrayLike | None = None, neginf: ArrayLike | None = None) -> Any:
    """``x`` with NaN replaced by ``nan``, +inf by ``posinf`` (the largest finite value by
    default) and -inf by ``neginf`` (the most negative); complex parts separately; integers
    and booleans unchanged."""
    (x,) = promote_args("nan_to_num", x)
    dt = aval_of(x).dtype
    if not dtypes.is_inexact(dt):
        return x
    if dtypes.is_complex(dt):
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), convert(nan, dt), x)
    out = where(isposinf(out), convert(posinf, dt), out)
    return where(isneginf(out), convert(neginf, dt), out)
