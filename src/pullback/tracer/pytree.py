"""Pytrees: nested containers of leaves, with ``jax.tree_util`` semantics.

A *pytree* is a nested structure of containers (tuples, lists, dicts,
namedtuples, ``None`` and any registered custom node type) whose non-container
elements are *leaves*.  Flattening a pytree produces its leaves, in a
deterministic order, together with a :class:`PyTreeDef` describing the
structure, from which the pytree can be rebuilt with new leaves.

Built-in node types:

* ``tuple`` and ``list``: children in order.
* ``dict``: children in sorted-key order; unflattening builds a dict whose keys
  are in sorted order.
* ``collections.OrderedDict``: children in insertion order, which is part of
  the structure.
* ``collections.defaultdict``: children in sorted-key order; the
  ``default_factory`` is part of the structure.
* namedtuples (any ``tuple`` subclass with a ``_fields`` attribute): children
  in field order; rebuilt as the same class.
* ``None``: a node with no children (an empty subtree, *not* a leaf).

Everything else is a leaf unless registered with :func:`register_pytree_node`,
:func:`register_pytree_node_class`, :func:`register_pytree_with_keys` or
:func:`register_dataclass`.

This module depends only on the Python standard library (and ``depth``, which does too).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import OrderedDict, defaultdict
from typing import Any, Callable, Hashable, Iterable, Sequence, TypeVar, Union

from .depth import ensure_headroom, structure_depth

__all__ = [
    "PyTreeDef",
    "SequenceKey",
    "DictKey",
    "GetAttrKey",
    "FlattenedIndexKey",
    "KeyEntry",
    "KeyPath",
    "tree_flatten",
    "tree_unflatten",
    "tree_leaves",
    "tree_structure",
    "tree_map",
    "tree_reduce",
    "tree_all",
    "tree_transpose",
    "tree_flatten_with_path",
    "tree_leaves_with_path",
    "tree_map_with_path",
    "treedef_is_leaf",
    "keystr",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_dataclass",
]

_T = TypeVar("_T")

# ---------------------------------------------------------------------------
# Node kinds and the registry.
# ---------------------------------------------------------------------------

# Small integers identify how a node is flattened / rebuilt.  Built-in
# containers are handled inline; everything registered goes through CUSTOM.
_LEAF = 0
_NONE = 1
_TUPLE = 2
_LIST = 3
_DICT = 4
_NAMEDTUPLE = 5
_ODICT = 6
_DDICT = 7
_CUSTOM = 8


class _NodeSpec:
    """Registration record of a custom node type."""

    __slots__ = ("flatten", "unflatten", "flatten_with_keys")

    def __init__(
        self,
        flatten: Callable[[Any], tuple[Iterable[Any], Any]],
        unflatten: Callable[[Any, Iterable[Any]], Any],
        flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]] | None,
    ) -> None:
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys


# type -> kind, for every registered node type (built-in or custom).
# Namedtuples are detected structurally and are not stored here.
_KIND: dict[type, int] = {
    type(None): _NONE,
    tuple: _TUPLE,
    list: _LIST,
    dict: _DICT,
    OrderedDict: _ODICT,
    defaultdict: _DDICT,
}
# type -> spec, for custom node types only.
_CUSTOM_SPECS: dict[type, _NodeSpec] = {}

_kind_get = _KIND.get


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError as e:
        raise ValueError(
            "Comparator raised exception while sorting pytree dictionary keys "
            f"{list(d)!r}: {e}"
        ) from e


# ---------------------------------------------------------------------------
# Key path entries.
# ---------------------------------------------------------------------------


class SequenceKey:
    """Key path entry for a child of a tuple or list, by position.

    Args:
      idx: position of the child.
    """

    __slots__ = ("idx",)

    def __init__(self, idx: int) -> None:
        self.idx = idx

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def __repr__(self) -> str:
        return f"SequenceKey(idx={self.idx!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is SequenceKey and other.idx == self.idx

    def __hash__(self) -> int:
        return hash((SequenceKey, self.idx))


class DictKey:
    """Key path entry for a child of a dict-like node, by key.

    Args:
      key: the (hashable) dict key of the child.
    """

    __slots__ = ("key",)

    def __init__(self, key: Hashable) -> None:
        self.key = key

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def __repr__(self) -> str:
        return f"DictKey(key={self.key!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is DictKey and other.key == self.key

    def __hash__(self) -> int:
        return hash((DictKey, self.key))


class GetAttrKey:
    """Key path entry for a child stored as an attribute (namedtuple, dataclass).

    Args:
      name: the attribute name of the child.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f".{self.name}"

    def __repr__(self) -> str:
        return f"GetAttrKey(name={self.name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is GetAttrKey and other.name == self.name

    def __hash__(self) -> int:
        return hash((GetAttrKey, self.name))


