"""compiler/parallel.py's pipe: a scan and the products right after it that sum over its
iterations (a recurrent layer's weight gradients) run overlapped, chunk after chunk of
iterations, with the same result on every call and with or without the overlap."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as pnp
from pullback import lax
from pullback.backends.cpu.compiler import planner

RNG = np.random.default_rng(11)
H, B, T, D = 64, 8, 256, 32  # K per iteration 8: chunks of 64 iterations, 4 of them


def _arr(*shape, dtype=np.float32, scale=1.0):
    return (scale * RNG.standard_normal(shape)).astype(dtype)


def _rnn_loss(params, h0, xs):
    wh, wx, b = params

    def step(h, x):
        h = pnp.tanh(h @ wh + x @ wx + b)
        return h, None
    h, _ = lax.scan(step, h0, xs)
    return pnp.mean(h ** 2)


def _rnn_args(dtype=np.float32):
    return ((_arr(H, H, dtype=dtype, scale=H ** -0.5), _arr(D, H, dtype=dtype, scale=0.25),
             _arr(H, dtype=dtype, scale=0.1)),
            _arr(B, H, dtype=dtype), _arr(T, B, D, dtype=dtype))


def _without_pipe(monkeypatch, f, *args):
    with planner.disabled("pipelined-scan"):  # neither consumers nor producer
        g = pb.jit(f)
        text = g.lower(*args).compile().as_text()
        assert "pipe" not in text
        return g(*args)


def test_input_projection_and_weight_gradients_overlap_the_scans():
    args = _rnn_args()
    text = pb.jit(pb.grad(_rnn_loss)).lower(*args).compile().as_text()
    lines = text.splitlines()
    heads = [i for i, s in enumerate(lines) if ": pipe " in s]
    assert len(heads) == 2
    fwd, bwd = heads
    # forward: xs @ wx (rows (t, batch)) is made 64 iterations ahead of the scan reading it
    assert lines[fwd].endswith("pipe (the scan reads its input as the first product makes it, "
                               "64 iterations at a time):")
    assert lines[fwd + 1].startswith("       dot dot_general (input4:f32[1,2048,32], "
                                     "input1:f32[1,32,64]) -> (arena@")
    assert lines[fwd + 2].startswith("       scan[length=256] -> ")
    # backward: the weight gradients sum the scan's iterations: hs^T @ gs, xs^T @ gs and the
    # bias gradient, gs summed over (t, batch)
    assert lines[bwd].endswith("pipe (the products after it sum its iterations as it writes "
                               "them, 64 iterations at a time):")
    assert lines[bwd + 1].startswith("       scan[length=256, reverse] -> ")
    members = [s for s in lines[bwd + 1:] if s.startswith("       dot_general")]
    assert len(members) == 2
    assert any(s.startswith("       reduce reduce_sum (arena@") and "f32[256,8,64]) -> (arena@"
               in s for s in lines[bwd + 1:])
    assert members[0].startswith("       dot_general (arena@") and \
        "f32[1,64,2048] strides=(524288, 4, 256), arena@" in members[0]
    assert members[1].startswith("       dot_general (input4:f32[1,32,2048] strides=(262144, 4, "
                                 "128), arena@")
    assert all("f32[1,2048,64] strides=(256, 256, 4)" in m for m in members)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pipelined_gradients_equal_the_unpipelined_ones(monkeypatch, dtype):
    args = _rnn_args(dtype)
    f = pb.jit(pb.grad(_rnn_loss))
    assert ": pipe " in f.lower(*args).compile().as_text()
    got = [f(*args) for _ in range(3)]
    for g in got[1:]:  # the chunks sum in a fixed order: the same bits every call
        for a, b in zip(g, got[0]):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    want = _without_pipe(monkeypatch, pb.grad(_rnn_loss), *args)
    tol = 2e-4 if dtype == np.float32 else 1e-11
    for a, b in zip(got[0], want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _stacked_products(wh, h0, xs):
    """A forward scan whose stacked outputs two products sum over, with epilogues: the
    products read ys whole (A = hs^T) and as B (hs^T @ xs-shaped), and an input."""
    def step(h, x):
        h = pnp.tanh(h @ wh + x)
        return h, (h, 2.0 * h)
    h, (hs, gs) = lax.scan(step, h0, xs)
    flat_h, flat_g = hs.reshape(-1, H), gs.reshape(-1, H)
    flat_x = xs.reshape(-1, H)
    return h, flat_h.T @ flat_g + 1.0, flat_x.T @ flat_g * 0.5


def test_forward_scan_outputs_and_epilogues():
    wh, h0, xs = _arr(H, H, scale=H ** -0.5), _arr(B, H), _arr(T, B, H)
    f = pb.jit(_stacked_products)
    text = f.lower(wh, h0, xs).compile().as_text()
    assert ": pipe " in text and "scan[length=256]" in text
    h, p1, p2 = f(wh, h0, xs)
    # the reference: the scan in NumPy, in float64
    hs, x64 = [], xs.astype(np.float64)
    hh = h0.astype(np.float64)
    for t in range(T):
        hh = np.tanh(hh @ wh + x64[t])
        hs.append(hh)
    hs = np.stack(hs).reshape(-1, H)
    np.testing.assert_allclose(np.asarray(h), hh, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(p1), hs.T @ (2 * hs) + 1.0, rtol=1e-4, atol=2e-3)
    np.testing.assert_allclose(np.asarray(p2), x64.reshape(-1, H).T @ (2 * hs) * 0.5,
                               rtol=1e-4, atol=2e-3)


def test_a_product_of_the_final_carry_is_not_pipelined():
    """The carry is overwritten every iteration: only the end value is right, so a product
    reading it runs after the scan."""
    wh, h0, xs = _arr(H, H, scale=H ** -0.5), _arr(2048, H), _arr(T, 2048, H)

    def f(wh, h0, xs):
        h, _ = lax.scan(lambda h, x: (pnp.tanh(h @ wh + x), None), h0, xs)
        return h.T @ h
    assert "pipe" not in pb.jit(f).lower(wh, h0, xs).compile().as_text()


def test_short_scans_are_not_pipelined():
    args = ((_arr(H, H, scale=H ** -0.5), _arr(D, H), _arr(H)), _arr(B, H), _arr(64, B, D))
    assert "pipe" not in pb.jit(pb.grad(_rnn_loss)).lower(*args).compile().as_text()


def test_concurrent_calls_share_the_pool(concurrently):
    """Two Python threads calling at once: one of them finds the pool busy and runs its pipe
    on its own thread alone (scan, then every chunk) with the same result."""
    args = _rnn_args()
    f = pb.jit(pb.grad(_rnn_loss))
    want = [np.asarray(g) for g in f(*args)]
    for got in concurrently(lambda: [np.asarray(g) for g in f(*args)]):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("reverse", [False, True])
def test_a_scan_reads_its_input_product_as_it_is_made(reverse):
    """xs @ w made chunk by chunk in the scan's order (from the end for a reverse scan)."""
    x, w, h0 = _arr(T * B, 32), _arr(32, H, scale=0.2), _arr(B, H)

    def f(x, w, h0):
        xs = (x @ w).reshape(T, B, H)
        h, ys = lax.scan(lambda h, u: (pnp.tanh(0.5 * h + u), h[0]), h0, xs, reverse=reverse)
        return h, ys
    jf = pb.jit(f)
    text = jf.lower(x, w, h0).compile().as_text()
    assert "pipe (the scan reads its input as the first product makes it, 64 iterations" in text
    h, ys = jf(x, w, h0)
    xs = (x.astype(np.float64) @ w).reshape(T, B, H)
    hh, want = h0.astype(np.float64), np.zeros((T, H))
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        want[t] = hh[0]
        hh = np.tanh(0.5 * hh + xs[t])
    np.testing.assert_allclose(np.asarray(h), hh, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(ys), want, rtol=1e-4, atol=1e-4)


