"""``permutation`` and ``choice``: sorting by random keys, Gumbel-top-k, inverse CDF."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from .. import numpy as pnp
from ..lax._random_bits import random_bits
from ..tracer import core, dtypes
from ..tracer.shapes import canonicalize_axis, check_shape
from ._continuous import check_gumbel_mode, gumbel_from_keys
from ._derive import split2
from ._discrete import randint
from ._keys import check_key, like_input
from ._ops import as_value, const, index0, shape_of, take
from ._uniform import uniform_from_keys


def _shuffle(keys: Any, x: Any, axis: int) -> Any:
    """``x`` shuffled along ``axis`` by stable sorts on fresh 32-bit random keys; enough rounds
    that all sort keys are distinct with high probability (3 * log(size) / log(2**32 - 1))."""
    size = math.prod(shape_of(x))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys, subkeys = split2(keys)
        sort_keys = random_bits(subkeys, 32, shape_of(x))
        _, x = lax.sort((sort_keys, x), dimension=axis, is_stable=True, num_keys=1)
    return x


def _axis(name: str, axis: int, ndim: int) -> int:
    return canonicalize_axis(axis, ndim, name)


def _concrete_int(name: str, x: Any) -> int:
    v = x.to_concrete_value() if hasattr(x, "to_concrete_value") else x
    if v is None:
        raise core.ConcretizationTypeError(f"{name}: the integer argument must be concrete (a "
                                           "Python int or a non-traced array), not traced")
    return int(np.asarray(v))


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``range(x)`` or of an array along an axis.

    Args:
      key: a PRNG key (typed or raw).
      x: an int n (permute ``arange(n)``) or an array (permute its slices along ``axis``).
      axis: the axis to permute. Default 0.
      independent: if True, each 1-D slice along ``axis`` is permuted independently.

    Returns:
      The permuted array (the default int for an int ``x``).
    """
    keys, _ = check_key("permutation", key)
    if isinstance(x, (list, tuple)):
        raise TypeError("permutation requires ndarray or scalar arguments, got list/tuple")
    if not shape_of(x):
        dt = dtypes.dtype_of_python(x)[0] if dtypes.is_python_scalar(x) else \
            core.get_aval(x).dtype
        if not dtypes.is_integer(dt) or isinstance(x, bool):
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = _concrete_int("permutation", x)
        _axis("permutation", axis, 1)
        return _shuffle(keys, lax.iota(dtypes.DEFAULT_INT, n), 0)
    x = as_value(x)
    axis = _axis("permutation", axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(keys, x, axis)
    ind = _shuffle(keys, lax.iota(dtypes.int32, x.shape[axis]), 0)
    return take(x, ind, axis)


def _searchsorted_left(sorted_1d: Any, values: Any) -> Any:
    """For non-decreasing ``sorted_1d``: the count of its elements below each value, as int32
    (``jnp.searchsorted(sorted_1d, values)``)."""
    n = shape_of(sorted_1d)[0]
    vshape = shape_of(values)
    full = vshape + (n,)
    below = lax.lt(lax.broadcast_in_dim(sorted_1d, full, (len(vshape),)),
                   lax.broadcast_in_dim(values, full, tuple(range(len(vshape)))))
    return lax.reduce_sum(lax.convert_element_type(below, dtypes.int32), (len(vshape),))


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Any:
    """A random sample from ``a`` (an array, or ``arange(a)`` for an int).

    Args:
      key: a PRNG key (typed or raw).
      a: an int or an array to sample slices of along ``axis``.
      shape: the sample shape. Default ().
      replace: sample with replacement (default) or without.
      p: optional probabilities of the entries of ``a`` (1-D, length ``a.shape[axis]``).
      axis: the axis of ``a`` sampled along. Default 0.
      mode: the gumbel sampler's mode for ``p`` without replacement ("low" or "high").

    Returns:
      The samples: shape ``shape`` for an int ``a``, else ``a``'s shape with ``axis``
      replaced by ``shape``.
    """
    keys, typed = check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of choice must be a sequence, got {shape}")
    shape = check_shape(shape, "choice")
    arr = as_value(a)
    if arr.ndim == 0:
        n_inputs = _concrete_int("choice", a)
    else:
        axis = _axis("choice", axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return pnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size "
                         f"{n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(like_input(typed, keys), shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else take(arr, ind, axis)
        else:
            pool = n_inputs if arr.ndim == 0 else arr
            perm = permutation(like_input(typed, keys), pool, axis)
            pshape = shape_of(perm)
            ax = 0 if arr.ndim == 0 else axis
            limit = pshape[:ax] + (n_draws,) + pshape[ax + 1:]
            result = lax.slice(perm, (0,) * len(pshape), limit)
    else:
        p = as_value(p)
        if not dtypes.is_inexact(p.dtype):
            p = lax.convert_element_type(p, dtypes.float32)
        if p.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {p.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = lax.cumsum(p, 0)
            total = index0(p_cuml, n_inputs - 1)
            u = uniform_from_keys(keys, shape, p.dtype, 0.0, 1.0)
            r = lax.mul(total, lax.sub(const(1, p.dtype), u))
            ind = _searchsorted_left(p_cuml, r)
        else:
            g = gumbel_from_keys(keys, (n_inputs,), p.dtype, check_gumbel_mode(mode, p.dtype))
            ind = lax.top_k(lax.add(g, lax.log(p)), n_draws)[1]
        result = ind if arr.ndim == 0 else take(arr, ind, axis)
    out_shape = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return lax.reshape(result, out_shape)
