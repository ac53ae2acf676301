"""Selection: select, choose, piecewise, compress, extract, place, put, put_along_axis,
fill_diagonal, partition, argpartition, sort_complex.

Functions whose output size depends on the data (compress, extract) need concrete input, or a
static ``size=`` under jit, as in JAX. JAX arrays are immutable: ``place``/``put``/
``fill_diagonal`` need ``inplace=False`` and return the updated array.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.shapes import canonicalize_axis
from ._creation import asarray, full
from ._indexing import take, take_along_axis
from ._promotion import aval_of, broadcast_all, convert, promote_args, promote_dtypes
from ._reductions import sum as sum_
from ._shape import broadcast_to, concatenate, ravel, reshape
from ._sorting import _concrete, argsort, lexsort, nonzero, sort
from ._ufuncs import imag, real, where

ArrayLike = Any


def _as_bool_array(name: str, arg: str, x: Any) -> Any:
    (x,) = promote_args(name, x)
    if aval_of(x).dtype != dtypes.bool_:
        x = lax.ne(x, lax.full_like(x, 0))
    return x


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
           default: ArrayLike = 0) -> Any:
    """The element of the first choice whose condition holds, else ``default``.

    Args:
      condlist: boolean arrays (broadcast together with the choices).
      choicelist: arrays of values, one per condition.
      default: the value where no condition holds.

    Returns:
      The selected values, of the choices' promoted dtype.
    """
    if len(condlist) != len(choicelist):
        raise ValueError("select: argument 'condlist' must have the same length as "
                         f"'choicelist', got {len(condlist)} and {len(choicelist)}")
    if not condlist:
        raise ValueError("select: argument 'condlist' must be non-empty")
    conds = []
    for c in condlist:
        (c,) = promote_args("select", c)
        if aval_of(c).dtype != dtypes.bool_:
            raise TypeError("select: argument 'condlist' must hold boolean arrays, got "
                            f"{aval_of(c).dtype}")
        conds.append(c)
    vals = promote_dtypes("select", default, *choicelist)
    out = broadcast_all("select", *conds, *vals)
    conds, default, choices = out[:len(conds)], out[len(conds)], out[len(conds) + 1:]
    # the last condition is applied first so that the first true one wins
    result = default
    for c, v in zip(reversed(conds), reversed(choices)):
        result = lax.select_n(c, result, v)
    return result


def choose(a: ArrayLike, choices: Sequence[ArrayLike], out: None = None,
           mode: str = "raise") -> Any:
    """``choices[a[i]][i]`` for each index ``i`` (``a`` broadcast with the choices).

    ``mode``: "raise" (JAX cannot raise on traced indices: the values must be concrete),
    "wrap" (indices modulo ``len(choices)``) or "clip".
    """
    if out is not None:
        raise NotImplementedError("choose: the 'out' argument is not supported (arrays are "
                                  "immutable)")
    (a,) = promote_args("choose", a)
    if not dtypes.is_integer(aval_of(a).dtype):
        raise TypeError(f"choose: argument 'a' must be an integer array, got {aval_of(a).dtype}")
    choices = promote_dtypes("choose", *choices)
    n = len(choices)
    if n == 0:
        raise ValueError("choose: argument 'choices' must be non-empty")
    if mode == "raise":
        c = a.to_concrete_value() if hasattr(a, "to_concrete_value") else None
        if c is None:
            raise ValueError("choose: mode='raise' needs concrete indices (use mode='wrap' "
                             "or 'clip' under jit)")
        if np.any((np.asarray(c) < 0) | (np.asarray(c) >= n)):
            raise ValueError("choose: invalid entry in choice array (argument 'a' must be in "
                             f"[0, {n}))")
    elif mode == "wrap":
        a = lax.rem(lax.add(lax.rem(a, lax.full_like(a, n)), lax.full_like(a, n)),
                    lax.full_like(a, n))
    elif mode == "clip":
        a = lax.clamp(lax.full_like(a, 0), a, lax.full_like(a, n - 1))
    else:
        raise ValueError(f"choose: argument 'mode' must be 'raise', 'wrap' or 'clip', got "
                         f"{mode!r}")
    a, *choices = broadcast_all("choose", a, *choices)
    a = convert(a, dtypes.int32)
    return lax.select_n(a, *choices)


def piecewise(x: ArrayLike, condlist: Any, funclist: Sequence[Any], *args: Any,
              **kw: Any) -> Any:
    """Evaluates each function of ``funclist`` where its condition holds (the last, if there
    is one more function than conditions, where none holds); scalars are constants.

    All functions are evaluated on the whole ``x`` (as JAX's ``switch`` over the index of the
    first true condition); the result has ``x``'s dtype.
    """
    (x,) = promote_args("piecewise", x)
    xv = aval_of(x)
    cl = asarray(condlist)
    if aval_of(cl).ndim == xv.ndim:  # one condition
        cl = reshape(cl, (1,) + xv.shape)
    conds = [_as_bool_array("piecewise", "condlist", cl[i]) for i in range(aval_of(cl).shape[0])]
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        pass
    elif nf == nc:
        funclist = list(funclist) + [0]
    else:
        raise ValueError(f"piecewise: argument 'funclist' must have {nc} or {nc + 1} entries "
                         f"(one per condition, or one more), got {nf}")
    vals = []
    for f in funclist:
        v = f(x, *args, **kw) if callable(f) else f
        vals.append(broadcast_to(convert(asarray(v), xv.dtype), xv.shape))
    # NumPy: later conditions override earlier ones; the default where none holds
    result = vals[-1]
    for c, v in zip(conds, vals[:-1]):
        result = lax.select_n(broadcast_to(c, xv.shape), result, v)
    return result


def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, *,
             size: int | None = None, fill_value: ArrayLike = 0, out: None = None) -> Any:
    """The slices of ``a`` along ``axis`` (flattened when None) where ``condition`` is true.

    Args:
      condition: a 1-D boolean array (shorter than ``a`` along ``axis``: the rest are dropped).
      a: the input.
      axis: the axis to select along.
      size: a static result length (needed under jit); missing slots take ``fill_value``.
      fill_value: the padding value.

    Returns:
      The selected slices.
    """
    if out is not None:
        raise NotImplementedError("compress: the 'out' argument is not supported")
    (cond,) = promote_args("compress", condition)
    cv = aval_of(cond)
    if cv.ndim != 1:
        raise ValueError(f"compress: argument 'condition' must be 1-D, got shape {cv.shape}")
    cond = _as_bool_array("compress", "condition", cond)
    (a,) = promote_args("compress", a)
    if axis is None:
        a, axis = ravel(a), 0
    av = aval_of(a)
    ax = canonicalize_axis(axis, av.ndim, "compress")
    n = av.shape[ax]
    if cv.shape[0] > n:  # NumPy: extra True entries would index out of bounds
        c = cond.to_concrete_value() if hasattr(cond, "to_concrete_value") else None
        if c is not None and np.any(np.asarray(c)[n:]):
            raise IndexError(f"compress: argument 'condition' has a true entry beyond the "
                             f"length {n} of 'a' along axis {ax}")
        cond = lax.slice_in_dim(cond, 0, n)
    elif cv.shape[0] < n:
        cond = concatenate([cond, full((n - cv.shape[0],), False, dtypes.bool_)])
    return _compress_axis(cond, a, ax, size, fill_value, "compress")


def _compress_axis(cond: Any, a: Any, ax: int, size: int | None, fill_value: Any,
                   name: str) -> Any:
    """``a``'s slices along ``ax`` where the 1-D boolean ``cond`` holds, padded to ``size``."""
    if size is None:
        size = int(np.count_nonzero(_concrete(name, cond)))
    (idx,) = nonzero(cond, size=size, fill_value=0)
    count = sum_(convert(cond, dtypes.DEFAULT_INT))
    av = aval_of(a)
    if av.shape[ax] == 0:
        shape = av.shape[:ax] + (size,) + av.shape[ax + 1:]
        return full(shape, fill_value, av.dtype)
    vals = take(a, idx, axis=ax, mode="clip")
    keep = lax.lt(lax.iota(dtypes.DEFAULT_INT, size), count)
    shape = [1] * av.ndim
    shape[ax] = size
    keep = reshape(keep, tuple(shape))
    return where(keep, vals, convert(asarray(fill_value), av.dtype))


