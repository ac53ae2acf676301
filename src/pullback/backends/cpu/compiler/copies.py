"""The step copying one view into another, and the ndarray a constant view denotes: what
lowering (lower.py), control flow (control.py) and dynamic indexing (dynamic.py) all emit or
read, below the three.
"""
from __future__ import annotations

import numpy as np

from .. import kernels
from .values import Step, View

# the grain (elements per task) of cheap element-wise steps: copies, selects, conversions
CHEAP_GRAIN = 262144


def const_array(v: View) -> np.ndarray:
    """The ndarray a constant View denotes (shares the constant's memory)."""
    return kernels.view(v.buf.value, v.shape, v.strides, v.offset)


def copy_step(x: View, out: View) -> Step:
    """A strided copy of ``x`` into ``out`` (same shape and dtype)."""
    return Step("ewise", [x], [out], {"loop": (kernels.SCHEDULE["copy"], x.itemsize, 0),
                                      "params": (), "shape": x.shape, "grain": CHEAP_GRAIN},
                "copy")