class FlattenedIndexKey:
    """Key path entry for a child of a custom node registered without keys.

    Args:
      key: position of the child among the node's flattened children.
    """

    __slots__ = ("key",)

    def __init__(self, key: int) -> None:
        self.key = key

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"

    def __repr__(self) -> str:
        return f"FlattenedIndexKey(key={self.key!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is FlattenedIndexKey and other.key == self.key

    def __hash__(self) -> int:
        return hash((FlattenedIndexKey, self.key))


KeyEntry = Union[SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey, Any]
KeyPath = tuple[KeyEntry, ...]


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Formats a key path as a string.

    Args:
      keys: a key path, as produced by :func:`tree_flatten_with_path`.
      simple: if True, format each entry by its bare index, key or name
        (``0``, ``a``, ``x``) instead of its Python-accessor form
        (``[0]``, ``['a']``, ``.x``).
      separator: string placed between entries.

    Returns:
      The formatted path, e.g. ``"['a'][0].x"`` (or ``"a/0/x"`` with
      ``simple=True, separator='/'``).
    """
    if not simple:
        return separator.join(str(k) for k in keys)
    parts = []
    for k in keys:
        tk = type(k)
        if tk is SequenceKey:
            parts.append(str(k.idx))
        elif tk is DictKey or tk is FlattenedIndexKey:
            parts.append(str(k.key))
        elif tk is GetAttrKey:
            parts.append(k.name)
        else:
            parts.append(str(k))
    return separator.join(parts)


# ---------------------------------------------------------------------------
# PyTreeDef.
# ---------------------------------------------------------------------------


class PyTreeDef:
    """Immutable description of the structure of a pytree.

    A ``PyTreeDef`` records the node types, their auxiliary data (dict keys,
    custom-node metadata) and the nesting, but not the leaves.  Two treedefs
    are equal when they have the same nesting, the same node types and equal
    auxiliary data; treedefs are hashable as long as the auxiliary data is.

    Obtain one from :func:`tree_flatten` or :func:`tree_structure`; do not
    construct it directly.
    """

    __slots__ = ("_kind", "_type", "_aux", "_children", "_num_leaves", "_num_nodes", "_hash")

    def __init__(
        self, kind: int, node_type: Any, aux: Any, children: tuple, num_leaves: int
    ) -> None:
        self._kind = kind
        self._type = node_type
        self._aux = aux
        self._children = children
        self._num_leaves = num_leaves
        # computed lazily (a None check: a fresh treedef is hashed on every jit call, and a
        # missing slot's AttributeError would cost more than the hash)
        self._num_nodes = None
        self._hash = None

    # -- basic properties ---------------------------------------------------

    @property
    def num_leaves(self) -> int:
        """Number of leaves of the structure."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes of the structure, counting leaves and ``None``."""
        n = self._num_nodes
        if n is None:
            n = self._num_nodes = 1 + sum(c.num_nodes for c in self._children)
        return n

    def children(self) -> list[PyTreeDef]:
        """Returns the treedefs of the root node's immediate children.

        Returns:
          A list of ``PyTreeDef``; empty for a leaf or ``None``.
        """
        return list(self._children)

    def node_data(self) -> tuple[type, Any] | None:
        """Returns the root node's type and auxiliary data.

        Returns:
          ``(node_type, aux_data)``, or ``None`` for a leaf.
        """
        if self._kind == _LEAF:
            return None
        return (self._type, self._aux)

    # -- immutability, hashing, equality -------------------------------------

    def __reduce__(self) -> tuple:
        return (PyTreeDef, (self._kind, self._type, self._aux, self._children, self._num_leaves))

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash((self._kind, self._type, self._aux, self._num_leaves,
                                   self._children))
        return h

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if (
            self._kind != other._kind
            or self._num_leaves != other._num_leaves
            or self._type is not other._type
            or len(self._children) != len(other._children)
        ):
            return False
        if self._aux is not other._aux and not bool(self._aux == other._aux):
            return False
        return self._children == other._children

    # -- repr -----------------------------------------------------------------

    def _str(self) -> str:
        kind = self._kind
        if kind == _LEAF:
            return "*"
        if kind == _NONE:
            return "None"
        kids = [c._str() for c in self._children]
        if kind == _TUPLE:
            if len(kids) == 1:
                return f"({kids[0]},)"
            return "(" + ", ".join(kids) + ")"
        if kind == _LIST:
            return "[" + ", ".join(kids) + "]"
        if kind == _DICT:
            return "{" + ", ".join(f"{k!r}: {s}" for k, s in zip(self._aux, kids)) + "}"
        if kind == _NAMEDTUPLE:
            name = f"namedtuple[{self._type.__name__}]"
        elif kind == _ODICT:
            name = f"OrderedDict[{self._aux!r}]"
        elif kind == _DDICT:
            name = f"defaultdict[{self._aux!r}]"
        else:
            name = f"{self._type.__name__}[{self._aux}]"
        return f"CustomNode({name}, [{', '.join(kids)}])"

    def __repr__(self) -> str:
        return f"PyTreeDef({self._str()})"

    __str__ = __repr__

    # -- operations ------------------------------------------------------------

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Builds a pytree of this structure from leaves.

        Args:
          leaves: iterable of exactly ``num_leaves`` leaves, in flattening order.

        Returns:
          The pytree with this structure whose leaves are ``leaves``.

        Raises:
          ValueError: if the number of leaves differs from ``num_leaves``.
        """
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        n = len(leaves)
        if n != self._num_leaves:
            if n < self._num_leaves:
                raise ValueError(
                    f"Too few leaves for PyTreeDef; expected {self._num_leaves}, got {n}."
                )
            raise ValueError(
                f"Too many leaves for PyTreeDef; expected {self._num_leaves}, got {n}."
            )
        if self._kind == _LEAF:
            return leaves[0]
        return _build(self, iter(leaves))

    def flatten_up_to(self, xs: Any) -> list[Any]:
        """Flattens ``xs`` down to the leaves of this structure.

        ``xs`` must have this structure at least down to this treedef's
        leaves; whatever subtree of ``xs`` sits at a leaf position is returned
        whole.

        Args:
          xs: a pytree having this treedef as a prefix.

        Returns:
          A list of ``num_leaves`` subtrees of ``xs``.

        Raises:
          ValueError: if ``xs`` does not match this structure.
        """
        out: list[Any] = []
        try:
            _flatten_up_to(self, xs, out)
        except _Mismatch as e:
            raise ValueError(
                f"Pytree structure mismatch at {_where(e.path)}: {e.msg}.\n"
                f"  expected structure: {self}\n"
                f"  got structure:      {_safe_structure(xs)}"
            ) from None
        return out

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """Composes two treedefs, replacing each leaf of this one by ``inner``.

        Args:
          inner: the treedef substituted at every leaf.

        Returns:
          The composed ``PyTreeDef``.
        """
        if self._kind == _LEAF:
            return inner
        kids = tuple(c.compose(inner) for c in self._children)
        n = self._num_leaves * inner._num_leaves
        return PyTreeDef(self._kind, self._type, self._aux, kids, n)


_LEAF_DEF = PyTreeDef(_LEAF, None, None, (), 1)
_NONE_DEF = PyTreeDef(_NONE, type(None), None, (), 0)


# ---------------------------------------------------------------------------
# Flattening.
# ---------------------------------------------------------------------------


def _flatten_result(r: Any) -> tuple[Any, Any]:
    """A registered flatten function's ``(children, aux_data)``, or JAX's ValueError for
    anything else (a bare list of children, a triple), never a bare unpacking error."""
    if isinstance(r, (tuple, list)) and len(r) == 2:
        return tuple(r)
    raise ValueError("The to_iterable function for a custom PyTree node should return a "
                     f"(children, aux_data) tuple, got {r!r}")


def _children_tuple(r: tuple) -> tuple:
    try:
        return tuple(r[0])
    except TypeError:
        raise ValueError("The to_iterable function for a custom PyTree node should return a "
                         f"(children, aux_data) tuple where 'children' is iterable, got "
                         f"{r!r}") from None


# Treedef children tuples for nodes whose children are all leaves, by arity.
_ALL_LEAVES = [(_LEAF_DEF,) * _n for _n in range(33)]


def _flatten(node: Any, leaves: list) -> PyTreeDef:
    t = type(node)
    kind = _kind_get(t)
    if kind is None:
        if issubclass(t, tuple) and hasattr(t, "_fields"):
            kind = _NAMEDTUPLE
        else:
            leaves.append(node)
            return _LEAF_DEF
    if kind == _NONE:
        return _NONE_DEF
    start = len(leaves)
    if kind == _TUPLE or kind == _LIST or kind == _NAMEDTUPLE:
        aux = None
        children = node
    elif kind == _DICT:
        try:
            aux = tuple(sorted(node))
        except TypeError:
            aux = _sorted_keys(node)  # raises a ValueError with context
        children = [node[k] for k in aux]
    elif kind == _CUSTOM:
        r = _CUSTOM_SPECS[t].flatten(node)
        if type(r) is not tuple or len(r) != 2:
            r = _flatten_result(r)
        children, aux = r
        if type(children) is not tuple and type(children) is not list:
            children = _children_tuple(r)
    elif kind == _ODICT:
        aux = tuple(node)
        children = [node[k] for k in aux]
    else:  # _DDICT
        keys = _sorted_keys(node)
        aux = (node.default_factory, keys)
        children = [node[k] for k in keys]
    # Fast path: every child is a leaf (an unregistered non-tuple type).
    for c in children:
        if type(c) in _KIND or isinstance(c, tuple):
            kids = tuple([_flatten(c, leaves) for c in children])
            break
    else:
        leaves.extend(children)
        n = len(leaves) - start
        return PyTreeDef(kind, t, aux, _ALL_LEAVES[n] if n < 33 else (_LEAF_DEF,) * n, n)
    return PyTreeDef(kind, t, aux, kids, len(leaves) - start)


def _flatten_is_leaf(node: Any, leaves: list, is_leaf: Callable[[Any], bool]) -> PyTreeDef:
    if is_leaf(node):
        leaves.append(node)
        return _LEAF_DEF
    t = type(node)
    kind = _kind_get(t)
    if kind is None:
        if issubclass(t, tuple) and hasattr(t, "_fields"):
            kind = _NAMEDTUPLE
        else:
            leaves.append(node)
            return _LEAF_DEF
    if kind == _NONE:
        return _NONE_DEF
    start = len(leaves)
    if kind == _TUPLE or kind == _LIST or kind == _NAMEDTUPLE:
        aux = None
        children = node
    elif kind == _DICT:
        aux = _sorted_keys(node)
        children = [node[k] for k in aux]
    elif kind == _CUSTOM:
        children, aux = _flatten_result(_CUSTOM_SPECS[t].flatten(node))
        children = _children_tuple((children, aux))
    elif kind == _ODICT:
        aux = tuple(node)
        children = [node[k] for k in aux]
    else:  # _DDICT
        keys = _sorted_keys(node)
        aux = (node.default_factory, keys)
        children = [node[k] for k in keys]
    kids = tuple([_flatten_is_leaf(c, leaves, is_leaf) for c in children])
    return PyTreeDef(kind, t, aux, kids, len(leaves) - start)


def _keyed_children(node: Any, t: type, kind: int) -> tuple[list, list, Any]:
    """Returns (keys, children, aux) of a non-leaf, non-None node."""
    if kind == _TUPLE or kind == _LIST:
        return [SequenceKey(i) for i in range(len(node))], list(node), None
    if kind == _NAMEDTUPLE:
        # the tuple's own iterator: list(node) would call an overridden __len__ for its hint
        return [GetAttrKey(f) for f in t._fields], list(tuple.__iter__(node)), None
    if kind == _DICT or kind == _ODICT or kind == _DDICT:
        keys = tuple(node) if kind == _ODICT else _sorted_keys(node)
        aux = (node.default_factory, keys) if kind == _DDICT else keys
        return [DictKey(k) for k in keys], [node[k] for k in keys], aux
    spec = _CUSTOM_SPECS[t]
    if spec.flatten_with_keys is not None:
        keyed, aux = spec.flatten_with_keys(node)
        keys = []
        children = []
        for k, c in keyed:
            keys.append(k)
            children.append(c)
        return keys, children, aux
    children, aux = _flatten_result(spec.flatten(node))
    children = list(_children_tuple((children, aux)))
    return [FlattenedIndexKey(i) for i in range(len(children))], children, aux


def _flatten_with_path(
    node: Any, path: tuple, out: list, is_leaf: Callable[..., bool] | None,
    takes_path: bool = False
) -> PyTreeDef:
    if is_leaf is not None and (is_leaf(path, node) if takes_path else is_leaf(node)):
        out.append((path, node))
        return _LEAF_DEF
    t = type(node)
    kind = _kind_get(t)
    if kind is None:
        if issubclass(t, tuple) and hasattr(t, "_fields"):
            kind = _NAMEDTUPLE
        else:
            out.append((path, node))
            return _LEAF_DEF
    if kind == _NONE:
        return _NONE_DEF
    start = len(out)
    keys, children, aux = _keyed_children(node, t, kind)
    kids = tuple([_flatten_with_path(c, path + (k,), out, is_leaf, takes_path)
                  for k, c in zip(keys, children)])
    return PyTreeDef(kind, t, aux, kids, len(out) - start)


def _build(td: PyTreeDef, it: Any) -> Any:
    kind = td._kind
    if kind == _LEAF:
        return next(it)
    if kind == _NONE:
        return None
    leaf = _LEAF_DEF
    kids = [next(it) if c is leaf else _build(c, it) for c in td._children]
    if kind == _TUPLE:
        return tuple(kids)
    if kind == _LIST:
        return kids
    if kind == _DICT:
        return dict(zip(td._aux, kids))
    if kind == _NAMEDTUPLE:
        return td._type(*kids)
    if kind == _CUSTOM:
        return _CUSTOM_SPECS[td._type].unflatten(td._aux, tuple(kids))
    if kind == _ODICT:
        return OrderedDict(zip(td._aux, kids))
    factory, keys = td._aux
    return defaultdict(factory, zip(keys, kids))


class _Mismatch(Exception):
    """Internal: structure mismatch in flatten_up_to; path built on unwind."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg
        self.path: list = []  # innermost key first


