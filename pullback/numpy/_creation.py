"""Array creation from Python and NumPy data."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tracer import core, dtypes
from ..tracer.array import Array


def _python_default(x: np.ndarray) -> np.dtype:
    # Python data defaults to 32-bit types (JAX's defaults); NumPy data keeps its dtype.
    return {"f": dtypes.DEFAULT_FLOAT, "i": dtypes.DEFAULT_INT,
            "c": dtypes.DEFAULT_COMPLEX}.get(x.dtype.kind, x.dtype) if x.dtype.itemsize == 8 or \
        x.dtype.kind == "c" else x.dtype


def asarray(a: Any, dtype: Any = None, copy: bool | None = None) -> Any:
    """An Array from ``a`` (Array, tracer, NumPy array, scalar or nested sequence).

    Args:
      a: the data. Arrays and traced values pass through unchanged (when ``dtype`` matches).
      dtype: the result dtype; by default NumPy data keeps its dtype and Python data becomes
        float32 / int32 / complex64 / bool.
      copy: accepted for NumPy compatibility; Arrays are immutable, so never observable.

    Returns:
      An Array (or the traced value, under a transformation).
    """
    want = None if dtype is None else dtypes.canonicalize(dtype)
    if isinstance(a, (Array, core.Tracer)):
        if want is None or want == a.dtype:
            return a
        raise TypeError("asarray: converting between dtypes needs convert_element_type "
                        "(issue 3)")
    if isinstance(a, (bool, int, float, complex)):
        dt, weak = dtypes.dtype_of_python(a)
        return Array(np.asarray(a, want or dt), weak and want is None)
    if isinstance(a, (np.ndarray, np.generic)):
        v = np.array(a, dtype=want, copy=True)  # the caller may mutate their NumPy array later
        dtypes.canonicalize(v.dtype)
        return Array(v)
    v = np.asarray(a)
    if v.dtype == object:
        raise TypeError(f"asarray: cannot make an array from {type(a).__name__} with "
                        "elements of mixed or non-numeric types")
    return Array(np.asarray(v, dtype=want or _python_default(v)))


def array(object: Any, dtype: Any = None, copy: bool = True) -> Any:
    """An Array holding ``object``'s data; see :func:`asarray`."""
    return asarray(object, dtype=dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (a zero-copy broadcast of one value)."""
    from ..primitives.movement import broadcast_in_dim_p
    from ..tracer.shapes import check_shape
    shape = check_shape((shape,) if isinstance(shape, int) else shape, "full")
    v = asarray(fill_value, dtype=dtype)
    if isinstance(v, Array) and v.weak_type:
        v = Array(v._value, False)
    if core.get_aval(v).ndim:
        raise ValueError("full: argument 'fill_value' must be a scalar")
    return broadcast_in_dim_p.bind(v, shape=shape, broadcast_dimensions=())


def zeros(shape: Any, dtype: Any = None) -> Any:
    """An array of zeros (float32 by default)."""
    return full(shape, 0, dtypes.canonicalize(dtype or float))


def ones(shape: Any, dtype: Any = None) -> Any:
    """An array of ones (float32 by default)."""
    return full(shape, 1, dtypes.canonicalize(dtype or float))
