"""Element-wise primitives: one C kernel table row each (backends/cpu/csrc/elementwise.c).

Operands share one shape and one dtype; a 0-d operand broadcasts against the others (so
``x * 2.0`` stages as one ``mul`` with a literal, as in JAX). Each primitive is one row of the
tables below: its name, the dtypes it accepts, its output dtype rule, its NumPy reference and
its differentiation slots. Semantics are XLA's (see ``elementwise_reference`` for the details:
truncating, non-trapping integer division; NaN-propagating max/min; float16/bfloat16 computed
in float32 and rounded once). The float8 formats are storage types here: arithmetic on them
raises (convert to float32 first); select_n moves any dtype.
"""
from __future__ import annotations

import enum
from typing import Callable, Sequence

import numpy as np
import scipy.special

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, not_applicable
from . import elementwise_reference as ref
from .rules import AUTODIFF, BATCHING, NONLINEAR

# ---- dtype categories: (accepted dtypes, how an error message names them) ----
BOOL = frozenset({dtypes.bool_})
SINT = frozenset({dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64})
UINT = frozenset({dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64})
INT = SINT | UINT
FLOAT = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64})
REAL = frozenset({dtypes.float32, dtypes.float64})
COMPLEX = frozenset({dtypes.complex64, dtypes.complex128})

_KINDS = {
    "numeric": INT | FLOAT | COMPLEX,
    "inexact": FLOAT | COMPLEX,
    "floating": FLOAT,
    "integer": INT,
    "bool or integer": BOOL | INT,
    "ordered (bool, integer or floating)": BOOL | INT | FLOAT,
    "any (bool, numeric)": BOOL | INT | FLOAT | COMPLEX,
    "signed (signed integer, floating or complex)": SINT | FLOAT | COMPLEX,
    "integer or floating": INT | FLOAT,
    "float32/float64": REAL,
    "complex": COMPLEX,
    "float32/float64 or complex": REAL | COMPLEX,
}

NOT_DIFFERENTIABLE = not_applicable("integer- or bool-valued output: not differentiable")

_ARGS = ("x", "y", "z")


