"""Reductions: sum, mean, var, min/max, arg-reductions, cumulative ops, nan-variants, and the
whole-array comparisons (allclose, array_equal, array_equiv); quantiles are in _quantiles.py.

As in JAX, sums and products of booleans and narrow integers accumulate in the default integer
width (int32 / uint32, 64 bits with x64), and means of integers are floating.
"""
from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from ..primitives import elementwise as _ew
from ..primitives import reductions as _r
from ..tracer import dtypes, executor
from ..tracer.array import Array
from ..tracer.errors import ConcretizationTypeError
from ..tracer.shapes import canonicalize_axes, canonicalize_axis, index_arg
from ._promotion import aval_of, convert, promote_args, promote_dtypes
from ._shape import broadcast_to, expand_dims, ravel, reshape
from ._ufuncs import (_as_bool, conj, equal, isclose, isnan, logical_and, logical_not,
                      logical_or, maximum, minimum, multiply, real, sqrt, subtract, true_divide,
                      where)

eager = executor.installed().eager  # the eager short paths (backends/eager.py)

ArrayLike = Any
Axis = int | Sequence[int] | None


def _prep(name: str, a: ArrayLike) -> tuple[Any, Any]:
    (a,) = promote_args(name, a)
    return a, aval_of(a)


def _accumulation_dtype(dt: np.dtype, promote_integers: bool = True) -> np.dtype:
    # JAX's rule: narrower integers widen to the default int / uint (64 bits with x64)
    if dt == dtypes.bool_:
        return dtypes.DEFAULT_INT
    if not promote_integers:
        return dt
    if dt.kind == "i" and dt.itemsize < dtypes.DEFAULT_INT.itemsize:
        return dtypes.DEFAULT_INT
    if dt.kind == "u" and dt.itemsize < dtypes.DEFAULT_UINT.itemsize:
        return dtypes.DEFAULT_UINT
    return dt


def _keep(out: Any, shape: tuple, axes: tuple, keepdims: bool) -> Any:
    if not keepdims:
        return out
    return reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _masked(a: Any, where_: Any, identity: Any) -> Any:
    return a if where_ is None else where(where_, a, identity)


# Eager sums and means: (id(aval), axis) -> (aval, canonical axes, or None where the short
# path does not apply), for an axis given as None, an int or a tuple of ints
_eager_axes: dict = {}


def _eager_sum_axes(a: Any, axis: Any) -> Any:
    """The canonical axes of an eager sum of the Array ``a`` over ``axis`` when the general
    path would sum it as it is (a dtype that accumulates in itself), else None."""
    aval = a._aval
    ta = type(axis)
    if ta is tuple:
        for d in axis:
            if type(d) is not int:
                return None
    elif ta is not int and axis is not None:
        return None
    try:
        key = (id(aval), ta, axis, dtypes.DEFAULT_INT)  # (the accumulation dtype follows x64)
        hit = _eager_axes.get(key)
    except TypeError:
        return None
    if hit is None:
        axes = None
        # (sum converts a weakly typed operand to its strong dtype first)
        if _accumulation_dtype(aval.dtype) == aval.dtype and not aval.weak_type:
            try:
                axes = canonicalize_axes(axis, aval.ndim, "sum")
            except Exception:  # noqa: BLE001 - the general path raises it again
                pass
        if len(_eager_axes) >= 4096:
            _eager_axes.clear()
        hit = _eager_axes[key] = (aval, axes)
    return hit[1]


def _eager_sum(a: Any, axis: Any) -> Any:
    axes = _eager_sum_axes(a, axis)
    if axes is None:
        return None
    return eager.call1(_r.reduce_sum_p, a, {"axes": axes})


