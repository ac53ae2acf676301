"""Differences, integration, interpolation and second moments: ediff1d, gradient,
trapezoid, interp, unwrap, cov, corrcoef (JAX's formulations, differentiable where JAX's
are)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.shapes import canonicalize_axis, index_tuple
from ._creation import asarray
from ._indexing import take
from ._linalg import dot
from ._promotion import aval_of, convert, promote_args_inexact, promote_dtypes_inexact
from ._reductions import average, cumsum, sum as sum_
from ._shape import atleast_2d, concatenate, diff, moveaxis, ravel, reshape, vstack
from ._sorting import searchsorted
from ._ufuncs import (abs as abs_, clip, conj, imag, real, remainder, sqrt, true_divide,
                      where)

ArrayLike = Any


def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None,
            to_begin: ArrayLike | None = None) -> Any:
    """Differences of consecutive elements of the flattened ``ary``, with ``to_begin`` and
    ``to_end`` (cast to ``ary``'s dtype) added around them."""
    a = ravel(asarray(ary))
    out = diff(a)
    dt = aval_of(a).dtype
    if to_begin is not None:
        out = concatenate([ravel(convert(asarray(to_begin), dt)), out])
    if to_end is not None:
        out = concatenate([out, ravel(convert(asarray(to_end), dt))])
    return out


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """The numerical gradient of sampled ``f``: central differences inside, one-sided
    first-order differences at the edges.

    Args:
      f: the samples.
      *varargs: spacing: none (1), one scalar for every axis, or one scalar or 1-D coordinate
        array per axis.
      axis: the axes to differentiate along (default: all).
      edge_order: only None/1 is supported (as JAX).

    Returns:
      One array per axis (a list), or one array if a single axis is given.
    """
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("gradient: argument 'edge_order' is not supported (the "
                                  "edges are first-order)")
    a, *spacing = promote_dtypes_inexact("gradient", f, *varargs)
    av = aval_of(a)
    axes = tuple(range(av.ndim)) if axis is None else tuple(
        canonicalize_axis(i, av.ndim, "gradient") for i in index_tuple(axis, "gradient",
                                                                        "axis"))
    if not axes:
        return []
    if min(av.shape[i] for i in axes) < 2:
        raise ValueError("gradient: argument 'f' is too small to calculate a numerical "
                         "gradient: at least 2 elements are required along each axis")
    if len(spacing) == 0:
        dx: list[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        dx = list(spacing) * len(axes)
    elif len(spacing) == len(axes):
        dx = list(spacing)
    else:
        raise TypeError(f"gradient: got {len(spacing)} spacing arguments for {len(axes)} "
                        "axes")
    out = [_gradient_axis(a, h, ax) for h, ax in zip(dx, axes)]
    return out[0] if axis is not None and len(axes) == 1 and not isinstance(axis, (tuple, list)) \
        else out


def _gradient_axis(a: Any, h: Any, axis: int) -> Any:
    def sl(x: Any, lo: int | None, hi: int | None) -> Any:
        n = aval_of(x).shape[axis]
        lo = 0 if lo is None else (lo + n if lo < 0 else lo)
        hi = n if hi is None else (hi + n if hi < 0 else hi)
        return lax.slice_in_dim(x, lo, hi, axis=axis)
    upper = sl(a, 1, 2) - sl(a, 0, 1)
    lower = sl(a, -1, None) - sl(a, -2, -1)
    if np.ndim(h) == 0:
        inner = (sl(a, 2, None) - sl(a, None, -2)) * 0.5 / h
        lower = lower / h
        upper = upper / h
    elif np.ndim(h) == 1:
        if aval_of(h).shape[0] != aval_of(a).shape[axis]:
            raise ValueError("gradient: a spacing array must have the length of the dimension "
                             "it is for")
        shape = [1] * aval_of(a).ndim
        shape[axis] = aval_of(h).shape[0]
        h = reshape(h, tuple(shape))
        upper = upper / (sl(h, 1, 2) - sl(h, 0, 1))
        lower = lower / (sl(h, -1, None) - sl(h, -2, -1))
        dx1 = sl(h, 1, -1) - sl(h, 0, -2)
        dx2 = sl(h, 2, None) - sl(h, 1, -1)
        ca = -dx2 / (dx1 * (dx1 + dx2))
        cb = (dx2 - dx1) / (dx1 * dx2)
        cc = dx1 / (dx2 * (dx1 + dx2))
        inner = ca * sl(a, 0, -2) + cb * sl(a, 1, -1) + cc * sl(a, 2, None)
    else:
        raise ValueError("gradient: spacing arrays must be 1-D or scalars")
    return concatenate([upper, inner, lower], axis=axis)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0,
              axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the composite trapezoidal rule, at sample
    points ``x`` (1-D, or shaped like ``y``) or with constant spacing ``dx``."""
    if x is None:
        (y,) = promote_args_inexact("trapezoid", y)
        ax = canonicalize_axis(axis, aval_of(y).ndim, "trapezoid")
        y = moveaxis(y, ax, -1)
        d = dx
    else:
        y, x = promote_dtypes_inexact("trapezoid", y, x)
        ax = canonicalize_axis(axis, aval_of(y).ndim, "trapezoid")
        y = moveaxis(y, ax, -1)
        if aval_of(x).ndim == 1:
            d = diff(x)
        else:
            d = diff(moveaxis(x, ax, -1), axis=-1)
    n = aval_of(y).shape[-1]
    if n == 0:
        return sum_(y, axis=-1) * 0.5
    mid = lax.slice_in_dim(y, 1, n, axis=-1) + lax.slice_in_dim(y, 0, n - 1, axis=-1)
    return 0.5 * sum_(d * mid, axis=-1)


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | str | None = None,
           right: ArrayLike | str | None = None, period: ArrayLike | None = None) -> Any:
    """Piecewise-linear interpolation of the points (xp, fp) at ``x``.

    Args:
      x: where to evaluate.
      xp: increasing sample coordinates (1-D).
      fp: sample values, like ``xp`` (complex allowed).
      left, right: the value below ``xp[0]`` / above ``xp[-1]`` (default the end values;
        ``"extrapolate"`` extends the end segments).
      period: the period of periodic ``xp`` (then left/right are ignored).
    """
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if aval_of(xp).shape != aval_of(fp).shape or aval_of(xp).ndim != 1:
        raise ValueError("interp: arguments 'xp' and 'fp' must be 1-D arrays of equal size, "
                         f"got shapes {aval_of(xp).shape} and {aval_of(fp).shape}")
    if aval_of(xp).shape[0] == 0:
        raise ValueError("interp: arguments 'xp' and 'fp' must be non-empty")
    x, xp = promote_dtypes_inexact("interp", x, xp)
    (fp,) = promote_dtypes_inexact("interp", fp)
    ext = {}
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str) and v != "extrapolate":
            raise ValueError(f"interp: the only valid string value of argument '{name}' is "
                             f"'extrapolate', got {v!r}")
        ext[name] = isinstance(v, str)
    if dtypes.is_complex(aval_of(x).dtype):
        raise ValueError("interp: complex values of argument 'x' are not supported")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"interp: argument 'period' must be a scalar, got {period!r}")
        period = abs_(period)
        x = remainder(x, period)
        xp = remainder(xp, period)
        xp, fp = lax.sort((xp, fp), dimension=0, num_keys=1)
        m = aval_of(xp).shape[0]
        xp = concatenate([xp[m - 1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[m - 1:], fp, fp[:1]])
    m = aval_of(xp).shape[0]
    i = clip(searchsorted(xp, x, side="right"), 1, max(m - 1, 1))
    im1 = i - 1
    f_hi, f_lo = take(fp, i, mode="clip"), take(fp, im1, mode="clip")
    x_hi, x_lo = take(xp, i, mode="clip"), take(xp, im1, mode="clip")
    df, dx = f_hi - f_lo, x_hi - x_lo
    delta = x - x_lo
    eps = float(np.spacing(np.finfo(dtypes.canonicalize(aval_of(xp).dtype)
                                    if aval_of(xp).dtype != dtypes.bfloat16 else np.float32).eps))
    dx0 = lax.le(abs_(dx), lax.full_like(dx, eps))  # no NaN gradients on repeated xp
    f = where(dx0, f_lo, f_lo + (delta / where(dx0, 1, dx)) * df)
    if not ext["left"] and period is None:
        f = where(lax.lt(x, xp[0]), fp[0] if left is None else left, f)
    if not ext["right"] and period is None:
        f = where(lax.gt(x, xp[m - 1]), fp[m - 1] if right is None else right, f)
    return f


def unwrap(p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1,
           period: ArrayLike = 2 * np.pi) -> Any:
    """``p`` with jumps larger than ``discont`` (default ``period / 2``) along ``axis``
    replaced by their ``period`` complement."""
    (p,) = promote_args_inexact("unwrap", p)
    if dtypes.is_complex(aval_of(p).dtype):
        raise ValueError("unwrap: argument 'p' must be real")
    ax = canonicalize_axis(axis, aval_of(p).ndim, "unwrap")
    n = aval_of(p).shape[ax]
    if n < 2:
        return p
    interval = period / 2
    discont = interval if discont is None else discont
    dd = diff(p, axis=ax)
    ddmod = remainder(dd + interval, period) - interval
    ddmod = where(lax.eq(ddmod, lax.full_like(ddmod, -interval)) & lax.gt(dd, lax.full_like(
        dd, 0)), interval, ddmod)
    correct = where(lax.lt(abs_(dd), lax.full_like(dd, 0) + discont), 0, ddmod - dd)
    head = lax.slice_in_dim(p, 0, 1, axis=ax)
    tail = lax.slice_in_dim(p, 1, n, axis=ax) + cumsum(correct, axis=ax)
    return concatenate([head, tail], axis=ax)


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: ArrayLike | None = None,
        aweights: ArrayLike | None = None, dtype: Any = None) -> Any:
    """The (weighted) covariance matrix of the variables in ``m`` (rows, or columns when not
    ``rowvar``), with ``y``'s stacked after them.

    Args:
      m: (M, N) observations of M variables (1-D: one variable).
      y: more variables, shaped like ``m``.
      rowvar: rows are variables (else columns).
      bias: normalize by N (else N - 1); overridden by ``ddof``.
      ddof: the delta degrees of freedom.
      fweights: integer frequency weights, one per observation.
      aweights: relative observation weights.
      dtype: the computation dtype (inexact).

    Returns:
      (M, M) covariances, or a scalar for one variable.
    """
    if dtype is not None and not dtypes.is_inexact(np.dtype(dtype)):
        raise ValueError(f"cov: argument 'dtype' must be a floating or complex type, got "
                         f"{dtype}")
    if m is not None and np.ndim(m) > 2:
        raise ValueError(f"cov: argument 'm' has more than 2 dimensions ({np.ndim(m)})")
    if y is not None and np.ndim(y) > 2:
        raise ValueError(f"cov: argument 'y' has more than 2 dimensions ({np.ndim(y)})")
    x = atleast_2d(asarray(m))
    if dtype is not None:
        x = convert(x, dtypes.requested(dtype, "cov"))
    if not rowvar and aval_of(x).shape[0] != 1:
        x = x.T
    if aval_of(x).shape[0] == 0:
        return asarray([]).reshape(0, 0)
    if y is not None:
        yy = atleast_2d(asarray(y))
        if not rowvar and aval_of(yy).shape[0] != 1:
            yy = yy.T
        x = vstack([x, yy])
    (x,) = promote_dtypes_inexact("cov", x)
    if ddof is None:
        ddof = 0 if bias else 1
    n = aval_of(x).shape[1]
    w = None
    if fweights is not None:
        fw = asarray(fweights)
        if aval_of(fw).ndim > 1:
            raise RuntimeError("cov: argument 'fweights' must be 1-D")
        if aval_of(fw).shape[0] != n:
            raise RuntimeError("cov: argument 'fweights' must have one entry per observation")
        if not dtypes.is_integer(aval_of(fw).dtype):
            raise TypeError("cov: argument 'fweights' must be integer")
        w = fw
    if aweights is not None:
        aw = asarray(aweights)
        if aval_of(aw).ndim > 1:
            raise RuntimeError("cov: argument 'aweights' must be 1-D")
        if aval_of(aw).shape[0] != n:
            raise RuntimeError("cov: argument 'aweights' must have one entry per observation")
        w = aw if w is None else w * aw
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        f = n - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = w_sum - ddof
    else:
        f = w_sum - ddof * sum_(w * aweights) / w_sum
    x = x - avg[:, None]
    xt = (x if w is None else x * w).T
    c = dot(x, conj(xt)) * (1 / f)
    return c[0, 0] if aval_of(c).shape == (1, 1) else c


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True,
             dtype: Any = None) -> Any:
    """Pearson correlation coefficients: :func:`cov` normalized by the standard deviations
    (real parts clipped to [-1, 1])."""
    if dtype is not None and not dtypes.is_inexact(np.dtype(dtype)):
        raise ValueError(f"corrcoef: argument 'dtype' must be a floating or complex type, "
                         f"got {dtype}")
    c = cov(x, y, rowvar, dtype=dtype)
    if aval_of(c).ndim == 0:
        return true_divide(c, c)  # one variable: 1 (NaN if it has no variance)
    d = real(lax.broadcast_in_dim(
        lax.slice(c.reshape(-1), (0,), (aval_of(c).size,), (aval_of(c).shape[0] + 1,)),
        (aval_of(c).shape[0],), (0,)))
    s = sqrt(d)
    c = c / s[:, None]
    c = c / s[None, :]
    if dtypes.is_complex(aval_of(c).dtype):
        return lax.complex(clip(real(c), -1, 1), clip(imag(c), -1, 1))
    return clip(c, -1, 1)

