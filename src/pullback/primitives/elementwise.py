"""Element-wise primitives: one C kernel table row each (backends/cpu/csrc/elementwise.c).

Operands share one shape and one dtype; a 0-d operand broadcasts against the others (so
``x * 2.0`` stages as one ``mul`` with a literal, as in JAX). Each primitive is one row of the
tables below: its name, the dtypes it accepts, its output dtype rule, its NumPy reference and
its differentiation slots. Semantics are XLA's (see ``elementwise_reference`` for the details:
truncating, non-trapping integer division; NaN-propagating max/min; float16/bfloat16 computed
in float32 and rounded once). The float8 formats are storage types here: arithmetic on them
raises (convert to float32 first); select_n moves any dtype.

Derivatives follow JAX's conventions: holomorphic functions of complex operands have the
tangent ``f'(z) * dz``; real, imag, conj and complex are linear (their transposes are JAX's);
max/min split ties 0.5/0.5; floor, ceil, round, trunc and sign have a zero derivative. Every
primitive batches with ``rules.broadcast_batcher``.

These declarations are the only place the kernel facts are written: ``KERNEL_ROWS`` holds, per
C table row, the arity, int parameters, dtypes and output dtype rule; the CPU backend checks
elementwise.c's table against it when it loads (``backends/cpu/op_facts.py``), and the compiler
reads arity and output dtypes from it.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import NoRule, Primitive, get_aval, not_applicable
from . import elementwise_reference as ref
from .building_blocks import add_p, broadcast_in_dim_p, mul_p, reduce_sum_p, select_n_p, sub_p
from .rules import (NONLINEAR, Zero, add_tangents, batch_size, broadcast_batcher,
                    elementwise_jvp, instantiate, is_undefined, linear_jvp, linear_transpose,
                    move_bdim, zero_jvp, zeros_like_aval)

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
NO_DERIVATIVE_IN_JAX = not_applicable(
    "nextafter steps to an adjacent floating-point number: a function of the bit pattern that "
    "is not differentiable in JAX either (JAX defines no jvp for it)")

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

@dataclass(frozen=True)
class KernelRow:
    """What the C table row ``name`` of elementwise.c must agree with: its arity, its number of
    trailing int parameters, the dtypes it has loops for and its output dtype rule."""

    name: str
    nin: int
    nparams: int
    dtypes: frozenset
    out: Callable[[np.dtype], np.dtype]


# C row name -> its declared facts (a primitive's row is named after it; round has two rows)
KERNEL_ROWS: dict[str, KernelRow] = {}


def _kernel_row(name: str, nin: int, kinds: str, out: Callable = _same, nparams: int = 0) -> None:
    KERNEL_ROWS[name] = KernelRow(name, nin, nparams, _KINDS[kinds], out)


def _reference(fn: Callable, out: Callable, exact: bool) -> Callable:
    """The reference rule: ``fn`` (through float32 for half types unless ``exact``), cast to the
    output dtype."""
    body = fn if exact else ref.via_float32(fn)

    def reference(*xs: np.ndarray, **params) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(body(*xs, **params)).astype(out(xs[0].dtype), copy=False)
    return reference


def _declare(name: str | Primitive, nin: int, kinds: str, reference: Callable, *, jvp,
             out: Callable = _same, transpose=NONLINEAR, exact: bool = False,
             args: Sequence[str] = _ARGS) -> Primitive:
    """One element-wise primitive: every rule slot side by side.

    Args:
      name: JAX's primitive name (and the C table row's), or the primitive itself when
        building_blocks.py declares it.
      nin: the number of operands.
      kinds: a key of ``_KINDS``: the dtypes the operands may have.
      reference: the NumPy implementation.
      jvp: a builder ``prim -> jvp rule`` (``_partials(...)``, ``linear_jvp``, ``zero_jvp``,
        ...) or a ``NoRule`` saying why there is none.
      out: the output dtype from the operands' dtype.
      transpose: the transpose rule (linear ops) or ``NONLINEAR``.
      exact: the reference is exact on half types (no float32 round trip needed).
      args: the operands' names in error messages (``lax``'s parameter names).
    """
    p = name if isinstance(name, Primitive) else Primitive(name)
    name = p.name
    _kernel_row(name, nin, kinds, out)
    p.abstract_eval = lambda *avals: elementwise_aval(name, kinds, *avals[:nin], out=out,
                                                      args=args)
    p.reference = _reference(reference, out, exact)
    p.cpu = lambda k, *xs: k.ewise(k.EWISE_OPS[name], *xs)
    p.jvp = jvp if isinstance(jvp, NoRule) else jvp(p)
    p.transpose = transpose
    p.batch = broadcast_batcher(p)
    return p


def _unary(name: str, kinds: str, reference: Callable, **kw) -> Primitive:
    return _declare(name, 1, kinds, reference, **kw)


def _binary(name: str | Primitive, kinds: str, reference: Callable, **kw) -> Primitive:
    return _declare(name, 2, kinds, reference, **kw)


# ---- building blocks of the rules: bound primitives, so that every rule composes with every
# transformation, its own derivatives included ----

def _c(like, value) -> Array:
    """A 0-d constant of ``like``'s dtype (weak, so it never changes a result's type)."""
    return Array(np.array(value, get_aval(like).dtype), weak_type=True)


def _full(shape: tuple[int, ...], like, value):
    """``value`` in ``like``'s dtype, broadcast (zero-copy) to ``shape``."""
    c = _c(like, value)
    return broadcast_in_dim_p.bind(c, shape=shape, broadcast_dimensions=()) if shape else c


