"""Losses (optax's ``losses``): elementwise regression losses and classification losses over
a class axis, differentiable with ``grad`` and usable inside ``jit``."""
from __future__ import annotations

import warnings
from typing import Any, Optional, Union

import numpy as np

from .. import nn
from .. import numpy as jnp
from ..transforms.custom_derivatives import custom_jvp

Axis = Union[int, tuple[int, ...], None]


def _check_subdtype(fn: str, arg: str, x: Any, kind: Any) -> None:
    dtype = jnp.result_type(x)
    if not jnp.issubdtype(dtype, kind):
        kind_name = "floating" if kind is jnp.floating else "integer"
        raise TypeError(f"{fn}: expected `{arg}` to have a {kind_name} dtype, got {dtype}")


def _errors(predictions: Any, targets: Optional[Any]) -> Any:
    return predictions - targets if targets is not None else predictions


def squared_error(predictions: Any, targets: Optional[Any] = None) -> Any:
    """Elementwise ``(predictions - targets) ** 2``.

    Args:
      predictions: floating predictions of any shape.
      targets: targets of the same shape (zeros if None).

    Returns:
      The squared errors, shaped like ``predictions``.

    Raises:
      TypeError: if ``predictions`` is not floating.
      ValueError: if the shapes differ.
    """
    _check_subdtype("squared_error", "predictions", predictions, jnp.floating)
    if targets is not None and np.shape(predictions) != np.shape(targets):
        raise ValueError(f"squared_error: shape mismatch: got {np.shape(predictions)} and "
                         f"{np.shape(targets)}.")
    return _errors(predictions, targets) ** 2


def l2_loss(predictions: Any, targets: Optional[Any] = None) -> Any:
    """Elementwise ``0.5 * (predictions - targets) ** 2``.

    Args:
      predictions: floating predictions of any shape.
      targets: targets of the same shape (zeros if None).

    Returns:
      Half the squared errors, shaped like ``predictions``.
    """
    return 0.5 * squared_error(jnp.asarray(predictions), targets)


def huber_loss(predictions: Any, targets: Optional[Any] = None, *, delta: Any = 1.0) -> Any:
    """Elementwise Huber loss: quadratic for ``|error| <= delta``, linear beyond.

    Args:
      predictions: floating predictions of any shape.
      targets: targets broadcastable to ``predictions`` (zeros if None).
      delta: where the loss turns from quadratic to linear.

    Returns:
      ``0.5 * min(|e|, delta) ** 2 + delta * (|e| - min(|e|, delta))``.
    """
    _check_subdtype("huber_loss", "predictions", predictions, jnp.floating)
    abs_errors = jnp.abs(_errors(predictions, targets))
    quadratic = jnp.minimum(abs_errors, delta)
    return 0.5 * quadratic ** 2 + delta * (abs_errors - quadratic)


def log_cosh(predictions: Any, targets: Optional[Any] = None) -> Any:
    """Elementwise ``log(cosh(predictions - targets))``, computed without overflow.

    Args:
      predictions: floating predictions of any shape.
      targets: targets broadcastable to ``predictions`` (zeros if None).

    Returns:
      The log-cosh losses.
    """
    _check_subdtype("log_cosh", "predictions", predictions, jnp.floating)
    errors = _errors(predictions, targets)
    return jnp.logaddexp(errors, -errors) - jnp.log(2.0).astype(errors.dtype)


def cosine_similarity(predictions: Any, targets: Any, *, epsilon: Any = 0.0,
                      axis: Axis = -1, where: Optional[Any] = None) -> Any:
    """The cosine of the angle between ``predictions`` and ``targets`` along ``axis``.

    Args:
      predictions: floating vectors ``[..., dim]``.
      targets: floating vectors ``[..., dim]``.
      epsilon: the smallest squared norm used in the denominators.
      axis: the axis or axes of the vectors.
      where: the elements to include.

    Returns:
      The similarities, shaped ``[...]``.
    """
    _check_subdtype("cosine_similarity", "predictions", predictions, jnp.floating)
    _check_subdtype("cosine_similarity", "targets", targets, jnp.floating)
    a, b = jnp.asarray(predictions), jnp.asarray(targets)
    a_norm = jnp.sqrt(jnp.square(a).sum(axis=axis, where=where, keepdims=True).clip(epsilon))
    b_norm = jnp.sqrt(jnp.square(b).sum(axis=axis, where=where, keepdims=True).clip(epsilon))
    return ((a / a_norm) * (b / b_norm)).sum(axis=axis, where=where)


