"""Linear algebra (primitives/linalg.py, csrc/linalg.c): lax.linalg, jnp.linalg and
pullback.scipy.linalg against NumPy/SciPy, derivatives (check_grads order 2, both modes), vmap,
jit, errors."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, settings, strategies as st

import pullback as pb
import pullback.lax as lax
import pullback.numpy as jnp
import pullback.scipy.linalg as psl
from pullback.lax import linalg as lax_linalg
from pullback.primitives import linalg as pl
from pullback.test_util import check_grads, check_vmap, reference_backend

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
BATCHES = st.sampled_from([(), (0,), (1,), (3,), (2, 0), (2, 3)])
SIZES = st.sampled_from([0, 1, 2, 3, 6])


def _tol(dt):
    return dict(rtol=2e-3, atol=2e-4) if dt in (np.float32, np.complex64) else \
        dict(rtol=1e-9, atol=1e-10)


def _rand(rng, shape, dt):
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def _spd(rng, batch, n, dt):
    """Well-conditioned Hermitian positive-definite matrices (a aᴴ + n I)."""
    a = _rand(rng, batch + (n, n), dt)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dt)


def _noncontig(x, kind):
    """x's values in a transposed (Fortran) or strided layout."""
    if kind == "transposed":
        return np.asfortranarray(x) if x.ndim == 2 else np.swapaxes(
            np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    if kind == "strided":
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    return x


# ---- forward values ----

@settings(max_examples=40, deadline=None)
@given(batch=BATCHES, n=SIZES, dt=st.sampled_from(DTYPES),
       kind=st.sampled_from(["contiguous", "transposed", "strided"]), seed=st.integers(0, 99))
def test_cholesky_matches_numpy(batch, n, dt, kind, seed):
    x = _spd(np.random.default_rng(seed), batch, n, dt)
    want = np.linalg.cholesky(x) if x.size else np.zeros(x.shape, dt)
    got = lax_linalg.cholesky(_noncontig(x, kind))
    assert got.dtype == dt and got.shape == x.shape
    np.testing.assert_allclose(np.asarray(got), want, **_tol(dt))
    up = np.asarray(jnp.linalg.cholesky(x, upper=True))
    np.testing.assert_allclose(up, np.conj(np.swapaxes(want, -1, -2)), **_tol(dt))
    if x.ndim == 2 and n:
        np.testing.assert_allclose(np.asarray(psl.cholesky(x)), sl.cholesky(x), **_tol(dt))
        np.testing.assert_allclose(np.asarray(psl.cholesky(x, lower=True)),
                                   sl.cholesky(x, lower=True), **_tol(dt))


def test_cholesky_reads_the_lower_triangle_and_symmetrizes():
    rng = np.random.default_rng(0)
    x = _spd(rng, (), 4, np.float64)
    junk = x + np.triu(rng.standard_normal((4, 4)), 1)  # upper triangle garbage
    np.testing.assert_allclose(np.asarray(lax_linalg.cholesky(junk, symmetrize_input=False)),
                               np.linalg.cholesky(x), rtol=1e-12)
    sym = (junk + junk.T) / 2
    np.testing.assert_allclose(np.asarray(lax_linalg.cholesky(junk)), np.linalg.cholesky(sym),
                               rtol=1e-12)


@pytest.mark.parametrize("dt", DTYPES)
def test_cholesky_of_a_non_positive_definite_matrix_is_nan(dt):
    good = np.eye(3, dtype=dt) * 2
    bad = np.array([[1, 2, 0], [2, 1, 0], [0, 0, 1]], dt)
    x = np.stack([good, bad, good])
    for f in (jnp.linalg.cholesky, pb.jit(jnp.linalg.cholesky)):
        out = np.asarray(f(x))
        assert np.isnan(out[1]).all()
        np.testing.assert_allclose(out[[0, 2]], np.sqrt(2) * np.stack([np.eye(3)] * 2),
                                   rtol=1e-6)


FLAGS = [(ls, lo, tr, cj, ud) for ls in (True, False) for lo in (True, False)
         for tr in (False, True) for cj in (False, True) for ud in (False, True)]


def _trsm_oracle(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """Independent of the primitive's reference: SciPy's solve_triangular per matrix."""
    out = np.empty(b.shape, b.dtype)
    for idx in np.ndindex(*b.shape[:-2]):
        ai, bi = a[idx], b[idx]
        if conjugate_a and not transpose_a:
            ai = np.conj(ai)
        trans = 0 if not transpose_a else (2 if conjugate_a else 1)
        if left_side:
            out[idx] = sl.solve_triangular(ai, bi, trans=trans, lower=lower,
                                           unit_diagonal=unit_diagonal)
        else:  # x op(a) = b  <=>  op(a)^T x^T = b^T, op(a)^T = a^T, a or conj(a)
            ai = np.conj(ai) if trans == 2 else ai
            out[idx] = sl.solve_triangular(ai, bi.T, trans=1 if trans == 0 else 0, lower=lower,
                                           unit_diagonal=unit_diagonal).T
    return out


@settings(max_examples=60, deadline=None)
@given(batch=BATCHES, m=SIZES, n=st.sampled_from([1, 2, 5]), dt=st.sampled_from(DTYPES),
       flags=st.sampled_from(FLAGS), kind=st.sampled_from(["contiguous", "transposed", "strided"]),
       seed=st.integers(0, 99))
def test_triangular_solve_matches_scipy(batch, m, n, dt, flags, kind, seed):
    left_side, lower, transpose_a, conjugate_a, unit_diagonal = flags
    rng = np.random.default_rng(seed)
    k = m if left_side else n
    a = (_rand(rng, batch + (k, k), dt) + 3 * np.eye(k)).astype(dt)
    b = _rand(rng, batch + (m, n), dt)
    got = lax_linalg.triangular_solve(_noncontig(a, kind), _noncontig(b, kind),
                                      left_side=left_side, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a,
                                      unit_diagonal=unit_diagonal)
    assert got.dtype == dt and got.shape == b.shape
    if b.size and a.size:
        want = _trsm_oracle(a, b, *flags)
        np.testing.assert_allclose(np.asarray(got), want, **_tol(dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kind", ["contiguous", "strided"])
def test_triangular_solve_one_right_hand_side(dt, kind):
    """One right-hand side of a matrix beyond the small kernels: the trsv path (every op, both
    sides; conj(a) alone on the left and its transpose on the right stay with trsm)."""
    rng = np.random.default_rng(14)
    a = (_rand(rng, (2, 20, 20), dt) + 5 * np.eye(20)).astype(dt)
    for flags in FLAGS:
        b = _rand(rng, (2, 20, 1) if flags[0] else (2, 1, 20), dt)
        got = lax_linalg.triangular_solve(_noncontig(a, kind), b, left_side=flags[0],
                                          lower=flags[1], transpose_a=flags[2],
                                          conjugate_a=flags[3], unit_diagonal=flags[4])
        np.testing.assert_allclose(np.asarray(got), _trsm_oracle(a, b, *flags), **_tol(dt))


@settings(max_examples=40, deadline=None)
@given(batch=BATCHES, m=SIZES, n=SIZES, dt=st.sampled_from(DTYPES),
       kind=st.sampled_from(["contiguous", "transposed", "strided"]), seed=st.integers(0, 99))
def test_lu_matches_scipy(batch, m, n, dt, kind, seed):
    a = _rand(np.random.default_rng(seed), batch + (m, n), dt)
    lu, piv, perm = lax_linalg.lu(_noncontig(a, kind))
    k = min(m, n)
    assert lu.shape == a.shape and lu.dtype == dt
    assert piv.shape == batch + (k,) and piv.dtype == np.int32
    assert perm.shape == batch + (m,) and perm.dtype == np.int32
    lu, piv, perm = np.asarray(lu), np.asarray(piv), np.asarray(perm)
    for idx in np.ndindex(*batch):
        if m and n:
            want_lu, want_piv = sl.lu_factor(a[idx])
            np.testing.assert_allclose(lu[idx], want_lu, **_tol(dt))
            np.testing.assert_array_equal(piv[idx], want_piv)
            L = np.tril(lu[idx], -1)[:, :k] + np.eye(m, k)
            U = np.triu(lu[idx])[:k]
            np.testing.assert_allclose(L @ U, a[idx][perm[idx]], **_tol(dt))
        assert sorted(perm[idx]) == list(range(m))
    np.testing.assert_array_equal(
        np.asarray(lax_linalg.lu_pivots_to_permutation(piv, m)), perm)


def test_lu_pivots_to_permutation():
    piv = np.array([[2, 2, 2], [1, 1, 2]], np.int32)
    np.testing.assert_array_equal(np.asarray(lax_linalg.lu_pivots_to_permutation(piv, 4)),
                                  [[2, 0, 1, 3], [1, 0, 2, 3]])


@settings(max_examples=40, deadline=None)
@given(batch=BATCHES, n=SIZES, dt=st.sampled_from(DTYPES), seed=st.integers(0, 99))
def test_solve_inv_det_slogdet_match_numpy(batch, n, dt, seed):
    rng = np.random.default_rng(seed)
    a = (_rand(rng, batch + (n, n), dt) + 2 * np.eye(n)).astype(dt)
    b = _rand(rng, batch + (n, 2), dt)
    tol = _tol(dt)
    x = jnp.linalg.solve(a, b)
    assert x.dtype == dt and x.shape == b.shape
    if a.size:
        np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), **tol)
        np.testing.assert_allclose(np.asarray(jnp.linalg.inv(a)), np.linalg.inv(a), **tol)
    np.testing.assert_allclose(np.asarray(jnp.linalg.det(a)), np.linalg.det(a), **tol)
    sign, logdet = jnp.linalg.slogdet(a)
    want_sign, want_logdet = np.linalg.slogdet(a)
    assert isinstance(jnp.linalg.slogdet(a), jnp.linalg.SlogdetResult)
    np.testing.assert_allclose(np.asarray(sign), want_sign, **tol)
    np.testing.assert_allclose(np.asarray(logdet), want_logdet, **tol)


def test_solve_broadcasts_and_takes_vectors():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 4)) + 4 * np.eye(4)
    v = rng.standard_normal(4)
    np.testing.assert_allclose(np.asarray(jnp.linalg.solve(a, v)), np.linalg.solve(a, v),
                               rtol=1e-10)
    b = rng.standard_normal((4, 2))  # broadcast against a's batch
    np.testing.assert_allclose(np.asarray(jnp.linalg.solve(a, b)), np.linalg.solve(a, b),
                               rtol=1e-10)


