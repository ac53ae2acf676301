"""Checkpointed scans: ``lax.scan(..., checkpoints=K)`` and ``checkpoints=("binomial", s)``.

Both are built from plain scans and ``checkpoint``, so they compute exactly the plain scan's
values and gradients (the same operations in the same order):

- K checkpoints: an outer scan over K segments whose body is a checkpointed inner scan over
  one segment. Reverse mode keeps the K segment-start carries; the backward pass recomputes one
  segment at a time (residuals for one segment live at once): O(K·carry + T/K·residuals)
  memory, one extra forward sweep.
- binomial (Griewank's Revolve): with s checkpoint slots, reversing T steps is split as
  ``F(T, s) = F(T - m, s - 1) ∘ checkpoint(F(m, s))``: advance m steps keeping only their
  input, then reverse the rest with one slot less, then recompute and reverse the first m
  steps with all s slots. With the optimal m this makes r·T − C(s+r, s+1) extra forward
  steps, r the smallest integer with C(s+r, s) ≥ T (T = 1000, s = 10: 3636), the minimum any
  schedule with s slots can achieve.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

from ...tracer import pytree
from .remat import checkpoint


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
    from ...numpy import concatenate
    return pytree.tree_map(lambda x, y: concatenate([x, y]), a, b)


def _rev(tree: Any) -> Any:
    from ...lax import rev
    return pytree.tree_map(lambda x: rev(x, (0,)), tree)


def checkpointed_scan(f: Callable, init: Any, xs: Any, length: int, reverse: bool,
                      unroll: int, checkpoints: Any) -> tuple[Any, Any]:
    from ...lax._loops import scan
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
    from ...lax._loops import scan
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
