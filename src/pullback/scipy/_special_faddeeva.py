"""The Faddeeva family of ``jax.scipy.special`` (wofz, erfcx, dawsn), the Fresnel and
sine/cosine integrals and Owen's T, as compositions of lax/numpy operations with JAX's
closed-form derivatives (custom JVPs).

Algorithms (docs/special.md, "Faddeeva, Fresnel, sici, Owen's T"):

- ``wofz``: Weideman's rational approximation (SIAM J. Numer. Anal. 31, 1994) with N = 32 in
  the upper half plane (``_WEIDEMAN_C`` below are its coefficients, computed with Weideman's
  FFT recipe; tests/test_scipy_special_more.py recomputes them), ``2 exp(-z^2) - w(-z)``
  below. About 1e-13 relative, as JAX's.
- ``erfcx`` is ``w(ix)``, whose Weideman form is real for real ``x``; ``dawsn`` is
  ``sqrt(pi)/2 Im w(x)``, with its Taylor series near 0 and its asymptotic series far out
  (where the rational form loses relative accuracy or overflows).
- ``fresnel``: the Taylor series for ``|x| < 1.6``, above it ``C + iS = (1+i)/2 (1 - e^{i pi
  x^2/2} w((1+i) sqrt(pi) x / 2))`` with the phase reduced exactly (``x^2`` split into two
  floats and taken modulo 4), so it stays accurate where SciPy's ``cos(pi/2 x^2)`` does not.
- ``sici``: power series for ``|x| <= 4``, the continued fraction of ``E1(ix)`` (40 terms)
  above.
- ``owens_t``: 20-point Gauss-Legendre quadrature of the defining integral for ``|a| <= 1``,
  with ``exp(-h^2/2)`` taken out and the range cut where the Gaussian has decayed below 1e-18;
  ``|a| > 1`` through ``T(h, a) = (1 - erf erf)/4 - T(ah, 1/a)`` (the erfc form where the
  arguments are large).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from .. import numpy as pnp
from ..numpy._promotion import promote_args_inexact
from ..tracer import dtypes
from ..transforms.custom_derivatives import custom_jvp

__all__ = ["dawsn", "erfcx", "fresnel", "owens_t", "sici", "wofz"]

ArrayLike = Any

_SQRT_PI = float(np.sqrt(np.pi))
_EULER = 0.57721566490153286061

# Weideman's N = 32 expansion: w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)),
# Z = (L + iz) / (L - iz), p(Z) = sum c_n Z^(31 - n), L = sqrt(N / sqrt(2)).
_WEIDEMAN_L = 4.756828460010884
_WEIDEMAN_C = (
    -1.3031797863050087e-12, 3.7408812931653625e-12, 8.0303678999638894e-12,
    -2.1543632077838769e-11, -5.5442359481664624e-11, 1.1658251093523774e-10,
    4.1537430918334532e-10, -5.2310204811963288e-10, -3.2080150917233689e-09,
    8.1248894568466516e-10, 2.3797556779897417e-08, 2.2930439065099966e-08,
    -1.4813078915120977e-07, -4.1840763702169776e-07, 4.2558331375750085e-07,
    4.4015317315785499e-06, 6.8210319440019849e-06, -2.1409619201710750e-05,
    -1.3075449254615346e-04, -2.4532980270021432e-04, 3.9259136070070311e-04,
    4.5195411053492174e-03, 1.9006155784845408e-02, 5.7304403529837220e-02,
    1.4060716226893769e-01, 2.9544451071508732e-01, 5.4601397206393409e-01,
    9.0192548936479988e-01, 1.3455441692345449e+00, 1.8256696296324815e+00,
    2.2635372999002676e+00, 2.5722534081245696e+00)


def _c(x: Any, v: Any) -> Any:
    return pnp.asarray(v, dtype=x.dtype)


def _real(name: str, *xs: Any) -> list[Any]:
    out = promote_args_inexact(name, *xs)
    if dtypes.is_complex(out[0].dtype):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return out


def _narrow(x: Any) -> bool:
    """float16/bfloat16: computed in float32 (the series and the Weideman coefficients need
    more than 11 bits), as JAX does."""
    return np.dtype(x.dtype).itemsize < 4


def _at_least_float32(impl: Any, *xs: Any) -> Any:
    """``impl(*xs)``, computed in float32 for float16/bfloat16 operands and cast back (one
    result or a tuple of them)."""
    if not _narrow(xs[0]):
        return impl(*xs)
    dtype = xs[0].dtype
    out = impl(*(x.astype(np.float32) for x in xs))
    return tuple(o.astype(dtype) for o in out) if isinstance(out, tuple) else out.astype(dtype)


def _horner(coeffs: tuple, z: Any) -> Any:
    acc = pnp.zeros_like(z) + _c(z, coeffs[0])
    for c in coeffs[1:]:
        acc = acc * z + _c(z, c)
    return acc


def _complex_dtype(dtype: Any) -> Any:
    return np.complex128 if np.dtype(dtype) == np.float64 else np.complex64


# ---- wofz ----

def _wofz_upper_parts(x: Any, y: Any) -> tuple[Any, Any]:
    """Re and Im of w(x + iy) for y >= 0 (Weideman): w = (2 p(Z) / D + 1/sqrt(pi)) / D with
    D = L - iz, Z = (L + iz) / D, in real arithmetic (about 7x faster here than the same
    in complex operations, which do not fuse)."""
    dr, di = _c(x, _WEIDEMAN_L) + y, -x  # D
    inv = 1 / (dr * dr + di * di)
    nr, ni = _c(x, _WEIDEMAN_L) - y, x  # L + iz
    zr, zi = (nr * dr + ni * di) * inv, (ni * dr - nr * di) * inv
    pr, pi = pnp.zeros_like(x) + _c(x, _WEIDEMAN_C[0]), pnp.zeros_like(x)
    for c in _WEIDEMAN_C[1:]:
        pr, pi = pr * zr - pi * zi + _c(x, c), pr * zi + pi * zr
    # q = 2p / D + 1/sqrt(pi); w = q / D
    qr = 2 * (pr * dr + pi * di) * inv + _c(x, 1 / _SQRT_PI)
    qi = 2 * (pi * dr - pr * di) * inv
    return (qr * dr + qi * di) * inv, (qi * dr - qr * di) * inv


@custom_jvp
def _wofz(z: Any) -> Any:
    x, y = pnp.real(z), pnp.imag(z)
    upper = y >= 0
    wr, wi = _wofz_upper_parts(pnp.where(upper, x, -x), pnp.where(upper, y, -y))
    # below the axis: 2 exp(-z^2) - w(-z), exp(-z^2) = e^(y^2 - x^2) (cos 2xy - i sin 2xy)
    e = 2 * pnp.exp(y * y - x * x)
    wr = pnp.where(upper, wr, e * pnp.cos(2 * x * y) - wr)
    wi = pnp.where(upper, wi, -e * pnp.sin(2 * x * y) - wi)
    # on the real axis Re w(x) = exp(-x^2) exactly, which the rational form only gives to an
    # absolute 1e-14 (0.2% at x = 5)
    wr = pnp.where(y == 0, pnp.exp(-x * x), wr)
    return lax.complex(wr, wi)


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (t,) = primals, tangents
    w = _wofz(z)
    return w, t * (_c(z, 2j / _SQRT_PI) - 2 * z * w)


def wofz(z: ArrayLike) -> Any:
    """The Faddeeva function ``w(z) = exp(-z^2) erfc(-iz)`` (complex; real input promotes to
    complex64/complex128).

    Args:
      z: array-like, real or complex.

    Returns:
      A complex array of ``w(z)``.
    """
    (z,) = promote_args_inexact("wofz", z)
    if not dtypes.is_complex(z.dtype):
        z = z.astype(_complex_dtype(z.dtype))
    return _wofz(z)


# ---- erfcx ----

def _erfcx_nonneg(x: Any) -> Any:
    """erfcx(x) = w(ix) for x >= 0: Weideman's form, real on this half-axis."""
    den = _c(x, _WEIDEMAN_L) + x
    big_z = (_c(x, _WEIDEMAN_L) - x) / den
    out = 2 * _horner(_WEIDEMAN_C, big_z) / (den * den) + _c(x, 1 / _SQRT_PI) / den
    return pnp.where(pnp.isposinf(x), _c(x, 0.0), out)


