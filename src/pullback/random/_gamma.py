"""``gamma`` and the samplers built on it (``loggamma``, ``beta``, ``dirichlet``, ``chisquare``,
``f``, ``t``, ``generalized_normal``, ``ball``), with JAX's algorithms and keys.

Gamma samples are Marsaglia and Tsang's rejection method, one key per element (``split(key,
a.size)``), as JAX's ``_gamma_one``: JAX runs it as a vmapped while loop, so every element
loops until its own proposal is accepted; here one while loop advances all elements, each
updating only while its own condition holds, which gives the same values. The derivative
with respect to ``a`` is the implicit reparameterization ``lax.random_gamma_grad`` (JAX's
rule, through a custom JVP).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from .. import numpy as pnp
from ..lax._random_bits import random_split
from ..tracer.core import get_aval
from ..transforms.custom_derivatives import custom_jvp
from ._checks import canonicalize_shape, check_broadcast, float_dtype, shape_or_broadcast
from ._continuous import exponential
from ._derive import split2
from ._keys import check_key
from ._normal import normal_from_keys
from ._ops import broadcast, const, finfo, param, shape_of
from ._uniform import uniform_from_keys


def split_n(keys: Any, n: int) -> list[Any]:
    """``split(key, n)`` of each key of ``keys`` (..., 2), as n key-data arrays."""
    both = random_split(keys, (n,))
    axis = get_aval(both).ndim - 2
    return [lax.index_in_dim(both, i, axis, keepdims=False) for i in range(n)]


def _where(mask: Any, a: Any, b: Any) -> Any:
    """``a`` where ``mask`` else ``b``; a mask of shape (n,) selects whole keys (n, 2)."""
    if get_aval(a).ndim > get_aval(mask).ndim:
        mask = lax.broadcast_in_dim(mask, get_aval(a).shape, (0,))
    return lax.select_n(mask, b, a)


def _gamma_flat(keys: Any, alpha: Any, log_space: bool) -> Any:
    """Marsaglia-Tsang samples for keys (n, 2) and alphas (n,) (JAX's ``_gamma_one``, batched)."""
    dtype = get_aval(alpha).dtype
    n = get_aval(alpha).shape[0]
    c_ = lambda v: const(v, dtype)
    zeros, ones = lax.full((n,), 0, dtype), lax.full((n,), 1, dtype)
    boost_mask = lax.ge(alpha, c_(1))
    alpha_orig = alpha
    alpha = lax.select_n(boost_mask, lax.add(alpha, c_(1)), alpha)
    d = lax.sub(alpha, c_(1 / 3))
    c = lax.div(c_(1 / 3), lax.sqrt(d))

    def still_rejecting(X, V, U):
        first = lax.ge(U, lax.sub(c_(1), lax.mul(c_(0.0331), lax.mul(X, X))))
        second = lax.ge(lax.log(U), lax.add(lax.mul(X, c_(0.5)),
                                            lax.mul(d, lax.add(lax.sub(c_(1), V), lax.log(V)))))
        return lax.bitwise_and(first, second)

    def cond(state):
        _, X, V, U = state
        return pnp.any(still_rejecting(X, V, U))

    def body(state):
        key, X, V, U = state
        active = still_rejecting(X, V, U)
        new_key, x_key, u_key = split_n(key, 3)

        def inner_cond(s):
            return pnp.any(lax.le(s[2], c_(0)))

        def inner_body(s):
            k, x, v = s
            redo = lax.le(v, c_(0))
            k2, sub = split2(k)
            xn = normal_from_keys(sub, (), dtype)
            vn = lax.add(c_(1), lax.mul(xn, c))
            return _where(redo, k2, k), _where(redo, xn, x), _where(redo, vn, v)

        _, x, v = lax.while_loop(inner_cond, inner_body, (x_key, zeros, lax.neg(ones)))
        X_new = lax.mul(x, x)
        V_new = lax.mul(lax.mul(v, v), v)
        U_new = uniform_from_keys(u_key, (), dtype, 0.0, 1.0)
        return (_where(active, new_key, key), _where(active, X_new, X),
                _where(active, V_new, V), _where(active, U_new, U))

    key, subkey = split2(keys)
    _, _, V, _ = lax.while_loop(cond, body, (key, zeros, ones, lax.full((n,), 2, dtype)))
    if log_space:
        u = uniform_from_keys(subkey, (), dtype, 0.0, 1.0)
        log_samples = lax.log1p(lax.neg(u))  # -exponential(subkey)
        keep = lax.bitwise_or(boost_mask, lax.eq(log_samples, c_(0)))
        log_boost = lax.select_n(keep, lax.mul(log_samples, lax.div(c_(1), alpha_orig)), zeros)
        return lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    samples = lax.sub(c_(1), uniform_from_keys(subkey, (), dtype, 0.0, 1.0))
    boost = lax.select_n(boost_mask, lax.pow(samples, lax.div(c_(1), alpha_orig)), ones)
    return lax.mul(lax.mul(d, V), boost)


def _gamma_impl(keys: Any, a: Any, log_space: bool) -> Any:
    shape = get_aval(a).shape
    size = math.prod(shape)
    if size == 0:
        return a
    flat_keys = random_split(keys, (size,))
    return lax.reshape(_gamma_flat(flat_keys, lax.reshape(a, (size,)), log_space), shape)


_gamma_sample = custom_jvp(_gamma_impl, nondiff_argnums=(2,))


@_gamma_sample.defjvp
def _gamma_sample_jvp(log_space, primals, tangents):
    keys, a = primals
    ta = tangents[1]
    out = _gamma_impl(keys, a, log_space)
    if log_space:
        # d log(sample) = d sample / sample; exp(log sample) may round to 0: use tiny
        samples = lax.exp(out)
        dtype = get_aval(out).dtype
        tiny = lax.full_like(samples, finfo(dtype).tiny)
        samples = lax.select_n(lax.eq(samples, const(0, dtype)), samples, tiny)
        grad = lax.div(lax.random_gamma_grad(a, samples), samples)
    else:
        grad = lax.random_gamma_grad(a, out)
    return out, lax.mul(ta, grad)


def gamma_from_keys(keys: Any, a: Any, shape: tuple[int, ...], dtype: np.dtype,
                    log_space: bool = False) -> Any:
    """Gamma(a, 1) samples (log-samples with ``log_space``) of ``shape``."""
    a = broadcast(param(a, dtype), shape, keep_scalar=False)
    return _gamma_sample(keys, a, log_space)


def _gamma_entry(name: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool) -> Any:
    keys, _ = check_key(name, key)
    dtype = float_dtype("gamma", dtype)
    if shape is None:
        shape = shape_of(a)
    else:
        shape = canonicalize_shape(name, shape)
        check_broadcast(name, shape, shape_of(a))
    return gamma_from_keys(keys, a, shape, dtype, log_space)


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Gamma random values with shape parameter ``a`` (unit scale).

    Args:
      key: a PRNG key (typed or raw).
      a: a float or float array, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``a``'s shape.
      dtype: a float dtype (float32 by default).

    Returns:
      Samples of density proportional to ``x ** (a - 1) * exp(-x)``: Marsaglia and Tsang's
      method with JAX's keys, so the values are JAX's. Differentiable in ``a`` (implicit
      reparameterization, ``lax.random_gamma_grad``).
    """
    return _gamma_entry("gamma", key, a, shape, dtype, False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Logarithms of gamma random values, accurate for small ``a``.

    Args:
      key: a PRNG key (typed or raw).
      a: a float or float array, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``a``'s shape.
      dtype: a float dtype (float32 by default).

    Returns:
      ``log`` of ``gamma(key, a, shape, dtype)``'s values, computed in log space.
    """
    return _gamma_entry("loggamma", key, a, shape, dtype, True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None,
         dtype: Any = None) -> Any:
    """Beta random values.

    Args:
      key: a PRNG key (typed or raw).
      a, b: the shape parameters (floats or float arrays), broadcast-compatible with ``shape``.
      shape: the result shape; by default the broadcast shape of ``a`` and ``b``.
      dtype: a float dtype (float32 by default).

    Returns:
      ``Ga / (Ga + Gb)`` for log-gamma samples of ``a`` and ``b`` under the two halves of
      ``split(key)``, computed from their logarithms. Differentiable in ``a`` and ``b``.
    """
    keys, _ = check_key("beta", key)
    dtype = float_dtype("beta", dtype)
    shape = shape_or_broadcast("beta", shape, shape_of(a), shape_of(b))
    key_a, key_b = split2(keys)
    log_a = gamma_from_keys(key_a, a, shape, dtype, True)
    log_b = gamma_from_keys(key_b, b, shape, dtype, True)
    log_max = lax.max(log_a, log_b)
    ga = lax.exp(lax.sub(log_a, log_max))
    gb = lax.exp(lax.sub(log_b, log_max))
    return lax.div(ga, lax.add(ga, gb))


def _softmax_last(x: Any) -> Any:
    m = lax.stop_gradient(pnp.max(x, axis=-1, keepdims=True))
    e = pnp.exp(pnp.subtract(x, m))
    return pnp.divide(e, pnp.sum(e, axis=-1, keepdims=True))


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Any:
    """Dirichlet random values.

    Args:
      key: a PRNG key (typed or raw).
      alpha: the concentrations, an array with at least one dimension (the last indexes the
        categories).
      shape: the batch shape (without the category axis), broadcast-compatible with
        ``alpha.shape[:-1]``; by default ``alpha.shape[:-1]``.
      dtype: a float dtype (float32 by default).

    Returns:
      An array of ``shape + alpha.shape[-1:]``: the softmax of log-gamma samples, as JAX.
    """
    keys, _ = check_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    ashape = shape_of(alpha)
    if not len(ashape) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(ashape)}")
    if shape is None:
        shape = ashape[:-1]
    else:
        shape = canonicalize_shape("dirichlet", shape)
        check_broadcast("dirichlet", shape, ashape[:-1])
    log_g = gamma_from_keys(keys, alpha, tuple(shape) + ashape[-1:], dtype, True)
    return _softmax_last(log_g)


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Chi-square random values with ``df`` degrees of freedom.

    Args:
      key: a PRNG key (typed or raw).
      df: the degrees of freedom, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``df``'s shape.
      dtype: a float dtype (float32 by default).

    Returns:
      ``2 * exp(loggamma(key, df / 2))``, as JAX.
    """
    keys, _ = check_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    shape = shape_or_broadcast("chisquare", shape, shape_of(df))
    half = lax.div(param(df, dtype), const(2, dtype))
    return lax.mul(lax.exp(gamma_from_keys(keys, half, shape, dtype, True)), const(2, dtype))


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None,
      dtype: Any = None) -> Any:
    """F-distribution random values.

    Args:
      key: a PRNG key (typed or raw).
      dfnum, dfden: the numerator's and the denominator's degrees of freedom.
      shape: the result shape; by default the broadcast shape of the parameters.
      dtype: a float dtype (float32 by default).

    Returns:
      ``(chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)`` under ``split(key)``'s second and
      first halves, as JAX.
    """
    keys, typed = check_key("f", key)
    dtype = float_dtype("f", dtype)
    shape = shape_or_broadcast("f", shape, shape_of(dfnum), shape_of(dfden))
    dfnum = broadcast(param(dfnum, dtype), shape)
    dfden = broadcast(param(dfden, dtype), shape)
    key_dfd, key_dfn = split2(keys)
    chi_n = chisquare(key_dfn, dfnum, shape, dtype)
    chi_d = chisquare(key_dfd, dfden, shape, dtype)
    return lax.div(lax.div(chi_n, dfnum), lax.div(chi_d, dfden))


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t random values with ``df`` degrees of freedom.

    Args:
      key: a PRNG key (typed or raw).
      df: the degrees of freedom, broadcast-compatible with ``shape``.
      shape: the result shape; by default ``df``'s shape.
      dtype: a float dtype (float32 by default).

    Returns:
      ``n * sqrt((df / 2) / g)`` with ``n`` normal and ``g`` gamma(df / 2), as JAX.
    """
    keys, _ = check_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = shape_or_broadcast("t", shape, shape_of(df))
    key_n, key_g = split2(keys)
    n = normal_from_keys(key_n, shape, dtype)
    half_df = broadcast(lax.div(param(df, dtype), const(2, dtype)), shape)
    g = gamma_from_keys(key_g, half_df, shape, dtype)
    return lax.mul(n, lax.sqrt(lax.div(half_df, g)))


