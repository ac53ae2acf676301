"""The Dirichlet distribution (``jax.scipy.stats.dirichlet``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ...numpy._promotion import promote_dtypes_inexact
from ..special import gammaln, xlogy
from ._common import const, np, pnp


def _is_simplex(x: Any) -> Any:
    x_sum = pnp.sum(x, axis=0)
    return pnp.all(x > 0, axis=0) & (abs(x_sum - 1) < 1e-6)


def logpdf(x: Any, alpha: Any) -> Any:
    """Log of the Dirichlet density; ``x`` holds the categories on its first axis (all K, or
    K - 1 with the last implied)."""
    x, alpha = promote_dtypes_inexact("dirichlet.logpdf", pnp.asarray(x), pnp.asarray(alpha))
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    one = const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = pnp.concatenate([x, lax.sub(one, x.sum(0, keepdims=True))], axis=0)
    normalize_term = pnp.sum(gammaln(alpha)) - gammaln(pnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = pnp.sum(xlogy(alpha - one, x), axis=0) - normalize_term
    return pnp.where(_is_simplex(x), log_probs, const(x, -np.inf))


def pdf(x: Any, alpha: Any) -> Any:
    """The Dirichlet density."""
    return lax.exp(logpdf(x, alpha))
