"""Numerically safe helpers (optax's ``numerics``): counters that do not overflow and norms
whose gradients stay finite at zero."""
from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np

from .. import numpy as jnp


def abs_sq(x: Any) -> Any:
    """The squared absolute value ``|x|**2`` of a real or complex array.

    Args:
      x: an array (not a Python scalar).

    Returns:
      ``(conj(x) * x).real``; for real ``x`` this is ``x * x``.
    """
    if not hasattr(x, "dtype") or not hasattr(x, "shape"):
        raise ValueError(f"abs_sq: argument x must be an array, got {type(x).__name__}: {x!r}")
    return (x.conj() * x).real


def _sq_norm(x: Any, axis: Any, keepdims: bool) -> Any:
    return jnp.sqrt(jnp.sum(abs_sq(x), axis=axis, keepdims=keepdims))


def safe_norm(x: Any, min_norm: Any, ord: Optional[Union[int, float, str]] = None,  # noqa: A002
              axis: Union[None, tuple[int, ...], int] = None,
              keepdims: bool = False) -> Any:
    """``maximum(norm(x), min_norm)`` whose gradient is finite (0) where the norm is below
    ``min_norm``, including at ``x == 0``.

    Args:
      x: an array.
      min_norm: the lower bound of the result.
      ord: the norm: ``None``, ``2`` or ``'fro'`` (the Euclidean / Frobenius norm over
        ``axis``).
      axis: the axes reduced (all when None).
      keepdims: keep the reduced axes with size one.

    Returns:
      The safe norm.
    """
    if ord not in (None, 2, "fro"):
        raise ValueError(f"safe_norm: argument ord must be None, 2 or 'fro', got {ord!r}")
    x = jnp.asarray(x)
    norm = _sq_norm(x, axis, True)
    # Where the norm is small, differentiate a harmless stand-in (ones) instead of x, so
    # the unused branch of the where has no 0/0 in its gradient.
    x = jnp.where(norm <= min_norm, jnp.ones_like(x), x)
    norm = norm if keepdims else jnp.squeeze(norm, axis=axis)
    masked_norm = _sq_norm(x, axis, keepdims)
    return jnp.where(norm <= min_norm, min_norm, masked_norm)


def safe_root_mean_squares(x: Any, min_rms: Any) -> Any:
    """``maximum(sqrt(mean(|x|**2)), min_rms)`` with a finite gradient at zero.

    Args:
      x: an array.
      min_rms: the lower bound of the result.

    Returns:
      The safe root mean square.
    """
    x = jnp.asarray(x)
    rms = jnp.sqrt(jnp.mean(abs_sq(x)))
    x = jnp.where(rms <= min_rms, jnp.ones_like(x), x)
    return jnp.where(rms <= min_rms, min_rms, jnp.sqrt(jnp.mean(abs_sq(x))))


def safe_increment(count: Any) -> Any:
    """``count + 1``, saturating at the largest value of ``count``'s dtype instead of
    wrapping around.

    Args:
      count: an integer or floating counter.

    Returns:
      The incremented counter, in ``count``'s dtype.
    """
    count = jnp.asarray(count)
    dt = count.dtype
    if jnp.issubdtype(dt, jnp.integer):
        max_value = np.iinfo(dt).max
    elif jnp.issubdtype(dt, jnp.floating):
        max_value = jnp.finfo(dt).max
    else:
        raise ValueError(f"safe_increment: argument count has dtype {dt}; expected an integer "
                         "or floating dtype")
    max_value = jnp.array(max_value, dt)
    return jnp.where(count < max_value, count + jnp.array(1, dt), max_value)


safe_int32_increment = safe_increment
