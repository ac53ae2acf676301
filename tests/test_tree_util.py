"""Tests for pullback.tree_util (pytree flattening, mapping, registration, paths)."""

from __future__ import annotations

import collections
import dataclasses
import operator
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pullback import tree_util as tu

Point = collections.namedtuple("Point", ["x", "y"])
Pair = collections.namedtuple("Pair", ["x", "y"])  # same fields, different class

# ---------------------------------------------------------------------------
# Strategies and independent reference helpers.
# ---------------------------------------------------------------------------

_leaf_values = st.integers(-1000, 1000) | st.floats(allow_nan=False, allow_infinity=False)


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    return (
        st.lists(children, max_size=4).map(tuple)
        | st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=3), children, max_size=4)
        | st.builds(Point, children, children)
    )


pytrees = st.recursive(_leaf_values | st.none(), _extend, max_leaves=20)


def _ref_leaves(t: Any) -> list:
    """Reference flattening, written independently of the implementation."""
    if t is None:
        return []
    if isinstance(t, (tuple, list)):  # includes namedtuples
        return [leaf for c in t for leaf in _ref_leaves(c)]
    if isinstance(t, dict):
        return [leaf for k in sorted(t) for leaf in _ref_leaves(t[k])]
    return [t]


def _same(a: Any, b: Any) -> bool:
    """Equality that also requires identical container types (Point != tuple)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        if isinstance(a, collections.OrderedDict) and list(a) != list(b):
            return False
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _follow(tree: Any, path: tuple) -> Any:
    """Walks a key path from the root using the keys' own meaning."""
    for k in path:
        if isinstance(k, tu.SequenceKey):
            tree = tree[k.idx]
        elif isinstance(k, tu.DictKey):
            tree = tree[k.key]
        elif isinstance(k, tu.GetAttrKey):
            tree = getattr(tree, k.name)
        else:
            raise AssertionError(f"unexpected key {k!r}")
    return tree


# ---------------------------------------------------------------------------
# Property-based round trips.
# ---------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(pytrees)
def test_roundtrip_preserves_values_and_types(tree):
    leaves, treedef = tu.tree_flatten(tree)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert rebuilt == tree
    assert _same(rebuilt, tree)
    assert tu.tree_structure(rebuilt) == treedef


@settings(max_examples=100, deadline=None)
@given(pytrees)
def test_leaves_match_reference_order_and_count(tree):
    leaves, treedef = tu.tree_flatten(tree)
    expected = _ref_leaves(tree)
    assert leaves == expected
    assert treedef.num_leaves == len(expected)
    assert tu.tree_leaves(tree) == expected


@settings(max_examples=60, deadline=None)
@given(pytrees)
def test_unflatten_with_fresh_leaves_and_tree_map(tree):
    treedef = tu.tree_structure(tree)
    n = treedef.num_leaves
    fresh = tu.tree_unflatten(treedef, [f"leaf{i}" for i in range(n)])
    assert tu.tree_leaves(fresh) == [f"leaf{i}" for i in range(n)]
    assert tu.tree_structure(fresh) == treedef
    mapped = tu.tree_map(lambda x: (x, "m"), tree, is_leaf=lambda x: False)
    # (x, "m") tuples are new subtrees: each leaf becomes two leaves.
    assert tu.tree_leaves(mapped) == [v for x in _ref_leaves(tree) for v in (x, "m")]


@settings(max_examples=60, deadline=None)
@given(pytrees)
def test_paths_lead_to_their_leaves(tree):
    pairs, treedef = tu.tree_flatten_with_path(tree)
    assert treedef == tu.tree_structure(tree)
    assert [leaf for _, leaf in pairs] == tu.tree_leaves(tree)
    paths = [p for p, _ in pairs]
    assert len(set(paths)) == len(paths)
    for path, leaf in pairs:
        assert _follow(tree, path) is leaf


