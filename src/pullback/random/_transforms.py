"""Samplers that transform uniform or normal samples (``cauchy``, ``laplace``, ``logistic``,
``lognormal``, ``pareto``, ``rayleigh``, ``weibull_min``, ``maxwell``,
``double_sided_maxwell``, ``rademacher``, ``geometric``, ``triangular``, ``wald``,
``multivariate_normal``, ``orthogonal``) and ``clone``/``key_dtype``: JAX's formulas on JAX's
uniform/normal values, written with the same operation order so the roundings agree."""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from .. import lax
from .. import numpy as pnp
from ..tracer import dtypes
from ._checks import canonicalize_shape, check_broadcast, float_dtype, shape_or_broadcast, \
    user_dtype
from ._continuous import exponential
from ._derive import split2
from ._gamma import _rademacher_from_keys
from ._keys import KeyTy, check_key, key_dtype_fry
from ._normal import normal_from_keys
from ._ops import broadcast, const, finfo, param, shape_of
from ._uniform import uniform_from_keys


def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard Cauchy random values: ``tan(pi * (u - 1/2))``, ``u`` uniform in [eps, 1).

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("cauchy", key)
    dtype = float_dtype("cauchy", dtype)
    shape = canonicalize_shape("cauchy", shape)
    u = uniform_from_keys(keys, shape, dtype, const(finfo(dtype).eps, dtype), 1.0)
    return lax.tan(lax.mul(const(np.pi, dtype), lax.sub(u, const(0.5, dtype))))