def _type_name(t: type) -> str:
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _flatten_up_to(td: PyTreeDef, x: Any, out: list) -> None:
    kind = td._kind
    if kind == _LEAF:
        out.append(x)
        return
    if kind == _NONE:
        if x is not None:
            raise _Mismatch(f"expected None, got a value of type {_type_name(type(x))}")
        return
    t = type(x)
    if t is not td._type:
        raise _Mismatch(
            f"expected a node of type {_type_name(td._type)}, got a value of type {_type_name(t)}"
        )
    tkids = td._children
    if kind == _TUPLE or kind == _LIST or kind == _NAMEDTUPLE:
        # the tuple's own length: a namedtuple may define __len__ (Rotation's counts rotations)
        n = len(x) if kind == _LIST else tuple.__len__(x)
        if n != len(tkids):
            raise _Mismatch(
                f"expected a {_type_name(t)} of length {len(tkids)}, got length {n}"
            )
        children = x
    elif kind == _DICT or kind == _ODICT or kind == _DDICT:
        keys = td._aux[1] if kind == _DDICT else td._aux
        got = tuple(x) if kind == _ODICT else _sorted_keys(x)
        if got != keys:
            raise _Mismatch(f"expected {_type_name(t)} keys {list(keys)!r}, got keys {list(got)!r}")
        if kind == _DDICT and x.default_factory != td._aux[0]:
            raise _Mismatch(
                f"expected defaultdict with default_factory {td._aux[0]!r}, "
                f"got {x.default_factory!r}"
            )
        children = [x[k] for k in keys]
    else:  # _CUSTOM
        children, aux = _flatten_result(_CUSTOM_SPECS[t].flatten(x))
        children = list(children)
        if not (aux is td._aux or bool(aux == td._aux)):
            raise _Mismatch(
                f"expected {_type_name(t)} node with aux data {td._aux!r}, got aux data {aux!r}"
            )
        if len(children) != len(tkids):
            raise _Mismatch(
                f"expected {_type_name(t)} node with {len(tkids)} children, got {len(children)}"
            )
    for i, (sub, c) in enumerate(zip(tkids, children)):
        try:
            _flatten_up_to(sub, c, out)
        except _Mismatch as e:
            e.path.append(_child_key(td, i))
            raise


