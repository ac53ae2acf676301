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
from ._creation import asarray
from ._linalg import diagonal as _diagonal, matmul as _matmul, trace as _trace
from ._promotion import promote_dtypes_inexact
from ._reductions import any as _any, count_nonzero, prod, sum as _sum
from ._shape import broadcast_to, expand_dims, matrix_transpose, squeeze
from ._creation import zeros_like
from ._ufuncs import abs as _abs, conj, equal, log, multiply, not_equal, real, where
from ..transforms.custom_derivatives import custom_jvp

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
    through one product with the inverse (one getrf + getri kernel), so reverse mode scales the
    cotangent by x⁻ᵀ; JAX's trace(solve(x, g)) transposes into two triangular solves against
    the identity and a permuting scatter (~1.2x its time at 256x256)."""
    xi = _pl.inv_p.bind(x)
    return _sum(multiply(matrix_transpose(xi), g), axis=(-2, -1))


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
