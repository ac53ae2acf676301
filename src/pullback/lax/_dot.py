"""Contractions."""
from __future__ import annotations

from typing import Any

from ..primitives.conversion import check_dtype
from ..primitives.dot import dot_general_p, parse_dimension_numbers
from ..tracer import dtypes
from ._operands import ArrayLike, scalars_to

__all__ = ["dot_general"]


def dot_general(lhs: ArrayLike, rhs: ArrayLike, dimension_numbers: Any,
                precision: Any = None, preferred_element_type: Any = None) -> Any:
    """General tensor contraction.

    Args:
      lhs, rhs: the operands (not bool). Their dtypes may differ: the result then has the wider
        one, as in JAX.
      dimension_numbers: ``((lhs_contracting_dims, rhs_contracting_dims),
        (lhs_batch_dims, rhs_batch_dims))``.
      precision: accepted for compatibility; the CPU backend always computes in the
        accumulation precision described below.
      preferred_element_type: the result dtype, which also sets the accumulation: e.g.
        int8 x int8 -> int32, float16 x float16 -> float32. By default integers accumulate in
        the result's width (wrapping), float16/bfloat16/float8 in float32 (rounded once to the
        result), float32/float64/complex in their own precision.

    Returns:
      An array with the batch dimensions, then lhs's free dimensions, then rhs's.
    """
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    dn = ((lc, rc), (lb, rb))
    if preferred_element_type is not None:
        preferred_element_type = (
            dtypes.requested(preferred_element_type)
            if any(preferred_element_type is t for t in (int, float, complex))
            else check_dtype("dot_general", "preferred_element_type", preferred_element_type))
    lhs, rhs = scalars_to((lhs, rhs))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=None,
                              preferred_element_type=preferred_element_type)