def test_singular_matrices():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(jnp.linalg.det(a)) == 0.0
    sign, logdet = jnp.linalg.slogdet(a)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    lu, piv, perm = lax_linalg.lu(a)  # no error: U's last diagonal entry is zero
    assert np.asarray(lu)[1, 1] == 0


@pytest.mark.parametrize("dt", DTYPES)
def test_scipy_linalg_matches_scipy(dt):
    rng = np.random.default_rng(1)
    s = _spd(rng, (), 5, dt)
    a = (_rand(rng, (5, 5), dt) + 3 * np.eye(5)).astype(dt)
    b, v = _rand(rng, (5, 2), dt), _rand(rng, (5,), dt)
    tol = _tol(dt)
    for lower in (False, True):
        np.testing.assert_allclose(np.asarray(psl.cho_solve(psl.cho_factor(s, lower=lower), b)),
                                   sl.cho_solve(sl.cho_factor(s, lower=lower), b), **tol)
    for trans in (0, 1, 2, "N", "T", "C"):
        for lower in (False, True):
            np.testing.assert_allclose(
                np.asarray(psl.solve_triangular(a, v, trans=trans, lower=lower)),
                sl.solve_triangular(a, v, trans=trans, lower=lower), **tol)
    for trans in (0, 1, 2):
        np.testing.assert_allclose(np.asarray(psl.lu_solve(psl.lu_factor(a), b, trans=trans)),
                                   sl.lu_solve(sl.lu_factor(a), b, trans=trans), **tol)
    np.testing.assert_array_equal(np.asarray(psl.lu_factor(a)[1]), sl.lu_factor(a)[1])
    np.testing.assert_allclose(np.asarray(psl.solve(s, b, assume_a="pos")),
                               sl.solve(s, b, assume_a="pos"), **tol)
    np.testing.assert_allclose(np.asarray(psl.solve(a, v)), sl.solve(a, v), **tol)
    np.testing.assert_allclose(np.asarray(psl.det(a)), sl.det(a), **tol)
    np.testing.assert_allclose(np.asarray(psl.inv(a)), sl.inv(a), **tol)


