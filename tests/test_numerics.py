"""Numerical edge cases that used to be silently wrong: 16-bit means and variances, division by
zero in floating floor division, complex-to-bool casts, ddof past the count, logsumexp with
signed or zero ``b`` and empty or masked softmax, all-NaN nanargmax, hypot/heaviside with NaN
and inf. Expected values are JAX 0.10's (NumPy's where stated), eager and under jit."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import pullback as pb
import pullback.nn as nn
import pullback.numpy as jnp
from pullback import lax

nan, inf = np.nan, np.inf
HALVES = [np.float16, ml_dtypes.bfloat16]
FLOATS = HALVES + [np.float32]

# JAX's values were recorded in its default (32-bit) mode
pytestmark = pytest.mark.x32


def both(f, *args):
    """f(*args) eagerly and under jit, as NumPy values (asserted equal to each other)."""
    eager = pb.tree_util.tree_map(np.asarray, f(*args))
    jitted = pb.tree_util.tree_map(np.asarray, pb.jit(f)(*args))
    pb.tree_util.tree_map(lambda a, b: np.testing.assert_array_equal(_f64(a), _f64(b)), eager,
                          jitted)
    return eager


def _f64(a):
    # NumPy's testing does not treat a bfloat16 NaN as equal to itself
    return a if a.dtype == bool or a.dtype.kind in "iuc" else a.astype(np.float64)


def check(got, want, dtype=None):
    got = np.asarray(got)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(_f64(got), _f64(np.asarray(want)))


# ---- 1. float16/bfloat16 mean, var, std: float32 sums and counts ----

@pytest.mark.parametrize("dt", HALVES, ids=str)
def test_half_mean_counts_in_float32(dt):
    # JAX: 1.0 and 0.5 (a float16 count of 100000 is inf, and a float16 running sum of 0.5s
    # would stop growing at 1024)
    check(both(jnp.mean, np.ones(100000, dt)), 1.0, dt)
    check(both(jnp.mean, np.full(70000, .5, dt)), 0.5, dt)
    check(both(lambda x: jnp.mean(x, axis=1), np.full((2, 70000), .5, dt)), [.5, .5], dt)
    mask = np.arange(100000) < 99999
    check(both(lambda x, m: jnp.mean(x, where=m), np.ones(100000, dt), mask), 1.0, dt)


def test_half_var_std_compute_in_float32():
    x = np.arange(300).astype(np.float16)
    # JAX: var 7500 over the even elements, std of the bfloat16 arange 86.5
    check(both(lambda x: jnp.var(x, where=np.arange(300) % 2 == 0), x), 7500.0, np.float16)
    check(both(jnp.std, np.arange(300).astype(ml_dtypes.bfloat16)), 86.5, ml_dtypes.bfloat16)
    # 70000 equal values: the float32 mean is exact, so the variance is exactly 0
    check(both(jnp.var, np.full(70000, .5, np.float16)), 0.0, np.float16)
    check(both(jnp.nanstd, np.array([1, 2, nan, 4], np.float16)), 1.2470703125, np.float16)
    g = pb.grad(lambda a: jnp.var(a).astype(jnp.float32))(jnp.asarray(np.array([1, 2, 4], np.float16)))
    check(g, [-0.888671875, -0.22216796875, 1.111328125], np.float16)


def test_explicit_dtype_computes_in_it():
    # JAX: an explicit float16 dtype computes in float16, so a count of 100000 overflows
    check(jnp.mean(np.ones(100000, np.int32), dtype=np.float16), nan, np.float16)
    assert jnp.mean(jnp.asarray([1, 2])).dtype == np.float32


@pytest.mark.parametrize("dt", HALVES, ids=str)
def test_half_nanmean_and_average(dt):
    # NumPy's values (JAX rounds the count or the summed weights to 16 bits first and gets 0)
    x = np.full(70000, .5, dt)
    x[::7] = nan
    check(both(jnp.nanmean, x), 0.5, dt)
    y = np.full(70000, .5, dt)
    check(both(jnp.average, y), 0.5, dt)
    avg, wsum = jnp.average(y, weights=np.ones(70000, dt), returned=True)
    check(avg, 0.5, dt)
    check(wsum, inf if dt == np.float16 else 70144.0, dt)  # 70000 rounded to 16 bits


# ---- 4. ddof at or past the count: NaN ----

def test_var_ddof_past_count_is_nan():
    a = jnp.asarray([3., 4.])
    for f in (jnp.var, jnp.std):
        check(both(lambda a: f(a, ddof=5), a), nan)
        check(both(lambda a: f(a, ddof=2), a), nan)
    check(jnp.var(jnp.asarray([3, 4]), ddof=3), nan, np.float32)
    check(jnp.var(jnp.asarray([3j, 4]), ddof=3), nan, np.float32)
    check(jnp.var(jnp.asarray([1., 2, 3]), correction=3), nan)
    check(jnp.var(jnp.asarray([1., 2, 3]), ddof=1.5), np.float32(4 / 3))
    m = jnp.asarray([True, True, False])
    check(both(lambda a: jnp.var(a, ddof=2, where=m), jnp.asarray([3., 4., 5.])), nan)
    check(both(lambda a: jnp.std(a, axis=1, ddof=2), jnp.asarray([[3., 4.], [1, 2]])), [nan, nan])
    x = jnp.asarray([[3., nan, 4], [1, 2, 3]])
    check(both(lambda a: jnp.nanvar(a, axis=1, ddof=2), x), [nan, 2.0])
    check(jnp.nanvar(jnp.asarray([1j, 2, nan])), 1.25, np.float32)


# ---- 2. floating floor division and divmod by ±0 ----

@pytest.mark.parametrize("dt", FLOATS + [pytest.param(np.float64, marks=pytest.mark.x64)],
                         ids=str)
def test_floor_divide_by_zero_is_signed_inf(dt):
    x = jnp.asarray(np.array([1., -1., 0., inf, -inf, 5.], dt))
    y = jnp.asarray(np.array([0., 0., 0., 0., 0., -0.], dt))
    q, r = both(jnp.divmod, x, y)
    check(q, [inf, -inf, nan, inf, -inf, -inf], dt)
    check(r, [nan] * 6, dt)  # NumPy and JAX: the remainder by zero is NaN
    check(both(jnp.floor_divide, x, y), q, dt)
    check(both(lambda a, b: a // b, x, y), q, dt)
    check(both(jnp.remainder, x, y), r, dt)
    check(both(lambda a, b: a % b, x, y), r, dt)
    # nothing changes away from zero divisors
    q2, r2 = both(jnp.divmod, jnp.asarray(np.array([7.5, -7.5, 1, -1], dt)),
                  jnp.asarray(np.array([2, 2, inf, inf], dt)))
    check(q2, [3, -4, 0, -1], dt)
    check(r2, [1.5, .5, 1, inf], dt)


# ---- 3. complex -> bool ----

def test_complex_astype_bool_tests_the_whole_value():
    c = jnp.asarray(np.array([1j, 0j, 1 + 0j, nan * 1j], np.complex64))
    want = [True, False, True, True]
    check(both(lambda c: c.astype(bool), c), want, bool)
    check(both(lambda c: jnp.astype(c, jnp.bool_), c), want, bool)
    check(jnp.astype(jnp.asarray(np.array([1j, 0], np.complex128)), bool), [True, False], bool)
    check(jnp.asarray(np.array([1j, 0]), dtype=bool), [True, False], bool)
    check(jnp.asarray([1j, 0], dtype=bool), [True, False], bool)
    # JAX's lax.convert_element_type (and jnp.asarray of an Array) keeps only the real part
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        check(lax.convert_element_type(c, bool), [False, False, True, True], bool)
    assert jnp.asarray([1, 2]).astype(None).dtype == np.float32


# ---- 5. logsumexp, softmax, log_softmax ----

X = jnp.asarray([[1., 2., -inf], [0., inf, 3.]])
B = jnp.asarray([[1., -2., 1.], [0., 0., 1.]])
W = jnp.asarray([[True, False, True], [False, False, False]])


def test_logsumexp_signed_and_zero_b():
    check(both(lambda x, b: nn.logsumexp(x, axis=1, b=b), X, B), [nan, 3.0])
    out, sign = both(lambda x, b: nn.logsumexp(x, axis=1, b=b, return_sign=True), X, B)
    np.testing.assert_allclose(out, [2.4898801, 3.0], rtol=1e-6)
    check(sign, [-1.0, 1.0])
    kd = nn.logsumexp(X, axis=1, b=B, keepdims=True)
    assert kd.shape == (2, 1)
    check(nn.logsumexp(jnp.asarray([1., 2.]), b=jnp.asarray([1., -2.])), nan)
    # b == 0 drops the element even where a is inf (JAX: log(e**1) = 1)
    check(nn.logsumexp(jnp.asarray([1., inf]), b=jnp.asarray([1., 0.])), 1.0)
    g = pb.grad(lambda x: nn.logsumexp(x, b=jnp.asarray([1., 2., 0.])))(jnp.asarray([1., 2., 3.]))
    np.testing.assert_allclose(np.asarray(g), [0.15536241, 0.84463763, 0.0], rtol=1e-6)


def test_logsumexp_empty_and_masked():
    check(both(nn.logsumexp, jnp.zeros(0)), -inf)
    out, sign = nn.logsumexp(jnp.zeros((2, 0)), axis=1, return_sign=True)
    check(out, [-inf, -inf])
    check(sign, [0.0, 0.0])
    check(both(lambda x, w: nn.logsumexp(x, axis=1, where=w), X, W), [1.0, -inf])
    out, sign = nn.logsumexp(X, axis=1, where=W, b=B, return_sign=True)
    check(out, [1.0, -inf])
    check(sign, [1.0, 0.0])
    check(nn.logsumexp(X, axis=0), np.float32([1.3132616, inf, 3.0]))
    np.testing.assert_allclose(complex(nn.logsumexp(jnp.asarray([1 + 1j, 2 - 1j]))),
                               1.906323790550232 - 0.623828649520874j, rtol=1e-6)
    check(nn.logsumexp(jnp.asarray([1, 2])), np.float32(2.3132615), np.float32)


def test_softmax_empty_and_masked():
    assert both(nn.softmax, jnp.zeros((2, 0))).shape == (2, 0)
    assert nn.log_softmax(jnp.zeros((2, 0))).shape == (2, 0)
    assert nn.softmax(jnp.zeros((0, 3)), axis=0).shape == (0, 3)
    check(both(lambda x, w: nn.softmax(x, where=w), X, W), [[1, 0, 0], [0, 0, 0]])
    check(both(lambda x, w: nn.log_softmax(x, where=w), X, W),
          [[0, -inf, -inf], [-inf, -inf, -inf]])
    none = jnp.asarray([False, False])
    check(nn.softmax(jnp.asarray([1., 2.]), where=none), [0, 0])
    check(nn.log_softmax(jnp.asarray([1., 2.]), where=none), [-inf, -inf])
    m = jnp.asarray([True, False, True])
    np.testing.assert_allclose(np.asarray(nn.log_softmax(jnp.asarray([1., 2., 3.]), where=m)),
                               [-2.126928, -inf, -0.12692805], rtol=1e-6)
    g = pb.grad(lambda x: nn.log_softmax(x, where=m)[0])(jnp.asarray([1., 2., 3.]))
    np.testing.assert_allclose(np.asarray(g), [0.8807971, 0.0, -0.880797], rtol=1e-6)
    g = pb.grad(lambda x: nn.softmax(x, where=m)[0])(jnp.asarray([1., 2., 3.]))
    np.testing.assert_allclose(np.asarray(g), [0.10499357, 0.0, -0.10499357], rtol=1e-6)


# ---- 6. nanargmax/nanargmin of all-NaN slices: -1 ----

@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_nanarg_all_nan_is_minus_one(dt):
    a = jnp.asarray(np.array([[nan, nan], [1., 2.]], dt))
    check(both(lambda a: jnp.nanargmax(a, axis=1), a), [-1, 1], np.int32)
    check(both(lambda a: jnp.nanargmin(a, axis=1), a), [-1, 0], np.int32)
    check(jnp.nanargmax(jnp.asarray([nan, nan])), -1, np.int32)
    check(jnp.nanargmax(jnp.asarray([[nan, nan], [1, nan]]), axis=1, keepdims=True), [[-1], [0]])
    check(both(lambda a: jnp.nanargmax(a, axis=0), jnp.asarray([[nan, 1.], [nan, nan]])), [-1, 0])
    check(jnp.nanargmin(jnp.asarray([3, 1, 2])), 1, np.int32)


# ---- 7. hypot and heaviside with NaN and inf ----

@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_hypot_inf_beats_nan(dt):
    x = jnp.asarray(np.array([inf, nan, -inf, 0., 3., nan], dt))
    y = jnp.asarray(np.array([nan, -inf, nan, 0., 4., 1.], dt))
    check(both(jnp.hypot, x, y), [inf, inf, inf, 0., 5., nan], dt)
    check(jnp.hypot(jnp.float32(3e38), jnp.float32(3e38)), inf)
    with pytest.raises(ValueError, match="hypot"):
        jnp.hypot(jnp.asarray([1j]), jnp.asarray([1j]))


def test_heaviside_nan_propagates():
    x = jnp.asarray([nan, 0., -1., 1.])
    check(both(lambda x: jnp.heaviside(x, .5), x), [nan, .5, 0., 1.])
    check(jnp.heaviside(jnp.asarray([[nan], [0.]]), jnp.asarray([.5, .25])),
          [[nan, nan], [.5, .25]])
    check(jnp.heaviside(jnp.asarray([0, -1, 2]), 1), [1., 0., 1.], np.float32)


# ---- 9. reductions over broadcast data do not walk it; impossible shapes raise ----

def test_reduce_of_broadcast_is_not_walked():
    # 2**40 elements would take minutes to walk: each of these returns at once
    check(both(lambda: jnp.zeros((2**40,)).sum()), 0.0, np.float32)
    # XLA folds a reduce of a broadcast the same way: the exact count, not a rounded walk
    check(both(lambda: jnp.ones((2**40,)).sum()), 2.0**40, np.float32)
    check(both(lambda x: jnp.broadcast_to(x, (2**31, 2**29)).sum(), jnp.float32(1)), 2.0**60)
    check(both(lambda x: jnp.broadcast_to(x, (2**31, 2**29)).max(), jnp.float32(3)), 3.0)
    check(both(lambda x: jnp.broadcast_to(x, (2**31, 2**29)).mean(), jnp.float32(.5)), 0.5)
    # 2**64 bytes of float32 cannot be an array at all: a clear error, not a hang (JAX aborts)
    f = pb.jit(lambda x: jnp.broadcast_to(x, (2**31, 2**31)).sum())
    with pytest.raises(ValueError, match="broadcast_in_dim: the result has shape "
                                         r"\(2147483648, 2147483648\), too large"):
        f(jnp.float32(1))
    check(jnp.any(jnp.zeros((2**40,), bool)), False)
    row = jnp.arange(4.0)
    got = both(lambda r: jnp.broadcast_to(r, (2**31, 2**20, 4)).sum((0, 1)), row)
    check(got, np.arange(4.0) * 2.0**51)
    got = both(lambda r: jnp.broadcast_to(r[:, None], (4, 2**40)).max(axis=1), row)
    check(got, np.arange(4.0))
    got = both(lambda r: jnp.broadcast_to(r, (2**30, 2**10, 4)).min(axis=0), row)
    assert got.shape == (2**10, 4)
    check(got, np.broadcast_to(np.arange(4.0), (2**10, 4)))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("dt", [np.int8, np.uint32, pytest.param(np.int64, marks=pytest.mark.x64),
                                np.float16, ml_dtypes.bfloat16, np.float32, np.complex64],
                         ids=str)
def test_reduce_of_broadcast_matches_the_walk(name, dt):
    # partly broadcast operands: the folded result equals NumPy's walk over the materialized
    # array in the same dtype (integers wrap alike: 3**7 overflows int8)
    if name in ("max", "min") and dt == np.complex64:
        return
    base = np.array([[3], [1], [2]]).astype(dt)
    x = np.ascontiguousarray(np.broadcast_to(base, (3, 7)))
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[name]
    for axes in [(0, 1), (0,), (1,)]:
        want = ufunc.reduce(x.astype(np.float32) if dt in HALVES else x, axis=axes, dtype=None)
        got = both(lambda a: getattr(lax, "reduce_" + name)(jnp.broadcast_to(a, (3, 7)), axes),
                   jnp.asarray(base))
        assert got.dtype == np.dtype(dt)
        np.testing.assert_array_equal(_f64(got), _f64(want.astype(dt)))


def test_bool_and_bitwise_reductions_of_broadcasts():
    b = jnp.broadcast_to(jnp.asarray([[True], [False]]), (2, 5))
    check(both(lambda b: jnp.all(b, axis=1), b), [True, False])
    check(both(lambda b: jnp.any(b, axis=0), b), [True] * 5)
    x = jnp.broadcast_to(jnp.asarray(np.array([[5], [6]], np.int32)), (2, 3))
    check(lax.reduce_xor(x, (1,)), [5, 6])  # an odd count keeps the value
    check(lax.reduce_xor(jnp.broadcast_to(jnp.asarray(np.int32(5)), (4,)), (0,)), 0)
    check(lax.reduce_or(x, (0,)), [7, 7, 7])


def test_impossible_shapes_raise_naming_the_shape():
    with pytest.raises(ValueError, match=r"full: .*\(4611686018427387904, 4611686018427387904\)"
                                         ".*too large"):
        jnp.zeros((2**62, 2**62))
    with pytest.raises(ValueError, match="too large"):
        jnp.zeros((2**64,))
    with pytest.raises(ValueError, match=r"\(1099511627776, 1099511627776\).*too large"):
        jnp.ones((2**40, 1)) + jnp.ones((1, 2**40))


@pytest.mark.eager_only
def test_unaddressable_view_raises_naming_shape_and_bytes():
    # an eager broadcast is a NumPy view, whose byte size is an npy_intp (JAX aborts here)
    with pytest.raises(ValueError, match=r"\(2147483648, 2147483648\).*bytes"):
        jnp.broadcast_to(jnp.float32(1), (2**31, 2**31))
