"""Array manipulation beyond reshaping: append, insert, delete, resize, rollaxis, unstack,
block, cross, matvec, vecmat, einsum_path.

``insert`` and ``delete`` with unique array indices work under jit (JAX's scatter/gather
formulations); ``delete`` with possibly repeated or boolean indices needs them concrete.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.errors import ConcretizationTypeError
from ..tracer.shapes import canonicalize_axis
from ._creation import arange, array, asarray, full, zeros
from ._indexing import take
from ._linalg import matmul
from ._promotion import aval_of, convert, promote_args, promote_dtypes
from ._reductions import sum as sum_
from ._shape import (broadcast_shapes, broadcast_to, concatenate, moveaxis, ravel, reshape, stack, tile)
from ._sorting import argsort, nonzero, sort
from ._ufuncs import clip, conj, where

ArrayLike = Any


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Any:
    """``values`` joined to the end of ``arr`` along ``axis`` (both flattened when None)."""
    a, v = promote_dtypes("append", arr, values)
    if axis is None:
        return concatenate([ravel(a), ravel(v)], 0)
    return concatenate([a, v], axis=axis)


def _axis_or_flat(name: str, arr: Any, axis: int | None) -> tuple[Any, int]:
    (a,) = promote_args(name, arr)
    if axis is None:
        return ravel(a), 0
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{name}: argument 'axis' must be a static integer, got {axis!r}")
    return a, canonicalize_axis(axis, aval_of(a).ndim, name)


def delete(arr: ArrayLike, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """``arr`` without the entries ``obj`` (an int, slice, integer array or boolean mask)
    along ``axis`` (flattened when None).

    With integer array indices that may repeat, ``obj`` must be concrete; pass
    ``assume_unique_indices=True`` to delete traced (unique) indices under jit.
    """
    a, ax = _axis_or_flat("delete", arr, axis)
    n = aval_of(a).shape[ax]
    if isinstance(obj, slice):
        obj = np.arange(n)[obj].astype(np.int32)
        assume_unique_indices = True
    else:
        try:
            i = operator.index(obj)
        except TypeError:
            pass
        else:
            if not -n <= i < n:
                raise IndexError(f"delete: index {i} is out of bounds for axis {ax} with "
                                 f"size {n}")
            i = i + n if i < 0 else i
            return concatenate([lax.slice_in_dim(a, 0, i, axis=ax),
                                lax.slice_in_dim(a, i + 1, n, axis=ax)], axis=ax)
    o = asarray(obj)
    odt = aval_of(o).dtype
    if dtypes.is_integer(odt) and assume_unique_indices:
        o = ravel(o)
        o = clip(where(lax.lt(o, lax.full_like(o, 0)), o + n, o), 0, n)
        o = sort(o)
        k = aval_of(o).shape[0]
        o = o - arange(k, dtype=aval_of(o).dtype)
        i = arange(n - k, dtype=aval_of(o).dtype)
        if k:
            i = i + sum_(convert(lax.ge(lax.broadcast_in_dim(i, (k, n - k), (1,)),
                                        lax.broadcast_in_dim(o, (k, n - k), (0,))),
                                 aval_of(i).dtype), axis=0, dtype=aval_of(i).dtype)
        return take(a, i, axis=ax)
    c = o.to_concrete_value() if hasattr(o, "to_concrete_value") else None
    if c is None:
        raise ConcretizationTypeError(
            "delete: argument 'obj' must be concrete when its indices may repeat; pass "
            "assume_unique_indices=True to use traced unique indices under jit")
    c = np.asarray(c)
    if c.size == 0 and c.dtype != bool:  # nothing to delete (NumPy accepts an empty list)
        return a
    if dtypes.is_integer(c.dtype):
        mask = np.ones(n, dtype=bool)
        if c.size and (c.max() >= n or c.min() < -n):
            raise IndexError(f"delete: an index in 'obj' is out of bounds for axis {ax} "
                             f"with size {n}")
        mask[c] = False
    elif c.dtype == bool:
        if c.shape != (n,):
            raise ValueError(f"delete: a boolean 'obj' must have shape ({n},), got {c.shape}")
        mask = ~c
    else:
        raise ValueError(f"delete: argument 'obj' must be integer or boolean, got {c.dtype}")
    return take(a, asarray(np.flatnonzero(mask).astype(np.int32)), axis=ax)


def insert(arr: ArrayLike, obj: Any, values: ArrayLike, axis: int | None = None) -> Any:
    """``arr`` with ``values`` inserted before the indices ``obj`` (an int, slice or 1-D
    integer array; may be traced) along ``axis`` (flattened when None)."""
    a, ax = _axis_or_flat("insert", arr, axis)
    av = aval_of(a)
    n = av.shape[ax]
    if isinstance(obj, slice):
        idx = asarray(np.arange(*obj.indices(n)).astype(np.int32))
    else:
        idx = asarray(obj)
    iv = aval_of(idx)
    if iv.ndim > 1:
        raise ValueError(f"insert: argument 'obj' must be a slice, a 1-D array or a scalar, "
                         f"got shape {iv.shape}")
    if not dtypes.is_integer(iv.dtype):
        if iv.size == 0 and not hasattr(obj, "shape"):
            idx = convert(idx, dtypes.int32)
        else:
            raise ValueError(f"insert: argument 'obj' must be integer typed, got {iv.dtype}")
    vals = array(asarray(values), dtype=av.dtype, copy=False, ndmin=av.ndim)
    if aval_of(idx).size == 1:
        index = reshape(idx, ())
        if aval_of(idx).ndim == 0:
            vals = moveaxis(vals, 0, ax)
        idx = full((aval_of(vals).shape[ax],), 0, aval_of(idx).dtype) + index
    k = broadcast_shapes(aval_of(idx).shape, (aval_of(vals).shape[ax],))[0]
    out_shape = list(av.shape)
    out_shape[ax] += k
    vshape = list(out_shape)
    vshape[ax] = k
    vals = broadcast_to(vals, tuple(vshape))
    if aval_of(idx).shape[0] != k:
        idx = full((k,), 0, aval_of(idx).dtype) + idx
    idx = where(lax.lt(idx, lax.full_like(idx, 0)), idx + n, idx)
    idx = clip(idx, 0, n)
    # each value's slot: its index plus the number of values inserted before it
    values_ind = idx.at[argsort(idx)].add(arange(k, dtype=aval_of(idx).dtype))
    keep = full((n + k,), True, dtypes.bool_).at[values_ind].set(False)
    arr_ind = nonzero(keep, size=n)[0]
    out = zeros(tuple(out_shape), av.dtype)
    pre = (slice(None),) * ax
    out = out.at[pre + (values_ind,)].set(vals)
    return out.at[pre + (arr_ind,)].set(a)


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Any:
    """``a`` flattened, repeated cyclically to fill ``new_shape`` (zeros if ``a`` is empty)."""
    (a,) = promote_args("resize", a)
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    shape = tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"resize: all elements of 'new_shape' must be non-negative, got "
                         f"{shape}")
    size = math.prod(shape)
    flat = ravel(a)
    n = aval_of(flat).shape[0]
    if n == 0 or size == 0:
        return zeros(shape, aval_of(a).dtype)
    flat = tile(flat, -(-size // n))
    return reshape(lax.slice_in_dim(flat, 0, size), shape)


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Any:
    """``a`` with ``axis`` moved to just before position ``start`` (NumPy's older
    :func:`moveaxis`)."""
    (a,) = promote_args("rollaxis", a)
    nd = aval_of(a).ndim
    axis = canonicalize_axis(axis, nd, "rollaxis")
    if not -nd <= start <= nd:
        raise ValueError(f"rollaxis: argument 'start' = {start} must be in [{-nd}, {nd}]")
    if start < 0:
        start += nd
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple."""
    (x,) = promote_args("unstack", x)
    av = aval_of(x)
    if av.ndim == 0:
        raise ValueError("unstack: argument 'x' must be at least 1-D")
    ax = canonicalize_axis(axis, av.ndim, "unstack")
    return tuple(lax.index_in_dim(x, i, ax, keepdims=False) for i in range(av.shape[ax]))


