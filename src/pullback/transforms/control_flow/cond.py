"""``cond``: run one of several branches chosen by an index, as ``lax.cond``/``lax.switch``.

Operands are ``(index, *operands)``; every branch maps the operands to outputs of one type
(the index is an int32 scalar already clamped to the branches). Rules: jvp (every branch's jvp,
with the union of the nonzero output tangents); partial evaluation (a known cond computes the
primal outputs and every branch's residuals, zeros for the branches not taken; an unknown cond
runs the linear rest; with a concrete index the taken branch is simply inlined); transpose (a
cond over the transposed branches); batching (a batched index evaluates every branch and
selects per lane, as JAX does).
"""
from __future__ import annotations

import numpy as np

from ...primitives.elementwise import select_n_p
from ...primitives.movement import broadcast_in_dim_p
from ...primitives.rules import (Zero, instantiate, is_undefined, move_bdim, tangent_aval,
                                 zeros_like_aval)
from ...tracer import dtypes
from ...tracer.array import Array
from ...tracer.core import Primitive
from ...tracer.staging import eval_jaxpr, trace_to_jaxpr
from . import jaxprs as J

cond_p = Primitive("cond", multiple_results=True)


def _abstract_eval(index, *avals, branches):
    if index.shape != () or index.dtype != dtypes.int32:
        raise TypeError(f"cond: the branch index must be an int32 scalar, got "
                        f"{index.str_short()}")
    for i, br in enumerate(branches):
        want = br.in_avals
        if not J.same_types(avals, want):
            raise TypeError(f"cond: branch {i} takes {[w.str_short() for w in want]}, got "
                            f"{[a.str_short() for a in avals]}")
    return list(branches[0].out_avals)


def _impl(index, *args, branches):
    i = int(np.asarray(index._value if type(index) is Array else index))
    br = branches[min(max(i, 0), len(branches) - 1)]
    return eval_jaxpr(br.jaxpr, br.consts, *args)


_impl.interpreted = True


def _union(flag_lists):
    return [any(fs) for fs in zip(*flag_lists)]


def _jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nz = [type(t) is not Zero for t in tangents[1:]]
    n_out = len(branches[0].out_avals)
    out_nz = _union([J.jvp_jaxpr(br, nz, [False] * n_out)[1] for br in branches])
    new = tuple(J.jvp_jaxpr(br, nz, out_nz)[0] for br in branches)
    ts = [t for t, f in zip(tangents[1:], nz) if f]
    outs = cond_p.bind(index, *ops, *ts, branches=new)
    it = iter(outs[n_out:])
    return outs[:n_out], [next(it) if f else Zero(tangent_aval(a))
                          for f, a in zip(out_nz, branches[0].out_avals)]


def _concrete_index(t):
    c = t.pval.const
    if c is None:
        return None
    if type(c) is Array:
        return int(np.asarray(c._value))
    v = c.to_concrete_value() if hasattr(c, "to_concrete_value") else None
    return None if v is None else int(v)


def _partial_eval(trace, tracers, *, branches):
    index, ops = tracers[0], tracers[1:]
    if not index.pval.is_known:
        return trace.stage(cond_p, tracers, dict(branches=branches))
    i = _concrete_index(index)
    if i is not None:  # eager reverse mode: only the taken branch exists
        br = branches[min(max(i, 0), len(branches) - 1)]
        return [trace.full_raise(o) for o in eval_jaxpr(br.jaxpr, br.consts, *ops)]
    uk = [not t.pval.is_known for t in ops]
    n_out = len(branches[0].out_avals)
    out_uk = _union([J.partial_eval_jaxpr(br, uk, False).out_unknown for br in branches])
    splits = [J.partial_eval_jaxpr(br, uk, out_uk) for br in branches]
    known_br, unknown_br = J.cached(branches[0], ("pe-cond", branches, tuple(uk), tuple(out_uk)),
                                    lambda: _unify(splits))
    known_vals = [t.pval.const for t in ops if t.pval.is_known]
    k_out = cond_p.bind(index.pval.const, *known_vals, branches=known_br)
    n_known = n_out - sum(out_uk)
    res = [trace.pure(r) for r in k_out[n_known:]]
    u_out = trace.stage(cond_p, [index] + res + [t for t in ops if not t.pval.is_known],
                        dict(branches=unknown_br))
    it_k, it_u = iter(k_out[:n_known]), iter(u_out)
    return [next(it_u) if u else trace.pure(next(it_k)) for u in out_uk]


