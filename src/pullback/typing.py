"""``pullback.typing``, as ``jax.typing``: annotations for array-like arguments and dtypes."""
from __future__ import annotations

from typing import Any as _Any, Protocol as _Protocol, Union as _Union

import numpy as _np

from .tracer.array import Array as _Array


class _SupportsDType(_Protocol):
    @property
    def dtype(self) -> _np.dtype: ...


# What pullback.numpy functions accept as an array: an Array (or tracer), a NumPy array or
# scalar, or a Python scalar.
ArrayLike = _Union[_Array, _np.ndarray, _np.bool_, _np.number, bool, int, float, complex]
# What they accept as a dtype: a name, a scalar type, a NumPy dtype or anything with .dtype.
DTypeLike = _Union[str, type[_Any], _np.dtype, _SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]


def __dir__() -> list[str]:
    return sorted(__all__)
