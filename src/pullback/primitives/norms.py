"""Normalisation primitives (backends/cpu/csrc/norms.c): layer, RMS, group and batch norms.

One primitive covers them all: ``normalize(x, [scale], [bias])`` normalises ``x`` over the
reduced ``axes`` (its statistics are taken per index of the other axes) and applies a scale and
a bias of shape ``x.shape[param_axes]``, broadcast along the other axes::

    xhat = (x - mean(x)) * rsqrt(var(x) + epsilon)        (rms: x * rsqrt(mean(x^2) + eps))
    y = xhat * scale + bias

``layer_norm`` over axes A is ``axes = param_axes = A``; group norm reshapes the channel axis
into (groups, channels per group) and reduces every axis but the batch and group axes; the
training form of batch norm reduces every axis but the channel axis, which the parameters vary
along. Statistics are float32 for 16-bit inputs, float64 for float64.

Derivatives go through two more primitives, each the transpose of the other:

- ``normalize_tangent(dx, [dscale], [dbias], x, [scale])``: the jvp, linear in its first
  operands: ``scale * T(dx) + xhat * dscale + dbias`` with the projection
  ``T(v) = rstd * (v - mean(v) - xhat * mean(xhat * v))`` (rms: no ``mean(v)`` term);
- ``normalize_backward(g, x, [scale])``: the fused backward kernel, linear in ``g``:
  ``(T(scale * g), sum(g * xhat), sum(g))``, the sums over every axis but ``param_axes``
  (T is symmetric, so this is the tangent's transpose).

Their own jvps (second order) are written below with bound primitives (the tangent of xhat is
``T`` itself), so every order of derivative and every mode works. The kernels recompute the
row statistics instead of saving them (see norms.c).
"""
from __future__ import annotations

import math
import struct
from typing import Any, Sequence

import numpy as np

from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval, not_applicable
from . import elementwise as _ew, movement as _mv
from .reductions import reduce_sum_p
from .rules import (NONLINEAR, Kernel, Zero, add_tangents, batch_size, check_examples,
                    instantiate, is_undefined, move_bdim)

FLOATING = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


# ---- checking ----

def _axes_text(axes: Sequence[int]) -> str:
    return str(tuple(axes))


def check_normalize(name: str, x: ShapedArray, scale: ShapedArray | None,
                    bias: ShapedArray | None, axes: tuple, param_axes: tuple, epsilon: Any,
                    axis_arg: str = "axis") -> None:
    """Raises the error of a bad normalisation, naming op ``name`` and the argument."""
    if x.dtype not in FLOATING:
        raise TypeError(f"{name}: argument 'x' must be a floating array (float16, bfloat16, "
                        f"float32 or float64), got {x.dtype}")
    for arg, ax in ((axis_arg, axes), ("param_axes", param_axes)):
        if (not isinstance(ax, tuple) or any(not isinstance(a, int) or isinstance(a, bool)
                                              for a in ax)):
            raise TypeError(f"{name}: argument '{arg}' must be a tuple of ints, got {ax!r}")
        if any(not 0 <= a < x.ndim for a in ax) or len(set(ax)) != len(ax):
            raise ValueError(f"{name}: argument '{arg}' is {_axes_text(ax)}: axes must be "
                             f"distinct and in range for x of shape {x.shape}")
    if not axes:
        raise ValueError(f"{name}: argument '{axis_arg}' must name at least one axis of x")
    if (not isinstance(epsilon, (float, int)) or isinstance(epsilon, bool)
            or not math.isfinite(epsilon) or epsilon < 0):
        raise ValueError(f"{name}: argument 'epsilon' must be a finite number >= 0, got "
                         f"{epsilon!r}")
    want = tuple(x.shape[a] for a in param_axes)
    for arg, p in (("scale", scale), ("bias", bias)):
        if p is None:
            continue
        if p.shape != want:
            raise ValueError(f"{name}: argument '{arg}' must have shape {want} (x's shape "
                             f"{x.shape} along axes {_axes_text(param_axes)}), got {p.shape}")
        if p.dtype != x.dtype:
            raise TypeError(f"{name}: argument '{arg}' must have x's dtype {x.dtype}, got "
                            f"{p.dtype}")