def _unify(splits):
    """Branches sharing one residual list: each fills its own residuals and zeros for the
    others'."""
    all_res = [a for s in splits for a in s.res_avals]
    starts = np.cumsum([0] + [len(s.res_avals) for s in splits])
    known, unknown = [], []
    for k, s in enumerate(splits):
        lo, hi = starts[k], starts[k + 1]
        n_known = len(s.known.out_avals) - len(s.res_avals)

        def kf(*args, s=s, lo=lo, hi=hi, n_known=n_known):
            outs = eval_jaxpr(s.known.jaxpr, s.known.consts, *args)
            res = [zeros_like_aval(a) for a in all_res]
            res[lo:hi] = outs[n_known:]
            return list(outs[:n_known]) + res

        def uf(*args, s=s, lo=lo, hi=hi):
            res, rest = args[:len(all_res)], args[len(all_res):]
            return eval_jaxpr(s.unknown.jaxpr, s.unknown.consts, *res[lo:hi], *rest)

        kj, _ = trace_to_jaxpr(kf, s.known.in_avals, debug_name="cond branch (known)")
        uj, _ = trace_to_jaxpr(uf, all_res + list(s.unknown.in_avals[hi - lo:]),
                               debug_name="cond branch (unknown)")
        known.append(kj)
        unknown.append(uj)
    return tuple(known), tuple(unknown)


def _transpose(cts, index, *ops, branches):
    if is_undefined(index):
        raise TypeError("cond: the branch index cannot be linear")
    lin = [is_undefined(o) for o in ops]
    new = tuple(J.transpose_jaxpr(br, lin) for br in branches)
    cts = [instantiate(c) for c in cts]
    outs = cond_p.bind(index, *[o for o, l in zip(ops, lin) if not l], *cts, branches=new)
    it = iter(outs)
    return [None] + [next(it) if l else None for l in lin]


def _batch(vals, dims, *, axis_info, branches):
    size = axis_info.size
    index, ops = vals[0], vals[1:]
    idx_d, op_d = dims[0], dims[1:]
    b = [d is not None for d in op_d]
    ops = [move_bdim(v, d, 0, size) if d is not None else v for v, d in zip(ops, op_d)]
    if idx_d is not None:
        # a per-lane index: run every branch and pick each lane's result
        index = move_bdim(index, idx_d, 0, size)
        results = [eval_jaxpr(bj.jaxpr, bj.consts, *ops) for bj in
                   (J.batch_jaxpr(br, axis_info, b, True)[0] for br in branches)]
        outs = []
        for k in range(len(branches[0].out_avals)):
            cases = [r[k] for r in results]
            shape = cases[0].shape
            which = broadcast_in_dim_p.bind(index, shape=tuple(shape), broadcast_dimensions=(0,))
            outs.append(select_n_p.bind(which, *cases))
        return outs, [0] * len(outs)
    out_b = _union([J.batch_jaxpr(br, axis_info, b, False)[1] for br in branches])
    new = tuple(J.batch_jaxpr(br, axis_info, b, out_b)[0] for br in branches)
    outs = cond_p.bind(index, *ops, branches=new)
    return outs, [0 if f else None for f in out_b]


_batch.needs_axis = True

cond_p.abstract_eval = _abstract_eval
cond_p.cpu = _impl
cond_p.reference = _impl
cond_p.jvp = _jvp
cond_p.partial_eval = _partial_eval
cond_p.transpose = _transpose
cond_p.batch = _batch
