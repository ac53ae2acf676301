"""Argument checks shared by the samplers: shapes, dtypes, broadcasting against ``shape``."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..tracer import dtypes
from ..tracer.shapes import broadcast_shapes, check_shape


def canonicalize_shape(name: str, shape: Any, arg: str = "shape") -> tuple[int, ...]:
    """A tuple of non-negative ints from an integer or a sequence of them (as JAX's samplers
    take ``shape``); a TypeError naming ``name`` and ``arg`` for anything else."""
    return check_shape(shape, name, arg)


def user_dtype(name: str, dtype: Any) -> np.dtype:
    """``dtype`` canonicalized; a TypeError naming ``name`` if pullback lacks it."""
    try:
        return dtypes.requested(dtype)
    except TypeError as e:
        raise TypeError(f"{name}: argument 'dtype': {e}") from None


def float_dtype(name: str, dtype: Any) -> np.dtype:
    """A floating dtype for a sampler (float32 by default), else JAX's ValueError."""
    dt = user_dtype(name, float if dtype is None else dtype)
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt


def check_broadcast(name: str, shape: tuple[int, ...], *param_shapes: Sequence[int]) -> None:
    """JAX's rule: parameter shapes broadcast with ``shape`` to exactly ``shape``."""
    if not param_shapes:
        return
    try:
        result = broadcast_shapes(shape, *param_shapes, op=name)
    except ValueError:
        result = None
    if result != tuple(shape):
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                         "argument, and the result of broadcasting the shapes must equal the "
                         f"shape argument, but got result {result} for shape argument {shape}.")


def shape_or_broadcast(name: str, shape: Any, *param_shapes: Sequence[int]) -> tuple[int, ...]:
    """``shape`` checked against the parameters', or (None) their broadcast shape."""
    if shape is None:
        return broadcast_shapes(*param_shapes, op=name) if param_shapes else ()
    shape = canonicalize_shape(name, shape)
    check_broadcast(name, shape, *param_shapes)
    return shape
