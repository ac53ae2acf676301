"""Adafactor: the factored second-moment rescaling (optax's ``scale_by_factored_rms``) and the
``adafactor`` alias, composed as optax 0.2.8 composes it.

A parameter of rank >= 2 whose two largest dimensions both reach ``min_dim_size_to_factor``
keeps, instead of a full second moment, one row and one column statistic (the means of the
squared gradient over either of those two axes); others keep a full moment ``v``. Unused slots
hold a ``(1,)`` zero array, so the state trees have the params' structure throughout.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from .. import numpy as jnp
from .. import tree_util
from ._adaptive import scale_by_param_block_rms
from ._base import (NO_PARAMS_MSG, GradientTransformation, GradientTransformationExtraArgs,
                    ScalarOrSchedule, chain)
from ._clipping import clip_by_block_rms
from ._numerics import abs_sq, safe_increment
from ._transform import MaskOrFn, add_decayed_weights, ema, scale, scale_by_learning_rate


def _decay_rate_pow(i: Any, exponent: float = 0.8) -> Any:
    """Adafactor's second-moment decay at step ``i``: ``1 - (i + 1) ** -exponent``."""
    t = jnp.array(i + 1, jnp.float32)
    return 1.0 - t ** (-exponent)


def _factored_dims(shape: tuple[int, ...], factored: bool,
                   min_dim_size_to_factor: int) -> Optional[tuple[int, int]]:
    """The axes ``(second largest, largest)`` to factor a parameter of this shape over, or
    None when it keeps a full second moment. Static: decided from the shape alone."""
    if not factored or len(shape) < 2:
        return None
    # np.argsort exactly as optax calls it, so ties between equal dims pick the same axes
    order = np.argsort(shape)
    if shape[order[-2]] < min_dim_size_to_factor:
        return None
    return int(order[-2]), int(order[-1])


def _zeros_without_axis(x: Any, axis: int) -> Any:
    shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
    return jnp.zeros(shape, dtype=x.dtype)


class _Slots:
    """One leaf's results (update, v_row, v_col, v), kept opaque to ``tree_map`` (not a
    pytree node) so the four trees can be pulled apart afterwards."""
    __slots__ = ("update", "v_row", "v_col", "v")

    def __init__(self, update: Any, v_row: Any, v_col: Any, v: Any) -> None:
        self.update, self.v_row, self.v_col, self.v = update, v_row, v_col, v


class FactoredState(NamedTuple):
    """The state of :func:`scale_by_factored_rms`."""
    count: Any   # int32 scalar: the number of updates so far
    v_row: Any   # per factored leaf, the row statistics (the largest axis reduced); else (1,)
    v_col: Any   # per factored leaf, the column statistics; else (1,)
    v: Any       # per unfactored leaf, the full second moment; else (1,)


