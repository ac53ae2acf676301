"""The Array (and Tracer) methods that forward to functions defined after _operators:
argpartition, choose, compress, byteswap, tobytes, and ``flat`` (which JAX does not
implement)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.core import Tracer
from ._promotion import aval_of
from ._selection import argpartition, choose, compress


def _byteswap(self: Any, inplace: bool = False) -> Any:
    """The array with the bytes of each element reversed."""
    if inplace:
        raise ValueError("byteswap: JAX arrays are immutable; inplace=True is not supported")
    av = aval_of(self)
    if av.dtype.itemsize == 1:
        return self
    as_bytes = lax.bitcast_convert_type(self, dtypes.uint8)          # (..., itemsize)
    return lax.bitcast_convert_type(lax.rev(as_bytes, (av.ndim,)), av.dtype)


def _tobytes(self: Any, order: str = "C") -> bytes:
    """The raw bytes of the array's values (needs concrete values)."""
    return np.asarray(self).tobytes(order=order)


def _flat(self: Any) -> Any:
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: consider "
                              "arr.flatten() instead.")


_METHODS = {
    "argpartition": lambda self, kth, axis=-1, kind="introselect", order=None:
        argpartition(self, kth, axis),
    "choose": lambda self, choices, out=None, mode="raise": choose(self, choices, out, mode),
    "compress": lambda self, condition, axis=None, *, out=None, size=None, fill_value=0:
        compress(condition, self, axis, out=out, size=size, fill_value=fill_value),
    "byteswap": _byteswap,
    "tobytes": _tobytes,
}

for _cls in (Array, Tracer):
    for _name, _fn in _METHODS.items():
        setattr(_cls, _name, _fn)
    _cls.flat = property(_flat)
