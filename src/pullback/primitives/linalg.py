"""Linear-algebra primitives (backends/cpu/csrc/linalg.c, on SciPy's LAPACK/BLAS capsules).

Every primitive takes leading batch dimensions ``(..., m, n)`` and float32, float64, complex64
or complex128 operands; the kernels loop over the batch in one call, so the batching rules only
move the vmapped dimension to the front.

* ``cholesky``: the lower factor ``L`` of ``L Lᴴ = x`` read from ``x``'s lower triangle (the
  public wrappers symmetrize first). A matrix that is not positive definite gives a matrix of
  NaNs (as JAX), never an exception.
* ``triangular_solve``: ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` with ``op`` the
  identity, transpose (``transpose_a``) or conjugate transpose (``transpose_a`` and
  ``conjugate_a``); ``conjugate_a`` alone conjugates ``a``. Linear in ``b``.
* ``lu``: ``lu, pivots, permutation`` of partial-pivoting LU (getrf): ``a[permutation] = L @ U``,
  ``pivots`` int32 and 0-based (row ``i`` swapped with ``pivots[i]``), as JAX's.
* ``inv``: the inverse of square matrices in one kernel (getrf + getri, or Gauss-Jordan for
  small ones), where JAX solves against the identity (~1.35x the flops); an exactly singular
  matrix gives infinities/NaNs, as that solve does.
* ``lu_inverse``: ``a⁻¹`` (or ``a⁻ᵀ`` with ``transpose``) from ``lu(a)``'s packed factors and
  pivots (getri): a rule that already holds ``a``'s LU (slogdet's and det's, next to solve)
  inverts without a second getrf, and ``a⁻ᵀ`` is written without a transposing pass.

Derivatives are JAX's (``jax/_src/lax/linalg.py``), built from bound primitives so that they
differentiate again.
"""
from __future__ import annotations

import struct

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from . import dot as _dot, elementwise as _ew, movement as _mv
from .rules import INTEGER_OUTPUT, NONLINEAR, Kernel, Zero, batch_size, move_bdim
from .sort import _take_along_axis

_FLOAT_TYPES = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


# ---- checking ----

def check_matrix(fn: str, x: ShapedArray, arg: str, *, square: bool = True) -> None:
    """Raises naming ``fn`` and ``arg`` unless ``x`` is a (batch of) float or complex
    matrix (square when ``square``)."""
    if x.dtype not in _FLOAT_TYPES:
        raise TypeError(f"{fn}: argument '{arg}' must be float32, float64, complex64 or "
                        f"complex128, got {x.dtype}")
    if x.ndim < 2:
        raise ValueError(f"{fn}: argument '{arg}' must have at least 2 dimensions (..., m, n), "
                         f"got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{fn}: argument '{arg}' must be a (batch of) square matrix, got shape "
                         f"{x.shape}")


def _cholesky_aval(x: ShapedArray) -> ShapedArray:
    check_matrix("cholesky", x, "x")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _triangular_solve_aval(a: ShapedArray, b: ShapedArray, *, left_side, lower, transpose_a,
                           conjugate_a, unit_diagonal) -> ShapedArray:
    check_matrix("triangular_solve", a, "a")
    check_matrix("triangular_solve", b, "b", square=False)
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve: arguments 'a' and 'b' must have one dtype, got "
                        f"{a.dtype} and {b.dtype}")
    if a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"triangular_solve: arguments 'a' and 'b' must have equal batch "
                         f"dimensions, got shapes {a.shape} and {b.shape}")
    k = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != k:
        side = "rows" if left_side else "columns"
        raise ValueError(f"triangular_solve: argument 'a' of shape {a.shape} does not fit "
                         f"argument 'b' of shape {b.shape}: with left_side={bool(left_side)} "
                         f"b's {side} must number {a.shape[-1]}")
    return ShapedArray(b.shape, b.dtype, a.weak_type and b.weak_type)


