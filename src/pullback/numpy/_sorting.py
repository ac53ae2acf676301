"""Sorting and searching: sort, argsort, lexsort, searchsorted, unique, nonzero.

Functions whose output size depends on the data (unique, nonzero, argwhere) need concrete input,
or a static ``size=`` under jit (padded with ``fill_value``), as in JAX.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.errors import ConcretizationTypeError
from ..tracer.shapes import canonicalize_axis
from ._promotion import aval_of, convert, promote_args, promote_dtypes
from ._shape import concatenate, moveaxis, ravel, reshape, stack
from ._ufuncs import isnan, logical_and, logical_not, logical_or, not_equal, where as _where_xy
from ._indexing import take
from ._reductions import any as any_, cumsum, min as min_

ArrayLike = Any


def sort(a: ArrayLike, axis: int | None = -1, kind: str | None = None, order: None = None, *,
         stable: bool = True, descending: bool = False) -> Any:
    """``a`` sorted along ``axis`` (flattened when None); NaN sorts last; stable."""
    (a,) = promote_args("sort", a)
    if axis is None:
        a, axis = ravel(a), 0
    av = aval_of(a)
    if av.ndim == 0:
        raise ValueError("sort: argument 'a' must be at least 1-D")
    ax = canonicalize_axis(axis, av.ndim, "sort")
    return lax.sort(a, dimension=ax, is_stable=True, descending=descending)


def argsort(a: ArrayLike, axis: int | None = -1, kind: str | None = None, order: None = None, *,
            stable: bool = True, descending: bool = False) -> Any:
    """Indices (the default int: int64 with x64, as JAX) that sort ``a`` along ``axis``;
    stable, NaN last."""
    (a,) = promote_args("argsort", a)
    if axis is None:
        a, axis = ravel(a), 0
    av = aval_of(a)
    if av.ndim == 0:
        raise ValueError("argsort: argument 'a' must be at least 1-D")
    ax = canonicalize_axis(axis, av.ndim, "argsort")
    return lax.argsort(a, ax, descending=descending, index_dtype=dtypes.DEFAULT_INT)


def lexsort(keys: Sequence[ArrayLike], axis: int = -1) -> Any:
    """Indices that sort by the last key first, then the previous ones (stable)."""
    ks = [promote_args("lexsort", k)[0] for k in keys]
    if not ks:
        raise TypeError("lexsort: need at least one key")
    shape = aval_of(ks[0]).shape
    if any(aval_of(k).shape != shape for k in ks):
        raise ValueError("lexsort: all keys must have the same shape")
    ax = canonicalize_axis(axis, len(shape), "lexsort")
    iota = lax.broadcasted_iota(dtypes.DEFAULT_INT, shape, ax)
    return lax.sort(tuple(reversed(ks)) + (iota,), dimension=ax, is_stable=True,
                    num_keys=len(ks))[-1]


def _total_less(x: Any, y: Any) -> Any:
    """x < y with NaN largest (NumPy's sort order)."""
    if not dtypes.is_inexact(aval_of(x).dtype):
        return lax.lt(x, y)
    return logical_or(lax.lt(x, y), logical_and(isnan(y), logical_not(isnan(x))))


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None,
                 *, method: str = "scan") -> Any:
    """Indices (int32) where ``v`` would be inserted into sorted 1-D ``a`` to keep it sorted.

    ``side="left"`` gives the first suitable index, ``"right"`` the last. A vectorized binary
    search: ceil(log2(len(a) + 1)) rounds of gathers.
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: argument 'side' must be 'left' or 'right', got {side!r}")
    a, v = promote_dtypes("searchsorted", a, v)
    if sorter is not None:
        a = take(a, sorter)
    av = aval_of(a)
    if av.ndim != 1:
        raise ValueError("searchsorted: argument 'a' must be 1-D")
    n = av.shape[0]
    lo = lax.full_like(v, 0, dtypes.int32)
    hi = lax.full_like(v, n, dtypes.int32)
    for _ in range(max(math.ceil(math.log2(n + 1)), 0) + 1 if n else 0):
        mid = lax.div(lax.add(lo, hi), lax.full_like(lo, 2))
        val = take(a, lax.min(mid, lax.full_like(mid, n - 1)), mode="clip")
        right = _total_less(val, v) if side == "left" else logical_not(_total_less(v, val))
        active = lax.lt(lo, hi)
        lo = _where_xy(logical_and(active, right), lax.add(mid, lax.full_like(mid, 1)), lo)
        hi = _where_xy(logical_and(active, logical_not(right)), mid, hi)
    return lo


def _concrete(name: str, x: Any) -> np.ndarray:
    c = x.to_concrete_value() if hasattr(x, "to_concrete_value") else None
    if c is None:
        raise ConcretizationTypeError(
            f"{name}: the size of the result depends on the values of a traced array; pass "
            "a static size= (and optionally fill_value=) to use it under jit")
    return np.asarray(c)


def nonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """Indices of the non-zero elements, one array of the default int per dimension.

    Args:
      a: the input.
      size: the static number of indices to return (needed under jit): extra slots are filled
        with ``fill_value`` (0 by default), extra non-zeros dropped.
      fill_value: the index used for padding (a scalar, or one per dimension).

    Returns:
      A tuple of index arrays.
    """
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    (a,) = promote_args("nonzero", a)
    av = aval_of(a)
    if av.ndim == 0:
        raise ValueError("nonzero: calling nonzero on a 0-d array is not allowed; use "
                         "atleast_1d")
    mask = ravel(a if av.dtype == dtypes.bool_ else not_equal(a, 0))
    if size is None:
        size = int(np.count_nonzero(_concrete("nonzero", mask)))
    n = av.size
    pos = lax.sub(cumsum(convert(mask, it)), lax.full_like(lax.iota(it, n), 1))
    # scatter each non-zero's flat index to its rank; ranks >= size (and zeros) are dropped
    dropped = lax.full_like(pos, size)
    target = lax.select_n(mask, dropped, pos) if n else pos
    fill = 0 if fill_value is None else fill_value
    fills = np.broadcast_to(np.asarray(fill), (av.ndim,))
    flat = _scatter_1d(lax.full_like(lax.iota(it, size), -1), target,
                       lax.iota(it, n))
    out = []
    rem = flat
    strides = [math.prod(av.shape[i + 1:]) for i in range(av.ndim)]
    for d, s in enumerate(strides):
        coord = lax.div(rem, lax.full_like(rem, max(s, 1))) if s else rem
        coord = lax.rem(coord, lax.full_like(coord, max(av.shape[d], 1)))
        out.append(lax.select_n(lax.lt(flat, lax.full_like(flat, 0)), coord,
                                lax.full_like(coord, int(fills[d]))))
    return tuple(out)


def _scatter_1d(operand: Any, indices: Any, updates: Any) -> Any:
    """operand[indices] = updates along axis 0 (out-of-bounds indices dropped)."""
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    idx = reshape(indices, aval_of(indices).shape + (1,))
    return lax.scatter(operand, idx, updates, dn, mode=lax.GatherScatterMode.FILL_OR_DROP)


def flatnonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the non-zero elements of the flattened ``a``."""
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the non-zero elements as an (N, ndim) array."""
    (a,) = promote_args("argwhere", a)
    if aval_of(a).ndim == 0:
        a = reshape(a, (1,))
        return reshape(nonzero(a, size=size, fill_value=fill_value)[0], (-1, 0))
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=1)


def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique elements of ``ar`` (flattened), with optional first indices, the
    inverse map and counts.

    Args:
      ar: the input.
      return_index: also return the index of each unique value's first occurrence.
      return_inverse: also return, for each element, the index of its unique value.
      return_counts: also return how often each unique value occurs.
      axis: None (flatten) or an axis along which unique sub-arrays are found.
      equal_nan: treat NaNs as one value.
      size: a static number of unique values to return (needed under jit); missing ones are
        filled with ``fill_value`` (default: the minimum unique value).
      fill_value: the padding value.

    Returns:
      The unique values, or a tuple with the requested extras.
    """
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    (ar,) = promote_args("unique", ar)
    if axis is not None:
        return _unique_axis(ar, return_index, return_inverse, return_counts, axis, size,
                            fill_value)
    x = ravel(ar)
    n = aval_of(x).shape[0]
    perm = argsort(x)
    s = take(x, perm)
    if n:
        diff = not_equal(lax.slice_in_dim(s, 1, n), lax.slice_in_dim(s, 0, n - 1))
        if equal_nan and dtypes.is_inexact(aval_of(s).dtype):
            both_nan = logical_and(isnan(lax.slice_in_dim(s, 1, n)),
                                   isnan(lax.slice_in_dim(s, 0, n - 1)))
            diff = logical_and(diff, logical_not(both_nan))
        first = concatenate([lax.full_like(lax.iota(it, 1), 1, dtypes.bool_), diff])
    else:
        first = lax.full_like(lax.iota(it, 0), 0, dtypes.bool_)
    if size is None:
        size = int(np.count_nonzero(_concrete("unique", first)))
    rank = lax.sub(cumsum(convert(first, it)), lax.full_like(lax.iota(it, n), 1))
    target = lax.select_n(first, lax.full_like(rank, size), rank) if n else rank
    if fill_value is None:
        fill = min_(x) if n else convert(0, aval_of(x).dtype)
    else:
        fill = convert(fill_value, aval_of(x).dtype)
    base = lax.broadcast_in_dim(fill, (size,), ())
    values = _scatter_1d(base, target, s)
    outs = [values]
    if return_index:
        outs.append(_scatter_1d(lax.full_like(lax.iota(it, size), 0), target, perm))
    if return_inverse:
        inv = _scatter_1d(lax.full_like(lax.iota(it, n), 0), perm, rank)
        outs.append(reshape(inv, aval_of(ar).shape) if aval_of(ar).ndim > 1 else inv)
    if return_counts:
        ones = lax.full_like(lax.iota(it, n), 1)
        dn = lax.ScatterDimensionNumbers((), (0,), (0,))
        cnt = lax.scatter_add(lax.full_like(lax.iota(it, size), 0),
                              reshape(rank, (n, 1)), ones, dn,
                              mode=lax.GatherScatterMode.FILL_OR_DROP)
        outs.append(cnt)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _unique_axis(ar: Any, return_index: bool, return_inverse: bool, return_counts: bool,
                 axis: int, size: int | None, fill_value: Any) -> Any:
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    # unique rows of `ar` moved to (n, rest): lexicographic sort of the rows, then
    # first-of-run marks, exactly as the flat case
    av = aval_of(ar)
    ax = canonicalize_axis(axis, av.ndim, "unique")
    rows = moveaxis(ar, ax, 0)
    n = av.shape[ax]
    rest = aval_of(rows).shape[1:]
    flat = reshape(rows, (n, math.prod(rest)))
    cols = [lax.slice_in_dim(flat, j, j + 1, axis=1) for j in range(math.prod(rest))]
    keys = [reshape(c, (n,)) for c in cols]
    perm = lexsort(list(reversed(keys))) if keys else lax.iota(it, n)
    s = take(flat, perm, axis=0)
    if n:
        diff = any_(not_equal(lax.slice_in_dim(s, 1, n), lax.slice_in_dim(s, 0, n - 1)), axis=1)
        first = concatenate([lax.full_like(lax.iota(it, 1), 1, dtypes.bool_), diff])
    else:
        first = lax.full_like(lax.iota(it, 0), 0, dtypes.bool_)
    if size is None:
        size = int(np.count_nonzero(_concrete("unique", first)))
    rank = lax.sub(cumsum(convert(first, it)), lax.full_like(lax.iota(it, n), 1))
    target = lax.select_n(first, lax.full_like(rank, size), rank) if n else rank
    fill = 0 if fill_value is None else fill_value
    base = lax.full_like(lax.iota(it, size * math.prod(rest)), fill, aval_of(s).dtype)
    base = reshape(base, (size, math.prod(rest)))
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    vals = lax.scatter(base, reshape(target, (n, 1)), s, dn,
                       mode=lax.GatherScatterMode.FILL_OR_DROP)
    vals = moveaxis(reshape(vals, (size,) + rest), 0, ax)
    outs = [vals]
    if return_index:
        outs.append(_scatter_1d(lax.full_like(lax.iota(it, size), 0), target, perm))
    if return_inverse:
        outs.append(_scatter_1d(lax.full_like(lax.iota(it, n), 0), perm, rank))
    if return_counts:
        dn1 = lax.ScatterDimensionNumbers((), (0,), (0,))
        outs.append(lax.scatter_add(lax.full_like(lax.iota(it, size), 0),
                                    reshape(rank, (n, 1)),
                                    lax.full_like(lax.iota(it, n), 1), dn1,
                                    mode=lax.GatherScatterMode.FILL_OR_DROP))
    return outs[0] if len(outs) == 1 else tuple(outs)


def where(condition: ArrayLike, x: ArrayLike | None = None, y: ArrayLike | None = None, /, *,
          size: int | None = None, fill_value: Any = None) -> Any:
    """``x`` where ``condition`` holds, else ``y``; with one argument, ``nonzero(condition)``."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    return _where_xy(condition, x, y)
