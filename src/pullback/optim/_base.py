"""The gradient-transformation interface (optax's ``base``, ``combine`` and ``update``).

An optimizer is a pair of pure functions, ``init(params) -> state`` and
``update(updates, state, params=None) -> (updates, state)``, with every bit of history in the
state pytree, so a whole training step (loss, gradient, optimizer update, parameter update)
traces into one ``jit`` program.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Protocol, Union

from .. import lax
from .. import numpy as jnp
from .. import tree_util

PyTree = Any
Params = Any       # a pytree of arrays
Updates = Any      # a pytree of arrays with the structure of the params
OptState = Any     # a pytree of arrays (often NamedTuples)
Schedule = Callable[[Any], Any]
ScalarOrSchedule = Union[float, Any, Schedule]

NO_PARAMS_MSG = ("You are using a transformation that requires the current value of "
                 "parameters, but you are not passing `params` when calling `update`.")


class TransformInitFn(Protocol):
    """``init(params) -> state``: the initial state of a gradient transformation."""

    def __call__(self, params: Params) -> OptState: ...


class TransformUpdateFn(Protocol):
    """``update(updates, state, params=None) -> (updates, state)``."""

    def __call__(self, updates: Updates, state: OptState,
                 params: Optional[Params] = None) -> tuple[Updates, OptState]: ...


class TransformUpdateExtraArgsFn(Protocol):
    """``update(updates, state, params=None, **extra_args) -> (updates, state)``."""

    def __call__(self, updates: Updates, state: OptState, params: Optional[Params] = None,
                 **extra_args: Any) -> tuple[Updates, OptState]: ...


class GradientTransformation(NamedTuple):
    """A pair of pure functions ``(init, update)`` transforming gradients.

    Attributes:
      init: ``init(params) -> state``.
      update: ``update(updates, state, params=None) -> (new_updates, new_state)``.
    """
    init: TransformInitFn
    update: TransformUpdateFn


class GradientTransformationExtraArgs(GradientTransformation):
    """A :class:`GradientTransformation` whose ``update`` also takes keyword ``extra_args``
    (those it does not use it ignores)."""
    update: TransformUpdateExtraArgsFn


class EmptyState(NamedTuple):
    """The state of a stateless transformation."""


def init_empty_state(params: Params) -> EmptyState:
    """``init`` of a stateless transformation."""
    del params
    return EmptyState()


def identity() -> GradientTransformation:
    """Leaves the updates as they are.

    Returns:
      A :class:`GradientTransformation`.
    """
    def update_fn(updates, state, params=None):
        return updates, state
    return GradientTransformation(init_empty_state, update_fn)


def set_to_zero() -> GradientTransformation:
    """Maps every update to zeros, so the parameters it is applied to stay as they are
    (freezing them, e.g. inside :func:`masked` or :func:`multi_transform`).

    Returns:
      A :class:`GradientTransformation`.
    """
    def update_fn(updates, state, params=None):
        return tree_util.tree_map(jnp.zeros_like, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def stateless(f: Callable[[Updates, Optional[Params]], Updates]) -> GradientTransformation:
    """A stateless transformation from ``f(updates, params) -> updates`` (params may be None).

    Args:
      f: the update function on whole trees.

    Returns:
      A :class:`GradientTransformation`.
    """
    def update_fn(updates, state, params=None):
        return f(updates, params), EmptyState()
    return GradientTransformation(init_empty_state, update_fn)


def stateless_with_tree_map(f: Callable[[Any, Any], Any]) -> GradientTransformation:
    """A stateless transformation from ``f(update, param) -> update`` on single arrays,
    mapped over the trees (``param`` is None when ``update`` gets no params).

    Args:
      f: the update function on one array.

    Returns:
      A :class:`GradientTransformation`.
    """
    def update_fn(updates, state, params=None):
        if params is None:
            return tree_util.tree_map(lambda u: f(u, None), updates), EmptyState()
        return tree_util.tree_map(f, updates, params), EmptyState()
    return GradientTransformation(init_empty_state, update_fn)


def with_extra_args_support(tx: GradientTransformation) -> GradientTransformationExtraArgs:
    """Wraps ``tx`` so that its ``update`` accepts (and ignores) extra keyword arguments.

    Args:
      tx: a gradient transformation.

    Returns:
      ``tx`` itself if it already takes extra args, else a wrapper that drops them.
    """
    if isinstance(tx, GradientTransformationExtraArgs):
        return tx

    def update_fn(updates, state, params=None, **extra_args):
        return tx.update(updates, state, params)
    return GradientTransformationExtraArgs(tx.init, update_fn)


def chain(*args: GradientTransformation) -> GradientTransformationExtraArgs:
    """Applies the transformations one after the other; the state is the tuple of their
    states.

    Args:
      *args: the transformations, in the order they apply.

    Returns:
      A :class:`GradientTransformationExtraArgs`; extra args reach every transformation
      that takes them.
    """
    transforms = [with_extra_args_support(t) for t in args]

    def init_fn(params):
        return tuple(t.init(params) for t in transforms)

    def update_fn(updates, state, params=None, **extra_args):
        if len(state) != len(transforms):
            raise ValueError(
                f"chain: the state holds {len(state)} entries for {len(transforms)} "
                "transformations; initialize it with this chain's init")
        new_state = []
        for t, s in zip(transforms, state):
            updates, s = t.update(updates, s, params, **extra_args)
            new_state.append(s)
        return updates, tuple(new_state)
    return GradientTransformationExtraArgs(init_fn, update_fn)


def named_chain(*args: tuple[str, GradientTransformation]) -> GradientTransformationExtraArgs:
    """Like :func:`chain`, with the state a dict keyed by the given names.

    Args:
      *args: ``(name, transformation)`` pairs, in the order they apply.

    Returns:
      A :class:`GradientTransformationExtraArgs`.
    """
    names = [name for name, _ in args]
    transforms = [with_extra_args_support(t) for _, t in args]

    def init_fn(params):
        return {n: t.init(params) for n, t in zip(names, transforms)}

    def update_fn(updates, state, params=None, **extra_args):
        new_state = {}
        for n, t in zip(names, transforms):
            updates, new_state[n] = t.update(updates, state[n], params, **extra_args)
        return updates, new_state
    return GradientTransformationExtraArgs(init_fn, update_fn)


def _is_none(x: Any) -> bool:
    return x is None


def apply_updates(params: Params, updates: Updates) -> Params:
    """``params + updates`` leaf by leaf, each result in its parameter's dtype (None leaves
    stay None).

    Args:
      params: a tree of parameters.
      updates: a tree of updates with the same structure and shapes.

    Returns:
      The updated parameters.
    """
    return tree_util.tree_map(
        lambda p, u: None if p is None else jnp.asarray(p + u).astype(jnp.asarray(p).dtype),
        params, updates, is_leaf=_is_none)


def incremental_update(new_tensors: Params, old_tensors: Params, step_size: Any) -> Params:
    """Polyak averaging: ``step_size * new + (1 - step_size) * old`` leaf by leaf.

    Args:
      new_tensors: the latest values.
      old_tensors: the moving average so far.
      step_size: the weight of the new values.

    Returns:
      The new moving average.
    """
    return tree_util.tree_map(
        lambda new, old: None if new is None else step_size * new + (1.0 - step_size) * old,
        new_tensors, old_tensors, is_leaf=_is_none)


def periodic_update(new_tensors: Params, old_tensors: Params, steps: Any,
                    update_period: Any) -> Params:
    """``new_tensors`` every ``update_period`` steps, else ``old_tensors``.

    Args:
      new_tensors: the latest values.
      old_tensors: the values kept between updates.
      steps: the current step (an integer scalar, possibly traced).
      update_period: how many steps between updates.

    Returns:
      The tensors to use at this step.
    """
    return lax.cond(steps % update_period == 0, lambda _: new_tensors, lambda _: old_tensors,
                    None)
