"""Behaviours where pullback once differed from JAX 0.10; the expected values are JAX's."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.tracer import core


# ---- has_aux: aux leaves come back as values, not as the finished level's tracers ----

def _f_aux(x):
    return jnp.sum(x ** 2), {"a": x * 2, "b": 3.0}


def _check_aux(aux, want_a=(0., 2., 4.)):
    assert not isinstance(aux["a"], core.Tracer)
    np.testing.assert_array_equal(np.asarray(aux["a"]), want_a)
    np.testing.assert_array_equal(np.asarray(aux["a"] + 1), np.asarray(want_a) + 1)  # usable
    assert float(aux["b"]) == 3.0


@pytest.mark.parametrize("which", ["grad", "value_and_grad", "vjp", "jvp", "linearize",
                                   "jacfwd", "jacrev", "hessian"])
def test_has_aux_returns_values(which):
    x = jnp.arange(3.)
    if which == "grad":
        g, aux = pb.grad(_f_aux, has_aux=True)(x)
        np.testing.assert_array_equal(np.asarray(g), [0., 2., 4.])
    elif which == "value_and_grad":
        (v, aux), g = pb.value_and_grad(_f_aux, has_aux=True)(x)
        assert float(v) == 5.0
    elif which == "vjp":
        _, _, aux = pb.vjp(_f_aux, x, has_aux=True)
    elif which == "jvp":
        _, t, aux = pb.jvp(_f_aux, (x,), (x,), has_aux=True)
        assert float(t) == 10.0
    elif which == "linearize":
        _, f_jvp, aux = pb.linearize(_f_aux, x, has_aux=True)
        assert float(f_jvp(x)) == 10.0
    else:
        _, aux = getattr(pb, which)(_f_aux, has_aux=True)(x)
    _check_aux(aux)
    assert type(aux["b"]) is float  # untouched non-array leaves, as in JAX


def test_has_aux_under_jit():
    x = jnp.arange(3.)
    for fn in (pb.jit(pb.grad(_f_aux, has_aux=True)),
               pb.jit(lambda x: pb.grad(_f_aux, has_aux=True)(x))):
        g, aux = fn(x)
        np.testing.assert_array_equal(np.asarray(g), [0., 2., 4.])
        _check_aux(aux)
        assert aux["b"].dtype == np.float32 and aux["b"].weak_type  # a jit output, as in JAX
    _check_aux(pb.jit(lambda x: pb.vjp(_f_aux, x, has_aux=True)[2])(x))
    _check_aux(pb.jit(lambda x: pb.linearize(_f_aux, x, has_aux=True)[2])(x))


def test_has_aux_under_vmap():
    xs = jnp.ones((2, 3))
    g, aux = pb.vmap(pb.grad(_f_aux, has_aux=True))(xs)
    np.testing.assert_array_equal(np.asarray(aux["a"]), np.full((2, 3), 2.))
    np.testing.assert_array_equal(np.asarray(aux["b"]), [3., 3.])
    aux = pb.vmap(lambda x: pb.jvp(_f_aux, (x,), (x,), has_aux=True)[2])(xs)
    np.testing.assert_array_equal(np.asarray(aux["a"]), np.full((2, 3), 2.))


def test_has_aux_keeps_outer_derivatives():
    # aux carries the derivative of the transformations around the one that returned it
    x = jnp.arange(3.)
    g = pb.grad(lambda x: pb.grad(_f_aux, has_aux=True)(x)[1]["a"].sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [2., 2., 2.])
    _, t = pb.jvp(lambda x: pb.value_and_grad(_f_aux, has_aux=True)(x)[0][1]["a"], (x,), (x,))
    np.testing.assert_array_equal(np.asarray(t), [0., 2., 4.])


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match="has_aux"):
        pb.grad(lambda x: x * 2.0, has_aux=True)(1.0)
    with pytest.raises(TypeError, match="has_aux"):
        pb.jvp(lambda x: x * 2.0, (1.0,), (1.0,), has_aux=True)
