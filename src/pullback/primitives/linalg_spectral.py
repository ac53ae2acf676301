"""Orthogonal and spectral decompositions (backends/cpu/csrc/linalg_spectral.c, on SciPy's
LAPACK): ``qr``, ``geqrf``, ``householder_product``, ``eigh``, ``svd``.

As in ``primitives/linalg.py``: leading batch dimensions, float32/float64/complex64/complex128,
one kernel call per batch (the batching rules move the vmapped dimension to the front).

* ``qr``: ``q, r`` (and with ``pivoting`` the int32 column permutation ``p``, ``x[..., p] = q
  r``); ``q`` is (m, m) with ``full_matrices`` else (m, min(m, n)).
* ``geqrf``: LAPACK's packed Householder reflectors and their scalar factors.
* ``householder_product``: the first n columns of ``H_1 ... H_k`` (orgqr/ungqr).
* ``eigh``: ``v, w`` of the Hermitian matrix held in ``x``'s ``lower`` (else upper) triangle;
  ``w`` real and ascending, ``v``'s columns the eigenvectors.
* ``svd``: ``s`` (real, descending) and, with ``compute_uv``, ``u`` and ``vh`` (JAX's
  primitive order ``s, u, vh``); ``algorithm`` 0 is gesdd, 1 gesvd.

Derivatives are JAX's (``jax/_src/lax/linalg.py``) from bound primitives, so they
differentiate again: eigh's divides by eigenvalue gaps (undefined for degenerate eigenvalues,
as JAX's); svd's by singular value gaps, with ``1/s`` masked at ``s = 0``; svd with vectors and
``full_matrices`` on a non-square matrix raises as JAX's does. ``geqrf`` and
``householder_product`` have no derivative (nor in JAX).
"""
from __future__ import annotations

import struct

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval, not_applicable
from . import conversion as _cv, elementwise as _ew, movement as _mv, reductions as _rd
from .linalg import (_H, _add, _conj, _eye_like, _matmul, _mul, _shape, _sub, _take_rows, _to_front,
                     _tril, check_matrix, lu_p, triangular_solve)
from .rules import NONLINEAR, Kernel, Zero
from .sort import _take_along_axis, argsort_p

_REAL = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def real_dtype(dt):
    """The real dtype of ``dt`` (itself when real)."""
    return _REAL.get(np.dtype(dt), np.dtype(dt))


def _cplx(x) -> bool:
    return np.issubdtype(get_aval(x).dtype, np.complexfloating)


# ---- abstract evaluation ----

def _qr_aval(x: ShapedArray, *, pivoting, full_matrices) -> list[ShapedArray]:
    check_matrix("qr", x, "x", square=False)
    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)
    b = x.shape[:-2]
    out = [ShapedArray(b + (m, k), x.dtype, x.weak_type),
           ShapedArray(b + (k, n), x.dtype, x.weak_type)]
    if pivoting:
        out.append(ShapedArray(b + (n,), dtypes.int32, False))
    return out


def _geqrf_aval(x: ShapedArray) -> list[ShapedArray]:
    check_matrix("geqrf", x, "a", square=False)
    return [ShapedArray(x.shape, x.dtype, x.weak_type),
            ShapedArray(x.shape[:-2] + (min(x.shape[-2:]),), x.dtype, x.weak_type)]


def _householder_product_aval(a: ShapedArray, taus: ShapedArray) -> ShapedArray:
    check_matrix("householder_product", a, "a", square=False)
    if taus.dtype != a.dtype:
        raise TypeError(f"householder_product: arguments 'a' and 'taus' must have one dtype, got "
                        f"{a.dtype} and {taus.dtype}")
    if taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2]:
        raise ValueError(f"householder_product: argument 'taus' must be (..., k) with the batch "
                         f"dimensions of 'a' {a.shape}, got shape {taus.shape}")
    m, n = a.shape[-2:]
    if m < n:
        raise ValueError(f"householder_product: argument 'a' must have at least as many rows as "
                         f"columns, got shape {a.shape}")
    if taus.shape[-1] > n:
        raise ValueError(f"householder_product: argument 'taus' of shape {taus.shape} has more "
                         f"than min(m, n) = {n} entries (a's shape {a.shape})")
    return ShapedArray(a.shape, a.dtype, a.weak_type)


