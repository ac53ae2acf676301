"""The Poisson distribution (``jax.scipy.stats.poisson``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import gammaincc, gammaln, xlogy
from ._common import const, np, pnp, promote

def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """Log of the Poisson probability mass function."""
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return pnp.where(lax.lt(x, const(k, 0)) | lax.ne(pnp.round(k), k), const(k, -np.inf),
                     log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The Poisson probability mass function."""
    return pnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The Poisson CDF (``gammaincc``)."""
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    p = gammaincc(pnp.floor(1 + x), mu)
    return pnp.where(lax.lt(x, const(k, 0)), const(k, 0), p)