def _inv_aval(a: ShapedArray) -> ShapedArray:
    check_matrix("inv", a, "a")
    return ShapedArray(a.shape, a.dtype, a.weak_type)


def _lu_inverse_aval(lu: ShapedArray, pivots: ShapedArray, *, transpose: bool) -> ShapedArray:
    check_matrix("lu_inverse", lu, "lu")
    n = lu.shape[-1]
    if pivots.dtype != dtypes.int32 or pivots.shape != lu.shape[:-2] + (n,):
        raise TypeError(f"lu_inverse: argument 'pivots' must be int32 of shape "
                        f"{lu.shape[:-2] + (n,)} (lu's batch and n), got {pivots.dtype}"
                        f"{list(pivots.shape)}")
    return ShapedArray(lu.shape, lu.dtype, lu.weak_type)


def _lu_aval(a: ShapedArray) -> list[ShapedArray]:
    check_matrix("lu", a, "x", square=False)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return [ShapedArray(a.shape, a.dtype, a.weak_type),
            ShapedArray(batch + (min(m, n),), dtypes.int32, False),
            ShapedArray(batch + (m,), dtypes.int32, False)]


# ---- NumPy references ----

def _cholesky_reference(x: np.ndarray) -> np.ndarray:
    out = np.empty(x.shape, x.dtype)
    flat, res = x.reshape((-1,) + x.shape[-2:]), out.reshape((-1,) + x.shape[-2:])
    for i in range(flat.shape[0]):
        low = np.tril(flat[i])
        try:
            res[i] = np.linalg.cholesky(low + np.conj(np.tril(low, -1)).T)
            if np.isnan(np.diagonal(res[i])).any():  # a NaN pivot fails, as potf2's
                res[i] = np.nan
        except np.linalg.LinAlgError:
            res[i] = np.nan
    return out