def _eigh_aval(x: ShapedArray, *, lower) -> list[ShapedArray]:
    check_matrix("eigh", x, "x")
    return [ShapedArray(x.shape, x.dtype, x.weak_type),
            ShapedArray(x.shape[:-1], real_dtype(x.dtype), x.weak_type)]


def _svd_aval(x: ShapedArray, *, full_matrices, compute_uv, algorithm) -> list[ShapedArray]:
    check_matrix("svd", x, "x", square=False)
    m, n = x.shape[-2:]
    k = min(m, n)
    b = x.shape[:-2]
    out = [ShapedArray(b + (k,), real_dtype(x.dtype), x.weak_type)]
    if compute_uv:
        out += [ShapedArray(b + (m, m if full_matrices else k), x.dtype, x.weak_type),
                ShapedArray(b + (n if full_matrices else k, n), x.dtype, x.weak_type)]
    return out


# ---- NumPy references ----

def _per_matrix(x, fn):
    """fn over each (m, n) matrix of x: a list of outputs stacked back under x's batch dims."""
    batch = x.shape[:-2]
    flat = x.reshape((-1,) + x.shape[-2:])
    res = [fn(flat[i]) for i in range(flat.shape[0])]
    return res, batch


def _stack(res, batch, j, shape, dtype):
    arr = np.empty((len(res),) + shape, dtype)
    for i, r in enumerate(res):
        arr[i] = r[j]
    return arr.reshape(batch + shape)


def _pivot_order(a):
    """geqp3's column order: greedily the column of largest norm orthogonal to those chosen."""
    m, n = a.shape
    res = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64).copy()
    order = list(range(n))
    for j in range(min(m, n)):
        # the columns' parts outside the span already chosen
        norms = np.array([np.linalg.norm(res[:, c]) for c in order[j:]])
        p = j + int(np.argmax(norms))
        order[j], order[p] = order[p], order[j]
        v = res[:, order[j]]
        nv = np.linalg.norm(v)
        if nv == 0:
            break
        v = v / nv
        for c in order[j + 1:]:
            res[:, c] -= v * np.vdot(v, res[:, c])
        res[:, order[j]] = 0
    return np.array(order, np.int32)


def _qr_reference(x, *, pivoting, full_matrices):
    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)

    def one(a):
        p = _pivot_order(a) if pivoting else np.arange(n, dtype=np.int32)
        if m == 0 or n == 0:
            return np.eye(m, k, dtype=x.dtype), np.zeros((k, n), x.dtype), np.zeros(n, np.int32)
        q, r = np.linalg.qr(a[:, p], mode="complete" if full_matrices else "reduced")
        return q, r, p
    res, batch = _per_matrix(x, one)
    out = [_stack(res, batch, 0, (m, k), x.dtype), _stack(res, batch, 1, (k, n), x.dtype)]
    if pivoting:
        out.append(_stack(res, batch, 2, (n,), np.int32))
    return out


def _geqrf_one(a):
    """LAPACK's geqr2 (xLARFG's reflector convention): packed reflectors and taus."""
    a = a.copy()
    m, n = a.shape
    taus = np.zeros(min(m, n), a.dtype)
    for j in range(min(m, n)):
        alpha, x = a[j, j], a[j + 1:, j]
        xnorm = np.linalg.norm(x)
        if xnorm == 0 and np.imag(alpha) == 0:
            continue
        beta = -np.copysign(np.sqrt(abs(alpha) ** 2 + xnorm ** 2), np.real(alpha))
        taus[j] = (beta - alpha) / beta
        a[j + 1:, j] = x / (alpha - beta)
        a[j, j] = beta
        v = np.concatenate([[1], a[j + 1:, j]]).astype(a.dtype)
        # apply H^H = I - conj(tau) v v^H to the trailing columns
        rest = a[j:, j + 1:]
        a[j:, j + 1:] = rest - np.conj(taus[j]) * np.outer(v, np.conj(v) @ rest)
    return a, taus


