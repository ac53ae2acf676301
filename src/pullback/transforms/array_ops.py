"""The array operations the transforms themselves need, binding primitives directly: making an
Array of data (``asarray``, which pullback.numpy's builds on), filling (``full_like``, which
pullback.lax exports), reshaping, moving axes and converting dtypes. The transforms sit below
pullback.lax and pullback.numpy, so they never call those.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..primitives.conversion import convert_element_type_p
from ..primitives.movement import broadcast_in_dim_p, reshape_p, transpose_p
from ..tracer import core, dtypes
from ..tracer.array import Array


def _python_default(x: np.ndarray) -> np.dtype:
    # Python data takes the default types (32 bits unless x64 is on), as in JAX
    if x.dtype.kind == "f" and x.dtype.itemsize == 8:
        return dtypes.DEFAULT_FLOAT
    if x.dtype.kind in "iu" and x.dtype.itemsize == 8:
        return dtypes.DEFAULT_INT
    if x.dtype.kind == "c":
        return dtypes.DEFAULT_COMPLEX
    return x.dtype


def _contains_numpy(a: Any) -> bool:
    if isinstance(a, (np.ndarray, np.generic)):
        return True
    if isinstance(a, (list, tuple)):
        return any(_contains_numpy(x) for x in a)
    return False


def asarray(a: Any, dtype: Any = None) -> Any:
    """An Array from ``a`` (Array, tracer, NumPy array, scalar or nested sequence of data):
    ``pullback.numpy.asarray`` without its one extra case, a sequence holding traced values
    (which it stacks).

    Args:
      a: the data. Arrays and traced values pass through (converted when ``dtype`` differs).
      dtype: the result dtype; by default NumPy data keeps its dtype and Python data becomes
        float32 / int32 / complex64 / bool (Python scalars are weakly typed).

    Returns:
      An Array (or the traced value, under a transformation).
    """
    want = None if dtype is None else dtypes.requested(dtype, "asarray")
    if isinstance(a, (Array, core.Tracer)):
        if want is None:
            return a
        av = a._aval if type(a) is Array else core.get_aval(a)
        if av.dtype == want and not av.weak_type:
            return a
        return convert_element_type_p.bind(a, new_dtype=want, weak_type=False)
    if a is None:
        raise ValueError("asarray: None is not a valid value for an array")
    if dtypes.is_python_scalar(a):
        dt, weak = dtypes.dtype_of_python(a)
        if type(a) is int and not -2**63 <= a < 2**64:
            raise OverflowError(f"asarray: Python int {a} too large to convert to {want or dt}")
        return Array(np.asarray(a, want or dt), weak and want is None)
    if isinstance(a, (np.ndarray, np.generic)):
        _check_numeric(a.dtype, a)
        # a copy (the caller may mutate their NumPy array later), of the dtype pullback keeps
        return Array(np.array(a, dtype=want or dtypes.canonical(dtypes.canonicalize(a.dtype)),
                              copy=True))
    if hasattr(a, "__jax_array__"):
        return asarray(a.__jax_array__(), dtype)
    v = np.asarray(a)
    if v.dtype == object:
        if all(type(e) is int for e in v.flat):
            raise OverflowError(f"asarray: Python int too large to convert to "
                                f"{want or dtypes.DEFAULT_INT}: {a!r}")
        raise TypeError(f"asarray: cannot make an array from {type(a).__name__} with "
                        "elements of mixed or non-numeric types")
    _check_numeric(v.dtype, a)
    want = want or (dtypes.canonical(dtypes.canonicalize(v.dtype)) if _contains_numpy(a)
                   else _python_default(v))
    dtypes.check_python_ints(v, want)
    return Array(np.asarray(v, dtype=want))


def _check_numeric(dt: np.dtype, a: Any) -> None:
    # strings, bytes and other non-numeric data are not arrays (JAX's TypeError)
    try:
        dtypes.canonicalize(dt)
    except TypeError:
        raise TypeError(f"asarray: value {a!r} with dtype {dt} is not a valid array type: only "
                        "arrays of numeric types are supported") from None


def as_operands(leaves: Sequence[Any]) -> list:
    """Leaves as operands of a primitive: tracers as they are, anything else as an Array."""
    return [x if isinstance(x, core.Tracer) else asarray(x) for x in leaves]


def full_like(x: Any, fill_value: Any, dtype: Any = None,
              shape: Sequence[int] | None = None) -> Any:
    """An array shaped like ``x`` (or ``shape``) filled with ``fill_value``.

    Args:
      x: the array whose shape and dtype (and weak type, when ``dtype`` is None) to take.
      fill_value: a scalar.
      dtype: the result dtype (default: ``x``'s).
      shape: the result shape (default: ``x``'s).

    Returns:
      A zero-copy broadcast of the one value.
    """
    av = core.get_aval(x)
    dt = av.dtype if dtype is None else dtypes.requested(dtype)
    weak = av.weak_type if dtype is None else False
    value = Array(np.asarray(fill_value, dt), weak)
    shape = av.shape if shape is None else tuple(shape)
    return broadcast_in_dim_p.bind(value, shape=shape, broadcast_dimensions=())


def reshape(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` (an array or tracer) reshaped to ``shape`` (itself when it has that shape)."""
    if core.get_aval(x).shape == tuple(shape):
        return x
    return reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None)


def moveaxis(x: Any, source: Sequence[int], destination: Sequence[int]) -> Any:
    """``x`` with its (non-negative) axes ``source`` moved to ``destination``, the others kept
    in order (itself when nothing moves)."""
    nd = core.get_aval(x).ndim
    order = [i for i in range(nd) if i not in source]
    for d, s in sorted(zip(destination, source)):
        order.insert(d, s)
    if order == list(range(nd)):
        return x
    return transpose_p.bind(x, permutation=tuple(order))


def convert(x: Any, dtype: np.dtype) -> Any:
    """Array or tracer ``x`` as ``dtype``, strongly typed (``lax.convert_element_type`` of a
    dtype that is already canonical)."""
    av = core.get_aval(x)
    if (av.dtype, av.weak_type) == (dtype, False) and isinstance(x, Array):
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False)
