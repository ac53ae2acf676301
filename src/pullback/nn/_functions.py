"""Activation functions, softmax and friends (``jax.nn``)."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..numpy._promotion import promote_args_inexact
from ..tracer import dtypes
from ..tracer.shapes import index_arg
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


def identity(x: ArrayLike) -> Any:
    """Identity activation: returns ``x`` unmodified (as an array)."""
    return jnp.asarray(x)


tanh = jnp.tanh


def sparse_sigmoid(x: ArrayLike) -> Any:
    """Sparse sigmoid: 0 below -1, ``(x + 1) / 2`` in [-1, 1], 1 above 1.

    As JAX's ``0.5 * clip(x + 1, 0, 2)``, its derivative at -1 and 1 is 0.25 (the clip's
    minimum/maximum split the tie).
    """
    return 0.5 * jnp.clip(jnp.asarray(x) + 1.0, 0.0, 2.0)


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


def mish(x: ArrayLike) -> Any:
    """Mish: ``x * tanh(softplus(x))``."""
    x = jnp.asarray(x)
    return x * jnp.tanh(softplus(x))


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


hard_silu = hard_swish


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


def _axes(ndim: int, axis: Axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim if ndim else a for a in ((axis,) if isinstance(axis, int) else axis))


def logsumexp(a: ArrayLike, axis: Axis = None, b: ArrayLike | None = None,
              keepdims: bool = False, return_sign: bool = False, where: ArrayLike | None = None
              ) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably (the max is factored out).

    Args:
      a: the input.
      axis: an axis or tuple of axes; None reduces everything.
      b: scaling factors broadcastable to ``a``; they may be negative or zero (an element whose
        ``b`` is 0 does not count, even where ``a`` is infinite).
      keepdims: keep reduced axes as size 1.
      return_sign: also return the sign of the sum (-1, 0 or 1), the log being that of its
        absolute value.
      where: a boolean mask of the elements to include.

    Returns:
      The log of the sum; NaN where a real sum with ``b`` is negative unless ``return_sign``,
      -inf for an empty or fully masked sum. With ``return_sign``, ``(log|sum|, sign)``.
    """
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", jnp.asarray(a), jnp.asarray(b))
        a = jnp.where(b != 0, a, -jnp.inf)
    else:
        (a,) = promote_args_inexact("logsumexp", jnp.asarray(a))
    axes = _axes(a.ndim, axis)
    re = jnp.real(a) if dtypes.is_complex(a.dtype) else a
    amax = _masked_max(re, axes, where)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0))
    e = jnp.exp(a - amax.astype(a.dtype))
    if b is not None:
        e = e * b
    s = jnp.sum(e, axis=axes, keepdims=keepdims, where=where)
    sign = jnp.sign(s)
    if return_sign or not dtypes.is_complex(s.dtype):
        s = jnp.abs(s)
    out = jnp.log(s) + (amax if keepdims else jnp.squeeze(amax, axes)).astype(s.dtype)
    if return_sign:
        return out, sign
    if b is not None and not dtypes.is_complex(out.dtype):
        out = jnp.where(sign < 0, np.nan, out)
    return out


def logmeanexp(x: ArrayLike, axis: Axis = None, where: ArrayLike | None = None,
               keepdims: bool = False) -> Any:
    """``logsumexp(x) - log(n)`` over ``axis``: the log of the mean of ``exp(x)``.

    Args:
      x: the input.
      axis: an axis or tuple of axes; None reduces everything.
      where: elements to include (n counts them).
      keepdims: keep reduced axes as size 1.

    Returns:
      The log-mean-exp (NaN for an empty or fully masked reduction, as JAX's -inf - log 0).
    """
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    x = jnp.asarray(x)
    if where is None:
        count = math.prod(x.shape[a] for a in _axes(x.ndim, axis))
        count = jnp.asarray(count, dtype=lse.dtype)
    else:
        count = jnp.sum(jnp.broadcast_to(where, x.shape), axis=axis, dtype=lse.dtype,
                        keepdims=keepdims)
    return lse - jnp.log(count)


@custom_jvp
def log1mexp(x: ArrayLike) -> Any:
    """``log(1 - exp(-x))``, computed stably (Mächler's switch at ``log 2``); undefined (NaN)
    for ``x < 0``. Its derivative is ``1 / expm1(x)`` (JAX's custom rule)."""
    x = jnp.asarray(x)
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


def _masked_max(x: Any, axis: Axis, where: Any) -> Any:
    """max over ``axis`` (kept), -inf for an empty or fully masked slice (JAX's ``initial``,
    passed only when it can matter: it costs a step of its own)."""
    if where is None and all(x.shape[a] for a in _axes(x.ndim, axis)):
        return jnp.max(x, axis, keepdims=True)
    return jnp.max(x, axis, where=where, initial=-jnp.inf, keepdims=True)


def log_softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Any:
    """``x - logsumexp(x)`` over ``axis``; -inf where ``where`` is False."""
    x = jnp.asarray(x)
    x_max = _masked_max(x, axis, where)
    x_safe = x if where is None else jnp.where(where, x, -jnp.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    lse = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    out = shifted - lse
    return out if where is None else jnp.where(where, out, -jnp.inf)


def softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Any:
    """``exp(x) / sum(exp(x))`` over ``axis``; 0 where ``where`` is False."""
    x = jnp.asarray(x)
    x_max = _masked_max(x, axis, where)
    x_safe = x if where is None else jnp.where(where, x, -jnp.inf)
    unnorm = jnp.exp(x_safe - lax.stop_gradient(x_max))
    out = unnorm / jnp.sum(unnorm, axis, where=where, keepdims=True)
    return out if where is None else jnp.where(where, out, 0)


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
    num_classes = index_arg(num_classes, "one_hot", "num_classes")
    classes = lax.iota(dtypes.int32 if x.dtype.itemsize <= 4 else x.dtype, num_classes)
    out = jnp.expand_dims(x, axis) == jnp.reshape(
        classes, tuple(num_classes if i == (axis % (x.ndim + 1)) else 1
                       for i in range(x.ndim + 1)))
    return out.astype(dtype)
