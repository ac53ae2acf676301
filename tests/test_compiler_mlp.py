"""The compiled MLP training step (issue 6): the product paths it takes (tiny, small and large
float32 products, transposed operands read in place), how its element-wise work fuses into
product epilogues, and its values against eager and an independent NumPy computation."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import nn
from pullback.backends.cpu import kernels

RNG = np.random.default_rng(6)


def rand(*shape):
    return RNG.uniform(-1, 1, size=shape).astype(np.float32)


def close(got, want, rtol=2e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=rtol, atol=rtol)


# ---- products of every size class, jit against eager and NumPy ----

# tiny (<= 64K multiply-adds: direct loops), small (single-threaded BLAS), large (pool chunks)
SHAPES = [(3, 5, 7), (16, 16, 16), (8, 1024, 8), (1000, 16, 3), (64, 128, 128), (128, 512, 10),
          (512, 128, 10), (10, 128, 512), (128, 10, 512), (256, 300, 200)]


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
def test_float32_products_against_eager_and_numpy(m, k, n, layout):
    a = rand(k, m).T if layout[0] == "t" else rand(m, k)
    b = rand(n, k).T if layout[1] == "t" else rand(k, n)
    want = a.astype(np.float64) @ b.astype(np.float64)
    eager = jnp.matmul(pb.Array(a), pb.Array(b))
    got = pb.jit(lambda a, b: a @ b)(pb.Array(a), pb.Array(b))
    close(eager, want, 1e-4)
    close(got, want, 1e-4)
    if m * k * n <= 65536 and layout == "nn":  # the same direct loops in both: same bits
        np.testing.assert_array_equal(np.asarray(got), np.asarray(eager))


def test_small_products_in_a_program_use_one_thread_and_agree_with_eager():
    """Small products inside a program run BLAS on the calling thread; batched ones too."""
    a, b = rand(4, 64, 96), rand(4, 96, 80)
    f = pb.jit(lambda a, b: jnp.matmul(a, b) * 2.0)
    close(f(a, b), np.matmul(a.astype(np.float64), b) * 2, 1e-4)
    close(f(a, b), jnp.matmul(pb.Array(a), pb.Array(b)) * 2.0, 1e-5)


# ---- the MLP training step (benchmarks/topics/jit.py's case, smaller) ----

SIZES, BATCH, LR = [48, 32, 32, 10], 16, 0.01


def _step_fn(pb_like, nn_like, np_like, classes=SIZES[-1]):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = nn_like.relu(h @ w + b)
        w, b = params[-1]
        logp = nn_like.log_softmax(h @ w + b)
        return -np_like.mean(np_like.sum(logp * nn_like.one_hot(y, classes), axis=-1))

    def step(params, x, y):
        value, grads = pb_like.value_and_grad(loss)(params, x, y)
        return value, [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return step


def _numpy_step(ws, bs, x, y):
    """The same step by hand in float64 (forward, backward, SGD)."""
    onehot = np.eye(ws[-1].shape[1])[y]
    hs, h = [x], x
    for w, b in zip(ws[:-1], bs[:-1]):
        h = np.maximum(h @ w + b, 0)
        hs.append(h)
    z = h @ ws[-1] + bs[-1]
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    value = -np.mean((logp * onehot).sum(axis=1))
    g = (np.exp(logp) - onehot) / len(x)
    new = [None] * len(ws)
    for i in range(len(ws) - 1, -1, -1):
        gw, gb = hs[i].T @ g, g.sum(axis=0)
        if i:
            g = (g @ ws[i].T) * (hs[i] > 0)
        new[i] = (ws[i] - LR * gw, bs[i] - LR * gb)
    return value, new


def _mlp_data(sizes=SIZES, batch=BATCH):
    ws = [rand(a, b) * np.float32(np.sqrt(2 / a)) for a, b in zip(sizes[:-1], sizes[1:])]
    bs = [rand(b) * np.float32(0.1) for b in sizes[1:]]
    return ws, bs, rand(batch, sizes[0]), RNG.integers(0, sizes[-1], batch).astype(np.int32)


@pytest.mark.parametrize("sizes,batch", [(SIZES, BATCH), ([256, 128, 64, 10], 64)])
def test_mlp_step_against_eager_and_numpy(sizes, batch):
    """Tiny products (direct loops) and small ones (single-threaded BLAS)."""
    ws, bs, x, y = _mlp_data(sizes, batch)
    params = [(pb.Array(w), pb.Array(b)) for w, b in zip(ws, bs)]
    step = _step_fn(pb, nn, jnp)
    value, new = pb.jit(step)(params, pb.Array(x), pb.Array(y))
    e_value, e_new = step(params, pb.Array(x), pb.Array(y))
    n_value, n_new = _numpy_step([w.astype(np.float64) for w in ws],
                                 [b.astype(np.float64) for b in bs], x.astype(np.float64), y)
    close(value, e_value, 1e-5)
    close(value, n_value, 1e-4)
    for (w, b), (ew, eb), (nw, nb) in zip(new, e_new, n_new):
        close(w, ew, 1e-5)
        close(b, eb, 1e-5)
        close(w, nw, 1e-4)
        close(b, nb, 1e-4)


def test_mlp_step_schedule_fuses_into_the_products():
    """Every element-wise op of the forward, the relu masks and the SGD updates of the weights
    run as epilogues of the 8 products (the benchmark's schedule: see the profile in issue 6);
    the weight gradients are computed already transposed, reading operands in place; the second
    layer's weight and input gradients run side by side (a par step)."""
    ws, bs, x, y = _mlp_data([784, 512, 512, 10], 128)
    params = [(pb.Array(w), pb.Array(b)) for w, b in zip(ws, bs)]
    text = pb.jit(_step_fn(pb, nn, jnp)).lower(params, pb.Array(x), pb.Array(y)).compile() \
        .as_text()
    lines = text.splitlines()
    assert lines[0] == "program step: 16 steps, GIL released"
    dots = [ln for ln in lines if "dot_general (" in ln]
    assert len(dots) == 8
    par = lines.index(next(ln for ln in lines if ": par " in ln))
    pair = [ln for ln in lines[par + 1:par + 5] if "dot_general (" in ln]
    assert len(pair) == 2
    assert "f32[1,512,128]" in pair[0] and "-> (arena@" in pair[0]  # h1^T @ g: the weight's
    assert "input2:f32[1,512,512] strides=(2048, 4, 2048)" in pair[1]  # g @ W2^T: the input's
    epilogues = [ln.split("epilogue: ")[1] for ln in lines if "epilogue: " in ln]
    assert epilogues.count("add ; max ; gt") == 2          # bias + relu, and its mask x > 0
    assert epilogues.count("mul ; sub") == 3                # SGD of weights
    assert epilogues.count("select_n ; reduce_sum") == 2    # relu mask + bias gradient
    assert text.count("bool[128,512]") == 4  # each mask kept as bool (written, read once)
    assert not [ln for ln in lines if ": region" in ln and "[1,784" in ln]  # no copies of x
    assert "copy" not in text
    arena = int(text.split("memory: arena ")[1].split()[0])
    assert arena <= 2490368  # buffers share bytes: about half the intermediates (the par
    # step's products each keep their operands and results apart)
