"""``normal`` and ``truncated_normal``: inverse-erf transforms of uniform samples."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import lax
from ..tracer import dtypes
from ._checks import canonicalize_shape, float_dtype, shape_or_broadcast, user_dtype
from ._derive import split2
from ._keys import check_key
from ._ops import broadcast, const, param, shape_of
from ._uniform import uniform_from_keys


def normal_from_keys(keys: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """sqrt(2) * erf_inv(u), u uniform in (-1, 1): the open interval keeps erf_inv finite."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform_from_keys(keys, shape, dtype, const(lo, dtype), const(1.0, dtype))
    return lax.mul(const(np.sqrt(2), dtype), lax.erf_inv(u))


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal random values.

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: a float or complex dtype (float32 by default).

    Returns:
      An array of ``shape`` and ``dtype``: ``sqrt(2) * erf_inv(u)`` with ``u`` uniform in
      (-1, 1), as JAX computes it; complex samples have independent real and imaginary parts
      of variance 1/2.
    """
    keys, _ = check_key("normal", key)
    shape = canonicalize_shape("normal", shape)
    if dtype is not None and user_dtype("normal", dtype).kind == "c":
        # real and imaginary parts from the two halves of split(key), each of variance 1/2
        real = dtypes.float32 if user_dtype("normal", dtype) == dtypes.complex64 else \
            dtypes.float64
        sqrt2 = const(np.sqrt(2), real)
        k_re, k_im = split2(keys)
        return lax.complex(lax.div(normal_from_keys(k_re, shape, real), sqrt2),
                           lax.div(normal_from_keys(k_im, shape, real), sqrt2))
    return normal_from_keys(keys, shape, float_dtype("normal", dtype))


def _stop_gradient(x: Any) -> Any:
    # the clamp bounds carry no gradient in JAX; lax.stop_gradient arrives with autodiff
    stop = getattr(lax, "stop_gradient", None)
    return stop(x) if stop is not None else x


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Any:
    """Standard normal values truncated to the open interval (lower, upper).

    Args:
      key: a PRNG key (typed or raw).
      lower: the lower bound(s), broadcast-compatible with ``upper`` and ``shape``.
      upper: the upper bound(s).
      shape: the result shape; by default the broadcast shape of ``lower`` and ``upper``.
      dtype: a float dtype (float32 by default).

    Returns:
      ``sqrt(2) * erf_inv(u)`` with ``u`` uniform between erf(lower / sqrt 2) and
      erf(upper / sqrt 2), clamped into (lower, upper).
    """
    keys, _ = check_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    shape = shape_or_broadcast("truncated_normal", shape, shape_of(lower), shape_of(upper))
    sqrt2 = const(np.sqrt(2), dtype)
    lower = broadcast(param(lower, dtype), shape)
    upper = broadcast(param(upper, dtype), shape)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    out = lax.mul(sqrt2, lax.erf_inv(uniform_from_keys(keys, shape, dtype, a, b)))
    lo = lax.nextafter(_stop_gradient(lower), const(np.inf, dtype))
    hi = lax.nextafter(_stop_gradient(upper), const(-np.inf, dtype))
    return lax.min(hi, lax.max(lo, out))
