"""Softmax cross-entropy (backends/cpu/csrc/cross_entropy.c): the ``softmax_cross_entropy``
primitive behind ``pullback.nn.softmax_cross_entropy`` and
``softmax_cross_entropy_with_integer_labels``.

The class axis is the last; the public functions move it there. One primitive with a ``mode``
(cross_entropy.c's header has the formulas; y is the label's one-hot, never built, or the
probability labels, m the optional ``where`` mask, p the masked softmax):

  ``loss``        (logits, labels[, where])     -> (...)    the per-example losses
  ``tangent``     (logits, labels[, where], t)  -> (...)    sum_c (Y p_c - y_c m_c) t_c
  ``grad``        (logits, labels[, where], g)  -> (..., C) g (Y p - y m)  (tangent's transpose)
  ``label_grad``  (logits[, where], g)          -> (..., C) g m (lse - logits)
  ``probs``       (logits[, where])             -> (..., C) p

``loss`` is linear in probability labels (its transpose there is ``label_grad``); ``tangent``
and ``grad`` are linear in t and g (each other's transposes) and in probability labels; so
forward and reverse mode run the fused kernels, and the second-order rules (the derivatives in
the logits of ``tangent``, ``grad``, ``label_grad`` and ``probs``) are short compositions
around ``probs``.

Labels (as optax 0.2.8 through JAX's take_along_axis): an integer label in [-C, C) picks its
class, negative ones counting from the end; any other label gives a NaN loss and contributes
no one-hot to the gradient (which is then the softmax). A row whose ``where`` is all False has
loss 0 and zero derivatives.
"""
from __future__ import annotations

import struct

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from . import elementwise as _ew
from .building_blocks import broadcast_in_dim_p, mul_p, reduce_sum_p, select_n_p, sub_p
from .reductions import FLOATING, check_dtype, _INTS
from .rules import (Kernel, Zero, add_tangents, batch_size, is_undefined, move_bdim,
                    tangent_aval)

MODES = ("loss", "tangent", "grad", "label_grad", "probs")
NAME = "softmax_cross_entropy"


# ---- the NumPy oracle ----

def _operands(mode: str, has_where: bool, ops):
    ops = list(ops)
    logits = ops.pop(0)
    labels = ops.pop(0) if mode in ("loss", "tangent", "grad") else None
    where = ops.pop(0) if has_where else None
    extra = ops.pop(0) if mode in ("tangent", "grad", "label_grad") else None
    return logits, labels, where, extra


def xent_reference(*ops: np.ndarray, mode: str, integer: bool, has_where: bool) -> np.ndarray:
    logits, labels, where, extra = _operands(mode, has_where, ops)
    out_dtype = logits.dtype
    ct = np.float64 if logits.dtype == np.float64 else np.float32
    lg = logits.astype(ct)
    C = lg.shape[-1]
    m = np.ones(lg.shape, bool) if where is None else where.astype(bool)
    with np.errstate(all="ignore"):
        lm = np.where(m, lg, -np.inf)
        mx = lm.max(-1, keepdims=True, initial=-np.inf)
        sh = np.where(np.isfinite(mx), mx, 0)
        lse = np.log(np.exp(lm - sh).sum(-1, keepdims=True)) + sh
        p = np.where(m, np.exp(lm - lse), 0)
        kept = m.any(-1)
        if integer:
            lab = labels.astype(np.int64)
            lab = np.where(lab < 0, lab + C, lab)
            valid = (lab >= 0) & (lab < C)
            y = (np.arange(C) == np.where(valid, lab, -1)[..., None]).astype(ct)
            Y = np.ones(lg.shape[:-1] + (1,), ct)
        elif labels is not None:
            y = np.where(m, labels.astype(ct), 0)
            Y = y.sum(-1, keepdims=True)
        if mode == "loss":
            if integer:
                picked = (np.take_along_axis(lg, np.where(valid, lab, 0)[..., None], -1)[..., 0]
                          if C else 0)
                out = np.where(valid, lse[..., 0] - picked, np.nan) if C else lse[..., 0]
            else:
                out = np.where(m, y * (lse - lm), 0).sum(-1)
        elif mode == "tangent":
            t = extra.astype(ct)
            out = (Y[..., 0] * (p * t).sum(-1)) - (y * t).sum(-1)
        elif mode == "grad":
            out = extra.astype(ct)[..., None] * (Y * p - y)
        elif mode == "label_grad":
            out = np.where(m, extra.astype(ct)[..., None] * (lse - lm), 0)
        else:
            out = p
        if integer or mode == "probs":
            zero = ~kept if out.ndim == kept.ndim else ~kept[..., None]
            out = np.where(zero, 0, out)
    return np.asarray(out).astype(out_dtype)


