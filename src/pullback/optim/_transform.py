"""The elementary gradient transformations (optax's ``scale``, ``scale_by_learning_rate``,
``scale_by_schedule``, ``add_decayed_weights``, ``masked``, ``trace`` and ``ema``)."""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Union

from .. import numpy as jnp
from .. import tree_util
from ._base import (NO_PARAMS_MSG, EmptyState, GradientTransformation,
                    GradientTransformationExtraArgs, Params, Schedule, ScalarOrSchedule,
                    identity, init_empty_state, with_extra_args_support)
from ._numerics import safe_increment
from .tree_utils import (_ParamsPlaceholder, canonicalize_dtype, tree_bias_correction,
                         tree_cast, tree_update_moment, tree_zeros_like)

_tmap = tree_util.tree_map
MaskOrFn = Optional[Union[Any, Callable[[Params], Any]]]


def _is_none(x: Any) -> bool:
    return x is None


def _zero_count() -> Any:
    return jnp.zeros([], jnp.int32)


# ---------------------------------------------------------------------------
# Scaling.
# ---------------------------------------------------------------------------

def scale(step_size: Any) -> GradientTransformation:
    """Multiplies every update by ``step_size``.

    Args:
      step_size: a scalar.

    Returns:
      A :class:`GradientTransformation` with an :class:`EmptyState`.
    """
    def update_fn(updates, state, params=None):
        return _tmap(lambda g: step_size * g, updates), state
    return GradientTransformation(init_empty_state, update_fn)


class ScaleByScheduleState(NamedTuple):
    """The state of :func:`scale_by_schedule`: the number of updates so far."""
    count: Any  # int32 scalar


def scale_by_schedule(step_size_fn: Schedule) -> GradientTransformation:
    """Multiplies the updates by ``step_size_fn(count)``, ``count`` the number of updates
    made so far (0 at the first).

    Args:
      step_size_fn: a schedule, ``count -> scalar``.

    Returns:
      A :class:`GradientTransformation` with a :class:`ScaleByScheduleState`.
    """
    if not callable(step_size_fn):
        raise TypeError("scale_by_schedule: argument step_size_fn must be callable "
                        f"(count -> step size), got {type(step_size_fn).__name__}")

    def init_fn(params):
        return ScaleByScheduleState(count=_zero_count())

    def update_fn(updates, state, params=None):
        step_size = step_size_fn(state.count)
        updates = _tmap(lambda g: jnp.array(step_size, dtype=g.dtype) * g, updates)
        return updates, ScaleByScheduleState(count=safe_increment(state.count))
    return GradientTransformation(init_fn, update_fn)


def scale_by_learning_rate(learning_rate: Optional[ScalarOrSchedule] = None, *,
                           flip_sign: bool = True) -> GradientTransformation:
    """Scales the updates by the learning rate, negated by default (gradient descent).

    Args:
      learning_rate: a scalar, a schedule ``count -> scalar``, or None (no scaling).
      flip_sign: multiply by ``-learning_rate`` (True) or ``learning_rate``.

    Returns:
      :func:`scale` for a scalar, :func:`scale_by_schedule` for a schedule,
      :func:`identity` for None.
    """
    if learning_rate is None:
        return identity()
    m = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: m * learning_rate(count))
    return scale(m * learning_rate)


# ---------------------------------------------------------------------------
# Masking.
# ---------------------------------------------------------------------------

class MaskedState(NamedTuple):
    """The state of :func:`masked`: the inner transformation's state."""
    inner_state: Any


class MaskedNode(NamedTuple):
    """Stands for a masked-out leaf (or subtree) in the trees the inner transformation of
    :func:`masked` sees: an empty pytree node, so it holds no state."""


def _mask_callable(mask: Any) -> bool:
    callable_leaves = tree_util.tree_leaves(_tmap(callable, mask))
    return len(callable_leaves) > 0 and all(callable_leaves)


