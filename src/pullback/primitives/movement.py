"""Movement primitives: zero-copy views where the strides allow, a copy otherwise.

broadcast_in_dim, transpose, squeeze, slice, split and rev are always views (zero, permuted, dropped,
multiplied or negated strides); reshape is a view unless the layout cannot merge dimensions.
pad, concatenate and iota write new arrays with the C kernels of backends/cpu/csrc/movement.c.

All but iota are linear, so their jvp applies them to the tangents, and each has a transpose:
broadcast_in_dim sums (reduce_sum) over the dimensions it adds or expands, slice pads the
cotangent with zeros (interior padding undoing its steps), pad slices back (negative edges
padded with zeros again) and gives the padding value the sum of the padded positions,
concatenate slices, split concatenates, and the other views invert themselves. Batching rules remap the dimension
parameters around the batch dimension.
"""
from __future__ import annotations

import math

import numpy as np

from ..tracer import dtypes
from ..tracer import strides as views
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval, not_applicable
from ..tracer.shapes import check_shape
from .building_blocks import broadcast_in_dim_p, reduce_sum_p, select_n_p, sub_p, transpose_p
from .rules import (Zero, batch_size, instantiate, is_undefined, linear_jvp, linear_transpose,
                    move_bdim, tangent_aval, zeros_like_aval)


# ---- broadcast_in_dim ----

