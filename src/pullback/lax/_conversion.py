"""Dtype conversion: convert_element_type, bitcast_convert_type."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..primitives.conversion import bitcast_convert_type_p, check_dtype, convert_element_type_p
from ..tracer import core, dtypes
from ..tracer.array import Array
from ._operands import ArrayLike

__all__ = ["bitcast_convert_type", "convert_element_type"]


def _python_scalar(op: str, x: Any) -> Array:
    """A weakly typed Array of a Python scalar; ints too wide for int32 take int64 or uint64
    (the conversion may well fit, as in ``convert_element_type(2**40, float32)``)."""
    dt, weak = dtypes.dtype_of_python(x)
    if dt == dtypes.int32 and not -2**31 <= x < 2**31:
        if not -2**63 <= x < 2**64:
            raise OverflowError(f"{op}: argument 'operand' {x} does not fit in 64 bits")
        dt = dtypes.int64 if x < 2**63 else dtypes.uint64
    return Array(np.asarray(x, dt), weak)


def _target(op: str, new_dtype: Any) -> np.dtype:
    # Python's int/float/complex mean JAX's 32-bit defaults (compared by identity: a NumPy
    # dtype compares equal to the Python type it can be made from)
    if any(new_dtype is t for t in (int, float, complex)):
        return dtypes.requested(new_dtype)
    return dtypes.requested(check_dtype(op, "new_dtype", new_dtype), op)


def _convert_element_type(operand: ArrayLike, new_dtype: Any, weak_type: bool = False) -> Any:
    """convert_element_type with control of the result's weak type (for pullback.numpy, which
    converts Python scalars weakly)."""
    new = _target("convert_element_type", new_dtype)
    if dtypes.is_python_scalar(operand):
        operand = _python_scalar("convert_element_type", operand)
    aval = core.get_aval(operand)
    if dtypes.is_complex(aval.dtype) and not dtypes.is_complex(new):
        warnings.warn("convert_element_type: casting complex values to real discards the "
                      "imaginary part", np.exceptions.ComplexWarning, stacklevel=3)
    if (aval.dtype, aval.weak_type) == (new, bool(weak_type)) and isinstance(operand, Array):
        return operand
    return convert_element_type_p.bind(operand, new_dtype=new, weak_type=bool(weak_type))


def convert_element_type(operand: ArrayLike, new_dtype: Any) -> Any:
    """Elementwise conversion of ``operand``'s values to ``new_dtype``.

    Float to integer truncates toward zero, saturates out-of-range values and infinities and
    maps NaN to 0; narrowing integer conversions wrap; complex to real keeps the real part (with
    a ComplexWarning); conversions to bfloat16 and float8 round through float32. See
    ``pullback.primitives.conversion`` for the full rules.

    Args:
      operand: an array or scalar.
      new_dtype: the target dtype (any dtype pullback supports; Python ``int``/``float``/
        ``complex`` mean int32/float32/complex64).

    Returns:
      An array of ``operand``'s shape and dtype ``new_dtype``, not weakly typed.
    """
    return _convert_element_type(operand, new_dtype, weak_type=False)


def bitcast_convert_type(operand: ArrayLike, new_dtype: Any) -> Any:
    """Reinterprets the bytes of each element of ``operand`` as ``new_dtype``.

    With equal widths the shape is kept; converting to a narrower dtype appends a trailing
    dimension holding each element's parts in memory (little-endian) order; converting to a
    wider dtype consumes a trailing dimension of exactly the width ratio. bool and complex
    operands can only be bitcast to their own dtype. The result shares ``operand``'s memory
    whenever its layout allows.

    Args:
      operand: an array.
      new_dtype: the dtype to view the bytes as.

    Returns:
      An array of dtype ``new_dtype``.
    """
    new = _target("bitcast_convert_type", new_dtype)
    if dtypes.is_python_scalar(operand):
        operand = _python_scalar("bitcast_convert_type", operand)
    return bitcast_convert_type_p.bind(operand, new_dtype=new)