def masked(inner: GradientTransformation, mask: MaskOrFn, *,
           mask_compatible_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """Applies ``inner`` only to the leaves (or subtrees) where ``mask`` is True; the
    other updates pass through unchanged, and ``inner`` keeps no state for them.

    Args:
      inner: the transformation to apply.
      mask: a pytree of booleans with the structure of (or a prefix of) the params, or a
        callable ``params -> such a pytree``.
      mask_compatible_extra_args: also mask the extra keyword arguments whose tree
        structure is that of the updates.

    Returns:
      A :class:`GradientTransformationExtraArgs` with a :class:`MaskedState`.
    """
    inner = with_extra_args_support(inner)

    def mask_pytree(pytree, mask_tree):
        try:
            return _tmap(lambda m, p: p if m else MaskedNode(), mask_tree, pytree)
        except ValueError as e:
            raise ValueError("masked: argument mask must be a pytree of booleans with the "
                             "structure of the params/updates or a prefix of it (or a "
                             f"callable returning one); {e}") from None

    def maybe_mask_values(extra, base_tree, mask_tree):
        base_structure = tree_util.tree_structure(base_tree)

        def maybe(v):
            if (mask_compatible_extra_args
                    and tree_util.tree_structure(v) == base_structure):
                return mask_pytree(v, mask_tree)
            return v
        return {k: maybe(v) for k, v in extra.items()}

    def init_fn(params):
        # tree_map_params runs init on a placeholder: there is no tree to mask
        if isinstance(params, _ParamsPlaceholder):
            return MaskedState(inner_state=inner.init(params))
        mask_tree = mask(params) if _mask_callable(mask) else mask
        return MaskedState(inner_state=inner.init(mask_pytree(params, mask_tree)))

    def update_fn(updates, state, params=None, **extra_args):
        mask_tree = mask(updates) if _mask_callable(mask) else mask
        masked_extra = maybe_mask_values(extra_args, updates, mask_tree)
        masked_updates = mask_pytree(updates, mask_tree)
        masked_params = None if params is None else mask_pytree(params, mask_tree)
        new_masked, new_inner = inner.update(masked_updates, state.inner_state,
                                             masked_params, **masked_extra)
        new_updates = _tmap(lambda m, new_u, old_u: new_u if m else old_u,
                            mask_tree, new_masked, updates)
        return new_updates, MaskedState(inner_state=new_inner)
    return GradientTransformationExtraArgs(init_fn, update_fn)


# ---------------------------------------------------------------------------
# Weight decay.
# ---------------------------------------------------------------------------

class WeightDecaySchedule(NamedTuple):
    """The state of :func:`add_decayed_weights` with a scheduled weight decay."""
    count: Any  # int32 scalar


def add_decayed_weights(weight_decay: ScalarOrSchedule = 0.0,
                        mask: MaskOrFn = None) -> GradientTransformation:
    """Adds ``weight_decay * params`` to the updates (decoupled weight decay, as AdamW).

    Args:
      weight_decay: a scalar or a schedule ``count -> scalar``.
      mask: where to apply it: a pytree of booleans shaped like (a prefix of) the params,
        or a callable returning one; None applies it everywhere.

    Returns:
      A :class:`GradientTransformation`; its state is an :class:`EmptyState` (a
      :class:`WeightDecaySchedule` for a schedule), wrapped in a :class:`MaskedState`
      when ``mask`` is given.
    """
    def init_fn(params):
        if callable(weight_decay):
            return WeightDecaySchedule(count=_zero_count())
        return EmptyState()

    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError(NO_PARAMS_MSG)
        new_state = (WeightDecaySchedule(safe_increment(state.count))
                     if callable(weight_decay) else state)
        if isinstance(weight_decay, (int, float)) and weight_decay == 0.0:
            return updates, new_state
        s = weight_decay(state.count) if callable(weight_decay) else weight_decay
        updates = _tmap(lambda g, p: None if g is None else g + s * p, updates, params,
                        is_leaf=_is_none)
        return updates, new_state

    tx = GradientTransformation(init_fn, update_fn)
    return masked(tx, mask) if mask is not None else tx


# ---------------------------------------------------------------------------
# Accumulation.
# ---------------------------------------------------------------------------

class TraceState(NamedTuple):
    """The state of :func:`trace`: the momentum buffer."""
    trace: Params


def trace(decay: Any, nesterov: bool = False,
          accumulator_dtype: Optional[Any] = None) -> GradientTransformation:
    """Momentum: ``t = g + decay * t``; the update is ``t`` (or ``g + decay * t`` with
    Nesterov).

    Args:
      decay: the momentum coefficient.
      nesterov: use Nesterov momentum.
      accumulator_dtype: the dtype of the buffer (None: the params').

    Returns:
      A :class:`GradientTransformation` with a :class:`TraceState`.
    """
    accumulator_dtype = canonicalize_dtype(accumulator_dtype)

    def init_fn(params):
        return TraceState(trace=tree_zeros_like(params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        def f(g, t):
            return g + decay * t
        new_trace = _tmap(lambda g, t: None if g is None else f(g, t), updates, state.trace,
                          is_leaf=_is_none)
        updates = _tmap(f, updates, new_trace) if nesterov else new_trace
        return updates, TraceState(trace=tree_cast(new_trace, accumulator_dtype))
    return GradientTransformation(init_fn, update_fn)


class EmaState(NamedTuple):
    """The state of :func:`ema`: the step count and the moving average."""
    count: Any  # int32 scalar
    ema: Params


def ema(decay: Any, debias: bool = True,
        accumulator_dtype: Optional[Any] = None) -> GradientTransformation:
    """The exponential moving average of the updates, ``e = (1 - decay) * g + decay * e``,
    returned bias-corrected unless ``debias`` is False.

    Args:
      decay: the decay rate.
      debias: divide by ``1 - decay**count``.
      accumulator_dtype: the dtype of the average (None: the params').

    Returns:
      A :class:`GradientTransformation` with an :class:`EmaState`.
    """
    accumulator_dtype = canonicalize_dtype(accumulator_dtype)

    def init_fn(params):
        return EmaState(count=_zero_count(),
                        ema=tree_zeros_like(params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        updates = new_ema = tree_update_moment(updates, state.ema, decay, order=1)
        count_inc = safe_increment(state.count)
        if debias:
            updates = tree_bias_correction(new_ema, decay, count_inc)
        return updates, EmaState(count=count_inc, ema=tree_cast(new_ema, accumulator_dtype))
    return GradientTransformation(init_fn, update_fn)
