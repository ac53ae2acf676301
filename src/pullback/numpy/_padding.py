"""Padding: ``pad`` with NumPy's modes, from lax.pad, slices, concatenation, the reductions
(the statistic modes) and a ramp of values (linear_ramp)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..tracer import dtypes
from . import _reductions
from ._creation import arange
from ._promotion import aval_of, convert
from ._shape import _arr, broadcast_to, concatenate, flip, reshape
from ._ufuncs import add, multiply, subtract, true_divide, trunc

ArrayLike = Any


def _pad_widths(name: str, pad_width: Any, nd: int) -> list[tuple[int, int]]:
    pw = np.asarray(pad_width)
    if pw.size and pw.dtype.kind not in "iu":
        raise TypeError(f"{name}: argument 'pad_width' must be of integral type, got "
                        f"{pad_width!r}")
    pw = pw.astype(np.int64)
    if pw.ndim == 0:
        pw = np.broadcast_to(pw, (nd, 2))
    elif pw.ndim == 1:
        pw = np.broadcast_to(pw if pw.size == 2 else pw.reshape(1, -1), (nd, 2))
    else:
        pw = np.broadcast_to(pw, (nd, 2))
    if (pw < 0).any():
        raise ValueError(f"{name}: argument 'pad_width' must not be negative, got {pad_width}")
    return [(int(lo), int(hi)) for lo, hi in pw]


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum",
              "minimum", "mean", "empty")


def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad with NumPy's modes: constant (``constant_values``), edge, reflect and symmetric
    (``reflect_type`` "even"), wrap, linear_ramp (``end_values``), maximum, minimum, mean
    (``stat_length`` not supported), empty (zeros)."""
    array, av = _arr("pad", array)
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: argument 'mode' must be one of {_PAD_MODES}, got {mode!r}")
    widths = _pad_widths("pad", pad_width, av.ndim)
    if mode in ("constant", "empty"):
        cv = np.asarray(kwargs.get("constant_values", 0))
        cv = np.broadcast_to(cv, (av.ndim, 2)) if cv.ndim else cv
        if cv.ndim == 0:
            value = convert(cv.item(), av.dtype)
            return lax.pad(array, value, [(lo, hi, 0) for lo, hi in widths])
        out = array
        for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, cv)):
            out = _pad_axis_constant(out, ax, lo, hi, vlo, vhi)
        return out
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError("pad: only reflect_type='even' is supported")
    out = array
    for ax, (lo, hi) in enumerate(widths):
        if lo or hi:
            out = _pad_axis(out, ax, lo, hi, mode, kwargs)
    return out


def _pad_axis_constant(x: Any, ax: int, lo: int, hi: int, vlo: Any, vhi: Any) -> Any:
    dt = aval_of(x).dtype
    cfg = [(0, 0, 0)] * aval_of(x).ndim
    cfg[ax] = (lo, 0, 0)
    x = lax.pad(x, convert(np.asarray(vlo).item(), dt), cfg)
    cfg[ax] = (0, hi, 0)
    return lax.pad(x, convert(np.asarray(vhi).item(), dt), cfg)


def _pad_axis(x: Any, ax: int, lo: int, hi: int, mode: str, kw: dict) -> Any:
    av = aval_of(x)
    n = av.shape[ax]
    sl = lambda a, b: lax.slice_in_dim(x, a, b, axis=ax)  # noqa: E731
    if n == 0:
        raise ValueError(f"pad: cannot pad an empty axis with mode {mode!r}")
    if mode == "edge":
        left = broadcast_to(sl(0, 1), _with(av.shape, ax, lo))
        right = broadcast_to(sl(n - 1, n), _with(av.shape, ax, hi))
        return concatenate([left, x, right], ax)
    if mode == "wrap":
        reps = -(-(lo + hi) // n) + 1
        big = concatenate([x] * (2 * reps + 1), ax)
        start = reps * n - lo
        return lax.slice_in_dim(big, start, start + n + lo + hi, axis=ax)
    if mode in ("reflect", "symmetric"):
        period = 2 * n - 2 if mode == "reflect" else 2 * n
        if period <= 0:  # reflecting a length-1 axis repeats the edge
            return _pad_axis(x, ax, lo, hi, "edge", kw)
        body = sl(1, n - 1) if mode == "reflect" else x
        cycle = concatenate([x, flip(body, ax)], ax) if mode == "reflect" else \
            concatenate([x, flip(x, ax)], ax)
        reps = -(-(lo + hi + n) // period) + 2
        big = concatenate([cycle] * (2 * reps), ax)
        start = reps * period - lo
        return lax.slice_in_dim(big, start, start + n + lo + hi, axis=ax)
    if mode in ("maximum", "minimum", "mean"):
        red = {"maximum": _reductions.max, "minimum": _reductions.min,
               "mean": _reductions.mean}[mode]
        if "stat_length" in kw:
            raise ValueError("pad: 'stat_length' is not supported")
        stat = red(x, axis=ax, keepdims=True)
        stat = convert(stat, av.dtype) if mode == "mean" and not dtypes.is_inexact(av.dtype) \
            else stat
        return concatenate([broadcast_to(stat, _with(av.shape, ax, lo)), x,
                            broadcast_to(stat, _with(av.shape, ax, hi))], ax)
    if mode == "linear_ramp":
        ev = np.broadcast_to(np.asarray(kw.get("end_values", 0)), (2,))
        parts = []
        if lo:
            parts.append(_ramp(sl(0, 1), float(ev[0]), lo, av, ax))
        parts.append(x)
        if hi:
            parts.append(flip(_ramp(sl(n - 1, n), float(ev[1]), hi, av, ax), ax))
        return concatenate(parts, ax)
    raise AssertionError(mode)


def _ramp(edge: Any, end: float, k: int, av: Any, ax: int) -> Any:
    # k values from `end` toward the edge value (exclusive): end + (edge - end) * i / k
    ft = dtypes.float64 if av.dtype == dtypes.float64 else dtypes.float32
    t = reshape(true_divide(arange(k, dtype=ft), k), _with((1,) * av.ndim, ax, k))
    out = add(end, multiply(subtract(convert(edge, ft), end), t))
    if dtypes.is_integer(av.dtype):
        out = trunc(out)
    return convert(broadcast_to(out, _with(av.shape, ax, k)), av.dtype)


def _with(shape: tuple, ax: int, n: int) -> tuple:
    s = list(shape)
    s[ax] = n
    return tuple(s)
