"""``gaussian_kde``: Gaussian kernel density estimation (``jax.scipy.stats.gaussian_kde``)."""
from __future__ import annotations

from typing import Any

from ... import random
from ...numpy._promotion import promote_dtypes_inexact
from ...tracer import dtypes
from ...tracer.pytree import register_pytree_node
from .. import linalg
from ..special import logsumexp, ndtr
from ._common import np, pnp


def _weighted_cov(x: Any, w: Any) -> Any:
    """np.cov(x, rowvar=1, bias=False, aweights=w) for weights summing to 1."""
    mean = pnp.sum(x * w, axis=1, keepdims=True)
    xc = x - mean
    fact = 1 - pnp.sum(w * w)
    return (xc * w) @ xc.T / fact


def _kernel_eval(in_log: bool, points: Any, values: Any, xi: Any, precision: Any) -> Any:
    points, values, xi, precision = promote_dtypes_inexact("gaussian_kde", points, values, xi,
                                                           precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points = points @ whitening
    xi = xi @ whitening
    log_norm = pnp.sum(pnp.log(pnp.diagonal(whitening))) - 0.5 * d * np.log(2 * np.pi)
    # (m, n): the kernel of every evaluation point against every data point
    arg = log_norm - 0.5 * pnp.sum(pnp.square(xi[:, None, :] - points[None, :, :]), axis=-1)
    if in_log:
        return logsumexp(pnp.log(values[:, 0])[None, :] + arg, axis=1)[:, None]
    return pnp.sum(values[:, 0][None, :] * pnp.exp(arg), axis=1)[:, None]


class gaussian_kde:
    """A Gaussian kernel density estimate of ``dataset`` (d, n), as ``scipy.stats``' and JAX's.

    Args:
      dataset: the data points, (d, n) or (n,).
      bw_method: "scott" (default), "silverman", a scalar factor or a callable of the kde.
      weights: optional weights of the points.
    """

    def __init__(self, dataset: Any, bw_method: Any = None, weights: Any = None):
        dataset = pnp.atleast_2d(pnp.asarray(dataset))
        if dtypes.is_complex(dataset.dtype):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            dataset, weights = promote_dtypes_inexact("gaussian_kde", dataset,
                                                      pnp.asarray(weights))
            weights = pnp.atleast_1d(weights)
            weights = weights / pnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = promote_dtypes_inexact("gaussian_kde", dataset)
            weights = pnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self.dataset, self.weights = dataset, weights
        self.neff = 1 / pnp.sum(weights ** 2)
        bw = "scott" if bw_method is None else bw_method
        if bw == "scott":
            factor = pnp.power(self.neff, -1. / (d + 4))
        elif bw == "silverman":
            factor = pnp.power(self.neff * (d + 2) / 4.0, -1. / (d + 4))
        elif np.isscalar(bw) and not isinstance(bw, str):
            factor = bw
        elif callable(bw):
            factor = bw(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                             "callable.")
        data_cov = pnp.atleast_2d(_weighted_cov(dataset, weights))
        self.covariance = data_cov * factor ** 2
        self.inv_cov = pnp.linalg.inv(data_cov) / factor ** 2

    @property
    def d(self) -> int:
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        return self.dataset.shape[1]

    def _reshape_points(self, points: Any) -> Any:
        points = pnp.atleast_2d(pnp.asarray(points))
        if dtypes.is_complex(points.dtype):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = pnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def evaluate(self, points: Any) -> Any:
        """The estimated density at ``points`` (d, m)."""
        points = self._reshape_points(points)
        return _kernel_eval(False, self.dataset.T, self.weights[:, None], points.T,
                            self.inv_cov)[:, 0]

    __call__ = evaluate
    pdf = evaluate

    def logpdf(self, x: Any) -> Any:
        """The log of the estimated density at ``x``."""
        x = self._reshape_points(x)
        return _kernel_eval(True, self.dataset.T, self.weights[:, None], x.T,
                            self.inv_cov)[:, 0]

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The probability mass in [low, high] (1-d data only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = pnp.squeeze(pnp.sqrt(self.covariance))
        lo = pnp.squeeze((low - self.dataset) / sigma)
        hi = pnp.squeeze((high - self.dataset) / sigma)
        return pnp.sum(self.weights * (ndtr(hi) - ndtr(lo)))

    def resample(self, key: Any, shape: tuple = ()) -> Any:
        """Draws from the estimate: data points chosen by weight plus normal noise."""
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, pnp.zeros(self.d, self.covariance.dtype),
                                         self.covariance, shape=shape,
                                         dtype=self.dataset.dtype).T
        return self.dataset[:, ind] + eps

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method: Any = None) -> None:
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")


def _flatten(k: gaussian_kde):
    return (k.neff, k.dataset, k.weights, k.covariance, k.inv_cov), None


def _unflatten(aux: Any, children: Any) -> gaussian_kde:
    k = gaussian_kde.__new__(gaussian_kde)
    k.neff, k.dataset, k.weights, k.covariance, k.inv_cov = children
    return k


register_pytree_node(gaussian_kde, _flatten, _unflatten)
