"""Softmax cross-entropy losses with optax 0.2.8's semantics, each one fused kernel forward and
backward (primitives/cross_entropy.py)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import numpy as jnp
from ..primitives.cross_entropy import xent_p
from ..tracer import dtypes

ArrayLike = Any


def _canonical_axes(fn: str, axis: Any, ndim: int, allow_none: bool) -> tuple[int, ...]:
    if axis is None and allow_none:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axes: Sequence = (int(axis),)
    elif isinstance(axis, tuple):
        axes = axis
    else:
        raise ValueError(f"{fn}: keyword argument 'axis' must be of type 'int' or "
                         f"'tuple[int, ...]'{' or None' if allow_none else ''} but actual type "
                         f"is {type(axis)}.")
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{fn}: argument 'axis' {a} is out of bounds for logits of rank "
                             f"{ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: argument 'axis' has repeated axes: {axis}")
    return tuple(out)


def _classes_last(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` with the class ``axes`` moved last (in their order) and flattened into one."""
    batch = tuple(a for a in range(x.ndim) if a not in axes)
    if axes != tuple(range(x.ndim - len(axes), x.ndim)):
        x = jnp.transpose(x, batch + axes)
    if len(axes) != 1:
        x = jnp.reshape(x, x.shape[:len(batch)] + (-1,))
    return x


def _prepare_where(fn: str, where: Any, logits: Any, axes: tuple[int, ...]) -> Any:
    if where is None:
        return None
    where = jnp.asarray(where)
    if where.dtype != dtypes.bool_:
        raise TypeError(f"{fn}: argument 'where' must be a boolean array, got {where.dtype}")
    if where.ndim != logits.ndim:  # optax: a per-example mask spreads over the class axes
        where = jnp.expand_dims(where, axes)
    try:
        where = jnp.broadcast_to(where, logits.shape)
    except ValueError:
        raise ValueError(f"{fn}: argument 'where' of shape {where.shape} does not broadcast to "
                         f"the logits' shape {logits.shape}") from None
    return _classes_last(where, axes)


def _check_floating(fn: str, arg: str, x: Any) -> None:
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"{fn}: expected `{arg}` to have a floating dtype, got {x.dtype}")


def softmax_cross_entropy(logits: ArrayLike, labels: ArrayLike, *, axis: Any = -1,
                          where: ArrayLike | None = None) -> Any:
    """Cross-entropy of ``softmax(logits)`` against probability ``labels`` (optax's
    ``softmax_cross_entropy``): ``-sum(labels * log_softmax(logits))`` over ``axis``.

    One fused kernel computes each row's log-sum-exp and ``sum(labels * (lse - logits))``; the
    backward pass is ``g * (sum(labels) * softmax - labels)`` for the logits and
    ``g * (lse - logits)`` for the labels, never materialising the log-probabilities.

    Args:
      logits: floating unnormalised log-probabilities.
      labels: probabilities (e.g. one-hot) broadcastable to ``logits``' shape.
      axis: the class axis, a tuple of axes, or None (every axis).
      where: elements to include, of ``logits``' shape or its shape without the class axes;
        masked classes count neither in the softmax nor in the sum.

    Returns:
      The per-example losses: ``logits``' shape without ``axis``, in the promoted dtype of
      ``logits`` and ``labels``.
    """
    fn = "softmax_cross_entropy"
    logits = jnp.asarray(logits)
    _check_floating(fn, "logits", logits)
    labels = jnp.asarray(labels)
    dtype = jnp.result_type(logits, labels)
    if not dtypes.is_float(dtype):
        raise TypeError(f"{fn}: the promoted dtype of 'logits' and 'labels' must be floating, "
                        f"got {dtype}")
    axes = _canonical_axes(fn, axis, logits.ndim, allow_none=True)
    try:
        labels = jnp.broadcast_to(labels, logits.shape)
    except ValueError:
        raise ValueError(f"{fn}: argument 'labels' of shape {labels.shape} does not broadcast to "
                         f"the logits' shape {logits.shape}") from None
    where = _prepare_where(fn, where, logits, axes)
    logits = _classes_last(logits.astype(dtype), axes)
    labels = _classes_last(labels.astype(dtype), axes)
    ops = (logits, labels) if where is None else (logits, labels, where)
    return xent_p.bind(*ops, mode="loss", integer=False, has_where=where is not None)


def softmax_cross_entropy_with_integer_labels(logits: ArrayLike, labels: ArrayLike, *,
                                              axis: int | tuple[int, ...] = -1,
                                              where: ArrayLike | None = None) -> Any:
    """Cross-entropy of ``softmax(logits)`` against integer class ``labels`` (optax's
    ``softmax_cross_entropy_with_integer_labels``): ``logsumexp(logits) - logits[label]``.

    One fused kernel per row computes the log-sum-exp and picks the label's logit; the
    backward kernel writes ``g * (softmax - onehot)`` without building the one-hot.

    Labels follow JAX's ``take_along_axis`` as optax uses it: a label in ``[-C, C)`` picks its
    class (negative labels count from the end); any other label gives a NaN loss, and its
    gradient is the softmax alone.

    Args:
      logits: floating unnormalised log-probabilities.
      labels: integer class indices, ``logits``' shape without the class axis (broadcastable
        to it).
      axis: the class axis, or a tuple of axes flattened (in order) into one class axis, a
        label then being a flat index into them.
      where: elements to include, of ``logits``' shape or its shape without the class axes;
        a row with nothing included has loss 0.

    Returns:
      The per-example losses, in ``logits``' dtype.
    """
    fn = "softmax_cross_entropy_with_integer_labels"
    logits = jnp.asarray(logits)
    labels = jnp.asarray(labels)
    _check_floating(fn, "logits", logits)
    if not dtypes.is_integer(labels.dtype):
        raise TypeError(f"{fn}: expected `labels` to have an integer dtype, got {labels.dtype}")
    axes = _canonical_axes(fn, axis, logits.ndim, allow_none=False)
    batch = tuple(n for a, n in enumerate(logits.shape) if a not in axes)
    try:
        labels = jnp.broadcast_to(labels, batch)
    except ValueError:
        raise ValueError(f"{fn}: argument 'labels' must have the logits' shape without the "
                         f"class axis, {batch}, got {labels.shape}") from None
    where = _prepare_where(fn, where, logits, axes)
    logits = _classes_last(logits, axes)
    ops = (logits, labels) if where is None else (logits, labels, where)
    return xent_p.bind(*ops, mode="loss", integer=True, has_where=where is not None)
