"""Indexing with computed positions: dynamic slices and XLA's gather/scatter, with jax.lax's
names and signatures (the semantics are documented in ``pullback.primitives.indexing``)."""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from ..primitives.indexing import (GatherDimensionNumbers, GatherScatterMode,
                                   ScatterDimensionNumbers, dynamic_slice_p,
                                   dynamic_update_slice_p, gather_p, scatter_add_p,
                                   scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p)
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.core import Primitive
from ..tracer.shapes import canonicalize_axis, check_shape, index_arg
from . import _elementwise as ew
from ._movement import expand_dims, index_in_dim, squeeze
from ._operands import ArrayLike, scalars_to

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
           "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_update_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_index_in_dim",
           "gather", "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]


# ---- start indices of dynamic slices ----

def _concrete_int(s: Any) -> int | None:
    """The value of a concrete integer scalar (Python, NumPy or Array), else None."""
    if isinstance(s, (bool, np.bool_)):
        return None
    if isinstance(s, (int, np.integer)):
        return int(s)
    if isinstance(s, (Array, np.ndarray)):
        v = np.asarray(s)
        if v.ndim == 0 and v.dtype.kind in "iu":
            return int(v)
    return None


def _wrap_traced(s: Any, size: int) -> Any:
    """A traced signed start, negative values counted from the end (``s + size`` if s < 0)."""
    aval = core.get_aval(s)
    if aval.ndim or aval.dtype.kind != "i":
        return s  # unsigned needs no wrapping; a malformed start is reported by the primitive
    return ew.select_n(ew.lt(s, 0), s, ew.add(s, size))


def _start_list(start_indices: Any) -> list[Any]:
    if isinstance(start_indices, (list, tuple)):
        return list(start_indices)
    aval = core.get_aval(start_indices)
    if aval.ndim != 1:
        raise TypeError("dynamic_slice: argument 'start_indices' must be a sequence of scalars "
                        f"or a 1-D array, got {aval.str_short()}")
    if isinstance(start_indices, (Array, np.ndarray)):
        return [int(v) for v in np.asarray(start_indices)]
    return [index_in_dim(start_indices, i, 0, keepdims=False) for i in range(aval.shape[0])]


def _start_operands(start_indices: Any, shape: Sequence[int],
                    sizes: Sequence[int]) -> list[Any]:
    """The start operands of dynamic_slice/dynamic_update_slice, as ``jax.lax`` prepares them:
    negative starts count from the end (then the primitive clamps). Concrete starts are wrapped
    and clamped here, so they become small int32 literals."""
    starts = _start_list(start_indices)
    if len(starts) != len(shape) or len(sizes) != len(shape):
        return starts  # the primitive reports the mismatch
    out = []
    for s, n, z in zip(starts, shape, sizes):
        v = _concrete_int(s)
        if v is None:
            out.append(_wrap_traced(s, n) if isinstance(s, core.Tracer) else s)
            continue
        v = min(max(v + n if v < 0 else v, 0), max(n - z, 0))
        out.append(Array(np.asarray(v, np.int32 if v < 2 ** 31 else np.int64)))
    return out


def dynamic_slice(operand: ArrayLike, start_indices: Any, slice_sizes: Sequence[int]) -> Array:
    """A slice of static size at computed start positions.

    Args:
      operand: the array.
      start_indices: one integer scalar per dimension (Python ints or arrays, possibly
        traced), or a 1-D integer array. Negative starts count from the end; each start is then
        clamped so the slice fits (``0 <= start <= size - slice_size``), as in XLA.
      slice_sizes: the static size of the slice along each dimension.

    Returns:
      The slice (eagerly, a zero-copy view at the clamped offset).
    """
    (operand,) = scalars_to((operand,))
    shape = core.get_aval(operand).shape
    sizes = check_shape(slice_sizes, "dynamic_slice", "slice_sizes")
    starts = _start_operands(start_indices, shape, sizes)
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=sizes)


def dynamic_update_slice(operand: ArrayLike, update: ArrayLike, start_indices: Any) -> Array:
    """``operand`` with ``update`` written at computed start positions.

    Args:
      operand: the array.
      update: an array of the operand's dtype and rank, no larger than it.
      start_indices: as for :func:`dynamic_slice`; clamped so the update fits.

    Returns:
      A new array.
    """
    operand, update = scalars_to((operand, update))
    shape = core.get_aval(operand).shape
    starts = _start_operands(start_indices, shape, core.get_aval(update).shape)
    return dynamic_update_slice_p.bind(operand, update, *starts)


