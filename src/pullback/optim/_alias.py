"""Optimizers as chains of transformations (optax's ``alias``): ``sgd``, ``adam`` and its
variants, ``adagrad``, ``rmsprop`` and ``lion``, each with optax's chain, so their states
have optax's structure. ``learning_rate`` is a float or a schedule ``count -> lr``."""
from __future__ import annotations

import functools
from typing import Any, Optional

from ._base import GradientTransformationExtraArgs, ScalarOrSchedule, chain, identity
from ._scale_by import (scale_by_adam, scale_by_adamax, scale_by_amsgrad, scale_by_lion,
                        scale_by_rms, scale_by_rss, scale_by_stddev)
from ._transform import MaskOrFn, add_decayed_weights, scale_by_learning_rate, trace


def sgd(learning_rate: ScalarOrSchedule, momentum: Optional[Any] = None,
        nesterov: bool = False,
        accumulator_dtype: Optional[Any] = None) -> GradientTransformationExtraArgs:
    """Stochastic gradient descent, with optional (Nesterov) momentum.

    Args:
      learning_rate: a float or a schedule.
      momentum: the momentum decay, or None for none.
      nesterov: use Nesterov momentum.
      accumulator_dtype: dtype of the momentum buffer (None: the params').

    Returns:
      ``chain(trace or identity, scale_by_learning_rate)``.
    """
    opt = (trace(decay=momentum, nesterov=nesterov, accumulator_dtype=accumulator_dtype)
           if momentum is not None else identity())
    return chain(opt, scale_by_learning_rate(learning_rate))


def adam(learning_rate: ScalarOrSchedule, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
         eps_root: Any = 0.0, mu_dtype: Optional[Any] = None, *,
         nesterov: bool = False) -> GradientTransformationExtraArgs:
    """Adam.

    Args:
      learning_rate: a float or a schedule.
      b1: decay rate of the first moment.
      b2: decay rate of the second moment.
      eps: added to the denominator outside the square root.
      eps_root: added inside the square root.
      mu_dtype: dtype of the first moment (None: the params').
      nesterov: use Nesterov momentum (NAdam).

    Returns:
      ``chain(scale_by_adam, scale_by_learning_rate)``.
    """
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def adamw(learning_rate: ScalarOrSchedule, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
          eps_root: Any = 0.0, mu_dtype: Optional[Any] = None,
          weight_decay: ScalarOrSchedule = 1e-4, mask: MaskOrFn = None, *,
          nesterov: bool = False) -> GradientTransformationExtraArgs:
    """Adam with decoupled weight decay (the decay is scaled by the learning rate too).

    Args:
      learning_rate: a float or a schedule.
      b1: decay rate of the first moment.
      b2: decay rate of the second moment.
      eps: added to the denominator outside the square root.
      eps_root: added inside the square root.
      mu_dtype: dtype of the first moment (None: the params').
      weight_decay: the weight decay, a float or a schedule.
      mask: where to decay (a pytree of booleans or a callable returning one).
      nesterov: use Nesterov momentum (NAdamW).

    Returns:
      ``chain(scale_by_adam, add_decayed_weights, scale_by_learning_rate)``.
    """
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


nadam = functools.partial(adam, nesterov=True)
nadam.__doc__ = """NAdam: :func:`adam` with Nesterov momentum (``adam(..., nesterov=True)``).

Args:
  learning_rate: a float or a schedule.
  b1, b2, eps, eps_root, mu_dtype: as :func:`adam`.

Returns:
  ``chain(scale_by_adam(nesterov=True), scale_by_learning_rate)``.
"""

nadamw = functools.partial(adamw, nesterov=True)
nadamw.__doc__ = """NAdamW: :func:`adamw` with Nesterov momentum (``adamw(..., nesterov=True)``).

Args:
  learning_rate: a float or a schedule.
  b1, b2, eps, eps_root, mu_dtype, weight_decay, mask: as :func:`adamw`.

Returns:
  ``chain(scale_by_adam(nesterov=True), add_decayed_weights, scale_by_learning_rate)``.
"""


def adamax(learning_rate: ScalarOrSchedule, b1: Any = 0.9, b2: Any = 0.999,
           eps: Any = 1e-8) -> GradientTransformationExtraArgs:
    """Adamax, Adam with the infinity norm.

    Args:
      learning_rate: a float or a schedule.
      b1: decay rate of the first moment.
      b2: decay rate of the infinity norm.
      eps: added to ``|g|``.

    Returns:
      ``chain(scale_by_adamax, scale_by_learning_rate)``.
    """
    return chain(scale_by_adamax(b1=b1, b2=b2, eps=eps), scale_by_learning_rate(learning_rate))


