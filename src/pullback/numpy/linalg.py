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