def test_kernels_match_their_references():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 4, 3))
    s = _spd(rng, (2,), 3, np.float64)
    b = rng.standard_normal((2, 3, 2))
    s[1, 0, 0] = -1  # not positive definite: NaNs on both backends
    for f, args in [(lambda x: lax_linalg.lu(x), (a,)), (lax_linalg.cholesky, (s,)),
                    (lambda x, y: lax_linalg.triangular_solve(x, y, left_side=True), (s, b))]:
        got = f(*args)
        with reference_backend():
            want = f(*args)
        for g, w in zip(pb.tree_util.tree_leaves(got), pb.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12,
                                       equal_nan=False if f is not lax_linalg.cholesky else True)
    assert np.isnan(np.asarray(lax_linalg.cholesky(s))[1]).all()
    with reference_backend():
        assert np.isnan(np.asarray(lax_linalg.cholesky(s))[1]).all()


def test_large_batch_splits_over_threads():
    """Many small matrices in one call (the batch-split path) equal one call per matrix."""
    rng = np.random.default_rng(3)
    for dt in (np.float32, np.complex128):
        s = _spd(rng, (1025,), 8, dt)
        b = _rand(rng, (1025, 8, 3), dt)
        L = np.asarray(lax_linalg.cholesky(s))
        x = np.asarray(lax_linalg.triangular_solve(L, b, left_side=True, lower=True))
        lu = np.asarray(lax_linalg.lu(s)[0])
        for i in (0, 100, 513, 1024):
            np.testing.assert_array_equal(L[i], np.asarray(lax_linalg.cholesky(s[i])))
            np.testing.assert_array_equal(x[i], np.asarray(lax_linalg.triangular_solve(
                L[i], b[i], left_side=True, lower=True)))
            np.testing.assert_array_equal(lu[i], np.asarray(lax_linalg.lu(s[i])[0]))


