"""Array: the concrete, immutable value of level 0.

An Array is a strided view (shape, strides, offset, dtype) over a buffer; the view is held as a
NumPy ndarray, the container pullback's kernels read and write. ``np.asarray(x)`` is zero-copy
(a read-only view of the same memory).
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from .avals import ShapedArray


class Array:
    """An immutable n-dimensional array, as ``jax.Array``.

    Create one with ``pullback.numpy.array``/``asarray``; operators and methods follow
    ``jax.Array``. Functional updates use ``x.at[idx].set(y)``.
    """

    __slots__ = ("_value", "_aval", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value: np.ndarray, weak_type: bool = False):
        if not value.flags.aligned:
            # kernels read aligned data: a misaligned NumPy buffer (np.frombuffer at an odd
            # offset) is copied, as JAX accepts it
            value = value.copy()
        self._value = value
        self._aval = ShapedArray(value.shape, value.dtype, weak_type)

    @classmethod
    def _new(cls, value: np.ndarray, aval: ShapedArray) -> "Array":
        """An Array over ``value`` whose abstract value is already known (the fast path of
        every kernel result: no new ShapedArray)."""
        a = object.__new__(cls)
        a._value = value
        a._aval = aval
        return a

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    weak_type = property(lambda self: self._aval.weak_type)
    nbytes = property(lambda self: self._value.nbytes)
    itemsize = property(lambda self: self._value.itemsize)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        v = self._value.view()
        v.flags.writeable = False
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__array__().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU

    def item(self, *args: Any) -> Any:
        return self._value.item(*args)

    def tolist(self) -> Any:
        return self._value.tolist()

    def block_until_ready(self) -> "Array":
        return self  # execution is synchronous

    def to_concrete_value(self) -> np.ndarray:
        return self._value

    def __len__(self) -> int:
        if not self._value.ndim:
            raise TypeError("len() of unsized object (a 0-d Array)")
        return len(self._value)

    def __iter__(self) -> Iterator["Array"]:
        if not self._value.ndim:
            raise TypeError("iteration over a 0-d Array")
        return (self[i] for i in range(len(self._value)))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __index__(self) -> int:
        return self._value.__index__()

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'Array' (use a tuple, or a static argument)")

    def __setitem__(self, idx: Any, val: Any) -> None:
        raise TypeError("pullback arrays are immutable; use x.at[idx].set(val) for a "
                        "functional update")

    def __repr__(self) -> str:
        body = np.array2string(self._value, separator=", ", prefix="Array(")
        dt = self._value.dtype
        show = dt not in (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)) \
            or self._value.size == 0
        weak = ", weak_type=True" if self._aval.weak_type else ""
        return f"Array({body}, dtype={dt.name}{weak})" if show or weak else f"Array({body})"

    def __format__(self, spec: str) -> str:
        return format(self._value.item(), spec) if self._value.ndim == 0 else repr(self)

    def __reduce__(self) -> Any:
        return (_rebuild, (np.array(self._value), self._aval.weak_type))


def _rebuild(value: np.ndarray, weak_type: bool) -> Array:
    return Array(value, weak_type)