def _split(ops: Sequence[Any], has_scale: bool, has_bias: bool) -> tuple[Any, Any, list]:
    """(scale, bias, rest) from the operands after x: scale and bias where present."""
    ops = list(ops)
    s = ops.pop(0) if has_scale else None
    b = ops.pop(0) if has_bias else None
    return s, b, ops


def _normalize_aval(x, *ps, axes, param_axes, rms, epsilon, has_scale, has_bias):
    if len(ps) != has_scale + has_bias:
        raise TypeError(f"normalize: expected {1 + has_scale + has_bias} operands, got "
                        f"{1 + len(ps)}")
    s, b, _ = _split(ps, has_scale, has_bias)
    check_normalize("normalize", x, s, b, axes, param_axes, epsilon, "axes")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _tangent_aval(dx, *ops, axes, param_axes, rms, epsilon, has_scale, has_bias):
    np_ = has_scale + has_bias
    if len(ops) != 2 * np_ + 1 - has_bias:
        raise TypeError("normalize_tangent: wrong number of operands")
    ds, db, (x, *s) = _split(ops, has_scale, has_bias)
    check_normalize("normalize_tangent", x, s[0] if s else None, None, axes, param_axes,
                    epsilon, "axes")
    check_normalize("normalize_tangent", dx, ds, db, axes, param_axes, epsilon, "axes")
    if dx.shape != x.shape or dx.dtype != x.dtype:
        raise TypeError("normalize_tangent: argument 'dx' must have x's shape and dtype")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _backward_aval(g, x, *s, axes, param_axes, rms, epsilon, has_scale, has_bias):
    if len(s) != has_scale:
        raise TypeError("normalize_backward: wrong number of operands")
    check_normalize("normalize_backward", x, s[0] if s else None, None, axes, param_axes,
                    epsilon, "axes")
    if g.shape != x.shape or g.dtype != x.dtype:
        raise TypeError("normalize_backward: argument 'g' must have x's shape and dtype")
    p = ShapedArray(tuple(x.shape[a] for a in param_axes), x.dtype, False)
    return [ShapedArray(x.shape, x.dtype, x.weak_type)] + [p] * (has_scale + has_bias)


# ---- the NumPy oracle (float64 throughout, rounded once) ----

def _ref_parts(x: np.ndarray, axes: tuple, param_axes: tuple, rms: bool, epsilon: float):
    xf = x.astype(np.float64)
    n = math.prod(x.shape[a] for a in axes)
    rmean = lambda v: np.sum(v, axis=axes, keepdims=True) / max(n, 1)  # noqa: E731
    mean = np.zeros(()) if rms else rmean(xf)
    with np.errstate(all="ignore"):
        rstd = 1.0 / np.sqrt(rmean(np.square(xf - mean)) + epsilon)
    shape = tuple(x.shape[a] if a in param_axes else 1 for a in range(x.ndim))
    bcast = lambda p: np.asarray(p, np.float64).reshape(shape)  # noqa: E731
    return xf, (xf - mean) * rstd, rstd, rmean, bcast


def _ref_T(v, xhat, rstd, rmean, rms):
    return rstd * (v - (0 if rms else rmean(v)) - xhat * rmean(xhat * v))


def _normalize_reference(x, *ps, axes, param_axes, rms, epsilon, has_scale, has_bias):
    s, b, _ = _split(ps, has_scale, has_bias)
    _, xhat, _, _, bcast = _ref_parts(x, axes, param_axes, rms, epsilon)
    y = xhat * (bcast(s) if has_scale else 1) + (bcast(b) if has_bias else 0)
    return y.astype(x.dtype)


def _tangent_reference(dx, *ops, axes, param_axes, rms, epsilon, has_scale, has_bias):
    ds, db, (x, *s) = _split(ops, has_scale, has_bias)
    _, xhat, rstd, rmean, bcast = _ref_parts(x, axes, param_axes, rms, epsilon)
    with np.errstate(all="ignore"):
        y = _ref_T(dx.astype(np.float64), xhat, rstd, rmean, rms)
        if has_scale:
            y = y * bcast(s[0]) + xhat * bcast(ds)
        if has_bias:
            y = y + bcast(db)
    return y.astype(x.dtype)


