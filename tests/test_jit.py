"""jit: tracing once per signature, the cache key, static arguments."""
from typing import Any, NamedTuple

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp


@pytest.mark.x32
def test_traces_once_per_signature():
    traces = []

    @pb.jit
    def f(x, y):
        traces.append((x.shape, x.dtype))  # a Python side effect: runs while tracing only
        return x * y + 1.0

    a, b = jnp.ones(3), jnp.ones(3) * 2.0
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(a, b)), [3, 3, 3])
    assert len(traces) == 1
    f(jnp.ones(4), jnp.ones(4))  # new shape
    f(jnp.asarray(np.ones(3)), jnp.asarray(np.ones(3)))  # float64 data becomes float32
    assert traces[1:] == [((4,), np.float32)]
    with pb.enable_x64():  # the mode is part of the signature; float64 stays float64
        f(jnp.ones(3, np.float32), jnp.ones(3, np.float32))
        f(jnp.asarray(np.ones(3)), jnp.asarray(np.ones(3)))
    assert traces[1:] == [((4,), np.float32), ((3,), np.float32), ((3,), np.float64)]
    assert f._cache_size() == 4


def test_weak_types_are_part_of_the_signature():
    traces = []

    @pb.jit
    def f(x):
        traces.append(x.weak_type)
        return x * 2

    assert f(1.0).weak_type  # Python scalar in, weak out
    assert not f(jnp.asarray(np.float32(1.0))).weak_type
    assert traces == [True, False]


def test_result_matches_eager_and_is_an_array():
    def f(x, w):
        return jnp.sum(jnp.exp(x @ w) * 0.5, axis=0)

    x = jnp.asarray(np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32))
    w = jnp.asarray(np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32))
    out = pb.jit(f)(x, w)
    assert isinstance(out, pb.Array) and out.shape == (3,) and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), np.asarray(f(x, w)), rtol=1e-6)


def test_static_argnums_and_argnames():
    traces = []

    def f(x, n, *, scale):
        traces.append((n, scale))
        return jnp.reshape(x, (n, -1)) * scale

    jf = pb.jit(f, static_argnums=1, static_argnames="scale")
    x = jnp.ones(6)
    assert jf(x, 2, scale=3.0).shape == (2, 3)
    assert jf(x, 2, scale=3.0).shape == (2, 3)
    assert jf(x, 3, scale=3.0).shape == (3, 2)
    assert float(jnp.sum(jf(x, 3, scale=0.5))) == 3.0
    assert traces == [(2, 3.0), (3, 3.0), (3, 0.5)]


def test_static_argnames_imply_the_position():
    traces = []

    @pb.jit
    def g(x, n):
        return x

    jf = pb.jit(lambda x, n: (traces.append(n), jnp.reshape(x, (n, -1)))[1], static_argnames="n")
    assert jf(jnp.ones(4), 2).shape == (2, 2)  # n passed positionally, still static
    assert traces == [2]


def test_unhashable_static_argument_raises():
    jf = pb.jit(lambda x, shape: jnp.reshape(x, shape), static_argnums=1)
    with pytest.raises(TypeError, match=r"static argument .*position 1.* must be hashable.*list"):
        jf(jnp.ones(4), [2, 2])
    assert jf(jnp.ones(4), (2, 2)).shape == (2, 2)


def test_keyword_arguments_are_traced():
    jf = pb.jit(lambda x, *, bias: x + bias)
    np.testing.assert_allclose(np.asarray(jf(jnp.ones(2), bias=jnp.ones(2) * 2.0)), [3, 3])


def test_decorator_with_options():
    @pb.jit(static_argnums=(1,))
    def f(x, k):
        return x * float(k)

    np.testing.assert_allclose(np.asarray(f(jnp.ones(2), 4)), [4, 4])


def test_non_array_argument_and_output_errors():
    with pytest.raises(TypeError, match="str.*not a valid pullback array"):
        pb.jit(lambda s: s)("hello")
    with pytest.raises(TypeError, match="returned a value of type str"):
        pb.jit(lambda x: "hello")(jnp.ones(2))


# ---- the C fast call path: Arrays in tuples, lists, dicts and namedtuples ----

def full(shape, value=1.0):
    """A C-contiguous Array (jnp.ones broadcasts a scalar: another layout, another program)."""
    return jnp.asarray(np.full(shape, value, np.float32))