def extract(condition: ArrayLike, arr: ArrayLike, *, size: int | None = None,
            fill_value: ArrayLike = 0) -> Any:
    """The elements of ``arr`` (flattened) where ``condition`` (flattened) is true."""
    cond = ravel(_as_bool_array("extract", "condition", condition))
    a = ravel(asarray(arr))
    nc, na = aval_of(cond).shape[0], aval_of(a).shape[0]
    if nc != na:  # NumPy's extract takes the common prefix
        m = min(nc, na)
        cond, a = lax.slice_in_dim(cond, 0, m), lax.slice_in_dim(a, 0, m)
    return _compress_axis(cond, a, 0, size, fill_value, "extract")


def _no_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(f"{name}: JAX arrays are immutable; pass inplace=False and use the "
                         "returned array")


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Any:
    """``arr`` with its elements where ``mask`` holds replaced, in order, by ``vals`` (cycled).

    ``mask`` must be concrete (its count of true entries sets how ``vals`` is read).
    """
    _no_inplace("place", inplace)
    (arr,) = promote_args("place", arr)
    av = aval_of(arr)
    m = ravel(_as_bool_array("place", "mask", mask))
    if aval_of(m).shape[0] != av.size:
        raise ValueError("place: argument 'mask' must have the size of 'arr'")
    cm = _concrete("place", m)
    idx = np.flatnonzero(cm)
    v = ravel(convert(asarray(vals), av.dtype))
    nv = aval_of(v).shape[0]
    if idx.size == 0:
        return arr
    if nv == 0:
        raise ValueError("place: argument 'vals' must be non-empty when 'mask' has true "
                         "entries")
    src = take(v, asarray(np.arange(idx.size) % nv, dtype=np.int32))
    flat = ravel(arr).at[asarray(idx.astype(np.int32))].set(src)
    return reshape(flat, av.shape)


