"""Element-wise functions (NumPy ufuncs) with NumPy broadcasting and JAX's type promotion."""
from __future__ import annotations

from typing import Any

from ..primitives.elementwise import add_p, exp_p, mul_p, neg_p, sin_p
from ._promotion import promote_args


def add(x: Any, y: Any, /) -> Any:
    """Element-wise ``x + y`` with broadcasting."""
    return add_p.bind(*promote_args("add", x, y))


def multiply(x: Any, y: Any, /) -> Any:
    """Element-wise ``x * y`` with broadcasting."""
    return mul_p.bind(*promote_args("multiply", x, y))


def negative(x: Any, /) -> Any:
    """Element-wise ``-x``."""
    return neg_p.bind(*promote_args("negative", x))


def sin(x: Any, /) -> Any:
    """Element-wise sine."""
    return sin_p.bind(*promote_args("sin", x))


def exp(x: Any, /) -> Any:
    """Element-wise exponential."""
    return exp_p.bind(*promote_args("exp", x))