def _pick(cond, like, if_true, if_false):
    """Numbers ``if_true`` where ``cond`` holds, else ``if_false``: ``cond``'s shape, ``like``'s
    dtype."""
    shape = get_aval(cond).shape
    return select_n_p.bind(cond, _full(shape, like, if_false), _full(shape, like, if_true))


def _add(a, b):
    return add_p.bind(a, b)


def _sub(a, b):
    return sub_p.bind(a, b)


def _mul(a, b):
    return mul_p.bind(a, b)


def _div(a, b):
    return div_p.bind(a, b)


def _neg(a):
    return neg_p.bind(a)


def _sq(a):
    return mul_p.bind(a, a)


def _recip(a):
    return reciprocal_p.bind(a)


def _broadcast_to(t, like):
    """Tangent ``t`` (of a 0-d operand, or a sum of such) broadcast to the shape of the result
    ``like``; symbolic zeros stay symbolic."""
    if type(t) is Zero:
        return Zero.from_primal(like)
    shape = get_aval(like).shape
    if get_aval(t).shape == shape:
        return t
    return broadcast_in_dim_p.bind(t, shape=shape, broadcast_dimensions=())


def _replace_zero(x):
    """``x`` with its zeros replaced by ones (so log(x) and 1/x stay finite where a factor of
    zero discards them, as JAX's pow and abs rules do)."""
    return select_n_p.bind(eq_p.bind(x, _c(x, 0)), x, _full(get_aval(x).shape, x, 1))


def _balanced_eq(x, out, y):
    """The share of max/min's tangent that goes to ``x``: 1 where it alone attains ``out``,
    1/2 on ties (JAX's convention), 0 elsewhere."""
    shape = get_aval(out).shape
    share = select_n_p.bind(eq_p.bind(y, out), _full(shape, out, 1), _full(shape, out, 0.5))
    return select_n_p.bind(eq_p.bind(x, out), _full(shape, out, 0), share)


_TRIGAMMA_SHIFT = 6  # recurrence steps before the asymptotic series (then z >= 6.5)
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66)  # B2, B4, ..., B10