# ---- derivatives ----

def _grads(f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_cholesky_grads(dt):
    s = _spd(np.random.default_rng(4), (2,), 3, dt)
    _grads(lambda x: jnp.linalg.cholesky(x), (s,))
    # scipy's cholesky reads one triangle (no symmetrization): its derivative, as JAX's, is
    # that of the Hermitian matrix, so the directions are made Hermitian (as JAX's tests do)
    _grads(lambda x: psl.cholesky((x + jnp.conj(x.mT)) / 2), (s[0],))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
@pytest.mark.parametrize("flags", [FLAGS[0], FLAGS[5], FLAGS[10], FLAGS[19], FLAGS[26],
                                   FLAGS[31]])
def test_triangular_solve_grads_both_operands(dt, flags):
    left_side, lower, transpose_a, conjugate_a, unit_diagonal = flags
    rng = np.random.default_rng(5)
    a = (_rand(rng, (2, 3, 3), dt) + 3 * np.eye(3)).astype(dt)
    b = _rand(rng, (2, 3, 2) if left_side else (2, 2, 3), dt)
    f = lambda a, b: lax_linalg.triangular_solve(  # noqa: E731
        a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
        conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    _grads(f, (a, b))


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 4), (4, 3), (1, 1)])
@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_lu_grads(shape, dt):
    a = _rand(np.random.default_rng(6), shape, dt)
    _grads(lambda x: lax_linalg.lu(x)[0], (a,))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_solve_inv_det_slogdet_grads(dt):
    rng = np.random.default_rng(7)
    a = (_rand(rng, (2, 3, 3), dt) + 2 * np.eye(3)).astype(dt)
    b = _rand(rng, (2, 3, 2), dt)
    _grads(jnp.linalg.solve, (a, b))
    _grads(jnp.linalg.inv, (a,))
    _grads(jnp.linalg.det, (a,))
    _grads(lambda x: jnp.linalg.slogdet(x).logabsdet, (a,))
    _grads(lambda x, y: psl.cho_solve(psl.cho_factor((x + jnp.conj(x.T)) / 2), y),
           (_spd(rng, (), 3, dt), b[0]))
    _grads(lambda x, y: psl.lu_solve(psl.lu_factor(x), y, trans=1), (a[0], b[0]))


