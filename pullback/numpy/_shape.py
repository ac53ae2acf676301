"""Shape manipulation."""
from __future__ import annotations

import math
from typing import Any, Sequence

from ..primitives.movement import reshape_p
from ..tracer import core
from ..tracer.shapes import broadcast_shapes, check_shape
from ._promotion import broadcast_to_shape, promote_args


def reshape(a: Any, shape: int | Sequence[int], order: str = "C") -> Any:
    """``a`` with a new shape (one dimension may be -1)."""
    if order != "C":
        raise ValueError(f"reshape: argument 'order' must be 'C', got {order!r}")
    (a,) = promote_args("reshape", a)
    aval = core.get_aval(a)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if sum(1 for d in shape if d == -1) > 1:
        raise ValueError(f"reshape: argument 'shape' may have at most one -1, got {shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or aval.size % known:
            raise TypeError(f"reshape: cannot reshape an array of shape {aval.shape} into "
                            f"shape {shape}")
        shape = tuple(aval.size // known if d == -1 else d for d in shape)
    shape = check_shape(shape, "reshape")
    if shape == aval.shape:
        return a
    return reshape_p.bind(a, new_sizes=shape, dimensions=None)


def broadcast_to(array: Any, shape: Sequence[int]) -> Any:
    """``array`` broadcast to ``shape`` with NumPy's rules."""
    (array,) = promote_args("broadcast_to", array)
    aval = core.get_aval(array)
    shape = check_shape((shape,) if isinstance(shape, int) else shape, "broadcast_to")
    if broadcast_shapes(aval.shape, shape, op="broadcast_to") != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {aval.shape} to {shape}")
    return broadcast_to_shape(array, aval.shape, shape)
