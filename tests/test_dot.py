"""dot_general: dimension numbers, layouts, every dtype, preferred_element_type, accumulation."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.backends.cpu import kernels
from pullback.primitives.conversion import convert_reference
from pullback.primitives.dot import _dot_general_ref
from pullback.tracer import dtypes

NUMERIC = [d for d in dtypes.SUPPORTED if d != dtypes.bool_]
INTS = [d for d in NUMERIC if dtypes.is_integer(d)]
HALVES = [dtypes.float16, dtypes.bfloat16] + list(dtypes.FLOAT8)
MM = (((1,), (0,)), ((), ()))


def scale_for(dtype) -> float:
    # small enough that sums of 300 products stay finite in float16 and float8
    return 0.5 if dtype in dtypes.FLOAT8 else 4.0 if dtype in HALVES else 50.0


def random_array(rng, shape, dtype, result=None):
    """Random values of ``dtype`` whose contraction stays finite in ``result`` (default dtype)."""
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100) + 1, shape).astype(dtype)
    scale = min(scale_for(dtype), scale_for(np.dtype(result or dtype)))
    x = rng.normal(size=shape) * scale
    if dtypes.is_complex(dtype):
        x = x + 1j * rng.normal(size=shape) * scale
    return convert_reference(x, dtype)


def dot(lhs, rhs, dn=MM, preferred=None):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)  # 0-d indexing gives NumPy scalars
    return np.asarray(lax.dot_general(pb.Array(lhs), pb.Array(rhs), dn,
                                      preferred_element_type=preferred))


def letters_for(dn, lnd, rnd):
    (lc, rc), (lb, rb) = dn
    ls = list("abcdefgh"[:lnd])
    rs = list("ijklmnop"[:rnd])
    for l, r in zip(lc + lb, rc + rb):
        rs[r] = ls[l]
    free_l = [ls[d] for d in range(lnd) if d not in lc + lb]
    free_r = [rs[d] for d in range(rnd) if d not in rc + rb]
    return "".join(ls), "".join(rs), "".join([ls[d] for d in lb] + free_l + free_r)


def independent(lhs, rhs, dn, out_dtype):
    """The contraction computed directly: wrapped integers for integer results, float64 or
    complex128 (with a bound on the rounding error) otherwise."""
    sl, sr, so = letters_for(dn, lhs.ndim, rhs.ndim)
    if dtypes.is_integer(out_dtype):
        # unsigned 64-bit arithmetic wraps modulo 2^64, which reduces exactly to any narrower
        # wrapped result
        with np.errstate(over="ignore"):
            u = np.einsum(f"{sl},{sr}->{so}", lhs.astype(np.uint64), rhs.astype(np.uint64))
        return np.asarray(u).astype(out_dtype), None
    wide = np.complex128 if any(d.kind == "c" for d in (lhs.dtype, rhs.dtype, out_dtype)) else np.float64
    a, b = lhs.astype(np.float64).astype(wide) if lhs.dtype.kind != "c" else lhs.astype(wide), \
        rhs.astype(np.float64).astype(wide) if rhs.dtype.kind != "c" else rhs.astype(wide)
    value = np.einsum(f"{sl},{sr}->{so}", a, b, optimize=False)
    bound = np.einsum(f"{sl},{sr}->{so}", np.abs(a), np.abs(b), optimize=False)
    return value, bound


def eps(dtype):
    d = np.dtype(dtype)
    if d.kind == "c":
        d = np.dtype(d.char.lower())
    return float(ml_dtypes.finfo(d).eps)


def check(got, lhs, rhs, dn, out_dtype):
    """got against the exact contraction: integers exactly; floats within one rounding of the
    result plus the accumulation error of its accumulator (float32 at least)."""
    out_dtype = np.dtype(out_dtype)
    want, bound = independent(lhs, rhs, dn, out_dtype)
    assert got.dtype == out_dtype and got.shape == want.shape
    if bound is None:
        np.testing.assert_array_equal(got, want)
        return
    # float32 accumulation (or better) for every result narrower than float64
    acc = eps(np.float32) if out_dtype.itemsize < 8 or out_dtype == dtypes.complex64 else eps(np.float64)
    k = max(1, int(np.prod([lhs.shape[d] for d in dn[0][0]])))
    g = got.astype(np.complex128 if out_dtype.kind == "c" else np.float64)
    real = np.dtype(out_dtype.char.lower()) if out_dtype.kind == "c" else out_dtype
    tiny = float(ml_dtypes.finfo(real).smallest_subnormal)  # rounding near zero is absolute
    tol = 2 * eps(out_dtype) * np.abs(want) + 2 * k * acc * bound + tiny
    assert np.all(np.abs(g - want) <= tol), np.max(np.abs(g - want) - tol)


# ---- random dimension numbers over every dtype ----

@st.composite
def contraction(draw):
    nbatch, ncontract = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    nlf, nrf = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    size = st.integers(0, 4)
    batch = [draw(size) for _ in range(nbatch)]
    contract = [draw(size) for _ in range(ncontract)]
    lfree = [draw(size) for _ in range(nlf)]
    rfree = [draw(size) for _ in range(nrf)]
    lperm = draw(st.permutations(range(nbatch + ncontract + nlf)))
    rperm = draw(st.permutations(range(nbatch + ncontract + nrf)))
    # logical axes: batch, contract, free -> positions given by the permutations
    lshape = [0] * len(lperm)
    for logical, size_ in enumerate(batch + contract + lfree):
        lshape[lperm[logical]] = size_
    rshape = [0] * len(rperm)
    for logical, size_ in enumerate(batch + contract + rfree):
        rshape[rperm[logical]] = size_
    lb = tuple(lperm[i] for i in range(nbatch))
    rb = tuple(rperm[i] for i in range(nbatch))
    lc = tuple(lperm[nbatch + i] for i in range(ncontract))
    rc = tuple(rperm[nbatch + i] for i in range(ncontract))
    return tuple(lshape), tuple(rshape), ((lc, rc), (lb, rb))


@given(case=contraction(), dtype=st.sampled_from(NUMERIC), seed=st.integers(0, 2**31),
       layout=st.sampled_from(["contiguous", "transposed", "strided", "flipped", "broadcast"]))
def test_random_dimension_numbers(case, dtype, seed, layout):
    lshape, rshape, dn = case
    rng = np.random.default_rng(seed)

    def lay(shape):
        if layout == "strided":
            x = random_array(rng, tuple(2 * s for s in shape), dtype)
            return x[tuple(slice(None, None, 2) for _ in shape)]
        if layout == "transposed":
            return random_array(rng, shape[::-1], dtype).T
        if layout == "flipped":
            return random_array(rng, shape, dtype)[tuple(slice(None, None, -1) for _ in shape)]
        if layout == "broadcast" and shape:
            return np.broadcast_to(random_array(rng, (1,) + shape[1:], dtype), shape)
        return random_array(rng, shape, dtype)

    lhs, rhs = np.asarray(lay(lshape)), np.asarray(lay(rshape))
    got = dot(lhs, rhs, dn)
    check(got, lhs, rhs, dn, dtype)
    want = _dot_general_ref(lhs, rhs, dimension_numbers=dn)
    assert want.dtype == got.dtype and want.shape == got.shape


@pytest.mark.parametrize("dtype", NUMERIC, ids=[str(d) for d in NUMERIC])
def test_blocked_sizes_every_dtype(dtype):
    # edges of the register tile (6 x 32), the row/column blocks and a K beyond one KC slice
    rng = np.random.default_rng(11)
    a = random_array(rng, (2, 127, 300), dtype)
    b = random_array(rng, (2, 300, 37), dtype)
    dn = (((2,), (1,)), ((0,), (0,)))
    check(dot(a, b, dn), a, b, dn, dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint64, np.float16, ml_dtypes.bfloat16])
def test_large_threaded_tiles(dtype):
    rng = np.random.default_rng(2)
    a = random_array(rng, (301, 530), np.dtype(dtype))
    b = random_array(rng, (530, 1100), np.dtype(dtype))
    check(dot(a, b), a, b, MM, dtype)
    check(dot(a[::-1].T.copy().T[::-1], b[:, ::-1]), a, b[:, ::-1], MM, dtype)


def test_size_zero_dimensions():
    for dtype in (np.float32, np.int8, np.float16, np.complex128):
        z = dot(np.ones((3, 0), dtype), np.ones((0, 4), dtype))
        assert z.shape == (3, 4) and z.dtype == dtype and not z.any()
        assert dot(np.ones((0, 5), dtype), np.ones((5, 4), dtype)).shape == (0, 4)
        assert dot(np.ones((3, 5), dtype), np.ones((5, 0), dtype)).shape == (3, 0)
    s = dot(np.ones(4, np.int16), np.arange(4, dtype=np.int16), (((0,), (0,)), ((), ())))
    assert s.shape == () and int(s) == 6


# ---- preferred_element_type and accumulation ----

PREFERRED = [
    (np.int8, np.int32), (np.int8, np.int16), (np.int32, np.int64), (np.uint8, np.uint32),
    (np.int16, np.uint64), (np.int8, np.float32), (np.uint16, np.float64), (np.float16, np.float32),
    (ml_dtypes.bfloat16, np.float32), (np.float16, np.float16), (np.float16, ml_dtypes.bfloat16),
    (np.float16, np.float64), (np.float32, np.float64), (np.float32, np.float16),
    (np.float32, np.complex64), (np.complex64, np.complex128), (ml_dtypes.float8_e4m3fn, np.float32),
    (ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2), (ml_dtypes.float8_e4m3fn, np.float16),
    (np.float64, np.float32), (ml_dtypes.float8_e4m3fnuz, ml_dtypes.bfloat16),
]


@pytest.mark.parametrize("src,pref", PREFERRED, ids=[f"{np.dtype(a)}->{np.dtype(b)}" for a, b in PREFERRED])
def test_preferred_element_type(src, pref):
    rng = np.random.default_rng(4)
    a = random_array(rng, (9, 70), np.dtype(src), pref)
    b = random_array(rng, (70, 11), np.dtype(src), pref)
    got = dot(a, b, preferred=pref)
    check(got, a, b, MM, pref)
    want = _dot_general_ref(a, b, dimension_numbers=MM, preferred_element_type=np.dtype(pref))
    assert want.dtype == np.dtype(pref)


def test_int8_products_accumulate_in_int32():
    a = np.full((2, 1000), 127, np.int8)
    b = np.full((1000, 3), -128, np.int8)
    assert (dot(a, b, preferred=np.int32) == -127 * 128 * 1000).all()
    assert (dot(a, b) == np.array(-127 * 128 * 1000).astype(np.int8)).all()  # wraps like int8
    big = np.full((1, 3), 2**31 - 1, np.int32)
    assert dot(big, np.ones((3, 1), np.int32), preferred=np.int64)[0, 0] == 3 * (2**31 - 1)
    assert dot(big, np.ones((3, 1), np.int32))[0, 0] == np.int32(np.int64(3 * (2**31 - 1)) - 2**32)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_inputs_accumulate_in_float32(dtype):
    # in a half-precision accumulator the running sum of ones would stop growing at 2048 / 256
    ones_a, ones_b = np.ones((1, 4096), dtype), np.ones((4096, 1), dtype)
    assert float(dot(ones_a, ones_b)[0, 0]) == 4096.0
    assert dot(ones_a, ones_b).dtype == np.dtype(dtype)
    # many tiny terms next to a large one: lost one by one in float16, kept in float32
    a = np.array([[2048.0] + [0.25] * 4000], dtype)
    got = float(dot(a, np.ones((4001, 1), dtype), preferred=np.float32)[0, 0])
    assert got == 2048.0 + 1000.0


def test_mixed_operand_dtypes_follow_jax():
    rng = np.random.default_rng(6)
    for lt, rt, want in [(np.int8, np.float32, np.float32), (np.int8, np.uint8, np.int8),
                         (np.float16, ml_dtypes.bfloat16, ml_dtypes.bfloat16),
                         (np.float32, np.complex64, np.complex64), (np.uint32, np.int64, np.int64),
                         (ml_dtypes.float8_e4m3fn, np.float16, np.float16)]:
        a = random_array(rng, (5, 6), np.dtype(lt))
        b = random_array(rng, (6, 4), np.dtype(rt))
        got = dot(a, b)
        assert got.dtype == np.dtype(want)
        check(got, a, b, MM, want)


def test_weak_types():
    w = pb.Array(np.ones((2, 2), np.float32), weak_type=True)
    s = pb.Array(np.ones((2, 2), np.float32))
    assert lax.dot_general(w, w, MM).weak_type
    assert not lax.dot_general(w, s, MM).weak_type
    assert not lax.dot_general(w, w, MM, preferred_element_type=np.float32).weak_type


# ---- jit, the reference backend, the jaxpr ----

def test_jit_matches_eager():
    rng = np.random.default_rng(8)
    a, b = random_array(rng, (4, 5, 6), np.dtype(np.int8)), random_array(rng, (4, 6, 3), np.dtype(np.int8))
    dn = (((2,), (1,)), ((0,), (0,)))

    def f(a, b):
        return lax.dot_general(a, b, dn, preferred_element_type=np.int32)

    np.testing.assert_array_equal(np.asarray(pb.jit(f)(pb.Array(a), pb.Array(b))),
                                  np.asarray(f(pb.Array(a), pb.Array(b))))
    assert "preferred_element_type=int32" in str(pb.make_jaxpr(f)(pb.Array(a), pb.Array(b)))


def test_reference_backend_matches_cpu():
    rng = np.random.default_rng(9)
    cases = [(np.float32, None), (np.int8, np.int32), (np.float16, None), (np.complex64, np.complex128),
             (ml_dtypes.float8_e5m2, np.float32)]
    arrays = [(random_array(rng, (7, 20), np.dtype(d)), random_array(rng, (20, 5), np.dtype(d)), p)
              for d, p in cases]
    cpu = [dot(a, b, preferred=p) for a, b, p in arrays]
    pb.config.update("backend", "reference")
    try:
        ref = [dot(a, b, preferred=p) for a, b, p in arrays]
    finally:
        pb.config.update("backend", "cpu")
    for (a, b, p), c, r in zip(arrays, cpu, ref):
        assert c.dtype == r.dtype
        check(c, a, b, MM, c.dtype)
        check(r, a, b, MM, r.dtype)


# ---- errors ----

def test_errors_name_the_op_and_argument():
    f, i = np.ones((2, 3), np.float32), np.ones((2, 3), np.int32)
    with pytest.raises(TypeError, match="dot_general: argument 'lhs' must be a numeric array, got bool"):
        dot(np.ones((2, 3), bool), np.ones((3, 2), bool))
    with pytest.raises(TypeError, match="dot_general: argument 'rhs'.*bool"):
        dot(f, np.ones((3, 2), bool))
    with pytest.raises(TypeError, match="'preferred_element_type'.*at least as wide as int32"):
        dot(i, i.T, preferred=np.int8)
    with pytest.raises(TypeError, match="'preferred_element_type' must be a floating or complex"):
        dot(f, f.T, preferred=np.int32)
    with pytest.raises(TypeError, match="'preferred_element_type' must be a complex"):
        dot(f.astype(np.complex64), f.T.astype(np.complex64), preferred=np.float32)
    with pytest.raises(TypeError, match="'preferred_element_type' must be a floating.*got bool"):
        dot(f, f.T, preferred=np.bool_)
    with pytest.raises(TypeError, match="'preferred_element_type' must be a supported dtype"):
        dot(f, f.T, preferred="U3")
    with pytest.raises(TypeError, match="dot_general: contracting dimensions must have equal sizes"):
        dot(f, f)
    with pytest.raises(ValueError, match="dot_general: the lhs contracting and batch dimensions"):
        dot(f, f.T, (((5,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="'dimension_numbers'"):
        lax.dot_general(pb.Array(f), pb.Array(f.T), ((1,), (0,)))


def test_matmul_kernel_validates_its_arguments():
    a = np.ones((1, 2, 3), np.float32)
    with pytest.raises(TypeError, match="matmul: argument 'a'"):
        kernels.matmul([1.0], a)
    with pytest.raises(ValueError, match="matmul: arguments 'a' and 'b' must be 3-D"):
        kernels.matmul(a[0], a[0].T)
    with pytest.raises(ValueError, match="matmul: shapes .* do not fit"):
        kernels.matmul(a, a)
    with pytest.raises(TypeError, match="matmul: argument 'dtype'"):
        kernels.matmul(a, a.transpose(0, 2, 1), "float32")
    with pytest.raises(TypeError, match="matmul: no kernel for float32 @ float32 -> float64"):
        kernels.matmul(a, a.transpose(0, 2, 1), np.dtype(np.float64))
    with pytest.raises(TypeError, match="matmul: no kernel for bool"):
        kernels.matmul(a.astype(bool), a.transpose(0, 2, 1).astype(bool))
    with pytest.raises(TypeError, match="matmul: expected"):
        kernels.matmul(a)
    info = kernels.blas_info()
    assert info["threads"] >= 1 and "blas" in info["library"].lower()


def _ulps(got, want):
    got = np.asarray(got).astype(np.float64)
    return float(np.max(np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32))))


@pytest.mark.parametrize("k", [10**5, 10**6])
def test_long_float32_dots_sum_pairwise(k):
    # uniform [0, 1) products against a float64 dot: a running float32 sum is 102 ulps off at
    # 10^5 and 1914 at 10^6; JAX 0.10 (XLA's blocked sums) 0.75 and 0.60
    rng = np.random.default_rng(7)
    a, b = rng.random(k, dtype=np.float32), rng.random(k, dtype=np.float32)
    want = np.dot(a.astype(np.float64), b.astype(np.float64))
    A, B = pb.Array(a), pb.Array(b)
    for f in (jnp.dot, jnp.vdot, jnp.inner, lambda x, y: x @ y, jnp.matmul):
        assert _ulps(f(A, B), want) <= 2
        assert _ulps(pb.jit(f)(A, B), want) <= 2
    # strided operands take the same sums
    s = pb.Array(np.repeat(a, 2)[::2])
    assert _ulps(jnp.dot(s, B), want) <= 2


def test_long_float32_matrix_vector_products_sum_pairwise():
    k = 5 * 10**5
    rng = np.random.default_rng(7)
    v = rng.random(k, dtype=np.float32)
    w = rng.random((k, 4), dtype=np.float32)
    m = rng.random((4, k), dtype=np.float32)
    # JAX 0.10 on these: m @ v 26.2 ulps, a 10^5-long m @ w 2.4 (running sums: 881 and ~200);
    # its v @ w is a running sum (686 ulps), which pullback's pairwise halves avoid
    for x, y, bound in ((m, v, 26), (m[:, :10**5], w[:10**5], 2.5), (v, w, 3)):
        want = x.astype(np.float64) @ y.astype(np.float64)
        X, Y = pb.Array(x), pb.Array(y)
        assert _ulps(X @ Y, want) <= bound
        assert _ulps(pb.jit(jnp.matmul)(X, Y), want) <= bound
    bm = rng.random((3, 2, 10**5), dtype=np.float32)
    bw = rng.random((3, 10**5, 2), dtype=np.float32)
    want = bm.astype(np.float64) @ bw.astype(np.float64)
    assert _ulps(jnp.matmul(pb.Array(bm), pb.Array(bw)), want) <= 1.7  # JAX: 1.67