@settings(max_examples=80, deadline=None)
@given(pytrees, pytrees)
def test_treedef_equality_iff_same_structure(a, b):
    ta, tb = tu.tree_structure(a), tu.tree_structure(b)
    relabel = lambda t: tu.tree_map(lambda _: 0, t)  # noqa: E731
    same_shape = _same(relabel(a), relabel(b))
    assert (ta == tb) == same_shape
    if ta == tb:
        assert hash(ta) == hash(tb)


# ---------------------------------------------------------------------------
# Built-in node types.
# ---------------------------------------------------------------------------


def test_dict_leaves_in_sorted_key_order_and_unflatten_sorts_keys():
    tree = {"b": 1, "c": 3, "a": 2}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [2, 1, 3]
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert rebuilt == tree
    assert list(rebuilt) == ["a", "b", "c"]


def test_unsortable_dict_keys_raise():
    with pytest.raises(ValueError, match="sorting"):
        tu.tree_flatten({1: "x", "a": "y"})


def test_none_is_an_empty_node_not_a_leaf():
    assert tu.tree_leaves([None, 1]) == [1]
    assert tu.tree_leaves(None) == []
    td = tu.tree_structure(None)
    assert td.num_leaves == 0 and td.num_nodes == 1
    assert repr(td) == "PyTreeDef(None)"
    assert tu.tree_unflatten(td, []) is None
    assert tu.tree_map(lambda x: x + 1, [None, 1]) == [None, 2]
    assert tu.tree_structure(None) != tu.tree_structure(0)


def test_namedtuple_restored_as_same_class_in_field_order():
    p = Point(y=2, x=1)
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 2]
    out = tu.tree_unflatten(td, [10, 20])
    assert type(out) is Point and out == Point(10, 20)
    assert td != tu.tree_structure((1, 2))
    assert td != tu.tree_structure(Pair(1, 2))
    assert [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(p)[0]] == [".x", ".y"]


def test_ordered_dict_keeps_insertion_order():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, td = tu.tree_flatten(od)
    assert leaves == [1, 2]
    out = tu.tree_unflatten(td, ["B", "A"])
    assert type(out) is collections.OrderedDict and list(out.items()) == [("b", "B"), ("a", "A")]
    assert td != tu.tree_structure(collections.OrderedDict([("a", 2), ("b", 1)]))
    assert td != tu.tree_structure({"b": 1, "a": 2})


def test_defaultdict_keeps_default_factory():
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, td = tu.tree_flatten(dd)
    assert leaves == [2, 1]
    out = tu.tree_unflatten(td, [5, 6])
    assert type(out) is collections.defaultdict
    assert out.default_factory is list
    assert dict(out) == {"a": 5, "b": 6}
    assert td != tu.tree_structure(collections.defaultdict(int, {"b": 1, "a": 2}))
    assert td != tu.tree_structure({"b": 1, "a": 2})


def test_unregistered_containers_are_leaves():
    class MyList(list):
        pass

    class MyTuple(tuple):  # tuple subclass without _fields: not a namedtuple
        pass

    ml, mt = MyList([1, 2]), MyTuple((1, 2))
    assert tu.tree_leaves([ml, mt, {1, 2}]) == [ml, mt, {1, 2}]


# ---------------------------------------------------------------------------
# PyTreeDef.
# ---------------------------------------------------------------------------


def test_treedef_repr_num_nodes_children():
    td = tu.tree_structure({"b": (1, 2), "a": 3})
    assert repr(td) == "PyTreeDef({'a': *, 'b': (*, *)})"
    assert repr(tu.tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tu.tree_structure([1, None])) == "PyTreeDef([*, None])"
    assert repr(tu.tree_structure(5)) == "PyTreeDef(*)"
    assert td.num_leaves == 3
    assert td.num_nodes == 5  # dict, leaf a, tuple, 2 leaves
    assert td.children() == [tu.tree_structure(0), tu.tree_structure((0, 0))]
    assert tu.tree_structure(0).children() == []
    assert tu.treedef_is_leaf(tu.tree_structure(0))
    assert not tu.treedef_is_leaf(tu.tree_structure((0,)))
    assert not tu.treedef_is_leaf(tu.tree_structure(None))


