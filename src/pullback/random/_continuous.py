"""``exponential`` and ``gumbel``: logarithms of uniform samples."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import lax
from ._checks import canonicalize_shape, float_dtype
from ._keys import check_key
from ._ops import const, finfo, index0
from ._uniform import uniform_from_keys


def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Exponential random values (rate 1).

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: a float dtype (float32 by default).

    Returns:
      ``-log1p(-u)`` with ``u`` uniform in [0, 1).
    """
    keys, _ = check_key("exponential", key)
    dtype = float_dtype("exponential", dtype)
    u = uniform_from_keys(keys, canonicalize_shape("exponential", shape), dtype, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))


def gumbel_from_keys(keys: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str) -> Any:
    """Gumbel samples of a checked dtype and mode ("low" or "high")."""
    info = finfo(dtype)
    tiny = const(info.tiny, dtype)
    if mode == "low":
        u = uniform_from_keys(keys, shape, dtype, tiny, const(1.0, dtype))
        return lax.neg(lax.log(lax.neg(lax.log(u))))
    # "high": a second sample fills the low mantissa bits of the first where it is below 0.5
    both = uniform_from_keys(keys, (2,) + shape, dtype, 0.0, 1.0)
    high, low = index0(both, 0), index0(both, 1)
    fine = lax.add(lax.add(high, lax.mul(const(2.0 ** -info.nmant, dtype), low)), tiny)
    x = lax.select_n(lax.ge(high, const(0.5, dtype)), fine, high)
    return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))


def check_gumbel_mode(mode: str | None, dtype: np.dtype) -> str:
    """The effective gumbel mode: None means "low" (JAX's default configuration)."""
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    if mode == "highest":
        if dtype == np.float32:
            raise NotImplementedError("gumbel: mode='highest' for float32 (64-bit fixed-point "
                                      "sampling) is not implemented; use mode='high'")
        mode = "high"  # JAX's "highest" is "high" for every other dtype
    return mode


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Gumbel random values.

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: a float dtype (float32 by default).
      mode: "low" (default) draws one uniform per value; "high" draws two, pushing the
        largest possible value from ~16 to ~32 in float32.

    Returns:
      ``-log(-log(u))`` with ``u`` uniform in [tiny, 1) ("low"), or the "high" variant.
    """
    keys, _ = check_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    mode = check_gumbel_mode(mode, dtype)
    return gumbel_from_keys(keys, canonicalize_shape("gumbel", shape), dtype, mode)
