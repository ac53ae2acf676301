"""Reductions."""
from __future__ import annotations

from typing import Any, Sequence

from ..primitives.reductions import reduce_sum_p
from ..tracer import core
from ..tracer.array import Array
from ..tracer.shapes import canonicalize_axes
from ._operands import ArrayLike, scalars_to

__all__ = ["reduce_sum"]


def reduce_sum(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Sum of ``operand`` over ``axes``."""
    (operand,) = scalars_to((operand,))
    axes = canonicalize_axes(tuple(axes), core.get_aval(operand).ndim, "reduce_sum", "axes")
    return reduce_sum_p.bind(operand, axes=axes)