def test_treedef_equality_and_inequality():
    base = tu.tree_structure({"a": [1, 2], "b": (3,)})
    assert base == tu.tree_structure({"b": ("x",), "a": [8, 9]})
    assert base != tu.tree_structure({"a": (1, 2), "b": (3,)})  # list vs tuple
    assert base != tu.tree_structure({"a": [1, 2], "c": (3,)})  # different keys
    assert base != tu.tree_structure({"a": [1, 2, 3], "b": (3,)})  # different arity
    assert base != tu.tree_structure({"a": [1, (2,)], "b": (3,)})  # deeper nesting
    assert base != tu.tree_structure([1, 2, 3])
    assert base != "PyTreeDef({'a': [*, *], 'b': (*,)})"
    assert tu.tree_structure([]) != tu.tree_structure(())
    assert tu.tree_structure({}) != tu.tree_structure([])


def test_treedef_hashable_and_picklable():
    t1 = tu.tree_structure({"a": [1, (2, None)]})
    t2 = tu.tree_structure({"a": [5, (6, None)]})
    t3 = tu.tree_structure({"a": [5, (6, 7)]})
    assert hash(t1) == hash(t2)
    assert len({t1, t2, t3}) == 2
    cache = {t1: "hit"}
    assert cache[t2] == "hit"
    assert pickle.loads(pickle.dumps(t1)) == t1


def test_treedef_is_immutable():
    td = tu.tree_structure((1, 2))
    with pytest.raises(AttributeError):
        td.num_leaves = 7
    with pytest.raises(AttributeError):
        td.new_attribute = 1
    assert td.num_leaves == 2


