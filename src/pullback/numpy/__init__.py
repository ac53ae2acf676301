"""``pullback.numpy``: NumPy's API on pullback arrays, as ``jax.numpy``."""
import numpy as _np

from ..tracer.array import Array as ndarray  # noqa: F401
from ._creation import (arange, array, asarray, copy, empty, empty_like,  # noqa: F401
                        from_dlpack, eye, full, full_like, identity, indices, meshgrid, ones,
                        ones_like, tri, zeros, zeros_like)
from ._dtype_info import (bfloat16, bool_, can_cast, complex64, complex128, complex_,  # noqa: F401
                          complexfloating, dtype, finfo, float8_e4m3fn, float8_e5m2, float16,
                          float32, float64, float_, floating, generic, iinfo, inexact, int8,
                          int16, int32, int64, int_, integer, isdtype, issubdtype, number,
                          promote_types, result_type, signedinteger, uint, uint8, uint16,
                          uint32, uint64, unsignedinteger)
from ._indexing import take, take_along_axis  # noqa: F401
from ._matrices import diag, diagflat, tril, triu  # noqa: F401
from ._padding import pad  # noqa: F401
from ._convolve import convolve, correlate  # noqa: F401
from ._quantiles import (median, nanmedian, nanpercentile, nanquantile,  # noqa: F401
                         percentile, quantile)
from ._ranges import geomspace, linspace, logspace  # noqa: F401
from ._repeat import repeat  # noqa: F401
from ._linalg import (diagonal, dot, einsum, inner, kron, matmul, outer, tensordot,  # noqa: F401
                      trace, vdot, vecdot)
from ._reductions import (all, allclose, amax, amin, any, argmax, argmin,  # noqa: F401,A004
                          array_equal, array_equiv, average, bincount, count_nonzero, cumprod,
                          cumsum, cumulative_prod, cumulative_sum, max, mean, min, nanargmax, nanargmin,
                          nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd, nansum,
                          nanvar, prod, ptp, std, sum, var)
from ._shape import (array_split, atleast_1d, atleast_2d, atleast_3d,  # noqa: F401
                     broadcast_arrays, broadcast_shapes, broadcast_to, column_stack, concat,
                     concatenate, diff, dsplit, dstack, expand_dims, flip, fliplr, flipud,
                     hsplit, hstack, matrix_transpose, moveaxis, permute_dims, ravel, reshape, roll,
                     rot90, row_stack, split, squeeze, stack, swapaxes, tile, transpose,
                     vsplit, vstack)
from ._sorting import (argsort, argwhere, flatnonzero, lexsort, nonzero,  # noqa: F401
                       searchsorted, sort, unique, where)
from ._ufuncs import (abs, absolute, acos, acosh, angle, arccos, arccosh,  # noqa: F401,A004
                      arcsin, arcsinh, arctan, arctan2, arctanh, around, astype, asin, asinh,
                      atan, atan2, atanh, bitwise_and, bitwise_count, bitwise_invert,
                      bitwise_left_shift, bitwise_not, bitwise_or,
                      bitwise_right_shift, bitwise_xor, cbrt, ceil, clip, conj, conjugate,
                      copysign, cos, cosh, deg2rad, degrees, divide, divmod, equal, exp, exp2,
                      expm1, fix, float_power, floor, floor_divide, fmax, fmin, fmod, gcd, greater,
                      greater_equal, heaviside, hypot, imag, invert, isclose, isfinite, isinf,
                      isnan, isneginf, isposinf, lcm, left_shift, less, less_equal, log, log1p,
                      log2, log10, logaddexp, logaddexp2, logical_and, logical_not, logical_or,
                      logical_xor, maximum, minimum, mod, multiply, negative, nextafter,
                      not_equal, positive, pow, power, rad2deg, radians, real, reciprocal,
                      remainder, right_shift, rint, round, round_, sign, signbit, sin, sinc,
                      sinh, sqrt, square, subtract, tan, tanh, true_divide, trunc)
from ._ufuncs import add  # noqa: F401
from ._selection import (argpartition, choose, compress, extract, fill_diagonal,  # noqa: F401
                         partition, piecewise, place, put, put_along_axis, select,
                         sort_complex)
from ._setops import (intersect1d, isin, setdiff1d, setxor1d, union1d,  # noqa: F401
                      unique_all, unique_counts, unique_inverse, unique_values)
from ._float_ops import fabs, frexp, ldexp, modf, nan_to_num, spacing  # noqa: F401
from ._index_tricks import (c_, diag_indices, diag_indices_from, index_exp, ix_,  # noqa: F401
                            mask_indices, mgrid, ogrid, r_, ravel_multi_index, s_,
                            tril_indices, tril_indices_from, triu_indices, triu_indices_from,
                            unravel_index)
from ._manipulation import (append, block, cross, delete, einsum_path, insert,  # noqa: F401
                            matvec, resize, rollaxis, unstack, vecmat)
from ._histograms import (digitize, histogram, histogram2d, histogram_bin_edges,  # noqa: F401
                          histogramdd)
from ._statistics import (corrcoef, cov, ediff1d, gradient, interp, trapezoid,  # noqa: F401
                          unwrap)
from ._polynomial import (poly, polyadd, polyder, polydiv, polyfit, polyint,  # noqa: F401
                          polymul, polysub, polyval, roots, trim_zeros, vander)
from ._bessel import i0  # noqa: F401
from ._windows import bartlett, blackman, hamming, hanning, kaiser  # noqa: F401
from ._functional import (apply_along_axis, apply_over_axes, frompyfunc, ufunc,  # noqa: F401
                          vectorize)
from ._queries import (ComplexWarning, array_repr, array_str, cdouble, character,  # noqa: F401
                       csingle, double, flexible, float4_e2m1fn, float6_e2m3fn,
                       float6_e3m2fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz,
                       float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu, frombuffer, fromfile,
                       fromfunction, fromiter, fromstring, get_printoptions, int1, int2, int4,
                       iscomplex, iscomplexobj, isreal, isrealobj, isscalar, iterable, ndim,
                       object_, packbits, printoptions, set_printoptions, shape, single, size,
                       uint1, uint2, uint4, unpackbits)
from . import _operators  # noqa: F401,E402  (installs Array/Tracer operators and methods)
from . import _array_methods  # noqa: F401,E402  (argpartition, choose, compress, ...)

pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None
# JAX's jnp.bool (the NumPy 2 name); last, so that nothing here calls the builtin after it
bool = bool_  # noqa: A001
from . import linalg  # noqa: E402,F401  (jnp.linalg)
from . import fft  # noqa: E402,F401  (jnp.fft)