def sum(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,  # noqa: A001
        keepdims: bool = False, initial: Any = None, where: ArrayLike | None = None,
        promote_integers: bool = True) -> Any:
    """Sum over ``axis`` (all axes by default).

    Args:
      a: the input.
      axis: an axis or tuple of axes; None sums everything.
      dtype: the accumulation and result dtype (default: the input's, with booleans and narrow
        integers widened to 32 bits).
      keepdims: keep reduced axes as size 1.
      initial: a value added to the sum.
      where: a boolean mask of the elements to include.
      promote_integers: widen booleans and integers narrower than 32 bits (False keeps
        their dtype; booleans still become the default int).

    Returns:
      The sums.
    """
    if type(a) is Array and dtype is None and out is None and not keepdims and \
            initial is None and where is None:
        r = _eager_sum(a, axis)
        if r is not None:
            return r
    _no_out(out, "sum")
    a, av = _prep("sum", a)
    a = convert(a, dtypes.requested(dtype, "sum") if dtype else
                _accumulation_dtype(av.dtype, promote_integers))
    a = _masked(a, where, 0)
    axes = canonicalize_axes(axis, av.ndim, "sum")
    r = _keep(lax.reduce_sum(a, axes), av.shape, axes, keepdims)
    return r if initial is None else promote_args("sum", r, initial)[0] + initial


def prod(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
         keepdims: bool = False, initial: Any = None, where: ArrayLike | None = None,
         promote_integers: bool = True) -> Any:
    """Product over ``axis`` (see :func:`sum` for the arguments)."""
    _no_out(out, "prod")
    a, av = _prep("prod", a)
    a = convert(a, dtypes.requested(dtype, "prod") if dtype else
                _accumulation_dtype(av.dtype, promote_integers))
    a = _masked(a, where, 1)
    axes = canonicalize_axes(axis, av.ndim, "prod")
    r = _keep(lax.reduce_prod(a, axes), av.shape, axes, keepdims)
    return r if initial is None else r * initial


def _extreme(name: str, reducer: Any, identity: Any, bool_reducer: Any) -> Any:
    def f(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
          initial: Any = None, where: ArrayLike | None = None) -> Any:
        _no_out(out, name)
        a, av = _prep(name, a)
        axes = canonicalize_axes(axis, av.ndim, name)
        if where is not None:
            if initial is None:
                raise ValueError(f"{name}: reducing with 'where' needs 'initial'")
            a = where_(where, a, initial)
        elif initial is None and builtins.any(av.shape[i] == 0 for i in axes):
            raise ValueError(f"{name}: zero-size array to reduction operation {name} which has "
                             "no identity (pass 'initial')")
        red = bool_reducer if av.dtype == dtypes.bool_ else reducer
        r = _keep(red(a, axes), av.shape, axes, keepdims)
        if initial is not None:
            r = (maximum if name in ("max", "amax") else minimum)(r, initial)
        return r
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"The {name} over ``axis`` (NaN propagates). ``initial`` also bounds the "
                 "result; ``where`` masks elements (with ``initial``).")
    return f


def where_(cond: Any, x: Any, y: Any) -> Any:
    return where(cond, x, y)


max = amax = _extreme("max", lambda a, ax: lax.reduce_max(a, ax), -np.inf,  # noqa: A001
                      lambda a, ax: lax.reduce_or(a, ax))
min = amin = _extreme("min", lambda a, ax: lax.reduce_min(a, ax), np.inf,  # noqa: A001
                      lambda a, ax: lax.reduce_and(a, ax))


