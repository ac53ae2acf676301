"""The executor as the layers above the tracer see it: what ``jit`` compiles and runs programs
with, and the eager short path of ``x + y``.

A backend installs its implementation at import (backends/__init__.py), as it installs level-0
evaluation with ``core.set_eval_impl``, and the package imports the backend before any module
that runs programs: so no transform and no public module imports a backend.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple


class Executor(NamedTuple):
    """The entry points a backend provides."""

    # (jaxpr, consts, name, donated, layout, strict) -> a compiled program (``.run(*ndarrays)``)
    compile: Callable[..., Any]
    # (value, aval) -> the ndarray a compiled program reads for that argument
    to_ndarray: Callable[[Any, Any], Any]
    # (primitive, args, params) -> results: the eager evaluator itself, never a hook installed
    # over it with core.set_eval_impl (the compiler evaluates constants with it)
    eval_impl: Callable[..., Any]
    # (primitive, x, y) -> the result for two Arrays of one aval, or None (then the general path)
    eager_binary: Callable[[Any, Any, Any], Any]
    # the eager short paths pullback.numpy takes where its general path would bind exactly one
    # primitive on its operands as they are (backends/eager.py: unary, binary, call, call1,
    # binary_operator, enabled)
    eager: Any
    # the base type of jitted functions: its __call__ is the C fast path over ``_fast``
    jit_base: type
    # FastCall(program, Array, ShapedArray, in_avals, out_avals, in_spec, out_spec): one
    # compiled signature on the fast path
    fast_call: type
    # raised by a program given arguments laid out otherwise than it was compiled for
    layout_error: type
    # the fast path's most arguments (leaves)
    fast_max_leaves: int
    # (trace state, config, tree_unflatten): hands the fast path what it checks and builds with
    jit_setup: Callable[..., None]


_installed: Executor | None = None


def install(executor: Executor) -> None:
    """Make ``executor`` the one programs run on (the backend calls this at import)."""
    global _installed
    _installed = executor


def installed() -> Executor:
    """The installed executor."""
    if _installed is None:
        raise ImportError("no pullback backend is installed: import pullback (which installs "
                          "the CPU backend) before its transforms")
    return _installed