def _trigamma(x):
    """psi'(x), digamma's derivative (JAX's polygamma(1, x)), from element-wise primitives.

    Below 1/2 the reflection psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x); above, the recurrence
    psi'(z) = psi'(z + 1) + 1 / z^2 until z >= 6.5, then the asymptotic series (relative error
    below 1e-10). Each branch only sees arguments in its own domain, so the branch a select
    discards never puts inf or NaN into a derivative.
    """
    low = lt_p.bind(x, _c(x, 0.5))
    z = select_n_p.bind(low, x, _sub(_c(x, 1), x))
    acc = None
    for _ in range(_TRIGAMMA_SHIFT):
        term = _recip(_sq(z))
        acc = term if acc is None else _add(acc, term)
        z = _add(z, _c(x, 1))
    inv_z = _recip(z)
    w = _sq(inv_z)
    poly = _c(x, _BERNOULLI[-1])
    for b in reversed(_BERNOULLI[:-1]):
        poly = _add(_c(x, b), _mul(w, poly))
    psi1 = _add(acc, _add(inv_z, _mul(w, _add(_c(x, 0.5), _mul(poly, inv_z)))))
    # sin^2(pi x) has period 1: reduce exactly first; 1/2 stands in where the branch is unused
    frac = _sub(x, round_p.bind(x, rounding_method=RoundingMethod.TO_NEAREST_EVEN))
    frac = select_n_p.bind(low, _full(get_aval(x).shape, x, 0.5), frac)
    s = sin_p.bind(_mul(_c(x, np.pi), frac))
    reflected = _sub(_div(_c(x, np.pi ** 2), _sq(s)), psi1)
    return select_n_p.bind(low, psi1, reflected)


# ---- jvp builders (each takes the primitive, returns its rule) ----

def _partials(*partials: Callable) -> Callable:
    """jvp from the partial derivatives ``d(*primals, out)`` (``rules.elementwise_jvp``)."""
    return lambda prim: elementwise_jvp(prim, *partials)


def _sum_jvp(negate_y: bool) -> Callable:
    """add and sub: linear in both operands; a lone tangent passes through (broadcast from 0-d
    when the other operand sets the shape), symbolic zeros stay symbolic."""
    def build(prim: Primitive) -> Callable:
        def rule(primals, tangents):
            out = prim.bind(*primals)
            tx, ty = tangents
            if type(tx) is Zero and type(ty) is not Zero:
                return out, _broadcast_to(_neg(ty) if negate_y else ty, out)
            if type(ty) is Zero:
                return out, _broadcast_to(tx, out)
            return out, prim.bind(tx, ty)
        return rule
    return build


def _div_jvp(prim: Primitive) -> Callable:
    """d(x / y) = dx / y - dy * (x / y) / y: the tangent stays a div, linear in its numerator."""
    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = prim.bind(x, y)
        acc = tx if type(tx) is Zero else _div(tx, y)
        if type(ty) is not Zero:
            acc = add_tangents(acc, _mul(ty, _neg(_div(out, y))))
        return out, _broadcast_to(acc, out)
    return rule


def _rem_jvp(prim: Primitive) -> Callable:
    """rem(x, y) = x - y * trunc(x / y): d/dx = 1, d/dy = -trunc(x / y), as JAX."""
    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = prim.bind(x, y)
        acc = tx
        if type(ty) is not Zero:
            acc = add_tangents(acc, _mul(ty, _neg(trunc_p.bind(_div(x, y)))))
        return out, _broadcast_to(acc, out)
    return rule


def _abs_jvp(prim: Primitive) -> Callable:
    """Real x: the tangent times +1 where x >= 0, else -1. Complex z (a real result): the real
    part of dz * conj(z) / |z|, zero at z = 0. Both as JAX."""
    def rule(primals, tangents):
        (x,), (t,) = primals, tangents
        out = prim.bind(x)
        if type(t) is Zero:
            return out, Zero.from_primal(out)
        if dtypes.is_complex(get_aval(x).dtype):
            # re(dz conj(z)) / |z| as re(dz) re(z) / |z| + im(dz) im(z) / |z|: real divisions
            # (no complex division, which does not vectorize with C99's special cases), and no
            # product dz conj(z) that could overflow before the division
            r = _replace_zero(out)
            return out, _add(_mul(real_p.bind(t), _div(real_p.bind(x), r)),
                             _mul(imag_p.bind(t), _div(imag_p.bind(x), r)))
        return out, _mul(t, _pick(ge_p.bind(x, _c(x, 0)), x, 1, -1))
    return rule


