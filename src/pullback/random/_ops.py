"""Small building blocks the samplers share: constants, explicit broadcasting, slicing one
index off the leading axis, ``take`` along an axis.

pullback.lax is strict (operands share a shape, except 0-d ones), so every sampler broadcasts
its parameters to the sample shape explicitly; that changes no value relative to JAX's
implicit broadcasting.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from .. import lax
from .. import numpy as pnp
from ..tracer import core, dtypes
from ..tracer.array import Array

UINT = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def finfo(dtype: np.dtype) -> Any:
    return ml_dtypes.finfo(dtype)


def const(value: Any, dtype: Any) -> Array:
    """A strongly typed constant of ``dtype``."""
    return Array(np.asarray(value).astype(dtype))


def is_python_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def shape_of(x: Any) -> tuple[int, ...]:
    return () if is_python_scalar(x) else tuple(core.get_aval(x).shape)


def as_value(x: Any) -> Any:
    """Arrays and traced values pass; NumPy data and Python sequences become Arrays."""
    if isinstance(x, (Array, core.Tracer)):
        return x
    if isinstance(x, (np.ndarray, np.generic)):  # np.float64 is a Python float subclass
        return Array(np.array(x))  # a copy: the caller may write theirs later
    return pnp.asarray(x)


def param(x: Any, dtype: np.dtype) -> Any:
    """A sampler parameter (minval, p, ...) in ``dtype``.

    A Python scalar becomes the value JAX gets for it: rounded to float32 first (JAX's default
    32-bit mode), except for float64 samples (JAX's x64 mode, where it is a float64).
    """
    if is_python_scalar(x):
        via = np.float64 if dtype == dtypes.float64 or not dtypes.is_float(dtype) else np.float32
        return const(np.asarray(x, via), dtype)
    x = as_value(x)
    return x if x.dtype == dtype else lax.convert_element_type(x, dtype)


def broadcast(x: Any, shape: tuple[int, ...], keep_scalar: bool = True) -> Any:
    """``x`` broadcast (NumPy's rule, trailing-aligned) to ``shape``; 0-d values stay 0-d
    (which every element-wise lax op accepts) unless ``keep_scalar`` is False."""
    xs = shape_of(x)
    if xs == tuple(shape) or (not xs and keep_scalar):
        return x
    return lax.broadcast_in_dim(x, shape, tuple(range(len(shape) - len(xs), len(shape))))


def index0(x: Any, i: int) -> Any:
    """``x[i]`` along the leading axis."""
    shape = shape_of(x)
    start = (i,) + (0,) * (len(shape) - 1)
    limit = (i + 1,) + shape[1:]
    return lax.reshape(lax.slice(x, start, limit), shape[1:])


def take(arr: Any, ind: Any, axis: int) -> Any:
    """``jnp.take(arr, ind, axis)`` for in-range indices: a gather of whole slices."""
    shape, ishape = shape_of(arr), shape_of(ind)
    nd = len(shape)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + len(ishape), nd - 1 + len(ishape))),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    slice_sizes = shape[:axis] + (1,) + shape[axis + 1:]
    return lax.gather(arr, lax.reshape(ind, ishape + (1,)), dnums, slice_sizes, mode="clip")
