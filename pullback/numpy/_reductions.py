"""Reductions."""
from __future__ import annotations

from typing import Any

from ..primitives.reductions import reduce_sum_p
from ..tracer import core
from ..tracer.shapes import canonicalize_axes
from ._promotion import promote_args
from ._shape import reshape


def sum(a: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
        keepdims: bool = False) -> Any:
    """Sum of array elements over ``axis`` (all axes by default)."""
    (a,) = promote_args("sum", a)
    aval = core.get_aval(a)
    axes = canonicalize_axes(axis, aval.ndim, "sum")
    out = reduce_sum_p.bind(a, axes=axes)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(aval.shape)))
    return out