def ptp(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Any:
    """Range (max - min) over ``axis``."""
    return subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def all(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,  # noqa: A001
        *, where: ArrayLike | None = None) -> Any:
    """Whether every element (over ``axis``) is true."""
    _no_out(out, "all")
    b = _as_bool(a)
    av = aval_of(b)
    b = _masked(b, where, True)
    axes = canonicalize_axes(axis, av.ndim, "all")
    return _keep(lax.reduce_and(b, axes), av.shape, axes, keepdims)


def any(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,  # noqa: A001
        *, where: ArrayLike | None = None) -> Any:
    """Whether any element (over ``axis``) is true."""
    _no_out(out, "any")
    b = _as_bool(a)
    av = aval_of(b)
    b = _masked(b, where, False)
    axes = canonicalize_axes(axis, av.ndim, "any")
    return _keep(lax.reduce_or(b, axes), av.shape, axes, keepdims)


def count_nonzero(a: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Number of non-zero elements over ``axis``."""
    return sum(_as_bool(a), axis=axis, keepdims=keepdims, dtype=dtypes.DEFAULT_INT)


def _count(shape: tuple, axes: tuple) -> int:
    return math.prod(shape[i] for i in axes)


def _upcast_f16(dt: np.dtype) -> np.dtype:
    # 16-bit floats compute in float32 (JAX's rule): their 11 or 8 significant bits would
    # stop a running sum growing at 2048 or 256 and their range overflows a count past 65504
    return dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt


def _normalizer(shape: tuple, axes: tuple, where_: Any, keepdims: bool, dt: np.dtype) -> Any:
    """The number of elements reduced into each output (JAX's ``_count``), in dtype ``dt``."""
    if where_ is None:
        return convert(_count(shape, axes), dt)
    return sum(_broadcast_mask(where_, shape), axis=axes, keepdims=keepdims, dtype=dt)


def mean(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
         keepdims: bool = False, *, where: ArrayLike | None = None) -> Any:
    """Arithmetic mean over ``axis``.

    Args:
      a: the input.
      axis: an axis or tuple of axes; None averages everything.
      dtype: the result dtype (default: the input's, float32 for integers and booleans).
      keepdims: keep reduced axes as size 1.
      where: a boolean mask of the elements to include.

    Returns:
      The means. Without ``dtype``, float16/bfloat16 input is summed and divided by the count
      in float32 and rounded once at the end, as JAX does; an explicit ``dtype`` computes in it.
    """
    if type(a) is Array and dtype is None and out is None and not keepdims and where is None \
            and dtypes.is_inexact(a._aval.dtype) and _upcast_f16(a._aval.dtype) == a._aval.dtype:
        r = _eager_mean(a, axis)
        if r is not None:
            return r
    _no_out(out, "mean")
    a, av = _prep("mean", a)
    result = dtypes.requested(dtype, "mean") if dtype else (
        dtypes.to_inexact(av.dtype))
    comp = _upcast_f16(result) if dtype is None else result
    axes = canonicalize_axes(axis, av.ndim, "mean")
    s = sum(a, axis=axes, dtype=comp, keepdims=keepdims, where=where)
    return convert(true_divide(s, _normalizer(av.shape, axes, where, keepdims, comp)), result)


def _eager_mean(a: Any, axis: Any) -> Any:
    """mean's general path for an inexact Array summed as it is: the sum divided by the count
    (a strongly typed scalar of the dtype), by the eager short paths; None where they do not
    apply."""
    aval = a._aval
    axes = _eager_sum_axes(a, axis)
    if axes is None:
        return None
    s = eager.call1(_r.reduce_sum_p, a, {"axes": axes})
    if s is None:
        return None
    return eager.binary(_ew.div_p, s, convert(_count(aval.shape, axes), aval.dtype))


def _broadcast_mask(where_: Any, shape: tuple) -> Any:
    return broadcast_to(_as_bool(where_), shape)


def _var_dtypes(name: str, a_dtype: np.dtype, dtype: Any) -> tuple[np.dtype, np.dtype]:
    """(computation dtype, result dtype) of var/nanvar, as JAX's ``_var_promote_types``."""
    if dtype:
        dt = dtypes.requested(dtype, name)
        if dtypes.is_complex(a_dtype) and not dtypes.is_complex(dt):
            raise ValueError(f"{name}: a real 'dtype' for the variance of complex values is "
                             "not supported (as in JAX)")
        return _upcast_f16(dt), dt
    if not dtypes.is_inexact(a_dtype):
        return dtypes.to_inexact(a_dtype), dtypes.to_inexact(a_dtype)
    return _upcast_f16(a_dtype), np.zeros((), a_dtype).real.dtype


def _squared_deviation(centered: Any) -> Any:
    if dtypes.is_complex(aval_of(centered).dtype):
        return real(multiply(centered, conj(centered)))
    return multiply(centered, centered)


_mean = mean  # (var's 'mean' argument shadows the function there)


def var(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: ArrayLike | None = None,
        correction: int | float | None = None, mean: ArrayLike | None = None) -> Any:
    """Variance over ``axis``: the summed squared deviation from the mean over ``N - ddof``.

    Args:
      a: the input.
      axis: an axis or tuple of axes; None reduces everything.
      dtype: the result dtype (default: the input's real dtype, float32 for integers).
      ddof: subtracted from the count ``N`` of the divisor.
      keepdims: keep reduced axes as size 1.
      where: a boolean mask of the elements to include.
      correction: another name for ``ddof`` (the Array API's), which it overrides.
      mean: a precomputed mean to use (shaped as with ``keepdims=True``).

    Returns:
      The variances; NaN where ``N - ddof <= 0``. float16/bfloat16 compute in float32, as JAX.
    """
    _no_out(out, "var")
    if correction is not None:
        ddof = correction
    a, av = _prep("var", a)
    comp, result = _var_dtypes("var", av.dtype, dtype)
    a = convert(a, comp)
    axes = canonicalize_axes(axis, av.ndim, "var")
    if mean is None:
        center = _mean(a, axes, dtype=comp, keepdims=True, where=where)
    else:
        center = convert(promote_args("var", mean)[0], comp)
        _check_mean_shape("var", aval_of(center).shape, av.shape, axes)
    sq = _squared_deviation(subtract(a, center))
    sq_dt = aval_of(sq).dtype
    denom = subtract(_normalizer(av.shape, axes, where, keepdims, sq_dt), convert(ddof, sq_dt))
    r = convert(true_divide(sum(sq, axis=axes, dtype=sq_dt, keepdims=keepdims, where=where),
                            denom), result)
    return where_(denom > 0, r, np.nan)


def std(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: ArrayLike | None = None,
        correction: int | float | None = None, mean: ArrayLike | None = None) -> Any:
    """Standard deviation over ``axis`` (the square root of :func:`var`)."""
    return sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction,
                    mean=mean))


def _check_mean_shape(name: str, mshape: tuple, shape: tuple, axes: tuple) -> None:
    want = tuple(1 if i in axes else d for i, d in enumerate(shape))
    try:
        ok = mshape == want or np.broadcast_shapes(mshape, want) == want
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{name}: argument 'mean' must have the keepdims=True shape {want} "
                         f"of the result, got {mshape}")


