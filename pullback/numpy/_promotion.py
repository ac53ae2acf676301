"""Dtype promotion and shape broadcasting of operands: the one place jnp functions prepare
their arguments before binding a primitive."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives.movement import broadcast_in_dim_p
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.shapes import broadcast_shapes


def promote_args(op: str, *args: Any) -> list[Any]:
    """Operands converted to their common dtype (JAX's lattice) and broadcast to their
    common shape (0-d operands stay 0-d: element-wise primitives broadcast them)."""
    return broadcast_args(op, *promote_dtypes(op, *args))


def promote_dtypes(op: str, *args: Any) -> list[Any]:
    """Operands converted to their common dtype (JAX's lattice); Python scalars become weakly
    typed arrays."""
    avals = [core.get_aval(a) for a in args]
    dt, weak = dtypes.promote(tuple((a.dtype, a.weak_type) for a in avals))
    out = []
    for a, av in zip(args, avals):
        if isinstance(a, (bool, int, float, complex, np.generic, np.ndarray)):
            a = Array(np.asarray(a, dt), weak)
        elif av.dtype != dt:
            raise TypeError(f"{op}: operands of dtypes {', '.join(str(x.dtype) for x in avals)} "
                            "need convert_element_type (issue 3)")
        out.append(a)
    return out


def broadcast_args(op: str, *args: Any) -> list[Any]:
    """Operands broadcast to their common shape, except 0-d ones."""
    out = list(args)
    avals = [core.get_aval(a) for a in args]
    shapes = [av.shape for av in avals if av.ndim]
    if shapes and any(s != shapes[0] for s in shapes):
        target = broadcast_shapes(*shapes, op=op)
        out = [broadcast_to_shape(a, av.shape, target) if av.ndim else a
               for a, av in zip(out, avals)]
    return out


def broadcast_to_shape(x: Any, shape: tuple[int, ...], target: tuple[int, ...]) -> Any:
    if shape == target:
        return x
    dims = tuple(range(len(target) - len(shape), len(target)))
    return broadcast_in_dim_p.bind(x, shape=target, broadcast_dimensions=dims)