def test_unflatten_wrong_leaf_count_reports_counts():
    td = tu.tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match=r"expected 3, got 2"):
        tu.tree_unflatten(td, [1, 2])
    with pytest.raises(ValueError, match=r"expected 3, got 4"):
        tu.tree_unflatten(td, [1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"expected 0, got 1"):
        tu.tree_unflatten(tu.tree_structure(None), [1])
    # any iterable is accepted
    assert tu.tree_unflatten(td, iter([1, 2, 3])) == (1, [2, 3])


# ---------------------------------------------------------------------------
# tree_map and friends.
# ---------------------------------------------------------------------------


def test_tree_map_multiple_trees():
    out = tu.tree_map(
        lambda a, b, c: a + b * c, (1, [2, {"k": 3}]), (10, [20, {"k": 30}]), (1, [2, {"k": 3}])
    )
    assert out == (11, [42, {"k": 93}])


def test_tree_map_rest_may_have_subtrees_at_leaf_positions():
    out = tu.tree_map(lambda a, b: (a, b), (1, 2), ((3, 4), [5, None]))
    assert out == ((1, (3, 4)), (2, [5, None]))


@pytest.mark.parametrize(
    "first, second, detail",
    [
        ((1, 2), [1, 2], "type"),
        ({"a": 1}, {"b": 1}, "keys"),
        ({"a": (1, (2, 3))}, {"a": (1, (2,))}, r"\['a'\]\[1\]"),
        ((1, None), (1, 2), "None"),
        (Point(1, 2), (1, 2), "Point"),
    ],
)
def test_tree_map_structure_mismatch_names_both_structures(first, second, detail):
    with pytest.raises(ValueError, match=detail) as info:
        tu.tree_map(lambda a, b: a, first, second)
    msg = str(info.value)
    assert repr(tu.tree_structure(first)) in msg
    assert repr(tu.tree_structure(second)) in msg


def test_tree_map_mismatch_in_third_tree():
    with pytest.raises(ValueError, match="tree 3"):
        tu.tree_map(lambda *a: a, [1, 2], [1, 2], [1, 2, 3])


def test_is_leaf_stops_flattening():
    tree = [(1, 2), (3,), {"a": (4, 5)}]
    is_pair = lambda x: isinstance(x, tuple) and len(x) == 2  # noqa: E731
    leaves, td = tu.tree_flatten(tree, is_leaf=is_pair)
    assert leaves == [(1, 2), 3, (4, 5)]
    assert td.num_leaves == 3
    assert tu.tree_unflatten(td, leaves) == tree
    f = lambda x: sum(x) if isinstance(x, tuple) else -x  # noqa: E731
    assert tu.tree_map(f, tree, is_leaf=is_pair) == [3, (-3,), {"a": 9}]
    assert tu.tree_structure(tree, is_leaf=is_pair) == tu.tree_structure([0, (0,), {"a": 0}])
    # is_leaf is consulted for None too
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    # the whole tree can be a leaf
    assert tu.tree_leaves(tree, is_leaf=lambda x: x is tree) == [tree]


def test_tree_reduce_with_and_without_initializer():
    tree = [10, (3, {"b": 2, "a": 1})]
    assert tu.tree_reduce(operator.sub, tree) == 10 - 3 - 1 - 2
    assert tu.tree_reduce(operator.sub, tree, 100) == 100 - 10 - 3 - 1 - 2
    assert tu.tree_reduce(lambda acc, x: acc + [x], tree, []) == [10, 3, 1, 2]
    assert tu.tree_reduce(operator.add, [None, ()], 7) == 7
    with pytest.raises(TypeError):
        tu.tree_reduce(operator.add, [None, ()])
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tu.tree_reduce(operator.add, [(1, 5), (2,)], is_leaf=is_tuple) == (1, 5, 2)


def test_tree_all():
    assert tu.tree_all([1, (True, {"a": 2})])
    assert not tu.tree_all([1, (True, {"a": 0})])
    assert tu.tree_all([None, ()])
    assert not tu.tree_all([None, [0]])
    assert tu.tree_all([(0, 0)], is_leaf=lambda x: isinstance(x, tuple))


def test_tree_transpose():
    outer = tu.tree_structure([0, 0, 0])
    inner = tu.tree_structure({"a": 0, "b": (0, 0)})
    tree = [{"a": i, "b": (10 * i, 100 * i)} for i in (1, 2, 3)]
    out = tu.tree_transpose(outer, inner, tree)
    assert out == {"a": [1, 2, 3], "b": ([10, 20, 30], [100, 200, 300])}
    assert tu.tree_transpose(outer, None, tree) == out
    back = tu.tree_transpose(inner, outer, out)
    assert back == tree
    with pytest.raises(TypeError, match="Mismatch"):
        tu.tree_transpose(outer, inner, tree[:2])


# ---------------------------------------------------------------------------
# Custom nodes.
# ---------------------------------------------------------------------------


def test_register_pytree_node():
    class Box:
        def __init__(self, value, label):
            self.value, self.label = value, label

        def __eq__(self, other):
            return type(other) is Box and (self.value, self.label) == (other.value, other.label)

    calls = []

    def unflatten(aux, children):
        calls.append((aux, tuple(children)))
        return Box(children[0], aux)

    tu.register_pytree_node(Box, lambda b: ((b.value,), b.label), unflatten)
    tree = {"x": Box((1, 2), "L"), "y": 3}
    leaves, td = tu.tree_flatten(tree)
    assert leaves == [1, 2, 3]
    assert tu.tree_unflatten(td, [4, 5, 6]) == {"x": Box((4, 5), "L"), "y": 6}
    assert calls == [("L", ((4, 5),))]
    assert td == tu.tree_structure({"x": Box((0, 0), "L"), "y": 0})
    assert td != tu.tree_structure({"x": Box((0, 0), "M"), "y": 0})  # aux differs
    assert "Box[L]" in repr(td)
    assert tu.tree_map(lambda v: -v, Box(1, "z")) == Box(-1, "z")
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(Box((1, 2), "L"))[0]]
    assert paths == ["[<flat index 0>][0]", "[<flat index 0>][1]"]
    with pytest.raises(ValueError, match="aux"):
        tu.tree_map(lambda a, b: a, Box(1, "a"), Box(1, "b"))