def _backward_reference(g, x, *s, axes, param_axes, rms, epsilon, has_scale, has_bias):
    _, xhat, rstd, rmean, bcast = _ref_parts(x, axes, param_axes, rms, epsilon)
    gf = g.astype(np.float64)
    others = tuple(a for a in range(x.ndim) if a not in param_axes)
    with np.errstate(all="ignore"):
        dx = _ref_T(gf * (bcast(s[0]) if has_scale else 1), xhat, rstd, rmean, rms)
        out = [dx.astype(x.dtype)]
        if has_scale:
            out.append(np.sum(gf * xhat, axis=others).astype(x.dtype))
    if has_bias:
        out.append(np.sum(gf, axis=others).astype(x.dtype))
    return out


# ---- composite pieces for the second-order rules (bound primitives only) ----

def _const(v: float, dtype) -> Array:
    return Array(np.array(v, dtype))


def _mul(a, b):
    return _ew.mul_p.bind(a, b)


def _add(a, b):
    return _ew.add_p.bind(a, b)


class _Rows:
    """Row reductions and broadcasts of one normalisation's layout."""

    def __init__(self, x, axes: tuple, param_axes: tuple):
        aval = get_aval(x)
        self.shape, self.dtype, self.axes, self.param_axes = aval.shape, aval.dtype, axes, \
            param_axes
        self.kept = tuple(d for d in range(aval.ndim) if d not in axes)
        self.n = math.prod(aval.shape[a] for a in axes)
        self.others = tuple(d for d in range(aval.ndim) if d not in param_axes)

    def mean(self, v):
        """mean over the reduced axes, broadcast back to x's shape"""
        s = reduce_sum_p.bind(v, axes=self.axes)
        s = _mul(s, _const(1.0 / max(self.n, 1), self.dtype))
        return _mv.broadcast_in_dim_p.bind(s, shape=self.shape, broadcast_dimensions=self.kept)

    def param(self, p):
        """a parameter-shaped array broadcast to x's shape"""
        return _mv.broadcast_in_dim_p.bind(p, shape=self.shape,
                                           broadcast_dimensions=self.param_axes)

    def param_sum(self, v):
        return reduce_sum_p.bind(v, axes=self.others)


def _plain(params: dict) -> dict:
    return dict(params, has_scale=False, has_bias=False)


def _rstd(x, rows: _Rows, rms: bool, epsilon: float):
    c = x if rms else _ew.sub_p.bind(x, rows.mean(x))
    ms = rows.mean(_ew.square_p.bind(c))
    return _ew.rsqrt_p.bind(_add(ms, _const(epsilon, rows.dtype)))


def _dT(v, x, tx, rows: _Rows, params: dict):
    """The derivative of T(v) (v fixed) along x's tangent tx, and the tangent of xhat."""
    plain = _plain(params)
    xhat = normalize_p.bind(x, **plain)
    r = _rstd(x, rows, params["rms"], params["epsilon"])
    t_xhat = normalize_tangent_p.bind(tx, x, **plain)
    Tv = normalize_tangent_p.bind(v, x, **plain)
    b = rows.mean(_mul(xhat, v))
    inner = _add(_add(_mul(rows.mean(_mul(xhat, tx)), Tv), _mul(t_xhat, b)),
                 _mul(xhat, rows.mean(_mul(t_xhat, v))))
    return _ew.neg_p.bind(_mul(r, inner)), t_xhat


# ---- rules ----

def _normalize_jvp(primals, tangents, **params):
    y = normalize_p.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents):
        return y, Zero.from_primal(y)
    x, *ps = primals
    s, _, _ = _split(ps, params["has_scale"], params["has_bias"])
    dy = normalize_tangent_p.bind(*[instantiate(t) for t in tangents], x,
                                  *([s] if s is not None else []), **params)
    return y, dy


