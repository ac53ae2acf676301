"""``poisson``, ``binomial`` and ``multinomial``: JAX's rejection loops, one key per loop step
for the whole sample (all elements draw every step; each keeps its first accepted value).

poisson: Knuth's product of uniforms below lambda = 10, Hormann's transformed rejection
above. binomial: the geometric-sum inversion for n * min(p, 1 - p) <= 10, BTRS above.
multinomial: a scan of binomials over the categories.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import lax
from .. import numpy as pnp
from ..tracer import dtypes
from ._checks import canonicalize_shape, check_broadcast, float_dtype, user_dtype
from ._derive import split2
from ._gamma import split_n
from ._keys import check_key
from ._ops import shape_of
from ._uniform import uniform_from_keys

_F32 = np.dtype(np.float32)


def _uniform(keys: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    return uniform_from_keys(keys, shape, np.dtype(dtype), 0.0, 1.0)


def _poisson_knuth(keys, lam, shape, dtype, max_iters):
    def body(carry):
        i, k, rng, log_prod = carry
        rng, sub = split2(rng)
        k = pnp.where(log_prod > -lam, k + 1, k)
        u = _uniform(sub, shape, _F32)
        return i + 1, k, rng, log_prod + pnp.log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return pnp.logical_and(pnp.any(log_prod > -lam), i < max_iters)

    init = (pnp.asarray(0, dtypes.int32), pnp.zeros(shape, dtype), keys, pnp.zeros(shape, _F32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(keys, lam, shape, dtype, max_iters):
    log_lam = pnp.log(lam)
    b = 0.931 + 2.53 * pnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = split_n(key, 3)
        u = _uniform(sub0, shape, lam.dtype) - 0.5
        v = _uniform(sub1, shape, lam.dtype)
        u_shifted = 0.5 - pnp.abs(u)
        k = pnp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = pnp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, pnp.where(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return pnp.logical_and(pnp.any(~accepted), i < max_iters)

    init = (pnp.asarray(0, dtypes.int32), pnp.full(shape, -1, lam.dtype),
            pnp.zeros(shape, bool), keys)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Poisson random values with rate ``lam``.

    Args:
      key: a PRNG key (typed or raw).
      lam: the rate(s), broadcast to ``shape`` (float32 internally, as JAX).
      shape: the result shape; by default ``lam``'s shape.
      dtype: an integer dtype (int32 by default).

    Returns:
      Counts of ``dtype``: Knuth's algorithm where ``lam < 10`` (or NaN), transformed
      rejection elsewhere, 0 where ``lam == 0`` (JAX's algorithm and keys).
    """
    keys, _ = check_key("poisson", key)
    dtype = user_dtype("poisson", int if dtype is None else dtype)
    shape = shape_of(lam) if shape is None else canonicalize_shape("poisson", shape)
    lam = pnp.broadcast_to(pnp.asarray(lam), shape).astype(_F32)
    use_knuth = pnp.isnan(lam) | (lam < 10)
    lam_knuth = pnp.where(use_knuth, lam, pnp.zeros_like(lam))
    lam_rejection = pnp.where(use_knuth, pnp.full_like(lam, 1e5), lam)
    max_iters = int(np.iinfo(dtype).max) if dtypes.is_integer(dtype) else 2 ** 31 - 1
    max_iters = min(max_iters, 2 ** 31 - 1)
    result = pnp.where(use_knuth, _poisson_knuth(keys, lam_knuth, shape, dtype, max_iters),
                       _poisson_rejection(keys, lam_rejection, shape, dtype, max_iters))
    return pnp.where(lam == 0, pnp.zeros_like(result), result)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k):
    table = pnp.asarray(np.array(_STIRLING_TAIL, k.dtype))
    use_table = k <= 9
    k = pnp.clip(k, 0.0, 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = pnp.floor(k)
    return pnp.where(use_table, table[k.astype(dtypes.int32)], approx)


def _binomial_inversion(keys, count, prob, shape, dtype, max_iters):
    log1mp = pnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        sub, key = split2(key)
        num_geom_out = pnp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(sub, shape, prob.dtype)
        geom = pnp.ceil(pnp.log(u) / log1mp)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond(carry):
        i, geom_sum = carry[0], carry[2]
        return pnp.logical_and(pnp.any(geom_sum <= count), i < max_iters)

    init = (pnp.asarray(0, dtypes.int32), pnp.zeros(shape, prob.dtype),
            pnp.zeros(shape, prob.dtype), keys)
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dtype)


