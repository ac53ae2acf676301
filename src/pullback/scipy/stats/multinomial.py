"""The multinomial distribution (``jax.scipy.stats.multinomial``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ...numpy._promotion import promote_args_numeric
from ...tracer import dtypes
from ..special import gammaln, xlogy
from ._common import const, np, pnp, promote


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """Log of the multinomial probability mass function (integer ``x`` and ``n``)."""
    (p,) = promote("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.is_integer(x.dtype):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    logprobs = gammaln(n + 1) + pnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return pnp.where(pnp.equal(pnp.sum(x), n), logprobs, const(logprobs, -np.inf))


def pmf(x: Any, n: Any, p: Any) -> Any:
    """The multinomial probability mass function."""
    return lax.exp(logpmf(x, n, p))
