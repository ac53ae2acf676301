"""The beta-binomial distribution (``jax.scipy.stats.betabinom``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import betaln
from ._common import const, np, pnp, promote

def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """Log of the beta-binomial probability mass function."""
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one, zero = const(y, 1), const(y, 0)
    combiln = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one), lax.add(y, one))))
    beta_lns = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
    log_probs = lax.add(combiln, beta_lns)
    log_probs = pnp.where(lax.eq(y, zero) & lax.eq(n, zero), const(y, 0.0), log_probs)
    y_cond = lax.lt(y, lax.neg(loc)) | lax.gt(y, n) | lax.le(lax.add(y, a), zero)
    log_probs = pnp.where(y_cond, const(y, -np.inf), log_probs)
    bad = lax.lt(n, zero) | lax.le(a, zero) | lax.le(b, zero)
    return pnp.where(bad, const(y, np.nan), log_probs)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """The beta-binomial probability mass function."""
    return lax.exp(logpmf(k, n, a, b, loc))
