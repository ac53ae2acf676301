"""``pullback.ad_checkpoint``: rematerialization, as ``jax.ad_checkpoint``."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .tracer import core, pytree
from .tracer.avals import ShapedArray
from .transforms.control_flow.policies import checkpoint_name, checkpoint_policies  # noqa: F401
from .transforms.control_flow.remat import checkpoint, remat  # noqa: F401
from .transforms.jit import leaf_names
from .transforms.reverse import _as_array, linearize_flat

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies", "saved_residuals",
           "print_saved_residuals"]


def saved_residuals(f: Callable, *args: Any, **kwargs: Any) -> list[tuple[ShapedArray, str]]:
    """The values reverse-mode differentiation of ``f`` at ``args`` keeps for the backward
    pass: ``(aval, description)`` pairs, the description naming the argument a residual is,
    if it is one.

    Args:
      f: the function.
      *args, **kwargs: its arguments.

    Returns:
      One ``(ShapedArray, str)`` per residual.
    """
    leaves, tree = pytree.tree_flatten((args, kwargs))
    leaves = [_as_array(x) for x in leaves]
    names = leaf_names(f, args, kwargs)

    def flat(*ls: Any) -> Any:
        a, kw = pytree.tree_unflatten(tree, ls)
        return f(*a, **kw)

    _, _, closed, _, _, _ = linearize_flat(flat, leaves)
    where = {id(x): n for x, n in zip(leaves, names)}

    def describe(c: Any) -> str:
        if id(c) in where:
            return f"from the {where[id(c)]}"
        for x, n in zip(leaves, names):  # zero-copy views (slices, reshapes) of an argument
            if hasattr(c, "_value") and hasattr(x, "_value") and \
                    np.may_share_memory(c._value, x._value):
                return f"a view of the {n}"
        return "computed in the forward pass"

    return [(core.get_aval(c), describe(c)) for c in closed.consts]


def print_saved_residuals(f: Callable, *args: Any, **kwargs: Any) -> None:
    """Print :func:`saved_residuals`, one per line."""
    for aval, desc in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {desc}")