def _block_depth(arrays: Any, path: str) -> int:
    if isinstance(arrays, tuple):
        raise TypeError(f"block: {path} is a tuple; only lists may be used to arrange "
                        "blocks")
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError(f"block: {path} is an empty list")
        depths = {_block_depth(x, f"{path}[{i}]") for i, x in enumerate(arrays)}
        if len(depths) != 1:
            raise ValueError(f"block: list depths are mismatched inside {path}")
        return depths.pop() + 1
    return 0


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks: the innermost lists are joined along
    the last axis, the next ones along the one before, and so on."""
    depth = _block_depth(arrays, "arrays")

    def leaves(x: Any) -> list:
        return [y for z in x for y in leaves(z)] if isinstance(x, list) else [asarray(x)]
    all_leaves = leaves(arrays)
    ndim = max([depth] + [aval_of(x).ndim for x in all_leaves])
    dt = aval_of(promote_dtypes("block", *all_leaves)[0]).dtype if all_leaves else None

    def rec(x: Any, d: int) -> Any:
        if not isinstance(x, list):
            x = convert(asarray(x), dt)
            nd = aval_of(x).ndim
            return reshape(x, (1,) * (ndim - nd) + aval_of(x).shape) if nd < ndim else x
        return concatenate([rec(y, d + 1) for y in x], axis=-(depth - d))
    return rec(arrays, 0)


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """The cross product of vectors of 2 or 3 components along ``axisa``/``axisb`` (a 2-D
    cross product is the scalar z component), the result's components along ``axisc``."""
    a, b = promote_dtypes("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, canonicalize_axis(axisa, aval_of(a).ndim, "cross"), -1)
    b = moveaxis(b, canonicalize_axis(axisb, aval_of(b).ndim, "cross"), -1)
    na, nb = aval_of(a).shape[-1], aval_of(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product (dimension must "
                         f"be 2 or 3), got {na} and {nb}")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if na == 3 else None
    b2 = b[..., 2] if nb == 3 else None
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    if a2 is None:
        a2 = 0 * a0
    if b2 is None:
        b2 = 0 * b0
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
    return moveaxis(c, -1, canonicalize_axis(axisc, aval_of(c).ndim, "cross"))


def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Batched matrix-vector product: (..., m, n) by (..., n) gives (..., m)."""
    x1, x2 = promote_dtypes("matvec", x1, x2)
    if aval_of(x1).ndim < 2 or aval_of(x2).ndim < 1:
        raise ValueError("matvec: argument 'x1' must be at least 2-D and 'x2' at least 1-D, "
                         f"got shapes {aval_of(x1).shape} and {aval_of(x2).shape}")
    return matmul(x1, x2[..., None])[..., 0]


def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Batched vector-matrix product with the vector conjugated: (..., n) by (..., n, m)
    gives (..., m)."""
    x1, x2 = promote_dtypes("vecmat", x1, x2)
    if aval_of(x1).ndim < 1 or aval_of(x2).ndim < 2:
        raise ValueError("vecmat: argument 'x1' must be at least 1-D and 'x2' at least 2-D, "
                         f"got shapes {aval_of(x1).shape} and {aval_of(x2).shape}")
    return matmul(conj(x1)[..., None, :], x2)[..., 0, :]


def einsum_path(subscripts: str, *operands: Any, optimize: bool | str = "greedy") -> Any:
    """The contraction order ``einsum`` would use and a description of it, computed from the
    operands' shapes (NumPy's ``einsum_path`` on shape-only stand-ins)."""
    if optimize is True:
        optimize = "greedy"
    shaped = [np.broadcast_to(np.zeros((), np.float32), np.shape(o) if not hasattr(o, "shape")
                              else tuple(o.shape)) for o in operands]
    return np.einsum_path(subscripts, *shaped, optimize=optimize)

