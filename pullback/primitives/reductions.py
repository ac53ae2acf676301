"""Reductions, arg-reductions and cumulative ops (backends/cpu/csrc/reduce.c).

One C table row per op serves all three kernel kinds: ``reduce(op, x, axes)``,
``cumulative(op, x, axis, reverse)`` and, for the max/min rows, ``argreduce(op, x, axis,
index_dtype)``. float16/bfloat16 accumulate in float32 and round once per stored element.

Semantics (as JAX): empty reductions give the identity (0, 1, -inf or the integer minimum, +inf
or the integer maximum, all-ones/True, 0/False); max/min propagate NaN; argmax/argmin return the
first occurrence of the extreme, NaN counting as the extreme; integer sums and products wrap.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, not_applicable
from .rules import AUTODIFF, BATCHING, NONLINEAR

_HALVES = (dtypes.float16, dtypes.bfloat16)
_INTS = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
         dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
_FLOATS = _HALVES + (dtypes.float32, dtypes.float64)
_COMPLEX = (dtypes.complex64, dtypes.complex128)

# The dtypes each family of ops accepts, with the words an error uses for them.
NUMBER = (_INTS + _FLOATS + _COMPLEX, "a numeric (integer, floating or complex)")
REAL = ((dtypes.bool_,) + _INTS + _FLOATS, "a boolean, integer or floating")
REAL_NUMBER = (_INTS + _FLOATS, "an integer or floating")
LOGICAL = ((dtypes.bool_,) + _INTS, "a boolean or integer")
FLOATING = (_FLOATS, "a floating")

INTEGER_OUTPUT = not_applicable("integer-valued output: not differentiable")
LOGICAL_OUTPUT = not_applicable("boolean or integer output of a bitwise reduction: not "
                                "differentiable")


def check_dtype(name: str, aval: ShapedArray, kinds: tuple, arg: str = "operand") -> None:
    """Raises a TypeError naming op ``name`` unless ``aval``'s dtype is one of ``kinds``."""
    allowed, words = kinds
    if aval.dtype not in allowed:
        raise TypeError(f"{name}: argument '{arg}' must be {words} array, got {aval.dtype}"
                        + (" (float8 types are storage formats: convert to a wider float first)"
                           if aval.dtype in dtypes.FLOAT8 else ""))


