"""Evenly spaced values between two (array) ends: linspace, logspace, geomspace."""
from __future__ import annotations

from typing import Any

from .. import lax
from ..tracer import core, dtypes
from ..tracer.shapes import index_arg
from ._promotion import convert, promote_dtypes_inexact
from ._shape import broadcast_arrays, expand_dims, moveaxis, reshape
from ._sorting import where
from ._ufuncs import add, floor, log10, multiply, power, subtract, true_divide

ArrayLike = Any


def linspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive when ``endpoint``).

    ``start`` and ``stop`` may be arrays; the new axis goes at ``axis``.
    """
    num = index_arg(num, "linspace", "num")
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    start, stop = promote_dtypes_inexact("linspace", start, stop)
    start, stop = broadcast_arrays(start, stop)
    ct = core.get_aval(start).dtype
    div = (num - 1) if endpoint else num
    step = true_divide(subtract(stop, start), max(div, 1))
    bshape = core.get_aval(start).shape
    t = reshape(lax.iota(ct, num), (num,) + (1,) * len(bshape))
    out = add(expand_dims(start, 0), multiply(t, expand_dims(step, 0)))
    if endpoint and num > 1:
        last = lax.broadcasted_iota(dtypes.int32, (num,) + bshape, 0)
        out = where(lax.eq(last, lax.full_like(last, num - 1)), expand_dims(stop, 0), out)
    out = moveaxis(out, 0, axis) if bshape else out
    if dtype is not None:
        dt = dtypes.requested(dtype, "linspace")
        if dtypes.is_integer(dt):
            out = floor(out)
        out = convert(out, dt)
    return (out, step) if retstep else out


def logspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
             base: ArrayLike = 10.0, dtype: Any = None, axis: int = 0) -> Any:
    """``base ** linspace(start, stop, num)``."""
    out = power(base, linspace(start, stop, num, endpoint, axis=axis))
    return out if dtype is None else convert(out, dtypes.requested(dtype))


def geomspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
              dtype: Any = None, axis: int = 0) -> Any:
    """Values spaced evenly on a log scale from ``start`` to ``stop``."""
    return logspace(log10(start), log10(stop), num, endpoint, 10.0, dtype, axis)
