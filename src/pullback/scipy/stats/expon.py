"""The exponential distribution (``jax.scipy.stats.expon``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ._common import const, np, pnp, promote

def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the exponential density."""
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
    return pnp.where(lax.lt(x, loc), const(x, -np.inf), log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The exponential density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The exponential CDF."""
    x, loc, scale = promote("expon.cdf", x, loc, scale)
    neg_scaled_x = lax.div(lax.sub(loc, x), scale)
    return pnp.where(lax.lt(x, loc), pnp.zeros_like(neg_scaled_x),
                     lax.neg(lax.expm1(neg_scaled_x)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the exponential survival function."""
    x, loc, scale = promote("expon.sf", x, loc, scale)
    neg_scaled_x = lax.div(lax.sub(loc, x), scale)
    return pnp.where(lax.lt(x, loc), pnp.zeros_like(neg_scaled_x), neg_scaled_x)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The exponential survival function."""
    return lax.exp(logsf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the exponential CDF."""
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The exponential quantile function."""
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return pnp.where(pnp.isnan(q) | (q < 0) | (q > 1), const(q, np.nan),
                     lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))
