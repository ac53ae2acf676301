"""Reductions over axes, argmax/argmin and cumulative ops, with ``jax.lax``'s signatures.

Axes may be negative (``jax.lax`` itself accepts only non-negative ones); they are normalized
before the primitive is bound, so the Jaxpr always holds non-negative axes.

Broadcast data is never walked: along an axis where the operand is a broadcast (a zero
stride, as ``jnp.zeros(n)`` or ``broadcast_to`` give), a reduction combines the partial result
with itself as often as the axis is long (by doubling: a sum of n copies is n times the value
rounded once, a max is the value), and a kept broadcast axis is computed once and repeated, as
XLA folds a reduce of a broadcast. So the work is bounded by the elements the operand's memory
holds: ``jnp.zeros((2**40,)).sum()`` returns 0 at once. Shapes whose element count overflows
int64 raise when they are made, naming the shape.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from ..primitives import reductions as _r
from ..primitives.movement import (broadcast_in_dim_p, concatenate_p, reshape_p, slice_p,
                                   transpose_p)
from ..tracer import core, dtypes, pytree
from ..tracer.array import Array
from ..tracer.core import Primitive
from ..tracer.shapes import canonicalize_axes, canonicalize_axis
from ..transforms.array_ops import as_operands
from . import _elementwise as _ew
from ._operands import ArrayLike, scalars_to
from ._reduce_window import concrete_scalar, lanes, like_operand

__all__ = ["reduce", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
           "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
           "cumlogsumexp"]


def _reduce(prim: Primitive, operand: ArrayLike, axes: Sequence[int]) -> Array:
    (operand,) = scalars_to((operand,))
    axes = canonicalize_axes(tuple(axes), core.get_aval(operand).ndim, prim.name, "axes")
    return prim.bind(operand, axes=axes)


def reduce_sum(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Sum of ``operand`` over ``axes``.

    Args:
      operand: a numeric array (not bool). Integer sums wrap on overflow; float sums are
        pairwise, along a contiguous run and across the rows reaching one output alike;
        float16/bfloat16 accumulate in float32 and round once.
      axes: the axes to reduce (distinct; negative ones count from the end).

    Returns:
      ``operand``'s dtype, its shape without ``axes``; 0 where the reduced axes are empty.
    """
    return _reduce(_r.reduce_sum_p, operand, axes)


