"""compiler/parallel.py: consecutive independent products run side by side (a "par" step, each
product on its own pool thread, large ones shared at their ends), dependent or overlapping ones
in turn."""
import threading

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as pnp

RNG = np.random.default_rng(7)


def _arr(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _grads(a, g, w):  # a layer's weight and input gradients: both read g, neither the other
    return a.T @ g, g @ w.T


def test_independent_products_run_side_by_side():
    a, g, w = _arr(128, 256), _arr(128, 256), _arr(256, 256)
    f = pb.jit(_grads)
    text = f.lower(a, g, w).compile().as_text()
    assert text.splitlines()[:4] == [
        "program _grads: 1 steps, GIL released",
        "  0: par (each product whole on its own thread):",
        "       dot dot_general (input0:f32[1,256,128] strides=(1024, 4, 1024), "
        "input1:f32[1,128,256]) -> (output0:f32[1,256,256])",
        "       dot dot_general (input1:f32[1,128,256], input2:f32[1,256,256] strides=(1024, 4, "
        "1024)) -> (output1:f32[1,128,256])"]
    dw, dx = f(a, g, w)
    np.testing.assert_allclose(np.asarray(dw), a.astype(np.float64).T @ g, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(np.asarray(dx), g.astype(np.float64) @ w.T, rtol=1e-4, atol=1e-3)
    ew, ex = _grads(pb.Array(a), pb.Array(g), pb.Array(w))
    np.testing.assert_array_equal(np.asarray(dw), np.asarray(ew))  # the same kernel either way
    np.testing.assert_array_equal(np.asarray(dx), np.asarray(ex))


def test_dependent_products_run_in_turn():
    a, b, c = _arr(128, 256), _arr(256, 256), _arr(256, 256)
    f = pb.jit(lambda a, b, c: (a @ b) @ c)
    text = f.lower(a, b, c).compile().as_text()
    assert "par" not in text and text.count("dot_general") == 2
    np.testing.assert_allclose(np.asarray(f(a, b, c)), (a.astype(np.float64) @ b) @ c,
                               rtol=1e-3, atol=1e-2)


def test_small_products_stay_in_turn():
    a, g, w = _arr(16, 32), _arr(16, 32), _arr(32, 32)  # far under a thread's worth
    assert "par" not in pb.jit(_grads).lower(a, g, w).compile().as_text()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_with_epilogues_side_by_side(dtype):
    """Each member keeps its epilogue (an SGD update; a mask and a bias-gradient reduction)
    and its own results: the epilogues' scratch and accumulators do not collide."""
    a, g, w = _arr(128, 256, dtype=dtype), _arr(128, 256, dtype=dtype), _arr(256, 256, dtype=dtype)
    m = (_arr(128, 256) > 0).astype(dtype)

    def f(a, g, w, m):
        new_w = w - 0.1 * (a.T @ g)
        dx = (g @ w.T) * m
        return new_w, dx, dx.sum(axis=0)

    jf = pb.jit(f)
    text = jf.lower(a, g, w, m).compile().as_text()
    assert ": par " in text and text.count("epilogue:") == 2
    for _ in range(3):  # accumulators restart every call
        new_w, dx, db = jf(a, g, w, m)
    a64, g64, w64 = (v.astype(np.float64) for v in (a, g, w))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(np.asarray(new_w), w64 - 0.1 * (a64.T @ g64), rtol=tol, atol=tol)
    want_dx = (g64 @ w64.T) * m
    np.testing.assert_allclose(np.asarray(dx), want_dx, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(db), want_dx.sum(axis=0), rtol=tol, atol=100 * tol)


@pytest.mark.parametrize("busy", [False, True])
def test_large_pair_shares_its_strips(busy):
    """Members large enough to cut in strips of rows (an MLP layer's weight and input
    gradients): each thread starts on its own and then takes strips of the other's while some
    remain; what follows a member (the bias-gradient reduction after the mask) runs once it is
    whole. With the pool held by another thread's runs (busy), one thread runs both; the bits
    are the same either way."""
    a, g, w = _arr(128, 512), _arr(128, 512), _arr(512, 512) / 16
    m = (_arr(128, 512) > 0).astype(np.float32)

    def f(a, g, w, m):
        new_w = w - 0.1 * (a.T @ g)
        dx = (g @ w.T) * m
        return new_w, dx, dx.sum(axis=0)

    jf = pb.jit(f)
    assert ": par " in jf.lower(a, g, w, m).compile().as_text()
    args = [pb.Array(v) for v in (a, g, w, m)]
    want = [np.asarray(v) for v in jf(*args)]
    a64, g64, w64 = (v.astype(np.float64) for v in (a, g, w))
    np.testing.assert_allclose(want[0], w64 - 0.1 * (a64.T @ g64), rtol=1e-4, atol=1e-4)
    want_dx = (g64 @ w64.T) * m
    np.testing.assert_allclose(want[1], want_dx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(want[2], want_dx.sum(axis=0), rtol=1e-4, atol=1e-2)
    stop = threading.Event()
    other = pb.jit(lambda x, w: pnp.tanh(x @ w) @ w)

    def hold_the_pool():
        while not stop.is_set():
            other(args[1], args[2])

    holder = threading.Thread(target=hold_the_pool)
    if busy:
        holder.start()
    try:
        for _ in range(10):
            got = [np.asarray(v) for v in jf(*args)]
            for x, y in zip(got, want):
                np.testing.assert_array_equal(x, y)
    finally:
        stop.set()
        if busy:
            holder.join()


def test_three_independent_products_form_one_group():
    x, w1, w2, w3 = _arr(128, 256), _arr(256, 256), _arr(256, 256), _arr(256, 256)
    f = pb.jit(lambda x, w1, w2, w3: (x @ w1, x @ w2, x @ w3))
    text = f.lower(x, w1, w2, w3).compile().as_text()
    assert text.splitlines()[0] == "program <lambda>: 1 steps, GIL released"
    assert text.count("dot_general (") == 3
    for got, w in zip(f(x, w1, w2, w3), (w1, w2, w3)):
        np.testing.assert_allclose(np.asarray(got), x.astype(np.float64) @ w, rtol=1e-4,
                                   atol=1e-3)


def test_grad_of_a_two_layer_net_under_jit_matches_eager():
    x, w1, w2 = _arr(128, 256), _arr(256, 256) / 16, _arr(256, 256) / 16

    def loss(w1, w2, x):
        return pnp.sum(pnp.tanh(pnp.tanh(x @ w1) @ w2) ** 2)

    g = pb.jit(pb.grad(loss, argnums=(0, 1)))
    assert ": par " in g.lower(w1, w2, x).compile().as_text()
    for got, want in zip(g(w1, w2, x), pb.grad(loss, argnums=(0, 1))(w1, w2, x)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


# ---- products cut along K (dot.c): a gradient summed over a long batch ----

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("k", [16000, 4099])
def test_products_cut_along_k_sum_their_parts(dtype, k):
    """K >= 16x the output side: each pool thread sums its part of K; the parts are added
    after, and the epilogue (here a bias add) runs on the total."""
    a = _arr(k, 64).astype(dtype) + (1j * _arr(k, 64) if np.iscomplexobj(dtype(0)) else 0)
    g = _arr(k, 96).astype(dtype)
    bias = _arr(96).astype(dtype)
    f = pb.jit(lambda a, g, bias: a.T @ g + bias)
    got = np.asarray(f(a, g, bias))
    want = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64).T @ g + bias
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(k))


def test_products_cut_along_k_stay_out_of_pairs():
    """The two gradient products of a linear layer over a long batch: each is cut along K on
    all threads (near the ideal), so they run in turn rather than as a par pair."""
    x, g = _arr(8192, 128), _arr(8192, 128)
    text = pb.jit(lambda x, g: (x.T @ g, g.T @ x)).lower(x, g).compile().as_text()
    assert "par" not in text and text.count("dot_general") == 2


def test_rnn_gradient_under_jit_matches_eager():
    """The weight gradients of a scan (hoisted out of the loop as products over time) against
    eager evaluation."""
    from pullback import lax
    rng = np.random.default_rng(3)
    wh = (rng.standard_normal((32, 32)) / 6).astype(np.float32)
    wx = (rng.standard_normal((8, 32)) / 3).astype(np.float32)
    xs = rng.standard_normal((1200, 4, 8)).astype(np.float32)

    def loss(wh, wx, xs):
        def step(h, x):
            return pnp.tanh(h @ wh + x @ wx), None
        h, _ = lax.scan(step, pnp.zeros((4, 32), np.float32), xs)
        return pnp.sum(h ** 2)

    g = pb.grad(loss, argnums=(0, 1))
    for got, want in zip(pb.jit(g)(wh, wx, xs), g(wh, wx, xs)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_long_programs_on_two_threads_at_once():
    # each run keeps the pool's workers spinning (pb_pool_hot) until the last one ends; runs
    # from two threads share the pool and give the results of a run alone
    import threading
    rng = np.random.default_rng(4)
    x = rng.standard_normal((256, 512), dtype=np.float32)
    w = rng.standard_normal((512, 512), dtype=np.float32) * 0.05

    def f(x, w):
        h = pnp.tanh(x @ w)
        return h @ w.T, (h * h).sum()

    g = pb.jit(f)
    X, W = pb.Array(x), pb.Array(w)
    want = [np.asarray(v) for v in g(X, W)]
    errors = []

    def work():
        for _ in range(20):
            got = [np.asarray(v) for v in g(X, W)]
            if not all(np.array_equal(a, b) for a, b in zip(got, want)):
                errors.append(got)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    small = pb.jit(lambda a: a * 2.0 + 1.0)  # a short program after them: the pool still works
    np.testing.assert_allclose(np.asarray(small(pb.Array(x))), x * 2 + 1, rtol=1e-6)
