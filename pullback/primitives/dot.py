"""dot_general: contraction over any batch and contracting dimensions.

The CPU lowering views both operands as (batch, free, contract) matrices (zero-copy where the
strides allow) and runs one batched matmul kernel (backends/cpu/csrc/dot.c: SciPy's BLAS for
floating and complex dtypes, an own loop for integers).
"""
from __future__ import annotations

import math

import numpy as np

from ..tracer import dtypes
from ..tracer import strides as views
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive
from .rules import AUTODIFF, BATCHING

DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                         tuple[tuple[int, ...], tuple[int, ...]]]


def _parse(dimension_numbers) -> tuple[tuple[int, ...], ...]:
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


def _dot_general_aval(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers,
                      precision=None, preferred_element_type=None) -> ShapedArray:
    lc, rc, lb, rb = _parse(dimension_numbers)
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
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"dot_general: arguments 'lhs' and 'rhs' must have one dtype, got "
                        f"{lhs.dtype} and {rhs.dtype}")
    if lhs.dtype == dtypes.bool_:
        raise TypeError("dot_general: argument 'lhs' must be a numeric array, got bool")
    if preferred_element_type is not None and np.dtype(preferred_element_type) != lhs.dtype:
        raise TypeError("dot_general: preferred_element_type different from the operand dtype "
                        "needs convert_element_type (issue 3); convert the operands instead")
    shape = (tuple(lhs.shape[d] for d in lb) + tuple(lhs.shape[d] for d in _free(lhs.ndim, lc, lb))
             + tuple(rhs.shape[d] for d in _free(rhs.ndim, rc, rb)))
    return ShapedArray(shape, lhs.dtype, lhs.weak_type and rhs.weak_type)


def _as_matrices(k, x: np.ndarray, batch, rows, cols) -> np.ndarray:
    """x viewed as (prod(batch), prod(rows), prod(cols)), copying only if the layout needs it."""
    x = k.view(x, *views.transpose(x.shape, x.strides, batch + rows + cols))
    shape3 = (math.prod(x.shape[:len(batch)]), math.prod(x.shape[len(batch):len(batch) + len(rows)]),
              math.prod(x.shape[len(batch) + len(rows):]))
    layout = views.reshape(x.shape, x.strides, shape3, x.itemsize)
    if layout is None:
        x = k.copy(x)
        layout = views.reshape(x.shape, x.strides, shape3, x.itemsize)
    return k.view(x, *layout)


def _dot_general_cpu(k, lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None) -> np.ndarray:
    lc, rc, lb, rb = _parse(dimension_numbers)
    lf, rf = _free(lhs.ndim, lc, lb), _free(rhs.ndim, rc, rb)
    a = _as_matrices(k, lhs, lb, lf, lc)
    b = _as_matrices(k, rhs, rb, rc, rf)
    out = k.matmul(a, b)
    shape = (tuple(lhs.shape[d] for d in lb) + tuple(lhs.shape[d] for d in lf)
             + tuple(rhs.shape[d] for d in rf))
    return k.view(out, *views.reshape(out.shape, out.strides, shape, out.itemsize))


def _dot_general_ref(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None) -> np.ndarray:
    lc, rc, lb, rb = _parse(dimension_numbers)
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ls = [next(letters) for _ in range(lhs.ndim)]
    rs = [next(letters) for _ in range(rhs.ndim)]
    for l, r in zip(lc + lb, rc + rb):
        rs[r] = ls[l]
    out = ([ls[d] for d in lb] + [ls[d] for d in _free(lhs.ndim, lc, lb)]
           + [rs[d] for d in _free(rhs.ndim, rc, rb)])
    return np.asarray(np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", lhs, rhs),
                      dtype=lhs.dtype)


dot_general_p = Primitive("dot_general")
dot_general_p.abstract_eval = _dot_general_aval
dot_general_p.reference = _dot_general_ref
dot_general_p.cpu = _dot_general_cpu
dot_general_p.jvp = AUTODIFF
dot_general_p.transpose = AUTODIFF
dot_general_p.batch = BATCHING
