"""The chi-square distribution (``jax.scipy.stats.chi2``)."""
from __future__ import annotations

from typing import Any

from ... import lax
from ..special import gammainc, gammaincc
from ._common import const, np, pnp, promote

def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the chi-square density."""
    x, df, loc, scale = promote("chi2.logpdf", x, df, loc, scale)
    one, two = const(x, 1), const(x, 2)
    y = lax.div(lax.sub(x, loc), scale)
    df_on_two = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(df_on_two, one), lax.log(y)), lax.div(y, two))
    nrml_cnst = lax.neg(lax.add(lax.lgamma(df_on_two), lax.div(lax.mul(lax.log(two), df), two)))
    log_probs = lax.add(lax.sub(nrml_cnst, lax.log(scale)), kernel)
    return pnp.where(lax.lt(x, loc), const(x, -np.inf), log_probs)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The chi-square density."""
    return lax.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The chi-square CDF."""
    x, df, loc, scale = promote("chi2.cdf", x, df, loc, scale)
    two = const(scale, 2)
    return gammainc(lax.div(df, two),
                    pnp.clip(lax.div(lax.sub(x, loc), lax.mul(scale, two)), 0, np.inf))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the chi-square CDF."""
    return lax.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The chi-square survival function."""
    x, df, loc, scale = promote("chi2.sf", x, df, loc, scale)
    two = const(scale, 2)
    return gammaincc(lax.div(df, two),
                     pnp.clip(lax.div(lax.sub(x, loc), lax.mul(scale, two)), 0, np.inf))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the chi-square survival function."""
    return lax.log(sf(x, df, loc, scale))
