"""Loops: ``scan``, ``map``, ``while_loop`` and ``fori_loop``, with jax.lax's signatures.

``scan(..., checkpoints=K)`` / ``checkpoints=("binomial", s)`` (an extension: JAX has no
direct equivalent) computes the same values and gradients as the plain scan while keeping only
K carries (or following the optimal binomial schedule with s slots) for the backward pass.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

from ..config import config
from ..tracer import core, dtypes, pytree
from ..tracer.avals import ShapedArray
from ..tracer.errors import ConcretizationTypeError
from ..transforms.array_ops import as_operands, asarray
from ..transforms.control_flow.loops import while_p
from ..transforms.control_flow.remat import checkpoint
from ..transforms.control_flow.scan import scan_p
from ..transforms.control_flow.tracing import (check_carry, check_scalar_predicate, leaf_paths,
                                               promote_leaves, trace_callback)
from ..transforms.vmap import vmap
from ._conversion import convert_element_type
from ._movement import concatenate, expand_dims, index_in_dim, rev

__all__ = ["scan", "map", "while_loop", "fori_loop"]


def _x_aval(a: ShapedArray) -> ShapedArray:
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type)


def _scan_length(xs_leaves: list, xs_tree: Any, length: int | None) -> int:
    lengths = []
    for x in xs_leaves:
        a = core.get_aval(x)
        if a.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: "
                             f"{a.str_short()}")
        lengths.append(a.shape[0])
    if length is not None:
        try:
            length = int(length)  # as JAX: a float length is truncated
        except TypeError:
            raise TypeError("scan: length must be a concrete integer") from None
        if length < 0:
            raise ValueError(f"scan: argument 'length' must be non-negative, got {length}")
        if any(n != length for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if len(set(lengths)) > 1:
        desc = ", ".join(f"{p} of size {n}" for p, n in zip(leaf_paths(xs_tree, "xs"), lengths))
        raise ValueError(f"scan got values with different leading axis sizes: {desc}")
    return lengths[0]


def _pair(name: str) -> Callable[[Any], list]:
    def split(out: Any) -> list:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"{name} body output must be a pair (carry, y), got "
                            f"{type(out).__name__}" + (f" of length {len(out)}"
                                                       if isinstance(out, (tuple, list)) else ""))
        return list(out)
    return split


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1, _split_transpose: bool = False, *,
         checkpoints: Any = None) -> tuple[Any, Any]:
    """Loop ``f`` over the leading axis of ``xs``, carrying a state.

    Semantically ``carry = init; for x in xs: carry, y = f(carry, x)`` with the ys stacked.

    Args:
      f: ``(carry, x) -> (carry, y)``; the carry keeps its pytree structure, shapes and dtypes.
      init: the initial carry (a pytree of arrays).
      xs: a pytree of arrays sharing their leading axis length (or None with ``length``).
      length: the number of iterations when ``xs`` is None (else must agree with it).
      reverse: iterate from the end (ys are still stacked in index order).
      unroll: how many iterations to unroll in compiled code (values do not depend on it).
      checkpoints: for reverse mode, ``None`` (keep every step's residuals), an int K (keep K
        evenly spaced carries; the backward pass recomputes each segment), or
        ``("binomial", s)`` (the optimal binomial schedule with s checkpoint slots).

    Returns:
      ``(final carry, stacked ys)``.
    """
    xs_leaves, xs_tree = pytree.tree_flatten(xs)
    xs_leaves = as_operands(xs_leaves)
    n = _scan_length(xs_leaves, xs_tree, length)
    if config.jax_disable_jit:
        return _scan_in_python(f, init, xs_leaves, xs_tree, n, reverse)
    if checkpoints is not None:
        return checkpointed_scan(f, init, xs, n, reverse, unroll, checkpoints)
    init_leaves, init_tree = pytree.tree_flatten(init)
    init_leaves = as_operands(init_leaves)
    x_avals = [_x_aval(core.get_aval(x)) for x in xs_leaves]
    for attempt in range(2):
        carry_avals = [core.get_aval(c) for c in init_leaves]
        body, consts, (c_tree, y_tree) = trace_callback(
            f, [init_tree, xs_tree], carry_avals + x_avals, "scan body", _pair("scan"))
        out_avals = body.out_avals
        promote = check_carry("scan body", init_tree, c_tree, carry_avals,
                              out_avals[:len(carry_avals)])
        if not promote:
            break
        init_leaves = promote_leaves(init_leaves, out_avals, promote)
    outs = scan_p.bind(*consts, *init_leaves, *xs_leaves, jaxpr=body, num_consts=len(consts),
                       num_carry=len(init_leaves), length=n, reverse=bool(reverse),
                       unroll=int(unroll) if not isinstance(unroll, bool) else (n if unroll else 1))
    nc = len(init_leaves)
    return pytree.tree_unflatten(c_tree, outs[:nc]), pytree.tree_unflatten(y_tree, outs[nc:])


def _scan_in_python(f: Callable, init: Any, xs_leaves: list, xs_tree: Any, n: int,
                    reverse: bool) -> tuple[Any, Any]:
    """scan under ``jax_disable_jit``, as JAX: a Python loop calling ``f`` on each slice."""
    if n == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because the "
                         "output type is unknown.")
    carry, ys = init, []
    steps = range(n - 1, -1, -1) if reverse else range(n)
    for i in steps:
        x = pytree.tree_unflatten(xs_tree, [index_in_dim(v, i, keepdims=False)
                                            for v in xs_leaves])
        carry, y = _pair("scan")(f(carry, x))
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = pytree.tree_map(lambda *y: concatenate([expand_dims(v, (0,)) for v in y], 0), *ys)
    return carry, stacked


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:
    """Apply ``f`` to each slice of ``xs`` along its leading axis and stack the results.

    Args:
      f: a function of one pytree slice.
      xs: a pytree of arrays sharing their leading axis.
      batch_size: if given, ``f`` is vmapped over batches of this many slices (a remainder
        batch is computed separately), trading memory for fewer loop iterations.

    Returns:
      The stacked outputs of ``f``.
    """
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    leaves, tree = pytree.tree_flatten(xs)
    leaves = as_operands(leaves)
    n = _scan_length(leaves, tree, None)
    if not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"map: batch_size must be a positive int, got {batch_size!r}")
    nb, rem = divmod(n, batch_size)
    vf = vmap(f)
    parts = []
    if nb:
        batched = [x[:nb * batch_size].reshape((nb, batch_size) + x.shape[1:]) for x in leaves]
        ys = scan(lambda _, x: ((), vf(x)), (), pytree.tree_unflatten(tree, batched))[1]
        parts.append(pytree.tree_map(lambda y: y.reshape((nb * batch_size,) + y.shape[2:]), ys))
    if rem:
        parts.append(vf(pytree.tree_unflatten(tree, [x[nb * batch_size:] for x in leaves])))
    if len(parts) == 1:
        return parts[0]
    return pytree.tree_map(lambda a, b: concatenate([a, b], 0), parts[0], parts[1])


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """Repeat ``body_fun`` while ``cond_fun`` holds: ``while cond_fun(val): val =
    body_fun(val)``.

    Differentiable in forward mode; reverse mode raises (use ``scan`` or ``fori_loop`` with
    static bounds).

    Args:
      cond_fun: ``val -> boolean scalar``.
      body_fun: ``val -> val`` (same pytree structure, shapes and dtypes).
      init_val: the initial value.

    Returns:
      The final value.
    """
    if config.jax_disable_jit:  # as JAX: a Python loop, unless a predicate is traced
        def as_arrays(v: Any) -> Any:
            leaves, tree = pytree.tree_flatten(v)
            return pytree.tree_unflatten(tree, as_operands(leaves))
        try:
            val = as_arrays(init_val)
            while cond_fun(val):
                val = as_arrays(body_fun(val))
            return val
        except ConcretizationTypeError:
            pass
    leaves, tree = pytree.tree_flatten(init_val)
    leaves = as_operands(leaves)
    for attempt in range(2):
        avals = [core.get_aval(x) for x in leaves]
        cond_j, cond_consts, (pred_tree,) = trace_callback(cond_fun, [tree], avals,
                                                           "while_loop cond_fun")
        if pred_tree.num_leaves != 1:
            raise TypeError(f"while_loop: cond_fun must return a boolean scalar, but got a "
                            f"pytree {pred_tree}")
        check_scalar_predicate("while_loop", cond_j.out_avals[0], "cond_fun output",
                               bool_only=True)
        body_j, body_consts, (out_tree,) = trace_callback(body_fun, [tree], avals,
                                                          "while_loop body_fun")
        promote = check_carry("while_loop body", tree, out_tree, avals, body_j.out_avals)
        if not promote:
            break
        leaves = promote_leaves(leaves, body_j.out_avals, promote)
    outs = while_p.bind(*cond_consts, *body_consts, *leaves, cond_jaxpr=cond_j,
                        body_jaxpr=body_j, cond_nconsts=len(cond_consts),
                        body_nconsts=len(body_consts))
    return pytree.tree_unflatten(tree, outs)


def _concrete_int(x: Any) -> int | None:
    if isinstance(x, core.Tracer):
        v = x.to_concrete_value()
        return None if v is None else int(v)
    try:
        return int(x)
    except (TypeError, ValueError):
        return None


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With concrete bounds (Python ints or concrete arrays) this is a ``scan``, so it is
    reverse-differentiable; with traced bounds it is a ``while_loop`` (forward mode only).

    Args:
      lower, upper: the loop bounds (integer scalars).
      body_fun: ``(i, val) -> val``.
      init_val: the initial value.
      unroll: passed to ``scan`` (concrete bounds only).

    Returns:
      The final value.
    """
    dt = dtypes.result_type(lower, upper)
    if not dtypes.is_integer(dt):
        raise TypeError(f"fori_loop: arguments 'lower' and 'upper' must be integers, got "
                        f"{lower!r} and {upper!r}")
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if lo is not None and hi is not None:
        if config.jax_disable_jit:  # as JAX: Python ints count the steps of a Python scan
            if hi <= lo:
                return init_val
            (_, out), _ = scan(lambda c, _: ((c[0] + 1, body_fun(*c)), None), (lo, init_val),
                               None, length=hi - lo)
            return out
        i0 = convert_element_type(asarray(lo), dt)

        def step(carry, _):
            i, x = carry
            return (i + 1, body_fun(i, x)), None

        (_, out), _ = scan(step, (i0, init_val), None, length=max(hi - lo, 0),
                           unroll=1 if unroll is None else unroll)
        return out
    if unroll is not None:
        raise ValueError("fori_loop: unroll requires concrete (static) bounds")
    lower = convert_element_type(asarray(lower), dt)
    upper = convert_element_type(asarray(upper), dt)

    def cond(c):
        return c[0] < c[1]

    def body(c):
        i, hi_, x = c
        return i + 1, hi_, body_fun(i, x)

    return while_loop(cond, body, (lower, upper, init_val))[2]