def _tangent_jvp(primals, tangents, **params):
    hs, hb = params["has_scale"], params["has_bias"]
    nlin = 1 + hs + hb
    out = normalize_tangent_p.bind(*primals, **params)
    lin, t_lin = primals[:nlin], tangents[:nlin]
    x, s = primals[nlin], (primals[nlin + 1] if hs else None)
    tx, ts = tangents[nlin], (tangents[nlin + 1] if hs else Zero.from_primal(x))
    acc: Any = Zero.from_primal(out)
    if any(type(t) is not Zero for t in t_lin):
        acc = normalize_tangent_p.bind(*[instantiate(t) for t in t_lin], *primals[nlin:],
                                       **params)
    rows = _Rows(x, params["axes"], params["param_axes"])
    dx = lin[0]
    if type(ts) is not Zero:
        acc = add_tangents(acc, _mul(rows.param(ts),
                                     normalize_tangent_p.bind(dx, x, **_plain(params))))
    if type(tx) is not Zero:
        dT, t_xhat = _dT(dx, x, tx, rows, params)
        term = _mul(rows.param(s), dT) if hs else dT
        if hs:
            term = _add(term, _mul(t_xhat, rows.param(lin[1])))
        acc = add_tangents(acc, term)
    return out, acc


def _backward_jvp(primals, tangents, **params):
    hs = params["has_scale"]
    outs = normalize_backward_p.bind(*primals, **params)
    g, x, s = primals[0], primals[1], (primals[2] if hs else None)
    tg, tx, ts = tangents[0], tangents[1], (tangents[2] if hs else Zero.from_primal(x))
    acc: list = [Zero.from_primal(o) for o in outs]
    if type(tg) is not Zero:
        acc = list(normalize_backward_p.bind(tg, *primals[1:], **params))
    rows = _Rows(x, params["axes"], params["param_axes"])
    if type(ts) is not Zero:
        acc[0] = add_tangents(acc[0], normalize_tangent_p.bind(
            _mul(g, rows.param(ts)), x, **_plain(params)))
    if type(tx) is not Zero:
        v = _mul(g, rows.param(s)) if hs else g
        dT, t_xhat = _dT(v, x, tx, rows, params)
        acc[0] = add_tangents(acc[0], dT)
        if hs:
            acc[1] = add_tangents(acc[1], rows.param_sum(_mul(g, t_xhat)))
    return outs, acc


def _tangent_transpose(ct, *ops, **params):
    hs, hb = params["has_scale"], params["has_bias"]
    nlin = 1 + hs + hb
    if any(is_undefined(o) for o in ops[nlin:]):
        raise ValueError("normalize_tangent is linear only in dx, dscale and dbias")
    if type(ct) is Zero:
        return [Zero(o.aval) if is_undefined(o) else None for o in ops]
    cts = normalize_backward_p.bind(ct, *ops[nlin:], **params)
    return [c if is_undefined(o) else None for c, o in zip(cts, ops[:nlin])] + \
        [None] * (len(ops) - nlin)


def _backward_transpose(cts, g, *ops, **params):
    if any(is_undefined(o) for o in ops):
        raise ValueError("normalize_backward is linear only in g")
    if all(type(c) is Zero for c in cts):
        return [Zero(g.aval)] + [None] * len(ops)
    return [normalize_tangent_p.bind(*[instantiate(c) for c in cts], *ops, **params)] + \
        [None] * len(ops)


def _batcher(prim: Primitive, roles: Any, always_param_batch: bool = False):
    """vmap: the batch dim goes in front of every x-shaped operand and becomes a kept axis, a
    row index like any other (so vmapped rows are folded into the kernel's rows). Parameter-
    shaped operands keep theirs in front too when any is batched (or when the outputs are
    parameter gradients, which are per example), and the batch axis joins param_axes."""
    def rule(vals, dims, **params):
        check_examples(prim, vals, dims, **params)
        size = batch_size(vals, dims)
        kinds = roles(params)
        pbatched = always_param_batch and (params["has_scale"] or params["has_bias"]) or any(
            d is not None for d, k in zip(dims, kinds) if k == "p")
        shift = lambda ax: tuple(a + 1 for a in ax)  # noqa: E731
        new = dict(params, axes=shift(params["axes"]),
                   param_axes=((0,) if pbatched else ()) + shift(params["param_axes"]))
        args = [move_bdim(v, d, 0, size) if k == "x" or pbatched else v
                for v, d, k in zip(vals, dims, kinds)]
        out = prim.bind(*args, **new)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    return rule