def _erfcx_impl(x: Any) -> Any:
    pos = _erfcx_nonneg(pnp.abs(x))
    # erfcx(-y) = 2 exp(y^2) - erfcx(y): overflows to inf with exp, as SciPy's
    neg = 2 * pnp.exp(x * x) - pos
    return pnp.where(x < 0, neg, pos)


@custom_jvp
def _erfcx(x: Any) -> Any:
    return _at_least_float32(_erfcx_impl, x)


_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - _c(x, 2 / _SQRT_PI)))


def erfcx(x: ArrayLike) -> Any:
    """The scaled complementary error function ``exp(x^2) erfc(x)`` (complex input: ``w(iz)``).

    Args:
      x: array-like, real or complex.

    Returns:
      ``erfcx(x)``, in ``x``'s (promoted) dtype.
    """
    (x,) = promote_args_inexact("erfcx", x)
    if dtypes.is_complex(x.dtype):
        return wofz(lax.complex(-pnp.imag(x), pnp.real(x)))
    return _erfcx(x)


# ---- dawsn ----

def _dawsn_impl(x: Any) -> Any:
    ax = pnp.abs(x)
    # |x| < 0.5: D(x) = sum_n (-2)^n x^(2n+1) / (2n+1)!!  (term ratio below 1/2 * 1/(2n+3))
    xs = pnp.where(ax < 0.5, x, pnp.zeros_like(x))
    x2 = xs * xs
    term, series = xs, xs
    for n in range(1, 16):
        term = term * (-2 * x2) / (2 * n + 1)
        series = series + term
    # |x| > 1e3: D(x) ~ 1/(2x) (1 + 1/(2x^2) + 3/(4x^4)); the next term is below 2e-18
    xl = pnp.where(ax > 1e3, x, pnp.ones_like(x))
    inv2 = 1 / (xl * xl)
    asym = pnp.where(pnp.isinf(xl), pnp.zeros_like(x),
                     (1 + inv2 * (0.5 + 0.75 * inv2)) / (2 * xl))
    # between: sqrt(pi)/2 Im w(x), Weideman's form at z = x (|Z| = 1)
    xm = pnp.where((ax >= 0.5) & (ax <= 1e3), x, pnp.ones_like(x))
    mid = _c(x, _SQRT_PI / 2) * _wofz_upper_parts(xm, pnp.zeros_like(xm))[1]
    out = pnp.where(ax < 0.5, series, pnp.where(ax > 1e3, asym, mid))
    return pnp.where(pnp.isnan(x), x, out)


