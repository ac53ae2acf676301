"""The Cauchy distribution (``jax.scipy.stats.cauchy``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ._common import const, np, promote

def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Cauchy density."""
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    normalize_term = lax.log(lax.mul(const(x, np.pi), scale))
    return lax.neg(lax.add(normalize_term, lax.log1p(lax.mul(scaled_x, scaled_x))))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Cauchy density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Cauchy CDF."""
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    return lax.add(const(x, 0.5), lax.mul(lax.div(const(x, 1.0), const(x, np.pi)),
                                          lax.atan(scaled_x)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Cauchy CDF."""
    return lax.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Cauchy survival function."""
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Cauchy survival function."""
    x, loc, scale = promote("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Cauchy inverse survival function."""
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    unscaled = lax.tan(lax.sub(const(q, np.pi / 2), lax.mul(const(q, np.pi), q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Cauchy quantile function."""
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    unscaled = lax.tan(lax.sub(lax.mul(const(q, np.pi), q), const(q, np.pi / 2)))
    return lax.add(lax.mul(unscaled, scale), loc)