def _in_dim(operand: Any, start_index: Any, axis: int, op: str):
    shape = core.get_aval(operand).shape
    axis = canonicalize_axis(axis, len(shape), op)
    starts: list[Any] = [0] * len(shape)
    starts[axis] = start_index
    return shape, axis, starts


def dynamic_slice_in_dim(operand: ArrayLike, start_index: Any, slice_size: int,
                         axis: int = 0) -> Array:
    """:func:`dynamic_slice` along one dimension (the others are taken whole).

    Args:
      operand: the array.
      start_index: the (possibly traced) start along ``axis``; clamped as in dynamic_slice.
      slice_size: the static size along ``axis``.
      axis: the dimension.

    Returns:
      The slice.
    """
    (operand,) = scalars_to((operand,))
    shape, axis, starts = _in_dim(operand, start_index, axis, "dynamic_slice_in_dim")
    sizes = list(shape)
    sizes[axis] = index_arg(slice_size, "dynamic_slice_in_dim", "slice_size")
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand: ArrayLike, index: Any, axis: int = 0,
                         keepdims: bool = True) -> Array:
    """Element ``index`` (possibly traced, clamped) along ``axis``.

    Args:
      operand: the array.
      index: the position along ``axis``.
      axis: the dimension.
      keepdims: keep ``axis`` as a size-1 dimension (True) or drop it.

    Returns:
      The selected slice.
    """
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand: ArrayLike, update: ArrayLike, start_index: Any,
                                axis: int) -> Array:
    """:func:`dynamic_update_slice` at ``start_index`` along ``axis`` (0 along the others).

    Args:
      operand: the array.
      update: the values to write, of the operand's rank.
      start_index: the (possibly traced) start along ``axis``; clamped so the update fits.
      axis: the dimension.

    Returns:
      A new array.
    """
    operand, update = scalars_to((operand, update))
    _, _, starts = _in_dim(operand, start_index, axis, "dynamic_update_slice_in_dim")
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand: ArrayLike, update: ArrayLike, index: Any,
                                axis: int) -> Array:
    """Writes ``update`` at position ``index`` along ``axis``.

    Args:
      operand: the array.
      update: the values, with or without the size-1 ``axis``.
      index: the (possibly traced) position; clamped.
      axis: the dimension.

    Returns:
      A new array.
    """
    operand, update = scalars_to((operand, update))
    ndim = core.get_aval(operand).ndim
    axis = canonicalize_axis(axis, ndim, "dynamic_update_index_in_dim")
    if core.get_aval(update).ndim == ndim - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)


# ---- gather / scatter ----

def _static_scalar(v: Any, op: str, arg: str) -> Any:
    if isinstance(v, core.Tracer):
        raise TypeError(f"{op}: argument '{arg}' must be a static scalar, got a traced value")
    if isinstance(v, (Array, np.ndarray, np.generic)):
        v = np.asarray(v)
        if v.ndim:
            raise TypeError(f"{op}: argument '{arg}' must be a scalar, got shape {v.shape}")
        return v.item()
    return v


def _default_fill(dtype: np.dtype) -> Any:
    """JAX's fill for out-of-bounds gathers: NaN, the minimum signed or maximum unsigned
    integer, True."""
    if dtypes.is_inexact(dtype):
        return float("nan")
    if dtype.kind == "i":
        return int(np.iinfo(dtype).min)
    if dtype.kind == "u":
        return int(np.iinfo(dtype).max)
    return True


def _tuples(dn: Any, cls: type, op: str) -> Any:
    if not isinstance(dn, cls):
        raise TypeError(f"{op}: argument 'dimension_numbers' must be a {cls.__name__}, got "
                        f"{type(dn).__name__}")
    try:
        return cls(*(tuple(operator.index(d) for d in field) for field in dn))
    except TypeError:
        raise TypeError(f"{op}: argument 'dimension_numbers' must hold sequences of ints, got "
                        f"{dn}") from None


