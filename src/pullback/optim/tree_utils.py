"""``pullback.optim.tree_utils``: arithmetic on pytrees and helpers to read and edit
optimizer states (optax's ``tree_utils``)."""
from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Any, Callable, Optional, Protocol, Union, runtime_checkable

import numpy as np

from .. import numpy as jnp
from .. import tree_util
from ..tracer import dtypes as _dtypes
from ._numerics import abs_sq

__all__ = [
    "NamedTupleKey", "tree_add", "tree_add_scale", "tree_allclose", "tree_batch_shape",
    "tree_bias_correction", "tree_cast", "tree_cast_like", "tree_clip", "tree_conj",
    "tree_div", "tree_dtype", "tree_full_like", "tree_get", "tree_get_all_with_path",
    "tree_map_params", "tree_max", "tree_min", "tree_mul", "tree_norm", "tree_ones_like",
    "tree_real", "tree_scale", "tree_set", "tree_size", "tree_sub", "tree_sum",
    "tree_update_infinity_moment", "tree_update_moment", "tree_update_moment_per_elem_norm",
    "tree_vdot", "tree_where", "tree_zeros_like",
]

_tmap = tree_util.tree_map


def _is_none(x: Any) -> bool:
    return x is None


def canonicalize_dtype(dtype: Any) -> Optional[np.dtype]:
    """The dtype arrays of ``dtype`` get (64-bit narrowed while x64 is off); None stays None."""
    if dtype is None:
        return None
    return _dtypes.canonical(_dtypes.canonicalize(dtype))


# ---------------------------------------------------------------------------
# Arithmetic.
# ---------------------------------------------------------------------------

def tree_add(tree_x: Any, tree_y: Any, *other_trees: Any) -> Any:
    """Leafwise sum of two or more pytrees of the same structure.

    Args:
      tree_x: a pytree.
      tree_y: a pytree.
      *other_trees: more pytrees to add.

    Returns:
      The pytree of sums.
    """
    return _tmap(lambda *leaves: sum(leaves), tree_x, tree_y, *other_trees)


def tree_sub(tree_x: Any, tree_y: Any) -> Any:
    """Leafwise difference ``tree_x - tree_y``.

    Args:
      tree_x: a pytree.
      tree_y: a pytree of the same structure.

    Returns:
      The pytree of differences.
    """
    return _tmap(operator.sub, tree_x, tree_y)


def tree_mul(tree_x: Any, tree_y: Any) -> Any:
    """Leafwise product ``tree_x * tree_y``.

    Args:
      tree_x: a pytree.
      tree_y: a pytree of the same structure.

    Returns:
      The pytree of products.
    """
    return _tmap(operator.mul, tree_x, tree_y)


def tree_div(tree_x: Any, tree_y: Any) -> Any:
    """Leafwise quotient ``tree_x / tree_y``.

    Args:
      tree_x: a pytree.
      tree_y: a pytree of the same structure.

    Returns:
      The pytree of quotients.
    """
    return _tmap(operator.truediv, tree_x, tree_y)


def tree_scale(scalar: Any, tree: Any) -> Any:
    """``scalar * tree`` leaf by leaf.

    Args:
      scalar: a scalar.
      tree: a pytree.

    Returns:
      The scaled pytree.
    """
    return _tmap(lambda x: scalar * x, tree)


def tree_add_scale(tree_x: Any, scalar: Any, tree_y: Any) -> Any:
    """``tree_x + scalar * tree_y`` leaf by leaf (None leaves of ``tree_x`` stay None).

    Args:
      tree_x: a pytree.
      scalar: a scalar.
      tree_y: a pytree of the same structure.

    Returns:
      The pytree ``tree_x + scalar * tree_y``.
    """
    scalar = jnp.asarray(scalar)
    return _tmap(lambda x, y: None if x is None else x + scalar * y, tree_x, tree_y,
                 is_leaf=_is_none)


def _vdot(a: Any, b: Any) -> Any:
    a, b = jnp.asarray(a), jnp.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"tree_vdot: leaves of shapes {a.shape} and {b.shape} differ")
    return jnp.vdot(a, b)  # conjugates a, as optax's inner product does