def test_register_pytree_node_class():
    @tu.register_pytree_node_class
    class Vec:
        def __init__(self, xs, name):
            self.xs, self.name = xs, name

        def tree_flatten(self):
            return tuple(self.xs), self.name

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(list(children), aux)

    v = Vec([1, 2, 3], "v")
    leaves, td = tu.tree_flatten([v, 4])
    assert leaves == [1, 2, 3, 4]
    w = tu.tree_unflatten(td, [10, 20, 30, 40])
    assert isinstance(w[0], Vec) and w[0].xs == [10, 20, 30] and w[0].name == "v" and w[1] == 40
    assert td != tu.tree_structure([Vec([1, 2, 3], "other"), 4])
    assert td != tu.tree_structure([Vec([1, 2], "v"), 4])


def test_register_pytree_with_keys():
    class Named:
        def __init__(self, **kw):
            self.kw = kw

    def flatten_with_keys(n):
        names = sorted(n.kw)
        return [(tu.GetAttrKey(k), n.kw[k]) for k in names], tuple(names)

    tu.register_pytree_with_keys(
        Named, flatten_with_keys, lambda names, ch: Named(**dict(zip(names, ch)))
    )
    tree = [Named(b=1, a=(2, 3))]
    pairs, td = tu.tree_flatten_with_path(tree)
    assert [(tu.keystr(p), x) for p, x in pairs] == [("[0].a[0]", 2), ("[0].a[1]", 3), ("[0].b", 1)]
    assert tu.tree_leaves(tree) == [2, 3, 1]
    out = tu.tree_unflatten(td, [7, 8, 9])
    assert out[0].kw == {"a": (7, 8), "b": 9}


def test_register_dataclass_decorator_with_static_field():
    @tu.register_dataclass
    @dataclasses.dataclass(frozen=True)
    class Layer:
        w: Any
        b: Any
        act: str = dataclasses.field(default="relu", metadata=dict(static=True))

    layer = Layer(w=1.0, b=(2.0, 3.0), act="tanh")
    leaves, td = tu.tree_flatten(layer)
    assert leaves == [1.0, 2.0, 3.0]
    out = tu.tree_unflatten(td, [4.0, 5.0, 6.0])
    assert out == Layer(4.0, (5.0, 6.0), "tanh")
    assert td == tu.tree_structure(Layer(0, (0, 0), "tanh"))
    assert td != tu.tree_structure(Layer(0, (0, 0), "relu"))  # meta compared
    assert hash(td) == hash(tu.tree_structure(Layer(9, (9, 9), "tanh")))
    assert tu.tree_map(lambda x: x * 2, layer) == Layer(2.0, (4.0, 6.0), "tanh")
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path({"l": layer})[0]]
    assert paths == ["['l'].w", "['l'].b[0]", "['l'].b[1]"]