def test_nested_arguments_take_the_fast_path_and_keep_their_structure():
    traces = []

    @pb.jit
    def step(params, x, unused):
        traces.append(1)
        new = [(w - 0.5 * x.sum() * w, b + 1.0) for w, b in params]
        return x.sum(), new, (None, [x])

    params = [(full((2, 3)), full(3, 0.0)), (full((3, 1)) * 2.0, full(1, 0.0))]
    x = full(4)
    first = step(params, x, None)
    assert len(step._fast) == 1  # a FastCall for this signature
    for _ in range(2):
        loss, new, (nothing, [y]) = step(params, x, None)
        assert type(new) is list and all(type(p) is tuple for p in new)
        assert nothing is None and type(y) is pb.Array
        np.testing.assert_allclose(np.asarray(loss), 4.0)
        np.testing.assert_allclose(np.asarray(new[1][0]), np.full((3, 1), -2.0))
        np.testing.assert_allclose(np.asarray(new[0][1]), np.ones(3))
    assert len(traces) == 1
    np.testing.assert_array_equal(np.asarray(first[1][0][0]), np.asarray(new[0][0]))


def test_other_structures_and_leaves_leave_the_fast_path():
    f = pb.jit(lambda p: [a * 2.0 for a in p])
    a, b = full(2), full(3)
    f([a, b])
    # a tuple where a list was compiled, another length, another shape, a NumPy leaf
    for args, want in [((a, b), [2.0 * np.ones(2), 2.0 * np.ones(3)]),
                       ([a, b, a], [2.0 * np.ones(2), 2.0 * np.ones(3), 2.0 * np.ones(2)]),
                       ([b, a], [2.0 * np.ones(3), 2.0 * np.ones(2)]),
                       ([np.ones(2, np.float32), b], [2.0 * np.ones(2), 2.0 * np.ones(3)])]:
        got = f(args)
        assert type(got) is list and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w)


class Moments(NamedTuple):
    count: Any
    mu: Any


class Other(NamedTuple):
    count: Any
    mu: Any


def test_dicts_and_namedtuples_take_the_fast_path_whatever_the_key_order():
    traces = []

    @pb.jit
    def step(p, s):
        traces.append(1)
        return {"w": p["w"] * 2.0, "b": p["b"] + s.count}, Moments(s.count + 1.0, s.mu)

    p1 = {"w": full(2, 3.0), "b": full(2, 1.0)}
    p2 = {"b": full(2, 1.0), "w": full(2, 3.0)}  # another insertion order, same tree
    s = Moments(full((), 1.0), (full(1, 5.0), None))
    step(p1, s)
    assert len(step._fast) == 1
    for p in (p1, p2, p1):
        out, st = step(p, s)
        assert list(out) == ["b", "w"]  # sorted, as tree_unflatten builds dicts
        np.testing.assert_allclose(np.asarray(out["w"]), [6.0, 6.0])
        np.testing.assert_allclose(np.asarray(out["b"]), [2.0, 2.0])
        assert type(st) is Moments and type(st.mu) is tuple and st.mu[1] is None
        np.testing.assert_allclose(np.asarray(st.count), 2.0)
        np.testing.assert_allclose(np.asarray(st.mu[0]), [5.0])
    assert len(traces) == 1 and len(step._fast) == 1


def test_other_dicts_and_namedtuples_leave_the_fast_path():
    f = pb.jit(lambda p: p["a"] * 2.0 if isinstance(p, dict) else p[0] * 2.0)
    f({"a": full(2), "b": full(3)})
    for arg in [{"a": full(2), "c": full(3)},                 # other keys, same size
                {"a": full(2)},                               # fewer keys
                {"a": full(2), "b": full(3), "c": full(1)},   # more keys
                Moments(full(2), full(3)), (full(2), full(3))]:
        np.testing.assert_allclose(np.asarray(f(arg)), [2.0, 2.0])
    g = pb.jit(lambda s: s.count * 2.0)
    g(Moments(full(2), full(3)))
    for arg in [Other(full(2), full(3)), Moments(full(2), full(2)), Moments(full(2), None)]:
        np.testing.assert_allclose(np.asarray(g(arg)), [2.0, 2.0])


def test_a_namedtuple_registered_as_a_custom_node_keeps_its_flatten():
    class Swapped(NamedTuple):
        a: Any
        b: Any

    pb.tree_util.register_pytree_node(Swapped, lambda s: ((s.b, s.a), None),
                                      lambda _, kids: Swapped(kids[1], kids[0]))
    f = pb.jit(lambda s: Swapped(s.a * 2.0, s.b))
    for _ in range(3):
        out = f(Swapped(full(2), full(3)))
        assert type(out) is Swapped
        np.testing.assert_allclose(np.asarray(out.a), [2.0, 2.0])
        np.testing.assert_allclose(np.asarray(out.b), [1.0, 1.0, 1.0])


def test_dict_outputs_are_unflattened_after_a_fast_call():
    f = pb.jit(lambda p, x: {"b": [p[0] + x], "a": x * 3.0})
    for _ in range(3):
        out = f((full(2),), full(2))
        assert set(out) == {"a", "b"} and type(out["b"]) is list
        np.testing.assert_allclose(np.asarray(out["b"][0]), [2.0, 2.0])
        np.testing.assert_allclose(np.asarray(out["a"]), [3.0, 3.0])
    assert len(f._fast) == 1
