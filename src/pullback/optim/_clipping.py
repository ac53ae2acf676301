"""Clipping and numerics transformations (optax's ``clip``, ``clip_by_global_norm``,
``clip_by_block_rms``, ``global_norm`` and ``zero_nans``)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import lax
from .. import numpy as jnp
from .. import tree_util
from ._base import GradientTransformation, init_empty_state


def _abs_sq(x: Any) -> Any:
    # |x|^2, real for complex x too
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        return jnp.square(x.real) + jnp.square(x.imag)
    return jnp.square(x)


def global_norm(updates: Any) -> Any:
    """The L2 norm of all the leaves of a pytree taken together.

    Args:
      updates: a pytree of arrays.

    Returns:
      ``sqrt(sum of |x|^2 over every element of every leaf)``, a scalar array.
    """
    total = 0
    for leaf in tree_util.tree_leaves(updates):
        total = total + jnp.sum(_abs_sq(leaf))
    return jnp.asarray(jnp.sqrt(total))


def clip(max_delta: Any) -> GradientTransformation:
    """Clips every update element to ``[-max_delta, max_delta]``.

    Args:
      max_delta: the largest absolute value of an update element.

    Returns:
      A :class:`GradientTransformation` (stateless).
    """
    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(lambda u: jnp.clip(u, -max_delta, max_delta), updates), state
    return GradientTransformation(init_empty_state, update_fn)


def clip_by_block_rms(threshold: Any) -> GradientTransformation:
    """Scales each leaf down so that its root mean square is at most ``threshold``.

    Args:
      threshold: the largest RMS of each leaf ("block") of the updates.

    Returns:
      A :class:`GradientTransformation` (stateless).
    """
    def scale_leaf(u):
        denom = jnp.maximum(1.0, jnp.sqrt(jnp.mean(_abs_sq(u))) / threshold)
        return u / denom

    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(scale_leaf, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def clip_by_global_norm(max_norm: Any) -> GradientTransformation:
    """Scales the updates by ``max_norm / global_norm(updates)`` when their global norm is
    at least ``max_norm``.

    Args:
      max_norm: the largest global norm of the updates.

    Returns:
      A :class:`GradientTransformation` (stateless).
    """
    def update_fn(updates, state, params=None):
        del params
        g_norm = global_norm(updates)
        trigger = jnp.squeeze(g_norm < max_norm)
        if np.ndim(trigger) != 0:
            raise ValueError("clip_by_global_norm: max_norm must be a scalar, got shape "
                             f"{np.shape(max_norm)}")

        def clip_leaf(t):
            return lax.select(trigger, t, (t / g_norm.astype(t.dtype)) * max_norm)
        return tree_util.tree_map(clip_leaf, updates), state
    return GradientTransformation(init_empty_state, update_fn)


class ZeroNansState(NamedTuple):
    """The state of :func:`zero_nans`.

    Attributes:
      found_nan: a tree like the params with a boolean scalar per leaf, True if the last
        update of that leaf held a NaN.
    """
    found_nan: Any


def zero_nans() -> GradientTransformation:
    """Replaces NaNs in the updates with zeros, recording in the state which leaves had any.

    Returns:
      A :class:`GradientTransformation` whose state is a :class:`ZeroNansState`.
    """
    def init_fn(params):
        return ZeroNansState(
            found_nan=tree_util.tree_map(lambda p: jnp.array(False, dtype=jnp.bool_), params))

    def update_fn(updates, state, params=None):
        del params, state
        found = tree_util.tree_map(lambda u: jnp.any(jnp.isnan(u)), updates)
        updates = tree_util.tree_map(lambda u: jnp.where(jnp.isnan(u), jnp.zeros_like(u), u),
                                     updates)
        return updates, ZeroNansState(found_nan=found)
    return GradientTransformation(init_fn, update_fn)
