"""Non-symmetric and tridiagonal decompositions (primitives/linalg_eig.py, csrc/linalg_eig.c):
lax.linalg eig/schur/hessenberg/tridiagonal/tridiagonal_solve through invariants against
NumPy/SciPy, derivatives (check_grads order 2, both modes), vmap, jit, errors; the
jnp.linalg and pullback.scipy.linalg functions built on them."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, settings, strategies as st

import pullback as pb
import pullback.numpy as jnp
import pullback.scipy.linalg as psl
from pullback.lax import linalg as lax_linalg
from pullback.primitives import linalg_eig as pe
from pullback.test_util import check_grads, check_vmap, reference_backend

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
BATCHES = st.sampled_from([(), (0,), (1,), (3,), (2, 0), (2, 3)])
SIZES = st.sampled_from([0, 1, 2, 3, 6])
LAYOUTS = st.sampled_from(["contiguous", "transposed", "strided"])


def _tol(dt):
    return dict(rtol=2e-3, atol=2e-3) if dt in (np.float32, np.complex64) else \
        dict(rtol=1e-8, atol=1e-9)


def _rand(rng, shape, dt):
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def _layout(x, kind):
    if kind == "transposed" and x.ndim >= 2:
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    if kind == "strided" and x.ndim >= 1:
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    return x


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _complex(dt):
    return np.complex64 if dt in (np.float32, np.complex64) else np.complex128


# ---- eig ----

@settings(max_examples=40, deadline=None)
@given(batch=BATCHES, n=SIZES, dt=st.sampled_from(DTYPES), kind=LAYOUTS, seed=st.integers(0, 99))
def test_eig_invariants(batch, n, dt, kind, seed):
    a = _rand(np.random.default_rng(seed), batch + (n, n), dt)
    w, vl, vr = lax_linalg.eig(_layout(a, kind))
    w, vl, vr = (np.asarray(t) for t in (w, vl, vr))
    ct = _complex(dt)
    assert w.dtype == vl.dtype == vr.dtype == ct
    assert w.shape == batch + (n,) and vl.shape == vr.shape == batch + (n, n)
    tol = _tol(dt)
    scale = 1 + np.abs(a).sum(axis=(-1, -2), keepdims=True) if a.size else 1
    # a vr = vr diag(w); vlᴴ a = diag(w) vlᴴ
    np.testing.assert_allclose(a @ vr / scale, vr * w[..., None, :] / scale, **tol)
    np.testing.assert_allclose(_H(vl) @ a / scale, w[..., :, None] * _H(vl) / scale, **tol)
    # geev's normalisation: unit columns whose largest component is real
    if a.size:
        np.testing.assert_allclose(np.linalg.norm(vr, axis=-2), 1, **tol)
        big = np.take_along_axis(vr, np.abs(vr).argmax(-2)[..., None, :], -2)
        np.testing.assert_allclose(big.imag, 0, atol=tol["atol"])
    # the eigenvalues (and their order: the same geev on the same matrix) as SciPy's
    for idx in np.ndindex(*batch):
        if n:
            np.testing.assert_allclose(w[idx], sl.eigvals(a[idx]), **tol)


@pytest.mark.parametrize("left,right", [(False, False), (True, False), (False, True)])
def test_eig_output_selection(left, right):
    a = _rand(np.random.default_rng(0), (2, 4, 4), np.float64)
    outs = lax_linalg.eig(a, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    assert len(outs) == 1 + left + right
    w_all, vl_all, vr_all = lax_linalg.eig(a)
    np.testing.assert_allclose(np.asarray(outs[0]), np.asarray(w_all), rtol=1e-12)
    if left:
        np.testing.assert_allclose(np.asarray(outs[1]), np.asarray(vl_all), rtol=1e-12)
    if right:
        np.testing.assert_allclose(np.asarray(outs[-1]), np.asarray(vr_all), rtol=1e-12)


def test_eig_real_matrix_with_complex_pairs_and_jnp_linalg():
    rot = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    w, v = jnp.linalg.eig(rot)
    assert isinstance(jnp.linalg.eig(rot), jnp.linalg.EigResult)
    w_np = np.linalg.eigvals(rot)
    np.testing.assert_allclose(np.asarray(w), w_np, atol=1e-12)
    np.testing.assert_allclose(rot @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.linalg.eigvals(rot)), w_np, atol=1e-12)
    assert jnp.linalg.eigvals(np.eye(2, dtype=np.float32)).dtype == np.complex64
    # integers promote (as JAX)
    assert jnp.linalg.eigvals(np.eye(2, dtype=np.int32)).dtype == np.complex128 or \
        jnp.linalg.eigvals(np.eye(2, dtype=np.int32)).dtype == np.complex64


def test_eig_of_non_finite_input_is_nan_not_an_error():
    a = np.array([[np.nan, 1.0], [0.0, 1.0]])
    w, vr = lax_linalg.eig(a, compute_left_eigenvectors=False)
    assert np.isnan(np.asarray(w)).any() or not np.isfinite(np.asarray(vr)).all()


# ---- schur ----

def _check_schur(a, t, q, real, tol):
    n = a.shape[-1]
    np.testing.assert_allclose(q @ t @ _H(q), a, **tol)
    np.testing.assert_allclose(_H(q) @ q, np.broadcast_to(np.eye(n), q.shape), **tol)
    below = np.tril(np.ones((n, n), bool), -2 if real else -1)
    np.testing.assert_array_equal(t[..., below], 0)
    if real and n > 2:  # 2x2 blocks never chain: no two consecutive subdiagonal nonzeros
        sub = np.diagonal(t, -1, -2, -1) != 0
        assert not (sub[..., 1:] & sub[..., :-1]).any()


@settings(max_examples=40, deadline=None)
@given(batch=BATCHES, n=SIZES, dt=st.sampled_from(DTYPES), kind=LAYOUTS, seed=st.integers(0, 99))
def test_schur_invariants(batch, n, dt, kind, seed):
    a = _rand(np.random.default_rng(seed), batch + (n, n), dt)
    t, q = (np.asarray(x) for x in lax_linalg.schur(_layout(a, kind)))
    assert t.dtype == q.dtype == dt and t.shape == q.shape == a.shape
    _check_schur(a, t, q, np.dtype(dt).kind == "f", _tol(dt))
    t_only = lax_linalg.schur(a, compute_schur_vectors=False)
    assert isinstance(t_only, list) and len(t_only) == 1  # JAX's list, even of one
    np.testing.assert_allclose(np.asarray(t_only[0]), t, **_tol(dt))
    for idx in np.ndindex(*batch):  # the same gees as SciPy's
        if n and dt in (np.float64, np.complex128):
            want_t, _ = sl.schur(a[idx], output="real" if np.dtype(dt).kind == "f" else "complex")
            np.testing.assert_allclose(t[idx], want_t, rtol=1e-7, atol=1e-8)


def test_scipy_schur_output_and_rsf2csf():
    a = _rand(np.random.default_rng(1), (5, 5), np.float64)
    t, z = psl.schur(a)
    wt, wz = sl.schur(a)
    np.testing.assert_allclose(np.asarray(t), wt, atol=1e-10)
    tc, zc = psl.schur(a, output="complex")
    assert np.asarray(tc).dtype == np.complex128
    _check_schur(a, np.asarray(tc), np.asarray(zc), False, _tol(np.float64))
    t2, z2 = psl.rsf2csf(t, z)
    w2, wz2 = sl.rsf2csf(wt, wz)
    np.testing.assert_allclose(np.asarray(t2), w2, atol=1e-10)
    np.testing.assert_allclose(np.asarray(z2), wz2, atol=1e-10)
    _check_schur(a, np.asarray(t2), np.asarray(z2), False, _tol(np.float64))
    tb, zb = psl.rsf2csf(np.stack([wt, wt]), np.stack([wz, wz]))  # batched
    np.testing.assert_allclose(np.asarray(tb)[1], w2, atol=1e-10)
    with pytest.raises(ValueError, match="schur: expected 'output'"):
        psl.schur(a, output="x")
    with pytest.raises(NotImplementedError, match="schur: the sort feature"):
        lax_linalg.schur(a, sort_eig_vals=True)


# ---- hessenberg ----

@settings(max_examples=30, deadline=None)
@given(batch=BATCHES, n=SIZES, dt=st.sampled_from(DTYPES), kind=LAYOUTS, seed=st.integers(0, 99))
def test_hessenberg_matches_gehrd_and_reconstructs(batch, n, dt, kind, seed):
    a = _rand(np.random.default_rng(seed), batch + (n, n), dt)
    packed, taus = (np.asarray(x) for x in lax_linalg.hessenberg(_layout(a, kind)))
    assert packed.shape == a.shape and taus.shape == batch + (max(n - 1, 0),)
    assert packed.dtype == taus.dtype == dt
    with reference_backend():  # SciPy's gehrd on each matrix
        want_p, want_t = (np.asarray(x) for x in lax_linalg.hessenberg(a))
    np.testing.assert_allclose(packed, want_p, **_tol(dt))
    np.testing.assert_allclose(taus, want_t, **_tol(dt))
    h, q = (np.asarray(x) for x in psl.hessenberg(a, calc_q=True))
    np.testing.assert_allclose(q @ h @ _H(q), a, **_tol(dt))
    np.testing.assert_allclose(_H(q) @ q, np.broadcast_to(np.eye(n), q.shape), **_tol(dt))
    np.testing.assert_array_equal(h[..., np.tril(np.ones((n, n), bool), -2)], 0)
    if n > 2 and not batch:  # (SciPy returns n <= 2 untouched; gehrd, as JAX, makes a complex
        # subdiagonal real)
        np.testing.assert_allclose(np.asarray(psl.hessenberg(a)), sl.hessenberg(a),
                                   **_tol(dt))


# ---- tridiagonal ----

@settings(max_examples=30, deadline=None)
@given(batch=BATCHES, n=st.sampled_from([1, 2, 3, 6]), dt=st.sampled_from(DTYPES),
       lower=st.booleans(), seed=st.integers(0, 99))
def test_tridiagonal_matches_sytrd_and_keeps_the_spectrum(batch, n, dt, lower, seed):
    x = _rand(np.random.default_rng(seed), batch + (n, n), dt)
    h = x + _H(x)
    arr, d, e, taus = (np.asarray(v) for v in lax_linalg.tridiagonal(h, lower=lower))
    rt = np.float32 if dt in (np.float32, np.complex64) else np.float64
    assert d.dtype == e.dtype == rt and arr.dtype == taus.dtype == dt
    assert d.shape == batch + (n,) and e.shape == taus.shape == batch + (n - 1,)
    with reference_backend():
        want = [np.asarray(v) for v in lax_linalg.tridiagonal(h, lower=lower)]
    for got, w in zip((arr, d, e, taus), want):
        np.testing.assert_allclose(got, w, **_tol(dt))
    tri = np.zeros(batch + (n, n))
    i = np.arange(n)
    tri[..., i, i] = d
    tri[..., i[1:], i[:-1]] = e
    tri[..., i[:-1], i[1:]] = e
    if h.size:
        np.testing.assert_allclose(np.linalg.eigvalsh(tri), np.linalg.eigvalsh(h),
                                   rtol=_tol(dt)["rtol"], atol=10 * _tol(dt)["atol"])


# ---- tridiagonal_solve ----

def _tri_system(rng, batch, m, k, dt):
    dl, d, du = (_rand(rng, batch + (m,), dt) for _ in range(3))
    d = (d + 4 * np.sign(d.real + 0.1)).astype(dt)  # diagonally dominant
    return dl, d, du, _rand(rng, batch + (m, k), dt)


def _dense(dl, d, du):
    return pe._tridiagonal_dense(dl, d, du)


@settings(max_examples=40, deadline=None)
@given(batch=BATCHES, m=SIZES, k=st.sampled_from([0, 1, 3]), dt=st.sampled_from(DTYPES),
       kind=LAYOUTS, perturb=st.booleans(), seed=st.integers(0, 99))
def test_tridiagonal_solve_matches_dense_solve(batch, m, k, dt, kind, perturb, seed):
    dl, d, du, b = _tri_system(np.random.default_rng(seed), batch, m, k, dt)
    x = np.asarray(lax_linalg.tridiagonal_solve(*(_layout(v, kind) for v in (dl, d, du, b)),
                                                perturb_singular=perturb))
    assert x.shape == b.shape and x.dtype == dt
    if b.size:
        np.testing.assert_allclose(_dense(dl, d, du) @ x, b, **_tol(dt))
        with reference_backend():
            np.testing.assert_allclose(np.asarray(lax_linalg.tridiagonal_solve(dl, d, du, b)),
                                       x, **_tol(dt))


def test_tridiagonal_solve_singular_system():
    dl = np.array([0.0, 1.0, 0.0])
    d = np.array([1.0, 1.0, 1.0])
    du = np.array([1.0, 0.0, 0.0])  # rows 0 and 1 equal: singular
    b2 = np.array([[1.0], [2.0], [3.0]])
    assert np.isnan(np.asarray(lax_linalg.tridiagonal_solve(dl, d, du, b2))).all()
    x = np.asarray(lax_linalg.tridiagonal_solve(dl, d, du, b2, perturb_singular=True))
    assert np.isfinite(x).all()
    # JAX's perturbed CPU kernel gives the same numbers (the zero pivot becomes eps * max|U|)
    np.testing.assert_allclose(x[:, 0], [-4.503599627370496e15, 4.503599627370496e15, 3.0],
                               rtol=1e-12)
    # inverse iteration: the perturbed solve of a singular shift points along the null vector
    a = _dense(dl, d, du)
    v = x[:, 0] / np.linalg.norm(x[:, 0])
    assert np.linalg.norm(a @ v) < 1e-6


# ---- derivatives ----

def _grads(f, args, **kw):
    check_grads(f, args, order=2, modes=("fwd", "rev"), **kw)


def _distinct(rng, n, dt):
    """A matrix with well-separated eigenvalues 1..n (a similarity of a diagonal)."""
    p = _rand(rng, (n, n), dt) + 3 * np.eye(n)
    return (p @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(p)).astype(dt)


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_eigvals_grads_order_2(dt):
    a = _distinct(np.random.default_rng(3), 3, dt)
    _grads(lambda x: jnp.linalg.eigvals(x), (a,))
    # the eigenvalue derivative is tr-like: d w_i = (V⁻¹ dA V)_ii
    g = np.asarray(pb.grad(lambda x: jnp.sum(jnp.linalg.eigvals(x)).real)(a.real))
    np.testing.assert_allclose(g, np.eye(3), atol=1e-10)  # d tr(A) = tr(dA)


def test_eigvector_grads_need_the_opt_in():
    a = _distinct(np.random.default_rng(4), 3, np.float64)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        pb.jvp(lambda x: lax_linalg.eig(x)[2], (a,), (a,))
    f = lambda x: lax_linalg.eig(x, enable_eigvec_derivs=True)  # noqa: E731
    check_grads(lambda x: f(x)[2], (a,), order=1, modes=("fwd", "rev"))
    check_grads(lambda x: f(x)[1], (a,), order=1, modes=("fwd",))
    ac = _distinct(np.random.default_rng(5), 3, np.complex128)
    check_grads(lambda x: f(x)[2], (ac,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_tridiagonal_solve_grads_in_every_operand(dt):
    dl, d, du, b = _tri_system(np.random.default_rng(6), (2,), 4, 2, dt)
    _grads(lambda dl, d, du, b: lax_linalg.tridiagonal_solve(dl, d, du, b), (dl, d, du, b))


def test_tridiagonal_solve_transpose_is_the_transposed_system():
    dl, d, du, b = _tri_system(np.random.default_rng(7), (), 5, 2, np.float64)
    ct = np.random.default_rng(8).standard_normal((5, 2))
    _, vjp = pb.vjp(lambda b: lax_linalg.tridiagonal_solve(dl, d, du, b), b)
    (gb,) = vjp(ct)
    np.testing.assert_allclose(np.asarray(gb), np.linalg.solve(_dense(dl, d, du).T, ct),
                               rtol=1e-10)


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_expm_grads_and_frechet(dt):
    rng = np.random.default_rng(9)
    a = (0.5 * _rand(rng, (3, 3), dt)).astype(dt)
    _grads(lambda x: psl.expm(x), (a,))
    e = _rand(rng, (3, 3), dt)
    ex, fr = psl.expm_frechet(a, e)
    wex, wfr = sl.expm_frechet(a, e)
    np.testing.assert_allclose(np.asarray(ex), wex, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(fr), wfr, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(psl.expm_frechet(a, e, compute_expm=False)), wfr,
                               rtol=1e-9, atol=1e-12)


def test_no_derivative_where_jax_has_none():
    a = _rand(np.random.default_rng(10), (3, 3), np.float64)
    for f in (lambda x: lax_linalg.schur(x)[0], lambda x: lax_linalg.hessenberg(x)[0],
              lambda x: lax_linalg.tridiagonal(x)[1]):
        with pytest.raises(Exception, match="(?i)derivative|differentiat"):
            pb.jvp(f, (a,), (a,))


# ---- vmap, jit, backends ----

def test_vmap():
    rng = np.random.default_rng(11)
    a = _distinct(rng, 3, np.float64)
    check_vmap(lambda x: jnp.linalg.eigvals(x), (a,))
    check_vmap(lambda x: lax_linalg.schur(x)[0], (a,))
    check_vmap(lambda x: lax_linalg.hessenberg(x), (a,))
    check_vmap(lambda x: lax_linalg.tridiagonal(x + x.T), (a,))
    dl, d, du, b = _tri_system(rng, (), 4, 2, np.float64)
    check_vmap(lambda dl, d, du, b: lax_linalg.tridiagonal_solve(dl, d, du, b), (dl, d, du, b))
    check_vmap(lambda x: psl.expm(x), (0.3 * a,))


def test_vmap_of_the_right_hand_side_alone_is_one_solve():
    # JAX's rule: unbatched diagonals fold the batch into b's columns
    dl, d, du, _ = _tri_system(np.random.default_rng(12), (), 4, 2, np.float64)
    bs = np.random.default_rng(13).standard_normal((4, 2, 5))  # batch on the last axis
    f = pb.vmap(lambda b: lax_linalg.tridiagonal_solve(dl, d, du, b), in_axes=2)
    got = np.asarray(f(bs))
    want = np.stack([np.linalg.solve(_dense(dl, d, du), bs[..., i]) for i in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    jaxpr = str(pb.make_jaxpr(f)(bs))
    assert jaxpr.count("tridiagonal_solve") == 1


def test_jit_equals_eager_and_the_reference_backend():
    rng = np.random.default_rng(14)
    a = _rand(rng, (2, 4, 4), np.float64)
    dl, d, du, b = _tri_system(rng, (2,), 4, 3, np.complex128)
    fs = [lambda: lax_linalg.eig(a), lambda: lax_linalg.schur(a), lambda: lax_linalg.hessenberg(a),
          lambda: lax_linalg.tridiagonal(a + np.swapaxes(a, -1, -2), lower=False),
          lambda: lax_linalg.tridiagonal_solve(dl, d, du, b), lambda: psl.expm(a),
          lambda: psl.sqrtm(a @ np.swapaxes(a, -1, -2) + np.eye(4))]
    for f in fs:
        eager = pb.tree_util.tree_leaves(f())
        jitted = pb.tree_util.tree_leaves(pb.jit(f)())
        for g, w in zip(jitted, eager):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)
    with reference_backend():
        ref = [pb.tree_util.tree_leaves(f()) for f in fs[:5]]
    for f, r in zip(fs[:5], ref):
        for g, w in zip(pb.tree_util.tree_leaves(f()), r):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-10)


def test_large_batch_splits_over_threads():
    rng = np.random.default_rng(15)
    a = _rand(rng, (600, 6, 6), np.float32)
    w = np.asarray(lax_linalg.eig(a, compute_left_eigenvectors=False)[0])
    t = np.asarray(lax_linalg.schur(a)[0])
    for i in (0, 299, 599):
        np.testing.assert_array_equal(w[i], np.asarray(
            lax_linalg.eig(a[i], compute_left_eigenvectors=False)[0]))
        np.testing.assert_array_equal(t[i], np.asarray(lax_linalg.schur(a[i])[0]))


# ---- errors ----

def test_errors_name_function_argument_and_shapes():
    rect = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"eig: argument 'x' .*square.*\(2, 3\)"):
        lax_linalg.eig(rect)
    with pytest.raises(TypeError, match=r"eig: argument 'x' must be float32.*int32"):
        lax_linalg.eig(np.eye(2, dtype=np.int32))
    for dt in (np.float16, np.int32, np.bool_):  # (bfloat16 too: LAPACK has none of them)
        with pytest.raises(TypeError, match=r"schur: argument 'x' must be float32"):
            lax_linalg.schur(np.eye(2, dtype=dt))
        with pytest.raises(TypeError, match=r"tridiagonal: argument 'a' must be float32"):
            lax_linalg.tridiagonal(np.eye(2, dtype=dt))
        with pytest.raises(TypeError, match=r"tridiagonal_solve: argument 'dl' must be float32"):
            lax_linalg.tridiagonal_solve(*[np.ones(2, dt)] * 3, np.ones((2, 1), dt))
    with pytest.raises(ValueError, match=r"schur: argument 'x' .*square"):
        lax_linalg.schur(rect)
    with pytest.raises(ValueError, match=r"hessenberg: argument 'a' .*square"):
        lax_linalg.hessenberg(rect)
    with pytest.raises(ValueError, match=r"tridiagonal: argument 'a' must be a non-empty"):
        lax_linalg.tridiagonal(np.ones((0, 0)))
    with pytest.raises(ValueError, match="eig: only the lapack implementation"):
        lax_linalg.eig(np.eye(2), implementation=lax_linalg.EigImplementation.MAGMA)
    v = np.ones(3)
    with pytest.raises(TypeError, match=r"tridiagonal_solve: arguments 'dl', 'd' and 'du' must "
                                        r"have one shape"):
        lax_linalg.tridiagonal_solve(np.ones(2), v, v, np.ones((3, 1)))
    with pytest.raises(TypeError, match=r"tridiagonal_solve: argument 'b' of shape \(4, 1\)"):
        lax_linalg.tridiagonal_solve(v, v, v, np.ones((4, 1)))
    with pytest.raises(TypeError, match=r"tridiagonal_solve: .*one dtype"):
        lax_linalg.tridiagonal_solve(v.astype(np.float32), v, v, np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"expm: expected A to be a \(batched\) square"):
        psl.expm(rect)
    with pytest.raises(ValueError, match="eigvals: argument 'a'"):
        jnp.linalg.eigvals(rect)


# ---- scipy.linalg and jnp.linalg functions ----

@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_expm_matches_scipy(dt):
    rng = np.random.default_rng(16)
    for scale in (0.01, 0.3, 1.5, 8.0):  # every Pade order and squarings
        a = (scale * _rand(rng, (4, 4), dt)).astype(dt)
        got = np.asarray(psl.expm(a))
        assert got.dtype == dt
        np.testing.assert_allclose(got, sl.expm(a), rtol=5e-4 if dt == np.float32 else 1e-9,
                                   atol=1e-5 if dt == np.float32 else 1e-10)
    b = (0.5 * _rand(rng, (2, 3, 4, 4), dt)).astype(dt)
    np.testing.assert_allclose(np.asarray(psl.expm(b)), sl.expm(b), **_tol(dt))
    u = np.triu(a)
    np.testing.assert_allclose(np.asarray(psl.expm(u, upper_triangular=True)), sl.expm(u),
                               rtol=5e-4 if dt == np.float32 else 1e-9)
    assert np.isnan(np.asarray(psl.expm(1e6 * np.eye(2), max_squarings=4))).all()


def test_sqrtm_funm_solve_sylvester_lu_eigh_tridiagonal():
    rng = np.random.default_rng(17)
    a = _rand(rng, (4, 4), np.float64)
    s = a @ a.T + np.eye(4)
    np.testing.assert_allclose(np.asarray(psl.sqrtm(s)), sl.sqrtm(s), rtol=1e-8, atol=1e-10)
    r = np.asarray(psl.sqrtm(a))
    np.testing.assert_allclose(r @ r, a, atol=1e-9)
    np.testing.assert_allclose(np.asarray(psl.funm(a, jnp.exp)), sl.expm(a), rtol=1e-7)
    f, err = psl.funm(a, jnp.sin, disp=False)
    np.testing.assert_allclose(np.asarray(f), sl.funm(a, np.sin), rtol=1e-7, atol=1e-10)
    b, c = _rand(rng, (3, 3), np.float64), _rand(rng, (4, 3), np.float64)
    for method in ("schur", "eigen"):
        x = np.asarray(psl.solve_sylvester(a, b, c, method=method))
        np.testing.assert_allclose(x, sl.solve_sylvester(a, b, c), rtol=1e-7, atol=1e-9)
    p, l, u = (np.asarray(t) for t in psl.lu(a[:, :3]))
    wp, wl, wu = sl.lu(a[:, :3])
    for g, w in ((p, wp), (l, wl), (u, wu)):
        np.testing.assert_allclose(g, w, atol=1e-12)
    pl_, u2 = psl.lu(a, permute_l=True)
    np.testing.assert_allclose(np.asarray(pl_) @ np.asarray(u2), a, atol=1e-12)
    d, e = rng.standard_normal(6), rng.standard_normal(5)
    np.testing.assert_allclose(np.asarray(psl.eigh_tridiagonal(d, e, eigvals_only=True)),
                               sl.eigh_tridiagonal(d, e, eigvals_only=True), atol=1e-12)
    np.testing.assert_allclose(
        np.asarray(psl.eigh_tridiagonal(d, e, eigvals_only=True, select="i",
                                        select_range=(1, 3))),
        sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
        atol=1e-12)


def test_jnp_linalg_products():
    rng = np.random.default_rng(18)
    a, b = rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 3, 3))
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(np.asarray(jnp.linalg.cross(x, y)), np.cross(x, y), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.linalg.cross(x.T, y.T, axis=0)),
                               np.cross(x.T, y.T, axis=0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.linalg.diagonal(a, offset=1)),
                               np.linalg.diagonal(a, offset=1))
    np.testing.assert_allclose(np.asarray(jnp.linalg.matmul(a, b)), a @ b, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_transpose(a)),
                               np.swapaxes(a, -1, -2))
    for n in (-3, -1, 0, 1, 2, 3, 5, 6):
        np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_power(a + 2 * np.eye(3), n)),
                                   np.linalg.matrix_power(a + 2 * np.eye(3), n), rtol=1e-9)
    chain = [rng.standard_normal(s) for s in [(5,), (5, 30), (30, 2), (2, 40), (40,)]]
    np.testing.assert_allclose(np.asarray(jnp.linalg.multi_dot(chain)),
                               np.linalg.multi_dot(chain), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jnp.linalg.multi_dot(chain[1:4])),
                               np.linalg.multi_dot(chain[1:4]), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jnp.linalg.outer(x[0], y[1])), np.outer(x[0], y[1]))
    bt = np.ascontiguousarray(b.transpose(1, 2, 0))
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensordot(a, bt, axes=2)),
                               np.tensordot(a, bt, axes=2), rtol=1e-12)
    t = rng.standard_normal((6, 2, 3)) + np.eye(6).reshape(6, 2, 3)
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorinv(t, ind=1)),
                               np.linalg.tensorinv(t, ind=1), rtol=1e-9)
    ts = rng.standard_normal((2, 3, 6)) + np.eye(6).reshape(2, 3, 6)
    rhs = rng.standard_normal((2, 3))
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorsolve(ts, rhs)),
                               np.linalg.tensorsolve(ts, rhs), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(jnp.linalg.trace(a, offset=-1)),
                               np.linalg.trace(a, offset=-1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.linalg.vecdot(x, y)), np.linalg.vecdot(x, y),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="cross: both input arrays"):
        jnp.linalg.cross(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="multi_dot requires at least two arrays"):
        jnp.linalg.multi_dot([a[0]])
    with pytest.raises(TypeError, match="matrix_power: exponent must be an integer"):
        jnp.linalg.matrix_power(a, 1.5)


def test_special_matrices_match_scipy():
    c, r = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 6.0, 7.0])
    np.testing.assert_allclose(np.asarray(psl.toeplitz(c, r)), sl.toeplitz(c, r))
    np.testing.assert_allclose(np.asarray(psl.toeplitz(c + 1j)), sl.toeplitz(c + 1j))
    np.testing.assert_allclose(np.asarray(psl.toeplitz(np.stack([c, 2 * c]), r))[1],
                               sl.toeplitz(2 * c, r))
    np.testing.assert_allclose(np.asarray(psl.hankel(c, r)), sl.hankel(c, r))
    np.testing.assert_allclose(np.asarray(psl.hankel(c)), sl.hankel(c))
    np.testing.assert_allclose(np.asarray(psl.circulant(c)), sl.circulant(c))
    np.testing.assert_allclose(np.asarray(psl.block_diag(np.ones((2, 2)), 3.0, np.ones((1, 3)))),
                               sl.block_diag(np.ones((2, 2)), 3.0, np.ones((1, 3))))
    np.testing.assert_allclose(np.asarray(psl.leslie(r, c)), sl.leslie(r, c))
    np.testing.assert_allclose(np.asarray(psl.companion(r)), sl.companion(r))
    np.testing.assert_allclose(np.asarray(psl.fiedler(r)), sl.fiedler(r))
    for k in (2, 3, 6, 7):  # (k = 1: JAX gives shape (0, 0), SciPy (0,))
        p = np.arange(1.0, k + 1)
        np.testing.assert_allclose(np.asarray(psl.fiedler_companion(p)),
                                   sl.fiedler_companion(p), atol=1e-12)
    for mode in ("full", "valid", "same"):
        np.testing.assert_allclose(np.asarray(psl.convolution_matrix(r, 3, mode)),
                                   sl.convolution_matrix(r, 3, mode))
    np.testing.assert_allclose(np.asarray(psl.hilbert(4)), sl.hilbert(4), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(psl.invhilbert(4)), sl.invhilbert(4), rtol=1e-5)
    for kind in ("symmetric", "lower", "upper"):
        np.testing.assert_allclose(np.asarray(psl.pascal(4, kind)), sl.pascal(4, kind),
                                   rtol=1e-5)
        np.testing.assert_allclose(np.asarray(psl.invpascal(4, kind)), sl.invpascal(4, kind),
                                   rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(psl.helmert(4, full=True)), sl.helmert(4, full=True),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(psl.hadamard(4)), sl.hadamard(4))
    np.testing.assert_allclose(np.asarray(psl.dft(4, "sqrtn")), sl.dft(4, "sqrtn"), atol=1e-6)
    with pytest.raises(ValueError, match="hadamard: n must be a positive power of 2"):
        psl.hadamard(3)


def test_eigh_tridiagonal_eigenvectors():
    rng = np.random.default_rng(19)
    d, e = rng.standard_normal(7), rng.standard_normal(6)
    w, v = (np.asarray(x) for x in psl.eigh_tridiagonal(d, e))
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(t), atol=1e-12)
    np.testing.assert_allclose(t @ v, v * w, atol=1e-8)
    np.testing.assert_allclose(v.T @ v, np.eye(7), atol=1e-8)
    # a cluster of (numerically) equal eigenvalues still gets orthonormal vectors
    d2, e2 = np.ones(5), np.zeros(4)
    e2[2] = 1e-12
    w2, v2 = (np.asarray(x) for x in psl.eigh_tridiagonal(d2, e2))
    np.testing.assert_allclose(v2.T @ v2, np.eye(5), atol=1e-8)
    t2 = np.diag(d2) + np.diag(e2, 1) + np.diag(e2, -1)
    np.testing.assert_allclose(t2 @ v2, v2 * w2, atol=1e-8)


def test_values_equal_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    try:
        import jax.numpy as jjnp
        import jax.scipy.linalg as jsl
        rng = np.random.default_rng(20)
        a = rng.standard_normal((2, 4, 4))
        dl, d, du, b = _tri_system(rng, (2,), 4, 2, np.float64)
        cases = [(lambda m: m.linalg.eig(a) if m is jnp else jjnp.linalg.eig(a), None),
                 (lambda m: lax_linalg.schur(a), lambda: jax.lax.linalg.schur(a)),
                 (lambda m: lax_linalg.hessenberg(a), lambda: jax.lax.linalg.hessenberg(a)),
                 (lambda m: lax_linalg.tridiagonal(a + np.swapaxes(a, -1, -2)),
                  lambda: jax.lax.linalg.tridiagonal(a + np.swapaxes(a, -1, -2))),
                 (lambda m: lax_linalg.tridiagonal_solve(dl, d, du, b),
                  lambda: jax.lax.linalg.tridiagonal_solve(dl, d, du, b)),
                 (lambda m: psl.expm(a), lambda: jsl.expm(a)),
                 (lambda m: psl.sqrtm(a[0] @ a[0].T), lambda: jsl.sqrtm(a[0] @ a[0].T))]
        for ours, theirs in cases:
            got = pb.tree_util.tree_leaves(ours(jnp))
            want = jax.tree_util.tree_leaves(theirs() if theirs else ours(None))
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-11)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_eig_implementation_and_deprecated_use_magma():
    a = np.diag([1.0, 2.0])
    w = lax_linalg.eig(a, implementation=lax_linalg.EigImplementation.LAPACK)[0]
    np.testing.assert_allclose(np.asarray(w), [1, 2])
    with pytest.warns(DeprecationWarning, match="use_magma is deprecated"):
        lax_linalg.eig(a, use_magma=False)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="lapack"):
        lax_linalg.eig(a, use_magma=True)
    assert lax_linalg.eig_p is pe.eig_p and lax_linalg.tridiagonal_solve_p.name == \
        "tridiagonal_solve"