def put(a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *,
        inplace: bool = True) -> Any:
    """``a`` with the flat positions ``ind`` set to ``v`` (cycled to ``ind``'s size).

    ``mode``: None or "fill" (out-of-bound indices dropped, JAX's default), "clip" or "wrap".
    """
    _no_inplace("put", inplace)
    (a,) = promote_args("put", a)
    av = aval_of(a)
    (ind,) = promote_args("put", ind)
    if not dtypes.is_integer(aval_of(ind).dtype):
        raise TypeError(f"put: argument 'ind' must be integer, got {aval_of(ind).dtype}")
    ind = ravel(ind)
    k = aval_of(ind).shape[0]
    vv = ravel(convert(asarray(v), av.dtype))
    nv = aval_of(vv).shape[0]
    if k == 0:
        return a
    if nv == 0:
        raise ValueError("put: argument 'v' must be non-empty")
    if nv != k:
        vv = take(vv, asarray(np.arange(k) % nv, dtype=np.int32))
    flat = ravel(a)
    n = av.size
    if mode in (None, "fill", "drop"):
        out = flat.at[ind].set(vv, mode="drop")
    elif mode == "clip":  # NumPy's: negative indices clip to 0 (they do not count back)
        ind = lax.clamp(lax.full_like(ind, 0), ind, lax.full_like(ind, max(n - 1, 0)))
        out = flat.at[ind].set(vv, mode="clip")
    elif mode == "wrap":
        ind = lax.rem(lax.add(lax.rem(ind, lax.full_like(ind, n)), lax.full_like(ind, n)),
                      lax.full_like(ind, n)) if n else ind
        out = flat.at[ind].set(vv, mode="drop")
    elif mode == "raise":
        raise NotImplementedError("put: mode='raise' is not supported (JAX cannot raise on "
                                  "traced indices); use 'fill', 'clip' or 'wrap'")
    else:
        raise ValueError(f"put: argument 'mode' must be one of None, 'fill', 'clip', 'wrap', "
                         f"got {mode!r}")
    return reshape(out, av.shape)


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Any:
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (take_along_axis's
    inverse; other dimensions broadcast)."""
    _no_inplace("put_along_axis", inplace)
    (arr,) = promote_args("put_along_axis", arr)
    av = aval_of(arr)
    (idx,) = promote_args("put_along_axis", indices)
    if not dtypes.is_integer(aval_of(idx).dtype):
        raise TypeError("put_along_axis: argument 'indices' must be integer, got "
                        f"{aval_of(idx).dtype}")
    if axis is None:
        flat = ravel(arr)
        return reshape(put_along_axis(flat, ravel(idx), ravel(asarray(values)), 0,
                                      inplace=False, mode=mode), av.shape)
    if aval_of(idx).ndim != av.ndim:
        raise ValueError("put_along_axis: arguments 'indices' and 'arr' must have the same "
                         f"number of dimensions, got {aval_of(idx).ndim} and {av.ndim}")
    ax = canonicalize_axis(axis, av.ndim, "put_along_axis")
    iv = aval_of(idx)
    shape = list(np.broadcast_shapes(
        tuple(1 if d == ax else s for d, s in enumerate(iv.shape)),
        tuple(1 if d == ax else s for d, s in enumerate(av.shape))))
    shape[ax] = iv.shape[ax]
    idx = broadcast_to(idx, tuple(shape))
    vals = broadcast_to(convert(asarray(values), av.dtype), tuple(shape))
    coords = []
    for d in range(av.ndim):
        if d == ax:
            coords.append(idx)
        else:
            coords.append(lax.broadcasted_iota(aval_of(idx).dtype, tuple(shape), d))
    return arr.at[tuple(coords)].set(vals, mode=mode or "drop")


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *,
                  inplace: bool = True) -> Any:
    """``a`` with its main diagonal set to ``val`` (cycled); for 2-D ``wrap`` continues the
    diagonal past a tall matrix's square part, as NumPy."""
    _no_inplace("fill_diagonal", inplace)
    (a,) = promote_args("fill_diagonal", a)
    av = aval_of(a)
    if av.ndim < 2:
        raise ValueError("fill_diagonal: argument 'a' must be at least 2-D")
    if av.ndim > 2 and len(set(av.shape)) != 1:
        raise ValueError("fill_diagonal: all dimensions of 'a' must be of equal length, got "
                         f"{av.shape}")
    if av.ndim == 2:
        rows, cols = av.shape
        step = cols + 1
        end = av.size if wrap else min(av.size, cols * cols)
        flat_idx = np.arange(0, end, step)
    else:
        n = av.shape[0]
        step = sum(n ** k for k in range(av.ndim))
        flat_idx = np.arange(n) * step
    k = flat_idx.size
    vv = ravel(convert(asarray(val), av.dtype))
    nv = aval_of(vv).shape[0]
    if k == 0 or nv == 0:
        return a
    if nv != k:
        vv = take(vv, asarray(np.arange(k) % nv, dtype=np.int32))
    out = ravel(a).at[asarray(flat_idx.astype(np.int32))].set(vv)
    return reshape(out, av.shape)


