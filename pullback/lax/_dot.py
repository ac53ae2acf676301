"""Contractions."""
from __future__ import annotations

from typing import Any, Sequence

from ..primitives.dot import dot_general_p
from ..tracer.array import Array
from ._operands import ArrayLike, scalars_to

__all__ = ["dot_general"]


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
    lhs, rhs = scalars_to((lhs, rhs))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=None,
                              preferred_element_type=preferred_element_type)