def gather(operand: ArrayLike, start_indices: ArrayLike,
           dimension_numbers: GatherDimensionNumbers, slice_sizes: Sequence[int], *,
           unique_indices: bool = False, indices_are_sorted: bool = False,
           mode: str | GatherScatterMode | None = None, fill_value: Any = None) -> Array:
    """XLA's gather: slices of ``operand`` at positions read from ``start_indices``.

    Args:
      operand: the array to take slices from.
      start_indices: an integer array whose last dimension is the index vector.
      dimension_numbers: a :class:`GatherDimensionNumbers`.
      slice_sizes: the slice size along every operand dimension.
      unique_indices: a promise (unused by the CPU kernel).
      indices_are_sorted: a promise (unused by the CPU kernel).
      mode: out-of-bounds handling; None means PROMISE_IN_BOUNDS (which clamps, as in JAX,
        while its transpose, a scatter-add in the same mode, drops the out-of-bounds
        cotangents), "clip" clamps (both ways), "fill" returns ``fill_value`` for any window
        not wholly in bounds.
      fill_value: the fill for "fill" mode; by default NaN for inexact dtypes, the minimum
        signed / maximum unsigned integer, True for bool.

    Returns:
      The gathered array: batch dimensions from ``start_indices``, window dimensions at
      ``offset_dims``.
    """
    (operand,) = scalars_to((operand,))
    parsed = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                        else mode)
    if parsed is GatherScatterMode.FILL_OR_DROP:
        fill_value = (_default_fill(core.get_aval(operand).dtype) if fill_value is None
                      else _static_scalar(fill_value, "gather", "fill_value"))
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices,
                         dimension_numbers=_tuples(dimension_numbers, GatherDimensionNumbers,
                                                   "gather"),
                         slice_sizes=check_shape(slice_sizes, "gather", "slice_sizes"),
                         indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=parsed,
                         fill_value=fill_value)


def _scatter(prim: Primitive, operand: ArrayLike, scatter_indices: ArrayLike,
             updates: ArrayLike, dimension_numbers: ScatterDimensionNumbers,
             indices_are_sorted: bool, unique_indices: bool,
             mode: str | GatherScatterMode | None) -> Array:
    operand, updates = scalars_to((operand, updates))
    return prim.bind(operand, scatter_indices, updates,
                     dimension_numbers=_tuples(dimension_numbers, ScatterDimensionNumbers,
                                               prim.name),
                     indices_are_sorted=bool(indices_are_sorted),
                     unique_indices=bool(unique_indices),
                     mode=GatherScatterMode.from_any(mode))


_SCATTER_DOC = """XLA's scatter, where {what}.

    Args:
      operand: the array to update (not modified: the result is a new array).
      scatter_indices: an integer array whose last dimension is the index vector.
      updates: the values, of the operand's dtype (Python scalars convert weakly).
      dimension_numbers: a :class:`ScatterDimensionNumbers`.
      indices_are_sorted: a promise (unused by the CPU kernel).
      unique_indices: a promise (unused by the CPU kernel).
      mode: out-of-bounds handling; None or "drop"/"fill" drops any update window not wholly
        in bounds, "clip" clamps, "promise_in_bounds" drops (as JAX's XLA implementation).

    Returns:
      ``operand`` with the updates applied in row-major order of the scatter indices, then of
      the window: {order}.
    """


def _declare_scatter(name: str, prim: Primitive, what: str, order: str):
    def fn(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
           dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
           unique_indices: bool = False, mode: str | GatherScatterMode | None = None) -> Array:
        return _scatter(prim, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _SCATTER_DOC.format(what=what, order=order)
    return fn


scatter = _declare_scatter("scatter", scatter_p, "updates replace the operand's values",
                           "for duplicate indices the last update wins")
scatter_add = _declare_scatter("scatter_add", scatter_add_p, "updates are added",
                               "duplicate indices accumulate")
scatter_mul = _declare_scatter("scatter_mul", scatter_mul_p, "updates multiply",
                               "duplicate indices accumulate")
scatter_min = _declare_scatter("scatter_min", scatter_min_p, "the minimum is kept (NaN "
                               "propagates; bool: and)", "duplicate indices accumulate")
scatter_max = _declare_scatter("scatter_max", scatter_max_p, "the maximum is kept (NaN "
                               "propagates; bool: or)", "duplicate indices accumulate")
