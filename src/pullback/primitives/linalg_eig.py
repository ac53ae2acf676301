"""Non-symmetric and tridiagonal decompositions (backends/cpu/csrc/linalg_eig.c, on SciPy's
LAPACK capsules), as ``jax.lax.linalg`` declares them.

Every primitive takes leading batch dimensions and float32, float64, complex64 or complex128
operands; the kernels loop over the batch in one call, so the batching rules move the vmapped
dimension to the front (``tridiagonal_solve`` with unbatched diagonals folds it into ``b``'s
columns instead, as JAX's rule does).

* ``eig``: eigenvalues ``w`` and left/right eigenvectors (geev), complex: ``a vr = vr diag(w)``,
  ``vlᴴ a = diag(w) vlᴴ``; each eigenvector has unit norm and its largest component real.
* ``schur``: ``a = Q T Qᴴ`` (gees), ``T`` upper triangular (complex) or quasi-triangular with
  2x2 blocks for complex pairs (real).
* ``hessenberg``: gehrd's ``(a, taus)``: H in the upper triangle and first subdiagonal, the
  Householder reflectors below.
* ``tridiagonal``: sytrd/hetrd's ``(a, d, e, taus)`` of a Hermitian matrix's ``lower`` (or
  upper) triangle.
* ``tridiagonal_solve``: ``A x = b`` for tridiagonal ``A`` (gtsv, partial pivoting).

A factorization that fails gives NaNs for that matrix (JAX's results). Derivatives are JAX's
(``jax/_src/lax/linalg.py``): eig's eigenvalues (eigenvectors with ``enable_eigvec_derivs``),
tridiagonal_solve in every operand (linear in ``b``); JAX defines none for schur, hessenberg and
tridiagonal.
"""
from __future__ import annotations

import struct

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval, not_applicable
from . import elementwise as _ew, movement as _mv, reductions as _rd
from .conversion import convert_element_type_p
from .linalg import (_H, _add, _conj, _eye_like, _matmul, _mT, _mul, _shape, _sub, _take_rows,
                     _to_front, check_matrix, lu_p, triangular_solve)
from .rules import NONLINEAR, Kernel, Zero, instantiate, move_bdim

_NO_JVP = "JAX defines no derivative of {} (jax/_src/lax/linalg.py)"


def _complex_dtype(dt):
    return np.dtype(np.complex64) if np.dtype(dt) in (np.float32, np.complex64) \
        else np.dtype(np.complex128)


def _real_dtype(dt):
    return np.dtype(np.float32) if np.dtype(dt) in (np.float32, np.complex64) \
        else np.dtype(np.float64)


def _per_matrix(x, core, fn):
    """Applies fn to each matrix of x (last `core` dims): a list of results per batch element."""
    flat = x.reshape((-1,) + x.shape[x.ndim - core:])
    return [fn(flat[i]) for i in range(flat.shape[0])]


def _stack(parts, batch, shape, dtype):
    out = np.empty((int(np.prod(batch, dtype=np.int64)),) + shape, dtype)
    for i, p in enumerate(parts):
        out[i] = p
    return out.reshape(batch + shape)


# ---- eig ----

def _eig_aval(x: ShapedArray, *, compute_left_eigenvectors, compute_right_eigenvectors,
              enable_eigvec_derivs, implementation):
    check_matrix("eig", x, "x")
    if implementation is not None and getattr(implementation, "value", implementation) \
            != "lapack":
        raise ValueError("eig: only the lapack implementation is supported on CPU, got "
                         f"implementation={implementation!r}")
    ct = _complex_dtype(x.dtype)
    outs = [ShapedArray(x.shape[:-1], ct, False)]
    outs += [ShapedArray(x.shape, ct, False)] * (bool(compute_left_eigenvectors)
                                                  + bool(compute_right_eigenvectors))
    return outs


