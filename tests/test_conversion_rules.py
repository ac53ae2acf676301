"""convert_element_type and bitcast_convert_type: jvp, transpose and batching rules.

convert_element_type is linear between inexact dtypes (its transpose converts the cotangent
back: complex -> real keeps the real part, and its cotangent is complex with imaginary part 0);
to or from an integer or bool there is no derivative (float0 / zero), as in JAX.
bitcast_convert_type has a zero derivative (JAX's defjvp_zero) and batches along with the
width change (a widening consumes the example's trailing dimension, never the batch one).
"""
import warnings

import numpy as np
import pytest

import pullback as pb
from pullback import lax
from pullback.primitives.conversion import convert_element_type_p
from pullback.primitives.rules import UndefPrimal, Zero
from pullback.test_util import check_grads, check_vmap, check_vmap_exact
from pullback.tracer import dtypes
from pullback.tracer.avals import ShapedArray

F32, F64, C64, C128 = (np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128))


def convert(dt):
    def f(x):
        with warnings.catch_warnings():  # complex -> real warns, as in JAX
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return lax.convert_element_type(x, dt)
    return f


def normal(rng, shape, dtype=F64):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


SHAPES = [(), (3,), (2, 0), (2, 1, 3)]


# ---- convert_element_type: derivatives ----

@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("src,dst", [(F64, C128), (C128, F64), (C128, C128), (F64, F64)])
def test_check_grads_between_float64_and_complex128(src, dst, shape):
    x = normal(np.random.default_rng(0), shape, src)
    check_grads(convert(dst), (x,), order=2)


def test_check_grads_float32_to_float64_and_complex64():
    x = normal(np.random.default_rng(1), (2, 3), F32)
    check_grads(convert(F64), (x,), order=2, atol=5e-2, rtol=5e-2)
    check_grads(convert(C64), (x,), order=2, atol=5e-2, rtol=5e-2)


def test_tangents_convert_and_cotangents_convert_back():
    rng = np.random.default_rng(2)
    x, t = normal(rng, (4,)), normal(rng, (4,))
    # real -> complex: the tangent gets imaginary part 0; the cotangent's real part returns
    out, tan = pb.jvp(convert(C128), (x,), (t,))
    assert np.asarray(tan).dtype == C128
    np.testing.assert_array_equal(np.asarray(tan), t.astype(C128))
    ct = normal(rng, (4,), C128)
    (g,) = pb.vjp(convert(C128), x)[1](ct)
    assert np.asarray(g).dtype == F64
    np.testing.assert_array_equal(np.asarray(g), ct.real)
    # complex -> real: the real part of the tangent; the cotangent as a complex, imaginary 0
    z, tz = normal(rng, (4,), C128), normal(rng, (4,), C128)
    _, tan = pb.jvp(convert(F64), (z,), (tz,))
    np.testing.assert_array_equal(np.asarray(tan), tz.real)
    (g,) = pb.vjp(convert(F64), z)[1](x)
    assert np.asarray(g).dtype == C128
    np.testing.assert_array_equal(np.asarray(g), x + 0j)


@pytest.mark.parametrize("src,dst", [(F32, np.dtype(dtypes.bfloat16)), (F32, np.dtype(np.float16)),
                                     (np.dtype(np.float16), F64), (F64, F32), (C128, C64)])
def test_cotangents_come_back_in_the_operand_dtype(src, dst):
    rng = np.random.default_rng(3)
    x = normal(rng, (5,), src)
    out, pull = pb.vjp(convert(dst), x)
    ct = normal(rng, (5,), dst)
    (g,) = pull(ct)
    assert np.asarray(g).dtype == src
    np.testing.assert_array_equal(np.asarray(g), np.asarray(convert(src)(ct)))
    _, tan = pb.jvp(convert(dst), (x,), (x,))
    assert np.asarray(tan).dtype == dst


def test_weak_type_is_kept_by_tangents_and_cotangents():
    from pullback.lax._conversion import _convert_element_type
    x = pb.Array(np.float32(2.0), weak_type=True)
    (out, tan) = pb.jvp(lambda v: _convert_element_type(v, F32, weak_type=False), (x,), (x,))
    assert not out.weak_type and not tan.weak_type
    ct = pb.Array(np.float32(1.0))
    (g,) = convert_element_type_p.transpose(ct, UndefPrimal(ShapedArray((), F32, True)),
                                            new_dtype=F32, weak_type=False)
    assert g.weak_type and g.dtype == F32


@pytest.mark.parametrize("dst", [np.int32, np.uint8, np.bool_])
def test_conversion_to_integer_or_bool_has_no_derivative(dst):
    x = np.array([-1.5, 0.0, 2.5])
    out, tan = pb.jvp(convert(dst), (x,), (np.ones(3),))
    assert np.asarray(tan).dtype == dtypes.float0 and np.shape(tan) == (3,)
    # through an integer round trip the gradient is 0, as in JAX
    g = pb.grad(lambda v: convert(F64)(convert(dst)(v)).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), np.zeros(3))


