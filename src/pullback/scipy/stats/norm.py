"""The normal distribution (``jax.scipy.stats.norm``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from .. import special
from ._common import const, np, promote


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the normal density."""
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    scale_sqrd = lax.square(scale)
    log_normalizer = lax.log(lax.mul(const(x, 2 * np.pi), scale_sqrd))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sqrd)
    return lax.div(lax.add(log_normalizer, quadratic), const(x, -2))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal CDF (``special.ndtr``)."""
    x, loc, scale = promote("norm.cdf", x, loc, scale)
    return special.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the normal CDF (``special.log_ndtr``)."""
    x, loc, scale = promote("norm.logcdf", x, loc, scale)
    return special.log_ndtr(lax.div(lax.sub(x, loc), scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal quantile function."""
    q, loc, scale = promote("norm.ppf", q, loc, scale)
    return special.ndtri(q) * scale + loc


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the normal survival function."""
    x, loc, scale = promote("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal survival function."""
    x, loc, scale = promote("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal inverse survival function."""
    q, loc, scale = promote("norm.isf", q, loc, scale)
    return ppf(lax.sub(const(q, 1), q), loc, scale)


