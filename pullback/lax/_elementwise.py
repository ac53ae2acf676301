"""Element-wise lax operations."""
from __future__ import annotations

from typing import Any, Sequence

from ..primitives.elementwise import add_p, exp_p, mul_p, neg_p, sin_p
from ..tracer.array import Array
from ._operands import ArrayLike, scalars_to

__all__ = ["add", "mul", "neg", "sin", "exp"]


def add(x: ArrayLike, y: ArrayLike) -> Array:
    """Element-wise ``x + y``."""
    return add_p.bind(*scalars_to((x, y)))


def mul(x: ArrayLike, y: ArrayLike) -> Array:
    """Element-wise ``x * y``."""
    return mul_p.bind(*scalars_to((x, y)))


def neg(x: ArrayLike) -> Array:
    """Element-wise ``-x``."""
    return neg_p.bind(*scalars_to((x,)))


def sin(x: ArrayLike) -> Array:
    """Element-wise sine."""
    return sin_p.bind(*scalars_to((x,)))


def exp(x: ArrayLike) -> Array:
    """Element-wise ``e ** x``."""
    return exp_p.bind(*scalars_to((x,)))
