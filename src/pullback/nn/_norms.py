"""Normalisation layers as functions: layer, RMS, group and batch norms (issue 26).

Each is one ``normalize`` primitive (``primitives/norms.py``): one fused kernel forward and one
backward, statistics in float32 for 16-bit inputs. Scale and bias are optional; when given
they are promoted with ``x`` to one inexact dtype (as the hand-written ``(x - m) * s + b``
would be).
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

from .. import lax
from .. import numpy as jnp
from ..numpy._promotion import promote_dtypes_inexact
from ..primitives.norms import check_normalize, normalize_p
from ..tracer import dtypes
from ..tracer.core import get_aval

ArrayLike = Any


def _axes(name: str, ndim: int, axis: int | Sequence[int], arg: str = "axis") -> tuple[int, ...]:
    """``axis`` (an int or a sequence of ints, negative counting from the end) as sorted
    non-negative axes, raising the error that names op ``name`` and argument ``arg``."""
    raw = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    out = []
    for a in raw:
        try:
            a = operator.index(a)
        except TypeError:
            raise TypeError(f"{name}: argument '{arg}' must be an int or a tuple of ints, got "
                            f"{axis!r}") from None
        if not -ndim <= a < ndim:
            raise ValueError(f"{name}: argument '{arg}' {axis!r} is out of range for x with "
                             f"{ndim} dimensions")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: argument '{arg}' {axis!r} repeats an axis")
    if not out:
        raise ValueError(f"{name}: argument '{arg}' must name at least one axis")
    return tuple(sorted(out))


def _prepare(name: str, x: ArrayLike, *params: ArrayLike | None) -> list[Any]:
    """x and the given parameters promoted to one inexact dtype (None stays None)."""
    given = [p for p in params if p is not None]
    out = list(promote_dtypes_inexact(name, x, *given))
    it = iter(out[1:])
    return [out[0]] + [None if p is None else next(it) for p in params]


def _normalize(name: str, x: Any, scale: Any, bias: Any, axes: tuple, param_axes: tuple,
               rms: bool, epsilon: Any, axis_arg: str) -> Any:
    if isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool):
        epsilon = float(epsilon)
    check_normalize(name, get_aval(x), None if scale is None else get_aval(scale),
                    None if bias is None else get_aval(bias), axes, param_axes, epsilon,
                    axis_arg)
    ps = [p for p in (scale, bias) if p is not None]
    return normalize_p.bind(x, *ps, axes=axes, param_axes=param_axes, rms=rms,
                            epsilon=epsilon, has_scale=scale is not None,
                            has_bias=bias is not None)


def layer_norm(x: ArrayLike, scale: ArrayLike | None = None, bias: ArrayLike | None = None, *,
               axis: int | Sequence[int] = -1, epsilon: float = 1e-5) -> Any:
    """Layer normalisation: ``(x - mean) / sqrt(var + epsilon) * scale + bias``.

    Statistics are taken over ``axis`` (biased variance), in float32 for 16-bit inputs.

    Args:
      x: the input.
      scale: optional, of ``x``'s shape along ``axis`` (so ``axis=1`` on an NCHW input with
        a ``(C,)`` scale is LayerNorm2d).
      bias: optional, of the same shape.
      axis: the normalised axis or axes.
      epsilon: added to the variance.

    Returns:
      An array of ``x``'s shape and the promoted dtype.
    """
    x, scale, bias = _prepare("layer_norm", x, scale, bias)
    axes = _axes("layer_norm", get_aval(x).ndim, axis)
    return _normalize("layer_norm", x, scale, bias, axes, axes, False, epsilon, "axis")


def rms_norm(x: ArrayLike, scale: ArrayLike | None = None, *, axis: int | Sequence[int] = -1,
             epsilon: float = 1e-6) -> Any:
    """Root-mean-square normalisation: ``x / sqrt(mean(x**2) + epsilon) * scale``.

    Args:
      x: the input.
      scale: optional, of ``x``'s shape along ``axis``.
      axis: the normalised axis or axes.
      epsilon: added to the mean square.
    """
    x, scale = _prepare("rms_norm", x, scale)
    axes = _axes("rms_norm", get_aval(x).ndim, axis)
    return _normalize("rms_norm", x, scale, None, axes, axes, True, epsilon, "axis")


def _channel(name: str, ndim: int, channel_axis: Any) -> int:
    return _axes(name, ndim, channel_axis, "channel_axis")[0] if not isinstance(
        channel_axis, (tuple, list)) else _bad_channel(name, channel_axis)


def _bad_channel(name: str, channel_axis: Any) -> int:
    raise TypeError(f"{name}: argument 'channel_axis' must be an int, got {channel_axis!r}")


def group_norm(x: ArrayLike, num_groups: int, scale: ArrayLike | None = None,
               bias: ArrayLike | None = None, *, channel_axis: int = -1,
               epsilon: float = 1e-5) -> Any:
    """Group normalisation (Wu and He, 2018), as PyTorch's and flax's.

    Axis 0 is the batch axis; the channels (``channel_axis``) are split into ``num_groups``
    groups of consecutive channels, and each (example, group) is normalised over its channels
    and every other axis.

    Args:
      x: the input, at least 2-D: (N, ..., C, ...).
      num_groups: how many groups; must divide the number of channels.
      scale: optional, ``(C,)``.
      bias: optional, ``(C,)``.
      channel_axis: the channel axis (not 0, the batch axis).
      epsilon: added to the variance.
    """
    x, scale, bias = _prepare("group_norm", x, scale, bias)
    aval = get_aval(x)
    if aval.ndim < 2:
        raise ValueError(f"group_norm: argument 'x' must have a batch and a channel axis, got "
                         f"shape {aval.shape}")
    c = _channel("group_norm", aval.ndim, channel_axis)
    if c == 0:
        raise ValueError("group_norm: argument 'channel_axis' is the batch axis 0; the "
                         "channels must be another axis")
    try:
        g = operator.index(num_groups)
    except TypeError:
        raise TypeError(f"group_norm: argument 'num_groups' must be an int, got "
                        f"{num_groups!r}") from None
    ch = aval.shape[c]
    if g < 1 or ch % g:
        raise ValueError(f"group_norm: argument 'num_groups' ({g}) must be a positive divisor "
                         f"of the {ch} channels of x (axis {c} of shape {aval.shape})")
    for arg, p in (("scale", scale), ("bias", bias)):
        if p is not None and get_aval(p).shape != (ch,):
            raise ValueError(f"group_norm: argument '{arg}' must have shape ({ch},) (x's "
                             f"channels), got {get_aval(p).shape}")
    split = aval.shape[:c] + (g, ch // g) + aval.shape[c + 1:]
    xr = lax.reshape(x, split)
    ps = [None if p is None else lax.reshape(p, (g, ch // g)) for p in (scale, bias)]
    axes = tuple(d for d in range(len(split)) if d not in (0, c))
    y = _normalize("group_norm", xr, ps[0], ps[1], axes, (c, c + 1), False, epsilon,
                   "channel_axis")
    return lax.reshape(y, aval.shape)


def batch_stats(x: ArrayLike, channel_axis: int = -1) -> tuple[Any, Any]:
    """The batch statistics of ``x``: ``(mean, variance)`` over every axis but
    ``channel_axis`` (biased variance), computed in float32 for 16-bit inputs and returned in
    ``x``'s dtype, each of shape ``(C,)``; for running averages."""
    (x,) = promote_dtypes_inexact("batch_stats", x)
    aval = get_aval(x)
    c = _channel("batch_stats", aval.ndim, channel_axis)
    axes = tuple(d for d in range(aval.ndim) if d != c)
    acc = dtypes.float32 if aval.dtype in (dtypes.float16, dtypes.bfloat16) else aval.dtype
    xf = x.astype(acc)
    mean = jnp.mean(xf, axis=axes)
    var = jnp.mean(jnp.square(xf - jnp.expand_dims(mean, axes)), axis=axes)
    return mean.astype(aval.dtype), var.astype(aval.dtype)


