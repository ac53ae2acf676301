"""How lax functions prepare operands before binding a primitive."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..tracer import core, dtypes
from ..tracer.array import Array

ArrayLike = Any


def scalars_to(args: Sequence[Any]) -> list[Any]:
    """Python scalars become weakly typed arrays of the array operands' dtype."""
    out = list(args)
    ref = None
    for a in out:
        if type(a) is Array or not dtypes.is_python_scalar(a):
            ref = a
            break
    for i, a in enumerate(out):
        if type(a) is not Array and dtypes.is_python_scalar(a):
            dt, weak = dtypes.dtype_of_python(a) if ref is None else (core.get_aval(ref).dtype, True)
            out[i] = Array(dtypes.weak_scalar(a, dt), weak)
    return out
