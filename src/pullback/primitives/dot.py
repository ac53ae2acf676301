"""dot_general: contraction over any batch and contracting dimensions.

Dtypes (JAX's rules): the operands may differ in dtype; the result has the "wider" one (complex
over real, then larger exponent range, more mantissa bits, more bits, signed over unsigned).
``preferred_element_type`` asks for another result dtype and sets the accumulation type: an
integer result may not be narrower than the operands' (but integer operands may ask for a
floating result); a floating result may be any floating or complex dtype; a complex one, complex.
bool operands are rejected.

Accumulation: integers accumulate in 32 or 64 bits (the result's width) and wrap; float16,
bfloat16 and float8 operands accumulate in float32 (also when the result is float16: it is
rounded once at the end); float32/float64/complex run in the result's precision through BLAS.

The CPU lowering views both operands as (batch, rows, contracting) matrices (zero-copy where the
strides allow) and runs one batched matmul kernel (backends/cpu/csrc/dot.c); operands that no
kernel takes directly (e.g. float32 with a float64 result) are converted first.

Derivatives: dot_general is bilinear, so its tangent is ``dot(t_lhs, rhs) + dot(lhs, t_rhs)``
and each operand's transpose is another dot_general of the cotangent with the other operand
(then a transpose back to the operand's axis order, and a conversion to its dtype). vmap maps a
batch dimension of both operands to a new batch dimension, and one of a single operand to a
free dimension of it: no data moves.
"""
from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np

from ..tracer import dtypes
from ..tracer import strides as views
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from .conversion import check_dtype, convert_element_type_p, convert_reference
from .movement import transpose_p
from .rules import Zero, add_tangents, is_undefined

DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                         tuple[tuple[int, ...], tuple[int, ...]]]

_HALVES = (dtypes.float16, dtypes.bfloat16) + dtypes.FLOAT8


def parse_dimension_numbers(dimension_numbers) -> tuple[tuple[int, ...], ...]:
    """(lhs_contracting, rhs_contracting, lhs_batch, rhs_batch) as tuples of ints, or a
    TypeError naming dot_general's argument."""
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return tuple(map(int, lc)), tuple(map(int, rc)), tuple(map(int, lb)), tuple(map(int, rb))
    except (TypeError, ValueError):
        raise TypeError("dot_general: argument 'dimension_numbers' must be "
                        "((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), got "
                        f"{dimension_numbers!r}") from None


def _free(ndim: int, *used: tuple[int, ...]) -> tuple[int, ...]:
    taken = set().union(*used)
    return tuple(d for d in range(ndim) if d not in taken)


def _rank(dt: np.dtype) -> tuple:
    """JAX's (XLA's) order of dtypes for a mixed-dtype contraction."""
    real = np.dtype(dt.char.lower()) if dt.kind == "c" else dt
    if dtypes.is_float(real):
        info = ml_dtypes.finfo(real)
        return (dt.kind == "c", info.maxexp, info.nmant, 8 * real.itemsize, True)
    return (False, -1, -1, 8 * dt.itemsize, dt.kind == "i")


def result_dtype(lhs: np.dtype, rhs: np.dtype, preferred) -> np.dtype:
    """The result dtype of dot_general, raising the user-facing dtype errors."""
    for arg, d in (("lhs", lhs), ("rhs", rhs)):
        if d == dtypes.bool_:
            raise TypeError(f"dot_general: argument '{arg}' must be a numeric array, got bool "
                            "(convert it to an integer or floating dtype first)")
    if lhs == rhs:
        res = lhs
    else:
        rl, rr = _rank(lhs), _rank(rhs)
        if rl == rr:
            raise TypeError(f"dot_general: arguments 'lhs' and 'rhs' have dtypes {lhs} and {rhs}, "
                            "which have no common result type")
        res = lhs if rl > rr else rhs
    if preferred is None:
        return res
    p = check_dtype("dot_general", "preferred_element_type", preferred)
    if dtypes.is_integer(res):
        ok = dtypes.is_inexact(p) or (dtypes.is_integer(p) and p.itemsize >= res.itemsize)
        want = f"an integer dtype at least as wide as {res}, or a floating or complex dtype"
    elif dtypes.is_complex(res):
        ok, want = dtypes.is_complex(p), "a complex dtype"
    else:
        ok, want = dtypes.is_inexact(p), "a floating or complex dtype"
    if not ok:
        raise TypeError(f"dot_general: argument 'preferred_element_type' must be {want} for "
                        f"operands of dtypes {lhs} and {rhs}, got {p}")
    return p


