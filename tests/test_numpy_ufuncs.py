"""pullback.numpy element-wise functions against NumPy: values, dtypes, broadcasting,
Python-semantics floor division and modulo, and the same under jit."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import pullback as pb
import pullback.numpy as jnp

RNG = np.random.default_rng(0)

# name, numpy function, domain sampler
UNARY = [
    ("negative", np.negative, "any"), ("absolute", np.absolute, "any"), ("sign", np.sign, "any"),
    ("sqrt", np.sqrt, "pos"), ("cbrt", np.cbrt, "any"), ("exp", np.exp, "small"),
    ("exp2", np.exp2, "small"), ("expm1", np.expm1, "small"), ("log", np.log, "pos"),
    ("log2", np.log2, "pos"), ("log10", np.log10, "pos"), ("log1p", np.log1p, "pos"),
    ("sin", np.sin, "any"), ("cos", np.cos, "any"), ("tan", np.tan, "unit"),
    ("arcsin", np.arcsin, "unit"), ("arccos", np.arccos, "unit"), ("arctan", np.arctan, "any"),
    ("sinh", np.sinh, "small"), ("cosh", np.cosh, "small"), ("tanh", np.tanh, "any"),
    ("arcsinh", np.arcsinh, "any"), ("arccosh", np.arccosh, "ge1"), ("arctanh", np.arctanh, "unit"),
    ("floor", np.floor, "any"), ("ceil", np.ceil, "any"), ("trunc", np.trunc, "any"),
    ("rint", np.rint, "halves"), ("square", np.square, "any"), ("reciprocal", np.reciprocal, "pos"),
    ("deg2rad", np.deg2rad, "any"), ("rad2deg", np.rad2deg, "any"), ("sinc", np.sinc, "any"),
    ("isnan", np.isnan, "special"), ("isinf", np.isinf, "special"),
    ("isfinite", np.isfinite, "special"), ("signbit", np.signbit, "special"),
    ("logical_not", np.logical_not, "any"),
]

BINARY = [
    ("add", np.add, "any"), ("subtract", np.subtract, "any"), ("multiply", np.multiply, "any"),
    ("divide", np.divide, "nonzero"), ("true_divide", np.true_divide, "nonzero"),
    ("floor_divide", np.floor_divide, "nonzero"), ("remainder", np.remainder, "nonzero"),
    ("fmod", np.fmod, "nonzero"), ("power", np.power, "pos"), ("maximum", np.maximum, "any"),
    ("minimum", np.minimum, "any"), ("fmax", np.fmax, "special"), ("fmin", np.fmin, "special"),
    ("arctan2", np.arctan2, "any"), ("hypot", np.hypot, "any"),
    ("logaddexp", np.logaddexp, "any"), ("logaddexp2", np.logaddexp2, "any"),
    ("copysign", np.copysign, "any"), ("equal", np.equal, "ints"), ("not_equal", np.not_equal, "ints"),
    ("less", np.less, "any"), ("less_equal", np.less_equal, "ints"), ("greater", np.greater, "any"),
    ("greater_equal", np.greater_equal, "ints"), ("logical_and", np.logical_and, "ints"),
    ("logical_or", np.logical_or, "ints"), ("logical_xor", np.logical_xor, "ints"),
    ("heaviside", np.heaviside, "ints"), ("nextafter", np.nextafter, "any"),
]


def sample(domain, shape, dtype):
    if domain == "pos":
        x = RNG.uniform(0.1, 5, shape)
    elif domain == "small":
        x = RNG.uniform(-5, 5, shape)
    elif domain == "unit":
        x = RNG.uniform(-0.95, 0.95, shape)
    elif domain == "ge1":
        x = RNG.uniform(1.0, 5, shape)
    elif domain == "halves":
        x = RNG.integers(-6, 6, shape) / 2
    elif domain == "ints":
        x = RNG.integers(-3, 4, shape).astype(float)
    elif domain == "nonzero":
        x = RNG.uniform(0.5, 5, shape) * RNG.choice([-1, 1], shape)
    elif domain == "special":
        x = RNG.choice([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], shape)
    else:
        x = RNG.uniform(-5, 5, shape)
    return np.asarray(x, dtype)


def check(got, want, dtype):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    tol = {np.float32: 2e-6, np.float64: 1e-13}.get(np.dtype(dtype).type, 0)
    if np.asarray(want).dtype == bool or tol == 0:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, np.asarray(want, got.dtype), rtol=tol * 8, atol=tol,
                                   equal_nan=True)


@pytest.mark.parametrize("name, ref, domain", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_against_numpy(name, ref, domain, dtype):
    x = sample(domain, (3, 5), dtype)
    got = getattr(jnp, name)(jnp.asarray(x))
    with np.errstate(all="ignore"):
        want = ref(x)
    check(got, want, dtype)
    jitted = pb.jit(getattr(jnp, name))(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(got))


@pytest.mark.parametrize("name, ref, domain", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_against_numpy_with_broadcasting(name, ref, domain, dtype):
    x, y = sample(domain, (4, 1, 3), dtype), sample(domain, (5, 1), dtype)
    got = getattr(jnp, name)(jnp.asarray(x), jnp.asarray(y))
    with np.errstate(all="ignore"):
        want = ref(x, y)
    check(got, want, dtype)


@given(hnp.arrays(np.int32, hnp.array_shapes(max_dims=2, max_side=5),
                  elements=st.integers(-50, 50)),
       st.integers(-7, 7).filter(lambda d: d != 0))
def test_integer_floor_division_and_modulo_follow_python(x, d):
    q = jnp.floor_divide(jnp.asarray(x), d)
    r = jnp.remainder(jnp.asarray(x), d)
    assert q.dtype == np.int32 and r.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(q), x // d)
    np.testing.assert_array_equal(np.asarray(r), x % d)
    qq, rr = jnp.divmod(jnp.asarray(x), d)
    np.testing.assert_array_equal(np.asarray(qq) * d + np.asarray(rr), x)


def test_float_floor_division_and_modulo_follow_python():
    x = np.array([7.5, -7.5, 7.5, -7.5, 0.0, -3.0], np.float64)
    y = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0])
    np.testing.assert_array_equal(np.asarray(jnp.floor_divide(x, y)), np.floor_divide(x, y))
    np.testing.assert_array_equal(np.asarray(jnp.remainder(x, y)), np.remainder(x, y))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.int64])
def test_integer_power(dtype):
    x = np.array([0, 1, 2, 3, 5], dtype)
    e = np.array([3, 0, 5, 2, 1], dtype)
    np.testing.assert_array_equal(np.asarray(jnp.power(x, e)), np.power(x, e))
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x) ** 2), x ** 2)


def test_bool_arithmetic_is_logical_as_in_jax():
    t = jnp.asarray([True, False, True])
    f = jnp.asarray([True, True, False])
    assert jnp.add(t, f).dtype == np.bool_ and jnp.add(t, f).tolist() == [True, True, True]
    assert jnp.multiply(t, f).tolist() == [True, False, False]
    with pytest.raises(TypeError, match="subtract"):
        jnp.subtract(t, f)


@pytest.mark.x32
def test_int_inputs_of_inexact_functions_become_float32():
    x = jnp.asarray([1, 4, 9])
    assert jnp.sqrt(x).dtype == np.float32 and jnp.sqrt(x).tolist() == [1.0, 2.0, 3.0]
    assert (jnp.asarray([1, 2]) / 2).dtype == np.float32


@pytest.mark.x32
def test_weak_scalars_keep_array_dtypes():
    h = jnp.asarray(np.ones(3, np.float16))
    assert (h * 2.0).dtype == np.float16 and (h + 1).dtype == np.float16
    i8 = jnp.asarray(np.ones(3, np.int8))
    assert (i8 + 3).dtype == np.int8 and (i8 * 2.5).dtype == np.float32


def test_where_clip_and_isclose():
    x = np.array([-2.0, 0.5, 3.0, np.nan], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.where(x > 0, x, 0.0)), np.where(x > 0, x, 0.0))
    np.testing.assert_array_equal(np.asarray(jnp.clip(x, -1, 1)), np.clip(x, -1, 1))
    np.testing.assert_array_equal(np.asarray(jnp.isclose(x, x + 1e-7, equal_nan=True)),
                                  np.isclose(x, x + 1e-7, equal_nan=True))
    assert bool(jnp.allclose(x[:3], x[:3] + 1e-9))
    assert bool(jnp.array_equal(x[:2], x[:2])) and not bool(jnp.array_equal(x[:2], x[:3]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logaddexp_derivatives_split_ties_evenly(dtype):
    """d/dx1 logaddexp(x1, x2) = exp(x1 - out): 0.5 each at a tie (JAX's rule; the max and
    |x1 - x2| inside the formula would give 0 and 1), 1 and 0 where one operand is +inf."""
    x1 = np.array([0.0, -2.0, 3.0, 100.0, np.inf, 1.0, -np.inf], dtype)
    x2 = np.array([0.0, -2.0, 1.0, 0.0, 1.0, -np.inf, 2.0], dtype)
    out = np.logaddexp(x1.astype(np.float64), x2)
    with np.errstate(invalid="ignore"):
        w1 = np.where(x1 == out, 1.0, np.exp(x1 - out))
        w2 = np.where(x2 == out, 1.0, np.exp(x2 - out))
    g1, g2 = pb.vmap(pb.grad(jnp.logaddexp, argnums=(0, 1)))(jnp.asarray(x1), jnp.asarray(x2))
    # (exp(-100) is subnormal in float32)
    np.testing.assert_allclose(np.asarray(g1), w1, rtol=1e-6, atol=1e-37)
    np.testing.assert_allclose(np.asarray(g2), w2, rtol=1e-6, atol=1e-37)
    np.testing.assert_allclose(np.asarray(g1)[:2], [0.5, 0.5])
    np.testing.assert_allclose(np.asarray(g1 + g2)[:6], 1.0, rtol=1e-6)
    # logaddexp2 follows: ln2 * 2**x1 / (2**x1 + 2**x2) / ln2 = 0.5 at a tie
    d1 = pb.grad(jnp.logaddexp2)(jnp.asarray(dtype(1.5)), jnp.asarray(dtype(1.5)))
    np.testing.assert_allclose(np.asarray(d1), 0.5, rtol=1e-6)


def test_fmax_fmin_derivatives_at_ties_and_nan_go_to_one_operand():
    """As JAX: fmax = where(x > y | isnan(y), x, y), so a tie's derivative is y's, and a NaN
    operand's is 0."""
    x = np.array([1.0, 2.0, np.nan, 3.0, -1.0], np.float32)
    y = np.array([1.0, 1.0, 5.0, np.nan, 0.0], np.float32)
    for f, pick_x in ((jnp.fmax, [0, 1, 0, 1, 0]), (jnp.fmin, [0, 0, 0, 1, 1])):
        gx, gy = pb.vmap(pb.grad(f, argnums=(0, 1)))(jnp.asarray(x), jnp.asarray(y))
        np.testing.assert_array_equal(np.asarray(gx), pick_x)
        np.testing.assert_array_equal(np.asarray(gy), 1 - np.array(pick_x))


