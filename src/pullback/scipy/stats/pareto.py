"""The Pareto distribution (``jax.scipy.stats.pareto``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ._common import const, np, pnp, promote

def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Pareto density."""
    x, b, loc, scale = promote("pareto.logpdf", x, b, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    normalize_term = lax.log(lax.div(scale, b))
    log_probs = lax.neg(lax.add(normalize_term, lax.mul(lax.add(b, const(x, 1)),
                                                        lax.log(scaled_x))))
    return pnp.where(lax.lt(x, lax.add(loc, scale)), const(x, -np.inf), log_probs)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Pareto density."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Pareto CDF."""
    x, b, loc, scale = promote("pareto.cdf", x, b, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    out = lax.sub(const(x, 1), lax.pow(scaled_x, lax.neg(b)))
    return pnp.where(lax.lt(x, lax.add(loc, scale)), const(x, 0), out)


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Pareto CDF."""
    x, b, loc, scale = promote("pareto.logcdf", x, b, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    out = lax.log1p(lax.neg(lax.pow(scaled_x, lax.neg(b))))
    return pnp.where(lax.lt(x, lax.add(loc, scale)), const(x, -np.inf), out)


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Pareto survival function."""
    x, b, loc, scale = promote("pareto.logsf", x, b, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    out = lax.neg(lax.mul(b, lax.log(scaled_x)))
    return pnp.where(lax.lt(x, lax.add(loc, scale)), const(x, 0), out)


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Pareto survival function."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Pareto quantile function."""
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    one = const(q, 1)
    val = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return pnp.where(pnp.isnan(q) | (q < 0) | (q > 1), const(q, np.nan), val)