@pytest.mark.parametrize("src", [np.int32, np.uint8, np.bool_])
def test_conversion_from_integer_or_bool_has_no_derivative(src):
    x = np.array([1, 0, 1]).astype(src)
    _, tan = pb.jvp(convert(F64), (x,), (np.zeros(3, dtypes.float0),))
    np.testing.assert_array_equal(np.asarray(tan), np.zeros(3))
    (g,) = pb.vjp(convert(F64), x)[1](np.ones(3))
    assert np.asarray(g).dtype == dtypes.float0


def test_transpose_of_a_zero_cotangent_is_zero():
    aval = ShapedArray((2,), F32)
    (g,) = convert_element_type_p.transpose(Zero(ShapedArray((2,), C64)), UndefPrimal(aval),
                                            new_dtype=C64, weak_type=False)
    assert type(g) is Zero and g.aval.dtype == F32 and g.aval.shape == (2,)


def test_jit_of_grad_equals_grad():
    rng = np.random.default_rng(4)
    z = normal(rng, (3,), F64)

    def f(v):
        c = convert(C128)(v)
        r = convert(F64)(c * c)
        return (r * r).sum()

    np.testing.assert_allclose(np.asarray(pb.jit(pb.grad(f))(z)), np.asarray(pb.grad(f)(z)),
                               rtol=1e-14)
    np.testing.assert_allclose(np.asarray(pb.grad(f)(z)), 4 * z ** 3, rtol=1e-12)


# ---- convert_element_type: batching ----

@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("src,dst", [(F64, F32), (F32, C64), (C128, F64),
                                     (F64, np.dtype(np.int32))])
def test_check_vmap_convert(src, dst, shape):
    check_vmap(convert(dst), (normal(np.random.default_rng(5), shape, src),))


@pytest.mark.parametrize("src,dst", [(np.int64, np.int8), (np.uint8, np.float16),
                                     (np.bool_, np.int32), (np.float32, np.uint16)])
def test_vmap_convert_is_exact_over_different_lanes(src, dst):
    rng = np.random.default_rng(6)
    xs = (rng.standard_normal((3, 2, 4)) * 300).astype(src)
    for ax in range(3):
        check_vmap_exact(convert(dst), (np.moveaxis(xs, 0, ax),), (ax,))


def test_numpy_scalars_keep_their_dtype():
    # np.float64 subclasses float, but it is not a weakly typed Python scalar (float32)
    x = np.float64(0.1)
    out = lax.convert_element_type(x, F64)
    assert out.dtype == F64 and not out.weak_type and float(out) == 0.1
    assert lax.bitcast_convert_type(np.complex128(1j), C128).dtype == C128
    assert lax.bitcast_convert_type(x, np.uint32).shape == (2,)


# ---- bitcast_convert_type ----

def bitcast(dt):
    return lambda x: lax.bitcast_convert_type(x, dt)


def test_bitcast_has_a_zero_derivative():
    x = np.array([1.5, -2.0])
    # float -> float (narrower: a trailing dim of 2): a zero tangent, as JAX's defjvp_zero
    _, tan = pb.jvp(bitcast(F32), (x,), (np.ones(2),))
    assert np.asarray(tan).dtype == F32 and np.shape(tan) == (2, 2)
    np.testing.assert_array_equal(np.asarray(tan), 0)
    (g,) = pb.vjp(bitcast(F32), x)[1](np.ones((2, 2), F32))
    np.testing.assert_array_equal(np.asarray(g), np.zeros(2))
    _, tan = pb.jvp(bitcast(np.int64), (x,), (np.ones(2),))
    assert np.asarray(tan).dtype == dtypes.float0


BITCASTS = [  # (example shape, source dtype, target dtype)
    ((3,), np.float32, np.int32),        # same width
    ((), np.float64, np.uint32),         # narrowing a 0-d example
    ((2, 3), np.int32, np.uint8),        # narrowing: a trailing dim after the batch dims
    ((3, 2), np.float32, np.float64),    # widening consumes the example's last dim
    ((2,), np.uint16, np.float32),       # widening a vector to 0-d
    ((4, 2, 4), np.uint8, np.int32),
]


@pytest.mark.parametrize("shape,src,dst", BITCASTS, ids=str)
def test_vmap_bitcast_in_every_batch_position(shape, src, dst):
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 256, (3,) + shape + (np.dtype(src).itemsize,), dtype=np.uint8)
    xs = raw.view(src).reshape((3,) + shape)  # random bytes: every lane differs
    for ax in range(len(shape) + 1):
        check_vmap_exact(bitcast(dst), (np.moveaxis(xs, 0, ax),), (ax,))


def test_vmap_bitcast_reports_the_examples_shape():
    xs = np.zeros((2,), np.uint16)  # a batch of two 0-d examples: nothing to widen
    with pytest.raises(ValueError, match=r"bitcast_convert_type: .*argument 'operand' of shape "
                                         r"\(\) .*0-d operand"):
        pb.vmap(bitcast(np.uint32))(xs)