def batch_norm(x: ArrayLike, scale: ArrayLike | None = None, bias: ArrayLike | None = None, *,
               mean: ArrayLike | None = None, variance: ArrayLike | None = None,
               channel_axis: int = -1, epsilon: float = 1e-5) -> Any:
    """Batch normalisation over every axis but ``channel_axis``.

    With ``mean`` and ``variance`` (each ``(C,)``, e.g. running averages) it computes
    ``(x - mean) / sqrt(variance + epsilon) * scale + bias``. Without them it uses the batch
    statistics (the training form), and is differentiable through them.

    Args:
      x: the input.
      scale: optional, ``(C,)``.
      bias: optional, ``(C,)``.
      mean: the statistics to use, with ``variance``; both or neither.
      variance: the variance to use.
      channel_axis: the channel axis.
      epsilon: added to the variance.
    """
    if (mean is None) != (variance is None):
        missing = "variance" if variance is None else "mean"
        raise ValueError(f"batch_norm: argument '{missing}' must be given with "
                         f"'{'mean' if missing == 'variance' else 'variance'}' (give both "
                         f"statistics, or neither for the batch statistics)")
    if mean is None:
        x, scale, bias = _prepare("batch_norm", x, scale, bias)
        aval = get_aval(x)
        c = _channel("batch_norm", aval.ndim, channel_axis)
        axes = tuple(d for d in range(aval.ndim) if d != c)
        if not axes:
            raise ValueError(f"batch_norm: argument 'x' of shape {aval.shape} has no axis "
                             f"besides the channel axis to take batch statistics over")
        return _normalize("batch_norm", x, scale, bias, axes, (c,), False, epsilon,
                          "channel_axis")
    x, scale, bias, mean, variance = _prepare("batch_norm", x, scale, bias, mean, variance)
    aval = get_aval(x)
    c = _channel("batch_norm", aval.ndim, channel_axis)
    ch = aval.shape[c]
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or epsilon < 0:
        raise ValueError(f"batch_norm: argument 'epsilon' must be a finite number >= 0, got "
                         f"{epsilon!r}")
    for arg, p in (("scale", scale), ("bias", bias), ("mean", mean), ("variance", variance)):
        if p is not None and get_aval(p).shape != (ch,):
            raise ValueError(f"batch_norm: argument '{arg}' must have shape ({ch},) (x's "
                             f"channels along axis {c}), got {get_aval(p).shape}")
    if aval.dtype not in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64):
        raise TypeError(f"batch_norm: argument 'x' must be a floating array, got {aval.dtype}")
    acc = dtypes.float32 if aval.dtype in (dtypes.float16, dtypes.bfloat16) else aval.dtype
    along = lambda p: lax.broadcast_in_dim(p.astype(acc), aval.shape, (c,))  # noqa: E731
    y = (x.astype(acc) - along(mean)) * lax.rsqrt(along(variance) + jnp.asarray(epsilon, acc))
    if scale is not None:
        y = y * along(scale)
    if bias is not None:
        y = y + along(bias)
    return y.astype(aval.dtype)
