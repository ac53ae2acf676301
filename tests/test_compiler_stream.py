"""Large program outputs of fused regions are written with streaming (non-temporal) stores,
staged per tile in scratch (csrc/program_build.c, schedule.c's region_loop): the results must be
those of ordinary stores whatever the alignment of the chunks the pool cuts, and whether the
output is a fresh array, a donated input or one of several outputs; and so are the slices a
scan body writes into a stacked output and never reads."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as pnp
from pullback import lax

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("shape", [(4 << 20,), (4099, 1031), (1031, 4099), (3, 700001)])
def test_streamed_outputs_equal_eager(shape):
    x, y, z = (RNG.uniform(-2, 2, shape).astype(np.float32) for _ in range(3))

    def f(x, y, z):
        return pnp.exp(x) * y + pnp.sin(z)

    assert "streamed: 1 outputs" in pb.jit(f).lower(x, y, z).compile().as_text()
    got = np.asarray(pb.jit(f)(x, y, z))
    want = np.asarray(f(pb.Array(x), pb.Array(y), pb.Array(z)))
    np.testing.assert_array_equal(got, want)


def test_two_streamed_outputs_and_a_broadcast_operand():
    x = RNG.standard_normal((2048, 1024)).astype(np.float32)
    b = RNG.standard_normal(1024).astype(np.float32)
    f = pb.jit(lambda x, b: (x * b + 1.0, pnp.tanh(x - b)))
    assert "streamed: 2 outputs" in f.lower(x, b).compile().as_text()
    u, v = f(x, b)
    np.testing.assert_allclose(np.asarray(u), x * b + 1.0, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(v), np.tanh(x - b), rtol=2e-6, atol=2e-6)


def test_a_streamed_output_into_a_donated_input():
    x = RNG.standard_normal(3 << 20).astype(np.float64)
    keep = x.copy()
    f = pb.jit(lambda x: x * 0.5 - 1.0, donate_argnums=0)
    out = f(pb.Array(x.copy()))
    np.testing.assert_array_equal(np.asarray(out), keep * 0.5 - 1.0)


def test_a_streamed_output_read_back_by_a_later_step():
    """An output that a later step of the same program also reads (here a reduction) sees the
    streamed values."""
    x = RNG.standard_normal(2 << 20).astype(np.float32)
    f = pb.jit(lambda x: (lambda y: (y, pnp.sum(y)))(pnp.exp(x * 0.1)))
    y, s = f(x)
    np.testing.assert_allclose(np.asarray(y), np.exp(x * np.float32(0.1)), rtol=1e-6)
    np.testing.assert_allclose(float(s), np.exp(x.astype(np.float64) * 0.1).sum(), rtol=1e-4)


def test_small_outputs_and_intermediates_are_not_streamed():
    x = RNG.standard_normal(1 << 18).astype(np.float32)  # 1 MiB: under the 4 MiB threshold
    assert "streamed" not in pb.jit(lambda x: x * 2.0).lower(x).compile().as_text()
    big = RNG.standard_normal((2048, 1024)).astype(np.float32)
    w = RNG.standard_normal((1024, 8)).astype(np.float32)
    # the tanh result feeds a product: an arena intermediate, never streamed
    assert "streamed" not in pb.jit(lambda x, w: pnp.tanh(x) @ w).lower(big, w).compile() \
        .as_text()


@pytest.mark.parametrize("reads_back", [False, True])
def test_scan_residuals_streamed_from_the_loop(reads_back):
    """A scan body's ys[i] that no step of the body reads (a residual for the backward pass)
    is streamed past the caches, step after step; the loop fences once at its end, before
    anything reads the stacked array. One the body reads back is written normally."""
    rng = np.random.default_rng(5)
    h0 = rng.standard_normal((16, 128)).astype(np.float32)
    xs = rng.standard_normal((300, 16, 128)).astype(np.float32)

    def f(h0, xs):
        def step(h, x):
            r = (1.0 + h) * (1.0 - h)  # 8 KB a step
            h = pnp.tanh(0.5 * h + x)
            return h, (r + 1.0 if reads_back else r, h)
        h, (rs, hs) = lax.scan(step, h0, xs)
        return h, rs, hs.sum(axis=(1, 2))

    got = pb.jit(f)(h0, xs)
    hh, rs, sums = h0.astype(np.float64), [], []
    for x in xs:
        rs.append((1 + hh) * (1 - hh) + (1.0 if reads_back else 0.0))
        hh = np.tanh(0.5 * hh + x)
        sums.append(hh.sum())
    for g, w in zip(got, (hh, np.stack(rs), np.array(sums))):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-3)
