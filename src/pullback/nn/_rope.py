"""Rotary position embeddings: ``rope`` (1-D, rotate-half or interleaved) and ``rope_axial``
(SAM 2's axial 2-D form), each one fused kernel (primitives/rope.py)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import numpy as jnp
from ..primitives.rope import rope_p
from ..tracer import dtypes

ArrayLike = Any


def _static_int(value: Any, fn: str, arg: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fn}: argument '{arg}' must be an int, got {value!r}") from None


def _theta(theta: Any, fn: str) -> float:
    try:
        theta = float(theta)
    except TypeError:
        raise TypeError(f"{fn}: argument 'theta' must be a Python float, got {theta!r}") from None
    if not theta > 0:
        raise ValueError(f"{fn}: argument 'theta' must be positive, got {theta}")
    return theta


def _floating_x(x: ArrayLike, fn: str) -> Any:
    x = jnp.asarray(x)
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"{fn}: argument 'x' must be a floating array, got {x.dtype}")
    if x.ndim < 3:
        raise ValueError(f"{fn}: argument 'x' must have shape (..., T, H, D), got {x.shape}")
    return x


def rope(x: ArrayLike, positions: ArrayLike, *, theta: float = 10000.0,
         rotary_dim: int | None = None, interleaved: bool = False) -> Any:
    """Rotary position embedding (RoPE) of ``x`` at ``positions``.

    Feature pairs turn by ``position / theta**(2i / rotary_dim)`` radians (pair i): rotate-half
    pairs ``(i, i + rotary_dim/2)`` (GPT-NeoX, Llama in Hugging Face's layout) by default,
    interleaved pairs ``(2i, 2i + 1)`` (GPT-J, Meta's Llama) with ``interleaved=True``.
    Angles are computed in float32 (float64 for float64 ``x``); 16-bit ``x`` is rotated in
    float32 and rounded once.

    Args:
      x: floating array of shape ``(..., T, H, D)`` (tokens, heads, features).
      positions: integer or floating positions of shape ``(T,)`` or ``(..., T)``,
        broadcastable to ``x.shape[:-2]``. Floating positions are differentiable.
      theta: the frequency base.
      rotary_dim: how many leading features rotate (even, at most D; default D, which must
        then be even); the others pass through unchanged.
      interleaved: pair ``2i`` with ``2i + 1`` instead of ``i`` with ``i + rotary_dim/2``.

    Returns:
      The rotated array, shaped and typed like ``x``.
    """
    fn = "rope"
    x = _floating_x(x, fn)
    theta = _theta(theta, fn)
    D = x.shape[-1]
    if rotary_dim is None:
        if D % 2:
            raise ValueError(f"rope: the last dimension of argument 'x' must be even to rotate "
                             f"all its features, got {D} (pass an even rotary_dim <= {D})")
        rotary_dim = D
    rotary_dim = _static_int(rotary_dim, fn, "rotary_dim")
    if not (0 <= rotary_dim <= D and rotary_dim % 2 == 0):
        raise ValueError(f"rope: argument 'rotary_dim' must be an even int in [0, {D}] (the "
                         f"last dimension of x), got {rotary_dim}")
    positions = jnp.asarray(positions)
    if not (dtypes.is_float(positions.dtype) or dtypes.is_integer(positions.dtype)):
        raise TypeError(f"rope: argument 'positions' must be an integer or floating array, got "
                        f"{positions.dtype}")
    lead = x.shape[:-2]
    if (positions.ndim < 1 or positions.ndim > len(lead) or positions.shape[-1] != lead[-1]
            or not _broadcasts(positions.shape, lead)):
        raise ValueError(f"rope: argument 'positions' must have shape (T,) or (..., T) "
                         f"broadcastable to {lead} (x.shape[:-2] for x of shape {x.shape}), got "
                         f"{positions.shape}")
    positions = jnp.broadcast_to(positions, lead)
    return rope_p.bind(x, positions, theta=theta, rotary_dim=rotary_dim,
                       interleaved=bool(interleaved), end_x=0, end_y=0, order=0, sign=1)


def _broadcasts(shape: tuple, to: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, to) == to
    except ValueError:
        return False


def rope_axial(x: ArrayLike, end_x: int, end_y: int, *, theta: float = 10000.0) -> Any:
    """Axial 2-D rotary position embedding over an ``end_x`` by ``end_y`` grid of tokens, with
    SAM 2's convention (``sam2/modeling/position_encoding.py``: ``compute_axial_cis`` and
    ``apply_rotary_enc``).

    Token ``t`` sits at column ``t mod end_x`` and row ``t div end_x``; feature pairs
    ``(2i, 2i + 1)`` turn, the first D/4 by ``column / theta**(4i / D)``, the last D/4 by
    ``row / theta**(4i / D)``. Angles in float32 (float64 for float64 ``x``).

    Args:
      x: floating array of shape ``(..., T, H, D)`` with ``T = end_x * end_y`` and D a
        multiple of 4.
      end_x: the grid's width.
      end_y: the grid's height.
      theta: the frequency base.

    Returns:
      The rotated array, shaped and typed like ``x``.
    """
    fn = "rope_axial"
    x = _floating_x(x, fn)
    theta = _theta(theta, fn)
    end_x, end_y = _static_int(end_x, fn, "end_x"), _static_int(end_y, fn, "end_y")
    if end_x < 1 or end_y < 0:
        raise ValueError(f"rope_axial: arguments 'end_x' and 'end_y' must be positive, got "
                         f"{end_x} and {end_y}")
    return rope_p.bind(x, theta=theta, rotary_dim=x.shape[-1], interleaved=True, end_x=end_x,
                       end_y=end_y, order=0, sign=1)
