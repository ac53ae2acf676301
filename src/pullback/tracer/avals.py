"""Abstract values: what a trace knows of a value (shape, dtype, weak type), never its data."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import dtypes
from .shapes import check_size


class ShapedArray:
    """The abstract value of an array: its shape, dtype and whether its dtype is weak.

    Args:
      shape: a tuple of non-negative ints.
      dtype: a NumPy dtype.
      weak_type: True for values that came from Python scalars and give way to the dtype of
        the arrays they are combined with.
    """

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, weak_type: bool = False):
        self.shape = shape
        self.dtype = dtype
        self.weak_type = weak_type
        self._hash = hash((shape, dtype, weak_type))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, shape: tuple[int, ...] | None = None, dtype: np.dtype | None = None,
               weak_type: bool | None = None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> "ShapedArray":
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def __eq__(self, other: Any) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return self._hash

    def str_short(self) -> str:
        """``f32[3,4]``: the form Jaxprs print."""
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"


# One shared ShapedArray per (shape, dtype, weak type) among the avals that eager values carry
# (interned when an Array is made and when an eager call's output aval is cached): equal avals
# of eager values are then mostly the same object, which the eager caches key by identity.
# Bounded; clearing only loses sharing (equality stays structural).
_interned: dict = {}
_MAX_INTERNED = 1 << 16


def interned(aval: "ShapedArray") -> "ShapedArray":
    """The shared ShapedArray equal to ``aval`` (``aval`` itself the first time)."""
    key = (aval.shape, aval.dtype, aval.weak_type)
    got = _interned.get(key)
    if got is None:
        if len(_interned) >= _MAX_INTERNED:
            _interned.clear()
        got = _interned[key] = aval
    return got


def interned_aval(shape: tuple[int, ...], dtype: np.dtype, weak_type: bool) -> "ShapedArray":
    """The shared ShapedArray of (shape, dtype, weak_type)."""
    got = _interned.get((shape, dtype, weak_type))
    return got if got is not None else interned(ShapedArray(shape, dtype, weak_type))


def check_result_size(op: str, out: Any) -> None:
    """Raise a ValueError naming ``op`` when one of its result avals ``out`` (one or a list)
    is too large to address, before any kernel or NumPy call sees the shape."""
    for a in (out if isinstance(out, (list, tuple)) else (out,)):
        if type(a) is ShapedArray:
            check_size(a.shape, a.dtype.itemsize, op, "the result")


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (to trace without data), as in JAX."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape: tuple[int, ...], dtype: Any, weak_type: bool = False, *,
                 sharding: Any = None):
        self.shape = tuple(shape)
        self.dtype = dtypes.canonicalize(dtype)
        self.weak_type = weak_type
        self.sharding = sharding  # (accepted as JAX's keyword: one device, nothing to shard)

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"