def _child_key(td: PyTreeDef, i: int) -> Any:
    kind = td._kind
    if kind == _TUPLE or kind == _LIST:
        return SequenceKey(i)
    if kind == _NAMEDTUPLE:
        return GetAttrKey(td._type._fields[i])
    if kind == _DICT or kind == _ODICT:
        return DictKey(td._aux[i])
    if kind == _DDICT:
        return DictKey(td._aux[1][i])
    return FlattenedIndexKey(i)


def _where(rev_path: list) -> str:
    s = keystr(tuple(reversed(rev_path)))
    return f"path {s}" if s else "the root"


def _never(x: Any) -> bool:
    return False


def _make_room(op: str, tree: Any, is_leaf: Callable[[Any], bool] | None) -> None:
    """After a RecursionError flattening ``tree``: a ValueError naming ``op`` if the tree
    contains itself, else room on the stack for its depth (so the caller can retry once)."""
    def children(node: Any) -> Any:
        if is_leaf is not None and is_leaf(node):
            return None
        t = type(node)
        kind = _kind_get(t)
        if kind is None:
            if not (issubclass(t, tuple) and hasattr(t, "_fields")):
                return None
            kind = _NAMEDTUPLE
        return () if kind == _NONE else _keyed_children(node, t, kind)[1]

    ensure_headroom(4 * structure_depth(tree, children, op) + 200)