def _geqrf_reference(x):
    res, batch = _per_matrix(x, _geqrf_one)
    return [_stack(res, batch, 0, x.shape[-2:], x.dtype),
            _stack(res, batch, 1, (min(x.shape[-2:]),), x.dtype)]


def _householder_one(a, taus):
    m, n = a.shape
    q = np.eye(m, dtype=a.dtype)
    for i in range(taus.shape[0]):
        v = np.zeros(m, a.dtype)
        v[i], v[i + 1:] = 1, a[i + 1:, i]
        q = q - taus[i] * np.outer(q @ v, np.conj(v))
    return q[:, :n]


def _householder_product_reference(a, taus):
    out = np.empty(a.shape, a.dtype)
    fa, ft = a.reshape((-1,) + a.shape[-2:]), taus.reshape((-1, taus.shape[-1]))
    fo = out.reshape(fa.shape)
    for i in range(fa.shape[0]):
        fo[i] = _householder_one(fa[i], ft[i])
    return out


def _eigh_reference(x, *, lower):
    n = x.shape[-1]
    rd = real_dtype(x.dtype)

    def one(a):
        try:
            w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
        except np.linalg.LinAlgError:  # no convergence (NaN input): NaNs, as the kernel
            return np.full((n, n), np.nan, x.dtype), np.full(n, np.nan, rd)
        return v, w
    res, batch = _per_matrix(x, one)
    return [_stack(res, batch, 0, (n, n), x.dtype), _stack(res, batch, 1, (n,), rd)]


def _svd_reference(x, *, full_matrices, compute_uv, algorithm):
    m, n = x.shape[-2:]
    k = min(m, n)
    uc, vr = (m, n) if full_matrices else (k, k)
    rd = real_dtype(x.dtype)

    def one(a):
        if k == 0:
            return np.zeros(0, rd), np.eye(m, uc, dtype=x.dtype), np.eye(vr, n, dtype=x.dtype)
        try:
            if not compute_uv:
                return (np.linalg.svd(a, compute_uv=False),)
            u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
            return s, u, vh
        except np.linalg.LinAlgError:  # no convergence (NaN input): NaNs, as the kernel
            return (np.full(k, np.nan, rd), np.full((m, uc), np.nan, x.dtype),
                    np.full((vr, n), np.nan, x.dtype))
    res, batch = _per_matrix(x, one)
    out = [_stack(res, batch, 0, (k,), rd)]
    if compute_uv:
        out += [_stack(res, batch, 1, (m, uc), x.dtype), _stack(res, batch, 2, (vr, n), x.dtype)]
    return out


# ---- building blocks ----

def _real(x):
    return _ew.real_p.bind(x) if _cplx(x) else x


def _astype(x, dt):
    if get_aval(x).dtype == np.dtype(dt):
        return x
    return _cv.convert_element_type_p.bind(x, new_dtype=np.dtype(dt), weak_type=False)


def _diag(x):
    """The diagonal (..., k) of square (..., k, k) matrices."""
    nd = len(_shape(x))
    return _rd.reduce_sum_p.bind(_mul(x, _eye_like(x)), axes=(nd - 1,))


def _spread(v, shape, axis_from_end: int):
    """v (..., k) broadcast to (..., k, k) along the last (-1) or second-last (-2) axis."""
    nd = len(shape)
    b = tuple(range(nd - 2))
    return _mv.broadcast_in_dim_p.bind(v, shape=tuple(shape),
                                       broadcast_dimensions=b + (nd + axis_from_end,))


def _cut(x, axis: int, start: int, stop: int):
    shape = _shape(x)
    nd = len(shape)
    axis %= nd
    lo = tuple(start if d == axis else 0 for d in range(nd))
    hi = tuple(stop if d == axis else shape[d] for d in range(nd))
    return _mv.slice_p.bind(x, start_indices=lo, limit_indices=hi, strides=None)