def reduce_prod(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Product of ``operand`` over ``axes``.

    Args:
      operand: a numeric array (not bool); integer products wrap on overflow.
      axes: the axes to reduce.

    Returns:
      ``operand``'s dtype, its shape without ``axes``; 1 where the reduced axes are empty.
    """
    return _reduce(_r.reduce_prod_p, operand, axes)


def reduce_max(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Maximum of ``operand`` over ``axes``; NaN if any element is NaN.

    Args:
      operand: a boolean, integer or floating array.
      axes: the axes to reduce.

    Returns:
      ``operand``'s dtype, its shape without ``axes``; -inf (or the dtype's minimum, or False)
      where the reduced axes are empty.
    """
    return _reduce(_r.reduce_max_p, operand, axes)


def reduce_min(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Minimum of ``operand`` over ``axes``; NaN if any element is NaN.

    Args:
      operand: a boolean, integer or floating array.
      axes: the axes to reduce.

    Returns:
      ``operand``'s dtype, its shape without ``axes``; +inf (or the dtype's maximum, or True)
      where the reduced axes are empty.
    """
    return _reduce(_r.reduce_min_p, operand, axes)


def reduce_and(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (for bool: logical) AND of ``operand`` over ``axes``.

    Args:
      operand: a boolean or integer array.
      axes: the axes to reduce.

    Returns:
      ``operand``'s dtype, its shape without ``axes``; all bits set (True) where empty.
    """
    return _reduce(_r.reduce_and_p, operand, axes)


def reduce_or(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (for bool: logical) OR of ``operand`` over ``axes``.

    Args:
      operand: a boolean or integer array.
      axes: the axes to reduce.

    Returns:
      ``operand``'s dtype, its shape without ``axes``; 0 (False) where empty.
    """
    return _reduce(_r.reduce_or_p, operand, axes)


def reduce_xor(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (for bool: logical) XOR of ``operand`` over ``axes``.

    Args:
      operand: a boolean or integer array.
      axes: the axes to reduce.

    Returns:
      ``operand``'s dtype, its shape without ``axes``; 0 (False) where empty.
    """
    return _reduce(_r.reduce_xor_p, operand, axes)


def _arg(prim: Primitive, operand: ArrayLike, axis: int, index_dtype: Any) -> Array:
    (operand,) = scalars_to((operand,))
    axis = canonicalize_axis(axis, core.get_aval(operand).ndim, prim.name, "axis")
    try:
        index_dtype = dtypes.requested(index_dtype)
    except TypeError as e:
        raise TypeError(f"{prim.name}: argument 'index_dtype': {e}") from None
    return prim.bind(operand, axes=(axis,), index_dtype=index_dtype)


def argmax(operand: ArrayLike, axis: int, index_dtype: Any = dtypes.int32) -> Array:
    """Index of the maximum of ``operand`` along ``axis``.

    Args:
      operand: a boolean, integer or floating array.
      axis: the axis to reduce; it must not be empty.
      index_dtype: the integer dtype of the result (int32 by default; ``jax.lax`` requires it).

    Returns:
      The index of the first maximum along ``axis``; a NaN counts as the maximum, so a slice
      holding NaN gives the index of its first NaN (as NumPy).
    """
    return _arg(_r.argmax_p, operand, axis, index_dtype)


def argmin(operand: ArrayLike, axis: int, index_dtype: Any = dtypes.int32) -> Array:
    """Index of the minimum of ``operand`` along ``axis``.

    Args:
      operand: a boolean, integer or floating array.
      axis: the axis to reduce; it must not be empty.
      index_dtype: the integer dtype of the result (int32 by default; ``jax.lax`` requires it).

    Returns:
      The index of the first minimum along ``axis``; a NaN counts as the minimum, so a slice
      holding NaN gives the index of its first NaN (as NumPy).
    """
    return _arg(_r.argmin_p, operand, axis, index_dtype)


def _cumulative(prim: Primitive, operand: ArrayLike, axis: int, reverse: bool) -> Array:
    (operand,) = scalars_to((operand,))
    axis = canonicalize_axis(axis, core.get_aval(operand).ndim, prim.name, "axis")
    return prim.bind(operand, axis=axis, reverse=bool(reverse))


def cumsum(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Inclusive cumulative sum along ``axis``.

    Args:
      operand: a numeric array (not bool); float16/bfloat16 accumulate in float32.
      axis: the axis to scan.
      reverse: scan from the end of the axis towards its start.

    Returns:
      An array of ``operand``'s shape and dtype.
    """
    return _cumulative(_r.cumsum_p, operand, axis, reverse)


def cumprod(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Inclusive cumulative product along ``axis``.

    Args:
      operand: a numeric array (not bool).
      axis: the axis to scan.
      reverse: scan from the end of the axis towards its start.

    Returns:
      An array of ``operand``'s shape and dtype.
    """
    return _cumulative(_r.cumprod_p, operand, axis, reverse)


def cummax(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Inclusive running maximum along ``axis``; NaN from the first NaN on.

    Args:
      operand: an integer or floating array.
      axis: the axis to scan.
      reverse: scan from the end of the axis towards its start.

    Returns:
      An array of ``operand``'s shape and dtype.
    """
    return _cumulative(_r.cummax_p, operand, axis, reverse)


def cummin(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Inclusive running minimum along ``axis``; NaN from the first NaN on.

    Args:
      operand: an integer or floating array.
      axis: the axis to scan.
      reverse: scan from the end of the axis towards its start.

    Returns:
      An array of ``operand``'s shape and dtype.
    """
    return _cumulative(_r.cummin_p, operand, axis, reverse)


def cumlogsumexp(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Inclusive cumulative ``log(sum(exp(x)))`` along ``axis``, computed stably.

    Each step is ``m + log1p(exp(-|a - b|))`` with ``m = max(a, b)``, so large inputs never
    overflow; -inf is the identity and +inf absorbs.

    Args:
      operand: a floating array; float16/bfloat16 accumulate in float32.
      axis: the axis to scan.
      reverse: scan from the end of the axis towards its start.

    Returns:
      An array of ``operand``'s shape and dtype.
    """
    return _cumulative(_r.cumlogsumexp_p, operand, axis, reverse)


_SEQUENTIAL = 128  # up to this many reduced elements per output, a sequential fold


def _identities(dtype: np.dtype) -> dict:
    intlike = dtype == np.bool_ or dtype.kind in "iu"
    big = (np.iinfo(dtype) if dtype.kind in "iu" else None)
    out = {id(_ew.add): (_r.reduce_sum_p, 0), id(_ew.mul): (_r.reduce_prod_p, 1),
           id(_ew.max): (_r.reduce_max_p, False if dtype == np.bool_ else
                         big.min if big else -np.inf),
           id(_ew.min): (_r.reduce_min_p, True if dtype == np.bool_ else
                         big.max if big else np.inf)}
    if intlike:
        out.update({id(_ew.bitwise_or): (_r.reduce_or_p, 0),
                    id(_ew.bitwise_xor): (_r.reduce_xor_p, 0),
                    id(_ew.bitwise_and): (_r.reduce_and_p, np.array(-1).astype(dtype))})
    return out


def reduce(operands: Any, init_values: Any, computation: Callable,
           dimensions: Sequence[int]) -> Any:
    """Reduces ``operands`` over ``dimensions`` with ``computation`` (XLA's Reduce).

    As in JAX, one operand reduced by ``lax.add``, ``lax.mul``, ``lax.max``, ``lax.min`` (or,
    for booleans and integers, ``lax.bitwise_or``/``and``/``xor``) from that monoid's identity
    (concrete) binds the matching reduction primitive. Any other computation (pytrees of
    operands included) is vectorised with ``vmap`` over the kept positions and folds the
    reduced elements in row-major order into accumulators started at the init values, as
    XLA's CPU backend does for short reductions; beyond 128 reduced elements per output it
    combines halves pairwise (log2(n) steps) and then the init, which assumes an associative
    computation, as XLA does (it too reorders long reductions). It runs under ``jit``,
    ``vmap`` and ``grad``.

    Args:
      operands: an array or a pytree of arrays of one shape.
      init_values: scalars, a pytree like ``operands`` (each of its operand's dtype).
      computation: a binary function of two pytrees like ``init_values`` returning one.
      dimensions: the dimensions to reduce (distinct; negative ones count from the end).

    Returns:
      A pytree like ``operands`` of arrays without ``dimensions``; the init values where the
      reduced dimensions are empty.
    """
    op = "reduce"
    flat, tree = pytree.tree_flatten(operands)
    flat_init, init_tree = pytree.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"{op}: argument 'init_values' must have the same tree structure as "
                         f"'operands': {tree} vs. {init_tree}")
    if not flat:
        raise ValueError(f"{op}: argument 'operands' must hold at least one array")
    flat = as_operands(flat)
    flat_init = [as_operands(scalars_to((i, x)))[0] for i, x in zip(flat_init, flat)]
    avals = [core.get_aval(x) for x in flat]
    shape = avals[0].shape
    dims = canonicalize_axes(tuple(dimensions), len(shape), op, "dimensions")
    if len(flat) == 1 and avals[0].dtype in _r.REAL[0] + _r.NUMBER[0]:
        # as JAX: a concrete init equal to the monoid's identity picks the reduction primitive
        prim, ident = _identities(avals[0].dtype).get(id(computation), (None, None))
        v = concrete_scalar(flat_init[0]) if prim is not None else None
        if v is not None and v.shape == () and np.equal(v, ident):
            return pytree.tree_unflatten(tree, [prim.bind(flat[0], axes=tuple(sorted(dims)))])
    for a, i in zip(avals, flat_init):
        ia = core.get_aval(i)
        if a.shape != avals[0].shape:
            raise ValueError(f"{op}: the operands must share one shape, got "
                             f"{[b.shape for b in avals]}")
        if ia.shape != () or ia.dtype != a.dtype:
            raise TypeError(f"{op}: argument 'init_values' must hold scalars of the operands' "
                            f"dtypes, got {ia.str_short()} for an operand of dtype {a.dtype}")
    kept = tuple(d for d in range(len(shape)) if d not in dims)
    kshape = tuple(shape[d] for d in kept)
    n, k = math.prod(shape[d] for d in dims), math.prod(kshape)
    inits = [broadcast_in_dim_p.bind(i, shape=(k,), broadcast_dimensions=()) for i in flat_init]
    if n == 0 or k == 0:
        return pytree.tree_unflatten(tree, [like_operand(broadcast_in_dim_p.bind(
            i, shape=kshape, broadcast_dimensions=()), a) for i, a in zip(flat_init, avals)])
    rows = [reshape_p.bind(transpose_p.bind(x, permutation=tuple(dims) + kept),
                           new_sizes=(n, k), dimensions=None) for x in flat]
    fold = lanes(computation, tree, op)

    def part(x, lo, hi):
        return slice_p.bind(x, start_indices=(lo, 0), limit_indices=(hi, k), strides=None)

    if n <= _SEQUENTIAL:  # in order from the init values, as XLA's CPU backend folds
        out = inits
        for r in range(n):
            out = fold(out, [reshape_p.bind(part(x, r, r + 1), new_sizes=(k,), dimensions=None)
                             for x in rows])
    else:
        while n > 1:  # pairwise: rows [0, h) with rows [h, 2h); an odd last row waits
            h = n // 2
            left = [reshape_p.bind(part(x, 0, h), new_sizes=(h * k,), dimensions=None)
                    for x in rows]
            right = [reshape_p.bind(part(x, h, 2 * h), new_sizes=(h * k,), dimensions=None)
                     for x in rows]
            combined = [reshape_p.bind(c, new_sizes=(h, k), dimensions=None)
                        for c in fold(left, right)]
            if n % 2:
                combined = [concatenate_p.bind(c, part(x, 2 * h, n), dimension=0)
                            for c, x in zip(combined, rows)]
            rows, n = combined, h + n % 2
        out = fold(inits, [reshape_p.bind(x, new_sizes=(k,), dimensions=None) for x in rows])
    return pytree.tree_unflatten(tree, [like_operand(reshape_p.bind(
        o, new_sizes=kshape, dimensions=None), a) for o, a in zip(out, avals)])
