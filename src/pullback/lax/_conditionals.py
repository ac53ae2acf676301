"""Conditionals: ``cond`` and ``switch``, with jax.lax's signatures.

Both trace every branch (so their output types are checked against each other) and bind one
``cond`` primitive; under ``vmap`` a batched predicate evaluates every branch and selects per
element, as in JAX.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..config import config
from ..tracer import core, dtypes, pytree
from ..tracer.ir import ClosedJaxpr, Jaxpr, Var
from ..transforms.control_flow.cond import cond_p
from ..transforms.array_ops import as_operands, asarray
from ..transforms.control_flow.tracing import (check_scalar_predicate, leaf_paths, trace_callback,
                                               type_str)
from ._conversion import convert_element_type
from ._elementwise import clamp, ne

__all__ = ["cond", "switch"]


def _branches(name: str, funs: Sequence[Callable], operands: tuple, labels: Sequence[str]):
    leaves, tree = pytree.tree_flatten(operands)
    leaves = as_operands(leaves)
    avals = [core.get_aval(x) for x in leaves]
    traced = [trace_callback(lambda args, f=f: f(*args), [tree], avals, f"{name} branch {lab}")
              for f, lab in zip(funs, labels)]
    out_tree = traced[0][2][0]
    for (body, _, (t,)), lab in zip(traced[1:], labels[1:]):
        if t != out_tree:
            raise TypeError(f"{name}: {labels[0]} and {lab} must have the same output pytree "
                            f"structure, got {out_tree} and {t}")
    # weak types may differ between branches (a Python scalar in one): drop them
    outs0 = traced[0][0].out_avals
    diffs, strong = [], set()
    for (body, _, _), lab in zip(traced[1:], labels[1:]):
        for k, (path, a, b) in enumerate(zip(leaf_paths(out_tree, "output"), outs0,
                                             body.out_avals)):
            if a.shape != b.shape or a.dtype != b.dtype:
                diffs.append(f"  * {path} has type {type_str(a)} in {labels[0]} but "
                             f"{type_str(b)} in {lab}")
            elif a.weak_type != b.weak_type:
                strong.add(k)
    if diffs:
        raise TypeError(f"{name}: the branches must return identical types, but they "
                        f"differ:\n" + "\n".join(diffs))
    if strong:

        def strongly(f):
            def g(args):
                out_leaves, t = pytree.tree_flatten(f(*args))
                return pytree.tree_unflatten(t, [convert_element_type(o, o.dtype) if k in strong
                                                 else o for k, o in enumerate(out_leaves)])
            return g
        traced = [trace_callback(strongly(f), [tree], avals, f"{name} branch {lab}")
                  for f, lab in zip(funs, labels)]
    # every branch takes all branches' captured values, then the operands
    consts = [c for _, cs, _ in traced for c in cs]
    bodies = []
    offset = 0
    for body, cs, _ in traced:
        j = body.jaxpr
        own, ins = j.invars[:len(cs)], j.invars[len(cs):]
        before = [Var(core.get_aval(c)) for c in consts[:offset]]
        after = [Var(core.get_aval(c)) for c in consts[offset + len(cs):]]
        bodies.append(ClosedJaxpr(Jaxpr([], before + own + after + ins, j.eqns, j.outvars), []))
        offset += len(cs)
    return tuple(bodies), as_operands(consts), leaves, out_tree


def _bind(index: Any, bodies: tuple, consts: list, leaves: list, out_tree: Any) -> Any:
    outs = cond_p.bind(index, *consts, *leaves, branches=bodies)
    return pytree.tree_unflatten(out_tree, outs)


def switch(index: Any, branches: Sequence[Callable], *operands: Any, operand: Any = None) -> Any:
    """Apply ``branches[index]`` to ``operands``; the index is clamped into range, as in JAX.

    Args:
      index: an integer scalar.
      branches: a sequence of functions of the operands, all returning the same type.
      *operands: the arguments passed to the chosen branch.

    Returns:
      The chosen branch's output.
    """
    branches = list(branches)
    if not branches:
        raise ValueError("switch: empty branch sequence")
    if operand is not None:
        operands = (operand,)
    idx = asarray(index) if not isinstance(index, core.Tracer) else index
    aval = core.get_aval(idx)
    if aval.shape != () or not dtypes.is_integer(aval.dtype):
        raise TypeError(f"switch: the index must be an integer scalar, got {aval.str_short()}")
    idx = convert_element_type(idx, dtypes.int32)
    if len(branches) > 1:
        idx = clamp(0, idx, len(branches) - 1)
    if config.jax_disable_jit and not isinstance(idx, core.Tracer):  # as JAX: call the branch
        return branches[int(idx)](*operands)
    bodies, consts, leaves, out_tree = _branches(
        "switch", branches, operands, [f"branch {i}" for i in range(len(branches))])
    return _bind(idx, bodies, consts, leaves, out_tree)


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any,
         operand: Any = None) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; both are traced.

    Args:
      pred: a boolean (or numeric, nonzero meaning true) scalar.
      true_fun, false_fun: functions of the operands returning the same type.
      *operands: the arguments passed to the chosen function.

    Returns:
      The chosen function's output.
    """
    if operand is not None:
        operands = (operand,)
    p = asarray(pred) if not isinstance(pred, core.Tracer) else pred
    check_scalar_predicate("cond", core.get_aval(p), "the predicate", bool_only=False)
    if config.jax_disable_jit and not isinstance(p, core.Tracer):  # as JAX: call the branch
        return true_fun(*operands) if bool(p) else false_fun(*operands)
    if core.get_aval(p).dtype != dtypes.bool_:
        p = ne(p, 0)
    idx = convert_element_type(p, dtypes.int32)
    bodies, consts, leaves, out_tree = _branches("cond", [false_fun, true_fun], operands,
                                                 ["false_fun", "true_fun"])
    return _bind(idx, bodies, consts, leaves, out_tree)
