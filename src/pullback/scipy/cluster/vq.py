"""``pullback.scipy.cluster.vq``: vector quantisation (``jax.scipy.cluster.vq.vq``)."""
from __future__ import annotations

from typing import Any

from ... import numpy as jnp
from ...numpy._promotion import promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """Assigns each observation the nearest code (``jax.scipy.cluster.vq.vq``).

    Args:
      obs: observations of shape ``(M, N)``, or ``(M,)`` for 1-D observations.
      code_book: codes of shape ``(K, N)``, or ``(K,)``, of the same rank as ``obs``.
      check_finite: unused (as JAX: the check would need concrete values).

    Returns:
      ``(code, dist)``: for every observation the index of its nearest code (the first of
      ties) and the Euclidean distance to it, both of shape ``(M,)``.
    """
    del check_finite
    obs, code_book = promote_dtypes_inexact("scipy.cluster.vq.vq", jnp.asarray(obs),
                                            jnp.asarray(code_book))
    if obs.ndim != code_book.ndim:
        raise ValueError(f"vq: `obs` and `code_book` should have the same rank, got shapes "
                         f"{obs.shape} and {code_book.shape}")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError(f"vq: `obs` and `code_book` of ndim other than 1 or 2 are not "
                         f"supported, got shape {obs.shape}")
    if obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"vq: `obs` and `code_book` need the same number of features, got "
                         f"shapes {obs.shape} and {code_book.shape}")
    diff = obs[:, None, :] - code_book[None, :, :]
    dist = jnp.sqrt(jnp.sum(diff * diff, axis=-1))  # (M, K)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=1)[:, 0]
