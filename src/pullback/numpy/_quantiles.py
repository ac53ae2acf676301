"""Order statistics: quantile, percentile, median and their NaN-ignoring variants, by sorting."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.shapes import canonicalize_axes
from ._indexing import take_along_axis
from ._promotion import aval_of, convert, promote_args, promote_dtypes_inexact
from ._reductions import _count, _prep, cumsum, sum
from ._shape import broadcast_to, moveaxis, reshape, transpose
from ._sorting import sort
from ._ufuncs import (add, ceil, clip, floor, isnan, logical_not, multiply, round as round_,
                      subtract, true_divide, where)

ArrayLike = Any
Axis = Any


_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf")


def quantile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
             *, weights: ArrayLike | None = None, interpolation: str | None = None) -> Any:
    """The ``q``-th quantiles (q in [0, 1]) over ``axis``, by sorting.

    Args:
      a: the input.
      q: a quantile or an array of quantiles.
      axis: an axis, a tuple of axes, or None (all).
      method: "linear" (default), "lower", "higher", "nearest", "midpoint" or
        "inverted_cdf" (the first value whose cumulative weight reaches ``q``).
      keepdims: keep reduced axes as size 1.
      weights: one non-negative weight per element of ``a`` (or per element of the reduced
        axes); only with ``method="inverted_cdf"``, as JAX.

    Returns:
      The quantiles; with array ``q``, its dimensions come first.
    """
    return _quantile("quantile", a, q, axis, method if interpolation is None else interpolation,
                     keepdims, nan_policy=False, weights=weights)


def percentile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: ArrayLike | None = None, interpolation: str | None = None) -> Any:
    """The ``q``-th percentiles (q in [0, 100]); see :func:`quantile`."""
    (q,) = promote_args("percentile", q)
    return quantile(a, true_divide(q, 100), axis, method=method, keepdims=keepdims,
                    weights=weights, interpolation=interpolation)


def median(a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """The median over ``axis``."""
    return quantile(a, 0.5, axis, keepdims=keepdims, method="midpoint")


def _quantile(name: str, a: Any, q: Any, axis: Axis, method: str, keepdims: bool,
              nan_policy: bool, weights: Any = None) -> Any:
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"{name}: argument 'method' must be one of {_QUANTILE_METHODS}, "
                         f"got {method!r}")
    a, av = _prep(name, a)
    if not dtypes.is_inexact(av.dtype):
        a = convert(a, dtypes.to_inexact(av.dtype))
    if weights is not None or method == "inverted_cdf":
        return _inverted_cdf(name, a, q, axis, method, keepdims, nan_policy, weights)
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
        i = clip(convert(p, dtypes.DEFAULT_INT), 0, hi_idx)
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
                keepdims: bool = False, *, weights: ArrayLike | None = None) -> Any:
    """Quantiles ignoring NaN (``weights`` as :func:`quantile`)."""
    return _quantile("nanquantile", a, q, axis, method, keepdims, nan_policy=True,
                     weights=weights)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: ArrayLike | None = None) -> Any:
    """Percentiles ignoring NaN."""
    (q,) = promote_args("nanpercentile", q)
    return nanquantile(a, true_divide(q, 100), axis, method=method, keepdims=keepdims,
                       weights=weights)


def _inverted_cdf(name: str, a: Any, q: Any, axis: Axis, method: str, keepdims: bool,
                  nan_policy: bool, weights: Any) -> Any:
    """``method="inverted_cdf"`` (JAX's): the first sorted value whose cumulative (clean)
    weight reaches ``q`` times the total; NaN where a weight is negative or NaN, or (without
    ``nan_policy``) where the data has a NaN."""
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    av = aval_of(a)
    if weights is not None:
        if method != "inverted_cdf":
            raise NotImplementedError(f"{name}: method {method!r} does not support weights; "
                                      "only method='inverted_cdf' does")
        (w,) = promote_args(name, weights)
        if dtypes.is_complex(aval_of(w).dtype):
            raise ValueError(f"{name}: argument 'weights' must be real")
        a, w = promote_dtypes_inexact(name, a, w)
        av = aval_of(a)
        if aval_of(w).shape != av.shape:
            if axis is None:
                raise ValueError(f"{name}: argument 'weights' must have the shape of 'a' when "
                                 "axis is None")
            ax_t = canonicalize_axes(axis, av.ndim, name)
            if aval_of(w).shape != tuple(av.shape[i] for i in ax_t):
                raise ValueError(f"{name}: argument 'weights' of shape {aval_of(w).shape} "
                                 f"must match the reduced axes "
                                 f"{tuple(av.shape[i] for i in ax_t)}")
            w = lax.broadcast_in_dim(w, av.shape, tuple(ax_t))
    else:
        w = lax.full_like(a, 1)
    dt = av.dtype
    axes = canonicalize_axes(axis, av.ndim, name)
    keep = [i for i in range(av.ndim) if i not in axes]
    kshape = tuple(av.shape[i] for i in keep)
    n = _count(av.shape, axes)
    perm = keep + list(axes)
    xs, ws = lax.sort((reshape(transpose(a, perm), kshape + (n,)),
                       reshape(transpose(w, perm), kshape + (n,))), dimension=len(kshape),
                      num_keys=1)
    nan_data = isnan(xs)
    bad_w = lax.bitwise_or(lax.lt(ws, lax.full_like(ws, 0)), isnan(ws))
    clean = where(lax.bitwise_or(bad_w, nan_data), 0, ws)
    cum = cumsum(clean, axis=-1)
    total = cum[..., n - 1:] if n else sum(clean, axis=-1, keepdims=True)      # (K.., 1)
    q = convert(promote_args(name, q)[0], dt)
    qshape = aval_of(q).shape
    nq, nk = len(qshape), len(kshape)
    target = reshape(q, (1,) * nk + qshape + (1,)) * reshape(total, kshape + (1,) * nq + (1,))
    cb = reshape(cum, kshape + (1,) * nq + (n,))
    idx = sum(convert(cb < target, it), axis=-1, keepdims=True)     # (K.., Q.., 1)
    if nan_policy:
        valid = sum(convert(logical_not(nan_data), it), axis=-1)
    else:
        valid = lax.full(kshape, n, it)
    hi = reshape(lax.sub(valid, lax.full_like(valid, 1)), kshape + (1,) * nq + (1,))
    idx = clip(idx, 0, hi)
    xb = reshape(xs, kshape + (1,) * nq + (n,))
    if n:
        r = take_along_axis(broadcast_to(xb, kshape + qshape + (n,)), idx, axis=-1)
    else:
        r = lax.full(kshape + qshape + (1,), np.nan, dt)
    r = reshape(r, kshape + qshape)
    any_bad = lax.ne(sum(convert(bad_w, it), axis=-1), lax.full(kshape, 0, it))
    if nan_policy:
        force = lax.bitwise_or(any_bad, lax.eq(valid, lax.full_like(valid, 0)))
    else:
        force = lax.bitwise_or(any_bad, lax.ne(sum(convert(nan_data, it), axis=-1),
                                               lax.full(kshape, 0, it)))
    r = where(reshape(force, kshape + (1,) * nq), np.nan, r)
    r = moveaxis(r, tuple(range(nk, nk + nq)), tuple(range(nq)))
    if keepdims:
        r = reshape(r, qshape + tuple(1 if i in axes else d for i, d in enumerate(av.shape)))
    return r


def nanmedian(a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """Median ignoring NaN."""
    return nanquantile(a, 0.5, axis, method="midpoint", keepdims=keepdims)