class RoundingMethod(enum.IntEnum):
    """How ``lax.round`` breaks ties, with JAX's values."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


# ---- output dtype rules ----

def _same(d: np.dtype) -> np.dtype:
    return d


def _bool(d: np.dtype) -> np.dtype:
    return dtypes.bool_


def _real(d: np.dtype) -> np.dtype:
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(d, d)


def _complex(d: np.dtype) -> np.dtype:
    return {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}.get(d, d)


# ---- abstract evaluation ----

def check_operands(name: str, kinds: str, avals: Sequence[ShapedArray],
                   args: Sequence[str] = _ARGS) -> tuple[tuple[int, ...], np.dtype]:
    """The common (shape, dtype) of element-wise operands, or the user-facing error.

    Operands must share a dtype in ``kinds`` and a shape, except that 0-d operands broadcast.
    """
    a0 = avals[0]
    for a in avals:  # the common case first: eager dispatch pays for every check
        if a.shape != a0.shape or a.dtype != a0.dtype:
            break
    else:
        if a0.dtype in _KINDS[kinds]:
            return a0.shape, a0.dtype
    ref_aval = max(avals, key=lambda a: a.ndim)
    for arg, a in zip(args, avals):
        if a.ndim and a.shape != ref_aval.shape:
            raise TypeError(f"{name}: argument '{arg}' has shape {a.shape}, but the operands "
                            f"must have equal shapes (or be scalars): got "
                            f"{', '.join(str(x.shape) for x in avals)}")
    for arg, a in zip(args, avals):
        if a.dtype != avals[0].dtype:
            raise TypeError(f"{name}: argument '{arg}' has dtype {a.dtype}, but the operands "
                            f"must have one dtype: got {', '.join(str(x.dtype) for x in avals)}")
        if a.dtype not in _KINDS[kinds]:
            article = "an" if kinds[0] in "aeiou" else "a"
            raise TypeError(f"{name}: argument '{arg}' must be {article} {kinds} array, got "
                            f"{a.dtype}")
    return ref_aval.shape, avals[0].dtype


def elementwise_aval(name: str, kinds: str, *avals: ShapedArray,
                     out: Callable[[np.dtype], np.dtype] = _same,
                     args: Sequence[str] = _ARGS) -> ShapedArray:
    """The output aval of element-wise op ``name`` on operands of category ``kinds``."""
    shape, dtype = check_operands(name, kinds, avals, args)
    out_dtype = out(dtype)
    weak = out_dtype == dtype and all(a.weak_type for a in avals)
    return ShapedArray(shape, out_dtype, weak)


# ---- declaration ----

def _reference(fn: Callable, out: Callable, exact: bool) -> Callable:
    """The reference rule: ``fn`` (through float32 for half types unless ``exact``), cast to the
    output dtype."""
    body = fn if exact else ref.via_float32(fn)

    def reference(*xs: np.ndarray, **params) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(body(*xs, **params)).astype(out(xs[0].dtype), copy=False)
    return reference


def _declare(name: str, nin: int, kinds: str, reference: Callable, *,
             out: Callable = _same, jvp=AUTODIFF, transpose=NONLINEAR, exact: bool = False,
             args: Sequence[str] = _ARGS) -> Primitive:
    """One element-wise primitive: every rule slot side by side.

    Args:
      name: JAX's primitive name (and the C table row's).
      nin: the number of operands.
      kinds: a key of ``_KINDS``: the dtypes the operands may have.
      reference: the NumPy implementation.
      out: the output dtype from the operands' dtype.
      jvp, transpose: the differentiation slots.
      exact: the reference is exact on half types (no float32 round trip needed).
      args: the operands' names in error messages (``lax``'s parameter names).
    """
    p = Primitive(name)
    p.abstract_eval = lambda *avals: elementwise_aval(name, kinds, *avals[:nin], out=out,
                                                      args=args)
    p.reference = _reference(reference, out, exact)
    p.cpu = lambda k, *xs: k.ewise(k.EWISE_OPS[name], *xs)
    p.jvp = jvp
    p.transpose = transpose
    p.batch = BATCHING
    return p


def _unary(name: str, kinds: str, reference: Callable, **kw) -> Primitive:
    return _declare(name, 1, kinds, reference, **kw)


def _binary(name: str, kinds: str, reference: Callable, **kw) -> Primitive:
    return _declare(name, 2, kinds, reference, **kw)


LINEAR = AUTODIFF  # linear in its operands: transpose arrives with autodiff (issue 4)
_CMP = dict(out=_bool, jvp=NOT_DIFFERENTIABLE, transpose=NOT_DIFFERENTIABLE, exact=True)
_BITS = dict(jvp=NOT_DIFFERENTIABLE, transpose=NOT_DIFFERENTIABLE, exact=True)

# ---- binary ----
add_p = _binary("add", "numeric", np.add, transpose=LINEAR)
sub_p = _binary("sub", "numeric", np.subtract, transpose=LINEAR)
mul_p = _binary("mul", "numeric", np.multiply, transpose=LINEAR)
div_p = _binary("div", "numeric", ref.div, transpose=LINEAR)
rem_p = _binary("rem", "integer or floating", ref.rem)
pow_p = _binary("pow", "inexact", np.power)
atan2_p = _binary("atan2", "floating", np.arctan2)
max_p = _binary("max", "any (bool, numeric)", np.maximum, exact=True)
min_p = _binary("min", "any (bool, numeric)", np.minimum, exact=True)
nextafter_p = _binary("nextafter", "floating", ref.nextafter, exact=True, args=("x1", "x2"))
complex_p = _binary("complex", "float32/float64", ref.make_complex, out=_complex,
                    transpose=LINEAR)
and_p = _binary("and", "bool or integer", np.bitwise_and, **_BITS)
or_p = _binary("or", "bool or integer", np.bitwise_or, **_BITS)
xor_p = _binary("xor", "bool or integer", np.bitwise_xor, **_BITS)
shift_left_p = _binary("shift_left", "integer", ref.shift_left, **_BITS)
shift_right_logical_p = _binary("shift_right_logical", "integer", ref.shift_right_logical,
                                **_BITS)
shift_right_arithmetic_p = _binary("shift_right_arithmetic", "integer",
                                   ref.shift_right_arithmetic, **_BITS)
eq_p = _binary("eq", "any (bool, numeric)", np.equal, **_CMP)
ne_p = _binary("ne", "any (bool, numeric)", np.not_equal, **_CMP)
lt_p = _binary("lt", "ordered (bool, integer or floating)", np.less, **_CMP)
le_p = _binary("le", "ordered (bool, integer or floating)", np.less_equal, **_CMP)
gt_p = _binary("gt", "ordered (bool, integer or floating)", np.greater, **_CMP)
ge_p = _binary("ge", "ordered (bool, integer or floating)", np.greater_equal, **_CMP)

# ---- unary ----
neg_p = _unary("neg", "numeric", np.negative, transpose=LINEAR, exact=True)
sign_p = _unary("sign", "numeric", ref.sign)
abs_p = _unary("abs", "signed (signed integer, floating or complex)", np.abs, out=_real,
               exact=True)
reciprocal_p = _unary("reciprocal", "inexact", np.reciprocal)
sqrt_p = _unary("sqrt", "inexact", np.sqrt)
rsqrt_p = _unary("rsqrt", "inexact", ref.rsqrt)
cbrt_p = _unary("cbrt", "floating", np.cbrt)
exp_p = _unary("exp", "inexact", np.exp)
exp2_p = _unary("exp2", "inexact", np.exp2)
expm1_p = _unary("expm1", "inexact", np.expm1)
log_p = _unary("log", "inexact", np.log)
log1p_p = _unary("log1p", "inexact", np.log1p)
logistic_p = _unary("logistic", "inexact", ref.logistic)
sin_p = _unary("sin", "inexact", np.sin)
cos_p = _unary("cos", "inexact", np.cos)
tan_p = _unary("tan", "inexact", np.tan)
asin_p = _unary("asin", "inexact", np.arcsin)
acos_p = _unary("acos", "inexact", np.arccos)
atan_p = _unary("atan", "inexact", np.arctan)
sinh_p = _unary("sinh", "inexact", np.sinh)
cosh_p = _unary("cosh", "inexact", np.cosh)
tanh_p = _unary("tanh", "inexact", np.tanh)
asinh_p = _unary("asinh", "inexact", np.arcsinh)
acosh_p = _unary("acosh", "inexact", np.arccosh)
atanh_p = _unary("atanh", "inexact", np.arctanh)
floor_p = _unary("floor", "floating", np.floor)
ceil_p = _unary("ceil", "floating", np.ceil)
trunc_p = _unary("trunc", "floating", np.trunc)
is_finite_p = _unary("is_finite", "floating", np.isfinite, **_CMP)
erf_p = _unary("erf", "floating", scipy.special.erf)
erfc_p = _unary("erfc", "floating", scipy.special.erfc)
erf_inv_p = _unary("erf_inv", "floating", scipy.special.erfinv)
lgamma_p = _unary("lgamma", "floating", ref.lgamma)
digamma_p = _unary("digamma", "floating", ref.digamma)
not_p = _unary("not", "bool or integer", np.invert, **_BITS)
population_count_p = _unary("population_count", "integer", ref.population_count, **_BITS)
clz_p = _unary("clz", "integer", ref.clz, **_BITS)
real_p = _unary("real", "complex", np.real, out=_real, transpose=LINEAR, exact=True)
imag_p = _unary("imag", "complex", np.imag, out=_real, transpose=LINEAR, exact=True)
conj_p = _unary("conj", "float32/float64 or complex", ref.conj, out=_complex,
                transpose=LINEAR, exact=True)


# ---- ops with parameters ----

def _round_aval(x: ShapedArray, *, rounding_method) -> ShapedArray:
    if rounding_method not in (0, 1) or isinstance(rounding_method, bool):
        raise ValueError("round: argument 'rounding_method' must be RoundingMethod."
                         f"AWAY_FROM_ZERO (0) or TO_NEAREST_EVEN (1), got {rounding_method!r}")
    return elementwise_aval("round", "floating", x)


def _round_ref(x: np.ndarray, *, rounding_method) -> np.ndarray:
    fn = ref.round_away if rounding_method == RoundingMethod.AWAY_FROM_ZERO else np.rint
    return np.asarray(ref.via_float32(fn)(x)).astype(x.dtype)


round_p = Primitive("round")
round_p.abstract_eval = _round_aval
round_p.reference = _round_ref
round_p.cpu = lambda k, x, *, rounding_method: k.ewise(
    k.EWISE_OPS["round" if rounding_method == RoundingMethod.AWAY_FROM_ZERO else "round_even"], x)
round_p.jvp = AUTODIFF
round_p.transpose = NONLINEAR
round_p.batch = BATCHING


def _integer_pow_aval(x: ShapedArray, *, y: int) -> ShapedArray:
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TypeError(f"integer_pow: argument 'y' must be a Python int, got {y!r}")
    out = elementwise_aval("integer_pow", "numeric", x)
    if y < 0 and dtypes.is_integer(x.dtype):
        raise ValueError(f"integer_pow: argument 'y' must be non-negative for an integer "
                         f"argument 'x' ({x.dtype}), got {y}")
    return out


integer_pow_p = Primitive("integer_pow")
integer_pow_p.abstract_eval = _integer_pow_aval
integer_pow_p.reference = lambda x, *, y: np.asarray(
    ref.via_float32(ref.integer_pow)(x, y=y)).astype(x.dtype)
integer_pow_p.cpu = lambda k, x, *, y: k.ewise(k.EWISE_OPS["integer_pow"], x, int(y))
integer_pow_p.jvp = AUTODIFF
integer_pow_p.transpose = NONLINEAR
integer_pow_p.batch = BATCHING


# ---- clamp and select_n ----

def _clamp_aval(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for arg, bound in (("min", lo), ("max", hi)):
        if bound.ndim and bound.shape != x.shape:
            raise TypeError(f"clamp: argument '{arg}' must be a scalar or have the shape of "
                            f"argument 'x' {x.shape}, got shape {bound.shape}")
    return elementwise_aval("clamp", "ordered (bool, integer or floating)", lo, x, hi,
                            args=("min", "x", "max"))


clamp_p = Primitive("clamp")
clamp_p.abstract_eval = _clamp_aval
clamp_p.reference = lambda lo, x, hi: np.asarray(ref.clamp(lo, x, hi)).astype(x.dtype)
clamp_p.cpu = lambda k, lo, x, hi: k.ewise(k.EWISE_OPS["clamp"], lo, x, hi)
clamp_p.jvp = AUTODIFF
clamp_p.transpose = NONLINEAR
clamp_p.batch = BATCHING


def _select_n_aval(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise TypeError("select_n: argument 'cases' must hold at least one case")
    if which.dtype not in (dtypes.bool_, dtypes.int32):
        raise TypeError(f"select_n: argument 'which' must be a bool or int32 array, got "
                        f"{which.dtype}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError(f"select_n: a bool argument 'which' selects between at most 2 cases, "
                        f"got {len(cases)}")
    c0 = cases[0]
    for i, c in enumerate(cases):
        if c.shape != c0.shape or c.dtype != c0.dtype:
            raise TypeError(f"select_n: argument 'cases' must have one shape and dtype: case "
                            f"{i} is {c.str_short()}, case 0 is {c0.str_short()}")
    if which.ndim and which.shape != c0.shape:
        raise TypeError(f"select_n: argument 'which' must be a scalar or have the cases' "
                        f"shape {c0.shape}, got shape {which.shape}")
    return ShapedArray(c0.shape, c0.dtype, all(c.weak_type for c in cases))


select_n_p = Primitive("select_n")
select_n_p.abstract_eval = _select_n_aval
select_n_p.reference = ref.select_n
select_n_p.cpu = lambda k, which, *cases: k.select_n(which, *cases)
select_n_p.jvp = AUTODIFF
select_n_p.transpose = LINEAR
select_n_p.batch = BATCHING