def average(a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None,
            returned: bool = False, keepdims: bool = False) -> Any:
    """Weighted average over ``axis``; ``returned`` also gives the sum of the weights.

    float16/bfloat16 sums and their quotient are computed in float32 and rounded once (JAX
    rounds each weighted sum to 16 bits first, so 70000 unit weights overflow to inf there).
    """
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        a2, av = _prep("average", a)
        n = _count(av.shape, canonicalize_axes(axis, av.ndim, "average"))
        wsum = convert(n, aval_of(avg).dtype)
        wsum = broadcast_to(wsum, aval_of(avg).shape)
    else:
        a, w = promote_dtypes("average", a, weights)
        av, wv = aval_of(a), aval_of(w)
        if not dtypes.is_inexact(av.dtype):
            a, w = convert(a, dtypes.DEFAULT_FLOAT), convert(w, dtypes.DEFAULT_FLOAT)
        if wv.shape != av.shape:
            if axis is None or wv.ndim != 1:
                raise ValueError("average: 1-D weights need an axis; otherwise weights must "
                                 "have the shape of a")
            ax = canonicalize_axis(axis, av.ndim, "average")
            if wv.shape[0] != av.shape[ax]:
                raise ValueError("average: weights length differs from a's size along axis")
            w = reshape(w, tuple(wv.shape[0] if i == ax else 1 for i in range(av.ndim)))
        result = aval_of(a).dtype
        comp = _upcast_f16(result)
        wsum = sum(_bcast(w, av.shape), axis, dtype=comp, keepdims=keepdims)
        avg = convert(true_divide(sum(multiply(convert(a, comp), convert(w, comp)), axis,
                                      keepdims=keepdims), wsum), result)
        wsum = convert(wsum, result)
    return (avg, wsum) if returned else avg


