"""Host callbacks: ``debug_callback`` (``pullback.debug.print``/``callback``: an effect, no
results) and ``pure_callback`` (a pure function of its operands computed by Python code).

Both run their Python function on Arrays (copies: a compiled program's buffers are reused
after the step), eagerly and as a callback step of a compiled program, in program order.
``debug_callback`` is effectful (``ir.effectful``): the passes never drop, merge, fold or
hoist it. Its jvp calls it on the primals only (so it runs in the forward pass, once, as in
JAX); under vmap it runs once per batch element. ``pure_callback`` has no derivative (JAX's
error: wrap it in custom_jvp/custom_vjp) and batches by its ``vmap_method``, as JAX does.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tracer import ir
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval, not_applicable
from . import movement as _mv
from .rules import NONLINEAR, Zero, batch_size


def _host(xs: tuple) -> list[Array]:
    return [Array(np.array(x._value if type(x) is Array else x)) for x in xs]


def _unbatched(vals: list, dims: list, i: int) -> list:
    """Operand values at batch element ``i`` (unbatched operands as they are)."""
    out = []
    for v, d in zip(vals, dims):
        if d is None:
            out.append(v)
            continue
        shape = get_aval(v).shape
        start = [0] * len(shape)
        limit = list(shape)
        start[d], limit[d] = i, i + 1
        s = _mv.slice_p.bind(v, start_indices=tuple(start), limit_indices=tuple(limit),
                             strides=None)
        out.append(_mv.reshape_p.bind(s, new_sizes=shape[:d] + shape[d + 1:], dimensions=None))
    return out


# ---- debug_callback ----

def _debug_aval(*avals: ShapedArray, callback: Callable, ordered: bool) -> list:
    ir.effects_seen[0] = True  # from now on the passes look for effects
    return []


def _debug_run(*xs: Any, callback: Callable, ordered: bool) -> list:
    callback(*_host(xs))
    return []


_debug_run.interpreted = True  # takes Arrays; a compiled program calls it as a callback step


def _debug_reference(*xs: Any, callback: Callable, ordered: bool) -> list:
    callback(*_host(xs))
    return []


def _debug_jvp(primals: list, tangents: list, *, callback: Callable, ordered: bool) -> tuple:
    debug_callback_p.bind(*primals, callback=callback, ordered=ordered)
    return [], []


def _debug_batch(vals: list, dims: list, *, callback: Callable, ordered: bool) -> tuple:
    for i in range(batch_size(vals, dims)):  # (as JAX: unrolled, one call per element)
        debug_callback_p.bind(*_unbatched(vals, dims, i), callback=callback, ordered=ordered)
    return [], []


debug_callback_p = Primitive("debug_callback", multiple_results=True)
debug_callback_p.abstract_eval = _debug_aval
debug_callback_p.cpu = _debug_run
debug_callback_p.reference = _debug_reference
debug_callback_p.jvp = _debug_jvp
debug_callback_p.transpose = not_applicable("it has no results, and its jvp passes on the "
                                            "primals only: nothing to transpose")
debug_callback_p.batch = _debug_batch
ir.effectful.add(debug_callback_p)


# ---- pure_callback ----

def _pure_aval(*avals: ShapedArray, callback: Callable, result_avals: tuple,
               vmap_method: str | None) -> list:
    return list(result_avals)


def _pure_outputs(callback: Callable, xs: tuple, result_avals: tuple) -> list[np.ndarray]:
    outs = callback(*_host(xs))
    if len(outs) != len(result_avals):
        raise TypeError(f"pure_callback: the callback returned {len(outs)} arrays, expected "
                        f"{len(result_avals)} (result_shape_dtypes)")
    vals = []
    for i, (o, a) in enumerate(zip(outs, result_avals)):
        v = np.asarray(o)
        if v.shape != a.shape or v.dtype != a.dtype:
            raise TypeError(f"pure_callback: callback output {i} has shape {v.shape} and dtype "
                            f"{v.dtype}, but result_shape_dtypes says {a.str_short()} (shape "
                            f"{a.shape}, dtype {a.dtype})")
        vals.append(v)
    return vals


def _pure_run(*xs: Any, callback: Callable, result_avals: tuple,
              vmap_method: str | None) -> list:
    return [Array(v) for v in _pure_outputs(callback, xs, result_avals)]


_pure_run.interpreted = True


def _pure_reference(*xs: Any, callback: Callable, result_avals: tuple,
                    vmap_method: str | None) -> list:
    return _pure_outputs(callback, xs, result_avals)


def _pure_jvp(primals: list, tangents: list, **params: Any) -> tuple:
    if all(type(t) is Zero for t in tangents):
        outs = pure_callback_p.bind(*primals, **params)
        return outs, [Zero.from_primal(o) for o in outs]
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _batched_aval(a: ShapedArray, size: int) -> ShapedArray:
    return ShapedArray((size,) + a.shape, a.dtype)


def _pure_batch(vals: list, dims: list, *, callback: Callable, result_avals: tuple,
                vmap_method: str | None) -> tuple:
    size = batch_size(vals, dims)
    moved = [v if d is None else _mv.transpose_p.bind(
        v, permutation=(d,) + tuple(i for i in range(get_aval(v).ndim) if i != d))
        if d != 0 else v for v, d in zip(vals, dims)]
    mdims = [None if d is None else 0 for d in dims]
    if vmap_method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        n = size if vmap_method == "broadcast_all" else 1
        args = []
        for v, d in zip(moved, mdims):
            if d is None and vmap_method != "legacy_vectorized":
                shape = get_aval(v).shape
                v = _mv.broadcast_in_dim_p.bind(v, shape=(n,) + shape,
                                                broadcast_dimensions=tuple(range(1, len(shape) + 1)))
            args.append(v)
        outs = pure_callback_p.bind(*args, callback=callback, vmap_method=vmap_method,
                                    result_avals=tuple(_batched_aval(a, size)
                                                       for a in result_avals))
        return outs, [0] * len(outs)
    if vmap_method in ("sequential", "sequential_unrolled"):
        per = [pure_callback_p.bind(*_unbatched(moved, mdims, i), callback=callback,
                                    vmap_method=vmap_method, result_avals=result_avals)
               for i in range(size)]
        outs = []
        for j, a in enumerate(result_avals):
            parts = [_mv.reshape_p.bind(p[j], new_sizes=(1,) + a.shape, dimensions=None)
                     for p in per]
            outs.append(_mv.concatenate_p.bind(*parts, dimension=0) if parts else
                        _mv.broadcast_in_dim_p.bind(np.zeros((), a.dtype), shape=(0,) + a.shape,
                                                    broadcast_dimensions=()))
        return outs, [0] * len(outs)
    raise NotImplementedError(
        "vmap is only supported for the pure_callback primitive when vmap_method is one of "
        "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
        f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")


pure_callback_p = Primitive("pure_callback", multiple_results=True)
pure_callback_p.abstract_eval = _pure_aval
pure_callback_p.cpu = _pure_run
pure_callback_p.reference = _pure_reference
pure_callback_p.jvp = _pure_jvp
pure_callback_p.transpose = NONLINEAR
pure_callback_p.batch = _pure_batch