def test_a_product_the_scan_reads_whole_is_made_before_it():
    """Read as a loop constant (every iteration sees all of it), the product must be complete
    before the scan starts."""
    x, w, h0 = _arr(T * B, 32), _arr(32, H, scale=0.2), _arr(B, H)

    def f(x, w, h0):
        table = x @ w  # (T * B, H): each step reads all of it
        h, _ = lax.scan(lambda h, u: (pnp.tanh(0.5 * h + table[:B] * u), None), h0,
                        pnp.ones((T, 1, 1), np.float32))
        return h
    text = pb.jit(f).lower(x, w, h0).compile().as_text()
    assert "pipe" not in text
    hh, tb = h0.astype(np.float64), (x.astype(np.float64) @ w)[:B]
    for _ in range(T):
        hh = np.tanh(0.5 * hh + tb)
    np.testing.assert_allclose(np.asarray(pb.jit(f)(x, w, h0)), hh, rtol=1e-4, atol=1e-4)


def test_a_product_the_body_also_reads_whole_is_made_before_the_scan():
    """xs @ w is both the scan's xs and, whole, an operand of its body (read at a row the
    carry picks): every iteration may read any row, so none of it can be made while the scan
    runs."""
    x, w, h0 = _arr(T * B, 32), _arr(32, H, scale=0.2), _arr(B, H)

    def f(x, w, h0):
        xs = (x @ w).reshape(T, B, H)

        def step(c, u):
            h, i = c
            back = lax.dynamic_index_in_dim(xs, T - 1 - i, keepdims=False)  # the other end
            return (pnp.tanh(0.5 * h + u + 0.1 * back), i + 1), None
        return lax.scan(step, (h0, np.int32(0)), xs)[0][0]
    jf = pb.jit(f)
    assert "pipe" not in jf.lower(x, w, h0).compile().as_text()
    xs = (x.astype(np.float64) @ w).reshape(T, B, H)
    hh = h0.astype(np.float64)
    for t in range(T):
        hh = np.tanh(0.5 * hh + xs[t] + 0.1 * xs[T - 1 - t])
    np.testing.assert_allclose(np.asarray(jf(x, w, h0)), hh, rtol=1e-4, atol=1e-4)
