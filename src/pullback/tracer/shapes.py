"""Shape arithmetic shared by every layer: the one broadcasting rule, axis normalization."""
from __future__ import annotations

import math
from typing import Sequence

_MAX_ELEMENTS = 2**63 - 1  # element counts and byte sizes are int64 (NumPy's npy_intp)


def check_count(shape: tuple[int, ...], op: str, arg: str = "shape") -> tuple[int, ...]:
    """``shape`` itself, or a ValueError naming ``op`` when its element count does not fit in
    int64 (no array of that shape can be indexed)."""
    if shape and math.prod(shape) > _MAX_ELEMENTS:
        raise ValueError(f"{op}: argument '{arg}' {shape} has {math.prod(shape)} elements, more "
                         f"than the {_MAX_ELEMENTS} an int64 can count")
    return shape


def broadcast_shapes(*shapes: Sequence[int], op: str = "broadcast_shapes") -> tuple[int, ...]:
    """NumPy's broadcasting of shapes (right-aligned; 1 stretches), raising a ValueError that
    names ``op`` when they are incompatible."""
    nd = max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        for i, d in enumerate(s, nd - len(s)):
            if d == out[i] or d == 1:
                continue
            if out[i] == 1:
                out[i] = d
            else:
                raise ValueError(f"{op}: shapes {', '.join(str(tuple(x)) for x in shapes)} "
                                 "cannot be broadcast together")
    return check_count(tuple(out), op, "shapes broadcast to")


def canonicalize_axis(axis: int, ndim: int, op: str, arg: str = "axis") -> int:
    """``axis`` in [0, ndim), accepting negative axes; raises a ValueError naming the op."""
    try:
        a = int(axis)
    except TypeError:
        raise TypeError(f"{op}: argument '{arg}' must be an int, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"{op}: argument '{arg}' is {axis}, out of range for an array of "
                         f"{ndim} dimensions")
    return a % ndim if ndim else a


def canonicalize_axes(axes: int | Sequence[int] | None, ndim: int, op: str,
                      arg: str = "axis") -> tuple[int, ...]:
    """A sorted tuple of distinct axes (None means all)."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, int) or not hasattr(axes, "__iter__"):
        axes = (axes,)
    out = tuple(canonicalize_axis(a, ndim, op, arg) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: argument '{arg}' repeats an axis: {tuple(axes)}")
    return tuple(sorted(out))


def check_shape(shape: Sequence[int], op: str, arg: str = "shape") -> tuple[int, ...]:
    """A tuple of non-negative ints, or a TypeError/ValueError naming op and argument."""
    try:
        out = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{op}: argument '{arg}' must be a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{op}: argument '{arg}' has a negative dimension: {out}")
    return check_count(out, op, arg)
