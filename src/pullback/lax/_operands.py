"""How lax functions prepare operands before binding a primitive."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..tracer import core, dtypes
from ..tracer.array import Array

ArrayLike = Any


def scalars_to(args: Sequence[Any]) -> list[Any]:
    """Python scalars become weakly typed arrays of the array operands' dtype."""
    ref = next((a for a in args if not dtypes.is_python_scalar(a)), None)
    out = []
    for a in args:
        if dtypes.is_python_scalar(a):
            dt, weak = dtypes.dtype_of_python(a) if ref is None else (core.get_aval(ref).dtype, True)
            a = Array(dtypes.weak_scalar(a, dt), weak)
        out.append(a)
    return out