def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard Laplace random values: ``sign(u) * log1p(-|u|)``, ``u`` uniform in (-1, 1).

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("laplace", key)
    dtype = float_dtype("laplace", dtype)
    shape = canonicalize_shape("laplace", shape)
    lo = const(-1.0 + float(finfo(dtype).epsneg), dtype)
    u = uniform_from_keys(keys, shape, dtype, lo, 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard logistic random values: ``log(u) - log1p(-u)``, ``u`` uniform in [tiny, 1).

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("logistic", key)
    dtype = float_dtype("logistic", dtype)
    shape = canonicalize_shape("logistic", shape)
    x = uniform_from_keys(keys, shape, dtype, const(finfo(dtype).tiny, dtype), 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def lognormal(key: Any, sigma: Any = np.float32(1), shape: Sequence[int] | None = None,
              dtype: Any = None) -> Any:
    """Log-normal random values: ``exp(sigma * normal)``.

    Args:
      key: a PRNG key (typed or raw).
      sigma: the standard deviation of the logarithm, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``sigma``'s shape.
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype)
    shape = shape_or_broadcast("lognormal", shape, shape_of(sigma))
    sigma = broadcast(param(sigma, dtype), shape)
    return lax.exp(lax.mul(normal_from_keys(keys, shape, dtype), sigma))


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Pareto random values with shape ``b`` (support [1, inf)): ``exp(e / b)``, ``e``
    exponential.

    Args:
      key: a PRNG key (typed or raw).
      b: the shape parameter, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``b``'s shape.
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("pareto", key)
    dtype = float_dtype("pareto", dtype)
    shape = shape_or_broadcast("pareto", shape, shape_of(b))
    e = exponential(keys, shape, dtype)
    return lax.exp(lax.div(e, broadcast(param(b, dtype), shape)))


def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Rayleigh random values: ``scale * sqrt(-2 log u)``.

    Args:
      key: a PRNG key (typed or raw).
      scale: the scale, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``scale``'s shape.
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("rayleigh", key)
    dtype = float_dtype("rayleigh", dtype)
    shape = shape_or_broadcast("rayleigh", shape, shape_of(scale))
    u = uniform_from_keys(keys, shape, dtype, 0.0, 1.0)
    scale = broadcast(param(scale, dtype), shape, keep_scalar=False)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), const(-2, dtype))))


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (),
                dtype: Any = None) -> Any:
    """Weibull random values: ``(-log1p(-u)) ** (1 / concentration) * scale``.

    Args:
      key: a PRNG key (typed or raw).
      scale: the scale.
      concentration: the shape parameter.
      shape: the result shape. Default ().
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    shape = canonicalize_shape("weibull_min", shape)
    u = uniform_from_keys(keys, shape, dtype, 0.0, 1.0)
    return pnp.multiply(pnp.power(pnp.negative(pnp.log1p(pnp.negative(u))),
                                  1.0 / concentration), scale)


def _maxwell(keys: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    x = normal_from_keys(keys, tuple(shape) + (3,), dtype)
    return pnp.sqrt(pnp.sum(pnp.multiply(x, x), axis=-1))  # jnp.linalg.norm's vector 2-norm


def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Maxwell random values: the norms of 3-vectors of standard normal values.

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    return _maxwell(keys, canonicalize_shape("maxwell", shape), dtype)


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: Any = None) -> Any:
    """Double-sided Maxwell random values: ``sign * maxwell * scale + loc``.

    Args:
      key: a PRNG key (typed or raw).
      loc, scale: the location and scale.
      shape: the sample shape, prepended to the parameters' broadcast shape (JAX's rule).
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    shape = canonicalize_shape("double_sided_maxwell", shape)
    params = tuple(pnp.broadcast_shapes(shape_of(loc), shape_of(scale)))
    if not shape:
        shape = params
    shape = tuple(shape) + params
    k_maxwell, k_sign = split2(keys)
    m = _maxwell(k_maxwell, shape, dtype)
    sign = _rademacher_from_keys(k_sign, shape, dtype)
    return pnp.add(pnp.multiply(pnp.multiply(sign, m), scale), loc)


def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Random signs -1 and +1 with equal probability.

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: the result dtype (int32 by default).
    """
    keys, _ = check_key("rademacher", key)
    dtype = user_dtype("rademacher", int if dtype is None else dtype)
    return _rademacher_from_keys(keys, canonicalize_shape("rademacher", shape), dtype)


def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Geometric random values (the number of trials to the first success, from 1).

    Args:
      key: a PRNG key (typed or raw).
      p: the success probability, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``p``'s shape.
      dtype: an integer dtype (int32 by default).
    """
    keys, _ = check_key("geometric", key)
    dtype = user_dtype("geometric", int if dtype is None else dtype)
    if not dtypes.is_integer(dtype):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = shape_or_broadcast("geometric", shape, shape_of(p))
    p = pnp.asarray(p)
    if not dtypes.is_float(p.dtype):
        p = p.astype(dtypes.float32)
    u = uniform_from_keys(keys, shape, p.dtype, 0.0, 1.0)
    u = lax.select_n(lax.eq(u, const(0, p.dtype)), u, lax.full_like(u, 1))
    log_1mp = broadcast(lax.log1p(lax.neg(p)), shape)
    g = lax.add(lax.floor(lax.div(lax.log(u), log_1mp)), const(1, p.dtype))
    return lax.convert_element_type(g, dtype)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Sequence[int] | None = None,
               dtype: Any = None) -> Any:
    """Triangular random values on [left, right] with peak ``mode`` (inverse CDF).

    Args:
      key: a PRNG key (typed or raw).
      left, mode, right: the parameters, broadcast-compatible with ``shape``.
      shape: the result shape; by default the parameters' broadcast shape.
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("triangular", key)
    dtype = float_dtype("triangular", dtype)
    shape = shape_or_broadcast("triangular", shape, shape_of(left), shape_of(mode),
                               shape_of(right))
    left, mode, right = (broadcast(param(v, dtype), shape, keep_scalar=False)
                         for v in (left, mode, right))
    width = lax.sub(right, left)
    fc = lax.div(lax.sub(mode, left), width)
    u = uniform_from_keys(keys, shape, dtype, 0.0, 1.0)
    out1 = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    out2 = lax.sub(right, lax.sqrt(lax.mul(lax.mul(lax.sub(const(1, dtype), u), width),
                                           lax.sub(right, mode))))
    return lax.select_n(lax.lt(u, fc), out2, out1)


def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) random values with the given mean (unit shape parameter).

    Args:
      key: a PRNG key (typed or raw).
      mean: the mean, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``mean``'s shape.
      dtype: a float dtype (float32 by default).
    """
    keys, _ = check_key("wald", key)
    dtype = float_dtype("wald", dtype)
    shape = shape_or_broadcast("wald", shape, shape_of(mean))
    k1, k2 = split2(keys)
    mean = broadcast(param(mean, dtype), shape, keep_scalar=False)
    v = normal_from_keys(k1, shape, dtype)
    z = uniform_from_keys(k2, shape, dtype, 0.0, 1.0)
    c = lambda x: const(x, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(lax.add(lax.mul(lax.mul(c(4), mean), y), lax.mul(mean_sq, y_sq)))
    x = lax.sub(lax.add(mean, lax.div(lax.mul(mean_sq, y), c(2))),
                lax.mul(lax.div(mean, c(2)), sqrt_term))
    return lax.select_n(lax.le(z, lax.div(mean, lax.add(mean, x))), lax.div(mean_sq, x), x)


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None,
                        dtype: Any = None, method: str = "cholesky") -> Any:
    """Multivariate normal random values.

    Args:
      key: a PRNG key (typed or raw).
      mean: the means, (..., n).
      cov: the covariance matrices, (..., n, n).
      shape: the batch shape, broadcast-compatible with ``mean.shape[:-1]`` and
        ``cov.shape[:-2]``; by default their broadcast shape.
      dtype: a float dtype (``mean``'s by default).
      method: how ``cov`` is factored: "cholesky" (default), "eigh" or "svd" (the last two
        need ``pullback.numpy.linalg.eigh`` / ``svd``).

    Returns:
      ``mean + factor @ z`` for standard normal ``z`` of ``shape + (n,)``.
    """
    keys, _ = check_key("multivariate_normal", key)
    mean, cov = pnp.asarray(mean), pnp.asarray(cov)
    if not dtypes.is_float(mean.dtype) or not dtypes.is_float(cov.dtype):
        common = pnp.result_type(mean.dtype, cov.dtype, pnp.float32)
        mean, cov = mean.astype(common), cov.astype(common)
    if mean.dtype != cov.dtype:
        common = pnp.result_type(mean.dtype, cov.dtype)
        mean, cov = mean.astype(common), cov.astype(common)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else user_dtype("multivariate_normal", dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got "
                         f"{dtype}")
    if not mean.ndim >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if not cov.ndim >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = tuple(pnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        shape = canonicalize_shape("multivariate_normal", shape)
        check_broadcast("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "cholesky":
        factor = pnp.linalg.cholesky(cov)
    else:
        fn = getattr(pnp.linalg, method, None)
        if fn is None:
            raise NotImplementedError(f"multivariate_normal: method={method!r} needs "
                                      f"pullback.numpy.linalg.{method}, which this build lacks")
        if method == "svd":
            u, s, _ = fn(cov)
            factor = pnp.multiply(u, pnp.sqrt(s[..., None, :]))
        else:
            w, v = fn(cov)
            factor = pnp.multiply(v, pnp.sqrt(w[..., None, :]))
    z = normal_from_keys(keys, tuple(shape) + (n,), dtype)
    return pnp.add(mean, pnp.einsum("...ij,...j->...i", factor, z))


def _orthonormalize(z: Any) -> Any:
    """Q of z = QR (tall z, (..., n, k)) with R's diagonal positive: modified Gram-Schmidt,
    twice (the factorization with a positive diagonal is unique, so this is the Q of any QR
    with its signs fixed)."""
    k = z.shape[-1]
    cols = [z[..., j] for j in range(k)]
    out: list = []
    for j in range(k):
        v = cols[j]
        for _ in range(2):
            for q in out:
                v = pnp.subtract(v, pnp.multiply(pnp.sum(pnp.multiply(q, v), axis=-1,
                                                         keepdims=True), q))
        out.append(pnp.divide(v, pnp.sqrt(pnp.sum(pnp.multiply(v, v), axis=-1,
                                                   keepdims=True))))
    return pnp.stack(out, axis=-1)


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """Random (semi-)orthogonal matrices from the Haar distribution.

    Args:
      key: a PRNG key (typed or raw).
      n: the number of rows.
      shape: the batch shape. Default ().
      dtype: a float dtype (float32 by default).
      m: the number of columns (``n`` by default).

    Returns:
      An array of ``shape + (n, m)``: Q of the QR decomposition of a normal matrix, its
      columns' signs fixed by R's diagonal (as JAX).
    """
    _m = n if m is None else m
    shape = canonicalize_shape("orthogonal", shape)
    keys, _ = check_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype)
    n, _m = operator.index(n), operator.index(_m)
    z = normal_from_keys(keys, tuple(shape) + (max(n, _m), min(n, _m)), dtype)
    qr = getattr(pnp.linalg, "qr", None)
    if qr is not None:
        q, r = qr(z)
        d = pnp.diagonal(r, axis1=-2, axis2=-1)
        x = pnp.multiply(q, pnp.expand_dims(pnp.sign(d), -2))
    else:
        x = _orthonormalize(z)
    return pnp.swapaxes(x, -1, -2) if n < _m else x


def clone(key: Any) -> Any:
    """A copy of ``key`` for reuse (the identity outside JAX's key-reuse checking)."""
    check_key("clone", key, allow_batched=True)
    return key


def key_dtype(impl_spec: Any = None) -> KeyTy:
    """The dtype of typed key arrays (threefry2x32, the only implementation here).

    Args:
      impl_spec: None or "threefry2x32".
    """
    if impl_spec not in (None, "threefry2x32"):
        raise ValueError(f"key_dtype: unsupported PRNG implementation {impl_spec!r}; only "
                         "'threefry2x32' is available")
    return key_dtype_fry