def tree_vdot(tree_x: Any, tree_y: Any) -> Any:
    """The inner product ``sum(conj(x) * y)`` over all leaves of two pytrees.

    Args:
      tree_x: a pytree.
      tree_y: a pytree of the same structure.

    Returns:
      A scalar.
    """
    return tree_util.tree_reduce(operator.add, _tmap(_vdot, tree_x, tree_y), initializer=0)


def tree_sum(tree: Any, associative_reduction: bool = False) -> Any:
    """The sum of all elements of all leaves.

    Args:
      tree: a pytree.
      associative_reduction: accepted for optax compatibility; the leaves are summed left to
        right either way.

    Returns:
      A scalar.
    """
    del associative_reduction
    return tree_util.tree_reduce(operator.add, _tmap(jnp.sum, tree), initializer=0)


def tree_max(tree: Any) -> Any:
    """The largest element over all leaves (``-inf`` for an empty tree).

    Args:
      tree: a pytree.

    Returns:
      A scalar.
    """
    maxes = _tmap(lambda a: None if np.size(a) == 0 else jnp.max(a), tree)
    return tree_util.tree_reduce(jnp.maximum, maxes, initializer=-float("inf"))


def tree_min(tree: Any) -> Any:
    """The smallest element over all leaves (``inf`` for an empty tree).

    Args:
      tree: a pytree.

    Returns:
      A scalar.
    """
    mins = _tmap(lambda a: None if np.size(a) == 0 else jnp.min(a), tree)
    return tree_util.tree_reduce(jnp.minimum, mins, initializer=float("inf"))


def tree_size(tree: Any) -> int:
    """The total number of elements of the leaves.

    Args:
      tree: a pytree.

    Returns:
      A Python int.
    """
    return sum(int(np.size(leaf)) for leaf in tree_util.tree_leaves(tree))


def tree_conj(tree: Any) -> Any:
    """The complex conjugate of every leaf.

    Args:
      tree: a pytree.

    Returns:
      A pytree of the same structure.
    """
    return _tmap(jnp.conj, tree)


def tree_real(tree: Any) -> Any:
    """The real part of every leaf.

    Args:
      tree: a pytree.

    Returns:
      A pytree of the same structure.
    """
    return _tmap(jnp.real, tree)


def _square(leaf: Any) -> Any:
    leaf = jnp.asarray(leaf)
    return jnp.square(leaf.real) + jnp.square(leaf.imag)


def tree_norm(tree: Any, ord: Union[int, str, float, None] = None,  # noqa: A002
              squared: bool = False) -> Any:
    """The vector norm of all leaves taken together.

    Args:
      tree: a pytree.
      ord: ``None`` or ``2`` (Euclidean), ``1``, or ``inf`` (also ``'inf'``, ``'infinity'``).
      squared: return the norm squared.

    Returns:
      A scalar array.
    """
    if ord is None or ord == 2:
        sqnorm = tree_sum(_tmap(_square, tree))
        return jnp.array(sqnorm if squared else jnp.sqrt(sqnorm))
    if ord == 1:
        ret = tree_sum(_tmap(jnp.abs, tree))
    elif ord == jnp.inf or ord in ("inf", "infinity"):
        ret = tree_max(_tmap(jnp.abs, tree))
    else:
        raise ValueError(f"tree_norm: unsupported ord {ord!r}; expected None, 1, 2 or inf")
    return jnp.array(_square(ret) if squared else ret)


def tree_batch_shape(tree: Any, shape: tuple[int, ...] = ()) -> Any:
    """Broadcasts every leaf to leading batch dimensions ``shape``.

    Args:
      tree: a pytree.
      shape: the leading dimensions to add.

    Returns:
      A pytree whose leaves have shape ``(*shape, *leaf.shape)``.
    """
    return _tmap(lambda x: jnp.broadcast_to(x, (*shape, *np.shape(x))), tree)


def tree_zeros_like(tree: Any, dtype: Any = None) -> Any:
    """A pytree of zeros of the same structure (and dtype, unless ``dtype`` is given).

    Args:
      tree: a pytree.
      dtype: the dtype of the zeros, or None for each leaf's own.

    Returns:
      A pytree of zeros.
    """
    return _tmap(lambda x: jnp.zeros_like(x, dtype=dtype), tree)


