"""The negative binomial distribution (``jax.scipy.stats.nbinom``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import gammaln, xlogy
from ._common import const, np, pnp, promote

def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the negative binomial probability mass function."""
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    one = const(k, 1)
    y = lax.sub(k, loc)
    comb_term = lax.sub(lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one)))
    log_linear_term = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    return pnp.where(lax.lt(k, loc), const(k, -np.inf), lax.add(comb_term, log_linear_term))


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The negative binomial probability mass function."""
    return lax.exp(logpmf(k, n, p, loc))
