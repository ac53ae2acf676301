"""Bugs found by the random-program generator (tests/test_programs.py), each pinned as the
minimal program that showed it. Expected values are JAX 0.10's."""
import numpy as np

import pullback as jax
import pullback.numpy as jnp


def test_softmax_and_logsumexp_over_an_empty_axis():
    # max without initial=-inf raised on the empty axis; JAX reduces it to -inf
    x = jnp.zeros((0, 2), jnp.float32)
    assert jax.nn.softmax(x, axis=0).shape == (0, 2)
    assert jax.nn.log_softmax(x, axis=0).shape == (0, 2)
    np.testing.assert_array_equal(np.asarray(jax.nn.logsumexp(x, axis=0)), [-np.inf, -np.inf])
    out, sign = jax.nn.logsumexp(x, axis=0, b=jnp.ones((0, 2)), return_sign=True)
    np.testing.assert_array_equal(np.asarray(out), [-np.inf, -np.inf])
    np.testing.assert_array_equal(np.asarray(sign), [0.0, 0.0])
    g = jax.grad(lambda a: jax.nn.logsumexp(a, axis=0).sum())(x)
    assert g.shape == (0, 2)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.nn.softmax)(jnp.array([1.0, 2.0, 3.0]))),
                               [0.09003057, 0.24472847, 0.66524096], rtol=1e-6)


def test_jnp_bool_is_the_bool_scalar_type():
    # jnp.bool did not exist (JAX: jnp.bool is jnp.bool_)
    assert jnp.bool is jnp.bool_
    x = jnp.array([0.0, 2.0]).astype(jnp.bool)
    assert x.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(x), [False, True])


def test_scatter_gradients_on_an_empty_operand():
    # the transpose built a gather with slice size 1 over an axis of size 0 (a TypeError);
    # nothing lands, so every update's cotangent is zero
    def f(a, b):
        return (a.at[-1].set(b), a.at[-1].max(b), a.at[-1].mul(b), a.at[-1].add(b))

    x0, x1 = jnp.zeros((2, 0, 2)), jnp.asarray(1.5)
    for k in range(4):
        loss = lambda a, b: jnp.sum(f(a, b)[k])  # noqa: E731
        for grad in (jax.grad(loss, (0, 1)), jax.jit(jax.grad(loss, (0, 1)))):
            ga, gb = grad(x0, x1)
            assert ga.shape == (2, 0, 2) and float(gb) == 0.0
    gb = jax.vmap(jax.grad(lambda a, b: jnp.sum(a.at[-1].max(b)), 1))(jnp.zeros((3, 2, 0)),
                                                                      jnp.ones(3))
    np.testing.assert_array_equal(np.asarray(gb), [0.0, 0.0, 0.0])


def test_take_along_axis_of_an_empty_array():
    # gathered with slice size 1 over an axis of size 0 (a TypeError); JAX gives zeros
    x = jnp.zeros((1, 0), jnp.float32)
    for ax in (0, 1):
        out = jnp.take_along_axis(x, jnp.argsort(x, axis=ax), axis=ax)
        assert out.shape == (1, 0)
    out = jnp.take_along_axis(jnp.zeros((2, 0), jnp.int32), jnp.zeros((2, 3), jnp.int32), axis=1)
    assert out.shape == (2, 3) and out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.zeros((2, 3)))
    g = jax.grad(lambda a: jnp.take_along_axis(a, jnp.zeros((2, 3), jnp.int32), 1).sum())(
        jnp.zeros((2, 0)))
    assert g.shape == (2, 0)


def test_at_updates_and_take_on_empty_arrays():
    # .at[] built its flat positions by a gather from the empty array (a TypeError); JAX
    # returns the array unchanged
    for upd in ("set", "add", "mul", "min", "max"):
        out = getattr(jnp.zeros((0, 3)).at[jnp.array([0, 1])], upd)(1.0)
        assert out.shape == (0, 3)
        out = jax.jit(lambda a: getattr(a.at[:, jnp.array([0, 1])], upd)(1.0))(jnp.zeros((2, 0)))
        assert out.shape == (2, 0)
    # take: an empty take from an empty axis is empty, a non-empty one an IndexError
    assert jnp.take(jnp.zeros((0, 3)), jnp.zeros((0,), jnp.int32), axis=0).shape == (0, 3)
    try:
        jnp.take(jnp.zeros((0, 3)), jnp.array([0]), axis=0)
    except IndexError as e:
        assert "take" in str(e) and "empty axis" in str(e)
    else:
        raise AssertionError("take from an empty axis did not raise")