# ---- checkpointed scans: ``scan(..., checkpoints=K)`` and ``checkpoints=("binomial", s)`` ----
#
# Both are built from plain scans and ``checkpoint``, so they compute exactly the plain scan's
# values and gradients (the same operations in the same order):
#
# - K checkpoints: an outer scan over K segments whose body is a checkpointed inner scan over
#   one segment. Reverse mode keeps the K segment-start carries; the backward pass recomputes one
#   segment at a time (residuals for one segment live at once): O(K·carry + T/K·residuals)
#   memory, one extra forward sweep.
# - binomial (Griewank's Revolve): with s checkpoint slots, reversing T steps is split as
#   ``F(T, s) = F(T - m, s - 1) ∘ checkpoint(F(m, s))``: advance m steps keeping only their
#   input, then reverse the rest with one slot less, then recompute and reverse the first m
#   steps with all s slots. With the optimal m this makes r·T − C(s+r, s+1) extra forward
#   steps, r the smallest integer with C(s+r, s) ≥ T (T = 1000, s = 10: 3636), the minimum any
#   schedule with s slots can achieve.

def revolve_extra_steps(t: int, s: int) -> float:
    """The fewest extra forward steps that reverse ``t`` steps with ``s`` checkpoint slots
    (the slot holding the initial state included): ``r·t − C(s+r, s+1)``."""
    if t <= 1:
        return 0
    if s <= 0:
        return math.inf
    r, beta = 0, 1  # beta = C(s + r, s)
    while beta < t:
        r += 1
        beta = beta * (s + r) // r
    return r * t - math.comb(s + r, s + 1)