def test_slogdet_gradient_is_the_inverse_transpose():
    a = np.random.default_rng(8).standard_normal((4, 4)) + 3 * np.eye(4)
    g = pb.grad(lambda x: jnp.linalg.slogdet(x).logabsdet)(a)
    np.testing.assert_allclose(np.asarray(g), np.linalg.inv(a).T, rtol=1e-10)
    g = pb.grad(jnp.linalg.det)(a)
    np.testing.assert_allclose(np.asarray(g), np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-9)


# ---- vmap and jit ----

def test_vmap():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    check_vmap(lambda x: lax_linalg.cholesky(x @ x.T + 3 * jnp.eye(3)), (a,))
    check_vmap(lambda x, y: lax_linalg.triangular_solve(x, y, left_side=True, lower=True),
               (a, b))
    check_vmap(lambda x: lax_linalg.lu(x), (a,))
    check_vmap(jnp.linalg.solve, (a, b))
    check_vmap(jnp.linalg.det, (a,))
    check_vmap(lambda p: lax_linalg.lu_pivots_to_permutation(p, 4),
               (np.array([2, 3, 2], np.int32),))


def test_jit_equals_eager():
    rng = np.random.default_rng(10)
    a = rng.standard_normal((2, 4, 4)) + 3 * np.eye(4)
    s = _spd(rng, (2,), 4, np.float64)
    b = rng.standard_normal((2, 4, 3))
    fs = [lambda a, s, b: lax_linalg.lu(a), lambda a, s, b: jnp.linalg.cholesky(s),
          lambda a, s, b: psl.cho_solve(psl.cho_factor(s), b),
          lambda a, s, b: jnp.linalg.slogdet(a), lambda a, s, b: jnp.linalg.solve(a, b),
          lambda a, s, b: pb.grad(lambda x: jnp.linalg.slogdet(x).logabsdet.sum())(a)]
    for f in fs:
        for g, w in zip(pb.tree_util.tree_leaves(pb.jit(f)(a, s, b)),
                        pb.tree_util.tree_leaves(f(a, s, b))):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


# ---- errors ----

