"""Fused dot-product attention (backends/cpu/csrc/attention.c): ``jax.nn.dot_product_attention``
as one primitive, with flash-style kernels forward and backward.

Three primitives, all with every rule slot:

* ``dot_product_attention(q, k, v, [bias], [mask], [q_lengths], [kv_lengths])`` -> ``(out,
  lse)``: out (B, T, N, H) in q's dtype, the log-sum-exp (B, N, T) in the compute dtype
  (float32; float64 for float64 operands). The lse output is a residual: its tangent is zero
  (JAX's ``return_residual`` stops its gradient too).
* ``dot_product_attention_jvp(q, k, v, [bias], [mask], [lengths...], out, lse, tq, tk, tv,
  [tbias])`` -> the output's tangent: linear in (tq, tk, tv, tbias), its transpose is
* ``dot_product_attention_bwd(q, k, v, [bias], [mask], [lengths...], out, lse, dout)`` -> (dq,
  dk, dv, [dbias (B, N, T, S) in the compute dtype]), the backward kernel.

So jvp, vjp and vmap run the kernels; the derivatives of the tangent and backward primitives
(second order) are the manual dense formulas below, written with bound primitives (they
materialise (B, N, T, S) arrays, as a hand-written attention does, and differentiate again).
Their rules ignore the tangents of the ``out``/``lse`` operands: those are always the forward
of the same q, k, v, bias, which the formulas recompute.

Semantics (JAX 0.10's ``_dot_product_attention_xla``): logits = scale * q.k (float32, float64
for float64), + bias, then ``cap * tanh(logits / cap)`` with ``logit_softcap`` (not in JAX),
then every logit the boolean mask, causal mask (top-left aligned), window (key j kept for
query i when i - left <= j <= i + right) or key length drops becomes -0.7 * float32 max, so a
row that drops every key is the uniform softmax (the mean of V); the softmax; query rows past
the query length are zeroed.
"""
from __future__ import annotations

import struct

import numpy as np

from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from . import conversion as _cv, dot as _dot, elementwise as _ew, movement as _mv
from . import reductions as _rd
from .rules import (NONLINEAR, Kernel, Zero, batch_size, check_examples, instantiate,
                    is_undefined, linear_transpose, move_bdim)

NAME = "dot_product_attention"
FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
NEG32 = -0.7 * float(np.finfo(np.float32).max)  # JAX's large negative logit (capped at f32)

