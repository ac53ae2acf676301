"""``uniform``: random mantissa bits under the exponent of 1.0, minus 1 (JAX's construction)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import lax
from ..lax._random_bits import random_bits, random_uniform_range
from ._checks import canonicalize_shape, check_broadcast, float_dtype
from ._keys import check_key
from ._ops import UINT, broadcast, const, finfo, is_python_scalar, param, shape_of


def unit_floats(keys: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Floats in [0, 1) of ``dtype``: the top ``nmant`` random bits become the mantissa of a
    number in [1, 2), from which 1 is subtracted (so every value is a multiple of 2**-nmant)."""
    info = finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    rng_bits = nbits if nmant >= 8 else 8  # JAX draws at least 8 bits (bfloat16, float8)
    uint = UINT[nbits]
    bits = random_bits(keys, rng_bits, shape)
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint)
    one = np.array(1.0, dtype).view(uint)
    mantissa = lax.shift_right_logical(bits, const(rng_bits - nmant, uint))
    floats = lax.bitcast_convert_type(lax.bitwise_or(mantissa, const(one, uint)), dtype)
    return lax.sub(floats, const(1.0, dtype))


def _is_python(x: Any, v: float) -> bool:
    return is_python_scalar(x) and not isinstance(x, bool) and x == v


def uniform_from_keys(keys: Any, shape: tuple[int, ...], dtype: np.dtype, minval: Any,
                      maxval: Any) -> Any:
    """Samples in [minval, maxval) (key data ``keys``, a checked float dtype)."""
    floats = unit_floats(keys, shape, dtype)
    if _is_python(minval, 0.0) and _is_python(maxval, 1.0):
        # floats * 1 + 0 and max(0, .) change no bit of floats in [0, 1): skip three passes
        return floats
    lo = broadcast(param(minval, dtype), shape)
    hi = broadcast(param(maxval, dtype), shape)
    return random_uniform_range(floats, lo, hi)


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform random values in [minval, maxval).

    Args:
      key: a PRNG key (typed or raw).
      shape: the result shape. Default ().
      dtype: a float dtype (float32 by default; float16, bfloat16 and float64 too).
      minval: the inclusive lower bound, broadcast-compatible with ``shape``. Default 0.
      maxval: the exclusive upper bound, broadcast-compatible with ``shape``. Default 1.

    Returns:
      An array of ``shape`` and ``dtype``: ``max(minval, u * (maxval - minval) + minval)``
      with ``u`` in [0, 1) built from random mantissa bits, rounded as XLA's CPU backend
      rounds it (see ``random_uniform_range``).
    """
    keys, _ = check_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    shape = canonicalize_shape("uniform", shape)
    check_broadcast("uniform", shape, shape_of(minval), shape_of(maxval))
    return uniform_from_keys(keys, shape, dtype, minval, maxval)
