"""Movement primitives: zero-copy views where the strides allow (seed 001), a copy otherwise."""
from __future__ import annotations

import math

import numpy as np

from ..tracer import strides as views
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive
from ..tracer.shapes import check_shape
from .rules import AUTODIFF, BATCHING


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


broadcast_in_dim_p = Primitive("broadcast_in_dim")
broadcast_in_dim_p.abstract_eval = _broadcast_in_dim_aval
broadcast_in_dim_p.reference = _broadcast_in_dim_ref
broadcast_in_dim_p.cpu = lambda k, x, *, shape, broadcast_dimensions: k.view(
    x, *views.broadcast_in_dim(x.shape, x.strides, shape, broadcast_dimensions))
broadcast_in_dim_p.jvp = AUTODIFF
broadcast_in_dim_p.transpose = AUTODIFF
broadcast_in_dim_p.batch = BATCHING


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
reshape_p.jvp = AUTODIFF
reshape_p.transpose = AUTODIFF
reshape_p.batch = BATCHING
