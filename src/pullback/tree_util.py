"""``pullback.tree_util``: pytrees with ``jax.tree_util``'s API and rules."""
from __future__ import annotations

import functools as _functools
import operator as _operator
from typing import Any as _Any, Callable as _Callable, Iterable as _Iterable

from .tracer import pytree as _pytree
from .tracer.pytree import *  # noqa: F401,F403
from .tracer.pytree import __all__ as _core_all
from .tracer.pytree import (PyTreeDef, register_pytree_node, register_pytree_with_keys,
                            tree_flatten, tree_leaves, tree_structure)

__all__ = list(_core_all) + [
    "BuiltInKeyEntry", "Partial", "all_leaves", "default_registry",
    "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
    "register_pytree_with_keys_class", "register_static", "tree_broadcast",
    "tree_reduce_associative", "treedef_children", "treedef_tuple"]

BuiltInKeyEntry = _pytree.SequenceKey | _pytree.DictKey | _pytree.GetAttrKey | \
    _pytree.FlattenedIndexKey


class Partial(_functools.partial):
    """A ``functools.partial`` that is a pytree: its bound arguments are the children, the
    function is static (so it can be passed to and returned from transformed functions).

    Example::

        >>> add_one = Partial(jnp.add, 1.0)
        >>> jax.jit(lambda f, x: f(x))(add_one, 2.0)   # 3.0
    """

    def __new__(cls, func: _Callable[..., _Any], *args: _Any, **kw: _Any) -> "Partial":
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(Partial,
                     lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))


class _Registry:
    """The default pytree registry, as ``jax.tree_util.default_registry``: flattening with
    the registered node types."""

    def flatten(self, tree: _Any, leaf_predicate: _Callable[[_Any], bool] | None = None
                ) -> tuple[list, PyTreeDef]:
        return tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree: _Any) -> tuple[_Iterable[_Any], _Any] | None:
        """(children, aux data) of ``tree``'s root node, or None when it is a leaf."""
        t = type(tree)
        kind = _pytree._kind_get(t)
        if kind is None:
            if not (issubclass(t, tuple) and hasattr(t, "_fields")):
                return None
            kind = _pytree._NAMEDTUPLE
        if kind == _pytree._NONE:
            return (), None
        keys, children, aux = _pytree._keyed_children(tree, t, kind)
        return tuple(children), aux

    def flatten_one_level_with_keys(self, tree: _Any) -> tuple[list, _Any] | None:
        t = type(tree)
        kind = _pytree._kind_get(t)
        if kind is None:
            if not (issubclass(t, tuple) and hasattr(t, "_fields")):
                return None
            kind = _pytree._NAMEDTUPLE
        if kind == _pytree._NONE:
            return (), None
        keys, children, aux = _pytree._keyed_children(tree, t, kind)
        return tuple(zip(keys, children)), aux

    def register_node(self, nodetype: type, flatten_func: _Callable, unflatten_func: _Callable,
                      flatten_with_keys_func: _Callable | None = None) -> None:
        if flatten_with_keys_func is None:
            register_pytree_node(nodetype, flatten_func, unflatten_func)
        else:
            register_pytree_with_keys(nodetype, flatten_with_keys_func, unflatten_func,
                                      flatten_func)

    def __repr__(self) -> str:
        return "<pullback.tree_util.default_registry>"


default_registry = _Registry()


def flatten_one_level(tree: _Any) -> tuple[_Iterable[_Any], _Any]:
    """Flattens only the root node of ``tree``: (its children, its aux data).

    Raises:
      ValueError: ``tree`` is a leaf.
    """
    out = default_registry.flatten_one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_one_level_with_keys(tree: _Any) -> tuple[list[tuple[_Any, _Any]], _Any]:
    """As ``flatten_one_level``, each child paired with its key entry.

    Raises:
      ValueError: ``tree`` is a leaf.
    """
    out = default_registry.flatten_one_level_with_keys(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def is_tree_node(typ: type) -> bool:
    """True when ``typ`` is a registered pytree node type (built-in or custom) or a
    namedtuple type."""
    return typ in _pytree._KIND or (isinstance(typ, type) and issubclass(typ, tuple) and
                                    hasattr(typ, "_fields"))


def all_leaves(iterable: _Iterable[_Any], is_leaf: _Callable[[_Any], bool] | None = None
               ) -> bool:
    """True when every element of ``iterable`` is a leaf (``None`` is not)."""
    items = list(iterable)
    if is_leaf is None:
        return all(default_registry.flatten_one_level(x) is None for x in items)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: registers ``cls`` by its ``tree_flatten_with_keys`` method and
    ``tree_unflatten`` classmethod (and ``tree_flatten``, when it has one)."""
    flatten = _operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, _operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten)
    return cls


def register_static(cls: type) -> type:
    """Registers ``cls`` as a node with no children: its instances are static metadata of a
    tree (they must be hashable)."""
    register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def tree_broadcast(prefix_tree: _Any, full_tree: _Any,
                   is_leaf: _Callable[[_Any], bool] | None = None) -> _Any:
    """``full_tree``'s structure with each leaf of ``prefix_tree`` repeated over the subtree
    of ``full_tree`` it is a prefix of."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = prefix_def.flatten_up_to(full_tree)
    out = []
    for p, sub in zip(prefix_leaves, subtrees):
        out.extend([p] * len(tree_leaves(sub, is_leaf)))
    return tree_structure(full_tree, is_leaf).unflatten(out)


_NO_IDENTITY: _Any = object()


def tree_reduce_associative(operation: _Callable[[_Any, _Any], _Any], tree: _Any, *,
                            identity: _Any = _NO_IDENTITY,
                            is_leaf: _Callable[[_Any], bool] | None = None) -> _Any:
    """Reduces the leaves pairwise (a balanced tree of ``operation`` calls, fewer sequential
    steps than ``tree_reduce``; ``operation`` must be associative).

    Raises:
      TypeError: the tree has no leaves and no ``identity`` is given.
    """
    seq = tree_leaves(tree, is_leaf)
    if not seq:
        if identity is _NO_IDENTITY:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    while len(seq) > 1:  # JAX's pairing: an odd one out joins its left neighbour first
        if len(seq) % 2:
            seq = seq[:-2] + [operation(seq[-2], seq[-1])]
        seq = [operation(a, b) for a, b in zip(seq[::2], seq[1::2])]
    return seq[0]


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The treedefs of the root node's children."""
    return treedef.children()


def treedef_tuple(treedefs: _Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have the structures ``treedefs``."""
    kids = tuple(treedefs)
    return PyTreeDef(_pytree._TUPLE, tuple, None, kids, sum(k.num_leaves for k in kids))


def __dir__() -> list[str]:
    return sorted(__all__)
