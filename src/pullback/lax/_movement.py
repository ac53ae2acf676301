"""Movement: broadcasting, reshaping, transposing, slicing, reversing, padding, concatenation
and iota, with jax.lax's names and signatures.

Views (broadcast_in_dim, expand_dims, transpose, squeeze, slice, rev, most reshapes) share the
operand's memory; pad, concatenate and iota run C kernels.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..primitives.movement import (broadcast_in_dim_p, concatenate_p, iota_p, pad_p, reshape_p,
                                   rev_p, slice_p, split_p, squeeze_p, transpose_p)
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.shapes import canonicalize_axes, canonicalize_axis, check_shape, index_arg
from ._conversion import convert_element_type
from ._operands import ArrayLike, scalars_to

__all__ = ["broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "slice",
           "slice_in_dim", "index_in_dim", "rev", "pad", "concatenate", "split", "iota",
           "broadcasted_iota", "full"]


def broadcast_in_dim(operand: ArrayLike, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Array:
    """``operand`` broadcast to ``shape``; operand dimension i becomes dimension
    ``broadcast_dimensions[i]`` of the result."""
    (operand,) = scalars_to((operand,))
    return broadcast_in_dim_p.bind(operand, shape=tuple(shape),
                                   broadcast_dimensions=tuple(broadcast_dimensions))


def reshape(operand: ArrayLike, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> Array:
    """``operand`` (transposed by ``dimensions`` first, if given) reshaped to ``new_sizes``."""
    (operand,) = scalars_to((operand,))
    return reshape_p.bind(operand, new_sizes=tuple(new_sizes),
                          dimensions=None if dimensions is None else tuple(dimensions))


def _ndim(x: Any) -> int:
    return core.get_aval(x).ndim


def transpose(operand: ArrayLike, permutation: Sequence[int]) -> Array:
    """Permutes the dimensions of ``operand`` (a zero-copy view).

    Args:
      operand: the array.
      permutation: a permutation of ``range(operand.ndim)``; result dimension i is operand
        dimension ``permutation[i]``.

    Returns:
      The transposed array.
    """
    (operand,) = scalars_to((operand,))
    return transpose_p.bind(operand, permutation=tuple(
        index_arg(d, "transpose", "permutation") for d in permutation))


def squeeze(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Removes size-1 dimensions (a zero-copy view).

    Args:
      array: the array.
      dimensions: the dimensions to remove (negative values count from the end); each must
        have size 1.

    Returns:
      ``array`` without ``dimensions``.
    """
    (array,) = scalars_to((array,))
    dims = canonicalize_axes(tuple(dimensions), _ndim(array), "squeeze", "dimensions")
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Inserts size-1 dimensions (a zero-copy broadcast_in_dim).

    Args:
      array: the array.
      dimensions: positions of the new dimensions in the result (negative values count from
        the end of the result).

    Returns:
      ``array`` with a size-1 dimension at each of ``dimensions``.
    """
    (array,) = scalars_to((array,))
    shape = core.get_aval(array).shape
    ndim_out = len(shape) + len(tuple(dimensions))
    dims = canonicalize_axes(tuple(dimensions), ndim_out, "expand_dims", "dimensions")
    out_shape = list(shape)
    for d in dims:
        out_shape.insert(d, 1)
    kept = tuple(d for d in range(ndim_out) if d not in dims)
    return broadcast_in_dim_p.bind(array, shape=tuple(out_shape), broadcast_dimensions=kept)


def slice(operand: ArrayLike, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Array:
    """``operand[start:limit:stride, ...]`` with static, in-range bounds (a zero-copy view).

    Args:
      operand: the array.
      start_indices: one start per dimension, ``0 <= start <= limit``.
      limit_indices: one (exclusive) limit per dimension, at most the dimension's size.
      strides: one step (>= 1) per dimension; 1 by default.

    Returns:
      The slice.
    """
    (operand,) = scalars_to((operand,))
    starts = tuple(index_arg(i, "slice", "start_indices") for i in start_indices)
    limits = tuple(index_arg(i, "slice", "limit_indices") for i in limit_indices)
    if strides is not None:
        # a step beyond the slice's extent takes its first element only, as a step equal to
        # the extent does (x[::2**70] is x[:1], as in NumPy): keep steps within int64
        strides = tuple(st if st < 1 else min(st, max(lo - s, 1)) for st, s, lo in zip(
            (index_arg(i, "slice", "strides") for i in strides), starts, limits))
    return slice_p.bind(operand, start_indices=starts, limit_indices=limits, strides=strides)


def slice_in_dim(operand: ArrayLike, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Array:
    """``lax.slice`` along one dimension.

    Args:
      operand: the array.
      start_index: the start (None: 0; negative: counted from the end).
      limit_index: the exclusive limit (None: the dimension's size; negative: from the end).
      stride: the step.
      axis: the dimension to slice.

    Returns:
      The slice.
    """
    (operand,) = scalars_to((operand,))
    shape = core.get_aval(operand).shape
    axis = canonicalize_axis(axis, len(shape), "slice_in_dim")
    n = shape[axis]
    start = 0 if start_index is None else index_arg(start_index, "slice_in_dim", "start_index")
    limit = n if limit_index is None else index_arg(limit_index, "slice_in_dim", "limit_index")
    start, limit = (start + n if start < 0 else start), (limit + n if limit < 0 else limit)
    starts, limits, steps = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], steps[axis] = start, limit, stride
    return slice(operand, starts, limits, steps)


def index_in_dim(operand: ArrayLike, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """Element ``index`` along ``axis`` (a static index; negative counts from the end).

    Args:
      operand: the array.
      index: the position, in ``[-size, size)``.
      axis: the dimension.
      keepdims: keep ``axis`` as a size-1 dimension (True) or drop it.

    Returns:
      The selected slice.

    Raises:
      IndexError: if ``index`` is out of bounds.
    """
    (operand,) = scalars_to((operand,))
    shape = core.get_aval(operand).shape
    axis = canonicalize_axis(axis, len(shape), "index_in_dim")
    index = index_arg(index, "index_in_dim", "index")
    wrapped = index + shape[axis] if index < 0 else index
    if not 0 <= wrapped < shape[axis]:
        raise IndexError(f"index_in_dim: index {index} is out of bounds for axis {axis} with "
                         f"size {shape[axis]}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def rev(operand: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Reverses ``operand`` along ``dimensions`` (a zero-copy view with negative strides).

    Args:
      operand: the array.
      dimensions: the dimensions to reverse (negative values count from the end).

    Returns:
      The reversed array.
    """
    (operand,) = scalars_to((operand,))
    dims = canonicalize_axes(tuple(dimensions), _ndim(operand), "rev", "dimensions")
    return rev_p.bind(operand, dimensions=dims)


def pad(operand: ArrayLike, padding_value: ArrayLike,
        padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """Pads ``operand`` with ``padding_value``.

    Args:
      operand: the array.
      padding_value: a scalar of the operand's dtype (Python scalars convert weakly).
      padding_config: one ``(low, high, interior)`` per dimension: ``low``/``high`` elements
        before/after (negative values crop), ``interior`` (>= 0) between neighbours.

    Returns:
      The padded array.
    """
    operand, padding_value = scalars_to((operand, padding_value))
    config = tuple((index_arg(lo, "pad", "padding_config"), index_arg(hi, "pad", "padding_config"),
                    index_arg(inner, "pad", "padding_config"))
                   for lo, hi, inner in padding_config)
    return pad_p.bind(operand, padding_value, padding_config=config)


def concatenate(operands: Sequence[ArrayLike], dimension: int) -> Array:
    """Joins arrays along ``dimension``.

    Args:
      operands: a non-empty sequence of arrays of one dtype and rank whose shapes agree except
        along ``dimension``.
      dimension: the dimension to join along, in ``[0, rank)``.

    Returns:
      The concatenation.
    """
    operands = list(operands)
    if not operands:
        raise ValueError("concatenate: argument 'operands' must be a non-empty sequence of "
                         "arrays")
    return concatenate_p.bind(*scalars_to(operands), dimension=index_arg(dimension, "concatenate",
                                                                       "dimension"))



def split(operand: ArrayLike, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """Splits ``operand`` into consecutive pieces along ``axis``.

    Args:
      operand: the array to split.
      sizes: the pieces' sizes along ``axis``, non-negative and summing to its length.
      axis: the dimension to split.

    Returns:
      A list of ``len(sizes)`` arrays (views of ``operand``); their transpose is one
      concatenate.
    """
    (operand,) = scalars_to((operand,))
    ndim = len(core.get_aval(operand).shape)
    ax = canonicalize_axis(axis, ndim, "split")
    return split_p.bind(operand, sizes=tuple(index_arg(n, "split", "sizes") for n in sizes),
                        axis=ax)

def iota(dtype: Any, size: int) -> Array:
    """``[0, 1, ..., size - 1]`` in ``dtype`` (a numeric dtype).

    Args:
      dtype: the element type.
      size: the length.

    Returns:
      A 1-D array.
    """
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Array:
    """An array of ``shape`` whose elements are their index along ``dimension``.

    Args:
      dtype: the element type (numeric).
      shape: the result shape.
      dimension: the dimension the values count along (negative counts from the end).

    Returns:
      The array.
    """
    shape = check_shape(shape, "broadcasted_iota")
    return iota_p.bind(dtype=dtypes.requested(dtype), shape=shape,
                       dimension=canonicalize_axis(dimension, len(shape), "broadcasted_iota",
                                                   "dimension"))


def full(shape: Sequence[int], fill_value: ArrayLike, dtype: Any = None) -> Array:
    """An array of ``shape`` filled with a scalar (a zero-copy broadcast of one element).

    Args:
      shape: the result shape.
      fill_value: a scalar (Python, NumPy, an Array or a traced value).
      dtype: the element type; by default ``fill_value``'s (Python scalars stay weakly typed).

    Returns:
      The filled array.
    """
    shape = check_shape((shape,) if isinstance(shape, int) else shape, "full")
    if isinstance(fill_value, (bool, int, float, complex, np.generic, np.ndarray)):
        if np.ndim(fill_value):
            raise TypeError(f"full: argument 'fill_value' must be a scalar, got shape "
                            f"{np.shape(fill_value)}")
        if dtypes.is_python_scalar(fill_value):
            dt, weak = dtypes.dtype_of_python(fill_value)
        else:
            dt, weak = dtypes.canonical(dtypes.canonicalize(np.asarray(fill_value).dtype)), False
        want = dt if dtype is None else dtypes.requested(dtype, "full")
        value = Array(np.asarray(fill_value, dtype=want), weak and dtype is None)
    else:
        aval = core.get_aval(fill_value)
        if aval.ndim:
            raise TypeError(f"full: argument 'fill_value' must be a scalar, got shape {aval.shape}")
        value = fill_value
        if dtype is not None and dtypes.requested(dtype, "full") != aval.dtype:
            value = convert_element_type(fill_value, dtypes.requested(dtype))
    return broadcast_in_dim_p.bind(value, shape=shape, broadcast_dimensions=())
