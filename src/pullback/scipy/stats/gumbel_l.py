"""The left-skewed Gumbel distribution (``jax.scipy.stats.gumbel_l``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import xlog1py, xlogy
from ._common import const, np, pnp, promote


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the left Gumbel density."""
    x, loc, scale = promote("gumbel_l.logpdf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    out = lax.add(xlogy(const(x, -1), scale), lax.sub(z, lax.exp(z)))
    return pnp.where(ok, out, const(x, np.nan))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The left Gumbel density."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the left Gumbel CDF."""
    x, loc, scale = promote("gumbel_l.logcdf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    return pnp.where(ok, lax.log(-lax.expm1(lax.neg(lax.exp(z)))), const(x, np.nan))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The left Gumbel CDF."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The left Gumbel quantile function."""
    p, loc, scale = promote("gumbel_l.ppf", p, loc, scale)
    ok = lax.gt(p, const(p, 0)) & lax.lt(p, const(p, 1))
    t = lax.mul(scale, lax.log(xlog1py(const(p, -1), lax.neg(p))))
    return pnp.where(ok, lax.add(loc, t), const(p, np.nan))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the left Gumbel survival function."""
    x, loc, scale = promote("gumbel_l.logsf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    return pnp.where(ok, lax.neg(lax.exp(z)), const(x, np.nan))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The left Gumbel survival function."""
    return pnp.exp(logsf(x, loc, scale))