# csrc/attention.c: attn_params (scale, softcap, left, right, causal, has_bias, has_mask,
# has_qlen, has_kvlen, has_window)
_PARAMS = struct.Struct("=ddqq6i")
_BIG = 1 << 60


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of the logits and the softmax: float64 for float64, else float32 (JAX)."""
    return dtypes.float64 if np.dtype(dtype) == dtypes.float64 else dtypes.float32


def _pack(*avals, scale, is_causal, local_window_size, logit_softcap, has_bias, has_mask,
          has_qlen, has_kvlen) -> bytes:
    left, right = local_window_size if local_window_size is not None else (0, 0)
    clip = lambda x: max(-_BIG, min(_BIG, int(x)))  # noqa: E731
    return _PARAMS.pack(float(scale), float(logit_softcap or 0.0), clip(left), clip(right),
                        bool(is_causal), bool(has_bias), bool(has_mask), bool(has_qlen),
                        bool(has_kvlen), local_window_size is not None)


# ---- operands ----

def _split(ops, params):
    """(q, k, v, bias, mask, qlen, kvlen, rest): the optional operands None when absent."""
    q, k, v = ops[:3]
    i = 3
    got = []
    for flag in ("has_bias", "has_mask", "has_qlen", "has_kvlen"):
        if params[flag]:
            got.append(ops[i])
            i += 1
        else:
            got.append(None)
    return (q, k, v, *got, list(ops[i:]))


def _join(q, k, v, bias, mask, qlen, kvlen):
    return [x for x in (q, k, v, bias, mask, qlen, kvlen) if x is not None]


# ---- checking (every user-facing error names the argument) ----

def _err(arg: str, msg: str) -> ValueError:
    return ValueError(f"{NAME}: argument '{arg}' {msg}")


def _check_params(scale, is_causal, local_window_size, logit_softcap):
    if not isinstance(scale, (int, float, np.floating, np.integer)) or isinstance(scale, bool):
        raise TypeError(f"{NAME}: argument 'scale' must be a Python float, got {scale!r}")
    if local_window_size is not None:
        w = local_window_size
        if (not isinstance(w, tuple) or len(w) != 2 or
                any(not isinstance(x, (int, np.integer)) or isinstance(x, bool) for x in w)):
            raise _err("local_window_size", f"must be an int or a (left, right) pair of ints, "
                       f"got {w!r}")
    if logit_softcap is not None:
        if (not isinstance(logit_softcap, (int, float, np.floating, np.integer))
                or isinstance(logit_softcap, bool) or not logit_softcap > 0
                or not np.isfinite(logit_softcap)):
            raise _err("logit_softcap", f"must be a positive finite float, got {logit_softcap!r}")


def check_operands(q, k, v, bias, mask, qlen, kvlen):
    """Raises for bad shapes/dtypes of the (4-D) operands; returns (B, T, S, N, K, H)."""
    for name, a in (("query", q), ("key", k), ("value", v)):
        if a.ndim != 4:
            raise _err(name, f"must have rank 4 (B, T|S, heads, H) (or 3 without the batch), "
                       f"got shape {a.shape}")
        if a.dtype not in FLOATS:
            raise _err(name, f"must be float16, bfloat16, float32 or float64, got {a.dtype}")
    B, S, K, H = k.shape
    if v.shape != k.shape:
        raise _err("value", f"must have key's shape {k.shape}, got {v.shape}")
    if v.dtype != k.dtype:
        raise _err("value", f"must have key's dtype {k.dtype}, got {v.dtype}")
    if q.dtype != k.dtype:
        raise _err("query", f"must have key's dtype {k.dtype}, got {q.dtype}")
    if q.shape[0] != B or q.shape[3] != H:
        raise _err("query", f"must have shape ({B}, T, N, {H}) (key's batch and head size), got "
                   f"{q.shape}")
    T, N = q.shape[1], q.shape[2]
    if (K == 0 and N != 0) or (K != 0 and N % K != 0):
        raise _err("query", f"has {N} heads, which must be a multiple of key/value's {K} heads")
    full = (B, N, T, S)
    for name, a in (("bias", bias), ("mask", mask)):
        if a is None:
            continue
        if a.ndim != 4:
            raise _err(name, f"must have rank 4, broadcastable to (B, N, T, S) = {full}, got "
                       f"shape {a.shape}")
        if any(d not in (1, f) for d, f in zip(a.shape, full)):
            raise _err(name, f"of shape {a.shape} does not broadcast to (B, N, T, S) = {full}")
    if bias is not None and bias.dtype != compute_dtype(q.dtype):
        raise _err("bias", f"must be {compute_dtype(q.dtype)} for {q.dtype} operands (the "
                   f"logits' dtype), got {bias.dtype}")
    if mask is not None and mask.dtype != dtypes.bool_:
        raise _err("mask", f"must be a boolean array, got {mask.dtype}")
    for name, a in (("query_seq_lengths", qlen), ("key_value_seq_lengths", kvlen)):
        if a is not None and (a.shape != (B,) or a.dtype != dtypes.int32):
            raise _err(name, f"must be an int32 array of shape ({B},), got "
                       f"{a.dtype}{list(a.shape)}")
    return B, T, S, N, K, H


def _fwd_aval(*avals, scale, is_causal, local_window_size, logit_softcap, has_bias, has_mask,
              has_qlen, has_kvlen):
    _check_params(scale, is_causal, local_window_size, logit_softcap)
    params = dict(has_bias=has_bias, has_mask=has_mask, has_qlen=has_qlen, has_kvlen=has_kvlen)
    q, k, v, bias, mask, ql, kvl, rest = _split(avals, params)
    if rest:
        raise TypeError(f"{NAME}: {len(rest)} operand(s) too many")
    B, T, S, N, K, H = check_operands(q, k, v, bias, mask, ql, kvl)
    return [ShapedArray(q.shape, q.dtype, False),
            ShapedArray((B, N, T), compute_dtype(q.dtype), False)]


def _jvp_aval(*avals, **params):
    q, k, v, bias, mask, ql, kvl, rest = _split(avals, params)
    out, lse, tq, tk, tv, *tb = rest
    _fwd_aval(*_join(q, k, v, bias, mask, ql, kvl), **params)
    for name, t, p in (("tq", tq, q), ("tk", tk, k), ("tv", tv, v), ("out", out, q)):
        if t.shape != p.shape or t.dtype != p.dtype:
            raise TypeError(f"{NAME}_jvp: operand '{name}' must be {p.str_short()}, got "
                            f"{t.str_short()}")
    if len(tb) != int(bool(bias is not None)):
        raise TypeError(f"{NAME}_jvp: the bias tangent must come with the bias")
    if tb and (tb[0].dtype != bias.dtype or tb[0].ndim != 4):
        raise TypeError(f"{NAME}_jvp: operand 'tbias' must be {bias.str_short()}")
    return ShapedArray(q.shape, q.dtype, False)


def _bwd_aval(*avals, **params):
    q, k, v, bias, mask, ql, kvl, rest = _split(avals, params)
    out, lse, dout = rest
    _fwd_aval(*_join(q, k, v, bias, mask, ql, kvl), **params)
    for name, t in (("out", out), ("dout", dout)):
        if t.shape != q.shape or t.dtype != q.dtype:
            raise TypeError(f"{NAME}_bwd: operand '{name}' must be {q.str_short()}, got "
                            f"{t.str_short()}")
    res = [ShapedArray(q.shape, q.dtype, False), ShapedArray(k.shape, k.dtype, False),
           ShapedArray(v.shape, v.dtype, False)]
    if bias is not None:
        B, T, N = q.shape[0], q.shape[1], q.shape[2]
        res.append(ShapedArray((B, N, T, k.shape[1]), bias.dtype, False))
    return res


# ---- the NumPy reference (also the tests' oracle) ----

def reference_masks(B, T, S, N, mask, qlen, kvlen, is_causal, window):
    """The boolean (B, N, T, S) keep mask and (B, T) query-row mask, as JAX builds them."""
    keep = np.ones((B, N, T, S), bool)
    if mask is not None:
        keep &= np.asarray(mask, bool)
    i = np.arange(T)[:, None]
    j = np.arange(S)[None, :]
    if is_causal:
        keep &= j <= i
    if window is not None:
        keep &= (i <= j + window[0]) & (i >= j - window[1])
    qrow = np.ones((B, T), bool)
    if qlen is not None:
        qrow = np.arange(T)[None, :] < np.asarray(qlen)[:, None]
        keep &= qrow[:, None, :, None]
    if kvlen is not None:
        keep &= (np.arange(S)[None, :] < np.asarray(kvlen)[:, None])[:, None, None, :]
    return keep, qrow


def _ref_parts(q, k, v, bias, mask, qlen, kvlen, scale, is_causal, local_window_size,
               logit_softcap):
    """Dense logits etc. in the compute dtype: (qf, kf, vf, t, keep, qrow, p, lse)."""
    cd = compute_dtype(q.dtype)
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    G = N // K if K else 1
    qf = q.astype(cd)
    kf = np.repeat(k.astype(cd), G, axis=2)
    vf = np.repeat(v.astype(cd), G, axis=2)
    with np.errstate(invalid="ignore"):  # H = 0: 0 * inf, NaN logits as JAX's
        a = np.einsum("btnh,bsnh->bnts", qf, kf) * cd.type(scale)
    if bias is not None:
        a = a + bias.astype(cd)
    t = None
    if logit_softcap:
        t = np.tanh(a / cd.type(logit_softcap))
        a = cd.type(logit_softcap) * t
    keep, qrow = reference_masks(B, T, S, N, mask, qlen, kvlen, is_causal, local_window_size)
    logits = np.where(keep, a, cd.type(NEG32))
    if S == 0:
        return qf, kf, vf, t, keep, qrow, logits, np.full((B, N, T), -np.inf, cd)
    mx = logits.max(-1, keepdims=True)
    e = np.exp(logits - mx)
    s = e.sum(-1, keepdims=True)
    p = e / s
    lse = (mx + np.log(s))[..., 0]
    return qf, kf, vf, t, keep, qrow, p, lse


def _ref_static(params):
    return {k: params[k] for k in ("scale", "is_causal", "local_window_size", "logit_softcap")}


def _fwd_reference(*ops, **params):
    q, k, v, bias, mask, ql, kvl, _ = _split(ops, params)
    qf, kf, vf, t, keep, qrow, p, lse = _ref_parts(q, k, v, bias, mask, ql, kvl,
                                                   **_ref_static(params))
    out = np.einsum("bnts,bsnh->btnh", p, vf) * qrow[:, :, None, None]
    return [out.astype(q.dtype), lse.astype(compute_dtype(q.dtype))]


def _group_sum(x, K):
    """(B, S, N, H) -> (B, S, K, H): the sum over each key/value head's query heads."""
    B, S, N, H = x.shape
    return x.reshape(B, S, K, N // K if K else 1, H).sum(3)


def _jvp_reference(*ops, **params):
    q, k, v, bias, mask, ql, kvl, rest = _split(ops, params)
    out, lse, tq, tk, tv, *tb = rest
    qf, kf, vf, t, keep, qrow, p, _ = _ref_parts(q, k, v, bias, mask, ql, kvl,
                                                 **_ref_static(params))
    cd = qf.dtype
    G = q.shape[2] // k.shape[2] if k.shape[2] else 1
    tkf = np.repeat(tk.astype(cd), G, axis=2)
    tvf = np.repeat(tv.astype(cd), G, axis=2)
    da = (np.einsum("btnh,bsnh->bnts", tq.astype(cd), kf) +
          np.einsum("btnh,bsnh->bnts", qf, tkf)) * cd.type(params["scale"])
    if tb:
        da = da + tb[0].astype(cd)
    if t is not None:
        da = da * (1 - t * t)
    dl = np.where(keep, da, 0)
    dp = p * (dl - (p * dl).sum(-1, keepdims=True))
    res = np.einsum("bnts,bsnh->btnh", dp, vf) + np.einsum("bnts,bsnh->btnh", p, tvf)
    return (res * qrow[:, :, None, None]).astype(q.dtype)


def _bwd_reference(*ops, **params):
    q, k, v, bias, mask, ql, kvl, rest = _split(ops, params)
    out, lse, dout = rest
    qf, kf, vf, t, keep, qrow, p, _ = _ref_parts(q, k, v, bias, mask, ql, kvl,
                                                 **_ref_static(params))
    cd = qf.dtype
    K = k.shape[2]
    do = dout.astype(cd) * qrow[:, :, None, None]
    dv = np.einsum("bnts,btnh->bsnh", p, do)
    dp = np.einsum("btnh,bsnh->bnts", do, vf)
    dl = p * (dp - (p * dp).sum(-1, keepdims=True))
    da = np.where(keep, dl, 0)
    if t is not None:
        da = da * (1 - t * t)
    ds = da * cd.type(params["scale"])
    dq = np.einsum("bnts,bsnh->btnh", ds, kf)
    dk = np.einsum("bnts,btnh->bsnh", ds, qf)
    res = [dq.astype(q.dtype), _group_sum(dk, K).astype(k.dtype),
           _group_sum(dv, K).astype(v.dtype)]
    if bias is not None:
        res.append(da.astype(bias.dtype))
    return res


# ---- the dense formulas, bound primitives (the second-order rules) ----

def _c(x, value):
    return Array(np.array(value, get_aval(x).dtype), weak_type=True)


def _cvt(x, dtype):
    if get_aval(x).dtype == dtype:
        return x
    return _cv.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False)


