"""Shape manipulation: reshape, transpose, stacking, splitting, tiling, flipping (padding is in
_padding.py, repeat in _repeat.py)."""
from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from ..primitives.movement import reshape_p, transpose_p
from ..tracer import dtypes, executor
from ..tracer.array import Array
from ..tracer.errors import ConcretizationTypeError
from ..tracer.shapes import broadcast_shapes as _broadcast_shapes
from ..tracer.shapes import (canonicalize_axes, canonicalize_axis, check_shape, index_arg,
                             index_tuple)
from ._promotion import aval_of, broadcast_to_shape, convert, promote_args, promote_dtypes

eager = executor.installed().eager  # the eager short paths (backends/eager.py)

ArrayLike = Any


def _arr(name: str, a: Any) -> tuple[Any, Any]:
    (a,) = promote_args(name, a)
    return a, aval_of(a)


def _new_shape(aval: Any, shape: Any) -> tuple[int, ...]:
    """reshape's target shape for an operand of ``aval`` (one -1 resolved), or its errors."""
    shape = index_tuple(shape, "reshape", "shape")
    if builtins.sum(1 for d in shape if d == -1) > 1:
        raise ValueError(f"reshape: argument 'shape' may have at most one -1, got {shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or aval.size % known:
            raise TypeError(f"reshape: cannot reshape an array of shape {aval.shape} into "
                            f"shape {shape}")
        shape = tuple(aval.size // known if d == -1 else d for d in shape)
    return check_shape(shape, "reshape")


# Eager reshapes: (id(aval), *shape argument) -> (aval, target shape), for shapes given as ints
_reshapes: dict = {}


def _eager_reshape(a: Any, shape: Any) -> Any:
    """``reshape(a, shape)`` by the eager short path for an Array and a shape of Python ints
    (or one int), or None."""
    aval = a._aval
    if type(shape) is int:
        shape = (shape,)
    elif type(shape) is not tuple:
        return None
    for d in shape:
        if type(d) is not int:
            return None
    key = (id(aval), *shape)
    hit = _reshapes.get(key)
    if hit is None:
        try:
            new = _new_shape(aval, shape)
        except Exception:  # noqa: BLE001 - the general path raises it again
            return None
        if len(_reshapes) >= 4096:
            _reshapes.clear()
        hit = _reshapes[key] = (aval, new)
    new = hit[1]
    if new == aval.shape:
        return a
    return eager.call1(reshape_p, a, {"new_sizes": new, "dimensions": None})


def reshape(a: ArrayLike, shape: int | Sequence[int] | None = None, order: str = "C", *,
            newshape: Any = None, copy: bool | None = None) -> Any:
    """``a`` with a new shape (one dimension may be -1); a view when the layout allows.

    ``order="F"`` reads and writes the elements in column-major order; ``copy`` is accepted
    for NumPy compatibility (arrays are immutable, so a view is never observable).
    """
    if type(a) is Array and order == "C" and newshape is None:
        out = _eager_reshape(a, shape)
        if out is not None:
            return out
    if order not in ("C", "F"):
        raise ValueError(f"reshape: argument 'order' must be 'C' or 'F', got {order!r}")
    shape = newshape if shape is None else shape
    a, aval = _arr("reshape", a)
    shape = _new_shape(aval, shape)
    if order == "F" and aval.size:
        # column-major: reverse the axes, reshape to the reversed shape, reverse back
        rev = transpose(a)
        out = reshape(rev, shape[::-1]) if shape[::-1] != aval.shape[::-1] else rev
        return transpose(out)
    if shape == aval.shape:
        return a
    return reshape_p.bind(a, new_sizes=shape, dimensions=None)


def ravel(a: ArrayLike, order: str = "C") -> Any:
    """The flattened array (``order="F"``: column-major)."""
    if order not in ("C", "F"):
        raise ValueError(f"ravel: argument 'order' must be 'C' or 'F', got {order!r}")
    return reshape(a, (-1,), order)


_REVERSED = [tuple(range(n - 1, -1, -1)) for n in range(33)]


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Any:
    """``a`` with its axes permuted (reversed by default); a zero-copy view."""
    if axes is None and type(a) is Array and 1 < a._aval.ndim < len(_REVERSED):
        out = eager.call1(transpose_p, a, {"permutation": _REVERSED[a._aval.ndim]})
        if out is not None:  # (the general path's reversed permutation, bound as it is)
            return out
    a, av = _arr("transpose", a)
    if axes is None:
        perm = tuple(reversed(range(av.ndim)))
    else:
        perm = tuple(canonicalize_axis(x, av.ndim, "transpose", "axes") for x in axes)
        if sorted(perm) != list(range(av.ndim)):
            raise ValueError(f"transpose: argument 'axes' {tuple(axes)} is not a permutation of "
                             f"the {av.ndim} axes")
    if perm == tuple(range(av.ndim)):
        return a
    return lax.transpose(a, perm)


permute_dims = transpose


def matrix_transpose(x: ArrayLike, /) -> Any:
    """Swap the last two axes."""
    x, av = _arr("matrix_transpose", x)
    if av.ndim < 2:
        raise ValueError("matrix_transpose: argument 'x' must be at least 2-D")
    return swapaxes(x, -1, -2)


def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """Move axes ``source`` to positions ``destination``, keeping the others in order."""
    a, av = _arr("moveaxis", a)
    src = index_tuple(source, "moveaxis", "source")
    dst = index_tuple(destination, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: 'source' and 'destination' must have the same length")
    src = tuple(canonicalize_axis(s, av.ndim, "moveaxis", "source") for s in src)
    dst = tuple(canonicalize_axis(d, av.ndim, "moveaxis", "destination") for d in dst)
    order = [i for i in range(av.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Any:
    """``a`` with two axes interchanged."""
    a, av = _arr("swapaxes", a)
    perm = list(range(av.ndim))
    i = canonicalize_axis(axis1, av.ndim, "swapaxes", "axis1")
    j = canonicalize_axis(axis2, av.ndim, "swapaxes", "axis2")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Any:
    """``a`` without size-1 axes (all of them, or those in ``axis``, which must be size 1)."""
    a, av = _arr("squeeze", a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(av.shape) if d == 1)
    else:
        dims = canonicalize_axes(axis, av.ndim, "squeeze")
        for d in dims:
            if av.shape[d] != 1:
                raise ValueError(f"squeeze: cannot select an axis to squeeze out which has "
                                 f"size not equal to one (axis {d} of shape {av.shape})")
    return lax.squeeze(a, dims) if dims else a


def expand_dims(a: ArrayLike, axis: int | Sequence[int]) -> Any:
    """``a`` with new size-1 axes at positions ``axis`` (of the result)."""
    a, av = _arr("expand_dims", a)
    axis = index_tuple(axis, "expand_dims", "axis")
    dims = canonicalize_axes(axis, av.ndim + len(axis), "expand_dims")
    shape = list(av.shape)
    for d in dims:
        shape.insert(d, 1)
    return reshape(a, tuple(shape))


def atleast_1d(*arys: ArrayLike) -> Any:
    """Each input with at least one dimension."""
    out = [a if aval_of(a).ndim >= 1 else reshape(a, (1,))
           for a in (promote_args("atleast_1d", x)[0] for x in arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: ArrayLike) -> Any:
    """Each input with at least two dimensions (new axes in front)."""
    out = []
    for x in arys:
        x, av = _arr("atleast_2d", x)
        out.append(x if av.ndim >= 2 else reshape(x, (1,) * (2 - av.ndim) + av.shape))
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys: ArrayLike) -> Any:
    """Each input with at least three dimensions, as NumPy places them."""
    out = []
    for x in arys:
        x, av = _arr("atleast_3d", x)
        shape = {0: (1, 1, 1), 1: (1,) + av.shape + (1,), 2: av.shape + (1,)}.get(av.ndim, av.shape)
        out.append(reshape(x, shape))
    return out[0] if len(out) == 1 else out


def broadcast_to(array: ArrayLike, shape: int | Sequence[int]) -> Any:
    """``array`` broadcast to ``shape`` with NumPy's rules (a zero-copy view)."""
    array, aval = _arr("broadcast_to", array)
    shape = check_shape(shape, "broadcast_to")
    if len(shape) < aval.ndim or _broadcast_shapes(aval.shape, shape, op="broadcast_to") != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {aval.shape} to {shape}")
    return broadcast_to_shape(array, aval.shape, shape)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives ``shapes``."""
    return _broadcast_shapes(*(tuple(s) if not isinstance(s, int) else (s,) for s in shapes),
                             op="broadcast_shapes")


def broadcast_arrays(*args: ArrayLike) -> list[Any]:
    """The inputs broadcast to their common shape."""
    arrs = [promote_args("broadcast_arrays", a)[0] for a in args]
    shape = broadcast_shapes(*(aval_of(a).shape for a in arrs))
    return [broadcast_to(a, shape) for a in arrs]


# ---- joining and splitting ----

def concatenate(arrays: Sequence[ArrayLike], axis: int | None = 0, dtype: Any = None) -> Any:
    """Join arrays along an existing axis (``axis=None`` flattens them first)."""
    if not len(arrays):
        raise ValueError("concatenate: need at least one array to concatenate")
    arrs = promote_dtypes("concatenate", *arrays)
    if dtype is not None:
        arrs = [convert(a, dtypes.requested(dtype)) for a in arrs]
    if axis is None:
        arrs, axis = [ravel(a) for a in arrs], 0
    nd = aval_of(arrs[0]).ndim
    if nd == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    ax = canonicalize_axis(axis, nd, "concatenate")
    if len(arrs) == 1:
        return arrs[0]
    return lax.concatenate(arrs, ax)


concat = concatenate


def stack(arrays: Sequence[ArrayLike], axis: int = 0, dtype: Any = None) -> Any:
    """Join arrays of one shape along a new axis."""
    arrs = promote_dtypes("stack", *arrays) if len(arrays) else []
    if not arrs:
        raise ValueError("stack: need at least one array to stack")
    shapes = {aval_of(a).shape for a in arrs}
    if len(shapes) != 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    nd = aval_of(arrs[0]).ndim + 1
    ax = canonicalize_axis(axis, nd, "stack")
    return concatenate([expand_dims(a, ax) for a in arrs], ax, dtype)


def vstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Any:
    """Stack arrays row-wise (along axis 0 of their 2-D forms)."""
    return concatenate([atleast_2d(a) for a in tup], 0, dtype)


row_stack = vstack


def hstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Any:
    """Stack arrays column-wise (axis 1, or axis 0 for 1-D inputs)."""
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if aval_of(arrs[0]).ndim == 1 else 1, dtype)


def dstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Any:
    """Stack arrays along the third axis."""
    return concatenate([atleast_3d(a) for a in tup], 2, dtype)


def column_stack(tup: Sequence[ArrayLike]) -> Any:
    """Stack 1-D arrays as columns of a 2-D array."""
    arrs = []
    for a in tup:
        a, av = _arr("column_stack", a)
        arrs.append(reshape(a, (av.size, 1)) if av.ndim < 2 else a)
    return concatenate(arrs, 1)


def _split_points(name: str, n: int, sections: Any, even: bool) -> list[int]:
    if isinstance(sections, str):
        raise TypeError(f"{name}: argument 'indices_or_sections' must be an integer or a "
                        f"sequence of integers, got {sections!r}")
    if not hasattr(sections, "__iter__") or getattr(sections, "ndim", 1) == 0:
        k = int(sections)  # as JAX: a float count is truncated
        if k <= 0:
            raise ValueError(f"{name}: number of sections must be larger than 0")
        if even and n % k:
            raise ValueError(f"{name}: array split does not result in an equal division "
                             f"({n} into {k})")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        return list(np.cumsum(sizes)[:-1])
    pts = index_tuple(sections, name, "indices_or_sections")
    return [builtins.min(builtins.max(i if i >= 0 else n + i, 0), n) for i in pts]


def _split(name: str, ary: Any, sections: Any, axis: int, even: bool) -> list[Any]:
    ary, av = _arr(name, ary)
    ax = canonicalize_axis(axis, av.ndim, name)
    n = av.shape[ax]
    pts = [0] + _split_points(name, n, sections, even) + [n]
    if all(lo <= hi for lo, hi in zip(pts[:-1], pts[1:])):
        return lax.split(ary, [hi - lo for lo, hi in zip(pts[:-1], pts[1:])], axis=ax)
    return [lax.slice_in_dim(ary, builtins.min(lo, hi), hi, axis=ax)  # decreasing indices
            for lo, hi in zip(pts[:-1], pts[1:])]


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections (or at the given indices) along ``axis``."""
    return _split("split", ary, indices_or_sections, axis, even=True)


def array_split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """As :func:`split`, allowing unequal sections."""
    return _split("array_split", ary, indices_or_sections, axis, even=False)


def hsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """Split along axis 1 (axis 0 for 1-D)."""
    return split(ary, indices_or_sections, 0 if aval_of(promote_args("hsplit", ary)[0]).ndim == 1
                 else 1)


def vsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """Split along axis 0."""
    return split(ary, indices_or_sections, 0)


def dsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """Split along axis 2."""
    return split(ary, indices_or_sections, 2)


# ---- repetition ----

def tile(A: ArrayLike, reps: int | Sequence[int]) -> Any:
    """``A`` repeated ``reps`` times along each axis (a broadcast view, then a reshape)."""
    A, av = _arr("tile", A)
    reps = index_tuple(reps, "tile", "reps")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: argument 'reps' must not be negative, got {reps}")
    nd = builtins.max(len(reps), av.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - av.ndim) + av.shape
    x = reshape(A, tuple(d for s in shape for d in (1, s)))
    x = broadcast_to(x, tuple(d for r, s in zip(reps, shape) for d in (r, s)))
    return reshape(x, tuple(r * s for r, s in zip(reps, shape)))


# ---- differences ----

def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Any:
    """The ``n``-th discrete difference along ``axis``: ``a[1:] - a[:-1]`` applied ``n`` times
    (``!=`` for booleans).

    Args:
      a: an array of at least one dimension.
      n: the number of times to difference (0 returns ``a``).
      axis: the axis to difference along.
      prepend, append: values joined to ``a`` along ``axis`` first (a scalar is broadcast to
        one slice).

    Returns:
      An array whose ``axis`` is ``n`` shorter (never below 0) than ``a``'s after joining.
    """
    a, av = _arr("diff", a)
    n = index_arg(n, "diff", "n")
    axis = index_arg(axis, "diff", "axis")
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"diff: argument 'n' (the order) must be non-negative, got {n}")
    if av.ndim == 0:
        raise ValueError("diff: argument 'a' must be at least one-dimensional, got a scalar")
    ax = canonicalize_axis(axis, av.ndim, "diff")

    def edge(extra: Any) -> list[Any]:
        if extra is None:
            return []
        extra, ev = _arr("diff", extra)
        return [broadcast_to(extra, av.shape[:ax] + (1,) + av.shape[ax + 1:]) if ev.ndim == 0
                else extra]
    joined = edge(prepend) + [a] + edge(append)
    if len(joined) > 1:
        a = concatenate(joined, ax)
    for _ in range(n):
        m = aval_of(a).shape[ax]
        hi = lax.slice_in_dim(a, min(1, m), m, axis=ax)
        lo = lax.slice_in_dim(a, 0, max(m - 1, 0), axis=ax)
        a = lax.ne(hi, lo) if aval_of(a).dtype == dtypes.bool_ else lax.sub(hi, lo)
    return a


# ---- flipping and rolling ----

def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Any:
    """``m`` reversed along ``axis`` (all axes by default); a negative-stride view."""
    m, av = _arr("flip", m)
    dims = canonicalize_axes(axis, av.ndim, "flip")
    return lax.rev(m, dims) if dims else m


def fliplr(m: ArrayLike) -> Any:
    """Reverse along axis 1."""
    return flip(m, 1)


def flipud(m: ArrayLike) -> Any:
    """Reverse along axis 0."""
    return flip(m, 0)


def roll(a: ArrayLike, shift: int | Sequence[int], axis: int | Sequence[int] | None = None) -> Any:
    """Elements shifted cyclically by ``shift`` along ``axis`` (flattened when None)."""
    a, av = _arr("roll", a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), av.shape)
    shifts = tuple(shift) if hasattr(shift, "__iter__") and getattr(shift, "ndim", 1) else (shift,)
    axes = index_tuple(axis, "roll", "axis")
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("roll: 'shift' and 'axis' must have the same length")
    for s, ax in zip(shifts, axes):
        ax = canonicalize_axis(ax, av.ndim, "roll")
        n = av.shape[ax]
        if n == 0:
            continue
        try:
            k = int(s) % n
        except ConcretizationTypeError:  # a traced shift (JAX's too): slice the axis doubled
            start = (n - s % n) % n
            a = lax.dynamic_slice_in_dim(concatenate([a, a], ax), start, n, axis=ax)
            continue
        if k:
            a = concatenate([lax.slice_in_dim(a, n - k, n, axis=ax),
                             lax.slice_in_dim(a, 0, n - k, axis=ax)], ax)
    return a


def rot90(m: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    m, av = _arr("rot90", m)
    ax0, ax1 = (canonicalize_axis(x, av.ndim, "rot90", "axes") for x in axes)
    if ax0 == ax1:
        raise ValueError("rot90: 'axes' must be two different axes")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax0), ax1)
    if k == 1:
        return swapaxes(flip(m, ax1), ax0, ax1)
    return flip(swapaxes(m, ax0, ax1), ax1)


# ---- padding ----