def _kth(name: str, kth: Any, n: int) -> int:
    if not isinstance(kth, (int, np.integer)):
        raise TypeError(f"{name}: argument 'kth' must be a static integer, got {kth!r}")
    k = int(kth)
    if not -n <= k < n:
        raise ValueError(f"{name}: argument 'kth' = {k} is out of bounds for length {n}")
    return k + n if k < 0 else k


def partition(a: ArrayLike, kth: int, axis: int = -1) -> Any:
    """``a`` rearranged along ``axis`` so that position ``kth`` holds the value it has when
    sorted, the smaller ones before it and the larger ones after it.

    As JAX's (two top-k selections): the first ``kth + 1`` values ascending, the rest
    descending.
    """
    (a,) = promote_args("partition", a)
    av = aval_of(a)
    if av.ndim == 0:
        raise ValueError("partition: argument 'a' must be at least 1-D")
    ax = canonicalize_axis(axis, av.ndim, "partition")
    n = av.shape[ax]
    k = _kth("partition", kth, n)
    s = sort(a, axis=ax)
    top = lax.rev(lax.slice_in_dim(s, k + 1, n, axis=ax), (ax,))
    return concatenate([lax.slice_in_dim(s, 0, k + 1, axis=ax), top], axis=ax)


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Any:
    """Indices that partition ``a`` along ``axis`` (see :func:`partition`).

    As JAX's: the indices of the ``kth + 1`` smallest values in ascending order of value, then
    the other indices in increasing order.
    """
    (a,) = promote_args("argpartition", a)
    av = aval_of(a)
    if av.ndim == 0:
        raise ValueError("argpartition: argument 'a' must be at least 1-D")
    ax = canonicalize_axis(axis, av.ndim, "argpartition")
    n = av.shape[ax]
    k = _kth("argpartition", kth, n)
    perm = argsort(a, axis=ax)
    bottom = lax.slice_in_dim(perm, 0, k + 1, axis=ax)
    # rank of each position in the sorted order: the bottom ones are those of rank <= k
    rank = take_along_axis(lax.broadcasted_iota(dtypes.DEFAULT_INT, av.shape, ax),
                           argsort(perm, axis=ax), axis=ax)
    rest = argsort(lax.le(rank, lax.full_like(rank, k)), axis=ax)
    out = concatenate([bottom, lax.slice_in_dim(rest, 0, n - k - 1, axis=ax)], axis=ax)
    return convert(out, dtypes.int32)  # int32 even with x64: JAX's comes from lax.top_k


def sort_complex(a: ArrayLike) -> Any:
    """``a`` sorted along its last axis by real part, then imaginary part, as complex."""
    (a,) = promote_args("sort_complex", a)
    av = aval_of(a)
    dt = av.dtype if dtypes.is_complex(av.dtype) else \
        np.result_type(dtypes.to_inexact(av.dtype), np.complex64)
    if av.ndim == 0:
        raise ValueError("sort_complex: argument 'a' must be at least 1-D")
    a = convert(a, dtypes.requested(dt) if hasattr(dtypes, "requested") else dt)
    if av.size == 0:
        return a
    re, im = real(a), imag(a)
    perm = lexsort([im, re], axis=-1)
    return take_along_axis(a, perm, axis=-1)
