"""``jit``: trace once per signature, cache, and run the cached program.

A jitted call binds the ``jit`` call primitive with the traced Jaxpr as a parameter, so under an
enclosing trace (``make_jaxpr``, another ``jit``) it is recorded as one nested equation, and at
level 0 it runs the Jaxpr.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

from ..tracer import core, pytree
from ..tracer.core import Primitive
from ..tracer.ir import ClosedJaxpr, Jaxpr
from ..tracer.staging import eval_jaxpr, fun_name, trace_to_jaxpr


# ---- the call primitive ----

def _jit_aval(*avals, name: str, jaxpr: ClosedJaxpr):
    want = jaxpr.in_avals
    if len(avals) != len(want) or any(a.strip_weak_type() != w.strip_weak_type()
                                      for a, w in zip(avals, want)):
        raise TypeError(f"jit: the program traced for {name} takes "
                        f"{[w.str_short() for w in want]}, got {[a.str_short() for a in avals]}")
    return jaxpr.out_avals


def _jit_interpret(*args, name: str, jaxpr: ClosedJaxpr):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


_jit_interpret.interpreted = True  # runs on Arrays, binding each equation in turn

# Under jvp, vmap and transposition the call is inlined (its equations are transformed one by
# one); the compiled executor of issue 6 keeps the boundary.

def _jit_jvp(primals, tangents, *, name: str, jaxpr: ClosedJaxpr):
    from .jvp import jvp_flat
    outs, tans, _ = jvp_flat(lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs),
                             primals, tangents, name=f"jvp({name})")
    return outs, tans


def _jit_batch(vals, dims, *, name: str, jaxpr: ClosedJaxpr):
    from .vmap import vmap
    outs = vmap(lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs), in_axes=tuple(dims))(*vals)
    return outs, [0] * len(outs)


def _jit_transpose(cts, *args, name: str, jaxpr: ClosedJaxpr):
    from ..primitives.rules import is_undefined
    from .transpose import backward_pass
    lin = [is_undefined(a) for a in args]
    out = backward_pass(jaxpr.jaxpr, jaxpr.consts, lin, args, cts)
    return [o if l else None for o, l in zip(out, lin)]


jit_p = Primitive("jit", multiple_results=True)
jit_p.abstract_eval = _jit_aval
jit_p.cpu = _jit_interpret
jit_p.reference = _jit_interpret
jit_p.jvp = _jit_jvp
jit_p.transpose = _jit_transpose
jit_p.batch = _jit_batch


def closure_convert(closed: ClosedJaxpr) -> ClosedJaxpr:
    """The same program with its constants turned into leading inputs."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), [])


# ---- arguments: static / dynamic split and pytree flattening ----

def _normalize_static(fun: Callable, static_argnums, static_argnames):
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums or ())
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames or ())
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    # as JAX does, a static position implies its name and vice versa
    names = names + tuple(positional[i] for i in nums if -len(positional) <= i < len(positional)
                          and positional[i] not in names)
    nums = nums + tuple(positional.index(n) for n in names if n in positional
                        and positional.index(n) not in nums)
    return nums, names


def _hashable_static(fun_name_: str, where: str, value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"jit: the static argument {where} of {fun_name_} must be hashable "
                        f"(it is part of the cache key), got a value of type "
                        f"{type(value).__name__}: {value!r}. Pass a tuple instead of a list, or "
                        "make the argument non-static.") from None
    return value


def leaf_names(fun: Callable, args: tuple, kwargs: dict) -> list[str]:
    """Readable names of the leaves of (args, kwargs), for error messages: ``x``,
    ``params['w']``, ``args[2]``."""
    try:
        positional = [p.name for p in inspect.signature(fun).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        positional = []
    names = []
    for path, _ in pytree.tree_flatten_with_path((args, kwargs))[0]:
        head, key, rest = path[0], path[1], path[2:]
        if head.idx == 0:
            base = positional[key.idx] if key.idx < len(positional) else f"args[{key.idx}]"
        else:
            base = str(key.key)
        names.append(f"argument {base}{pytree.keystr(rest)}")
    return names


class JitFunction:
    """A function compiled on first call for each new argument signature."""

    def __init__(self, fun: Callable, static_argnums, static_argnames, donate_argnums):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = fun_name(fun)
        self._static_argnums, self._static_argnames = _normalize_static(
            fun, static_argnums, static_argnames)
        self._donate_argnums = donate_argnums
        self._cache: dict[Any, tuple[ClosedJaxpr, list, Any]] = {}

    def _split(self, args: tuple, kwargs: dict):
        n = len(args)
        static_pos = {i % n for i in self._static_argnums if -n <= i < n}
        statics = tuple((i, _hashable_static(self._name, f"at position {i}", args[i]))
                        for i in sorted(static_pos))
        statics += tuple((k, _hashable_static(self._name, f"'{k}'", kwargs[k]))
                         for k in sorted(kwargs) if k in self._static_argnames)
        # static positions hold None, an empty subtree, in the pytree of traced arguments
        dyn_args = tuple(None if i in static_pos else a for i, a in enumerate(args))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        return dyn_args, dyn_kwargs, statics

    def _trace(self, treedef, avals, statics):
        static_map = dict(statics)

        def flat_fun(*leaves):
            dyn_args, dyn_kwargs = pytree.tree_unflatten(treedef, leaves)
            args = tuple(static_map[i] if i in static_map else a for i, a in enumerate(dyn_args))
            kwargs = {**dyn_kwargs, **{k: v for k, v in statics if isinstance(k, str)}}
            return self._fun(*args, **kwargs)

        dyn_args, dyn_kwargs = pytree.tree_unflatten(treedef, [0] * treedef.num_leaves)
        names = leaf_names(self._fun, dyn_args, dyn_kwargs)
        return trace_to_jaxpr(flat_fun, avals, debug_name=self._name, arg_names=names)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, treedef = pytree.tree_flatten((dyn_args, dyn_kwargs))
        avals = tuple(core.get_aval(x) for x in leaves)
        key = (treedef, avals, statics)
        entry = self._cache.get(key)
        if entry is None:
            closed, out_tree = self._trace(treedef, avals, statics)
            entry = (closure_convert(closed), closed.consts, out_tree)
            if not any(isinstance(c, core.Tracer) for c in closed.consts):
                self._cache[key] = entry  # a closure over an outer tracer is traced anew
        program, consts, out_tree = entry
        outs = jit_p.bind(*consts, *leaves, name=self._name, jaxpr=program)
        return pytree.tree_unflatten(out_tree, outs)

    def _cache_size(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"<jitted function {self._name}>"


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = ()) -> Any:
    """Compile ``fun``: trace it once per argument signature and reuse the traced program.

    Args:
      fun: the function to compile. Its arguments are arrays or pytrees of arrays, except the
        static ones; it returns arrays or a pytree of them.
      static_argnums: positions of arguments that are Python values (hashable) rather than
        arrays; each new value retraces.
      static_argnames: names of keyword arguments treated the same way.
      donate_argnums: positions whose buffers the call may reuse (a hint).

    Returns:
      A function with the same signature whose calls trace ``fun`` at most once per
      (pytree structure, shapes and dtypes, static values) and run the cached program.

    Python side effects in ``fun`` happen while it is traced, i.e. once per new signature.
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums)
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums)