def _bcast(x, shape, dims):
    return _mv.broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=tuple(dims))


def _mul(a, b):
    return _ew.mul_p.bind(a, b)


def _add(a, b):
    return _ew.add_p.bind(a, b)


def _sub(a, b):
    return _ew.sub_p.bind(a, b)


def _rowsum(x):
    """(B, N, T, S) -> its sum over S, broadcast back."""
    shape = get_aval(x).shape
    return _bcast(_rd.reduce_sum_p.bind(x, axes=(3,)), shape, (0, 1, 2))


def _einsum_scores(a, b):
    """(B, T, N, H) x (B, S, N, H) -> (B, N, T, S)."""
    return _dot.dot_general_p.bind(a, b, dimension_numbers=(((3,), (3,)), ((0, 2), (0, 2))),
                                   precision=None, preferred_element_type=None)


def _einsum_pv(p, v):
    """(B, N, T, S) x (B, S, N, H) -> (B, T, N, H)."""
    o = _dot.dot_general_p.bind(p, v, dimension_numbers=(((3,), (1,)), ((0, 1), (0, 2))),
                                precision=None, preferred_element_type=None)  # (B, N, T, H)
    return _mv.transpose_p.bind(o, permutation=(0, 2, 1, 3))


def _einsum_pt(p, x):
    """(B, N, T, S) x (B, T, N, H) -> (B, S, N, H): p^T x per head."""
    o = _dot.dot_general_p.bind(p, x, dimension_numbers=(((2,), (1,)), ((0, 1), (0, 2))),
                                precision=None, preferred_element_type=None)  # (B, N, S, H)
    return _mv.transpose_p.bind(o, permutation=(0, 2, 1, 3))


