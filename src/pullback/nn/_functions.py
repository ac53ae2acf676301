"""Activation functions, softmax and friends (``jax.nn``)."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..tracer import dtypes
from ..transforms.custom_derivatives import custom_jvp

ArrayLike = Any
Axis = int | Sequence[int] | None


def _zero_outside(g: Any, inside: Any) -> Any:
    return lax.select(inside, g, lax.full_like(g, 0))


@custom_jvp
def relu(x: ArrayLike) -> Any:
    """Rectified linear unit: ``max(x, 0)``.

    Its derivative is 0 at ``x == 0`` (as in JAX; differentiating ``maximum`` would give 0.5
    there), so the backward pass keeps a boolean mask ``x > 0``.
    """
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: _zero_outside(g, x > 0))


@custom_jvp
def relu6(x: ArrayLike) -> Any:
    """``min(max(x, 0), 6)``; its derivative is 0 at 0 and at 6 (as in JAX)."""
    return jnp.minimum(jnp.maximum(x, 0), 6)


relu6.defjvps(lambda g, ans, x: _zero_outside(g, (x > 0) & (x < 6)))


def sigmoid(x: ArrayLike) -> Any:
    """Logistic sigmoid ``1 / (1 + exp(-x))``."""
    x = jnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        x = x.astype(jnp.float32)
    return lax.logistic(x)


def log_sigmoid(x: ArrayLike) -> Any:
    """``log(sigmoid(x))`` = ``-softplus(-x)``, stable for large |x|."""
    return -softplus(-jnp.asarray(x))


def softplus(x: ArrayLike) -> Any:
    """``log(1 + exp(x))``, stable for large |x|."""
    return jnp.logaddexp(x, 0)


def sparse_plus(x: ArrayLike) -> Any:
    """0 below -1, ``(x+1)**2/4`` in [-1, 1], x above 1."""
    x = jnp.asarray(x)
    return jnp.where(x <= -1, 0.0, jnp.where(x >= 1, x, (x + 1) ** 2 / 4))


def squareplus(x: ArrayLike, b: ArrayLike = 4) -> Any:
    """``(x + sqrt(x**2 + b)) / 2``."""
    x = jnp.asarray(x)
    return (x + jnp.sqrt(x * x + b)) / 2


def soft_sign(x: ArrayLike) -> Any:
    """``x / (|x| + 1)``."""
    return x / (jnp.abs(x) + 1)


def silu(x: ArrayLike) -> Any:
    """``x * sigmoid(x)`` (swish)."""
    return x * sigmoid(x)


swish = silu


def hard_sigmoid(x: ArrayLike) -> Any:
    """``relu6(x + 3) / 6``."""
    return relu6(jnp.asarray(x) + 3.0) / 6.0


def hard_swish(x: ArrayLike) -> Any:
    """``x * hard_sigmoid(x)``."""
    return x * hard_sigmoid(x)


def hard_tanh(x: ArrayLike) -> Any:
    """``x`` limited to [-1, 1]; its derivative is 1 at -1 and 1 (as in JAX)."""
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Any:
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""
    x = jnp.asarray(x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Any:
    """``max(x, 0) + alpha * min(exp(x / alpha) - 1, 0)``."""
    x = jnp.asarray(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x: ArrayLike) -> Any:
    """Scaled ELU with the self-normalizing constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def gelu(x: ArrayLike, approximate: bool = True) -> Any:
    """Gaussian error linear unit (the tanh approximation by default, as JAX)."""
    x = jnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        x = x.astype(jnp.float32)
    if approximate:
        c = math.sqrt(2 / math.pi)
        return 0.5 * x * (1 + jnp.tanh(c * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + lax.erf(x / np.array(math.sqrt(2), x.dtype)))


def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 1e-2) -> Any:
    """``x`` for x >= 0, ``negative_slope * x`` otherwise."""
    x = jnp.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def glu(x: ArrayLike, axis: int = -1) -> Any:
    """Gated linear unit: the first half of ``axis`` times sigmoid of the second."""
    a, b = jnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def _shift_max(x: Any, axis: Axis, where: Any = None) -> Any:
    """The max (keepdims) that stabilises exp: -inf over an empty axis, as JAX's
    initial=-inf, which costs an extra maximum only where it can matter (empty or masked)."""
    if where is not None or x.size == 0:
        return jnp.max(x, axis, keepdims=True, initial=-jnp.inf, where=where)
    return jnp.max(x, axis, keepdims=True)


def logsumexp(a: ArrayLike, axis: Axis = None, b: ArrayLike | None = None,
              keepdims: bool = False, return_sign: bool = False, where: ArrayLike | None = None
              ) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably (the max is factored out)."""
    a = jnp.asarray(a)
    if not dtypes.is_inexact(a.dtype):
        a = a.astype(jnp.float32)
    if where is not None:
        a = jnp.where(where, a, -jnp.inf)
    amax = _shift_max(a, axis)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0.0))
    e = jnp.exp(a - amax)
    if b is not None:
        e = e * b
    s = jnp.sum(e, axis=axis, keepdims=True)
    sign = jnp.sign(s)
    out = jnp.log(jnp.abs(s)) + amax
    if not keepdims:
        axes = tuple(range(a.ndim)) if axis is None else axis
        out = jnp.squeeze(out, axes)
        sign = jnp.squeeze(sign, axes)
    return (out, sign) if return_sign else out


def log_softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Any:
    """``x - logsumexp(x)`` over ``axis``."""
    x = jnp.asarray(x)
    shifted = x - lax.stop_gradient(_shift_max(x, axis, where))
    lse = jnp.log(jnp.sum(jnp.exp(shifted), axis, keepdims=True, where=where))
    return shifted - lse


def softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Any:
    """``exp(x) / sum(exp(x))`` over ``axis``."""
    x = jnp.asarray(x)
    unnorm = jnp.exp(x - lax.stop_gradient(_shift_max(x, axis)))
    if where is not None:
        unnorm = jnp.where(where, unnorm, 0.0)
    return unnorm / jnp.sum(unnorm, axis, keepdims=True)


def standardize(x: ArrayLike, axis: Axis = -1, mean: ArrayLike | None = None,
                variance: ArrayLike | None = None, epsilon: ArrayLike = 1e-5) -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``."""
    x = jnp.asarray(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True)
    if variance is None:
        variance = jnp.mean(jnp.square(x), axis, keepdims=True) - jnp.square(mean)
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x: ArrayLike, num_classes: int, *, dtype: Any = jnp.float32, axis: int = -1) -> Any:
    """One-hot encoding of integer ``x`` with ``num_classes`` classes (out-of-range gives all
    zeros)."""
    x = jnp.asarray(x)
    classes = lax.iota(dtypes.int32 if x.dtype.itemsize <= 4 else x.dtype, num_classes)
    out = jnp.expand_dims(x, axis) == jnp.reshape(
        classes, tuple(num_classes if i == (axis % (x.ndim + 1)) else 1
                       for i in range(x.ndim + 1)))
    return out.astype(dtype)
