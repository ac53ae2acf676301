"""The von Mises distribution (``jax.scipy.stats.vonmises``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ._common import const, np, pnp, promote

def logpdf(x: Any, kappa: Any) -> Any:
    """Log of the von Mises density."""
    x, kappa = promote("vonmises.logpdf", x, kappa)
    val = kappa * (pnp.cos(x) - 1) - pnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return pnp.where(lax.gt(kappa, const(kappa, 0)), val, const(x, np.nan))


def pdf(x: Any, kappa: Any) -> Any:
    """The von Mises density."""
    return lax.exp(logpdf(x, kappa))
