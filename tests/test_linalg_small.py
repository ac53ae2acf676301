"""The small-matrix kernels of csrc/linalg_small.h (real n <= 16: cholesky, triangular_solve, lu,
inv) and the inv primitive: against NumPy over n = 1..17 (each vector size class and the
LAPACK fallback past 16), batched, non-contiguous, singular and not positive definite."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback.lax import linalg as lax_linalg
from pullback.primitives import linalg as pl
from pullback.test_util import check_grads, check_vmap, reference_backend

REAL = [np.float32, np.float64]
NS = list(range(1, 18))  # 4, 8, 16 are class boundaries (f64: 4/8/16, f32: 8/16); 17 is LAPACK


def _tol(dt):
    return dict(rtol=2e-4, atol=2e-5) if dt == np.float32 else dict(rtol=1e-11, atol=1e-12)


def _layouts(x):
    """x contiguous, transposed in memory and strided (every other element)."""
    t = np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    big[..., ::2] = x
    return [x, t, big[..., ::2]]


def _spd(rng, batch, n, dt):
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dt)


@pytest.mark.parametrize("dt", REAL)
@pytest.mark.parametrize("n", NS)
def test_cholesky_small(n, dt):
    rng = np.random.default_rng(n)
    s = _spd(rng, (5,), n, dt)
    s[2, -1, -1] = -1.0  # the last pivot fails: that matrix is all NaN, the others are not
    # garbage in the upper triangle is never read
    junk = s + np.triu(rng.standard_normal((n, n)), 1).astype(dt)
    want = np.linalg.cholesky(np.delete(s, 2, axis=0).astype(np.float64))
    for x in _layouts(junk):
        got = np.asarray(lax_linalg.cholesky(x, symmetrize_input=False))
        assert got.dtype == dt
        assert np.isnan(got[2]).all()
        np.testing.assert_allclose(np.delete(got, 2, axis=0), want, **_tol(dt))
        assert (np.triu(np.delete(got, 2, axis=0), 1) == 0).all()
    nan = s[:1].copy()
    nan[0, 0, 0] = np.nan
    if n <= 16:  # potf2's test catches a NaN pivot (OpenBLAS's potrf, past 16, need not)
        assert np.isnan(np.asarray(lax_linalg.cholesky(nan))).all()


FLAGS = list(itertools.product([False, True], repeat=4))  # left, lower, transpose, unit


@pytest.mark.parametrize("dt", REAL)
@pytest.mark.parametrize("k", [1, 3, 4, 5, 8, 9, 16, 17])
def test_triangular_solve_small(k, dt):
    rng = np.random.default_rng(k)
    a = (rng.standard_normal((2, k, k)) + 3 * k * np.eye(k)).astype(dt)
    for (left, lower, trans, unit), w in itertools.product(FLAGS, [1, 5, 17]):
        b = rng.standard_normal((2, k, w) if left else (2, w, k)).astype(dt)
        want = pl._triangular_solve_reference(
            a.astype(np.float64), b.astype(np.float64), left_side=left, lower=lower,
            transpose_a=trans, conjugate_a=False, unit_diagonal=unit)
        for aa, bb in zip(_layouts(a), _layouts(b)[::-1]):
            got = np.asarray(lax_linalg.triangular_solve(
                aa, bb, left_side=left, lower=lower, transpose_a=trans, unit_diagonal=unit))
            assert got.dtype == dt and got.shape == b.shape
            np.testing.assert_allclose(got, want, rtol=_tol(dt)["rtol"] * 10,
                                       atol=_tol(dt)["atol"] * 10,
                                       err_msg=str((left, lower, trans, unit, w)))


@pytest.mark.parametrize("dt", REAL)
@pytest.mark.parametrize("mn", [(n, n) for n in NS] + [(3, 7), (7, 3), (16, 9), (9, 16),
                                                       (17, 5), (1, 16)])
def test_lu_small_pivots_as_getf2(mn, dt):
    m, n = mn
    rng = np.random.default_rng(m * 31 + n)
    a = rng.standard_normal((3, m, n)).astype(dt)
    a[1, :, 0] = 0  # a zero column: singular, no multipliers in that column
    if min(m, n) > 2:
        a[2, :, 2] = a[2, :, 1]  # dependent columns: a (near-)zero pivot later on
    want_lu, want_piv, want_perm = pl._lu_reference(a.astype(np.float64))
    for x in _layouts(a):
        lu, piv, perm = (np.asarray(t) for t in lax_linalg.lu(x))
        assert lu.dtype == dt and piv.dtype == np.int32 and perm.dtype == np.int32
        # pivots are the first largest |a| of the updated column, as getrf picks them
        np.testing.assert_array_equal(piv[:2], want_piv[:2])
        np.testing.assert_array_equal(perm[:2], want_perm[:2])
        np.testing.assert_allclose(lu[:2], want_lu[:2], **_tol(dt))
        k = min(m, n)
        for i in range(3):  # reconstruction a[perm] = L U, every matrix
            L = np.tril(lu[i][:, :k], -1) + np.eye(m, k)
            U = np.triu(lu[i][:k])
            np.testing.assert_allclose(L @ U, a[i][perm[i]], rtol=1e-3 if dt == np.float32
                                       else 1e-10, atol=1e-4 if dt == np.float32 else 1e-12)


@pytest.mark.parametrize("dt", REAL)
def test_lu_small_pivots_equal_getrf_on_near_ties(dt):
    """Small integer matrices tie pivot candidates up to rounding, where getrf's own update order
    could pick another row: the kernel hands those to getrf, so the pivots are getrf's."""
    sl = pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(7)
    for n in (4, 7, 8, 12, 16):
        a = rng.integers(-3, 4, (150, n, n)).astype(dt)
        piv = np.asarray(lax_linalg.lu(a)[1])
        lapack = sl.get_lapack_funcs("getrf", dtype=dt)
        want = np.stack([lapack(x)[1] for x in a])
        np.testing.assert_array_equal(piv, want)


