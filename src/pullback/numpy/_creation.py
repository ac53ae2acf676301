"""Array creation: from data, filled, arange, grids, eye and tri (spaced ranges are in
_ranges.py, triangles and diagonals of other arrays in _matrices.py)."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from ..primitives.movement import broadcast_in_dim_p
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.errors import ConcretizationTypeError
from ..tracer.shapes import check_shape, index_arg
from ..transforms import array_ops
from ._promotion import convert
from ._shape import broadcast_to, ravel, reshape, stack

ArrayLike = Any


def asarray(a: Any, dtype: Any = None, order: str | None = None, *,
            copy: bool | None = None) -> Any:
    """An Array from ``a`` (Array, tracer, NumPy array, scalar or nested sequence).

    Args:
      a: the data. Arrays and traced values pass through (converted when ``dtype`` differs).
      dtype: the result dtype; by default NumPy data keeps its dtype and Python data becomes
        float32 / int32 / complex64 / bool (Python scalars are weakly typed).
      order: accepted for NumPy compatibility ("C" or None).
      copy: accepted for NumPy compatibility; Arrays are immutable, so never observable.

    Returns:
      An Array (or the traced value, under a transformation).
    """
    if isinstance(a, (list, tuple)) and any(isinstance(x, (Array, core.Tracer)) or
                                            (isinstance(x, (list, tuple)) and _has_traced(x))
                                            for x in a):
        return stack([asarray(x, dtype) for x in a])
    return array_ops.asarray(a, dtype)


def _has_traced(x: Any) -> bool:
    if isinstance(x, (Array, core.Tracer)):
        return True
    return isinstance(x, (list, tuple)) and any(_has_traced(y) for y in x)


def array(object: Any, dtype: Any = None, copy: bool = True, order: str | None = "K",  # noqa: A002
          ndmin: int = 0) -> Any:
    """An Array holding ``object``'s data (see :func:`asarray`), with at least ``ndmin`` dims."""
    out = asarray(object, dtype=dtype)
    nd = core.get_aval(out).ndim
    if ndmin > nd:
        out = reshape(out, (1,) * (ndmin - nd) + core.get_aval(out).shape)
    return out


def copy(a: ArrayLike, order: str | None = None) -> Any:
    """A copy of ``a`` (Arrays are immutable, so the same values)."""
    return asarray(a)