def tree_ones_like(tree: Any, dtype: Any = None) -> Any:
    """A pytree of ones of the same structure (and dtype, unless ``dtype`` is given).

    Args:
      tree: a pytree.
      dtype: the dtype of the ones, or None for each leaf's own.

    Returns:
      A pytree of ones.
    """
    return _tmap(lambda x: jnp.ones_like(x, dtype=dtype), tree)


def tree_full_like(tree: Any, fill_value: Any, dtype: Any = None) -> Any:
    """A pytree of the same structure with every element ``fill_value``.

    Args:
      tree: a pytree.
      fill_value: the value.
      dtype: the dtype, or None for each leaf's own.

    Returns:
      A pytree filled with ``fill_value``.
    """
    return _tmap(lambda x: jnp.full_like(x, fill_value, dtype=dtype), tree)


def tree_clip(tree: Any, min_value: Any = None, max_value: Any = None) -> Any:
    """Clips every leaf to ``[min_value, max_value]`` (a None bound is not applied).

    Args:
      tree: a pytree.
      min_value: the lower bound or None.
      max_value: the upper bound or None.

    Returns:
      The clipped pytree.
    """
    return _tmap(lambda g: jnp.clip(g, min_value, max_value), tree)


def tree_update_moment(updates: Any, moments: Any, decay: Any, order: int) -> Any:
    """The exponential moving average of the ``order``-th power of the updates:
    ``(1 - decay) * g**order + decay * m`` (None updates stay None).

    Args:
      updates: a pytree of updates.
      moments: the moving averages so far.
      decay: the decay rate.
      order: the power.

    Returns:
      The new moments.
    """
    return _tmap(
        lambda g, t: None if g is None else (1 - decay) * g ** order + decay * t,
        updates, moments, is_leaf=_is_none)


def tree_update_infinity_moment(updates: Any, moments: Any, decay: Any, eps: Any) -> Any:
    """The exponentially weighted infinity norm ``maximum(|g| + eps, decay * m)``.

    Args:
      updates: a pytree of updates.
      moments: the moments so far.
      decay: the decay rate.
      eps: added to ``|g|``.

    Returns:
      The new moments.
    """
    return _tmap(lambda g, t: g if g is None else jnp.maximum(jnp.abs(g) + eps, decay * t),
                 updates, moments, is_leaf=_is_none)


def tree_update_moment_per_elem_norm(updates: Any, moments: Any, decay: Any,
                                     order: int) -> Any:
    """The exponential moving average of ``|g|**order`` (element-wise modulus for complex
    updates).

    Args:
      updates: a pytree of updates.
      moments: the moving averages so far.
      decay: the decay rate.
      order: the power.

    Returns:
      The new moments.
    """
    def orderth_norm(g):
        if not jnp.issubdtype(jnp.asarray(g).dtype, jnp.complexfloating):
            return g ** order
        half = order / 2
        if float(half).is_integer():
            half = int(half)
        return abs_sq(g) ** half

    return _tmap(lambda g, t: None if g is None else (1 - decay) * orderth_norm(g) + decay * t,
                 updates, moments, is_leaf=_is_none)


def tree_bias_correction(moment: Any, decay: Any, count: Any) -> Any:
    """Adam's bias correction ``m / (1 - decay**count)`` leaf by leaf.

    Args:
      moment: a pytree of moving averages.
      decay: their decay rate.
      count: the step number (starting at 1).

    Returns:
      The corrected moments.
    """
    correction = 1 - decay ** jnp.asarray(count)
    return _tmap(lambda t: t / correction.astype(t.dtype), moment)


def tree_where(condition: Any, tree_x: Any, tree_y: Any) -> Any:
    """``where(condition, x, y)`` leaf by leaf.

    Args:
      condition: a boolean (scalar or broadcastable).
      tree_x: the pytree chosen where ``condition`` holds.
      tree_y: the pytree chosen elsewhere.

    Returns:
      The selected pytree.
    """
    return _tmap(lambda x, y: jnp.where(condition, x, y), tree_x, tree_y)