# ---- checking ----

def _xent_aval(*avals: ShapedArray, mode: str, integer: bool, has_where: bool) -> ShapedArray:
    if mode not in MODES:
        raise ValueError(f"{NAME}: argument 'mode' must be one of {MODES}, got {mode!r}")
    want = 1 + (mode in ("loss", "tangent", "grad")) + bool(has_where) + (
        mode in ("tangent", "grad", "label_grad"))
    if len(avals) != want:
        raise TypeError(f"{NAME}: mode {mode!r} takes {want} operands, got {len(avals)}")
    logits, labels, where, extra = _operands(mode, has_where, avals)
    check_dtype(NAME, logits, FLOATING, "logits")
    if logits.ndim < 1:
        raise ValueError(f"{NAME}: argument 'logits' must have a class axis, got a 0-d array")
    lead = logits.shape[:-1]
    if labels is not None:
        if integer:
            check_dtype(NAME, labels, (_INTS, "an integer"), "labels")
            if labels.shape != lead:
                raise ValueError(f"{NAME}: argument 'labels' must have shape {lead} (logits' "
                                 f"shape without the class axis), got {labels.shape}")
        else:
            if labels.dtype != logits.dtype or labels.shape != logits.shape:
                raise TypeError(f"{NAME}: argument 'labels' must be probabilities of the logits' "
                                f"shape and dtype {logits.str_short()}, got {labels.str_short()}")
    if where is not None and (where.dtype != dtypes.bool_ or where.shape != logits.shape):
        raise TypeError(f"{NAME}: argument 'where' must be a boolean array of shape "
                        f"{logits.shape}, got {where.str_short()}")
    if extra is not None:
        shape = logits.shape if mode == "tangent" else lead
        if extra.dtype != logits.dtype or extra.shape != shape:
            raise TypeError(f"{NAME}: the {'tangent' if mode == 'tangent' else 'cotangent'} "
                            f"must be {logits.dtype}{list(shape)}, got {extra.str_short()}")
    shape = lead if mode in ("loss", "tangent") else logits.shape
    return ShapedArray(shape, logits.dtype, False)


# ---- rule helpers (bound primitives, so that they differentiate again) ----

def _bind(*ops, **params):
    return xent_p.bind(*ops, **params)


def _row_sum(x):
    return reduce_sum_p.bind(x, axes=(get_aval(x).ndim - 1,))


def _expand(v, like):
    """A per-row value (...) broadcast along the class axis of ``like`` (..., C)."""
    shape = get_aval(like).shape
    return broadcast_in_dim_p.bind(v, shape=shape,
                                   broadcast_dimensions=tuple(range(len(shape) - 1)))


def _masked(x, where):
    if where is None:
        return x
    return select_n_p.bind(where, _ew._full(get_aval(x).shape, x, 0), x)


def _probs(logits, where):
    ops = (logits,) if where is None else (logits, where)
    return _bind(*ops, mode="probs", integer=False, has_where=where is not None)


def _dprobs(P, dl):
    """d softmax = P (dl - sum P dl)."""
    return mul_p.bind(P, sub_p.bind(dl, _expand(_row_sum(mul_p.bind(P, dl)), dl)))


def _label_total(labels, where, integer):
    """Y = sum_c m_c y_c per row (1 for integer labels: fully masked rows have P = 0)."""
    if integer:
        return None
    return _row_sum(_masked(labels, where))


def _label_linear(P, where, a, X):
    """The cotangent of probability labels of ``a * sum_c (Y p_c - y_c m_c) X_c`` (tangent's
    and grad's transposes in y): a m_j (sum_c P_c X_c - X_j)."""
    s = _expand(_row_sum(mul_p.bind(P, X)), X)
    return _masked(mul_p.bind(_expand(a, X), sub_p.bind(s, X)), where)


# ---- rules ----

