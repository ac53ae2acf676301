"""integer_pow (``x ** n`` for a Python int n): its values are JAX's multiplication chain
(binary exponentiation, each product rounded to the dtype) for every dtype, on the
small-exponent loops and the general one, eager and compiled; and inside jit it fuses into the
element-wise region of its readers as a multiplication does."""
import ml_dtypes
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp

RNG = np.random.default_rng(7)
INEXACT = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.complex64, np.complex128]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _chain(x, y):
    """JAX 0.10's integer_pow (jax._src.lax: binary exponentiation; acc starts as the first
    factor, 1 / acc for y < 0), in x's own dtype: NumPy's and ml_dtypes' products round to
    the dtype each time (checked against JAX bit for bit when written)."""
    acc, base, n = None, x, abs(y)
    with np.errstate(all="ignore"):
        while n:
            if n & 1:
                acc = base if acc is None else acc * base
            n >>= 1
            if n:
                base = base * base
        if acc is None:
            return np.ones_like(x)
        return (np.ones((), x.dtype) / acc).astype(x.dtype) if y < 0 else acc


def _data(dt, n=257):
    dt = np.dtype(dt)
    if dt.kind in "iu":  # wide enough that x**3 and x**4 wrap
        return RNG.integers(0 if dt.kind == "u" else -120, 120, n).astype(dt)
    x = RNG.standard_normal(n) * 3
    if dt.kind == "c":
        x = x + 1j * RNG.standard_normal(n)
    x = x.astype(dt)
    if dt.kind != "c":  # (complex infinities: C and NumPy differ, not compared here)
        x[:3] = np.array([0, np.inf, np.nan]).astype(dt)  # 1/0, inf**n, nan**0 == 1
    return x


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    if want.dtype.kind == "c":  # (complex products may contract to FMA: an ulp)
        np.testing.assert_allclose(got, want, rtol=2e-6 if want.dtype.itemsize == 8 else 1e-14)
        return
    g, w = got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")
    nan = (got != got) & (want != want)
    np.testing.assert_array_equal(np.where(nan, 0, g), np.where(nan, 0, w))


@pytest.mark.parametrize("dt", INEXACT + INTS, ids=lambda d: np.dtype(d).name)
def test_integer_pow_is_jax_multiplication_chain(dt):
    x = _data(dt)
    ys = range(-6, 10) if np.dtype(dt).kind in "fcV" else range(0, 10)
    xs = jnp.asarray(np.stack([x, x]).T)[:, 0]  # a strided view: the general loop
    for y in ys:
        want = _chain(x, y)
        _same(jnp.asarray(x) ** y, want)                # eager, contiguous
        _same(xs ** y, want)                            # eager, strided operand
        _same(pb.jit(lambda v: v ** y)(x), want)        # compiled
        _same(pb.lax.integer_pow(jnp.asarray(x), y), want)


def test_small_powers_equal_their_products():
    """x**2 is x*x, x**3 is x*(x*x), x**-2 is 1/(x*x), bit for bit (bf16 rounds each product,
    as its multiplications do)."""
    for dt in (np.float32, ml_dtypes.bfloat16, np.float16, np.int32):
        x = jnp.asarray(_data(dt)[3:])
        _same(x ** 2, x * x)
        _same(x ** 3, x * (x * x))
        _same(x ** 4, (x * x) * (x * x))
        if dt is not np.int32:
            _same(x ** -2, 1 / (x * x))


def test_x_squared_plus_y_compiles_to_one_fused_region():
    x, y = (RNG.standard_normal((64, 32)).astype(np.float32) for _ in range(2))
    f = lambda x, y: x ** 2 + y  # noqa: E731
    text = pb.jit(f).lower(x, y).compile().as_text()
    assert text.startswith("program <lambda>: 1 steps"), text
    assert "0: region[2 ops]" in text and "fused: integer_pow ; add" in text, text
    _same(pb.jit(f)(x, y), x * x + y)
    # as x * x does: the same program shape
    text_mul = pb.jit(lambda x, y: x * x + y).lower(x, y).compile().as_text()
    assert text_mul.startswith("program <lambda>: 1 steps") and "fused: mul ; add" in text_mul
