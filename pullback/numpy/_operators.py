"""Python operators and methods of Array and of every Tracer, forwarded to pullback.numpy
(as jax.Array's are to jax.numpy), so user code reads the same traced or not."""
from __future__ import annotations

from typing import Any, Callable

from ..backends import eager
from ..primitives.elementwise import add_p, mul_p
from ..tracer.array import Array
from ..tracer.core import Primitive, Tracer
from . import _linalg, _reductions, _shape, _ufuncs


def _swap(f: Callable) -> Callable:
    return lambda self, other: f(other, self)


def _binary(prim: Primitive, general: Callable) -> Callable:
    """An operator taking the eager short path for two Arrays of one aval, else ``general``."""
    def op(self: Any, other: Any) -> Any:
        if type(other) is Array and type(self) is Array:
            out = eager.binary(prim, self, other)
            if out is not None:
                return out
        return general(self, other)
    return op


def _reshape_method(self: Any, *shape: Any, order: str = "C") -> Any:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return _shape.reshape(self, shape, order=order)


_METHODS = {
    "__add__": _binary(add_p, _ufuncs.add), "__radd__": _swap(_ufuncs.add),
    "__mul__": _binary(mul_p, _ufuncs.multiply), "__rmul__": _swap(_ufuncs.multiply),
    "__neg__": _ufuncs.negative, "__pos__": lambda self: self,
    "__matmul__": _linalg.matmul, "__rmatmul__": _swap(_linalg.matmul),
    "sum": _reductions.sum, "reshape": _reshape_method,
}

for _cls in (Array, Tracer):
    for _name, _fn in _METHODS.items():
        setattr(_cls, _name, _fn)
