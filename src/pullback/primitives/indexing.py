"""Indexing with computed positions: dynamic_slice, dynamic_update_slice, gather and scatter
(backends/cpu/csrc/gather.c and movement.c).

Start indices are operands (traced values in general). dynamic_slice/dynamic_update_slice clamp
their starts so the slice fits, as XLA does; eagerly, dynamic_slice is a view at the clamped
offset. gather/scatter use XLA's general dimension numbers with JAX's conventions (the index
vector is the last dimension of the indices) and JAX's out-of-bounds modes:

- CLIP: starts are clamped so the whole window is in bounds.
- FILL_OR_DROP: a gather window that is not wholly in bounds reads ``fill_value``; a scatter
  window that is not wholly in bounds is dropped.
- PROMISE_IN_BOUNDS: never reads or writes out of bounds either; it behaves as JAX documents
  for its XLA implementation: gathers clamp (as CLIP), scatters drop (as FILL_OR_DROP).

Scatter applies updates in row-major order of the scatter indices, then of the window, so
duplicate indices resolve deterministically: set keeps the last update, add/mul accumulate in
that order, min/max propagate NaN.

Derivatives: everything is linear in its array operands (never in the integer indices, whose
tangents are ignored) except scatter-mul (linear in the operand) and scatter-min/max; see
"scatter derivatives" below for how duplicates are handled. Batching: per-lane indices become
gather/scatter batching dimensions (operand_batching_dims), a dynamic slice with batched starts
a gather (a dynamic update, a scatter) in CLIP mode, which clamps as they do.
"""
from __future__ import annotations

import enum
import math
import struct
from typing import Any, NamedTuple, Sequence

import numpy as np

from ..tracer import dtypes
from ..tracer import strides as views
from ..tracer.avals import ShapedArray
from ..tracer.array import Array
from ..tracer.core import Primitive, get_aval
from ..tracer.shapes import check_shape
from .conversion import convert_element_type_p
from .elementwise import div_p, eq_p, mul_p, select_n_p, sub_p
from .movement import broadcast_in_dim_p, concatenate_p, iota_p, reshape_p
from .rules import (NONLINEAR, Kernel, Zero, add_tangents, batch_size, instantiate,
                    is_undefined, linear_jvp, linear_transpose, move_bdim, zeros_like_aval)


# ---- the dimension-number and mode types of jax.lax ----

class GatherDimensionNumbers(NamedTuple):
    """How the dimensions of a gather's operand, start indices and output relate (XLA's).

    Args:
      offset_dims: output dimensions (ascending) that index into a slice of the operand.
      collapsed_slice_dims: operand dimensions (ascending) of slice size 1 that the output
        omits.
      start_index_map: for each element of the index vector (the last dimension of the start
        indices), the operand dimension it starts.
      operand_batching_dims: operand dimensions (ascending, slice size 1) indexed by the
        matching ``start_indices_batching_dims`` instead of by an index value.
      start_indices_batching_dims: the start-indices dimensions paired with
        ``operand_batching_dims``.
    """
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the dimensions of a scatter's operand, indices and updates relate (XLA's).

    Args:
      update_window_dims: dimensions of ``updates`` (ascending) that are window dimensions.
      inserted_window_dims: operand dimensions (ascending) of window size 1 that ``updates``
        omits.
      scatter_dims_to_operand_dims: for each element of the index vector (the last dimension of
        the indices), the operand dimension it starts.
      operand_batching_dims: operand dimensions (ascending) indexed by the matching
        ``scatter_indices_batching_dims``.
      scatter_indices_batching_dims: the indices dimensions paired with
        ``operand_batching_dims``.
    """
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """How gather and scatter treat out-of-bounds indices (see the module docstring).

    CLIP clamps starts so the window fits; FILL_OR_DROP fills (gather) or drops (scatter) a
    window that does not wholly fit; PROMISE_IN_BOUNDS clamps gathers and drops scatters.
    """
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(s: "str | GatherScatterMode | None") -> "GatherScatterMode":
        """The mode named by ``s``: a mode, "clip", "fill"/"drop", "promise_in_bounds", or
        None (FILL_OR_DROP, as in JAX)."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f"unknown gather/scatter mode {s!r}: use 'clip', 'fill', 'drop', "
                         "'promise_in_bounds' or a GatherScatterMode")


def _kernel_mode(mode: GatherScatterMode, scatter: bool) -> int:
    """The kernels' mode: 0 clamps, 1 fills (gather) or drops (scatter)."""
    if mode is GatherScatterMode.PROMISE_IN_BOUNDS:
        return 1 if scatter else 0
    return 0 if mode is GatherScatterMode.CLIP else 1


# ---- shared checks ----

def _check_index_scalars(op: str, starts: Sequence[ShapedArray], ndim: int) -> None:
    if len(starts) != ndim:
        raise TypeError(f"{op}: argument 'start_indices' must have {ndim} entries (one per "
                        f"operand dimension), got {len(starts)}")
    for i, s in enumerate(starts):
        if s.ndim != 0 or not dtypes.is_integer(s.dtype):
            raise TypeError(f"{op}: argument 'start_indices' must hold integer scalars, got "
                            f"{s.str_short()} at position {i}")


def _clamped_starts(starts: Sequence[np.ndarray], shape: Sequence[int],
                    sizes: Sequence[int]) -> tuple[int, ...]:
    return tuple(min(max(int(s), 0), n - z) for s, n, z in zip(starts, shape, sizes))


