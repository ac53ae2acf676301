"""frexp, ldexp, modf, fabs, spacing, nan_to_num, i0 and the window functions against NumPy
(subnormals, infinities, NaN; bf16/f16/f32/f64; derivatives of i0 to second order)."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pullback as pb
import pullback.numpy as jnp
from pullback.test_util import check_grads

RNG = np.random.default_rng(32)
SPECIAL32 = np.array([0.0, -0.0, 1.5, -3.0, 1e-40, -2e-44, 1e-45, np.inf, -np.inf, np.nan,
                      3e38, -1.17549435e-38, 0.75], np.float32)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_frexp_matches_numpy_including_subnormals(dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    special = SPECIAL32 if dtype != np.float16 else \
        SPECIAL32[np.abs(np.nan_to_num(SPECIAL32)) < 6e4]   # float16's finite ones
    x = np.concatenate([special.astype(dtype), np.array([tiny, -3 * tiny], dtype),
                        RNG.normal(size=20).astype(dtype) * dtype(100)])
    m, e = jnp.frexp(x)
    nm, ne = np.frexp(x)
    assert m.dtype == dtype and e.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(m), nm)
    np.testing.assert_array_equal(np.asarray(e), ne)
    # compiled programs flush subnormals to zero, as XLA does: compare the normal values
    m2, e2 = pb.jit(jnp.frexp)(x)
    normal = ~(np.abs(x) < np.finfo(dtype).tiny) | (x == 0)
    np.testing.assert_array_equal(np.asarray(m2)[normal], nm[normal])
    np.testing.assert_array_equal(np.asarray(e2)[normal], ne[normal])


def test_frexp_bfloat16_and_int_and_complex():
    x = np.array([3.0, -0.375, 1e-39], ml_dtypes.bfloat16)
    m, e = jnp.frexp(x)
    np.testing.assert_array_equal(np.asarray(m).astype(np.float32) * 2.0 ** np.asarray(e),
                                  x.astype(np.float32))
    m, e = jnp.frexp(np.array([8, 3], np.int32))
    assert m.dtype == jnp.sin(np.array([8], np.int32)).dtype and e.tolist() == [4, 2]
    with pytest.raises(TypeError, match="frexp: argument 'x' must be real"):
        jnp.frexp(np.array([1j]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ldexp_matches_numpy(dtype):
    x = np.concatenate([SPECIAL32.astype(dtype), RNG.normal(size=10).astype(dtype)])
    for k in [-1100, -150, -30, -1, 0, 1, 7, 130, 300, 1100]:
        with np.errstate(over="ignore"):
            ref = np.ldexp(x, k)
        np.testing.assert_array_equal(np.asarray(jnp.ldexp(x, np.int32(k))), ref)
    e = RNG.integers(-100, 100, x.shape).astype(np.int32)
    with np.errstate(over="ignore"):
        ref = np.ldexp(x, e)
    # compiled programs flush subnormals to zero (XLA's): compare normal inputs and results
    normal = (~(np.abs(x) < np.finfo(dtype).tiny) | (x == 0)) & \
        (~(np.abs(ref) < np.finfo(dtype).tiny) | (ref == 0))
    np.testing.assert_array_equal(np.asarray(pb.jit(jnp.ldexp)(x, e))[normal], ref[normal])


def test_ldexp_grads_and_errors():
    check_grads(lambda x: jnp.ldexp(x, np.int32(3)), (RNG.normal(size=4),), order=2)
    check_grads(lambda x: jnp.frexp(x)[0], (RNG.normal(size=4) + 3.0,), order=2)
    with pytest.raises(ValueError, match="ldexp: argument 'x2' must be an integer"):
        jnp.ldexp(np.ones(2), np.ones(2))


def test_modf_fabs_spacing_nan_to_num():
    x = SPECIAL32
    frac, whole = jnp.modf(x)
    finite = np.isfinite(x)
    nf, nw = np.modf(x)
    np.testing.assert_array_equal(np.asarray(frac)[finite], nf[finite])
    np.testing.assert_array_equal(np.asarray(whole), nw)
    np.testing.assert_array_equal(np.asarray(jnp.fabs(x)), np.fabs(x))
    with pytest.raises(TypeError, match="fabs: argument 'x' must be real"):
        jnp.fabs(np.array([1j]))
    sp = np.asarray(jnp.spacing(x))
    ref = np.spacing(x)
    keep = finite & (x != 0)
    np.testing.assert_array_equal(sp[keep], ref[keep])
    assert np.isnan(sp[~np.isfinite(x)]).all()
    np.testing.assert_array_equal(np.asarray(jnp.nan_to_num(x)), np.nan_to_num(x))
    np.testing.assert_array_equal(np.asarray(jnp.nan_to_num(x, nan=7.0, posinf=1.0,
                                                           neginf=-1.0)),
                                  np.nan_to_num(x, nan=7.0, posinf=1.0, neginf=-1.0))
    c = np.array([complex(np.nan, np.inf), 1 + 2j], np.complex64)
    np.testing.assert_array_equal(np.asarray(jnp.nan_to_num(c)), np.nan_to_num(c))
    assert jnp.nan_to_num(np.array([1, 2], np.int32)).tolist() == [1, 2]


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5),
                  elements=st.floats(-30, 30)))
def test_i0_matches_numpy(x):
    np.testing.assert_allclose(np.asarray(jnp.i0(x)), np.i0(x), rtol=1e-13)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-6), (np.float16, 2e-3),
                                         (ml_dtypes.bfloat16, 2e-2)])
def test_i0_low_precision(dtype, rtol):
    x = np.array([0, 0.5, -1, 3, 7.9, 8.1, 20, -50], dtype)
    got = np.asarray(jnp.i0(x)).astype(np.float64)
    with np.errstate(over="ignore"):  # overflow to inf as the dtype does
        ref = np.i0(x.astype(np.float64)).astype(dtype).astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=rtol)


def test_i0_derivatives_are_bessel_i1():
    scipy_special = pytest.importorskip("scipy.special")
    x = np.array([-9.0, -2.0, -0.3, 0.4, 3.0, 8.0, 12.0])
    g = np.asarray(pb.vmap(pb.grad(jnp.i0))(x))
    np.testing.assert_allclose(g, scipy_special.i1(x), rtol=1e-12)
    check_grads(jnp.i0, (x,), order=2)
    # JAX's: the derivative at 0 is 0, and so is the second one there
    assert float(pb.grad(jnp.i0)(0.0)) == 0.0 and float(pb.grad(pb.grad(jnp.i0))(0.0)) == 0.0


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("m", [-1, 0, 1, 2, 5, 16])
def test_windows_match_numpy(name, m):
    got = getattr(jnp, name)(m)
    ref = getattr(np, name)(m)
    assert got.shape == ref.shape
    np.testing.assert_allclose(np.asarray(got), ref, atol=1e-14)


@pytest.mark.x32
def test_windows_default_float32():
    assert jnp.hanning(4).dtype == np.float32 and jnp.kaiser(4, 2.0).dtype == np.float32


def test_kaiser_matches_numpy_and_differentiates_in_beta():
    for m in [0, 1, 2, 7]:
        np.testing.assert_allclose(np.asarray(jnp.kaiser(m, 4.5)), np.kaiser(m, 4.5),
                                   rtol=1e-13)
    check_grads(lambda b: jnp.kaiser(6, b), (np.array(3.0),), order=2)
    with pytest.raises(TypeError, match="kaiser: argument 'M' must be a static integer"):
        jnp.kaiser(2.5, 1.0)
