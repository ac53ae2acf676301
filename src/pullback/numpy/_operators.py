"""Python operators, methods and properties of Array and of every Tracer, forwarded to
pullback.numpy (as jax.Array's are to jax.numpy), so user code reads the same traced or not."""
from __future__ import annotations

from typing import Any, Callable

from .. import lax
from ..tracer import dtypes, executor
from ..tracer.array import Array
from ..tracer.core import Primitive, Tracer
from . import _indexing, _linalg, _reductions, _repeat, _shape, _sorting, _ufuncs
from ._promotion import eager_binary

eager = executor.installed().eager  # the eager short paths (backends/eager.py)


def _swap(f: Callable) -> Callable:
    return lambda self, other: f(other, self)


def _binary(prim_name: str, general: Callable, bool_ok: bool = False,
            reflected: bool = False) -> Callable:
    """An operator taking the eager short paths where ``general`` (the pullback.numpy function)
    would bind exactly the primitive ``prim_name`` (booleans only with ``bool_ok``), else
    ``general``; ``reflected``: ``other <op> self`` (``__radd__``)."""
    prim = Primitive.registry[prim_name]

    def slow(x: Any, y: Any) -> Any:
        out = eager_binary(prim, x, y, bool_ok)
        return general(x, y) if out is None else out
    return eager.binary_operator(prim, slow, bool_ok, reflected)


def _reshape(self: Any, *shape: Any, order: str = "C") -> Any:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return _shape.reshape(self, shape, order=order)


def _transpose(self: Any, *axes: Any) -> Any:
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return _shape.transpose(self, axes or None)


def _astype(self: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
    return _ufuncs.astype(self, dtype, copy=copy, device=device)


def _view(self: Any, dtype: Any = None) -> Any:
    if dtype is None:
        return self
    return lax.bitcast_convert_type(self, dtypes.requested(dtype))


def _flatten(self: Any, order: str = "C") -> Any:
    return _shape.ravel(self, order)


def _truediv(general: Callable, reflected: bool = False) -> Callable:
    """``/``: the short path of ``div`` for inexact Arrays (integers divide as floats)."""
    div = Primitive.registry["div"]

    def op(self: Any, other: Any) -> Any:
        x, y = (other, self) if reflected else (self, other)
        if type(self) is Array and dtypes.is_inexact(self._aval.dtype):
            out = eager_binary(div, x, y, False)
            if out is not None:
                return out
        return general(x, y)
    return op


_OPERATORS = {
    "__add__": _binary("add", _ufuncs.add), "__radd__": _binary("add", _ufuncs.add, reflected=True),
    "__sub__": _binary("sub", _ufuncs.subtract),
    "__rsub__": _binary("sub", _ufuncs.subtract, reflected=True),
    "__mul__": _binary("mul", _ufuncs.multiply),
    "__rmul__": _binary("mul", _ufuncs.multiply, reflected=True),
    "__truediv__": _truediv(_ufuncs.true_divide),
    "__rtruediv__": _truediv(_ufuncs.true_divide, reflected=True),
    "__floordiv__": _ufuncs.floor_divide, "__rfloordiv__": _swap(_ufuncs.floor_divide),
    "__mod__": _ufuncs.remainder, "__rmod__": _swap(_ufuncs.remainder),
    "__divmod__": _ufuncs.divmod, "__rdivmod__": _swap(_ufuncs.divmod),
    "__pow__": lambda self, other, mod=None: _ufuncs.power(self, other),
    "__rpow__": lambda self, other, mod=None: _ufuncs.power(other, self),
    "__matmul__": _linalg.matmul, "__rmatmul__": _swap(_linalg.matmul),
    "__and__": _ufuncs.bitwise_and, "__rand__": _swap(_ufuncs.bitwise_and),
    "__or__": _ufuncs.bitwise_or, "__ror__": _swap(_ufuncs.bitwise_or),
    "__xor__": _ufuncs.bitwise_xor, "__rxor__": _swap(_ufuncs.bitwise_xor),
    "__lshift__": _ufuncs.left_shift, "__rlshift__": _swap(_ufuncs.left_shift),
    "__rshift__": _ufuncs.right_shift, "__rrshift__": _swap(_ufuncs.right_shift),
    "__neg__": _ufuncs.negative, "__pos__": _ufuncs.positive, "__abs__": _ufuncs.absolute,
    "__invert__": _ufuncs.bitwise_not,
    "__lt__": _binary("lt", _ufuncs.less, True), "__le__": _binary("le", _ufuncs.less_equal, True),
    "__gt__": _binary("gt", _ufuncs.greater, True),
    "__ge__": _binary("ge", _ufuncs.greater_equal, True),
    "__eq__": _binary("eq", _ufuncs.equal, True), "__ne__": _binary("ne", _ufuncs.not_equal, True),
    "__round__": lambda self, ndigits=None: _ufuncs.round(self, ndigits or 0),
    "__getitem__": lambda self, idx: _indexing.rewriting_take(self, idx),
}

_METHODS = {
    "all": _reductions.all, "any": _reductions.any, "argmax": _reductions.argmax,
    "argmin": _reductions.argmin, "argsort": _sorting.argsort, "astype": _astype,
    "clip": _ufuncs.clip, "conj": _ufuncs.conj, "conjugate": _ufuncs.conjugate,
    "copy": lambda self: self, "cumprod": _reductions.cumprod, "cumsum": _reductions.cumsum,
    "diagonal": _linalg.diagonal, "dot": _linalg.dot, "flatten": _flatten,
    "max": _reductions.max, "mean": _reductions.mean, "min": _reductions.min,
    "nonzero": _sorting.nonzero, "prod": _reductions.prod, "ptp": _reductions.ptp,
    "ravel": _shape.ravel, "repeat": _repeat.repeat, "reshape": _reshape,
    "round": _ufuncs.round, "searchsorted": _sorting.searchsorted, "sort": _sorting.sort,
    "squeeze": _shape.squeeze, "std": _reductions.std, "sum": _reductions.sum,
    "swapaxes": _shape.swapaxes, "take": _indexing.take, "trace": _linalg.trace,
    "transpose": _transpose, "var": _reductions.var, "view": _view,
}

_PROPERTIES = {
    "T": lambda self: _shape.transpose(self),
    "mT": lambda self: _shape.matrix_transpose(self),
    "real": _ufuncs.real, "imag": _ufuncs.imag,
    "at": lambda self: _indexing._IndexUpdateHelper(self),
}

for _cls in (Array, Tracer):
    for _name, _fn in {**_OPERATORS, **_METHODS}.items():
        setattr(_cls, _name, _fn)
    for _name, _fn in _PROPERTIES.items():
        setattr(_cls, _name, property(_fn))
    _cls.__hash__ = _cls.__dict__.get("__hash__") or None  # __eq__ is element-wise