def _dims(value: Any, op: str, arg: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in value)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: argument '{arg}' must be a sequence of ints, got {value!r}") from None


def _check_dim_set(op: str, arg: str, dims: tuple[int, ...], limit: int, *,
                   ascending: bool = True) -> None:
    if any(not 0 <= d < limit for d in dims) or len(set(dims)) != len(dims) or \
            (ascending and list(dims) != sorted(dims)):
        order = "distinct ascending" if ascending else "distinct"
        raise ValueError(f"{op}: argument '{arg}' must hold {order} dimensions in [0, {limit}), "
                         f"got {dims}")


def _check_disjoint(op: str, a: str, da: tuple, b: str, db: tuple) -> None:
    if set(da) & set(db):
        raise ValueError(f"{op}: arguments '{a}' {da} and '{b}' {db} must not share a dimension")


def _check_indices(op: str, arg: str, indices: ShapedArray) -> None:
    if not dtypes.is_integer(indices.dtype):
        raise TypeError(f"{op}: argument '{arg}' must have an integer dtype, got {indices.dtype}")
    if indices.ndim < 1:
        raise TypeError(f"{op}: argument '{arg}' must have at least one dimension (the last is "
                        "the index vector), got a scalar")


def _check_batching(op: str, operand: ShapedArray, indices: ShapedArray, obd: tuple,
                    ibd: tuple, ibd_name: str) -> None:
    _check_dim_set(op, "operand_batching_dims", obd, operand.ndim)
    _check_dim_set(op, ibd_name, ibd, indices.ndim - 1, ascending=False)
    if len(obd) != len(ibd):
        raise TypeError(f"{op}: arguments 'operand_batching_dims' {obd} and '{ibd_name}' {ibd} "
                        "must have equal lengths")
    ob = tuple(operand.shape[d] for d in obd)
    ib = tuple(indices.shape[d] for d in ibd)
    if ob != ib:
        raise TypeError(f"{op}: the operand batching dimensions have sizes {ob} but the index "
                        f"batching dimensions have sizes {ib}")


def _index_values(indices: np.ndarray) -> np.ndarray:
    """Indices as int64; uint64 values past the int64 range saturate (they are out of range)."""
    if indices.dtype == np.uint64:
        indices = np.minimum(indices, np.iinfo(np.int64).max)
    return indices.astype(np.int64)


# ---- dynamic_slice ----

def _dynamic_slice_aval(x: ShapedArray, *starts: ShapedArray,
                        slice_sizes: tuple[int, ...]) -> ShapedArray:
    _check_index_scalars("dynamic_slice", starts, x.ndim)
    sizes = check_shape(slice_sizes, "dynamic_slice", "slice_sizes")
    if len(sizes) != x.ndim or any(z > n for z, n in zip(sizes, x.shape)):
        raise TypeError(f"dynamic_slice: argument 'slice_sizes' must have {x.ndim} entries, each "
                        f"at most the operand's size, got {sizes} for shape {x.shape}")
    return x.update(shape=sizes)


def _dynamic_slice_cpu(k, x, *starts, slice_sizes):
    s = _clamped_starts(starts, x.shape, slice_sizes)
    return k.view(x, *views.slice_(x.shape, x.strides, s,
                                   [a + z for a, z in zip(s, slice_sizes)], [1] * x.ndim))


def _dynamic_slice_ref(x, *starts, slice_sizes):
    s = _clamped_starts(starts, x.shape, slice_sizes)
    return x[tuple(slice(a, a + z) for a, z in zip(s, slice_sizes))]


dynamic_slice_p = Primitive("dynamic_slice")
dynamic_slice_p.abstract_eval = _dynamic_slice_aval
dynamic_slice_p.cpu = _dynamic_slice_cpu
dynamic_slice_p.reference = _dynamic_slice_ref


@linear_transpose
def _dynamic_slice_transpose(ct, x, *starts, slice_sizes):
    zeros = _zeros(x.aval.shape, ct)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts)] + [None] * len(starts)


