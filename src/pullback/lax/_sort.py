"""Sorting: sort (one or several operands sorted together), sort_key_val, top_k, argsort.

``sort``'s keyword ``descending`` and the ``argsort`` function are pullback extensions (see
``primitives/sort.py`` for the orders); everything else has ``jax.lax``'s signature.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..primitives.sort import argsort_p, sort_p, top_k_p
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.shapes import canonicalize_axis, index_arg
from ._operands import ArrayLike

__all__ = ["sort", "sort_key_val", "top_k", "argsort"]


def _dimension(operand: Any, dimension: int, op: str, arg: str = "dimension") -> int:
    ndim = core.get_aval(operand).ndim
    if ndim == 0:
        raise ValueError(f"{op}: argument 'operand' must have at least one dimension to sort "
                         "along, got a scalar")
    return canonicalize_axis(dimension, ndim, op, arg)


def sort(operand: ArrayLike | Sequence[ArrayLike], dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1, *, descending: bool = False) -> Array | tuple[Array, ...]:
    """Sorts ``operand`` along ``dimension``; a sequence of arrays is sorted together.

    Floats sort with -0.0 equal to 0.0 and every NaN last; complex lexicographically (real part
    first). The sort is always stable, whatever ``is_stable`` says.

    Args:
      operand: an array, or a sequence of arrays of one shape.
      dimension: the axis to sort along.
      is_stable: accepted for compatibility; the sort is stable regardless.
      num_keys: how many leading operands are keys, compared lexicographically (the first
        primary); the other operands follow the same permutation.
      descending: (pullback extension) largest first and NaN first; equal keys still keep their
        input order, as ``jnp.argsort(..., descending=True)``.

    Returns:
      The sorted array, or a tuple of sorted arrays when ``operand`` is a sequence.
    """
    if isinstance(operand, (list, tuple)):
        if len(operand) == 0:
            raise TypeError("sort: argument 'operand' must hold at least one array")
        if not isinstance(num_keys, int) or not 1 <= num_keys <= len(operand):
            raise ValueError(f"sort: argument 'num_keys' is {num_keys!r}; it must be in "
                             f"[1, {len(operand)}] for {len(operand)} operand(s)")
        dim = _dimension(operand[0], dimension, "sort")
        return tuple(sort_p.bind(*operand, dimension=dim, is_stable=bool(is_stable),
                                 num_keys=num_keys, descending=bool(descending)))
    if num_keys != 1:
        raise ValueError(f"sort: argument 'num_keys' is {num_keys!r}; a single operand has one key")
    dim = _dimension(operand, dimension, "sort")
    return sort_p.bind(operand, dimension=dim, is_stable=bool(is_stable), num_keys=1,
                       descending=bool(descending))[0]


def sort_key_val(keys: ArrayLike, values: ArrayLike, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Array, Array]:
    """Sorts ``keys`` along ``dimension`` and applies the same permutation to ``values``.

    Args:
      keys: the array that decides the order.
      values: an array of ``keys``' shape.
      dimension: the axis to sort along.
      is_stable: accepted for compatibility; the sort is stable regardless.

    Returns:
      ``(sorted keys, permuted values)``.
    """
    k, v = sort((keys, values), dimension, is_stable, num_keys=1)
    return k, v


def top_k(operand: ArrayLike, k: int, *, axis: int = -1) -> list[Array]:
    """The ``k`` largest entries along ``axis`` and their indices, largest first.

    Floats are ordered by IEEE totalOrder (as XLA's TopK): +NaN above +inf, 0.0 above -0.0 and
    -NaN below -inf. Equal entries come in index order.

    Args:
      operand: a boolean, integer or floating array of at least one dimension.
      k: how many entries to keep, in [0, operand.shape[axis]].
      axis: the axis to search (the last by default).

    Returns:
      ``[values, indices]`` (a list, as JAX's): ``operand``'s dtype and int32, shaped as
      ``operand`` with ``axis`` of size ``k``.
    """
    ax = _dimension(operand, axis, "top_k", "axis")
    k = index_arg(k, "top_k", "k")
    values, indices = top_k_p.bind(operand, k=k, axis=ax)
    return [values, indices]


def argsort(operand: ArrayLike, dimension: int = -1, *, descending: bool = False,
            is_stable: bool = True, index_dtype: Any = None) -> Array:
    """(pullback extension) Indices that sort ``operand`` along ``dimension``, in one kernel.

    The order is ``sort``'s: stable, NaN last (first when descending), equal keys in input
    order. This is what ``jnp.argsort`` computes; JAX builds it from ``sort`` with an iota
    operand.

    Args:
      operand: an array of at least one dimension.
      dimension: the axis to sort along.
      descending: largest first.
      is_stable: accepted for compatibility; the sort is stable regardless.
      index_dtype: the integer result dtype; int32 by default (int64 for axes of 2**31
        elements or more).

    Returns:
      An array of ``operand``'s shape holding indices along ``dimension``.
    """
    dim = _dimension(operand, dimension, "argsort")
    if index_dtype is None:
        n = core.get_aval(operand).shape[dim]
        index_dtype = dtypes.int32 if n < 2**31 else dtypes.int64
    try:
        index_dtype = dtypes.requested(index_dtype)
    except TypeError as e:
        raise TypeError(f"argsort: argument 'index_dtype': {e}") from None
    return argsort_p.bind(operand, dimension=dim, descending=bool(descending),
                          index_dtype=index_dtype)
