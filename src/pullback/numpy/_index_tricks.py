"""Index builders: mgrid, ogrid, r_, c_, s_, index_exp, ix_, the triangle/diagonal/mask index
functions, ravel_multi_index and unravel_index (JAX's semantics: out-of-bounds handling by
``mode``, int32 results)."""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.errors import ConcretizationTypeError
from ._creation import arange, array, asarray, meshgrid, ones
from ._promotion import aval_of, convert, promote_dtypes
from ._shape import concatenate, expand_dims, stack, transpose
from ._sorting import nonzero
from ._ranges import linspace
from ._ufuncs import divmod as divmod_, where

ArrayLike = Any


def _static(value: Any, what: str) -> Any:
    if value is None or isinstance(value, (int, float, complex, np.number)):
        return value
    c = value.to_concrete_value() if hasattr(value, "to_concrete_value") else None
    if c is None:
        raise ConcretizationTypeError(f"{what} must be a concrete value, got a traced array")
    return np.asarray(c).item()


def _grid_from_slice(s: slice, op: str) -> Any:
    start = _static(s.start, f"{op}: the slice start") or 0
    stop = _static(s.stop, f"{op}: the slice stop")
    step = _static(s.step, f"{op}: the slice step") or 1
    if np.iscomplex(step):
        return linspace(start, stop, int(abs(step)))
    return arange(start, stop, step)


class _Mgrid:
    """Dense multi-dimensional grids: ``mgrid[0:3, 0:4]`` (an imaginary step ``5j`` gives
    that many points, endpoints included, as linspace)."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_from_slice(key, "mgrid")
        out = promote_dtypes("mgrid", *(_grid_from_slice(k, "mgrid") for k in key))
        if not out:
            return arange(0)
        return stack(meshgrid(*out, indexing="ij", sparse=False), 0)


class _Ogrid:
    """Open (sparse) multi-dimensional grids: ``ogrid[0:3, 0:4]`` is a list of broadcastable
    arrays."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_from_slice(key, "ogrid")
        out = promote_dtypes("ogrid", *(_grid_from_slice(k, "ogrid") for k in key))
        return meshgrid(*out, indexing="ij", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


class _AxisConcat:
    """Concatenates slices (as aranges), scalars and arrays along an axis, with NumPy's
    string directives ``"axis,ndmin,trans1d"``, ``"r"`` and ``"c"``."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, op: str):
        self.axis, self.ndmin, self.trans1d, self.op = axis, ndmin, trans1d, op

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec: list[Any] = directive.split(",")
                vec = vec + params[len(vec):] if len(vec) < 4 else vec[:3] + [params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError as err:
                    raise ValueError(f"{self.op}: could not understand directive "
                                     f"{directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        out = []
        for item in items:
            if isinstance(item, slice):
                obj, item_ndim = _grid_from_slice(item, self.op), 0
            elif isinstance(item, str):
                raise ValueError(f"{self.op}: a string directive must be placed at the "
                                 "beginning")
            else:
                obj = asarray(item)
                item_ndim = aval_of(obj).ndim
            obj = array(obj, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                order = tuple(range(ndmin))
                shifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
                obj = transpose(obj, order[shifts:] + order[:shifts])
            out.append(obj)
        res = concatenate(tuple(out), axis=axis)
        if matrix != -1 and aval_of(res).ndim == 1:
            res = expand_dims(res, matrix)
        return res

    def __len__(self) -> int:
        return 0


r_ = _AxisConcat(0, 1, -1, "r_")
c_ = _AxisConcat(-1, 2, 0, "c_")
r_.__doc__ = "Concatenates slices, scalars and arrays along the first axis (numpy.r_)."
c_.__doc__ = "Concatenates slices, scalars and arrays along the last axis (numpy.c_)."


class _IndexExpression:
    """Builds index tuples: ``s_[1:3, ::2]`` is ``(slice(1, 3), slice(None, None, 2))``."""

    def __init__(self, maketuple: bool):
        self.maketuple = maketuple

    def __getitem__(self, item: Any) -> Any:
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = _IndexExpression(False)
index_exp = _IndexExpression(True)


def ix_(*args: ArrayLike) -> tuple[Any, ...]:
    """An open mesh from 1-D sequences: the i-th result has shape 1 except along axis i, so
    ``a[ix_(rows, cols)]`` selects the cross product."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        av = aval_of(a)
        if av.ndim != 1:
            raise ValueError(f"ix_: arguments must be 1-D, got argument {i} of shape "
                             f"{av.shape}")
        if av.dtype == dtypes.bool_:
            raise TypeError("ix_: boolean arguments are not supported")
        shape = [1] * n
        shape[i] = av.shape[0]
        out.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))
    return tuple(out)


def _index_ints(name: str, **kw: Any) -> list[int]:
    out = []
    for k, v in kw.items():
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{name}: argument '{k}' must be a static integer, got "
                            f"{v!r}") from None
    return out


def _tri_indices(name: str, n: int, k: int, m: int | None, lower: bool) -> tuple[Any, Any]:
    m = n if m is None else m
    n, k, m = _index_ints(name, n=n, k=k, m=m)
    i, j = (np.tril_indices if lower else np.triu_indices)(n, k, m)  # static index arithmetic
    return asarray(i.astype(dtypes.DEFAULT_INT)), asarray(j.astype(dtypes.DEFAULT_INT))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the lower triangle (on and below diagonal ``k``) of an
    (n, m) array."""
    return _tri_indices("tril_indices", n, k, m, True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the upper triangle (on and above diagonal ``k``)."""
    return _tri_indices("triu_indices", n, k, m, False)


