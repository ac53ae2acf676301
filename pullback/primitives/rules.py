"""The vocabulary every primitive's rules are written in.

Rule slots (see ``tracer.core.Primitive``) are filled in each primitive's own module; a slot
left for later work names the issue that fills it, so the registry test can tell "pending"
from "forgotten". The values rules exchange live here too:

- ``Zero(aval)``: a tangent or cotangent known to be zero (never materialized);
- ``UndefPrimal(aval)``: in a transpose rule, an operand the rule solves for;
- ``not_mapped``: in a batching rule, an operand without a batch dimension.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import not_applicable, pending

AUTODIFF = pending("issue 4: jvp and transpose rules arrive with automatic differentiation")
BATCHING = pending("issue 4: batching rules arrive with vmap")
NONLINEAR = not_applicable("not linear in its operands, so it has no transpose")
INTEGER_OUTPUT = not_applicable("integer-valued output: not differentiable")

not_mapped = None


class Zero:
    """A tangent (or cotangent) known to be zero, carrying only its abstract value."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"

    @staticmethod
    def from_primal(x: Any) -> "Zero":
        from ..tracer.core import get_aval
        return Zero(tangent_aval(get_aval(x)))


class UndefPrimal:
    """An operand of a linear equation that its transpose rule solves for."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefPrimal({self.aval.str_short()})"


def is_undefined(x: Any) -> bool:
    return type(x) is UndefPrimal


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of inexact values share their dtype; integers and bools get float0."""
    if dtypes.is_inexact(aval.dtype):
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type)
    return ShapedArray(aval.shape, dtypes.float0, False)


def zeros_like_aval(aval: ShapedArray) -> Any:
    """A materialized zero of ``aval`` (a broadcast of one scalar)."""
    if aval.dtype == dtypes.float0:
        return Array(np.zeros(aval.shape, dtypes.float0))
    from .movement import broadcast_in_dim_p
    scalar = Array(np.zeros((), aval.dtype), aval.weak_type)
    if not aval.shape:
        return scalar
    return broadcast_in_dim_p.bind(scalar, shape=aval.shape, broadcast_dimensions=())


def instantiate(t: Any) -> Any:
    """``t``, or a materialized zero if it is a symbolic ``Zero``."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(a: Any, b: Any) -> Any:
    """Sum of two tangents, keeping symbolic zeros symbolic."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    from .elementwise import add_p
    return add_p.bind(a, b)