def _xent_jvp(primals, tangents, *, mode, integer, has_where):
    params = dict(mode=mode, integer=integer, has_where=has_where)
    out = _bind(*primals, **params)
    logits, labels, where, extra = _operands(mode, has_where, primals)
    dl, dy, _, dx = _operands(mode, has_where, tangents)
    t_out = Zero.from_primal(out)

    def rebuild(lab, ext):
        ops = [logits] + ([lab] if labels is not None else []) + (
            [where] if has_where else []) + ([ext] if extra is not None else [])
        return _bind(*ops, **params)

    # linear parts: the extra operand (t or g) and probability labels
    if extra is not None and type(dx) is not Zero:
        t_out = add_tangents(t_out, rebuild(labels, dx))
    if labels is not None and not integer and type(dy) is not Zero:
        t_out = add_tangents(t_out, rebuild(dy, extra))
    if type(dl) is Zero:
        return out, t_out
    if mode == "loss":
        ops = [logits, labels] + ([where] if has_where else []) + [dl]
        return out, add_tangents(t_out, _bind(*ops, mode="tangent", integer=integer,
                                              has_where=has_where))
    P = _probs(logits, where)
    dP = _dprobs(P, dl)
    if mode == "probs":
        d = dP
    elif mode == "tangent":  # Y sum_c dP_c t_c
        d = _row_sum(mul_p.bind(dP, extra))
        Y = _label_total(labels, where, integer)
        d = d if Y is None else mul_p.bind(Y, d)
    elif mode == "grad":  # g Y dP
        a = extra
        Y = _label_total(labels, where, integer)
        a = a if Y is None else mul_p.bind(Y, a)
        d = mul_p.bind(_expand(a, dP), dP)
    else:  # label_grad: g m (sum P dl - dl)
        s = _expand(_row_sum(mul_p.bind(P, dl)), dl)
        d = _masked(mul_p.bind(_expand(extra, dl), sub_p.bind(s, dl)), where)
    return out, add_tangents(t_out, d)


def _xent_transpose(ct, *ops, mode, integer, has_where):
    logits, labels, where, extra = _operands(mode, has_where, ops)
    if is_undefined(logits) or (where is not None and is_undefined(where)):
        raise ValueError(f"{NAME}: cannot transpose in argument 'logits': the op is linear in "
                         f"the probability labels and in its tangent/cotangent only")
    undefined = [is_undefined(x) for x in (labels, extra) if x is not None]
    if sum(undefined) != 1 or (labels is not None and is_undefined(labels) and integer):
        raise ValueError(f"{NAME}: mode {mode!r} can be transposed in one linear operand at a "
                         f"time (probability labels, or the tangent/cotangent)")
    res = [None] * len(ops)
    idx_labels = 1 if labels is not None else None
    idx_extra = len(ops) - 1 if extra is not None else None
    target = idx_labels if labels is not None and is_undefined(labels) else idx_extra
    if type(ct) is Zero:
        res[target] = Zero(tangent_aval(ops[target].aval))
        return res
    w = [where] if has_where else []
    if target == idx_extra:  # tangent <-> grad; label_grad -> loss in labels
        if mode == "tangent":
            res[target] = _bind(logits, labels, *w, ct, mode="grad", integer=integer,
                                has_where=has_where)
        elif mode == "grad":
            res[target] = _bind(logits, labels, *w, ct, mode="tangent", integer=integer,
                                has_where=has_where)
        else:  # label_grad: sum_c ct_c m_c (lse - l_c) = loss with labels ct
            res[target] = _bind(logits, ct, *w, mode="loss", integer=False, has_where=has_where)
        return res
    # probability labels
    if mode == "loss":
        res[target] = _bind(logits, *w, ct, mode="label_grad", integer=False,
                            has_where=has_where)
    elif mode == "tangent":
        res[target] = _label_linear(_probs(logits, where), where, ct, extra)
    else:  # grad
        res[target] = _label_linear(_probs(logits, where), where, extra, ct)
    return res


def _xent_batch(vals, dims, **params):
    size = batch_size(vals, dims)
    vals = [move_bdim(v, d, 0, size) for v, d in zip(vals, dims)]
    return xent_p.bind(*vals, **params), 0


# the kernel's parameter struct (csrc/cross_entropy.c: xent_params)
_XENT_PARAMS = struct.Struct("=4i")  # mode, integer, has_where, pad


def _pack(*avals, mode, integer, has_where):
    return _XENT_PARAMS.pack(MODES.index(mode), int(bool(integer)), int(bool(has_where)), 0)


# ---- the primitive ----

xent_p = Primitive(NAME)
xent_p.abstract_eval = _xent_aval
xent_p.reference = xent_reference
xent_p.jvp = _xent_jvp
xent_p.transpose = _xent_transpose
xent_p.batch = _xent_batch
xent_p.cpu = Kernel(xent_p, NAME, _pack)