def check_axis(name: str, aval: ShapedArray, axis: int, arg: str = "axis") -> None:
    """Raises unless ``axis`` is an int in [0, ndim) of ``aval``."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: argument '{arg}' must be an int, got {axis!r}")
    if not 0 <= axis < aval.ndim:
        raise ValueError(f"{name}: argument '{arg}' is {axis}, out of range for an operand of "
                         f"shape {aval.shape}")


def via_float32(f: Callable) -> Callable:
    """A NumPy reference that computes halves in float32 and rounds once, as the kernels do."""
    def ref(x: np.ndarray, **params) -> np.ndarray:
        with np.errstate(all="ignore"):  # inf - inf and the like are IEEE results, not errors
            if x.dtype in _HALVES:
                return np.asarray(f(x.astype(np.float32), **params)).astype(x.dtype)
            return np.asarray(f(x, **params))
    return ref


# ---- reductions over a set of axes ----

def _reduce_aval(name: str, kinds: tuple, x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
    if not isinstance(axes, tuple) or any(not isinstance(a, int) for a in axes):
        raise TypeError(f"{name}: argument 'axes' must be a tuple of ints, got {axes!r}")
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{name}: argument 'axes' must hold distinct axes in [0, {x.ndim}) for "
                         f"an operand of shape {x.shape}, got {axes}")
    check_dtype(name, x, kinds)
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _extreme(dtype: np.dtype, largest: bool):
    """The identity of max (``largest`` False: the smallest value) or min."""
    if dtype == dtypes.bool_:
        return largest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if largest else info.min
    return np.inf if largest else -np.inf


def _declare_reduce(name: str, kinds: tuple, reference: Callable, jvp, transpose) -> Primitive:
    p = Primitive(name)
    p.abstract_eval = lambda x, *, axes: _reduce_aval(name, kinds, x, axes=axes)
    p.reference = reference
    p.cpu = lambda k, x, *, axes: k.reduce(k.REDUCE_OPS[name], x, axes)
    p.jvp = jvp
    p.transpose = transpose
    p.batch = BATCHING
    return p


def _bitwise(ufunc: np.ufunc) -> Callable:
    return lambda x, *, axes: np.asarray(ufunc.reduce(x, axis=axes)).astype(x.dtype)


reduce_sum_p = _declare_reduce(
    "reduce_sum", NUMBER, via_float32(lambda x, axes: np.sum(x, axis=axes, dtype=x.dtype)),
    AUTODIFF, AUTODIFF)
reduce_prod_p = _declare_reduce(
    "reduce_prod", NUMBER, via_float32(lambda x, axes: np.prod(x, axis=axes, dtype=x.dtype)),
    AUTODIFF, NONLINEAR)
reduce_max_p = _declare_reduce(
    "reduce_max", REAL,
    via_float32(lambda x, axes: np.max(x, axis=axes, initial=_extreme(x.dtype, False))),
    AUTODIFF, NONLINEAR)
reduce_min_p = _declare_reduce(
    "reduce_min", REAL,
    via_float32(lambda x, axes: np.min(x, axis=axes, initial=_extreme(x.dtype, True))),
    AUTODIFF, NONLINEAR)
reduce_and_p = _declare_reduce("reduce_and", LOGICAL, _bitwise(np.bitwise_and), LOGICAL_OUTPUT,
                               NONLINEAR)
reduce_or_p = _declare_reduce("reduce_or", LOGICAL, _bitwise(np.bitwise_or), LOGICAL_OUTPUT,
                              NONLINEAR)
reduce_xor_p = _declare_reduce("reduce_xor", LOGICAL, _bitwise(np.bitwise_xor), LOGICAL_OUTPUT,
                               NONLINEAR)


# ---- argmax / argmin ----

def _arg_aval(name: str, x: ShapedArray, *, axes: tuple[int, ...], index_dtype: np.dtype
              ) -> ShapedArray:
    if not isinstance(axes, tuple) or len(axes) != 1:
        raise TypeError(f"{name}: argument 'axes' must be a tuple of one axis, got {axes!r}")
    (axis,) = axes
    check_axis(name, x, axis)
    check_dtype(name, x, REAL)
    if not isinstance(index_dtype, np.dtype) or index_dtype.kind not in "iu":
        raise TypeError(f"{name}: argument 'index_dtype' must be an integer dtype, got "
                        f"{index_dtype}")
    if x.shape[axis] == 0:
        raise ValueError(f"{name}: argument 'operand' has shape {x.shape}, but the reduced axis "
                         f"{axis} must not be empty")
    if x.shape[axis] - 1 > np.iinfo(index_dtype).max:
        raise ValueError(f"{name}: argument 'index_dtype' {index_dtype} cannot hold the indices "
                         f"of an axis of size {x.shape[axis]}")
    shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
    return ShapedArray(shape, index_dtype, False)


def _arg_reference(np_fn: Callable) -> Callable:
    def ref(x: np.ndarray, *, axes: tuple[int, ...], index_dtype: np.dtype) -> np.ndarray:
        if x.dtype in _HALVES:
            x = x.astype(np.float32)
        return np.asarray(np_fn(x, axis=axes[0])).astype(index_dtype)
    return ref


def _declare_arg(name: str, np_fn: Callable) -> Primitive:
    p = Primitive(name)
    p.abstract_eval = lambda x, *, axes, index_dtype: _arg_aval(name, x, axes=axes,
                                                                index_dtype=index_dtype)
    p.reference = _arg_reference(np_fn)
    p.cpu = lambda k, x, *, axes, index_dtype: k.argreduce(k.ARG_OPS[name], x, axes[0],
                                                           index_dtype)
    p.jvp = INTEGER_OUTPUT
    p.transpose = NONLINEAR
    p.batch = BATCHING
    return p


# NumPy's argmax/argmin also return the first NaN: the independent oracle is the same rule.
argmax_p = _declare_arg("argmax", np.argmax)
argmin_p = _declare_arg("argmin", np.argmin)


# ---- cumulative ops ----

def _cumulative_aval(name: str, kinds: tuple, x: ShapedArray, *, axis: int, reverse: bool
                     ) -> ShapedArray:
    check_axis(name, x, axis)
    if not isinstance(reverse, bool):
        raise TypeError(f"{name}: argument 'reverse' must be a bool, got {reverse!r}")
    check_dtype(name, x, kinds)
    return x


def _scan_reference(accumulate: Callable) -> Callable:
    def f(x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
        if reverse:
            return np.flip(accumulate(np.flip(x, axis), axis), axis)
        return accumulate(x, axis)
    return via_float32(f)


def _declare_cumulative(name: str, kinds: tuple, accumulate: Callable, transpose) -> Primitive:
    p = Primitive(name)
    p.abstract_eval = lambda x, *, axis, reverse: _cumulative_aval(name, kinds, x, axis=axis,
                                                                   reverse=reverse)
    p.reference = _scan_reference(accumulate)
    p.cpu = lambda k, x, *, axis, reverse: k.cumulative(k.CUMULATIVE_OPS[name], x, axis, reverse)
    p.jvp = AUTODIFF
    p.transpose = transpose
    p.batch = BATCHING
    return p


cumsum_p = _declare_cumulative(
    "cumsum", NUMBER, lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype), AUTODIFF)
cumprod_p = _declare_cumulative(
    "cumprod", NUMBER, lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype), NONLINEAR)
cummax_p = _declare_cumulative(
    "cummax", REAL_NUMBER, lambda x, axis: np.maximum.accumulate(x, axis=axis), NONLINEAR)
cummin_p = _declare_cumulative(
    "cummin", REAL_NUMBER, lambda x, axis: np.minimum.accumulate(x, axis=axis), NONLINEAR)
cumlogsumexp_p = _declare_cumulative(
    "cumlogsumexp", FLOATING, lambda x, axis: np.logaddexp.accumulate(x, axis=axis), NONLINEAR)
