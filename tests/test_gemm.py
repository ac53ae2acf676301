"""The own float32 matrix product (csrc/gemm.c): against float64 NumPy and against BLAS over the
shapes where its blocking changes (row strips of up to 14, 32-column panels, K blocks of up to
512, column blocks of 512), every operand layout it packs differently, the pool's chunks, and
the epilogues that follow its rows."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pullback as pb
import pullback.numpy as pnp
from pullback import nn
from pullback.backends.cpu import kernels

# products the own kernel takes: a million multiply-adds and more, 64 columns and more
SHAPES = [(1, 1024, 1024), (13, 64, 1261), (14, 96, 780), (15, 100, 700), (29, 513, 71),
          (128, 512, 784), (200, 65, 513), (37, 1030, 40), (784, 512, 128), (3, 4096, 96)]


@pytest.fixture
def blas_only():
    old = kernels.own_sgemm(False)
    yield
    kernels.own_sgemm(old)


def reference(a, b):
    return np.einsum("bmk,bkn->bmn", a.astype(np.float64), b.astype(np.float64))


def check(a, b, out):
    """Float32 rounding of K products: each term's error is bounded by K ulps of the sum of
    magnitudes."""
    ref = reference(a, b)
    bound = np.einsum("bmk,bkn->bmn", np.abs(a).astype(np.float64),
                      np.abs(b).astype(np.float64)) * a.shape[2] * 2.0 ** -23 + 1e-30
    assert out.dtype == np.float32 and out.shape == ref.shape
    assert np.all(np.abs(out - ref) <= bound), np.max(np.abs(out - ref) / bound)


def layouts(rng, shape, kind):
    """A (Bt, r, c) float32 operand in a layout: C order, transposed in memory, strided (every
    other element), flipped (negative strides) or broadcast over the batch."""
    bt, r, c = shape
    if kind == "c":
        return rng.standard_normal(shape, dtype=np.float32)
    if kind == "t":
        return np.swapaxes(rng.standard_normal((bt, c, r), dtype=np.float32), 1, 2)
    if kind == "strided":
        return rng.standard_normal((bt, 2 * r, 2 * c), dtype=np.float32)[:, ::2, ::2]
    if kind == "flipped":
        return rng.standard_normal(shape, dtype=np.float32)[:, ::-1, ::-1]
    return np.broadcast_to(rng.standard_normal((1, r, c), dtype=np.float32), shape)


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_shapes_match_float64(m, n, k):
    rng = np.random.default_rng(m * 7 + n + k)
    a = rng.standard_normal((1, m, k), dtype=np.float32)
    b = rng.standard_normal((1, k, n), dtype=np.float32)
    check(a, b, kernels.matmul(a, b))


@pytest.mark.parametrize("la", ["c", "t", "strided", "flipped", "broadcast"])
@pytest.mark.parametrize("lb", ["c", "t", "strided", "flipped", "broadcast"])
def test_layouts(la, lb):
    rng = np.random.default_rng(3)
    a, b = layouts(rng, (2, 45, 333), la), layouts(rng, (2, 333, 97), lb)
    out = kernels.matmul(a, b)
    check(a, b, out)
    # the kernel sums in the same order whatever the layout
    assert np.array_equal(out, kernels.matmul(np.ascontiguousarray(a), np.ascontiguousarray(b)))


def test_agrees_with_blas(blas_only):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((1, 100, 900), dtype=np.float32)
    b = rng.standard_normal((1, 900, 300), dtype=np.float32)
    with_blas = kernels.matmul(a, b)
    kernels.own_sgemm(True)
    own = kernels.matmul(a, b)
    check(a, b, own)
    np.testing.assert_allclose(own, with_blas, rtol=1e-5, atol=1e-4)


def test_nonfinite_values_stay_in_their_columns():
    # zero-padded panel columns multiply Inf into NaN: they must never be stored
    a = np.ones((1, 20, 1100), np.float32)
    b = np.ones((1, 1100, 70), np.float32)
    a[0, 3, 5] = np.inf
    b[0, 7, 69] = np.nan
    out = kernels.matmul(a, b)
    expect = np.full((20, 70), 1100.0, np.float32)
    expect[3, :] = np.inf
    expect[:, 69] = np.nan
    np.testing.assert_array_equal(out[0], expect)


@pytest.mark.parametrize("m,k,stride", [(29, 1024, 1024), (45, 1000, 2048), (37, 2051, 3072)])
def test_rows_4k_apart_are_copied_and_sum_as_read_in_place(m, k, stride):
    # (products the own kernel takes) rows a multiple of 4 KiB apart would share one L1 set: the
    # kernel copies each strip (16 columns at a time, transposed, then the rest one by one); the
    # sums are those of the same values read in place (rows k + 16 floats apart)
    rng = np.random.default_rng(m + k)
    b = rng.standard_normal((1, k, 200), dtype=np.float32)

    def rows_apart(values, s):
        buf = np.zeros((1, m, s), np.float32)
        buf[:, :, :k] = values
        return buf[:, :, :k]
    vals = rng.standard_normal((1, m, k), dtype=np.float32)
    out = kernels.matmul(rows_apart(vals, stride), b)
    check(vals, b, out)
    assert np.array_equal(out, kernels.matmul(rows_apart(vals, k + 16), b))


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 60), n=st.integers(64, 200), k=st.integers(1, 1300),
       la=st.sampled_from(["c", "t", "strided"]), lb=st.sampled_from(["c", "t", "strided"]),
       seed=st.integers(0, 2 ** 16))
def test_random_shapes(m, n, k, la, lb, seed):
    rng = np.random.default_rng(seed)
    a, b = layouts(rng, (1, m, k), la), layouts(rng, (1, k, n), lb)
    check(a, b, kernels.matmul(a, b))


@pytest.mark.parametrize("m,n,k", [(128, 512, 784), (784, 512, 128), (300, 300, 300),
                                   (64, 2048, 200)])
def test_chunked_on_the_pool_matches_eager_bits(m, n, k):
    # large products run in chunks over the pool, eager and under jit alike: the same sums
    rng = np.random.default_rng(11)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    eager = np.asarray(pnp.asarray(a) @ pnp.asarray(b))
    jitted = np.asarray(pb.jit(lambda x, y: x @ y)(pnp.asarray(a), pnp.asarray(b)))
    check(a[None], b[None], eager[None])
    assert np.array_equal(eager, jitted)


@pytest.mark.parametrize("m,k,n", [(300, 300, 300), (784, 128, 512), (128, 784, 512),
                                   (200, 300, 600), (150, 1100, 700), (128, 2000, 100)])
def test_strips_taken_by_any_thread_give_the_same_bits(m, k, n):
    # a product cut in rows on the pool has its threads take strips of rows as they come, in
    # one pass (one block of B) or several (K over 512, N over 512: a later pass of a strip
    # waits for its earlier ones, which another thread may still run). A batch of two runs
    # each element in fixed halves instead: the same sums, so the same bits.
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((1, m, k), dtype=np.float32)
    b = rng.standard_normal((1, k, n), dtype=np.float32)
    for _ in range(3):
        taken = kernels.matmul(a, b)
        check(a, b, taken)
        halves = kernels.matmul(np.concatenate([a, a]), np.concatenate([b, b]))
        assert np.array_equal(taken[0], halves[0]) and np.array_equal(taken[0], halves[1])


@pytest.mark.parametrize("bt, m, k, n", [(1, 1024, 784, 512), (2, 1024, 784, 512),
                                         (1, 1024, 1100, 1030), (3, 600, 520, 700)])
def test_a_block_of_b_is_packed_once_per_thread_not_once_per_strip(bt, m, k, n):
    # B's (K block, column block) blocks are packed once for all the strips of rows a call (one
    # batch element's chunk) or a thread taking strips runs: at most threads x blocks per batch
    # element. Packing per strip (73 strips of 14 rows here) costs more than the product.
    rng = np.random.default_rng(bt + m + k + n)
    a = rng.standard_normal((bt, m, k), dtype=np.float32)
    b = rng.standard_normal((bt, k, n), dtype=np.float32)
    blocks = -(-n // 512) * -(-k // 512)
    before = kernels.sgemm_blocks_packed()
    out = kernels.matmul(a, b)
    packed = kernels.sgemm_blocks_packed() - before
    check(a, b, out)
    if packed == 0:
        pytest.skip("the own AVX-512 kernel does not run on this CPU")
    assert bt * blocks <= packed <= bt * kernels.schedule_max_threads() * blocks


@pytest.mark.parametrize("m, k, n", [(1, 700, 300), (14, 700, 300), (29, 700, 300),
                                     (128, 700, 300), (300, 700, 300), (29, 300, 300),
                                     (100, 300, 300), (300, 300, 300), (128, 512, 512),
                                     (128, 256, 600)])
def test_epilogue_follows_the_rows(m, k, n):
    # the bias and activation run on each strip of rows as the kernel finishes it; with one K
    # block and at most 512 columns the strip is the kernel's scratch, the product never written
    rng = np.random.default_rng(m)
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((k, n), dtype=np.float32)
    bias = rng.standard_normal(n, dtype=np.float32)

    def layer(x, w, bias):
        return nn.relu(x @ w + bias), x @ w * 2.0

    f = pb.jit(layer)
    text = f.lower(x, w, bias).compile().as_text()
    assert "epilogue" in text
    got = [np.asarray(v) for v in f(pnp.asarray(x), pnp.asarray(w), pnp.asarray(bias))]
    ref = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(got[0], np.maximum(ref + bias, 0), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(got[1], 2 * ref, rtol=1e-4, atol=1e-3)
    eager = [np.asarray(v) for v in layer(pnp.asarray(x), pnp.asarray(w), pnp.asarray(bias))]
    for g, e in zip(got, eager):
        assert np.array_equal(g, e)


def test_training_step_same_with_and_without_own_kernel(blas_only):
    rng = np.random.default_rng(2)
    params = [(rng.standard_normal((300, 200), dtype=np.float32) * 0.05,
               np.zeros(200, np.float32)),
              (rng.standard_normal((200, 100), dtype=np.float32) * 0.05,
               np.zeros(100, np.float32))]
    x = rng.standard_normal((128, 300), dtype=np.float32)

    def loss(params, x):
        h = x
        for w, b in params:
            h = nn.relu(h @ w + b)
        return (h * h).mean()

    def step(params, x):
        g = pb.grad(loss)(params, x)
        return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, g)]

    p = [(pnp.asarray(w), pnp.asarray(b)) for w, b in params]
    with_blas = pb.jit(step)(p, pnp.asarray(x))
    kernels.own_sgemm(True)
    own = pb.jit(step)(p, pnp.asarray(x))
    for (wb, bb), (wo, bo) in zip(with_blas, own):
        np.testing.assert_allclose(np.asarray(wo), np.asarray(wb), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(bo), np.asarray(bb), rtol=1e-5, atol=1e-6)
