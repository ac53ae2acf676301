"""vmap: vectorizing a function over an axis of its inputs.

Each primitive's ``batch`` rule takes ``(values, batch_dims, **params)`` where a batch dim is
an int or ``not_mapped`` (None), and returns ``(out, out_batch_dim)`` (lists for
multiple-result primitives). A named axis (``axis_name``) makes the collectives
(psum, pmean, pmax, pmin, all_gather, axis_index) reduce or gather across the mapped lanes.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import numpy as np

from ..primitives.rules import move_bdim, not_mapped
from ..tracer import core, pytree
from ..tracer.avals import ShapedArray
from ..tracer.errors import check_callable
from ..tracer.shapes import index_arg
from .array_ops import asarray


class AxisInfo(NamedTuple):
    size: int
    name: Any


class BatchTracer(core.Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace: "BatchTrace", val: Any, bdim: int | None):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self) -> ShapedArray:
        av = core.get_aval(self.val)
        if self.bdim is None:
            return av
        shape = av.shape[:self.bdim] + av.shape[self.bdim + 1:]
        return ShapedArray(shape, av.dtype, av.weak_type)

    def full_lower(self) -> Any:
        return core.full_lower(self.val) if self.bdim is None else self

    def to_concrete_value(self) -> Any:
        return None

    def _source_description(self) -> str:
        v = self.val
        return v._source_description() if isinstance(v, core.Tracer) else ""


class BatchTrace(core.Trace):
    __slots__ = ()

    @property
    def axis(self) -> AxisInfo:
        return self.main.payload

    def pure(self, val: Any) -> BatchTracer:
        return BatchTracer(self, val, not_mapped)

    lift = pure

    def process_primitive(self, prim: core.Primitive, tracers: list, params: dict) -> Any:
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        if prim.collective and params.get("axis_name") != self.axis.name:
            # another vmap's axis: apply it to our lanes' values, keeping our batch dim
            (x,), (d,) = vals, dims
            out = bind_collective(prim, x, **params)
            return BatchTracer(self, out, d)
        if all(d is None for d in dims) and not prim.collective:
            out = prim.bind(*vals, **params)
            if prim.multiple_results:
                return [BatchTracer(self, o, None) for o in out]
            return BatchTracer(self, out, None)
        rule = prim.rule("batch")
        if getattr(rule, "needs_axis", False):
            out, out_dim = rule(vals, dims, axis_info=self.axis, **params)
        else:
            out, out_dim = rule(vals, dims, **params)
        if prim.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


# the named axes of the vmaps in progress, innermost last (for the collectives)
_axis_env: list[tuple[Any, core.MainTrace]] = []


def find_axis(name: Any) -> core.MainTrace:
    for n, main in reversed(_axis_env):
        if n == name:
            return main
    raise NameError(f"unbound axis name: {name!r}. Collectives need an enclosing "
                    f"vmap(..., axis_name={name!r})")


def bind_collective(prim: core.Primitive, x: Any, **params: Any) -> Any:
    """Bind collective ``prim`` so that the vmap level owning ``params['axis_name']`` sees it,
    even when ``x`` is constant along that axis (then it is raised into that level first)."""
    main = find_axis(params["axis_name"])
    level = x._trace.main.level if isinstance(x, core.Tracer) else 0
    if level < main.level:
        x = BatchTrace(main).full_raise(x)
    return prim.bind(x, **params)


def moveaxis_to(x: Any, src: int | None, dst: int, size: int) -> Any:
    """``x`` with its batch dim ``src`` moved to ``dst`` (broadcast in when not mapped)."""
    return move_bdim(x if isinstance(x, core.Tracer) else asarray(x), src, dst, size)


def _flatten_axes(name: str, what: str, tree: Any, axes: Any) -> list[Any]:
    """``axes`` (a prefix of ``tree``'s structure) broadcast to one entry per leaf."""
    try:
        return _prefix(axes, tree)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{name}: {what} specification must be a tree prefix of the "
                         f"corresponding value, got {what}={axes!r}: {e}") from None


def _prefix(axes: Any, tree: Any) -> list[Any]:
    if axes is None or isinstance(axes, int):
        return [axes] * pytree.tree_structure(tree).num_leaves
    a_leaves, a_tree = pytree.tree_flatten(axes, is_leaf=lambda x: x is None)
    subtrees = a_tree.flatten_up_to(tree)
    out = []
    for ax, sub in zip(a_leaves, subtrees):
        out.extend([ax] * pytree.tree_structure(sub).num_leaves)
    return out


