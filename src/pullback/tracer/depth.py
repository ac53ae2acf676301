"""Deep recursion: Python's recursion limit (1000 frames) is sized for ordinary code, while
jit nests inside jit and pytrees nest as deep as users write them (JAX traces 200 nested jits).
Tracing and flattening recurse in Python, so they make room for themselves on demand, and a
pytree that contains itself is told apart from a deep one: a clear error, not a bare
RecursionError. Standard library only."""
from __future__ import annotations

import sys
from typing import Any, Callable

# Never raise the limit beyond this: deeper Python recursion would risk the C stack (each
# level of nested tracing also passes through C calls).
MAX_RECURSION_LIMIT = 30_000


def frame_depth() -> int:
    """The number of Python frames on the calling thread's stack (O(depth): call it only
    where recursion is already deep)."""
    f, n = sys._getframe(1), 1
    while f.f_back is not None:
        f, n = f.f_back, n + 1
    return n


def ensure_headroom(frames: int) -> None:
    """Raise the recursion limit (never lower it) so that ``frames`` more Python frames fit
    above the current depth, up to ``MAX_RECURSION_LIMIT``. The limit also counts C-level
    calls (each Python frame entered from C, each ``__call__`` of a C type), which the frame
    count misses: allow twice as many again."""
    need = min(3 * frame_depth() + frames, MAX_RECURSION_LIMIT)
    if sys.getrecursionlimit() < need:
        sys.setrecursionlimit(need)


def structure_depth(tree: Any, children: Callable[[Any], Any], op: str,
                    limit: int = MAX_RECURSION_LIMIT // 8) -> int:
    """The nesting depth of ``tree``, walked iteratively with ``children(node)`` (a sequence
    of subtrees, or None for a leaf).

    Raises:
      ValueError: naming ``op``, if a container is its own descendant (a cyclic pytree).
      RecursionError: naming ``op``, if the nesting is deeper than ``limit``.
    """
    exit_mark = object()
    stack: list = [(tree, 1)]
    on_path: set[int] = set()
    depth = 0
    while stack:
        node, d = stack.pop()
        if node is exit_mark:
            on_path.discard(id(d))
            continue
        kids = children(node)
        if kids is None:
            continue
        if id(node) in on_path:
            raise ValueError(f"{op}: the pytree contains itself (a {type(node).__name__} that "
                             "is its own descendant); pytrees must be acyclic")
        if d > limit:
            raise RecursionError(f"{op}: the pytree is nested more than {limit} levels deep")
        depth = max(depth, d)
        on_path.add(id(node))
        stack.append((exit_mark, node))  # keeps ``node`` alive while its id is on the path
        stack.extend((c, d + 1) for c in kids)
    return depth
