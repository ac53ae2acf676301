"""Element-wise primitives: one C kernel table row each (backends/cpu/csrc/elementwise.c).

Operands share one shape and one dtype; a 0-d operand broadcasts against the others (so
``x * 2.0`` stages as one ``mul`` with a literal, as in JAX).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive
from .rules import AUTODIFF, BATCHING, NONLINEAR

_ARGS = ("x", "y", "z")


def elementwise_aval(name: str, kinds: str, *avals: ShapedArray) -> ShapedArray:
    """Checks operands of element-wise op ``name``: ``kinds`` is "numeric" or "inexact"."""
    ref = max(avals, key=lambda a: a.ndim)
    for arg, a in zip(_ARGS, avals):
        if a.ndim and a.shape != ref.shape:
            raise TypeError(f"{name}: argument '{arg}' has shape {a.shape}, but the operands "
                            f"must have equal shapes (or be scalars): got "
                            f"{', '.join(str(x.shape) for x in avals)}")
        if a.dtype != avals[0].dtype:
            raise TypeError(f"{name}: argument '{arg}' has dtype {a.dtype}, but the operands "
                            f"must have one dtype: got {', '.join(str(x.dtype) for x in avals)}")
        if a.dtype == dtypes.bool_ or (kinds == "inexact" and not dtypes.is_inexact(a.dtype)):
            want = "a floating or complex" if kinds == "inexact" else "a numeric"
            raise TypeError(f"{name}: argument '{arg}' must be {want} array, got {a.dtype}")
    return ShapedArray(ref.shape, ref.dtype, all(a.weak_type for a in avals))


def _declare(name: str, nin: int, kinds: str, reference: Callable, transpose=NONLINEAR) -> Primitive:
    p = Primitive(name)
    p.abstract_eval = lambda *avals: elementwise_aval(name, kinds, *avals)
    p.reference = lambda *xs: np.asarray(reference(*xs))
    p.cpu = lambda k, *xs: k.ewise(k.EWISE_OPS[name], *xs)
    p.jvp = AUTODIFF
    p.transpose = transpose
    p.batch = BATCHING
    return p


add_p = _declare("add", 2, "numeric", np.add, transpose=AUTODIFF)
mul_p = _declare("mul", 2, "numeric", np.multiply, transpose=AUTODIFF)
neg_p = _declare("neg", 1, "numeric", np.negative, transpose=AUTODIFF)
sin_p = _declare("sin", 1, "inexact", np.sin)
exp_p = _declare("exp", 1, "inexact", np.exp)
