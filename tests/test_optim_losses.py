"""pullback.optim losses against optax 0.2.8: values and gradients on random inputs,
extreme logits (+-1e4, -inf where optax allows it), integer labels, axis/where, and the errors
for wrong dtypes."""
from __future__ import annotations

import numpy as np
import pytest

import pullback
import pullback.numpy as pnp
from pullback import optim

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32

RNG = np.random.default_rng(0)


def _f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _close(ours, theirs, rtol=2e-5, atol=2e-6):
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.shape == t.shape and o.dtype == t.dtype, (o.shape, o.dtype, t.shape, t.dtype)
    np.testing.assert_allclose(o, t, rtol=rtol, atol=atol)


def _check(name, args, kwargs=None, argnums=(0,), jit=False, zero_for_nan_grads=False):
    """Value and the gradient (of the summed loss, w.r.t. argnums) against optax.

    zero_for_nan_grads: where optax's gradient is NaN (0 * -inf at a class ``where`` leaves
    out), pullback's must be 0, and equal elsewhere."""
    kwargs = kwargs or {}
    ours_fn, theirs_fn = getattr(optim, name), getattr(optax, name)
    ours_args = [pnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    theirs_args = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    # optax under jax.jit: one compilation instead of JAX's per-op eager compilations
    theirs_value = jax.jit(lambda *a: theirs_fn(*a, **kwargs))(*theirs_args)
    _close(ours_fn(*ours_args, **kwargs), theirs_value)

    def total(fn, np_mod):
        return lambda *a: np_mod.sum(fn(*a, **kwargs))
    g_ours = pullback.grad(total(ours_fn, pnp), argnums=argnums)(*ours_args)
    g_theirs = jax.jit(jax.grad(total(theirs_fn, jnp), argnums=argnums))(*theirs_args)
    for go, gt in zip(g_ours, g_theirs):
        if zero_for_nan_grads:
            nan = np.isnan(np.asarray(gt))
            assert np.all(np.asarray(go)[nan] == 0)
            gt = np.where(nan, 0, np.asarray(gt))
        _close(go, gt)
    if jit:
        _close(pullback.jit(lambda *a: ours_fn(*a, **kwargs))(*ours_args), theirs_value)


EXTREME = np.array([[1e4, -1e4, 0.0, 3.0], [-1e4, -1e4, 1e4, 1e4], [0.5, -0.5, 2.0, -2.0]],
                   np.float32)


@pytest.mark.parametrize("name", ["l2_loss", "squared_error", "huber_loss", "log_cosh"])
def test_regression_losses(name):
    p, t = _f32(3, 5, scale=3.0), _f32(3, 5)
    _check(name, (p, t), argnums=(0, 1), jit=True)
    _check(name, (p,))
    if name in ("huber_loss", "log_cosh"):  # these take broadcastable targets
        _check(name, (p, _f32(5)), argnums=(0, 1))
    # large errors: log_cosh must not overflow, huber is linear there
    _check(name, (p * 1e4, t))


def test_huber_delta():
    _check("huber_loss", (_f32(4, 3, scale=2.0), _f32(4, 3)), {"delta": 0.3}, argnums=(0, 1))


@pytest.mark.parametrize("kwargs", [{}, {"epsilon": 1e-3}, {"axis": 0},
                                    {"where": np.array([True, False, True, True, False])}])
@pytest.mark.parametrize("name", ["cosine_similarity", "cosine_distance"])
def test_cosine(name, kwargs):
    _check(name, (_f32(3, 5), _f32(3, 5)), kwargs, argnums=(0, 1))


def test_cosine_of_zero_vector_with_epsilon():
    z = np.zeros((2, 3), np.float32)
    _check("cosine_similarity", (z, _f32(2, 3)), {"epsilon": 1e-6})


def test_sigmoid_binary_cross_entropy():
    labels = (RNG.random((3, 4)) > 0.5).astype(np.float32)
    _check("sigmoid_binary_cross_entropy", (_f32(3, 4, scale=3.0), labels), jit=True)
    _check("sigmoid_binary_cross_entropy", (EXTREME, labels))
    # probabilities as labels, gradient w.r.t. both
    _check("sigmoid_binary_cross_entropy", (EXTREME, RNG.random((3, 4)).astype(np.float32)),
           argnums=(0, 1))
    # integer labels are cast to the logits' dtype
    _check("sigmoid_binary_cross_entropy", (_f32(6), np.array([0, 1, 1, 0, 1, 0], np.int32)))
    _check("sigmoid_binary_cross_entropy", (_f32(4), np.array([False, True, True, False])))


@pytest.mark.parametrize("kwargs", [{}, {"gamma": 0.5}, {"alpha": 0.25, "gamma": 3.0}])
def test_sigmoid_focal_loss(kwargs):
    labels = (RNG.random((3, 4)) > 0.5).astype(np.float32)
    _check("sigmoid_focal_loss", (_f32(3, 4, scale=3.0), labels), kwargs)
    _check("sigmoid_focal_loss", (EXTREME, labels), kwargs)


def test_hinge_loss():
    targets = np.sign(_f32(3, 4)).astype(np.float32)
    _check("hinge_loss", (_f32(3, 4), targets), jit=True)


def _onehot(labels, n):
    return np.eye(n, dtype=np.float32)[labels]


@pytest.mark.parametrize("name", ["softmax_cross_entropy", "safe_softmax_cross_entropy"])
def test_softmax_cross_entropy(name):
    labels = _onehot(RNG.integers(0, 4, size=3), 4)
    _check(name, (_f32(3, 4, scale=2.0), labels), argnums=(0, 1), jit=True)
    _check(name, (EXTREME, labels), argnums=(0, 1))
    soft = RNG.dirichlet(np.ones(4), size=3).astype(np.float32)
    _check(name, (EXTREME, soft), argnums=(0, 1))


def test_safe_softmax_cross_entropy_with_minus_inf_logits():
    logits = np.array([[0.0, -np.inf, 1.0], [2.0, 1.0, -np.inf]], np.float32)
    labels = np.array([[1.0, 0.0, 0.0], [0.3, 0.7, 0.0]], np.float32)
    _check("safe_softmax_cross_entropy", (logits, labels), argnums=(0, 1))
    loss = optim.safe_softmax_cross_entropy(pnp.asarray(logits), pnp.asarray(labels))
    assert np.all(np.isfinite(np.asarray(loss)))
    # value_and_grad takes the value from the custom rule: finite too
    v, g = pullback.value_and_grad(
        lambda x: optim.safe_softmax_cross_entropy(x, pnp.asarray(labels)).sum())(
            pnp.asarray(logits))
    v_t, g_t = jax.value_and_grad(
        lambda x: optax.safe_softmax_cross_entropy(x, jnp.asarray(labels)).sum())(
            jnp.asarray(logits))
    _close(v, v_t)
    _close(g, g_t)


@pytest.mark.parametrize("kwargs", [
    {"axis": 0}, {"axis": (0, 2)},
    {"where": np.array([[True, True, False, True]] * 2)},
    {"where": np.array([True, False])},  # per row: expanded along the class axis
])
def test_softmax_cross_entropy_axis_where(kwargs):
    if kwargs.get("axis") is not None:
        logits, labels = _f32(3, 2, 4), RNG.dirichlet(np.ones(3), size=(2, 4))
        labels = np.moveaxis(labels, -1, 0).astype(np.float32)
        if kwargs["axis"] == (0, 2):
            labels = np.broadcast_to(labels / 4, (3, 2, 4)).copy()
    else:
        logits, labels = _f32(2, 4), _onehot(np.array([0, 3]), 4)
    # the labels' gradient at left-out classes: optax's is NaN, pullback.nn's fused kernel 0
    _check("softmax_cross_entropy", (logits, labels), kwargs, argnums=(0, 1),
           zero_for_nan_grads="where" in kwargs)


@pytest.mark.parametrize("kwargs", [
    {}, {"axis": 0}, {"axis": (1, 2)},
    {"where": np.array([[True, True, False, True], [False] * 4, [True] * 4])},
])
def test_softmax_cross_entropy_with_integer_labels(kwargs):
    name = "softmax_cross_entropy_with_integer_labels"
    if kwargs.get("axis") == 0:
        logits, labels = _f32(4, 3, scale=3.0), RNG.integers(0, 4, size=3).astype(np.int32)
    elif kwargs.get("axis") == (1, 2):
        logits, labels = _f32(3, 2, 2), RNG.integers(0, 4, size=3).astype(np.int32)
    else:
        logits, labels = _f32(3, 4, scale=3.0), RNG.integers(0, 4, size=3).astype(np.int32)
    _check(name, (logits, labels), kwargs, jit=not kwargs)
    if not kwargs:
        _check(name, (EXTREME, np.array([1, 0, 3], np.int32)))
        _check(name, (EXTREME, np.array([1, 0, 3], np.int32)))
        # -inf on a wrong class is allowed: that class simply has probability 0
        minf = np.array([[0.0, -np.inf, 2.0]], np.float32)
        _check(name, (minf, np.array([2], np.int32)))


@pytest.mark.parametrize("name", ["kl_divergence", "generalized_kl_divergence"])
def test_kl_divergence(name):
    logp = np.log(RNG.dirichlet(np.ones(5), size=3)).astype(np.float32)
    targets = RNG.dirichlet(np.ones(5), size=3).astype(np.float32)
    targets[0, 2] = 0.0  # a zero target contributes 0, not nan
    _check(name, (logp, targets), argnums=(0,), jit=True)
    _check(name, (logp, targets), {"axis": 0})
    _check(name, (logp, targets), {"where": np.array([True, True, False, True, True])})


def test_kl_divergence_with_log_targets():
    logp = pnp.asarray(np.log(RNG.dirichlet(np.ones(5), size=3)).astype(np.float32))
    logt = pnp.asarray(np.log(RNG.dirichlet(np.ones(5), size=3)).astype(np.float32))
    # only in optax.losses, as in optax
    assert not hasattr(optim, "kl_divergence_with_log_targets")
    ours = optim.losses.kl_divergence_with_log_targets
    theirs = optax.losses.kl_divergence_with_log_targets
    _close(ours(logp, logt), theirs(jnp.asarray(logp), jnp.asarray(logt)))
    _close(pullback.grad(lambda a, b: ours(a, b).sum(), argnums=(0, 1))(logp, logt)[1],
           jax.grad(lambda a, b: theirs(a, b).sum(), argnums=(0, 1))(
               jnp.asarray(logp), jnp.asarray(logt))[1])


def test_losses_submodule():
    assert optim.losses.softmax_cross_entropy is optim.softmax_cross_entropy
    assert optim.losses.l2_loss is optim.l2_loss


@pytest.mark.parametrize("call", [
    lambda m, a: m.l2_loss(a(np.array([1, 2], np.int32))),
    lambda m, a: m.softmax_cross_entropy(a(np.array([[1, 2]], np.int32)),
                                         a(np.array([[0., 1.]], np.float32))),
    lambda m, a: m.softmax_cross_entropy_with_integer_labels(
        a(np.array([[1., 2.]], np.float32)), a(np.array([1.0], np.float32))),
    lambda m, a: m.kl_divergence(a(np.array([0.5], np.float32)), a(np.array([1], np.int32))),
])
def test_wrong_dtypes_raise_type_error(call):
    with pytest.raises(TypeError):
        call(optax, jnp.asarray)
    with pytest.raises(TypeError, match="expected `(predictions|logits|labels|targets)`"):
        call(optim, pnp.asarray)


def test_squared_error_shape_mismatch():
    with pytest.raises(ValueError, match="squared_error: shape mismatch"):
        optim.squared_error(pnp.ones((2, 3)), pnp.ones((3,)))
    with pytest.raises(ValueError):
        optax.squared_error(jnp.ones((2, 3)), jnp.ones((3,)))


def test_convex_kl_divergence_is_the_deprecated_generalized_one():
    logp, targets = pnp.asarray(_f32(2, 3)), pnp.asarray(RNG.random((2, 3)).astype(np.float32))
    with pytest.warns(DeprecationWarning, match="generalized_kl_divergence"):
        value = optim.convex_kl_divergence(logp, targets)
    _close(value, optim.generalized_kl_divergence(logp, targets))