def _btrs(keys, count, prob, shape, dtype, max_iters):
    stddev = pnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = pnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = split_n(key, 3)
        u = _uniform(sub0, shape, prob.dtype)
        v = _uniform(sub1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - pnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = pnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = pnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * pnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * pnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * pnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, pnp.where(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, accepted = carry[0], carry[2]
        return pnp.logical_and(pnp.any(~accepted), i < max_iters)

    init = (pnp.asarray(0, dtypes.int32), pnp.full(shape, -1, prob.dtype),
            pnp.zeros(shape, bool), keys)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def _binomial(keys, count, prob, shape, dtype):
    if shape is None:
        shape = tuple(pnp.broadcast_shapes(shape_of(count), shape_of(prob)))
    else:
        check_broadcast("binomial", shape, shape_of(count), shape_of(prob))
    prob = pnp.asarray(prob)
    if not dtypes.is_float(prob.dtype):
        prob = prob.astype(dtypes.float32)
    count = pnp.asarray(count).astype(prob.dtype)
    count = pnp.broadcast_to(count, shape)
    prob = pnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = pnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = pnp.isnan(count) | (count < 0.0)
    count_inf = pnp.isinf(count)
    q_is_nan = pnp.isnan(q)
    q_l_0 = q < 0.0
    q = pnp.where(q_is_nan | q_l_0, pnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = pnp.floor(count)
    count_inv = pnp.where(use_inversion, count, pnp.zeros_like(count))
    count_btrs = pnp.where(use_inversion, pnp.full_like(count, 1e4), count)
    q_btrs = pnp.where(use_inversion, pnp.full_like(q, 0.5), q)
    max_iters = 2 ** 31 - 1  # (JAX: finfo(dtype).max; the loops end long before either)
    samples = pnp.where(use_inversion,
                        _binomial_inversion(keys, count_inv, q, shape, dtype, max_iters),
                        _btrs(keys, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = pnp.where(invalid, pnp.full_like(samples, np.nan), samples)
    samples = pnp.where(count_inf & ~invalid, pnp.full_like(samples, np.inf), samples)
    return pnp.where(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                     count.astype(dtype) - samples)


def binomial(key: Any, n: Any, p: Any, shape: Sequence[int] | None = None,
             dtype: Any = None) -> Any:
    """Binomial random values: successes in ``n`` trials of probability ``p``.

    Args:
      key: a PRNG key (typed or raw).
      n: the number of trials (floats are floored, as NumPy).
      p: the success probability.
      shape: the result shape; by default the broadcast shape of ``n`` and ``p``.
      dtype: a float dtype (float32 by default).

    Returns:
      Counts as floats: the geometric-sum inversion where ``n * min(p, 1 - p) <= 10``, BTRS
      elsewhere (JAX's algorithm and keys); NaN for invalid parameters, inf for ``n = inf``.
    """
    keys, _ = check_key("binomial", key)
    dtype = float_dtype("binomial", dtype)
    if shape is not None:
        shape = canonicalize_shape("binomial", shape)
    return _binomial(keys, n, p, shape, dtype)


def multinomial(key: Any, n: Any, p: Any, *, shape: Sequence[int] | None = None,
                dtype: Any = None, unroll: int | bool = 1) -> Any:
    """Multinomial random counts.

    Args:
      key: a PRNG key (typed or raw).
      n: the number of trials, broadcast-compatible with ``shape[:-1]``.
      p: the category probabilities (last axis), summing to 1.
      shape: the result shape including the category axis; by default ``p``'s shape.
      dtype: a float dtype (float32 by default).
      unroll: accepted for JAX compatibility (the scan is not unrolled).

    Returns:
      Counts of shape ``shape``: binomial draws of the remaining trials against each
      category's share of the remaining probability, one ``split(key, k)`` key each.
    """
    del unroll
    keys, _ = check_key("multinomial", key)
    dtype = float_dtype("multinomial", dtype)
    n, p = pnp.asarray(n), pnp.asarray(p)
    common = pnp.result_type(n.dtype, p.dtype, pnp.float32) if not (
        dtypes.is_float(n.dtype) and dtypes.is_float(p.dtype)) else pnp.result_type(n, p)
    n, p = n.astype(common), p.astype(common)
    shape = tuple(p.shape) if shape is None else canonicalize_shape("multinomial", shape)
    n = pnp.broadcast_to(n, shape[:-1])
    p = pnp.broadcast_to(p, shape)
    p = pnp.moveaxis(p, -1, 0)
    remaining = pnp.flip(pnp.cumsum(pnp.flip(p, 0), axis=0), 0)
    ratios = p / pnp.where(remaining == 0, 1, remaining)
    k = ratios.shape[0]
    sub = pnp.stack(split_n(keys, k), axis=0) if k else pnp.zeros((0, 2), dtypes.uint32)

    def step(remainder, ratio_key):
        ratio, key = ratio_key
        count = _binomial(key, remainder, pnp.clip(ratio, 0, 1), None, remainder.dtype)
        return remainder - count, count

    _, counts = lax.scan(step, n, (ratios, sub))
    return pnp.moveaxis(counts, 0, -1).astype(dtype)
