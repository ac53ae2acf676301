"""``pullback.scipy.special``: SciPy's special functions as ``jax.scipy.special`` has them.

Arguments are promoted to an inexact dtype (JAX's ``promote_args_inexact``) and the functions
are JAX's compositions of the lax special functions (``lax.lgamma``, ``lax.igamma``,
``lax.betainc``, ``lax.zeta``, ``lax.bessel_i0e``, ...), so values, special values and
derivatives are JAX's.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as pnp
from ..nn import log_softmax as _nn_log_softmax, logsumexp as _nn_logsumexp
from ..nn import softmax as _nn_softmax
from ..numpy._promotion import promote_args_inexact
from ..tracer import dtypes
from ..transforms.custom_derivatives import custom_jvp
from ._special_faddeeva import dawsn, erfcx, fresnel, owens_t, sici, wofz
from ._special_hyp import bessel_jn, hyp1f1, hyp2f1, sph_harm_y

__all__ = ["bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb",
           "dawsn", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi",
           "expit", "expn", "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln",
           "gammasgn", "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr",
           "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "owens_t", "poch", "polygamma", "rel_entr", "sici", "softmax", "spence",
           "sph_harm_y", "wofz", "xlog1py", "xlogy", "zeta"]

ArrayLike = Any


def _real(name: str, *xs: Any) -> list[Any]:
    out = promote_args_inexact(name, *xs)
    if dtypes.is_complex(out[0].dtype):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return out


def _c(x: Any, v: Any) -> Any:
    return pnp.asarray(v, dtype=x.dtype)


def gammaln(x: ArrayLike) -> Any:
    """log|Gamma(x)|."""
    (x,) = _real("gammaln", x)
    return lax.lgamma(x)


def gammasgn(x: ArrayLike) -> Any:
    """The sign of Gamma(x): NaN at the poles and for NaN, -1 where Gamma is negative."""
    (x,) = _real("gammasgn", x)
    floor_x = lax.floor(x)
    neg = x < 0
    nan_case = (neg & (x == floor_x)) | pnp.isnan(x)
    minus_case = (neg & (pnp.remainder(floor_x, 2) != 0)) | ((x == 0) & pnp.signbit(x))
    return pnp.where(nan_case, _c(x, np.nan), pnp.where(minus_case, _c(x, -1.0), _c(x, 1.0)))


def loggamma(x: ArrayLike) -> Any:
    """log Gamma(x) for real x > 0 (NaN elsewhere, as JAX for real input)."""
    (x,) = _real("loggamma", x)
    return pnp.where(x > 0, lax.lgamma(x), _c(x, np.nan))


def gamma(x: ArrayLike) -> Any:
    """The gamma function: ``gammasgn(x) * exp(lgamma(x))``."""
    (x,) = _real("gamma", x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def betaln(a: ArrayLike, b: ArrayLike) -> Any:
    """log|B(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    a, b = _real("betaln", a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def beta(a: ArrayLike, b: ArrayLike) -> Any:
    """The beta function B(a, b)."""
    a, b = _real("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def factorial(n: ArrayLike, exact: bool = False) -> Any:
    """n! as ``exp(lgamma(n + 1))``; 0 for n < 0."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _real("factorial", n)
    return pnp.where(n < 0, _c(n, 0), lax.exp(lax.lgamma(n + 1)))


def comb(N: ArrayLike, k: ArrayLike, *, repetition: bool = False) -> Any:
    """The number of combinations of ``N`` things taken ``k`` at a time (as floats)."""
    N, k = _real("comb", N, k)
    if repetition:
        return pnp.where((k == 0) & (N >= 0), _c(N, 1.0), comb(N + k - 1, k))
    cond = (k <= N) & (N >= 0) & (k >= 0)
    safe_N = pnp.where(cond, N, _c(N, 0.0))
    safe_k = pnp.where(cond, k, _c(k, 0.0))
    out = lax.exp(gammaln(safe_N + 1) - gammaln(safe_k + 1) - gammaln(safe_N + 1 - safe_k))
    return pnp.where(cond, out, _c(out, 0.0))


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Any:
    """The regularized incomplete beta function I_x(a, b) (differentiable in ``x``)."""
    a, b, x = _real("betainc", a, b, x)
    return lax.betainc(a, b, x)


def digamma(x: ArrayLike) -> Any:
    """The digamma function psi(x)."""
    (x,) = _real("digamma", x)
    return lax.digamma(x)


def gammainc(a: ArrayLike, x: ArrayLike) -> Any:
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = _real("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: ArrayLike, x: ArrayLike) -> Any:
    """The regularized upper incomplete gamma function Q(a, x)."""
    a, x = _real("gammaincc", a, x)
    return lax.igammac(a, x)


def erf(x: ArrayLike) -> Any:
    """The error function."""
    (x,) = _real("erf", x)
    return lax.erf(x)


def erfc(x: ArrayLike) -> Any:
    """The complementary error function ``1 - erf(x)``."""
    (x,) = _real("erfc", x)
    return lax.erfc(x)


def erfinv(x: ArrayLike) -> Any:
    """The inverse error function."""
    (x,) = _real("erfinv", x)
    return lax.erf_inv(x)


@custom_jvp
def logit(x: ArrayLike) -> Any:
    """``log(x / (1 - x))``."""
    (x,) = _real("logit", x)
    return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_c(x, 1), x))))


def expit(x: ArrayLike) -> Any:
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    (x,) = _real("expit", x)
    return lax.logistic(x)


def _xlogy_impl(x, y):
    return pnp.where((x != 0.0) | pnp.isnan(y), lax.mul(x, lax.log(y)), pnp.zeros_like(x))


@custom_jvp
def xlogy(x: ArrayLike, y: ArrayLike) -> Any:
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
    x, y = _real("xlogy", x, y)
    return _xlogy_impl(x, y)


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    x, y = _real("xlogy", x, y)
    out = _xlogy_impl(x, y)
    return out, tx * lax.log(y) + ty * (x / y)


def _xlog1py_impl(x, y):
    return pnp.where((x != 0.0) | pnp.isnan(y), lax.mul(x, lax.log1p(y)), pnp.zeros_like(x))


@custom_jvp
def xlog1py(x: ArrayLike, y: ArrayLike) -> Any:
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
    x, y = _real("xlog1py", x, y)
    return _xlog1py_impl(x, y)


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    x, y = _real("xlog1py", x, y)
    out = _xlog1py_impl(x, y)
    return out, tx * lax.log1p(y) + ty * (x / (1 + y))


def _xlogx(x):
    return xlogy(x, x)


def entr(x: ArrayLike) -> Any:
    """Elementwise entropy ``-x log x`` (0 at 0, -inf below 0)."""
    (x,) = _real("entr", x)
    return pnp.where(x < 0, _c(x, -np.inf), -_xlogx(x))


def boxcox(x: ArrayLike, lmbda: ArrayLike) -> Any:
    """The Box-Cox transform ``(x ** lmbda - 1) / lmbda`` (``log x`` for lmbda 0)."""
    x, lmbda = _real("boxcox", x, lmbda)
    zero = lmbda == 0
    safe = pnp.where(zero, pnp.ones_like(lmbda), lmbda)
    log_x = pnp.log(x)
    return pnp.where(zero, log_x, pnp.expm1(safe * log_x) / safe)


def boxcox1p(x: ArrayLike, lmbda: ArrayLike) -> Any:
    """The Box-Cox transform of ``1 + x``."""
    x, lmbda = _real("boxcox1p", x, lmbda)
    zero = lmbda == 0
    safe = pnp.where(zero, pnp.ones_like(lmbda), lmbda)
    log1p_x = pnp.log1p(x)
    return pnp.where(zero, log1p_x, pnp.expm1(safe * log1p_x) / safe)


def multigammaln(a: ArrayLike, d: int) -> Any:
    """The log of the multivariate gamma function of dimension ``d``."""
    d = operator.index(d)
    a, d_ = _real("multigammaln", a, d)
    constant = 0.25 * d_ * (d_ - 1) * pnp.log(_c(a, np.pi))
    b = pnp.arange(d, dtype=d_.dtype) / 2
    res = pnp.sum(gammaln(pnp.expand_dims(a, -1) - b), axis=-1)
    return res + constant


def rel_entr(p: ArrayLike, q: ArrayLike) -> Any:
    """``p log(p / q)`` with SciPy's conventions at 0 and for negative arguments."""
    p, q = _real("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    one_zero = (p == 0) & (q >= 0)
    safe_p = pnp.where(both, p, _c(p, 1))
    safe_q = pnp.where(both, q, _c(q, 1))
    log_val = _xlogx(safe_p) - xlogy(safe_p, safe_q)
    return pnp.where(both, log_val, pnp.where(one_zero, _c(p, 0), _c(p, np.inf)))


def kl_div(p: ArrayLike, q: ArrayLike) -> Any:
    """``p log(p / q) - p + q``."""
    p, q = _real("kl_div", p, q)
    return rel_entr(p, q) - p + q


@custom_jvp
def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Any:
    """The Hurwitz zeta function ``sum_k (k + q) ** -x`` (``q`` is required, as JAX)."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    x, q = _real("zeta", x, q)
    return lax.zeta(x, q)


@zeta.defjvp
def _zeta_jvp(primals, tangents):
    (x, q), (tx, tq) = primals, tangents
    out = zeta(x, q)
    x, q = _real("zeta", x, q)
    return out, -x * zeta(x + 1, q) * tq


def polygamma(n: ArrayLike, x: ArrayLike) -> Any:
    """The polygamma function psi^(n)(x) for integer ``n``."""
    n_dtype = n.dtype if hasattr(n, "dtype") else np.result_type(n)
    if not dtypes.is_integer(np.dtype(n_dtype)):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{n_dtype}.")
    n, x = _real("polygamma", n, x)
    return lax.polygamma(n, x)


def ndtr(x: ArrayLike) -> Any:
    """The standard normal CDF (erf near 0, erfc in the tails, as JAX)."""
    x = pnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    half_sqrt_2 = _c(x, 0.5 * np.sqrt(2.0))
    w = x * half_sqrt_2
    z = pnp.abs(w)
    y = pnp.where(z < half_sqrt_2, 1 + lax.erf(w),
                  pnp.where(w > 0, 2 - lax.erfc(z), lax.erfc(z)))
    return 0.5 * y


def ndtri(p: ArrayLike) -> Any:
    """The inverse of the standard normal CDF: ``-sqrt(2) erfinv(1 - 2p)`` on the lower half,
    mirrored on the upper half (NaN outside [0, 1], -inf/inf at 0/1)."""
    p = pnp.asarray(p)
    if p.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={p.dtype} is not supported, see docstring for supported "
                        "types.")
    lower = p < 0.5
    q = pnp.where(lower, p, 1 - p)
    x = -np.sqrt(2.0) * lax.erf_inv(1 - 2 * q)
    return pnp.where(lower, x, -x)


def _log_ndtr_lower(x, series_order):
    x_2 = pnp.square(x)
    log_scale = -0.5 * x_2 - pnp.log(-x) - 0.5 * np.log(2.0 * np.pi)
    even_sum, odd_sum = pnp.zeros_like(x), pnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = float(np.prod(np.arange(2 * n - 1, 1, -2, dtype=np.float64))) / x_2n
        if n % 2:
            odd_sum = odd_sum + y
        else:
            even_sum = even_sum + y
        x_2n = x_2n * x_2
    return log_scale + pnp.log1p(even_sum - odd_sum)


def _log_ndtr_impl(x, series_order):
    lower_segment, upper_segment = (-20.0, 8.0) if x.dtype == np.float64 else (-10.0, 5.0)
    gt_upper = x > upper_segment
    ndtr_res = ndtr(pnp.where(gt_upper, -x, pnp.maximum(x, _c(x, lower_segment))))
    low = _log_ndtr_lower(pnp.minimum(x, _c(x, lower_segment)), series_order)
    return pnp.where(gt_upper, -ndtr_res,  # log(1 - e) ~ -e for e << 1
                     pnp.where(x > lower_segment, pnp.log(ndtr_res), low))


_log_ndtr = custom_jvp(lambda series_order, x: _log_ndtr_impl(x, series_order),
                       nondiff_argnums=(0,))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (tx,) = primals, tangents
    out = _log_ndtr_impl(x, series_order)
    log_pdf = -0.5 * x * x - 0.5 * np.log(2 * np.pi)
    return out, tx * pnp.exp(log_pdf - out)


def log_ndtr(x: ArrayLike, series_order: int = 3) -> Any:
    """log of the standard normal CDF, accurate in both tails (an asymptotic series of
    ``series_order`` terms below -20 (float64) / -10 (float32), ``-ndtr(-x)`` in the upper
    tail)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = pnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={np.dtype(x.dtype)} is not supported.")
    return _log_ndtr(series_order, x)


def i0e(x: ArrayLike) -> Any:
    """The exponentially scaled modified Bessel function of order 0."""
    (x,) = _real("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: ArrayLike) -> Any:
    """The modified Bessel function of order 0: ``exp(|x|) * i0e(x)``."""
    (x,) = _real("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x: ArrayLike) -> Any:
    """The exponentially scaled modified Bessel function of order 1."""
    (x,) = _real("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: ArrayLike) -> Any:
    """The modified Bessel function of order 1: ``exp(|x|) * i1e(x)``."""
    (x,) = _real("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


def poch(z: ArrayLike, m: ArrayLike) -> Any:
    """The Pochhammer symbol ``gamma(z + m) / gamma(z)`` (1 for m == 0)."""
    z, m = _real("poch", z, m)
    return pnp.where(m == 0.0, _c(z, 1), gamma(z + m) / gamma(z))


def expn(n: ArrayLike, x: ArrayLike) -> Any:
    """The generalized exponential integral E_n(x) = Gamma(1 - n, x) x^(n - 1) for real n,
    computed from ``igammac`` (x > 0; n < 1 uses the upper incomplete gamma directly)."""
    n, x = _real("expn", n, x)
    # E_n(x) = x^(n-1) Gamma(1-n, x); for integer n >= 1 the recurrence from E_1 below
    e1 = _exp1(x)
    out = e1
    res = pnp.where(n == 1, e1, pnp.zeros_like(x))
    ex = pnp.exp(-x)
    n_max = 60
    for k in range(2, n_max + 1):
        out = (ex - x * out) / (k - 1)
        res = pnp.where(n == k, out, res)
    res = pnp.where(n == 0, ex / x, res)
    res = pnp.where((n < 0) | (x < 0), _c(x, np.nan), res)
    res = pnp.where((x == 0) & (n < 2) & (n >= 0), _c(x, np.inf), res)
    return pnp.where((x == 0) & (n >= 2), 1 / (n - 1), res)


def _exp1(x):
    """E_1(x) for x > 0: its power series below 1, a continued fraction above."""
    euler = 0.5772156649015329
    xs = pnp.minimum(x, _c(x, 1.0))
    term, acc = pnp.ones_like(x), pnp.zeros_like(x)
    for k in range(1, 40):
        term = -term * xs / k
        acc = acc + term / k
    series = -euler - pnp.log(xs) - acc
    xl = pnp.maximum(x, _c(x, 1.0))
    f = pnp.zeros_like(x)
    for k in range(60, 0, -1):  # E1(x) = e^-x / (x + 1/(1 + 1/(x + 2/(1 + 2/(x + ...)))))
        f = k / (1 + k / (xl + f))
    cf = pnp.exp(-xl) / (xl + f)
    return pnp.where(x < 1, series, cf)


def exp1(x: ArrayLike) -> Any:
    """The exponential integral E_1(x)."""
    (x,) = _real("exp1", x)
    return expn(1, x)


def expi(x: ArrayLike) -> Any:
    """The exponential integral Ei(x): ``-E_1(-x)`` for x < 0, the power series above."""
    (x,) = _real("expi", x)
    euler = 0.5772156649015329
    ax = pnp.abs(x)
    term, acc = pnp.ones_like(x), pnp.zeros_like(x)
    for k in range(1, 120):
        term = term * ax / k
        acc = acc + term / k
    pos = euler + pnp.log(ax) + acc
    big = ax > 40
    asym = pnp.exp(ax) / ax * (1 + 1 / ax + 2 / ax ** 2 + 6 / ax ** 3 + 24 / ax ** 4 +
                               120 / ax ** 5 + 720 / ax ** 6)
    pos = pnp.where(big, asym, pos)
    neg = -_exp1(pnp.where(x < 0, -x, pnp.ones_like(x)))
    return pnp.where(x < 0, neg, pnp.where(x == 0, _c(x, -np.inf), pos))


def _li2_series(z):
    """sum_k z^k / k^2 for |z| <= 1/2 (56 terms: 2^-56 below the float64 ulp)."""
    term, acc = pnp.ones_like(z), pnp.zeros_like(z)
    for k in range(1, 57):
        term = term * z
        acc = acc + term / (k * k)
    return acc


def _li2_unit(w):
    """Li2(w) for w in [0, 1]: the series below 1/2, the reflection
    Li2(w) = pi^2/6 - log(w) log(1 - w) - Li2(1 - w) above."""
    low = w <= 0.5
    ws = pnp.where(low, w, 1 - w)
    series = _li2_series(ws)
    one_minus = 1 - w
    logs = pnp.where(one_minus > 0, pnp.log(w) * pnp.log(pnp.where(one_minus > 0, one_minus, 1)),
                     pnp.zeros_like(w))
    return pnp.where(low, series, np.pi ** 2 / 6 - logs - series)


def spence(x: ArrayLike) -> Any:
    """SciPy's dilogarithm ``spence(x) = Li2(1 - x)`` for real x >= 0 (NaN below)."""
    x = pnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    z = 1 - x
    # z in [-1/2, 1]: directly; below, Landen's Li2(z) = -Li2(z / (z - 1)) - log^2(1 - z) / 2
    # with z / (z - 1) in (1/3, 1)
    direct = z >= -0.5
    zd = pnp.where(direct, z, pnp.zeros_like(z))
    d = pnp.where(zd >= 0, _li2_unit(pnp.maximum(zd, 0)), _li2_series(pnp.minimum(zd, 0)))
    zl = pnp.where(direct, -pnp.ones_like(z), z)
    w = zl / (zl - 1)
    landen = -_li2_unit(w) - 0.5 * pnp.square(pnp.log1p(-zl))
    out = pnp.where(direct, d, landen)
    return pnp.where(x < 0, np.nan, out)


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers B_0 .. B_n (float32 unless x64), as JAX computes them."""
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = pnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[:n + 1]
    bn = pnp.zeros(n + 1).at[:3].set(b3)
    m = pnp.arange(4, n + 1, 2, dtype=bn.dtype)
    q1 = 1.0 / np.pi ** 2 * pnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = pnp.arange(2, 50, dtype=bn.dtype)
    q2 = pnp.sum(k[:, None] ** (-m[None, :]), axis=0)
    return bn.at[4::2].set(q1 * (1 + q2))


def logsumexp(a: ArrayLike, axis: Any = None, b: ArrayLike | None = None,
              keepdims: bool = False, return_sign: bool = False, where: Any = None) -> Any:
    """``log(sum(b * exp(a)))`` along ``axis``, computed stably (``jax.nn.logsumexp``)."""
    return _nn_logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign,
                         where=where)


def softmax(x: ArrayLike, /, *, axis: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis`` (all axes by default, as SciPy)."""
    return _nn_softmax(x, axis=axis)


def log_softmax(x: ArrayLike, /, *, axis: Any = None) -> Any:
    """``x - logsumexp(x)`` along ``axis`` (all axes by default, as SciPy)."""
    return _nn_log_softmax(x, axis=axis)
