"""The gamma distribution (``jax.scipy.stats.gamma``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import gammainc, gammaincc, gammaln, xlogy
from ._common import const, np, pnp, promote

def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the gamma density."""
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    y = pnp.where(ok, lax.div(lax.sub(x, loc), scale), const(x, 1))
    log_linear_term = lax.sub(xlogy(lax.sub(a, const(x, 1)), y), y)
    shape_terms = lax.add(gammaln(a), lax.log(scale))
    return pnp.where(ok, lax.sub(log_linear_term, shape_terms), const(x, -np.inf))


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The gamma density."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The gamma CDF (``gammainc``)."""
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    return gammainc(a, pnp.clip(lax.div(lax.sub(x, loc), scale), 0, np.inf))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the gamma CDF."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The gamma survival function (``gammaincc``)."""
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return pnp.where(lax.lt(y, const(y, 0)), const(y, 1), gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the gamma survival function."""
    return lax.log(sf(x, a, loc, scale))
