"""The multivariate normal distribution (``jax.scipy.stats.multivariate_normal``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ...lax import linalg as lax_linalg
from ...numpy._promotion import promote_dtypes_inexact
from ._common import np, pnp


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """Log of the multivariate normal density (``cov`` (..., n, n), a scalar, or a scalar
    variance for 1-d ``mean``)."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact("multivariate_normal.logpdf", pnp.asarray(x),
                                          pnp.asarray(mean), pnp.asarray(cov))
    if not mean.shape:
        return (-1 / 2 * pnp.square(x - mean) / cov
                - 1 / 2 * (pnp.log(2 * np.pi) + pnp.log(cov)))
    n = mean.shape[-1]
    if not np.shape(cov):
        y = x - mean
        return (-1 / 2 * pnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (pnp.log(2 * np.pi) + pnp.log(cov)))
    if cov.ndim < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    L = lax_linalg.cholesky(cov)
    d = x - mean
    batch = tuple(pnp.broadcast_shapes(L.shape[:-2], d.shape[:-1]))
    L_b = pnp.broadcast_to(L, batch + (n, n))
    d_b = pnp.broadcast_to(d, batch + (n,))
    y = lax_linalg.triangular_solve(L_b, d_b[..., None], left_side=True, lower=True)[..., 0]
    return (-1 / 2 * pnp.einsum("...i,...i->...", y, y) - n / 2 * pnp.log(2 * np.pi)
            - pnp.log(pnp.diagonal(L, axis1=-1, axis2=-2)).sum(-1))


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """The multivariate normal density."""
    return lax.exp(logpdf(x, mean, cov))