def cosine_distance(predictions: Any, targets: Any, *, epsilon: Any = 0.0,
                    axis: Axis = -1, where: Optional[Any] = None) -> Any:
    """``1 - cosine_similarity(predictions, targets)``.

    Args:
      predictions: floating vectors ``[..., dim]``.
      targets: floating vectors ``[..., dim]``.
      epsilon: the smallest squared norm used in the denominators.
      axis: the axis or axes of the vectors.
      where: the elements to include.

    Returns:
      The distances, shaped ``[...]``.
    """
    return 1.0 - cosine_similarity(predictions, targets, epsilon=epsilon, axis=axis,
                                   where=where)


def sigmoid_binary_cross_entropy(logits: Any, labels: Any) -> Any:
    """Elementwise binary cross entropy of ``sigmoid(logits)`` against ``labels``.

    Args:
      logits: floating logits of the positive class.
      labels: labels in {0, 1} or probabilities, broadcastable to ``logits``.

    Returns:
      ``-labels * log(sigmoid(logits)) - (1 - labels) * log(sigmoid(-logits))``.
    """
    _check_subdtype("sigmoid_binary_cross_entropy", "logits", logits, jnp.floating)
    logits = jnp.asarray(logits)
    labels = jnp.asarray(labels).astype(logits.dtype)
    return -labels * nn.log_sigmoid(logits) - (1.0 - labels) * nn.log_sigmoid(-logits)


def sigmoid_focal_loss(logits: Any, labels: Any, *, alpha: Optional[Any] = None,
                       gamma: Any = 2.0) -> Any:
    """Focal loss: the sigmoid cross entropy weighted by ``(1 - p_t) ** gamma``.

    Args:
      logits: floating logits.
      labels: labels in {0, 1} or probabilities, broadcastable to ``logits``.
      alpha: optional weight of the positive class (``1 - alpha`` for the negative).
      gamma: the focusing exponent.

    Returns:
      The focal losses, shaped like ``logits``.
    """
    _check_subdtype("sigmoid_focal_loss", "logits", logits, jnp.floating)
    logits = jnp.asarray(logits)
    labels = jnp.asarray(labels).astype(logits.dtype)
    ce = sigmoid_binary_cross_entropy(logits, labels)
    log_p, log_q = nn.log_sigmoid(logits), nn.log_sigmoid(-logits)
    # log(1 - p_t) = log((1 - labels) * p + labels * (1 - p)), stably
    log_one_minus_pt = nn.logsumexp(jnp.stack([log_p, log_q], axis=-1), axis=-1,
                                    b=jnp.stack([1 - labels, labels], axis=-1))
    loss = ce * jnp.exp(gamma * log_one_minus_pt)
    if alpha is None:
        return loss
    return (alpha * labels + (1.0 - alpha) * (1.0 - labels)) * loss


def hinge_loss(predictor_outputs: Any, targets: Any) -> Any:
    """Elementwise ``max(0, 1 - predictor_outputs * targets)``.

    Args:
      predictor_outputs: the decision function's outputs.
      targets: targets in {-1, 1}.

    Returns:
      The hinge losses.
    """
    return jnp.maximum(0, 1 - predictor_outputs * targets)


def softmax_cross_entropy(logits: Any, labels: Any, axis: Axis = -1,
                          where: Optional[Any] = None) -> Any:
    """Cross entropy of ``softmax(logits)`` against probability ``labels`` over ``axis``.

    Args:
      logits: floating logits ``[..., num_classes]``.
      labels: probabilities (e.g. one-hot) of the same shape.
      axis: the class axis or axes.
      where: the elements to include (broadcast over ``axis`` if it lacks it).

    Returns:
      ``-sum(labels * log_softmax(logits))`` over ``axis``.
    """
    _check_subdtype("softmax_cross_entropy", "logits", logits, jnp.floating)
    return nn.softmax_cross_entropy(logits, labels, axis=axis, where=where)  # one fused kernel


def softmax_cross_entropy_with_integer_labels(logits: Any, labels: Any,
                                              axis: Union[int, tuple[int, ...]] = -1,
                                              where: Optional[Any] = None) -> Any:
    """Cross entropy of ``softmax(logits)`` against integer class ``labels``.

    Args:
      logits: floating logits ``[..., num_classes]``.
      labels: integer class indices ``[...]``.
      axis: the class axis, or a tuple of axes flattened into one class axis.
      where: the elements to include.

    Returns:
      ``logsumexp(logits) - logits[label]`` over ``axis`` (0 where ``where`` excludes the
      whole row).

    Raises:
      TypeError: if ``logits`` is not floating or ``labels`` not integer, or ``axis`` is
        neither an int nor a tuple.
    """
    fn = "softmax_cross_entropy_with_integer_labels"
    _check_subdtype(fn, "logits", logits, jnp.floating)
    _check_subdtype(fn, "labels", labels, jnp.integer)
    return nn.softmax_cross_entropy_with_integer_labels(logits, labels, axis=axis, where=where)


