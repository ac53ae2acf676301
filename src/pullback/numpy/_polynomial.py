"""Polynomials as coefficient arrays, highest power first: poly, polyadd, polysub, polymul,
polydiv, polyder, polyint, polyval, polyfit, roots, vander, trim_zeros (JAX's semantics:
results are inexact; no data-dependent trimming unless asked for, outside jit).

``roots`` finds the eigenvalues of the companion matrix (``linalg.eigvals``) and ``polyfit``
solves a column-scaled Vandermonde system by ``linalg.lstsq``.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.errors import ConcretizationTypeError
from ..tracer.shapes import canonicalize_axes
from . import linalg
from ._convolve import convolve
from ._creation import arange, asarray, full, ones, zeros
from ._linalg import dot, outer
from ._promotion import aval_of, promote_dtypes, promote_dtypes_inexact
from ._reductions import all as all_, argmin, prod, sum as sum_
from ._shape import atleast_1d, concatenate, expand_dims, roll
from ._ufuncs import maximum, power, sqrt, true_divide, where

ArrayLike = Any


def _static_int(name: str, arg: str, v: Any) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name}: argument '{arg}' must be a static integer, got "
                        f"{v!r}") from None


def _concrete(name: str, x: Any) -> np.ndarray:
    c = x.to_concrete_value() if hasattr(x, "to_concrete_value") else None
    if c is None:
        raise ConcretizationTypeError(f"{name}: the result's shape depends on the values of "
                                      "a traced array")
    return np.asarray(c)


def trim_zeros(filt: ArrayLike, trim: str = "fb",
               axis: int | Sequence[int] | None = None) -> Any:
    """``filt`` without its leading ("f") and/or trailing ("b") zeros along ``axis`` (all
    axes by default; a slice along an axis is zero when all of it is). Needs concrete values
    (the result's shape depends on them)."""
    (filt,) = promote_dtypes("trim_zeros", filt)
    c = _concrete("trim_zeros", filt)
    axes = set(canonicalize_axes(axis, c.ndim, "trim_zeros"))
    t = trim.lower()
    if not axes or ("f" not in t and "b" not in t):
        return filt
    idx = []
    for ax in range(c.ndim):
        if ax not in axes:
            idx.append(slice(None))
            continue
        mask = np.any(c != 0, axis=tuple(i for i in range(c.ndim) if i != ax))
        if not mask.any():
            idx.append(slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in t else None
        stop = c.shape[ax] - int(mask[::-1].argmax()) if "b" in t else None
        idx.append(slice(start, stop))
    return filt[tuple(idx)]


def _trim_zeros_tol(filt: Any, tol: float) -> Any:
    c = _concrete("polydiv", filt)
    nz = np.abs(c) < tol
    if nz.all():
        return zeros((0,), aval_of(filt).dtype)
    return filt[int(np.argmin(nz)):]


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of 1-D ``x``: column j is ``x ** (N - 1 - j)`` (``x ** j`` when
    ``increasing``)."""
    x = asarray(x)
    if aval_of(x).ndim != 1:
        raise ValueError(f"vander: argument 'x' must be 1-D, got shape {aval_of(x).shape}")
    n = aval_of(x).shape[0] if N is None else _static_int("vander", "N", N)
    if n < 0:
        raise ValueError(f"vander: argument 'N' must be non-negative, got {n}")
    iota = lax.iota(aval_of(x).dtype, n) if aval_of(x).dtype != dtypes.bool_ else \
        lax.iota(dtypes.int32, n)
    if not increasing:
        iota = lax.sub(lax.full_like(iota, n - 1), iota)
    return power(x[..., None], expand_dims(iota, 0))


def poly(seq_of_zeros: ArrayLike) -> Any:
    """The coefficients of the monic polynomial with the given roots (or, for a square
    matrix, the characteristic polynomial: complex, from its eigenvalues)."""
    (z,) = promote_dtypes_inexact("poly", seq_of_zeros)
    z = atleast_1d(z)
    sh = aval_of(z).shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        z = linalg.eigvals(z)
    if aval_of(z).ndim != 1:
        raise ValueError(f"poly: argument 'seq_of_zeros' must be 1-D or a non-empty square "
                         f"2-D array, got shape {sh}")
    dt = aval_of(z).dtype
    n = aval_of(z).shape[0]
    if n == 0:
        return ones((), dt)
    a = ones((1,), dt)
    one = ones((1,), dt)
    for k in range(n):
        a = convolve(a, concatenate([one, -z[k:k + 1]]), mode="full")
    return a


def polyval(p: ArrayLike, x: ArrayLike, *, unroll: int = 16) -> Any:
    """The polynomial ``p`` (coefficients along axis 0) at ``x`` by Horner's scheme."""
    p, x = promote_dtypes("polyval", p, x)
    pv, xv = aval_of(p), aval_of(x)
    if pv.ndim == 0:
        raise ValueError("polyval: argument 'p' must be at least 1-D")
    shape = np.broadcast_shapes(pv.shape[1:], xv.shape)
    y = full(shape, 0, xv.dtype)
    y, _ = lax.scan(lambda y, c: (y * x + c, None), y, p, unroll=unroll)
    return y


def _check_1d(name: str, *xs: Any) -> None:
    for x in xs:
        if aval_of(x).ndim != 1:
            raise ValueError(f"{name}: the coefficient arrays must be 1-D, got shape "
                             f"{aval_of(x).shape}")


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The sum of two polynomials (the shorter one aligned to the end)."""
    a1, a2 = promote_dtypes("polyadd", a1, a2)
    n1, n2 = aval_of(a1).shape[0], aval_of(a2).shape[0]
    if n2 <= n1:
        return a1.at[n1 - n2:].add(a2)
    return a2.at[n2 - n1:].add(a1)


def polysub(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The difference of two polynomials."""
    a1, a2 = promote_dtypes("polysub", a1, a2)
    return polyadd(a1, -a2)


def polymul(a1: ArrayLike, a2: ArrayLike, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (inexact); ``trim_leading_zeros`` (outside jit) drops
    the inputs' leading zeros first, as NumPy."""
    a1, a2 = promote_dtypes_inexact("polymul", a1, a2)
    a1, a2 = atleast_1d(a1), atleast_1d(a2)
    _check_1d("polymul", a1, a2)
    if trim_leading_zeros and (aval_of(a1).shape[0] > 1 or aval_of(a2).shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    if aval_of(a1).shape[0] == 0:
        a1 = zeros((1,), aval_of(a2).dtype)
    if aval_of(a2).shape[0] == 0:
        a2 = zeros((1,), aval_of(a1).dtype)
    return convolve(a1, a2, mode="full")


def polydiv(u: ArrayLike, v: ArrayLike, *, trim_leading_zeros: bool = False
            ) -> tuple[Any, Any]:
    """The quotient and remainder of polynomial division (inexact). As JAX, the remainder
    keeps ``u``'s length (leading zeros) unless ``trim_leading_zeros`` (outside jit)."""
    u, v = promote_dtypes_inexact("polydiv", u, v)
    _check_1d("polydiv", u, v)
    m, n = aval_of(u).shape[0] - 1, aval_of(v).shape[0] - 1
    if n < 0:
        raise ValueError("polydiv: argument 'v' must be non-empty")
    scale = 1.0 / v[0]
    q = zeros((max(m - n + 1, 1),), aval_of(u).dtype)
    for k in range(0, m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        eps = float(np.finfo(np.float32 if aval_of(u).dtype.itemsize <= 4 or
                             aval_of(u).dtype == np.complex64 else np.float64).eps)
        u = _trim_zeros_tol(u, np.sqrt(eps))
    return q, u


def polyder(p: ArrayLike, m: int = 1) -> Any:
    """The coefficients of the ``m``-th derivative (inexact)."""
    m = _static_int("polyder", "m", m)
    (p,) = promote_dtypes_inexact("polyder", p)
    if m < 0:
        raise ValueError(f"polyder: argument 'm' (the order of the derivative) must be "
                         f"non-negative, got {m}")
    if m == 0:
        return p
    n = aval_of(p).shape[0]
    dt = aval_of(p).dtype
    coeff = prod(arange(m, n, dtype=dt)[None] - arange(m, dtype=dt)[:, None], axis=0)
    return p[:n - m] * coeff[::-1]


def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Any:
    """The coefficients of the ``m``-th antiderivative with integration constants ``k`` (a
    scalar, or one per integration; highest order first)."""
    m = _static_int("polyint", "m", m)
    k = asarray(0 if k is None else k)
    p, k = promote_dtypes_inexact("polyint", p, k)
    if m < 0:
        raise ValueError(f"polyint: argument 'm' (the order of the integral) must be "
                         f"non-negative, got {m}")
    k = atleast_1d(k)
    if aval_of(k).shape[0] == 1:
        k = full((m,), 0, aval_of(k).dtype) + k[0]
    if aval_of(k).shape != (m,):
        raise ValueError("polyint: argument 'k' must be a scalar or a 1-D array of length 1 "
                         f"or m = {m}")
    if m == 0:
        return p
    dt = aval_of(p).dtype
    n = aval_of(p).shape[0]
    grid = arange(n + m, dtype=dt)[None] - arange(m, dtype=dt)[:, None]
    coeff = prod(maximum(1, grid), axis=0)[::-1]
    return true_divide(concatenate([p, k]), coeff)


def polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None,
            full: bool = False, w: ArrayLike | None = None, cov: bool | str = False) -> Any:
    """Least-squares polynomial fit of degree ``deg`` to the points (x, y).

    Args:
      x: 1-D sample coordinates.
      y: samples (1-D, or 2-D with one fit per column).
      deg: the static degree.
      rcond: the relative cutoff for small singular values (default ``len(x) * eps``).
      full: also return the residuals, rank, singular values and rcond.
      w: weights applied to the residuals.
      cov: also return the coefficients' covariance ("unscaled" to skip the residual
        scaling).

    Returns:
      The coefficients (highest power first), and the extras asked for.
    """
    x, y = promote_dtypes_inexact("polyfit", x, y)
    deg = _static_int("polyfit", "deg", deg)
    order = deg + 1
    if deg < 0:
        raise ValueError(f"polyfit: argument 'deg' must be non-negative, got {deg}")
    if aval_of(x).ndim != 1:
        raise TypeError("polyfit: argument 'x' must be 1-D")
    if aval_of(x).size == 0:
        raise TypeError("polyfit: argument 'x' must be non-empty")
    if not 1 <= aval_of(y).ndim <= 2:
        raise TypeError("polyfit: argument 'y' must be 1-D or 2-D")
    if aval_of(x).shape[0] != aval_of(y).shape[0]:
        raise TypeError("polyfit: arguments 'x' and 'y' must have the same length")
    if rcond is None:
        rcond = aval_of(x).shape[0] * float(np.finfo(
            np.float64 if aval_of(x).dtype in (np.float64, np.complex128) else np.float32).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        (w,) = promote_dtypes_inexact("polyfit", w)
        if aval_of(w).ndim != 1:
            raise TypeError("polyfit: argument 'w' must be 1-D")
        if aval_of(w).shape[0] != aval_of(y).shape[0]:
            raise TypeError("polyfit: arguments 'w' and 'y' must have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if aval_of(rhs).ndim == 2 else w)
    # scale the columns to improve the condition number
    scale = sqrt(sum_(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if aval_of(c).ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, asarray(rcond)
    if cov:
        vbase = linalg.inv(dot(lhs.T, lhs)) / outer(scale, scale)
        if cov == "unscaled":
            fac = asarray(1.0)
        else:
            if aval_of(x).shape[0] <= order:
                raise ValueError("polyfit: the number of data points must exceed order to "
                                 "scale the covariance matrix")
            fac = resids / (aval_of(x).shape[0] - order)
        if aval_of(y).ndim == 1:
            return c, vbase * atleast_1d(fac)[None]
        return c, vbase[:, :, None] * atleast_1d(fac)[None, None, :]
    return c


def _complex_of(dt: np.dtype) -> np.dtype:
    return np.dtype(np.complex128) if dt in (np.float64, np.complex128) else \
        np.dtype(np.complex64)


def _roots_no_zeros(p: Any) -> Any:
    n = aval_of(p).shape[0]
    if n < 2:
        return zeros((0,), _complex_of(aval_of(p).dtype))
    a = zeros((n - 1, n - 1), aval_of(p).dtype)
    if n > 2:
        a = a.at[arange(1, n - 1), arange(0, n - 2)].set(1)
    a = a.at[0, :].set(-p[1:] / p[0])
    return linalg.eigvals(a)


def roots(p: ArrayLike, *, strip_zeros: bool = True) -> Any:
    """The (complex) roots of the polynomial ``p``, from its companion matrix's eigenvalues.

    With ``strip_zeros`` (the default) leading zeros are dropped, which needs concrete
    ``p``; with ``strip_zeros=False`` (usable under jit) the roots they would remove are NaN.
    """
    (p,) = promote_dtypes_inexact("roots", p)
    p = atleast_1d(p)
    if aval_of(p).ndim != 1:
        raise ValueError(f"roots: argument 'p' must be 1-D, got shape {aval_of(p).shape}")
    n = aval_of(p).shape[0]
    if n < 2:
        return zeros((0,), _complex_of(aval_of(p).dtype))
    is_zero = lax.eq(p, lax.full_like(p, 0))
    lead = where(all_(is_zero), n, argmin(is_zero))
    if strip_zeros:
        c = lead.to_concrete_value() if hasattr(lead, "to_concrete_value") else None
        if c is None:
            raise ConcretizationTypeError(
                "roots: stripping leading zeros needs concrete coefficients; pass "
                "strip_zeros=False under jit (the roots of leading zeros are then NaN)")
        return _roots_no_zeros(p[int(c):])
    p = where(lax.eq(lead, n), 1.0, p)
    r = _roots_no_zeros(roll(p, -lead))
    zero = lax.eq(r, lax.full_like(r, 0))
    _, r = lax.sort((zero, r), dimension=0, num_keys=1)
    m = aval_of(r).shape[0]
    return where(arange(m) < m - lead, r, complex(np.nan, np.nan))