def _eig_reference(x, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    import scipy.linalg as sl
    n = x.shape[-1]
    ct = _complex_dtype(x.dtype)

    def one(m):
        try:
            w, vl, vr = sl.eig(m, left=True, right=True, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            nan = np.full((n, n), np.nan, ct)
            return np.full(n, np.nan, ct), nan, nan
        return w.astype(ct), vl.astype(ct), vr.astype(ct)
    parts = _per_matrix(x, 2, one) if n else []
    batch = x.shape[:-2]
    if not n:
        parts = [(np.zeros(0, ct), np.zeros((0, 0), ct), np.zeros((0, 0), ct))] * \
            int(np.prod(batch, dtype=np.int64))
    outs = [_stack([p[0] for p in parts], batch, (n,), ct)]
    if compute_left_eigenvectors:
        outs.append(_stack([p[1] for p in parts], batch, (n, n), ct))
    if compute_right_eigenvectors:
        outs.append(_stack([p[2] for p in parts], batch, (n, n), ct))
    return outs


def _solve(a, b):
    """a⁻¹ b for (..., n, n) a and (..., n, k) b, from bound primitives (lu and two triangular
    solves), so that it differentiates again."""
    lu, _, perm = lu_p.bind(a)
    x = _take_rows(b, perm)
    x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu, x, left_side=True, lower=False)


def _diag(x):
    """The diagonal (..., n) of (..., n, n) x."""
    n = _shape(x)[-1]
    eye = _eye_like(x)
    return _rd.reduce_sum_p.bind(_mul(x, eye), axes=(len(_shape(x)) - 1,)) if n else \
        _ew._full(_shape(x)[:-1], x, 0)


def _eig_vec_jvp(w, v, da):
    # JAX's _eig_vec_jvp: nondegenerate perturbation theory, the eigenvector tangent fixed by
    # geev's normalisation (unit 2-norm, largest-magnitude component real)
    shape = _shape(v)
    nd = len(shape)
    eye = _eye_like(v)
    wr = _mv.broadcast_in_dim_p.bind(w, shape=shape, broadcast_dimensions=tuple(range(nd - 2))
                                     + (nd - 1,))
    wc = _mv.broadcast_in_dim_p.bind(w, shape=shape, broadcast_dimensions=tuple(range(nd - 1)))
    F = _sub(_ew.reciprocal_p.bind(_add(eye, _sub(wr, wc))), eye)
    P = _matmul(_solve(v, da), v)
    dw = _diag(P)
    U = _matmul(v, _mul(F, P))
    k = _rd.argmax_p.bind(_ew.abs_p.bind(v), axes=(nd - 2,), index_dtype=dtypes.int32)
    rows = _mv.iota_p.bind(dtype=dtypes.int32, shape=shape, dimension=nd - 2)
    kb = _mv.broadcast_in_dim_p.bind(k, shape=shape, broadcast_dimensions=tuple(range(nd - 2))
                                     + (nd - 1,))
    mask = _ew.select_n_p.bind(_ew.eq_p.bind(rows, kb), _ew._full(shape, v, 0),
                               _ew._full(shape, v, 1))
    re = _ew.neg_p.bind(_ew.real_p.bind(_rd.reduce_sum_p.bind(_mul(_conj(v), U), axes=(nd - 2,))))
    im = _ew.div_p.bind(
        _ew.neg_p.bind(_ew.imag_p.bind(_rd.reduce_sum_p.bind(_mul(mask, U), axes=(nd - 2,)))),
        _ew.real_p.bind(_rd.reduce_sum_p.bind(_mul(mask, v), axes=(nd - 2,))))
    c = _ew.complex_p.bind(re, im)
    cb = _mv.broadcast_in_dim_p.bind(c, shape=shape, broadcast_dimensions=tuple(range(nd - 2))
                                     + (nd - 1,))
    return dw, _add(U, _mul(v, cb))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):
    (a,), (da,) = primals, tangents
    vectors = compute_left_eigenvectors or compute_right_eigenvectors
    if vectors and not enable_eigvec_derivs:
        raise NotImplementedError(
            "eig: derivatives of non-symmetric eigenvectors are only valid under assumptions "
            "on the input that cannot be checked (see the enable_eigvec_derivs argument to "
            "lax.linalg.eig). Pass enable_eigvec_derivs=True to opt in. See "
            "https://github.com/jax-ml/jax/issues/2748 for discussion.")
    # the eigenvalues' tangent diag(V⁻¹ dA V) does not depend on how V is scaled, so the inner
    # eig differentiates its vectors without the opt-in when only eigenvalues were asked for
    # (second derivatives of eigenvalues then work; JAX raises there)
    outs = eig_p.bind(a, compute_left_eigenvectors=compute_left_eigenvectors,
                      compute_right_eigenvectors=True,
                      enable_eigvec_derivs=True if not vectors else enable_eigvec_derivs,
                      implementation=implementation)
    w, vr = outs[0], outs[-1]
    primal = [w] + ([outs[1]] if compute_left_eigenvectors else []) + \
        ([vr] if compute_right_eigenvectors else [])
    if type(da) is Zero:
        return primal, [Zero.from_primal(o) for o in primal]
    ct = get_aval(vr).dtype
    if get_aval(da).dtype != ct:
        da = convert_element_type_p.bind(da, new_dtype=ct, weak_type=False)
    if not vectors:
        nd = len(_shape(vr))
        return [w], [_rd.reduce_sum_p.bind(_mul(_solve(vr, da), _mT(vr)), axes=(nd - 1,))]
    dw, dvr = _eig_vec_jvp(w, vr, da)
    tangent = [dw]
    if compute_left_eigenvectors:
        _, dvl = _eig_vec_jvp(_conj(w), outs[1], _H(da))
        tangent.append(dvl)
    if compute_right_eigenvectors:
        tangent.append(dvr)
    return primal, tangent