def tree_allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
                  equal_nan: bool = False) -> Any:
    """Whether two pytrees are equal leaf by leaf within tolerances (as ``allclose``).

    Args:
      a: a pytree.
      b: a pytree of the same structure.
      rtol: relative tolerance.
      atol: absolute tolerance.
      equal_nan: whether NaNs compare equal.

    Returns:
      A boolean.
    """
    leaves = tree_util.tree_leaves(_tmap(
        lambda x, y: jnp.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan), a, b))
    return functools.reduce(operator.and_, leaves, True)


# ---------------------------------------------------------------------------
# Dtypes.
# ---------------------------------------------------------------------------

def tree_cast(tree: Any, dtype: Any) -> Any:
    """Casts every leaf to ``dtype`` (the tree as it is when ``dtype`` is None).

    Args:
      tree: a pytree of arrays.
      dtype: the dtype, or None.

    Returns:
      The cast pytree.
    """
    if dtype is None:
        return tree
    return _tmap(lambda t: t.astype(dtype), tree)


def tree_cast_like(tree: Any, other_tree: Any) -> Any:
    """Casts every leaf of ``tree`` to the dtype of the matching leaf of ``other_tree``
    (leaves without a dtype stay as they are).

    Args:
      tree: a pytree of arrays.
      other_tree: a pytree of the same structure.

    Returns:
      The cast pytree.
    """
    return _tmap(lambda t, o: t.astype(o.dtype) if hasattr(o, "dtype") else t,
                 tree, other_tree)


def _lower_dtype(d1: Any, d2: Any) -> Any:
    p = jnp.promote_types(d1, d2)
    if p == d1:
        return d2
    if p == d2:
        return d1
    raise ValueError(f"tree_dtype: cannot compare dtypes {d1} and {d2}; neither promotes "
                     "to the other")


def _higher_dtype(d1: Any, d2: Any) -> Any:
    return d2 if _lower_dtype(d1, d2) == d1 else d1


def tree_dtype(tree: Any, mixed_dtype_handler: Optional[str] = None) -> Any:
    """The dtype of the leaves of a pytree.

    Args:
      tree: a pytree.
      mixed_dtype_handler: ``None`` (all leaves must share one dtype), ``'promote'`` (their
        promoted dtype), ``'highest'`` or ``'lowest'`` (by promotion order).

    Returns:
      A dtype (the default float dtype for an empty tree).

    Raises:
      ValueError: for mixed dtypes with ``None``, dtypes that do not promote to one another
        with ``'highest'``/``'lowest'``, or an unknown handler.
    """
    leaves = tree_util.tree_leaves(tree)
    if not leaves:
        return jnp.asarray(leaves).dtype
    dts = [jnp.asarray(x).dtype for x in leaves]
    if mixed_dtype_handler is None:
        paths = tree_util.tree_leaves_with_path(tree)
        errs = [f"Expected dtype={dts[0]} for {tree_util.keystr(p)} but got {d}."
                for (p, _), d in zip(paths, dts) if d != dts[0]]
        if errs:
            raise ValueError("\n".join(errs))
        return dts[0]
    if mixed_dtype_handler == "promote":
        return functools.reduce(jnp.promote_types, dts)
    if mixed_dtype_handler == "highest":
        return functools.reduce(_higher_dtype, dts)
    if mixed_dtype_handler == "lowest":
        return functools.reduce(_lower_dtype, dts)
    raise ValueError(f"tree_dtype: invalid mixed_dtype_handler={mixed_dtype_handler!r}; "
                     "expected None, 'promote', 'highest' or 'lowest'")


# ---------------------------------------------------------------------------
# Reading and editing optimizer states.
# ---------------------------------------------------------------------------

@tree_util.register_pytree_node_class
class _ParamsPlaceholder:
    """Stands in for the params when ``tree_map_params`` runs an ``init``: it marks where
    the state holds copies of the parameter tree."""

    def tree_flatten(self):
        return (), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls()


@dataclasses.dataclass(frozen=True)
class NamedTupleKey:
    """A key-path entry for a field of a NamedTuple that also names the tuple's class, so
    that filters can tell ``ScaleByAdamState.mu`` from ``ScaleByLionState.mu``.

    Attributes:
      tuple_name: the NamedTuple's class name.
      name: the field name.
    """
    tuple_name: str
    name: str

    def __str__(self) -> str:
        return f"{self.tuple_name}.{self.name}"


