"""``pullback.numpy.linalg`` (``jnp.linalg``): decompositions and solvers, as JAX has them.

Built on ``pullback.lax.linalg`` exactly as JAX builds them (``solve``/``inv`` from ``lu`` and
two triangular solves, ``det``/``slogdet`` from ``lu``'s diagonal and pivots). The products
(``matmul``, ``outer``, ``tensordot``, ...) live in ``numpy/_linalg.py``.

Derivatives: ``det`` and ``slogdet`` differentiate through ``lu``; at an exactly singular
matrix their derivative is not finite (JAX's ``det`` uses a cofactor rule there instead).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..lax import linalg as lax_linalg
from ..primitives import linalg as _pl
from ..tracer import core
from ..tracer.array import Array
from ..tracer.shapes import broadcast_shapes
from ._creation import asarray, eye
from ._linalg import diagonal as _diagonal, matmul as _matmul, trace as _trace
from ._promotion import promote_dtypes_inexact
from ._reductions import any as _any, count_nonzero, prod, sum as _sum
from ._shape import broadcast_to, expand_dims, squeeze
from ._creation import zeros_like
from ._ufuncs import abs as _abs, conj, equal, log, multiply, not_equal, real, where
from ..transforms.custom_derivatives import custom_jvp
from ..tracer.shapes import canonicalize_axis
from ._dtype_info import finfo
from ._indexing import take_along_axis
from ._reductions import max as _amax, min as _amin
from ._shape import moveaxis
from ._sorting import argsort as _argsort
from ._ufuncs import isnan, power as _power, sign as _sign, sqrt as _sqrt

__all__ = ["cholesky", "det", "inv", "slogdet", "solve", "SlogdetResult"]


class SlogdetResult(NamedTuple):
    """``slogdet``'s result: ``sign`` and ``logabsdet`` (``det = sign * exp(logabsdet)``)."""
    sign: Array
    logabsdet: Array


def _inexact(fn: str, *xs: Any) -> list[Any]:
    xs = promote_dtypes_inexact(fn, *[asarray(x) for x in xs])
    return list(xs)