def _dynamic_slice_batch(vals, dims, *, slice_sizes):
    (x, *starts), (dx, *dstarts) = vals, dims
    size = batch_size(vals, dims)
    if all(d is None for d in dstarts):  # the whole batch dimension is one more slice dim
        starts.insert(dx, _ZERO_START)
        sizes = tuple(slice_sizes[:dx]) + (size,) + tuple(slice_sizes[dx:])
        return dynamic_slice_p.bind(x, *starts, slice_sizes=sizes), dx
    # per-lane starts: a gather of one clamped window per lane
    nd = len(starts)
    dn = GatherDimensionNumbers(offset_dims=tuple(range(1, nd + 1)), collapsed_slice_dims=(),
                                start_index_map=tuple(range(1, nd + 1)),
                                operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    return gather_p.bind(move_bdim(x, dx, 0, size), _stack_starts(starts, dstarts, size),
                         dimension_numbers=dn, slice_sizes=(min(1, size),) + tuple(slice_sizes),
                         indices_are_sorted=False, unique_indices=False,
                         mode=GatherScatterMode.CLIP, fill_value=None), 0


dynamic_slice_p.jvp = linear_jvp(dynamic_slice_p, linear=(0,))
dynamic_slice_p.transpose = _dynamic_slice_transpose
dynamic_slice_p.batch = _dynamic_slice_batch


# ---- dynamic_update_slice ----

def _dynamic_update_slice_aval(x: ShapedArray, update: ShapedArray,
                               *starts: ShapedArray) -> ShapedArray:
    op = "dynamic_update_slice"
    if update.dtype != x.dtype:
        raise TypeError(f"{op}: argument 'update' has dtype {update.dtype}, but the operand has "
                        f"dtype {x.dtype}")
    if update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        raise TypeError(f"{op}: argument 'update' must have the operand's rank and fit inside "
                        f"it, got shape {update.shape} for operand shape {x.shape}")
    _check_index_scalars(op, starts, x.ndim)
    return x.update(weak_type=x.weak_type and update.weak_type)


def _dynamic_update_slice_ref(x, update, *starts):
    s = _clamped_starts(starts, x.shape, update.shape)
    out = x.copy()
    out[tuple(slice(a, a + z) for a, z in zip(s, update.shape))] = update
    return out


dynamic_update_slice_p = Primitive("dynamic_update_slice")
dynamic_update_slice_p.abstract_eval = _dynamic_update_slice_aval
dynamic_update_slice_p.cpu = lambda k, x, update, *starts: k.dynamic_update_slice(
    x, update, _clamped_starts(starts, x.shape, update.shape))
dynamic_update_slice_p.reference = _dynamic_update_slice_ref


@linear_transpose
def _dynamic_update_slice_transpose(ct, x, update, *starts):
    ushape = get_aval(update).shape
    ct_x = ct_u = None
    if is_undefined(x):  # the positions the update overwrites get no cotangent
        ct_x = dynamic_update_slice_p.bind(ct, _zeros(ushape, ct), *starts)
    if is_undefined(update):
        ct_u = dynamic_slice_p.bind(ct, *starts, slice_sizes=ushape)
    return [ct_x, ct_u] + [None] * len(starts)


def _dynamic_update_slice_batch(vals, dims):
    (x, update, *starts), (dx, du, *dstarts) = vals, dims
    size = batch_size(vals, dims)
    x, update = move_bdim(x, dx, 0, size), move_bdim(update, du, 0, size)
    if all(d is None for d in dstarts):
        return dynamic_update_slice_p.bind(x, update, _ZERO_START, *starts), 0
    # per-lane starts: a scatter of one clamped window per lane
    nd = len(starts)
    dn = ScatterDimensionNumbers(update_window_dims=tuple(range(1, nd + 1)),
                                 inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=tuple(range(1, nd + 1)),
                                 operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
    return scatter_p.bind(x, _stack_starts(starts, dstarts, size), update, dimension_numbers=dn,
                          indices_are_sorted=True, unique_indices=True,
                          mode=GatherScatterMode.CLIP), 0


dynamic_update_slice_p.jvp = linear_jvp(dynamic_update_slice_p, linear=(0, 1))
dynamic_update_slice_p.transpose = _dynamic_update_slice_transpose
dynamic_update_slice_p.batch = _dynamic_update_slice_batch


_ZERO_START = Array(np.zeros((), np.int32))


def _zeros(shape: tuple[int, ...], like: Any) -> Any:
    """Zeros of ``shape`` with the dtype of ``like`` (a value)."""
    return zeros_like_aval(ShapedArray(tuple(shape), get_aval(like).dtype))


def _stack_starts(starts: Sequence[Any], dims: Sequence[int | None], size: int) -> Any:
    """Scalar start operands, some batched, as one (size, len(starts)) index array (int64 if
    their dtypes differ)."""
    kinds = {get_aval(s).dtype for s in starts}
    common = kinds.pop() if len(kinds) == 1 else np.dtype(np.int64)
    cols = []
    for s, d in zip(starts, dims):
        if get_aval(s).dtype != common:
            s = convert_element_type_p.bind(s, new_dtype=common, weak_type=False)
        s = move_bdim(s, d, 0, size)
        cols.append(broadcast_in_dim_p.bind(s, shape=(size, 1), broadcast_dimensions=(0,)))
    return concatenate_p.bind(*cols, dimension=1)


# ---- gather ----

def _fill_array(fill_value: Any, dtype: np.dtype, op: str) -> np.ndarray:
    try:
        return np.asarray(fill_value, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{op}: argument 'fill_value' {fill_value!r} is not representable in "
                        f"the operand's dtype {dtype}") from None


def _gather_aval(operand: ShapedArray, indices: ShapedArray, *, dimension_numbers,
                 slice_sizes, indices_are_sorted=False, unique_indices=False, mode=None,
                 fill_value=None) -> ShapedArray:
    op = "gather"
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError(f"{op}: argument 'dimension_numbers' must be a GatherDimensionNumbers, "
                        f"got {type(dimension_numbers).__name__}")
    if not isinstance(mode, GatherScatterMode):
        raise TypeError(f"{op}: argument 'mode' must be a GatherScatterMode, got {mode!r}")
    _check_indices(op, "start_indices", indices)
    dn = dimension_numbers
    offset = _dims(dn.offset_dims, op, "offset_dims")
    collapsed = _dims(dn.collapsed_slice_dims, op, "collapsed_slice_dims")
    sim = _dims(dn.start_index_map, op, "start_index_map")
    obd = _dims(dn.operand_batching_dims, op, "operand_batching_dims")
    ibd = _dims(dn.start_indices_batching_dims, op, "start_indices_batching_dims")
    sizes = check_shape(slice_sizes, op, "slice_sizes")
    nb = indices.ndim - 1
    out_ndim = len(offset) + nb
    _check_dim_set(op, "offset_dims", offset, out_ndim)
    _check_dim_set(op, "collapsed_slice_dims", collapsed, operand.ndim)
    _check_dim_set(op, "start_index_map", sim, operand.ndim, ascending=False)
    _check_batching(op, operand, indices, obd, ibd, "start_indices_batching_dims")
    _check_disjoint(op, "collapsed_slice_dims", collapsed, "operand_batching_dims", obd)
    _check_disjoint(op, "start_index_map", sim, "operand_batching_dims", obd)
    if len(sim) != indices.shape[-1]:
        raise TypeError(f"{op}: argument 'start_index_map' has {len(sim)} entries but the index "
                        f"vector (last dimension of 'start_indices') has {indices.shape[-1]}")
    if len(sizes) != operand.ndim or any(z > n for z, n in zip(sizes, operand.shape)):
        raise TypeError(f"{op}: argument 'slice_sizes' must have {operand.ndim} entries, each at "
                        f"most the operand's size, got {sizes} for shape {operand.shape}")
    if len(offset) + len(collapsed) + len(obd) != operand.ndim:
        raise TypeError(f"{op}: every operand dimension must be an offset, collapsed or batching "
                        f"dimension: got {len(offset)} offset_dims, collapsed_slice_dims "
                        f"{collapsed} and operand_batching_dims {obd} for rank {operand.ndim}")
    if any(sizes[d] != 1 for d in collapsed):
        raise TypeError(f"{op}: argument 'collapsed_slice_dims' {collapsed} must name dimensions "
                        f"of slice size 1, got slice_sizes {sizes}")
    if any(sizes[d] != min(1, operand.shape[d]) for d in obd):
        raise TypeError(f"{op}: argument 'operand_batching_dims' {obd} must name dimensions of "
                        f"slice size 1, got slice_sizes {sizes}")
    if mode is GatherScatterMode.FILL_OR_DROP:
        _fill_array(fill_value, operand.dtype, op)
    window = iter(sizes[d] for d in range(operand.ndim) if d not in collapsed and d not in obd)
    batch = iter(indices.shape[:-1])
    shape = tuple(next(window) if o in offset else next(batch) for o in range(out_ndim))
    return ShapedArray(shape, operand.dtype, operand.weak_type)


# The kernels' parameter structs (csrc/gather.c: gather_params, scatter_params): dimension
# tuples padded to 32 entries, each with its length.
_MAXDIMS = 32
_GATHER_PARAMS = struct.Struct(f"={_MAXDIMS}q6i{5 * _MAXDIMS}i16s")
_SCATTER_PARAMS = struct.Struct(f"=6i{5 * _MAXDIMS}i")


def _padded(*tuples: Sequence[int]) -> list[int]:
    return [v for t in tuples for v in tuple(t) + (0,) * (_MAXDIMS - len(t))]


def _gather_params(operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value=None,
                   indices_are_sorted=False, unique_indices=False) -> bytes:
    dn = dimension_numbers
    kmode = _kernel_mode(mode, scatter=False)
    fill = _fill_array(fill_value, operand.dtype, "gather").tobytes() if kmode else b""
    dims = (dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
            dn.operand_batching_dims, dn.start_indices_batching_dims)
    return _GATHER_PARAMS.pack(*_padded(slice_sizes), kmode, *map(len, dims), *_padded(*dims),
                               fill)


def _scatter_params(operand, indices, updates, *, dimension_numbers, mode,
                    indices_are_sorted=False, unique_indices=False) -> bytes:
    dn = dimension_numbers
    dims = (dn.update_window_dims, dn.inserted_window_dims, dn.scatter_dims_to_operand_dims,
            dn.operand_batching_dims, dn.scatter_indices_batching_dims)
    return _SCATTER_PARAMS.pack(_kernel_mode(mode, scatter=True), *map(len, dims),
                                *_padded(*dims))


def _window_starts(operand_shape, indices, index_map, obd, ibd, window_sizes):
    """Per operand dimension, the window starts over the batch shape (int64 arrays, clamped so
    the window fits) and whether each window fitted before clamping."""
    batch = indices.shape[:-1]
    values = _index_values(indices)
    grid = np.indices(batch, dtype=np.int64) if batch else np.zeros((0,), np.int64)
    starts = [np.zeros(batch, np.int64) for _ in operand_shape]
    for k, d in enumerate(index_map):
        starts[d] = values[..., k]
    for od, bd in zip(obd, ibd):
        starts[od] = grid[bd]
    in_bounds = np.ones(batch, bool)
    for d in index_map:
        hi = operand_shape[d] - window_sizes[d]
        in_bounds &= (starts[d] >= 0) & (starts[d] <= hi)
        starts[d] = np.clip(starts[d], 0, max(hi, 0))
    return starts, in_bounds


def _full_index(starts, window_dims, window_sizes, batch):
    """Operand index arrays of shape batch + window for every (batch, window) position."""
    wshape = tuple(window_sizes[d] for d in window_dims)
    out = []
    for d, s in enumerate(starts):
        s = s.reshape(batch + (1,) * len(wshape))
        if d in window_dims:
            j = window_dims.index(d)
            s = s + np.arange(window_sizes[d]).reshape(
                (1,) * len(batch) + tuple(-1 if i == j else 1 for i in range(len(wshape))))
        out.append(np.broadcast_to(s, batch + wshape))
    return tuple(out)


def _gather_ref(operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value=None,
                indices_are_sorted=False, unique_indices=False):
    dn = dimension_numbers
    batch = indices.shape[:-1]
    window_dims = [d for d in range(operand.ndim)
                   if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    starts, in_bounds = _window_starts(operand.shape, indices, dn.start_index_map,
                                       dn.operand_batching_dims, dn.start_indices_batching_dims,
                                       slice_sizes)
    full = _full_index(starts, window_dims, slice_sizes, batch)
    out = operand[full] if full else np.broadcast_to(operand, batch)  # a 0-d operand
    if _kernel_mode(mode, scatter=False):
        mask = in_bounds.reshape(batch + (1,) * len(window_dims))
        out = np.where(mask, out, _fill_array(fill_value, operand.dtype, "gather"))
    nb = len(batch)
    return np.moveaxis(out, list(range(nb, nb + len(window_dims))), list(dn.offset_dims))


gather_p = Primitive("gather")
gather_p.abstract_eval = _gather_aval
gather_p.cpu = Kernel(gather_p, "gather", _gather_params)
gather_p.reference = _gather_ref


def _gather_jvp(primals, tangents, **params):
    operand, indices = primals
    out = gather_p.bind(operand, indices, **params)
    if type(tangents[0]) is Zero:
        return out, Zero.from_primal(out)
    if params["mode"] is GatherScatterMode.FILL_OR_DROP:
        params = dict(params, fill_value=0)  # the fill is a constant: its tangent is zero
    return out, gather_p.bind(tangents[0], indices, **params)


@linear_transpose
def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes, mode,
                      fill_value=None, indices_are_sorted=False, unique_indices=False):
    # every gathered element's cotangent is added back by a scatter-add in the same mode, as
    # JAX does: CLIP clamps both ways, FILL_OR_DROP fills then drops, and PROMISE_IN_BOUNDS
    # (the default of x[i]) clamps the read but drops the out-of-bounds cotangent
    dn = dimension_numbers
    sdn = ScatterDimensionNumbers(
        update_window_dims=tuple(dn.offset_dims),
        inserted_window_dims=tuple(dn.collapsed_slice_dims),
        scatter_dims_to_operand_dims=tuple(dn.start_index_map),
        operand_batching_dims=tuple(dn.operand_batching_dims),
        scatter_indices_batching_dims=tuple(dn.start_indices_batching_dims))
    ct_operand = scatter_add_p.bind(_zeros(operand.aval.shape, ct), indices, ct,
                                    dimension_numbers=sdn, indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices, mode=mode)
    return [ct_operand, None]


def _shift(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


def _gather_batch(vals, dims, *, dimension_numbers, slice_sizes, **params):
    (operand, indices), (do, di) = vals, dims
    size = batch_size(vals, dims)
    dn = dimension_numbers
    operand = move_bdim(operand, do, 0, size)
    if di is None:  # the operand's batch dimension becomes one more (whole) window dimension
        bdn = GatherDimensionNumbers(
            offset_dims=(0,) + _shift(dn.offset_dims),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            start_indices_batching_dims=tuple(dn.start_indices_batching_dims))
        sizes = (size,) + tuple(slice_sizes)
    else:  # batched indices: lane b of the indices reads lane b of the operand
        indices = move_bdim(indices, di, 0, size)
        bdn = GatherDimensionNumbers(
            offset_dims=_shift(dn.offset_dims),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
            start_indices_batching_dims=(0,) + _shift(dn.start_indices_batching_dims))
        sizes = (min(1, size),) + tuple(slice_sizes)
    return gather_p.bind(operand, indices, dimension_numbers=bdn, slice_sizes=sizes,
                         **params), 0


gather_p.jvp = _gather_jvp
gather_p.transpose = _gather_transpose
gather_p.batch = _gather_batch


# ---- scatter, scatter-add, scatter-mul, scatter-min, scatter-max ----

def _scatter_aval(name: str, operand: ShapedArray, indices: ShapedArray, updates: ShapedArray,
                  *, dimension_numbers, indices_are_sorted=False, unique_indices=False,
                  mode=None) -> ShapedArray:
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError(f"{name}: argument 'dimension_numbers' must be a "
                        f"ScatterDimensionNumbers, got {type(dimension_numbers).__name__}")
    if not isinstance(mode, GatherScatterMode):
        raise TypeError(f"{name}: argument 'mode' must be a GatherScatterMode, got {mode!r}")
    _check_indices(name, "scatter_indices", indices)
    if updates.dtype != operand.dtype:
        raise TypeError(f"{name}: argument 'updates' has dtype {updates.dtype}, but the operand "
                        f"has dtype {operand.dtype}")
    kinds = _SCATTER_DTYPES[name]
    if operand.dtype not in kinds:
        raise TypeError(f"{name}: argument 'operand' has dtype {operand.dtype}, which {name} "
                        f"does not support")
    dn = dimension_numbers
    uwd = _dims(dn.update_window_dims, name, "update_window_dims")
    iwd = _dims(dn.inserted_window_dims, name, "inserted_window_dims")
    sdod = _dims(dn.scatter_dims_to_operand_dims, name, "scatter_dims_to_operand_dims")
    obd = _dims(dn.operand_batching_dims, name, "operand_batching_dims")
    ibd = _dims(dn.scatter_indices_batching_dims, name, "scatter_indices_batching_dims")
    nb = indices.ndim - 1
    if updates.ndim != nb + len(uwd):
        raise TypeError(f"{name}: argument 'updates' must have rank {nb + len(uwd)} (the "
                        f"indices' batch rank plus the update window dimensions), got "
                        f"{updates.ndim}")
    _check_dim_set(name, "update_window_dims", uwd, updates.ndim)
    _check_dim_set(name, "inserted_window_dims", iwd, operand.ndim)
    _check_dim_set(name, "scatter_dims_to_operand_dims", sdod, operand.ndim, ascending=False)
    _check_batching(name, operand, indices, obd, ibd, "scatter_indices_batching_dims")
    _check_disjoint(name, "inserted_window_dims", iwd, "operand_batching_dims", obd)
    _check_disjoint(name, "scatter_dims_to_operand_dims", sdod, "operand_batching_dims", obd)
    if len(uwd) + len(iwd) + len(obd) != operand.ndim:
        raise TypeError(f"{name}: every operand dimension must be an update window, inserted or "
                        f"batching dimension: got update_window_dims {uwd}, inserted_window_dims "
                        f"{iwd} and operand_batching_dims {obd} for rank {operand.ndim}")
    if len(sdod) != indices.shape[-1]:
        raise TypeError(f"{name}: argument 'scatter_dims_to_operand_dims' has {len(sdod)} "
                        f"entries but the index vector (last dimension of 'scatter_indices') has "
                        f"{indices.shape[-1]}")
    window_dims = [d for d in range(operand.ndim) if d not in iwd and d not in obd]
    for d, u in zip(window_dims, uwd):
        if updates.shape[u] > operand.shape[d]:
            raise TypeError(f"{name}: update window dimension {u} has size {updates.shape[u]}, "
                            f"more than operand dimension {d} ({operand.shape[d]})")
    scatter_sizes = tuple(n for i, n in enumerate(updates.shape) if i not in uwd)
    if scatter_sizes != indices.shape[:-1]:
        raise TypeError(f"{name}: the scatter dimensions of 'updates' have sizes {scatter_sizes}, "
                        f"but the indices' batch dimensions have sizes {indices.shape[:-1]}")
    return operand


def _scatter_window_sizes(operand_shape, updates_shape, dn) -> list[int]:
    uwd = iter(dn.update_window_dims)
    return [1 if d in dn.inserted_window_dims or d in dn.operand_batching_dims
            else updates_shape[next(uwd)] for d in range(len(operand_shape))]


def _scatter_ref(name: str, operand, indices, updates, *, dimension_numbers, mode,
                 indices_are_sorted=False, unique_indices=False):
    dn = dimension_numbers
    out = np.array(operand, copy=True, order="C")
    batch = indices.shape[:-1]
    sizes = _scatter_window_sizes(operand.shape, updates.shape, dn)
    window_dims = [d for d in range(operand.ndim)
                   if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    if out.size == 0 or updates.size == 0:
        return out
    starts, in_bounds = _window_starts(operand.shape, indices, dn.scatter_dims_to_operand_dims,
                                       dn.operand_batching_dims,
                                       dn.scatter_indices_batching_dims, sizes)
    # updates with their scatter dimensions first: (batch..., window...) in application order
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    upd = np.transpose(updates, scatter_dims + list(dn.update_window_dims))
    full = _full_index(starts, window_dims, sizes, batch)
    keep = np.broadcast_to(in_bounds.reshape(batch + (1,) * len(window_dims)), upd.shape)
    if not _kernel_mode(mode, scatter=True):
        keep = np.ones(upd.shape, bool)
    flat = (np.ravel_multi_index(tuple(i[keep] for i in full), operand.shape) if full
            else np.zeros(np.count_nonzero(keep), np.intp))  # a 0-d operand
    vals = upd[keep]
    target = out.reshape(-1)
    if name == "scatter":
        # the last update of each position wins
        last = len(flat) - 1 - np.unique(flat[::-1], return_index=True)[1]
        target[flat[last]] = vals[last]
    else:
        _SCATTER_UFUNCS[name].at(target, flat, vals)
    return out


_NUMERIC = tuple(d for d in dtypes.SUPPORTED if d != dtypes.bool_ and d not in dtypes.FLOAT8)
_SCATTER_DTYPES = {"scatter": dtypes.SUPPORTED, "scatter-add": _NUMERIC,
                   "scatter-mul": _NUMERIC, "scatter-min": _NUMERIC + (dtypes.bool_,),
                   "scatter-max": _NUMERIC + (dtypes.bool_,)}
_SCATTER_UFUNCS = {"scatter-add": np.add, "scatter-mul": np.multiply,
                   "scatter-min": np.minimum, "scatter-max": np.maximum}


def _declare_scatter(name: str) -> Primitive:
    p = Primitive(name)
    p.abstract_eval = lambda *avals, **params: _scatter_aval(name, *avals, **params)
    p.cpu = Kernel(p, name, _scatter_params)  # one kernel per combiner, named as the primitive
    p.reference = lambda *xs, **params: _scatter_ref(name, *xs, **params)
    p.batch = _scatter_batcher(p)
    return p


def _scatter_batcher(prim: Primitive):
    """Every operand gets its batch dimension in front (unbatched ones are broadcast, a
    view), and lane b of the indices and updates scatters into lane b of the operand."""
    def rule(vals, dims, *, dimension_numbers, **params):
        size = batch_size(vals, dims)
        operand, indices, updates = (move_bdim(v, d, 0, size) for v, d in zip(vals, dims))
        dn = dimension_numbers
        bdn = ScatterDimensionNumbers(
            update_window_dims=_shift(dn.update_window_dims),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
            scatter_indices_batching_dims=(0,) + _shift(dn.scatter_indices_batching_dims))
        return prim.bind(operand, indices, updates, dimension_numbers=bdn, **params), 0
    return rule


scatter_p = _declare_scatter("scatter")
scatter_add_p = _declare_scatter("scatter-add")
scatter_mul_p = _declare_scatter("scatter-mul")
scatter_min_p = _declare_scatter("scatter-min")
scatter_max_p = _declare_scatter("scatter-max")


# ---- scatter derivatives ----
#
# Scatter applies its updates in a fixed order, so duplicate indices have one well-defined
# result and every rule below is exact for them (XLA leaves the order unspecified, which is
# why JAX restricts some of these rules to unique indices):
# - scatter (set) is linear in (operand, updates) jointly; its transpose gives the operand
#   the cotangent of the positions no update lands on, and each update the cotangent of its
#   position if it is the update that lands there (the last one), else zero;
# - scatter-add is linear; scatter-mul is linear in the operand, and its jvp in the updates
#   multiplies each update's tangent by the product of the other updates landing on the same
#   position (computed without dividing by a zero update);
# - scatter-min/max: the tangent at a position is the mean of the tangents of every
#   contender (the operand and the updates) equal to the result, as JAX's max does for ties;
#   NaN results have NaN tangents.
# Updates a scatter drops (out of bounds) get zero cotangents and contribute no tangent,
# except in scatter-add's transpose in PROMISE_IN_BOUNDS mode, which reads them clamped as
# JAX's (a gather in the same mode).

def _gather_updates(x: Any, indices: Any, updates_shape: tuple[int, ...],
                    dn: ScatterDimensionNumbers, mode: GatherScatterMode,
                    fill: Any = 0, as_gather: bool = False) -> Any:
    """For every element of a scatter's updates, the value of ``x`` (operand-shaped) at the
    position the scatter writes it to; elements the scatter drops read ``fill``. With
    ``as_gather`` the read is a gather in ``mode`` itself (JAX's transpose of scatter-add),
    which in PROMISE_IN_BOUNDS clamps where the scatter drops."""
    aval = get_aval(x)
    sizes = tuple(_scatter_window_sizes(aval.shape, updates_shape, dn))
    if any(s > n for s, n in zip(sizes, aval.shape)):
        # an empty operand axis: the scatter lands nothing, and no gather can read it
        return broadcast_in_dim_p.bind(Array(np.asarray(fill, aval.dtype)),
                                       shape=tuple(updates_shape), broadcast_dimensions=())
    gdn = GatherDimensionNumbers(
        offset_dims=tuple(dn.update_window_dims),
        collapsed_slice_dims=tuple(dn.inserted_window_dims),
        start_index_map=tuple(dn.scatter_dims_to_operand_dims),
        operand_batching_dims=tuple(dn.operand_batching_dims),
        start_indices_batching_dims=tuple(dn.scatter_indices_batching_dims))
    if not as_gather:  # a scatter clamps in CLIP mode, else drops
        mode = GatherScatterMode.CLIP if mode is GatherScatterMode.CLIP else \
            GatherScatterMode.FILL_OR_DROP
    return gather_p.bind(x, indices, dimension_numbers=gdn, slice_sizes=sizes,
                         indices_are_sorted=False, unique_indices=False, mode=mode,
                         fill_value=fill if mode is GatherScatterMode.FILL_OR_DROP else None)


def _landing_updates(indices: Any, operand_shape: tuple[int, ...],
                     updates_shape: tuple[int, ...], dn: ScatterDimensionNumbers,
                     mode: GatherScatterMode) -> Any:
    """A bool mask over the updates: True where the update element is the one a scatter (set)
    leaves at its position (the last of duplicates; dropped ones never land). Each scatter
    index gets an id, the ids are scattered, and each update reads back which id won."""
    scatter_dims = [i for i in range(len(updates_shape)) if i not in dn.update_window_dims]
    scatter_shape = tuple(updates_shape[i] for i in scatter_dims)
    n = math.prod(scatter_shape)
    id_dtype = np.dtype(np.int32 if n < 2 ** 31 - 1 else np.int64)
    ids = reshape_p.bind(iota_p.bind(dtype=id_dtype, shape=(n,), dimension=0),
                         new_sizes=scatter_shape, dimensions=None)
    ids = broadcast_in_dim_p.bind(ids, shape=tuple(updates_shape),
                                  broadcast_dimensions=tuple(scatter_dims))
    none = broadcast_in_dim_p.bind(Array(np.asarray(-1, id_dtype)), shape=tuple(operand_shape),
                                   broadcast_dimensions=())
    written = scatter_p.bind(none, indices, ids, dimension_numbers=dn, indices_are_sorted=False,
                             unique_indices=False, mode=mode)
    return eq_p.bind(_gather_updates(written, indices, updates_shape, dn, mode, fill=-1), ids)


def _select(mask: Any, x: Any) -> Any:
    """``x`` where ``mask``, zero elsewhere."""
    return select_n_p.bind(mask, _zeros(get_aval(x).shape, x), x)


def _as_dtype(x: Any, dtype: np.dtype) -> Any:
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False)


@linear_transpose
def _scatter_transpose(ct, operand, indices, updates, *, dimension_numbers, mode,
                       indices_are_sorted=False, unique_indices=False):
    dn = dimension_numbers
    ushape = get_aval(updates).shape
    ct_operand = ct_updates = None
    if is_undefined(operand):  # positions an update overwrites get no cotangent
        ct_operand = scatter_p.bind(ct, indices, _zeros(ushape, ct), dimension_numbers=dn,
                                    indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices, mode=mode)
    if is_undefined(updates):
        ct_updates = _gather_updates(ct, indices, ushape, dn, mode)
        if not unique_indices:
            ct_updates = _select(_landing_updates(indices, get_aval(operand).shape, ushape, dn,
                                                  mode), ct_updates)
    return [ct_operand, None, ct_updates]


@linear_transpose
def _scatter_add_transpose(ct, operand, indices, updates, *, dimension_numbers, mode,
                           indices_are_sorted=False, unique_indices=False):
    ct_updates = None
    if is_undefined(updates):
        ct_updates = _gather_updates(ct, indices, get_aval(updates).shape, dimension_numbers,
                                     mode, as_gather=True)
    return [ct if is_undefined(operand) else None, None, ct_updates]


@linear_transpose
def _scatter_mul_transpose(ct, operand, indices, updates, **params):
    if is_undefined(updates):
        raise ValueError("scatter-mul is linear in its operand only, so it has no transpose "
                         "with respect to 'updates'")
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


def _other_factors(operand, indices, updates, **params):
    """For every update element, the product of the other updates landing on its position.

    Never divides by a zero update: the updates that are zero (a mask fixed at the primal
    point) and the others are multiplied separately, so the result is exact, and so are its
    derivatives wherever at most two zero updates share a position (with three or more, the
    product and its first derivative are zero, as they should be, but not the second)."""
    dn, mode = params["dimension_numbers"], params["mode"]
    ushape, oshape = get_aval(updates).shape, get_aval(operand).shape
    dtype = get_aval(updates).dtype
    ones = broadcast_in_dim_p.bind(Array(np.ones((), dtype)), shape=ushape,
                                   broadcast_dimensions=())
    zero = eq_p.bind(updates, _zeros(ushape, updates))
    nonzero, zeros_only = (select_n_p.bind(zero, updates, ones),
                           select_n_p.bind(zero, ones, updates))

    def per_update(prim, base, values):  # combine at each position, read back per update
        return _gather_updates(prim.bind(base, indices, values, **params), indices, ushape,
                               dn, mode)
    one_x = broadcast_in_dim_p.bind(Array(np.ones((), dtype)), shape=oshape,
                                    broadcast_dimensions=())
    product = per_update(scatter_mul_p, one_x, nonzero)  # of the non-zero updates
    zero_product = per_update(scatter_mul_p, one_x, zeros_only)  # 0 if any is zero, else 1
    n_zeros = per_update(scatter_add_p, _zeros(oshape, operand), _as_dtype(zero, dtype))
    zero_sum = per_update(scatter_add_p, _zeros(oshape, operand), _select(zero, updates))
    count = [eq_p.bind(n_zeros, Array(np.asarray(k, dtype))) for k in (1, 2)]
    # a zero update: the non-zero product, times the other zero update if there are two
    other_zero = select_n_p.bind(count[0], _select(count[1], sub_p.bind(zero_sum, updates)),
                                 ones)
    return select_n_p.bind(zero, mul_p.bind(zero_product, div_p.bind(product, nonzero)),
                           mul_p.bind(other_zero, product))


def _scatter_mul_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    tangent = Zero.from_primal(out)
    if type(g_operand) is not Zero:
        tangent = scatter_mul_p.bind(g_operand, indices, updates, **params)
    if type(g_updates) is not Zero:
        if not params["unique_indices"]:
            g_updates = mul_p.bind(g_updates, _other_factors(operand, indices, updates,
                                                             **params))
        summed = scatter_add_p.bind(_zeros(get_aval(operand).shape, operand), indices,
                                    g_updates, **params)
        tangent = add_tangents(tangent, mul_p.bind(operand, summed))
    return out, tangent


def _scatter_extremum_jvp(prim: Primitive):
    def rule(primals, tangents, **params):
        operand, indices, updates = primals
        out = prim.bind(operand, indices, updates, **params)
        if type(tangents[0]) is Zero and type(tangents[2]) is Zero:
            return out, Zero.from_primal(out)
        g_operand, g_updates = instantiate(tangents[0]), instantiate(tangents[2])
        dtype = get_aval(out).dtype
        kept = eq_p.bind(operand, out)
        won = eq_p.bind(updates, _gather_updates(out, indices, get_aval(updates).shape,
                                                 params["dimension_numbers"], params["mode"]))
        count = scatter_add_p.bind(_as_dtype(kept, dtype), indices, _as_dtype(won, dtype),
                                   **params)
        total = scatter_add_p.bind(_select(kept, g_operand), indices, _select(won, g_updates),
                                   **params)
        return out, div_p.bind(total, count)
    return rule


scatter_p.jvp = linear_jvp(scatter_p, linear=(0, 2))
scatter_p.transpose = _scatter_transpose
scatter_add_p.jvp = linear_jvp(scatter_add_p, linear=(0, 2))
scatter_add_p.transpose = _scatter_add_transpose
scatter_mul_p.jvp = _scatter_mul_jvp
scatter_mul_p.transpose = _scatter_mul_transpose
scatter_min_p.jvp = _scatter_extremum_jvp(scatter_min_p)
scatter_min_p.transpose = NONLINEAR
scatter_max_p.jvp = _scatter_extremum_jvp(scatter_max_p)
scatter_max_p.transpose = NONLINEAR