def test_lu_small_first_max_on_ties():
    # equal |a| in a column: the first one is the pivot (getrf's i?amax)
    a = np.array([[1.0, 2.0, 0.0], [-3.0, 1.0, 1.0], [3.0, 0.0, 2.0]])
    for dt in REAL:
        piv = np.asarray(lax_linalg.lu(a.astype(dt))[1])
        np.testing.assert_array_equal(piv, pl._lu_reference(a)[1])
        assert piv[0] == 1


@pytest.mark.parametrize("dt", REAL)
@pytest.mark.parametrize("n", NS + [40])
def test_inv_matches_numpy(n, dt):
    rng = np.random.default_rng(n)
    a = (rng.standard_normal((4, n, n)) + 2 * np.eye(n)).astype(dt)
    want = np.linalg.inv(a.astype(np.float64))
    cond = np.linalg.cond(a.astype(np.float64))
    for x in _layouts(a):
        got = np.asarray(jnp.linalg.inv(x))
        assert got.dtype == dt and got.shape == a.shape
        err = np.abs(got - want).max(axis=(-1, -2)) / np.abs(want).max(axis=(-1, -2))
        assert (err < cond * np.finfo(dt).eps * 4 * n).all(), err


@pytest.mark.parametrize("dt", REAL + [np.complex64, np.complex128])
@pytest.mark.parametrize("n", [3, 16, 17, 64])
def test_inv_of_a_singular_matrix_is_not_finite(n, dt):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, n, n)).astype(dt)
    a[0, :, 1] = 0  # exactly singular
    got = np.asarray(jnp.linalg.inv(a))
    assert not np.isfinite(got[0]).all()
    np.testing.assert_allclose(got[1], np.linalg.inv(a[1].astype(np.complex128)),
                               rtol=1e-2 if dt in (np.float32, np.complex64) else 1e-8,
                               atol=1e-3 if dt in (np.float32, np.complex64) else 1e-9)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_inv_complex(dt):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((3, 5, 5)) + 1j * rng.standard_normal((3, 5, 5))).astype(dt)
    tol = dict(rtol=1e-3, atol=1e-4) if dt == np.complex64 else dict(rtol=1e-10, atol=1e-11)
    for x in _layouts(a):
        np.testing.assert_allclose(np.asarray(jnp.linalg.inv(x)), np.linalg.inv(a), **tol)


def test_inv_kernel_matches_reference_and_zero_sizes():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 4)) + 2 * np.eye(4)
    got = np.asarray(pl.inv_p.bind(pb.numpy.asarray(a)))
    with reference_backend():
        want = np.asarray(pl.inv_p.bind(pb.numpy.asarray(a)))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    for shape in [(0, 3, 3), (2, 0, 0), (0, 0)]:
        z = np.asarray(jnp.linalg.inv(np.zeros(shape)))
        assert z.shape == shape


