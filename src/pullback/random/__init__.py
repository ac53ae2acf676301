"""``pullback.random``: ``jax.random``'s API, bit for bit.

Keys, splitting, folding in and every sampler give the values JAX >= 0.5 gives with its default
threefry PRNG (``jax_threefry_partitionable=True``). Keys may be typed key arrays (``key``) or
raw uint32[2] data (``PRNGKey``); functions return keys of the kind they were given.
"""
from ._derive import bits, fold_in, split  # noqa: F401
from ._keys import PRNGKey, key, key_data, key_impl, wrap_key_data  # noqa: F401
from ._keys import PRNGKeyArray  # noqa: F401
from ._continuous import exponential, gumbel  # noqa: F401
from ._discrete import bernoulli, categorical, randint  # noqa: F401
from ._normal import normal, truncated_normal  # noqa: F401
from ._shuffle import choice, permutation  # noqa: F401
from ._uniform import uniform  # noqa: F401
from ._gamma import (ball, beta, chisquare, dirichlet, f, gamma, generalized_normal,  # noqa: F401
                     loggamma, t)
from ._transforms import (cauchy, clone, double_sided_maxwell, geometric,  # noqa: F401
                          key_dtype, laplace, logistic, lognormal, maxwell, multivariate_normal,
                          orthogonal, pareto, rademacher, rayleigh, triangular, wald,
                          weibull_min)
from ._counts import binomial, multinomial, poisson  # noqa: F401

__all__ = ["PRNGKey", "key", "key_data", "key_impl", "wrap_key_data", "split", "fold_in",
           "bits", "uniform", "normal", "truncated_normal", "exponential", "gumbel", "randint",
           "bernoulli", "categorical", "permutation", "choice",
           "ball", "beta", "binomial", "cauchy", "chisquare", "clone", "dirichlet",
           "double_sided_maxwell", "f", "gamma", "generalized_normal", "geometric", "key_dtype",
           "laplace", "loggamma", "logistic", "lognormal", "maxwell", "multinomial",
           "multivariate_normal", "orthogonal", "pareto", "poisson", "rademacher", "rayleigh",
           "t", "triangular", "wald", "weibull_min"]
