"""Shape arithmetic shared by every layer: the one broadcasting rule, axis normalization."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

from .errors import ConcretizationTypeError

# The most elements (and bytes) one array may span: its offsets must fit a signed 64-bit int.
MAX_SIZE = 2**63 - 1


def check_count(shape: tuple[int, ...], op: str, arg: str = "shape") -> tuple[int, ...]:
    """``shape`` itself, or a ValueError naming ``op`` when no array of that shape can be
    indexed (see ``check_size``)."""
    check_size(shape, 1, op, f"argument '{arg}'")
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


def index_arg(value: Any, op: str, arg: str) -> int:
    """``value`` as a Python int by ``operator.index``, as JAX takes shapes, axes and counts:
    Python ints, NumPy integer scalars and 0-d integer arrays pass, floats, strings and
    others raise a TypeError naming ``op`` and ``arg`` (a traced value its concretization
    error)."""
    try:
        return operator.index(value)
    except ConcretizationTypeError:
        raise
    except TypeError:
        raise TypeError(f"{op}: argument '{arg}' must be an integer, got {value!r} of type "
                        f"{type(value).__name__}") from None


def index_tuple(value: Any, op: str, arg: str) -> tuple[int, ...]:
    """An integer (see :func:`index_arg`) as a 1-tuple, or a sequence of integers as a tuple;
    a TypeError naming ``op`` and ``arg`` for anything else (floats, strings, None)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") or \
            getattr(value, "ndim", 1) == 0:
        return (index_arg(value, op, arg),)
    return tuple(index_arg(v, op, arg) for v in value)


def canonicalize_axis(axis: int, ndim: int, op: str, arg: str = "axis") -> int:
    """``axis`` in [0, ndim), accepting negative axes; raises a ValueError naming the op."""
    a = index_arg(axis, op, arg)
    if not -ndim <= a < ndim:
        raise ValueError(f"{op}: argument '{arg}' is {axis}, out of range for an array of "
                         f"{ndim} dimensions")
    return a % ndim if ndim else a


def canonicalize_axes(axes: int | Sequence[int] | None, ndim: int, op: str,
                      arg: str = "axis") -> tuple[int, ...]:
    """A sorted tuple of distinct axes (None means all)."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, str) or not hasattr(axes, "__iter__") or getattr(axes, "ndim", 1) == 0:
        axes = (axes,)
    out = tuple(canonicalize_axis(a, ndim, op, arg) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: argument '{arg}' repeats an axis: {tuple(axes)}")
    return tuple(sorted(out))


def check_shape(shape: Any, op: str, arg: str = "shape") -> tuple[int, ...]:
    """``shape`` as a tuple of non-negative ints, taken as JAX takes shapes: an integer (a
    Python int, NumPy integer or 0-d integer array) means ``(shape,)``, and each entry of a
    sequence goes through ``operator.index``. A TypeError names op and argument for anything
    else and for a negative dimension (JAX's error type), a ValueError for more elements than
    an array can address."""
    if not isinstance(shape, (str, bytes)) and getattr(shape, "ndim", None) != 1:
        try:
            shape = (operator.index(shape),)
        except ConcretizationTypeError:
            raise
        except TypeError:
            pass
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__") or \
            getattr(shape, "ndim", 1) != 1:
        raise TypeError(f"{op}: argument '{arg}' must be a sequence of integers, got {shape!r}")
    out = []
    for d in shape:
        try:
            out.append(operator.index(d))
        except ConcretizationTypeError:
            raise
        except TypeError:
            raise TypeError(f"{op}: argument '{arg}' must be a sequence of integers, got "
                            f"{tuple(shape)!r}") from None
    out = tuple(out)
    if any(d < 0 for d in out):
        raise TypeError(f"{op}: argument '{arg}' must have non-negative dimensions, got {out}")
    check_size(out, 1, op, f"argument '{arg}'")
    return out


def check_size(shape: tuple[int, ...], itemsize: int, op: str, what: str) -> None:
    """A ValueError naming ``op`` and ``what`` (its argument, or its result) when an array of
    ``shape`` would span more than ``MAX_SIZE`` bytes: NumPy's "array is too big" and C's
    offset overflow, said by the op."""
    n = math.prod(shape) * itemsize
    if n > MAX_SIZE:
        raise ValueError(f"{op}: {what} has shape {tuple(shape)}, too large for an array: it "
                         f"would span {n} bytes, more than 2**63 - 1")