def _broadcast_in_dim_aval(x: ShapedArray, *, shape: tuple[int, ...],
                           broadcast_dimensions: tuple[int, ...]) -> ShapedArray:
    name = "broadcast_in_dim"
    shape = check_shape(shape, name)
    dims = tuple(broadcast_dimensions)
    if len(dims) != x.ndim:
        raise TypeError(f"{name}: argument 'broadcast_dimensions' must have one entry per "
                        f"operand dimension ({x.ndim}), got {dims}")
    if any(not 0 <= d < len(shape) for d in dims) or any(a >= b for a, b in zip(dims, dims[1:])):
        raise ValueError(f"{name}: argument 'broadcast_dimensions' must be strictly increasing "
                         f"and in [0, {len(shape)}), got {dims}")
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise TypeError(f"{name}: operand dimension {i} has size {x.shape[i]}, which "
                            f"cannot broadcast to size {shape[d]} of 'shape' {shape}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_ref(x: np.ndarray, *, shape, broadcast_dimensions) -> np.ndarray:
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


# (declared in building_blocks.py: the rule vocabulary and every family broadcast)
broadcast_in_dim_p.abstract_eval = _broadcast_in_dim_aval
broadcast_in_dim_p.reference = _broadcast_in_dim_ref
broadcast_in_dim_p.cpu = lambda k, x, *, shape, broadcast_dimensions: k.view(
    x, *views.broadcast_in_dim(x.shape, x.strides, shape, broadcast_dimensions))


@linear_transpose
def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    # sum over the new dimensions and the operand's size-1 (expanded) ones, then restore
    # the operand's unit dimensions
    in_shape = x.aval.shape
    kept = {d for n, d in zip(in_shape, broadcast_dimensions) if n != 1}
    axes = tuple(d for d in range(len(shape)) if d not in kept)
    summed = reduce_sum_p.bind(ct, axes=axes) if axes else ct
    return [reshape_p.bind(summed, new_sizes=in_shape, dimensions=None)]


def _broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = vals, dims
    x = move_bdim(x, d, 0, 0)
    return broadcast_in_dim_p.bind(
        x, shape=(get_aval(x).shape[0],) + tuple(shape),
        broadcast_dimensions=(0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


broadcast_in_dim_p.jvp = linear_jvp(broadcast_in_dim_p)
broadcast_in_dim_p.transpose = _broadcast_in_dim_transpose
broadcast_in_dim_p.batch = _broadcast_in_dim_batch


# ---- reshape ----

def _reshape_aval(x: ShapedArray, *, new_sizes: tuple[int, ...], dimensions=None) -> ShapedArray:
    new_sizes = check_shape(new_sizes, "reshape", "new_sizes")
    if math.prod(new_sizes) != x.size:
        raise TypeError(f"reshape: cannot reshape an array of shape {x.shape} ({x.size} "
                        f"elements) into 'new_sizes' {new_sizes} ({math.prod(new_sizes)} elements)")
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise ValueError(f"reshape: argument 'dimensions' must be a permutation of "
                         f"range({x.ndim}), got {dimensions}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _reshape_cpu(k, x: np.ndarray, *, new_sizes, dimensions=None) -> np.ndarray:
    if dimensions is not None:
        x = k.view(x, *views.transpose(x.shape, x.strides, dimensions))
    layout = views.reshape(x.shape, x.strides, new_sizes, x.itemsize)
    if layout is None:
        x = k.copy(x)
        layout = views.reshape(x.shape, x.strides, new_sizes, x.itemsize)
    return k.view(x, *layout)


def _reshape_ref(x: np.ndarray, *, new_sizes, dimensions=None) -> np.ndarray:
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return np.reshape(x, new_sizes)


reshape_p = Primitive("reshape")
reshape_p.abstract_eval = _reshape_aval
reshape_p.reference = _reshape_ref
reshape_p.cpu = _reshape_cpu


@linear_transpose
def _reshape_transpose(ct, x, *, new_sizes, dimensions=None):
    if dimensions is None:
        return [reshape_p.bind(ct, new_sizes=x.aval.shape, dimensions=None)]
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    back = reshape_p.bind(ct, new_sizes=permuted, dimensions=None)
    return [transpose_p.bind(back, permutation=tuple(np.argsort(dimensions).tolist()))]


def _reshape_batch(vals, dims, *, new_sizes, dimensions=None):
    (x,), (d,) = vals, dims
    x = move_bdim(x, d, 0, 0)
    if dimensions is not None:
        dimensions = (0,) + tuple(i + 1 for i in dimensions)
    return reshape_p.bind(x, new_sizes=(get_aval(x).shape[0],) + tuple(new_sizes),
                          dimensions=dimensions), 0


reshape_p.jvp = linear_jvp(reshape_p)
reshape_p.transpose = _reshape_transpose
reshape_p.batch = _reshape_batch


def _check_dims(dims, ndim: int, op: str, arg: str) -> tuple[int, ...]:
    """Distinct dimension numbers in [0, ndim) (already canonical: the lax layer wraps negatives)."""
    try:
        dims = tuple(int(d) for d in dims)
    except TypeError:
        raise TypeError(f"{op}: argument '{arg}' must be a sequence of ints, got {dims!r}") from None
    if any(not 0 <= d < ndim for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(f"{op}: argument '{arg}' must hold distinct dimensions in [0, {ndim}), "
                         f"got {dims}")
    return dims


def _view_primitive(name: str | Primitive, aval_rule, layout, reference, transpose,
                    batch) -> Primitive:
    """A primitive that is always a zero-copy view: ``layout(shape, strides, **params)`` gives
    the view's (shape, strides, offset). Views are linear: ``transpose(ct, x, **params)``
    gives the operand's cotangent, ``batch(x, bdim, **params)`` the batched
    ``(out, out_bdim)``. ``name`` may be a primitive building_blocks.py declares."""
    p = name if isinstance(name, Primitive) else Primitive(name)
    p.abstract_eval = aval_rule
    p.cpu = lambda k, x, **params: k.view(x, *layout(x.shape, x.strides, **params))
    p.reference = reference
    p.jvp = linear_jvp(p)
    p.transpose = linear_transpose(lambda ct, x, **params: [transpose(ct, x, **params)])
    p.batch = lambda vals, dims, **params: batch(vals[0], dims[0], **params)
    return p


def _shift_dims(dims, bdim: int) -> tuple[int, ...]:
    """Dimension numbers of the unbatched operand as dimensions of the batched one."""
    return tuple(d + (d >= bdim) for d in dims)


# ---- transpose ----

def _transpose_aval(x: ShapedArray, *, permutation: tuple[int, ...]) -> ShapedArray:
    perm = _check_dims(permutation, x.ndim, "transpose", "permutation")
    if len(perm) != x.ndim:
        raise ValueError(f"transpose: argument 'permutation' must be a permutation of "
                         f"range({x.ndim}), got {permutation}")
    return x.update(shape=tuple(x.shape[p] for p in perm))


transpose_p = _view_primitive(
    transpose_p, _transpose_aval,
    lambda shape, strides, *, permutation: views.transpose(shape, strides, permutation),
    lambda x, *, permutation: np.transpose(x, permutation),
    lambda ct, x, *, permutation: transpose_p.bind(
        ct, permutation=tuple(np.argsort(permutation).tolist())),
    # the batch dimension stays in front of the permuted ones
    lambda x, d, *, permutation: (transpose_p.bind(
        x, permutation=(d,) + _shift_dims(permutation, d)), 0))


# ---- squeeze ----

def _squeeze_aval(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    dims = _check_dims(dimensions, x.ndim, "squeeze", "dimensions")
    if any(x.shape[d] != 1 for d in dims):
        raise ValueError(f"squeeze: argument 'dimensions' {dims} names a dimension whose size "
                         f"is not 1 in shape {x.shape}")
    return x.update(shape=tuple(s for i, s in enumerate(x.shape) if i not in dims))


squeeze_p = _view_primitive(
    "squeeze", _squeeze_aval,
    lambda shape, strides, *, dimensions: views.squeeze(shape, strides, dimensions),
    lambda x, *, dimensions: np.squeeze(x, tuple(dimensions)),
    lambda ct, x, *, dimensions: reshape_p.bind(ct, new_sizes=x.aval.shape, dimensions=None),
    lambda x, d, *, dimensions: (squeeze_p.bind(x, dimensions=_shift_dims(dimensions, d)),
                                 d - sum(1 for i in dimensions if i < d)))


# ---- slice ----

def _slice_params(ndim: int, start_indices, limit_indices, strides) -> tuple:
    steps = (1,) * ndim if strides is None else tuple(strides)
    return tuple(start_indices), tuple(limit_indices), steps


def _slice_aval(x: ShapedArray, *, start_indices, limit_indices, strides=None) -> ShapedArray:
    starts, limits, steps = _slice_params(x.ndim, start_indices, limit_indices, strides)
    for arg, v in (("start_indices", starts), ("limit_indices", limits), ("strides", steps)):
        if len(v) != x.ndim or not all(isinstance(i, (int, np.integer)) for i in v):
            raise TypeError(f"slice: argument '{arg}' must be {x.ndim} ints (one per operand "
                            f"dimension), got {v}")
    for d, (s, l, st, n) in enumerate(zip(starts, limits, steps, x.shape)):
        if not 0 <= s <= l <= n:
            raise ValueError(f"slice: dimension {d} needs 0 <= start_indices <= limit_indices <= "
                             f"{n}, got start {s} and limit {l} for shape {x.shape}")
        if not 1 <= st < 2**63:
            raise ValueError(f"slice: argument 'strides' must be positive and below 2**63, "
                             f"got {steps}")
    return x.update(shape=views.slice_(x.shape, [0] * x.ndim, starts, limits, steps)[0])


def _slice_cpu(k, x, *, start_indices, limit_indices, strides=None):
    # the parameter `strides` is the slice's step; x.strides are the array's byte strides
    return k.view(x, *views.slice_(x.shape, x.strides, *_slice_params(
        x.ndim, start_indices, limit_indices, strides)))


def _slice_ref(x, *, start_indices, limit_indices, strides=None):
    starts, limits, steps = _slice_params(x.ndim, start_indices, limit_indices, strides)
    return x[tuple(slice(s, l, st) for s, l, st in zip(starts, limits, steps))]


slice_p = Primitive("slice")
slice_p.abstract_eval = _slice_aval
slice_p.cpu = _slice_cpu
slice_p.reference = _slice_ref


@linear_transpose
def _slice_transpose(ct, x, *, start_indices, limit_indices, strides=None):
    # zeros around the slice and, for steps > 1, between its elements
    shape = x.aval.shape
    starts, _, steps = _slice_params(len(shape), start_indices, limit_indices, strides)
    config = []
    for s, st, m, n in zip(starts, steps, get_aval(ct).shape, shape):
        used = (m - 1) * st + 1 if m else 0  # the extent the slice really spans
        config.append((s, n - s - used, st - 1))
    zero = zeros_like_aval(ShapedArray((), get_aval(ct).dtype))
    return [pad_p.bind(ct, zero, padding_config=tuple(config))]


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides=None):
    (x,), (d,) = vals, dims
    starts, limits, steps = _slice_params(get_aval(x).ndim - 1, start_indices, limit_indices,
                                          strides)
    starts, limits, steps = (v[:d] + (first,) + v[d:] for v, first in
                             ((starts, 0), (limits, get_aval(x).shape[d]), (steps, 1)))
    return slice_p.bind(x, start_indices=starts, limit_indices=limits,
                        strides=None if strides is None else steps), d


slice_p.jvp = linear_jvp(slice_p)
slice_p.transpose = _slice_transpose
slice_p.batch = _slice_batch


# ---- rev ----

def _rev_aval(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    _check_dims(dimensions, x.ndim, "rev", "dimensions")
    return x


rev_p = _view_primitive(
    "rev", _rev_aval,
    lambda shape, strides, *, dimensions: views.rev(shape, strides, dimensions),
    lambda x, *, dimensions: np.flip(x, tuple(dimensions)) if dimensions else x,
    lambda ct, x, *, dimensions: rev_p.bind(ct, dimensions=dimensions),
    lambda x, d, *, dimensions: (rev_p.bind(x, dimensions=_shift_dims(dimensions, d)), d))


# ---- pad ----

def _pad_aval(x: ShapedArray, v: ShapedArray, *, padding_config) -> ShapedArray:
    if v.ndim != 0:
        raise TypeError(f"pad: argument 'padding_value' must be a scalar, got shape {v.shape}")
    if v.dtype != x.dtype:
        raise TypeError(f"pad: argument 'padding_value' has dtype {v.dtype}, but the operand "
                        f"has dtype {x.dtype}")
    try:
        config = tuple((int(lo), int(hi), int(inner)) for lo, hi, inner in padding_config)
    except (TypeError, ValueError):
        raise TypeError("pad: argument 'padding_config' must be a sequence of (low, high, "
                        f"interior) int triples, got {padding_config!r}") from None
    if len(config) != x.ndim:
        raise TypeError(f"pad: argument 'padding_config' must have {x.ndim} entries (one per "
                        f"operand dimension), got {len(config)}")
    shape = []
    for d, ((lo, hi, inner), n) in enumerate(zip(config, x.shape)):
        if inner < 0:
            raise ValueError(f"pad: argument 'padding_config' has negative interior padding "
                             f"{inner} for dimension {d}")
        size = lo + hi + n + max(n - 1, 0) * inner
        if size < 0:
            raise ValueError(f"pad: argument 'padding_config' {config[d]} makes dimension {d} "
                             f"(size {n}) negative ({size})")
        shape.append(size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type and v.weak_type)


def _pad_cpu(k, x, v, *, padding_config):
    lo, hi, inner = zip(*padding_config) if padding_config else ((), (), ())
    return k.pad(x, v, tuple(lo), tuple(hi), tuple(inner))


def _pad_ref(x, v, *, padding_config):
    # interior and non-negative edges first, then crop the negative edges
    grown = [n + max(n - 1, 0) * inner + max(lo, 0) + max(hi, 0)
             for (lo, hi, inner), n in zip(padding_config, x.shape)]
    out = np.full(grown, v, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + n + max(n - 1, 0) * inner, inner + 1)
              for (lo, _, inner), n in zip(padding_config, x.shape))] = x
    return out[tuple(slice(-min(lo, 0), g + min(hi, 0))
                     for (lo, hi, _), g in zip(padding_config, grown))]


pad_p = Primitive("pad")
pad_p.abstract_eval = _pad_aval
pad_p.cpu = _pad_cpu
pad_p.reference = _pad_ref


@linear_transpose
def _pad_transpose(ct, x, v, *, padding_config):
    # the operand's cotangent: undo the edges (negative edges were crops: pad those back
    # with zeros), then step over the interior padding
    zero = zeros_like_aval(ShapedArray((), get_aval(ct).dtype))
    unpadded = pad_p.bind(ct, zero, padding_config=tuple((-lo, -hi, 0)
                                                         for lo, hi, _ in padding_config))
    ushape = get_aval(unpadded).shape
    ct_x = slice_p.bind(unpadded, start_indices=(0,) * len(ushape), limit_indices=ushape,
                        strides=tuple(inner + 1 for _, _, inner in padding_config))
    ct_v = None
    if is_undefined(v):  # the padding value fills everything the operand does not
        axes = tuple(range(len(ushape)))
        ct_v = sub_p.bind(reduce_sum_p.bind(ct, axes=axes), reduce_sum_p.bind(ct_x, axes=axes))
    return [ct_x if is_undefined(x) else None, ct_v]


def _pad_batch(vals, dims, *, padding_config):
    (x, v), (dx, dv) = vals, dims
    size = batch_size(vals, dims)
    if dx is None:
        x = move_bdim(x, None, 0, size)
        dx = 0
    config = padding_config[:dx] + ((0, 0, 0),) + padding_config[dx:]
    if dv is None:
        return pad_p.bind(x, v, padding_config=config), dx
    # a batched padding value: pad with zeros, then select each lane's value where the
    # padding is (JAX's approach)
    xa = get_aval(x)
    zero = zeros_like_aval(ShapedArray((), xa.dtype))
    padded = pad_p.bind(x, zero, padding_config=config)
    inside = broadcast_in_dim_p.bind(Array(np.ones((), np.bool_)), shape=xa.shape,
                                     broadcast_dimensions=())
    mask = pad_p.bind(inside, Array(np.zeros((), np.bool_)), padding_config=config)
    fill = broadcast_in_dim_p.bind(v, shape=get_aval(padded).shape, broadcast_dimensions=(dx,))
    return select_n_p.bind(mask, fill, padded), dx


pad_p.jvp = linear_jvp(pad_p)
pad_p.transpose = _pad_transpose
pad_p.batch = _pad_batch


# ---- concatenate ----

def _concatenate_aval(*xs: ShapedArray, dimension: int) -> ShapedArray:
    if not xs:
        raise TypeError("concatenate: argument 'operands' must be a non-empty sequence of arrays")
    first = xs[0]
    if not isinstance(dimension, (int, np.integer)) or not 0 <= dimension < first.ndim:
        raise ValueError(f"concatenate: argument 'dimension' must be in [0, {first.ndim}) for "
                         f"operands of rank {first.ndim}, got {dimension}")
    for i, x in enumerate(xs):
        if x.dtype != first.dtype:
            raise TypeError(f"concatenate: argument 'operands' must share one dtype, got "
                            f"{first.dtype} and {x.dtype} (operand {i})")
        if x.ndim != first.ndim or any(a != b for d, (a, b) in enumerate(zip(x.shape, first.shape))
                                       if d != dimension):
            raise TypeError(f"concatenate: argument 'operands' must have equal shapes except "
                            f"along dimension {dimension}, got {first.shape} and {x.shape} "
                            f"(operand {i})")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(tuple(shape), first.dtype, all(x.weak_type for x in xs))


concatenate_p = Primitive("concatenate")
concatenate_p.abstract_eval = _concatenate_aval
concatenate_p.cpu = lambda k, *xs, dimension: k.concatenate(xs, dimension)
concatenate_p.reference = lambda *xs, dimension: np.concatenate(xs, axis=dimension)


@linear_transpose
def _concatenate_transpose(ct, *xs, dimension):
    shape = get_aval(ct).shape
    out, start = [], 0
    for x in xs:
        n = get_aval(x).shape[dimension]
        if is_undefined(x):
            starts = tuple(start if i == dimension else 0 for i in range(len(shape)))
            limits = tuple(start + n if i == dimension else s for i, s in enumerate(shape))
            out.append(slice_p.bind(ct, start_indices=starts, limit_indices=limits,
                                    strides=None))
        else:
            out.append(None)
        start += n
    return out


def _concatenate_batch(vals, dims, *, dimension):
    size = batch_size(vals, dims)
    xs = [move_bdim(x, d, 0, size) for x, d in zip(vals, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


concatenate_p.jvp = linear_jvp(concatenate_p)
concatenate_p.transpose = _concatenate_transpose
concatenate_p.batch = _concatenate_batch



# ---- split ----

def _split_aval(x: ShapedArray, *, sizes: tuple[int, ...], axis: int) -> list[ShapedArray]:
    if not isinstance(axis, (int, np.integer)) or not 0 <= axis < x.ndim:
        raise ValueError(f"split: argument 'axis' must be in [0, {x.ndim}) for an operand of "
                         f"rank {x.ndim}, got {axis}")
    if any(not isinstance(n, (int, np.integer)) or n < 0 for n in sizes) or \
            sum(sizes) != x.shape[axis]:
        raise ValueError(f"split: argument 'sizes' must be non-negative ints summing to the "
                         f"operand's dimension {axis} ({x.shape[axis]}), got {tuple(sizes)}")
    return [x.update(shape=x.shape[:axis] + (n,) + x.shape[axis + 1:]) for n in sizes]


def _split_cpu(k, x, *, sizes, axis):
    out, start = [], 0
    for n in sizes:  # views of x, as slices
        shape = x.shape[:axis] + (n,) + x.shape[axis + 1:]
        out.append(k.view(x, shape, x.strides, start * x.strides[axis]))
        start += n
    return out


def _split_ref(x, *, sizes, axis):
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


split_p = Primitive("split", multiple_results=True)
split_p.abstract_eval = _split_aval
split_p.cpu = _split_cpu
split_p.reference = _split_ref


def _split_transpose(cts, x, *, sizes, axis):
    # the pieces side by side again (JAX's rule: a concatenate, not a sum of padded pieces)
    if all(type(c) is Zero for c in cts):
        return [Zero(tangent_aval(x.aval))]
    return [concatenate_p.bind(*[instantiate(c) for c in cts], dimension=axis)]


def _split_batch(vals, dims, *, sizes, axis):
    (x,), (d,) = vals, dims
    ax = axis + (d <= axis)
    return split_p.bind(x, sizes=sizes, axis=ax), [d] * len(sizes)


split_p.jvp = linear_jvp(split_p)
split_p.transpose = _split_transpose
split_p.batch = _split_batch

# ---- iota ----

def _iota_aval(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int) -> ShapedArray:
    shape = check_shape(shape, "iota")
    if not isinstance(dtype, np.dtype) or dtype not in _IOTA_DTYPES:
        raise TypeError(f"iota: argument 'dtype' must be an integer, floating or complex dtype "
                        f"(not bool or float8), got {dtype}")
    if not isinstance(dimension, (int, np.integer)) or not 0 <= dimension < len(shape):
        raise ValueError(f"iota: argument 'dimension' must be in [0, {len(shape)}) for shape "
                         f"{shape}, got {dimension}")
    return ShapedArray(shape, dtype, False)


def _iota_ref(*, dtype, shape, dimension):
    ramp = np.arange(shape[dimension]).astype(dtype)
    return np.broadcast_to(ramp.reshape([-1 if d == dimension else 1 for d in range(len(shape))]),
                           shape)


_IOTA_DTYPES = tuple(d for d in dtypes.SUPPORTED if d != dtypes.bool_ and d not in dtypes.FLOAT8)

iota_p = Primitive("iota")
iota_p.abstract_eval = _iota_aval
iota_p.cpu = lambda k, *, dtype, shape, dimension: k.iota(dtype, shape, dimension)
iota_p.reference = _iota_ref
iota_p.jvp = not_applicable("iota has no operands, so there is nothing to differentiate")
iota_p.transpose = not_applicable("iota has no operands, so it is not linear in any of them")
iota_p.batch = not_applicable("iota has no operands, so there is nothing to batch")