def _eig_batch(vals, dims, **params):
    (x,) = _to_front(vals, dims)
    outs = eig_p.bind(x, **params)
    return outs, [0] * len(outs)


_EIG_PARAMS = struct.Struct("=2i")  # csrc/linalg_eig.c: eig_params

eig_p = Primitive("eig", multiple_results=True)
eig_p.abstract_eval = _eig_aval
eig_p.reference = _eig_reference
eig_p.cpu = Kernel(eig_p, "eig", lambda x, *, compute_left_eigenvectors,
                   compute_right_eigenvectors, **_: _EIG_PARAMS.pack(
                       bool(compute_left_eigenvectors), bool(compute_right_eigenvectors)))
eig_p.jvp = _eig_jvp
eig_p.transpose = NONLINEAR
eig_p.batch = _eig_batch


# ---- schur ----

def _schur_aval(x: ShapedArray, *, compute_schur_vectors, sort_eig_vals, select_callable):
    check_matrix("schur", x, "x")
    if sort_eig_vals:
        # JAX's CPU lowering raises the same: gees's select callback would run Python code
        # inside a kernel
        raise NotImplementedError("schur: the sort feature of LAPACK's gees routine is not "
                                  "implemented (sort_eig_vals=True)")
    out = ShapedArray(x.shape, x.dtype, False)
    return [out, out] if compute_schur_vectors else [out]


