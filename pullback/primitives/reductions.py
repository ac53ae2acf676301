"""Reductions over a set of axes (backends/cpu/csrc/reduce.c)."""
from __future__ import annotations

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive
from .rules import AUTODIFF, BATCHING


def _reduce_aval(name: str, x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
    if not isinstance(axes, tuple) or any(not isinstance(a, int) for a in axes):
        raise TypeError(f"{name}: argument 'axes' must be a tuple of ints, got {axes!r}")
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{name}: argument 'axes' must hold distinct axes in [0, {x.ndim}) for "
                         f"an operand of shape {x.shape}, got {axes}")
    if x.dtype == dtypes.bool_:
        raise TypeError(f"{name}: argument 'x' must be a numeric array, got bool")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, x.weak_type)


reduce_sum_p = Primitive("reduce_sum")
reduce_sum_p.abstract_eval = lambda x, *, axes: _reduce_aval("reduce_sum", x, axes=axes)
reduce_sum_p.reference = lambda x, *, axes: np.asarray(np.sum(x, axis=axes, dtype=x.dtype))
reduce_sum_p.cpu = lambda k, x, *, axes: k.reduce_sum(x, axes)
reduce_sum_p.jvp = AUTODIFF
reduce_sum_p.transpose = AUTODIFF
reduce_sum_p.batch = BATCHING