def test_register_dataclass_explicit_fields():
    class Plain:  # not a dataclass
        def __init__(self, x, y, tag):
            self.x, self.y, self.tag = x, y, tag

    assert tu.register_dataclass(Plain, data_fields=["y", "x"], meta_fields=["tag"]) is Plain
    leaves, td = tu.tree_flatten(Plain(1, 2, "t"))
    assert leaves == [2, 1]  # data_fields order
    out = tu.tree_unflatten(td, [20, 10])
    assert (out.x, out.y, out.tag) == (10, 20, "t")
    assert td != tu.tree_structure(Plain(1, 2, "u"))

    @tu.register_dataclass(data_fields=["a"], meta_fields=["n"])
    @dataclasses.dataclass
    class D:
        a: Any
        n: int

    assert tu.tree_leaves(D(a=[1, 2], n=3)) == [1, 2]
    assert tu.tree_structure(D(0, 3)) != tu.tree_structure(D(0, 4))

    @dataclasses.dataclass
    class E:
        a: Any
        b: Any

    with pytest.raises(TypeError):
        tu.register_dataclass(E, data_fields=["a"], meta_fields=[])  # b missing


def test_double_registration_raises():
    class Thing:
        pass

    tu.register_pytree_node(Thing, lambda t: ((), None), lambda a, c: Thing())
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(Thing, lambda t: ((), None), lambda a, c: Thing())
    with pytest.raises(ValueError):
        tu.register_pytree_node(tuple, lambda t: (t, None), lambda a, c: tuple(c))
    with pytest.raises(ValueError):
        tu.register_dataclass(Thing, data_fields=[], meta_fields=[])


# ---------------------------------------------------------------------------
# Key paths.
# ---------------------------------------------------------------------------


def test_key_entries_str_repr_eq():
    assert str(tu.SequenceKey(0)) == "[0]"
    assert str(tu.DictKey("a")) == "['a']"
    assert str(tu.DictKey(1)) == "[1]"
    assert str(tu.GetAttrKey("name")) == ".name"
    assert str(tu.FlattenedIndexKey(2)) == "[<flat index 2>]"
    assert repr(tu.SequenceKey(0)) == "SequenceKey(idx=0)"
    assert repr(tu.DictKey("a")) == "DictKey(key='a')"
    assert tu.SequenceKey(1) == tu.SequenceKey(1) != tu.SequenceKey(2)
    assert tu.DictKey(0) != tu.SequenceKey(0)
    assert len({tu.DictKey("a"), tu.DictKey("a"), tu.GetAttrKey("a")}) == 2


def test_keystr():
    path = (tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("x"))
    assert tu.keystr(path) == "['a'][0].x"
    assert tu.keystr(path, simple=True, separator="/") == "a/0/x"
    assert tu.keystr(()) == ""


def test_flatten_with_path_and_map_with_path():
    tree = {"carry": {"h": (1.0, 2.0), "c": None}, "xs": [Point(3, 4)]}
    pairs, td = tu.tree_flatten_with_path(tree)
    assert td == tu.tree_structure(tree)
    assert [(tu.keystr(p), x) for p, x in pairs] == [
        ("['carry']['h'][0]", 1.0),
        ("['carry']['h'][1]", 2.0),
        ("['xs'][0].x", 3),
        ("['xs'][0].y", 4),
    ]
    assert tu.tree_leaves_with_path(tree) == pairs
    out = tu.tree_map_with_path(lambda p, x: tu.keystr(p), tree)
    assert out["carry"]["h"] == ("['carry']['h'][0]", "['carry']['h'][1]")
    assert out["carry"]["c"] is None and out["xs"][0] == Point("['xs'][0].x", "['xs'][0].y")
    two = tu.tree_map_with_path(lambda p, a, b: (len(p), a + b), [1, (2,)], [10, (20,)])
    assert two == [(1, 11), ((2, 22),)]
    with pytest.raises(ValueError):
        tu.tree_map_with_path(lambda p, a, b: a, [1, 2], [1])


def test_public_names_exported():
    for name in [
        "PyTreeDef", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
        "tree_reduce", "tree_all", "tree_transpose", "tree_flatten_with_path", "tree_map_with_path",
        "keystr", "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey",
        "register_pytree_node", "register_pytree_node_class", "register_dataclass",
    ]:
        assert callable(getattr(tu, name)), name
    assert isinstance(tu.tree_structure(0), tu.PyTreeDef)
