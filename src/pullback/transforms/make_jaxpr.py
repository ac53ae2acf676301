"""``make_jaxpr``: the Jaxpr a function stages, for reading and testing."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from ..tracer import core, pytree
from ..tracer.avals import ShapeDtypeStruct
from ..tracer.errors import check_callable
from ..tracer.staging import fun_name, trace_to_jaxpr
from .jit import _normalize_static, leaf_names


def make_jaxpr(fun: Callable, static_argnums: int | Sequence[int] = (),
               return_shape: bool = False) -> Callable[..., Any]:
    """A function that traces ``fun`` on the given arguments and returns its ClosedJaxpr.

    Args:
      fun: the function to trace.
      static_argnums: positions of arguments passed through as Python values.
      return_shape: also return a pytree of ``ShapeDtypeStruct`` for the outputs.

    Returns:
      A function taking ``fun``'s arguments (arrays, or ``ShapeDtypeStruct`` for shapes only)
      and returning the ClosedJaxpr, which prints in JAX's text form.
    """
    check_callable(fun)
    nums, _ = _normalize_static(fun, static_argnums, ())

    @functools.wraps(fun)
    def make(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        static = {i % n for i in nums if -n <= i < n}
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, treedef = pytree.tree_flatten((dyn, kwargs))

        def flat_fun(*flat):
            dyn_args, kw = pytree.tree_unflatten(treedef, flat)
            it = iter(dyn_args)
            full = [args[i] if i in static else next(it) for i in range(n)]
            return fun(*full, **kw)

        avals = [core.get_aval(x) for x in leaves]
        names = leaf_names(lambda *a, **k: None, tuple(dyn), kwargs)
        closed, out_tree = trace_to_jaxpr(flat_fun, avals, debug_name=fun_name(fun),
                                          arg_names=names)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype) for a in closed.out_avals]
            return closed, pytree.tree_unflatten(out_tree, shapes)
        return closed

    return make
