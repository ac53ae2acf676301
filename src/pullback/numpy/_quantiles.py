"""Order statistics: quantile, percentile, median and their NaN-ignoring variants, by sorting."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.shapes import canonicalize_axes
from ._indexing import take_along_axis
from ._promotion import aval_of, convert, promote_args
from ._reductions import _count, _prep, sum
from ._shape import broadcast_to, moveaxis, reshape, transpose
from ._sorting import sort
from ._ufuncs import (add, ceil, clip, floor, isnan, logical_not, multiply, round as round_,
                      subtract, true_divide, where)

ArrayLike = Any
Axis = Any


_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def quantile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
             *, interpolation: str | None = None) -> Any:
    """The ``q``-th quantiles (q in [0, 1]) over ``axis``, by sorting.

    Args:
      a: the input.
      q: a quantile or an array of quantiles.
      axis: an axis, a tuple of axes, or None (all).
      method: "linear" (default), "lower", "higher", "nearest" or "midpoint".
      keepdims: keep reduced axes as size 1.

    Returns:
      The quantiles; with array ``q``, its dimensions come first.
    """
    return _quantile("quantile", a, q, axis, method if interpolation is None else interpolation,
                     keepdims, nan_policy=False)


def percentile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, interpolation: str | None = None) -> Any:
    """The ``q``-th percentiles (q in [0, 100]); see :func:`quantile`."""
    (q,) = promote_args("percentile", q)
    return quantile(a, true_divide(q, 100), axis, method=method, keepdims=keepdims,
                    interpolation=interpolation)


def median(a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """The median over ``axis``."""
    return quantile(a, 0.5, axis, keepdims=keepdims, method="midpoint")


def _quantile(name: str, a: Any, q: Any, axis: Axis, method: str, keepdims: bool,
              nan_policy: bool) -> Any:
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"{name}: argument 'method' must be one of {_QUANTILE_METHODS}, "
                         f"got {method!r}")
    a, av = _prep(name, a)
    if not dtypes.is_inexact(av.dtype):
        a = convert(a, dtypes.to_inexact(av.dtype))
    dt = aval_of(a).dtype
    axes = canonicalize_axes(axis, av.ndim, name)
    keep = [i for i in range(av.ndim) if i not in axes]
    kshape = tuple(av.shape[i] for i in keep)
    n = _count(av.shape, axes)
    # the reduced axes, moved last and merged, sorted (NaN sorts last): xs is (K..., n)
    xs = sort(reshape(transpose(a, keep + list(axes)), kshape + (n,)), axis=-1)
    q = convert(promote_args(name, q)[0], dt)
    qshape = aval_of(q).shape
    nq, nk = len(qshape), len(kshape)
    qb = reshape(q, (1,) * nk + qshape + (1,))                      # (1.., Q.., 1)
    if nan_policy:
        valid = sum(logical_not(isnan(xs)), axis=-1, dtype=dt)      # (K..)
        cnt = reshape(valid, kshape + (1,) * nq + (1,))
    else:
        cnt = convert(n, dt)
    pos = multiply(qb, subtract(cnt, 1))                             # (K.. or 1.., Q.., 1)
    xb = reshape(xs, kshape + (1,) * nq + (n,))
    full_shape = kshape + qshape + (1,)
    hi_idx = builtins.max(n - 1, 0)

    def at(p: Any) -> Any:
        i = clip(convert(p, dtypes.int32), 0, hi_idx)
        return take_along_axis(xb, broadcast_to(i, full_shape), axis=-1)

    if method == "lower":
        r = at(floor(pos))
    elif method == "higher":
        r = at(ceil(pos))
    elif method == "nearest":
        r = at(round_(pos))
    elif method == "midpoint":
        r = multiply(add(at(floor(pos)), at(ceil(pos))), 0.5)
    else:
        lo = floor(pos)
        vlo, vhi = at(lo), at(ceil(pos))
        r = add(vlo, multiply(subtract(vhi, vlo), subtract(pos, lo)))
    r = reshape(r, kshape + qshape)
    if not n:  # quantiles of nothing are NaN (NumPy's), with or without nan_policy
        r = where(True, np.nan, r)
    elif not nan_policy:  # a NaN anywhere in a slice makes its quantiles NaN
        last = lax.slice_in_dim(xs, n - 1, n, axis=nk)
        r = where(reshape(isnan(last), kshape + (1,) * nq), np.nan, r)
    r = moveaxis(r, tuple(range(nk, nk + nq)), tuple(range(nq)))   # (Q.., K..)
    if keepdims:
        r = reshape(r, qshape + tuple(1 if i in axes else d for i, d in enumerate(av.shape)))
    return r


def nanquantile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False) -> Any:
    """Quantiles ignoring NaN."""
    return _quantile("nanquantile", a, q, axis, method, keepdims, nan_policy=True)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False) -> Any:
    """Percentiles ignoring NaN."""
    (q,) = promote_args("nanpercentile", q)
    return nanquantile(a, true_divide(q, 100), axis, method=method, keepdims=keepdims)


def nanmedian(a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """Median ignoring NaN."""
    return nanquantile(a, 0.5, axis, method="midpoint", keepdims=keepdims)
