"""Contractions."""
from __future__ import annotations

import enum
from typing import Any

from ..primitives.conversion import check_dtype
from ..primitives.dot import dot_general_p, parse_dimension_numbers
from ..tracer import dtypes
from ._operands import ArrayLike, scalars_to

__all__ = ["dot_general", "Precision", "DotAlgorithmPreset"]


class Precision(enum.Enum):
    """The precision of a contraction's operands on accelerators (``jax.lax.Precision``).
    Accepted everywhere a ``precision=`` argument is; on the CPU every float32 product is
    computed in float32 whatever the precision (as XLA's CPU backend does)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> "Precision | None":
        return _PRECISION_STRINGS.get(value)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_STRINGS = {"highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
                      "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH,
                      "tensorfloat32": Precision.HIGH, "default": Precision.DEFAULT,
                      "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT}


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (``jax.lax.DotAlgorithmPreset``), accepted as a ``precision``; no
    effect on the CPU (see Precision)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


def canonicalize_precision(precision: Any, fn: str) -> Any:
    """``precision`` (the argument of ``fn``) as JAX canonicalizes it: None, a pair of
    Precision values or a DotAlgorithmPreset; a ValueError with JAX's wording otherwise."""
    if precision is None:
        return None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            return Precision(precision), Precision(precision)
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
    elif isinstance(precision, Precision):
        return precision, precision
    elif isinstance(precision, DotAlgorithmPreset):
        return precision
    elif isinstance(precision, (list, tuple)) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return tuple(precision)
        if all(isinstance(p, str) and p in _PRECISION_STRINGS for p in precision):
            return tuple(Precision(p) for p in precision)
    raise ValueError(
        f"{fn}: Precision argument must be one of:\n"
        "- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n"
        "- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets;\n"
        f"but got {precision}.")


def dot_general(lhs: ArrayLike, rhs: ArrayLike, dimension_numbers: Any,
                precision: Any = None, preferred_element_type: Any = None) -> Any:
    """General tensor contraction.

    Args:
      lhs, rhs: the operands (not bool). Their dtypes may differ: the result then has the wider
        one, as in JAX.
      dimension_numbers: ``((lhs_contracting_dims, rhs_contracting_dims),
        (lhs_batch_dims, rhs_batch_dims))``.
      precision: None, a ``Precision`` (or its string), a pair of them, or a
        ``DotAlgorithmPreset``, as in JAX (checked); the CPU backend always computes in the
        accumulation precision described below.
      preferred_element_type: the result dtype, which also sets the accumulation: e.g.
        int8 x int8 -> int32, float16 x float16 -> float32. By default integers accumulate in
        the result's width (wrapping), float16/bfloat16/float8 in float32 (rounded once to the
        result), float32/float64/complex in their own precision.

    Returns:
      An array with the batch dimensions, then lhs's free dimensions, then rhs's.
    """
    canonicalize_precision(precision, "dot_general")
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