@custom_jvp
def _weighted_logsoftmax(x: Any, weights: Any) -> Any:
    # weights * log_softmax(x), with 0 (not nan) where weights == 0 and x == -inf
    logsm = nn.log_softmax(x, axis=-1)
    return jnp.where(weights != 0.0, weights * logsm, jnp.zeros_like(logsm))


@_weighted_logsoftmax.defjvp
def _weighted_logsoftmax_jvp(primals, tangents):
    x, weights = primals
    x_dot, weights_dot = tangents
    logsm = nn.log_softmax(x, axis=-1)
    out = jnp.where(weights != 0.0, weights * logsm, jnp.zeros_like(logsm))
    out_dot = (weights * x_dot
               - weights * jnp.sum(x_dot * nn.softmax(x, axis=-1), axis=-1, keepdims=True)
               + weights_dot * logsm)
    return out, out_dot


def safe_softmax_cross_entropy(logits: Any, labels: Any) -> Any:
    """:func:`softmax_cross_entropy` over the last axis that stays finite (value and
    gradient) where a logit is ``-inf`` and its label is 0.

    Args:
      logits: floating logits ``[..., num_classes]``, possibly ``-inf``.
      labels: probabilities of the same shape.

    Returns:
      The cross entropies, shaped ``[...]``.
    """
    _check_subdtype("safe_softmax_cross_entropy", "logits", logits, jnp.floating)
    return -jnp.sum(_weighted_logsoftmax(jnp.asarray(logits), jnp.asarray(labels)), axis=-1)


def kl_divergence(log_predictions: Any, targets: Any, axis: Axis = -1,
                  where: Optional[Any] = None) -> Any:
    """``KL(targets || predictions)`` from log predictions and target probabilities.

    Args:
      log_predictions: floating log probabilities.
      targets: floating probabilities (a 0 contributes 0).
      axis: the axis or axes summed over.
      where: the elements to include.

    Returns:
      ``sum(targets * (log(targets) - log_predictions))`` over ``axis``.
    """
    _check_subdtype("kl_divergence", "log_predictions", log_predictions, jnp.floating)
    _check_subdtype("kl_divergence", "targets", targets, jnp.floating)
    targets = jnp.asarray(targets)
    loss = targets * (jnp.where(targets == 0, 0, jnp.log(targets)) - log_predictions)
    return jnp.sum(loss, axis=axis, where=where)


def kl_divergence_with_log_targets(log_predictions: Any, log_targets: Any, axis: Axis = -1,
                                   where: Optional[Any] = None) -> Any:
    """``KL(targets || predictions)`` from log predictions and log targets.

    Args:
      log_predictions: floating log probabilities.
      log_targets: floating log target probabilities.
      axis: the axis or axes summed over.
      where: the elements to include.

    Returns:
      ``sum(exp(log_targets) * (log_targets - log_predictions))`` over ``axis``.
    """
    _check_subdtype("kl_divergence_with_log_targets", "log_predictions", log_predictions,
                    jnp.floating)
    _check_subdtype("kl_divergence_with_log_targets", "log_targets", log_targets,
                    jnp.floating)
    loss = jnp.exp(log_targets) * (log_targets - log_predictions)
    return jnp.sum(loss, axis=axis, where=where)


def generalized_kl_divergence(log_predictions: Any, targets: Any, axis: Axis = -1,
                              where: Optional[Any] = None) -> Any:
    """The generalized KL divergence ``kl_divergence + sum(exp(log_predictions) - targets)``,
    convex in ``log_predictions``.

    Args:
      log_predictions: floating log predictions.
      targets: floating targets.
      axis: the axis or axes summed over.
      where: the elements to include.

    Returns:
      The divergences.
    """
    return (kl_divergence(log_predictions, targets, axis=axis, where=where)
            + jnp.sum(jnp.exp(log_predictions) - targets, axis=axis, where=where))


def convex_kl_divergence(log_predictions: Any, targets: Any, axis: Axis = -1,
                         where: Optional[Any] = None) -> Any:
    """Deprecated in optax for :func:`generalized_kl_divergence`, which it computes.

    Args:
      log_predictions: floating log predictions.
      targets: floating targets.
      axis: the axis or axes summed over.
      where: the elements to include.

    Returns:
      The divergences.
    """
    warnings.warn("The function convex_kl_divergence is deprecated. Please use "
                  "generalized_kl_divergence instead.", DeprecationWarning, stacklevel=2)
    return generalized_kl_divergence(log_predictions, targets, axis=axis, where=where)