def _check_square(fn: str, x: Any, arg: str = "a") -> None:
    aval = core.get_aval(x)
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"{fn}: argument '{arg}' must be a (batch of) square matrix "
                         f"(..., n, n), got shape {aval.shape}")


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor of Hermitian positive-definite ``a``: lower ``L`` with
    ``a = L Lᴴ`` (or upper ``U = Lᴴ`` with ``a = Uᴴ U`` when ``upper``).

    A matrix that is not positive definite gives NaNs, not an error (as JAX).

    Args:
      a: (..., n, n) matrices.
      upper: return the upper factor.
      symmetrize_input: use ``(a + aᴴ) / 2`` (else only the lower triangle is read).
    """
    (a,) = _inexact("cholesky", a)
    L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return conj(matrix_transpose(L)) if upper else L


@custom_jvp
def _solve_matrix(a: Any, b: Any) -> Any:
    """``a⁻¹ b`` for (..., n, n) ``a`` and (..., n, k) ``b`` of equal batch dims."""
    lu_, _, perm = lax_linalg.lu(a)
    return lax_linalg._lu_solve(lu_, perm, b, 0)


@_solve_matrix.defjvp
def _solve_matrix_jvp(primals: tuple, tangents: tuple) -> tuple:
    # x = a⁻¹ b, x_dot = a⁻¹ (b_dot - a_dot x) with a's factorization computed once (JAX's
    # custom_linear_solve does the same): reverse mode transposes two triangular solves
    # instead of lu's own derivative
    (a, b), (a_dot, b_dot) = primals, tangents
    lu_, _, perm = lax_linalg.lu(a)
    x = lax_linalg._lu_solve(lu_, perm, b, 0)
    return x, lax_linalg._lu_solve(lu_, perm, b_dot - _matmul(a_dot, x), 0)


def solve(a: Any, b: Any) -> Array:
    """Solves ``a @ x = b`` for ``x``.

    Args:
      a: (..., n, n) matrices.
      b: a vector (n,) or (..., n, k) matrices (NumPy 2 semantics, as JAX: a 1-d ``b`` is one
        vector; otherwise ``b`` holds matrices whose batch dimensions broadcast with ``a``'s).

    Returns:
      ``x``, shaped as the broadcast ``b``.
    """
    a, b = _inexact("solve", a, b)
    _check_square("solve", a)
    aa, ba = core.get_aval(a), core.get_aval(b)
    vector = ba.ndim == 1
    if vector:
        b = expand_dims(b, -1)
        ba = core.get_aval(b)
    if ba.shape[-2] != aa.shape[-1]:
        raise ValueError(f"solve: argument 'b' of shape {core.get_aval(b).shape} does not fit "
                         f"argument 'a' of shape {aa.shape}: b must have {aa.shape[-1]} rows")
    try:
        batch = broadcast_shapes(aa.shape[:-2], ba.shape[:-2])
    except ValueError:
        raise ValueError(f"solve: the batch dimensions of 'a' {aa.shape} and 'b' {ba.shape} do "
                         "not broadcast") from None
    a = broadcast_to(a, batch + aa.shape[-2:])
    b = broadcast_to(b, batch + ba.shape[-2:])
    x = _solve_matrix(a, b)
    return squeeze(x, -1) if vector else x


def inv(a: Any) -> Array:
    """The inverse of each (..., n, n) matrix.

    JAX solves against the identity; one kernel inverts here (LAPACK's getrf + getri), with the
    same values up to rounding and the derivative ``-a⁻¹ ȧ a⁻¹``. An exactly singular matrix
    gives infinities/NaNs, not an error.
    """
    (a,) = _inexact("inv", a)
    _check_square("inv", a)
    return _pl.inv_p.bind(a)


def _lu_parts(fn: str, a: Any):
    lu_, pivots, _ = lax_linalg.lu(a)
    diag = _diagonal(lu_, axis1=-2, axis2=-1)
    n = core.get_aval(a).shape[-1]
    iota = Array(np.arange(n, dtype=np.int32))
    parity = count_nonzero(not_equal(pivots, iota), axis=-1)
    return diag, parity


def _square_inexact(fn: str, a: Any) -> Any:
    (a,) = _inexact(fn, a)
    _check_square(fn, a)
    return a


def _trace_solve(x: Any, g: Any) -> Any:
    """trace(x⁻¹ g) over the last two axes, as ``sum(x⁻ᵀ ∘ g)``: linear in the tangent g
    through one product with the inverse, so reverse mode scales the cotangent by x⁻ᵀ; JAX's
    trace(solve(x, g)) transposes into two triangular solves against the identity and a
    permuting scatter (~1.2x its time at 256x256). x⁻ᵀ comes from x's LU (getri), the ``lu``
    equation that the primal and a ``solve`` of the same x share (one getrf), written
    transposed by the kernel (no transposing pass)."""
    lu_, pivots, _ = lax_linalg.lu(x)
    xit = _pl.lu_inverse_p.bind(lu_, pivots, transpose=True)
    return _sum(multiply(xit, g), axis=(-2, -1))


@custom_jvp
def _det(a: Any) -> Any:
    diag, parity = _lu_parts("det", a)
    sign = where(equal(parity % 2, 0), 1, -1).astype(core.get_aval(a).dtype)
    return multiply(sign, prod(diag, axis=-1))


@_det.defjvp
def _det_jvp(primals: tuple, tangents: tuple) -> tuple:
    # d det = det · trace(a⁻¹ da) (not finite at an exactly singular a, where JAX's cofactor
    # rule still is)
    (x,), (g,) = primals, tangents
    y = _det(x)
    return y, multiply(y, _trace_solve(x, g))


def det(a: Any) -> Array:
    """The determinant of each (..., n, n) matrix (from its LU factorization).

    Its derivative ``det(a) trace(a⁻¹ da)`` is not finite at an exactly singular ``a``.
    """
    return _det(_square_inexact("det", a))


@custom_jvp
def _slogdet(a: Any) -> tuple:
    diag, parity = _lu_parts("slogdet", a)
    dt = core.get_aval(a).dtype
    is_zero = _any(equal(diag, 0), axis=-1)
    absd = _abs(diag)
    logdet = _sum(log(absd), axis=-1)
    flip = where(equal(parity % 2, 0), 1, -1).astype(dt)
    if np.issubdtype(dt, np.complexfloating):
        unit = diag / where(equal(absd, 0), 1, absd).astype(dt)
        sign = multiply(flip, prod(unit, axis=-1))
    else:
        sign = multiply(flip, prod(where(diag < 0, -1, 1).astype(dt), axis=-1))
    sign = where(is_zero, 0, sign).astype(dt)
    logdet = where(is_zero, -np.inf, logdet).astype(core.get_aval(logdet).dtype)
    return sign, logdet


@_slogdet.defjvp
def _slogdet_jvp(primals: tuple, tangents: tuple) -> tuple:
    # JAX's rule: d log|det| = re trace(a⁻¹ da); the sign turns by i im trace(a⁻¹ da)
    (x,), (g,) = primals, tangents
    sign, logdet = _slogdet(x)
    t = _trace_solve(x, g)
    if np.issubdtype(core.get_aval(x).dtype, np.complexfloating):
        re = real(t)
        return (sign, logdet), (multiply(t - re.astype(core.get_aval(t).dtype), sign), re)
    return (sign, logdet), (zeros_like(sign), t)


def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """Sign and natural log of the absolute determinant of each (..., n, n) matrix.

    Args:
      a: (..., n, n) matrices.
      method: ``None`` or ``"lu"`` (the only method here).

    Returns:
      ``SlogdetResult(sign, logabsdet)``; ``sign`` is 0 and ``logabsdet`` ``-inf`` for a
      singular matrix.
    """
    if method not in (None, "lu"):
        raise ValueError(f"slogdet: argument 'method' must be None or 'lu', got {method!r}")
    return SlogdetResult(*_slogdet(_square_inexact("slogdet", a)))


# ---- issue 28: eig, eigvals and the products (h28-eig) ----

import math  # noqa: E402
import operator  # noqa: E402
from typing import Sequence  # noqa: E402

from ._linalg import (einsum as _einsum, matmul as _np_matmul,  # noqa: E402
                      tensordot as _tensordot, vecdot as _vecdot)
from ._shape import (matrix_transpose as _matrix_transpose, moveaxis as _moveaxis,  # noqa: E402
                     ravel as _ravel, reshape as _reshape, stack as _stack)
from ._promotion import promote_dtypes as _promote_dtypes  # noqa: E402
from ._ufuncs import subtract as _subtract  # noqa: E402

__all__ += ["EigResult", "eig", "eigvals", "cross", "diagonal", "matmul", "matrix_power",
            "matrix_transpose", "multi_dot", "outer", "tensordot", "tensorinv", "tensorsolve",
            "trace", "vecdot"]


class EigResult(NamedTuple):
    """``eig``'s result: ``eigenvalues`` (..., M) and ``eigenvectors`` (..., M, M)."""
    eigenvalues: Array
    eigenvectors: Array


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors of a general square matrix (LAPACK's geev).

    Unlike NumPy, the results are always complex (complex64 for 32-bit input, complex128 for
    64-bit), as JAX's. Eigenvectors are columns (``a @ v[:, i] = w[i] v[:, i]``) of unit norm
    with their largest component real. Derivatives: only of the eigenvalues through
    ``eigvals``; eigenvector derivatives need ``lax.linalg.eig(..., enable_eigvec_derivs=True)``
    (jax-ml/jax#2748).

    Args:
      a: (..., M, M) matrices.

    Returns:
      ``EigResult(eigenvalues, eigenvectors)``.
    """
    a = _square_inexact("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a: Any) -> Array:
    """The (complex) eigenvalues (..., M) of general (..., M, M) matrices; differentiable
    where they are distinct."""
    a = _square_inexact("eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Array:
    """Cross product of (arrays of) 3-vectors along ``axis`` (broadcasting the rest)."""
    x1, x2 = _promote_dtypes("cross", asarray(x1), asarray(x2))
    s1, s2 = core.get_aval(x1).shape, core.get_aval(x2).shape
    try:
        n1, n2 = s1[axis], s2[axis]
    except IndexError:
        raise ValueError(f"cross: axis {axis} is out of bounds for shapes {s1} and {s2}") \
            from None
    if n1 != 3 or n2 != 3:
        raise ValueError("cross: both input arrays must be (arrays of) 3-dimensional vectors, "
                         f"but they have x1.shape[axis]={n1} and x2.shape[axis]={n2}")
    a, b = _moveaxis(x1, axis, -1), _moveaxis(x2, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = _stack([_subtract(multiply(a1, b2), multiply(a2, b1)),
                   _subtract(multiply(a2, b0), multiply(a0, b2)),
                   _subtract(multiply(a0, b1), multiply(a1, b0))], axis=-1)
    return _moveaxis(c, -1, axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Array:
    """The diagonals of the matrices in the last two axes of ``x``."""
    return _diagonal(asarray(x), offset=offset, axis1=-2, axis2=-1)


def matmul(x1: Any, x2: Any, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Array:
    """Matrix product (``jnp.matmul``)."""
    return _np_matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def matrix_transpose(x: Any, /) -> Array:
    """Swaps the last two axes of ``x`` (at least 2-D)."""
    x = asarray(x)
    nd = core.get_aval(x).ndim
    if nd < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={nd}")
    return _matrix_transpose(x)


def matrix_power(a: Any, n: int) -> Array:
    """``a`` (square, (..., M, M)) raised to the integer power ``n`` by repeated squaring
    (``n < 0``: of the inverse; ``n == 0``: the identity)."""
    arr = asarray(a)
    shape = core.get_aval(arr).shape
    if len(shape) < 2:
        raise TypeError(f"matrix_power: {len(shape)}-dimensional array given. Array must be at "
                        "least two-dimensional")
    if shape[-2] != shape[-1]:
        raise TypeError(f"matrix_power: last 2 dimensions of the array must be square, got "
                        f"shape {shape}")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"matrix_power: exponent must be an integer, got {n}") from err
    if n == 0:
        return broadcast_to(eye(shape[-2], dtype=core.get_aval(arr).dtype), shape)
    if n < 0:
        arr = inv(arr)
        n = -n
    if n == 1:
        return arr
    if n == 2:
        return _matmul(arr, arr)
    if n == 3:
        return _matmul(_matmul(arr, arr), arr)
    z = result = None
    while n > 0:
        z = arr if z is None else _matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else _matmul(result, z)
    return result


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Array:
    """The product of a chain of matrices in the cheapest order (opt_einsum's, as JAX's
    ``einsum(..., optimize='auto')``); the first and last may be vectors."""
    arrs = [asarray(a) for a in arrays]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    shapes = [core.get_aval(a).shape for a in arrs]
    if not (len(shapes[0]) in (1, 2) and len(shapes[-1]) in (1, 2)
            and all(len(s) == 2 for s in shapes[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array "
                         f"shapes {shapes}")
    if any(a[-1] != b[0] for a, b in zip(shapes[:-1], shapes[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension "
                         f"of following array. Got array shapes {shapes}")
    letters = [chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26)
               for i in range(len(arrs) + 1)]
    subs = [letters[i] + letters[i + 1] for i in range(len(arrs))]
    if len(shapes[0]) == 1:
        subs[0] = subs[0][1:]
    if len(shapes[-1]) == 1:
        subs[-1] = subs[-1][:1]
    out = (letters[0] if len(shapes[0]) == 2 else "") + \
        (letters[len(arrs)] if len(shapes[-1]) == 2 else "")
    return _einsum(",".join(subs) + "->" + out, *arrs, optimize="auto", precision=precision)


def outer(x1: Any, x2: Any, /) -> Array:
    """The outer product of two vectors."""
    x1, x2 = _promote_dtypes("outer", asarray(x1), asarray(x2))
    n1, n2 = core.get_aval(x1).ndim, core.get_aval(x2).ndim
    if n1 != 1 or n2 != 1:
        raise ValueError(f"outer: input arrays must be one-dimensional, but they are "
                         f"x1.ndim={n1} x2.ndim={n2}")
    return multiply(expand_dims(x1, 1), expand_dims(x2, 0))


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Array:
    """Tensor contraction over ``axes`` (``jnp.tensordot``); ``out_sharding`` must be None (one
    CPU device)."""
    if out_sharding is not None:
        raise ValueError("tensordot: argument 'out_sharding' must be None on the CPU backend, "
                         f"got {out_sharding!r}")
    return _tensordot(x1, x2, axes, precision=precision,
                      preferred_element_type=preferred_element_type)


def tensorinv(a: Any, ind: int = 2) -> Array:
    """The inverse of ``a`` as a linear map from its last dimensions to its first ``ind``."""
    arr = asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer; got ind={ind}")
    shape = core.get_aval(arr).shape
    contracting, batch = shape[:ind], shape[ind:]
    flat = (math.prod(contracting), math.prod(batch))
    if flat[0] != flat[1]:
        raise ValueError("tensorinv is only possible when the product of the first `ind` "
                         "dimensions equals that of the remaining dimensions. got "
                         f"a.shape={shape} with ind={ind}.")
    return _reshape(inv(_reshape(arr, flat)), (*batch, *contracting))


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Array:
    """Solves ``tensordot(a, x, x.ndim) = b`` for ``x``."""
    a_arr, b_arr = asarray(a), asarray(b)
    if axes is not None:
        nd = core.get_aval(a_arr).ndim
        a_arr = _moveaxis(a_arr, axes, tuple(range(nd - len(axes), nd)))
    ash, bsh = core.get_aval(a_arr).shape, core.get_aval(b_arr).shape
    out_shape = ash[len(bsh):]
    if ash[:len(bsh)] != bsh:
        raise ValueError("tensorsolve: after moving axes to end, leading shape of a must match "
                         f"shape of b. got a.shape={ash}, b.shape={bsh}")
    bsize = math.prod(bsh)
    if bsize != math.prod(out_shape):
        raise ValueError("tensorsolve: input arrays must have prod(a.shape[:b.ndim]) == "
                         f"prod(a.shape[b.ndim:]); got a.shape={ash}, b.ndim={len(bsh)}.")
    a_arr = _reshape(a_arr, (bsize, math.prod(out_shape)))
    return _reshape(solve(a_arr, _ravel(b_arr)), out_shape)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Sum of the diagonals of the matrices in the last two axes of ``x``."""
    return _trace(asarray(x), offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Array:
    """Vector dot product along ``axis``, conjugating ``x1`` (``jnp.vecdot``)."""
    out = _vecdot(x1, x2, axis=axis)
    if preferred_element_type is not None:
        out = out.astype(preferred_element_type)
    return out


# ---- issue 28, orthogonal and spectral decompositions (lax.linalg qr, eigh, svd) ----

__all__ += ["EighResult", "QRResult", "SVDResult", "cond", "eigh", "eigvalsh", "lstsq",
            "matrix_norm", "matrix_rank", "norm", "pinv", "qr", "svd", "svdvals",
            "vector_norm"]


class EighResult(NamedTuple):
    """``eigh``'s result: real ``eigenvalues`` (ascending) and ``eigenvectors`` (columns)."""
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    """``qr``'s result: ``Q`` and ``R``."""
    Q: Array
    R: Array


class SVDResult(NamedTuple):
    """``svd``'s result: ``U``, ``S`` (descending) and ``Vh``."""
    U: Array
    S: Array
    Vh: Array


def _H(x: Any) -> Any:
    return conj(matrix_transpose(x))


def _at_least_2d(fn: str, a: Any) -> None:
    if core.get_aval(a).ndim < 2:
        raise ValueError(f"{fn}: argument 'a' must have at least 2 dimensions (..., m, n), got "
                         f"shape {core.get_aval(a).shape}")


def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition of each (..., m, n) matrix (as ``numpy.linalg.qr``).

    Args:
      a: (..., m, n) matrices.
      mode: ``"reduced"`` (Q (..., m, k), R (..., k, n), k = min(m, n)), ``"complete"`` (Q
        (..., m, m)), ``"r"`` (R only) or ``"raw"`` (LAPACK's ``(h, tau)``, ``h`` transposed).

    Returns:
      ``QRResult(Q, R)``, ``R`` alone for ``"r"``, ``QRResult(h, tau)`` for ``"raw"``.
    """
    (a,) = _inexact("qr", a)
    _at_least_2d("qr", a)
    if mode == "raw":
        h, taus = lax_linalg.geqrf(a)
        return QRResult(matrix_transpose(h), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"qr: argument 'mode' must be 'reduced', 'complete', 'r' or 'raw', "
                         f"got {mode!r}")
    q, r = lax_linalg.qr(a, full_matrices=full_matrices)
    return r if mode == "r" else QRResult(q, r)


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues and eigenvectors of Hermitian (real symmetric) matrices.

    Args:
      a: (..., n, n) matrices.
      UPLO: ``"L"`` (default) or ``"U"``: the triangle read when not symmetrized.
      symmetrize_input: use ``(a + aᴴ) / 2``.

    Returns:
      ``EighResult(eigenvalues, eigenvectors)``: ascending real eigenvalues and the
      eigenvectors as columns. The derivative is not finite at repeated eigenvalues (as JAX).
    """
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"eigh: argument 'UPLO' must be one of None, 'L', or 'U', got {UPLO!r}")
    (a,) = _inexact("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Array:
    """The (ascending, real) eigenvalues of Hermitian matrices (see ``eigh``)."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` of each (..., m, n) matrix.

    Args:
      a: (..., m, n) matrices.
      full_matrices: ``U`` (..., m, m) and ``Vh`` (..., n, n); else (..., m, k), (..., k, n).
      compute_uv: also return ``U`` and ``Vh``.
      hermitian: ``a`` is Hermitian: computed from ``eigh`` (as JAX).
      subset_by_index: ``(lo, hi)``: the singular triplets ``lo <= i < hi`` only.

    Returns:
      ``SVDResult(U, S, Vh)``, or ``S`` without ``compute_uv`` (real, descending).
    """
    (a,) = _inexact("svd", a)
    _at_least_2d("svd", a)
    if hermitian:
        vecs, vals = lax_linalg.eigh(a, subset_by_index=subset_by_index)
        s = _abs(vals)
        order = _argsort(s, axis=-1, descending=True)
        s = take_along_axis(s, order, axis=-1)
        if not compute_uv:
            return s
        sign = take_along_axis(_sign(vals), order, axis=-1)
        u = take_along_axis(vecs, order[..., None, :], axis=-1)
        vh = _H(u * sign[..., None, :].astype(u.dtype))
        return SVDResult(u, s, vh)
    if compute_uv:
        return SVDResult(*lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                         subset_by_index=subset_by_index))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                          subset_by_index=subset_by_index)


def svdvals(x: Any, /) -> Array:
    """The singular values (..., k) of each (..., m, n) matrix, descending."""
    return svd(x, compute_uv=False, hermitian=False)


def _sum_abs2(x: Any, axis: Any, keepdims: bool) -> Any:
    return _sqrt(_sum(real(x * conj(x)), axis=axis, keepdims=keepdims))


def vector_norm(x: Any, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | float | str = 2) -> Array:
    """The vector ``ord``-norm over ``axis`` (all axes by default): 2, 1, inf, -inf, 0 (the
    count of non-zeros) or any other power."""
    (x,) = _inexact("vector_norm", x)
    if ord is None or ord == 2:
        return _sum_abs2(x, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"vector_norm: invalid order {ord!r} for a vector norm (use "
                         "jnp.inf / -jnp.inf for the infinity norms)")
    if ord == np.inf:
        return _amax(_abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return _amin(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return _sum(not_equal(x, 0), dtype=finfo(core.get_aval(x).dtype).dtype, axis=axis,
                    keepdims=keepdims)
    if ord == 1:
        return _sum(_abs(x), axis=axis, keepdims=keepdims)
    ax = _abs(x)
    dt = core.get_aval(ax).dtype
    out = _sum(_power(ax, np.array(ord, dt)), axis=axis, keepdims=keepdims)
    return _power(out, np.array(1.0 / ord, dt))


def norm(x: Any, ord: int | float | str | None = None, axis: None | int | tuple[int, ...] = None,
         keepdims: bool = False) -> Array:
    """Matrix or vector norm, as ``numpy.linalg.norm``.

    Args:
      x: an array.
      ord: the order: for vectors as ``vector_norm``; for matrices ``None``/``'fro'``, ``'nuc'``
        (sum of singular values), ``2``/``-2`` (largest/smallest singular value), ``1``/``-1``
        (max/min column sum of ``|x|``), ``inf``/``-inf`` (max/min row sum).
      axis: ``None`` (all of ``x``: a vector norm for 1-d, a matrix norm for 2-d), one axis
        (vector norm) or two (matrix norm).
      keepdims: keep the reduced axes with size one.
    """
    (x,) = _inexact("norm", x)
    ndim = core.get_aval(x).ndim
    if axis is None:
        if ord is None:
            return _sum_abs2(x, None, keepdims)
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(canonicalize_axis(a, ndim, "norm") for a in axis)
    else:
        axis = (canonicalize_axis(axis, ndim, "norm"),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"norm: improper number of axes {axis}: pass one axis for a vector "
                         "norm or two for a matrix norm")
    row_axis, col_axis = axis
    if row_axis == col_axis:
        raise ValueError(f"norm: duplicate axes {axis}")
    if ord is None or ord in ("f", "fro"):
        return _sum_abs2(x, axis, keepdims)
    if ord in (1, -1):
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        col_sums = _sum(_abs(x), axis=row_axis, keepdims=keepdims)
        return (_amax(col_sums, axis=col_axis, keepdims=keepdims, initial=0) if ord == 1 else
                _amin(col_sums, axis=col_axis, keepdims=keepdims))
    if ord in (np.inf, -np.inf):
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        row_sums = _sum(_abs(x), axis=col_axis, keepdims=keepdims)
        return (_amax(row_sums, axis=row_axis, keepdims=keepdims, initial=0) if ord > 0 else
                _amin(row_sums, axis=row_axis, keepdims=keepdims))
    if ord in ("nuc", 2, -2):
        s = svd(moveaxis(x, axis, (-2, -1)), compute_uv=False)
        if ord == 2:
            y = _amax(s, axis=-1, initial=0)
        elif ord == -2:
            y = _amin(s, axis=-1)
        else:
            y = _sum(s, axis=-1)
        return expand_dims(y, axis) if keepdims else y
    raise ValueError(f"norm: invalid order {ord!r} for a matrix norm")


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: str | int = "fro") -> Array:
    """The matrix norm over the last two axes (see ``norm``)."""
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def _pinv(a: Any, rtol: Any, hermitian: bool) -> Any:
    m, n = core.get_aval(a).shape[-2:]
    dt = core.get_aval(a).dtype
    if m == 0 or n == 0:
        return zeros_like(matrix_transpose(a))
    a = conj(a)
    if rtol is None:
        rtol = 10.0 * max(m, n) * np.array(finfo(dt).eps)
    rtol = asarray(rtol)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    lead = core.get_aval(s).ndim - core.get_aval(rtol).ndim - 1
    rtol = rtol[..., None]
    if lead > 0:
        rtol = expand_dims(rtol, tuple(range(lead)))
    cutoff = rtol * s[..., 0:1]
    s = where(s > cutoff, s, np.inf).astype(dt)
    return _matmul(matrix_transpose(vh), matrix_transpose(u) / s[..., None])


_pinv_cj = custom_jvp(_pinv, nondiff_argnums=(1, 2))


@_pinv_cj.defjvp
def _pinv_jvp(rtol: Any, hermitian: bool, primals: tuple, tangents: tuple) -> tuple:
    # JAX's rule (Golub & Pereyra): the derivative of the pseudo-inverse at fixed rank
    (a,), (a_dot,) = primals, tangents
    p = _pinv_cj(a, rtol, hermitian)
    if hermitian:  # svd(hermitian=True) reads the Hermitian part, and so must the tangent
        a, a_dot = (a + _H(a)) / 2, (a_dot + _H(a_dot)) / 2
    m, n = core.get_aval(a).shape[-2:]
    mm = _matmul
    if m >= n:
        s = mm(mm(p, _H(p)), _H(a_dot))
        t = mm(mm(_H(a_dot), _H(p)), p)
        p_dot = -mm(mm(p, a_dot), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t)
    else:
        s = mm(p, mm(_H(p), _H(a_dot)))
        t = mm(_H(a_dot), mm(_H(p), p))
        p_dot = -mm(p, mm(a_dot, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t))
    return p, p_dot


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Array:
    """The Moore-Penrose pseudo-inverse (..., n, m) of each (..., m, n) matrix, from its SVD:
    singular values at most ``rtol`` times the largest are treated as zero (default
    ``10 max(m, n) eps``). JAX's custom derivative (that of a fixed-rank pseudo-inverse)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified")
        rtol = rcond
    (a,) = _inexact("pinv", a)
    _at_least_2d("pinv", a)
    return _pinv_cj(a, rtol, bool(hermitian))


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Array:
    """The number of singular values above ``rtol`` (default: the largest singular value
    times ``max(m, n) eps``), per matrix; for a vector, whether it is non-zero."""
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified")
        rtol = tol
    (M,) = _inexact("matrix_rank", M)
    aval = core.get_aval(M)
    if aval.ndim < 2:
        return _any(not_equal(M, 0)).astype(np.int32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    sdt = core.get_aval(S).dtype
    if rtol is None:
        rtol = _amax(S, axis=-1) * np.array(max(aval.shape[-2:]) * finfo(sdt).eps, sdt)
    rtol = expand_dims(asarray(rtol), np.ndim(rtol) if not isinstance(rtol, Array)
                       else core.get_aval(rtol).ndim)
    return _sum(S > rtol, axis=-1)


def lstsq(a: Any, b: Any, rcond: float | None = None, *,
          numpy_resid: bool = False) -> tuple[Array, Array, Array, Array]:
    """Least-squares solution of ``a @ x = b`` from the SVD of ``a`` (as JAX).

    Args:
      a: (m, n) matrix.
      b: (m,) or (m, k) right-hand sides.
      rcond: singular values below ``rcond`` times the largest are treated as zero (default
        ``eps max(m, n)``; negative: ``eps``).
      numpy_resid: return NumPy's residuals (empty unless full-rank and m > n; not traceable);
        by default the residuals are always computed.

    Returns:
      ``(x, residuals, rank, s)``.
    """
    a, b = _inexact("lstsq", a, b)
    aa, ba = core.get_aval(a), core.get_aval(b)
    if aa.ndim != 2:
        raise TypeError(f"lstsq: argument 'a' must be two-dimensional, got shape {aa.shape}")
    if ba.ndim not in (1, 2):
        raise TypeError(f"lstsq: argument 'b' must be one- or two-dimensional, got shape "
                        f"{ba.shape}")
    if aa.shape[0] != ba.shape[0]:
        raise ValueError(f"lstsq: the leading dimensions of 'a' {aa.shape} and 'b' {ba.shape} "
                         "must match")
    vector = ba.ndim == 1
    if vector:
        b = b[:, None]
    m, n = aa.shape
    dt = aa.dtype
    if m == 0 or n == 0:
        s = asarray(np.zeros(0, np.zeros(0, dt).real.dtype))
        rank = asarray(np.array(0, np.int32))
        x = asarray(np.zeros((n,) + core.get_aval(b).shape[1:], dt))
    else:
        eps = float(finfo(dt).eps)
        rc = eps * max(n, m) if rcond is None else where(asarray(rcond) < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        sdt = core.get_aval(s).dtype
        mask = (s > 0) & (s >= asarray(rc).astype(sdt) * s[0])
        rank = _sum(mask).astype(np.int32)
        safe_s = where(mask, s, 1).astype(dt)
        s_inv = where(mask, 1 / safe_s, 0)[:, None]
        x = _matmul(_H(vt), s_inv * _matmul(_H(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = asarray(np.zeros(0, np.zeros(0, dt).real.dtype))
    else:
        resid = norm(b - _matmul(a, x), axis=0) ** 2
    if vector:
        x = x[:, 0]
    return x, resid, rank, s


def cond(x: Any, p: Any = None) -> Array:
    """The condition number of each (..., m, n) matrix in the norm ``p`` (None/2: the ratio of
    the extreme singular values; -2 its inverse; other orders of ``norm`` for square
    matrices). Infinite where the matrix is singular (and finite)."""
    (x,) = _inexact("cond", x)
    shape = core.get_aval(x).shape
    if len(shape) < 2:
        raise ValueError(f"cond: argument 'x' must have at least 2 dimensions, got shape {shape}")
    if shape[-1] == 0 or shape[-2] == 0:
        raise ValueError(f"cond: argument 'x' must not be empty, got shape {shape}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if shape[-2] != shape[-1]:
            raise ValueError(f"cond: for p={p!r} argument 'x' must be square, got shape {shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return where(isnan(r) & ~_any(isnan(x), axis=(-2, -1)), np.inf, r)