def _bcast(x: Any, shape: tuple) -> Any:
    return broadcast_to(x, shape)


# ---- arg-reductions ----

def _arg(name: str, laxop: Any) -> Any:
    def f(a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool = False) -> Any:
        _no_out(out, name)
        a, av = _prep(name, a)
        if axis is None:
            r = laxop(ravel(a), 0, dtypes.DEFAULT_INT)
            return reshape(r, (1,) * av.ndim) if keepdims else r
        ax = canonicalize_axis(axis, av.ndim, name)
        r = laxop(a, ax, dtypes.DEFAULT_INT)
        return expand_dims(r, ax) if keepdims else r
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Index of the first {'maximum' if 'max' in name else 'minimum'} over "
                 "``axis`` (flattened when None); NaN counts as the extreme, as NumPy.")
    return f


argmax = _arg("argmax", lambda a, ax, dt: lax.argmax(a, ax, dt))
argmin = _arg("argmin", lambda a, ax, dt: lax.argmin(a, ax, dt))


# ---- cumulative ----

def _cumulative_reduce(name: str, laxop: Any, a: ArrayLike, axis: int | None, dtype: Any,
                       promote_integers: bool = False) -> Any:
    """JAX's dtype rule for cumulative reductions: the input's dtype (bool counts in the
    default int; ``promote_integers`` widens small integers too), or ``dtype``; a bool
    ``dtype`` accumulates ``a != 0`` in the default int and returns bool."""
    a, av = _prep(name, a)
    if axis is None:
        a, av = ravel(a), aval_of(ravel(a))
        axis = 0
    ax = canonicalize_axis(axis, av.ndim, name)
    want = dtypes.requested(dtype, name) if dtype is not None else None
    if want is None:
        result = _accumulation_dtype(av.dtype) if promote_integers or \
            av.dtype == dtypes.bool_ else av.dtype
        compute = result
    elif want == dtypes.bool_:  # counting, not the values, decides (so [-1, 1] is True)
        a, result, compute = _as_bool(a), want, _accumulation_dtype(want)
    else:
        result = compute = want
    return convert(laxop(convert(a, compute), axis=ax), result)


def cumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Inclusive cumulative sum along ``axis`` (flattened when None), in ``a``'s dtype (bool
    counts in the default int) or ``dtype``."""
    _no_out(out, "cumsum")
    return _cumulative_reduce("cumsum", lax.cumsum, a, axis, dtype)


def cumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Inclusive cumulative product along ``axis`` (flattened when None), in ``a``'s dtype
    (bool in the default int) or ``dtype``."""
    _no_out(out, "cumprod")
    return _cumulative_reduce("cumprod", lax.cumprod, a, axis, dtype)


def _cumulative_array_api(name: str, laxop: Any, initial: int, promote_integers: bool) -> Any:
    def f(x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None,
          include_initial: bool = False) -> Any:
        x, xv = _prep(name, x)
        if xv.ndim == 0:
            raise ValueError(f"{name}: the input must be non-scalar, got a scalar")
        if axis is None:
            if xv.ndim > 1:
                raise ValueError(f"{name}: the input array has rank {xv.ndim}, but axis was "
                                 "not set; it is optional only for one-dimensional arrays")
            axis = 0
        ax = canonicalize_axis(axis, xv.ndim, name)
        out = _cumulative_reduce(name, laxop, x, ax, dtype, promote_integers)
        if include_initial:
            shape = tuple(1 if d == ax else n for d, n in enumerate(xv.shape))
            out = lax.concatenate([lax.full(shape, initial, aval_of(out).dtype), out], ax)
        return out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Array-API cumulative {name[11:]} along ``axis`` (optional for 1-D input); "
                 f"small integers {'widen' if promote_integers else 'keep their dtype'}, and "
                 f"``include_initial`` prepends {initial}.")
    return f


