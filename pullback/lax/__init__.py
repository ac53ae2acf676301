"""``pullback.lax``: the primitive-level operations, with ``jax.lax``'s names and signatures.

lax is strict: operands of one op share a dtype (Python scalars are converted weakly to the
array operand's dtype) and shapes are not broadcast implicitly, except that 0-d operands of
element-wise ops broadcast.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..primitives.dot import dot_general_p
from ..primitives.elementwise import add_p, exp_p, mul_p, neg_p, sin_p
from ..primitives.movement import broadcast_in_dim_p, reshape_p
from ..primitives.reductions import reduce_sum_p
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.shapes import canonicalize_axes

ArrayLike = Any


def _scalars_to(args: Sequence[Any]) -> list[Any]:
    """Python scalars become weakly typed arrays of the array operands' dtype."""
    ref = next((a for a in args if not isinstance(a, (bool, int, float, complex))), None)
    out = []
    for a in args:
        if isinstance(a, (bool, int, float, complex)):
            dt, weak = dtypes.dtype_of_python(a) if ref is None else (core.get_aval(ref).dtype, True)
            a = Array(np.asarray(a, dt), weak)
        out.append(a)
    return out


def add(x: ArrayLike, y: ArrayLike) -> Array:
    """Element-wise ``x + y``."""
    return add_p.bind(*_scalars_to((x, y)))


def mul(x: ArrayLike, y: ArrayLike) -> Array:
    """Element-wise ``x * y``."""
    return mul_p.bind(*_scalars_to((x, y)))


def neg(x: ArrayLike) -> Array:
    """Element-wise ``-x``."""
    return neg_p.bind(*_scalars_to((x,)))


def sin(x: ArrayLike) -> Array:
    """Element-wise sine."""
    return sin_p.bind(*_scalars_to((x,)))


def exp(x: ArrayLike) -> Array:
    """Element-wise ``e ** x``."""
    return exp_p.bind(*_scalars_to((x,)))


def reduce_sum(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Sum of ``operand`` over ``axes``."""
    (operand,) = _scalars_to((operand,))
    axes = canonicalize_axes(tuple(axes), core.get_aval(operand).ndim, "reduce_sum", "axes")
    return reduce_sum_p.bind(operand, axes=axes)


def broadcast_in_dim(operand: ArrayLike, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Array:
    """``operand`` broadcast to ``shape``; operand dimension i becomes dimension
    ``broadcast_dimensions[i]`` of the result."""
    (operand,) = _scalars_to((operand,))
    return broadcast_in_dim_p.bind(operand, shape=tuple(shape),
                                   broadcast_dimensions=tuple(broadcast_dimensions))


def reshape(operand: ArrayLike, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> Array:
    """``operand`` (transposed by ``dimensions`` first, if given) reshaped to ``new_sizes``."""
    (operand,) = _scalars_to((operand,))
    return reshape_p.bind(operand, new_sizes=tuple(new_sizes),
                          dimensions=None if dimensions is None else tuple(dimensions))


def dot_general(lhs: ArrayLike, rhs: ArrayLike, dimension_numbers: Any,
                precision: Any = None, preferred_element_type: Any = None) -> Array:
    """General tensor contraction.

    Args:
      lhs, rhs: the operands, of one dtype.
      dimension_numbers: ``((lhs_contracting_dims, rhs_contracting_dims),
        (lhs_batch_dims, rhs_batch_dims))``.
      precision: accepted for compatibility; the CPU backend always computes in the operand
        precision.
      preferred_element_type: the output dtype (must equal the operands' dtype for now).

    Returns:
      An array with the batch dimensions, then lhs's free dimensions, then rhs's.
    """
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    lhs, rhs = _scalars_to((lhs, rhs))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=None,
                              preferred_element_type=preferred_element_type)