def _triangular_solve_reference(a, b, *, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
    tri = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        tri = tri * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    if conjugate_a:
        tri = np.conj(tri)
    if transpose_a:
        tri = np.swapaxes(tri, -1, -2)
    if left_side:
        return np.linalg.solve(tri, b).astype(b.dtype) if b.size else b.copy()
    # x op(a) = b  <=>  op(a)^T x^T = b^T
    if not b.size:
        return b.copy()
    return np.swapaxes(np.linalg.solve(np.swapaxes(tri, -1, -2), np.swapaxes(b, -1, -2)),
                       -1, -2).astype(b.dtype)


def _inv_reference(a: np.ndarray) -> np.ndarray:
    out = np.empty(a.shape, a.dtype)
    flat, res = a.reshape((-1,) + a.shape[-2:]), out.reshape((-1,) + a.shape[-2:])
    for i in range(flat.shape[0]):
        try:
            res[i] = np.linalg.inv(flat[i])
        except np.linalg.LinAlgError:
            res[i] = np.nan
    return out


def _lu_inverse_reference(lu: np.ndarray, pivots: np.ndarray, *, transpose: bool):
    n = lu.shape[-1]
    if lu.size == 0:
        return np.empty(lu.shape, lu.dtype)
    flat, pv = lu.reshape((-1, n, n)), pivots.reshape((-1, n))
    out = np.empty_like(flat)
    for i in range(flat.shape[0]):
        a = (np.tril(flat[i], -1) + np.eye(n, dtype=lu.dtype)) @ np.triu(flat[i])
        for r in range(n - 1, -1, -1):  # undo the row swaps, last first
            a[[r, pv[i, r]]] = a[[pv[i, r], r]]
        with np.errstate(all="ignore"):
            try:
                x = np.linalg.inv(a)
            except np.linalg.LinAlgError:
                x = np.full_like(a, np.nan)
        out[i] = x.T if transpose else x
    return out.reshape(lu.shape)


def _lu_reference(a: np.ndarray):
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = a.reshape((-1, m, n)).copy()
    pivots = np.zeros((flat.shape[0], k), np.int32)
    perms = np.tile(np.arange(m, dtype=np.int32), (flat.shape[0], 1))
    for b in range(flat.shape[0]):
        x = flat[b]
        for j in range(k):
            col = x[j:, j]  # LAPACK pivots on |re| + |im| (i?amax)
            p = j + int(np.argmax(np.abs(col.real) + np.abs(col.imag)))
            pivots[b, j] = p
            x[[j, p]] = x[[p, j]]
            perms[b, [j, p]] = perms[b, [p, j]]
            if x[j, j] != 0:
                x[j + 1:, j] /= x[j, j]
            x[j + 1:, j + 1:] -= np.outer(x[j + 1:, j], x[j, j + 1:])
    batch = a.shape[:-2]
    return [flat.reshape(a.shape), pivots.reshape(batch + (k,)), perms.reshape(batch + (m,))]


# ---- building blocks of the rules (bound primitives) ----

def _shape(x):
    return get_aval(x).shape


def _matmul(a, b):
    """Batched a @ b over equal leading dims."""
    nd = len(_shape(a))
    batch = tuple(range(nd - 2))
    return _dot.dot_general_p.bind(a, b, dimension_numbers=(((nd - 1,), (nd - 2,)),
                                                            (batch, batch)),
                                   precision=None, preferred_element_type=None)


def _mT(x):
    nd = len(_shape(x))
    return _mv.transpose_p.bind(x, permutation=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _conj(x):
    return _ew.conj_p.bind(x) if np.issubdtype(get_aval(x).dtype, np.complexfloating) else x


def _H(x):
    return _conj(_mT(x))


def _tri_mask(shape, offset: int, lower: bool):
    """Boolean mask of shape ``shape`` (..., m, n): col - row <= offset (lower) or >= offset."""
    m, n = shape[-2:]
    r = _mv.iota_p.bind(dtype=dtypes.int32, shape=(m, n), dimension=0)
    c = _mv.iota_p.bind(dtype=dtypes.int32, shape=(m, n), dimension=1)
    d = _ew.sub_p.bind(c, r)
    off = _ew._c(d, offset)
    mask = _ew.le_p.bind(d, off) if lower else _ew.ge_p.bind(d, off)
    nd = len(shape)
    return _mv.broadcast_in_dim_p.bind(mask, shape=tuple(shape),
                                       broadcast_dimensions=(nd - 2, nd - 1))


def _tril(x, k: int = 0):
    shape = _shape(x)
    return _ew.select_n_p.bind(_tri_mask(shape, k, True), _ew._full(shape, x, 0), x)


def _triu(x, k: int = 0):
    shape = _shape(x)
    return _ew.select_n_p.bind(_tri_mask(shape, k, False), _ew._full(shape, x, 0), x)


def _eye_like(x, k: int = 0):
    """The (..., m, n) matrix with ones on diagonal k in x's dtype."""
    shape = _shape(x)
    on = _ew.and_p.bind(_tri_mask(shape, k, True), _tri_mask(shape, k, False))
    return _ew.select_n_p.bind(on, _ew._full(shape, x, 0), _ew._full(shape, x, 1))


def _add(a, b):
    return _ew.add_p.bind(a, b)


def _sub(a, b):
    return _ew.sub_p.bind(a, b)


def _mul(a, b):
    return _ew.mul_p.bind(a, b)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """Binds ``triangular_solve`` (the rules' spelling)."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


# ---- cholesky's rules ----

def _cholesky_jvp(primals, tangents):
    # JAX's rule (arXiv:1602.07527): L_dot = L phi(L^-1 sigma_dot L^-H), phi = the lower
    # triangle with the diagonal halved; sigma_dot is the whole tangent (the public functions
    # symmetrize their input, so their tangents are Hermitian)
    (x,), (t,) = primals, tangents
    L = cholesky_p.bind(x)
    if type(t) is Zero:
        return L, Zero.from_primal(L)
    tmp = triangular_solve(L, t, left_side=False, transpose_a=True, conjugate_a=True,
                           lower=True)
    s = triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)
    phi = _sub(_tril(s), _mul(_mul(s, _eye_like(s)), _ew._c(s, 0.5)))
    return L, _matmul(L, phi)


def _to_front(vals, dims):
    size = batch_size(vals, dims)
    return [move_bdim(v, d, 0, size) for v, d in zip(vals, dims)]


def _cholesky_batch(vals, dims):
    (x,) = _to_front(vals, dims)
    return cholesky_p.bind(x), 0


# ---- triangular_solve's rules ----

def _triangular_solve_jvp_a(g_a, ans, a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    # JAX's _triangular_solve_jvp_rule_a: d x = -op(a)^-1 op(g_a) x (left) or -x op(g_a) op(a)^-1
    k = 1 if unit_diagonal else 0
    g_a = _tril(g_a, -k) if lower else _triu(g_a, k)
    g_a = _ew.neg_p.bind(g_a)
    if conjugate_a:
        g_a = _conj(g_a)
    if transpose_a:
        g_a = _mT(g_a)
    m, n = _shape(b)[-2:]
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    # choose the cheaper association as JAX does
    if left_side and m > n or (not left_side and m < n):
        prod = _matmul(g_a, ans) if left_side else _matmul(ans, g_a)
        return triangular_solve(a, prod, **params)
    inv = triangular_solve(a, g_a, **params)
    return _matmul(inv, ans) if left_side else _matmul(ans, inv)


def _triangular_solve_jvp(primals, tangents, **params):
    a, b = primals
    ta, tb = tangents
    ans = triangular_solve_p.bind(a, b, **params)
    out = None
    if type(tb) is not Zero:
        out = triangular_solve_p.bind(a, tb, **params)
    if type(ta) is not Zero:
        da = _triangular_solve_jvp_a(ta, ans, a, b, **params)
        out = da if out is None else _add(out, da)
    return ans, (Zero.from_primal(ans) if out is None else out)


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
    # linear in b only: the cotangent solves the transposed system (JAX's rule)
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    cot_b = triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                    transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                    unit_diagonal=unit_diagonal)
    return [None, cot_b]


def _triangular_solve_batch(vals, dims, **params):
    a, b = _to_front(vals, dims)
    return triangular_solve_p.bind(a, b, **params), 0


# ---- lu's rules ----

def _lu_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    lu, pivots, permutation = lu_p.bind(a)
    if type(a_dot) is Zero:
        return [lu, pivots, permutation], [Zero.from_primal(lu), Zero.from_primal(pivots),
                                           Zero.from_primal(permutation)]
    shape = _shape(a)
    m, n = shape[-2:]
    k = min(m, n)
    batch = shape[:-2]
    nd = len(shape)
    # a_dot's rows permuted: x = a_dot[..., permutation, :]
    x = _take_rows(a_dot, permutation)
    # l: (m, m) unit lower with lu's strictly-lower part padded; u: (n, n) upper padded with
    # the identity (JAX's construction for rectangular matrices)
    lu_mk = _mv.slice_p.bind(lu, start_indices=(0,) * nd, limit_indices=batch + (m, k),
                             strides=None)
    l_pad = _mv.pad_p.bind(_tril(lu_mk, -1), _ew._c(lu, 0),
                           padding_config=((0, 0, 0),) * (nd - 2) + ((0, 0, 0), (0, m - k, 0)))
    l = _add(l_pad, _eye_like(l_pad))
    lu_kn = _mv.slice_p.bind(lu, start_indices=(0,) * nd, limit_indices=batch + (k, n),
                             strides=None)
    u_pad = _mv.pad_p.bind(_triu(lu_kn), _ew._c(lu, 0),
                           padding_config=((0, 0, 0),) * (nd - 2) + ((0, n - k, 0), (0, 0, 0)))
    u = u_pad
    if n > k:  # the identity below U's rows, so u is invertible (JAX's construction)
        u_eye = _eye_like(_ew._full(batch + (n - k, n - k), lu, 0))
        u = _add(u, _mv.pad_p.bind(u_eye, _ew._c(lu, 0), padding_config=(
            ((0, 0, 0),) * (nd - 2) + ((k, 0, 0), (k, 0, 0)))))
    la = triangular_solve(l, x, left_side=True, transpose_a=False, lower=True,
                          unit_diagonal=True)
    lau = triangular_solve(u, la, left_side=False, transpose_a=False, lower=False)
    l_dot = _matmul(l, _tril(lau, -1))
    u_dot = _matmul(_triu(lau), u)
    lu_dot = _add(l_dot, u_dot)
    return [lu, pivots, permutation], [lu_dot, Zero.from_primal(pivots),
                                       Zero.from_primal(permutation)]


def _take_rows(x, perm):
    """x[..., perm[...], :] for int32 perm (..., m): one batched gather."""
    shape = _shape(x)
    if 0 in shape:  # nothing to permute (and no valid gather over an empty axis)
        return x
    nd = len(shape)
    idx = _mv.broadcast_in_dim_p.bind(perm, shape=shape, broadcast_dimensions=tuple(range(nd - 1)))
    return _take_along_axis(x, idx, nd - 2)


def _lu_batch(vals, dims):
    (x,) = _to_front(vals, dims)
    return lu_p.bind(x), [0, 0, 0]


# ---- inv's rules ----

def _inv_jvp(primals, tangents):
    # d(a⁻¹) = -a⁻¹ ȧ a⁻¹ (linear in ȧ: reverse mode transposes the two products)
    (a,), (t,) = primals, tangents
    x = inv_p.bind(a)
    if type(t) is Zero:
        return x, Zero.from_primal(x)
    return x, _ew.neg_p.bind(_matmul(_matmul(x, t), x))


def _inv_batch(vals, dims):
    (x,) = _to_front(vals, dims)
    return inv_p.bind(x), 0


# ---- lu_inverse's rules ----

def _lu_inverse_jvp(primals, tangents, *, transpose):
    # a = Pᵀ L U, so ȧ = Pᵀ (L̇ U + L U̇) with L̇, U̇ the strictly lower and upper parts of lu's
    # tangent, and d(a⁻¹) = -a⁻¹ ȧ a⁻¹ where a⁻¹ Pᵀ = a⁻¹[:, perm] (a⁻ᵀ: the transpose)
    (lu, pivots), (t, _) = primals, tangents
    x = lu_inverse_p.bind(lu, pivots, transpose=transpose)
    if type(t) is Zero:
        return x, Zero.from_primal(x)
    n = _shape(lu)[-1]
    perm = lu_pivots_to_permutation_p.bind(pivots, permutation_size=n)
    l, u = _add(_tril(lu, -1), _eye_like(lu)), _triu(lu)
    m = _add(_matmul(_tril(t, -1), u), _matmul(l, _triu(t)))
    if transpose:  # x = a⁻ᵀ: -(a⁻¹ ȧ a⁻¹)ᵀ = -x mᵀ (x[perm])
        return x, _ew.neg_p.bind(_matmul(_matmul(x, _mT(m)), _take_rows(x, perm)))
    return x, _ew.neg_p.bind(_matmul(_matmul(_mT(_take_rows(_mT(x), perm)), m), x))


def _lu_inverse_batch(vals, dims, *, transpose):
    lu, pivots = _to_front(vals, dims)
    return lu_inverse_p.bind(lu, pivots, transpose=transpose), 0


# ---- lu_pivots_to_permutation ----

def _pivots_aval(pivots: ShapedArray, *, permutation_size: int) -> ShapedArray:
    if pivots.dtype != dtypes.int32:
        raise TypeError(f"lu_pivots_to_permutation: argument 'pivots' must be int32, got "
                        f"{pivots.dtype}")
    if pivots.ndim < 1:
        raise ValueError("lu_pivots_to_permutation: argument 'pivots' must have at least 1 "
                         f"dimension, got shape {pivots.shape}")
    if not isinstance(permutation_size, int) or permutation_size < pivots.shape[-1]:
        raise ValueError(f"lu_pivots_to_permutation: argument 'permutation_size' must be an int "
                         f">= the number of pivots {pivots.shape[-1]}, got {permutation_size!r}")
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), dtypes.int32, False)


def _pivots_reference(pivots: np.ndarray, *, permutation_size: int) -> np.ndarray:
    flat = pivots.reshape((-1, pivots.shape[-1]))
    out = np.tile(np.arange(permutation_size, dtype=np.int32), (flat.shape[0], 1))
    for b in range(flat.shape[0]):
        for r, p in enumerate(flat[b]):
            if 0 <= p < permutation_size:
                out[b, [r, p]] = out[b, [p, r]]
    return out.reshape(pivots.shape[:-1] + (permutation_size,))


def _pivots_batch(vals, dims, *, permutation_size):
    (x,) = _to_front(vals, dims)
    return lu_pivots_to_permutation_p.bind(x, permutation_size=permutation_size), 0


# ---- the primitives ----

_TRSM_PARAMS = struct.Struct("=5i")  # csrc/linalg.c: trsm_params

cholesky_p = Primitive("cholesky")
cholesky_p.abstract_eval = _cholesky_aval
cholesky_p.reference = _cholesky_reference
cholesky_p.cpu = Kernel(cholesky_p, "cholesky", lambda x: b"")
cholesky_p.jvp = _cholesky_jvp
cholesky_p.transpose = NONLINEAR
cholesky_p.batch = _cholesky_batch

triangular_solve_p = Primitive("triangular_solve")
triangular_solve_p.abstract_eval = _triangular_solve_aval
triangular_solve_p.reference = _triangular_solve_reference
triangular_solve_p.cpu = Kernel(
    triangular_solve_p, "triangular_solve",
    lambda a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal:
    _TRSM_PARAMS.pack(left_side, lower, transpose_a, conjugate_a, unit_diagonal))
triangular_solve_p.jvp = _triangular_solve_jvp
triangular_solve_p.transpose = _triangular_solve_transpose
triangular_solve_p.batch = _triangular_solve_batch

lu_p = Primitive("lu", multiple_results=True)
lu_p.abstract_eval = _lu_aval
lu_p.reference = _lu_reference
lu_p.cpu = Kernel(lu_p, "lu", lambda a: b"")
lu_p.jvp = _lu_jvp
lu_p.transpose = NONLINEAR
lu_p.batch = _lu_batch

inv_p = Primitive("inv")
inv_p.abstract_eval = _inv_aval
inv_p.reference = _inv_reference
inv_p.cpu = Kernel(inv_p, "inv", lambda a: b"")
inv_p.jvp = _inv_jvp
inv_p.transpose = NONLINEAR
inv_p.batch = _inv_batch

lu_inverse_p = Primitive("lu_inverse")
lu_inverse_p.abstract_eval = _lu_inverse_aval
lu_inverse_p.reference = _lu_inverse_reference
lu_inverse_p.cpu = Kernel(lu_inverse_p, "lu_inverse",
                          lambda lu, pivots, *, transpose: struct.pack("=i", bool(transpose)))
lu_inverse_p.jvp = _lu_inverse_jvp
lu_inverse_p.transpose = NONLINEAR
lu_inverse_p.batch = _lu_inverse_batch

lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")
lu_pivots_to_permutation_p.abstract_eval = _pivots_aval
lu_pivots_to_permutation_p.reference = _pivots_reference
lu_pivots_to_permutation_p.cpu = Kernel(lu_pivots_to_permutation_p, "lu_pivots_to_permutation",
                                        lambda pivots, *, permutation_size: b"")
lu_pivots_to_permutation_p.jvp = INTEGER_OUTPUT
lu_pivots_to_permutation_p.transpose = NONLINEAR
lu_pivots_to_permutation_p.batch = _pivots_batch