def test_errors_name_function_argument_and_shapes():
    sq, rect = np.ones((3, 3)), np.ones((2, 3))
    with pytest.raises(ValueError, match=r"cholesky: argument 'x' .*square.*\(2, 3\)"):
        lax_linalg.cholesky(rect)
    with pytest.raises(TypeError, match=r"cholesky: argument 'x' must be float32.*int32"):
        lax_linalg.cholesky(np.eye(3, dtype=np.int32))
    with pytest.raises(ValueError, match=r"triangular_solve: .*'a' and 'b'.*batch.*"
                                         r"\(2, 3, 3\).*\(4, 3, 1\)"):
        lax_linalg.triangular_solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)), left_side=True)
    with pytest.raises(ValueError, match=r"triangular_solve: argument 'a' of shape \(3, 3\) "
                                         r"does not fit argument 'b' of shape \(2, 3\)"):
        lax_linalg.triangular_solve(sq, rect, left_side=True)
    with pytest.raises(TypeError, match=r"triangular_solve: .*one dtype"):
        lax_linalg.triangular_solve(sq.astype(np.float32), sq, left_side=True)
    with pytest.raises(TypeError, match=r"lu: argument 'x' must be float32.*int"):
        lax_linalg.lu(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match=r"solve: argument 'a' .*square.*\(2, 3\)"):
        jnp.linalg.solve(rect, np.ones(2))
    with pytest.raises(ValueError, match=r"solve: argument 'b' of shape \(4, 1\) does not fit"):
        jnp.linalg.solve(sq, np.ones((4, 1)))
    with pytest.raises(ValueError, match=r"solve: the batch dimensions .*\(2, 3, 3\).*"
                                         r"\(4, 3, 1\)"):
        jnp.linalg.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)))
    with pytest.raises(ValueError, match=r"det: argument 'a' .*square.*\(2, 3\)"):
        jnp.linalg.det(rect)
    with pytest.raises(ValueError, match=r"inv: argument 'a' .*square"):
        jnp.linalg.inv(rect)
    with pytest.raises(ValueError, match=r"solve_triangular: argument 'trans'"):
        psl.solve_triangular(sq, np.ones(3), trans=3)
    with pytest.raises(ValueError, match=r"cho_solve: argument 'b' of shape \(2,\)"):
        psl.cho_solve((sq, False), np.ones(2))
    with pytest.raises(ValueError, match="lu_pivots_to_permutation: argument 'permutation_size'"):
        lax_linalg.lu_pivots_to_permutation(np.zeros(3, np.int32), 2)
    # jnp promotes integers (as JAX): no error
    np.testing.assert_allclose(np.asarray(jnp.linalg.det(np.eye(2, dtype=np.int32) * 2)), 4.0)


def test_lax_linalg_is_reachable():
    assert lax.linalg is lax_linalg
    assert jnp.linalg.cholesky is not None and pl.cholesky_p.name == "cholesky"