def full(shape: Any, fill_value: ArrayLike, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (a zero-copy broadcast of one value).

    ``fill_value`` may also be an array broadcastable to ``shape``. Without ``dtype`` the
    result keeps ``fill_value``'s weak type (``full(3, 2.5)`` is weakly typed), as in JAX.
    """
    return _full(check_shape(shape, "full"), fill_value, dtype, None)


def _full(shape: tuple, fill_value: Any, dtype: Any, weak: bool | None) -> Any:
    """``full`` on a checked shape; ``weak`` (if not None) is the result's weak type, as
    JAX's ``lax.full(..., weak_type=)`` (``full_like`` takes it from its model array)."""
    if dtype is not None and dtypes.is_python_scalar(fill_value):
        # a Python fill value converts as a weak scalar does (JAX: full(2, 300, int8) wraps)
        v = Array(dtypes.weak_scalar(fill_value, dtypes.requested(dtype, "full")), bool(weak))
    else:
        v = asarray(fill_value, dtype=dtype)
        if weak is not None:
            v = convert(v, core.get_aval(v).dtype, weak)
    av = core.get_aval(v)
    if av.ndim:
        return broadcast_to(v, shape)
    return broadcast_in_dim_p.bind(v, shape=shape, broadcast_dimensions=())


def zeros(shape: Any, dtype: Any = None) -> Any:
    """An array of zeros (float32 by default)."""
    return full(shape, 0, dtypes.requested(dtype or float, "zeros"))


def ones(shape: Any, dtype: Any = None) -> Any:
    """An array of ones (float32 by default)."""
    return full(shape, 1, dtypes.requested(dtype or float, "ones"))


def empty(shape: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` (zeros: pullback arrays are never uninitialized)."""
    return zeros(shape, dtype)


def _like(name: str, a: Any, dtype: Any, shape: Any) -> tuple[tuple, np.dtype, bool]:
    av = core.get_aval(asarray(a))
    # without dtype the result keeps a's weak type (zeros_like(1.5) is weak), as in JAX
    return (av.shape if shape is None else check_shape(shape, name),
            av.dtype if dtype is None else dtypes.requested(dtype, name),
            dtype is None and av.weak_type)


def full_like(a: ArrayLike, fill_value: ArrayLike, dtype: Any = None, shape: Any = None) -> Any:
    """An array like ``a`` (its shape and dtype unless given) filled with ``fill_value``;
    weakly typed when ``a`` is and no ``dtype`` is given, as in JAX."""
    shape, dt, weak = _like("full_like", a, dtype, shape)
    return _full(shape, fill_value, dt, weak)


def zeros_like(a: ArrayLike, dtype: Any = None, shape: Any = None) -> Any:
    """Zeros with ``a``'s shape, dtype and weak type (see :func:`full_like`)."""
    return full_like(a, 0, dtype, shape)


def ones_like(a: ArrayLike, dtype: Any = None, shape: Any = None) -> Any:
    """Ones with ``a``'s shape, dtype and weak type (see :func:`full_like`)."""
    return full_like(a, 1, dtype, shape)


def empty_like(a: ArrayLike, dtype: Any = None, shape: Any = None) -> Any:
    """Zeros with ``a``'s shape, dtype and weak type (see :func:`full_like`)."""
    return zeros_like(a, dtype, shape)


# ---- ranges ----

def _static_number(x: Any, name: str, arg: str) -> Any:
    if isinstance(x, core.Tracer):
        raise ConcretizationTypeError(
            f"{name}: argument '{arg}' must be a concrete number (the output size depends on "
            "it); mark it static under jit")
    return x.item() if isinstance(x, (Array, np.ndarray, np.generic)) else x


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """Evenly spaced values in [start, stop) with spacing ``step``, as NumPy.

    Integers give int32 and floats float32 by default; ``start``/``stop``/``step`` must be
    concrete (the length depends on them).
    """
    start = _static_number(start, "arange", "start")
    stop = None if stop is None else _static_number(stop, "arange", "stop")
    step = None if step is None else _static_number(step, "arange", "step")
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("arange: argument 'step' must not be zero")
    n = max(int(math.ceil((stop - start) / step)), 0)
    if dtype is None:
        is_float = any(isinstance(v, float) or (isinstance(v, np.floating))
                       for v in (start, stop, step))
        dt = dtypes.DEFAULT_FLOAT if is_float else dtypes.DEFAULT_INT
    else:
        dt = dtypes.requested(dtype, "arange")
    i = lax.iota(dt, n)
    if step != 1:
        i = lax.mul(i, lax.full_like(i, step))
    if start != 0:
        i = lax.add(i, lax.full_like(i, start))
    return i


# ---- matrices ----

def _tri_mask(n: int, m: int, k: int) -> Any:
    rows = lax.broadcasted_iota(dtypes.int32, (n, m), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, m), 1)
    return lax.ge(lax.add(rows, lax.full_like(rows, k)), cols)


def _matrix_dims(name: str, N: Any, M: Any) -> tuple[int, int]:
    n = index_arg(N, name, "N")
    m = n if M is None else index_arg(M, name, "M")
    return check_shape((n, m), name, "N, M")


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """A 2-D array with ones on the ``k``-th diagonal, zeros elsewhere."""
    N, M = _matrix_dims("eye", N, M)
    k = index_arg(k, "eye", "k")
    rows = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    mask = lax.eq(lax.add(rows, lax.full_like(rows, k)), cols)
    return convert(mask, dtypes.requested(dtype or float, "eye"))


def identity(n: int, dtype: Any = None) -> Any:
    """The ``n`` x ``n`` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """Ones at and below the ``k``-th diagonal."""
    N, M = _matrix_dims("tri", N, M)
    return convert(_tri_mask(N, M, index_arg(k, "tri", "k")), dtypes.requested(dtype or float, "tri"))


def meshgrid(*xi: ArrayLike, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Any]:
    """Coordinate matrices from coordinate vectors ("xy" Cartesian or "ij" matrix indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: argument 'indexing' must be 'xy' or 'ij', got {indexing!r}")
    xs = [ravel(asarray(x)) for x in xi]
    n = len(xs)
    shape = [core.get_aval(x).shape[0] for x in xs]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        s = [1] * n
        s[pos] = core.get_aval(x).shape[0]
        g = reshape(x, tuple(s))
        out.append(g if sparse else broadcast_to(g, tuple(shape)))
    return out


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """The grid of indices of an array of shape ``dimensions`` (stacked, or a sparse tuple)."""
    dims = check_shape(dimensions, "indices")
    dt = dtypes.requested(dtype or int)
    grids = []
    for i, d in enumerate(dims):
        if sparse:
            s = [1] * len(dims)
            s[i] = d
            grids.append(lax.broadcasted_iota(dt, tuple(s), i))
        else:
            grids.append(lax.broadcasted_iota(dt, dims, i))
    return tuple(grids) if sparse else stack(grids) if grids else zeros((0,), dt)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An Array over the memory of any DLPack producer (a NumPy array, a PyTorch CPU tensor,
    another Array, ...): zero-copy unless ``copy=True``."""
    v = np.from_dlpack(x)
    dtypes.canonicalize(v.dtype)
    return Array(np.array(v, copy=True) if copy else v)