def _integer_pow_jvp(prim: Primitive) -> Callable:
    """d(x ** y) = y * x ** (y - 1) * dx; zero for y = 0."""
    def rule(primals, tangents, *, y):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, y=y)
        if y == 0 or type(t) is Zero:
            return out, Zero.from_primal(out)
        return out, _mul(t, _mul(_c(x, y), prim.bind(x, y=y - 1)))
    return rule


def _clamp_jvp(prim: Primitive) -> Callable:
    """JAX's rule: x's tangent passes where min < x < max, min's where min > x (and min < max),
    max's where max < x; elsewhere zero."""
    def rule(primals, tangents):
        lo, x, hi = primals
        out = prim.bind(lo, x, hi)
        where = (lambda: and_p.bind(gt_p.bind(lo, x), lt_p.bind(lo, hi)),
                 lambda: and_p.bind(gt_p.bind(x, lo), lt_p.bind(x, hi)),
                 lambda: lt_p.bind(hi, x))
        acc = Zero.from_primal(out)
        for t, cond in zip(tangents, where):
            if type(t) is Zero:
                continue
            t = _broadcast_to(t, out)
            acc = add_tangents(acc, select_n_p.bind(cond(), zeros_like_aval(get_aval(t)), t))
        return out, acc
    return rule


def _select_n_jvp(prim: Primitive) -> Callable:
    """The selected case's tangent (``which`` is an index: no derivative)."""
    def rule(primals, tangents):
        out = prim.bind(*primals)
        ts = tangents[1:]
        if all(type(t) is Zero for t in ts):
            return out, Zero.from_primal(out)
        return out, prim.bind(primals[0], *[instantiate(t) for t in ts])
    return rule


# ---- transpose rules (linear ops) ----

def _unbroadcast(aval: ShapedArray, ct):
    """Cotangent ``ct`` of a result, summed down to the shape of operand ``aval`` (element-wise
    operands broadcast only from 0-d)."""
    if type(ct) is Zero:
        return Zero(aval)
    nd = get_aval(ct).ndim
    return ct if nd == aval.ndim else reduce_sum_p.bind(ct, axes=tuple(range(nd)))


def _linear_transpose(*maps: Callable) -> Callable:
    """The transpose rule of an op linear in each operand being solved for:
    ``maps[i](ct, *operands)`` is operand i's cotangent (before summing a broadcast away)."""
    def rule(ct, *operands):
        return [_unbroadcast(x.aval, ct if type(ct) is Zero else f(ct, *operands))
                if is_undefined(x) else None for x, f in zip(operands, maps)]
    return rule


def _linear_in_one(name: str, transpose: Callable, known: Sequence[int] = ()) -> Callable:
    """``transpose``, after checking that the op is being transposed in one operand only (and
    never in the operands ``known``, in which it is not linear)."""
    def rule(ct, *operands):
        undefined = [i for i, x in enumerate(operands) if is_undefined(x)]
        if len(undefined) != 1 or undefined[0] in known:
            which = ", ".join(f"'{_ARGS[i]}'" for i in undefined)
            raise ValueError(f"{name}: cannot transpose in operand(s) {which}: {name} is linear "
                             f"in one operand at a time" +
                             (f", and never in '{_ARGS[known[0]]}'" if known else ""))
        return transpose(ct, *operands)
    return rule


_add_transpose = _linear_transpose(lambda ct, x, y: ct, lambda ct, x, y: ct)
_sub_transpose = _linear_transpose(lambda ct, x, y: ct, lambda ct, x, y: _neg(ct))
_mul_transpose = _linear_in_one("mul", _linear_transpose(lambda ct, x, y: _mul(ct, y),
                                                         lambda ct, x, y: _mul(x, ct)))