def _dot_general_aval(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers,
                      precision=None, preferred_element_type=None) -> ShapedArray:
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    for side, aval, dims in (("lhs", lhs, lc + lb), ("rhs", rhs, rc + rb)):
        if any(not 0 <= d < aval.ndim for d in dims) or len(set(dims)) != len(dims):
            raise ValueError(f"dot_general: the {side} contracting and batch dimensions "
                             f"{dims} must be distinct axes of its shape {aval.shape}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError("dot_general: lhs and rhs must have as many contracting (and batch) "
                        f"dimensions as each other, got {dimension_numbers}")
    for what, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        ls, rs = tuple(lhs.shape[d] for d in ld), tuple(rhs.shape[d] for d in rd)
        if ls != rs:
            raise TypeError(f"dot_general: {what} dimensions must have equal sizes, got "
                            f"lhs {ls} and rhs {rs} for shapes {lhs.shape} and {rhs.shape}")
    dt = result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    shape = (tuple(lhs.shape[d] for d in lb) + tuple(lhs.shape[d] for d in _free(lhs.ndim, lc, lb))
             + tuple(rhs.shape[d] for d in _free(rhs.ndim, rc, rb)))
    weak = preferred_element_type is None and lhs.weak_type and rhs.weak_type
    return ShapedArray(shape, dt, weak)


def kernel_dtypes(lhs: np.dtype, rhs: np.dtype, out: np.dtype) -> tuple[np.dtype, np.dtype, np.dtype]:
    """(lhs, rhs, result) dtypes to hand the matmul kernel: the operands' own when a kernel takes
    them (integers -> integer; half floats -> half float or float32), else the BLAS dtype that
    covers operands and result, to convert to."""
    if dtypes.is_integer(lhs) and dtypes.is_integer(rhs) and dtypes.is_integer(out):
        return lhs, rhs, out
    if lhs in _HALVES and rhs in _HALVES and (out in _HALVES or out == dtypes.float32):
        return lhs, rhs, out
    double = any(d in (dtypes.float64, dtypes.complex128) for d in (lhs, rhs, out))
    if any(dtypes.is_complex(d) for d in (lhs, rhs, out)):
        c = dtypes.complex128 if double else dtypes.complex64
    else:
        c = dtypes.float64 if double else dtypes.float32
    return c, c, c


@functools.lru_cache(maxsize=4096)
def _matrix_layout(shape: tuple, strides: tuple, itemsize: int, batch: tuple, rows: tuple,
                   cols: tuple) -> tuple:
    """(the transposed view's layout, the (batch, rows, cols) view's layout of it, or None
    when that needs a copy, and the 3-D shape)."""
    t_shape, t_strides, _ = views.transpose(shape, strides, batch + rows + cols)
    shape3 = (math.prod(t_shape[:len(batch)]), math.prod(t_shape[len(batch):len(batch) + len(rows)]),
              math.prod(t_shape[len(batch) + len(rows):]))
    return (t_shape, t_strides, 0), views.reshape(t_shape, t_strides, shape3, itemsize), shape3


def _as_matrices(k, x: np.ndarray, batch, rows, cols) -> np.ndarray:
    """x viewed as (prod(batch), prod(rows), prod(cols)), copying only if the layout needs it."""
    t_layout, layout, shape3 = _matrix_layout(x.shape, x.strides, x.itemsize, batch, rows, cols)
    if layout is not None:  # (both views start at x's first element: one view of x)
        return k.view(x, *layout)
    x = k.copy(k.view(x, *t_layout))
    return k.view(x, *views.reshape(x.shape, x.strides, shape3, x.itemsize))


