"""The jax.nn functions added in issue 26 (tanh, identity, mish, hard_silu, log1mexp,
logmeanexp, sparse_sigmoid; sparse_plus and squareplus were there): values against NumPy
references, JAX 0.10's values and derivative conventions at the kinks hard-coded (JAX itself
as an optional oracle), dtypes, derivatives against finite differences, vmap and jit."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import nn
from pullback.test_util import check_grads, check_vmap
from pullback.tracer import dtypes

BF16 = dtypes.bfloat16
XS = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0])


def _softplus(x):
    return np.logaddexp(x, 0)


# name, function, NumPy reference, JAX 0.10's values at XS, JAX's derivatives at XS
ELEMENTWISE = [
    ("sparse_sigmoid", nn.sparse_sigmoid, lambda x: 0.5 * np.clip(x + 1, 0, 2),
     [0, 0, 0.5, 1, 1, 1], [0, 0.25, 0.5, 0.25, 0, 0]),
    ("sparse_plus", nn.sparse_plus,
     lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
     [0, 0, 0.25, 1, 3, 6], [0, 0, 0.5, 1, 1, 1]),
    ("hard_silu", nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6,
     [0, -0.33333333, 0, 0.66666667, 3, 6], [0, 0.16666667, 0.5, 0.83333333, 1, 1]),
    ("mish", nn.mish, lambda x: x * np.tanh(_softplus(x)),
     [-0.14564746, -0.30340146, 0, 0.86509839, 2.986535, 5.99992663],
     [-0.09339311, 0.05921676, 0.6, 1.04903622, 1.02110691, 1.00013414]),
    ("squareplus", nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2,
     [0.30277564, 0.61803399, 1, 1.61803399, 3.30277564, 6.16227766],
     [0.08397485, 0.2763932, 0.5, 0.7236068, 0.91602515, 0.97434165]),
    ("tanh", nn.tanh, np.tanh, np.tanh(XS), 1 - np.tanh(XS) ** 2),
    ("identity", nn.identity, lambda x: x, XS, np.ones(6)),
]
IDS = [c[0] for c in ELEMENTWISE]


@pytest.mark.parametrize("name,f,ref,values,grads", ELEMENTWISE, ids=IDS)
def test_values_and_kink_derivatives_are_jax_s(name, f, ref, values, grads):
    np.testing.assert_allclose(np.asarray(f(XS)), values, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(np.asarray(pb.vmap(pb.grad(f))(XS)), grads, rtol=1e-7,
                               atol=1e-8)
    np.testing.assert_allclose(np.asarray(pb.jit(pb.vmap(pb.grad(f)))(XS)), grads, rtol=1e-7,
                               atol=1e-8)


@pytest.mark.parametrize("name,f,ref,values,grads", ELEMENTWISE, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16])
def test_values_against_numpy_over_dtypes_and_layouts(name, f, ref, values, grads, dtype):
    x = np.random.default_rng(0).uniform(-5, 5, (4, 7)).astype(dtype)
    for arr in (x, x.T, x[:, ::-2], np.broadcast_to(x[:1], (3, 7)), x[:0]):
        got = f(arr)
        assert got.dtype == arr.dtype and got.shape == arr.shape
        tol = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-6}.get(np.dtype(dtype),
                                                                             2e-2)
        np.testing.assert_allclose(np.asarray(got).astype(np.float64),
                                   ref(arr.astype(np.float64)), rtol=tol, atol=tol)
        np.testing.assert_array_equal(np.asarray(pb.jit(f)(arr)), np.asarray(got))


@pytest.mark.parametrize("name,f,ref,values,grads", ELEMENTWISE, ids=IDS)
def test_derivatives_away_from_kinks(name, f, ref, values, grads):
    x = np.array([-2.3, -0.4, 0.3, 0.8, 2.1, 4.0])
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    check_vmap(f, (x,), atol=1e-12, rtol=1e-12)


def test_integer_inputs_promote_as_jax():
    assert nn.identity(np.int8(3)).dtype == np.int8
    assert nn.identity(3).weak_type
    # JAX 0.10 under x64 (the tests' mode): int32 goes to float32 through tanh and softplus,
    # to float64 through sparse_sigmoid's x + 1.0
    for f, want in ((nn.mish, np.float32), (nn.sparse_sigmoid, np.float64),
                    (nn.tanh, np.float32), (lambda v: nn.logmeanexp(v), np.float32)):
        assert f(np.array([1, 2], np.int32)).dtype == want
        assert f(np.array([1, 2], np.int64)).dtype == np.float64


@pytest.mark.x32
def test_integer_inputs_promote_as_jax_x32():
    for f in (nn.mish, nn.sparse_sigmoid, nn.tanh):
        assert f(np.array([1, 2], np.int32)).dtype == np.float32


def test_log1mexp():
    x = np.array([0.0, 1e-8, 0.5, 0.7, 1.0, 50.0])
    # JAX 0.10's values: log(-expm1(-x)) below log 2, log1p(-exp(-x)) above
    np.testing.assert_allclose(np.asarray(nn.log1mexp(x)),
                               [-np.inf, -1.84206807e+01, -9.32752130e-01, -6.86341003e-01,
                                -4.58675145e-01, -1.92874985e-22], rtol=1e-8)
    assert np.isnan(np.asarray(nn.log1mexp(np.array([-1.0]))))[0]
    # JAX's custom derivative 1 / expm1(x) (inf at 0)
    np.testing.assert_allclose(np.asarray(pb.vmap(pb.grad(nn.log1mexp))(np.array([0.0, 0.5, 1.0]))),
                               [np.inf, 1.54149408, 0.58197671], rtol=1e-8)
    check_grads(nn.log1mexp, (np.array([0.1, 0.69, 0.7, 3.0]),), order=2, modes=("fwd", "rev"))
    check_vmap(nn.log1mexp, (np.array([0.3, 2.0]),), atol=1e-12, rtol=1e-12)
    x = np.random.default_rng(1).uniform(1e-3, 30, 50)
    # Mächler's accurate pieces (log(-expm1(-x)) alone loses every digit for large x)
    want = np.where(x < np.log(2), np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))
    np.testing.assert_allclose(np.asarray(nn.log1mexp(x)), want, rtol=1e-12)


def test_logmeanexp():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(x, axis=1)), [1.62011451, 3.62011451],
                               rtol=1e-8)
    w = np.array([[True, False], [True, True]])
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(x, where=w)), 3.2503999281000766,
                               rtol=1e-12)
    got = nn.logmeanexp(x, axis=0, keepdims=True)
    assert got.shape == (1, 2)
    np.testing.assert_allclose(np.asarray(got),
                               np.log(np.mean(np.exp(x), axis=0, keepdims=True)), rtol=1e-12)
    assert np.all(np.isnan(np.asarray(nn.logmeanexp(np.zeros((2, 0)), axis=1))))
    y = np.random.default_rng(2).standard_normal((3, 4)) * 50
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(y, axis=(0, 1))),
                               np.logaddexp.reduce(y.ravel()) - np.log(12), rtol=1e-12)
    check_grads(lambda v: nn.logmeanexp(v, axis=1), (y / 50,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: nn.logmeanexp(v, axis=1, where=w), (x,), order=2)
    check_vmap(lambda v: nn.logmeanexp(v, axis=0), (y,), atol=1e-10, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(pb.jit(lambda v: nn.logmeanexp(v, axis=1))(y)),
                               np.asarray(nn.logmeanexp(y, axis=1)), rtol=1e-15)


def test_jax_as_oracle():
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(3).uniform(-4, 4, 40).astype(np.float32)
    x[:4] = [-3, -1, 1, 3]
    for name in ("tanh", "identity", "mish", "hard_silu", "sparse_sigmoid", "sparse_plus",
                 "squareplus"):
        jf, pf = getattr(jax.nn, name), getattr(nn, name)
        np.testing.assert_allclose(np.asarray(pf(x)), np.asarray(jf(x)), rtol=2e-6, atol=1e-6,
                                   err_msg=name)
        np.testing.assert_allclose(np.asarray(pb.vmap(pb.grad(pf))(x)),
                                   np.asarray(jax.vmap(jax.grad(jf))(x)), rtol=2e-6, atol=1e-6,
                                   err_msg=name)
    p = np.abs(x) + 1e-3
    np.testing.assert_allclose(np.asarray(nn.log1mexp(p)), np.asarray(jax.nn.log1mexp(p)),
                               rtol=2e-6)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(x.reshape(5, 8), axis=1)),
                               np.asarray(jax.nn.logmeanexp(x.reshape(5, 8), axis=1)), rtol=2e-6)