_div_transpose = _linear_in_one("div", _linear_transpose(lambda ct, x, y: _div(ct, y), None),
                                known=(1,))
# complex(x, y) = x + iy pairs with a cotangent c as Re(c) x - Im(c) y (JAX's real pairing)
_complex_transpose = _linear_transpose(lambda ct, x, y: real_p.bind(ct),
                                       lambda ct, x, y: _neg(imag_p.bind(ct)))
_neg_transpose = _linear_transpose(lambda ct, x: _neg(ct))
_real_transpose = _linear_transpose(lambda ct, x: complex_p.bind(ct, _c(ct, 0)))
_imag_transpose = _linear_transpose(lambda ct, x: complex_p.bind(_c(ct, 0), _neg(ct)))
_conj_transpose = _linear_transpose(
    lambda ct, x: conj_p.bind(ct) if dtypes.is_complex(x.aval.dtype) else real_p.bind(ct))


def _select_n_transpose(ct, which, *cases):
    """Each case being solved for gets the cotangent where it was selected, zero elsewhere."""
    if is_undefined(which):
        raise ValueError("select_n: cannot transpose in argument 'which': it is an index, and "
                         "select_n is linear in its cases only")
    if type(ct) is Zero:
        return [None] + [Zero(c.aval) if is_undefined(c) else None for c in cases]
    zeros = zeros_like_aval(get_aval(ct))
    return [None] + [select_n_p.bind(which, *[ct if j == i else zeros for j in range(len(cases))])
                     if is_undefined(c) else None for i, c in enumerate(cases)]


# ---- batching: operands that set the result's shape are always batched ----

def _shape_setting_batcher(prim: Primitive, operands: Callable[[int], range]) -> Callable:
    """``broadcast_batcher`` for clamp and select_n, whose other operands may be 0-d only when
    ``operands(n)`` (clamp's x, select_n's cases) are: those are batched (broadcast, zero-copy)
    whenever anything is."""
    inner = broadcast_batcher(prim)

    def rule(vals, dims, **params):
        size = batch_size(vals, dims)
        vals, dims = list(vals), list(dims)
        for i in operands(len(vals)):
            if dims[i] is None:
                vals[i], dims[i] = move_bdim(vals[i], None, 0, size), 0
        return inner(vals, dims, **params)
    return rule


_CMP = dict(out=_bool, jvp=NOT_DIFFERENTIABLE, transpose=NOT_DIFFERENTIABLE, exact=True)
_BITS = dict(jvp=NOT_DIFFERENTIABLE, transpose=NOT_DIFFERENTIABLE, exact=True)
_LINEAR = dict(jvp=linear_jvp)
_ZERO = dict(jvp=zero_jvp)
_SQRT_PI = float(np.sqrt(np.pi))

# ---- binary ----
add_p = _binary(add_p, "numeric", np.add, jvp=_sum_jvp(False), transpose=_add_transpose)
sub_p = _binary(sub_p, "numeric", np.subtract, jvp=_sum_jvp(True), transpose=_sub_transpose)
mul_p = _binary(mul_p, "numeric", np.multiply, transpose=_mul_transpose,
                jvp=_partials(lambda x, y, out: y, lambda x, y, out: x))
div_p = _binary("div", "numeric", ref.div, jvp=_div_jvp, transpose=_div_transpose)
rem_p = _binary("rem", "integer or floating", ref.rem, jvp=_rem_jvp)
pow_p = _binary("pow", "inexact", np.power, jvp=_partials(
    lambda x, y, out: _mul(y, pow_p.bind(x, _sub(y, _c(y, 1)))),
    lambda x, y, out: _mul(log_p.bind(_replace_zero(x)), out)))
atan2_p = _binary("atan2", "floating", np.arctan2, jvp=_partials(
    lambda x, y, out: _div(y, _add(_sq(x), _sq(y))),
    lambda x, y, out: _div(_neg(x), _add(_sq(x), _sq(y)))))
