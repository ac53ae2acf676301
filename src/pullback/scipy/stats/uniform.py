"""The uniform distribution (``jax.scipy.stats.uniform``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ._common import const, np, pnp, promote

def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the uniform density on [loc, loc + scale]."""
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.log(scale))
    return pnp.where(lax.gt(x, lax.add(loc, scale)) | lax.lt(x, loc), const(x, -np.inf),
                     log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The uniform density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The uniform CDF."""
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    hi = lax.add(loc, scale)
    inside = lax.ge(x, loc) & lax.le(x, hi)
    out = pnp.where(inside, lax.div(lax.sub(x, loc), scale), const(x, 0))
    out = pnp.where(lax.gt(x, hi) & ~lax.lt(x, loc), const(x, 1), out)
    return pnp.where(lax.lt(x, loc), const(x, 0), out)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The uniform quantile function."""
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return pnp.where(pnp.isnan(q) | (q < 0) | (q > 1), const(q, np.nan),
                     lax.add(loc, lax.mul(scale, q)))
