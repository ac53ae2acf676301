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


_ENTROPY_TERMS = 320  # k = 0..319: for mu < 100 the mass above k = 320 is below 1e-40


def entropy(mu: Any, loc: Any = 0) -> Any:
    """The Shannon entropy of Poisson(mu) (``loc`` shifts the support and leaves it unchanged).

    ``mu < 100``: ``-sum_k p_k log p_k`` over ``k < 320``; above, the asymptotic series
    ``log(2 pi e mu)/2 - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3)`` (next term ~1e-9 at 100).
    0 at ``mu == 0``, NaN below.

    Args:
      mu: array-like, the mean (``>= 0``).
      loc: array-like, the location (broadcast with ``mu``; no effect on the value).

    Returns:
      The entropy, broadcast over ``mu`` and ``loc``, in their promoted inexact dtype.
    """
    mu, loc = promote("poisson.entropy", mu, loc)
    small = mu < 100
    mu_s = pnp.where(small & (mu > 0), mu, const(mu, 1.0))
    k = pnp.arange(_ENTROPY_TERMS, dtype=mu.dtype).reshape((-1,) + (1,) * mu.ndim)
    log_p = xlogy(k, mu_s) - gammaln(k + 1) - mu_s
    direct = -pnp.sum(pnp.exp(log_p) * log_p, axis=0)
    mu_l = pnp.where(small, const(mu, 100.0), mu)
    inv = 1 / mu_l
    asym = (0.5 * pnp.log(2 * np.pi * np.e * mu_l)
            - inv * (1 / 12 + inv * (1 / 24 + inv * (19 / 360))))
    out = pnp.where(small, direct, asym)
    out = pnp.where(mu == 0, const(mu, 0.0), out)
    return pnp.where(mu < 0, const(mu, np.nan), out)