max_p = _binary("max", "any (bool, numeric)", np.maximum, exact=True, jvp=_partials(
    lambda x, y, out: _balanced_eq(x, out, y), lambda x, y, out: _balanced_eq(y, out, x)))
min_p = _binary("min", "any (bool, numeric)", np.minimum, exact=True, jvp=_partials(
    lambda x, y, out: _balanced_eq(x, out, y), lambda x, y, out: _balanced_eq(y, out, x)))
nextafter_p = _binary("nextafter", "floating", ref.nextafter, exact=True, args=("x1", "x2"),
                      jvp=NO_DERIVATIVE_IN_JAX)
complex_p = _binary("complex", "float32/float64", ref.make_complex, out=_complex,
                    transpose=_complex_transpose, **_LINEAR)
and_p = _binary("and", "bool or integer", np.bitwise_and, **_BITS)
or_p = _binary("or", "bool or integer", np.bitwise_or, **_BITS)
xor_p = _binary("xor", "bool or integer", np.bitwise_xor, **_BITS)
# gcd/lcm of the operands' absolute values, as jnp.gcd/jnp.lcm (JAX builds them from a while
# loop; here one kernel row each)
gcd_p = _binary("gcd", "integer", ref.gcd, args=("x1", "x2"), **_BITS)
lcm_p = _binary("lcm", "integer", ref.lcm, args=("x1", "x2"), **_BITS)
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

# ---- unary (partials: d(x, out) -> d out / dx) ----
neg_p = _unary("neg", "numeric", np.negative, transpose=_neg_transpose, exact=True, **_LINEAR)
square_p = _unary("square", "numeric", np.square,
                  jvp=_partials(lambda x, out: _mul(_c(x, 2), x)))
sign_p = _unary("sign", "numeric", ref.sign, **_ZERO)
abs_p = _unary("abs", "signed (signed integer, floating or complex)", np.abs, out=_real,
               exact=True, jvp=_abs_jvp)
reciprocal_p = _unary("reciprocal", "inexact", np.reciprocal,
                      jvp=_partials(lambda x, out: _neg(_sq(out))))
sqrt_p = _unary("sqrt", "inexact", np.sqrt, jvp=_partials(lambda x, out: _div(_c(x, 0.5), out)))
rsqrt_p = _unary("rsqrt", "inexact", ref.rsqrt,
                 jvp=_partials(lambda x, out: _mul(_c(x, -0.5), _div(out, x))))
cbrt_p = _unary("cbrt", "floating", np.cbrt, jvp=_partials(
    lambda x, out: _mul(_c(x, 1 / 3), integer_pow_p.bind(out, y=-2))))
exp_p = _unary("exp", "inexact", np.exp, jvp=_partials(lambda x, out: out))
exp2_p = _unary("exp2", "inexact", np.exp2,
                jvp=_partials(lambda x, out: _mul(_c(x, np.log(2)), out)))
expm1_p = _unary("expm1", "inexact", np.expm1, jvp=_partials(lambda x, out: _add(out, _c(x, 1))))
log_p = _unary("log", "inexact", np.log, jvp=_partials(lambda x, out: _recip(x)))
log1p_p = _unary("log1p", "inexact", np.log1p,
                 jvp=_partials(lambda x, out: _recip(_add(x, _c(x, 1)))))
logistic_p = _unary("logistic", "inexact", ref.logistic,
                    jvp=_partials(lambda x, out: _mul(out, _sub(_c(x, 1), out))))
sin_p = _unary("sin", "inexact", np.sin, jvp=_partials(lambda x, out: cos_p.bind(x)))
cos_p = _unary("cos", "inexact", np.cos, jvp=_partials(lambda x, out: _neg(sin_p.bind(x))))
tan_p = _unary("tan", "inexact", np.tan, jvp=_partials(lambda x, out: _add(_c(x, 1), _sq(out))))
asin_p = _unary("asin", "inexact", np.arcsin,
                jvp=_partials(lambda x, out: rsqrt_p.bind(_sub(_c(x, 1), _sq(x)))))