def _schur_reference(x, *, compute_schur_vectors, **_):
    import scipy.linalg as sl
    n = x.shape[-1]
    batch = x.shape[:-2]
    output = "complex" if np.iscomplexobj(x) else "real"

    def one(m):
        try:
            t, q = sl.schur(m, output=output, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            return np.full((n, n), np.nan, x.dtype), np.full((n, n), np.nan, x.dtype)
        return t, q
    parts = _per_matrix(x, 2, one) if n else \
        [(np.zeros((0, 0)), np.zeros((0, 0)))] * int(np.prod(batch, dtype=np.int64))
    outs = [_stack([p[0] for p in parts], batch, (n, n), x.dtype)]
    if compute_schur_vectors:
        outs.append(_stack([p[1] for p in parts], batch, (n, n), x.dtype))
    return outs


def _schur_batch(vals, dims, **params):
    (x,) = _to_front(vals, dims)
    outs = schur_p.bind(x, **params)
    return outs, [0] * len(outs)


schur_p = Primitive("schur", multiple_results=True)
schur_p.abstract_eval = _schur_aval
schur_p.reference = _schur_reference
schur_p.cpu = Kernel(schur_p, "schur", lambda x, *, compute_schur_vectors, **_:
                     struct.pack("=i", bool(compute_schur_vectors)))
schur_p.jvp = not_applicable(_NO_JVP.format("the Schur decomposition"))
schur_p.transpose = NONLINEAR
schur_p.batch = _schur_batch


# ---- hessenberg ----

def _hessenberg_aval(a: ShapedArray):
    check_matrix("hessenberg", a, "a")
    n = a.shape[-1]
    return [ShapedArray(a.shape, a.dtype, False),
            ShapedArray(a.shape[:-2] + (max(n - 1, 0),), a.dtype, False)]


def _lapack(name, dt):
    import scipy.linalg.lapack as lp
    return getattr(lp, {np.float32: "s", np.float64: "d", np.complex64: "c",
                        np.complex128: "z"}[np.dtype(dt).type] + name)


def _hessenberg_reference(a):
    n = a.shape[-1]
    batch = a.shape[:-2]
    nb = int(np.prod(batch, dtype=np.int64))
    if not n:
        return [a.copy(), np.zeros(batch + (0,), a.dtype)]
    gehrd = _lapack("gehrd", a.dtype)

    def one(m):
        h, tau, info = gehrd(m)
        return h, tau[:n - 1]
    parts = _per_matrix(a, 2, one)
    return [_stack([p[0] for p in parts], batch, (n, n), a.dtype),
            _stack([p[1] for p in parts], batch, (n - 1,), a.dtype) if nb else
            np.zeros(batch + (n - 1,), a.dtype)]


def _hessenberg_batch(vals, dims):
    (x,) = _to_front(vals, dims)
    return hessenberg_p.bind(x), [0, 0]


hessenberg_p = Primitive("hessenberg", multiple_results=True)
hessenberg_p.abstract_eval = _hessenberg_aval
hessenberg_p.reference = _hessenberg_reference
hessenberg_p.cpu = Kernel(hessenberg_p, "hessenberg", lambda a: b"")
hessenberg_p.jvp = not_applicable(_NO_JVP.format("the Hessenberg reduction"))
hessenberg_p.transpose = NONLINEAR
hessenberg_p.batch = _hessenberg_batch


# ---- tridiagonal ----

def _tridiagonal_aval(a: ShapedArray, *, lower):
    check_matrix("tridiagonal", a, "a")
    n = a.shape[-1]
    if n == 0:  # JAX's shape rule refuses it too
        raise ValueError(f"tridiagonal: argument 'a' must be a non-empty square matrix, got "
                         f"shape {a.shape}")
    batch = a.shape[:-2]
    rt = _real_dtype(a.dtype)
    return [ShapedArray(a.shape, a.dtype, False), ShapedArray(batch + (n,), rt, False),
            ShapedArray(batch + (n - 1,), rt, False),
            ShapedArray(batch + (n - 1,), a.dtype, False)]


def _tridiagonal_reference(a, *, lower):
    n = a.shape[-1]
    batch = a.shape[:-2]
    cplx = np.iscomplexobj(a)
    fn = _lapack("hetrd" if cplx else "sytrd", a.dtype)
    rt = _real_dtype(a.dtype)

    def one(m):
        c, d, e, tau, info = fn(m, lower=int(lower))
        return c, d, e, tau
    parts = _per_matrix(a, 2, one)
    return [_stack([p[0] for p in parts], batch, (n, n), a.dtype),
            _stack([p[1] for p in parts], batch, (n,), rt),
            _stack([p[2] for p in parts], batch, (n - 1,), rt),
            _stack([p[3] for p in parts], batch, (n - 1,), a.dtype)]


def _tridiagonal_batch(vals, dims, *, lower):
    (x,) = _to_front(vals, dims)
    return tridiagonal_p.bind(x, lower=lower), [0, 0, 0, 0]


tridiagonal_p = Primitive("tridiagonal", multiple_results=True)
tridiagonal_p.abstract_eval = _tridiagonal_aval
tridiagonal_p.reference = _tridiagonal_reference
tridiagonal_p.cpu = Kernel(tridiagonal_p, "tridiagonal",
                           lambda a, *, lower: struct.pack("=i", bool(lower)))
tridiagonal_p.jvp = not_applicable(_NO_JVP.format("the tridiagonal reduction"))
tridiagonal_p.transpose = NONLINEAR
tridiagonal_p.batch = _tridiagonal_batch


# ---- tridiagonal_solve ----

def _tridiagonal_solve_aval(dl, d, du, b, *, perturb_singular):
    for name, x in (("dl", dl), ("d", d), ("du", du), ("b", b)):
        if x.dtype not in (dtypes.float32, dtypes.float64, dtypes.complex64,
                           dtypes.complex128):
            raise TypeError(f"tridiagonal_solve: argument '{name}' must be float32, float64, "
                            f"complex64 or complex128, got {x.dtype}")
    if not (dl.dtype == d.dtype == du.dtype == b.dtype):
        raise TypeError(f"tridiagonal_solve: arguments 'dl', 'd', 'du' and 'b' must have one "
                        f"dtype, got {dl.dtype}, {d.dtype}, {du.dtype} and {b.dtype}")
    if d.ndim < 1 or dl.shape != d.shape or du.shape != d.shape:
        raise TypeError(f"tridiagonal_solve: arguments 'dl', 'd' and 'du' must have one shape "
                        f"(..., m), got {dl.shape}, {d.shape} and {du.shape}")
    if b.ndim != d.ndim + 1 or b.shape[:-1] != d.shape:
        raise TypeError(f"tridiagonal_solve: argument 'b' of shape {b.shape} must be "
                        f"(..., m, k) with the diagonals' shape {d.shape} in front")
    return ShapedArray(b.shape, b.dtype, False)


def _tridiagonal_dense(dl, d, du):
    n = d.shape[-1]
    a = np.zeros(d.shape + (n,), d.dtype)
    i = np.arange(n)
    a[..., i, i] = d
    a[..., i[1:], i[:-1]] = dl[..., 1:]
    a[..., i[:-1], i[1:]] = du[..., :-1]
    return a


def _tridiagonal_solve_reference(dl, d, du, b, *, perturb_singular):
    a = _tridiagonal_dense(dl, d, du)
    out = np.empty(b.shape, b.dtype)
    fa, fb, fo = (x.reshape((-1,) + x.shape[x.ndim - 2:]) for x in (a, b, out))
    for i in range(fa.shape[0]):
        if not fb[i].size:
            continue
        try:
            fo[i] = np.linalg.solve(fa[i], fb[i])
        except np.linalg.LinAlgError:
            fo[i] = np.nan
    return out


def _tridiagonal_product(dl, d, du, b):
    """A b for the tridiagonal A of (dl, d, du), (..., m, k) b: bound primitives (JAX's
    _tridiagonal_product)."""
    shape = _shape(b)
    nd = len(shape)
    m = shape[-2]
    vec = tuple(range(nd - 1))

    def col(v):
        return _mv.broadcast_in_dim_p.bind(v, shape=shape, broadcast_dimensions=vec)
    y = _mul(col(d), b)
    if m < 2:
        return y
    zero = _ew._c(b, 0)
    lo = [(0, 0, 0)] * nd

    def shift(x, down):
        cfg = list(lo)
        cfg[nd - 2] = (1, -1, 0) if down else (-1, 1, 0)
        return _mv.pad_p.bind(x, zero, padding_config=tuple(cfg))
    # y[i] += dl[i] b[i-1] (dl[0] multiplies the zero padding); y[i] += du[i] b[i+1]
    y = _add(y, _mul(col(dl), shift(b, True)))
    return _add(y, _mul(col(du), shift(b, False)))


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    dl, d, du, b = primals
    *diag_dots, b_dot = tangents
    ans = tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)
    if all(type(t) is Zero for t in diag_dots):
        if type(b_dot) is Zero:
            return ans, Zero.from_primal(ans)
        rhs = b_dot
    else:
        matvec = _tridiagonal_product(*[instantiate(t) for t in diag_dots], ans)
        rhs = _ew.neg_p.bind(matvec) if type(b_dot) is Zero else _sub(b_dot, matvec)
    return ans, tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    # linear in b only; Aᵀ's sub-diagonal is A's super-diagonal shifted down one (JAX's rule)
    if type(ct) is Zero:
        return [None, None, None, Zero(b.aval)]
    shape = _shape(du)
    nd = len(shape)
    cfg = [(0, 0, 0)] * (nd - 1)
    zero = _ew._c(du, 0)
    dl_t = _mv.pad_p.bind(du, zero, padding_config=tuple(cfg + [(1, -1, 0)]))
    du_t = _mv.pad_p.bind(dl, zero, padding_config=tuple(cfg + [(-1, 1, 0)]))
    return [None, None, None, tridiagonal_solve_p.bind(dl_t, d, du_t, ct,
                                                       perturb_singular=perturb_singular)]