def _safe_structure(x: Any, is_leaf: Callable[[Any], bool] | None = None) -> str:
    try:
        return repr(tree_structure(x, is_leaf))
    except Exception as e:  # pragma: no cover - only for error messages
        return f"<unavailable: {e}>"


# ---------------------------------------------------------------------------
# Public API.
# ---------------------------------------------------------------------------


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Flattens a pytree into its leaves and structure.

    Args:
      tree: the pytree to flatten.
      is_leaf: optional predicate called on every subtree; a subtree for which
        it returns True is treated as a leaf and not flattened further.

    Returns:
      A pair ``(leaves, treedef)``: the list of leaves in flattening order
      (dicts in sorted-key order) and the ``PyTreeDef`` of ``tree``.
    """
    leaves: list[Any] = []
    try:
        if is_leaf is None:
            treedef = _flatten(tree, leaves)
        else:
            treedef = _flatten_is_leaf(tree, leaves, is_leaf)
    except RecursionError:
        _make_room("tree_flatten", tree, is_leaf)
        leaves = []
        treedef = _flatten_is_leaf(tree, leaves, is_leaf or _never)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Builds a pytree from a treedef and leaves.

    Args:
      treedef: the structure, e.g. from :func:`tree_flatten`.
      leaves: iterable of exactly ``treedef.num_leaves`` leaves.

    Returns:
      The pytree with structure ``treedef`` and leaves ``leaves``.

    Raises:
      ValueError: if the number of leaves does not match ``treedef``.
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """Returns the leaves of a pytree.

    Args:
      tree: the pytree.
      is_leaf: optional predicate marking subtrees to be treated as leaves.

    Returns:
      The list of leaves, in flattening order.
    """
    leaves: list[Any] = []
    try:
        if is_leaf is None:
            _flatten(tree, leaves)
        else:
            _flatten_is_leaf(tree, leaves, is_leaf)
    except RecursionError:
        _make_room("tree_leaves", tree, is_leaf)
        leaves = []
        _flatten_is_leaf(tree, leaves, is_leaf or _never)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """Returns the structure of a pytree.

    Args:
      tree: the pytree.
      is_leaf: optional predicate marking subtrees to be treated as leaves.

    Returns:
      The ``PyTreeDef`` of ``tree``.
    """
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Tells whether a treedef is that of a single leaf.

    Args:
      treedef: the treedef.

    Returns:
      True if ``treedef`` describes a lone leaf.
    """
    return treedef._kind == _LEAF