acos_p = _unary("acos", "inexact", np.arccos,
                jvp=_partials(lambda x, out: _neg(rsqrt_p.bind(_sub(_c(x, 1), _sq(x))))))
atan_p = _unary("atan", "inexact", np.arctan,
                jvp=_partials(lambda x, out: _recip(_add(_c(x, 1), _sq(x)))))
sinh_p = _unary("sinh", "inexact", np.sinh, jvp=_partials(lambda x, out: cosh_p.bind(x)))
cosh_p = _unary("cosh", "inexact", np.cosh, jvp=_partials(lambda x, out: sinh_p.bind(x)))
tanh_p = _unary("tanh", "inexact", np.tanh, jvp=_partials(
    lambda x, out: _mul(_add(_c(x, 1), out), _sub(_c(x, 1), out))))
asinh_p = _unary("asinh", "inexact", np.arcsinh,
                 jvp=_partials(lambda x, out: rsqrt_p.bind(_add(_sq(x), _c(x, 1)))))
acosh_p = _unary("acosh", "inexact", np.arccosh,
                 jvp=_partials(lambda x, out: rsqrt_p.bind(_sub(_sq(x), _c(x, 1)))))
atanh_p = _unary("atanh", "inexact", np.arctanh, jvp=_partials(
    lambda x, out: _recip(_mul(_add(_c(x, 1), x), _sub(_c(x, 1), x)))))
floor_p = _unary("floor", "floating", np.floor, **_ZERO)
ceil_p = _unary("ceil", "floating", np.ceil, **_ZERO)
trunc_p = _unary("trunc", "floating", np.trunc, **_ZERO)
is_finite_p = _unary("is_finite", "floating", np.isfinite, **_CMP)
erf_p = _unary("erf", "floating", ref.special.erf, jvp=_partials(
    lambda x, out: _mul(_c(x, 2 / _SQRT_PI), exp_p.bind(_neg(_sq(x))))))
erfc_p = _unary("erfc", "floating", ref.special.erfc, jvp=_partials(
    lambda x, out: _mul(_c(x, -2 / _SQRT_PI), exp_p.bind(_neg(_sq(x))))))
erf_inv_p = _unary("erf_inv", "floating", ref.special.erfinv, jvp=_partials(
    lambda x, out: _mul(_c(x, _SQRT_PI / 2), exp_p.bind(_sq(out)))))
lgamma_p = _unary("lgamma", "floating", ref.lgamma,
                  jvp=_partials(lambda x, out: digamma_p.bind(x)))
digamma_p = _unary("digamma", "floating", ref.digamma,
                   jvp=_partials(lambda x, out: _trigamma(x)))
not_p = _unary("not", "bool or integer", np.invert, **_BITS)
population_count_p = _unary("population_count", "integer", ref.population_count, **_BITS)
clz_p = _unary("clz", "integer", ref.clz, **_BITS)
real_p = _unary("real", "complex", np.real, out=_real, transpose=_real_transpose, exact=True,
                **_LINEAR)
imag_p = _unary("imag", "complex", np.imag, out=_real, transpose=_imag_transpose, exact=True,
                **_LINEAR)
conj_p = _unary("conj", "float32/float64 or complex", ref.conj, out=_complex,
                transpose=_conj_transpose, exact=True, **_LINEAR)


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
_kernel_row("round", 1, "floating")
_kernel_row("round_even", 1, "floating")
round_p.abstract_eval = _round_aval
round_p.reference = _round_ref
round_p.cpu = lambda k, x, *, rounding_method: k.ewise(
    k.EWISE_OPS["round" if rounding_method == RoundingMethod.AWAY_FROM_ZERO else "round_even"], x)
round_p.jvp = zero_jvp(round_p)
round_p.transpose = NONLINEAR
round_p.batch = broadcast_batcher(round_p)


def _integer_pow_aval(x: ShapedArray, *, y: int) -> ShapedArray:
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TypeError(f"integer_pow: argument 'y' must be a Python int, got {y!r}")
    out = elementwise_aval("integer_pow", "numeric", x)
    if y < 0 and dtypes.is_integer(x.dtype):
        raise ValueError(f"integer_pow: argument 'y' must be non-negative for an integer "
                         f"argument 'x' ({x.dtype}), got {y}")
    return out


