"""Element-wise lax operations, with ``jax.lax``'s names and signatures.

Operands share one shape and dtype; 0-d operands broadcast, and Python scalars take the array
operand's dtype (weakly). Semantics are XLA's: see ``pullback.primitives.elementwise``.
"""
from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from ..primitives import elementwise as ew
from ..primitives.elementwise import RoundingMethod
from ..tracer.array import Array
from ..tracer.core import Primitive
from ._operands import ArrayLike, scalars_to


def _unary(name: str, prim: Primitive, summary: str) -> Callable[[ArrayLike], Array]:
    def op(x: ArrayLike) -> Array:
        if type(x) is Array:  # (nothing to convert)
            return prim.bind(x)
        return prim.bind(*scalars_to((x,)))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{summary}\n\n    Args:\n      x: the operand.\n\n    Returns:\n"
                  "      The element-wise result.\n    ")
    op.primitive = prim  # (what it binds: pullback.numpy's eager short paths call it directly)
    return op


def _binary(name: str, prim: Primitive, summary: str,
            args: tuple[str, str] = ("x", "y")) -> Callable[[ArrayLike, ArrayLike], Array]:
    if args == ("x", "y"):
        def op(x: ArrayLike, y: ArrayLike) -> Array:
            if type(x) is Array and type(y) is Array:  # (nothing to convert)
                return prim.bind(x, y)
            return prim.bind(*scalars_to((x, y)))
    else:  # jax.lax's parameter names (nextafter's x1, x2), for keyword calls
        def op(x1: ArrayLike, x2: ArrayLike) -> Array:
            return prim.bind(*scalars_to((x1, x2)))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{summary}\n\n    Args:\n      {args[0]}, {args[1]}: operands of one dtype and "
                  "shape (or scalars).\n\n    Returns:\n      The element-wise result.\n    ")
    return op


__all__ = [
    "neg", "sign", "abs", "reciprocal", "sqrt", "rsqrt", "cbrt", "exp", "exp2", "expm1", "log",
    "log1p", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "floor", "ceil", "trunc", "is_finite", "erf", "erfc", "erf_inv",
    "lgamma", "digamma", "bitwise_not", "population_count", "clz", "real", "imag", "conj",
    "add", "sub", "mul", "div", "rem", "pow", "atan2", "max", "min", "nextafter", "complex",
    "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right_logical",
    "shift_right_arithmetic", "eq", "ne", "lt", "le", "gt", "ge", "round", "integer_pow",
    "clamp", "select", "select_n", "RoundingMethod", "square", "reduce_precision",
]

neg = _unary("neg", ew.neg_p, "Element-wise negation: ``-x``.")
square = _unary("square", ew.square_p, "Element-wise square ``x * x`` (integers wrap).")
sign = _unary("sign", ew.sign_p,
              "Element-wise sign: -1, 0 or 1 (NaN and -0.0 kept); ``x / |x|`` for complex.")
abs = _unary("abs", ew.abs_p,
             "Element-wise absolute value; the magnitude (a real array) for complex ``x``.")
reciprocal = _unary("reciprocal", ew.reciprocal_p, "Element-wise ``1 / x``.")
sqrt = _unary("sqrt", ew.sqrt_p, "Element-wise square root.")
rsqrt = _unary("rsqrt", ew.rsqrt_p, "Element-wise reciprocal square root ``1 / sqrt(x)``.")
cbrt = _unary("cbrt", ew.cbrt_p, "Element-wise cube root.")
exp = _unary("exp", ew.exp_p, "Element-wise exponential ``e ** x``.")
exp2 = _unary("exp2", ew.exp2_p, "Element-wise base-2 exponential ``2 ** x``.")
expm1 = _unary("expm1", ew.expm1_p, "Element-wise ``e ** x - 1``, accurate near zero.")
log = _unary("log", ew.log_p, "Element-wise natural logarithm.")
log1p = _unary("log1p", ew.log1p_p, "Element-wise ``log(1 + x)``, accurate near zero.")
logistic = _unary("logistic", ew.logistic_p,
                   "Element-wise logistic sigmoid ``1 / (1 + e ** -x)``.")