@functools.lru_cache(maxsize=None)
def revolve_split(t: int, s: int) -> int:
    """An optimal number of steps to advance before the first checkpoint: the m minimizing
    ``m + extra(t - m, s - 1) + extra(m, s)`` (convex in m, so a binary search)."""
    if s == 1:
        return t - 1

    def cost(m: int) -> float:
        return m + revolve_extra_steps(t - m, s - 1) + revolve_extra_steps(m, s)

    lo, hi = 1, t - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cost(mid + 1) - cost(mid) >= 0:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _slice(tree: Any, start: int, stop: int) -> Any:
    return pytree.tree_map(lambda x: x[start:stop], tree)


def _concat(a: Any, b: Any) -> Any:
    return pytree.tree_map(lambda x, y: concatenate([x, y], 0), a, b)


def _rev(tree: Any) -> Any:
    return pytree.tree_map(lambda x: rev(x, (0,)), tree)


def checkpointed_scan(f: Callable, init: Any, xs: Any, length: int, reverse: bool,
                      unroll: int, checkpoints: Any) -> tuple[Any, Any]:
    if reverse:  # the same steps over the reversed sequence, ys reversed back
        carry, ys = checkpointed_scan(f, init, _rev(xs) if xs is not None else None, length,
                                      False, unroll, checkpoints)
        return carry, _rev(ys)
    if isinstance(checkpoints, bool) or not (
            isinstance(checkpoints, int) or (isinstance(checkpoints, tuple) and
                                             len(checkpoints) == 2 and
                                             checkpoints[0] == "binomial")):
        raise ValueError(f"scan: checkpoints must be None, a positive int K or "
                         f"('binomial', s), got {checkpoints!r}")
    plain = functools.partial(scan, f, unroll=unroll)
    if length == 0:
        return plain(init, xs, length=0)
    if isinstance(checkpoints, int):
        if checkpoints < 1:
            raise ValueError(f"scan: checkpoints must be >= 1, got {checkpoints}")
        return _segments(plain, init, xs, length, min(checkpoints, length))
    s = checkpoints[1]
    if not isinstance(s, int) or s < 1:
        raise ValueError(f"scan: checkpoints=(\"binomial\", s) needs s >= 1 slots, got {s!r}")
    return _binomial(plain, length, s)(init, xs)


