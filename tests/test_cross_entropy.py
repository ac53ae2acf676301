"""pullback.nn.softmax_cross_entropy and softmax_cross_entropy_with_integer_labels
(primitives/cross_entropy.py, csrc/cross_entropy.c): values against NumPy formulas written here
over hypothesis shapes, dtypes, layouts, class axes and masks; optax 0.2.8's values hard-coded
(labels out of range, negative labels, fully masked rows, tuple axes) and, when installed,
optax itself as an oracle; derivatives (logits and probability labels) against finite
differences to second order in both modes; every mode of the primitive against its reference;
vmap against a loop; jit against eager; errors naming the argument."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
from pullback import numpy as jnp
from pullback.primitives.cross_entropy import MODES, xent_p, xent_reference
from pullback.test_util import check_grads, check_vmap
from pullback.tracer import dtypes

BF16 = dtypes.bfloat16
DTYPES = [np.float32, np.float64, np.float16, BF16]
TOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 3e-6, np.dtype(np.float16): 2e-3,
       np.dtype(BF16): 1.6e-2}
int_xent = pb.nn.softmax_cross_entropy_with_integer_labels
prob_xent = pb.nn.softmax_cross_entropy


# ---- NumPy formulas (float64, independent of the primitive's reference) ----

def log_softmax_np(x, axis, where=None):
    x = x.astype(np.float64)
    xm = x if where is None else np.where(where, x, -np.inf)
    m = np.max(xm, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        return xm - m - np.log(np.sum(np.exp(xm - m), axis=axis, keepdims=True))


def int_xent_np(logits, labels, axis=-1, where=None):
    C = logits.shape[axis]
    x = np.moveaxis(logits.astype(np.float64), axis, -1)
    w = None if where is None else np.moveaxis(where, axis, -1)
    xm = x if w is None else np.where(w, x, -np.inf)
    m = np.max(xm, -1, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        lse = (np.log(np.exp(xm - m).sum(-1, keepdims=True)) + m)[..., 0]
    lab = np.where(labels < 0, labels + C, labels)
    ok = (lab >= 0) & (lab < C)
    picked = np.take_along_axis(x, np.where(ok, lab, 0)[..., None], -1)[..., 0] if C else 0
    out = np.where(ok, lse - picked, np.nan)
    if w is not None:
        out = np.where(w.any(-1), out, 0.0)
    return out


def prob_xent_np(logits, labels, axis=-1, where=None):
    lp = log_softmax_np(logits, axis, where)
    with np.errstate(invalid="ignore"):
        terms = labels.astype(np.float64) * lp
    if where is not None:
        terms = np.where(where, terms, 0)
    return -terms.sum(axis)


def assert_close(got, want, dtype, scale=1.0):
    tol = TOL[np.dtype(dtype)]
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), np.asarray(want, np.float64),
                               atol=tol * 8 * scale, rtol=tol * 8)


def normal(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---- values ----

@st.composite
def xent_cases(draw):
    lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    C = draw(st.integers(1, 9))
    axis = draw(st.integers(-len(lead) - 1, len(lead)))
    dtype = draw(st.sampled_from(DTYPES))
    where = draw(st.sampled_from([None, "full", "rows"]))
    layout = draw(st.sampled_from(["contiguous", "transposed", "strided"]))
    scale = draw(st.sampled_from([1.0, 30.0]))
    return lead, C, axis, dtype, where, layout, scale


def _case_arrays(lead, C, axis, dtype, where, layout, scale, seed=0):
    shape = list(lead)
    shape.insert(axis % (len(lead) + 1), C)
    shape = tuple(shape)
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal(shape) * scale).astype(dtype)
    if layout == "transposed" and logits.ndim > 1:
        logits = np.ascontiguousarray(logits.T).T
    elif layout == "strided":
        big = np.zeros(shape[:-1] + (2 * shape[-1],), dtype)
        big[..., ::2] = logits
        logits = big[..., ::2]
    labels = rng.integers(-C, C, lead).astype(np.int32)
    probs = rng.uniform(0, 1, shape)
    probs = (probs / probs.sum(axis % len(shape), keepdims=True)).astype(dtype)
    w = None
    if where == "full":
        w = rng.uniform(size=shape) < 0.7
    elif where == "rows":
        w = rng.uniform(size=lead) < 0.7
    return logits, labels, probs, w


@given(xent_cases())
def test_integer_labels_match_numpy(case):
    lead, C, axis, dtype, where, layout, scale = case
    logits, labels, _, w = _case_arrays(*case)
    got = int_xent(logits, labels, axis=axis, where=w)
    assert got.shape == lead and got.dtype == logits.dtype
    wf = None if w is None else (w if w.ndim == logits.ndim
                                 else np.expand_dims(w, axis % logits.ndim))
    want = int_xent_np(logits.astype(np.float32 if dtype != np.float64 else np.float64), labels,
                       axis % logits.ndim, None if wf is None else np.broadcast_to(wf,
                                                                                    logits.shape))
    assert_close(got, want, dtype, scale)
    assert_close(pb.jit(lambda a, b: int_xent(a, b, axis=axis, where=w))(logits, labels), got,
                 dtype, scale)


@given(xent_cases())
def test_probability_labels_match_numpy(case):
    lead, C, axis, dtype, where, layout, scale = case
    logits, _, probs, w = _case_arrays(*case)
    got = prob_xent(logits, probs, axis=axis, where=w)
    assert got.shape == lead and got.dtype == logits.dtype
    wf = None if w is None else np.broadcast_to(
        w if w.ndim == logits.ndim else np.expand_dims(w, axis % logits.ndim), logits.shape)
    want = prob_xent_np(logits.astype(np.float32 if dtype != np.float64 else np.float64),
                        probs.astype(np.float64), axis % logits.ndim, wf)
    assert_close(got, want, dtype, scale)
    assert_close(pb.jit(lambda a, b: prob_xent(a, b, axis=axis, where=w))(logits, probs), got,
                 dtype, scale)


def test_long_rows_and_large_logits_are_stable():
    logits = normal((5, 3000), 1, np.float32) * 50
    logits[0, 7] = 1e4  # would overflow exp without the max shift
    labels = np.array([7, 0, -1, 2999, 1234])
    got = np.asarray(int_xent(logits, labels))
    assert np.all(np.isfinite(got))
    assert_close(got, int_xent_np(logits, labels), np.float32, 1e3)
    probs = np.abs(normal((5, 3000), 2))
    probs /= probs.sum(-1, keepdims=True)
    assert_close(prob_xent(logits.astype(np.float64), probs),
                 prob_xent_np(logits.astype(np.float64), probs), np.float64, 1e4)
    g = np.asarray(pb.grad(lambda l: jnp.sum(int_xent(l, labels)))(logits))
    np.testing.assert_allclose(g.sum(-1), 0, atol=1e-5)  # softmax - onehot sums to 0


def test_probability_labels_keep_precision_at_large_logits():
    # optax's -sum(y * log_softmax(l)) keeps (l - max) apart from log(sum exp): a float32 lse
    # of 1e4 + log 2 would round log 2 to 2**-10
    logits = np.array([[1e4, 1e4, -1e4], [-1e4, 3e4, 3e4 - 1.0]], np.float32)
    labels = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]], np.float32)
    want = [np.log(2.0), np.log1p(np.exp(-1.0)) + 0.5]
    np.testing.assert_allclose(np.asarray(prob_xent(logits, labels)), want, rtol=1e-6)
    g = pb.grad(lambda y: jnp.sum(prob_xent(logits, y)))(labels)  # -log_softmax
    np.testing.assert_allclose(np.asarray(g)[0, :2], [np.log(2.0)] * 2, rtol=1e-6)


# ---- optax's values (optax 0.2.8 on JAX 0.10, hard-coded) ----

def test_optax_docstring_values():
    logits = np.array([[1.2, -0.8, -0.5], [0.9, -1.2, 1.1]], np.float32)
    np.testing.assert_allclose(np.asarray(int_xent(logits, np.array([0, 1]))),
                               [0.2761, 2.9518], atol=1e-4)
    np.testing.assert_allclose(np.asarray(prob_xent(logits, np.eye(3)[[0, 1]])),
                               [0.2761, 2.9518], atol=1e-4)
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    labels = np.ravel_multi_index((np.array([[1, 2]]), np.array([[1, 3]])), (3, 4))
    np.testing.assert_allclose(np.asarray(int_xent(x, labels, axis=(2, 3))),
                               [[6.4587, 0.4587]], atol=1e-4)


def test_out_of_range_labels_follow_optax():
    # optax picks the label's logit with take_along_axis: negative labels wrap, others give NaN;
    # the gradient of an out-of-range label is the softmax alone
    logits = np.array([[1.0, 2.0, 3.0]] * 5)
    labels = np.array([0, -1, 3, -4, 2])
    np.testing.assert_allclose(np.asarray(int_xent(logits, labels)),
                               [2.40760596, 0.40760596, np.nan, np.nan, 0.40760596], rtol=1e-7)
    g = np.asarray(pb.grad(lambda l: jnp.sum(int_xent(l, labels)))(logits))
    p = [0.09003057, 0.24472847, 0.66524096]
    np.testing.assert_allclose(g, [[p[0] - 1, p[1], p[2]], [p[0], p[1], p[2] - 1], p, p,
                                   [p[0], p[1], p[2] - 1]], rtol=1e-7)
    # an empty class axis: JAX's gather reads 0, the loss is -inf
    np.testing.assert_array_equal(np.asarray(int_xent(np.zeros((2, 0)), np.array([0, -1]))),
                                  [-np.inf, -np.inf])
    assert np.isnan(np.asarray(int_xent(np.array([[np.inf, 0.0]]), np.array([0]))))[0]
    np.testing.assert_array_equal(np.asarray(int_xent(np.array([[-np.inf, 0.0]]),
                                                      np.array([1]))), [0.0])
    np.testing.assert_array_equal(np.asarray(int_xent(np.array([[-np.inf, 0.0]]),
                                                      np.array([0]))), [np.inf])
    # 0 * -inf: optax's probability form is NaN there too
    assert np.isnan(np.asarray(prob_xent(np.array([[-np.inf, 0.0]]), np.array([[0.0, 1.0]]))))[0]
    assert np.asarray(int_xent(np.array([[1e4, 0.0, -1e4]], np.float32), np.array([2])))[0] == 2e4


def test_where_follows_optax():
    logits = np.array([[1.0, 2.0, 3.0]] * 5)
    w = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 1], [0, 1, 0], [1, 1, 0]], bool)
    labels = np.array([0, 0, 0, 0, 2])
    np.testing.assert_allclose(np.asarray(int_xent(logits, labels, where=w)),
                               [2.12692801, 0.0, 2.40760596, 1.0, -0.68673831], rtol=1e-7)
    g = np.asarray(pb.grad(lambda l: jnp.sum(int_xent(l, labels, where=w)))(logits))
    np.testing.assert_allclose(g, [[-0.88079708, 0, 0.88079708], [0, 0, 0],
                                   [-0.90996943, 0.24472847, 0.66524096], [-1, 1, 0],
                                   [0.26894142, 0.73105858, -1]], rtol=1e-7, atol=1e-12)
    y = np.array([[0.2, 0.3, 0.5]] * 5)
    np.testing.assert_allclose(np.asarray(prob_xent(logits, y, where=w)),
                               [0.48884961, 0.0, 1.10760596, 0.0, 0.35663084], rtol=1e-7)
    g = np.asarray(pb.grad(lambda l: jnp.sum(prob_xent(l, y, where=w)))(logits))
    np.testing.assert_allclose(g, [[-0.11655795, 0, 0.11655795], [0, 0, 0],
                                   [-0.10996943, -0.05527153, 0.16524096], [0, 0, 0],
                                   [-0.06552929, 0.06552929, 0]], rtol=1e-7, atol=1e-12)
    # the labels' gradient: optax gives NaN at masked classes (0 * -inf in its log_softmax);
    # the fused kernel gives 0 there (a deliberate difference), the same values elsewhere
    g = np.asarray(pb.grad(lambda y: jnp.sum(prob_xent(logits, y, where=w)))(y))
    np.testing.assert_allclose(g, [[2.12692801, 0, 0.12692801], [0, 0, 0],
                                   [2.40760596, 1.40760596, 0.40760596], [0, 0, 0],
                                   [1.31326169, 0.31326169, 0]], rtol=1e-7, atol=1e-12)
    # a per-example mask spreads over the class axis
    np.testing.assert_allclose(np.asarray(int_xent(logits, labels, where=w.any(-1))),
                               [2.40760596, 0, 2.40760596, 2.40760596, 0.40760596], rtol=1e-7)


def test_dtypes_follow_optax():
    assert int_xent(np.ones((2, 3), BF16), np.array([0, 1])).dtype == BF16
    assert prob_xent(np.ones((2, 3), BF16), np.ones((2, 3))).dtype == np.float64
    assert prob_xent(np.ones((2, 3), np.float32), np.ones((2, 3), np.int32)).dtype == np.float32
    assert prob_xent(np.ones((2, 3), np.float16), np.ones((2, 3), np.int32)).dtype == np.float16
    np.testing.assert_allclose(np.asarray(prob_xent(np.ones((2, 3, 4)),
                                                    np.ones((2, 3, 4)) / 12, axis=None)),
                               6.356107660695892, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(prob_xent(np.ones((2, 3, 4)), np.ones((2, 3, 4)) / 12,
                                                    axis=(1, 2))), [2.48490665] * 2, rtol=1e-7)


def test_optax_as_oracle():
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(0)
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        for axis in (-1, 0, 1, (0, 2), (2, 1)):
            logits = rng.standard_normal((3, 4, 5))
            classes = (np.prod([logits.shape[a] for a in axis]) if isinstance(axis, tuple)
                       else logits.shape[axis])
            batch = tuple(n for i, n in enumerate(logits.shape)
                          if i not in ((axis,) if isinstance(axis, int) else axis)
                          and i - 3 not in ((axis,) if isinstance(axis, int) else axis))
            labels = rng.integers(-classes, classes, batch)
            w = rng.uniform(size=logits.shape) < 0.6
            want = optax.softmax_cross_entropy_with_integer_labels(logits, labels, axis=axis,
                                                                   where=w)
            np.testing.assert_allclose(np.asarray(int_xent(logits, labels, axis=axis, where=w)),
                                       np.asarray(want), rtol=1e-10, atol=1e-12)
            probs = rng.uniform(size=logits.shape)
            want = optax.softmax_cross_entropy(logits, probs, axis=axis, where=w)
            np.testing.assert_allclose(np.asarray(prob_xent(logits, probs, axis=axis, where=w)),
                                       np.asarray(want), rtol=1e-10, atol=1e-12)
            gw = jax.grad(lambda l: optax.softmax_cross_entropy_with_integer_labels(
                l, labels, axis=axis).sum())(logits)
            g = pb.grad(lambda l: jnp.sum(int_xent(l, labels, axis=axis)))(logits)
            np.testing.assert_allclose(np.asarray(g), np.asarray(gw), rtol=1e-10, atol=1e-12)
    finally:
        jax.config.update("jax_enable_x64", previous)


# ---- derivatives ----

L = normal((3, 5), 3)
LAB = np.array([0, 4, -2])
Y = np.abs(normal((3, 5), 4))
W = np.random.default_rng(5).uniform(size=(3, 5)) < 0.7
W[1] = False  # a fully masked row

GRAD_CASES = [
    ("int", lambda l: int_xent(l, LAB), (L,)),
    ("int-axis0", lambda l: int_xent(l, np.array([1, 0, 2, 2, 1]), axis=0), (L,)),
    ("int-where", lambda l: int_xent(l, LAB, where=W), (L,)),
    ("int-3d-tuple-axis", lambda l: int_xent(l, np.array([3, 1]), axis=(0, 2)),
     (normal((2, 2, 3), 6),)),
    ("prob", lambda l, y: prob_xent(l, y), (L, Y)),
    ("prob-where", lambda l, y: prob_xent(l, y, where=W), (L, Y)),
    ("prob-axis0", lambda l, y: prob_xent(l, y, axis=0), (L, Y)),
    ("prob-labels-only", lambda y: prob_xent(L, y, where=W), (Y,)),
]


@pytest.mark.parametrize("name,f,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_second_order_derivatives(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_third_order_through_the_probs_mode():
    check_grads(lambda l: int_xent(l, LAB), (L,), order=3, modes=("rev",))


def test_float32_derivatives():
    check_grads(lambda l, y: prob_xent(l, y), (L.astype(np.float32), Y.astype(np.float32)),
                order=1, atol=5e-2, rtol=5e-2)


def test_grad_is_softmax_minus_onehot_times_the_cotangent():
    ct = normal((3,), 7)
    _, f_vjp = pb.vjp(lambda l: int_xent(l, LAB), L)
    (g,) = f_vjp(ct)
    p = np.exp(log_softmax_np(L, -1))
    onehot = np.eye(5)[np.where(LAB < 0, LAB + 5, LAB)]
    np.testing.assert_allclose(np.asarray(g), ct[:, None] * (p - onehot), rtol=1e-12)


def test_derivatives_under_jit():
    f = lambda l, y: jnp.sum(prob_xent(l, y, where=W) * jnp.arange(3.0))
    g = pb.grad(f, argnums=(0, 1))
    for a, b in zip(g(L, Y), pb.jit(g)(L, Y)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


# ---- the primitive's modes against its reference, eager and under jit ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("integer", [True, False])
@pytest.mark.parametrize("where", [False, True])
def test_every_mode_matches_the_reference(dtype, mode, integer, where):
    if integer and mode in ("label_grad", "probs"):
        pytest.skip("no labels in this mode")
    rng = np.random.default_rng(8)
    logits = rng.standard_normal((4, 6)).astype(dtype)
    ops = [logits]
    if mode in ("loss", "tangent", "grad"):
        ops.append(np.array([1, -1, 7, 5]) if integer else rng.uniform(size=(4, 6)).astype(dtype))
    if where:
        w = rng.uniform(size=(4, 6)) < 0.6
        w[2] = False
        ops.append(w)
    if mode == "tangent":
        ops.append(rng.standard_normal((4, 6)).astype(dtype))
    elif mode in ("grad", "label_grad"):
        ops.append(rng.standard_normal(4).astype(dtype))
    params = dict(mode=mode, integer=integer and mode not in ("label_grad", "probs"),
                  has_where=where)
    got = xent_p.bind(*ops, **params)
    want = xent_reference(*ops, **params)
    assert got.dtype == want.dtype and got.shape == want.shape
    g64, w64 = np.asarray(got).astype(np.float64), want.astype(np.float64)
    np.testing.assert_allclose(g64, w64, rtol=TOL[np.dtype(dtype)] * 8,
                               atol=TOL[np.dtype(dtype)] * 8)
    np.testing.assert_array_equal(np.isnan(g64), np.isnan(w64))
    j = pb.jit(lambda *a: xent_p.bind(*a, **params))(*ops)
    np.testing.assert_array_equal(np.asarray(j).astype(np.float64), g64)


# ---- vmap ----

def test_vmap_against_a_loop():
    check_vmap(lambda l, y: prob_xent(l, y), (L, Y), atol=1e-12, rtol=1e-12)
    check_vmap(lambda l: int_xent(l, LAB, where=W), (L,), atol=1e-12, rtol=1e-12)
    check_vmap(lambda l, lab: int_xent(l, lab), (L, LAB), atol=1e-12, rtol=1e-12)
    g = pb.grad(lambda l, y: jnp.sum(jnp.sin(prob_xent(l, y, where=W))), argnums=(0, 1))
    check_vmap(g, (L, Y), atol=1e-10, rtol=1e-10)
    g = pb.grad(lambda l: jnp.sum(jnp.sin(int_xent(l, LAB))))
    check_vmap(g, (L,), atol=1e-10, rtol=1e-10)


# ---- errors ----

def test_errors_name_the_argument():
    with pytest.raises(TypeError, match=r"softmax_cross_entropy_with_integer_labels: expected "
                                        r"`labels` to have an integer dtype, got float"):
        int_xent(L, np.zeros(3))
    with pytest.raises(TypeError, match=r"softmax_cross_entropy_with_integer_labels: expected "
                                        r"`logits` to have a floating dtype, got int32"):
        int_xent(np.zeros((3, 5), np.int32), LAB)
    with pytest.raises(ValueError, match=r"argument 'labels' must have the logits' shape without "
                                         r"the class axis, \(3,\), got \(4,\)"):
        int_xent(L, np.zeros(4, np.int32))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy: argument 'labels' of shape "
                                         r"\(3, 4\) does not broadcast"):
        prob_xent(L, np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"argument 'axis' 2 is out of bounds"):
        int_xent(L, LAB, axis=2)
    with pytest.raises(ValueError, match=r"keyword argument 'axis' must be of type 'int' or "
                                         r"'tuple\[int, \.\.\.\]'"):
        int_xent(L, LAB, axis=[1])
    with pytest.raises(ValueError, match=r"keyword argument 'axis'"):
        int_xent(L, LAB, axis=None)
    with pytest.raises(TypeError, match=r"argument 'where' must be a boolean array"):
        int_xent(L, LAB, where=np.ones((3, 5)))
    with pytest.raises(ValueError, match=r"argument 'where' of shape \(3, 4\) does not broadcast"):
        prob_xent(L, Y, where=np.ones((3, 4), bool))
    with pytest.raises(TypeError, match=r"softmax_cross_entropy: expected `logits` to have a "
                                        r"floating dtype"):
        prob_xent(np.ones((2, 3), np.int32), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy: argument 'logits' must have a "
                                         r"class axis"):
        xent_p.bind(np.float32(1), np.int32(0), mode="loss", integer=True, has_where=False)