KeyPath = tuple[Any, ...]


@runtime_checkable
class Initable(Protocol):
    """An object with an ``init(params) -> state`` method."""

    def init(self, params: Any) -> Any: ...


def tree_map_params(initable: Union[Callable[[Any], Any], Initable], f: Callable[..., Any],
                    state: Any, /, *rest: Any,
                    transform_non_params: Optional[Callable[..., Any]] = None,
                    is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """Applies ``f`` to every copy of the parameter tree held in an optimizer state.

    Args:
      initable: the optimizer (anything with ``init``) or its init function.
      f: applied leaf by leaf to each parameter-shaped subtree of ``state`` (and ``rest``).
      state: the optimizer state.
      *rest: more trees shaped like the params, passed to ``f`` too.
      transform_non_params: applied to every other part of the state, if given.
      is_leaf: passed to the tree map over each parameter-shaped subtree.

    Returns:
      The mapped state.
    """
    placeholder = _ParamsPlaceholder()
    if isinstance(initable, Initable):
        with_placeholders = initable.init(placeholder)
    else:
        with_placeholders = initable(placeholder)

    def map_params(maybe_placeholder, value):
        if isinstance(maybe_placeholder, _ParamsPlaceholder):
            return _tmap(f, value, *rest, is_leaf=is_leaf)
        if transform_non_params is not None:
            return transform_non_params(value)
        return value

    return _tmap(map_params, with_placeholders, state,
                 is_leaf=lambda v: isinstance(v, _ParamsPlaceholder))


def _is_named_tuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _leaves_with_named_tuple_path(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None
                                  ) -> list[tuple[KeyPath, Any]]:
    """``tree_leaves_with_path`` whose NamedTuple fields are ``NamedTupleKey`` entries."""
    stop = is_leaf if is_leaf else (lambda _: False)
    out = []
    for path, node in tree_util.tree_leaves_with_path(
            tree, is_leaf=lambda x: stop(x) or _is_named_tuple(x)):
        if stop(node) or not _is_named_tuple(node):
            out.append((path, node))
            continue
        for field in node._fields:
            for child_path, child in _leaves_with_named_tuple_path(getattr(node, field),
                                                                   is_leaf):
                out.append(((*path, NamedTupleKey(type(node).__name__, field), *child_path),
                            child))
    return out


def _node_has_keys(node: Any, keys: tuple[Any, ...]) -> bool:
    if _is_named_tuple(node) and (any(k in node._fields for k in keys)
                                  or type(node).__name__ in keys):
        return True
    return isinstance(node, dict) and any(k in node for k in keys)


def _flatten_to_key(path: KeyPath, node: Any, key: Any) -> tuple[KeyPath, Any]:
    if _is_named_tuple(node):
        if key == type(node).__name__:
            return path, node
        return (*path, NamedTupleKey(type(node).__name__, key)), getattr(node, key)
    if isinstance(node, dict) and key in node:
        return (*path, tree_util.DictKey(key)), node[key]
    return path, node


def _children_with_path(path: KeyPath, node: Any) -> list[tuple[KeyPath, Any]]:
    if _is_named_tuple(node):
        return [((*path, NamedTupleKey(type(node).__name__, f)), getattr(node, f))
                for f in node._fields]
    if isinstance(node, dict):
        return [((*path, tree_util.DictKey(k)), v) for k, v in node.items()]
    raise ValueError(f"Subtree must be a dict or a NamedTuple. Got {type(node)}")


def _set_children(node: Any, children: dict[Any, Any]) -> Any:
    if _is_named_tuple(node):
        return node._replace(**children)
    if isinstance(node, dict):
        return children
    raise ValueError(f"Subtree must be a dict or a NamedTuple. Got {type(node)}")


def _key_of(entry: Any) -> Union[int, str]:
    if isinstance(entry, tree_util.DictKey):
        if isinstance(entry.key, (str, int)):
            return entry.key
        raise KeyError("Hashable keys not supported")
    if isinstance(entry, tree_util.FlattenedIndexKey):
        return entry.key
    if isinstance(entry, tree_util.GetAttrKey):
        return entry.name
    if isinstance(entry, tree_util.SequenceKey):
        return entry.idx
    if isinstance(entry, NamedTupleKey):
        return entry.name
    raise KeyError(f"Tree key '{entry}' of type '{type(entry)}' not valid.")


def _get_all_with_path(tree: Any, key: Any) -> list[tuple[KeyPath, Any]]:
    has_key = functools.partial(_node_has_keys, keys=(key,))
    subtrees = [(p, s) for p, s in _leaves_with_named_tuple_path(tree, is_leaf=has_key)
                if has_key(s)]
    found = [_flatten_to_key(p, s, key) for p, s in subtrees]
    # a match can also hide deeper inside a matching node
    for path, subtree in subtrees:
        for child_path, child in _children_with_path(path, subtree):
            found += [((*child_path, *p), v) for p, v in _get_all_with_path(child, key)]
    return found


def tree_get_all_with_path(tree: Any, key: Any,
                           filtering: Optional[Callable[[KeyPath, Any], bool]] = None
                           ) -> list[tuple[KeyPath, Any]]:
    """Every value in ``tree`` stored under ``key`` (a dict key, a NamedTuple field, or a
    NamedTuple class name), with its path.

    Args:
      tree: the tree to search (e.g. an optimizer state).
      key: the key, field or NamedTuple name.
      filtering: keeps only the ``(path, value)`` pairs for which it returns True.

    Returns:
      A list of ``(path, value)``; NamedTuple fields appear in paths as
      :class:`NamedTupleKey`.
    """
    found = _get_all_with_path(tree, key)
    if filtering:
        found = [(p, v) for p, v in found if filtering(p, v)]
    return found


def tree_get(tree: Any, key: Any, default: Any = None,
             filtering: Optional[Callable[[KeyPath, Any], bool]] = None) -> Any:
    """The one value in ``tree`` stored under ``key`` (see :func:`tree_get_all_with_path`).

    Args:
      tree: the tree to search.
      key: the key, field or NamedTuple name.
      default: returned when nothing matches.
      filtering: keeps only the ``(path, value)`` pairs for which it returns True.

    Returns:
      The value, or ``default``.

    Raises:
      KeyError: if several values match.
    """
    found = tree_get_all_with_path(tree, key, filtering=filtering)
    if len(found) > 1:
        raise KeyError(f"Found multiple values for '{key}' in {tree}.")
    return found[0][1] if found else default


def tree_set(tree: Any, filtering: Optional[Callable[[KeyPath, Any], bool]] = None, /,
             **kwargs: Any) -> Any:
    """A copy of ``tree`` with the values stored under each keyword's key replaced.

    Args:
      tree: the tree (e.g. an optimizer state).
      filtering: replaces only where ``filtering(path, value)`` is True.
      **kwargs: ``key=new_value`` pairs (dict keys, NamedTuple fields or class names).

    Returns:
      The new tree.

    Raises:
      KeyError: if some key matches nothing.
    """
    for key in kwargs:
        if not tree_get_all_with_path(tree, key, filtering):
            if filtering:
                raise KeyError(f"Found no values matching '{key}' given the filtering "
                               f"operation in {tree}")
            raise KeyError(f"Found no values matching '{key}' in {tree}")

    has_any_key = functools.partial(_node_has_keys, keys=tuple(kwargs))

    def replace(path, node):
        if not has_any_key(node):
            return node
        if (_is_named_tuple(node) and type(node).__name__ in kwargs
                and (filtering is None or filtering(path, node))):
            return kwargs[type(node).__name__]
        children = {}
        for child_path, child in _children_with_path(path, node):
            key = _key_of(child_path[-1])
            if key in kwargs and (filtering is None or filtering(child_path, child)):
                children[key] = kwargs[key]
            elif isinstance(child, (dict, list, tuple)):
                children[key] = replace(child_path, child)
            else:
                children[key] = child
        return _set_children(node, children)

    _, treedef = tree_util.tree_flatten(tree, is_leaf=has_any_key)
    pairs = _leaves_with_named_tuple_path(tree, is_leaf=has_any_key)
    return treedef.unflatten([replace(p, n) for p, n in pairs])