@custom_jvp
def _dawsn(x: Any) -> Any:
    return _at_least_float32(_dawsn_impl, x)


_dawsn.defjvps(lambda g, ans, x: g * (1 - 2 * x * ans))


def dawsn(x: ArrayLike) -> Any:
    """Dawson's integral ``exp(-x^2) int_0^x exp(t^2) dt``.

    Args:
      x: array-like, real.

    Returns:
      ``dawsn(x)`` in ``x``'s (promoted) dtype.
    """
    (x,) = _real("dawsn", x)
    return _dawsn(x)


# ---- fresnel ----

def _half_pi_x2_sincos(x: Any) -> tuple[Any, Any]:
    """sin and cos of pi x^2 / 2 with the phase reduced exactly: x^2 = hi + lo (Veltkamp's
    split, no FMA needed), hi taken modulo 4 (exact: Sterbenz), so the error does not grow
    with x^2 as ``cos(pi/2 * x * x)``'s does."""
    split = 134217729.0 if np.dtype(x.dtype) == np.float64 else 4097.0
    hi = x * x
    c = _c(x, split) * x
    xh = c - (c - x)
    xl = x - xh
    lo = ((xh * xh - hi) + 2 * xh * xl) + xl * xl
    r = hi - 4 * pnp.round(hi / 4)
    phase = _c(x, np.pi / 2) * (r + lo)
    return pnp.sin(phase), pnp.cos(phase)


def _fresnel_impl(x: Any) -> tuple[Any, Any]:
    ax = pnp.abs(x)
    big = 1e17 if np.dtype(x.dtype) == np.float64 else 1e8  # 1/(pi x) below half an ulp of 1/2
    small = ax < 1.6
    # Taylor: C = sum (-1)^n (pi/2)^(2n) x^(4n+1) / ((2n)! (4n+1)),
    #         S = sum (-1)^n (pi/2)^(2n+1) x^(4n+3) / ((2n+1)! (4n+3))
    xs = pnp.where(small, ax, pnp.zeros_like(ax))
    u = _c(x, np.pi / 2) * xs * xs
    term = xs  # x (pi/2 x^2)^k / k!
    c_sum, s_sum = pnp.zeros_like(ax), pnp.zeros_like(ax)
    for k in range(40):
        if k % 4 == 0:
            c_sum = c_sum + term / (2 * k + 1)
        elif k % 4 == 1:
            s_sum = s_sum + term / (2 * k + 1)
        elif k % 4 == 2:
            c_sum = c_sum - term / (2 * k + 1)
        else:
            s_sum = s_sum - term / (2 * k + 1)
        term = term * u / (k + 1)
    # large: C + iS = (1+i)/2 (1 - e^{i phi} w(zeta)), zeta = (1+i) sqrt(pi) x / 2
    xl = pnp.where(small | (ax > big), _c(x, 2.0), ax)
    h = _c(x, _SQRT_PI / 2) * xl
    wr, wi = _wofz_upper_parts(h, h)
    sin_p, cos_p = _half_pi_x2_sincos(xl)
    a_re = cos_p * wr - sin_p * wi
    b_im = cos_p * wi + sin_p * wr
    c_big = 0.5 * (1 - a_re + b_im)
    s_big = 0.5 * (1 - a_re - b_im)
    half = _c(x, 0.5)
    c_out = pnp.where(small, c_sum, pnp.where(ax > big, half, c_big))
    s_out = pnp.where(small, s_sum, pnp.where(ax > big, half, s_big))
    sign = pnp.where(x < 0, _c(x, -1.0), _c(x, 1.0))
    return sign * s_out, sign * c_out