def _shape_2d(name: str, arr: Any) -> tuple[int, int]:
    shape = getattr(arr, "shape", None)
    if shape is None:
        shape = np.shape(arr)
    if len(shape) != 2:
        raise ValueError(f"{name}: argument 'arr' must be 2-D, got shape {tuple(shape)}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """:func:`tril_indices` for ``arr``'s (2-D) shape."""
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """:func:`triu_indices` for ``arr``'s (2-D) shape."""
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """Indices of the main diagonal of an ``ndim``-dimensional array of side ``n``."""
    n, ndim = _index_ints("diag_indices", n=n, ndim=ndim)
    if n < 0:
        raise ValueError(f"diag_indices: argument 'n' must be non-negative, got {n}")
    if ndim < 0:
        raise ValueError(f"diag_indices: argument 'ndim' must be non-negative, got {ndim}")
    return (lax.iota(dtypes.DEFAULT_INT, n),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """:func:`diag_indices` for ``arr`` (all of whose dimensions must be equal, ndim >= 2)."""
    shape = getattr(arr, "shape", None)
    shape = np.shape(arr) if shape is None else tuple(shape)
    if len(shape) < 2:
        raise ValueError("diag_indices_from: argument 'arr' must be at least 2-D")
    if len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: all dimensions of 'arr' must be equal, got "
                         f"{shape}")
    return diag_indices(shape[0], len(shape))


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """Indices where ``mask_func(ones((n, n)), k)`` is non-zero (e.g. ``jnp.triu``)."""
    i, j = nonzero(mask_func(ones((n, n)), k), size=size)
    return i, j


def _mode(name: str, mode: str) -> str:
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"{name}: argument 'mode' must be 'raise', 'wrap' or 'clip', got "
                         f"{mode!r}")
    return mode


def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int],
                      mode: str = "raise", order: str = "C") -> Any:
    """Flat indices of the coordinate arrays ``multi_index`` into an array of shape ``dims``.

    Args:
      multi_index: one integer array per dimension (broadcast together).
      dims: the static shape.
      mode: "raise" (the indices must be concrete and in bounds), "wrap" or "clip".
      order: "C" (row-major) or "F" (column-major).
    """
    _mode("ravel_multi_index", mode)
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: argument 'order' must be 'C' or 'F', got "
                         f"{order!r}")
    dims = tuple(_index_ints("ravel_multi_index", **{f"dims[{i}]": d}
                             )[0] for i, d in enumerate(dims))
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: argument 'multi_index' must have one array per "
                         f"dimension ({len(dims)}), got {len(multi_index)}")
    idx = [asarray(i) for i in multi_index]
    for i in idx:
        if not dtypes.is_integer(aval_of(i).dtype):
            raise TypeError(f"ravel_multi_index: only integer indices are valid, got "
                            f"{aval_of(i).dtype}")
    if mode == "raise":
        for i, d in zip(idx, dims):
            c = i.to_concrete_value() if hasattr(i, "to_concrete_value") else None
            if c is None:
                raise ConcretizationTypeError(
                    "ravel_multi_index: mode='raise' needs concrete indices; use mode='wrap' "
                    "or 'clip' under jit")
            c = np.asarray(c)
            if np.any((c < 0) | (c >= d)):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array "
                                 f"(out of bounds for dimension size {d})")
    idx = [convert(i, dtypes.int32) if aval_of(i).dtype.itemsize < 4 else i for i in idx]
    idx = promote_dtypes("ravel_multi_index", *idx)
    if mode == "wrap":
        idx = [lax.rem(lax.add(lax.rem(i, lax.full_like(i, d)), lax.full_like(i, d)),
                       lax.full_like(i, d)) if d else i for i, d in zip(idx, dims)]
    elif mode == "clip":
        idx = [lax.clamp(lax.full_like(i, 0), i, lax.full_like(i, max(d - 1, 0)))
               for i, d in zip(idx, dims)]
    strides = np.cumprod((1,) + (dims[::-1] if order == "C" else dims)[:-1])
    if order == "C":
        strides = strides[::-1]
    total = None
    for i, s in zip(idx, strides):
        term = lax.mul(i, lax.full_like(i, int(s)))
        total = term if total is None else total + term
    return total if total is not None else asarray(0)


def unravel_index(indices: ArrayLike, shape: Sequence[int]) -> tuple[Any, ...]:
    """Coordinate arrays of the flat ``indices`` into an array of ``shape`` (C order).

    As JAX: negative indices count from the end of the flattened array and out-of-bounds ones
    are clipped into range (never an error).
    """
    idx = asarray(indices)
    if not dtypes.is_integer(aval_of(idx).dtype):
        raise TypeError(f"unravel_index: argument 'indices' must be integer, got "
                        f"{aval_of(idx).dtype}")
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: argument 'shape' must be a scalar or 1-D sequence")
    shape = [operator.index(s) for s in shape]
    out: list[Any] = [0] * len(shape)
    rest = idx
    for i, s in reversed(list(enumerate(shape))):
        rest, out[i] = divmod_(rest, s)
    oob_pos = lax.gt(rest, lax.full_like(rest, 0))
    if aval_of(idx).dtype.kind == "u":
        oob_neg = lax.full_like(rest, False, dtypes.bool_)
    else:
        oob_neg = lax.lt(rest, lax.full_like(rest, -1))
    return tuple(where(oob_pos, s - 1, where(oob_neg, 0, o)) for s, o in zip(shape, out))