def _check_axes(axes: Any, message: str) -> Any:
    """``axes`` with NumPy integer leaves made ints; JAX's TypeError for a leaf that is neither
    an int nor None (a string or float would otherwise fail deep inside as a comparison)."""
    leaves, tree = pytree.tree_flatten(axes, is_leaf=lambda x: x is None)
    if not all(a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, bool))
               for a in leaves):
        raise TypeError(f"{message}, but got {axes!r}.")
    if all(type(a) is int or a is None for a in leaves):
        return axes
    return pytree.tree_unflatten(tree, [None if a is None else int(a) for a in leaves])


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None, spmd_axis_name: Any = None) -> Callable:
    """Vectorize ``fun`` over an axis of its inputs.

    Args:
      fun: the function to vectorize.
      in_axes: an int, None or a pytree prefix of the arguments (a tuple, one entry per
        positional argument): the mapped axis of each input (None: not mapped). Negative
        axes count from the end.
      out_axes: likewise for the outputs: where the mapped axis goes.
      axis_name: a name for the mapped axis, for collectives (psum, pmean, ...).
      axis_size: the size of the mapped axis, needed when no input is mapped.

    Returns:
      The vectorized function.
    """
    check_callable(fun)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    in_axes = _check_axes(in_axes, "vmap in_axes must be an int, None, or a tuple of entries "
                          "corresponding to the positional arguments passed to the function")
    out_axes = _check_axes(out_axes, "vmap out_axes must be an int, None, or (nested) "
                           "container with those types as leaves")
    if axis_size is not None:
        axis_size = index_arg(axis_size, "vmap", "axis_size")
        if axis_size < 0:
            raise TypeError(f"vmap: argument 'axis_size' must be non-negative, got {axis_size}")

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            # keyword arguments are mapped over axis 0 (as JAX does)
            return vmap(lambda *a: fun(*a[:-1], **a[-1]),
                        in_axes=(in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)) + (0,),
                        out_axes=out_axes, axis_name=axis_name, axis_size=axis_size)(*args, kwargs)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries "
                             f"corresponding to the positional arguments passed to the function, "
                             f"but got len(in_axes)={len(in_axes)}, len(args)={len(args)}")
        leaves, in_tree = pytree.tree_flatten(args)
        axes = _flatten_axes("vmap", "in_axes", args, in_axes)
        leaves = [x if isinstance(x, core.Tracer) else asarray(x) for x in leaves]
        sizes = {}
        norm = []
        for i, (x, ax) in enumerate(zip(leaves, axes)):
            if ax is None:
                norm.append(None)
                continue
            nd = core.get_aval(x).ndim
            if not -nd <= ax < nd:
                raise ValueError(f"vmap was requested to map its argument along axis {ax}, "
                                 f"which implies that its rank should be at least {ax + 1 if ax >= 0 else -ax}, "
                                 f"but is only {nd} (its shape is {core.get_aval(x).shape})")
            ax %= nd
            norm.append(ax)
            sizes.setdefault(core.get_aval(x).shape[ax], []).append((i, ax))
        if len(sizes) > 1:
            desc = "; ".join(f"argument {i} has size {s} along axis {a}"
                             for s, lst in sizes.items() for i, a in lst)
            raise ValueError(f"vmap got inconsistent sizes for array axes to be mapped: {desc}")
        if sizes:
            size = next(iter(sizes))
            if axis_size is not None and axis_size != size:
                raise ValueError(f"vmap: axis_size={axis_size} differs from the mapped inputs' "
                                 f"size {size}")
        elif axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes, or be "
                             "given axis_size")
        else:
            size = axis_size
        with core.new_main(BatchTrace, AxisInfo(size, axis_name),
                           debug_name=f"vmap({getattr(fun, '__name__', 'fun')})") as main:
            _axis_env.append((axis_name, main))
            try:
                trace = BatchTrace(main)
                tracers = [BatchTracer(trace, x, ax) for x, ax in zip(leaves, norm)]
                out = fun(*pytree.tree_unflatten(in_tree, tracers))
                out_leaves, out_tree = pytree.tree_flatten(out)
                outs = [trace.full_raise(o) for o in out_leaves]
            finally:
                _axis_env.pop()
        oaxes = _flatten_axes("vmap", "out_axes", out, out_axes)
        results = []
        for o, oax in zip(outs, oaxes):
            val, bd = o.val, o.bdim
            if oax is None:
                if bd is not None:
                    raise ValueError("vmap has mapped output but out_axes is None")
                results.append(val)
                continue
            nd = core.get_aval(val).ndim + (1 if bd is None else 0)
            if not -nd <= oax < nd:
                raise ValueError(f"vmap out_axes={oax} is out of bounds for an output of rank "
                                 f"{nd} (with the mapped axis)")
            results.append(moveaxis_to(val, bd, oax % nd, size))
        return pytree.tree_unflatten(out_tree, results)

    return vmapped