def scale_by_factored_rms(factored: bool = True, decay_rate: float = 0.8,
                          step_offset: int = 0, min_dim_size_to_factor: int = 128,
                          epsilon: float = 1e-30,
                          decay_rate_fn: Callable[[Any, Any], Any] = _decay_rate_pow
                          ) -> GradientTransformation:
    """Rescales updates by a factored estimate of the gradients' root mean square, as
    Adafactor does (Shazeer & Stern, 2018).

    Args:
      factored: factor the second moment of parameters of rank >= 2.
      decay_rate: the parameter of ``decay_rate_fn`` (by default the exponent of the
        ``1 - (t + 1) ** -decay_rate`` schedule).
      step_offset: subtracted from the step count before the decay schedule (for
        fine-tuning from a given step).
      min_dim_size_to_factor: factor only when the two largest dimensions are at least this.
      epsilon: added to the squared gradients.
      decay_rate_fn: ``(step, decay_rate) -> decay`` of the second-moment EMA.

    Returns:
      A :class:`GradientTransformation` with state :class:`FactoredState`; its ``update``
      needs ``params``.
    """
    def to_state(count, slots):
        return FactoredState(count=count,
                             v_row=tree_util.tree_map(lambda o: o.v_row, slots),
                             v_col=tree_util.tree_map(lambda o: o.v_col, slots),
                             v=tree_util.tree_map(lambda o: o.v, slots))

    def init_leaf(param):
        dtype = param.dtype
        dims = _factored_dims(param.shape, factored, min_dim_size_to_factor)
        unused = jnp.zeros((1,), dtype=dtype)
        if dims is not None:
            d1, d0 = dims
            return _Slots(unused, _zeros_without_axis(param, d0),
                          _zeros_without_axis(param, d1), jnp.zeros((1,), dtype=dtype))
        return _Slots(unused, jnp.zeros((1,), dtype=dtype), jnp.zeros((1,), dtype=dtype),
                      jnp.zeros_like(param))

    def init_fn(params):
        return to_state(jnp.zeros([], jnp.int32), tree_util.tree_map(init_leaf, params))

    def update_leaf(grad, v_row, v_col, v, param, step):
        dtype = param.dtype
        decay_t = decay_rate_fn(step - step_offset, decay_rate)
        new_v_row = jnp.zeros((1,), dtype=dtype)
        new_v_col = jnp.zeros((1,), dtype=dtype)
        new_v = jnp.zeros((1,), dtype=dtype)
        dims = _factored_dims(param.shape, factored, min_dim_size_to_factor)
        grad_sqr = abs_sq(grad) + epsilon
        if dims is not None:
            d1, d0 = dims
            new_v_row = (decay_t * v_row
                         + (1.0 - decay_t) * jnp.mean(grad_sqr, axis=d0)).astype(dtype)
            new_v_col = (decay_t * v_col
                         + (1.0 - decay_t) * jnp.mean(grad_sqr, axis=d1)).astype(dtype)
            # d1's position in v_row, whose axis d0 is gone
            reduced_d1 = d1 - 1 if d1 > d0 else d1
            row_col_mean = jnp.mean(new_v_row, axis=reduced_d1, keepdims=True)
            row_factor = (new_v_row / row_col_mean) ** -0.5
            col_factor = new_v_col ** -0.5
            update = (grad * jnp.expand_dims(row_factor, axis=d0)
                      * jnp.expand_dims(col_factor, axis=d1))
        else:
            new_v = (decay_t * v + (1.0 - decay_t) * grad_sqr).astype(dtype)
            update = grad * new_v ** -0.5
        return _Slots(update, new_v_row, new_v_col, new_v)

    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError(f"scale_by_factored_rms: {NO_PARAMS_MSG}")
        slots = tree_util.tree_map(lambda *a: update_leaf(*a, state.count), updates,
                                   state.v_row, state.v_col, state.v, params)
        new_updates = tree_util.tree_map(lambda o: o.update, slots)
        return new_updates, to_state(safe_increment(state.count), slots)
    return GradientTransformation(init_fn, update_fn)


def adafactor(learning_rate: Optional[ScalarOrSchedule] = None,
              min_dim_size_to_factor: int = 128, decay_rate: float = 0.8,
              decay_offset: int = 0, multiply_by_parameter_scale: bool = True,
              clipping_threshold: Optional[float] = 1.0, momentum: Optional[float] = None,
              dtype_momentum: Any = jnp.float32,
              weight_decay_rate: Optional[ScalarOrSchedule] = None, eps: float = 1e-30,
              factored: bool = True, weight_decay_mask: MaskOrFn = None
              ) -> GradientTransformationExtraArgs:
    """The Adafactor optimizer: :func:`scale_by_factored_rms`, then optionally block-RMS
    clipping, the learning rate, scaling by the parameters' RMS, momentum and weight decay,
    and finally a sign flip (descent).

    Args:
      learning_rate: a float, a schedule ``step -> learning rate``, or None (no scaling:
        typically with ``multiply_by_parameter_scale``).
      min_dim_size_to_factor: factor only when the two largest dimensions are at least this.
      decay_rate: the exponent of the second-moment decay schedule.
      decay_offset: the step offset of that schedule (for fine-tuning).
      multiply_by_parameter_scale: scale each leaf's update by its parameter's RMS.
      clipping_threshold: clip each leaf's update to this RMS (None: no clipping).
      momentum: the decay of an (undebiased) EMA of the updates (None: no momentum).
      dtype_momentum: the dtype of that EMA.
      weight_decay_rate: the weight-decay rate (None: no weight decay).
      eps: added to the squared gradients.
      factored: factor the second moments (False: a full second moment for every leaf).
      weight_decay_mask: chooses the leaves that get weight decay.

    Returns:
      A :class:`GradientTransformationExtraArgs`; its ``update`` needs ``params``.
    """
    txs = [scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor,
                                 eps)]
    if clipping_threshold is not None:
        txs.append(clip_by_block_rms(clipping_threshold))
    if learning_rate is not None:
        txs.append(scale_by_learning_rate(learning_rate, flip_sign=False))
    if multiply_by_parameter_scale:
        txs.append(scale_by_param_block_rms())
    if momentum is not None:
        txs.append(ema(momentum, debias=False, accumulator_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        txs.append(add_decayed_weights(weight_decay_rate, mask=weight_decay_mask))
    txs.append(scale(-1))  # descent: follow the negative of the rescaled gradient
    return chain(*txs)
