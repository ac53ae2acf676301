"""``pullback.scipy.stats``: the distributions of ``jax.scipy.stats``, one submodule each
(``norm.logpdf``, ``gamma.cdf``, ...), with JAX's formulas."""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet,  # noqa: F401
               expon, gamma, gennorm, geom, gumbel_l, gumbel_r, laplace, logistic, multinomial,
               multivariate_normal, nbinom, norm, pareto, poisson, t, truncnorm, uniform,
               vonmises, wrapcauchy)
from ._core import mode, rankdata, sem  # noqa: F401
from .kde import gaussian_kde  # noqa: F401