def _heads(x, cd, G):
    """(B, S, K, H) in compute dtype with each head repeated G times: (B, S, K*G, H)."""
    x = _cvt(x, cd)
    B, S, K, H = get_aval(x).shape
    if G == 1:
        return x
    x = _bcast(x, (B, S, K, G, H), (0, 1, 2, 4))
    return _mv.reshape_p.bind(x, new_sizes=(B, S, K * G, H), dimensions=None)


def _group(x, K):
    B, S, N, H = get_aval(x).shape
    if N == K:
        return x
    x = _mv.reshape_p.bind(x, new_sizes=(B, S, K, N // K, H), dimensions=None)
    return _rd.reduce_sum_p.bind(x, axes=(3,))


def _dense_keep(B, T, S, N, mask, qlen, kvlen, is_causal, window):
    """The keep mask (B, N, T, S) and query-row mask (B, T, 1, 1) as bound primitives."""
    full = (B, N, T, S)
    i = _mv.iota_p.bind(dtype=dtypes.int32, shape=full, dimension=2)
    j = _mv.iota_p.bind(dtype=dtypes.int32, shape=full, dimension=3)
    keep = None

    def both(a, b):
        return b if a is None else _ew.and_p.bind(a, b)
    if mask is not None:
        keep = _dense_bcast4(mask, full)
    lim = T + S + 1  # a wider window keeps as much; int32 arithmetic must not wrap
    big = lambda x: Array(np.array(max(-lim, min(lim, int(x))), np.int32))  # noqa: E731
    if is_causal:
        keep = both(keep, _ew.le_p.bind(j, i))
    if window is not None:
        keep = both(keep, _ew.le_p.bind(i, _ew.add_p.bind(j, big(window[0]))))
        keep = both(keep, _ew.ge_p.bind(i, _ew.sub_p.bind(j, big(window[1]))))
    qrow = None
    if qlen is not None:
        qrow = _ew.lt_p.bind(i, _bcast(qlen, full, (0,)))
        keep = both(keep, qrow)
    if kvlen is not None:
        keep = both(keep, _ew.lt_p.bind(j, _bcast(kvlen, full, (0,))))
    return keep, qrow


def _dense_bcast4(x, full):
    """A 4-D operand with size-1 dims broadcast to ``full``."""
    shape = get_aval(x).shape
    if shape == tuple(full):
        return x
    keep = tuple(d for d in range(4) if shape[d] != 1 or full[d] == 1)
    x = _mv.reshape_p.bind(x, new_sizes=tuple(shape[d] for d in keep), dimensions=None)
    return _bcast(x, full, keep)


def _where(keep, x, other):
    if keep is None:
        return x
    return _ew.select_n_p.bind(keep, _bcast(_c(x, other), get_aval(x).shape, ()), x)


class _Dense:
    """The forward pieces of the dense formula (compute dtype): u = d cap(a) / da, p, masks."""

    def __init__(self, q, k, v, bias, mask, ql, kvl, params):
        qa, ka = get_aval(q), get_aval(k)
        self.cd = cd = compute_dtype(qa.dtype)
        B, T, N, H = qa.shape
        S, K = ka.shape[1], ka.shape[2]
        self.K, self.G = K, (N // K if K else 1)
        self.full = (B, N, T, S)
        self.scale = params["scale"]
        self.cap = params["logit_softcap"]
        self.qf = _cvt(q, cd)
        self.kf = _heads(k, cd, self.G)
        self.vf = _heads(v, cd, self.G)
        self.keep, qrow = _dense_keep(B, T, S, N, mask, ql, kvl, params["is_causal"],
                                      params["local_window_size"])
        # (B, T, N, H) query-row mask as a 0/1 factor
        self.qrow = None
        if qrow is not None:
            r = _mv.slice_p.bind(qrow, start_indices=(0, 0, 0, 0), limit_indices=(B, 1, T, 1),
                                 strides=None)
            r = _mv.reshape_p.bind(r, new_sizes=(B, T), dimensions=None)
            self.qrow = _cvt(_bcast(r, (B, T, N, H), (0, 1)), cd)
        a = _mul(_einsum_scores(self.qf, self.kf), _c(self.qf, self.scale))
        if bias is not None:
            a = _add(a, _dense_bcast4(bias, self.full))
        self.t = self.u = None
        if self.cap:
            self.t = _ew.tanh_p.bind(_mul(a, _c(a, 1.0 / self.cap)))
            a = _mul(_c(a, self.cap), self.t)
            self.u = _sub(_c(a, 1.0), _mul(self.t, self.t))
        logits = _where(self.keep, a, NEG32)
        mx = _rd.reduce_max_p.bind(logits, axes=(3,))
        e = _ew.exp_p.bind(_sub(logits, _bcast(mx, self.full, (0, 1, 2))))
        self.p = _ew.div_p.bind(e, _rowsum(e))

    def rowmask(self, x):
        return x if self.qrow is None else _mul(x, self.qrow)

    def dlogit(self, tq, tk, tb):
        """The logits' tangent (masked) from tangents of q, k (kf layout: heads repeated), bias."""
        parts = []
        if tq is not None:
            parts.append(_einsum_scores(_cvt(tq, self.cd), self.kf))
        if tk is not None:
            parts.append(_einsum_scores(self.qf, tk))
        da = None
        for x in parts:
            da = x if da is None else _add(da, x)
        if da is not None:
            da = _mul(da, _c(da, self.scale))
        if tb is not None:
            tb = _dense_bcast4(_cvt(tb, self.cd), self.full)
            da = tb if da is None else _add(da, tb)
        if da is None:
            return None, None
        dc = da if self.u is None else _mul(da, self.u)
        return da, _where(self.keep, dc, 0.0)

    def dprob(self, dl):
        """p's tangent from the (masked) logits' tangent."""
        return _mul(self.p, _sub(dl, _rowsum(_mul(self.p, dl))))

    def du(self, da):
        """u's tangent: d(1 - t^2) = -2 t (1 - t^2) da / cap."""
        return _mul(_mul(self.t, self.u), _mul(da, _c(da, -2.0 / self.cap)))


def _zero_or(t):
    return None if t is None or type(t) is Zero else t


def _jvp_lin_second(primals, tangents, params):
    """The tangent of dot_product_attention_jvp along its primal operands' tangents:
    D^2 F[(tq, tk, tv, tb), (q', k', v', b')], plus the linear part (itself on the tangents'
    tangents)."""
    q, k, v, bias, mask, ql, kvl, rest = _split(primals, params)
    out, lse, tq, tk, tv, *tb = rest
    tq_, tk_, tv_, tbias_, mask_, ql_, kvl_, rest_t = _split(tangents, params)
    _, _, dtq, dtk, dtv, *dtb = rest_t
    d = _Dense(q, k, v, bias, mask, ql, kvl, params)
    pq, pk, pv, pb = (_zero_or(tq_), _zero_or(tk_), _zero_or(tv_), _zero_or(tbias_))
    res = None
    if any(x is not None for x in (pq, pk, pv, pb)):
        G = d.G
        tkf = _heads(tk, d.cd, G)
        tvf = _heads(tv, d.cd, G)
        pkf = _heads(pk, d.cd, G) if pk is not None else None
        pvf = _heads(pv, d.cd, G) if pv is not None else None
        tb0 = tb[0] if tb else None
        # dot quantities (the tangent direction) and primes (the primal direction)
        da_dot, dl_dot = d.dlogit(tq, tkf, tb0)
        da_pr, dl_pr = d.dlogit(pq, pkf, pb)
        terms = []
        if dl_pr is not None:
            p_pr = d.dprob(dl_pr)
            terms.append(_einsum_pv(p_pr, tvf))
            if dl_dot is not None:
                # the logits' tangent differentiated: a-dot' u + a-dot u'
                parts = []
                if pq is not None:
                    parts.append(_einsum_scores(_cvt(tq, d.cd), pkf) if pkf is not None else None)
                    parts.append(_einsum_scores(_cvt(pq, d.cd), tkf))
                elif pkf is not None:
                    parts.append(_einsum_scores(_cvt(tq, d.cd), pkf))
                ad2 = None
                for x in parts:
                    if x is not None:
                        ad2 = x if ad2 is None else _add(ad2, x)
                dc2 = None
                if ad2 is not None:
                    ad2 = _mul(ad2, _c(ad2, d.scale))
                    dc2 = ad2 if d.u is None else _mul(ad2, d.u)
                if d.u is not None:
                    extra = _mul(da_dot, d.du(da_pr))
                    dc2 = extra if dc2 is None else _add(dc2, extra)
                centered = _sub(dl_dot, _rowsum(_mul(d.p, dl_dot)))
                pd2 = _mul(p_pr, centered)
                if dc2 is not None:
                    dl2 = _where(d.keep, dc2, 0.0)
                    pd2 = _add(pd2, _mul(d.p, _sub(dl2, _rowsum(_add(
                        _mul(p_pr, dl_dot), _mul(d.p, dl2))))))
                else:
                    pd2 = _sub(pd2, _mul(d.p, _rowsum(_mul(p_pr, dl_dot))))
                terms.append(_einsum_pv(pd2, d.vf))
        if pvf is not None and dl_dot is not None:
            terms.append(_einsum_pv(d.dprob(dl_dot), pvf))
        for x in terms:
            res = x if res is None else _add(res, x)
        if res is not None:
            res = _cvt(d.rowmask(res), get_aval(q).dtype)
    if not all(type(t) is Zero for t in (dtq, dtk, dtv, *dtb)):
        lin = dot_product_attention_jvp_p.bind(
            *_join(q, k, v, bias, mask, ql, kvl), out, lse,
            *[instantiate(t) for t in (dtq, dtk, dtv, *dtb)], **params)
        res = lin if res is None else _add(res, lin)
    return res


def _bwd_second(primals, tangents, params):
    """The tangents of dot_product_attention_bwd's (dq, dk, dv, [dbias]) along q, k, v, bias
    and the cotangent dout: the backward formula differentiated."""
    q, k, v, bias, mask, ql, kvl, rest = _split(primals, params)
    out, lse, dout = rest
    tq, tk, tv, tb, _, _, _, rest_t = _split(tangents, params)
    tdout = _zero_or(rest_t[2])
    tq, tk, tv, tb = _zero_or(tq), _zero_or(tk), _zero_or(tv), _zero_or(tb)
    d = _Dense(q, k, v, bias, mask, ql, kvl, params)
    cd = d.cd
    tkf = _heads(tk, cd, d.G) if tk is not None else None
    tvf = _heads(tv, cd, d.G) if tv is not None else None
    do = d.rowmask(_cvt(dout, cd))
    tdo = d.rowmask(_cvt(tdout, cd)) if tdout is not None else None
    dp = _einsum_scores(do, d.vf)
    delta = _rowsum(_mul(d.p, dp))
    dl = _mul(d.p, _sub(dp, delta))
    dc = _where(d.keep, dl, 0.0)
    da_pr, dl_pr = d.dlogit(tq, tkf, tb)
    p_pr = d.dprob(dl_pr) if dl_pr is not None else None
    # dP'
    dp_pr = None
    for x in ((_einsum_scores(tdo, d.vf) if tdo is not None else None),
              (_einsum_scores(do, tvf) if tvf is not None else None)):
        if x is not None:
            dp_pr = x if dp_pr is None else _add(dp_pr, x)
    # dL' = p'(dP - delta) + p (dP' - delta'), delta' = sum(p' dP + p dP')
    dl2 = None
    if p_pr is not None:
        dl2 = _mul(p_pr, _sub(dp, delta))
        dl2 = _sub(dl2, _mul(d.p, _rowsum(_mul(p_pr, dp))))
    if dp_pr is not None:
        x = _mul(d.p, _sub(dp_pr, _rowsum(_mul(d.p, dp_pr))))
        dl2 = x if dl2 is None else _add(dl2, x)
    dc2 = _where(d.keep, dl2, 0.0) if dl2 is not None else None
    # dA = dC u; dA' = dC' u + dC u'
    if d.u is not None:
        da = _mul(dc, d.u)
        da2 = _mul(dc2, d.u) if dc2 is not None else None
        if da_pr is not None:
            x = _mul(dc, d.du(da_pr))
            da2 = x if da2 is None else _add(da2, x)
    else:
        da, da2 = dc, dc2
    ds = _mul(da, _c(da, d.scale))
    ds2 = _mul(da2, _c(da2, d.scale)) if da2 is not None else None
    qa, ka = get_aval(q), get_aval(k)

    def acc(*xs):
        r = None
        for x in xs:
            if x is not None:
                r = x if r is None else _add(r, x)
        return r
    dq2 = acc(_einsum_pv(ds2, d.kf) if ds2 is not None else None,
              _einsum_pv(ds, tkf) if tkf is not None else None)
    dk2 = acc(_einsum_pt(ds2, d.qf) if ds2 is not None else None,
              _einsum_pt(ds, _cvt(tq, cd)) if tq is not None else None)
    dv2 = acc(_einsum_pt(p_pr, do) if p_pr is not None else None,
              _einsum_pt(d.p, tdo) if tdo is not None else None)
    res = [Zero(ShapedArray(qa.shape, qa.dtype)) if dq2 is None else _cvt(dq2, qa.dtype),
           Zero(ShapedArray(ka.shape, ka.dtype)) if dk2 is None else
           _cvt(_group(dk2, d.K), ka.dtype),
           Zero(ShapedArray(ka.shape, ka.dtype)) if dv2 is None else
           _cvt(_group(dv2, d.K), ka.dtype)]
    if bias is not None:
        res.append(Zero(ShapedArray(d.full, cd)) if da2 is None else da2)
    return res


# ---- rules ----

def _fwd_jvp(primals, tangents, **params):
    out, lse = dot_product_attention_p.bind(*primals, **params)
    q, k, v, bias, *_ = _split(primals, params)
    tq, tk, tv, tb, *_ = _split(tangents, params)
    lin = [tq, tk, tv] + ([tb] if params["has_bias"] else [])
    zero_lse = Zero.from_primal(lse)
    if all(type(t) is Zero for t in lin):
        return [out, lse], [Zero.from_primal(out), zero_lse]
    pre = _join(*_split(primals, params)[:7])
    t_out = dot_product_attention_jvp_p.bind(*pre, out, lse, *[instantiate(t) for t in lin],
                                             **params)
    return [out, lse], [t_out, zero_lse]


def reduce_to(x, shape):
    """A (B, N, T, S) gradient summed down to a broadcastable 4-D ``shape``."""
    full = get_aval(x).shape
    axes = tuple(d for d in range(4) if shape[d] == 1 and full[d] != 1)
    if not axes:
        return x
    x = _rd.reduce_sum_p.bind(x, axes=axes)
    return _mv.reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None)


def _jvp_transpose(ct, *ops, **params):
    q, k, v, bias, mask, ql, kvl, rest = _split(ops, params)
    out, lse, tq, tk, tv, *tb = rest
    n_pre = len(ops) - len(rest)
    grads = dot_product_attention_bwd_p.bind(*ops[:n_pre], out, lse, ct, **params)
    res: list = [None] * len(ops)
    for i, (t, g) in enumerate(zip((tq, tk, tv, *tb), grads)):
        if is_undefined(t):
            if i == 3:
                g = _cvt(reduce_to(g, t.aval.shape), t.aval.dtype)
            res[n_pre + 2 + i] = g
    return res


def _jvp_jvp(primals, tangents, **params):
    out = dot_product_attention_jvp_p.bind(*primals, **params)
    t = _jvp_lin_second(primals, tangents, params)
    return out, (Zero.from_primal(out) if t is None else t)


def _bwd_jvp(primals, tangents, **params):
    outs = dot_product_attention_bwd_p.bind(*primals, **params)
    return outs, _bwd_second(primals, tangents, params)


# batching: the mapped axis folds into the batch dimension B

def _fold(x, d, size):
    """An operand with batch dim d (None: unmapped, broadcast) as (size * B, ...)."""
    x = move_bdim(x, d, 0, size)
    shape = get_aval(x).shape
    return _mv.reshape_p.bind(x, new_sizes=(shape[0] * shape[1],) + shape[2:], dimensions=None)


def _batcher(prim, roles_of):
    def rule(vals, dims, **params):
        check_examples(prim, vals, dims, **params)
        size = batch_size(vals, dims)
        roles = roles_of(params, len(vals))
        s = list(get_aval(vals[0]).shape)
        if dims[0] is not None:
            del s[dims[0]]
        B = s[0]
        folded = []
        for v, d, r in zip(vals, dims, roles):
            if r == "bcast":
                folded.append(_fold_bcast(v, d, size, B))
            else:
                folded.append(_fold(v, d, size))
        outs = prim.bind(*folded, **params)
        many = prim.multiple_results
        outs = outs if many else [outs]
        res = []
        for o in outs:
            s = get_aval(o).shape
            res.append(_mv.reshape_p.bind(o, new_sizes=(size, B) + s[1:], dimensions=None))
        return (res, [0] * len(res)) if many else (res[0], 0)
    return rule


def _fold_bcast(x, d, size, B):
    """A (b, n, t, s) bias/mask (b 1 or B) with batch dim d as (size * B, n, t, s), or
    unchanged when unmapped and broadcast over the batch."""
    aval = get_aval(x)
    if d is None:
        if aval.shape[0] == 1:
            return x
        x = move_bdim(x, None, 0, size)
    else:
        x = move_bdim(x, d, 0, size)
    shape = get_aval(x).shape  # (size, b, n, t, s)
    if shape[1] != B:
        x = _bcast(_mv.reshape_p.bind(x, new_sizes=(size,) + shape[2:], dimensions=None),
                   (size, B) + shape[2:], (0, 2, 3, 4))
    return _mv.reshape_p.bind(x, new_sizes=(size * B,) + shape[2:], dimensions=None)


def _roles(params, n, tail):
    r = ["lead"] * 3
    if params["has_bias"]:
        r.append("bcast")
    if params["has_mask"]:
        r.append("bcast")
    r += ["lead"] * (int(bool(params["has_qlen"])) + int(bool(params["has_kvlen"])))
    r += tail(params)
    assert len(r) == n
    return r


_fwd_roles = lambda params, n: _roles(params, n, lambda p: [])  # noqa: E731
_jvp_roles = lambda params, n: _roles(  # noqa: E731
    params, n, lambda p: ["lead"] * 5 + (["bcast"] if p["has_bias"] else []))
_bwd_roles = lambda params, n: _roles(params, n, lambda p: ["lead"] * 3)  # noqa: E731


# ---- the primitives ----

dot_product_attention_p = Primitive(NAME, multiple_results=True)
dot_product_attention_p.abstract_eval = _fwd_aval
dot_product_attention_p.reference = _fwd_reference
dot_product_attention_p.cpu = Kernel(dot_product_attention_p, NAME, _pack)
dot_product_attention_p.jvp = _fwd_jvp
dot_product_attention_p.transpose = NONLINEAR
dot_product_attention_p.batch = _batcher(dot_product_attention_p, _fwd_roles)

dot_product_attention_jvp_p = Primitive(NAME + "_jvp")
dot_product_attention_jvp_p.abstract_eval = _jvp_aval
dot_product_attention_jvp_p.reference = _jvp_reference
dot_product_attention_jvp_p.cpu = Kernel(dot_product_attention_jvp_p, NAME + "_jvp", _pack)
dot_product_attention_jvp_p.jvp = _jvp_jvp
dot_product_attention_jvp_p.transpose = linear_transpose(_jvp_transpose)
dot_product_attention_jvp_p.batch = _batcher(dot_product_attention_jvp_p, _jvp_roles)

dot_product_attention_bwd_p = Primitive(NAME + "_bwd", multiple_results=True)
dot_product_attention_bwd_p.abstract_eval = _bwd_aval
dot_product_attention_bwd_p.reference = _bwd_reference
dot_product_attention_bwd_p.cpu = Kernel(dot_product_attention_bwd_p, NAME + "_bwd", _pack)
dot_product_attention_bwd_p.jvp = _bwd_jvp
dot_product_attention_bwd_p.transpose = NONLINEAR
dot_product_attention_bwd_p.batch = _batcher(dot_product_attention_bwd_p, _bwd_roles)
