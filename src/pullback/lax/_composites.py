"""lax operations JAX defines on top of its primitives, composed here from pullback's: dot,
batch_matmul, broadcast, broadcast_like, broadcast_to_rank, broadcast_shapes, collapse,
tile, stack, unstack, index_take, empty, optimization_barrier, scatter_sub, scatter_apply,
approx_max_k / approx_min_k (exact, as on JAX's CPU backend), mulhi, platform_dependent,
composite; and the helper types JAX exposes (DotDimensionNumbers, RandomAlgorithm,
AccuracyMode, Tolerance, DotAlgorithm, ...)."""
from __future__ import annotations

import enum
import functools
import math
from typing import Any, Callable, NamedTuple, Sequence, Union

import numpy as np

from ..tracer import core, dtypes, pytree
from ..tracer.shapes import broadcast_shapes as _broadcast_shapes
from ._conv import ConvDimensionNumbers
from ._dot import DotAlgorithmPreset, Precision, dot_general
from ._conversion import convert_element_type
from ._elementwise import (add, bitwise_and, gt, lt, mul, neg, rem,
                           select_n, shift_right_logical, sub)
from ._full import full_like
from ._indexing import GatherDimensionNumbers, ScatterDimensionNumbers, gather, scatter_add
from ._loops import while_loop
from ._movement import (broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, full,
                        index_in_dim, reshape, slice_in_dim)
from ._operands import scalars_to
from ._reductions import reduce_max
from ._sort import sort

__all__ = ["dot", "batch_matmul", "broadcast", "broadcast_like", "broadcast_to_rank",
           "broadcast_shapes", "collapse", "tile", "stack", "unstack", "index_take", "empty",
           "optimization_barrier", "scatter_sub", "scatter_apply", "approx_max_k",
           "approx_min_k", "mulhi", "platform_dependent", "composite", "dtype",
           "create_token", "after_all", "shape_as_value",
           "DotDimensionNumbers", "RaggedDotDimensionNumbers", "RandomAlgorithm",
           "AccuracyMode", "Tolerance", "DotAlgorithm", "PrecisionLike",
           "ConvGeneralDilatedDimensionNumbers"]

ArrayLike = Any

# ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), as JAX's type alias
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


class RaggedDotDimensionNumbers(NamedTuple):
    """The dimension numbers of JAX's ragged_dot_general (accepted for API parity)."""
    dot_dimension_numbers: Any
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]


class RandomAlgorithm(enum.IntEnum):
    """The bit generator of ``rng_bit_generator``."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


class AccuracyMode(enum.Enum):
    """Accuracy requests for transcendental functions (accepted, as on JAX's CPU backend
    where every function has one implementation)."""
    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """An accuracy tolerance request (``atol``, ``rtol``, ``ulps``) for transcendental
    functions."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerance: 'atol', 'rtol' and 'ulps' must be non-negative")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def __repr__(self) -> str:
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


class DotAlgorithm(NamedTuple):
    """An explicit dot algorithm (operand and accumulation types), accepted as a
    ``precision``; pullback's CPU products always use the operands' types (as XLA's CPU
    backend does for the default algorithm)."""
    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision],
                      DotAlgorithm, DotAlgorithmPreset]


def _ndim(x: Any) -> int:
    return core.get_aval(x).ndim if not isinstance(x, (int, float, complex, bool)) else 0


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def dtype(x: Any) -> np.dtype:
    """The dtype JAX gives ``x`` (Python scalars: the default types)."""
    if isinstance(x, (bool, int, float, complex)):
        return dtypes.dtype_of_python(x)[0]
    if isinstance(x, (np.dtype, type, str)):
        return dtypes.canonicalize(x)
    return core.get_aval(x).dtype


def dot(lhs: ArrayLike, rhs: ArrayLike, *, dimension_numbers: Any = None,
        precision: Any = None, preferred_element_type: Any = None, out_sharding: Any = None
        ) -> Any:
    """The product of vectors/matrices (``lhs``'s last axis with ``rhs``'s first), or a
    ``dot_general`` with explicit ``dimension_numbers``."""
    lhs, rhs = scalars_to((lhs, rhs))
    if dimension_numbers is None:
        ls, rs = _shape(lhs), _shape(rhs)
        if 1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]:
            dimension_numbers = (((len(ls) - 1,), (0,)), ((), ()))
        else:
            raise TypeError(f"dot: incompatible shapes for dot: got {ls} and {rs} (1-D or "
                            "2-D operands whose inner dimensions agree)")
    return dot_general(lhs, rhs, dimension_numbers, precision=precision,
                       preferred_element_type=preferred_element_type)