def test_inv_errors_name_the_function():
    with pytest.raises(ValueError, match=r"inv.*'a'.*\(3, 4\)"):
        jnp.linalg.inv(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="inv"):
        pl.inv_p.bind(pb.numpy.asarray(np.zeros(3)))
    with pytest.raises(TypeError, match=r"inv: argument 'a' must be float32.*float16"):
        pl.inv_p.bind(pb.numpy.asarray(np.eye(3, dtype=np.float16)))
    # integers are promoted, as JAX's inv does
    np.testing.assert_allclose(np.asarray(jnp.linalg.inv(np.array([[2, 0], [0, 4]]))),
                               [[0.5, 0], [0, 0.25]])


def test_inv_grads_vmap_jit():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    check_grads(jnp.linalg.inv, (a,), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: jnp.sum(jnp.linalg.inv(x) ** 2), (a[0],), order=2,
                modes=("fwd", "rev"))
    check_vmap(jnp.linalg.inv, (a[0],))
    np.testing.assert_allclose(np.asarray(pb.jit(jnp.linalg.inv)(a)),
                               np.asarray(jnp.linalg.inv(a)), rtol=1e-14, atol=1e-14)
    # vmap over a non-leading axis
    bat = np.moveaxis(rng.standard_normal((4, 3, 3)) + 3 * np.eye(3), 0, 2)
    got = np.asarray(pb.vmap(jnp.linalg.inv, in_axes=2)(bat))
    np.testing.assert_allclose(got, np.linalg.inv(np.moveaxis(bat, 2, 0)), rtol=1e-10)


def test_small_batches_split_over_threads_as_one_call_each():
    rng = np.random.default_rng(5)
    for dt in REAL:
        s = _spd(rng, (2049,), 8, dt)
        b = rng.standard_normal((2049, 8, 1)).astype(dt)
        L = np.asarray(lax_linalg.cholesky(s))
        x = np.asarray(lax_linalg.triangular_solve(L, b, left_side=True, lower=True))
        inv = np.asarray(jnp.linalg.inv(s))
        lu = np.asarray(lax_linalg.lu(s)[0])
        for i in (0, 1000, 2048):
            np.testing.assert_array_equal(L[i], np.asarray(lax_linalg.cholesky(s[i])))
            np.testing.assert_array_equal(x[i], np.asarray(lax_linalg.triangular_solve(
                L[i], b[i], left_side=True, lower=True)))
            np.testing.assert_array_equal(inv[i], np.asarray(jnp.linalg.inv(s[i])))
            np.testing.assert_array_equal(lu[i], np.asarray(lax_linalg.lu(s[i])[0]))


def test_small_kernels_on_strided_and_broadcast_batches():
    """Multi-dimensional batches in any memory order (the group's per-matrix offsets), a batch
    broadcast with stride 0, and a batch not a multiple of the group size."""
    rng = np.random.default_rng(6)
    for dt in REAL:
        s = _spd(rng, (5, 3), 6, dt)
        sw = np.swapaxes(np.ascontiguousarray(np.swapaxes(s, 0, 1)), 0, 1)  # batch axes permuted
        b = rng.standard_normal((5, 3, 6, 2)).astype(dt)
        want_l = np.linalg.cholesky(s.astype(np.float64))
        for x in (s, sw):
            L = np.asarray(lax_linalg.cholesky(x))
            np.testing.assert_allclose(L, want_l, **_tol(dt))
            X = np.asarray(lax_linalg.triangular_solve(L, b, left_side=True, lower=True))
            np.testing.assert_allclose(X, np.linalg.solve(L.astype(np.float64), b), **_tol(dt))
            np.testing.assert_allclose(np.asarray(jnp.linalg.inv(x)),
                                       np.linalg.inv(x.astype(np.float64)), **_tol(dt))
        one = np.broadcast_to(s[0, 0], (37, 6, 6))  # stride 0 over the batch
        L = np.asarray(lax_linalg.cholesky(one))
        assert (L == L[0]).all()
        np.testing.assert_allclose(L[0], want_l[0, 0], **_tol(dt))


@pytest.mark.parametrize("n", [3, 17, 40])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_cholesky_of_a_nan_is_all_nan_at_every_size(n, dtype):
    # the small kernels, OpenBLAS's potrf (which takes a NaN pivot) and the reference rule
    # agree: a NaN anywhere in the used triangle fails the whole factorization
    a = (n * np.eye(n)).astype(dtype)
    a[n - 1, 1] = np.nan
    for out in (pb.lax.linalg.cholesky(a), pl.cholesky_p.reference(a)):
        assert np.isnan(np.asarray(out)).all()