sin = _unary("sin", ew.sin_p, "Element-wise sine.")
cos = _unary("cos", ew.cos_p, "Element-wise cosine.")
tan = _unary("tan", ew.tan_p, "Element-wise tangent.")
asin = _unary("asin", ew.asin_p, "Element-wise arc sine.")
acos = _unary("acos", ew.acos_p, "Element-wise arc cosine.")
atan = _unary("atan", ew.atan_p, "Element-wise arc tangent.")
sinh = _unary("sinh", ew.sinh_p, "Element-wise hyperbolic sine.")
cosh = _unary("cosh", ew.cosh_p, "Element-wise hyperbolic cosine.")
tanh = _unary("tanh", ew.tanh_p, "Element-wise hyperbolic tangent.")
asinh = _unary("asinh", ew.asinh_p, "Element-wise inverse hyperbolic sine.")
acosh = _unary("acosh", ew.acosh_p, "Element-wise inverse hyperbolic cosine.")
atanh = _unary("atanh", ew.atanh_p, "Element-wise inverse hyperbolic tangent.")
floor = _unary("floor", ew.floor_p, "Element-wise rounding toward negative infinity.")
ceil = _unary("ceil", ew.ceil_p, "Element-wise rounding toward positive infinity.")
trunc = _unary("trunc", ew.trunc_p,
               "Element-wise rounding toward zero (a pullback extension: jax.lax has none).")
is_finite = _unary("is_finite", ew.is_finite_p,
                   "Element-wise test for finiteness (neither infinite nor NaN); a bool array.")
erf = _unary("erf", ew.erf_p, "Element-wise error function.")
erfc = _unary("erfc", ew.erfc_p, "Element-wise complementary error function ``1 - erf(x)``.")
erf_inv = _unary("erf_inv", ew.erf_inv_p,
                 "Element-wise inverse error function (+-inf at +-1, NaN outside [-1, 1]).")
lgamma = _unary("lgamma", ew.lgamma_p,
                "Element-wise log of the absolute value of the gamma function.")
digamma = _unary("digamma", ew.digamma_p,
                 "Element-wise digamma function (NaN at the poles 0, -1, -2, ...).")
bitwise_not = _unary("bitwise_not", ew.not_p, "Element-wise bitwise NOT (logical NOT for bool).")
population_count = _unary("population_count", ew.population_count_p,
                          "Element-wise number of set bits.")
clz = _unary("clz", ew.clz_p, "Element-wise number of leading zero bits (the bit width for 0).")
real = _unary("real", ew.real_p, "Element-wise real part of a complex array.")
imag = _unary("imag", ew.imag_p, "Element-wise imaginary part of a complex array.")
conj = _unary("conj", ew.conj_p,
              "Element-wise complex conjugate (a real ``x`` gives a complex result).")

add = _binary("add", ew.add_p, "Element-wise ``x + y`` (integers wrap).")
sub = _binary("sub", ew.sub_p, "Element-wise ``x - y`` (integers wrap).")
mul = _binary("mul", ew.mul_p, "Element-wise ``x * y`` (integers wrap).")
div = _binary("div", ew.div_p,
              "Element-wise ``x / y``; integers truncate toward zero, ``x / 0 = -1`` and "
              "``INT_MIN / -1 = INT_MIN`` (XLA's semantics: no trap).")
rem = _binary("rem", ew.rem_p,
              "Element-wise remainder with the sign of ``x`` (C's ``%``, ``fmod`` for floats); "
              "``x % 0 = x`` for integers.")
pow = _binary("pow", ew.pow_p, "Element-wise power ``x ** y`` of floating or complex operands.")
atan2 = _binary("atan2", ew.atan2_p,
                "Element-wise arc tangent of ``x / y`` in the quadrant of ``(y, x)``.")
max = _binary("max", ew.max_p,
              "Element-wise maximum; NaN propagates; complex compares (real, imag).")
min = _binary("min", ew.min_p,
              "Element-wise minimum; NaN propagates; complex compares (real, imag).")
nextafter = _binary("nextafter", ew.nextafter_p,
                    "The next representable value after ``x1`` in the direction of ``x2``.",
                    ("x1", "x2"))
complex = _binary("complex", ew.complex_p,
                  "Element-wise ``x + i y`` from two float32 (or float64) arrays.")
bitwise_and = _binary("bitwise_and", ew.and_p, "Element-wise bitwise AND (logical AND for bool).")
bitwise_or = _binary("bitwise_or", ew.or_p, "Element-wise bitwise OR (logical OR for bool).")
bitwise_xor = _binary("bitwise_xor", ew.xor_p, "Element-wise bitwise XOR (logical XOR for bool).")
shift_left = _binary("shift_left", ew.shift_left_p,
                     "Element-wise ``x << y``; amounts outside [0, bits) give 0.")
shift_right_logical = _binary("shift_right_logical", ew.shift_right_logical_p,
                              "Element-wise logical ``x >> y`` (zero fill); amounts outside "
                              "[0, bits) give 0.")