cumulative_sum = _cumulative_array_api("cumulative_sum", lax.cumsum, 0, True)
cumulative_prod = _cumulative_array_api("cumulative_prod", lax.cumprod, 1, False)


# ---- counting ----

def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *,
             length: int | None = None) -> Any:
    """The number of occurrences of each value of ``x`` (or the sum of their ``weights``).

    As JAX: negative values count in bin 0, values at or beyond ``length`` are dropped, and the
    result has ``length`` bins if given (static; required under ``jit``), else
    ``max(minlength, x.max() + 1)`` (``minlength`` for an empty ``x``).

    Args:
      x: a one-dimensional integer (or bool) array.
      weights: an array of ``x``'s shape; its dtype is the result's (default: the default
        integer dtype, counting each occurrence once).
      minlength: the least number of bins when ``length`` is None.
      length: the number of bins.

    Returns:
      A one-dimensional array of the bins.
    """
    (x,) = promote_args("bincount", x)
    xv = aval_of(x)
    if xv.dtype == dtypes.bool_:
        x = convert(x, dtypes.int32)
    elif not dtypes.is_integer(xv.dtype):
        raise TypeError(f"bincount: argument 'x' must have an integer type, got {xv.dtype}")
    if xv.ndim != 1:
        raise ValueError(f"bincount: argument 'x' must be one-dimensional, got shape {xv.shape}")
    minlength = index_arg(minlength, "bincount", "minlength")
    if length is None:
        values = getattr(x, "to_concrete_value", lambda: None)()
        if values is None:
            raise ConcretizationTypeError(
                "bincount: the number of bins depends on the traced values of argument 'x': "
                "pass a static 'length' under jit")
        length = builtins.max(minlength, int(builtins.max(0, values.max())) + 1 if values.size
                              else 0)
    else:
        length = index_arg(length, "bincount", "length")
    if length < 0:
        raise ValueError(f"bincount: argument 'length' must be non-negative, got {length}")
    if weights is None:
        weights = convert(1, dtypes.DEFAULT_INT)
    else:
        (weights,) = promote_args("bincount", weights)
        if aval_of(weights).shape != xv.shape:
            raise ValueError(f"bincount: argument 'weights' must have the shape of 'x' "
                             f"{xv.shape}, got {aval_of(weights).shape}")
    bins = lax.full((length,), 0, aval_of(weights).dtype)
    return bins.at[lax.max(x, lax.full_like(x, 0))].add(weights, mode="drop")


# ---- order statistics ----


# ---- NaN-ignoring variants ----

