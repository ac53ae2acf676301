"""Tracing user callbacks of the control-flow functions, and the type errors they raise.

Each callback is traced once to a body (its captured traced values become leading operands);
a carry whose type the body changes is reported leaf by leaf with its pytree path, as in
JAX. A weakly typed initial carry (``0.0``) whose body output is strongly typed is converted to
the output's type and the body traced again, as JAX does.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...tracer import dtypes, pytree
from ...tracer.avals import ShapedArray
from ...tracer.ir import ClosedJaxpr
from ...tracer.staging import trace_to_jaxpr
from ..array_ops import convert
from ..jit import closure_convert


def leaf_paths(tree: Any, prefix: str) -> list[str]:
    dummy = pytree.tree_unflatten(tree, [0] * tree.num_leaves)
    return [prefix + pytree.keystr(p) for p, _ in pytree.tree_flatten_with_path(dummy)[0]]


def trace_callback(fun: Callable[..., Any], in_trees: Sequence[Any],
                   in_avals: Sequence[ShapedArray], name: str, split_out: Callable | None = None
                   ) -> tuple[ClosedJaxpr, list, list]:
    """Trace ``fun(*unflattened args)``; the args are the trees ``in_trees`` over ``in_avals``.

    ``split_out`` maps the output to a list of pytrees (default: one). Returns the body with
    captured values as leading inputs, those captured values, and the output trees.
    """
    counts = [t.num_leaves for t in in_trees]
    trees_box: list = []

    def flat(*leaves: Any) -> list:
        args, i = [], 0
        for t, n in zip(in_trees, counts):
            args.append(pytree.tree_unflatten(t, leaves[i:i + n]))
            i += n
        out = fun(*args)
        parts = split_out(out) if split_out is not None else [out]
        flat_out, trees = [], []
        for p in parts:
            ls, tr = pytree.tree_flatten(p)
            flat_out += ls
            trees.append(tr)
        trees_box.append(trees)
        return flat_out

    closed, _ = trace_to_jaxpr(flat, in_avals, debug_name=name)
    return closure_convert(closed), list(closed.consts), trees_box[0]


def type_str(a: ShapedArray) -> str:
    """``float32[3,4]``: the spelling of types in error messages, as JAX's."""
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def check_carry(name: str, in_tree: Any, out_tree: Any, in_avals: Sequence[ShapedArray],
                out_avals: Sequence[ShapedArray], what: str = "carry") -> list[int]:
    """Raise a TypeError naming each carry leaf whose output type differs from its input type.

    Returns the positions of weakly typed inputs that should be promoted to the output's
    type (then the caller retraces)."""
    if in_tree != out_tree:
        raise TypeError(f"{name} function {what} input and {what} output must have the same "
                        f"pytree structure, but they differ:\n  input {what}: {in_tree}\n  "
                        f"output {what}: {out_tree}")
    promote, diffs = [], []
    for i, (path, a, b) in enumerate(zip(leaf_paths(in_tree, what), in_avals, out_avals)):
        if a.shape == b.shape and a.dtype == b.dtype:
            if a.weak_type and not b.weak_type:
                promote.append(i)
            continue
        if a.weak_type and a.shape == b.shape and \
                dtypes.promote(((a.dtype, True), (b.dtype, b.weak_type)))[0] == b.dtype:
            # JAX's rule: a weakly typed input is promoted only to a dtype it would promote
            # to anyway (a Python 0 carry to float32, not a Python 0.0 to int32)
            promote.append(i)
            continue
        why = "the shapes do not match" if a.shape != b.shape else "the dtypes do not match"
        diffs.append(f"  * the input {what} component {path} has type {type_str(a)} but the "
                     f"corresponding output {what} component has type {type_str(b)}, so {why}")
    if diffs:
        raise TypeError(f"{name} function {what} input and {what} output must have equal "
                        f"types, but they differ:\n" + "\n".join(diffs))
    return promote


def promote_leaves(leaves: list, out_avals: Sequence[ShapedArray], which: list[int]) -> list:
    leaves = list(leaves)
    for i in which:
        leaves[i] = convert(leaves[i], out_avals[i].dtype)
    return leaves


def check_scalar_predicate(name: str, aval: ShapedArray, what: str, bool_only: bool) -> None:
    ok_dtype = aval.dtype == dtypes.bool_ or (not bool_only and (
        dtypes.is_integer(aval.dtype) or dtypes.is_float(aval.dtype)))
    if aval.shape != () or not ok_dtype:
        kind = "a boolean scalar" if bool_only else "a boolean, integer or real scalar"
        raise TypeError(f"{name}: {what} must be {kind}, got {type_str(aval)}")