@custom_jvp
def _fresnel(x: Any) -> tuple[Any, Any]:
    return _at_least_float32(_fresnel_impl, x)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    sin_p, cos_p = _half_pi_x2_sincos(x)
    return _fresnel(x), (sin_p * t, cos_p * t)


def fresnel(x: ArrayLike) -> tuple[Any, Any]:
    """The Fresnel integrals ``S(x) = int_0^x sin(pi t^2/2) dt`` and
    ``C(x) = int_0^x cos(pi t^2/2) dt``.

    Args:
      x: array-like, real.

    Returns:
      The tuple ``(S, C)``, each in ``x``'s (promoted) dtype.
    """
    xx = promote_args_inexact("fresnel", x)[0]
    if dtypes.is_complex(xx.dtype):
        raise NotImplementedError("fresnel: complex-valued inputs are not supported (as JAX).")
    return _fresnel(xx)


# ---- sici ----

def _sici_impl(x: Any) -> tuple[Any, Any]:
    ax = pnp.abs(x)
    small = ax <= 4
    xs = pnp.where(small, ax, pnp.zeros_like(ax))
    term = xs  # x^k / k!, signs applied below
    si_sum, ci_sum = xs, pnp.zeros_like(ax)
    for k in range(1, 40):
        term = term * xs / (k + 1)  # x^(k+1) / (k+1)!
        n = k + 1
        sign = -1.0 if (n // 2) % 2 else 1.0
        if n % 2:
            si_sum = si_sum + sign * term / n
        else:
            ci_sum = ci_sum + sign * term / n
    ci_small = _c(x, _EULER) + pnp.log(xs) + ci_sum
    # E1(ix) = e^{-ix} / (ix + 1 - 1/(ix + 3 - 4/(ix + 5 - ...))): Ci = -Re, Si = pi/2 + Im
    xl = pnp.where(small | pnp.isinf(ax), _c(x, 5.0), ax)
    t_re, t_im = pnp.full_like(xl, 81.0), xl
    for n in range(40, 0, -1):  # t <- (2n - 1) + ix - n^2 / t
        den = t_re * t_re + t_im * t_im
        t_re = (2 * n - 1) - (n * n) * t_re / den
        t_im = xl + (n * n) * t_im / den
    den = t_re * t_re + t_im * t_im
    cos_x, sin_x = pnp.cos(xl), pnp.sin(xl)
    # e^{-ix} / t = (cos - i sin)(t_re - i t_im) / |t|^2
    e_re = (cos_x * t_re - sin_x * t_im) / den
    e_im = -(cos_x * t_im + sin_x * t_re) / den
    si_big = _c(x, np.pi / 2) + e_im
    ci_big = -e_re
    inf = pnp.isinf(ax)
    si = pnp.where(small, si_sum, pnp.where(inf, _c(x, np.pi / 2), si_big))
    ci = pnp.where(small, ci_small, pnp.where(inf, _c(x, 0.0), ci_big))
    si = pnp.where(x < 0, -si, si)
    ci = pnp.where(pnp.isneginf(x), _c(x, np.nan), ci)
    return si, ci


@custom_jvp
def _sici(x: Any) -> tuple[Any, Any]:
    return _at_least_float32(_sici_impl, x)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _sici(x), (pnp.sinc(x / np.pi) * t, pnp.cos(x) / x * t)


def sici(x: ArrayLike) -> tuple[Any, Any]:
    """The sine and cosine integrals ``Si(x) = int_0^x sin t / t dt`` and
    ``Ci(x) = gamma + log x + int_0^x (cos t - 1) / t dt``.

    As JAX, ``Ci`` at negative ``x`` is ``Ci(|x|)`` (SciPy's real part) and NaN at ``-inf``.

    Args:
      x: array-like, real.

    Returns:
      The tuple ``(Si, Ci)``, each in ``x``'s (promoted) dtype.
    """
    xx = promote_args_inexact("sici", x)[0]
    if dtypes.is_complex(xx.dtype):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {xx.dtype}.")
    return _sici(xx)


# ---- owens_t ----

# 20-point Gauss-Legendre on [0, 1] (numpy.polynomial.legendre.leggauss(20) mapped; the test
# recomputes them): 1.5e-13 against SciPy (32 points: 1.3e-13)
_GL_T = (
    0.003435700407452502, 0.018014036361043095, 0.04388278587433703, 0.08044151408889061,
    0.1268340467699246, 0.1819731596367425, 0.24456649902458644, 0.3131469556422902,
    0.38610707442917747, 0.46173673943325133, 0.5382632605667487, 0.6138929255708225,
    0.6868530443577098, 0.7554335009754136, 0.8180268403632576, 0.8731659532300754,
    0.9195584859111094, 0.956117214125663, 0.981985963638957, 0.9965642995925474,)
_GL_WH = (
    0.008807003569575447, 0.020300714900193223, 0.031336024167054395, 0.04163837078835236,
    0.05096505990862035, 0.0590972659807593, 0.06584431922458844, 0.0710480546591912,
    0.07458649323630212, 0.07637669356536314, 0.07637669356536314, 0.07458649323630212,
    0.0710480546591912, 0.06584431922458844, 0.0590972659807593, 0.05096505990862035,
    0.04163837078835236, 0.031336024167054395, 0.020300714900193223, 0.008807003569575447,)


def _owens_t_unit(h: Any, a: Any) -> Any:
    """T(h, a) for h >= 0, 0 <= a <= 1: ``exp(-h^2/2) a / (2 pi) int_0^1 exp(-(ha t)^2/2) /
    (1 + (a t)^2) dt`` by Gauss-Legendre on [0, min(1, 9/(ha))] (beyond, below 3e-18)."""
    beta = h * a
    cut = pnp.minimum(_c(h, 1.0), 9 / pnp.maximum(beta, _c(h, 1e-30)))
    acc = pnp.zeros_like(h)
    for t, w in zip(_GL_T, _GL_WH):
        bs, as_ = beta * (cut * t), a * (cut * t)
        acc = acc + w * pnp.exp(-0.5 * bs * bs) / (1 + as_ * as_)
    return pnp.exp(-0.5 * h * h) * a * cut * acc / (2 * np.pi)


def _owens_t_impl(h: Any, a: Any) -> Any:
    ah_abs = pnp.abs(h)
    aa = pnp.abs(a)
    flip = aa > 1
    a_in = pnp.where(flip, 1 / pnp.where(flip, aa, _c(a, 1.0)), aa)
    h_in = pnp.where(flip, aa * ah_abs, ah_abs)
    inner = _owens_t_unit(pnp.where(pnp.isinf(h_in), pnp.zeros_like(h_in), h_in), a_in)
    inner = pnp.where(pnp.isinf(h_in), pnp.zeros_like(inner), inner)
    # |a| > 1: T(h, a) = (1 - erf(h/r2) erf(ah/r2)) / 4 - T(ah, 1/a), as
    # (e1 + e2 - e1 e2) / 4 with erfcs (the same value; keeps the tails where the erfs are
    # near 1, and costs two error functions instead of four)
    r2 = _c(h, np.sqrt(2.0))
    ec1, ec2 = lax.erfc(ah_abs / r2), lax.erfc(aa * ah_abs / r2)
    outer = 0.25 * (ec1 + ec2 - ec1 * ec2) - inner
    out = pnp.where(flip, outer, inner)
    out = pnp.where(pnp.isinf(aa), 0.25 * ec1, out)
    out = pnp.sign(a) * out
    return pnp.where(pnp.isnan(a) | pnp.isnan(h), _c(out, np.nan), out)


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    return _at_least_float32(_owens_t_impl, h, a)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (th, ta) = primals, tangents
    d_h = (-pnp.exp(-0.5 * h * h) * lax.erf(a * h / _c(h, np.sqrt(2.0)))
           / _c(h, 2 * np.sqrt(2 * np.pi)))
    a2p1 = a * a + 1
    d_a = pnp.exp(-0.5 * a2p1 * h * h) / (2 * np.pi * a2p1)
    return _owens_t(h, a), d_h * th + d_a * ta


def owens_t(h: ArrayLike, a: ArrayLike) -> Any:
    """Owen's T function ``T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2)/2) / (1 + x^2) dx``.

    Args:
      h: array-like, real.
      a: array-like, real.

    Returns:
      ``T(h, a)`` in the promoted dtype of ``h`` and ``a`` (broadcast together).
    """
    h, a = _real("owens_t", h, a)
    return _owens_t(h, a)
