"""Hypergeometric functions, Bessel functions of the first kind and spherical harmonics of
``jax.scipy.special`` (hyp1f1, hyp2f1, bessel_jn, sph_harm_y), as compositions of lax/numpy
operations (series as ``lax.while_loop`` over the whole array: an element keeps adding terms
until every element has converged, as XLA's batched loops do).

- ``hyp1f1``: the Taylor series, after Kummer's transformation ``M(a, b, x) = e^x M(b - a, b,
  -x)`` for ``x < 0`` so that the series never cancels (JAX sums the alternating series there);
  JAX's special values (``a == 0``: 1, ``a == b``: ``exp(x)``, ``b == 0``: inf); derivatives
  in ``a`` and ``b`` from the same loop (``sum t_k (psi(a + k) - psi(a))`` as running harmonic
  sums), in ``x`` as ``a/b M(a + 1, b + 1, x)``.
- ``hyp2f1`` for real ``x <= 1`` (JAX's domain; inf above 1 as JAX): Pfaff's transformation to
  ``z = x/(x - 1)`` in [0, 1) for ``x < 0``, the Taylor series for ``z <= 0.9`` and the
  ``1 - z`` connection formula (reciprocal gammas, so poles give 0) above; where ``c - a - b``
  is an integer, the series to 0.99 and above the formula's limit from ``c -+ delta`` by
  Richardson extrapolation (1e-10..1e-7 in float64, poor in float32).
- ``bessel_jn``: JAX's backward (Miller) recurrence with ``n_iter`` steps and the
  normalization ``J_0 + 2 sum J_2k = 1``, output ``(v + 1, *z.shape)``.
- ``sph_harm_y``: the normalized associated Legendre recurrences in ``l`` (Condon-Shortley
  phase, as SciPy), ``n`` clipped to ``n_max`` as JAX.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as pnp
from ..numpy._promotion import promote_args_inexact, promote_dtypes_inexact
from ..tracer import dtypes
from ..transforms.custom_derivatives import custom_jvp
from ._special_faddeeva import _c, _real

__all__ = ["bessel_jn", "hyp1f1", "hyp2f1", "sph_harm_y"]

ArrayLike = Any


def _eps(x: Any) -> float:
    return float(pnp.finfo(x.dtype).eps)


def _rgamma(x: Any) -> Any:
    """1 / Gamma(x), 0 at the poles."""
    pole = (x <= 0) & (x == pnp.floor(x))
    odd = pnp.remainder(pnp.floor(x), 2) != 0
    sign = pnp.where((x < 0) & odd, _c(x, -1.0), _c(x, 1.0))
    return pnp.where(pole, pnp.zeros_like(x), sign * pnp.exp(-lax.lgamma(x)))


def _gamma(x: Any) -> Any:
    """Gamma(x) with its sign (inf at the poles)."""
    odd = pnp.remainder(pnp.floor(x), 2) != 0
    sign = pnp.where((x < 0) & odd, _c(x, -1.0), _c(x, 1.0))
    return sign * pnp.exp(lax.lgamma(x))


# ---- hyp1f1 ----

_MAX_TERMS = 2000


def _m_series(a: Any, b: Any, x: Any, derivs: bool) -> tuple[Any, Any, Any]:
    """sum_k (a)_k / (b)_k x^k / k! and, if ``derivs``, its derivatives in a and b."""
    eps = _eps(x)
    zero = pnp.zeros_like(x)

    def cond(state):
        k, term, s, sa, sb, ha, hb = state
        live = pnp.abs(term) > eps * pnp.abs(s)
        if derivs:
            live = live | (pnp.abs(term * ha) > eps * pnp.abs(sa)) | \
                (pnp.abs(term * hb) > eps * pnp.abs(sb))
        return (k < _MAX_TERMS) & pnp.any(live)

    def body(state):
        k, term, s, sa, sb, ha, hb = state
        kf = k.astype(x.dtype)
        s = s + term
        if derivs:
            sa, sb = sa + term * ha, sb - term * hb
            ha, hb = ha + 1 / (a + kf), hb + 1 / (b + kf)
        term = term * (a + kf) / (b + kf) * x / (kf + 1)
        return k + 1, term, s, sa, sb, ha, hb

    init = (pnp.asarray(0, np.int32), pnp.ones_like(x), zero, zero, zero, zero, zero)
    _, _, s, sa, sb, _, _ = lax.while_loop(cond, body, init)
    return s, sa, sb


def _hyp1f1_parts(a: Any, b: Any, x: Any, derivs: bool) -> tuple[Any, Any, Any]:
    neg = x < 0
    # Kummer: M(a, b, x) = e^x M(b - a, b, -x); d/da = -e^x M_1, d/db = e^x (M_1 + M_2)
    a_in = pnp.where(neg, b - a, a)
    s, sa, sb = _m_series(a_in, b, pnp.abs(x), derivs)
    ex = pnp.where(neg, pnp.exp(x), pnp.ones_like(x))
    m = ex * s
    da = pnp.where(neg, -ex * sa, sa)
    db = pnp.where(neg, ex * (sa + sb), sb)
    index = ((a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3)
    m = lax.select_n(index.astype(np.int32), m, pnp.ones_like(x), pnp.exp(x),
                     pnp.full_like(x, np.inf))
    return m, da, db


@custom_jvp
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    return _hyp1f1_parts(a, b, x, False)[0]


@custom_jvp
def _hyp1f1_dab(a: Any, b: Any, x: Any) -> tuple[Any, Any]:
    """(d/da, d/db) 1F1(a; b; x). Its own derivative: in x the closed form
    d/dx d/da M = d/da (a/b M(a+1; b+1; x)) (and likewise for b), so the x-x and x-a Hessian
    entries are exact without differentiating the loop (a while loop does not transpose); in
    a and b, zero (second derivatives in the parameters are not supported; JAX's fail in
    reverse mode)."""
    return _hyp1f1_parts(a, b, x, True)[1:]


@_hyp1f1_dab.defjvp
def _hyp1f1_dab_jvp(primals, tangents):
    (a, b, x), (_, _, tx) = primals, tangents
    da, db = _hyp1f1_dab(a, b, x)
    m1 = _hyp1f1(a + 1, b + 1, x)
    da1, db1 = _hyp1f1_dab(a + 1, b + 1, x)
    return (da, db), ((m1 / b + a / b * da1) * tx, (-a / (b * b) * m1 + a / b * db1) * tx)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    (a, b, x), (ta, tb, tx) = primals, tangents
    da, db = _hyp1f1_dab(a, b, x)
    dx = a / b * _hyp1f1(a + 1, b + 1, x)
    return _hyp1f1(a, b, x), da * ta + db * tb + dx * tx


def hyp1f1(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Any:
    """Kummer's confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!``.

    As JAX: real inputs only; ``1F1(0; 0; x) = 1`` (SciPy: NaN), ``b == 0``: inf.

    Args:
      a, b, x: array-like, real (broadcast together).

    Returns:
      ``1F1(a; b; x)`` in the promoted dtype.
    """
    a, b, x = pnp.broadcast_arrays(*_real("hyp1f1", a, b, x))
    return _hyp1f1(a, b, x)


# ---- hyp2f1 ----

def _f_series(a: Any, b: Any, c: Any, x: Any, derivs: bool = False) -> tuple[Any, ...]:
    """sum_k (a)_k (b)_k / (c)_k x^k / k! for |x| < 1 (and its a, b, c derivatives)."""
    eps = _eps(x)
    zero = pnp.zeros_like(x)

    def cond(state):
        k, term, s, sa, sb, sc, ha, hb, hc = state
        live = pnp.abs(term) > eps * pnp.abs(s)
        if derivs:
            live = live | (pnp.abs(term * ha) > eps * pnp.abs(sa)) | \
                (pnp.abs(term * hb) > eps * pnp.abs(sb)) | \
                (pnp.abs(term * hc) > eps * pnp.abs(sc))
        return (k < 4 * _MAX_TERMS) & pnp.any(live)

    def body(state):
        k, term, s, sa, sb, sc, ha, hb, hc = state
        kf = k.astype(x.dtype)
        s = s + term
        if derivs:
            sa, sb, sc = sa + term * ha, sb + term * hb, sc - term * hc
            ha, hb, hc = ha + 1 / (a + kf), hb + 1 / (b + kf), hc + 1 / (c + kf)
        term = term * (a + kf) * (b + kf) / (c + kf) * x / (kf + 1)
        return k + 1, term, s, sa, sb, sc, ha, hb, hc

    init = (pnp.asarray(0, np.int32), pnp.ones_like(x)) + (zero,) * 7
    out = lax.while_loop(cond, body, init)
    return out[2:6]


def _hyp2f1_connection(a: Any, b: Any, c: Any, w: Any) -> Any:
    """2F1(a, b; c; 1 - w) by the 1 - z connection formula (c - a - b not an integer):
    G(c)G(d)/(G(c-a)G(c-b)) F(a, b; 1-d; w) + w^d G(c)G(-d)/(G(a)G(b)) F(c-a, c-b; 1+d; w)."""
    d = c - a - b
    f1 = _f_series(a, b, 1 - d, w)[0]
    f2 = _f_series(c - a, c - b, 1 + d, w)[0]
    gc = _gamma(c)
    g1 = gc / _rgamma(d) * _rgamma(c - a) * _rgamma(c - b)
    g2 = gc / _rgamma(-d) * _rgamma(a) * _rgamma(b)
    return g1 * f1 + w ** d * g2 * f2


def _hyp2f1_unit(a: Any, b: Any, c: Any, z: Any) -> Any:
    """2F1 for 0 <= z < 1: the series up to 0.9, the 1 - z connection formula above. Where
    c - a - b is an integer (the formula's two terms have poles that cancel) it is the mean
    of the formula at c -+ delta, extrapolated from delta and delta/2 (Richardson): F is
    analytic in c, so that is off by O(delta^4), and the cancelling poles cost eps/delta;
    delta = eps^(1/5) balances them, up to the gamma factors' amplification of the
    cancellation: 1e-10..1e-7 in float64, 1e-4..1e-2 in float32 (for z > 0.99 only)."""
    eps = _eps(z)
    d = c - a - b
    int_d = pnp.abs(d - pnp.round(d)) < 50 * eps
    # an integer c - a - b keeps the series to 0.99 (~4000 terms), where the extrapolated
    # formula below is less accurate than it
    connect = z > pnp.where(int_d, _c(z, 0.99), _c(z, 0.9))
    series = _f_series(a, b, c, pnp.where(connect, pnp.zeros_like(z), z))[0]
    w = pnp.where(connect, 1 - z, _c(z, 0.5))
    delta = eps ** 0.2 * pnp.maximum(pnp.abs(c), _c(c, 1.0))
    shift = pnp.where(int_d, delta, pnp.zeros_like(c))

    def mean(h):
        return 0.5 * (_hyp2f1_connection(a, b, c + h, w) + _hyp2f1_connection(a, b, c - h, w))
    # Richardson: the means at delta and delta/2 differ by O(delta^2) terms in the ratio 4:1
    conn = pnp.where(int_d, (4 * mean(shift / 2) - mean(shift)) / 3,
                     _hyp2f1_connection(a, b, c, w))
    return pnp.where(connect, conn, series)


def _hyp2f1_impl(a: Any, b: Any, c: Any, x: Any) -> Any:
    d = c - a - b
    s = 1 - x
    neg = x < 0
    # Pfaff: F(a, b; c; x) = (1 - x)^-a F(a, c - b; c; x / (x - 1)), z in [0, 1)
    z = pnp.where(neg, x / (x - 1), pnp.where(x < 1, x, pnp.zeros_like(x)))
    b_in = pnp.where(neg, c - b, b)
    general = pnp.where(neg, s ** (-a), pnp.ones_like(x)) * _hyp2f1_unit(a, b_in, c, z)
    at_one = _gamma(c) * _gamma(d) * _rgamma(c - a) * _rgamma(c - b)
    trivial = (x == 0) | (((a == 0) | (b == 0)) & (c != 0))
    c_pole = (c == 0) | ((c < 0) & (c == pnp.floor(c)))
    index = pnp.where(trivial, 0, pnp.where(
        c_pole | (x > 1) | ((x == 1) & (d <= 0)), 1, pnp.where(
            (x < 1) & (b == c), 2, pnp.where(
                (x < 1) & (a == c), 3, pnp.where(x == 1, 4, 5)))))
    return lax.select_n(index.astype(np.int32), pnp.ones_like(x), pnp.full_like(x, np.inf),
                        s ** (-a), s ** (-b), at_one, general)


@custom_jvp
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_impl(a, b, c, x)


@custom_jvp
def _hyp2f1_dabc(a: Any, b: Any, c: Any, x: Any) -> tuple[Any, Any, Any]:
    """(d/da, d/db, d/dc) 2F1 by the term-wise series for |x| < 1, as JAX; 0 outside (not
    supported there: JAX's series diverges; a NaN would poison every tangent, since the
    instantiated zero tangents of undifferentiated parameters multiply it). Its derivative in
    x is the closed form (as _hyp1f1_dab's), in a, b, c zero."""
    inside = pnp.abs(x) < 1
    xs = pnp.where(inside, x, pnp.zeros_like(x))
    _, da, db, dc = _f_series(a, b, c, xs, True)
    return tuple(pnp.where(inside, v, pnp.zeros_like(v)) for v in (da, db, dc))


@_hyp2f1_dabc.defjvp
def _hyp2f1_dabc_jvp(primals, tangents):
    (a, b, c, x), (_, _, _, tx) = primals, tangents
    out = _hyp2f1_dabc(a, b, c, x)
    f1 = _hyp2f1(a + 1, b + 1, c + 1, x)
    da1, db1, dc1 = _hyp2f1_dabc(a + 1, b + 1, c + 1, x)
    k = a * b / c
    return out, ((b / c * f1 + k * da1) * tx, (a / c * f1 + k * db1) * tx,
                 (-k / c * f1 + k * dc1) * tx)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    (a, b, c, x), (ta, tb, tc, tx) = primals, tangents
    da, db, dc = _hyp2f1_dabc(a, b, c, x)
    dx = a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x)
    return _hyp2f1(a, b, c, x), da * ta + db * tb + dc * tc + dx * tx


def hyp2f1(a: ArrayLike, b: ArrayLike, c: ArrayLike, x: ArrayLike) -> Any:
    """Gauss's hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k!``
    for real ``x <= 1``.

    As JAX: real inputs only; inf for ``x > 1``, for ``c`` a non-positive integer and at
    ``x == 1`` when ``c - a - b <= 0``.

    Args:
      a, b, c, x: array-like, real (broadcast together).

    Returns:
      ``2F1(a, b; c; x)`` in the promoted dtype.
    """
    a, b, c, x = pnp.broadcast_arrays(*_real("hyp2f1", a, b, c, x))
    return _hyp2f1(a, b, c, x)


# ---- bessel_jn ----

def bessel_jn(z: ArrayLike, *, v: int, n_iter: int = 50) -> Any:
    """Bessel functions of the first kind of orders 0..v, by backward recurrence from
    ``n_iter`` (Zhang and Jin's BJNDD, as JAX).

    Args:
      z: array-like, real.
      v: the highest order (a Python int).
      n_iter: the recurrence's starting order (more for larger ``|z|``, see JAX's note:
        ``0.5 log10(6.28 + n) - n log10(1.36 + |z|/n) > 20``).

    Returns:
      An array of shape ``(v + 1, *z.shape)``: ``J_0(z) .. J_v(z)``, in ``z``'s dtype.
    """
    (z,) = promote_dtypes_inexact("bessel_jn", pnp.asarray(z))
    if dtypes.is_complex(z.dtype):
        raise ValueError("complex input not supported.")
    v = operator.index(v)
    n_iter = operator.index(n_iter)
    if v < 0:
        raise ValueError(f"bessel_jn: the order v must be non-negative, got {v}.")

    def body(carry, k):
        f2, f1, norm = carry  # f_{k+2}, f_{k+1}
        f = 2 * (k + 1) * f1 / z - f2
        norm = pnp.where(pnp.remainder(k, 2) == 0, norm + 2 * f, norm)
        return (f1, f, norm), f

    init = (pnp.zeros_like(z), pnp.full_like(z, 1e-16), pnp.zeros_like(z))
    ks = pnp.arange(n_iter + 1, dtype=z.dtype)
    (_, _, norm), fs = lax.scan(body, init, ks, reverse=True)
    return fs[:v + 1] / (norm - fs[0])


# ---- sph_harm_y ----

def sph_harm_y(n: ArrayLike, m: ArrayLike, theta: ArrayLike, phi: ArrayLike,
               diff_n: int | None = None, n_max: int | None = None) -> Any:
    """Spherical harmonics ``Y_n^m(theta, phi) = N P_n^m(cos theta) e^{i m phi}`` (SciPy's
    ``sph_harm_y`` argument order: degree, order, polar angle, azimuth).

    Args:
      n: integer degrees (``n >= 0``).
      m: integer orders (``|m| <= n``; other values give 0).
      theta: polar (colatitude) angles in [0, pi].
      phi: azimuths in [0, 2 pi].
      diff_n: unsupported (as JAX).
      n_max: the largest degree, static (default ``max(n)``, which needs a concrete ``n``);
        degrees above it are clipped to it, as JAX.

    Returns:
      The complex harmonics, broadcast over the arguments.
    """
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to pullback.scipy.special.sph_harm_y is not supported.")
    n = pnp.asarray(n)
    m = pnp.asarray(m)
    for name, arg in (("n", n), ("m", m)):
        if not dtypes.is_integer(np.dtype(arg.dtype)):
            raise TypeError(f"sph_harm_y: argument `{name}` must be of integer type, got "
                            f"{arg.dtype}.")
    if pnp.ndim(theta) == 0:
        theta = pnp.asarray([theta]) if not hasattr(theta, "dtype") else theta.reshape(1)
    if n_max is None:
        try:
            n_max = int(np.max(np.asarray(n)))
        except Exception as err:  # a tracer: n_max must be given
            raise TypeError("The `n_max` argument of `pullback.scipy.special.sph_harm_y` must "
                            "be statically specified to use it within transformations.") from err
    n_max = operator.index(n_max)
    # the dtype of JAX's result: that of ``|m| * phi`` times the Legendre values of theta
    theta, phi, _ = promote_args_inexact("sph_harm_y", theta, phi, m)
    x, sin_t = pnp.cos(theta), pnp.sin(theta)
    n, m, x, sin_t, phi = pnp.broadcast_arrays(n, m, x, sin_t, phi)
    # JAX reads its (m, n) Legendre table with clipped indices: n and |m| past n_max read n_max
    ne = pnp.clip(n, 0, n_max)
    am = pnp.clip(pnp.abs(m), 0, n_max)
    amf = am.astype(x.dtype)
    # P_m^m = (-1)^m sqrt((2m + 1)/(4 pi) prod_{k<=m} (2k - 1)/(2k)) sin^m
    p = pnp.full_like(x, 1 / np.sqrt(4 * np.pi))
    for k in range(1, n_max + 1):
        p = pnp.where(k <= am, p * (-np.sqrt((2 * k + 1) / (2 * k))) * sin_t, p)
    res = pnp.where(ne == am, p, pnp.zeros_like(x))
    p_prev, p_cur = p, pnp.sqrt(2 * amf + 3) * x * p
    res = pnp.where(ne == am + 1, p_cur, res)
    for s in range(2, n_max + 1):
        lf = amf + s
        a_l = pnp.sqrt((4 * lf * lf - 1) / (lf * lf - amf * amf))
        l1 = lf - 1
        a_l1 = pnp.sqrt((4 * l1 * l1 - 1) / (l1 * l1 - amf * amf))
        p_prev, p_cur = p_cur, a_l * (x * p_cur - p_prev / a_l1)
        res = pnp.where(ne == am + s, p_cur, res)
    angle = pnp.abs(m).astype(x.dtype) * phi
    y = lax.complex(res * pnp.cos(angle), res * pnp.sin(angle))
    sign = pnp.where(pnp.remainder(pnp.abs(m), 2) == 1, -1.0, 1.0).astype(x.dtype)
    return pnp.where(m < 0, sign * pnp.conj(y), y)