def _nan_to(a: Any, value: Any) -> Any:
    (a,) = promote_args("nan", a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return a
    return where(isnan(a), value, a)


def nansum(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
           keepdims: bool = False, initial: Any = None, where: ArrayLike | None = None) -> Any:
    """Sum treating NaN as zero."""
    return sum(_nan_to(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, initial: Any = None, where: ArrayLike | None = None) -> Any:
    """Product treating NaN as one."""
    return prod(_nan_to(a, 1), axis, dtype, out, keepdims, initial, where)


def nanmax(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: ArrayLike | None = None) -> Any:
    """Maximum ignoring NaN (NaN only where a slice is all NaN)."""
    r = max(_nan_to(a, -np.inf), axis, keepdims=keepdims, initial=initial, where=where)
    return _all_nan_to_nan(a, r, axis, keepdims)


def nanmin(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: ArrayLike | None = None) -> Any:
    """Minimum ignoring NaN (NaN only where a slice is all NaN)."""
    r = min(_nan_to(a, np.inf), axis, keepdims=keepdims, initial=initial, where=where)
    return _all_nan_to_nan(a, r, axis, keepdims)


def _all_nan_to_nan(a: Any, r: Any, axis: Axis, keepdims: bool) -> Any:
    (a,) = promote_args("nan", a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return r
    return where(all(isnan(a), axis, keepdims=keepdims), np.nan, r)


def _nanarg(name: str, arg: Any, fill: float) -> Any:
    def f(a: ArrayLike, axis: int | None = None, out: None = None,
          keepdims: bool = False) -> Any:
        _no_out(out, name)
        (a,) = promote_args(name, a)
        if not dtypes.is_inexact(aval_of(a).dtype):
            return arg(a, axis, keepdims=keepdims)
        nan = isnan(a)
        r = arg(where(nan, fill, a), axis, keepdims=keepdims)
        return where(all(nan, axis, keepdims=keepdims), -1, r)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Index of the {'maximum' if 'max' in name else 'minimum'} over ``axis`` "
                 "ignoring NaN (flattened when None); -1 where every value is NaN, as JAX.")
    return f


nanargmax = _nanarg("nanargmax", argmax, -np.inf)
nanargmin = _nanarg("nanargmin", argmin, np.inf)


def nanmean(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, *, where: ArrayLike | None = None) -> Any:
    """Mean ignoring NaN."""
    (a,) = promote_args("nanmean", a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return mean(a, axis, dtype, keepdims=keepdims, where=where)
    mask = logical_not(isnan(a))
    if where is not None:
        mask = logical_and(mask, where)
    return mean(a, axis, dtype, keepdims=keepdims, where=mask)


def nanvar(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, *, where: ArrayLike | None = None,
           mean: ArrayLike | None = None) -> Any:
    """Variance ignoring NaN (see :func:`var`); NaN where fewer than ``ddof + 1`` values are
    not NaN."""
    _no_out(out, "nanvar")
    a, av = _prep("nanvar", a)
    comp, result = _var_dtypes("nanvar", av.dtype, dtype)
    a = convert(a, comp)
    axes = canonicalize_axes(axis, av.ndim, "nanvar")
    nan = isnan(a)
    if mean is None:
        m = nanmean(a, axes, dtype=comp, keepdims=True, where=where)
    else:
        m = convert(promote_args("nanvar", mean)[0], comp)
        _check_mean_shape("nanvar", aval_of(m).shape, av.shape, axes)
    sq = _squared_deviation(where_(nan, convert(0, comp), subtract(a, m)))
    # the count is an integer, so ddof past it is exact; then a float divisor of 1 where the
    # result is NaN anyway
    n = subtract(sum(logical_not(nan), axis=axes, keepdims=keepdims, where=where), ddof)
    empty = n <= 0
    s = where_(empty, np.nan, sum(sq, axis=axes, keepdims=keepdims, where=where))
    sq_dt = aval_of(s).dtype
    return convert(true_divide(s, convert(where_(empty, 1, n), sq_dt)), result)


def nanstd(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, *, where: ArrayLike | None = None,
           mean: ArrayLike | None = None) -> Any:
    """Standard deviation ignoring NaN."""
    return sqrt(nanvar(a, axis, dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean))


def nancumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Cumulative sum treating NaN as zero."""
    return cumsum(_nan_to(a, 0), axis, dtype)


def nancumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None,
               out: None = None) -> Any:
    """Cumulative product treating NaN as one."""
    return cumprod(_nan_to(a, 1), axis, dtype)


# ---- comparisons of whole arrays ----

def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Any:
    """True when every element of ``a`` is close to ``b`` (see :func:`isclose`)."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Any:
    """True when both have one shape and equal elements."""
    if aval_of(promote_args("array_equal", a1)[0]).shape != \
            aval_of(promote_args("array_equal", a2)[0]).shape:
        return convert(False, dtypes.bool_)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Any:
    """True when the arrays broadcast to one shape and are equal element-wise."""
    try:
        return all(equal(a1, a2))
    except ValueError:
        return convert(False, dtypes.bool_)


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise TypeError(f"{name}: the 'out' argument is not supported (arrays are immutable)")
