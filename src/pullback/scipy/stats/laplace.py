"""The Laplace distribution (``jax.scipy.stats.laplace``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ._common import const, pnp, promote

def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the Laplace density."""
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    linear_term = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear_term, lax.log(lax.mul(const(x, 2), scale))))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Laplace density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Laplace CDF."""
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    half = const(x, 0.5)
    diff = lax.div(lax.sub(x, loc), scale)
    return pnp.where(lax.le(diff, const(x, 0)), lax.mul(half, lax.exp(diff)),
                     lax.sub(const(x, 1), lax.mul(half, lax.exp(lax.neg(diff)))))