def adamaxw(learning_rate: ScalarOrSchedule, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
            weight_decay: ScalarOrSchedule = 1e-4,
            mask: MaskOrFn = None) -> GradientTransformationExtraArgs:
    """Adamax with decoupled weight decay.

    Args:
      learning_rate: a float or a schedule.
      b1: decay rate of the first moment.
      b2: decay rate of the infinity norm.
      eps: added to ``|g|``.
      weight_decay: the weight decay, a float or a schedule.
      mask: where to decay (a pytree of booleans or a callable returning one).

    Returns:
      ``chain(scale_by_adamax, add_decayed_weights, scale_by_learning_rate)``.
    """
    return chain(scale_by_adamax(b1=b1, b2=b2, eps=eps),
                 add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


def amsgrad(learning_rate: ScalarOrSchedule, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
            eps_root: Any = 0.0, mu_dtype: Optional[Any] = None,
            bias_correction_mu: bool = True,
            bias_correction_nu: bool = True) -> GradientTransformationExtraArgs:
    """AMSGrad.

    Args:
      learning_rate: a float or a schedule.
      b1, b2, eps, eps_root, mu_dtype, bias_correction_mu, bias_correction_nu: as
        :func:`scale_by_amsgrad`.

    Returns:
      ``chain(scale_by_amsgrad, scale_by_learning_rate)``.
    """
    return chain(scale_by_amsgrad(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                                  bias_correction_mu=bias_correction_mu,
                                  bias_correction_nu=bias_correction_nu),
                 scale_by_learning_rate(learning_rate))


def adagrad(learning_rate: ScalarOrSchedule, initial_accumulator_value: Any = 0.1,
            eps: Any = 1e-7) -> GradientTransformationExtraArgs:
    """Adagrad.

    Args:
      learning_rate: a float or a schedule.
      initial_accumulator_value: the starting sum of squares.
      eps: added inside the square root.

    Returns:
      ``chain(scale_by_rss, scale_by_learning_rate)``.
    """
    return chain(scale_by_rss(initial_accumulator_value=initial_accumulator_value, eps=eps),
                 scale_by_learning_rate(learning_rate))


def rmsprop(learning_rate: ScalarOrSchedule, decay: Any = 0.9, eps: Any = 1e-8,
            initial_scale: Any = 0.0, eps_in_sqrt: bool = True, centered: bool = False,
            momentum: Optional[Any] = None, nesterov: bool = False,
            bias_correction: bool = False) -> GradientTransformationExtraArgs:
    """RMSProp, optionally centered and with (Nesterov) momentum.

    Args:
      learning_rate: a float or a schedule.
      decay: decay rate of the squared-gradient average.
      eps: the small constant of the denominator.
      initial_scale: the starting average.
      eps_in_sqrt: put ``eps`` inside the square root.
      centered: divide by the standard deviation rather than the RMS.
      momentum: the momentum decay, or None for none.
      nesterov: use Nesterov momentum.
      bias_correction: bias-correct the averages.

    Returns:
      ``chain(scale_by_rms or scale_by_stddev, scale_by_learning_rate, trace or identity)``.
    """
    scaler = scale_by_stddev if centered else scale_by_rms
    return chain(scaler(decay=decay, eps=eps, initial_scale=initial_scale,
                        eps_in_sqrt=eps_in_sqrt, bias_correction=bias_correction),
                 scale_by_learning_rate(learning_rate),
                 trace(decay=momentum, nesterov=nesterov) if momentum is not None
                 else identity())


def lion(learning_rate: ScalarOrSchedule, b1: Any = 0.9, b2: Any = 0.99,
         mu_dtype: Optional[Any] = None, weight_decay: ScalarOrSchedule = 1e-3,
         mask: MaskOrFn = None) -> GradientTransformationExtraArgs:
    """Lion (evolved sign momentum), with decoupled weight decay.

    Args:
      learning_rate: a float or a schedule.
      b1: interpolation rate of the update direction.
      b2: decay rate of the momentum.
      mu_dtype: dtype of the momentum (None: the params').
      weight_decay: the weight decay, a float or a schedule.
      mask: where to decay (a pytree of booleans or a callable returning one).

    Returns:
      ``chain(scale_by_lion, add_decayed_weights, scale_by_learning_rate)``.
    """
    return chain(scale_by_lion(b1=b1, b2=b2, mu_dtype=mu_dtype),
                 add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))
