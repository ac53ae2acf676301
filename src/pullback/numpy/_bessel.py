"""The modified Bessel function of the first kind of order zero, ``i0`` (JAX's: ``exp(|x|)``
times the exponentially scaled ``i0e``, with i0's derivative ``i1``), and the windows that use
it. i0e and i1e are Cephes' Chebyshev expansions on [0, 8] and (8, inf), written with
element-wise primitives; each has a custom derivative in terms of the other, so derivatives of
any order exist."""
from __future__ import annotations

from typing import Any

from .. import lax
from ..tracer import dtypes
from ..transforms.custom_derivatives import custom_jvp
from ._dtype_info import finfo
from ._promotion import aval_of, convert, promote_args_inexact
from ._ufuncs import where

ArrayLike = Any

# Cephes (Moshier): Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of
# exp(-x) sqrt(x) I0(x) on the inverted interval (8, inf); likewise for I1(x) / x and I1
_I0E_A = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1,
)
_I0E_B = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1,
)
_I1E_A = (
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
    3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
    -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
    4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
    -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
    2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
    -1.76416518357834055153E-1, 2.52587186443633654823E-1,
)
_I1E_B = (
    7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
    3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
    -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
    7.78576235018280120474E-1,
)


def _chbevl(y: Any, coeffs: tuple) -> Any:
    b0 = lax.full_like(y, coeffs[0])
    b1 = lax.full_like(y, 0)
    b2 = b1
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = lax.add(lax.sub(lax.mul(y, b1), b2), lax.full_like(y, c))
    return lax.mul(lax.full_like(y, 0.5), lax.sub(b0, b2))


def _branches(x: Any, a: tuple, b: tuple) -> tuple[Any, Any, Any]:
    """|x|, the [0, 8] expansion at |x| and the (8, inf) one (at a safe point below 8)."""
    ax = lax.abs(x)
    small = lax.le(ax, lax.full_like(ax, 8))
    lo = _chbevl(lax.sub(lax.mul(ax, lax.full_like(ax, 0.5)), lax.full_like(ax, 2)), a)
    safe = where(small, lax.full_like(ax, 8), ax)
    hi = lax.div(_chbevl(lax.sub(lax.div(lax.full_like(ax, 32), safe), lax.full_like(ax, 2)), b),
                 lax.sqrt(safe))
    return ax, small, (lo, hi)


@custom_jvp
def _i0e(x: Any) -> Any:
    _, small, (lo, hi) = _branches(x, _I0E_A, _I0E_B)
    return where(small, lo, hi)


@custom_jvp
def _i1e(x: Any) -> Any:
    ax, small, (lo, hi) = _branches(x, _I1E_A, _I1E_B)
    out = where(small, lax.mul(lo, ax), hi)
    return where(lax.lt(x, lax.full_like(x, 0)), lax.neg(out), out)


@_i0e.defjvp
def _i0e_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    y = _i0e(x)
    return y, lax.mul(t, lax.sub(_i1e(x), lax.mul(lax.sign(x), y)))


@_i1e.defjvp
def _i1e_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    y = _i1e(x)
    # d/dx i1e = i0e - i1e (sign(x) + 1/x), which tends to 1/2 at 0
    eps = float(finfo(aval_of(x).dtype).eps)
    big = lax.gt(lax.abs(x), lax.full_like(x, eps))
    sx = where(big, x, lax.full_like(x, eps))
    d = lax.sub(_i0e(sx), lax.mul(y, lax.add(lax.sign(sx), lax.div(lax.full_like(sx, 1), sx))))
    return y, lax.mul(t, where(big, d, lax.full_like(x, 0.5)))


@custom_jvp
def _i0(x: Any) -> Any:
    ax = lax.abs(x)
    return lax.mul(lax.exp(ax), _i0e(ax))


@_i0.defjvp
def _i0_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    ax = lax.abs(x)
    # i0' = i1 = sign(x) exp(|x|) i1e(|x|) (0 at 0)
    d = lax.mul(lax.sign(x), lax.mul(lax.exp(ax), _i1e(ax)))
    return _i0(x), lax.mul(t, d)


def i0(x: ArrayLike) -> Any:
    """The modified Bessel function of the first kind of order zero, element-wise (real
    input; integers become floating)."""
    (x,) = promote_args_inexact("i0", x)
    if dtypes.is_complex(aval_of(x).dtype):
        raise ValueError("i0: argument 'x' must be real, got a complex array")
    dt = aval_of(x).dtype
    if dt.itemsize < 4:  # float16/bfloat16 computed in float32 (as XLA does), rounded once
        return convert(_i0(convert(x, dtypes.float32)), dt)
    return _i0(x)
