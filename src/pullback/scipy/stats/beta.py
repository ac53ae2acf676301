"""The beta distribution (``jax.scipy.stats.beta``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import betainc, betaln, xlog1py, xlogy
from ._common import const, np, pnp, promote

def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the beta density."""
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    one, zero = const(x, 1), const(a, 0)
    shape_term = lax.neg(betaln(a, b))
    y = lax.div(lax.sub(x, loc), scale)
    log_linear_term = lax.add(xlogy(lax.sub(a, one), y), xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.add(shape_term, log_linear_term), lax.log(scale))
    result = pnp.where(lax.gt(x, lax.add(loc, scale)) | lax.lt(x, loc), const(x, -np.inf),
                       log_probs)
    bad = lax.le(a, zero) | lax.le(b, zero) | lax.le(scale, zero)
    return pnp.where(bad, const(x, np.nan), result)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta density."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta CDF (``betainc``)."""
    x, a, b, loc, scale = promote("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, pnp.clip(lax.div(lax.sub(x, loc), scale), 0, 1))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the beta CDF."""
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta survival function."""
    x, a, b, loc, scale = promote("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - pnp.clip(lax.div(lax.sub(x, loc), scale), 0, 1))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the beta survival function."""
    return lax.log(sf(x, a, b, loc, scale))
