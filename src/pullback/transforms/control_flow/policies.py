"""Rematerialization policies (``jax.checkpoint_policies``) and ``checkpoint_name``.

A policy is called as ``policy(prim, *avals, **params)`` for each equation of a checkpointed
function and returns whether that equation's outputs may be saved for the backward pass
(instead of being recomputed).
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable

from ...primitives.rules import linear_jvp, linear_transpose
from ...tracer import pytree
from ...tracer.core import Primitive

# ---- naming values: an identity primitive that policies can see ----

name_p = Primitive("name")
name_p.abstract_eval = lambda x, *, name: x
name_p.cpu = lambda k, x, *, name: x  # an identity: the same buffer
name_p.reference = lambda x, *, name: x
name_p.jvp = linear_jvp(name_p)
name_p.transpose = linear_transpose(lambda ct, x, *, name: [ct])
name_p.batch = lambda vals, dims, *, name: (name_p.bind(vals[0], name=name), dims[0])


def checkpoint_name(x: Any, name: str) -> Any:
    """Tag every array of ``x`` with ``name``, for ``save_only_these_names`` and friends.

    Args:
      x: an array or pytree of arrays.
      name: the name.

    Returns:
      ``x`` unchanged.
    """
    return pytree.tree_map(lambda v: name_p.bind(v, name=name), x)


# ---- policies ----

def everything_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Save everything (no recomputation)."""
    return True


def nothing_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Save nothing but the checkpointed function's inputs (the default)."""
    return False


def dots_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Save the results of matrix products (``dot_general``)."""
    return prim.name == "dot_general"


def dots_with_no_batch_dims_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Save the results of matrix products without batch dimensions."""
    if prim.name != "dot_general":
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


def save_only_these_names(*names: str) -> Callable:
    """Save only values tagged by ``checkpoint_name`` with one of ``names``."""
    wanted = frozenset(names)

    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in wanted
    return policy


def save_any_names_but_these(*names: str) -> Callable:
    """Save every value tagged by ``checkpoint_name`` except those with one of ``names``."""
    unwanted = frozenset(names)

    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in unwanted
    return policy


def save_from_both_policies(policy_1: Callable, policy_2: Callable) -> Callable:
    """Save what either policy saves."""
    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        return policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)
    return policy


checkpoint_policies = SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_from_both_policies=save_from_both_policies,
)
