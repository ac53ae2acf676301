"""Array: the concrete, immutable value of level 0.

An Array is a strided view (shape, strides, offset, dtype) over a buffer; the view is held as a
NumPy ndarray, the container pullback's kernels read and write. ``np.asarray(x)`` is zero-copy
(a read-only view of the same memory).
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from .avals import ShapedArray, interned_aval


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
        self._aval = interned_aval(value.shape, value.dtype, bool(weak_type))

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
        if dtype is not None and np.dtype(dtype) != self._value.dtype:
            return self._value.astype(dtype)
        return self._value.copy() if copy else frozen_view(self._value)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__array__().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU

    def item(self, *args: Any) -> Any:
        return self._value.item(*args)

    def tolist(self) -> Any:
        return self._value.tolist()

    def is_deleted(self) -> bool:
        """Whether the Array's buffer was donated to a jitted call (as ``jax.Array``)."""
        return False

    def delete(self) -> None:
        """Release the buffer; any later use raises ``RuntimeError`` (as ``jax.Array``)."""
        delete(self)

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
        weak = ", weak_type=True" if self._aval.weak_type else ""
        return f"Array({body}, dtype={self._value.dtype.name}{weak})"  # (as JAX 0.10)

    def __format__(self, spec: str) -> str:
        return format(self._value.item(), spec) if self._value.ndim == 0 else repr(self)

    def __reduce__(self) -> Any:
        return (_rebuild, (np.array(self._value), self._aval.weak_type))


class _DeletedArray(Array):
    """An Array whose buffer was donated (or deleted): every use raises, as in JAX."""

    __slots__ = ()

    @property
    def _value(self) -> np.ndarray:
        raise RuntimeError(f"Array has been deleted with shape={self._aval.str_short()}: its "
                           "buffer was donated to a jitted call (donate_argnums) or deleted")

    def is_deleted(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<deleted Array {self._aval.str_short()}>"


def delete(x: Array) -> None:
    """Make ``x`` a deleted Array: its buffer belongs to someone else now."""
    if type(x) is Array:
        Array._value.__set__(x, None)  # (the slot: drop the reference)
        x.__class__ = _DeletedArray


def frozen_view(v: np.ndarray) -> np.ndarray:
    """A read-only view of ``v`` whose write flag cannot be turned back on: its base is a
    read-only buffer, not ``v`` (NumPy lets a view become writeable while its base array is)."""
    try:
        return np.asarray(memoryview(v).toreadonly())
    except (ValueError, TypeError, NotImplementedError):
        pass  # a dtype the buffer protocol cannot name (bfloat16, float8): its bits instead
    bits = np.dtype(f"u{v.dtype.itemsize}") if v.dtype.itemsize in (1, 2, 4, 8) else None
    if bits is None:
        out = v.copy()
        out.flags.writeable = False
        return out
    return np.asarray(memoryview(v.view(bits)).toreadonly()).view(v.dtype)


def _rebuild(value: np.ndarray, weak_type: bool) -> Array:
    return Array(value, weak_type)
