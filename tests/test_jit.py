"""jit: tracing once per signature, the cache key, static arguments."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp


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
    f(jnp.asarray(np.ones(3)), jnp.asarray(np.ones(3)))  # new dtype (float64 stays float64)
    assert traces[1:] == [((4,), np.float32), ((3,), np.float64)]
    assert f._cache_size() == 3


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