def _concat(a, b, axis: int):
    return _mv.concatenate_p.bind(a, b, dimension=axis % len(_shape(a)))


def _take_cols(x, p):
    """x[..., :, p[...]] for int32 p (..., n)."""
    shape = _shape(x)
    if 0 in shape:
        return x
    nd = len(shape)
    idx = _mv.broadcast_in_dim_p.bind(p, shape=shape,
                                      broadcast_dimensions=tuple(range(nd - 2)) + (nd - 1,))
    return _take_along_axis(x, idx, nd - 1)


def symmetrize(x):
    """``(x + xᴴ) / 2`` from bound primitives."""
    return _mul(_add(x, _H(x)), _ew._c(x, 0.5))


# ---- qr's rules ----

def _thin_qr_jvp(q, r, dx):
    # JAX's _thin_qr_jvp (j-towns.github.io/papers/qr-derivative.pdf), m >= n
    dx_rinv = triangular_solve(r, dx)  # x r = dx
    qt_dx_rinv = _matmul(_H(q), dx_rinv)
    low = _tril(qt_dx_rinv, -1)
    do = _sub(low, _H(low))  # skew-Hermitian
    if _cplx(qt_dx_rinv):  # the imaginary diagonal complex inputs need
        im = _sub(qt_dx_rinv, _astype(_real(qt_dx_rinv), get_aval(qt_dx_rinv).dtype))
        do = _add(do, _mul(_eye_like(do), im))
    dq = _add(_matmul(q, _sub(do, qt_dx_rinv)), dx_rinv)
    dr = _matmul(_sub(qt_dx_rinv, do), r)
    return dq, dr


def _lu_solve_h(a, b):
    """a⁻ᴴ b from lu(a): ``aᴴ x = b`` (JAX's lu_solve with trans=2)."""
    lu, _, perm = lu_p.bind(a)
    x = triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                         conjugate_a=True)
    x = triangular_solve(lu, x, left_side=True, lower=True, transpose_a=True, conjugate_a=True,
                         unit_diagonal=True)
    nd = len(_shape(perm))
    inv = argsort_p.bind(perm, dimension=nd - 1, descending=False, index_dtype=dtypes.int32)
    return _take_rows(x, inv)


def _qr_jvp(primals, tangents, *, pivoting, full_matrices):
    (x,), (dx,) = primals, tangents
    outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices)
    q, r = outs[0], outs[1]
    if type(dx) is Zero:
        return outs, [Zero.from_primal(o) for o in outs]
    m, n = _shape(x)[-2:]
    if pivoting:
        dx = _take_cols(dx, outs[2])
    if m < n:  # wide: x = [x1 x2], x1 = q r1 square, r2 = qᴴ x2 (JAX's rule)
        xp = _take_cols(x, outs[2]) if pivoting else x
        x2, dx1, dx2 = _cut(xp, -1, m, n), _cut(dx, -1, 0, m), _cut(dx, -1, m, n)
        dq, dr1 = _thin_qr_jvp(q, _cut(r, -1, 0, m), dx1)
        dr2 = _add(_matmul(_H(dq), x2), _matmul(_H(q), dx2))
        dr = _concat(dr1, dr2, -1)
    else:
        q_mn = _cut(q, -1, 0, n) if full_matrices else q
        r_nn = _cut(r, -2, 0, n) if full_matrices else r
        dq, dr = _thin_qr_jvp(q_mn, r_nn, dx)
        if full_matrices and m > n:
            # arXiv:2409.13374 (JAX's rule): Z = Q_pn (Q_nn - I)⁻¹, then eq. 32
            q_nn, q_pn, q_mp = _cut(q_mn, -2, 0, n), _cut(q_mn, -2, n, m), _cut(q, -1, n, m)
            dq_nn, dq_pn = _cut(dq, -2, 0, n), _cut(dq, -2, n, m)
            z_h = _lu_solve_h(_sub(q_nn, _eye_like(q_nn)), _H(q_pn))
            z = _H(z_h)
            dq_mp = _sub(_matmul(dq, z_h),
                         _matmul(_add(q_mn, _matmul(q_mp, z)),
                                 _H(_sub(dq_pn, _matmul(z, dq_nn)))))
            dq = _concat(dq, dq_mp, -1)
            zeros = _ew._full(_shape(dr)[:-2] + (m - n, n), dr, 0)
            dr = _concat(dr, zeros, -2)
    tans = [dq, dr] + ([Zero.from_primal(outs[2])] if pivoting else [])
    return outs, tans


