"""Python operators and methods of Array and of every Tracer, forwarded to pullback.numpy
(as jax.Array's are to jax.numpy), so user code reads the same traced or not."""
from __future__ import annotations

from typing import Any

from ..tracer.array import Array
from ..tracer.core import Tracer
from . import _linalg, _reductions, _shape, _ufuncs


def _swap(f):
    return lambda self, other: f(other, self)


def _reshape_method(self: Any, *shape: Any, order: str = "C") -> Any:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return _shape.reshape(self, shape, order=order)


_METHODS = {
    "__add__": _ufuncs.add, "__radd__": _swap(_ufuncs.add),
    "__mul__": _ufuncs.multiply, "__rmul__": _swap(_ufuncs.multiply),
    "__neg__": _ufuncs.negative, "__pos__": lambda self: self,
    "__matmul__": _linalg.matmul, "__rmatmul__": _swap(_linalg.matmul),
    "sum": _reductions.sum, "reshape": _reshape_method,
}

for _cls in (Array, Tracer):
    for _name, _fn in _METHODS.items():
        setattr(_cls, _name, _fn)