def _rademacher_from_keys(keys: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform_from_keys(keys, shape, np.dtype(np.float32), 0.0, 1.0)
    b = lax.convert_element_type(lax.lt(u, const(0.5, np.float32)), dtype)
    return lax.sub(lax.mul(const(2, dtype), b), const(1, dtype))


def generalized_normal(key: Any, p: float, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Generalized normal random values, density proportional to ``exp(-|x| ** p)``.

    Args:
      key: a PRNG key (typed or raw).
      p: the (positive) power.
      shape: the result shape. Default ().
      dtype: a float dtype (float32 by default).

    Returns:
      ``r * g ** (1 / p)`` for rademacher ``r`` and gamma(1 / p) ``g``, as JAX.
    """
    keys, _ = check_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    shape = canonicalize_shape("generalized_normal", shape)
    return _generalized_normal(keys, p, shape, dtype)


def _generalized_normal(keys: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    k0, k1 = split2(keys)
    inv_p = lax.div(const(1, dtype), param(p, dtype))
    g = gamma_from_keys(k0, inv_p, shape, dtype)
    r = _rademacher_from_keys(k1, shape, dtype)
    return lax.mul(r, lax.pow(g, broadcast(inv_p, shape)))


def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Points sampled uniformly from the unit ``p``-norm ball in ``d`` dimensions.

    Args:
      key: a PRNG key (typed or raw).
      d: the dimension of the ball.
      p: the norm's power. Default 2.
      shape: the batch shape. Default ().
      dtype: a float dtype (float32 by default).

    Returns:
      An array of ``shape + (d,)``: generalized-normal points scaled by
      ``(sum |g| ** p + e) ** (1 / p)`` with ``e`` exponential, as JAX.
    """
    keys, typed = check_key("ball", key)
    dtype = float_dtype("ball", dtype)
    d = int(d)
    shape = canonicalize_shape("ball", shape)
    k1, k2 = split2(keys)
    g = _generalized_normal(k1, p, tuple(shape) + (d,), dtype)
    e = exponential(k2, shape, dtype)
    pw = param(p, dtype)
    s = pnp.add(pnp.sum(pnp.power(pnp.abs(g), pw), axis=-1), e)
    return pnp.divide(g, pnp.power(s, pnp.divide(const(1, dtype), pw))[..., None])


