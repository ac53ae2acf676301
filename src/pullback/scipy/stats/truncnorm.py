"""The truncated normal distribution on [a, b] (``jax.scipy.stats.truncnorm``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import log_ndtr, logsumexp, ndtr
from . import norm
from ._common import const, np, pnp, promote


def _log_diff(x: Any, y: Any) -> Any:
    return logsumexp(pnp.stack([x, y]), b=pnp.stack([pnp.ones_like(x), -pnp.ones_like(y)]),
                     axis=0)


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """log(ndtr(b) - ndtr(a)), accurate in both tails."""
    a, b = pnp.broadcast_arrays(pnp.asarray(a), pnp.asarray(b))
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    a_tail = pnp.where(case_right, -b, a)
    b_tail = pnp.where(case_right, -a, b)
    mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
    mass_central = pnp.log1p(-ndtr(a) - ndtr(-b))
    return pnp.where(case_central, mass_central, mass_tail)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the truncated normal density (a, b in standard units)."""
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    val = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    x_scaled = lax.div(lax.sub(x, loc), scale)
    val = pnp.where((x_scaled < a) | (x_scaled > b), const(val, -np.inf), val)
    return pnp.where(a >= b, const(val, np.nan), val)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The truncated normal density."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the truncated normal CDF."""
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = pnp.broadcast_arrays(x, a, b)
    x = lax.div(lax.sub(x, loc), scale)
    lgm_ab = _log_gauss_mass(a, b)
    logcdf_ = _log_gauss_mass(a, x) - lgm_ab
    logsf_ = _log_gauss_mass(x, b) - lgm_ab
    out = pnp.where(x > a, logcdf_, const(x, 0.0))
    out = pnp.where(logcdf_ > -0.1, pnp.log1p(-pnp.exp(logsf_)), out)
    out = pnp.where(x <= a, const(x, -np.inf), out)
    out = pnp.where(x >= b, const(x, 0.0), out)
    return pnp.where(a >= b, const(x, np.nan), out)


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The truncated normal CDF."""
    return lax.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the truncated normal survival function."""
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The truncated normal survival function."""
    return lax.exp(logsf(x, a, b, loc, scale))