def _segments(plain: Callable, init: Any, xs: Any, t: int, k: int) -> tuple[Any, Any]:
    seg = -(-t // k)
    q, r = divmod(t, seg)
    body = checkpoint(lambda c, x, n=seg: plain(c, x, length=n))
    head = (pytree.tree_map(lambda x: x[:q * seg].reshape((q, seg) + x.shape[1:]), xs)
            if xs is not None else None)
    carry, ys = scan(body, init, head, length=q)
    ys = pytree.tree_map(lambda y: y.reshape((q * seg,) + y.shape[2:]), ys)
    if r:
        tail = checkpoint(lambda c, x, n=r: plain(c, x, length=n))
        carry, ys_tail = tail(carry, _slice(xs, q * seg, t) if xs is not None else None)
        ys = _concat(ys, ys_tail)
    return carry, ys


def _binomial(plain: Callable, t: int, s: int) -> Callable:
    """``F(t, s)``: ``(carry, xs) -> (carry, ys)`` over t steps, reversed with s slots."""
    if t == 1:
        return lambda c, xs: plain(c, xs, length=1)
    m = revolve_split(t, s)
    first = checkpoint(_binomial(plain, m, s))
    rest = _binomial(plain, t - m, s - 1)

    def run(c: Any, xs: Any) -> tuple[Any, Any]:
        c, y1 = first(c, _slice(xs, 0, m) if xs is not None else None)
        c, y2 = rest(c, _slice(xs, m, t) if xs is not None else None)
        return c, _concat(y1, y2)
    return run