def _dot_general_plan(lhs_shape: tuple, lhs_dtype: np.dtype, rhs_shape: tuple,
                      rhs_dtype: np.dtype, dimension_numbers, preferred_element_type) -> tuple:
    """What the CPU rule does for operands of these shapes and dtypes: the kernel's dtypes,
    the result's dtype and shape, and each operand's (batch, rows, cols) dimensions."""
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    out_dtype = result_dtype(lhs_dtype, rhs_dtype, preferred_element_type)
    ld, rd, kd = kernel_dtypes(lhs_dtype, rhs_dtype, out_dtype)
    lfree, rfree = _free(len(lhs_shape), lc, lb), _free(len(rhs_shape), rc, rb)
    shape = (tuple(lhs_shape[d] for d in lb) + tuple(lhs_shape[d] for d in lfree)
             + tuple(rhs_shape[d] for d in rfree))
    return (ld, rd, kd, out_dtype, shape, (lb, lfree, lc), (rb, rc, rfree))


# plans by (lhs shape, dtype, rhs shape, dtype, params): eager products recur
_plans: dict = {}


def _dot_general_cpu(k, lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None) -> np.ndarray:
    try:
        key = (lhs.shape, lhs.dtype, rhs.shape, rhs.dtype, dimension_numbers,
               preferred_element_type)
        plan = _plans.get(key)
    except TypeError:  # unhashable dimension numbers (lists)
        key = plan = None
    if plan is None:
        plan = _dot_general_plan(lhs.shape, lhs.dtype, rhs.shape, rhs.dtype, dimension_numbers,
                                 preferred_element_type)
        if key is not None:
            if len(_plans) >= 1024:
                _plans.clear()
            _plans[key] = plan
    ld, rd, kd, out_dtype, shape, ldims, rdims = plan
    if ld != lhs.dtype:
        lhs = k.convert(lhs, ld)
    if rd != rhs.dtype:
        rhs = k.convert(rhs, rd)
    out = k.matmul(_as_matrices(k, lhs, *ldims), _as_matrices(k, rhs, *rdims), kd)
    if kd != out_dtype:
        out = k.convert(out, out_dtype)
    return k.view(out, *views.reshape(out.shape, out.strides, shape, out.itemsize))


def _accumulation_dtype(out: np.dtype) -> np.dtype:
    if dtypes.is_integer(out):
        return np.dtype(np.uint64) if out == dtypes.uint64 else np.dtype(np.int64)
    return dtypes.complex128 if dtypes.is_complex(out) else dtypes.float64


def _dot_general_ref(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None) -> np.ndarray:
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    out_dtype = result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    acc = _accumulation_dtype(out_dtype)
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ls = [next(letters) for _ in range(lhs.ndim)]
    rs = [next(letters) for _ in range(rhs.ndim)]
    for l, r in zip(lc + lb, rc + rb):
        rs[r] = ls[l]
    out = ([ls[d] for d in lb] + [ls[d] for d in _free(lhs.ndim, lc, lb)]
           + [rs[d] for d in _free(rhs.ndim, rc, rb)])
    # integers wrap modulo 2^64 here, which agrees with wrapping in any narrower result
    with np.errstate(over="ignore"):
        a = convert_reference(lhs, acc) if lhs.dtype != acc else lhs
        b = convert_reference(rhs, acc) if rhs.dtype != acc else rhs
        r = np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", a, b)
    return convert_reference(np.asarray(r, acc), out_dtype)


# ---- differentiation ----

def _dot_general_jvp(primals, tangents, **params):
    (lhs, rhs), (tl, tr) = primals, tangents
    out = dot_general_p.bind(lhs, rhs, **params)
    t = Zero.from_primal(out)
    if type(tl) is not Zero:
        t = add_tangents(t, dot_general_p.bind(tl, rhs, **params))
    if type(tr) is not Zero:
        t = add_tangents(t, dot_general_p.bind(lhs, tr, **params))
    return out, t


def _argsort(xs) -> list[int]:
    return sorted(range(len(xs)), key=xs.__getitem__)