def builtin_template(treedef: PyTreeDef) -> Any:
    """The tree built with ``...`` at each leaf when its nodes are only ``None``, tuples, lists,
    dicts and namedtuples (the template the C jit call path walks arguments against), else
    ``None``."""
    kind = treedef._kind
    if kind == _LEAF:
        return ...
    if kind == _NONE:
        return None
    if kind not in (_TUPLE, _LIST, _DICT, _NAMEDTUPLE):
        return None
    kids = []
    for c in treedef._children:
        k = builtin_template(c)
        if k is None and c._kind != _NONE:
            return None
        kids.append(k)
    if kind == _TUPLE:
        return tuple(kids)
    if kind == _LIST:
        return kids
    if kind == _DICT:
        return dict(zip(treedef._aux, kids))
    return tuple.__new__(treedef._type, kids)  # (no user __new__: a template, not a value)


def _flatten_rest(
    treedef: PyTreeDef, rest: Sequence[Any], is_leaf: Callable[[Any], bool] | None, fname: str
) -> list[list[Any]]:
    all_leaves = []
    for i, r in enumerate(rest, start=1):
        out: list[Any] = []
        try:
            _flatten_up_to(treedef, r, out)
        except _Mismatch as e:
            raise ValueError(
                f"{fname}: tree {i + 1} does not match the structure of tree 1 (the first "
                f"tree) at {_where(e.path)}: {e.msg}.\n"
                f"  tree 1 structure: {treedef}\n"
                f"  tree {i + 1} structure: {_safe_structure(r, is_leaf)}"
            ) from None
        all_leaves.append(out)
    return all_leaves


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Maps a function over the leaves of one or more pytrees.

    Args:
      f: function called as ``f(x, *xs)`` for each leaf ``x`` of ``tree``,
        where ``xs`` are the corresponding subtrees of ``rest``.
      tree: the pytree whose structure determines the leaves and the result.
      *rest: further pytrees, each having ``tree``'s structure as a prefix: a
        leaf of ``tree`` may correspond to a whole subtree of another tree,
        which is passed to ``f`` as is.
      is_leaf: optional predicate marking subtrees of ``tree`` to be treated
        as leaves.

    Returns:
      A pytree with the structure of ``tree`` whose leaves are the results
      of ``f``.

    Raises:
      ValueError: if some tree in ``rest`` does not match ``tree``'s structure.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = _flatten_rest(treedef, rest, is_leaf, "tree_map")
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