integer_pow_p = Primitive("integer_pow")
_kernel_row("integer_pow", 1, "numeric", nparams=1)
integer_pow_p.abstract_eval = _integer_pow_aval
integer_pow_p.reference = lambda x, *, y: np.asarray(ref.integer_pow(x, y=y)).astype(x.dtype)
integer_pow_p.cpu = lambda k, x, *, y: k.ewise(k.EWISE_OPS["integer_pow"], x, int(y))
integer_pow_p.jvp = _integer_pow_jvp(integer_pow_p)
integer_pow_p.transpose = NONLINEAR
integer_pow_p.batch = broadcast_batcher(integer_pow_p)


def _reduce_precision_aval(x: ShapedArray, *, exponent_bits: int, mantissa_bits: int
                           ) -> ShapedArray:
    for arg, bits, least in (("exponent_bits", exponent_bits, 1),
                             ("mantissa_bits", mantissa_bits, 0)):
        if not isinstance(bits, (int, np.integer)) or isinstance(bits, bool):
            raise TypeError(f"reduce_precision: argument '{arg}' must be an int, got {bits!r}")
        if bits < least:
            raise ValueError(f"reduce_precision: argument '{arg}' must be "
                             f"{'positive' if least else 'non-negative'}, got {bits}")
    return elementwise_aval("reduce_precision", "floating", x)


# Rounds to a narrower floating-point format and back (XLA's semantics: see the C kernel). Linear
# for differentiation as in JAX: tangents and cotangents are rounded the same way.
reduce_precision_p = Primitive("reduce_precision")
_kernel_row("reduce_precision", 1, "floating", nparams=2)
reduce_precision_p.abstract_eval = _reduce_precision_aval
reduce_precision_p.reference = ref.reduce_precision
reduce_precision_p.cpu = lambda k, x, *, exponent_bits, mantissa_bits: k.ewise(
    k.EWISE_OPS["reduce_precision"], x, int(exponent_bits), int(mantissa_bits))
reduce_precision_p.jvp = linear_jvp(reduce_precision_p)
reduce_precision_p.transpose = linear_transpose(
    lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])
reduce_precision_p.batch = broadcast_batcher(reduce_precision_p)


# ---- clamp and select_n ----

def _clamp_aval(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for arg, bound in (("min", lo), ("max", hi)):
        if bound.ndim and bound.shape != x.shape:
            raise TypeError(f"clamp: argument '{arg}' must be a scalar or have the shape of "
                            f"argument 'x' {x.shape}, got shape {bound.shape}")
    return elementwise_aval("clamp", "ordered (bool, integer or floating)", lo, x, hi,
                            args=("min", "x", "max"))


clamp_p = Primitive("clamp")
_kernel_row("clamp", 3, "ordered (bool, integer or floating)")
clamp_p.abstract_eval = _clamp_aval
clamp_p.reference = lambda lo, x, hi: np.asarray(ref.clamp(lo, x, hi)).astype(x.dtype)
clamp_p.cpu = lambda k, lo, x, hi: k.ewise(k.EWISE_OPS["clamp"], lo, x, hi)
clamp_p.jvp = _clamp_jvp(clamp_p)
clamp_p.transpose = NONLINEAR
clamp_p.batch = _shape_setting_batcher(clamp_p, lambda n: range(1, 2))


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


# (select_n_p is declared in building_blocks.py: the rules of other families select too)
select_n_p.abstract_eval = _select_n_aval
select_n_p.reference = ref.select_n
select_n_p.cpu = lambda k, which, *cases: k.select_n(which, *cases)
select_n_p.jvp = _select_n_jvp(select_n_p)
select_n_p.transpose = _select_n_transpose
select_n_p.batch = _shape_setting_batcher(select_n_p, lambda n: range(1, n))