def test_bitwise_and_shifts():
    a = np.array([1, -8, 255, 12], np.int32)
    b = np.array([3, 2, 4, 1], np.int32)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
        np.testing.assert_array_equal(np.asarray(getattr(jnp, name)(a, b)), getattr(np, name)(a, b))
    np.testing.assert_array_equal(np.asarray(~jnp.asarray(a)), ~a)
    u = np.array([1, 128, 255], np.uint8)
    np.testing.assert_array_equal(np.asarray(jnp.right_shift(u, 1)), u >> 1)


def test_complex_helpers():
    z = np.array([1 + 2j, -3 - 1j], np.complex64)
    np.testing.assert_allclose(np.asarray(jnp.abs(z)), np.abs(z), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(jnp.real(z)), z.real)
    np.testing.assert_array_equal(np.asarray(jnp.imag(z)), z.imag)
    np.testing.assert_array_equal(np.asarray(jnp.conj(z)), np.conj(z))
    np.testing.assert_allclose(np.asarray(jnp.angle(z)), np.angle(z), rtol=1e-6)


def test_operators_match_functions():
    x = jnp.asarray(np.array([[1.0, -2.0], [3.0, 4.0]], np.float32))
    y = jnp.asarray(np.array([0.5, 2.0], np.float32))
    xn, yn = np.asarray(x), np.asarray(y)
    for expr in ("x + y", "x - y", "x * y", "x / y", "x // y", "x % y", "x ** 2", "-x", "abs(x)",
                 "x < y", "x <= y", "x > y", "x >= y", "x == y", "x != y", "2.0 - x", "1 / y",
                 "x @ x", "y @ x"):
        got = eval(expr, {"x": x, "y": y})
        want = eval(expr, {"x": xn, "y": yn})
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=expr)
