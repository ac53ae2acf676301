"""Regions with a short last dimension and operands broadcast along every other one (a bias
over channels): step_region.c walks the last two dimensions as one and reads those operands from
a repeated copy of their row. Results must equal NumPy's element for element, whatever the
row length, element size, thread split or step (a plain region, a convolution's or a product's
epilogue) the region runs in."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as pnp
from pullback import lax

RNG = np.random.default_rng(11)


def _arr(shape, dtype):
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-50, 50, shape).astype(dtype)
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("shape", [(5, 7, 2), (3, 11, 3), (64, 28, 28, 32), (9, 4, 256),
                                   (6, 5, 257), (2, 3, 1), (0, 4, 8), (4, 0, 8), (4, 100, 24),
                                   (3, 50, 48)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int8])
def test_row_broadcast_operands_match_numpy(shape, dtype):
    h, h2, b = _arr(shape, dtype), _arr(shape, dtype), _arr(shape[-1:], dtype)
    got = pb.jit(lambda h, h2, b: (h + b) * h2 - b)(h, h2, b)
    np.testing.assert_array_equal(np.asarray(got), (h + b) * h2 - b)


def test_bool_and_select_operands():
    shape = (40, 30, 16)
    m, x, y = _arr(shape[-1:], np.bool_), _arr(shape, np.float32), _arr(shape, np.float32)
    got = pb.jit(lambda m, x, y: pnp.where(m, x, y) + m)(m, x, y)
    np.testing.assert_array_equal(np.asarray(got), np.where(m, x, y) + m)


def test_an_operand_varying_along_an_outer_dimension_too():
    # (28, 1, 32) varies along the outer dimension: not a periodic row, the region still exact
    h, b, c = _arr((8, 28, 5, 32), np.float32), _arr((28, 1, 32), np.float32), \
        _arr((32,), np.float32)
    got = pb.jit(lambda h, b, c: h * b + c)(h, b, c)
    np.testing.assert_array_equal(np.asarray(got), h * b + c)


def test_scalar_and_row_operands_together():
    h, b = _arr((16, 33, 24), np.float32), _arr((24,), np.float32)
    got = pb.jit(lambda h, b: pnp.maximum(h * 0.5 + b, -0.25))(h, b)
    np.testing.assert_array_equal(np.asarray(got), np.maximum(h * np.float32(0.5) + b,
                                                              np.float32(-0.25)))


@pytest.mark.parametrize("c", [3, 32, 48])
def test_in_a_convolutions_epilogue(c):
    # the epilogue runs on each image's pixels as the kernel finishes them (rows of c)
    x, w, b = _arr((16, 20, 21, 3), np.float32), _arr((3, 3, 3, c), np.float32), \
        _arr((c,), np.float32)

    def f(x, w, b):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return pb.nn.relu(y + b) * b
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(x, w, b)), np.asarray(f(x, w, b)))


def test_in_a_products_epilogue():
    x, w, b = _arr((8, 64, 96), np.float32), _arr((96, 24), np.float32), _arr((24,), np.float32)
    f = lambda x, w, b: pnp.tanh(x @ w + b) - b  # noqa: E731
    # (the fused product sums in another order than the eager one: equal to rounding)
    np.testing.assert_allclose(np.asarray(pb.jit(f)(x, w, b)), np.tanh(x @ w + b) - b,
                               rtol=1e-5, atol=1e-5)


def test_gradient_of_a_bias_over_channels():
    x, b = _arr((32, 14, 14, 16), np.float32), _arr((16,), np.float32)
    f = lambda x, b: pnp.sum(pb.nn.relu(x + b) ** 2)  # noqa: E731
    gx, gb = pb.jit(pb.grad(f, argnums=(0, 1)))(x, b)
    r = np.maximum(x + b, 0)
    np.testing.assert_allclose(np.asarray(gx), 2 * r, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), (2 * r).sum(axis=(0, 1, 2)), rtol=1e-4)
