"""Indexing: ``x[idx]`` with NumPy's rules, take / take_along_axis, and ``x.at[idx]`` updates.

Basic indexing (static ints and slices) gives zero-copy views (slice, rev, squeeze); traced
scalar indices a dynamic_slice; integer-array ("advanced") indexing a gather. Boolean masks are
turned into integer indices, so they need concrete values (outside jit), as in JAX.

Out-of-bounds indices follow JAX's modes: reads clamp by default (``promise_in_bounds``: a
static or traced integer, after negative indices count once from the end, selects the edge;
the gradient of an out-of-bounds array index is dropped, as XLA's scatter does), ``"fill"``
reads ``fill_value``; ``.at[...]`` updates drop out-of-bounds indices unless ``mode="clip"``.
Unsigned indices never count from the end: a huge uint64 index is out of bounds.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from .. import lax
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.errors import ConcretizationTypeError
from ..tracer.shapes import broadcast_shapes, canonicalize_axis
from ._promotion import aval_of, convert, promote_args
from ._shape import broadcast_to, expand_dims, ravel, reshape, stack
from ._creation import asarray, ones_like
from ._ufuncs import divide, negative, power

ArrayLike = Any


class NonConcreteBooleanIndexError(ConcretizationTypeError, IndexError):
    """A boolean mask index whose values are not known (under jit)."""


# ---- take ----

def _mode(mode: Any, default: str) -> Any:
    m = default if mode is None else mode
    if isinstance(m, str):
        table = {"clip": lax.GatherScatterMode.CLIP, "fill": lax.GatherScatterMode.FILL_OR_DROP,
                 "drop": lax.GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": lax.GatherScatterMode.PROMISE_IN_BOUNDS}
        if m not in table:
            raise ValueError(f"invalid indexing mode {m!r}; use 'clip', 'fill', 'drop' or "
                             "'promise_in_bounds'")
        return table[m]
    if not isinstance(m, lax.GatherScatterMode):
        raise ValueError(f"invalid indexing mode {m!r}; use 'clip', 'fill', 'drop' or "
                         "'promise_in_bounds'")
    return m


def _int_index(name: str, idx: Any) -> Any:
    (idx,) = promote_args(name, idx)
    dt = aval_of(idx).dtype
    if not dtypes.is_integer(dt):
        raise TypeError(f"{name}: indices must be integers, got {dt}")
    return idx


def _normalize(idx: Any, n: int) -> Any:
    """Negative indices count from the end (once, as NumPy)."""
    if aval_of(idx).dtype.kind == "u":
        return idx
    zero = lax.full_like(idx, 0)
    return lax.select_n(lax.lt(idx, zero), idx, lax.add(idx, lax.full_like(idx, n)))


def _index_dtype(*dts: np.dtype, size: int = 0) -> np.dtype:
    """The signed dtype that holds every index of these dtypes and the axis size ``size``
    (which negative indices are counted back from)."""
    wide = size >= 2**31 - 1 or any(d.itemsize > 4 or d == dtypes.uint32 for d in dts)
    return dtypes.int64 if wide else dtypes.int32


def _as_index(idx: Any, n: int, dt: np.dtype, normalize: bool = True) -> Any:
    """An integer index as signed ``dt`` (negative ones counted from the end when
    ``normalize``). An unsigned index is first capped at ``n`` (still out of bounds), so a
    huge uint64 does not wrap to a negative int64 that would count from the end."""
    idt = aval_of(idx).dtype
    if idt.kind == "u":
        if np.iinfo(idt).max > n:
            idx = lax.min(idx, lax.full_like(idx, n))
        return convert(idx, dt)
    idx = convert(idx, dt)
    return _normalize(idx, n) if normalize else idx


def _zeros_result(a: Any, shape: tuple) -> Any:
    """The result of an indexing op that selects nothing (JAX's zeros, no gather)."""
    return lax.full_like(a, 0, shape=tuple(shape))


def take(a: ArrayLike, indices: ArrayLike, axis: int | None = None, out: None = None,
         mode: str | None = None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value: Any = None) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (the flattened array when None).

    Negative indices count from the end, except with ``mode="clip"``. Out-of-bounds
    indices: ``mode="fill"`` (default) gives ``fill_value`` (NaN for inexact dtypes),
    ``"clip"`` clamps, ``"wrap"`` wraps (JAX's modes; others raise).
    """
    (a,) = promote_args("take", a)
    if axis is None:
        a, axis = ravel(a), 0
    av = aval_of(a)
    ax = canonicalize_axis(axis, av.ndim, "take")
    idx = _int_index("take", indices)
    n = av.shape[ax]
    iv = aval_of(idx)
    dt = _index_dtype(iv.dtype, size=n)
    if mode is None or mode == "fill":
        idx, gmode = _as_index(idx, n, dt), lax.GatherScatterMode.FILL_OR_DROP
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        m = lax.full_like(idx, max(n, 1))  # floor modulo: the result is in [0, n)
        idx = lax.rem(lax.add(lax.rem(idx, m), m), m) if iv.dtype.kind != "u" else lax.rem(idx, m)
        idx, gmode = convert(idx, dt), lax.GatherScatterMode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        idx, gmode = _as_index(idx, n, dt, normalize=False), lax.GatherScatterMode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    out_shape = av.shape[:ax] + iv.shape + av.shape[ax + 1:]
    if n == 0 and iv.size:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    if iv.size == 0:
        return _zeros_result(a, out_shape)
    dn = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(ax)) + tuple(range(ax + iv.ndim, av.ndim - 1 + iv.ndim)),
        collapsed_slice_dims=(ax,), start_index_map=(ax,))
    sizes = tuple(1 if d == ax else s for d, s in enumerate(av.shape))
    return lax.gather(a, reshape(idx, iv.shape + (1,)), dn, sizes, mode=gmode,
                      fill_value=fill_value, unique_indices=unique_indices,
                      indices_are_sorted=indices_are_sorted)


def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: int | None,
                    mode: str | None = None, fill_value: Any = None, *,
                    wrap_negative_indices: bool | None = None) -> Any:
    """``arr`` gathered along ``axis`` at ``indices`` (same ndim; other dims broadcast).

    Args:
      arr, indices, axis: as NumPy's.
      mode: out-of-bounds handling, as :func:`jax.lax.gather` (default ``"fill"``).
      fill_value: the fill of ``"fill"`` mode (NaN for inexact dtypes by default).
      wrap_negative_indices: count negative indices from the end; by default True unless
        ``mode="promise_in_bounds"`` (JAX's legacy rule).
    """
    (arr,) = promote_args("take_along_axis", arr)
    idx = _int_index("take_along_axis", indices)
    if axis is None:
        arr, idx, axis = ravel(arr), ravel(idx), 0
    av, iv = aval_of(arr), aval_of(idx)
    if av.ndim != iv.ndim:
        raise ValueError(f"take_along_axis: indices and arr must have the same number of "
                         f"dimensions, got {iv.ndim} and {av.ndim}")
    ax = canonicalize_axis(axis, av.ndim, "take_along_axis")
    shape = list(broadcast_shapes(tuple(1 if d == ax else s for d, s in enumerate(av.shape)),
                                  tuple(1 if d == ax else s for d, s in enumerate(iv.shape)),
                                  op="take_along_axis"))
    shape[ax] = iv.shape[ax]
    shape = tuple(shape)
    n = av.shape[ax]
    if n == 0 or math.prod(shape) == 0:  # nothing to read (JAX's zeros)
        return _zeros_result(arr, shape)
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    idx = _as_index(idx, n, _index_dtype(iv.dtype, size=n), normalize=wrap_negative_indices)
    if iv.shape != shape:
        idx = lax.broadcast_in_dim(idx, shape, tuple(range(iv.ndim)))
    idt = aval_of(idx).dtype
    coords = []
    for d in range(av.ndim):
        if d == ax:
            coords.append(idx)
        elif av.shape[d] == 1:
            coords.append(lax.full_like(idx, 0))
        else:
            coords.append(lax.broadcasted_iota(idt, shape, d))
    full = stack(coords, axis=-1) if coords else reshape(idx, shape + (0,))
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=tuple(range(av.ndim)),
                                    start_index_map=tuple(range(av.ndim)))
    return lax.gather(arr, full, dn, (1,) * av.ndim, mode=_mode(mode, "fill"),
                      fill_value=fill_value)


# ---- x[idx] ----

def _is_int_scalar(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _as_index_array(x: Any) -> Any:
    """A list/array/tracer index as a pullback array (bool masks kept as bool)."""
    if isinstance(x, (Array, core.Tracer)):
        return x
    v = np.asarray(x)
    if v.dtype == object:
        raise IndexError(f"invalid index {x!r}: only integers, slices, None, Ellipsis and "
                         "integer or boolean arrays are valid indices")
    if v.size == 0 and v.dtype.kind == "f":
        v = v.astype(np.int32)
    return asarray(v)


def _expand_bool(entry: Any) -> list[Any]:
    """A boolean mask becomes one integer index array per masked dimension."""
    c = entry.to_concrete_value() if hasattr(entry, "to_concrete_value") else None
    if c is None:
        raise NonConcreteBooleanIndexError(
            f"Array boolean indices must be concrete; got a traced mask of type "
            f"{aval_of(entry).str_short()}. Under jit use jnp.where(mask, x, y) or "
            "jnp.nonzero(mask, size=...) instead.")
    return [asarray(i.astype(np.int32)) for i in np.nonzero(np.asarray(c))]


def _parse_index(idx: Any, ndim: int) -> list[tuple[str, Any]]:
    """The index as (kind, value) entries, Ellipsis expanded, masks split:
    kinds: 'none', 'slice', 'int' (static), 'scalar' (traced 0-d int), 'array'."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    entries: list[tuple[str, Any]] = []
    for x in idx:
        if x is None:
            entries.append(("none", None))
        elif x is Ellipsis:
            entries.append(("ellipsis", None))
        elif isinstance(x, slice):
            entries.append(("slice", x))
        elif _is_int_scalar(x):
            entries.append(("int", operator.index(x)))
        elif isinstance(x, (bool, np.bool_)):
            entries.append(("array", _as_index_array(np.asarray(x))))
        else:
            arr = _as_index_array(x)
            dt = aval_of(arr).dtype
            if dt == dtypes.bool_:
                if aval_of(arr).ndim == 0:
                    entries.append(("array", arr))  # handled as a mask below
                    continue
                entries.extend(("array", i) for i in _expand_bool(arr))
            elif dtypes.is_integer(dt):
                entries.append(("scalar" if aval_of(arr).ndim == 0 else "array", arr))
            else:  # (JAX's type and words)
                raise TypeError(f"Indexer must have integer or boolean type, got indexer with "
                                f"type {dt}")
    n_ell = sum(1 for k, _ in entries if k == "ellipsis")
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k, _ in entries if k not in ("none", "ellipsis"))
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{consumed} were indexed")
    out: list[tuple[str, Any]] = []
    for k, v in entries:
        if k == "ellipsis":
            out.extend(("slice", slice(None)) for _ in range(ndim - consumed))
        else:
            out.append((k, v))
    if not n_ell:
        out.extend(("slice", slice(None)) for _ in range(ndim - consumed))
    return out


def _scalar_entries(entries: list, shape: tuple, fill: bool) -> None:
    """Checks and rewrites the integer entries in place: on an axis of size 0 they raise (as
    JAX). Beside an array index a static one joins the gather unchanged (capped to
    [-n - 1, n], which keeps it out of bounds on the same side); else in fill/drop mode the
    out-of-bounds static ones and every traced one become gathered indices (a slice cannot
    fill), and otherwise a static one is counted from the end once and clamped to the axis,
    as JAX's slicing."""
    gathered = any(k == "array" for k, _ in entries)
    d = 0
    for i, (k, v) in enumerate(entries):
        if k == "none":
            continue
        n = shape[d]
        if k in ("int", "scalar") and n == 0:
            raise IndexError(f"index is out of bounds for axis {d} with size 0")
        if k == "int" and gathered:
            entries[i] = ("int", min(max(v, -n - 1), n))
        elif k == "int":
            v = v + n if v < 0 else v
            if fill and not 0 <= v < n:  # any out-of-bounds value fills alike: n does
                entries[i] = ("array", Array(np.asarray(n, np.int32 if n < 2**31 - 1
                                                        else np.int64)))
            else:
                entries[i] = ("int", min(max(v, 0), n - 1))
        elif k == "scalar" and fill:
            entries[i] = ("array", v)
        d += 1


def rewriting_take(arr: Any, idx: Any, *, mode: Any = None, fill_value: Any = None) -> Any:
    """``arr[idx]`` with NumPy's semantics, lowered to views, dynamic_slice or gather.

    ``mode``: JAX's out-of-bounds modes (default ``"promise_in_bounds"``, which clamps)."""
    (arr,) = promote_args("getitem", arr)
    av = aval_of(arr)
    gmode = _mode(mode, "promise_in_bounds")
    entries = _parse_index(idx, av.ndim)
    # a 0-d boolean index: x[True] adds an axis, x[False] an empty one
    if any(k == "array" and aval_of(v).dtype == dtypes.bool_ for k, v in entries):
        return _bool_scalar_index(arr, entries)
    _scalar_entries(entries, av.shape, gmode is lax.GatherScatterMode.FILL_OR_DROP)
    has_array = any(k == "array" for k, _ in entries)
    if has_array:  # ints and traced scalars join the advanced indices (NumPy's rule)
        entries = [("array", convert(v, dtypes.int32 if abs(v) < 2**31 - 1 else dtypes.int64))
                   if k == "int" else
                   ("array", v) if k == "scalar" else (k, v) for k, v in entries]
    # 1) static slices: rev + slice, as views; ints (without arrays): static slice + squeeze
    dims = [i for i, (k, _) in enumerate(entries) if k != "none"]
    starts, limits, steps, revs, squeeze_dims, dyn = [], [], [], [], [], []
    for d, i in enumerate(dims):
        k, v = entries[i]
        n = av.shape[d]
        if k == "slice":
            for part in (v.start, v.stop, v.step):
                if isinstance(part, (float, complex, np.floating, np.complexfloating)):
                    raise TypeError(f"slice indices must be integers or None, got "
                                    f"{type(part).__name__} {part!r}")
                if part is not None and not _is_int_scalar(part) and not isinstance(part, int):
                    c = part.to_concrete_value() if hasattr(part, "to_concrete_value") else None
                    if c is None:
                        raise IndexError(
                            "Array slice indices must have static start/stop/step to be used "
                            "with NumPy indexing syntax; use lax.dynamic_slice for traced "
                            "starts")
            sl = slice(*(None if p is None else operator.index(p)
                         for p in (v.start, v.stop, v.step)))
            start, stop, step = sl.indices(n)
            if step < 0:
                revs.append(d)
                start, stop, step = n - 1 - start, n - 1 - stop, -step
            starts.append(start)
            limits.append(max(stop, start))
            steps.append(step)
        elif k == "int":  # in bounds (_scalar_entries)
            starts.append(v), limits.append(v + 1), steps.append(1)
            squeeze_dims.append(d)
        elif k == "scalar":
            starts.append(0), limits.append(n), steps.append(1)
            dyn.append((d, v))
        else:  # advanced: keep the whole axis for now
            starts.append(0), limits.append(n), steps.append(1)
    x = arr
    if revs:
        x = lax.rev(x, tuple(revs))
    if any(s != 0 for s in starts) or any(lim != n for lim, n in zip(limits, av.shape)) or \
            any(s != 1 for s in steps):
        x = lax.slice(x, tuple(starts), tuple(limits), tuple(steps))
    if dyn:  # traced scalar indices: a clamped dynamic_slice of size 1
        xv = aval_of(x)
        start_idx = [convert(0, dtypes.int32)] * xv.ndim
        sizes = list(xv.shape)
        for d, v in dyn:
            # dynamic_slice counts a negative start from the end itself (JAX's)
            start_idx[d] = _as_index(v, xv.shape[d], _index_dtype(aval_of(v).dtype,
                                                                  size=xv.shape[d]),
                                     normalize=False)
            sizes[d] = 1
        x = lax.dynamic_slice(x, start_idx, tuple(sizes))
        squeeze_dims = sorted(squeeze_dims + [d for d, _ in dyn])
    if not has_array:
        if squeeze_dims:
            x = lax.squeeze(x, tuple(squeeze_dims))
        tokens = [k for k, _ in entries if k not in ("int", "scalar")]
        return _insert_new_axes(x, tokens, expand_dims)
    return _advanced(x, entries, gmode, fill_value, expand_dims)


def _bool_scalar_index(arr: Any, entries: list) -> Any:
    (k, v), = [(k, v) for k, v in entries if k == "array" and aval_of(v).dtype == dtypes.bool_]
    x = expand_dims(arr, 0)
    c = v.to_concrete_value() if hasattr(v, "to_concrete_value") else None
    if c is None:
        raise NonConcreteBooleanIndexError("Array boolean indices must be concrete")
    x = x if bool(c) else lax.slice_in_dim(x, 0, 0, axis=0)
    others = tuple(vv for kk, vv in entries if not (kk == "array" and vv is v))
    return rewriting_take(x, (slice(None),) + others) if others else x


def _insert_new_axes(x: Any, tokens: list[str], expand_dims: Callable) -> Any:
    new_pos = [i for i, t in enumerate(tokens) if t == "none"]
    return expand_dims(x, tuple(new_pos)) if new_pos else x


def _advanced(x: Any, entries: list, mode: Any, fill_value: Any, expand_dims: Callable) -> Any:
    xv = aval_of(x)
    dims = [i for i, (k, _) in enumerate(entries) if k != "none"]
    adv = [(d, v) for d, i in enumerate(dims) for k, v in [entries[i]] if k == "array"]
    adv_dims = [d for d, _ in adv]
    bshape = broadcast_shapes(*(aval_of(v).shape for _, v in adv), op="getitem")
    # positions: adjacent advanced entries (no slice or None between) keep their place
    positions = [i for i, (k, _) in enumerate(entries) if k == "array"]
    contiguous = positions == list(range(positions[0], positions[0] + len(positions)))
    rest = [d for d in range(xv.ndim) if d not in adv_dims]
    nb = len(bshape)
    if contiguous:
        p0 = sum(1 for d in rest if d < adv_dims[0])
        offset = tuple(range(p0)) + tuple(range(p0 + nb, nb + len(rest)))
    else:
        offset = tuple(range(nb, nb + len(rest)))
    if math.prod(bshape) == 0:  # no index: an empty result, whatever the axes' sizes
        window = iter(xv.shape[d] for d in rest)
        batch = iter(bshape)
        out = _zeros_result(x, tuple(next(window) if o in offset else next(batch)
                                     for o in range(nb + len(rest))))
    else:
        for d in adv_dims:
            if xv.shape[d] == 0:  # JAX's gather rejects it too (a TypeError)
                raise TypeError(f"getitem: cannot index axis {d} of size 0 with a non-empty "
                                "integer array: every index is out of bounds")
        idt = _index_dtype(*(aval_of(v).dtype for _, v in adv),
                           size=max((xv.shape[d] for d in adv_dims), default=0))
        cols = [broadcast_to(_as_index(v, xv.shape[d], idt), bshape) for d, v in adv]
        dn = lax.GatherDimensionNumbers(offset_dims=offset,
                                        collapsed_slice_dims=tuple(adv_dims),
                                        start_index_map=tuple(adv_dims))
        sizes = tuple(1 if d in adv_dims else s for d, s in enumerate(xv.shape))
        out = lax.gather(x, stack(cols, axis=-1), dn, sizes, mode=mode, fill_value=fill_value)
    # new axes: their place among the output's tokens
    tokens: list[str] = []
    for k, _ in entries:
        if k == "array":
            if contiguous and "B" not in tokens:
                tokens.extend(["B"] * nb)
        else:
            tokens.append(k)
    if not contiguous:
        tokens = ["B"] * nb + tokens
    return _insert_new_axes(out, tokens, expand_dims)


# ---- x.at[idx] ----

class _IndexUpdateHelper:
    """``x.at``: index it to get an updater (``x.at[idx].set(y)``)."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> "_IndexUpdateRef":
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """Functional updates of ``array`` at ``index``, as ``jax.Array.at[index]``.

    Each method returns a new array. Out-of-bounds indices are dropped by default
    (``mode="drop"``); ``mode="clip"`` clamps them. With repeated indices ``set`` keeps the last
    update (in index order), ``add``/``multiply``/``min``/``max`` combine them all.
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array, self.index = array, index

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None) -> Any:
        """``array[index]`` (``mode="fill"`` returns ``fill_value`` out of bounds)."""
        return rewriting_take(self.array, self.index, mode=mode, fill_value=fill_value)

    def set(self, values: ArrayLike, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """``array`` with ``array[index] = values``."""
        return _scatter(self.array, self.index, values, lambda *a, **k: lax.scatter(*a, **k), mode)

    def add(self, values: ArrayLike, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """``array`` with ``array[index] += values`` (repeated indices accumulate)."""
        return _scatter(self.array, self.index, values,
                        lambda *a, **k: lax.scatter_add(*a, **k), mode)

    def subtract(self, values: ArrayLike, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None) -> Any:
        """``array`` with ``array[index] -= values``."""
        return self.add(negative(values), mode=mode)

    def multiply(self, values: ArrayLike, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None) -> Any:
        """``array`` with ``array[index] *= values``."""
        return _scatter(self.array, self.index, values,
                        lambda *a, **k: lax.scatter_mul(*a, **k), mode)

    mul = multiply

    def divide(self, values: ArrayLike, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None) -> Any:
        """``array`` with ``array[index] /= values``."""
        (arr,) = promote_args("at.divide", self.array)
        divisor = _scatter(ones_like(arr), self.index, values,
                           lambda *a, **k: lax.scatter_mul(*a, **k), mode)
        return convert(divide(arr, divisor), aval_of(arr).dtype)

    def power(self, values: ArrayLike, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """``array`` with ``array[index] **= values``."""
        (arr,) = promote_args("at.power", self.array)
        exps = _scatter(ones_like(arr), self.index, values, lambda *a, **k: lax.scatter(*a, **k),
                        mode)
        return convert(power(arr, exps), aval_of(arr).dtype)

    def min(self, values: ArrayLike, *, indices_are_sorted: bool = False,  # noqa: A003
            unique_indices: bool = False, mode: Any = None) -> Any:
        """``array`` with ``array[index] = minimum(array[index], values)``."""
        return _scatter(self.array, self.index, values,
                        lambda *a, **k: lax.scatter_min(*a, **k), mode)

    def max(self, values: ArrayLike, *, indices_are_sorted: bool = False,  # noqa: A003
            unique_indices: bool = False, mode: Any = None) -> Any:
        """``array`` with ``array[index] = maximum(array[index], values)``."""
        return _scatter(self.array, self.index, values,
                        lambda *a, **k: lax.scatter_max(*a, **k), mode)

    def apply(self, func: Callable, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """``array`` with ``func`` applied to ``array[index]``."""
        return self.set(func(self.get()), mode=mode)


def _scatter(arr: Any, index: Any, values: Any, scatter: Callable, mode: Any) -> Any:
    """Updates through the flat positions ``index`` selects: index an iota of the flat
    positions with the same ``index`` (so every NumPy indexing rule applies unchanged), then
    one 1-D scatter into the flattened array. Out-of-bounds indices are dropped unless
    ``mode="clip"`` (JAX: its default, "fill"/"drop" and XLA's "promise_in_bounds" drop)."""
    (arr,) = promote_args("at", arr)
    av = aval_of(arr)
    drop = _mode(mode, "drop") is not lax.GatherScatterMode.CLIP
    if av.size == 0:  # nothing to update; integer indices on empty axes still raise (JAX)
        entries = _parse_index(index, av.ndim)
        if not any(k == "array" and aval_of(v).dtype == dtypes.bool_ for k, v in entries):
            _scalar_entries(entries, av.shape, drop)
        return arr
    dt = dtypes.int32 if av.size < 2**31 - 1 else dtypes.int64
    ids = reshape(lax.iota(dt, av.size), av.shape)
    sel = rewriting_take(ids, index, mode="fill" if drop else "clip", fill_value=av.size)
    sv = aval_of(sel)
    vals = convert(promote_args("at", values)[0], av.dtype)
    vals = broadcast_to(vals, sv.shape)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    flat = scatter(ravel(arr), reshape(sel, (sv.size, 1)), ravel(vals), dn,
                   mode=lax.GatherScatterMode.FILL_OR_DROP if drop else
                   lax.GatherScatterMode.CLIP)
    return reshape(flat, av.shape)