def _operand_cotangent(ct, other, aval: ShapedArray, mine: tuple, others: tuple,
                       lhs_side: bool, precision):
    """The cotangent of one operand (``aval``) of a dot_general, given the other operand.

    ``mine`` / ``others`` are the (contracting, batch) dims of this operand and of the other.
    ``ct`` has the output's layout: batch dims, lhs free dims, rhs free dims. Contracting its
    other-operand free dims with ``other``'s free dims (batch with batch) leaves this operand's
    batch dims, its free dims, then its contracting dims in the order of ``other``'s sorted
    contracting dims; a transpose puts them back in place.
    """
    (mc, mb), (oc, ob) = mine, others
    other_aval = get_aval(other)
    my_free, other_free = _free(aval.ndim, mc, mb), _free(other_aval.ndim, oc, ob)
    nb = len(mb)
    start = nb + len(my_free) if lhs_side else nb  # where ct holds the other's free dims
    dims = ((tuple(range(start, start + len(other_free))), other_free), (tuple(range(nb)), ob))
    x = dot_general_p.bind(ct, other, dimension_numbers=dims, precision=precision,
                           preferred_element_type=None)
    src = list(mb) + list(my_free) + [mc[j] for j in _argsort(oc)]
    perm = tuple(_argsort(src))
    if perm != tuple(range(len(perm))):
        x = transpose_p.bind(x, permutation=perm)
    if get_aval(x).dtype != aval.dtype:  # e.g. a float32 operand of a float64 product
        x = convert_element_type_p.bind(x, new_dtype=aval.dtype, weak_type=aval.weak_type)
    return x


def _dot_general_transpose(ct, lhs, rhs, *, dimension_numbers, precision=None,
                           preferred_element_type=None):
    if is_undefined(lhs) and is_undefined(rhs):
        raise ValueError("dot_general transpose: both operands are linear inputs, but "
                         "dot_general is linear in each operand only with the other one fixed")
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    if is_undefined(lhs):
        if type(ct) is Zero:
            return [Zero(lhs.aval), None]
        return [_operand_cotangent(ct, rhs, lhs.aval, (lc, lb), (rc, rb), True, precision),
                None]
    if type(ct) is Zero:
        return [None, Zero(rhs.aval)]
    return [None, _operand_cotangent(ct, lhs, rhs.aval, (rc, rb), (lc, lb), False, precision)]


# ---- batching ----

def _shift(dims: tuple[int, ...], bdim: int | None) -> tuple[int, ...]:
    """An example's axes as axes of its batched array (batch dimension ``bdim``)."""
    if bdim is None:
        return dims
    return tuple(d + (d >= bdim) for d in dims)


def _dot_general_batch(vals, bdims, *, dimension_numbers, precision=None,
                       preferred_element_type=None):
    (lhs, rhs), (bl, br) = vals, bdims
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    lc, lb, rc, rb = _shift(lc, bl), _shift(lb, bl), _shift(rc, br), _shift(rb, br)
    if bl is not None and br is not None:
        # both mapped: one more batch dimension, first, so the result's comes first too
        lb, rb, out_dim = (bl,) + lb, (br,) + rb, 0
    elif bl is not None:
        # lhs only: its batch dim is one of its free dims, which follow the batch dims
        out_dim = len(lb) + _free(get_aval(lhs).ndim, lc, lb).index(bl)
    else:
        lhs_free = _free(get_aval(lhs).ndim, lc, lb)
        out_dim = len(lb) + len(lhs_free) + _free(get_aval(rhs).ndim, rc, rb).index(br)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)),
                             precision=precision, preferred_element_type=preferred_element_type)
    return out, out_dim


dot_general_p = Primitive("dot_general")
dot_general_p.abstract_eval = _dot_general_aval
dot_general_p.reference = _dot_general_ref
dot_general_p.cpu = _dot_general_cpu
dot_general_p.jvp = _dot_general_jvp
dot_general_p.transpose = _dot_general_transpose
dot_general_p.batch = _dot_general_batch