def _tridiagonal_solve_batch(vals, dims, *, perturb_singular):
    dl, d, du, b = vals
    bdl, bd, bdu, bb = dims
    if bdl is None and bd is None and bdu is None:
        # JAX's rule: the batch becomes more right-hand sides of one solve
        shape = _shape(b)
        b = move_bdim(b, bb, len(shape) - 2, shape[bb])
        s = _shape(b)
        flat = _mv.reshape_p.bind(b, new_sizes=s[:-2] + (s[-2] * s[-1],), dimensions=None)
        out = tridiagonal_solve_p.bind(dl, d, du, flat, perturb_singular=perturb_singular)
        return _mv.reshape_p.bind(out, new_sizes=s, dimensions=None), len(s) - 2
    dl, d, du, b = _to_front(vals, dims)
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular), 0


tridiagonal_solve_p = Primitive("tridiagonal_solve")
tridiagonal_solve_p.abstract_eval = _tridiagonal_solve_aval
tridiagonal_solve_p.reference = _tridiagonal_solve_reference
tridiagonal_solve_p.cpu = Kernel(tridiagonal_solve_p, "tridiagonal_solve",
                                 lambda dl, d, du, b, *, perturb_singular:
                                 struct.pack("=i", bool(perturb_singular)))
tridiagonal_solve_p.jvp = _tridiagonal_solve_jvp
tridiagonal_solve_p.transpose = _tridiagonal_solve_transpose
tridiagonal_solve_p.batch = _tridiagonal_solve_batch
