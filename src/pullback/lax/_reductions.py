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

from typing import Any, Sequence

from ..primitives import reductions as _r
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.core import Primitive
from ..tracer.shapes import canonicalize_axes, canonicalize_axis
from ._operands import ArrayLike, scalars_to

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
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