_MISSING: Any = object()


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _MISSING,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Reduces the leaves of a pytree with a binary function, left to right.

    Args:
      function: binary function ``function(accumulated, leaf)``.
      tree: the pytree to reduce.
      initializer: optional initial accumulated value.
      is_leaf: optional predicate marking subtrees to be treated as leaves.

    Returns:
      The reduction, as ``functools.reduce`` over the leaves.

    Raises:
      TypeError: if the tree has no leaves and no initializer is given.
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Tells whether all leaves of a pytree are truthy.

    Args:
      tree: the pytree.
      is_leaf: optional predicate marking subtrees to be treated as leaves.

    Returns:
      ``all(tree_leaves(tree))``; True for a tree without leaves.
    """
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Transposes a pytree of pytrees (outer of inner) into inner of outer.

    Args:
      outer_treedef: structure of the outer pytree.
      inner_treedef: structure of each inner pytree; if None, it is inferred
        from the first inner pytree.
      pytree_to_transpose: a pytree with structure
        ``outer_treedef.compose(inner_treedef)``.

    Returns:
      A pytree with structure ``inner_treedef`` whose leaves are pytrees with
      structure ``outer_treedef``.

    Raises:
      TypeError: if ``pytree_to_transpose`` does not have the composed
        structure.
    """
    if inner_treedef is None:
        subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not subtrees:
            raise ValueError("tree_transpose cannot infer inner_treedef: outer tree has no leaves")
        inner_treedef = tree_structure(subtrees[0])
    flat, treedef = tree_flatten(pytree_to_transpose)
    expected = outer_treedef.compose(inner_treedef)
    if treedef != expected:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    inner_n = inner_treedef.num_leaves
    # flat is outer-major: flat[o * inner_n + i].
    transposed = [outer_treedef.unflatten(flat[i::inner_n]) for i in range(inner_n)]
    return inner_treedef.unflatten(transposed)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Flattens a pytree, pairing each leaf with its key path.

    Args:
      tree: the pytree to flatten.
      is_leaf: optional predicate marking subtrees to be treated as leaves.
      is_leaf_takes_path: call ``is_leaf(key_path, subtree)`` instead of ``is_leaf(subtree)``.

    Returns:
      A pair ``(pairs, treedef)`` where ``pairs`` is a list of
      ``(key_path, leaf)`` in flattening order; ``key_path`` is a tuple of
      :class:`SequenceKey`, :class:`DictKey`, :class:`GetAttrKey` or
      :class:`FlattenedIndexKey` (or custom keys) from the root to the leaf.
    """
    out: list[tuple[KeyPath, Any]] = []
    try:
        treedef = _flatten_with_path(tree, (), out, is_leaf, is_leaf_takes_path)
    except RecursionError:
        _make_room("tree_flatten_with_path", tree,
                   None if is_leaf_takes_path else is_leaf)
        out = []
        treedef = _flatten_with_path(tree, (), out, is_leaf, is_leaf_takes_path)
    return out, treedef


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """Returns the leaves of a pytree paired with their key paths.

    Args:
      tree: the pytree.
      is_leaf: optional predicate marking subtrees to be treated as leaves.
      is_leaf_takes_path: call ``is_leaf(key_path, subtree)`` instead of ``is_leaf(subtree)``.

    Returns:
      A list of ``(key_path, leaf)`` in flattening order.
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Maps a function of (key path, leaves) over one or more pytrees.

    Args:
      f: function called as ``f(key_path, x, *xs)`` for each leaf ``x`` of
        ``tree``, where ``xs`` are the corresponding subtrees of ``rest``.
      tree: the pytree whose structure determines the leaves and the result.
      *rest: further pytrees having ``tree``'s structure as a prefix.
      is_leaf: optional predicate marking subtrees of ``tree`` to be treated
        as leaves.
      is_leaf_takes_path: call ``is_leaf(key_path, subtree)`` instead of ``is_leaf(subtree)``.

    Returns:
      A pytree with the structure of ``tree`` whose leaves are the results
      of ``f``.

    Raises:
      ValueError: if some tree in ``rest`` does not match ``tree``'s structure.
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    if not rest:
        return treedef.unflatten([f(p, x) for p, x in pairs])
    others = _flatten_rest(treedef, rest, is_leaf, "tree_map_with_path")
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


# ---------------------------------------------------------------------------
# Registration.
# ---------------------------------------------------------------------------


def _register(nodetype: type, spec: _NodeSpec) -> None:
    if not isinstance(nodetype, type):
        raise TypeError(f"Expected a type to register as a pytree node, got {nodetype!r}")
    if nodetype in _KIND:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _CUSTOM_SPECS[nodetype] = spec
    _KIND[nodetype] = _CUSTOM


def register_pytree_node(
    nodetype: type[_T],
    flatten_func: Callable[[_T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], _T],
) -> None:
    """Registers a type as a pytree node.

    Args:
      nodetype: the type to register; instances of exactly this type (not of
        subclasses) are treated as nodes.
      flatten_func: ``flatten_func(node) -> (children, aux_data)``; ``children``
        is an iterable of subtrees and ``aux_data`` hashable, comparable
        metadata that becomes part of the treedef.
      unflatten_func: ``unflatten_func(aux_data, children) -> node``; receives
        the children as a tuple.

    Raises:
      ValueError: if ``nodetype`` is already registered.
    """
    _register(nodetype, _NodeSpec(flatten_func, unflatten_func, None))