def _qr_batch(vals, dims, **params):
    (x,) = _to_front(vals, dims)
    outs = qr_p.bind(x, **params)
    return outs, [0] * len(outs)


def _geqrf_batch(vals, dims):
    (x,) = _to_front(vals, dims)
    return geqrf_p.bind(x), [0, 0]


def _householder_product_batch(vals, dims):
    a, t = _to_front(vals, dims)
    return householder_product_p.bind(a, t), 0


# ---- eigh's rules ----

def _eigh_jvp(primals, tangents, *, lower):
    # JAX's rule (non-degenerate perturbation theory): undefined at repeated eigenvalues
    (a,), (a_dot,) = primals, tangents
    v, w_real = eigh_p.bind(symmetrize(a), lower=lower)
    if type(a_dot) is Zero:
        return [v, w_real], [Zero.from_primal(v), Zero.from_primal(w_real)]
    shape = _shape(a)
    w = _astype(w_real, get_aval(a).dtype)
    eye = _eye_like(_ew._full(shape, a, 0))
    # 1 / (w_j - w_i) off the diagonal, 0 on it
    gaps = _sub(_add(eye, _spread(w, shape, -1)), _spread(w, shape, -2))
    fmat = _sub(_ew.integer_pow_p.bind(gaps, y=-1), eye)
    vdag_adot_v = _matmul(_matmul(_H(v), a_dot), v)
    dv = _matmul(v, _mul(fmat, vdag_adot_v))
    dw = _diag(_real(vdag_adot_v))
    return [v, w_real], [dv, dw]


def _eigh_batch(vals, dims, **params):
    (x,) = _to_front(vals, dims)
    return eigh_p.bind(x, **params), [0, 0]


# ---- svd's rules ----

def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, algorithm):
    (A,), (dA,) = primals, tangents
    m, n = _shape(A)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices")
    s, U, Vt = svd_p.bind(A, full_matrices=False, compute_uv=True, algorithm=algorithm)
    prim = [s, U, Vt] if compute_uv else [s]
    if type(dA) is Zero:
        return prim, [Zero.from_primal(o) for o in prim]
    dt = get_aval(A).dtype
    Ut, V = _H(U), _H(Vt)
    dS = _matmul(_matmul(Ut, dA), V)
    ds = _diag(_real(dS))
    if not compute_uv:
        return [s], [ds]
    k = _shape(s)[-1]
    kk = _shape(s)[:-1] + (k, k)
    s_row = _spread(s, kk, -1)  # s_dim: s along the last axis
    s_col = _spread(s, kk, -2)
    s_diffs = _mul(_add(s_row, s_col), _sub(s_row, s_col))
    eye_r = _eye_like(_ew._full(kk, s, 0))
    F = _sub(_ew.div_p.bind(_ew._full(kk, s, 1), _add(s_diffs, eye_r)), eye_r)
    s_row_c = _astype(s_row, dt)
    dSS = _mul(s_row_c, dS)
    SdS = _mul(_astype(s_col, dt), dS)
    s_zeros = _astype(_ew.eq_p.bind(s, _ew._c(s, 0)), get_aval(s).dtype)
    s_inv = _sub(_ew.div_p.bind(_ew._full(_shape(s), s, 1), _add(s, s_zeros)), s_zeros)
    s_inv_mat = _mul(_spread(s_inv, kk, -1), eye_r)
    dUdV_diag = _mul(_mul(_sub(dS, _H(dS)), _ew._c(dS, 0.5)), _astype(s_inv_mat, dt))
    Fc = _astype(F, dt)
    dU = _matmul(U, _add(_mul(Fc, _add(dSS, _H(dSS))), dUdV_diag))
    dV = _matmul(V, _mul(Fc, _add(SdS, _H(SdS))))
    if m > n:
        dAV = _matmul(dA, V)
        dU = _add(dU, _ew.div_p.bind(_sub(dAV, _matmul(U, _matmul(Ut, dAV))),
                                     _spread(_astype(s, dt), _shape(dAV), -1)))
    if n > m:
        dAHU = _matmul(_H(dA), U)
        dV = _add(dV, _ew.div_p.bind(_sub(dAHU, _matmul(V, _matmul(Vt, dAHU))),
                                     _spread(_astype(s, dt), _shape(dAHU), -1)))
    return [s, U, Vt], [ds, dU, _H(dV)]


