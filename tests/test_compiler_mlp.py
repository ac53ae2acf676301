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
