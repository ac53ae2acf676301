"""pullback.nn.dot_product_attention (primitives/attention.py, csrc/attention.c): the fused
kernels against a float64 NumPy reference over drawn shapes and every mask kind, every dtype;
derivatives (the backward and tangent kernels, second order both modes, the cotangent too);
vmap against a loop; jit against eager; JAX's corners (hard-coded, and JAX as an optional
oracle); the errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pullback as pb
from pullback.primitives import attention as A
from pullback.test_util import check_grads, check_vmap
from pullback.tracer import dtypes

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

attention = pb.nn.dot_product_attention
BF16 = dtypes.bfloat16
TOL = {np.dtype(np.float64): 1e-11, np.dtype(np.float32): 2e-5, np.dtype(BF16): 3e-2,
       np.dtype(np.float16): 4e-3}


def normal(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


class Case:
    """One drawn call: operands and keyword arguments, and its float64 NumPy reference."""

    def __init__(self, B, T, S, N, K, H, dtype=np.float64, bias=None, mask=None, causal=False,
                 window=None, cap=None, qlen=None, kvlen=None, scale=None, seed=0):
        self.q = normal((B, T, N, H), seed, dtype)
        self.k = normal((B, S, K, H), seed + 1, dtype)
        self.v = normal((B, S, K, H), seed + 2, dtype)
        self.bias, self.mask = bias, mask
        self.kw = dict(is_causal=causal, local_window_size=window, logit_softcap=cap,
                       query_seq_lengths=qlen, key_value_seq_lengths=kvlen, scale=scale)
        w = (window, window) if isinstance(window, int) else window
        self.params = dict(scale=1 / np.sqrt(H) if scale is None else scale, is_causal=causal,
                           local_window_size=w, logit_softcap=cap, has_bias=bias is not None,
                           has_mask=mask is not None, has_qlen=qlen is not None,
                           has_kvlen=kvlen is not None)

    def __repr__(self):
        shape = lambda x: None if x is None else (x.dtype.name, x.shape)  # noqa: E731
        return (f"Case(q={shape(self.q)}, k={shape(self.k)}, bias={shape(self.bias)}, "
                f"mask={shape(self.mask)}, {self.kw})")

    def ops(self, *qkvb):
        q, k, v, b = qkvb if qkvb else (self.q, self.k, self.v, self.bias)
        return [x for x in (q, k, v, b, self.mask, self.kw["query_seq_lengths"],
                            self.kw["key_value_seq_lengths"]) if x is not None]

    def f(self, q, k, v, b=None):
        return attention(q, k, v, b if b is not None else self.bias, self.mask, **self.kw)

    def reference(self):
        """(out, lse (B, N, T)) in float64 from the operands as float64."""
        f64 = [x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == BF16 else x
               for x in self.ops()]
        return A._fwd_reference(*f64, **self.params)

    def reference_grads(self, ct):
        f64 = [x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == BF16 else x
               for x in self.ops()]
        out, lse = A._fwd_reference(*f64, **self.params)
        g = A._bwd_reference(*f64, out, lse, ct.astype(np.float64), **self.params)
        if self.bias is not None:
            full = g[3]
            axes = tuple(d for d in range(4) if self.bias.shape[d] == 1 and full.shape[d] != 1)
            g[3] = full.sum(axes, keepdims=True)
            # a sum of terms that cancel (each row's sum to 0): its rounding scales with them
            self.bias_grad_scale = np.abs(full).sum(axes, keepdims=True).max(initial=0)
        return g


def close(actual, expected, dtype, scale=1.0):
    actual = np.asarray(actual).astype(np.float64)
    expected = np.asarray(expected, np.float64)
    tol = TOL[np.dtype(dtype)] * scale
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


# ---- drawn shapes and masks ----

@st.composite
def cases(draw, dtypes_=(np.float64, np.float32, BF16, np.float16), small=False):
    dtype = draw(st.sampled_from(dtypes_))
    B = draw(st.sampled_from([0, 1, 2] if not small else [1, 2]))
    K = draw(st.integers(1, 2))
    N = K * draw(st.integers(1, 3))
    big = not small and draw(st.booleans())
    T = draw(st.integers(1, 140 if big else 9))
    S = draw(st.integers(1, 200 if big else 9))
    H = draw(st.sampled_from([1, 2, 3, 5, 17, 33] + ([] if big or small else [64, 100, 256])))
    seed = draw(st.integers(0, 100))
    rng = np.random.default_rng(seed)

    def shape4():
        return tuple(draw(st.sampled_from([1, n])) for n in (B, N, T, S))
    cd = np.float64 if dtype == np.float64 else np.float32
    bias = rng.standard_normal(shape4()).astype(cd) if draw(st.booleans()) else None
    mask = None
    if draw(st.booleans()):
        mask = rng.random(shape4()) < draw(st.sampled_from([0.3, 0.8, 1.0]))
    causal = draw(st.booleans())
    window = draw(st.one_of(st.none(), st.integers(0, 5),
                            st.tuples(st.integers(-2, 6), st.integers(-2, 6))))
    cap = draw(st.one_of(st.none(), st.sampled_from([0.5, 2.0, 30.0])))
    lens = lambda n: rng.integers(-1, n + 2, B).astype(np.int32)  # noqa: E731
    qlen = lens(T) if draw(st.booleans()) else None
    kvlen = lens(S) if draw(st.booleans()) else None
    return Case(B, T, S, N, K, H, dtype, bias, mask, causal, window, cap, qlen, kvlen, seed=seed)


@settings(max_examples=60)
@given(cases())
def test_forward_matches_the_reference(c):
    out, lse = attention(c.q, c.k, c.v, c.bias, c.mask, return_residual=True, **c.kw)
    ref, ref_lse = c.reference()
    assert out.dtype == c.q.dtype and out.shape == c.q.shape
    assert lse.dtype == c.q.dtype and lse.shape == c.q.shape[:3]
    close(out, ref, c.q.dtype)
    # the residual is (B, T, N), rounded to the operands' dtype (-0.7 * f32 max for fully
    # masked rows overflows float16 to -inf, as in JAX)
    ref_lse = np.transpose(ref_lse, (0, 2, 1)).astype(c.q.dtype).astype(np.float64)
    finite = np.isfinite(ref_lse)
    assert (np.asarray(lse, np.float64)[~finite] == ref_lse[~finite]).all()
    close(np.where(finite, lse, 0), np.where(finite, ref_lse, 0), c.q.dtype, 4)


@settings(max_examples=40)
@given(cases(dtypes_=(np.float64, np.float32, BF16, np.float16)))
def test_gradients_match_the_reference(c):
    ct = normal(c.q.shape, 7, c.q.dtype)
    args = (c.q, c.k, c.v) + ((c.bias,) if c.bias is not None else ())
    grads = pb.grad(lambda *a: (c.f(*a) * ct).sum(), argnums=tuple(range(len(args))))(*args)
    for i, (g, r, x) in enumerate(zip(grads, c.reference_grads(ct), args)):
        assert g.dtype == x.dtype and g.shape == x.shape
        scale = 4 if x.dtype == np.float32 else 1
        if i == 3:  # float32 (or 64), but as accurate as the operands (delta = dO . out)
            scale *= max(1.0, c.bias_grad_scale)
        close(g, r, c.q.dtype, scale)


@settings(max_examples=30)
@given(cases(dtypes_=(np.float64, np.float32)))
def test_forward_mode_matches_the_reference(c):
    """The tangent kernel against the dense formula (primitives' reference)."""
    args = (c.q, c.k, c.v) + ((c.bias,) if c.bias is not None else ())
    tans = tuple(normal(a.shape, 10 + i, a.dtype) for i, a in enumerate(args))
    _, t = pb.jvp(lambda *a: c.f(*a), args, tans)
    f64 = lambda x: x.astype(np.float64) if x.dtype.kind == "f" else x  # noqa: E731
    out, lse = c.reference()
    ref = A._jvp_reference(*[f64(x) for x in c.ops()], out, lse,
                           *[f64(x) for x in tans[:3]],
                           *([np.broadcast_to(f64(tans[3]), c.bias.shape)] if len(tans) > 3
                             else []), **c.params)
    close(t, ref, c.q.dtype, 4)


# ---- JAX's corners, hard-coded ----

def test_a_fully_masked_row_is_the_mean_of_v():
    c = Case(1, 3, 5, 2, 1, 4, mask=np.ones((1, 1, 3, 5), bool))
    c.mask[0, 0, 1] = False
    out, lse = attention(c.q, c.k, c.v, mask=c.mask, return_residual=True)
    np.testing.assert_allclose(out[0, 1], np.broadcast_to(c.v[0, :, 0].mean(0), (2, 4)),
                               rtol=1e-12)
    # JAX: logsumexp of S logits at -0.7 * float32 max
    assert np.asarray(lse)[0, 1, 0] == pytest.approx(-0.7 * np.finfo(np.float32).max + np.log(5))
    # every dV row takes dO / S from the masked row; dQ and dK none from it
    ct = np.zeros(c.q.shape)
    ct[0, 1] = 1.0
    dq, dk, dv = pb.grad(lambda q, k, v: (attention(q, k, v, mask=c.mask) * ct).sum(),
                         argnums=(0, 1, 2))(c.q, c.k, c.v)
    np.testing.assert_allclose(dv[0, :, 0], np.full((5, 4), 2 / 5), rtol=1e-12)
    assert not np.asarray(dq).any() and not np.asarray(dk).any()


def test_a_window_or_lengths_that_keep_nothing_give_the_mean_too():
    c = Case(1, 4, 6, 1, 1, 3)
    out = attention(c.q, c.k, c.v, local_window_size=(-3, 3))  # key i + 3 only
    np.testing.assert_allclose(out[0, 3, 0], c.v[0, :, 0].mean(0), rtol=1e-12)  # no key 6
    np.testing.assert_allclose(out[0, 2, 0], c.v[0, 5, 0], rtol=1e-12)
    out = attention(c.q, c.k, c.v, key_value_seq_lengths=np.array([0], np.int32))
    np.testing.assert_allclose(out[0], np.broadcast_to(c.v[0, :, 0].mean(0), (4, 1, 3)),
                               rtol=1e-12)


def test_padded_query_rows_are_zero_and_take_no_gradient():
    c = Case(2, 5, 4, 2, 2, 3)
    ql = np.array([2, 5], np.int32)
    out = attention(c.q, c.k, c.v, query_seq_lengths=ql)
    assert not np.asarray(out)[0, 2:].any() and np.asarray(out)[1].all()
    dq = pb.grad(lambda q: attention(q, c.k, c.v, query_seq_lengths=ql).sum())(c.q)
    assert not np.asarray(dq)[0, 2:].any()


def test_causal_is_aligned_top_left_when_t_differs_from_s():
    c = Case(1, 3, 6, 1, 1, 2)
    out = attention(c.q, c.k, c.v, is_causal=True)
    np.testing.assert_allclose(out[0, 0, 0], c.v[0, 0, 0], rtol=1e-12)  # query 0 sees key 0
    c2 = Case(1, 6, 3, 1, 1, 2)
    out = attention(c2.q, c2.k, c2.v, is_causal=True)
    full = attention(c2.q, c2.k, c2.v)
    np.testing.assert_allclose(out[0, 2:], full[0, 2:], rtol=1e-12)  # rows >= 2 see every key


def test_softcap_is_applied_after_the_bias_and_before_the_mask():
    c = Case(1, 3, 4, 1, 1, 2)
    bias = normal((1, 1, 3, 4), 3) * 10
    mask = np.array([True, True, False, True])[None, None, None, :]
    got = attention(c.q, c.k, c.v, bias, mask, logit_softcap=2.0, scale=0.7)
    s = np.einsum("th,sh->ts", c.q[0, :, 0], c.k[0, :, 0]) * 0.7 + bias[0, 0]
    s = np.where(mask[0, 0], 2.0 * np.tanh(s / 2.0), -0.7 * np.finfo(np.float32).max)
    p = np.exp(s - s.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(got[0, :, 0], p @ c.v[0, :, 0], rtol=1e-12)


def test_unbatched_operands_and_the_residual_shape():
    c = Case(1, 4, 5, 2, 1, 3)
    out, lse = attention(c.q[0], c.k[0], c.v[0], return_residual=True)
    assert out.shape == (4, 2, 3) and lse.shape == (4, 2)
    ref, ref_lse = c.reference()
    np.testing.assert_allclose(out, ref[0], rtol=1e-12)
    np.testing.assert_allclose(lse, ref_lse[0].T, rtol=1e-12)


def test_the_residual_has_no_gradient():
    c = Case(1, 3, 3, 1, 1, 2)
    g = pb.grad(lambda q: attention(q, c.k, c.v, return_residual=True)[1].sum())(c.q)
    assert not np.asarray(g).any()


def test_zero_sizes():
    for shape in [(0, 3, 4, 2, 2, 3), (2, 0, 4, 2, 2, 3), (2, 3, 4, 2, 2, 0)]:
        c = Case(*shape)
        out = attention(c.q, c.k, c.v)
        assert out.shape == c.q.shape
        np.testing.assert_allclose(out, c.reference()[0])
        g = pb.grad(lambda k: attention(c.q, k, c.v).sum())(c.k)
        assert g.shape == c.k.shape and not np.asarray(g).any()
    c = Case(2, 3, 0, 2, 2, 3)  # no keys: 0, as JAX's sum over an empty axis
    out, lse = attention(c.q, c.k, c.v, return_residual=True)
    assert not np.asarray(out).any() and (np.asarray(lse) == -np.inf).all()


def test_non_contiguous_and_broadcast_operands():
    c = Case(2, 5, 6, 4, 2, 3)
    q = np.asarray(normal((2, 4, 5, 3), 4)).transpose(0, 2, 1, 3)      # (B, T, N, H) strided
    k = normal((2, 3, 6, 2), 5).transpose(0, 2, 3, 1)[..., ::-1]         # flipped head dim
    v = np.broadcast_to(normal((1, 6, 2, 3), 6), (2, 6, 2, 3))           # stride-0 batch
    bias = np.broadcast_to(normal((1, 4, 1, 6), 7), (2, 4, 5, 6))
    got = attention(q, k, v, bias, is_causal=True)
    c.q, c.k, c.v, c.bias = (np.ascontiguousarray(x) for x in (q, k, v, bias))
    c.params.update(is_causal=True, has_bias=True)
    np.testing.assert_allclose(got, c.reference()[0], rtol=1e-12, atol=1e-12)
    g = pb.grad(lambda q, k, v, b: attention(q, k, v, b, is_causal=True).sum(),
                argnums=(0, 1, 2, 3))(q, k, v, bias)
    ref = c.reference_grads(np.ones(q.shape))
    for a, r in zip(g, ref):
        np.testing.assert_allclose(a, np.broadcast_to(r, np.shape(a)), rtol=1e-10, atol=1e-12)


def test_long_sequences_cross_several_tiles():
    """T and S above the tile sizes (64 queries, 128 keys): skipped and partial tiles."""
    c = Case(1, 200, 300, 2, 1, 8, np.float32, causal=True, window=(150, 10), cap=5.0,
             kvlen=np.array([290], np.int32))
    close(c.f(c.q, c.k, c.v), c.reference()[0], np.float32)
    ct = normal(c.q.shape, 3, np.float32)
    g = pb.grad(lambda q, k, v: (c.f(q, k, v) * ct).sum(), argnums=(0, 1, 2))(c.q, c.k, c.v)
    for a, r in zip(g, c.reference_grads(ct)):
        close(a, r, np.float32, 10)


# ---- derivatives to second order ----

MILD = np.random.default_rng(0).random((1, 1, 4, 5)) < 0.8
GRAD_CONFIGS = {
    "plain": dict(),
    "causal-gqa-window": dict(causal=True, window=(2, 1)),
    "softcap-bias": dict(cap=1.5, bias=normal((1, 4, 4, 5), 9)),
    "broadcast-bias-mask": dict(bias=normal((1, 1, 4, 1), 9), mask=MILD),
    "lengths-softcap": dict(cap=2.0, qlen=np.array([3], np.int32),
                            kvlen=np.array([4], np.int32), causal=True),
}


@pytest.mark.parametrize("mode", ["fwd", "rev"])
@pytest.mark.parametrize("name", list(GRAD_CONFIGS))
def test_second_order_derivatives(name, mode):
    cfg = GRAD_CONFIGS[name]
    c = Case(1, 4, 5, 4, 2, 3, **cfg)
    args = (c.q, c.k, c.v) + ((c.bias,) if c.bias is not None else ())
    check_grads(lambda *a: c.f(*a), args, order=2, modes=(mode,))


@pytest.mark.parametrize("name", ["plain", "softcap-bias", "lengths-softcap"])
def test_the_backward_kernel_differentiates_in_the_cotangent_too(name):
    c = Case(1, 4, 5, 4, 2, 3, **GRAD_CONFIGS[name])
    args = (c.q, c.k, c.v) + ((c.bias,) if c.bias is not None else ())
    ct = normal(c.q.shape, 11)

    def pullback_of(*a):
        return pb.vjp(lambda *x: c.f(*x), *a[:-1])[1](a[-1])
    check_grads(pullback_of, args + (ct,), order=1, modes=("fwd", "rev"))


def test_float32_derivatives():
    c = Case(2, 6, 7, 2, 1, 4, np.float32, causal=True, cap=3.0, bias=normal((2, 2, 6, 7), 1,
                                                                              np.float32))
    check_grads(lambda q, k, v, b: c.f(q, k, v, b), (c.q, c.k, c.v, c.bias), order=1,
                atol=5e-2, rtol=5e-2)


# ---- vmap, jit ----

@pytest.mark.parametrize("name", ["plain", "causal-gqa-window", "softcap-bias",
                                  "broadcast-bias-mask", "lengths-softcap"])
def test_vmap_matches_a_loop(name):
    c = Case(2, 4, 5, 4, 2, 3, **{k: (v if k not in ("bias", "qlen", "kvlen") else
                                      np.broadcast_to(v, (2,) + np.shape(v)[1:]).copy())
                                  for k, v in GRAD_CONFIGS[name].items()})
    args = (c.q, c.k, c.v) + ((c.bias,) if c.bias is not None else ())
    check_vmap(lambda *a: c.f(*a), args, atol=1e-12, rtol=1e-12)
    check_vmap(lambda *a: pb.grad(lambda *x: (c.f(*x) ** 2).sum(), argnums=0)(*a), args,
               atol=1e-10, rtol=1e-10)
    check_vmap(lambda *a: pb.jvp(lambda *x: c.f(*x), a, a)[1], args, atol=1e-10, rtol=1e-10)


def test_vmap_of_masks_and_lengths_with_other_axes():
    V, B, T, S, N, K, H = 3, 2, 4, 5, 2, 1, 3
    q, k, v = normal((B, T, N, H), 0), normal((B, S, K, H), 1), normal((B, S, K, H), 2)
    rng = np.random.default_rng(0)
    bias = normal((V, 1, N, 1, S), 3)        # batched at 0, broadcast over B and T
    mask = rng.random((1, N, T, V, S)) < 0.7  # batched at 3
    ql = rng.integers(0, T + 1, (B, V)).astype(np.int32)   # batched at 1
    kvl = rng.integers(0, S + 1, (V, B)).astype(np.int32)  # batched at 0

    def f(q, k, bias, mask, ql, kvl):
        return attention(q, k, v, bias, mask, query_seq_lengths=ql, key_value_seq_lengths=kvl,
                         is_causal=True, logit_softcap=4.0)
    qs = np.stack([q + i for i in range(V)], 2)  # batched at 2
    got = pb.vmap(f, in_axes=(2, None, 0, 3, 1, 0))(qs, k, bias, mask, ql, kvl)
    for i in range(V):
        want = f(qs[:, :, i], k, bias[i], mask[:, :, :, i], ql[:, i], kvl[i])
        np.testing.assert_allclose(got[i], want, rtol=1e-12, atol=1e-13)
    g = pb.vmap(pb.grad(lambda q, b, m, a, c: f(q, k, b, m, a, c).sum(), argnums=(0, 1)),
                in_axes=(2, 0, 3, 1, 0))(qs, bias, mask, ql, kvl)
    for i in range(V):
        w = pb.grad(lambda q, b: f(q, k, b, mask[:, :, :, i], ql[:, i], kvl[i]).sum(),
                    argnums=(0, 1))(qs[:, :, i], bias[i])
        np.testing.assert_allclose(g[0][i], w[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g[1][i], w[1], rtol=1e-10, atol=1e-12)


def test_vmap_of_tangents_and_cotangents_alone():
    """Only the tangent (or cotangent) batched: the primitives see broadcast primal operands,
    the log-sum-exp included (zero strides)."""
    c = Case(1, 3, 4, 2, 1, 2, causal=True, cap=2.0, bias=normal((1, 2, 3, 4), 1))
    f = lambda q, b: c.f(q, c.k, c.v, b)  # noqa: E731
    ts = normal((3,) + c.q.shape, 5)
    got = pb.vmap(lambda t: pb.jvp(f, (c.q, c.bias), (t, c.bias))[1])(ts)
    for i, t in enumerate(ts):
        np.testing.assert_allclose(got[i], pb.jvp(f, (c.q, c.bias), (t, c.bias))[1],
                                   rtol=1e-12, atol=1e-13)
    got = pb.vmap(lambda ct: pb.vjp(f, c.q, c.bias)[1](ct))(ts)
    for i, t in enumerate(ts):
        for a, b in zip(got, pb.vjp(f, c.q, c.bias)[1](t)):
            np.testing.assert_allclose(a[i], b, rtol=1e-12, atol=1e-13)


def test_hessians_agree_with_finite_differences():
    c = Case(1, 3, 4, 2, 1, 2, causal=True, cap=2.0)
    f = lambda q: (c.f(q, c.k, c.v) ** 2).sum()  # noqa: E731
    g = pb.grad(f)
    n, eps = c.q.size, 1e-6
    fd = np.stack([(np.asarray(g(c.q + eps * e.reshape(c.q.shape))) -
                    np.asarray(g(c.q - eps * e.reshape(c.q.shape)))).ravel() / (2 * eps)
                   for e in np.eye(n)])
    for h in (pb.hessian, lambda f: pb.jacfwd(pb.jacfwd(f)), lambda f: pb.jacrev(pb.jacrev(f))):
        np.testing.assert_allclose(np.asarray(h(f)(c.q)).reshape(n, n), fd, atol=1e-7)


def test_jit_equals_eager():
    c = Case(2, 70, 130, 4, 2, 16, np.float32, causal=True, window=(40, 3), cap=10.0,
             bias=normal((2, 1, 70, 130), 5, np.float32), mask=np.random.default_rng(1).random(
                 (1, 4, 70, 130)) < 0.9, qlen=np.array([60, 70], np.int32))
    f = lambda q, k, v, b: (c.f(q, k, v, b) ** 2).sum()  # noqa: E731
    args = (c.q, c.k, c.v, c.bias)
    eager = pb.value_and_grad(f, argnums=(0, 1, 2, 3))(*args)
    jitted = pb.jit(pb.value_and_grad(f, argnums=(0, 1, 2, 3)))(*args)
    np.testing.assert_allclose(eager[0], jitted[0], rtol=1e-6)  # the sum's order may differ
    for a, b in zip(eager[1], jitted[1]):  # the kernels: bit for bit
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c.f(*args), pb.jit(c.f)(*args))


# ---- errors ----

@pytest.mark.parametrize("args,kw,match", [
    (((2, 3, 4, 5), (2, 6, 2, 4), (2, 6, 2, 4)), {}, "'query'"),             # H differs
    (((2, 3, 4, 4), (2, 6, 3, 4), (2, 6, 3, 4)), {}, "multiple"),            # N % K
    (((2, 3, 4, 4), (2, 6, 2, 4), (2, 5, 2, 4)), {}, "'value'"),
    (((1, 2, 3, 4, 4), (2, 6, 2, 4), (2, 6, 2, 4)), {}, "'query'.*rank"),
    (((2, 3, 4, 4), (2, 6, 2, 4), (2, 6, 2, 4)), {"bias": np.zeros((2, 4, 3, 5))}, "'bias'"),
    (((2, 3, 4, 4), (2, 6, 2, 4), (2, 6, 2, 4)), {"mask": np.ones((3, 1, 1, 1), bool)}, "'mask'"),
    (((2, 3, 4, 4), (2, 6, 2, 4), (2, 6, 2, 4)), {"mask": np.ones((1, 1, 3, 6))}, "'mask'.*bool"),
    (((2, 3, 4, 4), (2, 6, 2, 4), (2, 6, 2, 4)),
     {"query_seq_lengths": np.array([1, 2, 3], np.int32)}, "'query_seq_lengths'"),
    (((2, 3, 4, 4), (2, 6, 2, 4), (2, 6, 2, 4)),
     {"key_value_seq_lengths": np.array([1, 2])}, "'key_value_seq_lengths'"),
    (((2, 3, 4, 4), (2, 6, 2, 4), (2, 6, 2, 4)), {"local_window_size": (1, 2, 3)},
     "'local_window_size'"),
    (((2, 3, 4, 4), (2, 6, 2, 4), (2, 6, 2, 4)), {"local_window_size": 1.5},
     "'local_window_size'"),
    (((2, 3, 4, 4), (2, 6, 2, 4), (2, 6, 2, 4)), {"logit_softcap": -1.0}, "'logit_softcap'"),
])
def test_bad_operands_raise_naming_the_argument(args, kw, match):
    q, k, v = (np.zeros(s, np.float32) for s in args)
    with pytest.raises(ValueError, match="dot_product_attention.*" + match):
        attention(q, k, v, **kw)


def test_bad_dtypes_and_implementations():
    x = np.zeros((1, 2, 2, 2), np.float32)
    with pytest.raises(ValueError, match="'query'.*dtype"):
        attention(x.astype(np.float64), x, x)
    with pytest.raises(ValueError, match="'query'.*float16, bfloat16"):
        attention(x.astype(np.int32), x.astype(np.int32), x.astype(np.int32))
    with pytest.raises(ValueError, match="cudnn"):
        attention(x, x, x, implementation="cudnn")
    with pytest.raises(ValueError, match="Unsupported implementation"):
        attention(x, x, x, implementation="flash")
    assert attention(x, x, x, implementation="xla").shape == x.shape


# ---- JAX as an optional oracle ----

@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_against_jax(dtype):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(0)
    dt = np.dtype(BF16) if dtype == "bfloat16" else np.dtype(dtype)
    B, T, S, N, K, H = 2, 6, 4, 4, 2, 3
    q, k, v = (rng.standard_normal(s).astype(dt) for s in
               ((B, T, N, H), (B, S, K, H), (B, S, K, H)))
    m = rng.random((B, 1, T, S)) < 0.5
    m[0, 0, 1] = False
    bias = rng.standard_normal((1, N, T, S)).astype(np.float32)
    lens = dict(query_seq_lengths=np.array([4, 6], np.int32),
                key_value_seq_lengths=np.array([3, 0], np.int32))
    tol = {"float32": 1e-6, "bfloat16": 1.6e-2, "float16": 2e-3}[dtype]
    for kw in [dict(is_causal=True), dict(mask=m), lens, dict(local_window_size=1),
               dict(local_window_size=(1, 0), bias=bias, mask=m, is_causal=True, **lens)]:
        want = jax.nn.dot_product_attention(q, k, v, return_residual=True, **kw)
        got = attention(q, k, v, return_residual=True, **kw)
        for w, g in zip(want, got):
            assert np.dtype(w.dtype) == g.dtype and w.shape == g.shape
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=tol, atol=tol)


def test_gradients_against_jax():
    jax = pytest.importorskip("jax")
    c = Case(2, 6, 4, 4, 2, 3, np.float32, causal=True,
             bias=normal((2, 1, 6, 4), 3, np.float32),
             kvlen=np.array([3, 4], np.int32), qlen=np.array([5, 6], np.int32))
    kw = {k: v for k, v in c.kw.items() if k != "logit_softcap"}
    want = jax.grad(lambda *a: (jax.nn.dot_product_attention(*a, **kw) ** 2).sum(),
                    argnums=(0, 1, 2, 3))(c.q, c.k, c.v, c.bias)
    got = pb.grad(lambda *a: (attention(*a, **kw) ** 2).sum(), argnums=(0, 1, 2, 3))(
        c.q, c.k, c.v, c.bias)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def test_first_derivatives_run_the_kernels_only():
    """jvp binds the tangent primitive, grad the backward one: no dense (T, S) formula."""
    c = Case(1, 4, 5, 2, 1, 3, causal=True, cap=3.0, bias=normal((1, 1, 4, 5), 1))
    for fn in (lambda q: pb.jvp(lambda q: c.f(q, c.k, c.v), (q,), (q,))[1],
               pb.grad(lambda q: c.f(q, c.k, c.v).sum())):
        text = str(pb.make_jaxpr(fn)(c.q))
        assert "dot_product_attention" in text and "dot_general" not in text
    assert "dot_product_attention_bwd" in str(pb.make_jaxpr(
        pb.grad(lambda q: c.f(q, c.k, c.v).sum()))(c.q))
