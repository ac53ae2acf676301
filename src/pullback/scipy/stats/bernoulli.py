"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import xlog1py, xlogy
from ._common import const, np, pnp, promote

def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the Bernoulli probability mass function."""
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, p) + xlog1py(lax.sub(const(k, 1), x), -p)
    return pnp.where(lax.lt(x, const(k, 0)) | lax.gt(x, const(k, 1)), const(k, -np.inf),
                     log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The Bernoulli probability mass function."""
    return pnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Any:
    """The Bernoulli CDF."""
    k, p = promote("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)
    bad = pnp.isnan(k) | pnp.isnan(p) | (p < zero) | (p > one)
    out = pnp.where(lax.ge(k, one), one, pnp.where(lax.ge(k, zero), one - p, zero))
    return pnp.where(bad, const(k, np.nan), out)


def ppf(q: Any, p: Any) -> Any:
    """The Bernoulli quantile function."""
    q, p = promote("bernoulli.ppf", q, p)
    zero, one = const(q, 0), const(q, 1)
    bad = pnp.isnan(q) | pnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return pnp.where(bad, const(q, np.nan), pnp.where(lax.le(q, one - p), zero, one))