def test_first_linalg_use_of_a_process_inside_jit():
    # the LAPACK pointers are read by the kernels' prepare hook, with the GIL held, when the
    # compiled step is built (a kernel taking the GIL itself could wait forever on a worker
    # of a parallel step whose program holds it)
    code = ("import numpy as np, pullback as pb, pullback.numpy as jnp\n"
            "a = np.eye(4, dtype=np.float32) * 4\n"
            "f = pb.jit(lambda a: (jnp.linalg.cholesky(a), pb.lax.linalg.lu(a)[0]))\n"
            "print(float(np.asarray(f(a)[0])[0, 0]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2.0"


# ---- lu_inverse: a⁻¹ / a⁻ᵀ from lu's factors (det's and slogdet's derivative rules) ----

def _lu_inverse(x, transpose):
    lu, piv, _ = lax_linalg.lu(x)
    return pl.lu_inverse_p.bind(lu, piv, transpose=transpose)


@settings(max_examples=30, deadline=None)
@given(batch=BATCHES, n=st.sampled_from([0, 1, 2, 5, 20]), dt=st.sampled_from(DTYPES),
       transpose=st.booleans(), kind=st.sampled_from(["contiguous", "transposed", "strided"]),
       seed=st.integers(0, 2**16))
def test_lu_inverse_matches_numpy(batch, n, dt, transpose, kind, seed):
    rng = np.random.default_rng(seed)
    a = (_rand(rng, batch + (n, n), dt) + 2 * np.eye(n)).astype(dt)
    lu, piv, _ = lax_linalg.lu(a)
    got = np.asarray(pl.lu_inverse_p.bind(jnp.asarray(_noncontig(np.asarray(lu), kind)), piv,
                                          transpose=transpose))
    want = np.linalg.inv(a) if n else a
    if transpose:
        want = np.swapaxes(want, -1, -2)
    assert got.dtype == dt and got.shape == a.shape
    np.testing.assert_allclose(got, want, **_tol(dt))
    with reference_backend():
        ref = np.asarray(pl.lu_inverse_p.bind(lu, piv, transpose=transpose))
    np.testing.assert_allclose(got, ref, **_tol(dt))


def test_lu_inverse_singular_and_bad_pivots():
    a = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 1.0], [0.0, 1.0, 1.0]])
    a[2] = a[0] + a[1]  # exactly singular: U has a zero on its diagonal, no error
    lu, piv, _ = lax_linalg.lu(a)
    assert not np.isfinite(np.asarray(pl.lu_inverse_p.bind(lu, piv, transpose=False))).all()
    bad = jnp.asarray(np.array([0, 7, 2], np.int32))  # out of range: NaNs, nothing read
    assert np.isnan(np.asarray(pl.lu_inverse_p.bind(lu, bad, transpose=True))).all()
    with pytest.raises(TypeError, match="lu_inverse: argument 'pivots'"):
        pl.lu_inverse_p.bind(lu, jnp.asarray(np.zeros(2, np.int32)), transpose=False)
    with pytest.raises(ValueError, match="lu_inverse: argument 'lu'.*square"):
        pl.lu_inverse_p.bind(jnp.ones((2, 3)), jnp.asarray(np.zeros(3, np.int32)),
                             transpose=False)


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_lu_inverse_grads(transpose, dt):
    rng = np.random.default_rng(11)
    # rows shuffled, so the factorization pivots (the rule's permutation is not the identity)
    a = (_rand(rng, (2, 4, 4), dt) + 3 * np.eye(4)).astype(dt)[:, [2, 0, 3, 1]]
    assert (np.asarray(lax_linalg.lu(a)[2]) != np.arange(4)).any()
    _grads(lambda x: _lu_inverse(x, transpose), (a,))
    # with respect to the factors themselves (pivots held)
    lu, piv, _ = lax_linalg.lu(a[0])
    _grads(lambda f: pl.lu_inverse_p.bind(f, piv, transpose=transpose), (np.asarray(lu),))
    inv = np.linalg.inv(a)
    g = pb.jacfwd(lambda x: _lu_inverse(x, transpose))(a[0])
    want = -np.einsum("ik,lj->ijkl", inv[0], inv[0])  # d(a⁻¹)_ij / da_kl
    if transpose:
        want = np.swapaxes(want, 0, 1)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-9, atol=1e-12)


def test_lu_inverse_vmap_and_jit():
    rng = np.random.default_rng(12)
    a = rng.standard_normal((4, 4)) + 3 * np.eye(4)
    lu, piv, _ = lax_linalg.lu(a)
    for t in (False, True):
        check_vmap(lambda f, p: pl.lu_inverse_p.bind(f, p, transpose=t),
                   (np.asarray(lu), np.asarray(piv)))
        check_vmap(lambda x: _lu_inverse(x, t), (a,))
        np.testing.assert_allclose(np.asarray(pb.jit(lambda x: _lu_inverse(x, t))(a)),
                                   np.asarray(_lu_inverse(a, t)), rtol=1e-13, atol=1e-14)


def test_slogdet_and_solve_share_one_lu():
    """grad(slogdet + solve) factors a once: the rules' lu equations merge and the inverse
    comes from that factorization (no inv kernel, no second getrf)."""
    a = np.random.default_rng(13).standard_normal((20, 20)) + 5 * np.eye(20)
    b = np.ones((20, 1))
    f = pb.jit(pb.grad(lambda a, b: jnp.linalg.slogdet(a).logabsdet
                       + jnp.sum(jnp.linalg.solve(a, b))))
    text = f.lower(a, b).compile().as_text()
    assert text.count("kernel lu ") == 1 and "kernel inv " not in text, text
    want = np.linalg.inv(a).T - np.linalg.solve(a.T, b) @ np.linalg.solve(a, b).T
    np.testing.assert_allclose(np.asarray(f(a, b)), want, rtol=1e-10)