shift_right_arithmetic = _binary("shift_right_arithmetic", ew.shift_right_arithmetic_p,
                                 "Element-wise arithmetic ``x >> y`` (sign fill); amounts "
                                 "outside [0, bits) give the sign fill.")
eq = _binary("eq", ew.eq_p, "Element-wise ``x == y``; a bool array.")
ne = _binary("ne", ew.ne_p, "Element-wise ``x != y`` (true for NaN); a bool array.")
lt = _binary("lt", ew.lt_p, "Element-wise ``x < y`` (false for NaN); a bool array.")
le = _binary("le", ew.le_p, "Element-wise ``x <= y`` (false for NaN); a bool array.")
gt = _binary("gt", ew.gt_p, "Element-wise ``x > y`` (false for NaN); a bool array.")
ge = _binary("ge", ew.ge_p, "Element-wise ``x >= y`` (false for NaN); a bool array.")


def round(x: ArrayLike,
          rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO) -> Array:
    """Element-wise rounding to the nearest integer.

    Args:
      x: a floating operand.
      rounding_method: how ties round: ``RoundingMethod.AWAY_FROM_ZERO`` (0, the default) or
        ``RoundingMethod.TO_NEAREST_EVEN`` (1).

    Returns:
      The rounded values, in ``x``'s dtype.
    """
    if rounding_method in (0, 1) and not isinstance(rounding_method, bool):
        rounding_method = RoundingMethod(rounding_method)
    return ew.round_p.bind(*scalars_to((x,)), rounding_method=rounding_method)


def integer_pow(x: ArrayLike, y: int) -> Array:
    """Element-wise ``x ** y`` for a static integer exponent, by repeated multiplication.

    Args:
      x: the base (integer, floating or complex; integers wrap on overflow).
      y: a Python int; negative only for floating or complex ``x`` (``1 / x ** -y``).

    Returns:
      The powers, in ``x``'s dtype.
    """
    return ew.integer_pow_p.bind(*scalars_to((x,)), y=y)


def reduce_precision(operand: ArrayLike, exponent_bits: int, mantissa_bits: int) -> Array:
    """Element-wise rounding to a floating-point format with fewer bits, and back.

    As XLA: the mantissa rounds to nearest even, values beyond the narrower format's range
    become infinities, values below its smallest normal number become (signed) zeros, and NaN
    passes unchanged. Differentiation treats it as linear (tangents are rounded too), as JAX.

    Args:
      operand: a floating operand (float16, bfloat16, float32 or float64).
      exponent_bits: the narrower format's exponent bits (at least 1).
      mantissa_bits: its explicit mantissa bits (at least 0).

    Returns:
      The rounded values, in ``operand``'s dtype.
    """
    bits = []
    for arg, v in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        try:
            bits.append(operator.index(v))
        except TypeError:
            raise TypeError(f"reduce_precision: argument '{arg}' must be an int, got "
                            f"{v!r}") from None
    return ew.reduce_precision_p.bind(*scalars_to((operand,)), exponent_bits=bits[0],
                                      mantissa_bits=bits[1])


def clamp(min: ArrayLike, x: ArrayLike, max: ArrayLike) -> Array:
    """Element-wise ``min(max(x, min), max)``; NaN in any operand propagates.

    Args:
      min: the lower bound, a scalar or of ``x``'s shape.
      x: the operand.
      max: the upper bound, a scalar or of ``x``'s shape.

    Returns:
      ``x`` clamped to ``[min, max]``.
    """
    return ew.clamp_p.bind(*scalars_to((min, x, max)))


def select_n(which: ArrayLike, *cases: ArrayLike) -> Array:
    """Element-wise ``cases[which]``.

    Args:
      which: bool (at most two cases: False picks ``cases[0]``) or int32, a scalar or of the
        cases' shape. Out-of-range int32 indices clamp to ``[0, len(cases) - 1]`` (JAX leaves
        them undefined).
      *cases: one or more arrays of one shape and dtype.

    Returns:
      An array of the cases' shape and dtype.
    """
    if isinstance(which, bool):
        which = Array(np.asarray(which))
    return ew.select_n_p.bind(which, *scalars_to(cases))


def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Array:
    """Element-wise ``on_true if pred else on_false``: ``select_n(pred, on_false, on_true)``.

    Args:
      pred: bool, a scalar or of the cases' shape.
      on_true, on_false: arrays of one shape and dtype.

    Returns:
      An array of the cases' shape and dtype.
    """
    return select_n(pred, on_false, on_true)
