"""pullback.nn's norms (layer_norm, rms_norm, group_norm, batch_norm, batch_stats) and their
primitives (normalize, normalize_tangent, normalize_backward): values against hand-written
NumPy formulas over hypothesis shapes, every dtype and layout, derivatives to second order in
both modes, vmap against a loop, jit against eager, and the errors."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
import pullback.numpy as jnp
from pullback import nn
from pullback.primitives import norms as N
from pullback.test_util import check_grads, check_vmap, layout
from pullback.tracer import dtypes

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BF16 = dtypes.bfloat16
DTYPES = [np.float32, np.float64, np.float16, BF16]
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12, np.dtype(np.float16): 4e-3,
       np.dtype(BF16): 3e-2}


def normal(shape, seed=0, dtype=np.float64, loc=0.0):
    return (np.random.default_rng(seed).standard_normal(shape) + loc).astype(dtype)


# ---- hand-written formulas (float64) ----

def f64(a):
    return None if a is None else np.asarray(a).astype(np.float64)


def ref_layer_norm(x, s=None, b=None, axis=-1, eps=1e-5, rms=False):
    x = f64(x)
    axes = tuple(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))
    shape = tuple(x.shape[a] if a in axes else 1 for a in range(x.ndim))
    if rms:
        y = x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)
    else:
        m = np.mean(x, axis=axes, keepdims=True)
        y = (x - m) / np.sqrt(np.mean((x - m) ** 2, axis=axes, keepdims=True) + eps)
    if s is not None:
        y = y * f64(s).reshape(shape)
    if b is not None:
        y = y + f64(b).reshape(shape)
    return y


def ref_group_norm(x, g, s=None, b=None, c=-1, eps=1e-5):
    x = f64(x)
    c %= x.ndim
    ch = x.shape[c]
    xr = x.reshape(x.shape[:c] + (g, ch // g) + x.shape[c + 1:])
    axes = tuple(d for d in range(xr.ndim) if d not in (0, c))
    m = xr.mean(axis=axes, keepdims=True)
    y = ((xr - m) / np.sqrt(((xr - m) ** 2).mean(axis=axes, keepdims=True) + eps)).reshape(x.shape)
    shape = tuple(ch if d == c else 1 for d in range(x.ndim))
    if s is not None:
        y = y * f64(s).reshape(shape)
    if b is not None:
        y = y + f64(b).reshape(shape)
    return y


def ref_batch_norm(x, s=None, b=None, mean=None, var=None, c=-1, eps=1e-5):
    x = f64(x)
    c %= x.ndim
    axes = tuple(d for d in range(x.ndim) if d != c)
    shape = tuple(x.shape[c] if d == c else 1 for d in range(x.ndim))
    m = x.mean(axis=axes, keepdims=True) if mean is None else f64(mean).reshape(shape)
    v = ((x - x.mean(axis=axes, keepdims=True)) ** 2).mean(axis=axes, keepdims=True) \
        if var is None else f64(var).reshape(shape)
    y = (x - m) / np.sqrt(v + eps)
    if s is not None:
        y = y * f64(s).reshape(shape)
    if b is not None:
        y = y + f64(b).reshape(shape)
    return y


def close(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    tol = TOL[np.dtype(dtype)]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)


# ---- values ----

@st.composite
def rows_case(draw):
    nd = draw(st.integers(1, 4))
    shape = tuple(draw(st.sampled_from([0, 1, 1, 2, 3, 5, 7, 16])) for _ in range(nd))
    k = draw(st.integers(1, nd))
    axis = tuple(sorted(draw(st.permutations(range(nd)))[:k]))
    if len(axis) == 1 and draw(st.booleans()):
        axis = axis[0] - nd  # negative int form
    return shape, axis, draw(st.sampled_from(DTYPES)), draw(st.booleans()), draw(st.booleans())


@given(rows_case(), st.booleans())
def test_layer_and_rms_norm_match_the_formulas(case, rms):
    shape, axis, dtype, with_scale, with_bias = case
    axes = (axis,) if isinstance(axis, int) else axis
    pshape = tuple(shape[a] for a in axes)
    x = normal(shape, 1, dtype, loc=3.0)
    s = normal(pshape, 2, dtype) if with_scale else None
    b = normal(pshape, 3, dtype) if with_bias else None
    if rms:
        got = nn.rms_norm(x, s, axis=axis)
        want = ref_layer_norm(x, s, None, axis, 1e-6, rms=True)
    else:
        got = nn.layer_norm(x, s, b, axis=axis)
        want = ref_layer_norm(x, s, b, axis, 1e-5)
    close(got, want, dtype)


@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 5000, 70000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_rows_one_pass_statistics(n, dtype):
    # rows longer than a block (2048) combine block statistics; a large mean must not cost
    # precision (a naive sum of squares would lose every digit at mean 1e4, std 1)
    x = normal((3, n), 4, dtype, loc=1e4)
    s, b = normal(n, 5, dtype), normal(n, 6, dtype)
    # the inputs' own rounding at 1e4 bounds what any method gets: 1e4 ulps of the mean
    tol = max(TOL[np.dtype(dtype)], 1e5 * np.finfo(dtype).eps) * 4
    y = np.asarray(nn.layer_norm(x, s, b)).astype(np.float64)
    np.testing.assert_allclose(y, ref_layer_norm(x, s, b), rtol=tol, atol=tol)
    y = np.asarray(nn.rms_norm(x, s)).astype(np.float64)
    np.testing.assert_allclose(y, ref_layer_norm(x, s, None, -1, 1e-6, rms=True), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_outlying_first_element_keeps_the_variance_exact(dtype):
    # the one-pass sums are taken about each block's first element: an outlier there makes
    # them cancel, and the kernel must fall back to a pass about the mean
    x = normal((4, 1000), 22, dtype)
    x[:, 0] = 1e4
    close(nn.layer_norm(x), ref_layer_norm(x), dtype)
    close(pb.grad(lambda x: jnp.sum(jnp.sin(nn.layer_norm(x))))(x),
          pb.grad(lambda x: jnp.sum(jnp.sin(nn.layer_norm(x))))(x.astype(np.float64)), dtype)


@pytest.mark.parametrize("kind", ["strided", "broadcast", "flipped", "transposed"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_inputs(kind, dtype):
    x = layout(normal((6, 10), 7, dtype), kind)
    s = layout(normal((6, 10), 8, dtype), kind)[0]
    b = normal(10, 9, dtype)[::-1]
    close(nn.layer_norm(x, s, b), ref_layer_norm(x, s, b), dtype)
    close(nn.rms_norm(x, s), ref_layer_norm(x, s, None, -1, 1e-6, rms=True), dtype)
    close(nn.layer_norm(x, axis=(0, 1)), ref_layer_norm(x, None, None, (0, 1)), dtype)
    g = nn.group_norm(x, 2, s, b)
    close(g, ref_group_norm(x, 2, s, b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_2d_nchw(dtype):
    # 42 positions per image: channels-first rows go through tiles of 16 (and a partial one)
    x = normal((2, 5, 7, 6), 10, dtype)
    s, b = normal(5, 11, dtype), normal(5, 12, dtype)
    close(nn.layer_norm(x, s, b, axis=1), ref_layer_norm(x, s, b, 1), dtype)
    # the same as a channels-last layer norm of the transposed input
    y2 = np.asarray(nn.layer_norm(np.moveaxis(x, 1, -1), s, b))
    np.testing.assert_allclose(np.moveaxis(y2, -1, 1).astype(np.float64),
                               np.asarray(nn.layer_norm(x, s, b, axis=1)).astype(np.float64),
                               rtol=TOL[np.dtype(dtype)], atol=TOL[np.dtype(dtype)])


@given(st.sampled_from([(2, 6), (3, 6, 4), (2, 6, 3, 3), (1, 6, 0), (0, 6)]),
       st.sampled_from([1, 2, 3, 6]), st.sampled_from(DTYPES), st.booleans())
def test_group_norm_matches_the_formula(shape, groups, dtype, channels_first):
    c = 1 if channels_first else -1
    if not channels_first:
        shape = (shape[0],) + shape[2:] + (shape[1],)
    x = normal(shape, 13, dtype)
    s, b = normal(6, 14, dtype), normal(6, 15, dtype)
    close(nn.group_norm(x, groups, s, b, channel_axis=c), ref_group_norm(x, groups, s, b, c),
          dtype)
    close(nn.group_norm(x, groups, channel_axis=c), ref_group_norm(x, groups, c=c), dtype)


@given(st.sampled_from([(4, 3), (2, 3, 5), (3, 3, 2, 2), (0, 3), (7, 3, 1)]),
       st.sampled_from(DTYPES), st.sampled_from([1, -1]))
def test_batch_norm_both_forms_and_batch_stats(shape, dtype, c):
    if c == -1:
        shape = shape[:1] + shape[2:] + shape[1:2]
    x = normal(shape, 16, dtype, loc=2.0)
    s, b = normal(3, 17, dtype), normal(3, 18, dtype)
    close(nn.batch_norm(x, s, b, channel_axis=c), ref_batch_norm(x, s, b, c=c), dtype)
    m, v = np.abs(normal(3, 19, dtype)), np.abs(normal(3, 20, dtype))
    close(nn.batch_norm(x, s, b, mean=m, variance=v, channel_axis=c),
          ref_batch_norm(x, s, b, m, v, c), dtype)
    if 0 not in shape:
        mean, var = nn.batch_stats(x, channel_axis=c)
        axes = tuple(d for d in range(x.ndim) if d != c % x.ndim)
        close(mean, f64(x).mean(axis=axes), dtype)
        close(var, f64(x).var(axis=axes), dtype)


def test_layer_norm_2d_gradients_equal_the_channels_last_ones():
    x, s, b = normal((3, 4, 9, 5), 23), normal(4, 24), normal(4, 25)
    w = normal(x.shape, 26)
    first = pb.grad(lambda x, s, b: jnp.sum(jnp.sin(nn.layer_norm(x, s, b, axis=1)) * w),
                    argnums=(0, 1, 2))(x, s, b)
    last = pb.grad(lambda x, s, b: jnp.sum(jnp.sin(jnp.moveaxis(nn.layer_norm(
        jnp.moveaxis(x, 1, -1), s, b), -1, 1)) * w), argnums=(0, 1, 2))(x, s, b)
    for a, c in zip(first, last):
        np.testing.assert_allclose(np.asarray(a), np.asarray(c), rtol=1e-12, atol=1e-12)


def test_16bit_statistics_are_float32():
    # 1000 values near 1 with tiny spread: float16 accumulation would lose the variance
    x = (1.0 + normal((2, 1000), 21) * 1e-2).astype(np.float16)
    close(nn.layer_norm(x), ref_layer_norm(x), np.float16)
    assert nn.layer_norm(x.astype(BF16)).dtype == BF16


def test_promotion_and_integer_inputs():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    y = nn.layer_norm(x)
    assert y.dtype == jnp.sin(x).dtype  # JAX's promotion of integers to inexact
    np.testing.assert_allclose(np.asarray(y), ref_layer_norm(x), rtol=1e-6, atol=1e-6)
    y = nn.layer_norm(x.astype(np.float32), np.ones(4, np.float64))
    assert y.dtype == np.float64


# ---- the primitives against their references, every axis arrangement ----

@st.composite
def prim_case(draw):
    nd = draw(st.integers(1, 4))
    shape = tuple(draw(st.sampled_from([1, 2, 3, 5])) for _ in range(nd))
    axes = tuple(sorted(draw(st.permutations(range(nd)))[:draw(st.integers(1, nd))]))
    param_axes = tuple(d for d in range(nd) if draw(st.booleans()))
    return shape, axes, param_axes, draw(st.booleans()), draw(st.booleans()), \
        draw(st.booleans()), draw(st.sampled_from(DTYPES))


@given(prim_case())
def test_primitives_match_their_references(case):
    shape, axes, param_axes, rms, hs, hb, dtype = case
    P = dict(axes=axes, param_axes=param_axes, rms=rms, epsilon=1e-5, has_scale=hs,
             has_bias=hb)
    pshape = tuple(shape[a] for a in param_axes)
    x, dx, g = normal(shape, 1, dtype), normal(shape, 2, dtype), normal(shape, 3, dtype)
    ps = [normal(pshape, 4 + i, dtype) for i in range(hs + hb)]
    dps = [normal(pshape, 8 + i, dtype) for i in range(hs + hb)]
    cases = [(N.normalize_p, [x] + ps), (N.normalize_tangent_p, [dx] + dps + [x] + ps[:hs]),
             (N.normalize_backward_p, [g, x] + ps[:hs])]
    tol = TOL[np.dtype(dtype)] * (10 if dtype in (np.float16, BF16) else 1)
    for prim, args in cases:
        got = prim.bind(*[jnp.asarray(a) for a in args], **P)
        want = prim.reference(*args, **P)
        got, want = (got, want) if prim.multiple_results else ([got], [want])
        for a, b in zip(got, want):
            # parameter gradients sum over many rows: scale the tolerance by their size
            np.testing.assert_allclose(np.asarray(a).astype(np.float64),
                                       np.asarray(b).astype(np.float64),
                                       rtol=tol, atol=tol * max(1, x.size // max(a.size, 1)))


# ---- derivatives ----

X = normal((3, 6), 30)
S, B = normal(6, 31), normal(6, 32)
X4 = normal((2, 4, 2, 3), 33)
S4, B4 = normal(4, 34), normal(4, 35)

GRAD_CASES = [
    ("layer_norm", lambda x, s, b: nn.layer_norm(x, s, b), (X, S, B)),
    ("layer_norm-noparams", lambda x: nn.layer_norm(x), (X,)),
    ("layer_norm-tuple", lambda x, s, b: nn.layer_norm(x, s, b, axis=(1, 3)),
     (X4, normal((4, 3), 36), normal((4, 3), 37))),
    ("layer_norm-2d", lambda x, s, b: nn.layer_norm(x, s, b, axis=1), (X4, S4, B4)),
    ("rms_norm", lambda x, s: nn.rms_norm(x, s), (X, S)),
    ("rms_norm-axis0", lambda x, s: nn.rms_norm(x, s, axis=0), (X, normal(3, 38))),
    ("group_norm-last", lambda x, s, b: nn.group_norm(x, 2, s, b), (X, S, B)),
    ("group_norm-first", lambda x, s, b: nn.group_norm(x, 2, s, b, channel_axis=1),
     (X4, S4, B4)),
    ("batch_norm-train", lambda x, s, b: nn.batch_norm(x, s, b, channel_axis=1), (X4, S4, B4)),
    ("batch_norm-given", lambda x, s, b, m, v: nn.batch_norm(x, s, b, mean=m, variance=v),
     (X, S, B, normal(6, 39), np.abs(normal(6, 40)) + 0.5)),
]


@pytest.mark.parametrize("name,f,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_second_order_derivatives_match_finite_differences(name, f, args):
    # a nonlinear readout: sum(y) alone has zero gradient in x for a normalisation
    w = normal(np.shape(f(*args)), 41)
    check_grads(lambda *a: jnp.sum(jnp.sin(f(*a)) * w), args, order=2, modes=("fwd", "rev"))
    check_grads(f, args, order=1, modes=("fwd", "rev"))


def test_third_order_through_the_tangent_and_backward_primitives():
    f = lambda x, s, b: jnp.sum(jnp.tanh(nn.layer_norm(x, s, b)))  # noqa: E731
    check_grads(f, (X, S, B), order=3, modes=("rev",))
    g = lambda x, s: jnp.sum(jnp.tanh(nn.rms_norm(x, s)))  # noqa: E731
    check_grads(g, (X, S), order=3, modes=("fwd",))


def test_gradients_against_the_manual_formula():
    def manual(x, s, b):
        m = jnp.mean(x, -1, keepdims=True)
        v = jnp.mean((x - m) ** 2, -1, keepdims=True)
        return (x - m) / jnp.sqrt(v + 1e-5) * s + b
    loss = lambda f: lambda x, s, b: jnp.sum(jnp.sin(f(x, s, b)))  # noqa: E731
    got = pb.grad(loss(nn.layer_norm), argnums=(0, 1, 2))(X, S, B)
    want = pb.grad(loss(manual), argnums=(0, 1, 2))(X, S, B)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
    hg = pb.hessian(lambda x: loss(nn.layer_norm)(x, S, B))(X)
    hw = pb.hessian(lambda x: loss(manual)(x, S, B))(X)
    np.testing.assert_allclose(np.asarray(hg), np.asarray(hw), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
def test_gradients_in_low_precision(dtype):
    x, s, b = (a.astype(dtype) for a in (X, S, B))
    w = normal(X.shape, 42)
    gx, gs, gb = pb.grad(lambda x, s, b: jnp.sum(nn.layer_norm(x, s, b) * w.astype(dtype)),
                         argnums=(0, 1, 2))(x, s, b)
    want = pb.grad(lambda x, s, b: jnp.sum(nn.layer_norm(x, s, b) * w), argnums=(0, 1, 2))(
        *(a.astype(dtype).astype(np.float64) for a in (X, S, B)))
    for got, ref in zip((gx, gs, gb), want):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(np.asarray(got).astype(np.float64), np.asarray(ref),
                                   rtol=TOL[np.dtype(dtype)] * 4, atol=TOL[np.dtype(dtype)] * 4)


# ---- vmap, jit ----

VMAP_CASES = [
    ("layer_norm", lambda x, s, b: nn.layer_norm(x, s, b), (X, S, B)),
    ("rms_norm-2d", lambda x, s: nn.rms_norm(x, s, axis=1), (X4, S4)),
    ("group_norm", lambda x, s, b: nn.group_norm(x, 2, s, b, channel_axis=1), (X4, S4, B4)),
    ("batch_norm", lambda x, s, b: nn.batch_norm(x, s, b), (X, S, B)),
    ("layer_norm-grad", pb.grad(lambda x, s, b: jnp.sum(jnp.sin(nn.layer_norm(x, s, b))),
                                argnums=(0, 1, 2)), (X, S, B)),
    ("rms_norm-jvp", lambda x, s, t: pb.jvp(lambda x, s: nn.rms_norm(x, s), (x, s),
                                            (t, s))[1], (X, S, normal(X.shape, 43))),
    ("batch_norm-grad", pb.grad(lambda x, s: jnp.sum(jnp.sin(nn.batch_norm(x, s))),
                                argnums=(0, 1)), (X, S)),
]


@pytest.mark.parametrize("name,f,args", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_a_loop(name, f, args):
    check_vmap(f, args, atol=1e-10, rtol=1e-10)


def test_vmap_of_second_order():
    h = lambda x: pb.grad(lambda x: jnp.sum(jnp.sin(nn.layer_norm(x, S, B))))(x)  # noqa: E731
    hv = lambda x, t: pb.jvp(h, (x,), (t,))[1]  # noqa: E731
    check_vmap(hv, (X, normal(X.shape, 44)), atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jit_equals_eager(dtype):
    x, s, b = (a.astype(dtype) for a in (X4, S4, B4))
    fns = [lambda x, s, b: nn.layer_norm(x, s, b, axis=1),
           lambda x, s, b: nn.group_norm(x, 2, s, b, channel_axis=1),
           lambda x, s, b: nn.batch_norm(x, s, b, channel_axis=1),
           lambda x, s, b: nn.rms_norm(x, s, axis=1) + b[None, :, None, None],
           pb.grad(lambda x, s, b: jnp.sum(nn.layer_norm(x, s, b, axis=1) ** 2),
                   argnums=(0, 1, 2))]
    for f in fns:
        eager, jitted = f(x, s, b), pb.jit(f)(x, s, b)
        for e, j in zip(pb.tree_util.tree_leaves(eager), pb.tree_util.tree_leaves(jitted)):
            np.testing.assert_array_equal(np.asarray(e), np.asarray(j))


def test_results_do_not_depend_on_the_thread_count():
    # the backward's partial sums are chunked by shape, not by threads: jit (which may run the
    # kernel single-threaded beside other work) and eager agree bit for bit on a large case
    x, s, b = normal((512, 256), 45, np.float32), normal(256, 46, np.float32), normal(256, 47,
                                                                                      np.float32)
    f = pb.grad(lambda x, s, b: jnp.sum(nn.layer_norm(x, s, b) * x), argnums=(1, 2))
    e, j = f(x, s, b), pb.jit(f)(x, s, b)
    for a, c in zip(e, j):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(c))


# ---- errors ----

@pytest.mark.parametrize("call,exc,words", [
    (lambda: nn.layer_norm(X, np.ones(5)), ValueError, ["layer_norm", "'scale'", "(6,)"]),
    (lambda: nn.layer_norm(X, S, np.ones((6, 1))), ValueError, ["layer_norm", "'bias'"]),
    (lambda: nn.layer_norm(X, axis=2), ValueError, ["layer_norm", "'axis'", "range"]),
    (lambda: nn.layer_norm(X, axis=(1, -1)), ValueError, ["layer_norm", "'axis'", "repeats"]),
    (lambda: nn.layer_norm(X, axis=1.5), TypeError, ["layer_norm", "'axis'"]),
    (lambda: nn.layer_norm(X, epsilon=-1.0), ValueError, ["layer_norm", "'epsilon'"]),
    (lambda: nn.layer_norm(X.astype(np.complex64)), TypeError, ["layer_norm", "'x'"]),
    (lambda: nn.rms_norm(X, np.ones(3)), ValueError, ["rms_norm", "'scale'"]),
    (lambda: nn.group_norm(X, 4), ValueError, ["group_norm", "'num_groups'", "6 channels"]),
    (lambda: nn.group_norm(X, 2, channel_axis=0), ValueError, ["group_norm", "'channel_axis'"]),
    (lambda: nn.group_norm(S, 2), ValueError, ["group_norm", "'x'"]),
    (lambda: nn.group_norm(X, 2, np.ones(3)), ValueError, ["group_norm", "'scale'", "(6,)"]),
    (lambda: nn.batch_norm(X, mean=S), ValueError, ["batch_norm", "'variance'"]),
    (lambda: nn.batch_norm(X, mean=S, variance=np.ones(2)), ValueError,
     ["batch_norm", "'variance'", "(6,)"]),
    (lambda: nn.batch_norm(X, np.ones(3)), ValueError, ["batch_norm", "'scale'"]),
    (lambda: nn.batch_norm(X, channel_axis=5), ValueError, ["batch_norm", "'channel_axis'"]),
    (lambda: nn.batch_stats(X, channel_axis=(0, 1)), TypeError, ["batch_stats", "'channel_axis'"]),
])
def test_errors_name_the_op_and_argument(call, exc, words):
    with pytest.raises(exc) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_errors_under_jit_and_vmap():
    with pytest.raises(ValueError, match="layer_norm: argument 'scale'"):
        pb.jit(lambda x, s: nn.layer_norm(x, s))(X, np.ones(5))
    # vmapped: the example's shapes are checked, not the batched ones
    with pytest.raises(ValueError, match="'scale'"):
        pb.vmap(lambda x, s: N.normalize_p.bind(x, s, axes=(0,), param_axes=(0,), rms=False,
                                                epsilon=1e-5, has_scale=True, has_bias=False)
                )(X, np.ones((3, 5)))


# ---- optional oracle: JAX's own formulas ----

def test_against_jax_formulas():
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # restored: later tests expect JAX's default
    try:
        _against_jax_formulas(jax)
    finally:
        jax.config.update("jax_enable_x64", previous)


def _against_jax_formulas(jax):
    jjnp = jax.numpy

    def jln(x, s, b):
        m = jjnp.mean(x, -1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(jjnp.var(x, -1, keepdims=True) + 1e-5) * s + b
    np.testing.assert_allclose(np.asarray(nn.layer_norm(X, S, B)), np.asarray(jln(X, S, B)),
                               rtol=1e-12, atol=1e-12)
    gj = jax.grad(lambda x: jjnp.sum(jjnp.sin(jln(x, S, B))))(X)
    gp = pb.grad(lambda x: jnp.sum(jnp.sin(nn.layer_norm(x, S, B))))(X)
    np.testing.assert_allclose(np.asarray(gp), np.asarray(gj), rtol=1e-10, atol=1e-12)