def batch_matmul(lhs: ArrayLike, rhs: ArrayLike, precision: Any = None) -> Any:
    """Batched matrix product over all leading dimensions (both operands of one rank >= 2)."""
    lhs, rhs = scalars_to((lhs, rhs))
    ln, rn = _ndim(lhs), _ndim(rhs)
    if min(ln, rn) < 2:
        raise ValueError(f"batch_matmul: arguments must be at least 2-D, got {ln}-D and "
                         f"{rn}-D")
    if ln != rn:
        raise ValueError(f"batch_matmul: arguments must have the same ndim, got {ln} and {rn}")
    batch = tuple(range(ln - 2))
    return dot_general(lhs, rhs, (((ln - 1,), (rn - 2,)), (batch, batch)),
                       precision=precision)


def broadcast(operand: ArrayLike, sizes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """``operand`` with new leading dimensions of ``sizes``: shape ``(*sizes, *shape)``."""
    (operand,) = scalars_to((operand,))
    sizes = tuple(sizes)
    if not sizes:
        return operand
    nd = _ndim(operand)
    return broadcast_in_dim(operand, sizes + _shape(operand),
                            tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_like(arr: ArrayLike, like_arr: ArrayLike) -> Any:
    """``arr`` broadcast (NumPy-style) to the shape of ``like_arr``."""
    (arr,) = scalars_to((arr,))
    shape = _shape(like_arr) if not np.isscalar(like_arr) else ()
    src = _shape(arr)
    if src == shape:
        return arr
    _broadcast_shapes(src, shape, op="broadcast_like")
    return broadcast_in_dim(arr, shape, tuple(range(len(shape) - len(src), len(shape))))


def broadcast_to_rank(x: ArrayLike, rank: int) -> Any:
    """``x`` with leading size-1 dimensions added up to ``rank``."""
    (x,) = scalars_to((x,))
    nd = _ndim(x)
    if nd == rank:
        return x
    if nd > rank:
        raise ValueError(f"broadcast_to_rank: argument 'x' has rank {nd} > rank {rank}")
    return broadcast(x, (1,) * (rank - nd))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy-broadcast shape of ``shapes``."""
    return tuple(_broadcast_shapes(*(tuple(s) for s in shapes), op="broadcast_shapes"))


def collapse(operand: ArrayLike, start_dimension: int, stop_dimension: int | None = None
             ) -> Any:
    """``operand`` with dimensions ``[start_dimension, stop_dimension)`` merged into one."""
    (operand,) = scalars_to((operand,))
    shape = _shape(operand)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"collapse: invalid dimension range {shape}[{start_dimension}:"
                         f"{stop_dimension}]")
    size = math.prod(shape[lo:hi])
    return reshape(operand, shape[:lo] + (size,) + shape[hi:])


def tile(operand: ArrayLike, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along each dimension i (one rep per dim)."""
    (operand,) = scalars_to((operand,))
    shape = _shape(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise TypeError(f"tile: argument 'reps' must have one entry per dimension of the "
                        f"operand ({len(shape)}), got {len(reps)}")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: argument 'reps' must be non-negative, got {reps}")
    # (r0, d0, r1, d1, ...) by broadcasting, then merged pairwise
    inter = tuple(k for pair in zip(reps, shape) for k in pair)
    b = broadcast_in_dim(operand, inter, tuple(range(1, 2 * len(shape), 2)))
    return reshape(b, tuple(r * d for r, d in zip(reps, shape)))


def stack(operands: Sequence[ArrayLike], axis: int = 0) -> Any:
    """Operands of one shape joined along a new ``axis``."""
    ops = scalars_to(tuple(operands))
    if not ops:
        raise ValueError("stack: argument 'operands' must be non-empty")
    nd = _ndim(ops[0])
    if not -(nd + 1) <= axis <= nd:
        raise ValueError(f"stack: argument 'axis' = {axis} is out of range for {nd + 1} "
                         "dimensions")
    ax = axis % (nd + 1)
    return concatenate([expand_dims(o, (ax,)) for o in ops], ax)


def unstack(x: ArrayLike, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``."""
    (x,) = scalars_to((x,))
    nd = _ndim(x)
    if not -nd <= axis < nd:
        raise ValueError(f"unstack: argument 'axis' = {axis} is out of range for {nd} "
                         "dimensions")
    ax = axis % nd
    return tuple(index_in_dim(x, i, ax, keepdims=False) for i in range(_shape(x)[ax]))


def index_take(src: ArrayLike, idxs: Sequence[ArrayLike], axes: Sequence[int]) -> Any:
    """``src`` gathered at the index arrays ``idxs`` (one per axis of ``axes``, taken modulo
    those axes' sizes)."""
    (src,) = scalars_to((src,))
    shape = _shape(src)
    idx_list = [expand_dims(i, (1,)) for i in scalars_to(tuple(idxs))]
    indices = concatenate(idx_list, 1)
    sizes = np.array([shape[ax] for ax in axes], dtype=core.get_aval(indices).dtype)
    m = broadcast_in_dim(sizes, _shape(indices), (1,))
    indices = rem(add(rem(indices, m), m), m)  # Python's modulo, as JAX's ``%``
    slice_sizes = list(shape)
    for ax in axes:
        slice_sizes[ax] = 1
    offset_dims = tuple(range(1, len(shape) - _shape(indices)[1] + 1))
    dn = GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=tuple(axes),
                                start_index_map=tuple(axes))
    return gather(src, indices, dimension_numbers=dn, slice_sizes=tuple(slice_sizes))


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` whose values are unspecified (zeros here)."""
    return full(tuple(shape), 0, dtypes.requested(dtype, "empty"))


def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (a pytree) unchanged: JAX's barrier keeps XLA from moving computation
    across it; pullback's compiler does not reorder across function boundaries in a way it
    could affect, so it is the identity (differentiable, batchable)."""
    return pytree.tree_map(lambda x: scalars_to((x,))[0], operand)


def scatter_sub(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with ``updates`` subtracted at the scattered positions (as scatter_add of
    the negated updates)."""
    operand, updates = scalars_to((operand, updates))
    return scatter_add(operand, scatter_indices, neg(updates), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def scatter_apply(operand: ArrayLike, scatter_indices: ArrayLike, func: Callable,
                  dimension_numbers: ScatterDimensionNumbers, *, update_shape: Sequence[int] = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False,
                  mode: Any = None) -> Any:
    """``operand`` with the element-wise ``func`` applied at the scattered positions, once
    per occurrence of a position (as XLA applies the combiner per update).

    With ``unique_indices`` this is differentiable (func's values scattered over the
    operand); otherwise the repeat counts drive a while_loop (forward-mode derivatives only,
    as JAX's scatter_apply has no transpose either).
    """
    (operand,) = scalars_to((operand,))
    ones = full(tuple(update_shape), 1, dtypes.int32)
    counts = scatter_add(full_like(operand, 0, dtypes.int32), scatter_indices, ones,
                         dimension_numbers, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode)
    zero = full_like(counts, 0)
    if unique_indices:
        hit = select_n(gt(counts, zero), operand, func(operand))
        return hit

    def cond(c: tuple) -> Any:
        k, _ = c
        return gt(reduce_max(counts, tuple(range(len(_shape(counts))))), k)

    def body(c: tuple) -> tuple:
        k, x = c
        kk = broadcast_in_dim(k, _shape(counts), ())
        return add(k, full_like(k, 1)), select_n(gt(counts, kk), x, func(x))
    _, out = while_loop(cond, body, (full((), 0, dtypes.int32), operand))
    return out


def _approx_k(name: str, operand: Any, k: int, reduction_dimension: int, recall_target: float,
              reduction_input_size_override: int, aggregate_to_topk: bool,
              largest: bool) -> tuple[Any, Any]:
    (operand,) = scalars_to((operand,))
    shape = _shape(operand)
    nd = len(shape)
    if not -nd <= reduction_dimension < nd:
        raise ValueError(f"{name}: argument 'reduction_dimension' = {reduction_dimension} is "
                         f"out of range for shape {shape}")
    d = reduction_dimension % nd
    if not 0 <= k <= shape[d]:
        raise ValueError(f"{name}: argument 'k' must be in [0, {shape[d]}], got {k}")
    if not 0 < recall_target <= 1:
        raise ValueError(f"{name}: argument 'recall_target' must be in (0, 1], got "
                         f"{recall_target}")
    if reduction_input_size_override not in (-1,) and reduction_input_size_override < shape[d]:
        raise ValueError(f"{name}: argument 'reduction_input_size_override' must be -1 or at "
                         f"least the reduced size {shape[d]}")
    idx = broadcasted_iota(dtypes.int32, shape, d)
    vals, inds = sort((operand, idx), dimension=d, is_stable=True, num_keys=1,
                      descending=largest)
    return slice_in_dim(vals, 0, k, axis=d), slice_in_dim(inds, 0, k, axis=d)


def approx_max_k(operand: ArrayLike, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """The ``k`` largest values along ``reduction_dimension`` and their indices (exact, as
    on JAX's CPU backend: sorted descending, ties by lower index)."""
    return _approx_k("approx_max_k", operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand: ArrayLike, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """The ``k`` smallest values along ``reduction_dimension`` and their indices (exact)."""
    return _approx_k("approx_min_k", operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, False)


def mulhi(x: ArrayLike, y: ArrayLike, /) -> Any:
    """The upper N bits of the 2N-bit product of N-bit integers."""
    x, y = scalars_to((x, y))
    dt = core.get_aval(x).dtype
    if core.get_aval(y).dtype != dt or not dtypes.is_integer(dt):
        raise TypeError(f"mulhi: arguments must be integers of one dtype, got {dt} and "
                        f"{core.get_aval(y).dtype}")
    bits = dt.itemsize * 8
    half = bits // 2
    # schoolbook on N/2-bit halves in the unsigned N-bit type (no wider type needed), then
    # the signed correction hi(x*y) = hi_u(x*y) - (x < 0 ? y : 0) - (y < 0 ? x : 0)
    u = np.dtype(f"uint{bits}")
    xu, yu = convert_element_type(x, u), convert_element_type(y, u)
    mask = full_like(xu, (1 << half) - 1)
    sh = full_like(xu, half)
    xl, xh = bitwise_and(xu, mask), shift_right_logical(xu, sh)
    yl, yh = bitwise_and(yu, mask), shift_right_logical(yu, sh)
    ll, lh, hl, hh = mul(xl, yl), mul(xl, yh), mul(xh, yl), mul(xh, yh)
    mid = add(add(shift_right_logical(ll, sh), bitwise_and(lh, mask)), bitwise_and(hl, mask))
    hi = add(add(add(hh, shift_right_logical(lh, sh)), shift_right_logical(hl, sh)),
             shift_right_logical(mid, sh))
    if dt.kind == "u":
        return hi
    zero = full_like(x, 0)
    hi_s = convert_element_type(hi, dt)
    hi_s = select_n(lt(x, zero), hi_s, sub(hi_s, y))
    return select_n(lt(y, zero), hi_s, sub(hi_s, x))


def platform_dependent(*args: Any, default: Callable | None = None,
                       **per_platform: Callable) -> Any:
    """Calls the ``cpu`` implementation (pullback runs on the CPU), else ``default``."""
    fn = per_platform.get("cpu", default)
    if fn is None:
        raise NotImplementedError(f"platform_dependent: no implementation for 'cpu' among "
                                  f"{sorted(per_platform)} and no default")
    return fn(*args)


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """A named composite operation: here, its decomposition (the function itself)."""
    @functools.wraps(decomposition)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return decomposition(*args, **kwargs)
    wrapped.composite_name = name  # type: ignore[attr-defined]
    wrapped.composite_version = version  # type: ignore[attr-defined]
    return wrapped



class Token:
    """An ordering token (``create_token``/``after_all``): pullback runs effects in program
    order, so a token carries no data."""

    def __repr__(self) -> str:
        return "Token()"


def create_token(_: Any = None) -> Token:
    """A new ordering token."""
    return Token()


def after_all(*operands: Any) -> Token:
    """A token ordered after ``operands`` (tokens)."""
    for o in operands:
        if not isinstance(o, Token):
            raise TypeError(f"after_all: arguments must be tokens, got {type(o).__name__}")
    return Token()


def shape_as_value(shape: Sequence[int]) -> Any:
    """A static shape as an integer array."""
    return convert_element_type(np.asarray(tuple(int(d) for d in shape), np.int64),
                                dtypes.canonical(np.dtype(np.int64)))
