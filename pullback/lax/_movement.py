"""Movement: broadcasting, reshaping, slicing, padding, concatenation."""
from __future__ import annotations

from typing import Any, Sequence

from ..primitives.movement import broadcast_in_dim_p, reshape_p
from ..tracer.array import Array
from ._operands import ArrayLike, scalars_to

__all__ = ["broadcast_in_dim", "reshape"]


def broadcast_in_dim(operand: ArrayLike, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Array:
    """``operand`` broadcast to ``shape``; operand dimension i becomes dimension
    ``broadcast_dimensions[i]`` of the result."""
    (operand,) = scalars_to((operand,))
    return broadcast_in_dim_p.bind(operand, shape=tuple(shape),
                                   broadcast_dimensions=tuple(broadcast_dimensions))


def reshape(operand: ArrayLike, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> Array:
    """``operand`` (transposed by ``dimensions`` first, if given) reshaped to ``new_sizes``."""
    (operand,) = scalars_to((operand,))
    return reshape_p.bind(operand, new_sizes=tuple(new_sizes),
                          dimensions=None if dimensions is None else tuple(dimensions))
