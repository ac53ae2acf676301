"""``pullback.tree``, as ``jax.tree``: the pytree functions under short names
(``tree.map`` is ``tree_util.tree_map``, ...)."""
from __future__ import annotations

import dataclasses as _dataclasses
from typing import Any as _Any

from .tree_util import tree_all as all  # noqa: A001
from .tree_util import tree_broadcast as broadcast
from .tree_util import tree_flatten as flatten
from .tree_util import tree_flatten_with_path as flatten_with_path
from .tree_util import tree_leaves as leaves
from .tree_util import tree_leaves_with_path as leaves_with_path
from .tree_util import tree_map as map  # noqa: A001
from .tree_util import tree_map_with_path as map_with_path
from .tree_util import tree_reduce as reduce
from .tree_util import tree_reduce_associative as reduce_associative
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as transpose
from .tree_util import tree_unflatten as unflatten

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]


def static(**kwargs: _Any) -> _Any:
    """``dataclasses.field(**kwargs)`` marked static: a field that
    ``tree_util.register_dataclass`` puts in the treedef, not among the children."""
    metadata = {"static": True, **(kwargs.pop("metadata", {}) or {})}
    return _dataclasses.field(metadata=metadata, **kwargs)


def __dir__() -> list[str]:
    return sorted(__all__)
