"""Orthogonal and spectral decompositions (primitives/linalg_spectral.py, csrc/linalg_spectral.c):
qr, geqrf, householder_product, eigh, svd in lax.linalg, jnp.linalg (with norm, pinv, lstsq,
matrix_rank, cond) and pullback.scipy.linalg against NumPy/SciPy, compared through invariants
where a factorization has sign or phase freedom; derivatives (check_grads order 2, both modes),
vmap, jit, errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, settings, strategies as st

import pullback as pb
import pullback.numpy as jnp
import pullback.scipy.linalg as psl
from pullback.lax import linalg as lax_linalg
from pullback.primitives import linalg_spectral as ps
from pullback.test_util import check_grads, check_vmap, reference_backend

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
BATCHES = st.sampled_from([(), (0,), (1,), (3,), (2, 2)])
SIZES = st.sampled_from([0, 1, 2, 3, 5])
KINDS = st.sampled_from(["contiguous", "transposed", "strided"])


def _tol(dt):
    return dict(rtol=2e-3, atol=2e-4) if dt in (np.float32, np.complex64) else \
        dict(rtol=1e-9, atol=1e-10)


def _rand(rng, shape, dt):
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def _herm(rng, batch, n, dt):
    a = _rand(rng, batch + (n, n), dt)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dt)


def _noncontig(x, kind):
    if kind == "transposed" and x.ndim >= 2:
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    if kind == "strided":
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    return x


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _eye_like(x, k):
    return np.broadcast_to(np.eye(k), x.shape[:-2] + (k, k))


# ---- forward values ----

@settings(max_examples=40, deadline=None)
@given(batch=BATCHES, m=SIZES, n=SIZES, dt=st.sampled_from(DTYPES), full=st.booleans(),
       kind=KINDS, seed=st.integers(0, 99))
def test_qr_matches_numpy(batch, m, n, dt, full, kind, seed):
    x = _rand(np.random.default_rng(seed), batch + (m, n), dt)
    q, r = lax_linalg.qr(_noncontig(x, kind), full_matrices=full)
    q, r = np.asarray(q), np.asarray(r)
    k = m if full else min(m, n)
    assert q.shape == batch + (m, k) and r.shape == batch + (k, n)
    assert q.dtype == dt and r.dtype == dt
    tol = _tol(dt)
    np.testing.assert_allclose(q @ r, x, **tol)
    np.testing.assert_allclose(_H(q) @ q, _eye_like(q, k), **tol)
    np.testing.assert_array_equal(r, np.triu(r))
    if x.size:  # the same LAPACK convention as NumPy's: equal factors
        wq, wr = np.linalg.qr(x, mode="complete" if full else "reduced")
        np.testing.assert_allclose(r, wr, **tol)
        np.testing.assert_allclose(q, wq, **tol)


@settings(max_examples=25, deadline=None)
@given(batch=st.sampled_from([(), (2,)]), m=SIZES, n=SIZES, dt=st.sampled_from(DTYPES),
       seed=st.integers(0, 99))
def test_qr_pivoting_matches_scipy(batch, m, n, dt, seed):
    x = _rand(np.random.default_rng(seed), batch + (m, n), dt)
    q, r, p = (np.asarray(o) for o in lax_linalg.qr(x, pivoting=True, full_matrices=False))
    assert p.dtype == np.int32 and p.shape == batch + (n,)
    xp = np.take_along_axis(x, np.broadcast_to(p[..., None, :], x.shape), -1)
    np.testing.assert_allclose(q @ r, xp, **_tol(dt))
    for idx in np.ndindex(*batch):
        if m and n:
            _, _, wp = sl.qr(x[idx], mode="economic", pivoting=True)
            np.testing.assert_array_equal(p[idx], wp)
            d = np.abs(np.diagonal(r[idx]))
            assert np.all(d[:-1] >= d[1:] * (1 - 1e-5))


@pytest.mark.parametrize("dt", DTYPES)
def test_geqrf_and_householder_product(dt):
    rng = np.random.default_rng(1)
    x = _rand(rng, (2, 5, 3), dt)
    h, taus = (np.asarray(o) for o in lax_linalg.geqrf(x))
    for i in range(2):
        wh, wt = np.linalg.qr(x[i], mode="raw")
        np.testing.assert_allclose(h[i], wh.T, **_tol(dt))
        np.testing.assert_allclose(taus[i], wt, **_tol(dt))
    q = np.asarray(lax_linalg.householder_product(h, taus))
    np.testing.assert_allclose(q, np.linalg.qr(x)[0], **_tol(dt))
    hr, tr = jnp.linalg.qr(x, mode="raw")
    np.testing.assert_allclose(np.asarray(hr), np.swapaxes(h, -1, -2), **_tol(dt))
    # fewer reflectors than columns
    q2 = np.asarray(lax_linalg.householder_product(h, taus[:, :1]))
    np.testing.assert_allclose(_H(q2) @ q2, _eye_like(q2, 3), **_tol(dt))
    np.testing.assert_allclose(q2[:, :, 0], q[:, :, 0], **_tol(dt))


@settings(max_examples=40, deadline=None)
@given(batch=BATCHES, n=SIZES, dt=st.sampled_from(DTYPES), kind=KINDS, seed=st.integers(0, 99))
def test_eigh_matches_numpy(batch, n, dt, kind, seed):
    x = _herm(np.random.default_rng(seed), batch, n, dt)
    v, w = lax_linalg.eigh(_noncontig(x, kind))
    v, w = np.asarray(v), np.asarray(w)
    rdt = np.zeros(0, dt).real.dtype
    assert v.shape == x.shape and v.dtype == dt and w.shape == batch + (n,) and w.dtype == rdt
    tol = _tol(dt)
    if x.size:
        np.testing.assert_allclose(w, np.linalg.eigvalsh(x), **tol)
    # reconstruction and orthogonality: x = v diag(w) vᴴ, vᴴ v = I
    np.testing.assert_allclose((v * w[..., None, :]) @ _H(v), x, **tol)
    np.testing.assert_allclose(_H(v) @ v, _eye_like(v, n), **tol)
    res = jnp.linalg.eigh(x)
    assert isinstance(res, jnp.linalg.EighResult)
    np.testing.assert_allclose(np.asarray(res.eigenvalues), w, **tol)
    np.testing.assert_allclose(np.asarray(jnp.linalg.eigvalsh(x)), w, **tol)


@pytest.mark.parametrize("dt", DTYPES)
def test_eigh_reads_one_triangle(dt):
    rng = np.random.default_rng(2)
    x = _herm(rng, (), 4, dt)
    junk_up = x + np.triu(_rand(rng, (4, 4), dt), 1)
    junk_lo = x + np.tril(_rand(rng, (4, 4), dt), -1)
    want = np.linalg.eigvalsh(x)
    for a, lower in ((junk_up, True), (junk_lo, False)):
        _, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=False)
        np.testing.assert_allclose(np.asarray(w), want, **_tol(dt))
        w2 = jnp.linalg.eigvalsh(a, UPLO="L" if lower else "U", symmetrize_input=False)
        np.testing.assert_allclose(np.asarray(w2), want, **_tol(dt))
        np.testing.assert_allclose(np.asarray(psl.eigh(a, lower=lower, eigvals_only=True)), want,
                                   **_tol(dt))
    # eigen-projector of each (distinct) eigenvalue equals NumPy's
    v, w = (np.asarray(o) for o in lax_linalg.eigh(x))
    wv = np.linalg.eigh(x)[1]
    for j in range(4):
        np.testing.assert_allclose(np.outer(v[:, j], np.conj(v[:, j])),
                                   np.outer(wv[:, j], np.conj(wv[:, j])), **_tol(dt))


def test_eigh_subset_by_index():
    x = _herm(np.random.default_rng(3), (2,), 5, np.float64)
    v, w = (np.asarray(o) for o in lax_linalg.eigh(x, subset_by_index=(1, 4)))
    assert v.shape == (2, 5, 3) and w.shape == (2, 3)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(x)[:, 1:4], rtol=1e-10)
    np.testing.assert_allclose(x @ v, v * w[:, None, :], atol=1e-10)
    w2, v2 = psl.eigh(x[0], subset_by_index=(1, 3))  # SciPy's bounds are inclusive
    want = sl.eigh(x[0], subset_by_index=(1, 3), eigvals_only=True)
    np.testing.assert_allclose(np.asarray(w2), want, rtol=1e-10)
    assert np.asarray(v2).shape == (5, 3)


@settings(max_examples=40, deadline=None)
@given(batch=BATCHES, m=SIZES, n=SIZES, dt=st.sampled_from(DTYPES), full=st.booleans(),
       kind=KINDS, alg=st.sampled_from([None, lax_linalg.SvdAlgorithm.QR]),
       seed=st.integers(0, 99))
def test_svd_matches_numpy(batch, m, n, dt, full, kind, alg, seed):
    x = _rand(np.random.default_rng(seed), batch + (m, n), dt)
    u, s, vh = (np.asarray(o) for o in lax_linalg.svd(_noncontig(x, kind), full_matrices=full,
                                                       algorithm=alg))
    k = min(m, n)
    uc, vr = (m, n) if full else (k, k)
    rdt = np.zeros(0, dt).real.dtype
    assert u.shape == batch + (m, uc) and vh.shape == batch + (vr, n)
    assert s.shape == batch + (k,) and s.dtype == rdt and u.dtype == dt
    tol = _tol(dt)
    if x.size:
        np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), **tol)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], x, **tol)
    np.testing.assert_allclose(_H(u) @ u, _eye_like(u, uc), **tol)
    np.testing.assert_allclose(vh @ _H(vh), _eye_like(vh, vr), **tol)
    s2 = np.asarray(lax_linalg.svd(x, compute_uv=False, algorithm=alg))
    np.testing.assert_allclose(s2, s, **tol)
    r = jnp.linalg.svd(x, full_matrices=full)
    assert isinstance(r, jnp.linalg.SVDResult)
    np.testing.assert_allclose(np.asarray(jnp.linalg.svdvals(x)), s, **tol)


def test_svd_subset_and_hermitian():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 5, 4))
    u, s, vh = (np.asarray(o) for o in lax_linalg.svd(x, full_matrices=False,
                                                       subset_by_index=(1, 3)))
    assert u.shape == (2, 5, 2) and s.shape == (2, 2) and vh.shape == (2, 2, 4)
    np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False)[:, 1:3], rtol=1e-10)
    np.testing.assert_allclose(x @ _H(vh), u * s[:, None, :], atol=1e-10)
    with pytest.raises(ValueError, match="full_matrices and subset_by_index"):
        lax_linalg.svd(x, subset_by_index=(1, 3))
    for dt in (np.float64, np.complex128):
        h = _herm(rng, (2,), 4, dt)
        U, S, Vh = (np.asarray(o) for o in jnp.linalg.svd(h, hermitian=True))
        np.testing.assert_allclose(S, np.linalg.svd(h, compute_uv=False), rtol=1e-10)
        np.testing.assert_allclose((U * S[:, None, :]) @ Vh, h, atol=1e-10)
        np.testing.assert_allclose(np.asarray(jnp.linalg.svd(h, compute_uv=False,
                                                             hermitian=True)), S, rtol=1e-10)


def test_kernels_match_their_references():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))
    h = _herm(rng, (2,), 4, np.complex128)
    fs = [lambda: lax_linalg.qr(x), lambda: lax_linalg.qr(x, full_matrices=False),
          lambda: lax_linalg.geqrf(x), lambda: lax_linalg.qr(x.real, pivoting=True),
          lambda: lax_linalg.householder_product(*lax_linalg.geqrf(x)),
          lambda: lax_linalg.eigh(h)[1], lambda: lax_linalg.svd(x, compute_uv=False)]
    for f in fs:
        got = pb.tree_util.tree_leaves(f())
        with reference_backend():
            want = pb.tree_util.tree_leaves(f())
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)
    # eigenvectors and singular vectors through their invariants
    for f in (lambda: lax_linalg.eigh(h), lambda: lax_linalg.svd(x, full_matrices=False)):
        got = [np.asarray(o) for o in f()]
        with reference_backend():
            want = [np.asarray(o) for o in f()]
        if len(got) == 2:
            (v, _), (wv, _) = got, want
            np.testing.assert_allclose(np.abs(_H(wv) @ v), _eye_like(v, 4), atol=1e-10)
        else:
            (u, _, vh), (wu, _, wvh) = got, want
            np.testing.assert_allclose(u @ vh, wu @ wvh, atol=1e-10)


def test_large_batch_splits_over_threads():
    """Many small matrices in one call (the batch-split path) equal one call per matrix."""
    rng = np.random.default_rng(6)
    for dt in (np.float32, np.complex128):
        x = _rand(rng, (1025, 6, 4), dt)
        h = _herm(rng, (1025,), 5, dt)
        q, r = (np.asarray(o) for o in lax_linalg.qr(x))
        v, w = (np.asarray(o) for o in lax_linalg.eigh(h))
        u, s, vh = (np.asarray(o) for o in lax_linalg.svd(x))
        for i in (0, 100, 513, 1024):
            np.testing.assert_array_equal(q[i], np.asarray(lax_linalg.qr(x[i])[0]))
            np.testing.assert_array_equal(r[i], np.asarray(lax_linalg.qr(x[i])[1]))
            np.testing.assert_array_equal(v[i], np.asarray(lax_linalg.eigh(h[i])[0]))
            np.testing.assert_array_equal(w[i], np.asarray(lax_linalg.eigh(h[i])[1]))
            np.testing.assert_array_equal(u[i], np.asarray(lax_linalg.svd(x[i])[0]))
            np.testing.assert_array_equal(s[i], np.asarray(lax_linalg.svd(x[i])[1]))


def test_nan_input_gives_nan_not_an_error():
    x = np.full((2, 3, 3), np.nan)
    x[0] = np.eye(3)
    w = np.asarray(jnp.linalg.eigvalsh(x))
    s = np.asarray(jnp.linalg.svdvals(x))
    np.testing.assert_allclose(w[0], 1.0)
    np.testing.assert_allclose(s[0], 1.0)
    assert np.isnan(w[1]).all() and np.isnan(s[1]).all()


# ---- jnp.linalg composites ----

NORM_CASES = [(None, None), ("fro", (-2, -1)), ("nuc", (-2, -1)), (2, (-2, -1)),
              (-2, (-2, -1)), (1, (-2, -1)), (-1, (-2, -1)), (np.inf, (-2, -1)),
              (-np.inf, (-2, -1)), (2, (0, 2)), (1, (2, 0)), (np.inf, (1, 0)), (None, -1),
              (1, 1), (0, -1), (3, -1), (np.inf, -1), (-np.inf, 0), (0.5, 2)]


@pytest.mark.parametrize("dt", [np.float32, np.complex128])
@pytest.mark.parametrize("ord,axis", NORM_CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_matches_numpy(dt, ord, axis, keepdims):
    x = _rand(np.random.default_rng(7), (3, 4, 5), dt)
    got = np.asarray(jnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims))
    want = np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got, want, **_tol(dt))
    if axis == (-2, -1) and ord is not None:
        np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_norm(x, ord=ord,
                                                                     keepdims=keepdims)),
                                   want, **_tol(dt))


def test_norm_vector_and_matrix_defaults():
    rng = np.random.default_rng(8)
    v, m = rng.standard_normal(5), rng.standard_normal((3, 4))
    for x in (v, m):
        for o in ([None, 1, 2, np.inf, -np.inf] if x.ndim == 1 else
                  [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]):
            np.testing.assert_allclose(np.asarray(jnp.linalg.norm(x, o)), np.linalg.norm(x, o),
                                       rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.linalg.vector_norm(m)), np.linalg.norm(m.ravel()))
    np.testing.assert_allclose(np.asarray(jnp.linalg.vector_norm(m, axis=0, ord=1)),
                               np.abs(m).sum(0))
    with pytest.raises(ValueError, match="norm: invalid order 'bad'"):
        jnp.linalg.norm(m, "bad")
    with pytest.raises(ValueError, match="vector_norm: invalid order"):
        jnp.linalg.vector_norm(v, ord="inf")
    with pytest.raises(ValueError, match="improper number of axes"):
        jnp.linalg.norm(np.ones((2, 2, 2)), 2, axis=(0, 1, 2))


@pytest.mark.parametrize("dt", [np.float64, np.complex64])
def test_pinv_lstsq_rank_cond_match_numpy(dt):
    rng = np.random.default_rng(9)
    tol = _tol(dt)
    for shape in [(4, 3), (3, 5), (2, 4, 4)]:
        a = _rand(rng, shape, dt)
        np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(a)), np.linalg.pinv(a), **tol)
        np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_rank(a)),
                                   np.linalg.matrix_rank(a))
        np.testing.assert_allclose(np.asarray(jnp.linalg.cond(a)), np.linalg.cond(a), **tol)
    low = (_rand(rng, (5, 2), dt) @ _rand(rng, (2, 4), dt)).astype(dt)  # rank 2
    assert int(jnp.linalg.matrix_rank(low)) == 2
    rc = 10 * 5 * np.finfo(dt).eps  # JAX's default rtol (NumPy's is 1e-15)
    np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(low)), np.linalg.pinv(low, rc), **tol)
    h = _herm(rng, (), 4, dt)
    np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(h, hermitian=True)),
                               np.linalg.pinv(h, hermitian=True), **tol)
    sq = _rand(rng, (3, 3), dt)
    for p in (None, 2, -2, 1, -1, "fro", "nuc", np.inf, -np.inf):
        np.testing.assert_allclose(np.asarray(jnp.linalg.cond(sq, p)), np.linalg.cond(sq, p),
                                   **tol)
    problems = [(_rand(rng, (6, 3), dt), _rand(rng, (6,), dt)),
                (_rand(rng, (6, 3), dt), _rand(rng, (6, 2), dt)),
                (_rand(rng, (3, 5), dt), _rand(rng, (3, 2), dt))]
    if dt == np.float64:  # rank 2 of 4 (float32's rank is at the rcond threshold)
        problems.append((low, _rand(rng, (5,), dt)))
    for a, b in problems:
        x, resid, rank, s = jnp.linalg.lstsq(a, b, numpy_resid=True)
        wx, wres, wrank, ws = np.linalg.lstsq(a, b, rcond=None)
        np.testing.assert_allclose(np.asarray(x), wx, **tol)
        np.testing.assert_allclose(np.asarray(resid), wres, **tol)
        assert int(rank) == wrank
        np.testing.assert_allclose(np.asarray(s), ws, **tol)
    # an exactly singular matrix: inf (JAX's NaN-to-inf), not NaN
    assert np.isinf(np.asarray(jnp.linalg.cond(np.array([[1.0, 2.0], [2.0, 4.0]], dt), 1)))


def test_qr_modes_match_numpy():
    a = np.random.default_rng(10).standard_normal((2, 5, 3))
    for mode in ("reduced", "complete"):
        r = jnp.linalg.qr(a, mode=mode)
        assert isinstance(r, jnp.linalg.QRResult)
        for g, w in zip(r, np.linalg.qr(a, mode=mode)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.linalg.qr(a, mode="r")),
                               np.linalg.qr(a, mode="r"), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="qr: argument 'mode'"):
        jnp.linalg.qr(a, mode="bad")


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_scipy_linalg_matches_scipy(dt):
    rng = np.random.default_rng(11)
    tol = _tol(dt)
    for shape in [(5, 3), (3, 5), (4, 4)]:
        a = _rand(rng, shape, dt)
        for mode in ("full", "economic", "r"):
            for piv in (False, True):
                got = psl.qr(a, mode=mode, pivoting=piv)
                want = sl.qr(a, mode=mode, pivoting=piv)
                for g, w in zip(got, want):
                    np.testing.assert_allclose(np.asarray(g), w, **tol)
        for full in (True, False):
            u, s, vh = (np.asarray(o) for o in psl.svd(a, full_matrices=full))
            wu, ws, wvh = sl.svd(a, full_matrices=full)
            np.testing.assert_allclose(s, ws, **tol)
            np.testing.assert_allclose(u.shape, wu.shape)
            np.testing.assert_allclose(u[:, :len(s)] @ vh[:len(s)], wu[:, :len(s)] @ wvh[:len(s)],
                                       **tol)
        np.testing.assert_allclose(np.asarray(psl.svd(a, compute_uv=False,
                                                      lapack_driver="gesvd")),
                                   sl.svd(a, compute_uv=False), **tol)
        for side in ("right", "left"):
            for method in ("svd",) + (("qdwh",) if (shape[0] >= shape[1]) == (side == "right")
                                      else ()):
                u, p = (np.asarray(o) for o in psl.polar(a, side=side, method=method))
                wu, wp = sl.polar(a, side=side)
                np.testing.assert_allclose(u, wu, **tol)
                np.testing.assert_allclose(p, wp, **tol)
    h = _herm(rng, (), 4, dt)
    w, v = (np.asarray(o) for o in psl.eigh(h))
    np.testing.assert_allclose(w, sl.eigh(h, eigvals_only=True), **tol)
    np.testing.assert_allclose((v * w) @ _H(v), h, **tol)


# ---- derivatives ----

def _grads(f, args, **kw):
    check_grads(f, args, order=2, modes=("fwd", "rev"), **kw)


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
@pytest.mark.parametrize("shape,full,piv", [((3, 3), True, False), ((2, 4, 3), False, False),
                                            ((4, 3), True, False), ((3, 5), True, False),
                                            ((3, 5), False, True), ((4, 3), False, True),
                                            ((1, 1), True, False)])
def test_qr_grads(dt, shape, full, piv):
    x = _rand(np.random.default_rng(12), shape, dt)
    _grads(lambda a: lax_linalg.qr(a, full_matrices=full, pivoting=piv)[:2], (x,))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_eigh_grads(dt):
    rng = np.random.default_rng(13)
    # distinct eigenvalues: D + a small Hermitian perturbation
    x = (np.diag([1.0, 2.5, 4.0, 6.0]) + 0.3 * _herm(rng, (), 4, dt)).astype(dt)
    xb = np.stack([x, (x + 0.2 * _herm(rng, (), 4, dt)).astype(dt)])

    def f(a):  # eigenvalues and eigen-projectors: free of the eigenvectors' phases
        v, w = lax_linalg.eigh(a)
        return w, v[..., :, :2] @ jnp.conj(v[..., :, :2]).mT, v[..., :, 0:1] * jnp.conj(
            v[..., 1:2, 0:1])
    _grads(f, (xb,))
    _grads(lambda a: jnp.linalg.eigvalsh(a), (x,))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4), (2, 3, 2), (1, 1)])
def test_svd_grads(dt, shape):
    rng = np.random.default_rng(14)
    x = _rand(rng, shape, dt)

    def f(a):  # singular values and phase-free products of the vectors
        u, s, vh = lax_linalg.svd(a, full_matrices=False)
        return s, u @ vh, u[..., :, :1] @ jnp.conj(u[..., :, :1]).mT
    _grads(f, (x,))
    _grads(lambda a: lax_linalg.svd(a, compute_uv=False), (x,))
    if shape[-1] == shape[-2]:  # full_matrices on a square matrix is the reduced one
        _grads(lambda a: (lambda u, s, vh: u @ vh)(*lax_linalg.svd(a)), (x,))
    else:
        with pytest.raises(NotImplementedError, match="full matrices"):
            pb.jvp(lambda a: lax_linalg.svd(a), (x,), (x,))


def test_svd_grad_masks_zero_singular_values():
    # a rank-deficient square matrix: 1/s is masked at s = 0, so the tangents stay finite
    x = np.diag([3.0, 1.0, 0.0])
    _, t = pb.jvp(lambda a: lax_linalg.svd(a)[0] @ lax_linalg.svd(a)[2], (x,),
                  (np.diag([0.0, 0.0, 0.0]) + np.eye(3, k=1),))
    assert np.isfinite(np.asarray(t)).all()


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_composite_grads(dt):
    rng = np.random.default_rng(15)
    a = _rand(rng, (4, 3), dt)
    w = _rand(rng, (3, 4), dt)
    _grads(jnp.linalg.pinv, (a,))
    _grads(jnp.linalg.pinv, (w,))
    _grads(lambda x: jnp.linalg.norm(x, 2), (a,))
    _grads(lambda x: jnp.linalg.norm(x, "nuc"), (a,))
    _grads(lambda x: jnp.linalg.norm(x, -2), (w,))
    _grads(lambda x: jnp.linalg.lstsq(x, jnp.ones(4, dt))[0], (a,))
    _grads(lambda x: psl.polar(x)[0], (a,))
    h = (np.diag([1.0, 2.0, 4.0]) + 0.2 * _herm(rng, (), 3, dt)).astype(dt)
    _grads(lambda x: jnp.linalg.pinv(x, hermitian=True), (h,))


def test_pinv_gradient_matches_jax_formula_at_fixed_rank():
    a = np.random.default_rng(16).standard_normal((4, 3))
    g = pb.grad(lambda x: jnp.sum(jnp.linalg.pinv(x)))(a)
    eps = 1e-6
    fd = np.zeros_like(a)
    for i in np.ndindex(*a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        fd[i] = (np.linalg.pinv(a + d).sum() - np.linalg.pinv(a - d).sum()) / (2 * eps)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-8)


# ---- vmap and jit ----

def test_vmap():
    rng = np.random.default_rng(17)
    a = rng.standard_normal((4, 3))
    h = np.diag([1.0, 2.0, 3.0]) + 0.1 * _herm(rng, (), 3, np.float64)
    check_vmap(lambda x: lax_linalg.qr(x), (a,))
    check_vmap(lambda x: lax_linalg.qr(x, pivoting=True, full_matrices=False), (a,))
    check_vmap(lambda x: lax_linalg.geqrf(x), (a,))
    check_vmap(lambda x, t: lax_linalg.householder_product(x, t), (a, rng.standard_normal(2)))
    check_vmap(lambda x: lax_linalg.eigh(x), (h,))
    check_vmap(lambda x: lax_linalg.svd(x), (a,))
    check_vmap(lambda x: lax_linalg.svd(x, compute_uv=False), (a,))
    check_vmap(lambda x: jnp.linalg.norm(x, 2), (a,))
    check_vmap(jnp.linalg.pinv, (a,))


def test_jit_equals_eager():
    rng = np.random.default_rng(18)
    a = rng.standard_normal((2, 4, 3))
    h = _herm(rng, (2,), 3, np.complex128)
    fs = [lambda a, h: lax_linalg.qr(a), lambda a, h: lax_linalg.qr(a, pivoting=True),
          lambda a, h: lax_linalg.eigh(h), lambda a, h: lax_linalg.svd(a),
          lambda a, h: lax_linalg.svd(h, compute_uv=False),
          lambda a, h: jnp.linalg.norm(a, "nuc", axis=(1, 2)),
          lambda a, h: jnp.linalg.pinv(a),
          lambda a, h: pb.grad(lambda x: jnp.sum(jnp.linalg.svd(x, compute_uv=False)))(a),
          lambda a, h: pb.grad(lambda x: jnp.sum(jnp.linalg.eigvalsh(x) ** 2))(h.real)]
    for f in fs:
        for g, w in zip(pb.tree_util.tree_leaves(pb.jit(f)(a, h)),
                        pb.tree_util.tree_leaves(f(a, h))):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


# ---- errors ----

def test_errors_name_function_argument_and_shapes():
    rect = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"eigh: argument 'x' .*square.*\(2, 3\)"):
        lax_linalg.eigh(rect)
    with pytest.raises(TypeError, match=r"qr: argument 'x' must be float32.*int32"):
        lax_linalg.qr(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match=r"svd: argument 'x' must have at least 2 dim.*\(3,\)"):
        lax_linalg.svd(np.ones(3))
    with pytest.raises(ValueError, match=r"householder_product: argument 'a' must have at least "
                                         r"as many rows as columns, got shape \(2, 3\)"):
        lax_linalg.householder_product(rect, np.ones(2))
    with pytest.raises(ValueError, match=r"householder_product: argument 'taus' of shape \(3,\)"):
        lax_linalg.householder_product(np.ones((3, 2)), np.ones(3))
    with pytest.raises(TypeError, match=r"householder_product: .*one dtype"):
        lax_linalg.householder_product(np.ones((3, 2)), np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"eigh: argument 'subset_by_index'"):
        lax_linalg.eigh(np.eye(3), subset_by_index=(2, 5))
    with pytest.raises(ValueError, match=r"eigh: argument 'UPLO'"):
        jnp.linalg.eigh(np.eye(3), UPLO="X")
    with pytest.raises(NotImplementedError, match="svd: the Jacobi"):
        lax_linalg.svd(np.eye(3), algorithm=lax_linalg.SvdAlgorithm.JACOBI)
    with pytest.raises(ValueError, match=r"cond: argument 'x' must not be empty"):
        jnp.linalg.cond(np.ones((0, 0)))
    with pytest.raises(ValueError, match=r"lstsq: the leading dimensions"):
        jnp.linalg.lstsq(np.ones((3, 2)), np.ones(4))
    with pytest.raises(ValueError, match=r"polar: argument 'side'"):
        psl.polar(np.eye(2), side="up")
    # jnp promotes integers (as JAX)
    np.testing.assert_allclose(np.asarray(jnp.linalg.svdvals(np.eye(2, dtype=np.int32) * 2)),
                               [2.0, 2.0])


def test_public_names():
    for name in ("qr_p", "eigh_p", "svd_p", "householder_product_p", "cholesky_p", "lu_p",
                 "triangular_solve_p", "lu_pivots_to_permutation_p"):
        assert getattr(lax_linalg, name).name == name[:-2]
    assert lax_linalg.qr_p is ps.qr_p
    assert [e.name for e in lax_linalg.SvdAlgorithm] == ["DEFAULT", "QR", "JACOBI", "POLAR",
                                                         "DIVIDE_AND_CONQUER"]
    assert [e.name for e in lax_linalg.EighImplementation] == ["QR", "JACOBI", "QDWH"]
    assert jnp.linalg.SVDResult._fields == ("U", "S", "Vh")
    assert jnp.linalg.EighResult._fields == ("eigenvalues", "eigenvectors")
    assert jnp.linalg.QRResult._fields == ("Q", "R")


# ---- scipy.linalg.qr_multiply ----

@settings(max_examples=40, deadline=None)
@given(batch=st.sampled_from([(), (0,), (1,), (2,)]), m=SIZES, n=SIZES,
       dt=st.sampled_from(DTYPES), mode=st.sampled_from(["left", "right"]),
       conjugate=st.booleans(), pivoting=st.booleans(), p=st.sampled_from([0, 1, 3]),
       kind=KINDS, seed=st.integers(0, 99))
def test_qr_multiply_matches_scipy(batch, m, n, dt, mode, conjugate, pivoting, p, kind, seed):
    rng = np.random.default_rng(seed)
    k = min(m, n)
    a = _rand(rng, batch + (m, n), dt)
    c = _rand(rng, batch + ((k, p) if mode == "left" else (p, m)), dt)
    got = psl.qr_multiply(_noncontig(a, kind), _noncontig(c, kind), mode=mode,
                          pivoting=pivoting, conjugate=conjugate)
    assert len(got) == (3 if pivoting else 2)
    assert got[0].dtype == dt and got[0].shape == ((batch + (m, p)) if mode == "left"
                                                   else (batch + (p, k)))
    assert got[1].shape == batch + (k, n)
    if a.size == 0 or c.size == 0:  # SciPy refuses empty a; an empty c gives it odd shapes
        return
    for idx in np.ndindex(*batch):
        want = sl.qr_multiply(a[idx], c[idx], mode=mode, pivoting=pivoting, conjugate=conjugate)
        for g, w in zip(got, want):
            g = np.asarray(g)[idx]
            if np.issubdtype(w.dtype, np.integer):
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, **_tol(dt))


def test_qr_multiply_vectors_broadcasting_jit_and_errors():
    rng = np.random.default_rng(30)
    a, b = rng.standard_normal((4, 2)), np.array([2.0, 4.0, 5.0, 4.0])
    qtb, r = psl.qr_multiply(a, b)  # JAX's least-squares example: c @ Q of a 1-d row
    assert np.asarray(qtb).shape == (2,)
    x = psl.solve_triangular(r, qtb)
    np.testing.assert_allclose(np.asarray(x), np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-10)
    w = sl.qr_multiply(a, b[:2], mode="left")
    np.testing.assert_allclose(np.asarray(psl.qr_multiply(a, b[:2], mode="left")[0]), w[0],
                               rtol=1e-12)
    # batch dimensions broadcast (a's over c's and back)
    c = rng.standard_normal((3, 5, 4))
    got, r = psl.qr_multiply(a, c)
    assert got.shape == (3, 5, 2) and r.shape == (3, 2, 2)
    np.testing.assert_allclose(np.asarray(got)[1], sl.qr_multiply(a, c[1])[0], rtol=1e-12)
    f = pb.jit(lambda a, c: psl.qr_multiply(a, c, mode="left", conjugate=True))
    a3, c3 = _rand(rng, (2, 5, 3), np.complex128), _rand(rng, (2, 3, 2), np.complex128)
    for g, w in zip(f(a3, c3), psl.qr_multiply(a3, c3, mode="left", conjugate=True)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-13, atol=1e-14)
    check_vmap(lambda a, c: psl.qr_multiply(a, c, mode="left"), (a, c[0, :2, :3]))
    with pytest.raises(ValueError, match="qr_multiply: argument 'mode'"):
        psl.qr_multiply(a, b, mode="middle")
    with pytest.raises(ValueError, match=r"qr_multiply: argument 'c' of shape \(3,\) .*4 rows"):
        psl.qr_multiply(a, b[:3])
    with pytest.raises(ValueError, match=r"qr_multiply: argument 'c' .*2 columns, c has 4 rows"):
        psl.qr_multiply(a, np.ones((4, 1)), mode="left")
    with pytest.raises(ValueError, match="qr_multiply: the batch dimensions"):
        psl.qr_multiply(np.ones((2, 4, 2)), np.ones((3, 5, 4)))
    with pytest.raises(ValueError, match="qr_multiply: argument 'a' must have at least 2"):
        psl.qr_multiply(b, b)
    # integer and bool inputs promote to float, as JAX's
    assert psl.qr_multiply(np.ones((2, 2), bool), np.ones(2, np.int32))[0].dtype == np.float32


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 4)])
@pytest.mark.parametrize("mode", ["left", "right"])
def test_qr_multiply_grads(dt, shape, mode):
    """qr's derivative carries it (JAX's qr_multiply, on geqrf/ormqr, has none)."""
    rng = np.random.default_rng(31)
    m, n = shape
    a = _rand(rng, shape, dt) + np.eye(m, n)
    c = _rand(rng, (min(m, n), 2) if mode == "left" else (2, m), dt)
    check_grads(lambda a, c: psl.qr_multiply(a, c, mode=mode, conjugate=True), (a, c),
                order=2, modes=("fwd", "rev"))
