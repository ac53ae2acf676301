"""The logistic distribution (``jax.scipy.stats.logistic``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import expit, logit
from ._common import const, pnp, promote

def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the logistic density."""
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    x = lax.div(lax.sub(x, loc), scale)
    half_x = lax.div(x, const(x, 2))
    return lax.sub(lax.mul(const(x, -2), pnp.logaddexp(half_x, lax.neg(half_x))), lax.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic density."""
    return lax.exp(logpdf(x, loc, scale))


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic quantile function."""
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic survival function."""
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic inverse survival function."""
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic CDF."""
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return expit(lax.div(lax.sub(x, loc), scale))
