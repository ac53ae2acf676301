"""``dot_product_attention``: ``jax.nn.dot_product_attention`` on one fused kernel."""
from __future__ import annotations

from typing import Any, Literal

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..primitives.attention import compute_dtype, dot_product_attention_p

ArrayLike = Any


def _ensure_4d(x: Any) -> Any:
    x = jnp.asarray(x)
    if x.ndim < 4:
        x = lax.expand_dims(x, tuple(range(4 - x.ndim)))
    return x


def dot_product_attention(
    query: ArrayLike,
    key: ArrayLike,
    value: ArrayLike,
    bias: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: ArrayLike | None = None,
    key_value_seq_lengths: ArrayLike | None = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: Literal["xla", "cudnn"] | None = None,
    return_residual: bool = False,
    logit_softcap: float | None = None,
) -> Any:
    r"""Scaled dot-product attention, as ``jax.nn.dot_product_attention``, on one fused kernel.

    Computes ``softmax(scale * q k^T + bias, masked) v`` per head, tile by tile (online
    softmax): the (T, S) scores are never materialised, the backward pass recomputes them from
    the saved log-sum-exp.

    Shapes use B (batch), T (queries), S (keys), N (query heads), K (key/value heads, N a
    multiple of K: grouped-query attention), H (head size).

    Args:
      query: ``(B, T, N, H)`` or ``(T, N, H)``.
      key: ``(B, S, K, H)`` or ``(S, K, H)``.
      value: the shape and dtype of ``key``.
      bias: optional, added to the logits; rank <= 4, broadcastable to ``(B, N, T, S)``.
      mask: optional boolean array, ``True`` keeps a logit; rank <= 4, broadcastable to
        ``(B, N, T, S)``.
      scale: the logits' scale; default ``1 / sqrt(H)``.
      is_causal: keep key j for query i only when ``j <= i`` (aligned top-left when T != S).
      query_seq_lengths: optional int32 ``(B,)``: query rows at or past it give 0.
      key_value_seq_lengths: optional int32 ``(B,)``: keys at or past it are masked.
      local_window_size: ``(left, right)`` or an int for both: keep key j for query i when
        ``i - left <= j <= i + right``.
      implementation: ``None`` or ``"xla"`` (both run the fused CPU kernel); ``"cudnn"``
        raises (no GPU backend).
      return_residual: also return the log-sum-exp of the logits, ``(B, T, N)`` (or
        ``(T, N)``), without gradient.
      logit_softcap: optional positive float c: the logits become ``c * tanh(logits / c)``
        after the scale and bias, before the masks (Gemma 2's soft cap; not in JAX).

    Returns:
      The output, shaped like ``query``; with ``return_residual``, ``(output, lse)``.

    Masked logits take JAX's value, ``-0.7 * float32 max``, so a row whose every logit is
    masked attends uniformly to all S keys (the mean of V). The softmax runs in float32 for
    16-bit inputs (float64 for float64).
    """
    if implementation == "cudnn":
        raise ValueError("dot_product_attention: implementation='cudnn' needs cuDNN (an NVIDIA "
                         "GPU); pullback runs on the CPU: use implementation=None or 'xla'")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out_shape = tuple(jnp.asarray(query).shape)
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    ops = [q, k, v]
    cd = compute_dtype(k.dtype) if k.dtype in (np.float16, jnp.bfloat16, np.float32,
                                               np.float64) else None
    if bias is not None:
        bias = _ensure_4d(bias)
        if cd is not None and bias.dtype != cd:
            bias = lax.convert_element_type(bias, cd)
        ops.append(bias)
    if mask is not None:
        mask = _ensure_4d(mask)
        ops.append(mask)
    for x in (query_seq_lengths, key_value_seq_lengths):
        if x is not None:
            ops.append(jnp.asarray(x))
    if isinstance(local_window_size, (int, np.integer)) and not isinstance(local_window_size,
                                                                           bool):
        local_window_size = (int(local_window_size), int(local_window_size))
    elif isinstance(local_window_size, list):
        local_window_size = tuple(local_window_size)
    if local_window_size is not None and isinstance(local_window_size, tuple):
        local_window_size = tuple(int(x) if isinstance(x, np.integer) else x
                                  for x in local_window_size)
    H = k.shape[-1]
    with np.errstate(divide="ignore"):  # H = 0: inf, as JAX's 1 / np.sqrt(H)
        scale_val = float(1.0 / np.sqrt(np.float64(H))) if scale is None else scale
    if isinstance(scale_val, np.generic):
        scale_val = float(scale_val)
    if isinstance(logit_softcap, np.generic):
        logit_softcap = float(logit_softcap)
    out, lse = dot_product_attention_p.bind(
        *ops, scale=scale_val, is_causal=bool(is_causal), local_window_size=local_window_size,
        logit_softcap=logit_softcap, has_bias=bias is not None, has_mask=mask is not None,
        has_qlen=query_seq_lengths is not None, has_kvlen=key_value_seq_lengths is not None)
    if len(out_shape) != 4:
        out = lax.reshape(out, tuple(out_shape))
    if not return_residual:
        return out
    lse = lax.stop_gradient(lax.convert_element_type(lax.transpose(lse, (0, 2, 1)), k.dtype))
    return out, lax.reshape(lse, tuple(out_shape[:-1]))
