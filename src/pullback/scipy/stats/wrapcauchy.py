"""The wrapped Cauchy distribution (``jax.scipy.stats.wrapcauchy``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ._common import const, np, pnp, promote

def logpdf(x: Any, c: Any) -> Any:
    """Log of the wrapped Cauchy density on [0, 2 pi]."""
    x, c = promote("wrapcauchy.logpdf", x, c)
    inside = lax.ge(x, const(x, 0)) & lax.le(x, const(x, np.pi * 2))
    val = pnp.log(1 - c * c) - pnp.log(const(x, 2 * np.pi)) - pnp.log(1 + c * c - 2 * c * pnp.cos(x))
    ok = lax.gt(c, const(c, 0)) & lax.lt(c, const(c, 1))
    return pnp.where(ok, pnp.where(inside, val, const(x, -np.inf)), const(x, np.nan))


def pdf(x: Any, c: Any) -> Any:
    """The wrapped Cauchy density."""
    return lax.exp(logpdf(x, c))
