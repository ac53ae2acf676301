"""Large program outputs of memory-bound fused regions (cheap ops only) are written with
streaming (non-temporal) stores, staged per tile in scratch (csrc/program_build.c, schedule.c's
region_loop); a region with a transcendental writes its output directly. The results must be
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
        return pnp.abs(x * y + z) - 0.5 * z

    assert "streamed: 1 outputs" in pb.jit(f).lower(x, y, z).compile().as_text()
    got = np.asarray(pb.jit(f)(x, y, z))
    want = np.asarray(f(pb.Array(x), pb.Array(y), pb.Array(z)))
    np.testing.assert_array_equal(got, want)


def test_two_streamed_outputs_and_a_broadcast_operand():
    x = RNG.standard_normal((2048, 1024)).astype(np.float32)
    b = RNG.standard_normal(1024).astype(np.float32)
    f = pb.jit(lambda x, b: (x * b + 1.0, pnp.maximum(x - b, 0.0)))
    assert "streamed: 2 outputs" in f.lower(x, b).compile().as_text()
    u, v = f(x, b)
    np.testing.assert_array_equal(np.asarray(u), x * b + np.float32(1.0))
    np.testing.assert_array_equal(np.asarray(v), np.maximum(x - b, np.float32(0.0)))


def test_a_streamed_output_into_a_donated_input():
    x = RNG.standard_normal(3 << 20).astype(np.float64)
    keep = x.copy()
    f = pb.jit(lambda x: x * 0.5 - 1.0, donate_argnums=0)
    out = f(pb.Array(x.copy()))
    np.testing.assert_array_equal(np.asarray(out), keep * 0.5 - 1.0)


def test_a_streamed_output_read_back_by_a_later_step():
    """An output that a later step of the same program also reads (here a reduction, which
    reads it reversed and so cannot join the region) sees the streamed values."""
    x = RNG.standard_normal(2 << 20).astype(np.float32)
    f = pb.jit(lambda x: (lambda y: (y, pnp.sum(y[::-1])))(pnp.abs(x * 0.1)))
    text = f.lower(x).compile().as_text()
    assert "streamed: 1 outputs" in text and "1: reduce reduce_sum (output0" in text
    y, s = f(x)
    want = np.abs(x * np.float32(0.1))
    np.testing.assert_array_equal(np.asarray(y), want)
    np.testing.assert_allclose(float(s), want.astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(4 << 20,), (1031, 4099)])
def test_a_transcendental_region_writes_its_output_directly(shape):
    """exp, sin (or any op costlier than an add) make a region compute-bound: its output is
    written with ordinary stores, which drain behind the arithmetic, and equals eager's."""
    x, y, z = (RNG.uniform(-2, 2, shape).astype(np.float32) for _ in range(3))

    def f(x, y, z):
        return pnp.exp(x) * y + pnp.sin(z)

    assert "streamed" not in pb.jit(f).lower(x, y, z).compile().as_text()
    got = np.asarray(pb.jit(f)(x, y, z))
    want = np.asarray(f(pb.Array(x), pb.Array(y), pb.Array(z)))
    np.testing.assert_array_equal(got, want)


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