def _fwd_roles(p):
    return ["x"] + ["p"] * (p["has_scale"] + p["has_bias"])


def _tan_roles(p):
    return ["x"] + ["p"] * (p["has_scale"] + p["has_bias"]) + ["x"] + ["p"] * p["has_scale"]


def _bwd_roles(p):
    return ["x", "x"] + ["p"] * p["has_scale"]


# the kernels' parameter struct (csrc/norms.c: norm_params)
_PARAMS = struct.Struct("=qqd4i")


def _pack(*avals, axes, param_axes, rms, epsilon, has_scale, has_bias) -> bytes:
    mask = lambda ax: sum(1 << a for a in ax)  # noqa: E731
    return _PARAMS.pack(mask(axes), mask(param_axes), float(epsilon), int(rms), int(has_scale),
                        int(has_bias), 0)


# ---- the primitives ----

normalize_p = Primitive("normalize")
normalize_p.abstract_eval = _normalize_aval
normalize_p.reference = _normalize_reference
normalize_p.cpu = Kernel(normalize_p, "normalize", _pack)
normalize_p.jvp = _normalize_jvp
normalize_p.transpose = NONLINEAR
normalize_p.batch = _batcher(normalize_p, _fwd_roles)

normalize_tangent_p = Primitive("normalize_tangent")
normalize_tangent_p.abstract_eval = _tangent_aval
normalize_tangent_p.reference = _tangent_reference
normalize_tangent_p.cpu = Kernel(normalize_tangent_p, "normalize_tangent", _pack)
normalize_tangent_p.jvp = _tangent_jvp
normalize_tangent_p.transpose = _tangent_transpose
normalize_tangent_p.batch = _batcher(normalize_tangent_p, _tan_roles)

normalize_backward_p = Primitive("normalize_backward", multiple_results=True)
normalize_backward_p.abstract_eval = _backward_aval
normalize_backward_p.reference = _backward_reference
normalize_backward_p.cpu = Kernel(normalize_backward_p, "normalize_backward", _pack)
normalize_backward_p.jvp = _backward_jvp
normalize_backward_p.transpose = _backward_transpose
normalize_backward_p.batch = _batcher(normalize_backward_p, _bwd_roles, always_param_batch=True)


# ---- add_normalize: a residual add fused into the norm (compiled programs only) ----

def _add_aval(a, b, *ps, **params):
    if a.shape != b.shape or a.dtype != b.dtype:
        raise TypeError(f"add_normalize: arguments 'a' and 'b' must have one shape and dtype, "
                        f"got {a.shape} {a.dtype} and {b.shape} {b.dtype}")
    y = _normalize_aval(a, *ps, **params)
    return [ShapedArray(a.shape, a.dtype, a.weak_type and b.weak_type), y]


def _add_reference(a, b, *ps, **params):
    h = np.asarray(_ew.add_p.reference(a, b))
    return [h, _normalize_reference(h, *ps, **params)]


# ``add_normalize(a, b, [scale], [bias]) -> (h, y)``: ``h = a + b`` and ``y = normalize(h)`` in
# one row pass. Only the jit pass transforms/passes/norm_fusion.py creates it, after every
# transformation has run, so it has no derivative or batching rules of its own.
_COMPILED_ONLY = not_applicable("created by jit's pass after differentiation and batching "
                                "(add then normalize before it)")
add_normalize_p = Primitive("add_normalize", multiple_results=True)
add_normalize_p.abstract_eval = _add_aval
add_normalize_p.reference = _add_reference
add_normalize_p.cpu = Kernel(add_normalize_p, "add_normalize", _pack)
add_normalize_p.jvp = _COMPILED_ONLY
add_normalize_p.transpose = _COMPILED_ONLY
add_normalize_p.batch = _COMPILED_ONLY