def _svd_batch(vals, dims, **params):
    (x,) = _to_front(vals, dims)
    outs = svd_p.bind(x, **params)
    return outs, [0] * len(outs)


# ---- the primitives ----

_QR_PARAMS = struct.Struct("=2i")    # csrc/linalg_spectral.c: qr_params
_EIGH_PARAMS = struct.Struct("=i")   # eigh_params
_SVD_PARAMS = struct.Struct("=3i")   # svd_params
_NO_DERIVATIVE = not_applicable("no derivative (JAX defines none either): differentiate qr")

qr_p = Primitive("qr", multiple_results=True)
qr_p.abstract_eval = _qr_aval
qr_p.reference = _qr_reference
qr_p.cpu = Kernel(qr_p, lambda *, pivoting, full_matrices: "qr_pivoting" if pivoting else "qr",
                  lambda x, *, pivoting, full_matrices: _QR_PARAMS.pack(full_matrices, pivoting))
qr_p.jvp = _qr_jvp
qr_p.transpose = NONLINEAR
qr_p.batch = _qr_batch

geqrf_p = Primitive("geqrf", multiple_results=True)
geqrf_p.abstract_eval = _geqrf_aval
geqrf_p.reference = _geqrf_reference
geqrf_p.cpu = Kernel(geqrf_p, "geqrf", lambda x: b"")
geqrf_p.jvp = _NO_DERIVATIVE
geqrf_p.transpose = NONLINEAR
geqrf_p.batch = _geqrf_batch

householder_product_p = Primitive("householder_product")
householder_product_p.abstract_eval = _householder_product_aval
householder_product_p.reference = _householder_product_reference
householder_product_p.cpu = Kernel(householder_product_p, "householder_product",
                                   lambda a, taus: b"")
householder_product_p.jvp = _NO_DERIVATIVE
householder_product_p.transpose = NONLINEAR
householder_product_p.batch = _householder_product_batch

eigh_p = Primitive("eigh", multiple_results=True)
eigh_p.abstract_eval = _eigh_aval
eigh_p.reference = _eigh_reference
eigh_p.cpu = Kernel(eigh_p, "eigh", lambda x, *, lower: _EIGH_PARAMS.pack(lower))
eigh_p.jvp = _eigh_jvp
eigh_p.transpose = NONLINEAR
eigh_p.batch = _eigh_batch

svd_p = Primitive("svd", multiple_results=True)
svd_p.abstract_eval = _svd_aval
svd_p.reference = _svd_reference
svd_p.cpu = Kernel(svd_p, lambda *, full_matrices, compute_uv, algorithm:
                   "svd" if compute_uv else "svd_values",
                   lambda x, *, full_matrices, compute_uv, algorithm:
                   _SVD_PARAMS.pack(full_matrices, compute_uv, algorithm))
svd_p.jvp = _svd_jvp
svd_p.transpose = NONLINEAR
svd_p.batch = _svd_batch
