"""pullback.nn against NumPy references: values over ordinary and special points (ties, kinks,
infinities, NaN), derivatives against finite differences where smooth and against JAX's
documented choices at the kinks, and the same under vmap and jit."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import pullback as pb
import pullback.numpy as jnp
from pullback import nn

SPECIAL = np.array([-np.inf, -100, -30, -6, -3, -1, -0.5, -1e-3, 0, 1e-3, 0.5, 1, 3, 6, 30, 100,
                    np.inf, np.nan])


def _sigmoid(x):
    return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


def _softplus(x):
    return np.logaddexp(x, 0)


def _erf(x):
    return np.vectorize(math.erf)(x)


def _elu(x, a=1.0):
    return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
GELU_C = math.sqrt(2 / math.pi)

# name, function, NumPy reference
ACTIVATIONS = [
    ("relu", nn.relu, lambda x: np.maximum(x, 0)),
    ("relu6", nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    ("sigmoid", nn.sigmoid, _sigmoid),
    ("log_sigmoid", nn.log_sigmoid, lambda x: -_softplus(-x)),
    ("softplus", nn.softplus, _softplus),
    ("sparse_plus", nn.sparse_plus,
     lambda x: np.where(x <= -1, 0.0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
    ("squareplus", nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    ("soft_sign", nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    ("silu", nn.silu, lambda x: x * _sigmoid(x)),
    ("hard_sigmoid", nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    ("hard_swish", nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("hard_tanh", nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    ("elu", nn.elu, _elu),
    ("celu", nn.celu, lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0))),
    ("selu", nn.selu, lambda x: SELU_S * _elu(x, SELU_A)),
    ("gelu", nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x ** 3)))),
    ("gelu_exact", lambda x: nn.gelu(x, approximate=False),
     lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    ("leaky_relu", nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
]
IDS = [a[0] for a in ACTIVATIONS]


@pytest.mark.parametrize("name,f,ref", ACTIVATIONS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_values_at_special_points(name, f, ref, dtype):
    x = SPECIAL.astype(dtype)
    got = np.asarray(f(jnp.asarray(x)))
    assert got.dtype == dtype and got.shape == x.shape
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    # float32 rounds each step: cancellation (squareplus far below 0) and saturation (gelu's
    # tanh reaching -1) err by a few ulps of |x|, not of the result
    eps = np.finfo(dtype).eps
    atol = 8 * eps * np.where(np.isfinite(x), np.abs(x), 0) if dtype == np.float32 else 1e-300
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf
        bad = ~((np.isnan(got) & np.isnan(want)) | (got == want)
                | (np.abs(got - want) <= atol + (8 * eps) * np.abs(want)))
    assert not bad.any(), (x[bad], got[bad], want[bad])


@pytest.mark.parametrize("name,f,ref", ACTIVATIONS, ids=IDS)
def test_activation_on_0d_and_empty_and_strided(name, f, ref):
    assert np.asarray(f(jnp.asarray(np.float32(0.5)))).shape == ()
    assert np.asarray(f(jnp.zeros((0, 3)))).shape == (0, 3)
    x = np.linspace(-4, 4, 48).reshape(6, 8)[::-2, ::3]  # flipped and strided
    np.testing.assert_allclose(np.asarray(f(jnp.asarray(x))), ref(x), rtol=1e-12)


# derivatives where the functions are smooth: central differences in float64
SMOOTH = np.array([-5.0, -2.5, -0.7, -0.2, 0.3, 0.9, 2.2, 4.6])


@pytest.mark.parametrize("name,f,ref", ACTIVATIONS, ids=IDS)
def test_activation_grad_against_finite_differences(name, f, ref):
    g = pb.vmap(pb.grad(f))(jnp.asarray(SMOOTH))
    h = 1e-6
    fd = (ref(SMOOTH + h) - ref(SMOOTH - h)) / (2 * h)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-8)


# the one-sided choices at kinks and ties, as JAX makes them
KINKS = [
    ("relu", nn.relu, [(0.0, 0.0), (-0.0, 0.0), (np.inf, 1.0), (-np.inf, 0.0)]),
    ("relu6", nn.relu6, [(0.0, 0.0), (6.0, 0.0), (3.0, 1.0), (np.inf, 0.0)]),
    ("hard_sigmoid", nn.hard_sigmoid, [(-3.0, 0.0), (3.0, 0.0), (0.0, 1 / 6)]),
    ("hard_swish", nn.hard_swish, [(-3.0, 0.0), (3.0, 1.0), (np.inf, 1.0), (-np.inf, 0.0)]),
    ("hard_tanh", nn.hard_tanh, [(-1.0, 1.0), (1.0, 1.0), (np.nan, 1.0), (np.inf, 0.0)]),
    ("softplus", nn.softplus, [(0.0, 0.5), (np.inf, 1.0), (-np.inf, 0.0)]),
    ("log_sigmoid", nn.log_sigmoid, [(0.0, 0.5), (np.inf, 0.0), (-np.inf, 1.0)]),
    ("leaky_relu", nn.leaky_relu, [(0.0, 1.0), (-np.inf, 0.01)]),
    ("elu", nn.elu, [(0.0, 1.0), (-np.inf, 0.0)]),
    ("celu", nn.celu, [(0.0, 1.0)]),
]


@pytest.mark.parametrize("name,f,points", KINKS, ids=[k[0] for k in KINKS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_grad_at_kinks(name, f, points, dtype):
    xs = np.array([p for p, _ in points], dtype)
    want = np.array([d for _, d in points], dtype)
    g = np.asarray(pb.vmap(pb.grad(f))(jnp.asarray(xs)))
    np.testing.assert_allclose(g, want, rtol=1e-6)
    one = [np.asarray(pb.grad(f)(jnp.asarray(x))) for x in xs]  # unbatched, one by one
    np.testing.assert_allclose(np.array(one), want, rtol=1e-6)


def test_relu_backward_keeps_a_boolean_mask():
    """The derivative is select(x > 0, g, 0): the residual is a bool, not a float mask."""
    text = str(pb.make_jaxpr(pb.grad(lambda x: jnp.sum(nn.relu(x))))(jnp.ones((4,))))
    assert "gt" in text and "bool[4]" in text and "mul" not in text


@given(hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=5),
                  elements=st.floats(-50, 50).map(lambda v: 0.0 if abs(v) < 1e-300 else v)))
def test_activations_under_jit_and_vmap_equal_eager(x):
    # (no subnormal results: jit flushes them to zero by default, as XLA does)
    for _, f, ref in ACTIVATIONS:
        eager = np.asarray(f(jnp.asarray(x)))
        np.testing.assert_array_equal(np.asarray(pb.jit(f)(jnp.asarray(x))), eager)
        if x.ndim:
            np.testing.assert_array_equal(np.asarray(pb.vmap(f)(jnp.asarray(x))), eager)
        # (a few ulps of |x| where the formula cancels: gelu's 1 + tanh near -1)
        assert np.all(np.abs(eager - ref(x)) <= 1e-9 * np.abs(ref(x)) + 1e-14 * (1 + np.abs(x)))


def test_parameters_of_leaky_relu_elu_celu():
    x = np.array([-2.0, -0.5, 0.0, 1.5])
    np.testing.assert_allclose(np.asarray(nn.leaky_relu(jnp.asarray(x), 0.3)),
                               np.where(x >= 0, x, 0.3 * x))
    np.testing.assert_allclose(np.asarray(nn.elu(jnp.asarray(x), 0.3)), _elu(x, 0.3))
    np.testing.assert_allclose(np.asarray(nn.celu(jnp.asarray(x), 0.3)),
                               np.maximum(x, 0) + 0.3 * np.expm1(np.minimum(x, 0) / 0.3))


# ---- softmax and friends ----

def _ref_logsumexp(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    return np.squeeze(np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m, axis)


X_INF = np.array([[1.0, 2.0, -np.inf, 3.0], [-np.inf] * 4, [0.0] * 4, [1000.0, -1000.0, 0.0, 5.0]])


def test_softmax_log_softmax_logsumexp_values_with_infinities():
    with np.errstate(all="ignore"):
        lse = _ref_logsumexp(X_INF, -1)
        np.testing.assert_allclose(np.asarray(nn.logsumexp(jnp.asarray(X_INF), axis=-1)), lse)
        want_log = X_INF - lse[:, None]
        np.testing.assert_allclose(np.asarray(nn.log_softmax(jnp.asarray(X_INF))), want_log,
                                   equal_nan=True)
        np.testing.assert_allclose(np.asarray(nn.softmax(jnp.asarray(X_INF))), np.exp(want_log),
                                   equal_nan=True, atol=1e-300)


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 1)])
def test_softmax_family_over_axes(axis):
    x = np.random.default_rng(3).normal(size=(3, 5)) * 4
    lse = _ref_logsumexp(x, axis)
    lse_k = np.expand_dims(lse, axis) if isinstance(axis, int) else lse.reshape(1, 1)
    np.testing.assert_allclose(np.asarray(nn.logsumexp(jnp.asarray(x), axis=axis)), lse,
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.log_softmax(jnp.asarray(x), axis=axis)), x - lse_k,
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(nn.softmax(jnp.asarray(x), axis=axis)),
                               np.exp(x - lse_k), rtol=1e-12)


def test_softmax_family_grads_against_finite_differences():
    x = np.random.default_rng(4).normal(size=(3, 5))
    w = np.arange(15.0).reshape(3, 5)
    h = 1e-6
    for f in (nn.softmax, nn.log_softmax, lambda v: nn.logsumexp(v, axis=-1, keepdims=True)):
        def loss(v, f=f):
            return jnp.sum(f(v) * jnp.asarray(w)[:, :f(v).shape[-1]])
        g = np.asarray(pb.grad(loss)(jnp.asarray(x)))
        fd = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[i] = h
            fd[i] = (float(loss(jnp.asarray(x + e))) - float(loss(jnp.asarray(x - e)))) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


def test_softmax_family_where_masks():
    x = np.random.default_rng(5).normal(size=(3, 5))
    mask = np.array([True, True, False, True, False])
    xm = np.where(mask, x, -np.inf)
    lse = _ref_logsumexp(xm, -1)[:, None]
    got = np.asarray(nn.log_softmax(jnp.asarray(x), where=jnp.asarray(mask)))
    np.testing.assert_allclose(got[:, mask], (x - lse)[:, mask], rtol=1e-12)
    sm = np.asarray(nn.softmax(jnp.asarray(x), where=jnp.asarray(mask)))
    np.testing.assert_allclose(sm, np.where(mask, np.exp(xm - lse), 0.0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.logsumexp(jnp.asarray(x), axis=-1,
                                                       where=jnp.asarray(mask))), lse[:, 0])


def test_logsumexp_with_weights_and_sign():
    x = np.random.default_rng(6).normal(size=(3, 4))
    b = np.array([1.0, -2.0, 0.5, -0.1])
    out, sign = nn.logsumexp(jnp.asarray(x), axis=-1, b=jnp.asarray(b), return_sign=True)
    s = np.sum(b * np.exp(x), axis=-1)
    np.testing.assert_allclose(np.asarray(out), np.log(np.abs(s)), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(sign), np.sign(s))


def test_standardize_glu_one_hot():
    x = np.random.default_rng(7).normal(size=(4, 6))
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(jnp.asarray(x))), want, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(nn.glu(jnp.asarray(x))),
                               x[:, :3] * _sigmoid(x[:, 3:]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.glu(jnp.asarray(x), axis=0)),
                               x[:2] * _sigmoid(x[2:]), rtol=1e-12)
    oh = np.asarray(nn.one_hot(jnp.asarray([0, 2, 5, -1]), 3))
    np.testing.assert_array_equal(oh, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert oh.dtype == np.float32
    oh0 = np.asarray(nn.one_hot(jnp.asarray([[0, 1]]), 3, axis=0, dtype=jnp.int32))
    assert oh0.shape == (3, 1, 2) and oh0.dtype == np.int32
    np.testing.assert_array_equal(oh0[:, 0, :], [[1, 0], [0, 1], [0, 0]])
