"""Special-function primitives of lax: igamma, igammac, igamma_grad_a, random_gamma_grad,
regularized_incomplete_beta (betainc), zeta, polygamma, bessel_i0e, bessel_i1e.

Element-wise rows of elementwise.c (their scalar code is ``csrc/special_math.h``: XLA's
algorithms, computed in double), declared through ``elementwise._declare`` like lgamma and
digamma. Derivatives are JAX's: igamma/igammac in both operands (through igamma_grad_a for
``a``), betainc and polygamma in their last operand only (JAX raises ValueError for the
others), bessel_i0e/i1e by JAX's formulas; igamma_grad_a and random_gamma_grad have no
derivative in JAX. zeta: JAX defines none; here d/dq zeta(s, q) = -s zeta(s + 1, q) (the
derivative in ``s`` raises, as JAX's does for every operand).

The references use SciPy, with JAX's special values where they differ from SciPy's.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..tracer.core import get_aval, not_applicable
from .building_blocks import select_n_p
from .elementwise_reference import special as sc
from .elementwise import (_add, _binary, _c, _declare, _full, _mul, _neg, _partials, _recip,
                          _sub, _unary, abs_p, exp_p, gt_p, lgamma_p, log1p_p, log_p, sign_p)

NO_JAX_DERIVATIVE = not_applicable(
    "JAX defines no derivative for it (a derivative itself, used by random.gamma's gradient)")


def _raise(message: str):
    def partial(*args):
        raise ValueError(message)
    return partial


# ---- references (NumPy/SciPy, JAX's special values) ----

def _igamma_ref(a, x):
    out = sc.gammainc(a, x)
    return np.where((a == 0) & (x > 0) & ~((x >= 1) & (x > a)), np.nan, out)


def _igammac_ref(a, x):
    out = sc.gammaincc(a, x)
    return np.where((a == 0) & (x > 0), 0.0, out)


def _igamma_grad_a_ref(a, x):
    """dP/da by Richardson-extrapolated central differences of SciPy's gammainc."""
    a = np.asarray(a, np.float64)
    x = np.asarray(x, np.float64)
    h = 1e-3 * np.maximum(np.abs(a), 1e-2)
    h = np.minimum(h, 0.5 * a)  # stay in a > 0

    def d(step):
        return (sc.gammainc(a + step, x) - sc.gammainc(a - step, x)) / (2 * step)
    out = (4 * d(h / 2) - d(h)) / 3
    out = np.where(x == 0, 0.0, out)
    return np.where((x < 0) | (a <= 0) | np.isnan(a) | np.isnan(x), np.nan, out)


def _random_gamma_grad_ref(a, x):
    """-dP/da divided by the Gamma(a, 1) density at x."""
    a = np.asarray(a, np.float64)
    x = np.asarray(x, np.float64)
    log_density = (a - 1) * np.log(x) - x - sc.gammaln(a)
    out = -_igamma_grad_a_ref(a, x) / np.exp(log_density)
    out = np.where(x == 0, 0.0, out)
    return np.where((x < 0) | (a <= 0) | np.isnan(a) | np.isnan(x), np.nan, out)


def _polygamma_ref(m, x):
    integral = (m == np.floor(m)) & (m >= 0)
    return np.where(integral, sc.polygamma(np.where(integral, m, 0).astype(np.int64), x),
                    np.nan)


def _zeta_ref(s, q):
    return sc.zeta(s, q)


# ---- jvp building blocks (bound primitives: they differentiate again) ----

def _lbeta(a, b):
    return _sub(_add(lgamma_p.bind(a), lgamma_p.bind(b)), lgamma_p.bind(_add(a, b)))


def _betainc_dx(a, b, x, out):
    """x^(a-1) (1-x)^(b-1) / B(a, b), as JAX writes it."""
    one = _c(x, 1)
    return exp_p.bind(_sub(_add(_mul(_sub(b, one), log1p_p.bind(_neg(x))),
                                _mul(_sub(a, one), log_p.bind(x))), _lbeta(a, b)))


def _igamma_dx(a, x, out):
    """x^(a-1) e^-x / Gamma(a)."""
    return exp_p.bind(_sub(_add(_neg(x), _mul(_sub(a, _c(a, 1)), log_p.bind(x))),
                           lgamma_p.bind(a)))


def _bessel_i1e_dx(x, out):
    """JAX's rule: i0e(x) - y (sign(x) + 1/x), 1/2 where |x| <= eps."""
    dt = get_aval(x).dtype
    eps = float(ml_dtypes.finfo(dt).eps)
    not_tiny = gt_p.bind(abs_p.bind(x), _c(x, eps))
    shape = get_aval(x).shape
    safe_x = select_n_p.bind(not_tiny, _full(shape, x, eps), x)
    dy = _sub(bessel_i0e_p.bind(safe_x),
              _mul(out, _add(sign_p.bind(safe_x), _recip(safe_x))))
    return select_n_p.bind(not_tiny, _full(shape, x, 0.5), dy)


# ---- declarations ----

igamma_p = _binary("igamma", "floating", _igamma_ref, args=("a", "x"), jvp=_partials(
    lambda a, x, out: igamma_grad_a_p.bind(a, x), _igamma_dx))
igammac_p = _binary("igammac", "floating", _igammac_ref, args=("a", "x"), jvp=_partials(
    lambda a, x, out: _neg(igamma_grad_a_p.bind(a, x)),
    lambda a, x, out: _neg(_igamma_dx(a, x, out))))
igamma_grad_a_p = _binary("igamma_grad_a", "floating", _igamma_grad_a_ref, args=("a", "x"),
                          jvp=NO_JAX_DERIVATIVE)
random_gamma_grad_p = _binary("random_gamma_grad", "floating", _random_gamma_grad_ref,
                              args=("a", "x"), jvp=NO_JAX_DERIVATIVE)
regularized_incomplete_beta_p = _declare(
    "regularized_incomplete_beta", 3, "floating", sc.betainc, args=("a", "b", "x"),
    jvp=_partials(_raise("Betainc gradient with respect to a and b not supported."),
                  _raise("Betainc gradient with respect to a and b not supported."),
                  _betainc_dx))
zeta_p = _binary("zeta", "floating", _zeta_ref, args=("x", "q"), jvp=_partials(
    _raise("zeta: the gradient with respect to argument 'x' (the exponent) is not supported"),
    lambda s, q, out: _neg(_mul(s, zeta_p.bind(_add(s, _c(s, 1)), q)))))
polygamma_p = _binary("polygamma", "floating", _polygamma_ref, args=("m", "x"), jvp=_partials(
    _raise("polygamma gradient with respect to m is not supported"),
    lambda m, x, out: polygamma_p.bind(_add(m, _c(m, 1)), x)))
bessel_i0e_p = _unary("bessel_i0e", "floating", sc.i0e, jvp=_partials(
    lambda x, out: _sub(bessel_i1e_p.bind(x), _mul(sign_p.bind(x), out))))
bessel_i1e_p = _unary("bessel_i1e", "floating", sc.i1e, jvp=_partials(_bessel_i1e_dx))
