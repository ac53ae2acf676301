"""The geometric distribution (``jax.scipy.stats.geom``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import xlog1py
from ._common import const, np, pnp, promote

def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Log of the geometric probability mass function."""
    k, p, loc = promote("geom.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = xlog1py(lax.sub(x, const(k, 1)), -p) + lax.log(p)
    return pnp.where(lax.le(x, const(k, 0)), const(k, -np.inf), log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The geometric probability mass function."""
    return pnp.exp(logpmf(k, p, loc))
