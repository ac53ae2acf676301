"""The binomial distribution (``jax.scipy.stats.binom``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import gammaln, xlog1py, xlogy
from ._common import const, np, pnp, promote

def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the binomial probability mass function."""
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    zero = const(y, 0)
    comb_term = lax.sub(gammaln(n + 1), lax.add(gammaln(y + 1), gammaln(n - y + 1)))
    log_linear_term = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(comb_term, log_linear_term)
    y_n_cond = (lax.eq(y, zero) & lax.eq(n, zero)) | lax.eq(log_linear_term, zero)
    log_probs = pnp.where(y_n_cond, const(y, 0.0), log_probs)
    return pnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, const(y, -np.inf))


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The binomial probability mass function."""
    return lax.exp(logpmf(k, n, p, loc))