def register_pytree_with_keys(
    nodetype: type[_T],
    flatten_with_keys: Callable[[_T], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], _T],
    flatten_func: Callable[[_T], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Registers a type as a pytree node whose children carry key path entries.

    Args:
      nodetype: the type to register.
      flatten_with_keys: ``flatten_with_keys(node) -> (((key, child), ...),
        aux_data)``; the keys appear in paths from
        :func:`tree_flatten_with_path`.
      unflatten_func: ``unflatten_func(aux_data, children) -> node``.
      flatten_func: optional faster ``flatten_func(node) -> (children,
        aux_data)``; derived from ``flatten_with_keys`` if omitted.

    Raises:
      ValueError: if ``nodetype`` is already registered.
    """
    if flatten_func is None:

        def flatten_func(node: Any) -> tuple[list[Any], Any]:
            keyed, aux = flatten_with_keys(node)
            return [c for _, c in keyed], aux

    _register(nodetype, _NodeSpec(flatten_func, unflatten_func, flatten_with_keys))


def register_pytree_node_class(cls: type[_T]) -> type[_T]:
    """Class decorator registering a class as a pytree node.

    The class must define a method ``tree_flatten(self) -> (children,
    aux_data)`` and a classmethod ``tree_unflatten(cls, aux_data, children)``.

    Args:
      cls: the class to register.

    Returns:
      ``cls`` itself.

    Raises:
      ValueError: if ``cls`` is already registered.
    """
    register_pytree_node(cls, cls.tree_flatten, cls.tree_unflatten)
    return cls


def register_dataclass(
    nodetype: type[_T] | None = None,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> type[_T]:
    """Registers a dataclass-like type as a pytree node, by field names.

    Data fields are the node's children; meta fields are static metadata,
    stored in the treedef (so they must be hashable and are compared in
    treedef equality).  Usable as a bare decorator on a dataclass, in which
    case the fields are inferred: fields declared with
    ``dataclasses.field(metadata=dict(static=True))`` are meta fields, the
    other ``init=True`` fields are data fields.

    Also usable as ``@register_dataclass(data_fields=[...], meta_fields=[...])``.

    Args:
      nodetype: the class to register; rebuilt as
        ``nodetype(**data, **meta)``.  If None, returns a decorator taking the
        class.
      data_fields: names of the child fields, or None to infer (dataclasses
        only).
      meta_fields: names of the static fields, or None to infer (dataclasses
        only).
      drop_fields: ``init=True`` fields that are neither: dropped when flattening (the
        rebuilt node gets their defaults).

    Returns:
      ``nodetype`` itself (or a decorator, if ``nodetype`` is None).

    Raises:
      TypeError: if only one of ``data_fields``/``meta_fields`` is given, if
        they must be inferred from a non-dataclass, or if they do not cover
        exactly the ``init=True`` fields of a dataclass.
      ValueError: if ``nodetype`` is already registered.
    """
    if nodetype is None:
        return functools.partial(  # type: ignore[return-value]
            register_dataclass, data_fields=data_fields, meta_fields=meta_fields,
            drop_fields=drop_fields)
    drop_fields = tuple(drop_fields)
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when "
                f"{nodetype!r} is not a dataclass"
            )
        data_fields, meta_fields = [], []
        for fld in dataclasses.fields(nodetype):
            if not fld.init or fld.name in drop_fields:
                continue
            (meta_fields if fld.metadata.get("static", False) else data_fields).append(fld.name)
    elif data_fields is None or meta_fields is None:
        raise TypeError(
            "register_dataclass: data_fields and meta_fields must both be given, or both omitted"
        )
    data_fields = tuple(data_fields)
    meta_fields = tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        given = set(data_fields) | set(meta_fields)
        if given != init_fields or len(given) != len(data_fields) + len(meta_fields):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields must list each init=True "
                f"field of {nodetype.__name__} exactly once; fields are {sorted(init_fields)}, "
                f"got data_fields={list(data_fields)}, meta_fields={list(meta_fields)}"
            )

    def flatten(x: Any) -> tuple[tuple, tuple]:
        return (
            tuple([getattr(x, n) for n in data_fields]),
            tuple([getattr(x, n) for n in meta_fields]),
        )

    def flatten_with_keys(x: Any) -> tuple[tuple, tuple]:
        return (
            tuple([(GetAttrKey(n), getattr(x, n)) for n in data_fields]),
            tuple([getattr(x, n) for n in meta_fields]),
        )

    def unflatten(meta: tuple, data: Iterable[Any]) -> Any:
        kwargs = dict(zip(data_fields, data))
        kwargs.update(zip(meta_fields, meta))
        return nodetype(**kwargs)

    _register(nodetype, _NodeSpec(flatten, unflatten, flatten_with_keys))
    return nodetype
