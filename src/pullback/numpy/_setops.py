"""Set operations: isin, union1d, intersect1d, setdiff1d, setxor1d and the Array API's
unique_all / unique_counts / unique_inverse / unique_values.

Results whose size depends on the data need concrete input, or a static ``size=`` under jit
(the result is padded with ``fill_value``), as in JAX. With ``size=``, each input is first made
unique into a padded buffer of its own length, with a count of its valid entries; the set
logic then runs on sorted buffers where the padding sorts last and never matches.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import lax
from ..tracer import dtypes
from ._creation import full
from ._indexing import take
from ._promotion import aval_of, convert, promote_dtypes
from ._reductions import all as all_, any as any_, max as max_, min as min_, sum as sum_
from ._selection import _compress_axis
from ._shape import concatenate, ravel, reshape
from ._sorting import _concrete, argsort, searchsorted, sort, unique
from ._ufuncs import logical_and, logical_not, logical_or, where

ArrayLike = Any

_ISIN_METHODS = ("auto", "compare_all", "binary_search", "sort")


def _in1d(a: Any, b: Any, invert: bool, method: str) -> Any:
    """For each element of the 1-D ``a``, whether it occurs in the 1-D ``b`` (NaN never)."""
    if method not in _ISIN_METHODS:
        raise ValueError(f"isin: argument 'method' must be one of {_ISIN_METHODS}, got "
                         f"{method!r}")
    n, m = aval_of(a).shape[0], aval_of(b).shape[0]
    if n == 0 or m == 0:
        return full((n,), invert, dtypes.bool_)
    if method in ("auto", "compare_all"):
        a2, b2 = reshape(a, (n, 1)), reshape(b, (1, m))
        if invert:
            return all_(lax.ne(*_bcast(a2, b2, n, m)), axis=1)
        return any_(lax.eq(*_bcast(a2, b2, n, m)), axis=1)
    # binary search over the sorted b (NaN sorts last and equals nothing)
    bs = sort(b)
    found = take(bs, searchsorted(bs, a), mode="clip")
    return lax.ne(a, found) if invert else lax.eq(a, found)


def _bcast(a2: Any, b2: Any, n: int, m: int) -> tuple[Any, Any]:
    return (lax.broadcast_in_dim(a2, (n, m), (0, 1)), lax.broadcast_in_dim(b2, (n, m), (0, 1)))


def isin(element: ArrayLike, test_elements: ArrayLike, assume_unique: bool = False,
         invert: bool = False, *, method: str = "auto") -> Any:
    """Whether each element of ``element`` occurs in ``test_elements``.

    Args:
      element: the values to look up (any shape).
      test_elements: the values to look for (flattened).
      assume_unique: unused (the result is the same).
      invert: return the negation (``not in``).
      method: "auto" or "compare_all" (all pairs compared, JAX's default), "binary_search"
        or "sort" (the test elements sorted, then searched: O((n + m) log m)).

    Returns:
      A boolean array of ``element``'s shape.
    """
    a, b = promote_dtypes("isin", element, test_elements)
    shape = aval_of(a).shape
    return reshape(_in1d(ravel(a), ravel(b), invert, method), shape)


def _fill(vals: Any, count: Any, fill_value: Any) -> Any:
    """``vals`` with the slots at and after ``count`` set to ``fill_value`` (by default the
    smallest valid value, 0 when there is none: JAX's)."""
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    size = aval_of(vals).shape[0]
    valid = lax.lt(lax.iota(it, size), lax.full_like(lax.iota(it, size), 0) + count)
    dt = aval_of(vals).dtype
    if fill_value is None:
        if size == 0:
            return vals
        big = max_(vals)
        fill = min_(where(valid, vals, big))
        fill = where(lax.gt(count, 0), fill, convert(0, dt))
    else:
        fill = convert(fill_value, dt)
    return where(valid, vals, fill)


def _unique_padded(x: Any) -> tuple[Any, Any]:
    """The sorted unique values of the 1-D ``x`` in a buffer of x's length (the padding
    repeats the largest unique value) and the count of unique values."""
    n = aval_of(x).shape[0]
    if n == 0:
        return x, convert(0, dtypes.DEFAULT_INT)
    s = sort(x)
    diff = lax.ne(lax.slice_in_dim(s, 1, n), lax.slice_in_dim(s, 0, n - 1))
    # NaNs are unique as one value, as jnp.unique's default equal_nan=True
    if dtypes.is_inexact(aval_of(s).dtype):
        hi, lo = lax.slice_in_dim(s, 1, n), lax.slice_in_dim(s, 0, n - 1)
        diff = logical_and(diff, logical_not(logical_and(lax.ne(hi, hi), lax.ne(lo, lo))))
    first = concatenate([full((1,), True, dtypes.bool_), diff])
    count = sum_(convert(first, dtypes.DEFAULT_INT))
    return _compress_axis(first, s, 0, n, s[n - 1], "unique"), count


def _check_size(name: str, size: Any) -> int | None:
    if size is None:
        return None
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        raise TypeError(f"{name}: argument 'size' must be a static non-negative integer, got "
                        f"{size!r}")
    return int(size)


def _valid_sorted(a: Any, na: Any, b: Any, nb: Any) -> tuple[Any, Any, Any]:
    """The padded unique buffers ``a`` (``na`` valid) and ``b`` (``nb`` valid) merged and
    sorted, invalid entries last; with the sorted validity mask and the source positions."""
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    m = aval_of(a).shape[0] + aval_of(b).shape[0]
    vals = concatenate([a, b])
    pos = lax.iota(it, m)
    la, lb = aval_of(a).shape[0], aval_of(b).shape[0]
    valid = concatenate([lax.lt(lax.iota(it, la), lax.full_like(
        lax.iota(it, la), 0) + na), lax.lt(lax.iota(it, lb), lax.full_like(
            lax.iota(it, lb), 0) + nb)])
    inval, svals, spos = lax.sort((logical_not(valid), vals, pos), dimension=0,
                                  is_stable=True, num_keys=2)
    return svals, logical_not(inval), spos


def union1d(ar1: ArrayLike, ar2: ArrayLike, *, size: int | None = None,
            fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values that are in either input (both flattened).

    Args:
      ar1, ar2: the inputs.
      size: a static result length (needed under jit), padded with ``fill_value``.
      fill_value: the padding (default: the smallest value of the result).
    """
    a, b = promote_dtypes("union1d", ar1, ar2)
    return unique(concatenate([ravel(a), ravel(b)]), size=_check_size("union1d", size),
                  fill_value=fill_value)


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *,
              size: int | None = None, fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values of ``ar1`` that are not in ``ar2``.

    Args:
      ar1, ar2: the inputs (flattened).
      assume_unique: ``ar1``'s values are unique already (they are then not sorted).
      size: a static result length (needed under jit), padded with ``fill_value``.
      fill_value: the padding (default 0, as JAX).
    """
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    a, b = promote_dtypes("setdiff1d", ar1, ar2)
    a, b = ravel(a), ravel(b)
    size = _check_size("setdiff1d", size)
    if size is None:
        _concrete("setdiff1d", a)
    n = aval_of(a).shape[0]
    if assume_unique:
        u, count = a, convert(n, it)
    else:
        u, count = _unique_padded(a)
    keep = logical_and(_in1d(u, b, True, "auto"),
                       lax.lt(lax.iota(it, n), lax.full_like(
                           lax.iota(it, n), 0) + count))
    return _compress_axis(keep, u, 0, size, 0 if fill_value is None else fill_value,
                          "setdiff1d")


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *,
             size: int | None = None, fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values that are in exactly one of the inputs (flattened).

    Args:
      ar1, ar2: the inputs.
      assume_unique: each input's values are unique already.
      size: a static result length (needed under jit), padded with ``fill_value``.
      fill_value: the padding (default: the smallest value of the result).
    """
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    a, b = promote_dtypes("setxor1d", ar1, ar2)
    a, b = ravel(a), ravel(b)
    size = _check_size("setxor1d", size)
    if size is None:
        _concrete("setxor1d", a)
        _concrete("setxor1d", b)
    if assume_unique:
        ua, na = a, convert(aval_of(a).shape[0], it)
        ub, nb = b, convert(aval_of(b).shape[0], it)
    else:
        (ua, na), (ub, nb) = _unique_padded(a), _unique_padded(b)
    s, valid, _ = _valid_sorted(ua, na, ub, nb)
    m = aval_of(s).shape[0]
    if m == 0:
        return full((size or 0,), 0 if fill_value is None else fill_value, aval_of(s).dtype)
    # NumPy compares neighbours with !=, so NaNs (never equal) are each kept
    ne = lax.ne(lax.slice_in_dim(s, 1, m), lax.slice_in_dim(s, 0, m - 1))
    vnext = lax.slice_in_dim(valid, 1, m)
    differs_prev = concatenate([full((1,), True, dtypes.bool_), ne])
    differs_next = concatenate([logical_or(ne, logical_not(vnext)),
                                full((1,), True, dtypes.bool_)])
    keep = logical_and(valid, logical_and(differs_prev, differs_next))
    if size is None:
        size = int(np.count_nonzero(_concrete("setxor1d", keep)))
    vals = _compress_axis(keep, s, 0, size, 0, "setxor1d")
    return _fill(vals, sum_(convert(keep, it)), fill_value)


def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False,
                return_indices: bool = False, *, size: int | None = None,
                fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values that are in both inputs (flattened).

    Args:
      ar1, ar2: the inputs.
      assume_unique: each input's values are unique already.
      return_indices: also return the index of each value's first occurrence in each input
        (padding slots get the input's length).
      size: a static result length (needed under jit), padded with ``fill_value``.
      fill_value: the padding (default: the smallest value of the result).
    """
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    a, b = promote_dtypes("intersect1d", ar1, ar2)
    a, b = ravel(a), ravel(b)
    size = _check_size("intersect1d", size)
    if size is None:
        _concrete("intersect1d", a)
        _concrete("intersect1d", b)
    la, lb = aval_of(a).shape[0], aval_of(b).shape[0]
    if assume_unique:
        ua, na, ia = a, convert(la, it), lax.iota(it, la)
        ub, nb, ib = b, convert(lb, it), lax.iota(it, lb)
    else:
        ua, na, ia = _unique_first(a)
        ub, nb, ib = _unique_first(b)
    s, valid, pos = _valid_sorted(ua, na, ub, nb)
    m = aval_of(s).shape[0]
    if m == 0:
        vals = full((size or 0,), 0 if fill_value is None else fill_value, aval_of(s).dtype)
        empty = full((size or 0,), 0, it)
        return (vals, empty + la, empty + lb) if return_indices else vals
    hit = logical_and(lax.eq(lax.slice_in_dim(s, 1, m), lax.slice_in_dim(s, 0, m - 1)),
                      lax.slice_in_dim(valid, 1, m))
    keep = concatenate([hit, full((1,), False, dtypes.bool_)])
    if size is None:
        size = int(np.count_nonzero(_concrete("intersect1d", keep)))
    count = sum_(convert(keep, it))
    vals = _fill(_compress_axis(keep, s, 0, size, 0, "intersect1d"), count, fill_value)
    if not return_indices:
        return vals
    # a match is the pair (k, k + 1) of the sorted buffer: ua's entry first (stable sort)
    p1 = _compress_axis(keep, pos, 0, size, 0, "intersect1d")
    p2 = _compress_axis(keep, concatenate([lax.slice_in_dim(pos, 1, m),
                                           full((1,), 0, it)]), 0, size, 0,
                        "intersect1d")
    p2 = lax.sub(p2, lax.full_like(p2, la))
    valid_out = lax.lt(lax.iota(it, size), lax.full_like(lax.iota(it, size), 0) + count)
    i1 = where(valid_out, take(ia, p1, mode="clip"), la) if la else full((size,), la, it)
    i2 = where(valid_out, take(ib, p2, mode="clip"), lb) if lb else full((size,), lb, it)
    return vals, i1, i2


def _unique_first(x: Any) -> tuple[Any, Any, Any]:
    """As :func:`_unique_padded`, with the index of each unique value's first occurrence."""
    it = dtypes.DEFAULT_INT  # indices: int64 with x64, as JAX
    n = aval_of(x).shape[0]
    if n == 0:
        return x, convert(0, it), lax.iota(it, 0)
    perm = argsort(x)
    s = take(x, perm)
    diff = lax.ne(lax.slice_in_dim(s, 1, n), lax.slice_in_dim(s, 0, n - 1))
    if dtypes.is_inexact(aval_of(s).dtype):
        hi, lo = lax.slice_in_dim(s, 1, n), lax.slice_in_dim(s, 0, n - 1)
        diff = logical_and(diff, logical_not(logical_and(lax.ne(hi, hi), lax.ne(lo, lo))))
    first = concatenate([full((1,), True, dtypes.bool_), diff])
    count = sum_(convert(first, it))
    return (_compress_axis(first, s, 0, n, s[n - 1], "unique"), count,
            _compress_axis(first, perm, 0, n, 0, "unique"))


class UniqueAllResult(NamedTuple):
    """The result of :func:`unique_all`."""
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """The result of :func:`unique_counts`."""
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """The result of :func:`unique_inverse`."""
    values: Any
    inverse_indices: Any


def _inverse_shape(inv: Any, x: Any) -> Any:
    return reshape(inv, aval_of(x).shape)


def unique_all(x: ArrayLike, /, *, size: int | None = None,
               fill_value: ArrayLike | None = None) -> UniqueAllResult:
    """The Array API's ``unique_all``: the sorted unique values (NaNs distinct), the index of
    each one's first occurrence, each element's index into the values (``x``'s shape), and the
    counts. ``size``/``fill_value`` as :func:`jax.numpy.unique`."""
    (x,) = promote_dtypes("unique_all", x)
    v, i, inv, c = unique(x, return_index=True, return_inverse=True, return_counts=True,
                          equal_nan=False, size=_check_size("unique_all", size),
                          fill_value=fill_value)
    return UniqueAllResult(v, i, _inverse_shape(inv, x), c)


def unique_counts(x: ArrayLike, /, *, size: int | None = None,
                  fill_value: ArrayLike | None = None) -> UniqueCountsResult:
    """The Array API's ``unique_counts``: the sorted unique values (NaNs distinct) and counts."""
    (x,) = promote_dtypes("unique_counts", x)
    v, c = unique(x, return_counts=True, equal_nan=False,
                  size=_check_size("unique_counts", size), fill_value=fill_value)
    return UniqueCountsResult(v, c)


def unique_inverse(x: ArrayLike, /, *, size: int | None = None,
                   fill_value: ArrayLike | None = None) -> UniqueInverseResult:
    """The Array API's ``unique_inverse``: the sorted unique values (NaNs distinct) and each
    element's index into them (``x``'s shape)."""
    (x,) = promote_dtypes("unique_inverse", x)
    v, inv = unique(x, return_inverse=True, equal_nan=False,
                    size=_check_size("unique_inverse", size), fill_value=fill_value)
    return UniqueInverseResult(v, _inverse_shape(inv, x))


def unique_values(x: ArrayLike, /, *, size: int | None = None,
                  fill_value: ArrayLike | None = None) -> Any:
    """The Array API's ``unique_values``: the sorted unique values (NaNs distinct)."""
    (x,) = promote_dtypes("unique_values", x)
    return unique(x, equal_nan=False, size=_check_size("unique_values", size),
                  fill_value=fill_value)
