"""The right-skewed Gumbel distribution (``jax.scipy.stats.gumbel_r``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ...nn import log1mexp
from ..special import xlogy
from ._common import const, np, pnp, promote


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Gumbel density."""
    x, loc, scale = promote("gumbel_r.logpdf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    out = lax.add(xlogy(const(x, -1), scale), lax.neg(lax.add(z, lax.exp(lax.neg(z)))))
    return pnp.where(ok, out, const(x, np.nan))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Gumbel density."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Gumbel CDF."""
    x, loc, scale = promote("gumbel_r.logcdf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    return pnp.where(ok, lax.neg(lax.exp(lax.neg(z))), const(x, np.nan))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Gumbel CDF."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Gumbel quantile function."""
    p, loc, scale = promote("gumbel_r.ppf", p, loc, scale)
    ok = lax.gt(p, const(p, 0)) & lax.lt(p, const(p, 1))
    t = lax.mul(scale, lax.log(xlogy(const(p, -1), p)))
    return pnp.where(ok, lax.sub(loc, t), const(p, np.nan))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Gumbel survival function."""
    x, loc, scale = promote("gumbel_r.sf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    out = lax.sub(const(x, 1), lax.exp(lax.neg(lax.exp(neg_z))))
    return pnp.where(ok, out, const(x, np.nan))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Gumbel survival function."""
    x, loc, scale = promote("gumbel_r.logsf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    return pnp.where(ok, log1mexp(lax.exp(neg_z)), const(x, np.nan))
