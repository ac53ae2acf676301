"""The generalized normal distribution (``jax.scipy.stats.gennorm``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ._common import promote

def logpdf(x: Any, beta: Any) -> Any:
    """Log of the generalized normal density."""
    x, beta = promote("gennorm.logpdf", x, beta)
    return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def cdf(x: Any, beta: Any) -> Any:
    """The generalized normal CDF."""
    x, beta = promote("gennorm.cdf", x, beta)
    return 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


def pdf(x: Any, beta: Any) -> Any:
    """The generalized normal density."""
    return lax.exp(logpdf(x, beta))
